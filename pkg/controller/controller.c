/* controller.c: watches, work queue, timers, writes and events. */
#include "controller/controller.h"

#include <stdarg.h>
#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "controller/decide.h"
#include "controller/model.h"
#include "controller/objmap.h"
#include "controller/project.h"
#include "kube/cache.h"
#include "kube/discovery.h"
#include "kube/watch.h"
#include "log/log.h"
#include "policy/behavior.h"
#include "policy/policy.h"
#include "policy/stanza.h"

#define HS_GROUP "hypershift.openshift.io"
#define HS_VERSION "v1beta1"
#define CM_GROUP "changemanagement.hypershift.openshift.io"
#define CM_VERSION "v1alpha1"
#define CAPI_GROUP "cluster.x-k8s.io"
#define BATCH 128           /* reconciles per loop iteration */
#define LIST_PAGE 100       /* objects per list page */
#define TRIM_EVERY 500      /* writes answered between returns of free memory */
#define MAX_WRITES 32       /* writes in flight before reconciles wait: every
                               request holds buffers, and the API server does
                               not answer faster for more */
#define RETRY_MIN 1.0       /* seconds before retrying a failed write */
#define RETRY_MAX 60.0
#define PATH_MAX_LEN 768

const double ctl_latency_bounds[8] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1e300};

/* ---- clock ------------------------------------------------------------- */

sched_time_t ctl_clock_now(const ctl_clock_t *clk, struct ev_loop *loop)
{
    double now = ev_now(loop);
    if (!clk->simulated)
        return (sched_time_t)now;
    return clk->sim0 + (sched_time_t)((now - clk->real0) * clk->scale);
}

double ctl_clock_delay(const ctl_clock_t *clk, struct ev_loop *loop, sched_time_t t)
{
    double now = ev_now(loop);
    double d;
    if (!clk->simulated)
        d = (double)t - now;
    else
        d = ((double)(t - clk->sim0)) / clk->scale - (now - clk->real0);
    return d < 0 ? 0 : d;
}

/* ---- records ----------------------------------------------------------- */

typedef enum rkind { R_POLICY, R_HC, R_NP } rkind_t;

/* What the controller remembers of one managed object between reconciles. */
typedef struct record {
    ctl_objkey_t key;        /* kind, ns and name in the controller's map */
    struct record *qnext;    /* work queue */
    ctl_controller_t *ctl;
    rkind_t kind;
    char *ns, *name;         /* owned */
    ev_timer timer;          /* next window boundary, or a retry */
    bool queued;             /* in the work queue */
    int inflight;            /* writes in flight */
    bool redo;               /* reconcile again once the writes complete */
    bool gone;               /* the object was deleted; free when idle */
    double retry;            /* next retry delay after a failed write */
    bool have_last;          /* the fields below hold the previous decision */
    bool last_restricted;
    int last_pending;
    bool last_valid;         /* policies: last seen validity */
    /* HostedClusters and NodePools: the resolved stanza, kept until the
     * object changes or a policy is added, removed or edited (a resolution
     * depends on nothing else, and not on time). */
    bool have_res;
    uint64_t res_epoch;      /* the controller's policy_epoch when resolved */
    stanza_resolution_t res;
    /* NodePools: the intersection with the cluster's timeline as computed
     * at inter_from; its answers (next windows) hold until inter_until as
     * long as both timelines are the same objects. */
    bool have_inter;
    sched_t *inter_cluster;  /* reference: the cluster timeline intersected */
    sched_time_t inter_from, inter_until;
    stanza_nodepool_t inter;
    /* Versions (hashes of resourceVersions) of the object and of its CAPI
     * object that our own writes replaced, newest first. A watch can deliver
     * such a version after the answer to a later write was cached; the cache
     * then holds an old view, and deciding from it would only write again
     * and conflict. The newer version is on its way. */
    uint64_t stale_own[2], stale_capi[2];
    /* HostedClusters and NodePools: the last decision's timeline state and
     * pending metric, for the metrics endpoint. They hold while now is in
     * [dec_from, dec_until) (the state's interval) unless an input changes,
     * and every input change enqueues the record, which forgets them. */
    bool have_dec;
    sched_time_t dec_from, dec_until;
    sched_state_t dec_state;
    int dec_pending;
} record_t;

/* A parsed policy, shared by the cache entries of one generation: a status
 * write does not change the spec, so its answer keeps the parsed policy and
 * the schedule's memory of expanded windows. */
typedef struct policy_shared {
    int refs;
    policy_t *p;
} policy_shared_t;

/* The slim view a policy's cache keeps: the parsed policy and the status
 * last written, whose history the next status extends. */
typedef struct policy_entry {
    policy_t *p;             /* borrowed from shared */
    policy_shared_t *shared;
    json_t *status;
} policy_entry_t;

struct ctl_controller {
    struct ev_loop *loop;
    kube_client *client;
    ctl_options_t opts;
    char *ns_filter;            /* owned copy of watch_namespace or NULL */
    bool leading;
    char capi_version[32];      /* discovered, "" until known */

    kube_cache policies, hcs, nps, clusters, mds, mss;
    kube_watch w_policies, w_hcs, w_nps, w_clusters, w_mds, w_mss;
    bool capi_started;
    kube_request *discovery;    /* in flight */
    ev_timer discovery_retry;

    ctl_objmap_t records;       /* record_t by kind/ns/name */
    record_t *qhead, *qtail;    /* work queue */
    ev_check qcheck;            /* drains the queue after each poll */
    ev_idle qidle;              /* keeps the loop spinning while work is queued */
    int inflight;               /* writes in flight, all records */
    uint64_t policy_epoch;      /* bumped when a policy appears, goes or is edited */
    unsigned answered;          /* writes answered since free memory was last returned */
    ctl_project_t *proj;        /* hosted ClusterVersion projection */
    ctl_stats_t stats;
};

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents);

