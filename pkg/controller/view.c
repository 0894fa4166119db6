/* view.c: the read-only view of the caches and records that decide_plan()
 * reads (decide_view_t), memoizing for reconcile or only reading for the
 * scrape and the admission webhooks, and the metric inputs a plan leaves on
 * its record. */
#include "controller/internal.h"

#include "decide/aging.h"

#include "check/call.h"

#include <stdlib.h>
#include <string.h>

int ctl_lookup_policy(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    ctl_controller_t *c = ud;
    const policy_t *p = ctl_policy_of(kube_cache_get(&c->policies, ns, name));
    if (!p)
        return 0;
    out->found = 1;
    out->ready = p->valid;
    out->sched = p->sched;
    out->sched_for = p->scoped ? p->sched_for : NULL;
    out->message = p->message;
    out->strategy = policy_strategy_name(p->strategy);
    out->min_left_cp = p->min_left_cp;
    out->min_left_workers = p->min_left_workers;
    return 0;
}

static bool view_get(void *ud, decide_kind_t kind, const char *ns, const char *name,
                     decide_ref_t *out)
{
    ctl_controller_t *c = ud;
    kube_cache *caches[] = {&c->hcs, &c->nps, &c->clusters, &c->mds, &c->mss};
    /* Without a discovered CAPI version there are no CAPI objects to act on. */
    if (kind >= DECIDE_CLUSTER && !c->capi_version[0])
        return false;
    const kube_obj *o = kube_cache_get(caches[kind], ns, name);
    if (!o || !o->data)
        return false;
    *out = (decide_ref_t){o->data, o->rv, o->uid};
    return true;
}

/* The record's resolution when it is current, else (memoize) resolved and
 * kept until the object or a policy changes (the handlers and policy_epoch
 * say when), else NULL. */
static const stanza_resolution_t *resolution(ctl_controller_t *c, bool memoize,
                                             decide_kind_t kind, const char *ns,
                                             const char *name, const stanza_t *st)
{
    record_t *r = ctl_record_find(c, kind == DECIDE_HC ? R_HC : R_NP, ns, name);
    if (!r)
        return NULL;
    if (r->have_res && r->res_epoch == c->policy_epoch)
        return &r->res;
    if (!memoize)
        return NULL;
    ctl_record_drop_res(r);
    if (stanza_resolve(st, r->ns, ctl_lookup_policy, c, &r->res))
        return NULL;
    r->have_res = true;
    r->res_epoch = c->policy_epoch;
    return &r->res;
}

/* A NodePool's intersection with its HostedCluster's timeline, kept while
 * both timelines are the same objects and now is before the end of the next
 * window of each (until then the answers cannot change), so a boundary or an
 * edit computes it again and a plain reconcile or scrape does not. */
static const stanza_nodepool_t *intersection(ctl_controller_t *c, bool memoize, const char *ns,
                                             const char *name, sched_t *own, sched_t *cluster,
                                             sched_time_t now)
{
    record_t *r = ctl_record_find(c, R_NP, ns, name);
    if (!r)
        return NULL;
    if (r->have_inter && r->have_res && r->res.sched == own && r->inter_cluster == cluster &&
        now >= r->inter_from && now < r->inter_until)
        return r->inter;
    if (!memoize || !r->have_res || r->res.sched != own)
        return NULL;
    ctl_record_drop_inter(r);
    if (!r->inter && !(r->inter = malloc(sizeof(*r->inter))))
        return NULL;
    if (stanza_resolve_nodepool(own, cluster, now, r->inter))
        return NULL;
    r->have_inter = true;
    r->inter_cluster = sched_ref(cluster);
    r->inter_from = now;
    /* Without a window in the look-ahead the answer may change as the
     * look-ahead moves: computed afresh every time. */
    r->inter_until = now;
    const stanza_nodepool_t *in = r->inter;
    if (in->has_window && in->cluster_has_window)
        r->inter_until = in->next.end < in->cluster_next.end ? in->next.end : in->cluster_next.end;
    return in;
}

static const stanza_resolution_t *memo_resolution(void *ud, decide_kind_t kind, const char *ns,
                                                  const char *name, const stanza_t *st)
{
    return resolution(ud, true, kind, ns, name, st);
}

static const stanza_resolution_t *peek_resolution(void *ud, decide_kind_t kind, const char *ns,
                                                  const char *name, const stanza_t *st)
{
    return resolution(ud, false, kind, ns, name, st);
}

