/* Tests of pkg/policy/behavior: the HCMP status at pinned instants, compared
 * as whole JSON documents, and how history carries over between updates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/behavior.h"
#include "policy/policy.h"
#include "schedule/testutil_sched.h"

static json_t *q(const char *text)
{
    char *s = strdup(text);
    json_error_t je;
    json_t *doc;
    size_t i;

    assert_non_null(s);
    for (i = 0; s[i]; i++)
        if (s[i] == '\'')
            s[i] = '"';
    doc = json_loads(s, JSON_DECODE_ANY, &je);
    if (doc == NULL)
        fail_msg("bad test JSON (%s): %s", je.text, s);
    free(s);
    return doc;
}

static policy_t *policy(const char *text, int want_valid)
{
    json_t *doc = q(text);
    policy_t *p;

    assert_int_equal(policy_parse(doc, tu_ts("2026-01-01"), &p, NULL, 0) == 0, want_valid);
    assert_non_null(p);
    json_decref(doc);
    return p;
}

/* Computes the status and compares it with the expected document. */
static json_t *expect_status(const policy_t *p, const char *now, const json_t *prev,
                             const char *want)
{
    json_t *got = NULL, *exp = q(want);

    assert_int_equal(behavior_status(p, tu_ts(now), prev, &got), 0);
    assert_non_null(got);
    if (!json_equal(got, exp)) {
        char *a = json_dumps(got, JSON_SORT_KEYS | JSON_INDENT(1));
        char *b = json_dumps(exp, JSON_SORT_KEYS | JSON_INDENT(1));
        print_error("got:\n%s\nwant:\n%s\n", a, b);
        free(a);
        free(b);
        fail();
    }
    json_decref(exp);
    return got;
}

#define META "'metadata':{'name':'weekend','namespace':'clusters','generation':%d},"
#define WEEKEND_SPEC                                                                       \
    "'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{"             \
    "'rrule':'FREQ=WEEKLY;BYDAY=SA,SU'}%s}}"

static policy_t *weekend(int generation, const char *extra)
{
    char doc[1024];

    snprintf(doc, sizeof doc, "{'kind':'HostedChangeManagementPolicy'," META WEEKEND_SPEC "}",
             generation, extra);
    return policy(doc, 1);
}

#define READY_TRUE(ltt)                                                                    \
    "{'type':'Ready','status':'True','reason':'PolicyValid','message':'the policy is valid " \
    "and its schedule is computed','lastTransitionTime':'" ltt "','observedGeneration':3}"

/* A Thursday between two weekend windows. */
static void test_weekday(void **state)
{
    policy_t *p = weekend(3, "");
    json_t *st;

    (void)state;
    st = expect_status(
        p, "2026-01-01T00:00:00Z", NULL,
        "{'observedGeneration':3,'behavior':{"
        "'current':{'state':'ChangesPaused','startTime':'2025-12-29T00:00:00Z',"
        "'endTime':'2026-01-03T00:00:00Z','reason':'OutsideMaintenanceWindow'},"
        "'next':{'state':'ChangesUnpaused','startTime':'2026-01-03T00:00:00Z',"
        "'endTime':'2026-01-05T00:00:00Z','reason':'InMaintenanceWindow'},"
        "'upcoming':["
        "{'startTime':'2026-01-03T00:00:00Z','endTime':'2026-01-05T00:00:00Z'},"
        "{'startTime':'2026-01-10T00:00:00Z','endTime':'2026-01-12T00:00:00Z'},"
        "{'startTime':'2026-01-17T00:00:00Z','endTime':'2026-01-19T00:00:00Z'},"
        "{'startTime':'2026-01-24T00:00:00Z','endTime':'2026-01-26T00:00:00Z'},"
        "{'startTime':'2026-01-31T00:00:00Z','endTime':'2026-02-02T00:00:00Z'}],"
        "'history':["
        "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2025-12-29T00:00:00Z','endTime':null},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2025-12-27T00:00:00Z','endTime':'2025-12-29T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2025-12-22T00:00:00Z','endTime':'2025-12-27T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2025-12-20T00:00:00Z','endTime':'2025-12-22T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2025-12-15T00:00:00Z','endTime':'2025-12-20T00:00:00Z'}]},"
        "'conditions':[" READY_TRUE("2026-01-01T00:00:00Z") ","
        "{'type':'ChangesRestricted','status':'True','reason':'OutsideMaintenanceWindow',"
        "'message':'changes are paused (OutsideMaintenanceWindow)',"
        "'lastTransitionTime':'2026-01-01T00:00:00Z','observedGeneration':3}]}");
    json_decref(st);
    policy_free(p);
}

