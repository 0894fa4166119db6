/* Tests of pkg/policy/ics: events of windows and exclusions, TEXT escaping,
 * folding at 75 octets without splitting UTF-8, the clipping of unbounded
 * intervals, and the range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/ics.h"
#include "policy/testutil_policy.h"
#include "policy/policy.h"
#include "schedule/testutil_sched.h"

static policy_t *pol(const char *ms)
{
    char text[2048], err[POLICY_ERRLEN];
    json_error_t je;
    policy_t *p = NULL;
    json_t *doc;

    snprintf(text, sizeof text,
             "{\"apiVersion\":\"changemanagement.hypershift.openshift.io/v1alpha1\","
             "\"kind\":\"HostedChangeManagementPolicy\",\"metadata\":{\"name\":\"p\","
             "\"namespace\":\"ns\"},\"spec\":{\"strategy\":\"MaintenanceSchedule\","
             "\"maintenanceSchedule\":%s}}",
             ms);
    doc = json_loads(text, 0, &je);
    assert_non_null(doc);
    if (policy_parse(doc, tu_ts("2026-11-23T00:00:00Z"), &p, err, sizeof err) != 0)
        fail_msg("policy: %s", err);
    json_decref(doc);
    return p;
}

static char *render(const policy_t *p, sched_t *s, const char *from, const char *until, long n)
{
    const policy_t *ps[1] = {p};
    ics_timeline_t t = {.uid = "x.ns.p", .summary = "ns/p", .sched = s, .policies = ps,
                        .n_policies = p ? 1 : 0, .from = tu_ts(from), .until = tu_ts(until),
                        .max_windows = n};
    ics_t c = {0};

    ics_begin(&c, "cal");
    assert_int_equal(ics_timeline(&c, &t, tu_ts(from)), 0);
    assert_int_equal(ics_end(&c), 0);
    return c.buf;
}

static void test_windows_and_range(void **state)
{
    (void)state;
    policy_t *p = pol("{\"permit\":{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"duration\":\"4h\"}}");
    char *text = render(p, p->sched, "2026-11-23T00:00:00Z", "2026-12-13T00:00:00Z", 100);
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 3); /* Nov 28, Dec 5, Dec 12 */
    assert_non_null(strstr(text, "BEGIN:VEVENT\r\nUID:window-20261128T000000Z-x.ns.p@hcp-"
                                 "controller\r\nDTSTAMP:20261123T000000Z\r\nDTSTART:20261128T"
                                 "000000Z\r\nDTEND:20261128T040000Z\r\nSUMMARY:ns/p: changes "
                                 "permitted\r\n"));
    assert_true(strncmp(text, "BEGIN:VCALENDAR\r\nVERSION:2.0\r\n", 30) == 0);
    assert_non_null(strstr(text, "END:VCALENDAR\r\n"));
    free(text);
    text = render(p, p->sched, "2026-11-23T00:00:00Z", "2027-12-13T00:00:00Z", 2);
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 2); /* at most max_windows */
    free(text);
    policy_free(p);
}

/* Always permitted: one event clipped to the UTC days of the range. */
static void test_unbounded(void **state)
{
    (void)state;
    sched_t *always = sched_always();
    char *text = render(NULL, always, "2026-11-23T09:30:00Z", "2026-12-01T12:00:00Z", 100);
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 1);
    assert_non_null(strstr(text, "DTSTART:20261123T000000Z\r\nDTEND:20261201T000000Z\r\n"));
    assert_non_null(strstr(text, "DESCRIPTION:Material changes may start in this window (it"));
    free(text);
    sched_unref(always);
}

/* An exclusion is its own event, with its reason escaped and its lines
 * folded at 75 octets without splitting a UTF-8 sequence. */
static void test_exclusion_escaped_folded(void **state)
{
    (void)state;
    policy_t *p = pol("{\"timeZone\":\"Europe/Berlin\",\"permit\":{\"rrule\":\"FREQ=DAILY\"},"
                      "\"exclude\":[{\"fromDate\":\"2026-12-24\",\"untilDate\":\"2026-12-27\","
                      "\"reason\":\"a;b,c\\\\d\\ne \u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
                      "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
                      "\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"
                      "\u00e9\u00e9\"},{\"fromDate\":\"2027-06-01\"}]}");
    char *text = render(p, p->sched, "2026-12-20T00:00:00Z", "2027-01-01T00:00:00Z", 0);
    const char *l, *nl;
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 1); /* the June one is out of range */
    assert_non_null(strstr(text, "UID:exclusion-20261223T230000Z-x.ns.p@hcp-controller\r\n"));
    assert_non_null(strstr(text, "DTSTART:20261223T230000Z\r\nDTEND:20261226T230000Z\r\n"));
    assert_non_null(strstr(text, "SUMMARY:ns/p: changes excluded: a\\;b\\,c\\\\d\\ne "));
    for (l = text; (nl = strstr(l, "\r\n")) != NULL; l = nl + 2) {
        assert_true(nl - l <= 75);
        if (*l == ' ') /* a continuation never starts inside a UTF-8 sequence */
            assert_true(((unsigned char)l[1] & 0xC0) != 0x80);
    }
    assert_non_null(strstr(text, "\r\n "));
    free(text);
    policy_free(p);
}


