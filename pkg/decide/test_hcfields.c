/* test_hcfields.c: the HostedCluster fields that roll every NodePool, pure:
 * the common window of a HostedCluster and its NodePools, the hold at
 * admission, and the patch that applies the request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#include "decide/decide.h"
#include "decide/hcfields.h"
#include "decide/slim.h"
#include "decide/testutil_decide.h"

/* Daily windows from hh:00 UTC for hours hours. */
static sched_t *daily(int hh, int hours)
{
    sched_spec_t sp = {"UTC", "FREQ=DAILY", hh * 60, hours * 3600, NULL, 0};
    char err[128];
    sched_t *s = NULL;
    assert_int_equal(sched_compile(&sp, tu_at("2026-03-04T12:00:00Z"), &s, err, sizeof(err)), 0);
    return s;
}

/* Two pools whose windows overlap: the common window is the overlap, not
 * either pool's own start. */
static void test_overlap(void **state)
{
    (void)state;
    sched_t *hc = sched_always(), *a = daily(2, 2), *b = daily(3, 2);
    decide_pool_sched_t pools[] = {{"a", a}, {"b", b}};
    decide_common_t cw;

    assert_int_equal(decide_common_window(hc, pools, 2, false, tu_at("2026-03-04T12:00:00Z"), &cw), 0);
    assert_true(cw.computed);
    assert_true(cw.has_window);
    assert_false(cw.permitted);
    assert_true(cw.start == tu_at("2026-03-05T03:00:00Z"));
    assert_true(cw.wake == tu_at("2026-03-05T03:00:00Z"));
    assert_string_equal(cw.blocking, "");
    assert_non_null(strstr(cw.message, "2026-03-05T03:00:00Z"));
    /* Inside the overlap: permitted, until it ends. */
    assert_int_equal(decide_common_window(hc, pools, 2, false, tu_at("2026-03-05T03:30:00Z"), &cw), 0);
    assert_true(cw.permitted);
    assert_true(cw.wake == tu_at("2026-03-05T04:00:00Z"));
    /* Inside a's window but not b's: not yet. */
    assert_int_equal(decide_common_window(hc, pools, 2, false, tu_at("2026-03-05T02:30:00Z"), &cw), 0);
    assert_false(cw.permitted);
    assert_true(cw.start == tu_at("2026-03-05T03:00:00Z"));
    sched_unref(hc);
    sched_unref(a);
    sched_unref(b);
}

/* Disjoint windows: no common instant, and the pool that meets nobody is
 * named; an override applies at once. */
static void test_disjoint(void **state)
{
    (void)state;
    sched_t *hc = sched_always(), *a = daily(2, 1), *b = daily(4, 1), *c = daily(2, 3);
    decide_pool_sched_t pools[] = {{"a", a}, {"b", b}, {"c", c}};
    decide_common_t cw;

    assert_int_equal(decide_common_window(hc, pools, 3, false, tu_at("2026-03-04T12:00:00Z"), &cw), 0);
    assert_false(cw.has_window);
    assert_false(cw.permitted);
    assert_string_equal(cw.blocking, "b");
    assert_non_null(strstr(cw.message, "NodePool b"));
    assert_non_null(strstr(cw.message, "a, c"));
    assert_true(cw.wake == tu_at("2026-03-05T02:00:00Z")); /* a's and c's next transition */
    assert_int_equal(decide_common_window(hc, pools, 3, true, tu_at("2026-03-04T12:00:00Z"), &cw), 0);
    assert_true(cw.override);
    assert_true(cw.permitted);
    sched_unref(hc);
    sched_unref(a);
    sched_unref(b);
    sched_unref(c);
}

/* The HostedCluster's own timeline counts: never permitted, no window and
 * no pool to blame; no pools at all: the HostedCluster's window alone. */
static void test_cluster(void **state)
{
    (void)state;
    sched_t *never = sched_never(), *a = daily(2, 1), *hc = daily(6, 1);
    decide_pool_sched_t pools[] = {{"a", a}};
    decide_common_t cw;

    assert_int_equal(decide_common_window(never, pools, 1, false, tu_at("2026-03-04T12:00:00Z"), &cw),
                     0);
    assert_false(cw.has_window);
    assert_string_equal(cw.blocking, "");
    assert_non_null(strstr(cw.message, "HostedCluster has no window"));
    assert_int_equal(decide_common_window(hc, NULL, 0, false, tu_at("2026-03-04T12:00:00Z"), &cw), 0);
    assert_true(cw.has_window);
    assert_true(cw.start == tu_at("2026-03-05T06:00:00Z"));
    /* The cluster's window and the pool's never meet. */
    assert_int_equal(decide_common_window(hc, pools, 1, false, tu_at("2026-03-04T12:00:00Z"), &cw), 0);
    assert_false(cw.has_window);
    assert_string_equal(cw.blocking, "a");
    sched_unref(never);
    sched_unref(a);
    sched_unref(hc);
}

