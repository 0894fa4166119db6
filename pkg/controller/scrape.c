/* scrape.c: the /metrics values of every object, planned at scrape time.
 *
 * A scrape asks the same plan as reconcile (decide_plan()), through a view
 * that only reads: it hands out the resolutions the records keep when they
 * are current. The rest (objects not reconciled yet, or since a policy
 * changed) are resolved once per distinct stanza and namespace, and
 * NodePool intersections once per pair of timelines, for the whole scrape:
 * a fleet shares a few policies, so a cold scrape costs what its distinct
 * stanzas cost, not what its objects do. Those answers are freed when the
 * scrape ends. A scrape creates no record and keeps nothing. */
#include <stdlib.h>

#include "controller/internal.h"

/* A resolution shared by every object of ns with an equal stanza. */
typedef struct shared_res {
    hcp_link_t link;          /* on the scrape's list */
    const char *ns;           /* borrowed from the cache for the scrape */
    stanza_t st;
    stanza_resolution_t res;
} shared_res_t;

/* An intersection shared by every NodePool of the same two timelines. */
typedef struct shared_inter {
    hcp_link_t link;          /* on the scrape's list */
    sched_t *own, *cluster;   /* identities only: the resolutions hold them */
    stanza_nodepool_t inter;
} shared_inter_t;

typedef struct metrics_ctx {
    ctl_controller_t *c;
    decide_view_t view;       /* the scrape's: records first, then the shared answers */
    decide_view_t records;    /* the controller's read-only view of the records */
    hcp_link_t res;           /* owned shared_res_t */
    hcp_link_t inter;         /* owned shared_inter_t */
    sched_time_t now;
    void (*fn)(const ctl_object_metrics_t *m, void *ud);
    void (*tl_fn)(const ctl_timeline_t *t, void *ud); /* timelines instead of metrics */
    const char *ns, *hc;      /* the timelines' namespace, and HostedCluster or NULL */
    void *ud;
} metrics_ctx_t;

/* Fills the time-based metric values from a timeline's state at now; the
 * next change's eta is the effective start's when a minimum time left
 * applies (decide_min_left_eta()). */
static void timeline_metrics(const sched_state_t *st, const decide_minleft_t *ml,
                             sched_time_t now, ctl_object_metrics_t *m)
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
    m->next_change_eta = decide_min_left_eta(ml, m->next_change_eta, now);
}

/* The metric values (DESIGN.md 3.8) at now: -2 where a timeline is in
 * error (a degraded resolution, of the object or of its HostedCluster). */
static void input_metrics(const ctl_metric_inputs_t *in, sched_time_t now,
                          ctl_object_metrics_t *m)
{
    if (in->held_since != SCHED_NEG_INF && now >= in->held_since)
        m->held_age = (double)(now - in->held_since);
    if (!in->strategy)
        return;
    m->strategy = now < in->strategy_switch ? in->strategy : in->strategy_after;
    m->stanza = in->stanza;
    if (!in->decided)
        return;
    if (!in->degraded)
        timeline_metrics(&in->state, &in->minleft, now, m);
    m->change_pending = in->pending;
}

static bool scrape_get(void *ud, decide_kind_t kind, const char *ns, const char *name,
                       decide_ref_t *out)
{
    metrics_ctx_t *x = ud;
    return x->records.get(x->records.ud, kind, ns, name, out);
}

static int scrape_lookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    metrics_ctx_t *x = ud;
    return x->records.lookup_policy(x->records.ud, ns, name, out);
}

static void scrape_projection(void *ud, const char *ns, const char *name,
                              const decide_decision_t *d, decide_projection_t *out)
{
    metrics_ctx_t *x = ud;
    x->records.projection(x->records.ud, ns, name, d, out);
}

