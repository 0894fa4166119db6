/* tzfile: UTC offsets from the system's zoneinfo database (RFC 8536).
 *
 * The engine's time zones: a TZif file's transition table and, after its
 * last transition, the POSIX TZ rule of its footer. Files are read from
 * $TZDIR or /usr/share/zoneinfo (Debian's tzdata package).
 */
#ifndef HCP_SCHEDULE_TZFILE_H
#define HCP_SCHEDULE_TZFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "schedule/schedule.h"

typedef struct sched_tzdata sched_tzdata_t;

/* Loads zone `name` (an already validated IANA name) once per process and
 * returns it (borrowed; lives until exit). Returns 0, HCP_EINVAL when no
 * valid TZif file has that name, or HCP_ENOMEM. */
int sched_tzfile_load(const char *name, const sched_tzdata_t **out);

/* The UTC offset in seconds in force at instant t. */
int32_t sched_tzfile_offset(const sched_tzdata_t *z, sched_time_t t);

#endif