/* Inside a window; the upcoming list starts with the current window. */
static void test_in_window(void **state)
{
    policy_t *p = weekend(3, "");
    json_t *st, *b;

    (void)state;
    st = expect_status(
        p, "2026-01-04T10:00:00Z", NULL,
        "{'observedGeneration':3,'behavior':{"
        "'current':{'state':'ChangesUnpaused','startTime':'2026-01-03T00:00:00Z',"
        "'endTime':'2026-01-05T00:00:00Z','reason':'InMaintenanceWindow'},"
        "'next':{'state':'ChangesPaused','startTime':'2026-01-05T00:00:00Z',"
        "'endTime':'2026-01-10T00:00:00Z','reason':'OutsideMaintenanceWindow'},"
        "'upcoming':["
        "{'startTime':'2026-01-03T00:00:00Z','endTime':'2026-01-05T00:00:00Z'},"
        "{'startTime':'2026-01-10T00:00:00Z','endTime':'2026-01-12T00:00:00Z'},"
        "{'startTime':'2026-01-17T00:00:00Z','endTime':'2026-01-19T00:00:00Z'},"
        "{'startTime':'2026-01-24T00:00:00Z','endTime':'2026-01-26T00:00:00Z'},"
        "{'startTime':'2026-01-31T00:00:00Z','endTime':'2026-02-02T00:00:00Z'}],"
        "'history':["
        "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2026-01-03T00:00:00Z','endTime':null},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2025-12-29T00:00:00Z','endTime':'2026-01-03T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2025-12-27T00:00:00Z','endTime':'2025-12-29T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2025-12-22T00:00:00Z','endTime':'2025-12-27T00:00:00Z'},"
        "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2025-12-20T00:00:00Z','endTime':'2025-12-22T00:00:00Z'}]},"
        "'conditions':[" READY_TRUE("2026-01-04T10:00:00Z") ","
        "{'type':'ChangesRestricted','status':'False','reason':'InMaintenanceWindow',"
        "'message':'changes are permitted (InMaintenanceWindow)',"
        "'lastTransitionTime':'2026-01-04T10:00:00Z','observedGeneration':3}]}");
    b = json_object_get(st, "behavior");
    assert_int_equal(json_array_size(json_object_get(b, "upcoming")), BEHAVIOR_UPCOMING);
    json_decref(st);
    policy_free(p);
}

