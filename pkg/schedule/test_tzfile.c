/* test_tzfile.c: zone offsets from the zoneinfo reader against the C
 * library's reading of the same files, and its error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule/tz.h"

static bool small(void)
{
    const char *s = getenv("HCP_TEST_SCALE");
    return s && strcmp(s, "small") == 0;
}

/* From 1970 to 2100 in strides of an odd number of half hours, so samples
 * drift through every half-hour phase of the day (2.5 h; 3 days 0.5 h at
 * small scale). */
static void compare_zone(const char *name)
{
    sched_zone_t z;
    assert_int_equal(sched_zone_lookup(name, &z), 0);
    setenv("TZ", name, 1);
    tzset();
    int64_t step = small() ? 3 * 86400 + 1800 : 2 * 3600 + 1800;
    long bad = 0;
    for (int64_t t = 0; t < 4102444800LL; t += step) {
        time_t tt = (time_t)t;
        struct tm tm;
        localtime_r(&tt, &tm);
        int got = sched_zone_offset(z, t);
        if (got != tm.tm_gmtoff) {
            if (bad++ < 3)
                print_message("%s at %lld: offset %d, C library %ld\n", name, (long long)t, got,
                              (long)tm.tm_gmtoff);
        }
    }
    assert_int_equal(bad, 0);
}

static void test_zones_agree_with_libc(void **state)
{
    (void)state;
    const char *zones[] = {"Europe/Zurich",     "America/New_York",  "Australia/Lord_Howe",
                           "Pacific/Chatham",   "America/Sao_Paulo", "America/Santiago",
                           "Africa/Casablanca", "Asia/Kolkata",      "Pacific/Apia",
                           "Europe/Dublin",     "America/St_Johns",  "Antarctica/Troll"};
    for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++)
        compare_zone(zones[i]);
    unsetenv("TZ");
    tzset();
}

static void test_zone_names(void **state)
{
    (void)state;
    sched_zone_t z;
    assert_int_equal(sched_zone_lookup("UTC", &z), 0);
    assert_null(z);
    assert_int_equal(sched_zone_lookup("", &z), 0);
    assert_null(z);
    const char *bad[] = {"Nope/Zone", "../../etc/passwd", "/etc/localtime", "Europe/Zurich ",
                         "Europe\\Zurich", "zone.tab"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(sched_zone_lookup(bad[i], &z), HCP_EINVAL);
    /* Loaded once, then shared. */
    sched_zone_t a, b;
    assert_int_equal(sched_zone_lookup("Europe/Zurich", &a), 0);
    assert_int_equal(sched_zone_lookup("Europe/Zurich", &b), 0);
    assert_ptr_equal(a, b);
}

/* Lord Howe moves its clocks by 30 minutes: 02:00 +10:30 -> 02:30 +11. */
static void test_lord_howe_half_hour(void **state)
{
    (void)state;
    sched_time_t t;
    /* 2026-10-04 02:15 local does not exist: read with the offset before (+10:30). */
    assert_int_equal(sched_local_to_utc("Australia/Lord_Howe",
                                        sched_days_from_civil(2026, 10, 4), 2 * 60 + 15, &t),
                     0);
    char buf[32];
    sched_format_utc(t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-10-03T15:45:00Z");
    /* 2026-04-05 01:45 happens twice (+11, then +10:30): the first one. */
    assert_int_equal(sched_local_to_utc("Australia/Lord_Howe",
                                        sched_days_from_civil(2026, 4, 5), 60 + 45, &t),
                     0);
    sched_format_utc(t, buf, sizeof(buf));
    assert_string_equal(buf, "2026-04-04T14:45:00Z");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zones_agree_with_libc),
        cmocka_unit_test(test_zone_names),
        cmocka_unit_test(test_lord_howe_half_hour),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
