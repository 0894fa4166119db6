/* controller.c: wiring. The caches and their watches (companions and
 * labelled ConfigMaps included), CAPI API discovery, the hosted projection,
 * the queue's reconciler and the writer's settle callback, start and stop. */
#include "controller/internal.h"

#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "decide/aging.h"
#include "decide/skew.h"
#include "kube/discovery.h"
#include "log/log.h"

#define LIST_PAGE 100       /* objects per list page */

/* Returns free heap pages to the system (glibc; elsewhere nothing). */
static void return_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

static void projection_changed(const char *ns, const char *name, void *ud)
{
    ctl_enqueue(ud, R_HC, ns, name);
}

/* Guard rails (controller.h): read by the validating webhooks (ctl_guard())
 * and by the plan's minimum time left (view.c); the times of the health
 * after a change, which are no limit, by the plan whether or not a limit
 * is enforced. */
void ctl_set_guard(ctl_controller_t *c, const guard_config_t *cfg)
{
    c->guard_set = cfg != NULL && guard_enforced(cfg);
    if (c->guard_set)
        c->guard = *cfg;
    c->after_settle = cfg ? cfg->after_settle : 0;
    c->after_grace = cfg ? cfg->after_grace : 0;
    c->hold_age = decide_aging_warning(cfg ? cfg->hold_age_warning : 0);
    c->rails_set = cfg != NULL;
    if (cfg)
        c->rails = *cfg;
    c->max_skew = cfg && cfg->has_max_skew ? cfg->max_skew : DECIDE_SKEW_DEFAULT;
}

/* ---- start / stop ------------------------------------------------------ */

static void watch_synced(kube_watch *w, void *ud)
{
    (void)w;
    ctl_controller_t *c = ud;
    if (ctl_synced(c)) {
        ctl_queue_kick(c);
        return_free_memory(); /* the list pages are parsed and gone */
        log_kv(LOG_INFO, "caches synced", NULL);
    }
}

static void watch_error(kube_watch *w, const kube_error *err, void *ud)
{
    (void)ud;
    log_kv(LOG_WARN, "watch failed; retrying", "path", w->path, "error", err->message, NULL);
}

int ctl_start_watch(ctl_controller_t *c, kube_watch *w, kube_cache *cache, const char *group,
                    const char *version, const char *resource, const char *ns,
                    const char *selector, char *err, size_t errlen)
{
    char path[PATH_MAX_LEN];
    kube_error e;
    if (kube_path(path, sizeof(path), group, version, resource, ns, NULL, NULL))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "cannot build the path of %s in namespace \"%s\"", resource,
                        ns ? ns : "");
    /* Small pages: a page is parsed whole before its objects are slimmed
     * down, and a page of 500 HostedClusters with HyperShift's status is
     * tens of megabytes of JSON tree, six kinds listing at once. */
    kube_watch_opts o = {.path = path, .label_selector = selector, .page_size = LIST_PAGE,
                         .on_synced = watch_synced, .on_error = watch_error, .ud = c};
    if (kube_watch_start(w, c->client, cache, &o, &e))
        return hcp_errf(err, errlen, e.code == HCP_ENOMEM ? HCP_ENOMEM : HCP_EINVAL,
                        "watch %s: %s", path, e.message);
    return 0;
}

