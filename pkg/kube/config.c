/*
 * kube/config.c - kubeconfig (YAML, via libfyaml) and in-cluster loading.
 */
#include "kube/config.h"

#include <errno.h>
#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/yaml.h"

#define MAX_FILE_BYTES (4u << 20)

/* Reads a whole regular file into a new NUL-terminated buffer. */
static int read_file(const char *path, char **out, size_t *outlen, kube_error *err)
{
    FILE *f = NULL;
    char *buf = NULL;
    size_t len = 0, cap = 4096, n;

    f = fopen(path, "rb");
    if (f == NULL) {
        kube_error_set(err, HCP_EIO, 0, NULL, "cannot open %s: %s", path, strerror(errno));
        goto fail;
    }
    buf = malloc(cap);
    if (buf == NULL)
        goto nomem;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (len + 1 == cap) {
            char *nb;
            if (cap >= MAX_FILE_BYTES) {
                kube_error_set(err, HCP_EIO, 0, NULL, "%s is larger than %u bytes", path,
                               MAX_FILE_BYTES);
                goto fail;
            }
            nb = realloc(buf, cap * 2);
            if (nb == NULL)
                goto nomem;
            buf = nb;
            cap *= 2;
        }
    }
    if (ferror(f)) {
        kube_error_set(err, HCP_EIO, 0, NULL, "cannot read %s", path);
        goto fail;
    }
    fclose(f);
    buf[len] = '\0';
    *out = buf;
    if (outlen)
        *outlen = len;
    return 0;
nomem:
    kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory reading %s", path);
fail:
    free(buf);
    if (f)
        fclose(f);
    return err ? err->code : HCP_EIO;
}

int kube_config_read_token(const char *path, char **token, kube_error *err)
{
    char *buf = NULL;
    size_t len = 0, start = 0;
    int rc;

    rc = read_file(path, &buf, &len, err);
    if (rc < 0)
        return rc;
    while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r' || buf[len - 1] == ' ' ||
                       buf[len - 1] == '\t'))
        buf[--len] = '\0';
    while (start < len && (buf[start] == ' ' || buf[start] == '\t' || buf[start] == '\n'))
        start++;
    if (start == len) {
        free(buf);
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "token file %s is empty", path);
    }
    memmove(buf, buf + start, len - start + 1);
    *token = buf;
    return 0;
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+' || c == '-') return 62;
    if (c == '/' || c == '_') return 63;
    return -1;
}

