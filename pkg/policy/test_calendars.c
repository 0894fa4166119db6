/* Tests of a policy's exclusion calendars (pkg/policy/calendars.c):
 * validation of `spec.exclusionCalendars` naming the field, the timelines
 * composed with the calendars as read (events excluded with their SUMMARY,
 * scopes, a Permissive policy with a freeze calendar), fail safe when a
 * calendar is missing, has no such key or cannot be read (everything it
 * covers held, with the reason), a re-read that tells whether anything
 * changed, and the status: CalendarsRead and status.exclusionCalendars. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/behavior.h"
#include "policy/policy.h"
#include "policy/testutil_policy.h"
#include "schedule/testutil_sched.h"

#define NOW "2026-12-01T00:00:00Z"

#define FREEZE                                                                             \
    "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nSUMMARY:Year-end freeze\n"                       \
    "DTSTART;VALUE=DATE:20261221\nDTEND;VALUE=DATE:20270104\nEND:VEVENT\nEND:VCALENDAR\n"

static policy_t *parse(const char *spec, int want_rc, char *err)
{
    char text[4096];
    policy_t *p = NULL;
    snprintf(text, sizeof text,
             "{'apiVersion':'changemanagement.hypershift.openshift.io/v1alpha1',"
             "'kind':'HostedChangeManagementPolicy','metadata':{'name':'p','namespace':'ns',"
             "'generation':1},'spec':%s}", spec);
    json_t *doc = tu_json(text);
    assert_int_equal(policy_parse(doc, tu_ts(NOW), &p, err, POLICY_ERRLEN), want_rc);
    json_decref(doc);
    assert_non_null(p);
    return p;
}

/* The ConfigMaps the tests look calendars up in: ns/name -> data. */
static json_t *cms;

static const json_t *lookup(const char *ns, const char *name, void *ud)
{
    (void)ud;
    char key[512];
    snprintf(key, sizeof key, "%s/%s", ns, name);
    return json_object_get(cms, key);
}

static void set_cm(const char *name, const char *key, const char *text)
{
    char k[512];
    snprintf(k, sizeof k, "ns/%s", name);
    json_object_set_new(cms, k, json_pack("{s:s}", key, text));
}

static int setup(void **state)
{
    (void)state;
    cms = json_object();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(cms);
    return 0;
}

static bool read_all(policy_t *p)
{
    bool changed = false;
    assert_int_equal(policy_read_calendars(p, lookup, NULL, tu_ts(NOW), &changed), 0);
    return changed;
}

