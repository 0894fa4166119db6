/* test_audit.c: the records of who made an override or a held request. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/audit.h"
#include "decide/testutil_decide.h"

#define CM "changemanagement.hypershift.openshift.io/"

/* The marks of a write w from annotations `was` to `now` (JSON members). */
static size_t marks_of(const char *was, const char *now, const char *user,
                       const decide_audit_write_t *w, decide_audit_mark_t *m)
{
    char a[2048], b[2048];
    snprintf(a, sizeof(a), "{\"metadata\":{\"annotations\":{%s}}}", was);
    snprintf(b, sizeof(b), "{\"metadata\":{\"annotations\":{%s}}}", now);
    json_t *o = tu_doc(a), *n = tu_doc(b);
    size_t k = decide_audit_marks(o, n, user, w, tu_at("2026-03-06T10:00:00Z"), m);
    json_decref(o);
    json_decref(n);
    return k;
}

/* The marks of a write from `was` to `now` that holds its request (held)
 * or not, and withdraws nothing. */
static size_t marks(const char *was, const char *now, const char *user, bool held,
                    decide_audit_mark_t *m)
{
    decide_audit_write_t w = {.held = held, .left = held};
    return marks_of(was, now, user, &w, m);
}

static const decide_audit_mark_t *find(const decide_audit_mark_t *m, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(m[i].key, key) == 0)
            return &m[i];
    return NULL;
}

#define POLICY "\"" CM "policy\":\"weekly\""
#define PU(t)                                                                                  \
    "\"" CM "strategy\":\"PermissiveUntil\",\"" CM "permissive-until\":\"" t "\""

/* A PermissiveUntil written over a policy: who and when, and the reason
 * the same write gives. */
static void test_audit_override_recorded(void **state)
{
    (void)state;
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    size_t n = marks(POLICY, POLICY "," PU("2026-03-07T00:00:00Z") ",\"" CM
                                    "reason\":\"INC-42 hotfix\"",
                     "alice@example.com", false, m);
    assert_int_equal(n, 3);
    assert_string_equal(find(m, n, DECIDE_OVERRIDE_BY_ANNOTATION)->value, "alice@example.com");
    assert_string_equal(find(m, n, DECIDE_OVERRIDE_AT_ANNOTATION)->value, "2026-03-06T10:00:00Z");
    assert_string_equal(find(m, n, DECIDE_OVERRIDE_REASON_ANNOTATION)->value, "INC-42 hotfix");
    assert_null(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION));
    /* A later override to another time, reason untouched: no reason of its own. */
    n = marks(POLICY "," PU("2026-03-07T00:00:00Z") ",\"" CM "reason\":\"INC-42 hotfix\",\"" CM
                     "override-reason\":\"INC-42 hotfix\"",
              POLICY "," PU("2026-03-08T00:00:00Z") ",\"" CM "reason\":\"INC-42 hotfix\",\"" CM
                     "override-reason\":\"INC-42 hotfix\"",
              "bob", false, m);
    assert_int_equal(n, 3);
    assert_string_equal(find(m, n, DECIDE_OVERRIDE_BY_ANNOTATION)->value, "bob");
    assert_true(find(m, n, DECIDE_OVERRIDE_REASON_ANNOTATION)->remove);
    /* Back to the policy (Restrictive, anything that changes the strategy) counts too. */
    n = marks(POLICY "," PU("2026-03-07T00:00:00Z"), POLICY, "carol", false, m);
    assert_int_equal(n, 2);
    assert_string_equal(find(m, n, DECIDE_OVERRIDE_BY_ANNOTATION)->value, "carol");
}

/* Writes that make no override and hold nothing (HyperShift's) get no
 * marks; an unknown user reads "unknown"; control bytes are not kept. */
