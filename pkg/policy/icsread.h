/* icsread: a freeze calendar (RFC 5545 text, as Outlook, Google Calendar or
 * a CAB tool export it) read into the spans it excludes (DESIGN.md 3.16,
 * `spec.exclusionCalendars`).
 *
 * libical parses the text. Each VEVENT is an exclusion whose reason is its
 * SUMMARY: DTSTART with DTEND, DURATION or neither (an all-day event lasts
 * its day, a timed one is an instant), RRULE, RDATE (dates, date-times,
 * periods), EXDATE, an instance moved or cancelled by a VEVENT of the same
 * UID with a RECURRENCE-ID, STATUS:CANCELLED. Times in UTC, with a TZID the
 * calendar defines in a VTIMEZONE (Outlook's "W. Europe Standard Time") or
 * that names a known zone (Google's "Europe/Berlin"), floating (no zone) or
 * all-day: the last two in the policy's time zone, like the policy's own
 * exclusions. A timed recurring event keeps DTSTART..DTEND's exact length,
 * an all-day one its number of days; a DURATION's days are calendar days.
 *
 * Occurrences are expanded from ICSREAD_PAST_DAYS before `now` to
 * ICSREAD_AHEAD_DAYS after it; an event recurring past that is reported
 * (`beyond`), and the caller excludes what follows (fail safe). What cannot
 * be read is reported with the line of its VEVENT and the reason; the text
 * is untrusted (fuzzed: fuzz_icsread.c). Pure: no I/O, no clock.
 */
#ifndef HCP_POLICY_ICSREAD_H
#define HCP_POLICY_ICSREAD_H

#include <stdbool.h>
#include <stddef.h>

#include "schedule/schedule.h"

#define ICSREAD_PAST_DAYS 400
#define ICSREAD_AHEAD_DAYS 1830       /* five years */
#define ICSREAD_MAX_TEXT (1u << 20)   /* a ConfigMap holds at most 1 MiB */
#define ICSREAD_MAX_SPANS 20000       /* occurrences kept per calendar */
#define ICSREAD_MAX_PROBLEMS 8        /* problems described (all are counted) */

typedef struct icsread_problem {
    int line;            /* the line of the VEVENT's BEGIN (1-based), 0 for
                            the calendar as a whole */
    char message[224];
} icsread_problem_t;

typedef struct icsread {
    size_t events;       /* VEVENTs read, each an exclusion (not cancelled) */
    size_t cancelled;    /* VEVENTs with STATUS:CANCELLED: nothing excluded */
    sched_excluded_t *spans; /* owned; the occurrences met in the range, each
                                with the index of its event's reason */
    size_t n_spans;
    char **reasons;      /* owned; one per event read */
    size_t n_reasons;
    icsread_problem_t problems[ICSREAD_MAX_PROBLEMS];
    size_t n_problems;   /* all of them; the first ICSREAD_MAX_PROBLEMS described */
    sched_time_t from, until; /* the range expanded */
    bool beyond;         /* an event recurs past `until` */
} icsread_t;

/* Reads text (len bytes, not necessarily NUL-terminated) with floating and
 * all-day times in time zone tz (IANA; NULL for UTC), expanding around now.
 * Returns 0 (read, perhaps with problems: out->n_problems), or HCP_ENOMEM.
 * The caller frees *out with icsread_free() in either case. */
int icsread_parse(const char *text, size_t len, const char *tz, sched_time_t now,
                  icsread_t *out);

void icsread_free(icsread_t *r);

#endif
