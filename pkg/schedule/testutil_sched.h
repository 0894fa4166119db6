/* testutil_sched: calendar arithmetic and helpers shared by the schedule
 * tests and benchmark.
 *
 * Everything here is written independently of the schedule engine so that
 * the tests can use it to state expected values: proleptic Gregorian date
 * arithmetic, a strict "YYYY-MM-DDTHH:MM[:SS]Z" literal parser for test
 * tables, a deterministic random generator and the HCP_TEST_SCALE switch.
 */
#ifndef HCP_TESTUTIL_SCHED_H
#define HCP_TESTUTIL_SCHED_H

#include <stddef.h>
#include <stdint.h>

/* Days since 1970-01-01 of a proleptic Gregorian date; month 1..12. */
int32_t tu_days_from_civil(int year, int month, int day);

/* Inverse of tu_days_from_civil(). */
void tu_civil_from_days(int32_t days, int *year, int *month, int *day);

/* Days in a month of a proleptic Gregorian year. */
int tu_days_in_month(int year, int month);

/* Seconds since the epoch of a UTC wall-clock time. */
int64_t tu_utc(int year, int month, int day, int hour, int minute, int second);

/* Parses a test literal: "YYYY-MM-DDTHH:MM:SSZ", "YYYY-MM-DDTHH:MMZ",
 * "YYYY-MM-DD" (midnight UTC), "-inf" (INT64_MIN) or "+inf" (INT64_MAX).
 * Aborts the process on anything else: a malformed literal is a bug in the
 * test table, not a test result. */
int64_t tu_ts(const char *lit);

/* Parses "YYYY-MM-DD" into days since the epoch; aborts when malformed. */
int32_t tu_day(const char *lit);

/* Formats t like "2026-01-03T00:00:00Z" ("-inf"/"+inf" for the extremes)
 * into buf (at least 32 bytes) and returns buf. */
char *tu_fmt(int64_t t, char *buf, size_t buflen);

/* Deterministic 64-bit generator (splitmix64) and helpers. */
uint64_t tu_rand(uint64_t *state);
/* Uniform in [lo, hi] (inclusive). */
int64_t tu_rand_range(uint64_t *state, int64_t lo, int64_t hi);
/* 1 with probability percent/100. */
int tu_chance(uint64_t *state, int percent);

/* 1 when the environment asks for a reduced test size
 * (HCP_TEST_SCALE=small, used by the sanitizer and valgrind runs). */
int tu_scale_small(void);

/* Benchmarks: a monotonic clock in milliseconds, and a qsort() comparison
 * of doubles (for medians and percentiles). */
double tu_now_ms(void);
int tu_cmp_double(const void *a, const void *b);

/* How many times needle occurs in hay (without overlaps). */
int tu_count(const char *hay, const char *needle);

#endif
