/* aging.c: how long a held change has waited. See aging.h. */
#include "decide/aging.h"

#include "decide/plan.h"
#include "policy/guard.h"

sched_time_t decide_held_since(const decide_plan_t *p)
{
    sched_time_t t;
    if (!p->present || !p->managed || !p->self.data)
        return SCHED_NEG_INF;
    const char *at = p->managed->audit.requested_at;
    bool held = p->kind == DECIDE_HC
                    ? decide_hc_held(p->self.data) || decide_hc_fields_held(p->self.data)
                    : decide_np_held(p->self.data);
    if (!held && p->kind == DECIDE_NP && p->capi_kind == DECIDE_MD && p->capi.data) {
        const decide_capi_t *md = p->capi.data;
        held = md->drift != NULL;
        at = md->drift_since;
    }
    if (!held || !at || sched_parse_rfc3339(at, &t) != 0)
        return SCHED_NEG_INF;
    return t;
}

void decide_aging(sched_time_t since, sched_time_t warn, sched_time_t now, decide_aging_t *out)
{
    *out = (decide_aging_t){.since = since, .occasion = SCHED_NEG_INF, .next = SCHED_POS_INF};
    if (since == SCHED_NEG_INF || warn <= 0)
        return;
    sched_time_t first = since + warn;
    if (now < first) {
        out->next = first;
        return;
    }
    out->aging = true;
    out->occasion = first + (now - first) / GUARD_HOLD_AGE_REPEAT * GUARD_HOLD_AGE_REPEAT;
    out->next = out->occasion + GUARD_HOLD_AGE_REPEAT;
}

sched_time_t decide_aging_warning(sched_time_t configured)
{
    return configured == 0 ? GUARD_HOLD_AGE : configured;
}