/* Inside an exclusion the reason carries the exclusion's text. */
static void test_exclusion(void **state)
{
    policy_t *p = weekend(3, ",'exclude':[{'fromDate':'2026-01-03','untilDate':'2026-01-05',"
                             "'reason':'Quarter-end freeze'}]");
    json_t *st, *cur, *cond;

    (void)state;
    assert_int_equal(behavior_status(p, tu_ts("2026-01-03T12:00Z"), NULL, &st), 0);
    cur = json_object_get(json_object_get(st, "behavior"), "current");
    assert_string_equal(json_string_value(json_object_get(cur, "state")), "ChangesPaused");
    assert_string_equal(json_string_value(json_object_get(cur, "reason")),
                        "Excluded: Quarter-end freeze");
    /* paused since the previous window closed, until the next one opens */
    assert_string_equal(json_string_value(json_object_get(cur, "startTime")),
                        "2025-12-29T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(cur, "endTime")),
                        "2026-01-10T00:00:00Z");
    cond = json_array_get(json_object_get(st, "conditions"), 1);
    assert_string_equal(json_string_value(json_object_get(cond, "reason")), "Excluded");
    assert_string_equal(json_string_value(json_object_get(cond, "message")),
                        "changes are paused (Excluded: Quarter-end freeze)");
    json_decref(st);

    /* the next period's reason is the one in force when it starts */
    assert_int_equal(behavior_status(p, tu_ts("2025-12-30"), NULL, &st), 0);
    cur = json_object_get(json_object_get(st, "behavior"), "next");
    assert_string_equal(json_string_value(json_object_get(cur, "state")), "ChangesUnpaused");
    assert_string_equal(json_string_value(json_object_get(cur, "startTime")),
                        "2026-01-10T00:00:00Z");
    json_decref(st);
    policy_free(p);
}

static void test_permissive(void **state)
{
    policy_t *p = policy("{'metadata':{'generation':1},'spec':{'strategy':'Permissive'}}", 1);
    json_t *st;

    (void)state;
    st = expect_status(
        p, "2026-01-01T00:00:00Z", NULL,
        "{'observedGeneration':1,'behavior':{"
        "'current':{'state':'ChangesUnpaused','startTime':null,'endTime':null,"
        "'reason':'StrategyPermissive'},'next':null,"
        "'upcoming':[{'startTime':null,'endTime':null}],"
        "'history':[{'strategy':'Permissive','state':'ChangesUnpaused','startTime':null,"
        "'endTime':null}]},"
        "'conditions':[{'type':'Ready','status':'True','reason':'PolicyValid','message':'the "
        "policy is valid and its schedule is computed','lastTransitionTime':'2026-01-01T00:00:00Z',"
        "'observedGeneration':1},"
        "{'type':'ChangesRestricted','status':'False','reason':'StrategyPermissive',"
        "'message':'changes are permitted (StrategyPermissive)',"
        "'lastTransitionTime':'2026-01-01T00:00:00Z','observedGeneration':1}]}");
    json_decref(st);
    policy_free(p);
}

static void test_restrictive_and_no_schedule(void **state)
{
    policy_t *p = policy("{'spec':{'strategy':'Restrictive'}}", 1);
    json_t *st, *b;

    (void)state;
    assert_int_equal(behavior_status(p, tu_ts("2026-01-01"), NULL, &st), 0);
    b = json_object_get(st, "behavior");
    assert_string_equal(json_string_value(json_object_get(json_object_get(b, "current"), "reason")),
                        "StrategyRestrictive");
    assert_true(json_is_null(json_object_get(b, "next")));
    assert_int_equal(json_array_size(json_object_get(b, "upcoming")), 0);
    json_decref(st);
    policy_free(p);

    p = policy("{'spec':{'strategy':'MaintenanceSchedule'}}", 1);
    assert_int_equal(behavior_status(p, tu_ts("2026-01-01"), NULL, &st), 0);
    b = json_object_get(st, "behavior");
    assert_string_equal(json_string_value(json_object_get(json_object_get(b, "current"), "reason")),
                        "NoMaintenanceSchedule");
    json_decref(st);
    policy_free(p);

    p = policy("{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{}}}", 1);
    assert_int_equal(behavior_status(p, tu_ts("2026-01-01"), NULL, &st), 0);
    b = json_object_get(st, "behavior");
    assert_string_equal(json_string_value(json_object_get(json_object_get(b, "current"), "reason")),
                        "NoMaintenanceWindows");
    json_decref(st);
    policy_free(p);
}