static record_t *record_get(ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    ctl_objkey_t **slot = ctl_objmap_slot(&c->records, (int)k, ns, name);
    if (*slot)
        return (record_t *)*slot;
    record_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->ns = strdup(ns);
    r->name = strdup(name);
    if (!r->ns || !r->name) {
        free(r->ns);
        free(r->name);
        free(r);
        return NULL;
    }
    r->ctl = c;
    r->kind = k;
    r->retry = RETRY_MIN;
    ev_init(&r->timer, on_timer);
    r->timer.data = r;
    r->key = (ctl_objkey_t){.kind = (int)k, .ns = r->ns, .name = r->name};
    ctl_objmap_insert(&c->records, slot, &r->key);
    return r;
}

/* Drops what a record remembers of its timelines. */
static void record_drop_inter(record_t *r)
{
    if (r->have_inter) {
        stanza_nodepool_free(&r->inter);
        sched_unref(r->inter_cluster);
        r->inter_cluster = NULL;
        r->have_inter = false;
    }
}

static void record_drop_res(record_t *r)
{
    record_drop_inter(r);
    if (r->have_res) {
        stanza_resolution_free(&r->res);
        r->have_res = false;
    }
}

static void record_free(record_t *r)
{
    record_drop_res(r);
    free(r->ns);
    free(r->name);
    free(r);
}

/* Unlinks a record of a deleted object; it is freed now or, when writes
 * are in flight, by the last completion. */
static void record_forget(ctl_controller_t *c, record_t *r)
{
    ctl_objkey_t **slot = ctl_objmap_slot(&c->records, (int)r->kind, r->ns, r->name);
    if (*slot == &r->key)
        ctl_objmap_remove(&c->records, slot);
    ev_timer_stop(c->loop, &r->timer);
    if (r->kind == R_HC && c->proj)
        ctl_project_forget(c->proj, r->ns, r->name);
    r->gone = true;
    if (r->inflight == 0 && !r->queued)
        record_free(r);
}

/* ---- work queue -------------------------------------------------------- */

static void enqueue(ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    record_t *r = record_get(c, k, ns, name);
    if (!r)
        return;
    r->have_dec = false; /* something it depends on changed */
    if (r->queued)
        return;
    r->queued = true;
    r->qnext = NULL;
    if (c->qtail)
        c->qtail->qnext = r;
    else
        c->qhead = r;
    c->qtail = r;
    if (ctl_synced(c))
        ev_idle_start(c->loop, &c->qidle);
}

static void reconcile(ctl_controller_t *c, record_t *r);

static void drain(struct ev_loop *loop, ev_check *w, int revents)
{
    (void)revents;
    ctl_controller_t *c = w->data;
    /* Deciding from a partial cache would act on a world where a policy or
     * a CAPI object does not exist yet: wait until every list is in. */
    if (!ctl_synced(c))
        return;
    for (int i = 0; i < BATCH && c->qhead && c->inflight < MAX_WRITES; i++) {
        record_t *r = c->qhead;
        c->qhead = r->qnext;
        if (!c->qhead)
            c->qtail = NULL;
        r->queued = false;
        if (r->gone) {
            if (r->inflight == 0)
                record_free(r);
            continue;
        }
        double t0 = ev_time();
        reconcile(c, r);
        double dt = ev_time() - t0;
        c->stats.reconciles++;
        c->stats.reconcile_seconds += dt;
        for (int b = 0; b < 8; b++)
            if (dt <= ctl_latency_bounds[b]) {
                c->stats.latency_buckets[b]++;
                break;
            }
    }
    /* At the write limit the loop sleeps until answers come in. */
    if (!c->qhead || c->inflight >= MAX_WRITES)
        ev_idle_stop(loop, &c->qidle);
}

static void idle_noop(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    record_t *r = w->data;
    enqueue(r->ctl, r->kind, r->ns, r->name);
}

/* Arms the record's timer for the instant `when` (controller time). */
static void arm(ctl_controller_t *c, record_t *r, sched_time_t when)
{
    ev_timer_stop(c->loop, &r->timer);
    if (when == SCHED_POS_INF)
        return;
    /* A millisecond of slack so that the clock has passed the boundary. */
    ev_timer_set(&r->timer, ctl_clock_delay(&c->opts.clock, c->loop, when) + 0.001, 0.);
    ev_timer_start(c->loop, &r->timer);
}

static void arm_retry(ctl_controller_t *c, record_t *r)
{
    ev_timer_stop(c->loop, &r->timer);
    ev_timer_set(&r->timer, r->retry, 0.);
    ev_timer_start(c->loop, &r->timer);
    r->retry = r->retry * 2 > RETRY_MAX ? RETRY_MAX : r->retry * 2;
}

/* ---- writes ------------------------------------------------------------ */

typedef struct write_ctx {
    record_t *r;
    kube_cache *cache;   /* where the answer is applied, or NULL */
    const char *what;    /* for logs */
    uint64_t *stale;     /* the record's stale_own or stale_capi, or NULL */
    uint64_t base;       /* hash of the resourceVersion the write replaces */
} write_ctx_t;

/* FNV-1a of a resourceVersion (compared for equality only: their order is
 * the server's business). 0 for NULL. */
static uint64_t rv_hash(const char *rv)
{
    uint64_t h = 1469598103934665603ull;
    if (!rv)
        return 0;
    for (; *rv; rv++)
        h = (h ^ (unsigned char)*rv) * 1099511628211ull;
    return h;
}

/* The cached version of an object is one our own writes replaced. */
static bool is_stale(const uint64_t stale[2], const char *rv)
{
    uint64_t h = rv_hash(rv);
    return h && (stale[0] == h || stale[1] == h);
}

