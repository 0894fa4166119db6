/* plan.c: gather an object's inputs from a view, then decide, once. */
#include "decide/plan.h"
#include "decide/cpfirst.h"
#include "decide/scope.h"
#include "decide/version.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "check/check.h"
#include "decide/companion.h"
#include "decide/minleft.h"

static bool get(const decide_view_t *v, decide_kind_t kind, const char *ns, const char *name,
                decide_ref_t *out)
{
    memset(out, 0, sizeof(*out));
    if (!v->get(v->ud, kind, ns, name, out) || !out->data) {
        memset(out, 0, sizeof(*out));
        return false;
    }
    return true;
}

/* The view's memo of a resolution, or one resolved into *store. */
static const stanza_resolution_t *resolve(const decide_view_t *v, decide_kind_t kind,
                                          const char *ns, const char *name, const stanza_t *st,
                                          stanza_resolution_t *store, bool *owned)
{
    const stanza_resolution_t *r = v->resolution ? v->resolution(v->ud, kind, ns, name, st)
                                                 : NULL;
    if (r)
        return r;
    if (stanza_resolve(st, ns, v->lookup_policy, v->ud, store))
        return NULL;
    *owned = true;
    return store;
}

/* What to do with our opt-in label on an object that carries it (have) or
 * not, when it should (want): +1 add, -1 remove, 0 nothing. Only with the
 * webhooks served, which the label is for. */
static int label_action(const decide_view_t *v, bool want, bool have)
{
    if (!v->admission_holds || want == have)
        return 0;
    return want ? 1 : -1;
}

/* "<ns>-<name>": the namespace of a hosted control plane and its CAPI objects. */
static void hcp_namespace(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "%s-%s", ns, name);
}

/* The minimum time left (minleft.h) of an object that opted in, applied
 * to its decision d on timeline. Returns 0 or an engine error. */
static int min_left(const decide_view_t *v, const char *ns, bool nodepool, const stanza_t *st,
                    const stanza_resolution_t *res, const stanza_t *cluster_st,
                    const stanza_resolution_t *cluster, sched_t *timeline, bool opted_in,
                    sched_time_t now, decide_decision_t *d, bool held, bool partial,
                    const decide_capi_t *capi)
{
    decide_minleft_t m;
    decide_min_source_t src;
    sched_time_t floor = 0, min;
    int rc;

    if (!opted_in) /* an object nobody opted in is never held by us */
        return 0;
    if (v->min_time_left)
        floor = v->min_time_left(v->ud, ns);
    min = decide_min_left_of(nodepool, st, res, cluster_st, cluster, floor, now, &src);
    if ((rc = decide_min_left(timeline, min, src, now, &m)) < 0)
        return rc;
    decide_min_left_apply(d, nodepool, &m, held, partial, capi, v->admission_holds);
    return 0;
}

/* The opted-in NodePools of a HostedCluster, their own timelines resolved. */
typedef struct pools_acc {
    const decide_view_t *v;
    const char *ns;
    bool cluster_stanza;         /* the HostedCluster has a stanza: every pool is in */
    decide_pool_sched_t *pools;
    stanza_resolution_t *res;    /* pools' own resolutions, one each */
    bool *owned;
    size_t n, cap;
    int rc;
} pools_acc_t;

static void pool_add(const char *name, const decide_np_t *np, void *arg)
{
    pools_acc_t *a = arg;
    const stanza_resolution_t *r;

    if (a->rc || !(np->m.stanza.present || a->cluster_stanza))
        return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 8;
        decide_pool_sched_t *p = realloc(a->pools, cap * sizeof(*p));
        if (p)
            a->pools = p;
        stanza_resolution_t *rs = p ? realloc(a->res, cap * sizeof(*rs)) : NULL;
        if (rs)
            a->res = rs;
        bool *o = rs ? realloc(a->owned, cap * sizeof(*o)) : NULL;
        if (!o) {
            a->rc = HCP_ENOMEM;
            return;
        }
        a->owned = o;
        a->cap = cap;
    }
    a->owned[a->n] = false;
    r = resolve(a->v, DECIDE_NP, a->ns, name, &np->m.stanza, &a->res[a->n], &a->owned[a->n]);
    if (!r) {
        a->rc = HCP_ENOMEM;
        return;
    }
    a->pools[a->n].name = name;
    /* the fields roll the pool's nodes: a node change (DESIGN.md 3.16) */
    a->pools[a->n].sched = stanza_sched_for(r, POLICY_CHANGE_NODES);
    a->n++;
}

