/* test_kubeconfig.c: a hosted cluster's kubeconfig from its Secret: decoding,
 * server rewrite and vetting. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "hosted/kubeconfig.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", e.text, text);
    return j;
}

/* Standard base64 of a NUL-terminated string, into a static buffer. */
static const char *b64(const char *s)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static char out[8192];
    size_t n = strlen(s), o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

#define KUBECONFIG_INLINE                                                                      \
    "apiVersion: v1\n"                                                                         \
    "kind: Config\n"                                                                           \
    "clusters:\n"                                                                              \
    "- name: c\n"                                                                              \
    "  cluster:\n"                                                                             \
    "    server: https://kube-apiserver:6443\n"                                                \
    "users:\n"                                                                                 \
    "- name: u\n"                                                                              \
    "  user:\n"                                                                                \
    "    token: abc\n"                                                                         \
    "contexts:\n"                                                                              \
    "- name: x\n"                                                                              \
    "  context: {cluster: c, user: u}\n"                                                       \
    "current-context: x\n"

/* ---- Secret decoding ---------------------------------------------------- */

static json_t *secret_with(const char *data_json)
{
    char buf[10000];
    snprintf(buf, sizeof(buf), "{\"kind\":\"Secret\",\"metadata\":{\"name\":\"s\"}%s%s}",
             data_json ? ",\"data\":" : "", data_json ? data_json : "");
    return J(buf);
}

static void expect_secret_error(const char *data_json, const char *want_substr)
{
    json_t *s = secret_with(data_json);
    char *out = (char *)1, err[256] = "";
    size_t len = 99;
    assert_int_equal(hosted_kubeconfig_from_secret(s, &out, &len, err, sizeof(err)),
                     HCP_ECONFIG);
    assert_null(out);
    assert_int_equal(len, 0);
    if (!strstr(err, want_substr))
        fail_msg("error \"%s\" does not say \"%s\"", err, want_substr);
    json_decref(s);
}

static void test_secret_decode(void **state)
{
    (void)state;
    char data[9000], *out = NULL, err[256] = "";
    size_t len = 0;
    snprintf(data, sizeof(data), "{\"kubeconfig\":\"%s\",\"other\":\"eA==\"}",
             b64(KUBECONFIG_INLINE));
    json_t *s = secret_with(data);
    assert_int_equal(hosted_kubeconfig_from_secret(s, &out, &len, err, sizeof(err)), 0);
    assert_int_equal(len, strlen(KUBECONFIG_INLINE));
    assert_memory_equal(out, KUBECONFIG_INLINE, len);
    assert_int_equal(out[len], '\0');
    free(out);
    json_decref(s);

    expect_secret_error(NULL, "has no data");
    expect_secret_error("[]", "has no data");
    expect_secret_error("{}", "has no key kubeconfig");
    expect_secret_error("{\"kubeconfig\":42}", "is not a string");
    expect_secret_error("{\"kubeconfig\":\"\"}", "is empty");
    expect_secret_error("{\"kubeconfig\":\"!!not base64!!\"}", "not valid base64");
    expect_secret_error("{\"kubeconfig\":\"AAB4\"}", "binary"); /* "\0\0x" */
}

/* ---- server rewrite ------------------------------------------------------ */

static void expect_rewrite(const char *in, const char *want)
{
    char out[256], err[256] = "";
    int rc = hosted_kubeconfig_rewrite_server(in, "clusters-hc1", out, sizeof(out), err,
                                              sizeof(err));
    if (rc != 0)
        fail_msg("rewrite of %s failed: %s", in, err);
    assert_string_equal(out, want);
}

static void expect_rewrite_error(const char *in, const char *ns, const char *want_substr)
{
    char out[256], err[256] = "";
    assert_int_equal(hosted_kubeconfig_rewrite_server(in, ns, out, sizeof(out), err, sizeof(err)),
                     HCP_EINVAL);
    if (!strstr(err, want_substr))
        fail_msg("error \"%s\" does not say \"%s\"", err, want_substr);
}

