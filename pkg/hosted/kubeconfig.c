/* kubeconfig.c: the kubeconfig of a hosted cluster, from its Secret, vetted. */
#include "hosted/kubeconfig.h"

#include <libfyaml.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "kube/error.h"

#define SERVER_LEN 512
#define NS_LEN 64 /* a namespace name is at most 63 bytes */

static bool valid_namespace(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= NS_LEN || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

int hosted_kubeconfig_from_secret(const json_t *secret, char **out, size_t *outlen, char *err,
                                  size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    const json_t *data = json_object_get(secret, "data");
    if (!json_is_object(data)) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s has no data", HOSTED_SECRET);
    }
    const json_t *v = json_object_get(data, HOSTED_SECRET_KEY);
    if (!v) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s has no key %s", HOSTED_SECRET,
                        HOSTED_SECRET_KEY);
    }
    if (!json_is_string(v)) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s key %s is not a string", HOSTED_SECRET,
                        HOSTED_SECRET_KEY);
    }
    size_t inlen = json_string_length(v);
    if (inlen == 0) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s key %s is empty", HOSTED_SECRET,
                        HOSTED_SECRET_KEY);
    }
    if (inlen / 4 * 3 > HOSTED_KUBECONFIG_MAX + 3) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s key %s is larger than %d bytes",
                        HOSTED_SECRET, HOSTED_SECRET_KEY, HOSTED_KUBECONFIG_MAX);
    }
    char *buf = NULL;
    size_t n = 0;
    int rc = kube_base64_decode(json_string_value(v), inlen, &buf, &n);
    if (rc == HCP_ENOMEM)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    if (rc < 0 || !buf) {
        hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s key %s is not valid base64", HOSTED_SECRET,
                 HOSTED_SECRET_KEY);
        free(buf);
        return HCP_ECONFIG;
    }
    if (n == 0 || n > HOSTED_KUBECONFIG_MAX || memchr(buf, '\0', n)) {
        hcp_errf(err, errlen, HCP_ECONFIG, "Secret %s key %s %s", HOSTED_SECRET, HOSTED_SECRET_KEY,
                 n == 0                       ? "decodes to nothing"
                 : n > HOSTED_KUBECONFIG_MAX ? "is too large"
                                             : "is binary, not a kubeconfig");
        free(buf);
        return HCP_ECONFIG;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

int hosted_kubeconfig_rewrite_server(const char *server, const char *hcpns, char *out,
                                     size_t outlen, char *err, size_t errlen)
{
    const char *scheme, *p, *host_end, *port = NULL, *path;
    size_t port_len = 0;

    if (!server || !hcpns || !valid_namespace(hcpns)) {
        return hcp_errf(err, errlen, HCP_EINVAL, "namespace \"%s\" is not a valid namespace name",
                        hcpns ? hcpns : "");
    }
    if (strncmp(server, "https://", 8) == 0) {
        scheme = "https";
        p = server + 8;
    } else if (strncmp(server, "http://", 7) == 0) {
        scheme = "http";
        p = server + 7;
    } else {
        return hcp_errf(err, errlen, HCP_EINVAL, "server \"%.200s\" is not an http(s) URL", server);
    }
    /* Host: a bracketed IPv6 literal or up to ':' or '/'. */
    if (*p == '[') {
        host_end = strchr(p, ']');
        if (!host_end) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "server \"%.200s\" has an unterminated IPv6 address", server);
        }
        host_end++;
    } else {
        host_end = p + strcspn(p, ":/?#");
    }
    if (host_end == p) {
        return hcp_errf(err, errlen, HCP_EINVAL, "server \"%.200s\" has no host", server);
    }
    path = host_end;
    if (*host_end == ':') {
        port = host_end + 1;
        port_len = strspn(port, "0123456789");
        path = port + port_len;
        long v = 0;
        for (size_t i = 0; i < port_len && v <= 65535; i++)
            v = v * 10 + (port[i] - '0');
        if (port_len == 0 || port_len > 5 || v < 1 || v > 65535) {
            return hcp_errf(err, errlen, HCP_EINVAL, "server \"%.200s\" has an invalid port",
                            server);
        }
    }
    if (*path != '\0' && *path != '/') {
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "server \"%.200s\" is not of the form scheme://host[:port][/path]",
                        server);
    }
    for (const char *q = path; *q; q++)
        if ((unsigned char)*q <= ' ' || *q == '?' || *q == '#' || *q == 0x7f) {
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "server \"%.200s\" has a query, fragment or control byte", server);
        }
    int n;
    if (port)
        n = snprintf(out, outlen, "%s://kube-apiserver.%s.svc:%.*s%s", scheme, hcpns,
                     (int)port_len, port, path);
    else
        n = snprintf(out, outlen, "%s://kube-apiserver.%s.svc:%s%s", scheme, hcpns,
                     scheme[4] == 's' ? "443" : "80", path);
    if (n < 0 || (size_t)n >= outlen) {
        return hcp_errf(err, errlen, HCP_EINVAL, "rewritten server address is too long");
    }
    return 0;
}