/* Whether a HostedCluster without a stanza of its own has a NodePool with
 * one: the fields that roll every NodePool are then held for that pool's
 * windows, so the HostedCluster opts in too (hcfields.h). */
static void pool_opted(const char *name, const decide_np_t *np, void *arg)
{
    (void)name;
    if (np->m.stanza.present)
        *(bool *)arg = true;
}

static int by_pool_name(const void *x, const void *y)
{
    return strcmp(((const decide_pool_sched_t *)x)->name, ((const decide_pool_sched_t *)y)->name);
}

/* The common window of HostedCluster ns/name and its opted-in NodePools
 * into p->common, and whether a held request of its fields goes now. The
 * pools are taken in the order of their names, whatever order the view
 * gives them in: which pools a message names as blocking follows that
 * order, and the controller, admission and explain name the same ones. */
static int plan_common(const decide_view_t *v, const char *ns, const char *name,
                       const decide_hc_t *hc, sched_time_t now, decide_plan_t *p)
{
    pools_acc_t a = {.v = v, .ns = ns, .cluster_stanza = hc->m.stanza.present};
    const stanza_resolution_t *r = p->res;
    bool override = hc->m.stanza.present && hc->m.stanza.valid &&
                    (r->strategy == STANZA_PERMISSIVE || r->strategy == STANZA_PERMISSIVE_UNTIL) &&
                    (hc->m.stanza.strategy == STANZA_PERMISSIVE ||
                     hc->m.stanza.strategy == STANZA_PERMISSIVE_UNTIL);
    int rc;

    if (v->nodepools)
        v->nodepools(v->ud, ns, name, pool_add, &a);
    if (a.n > 1)
        qsort(a.pools, a.n, sizeof(*a.pools), by_pool_name); /* res and owned stay as they are */
    /* The cluster's own timeline for its configuration, and for its pools'
     * nodes where a scoped exclusion of its policy holds them. */
    sched_t *hs = r->sched, *nodes = stanza_sched_for(p->res_all, POLICY_CHANGE_NODES), *both = NULL;
    if (nodes != r->sched) {
        if ((both = sched_and(r->sched, nodes)) == NULL && !a.rc)
            a.rc = HCP_ENOMEM;
        hs = both;
    }
    rc = a.rc ? a.rc : decide_common_window(hs, a.pools, a.n, override, now, &p->common);
    sched_unref(both);
    for (size_t i = 0; i < a.n; i++)
        if (a.owned[i])
            stanza_resolution_free(&a.res[i]);
    free(a.pools);
    free(a.res);
    free(a.owned);
    return rc;
}

/* A held request of the fields that roll every NodePool, on the decision:
 * it goes through at the first instant the HostedCluster and all its
 * NodePools may change; until then ChangesPending says why, naming the
 * pools when there is no such instant (NoCommonWindow). */
static void apply_common(const decide_hc_t *hc, decide_plan_t *p)
{
    decide_decision_t *d = &p->d;
    const decide_common_t *cw = &p->common;

    if (!decide_hc_fields_held(hc))
        return;
    if (cw->wake < d->wake)
        d->wake = cw->wake;
    if (cw->permitted) {
        p->fields_go = cw->override || !d->restricted;
        return;
    }
    d->pending = true;
    d->pending_metric = 2;
    d->pending_status = true;
    d->pending_reason = cw->has_window ? DECIDE_COMMON_WAIT_REASON : DECIDE_NO_COMMON_REASON;
    snprintf(d->pending_message, sizeof(d->pending_message),
             "The held change of the fields that roll every NodePool (%s) is %s.%s",
             hc->requested_fields_summary ? hc->requested_fields_summary : "a change",
             cw->message,
             cw->has_window ? ""
                            : " Change a NodePool's window, or set a Permissive override on the "
                              "HostedCluster to apply it now.");
}

