/* waves.c: the release waves' index, kept from the HostedCluster cache
 * (DESIGN.md 3.14, decide/wave.h). Every HostedCluster tells the index its
 * wave, what it completed and when, and whether it is healthy; the plan
 * asks the index for its verdict through the view. When what a cluster
 * tells changes (a release completed, a cluster turned unhealthy or
 * healthy again, a label moved it to another wave), the held releases of
 * the waves after it are decided again: that is how a soak that ended by
 * evidence, a halt and its end reach them. A soak that ends by time alone
 * wakes them by the decision's wake instant. */
#include "controller/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "log/log.h"

int ctl_set_waves(ctl_controller_t *c, const wave_config_t *cfg)
{
    wave_index_free(c->waves);
    c->waves = NULL;
    if (!wave_config_on(cfg))
        return 0;
    if (!(c->waves = wave_index_new(cfg)))
        return HCP_ENOMEM;
    if (!cfg->evidence_name[0])
        return 0;
    char err[256];
    int rc = ctl_evidence_start(c, err, sizeof(err));
    if (rc)
        log_kv(LOG_ERROR, "release waves: cannot watch the evidence", "error", err, NULL);
    return rc;
}

void ctl_foreach_wave_count(const ctl_controller_t *c,
                            void (*fn)(unsigned system, const char *wave, const char *release,
                                       const char *state, double n, void *ud),
                            void *ud)
{
    if (c->waves)
        wave_index_counts(c->waves, fn, ud);
}

void ctl_wave_note(ctl_controller_t *c, const record_t *r, const decide_plan_t *p)
{
    const decide_decision_t *d = &p->d;
    if (!c->waves || !p->decided)
        return;
    uint8_t state = d->wave_skipped ? WAVE_PASS : d->wave.state;
    if (p->kind == DECIDE_HC) {
        wave_index_note_held(c->waves, WAVE_CONTROL_PLANE, r->ns, r->name, "", d->wave.version,
                             state);
    } else {
        const decide_np_t *np = p->self.data;
        wave_index_note_held(c->waves, WAVE_NODEPOOL, r->ns,
                             np && np->cluster_name ? np->cluster_name : "", r->name,
                             d->wave.version, state);
    }
}

uint64_t ctl_wave_sums(const ctl_controller_t *c)
{
    return c->waves ? wave_index_sums(c->waves) : 0;
}

int ctl_wave_extract(ctl_controller_t *c, const json_t *obj, decide_hc_t *hc)
{
    if (!c || !c->waves)
        return 0;
    const wave_config_t *cfg = wave_index_config(c->waves);
    hc->wave = wave_of(cfg, json_string_value(hcp_json_path(obj, "metadata.namespace")),
                       hcp_json_path(obj, "metadata.labels"));
    if (!(hc->member = malloc(sizeof(*hc->member))))
        return HCP_ENOMEM;
    wave_member_hc(obj, &hc->m.health, hc->wave, hc->m.stanza.present, hc->member);
    return 0;
}

typedef struct later {
    ctl_controller_t *c;
    int wave;
    bool gone;
} later_t;

static void enqueue_later(const kube_obj *o, void *ud)
{
    const later_t *x = ud;
    const decide_hc_t *hc = o->data;
    if (hc && hc->wave > x->wave && decide_hc_held(hc))
        ctl_enqueue(x->c, R_HC, o->ns, o->name);
}

/* The HostedCluster of NodePool np (in namespace ns), NULL when not cached. */
static const decide_hc_t *cluster_of(const ctl_controller_t *c, const char *ns,
                                     const decide_np_t *np)
{
    const kube_obj *h = np && np->cluster_name ? kube_cache_get(&c->hcs, ns, np->cluster_name)
                                               : NULL;
    return h ? h->data : NULL;
}

static void enqueue_later_pool(const kube_obj *o, void *ud)
{
    const later_t *x = ud;
    const decide_np_t *np = o->data;
    const decide_hc_t *hc = cluster_of(x->c, o->ns, np);
    if (hc && hc->wave > x->wave && decide_np_held(np))
        ctl_enqueue(x->c, R_NP, o->ns, o->name);
}

