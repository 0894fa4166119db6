/* after.c: the cluster's health after a change (after.h). Pure. */
#include "decide/after.h"

#include <stdio.h>
#include <string.h>

#include "policy/guard.h"

static sched_time_t min_t(sched_time_t a, sched_time_t b)
{
    return a < b ? a : b;
}

/* The settle and grace times in force (after.h). */
static void times(sched_time_t *settle, sched_time_t *grace)
{
    if (*settle <= 0)
        *settle = GUARD_AFTER_SETTLE;
    if (*grace <= 0)
        *grace = GUARD_AFTER_GRACE;
    if (*grace > *settle)
        *grace = *settle;
}

void decide_after_change(const decide_health_t *h, bool nodepool, sched_time_t settle,
                         sched_time_t grace, sched_time_t now, decide_after_t *out)
{
    memset(out, 0, sizeof(*out));
    out->completed = out->since = out->at = SCHED_NEG_INF;
    out->wake = SCHED_POS_INF;
    times(&settle, &grace);
    if (h->outcome != NOTIFY_OUTCOME_COMPLETED || h->outcome_at == SCHED_NEG_INF)
        return; /* DECIDE_AFTER_NONE */
    sched_time_t c = h->outcome_at, end = c + settle;
    if (now >= end + DECIDE_AFTER_HORIZON)
        return; /* DECIDE_AFTER_NONE: long past */
    out->completed = c;
    char why[DECIDE_GATE_WHYLEN];
    if (decide_health_ok(h, nodepool, why, sizeof(why)) || now < c) {
        out->state = now < end ? DECIDE_AFTER_SETTLING : DECIDE_AFTER_HEALTHY;
        out->wake = now < end ? end : SCHED_POS_INF;
        out->at = now < end ? SCHED_NEG_INF : end;
        return;
    }
    /* Unhealthy now: since the failing condition's transition, the
     * completion at the earliest (an older failure was the change's to
     * mend; an unknown time is taken as the completion). */
    sched_time_t u = h->unhealthy_since > c ? h->unhealthy_since : c;
    if (u > end) { /* after the settle time: not the change's */
        out->state = DECIDE_AFTER_HEALTHY;
        out->at = end;
        return;
    }
    sched_time_t verdict = min_t(u + grace, end);
    if (now < verdict) {
        out->state = DECIDE_AFTER_SETTLING;
        out->wake = verdict;
        return;
    }
    out->state = DECIDE_AFTER_UNHEALTHY;
    out->since = u;
    out->at = verdict;
    out->wake = end + DECIDE_AFTER_HORIZON; /* the condition turns False then */
    snprintf(out->why, sizeof(out->why), "%s", why);
}

void decide_after_change_words(const decide_health_t *h, char *buf, size_t len)
{
    if (h->outcome_version[0])
        snprintf(buf, len, "release %s", h->outcome_version);
    else
        snprintf(buf, len, "the last change");
}

void decide_after_condition(const decide_after_t *a, const char *words, sched_time_t settle,
                            sched_time_t grace, bool *status, const char **reason, char *msg,
                            size_t len)
{
    if (a->state != DECIDE_AFTER_UNHEALTHY) {
        *status = false;
        *reason = "AsExpected";
        snprintf(msg, len, "No change completed within its settle time is unhealthy.");
        return;
    }
    char done[32], since[32], s[24], g[24];
    times(&settle, &grace);
    sched_format_utc(a->completed, done, sizeof(done));
    sched_format_utc(a->since, since, sizeof(since));
    guard_format_duration(settle, s, sizeof(s));
    guard_format_duration(grace, g, sizeof(g));
    *status = true;
    *reason = "Unhealthy";
    snprintf(msg, len,
             "HyperShift completed %s at %s; since %s %s, %s (settle time %s, grace time %s).",
             words, done, since, a->why,
             a->at < a->completed + settle ? "longer than the grace time" : "at the settle time's end",
             s, g);
}