/* DESIGN.md 3.13: the last withdrawal of a held request, while it is news
 * (decide_withdrawn_news(): until the end of the window it waited for),
 * in the ChangesPending message of a decision with nothing pending, which
 * the hosted ClusterVersion quotes; the decision wakes when it stops being
 * news. */
static void withdrawn_news(const decide_managed_t *m, sched_t *timeline, sched_time_t now,
                           decide_decision_t *d)
{
    const decide_audit_t *a = &m->audit;
    sched_time_t until;

    if (d->pending_status || !decide_withdrawn_news(a, timeline, now, &until))
        return;
    snprintf(d->pending_message, sizeof(d->pending_message),
             "No changes are pending: the request for %s was withdrawn by %s at %s.",
             a->withdrawn ? a->withdrawn : "a change", a->withdrawn_by, a->withdrawn_at);
    if (until < d->wake)
        d->wake = until;
}

/* DESIGN.md 3.15: the health after the last change completed (after.h);
 * the condition once the change is found unhealthy, and from then on. The
 * decision wakes at the verdict's next instant (the grace time's end, the
 * settle time's). */
static void plan_after(const decide_view_t *v, const decide_managed_t *m, bool nodepool,
                       sched_time_t now, decide_decision_t *d)
{
    char words[64];

    decide_after_change(&m->health, nodepool, v->after_settle, v->after_grace, now, &d->after);
    if (d->after.wake < d->wake)
        d->wake = d->after.wake;
    if (d->after.state != DECIDE_AFTER_UNHEALTHY && !m->after.present)
        return;
    decide_after_change_words(&m->health, words, sizeof(words));
    d->has_after = true;
    decide_after_condition(&d->after, words, v->after_settle, v->after_grace, &d->after_status,
                           &d->after_reason, d->after_message, sizeof(d->after_message));
}

void decide_plan_change_words(const decide_plan_t *p, char *buf, size_t len)
{
    const decide_hc_t *h = p->kind == DECIDE_HC ? p->self.data : NULL;
    if (h && !decide_hc_held(h) && decide_hc_fields_held(h))
        snprintf(buf, len, "fields that roll every NodePool: %s",
                 h->requested_fields_summary ? h->requested_fields_summary : "(held)");
    else if (h)
        snprintf(buf, len, "release %s",
                 h->requested_release ? h->requested_release
                 : h->release_image  ? h->release_image
                                     : "(none)");
    else
        snprintf(buf, len, "node rollout %s", p->d.held[0] ? p->d.held : "(template)");
}

bool decide_plan_check_key(const decide_plan_t *p, sched_time_t *window, uint64_t *key,
                           unsigned *system)
{
    const decide_hc_t *h = p->kind == DECIDE_HC ? p->self.data : NULL;
    const decide_np_t *np = p->kind == DECIDE_NP ? p->self.data : NULL;
    char words[DECIDE_MSGLEN];
    bool open = !p->d.restricted || p->d.gate.applies;

    if (!p->self.data || !p->managed)
        return false;
    if (h && !decide_hc_held(h) && !decide_hc_fields_held(h))
        return false;
    if (np && !p->d.held[0] && !decide_np_held(np))
        return false;
    if (h && !decide_hc_held(h)) { /* the fields alone: their common window */
        if (!p->common.computed || !p->common.has_window)
            return false;
        /* open, the common start reads "now": the spell, not the instant */
        *window = p->common.permitted ? SCHED_NEG_INF : p->common.start;
    } else if (open) {
        *window = p->d.state.current.start;
    } else if (!decide_next_start(&p->d, window)) {
        return false;
    }
    decide_plan_change_words(p, words, sizeof(words));
    *key = check_change_key(words, *window);
    *system = h ? CHECK_CONTROL_PLANE : CHECK_WORKER_NODES;
    return true;
}

/* The pre-start checks' verdict on p's held change, when the view knows. */
static void plan_checks(const decide_view_t *v, const decide_plan_t *p, decide_check_t *ck)
{
    sched_time_t window;
    uint64_t key;
    unsigned system;

    memset(ck, 0, sizeof(*ck));
    if (v->check && p->self.uid && decide_plan_check_key(p, &window, &key, &system))
        v->check(v->ud, p->self.uid, key, system, ck);
}

