/* due.c: the notifications an object's state calls for (due.h). */
#include "notify/due.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void notify_marks_init(notify_marks_t *m)
{
    memset(m, 0, sizeof(*m));
    for (size_t i = 0; i < NOTIFY_STEP_COUNT; i++)
        m->at[i] = m->req[i] = SCHED_NEG_INF;
}

/* The index of lead in m's window-soon marks, adding it when add; -1. */
static int soon_slot(notify_marks_t *m, sched_time_t lead, bool add)
{
    for (size_t i = 0; i < m->n_soon; i++)
        if (m->soon_lead[i] == lead)
            return (int)i;
    if (!add || m->n_soon >= NOTIFY_MAX_LEADS)
        return -1;
    m->soon_lead[m->n_soon] = lead;
    m->soon_at[m->n_soon] = m->soon_req[m->n_soon] = SCHED_NEG_INF;
    return (int)m->n_soon++;
}

/* The window-soon mark of lead: its window, and its request in *req. */
static sched_time_t soon_mark(const notify_marks_t *m, sched_time_t lead, sched_time_t *req)
{
    for (size_t i = 0; i < m->n_soon; i++)
        if (m->soon_lead[i] == lead) {
            *req = m->soon_req[i];
            return m->soon_at[i];
        }
    *req = SCHED_NEG_INF;
    return SCHED_NEG_INF;
}

/* The steps whose marks name a request. */
static bool per_request(size_t step)
{
    return step == NOTIFY_HELD || step == NOTIFY_WINDOW_SOON || step == NOTIFY_INITIATED ||
           step == NOTIFY_HOLD_AGING || step == NOTIFY_SOAK_WAITING;
}

/* "48h", "90m", "30s": the shortest exact form. */
static void fmt_lead(sched_time_t lead, char *buf, size_t len)
{
    if (lead > 0 && lead % 3600 == 0)
        snprintf(buf, len, "%" PRId64 "h", (int64_t)lead / 3600);
    else if (lead > 0 && lead % 60 == 0)
        snprintf(buf, len, "%" PRId64 "m", (int64_t)lead / 60);
    else
        snprintf(buf, len, "%" PRId64 "s", (int64_t)lead);
}

/* Reads "<digits><h|m|s>" (the whole of s) into *out. 0 or -1. */
static int parse_lead(const char *s, sched_time_t *out)
{
    char *end;
    long long v;
    if (s[0] < '0' || s[0] > '9')
        return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || v <= 0 || v > 10LL * 366 * 86400 || end[0] == '\0' || end[1] != '\0')
        return -1;
    switch (end[0]) {
    case 'h': *out = (sched_time_t)v * 3600; return 0;
    case 'm': *out = (sched_time_t)v * 60; return 0;
    case 's': *out = (sched_time_t)v; return 0;
    default: return -1;
    }
}

#define SOON_PREFIX "window-soon-"

/* One token "name=value" (NUL-terminated copy). Malformed: ignored. */
static void parse_token(char *tok, notify_marks_t *m)
{
    char *eq = strchr(tok, '='), *at;
    sched_time_t t, lead, req = SCHED_NEG_INF;
    if (!eq)
        return;
    *eq = '\0';
    const char *val = eq + 1;
    if ((at = strchr(val, '@')) != NULL) {
        *at = '\0';
        if (sched_parse_rfc3339(at + 1, &req) != 0)
            return;
    }
    if (strcmp(val, "none") == 0)
        t = SCHED_POS_INF;
    else if (sched_parse_rfc3339(val, &t) != 0)
        return;
    if (strncmp(tok, SOON_PREFIX, sizeof(SOON_PREFIX) - 1) == 0) {
        if (parse_lead(tok + sizeof(SOON_PREFIX) - 1, &lead) != 0)
            return;
        int i = soon_slot(m, lead, true);
        if (i >= 0) {
            m->soon_at[i] = t;
            m->soon_req[i] = req;
        }
        return;
    }
    for (size_t s = 0; s < NOTIFY_STEP_COUNT; s++)
        if (s != NOTIFY_WINDOW_SOON && strcmp(tok, notify_step_name((notify_step_t)s)) == 0) {
            if (req != SCHED_NEG_INF && !per_request(s))
                return; /* a request on a step that has none: malformed */
            m->at[s] = t;
            m->req[s] = req;
            return;
        }
}