/* NodePool o tells the index, in its HostedCluster's wave (none without
 * one, or gone); *wave the wave it was in or is in now. */
static bool pool_put(ctl_controller_t *c, const kube_obj *o, bool gone, int *wave)
{
    const decide_np_t *np = o->data;
    const decide_hc_t *cl = cluster_of(c, o->ns, np), *hc = gone ? NULL : cl;
    wave_member_t m;
    bool changed = false;

    *wave = cl ? cl->wave : WAVE_UNASSIGNED;
    if (hc)
        wave_member_np(np->status_version, &np->m.health, hc->wave,
                       np->m.stanza.present || hc->m.stanza.present, &m);
    if (wave_index_put(c->waves, WAVE_NODEPOOL, o->ns,
                       np && np->cluster_name ? np->cluster_name : "", o->name, hc ? &m : NULL,
                       &changed) == HCP_ENOMEM)
        log_kv(LOG_ERROR, "release waves: out of memory; the NodePool is left out of its wave",
               "namespace", o->ns, "name", o->name, NULL);
    if (changed)
        c->evid_dirty = true;
    return changed;
}

/* After NodePool o told the index something new: the held releases of
 * the pools of later waves are decided again. */
static void pool_told(ctl_controller_t *c, int wave)
{
    later_t x = {c, wave, false};
    if (c->nps.synced && c->hcs.synced)
        kube_cache_foreach(&c->nps, enqueue_later_pool, &x);
}

static void repool(const kube_obj *o, void *ud)
{
    later_t *x = ud;
    int wave;
    if (pool_put(x->c, o, x->gone, &wave) && wave < x->wave)
        x->wave = wave;
}

void ctl_wave_pool(ctl_controller_t *c, const kube_obj *o, bool gone)
{
    int wave;
    if (c->waves && pool_put(c, o, gone, &wave))
        pool_told(c, wave);
}

void ctl_wave_member(ctl_controller_t *c, const kube_obj *o, const kube_obj *old, bool gone)
{
    const decide_hc_t *hc = o->data, *was = old ? old->data : NULL;
    bool changed = false;

    if (!c->waves)
        return;
    if (wave_index_put(c->waves, WAVE_CONTROL_PLANE, o->ns, o->name, "",
                       gone || !hc ? NULL : hc->member, &changed) == HCP_ENOMEM)
        log_kv(LOG_ERROR, "release waves: out of memory; the cluster is left out of its wave",
               "namespace", o->ns, "name", o->name, NULL);
    /* Its pools are in its wave, and opted in with it. */
    if (!was || !hc || gone || was->wave != hc->wave ||
        was->m.stanza.present != hc->m.stanza.present) {
        later_t p = {c, WAVE_UNASSIGNED, gone};
        ctl_pools_foreach(&c->pools, &c->nps, o->ns, o->name, repool, &p);
        int w = hc ? hc->wave : WAVE_UNASSIGNED;
        if (was && was->wave < w)
            w = was->wave;
        pool_told(c, p.wave < w ? p.wave : w);
    }
    if (changed)
        c->evid_dirty = true;
    /* The first list decides every object anyway. */
    if (!changed || !c->hcs.synced)
        return;
    later_t x = {c, hc ? hc->wave : WAVE_UNASSIGNED, false};
    if (was && was->wave < x.wave)
        x.wave = was->wave;
    kube_cache_foreach(&c->hcs, enqueue_later, &x);
}

void ctl_wave_told(ctl_controller_t *c, int wave)
{
    later_t x = {c, wave, false};
    if (!c->waves || !c->hcs.synced)
        return;
    kube_cache_foreach(&c->hcs, enqueue_later, &x);
    pool_told(c, wave);
}

void ctl_wave_verdict(void *ud, unsigned system, int wave, const char *version, sched_time_t now,
                      wave_verdict_t *out)
{
    ctl_controller_t *c = ud;
    wave_index_verdict(c->waves, system, wave, version, now, out);
}