static void test_rewrite_server(void **state)
{
    (void)state;
    expect_rewrite("https://kube-apiserver:6443", "https://kube-apiserver.clusters-hc1.svc:6443");
    expect_rewrite("https://10.0.0.1:31234/", "https://kube-apiserver.clusters-hc1.svc:31234/");
    expect_rewrite("https://api.example.com", "https://kube-apiserver.clusters-hc1.svc:443");
    expect_rewrite("http://localhost", "http://kube-apiserver.clusters-hc1.svc:80");
    expect_rewrite("https://[fd00::1]:6443/prefix",
                   "https://kube-apiserver.clusters-hc1.svc:6443/prefix");

    expect_rewrite_error("ftp://x:1", "clusters-hc1", "not an http(s) URL");
    expect_rewrite_error("https://:6443", "clusters-hc1", "no host");
    expect_rewrite_error("https://x:0", "clusters-hc1", "invalid port");
    expect_rewrite_error("https://x:65536", "clusters-hc1", "invalid port");
    expect_rewrite_error("https://x:", "clusters-hc1", "invalid port");
    expect_rewrite_error("https://x:64a", "clusters-hc1", "not of the form");
    expect_rewrite_error("https://[fd00::1", "clusters-hc1", "unterminated");
    expect_rewrite_error("https://x:1/a?b", "clusters-hc1", "query");
    expect_rewrite_error("https://x:1", "Bad_NS", "not a valid namespace");
    expect_rewrite_error("https://x:1", "a.b", "not a valid namespace");
    expect_rewrite_error("https://x:1", "", "not a valid namespace");

    /* Too small an output buffer is an error, not a truncated address. */
    char small[16], err[128];
    assert_int_equal(hosted_kubeconfig_rewrite_server("https://x:1", "ns", small, sizeof(small),
                                                      err,
                                                sizeof(err)),
                     HCP_EINVAL);
}

/* ---- kubeconfig loading --------------------------------------------------- */

static void test_load_kubeconfig(void **state)
{
    (void)state;
    kube_config cfg;
    char err[512] = "";

    assert_int_equal(hosted_kubeconfig_load(KUBECONFIG_INLINE, strlen(KUBECONFIG_INLINE),
                                                 "clusters-hc1", false, &cfg, err, sizeof(err)),
                     0);
    assert_string_equal(cfg.server, "https://kube-apiserver:6443");
    assert_string_equal(cfg.token, "abc");
    kube_config_free(&cfg);

    assert_int_equal(hosted_kubeconfig_load(KUBECONFIG_INLINE, strlen(KUBECONFIG_INLINE),
                                                 "clusters-hc1", true, &cfg, err, sizeof(err)),
                     0);
    assert_string_equal(cfg.server, "https://kube-apiserver.clusters-hc1.svc:6443");
    kube_config_free(&cfg);

    /* Local file references are refused before anything is read. */
    static const char *const files[][2] = {
        {"    server: https://h:1\n    certificate-authority: /etc/passwd\n", "    token: t\n"},
        {"    server: https://h:1\n", "    tokenFile: /var/run/secrets/kubernetes.io/token\n"},
        {"    server: https://h:1\n", "    client-certificate: /a\n    client-key: /b\n"},
    };
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        char yaml[1024];
        snprintf(yaml, sizeof(yaml),
                 "clusters:\n- name: c\n  cluster:\n%susers:\n- name: u\n  user:\n%s"
                 "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                 "current-context: x\n",
                 files[i][0], files[i][1]);
        err[0] = '\0';
        assert_int_equal(hosted_kubeconfig_load(yaml, strlen(yaml), "ns", false, &cfg, err,
                                                     sizeof(err)),
                         HCP_ECONFIG);
        if (!strstr(err, "local file"))
            fail_msg("case %zu: error \"%s\" does not mention the local file", i, err);
        assert_null(cfg.server);
    }

    /* Unparsable and incomplete kubeconfigs say why. */
    const char *bad = "clusters: [ {";
    assert_int_equal(hosted_kubeconfig_load(bad, strlen(bad), "ns", false, &cfg, err,
                                                 sizeof(err)),
                     HCP_ECONFIG);
    assert_non_null(strstr(err, "not valid YAML"));
    const char *nocontext = "clusters: []\n";
    assert_int_equal(hosted_kubeconfig_load(nocontext, strlen(nocontext), "ns", false, &cfg,
                                                 err, sizeof(err)),
                     HCP_ECONFIG);
    assert_non_null(strstr(err, "current-context"));
    assert_int_equal(hosted_kubeconfig_load("", 0, "ns", false, &cfg, err, sizeof(err)),
                     HCP_ECONFIG);

    /* A server that cannot be rewritten makes the kubeconfig invalid. */
    const char *ftp = "clusters:\n- name: c\n  cluster:\n    server: https://:6443\n"
                      "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n";
    assert_int_equal(hosted_kubeconfig_load(ftp, strlen(ftp), "ns", true, &cfg, err,
                                                 sizeof(err)),
                     HCP_ECONFIG);
    assert_non_null(strstr(err, "no host"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_secret_decode),
        cmocka_unit_test(test_rewrite_server),
        cmocka_unit_test(test_load_kubeconfig),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