void notify_marks_parse(const char *s, notify_marks_t *m)
{
    char tok[128];
    notify_marks_init(m);
    if (!s)
        return;
    while (*s) {
        size_t n = strcspn(s, " \t\n");
        if (n > 0 && n < sizeof(tok)) {
            memcpy(tok, s, n);
            tok[n] = '\0';
            parse_token(tok, m);
        }
        s += n;
        s += strspn(s, " \t\n");
    }
}

static void append(char *buf, size_t len, size_t *used, const char *name, sched_time_t t,
                   sched_time_t req)
{
    char when[32], asked[40] = "";
    int n;
    if (t == SCHED_NEG_INF || *used >= len)
        return;
    if (t == SCHED_POS_INF)
        snprintf(when, sizeof(when), "none");
    else
        sched_format_utc(t, when, sizeof(when));
    if (req != SCHED_NEG_INF && req != SCHED_POS_INF) {
        asked[0] = '@';
        sched_format_utc(req, asked + 1, sizeof(asked) - 1);
    }
    n = snprintf(buf + *used, len - *used, "%s%s=%s%s", *used ? " " : "", name, when, asked);
    if (n < 0 || (size_t)n >= len - *used) {
        buf[*used] = '\0'; /* a token that does not fit is left out whole */
        *used = len;
        return;
    }
    *used += (size_t)n;
}

void notify_marks_format(const notify_marks_t *m, char *buf, size_t len)
{
    size_t used = 0;
    char name[48], lead[24];
    if (len == 0)
        return;
    buf[0] = '\0';
    for (size_t s = 0; s < NOTIFY_STEP_COUNT; s++) {
        if (s != NOTIFY_WINDOW_SOON) {
            append(buf, len, &used, notify_step_name((notify_step_t)s), m->at[s], m->req[s]);
            continue;
        }
        for (size_t i = 0; i < m->n_soon; i++) {
            fmt_lead(m->soon_lead[i], lead, sizeof(lead));
            snprintf(name, sizeof(name), SOON_PREFIX "%s", lead);
            append(buf, len, &used, name, m->soon_at[i], m->soon_req[i]);
        }
    }
}

/* (window a, request ra) before (window b, request rb): never notified
 * (SCHED_NEG_INF) is oldest, then by window, then by request. */
static bool before(sched_time_t a, sched_time_t ra, sched_time_t b, sched_time_t rb)
{
    if (b == SCHED_NEG_INF)
        return false;
    if (a == SCHED_NEG_INF || a < b)
        return true;
    return a == b && ra < rb;
}

/* The order of step's marks: by window, then request; soak-waiting's by
 * request first (a new request is news whatever its soak's end), then by
 * window (the same request's soak end learnt later). */
static bool mark_before(size_t step, sched_time_t a, sched_time_t ra, sched_time_t b,
                        sched_time_t rb)
{
    if (step != NOTIFY_SOAK_WAITING)
        return before(a, ra, b, rb);
    if (b == SCHED_NEG_INF)
        return false;
    if (a == SCHED_NEG_INF)
        return true;
    return ra != rb ? ra < rb : a < b;
}

static void later(size_t step, sched_time_t *mark, sched_time_t *req, sched_time_t t,
                  sched_time_t r)
{
    if (mark_before(step, *mark, *req, t, r)) {
        *mark = t;
        *req = r;
    }
}

