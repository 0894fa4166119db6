/* handlers.c: cache events mapped to the keys they concern, and the
 * extractors that slim objects down as they arrive. A handler decides
 * nothing: it finds which records may be affected and enqueues them. */
#include "controller/internal.h"

#include "base/error.h"
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

/* ---- cache callbacks --------------------------------------------------- */

typedef struct enqueue_ns_ctx {
    ctl_controller_t *c;
    rkind_t kind;
    const char *ns;           /* only this namespace, or NULL */
    const char *cluster;      /* NodePools: only of this HostedCluster, or NULL */
} enqueue_ns_ctx_t;

static void enqueue_each(const kube_obj *o, void *ud)
{
    enqueue_ns_ctx_t *x = ud;
    if (x->ns && strcmp(o->ns, x->ns) != 0)
        return;
    if (x->cluster) {
        const decide_np_t *np = o->data;
        if (!np || !np->cluster_name || strcmp(np->cluster_name, x->cluster) != 0)
            return;
    }
    if (x->kind == R_CM) { /* a NodePool's ConfigMaps */
        const decide_np_t *np = o->data;
        if (np)
            ctl_cm_enqueue_names(x->c, o->ns, np->config_names, false);
        return;
    }
    ctl_enqueue(x->c, x->kind, o->ns, o->name);
}

static void enqueue_namespace(ctl_controller_t *c, const char *ns)
{
    enqueue_ns_ctx_t a = {c, R_HC, ns, NULL}, b = {c, R_NP, ns, NULL};
    kube_cache_foreach(&c->hcs, enqueue_each, &a);
    kube_cache_foreach(&c->nps, enqueue_each, &b);
}

/* A policy appeared, went or changed its spec: every resolution may
 * change, and anything in its namespace may reference it. */
void ctl_policy_changed(const kube_obj *o, void *ud)
{
    ctl_controller_t *c = ud;
    c->policy_epoch++;
    ctl_enqueue(c, R_POLICY, o->ns, o->name);
    enqueue_namespace(c, o->ns);
}

static void policy_add(const kube_obj *o, void *ud) { ctl_policy_changed(o, ud); }
static void policy_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const policy_entry_t *a = old->data, *b = o->data;
    /* A status write keeps the parsed policy (extract_policy shares it):
     * only the policy itself has something to look at again. */
    if (a && b && a->shared == b->shared)
        ctl_enqueue(ud, R_POLICY, o->ns, o->name);
    else
        ctl_policy_changed(o, ud);
}
static void policy_delete(const kube_obj *o, void *ud) { ctl_policy_changed(o, ud); }

bool ctl_stanza_same(const stanza_t *a, const stanza_t *b)
{
    return a->present == b->present && a->from_spec == b->from_spec && a->valid == b->valid &&
           strcmp(a->error, b->error) == 0 && a->strategy == b->strategy &&
           strcmp(a->policy, b->policy) == 0 &&
           a->has_permissive_until == b->has_permissive_until &&
           (!a->has_permissive_until || a->permissive_until == b->permissive_until) &&
           a->has_restrictive_until == b->has_restrictive_until &&
           (!a->has_restrictive_until || a->restrictive_until == b->restrictive_until);
}

/* Forgets what the record of an object remembers of its timelines. */
static void forget_resolution(ctl_controller_t *c, rkind_t k, const kube_obj *o)
{
    record_t *r = ctl_record_find(c, k, o->ns, o->name);
    if (r)
        ctl_record_drop_res(r);
}

/* A HostedCluster appeared, went or changed its stanza: its NodePools
 * follow it. Other changes (status, release) concern it alone. */
static void hc_changed(const kube_obj *o, void *ud, bool stanza_changed)
{
    ctl_controller_t *c = ud;
    ctl_enqueue(c, R_HC, o->ns, o->name);
    if (!stanza_changed)
        return;
    forget_resolution(c, R_HC, o);
    enqueue_ns_ctx_t x = {c, R_NP, o->ns, o->name};
    kube_cache_foreach(&c->nps, enqueue_each, &x);
    /* Its NodePools opt in or out with it: so do the ConfigMaps they name. */
    x.kind = R_CM;
    kube_cache_foreach(&c->nps, enqueue_each, &x);
}
static void hc_add(const kube_obj *o, void *ud)
{
    hc_changed(o, ud, true);
    ctl_wave_member(ud, o, NULL, false);
}
static void hc_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const decide_hc_t *a = old->data, *b = o->data;
    bool stanza_changed = !a || !b || !ctl_stanza_same(&a->m.stanza, &b->m.stanza);
    hc_changed(o, ud, stanza_changed);
    ctl_wave_member(ud, o, old, false);
    /* The control plane completed a release: a NodePool request held for
     * it (decide_cp_first_apply()) may go now. */
    if (!stanza_changed && (a->cp_reported != b->cp_reported ||
                            strcmp(a->cp_completed, b->cp_completed) != 0)) {
        enqueue_ns_ctx_t x = {ud, R_NP, o->ns, o->name};
        kube_cache_foreach(&((ctl_controller_t *)ud)->nps, enqueue_each, &x);
    }
}
static void hc_delete(const kube_obj *o, void *ud)
{
    hc_changed(o, ud, true);
    ctl_wave_member(ud, o, NULL, true);
}