static void test_invalid_specs(void **state)
{
    (void)state;
    static const struct {
        const char *cals, *says;
    } cases[] = {
        {"{}", "spec.exclusionCalendars: must be an array"},
        {"[{}]", "spec.exclusionCalendars[0].name: required field is missing"},
        {"[{'name':'Freeze'}]", "spec.exclusionCalendars[0].name: \"Freeze\" is not a ConfigMap name"},
        {"[{'name':'f','key':'a/b'}]", "spec.exclusionCalendars[0].key: \"a/b\" is not a ConfigMap key"},
        {"[{'name':'f','scope':'Workers'}]",
         "spec.exclusionCalendars[0].scope: \"Workers\" is not one of AllChanges"},
        {"[{'name':'f','when':1}]", "spec.exclusionCalendars[0].when: unknown field"},
        {"[{'name':'f'},{'name':'f'}]", "spec.exclusionCalendars[1]: names the same calendar as"},
        {"['f']", "spec.exclusionCalendars[0]: must be an object"},
        {"[{'name':'a'},{'name':'b'},{'name':'c'},{'name':'d'},{'name':'e'},{'name':'f'},"
         "{'name':'g'},{'name':'h'},{'name':'i'},{'name':'j'},{'name':'k'}]",
         "spec.exclusionCalendars: has 11 entries; at most 10"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char spec[2048], err[POLICY_ERRLEN];
        snprintf(spec, sizeof spec, "{'strategy':'Permissive','exclusionCalendars':%s}",
                 cases[i].cals);
        policy_t *p = parse(spec, HCP_EINVAL, err);
        if (strncmp(err, cases[i].says, strlen(cases[i].says)) != 0)
            fail_msg("case %zu: %s (want %s...)", i, err, cases[i].says);
        policy_free(p);
    }
}

/* Permissive with a freeze calendar: permitted except in its events, held
 * by the event's SUMMARY; before it is read, held by "not read yet". */
static void test_permissive_with_freeze(void **state)
{
    (void)state;
    char err[POLICY_ERRLEN];
    policy_t *p = parse("{'strategy':'Permissive','exclusionCalendars':[{'name':'freeze'}]}", 0,
                        err);
    assert_int_equal(sched_permitted(p->sched, tu_ts("2026-12-10T00:00:00Z")), 0);
    assert_string_equal(sched_exclusion_at(p->sched, tu_ts("2026-12-10T00:00:00Z"), NULL),
                        "exclusion calendar freeze has not been read yet");
    set_cm("freeze", "holidays.ics", FREEZE);
    assert_true(read_all(p));
    assert_int_equal(p->calendars[0].state, POLICY_CALENDAR_READ);
    assert_int_equal(sched_permitted(p->sched, tu_ts("2026-12-10T00:00:00Z")), 1);
    assert_int_equal(sched_permitted(p->sched, tu_ts("2026-12-21T00:00:00Z")), 0);
    sched_time_t until = 0;
    assert_string_equal(sched_exclusion_at(p->sched, tu_ts("2026-12-25T12:00:00Z"), &until),
                        "Year-end freeze (calendar freeze)");
    assert_int_equal(until, tu_ts("2027-01-04T00:00:00Z"));
    sched_interval_t iv;
    assert_int_equal(sched_next(p->sched, tu_ts("2026-12-25T00:00:00Z"), &iv), 1);
    assert_int_equal(iv.start, tu_ts("2027-01-04T00:00:00Z"));
    /* Read again, the same: nothing changed. */
    assert_false(read_all(p));
    policy_free(p);
}

/* The calendar's dates are the policy's time zone, and it is ANDed with
 * the policy's own windows and exclusions. */
static void test_schedule_and_calendar(void **state)
{
    (void)state;
    char err[POLICY_ERRLEN];
    policy_t *p = parse("{'strategy':'MaintenanceSchedule','maintenanceSchedule':{"
                        "'timeZone':'Europe/Berlin','permit':{'recurrence':{'frequency':'Daily'},"
                        "'startTime':'22:00','duration':'4h'},'exclude':[{'fromDate':'2026-12-05',"
                        "'untilDate':'2026-12-06','reason':'own'}]},"
                        "'exclusionCalendars':[{'name':'freeze','key':'holidays.ics'}]}", 0, err);
    set_cm("freeze", "holidays.ics", FREEZE);
    read_all(p);
    sched_interval_t iv;
    /* 20 Dec 22:00 Berlin is the last window before the freeze: it is cut
     * at its midnight; the next one is the end of 3 Jan's, after the
     * freeze's last midnight. */
    assert_int_equal(sched_next(p->sched, tu_ts("2026-12-20T12:00:00Z"), &iv), 1);
    assert_int_equal(iv.start, tu_ts("2026-12-20T21:00:00Z"));
    assert_int_equal(iv.end, tu_ts("2026-12-20T23:00:00Z"));
    assert_int_equal(sched_next(p->sched, iv.end, &iv), 1);
    assert_int_equal(iv.start, tu_ts("2027-01-03T23:00:00Z"));
    assert_int_equal(iv.end, tu_ts("2027-01-04T01:00:00Z"));
    assert_string_equal(sched_exclusion_at(p->sched, tu_ts("2026-12-05T12:00:00Z"), NULL), "own");
    policy_free(p);
}

/* Missing, no such key, several keys, unreadable: each holds every change
 * the calendar covers, and says why. */
static void test_fail_safe(void **state)
{
    (void)state;
    static const struct {
        const char *key, *text, *says;
    } cases[] = {
        {NULL, NULL, "exclusion calendar freeze: ConfigMap ns/freeze not found"},
        {"other.ics", FREEZE, "exclusion calendar freeze: ConfigMap ns/freeze has no key cal.ics"},
        {"cal.ics", "BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:2026BAD\nEND:VEVENT\nEND:VCALENDAR\n",
         "exclusion calendar freeze could not be read: line 2: "},
        {"cal.ics", "garbage", "exclusion calendar freeze could not be read: is not iCalendar"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char err[POLICY_ERRLEN];
        json_object_clear(cms);
        policy_t *p = parse("{'strategy':'Permissive','exclusionCalendars':[{'name':'freeze',"
                            "'key':'cal.ics'}]}", 0, err);
        if (cases[i].text)
            set_cm("freeze", cases[i].key, cases[i].text);
        assert_true(read_all(p));
        assert_int_not_equal(p->calendars[0].state, POLICY_CALENDAR_READ);
        assert_int_equal(sched_permitted(p->sched, tu_ts("2026-12-10T00:00:00Z")), 0);
        assert_int_equal(sched_permitted(p->sched, tu_ts("2031-06-10T00:00:00Z")), 0);
        const char *why = sched_exclusion_at(p->sched, tu_ts("2026-12-10T00:00:00Z"), NULL);
        if (!why || strncmp(why, cases[i].says, strlen(cases[i].says)) != 0)
            fail_msg("case %zu: %s (want %s...)", i, why ? why : "(none)", cases[i].says);
        /* The ConfigMap mended: read again, it changed, and it permits. */
        set_cm("freeze", "cal.ics", FREEZE);
        assert_true(read_all(p));
        assert_int_equal(sched_permitted(p->sched, tu_ts("2026-12-10T00:00:00Z")), 1);
        policy_free(p);
    }
    /* Without `key`, a ConfigMap of several keys cannot be read. */
    char err[POLICY_ERRLEN];
    json_object_clear(cms);
    policy_t *p = parse("{'strategy':'Permissive','exclusionCalendars':[{'name':'freeze'}]}", 0,
                        err);
    json_object_set_new(cms, "ns/freeze", json_pack("{s:s,s:s}", "a", FREEZE, "b", FREEZE));
    read_all(p);
    assert_string_equal(sched_exclusion_at(p->sched, tu_ts("2026-12-10T00:00:00Z"), NULL),
                        "exclusion calendar freeze: ConfigMap ns/freeze has 2 keys in its data; "
                        "name the one with the calendar in `key`");
    policy_free(p);
}

/* A Nodes calendar holds NodePool changes only: a control-plane z-stream
 * passes, as with a scoped exclusion of the policy's own. */
static void test_scope(void **state)
{
    (void)state;
    char err[POLICY_ERRLEN];
    json_object_clear(cms);
    policy_t *p = parse("{'strategy':'Permissive','exclusionCalendars':[{'name':'freeze',"
                        "'scope':'Nodes'}]}", 0, err);
    set_cm("freeze", "f.ics", FREEZE);
    read_all(p);
    assert_true(p->scoped);
    sched_time_t t = tu_ts("2026-12-25T00:00:00Z");
    sched_t *cp = policy_schedule_for(p, POLICY_CHANGE_CP);
    sched_t *cpm = policy_schedule_for(p, POLICY_CHANGE_CP_MINOR);
    sched_t *np = policy_schedule_for(p, POLICY_CHANGE_NODES);
    assert_int_equal(sched_permitted(cp, t), 1);
    assert_int_equal(sched_permitted(cpm, t), 1);
    assert_int_equal(sched_permitted(np, t), 0);
    assert_string_equal(sched_exclusion_at(np, t, NULL),
                        "Year-end freeze (calendar freeze, scope Nodes)");
    assert_int_equal(sched_permitted(p->sched, t), 0);
    sched_unref(cp);
    sched_unref(cpm);
    sched_unref(np);
    policy_free(p);
}

/* The status: CalendarsRead, the reason of the paused state, and what was
 * read from each calendar with its problems and their lines. */
static void test_status(void **state)
{
    (void)state;
    char err[POLICY_ERRLEN];
    json_t *st = NULL;
    json_object_clear(cms);
    policy_t *p = parse("{'strategy':'Permissive','exclusionCalendars':[{'name':'freeze'},"
                        "{'name':'broken','key':'b.ics'}]}", 0, err);
    set_cm("freeze", "f.ics", FREEZE);
    set_cm("broken", "b.ics", "BEGIN:VCALENDAR\nVERSION:2.0\nBEGIN:VEVENT\nDTSTART:2026BAD\n"
                              "END:VEVENT\nBEGIN:VEVENT\nDTSTART;TZID=Nowhere:20261201T000000\n"
                              "END:VEVENT\nEND:VCALENDAR\n");
    read_all(p);
    assert_int_equal(behavior_status(p, tu_ts("2026-12-10T00:00:00Z"), NULL, &st), 0);
    char *text = json_dumps(st, JSON_SORT_KEYS | JSON_COMPACT);
    /* Held by the broken calendar, which says why. */
    assert_non_null(strstr(text, "{\"lastTransitionTime\":\"2026-12-10T00:00:00Z\",\"message\":"
                                 "\"exclusion calendar broken could not be read: line 3: "));
    assert_non_null(strstr(text, "\"reason\":\"Unreadable\",\"status\":\"False\",\"type\":"
                                 "\"CalendarsRead\"}"));
    assert_non_null(strstr(text, "\"exclusionCalendars\":[{\"cancelledEvents\":0,\"events\":1,"
                                 "\"name\":\"freeze\",\"problemCount\":0,\"problems\":[],"
                                 "\"scope\":\"AllChanges\",\"state\":\"Read\"},"));
    assert_non_null(strstr(text, "\"problemCount\":2,\"problems\":[{\"line\":3,"));
    assert_non_null(strstr(text, "{\"line\":6,\"message\":\"DTSTART's TZID \\\"Nowhere\\\""));
    assert_non_null(strstr(text, "\"reason\":\"Excluded\",\"status\":\"True\",\"type\":"
                                 "\"ChangesRestricted\"}"));
    free(text);
    json_decref(st);
    /* Mended: CalendarsRead True, permitted outside the freeze. */
    set_cm("broken", "b.ics", "BEGIN:VCALENDAR\nEND:VCALENDAR\n");
    assert_true(read_all(p));
    assert_int_equal(behavior_status(p, tu_ts("2026-12-10T00:00:00Z"), NULL, &st), 0);
    text = json_dumps(st, JSON_SORT_KEYS | JSON_COMPACT);
    assert_non_null(strstr(text, "\"message\":\"2 exclusion calendars read: 1 events\",\"observed"
                                 "Generation\":1,\"reason\":\"Read\",\"status\":\"True\""));
    assert_non_null(strstr(text, "\"reason\":\"StrategyPermissive\""));
    free(text);
    json_decref(st);
    policy_free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalid_specs),
        cmocka_unit_test(test_permissive_with_freeze),
        cmocka_unit_test(test_schedule_and_calendar),
        cmocka_unit_test(test_fail_safe),
        cmocka_unit_test(test_scope),
        cmocka_unit_test(test_status),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
