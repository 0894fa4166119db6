/* test_minleft.c: the effective start of a change that needs time left in
 * its window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "schedule/minleft.h"
#include "schedule/testutil_sched.h"

static sched_t *window(const char *a, const char *b)
{
    sched_t *x = sched_after(tu_ts(a)), *y = sched_before(tu_ts(b));
    sched_t *w = sched_and(x, y);
    sched_unref(x);
    sched_unref(y);
    return w;
}

/* Saturday 00:00-01:00 and Sunday 00:00-04:00 (2026-03-07/08). */
static sched_t *weekend(void)
{
    sched_t *a = window("2026-03-07T00:00Z", "2026-03-07T01:00Z");
    sched_t *b = window("2026-03-08T00:00Z", "2026-03-08T04:00Z");
    sched_t *s = sched_or(a, b);
    sched_unref(a);
    sched_unref(b);
    assert_non_null(s);
    return s;
}

#define DAY 86400

static void test_skips_short_windows(void **state)
{
    (void)state;
    sched_t *s = weekend();
    sched_interval_t out, w;
    /* 2h: the Saturday hour is too short; Sunday, starts until 02:00. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-06T12:00Z"), 7200, 30 * DAY, &out, &w),
                     1);
    assert_true(out.start == tu_ts("2026-03-08T00:00Z"));
    assert_true(out.end == tu_ts("2026-03-08T02:00Z") + 1);
    assert_true(w.start == tu_ts("2026-03-08T00:00Z") && w.end == tu_ts("2026-03-08T04:00Z"));
    /* 30m at 00:10 Saturday: now, until 00:30. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-07T00:10Z"), 1800, 30 * DAY, &out, NULL),
                     1);
    assert_true(out.start == tu_ts("2026-03-07T00:10Z"));
    assert_true(out.end == tu_ts("2026-03-07T00:30Z") + 1);
    /* 30m at 00:45 Saturday: 15 minutes left, so Sunday. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-07T00:45Z"), 1800, 30 * DAY, &out, NULL),
                     1);
    assert_true(out.start == tu_ts("2026-03-08T00:00Z"));
    /* Exactly 30m left: still a start. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-07T00:30Z"), 1800, 30 * DAY, &out, NULL),
                     1);
    assert_true(out.start == tu_ts("2026-03-07T00:30Z"));
    /* 5h: no window can meet it. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-06T12:00Z"), 5 * 3600, 30 * DAY, &out,
                                          NULL),
                     0);
    /* Beyond the horizon: none. */
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-06T12:00Z"), 7200, DAY, &out, NULL), 0);
    sched_time_t len;
    assert_int_equal(sched_longest_window(s, tu_ts("2026-03-06T12:00Z"), 30 * DAY, &len), 0);
    assert_true(len == 4 * 3600);
    /* From inside Sunday's window, its remaining part counts. */
    assert_int_equal(sched_longest_window(s, tu_ts("2026-03-08T03:00Z"), 30 * DAY, &len), 0);
    assert_true(len == 3600);
    sched_unref(s);
}

static void test_unbounded(void **state)
{
    (void)state;
    sched_t *s = sched_always(), *n = sched_never();
    sched_interval_t out;
    sched_time_t len;
    assert_int_equal(sched_min_left_start(s, tu_ts("2026-03-06T12:00Z"), 7200, DAY, &out, NULL), 1);
    assert_true(out.start == tu_ts("2026-03-06T12:00Z") && out.end == SCHED_POS_INF);
    assert_int_equal(sched_longest_window(s, tu_ts("2026-03-06T12:00Z"), DAY, &len), 0);
    assert_true(len == SCHED_POS_INF);
    assert_int_equal(sched_min_left_start(n, tu_ts("2026-03-06T12:00Z"), 0, DAY, &out, NULL), 0);
    assert_int_equal(sched_longest_window(n, tu_ts("2026-03-06T12:00Z"), DAY, &len), 0);
    assert_true(len == 0);
    sched_unref(s);
    sched_unref(n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skips_short_windows),
        cmocka_unit_test(test_unbounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