/* The release waves' verdict on the release held for HostedCluster hc,
 * or asked for by the write being admitted (v->asked) when it is not the
 * one the cluster completed last, applied to its decision. A cluster that
 * did not opt in holds nothing, and a configuration change is no release. */
static void plan_wave_hc(const decide_view_t *v, const decide_hc_t *hc, sched_time_t now,
                         decide_plan_t *p)
{
    const char *image = v->asked[1] ? v->asked[1] : v->asked[0];
    bool held = decide_hc_held(hc);
    char version[DECIDE_VERSIONLEN];
    wave_verdict_t wv;

    if (!v->wave || !hc->m.stanza.present)
        return;
    if (held)
        image = hc->requested_cp_release ? hc->requested_cp_release : hc->requested_release;
    if (!image)
        return;
    if (!decide_release_version(image, version, sizeof(version)))
        version[0] = '\0';
    if (!held && version[0] && strcmp(version, hc->cp_completed) == 0)
        return; /* asked for what it runs: no change */
    v->wave(v->ud, WAVE_CONTROL_PLANE, hc->wave, version, now, &wv);
    decide_wave_apply(&p->d, false, &hc->m.health, &wv, &hc->m.stanza, true, p->capi.data,
                      v->admission_holds, now);
}

/* The same for NodePool np's held release (or the one the write being
 * admitted asks for), by the pools of the waves before its cluster's. */
static void plan_wave_np(const decide_view_t *v, const decide_np_t *np, bool held,
                         sched_time_t now, decide_plan_t *p)
{
    const char *image = decide_np_requested_image(np);
    const decide_capi_t *md = p->capi.data;
    char version[DECIDE_VERSIONLEN] = "";
    wave_verdict_t wv;

    if (!v->wave || !p->opted_in || !p->hc)
        return;
    if (held && !image && md && md->held && np->release_version) {
        /* A template held the old way (on the MachineDeployment): its
         * release is the one spec.release names. */
        snprintf(version, sizeof(version), "%s", np->release_version);
    } else {
        if (!held || !image) {
            image = v->asked[0];
            held = image != NULL;
        }
        if (!image)
            return; /* a configuration change alone is not sequenced */
        if (!decide_release_version(image, version, sizeof(version)))
            version[0] = '\0';
    }
    if (version[0] && np->status_version && strcmp(version, np->status_version) == 0)
        return; /* the release its machines run: no change of release */
    v->wave(v->ud, WAVE_NODEPOOL, p->hc->wave, version, now, &wv);
    decide_wave_apply(&p->d, true, &np->m.health, &wv, &np->m.stanza, held, p->capi.data,
                      v->admission_holds, now);
}

