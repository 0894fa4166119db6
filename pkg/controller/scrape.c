/* scrape.c: the /metrics values of every object, planned at scrape time.
 *
 * A scrape asks the same plan as reconcile (decide_plan()), through a view
 * that only reads: it hands out the resolutions the records keep when they
 * are current and lets the plan resolve the rest into storage it frees
 * again. A scrape creates no record and keeps nothing. */
#include "controller/internal.h"

typedef struct metrics_ctx {
    ctl_controller_t *c;
    decide_view_t view;
    sched_time_t now;
    void (*fn)(const ctl_object_metrics_t *m, void *ud);
    void *ud;
} metrics_ctx_t;

/* Fills the time-based metric values from a timeline's state at now. */
static void timeline_metrics(const sched_state_t *st, sched_time_t now, ctl_object_metrics_t *m)
{
    if (st->permitted) {
        m->next_change_eta = 0;
        m->permissive_remaining =
            st->current.end == SCHED_POS_INF ? -1 : (double)(st->current.end - now);
        m->last_change = 0;
    } else {
        m->next_change_eta = st->no_window || !st->has_next ? -1 : (double)(st->next.start - now);
        m->permissive_remaining = 0;
        m->last_change =
            st->current.start == SCHED_NEG_INF ? -1 : (double)(now - st->current.start);
    }
}

/* The metric values of a plan (DESIGN.md 3.8): -2 where a timeline is in
 * error (a degraded resolution, of the object or of its HostedCluster). */
static void plan_metrics(const decide_plan_t *p, sched_time_t now, ctl_object_metrics_t *m)
{
    if (!p->res)
        return;
    m->strategy = stanza_strategy_name(p->res->strategy);
    bool degraded = p->res->degraded || (p->cluster && p->cluster->degraded);
    if (!p->decided)
        return;
    if (!degraded)
        timeline_metrics(&p->d.state, now, m);
    m->change_pending = p->d.pending_metric;
}

static void object_metrics(const kube_obj *o, metrics_ctx_t *x, decide_kind_t kind)
{
    bool hc = kind == DECIDE_HC;
    ctl_object_metrics_t m = {hc ? "HostedCluster" : "NodePool", o->ns, o->name,
                              hc ? "control-plane" : "worker-nodes", "", 0, -2, -2, -1};
    decide_plan_t p;
    if (!o->data)
        return;
    decide_plan(&x->view, kind, o->ns, o->name, x->now, &p, NULL, 0);
    plan_metrics(&p, x->now, &m);
    decide_plan_free(&p);
    x->fn(&m, x->ud);
}

static void hc_metrics(const kube_obj *o, void *ud)
{
    object_metrics(o, ud, DECIDE_HC);
}

static void np_metrics(const kube_obj *o, void *ud)
{
    object_metrics(o, ud, DECIDE_NP);
}

void ctl_foreach_object_metrics(ctl_controller_t *c,
                                void (*fn)(const ctl_object_metrics_t *m, void *ud), void *ud)
{
    metrics_ctx_t x = {.c = c, .now = ctl_clock_now(&c->opts.clock, c->loop), .fn = fn, .ud = ud};
    ctl_view_init(c, false, &x.view);
    kube_cache_foreach(&c->hcs, hc_metrics, &x);
    kube_cache_foreach(&c->nps, np_metrics, &x);
}

typedef struct policy_metrics_ctx {
    void (*fn)(const ctl_policy_metrics_t *m, void *ud);
    void *ud;
} policy_metrics_ctx_t;

static void policy_metrics(const kube_obj *o, void *ud)
{
    policy_metrics_ctx_t *x = ud;
    const policy_entry_t *e = o->data;
    ctl_policy_metrics_t m = {o->ns, o->name, e && e->p && e->p->valid};
    x->fn(&m, x->ud);
}

void ctl_foreach_policy_metrics(ctl_controller_t *c,
                                void (*fn)(const ctl_policy_metrics_t *m, void *ud), void *ud)
{
    policy_metrics_ctx_t x = {fn, ud};
    kube_cache_foreach(&c->policies, policy_metrics, &x);
}

const hosted_stats_t *ctl_get_hosted_stats(const ctl_controller_t *c)
{
    return hosted_stats(c->proj);
}