/* Returns free heap pages to the system (glibc; elsewhere nothing). */
static void return_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void write_done(kube_client *client, const kube_error *err, json_t *obj, void *ud)
{
    (void)client;
    write_ctx_t *w = ud;
    record_t *r = w->r;
    ctl_controller_t *c = r->ctl;
    r->inflight--;
    c->inflight--;
    if (err) {
        if (err->http_status == 409) {
            c->stats.conflicts++;
            r->redo = true; /* the watch brings the newer object */
        } else {
            c->stats.write_errors++;
            log_kv(LOG_ERROR, "write failed", "what", w->what, "namespace", r->ns, "name",
                   r->name, "error", err->message, NULL);
            if (!r->gone)
                arm_retry(c, r);
        }
    } else {
        r->retry = RETRY_MIN;
        c->stats.last_write_at = ev_now(c->loop);
        if (w->stale && w->base && w->stale[0] != w->base) {
            w->stale[1] = w->stale[0];
            w->stale[0] = w->base;
        }
        /* The answer is the object as written: cache it now, so that a
         * reconcile before the watch event sees it (the event itself is then
         * a duplicate the cache drops). */
        if (obj && w->cache) {
            kube_error e;
            kube_cache_apply(w->cache, KUBE_EVENT_MODIFIED, obj, &e);
        }
    }
    if (r->gone) {
        if (r->inflight == 0 && !r->queued)
            record_free(r);
    } else if (r->inflight == 0 && r->redo) {
        r->redo = false;
        enqueue(c, r->kind, r->ns, r->name);
    }
    if (c->qhead && c->inflight < MAX_WRITES && ctl_synced(c))
        ev_idle_start(c->loop, &c->qidle);
    free(w);
    /* Every answer and watch event of a burst of writes is a parsed document
     * freed again between the cached objects that replace each other: give
     * the free pages back now and then, or the burst's peak stays. */
    if (++c->answered >= TRIM_EVERY) {
        c->answered = 0;
        return_free_memory();
    }
}

enum write_kind { W_PATCH, W_STATUS, W_CREATE };

static void send_write(ctl_controller_t *c, record_t *r, enum write_kind kind, const char *path,
                  json_t *doc, kube_cache *cache, const char *what, uint64_t *stale,
                  const char *base_rv)
{
    write_ctx_t *w = calloc(1, sizeof(*w));
    kube_error err;
    int rc;
    if (!w) {
        c->stats.write_errors++;
        arm_retry(c, r);
        return;
    }
    w->r = r;
    w->cache = cache;
    w->stale = stale;
    w->base = rv_hash(base_rv);
    w->what = what;
    switch (kind) {
    case W_PATCH:
        rc = kube_merge_patch(c->client, path, doc, write_done, w, &err);
        break;
    case W_STATUS:
        rc = kube_merge_patch_status(c->client, path, doc, write_done, w, &err);
        break;
    default:
        rc = kube_create(c->client, path, doc, write_done, w, &err);
        break;
    }
    if (rc) {
        c->stats.write_errors++;
        log_kv(LOG_ERROR, "write not sent", "what", what, "path", path, "error", err.message,
               NULL);
        free(w);
        arm_retry(c, r);
        return;
    }
    c->stats.writes++;
    r->inflight++;
    c->inflight++;
}

/* Creates a Kubernetes Event about an object. */
static void emit_event(ctl_controller_t *c, record_t *r, const char *kind, const char *api_version,
                       const char *uid, const char *type, const char *reason, const char *message)
{
    char path[PATH_MAX_LEN], ts[32], gen[300];
    if (kube_path(path, sizeof(path), NULL, "v1", "events", r->ns, NULL, NULL))
        return;
    sched_format_utc((sched_time_t)ev_now(c->loop), ts, sizeof(ts));
    snprintf(gen, sizeof(gen), "%s.", r->name);
    json_t *ev = json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s},"
        " s:s, s:s, s:i, s:s}",
        "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", r->ns,
        "involvedObject", "apiVersion", api_version, "kind", kind, "name", r->name, "namespace",
        r->ns, "uid", uid ? uid : "", "type", type, "reason", reason, "message", message,
        "source", "component", "hcp-controller", "firstTimestamp", ts, "lastTimestamp", ts,
        "count", 1, "reportingComponent", "hcp-controller");
    if (!ev)
        return;
    c->stats.events++;
    send_write(c, r, W_CREATE, path, ev, NULL, "event", NULL, NULL);
    json_decref(ev);
    log_kv(LOG_INFO, reason, "kind", kind, "namespace", r->ns, "name", r->name, "message",
           message, NULL);
}

/* ---- reconcile --------------------------------------------------------- */

static int lookup_policy(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    ctl_controller_t *c = ud;
    const kube_obj *o = kube_cache_get(&c->policies, ns, name);
    if (!o || !o->data)
        return 0;
    const policy_entry_t *e = o->data;
    out->found = 1;
    out->ready = e->p->valid;
    out->sched = e->p->sched;
    out->message = e->p->message;
    return 0;
}

/* "<ns>-<name>": the namespace of a hosted control plane and its CAPI objects. */
static void hcp_namespace(char *buf, size_t len, const char *ns, const char *name)
{
    snprintf(buf, len, "%s-%s", ns, name);
}

static void transition_events(ctl_controller_t *c, record_t *r, const ctl_decision_t *d,
                              const char *kind, const char *uid)
{
    if (r->have_last && r->last_restricted != d->restricted)
        emit_event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Normal",
                   d->restricted ? "WindowClosed" : "WindowOpened", d->paused_message);
    if (r->have_last && r->last_pending == 2 && d->pending_metric == 1)
        emit_event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Normal", "ChangesInitiated",
                   "Pending changes may start now.");
    if (d->action == CTL_PAUSE_REASSERT) {
        c->stats.reasserts++;
        emit_event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Warning", "PauseReasserted",
                   "Another writer removed the pause while changes are restricted; it was "
                   "re-asserted.");
    }
    r->have_last = true;
    r->last_restricted = d->restricted;
    r->last_pending = d->pending_metric;
}

/* Writes the pause action and the status a decision asks for. */
static void carry_out(ctl_controller_t *c, record_t *r, const ctl_decision_t *d,
                      const kube_obj *obj, const ctl_managed_t *m, json_t *cm_doc,
                      const kube_obj *capi, kube_cache *capi_cache, const char *capi_path,
                      const char *obj_path, kube_cache *obj_cache, bool nodepool,
                      sched_time_t now)
{
    if (d->action != CTL_PAUSE_NONE && capi) {
        json_t *patch = ctl_pause_patch(d->action, capi->rv);
        if (patch) {
            send_write(c, r, W_PATCH, capi_path, patch, capi_cache, "pause", r->stale_capi,
                       capi->rv);
            json_decref(patch);
        }
    }
    int err = 0;
    ctl_managed_t view;
    if (ctl_managed_expand(m, &view)) {
        c->stats.write_errors++;
        arm_retry(c, r);
        return;
    }
    json_t *sp = ctl_status_patch(&view, d, cm_doc, obj->rv, nodepool, now, &err);
    ctl_managed_view_free(&view);
    if (sp) {
        send_write(c, r, W_STATUS, obj_path, sp, obj_cache, "status", r->stale_own, obj->rv);
        json_decref(sp);
    }
}