static void test_audit_nothing_to_record(void **state)
{
    (void)state;
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    assert_int_equal(marks(POLICY, POLICY ",\"x\":\"y\"", "system:serviceaccount:hypershift:operator",
                           false, m),
                     0);
    size_t n = marks(POLICY, POLICY, "", true, m);
    assert_int_equal(n, 2);
    assert_string_equal(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->value, "unknown");
    n = marks(POLICY, POLICY, "eve\x01", true, m);
    assert_string_equal(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->value, "eve?");
}

/* A held request: who and when, with the reason of the same write. */
static void test_audit_held_request(void **state)
{
    (void)state;
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    size_t n = marks(POLICY, POLICY ",\"" CM "reason\":\"CVE-2026-1\"", "ocm", true, m);
    assert_int_equal(n, 3);
    assert_string_equal(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->value, "ocm");
    assert_string_equal(find(m, n, DECIDE_REQUESTED_AT_ANNOTATION)->value, "2026-03-06T10:00:00Z");
    assert_string_equal(find(m, n, DECIDE_REQUESTED_REASON_ANNOTATION)->value, "CVE-2026-1");
}

/* A record edited without the change it records is put back. */
static void test_audit_not_forged(void **state)
{
    (void)state;
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    size_t n = marks(POLICY ",\"" CM "override-by\":\"alice\"",
                     POLICY ",\"" CM "override-by\":\"mallory\",\"" CM "requested-by\":\"x\"",
                     "mallory", false, m);
    assert_int_equal(n, 2);
    const decide_audit_mark_t *o = find(m, n, DECIDE_OVERRIDE_BY_ANNOTATION);
    assert_false(o->remove);
    assert_string_equal(o->value, "alice");
    assert_true(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->remove);
    /* Nor a withdrawal: a write that withdraws nothing gets it back. */
    n = marks(POLICY ",\"" CM "withdrawn-by\":\"alice\"",
              POLICY ",\"" CM "withdrawn-by\":\"mallory\",\"" CM "withdrawn\":\"all\"", "mallory",
              false, m);
    assert_int_equal(n, 2);
    assert_string_equal(find(m, n, DECIDE_WITHDRAWN_BY_ANNOTATION)->value, "alice");
    assert_true(find(m, n, DECIDE_WITHDRAWN_ANNOTATION)->remove);
}

/* What the controller reads back and the companion shows. */
static void test_audit_doc(void **state)
{
    (void)state;
    decide_audit_t a;
    json_t *o = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "override-by\":\"alice\",\"" CM
                  "override-at\":\"2026-03-06T10:00:00Z\",\"" CM "override-reason\":\"r\",\"" CM
                  "requested-by\":\"ocm\",\"" CM "requested-at\":\"2026-03-06T11:00:00Z\"}}}");
    assert_int_equal(decide_audit_extract(o, &a), 0);
    json_decref(o);
    json_t *d = decide_audit_doc(&a, true);
    char *s = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"heldRequest\":{\"at\":\"2026-03-06T11:00:00Z\",\"by\":\"ocm\"},"
                           "\"override\":{\"at\":\"2026-03-06T10:00:00Z\",\"by\":\"alice\","
                           "\"reason\":\"r\"}}");
    free(s);
    json_decref(d);
    d = decide_audit_doc(&a, false); /* nothing held: no heldRequest */
    assert_null(json_object_get(d, "heldRequest"));
    assert_non_null(json_object_get(d, "override"));
    json_decref(d);
    decide_audit_free(&a);
    o = tu_doc("{}");
    assert_int_equal(decide_audit_extract(o, &a), 0);
    assert_null(decide_audit_doc(&a, true));
    json_decref(o);

    /* What the override let a change past: shown with the override it
     * names, not with a later one. */
    char rec[256];
    decide_audit_skipped("2026-03-06T10:00:00Z", "release waves: wave early waits", rec,
                         sizeof(rec));
    assert_string_equal(rec, "2026-03-06T10:00:00Z release waves: wave early waits");
    for (int later = 0; later < 2; later++) {
        char text[1024];
        snprintf(text, sizeof(text),
                 "{\"metadata\":{\"annotations\":{\"" CM "override-by\":\"alice\",\"" CM
                 "override-at\":\"%s\",\"" CM "override-skipped\":\"%s\"}}}",
                 later ? "2026-03-07T10:00:00Z" : "2026-03-06T10:00:00Z", rec);
        o = tu_doc(text);
        assert_int_equal(decide_audit_extract(o, &a), 0);
        json_decref(o);
        d = decide_audit_doc(&a, false);
        const char *sk = json_string_value(hcp_json_path(d, "override.skipped"));
        if (later)
            assert_null(sk);
        else
            assert_string_equal(sk, "release waves: wave early waits");
        json_decref(d);
        decide_audit_free(&a);
    }
}

