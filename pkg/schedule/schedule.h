/* schedule: when are material changes permitted?
 *
 * A schedule is a set of instants on the UTC time line, answered as maximal
 * half-open intervals [start, end). Leaves are constants, a compiled
 * MaintenanceSchedule (recurring windows in a time zone minus exclusions,
 * DESIGN.md 3.1) and half-lines before/after an instant; inner nodes are
 * intersection and union. The policy module builds these trees from
 * HostedChangeManagementPolicies and changeManagement stanzas; everything here
 * is pure computation with no I/O.
 *
 * Recurring windows are expanded with libical lazily: compiling expands a
 * short span around the given instant, and queries further out extend the
 * memoised expansion. Queries therefore take a non-const schedule and may
 * allocate. A schedule is not safe for concurrent use from several threads.
 *
 * Trees are reference counted: sched_and()/sched_or() take new references to
 * their operands, and every constructor returns a new reference that the
 * caller releases with sched_unref().
 */
#ifndef HCP_SCHEDULE_H
#define HCP_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* Seconds since 1970-01-01T00:00:00Z. */
typedef int64_t sched_time_t;

/* The unbounded ends of the time line: an interval starting at SCHED_NEG_INF
 * has been permitted since forever, one ending at SCHED_POS_INF never ends. */
#define SCHED_NEG_INF INT64_MIN
#define SCHED_POS_INF INT64_MAX

/* How far ahead a search for the next permitted window looks (DESIGN.md 3.1):
 * a window starting this long or longer after the query instant is never
 * reported. 10 years of 365.25 days. */
#define SCHED_LOOKAHEAD ((sched_time_t)315576000)

/* Errors: functions return 0 or a negative HCP_E* code (base/error.h):
 * HCP_EINVAL for an invalid specification (detail in the error buffer),
 * HCP_ENOMEM when allocation fails, HCP_ERANGE for an instant outside the
 * supported years 1970..2500. */

typedef struct sched_interval {
    sched_time_t start; /* inclusive; SCHED_NEG_INF when unbounded */
    sched_time_t end;   /* exclusive; SCHED_POS_INF when unbounded */
} sched_interval_t;

/* A growable sorted list of disjoint, non-touching intervals (caller-owned
 * struct; the array is owned by the set). Zero-initialise, or use
 * sched_set_init(). */
typedef struct sched_set {
    sched_interval_t *iv; /* ascending, disjoint, non-touching */
    size_t len;           /* intervals in use */
    size_t cap;           /* intervals allocated */
} sched_set_t;

void sched_set_init(sched_set_t *set);
void sched_set_free(sched_set_t *set);
void sched_set_clear(sched_set_t *set);

/* Adds [start, end) to the set, merging with overlapping or touching
 * intervals. Empty intervals (start >= end) are ignored. Returns 0 or
 * HCP_ENOMEM. */
int sched_set_add(sched_set_t *set, sched_time_t start, sched_time_t end);

/* out = a ∪ b, a ∩ b, a \ b. out must be distinct from a and b; its previous
 * contents are replaced. Return 0 or HCP_ENOMEM. */
int sched_set_union(const sched_set_t *a, const sched_set_t *b, sched_set_t *out);
int sched_set_intersect(const sched_set_t *a, const sched_set_t *b, sched_set_t *out);
int sched_set_subtract(const sched_set_t *a, const sched_set_t *b, sched_set_t *out);

/* Index of the first interval whose end is after t (the interval containing
 * t, or the next one), or set->len when there is none. O(log n). */
size_t sched_set_search(const sched_set_t *set, sched_time_t t);

/* An exclusion in local dates of the schedule's time zone: it covers
 * [from 00:00, until 00:00). Days count from 1970-01-01 (day 0). */
typedef struct sched_exclusion {
    int32_t from_day;   /* first excluded local date */
    int32_t until_day;  /* first local date no longer excluded; > from_day */
    const char *reason; /* borrowed; copied by sched_compile(); may be NULL */
} sched_exclusion_t;

/* The input of sched_compile(): an already validated MaintenanceSchedule.
 * All pointers are borrowed for the duration of the call only. */