/* Looks up a non-empty scalar under a mapping. */
static const char *yaml_scalar(struct fy_node *map, const char *key)
{
    if (!map || !fy_node_is_mapping(map))
        return NULL;
    struct fy_node *v = fy_node_mapping_lookup_value_by_simple_key(map, key, strlen(key));
    if (!v || !fy_node_is_scalar(v))
        return NULL;
    const char *s = fy_node_get_scalar0(v);
    return s && s[0] ? s : NULL;
}

/* Finds a file reference in clusters[].cluster or users[].user; returns the
 * offending field name, or NULL. */
static const char *file_reference(struct fy_node *root, const char *list, const char *inner,
                                  const char *const *fields)
{
    struct fy_node *seq = fy_node_mapping_lookup_value_by_simple_key(root, list, strlen(list));
    struct fy_node *item;
    void *iter = NULL;
    if (!seq || !fy_node_is_sequence(seq))
        return NULL;
    while ((item = fy_node_sequence_iterate(seq, &iter)) != NULL) {
        struct fy_node *m =
            fy_node_is_mapping(item)
                ? fy_node_mapping_lookup_value_by_simple_key(item, inner, strlen(inner))
                : NULL;
        for (size_t i = 0; m && fields[i]; i++)
            if (yaml_scalar(m, fields[i]))
                return fields[i];
    }
    return NULL;
}

static void diag_discard(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

/* Refuses kubeconfigs that point at local files (see the header). */
static int vet_kubeconfig(const char *yaml, size_t len, char *err, size_t errlen)
{
    static const char *const cluster_fields[] = {"certificate-authority", NULL};
    static const char *const user_fields[] = {"client-certificate", "client-key", "tokenFile",
                                              "token-file", NULL};
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET};
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_discard;
    dcfg.colorize = false;
    pcfg.diag = fy_diag_create(&dcfg);
    struct fy_document *fyd = fy_document_build_from_string(&pcfg, yaml, len);
    fy_diag_unref(pcfg.diag);
    if (!fyd)
        return 0; /* the loader reports the syntax error with detail */
    struct fy_node *root = fy_document_root(fyd);
    const char *bad = NULL;
    if (root && fy_node_is_mapping(root)) {
        bad = file_reference(root, "clusters", "cluster", cluster_fields);
        if (!bad)
            bad = file_reference(root, "users", "user", user_fields);
    }
    if (bad)
        hcp_errf(err, errlen, HCP_ECONFIG,
                 "kubeconfig refers to a local file (%s); only inline credentials "
                 "(*-data, token) are accepted", bad);
    fy_document_destroy(fyd);
    return bad ? HCP_ECONFIG : 0;
}

int hosted_kubeconfig_load(const char *yaml, size_t len, const char *hcpns, bool rewrite,
                           kube_config *cfg, char *err, size_t errlen)
{
    kube_error ke;
    char server[SERVER_LEN];
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if (!yaml || len == 0) {
        return hcp_errf(err, errlen, HCP_ECONFIG, "kubeconfig is empty");
    }
    rc = vet_kubeconfig(yaml, len, err, errlen);
    if (rc < 0)
        return rc;
    rc = kube_config_load_yaml(cfg, yaml, len, NULL, NULL, &ke);
    if (rc < 0) {
        return hcp_errf(err, errlen, rc == HCP_ENOMEM ? HCP_ENOMEM : HCP_ECONFIG, "%s",
                        ke.message);
    }
    if (cfg->token_file) { /* defense in depth: vet_kubeconfig refuses these */
        rc = hcp_errf(err, errlen, HCP_ECONFIG, "kubeconfig refers to a local token file");
        goto fail;
    }
    if (rewrite) {
        rc = hosted_kubeconfig_rewrite_server(cfg->server, hcpns, server, sizeof(server), err,
                                              errlen);
        if (rc < 0) {
            rc = HCP_ECONFIG;
            goto fail;
        }
        char *s = strdup(server);
        if (!s) {
            rc = hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
            goto fail;
        }
        free(cfg->server);
        cfg->server = s;
    }
    return 0;
fail:
    kube_config_free(cfg);
    return rc;
}

int hosted_kubeconfig_from_secret_load(const json_t *secret, const char *hcpns, bool rewrite,
                                       kube_config *cfg, char *err, size_t errlen)
{
    char *yaml = NULL;
    size_t len = 0;
    int rc = hosted_kubeconfig_from_secret(secret, &yaml, &len, err, errlen);
    memset(cfg, 0, sizeof(*cfg));
    if (rc == 0)
        rc = hosted_kubeconfig_load(yaml, len, hcpns, rewrite, cfg, err, errlen);
    if (yaml) {
        explicit_bzero(yaml, len);
        free(yaml);
    }
    return rc;
}
