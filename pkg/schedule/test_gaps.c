/* Tests of the excluded-spans leaf (sched_excluding(), gaps.c) against a
 * brute-force computation: for random spans (overlapping, touching, empty,
 * unbounded), membership, the next and previous window, the reason at an
 * instant (the earliest-starting span covering it) and the end of the
 * excluded run, alone and inside an intersection. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "schedule/schedule.h"

#define T0 1800000000LL /* an instant in 2027 */
#define W 400           /* the tests look at [T0, T0 + W) */

static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 8) & 0xFFFF;
}

static void test_against_brute_force(void **state)
{
    (void)state;
    unsigned seed = 7;
    const char *reasons[] = {"a", "b", "c", "d"};
    for (int round = 0; round < 300; round++) {
        sched_excluded_t v[12];
        size_t n = rnd(&seed) % 12;
        bool ex[W + 64]; /* spans reach past W by up to 40 */
        memset(ex, 0, sizeof ex);
        for (size_t i = 0; i < n; i++) {
            sched_time_t a = rnd(&seed) % W, b = a + rnd(&seed) % 40;
            if (rnd(&seed) % 20 == 0)
                b = a; /* empty: dropped */
            v[i] = (sched_excluded_t){T0 + a, T0 + b, rnd(&seed) % 4};
            for (sched_time_t t = a; t < b; t++)
                ex[t] = true;
        }
        sched_t *s = sched_excluding(v, n, reasons, 4);
        assert_non_null(s);
        for (sched_time_t t = 0; t < W - 40; t++) {
            sched_time_t at = T0 + t;
            assert_int_equal(sched_permitted(s, at), !ex[t]);
            /* The reason: the span covering t that starts first (ties: the
             * shorter first, as sorted). */
            const char *want = NULL;
            sched_time_t best = 0, best_end = 0;
            for (size_t i = 0; i < n; i++)
                if (v[i].start <= at && at < v[i].end &&
                    (!want || v[i].start < best || (v[i].start == best && v[i].end < best_end))) {
                    want = reasons[v[i].reason];
                    best = v[i].start;
                    best_end = v[i].end;
                }
            sched_time_t until = 0;
            const char *why = sched_exclusion_at(s, at, &until);
            if (!want) {
                assert_null(why);
                continue;
            }
            assert_non_null(why);
            assert_string_equal(why, want);
            sched_time_t e = t;
            while (ex[e])
                e++;
            assert_int_equal(until, T0 + e);
        }
        /* next / prev from each instant of the middle */
        for (sched_time_t t = 40; t < W - 80; t++) {
            sched_interval_t iv;
            sched_time_t a = t;
            while (ex[a])
                a++;
            sched_time_t z = a;
            while (z < W && !ex[z])
                z++;
            assert_int_equal(sched_next(s, T0 + t, &iv), 1);
            if (ex[t])
                assert_int_equal(iv.start, T0 + a); /* the first permitted after t */
            else
                assert_true(iv.start <= T0 + t);
            if (z < W)
                assert_int_equal(iv.end, T0 + z);
            if (!ex[t]) {
                sched_time_t lo = t, hi = t;
                while (lo > 0 && !ex[lo - 1])
                    lo--;
                while (hi < W && !ex[hi])
                    hi++;
                assert_int_equal(sched_prev(s, T0 + t, &iv), 1);
                if (lo > 0)
                    assert_int_equal(iv.start, T0 + lo);
                if (hi < W)
                    assert_int_equal(iv.end, T0 + hi);
            }
        }
        /* Inside an intersection with a half-line, the reason is still
         * found and membership is the conjunction. */
        sched_t *after = sched_after(T0 + 100), *both = sched_and(after, s);
        for (sched_time_t t = 0; t < W - 40; t++)
            assert_int_equal(sched_permitted(both, T0 + t), t >= 100 && !ex[t]);
        sched_unref(both);
        sched_unref(after);
        sched_unref(s);
    }
}

/* Unbounded spans: everything excluded, or everything from an instant. */
static void test_unbounded(void **state)
{
    (void)state;
    const char *r[] = {"all", "later"};
    sched_excluded_t all = {SCHED_NEG_INF, SCHED_POS_INF, 0};
    sched_t *s = sched_excluding(&all, 1, r, 1);
    sched_interval_t iv;
    assert_int_equal(sched_permitted(s, T0), 0);
    assert_int_equal(sched_next(s, T0, &iv), 0);
    assert_int_equal(sched_prev(s, T0, &iv), 0);
    assert_string_equal(sched_exclusion_at(s, T0, NULL), "all");
    sched_unref(s);
    sched_excluded_t v[] = {{T0 + 10, SCHED_POS_INF, 1}, {T0 + 2, T0 + 4, 0}};
    s = sched_excluding(v, 2, r, 2);
    assert_int_equal(sched_next(s, T0 + 5, &iv), 1);
    assert_int_equal(iv.start, T0 + 4);
    assert_int_equal(iv.end, T0 + 10);
    assert_int_equal(sched_next(s, T0 + 10, &iv), 0);
    assert_string_equal(sched_exclusion_at(s, T0 + 1000000, NULL), "later");
    /* a reason index out of range drops the span */
    sched_unref(s);
    sched_excluded_t bad = {T0, T0 + 5, 7};
    s = sched_excluding(&bad, 1, r, 2);
    assert_int_equal(sched_permitted(s, T0 + 1), 1);
    sched_unref(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_brute_force),
        cmocka_unit_test(test_unbounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
