/* link.c: one hosted API server: its client, the ClusterVersion watch and
 * the conditions patcher. */
#include "hosted/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "hosted/kubeconfig.h"
#include "kube/error.h"
#include "log/log.h"

/* ---- writes --------------------------------------------------------------- */

static bool transport_or_auth(const kube_error *err)
{
    return err->code == HCP_ETRANSPORT || err->code == HCP_ETLS || err->http_status == 401 ||
           err->http_status == 403;
}

static void set_api_error(entry_t *e, const kube_error *err)
{
    e->api_reason = HOSTED_UNREACHABLE;
    (void)hcp_errf(e->api_msg, sizeof(e->api_msg), 0, "Hosted API server %.200s: %s%s%s",
                   e->cfg.server,
                   err->http_status ? err->reason : hcp_strerror(err->code),
                   err->message[0] ? ": " : "", err->message);
    e->health_errors = e->watch.stats.errors;
    if (!ev_is_active(&e->health)) {
        ev_timer_set(&e->health, HEALTH_INTERVAL, HEALTH_INTERVAL);
        ev_timer_start(e->p->loop, &e->health);
    }
    hosted__secret_retry_soon(e); /* credentials or address may have been rotated */
}

static void clear_api_error(entry_t *e)
{
    e->api_reason = NULL;
    e->api_msg[0] = '\0';
    ev_timer_stop(e->p->loop, &e->health);
    kube_backoff_reset(&e->secret_backoff);
}

static void write_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    hosted_t *p = e->p;
    (void)c;
    e->writing = false;
    if (e->gone)
        return;
    if (err) {
        const kube_obj *o = kube_cache_get(&e->cache, NULL, HOSTED_CV_NAME);
        if (err->http_status == 409) {
            p->stats.conflicts++;
            /* Retry at once when the watch already brought a newer version;
             * otherwise its update triggers the retry, and the timer is the
             * safety net should it not come. */
            if (o && strcmp(o->rv, e->sent_rv) != 0) {
                hosted__sync(e);
                return;
            }
            ev_timer_stop(p->loop, &e->write_timer);
            ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, hosted__rnd01(p)),
                         0.);
            ev_timer_start(p->loop, &e->write_timer);
            return;
        }
        p->stats.write_errors++;
        if (transport_or_auth(err)) {
            set_api_error(e, err);
        } else if (err->http_status == 404) {
            e->write_reason = HOSTED_CV_NOT_FOUND;
            (void)hcp_errf(e->write_msg, sizeof(e->write_msg), 0,
                           "ClusterVersion %s: %s", HOSTED_CV_NAME, err->message);
        } else {
            e->write_reason = HOSTED_UPDATE_FAILED;
            (void)hcp_errf(e->write_msg, sizeof(e->write_msg), 0,
                           "Patching ClusterVersion %s: %s%s%s",
                           HOSTED_CV_NAME, err->reason, err->reason[0] ? ": " : "",
                           err->message);
        }
        log_kv(LOG_ERROR, "ClusterVersion write failed", "namespace", e->ns, "name", e->name,
               "error", err->message, NULL);
        e->write_wait = true;
        ev_timer_stop(p->loop, &e->write_timer);
        ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, hosted__rnd01(p)), 0.);
        ev_timer_start(p->loop, &e->write_timer);
        hosted__evaluate(e);
        return;
    }
    kube_backoff_reset(&e->write_backoff);
    e->write_reason = NULL;
    if (e->api_reason)
        clear_api_error(e);
    /* The answer is the object as written: cache it now, so the next
     * comparison sees it (the watch event is then a duplicate the cache
     * drops). */
    if (json_is_object(obj)) {
        kube_error ke;
        kube_cache_apply(&e->cache, KUBE_EVENT_MODIFIED, obj, &ke);
    }
    /* The update callback does not run when the watch delivered this
     * version first (it arrived while the write was in flight). */
    hosted__sync(e);
}

void hosted__write_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    e->write_wait = false;
    hosted__sync(e);
}

/* Writes our conditions when they differ and writing is possible, then
 * evaluates the state. */
