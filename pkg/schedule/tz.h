/* tz: time zones for the schedule module (the calendar is in civil.h).
 *
 * The public helpers sched_days_from_civil(), sched_format_utc(),
 * sched_parse_rfc3339(), sched_local_to_utc() and sched_utc_to_local() are
 * declared in schedule.h; this header adds the lower-level pieces the engine
 * and the policy validator share. Zones come from libical's built-in database
 * (the system's zoneinfo); a looked-up zone lives until the process exits.
 */
#ifndef HCP_SCHEDULE_TZ_H
#define HCP_SCHEDULE_TZ_H

#include "schedule/civil.h"
#include "schedule/schedule.h"

/* An opaque time zone; NULL means UTC. */
typedef const void *sched_zone_t;

/* Finds the IANA zone `name` ("", NULL, "UTC" and "Etc/UTC" give UTC).
 * Returns 0 or HCP_EINVAL for a name that is malformed or unknown. */
int sched_zone_lookup(const char *name, sched_zone_t *zone);

/* UTC offset in seconds in force at instant t. */
int sched_zone_offset(sched_zone_t zone, sched_time_t t);

/* The UTC instant of a local wall-clock reading: local date `day` (days
 * since 1970-01-01) at `second_of_day`. Times in a spring-forward gap use the
 * offset before the gap; ambiguous times take the first occurrence
 * (RFC 5545 3.3.5). */
sched_time_t sched_zone_local_to_utc(sched_zone_t zone, int32_t day, int second_of_day);

#endif
