/* ics.c: RFC 5545 text of permitted windows and exclusions (ics.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "policy/ics.h"
#include "policy/guard.h"

#define FOLD 75 /* octets per line, CRLF excluded (RFC 5545 3.1) */

static void put(ics_t *c, const char *s, size_t n)
{
    if (!c->failed && hcp_buf_append(&c->buf, &c->len, &c->cap, 65536, s, n) != 0)
        c->failed = 1;
}

/* Appends one content line, folded: a fold never splits a UTF-8 sequence
 * (continuation bytes 10xxxxxx stay with their lead byte). */
static void line(ics_t *c, const char *s)
{
    size_t n = strlen(s), room = FOLD;

    while (n > room) {
        size_t cut = room;
        while (cut > 0 && ((unsigned char)s[cut] & 0xC0) == 0x80)
            cut--;
        if (cut == 0)
            cut = room; /* not UTF-8 at all: any cut will do */
        put(c, s, cut);
        put(c, "\r\n ", 3);
        s += cut;
        n -= cut;
        room = FOLD - 1; /* the leading space counts */
    }
    put(c, s, n);
    put(c, "\r\n", 2);
}

/* NAME:value with the value escaped as TEXT (RFC 5545 3.3.11); control
 * characters other than newline are dropped. */
static void text_line(ics_t *c, const char *name, const char *value)
{
    char out[2048];
    size_t o = (size_t)snprintf(out, sizeof out, "%s:", name);
    const char *v;

    for (v = value; *v && o + 3 < sizeof out; v++) {
        unsigned char ch = (unsigned char)*v;
        if (ch == '\\' || ch == ';' || ch == ',') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch == '\n') {
            out[o++] = '\\';
            out[o++] = 'n';
        } else if (ch >= 0x20 && ch != 0x7f) {
            out[o++] = (char)ch;
        }
    }
    out[o] = '\0';
    line(c, out);
}

/* 20261128T020000Z */
static void stamp(sched_time_t t, char *buf, size_t len)
{
    int32_t day = (int32_t)((t >= 0 ? t : t - 86399) / 86400);
    int y, m, d;
    sched_time_t s = t - (sched_time_t)day * 86400;

    sched_civil_from_days(day, &y, &m, &d);
    snprintf(buf, len, "%04d%02d%02dT%02d%02d%02dZ", y, m, d, (int)(s / 3600),
             (int)(s % 3600 / 60), (int)(s % 60));
}

void ics_begin(ics_t *c, const char *name)
{
    line(c, "BEGIN:VCALENDAR");
    line(c, "VERSION:2.0");
    line(c, "PRODID:-//hcp-controller//change management windows//EN");
    line(c, "CALSCALE:GREGORIAN");
    line(c, "METHOD:PUBLISH");
    text_line(c, "X-WR-CALNAME", name);
}

/* One VEVENT. kind names the UID's first part ("window", "exclusion"). */
static void event(ics_t *c, const char *kind, const char *uid, sched_time_t a, sched_time_t b,
                  const char *summary, const char *desc, const char *category, sched_time_t now)
{
    char s[24], e[24], ds[24], l[600];

    stamp(a, s, sizeof s);
    stamp(b, e, sizeof e);
    stamp(now, ds, sizeof ds);
    line(c, "BEGIN:VEVENT");
    snprintf(l, sizeof l, "UID:%s-%s-%s@hcp-controller", kind, s, uid);
    line(c, l);
    snprintf(l, sizeof l, "DTSTAMP:%s", ds);
    line(c, l);
    snprintf(l, sizeof l, "DTSTART:%s", s);
    line(c, l);
    snprintf(l, sizeof l, "DTEND:%s", e);
    line(c, l);
    text_line(c, "SUMMARY", summary);
    text_line(c, "DESCRIPTION", desc);
    if (category)
        text_line(c, "CATEGORIES", category);
    line(c, strcmp(kind, "window") == 0 ? "TRANSP:TRANSPARENT" : "TRANSP:OPAQUE");
    line(c, "END:VEVENT");
}