static const stanza_nodepool_t *memo_intersection(void *ud, const char *ns, const char *name,
                                                  sched_t *own, sched_t *cluster, sched_time_t now)
{
    return intersection(ud, true, ns, name, own, cluster, now);
}

static const stanza_nodepool_t *peek_intersection(void *ud, const char *ns, const char *name,
                                                  sched_t *own, sched_t *cluster, sched_time_t now)
{
    return intersection(ud, false, ns, name, own, cluster, now);
}

/* The NodePools of HostedCluster ns/cluster as the hosted ClusterVersion
 * names them. */
typedef struct cv_pools {
    hosted_cv_pool_t *v;
    size_t n, cap;
    bool oom;
} cv_pools_t;

static void cv_pool(const kube_obj *o, void *ud)
{
    cv_pools_t *x = ud;
    const decide_np_t *np = o->data;
    if (x->oom || !np)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 8;
        hosted_cv_pool_t *v = realloc(x->v, cap * sizeof(*v));
        if (!v) {
            x->oom = true;
            return;
        }
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = (hosted_cv_pool_t){o->name, &np->m.paused, &np->m.pending};
}

hosted_conds_t ctl_hosted_want(ctl_controller_t *c, const char *ns, const char *name,
                               const decide_decision_t *d, hosted_cv_t *cv)
{
    cv_pools_t x = {0};
    ctl_pools_foreach(&c->pools, &c->nps, ns, name, cv_pool, &x);
    /* Out of memory: the control plane alone, rather than nothing. */
    hosted_conds_t want = hosted_want(d, x.oom ? NULL : x.v, x.oom ? 0 : x.n, cv);
    free(x.v);
    return want;
}

/* What the projection will report once handed the decision's conditions;
 * unknown while it has learnt nothing (a fresh process). */
static void view_projection(void *ud, const char *ns, const char *name,
                            const decide_decision_t *d, decide_projection_t *out)
{
    ctl_controller_t *c = ud;
    hosted_cv_t cv;
    hosted_conds_t want = ctl_hosted_want(c, ns, name, d, &cv);
    hosted_status_t st;
    if (!c->proj || hosted_preview(c->proj, ns, name, &want, &st) != 0 ||
        strcmp(st.reason, HOSTED_PENDING) == 0)
        return;
    out->known = true;
    out->ok = st.ok;
    out->reason = st.reason;
    snprintf(out->message, sizeof(out->message), "%s", st.message);
}

/* Reconcile's staleness check: the object or its CAPI object is older than
 * a write of ours that the watch has yet to deliver. */
static bool view_stale(void *ud, decide_kind_t kind, const char *ns, const char *name,
                       const decide_ref_t *self, const decide_ref_t *capi)
{
    record_t *r = ctl_record_find(ud, kind == DECIDE_HC ? R_HC : R_NP, ns, name);
    return r && (ctl_write_stale(r->wt.stale_own, self->rv) ||
                 (capi->data && ctl_write_stale(r->wt.stale_capi, capi->rv)));
}

/* The guard rails' minTimeLeft: the floor under every policy's, except in
 * an exempt namespace. */
static sched_time_t view_min_time_left(void *ud, const char *ns)
{
    const guard_config_t *g = ctl_guard(ud);
    if (!g || g->min_time_left <= 0 || guard_exempt(g, ns, NULL, NULL, 0))
        return 0;
    return g->min_time_left;
}

/* The NodePools of one HostedCluster, for the view's nodepools(). */
typedef struct np_iter {
    const char *ns, *cluster;
    void (*fn)(const char *name, const decide_np_t *np, void *arg);
    void *arg;
} np_iter_t;

static void np_each(const kube_obj *o, void *ud)
{
    np_iter_t *x = ud;
    x->fn(o->name, o->data, x->arg);
}

static void view_nodepools(void *ud, const char *ns, const char *cluster,
                           void (*fn)(const char *name, const decide_np_t *np, void *arg),
                           void *arg)
{
    ctl_controller_t *c = ud;
    np_iter_t x = {ns, cluster, fn, arg};

    ctl_pools_foreach(&c->pools, &c->nps, ns, cluster, np_each, &x);
}

typedef struct ms_iter {
    const char *ns;
    void (*fn)(const decide_capi_t *ms, void *arg);
    void *arg;
} ms_iter_t;

static void ms_each(const kube_obj *o, void *ud)
{
    ms_iter_t *x = ud;
    if (o->data && strcmp(o->ns, x->ns) == 0)
        x->fn(o->data, x->arg);
}

