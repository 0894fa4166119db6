/* ics: permitted windows as an RFC 5545 calendar.
 *
 * A team subscribes to its clusters' maintenance windows in its calendar
 * client; `preview -o ics` writes the same events for policy files. Each
 * permitted window of a timeline becomes a VEVENT (UTC DTSTART/DTEND, a UID
 * stable for the window: its object and its start), and each exclusion of
 * the policies behind the timeline an event of its own carrying the reason.
 * With a minimum time left, a window's event keeps the window's own times
 * (work started in it may run to its end) and its DESCRIPTION says the last
 * instant a change may start (or that the window is too short for any):
 * every calendar client shows the description, and a second event per
 * window would double the calendar.
 * Lines are CRLF-terminated and folded at 75 octets without splitting a
 * UTF-8 sequence; TEXT values are escaped (backslash, semicolon, comma,
 * newline). Pure: the caller supplies `now` (DTSTAMP) and the range.
 */
#ifndef HCP_POLICY_ICS_H
#define HCP_POLICY_ICS_H

#include <stddef.h>

#include "policy/policy.h"
#include "schedule/schedule.h"

/* How far a feed looks ahead, and at most how many windows one timeline
 * contributes: a calendar client needs the coming weeks, not ten years. */
#define ICS_FEED_DAYS 90
#define ICS_FEED_MAX_WINDOWS 100

/* A calendar being written (caller-allocated; zero-initialise). */
typedef struct ics {
    char *buf;     /* owned; the text so far, NUL-terminated */
    size_t len;
    size_t cap;
    int failed;    /* an append ran out of memory: the text is unusable */
} ics_t;

/* The range and identity of one timeline's events. Everything borrowed. */
typedef struct ics_timeline {
    const char *uid;      /* stable identity of the timeline, e.g.
                             "control-plane.clusters.a"; [A-Za-z0-9.-] */
    const char *summary;  /* event title, e.g. "clusters/a control plane" */
    sched_t *sched;       /* the effective timeline */
    const policy_t *const *policies; /* policies behind it (exclusions), may be NULL */
    size_t n_policies;
    sched_time_t from;    /* windows ending after from ... */
    sched_time_t until;   /* ... and starting before until */
    long max_windows;     /* at most this many windows */
    sched_time_t min_left; /* the minimum time left in force (seconds, 0 none):
                              each window's DESCRIPTION says until when a
                              change may start in it, or that none may */
    sched_time_t held_from; /* a held change may not start before this instant
                               whatever the windows (the release waves' soak,
                               decide/wave.h): each window before it says so,
                               the one it falls in says from when; 0 none,
                               SCHED_POS_INF no instant is known yet */
    const char *held_why;   /* held_from: what is held and why, a clause */
} ics_timeline_t;

/* Starts a VCALENDAR named name (X-WR-CALNAME). */
void ics_begin(ics_t *c, const char *name);

/* Appends the windows and exclusions of one timeline. An interval unbounded
 * at either end is clipped to [from's UTC day, until's UTC day). DTSTAMP is
 * now. Returns 0 or a schedule engine error (out of memory sets failed). */
int ics_timeline(ics_t *c, const ics_timeline_t *t, sched_time_t now);

/* Ends the VCALENDAR. Returns 0, or HCP_ENOMEM when any append failed (then
 * the text must not be served). */
int ics_end(ics_t *c);

/* Frees the text. */
void ics_free(ics_t *c);

#endif