/* Hands a HostedCluster's conditions to the projection into its hosted
 * ClusterVersion and surfaces the projection's state as a condition. */
static void project(ctl_controller_t *c, record_t *r, ctl_decision_t *d, sched_time_t now)
{
    ctl_project_conds_t want = {{d->paused_status, d->paused_reason, d->paused_message},
                                {d->pending_status, d->pending_reason, d->pending_message}};
    ctl_project_status_t st;
    if (!c->proj)
        return;
    ctl_project_update(c->proj, r->ns, r->name, &want, now, NULL, 0);
    /* While the projection has not learnt anything yet (a fresh process),
     * the condition as written before stays: it is not known to be wrong. */
    if (ctl_project_status(c->proj, r->ns, r->name, &st) != 0 ||
        strcmp(st.reason, CTL_PROJECT_PENDING) == 0)
        return;
    d->has_projected = true;
    d->projected_status = st.ok;
    d->projected_reason = st.reason;
    snprintf(d->projected_message, sizeof(d->projected_message), "%s", st.message);
}

static void projection_changed(const char *ns, const char *name, void *ud)
{
    enqueue(ud, R_HC, ns, name);
}

/* Remembers a decision for the metrics endpoint (see record_t.have_dec). */
static void remember_decision(record_t *r, const ctl_decision_t *d, sched_time_t now)
{
    r->have_dec = true;
    r->dec_from = now;
    r->dec_until = d->state.current.end;
    r->dec_state = d->state;
    r->dec_pending = d->pending_metric;
}

static bool decision_known(const record_t *r, sched_time_t now)
{
    return r->have_dec && now >= r->dec_from && now < r->dec_until;
}

/* The record of an object, or NULL when there is none (never creates one). */
static record_t *record_find(ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    return (record_t *)*ctl_objmap_slot(&c->records, (int)k, ns, name);
}

/* The resolved stanza of the HostedCluster or NodePool of record r, whose
 * stanza is st: remembered by the record until the object or a policy
 * changes (the cache callbacks and policy_epoch say when). Borrowed from r;
 * NULL when the resolution failed. */
static const stanza_resolution_t *resolved(ctl_controller_t *c, record_t *r, const stanza_t *st)
{
    if (r->have_res && r->res_epoch == c->policy_epoch)
        return &r->res;
    record_drop_res(r);
    if (stanza_resolve(st, r->ns, lookup_policy, c, &r->res))
        return NULL;
    r->have_res = true;
    r->res_epoch = c->policy_epoch;
    return &r->res;
}

/* A NodePool's own resolution and its intersection with its HostedCluster's
 * timeline at now (DESIGN.md 3.4), borrowed from the records. The
 * intersection is remembered while both timelines are the same objects and
 * now is before the end of the next window of each (until then the answers
 * cannot change), so a boundary or an edit computes it again and a plain
 * reconcile or scrape does not. *cluster is the HostedCluster's resolution,
 * or NULL without one. Returns 0, or -1 when resolution failed. */
static int np_view(ctl_controller_t *c, record_t *r, const ctl_np_t *np, sched_time_t now,
                   const stanza_resolution_t **own, const stanza_resolution_t **cluster,
                   const stanza_nodepool_t **inter)
{
    const stanza_resolution_t *o = resolved(c, r, &np->m.stanza), *cl = NULL;
    if (!o)
        return -1;
    const kube_obj *hco =
        np->cluster_name ? kube_cache_get(&c->hcs, r->ns, np->cluster_name) : NULL;
    if (hco && hco->data) {
        record_t *hr = record_get(c, R_HC, r->ns, np->cluster_name);
        if (hr)
            cl = resolved(c, hr, &((const ctl_hc_t *)hco->data)->m.stanza);
    }
    /* No HostedCluster (or none resolved): nothing may change. */
    sched_t *cs = cl ? cl->sched : sched_never();
    if (r->have_inter && (r->inter_cluster != cs || now < r->inter_from || now >= r->inter_until))
        record_drop_inter(r);
    if (!r->have_inter) {
        if (stanza_resolve_nodepool(o->sched, cs, now, &r->inter))
            return -1;
        r->have_inter = true;
        r->inter_cluster = sched_ref(cs);
        r->inter_from = now;
        /* Without a window in the look-ahead the answer may change as the
         * look-ahead moves: computed afresh every time. */
        r->inter_until = now;
        if (r->inter.has_window && r->inter.cluster_has_window)
            r->inter_until = r->inter.next.end < r->inter.cluster_next.end
                                 ? r->inter.next.end
                                 : r->inter.cluster_next.end;
    }
    *own = o;
    *cluster = cl;
    *inter = &r->inter;
    return 0;
}

static void reconcile_hc(ctl_controller_t *c, record_t *r, sched_time_t now)
{
    const kube_obj *obj = kube_cache_get(&c->hcs, r->ns, r->name);
    if (!obj || !obj->data) {
        record_forget(c, r);
        return;
    }
    const ctl_hc_t *hc = obj->data;
    const stanza_resolution_t *res = resolved(c, r, &hc->m.stanza);
    if (!res)
        return;
    char hcpns[600], capi_path[PATH_MAX_LEN] = "", path[PATH_MAX_LEN];
    hcp_namespace(hcpns, sizeof(hcpns), r->ns, r->name);
    const kube_obj *cl = hc->infra_id && c->capi_version[0]
                             ? kube_cache_get(&c->clusters, hcpns, hc->infra_id)
                             : NULL;
    if (cl && kube_path(capi_path, sizeof(capi_path), CAPI_GROUP, c->capi_version, "clusters",
                        hcpns, hc->infra_id, NULL))
        cl = NULL;
    if (is_stale(r->stale_own, obj->rv) || (cl && is_stale(r->stale_capi, cl->rv)))
        return; /* the watch has yet to catch up with our writes */
    ctl_decision_t d;
    if (ctl_decide_hc(hc, res, cl ? cl->data : NULL, now, &d) == 0 &&
        kube_path(path, sizeof(path), HS_GROUP, HS_VERSION, "hostedclusters", r->ns, r->name,
                  NULL) == 0) {
        remember_decision(r, &d, now);
        project(c, r, &d, now);
        json_t *doc = ctl_status_doc(&d, &hc->m.stanza, res, NULL);
        arm(c, r, d.wake);
        if (c->leading && doc) {
            transition_events(c, r, &d, "HostedCluster", obj->uid);
            carry_out(c, r, &d, obj, &hc->m, doc, cl, &c->clusters, capi_path, path, &c->hcs,
                      false, now);
        }
        json_decref(doc);
    }
}

