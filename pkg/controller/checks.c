/* checks.c: the pre-start checks of other systems asked about held changes
 * (DESIGN.md 3.15, check/call.h); their verdict is the gate's last stage
 * (view.c hands it to the plan). */
#include "controller/internal.h"

#include <stdio.h>
#include <string.h>

#include "check/call.h"

/* The lead before its window at which the plan's held change is asked
 * about (with the window, the question's key and its system), or -1 when no
 * check applies to it: not opted in, nothing held a check is about, or no
 * check configured for its system. */
static sched_time_t checked(const check_runner_t *cr, const decide_plan_t *p,
                            sched_time_t *window, uint64_t *key, unsigned *system)
{
    if (!cr || !p->opted_in || !decide_plan_check_key(p, window, key, system))
        return -1;
    return check_config_lead(&cr->cfg, *system);
}

sched_time_t ctl_checks_ask(ctl_controller_t *c, const record_t *r, const decide_plan_t *p,
                            sched_time_t now)
{
    check_runner_t *cr = c->opts.checks;
    sched_time_t window, lead;
    uint64_t key;
    unsigned system;
    char words[DECIDE_MSGLEN], detail[300] = "";

    if (!cr || !c->leading || !p->self.uid)
        return SCHED_POS_INF;
    if ((lead = checked(cr, p, &window, &key, &system)) < 0) {
        check_runner_forget(cr, p->self.uid);
        return SCHED_POS_INF;
    }
    if (window != SCHED_NEG_INF && window - lead > now)
        return window - lead; /* asked at the lead: the answer is in by the window */
    decide_plan_change_words(p, words, sizeof(words));
    if (p->managed->audit.requested_by)
        snprintf(detail, sizeof(detail), "Requested by %s.", p->managed->audit.requested_by);
    notify_event_t ev = {.step = NOTIFY_PRE_START,
                         .kind = p->kind == DECIDE_HC ? "HostedCluster" : "NodePool",
                         .ns = r->ns,
                         .name = r->name,
                         .uid = p->self.uid,
                         .window = window,
                         .at = now,
                         .change = words,
                         .until = window == SCHED_NEG_INF ? SCHED_POS_INF : window,
                         .request = SCHED_NEG_INF,
                         .detail = detail[0] ? detail : NULL};
    const char *asked = p->managed->audit.requested_at;
    if (asked && sched_parse_rfc3339(asked, &ev.request) != 0)
        ev.request = SCHED_NEG_INF;
    check_runner_ask(cr, p->self.uid, key, system, &ev);
    return SCHED_POS_INF;
}

bool ctl_checks_apply(const ctl_controller_t *c, const decide_plan_t *p)
{
    sched_time_t window;
    uint64_t key;
    unsigned system;
    return checked(c->opts.checks, p, &window, &key, &system) >= 0;
}

void ctl_check_answered(ctl_controller_t *c, const char *kind, const char *ns, const char *name)
{
    if (c)
        ctl_enqueue(c, strcmp(kind, "HostedCluster") == 0 ? R_HC : R_NP, ns, name);
}

const check_runner_t *ctl_check_runner(const ctl_controller_t *c)
{
    return c ? c->opts.checks : NULL;
}
