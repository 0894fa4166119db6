/* rrule: parsing and gating of the RFC 5545 recurrence subset
 * (DESIGN.md 3.2). sched_rrule_check() in schedule.h is the public gate;
 * this header exposes the parsed form the engine compiles from. */
#ifndef HCP_SCHEDULE_RRULE_H
#define HCP_SCHEDULE_RRULE_H

#include "schedule/schedule.h"

enum { SCHED_FREQ_DAILY, SCHED_FREQ_WEEKLY, SCHED_FREQ_MONTHLY, SCHED_FREQ_YEARLY };

enum {
    SCHED_UNTIL_NONE,  /* no UNTIL */
    SCHED_UNTIL_DATE,  /* UNTIL=YYYYMMDD: occurrences on dates up to `day` */
    SCHED_UNTIL_LOCAL, /* UNTIL=YYYYMMDDTHHMMSS: local time (day, second) */
    SCHED_UNTIL_UTC,   /* UNTIL=YYYYMMDDTHHMMSSZ: the UTC instant `utc` */
};

typedef struct sched_until {
    int kind;         /* SCHED_UNTIL_* */
    int32_t day;      /* date part, days since 1970-01-01 */
    int second;       /* time part, seconds after midnight */
    sched_time_t utc; /* day and second read as UTC (for SCHED_UNTIL_UTC) */
} sched_until_t;

typedef struct sched_rrule_info {
    int freq;                /* SCHED_FREQ_* */
    sched_until_t until;     /* the rule's UNTIL, if any */
    int week_interval;       /* FREQ=WEEKLY: INTERVAL, applied by the engine
                                (1 otherwise) */
    int wkst;                /* FREQ=WEEKLY: first day of the week, 0 = Monday */
    int day_interval;        /* > 0: the rule is FREQ=DAILY with nothing but
                                INTERVAL (and UNTIL): it selects the days d
                                (since 1970-01-01) with d % day_interval == 0 */
    int weekday_mask;        /* != 0: the rule is FREQ=WEEKLY with BYDAY
                                and nothing but INTERVAL, WKST (and UNTIL):
                                it selects these weekdays (bit 0 = Monday)
                                of every week_interval-th week. Either form
                                is expanded without libical. */
    char libical_rule[1100]; /* the rule for libical: without UNTIL, and for
                                FREQ=WEEKLY without INTERVAL and WKST */
} sched_rrule_info_t;

/* Validates rrule like sched_rrule_check() and fills *info. Returns 0 or
 * HCP_EINVAL with a sentence in err. */
int sched_rrule_parse(const char *rrule, sched_rrule_info_t *info, char *err, size_t errlen);

#endif