void hosted__sync(entry_t *e)
{
    hosted_t *p = e->p;
    if (e->gone)
        return;
    if (!e->connected || !e->cache.synced || !e->have_want || e->writing) {
        hosted__evaluate(e);
        return;
    }
    const kube_obj *o = kube_cache_get(&e->cache, NULL, HOSTED_CV_NAME);
    const cv_view_t *cv = o ? o->data : NULL;
    if (!cv) {
        hosted__evaluate(e);
        return;
    }
    hosted_conds_t want = {{e->paused.status, e->paused.reason, e->paused.message},
                                {e->pending.status, e->pending.reason, e->pending.message}};
    if (hosted_conds_match(cv->conditions, &want)) {
        e->seen_right = true;
        e->write_reason = NULL;
        hosted__evaluate(e);
        return;
    }
    if (!p->leading || e->write_wait) {
        hosted__evaluate(e);
        return;
    }
    /* Re-asserting against another writer that keeps undoing it: the
     * first time at once, then paced with backoff so two writers never
     * ping-pong at full speed. */
    double now = ev_now(p->loop);
    if (e->seen_right && now < e->reassert_at) {
        if (!ev_is_active(&e->write_timer)) {
            ev_timer_set(&e->write_timer, e->reassert_at - now, 0.);
            ev_timer_start(p->loop, &e->write_timer);
        }
        hosted__evaluate(e);
        return;
    }
    json_t *patch = NULL;
    hosted_patch(cv->conditions, &want, e->paused.since, e->pending.since, o->rv, &patch);
    if (!patch) {
        hosted__evaluate(e);
        return;
    }
    kube_error ke;
    snprintf(e->sent_rv, sizeof(e->sent_rv), "%s", o->rv);
    if (kube_merge_patch_status(&e->client, CV_PATH, patch, write_done, e, &ke) < 0) {
        p->stats.write_errors++;
        e->write_reason = HOSTED_UPDATE_FAILED;
        (void)hcp_errf(e->write_msg, sizeof(e->write_msg), 0, "Patching ClusterVersion %s: %s",
                       HOSTED_CV_NAME, ke.message);
        e->write_wait = true;
        ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, hosted__rnd01(p)), 0.);
        ev_timer_start(p->loop, &e->write_timer);
    } else {
        e->writing = true;
        p->stats.writes++;
        e->st.writes++;
        if (e->seen_right) {
            if (e->last_reassert == 0 || now - e->last_reassert > REASSERT_QUIET)
                kube_backoff_reset(&e->reassert_backoff);
            e->last_reassert = now;
            e->reassert_at = now + kube_backoff_next(&e->reassert_backoff, hosted__rnd01(p));
            p->stats.reasserts++;
            log_kv(LOG_INFO, "ClusterVersion conditions re-asserted", "namespace", e->ns,
                   "name", e->name, NULL);
        }
        e->seen_right = false;
    }
    json_decref(patch);
    hosted__evaluate(e);
}

/* ---- the hosted watch ----------------------------------------------------- */

static int cv_extract(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    (void)strings;
    (void)ud;
    cv_view_t *v = calloc(1, sizeof(*v));
    if (!v)
        return HCP_ENOMEM;
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    if (json_is_array(conds)) {
        v->conditions = json_deep_copy(conds);
        if (!v->conditions) {
            free(v);
            return HCP_ENOMEM;
        }
    }
    *out = v;
    return 0;
}

static void cv_release(void *data, kube_intern *strings, void *ud)
{
    cv_view_t *v = data;
    (void)strings;
    (void)ud;
    if (v)
        json_decref(v->conditions);
    free(v);
}

static void cv_seen(entry_t *e)
{
    if (e->api_reason)
        clear_api_error(e);
    hosted__sync(e);
}

static void cv_add(const kube_obj *o, void *ud)
{
    (void)o;
    cv_seen(ud);
}

static void cv_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    (void)o;
    cv_seen(ud);
}

static void cv_delete(const kube_obj *o, void *ud)
{
    entry_t *e = ud;
    (void)o;
    e->seen_right = false;
    cv_seen(e);
}

static void watch_synced(kube_watch *w, void *ud)
{
    (void)w;
    cv_seen(ud);
}