/* The MachineDeployment (or MachineSet for InPlace pools) of a NodePool. */
static const kube_obj *nodepool_machines(ctl_controller_t *c, const char *ns, const char *name,
                                         const ctl_np_t *np, kube_cache **cache,
                                         const char **resource)
{
    char hcpns[600], want[600];
    if (!np->cluster_name || !c->capi_version[0])
        return NULL;
    hcp_namespace(hcpns, sizeof(hcpns), ns, np->cluster_name);
    snprintf(want, sizeof(want), "%s/%s", ns, name);
    *cache = np->in_place ? &c->mss : &c->mds;
    *resource = np->in_place ? "machinesets" : "machinedeployments";
    const kube_obj *o = kube_cache_get(*cache, hcpns, name);
    const ctl_capi_t *m = o ? o->data : NULL;
    /* When the link annotation is there it must name this NodePool. */
    if (m && m->nodepool && strcmp(m->nodepool, want) != 0)
        return NULL;
    return o;
}

static void reconcile_np(ctl_controller_t *c, record_t *r, sched_time_t now)
{
    const kube_obj *obj = kube_cache_get(&c->nps, r->ns, r->name);
    if (!obj || !obj->data) {
        record_forget(c, r);
        return;
    }
    const ctl_np_t *np = obj->data;
    const stanza_resolution_t *own, *cluster;
    const stanza_nodepool_t *inter;
    if (np_view(c, r, np, now, &own, &cluster, &inter) == 0) {
        kube_cache *mcache = NULL;
        const char *resource = NULL;
        const kube_obj *md = nodepool_machines(c, r->ns, r->name, np, &mcache, &resource);
        char capi_path[PATH_MAX_LEN] = "", path[PATH_MAX_LEN], hcpns[600];
        if (md) {
            hcp_namespace(hcpns, sizeof(hcpns), r->ns, np->cluster_name);
            if (kube_path(capi_path, sizeof(capi_path), CAPI_GROUP, c->capi_version, resource,
                          hcpns, r->name, NULL))
                md = NULL;
        }
        if (is_stale(r->stale_own, obj->rv) || (md && is_stale(r->stale_capi, md->rv)))
            return; /* the watch has yet to catch up with our writes */
        ctl_decision_t d;
        if (ctl_decide_np(np, own, inter, md ? md->data : NULL, now, &d) == 0 &&
            kube_path(path, sizeof(path), HS_GROUP, HS_VERSION, "nodepools", r->ns, r->name,
                      NULL) == 0) {
            remember_decision(r, &d, now);
            json_t *doc = ctl_status_doc(&d, &np->m.stanza, own, inter);
            arm(c, r, d.wake);
            if (c->leading && doc) {
                transition_events(c, r, &d, "NodePool", obj->uid);
                carry_out(c, r, &d, obj, &np->m, doc, md, mcache, capi_path, path, &c->nps,
                          true, now);
            }
            json_decref(doc);
        }
    }
}

static void reconcile_policy(ctl_controller_t *c, record_t *r, sched_time_t now)
{
    const kube_obj *obj = kube_cache_get(&c->policies, r->ns, r->name);
    if (!obj || !obj->data) {
        record_forget(c, r);
        return;
    }
    const policy_entry_t *e = obj->data;
    json_t *status = NULL;
    sched_time_t when;
    arm(c, r, sched_next_transition(e->p->sched, now, &when) == 1 ? when : SCHED_POS_INF);
    if (behavior_status(e->p, now, e->status, &status) != 0)
        return;
    if (c->leading) {
        if (!e->p->valid && (!r->have_last || r->last_valid))
            emit_event(c, r, "HostedChangeManagementPolicy", CM_GROUP "/" CM_VERSION, obj->uid,
                       "Warning", "PolicyInvalid", e->p->message);
        r->have_last = true;
        r->last_valid = e->p->valid;
        char path[PATH_MAX_LEN];
        if (!ctl_json_equal_stored(e->status, status) &&
            kube_path(path, sizeof(path), CM_GROUP, CM_VERSION, "hostedchangemanagementpolicies",
                      r->ns, r->name, NULL) == 0) {
            json_t *patch = json_pack("{s:{s:s}, s:O}", "metadata", "resourceVersion", obj->rv,
                                      "status", status);
            if (patch) {
                send_write(c, r, W_STATUS, path, patch, &c->policies, "policy status", NULL,
                           NULL);
                json_decref(patch);
            }
        }
    }
    json_decref(status);
}

static void reconcile(ctl_controller_t *c, record_t *r)
{
    if (r->inflight > 0) {
        r->redo = true; /* decide again once our own writes are visible */
        return;
    }
    sched_time_t now = ctl_clock_now(&c->opts.clock, c->loop);
    switch (r->kind) {
    case R_HC:
        reconcile_hc(c, r, now);
        break;
    case R_NP:
        reconcile_np(c, r, now);
        break;
    case R_POLICY:
        reconcile_policy(c, r, now);
        break;
    }
}

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
        const ctl_np_t *np = o->data;
        if (!np || !np->cluster_name || strcmp(np->cluster_name, x->cluster) != 0)
            return;
    }
    enqueue(x->c, x->kind, o->ns, o->name);
}

static void enqueue_namespace(ctl_controller_t *c, const char *ns)
{
    enqueue_ns_ctx_t a = {c, R_HC, ns, NULL}, b = {c, R_NP, ns, NULL};
    kube_cache_foreach(&c->hcs, enqueue_each, &a);
    kube_cache_foreach(&c->nps, enqueue_each, &b);
}

