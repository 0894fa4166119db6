/* Tests of the simple-rule expansion of pkg/schedule/rule: a daily rule
 * with only INTERVAL, and a weekly rule with BYDAY, INTERVAL and WKST, are
 * expanded by arithmetic instead of libical. Each such rule is compared
 * with its twin that goes through libical (the same rule with a BYMONTH of
 * every month, which selects the same dates): the windows must be the same
 * in every time zone, start time, duration, UNTIL and query instant. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "schedule/schedule.h"
#include "schedule/testutil_sched.h"

#define DAY 86400
#define ALL_MONTHS ";BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12"

static sched_t *compile(const char *rrule, const char *tz, int start_minute, int32_t duration,
                        sched_time_t now, const sched_exclusion_t *x, size_t nx)
{
    sched_spec_t spec = {.time_zone = tz, .rrule = rrule, .start_minute = start_minute,
                         .duration = duration, .exclusions = x, .n_exclusions = nx};
    char err[256] = "";
    sched_t *s = NULL;

    if (sched_compile(&spec, now, &s, err, sizeof err) != 0)
        fail_msg("%s does not compile: %s", rrule, err);
    return s;
}

/* The windows of a and b between from and to are the same, and so are the
 * next windows from a few instants (which exercise the memo's seeding). */
static void same(sched_t *a, sched_t *b, sched_time_t from, sched_time_t to, const char *what)
{
    sched_set_t x, y;
    char t1[32], t2[32];

    sched_set_init(&x);
    sched_set_init(&y);
    assert_int_equal(sched_between(a, from, to, &x), 0);
    assert_int_equal(sched_between(b, from, to, &y), 0);
    if (x.len != y.len)
        fail_msg("%s: %zu windows, libical %zu", what, x.len, y.len);
    for (size_t i = 0; i < x.len; i++)
        if (x.iv[i].start != y.iv[i].start || x.iv[i].end != y.iv[i].end)
            fail_msg("%s: window %zu starts %s, libical %s", what, i,
                     tu_fmt(x.iv[i].start, t1, sizeof t1), tu_fmt(y.iv[i].start, t2, sizeof t2));
    for (sched_time_t t = from; t < to; t += 97 * DAY + 3601) {
        sched_interval_t p, q;
        int ra = sched_next(a, t, &p), rb = sched_next(b, t, &q);
        assert_int_equal(ra, rb);
        if (ra == 1 && (p.start != q.start || p.end != q.end))
            fail_msg("%s: next from %s differs", what, tu_fmt(t, t1, sizeof t1));
    }
    sched_set_free(&x);
    sched_set_free(&y);
}

static void test_simple_rules_match_libical(void **state)
{
    static const char *const rules[] = {
        "FREQ=DAILY", "FREQ=DAILY;INTERVAL=2", "FREQ=DAILY;INTERVAL=3", "FREQ=DAILY;INTERVAL=7",
        "FREQ=DAILY;INTERVAL=730", "FREQ=DAILY;INTERVAL=5;UNTIL=20270301",
        "FREQ=DAILY;UNTIL=20260310T120000Z", "FREQ=WEEKLY;BYDAY=SA,SU",
        "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR,SA,SU;WKST=MO", "FREQ=WEEKLY;INTERVAL=2;BYDAY=SU",
        "FREQ=WEEKLY;INTERVAL=3;BYDAY=TH,FR;WKST=SU", "FREQ=WEEKLY;INTERVAL=26;BYDAY=WE",
        "FREQ=WEEKLY;BYDAY=TU;UNTIL=20261231T080000", "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;WKST=TH",
    };
    static const char *const zones[] = {"UTC", "Europe/Berlin", "America/New_York",
                                        "Australia/Lord_Howe"};
    static const struct {
        int start_minute;
        int32_t duration;
    } shapes[] = {{0, 0}, {90, 4 * 3600}, {1430, 30 * 3600}, {150, 1800}};
    static const char *const nows[] = {"1970-01-02", "2026-03-01T12:00Z", "2041-10-27T01:30Z"};
    const sched_exclusion_t x[] = {{tu_day("2026-03-05"), tu_day("2026-03-09"), "freeze"},
                                   {tu_day("2026-12-20"), tu_day("2027-01-02"), "year end"}};
    char twin[256], what[512];
    size_t small = tu_scale_small() ? 2 : 4, n0 = tu_scale_small() ? 1 : 0;

    (void)state;
    for (size_t r = 0; r < sizeof rules / sizeof rules[0]; r++)
        for (size_t z = 0; z < small; z++)
            for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++)
                for (size_t n = n0; n < sizeof nows / sizeof nows[0] - n0; n++) {
                    sched_time_t now = tu_ts(nows[n]);
                    size_t nx = k % 2 ? 2 : 0;
                    snprintf(twin, sizeof twin, "%s" ALL_MONTHS, rules[r]);
                    snprintf(what, sizeof what, "%s in %s from minute %d for %ds at %s", rules[r],
                             zones[z], shapes[k].start_minute, (int)shapes[k].duration, nows[n]);
                    sched_t *a = compile(rules[r], zones[z], shapes[k].start_minute,
                                         shapes[k].duration, now, x, nx);
                    sched_t *b = compile(twin, zones[z], shapes[k].start_minute,
                                         shapes[k].duration, now, x, nx);
                    same(a, b, now > 40 * DAY ? now - 40 * DAY : 0, now + 800 * DAY, what);
                    sched_unref(a);
                    sched_unref(b);
                }
}

/* The anchor: FREQ=DAILY;INTERVAL=3 selects 1970-01-01 and every third day
 * after it, wherever the expansion starts. */
static void test_daily_anchor(void **state)
{
    sched_t *s = compile("FREQ=DAILY;INTERVAL=3", "UTC", 0, 3600, tu_ts("2026-03-01"), NULL, 0);
    sched_interval_t iv;

    (void)state;
    /* 2026-03-01 is day 20513 = 3 * 6837 + 2: the next selected day is 03-02 */
    assert_int_equal(sched_next(s, tu_ts("2026-03-01"), &iv), 1);
    assert_int_equal(iv.start, tu_ts("2026-03-02"));
    assert_int_equal(sched_next(s, tu_ts("1970-01-01T00:30Z"), &iv), 1);
    assert_int_equal(iv.start, tu_ts("1970-01-01"));
    sched_unref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_simple_rules_match_libical),
        cmocka_unit_test(test_daily_anchor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
