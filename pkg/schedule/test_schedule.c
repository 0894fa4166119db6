/* Spec-driven tests of the schedule engine (DESIGN.md 3.1, 3.2).
 *
 * Every expected value below was worked out by hand from the design text and
 * the tz database (transition instants as printed by zdump), never by running
 * the engine. Every test pins `now`.
 *
 * Reference dates used throughout: 1970-01-01 was a Thursday, 2026-01-01 is a
 * Thursday (day 20454). 2026 DST changes: Europe/Zurich 03-29 01:00Z (+1 -> +2)
 * and 10-25 01:00Z (+2 -> +1); America/New_York 03-08 07:00Z (-5 -> -4) and
 * 11-01 06:00Z (-4 -> -5); Australia/Lord_Howe 04-04 15:00Z (+11 -> +10:30,
 * local 02:00 -> 01:30 on 04-05) and 10-03 15:30Z (+10:30 -> +11, local 02:00
 * -> 02:30 on 10-04).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule/schedule.h"
#include "schedule/testutil_sched.h"

#define T(lit) ((sched_time_t)tu_ts(lit))
#define HM(h, m) ((h) * 60 + (m))
#define HOURS(h) ((int32_t)(h) * 3600)
#define MINUTES(m) ((int32_t)(m) * 60)

/* ---- helpers ------------------------------------------------------------ */

/* Parses "YYYY-MM-DD:YYYY-MM-DD[,...]" into exclusions with reason
 * "reason-<index>". Returns the count. */
static size_t parse_exclusions(const char *list, sched_exclusion_t *ex, size_t max)
{
    static const char *reasons[] = {"reason-0", "reason-1", "reason-2", "reason-3"};
    size_t n = 0;
    if (list == NULL)
        return 0;
    while (*list != '\0') {
        char from[11], until[11];
        assert_true(n < max && n < 4);
        assert_true(strlen(list) >= 21 && list[10] == ':');
        memcpy(from, list, 10);
        from[10] = '\0';
        memcpy(until, list + 11, 10);
        until[10] = '\0';
        ex[n].from_day = tu_day(from);
        ex[n].until_day = tu_day(until);
        ex[n].reason = reasons[n];
        n++;
        list += 21;
        if (*list == ',')
            list++;
    }
    return n;
}

static sched_t *compile_ok(const char *tz, const char *rrule, int start_minute,
                           int32_t duration, const char *exclusions, sched_time_t now)
{
    sched_exclusion_t ex[4];
    sched_spec_t spec = {
        .time_zone = tz,
        .rrule = rrule,
        .start_minute = start_minute,
        .duration = duration,
        .exclusions = ex,
        .n_exclusions = parse_exclusions(exclusions, ex, 4),
    };
    sched_t *s = NULL;
    char err[256] = "";
    int rc = sched_compile(&spec, now, &s, err, sizeof err);
    if (rc != 0)
        fail_msg("sched_compile(tz=%s, rrule=%s) = %d: %s", tz ? tz : "(null)",
                 rrule ? rrule : "(null)", rc, err);
    assert_non_null(s);
    return s;
}

enum query { Q_NEXT, Q_CONTAINING, Q_PREV };

static const char *query_name(enum query q)
{
    return q == Q_NEXT ? "sched_next" : q == Q_CONTAINING ? "sched_containing" : "sched_prev";
}

static int run_query(sched_t *s, enum query q, sched_time_t t, sched_interval_t *iv)
{
    switch (q) {
    case Q_NEXT:
        return sched_next(s, t, iv);
    case Q_CONTAINING:
        return sched_containing(s, t, iv);
    case Q_PREV:
        return sched_prev(s, t, iv);
    }
    return -1;
}

/* Checks a query result: want 1 with [start, end), or want 0. Prints the
 * mismatch and returns 0 when it differs, 1 when it matches. */
static int check_iv(sched_t *s, enum query q, sched_time_t t, int want, sched_time_t start,
                    sched_time_t end, const char *what)
{
    sched_interval_t iv = {0, 0};
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    int rc = run_query(s, q, t, &iv);
    if (rc < 0) {
        print_error("%s: %s(%s) returned error %d\n", what, query_name(q), tu_fmt(t, b1, 32),
                    rc);
        return 0;
    }
    if (want == 0 && rc != 0) {
        print_error("%s: %s(%s) expected none, got [%s, %s)\n", what, query_name(q),
                    tu_fmt(t, b1, 32), tu_fmt(iv.start, b2, 32), tu_fmt(iv.end, b3, 32));
        return 0;
    }
    if (want == 1 && rc != 1) {
        print_error("%s: %s(%s) expected [%s, %s), got none\n", what, query_name(q),
                    tu_fmt(t, b1, 32), tu_fmt(start, b2, 32), tu_fmt(end, b3, 32));
        return 0;
    }
    if (want == 1 && (iv.start != start || iv.end != end)) {
        print_error("%s: %s(%s) expected [%s, %s), got [%s, %s)\n", what, query_name(q),
                    tu_fmt(t, b1, 32), tu_fmt(start, b2, 32), tu_fmt(end, b3, 32),
                    tu_fmt(iv.start, b4, 32), tu_fmt(iv.end, b5, 32));
        return 0;
    }
    return 1;
}

/* Asserts a query result: want 1 with [start, end), or want 0. */
static void expect_iv(sched_t *s, enum query q, sched_time_t t, int want, sched_time_t start,
                      sched_time_t end, const char *what)
{
    if (!check_iv(s, q, t, want, start, end, what))
        fail_msg("%s: unexpected %s result", what, query_name(q));
}

static void expect_permitted(sched_t *s, sched_time_t t, int want)
{
    char b[32];
    int rc = sched_permitted(s, t);
    if (rc != want)
        fail_msg("sched_permitted(%s) expected %d, got %d", tu_fmt(t, b, 32), want, rc);
}

static void expect_set(const sched_set_t *set, const sched_interval_t *want, size_t n,
                       const char *what)
{
    char b1[32], b2[32], b3[32], b4[32];
    if (set->len != n) {
        for (size_t i = 0; i < set->len; i++)
            print_message("  got [%s, %s)\n", tu_fmt(set->iv[i].start, b1, 32),
                          tu_fmt(set->iv[i].end, b2, 32));
        fail_msg("%s: expected %zu intervals, got %zu", what, n, set->len);
    }
    for (size_t i = 0; i < n; i++)
        if (set->iv[i].start != want[i].start || set->iv[i].end != want[i].end)
            fail_msg("%s: interval %zu expected [%s, %s), got [%s, %s)", what, i,
                     tu_fmt(want[i].start, b1, 32), tu_fmt(want[i].end, b2, 32),
                     tu_fmt(set->iv[i].start, b3, 32), tu_fmt(set->iv[i].end, b4, 32));
}

/* ---- table-driven window cases ------------------------------------------ */

typedef struct window_case {
    const char *what;
    const char *tz;
    const char *rrule;       /* NULL: permit absent */
    int start_minute;
    int32_t duration;        /* seconds; 0 = until next local midnight */
    const char *exclusions;  /* "from:until,..." local dates, or NULL */
    enum query q;
    const char *t;
    int want;                /* 1 = interval [start, end), 0 = none */
    const char *start;
    const char *end;
} window_case_t;

static void run_cases(const window_case_t *c, size_t n)
{
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        sched_time_t t = T(c[i].t);
        /* Compile at the query instant and also years before and after it:
         * results must not depend on where the initial expansion was done.
         * (The sanitizer and valgrind runs keep only the first.) */
        sched_time_t nows[3] = {t, t - 3 * 365 * 86400 - 12345, t + 4 * 365 * 86400 + 777};
        if (nows[1] < 0)
            nows[1] = 0;
        int n_nows = tu_scale_small() ? 1 : 3;
        for (int k = 0; k < n_nows; k++) {
            sched_t *s = compile_ok(c[i].tz, c[i].rrule, c[i].start_minute, c[i].duration,
                                    c[i].exclusions, nows[k]);
            char what[256];
            snprintf(what, sizeof what, "case \"%s\" (now #%d)", c[i].what, k);
            if (!check_iv(s, c[i].q, t, c[i].want, c[i].want ? T(c[i].start) : 0,
                          c[i].want ? T(c[i].end) : 0, what))
                failed++;
            sched_unref(s);
        }
    }
    if (failed)
        fail_msg("%d table checks failed (%zu cases)", failed, n);
}

#define N_CASES(a) (sizeof(a) / sizeof((a)[0]))
#define WEEKEND "FREQ=WEEKLY;BYDAY=SA,SU"