static int start_watch(ctl_controller_t *c, kube_watch *w, kube_cache *cache, const char *group,
                       const char *version, const char *resource, const char *ns, char *err,
                       size_t errlen)
{
    return ctl_start_watch(c, w, cache, group, version, resource, ns, NULL, err, errlen);
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

static void idle_noop(struct ev_loop *loop, ev_idle *w, int revents)
{
    (void)loop;
    (void)w;
    (void)revents;
}

int ctl_state_init(ctl_controller_t *c, size_t nbuckets)
{
    ctl_queue_init(&c->queue);
    ctl_write_init(&c->writer, c->loop, c->client, &c->stats, ctl_write_settled, c);
    ctl_standby_init(c);
    if (kube_objmap_init(&c->records, nbuckets) || ctl_pools_init(&c->pools) ||
        kube_cache_init(&c->policies, &ctl_policy_ops, c) ||
        kube_cache_init(&c->hcs, &ctl_hc_ops, c) || kube_cache_init(&c->nps, &ctl_np_ops, c) ||
        kube_cache_init(&c->clusters, &ctl_cluster_ops, c) ||
        kube_cache_init(&c->mds, &ctl_machines_ops, c) ||
        kube_cache_init(&c->mss, &ctl_machinesets_ops, c) ||
        kube_cache_init(&c->companions, &ctl_companion_ops, c) ||
        kube_cache_init(&c->cms, &ctl_cm_ops, c) ||
        kube_cache_init(&c->cals, &ctl_calendar_ops, c) ||
        kube_cache_init(&c->evid, &ctl_evidence_ops, c))
        return HCP_ENOMEM;
    return 0;
}

int ctl_start(struct ev_loop *loop, kube_client *client, const ctl_options_t *opts,
              ctl_controller_t **out, char *err, size_t errlen)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));
    int rc = HCP_ENOMEM;
    if (!c)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    c->loop = loop;
    c->client = client;
    c->opts = *opts;
    c->leading = opts->leading;
    c->started = ctl_clock_now(&opts->clock, loop);
    c->reconcile = ctl_reconcile;
    c->hold_age = decide_aging_warning(0); /* until guard rails say otherwise */
    c->max_skew = DECIDE_SKEW_DEFAULT;
    ev_check_init(&c->qcheck, ctl_queue_drain);
    c->qcheck.data = c;
    ev_idle_init(&c->qidle, idle_noop);
    ev_timer_init(&c->discovery_retry, discovery_timer, 2., 0.);
    c->discovery_retry.data = c;
    if (opts->watch_namespace && *opts->watch_namespace &&
        !(c->ns_filter = strdup(opts->watch_namespace)))
        goto oom;
    c->opts.watch_namespace = c->ns_filter;
    if (ctl_state_init(c, 256))
        goto oom;
    ctl_set_standby(c, opts->standby_after);
    ev_check_start(loop, &c->qcheck);
    if ((rc = start_watch(c, &c->w_policies, &c->policies, CM_GROUP, CM_VERSION,
                          "hostedchangemanagementpolicies", c->ns_filter, err, errlen)) ||
        (rc = start_watch(c, &c->w_hcs, &c->hcs, HS_GROUP, HS_VERSION, "hostedclusters",
                          c->ns_filter, err, errlen)) ||
        (rc = start_watch(c, &c->w_nps, &c->nps, HS_GROUP, HS_VERSION, "nodepools",
                          c->ns_filter, err, errlen)) ||
        (rc = start_watch(c, &c->w_companions, &c->companions, CM_GROUP, CM_VERSION,
                          DECIDE_COMPANION_RESOURCE, c->ns_filter, err, errlen)) ||
        /* Only the ConfigMaps we labelled (cmlabel.c): never every one. */
        (rc = ctl_start_watch(c, &c->w_cms, &c->cms, NULL, "v1", "configmaps", c->ns_filter,
                              DECIDE_OPTIN_LABEL "=" DECIDE_OPTIN_VALUE, err, errlen)) ||
        /* The exclusion calendars: the ConfigMaps labelled as such. */
        (rc = ctl_start_watch(c, &c->w_cals, &c->cals, NULL, "v1", "configmaps", c->ns_filter,
                              POLICY_CALENDAR_LABEL, err, errlen)))
        goto fail;
    hosted_opts_t po = {.rewrite_server = opts->rewrite_hosted_server,
                        .leading = opts->leading,
                        .period = opts->hosted_period,
                        .on_change = projection_changed,
                        .ud = c};
    if ((rc = hosted_new(loop, client, &po, &c->proj, err, errlen)))
        goto fail;
    discover(c);
    *out = c;
    return 0;
oom:
    hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
fail:
    ctl_stop(c);
    return rc;
}