/* A record is told once: the first a process sees when made since it
 * started or in the last 10 minutes, never again, any later one. */
static void test_audit_fresh(void **state)
{
    (void)state;
    const char *at = "2026-03-03T12:41:00Z";
    sched_time_t made = tu_at(at);
    /* Seen 44 minutes late by a process started before it was made. */
    assert_true(decide_audit_fresh(0, 7, at, made + 44 * 60, made - 3600));
    /* A process started after it was made: only within 10 minutes. */
    assert_true(decide_audit_fresh(0, 7, at, made + 600, made + 60));
    assert_false(decide_audit_fresh(0, 7, at, made + 601, made + 60));
    /* Already told; nothing recorded; a malformed instant. */
    assert_false(decide_audit_fresh(7, 7, at, made, made - 1));
    assert_false(decide_audit_fresh(0, 0, at, made, made - 1));
    assert_false(decide_audit_fresh(0, 7, "Tuesday", made, made - 1));
    assert_false(decide_audit_fresh(0, 7, NULL, made, made - 1));
    /* A new record after one seen: told whenever it was made. */
    assert_true(decide_audit_fresh(7, 8, at, made + 86400, made + 3600));
}

#define ASKED "\"" CM "requested-by\":\"ocm\",\"" CM "requested-at\":\"2026-03-04T09:00:00Z\""

/* A withdrawal: who, when and what; the record of who asked goes when no
 * request is left, and stays when one is (or when the same write asks for
 * another change). */
static void test_audit_withdrawal(void **state)
{
    (void)state;
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    decide_audit_write_t w = {.withdrawn = "release 4.17.1"};
    size_t n = marks_of(POLICY "," ASKED, POLICY "," ASKED, "flux", &w, m);
    assert_int_equal(n, 5);
    assert_string_equal(find(m, n, DECIDE_WITHDRAWN_BY_ANNOTATION)->value, "flux");
    assert_string_equal(find(m, n, DECIDE_WITHDRAWN_AT_ANNOTATION)->value, "2026-03-06T10:00:00Z");
    assert_string_equal(find(m, n, DECIDE_WITHDRAWN_ANNOTATION)->value, "release 4.17.1");
    assert_true(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->remove);
    assert_true(find(m, n, DECIDE_REQUESTED_AT_ANNOTATION)->remove);
    assert_null(find(m, n, DECIDE_REQUESTED_REASON_ANNOTATION)); /* not there: no remove */
    w.left = true;
    n = marks_of(POLICY "," ASKED, POLICY "," ASKED, "flux", &w, m);
    assert_int_equal(n, 3);
    assert_null(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION));
    w = (decide_audit_write_t){.held = true, .withdrawn = "release 4.17.1", .left = true};
    n = marks_of(POLICY "," ASKED, POLICY "," ASKED, "flux", &w, m);
    assert_int_equal(n, 5);
    assert_string_equal(find(m, n, DECIDE_REQUESTED_BY_ANNOTATION)->value, "flux");
    assert_string_equal(find(m, n, DECIDE_WITHDRAWN_ANNOTATION)->value, "release 4.17.1");
}