/* With a minimum time left a window's event keeps its times and says until
 * when a change may start in it, or that it is too short for any. */
static void test_min_time_left(void **state)
{
    (void)state;
    policy_t *p = pol("{\"permit\":{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"duration\":\"4h\"}}");
    const policy_t *ps[1] = {p};
    ics_timeline_t t = {.uid = "x.ns.p", .summary = "ns/p", .sched = p->sched, .policies = ps,
                        .n_policies = 1, .from = tu_ts("2026-11-23T00:00:00Z"),
                        .until = tu_ts("2026-11-30T00:00:00Z"), .max_windows = 10,
                        .min_left = 2 * 3600};
    ics_t c = {0};
    ics_begin(&c, "cal");
    assert_int_equal(ics_timeline(&c, &t, t.from), 0);
    assert_int_equal(ics_end(&c), 0);
    assert_non_null(strstr(c.buf, "DTSTART:20261128T000000Z\r\nDTEND:20261128T040000Z\r\n"));
    assert_non_null(strstr(tu_ics_unfold(c.buf), "DESCRIPTION:Material changes may start in this "
                                          "window until 2026-11-28T02:00:00Z (minimum time "
                                          "left 2h: none starts in its last 2h)."));
    ics_free(&c);
    t.min_left = 5 * 3600;
    ics_begin(&c, "cal");
    assert_int_equal(ics_timeline(&c, &t, t.from), 0);
    assert_int_equal(ics_end(&c), 0);
    assert_non_null(strstr(tu_ics_unfold(c.buf), "DESCRIPTION:No material change starts in this "
                                          "window: it is shorter than the minimum time left "
                                          "(5h)."));
    ics_free(&c);
    policy_free(p);
}

/* A change held past the windows (the release waves' soak): the windows
 * before its earliest start say it does not start in them, the one it
 * falls in from when, the later ones nothing; with no instant known, every
 * window says so. */
static void test_held_from(void **state)
{
    (void)state;
    policy_t *p = pol("{\"permit\":{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"duration\":\"4h\"}}");
    const policy_t *ps[1] = {p};
    ics_timeline_t t = {.uid = "x.ns.p", .summary = "ns/p", .sched = p->sched, .policies = ps,
                        .n_policies = 1, .from = tu_ts("2026-11-23T00:00:00Z"),
                        .until = tu_ts("2026-12-14T00:00:00Z"), .max_windows = 10,
                        .held_from = tu_ts("2026-12-05T02:00:00Z"),
                        .held_why = "release 4.17.1 (wave early waits for wave canary)"};
    ics_t c = {0};
    ics_begin(&c, "cal");
    assert_int_equal(ics_timeline(&c, &t, t.from), 0);
    assert_int_equal(ics_end(&c), 0);
    char *text = tu_ics_unfold(c.buf);
    const char *w1 = strstr(text, "DTSTART:20261128T000000Z");
    const char *w2 = strstr(text, "DTSTART:20261205T000000Z");
    const char *w3 = strstr(text, "DTSTART:20261212T000000Z");
    assert_non_null(w1);
    assert_non_null(w2);
    assert_non_null(w3);
    const char *no = strstr(text, "Not in this window: release 4.17.1 (wave early waits for "
                                  "wave canary)\\, held until 2026-12-05T02:00:00Z.");
    const char *from = strstr(text, "Held: release 4.17.1 (wave early waits for wave canary)\\; it "
                                    "may start in this window from 2026-12-05T02:00:00Z.");
    assert_true(no && no > w1 && no < w2);
    assert_true(from && from > w2 && from < w3);
    assert_null(strstr(w3, "release 4.17.1"));
    assert_null(strstr(from + 1, "Not in this window"));
    ics_free(&c);
    t.held_from = SCHED_POS_INF;
    ics_begin(&c, "cal");
    assert_int_equal(ics_timeline(&c, &t, t.from), 0);
    assert_int_equal(ics_end(&c), 0);
    text = tu_ics_unfold(c.buf);
    int n = 0;
    for (const char *s = text; (s = strstr(s, "held with no start known yet.")) != NULL; s++)
        n++;
    assert_int_equal(n, 3);
    ics_free(&c);
    policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_windows_and_range),
        cmocka_unit_test(test_min_time_left),
        cmocka_unit_test(test_held_from),
        cmocka_unit_test(test_unbounded),
        cmocka_unit_test(test_exclusion_escaped_folded),
    };
    return cmocka_run_group_tests_name("ics", tests, NULL, NULL);
}
