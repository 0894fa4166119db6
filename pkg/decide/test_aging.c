/* test_aging.c: how long a held change has waited, and when that is told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "decide/aging.h"
#include "decide/drift.h"
#include "decide/plan.h"
#include "decide/testutil_decide.h"
#include "policy/guard.h"

#define CM "changemanagement.hypershift.openshift.io/"

/* The occasions: none before the warning, the first at it, then one a week,
 * the latest not after now; next is the following one. */
static void test_occasions(void **state)
{
    (void)state;
    decide_aging_t a;
    sched_time_t since = tu_at("2026-02-01T09:00:00Z"), warn = 30 * 86400;
    decide_aging(since, warn, tu_at("2026-03-03T08:59:59Z"), &a);
    assert_false(a.aging);
    assert_true(a.occasion == SCHED_NEG_INF);
    assert_true(a.next == tu_at("2026-03-03T09:00:00Z"));
    decide_aging(since, warn, tu_at("2026-03-03T09:00:00Z"), &a);
    assert_true(a.aging);
    assert_true(a.occasion == tu_at("2026-03-03T09:00:00Z"));
    assert_true(a.next == tu_at("2026-03-10T09:00:00Z"));
    decide_aging(since, warn, tu_at("2026-03-10T08:59:59Z"), &a);
    assert_true(a.occasion == tu_at("2026-03-03T09:00:00Z"));
    decide_aging(since, warn, tu_at("2026-03-24T10:00:00Z"), &a);
    assert_true(a.occasion == tu_at("2026-03-24T09:00:00Z"));
    assert_true(a.next == tu_at("2026-03-31T09:00:00Z"));
    /* no known start, or no warning: never */
    decide_aging(SCHED_NEG_INF, warn, tu_at("2027-01-01T00:00:00Z"), &a);
    assert_false(a.aging);
    assert_true(a.next == SCHED_POS_INF);
    decide_aging(since, -1, tu_at("2027-01-01T00:00:00Z"), &a);
    assert_false(a.aging);
    assert_true(a.next == SCHED_POS_INF);
    /* the guard rails' value: 0 the default, negative off */
    assert_true(decide_aging_warning(0) == GUARD_HOLD_AGE);
    assert_true(decide_aging_warning(-1) < 0);
    assert_true(decide_aging_warning(7200) == 7200);
}

static decide_plan_t plan_of(decide_kind_t kind, void *self, decide_capi_t *md)
{
    decide_plan_t p = {.present = true, .kind = kind, .self = {self, "1", "uid"}};
    p.managed = kind == DECIDE_HC ? &((decide_hc_t *)self)->m : &((decide_np_t *)self)->m;
    if (md) {
        p.capi_kind = DECIDE_MD;
        p.capi = (decide_ref_t){md, "2", "uid-md"};
    }
    return p;
}

/* The start of what a plan holds: a HostedCluster's held release, a
 * NodePool's held fields, a drift held on the MachineDeployment; nothing
 * for a record left from a request let through, or a malformed one. */
static void test_held_since(void **state)
{
    (void)state;
    json_t *j = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "requested-release-image\":\"r:2\","
                       "\"" CM "requested-by\":\"ocm\",\"" CM
                       "requested-at\":\"2026-02-01T09:00:00Z\"}},"
                       "\"spec\":{\"release\":{\"image\":\"r:1\"}}}");
    decide_hc_t *hc = decide_hc_extract(j);
    json_decref(j);
    decide_plan_t p = plan_of(DECIDE_HC, hc, NULL);
    assert_true(decide_held_since(&p) == tu_at("2026-02-01T09:00:00Z"));
    decide_hc_free(hc);

    /* let through: the record stays, nothing is held */
    j = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "requested-by\":\"ocm\",\"" CM
               "requested-at\":\"2026-02-01T09:00:00Z\"}},\"spec\":{\"release\":{\"image\":\"r:2\"}}}");
    hc = decide_hc_extract(j);
    json_decref(j);
    p = plan_of(DECIDE_HC, hc, NULL);
    assert_true(decide_held_since(&p) == SCHED_NEG_INF);
    decide_hc_free(hc);

    /* held with a malformed record: no known start */
    j = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "requested-release-image\":\"r:2\","
               "\"" CM "requested-at\":\"last Tuesday\"}}}");
    hc = decide_hc_extract(j);
    json_decref(j);
    p = plan_of(DECIDE_HC, hc, NULL);
    assert_true(decide_held_since(&p) == SCHED_NEG_INF);
    decide_hc_free(hc);

    /* a NodePool's held fields */
    j = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "requested-nodepool-spec\":"
               "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\",\"" CM
               "requested-at\":\"2026-02-02T00:00:00Z\"}},\"spec\":{\"clusterName\":\"a\"}}");
    decide_np_t *np = decide_np_extract(j);
    json_decref(j);
    p = plan_of(DECIDE_NP, np, NULL);
    assert_true(decide_held_since(&p) == tu_at("2026-02-02T00:00:00Z"));
    decide_np_free(np);

    /* a drift held on the MachineDeployment, no request */
    char *rec = decide_drift_record("2026-02-03T00:00:00Z", "RollingUpdate", "ignition", 7);
    assert_non_null(rec);
    json_t *mdj = json_pack("{s:{s:{s:s}},s:{s:{s:s}}}", "metadata", "annotations",
                            DECIDE_HELD_DRIFT_ANNOTATION, rec, "spec", "strategy", "type",
                            "OnDelete");
    free(rec);
    decide_capi_t *md = decide_capi_extract(DECIDE_MD, mdj);
    json_decref(mdj);
    assert_non_null(md);
    assert_non_null(md->drift);
    j = tu_doc("{\"spec\":{\"clusterName\":\"a\"}}");
    np = decide_np_extract(j);
    json_decref(j);
    p = plan_of(DECIDE_NP, np, md);
    assert_true(decide_held_since(&p) == tu_at("2026-02-03T00:00:00Z"));
    /* no MachineDeployment: nothing held */
    p = plan_of(DECIDE_NP, np, NULL);
    assert_true(decide_held_since(&p) == SCHED_NEG_INF);
    decide_np_free(np);
    decide_capi_free(md);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_occasions),
        cmocka_unit_test(test_held_since),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
