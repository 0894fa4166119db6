/* icsread.c: a freeze calendar into excluded spans (icsread.h). */
#include "policy/icsread.h"

#include <libical/ical.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/error.h"
#include "base/yaml.h"

#define DAY 86400
#define MAX_STEPS 500000 /* recurrence iterations per RRULE */
#define REASON_MAX 200   /* bytes of a SUMMARY kept as a reason */

/* An instance moved or cancelled by a VEVENT carrying a RECURRENCE-ID. */
typedef struct moved {
    const char *uid; /* borrowed from the parsed calendar */
    sched_time_t at;
} moved_t;

/* How long each occurrence of an event lasts: `days` calendar days in its
 * zone, then `secs` seconds. */
typedef struct shape {
    int days;
    sched_time_t secs;
} shape_t;

typedef struct ctx {
    icsread_t *r;
    const char *tz;
    icalcomponent *cal;
    int *lines;        /* the line of each BEGIN:VEVENT, in order */
    size_t n_lines;
    moved_t *moved;
    size_t n_moved, cap_moved;
    size_t cap_spans;
    size_t seen;       /* VEVENTs of earlier calendars of the text */
    int line;          /* the VEVENT being read */
    bool oom, full;
} ctx_t;

static void clean_into(const char *s, char *out, size_t cap);
static void problem(ctx_t *x, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void problem(ctx_t *x, int line, const char *fmt, ...)
{
    icsread_t *r = x->r;
    if (r->n_problems < ICSREAD_MAX_PROBLEMS) {
        char raw[sizeof r->problems[0].message];
        va_list ap;
        va_start(ap, fmt);
        r->problems[r->n_problems].line = line;
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        clean_into(raw, r->problems[r->n_problems].message, sizeof raw);
    }
    r->n_problems++;
}

/* s as valid UTF-8 of at most cap-1 bytes into out (each byte that is not
 * part of strict UTF-8, as base/yaml judges it, becomes '?'; control
 * characters spaces; a cut never splits a sequence): it goes into JSON. */
static void clean_into(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), o = 0, i = 0;
    while (i < n && o + 1 < cap) {
        size_t good = i + hcp_yaml_bad_utf8(s + i, n - i), take = good - i;
        if (take > cap - 1 - o) {
            take = cap - 1 - o;
            while (take > 0 && ((unsigned char)s[i + take] & 0xC0) == 0x80)
                take--;
        }
        for (size_t k = 0; k < take; k++) {
            unsigned char c = (unsigned char)s[i + k];
            out[o++] = c < 0x20 || c == 0x7F ? ' ' : (char)c;
        }
        i += take;
        if (i < good)
            break; /* cut */
        if (i < n && o + 1 < cap) {
            out[o++] = '?';
            i++;
        }
    }
    out[o] = '\0';
}

static char *clean_text(const char *s)
{
    char *out = malloc(REASON_MAX + 1);
    if (out)
        clean_into(s, out, REASON_MAX + 1);
    return out;
}

/* arr (elements of size bytes, *cap allocated) with room for element n:
 * itself, or grown to twice its capacity. NULL with x->oom set when out of
 * memory (arr is then unchanged, still the caller's). */
static void *grown(ctx_t *x, void *arr, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return arr;
    size_t c = *cap ? 2 * *cap : 16;
    void *v = realloc(arr, c * size);
    if (!v) {
        x->oom = true;
        return NULL;
    }
    *cap = c;
    return v;
}

/* ---- times -------------------------------------------------------------- */

/* The zone a property's TZID names: a VTIMEZONE of the calendar, else a
 * zone libical knows. 0 with *zone NULL when there is no TZID; -1 when it
 * names nothing known (*tzid set). */
static int prop_zone(ctx_t *x, icalproperty *p, icaltimezone **zone, const char **tzid)
{
    icalparameter *par = icalproperty_get_first_parameter(p, ICAL_TZID_PARAMETER);
    *zone = NULL;
    *tzid = par ? icalparameter_get_tzid(par) : NULL;
    if (!par)
        return 0;
    if (*tzid && **tzid) {
        *zone = icalcomponent_get_timezone(x->cal, *tzid);
        if (!*zone)
            *zone = icaltimezone_get_builtin_timezone(*tzid);
        if (!*zone)
            *zone = icaltimezone_get_builtin_timezone_from_tzid(*tzid);
    }
    if (!*tzid)
        *tzid = "";
    return *zone ? 0 : -1;
}

