/*
 * Unit tests for the small pure pieces of pkg/kube: the watch-stream line
 * splitter, the token bucket, backoff, API paths, Status errors and
 * discovery's version choice.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/discovery.h"
#include "kube/error.h"
#include "kube/http.h"
#include "kube/lines.h"
#include "kube/ratelimit.h"

static void test_lines_arbitrary_chunks(void **state)
{
    const char *stream = "{\"type\":\"ADDED\"}\n{\"type\":\"MODIFIED\"}\r\n\n{\"type\":\"DELETED\"}\n{\"par";
    kube_lines l;
    const char *line;
    size_t n, i, chunk;
    char got[4][32];
    int count;

    (void)state;
    /* Every chunk size from 1 byte to the whole stream yields the same lines. */
    for (chunk = 1; chunk <= strlen(stream); chunk++) {
        kube_lines_init(&l, 1024);
        count = 0;
        for (i = 0; i < strlen(stream); i += chunk) {
            size_t len = strlen(stream) - i < chunk ? strlen(stream) - i : chunk;
            assert_int_equal(kube_lines_feed(&l, stream + i, len), 0);
            while (kube_lines_next(&l, &line, &n)) {
                assert_true(count < 4);
                snprintf(got[count++], 32, "%.*s", (int)n, line);
            }
        }
        assert_int_equal(count, 3);
        assert_string_equal(got[0], "{\"type\":\"ADDED\"}");
        assert_string_equal(got[1], "{\"type\":\"MODIFIED\"}");
        assert_string_equal(got[2], "{\"type\":\"DELETED\"}");
        assert_int_equal(kube_lines_pending(&l), 5);
        kube_lines_free(&l);
    }
}

static void test_lines_limit(void **state)
{
    kube_lines l;
    char big[100];

    (void)state;
    memset(big, 'x', sizeof(big));
    kube_lines_init(&l, 64);
    assert_int_equal(kube_lines_feed(&l, big, 50), 0);
    assert_int_equal(kube_lines_feed(&l, big, 50), HCP_EPARSE);
    kube_lines_reset(&l);
    assert_int_equal(kube_lines_pending(&l), 0);
    kube_lines_free(&l);
}

static void test_ratelimit(void **state)
{
    kube_ratelimit rl;
    int i;

    (void)state;
    kube_ratelimit_init(&rl, 10, 3, 100.0);
    for (i = 0; i < 3; i++)
        assert_true(kube_ratelimit_reserve(&rl, 100.0) == 0.0);
    /* Beyond the burst, reservations queue at 1/qps intervals. */
    assert_float_equal(kube_ratelimit_reserve(&rl, 100.0), 0.1, 1e-9);
    assert_float_equal(kube_ratelimit_reserve(&rl, 100.0), 0.2, 1e-9);
    /* After a second the bucket has refilled (capped at burst) minus the debt. */
    assert_float_equal(kube_ratelimit_reserve(&rl, 101.0), 0.0, 1e-9);
    kube_ratelimit_init(&rl, 0, 1, 0);
    for (i = 0; i < 1000; i++)
        assert_true(kube_ratelimit_reserve(&rl, 0) == 0.0);
}

static void test_backoff(void **state)
{
    kube_backoff b;
    double d;

    (void)state;
    kube_backoff_init(&b, 0.5, 4);
    assert_float_equal(kube_backoff_next(&b, 0.0), 0.25, 1e-9);
    assert_float_equal(kube_backoff_next(&b, 0.999999), 1.0, 1e-5);
    d = kube_backoff_next(&b, 0.5);
    assert_float_equal(d, 1.5, 1e-9);
    assert_float_equal(kube_backoff_next(&b, 0.0), 2.0, 1e-9); /* capped at 4 */
    assert_float_equal(kube_backoff_next(&b, 0.0), 2.0, 1e-9);
    kube_backoff_reset(&b);
    assert_float_equal(kube_backoff_next(&b, 0.0), 0.25, 1e-9);
}

static void test_paths(void **state)
{
    char p[128];

    (void)state;
    assert_int_equal(kube_path(p, sizeof(p), "", "v1", "configmaps", "ns", "cm", NULL), 0);
    assert_string_equal(p, "/api/v1/namespaces/ns/configmaps/cm");
    assert_int_equal(kube_path(p, sizeof(p), "hypershift.openshift.io", "v1beta1", "nodepools",
                               "clusters", "np", "status"), 0);
    assert_string_equal(p, "/apis/hypershift.openshift.io/v1beta1/namespaces/clusters/nodepools/np/status");
    assert_int_equal(kube_path(p, sizeof(p), NULL, "v1", "namespaces", NULL, NULL, NULL), 0);
    assert_string_equal(p, "/api/v1/namespaces");
    assert_int_equal(kube_path(p, sizeof(p), "", "v1", "configmaps", "ns", "../x", NULL), HCP_EINVAL);
    assert_int_equal(kube_path(p, sizeof(p), "", "v1", "configmaps", "n s", "x", NULL), HCP_EINVAL);
    assert_int_equal(kube_path(p, sizeof(p), "", "v1", "configmaps", NULL, NULL, "status"), HCP_EINVAL);
    assert_int_equal(kube_path(p, 10, "", "v1", "configmaps", "ns", "x", NULL), HCP_EINVAL);
}