/* The hosted ClusterVersion of a NodePool's HostedCluster quotes the pool's
 * conditions: the cluster is enqueued when they change (or the pool comes
 * or goes). */
static void np_changed(const kube_obj *o, void *ud, bool stanza_changed, bool conds_changed)
{
    const decide_np_t *np = o->data;
    if (stanza_changed)
        forget_resolution(ud, R_NP, o);
    ctl_enqueue(ud, R_NP, o->ns, o->name);
    /* A new stanza also moves the cluster's common window (hcfields.h). */
    if ((conds_changed || stanza_changed) && np && np->cluster_name)
        ctl_enqueue(ud, R_HC, o->ns, np->cluster_name);
}

static bool seen_same(const decide_seen_cond_t *a, const decide_seen_cond_t *b)
{
    return a->present == b->present && a->status == b->status &&
           (a->reason == b->reason || (a->reason && b->reason && !strcmp(a->reason, b->reason))) &&
           (a->message == b->message ||
            (a->message && b->message && !strcmp(a->message, b->message)));
}

static bool names_same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* The ConfigMaps a NodePool names carry the opted-in label while it opted
 * in (cmlabel.c): queued when it comes or goes, when its names or stanza
 * change, and (those not found last time) on any of its events, such as
 * HyperShift's status once the ConfigMap is there. */
static void np_cms(ctl_controller_t *c, const kube_obj *o, bool all)
{
    const decide_np_t *np = o->data;
    if (np)
        ctl_cm_enqueue_names(c, o->ns, np->config_names, !all);
}

static void np_add(const kube_obj *o, void *ud)
{
    ctl_pools_add(&((ctl_controller_t *)ud)->pools, o);
    ctl_wave_pool(ud, o, false);
    np_changed(o, ud, true, true);
    np_cms(ud, o, true);
}
static void np_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const decide_np_t *a = old->data, *b = o->data;
    ctl_pools_update(&((ctl_controller_t *)ud)->pools, old, o);
    ctl_wave_pool(ud, o, false);
    bool stanza_changed = !a || !b || !ctl_stanza_same(&a->m.stanza, &b->m.stanza);
    np_changed(o, ud, stanza_changed,
               !a || !b || !seen_same(&a->m.paused, &b->m.paused) ||
                   !seen_same(&a->m.pending, &b->m.pending));
    bool names_changed = !a || !b || !names_same(a->config_names, b->config_names);
    if (names_changed || stanza_changed)
        np_cms(ud, old, true);
    np_cms(ud, o, names_changed || stanza_changed);
}
static void np_delete(const kube_obj *o, void *ud)
{
    ctl_pools_remove(&((ctl_controller_t *)ud)->pools, o);
    ctl_wave_pool(ud, o, true);
    np_changed(o, ud, true, true);
    np_cms(ud, o, true);
}

/* A control-plane namespace is "<hc-ns>-<hc-name>", and both parts may hold
 * dashes: for each split at a dash, enqueues the object of kind k in <hc-ns>
 * named `name` (or <hc-name> when name is NULL) if cache holds it. A lookup
 * per dash, not a walk over every object. */
static void enqueue_by_hcp_ns(ctl_controller_t *c, const char *hcpns, kube_cache *cache,
                              rkind_t k, const char *name)
{
    for (const char *dash = strchr(hcpns, '-'); dash; dash = strchr(dash + 1, '-')) {
        char ns[300];
        size_t n = (size_t)(dash - hcpns);
        const char *obj = name ? name : dash + 1;
        if (n == 0 || n >= sizeof(ns))
            continue;
        memcpy(ns, hcpns, n);
        ns[n] = '\0';
        if (kube_cache_get(cache, ns, obj))
            ctl_enqueue(c, k, ns, obj);
    }
}

/* A CAPI Cluster lives in its HostedCluster's control-plane namespace and
 * is the HostedCluster's concern. */