static const stanza_resolution_t *scrape_resolution(void *ud, decide_kind_t kind, const char *ns,
                                                    const char *name, const stanza_t *st)
{
    metrics_ctx_t *x = ud;
    const stanza_resolution_t *r = x->records.resolution(x->records.ud, kind, ns, name, st);
    shared_res_t *s;
    hcp_link_t *pos, *tmp;
    if (r)
        return r;
    HCP_LIST_FOREACH(pos, tmp, &x->res) {
        s = hcp_list_entry(pos, shared_res_t, link);
        if (strcmp(s->ns, ns) == 0 && ctl_stanza_same(&s->st, st))
            return &s->res;
    }
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return NULL; /* the plan resolves it itself */
    if (stanza_resolve(st, ns, ctl_lookup_policy, x->c, &s->res)) {
        free(s);
        return NULL;
    }
    s->ns = ns;
    s->st = *st;
    hcp_list_push_front(&x->res, &s->link);
    return &s->res;
}

static const stanza_nodepool_t *scrape_intersection(void *ud, const char *ns, const char *name,
                                                    sched_t *own, sched_t *cluster,
                                                    sched_time_t now)
{
    metrics_ctx_t *x = ud;
    const stanza_nodepool_t *r =
        x->records.intersection(x->records.ud, ns, name, own, cluster, now);
    shared_inter_t *s;
    hcp_link_t *pos, *tmp;
    if (r)
        return r;
    HCP_LIST_FOREACH(pos, tmp, &x->inter) {
        s = hcp_list_entry(pos, shared_inter_t, link);
        if (s->own == own && s->cluster == cluster)
            return &s->inter;
    }
    if ((s = calloc(1, sizeof(*s))) == NULL)
        return NULL;
    if (stanza_resolve_nodepool(own, cluster, now, &s->inter)) {
        free(s);
        return NULL;
    }
    s->own = own;
    s->cluster = cluster;
    hcp_list_push_front(&x->inter, &s->link);
    return &s->inter;
}

static sched_time_t scrape_min_time_left(void *ud, const char *ns)
{
    metrics_ctx_t *x = ud;
    return x->records.min_time_left(x->records.ud, ns);
}

/* The release waves' verdict, as reconcile asks it (waves.c). */
static void scrape_wave(void *ud, unsigned system, int wave, const char *version,
                        sched_time_t now, wave_verdict_t *out)
{
    metrics_ctx_t *x = ud;
    ctl_wave_verdict(x->c, system, wave, version, now, out);
}

static void scrape_view_init(metrics_ctx_t *x)
{
    hcp_list_init(&x->res);
    hcp_list_init(&x->inter);
    ctl_view_init(x->c, false, &x->records);
    x->view = (decide_view_t){.ud = x,
                              .get = scrape_get,
                              .lookup_policy = scrape_lookup,
                              .resolution = scrape_resolution,
                              .intersection = scrape_intersection,
                              .projection = scrape_projection,
                              .min_time_left = scrape_min_time_left,
                              .wave = x->c->waves ? scrape_wave : NULL};
}

/* Frees the shared answers; intersections first (they refer to the
 * timelines the resolutions hold). */
static void scrape_view_free(metrics_ctx_t *x)
{
    hcp_link_t *n;

    while ((n = hcp_list_pop_front(&x->inter)) != NULL) {
        shared_inter_t *s = hcp_list_entry(n, shared_inter_t, link);
        stanza_nodepool_free(&s->inter);
        free(s);
    }
    while ((n = hcp_list_pop_front(&x->res)) != NULL) {
        shared_res_t *s = hcp_list_entry(n, shared_res_t, link);
        stanza_resolution_free(&s->res);
        free(s);
    }
}

/* The metric inputs reconcile left on the object's record when they are
 * still current, else a plan made now: the same answer, as a plan changes
 * only at its wake instant or when an event queues the record. */
static void object_metrics(const kube_obj *o, metrics_ctx_t *x, decide_kind_t kind)
{
    bool hc = kind == DECIDE_HC;
    ctl_object_metrics_t m = {hc ? "HostedCluster" : "NodePool", o->ns, o->name,
                              hc ? "control-plane" : "worker-nodes", "Restrictive", "Invalid",
                              0, -2, -2, -1, -1};
    const record_t *r = ctl_record_find(x->c, hc ? R_HC : R_NP, o->ns, o->name);
    if (!o->data)
        return;
    if (r && r->have_metrics && !r->q.queued && r->metrics_epoch == x->c->policy_epoch &&
        x->now < r->metrics_until) {
        input_metrics(&r->metrics, x->now, &m);
    } else {
        decide_plan_t p;
        ctl_metric_inputs_t in;
        decide_plan(&x->view, kind, o->ns, o->name, x->now, &p, NULL, 0);
        ctl_plan_inputs(&p, &in);
        input_metrics(&in, x->now, &m);
        decide_plan_free(&p);
    }
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
    scrape_view_init(&x);
    kube_cache_foreach(&c->hcs, hc_metrics, &x);
    kube_cache_foreach(&c->nps, np_metrics, &x);
    scrape_view_free(&x);
}