static int plan_hc(const decide_view_t *v, const char *ns, const char *name, sched_time_t now,
                   decide_plan_t *p, char *err, size_t errlen)
{
    const decide_hc_t *hc = p->self.data;
    p->managed = &hc->m;
    p->capi_kind = DECIDE_CLUSTER;
    p->res = resolve(v, DECIDE_HC, ns, name, &hc->m.stanza, &p->own_res, &p->owns_res);
    if (!p->res)
        return hcp_errf(err, errlen, HCP_ENOMEM, "HostedCluster %s/%s: resolving its stanza",
                        ns, name);
    /* DESIGN.md 3.16: the exclusions that hold this kind of change. */
    p->res_all = p->res;
    p->change = decide_hc_change(hc, v->asked);
    p->res = decide_res_for(p->res, p->change, &p->kind_res);
    if (hc->infra_id) {
        hcp_namespace(p->capi_ns, sizeof(p->capi_ns), ns, name);
        if (get(v, DECIDE_CLUSTER, p->capi_ns, hc->infra_id, &p->capi))
            p->capi_name = hc->infra_id;
    }
    if (v->stale && v->stale(v->ud, DECIDE_HC, ns, name, &p->self, &p->capi)) {
        p->stale = true;
        return 0;
    }
    p->opted_in = hc->m.stanza.present;
    if (!p->opted_in && v->nodepools)
        v->nodepools(v->ud, ns, name, pool_opted, &p->opted_in);
    p->optin_label = label_action(v, p->opted_in, hc->optin_label);
    int rc = decide_hc(hc, p->res, p->capi.data, v->admission_holds, now, &p->d);
    if (rc)
        return hcp_errf(err, errlen, HCP_EINVAL, "HostedCluster %s/%s: schedule engine error %d",
                        ns, name, rc);
    /* A held release starts only with enough of its window left. */
    if ((rc = min_left(v, ns, false, &hc->m.stanza, p->res, NULL, NULL, p->res->sched,
                       hc->m.stanza.present, now, &p->d, decide_hc_held(hc), hc->history_partial,
                       p->capi.data)) != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "HostedCluster %s/%s: schedule engine error %d",
                        ns, name, rc);
    if ((v->common_window || decide_hc_fields_held(hc)) &&
        (rc = plan_common(v, ns, name, hc, now, p)) != 0)
        return hcp_errf(err, errlen, rc, "HostedCluster %s/%s: its NodePools' common window",
                        ns, name);
    /* DESIGN.md 3.14: a release goes only once the waves before this
     * cluster's ran it long enough, and healthy. */
    plan_wave_hc(v, hc, now, p);
    /* DESIGN.md 3.10: a held release goes through only to a healthy cluster,
     * and (3.15) only when the pre-start checks allow it. */
    decide_check_t ck;
    plan_checks(v, p, &ck);
    decide_gate_apply(&p->d, false, &hc->m.health, &hc->m.stanza, &ck,
                      decide_hc_held(hc) || (decide_hc_fields_held(hc) && p->common.permitted),
                      p->capi.data, v->admission_holds, now);
    apply_common(hc, p);
    withdrawn_news(&hc->m, p->res->sched, now, &p->d);
    plan_after(v, &hc->m, false, now, &p->d);
    if (v->projection && !p->opted_in) {
        /* Opted out: our conditions leave its hosted cluster (hosted_retire()),
         * so a projection condition written while it was in would tell of a
         * state that is gone. One that exists says so; none is added. */
        if (hc->m.projected.present) {
            p->d.has_projected = true;
            p->d.projected_status = false;
            p->d.projected_reason = DECIDE_NOT_OPTED_IN;
            snprintf(p->d.projected_message, sizeof(p->d.projected_message),
                     "Not projected: neither the HostedCluster nor any of its NodePools opted "
                     "in to change management, so the hosted ClusterVersion carries none of "
                     "its conditions");
        }
    } else if (v->projection) {
        decide_projection_t pr = {0};
        v->projection(v->ud, ns, name, &p->d, &pr);
        /* While the projection has learnt nothing yet (a fresh process), the
         * condition as written stays: it is not known to be wrong. */
        if (pr.known) {
            p->d.has_projected = true;
            p->d.projected_status = pr.ok;
            p->d.projected_reason = pr.reason;
            snprintf(p->d.projected_message, sizeof(p->d.projected_message), "%s", pr.message);
        }
    }
    if (v->status_doc)
        p->status_doc = decide_status_doc(DECIDE_HC, hc, &p->d, p->res, NULL, now);
    return 0;
}

/* The MachineDeployment (or MachineSet for InPlace pools) of a NodePool:
 * the object of the pool's name in its cluster's control-plane namespace,
 * whose link annotation, when there is one, names this pool. */
/* The MachineSets of MachineDeployment md with machines: known when there
 * is one, older when one of them does not carry md's revision. */
typedef struct ms_revs {
    const char *md;
    int64_t revision;
    bool known, older;
} ms_revs_t;

static void ms_rev(const decide_capi_t *ms, void *arg)
{
    ms_revs_t *x = arg;
    if (!ms->deployment || strcmp(ms->deployment, x->md) != 0 || ms->existing <= 0)
        return;
    x->known = true;
    if (ms->revision != x->revision)
        x->older = true;
}