/* t in UTC: a UTC time as it is, a zoned one in its zone, a floating time
 * or a date in the policy's zone. -1 when t is not a usable time. */
static int to_utc(const ctx_t *x, struct icaltimetype t, icaltimezone *zone, sched_time_t *out)
{
    if (icaltime_is_null_time(t) || t.year < 1970 || t.year > 2500 || t.month < 1 ||
        t.month > 12 || t.day < 1 || t.day > icaltime_days_in_month(t.month, t.year))
        return -1;
    if (t.is_date || (!zone && !icaltime_is_utc(t))) {
        int32_t day = sched_days_from_civil(t.year, t.month, t.day);
        int sec = t.is_date ? 0 : t.hour * 3600 + t.minute * 60 + t.second;
        sched_time_t u;
        if (t.hour > 23 || t.minute > 59 || t.second > 60 ||
            sched_local_to_utc(x->tz, day, sec / 60, &u) != 0)
            return -1;
        *out = u + sec % 60;
        return 0;
    }
    *out = (sched_time_t)icaltime_as_timet_with_zone(
        t, icaltime_is_utc(t) ? icaltimezone_get_utc_timezone() : zone);
    return 0;
}

/* ---- spans -------------------------------------------------------------- */

static void add_span(ctx_t *x, sched_time_t start, sched_time_t end, size_t reason)
{
    icsread_t *r = x->r;
    if (start >= r->until && end > start)
        r->beyond = true; /* not read: the caller holds from `until` on */
    if (end <= r->from || start >= r->until || end <= start || x->oom || x->full)
        return;
    if (r->n_spans == ICSREAD_MAX_SPANS) {
        char a[32], b[32];
        sched_format_utc(r->from, a, sizeof a);
        sched_format_utc(r->until, b, sizeof b);
        problem(x, x->line, "has more than %d occurrences between %s and %s", ICSREAD_MAX_SPANS, a, b);
        x->full = true;
        return;
    }
    sched_excluded_t *v = grown(x, r->spans, &x->cap_spans, r->n_spans, sizeof *v);
    if (!v)
        return;
    r->spans = v;
    r->spans[r->n_spans++] = (sched_excluded_t){start, end, reason};
}

static bool is_moved(const ctx_t *x, const char *uid, sched_time_t at)
{
    for (size_t i = 0; uid && i < x->n_moved; i++)
        if (x->moved[i].at == at && strcmp(x->moved[i].uid, uid) == 0)
            return true;
    return false;
}

/* One event being expanded. */
typedef struct event {
    icalcomponent *c;
    int line;
    bool master;          /* not an instance that replaces another */
    const char *uid;      /* its UID, for the instances moved; may be NULL */
    icaltimezone *zone;   /* DTSTART's zone, NULL floating, date or UTC */
    shape_t shape;
    size_t reason;
    sched_time_t *ex;     /* EXDATE instants */
    size_t n_ex;
} event_t;

/* The end of an occurrence starting at local time t (start in UTC). */
static int occurrence_end(const ctx_t *x, const event_t *e, struct icaltimetype t,
                          sched_time_t start, sched_time_t *end)
{
    if (e->shape.days == 0) {
        *end = start + e->shape.secs;
        return 0;
    }
    icaltime_adjust(&t, e->shape.days, 0, 0, 0);
    if (to_utc(x, t, e->zone, end) != 0)
        return -1;
    *end += e->shape.secs;
    return 0;
}

/* An occurrence starting at local time t of e: added unless an EXDATE or a
 * moved instance takes it out. -1 when its times cannot be worked out. */
static int occurrence(ctx_t *x, const event_t *e, struct icaltimetype t)
{
    sched_time_t start, end;
    if (to_utc(x, t, e->zone, &start) != 0 || occurrence_end(x, e, t, start, &end) != 0)
        return -1;
    for (size_t i = 0; i < e->n_ex; i++)
        if (e->ex[i] == start)
            return 0;
    if (!is_moved(x, e->uid, start))
        add_span(x, start, end, e->reason);
    return 0;
}