#define REQ_KEY "changemanagement.hypershift.openshift.io~1requested-hostedcluster-spec"

/* Restricted: a proxy and a pull secret change go back to the running
 * values and are recorded; the release and other fields are not touched. */
static void test_hold(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"metadata\":{\"annotations\":{}},\"spec\":{\"pullSecret\":{\"name\":\"ps1\"},"
                    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p1\"},"
                    "\"oauth\":{}}}}");
    json_t *new = tu_doc("{\"metadata\":{\"annotations\":{}},\"spec\":{\"pullSecret\":{\"name\":\"ps2\"},"
                    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p2\"},"
                    "\"oauth\":{\"x\":1}}}}");
    decide_np_hold_t h;
    char *v;

    assert_int_equal(decide_hc_fields_hold(old, new, true, &h), 0);
    assert_string_equal(h.held, "spec.pullSecret, spec.configuration.proxy");
    assert_int_equal(json_array_size(h.ops), 3);
    v = json_dumps(h.ops, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(v, "{\"op\":\"add\",\"path\":\"/spec/pullSecret\",\"value\":{\"name\":"
                              "\"ps1\"}}"));
    assert_non_null(strstr(v, "{\"op\":\"add\",\"path\":\"/spec/configuration/proxy\",\"value\":"
                              "{\"httpProxy\":\"http://p1\"}}"));
    assert_non_null(strstr(v, "/metadata/annotations/" REQ_KEY));
    assert_non_null(strstr(v, "http://p2"));
    assert_null(strstr(v, "oauth")); /* rolls nothing: passes */
    free(v);
    decide_np_hold_free(&h);
    /* Permitted: nothing to adjust. */
    assert_int_equal(decide_hc_fields_hold(old, new, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

/* The record applied: the fields set, the annotation dropped, merged into
 * a release patch when there is one. */
static void test_patch(void **state)
{
    (void)state;
    json_t *obj = tu_doc("{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/"
                    "requested-hostedcluster-spec\":\"{\\\"additionalTrustBundle\\\":{\\\"name\\\":"
                    "\\\"tb2\\\"},\\\"configuration\\\":{\\\"proxy\\\":{\\\"httpProxy\\\":"
                    "\\\"http://p2\\\"}}}\"}},\"spec\":{}}");
    decide_hc_t *hc = decide_hc_extract(obj);
    json_t *p, *base;
    char *v;

    assert_non_null(hc);
    assert_true(decide_hc_fields_held(hc));
    assert_string_equal(hc->requested_fields_summary, "additionalTrustBundle, configuration");
    p = decide_hc_fields_patch(NULL, hc, "7");
    assert_non_null(p);
    v = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    assert_string_equal(v, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                           "openshift.io/requested-hostedcluster-spec\":null},"
                           "\"resourceVersion\":\"7\"},\"spec\":{\"additionalTrustBundle\":"
                           "{\"name\":\"tb2\"},\"configuration\":{\"proxy\":{\"httpProxy\":"
                           "\"http://p2\"}}}}");
    free(v);
    json_decref(p);
    base = tu_doc("{\"metadata\":{\"resourceVersion\":\"7\",\"annotations\":{\"a\":null}},"
             "\"spec\":{\"release\":{\"image\":\"r:2\"}}}");
    p = decide_hc_fields_patch(base, hc, "7");
    v = json_dumps(p, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(v, "\"release\":{\"image\":\"r:2\"}"));
    assert_non_null(strstr(v, "\"a\":null"));
    assert_non_null(strstr(v, "requested-hostedcluster-spec\":null"));
    free(v);
    json_decref(p);
    decide_hc_free(hc);
    json_decref(obj);
    /* Nothing held: base comes back as it was. */
    obj = tu_doc("{\"metadata\":{},\"spec\":{}}");
    hc = decide_hc_extract(obj);
    assert_false(decide_hc_fields_held(hc));
    assert_null(decide_hc_fields_patch(NULL, hc, "7"));
    decide_hc_free(hc);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_overlap), cmocka_unit_test(test_disjoint),
        cmocka_unit_test(test_cluster), cmocka_unit_test(test_hold),
        cmocka_unit_test(test_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