static void nodepool_machines(const decide_view_t *v, const char *ns, const char *name,
                              const decide_np_t *np, decide_plan_t *p)
{
    char want[DECIDE_NSLEN];
    p->capi_kind = np->in_place ? DECIDE_MS : DECIDE_MD;
    if (!np->cluster_name)
        return;
    hcp_namespace(p->capi_ns, sizeof(p->capi_ns), ns, np->cluster_name);
    snprintf(want, sizeof(want), "%s/%s", ns, name);
    if (!get(v, p->capi_kind, p->capi_ns, name, &p->capi))
        return;
    const decide_capi_t *m = p->capi.data;
    if (m->nodepool && strcmp(m->nodepool, want) != 0) {
        memset(&p->capi, 0, sizeof(p->capi));
        return;
    }
    p->capi_name = name;
    if (p->capi_kind == DECIDE_MD && m->rolling && m->revision >= 0 && v->machinesets) {
        ms_revs_t x = {name, m->revision, false, false};
        v->machinesets(v->ud, p->capi_ns, ms_rev, &x);
        if (x.known && !x.older) {
            p->own_capi = *m;
            p->own_capi.rolling = false;
            p->capi.data = &p->own_capi;
        }
    }
}

static int plan_np(const decide_view_t *v, const char *ns, const char *name, sched_time_t now,
                   decide_plan_t *p, char *err, size_t errlen)
{
    const decide_np_t *np = p->self.data;
    decide_ref_t hco;
    p->managed = &np->m;
    p->res = resolve(v, DECIDE_NP, ns, name, &np->m.stanza, &p->own_res, &p->owns_res);
    if (!p->res)
        return hcp_errf(err, errlen, HCP_ENOMEM, "NodePool %s/%s: resolving its stanza", ns,
                        name);
    /* DESIGN.md 3.16: the exclusions, the pool's and its cluster's, that
     * hold this kind of change. */
    p->res_all = p->res;
    p->change = decide_np_change(np, v->asked);
    p->res = decide_res_for(p->res, p->change, &p->kind_res);
    if (np->cluster_name && get(v, DECIDE_HC, ns, np->cluster_name, &hco)) {
        p->hc = hco.data;
        p->cluster_stanza = ((const decide_hc_t *)hco.data)->m.stanza.present;
        p->cluster = resolve(v, DECIDE_HC, ns, np->cluster_name,
                             &((const decide_hc_t *)hco.data)->m.stanza, &p->own_cluster,
                             &p->owns_cluster);
        p->cluster = decide_res_for(p->cluster, p->change, &p->kind_cluster);
    }
    /* No HostedCluster (or none resolved): nothing may change. */
    sched_t *cs = p->cluster ? p->cluster->sched : sched_never();
    p->inter = v->intersection ? v->intersection(v->ud, ns, name, p->res->sched, cs, now) : NULL;
    if (!p->inter) {
        if (stanza_resolve_nodepool(p->res->sched, cs, now, &p->own_inter))
            return hcp_errf(err, errlen, HCP_ENOMEM,
                            "NodePool %s/%s: intersecting with its HostedCluster", ns, name);
        p->owns_inter = true;
        p->inter = &p->own_inter;
    }
    nodepool_machines(v, ns, name, np, p);
    bool opted_in = np->m.stanza.present ||
                    (p->cluster && ((const decide_hc_t *)hco.data)->m.stanza.present);
    p->opted_in = opted_in;
    p->np_label = label_action(v, opted_in, np->optin_label);
    if (p->capi.data)
        p->optin_label = label_action(v, opted_in,
                                      ((const decide_capi_t *)p->capi.data)->optin_label);
    if (v->stale && v->stale(v->ud, DECIDE_NP, ns, name, &p->self, &p->capi)) {
        p->stale = true;
        return 0;
    }
    int rc = decide_np(np, p->res, p->inter, p->capi.data, v->admission_holds, now, &p->d);
    if (rc)
        return hcp_errf(err, errlen, HCP_EINVAL, "NodePool %s/%s: schedule engine error %d", ns,
                        name, rc);
    /* DESIGN.md 3.6: the control plane first; a request it keeps held is
     * not one the health gate decides on. */
    const decide_capi_t *md = p->capi.data;
    if (opted_in) /* a pool that did not opt in is never held by us */
        decide_cp_first_apply(&p->d, np, p->hc, md, v->admission_holds);
    else {
        p->d.cp_first = false;
        p->d.cp_why[0] = '\0';
    }
    /* A held template or target starts only with enough of its window
     * left; a rollout already under way is not a held change. */
    const decide_hc_t *hcv = p->hc;
    if ((rc = min_left(v, ns, true, &np->m.stanza, p->res, hcv ? &hcv->m.stanza : NULL,
                       p->cluster, p->inter->sched, opted_in, now, &p->d,
                       p->d.held[0] && !(md && md->rolling), false, md)) != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "NodePool %s/%s: schedule engine error %d", ns,
                        name, rc);
    /* DESIGN.md 3.14: a release only once the pools of the waves before
     * ran it long enough, and healthy. */
    plan_wave_np(v, np, p->d.held[0] && !(md && md->rolling), now, p);
    /* DESIGN.md 3.10: a held template or target goes through only to a
     * healthy pool; a rollout already under way is not a held change. */
    decide_check_t ck;
    plan_checks(v, p, &ck);
    decide_gate_apply(&p->d, true, &np->m.health, &np->m.stanza, &ck,
                      p->d.held[0] && !(md && md->rolling), md, v->admission_holds, now);
    withdrawn_news(&np->m, p->inter->sched, now, &p->d);
    plan_after(v, &np->m, true, now, &p->d);
    if (v->status_doc)
        p->status_doc = decide_status_doc(DECIDE_NP, np, &p->d, p->res, p->inter, now);
    return 0;
}