/* A policy appeared, went or changed its spec: every resolution may
 * change, and anything in its namespace may reference it. */
static void policy_changed(const kube_obj *o, void *ud)
{
    ctl_controller_t *c = ud;
    c->policy_epoch++;
    enqueue(c, R_POLICY, o->ns, o->name);
    enqueue_namespace(c, o->ns);
}

static void policy_add(const kube_obj *o, void *ud) { policy_changed(o, ud); }
static void policy_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const policy_entry_t *a = old->data, *b = o->data;
    /* A status write keeps the parsed policy (extract_policy shares it):
     * only the policy itself has something to look at again. */
    if (a && b && a->shared == b->shared)
        enqueue(ud, R_POLICY, o->ns, o->name);
    else
        policy_changed(o, ud);
}
static void policy_delete(const kube_obj *o, void *ud) { policy_changed(o, ud); }

/* The two stanzas resolve alike (same fields, same times, same policy). */
static bool stanza_same(const stanza_t *a, const stanza_t *b)
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
    record_t *r = record_find(c, k, o->ns, o->name);
    if (r)
        record_drop_res(r);
}

/* A HostedCluster appeared, went or changed its stanza: its NodePools
 * follow it. Other changes (status, release) concern it alone. */
static void hc_changed(const kube_obj *o, void *ud, bool stanza_changed)
{
    ctl_controller_t *c = ud;
    enqueue(c, R_HC, o->ns, o->name);
    if (!stanza_changed)
        return;
    forget_resolution(c, R_HC, o);
    enqueue_ns_ctx_t x = {c, R_NP, o->ns, o->name};
    kube_cache_foreach(&c->nps, enqueue_each, &x);
}
static void hc_add(const kube_obj *o, void *ud) { hc_changed(o, ud, true); }
static void hc_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const ctl_hc_t *a = old->data, *b = o->data;
    hc_changed(o, ud, !a || !b || !stanza_same(&a->m.stanza, &b->m.stanza));
}
static void hc_delete(const kube_obj *o, void *ud) { hc_changed(o, ud, true); }

static void np_changed(const kube_obj *o, void *ud, bool stanza_changed)
{
    if (stanza_changed)
        forget_resolution(ud, R_NP, o);
    enqueue(ud, R_NP, o->ns, o->name);
}
static void np_add(const kube_obj *o, void *ud) { np_changed(o, ud, true); }
static void np_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const ctl_np_t *a = old->data, *b = o->data;
    np_changed(o, ud, !a || !b || !stanza_same(&a->m.stanza, &b->m.stanza));
}
static void np_delete(const kube_obj *o, void *ud) { np_changed(o, ud, true); }

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
            enqueue(c, k, ns, obj);
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

/* A MachineDeployment/MachineSet names its NodePool in an annotation;
 * without it, any NodePool of that name whose cluster namespace matches. */
static void machines_changed(const kube_obj *o, void *ud)
{
    ctl_controller_t *c = ud;
    const ctl_capi_t *m = o->data;
    if (m && m->nodepool) {
        const char *slash = strchr(m->nodepool, '/');
        if (slash && slash != m->nodepool) {
            char ns[300];
            size_t n = (size_t)(slash - m->nodepool);
            if (n < sizeof(ns)) {
                memcpy(ns, m->nodepool, n);
                ns[n] = '\0';
                enqueue(c, R_NP, ns, slash + 1);
            }
        }
        return;
    }
    /* Without the link the NodePool shares the object's name, and its
     * namespace is a prefix of the control-plane namespace "<ns>-<cluster>". */
    enqueue_by_hcp_ns(c, o->ns, &c->nps, R_NP, o->name);
}
static void machines_add(const kube_obj *o, void *ud) { machines_changed(o, ud); }
static void machines_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    machines_changed(o, ud);
}
static void machines_delete(const kube_obj *o, void *ud) { machines_changed(o, ud); }

/* ---- extractors -------------------------------------------------------- */

/* The parsed policy of the cached version of obj when that version has the
 * same uid and generation (so the same spec), or NULL. */