static void test_status_errors(void **state)
{
    kube_error e;
    const char *forbidden =
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
        "\"message\":\"configmaps is forbidden: User \\\"bob\\\" cannot list resource\","
        "\"reason\":\"Forbidden\",\"code\":403}";

    (void)state;
    assert_int_equal(kube_error_from_response(&e, 403, forbidden, strlen(forbidden)), HCP_EHTTP);
    assert_int_equal(e.http_status, 403);
    assert_string_equal(e.reason, "Forbidden");
    assert_string_equal(e.message, "configmaps is forbidden: User \"bob\" cannot list resource");
    assert_int_equal(kube_error_from_response(&e, 502, "<html>\nbad gateway", 18), HCP_EHTTP);
    assert_string_equal(e.reason, "");
    assert_string_equal(e.message, "HTTP 502 without a Status message: <html> bad gateway");
    kube_error_set(&e, HCP_ETLS, 0, NULL, "%s", "x");
    assert_string_equal(hcp_strerror(e.code), "TLS error");
    kube_error_clear(&e);
    assert_int_equal(e.code, 0);
    assert_string_equal(e.message, "");
}

static void test_discovery_pick(void **state)
{
    static const char *const capi[] = {"v1beta2", "v1beta1", NULL};
    json_t *both = json_loads("{\"kind\":\"APIGroup\",\"name\":\"cluster.x-k8s.io\",\"versions\":["
                              "{\"groupVersion\":\"cluster.x-k8s.io/v1beta1\",\"version\":\"v1beta1\"},"
                              "{\"groupVersion\":\"cluster.x-k8s.io/v1beta2\",\"version\":\"v1beta2\"}],"
                              "\"preferredVersion\":{\"version\":\"v1beta1\"}}", 0, NULL);
    json_t *old = json_loads("{\"name\":\"cluster.x-k8s.io\",\"versions\":[{\"version\":\"v1beta1\"}],"
                             "\"preferredVersion\":{\"version\":\"v1beta1\"}}", 0, NULL);
    json_t *alpha = json_loads("{\"name\":\"cluster.x-k8s.io\",\"versions\":[{\"version\":\"v1alpha4\"}],"
                               "\"preferredVersion\":{\"version\":\"v1alpha4\"}}", 0, NULL);
    char v[32];
    kube_error e;

    (void)state;
    assert_int_equal(kube_discovery_pick(both, capi, v, sizeof(v), &e), 0);
    assert_string_equal(v, "v1beta2");
    assert_int_equal(kube_discovery_pick(both, NULL, v, sizeof(v), &e), 0);
    assert_string_equal(v, "v1beta1");
    assert_int_equal(kube_discovery_pick(old, capi, v, sizeof(v), &e), 0);
    assert_string_equal(v, "v1beta1");
    assert_int_equal(kube_discovery_pick(alpha, capi, v, sizeof(v), &e), HCP_EINVAL);
    assert_non_null(strstr(e.message, "served: v1alpha4"));
    assert_int_equal(kube_discovery_pick(json_object_get(both, "name"), capi, v, sizeof(v), &e),
                     HCP_EPARSE);
    json_decref(both);
    json_decref(old);
    json_decref(alpha);
}

/* Warning header values: the API server's quoted form is unescaped; a value
 * of another shape is kept as it is, trimmed; output is always terminated
 * and truncated to the buffer. */
static void test_warning_text(void **state)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {" 299 - \"unknown field \\\"spec.x\\\"\"\r\n", "unknown field \"spec.x\""},
        {"299 kube-apiserver \"a \\\\ b\" \"Wed, 21 Oct 2026 07:28:00 GMT\"", "a \\ b"},
        {"299 - \"\"", ""},
        {"free text, not RFC 9111\r\n", "free text, not RFC 9111"},
        {"299 - \"unterminated", "299 - \"unterminated"},
        {"   \r\n", ""},
    };
    char out[64], tiny[6];
    size_t i, n;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        n = kube_http_warning_text(cases[i].in, strlen(cases[i].in), out, sizeof(out));
        assert_string_equal(out, cases[i].want);
        assert_int_equal(n, strlen(cases[i].want));
    }
    n = kube_http_warning_text("299 - \"deprecated API\"", 22, tiny, sizeof(tiny));
    assert_string_equal(tiny, "depre");
    assert_int_equal(n, 5);
    /* Not NUL-terminated input: only len bytes are read. */
    n = kube_http_warning_text("299 - \"abc\"XYZ", 11, out, sizeof(out));
    assert_string_equal(out, "abc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_arbitrary_chunks),
        cmocka_unit_test(test_warning_text),
        cmocka_unit_test(test_lines_limit),
        cmocka_unit_test(test_ratelimit),
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_status_errors),
        cmocka_unit_test(test_discovery_pick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