static void exclusions(ics_t *c, const ics_timeline_t *t, sched_time_t now)
{
    char title[600], desc[1024];
    size_t k, i;

    for (k = 0; k < t->n_policies; k++) {
        const policy_t *p = t->policies[k];
        for (i = 0; p && p->valid && i < p->n_exclusions; i++) {
            const policy_exclusion_t *x = &p->exclusions[i];
            sched_time_t a, b;
            if (sched_local_to_utc(p->time_zone, x->from_day, 0, &a) != 0 ||
                sched_local_to_utc(p->time_zone, x->until_day, 0, &b) != 0 || b <= t->from ||
                a >= t->until)
                continue;
            /* The scope says which changes it holds (CATEGORIES: its name,
             * for a calendar client to filter on). */
            static const char *const what[POLICY_NSCOPES] = {
                "changes", "minor upgrades", "node changes", "minor upgrades and node changes"};
            const char *held = x->scope < POLICY_NSCOPES ? what[x->scope] : "changes";
            snprintf(title, sizeof title, "%s: %s excluded%s%.200s", t->summary, held,
                     x->reason[0] ? ": " : "", x->reason);
            snprintf(desc, sizeof desc,
                     "Policy %s/%s excludes %s (exclude[%zu]%s%s, time zone %s)%s%.400s",
                     p->namespace_, p->name, held, i,
                     x->scope != POLICY_SCOPE_ALL ? ", scope " : "",
                     x->scope != POLICY_SCOPE_ALL ? policy_scope_name(x->scope) : "",
                     p->time_zone, x->reason[0] ? ". Reason: " : ".", x->reason);
            event(c, "exclusion", t->uid, a, b, title, desc, policy_scope_name(x->scope), now);
        }
    }
}

/* What a window's event says: when changes may start in it. */
static void window_description(const ics_timeline_t *t, sched_interval_t iv, int open, char *buf,
                               size_t len)
{
    const char *beyond = open ? " (it extends beyond the calendar's range)" : "";
    char min[48], last[32];

    if (t->min_left <= 0 || iv.end == SCHED_POS_INF) {
        snprintf(buf, len, "Material changes may start in this window%s.", beyond);
        return;
    }
    guard_format_duration(t->min_left, min, sizeof min);
    if (iv.start != SCHED_NEG_INF && iv.end - iv.start < t->min_left) {
        snprintf(buf, len,
                 "No material change starts in this window: it is shorter than the minimum "
                 "time left (%s).",
                 min);
        return;
    }
    sched_format_utc(iv.end - t->min_left, last, sizeof last);
    snprintf(buf, len,
             "Material changes may start in this window until %s (minimum time left %s: none "
             "starts in its last %s)%s.",
             last, min, min, beyond);
}

/* What a window's event adds for a change held past the windows
 * (t->held_from): that it does not start in it, or from when it may. */
static void held_description(const ics_timeline_t *t, sched_interval_t iv, char *buf, size_t len)
{
    char from[32];
    size_t used = strlen(buf);
    const char *why = t->held_why ? t->held_why : "a held change";

    if (t->held_from == 0)
        return;
    if (t->held_from == SCHED_POS_INF || iv.end == SCHED_POS_INF || iv.end <= t->held_from) {
        if (t->held_from == SCHED_POS_INF)
            snprintf(buf + used, len - used, " Not in this window: %s, held with no start "
                     "known yet.", why);
        else {
            sched_format_utc(t->held_from, from, sizeof from);
            snprintf(buf + used, len - used, " Not in this window: %s, held until %s.", why,
                     from);
        }
        return;
    }
    if (iv.start == SCHED_NEG_INF || iv.start < t->held_from) {
        sched_format_utc(t->held_from, from, sizeof from);
        snprintf(buf + used, len - used, " Held: %s; it may start in this window from %s.", why,
                 from);
    }
}

int ics_timeline(ics_t *c, const ics_timeline_t *t, sched_time_t now)
{
    sched_time_t lo = t->from - ((t->from % 86400) + 86400) % 86400;
    sched_time_t hi = t->until - ((t->until % 86400) + 86400) % 86400;
    sched_time_t at = t->from;
    sched_interval_t iv;
    char title[600], desc[1200];
    long n = 0;
    int rc;

    snprintf(title, sizeof title, "%s: changes permitted", t->summary);
    while (n < t->max_windows) {
        if ((rc = sched_next(t->sched, at, &iv)) < 0)
            return rc;
        if (rc == 0 || (iv.start != SCHED_NEG_INF && iv.start >= t->until))
            break;
        int open = iv.start == SCHED_NEG_INF || iv.end == SCHED_POS_INF;
        window_description(t, iv, open, desc, sizeof desc);
        held_description(t, iv, desc, sizeof desc);
        event(c, "window", t->uid, iv.start == SCHED_NEG_INF ? lo : iv.start,
              iv.end == SCHED_POS_INF ? hi : iv.end, title, desc, NULL, now);
        n++;
        if (iv.end == SCHED_POS_INF || iv.end <= at)
            break;
        at = iv.end;
    }
    exclusions(c, t, now);
    return c->failed ? HCP_ENOMEM : 0;
}

int ics_end(ics_t *c)
{
    line(c, "END:VCALENDAR");
    return c->failed ? HCP_ENOMEM : 0;
}

void ics_free(ics_t *c)
{
    free(c->buf);
    c->buf = NULL;
    c->len = c->cap = 0;
}
