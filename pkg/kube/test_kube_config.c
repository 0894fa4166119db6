/*
 * Unit tests for kube/config.c: kubeconfig and in-cluster loading.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kube/config.h"

/* "-----BEGIN CERTIFICATE-----\nCA\n" */
#define CA_B64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg=="

static const char *kubeconfig =
    "apiVersion: v1\n"
    "kind: Config\n"
    "current-context: admin\n"
    "clusters:\n"
    "- name: local\n"
    "  cluster:\n"
    "    server: https://127.0.0.1:6443/\n"
    "    certificate-authority-data: " CA_B64 "\n"
    "- name: lab\n"
    "  cluster:\n"
    "    server: https://lab.example:443\n"
    "    insecure-skip-tls-verify: true\n"
    "contexts:\n"
    "- name: admin\n"
    "  context: {cluster: local, user: admin}\n"
    "- name: lab\n"
    "  context: {cluster: lab, user: certuser}\n"
    "- name: broken\n"
    "  context: {cluster: nowhere, user: admin}\n"
    "- name: filetok\n"
    "  context: {cluster: local, user: filetok}\n"
    "users:\n"
    "- name: admin\n"
    "  user:\n"
    "    token: abc.def\n"
    "- name: certuser\n"
    "  user:\n"
    "    client-certificate-data: aGVsbG8=\n"
    "    client-key-data: d29ybGQ=\n"
    "- name: filetok\n"
    "  user:\n"
    "    tokenFile: tok.txt\n";

static void test_current_context_token_and_ca(void **state)
{
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_int_equal(kube_config_load_yaml(&cfg, kubeconfig, strlen(kubeconfig), NULL, NULL, &e), 0);
    assert_string_equal(cfg.server, "https://127.0.0.1:6443");
    assert_string_equal(cfg.token, "abc.def");
    assert_non_null(cfg.ca);
    assert_int_equal(cfg.ca_len, strlen("-----BEGIN CERTIFICATE-----\nCA\n"));
    assert_memory_equal(cfg.ca, "-----BEGIN CERTIFICATE-----\nCA\n", cfg.ca_len);
    assert_false(cfg.insecure);
    assert_null(cfg.cert);
    assert_string_equal(cfg.context, "admin");
    kube_config_free(&cfg);
    assert_null(cfg.server);
}

static void test_named_context_cert_insecure(void **state)
{
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_int_equal(kube_config_load_yaml(&cfg, kubeconfig, strlen(kubeconfig), NULL, "lab", &e), 0);
    assert_true(cfg.insecure);
    assert_string_equal(cfg.cert, "hello");
    assert_int_equal(cfg.cert_len, 5);
    assert_string_equal(cfg.key, "world");
    assert_null(cfg.token);
    assert_null(cfg.ca);
    kube_config_free(&cfg);
}