int kube_base64_decode(const char *in, size_t inlen, char **out, size_t *outlen)
{
    unsigned char *buf;
    unsigned acc = 0;
    int bits = 0, pad = 0;
    size_t i, n = 0;

    buf = malloc(inlen / 4 * 3 + 4);
    if (buf == NULL)
        return HCP_ENOMEM;
    for (i = 0; i < inlen; i++) {
        unsigned char c = (unsigned char)in[i];
        int v;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        v = b64val(c);
        if (v < 0 || pad > 0)
            goto bad;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[n++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (pad > 2 || bits >= 6)
        goto bad;
    buf[n] = '\0';
    *out = (char *)buf;
    *outlen = n;
    return 0;
bad:
    free(buf);
    return HCP_EINVAL;
}

void kube_secret_free(char *secret)
{
    if (secret == NULL)
        return;
    explicit_bzero(secret, strlen(secret));
    free(secret);
}

void kube_config_free(kube_config *cfg)
{
    if (cfg == NULL)
        return;
    free(cfg->server);
    free(cfg->ca);
    free(cfg->cert);
    if (cfg->key) /* a private key: not left in freed memory */
        explicit_bzero(cfg->key, cfg->key_len);
    free(cfg->key);
    kube_secret_free(cfg->token);
    free(cfg->token_file);
    memset(cfg, 0, sizeof(*cfg));
}

/* The texts of the scalars one kubeconfig load has read: scalar() returns
 * pointers into it, and they are freed together when the load ends. */
#define HELD_MAX 32
typedef struct held {
    const char *input; /* the kubeconfig bytes the document was parsed from */
    size_t inputlen;
    char *s[HELD_MAX]; /* owned texts */
    size_t n;          /* used entries */
} held;

static void held_free(held *h)
{
    while (h->n > 0)
        free(h->s[--h->n]);
}

/* The value node of key under a mapping; NULL when absent or not a scalar. */
static struct fy_node *scalar_node(struct fy_node *map, const char *key)
{
    struct fy_node *v;

    if (map == NULL || !fy_node_is_mapping(map))
        return NULL;
    v = fy_node_mapping_lookup_value_by_simple_key(map, key, strlen(key));
    return v != NULL && fy_node_is_scalar(v) ? v : NULL;
}

/* Looks up a scalar value under a mapping and keeps its text in h until the
 * load ends; NULL when absent, not a scalar, or out of memory. */
static const char *scalar(held *h, struct fy_node *map, const char *key)
{
    struct fy_node *v = scalar_node(map, key);

    if (v == NULL || h->n == HELD_MAX || (h->s[h->n] = hcp_yaml_scalar(v, h->input, h->inputlen, NULL)) == NULL)
        return NULL;
    return h->s[h->n++];
}

/* Finds the entry of a named list (clusters, users, contexts) and returns its `inner` mapping. */
static struct fy_node *named(const held *h, struct fy_node *root, const char *list,
                             const char *name, const char *inner)
{
    struct fy_node *seq, *item;
    void *iter = NULL;

    seq = fy_node_mapping_lookup_value_by_simple_key(root, list, strlen(list));
    if (seq == NULL || !fy_node_is_sequence(seq))
        return NULL;
    while ((item = fy_node_sequence_iterate(seq, &iter)) != NULL) {
        char *n = hcp_yaml_scalar(scalar_node(item, "name"), h->input, h->inputlen, NULL);
        int match = n != NULL && strcmp(n, name) == 0;
        free(n);
        if (match) {
            struct fy_node *v =
                fy_node_mapping_lookup_value_by_simple_key(item, inner, strlen(inner));
            return (v != NULL && fy_node_is_mapping(v)) ? v : NULL;
        }
    }
    return NULL;
}

static char *join_path(const char *basedir, const char *p)
{
    char *out = NULL;

    if (p[0] == '/' || basedir == NULL || basedir[0] == '\0')
        return strdup(p);
    if (asprintf(&out, "%s/%s", basedir, p) < 0)
        return NULL;
    return out;
}

/*
 * Loads one PEM item: `<field>-data` (base64) wins over `<field>` (a file).
 * Leaves *out NULL when neither is present.
 */
static int load_pem(held *h, struct fy_node *map, const char *field, const char *basedir,
                    char **out, size_t *outlen, kube_error *err)
{
    char datakey[64], *path = NULL;
    const char *data, *file;
    int rc;

    snprintf(datakey, sizeof(datakey), "%s-data", field);
    data = scalar(h, map, datakey);
    if (data != NULL && data[0] != '\0') {
        rc = kube_base64_decode(data, strlen(data), out, outlen);
        if (rc < 0)
            return kube_error_set(err, HCP_ECONFIG, 0, NULL, "%s is not valid base64", datakey);
        return 0;
    }
    file = scalar(h, map, field);
    if (file == NULL || file[0] == '\0')
        return 0;
    path = join_path(basedir, file);
    if (path == NULL)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
    rc = read_file(path, out, outlen, err);
    free(path);
    return rc;
}

static int set_server(kube_config *cfg, const char *server, kube_error *err)
{
    size_t n;

    if (server == NULL || server[0] == '\0')
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "cluster has no server");
    if (strncmp(server, "https://", 8) != 0 && strncmp(server, "http://", 7) != 0)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                              "server %s is not an http(s) URL", server);
    cfg->server = strdup(server);
    if (cfg->server == NULL)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
    n = strlen(cfg->server);
    while (n > 0 && cfg->server[n - 1] == '/')
        cfg->server[--n] = '\0';
    return 0;
}