static void test_invalid(void **state)
{
    policy_t *p = policy("{'metadata':{'generation':7},'spec':{'strategy':'MaintenanceSchedule',"
                         "'maintenanceSchedule':{'permit':{'rrule':'FREQ=DAILY','startTime':'25:00'}}}}",
                         0);
    json_t *st;

    (void)state;
    st = expect_status(
        p, "2026-01-01T00:00:00Z", NULL,
        "{'observedGeneration':7,'behavior':{"
        "'current':{'state':'ChangesPaused','startTime':null,'endTime':null,"
        "'reason':'PolicyInvalid'},'next':null,'upcoming':[],"
        "'history':[{'strategy':'Restrictive','state':'ChangesPaused','startTime':null,"
        "'endTime':null}]},"
        "'conditions':[{'type':'Ready','status':'False','reason':'InvalidSpec','message':"
        "'spec.maintenanceSchedule.permit.startTime: \\'25:00\\' is not a valid HH:MM time',"
        "'lastTransitionTime':'2026-01-01T00:00:00Z','observedGeneration':7},"
        "{'type':'ChangesRestricted','status':'True','reason':'PolicyInvalid',"
        "'message':'changes are paused (PolicyInvalid)',"
        "'lastTransitionTime':'2026-01-01T00:00:00Z','observedGeneration':7}]}");
    json_decref(st);
    policy_free(p);
}

/* Same generation: newer transitions go on top of the recorded history,
 * which is kept as written (here with an entry the schedule would not
 * derive), and lastTransitionTime survives while a condition holds. */
