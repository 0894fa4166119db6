/* test_cv.c: the hosted ClusterVersion's conditions in sentences, for the
 * control plane and each NodePool (hosted_cv_conditions()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "hosted/cv.h"

static decide_decision_t control_plane(bool paused, bool pending)
{
    decide_decision_t d;
    memset(&d, 0, sizeof(d));
    d.paused_status = paused;
    d.paused_reason = paused ? "OutsideMaintenanceWindow" : "ChangesPermitted";
    snprintf(d.paused_message, sizeof(d.paused_message), "%s",
             paused ? "Changes are paused until 2026-03-07T00:00:00Z (following policy \"weekly\")."
                    : "Changes are permitted.");
    d.pending_status = pending;
    d.pending_reason = pending ? "ChangesBlocked" : "NoChangesPending";
    snprintf(d.pending_message, sizeof(d.pending_message), "%s",
             pending ? "Pending changes wait for the next permitted window at "
                       "2026-03-07T00:00:00Z."
                     : "No changes are pending.");
    return d;
}

static decide_seen_cond_t seen(bool status, const char *reason, const char *message)
{
    return (decide_seen_cond_t){true, status, (char *)reason, (char *)message};
}

static void test_control_plane_and_pools(void **state)
{
    (void)state;
    decide_decision_t d = control_plane(true, false);
    decide_seen_cond_t wp = seen(true, "Excluded",
                                 "Changes are paused until 2027-01-04T00:00:00Z (inside the "
                                 "exclusion \"year-end freeze\", which ends at "
                                 "2027-01-02T00:00:00Z).");
    decide_seen_cond_t wq = seen(true, "ChangesBlocked",
                                 "Pending changes wait for the next permitted window at "
                                 "2027-01-04T00:00:00Z.");
    decide_seen_cond_t none = {0};
    hosted_cv_pool_t pools[] = {{"workers", &wp, &wq}, {"infra", &none, &none}};
    hosted_cv_t cv;
    hosted_cv_conditions(&d, pools, 2, &cv);
    assert_true(cv.paused_status);
    assert_string_equal(cv.paused_reason, "OutsideMaintenanceWindow");
    /* sorted by name; sentences start in lower case after the colon */
    assert_string_equal(cv.paused_message,
                        "Control plane: changes are paused until 2026-03-07T00:00:00Z "
                        "(following policy \"weekly\"). NodePool infra: not decided yet. "
                        "NodePool workers: changes are paused until 2027-01-04T00:00:00Z "
                        "(inside the exclusion \"year-end freeze\", which ends at "
                        "2027-01-02T00:00:00Z).");
    /* the control plane has nothing pending, a pool has: pending, its reason */
    assert_true(cv.pending_status);
    assert_string_equal(cv.pending_reason, "ChangesBlocked");
    assert_string_equal(cv.pending_message,
                        "Control plane: no changes are pending. NodePool infra: not decided "
                        "yet. NodePool workers: pending changes wait for the next permitted "
                        "window at 2027-01-04T00:00:00Z.");
}

static void test_control_plane_alone(void **state)
{
    (void)state;
    decide_decision_t d = control_plane(false, true);
    hosted_cv_t cv;
    hosted_cv_conditions(&d, NULL, 0, &cv);
    assert_false(cv.paused_status);
    assert_string_equal(cv.paused_message, "Control plane: changes are permitted.");
    assert_true(cv.pending_status);
    assert_string_equal(cv.pending_reason, "ChangesBlocked");
}

/* Hundreds of NodePools: the message stays within its buffer and says how
 * many it leaves out, instead of cutting a sentence. */
static void test_many_pools(void **state)
{
    (void)state;
    enum { N = 200 };
    static char names[N][16];
    static hosted_cv_pool_t pools[N];
    decide_seen_cond_t p = seen(false, "ChangesPermitted", "Changes are permitted.");
    decide_decision_t d = control_plane(false, false);
    hosted_cv_t cv;
    for (int i = 0; i < N; i++) {
        snprintf(names[i], sizeof(names[i]), "pool-%03d", i);
        pools[i] = (hosted_cv_pool_t){names[i], &p, &p};
    }
    hosted_cv_conditions(&d, pools, N, &cv);
    size_t len = strlen(cv.paused_message);
    assert_true(len < HOSTED_CV_MSGLEN);
    assert_non_null(strstr(cv.paused_message, "NodePool pool-000: changes are permitted."));
    assert_non_null(strstr(cv.paused_message, "more NodePools are not listed."));
    assert_false(cv.pending_status);
}

/* DESIGN.md 3.13: a request withdrawn is news in the plan's ChangesPending
 * (decide_withdrawn_news()); the hosted ClusterVersion quotes it, the
 * control plane's and a pool's alike, and says nothing is pending. */
static void test_withdrawn_news(void **state)
{
    (void)state;
    decide_decision_t d = control_plane(true, false);
    snprintf(d.pending_message, sizeof(d.pending_message),
             "No changes are pending: the request for release 4.17.1 was withdrawn by "
             "system:serviceaccount:flux-system:kustomize-controller at 2026-03-04T09:00:00Z.");
    decide_seen_cond_t paused = seen(true, "OutsideMaintenanceWindow", "Changes are paused.");
    decide_seen_cond_t wq = seen(false, "NoChangesPending",
                                 "No changes are pending: the request for spec.config was "
                                 "withdrawn by alice at 2026-03-05T10:00:00Z.");
    hosted_cv_pool_t pools[] = {{"workers", &paused, &wq}};
    hosted_cv_t cv;
    hosted_cv_conditions(&d, pools, 1, &cv);
    assert_false(cv.pending_status);
    assert_string_equal(cv.pending_message,
                        "Control plane: no changes are pending: the request for release 4.17.1 "
                        "was withdrawn by system:serviceaccount:flux-system:kustomize-controller "
                        "at 2026-03-04T09:00:00Z. NodePool workers: no changes are pending: the "
                        "request for spec.config was withdrawn by alice at 2026-03-05T10:00:00Z.");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_control_plane_and_pools),
        cmocka_unit_test(test_control_plane_alone),
        cmocka_unit_test(test_many_pools),
        cmocka_unit_test(test_withdrawn_news),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