static void view_machinesets(void *ud, const char *ns,
                             void (*fn)(const decide_capi_t *ms, void *arg), void *arg)
{
    ctl_controller_t *c = ud;
    ms_iter_t x = {ns, fn, arg};

    kube_cache_foreach(&c->mss, ms_each, &x);
}

/* The pre-start checks' verdict as this replica's runner knows it. Only
 * the leader asks, and only the leader lets a held change through: a
 * standby knows no answer and judges without the checks (its admission
 * webhook then passes the leader's write that lets a change through the
 * checks allowed, rather than holding it again). */
static void view_check(void *ud, const char *uid, uint64_t key, unsigned system,
                       decide_check_t *out)
{
    const ctl_controller_t *c = ud;
    if (!c->leading)
        return;
    out->verdict = (uint8_t)check_runner_verdict(c->opts.checks, uid, key, system, out->why,
                                                 sizeof(out->why));
}

void ctl_view_init(ctl_controller_t *c, bool memoize, decide_view_t *v)
{
    *v = (decide_view_t){.ud = c,
                         .status_doc = memoize,
                         .admission_holds = c->admission_holds,
                         .capi_v1beta2 = strcmp(c->capi_version, "v1beta2") == 0,
                         .get = view_get,
                         .lookup_policy = ctl_lookup_policy,
                         .resolution = memoize ? memo_resolution : peek_resolution,
                         .intersection = memoize ? memo_intersection : peek_intersection,
                         .projection = view_projection,
                         .stale = memoize ? view_stale : NULL,
                         .min_time_left = view_min_time_left,
                         .nodepools = view_nodepools,
                         .machinesets = view_machinesets,
                         .check = c->opts.checks ? view_check : NULL,
                         .wave = c->waves ? ctl_wave_verdict : NULL};
    v->after_settle = c->after_settle;
    v->after_grace = c->after_grace;
}

/* The inputs of the metric values that the plan leaves on its record. */
void ctl_plan_inputs(const decide_plan_t *p, ctl_metric_inputs_t *out)
{
    *out = (ctl_metric_inputs_t){0};
    out->held_since = decide_held_since(p);
    if (!p->res)
        return;
    /* The strategy in force changes only at an override's instant: keep
     * what holds before it and after it. */
    const stanza_t *st = &p->managed->stanza;
    out->strategy = stanza_enforced_strategy(st, p->res, SCHED_NEG_INF);
    out->strategy_after = stanza_enforced_strategy(st, p->res, SCHED_POS_INF);
    out->strategy_switch = !st->present || !st->valid         ? SCHED_NEG_INF
                           : st->strategy == STANZA_PERMISSIVE_UNTIL ? st->permissive_until
                           : st->strategy == STANZA_RESTRICTIVE_UNTIL ? st->restrictive_until
                                                                      : SCHED_NEG_INF;
    out->stanza = stanza_configured_strategy(st);
    out->degraded = p->res->degraded || (p->cluster && p->cluster->degraded);
    out->decided = p->decided;
    if (p->decided) {
        out->state = p->d.state;
        out->minleft = p->d.minleft;
        out->pending = p->d.pending_metric;
    }
}

/* ---- what the admission webhooks read (planview.h) ---------------------- */

void ctl_plan_view(ctl_controller_t *c, decide_view_t *v)
{
    ctl_view_init(c, false, v);
}

sched_time_t ctl_now_exact(ctl_controller_t *c)
{
    ev_now_update(c->loop);
    return ctl_clock_now(&c->opts.clock, c->loop);
}

const kube_cache *ctl_cache(const ctl_controller_t *c, ctl_cache_id_t id)
{
    return id == CTL_CACHE_POLICIES ? &c->policies : id == CTL_CACHE_HCS ? &c->hcs : &c->nps;
}

const policy_t *ctl_policy_of(const kube_obj *obj)
{
    const policy_entry_t *e = obj ? obj->data : NULL;
    return e ? e->p : NULL;
}

const char *const *ctl_hypershift_users(const ctl_controller_t *c)
{
    return c->opts.hypershift_users;
}

const guard_config_t *ctl_guard(const ctl_controller_t *c)
{
    return c->guard_set ? &c->guard : NULL;
}

int ctl_max_nodepool_skew(const ctl_controller_t *c, const guard_config_t **exempt)
{
    *exempt = c->rails_set ? &c->rails : NULL;
    return c->max_skew;
}

void ctl_set_admission_holds(ctl_controller_t *c)
{
    c->admission_holds = true;
}