static void cluster_changed(const kube_obj *o, void *ud)
{
    ctl_controller_t *c = ud;
    enqueue_by_hcp_ns(c, o->ns, &c->hcs, R_HC, NULL);
}
static void cluster_add(const kube_obj *o, void *ud) { cluster_changed(o, ud); }
static void cluster_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    cluster_changed(o, ud);
}
static void cluster_delete(const kube_obj *o, void *ud) { cluster_changed(o, ud); }

bool ctl_nodepool_ref(const char *ref, char *ns, size_t len, const char **name)
{
    const char *slash = ref ? strchr(ref, '/') : NULL;
    size_t n = slash ? (size_t)(slash - ref) : 0;
    if (!slash || n == 0 || n >= len)
        return false;
    memcpy(ns, ref, n);
    ns[n] = '\0';
    *name = slash + 1;
    return true;
}

/* A MachineDeployment/MachineSet names its NodePool in an annotation;
 * without it, any NodePool of that name whose cluster namespace matches. */
static void machines_changed(const kube_obj *o, void *ud)
{
    ctl_controller_t *c = ud;
    const decide_capi_t *m = o->data;
    if (m && m->nodepool) {
        char ns[300];
        const char *name;
        if (ctl_nodepool_ref(m->nodepool, ns, sizeof(ns), &name))
            ctl_enqueue(c, R_NP, ns, name);
        return;
    }
    /* Without the link the NodePool shares the object's name (a
     * MachineSet's: its MachineDeployment's, label
     * cluster.x-k8s.io/deployment-name), and its namespace is a prefix of
     * the control-plane namespace "<ns>-<cluster>". */
    enqueue_by_hcp_ns(c, o->ns, &c->nps, R_NP, m && m->deployment ? m->deployment : o->name);
}
static void machines_add(const kube_obj *o, void *ud) { machines_changed(o, ud); }
static void machines_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    machines_changed(o, ud);
}
static void machines_delete(const kube_obj *o, void *ud) { machines_changed(o, ud); }

/* A MachineSet is also the concern of remediate.c. */
static void ms_add(const kube_obj *o, void *ud)
{
    machines_changed(o, ud);
    ctl_rem_enqueue(ud, o);
}
static void ms_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    machines_changed(o, ud);
    ctl_rem_enqueue(ud, o);
}
static void ms_delete(const kube_obj *o, void *ud)
{
    machines_changed(o, ud);
    ctl_rem_enqueue(ud, o);
}

/* A companion concerns its target (decide_companion_target()): a change or
 * deletion by anyone else is undone by the target's next reconcile, and a
 * companion whose target is gone is deleted by it. */
static void companion_changed(const kube_obj *o, void *ud)
{
    decide_kind_t kind;
    const char *target;
    if (decide_companion_target(o->name, &kind, &target))
        ctl_enqueue(ud, kind == DECIDE_HC ? R_HC : R_NP, o->ns, target);
}
static void companion_add(const kube_obj *o, void *ud) { companion_changed(o, ud); }
static void companion_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    if (!old->data || !o->data || strcmp(old->data, o->data) != 0)
        companion_changed(o, ud);
}
static void companion_delete(const kube_obj *o, void *ud) { companion_changed(o, ud); }

/* ---- extractors -------------------------------------------------------- */

/* The parsed policy of the cached version of obj when that version has the
 * same uid and generation (so the same spec), or NULL. */
static policy_shared_t *same_spec(ctl_controller_t *c, const json_t *obj)
{
    const char *ns = hcp_json_str(obj, "metadata.namespace");
    const char *name = hcp_json_str(obj, "metadata.name");
    const char *uid = hcp_json_str(obj, "metadata.uid");
    const json_t *gen = hcp_json_path(obj, "metadata.generation");
    if (!name || !uid || !json_is_integer(gen) || json_integer_value(gen) <= 0)
        return NULL;
    const kube_obj *old = kube_cache_get(&c->policies, ns ? ns : "", name);
    const policy_entry_t *oe = old ? old->data : NULL;
    if (!oe || strcmp(old->uid, uid) != 0 || oe->p->generation != json_integer_value(gen))
        return NULL;
    return oe->shared;
}