int decide_plan(const decide_view_t *v, decide_kind_t kind, const char *ns, const char *name,
                sched_time_t now, decide_plan_t *out, char *err, size_t errlen)
{
    int rc;
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    out->capi_v1beta2 = v->capi_v1beta2;
    if (kind != DECIDE_HC && kind != DECIDE_NP)
        return hcp_errf(err, errlen, HCP_EINVAL, "only HostedClusters and NodePools are planned");
    if (!get(v, kind, ns, name, &out->self))
        return 0;
    out->present = true;
    rc = kind == DECIDE_HC ? plan_hc(v, ns, name, now, out, err, errlen)
                           : plan_np(v, ns, name, now, out, err, errlen);
    out->decided = rc == 0 && !out->stale;
    return rc;
}

void decide_plan_free(decide_plan_t *p)
{
    json_decref(p->status_doc);
    p->status_doc = NULL;
    if (p->owns_inter)
        stanza_nodepool_free(&p->own_inter);
    if (p->owns_cluster)
        stanza_resolution_free(&p->own_cluster);
    if (p->owns_res)
        stanza_resolution_free(&p->own_res);
    p->owns_inter = p->owns_cluster = p->owns_res = false;
}

uint64_t decide_release_hash(const char *image)
{
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    if (image == NULL)
        return 0;
    for (; *image; image++)
        h = (h ^ (unsigned char)*image) * 1099511628211ULL;
    return h ? h : 1;
}

bool decide_initiated(const decide_plan_t *p, bool have_last, int last_pending, bool let_through)
{
    if (!p->decided || decide_request_held(p->kind, p->self.data, &p->d))
        return false; /* nothing let through while the request is carried */
    return let_through || (have_last && last_pending == 2 && p->d.pending_metric == 1);
}

bool decide_unheld(const decide_plan_t *p, const decide_seen_t *prev_in, decide_seen_t *now)
{
    const decide_capi_t *capi = p->capi.data;
    const decide_seen_t before = *prev_in, *prev = &before; /* now may be prev_in */
    bool hc = p->kind == DECIDE_HC, unheld;

    *now = (decide_seen_t){.known = true, .restricted = p->d.restricted};
    if (hc) {
        now->release = decide_release_hash(((const decide_hc_t *)p->self.data)->release_image);
        return now->restricted && prev->known && prev->restricted && prev->release &&
               now->release != prev->release;
    }
    now->rolling = capi && capi->rolling;
    now->rollout = !capi ? 0 : p->capi_kind == DECIDE_MS ? capi->target
                 : capi->revision >= 0 ? (uint64_t)capi->revision + 1 : 0;
    /* Settled: what a window leaves, or a rollout that ended. A rollout
     * that starts while restricted may first show its new revision with
     * the old counts, so a restricted decision that sees none keeps the
     * one before. */
    now->settled = !prev->known || !now->restricted || (prev->rolling && !now->rolling)
                       ? now->rollout : prev->settled;
    unheld = now->restricted && now->rolling && !capi->paused &&
             (!prev->known || (prev->restricted && !prev->rolling &&
                               (!now->rollout || now->rollout != prev->settled)));
    return unheld;
}