/* The RRULEs of e from DTSTART dt. Returns 0, or -1 after a problem. */
static int expand_rules(ctx_t *x, const event_t *e, struct icaltimetype dt)
{
    for (icalproperty *p = icalcomponent_get_first_property(e->c, ICAL_RRULE_PROPERTY); p;
         p = icalcomponent_get_next_property(e->c, ICAL_RRULE_PROPERTY)) {
        struct icalrecurrencetype rule = icalproperty_get_rrule(p);
        if (rule.freq == ICAL_NO_RECURRENCE) {
            problem(x, e->line, "RRULE cannot be read");
            return -1;
        }
        icalerror_clear_errno();
        icalrecur_iterator *it = icalrecur_iterator_new(rule, dt);
        if (!it) {
            problem(x, e->line, "RRULE %s cannot be expanded", icalrecurrencetype_as_string(&rule));
            return -1;
        }
        /* Skip what ends before the range: start a little before it. */
        sched_time_t start0;
        if (rule.count == 0 && to_utc(x, dt, e->zone, &start0) == 0) {
            sched_time_t skip = x->r->from - 2 * DAY - e->shape.days * (sched_time_t)DAY -
                                e->shape.secs;
            if (skip > start0) {
                struct icaltimetype s =
                    icaltime_from_timet_with_zone((time_t)skip, dt.is_date,
                                                  e->zone ? e->zone
                                                          : icaltimezone_get_utc_timezone());
                s.zone = dt.zone;
                icalrecur_iterator_set_start(it, s);
            }
        }
        int rc = 0;
        for (long steps = 0;; steps++) {
            struct icaltimetype t = icalrecur_iterator_next(it);
            sched_time_t at;
            if (icaltime_is_null_time(t))
                break;
            if (steps == MAX_STEPS) {
                problem(x, e->line, "RRULE yields more than %d occurrences", MAX_STEPS);
                rc = -1;
                break;
            }
            t.zone = dt.zone;
            t.is_date = dt.is_date;
            if (icaltime_compare(t, dt) == 0)
                continue; /* DTSTART is the first occurrence, added already */
            if (to_utc(x, t, e->zone, &at) != 0) {
                if (t.year > 2500) { /* libical's iteration reaches 2582 */
                    x->r->beyond = true;
                    break;
                }
                problem(x, e->line, "RRULE yields an occurrence whose time cannot be read");
                rc = -1;
                break;
            }
            if (at >= x->r->until) {
                x->r->beyond = true;
                break;
            }
            if (occurrence(x, e, t) != 0) {
                problem(x, e->line, "RRULE yields an occurrence whose time cannot be read");
                rc = -1;
                break;
            }
            if (x->full || x->oom)
                break;
        }
        icalrecur_iterator_free(it);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* The RDATEs of e. Returns 0, or -1 after a problem. */
static int expand_rdates(ctx_t *x, const event_t *e)
{
    for (icalproperty *p = icalcomponent_get_first_property(e->c, ICAL_RDATE_PROPERTY); p;
         p = icalcomponent_get_next_property(e->c, ICAL_RDATE_PROPERTY)) {
        icaltimezone *zone;
        const char *tzid;
        if (prop_zone(x, p, &zone, &tzid) != 0) {
            problem(x, e->line, "RDATE's TZID \"%s\" is neither a VTIMEZONE of the calendar "
                    "nor a known time zone", tzid);
            return -1;
        }
        struct icaldatetimeperiodtype v = icalproperty_get_rdate(p);
        if (!icaltime_is_null_time(v.time)) {
            event_t one = *e;
            one.zone = zone;
            if (zone)
                v.time.zone = zone;
            if (occurrence(x, &one, v.time) != 0) {
                problem(x, e->line, "RDATE %s cannot be read", icaltime_as_ical_string(v.time));
                return -1;
            }
            continue;
        }
        sched_time_t a, b;
        struct icaltimetype end = v.period.end;
        if (icaltime_is_null_time(end)) {
            end = icaltime_add(v.period.start, v.period.duration);
        }
        if (to_utc(x, v.period.start, zone, &a) != 0 || to_utc(x, end, zone, &b) != 0 ||
            b < a) {
            problem(x, e->line, "RDATE period cannot be read");
            return -1;
        }
        if (!is_moved(x, e->uid, a))
            add_span(x, a, b, e->reason);
    }
    return 0;
}

/* The EXDATE instants of e into e->ex. Returns 0, -1 after a problem. */
static int read_exdates(ctx_t *x, event_t *e)
{
    size_t n = 0, cap = 0;
    for (icalproperty *p = icalcomponent_get_first_property(e->c, ICAL_EXDATE_PROPERTY); p;
         p = icalcomponent_get_next_property(e->c, ICAL_EXDATE_PROPERTY)) {
        icaltimezone *zone;
        const char *tzid;
        sched_time_t at;
        if (prop_zone(x, p, &zone, &tzid) != 0) {
            problem(x, e->line, "EXDATE's TZID \"%s\" is neither a VTIMEZONE of the calendar "
                    "nor a known time zone", tzid);
            return -1;
        }
        struct icaltimetype t = icalproperty_get_exdate(p);
        if (to_utc(x, t, zone, &at) != 0) {
            problem(x, e->line, "EXDATE cannot be read");
            return -1;
        }
        sched_time_t *v = grown(x, e->ex, &cap, n, sizeof *v);
        if (!v)
            return -1;
        e->ex = v;
        e->ex[n++] = at;
        e->n_ex = n;
    }
    return 0;
}

/* DTSTART or another date-time property of c with its zone. */
static int prop_time(ctx_t *x, icalcomponent *c, icalproperty_kind kind, int line,
                     const char *name, struct icaltimetype *t, icaltimezone **zone)
{
    icalproperty *p = icalcomponent_get_first_property(c, kind);
    const char *tzid;
    *zone = NULL;
    *t = icaltime_null_time();
    if (!p)
        return 0;
    if (prop_zone(x, p, zone, &tzid) != 0) {
        problem(x, line, "%s's TZID \"%s\" is neither a VTIMEZONE of the calendar nor a known "
                "time zone", name, tzid);
        return -1;
    }
    icalvalue *v = icalproperty_get_value(p);
    if (!v) {
        problem(x, line, "%s has no value", name);
        return -1;
    }
    *t = icalvalue_get_datetime(v);
    if (*zone)
        t->zone = *zone;
    return 0;
}

static int reason_of(ctx_t *x, icalcomponent *c, int line, size_t *index)
{
    icsread_t *r = x->r;
    const char *summary = icalcomponent_get_summary(c);
    const char *uid = icalcomponent_get_uid(c);
    char fallback[96];
    char **v = realloc(r->reasons, (r->n_reasons + 1) * sizeof *v);
    if (!v)
        return HCP_ENOMEM;
    r->reasons = v;
    if (!summary || !*summary) {
        snprintf(fallback, sizeof fallback, "calendar event at line %d%s%.48s", line,
                 uid ? " " : "", uid ? uid : "");
        summary = fallback;
    }
    if (!(v[r->n_reasons] = clean_text(summary)))
        return HCP_ENOMEM;
    *index = r->n_reasons++;
    return 0;
}

/* One VEVENT (not cancelled). Returns 0, -1 after a problem, HCP_ENOMEM. */
static int read_event(ctx_t *x, icalcomponent *c, int line)
{
    event_t e = {.c = c, .line = line};
    x->line = line;
    struct icaltimetype dt, de;
    icaltimezone *ze;
    sched_time_t a, b;
    int rc;

    icalproperty *bad = icalcomponent_get_first_property(c, ICAL_XLICERROR_PROPERTY);
    if (bad) {
        problem(x, line, "%s", icalproperty_get_xlicerror(bad));
        return -1;
    }
    if (prop_time(x, c, ICAL_DTSTART_PROPERTY, line, "DTSTART", &dt, &e.zone) != 0 ||
        prop_time(x, c, ICAL_DTEND_PROPERTY, line, "DTEND", &de, &ze) != 0)
        return -1;
    if (icaltime_is_null_time(dt)) {
        problem(x, line, "VEVENT has no DTSTART");
        return -1;
    }
    if (to_utc(x, dt, e.zone, &a) != 0) {
        problem(x, line, "DTSTART %s cannot be read (years 1970 to 2500)",
                icaltime_as_ical_string(dt));
        return -1;
    }
    icalproperty *dur = icalcomponent_get_first_property(c, ICAL_DURATION_PROPERTY);
    if (dur && !icaltime_is_null_time(de)) {
        problem(x, line, "VEVENT has both DTEND and DURATION");
        return -1;
    }
    if (!icaltime_is_null_time(de)) {
        if (de.is_date != dt.is_date) {
            problem(x, line, "DTEND is a %s but DTSTART a %s", de.is_date ? "date" : "date-time",
                    dt.is_date ? "date" : "date-time");
            return -1;
        }
        if (to_utc(x, de, ze, &b) != 0 || b < a) {
            problem(x, line, "DTEND %s is not a time after DTSTART", icaltime_as_ical_string(de));
            return -1;
        }
        if (dt.is_date)
            e.shape.days = (int)(sched_days_from_civil(de.year, de.month, de.day) -
                                 sched_days_from_civil(dt.year, dt.month, dt.day));
        else
            e.shape.secs = b - a;
    } else if (dur) {
        struct icaldurationtype d = icalproperty_get_duration(dur);
        if (d.is_neg || icaldurationtype_is_bad_duration(d)) {
            problem(x, line, "DURATION %s is not a length of time",
                    icaldurationtype_as_ical_string(d));
            return -1;
        }
        e.shape.days = (int)(d.weeks * 7 + d.days);
        e.shape.secs = (sched_time_t)d.hours * 3600 + d.minutes * 60 + d.seconds;
    } else if (dt.is_date) {
        e.shape.days = 1; /* RFC 5545 3.6.1: an all-day event lasts its day */
    }
    e.master = !icalcomponent_get_first_property(c, ICAL_RECURRENCEID_PROPERTY);
    if (e.master)
        e.uid = icalcomponent_get_uid(c);
    if ((rc = reason_of(x, c, line, &e.reason)) != 0)
        return rc;
    rc = read_exdates(x, &e);
    if (rc == 0 && occurrence(x, &e, dt) != 0) {
        problem(x, line, "DTSTART cannot be read");
        rc = -1;
    }
    if (rc == 0 && e.master)
        rc = expand_rules(x, &e, dt);
    if (rc == 0)
        rc = expand_rdates(x, &e);
    free(e.ex);
    if (x->oom)
        return HCP_ENOMEM;
    if (rc == 0)
        x->r->events++;
    return rc;
}

static bool cancelled(icalcomponent *c)
{
    return icalcomponent_get_status(c) == ICAL_STATUS_CANCELLED;
}

/* The instances that VEVENTs with a RECURRENCE-ID replace or cancel. */
static void note_moved(ctx_t *x)
{
    size_t i = x->seen;
    for (icalcomponent *c = icalcomponent_get_first_component(x->cal, ICAL_VEVENT_COMPONENT); c;
         c = icalcomponent_get_next_component(x->cal, ICAL_VEVENT_COMPONENT), i++) {
        struct icaltimetype t;
        icaltimezone *zone;
        sched_time_t at;
        const char *uid = icalcomponent_get_uid(c);
        int line = i < x->n_lines ? x->lines[i] : 0;
        if (!uid || prop_time(x, c, ICAL_RECURRENCEID_PROPERTY, line, "RECURRENCE-ID", &t,
                              &zone) != 0)
            continue;
        if (icaltime_is_null_time(t))
            continue;
        if (to_utc(x, t, zone, &at) != 0) {
            problem(x, line, "RECURRENCE-ID cannot be read");
            continue;
        }
        moved_t *v = grown(x, x->moved, &x->cap_moved, x->n_moved, sizeof *v);
        if (!v)
            return;
        x->moved = v;
        x->moved[x->n_moved++] = (moved_t){uid, at};
    }
}

/* The line of every BEGIN:VEVENT, in order. */
static int scan_lines(ctx_t *x, const char *s, size_t n)
{
    size_t cap = 0;
    int line = 1;
    for (size_t i = 0; i < n;) {
        const char *nl = memchr(s + i, '\n', n - i);
        size_t end = nl ? (size_t)(nl - s) : n;
        if (end - i >= 12 && strncasecmp(s + i, "BEGIN:VEVENT", 12) == 0) {
            int *v = grown(x, x->lines, &cap, x->n_lines, sizeof *v);
            if (!v)
                return HCP_ENOMEM;
            x->lines = v;
            x->lines[x->n_lines++] = line;
        }
        line++;
        i = end + 1;
    }
    return 0;
}

static void read_calendar(ctx_t *x)
{
    size_t i = x->seen;
    for (icalproperty *p = icalcomponent_get_first_property(x->cal, ICAL_XLICERROR_PROPERTY); p;
         p = icalcomponent_get_next_property(x->cal, ICAL_XLICERROR_PROPERTY))
        problem(x, 0, "%s", icalproperty_get_xlicerror(p));
    for (icalcomponent *z = icalcomponent_get_first_component(x->cal, ICAL_VTIMEZONE_COMPONENT);
         z; z = icalcomponent_get_next_component(x->cal, ICAL_VTIMEZONE_COMPONENT)) {
        icalproperty *p = icalcomponent_get_first_property(z, ICAL_XLICERROR_PROPERTY);
        if (p)
            problem(x, 0, "VTIMEZONE: %s", icalproperty_get_xlicerror(p));
    }
    note_moved(x);
    for (icalcomponent *c = icalcomponent_get_first_component(x->cal, ICAL_VEVENT_COMPONENT);
         c && !x->oom; c = icalcomponent_get_next_component(x->cal, ICAL_VEVENT_COMPONENT), i++) {
        if (cancelled(c)) {
            x->r->cancelled++;
            continue;
        }
        if (read_event(x, c, i < x->n_lines ? x->lines[i] : 0) == HCP_ENOMEM)
            x->oom = true;
    }
    x->seen = i;
}

int icsread_parse(const char *text, size_t len, const char *tz, sched_time_t now,
                  icsread_t *out)
{
    ctx_t x = {.r = out, .tz = tz && *tz ? tz : "UTC"};
    char *buf = NULL;
    icalcomponent *root = NULL;

    memset(out, 0, sizeof *out);
    out->from = now - (sched_time_t)ICSREAD_PAST_DAYS * DAY;
    out->until = now + (sched_time_t)ICSREAD_AHEAD_DAYS * DAY;
    if (len > ICSREAD_MAX_TEXT) {
        problem(&x, 0, "is %zu bytes; at most %u are read", len, ICSREAD_MAX_TEXT);
        return 0;
    }
    if (memchr(text, '\0', len)) {
        problem(&x, 0, "holds a NUL byte: not iCalendar text");
        return 0;
    }
    if (!(buf = malloc(len + 1)))
        return HCP_ENOMEM;
    memcpy(buf, text, len);
    buf[len] = '\0';
    if (scan_lines(&x, buf, len) != 0) {
        free(buf);
        return HCP_ENOMEM;
    }
    icalerror_clear_errno();
    root = icalparser_parse_string(buf);
    free(buf);
    if (!root) {
        problem(&x, 0, "is not iCalendar text: no BEGIN:VCALENDAR ... END:VCALENDAR");
    } else if (icalcomponent_isa(root) == ICAL_VCALENDAR_COMPONENT) {
        x.cal = root;
        read_calendar(&x);
    } else if (icalcomponent_isa(root) == ICAL_XROOT_COMPONENT) {
        size_t skipped = 0;
        for (icalcomponent *c = icalcomponent_get_first_component(root, ICAL_ANY_COMPONENT);
             c && !x.oom; c = icalcomponent_get_next_component(root, ICAL_ANY_COMPONENT)) {
            if (icalcomponent_isa(c) != ICAL_VCALENDAR_COMPONENT) {
                skipped++;
                continue;
            }
            x.cal = c;
            read_calendar(&x); /* the lines count over every calendar in turn */
        }
        if (skipped)
            problem(&x, 0, "holds %zu components outside a VCALENDAR", skipped);
    } else {
        problem(&x, 0, "holds a %s, not a VCALENDAR",
                icalcomponent_kind_to_string(icalcomponent_isa(root)));
    }
    icalcomponent_free(root);
    free(x.lines);
    free(x.moved);
    icalerror_clear_errno();
    return x.oom ? HCP_ENOMEM : 0;
}

void icsread_free(icsread_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_reasons; i++)
        free(r->reasons[i]);
    free(r->reasons);
    free(r->spans);
    memset(r, 0, sizeof *r);
}