static void watch_error(kube_watch *w, const kube_error *err, void *ud)
{
    entry_t *e = ud;
    (void)w;
    if (e->gone)
        return;
    if (err->http_status == 404) {
        /* The ClusterVersion API itself is not served. */
        e->api_reason = HOSTED_CV_NOT_FOUND;
        (void)hcp_errf(e->api_msg, sizeof(e->api_msg), 0,
                       "The hosted API server does not serve %s: %s", CV_COLLECTION, err->message);
        if (!ev_is_active(&e->health)) {
            e->health_errors = e->watch.stats.errors;
            ev_timer_set(&e->health, HEALTH_INTERVAL, HEALTH_INTERVAL);
            ev_timer_start(e->p->loop, &e->health);
        }
    } else if (transport_or_auth(err) || err->code == HCP_EHTTP || err->code == HCP_EPARSE) {
        set_api_error(e, err);
    } else {
        return; /* out of memory and the like: retried by the watch */
    }
    hosted__evaluate(e);
}

/* While an API error is shown: the watch streaming again with no new error
 * for a whole interval means the server answers again. */
void hosted__health_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    if (!e->connected || !e->api_reason) {
        ev_timer_stop(e->p->loop, &e->health);
        return;
    }
    if (e->watch.state == KUBE_WATCH_WATCHING && e->watch.stats.errors == e->health_errors) {
        clear_api_error(e);
        hosted__sync(e);
        return;
    }
    e->health_errors = e->watch.stats.errors;
}

/* Drops the hosted client, watch and cache. Never called from their own
 * callbacks: only from Secret callbacks, timers and hosted_free(). */
void hosted__disconnect(entry_t *e)
{
    if (!e->connected)
        return;
    kube_watch_stop(&e->watch);
    kube_client_close(&e->client); /* cancels a write in flight, no callback */
    kube_cache_free(&e->cache);
    kube_config_free(&e->cfg);
    free(e->kubeconfig);
    e->kubeconfig = NULL;
    e->kubeconfig_len = 0;
    e->writing = false;
    e->write_wait = false;
    e->write_reason = NULL;
    e->api_reason = NULL;
    e->seen_right = false;
    ev_timer_stop(e->p->loop, &e->write_timer);
    ev_timer_stop(e->p->loop, &e->health);
    e->connected = false;
}

/* Builds the hosted client and starts the watch. Takes ownership of cfg
 * (loaded) and kubeconfig on success and on failure. */
int hosted__connect(entry_t *e, kube_config *cfg, char *kubeconfig, size_t len, char *err,
                    size_t errlen)
{
    hosted_t *p = e->p;
    kube_client_opts copts = {.qps = p->opts.hosted_qps, .burst = p->opts.hosted_burst,
                              .timeout = 30};
    kube_cache_ops ops = {cv_extract, cv_release, cv_add, cv_update, cv_delete};
    kube_watch_opts wopts = {.path = CV_COLLECTION,
                             .field_selector = "metadata.name=" HOSTED_CV_NAME,
                             .backoff_initial = p->opts.backoff_initial,
                             .backoff_max = p->opts.backoff_max,
                             .on_synced = watch_synced,
                             .on_error = watch_error,
                             .ud = e};
    kube_error ke;
    bool client = false, cache = false;

    e->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    e->kubeconfig = kubeconfig;
    e->kubeconfig_len = len;
    if (kube_client_init(&e->client, p->http, &e->cfg, &copts, &ke) < 0)
        goto fail;
    client = true;
    if (kube_cache_init(&e->cache, &ops, e) < 0) {
        kube_error_set(&ke, HCP_ENOMEM, 0, NULL, "out of memory");
        goto fail;
    }
    cache = true;
    e->connected = true; /* the watch may report synchronously */
    if (kube_watch_start(&e->watch, &e->client, &e->cache, &wopts, &ke) < 0) {
        e->connected = false;
        goto fail;
    }
    p->stats.clients++;
    return 0;
fail:
    snprintf(err, errlen, "%s", ke.message);
    if (cache)
        kube_cache_free(&e->cache);
    if (client)
        kube_client_close(&e->client);
    kube_config_free(&e->cfg);
    free(e->kubeconfig);
    e->kubeconfig = NULL;
    e->kubeconfig_len = 0;
    return ke.code == HCP_ENOMEM ? HCP_ENOMEM : HCP_ECONFIG;
}

