/* test_after.c: the health after a change (after.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "decide/after.h"
#include "decide/testutil_decide.h"

#define DONE "2026-03-07T01:00:00Z" /* the change's completion */

/* A HostedCluster whose update to 4.17.2 completed at DONE, with
 * status.conditions conds (JSON text). */
static void hc(const char *conds, decide_health_t *h)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"status\":{\"conditions\":%s,\"version\":{\"history\":[{\"state\":\"Completed\","
             "\"version\":\"4.17.2\",\"completionTime\":\"" DONE "\"},{\"state\":\"Completed\","
             "\"version\":\"4.17.1\",\"completionTime\":\"2026-02-07T01:00:00Z\"}]}}}",
             conds);
    json_t *obj = tu_doc(text);
    decide_health_extract(obj, false, h);
    json_decref(obj);
}

#define DEGRADED(since)                                                                          \
    "[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"AsExpected\","                    \
    "\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"},{\"type\":\"Degraded\",\"status\":\"True\"," \
    "\"reason\":\"UnavailableReplicas\",\"lastTransitionTime\":\"" since "\"}]"
#define HEALTHY                                                                                  \
    "[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"AsExpected\"},"                   \
    "{\"type\":\"Degraded\",\"status\":\"False\",\"reason\":\"AsExpected\"}]"

static decide_after_t at(const decide_health_t *h, bool nodepool, const char *now)
{
    decide_after_t a;
    decide_after_change(h, nodepool, 0, 0, tu_at(now), &a);
    return a;
}

/* The extract reads what the verdict needs: the completed version and
 * since when the failing condition fails. */
static void test_after_extract(void **state)
{
    (void)state;
    decide_health_t h;
    hc(DEGRADED("2026-03-07T01:05:00Z"), &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_COMPLETED);
    assert_true(h.outcome_at == tu_at(DONE));
    assert_string_equal(h.outcome_version, "4.17.2");
    assert_true(h.unhealthy_since == tu_at("2026-03-07T01:05:00Z"));
    assert_string_equal(h.reason, "UnavailableReplicas");
    hc(HEALTHY, &h);
    assert_true(h.unhealthy_since == SCHED_NEG_INF);
    char words[64];
    decide_after_change_words(&h, words, sizeof(words));
    assert_string_equal(words, "release 4.17.2");
    h.outcome_version[0] = '\0';
    decide_after_change_words(&h, words, sizeof(words));
    assert_string_equal(words, "the last change");
}

/* Degraded five minutes after the completion: told at the grace time's
 * end (10 minutes later), not before, and only while it lasts. */
static void test_after_degraded_within_settle(void **state)
{
    (void)state;
    decide_health_t h;
    hc(DEGRADED("2026-03-07T01:05:00Z"), &h);
    decide_after_t a = at(&h, false, "2026-03-07T01:14:59Z");
    assert_int_equal(a.state, DECIDE_AFTER_SETTLING);
    assert_true(a.wake == tu_at("2026-03-07T01:15:00Z"));
    a = at(&h, false, "2026-03-07T01:15:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    assert_true(a.completed == tu_at(DONE));
    assert_true(a.since == tu_at("2026-03-07T01:05:00Z"));
    assert_true(a.at == tu_at("2026-03-07T01:15:00Z"));
    assert_string_equal(a.why, "Degraded is True (reason UnavailableReplicas)");
    /* still so a day later: the verdict stands (the same completion) until
     * a day after the settle time's end, when the decision wakes */
    a = at(&h, false, "2026-03-08T01:29:59Z");
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    assert_true(a.at == tu_at("2026-03-07T01:15:00Z"));
    assert_true(a.wake == tu_at("2026-03-08T01:30:00Z"));
    a = at(&h, false, "2026-03-08T01:30:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_NONE); /* long past: not judged */
    a = at(&h, false, "2027-03-07T00:00:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_NONE);
    a = at(&h, false, "2026-03-07T01:15:00Z");
    /* the condition names the change, the condition and the times */
    bool st;
    const char *reason;
    char msg[512];
    decide_after_condition(&a, "release 4.17.2", 0, 0, &st, &reason, msg, sizeof(msg));
    assert_true(st);
    assert_string_equal(reason, "Unhealthy");
    assert_string_equal(msg, "HyperShift completed release 4.17.2 at 2026-03-07T01:00:00Z; since "
                             "2026-03-07T01:05:00Z Degraded is True (reason UnavailableReplicas), "
                             "longer than the grace time (settle time 30m, grace time 10m).");
    /* recovered: False, a fixed message */
    hc(HEALTHY, &h);
    a = at(&h, false, "2026-03-07T01:20:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_SETTLING);
    assert_true(a.wake == tu_at("2026-03-07T01:30:00Z"));
    decide_after_condition(&a, "release 4.17.2", 0, 0, &st, &reason, msg, sizeof(msg));
    assert_false(st);
    assert_string_equal(reason, "AsExpected");
    a = at(&h, false, "2026-03-07T01:30:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_HEALTHY);
    assert_true(a.wake == SCHED_POS_INF);
}

/* Unhealthy since before the completion counts from the completion;
 * unhealthy late in the settle time is judged at its end; trouble that
 * begins after it is not the change's. */
static void test_after_edges(void **state)
{
    (void)state;
    decide_health_t h;
    hc(DEGRADED("2026-03-06T00:00:00Z"), &h);
    decide_after_t a = at(&h, false, "2026-03-07T01:09:59Z");
    assert_int_equal(a.state, DECIDE_AFTER_SETTLING);
    a = at(&h, false, "2026-03-07T01:10:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    assert_true(a.since == tu_at(DONE));
    hc(DEGRADED("2026-03-07T01:25:00Z"), &h);
    a = at(&h, false, "2026-03-07T01:29:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_SETTLING);
    assert_true(a.wake == tu_at("2026-03-07T01:30:00Z"));
    a = at(&h, false, "2026-03-07T01:30:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    bool st;
    const char *reason;
    char msg[512];
    decide_after_condition(&a, "release 4.17.2", 0, 0, &st, &reason, msg, sizeof(msg));
    assert_non_null(strstr(msg, "at the settle time's end"));
    hc(DEGRADED("2026-03-07T01:31:00Z"), &h);
    a = at(&h, false, "2026-03-07T02:00:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_HEALTHY);
    /* the times as configured: settle 1h, grace 2m; a grace longer than
     * the settle time is the settle time */
    hc(DEGRADED("2026-03-07T01:40:00Z"), &h);
    decide_after_change(&h, false, 3600, 120, tu_at("2026-03-07T01:42:00Z"), &a);
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    decide_after_change(&h, false, 600, 3600, tu_at("2026-03-07T01:42:00Z"), &a);
    assert_int_equal(a.state, DECIDE_AFTER_HEALTHY);
    /* no completion, or a change under way: nothing to judge */
    json_t *o = tu_doc("{\"status\":{\"conditions\":" DEGRADED("2026-03-07T01:05:00Z") ","
                       "\"version\":{\"history\":[{\"state\":\"Partial\",\"version\":\"4.17.3\"}]}}}");
    decide_health_extract(o, false, &h);
    json_decref(o);
    a = at(&h, false, "2026-03-07T02:00:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_NONE);
    assert_true(a.wake == SCHED_POS_INF);
}

/* A NodePool: its version rollout done (UpdatingVersion False, AsExpected),
 * then Ready False. */
static void test_after_nodepool(void **state)
{
    (void)state;
    decide_health_t h;
    json_t *o = tu_doc(
        "{\"status\":{\"version\":\"4.17.2\",\"conditions\":["
        "{\"type\":\"UpdatingVersion\",\"status\":\"False\",\"reason\":\"AsExpected\","
        "\"lastTransitionTime\":\"" DONE "\"},"
        "{\"type\":\"Ready\",\"status\":\"False\",\"reason\":\"NodesNotReady\","
        "\"lastTransitionTime\":\"2026-03-07T01:01:00Z\"}]}}");
    decide_health_extract(o, true, &h);
    json_decref(o);
    assert_string_equal(h.outcome_version, "4.17.2");
    decide_after_t a = at(&h, true, "2026-03-07T01:11:00Z");
    assert_int_equal(a.state, DECIDE_AFTER_UNHEALTHY);
    assert_string_equal(a.why, "Ready is False (reason NodesNotReady)");
    a = at(&h, true, "2026-03-07T01:10:59Z");
    assert_int_equal(a.state, DECIDE_AFTER_SETTLING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_after_extract),
        cmocka_unit_test(test_after_degraded_within_settle),
        cmocka_unit_test(test_after_edges),
        cmocka_unit_test(test_after_nodepool),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
