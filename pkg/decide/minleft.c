/* minleft.c: the minimum time left applied to a decision (minleft.h). */
#include "decide/minleft.h"

#include <stdio.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/slim.h"
#include "policy/guard.h"
#include "schedule/minleft.h"

/* An override in force on st (which may be NULL) at now. */
static bool override(const stanza_t *st, sched_time_t now)
{
    return st && stanza_permissive_at(st, now);
}

sched_time_t decide_min_left_of(bool nodepool, const stanza_t *st, const stanza_resolution_t *own,
                                const stanza_t *cluster_st, const stanza_resolution_t *cluster,
                                sched_time_t floor, sched_time_t now,
                                decide_min_source_t *source)
{
    sched_time_t pol = 0;

    *source = DECIDE_MIN_NONE;
    if (override(st, now) || (nodepool && override(cluster_st, now)))
        return 0;
    if (own && !own->degraded)
        pol = nodepool ? own->min_left_workers : own->min_left_cp;
    if (nodepool && cluster && !cluster->degraded && cluster->min_left_workers > pol)
        pol = cluster->min_left_workers;
    if (floor > pol) {
        *source = DECIDE_MIN_GUARD;
        return floor;
    }
    if (pol > 0)
        *source = DECIDE_MIN_POLICY;
    return pol;
}

void decide_min_left_format(sched_time_t secs, char *buf, size_t len)
{
    char raw[64];
    size_t o = 0;
    guard_format_duration(secs, raw, sizeof raw);
    for (const char *p = raw; *p && o + 1 < len; p++)
        if (*p != ' ')
            buf[o++] = *p;
    if (len)
        buf[o] = '\0';
}

int decide_min_left(sched_t *timeline, sched_time_t min, decide_min_source_t source,
                    sched_time_t now, decide_minleft_t *out)
{
    sched_interval_t run, win;
    int rc;

    memset(out, 0, sizeof(*out));
    if (min <= 0 || !timeline)
        return 0;
    out->min = min;
    out->source = source;
    if ((rc = sched_min_left_start(timeline, now, min, SCHED_LOOKAHEAD, &run, &win)) < 0)
        return rc;
    out->found = rc == 1;
    if (out->found) {
        out->start = run.start;
        out->last = run.end == SCHED_POS_INF ? SCHED_POS_INF : run.end - 1;
        out->window = win;
    }
    if (!out->found || out->start > now) {
        sched_state_t st;
        if ((rc = sched_state_at(timeline, now, &st)) < 0)
            return rc;
        out->tail = st.permitted;
        if (out->tail)
            out->now_window = st.current;
    }
    return 0;
}

/* "2026-11-28T02:00:00Z–2026-11-28T04:00:00Z" */
static void window_words(sched_interval_t w, char *buf, size_t len)
{
    char a[32], b[32];
    decide_format_time(w.start, a, sizeof a);
    decide_format_time(w.end, b, sizeof b);
    snprintf(buf, len, "%s\u2013%s", a[0] ? a : "(always)", b[0] ? b : "(no end)");
}

static const char *source_words(decide_min_source_t s)
{
    return s == DECIDE_MIN_GUARD ? "the guard rails' minTimeLeft" : "the policy's minTimeLeft";
}

void decide_min_left_apply(decide_decision_t *d, bool nodepool, const decide_minleft_t *m,
                           bool held, bool partial, const decide_capi_t *capi,
                           bool held_at_admission)
{
    char min[48], start[32], win[80], next[160];

    d->minleft = *m;
    if (m->min <= 0)
        return;
    decide_min_left_format(m->min, min, sizeof min);
    decide_format_time(m->found ? m->start : SCHED_POS_INF, start, sizeof start);
    if (m->found)
        snprintf(next, sizeof next, "the next start is at %s", start);
    else
        snprintf(next, sizeof next, "no window within 10 years has that much time");

    if (!d->restricted && m->tail) {
        d->restricted = true;
        d->restricted_reason = "MinTimeLeft";
        /* A control-plane update under way is one material change: no
         * pause under it. A NodePool's new template waits at admission, so
         * its MachineDeployment/MachineSet is paused only without the
         * webhooks (then the pause is the only brake). */
        if (nodepool) {
            d->pause_wanted = capi && !held_at_admission;
            d->hold_open = false;
        } else {
            d->pause_wanted = (held || !held_at_admission) && !(partial && capi && !capi->paused);
            d->hold_open = partial && !d->pause_wanted;
        }
        d->action = decide_pause_action(d->pause_wanted, capi);
        if (d->pending)
            d->pending_metric = held || d->pause_wanted ? 2 : d->pending_metric;
        window_words(m->now_window, win, sizeof win);
        d->paused_status = true;
        d->paused_reason = "MinTimeLeft";
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "No change may start now: the window %s has less than %s left (%s); %s.", win,
                 min, source_words(m->source), next);
        if (d->pending && held) {
            d->pending_status = true;
            d->pending_reason = "MinTimeLeft";
            if (d->held[0])
                snprintf(d->pending_message, sizeof(d->pending_message),
                         "The held change (%s) waits: the window %s has less than %s left; %s.",
                         d->held, win, min, next);
            else
                snprintf(d->pending_message, sizeof(d->pending_message),
                         "Pending changes wait: the window %s has less than %s left; %s.", win,
                         min, next);
        }
        /* The decision changes when the window ends (then it is merely
         * outside a window) or at the effective start, whichever is first. */
        if (m->found && m->start < d->wake)
            d->wake = m->start;
        return;
    }
    if (!d->restricted && held && m->found && m->start <= m->last && m->last != SCHED_POS_INF &&
        m->last + 1 < d->wake)
        d->wake = m->last + 1; /* the tail begins: the held change stops being let through */
    if (d->restricted && d->pending && held && d->pending_status &&
        strcmp(d->pending_reason, "ChangesBlocked") == 0 && !d->paused_by_other &&
        d->state.has_next && m->found) {
        if (d->held[0])
            snprintf(d->pending_message, sizeof(d->pending_message),
                     "The held change (%s) waits for the next start at %s (a permitted window "
                     "with at least %s left).",
                     d->held, start, min);
        else
            snprintf(d->pending_message, sizeof(d->pending_message),
                     "Pending changes wait for the next start at %s (a permitted window with at "
                     "least %s left).",
                     start, min);
        if (m->start < d->wake)
            d->wake = m->start;
    }
}

bool decide_next_start(const decide_decision_t *d, sched_time_t *at)
{
    *at = SCHED_POS_INF;
    if (d->minleft.min > 0) {
        if (d->minleft.found)
            *at = d->minleft.start;
        return d->minleft.found;
    }
    if (d->state.permitted || d->state.no_window || !d->state.has_next)
        return false;
    *at = d->state.next.start;
    return true;
}

double decide_min_left_eta(const decide_minleft_t *m, double timeline_eta, sched_time_t now)
{
    if (m->min <= 0)
        return timeline_eta;
    if (!m->found)
        return -1;
    if (now < m->start)
        return (double)(m->start - now);
    if (m->last == SCHED_POS_INF || now <= m->last)
        return 0;
    return timeline_eta;
}