/* The policy a stanza names in ns, or NULL. */
static const policy_t *stanza_policy(const ctl_controller_t *c, const char *ns, const stanza_t *st)
{
    const kube_obj *o = st->present && st->policy[0] ? kube_cache_get(&c->policies, ns, st->policy)
                                                     : NULL;
    const policy_entry_t *e = o ? o->data : NULL;
    return e ? e->p : NULL;
}

/* Plans one object of the asked namespace (and HostedCluster) and hands
 * its effective timeline to the callback. */
static void object_timeline(const kube_obj *o, metrics_ctx_t *x, decide_kind_t kind)
{
    const decide_managed_t *m = o->data;
    const char *hc = kind == DECIDE_HC ? o->name : ((const decide_np_t *)o->data)->cluster_name;
    ctl_timeline_t t = {.kind = kind == DECIDE_HC ? "HostedCluster" : "NodePool",
                        .ns = o->ns, .name = o->name,
                        .system = kind == DECIDE_HC ? "control-plane" : "worker-nodes",
                        .hostedcluster = hc};
    decide_plan_t p;

    if (!m || strcmp(o->ns, x->ns) != 0 || !hc || (x->hc && strcmp(hc, x->hc) != 0))
        return;
    decide_plan(&x->view, kind, o->ns, o->name, x->now, &p, NULL, 0);
    t.sched = kind == DECIDE_HC ? (p.res ? p.res->sched : NULL) : (p.inter ? p.inter->sched : NULL);
    if ((t.policies[0] = stanza_policy(x->c, o->ns, &m->stanza)) != NULL)
        t.n_policies++;
    if (kind == DECIDE_NP) {
        const kube_obj *h = kube_cache_get(&x->c->hcs, o->ns, hc);
        const decide_managed_t *hm = h ? h->data : NULL;
        if (hm && (t.policies[t.n_policies] = stanza_policy(x->c, o->ns, &hm->stanza)) != NULL &&
            t.policies[t.n_policies] != t.policies[0])
            t.n_policies++;
    }
    t.min_left = p.decided ? p.d.minleft.min : 0;
    /* DESIGN.md 3.14: the soak's end is the held release's earliest start. */
    char why[WAVE_WHYLEN + 64];
    if (p.decided && !p.d.wave_skipped && p.d.wave.state != WAVE_PASS) {
        t.held_from = p.d.wave.state == WAVE_SOAK && p.d.wave.until != SCHED_NEG_INF
                          ? p.d.wave.until
                          : SCHED_POS_INF;
        snprintf(why, sizeof(why), "release %s (%s)",
                 p.d.wave.version[0] ? p.d.wave.version : "held", p.d.wave.why);
        t.held_why = why;
    }
    if (t.sched)
        x->tl_fn(&t, x->ud);
    decide_plan_free(&p);
}

static void hc_timeline(const kube_obj *o, void *ud)
{
    object_timeline(o, ud, DECIDE_HC);
}

static void np_timeline(const kube_obj *o, void *ud)
{
    object_timeline(o, ud, DECIDE_NP);
}

sched_time_t ctl_now(const ctl_controller_t *c)
{
    return ctl_clock_now(&c->opts.clock, c->loop);
}

void ctl_foreach_timeline(ctl_controller_t *c, const char *ns, const char *hc, sched_time_t now,
                          void (*fn)(const ctl_timeline_t *t, void *ud), void *ud)
{
    metrics_ctx_t x = {.c = c, .now = now, .tl_fn = fn, .ns = ns, .hc = hc, .ud = ud};
    scrape_view_init(&x);
    kube_cache_foreach(&c->hcs, hc_timeline, &x);
    kube_cache_foreach(&c->nps, np_timeline, &x);
    scrape_view_free(&x);
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