static void test_history_same_generation(void **state)
{
    policy_t *p = weekend(3, "");
    json_t *prev = q("{'observedGeneration':3,'behavior':{'history':["
                     "{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
                     "'startTime':'2025-12-29T00:00:00Z','endTime':null},"
                     "{'strategy':'Restrictive','state':'ChangesPaused',"
                     "'startTime':'2025-11-01T00:00:00Z','endTime':'2025-12-29T00:00:00Z'}]},"
                     "'conditions':[{'type':'Ready','status':'True',"
                     "'lastTransitionTime':'2025-06-01T00:00:00Z'},"
                     "{'type':'ChangesRestricted','status':'True',"
                     "'lastTransitionTime':'2025-12-29T00:00:00Z'}]}");
    json_t *st, *h, *conds;

    (void)state;
    assert_int_equal(behavior_status(p, tu_ts("2026-01-03T01:00Z"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    {
        json_t *want = q("["
                         "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused',"
                         "'startTime':'2026-01-03T00:00:00Z','endTime':null},"
                         "{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
                         "'startTime':'2025-12-29T00:00:00Z','endTime':'2026-01-03T00:00:00Z'},"
                         "{'strategy':'Restrictive','state':'ChangesPaused',"
                         "'startTime':'2025-11-01T00:00:00Z','endTime':'2025-12-29T00:00:00Z'}]");
        assert_true(json_equal(h, want));
        json_decref(want);
    }
    conds = json_object_get(st, "conditions");
    /* Ready stayed True: its transition time is kept */
    assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 0),
                                                          "lastTransitionTime")),
                        "2025-06-01T00:00:00Z");
    /* ChangesRestricted flipped to False: it transitions now */
    assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1), "status")),
                        "False");
    assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 1),
                                                          "lastTransitionTime")),
                        "2026-01-03T01:00:00Z");
    json_decref(st);

    /* nothing new happened: the history is unchanged */
    assert_int_equal(behavior_status(p, tu_ts("2026-01-02T00:00Z"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    assert_true(json_equal(h, json_object_get(json_object_get(prev, "behavior"), "history")));
    json_decref(st);
    json_decref(prev);
    policy_free(p);
}

/* A spec edit starts a new period now and never rewrites the past. */
static void test_history_spec_edit(void **state)
{
    policy_t *p = weekend(4, "");
    json_t *prev = q("{'observedGeneration':3,'behavior':{'history':["
                     "{'strategy':'Permissive','state':'ChangesUnpaused',"
                     "'startTime':'2025-10-01T00:00:00Z','endTime':null}]}}");
    json_t *st, *h, *want;

    (void)state;
    assert_int_equal(behavior_status(p, tu_ts("2026-01-01T08:00Z"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    want = q("[{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
             "'startTime':'2026-01-01T08:00:00Z','endTime':null},"
             "{'strategy':'Permissive','state':'ChangesUnpaused',"
             "'startTime':'2025-10-01T00:00:00Z','endTime':'2026-01-01T08:00:00Z'}]");
    assert_true(json_equal(h, want));
    json_decref(want);

    /* the next update (same generation) builds on that record */
    json_decref(prev);
    prev = st;
    assert_int_equal(behavior_status(p, tu_ts("2026-01-03T08:00Z"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    want = q("[{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused',"
             "'startTime':'2026-01-03T00:00:00Z','endTime':null},"
             "{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
             "'startTime':'2026-01-01T08:00:00Z','endTime':'2026-01-03T00:00:00Z'},"
             "{'strategy':'Permissive','state':'ChangesUnpaused',"
             "'startTime':'2025-10-01T00:00:00Z','endTime':'2026-01-01T08:00:00Z'}]");
    assert_true(json_equal(h, want));
    json_decref(want);
    json_decref(st);
    json_decref(prev);
    policy_free(p);
}

/* History never grows past its limit, and malformed previous status is
 * ignored rather than trusted. */
static void test_history_limits(void **state)
{
    policy_t *p = weekend(3, "");
    json_t *prev = q("{'observedGeneration':3,'behavior':{'history':["
                     "{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
                     "'startTime':'2025-12-29T00:00:00Z','endTime':null},"
                     "{'strategy':'X','state':'ChangesPaused','startTime':'a','endTime':null}]},"
                     "'conditions':'bogus'}");
    json_t *st, *h;

    (void)state;
    /* a month later: many transitions, still five entries */
    assert_int_equal(behavior_status(p, tu_ts("2026-02-01T12:00Z"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    assert_int_equal(json_array_size(h), BEHAVIOR_HISTORY);
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "startTime")),
                        "2026-01-31T00:00:00Z");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 4), "startTime")),
                        "2026-01-17T00:00:00Z");
    json_decref(st);
    json_decref(prev);

    prev = q("{'behavior':'nonsense','observedGeneration':'3'}");
    assert_int_equal(behavior_status(p, tu_ts("2026-01-01"), prev, &st), 0);
    h = json_object_get(json_object_get(st, "behavior"), "history");
    assert_int_equal(json_array_size(h), BEHAVIOR_HISTORY);
    json_decref(st);
    json_decref(prev);
    policy_free(p);
}

/* A time zone with DST: output is UTC with Z. */
static void test_utc_output(void **state)
{
    policy_t *p = policy("{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{"
                         "'timeZone':'Europe/Zurich','permit':{'rrule':'FREQ=DAILY',"
                         "'startTime':'02:00','duration':'1h'}}}}",
                         1);
    json_t *st, *up;

    (void)state;
    /* 2026-03-29 is the spring-forward day in Zurich: 02:00 does not exist
     * and reads with the offset before the gap (+01:00), i.e. 01:00Z */
    assert_int_equal(behavior_status(p, tu_ts("2026-03-28T12:00Z"), NULL, &st), 0);
    up = json_object_get(json_object_get(st, "behavior"), "upcoming");
    assert_string_equal(json_string_value(json_object_get(json_array_get(up, 0), "startTime")),
                        "2026-03-29T01:00:00Z");
    assert_string_equal(json_string_value(json_object_get(json_array_get(up, 1), "startTime")),
                        "2026-03-30T00:00:00Z");
    json_decref(st);
    policy_free(p);
}

/* A HostedCluster's or NodePool's history (its companion): extended only on
 * a transition, newest first, the previous period closed where the new one
 * starts, at most five entries; a start that would run backwards reads as
 * now. */
static void test_history_extend(void **state)
{
    (void)state;
    json_t *h = NULL, *st, *want;
    sched_time_t t0 = tu_ts("2026-03-07T00:00:00Z");

    /* No history yet: one ongoing period. */
    assert_int_equal(behavior_history_extend(NULL, "MaintenanceSchedule", 0, t0 - 3600, t0, &h), 0);
    want = q("[{'strategy':'MaintenanceSchedule','state':'ChangesPaused',"
             "'startTime':'2026-03-06T23:00:00Z','endTime':null}]");
    assert_true(json_equal(h, want));
    json_decref(want);
    /* Same state and strategy: as recorded, whatever start is given. */
    st = json_pack("{s:{s:o}}", "behavior", "history", h);
    assert_int_equal(behavior_history_extend(st, "MaintenanceSchedule", 0, t0 + 60, t0 + 120, &h), 0);
    assert_true(json_equal(h, json_object_get(json_object_get(st, "behavior"), "history")));
    json_decref(h);
    /* Six transitions, an hour apart: five kept, newest first, each closed
     * where the next began. */
    for (int i = 1; i <= 6; i++) {
        sched_time_t at = t0 + i * 3600;
        assert_int_equal(behavior_history_extend(st, "MaintenanceSchedule", i % 2, at, at, &h), 0);
        json_object_set_new(json_object_get(st, "behavior"), "history", h);
    }
    h = json_object_get(json_object_get(st, "behavior"), "history");
    want = q("[{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2026-03-07T06:00:00Z','endTime':null},"
             "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2026-03-07T05:00:00Z','endTime':'2026-03-07T06:00:00Z'},"
             "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2026-03-07T04:00:00Z','endTime':'2026-03-07T05:00:00Z'},"
             "{'strategy':'MaintenanceSchedule','state':'ChangesUnpaused','startTime':'2026-03-07T03:00:00Z','endTime':'2026-03-07T04:00:00Z'},"
             "{'strategy':'MaintenanceSchedule','state':'ChangesPaused','startTime':'2026-03-07T02:00:00Z','endTime':'2026-03-07T03:00:00Z'}]");
    assert_true(json_equal(h, want));
    json_decref(want);
    /* A strategy change is a transition even in the same state; a start
     * before the newest recorded one (the timeline was replaced) is now. */
    assert_int_equal(behavior_history_extend(st, "Restrictive", 0, t0, t0 + 7 * 3600, &h), 0);
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "strategy")), "Restrictive");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 0), "startTime")),
                        "2026-03-07T07:00:00Z");
    assert_string_equal(json_string_value(json_object_get(json_array_get(h, 1), "endTime")),
                        "2026-03-07T07:00:00Z");
    assert_int_equal(json_array_size(h), 5);
    json_decref(h);
    /* Malformed history reads as none. */
    json_t *bad = q("{'behavior':{'history':[{'strategy':1}]}}");
    assert_int_equal(behavior_history_extend(bad, "Permissive", 1, SCHED_NEG_INF, t0, &h), 0);
    want = q("[{'strategy':'Permissive','state':'ChangesUnpaused','startTime':null,'endTime':null}]");
    assert_true(json_equal(h, want));
    json_decref(want);
    json_decref(h);
    json_decref(bad);
    json_decref(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_weekday),
        cmocka_unit_test(test_in_window),
        cmocka_unit_test(test_exclusion),
        cmocka_unit_test(test_permissive),
        cmocka_unit_test(test_restrictive_and_no_schedule),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_history_same_generation),
        cmocka_unit_test(test_history_spec_edit),
        cmocka_unit_test(test_history_limits),
        cmocka_unit_test(test_history_extend),
        cmocka_unit_test(test_utc_output),
    };

    return cmocka_run_group_tests_name("behavior", tests, NULL, NULL);
}