/* Every watch of controller c, started or not: the initializer of an array
 * of pointers to them, so that each use sizes its array by it. */
#define CTL_WATCHES(c)                                                                     \
    {&(c)->w_policies, &(c)->w_hcs, &(c)->w_nps,        &(c)->w_clusters,                    \
     &(c)->w_mds,      &(c)->w_mss, &(c)->w_companions, &(c)->w_cms, &(c)->w_cals,          \
     &(c)->w_evid}

void ctl_stop(ctl_controller_t *c)
{
    if (!c)
        return;
    kube_watch *ws[] = CTL_WATCHES(c);
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
        if (ws[i]->c)
            kube_watch_stop(ws[i]);
    hosted_free(c->proj);
    ctl_evidence_stop(c);
    ev_check_stop(c->loop, &c->qcheck);
    ev_idle_stop(c->loop, &c->qidle);
    ev_timer_stop(c->loop, &c->discovery_retry);
    ctl_standby_stop(c);
    /* Outstanding writes are cancelled with the client; their records go.
     * A deleted object's record waiting in a queue is no longer in the map. */
    ctl_queue_t *queues[] = {&c->queue, &c->writer.waiting};
    for (size_t i = 0; i < 2; i++)
        for (ctl_qitem_t *it; (it = ctl_queue_pop(queues[i])) != NULL;) {
            record_t *r = RECORD_OF(q, it);
            if (r->gone && r->wt.inflight == 0)
                ctl_record_free(r);
        }
    size_t i;
    hcp_hnode_t *n, *next;
    HCP_HTAB_FOREACH_SAFE(&c->records.tab, i, n, next) {
        record_t *r = (record_t *)n;
        ev_timer_stop(c->loop, &r->timer);
        ctl_record_free(r);
    }
    kube_objmap_free(&c->records);
    kube_cache_free(&c->policies);
    kube_cache_free(&c->hcs);
    kube_cache_free(&c->nps);
    ctl_pools_free(&c->pools);
    kube_cache_free(&c->clusters);
    kube_cache_free(&c->mds);
    kube_cache_free(&c->mss);
    kube_cache_free(&c->companions);
    kube_cache_free(&c->cms);
    kube_cache_free(&c->cals);
    kube_cache_free(&c->evid);
    wave_index_free(c->waves);
    free(c->ns_filter);
    free(c);
}

void ctl_set_leading(ctl_controller_t *c, bool leading)
{
    bool was = c->leading;
    c->leading = leading;
    if (c->proj)
        hosted_set_leading(c->proj, leading);
    ctl_standby_lead(c, was, leading);
    if (leading && !was)
        ctl_enqueue_all(c);
}

void ctl_api_back(ctl_controller_t *c)
{
    if (c->leading)
        ctl_enqueue_all(c);
}

bool ctl_idle(const ctl_controller_t *c)
{
    return ctl_queue_empty(&c->queue) && c->writer.inflight == 0;
}

const ctl_stats_t *ctl_get_stats(const ctl_controller_t *c)
{
    return &c->stats;
}

bool ctl_leading(const ctl_controller_t *c)
{
    return c->leading;
}

sched_time_t ctl_hold_age_warning(const ctl_controller_t *c)
{
    return c->hold_age > 0 ? c->hold_age : 0;
}

uint64_t ctl_watch_restarts(const ctl_controller_t *c)
{
    const kube_watch *ws[] = CTL_WATCHES(c);
    uint64_t n = 0;
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++)
        n += ws[i]->stats.restarts + ws[i]->stats.relists;
    return n;
}

void ctl_foreach_watch_lists(const ctl_controller_t *c,
                             void (*fn)(const char *resource, uint64_t lists, void *ud),
                             void *ud)
{
    const kube_watch *ws[] = CTL_WATCHES(c);
    for (size_t i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
        const char *slash = ws[i]->path ? strrchr(ws[i]->path, '/') : NULL;
        if (ws[i]->c && slash)
            fn(slash + 1, ws[i]->stats.lists, ud);
    }
}

