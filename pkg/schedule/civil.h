/* civil: calendar arithmetic for the schedule module.
 *
 * Days are counted from 1970-01-01 in the proleptic Gregorian calendar, with
 * no time zone. sched_days_from_civil(), sched_civil_from_days(),
 * sched_format_utc() and sched_parse_rfc3339() are public and declared in
 * schedule.h; this header adds the pieces the engine, the time-zone code
 * (tz.c, tzfile.c) and the policy validator share. All pure.
 */
#ifndef HCP_SCHEDULE_CIVIL_H
#define HCP_SCHEDULE_CIVIL_H

#include <stdint.h>

#include "schedule/schedule.h"

/* 28..31 for the Gregorian month (1..12) of year. */
int sched_days_in_month(int year, int month);

/* Parses "YYYY-MM-DD" (a real calendar date, year >= 1970) into days since
 * 1970-01-01. Returns 0 or HCP_EINVAL. */
int sched_parse_date(const char *s, int32_t *day);

/* a / b rounded towards negative infinity (b > 0): the day of an instant
 * before 1970 is the one it falls in, not the one after. */
int64_t sched_floor_div(int64_t a, int64_t b);

#endif