static int extract_policy(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    (void)strings;
    ctl_controller_t *c = ud;
    policy_entry_t *e = calloc(1, sizeof(*e));
    if (!e)
        return HCP_ENOMEM;
    e->shared = same_spec(c, obj);
    if (e->shared) {
        e->shared->refs++;
    } else {
        e->shared = calloc(1, sizeof(*e->shared));
        if (!e->shared) {
            free(e);
            return HCP_ENOMEM;
        }
        sched_time_t now = ctl_clock_now(&c->opts.clock, c->loop);
        int rc = policy_parse(obj, now, &e->shared->p, NULL, 0);
        /* Its exclusion calendars as the calendar cache has them; their
         * changes are read in place (calendars.c). */
        if (rc != HCP_ENOMEM && e->shared->p)
            rc = policy_read_calendars(e->shared->p, ctl_calendar_data, c, now, NULL);
        if (rc == HCP_ENOMEM || !e->shared->p) {
            policy_free(e->shared->p);
            free(e->shared);
            free(e);
            return HCP_ENOMEM;
        }
        e->shared->refs = 1;
    }
    e->p = e->shared->p;
    json_t *st = json_object_get(obj, "status");
    e->status = json_is_object(st) ? json_incref(st) : NULL;
    *out = e;
    return 0;
}

static void release_policy(void *data, kube_intern *strings, void *ud)
{
    (void)strings;
    (void)ud;
    policy_entry_t *e = data;
    if (--e->shared->refs == 0) {
        policy_free(e->shared->p);
        free(e->shared);
    }
    json_decref(e->status);
    free(e);
}

/* The caches keep HostedClusters and NodePools with the status the
 * controller compares with as compact text (decide_view_extract());
 * carry_out() expands it for a patch. */
static int extract(decide_kind_t kind, const json_t *obj, void **out)
{
    return (*out = decide_view_extract(kind, obj)) ? 0 : HCP_ENOMEM;
}

static int extract_hc(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    int rc = extract(DECIDE_HC, obj, out);
    if (rc == 0 && (rc = ctl_wave_extract(ud, obj, *out)) != 0)
        decide_view_free(DECIDE_HC, *out);
    return rc;
}

static int extract_np(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    return extract(DECIDE_NP, obj, out);
}

static int extract_capi(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    return extract(DECIDE_CLUSTER, obj, out);
}

/* A MachineSet's replica counts are no rollout (decide_capi_t.updated). */
static int extract_ms(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    return extract(DECIDE_MS, obj, out);
}

static void release_hc(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    decide_view_free(DECIDE_HC, d);
}

static void release_np(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    decide_view_free(DECIDE_NP, d);
}

static void release_capi(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    decide_view_free(DECIDE_CLUSTER, d);
}

/* A companion is kept as its digest, packed (decide_companion_pack()):
 * what decides whether to write it, and the status whose history the next
 * one extends. */
static int extract_companion(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    decide_packed_t *p = malloc(sizeof(*p));
    if (!p || decide_companion_pack(obj, p)) {
        free(p);
        return HCP_ENOMEM;
    }
    *out = p;
    return 0;
}

static void release_companion(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    if (d)
        decide_packed_free(d);
    free(d);
}

/* ---- the tables ctl_start() installs ---------------------------------- */

const kube_cache_ops ctl_policy_ops = {extract_policy, release_policy, policy_add, policy_update,
                                       policy_delete};
const kube_cache_ops ctl_hc_ops = {extract_hc, release_hc, hc_add, hc_update, hc_delete};
const kube_cache_ops ctl_np_ops = {extract_np, release_np, np_add, np_update, np_delete};
const kube_cache_ops ctl_cluster_ops = {extract_capi, release_capi, cluster_add, cluster_update,
                                        cluster_delete};
const kube_cache_ops ctl_machines_ops = {extract_capi, release_capi, machines_add,
                                         machines_update, machines_delete};
const kube_cache_ops ctl_machinesets_ops = {extract_ms, release_capi, ms_add, ms_update,
                                            ms_delete};
const kube_cache_ops ctl_companion_ops = {extract_companion, release_companion, companion_add,
                                          companion_update, companion_delete};

static void enqueue_cm(const kube_obj *o, void *ud)
{
    ctl_enqueue(ud, R_CM, o->ns, o->name);
}

static void enqueue_rem(const kube_obj *o, void *ud) { ctl_rem_enqueue(ud, o); }

void ctl_enqueue_all(ctl_controller_t *c)
{
    enqueue_ns_ctx_t p = {c, R_POLICY, NULL, NULL}, m = {c, R_CM, NULL, NULL};
    kube_cache_foreach(&c->policies, enqueue_each, &p);
    enqueue_namespace(c, NULL);
    /* The ConfigMaps: those labelled (to be kept or not) and those named. */
    kube_cache_foreach(&c->nps, enqueue_each, &m);
    kube_cache_foreach(&c->cms, enqueue_cm, c);
    kube_cache_foreach(&c->mss, enqueue_rem, c);
}