void notify_marks_note(notify_marks_t *m, const notify_due_t *d, const notify_config_t *cfg)
{
    if (d->step >= NOTIFY_STEP_COUNT)
        return;
    sched_time_t req = per_request(d->step) ? d->request : SCHED_NEG_INF;
    if (d->step != NOTIFY_WINDOW_SOON) {
        later(d->step, &m->at[d->step], &m->req[d->step], d->window, req);
        return;
    }
    for (size_t i = 0; i < cfg->n_leads; i++)
        if (cfg->leads[i] >= d->lead) {
            int k = soon_slot(m, cfg->leads[i], true);
            if (k >= 0)
                later(NOTIFY_WINDOW_SOON, &m->soon_at[k], &m->soon_req[k], d->window, req);
        }
}

bool notify_marks_cover(const notify_marks_t *m, const notify_marks_t *add)
{
    for (size_t s = 0; s < NOTIFY_STEP_COUNT; s++)
        if (mark_before(s, m->at[s], m->req[s], add->at[s], add->req[s]))
            return false;
    for (size_t i = 0; i < add->n_soon; i++) {
        sched_time_t r, t = soon_mark(m, add->soon_lead[i], &r);
        if (before(t, r, add->soon_at[i], add->soon_req[i]))
            return false;
    }
    return true;
}

void notify_marks_merge(notify_marks_t *m, const notify_marks_t *add)
{
    for (size_t s = 0; s < NOTIFY_STEP_COUNT; s++)
        later(s, &m->at[s], &m->req[s], add->at[s], add->req[s]);
    for (size_t i = 0; i < add->n_soon; i++) {
        if (add->soon_at[i] == SCHED_NEG_INF)
            continue;
        int k = soon_slot(m, add->soon_lead[i], true);
        if (k >= 0)
            later(NOTIFY_WINDOW_SOON, &m->soon_at[k], &m->soon_req[k], add->soon_at[i],
                  add->soon_req[i]);
    }
}

static bool fresh(const notify_obs_t *o, sched_time_t t)
{
    return t != SCHED_NEG_INF && t <= o->now && o->now - t <= NOTIFY_FRESH;
}

/* The later of two marks is newer: never notified counts as oldest. */
static bool newer(sched_time_t t, sched_time_t mark)
{
    return t != SCHED_NEG_INF && (mark == SCHED_NEG_INF || t > mark);
}

static size_t add(notify_due_t *out, size_t n, notify_step_t step, sched_time_t window,
                  sched_time_t until, sched_time_t lead, sched_time_t request)
{
    if (n >= NOTIFY_DUE_MAX)
        return n;
    out[n] = (notify_due_t){step, window, until, lead,
                            per_request(step) ? request : SCHED_NEG_INF, 0, false};
    return n + 1;
}

/* The release waves' steps (decide/wave.h). A halt is told by its since
 * (the instant the halting cluster turned unhealthy) and its end by the
 * same mark: a halt told and not told over (the resumed mark is older)
 * is told over once the held change is no longer halted. */
static size_t wave_due(const notify_obs_t *o, const notify_marks_t *m, notify_due_t *out,
                       size_t n)
{
    sched_time_t halted = m->at[NOTIFY_WAVE_HALTED];
    bool halt_told = halted != SCHED_NEG_INF && newer(halted, m->at[NOTIFY_WAVE_RESUMED]);
    /* soak-waiting's window: the soak's end, or while it is not known the
     * request (an instant before any end), else the epoch */
    sched_time_t soak = o->wave_until != SCHED_POS_INF ? o->wave_until
                      : o->request != SCHED_NEG_INF    ? o->request
                                                       : 0;
    if (!o->held)
        return n;
    if (o->wave == 1 && mark_before(NOTIFY_SOAK_WAITING, m->at[NOTIFY_SOAK_WAITING],
                                    m->req[NOTIFY_SOAK_WAITING], soak, o->request))
        n = add(out, n, NOTIFY_SOAK_WAITING, soak, o->wave_until, 0, o->request);
    if (o->wave == 2 && newer(o->wave_since, halted))
        n = add(out, n, NOTIFY_WAVE_HALTED, o->wave_since, SCHED_POS_INF, 0, SCHED_NEG_INF);
    else if (o->wave != 2 && halt_told)
        n = add(out, n, NOTIFY_WAVE_RESUMED, halted, o->wave == 1 ? o->wave_until : SCHED_POS_INF,
                0, SCHED_NEG_INF);
    return n;
}