static void test_errors_are_specific(void **state)
{
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_int_equal(kube_config_load_yaml(&cfg, kubeconfig, strlen(kubeconfig), NULL, "nope", &e),
                     HCP_ECONFIG);
    assert_non_null(strstr(e.message, "context nope not found"));
    assert_int_equal(kube_config_load_yaml(&cfg, kubeconfig, strlen(kubeconfig), NULL, "broken", &e),
                     HCP_ECONFIG);
    assert_non_null(strstr(e.message, "cluster nowhere not found"));
    assert_int_equal(kube_config_load_yaml(&cfg, "a: [", 4, NULL, NULL, &e), HCP_ECONFIG);
    assert_non_null(strstr(e.message, "not valid YAML: "));
    assert_int_equal(kube_config_load_yaml(&cfg, "- 1\n", 4, NULL, NULL, &e), HCP_ECONFIG);
    {
        const char *bad = "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                          "clusters:\n- name: c\n  cluster: {server: 'ftp://x'}\n";
        assert_int_equal(kube_config_load_yaml(&cfg, bad, strlen(bad), NULL, NULL, &e),
                         HCP_ECONFIG);
        assert_non_null(strstr(e.message, "not an http(s) URL"));
    }
    {
        const char *bad = "current-context: x\ncontexts:\n- name: x\n  context: {cluster: c}\n"
                          "clusters:\n- name: c\n  cluster: {server: 'https://x', "
                          "certificate-authority-data: '!!!'}\n";
        assert_int_equal(kube_config_load_yaml(&cfg, bad, strlen(bad), NULL, NULL, &e),
                         HCP_ECONFIG);
        assert_non_null(strstr(e.message, "base64"));
    }
    assert_null(cfg.server);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/*
 * Bytes libfyaml must never see: malformed UTF-8 in a directive makes it
 * loop forever, so a Secret holding them would hang the controller. Escaped
 * quotes in single-quoted names come out whole (libfyaml's own text cache
 * gets them wrong and leaks).
 */
static void test_untrusted_yaml(void **state)
{
    static const char hang[] = "%:\x91qd";
    static const char quotes[] = "current-context: c\n"
                                 "contexts:\n- name: c\n  context: {cluster: 'q''''x'}\n"
                                 "clusters:\n- name: 'q''''x'\n  cluster: {server: 'https://h:1/'}\n";
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_int_equal(kube_config_load_yaml(&cfg, hang, sizeof hang - 1, NULL, NULL, &e),
                     HCP_ECONFIG);
    assert_non_null(strstr(e.message, "not valid UTF-8 text (byte 2)"));
    assert_int_equal(kube_config_load_yaml(&cfg, quotes, sizeof quotes - 1, NULL, NULL, &e), 0);
    assert_string_equal(cfg.server, "https://h:1");
    kube_config_free(&cfg);
}

static void test_token_file_relative_to_kubeconfig(void **state)
{
    char dir[] = "/tmp/kubecfgXXXXXX", path[256], tok[256];
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/config", dir);
    snprintf(tok, sizeof(tok), "%s/tok.txt", dir);
    write_file(path, kubeconfig);
    write_file(tok, "  secret-token\n\n");
    assert_int_equal(kube_config_load_file(&cfg, path, "filetok", &e), 0);
    assert_string_equal(cfg.token, "secret-token");
    assert_string_equal(cfg.token_file, tok);
    kube_config_free(&cfg);
    unlink(tok);
    assert_int_equal(kube_config_load_file(&cfg, path, "filetok", &e), HCP_EIO);
    assert_non_null(strstr(e.message, "tok.txt"));
    unlink(path);
    rmdir(dir);
}

static void test_incluster(void **state)
{
    char dir[] = "/tmp/saXXXXXX", p[256];
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_non_null(mkdtemp(dir));
    unsetenv("KUBERNETES_SERVICE_HOST");
    assert_int_equal(kube_config_load_incluster(&cfg, dir, &e), HCP_ECONFIG);
    assert_non_null(strstr(e.message, "not in a cluster"));
    setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
    setenv("KUBERNETES_SERVICE_PORT", "443", 1);
    snprintf(p, sizeof(p), "%s/token", dir);
    write_file(p, "sa-token\n");
    snprintf(p, sizeof(p), "%s/ca.crt", dir);
    write_file(p, "PEM");
    assert_int_equal(kube_config_load_incluster(&cfg, dir, &e), 0);
    assert_string_equal(cfg.server, "https://10.0.0.1:443");
    assert_string_equal(cfg.token, "sa-token");
    assert_non_null(cfg.token_file);
    assert_string_equal(cfg.ca, "PEM");
    kube_config_free(&cfg);
    setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
    assert_int_equal(kube_config_load_incluster(&cfg, dir, &e), 0);
    assert_string_equal(cfg.server, "https://[fd00::1]:443");
    kube_config_free(&cfg);
    unsetenv("KUBERNETES_SERVICE_HOST");
    unsetenv("KUBERNETES_SERVICE_PORT");
    unlink(p);
    snprintf(p, sizeof(p), "%s/token", dir);
    unlink(p);
    rmdir(dir);
}

static void test_base64(void **state)
{
    char *out;
    size_t n;

    (void)state;
    assert_int_equal(kube_base64_decode("aGVs\nbG8=", 9, &out, &n), 0);
    assert_int_equal(n, 5);
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("aGVsbG8", 7, &out, &n), 0); /* unpadded */
    assert_string_equal(out, "hello");
    free(out);
    assert_int_equal(kube_base64_decode("", 0, &out, &n), 0);
    assert_int_equal(n, 0);
    free(out);
    assert_int_equal(kube_base64_decode("a=b=", 4, &out, &n), HCP_EINVAL);
    assert_int_equal(kube_base64_decode("a", 1, &out, &n), HCP_EINVAL);
    assert_int_equal(kube_base64_decode("ab$c", 4, &out, &n), HCP_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_current_context_token_and_ca),
        cmocka_unit_test(test_named_context_cert_insecure),
        cmocka_unit_test(test_errors_are_specific),
        cmocka_unit_test(test_untrusted_yaml),
        cmocka_unit_test(test_token_file_relative_to_kubeconfig),
        cmocka_unit_test(test_incluster),
        cmocka_unit_test(test_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