static int load_held(kube_config *cfg, struct fy_document *fyd, const char *basedir,
                     const char *context, held *h, kube_error *err)
{
    struct fy_node *root, *ctx, *cluster, *user;
    const char *cname, *clname, *uname, *v;
    char *path = NULL;
    int rc;

    root = fy_document_root(fyd);
    if (root == NULL || !fy_node_is_mapping(root))
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "kubeconfig is not a YAML mapping");
    cname = context ? context : scalar(h, root, "current-context");
    if (cname == NULL || cname[0] == '\0')
        return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                              "kubeconfig has no current-context and none was given");
    snprintf(cfg->context, sizeof(cfg->context), "%s", cname);
    ctx = named(h, root, "contexts", cname, "context");
    if (ctx == NULL)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "context %s not found", cname);
    clname = scalar(h, ctx, "cluster");
    uname = scalar(h, ctx, "user");
    if (clname == NULL)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "context %s names no cluster", cname);
    cluster = named(h, root, "clusters", clname, "cluster");
    if (cluster == NULL)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "cluster %s not found", clname);
    rc = set_server(cfg, scalar(h, cluster, "server"), err);
    if (rc < 0)
        return rc;
    v = scalar(h, cluster, "insecure-skip-tls-verify");
    cfg->insecure = v != NULL && strcmp(v, "true") == 0;
    rc = load_pem(h, cluster, "certificate-authority", basedir, &cfg->ca, &cfg->ca_len, err);
    if (rc < 0)
        return rc;
    if (uname == NULL)
        return 0; /* anonymous */
    user = named(h, root, "users", uname, "user");
    if (user == NULL)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "user %s not found", uname);
    rc = load_pem(h, user, "client-certificate", basedir, &cfg->cert, &cfg->cert_len, err);
    if (rc < 0)
        return rc;
    rc = load_pem(h, user, "client-key", basedir, &cfg->key, &cfg->key_len, err);
    if (rc < 0)
        return rc;
    if ((cfg->cert == NULL) != (cfg->key == NULL))
        return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                              "user %s has a client certificate without a key or vice versa",
                              uname);
    v = scalar(h, user, "token");
    if (v != NULL && v[0] != '\0') {
        cfg->token = strdup(v);
        if (cfg->token == NULL)
            return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        return 0;
    }
    v = scalar(h, user, "tokenFile");
    if (v != NULL && v[0] != '\0') {
        path = join_path(basedir, v);
        if (path == NULL)
            return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        cfg->token_file = path;
        return kube_config_read_token(path, &cfg->token, err);
    }
    return 0;
}

static int load_doc(kube_config *cfg, struct fy_document *fyd, const char *yaml, size_t len,
                    const char *basedir, const char *context, kube_error *err)
{
    held h = {.input = yaml, .inputlen = len, .n = 0};
    int rc = load_held(cfg, fyd, basedir, context, &h, err);

    held_free(&h);
    return rc;
}

/* Keeps the first line of libfyaml's diagnostics instead of printing them. */
static void diag_capture(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    char *out = user;
    size_t n;

    (void)diag;
    if (out[0] != '\0')
        return;
    n = strcspn(buf, "\n");
    if (n > len)
        n = len;
    snprintf(out, 256, "%.*s", (int)n, buf);
}

int kube_config_load_yaml(kube_config *cfg, const char *yaml, size_t len, const char *basedir,
                          const char *context, kube_error *err)
{
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET};
    struct fy_diag_cfg dcfg;
    struct fy_document *fyd;
    char why[256] = "";
    size_t bad;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    kube_error_clear(err);
    if (yaml == NULL)
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "no kubeconfig text");
    if ((bad = hcp_yaml_bad_utf8(yaml, len)) < len)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                              "kubeconfig is not valid UTF-8 text (byte %zu)", bad);
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_capture;
    dcfg.user = why;
    dcfg.colorize = false;
    pcfg.diag = fy_diag_create(&dcfg);
    fyd = fy_document_build_from_string(&pcfg, yaml, len);
    fy_diag_unref(pcfg.diag);
    if (fyd == NULL)
        return kube_error_set(err, HCP_ECONFIG, 0, NULL, "kubeconfig is not valid YAML%s%s",
                              why[0] ? ": " : "", why);
    rc = load_doc(cfg, fyd, yaml, len, basedir, context, err);
    fy_document_destroy(fyd);
    if (rc < 0)
        kube_config_free(cfg);
    return rc;
}