/* DESIGN.md 3.1 permitted(t) table, one block per row. */
static void test_permit_table(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* permit null, exclude null: never. */
        {"never/next", "UTC", NULL, 0, 0, NULL, Q_NEXT, "2026-01-01T00:00:00Z", 0, NULL, NULL},
        {"never/containing", "UTC", NULL, 0, 0, NULL, Q_CONTAINING, "2026-01-01T00:00:00Z", 0,
         NULL, NULL},
        {"never/prev", "Europe/Zurich", NULL, 0, 0, NULL, Q_PREV, "2026-01-01T00:00:00Z", 0,
         NULL, NULL},
        /* permit set, no exclusions: inside a window. Saturday and Sunday
         * windows touch and merge. */
        {"weekend/next", "UTC", WEEKEND, 0, 0, NULL, Q_NEXT, "2026-01-01T12:00:00Z", 1,
         "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekend/containing sunday", "UTC", WEEKEND, 0, 0, NULL, Q_CONTAINING,
         "2026-01-04T12:00:00Z", 1, "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekend/containing at start", "UTC", WEEKEND, 0, 0, NULL, Q_CONTAINING,
         "2026-01-03T00:00:00Z", 1, "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekend/containing at end (exclusive)", "UTC", WEEKEND, 0, 0, NULL, Q_CONTAINING,
         "2026-01-05T00:00:00Z", 0, NULL, NULL},
        {"weekend/containing friday", "UTC", WEEKEND, 0, 0, NULL, Q_CONTAINING,
         "2026-01-02T23:59:59Z", 0, NULL, NULL},
        {"weekend/next from inside", "UTC", WEEKEND, 0, 0, NULL, Q_NEXT, "2026-01-04T23:00:00Z",
         1, "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekend/next at end", "UTC", WEEKEND, 0, 0, NULL, Q_NEXT, "2026-01-05T00:00:00Z", 1,
         "2026-01-10T00:00:00Z", "2026-01-12T00:00:00Z"},
        /* permit and exclude: inside a window and outside every exclusion. */
        {"weekend minus saturday", "UTC", WEEKEND, 0, 0, "2026-01-03:2026-01-04", Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekend minus saturday/containing", "UTC", WEEKEND, 0, 0, "2026-01-03:2026-01-04",
         Q_CONTAINING, "2026-01-03T12:00:00Z", 0, NULL, NULL},
        {"weekend fully excluded", "UTC", WEEKEND, 0, 0, "2026-01-10:2026-01-12", Q_NEXT,
         "2026-01-05T00:00:00Z", 1, "2026-01-17T00:00:00Z", "2026-01-19T00:00:00Z"},
        {"weekend minus sunday in Zurich", "Europe/Zurich", WEEKEND, 0, 0,
         "2026-01-04:2026-01-05", Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-01-02T23:00:00Z",
         "2026-01-03T23:00:00Z"},
        /* permit null, exclude set: permitted outside the exclusions, with
         * unbounded first and last intervals. */
        {"exclusions only/before", "UTC", NULL, 0, 0, "2026-01-10:2026-01-12", Q_CONTAINING,
         "2026-01-01T00:00:00Z", 1, "-inf", "2026-01-10T00:00:00Z"},
        {"exclusions only/next before", "UTC", NULL, 0, 0, "2026-01-10:2026-01-12", Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "-inf", "2026-01-10T00:00:00Z"},
        {"exclusions only/inside", "UTC", NULL, 0, 0, "2026-01-10:2026-01-12", Q_CONTAINING,
         "2026-01-11T00:00:00Z", 0, NULL, NULL},
        {"exclusions only/after", "UTC", NULL, 0, 0, "2026-01-10:2026-01-12", Q_NEXT,
         "2026-01-11T00:00:00Z", 1, "2026-01-12T00:00:00Z", "+inf"},
        {"exclusions only/prev", "UTC", NULL, 0, 0, "2026-01-10:2026-01-12", Q_PREV,
         "2026-01-11T00:00:00Z", 1, "-inf", "2026-01-10T00:00:00Z"},
        {"exclusions only/Zurich", "Europe/Zurich", NULL, 0, 0, "2026-01-10:2026-01-12",
         Q_CONTAINING, "2026-01-01T00:00:00Z", 1, "-inf", "2026-01-09T23:00:00Z"},
        {"exclusions only/Zurich after", "Europe/Zurich", NULL, 0, 0, "2026-01-10:2026-01-12",
         Q_NEXT, "2026-01-10T00:00:00Z", 1, "2026-01-11T23:00:00Z", "+inf"},
        {"exclusions only/Zurich across spring DST", "Europe/Zurich", NULL, 0, 0,
         "2026-03-28:2026-03-30", Q_NEXT, "2026-03-28T00:00:00Z", 1, "2026-03-29T22:00:00Z",
         "+inf"},
        {"exclusions only/overlapping, any order", "UTC", NULL, 0, 0,
         "2026-01-15:2026-01-20,2026-01-10:2026-01-16", Q_NEXT, "2026-01-11T00:00:00Z", 1,
         "2026-01-20T00:00:00Z", "+inf"},
        {"exclusions only/overlapping, first", "UTC", NULL, 0, 0,
         "2026-01-15:2026-01-20,2026-01-10:2026-01-16", Q_CONTAINING, "2026-01-01T00:00:00Z",
         1, "-inf", "2026-01-10T00:00:00Z"},
        {"exclusions only/touching", "UTC", NULL, 0, 0,
         "2026-01-12:2026-01-14,2026-01-10:2026-01-12", Q_NEXT, "2026-01-11T00:00:00Z", 1,
         "2026-01-14T00:00:00Z", "+inf"},
        {"exclusions only/two gaps", "UTC", NULL, 0, 0,
         "2026-02-01:2026-02-02,2026-01-10:2026-01-12", Q_CONTAINING, "2026-01-20T00:00:00Z",
         1, "2026-01-12T00:00:00Z", "2026-02-01T00:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

/* Pointwise permitted() over each row of the table. */
static void test_permit_table_permitted(void **state)
{
    (void)state;
    sched_time_t now = T("2026-01-01T00:00:00Z");
    sched_t *never = compile_ok("UTC", NULL, 0, 0, NULL, now);
    sched_t *permit = compile_ok("UTC", WEEKEND, 0, 0, NULL, now);
    sched_t *both = compile_ok("UTC", WEEKEND, 0, 0, "2026-01-03:2026-01-04", now);
    sched_t *excl = compile_ok("UTC", NULL, 0, 0, "2026-01-03:2026-01-04", now);
    const char *points[] = {"2026-01-02T23:59:59Z", "2026-01-03T00:00:00Z",
                            "2026-01-03T12:00:00Z", "2026-01-04T00:00:00Z",
                            "2026-01-04T23:59:59Z", "2026-01-05T00:00:00Z"};
    const int want_permit[] = {0, 1, 1, 1, 1, 0};
    const int want_both[] = {0, 0, 0, 1, 1, 0};
    const int want_excl[] = {1, 0, 0, 1, 1, 1};
    for (size_t i = 0; i < N_CASES(points); i++) {
        expect_permitted(never, T(points[i]), 0);
        expect_permitted(permit, T(points[i]), want_permit[i]);
        expect_permitted(both, T(points[i]), want_both[i]);
        expect_permitted(excl, T(points[i]), want_excl[i]);
    }
    /* Far from the compile instant, both ways. */
    expect_permitted(never, T("1971-01-01T00:00:00Z"), 0);
    expect_permitted(never, T("2090-01-01T00:00:00Z"), 0);
    expect_permitted(excl, T("1971-01-01T00:00:00Z"), 1);
    expect_permitted(excl, T("2090-01-01T00:00:00Z"), 1);
    expect_permitted(permit, T("2090-01-07T12:00:00Z"), 1); /* a Saturday */
    expect_permitted(permit, T("2090-01-09T12:00:00Z"), 0); /* a Monday */

    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(never, now, &when), 0);
    assert_int_equal(sched_prev_transition(never, now, &when), 0);
    assert_int_equal(sched_prev_transition(excl, T("2025-12-01T00:00:00Z"), &when), 0);
    assert_int_equal(sched_next_transition(excl, T("2026-01-04T00:00:00Z"), &when), 0);
    sched_unref(never);
    sched_unref(permit);
    sched_unref(both);
    sched_unref(excl);
}

static void test_dst_zurich(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* Gap: 02:30 does not exist on 2026-03-29; read with +01:00. */
        {"gap day", "Europe/Zurich", "FREQ=DAILY", HM(2, 30), HOURS(1), NULL, Q_NEXT,
         "2026-03-29T00:00:00Z", 1, "2026-03-29T01:30:00Z", "2026-03-29T02:30:00Z"},
        {"day before gap", "Europe/Zurich", "FREQ=DAILY", HM(2, 30), HOURS(1), NULL, Q_NEXT,
         "2026-03-28T00:00:00Z", 1, "2026-03-28T01:30:00Z", "2026-03-28T02:30:00Z"},
        {"day after gap", "Europe/Zurich", "FREQ=DAILY", HM(2, 30), HOURS(1), NULL, Q_NEXT,
         "2026-03-29T03:00:00Z", 1, "2026-03-30T00:30:00Z", "2026-03-30T01:30:00Z"},
        /* Overlap: 02:30 happens twice on 2026-10-25; the first (+02:00). */
        {"overlap day", "Europe/Zurich", "FREQ=DAILY", HM(2, 30), HOURS(1), NULL, Q_NEXT,
         "2026-10-25T00:00:00Z", 1, "2026-10-25T00:30:00Z", "2026-10-25T01:30:00Z"},
        {"day after overlap", "Europe/Zurich", "FREQ=DAILY", HM(2, 30), HOURS(1), NULL, Q_NEXT,
         "2026-10-25T02:00:00Z", 1, "2026-10-26T01:30:00Z", "2026-10-26T02:30:00Z"},
        /* "8h" is elapsed time across the change. */
        {"8h across spring", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(8), NULL, Q_NEXT,
         "2026-03-28T12:00:00Z", 1, "2026-03-28T23:00:00Z", "2026-03-29T07:00:00Z"},
        {"8h across autumn", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(8), NULL, Q_NEXT,
         "2026-10-24T12:00:00Z", 1, "2026-10-24T22:00:00Z", "2026-10-25T06:00:00Z"},
        /* Default end: next local midnight (23 h and 25 h days). */
        {"to midnight, 23h day", "Europe/Zurich", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL, Q_NEXT,
         "2026-03-27T00:00:00Z", 1, "2026-03-28T23:00:00Z", "2026-03-29T22:00:00Z"},
        {"to midnight, 25h day", "Europe/Zurich", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL, Q_NEXT,
         "2026-10-20T00:00:00Z", 1, "2026-10-24T22:00:00Z", "2026-10-25T23:00:00Z"},
        {"to midnight from 22:00 on 25h day", "Europe/Zurich", "FREQ=WEEKLY;BYDAY=SU",
         HM(22, 0), 0, NULL, Q_NEXT, "2026-10-20T00:00:00Z", 1, "2026-10-25T21:00:00Z",
         "2026-10-25T23:00:00Z"},
        /* Daily 24h from 00:00: merges across the short spring day, leaves a
         * one-hour hole on each long autumn day. */
        {"24h daily between autumns", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(24), NULL,
         Q_CONTAINING, "2026-06-01T00:00:00Z", 1, "2025-10-26T23:00:00Z",
         "2026-10-25T22:00:00Z"},
        {"24h daily autumn hole", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(24), NULL,
         Q_CONTAINING, "2026-10-25T22:30:00Z", 0, NULL, NULL},
        {"24h daily next after hole", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(24), NULL,
         Q_NEXT, "2026-10-25T22:30:00Z", 1, "2026-10-25T23:00:00Z", "2027-10-31T22:00:00Z"},
        /* Exclusion boundaries are local midnights (+02:00 in summer). */
        {"exclusion in summer", "Europe/Zurich", "FREQ=DAILY", 0, 0, "2026-07-01:2026-07-03",
         Q_NEXT, "2026-07-01T00:00:00Z", 1, "2026-07-02T22:00:00Z", "+inf"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_dst_new_york(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* Gap 02:00-03:00 on 2026-03-08: 02:30 read with -05:00. */
        {"gap day", "America/New_York", "FREQ=DAILY", HM(2, 30), MINUTES(30), NULL, Q_NEXT,
         "2026-03-08T00:00:00Z", 1, "2026-03-08T07:30:00Z", "2026-03-08T08:00:00Z"},
        {"day after gap", "America/New_York", "FREQ=DAILY", HM(2, 30), MINUTES(30), NULL,
         Q_NEXT, "2026-03-08T09:00:00Z", 1, "2026-03-09T06:30:00Z", "2026-03-09T07:00:00Z"},
        /* Overlap 01:00-02:00 on 2026-11-01: first occurrence (-04:00). */
        {"overlap day", "America/New_York", "FREQ=DAILY", HM(1, 30), HOURS(1), NULL, Q_NEXT,
         "2026-11-01T00:00:00Z", 1, "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z"},
        {"day before overlap", "America/New_York", "FREQ=DAILY", HM(1, 30), HOURS(1), NULL,
         Q_NEXT, "2026-10-31T00:00:00Z", 1, "2026-10-31T05:30:00Z", "2026-10-31T06:30:00Z"},
        {"day after overlap", "America/New_York", "FREQ=DAILY", HM(1, 30), HOURS(1), NULL,
         Q_NEXT, "2026-11-01T07:00:00Z", 1, "2026-11-02T06:30:00Z", "2026-11-02T07:30:00Z"},
        /* 8h elapsed from 22:00 across each change. */
        {"8h across spring", "America/New_York", "FREQ=DAILY", HM(22, 0), HOURS(8), NULL,
         Q_NEXT, "2026-03-07T12:00:00Z", 1, "2026-03-08T03:00:00Z", "2026-03-08T11:00:00Z"},
        {"8h across autumn", "America/New_York", "FREQ=DAILY", HM(22, 0), HOURS(8), NULL,
         Q_NEXT, "2026-10-31T12:00:00Z", 1, "2026-11-01T02:00:00Z", "2026-11-01T10:00:00Z"},
        {"to midnight, 23h day", "America/New_York", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL,
         Q_NEXT, "2026-03-05T00:00:00Z", 1, "2026-03-08T05:00:00Z", "2026-03-09T04:00:00Z"},
        {"to midnight, 25h day", "America/New_York", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL,
         Q_NEXT, "2026-10-28T00:00:00Z", 1, "2026-11-01T04:00:00Z", "2026-11-02T05:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_dst_lord_howe(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* Gap 02:00-02:30 on 2026-10-04: 02:15 read with +10:30. */
        {"gap day", "Australia/Lord_Howe", "FREQ=DAILY", HM(2, 15), HOURS(1), NULL, Q_NEXT,
         "2026-10-03T12:00:00Z", 1, "2026-10-03T15:45:00Z", "2026-10-03T16:45:00Z"},
        {"day after gap", "Australia/Lord_Howe", "FREQ=DAILY", HM(2, 15), HOURS(1), NULL,
         Q_NEXT, "2026-10-03T17:00:00Z", 1, "2026-10-04T15:15:00Z", "2026-10-04T16:15:00Z"},
        /* Overlap 01:30-02:00 on 2026-04-05: first occurrence (+11:00). */
        {"overlap day", "Australia/Lord_Howe", "FREQ=DAILY", HM(1, 45), HOURS(1), NULL, Q_NEXT,
         "2026-04-04T12:00:00Z", 1, "2026-04-04T14:45:00Z", "2026-04-04T15:45:00Z"},
        {"day after overlap", "Australia/Lord_Howe", "FREQ=DAILY", HM(1, 45), HOURS(1), NULL,
         Q_NEXT, "2026-04-04T16:00:00Z", 1, "2026-04-05T15:15:00Z", "2026-04-05T16:15:00Z"},
        /* 23.5 h and 24.5 h local days. */
        {"to midnight, 23.5h day", "Australia/Lord_Howe", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL,
         Q_NEXT, "2026-10-01T00:00:00Z", 1, "2026-10-03T13:30:00Z", "2026-10-04T13:00:00Z"},
        {"to midnight, 24.5h day", "Australia/Lord_Howe", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL,
         Q_NEXT, "2026-04-01T00:00:00Z", 1, "2026-04-04T13:00:00Z", "2026-04-05T13:30:00Z"},
        {"8h across spring", "Australia/Lord_Howe", "FREQ=DAILY", 0, HOURS(8), NULL, Q_NEXT,
         "2026-10-03T12:00:00Z", 1, "2026-10-03T13:30:00Z", "2026-10-03T21:30:00Z"},
        {"8h across autumn", "Australia/Lord_Howe", "FREQ=DAILY", 0, HOURS(8), NULL, Q_NEXT,
         "2026-04-04T12:00:00Z", 1, "2026-04-04T13:00:00Z", "2026-04-04T21:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

/* Zone data far from today: rules continuing past 2037 (the end of 32-bit
 * transition tables) and Brazil's DST rule changes. Offsets from zdump. */
static void test_zone_rules_far_out(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* Lord Howe DST from 2038-10-03 02:00 (+10:30) = 2038-10-02T15:30Z. */
        {"Lord Howe 2038 after DST start", "Australia/Lord_Howe", "FREQ=DAILY", HM(12, 0),
         HOURS(1), NULL, Q_NEXT, "2038-10-02T16:00:00Z", 1, "2038-10-03T01:00:00Z",
         "2038-10-03T02:00:00Z"},
        {"Lord Howe 2045 after DST start", "Australia/Lord_Howe", "FREQ=DAILY", HM(12, 0),
         HOURS(1), NULL, Q_NEXT, "2045-09-30T16:00:00Z", 1, "2045-10-01T01:00:00Z",
         "2045-10-01T02:00:00Z"},
        /* Chatham DST from 2038-09-26 02:45 (+12:45) = 2038-09-25T14:00Z. */
        {"Chatham 2038 after DST start", "Pacific/Chatham", "FREQ=DAILY", HM(12, 0), HOURS(1),
         NULL, Q_NEXT, "2038-09-25T15:00:00Z", 1, "2038-09-25T22:15:00Z",
         "2038-09-25T23:15:00Z"},
        /* Sao Paulo: standard time (-03:00) from 2014-02-16 to 2014-10-19, and
         * no DST at all since 2019. */
        {"Sao Paulo winter 2014", "America/Sao_Paulo", "FREQ=DAILY", HM(12, 0), HOURS(1), NULL,
         Q_NEXT, "2014-06-01T00:00:00Z", 1, "2014-06-01T15:00:00Z", "2014-06-01T16:00:00Z"},
        {"Sao Paulo summer 2014", "America/Sao_Paulo", "FREQ=DAILY", HM(12, 0), HOURS(1), NULL,
         Q_NEXT, "2014-12-01T00:00:00Z", 1, "2014-12-01T14:00:00Z", "2014-12-01T15:00:00Z"},
        {"Sao Paulo summer 2020 (no DST)", "America/Sao_Paulo", "FREQ=DAILY", HM(12, 0),
         HOURS(1), NULL, Q_NEXT, "2020-01-15T00:00:00Z", 1, "2020-01-15T15:00:00Z",
         "2020-01-15T16:00:00Z"},
        /* New York beyond 2037 still follows the 2007 US rule. */
        {"New York 2050 gap", "America/New_York", "FREQ=DAILY", HM(2, 30), MINUTES(30), NULL,
         Q_NEXT, "2050-03-13T00:00:00Z", 1, "2050-03-13T07:30:00Z", "2050-03-13T08:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_state_at(void **state)
{
    (void)state;
    sched_time_t now = T("2026-01-01T12:00:00Z");
    sched_t *wk = compile_ok("UTC", WEEKEND, 0, 0, NULL, now);
    sched_state_t st;
    memset(&st, 0x5a, sizeof st);
    assert_int_equal(sched_state_at(wk, now, &st), 0);
    assert_int_equal(st.permitted, 0);
    assert_int_equal(st.current.start, T("2025-12-29T00:00:00Z"));
    assert_int_equal(st.current.end, T("2026-01-03T00:00:00Z"));
    assert_int_equal(st.has_next, 1);
    assert_int_equal(st.next.start, T("2026-01-03T00:00:00Z"));
    assert_int_equal(st.next.end, T("2026-01-05T00:00:00Z"));
    assert_int_equal(st.no_window, 0);

    assert_int_equal(sched_state_at(wk, T("2026-01-04T00:00:00Z"), &st), 0);
    assert_int_equal(st.permitted, 1);
    assert_int_equal(st.current.start, T("2026-01-03T00:00:00Z"));
    assert_int_equal(st.current.end, T("2026-01-05T00:00:00Z"));
    assert_int_equal(st.has_next, 1);
    assert_int_equal(st.next.start, T("2026-01-05T00:00:00Z"));
    assert_int_equal(st.next.end, T("2026-01-10T00:00:00Z"));

    sched_t *never = sched_never();
    assert_int_equal(sched_state_at(never, now, &st), 0);
    assert_int_equal(st.permitted, 0);
    assert_int_equal(st.current.end, SCHED_POS_INF);
    assert_int_equal(st.has_next, 0);
    assert_int_equal(st.no_window, 1);

    sched_t *always = sched_always();
    assert_int_equal(sched_state_at(always, now, &st), 0);
    assert_int_equal(st.permitted, 1);
    assert_int_equal(st.current.start, SCHED_NEG_INF);
    assert_int_equal(st.current.end, SCHED_POS_INF);
    assert_int_equal(st.has_next, 0);

    /* Exclusions only: restricted inside, then permitted forever. */
    sched_t *ex = compile_ok("UTC", NULL, 0, 0, "2026-01-10:2026-01-12", now);
    assert_int_equal(sched_state_at(ex, T("2026-01-11T00:00:00Z"), &st), 0);
    assert_int_equal(st.permitted, 0);
    assert_int_equal(st.current.start, T("2026-01-10T00:00:00Z"));
    assert_int_equal(st.current.end, T("2026-01-12T00:00:00Z"));
    assert_int_equal(st.has_next, 1);
    assert_int_equal(st.next.start, T("2026-01-12T00:00:00Z"));
    assert_int_equal(st.next.end, SCHED_POS_INF);

    /* A window 10 years or more away: NoPermittedWindow. */
    sched_t *far = compile_ok("UTC", "FREQ=YEARLY;INTERVAL=11;BYMONTH=1;BYMONTHDAY=1", 0, 0,
                              NULL, now);
    assert_int_equal(sched_state_at(far, T("2025-06-01T00:00:00Z"), &st), 0);
    assert_int_equal(st.permitted, 0);
    assert_int_equal(st.no_window, 1);
    assert_int_equal(st.current.start, T("2025-01-02T00:00:00Z"));

    sched_unref(far);
    sched_unref(ex);
    sched_unref(always);
    sched_unref(never);
    sched_unref(wk);
}

static void test_feb29(void **state)
{
    (void)state;
    const char *r = "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29";
    const window_case_t cases[] = {
        {"next leap year", "UTC", r, 0, 0, NULL, Q_NEXT, "2025-01-01T00:00:00Z", 1,
         "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"},
        {"inside", "UTC", r, 0, 0, NULL, Q_CONTAINING, "2028-02-29T12:00:00Z", 1,
         "2028-02-29T00:00:00Z", "2028-03-01T00:00:00Z"},
        {"after", "UTC", r, 0, 0, NULL, Q_NEXT, "2028-03-01T00:00:00Z", 1,
         "2032-02-29T00:00:00Z", "2032-03-01T00:00:00Z"},
        {"2100 is not a leap year", "UTC", r, 0, 0, NULL, Q_NEXT, "2097-01-01T00:00:00Z", 1,
         "2104-02-29T00:00:00Z", "2104-03-01T00:00:00Z"},
        {"2000 is", "UTC", r, 0, 0, NULL, Q_NEXT, "1997-01-01T00:00:00Z", 1,
         "2000-02-29T00:00:00Z", "2000-03-01T00:00:00Z"},
        {"Zurich", "Europe/Zurich", r, 0, 0, NULL, Q_NEXT, "2025-01-01T00:00:00Z", 1,
         "2028-02-28T23:00:00Z", "2028-02-29T23:00:00Z"},
        {"monthly 29 in February only in leap years", "UTC", "FREQ=MONTHLY;BYMONTHDAY=29", 0,
         0, NULL, Q_NEXT, "2028-02-01T00:00:00Z", 1, "2028-02-29T00:00:00Z",
         "2028-03-01T00:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_fifth_and_last(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* January and February 2026 have four Mondays; March has five. */
        {"fifth monday", "UTC", "FREQ=MONTHLY;BYDAY=5MO", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-03-30T00:00:00Z", "2026-03-31T00:00:00Z"},
        {"fifth monday skips Apr and May", "UTC", "FREQ=MONTHLY;BYDAY=5MO", 0, 0, NULL, Q_NEXT,
         "2026-03-31T00:00:00Z", 1, "2026-06-29T00:00:00Z", "2026-06-30T00:00:00Z"},
        {"last friday", "UTC", "FREQ=MONTHLY;BYDAY=-1FR", 0, 0, NULL, Q_NEXT,
         "2026-02-01T00:00:00Z", 1, "2026-02-27T00:00:00Z", "2026-02-28T00:00:00Z"},
        {"last friday when five", "UTC", "FREQ=MONTHLY;BYDAY=-1FR", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z"},
        {"fourth friday is not last", "UTC", "FREQ=MONTHLY;BYDAY=4FR", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-23T00:00:00Z", "2026-01-24T00:00:00Z"},
        {"first and last", "UTC", "FREQ=MONTHLY;BYDAY=1MO,-1MO", HM(20, 0), HOURS(2), NULL,
         Q_NEXT, "2026-01-06T00:00:00Z", 1, "2026-01-26T20:00:00Z", "2026-01-26T22:00:00Z"},
        {"yearly last sunday of march", "UTC", "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", 0, 0, NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"},
        {"yearly last sunday of march 2027", "UTC", "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU", 0, 0,
         NULL, Q_NEXT, "2026-04-01T00:00:00Z", 1, "2027-03-28T00:00:00Z",
         "2027-03-29T00:00:00Z"},
        /* Five Sundays in February need a leap year starting on Sunday. */
        {"fifth sunday of february", "UTC", "FREQ=YEARLY;BYMONTH=2;BYDAY=5SU", 0, 0, NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2032-02-29T00:00:00Z", "2032-03-01T00:00:00Z"},
        /* Last weekday of the month via BYSETPOS. Jan 2026 ends on Saturday. */
        {"last weekday", "UTC", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", 0, 0, NULL,
         Q_NEXT, "2026-01-02T00:00:00Z", 1, "2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z"},
        {"second weekday", "UTC", "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=2", 0, 0, NULL,
         Q_NEXT, "2026-02-01T00:00:00Z", 1, "2026-02-03T00:00:00Z", "2026-02-04T00:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_dates_29_to_31(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        {"31st inside", "UTC", "FREQ=MONTHLY;BYMONTHDAY=31", 0, 0, NULL, Q_CONTAINING,
         "2026-01-31T12:00:00Z", 1, "2026-01-31T00:00:00Z", "2026-02-01T00:00:00Z"},
        {"31st skips February", "UTC", "FREQ=MONTHLY;BYMONTHDAY=31", 0, 0, NULL, Q_NEXT,
         "2026-02-01T00:00:00Z", 1, "2026-03-31T00:00:00Z", "2026-04-01T00:00:00Z"},
        {"31st skips April", "UTC", "FREQ=MONTHLY;BYMONTHDAY=31", 0, 0, NULL, Q_NEXT,
         "2026-04-01T00:00:00Z", 1, "2026-05-31T00:00:00Z", "2026-06-01T00:00:00Z"},
        {"not clamped to the 30th", "UTC", "FREQ=MONTHLY;BYMONTHDAY=31", 0, 0, NULL,
         Q_CONTAINING, "2026-04-30T12:00:00Z", 0, NULL, NULL},
        {"30th skips February", "UTC", "FREQ=MONTHLY;BYMONTHDAY=30", 0, 0, NULL, Q_NEXT,
         "2026-02-01T00:00:00Z", 1, "2026-03-30T00:00:00Z", "2026-03-31T00:00:00Z"},
        {"29th skips February 2026", "UTC", "FREQ=MONTHLY;BYMONTHDAY=29", 0, 0, NULL, Q_NEXT,
         "2026-02-01T00:00:00Z", 1, "2026-03-29T00:00:00Z", "2026-03-30T00:00:00Z"},
        {"29-31 merge", "UTC", "FREQ=MONTHLY;BYMONTHDAY=29,30,31", 0, 0, NULL, Q_NEXT,
         "2026-02-01T00:00:00Z", 1, "2026-03-29T00:00:00Z", "2026-04-01T00:00:00Z"},
        {"29-31 in April", "UTC", "FREQ=MONTHLY;BYMONTHDAY=29,30,31", 0, 0, NULL, Q_NEXT,
         "2026-04-01T00:00:00Z", 1, "2026-04-29T00:00:00Z", "2026-05-01T00:00:00Z"},
        /* Five Sundays in February before 2030: none (2032 is the next). */
        {"no selection before UNTIL", "UTC",
         "FREQ=YEARLY;BYMONTH=2;BYDAY=5SU;UNTIL=20300101T000000Z", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 0, NULL, NULL},
    };
    run_cases(cases, N_CASES(cases));
}

/* Rules that can never select a date: compiling may reject them with a
 * message, or queries must answer "none" promptly (no endless search). */
static void test_never_selecting_rules(void **state)
{
    (void)state;
    const char *rules[] = {
        "FREQ=MONTHLY;BYMONTH=4,6,9,11;BYMONTHDAY=31",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30",
        "FREQ=MONTHLY;INTERVAL=12;BYMONTH=7;BYMONTHDAY=1", /* only Januaries */
        "FREQ=YEARLY;INTERVAL=4;BYMONTH=2;BYMONTHDAY=29",  /* 1970 + 4k: never leap */
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;UNTIL=19700105T000000Z",
    };
    for (size_t i = 0; i < N_CASES(rules); i++) {
        sched_spec_t spec = {.time_zone = "Europe/Zurich", .rrule = rules[i]};
        sched_t *s = NULL;
        char err[256] = "";
        sched_time_t now = T("2026-01-01T00:00:00Z");
        int rc = sched_compile(&spec, now, &s, err, sizeof err);
        if (rc == HCP_EINVAL) {
            assert_true(err[0] != '\0');
            continue;
        }
        if (rc != 0)
            fail_msg("sched_compile(%s) = %d: %s", rules[i], rc, err);
        char what[128];
        snprintf(what, sizeof what, "never-selecting %s", rules[i]);
        expect_iv(s, Q_NEXT, now, 0, 0, 0, what);
        expect_iv(s, Q_PREV, now, 0, 0, 0, what);
        expect_iv(s, Q_CONTAINING, now, 0, 0, 0, what);
        expect_permitted(s, T("2028-02-29T12:00:00Z"), 0);
        sched_time_t when;
        assert_int_equal(sched_next_transition(s, now, &when), 0);
        sched_unref(s);
    }
}

static void test_interval_anchoring(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* Daily N: daysSince % N == 0. 2026-01-01 is day 20454: 20454 % 5 == 4,
         * 20454 % 3 == 0. */
        {"daily/5", "UTC", "FREQ=DAILY;INTERVAL=5", 0, 0, NULL, Q_NEXT, "2026-01-01T00:00:00Z",
         1, "2026-01-02T00:00:00Z", "2026-01-03T00:00:00Z"},
        {"daily/5 again", "UTC", "FREQ=DAILY;INTERVAL=5", 0, 0, NULL, Q_NEXT,
         "2026-01-03T00:00:00Z", 1, "2026-01-07T00:00:00Z", "2026-01-08T00:00:00Z"},
        {"daily/5 at anchor", "UTC", "FREQ=DAILY;INTERVAL=5", 0, 0, NULL, Q_CONTAINING,
         "1970-01-01T12:00:00Z", 1, "1970-01-01T00:00:00Z", "1970-01-02T00:00:00Z"},
        {"daily/3", "UTC", "FREQ=DAILY;INTERVAL=3", 0, 0, NULL, Q_CONTAINING,
         "2026-01-01T12:00:00Z", 1, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"},
        {"daily/3 in Kolkata", "Asia/Kolkata", "FREQ=DAILY;INTERVAL=3", HM(10, 0), HOURS(1),
         NULL, Q_NEXT, "2026-01-01T12:00:00Z", 1, "2026-01-04T04:30:00Z",
         "2026-01-04T05:30:00Z"},
        /* Weekly N: weeks from Monday 1969-12-29. 2026-01-05 is in week
         * 2923 (odd), 2026-01-12 in week 2924. */
        {"weekly/2 monday", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-12T00:00:00Z", "2026-01-13T00:00:00Z"},
        {"weekly/2 monday from anchor", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO", 0, 0, NULL,
         Q_NEXT, "1970-01-01T00:00:00Z", 1, "1970-01-12T00:00:00Z", "1970-01-13T00:00:00Z"},
        {"weekly/3 tuesday", "UTC", "FREQ=WEEKLY;INTERVAL=3;BYDAY=TU", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-20T00:00:00Z", "2026-01-21T00:00:00Z"},
        /* Saturdays-only starts 1970-01-03, not on the Thursday anchor. */
        {"saturdays from anchor", "UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 0, NULL, Q_NEXT,
         "1970-01-01T00:00:00Z", 1, "1970-01-03T00:00:00Z", "1970-01-04T00:00:00Z"},
        {"anchor is not an occurrence", "UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 0, NULL,
         Q_CONTAINING, "1970-01-01T12:00:00Z", 0, NULL, NULL},
        {"weekly/2 saturday", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SA", 0, 0, NULL, Q_NEXT,
         "1970-01-04T00:00:00Z", 1, "1970-01-17T00:00:00Z", "1970-01-18T00:00:00Z"},
        /* Sunday 1970-01-04 belongs to week 0 when weeks start on Monday. */
        {"weekly/2 sunday week 0", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU", 0, 0, NULL, Q_NEXT,
         "1970-01-01T00:00:00Z", 1, "1970-01-04T00:00:00Z", "1970-01-05T00:00:00Z"},
        {"weekly/2 sunday 2026", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-04T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekly/2 sat+sun same week", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SA,SU", 0, 0, NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"weekly/2 sunday week 2", "UTC", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU", 0, 0, NULL, Q_NEXT,
         "1970-01-05T00:00:00Z", 1, "1970-01-18T00:00:00Z", "1970-01-19T00:00:00Z"},
        /* Monthly N: monthsSince(1970-01) % N == 0; 2026-01 is month 672. */
        {"monthly/5", "UTC", "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=15", 0, 0, NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-04-15T00:00:00Z", "2026-04-16T00:00:00Z"},
        {"monthly/5 again", "UTC", "FREQ=MONTHLY;INTERVAL=5;BYMONTHDAY=15", 0, 0, NULL, Q_NEXT,
         "2026-04-16T00:00:00Z", 1, "2026-09-15T00:00:00Z", "2026-09-16T00:00:00Z"},
        {"monthly/3 last friday", "UTC", "FREQ=MONTHLY;INTERVAL=3;BYDAY=-1FR", 0, 0, NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-01-30T00:00:00Z", "2026-01-31T00:00:00Z"},
        {"monthly/3 last friday again", "UTC", "FREQ=MONTHLY;INTERVAL=3;BYDAY=-1FR", 0, 0,
         NULL, Q_NEXT, "2026-01-31T00:00:00Z", 1, "2026-04-24T00:00:00Z",
         "2026-04-25T00:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_long_durations_merge(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        /* A daily 25h window never ends: one interval since the anchor. */
        {"daily 25h", "UTC", "FREQ=DAILY", 0, HOURS(25), NULL, Q_CONTAINING,
         "2026-01-01T00:00:00Z", 1, "1970-01-01T00:00:00Z", "+inf"},
        {"daily 25h next", "UTC", "FREQ=DAILY", 0, HOURS(25), NULL, Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "1970-01-01T00:00:00Z", "+inf"},
        {"daily 25h prev", "UTC", "FREQ=DAILY", 0, HOURS(25), NULL, Q_PREV,
         "2026-01-01T00:00:00Z", 1, "1970-01-01T00:00:00Z", "+inf"},
        {"daily 25h Zurich", "Europe/Zurich", "FREQ=DAILY", 0, HOURS(25), NULL, Q_CONTAINING,
         "2026-06-01T00:00:00Z", 1, "1969-12-31T23:00:00Z", "+inf"},
        {"daily 25h until", "UTC", "FREQ=DAILY;UNTIL=20260110T000000Z", 0, HOURS(25), NULL,
         Q_CONTAINING, "2026-01-05T00:00:00Z", 1, "1970-01-01T00:00:00Z",
         "2026-01-11T01:00:00Z"},
        /* An exclusion beyond the look-ahead still gives the true end. */
        {"daily 25h, exclusion in 2040", "UTC", "FREQ=DAILY", 0, HOURS(25),
         "2040-01-01:2040-01-02", Q_NEXT, "2026-01-01T00:00:00Z", 1, "1970-01-01T00:00:00Z",
         "2040-01-01T00:00:00Z"},
        {"daily 25h, after the exclusion", "UTC", "FREQ=DAILY", 0, HOURS(25),
         "2040-01-01:2040-01-02", Q_NEXT, "2040-01-01T12:00:00Z", 1, "2040-01-02T00:00:00Z",
         "+inf"},
        /* Fri, Sat and Sun 18:00 + 30h chain into Fri 18:00 .. Tue 00:00. */
        {"long weekend", "UTC", "FREQ=WEEKLY;BYDAY=FR,SA,SU", HM(18, 0), HOURS(30), NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-01-02T18:00:00Z", "2026-01-06T00:00:00Z"},
        {"50h saturday window", "UTC", "FREQ=WEEKLY;BYDAY=SA", HM(20, 0), HOURS(50), NULL,
         Q_NEXT, "2026-01-01T00:00:00Z", 1, "2026-01-03T20:00:00Z", "2026-01-05T22:00:00Z"},
        /* 23h daily windows leave one-hour gaps. */
        {"daily 23h gap", "UTC", "FREQ=DAILY", HM(22, 0), HOURS(23), NULL, Q_CONTAINING,
         "2026-01-02T21:30:00Z", 0, NULL, NULL},
        {"daily 23h", "UTC", "FREQ=DAILY", HM(22, 0), HOURS(23), NULL, Q_CONTAINING,
         "2026-01-02T12:00:00Z", 1, "2026-01-01T22:00:00Z", "2026-01-02T21:00:00Z"},
        /* Exactly touching windows merge: daily/2 with 48h. */
        {"daily/2 48h touches", "UTC", "FREQ=DAILY;INTERVAL=2", 0, HOURS(48), NULL,
         Q_CONTAINING, "2026-01-01T00:00:00Z", 1, "1970-01-01T00:00:00Z", "+inf"},
        {"daily/2 47h does not", "UTC", "FREQ=DAILY;INTERVAL=2", 0, HOURS(47), NULL,
         Q_CONTAINING, "2026-01-01T12:00:00Z", 1, "2026-01-01T00:00:00Z",
         "2026-01-02T23:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_exclusion_cuts_window(void **state)
{
    (void)state;
    const char *r = "FREQ=WEEKLY;BYDAY=FR";
    const window_case_t cases[] = {
        {"piece before", "UTC", r, HM(12, 0), HOURS(72), "2026-01-03:2026-01-04", Q_NEXT,
         "2026-01-01T00:00:00Z", 1, "2026-01-02T12:00:00Z", "2026-01-03T00:00:00Z"},
        {"piece after", "UTC", r, HM(12, 0), HOURS(72), "2026-01-03:2026-01-04", Q_NEXT,
         "2026-01-03T00:00:00Z", 1, "2026-01-04T00:00:00Z", "2026-01-05T12:00:00Z"},
        {"excluded middle", "UTC", r, HM(12, 0), HOURS(72), "2026-01-03:2026-01-04",
         Q_CONTAINING, "2026-01-03T12:00:00Z", 0, NULL, NULL},
        {"next week untouched", "UTC", r, HM(12, 0), HOURS(72), "2026-01-03:2026-01-04",
         Q_NEXT, "2026-01-06T00:00:00Z", 1, "2026-01-09T12:00:00Z", "2026-01-12T12:00:00Z"},
        {"cut in Zurich local days", "Europe/Zurich", r, HM(12, 0), HOURS(72),
         "2026-01-03:2026-01-04", Q_NEXT, "2026-01-02T23:30:00Z", 1, "2026-01-03T23:00:00Z",
         "2026-01-05T11:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));

    sched_t *s = compile_ok("UTC", r, HM(12, 0), HOURS(72), "2026-01-03:2026-01-04",
                            T("2026-01-01T00:00:00Z"));
    sched_set_t out;
    sched_set_init(&out);
    assert_int_equal(sched_between(s, T("2026-01-01T00:00:00Z"), T("2026-01-08T00:00:00Z"), &out),
                     0);
    const sched_interval_t want[] = {{T("2026-01-02T12:00:00Z"), T("2026-01-03T00:00:00Z")},
                                     {T("2026-01-04T00:00:00Z"), T("2026-01-05T12:00:00Z")}};
    expect_set(&out, want, 2, "between around cut window");
    assert_string_equal(sched_exclusion_reason(s, T("2026-01-03T06:00:00Z")), "reason-0");
    assert_null(sched_exclusion_reason(s, T("2026-01-04T00:00:00Z")));
    assert_null(sched_exclusion_reason(s, T("2026-01-02T23:59:59Z")));
    sched_set_free(&out);
    sched_unref(s);
}

static void test_lookahead_and_until(void **state)
{
    (void)state;
    const char *r = "FREQ=YEARLY;INTERVAL=11;BYMONTH=1;BYMONTHDAY=1";
    const window_case_t cases[] = {
        /* Years 1970 + 11k: 2025, 2036. */
        {"beyond 10 years", "UTC", r, 0, 0, NULL, Q_NEXT, "2025-06-01T00:00:00Z", 0, NULL,
         NULL},
        {"within 10 years", "UTC", r, 0, 0, NULL, Q_NEXT, "2026-01-02T00:00:00Z", 1,
         "2036-01-01T00:00:00Z", "2036-01-02T00:00:00Z"},
        /* UNTIL is inclusive and compared as an instant. */
        {"until includes a start equal to it", "UTC", "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260110T000000Z",
         0, 0, NULL, Q_NEXT, "2026-01-04T00:00:00Z", 1, "2026-01-10T00:00:00Z",
         "2026-01-11T00:00:00Z"},
        {"until ends the rule", "UTC", "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260110T000000Z", 0, 0, NULL,
         Q_NEXT, "2026-01-11T00:00:00Z", 0, NULL, NULL},
        {"until one second early", "UTC", "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260109T235959Z", 0, 0,
         NULL, Q_NEXT, "2026-01-04T00:00:00Z", 0, NULL, NULL},
        {"until in UTC, zone Zurich", "Europe/Zurich",
         "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260109T230000Z", 0, 0, NULL, Q_NEXT,
         "2026-01-04T00:00:00Z", 1, "2026-01-09T23:00:00Z", "2026-01-10T23:00:00Z"},
        {"until in UTC, zone Zurich, early", "Europe/Zurich",
         "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260109T225959Z", 0, 0, NULL, Q_NEXT,
         "2026-01-04T00:00:00Z", 0, NULL, NULL},
        {"until: earlier windows remain", "UTC", "FREQ=WEEKLY;BYDAY=SA;UNTIL=20260110T000000Z",
         0, 0, NULL, Q_PREV, "2030-01-01T00:00:00Z", 1, "2026-01-10T00:00:00Z",
         "2026-01-11T00:00:00Z"},
    };
    run_cases(cases, N_CASES(cases));

    /* The look-ahead boundary itself: a window starting exactly
     * SCHED_LOOKAHEAD after t is not reported, one second less is. */
    sched_time_t w = T("2036-01-01T00:00:00Z");
    sched_t *s = compile_ok("UTC", r, 0, 0, NULL, T("2026-01-01T00:00:00Z"));
    expect_iv(s, Q_NEXT, w - SCHED_LOOKAHEAD, 0, 0, 0, "look-ahead boundary");
    expect_iv(s, Q_NEXT, w - SCHED_LOOKAHEAD + 1, 1, w, T("2036-01-02T00:00:00Z"),
              "look-ahead boundary - 1s");
    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(s, T("2025-06-01T00:00:00Z"), &when), 0);
    sched_unref(s);

    sched_t *a = sched_after(T("2036-01-01T00:00:00Z"));
    assert_non_null(a);
    expect_iv(a, Q_NEXT, w - SCHED_LOOKAHEAD, 0, 0, 0, "after() beyond look-ahead");
    expect_iv(a, Q_NEXT, w - SCHED_LOOKAHEAD + 1, 1, w, SCHED_POS_INF, "after() within");
    sched_unref(a);
}

static void test_prev(void **state)
{
    (void)state;
    const window_case_t cases[] = {
        {"after a weekend", "UTC", WEEKEND, 0, 0, NULL, Q_PREV, "2026-01-07T00:00:00Z", 1,
         "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"inside", "UTC", WEEKEND, 0, 0, NULL, Q_PREV, "2026-01-04T12:00:00Z", 1,
         "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"at the start", "UTC", WEEKEND, 0, 0, NULL, Q_PREV, "2026-01-03T00:00:00Z", 1,
         "2026-01-03T00:00:00Z", "2026-01-05T00:00:00Z"},
        {"one second before", "UTC", WEEKEND, 0, 0, NULL, Q_PREV, "2026-01-02T23:59:59Z", 1,
         "2025-12-27T00:00:00Z", "2025-12-29T00:00:00Z"},
        {"before the first occurrence", "UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 0, NULL, Q_PREV,
         "1970-01-02T00:00:00Z", 0, NULL, NULL},
    };
    run_cases(cases, N_CASES(cases));
}

static void test_transitions_and_between(void **state)
{
    (void)state;
    sched_t *s = compile_ok("UTC", WEEKEND, 0, 0, NULL, T("2026-01-01T00:00:00Z"));
    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(s, T("2026-01-01T00:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-03T00:00:00Z"));
    assert_int_equal(sched_next_transition(s, T("2026-01-03T00:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-05T00:00:00Z"));
    assert_int_equal(sched_prev_transition(s, T("2026-01-04T00:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-03T00:00:00Z"));
    /* "at or before t": t itself. */
    assert_int_equal(sched_prev_transition(s, T("2026-01-05T00:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-05T00:00:00Z"));
    assert_int_equal(sched_prev_transition(s, T("2026-01-04T23:59:59Z"), &when), 1);
    assert_int_equal(when, T("2026-01-03T00:00:00Z"));

    sched_set_t out;
    sched_set_init(&out);
    assert_int_equal(
        sched_between(s, T("2026-01-04T12:00:00Z"), T("2026-01-10T12:00:00Z"), &out), 0);
    const sched_interval_t want[] = {{T("2026-01-04T12:00:00Z"), T("2026-01-05T00:00:00Z")},
                                     {T("2026-01-10T00:00:00Z"), T("2026-01-10T12:00:00Z")}};
    expect_set(&out, want, 2, "between clipped");
    /* Appends as a union to what is already there. */
    assert_int_equal(
        sched_between(s, T("2026-01-10T06:00:00Z"), T("2026-01-17T06:00:00Z"), &out), 0);
    const sched_interval_t want2[] = {{T("2026-01-04T12:00:00Z"), T("2026-01-05T00:00:00Z")},
                                      {T("2026-01-10T00:00:00Z"), T("2026-01-12T00:00:00Z")},
                                      {T("2026-01-17T00:00:00Z"), T("2026-01-17T06:00:00Z")}};
    expect_set(&out, want2, 3, "between appended");
    sched_set_clear(&out);
    assert_int_equal(
        sched_between(s, T("2026-01-05T00:00:00Z"), T("2026-01-10T00:00:00Z"), &out), 0);
    expect_set(&out, NULL, 0, "between in a gap");
    /* Whole years: 52 or 53 weekends. */
    assert_int_equal(
        sched_between(s, T("2026-01-01T00:00:00Z"), T("2027-01-01T00:00:00Z"), &out), 0);
    assert_int_equal(out.len, 52);
    sched_set_free(&out);
    sched_unref(s);

    /* Exclusions only: transitions at the exclusion boundaries. */
    s = compile_ok("UTC", NULL, 0, 0, "2026-01-10:2026-01-12", T("2026-01-01T00:00:00Z"));
    assert_int_equal(sched_prev_transition(s, T("2026-01-11T05:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-10T00:00:00Z"));
    assert_int_equal(sched_next_transition(s, T("2026-01-11T05:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-12T00:00:00Z"));
    assert_int_equal(sched_next_transition(s, T("2026-01-12T00:00:00Z"), &when), 0);
    assert_int_equal(sched_prev_transition(s, T("2026-01-01T00:00:00Z"), &when), 0);
    sched_set_init(&out);
    assert_int_equal(
        sched_between(s, T("2026-01-01T00:00:00Z"), T("2026-02-01T00:00:00Z"), &out), 0);
    const sched_interval_t want3[] = {{T("2026-01-01T00:00:00Z"), T("2026-01-10T00:00:00Z")},
                                      {T("2026-01-12T00:00:00Z"), T("2026-02-01T00:00:00Z")}};
    expect_set(&out, want3, 2, "between exclusions only");
    sched_set_free(&out);
    sched_unref(s);

    /* Daily 25h: since 1970 permitted; the 1970 transition is visible from
     * 1975 and nothing changes afterwards. */
    s = compile_ok("UTC", "FREQ=DAILY", 0, HOURS(25), NULL, T("2026-01-01T00:00:00Z"));
    assert_int_equal(sched_prev_transition(s, T("1975-01-01T00:00:00Z"), &when), 1);
    assert_int_equal(when, 0);
    assert_int_equal(sched_next_transition(s, T("2026-01-01T00:00:00Z"), &when), 0);
    sched_unref(s);
}

/* The exclusion anywhere in a composed timeline, and the end of the span of
 * overlapping and touching exclusions around the instant. */
static void test_exclusion_at(void **state)
{
    (void)state;
    sched_exclusion_t ex[3] = {
        {tu_day("2026-12-24"), tu_day("2026-12-27"), "year-end freeze"},
        {tu_day("2026-12-26"), tu_day("2026-12-29"), "inventory"},
        {tu_day("2026-12-29"), tu_day("2027-01-02"), "new year"},
    };
    sched_spec_t spec = {.time_zone = "UTC", .rrule = "FREQ=DAILY", .exclusions = ex,
                         .n_exclusions = 3};
    sched_t *s = NULL, *wk = NULL, *both, *either;
    sched_spec_t weekly = {.time_zone = "UTC", .rrule = "FREQ=WEEKLY;BYDAY=SA"};
    sched_time_t until = 0;
    char err[128] = "";
    assert_int_equal(sched_compile(&spec, T("2026-01-01T00:00:00Z"), &s, err, sizeof err), 0);
    assert_int_equal(sched_compile(&weekly, T("2026-01-01T00:00:00Z"), &wk, err, sizeof err), 0);
    assert_string_equal(sched_exclusion_at(s, T("2026-12-25T12:00:00Z"), &until),
                        "year-end freeze");
    assert_int_equal(until, T("2027-01-02T00:00:00Z"));
    assert_string_equal(sched_exclusion_at(s, T("2026-12-30T00:00:00Z"), &until), "new year");
    assert_int_equal(until, T("2027-01-02T00:00:00Z"));
    until = 7;
    assert_null(sched_exclusion_at(s, T("2027-01-02T00:00:00Z"), &until));
    assert_int_equal(until, 7); /* untouched */
    assert_null(sched_exclusion_at(wk, T("2026-12-25T12:00:00Z"), NULL));
    /* either operand of an intersection or a union */
    both = sched_and(wk, s);
    either = sched_or(sched_never(), s);
    assert_string_equal(sched_exclusion_at(both, T("2026-12-26T12:00:00Z"), NULL),
                        "year-end freeze");
    assert_string_equal(sched_exclusion_at(either, T("2026-12-28T12:00:00Z"), &until),
                        "inventory");
    assert_int_equal(until, T("2027-01-02T00:00:00Z"));
    assert_null(sched_exclusion_at(sched_always(), T("2026-12-26T12:00:00Z"), NULL));
    sched_unref(both);
    sched_unref(either);
    sched_unref(wk);
    sched_unref(s);
}

static void test_exclusion_reason(void **state)
{
    (void)state;
    sched_exclusion_t ex[2] = {
        {tu_day("2026-01-10"), tu_day("2026-01-12"), "quarter-end freeze"},
        {tu_day("2026-02-01"), tu_day("2026-02-02"), NULL},
    };
    sched_spec_t spec = {.time_zone = "Europe/Zurich", .rrule = "FREQ=DAILY",
                         .start_minute = 0, .duration = 0, .exclusions = ex,
                         .n_exclusions = 2};
    sched_t *s = NULL;
    char err[128] = "";
    char reason[32];
    snprintf(reason, sizeof reason, "%s", "quarter-end freeze");
    ex[0].reason = reason; /* the schedule must copy it */
    assert_int_equal(sched_compile(&spec, T("2026-01-01T00:00:00Z"), &s, err, sizeof err), 0);
    memset(reason, 'x', sizeof reason - 1);
    /* Local midnight of 2026-01-10 in Zurich is 2026-01-09T23:00Z. */
    assert_null(sched_exclusion_reason(s, T("2026-01-09T22:59:59Z")));
    assert_string_equal(sched_exclusion_reason(s, T("2026-01-09T23:00:00Z")),
                        "quarter-end freeze");
    assert_string_equal(sched_exclusion_reason(s, T("2026-01-11T22:59:59Z")),
                        "quarter-end freeze");
    assert_null(sched_exclusion_reason(s, T("2026-01-11T23:00:00Z")));
    assert_string_equal(sched_exclusion_reason(s, T("2026-02-01T12:00:00Z")), "");
    expect_permitted(s, T("2026-01-10T12:00:00Z"), 0);
    expect_permitted(s, T("2026-01-12T12:00:00Z"), 1);

    sched_t *always = sched_always();
    sched_t *other = compile_ok("UTC", "FREQ=DAILY", 0, 0, NULL, T("2026-01-01T00:00:00Z"));
    sched_t *both = sched_and(s, other);
    sched_unref(other);
    assert_null(sched_exclusion_reason(always, T("2026-01-10T12:00:00Z")));
    assert_null(sched_exclusion_reason(both, T("2026-01-10T12:00:00Z")));
    sched_unref(both);
    sched_unref(always);
    sched_unref(s);
}

/* ---- combinators --------------------------------------------------------- */

static void test_and_never_overlapping(void **state)
{
    (void)state;
    sched_time_t now = T("2026-01-01T00:00:00Z");
    sched_t *sat = compile_ok("UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 0, NULL, now);
    sched_t *sun = compile_ok("UTC", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL, now);
    sched_t *both = sched_and(sat, sun);
    assert_non_null(both);
    sched_unref(sat); /* the intersection holds its own references */
    sched_unref(sun);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    expect_iv(both, Q_NEXT, now, 0, 0, 0, "sat and sun");
    expect_iv(both, Q_CONTAINING, T("2026-01-04T00:00:00Z"), 0, 0, 0, "sat and sun at touch");
    expect_permitted(both, T("2026-01-03T23:59:59Z"), 0);
    expect_permitted(both, T("2026-01-04T00:00:00Z"), 0);
    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(both, now, &when), 0);
    expect_iv(both, Q_PREV, now, 0, 0, 0, "sat and sun prev");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    /* 10 years hold ~520 weekends: anything beyond a few seconds (even
     * under valgrind) means the search is not bounded sensibly. */
    if (secs > 20.0)
        fail_msg("empty intersection took %.1f s", secs);
    sched_unref(both);

    /* Yearly never-coinciding dates in different rules. */
    sched_t *a = compile_ok("UTC", "FREQ=YEARLY;BYMONTH=1;BYMONTHDAY=1", 0, HOURS(2), NULL, now);
    sched_t *b = compile_ok("UTC", "FREQ=YEARLY;BYMONTH=7;BYMONTHDAY=1", 0, HOURS(2), NULL, now);
    both = sched_and(a, b);
    expect_iv(both, Q_NEXT, now, 0, 0, 0, "january and july");
    sched_unref(both);
    sched_unref(a);
    sched_unref(b);
}

static void test_and_or(void **state)
{
    (void)state;
    sched_time_t now = T("2026-01-01T00:00:00Z");
    /* NodePool style: weekend policy within a nightly cluster window. */
    sched_t *np = compile_ok("UTC", WEEKEND, 0, 0, NULL, now);
    sched_t *hc = compile_ok("UTC", "FREQ=DAILY", HM(2, 0), HOURS(4), NULL, now);
    sched_t *x = sched_and(np, hc);
    expect_iv(x, Q_NEXT, now, 1, T("2026-01-03T02:00:00Z"), T("2026-01-03T06:00:00Z"), "np&hc");
    expect_iv(x, Q_NEXT, T("2026-01-03T06:00:00Z"), 1, T("2026-01-04T02:00:00Z"),
              T("2026-01-04T06:00:00Z"), "np&hc 2");
    expect_iv(x, Q_NEXT, T("2026-01-04T06:00:00Z"), 1, T("2026-01-10T02:00:00Z"),
              T("2026-01-10T06:00:00Z"), "np&hc 3");
    expect_iv(x, Q_PREV, T("2026-01-05T00:00:00Z"), 1, T("2026-01-04T02:00:00Z"),
              T("2026-01-04T06:00:00Z"), "np&hc prev");
    sched_unref(x);

    /* Saturday UTC and Sunday in Kolkata (+05:30) overlap 18:30-24:00Z. */
    sched_t *sat = compile_ok("UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 0, NULL, now);
    sched_t *sun_in = compile_ok("Asia/Kolkata", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL, now);
    x = sched_and(sat, sun_in);
    expect_iv(x, Q_NEXT, now, 1, T("2026-01-03T18:30:00Z"), T("2026-01-04T00:00:00Z"),
              "sat utc & sun kolkata");
    sched_unref(x);

    /* Union merges touching windows. */
    sched_t *sun = compile_ok("UTC", "FREQ=WEEKLY;BYDAY=SU", 0, 0, NULL, now);
    x = sched_or(sat, sun);
    expect_iv(x, Q_NEXT, now, 1, T("2026-01-03T00:00:00Z"), T("2026-01-05T00:00:00Z"), "sat|sun");
    expect_iv(x, Q_CONTAINING, T("2026-01-04T00:00:00Z"), 1, T("2026-01-03T00:00:00Z"),
              T("2026-01-05T00:00:00Z"), "sat|sun containing touch");
    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(x, T("2026-01-03T00:00:00Z"), &when), 1);
    assert_int_equal(when, T("2026-01-05T00:00:00Z"));
    sched_unref(x);

    /* Identities. */
    sched_t *always = sched_always();
    sched_t *never = sched_never();
    x = sched_and(np, always);
    expect_iv(x, Q_NEXT, now, 1, T("2026-01-03T00:00:00Z"), T("2026-01-05T00:00:00Z"), "np&1");
    sched_unref(x);
    x = sched_or(np, never);
    expect_iv(x, Q_NEXT, now, 1, T("2026-01-03T00:00:00Z"), T("2026-01-05T00:00:00Z"), "np|0");
    sched_unref(x);
    x = sched_and(np, never);
    expect_iv(x, Q_NEXT, now, 0, 0, 0, "np&0");
    sched_unref(x);
    x = sched_or(np, always);
    expect_iv(x, Q_CONTAINING, now, 1, SCHED_NEG_INF, SCHED_POS_INF, "np|1");
    sched_unref(x);
    expect_iv(always, Q_NEXT, now, 1, SCHED_NEG_INF, SCHED_POS_INF, "always");
    expect_iv(always, Q_PREV, now, 1, SCHED_NEG_INF, SCHED_POS_INF, "always prev");
    expect_iv(never, Q_NEXT, now, 0, 0, 0, "never");
    expect_permitted(always, now, 1);
    expect_permitted(never, now, 0);
    assert_int_equal(sched_next_transition(always, now, &when), 0);
    assert_int_equal(sched_prev_transition(always, now, &when), 0);

    /* Nested: (sat | sun) & hc, via sched_ref'd operands. */
    sched_t *wk = sched_or(sched_ref(sat), sun);
    sched_unref(sat); /* drop the extra reference taken above */
    x = sched_and(wk, hc);
    expect_iv(x, Q_NEXT, T("2026-01-03T03:00:00Z"), 1, T("2026-01-03T02:00:00Z"),
              T("2026-01-03T06:00:00Z"), "nested");
    sched_unref(x);
    sched_unref(wk);

    sched_unref(always);
    sched_unref(never);
    sched_unref(sat);
    sched_unref(sun);
    sched_unref(sun_in);
    sched_unref(np);
    sched_unref(hc);
    sched_unref(NULL);
}

static void test_before_after(void **state)
{
    (void)state;
    sched_time_t t1 = T("2026-03-01T12:00:00Z"), t2 = T("2026-03-05T00:00:00Z");
    sched_t *b = sched_before(t1);
    sched_t *a = sched_after(t2);
    assert_non_null(b);
    assert_non_null(a);
    expect_permitted(b, t1 - 1, 1);
    expect_permitted(b, t1, 0);
    expect_permitted(a, t2 - 1, 0);
    expect_permitted(a, t2, 1);
    expect_iv(b, Q_CONTAINING, t1 - 100, 1, SCHED_NEG_INF, t1, "before containing");
    expect_iv(b, Q_NEXT, t1, 0, 0, 0, "before: nothing after");
    expect_iv(b, Q_PREV, t1 + 100, 1, SCHED_NEG_INF, t1, "before prev");
    expect_iv(a, Q_NEXT, t2 - 100, 1, t2, SCHED_POS_INF, "after next");
    expect_iv(a, Q_CONTAINING, t2 - 1, 0, 0, 0, "after containing before start");
    expect_iv(a, Q_PREV, t2 - 1, 0, 0, 0, "after prev before start");

    sched_time_t when = 0;
    assert_int_equal(sched_next_transition(b, t1 - 5, &when), 1);
    assert_int_equal(when, t1);
    assert_int_equal(sched_next_transition(b, t1, &when), 0);
    assert_int_equal(sched_prev_transition(b, t1 - 1, &when), 0);
    assert_int_equal(sched_prev_transition(a, t2 + 7, &when), 1);
    assert_int_equal(when, t2);

    /* [t1, t2) and its complement. */
    sched_t *a1 = sched_after(t1);
    sched_t *b2 = sched_before(t2);
    sched_t *mid = sched_and(a1, b2);
    expect_iv(mid, Q_NEXT, T("2026-01-01T00:00:00Z"), 1, t1, t2, "after & before");
    sched_t *outside = sched_or(b, a);
    expect_iv(outside, Q_CONTAINING, t1 - 1, 1, SCHED_NEG_INF, t1, "before | after, left");
    expect_iv(outside, Q_NEXT, t1, 1, t2, SCHED_POS_INF, "before | after, right");
    /* before(t1) | after(t1) is everything. */
    sched_t *all = sched_or(b, a1);
    expect_iv(all, Q_CONTAINING, t1, 1, SCHED_NEG_INF, SCHED_POS_INF, "before|after same t");

    /* PermissiveUntil-like: before(t1) | (after(t1) & weekend). */
    sched_t *wk = compile_ok("UTC", WEEKEND, 0, 0, NULL, t1);
    sched_t *tail = sched_and(a1, wk);
    sched_t *pu = sched_or(b, tail);
    /* 2026-03-01 is a Sunday: permitted until Monday 00:00 with no seam. */
    expect_iv(pu, Q_CONTAINING, t1 - 3600, 1, SCHED_NEG_INF, T("2026-03-02T00:00:00Z"),
              "permissive until, then weekend");
    expect_iv(pu, Q_NEXT, T("2026-03-02T00:00:00Z"), 1, T("2026-03-07T00:00:00Z"),
              T("2026-03-09T00:00:00Z"), "permissive until, next weekend");

    sched_unref(pu);
    sched_unref(tail);
    sched_unref(wk);
    sched_unref(all);
    sched_unref(outside);
    sched_unref(mid);
    sched_unref(a1);
    sched_unref(b2);
    sched_unref(a);
    sched_unref(b);
}

/* ---- interval sets ------------------------------------------------------- */

static void set_of(sched_set_t *s, const sched_interval_t *iv, size_t n)
{
    sched_set_init(s);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(sched_set_add(s, iv[i].start, iv[i].end), 0);
}

static void test_set_add(void **state)
{
    (void)state;
    sched_set_t s;
    const sched_interval_t in[] = {{30, 40}, {10, 20}, {20, 30}, {5, 5}, {7, 6}, {50, 60}, {0, 1}};
    set_of(&s, in, N_CASES(in));
    const sched_interval_t want[] = {{0, 1}, {10, 40}, {50, 60}};
    expect_set(&s, want, 3, "add merges touching, drops empty");
    assert_int_equal(sched_set_add(&s, 35, 55), 0);
    const sched_interval_t want2[] = {{0, 1}, {10, 60}};
    expect_set(&s, want2, 2, "add bridging");
    assert_int_equal(sched_set_add(&s, SCHED_NEG_INF, 2), 0);
    assert_int_equal(sched_set_add(&s, 100, SCHED_POS_INF), 0);
    const sched_interval_t want3[] = {{SCHED_NEG_INF, 2}, {10, 60}, {100, SCHED_POS_INF}};
    expect_set(&s, want3, 3, "add unbounded");
    assert_int_equal(sched_set_add(&s, -5, 200), 0);
    const sched_interval_t want4[] = {{SCHED_NEG_INF, SCHED_POS_INF}};
    expect_set(&s, want4, 1, "add covering");
    sched_set_clear(&s);
    assert_int_equal(s.len, 0);
    /* Many adds in reverse order: grows and stays sorted. */
    for (int i = 999; i >= 0; i--)
        assert_int_equal(sched_set_add(&s, i * 10, i * 10 + 5), 0);
    assert_int_equal(s.len, 1000);
    for (size_t i = 0; i < s.len; i++) {
        assert_int_equal(s.iv[i].start, (sched_time_t)i * 10);
        assert_int_equal(s.iv[i].end, (sched_time_t)i * 10 + 5);
    }
    assert_int_equal(sched_set_add(&s, 3, 9995), 0);
    const sched_interval_t want5[] = {{0, 9995}};
    expect_set(&s, want5, 1, "add swallowing 1000");
    sched_set_free(&s);
}

static void test_set_ops(void **state)
{
    (void)state;
    sched_set_t a, b, out;
    const sched_interval_t ia[] = {{0, 10}, {20, 30}};
    const sched_interval_t ib[] = {{10, 15}, {40, 50}};
    set_of(&a, ia, 2);
    set_of(&b, ib, 2);
    sched_set_init(&out);
    assert_int_equal(sched_set_add(&out, 1000, 2000), 0); /* replaced by the ops */

    assert_int_equal(sched_set_union(&a, &b, &out), 0);
    const sched_interval_t u[] = {{0, 15}, {20, 30}, {40, 50}};
    expect_set(&out, u, 3, "union merges touching");

    assert_int_equal(sched_set_intersect(&a, &b, &out), 0);
    expect_set(&out, NULL, 0, "intersect of touching is empty");

    sched_set_t c;
    const sched_interval_t ic[] = {{5, 25}};
    set_of(&c, ic, 1);
    assert_int_equal(sched_set_intersect(&a, &c, &out), 0);
    const sched_interval_t i1[] = {{5, 10}, {20, 25}};
    expect_set(&out, i1, 2, "intersect");

    assert_int_equal(sched_set_subtract(&a, &c, &out), 0);
    const sched_interval_t s1[] = {{0, 5}, {25, 30}};
    expect_set(&out, s1, 2, "subtract");
    assert_int_equal(sched_set_subtract(&c, &a, &out), 0);
    const sched_interval_t s2[] = {{10, 20}};
    expect_set(&out, s2, 1, "subtract leaves the gap");
    assert_int_equal(sched_set_subtract(&a, &a, &out), 0);
    expect_set(&out, NULL, 0, "a minus a");
    assert_int_equal(sched_set_subtract(&a, &b, &out), 0);
    expect_set(&out, ia, 2, "subtract touching removes nothing");

    sched_set_t all, empty;
    const sched_interval_t iall[] = {{SCHED_NEG_INF, SCHED_POS_INF}};
    set_of(&all, iall, 1);
    sched_set_init(&empty);
    assert_int_equal(sched_set_intersect(&a, &all, &out), 0);
    expect_set(&out, ia, 2, "a and all");
    assert_int_equal(sched_set_union(&a, &empty, &out), 0);
    expect_set(&out, ia, 2, "a or empty");
    assert_int_equal(sched_set_intersect(&a, &empty, &out), 0);
    expect_set(&out, NULL, 0, "a and empty");
    assert_int_equal(sched_set_subtract(&all, &a, &out), 0);
    const sched_interval_t comp[] = {{SCHED_NEG_INF, 0}, {10, 20}, {30, SCHED_POS_INF}};
    expect_set(&out, comp, 3, "complement");
    assert_int_equal(sched_set_subtract(&empty, &a, &out), 0);
    expect_set(&out, NULL, 0, "empty minus a");

    /* One interval of b spanning several of a, and vice versa. */
    sched_set_t m;
    const sched_interval_t im[] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}};
    set_of(&m, im, 4);
    sched_set_t w;
    const sched_interval_t iw[] = {{2, 7}};
    set_of(&w, iw, 1);
    assert_int_equal(sched_set_intersect(&m, &w, &out), 0);
    const sched_interval_t mw[] = {{3, 4}, {5, 6}};
    expect_set(&out, mw, 2, "intersect many");
    assert_int_equal(sched_set_union(&m, &w, &out), 0);
    const sched_interval_t umw[] = {{1, 8}};
    expect_set(&out, umw, 1, "union bridging");
    assert_int_equal(sched_set_subtract(&w, &m, &out), 0);
    const sched_interval_t smw[] = {{2, 3}, {4, 5}, {6, 7}};
    expect_set(&out, smw, 3, "subtract many");

    sched_set_free(&a);
    sched_set_free(&b);
    sched_set_free(&c);
    sched_set_free(&all);
    sched_set_free(&empty);
    sched_set_free(&m);
    sched_set_free(&w);
    sched_set_free(&out);
}

static void test_set_search(void **state)
{
    (void)state;
    sched_set_t s;
    sched_set_init(&s);
    assert_int_equal(sched_set_search(&s, 0), 0);
    const sched_interval_t in[] = {{10, 20}, {30, 40}};
    sched_set_free(&s);
    set_of(&s, in, 2);
    assert_int_equal(sched_set_search(&s, 5), 0);
    assert_int_equal(sched_set_search(&s, 10), 0);
    assert_int_equal(sched_set_search(&s, 19), 0);
    assert_int_equal(sched_set_search(&s, 20), 1);
    assert_int_equal(sched_set_search(&s, 25), 1);
    assert_int_equal(sched_set_search(&s, 39), 1);
    assert_int_equal(sched_set_search(&s, 40), 2);
    assert_int_equal(sched_set_search(&s, SCHED_NEG_INF), 0);
    assert_int_equal(sched_set_search(&s, SCHED_POS_INF), 2);
    sched_set_clear(&s);
    for (int i = 0; i < 1000; i++)
        assert_int_equal(sched_set_add(&s, i * 10, i * 10 + 5), 0);
    for (int i = 0; i < 1000; i++) {
        assert_int_equal(sched_set_search(&s, i * 10 + 4), (size_t)i);
        assert_int_equal(sched_set_search(&s, i * 10 + 5), (size_t)i + 1);
    }
    sched_set_free(&s);
}

/* ---- validation ------------------------------------------------------------ */

static void test_rrule_check_accepts(void **state)
{
    (void)state;
    const char *ok[] = {
        "FREQ=DAILY",
        "FREQ=DAILY;INTERVAL=2",
        "FREQ=DAILY;INTERVAL=730",
        "FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR",
        "FREQ=DAILY;BYMONTH=1,7;BYMONTHDAY=1",
        "FREQ=WEEKLY;BYDAY=SA,SU",
        "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;WKST=MO",
        "FREQ=WEEKLY;BYDAY=SA;UNTIL=20301231T000000Z",
        "FREQ=WEEKLY;BYMONTH=12;BYDAY=FR",
        "FREQ=MONTHLY;BYMONTHDAY=29,30,31",
        "FREQ=MONTHLY;INTERVAL=3;BYDAY=1MO,-1FR",
        "FREQ=MONTHLY;BYDAY=+2TU",
        "FREQ=MONTHLY;BYDAY=5MO",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "FREQ=MONTHLY;BYDAY=FR;BYMONTHDAY=13",
        "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
        "FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU",
        "FREQ=YEARLY;BYMONTH=11;BYDAY=TH;BYSETPOS=4",
        "FREQ=YEARLY;INTERVAL=2;BYMONTH=6;BYMONTHDAY=1;UNTIL=20401231T235959Z",
        "BYDAY=SA,SU;FREQ=WEEKLY",
    };
    for (size_t i = 0; i < N_CASES(ok); i++) {
        char err[256] = "";
        int rc = sched_rrule_check(ok[i], err, sizeof err);
        if (rc != 0)
            fail_msg("sched_rrule_check(\"%s\") = %d (%s), want 0", ok[i], rc, err);
    }
}

static void test_rrule_check_rejects(void **state)
{
    (void)state;
    const struct {
        const char *rrule;
        const char *names; /* substring the message must contain, or NULL */
    } bad[] = {
        {"FREQ=DAILY;COUNT=10", "COUNT"},
        {"FREQ=DAILY;BYHOUR=3", "BYHOUR"},
        {"FREQ=DAILY;BYMINUTE=30", "BYMINUTE"},
        {"FREQ=DAILY;BYSECOND=30", "BYSECOND"},
        {"FREQ=YEARLY;BYWEEKNO=20", "BYWEEKNO"},
        {"FREQ=YEARLY;BYYEARDAY=100", "BYYEARDAY"},
        {"FREQ=HOURLY", "HOURLY"},
        {"FREQ=MINUTELY", "MINUTELY"},
        {"FREQ=SECONDLY", "SECONDLY"},
        {"FREQ=HOURLY;INTERVAL=24", "HOURLY"},
        {"DTSTART=19700101T000000Z;FREQ=DAILY", "DTSTART"},
        {"FREQ=DAILY;DTSTART=20260101T000000Z", "DTSTART"},
        {"DTSTART:19700101T000000Z\nRRULE:FREQ=DAILY", NULL},
        {"FREQ=WEEKLY;BYDAY=1MO", "BYDAY"},
        {"FREQ=WEEKLY;BYDAY=-1FR", "BYDAY"},
        {"FREQ=DAILY;BYDAY=2TU", "BYDAY"},
        {"FREQ=WEEKLY;BYDAY=MO;BYSETPOS=1", "BYSETPOS"},
        {"FREQ=DAILY;BYSETPOS=-1", "BYSETPOS"},
        {"FREQ=DAILY;X-NAME=1", "X-NAME"},
        {"FREQ=DAILY;RSCALE=GREGORIAN", "RSCALE"},
        {"FREQ=FORTNIGHTLY", "FORTNIGHTLY"},
        {"BYDAY=MO", "FREQ"},
        {"", NULL},
        {"hello", NULL},
        {"FREQ=", NULL},
        {"FREQ", NULL},
        {";;;", NULL},
        {"FREQ=DAILY;INTERVAL=0", "INTERVAL"},
        {"FREQ=DAILY;INTERVAL=-1", "INTERVAL"},
        {"FREQ=DAILY;INTERVAL=abc", "INTERVAL"},
        {"FREQ=WEEKLY;BYDAY=XX", "BYDAY"},
        {"FREQ=MONTHLY;BYDAY=6MO", "BYDAY"},
        {"FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY"},
        {"FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY"},
        {"FREQ=YEARLY;BYMONTH=13", "BYMONTH"},
        {"FREQ=YEARLY;BYMONTH=0", "BYMONTH"},
        {"FREQ=DAILY;UNTIL=garbage", "UNTIL"},
        {"FREQ=DAILY;WKST=XX", "WKST"},
        {"FREQ=DAILY;FREQ=WEEKLY", "FREQ"},
        {"FREQ=DAILY\nFREQ=WEEKLY", NULL},
    };
    for (size_t i = 0; i < N_CASES(bad); i++) {
        char err[256] = "";
        int rc = sched_rrule_check(bad[i].rrule, err, sizeof err);
        if (rc != HCP_EINVAL)
            fail_msg("sched_rrule_check(\"%s\") = %d, want HCP_EINVAL", bad[i].rrule, rc);
        if (err[0] == '\0')
            fail_msg("sched_rrule_check(\"%s\"): empty error message", bad[i].rrule);
        if (bad[i].names != NULL && strstr(err, bad[i].names) == NULL)
            fail_msg("sched_rrule_check(\"%s\"): message \"%s\" does not name %s", bad[i].rrule,
                     err, bad[i].names);
    }
    /* A short buffer is truncated, never overrun. */
    char small[8];
    memset(small, 'Z', sizeof small);
    assert_int_equal(sched_rrule_check("FREQ=DAILY;COUNT=10", small, 6), HCP_EINVAL);
    assert_true(memchr(small, '\0', 6) != NULL);
    assert_int_equal(small[6], 'Z');
    assert_int_equal(small[7], 'Z');
}

static void test_compile_rejects(void **state)
{
    (void)state;
    const struct {
        const char *tz;
        const char *rrule;
        const char *names;
    } bad[] = {
        {"Mars/Olympus_Mons", "FREQ=DAILY", "Mars/Olympus_Mons"},
        {"Europe/Zurch", NULL, "Europe/Zurch"},
        {"../../../../etc/passwd", "FREQ=DAILY", NULL},
        {"/etc/localtime", "FREQ=DAILY", NULL},
        {"UTC", "FREQ=DAILY;COUNT=3", "COUNT"},
        {"UTC", "FREQ=HOURLY", "HOURLY"},
    };
    for (size_t i = 0; i < N_CASES(bad); i++) {
        sched_exclusion_t ex = {tu_day("2026-01-01"), tu_day("2026-01-02"), NULL};
        sched_spec_t spec = {.time_zone = bad[i].tz, .rrule = bad[i].rrule,
                             .exclusions = &ex, .n_exclusions = 1};
        sched_t *s = NULL;
        char err[256] = "";
        int rc = sched_compile(&spec, T("2026-01-01T00:00:00Z"), &s, err, sizeof err);
        if (rc != HCP_EINVAL)
            fail_msg("sched_compile(tz=%s, rrule=%s) = %d, want HCP_EINVAL", bad[i].tz,
                     bad[i].rrule ? bad[i].rrule : "(null)", rc);
        if (err[0] == '\0')
            fail_msg("sched_compile(tz=%s): empty error message", bad[i].tz);
        if (bad[i].names != NULL && strstr(err, bad[i].names) == NULL)
            fail_msg("sched_compile(tz=%s): message \"%s\" does not name %s", bad[i].tz, err,
                     bad[i].names);
        if (rc == 0)
            sched_unref(s);
    }
    /* NULL and "" mean UTC. */
    const char *utc_names[] = {NULL, "", "UTC", "Etc/UTC"};
    for (size_t i = 0; i < N_CASES(utc_names); i++) {
        sched_t *s = compile_ok(utc_names[i], WEEKEND, 0, 0, NULL, T("2026-01-01T00:00:00Z"));
        expect_iv(s, Q_NEXT, T("2026-01-01T00:00:00Z"), 1, T("2026-01-03T00:00:00Z"),
                  T("2026-01-05T00:00:00Z"), "UTC spelled differently");
        sched_unref(s);
    }
    sched_time_t t;
    assert_int_equal(sched_local_to_utc("Mars/Olympus_Mons", 0, 0, &t), HCP_EINVAL);
    int32_t day;
    int sod, off;
    assert_int_equal(sched_utc_to_local("Mars/Olympus_Mons", 0, &day, &sod, &off), HCP_EINVAL);
}

/* ---- time helpers ---------------------------------------------------------- */

static void test_civil_days(void **state)
{
    (void)state;
    assert_int_equal(sched_days_from_civil(1970, 1, 1), 0);
    assert_int_equal(sched_days_from_civil(1969, 12, 31), -1);
    assert_int_equal(sched_days_from_civil(2000, 2, 29), 11016);
    assert_int_equal(sched_days_from_civil(2026, 1, 1), 20454);
    assert_int_equal(sched_days_from_civil(9999, 12, 31), 2932896);
    for (int32_t d = -800000; d <= 3000000; d += 17) {
        int y, m, dd, y2, m2, d2;
        sched_civil_from_days(d, &y, &m, &dd);
        tu_civil_from_days(d, &y2, &m2, &d2);
        if (y != y2 || m != m2 || dd != d2)
            fail_msg("civil_from_days(%d) = %d-%d-%d, want %d-%d-%d", d, y, m, dd, y2, m2, d2);
        assert_int_equal(sched_days_from_civil(y, m, dd), d);
    }
}

static void test_format_and_parse(void **state)
{
    (void)state;
    char buf[32];
    sched_format_utc(0, buf, sizeof buf);
    assert_string_equal(buf, "1970-01-01T00:00:00Z");
    sched_format_utc(1767398400, buf, sizeof buf);
    assert_string_equal(buf, "2026-01-03T00:00:00Z");
    sched_format_utc(253402300799, buf, sizeof buf);
    assert_string_equal(buf, "9999-12-31T23:59:59Z");
    sched_format_utc(T("2028-02-29T13:04:05Z"), buf, sizeof buf);
    assert_string_equal(buf, "2028-02-29T13:04:05Z");

    const struct {
        const char *s;
        sched_time_t want;
    } ok[] = {
        {"2026-01-03T00:00:00Z", 1767398400},
        {"2026-01-03T01:00:00+01:00", 1767398400},
        {"2026-01-02T19:00:00-05:00", 1767398400},
        {"2026-01-03T05:30:00+05:30", 1767398400},
        {"2026-01-03T00:00:00+00:00", 1767398400},
        {"2026-01-03T00:00:00.123456Z", 1767398400},
        {"2026-01-03T00:00:00.9+00:00", 1767398400},
        {"1970-01-01T00:00:00Z", 0},
        {"2028-02-29T23:59:59Z", 1835481599},
        {"2026-01-03T00:45:00+12:45", 1767398400 - 12 * 3600},
    };
    for (size_t i = 0; i < N_CASES(ok); i++) {
        sched_time_t t = -1;
        int rc = sched_parse_rfc3339(ok[i].s, &t);
        if (rc != 0 || t != ok[i].want)
            fail_msg("sched_parse_rfc3339(\"%s\") = %d, %lld; want 0, %lld", ok[i].s, rc,
                     (long long)t, (long long)ok[i].want);
    }
    const char *bad[] = {
        "",
        "garbage",
        "2026-01-03",
        "2026-01-03T00:00:00",
        "2026-01-03T00:00Z",
        "2026-13-01T00:00:00Z",
        "2026-00-01T00:00:00Z",
        "2026-01-32T00:00:00Z",
        "2026-01-00T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "2027-02-29T00:00:00Z",
        "2026-04-31T00:00:00Z",
        "2026-01-03T24:00:00Z",
        "2026-01-03T00:60:00Z",
        "2026-01-03T00:00:61Z",
        "2026-01-03T00:00:00Zjunk",
        "2026-01-03T00:00:00+25:00",
        "2026-01-03T00:00:00+01",
        "2026-01-03T00:00:00.Z",
        "2026-1-3T00:00:00Z",
        "+2026-01-03T00:00:00Z",
        " 2026-01-03T00:00:00Z",
        "2026-01-03T00:00:00Z ",
        "2026-01-03X00:00:00Z",
    };
    for (size_t i = 0; i < N_CASES(bad); i++) {
        sched_time_t t = 0;
        int rc = sched_parse_rfc3339(bad[i], &t);
        if (rc != HCP_EINVAL)
            fail_msg("sched_parse_rfc3339(\"%s\") = %d, want HCP_EINVAL", bad[i], rc);
    }
}

static void test_local_utc_conversion(void **state)
{
    (void)state;
    const struct {
        const char *tz;
        const char *day;
        int minute;
        const char *want;
    } cases[] = {
        {"UTC", "2026-01-03", 0, "2026-01-03T00:00:00Z"},
        {"Europe/Zurich", "2026-01-03", HM(12, 0), "2026-01-03T11:00:00Z"},
        {"Europe/Zurich", "2026-07-03", HM(12, 0), "2026-07-03T10:00:00Z"},
        {"Europe/Zurich", "2026-03-29", HM(2, 30), "2026-03-29T01:30:00Z"},  /* gap */
        {"Europe/Zurich", "2026-03-29", HM(2, 0), "2026-03-29T01:00:00Z"},   /* gap start */
        {"Europe/Zurich", "2026-03-29", HM(3, 0), "2026-03-29T01:00:00Z"},   /* after gap */
        {"Europe/Zurich", "2026-10-25", HM(2, 30), "2026-10-25T00:30:00Z"},  /* overlap */
        {"Europe/Zurich", "2026-10-25", HM(3, 0), "2026-10-25T02:00:00Z"},
        {"America/New_York", "2026-03-08", HM(2, 30), "2026-03-08T07:30:00Z"},
        {"America/New_York", "2026-11-01", HM(1, 30), "2026-11-01T05:30:00Z"},
        {"Australia/Lord_Howe", "2026-10-04", HM(2, 15), "2026-10-03T15:45:00Z"},
        {"Australia/Lord_Howe", "2026-04-05", HM(1, 45), "2026-04-04T14:45:00Z"},
        {"Asia/Kolkata", "2026-01-03", 0, "2026-01-02T18:30:00Z"},
        {"Pacific/Chatham", "2026-09-27", HM(3, 0), "2026-09-26T14:15:00Z"}, /* gap, +12:45 */
    };
    for (size_t i = 0; i < N_CASES(cases); i++) {
        sched_time_t t = 0;
        int rc = sched_local_to_utc(cases[i].tz, tu_day(cases[i].day), cases[i].minute, &t);
        char b1[32], b2[32];
        if (rc != 0 || t != T(cases[i].want))
            fail_msg("sched_local_to_utc(%s, %s, %d) = %d, %s; want %s", cases[i].tz,
                     cases[i].day, cases[i].minute, rc, tu_fmt(t, b1, 32),
                     tu_fmt(T(cases[i].want), b2, 32));
    }
    int32_t day = 0;
    int sod = 0, off = 0;
    assert_int_equal(sched_utc_to_local("Europe/Zurich", T("2026-10-25T01:30:00Z"), &day, &sod,
                                        &off), 0);
    assert_int_equal(day, tu_day("2026-10-25"));
    assert_int_equal(sod, 2 * 3600 + 30 * 60);
    assert_int_equal(off, 3600);
    assert_int_equal(sched_utc_to_local("Europe/Zurich", T("2026-10-25T00:30:00Z"), &day, &sod,
                                        &off), 0);
    assert_int_equal(sod, 2 * 3600 + 30 * 60);
    assert_int_equal(off, 7200);
    assert_int_equal(sched_utc_to_local("Pacific/Chatham", T("2026-01-02T12:00:00Z"), &day,
                                        &sod, &off), 0);
    assert_int_equal(off, 13 * 3600 + 45 * 60);
    assert_int_equal(day, tu_day("2026-01-03"));
    assert_int_equal(sod, 1 * 3600 + 45 * 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permit_table),
        cmocka_unit_test(test_permit_table_permitted),
        cmocka_unit_test(test_dst_zurich),
        cmocka_unit_test(test_dst_new_york),
        cmocka_unit_test(test_dst_lord_howe),
        cmocka_unit_test(test_zone_rules_far_out),
        cmocka_unit_test(test_state_at),
        cmocka_unit_test(test_feb29),
        cmocka_unit_test(test_fifth_and_last),
        cmocka_unit_test(test_dates_29_to_31),
        cmocka_unit_test(test_never_selecting_rules),
        cmocka_unit_test(test_interval_anchoring),
        cmocka_unit_test(test_long_durations_merge),
        cmocka_unit_test(test_exclusion_cuts_window),
        cmocka_unit_test(test_lookahead_and_until),
        cmocka_unit_test(test_prev),
        cmocka_unit_test(test_transitions_and_between),
        cmocka_unit_test(test_exclusion_reason),
        cmocka_unit_test(test_exclusion_at),
        cmocka_unit_test(test_and_never_overlapping),
        cmocka_unit_test(test_and_or),
        cmocka_unit_test(test_before_after),
        cmocka_unit_test(test_set_add),
        cmocka_unit_test(test_set_ops),
        cmocka_unit_test(test_set_search),
        cmocka_unit_test(test_rrule_check_accepts),
        cmocka_unit_test(test_rrule_check_rejects),
        cmocka_unit_test(test_compile_rejects),
        cmocka_unit_test(test_civil_days),
        cmocka_unit_test(test_format_and_parse),
        cmocka_unit_test(test_local_utc_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