typedef struct sched_spec {
    const char *time_zone;  /* IANA name; NULL or "" means UTC */
    const char *rrule;      /* RFC 5545 subset (sched_rrule_check), or NULL
                               when permit is absent */
    int start_minute;       /* window start, minutes after local midnight, 0..1439 */
    int32_t duration;       /* window length in seconds (elapsed time); 0 means
                               "until the next local midnight" */
    const sched_exclusion_t *exclusions; /* any order; may overlap */
    size_t n_exclusions;
} sched_spec_t;

typedef struct sched sched_t;

/* Checks that rrule is inside the supported RFC 5545 subset (DESIGN.md 3.2)
 * and that libical accepts it. On failure returns HCP_EINVAL and writes a
 * sentence naming the offending part into err (e.g. "COUNT is not supported;
 * use UNTIL"). Pure string inspection; never allocates on success paths that
 * the caller must free. */
int sched_rrule_check(const char *rrule, char *err, size_t errlen);

/* Compiles a MaintenanceSchedule into a new schedule (DESIGN.md 3.1): the
 * recurrence anchored at 1970-01-01T<start> local time, windows of the given
 * duration merged when they overlap or touch, DST gaps read with the offset
 * before the gap and ambiguous times taking the first occurrence, exclusions
 * cut out, and the permit/exclude table applied (no rrule and no exclusions:
 * never permitted; no rrule with exclusions: permitted outside them).
 * `now` only chooses where the initial expansion is done so that queries
 * around it are cheap; results never depend on it. Returns 0 and *out, or
 * HCP_EINVAL with err filled (unknown time zone, rule rejected), or
 * HCP_ENOMEM. */
int sched_compile(const sched_spec_t *spec, sched_time_t now, sched_t **out,
                  char *err, size_t errlen);

/* Constant and half-line leaves. Each returns a new reference or NULL when
 * out of memory. */
sched_t *sched_always(void);
sched_t *sched_never(void);
sched_t *sched_before(sched_time_t t); /* permitted on [-inf, t) */
sched_t *sched_after(sched_time_t t);  /* permitted on [t, +inf) */

/* A span of instants excluded, and the index of its reason. */
typedef struct sched_excluded {
    sched_time_t start, end; /* [start, end); SCHED_NEG_INF / SCHED_POS_INF allowed */
    size_t reason;           /* index into the reasons given with it */
} sched_excluded_t;

/* Permitted everywhere except the n spans (any order, may overlap; empty
 * ones and ones whose reason index is out of range are dropped), each
 * excluded with its reason (copied); sched_exclusion_at() names them. An
 * exclusion calendar's timeline. NULL when out of memory. */
sched_t *sched_excluding(const sched_excluded_t *v, size_t n, const char *const *reasons,
                         size_t n_reasons);

/* Intersection and union of two schedules; new reference or NULL. The
 * operands gain a reference each, so the caller may unref its own. */
sched_t *sched_and(sched_t *a, sched_t *b);
sched_t *sched_or(sched_t *a, sched_t *b);

sched_t *sched_ref(sched_t *s);
void sched_unref(sched_t *s); /* NULL is accepted */

/* Queries. Each returns 1 when an interval was found (stored in *iv), 0 when
 * there is none, or a negative error code. Intervals are maximal: their start
 * and end are the true transitions even when those lie far from t. */

/* The permitted interval containing t. */
int sched_containing(sched_t *s, sched_time_t t, sched_interval_t *iv);

/* The first permitted interval whose end is after t: the one containing t,
 * or else the next one, provided it starts before t + SCHED_LOOKAHEAD. An
 * interval permitted beyond the look-ahead keeps its true end when something
 * ends it (an exclusion, the rule's UNTIL, a half-line); otherwise its end is
 * SCHED_POS_INF. */
int sched_next(sched_t *s, sched_time_t t, sched_interval_t *iv);

/* The last permitted interval that starts at or before t (it may contain t),
 * provided it ends after t - SCHED_LOOKAHEAD. */
int sched_prev(sched_t *s, sched_time_t t, sched_interval_t *iv);

/* 1 when t is permitted, 0 when not, negative on error. */
int sched_permitted(sched_t *s, sched_time_t t);