int kube_config_load_file(kube_config *cfg, const char *path, const char *context,
                          kube_error *err)
{
    char *text = NULL, *dir = NULL, *slash;
    size_t len = 0;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    rc = read_file(path, &text, &len, err);
    if (rc < 0)
        return rc;
    dir = strdup(path);
    if (dir == NULL) {
        rc = kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        goto out;
    }
    slash = strrchr(dir, '/');
    if (slash != NULL)
        *slash = '\0';
    else
        dir[0] = '\0';
    rc = kube_config_load_yaml(cfg, text, len, slash ? (dir[0] ? dir : "/") : NULL, context, err);
    if (rc < 0 && err != NULL) {
        char msg[sizeof(err->message)];
        snprintf(msg, sizeof(msg), "%s", err->message);
        hcp_errf(err->message, sizeof(err->message), rc, "%.200s: %.300s", path, msg);
    }
out:
    free(dir);
    free(text);
    return rc;
}

int kube_config_load_incluster(kube_config *cfg, const char *dir, kube_error *err)
{
    const char *host = getenv("KUBERNETES_SERVICE_HOST");
    const char *port = getenv("KUBERNETES_SERVICE_PORT");
    char *url = NULL, *cafile = NULL;
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    kube_error_clear(err);
    if (dir == NULL)
        dir = KUBE_INCLUSTER_DIR;
    if (host == NULL || host[0] == '\0' || port == NULL || port[0] == '\0')
        return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                              "not in a cluster: KUBERNETES_SERVICE_HOST/PORT are not set");
    /* IPv6 service addresses need brackets in a URL. */
    if (asprintf(&url, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port) < 0) {
        url = NULL;
        goto nomem;
    }
    rc = set_server(cfg, url, err);
    if (rc < 0)
        goto fail;
    if (asprintf(&cfg->token_file, "%s/token", dir) < 0) {
        cfg->token_file = NULL;
        goto nomem;
    }
    rc = kube_config_read_token(cfg->token_file, &cfg->token, err);
    if (rc < 0)
        goto fail;
    if (asprintf(&cafile, "%s/ca.crt", dir) < 0) {
        cafile = NULL;
        goto nomem;
    }
    rc = read_file(cafile, &cfg->ca, &cfg->ca_len, err);
    if (rc < 0)
        goto fail;
    snprintf(cfg->context, sizeof(cfg->context), "in-cluster");
    free(cafile);
    free(url);
    return 0;
nomem:
    rc = kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
fail:
    free(cafile);
    free(url);
    kube_config_free(cfg);
    return rc;
}

int kube_config_load_default(kube_config *cfg, const char *path, const char *context,
                             kube_error *err)
{
    const char *env = getenv("KUBECONFIG"), *home;
    char buf[4096];
    struct stat st;

    if (path != NULL && path[0] != '\0')
        return kube_config_load_file(cfg, path, context, err);
    if (env != NULL && env[0] != '\0') {
        size_t n = strcspn(env, ":");
        snprintf(buf, sizeof(buf), "%.*s", (int)n, env);
        return kube_config_load_file(cfg, buf, context, err);
    }
    if (getenv("KUBERNETES_SERVICE_HOST") != NULL)
        return kube_config_load_incluster(cfg, NULL, err);
    home = getenv("HOME");
    snprintf(buf, sizeof(buf), "%s/.kube/config", home ? home : "");
    if (stat(buf, &st) == 0)
        return kube_config_load_file(cfg, buf, context, err);
    memset(cfg, 0, sizeof(*cfg));
    return kube_error_set(err, HCP_ECONFIG, 0, NULL,
                          "no kubeconfig given, $KUBECONFIG unset, not in a cluster and %s "
                          "does not exist", buf);
}