/* The shortest lead whose window-soon m does not have for (window, req);
 * 0 when every lead's is there. */
static sched_time_t soon_missing(const notify_config_t *cfg, const notify_marks_t *m,
                                 sched_time_t window, sched_time_t req)
{
    for (size_t i = cfg->n_leads; i-- > 0;) {
        sched_time_t r, t = soon_mark(m, cfg->leads[i], &r);
        if (before(t, r, window, req))
            return cfg->leads[i];
    }
    return 0;
}

size_t notify_due(const notify_obs_t *o, const notify_config_t *cfg, const notify_marks_t *m,
                  notify_due_t *out)
{
    size_t n = 0;
    sched_time_t next = o->has_next ? o->next : SCHED_POS_INF, req = o->request;
    sched_time_t held_mark = m->at[NOTIFY_HELD], init_mark = m->at[NOTIFY_INITIATED];
    sched_time_t held_req = m->req[NOTIFY_HELD], init_req = m->req[NOTIFY_INITIATED];

    if (o->held && o->restricted && !o->gate_failed && !o->rec_failed) {
        if (held_mark != next || held_req != req)
            n = add(out, n, NOTIFY_HELD, next, next, 0, req);
        if (o->has_next && o->now < next) {
            /* the shortest lead reached (leads are longest first); told
             * late too, as long as the window has not opened */
            sched_time_t lead = 0, r;
            for (size_t i = 0; i < cfg->n_leads; i++)
                if (next - o->now <= cfg->leads[i])
                    lead = cfg->leads[i];
            if (lead > 0 && (soon_mark(m, lead, &r) != next || r != req))
                n = add(out, n, NOTIFY_WINDOW_SOON, next, next, lead, req);
        }
    }
    if (o->gate_failed && o->current != SCHED_NEG_INF && m->at[NOTIFY_GATE_SKIPPED] != o->current)
        n = add(out, n, NOTIFY_GATE_SKIPPED, o->current, SCHED_POS_INF, 0, SCHED_NEG_INF);
    if (o->rec_failed && o->current != SCHED_NEG_INF &&
        m->at[NOTIFY_RELEASE_WITHDRAWN] != o->current)
        n = add(out, n, NOTIFY_RELEASE_WITHDRAWN, o->current, SCHED_POS_INF, 0, SCHED_NEG_INF);
    /* Let through: a change this controller told held (for a later window,
     * or a later request, than any it told initiated) is now under way in a
     * permitted interval. */
    bool told_held = held_mark != SCHED_NEG_INF &&
                     (held_mark == SCHED_POS_INF || before(init_mark, init_req, held_mark, held_req));
    /* A request recorded held that no held step named: the controller
     * first saw it with its window open (down, or behind its queue). */
    bool untold_held = o->held && req != SCHED_NEG_INF && held_req != req;
    if (o->let_through && !o->restricted && (told_held || untold_held) &&
        (init_mark != o->current || init_req != req)) {
        n = add(out, n, NOTIFY_INITIATED, o->current, SCHED_POS_INF, 0, req);
        /* the window opened before the controller reached a lead (or the
         * held request at all): the initiated step supersedes what was not
         * told and says so */
        if (untold_held)
            out[n - 1].superseded_held = true;
        else if (held_mark == o->current && held_req == req)
            out[n - 1].superseded = soon_missing(cfg, m, o->current, req);
    }
    if (o->outcome == NOTIFY_OUTCOME_COMPLETED || o->outcome == NOTIFY_OUTCOME_FAILED) {
        notify_step_t s = o->outcome == NOTIFY_OUTCOME_COMPLETED ? NOTIFY_COMPLETED : NOTIFY_FAILED;
        /* After a window this controller let a change through in, or told
         * a change held for: the record of the initiated step can be
         * missing (delivered just before a restart, its mark not yet
         * written) while the held one is there. */
        bool ours = (init_mark != SCHED_NEG_INF && o->outcome_at >= init_mark) ||
                    (held_mark != SCHED_NEG_INF && held_mark != SCHED_POS_INF &&
                     o->outcome_at >= held_mark);
        if (newer(o->outcome_at, m->at[s]) && (fresh(o, o->outcome_at) || ours))
            n = add(out, n, s, o->outcome_at, SCHED_POS_INF, 0, SCHED_NEG_INF);
    }
    if (newer(o->override_at, m->at[NOTIFY_OVERRIDE_SET]) &&
        (fresh(o, o->override_at) || m->at[NOTIFY_OVERRIDE_SET] != SCHED_NEG_INF))
        n = add(out, n, NOTIFY_OVERRIDE_SET, o->override_at, o->override_end, 0, SCHED_NEG_INF);
    if (o->override_end != SCHED_POS_INF && o->override_end <= o->now &&
        newer(o->override_end, m->at[NOTIFY_OVERRIDE_EXPIRED]) &&
        (fresh(o, o->override_end) || (m->at[NOTIFY_OVERRIDE_SET] != SCHED_NEG_INF &&
                                        m->at[NOTIFY_OVERRIDE_SET] <= o->override_end)))
        n = add(out, n, NOTIFY_OVERRIDE_EXPIRED, o->override_end, o->override_end, 0,
                SCHED_NEG_INF);
    /* A withdrawal: told once per record (its time), to whoever may have
     * been told the request was held. */
    bool told_held_before = held_mark != SCHED_NEG_INF && held_req != SCHED_NEG_INF &&
                            held_req <= o->withdrawn_at;
    if (newer(o->withdrawn_at, m->at[NOTIFY_WITHDRAWN]) && o->withdrawn_at <= o->now &&
        (fresh(o, o->withdrawn_at) || m->at[NOTIFY_WITHDRAWN] != SCHED_NEG_INF ||
         told_held_before))
        n = add(out, n, NOTIFY_WITHDRAWN, o->withdrawn_at, SCHED_POS_INF, 0, SCHED_NEG_INF);
    if (o->after_unhealthy &&
        newer(o->after_completed, m->at[NOTIFY_UNHEALTHY_AFTER_CHANGE]) &&
        (fresh(o, o->after_at) || m->at[NOTIFY_COMPLETED] == o->after_completed))
        n = add(out, n, NOTIFY_UNHEALTHY_AFTER_CHANGE, o->after_completed, SCHED_POS_INF, 0,
                SCHED_NEG_INF);
    /* A change held longer than holdAgeWarning: once per (occasion,
     * request), the occasions a week apart (decide/aging.h). */
    if (o->held && o->aging &&
        before(m->at[NOTIFY_HOLD_AGING], m->req[NOTIFY_HOLD_AGING], o->aging_at, req))
        n = add(out, n, NOTIFY_HOLD_AGING, o->aging_at, next, 0, req);
    n = wave_due(o, m, out, n);
    if (o->after_final && newer(o->after_completed, m->at[NOTIFY_POST_CHANGE]) &&
        (fresh(o, o->after_final_at) || m->at[NOTIFY_COMPLETED] == o->after_completed))
        n = add(out, n, NOTIFY_POST_CHANGE, o->after_completed, SCHED_POS_INF, 0, SCHED_NEG_INF);
    return n;
}

sched_time_t notify_due_wake(const notify_obs_t *o, const notify_config_t *cfg)
{
    sched_time_t w = SCHED_POS_INF;
    if (o->held && o->restricted && o->has_next)
        for (size_t i = 0; i < cfg->n_leads; i++) {
            sched_time_t t = o->next - cfg->leads[i];
            if (t > o->now && t < w)
                w = t;
        }
    if (o->override_end != SCHED_POS_INF && o->override_end > o->now && o->override_end < w)
        w = o->override_end;
    if (o->held && o->aging_next > o->now && o->aging_next < w)
        w = o->aging_next;
    return w;
}