/* The last instant <= t at which permitted() changed value, into *when.
 * Returns 1, 0 when permitted() has been constant since forever (within the
 * look-back of SCHED_LOOKAHEAD), or a negative error code. */
int sched_prev_transition(sched_t *s, sched_time_t t, sched_time_t *when);

/* The first instant > t at which permitted() changes value, into *when.
 * Returns 1, 0 when it never changes again within the look-ahead, or a
 * negative error code. */
int sched_next_transition(sched_t *s, sched_time_t t, sched_time_t *when);

/* The state at an instant and the one that follows it: what status and
 * metrics report as "current" and "next". */
typedef struct sched_state {
    int permitted;            /* 1: changes permitted at t */
    sched_interval_t current; /* the maximal interval of that state holding t;
                                 a restricted interval ends where the next
                                 window starts (SCHED_POS_INF when none) */
    int has_next;             /* current.end is finite: `next` follows it */
    sched_interval_t next;    /* the following interval of the other state */
    int no_window;            /* restricted with no window starting within
                                 SCHED_LOOKAHEAD of t (NoPermittedWindow) */
} sched_state_t;

/* Fills *st for instant t. Returns 0 or a negative error code. */
int sched_state_at(sched_t *s, sched_time_t t, sched_state_t *st);

/* Appends to out (union) every permitted interval that overlaps [from, to),
 * clipped to [from, to). Returns 0 or a negative error code. */
int sched_between(sched_t *s, sched_time_t from, sched_time_t to, sched_set_t *out);

/* Appends to out (empty or holding only earlier intervals) the permitted
 * intervals ending after `from`, in order, until it holds `count`: the
 * first may have started before `from` (its true start), and none starting
 * SCHED_LOOKAHEAD or more after `from` is added. What `preview` and
 * `explain` list as the next windows. Returns 0 or a negative error code. */
int sched_windows(sched_t *s, sched_time_t from, size_t count, sched_set_t *out);

/* For a compiled MaintenanceSchedule leaf: the reason of an exclusion
 * covering t (borrowed from the schedule, "" when it had none), or NULL when
 * t is not excluded or s is not such a leaf. */
const char *sched_exclusion_reason(const sched_t *s, sched_time_t t);

/* The exclusion covering t anywhere in s: in a MaintenanceSchedule leaf, or
 * in any operand of an intersection or union (a NodePool's timeline within
 * its HostedCluster's, an override before a policy). Returns its reason
 * (borrowed from the schedule, "" when it had none) and sets *until (when
 * not NULL) to the instant the excluded span containing t ends, or NULL
 * when no exclusion covers t. The first operand is searched first. */
const char *sched_exclusion_at(const sched_t *s, sched_time_t t, sched_time_t *until);

/* Approximate heap bytes held by the tree's memoised expansions. */
size_t sched_memory(const sched_t *s);

/* ---- time helpers shared with the policy module -------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date; month 1..12. */
int32_t sched_days_from_civil(int year, int month, int day);

/* Inverse of sched_days_from_civil(). */
void sched_civil_from_days(int32_t days, int *year, int *month, int *day);

/* Formats t as "YYYY-MM-DDTHH:MM:SSZ" into buf (at least 21 bytes). */
void sched_format_utc(sched_time_t t, char *buf, size_t buflen);

/* Parses an RFC 3339 timestamp ("2026-01-03T00:00:00Z", fractional seconds
 * and numeric offsets accepted) into *t. Returns 0 or HCP_EINVAL. */
int sched_parse_rfc3339(const char *s, sched_time_t *t);

/* Converts a local wall-clock time in the IANA zone tz to UTC with the rules
 * of DESIGN.md 3.1 (gap: offset before the gap; overlap: first occurrence).
 * Returns 0 or HCP_EINVAL for an unknown zone. */
int sched_local_to_utc(const char *tz, int32_t day, int minute_of_day, sched_time_t *t);

/* The UTC offset in seconds in force in zone tz at instant t, and the local
 * date (days since epoch) and second of day. Returns 0 or HCP_EINVAL. */
int sched_utc_to_local(const char *tz, sched_time_t t, int32_t *day, int *second_of_day,
                       int *utc_offset);

#endif