/* The companion shows the last withdrawal, held or not. */
static void test_audit_withdrawal_doc(void **state)
{
    (void)state;
    decide_audit_t a;
    json_t *o = tu_doc("{\"metadata\":{\"annotations\":{\"" CM "withdrawn-by\":\"flux\",\"" CM
                       "withdrawn-at\":\"2026-03-05T08:00:00Z\",\"" CM
                       "withdrawn\":\"release 4.17.1\"}}}");
    assert_int_equal(decide_audit_extract(o, &a), 0);
    json_decref(o);
    assert_string_equal(a.withdrawn, "release 4.17.1");
    json_t *d = decide_audit_doc(&a, false);
    char *s = json_dumps(d, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"withdrawn\":{\"at\":\"2026-03-05T08:00:00Z\",\"by\":\"flux\","
                           "\"what\":\"release 4.17.1\"}}");
    free(s);
    json_decref(d);
    decide_audit_free(&a);
}

/* How long a withdrawal is news: until the end of the window the request
 * waited for (the next, or the one it was withdrawn in), at most 7 days,
 * and not once a newer request is recorded. */
static void test_audit_withdrawn_news(void **state)
{
    (void)state;
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 60, 4 * 3600, NULL, 0}; /* 01:00-05:00 */
    sched_t *weekend;
    char err[128];
    sched_time_t until;
    assert_int_equal(sched_compile(&sp, tu_at("2026-03-01T00:00:00Z"), &weekend, err,
                                   sizeof(err)),
                     0);
    decide_audit_t a = {.withdrawn_by = "flux", .withdrawn_at = "2026-03-04T09:00:00Z",
                        .withdrawn = "release 4.17.1"};
    assert_true(decide_withdrawn_news(&a, weekend, tu_at("2026-03-04T09:00:00Z"), &until));
    assert_true(until == tu_at("2026-03-07T05:00:00Z"));
    assert_true(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T04:59:59Z"), &until));
    assert_false(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T05:00:00Z"), &until));
    assert_false(decide_withdrawn_news(&a, weekend, tu_at("2026-03-04T08:59:59Z"), &until));
    /* Withdrawn inside a window: news until its end. */
    a.withdrawn_at = "2026-03-07T02:00:00Z";
    assert_true(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T02:00:01Z"), &until));
    assert_true(until == tu_at("2026-03-07T05:00:00Z"));
    /* No window ahead (Restrictive): 7 days at most. */
    assert_true(decide_withdrawn_news(&a, sched_never(), tu_at("2026-03-10T00:00:00Z"), &until));
    assert_true(until == tu_at("2026-03-14T02:00:00Z"));
    /* A newer request replaced it; no record; a malformed time. */
    a.requested_at = "2026-03-07T02:30:00Z";
    assert_false(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T03:00:00Z"), &until));
    a.requested_at = "2026-03-07T01:30:00Z"; /* the request it withdrew */
    assert_true(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T03:00:00Z"), &until));
    a.withdrawn_at = "Tuesday";
    assert_false(decide_withdrawn_news(&a, weekend, tu_at("2026-03-07T03:00:00Z"), &until));
    decide_audit_t none = {0};
    assert_false(decide_withdrawn_news(&none, weekend, tu_at("2026-03-07T03:00:00Z"), &until));
    sched_unref(weekend);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_audit_override_recorded),
        cmocka_unit_test(test_audit_nothing_to_record),
        cmocka_unit_test(test_audit_held_request),
        cmocka_unit_test(test_audit_not_forged),
        cmocka_unit_test(test_audit_doc),
        cmocka_unit_test(test_audit_withdrawal),
        cmocka_unit_test(test_audit_withdrawal_doc),
        cmocka_unit_test(test_audit_withdrawn_news),
        cmocka_unit_test(test_audit_fresh),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