static policy_shared_t *same_spec(ctl_controller_t *c, const json_t *obj)
{
    const char *ns = ctl_json_str(obj, "metadata.namespace");
    const char *name = ctl_json_str(obj, "metadata.name");
    const char *uid = ctl_json_str(obj, "metadata.uid");
    const json_t *gen = ctl_json_path(obj, "metadata.generation");
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
        return -1;
    e->shared = same_spec(c, obj);
    if (e->shared) {
        e->shared->refs++;
    } else {
        e->shared = calloc(1, sizeof(*e->shared));
        if (!e->shared) {
            free(e);
            return -1;
        }
        int rc = policy_parse(obj, ctl_clock_now(&c->opts.clock, c->loop), &e->shared->p, NULL,
                              0);
        if (rc == HCP_ENOMEM || !e->shared->p) {
            policy_free(e->shared->p);
            free(e->shared);
            free(e);
            return -1;
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

/* The caches keep the status the controller compares with as compact text
 * (ctl_managed_compact()); carry_out() expands it for a patch. */
static int extract_hc(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    ctl_hc_t *hc = ctl_hc_extract(obj);
    if (!hc || ctl_managed_compact(&hc->m)) {
        ctl_hc_free(hc);
        return -1;
    }
    *out = hc;
    return 0;
}
static void release_hc(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    ctl_hc_free(d);
}
static int extract_np(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    ctl_np_t *np = ctl_np_extract(obj);
    if (!np || ctl_managed_compact(&np->m)) {
        ctl_np_free(np);
        return -1;
    }
    *out = np;
    return 0;
}
static void release_np(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    ctl_np_free(d);
}
static int extract_capi(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    (void)s;
    (void)ud;
    return (*out = ctl_capi_extract(obj)) ? 0 : -1;
}
static void release_capi(void *d, kube_intern *s, void *ud)
{
    (void)s;
    (void)ud;
    ctl_capi_free(d);
}

/* ---- start / stop ------------------------------------------------------ */

static void watch_synced(kube_watch *w, void *ud)
{
    (void)w;
    ctl_controller_t *c = ud;
    if (ctl_synced(c)) {
        if (c->qhead)
            ev_idle_start(c->loop, &c->qidle);
        return_free_memory(); /* the list pages are parsed and gone */
        log_kv(LOG_INFO, "caches synced", NULL);
    }
}

static void watch_error(kube_watch *w, const kube_error *err, void *ud)
{
    (void)ud;
    log_kv(LOG_WARN, "watch failed; retrying", "path", w->path, "error", err->message, NULL);
}

static int start_watch(ctl_controller_t *c, kube_watch *w, kube_cache *cache, const char *group,
                       const char *version, const char *resource, const char *ns, char *err,
                       size_t errlen)
{
    char path[PATH_MAX_LEN];
    kube_error e;
    if (kube_path(path, sizeof(path), group, version, resource, ns, NULL, NULL)) {
        snprintf(err, errlen, "cannot build the path of %s in namespace \"%s\"", resource,
                 ns ? ns : "");
        return -1;
    }
    /* Small pages: a page is parsed whole before its objects are slimmed
     * down, and a page of 500 HostedClusters with HyperShift's status is
     * tens of megabytes of JSON tree, six kinds listing at once. */
    kube_watch_opts o = {.path = path, .page_size = LIST_PAGE, .on_synced = watch_synced,
                         .on_error = watch_error, .ud = c};
    if (kube_watch_start(w, c->client, cache, &o, &e)) {
        snprintf(err, errlen, "watch %s: %s", path, e.message);
        return -1;
    }
    return 0;
}

static void start_capi(ctl_controller_t *c)
{
    char err[256];
    if (start_watch(c, &c->w_clusters, &c->clusters, CAPI_GROUP, c->capi_version, "clusters",
                    NULL, err, sizeof(err)) ||
        start_watch(c, &c->w_mds, &c->mds, CAPI_GROUP, c->capi_version, "machinedeployments",
                    NULL, err, sizeof(err)) ||
        start_watch(c, &c->w_mss, &c->mss, CAPI_GROUP, c->capi_version, "machinesets", NULL,
                    err, sizeof(err))) {
        log_kv(LOG_ERROR, "cannot watch CAPI objects", "error", err, NULL);
        return;
    }
    c->capi_started = true;
}

static void discover(ctl_controller_t *c);

static void discovered(kube_client *client, const char *group, const char *version,
                       const kube_error *err, void *ud)
{
    (void)client;
    (void)group;
    ctl_controller_t *c = ud;
    c->discovery = NULL;
    if (!version) {
        log_kv(LOG_WARN, "CAPI API discovery failed; retrying", "error",
               err ? err->message : "", NULL);
        ev_timer_start(c->loop, &c->discovery_retry);
        return;
    }
    snprintf(c->capi_version, sizeof(c->capi_version), "%s", version);
    log_kv(LOG_INFO, "using CAPI API version", "version", version, NULL);
    start_capi(c);
}

static void discovery_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    discover(w->data);
}

static void discover(ctl_controller_t *c)
{
    static const char *const prefer[] = {"v1beta2", "v1beta1", NULL};
    kube_error e;
    if (kube_discover_version(c->client, CAPI_GROUP, prefer, discovered, c, &e)) {
        log_kv(LOG_WARN, "CAPI API discovery not sent; retrying", "error", e.message, NULL);
        ev_timer_start(c->loop, &c->discovery_retry);
    }
}

int ctl_start(struct ev_loop *loop, kube_client *client, const ctl_options_t *opts,
              ctl_controller_t **out, char *err, size_t errlen)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));
    if (!c) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    c->loop = loop;
    c->client = client;
    c->opts = *opts;
    c->leading = opts->leading;
    if (opts->watch_namespace && *opts->watch_namespace) {
        c->ns_filter = strdup(opts->watch_namespace);
        if (!c->ns_filter)
            goto oom;
    }
    c->opts.watch_namespace = c->ns_filter;
    if (ctl_objmap_init(&c->records, 256))
        goto oom;
    kube_cache_ops pops = {extract_policy, release_policy, policy_add, policy_update,
                           policy_delete};
    kube_cache_ops hops = {extract_hc, release_hc, hc_add, hc_update, hc_delete};
    kube_cache_ops nops = {extract_np, release_np, np_add, np_update, np_delete};
    kube_cache_ops cops = {extract_capi, release_capi, cluster_add, cluster_update,
                           cluster_delete};
    kube_cache_ops mops = {extract_capi, release_capi, machines_add, machines_update,
                           machines_delete};
    if (kube_cache_init(&c->policies, &pops, c) || kube_cache_init(&c->hcs, &hops, c) ||
        kube_cache_init(&c->nps, &nops, c) || kube_cache_init(&c->clusters, &cops, c) ||
        kube_cache_init(&c->mds, &mops, c) || kube_cache_init(&c->mss, &mops, c))
        goto oom;
    ev_check_init(&c->qcheck, drain);
    c->qcheck.data = c;
    ev_check_start(loop, &c->qcheck);
    ev_idle_init(&c->qidle, idle_noop);
    ev_timer_init(&c->discovery_retry, discovery_timer, 2., 0.);
    c->discovery_retry.data = c;

    if (start_watch(c, &c->w_policies, &c->policies, CM_GROUP, CM_VERSION,
                    "hostedchangemanagementpolicies", c->ns_filter, err, errlen) ||
        start_watch(c, &c->w_hcs, &c->hcs, HS_GROUP, HS_VERSION, "hostedclusters", c->ns_filter,
                    err, errlen) ||
        start_watch(c, &c->w_nps, &c->nps, HS_GROUP, HS_VERSION, "nodepools", c->ns_filter,
                    err, errlen)) {
        ctl_stop(c);
        return -1;
    }
    ctl_project_opts_t po = {.rewrite_server = opts->rewrite_hosted_server,
                             .leading = opts->leading,
                             .on_change = projection_changed,
                             .ud = c};
    if (ctl_project_new(loop, client->http, client, &po, &c->proj, err, errlen)) {
        ctl_stop(c);
        return -1;
    }
    discover(c);
    *out = c;
    return 0;
oom:
    snprintf(err, errlen, "out of memory");
    ctl_stop(c);
    return -1;
}

