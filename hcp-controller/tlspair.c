/* tlspair.c: a certificate pair served from files (see tlspair.h). */
#include "tlspair.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "log/log.h"

int tls_read_file(const char *flag, const char *path, char **out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n;
    int rc = 0;

    *out = NULL;
    if (f == NULL)
        return hcp_errf(err, errlen, HCP_EIO, "%s %s: cannot open: %m", flag, path);
    buf = malloc(TLS_PAIR_MAX + 1);
    if (buf == NULL) {
        rc = hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
        goto out;
    }
    n = fread(buf, 1, TLS_PAIR_MAX + 1, f);
    if (ferror(f) || n == 0 || n > TLS_PAIR_MAX) {
        rc = hcp_errf(err, errlen, HCP_EIO, "%s %s: %s", flag, path,
                      ferror(f) ? "read error" : n == 0 ? "empty" : "larger than 1 MiB");
        goto out;
    }
    buf[n] = '\0';
    *out = realloc(buf, n + 1); /* not the whole MiB for the process's life */
    if (*out == NULL)
        *out = buf;
    buf = NULL;
out:
    free(buf);
    fclose(f);
    return rc;
}

int tls_pair_read(const tls_files_t *f, char **cert, char **key, char *err, size_t errlen)
{
    char *c;
    int rc = tls_read_file(f->cert_flag, f->cert_file, &c, err, errlen);

    *cert = *key = NULL;
    if (rc)
        return rc;
    if ((rc = tls_read_file(f->key_flag, f->key_file, key, err, errlen))) {
        free(c);
        return rc;
    }
    *cert = c;
    return 0;
}

void tls_pair_renew(const tls_files_t *f, http_server *srv, char **cert, char **key)
{
    char err[600], msg[128], *c, *k;

    if (tls_pair_read(f, &c, &k, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "cannot read the renewed %s certificate; serving the old one",
                 f->what);
        log_kv(LOG_ERROR, msg, "error", err, NULL);
        return;
    }
    if (strcmp(c, *cert) == 0 && strcmp(k, *key) == 0)
        goto same;
    /* The listener keeps running: only the next handshakes see the new
     * pair, so no request is dropped or refused while it changes. */
    if (http_server_renew_tls(srv, c, k, err, sizeof(err)) != 0) {
        snprintf(msg, sizeof(msg), "the renewed %s certificate does not load; serving the old one",
                 f->what);
        log_kv(LOG_ERROR, msg, "error", err, NULL);
        goto same;
    }
    free(*cert);
    free(*key);
    *cert = c;
    *key = k;
    snprintf(msg, sizeof(msg), "serving the renewed %s certificate", f->what);
    log_kv(LOG_INFO, msg, "file", f->cert_file, NULL);
    return;
same:
    free(c);
    free(k);
}