void ctl_stop(ctl_controller_t *c)
{
    if (!c)
        return;
    kube_watch *ws[] = {&c->w_policies, &c->w_hcs, &c->w_nps, &c->w_clusters, &c->w_mds,
                        &c->w_mss};
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
        if (ws[i]->c)
            kube_watch_stop(ws[i]);
    ctl_project_free(c->proj);
    ev_check_stop(c->loop, &c->qcheck);
    ev_idle_stop(c->loop, &c->qidle);
    ev_timer_stop(c->loop, &c->discovery_retry);
    /* Outstanding writes are cancelled with the client; their records go. */
    for (size_t i = 0; i < c->records.nbuckets; i++) {
        ctl_objkey_t *k = c->records.buckets[i], *next;
        for (; k; k = next) {
            next = k->hnext;
            record_t *r = (record_t *)k;
            ev_timer_stop(c->loop, &r->timer);
            record_free(r);
        }
    }
    ctl_objmap_free(&c->records);
    kube_cache_free(&c->policies);
    kube_cache_free(&c->hcs);
    kube_cache_free(&c->nps);
    kube_cache_free(&c->clusters);
    kube_cache_free(&c->mds);
    kube_cache_free(&c->mss);
    free(c->ns_filter);
    free(c);
}

bool ctl_synced(const ctl_controller_t *c)
{
    return c->policies.synced && c->hcs.synced && c->nps.synced && c->capi_started &&
           c->clusters.synced && c->mds.synced && c->mss.synced;
}

static void enqueue_all(ctl_controller_t *c)
{
    enqueue_ns_ctx_t p = {c, R_POLICY, NULL, NULL};
    kube_cache_foreach(&c->policies, enqueue_each, &p);
    enqueue_namespace(c, NULL);
}

void ctl_set_leading(ctl_controller_t *c, bool leading)
{
    bool was = c->leading;
    c->leading = leading;
    if (c->proj)
        ctl_project_set_leading(c->proj, leading);
    if (leading && !was)
        enqueue_all(c);
}

bool ctl_idle(const ctl_controller_t *c)
{
    return !c->qhead && c->inflight == 0;
}

const ctl_stats_t *ctl_get_stats(const ctl_controller_t *c)
{
    return &c->stats;
}

bool ctl_leading(const ctl_controller_t *c)
{
    return c->leading;
}

uint64_t ctl_watch_restarts(const ctl_controller_t *c)
{
    const kube_watch *ws[] = {&c->w_policies, &c->w_hcs, &c->w_nps, &c->w_clusters, &c->w_mds,
                              &c->w_mss};
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
        n += ws[i]->stats.restarts + ws[i]->stats.relists;
    return n;
}

/* ---- metrics ----------------------------------------------------------- */

typedef struct metrics_ctx {
    ctl_controller_t *c;
    sched_time_t now;
    void (*fn)(const ctl_object_metrics_t *m, void *ud);
    void *ud;
} metrics_ctx_t;

/* Fills the time-based metric values from a timeline's state (at an
 * instant of the same interval as now). */
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

static void hc_metrics(const kube_obj *o, void *ud)
{
    metrics_ctx_t *x = ud;
    const ctl_hc_t *hc = o->data;
    if (!hc)
        return;
    ctl_object_metrics_t m = {"HostedCluster", o->ns, o->name, "control-plane", "", 0, -2, -2,
                              -1};
    record_t *r = record_get(x->c, R_HC, o->ns, o->name);
    const stanza_resolution_t *res = r ? resolved(x->c, r, &hc->m.stanza) : NULL;
    if (res && !decision_known(r, x->now)) {
        char hcpns[600];
        hcp_namespace(hcpns, sizeof(hcpns), o->ns, o->name);
        const kube_obj *cl = hc->infra_id ? kube_cache_get(&x->c->clusters, hcpns, hc->infra_id)
                                          : NULL;
        ctl_decision_t d;
        if (ctl_decide_hc(hc, res, cl ? cl->data : NULL, x->now, &d) == 0)
            remember_decision(r, &d, x->now);
    }
    if (res) {
        m.strategy = stanza_strategy_name(res->strategy);
        if (res->degraded)
            m.next_change_eta = m.permissive_remaining = -2;
        else if (decision_known(r, x->now))
            timeline_metrics(&r->dec_state, x->now, &m);
        if (decision_known(r, x->now))
            m.change_pending = r->dec_pending;
    }
    x->fn(&m, x->ud);
}

static void np_metrics(const kube_obj *o, void *ud)
{
    metrics_ctx_t *x = ud;
    ctl_controller_t *c = x->c;
    const ctl_np_t *np = o->data;
    if (!np)
        return;
    ctl_object_metrics_t m = {"NodePool", o->ns, o->name, "worker-nodes", "", 0, -2, -2, -1};
    record_t *r = record_get(c, R_NP, o->ns, o->name);
    const stanza_resolution_t *own, *cluster;
    const stanza_nodepool_t *inter;
    if (r && np_view(c, r, np, x->now, &own, &cluster, &inter) == 0) {
        if (!decision_known(r, x->now)) {
            kube_cache *mc;
            const char *res;
            const kube_obj *md = nodepool_machines(c, o->ns, o->name, np, &mc, &res);
            ctl_decision_t d;
            if (ctl_decide_np(np, own, inter, md ? md->data : NULL, x->now, &d) == 0)
                remember_decision(r, &d, x->now);
        }
        m.strategy = stanza_strategy_name(own->strategy);
        if (decision_known(r, x->now)) {
            if (!own->degraded && (!cluster || !cluster->degraded))
                timeline_metrics(&r->dec_state, x->now, &m);
            m.change_pending = r->dec_pending;
        }
    }
    x->fn(&m, x->ud);
}

void ctl_foreach_object_metrics(ctl_controller_t *c,
                                void (*fn)(const ctl_object_metrics_t *m, void *ud), void *ud)
{
    metrics_ctx_t x = {c, ctl_clock_now(&c->opts.clock, c->loop), fn, ud};
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

const ctl_project_stats_t *ctl_get_project_stats(const ctl_controller_t *c)
{
    return ctl_project_stats(c->proj);
}
