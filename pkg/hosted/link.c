/* link.c: one hosted API server: its client, and the check of ClusterVersion
 * `version` (read, patch when it differs) that runs from a queue shared by
 * all HostedClusters, with a bound on checks in flight. */
#include "hosted/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "hosted/kubeconfig.h"
#include "kube/error.h"
#include "log/log.h"

static void check_start(entry_t *e);

/* ---- errors ---------------------------------------------------------------- */

static bool transport_or_auth(const kube_error *err)
{
    return err->code == HCP_ETRANSPORT || err->code == HCP_ETLS || err->http_status == 401 ||
           err->http_status == 403;
}

void hosted__api_msg(char **slot, const char *server, const kube_error *err)
{
    hosted__set_msg(slot, "Hosted API server %.200s: %s%s%s", server,
                    err->http_status ? err->reason : hcp_strerror(err->code),
                    err->message[0] ? ": " : "", err->message);
}

static void set_api_error(entry_t *e, const kube_error *err)
{
    if ((err->http_status == 401 || err->http_status == 403) && !e->reenroll) {
        e->reenroll = true; /* the identity was deleted or changed: put it back */
        e->p->stats.refused++;
    }
    e->api_reason = HOSTED_UNREACHABLE;
    hosted__api_msg(&e->api_msg, e->cfg.server, err);
    if (transport_or_auth(err))
        hosted__secret_retry_soon(e); /* credentials or address may have been rotated */
}

static void clear_api_error(entry_t *e)
{
    if (!e->api_reason)
        return;
    e->api_reason = NULL;
    hosted__set_msg(&e->api_msg, NULL);
    kube_backoff_reset(&e->secret_backoff);
}

/* ---- the queue --------------------------------------------------------------- */

static void arm_tick(entry_t *e, double delay)
{
    ev_timer_stop(e->p->loop, &e->tick);
    ev_timer_set(&e->tick, delay, 0.);
    ev_timer_start(e->p->loop, &e->tick);
}

/* Starts queued checks while fewer than max_in_flight run. */
static void pump(hosted_t *p)
{
    while (p->qhead && p->in_flight < p->opts.max_in_flight) {
        entry_t *e = p->qhead;
        p->qhead = e->qnext;
        if (!p->qhead)
            p->qtail = NULL;
        e->qnext = NULL;
        e->queued = false;
        if (e->gone)
            continue;
        if (e->need_enroll)
            hosted__identity_start(e);
        else if (e->connected)
            check_start(e);
    }
}

static void unqueue(entry_t *e)
{
    hosted_t *p = e->p;
    entry_t **pp = &p->qhead, *prev = NULL;
    if (!e->queued)
        return;
    while (*pp && *pp != e) {
        prev = *pp;
        pp = &(*pp)->qnext;
    }
    if (*pp) {
        *pp = e->qnext;
        if (p->qtail == e)
            p->qtail = prev;
    }
    e->qnext = NULL;
    e->queued = false;
}

/* Asks for a check of the entry's ClusterVersion, or the set-up of its
 * identity when one waits: queued, or remembered when one runs (it then
 * runs again). Nothing before the client exists or a set-up waits. */
void hosted__kick(entry_t *e)
{
    hosted_t *p = e->p;
    if (e->gone || (!e->connected && !e->need_enroll))
        return;
    if (e->busy) {
        e->again = true;
        return;
    }
    if (e->queued)
        return;
    e->queued = true;
    e->qnext = NULL;
    if (p->qtail)
        p->qtail->qnext = e;
    else
        p->qhead = e;
    p->qtail = e;
    pump(p);
}

/* The delay to the next re-assertion check after one that went well: one
 * period from the start of that check, so a cluster is read once per period
 * and a dropped condition waits one period at most (plus the check's own
 * latency). The first one after connecting falls at a random 50-100% of the
 * period instead, which spreads the checks of clusters connected together
 * (a cold start) over the period. */
static double period(entry_t *e)
{
    hosted_t *p = e->p;
    double d = p->opts.period;
    if (!e->phased) {
        e->phased = true;
        d *= 0.5 + 0.5 * hosted__rnd01(p);
    }
    d -= ev_now(p->loop) - e->check_started;
    return d > 0 ? d : 0;
}

static double retry_delay(entry_t *e)
{
    return kube_backoff_next(&e->retry_backoff, hosted__rnd01(e->p));
}

void hosted__tick_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    hosted__kick(w->data);
}

/* ---- the check --------------------------------------------------------------- */

/* Ends the running check; the caller pumps the queue afterwards. */
static void finish(entry_t *e, double delay)
{
    hosted_t *p = e->p;
    e->busy = false;
    p->in_flight--;
    if (e->gone)
        return;
    arm_tick(e, delay);
    if (e->again) {
        e->again = false;
        hosted__kick(e); /* queued: the caller's pump starts it in turn */
    }
    hosted__evaluate(e);
}

/* Keeps our two conditions of status.conditions (NULL or not an array reads
 * as none): what hosted_conds_match() needs between checks, a few hundred
 * bytes instead of the whole object. */
static void keep_seen(entry_t *e, const json_t *conditions)
{
    json_t *seen = json_array();
    size_t i;
    const json_t *c;
    json_decref(e->seen);
    e->seen = seen;
    if (!seen || !json_is_array(conditions))
        return;
    json_array_foreach(conditions, i, c) {
        const char *type = json_string_value(json_object_get(c, "type"));
        if (type && (strcmp(type, COND_PAUSED) == 0 || strcmp(type, COND_PENDING) == 0))
            json_array_append(seen, (json_t *)c);
    }
}

static hosted_conds_t wanted(const entry_t *e)
{
    return (hosted_conds_t){{e->paused.status, e->paused.reason, e->paused.message},
                            {e->pending.status, e->pending.reason, e->pending.message}};
}

static void write_failed(entry_t *e, const kube_error *err)
{
    hosted_t *p = e->p;
    p->stats.write_errors++;
    if (transport_or_auth(err)) {
        set_api_error(e, err);
    } else if (err->http_status == 404) {
        e->write_reason = HOSTED_CV_NOT_FOUND;
        hosted__set_msg(&e->write_msg, "ClusterVersion %s: %s", HOSTED_CV_NAME, err->message);
    } else {
        e->write_reason = HOSTED_UPDATE_FAILED;
        hosted__set_msg(&e->write_msg, "Patching ClusterVersion %s: %s%s%s", HOSTED_CV_NAME,
                        err->reason, err->reason[0] ? ": " : "", err->message);
    }
    log_kv(LOG_ERROR, "ClusterVersion write failed", "namespace", e->ns, "name", e->name,
           "error", err->message, NULL);
}

static void patched(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    hosted_t *p = e->p;
    (void)c;
    if (e->gone) {
        finish(e, 0);
    } else if (err && err->http_status == 409) {
        /* Someone wrote since our read: read again at once, a few times. */
        p->stats.conflicts++;
        e->again = ++e->conflicts <= CONFLICTS_MAX;
        finish(e, retry_delay(e));
    } else if (err) {
        write_failed(e, err);
        finish(e, retry_delay(e));
    } else {
        kube_backoff_reset(&e->retry_backoff);
        e->conflicts = 0;
        e->write_reason = NULL;
        clear_api_error(e);
        keep_seen(e, json_object_get(json_object_get(obj, "status"), "conditions"));
        hosted_conds_t want = wanted(e);
        e->seen_right = hosted_conds_match(e->seen, &want);
        finish(e, period(e));
    }
    pump(p);
}

/* Patches our conditions into the ClusterVersion just read (obj), when they
 * differ and this module is the writer. Returns true when a patch is in
 * flight (the check goes on). */
static bool patch_if_needed(entry_t *e, const json_t *obj)
{
    hosted_t *p = e->p;
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    const char *rv = json_string_value(
        json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    hosted_conds_t want = wanted(e);
    json_t *patch = NULL;
    kube_error ke;

    if (!e->have_want || !p->leading || hosted_conds_match(conds, &want))
        return false;
    if (hosted_patch(conds, &want, e->paused.since, e->pending.since, rv, &patch) < 0 || !patch)
        return false;
    int rc = kube_merge_patch_status(&e->client, CV_PATH, patch, patched, e, &ke);
    json_decref(patch);
    if (rc < 0) {
        write_failed(e, &ke);
        return false;
    }
    p->stats.writes++;
    e->st.writes++;
    if (e->seen_right) {
        p->stats.reasserts++;
        log_kv(LOG_INFO, "ClusterVersion conditions re-asserted", "namespace", e->ns, "name",
               e->name, NULL);
    }
    e->seen_right = false;
    return true;
}

static void got_cv(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    hosted_t *p = e->p;
    (void)c;
    if (e->gone) {
        finish(e, 0);
    } else if (err) {
        p->stats.read_errors++;
        if (err->http_status == 404) {
            clear_api_error(e);
            e->cv_read = true;
            e->cv_absent = true;
            e->seen_right = false;
            keep_seen(e, NULL);
        } else {
            set_api_error(e, err);
        }
        finish(e, retry_delay(e));
    } else {
        clear_api_error(e);
        e->cv_read = true;
        e->cv_absent = false;
        keep_seen(e, json_object_get(json_object_get(obj, "status"), "conditions"));
        hosted_conds_t want = wanted(e);
        if (e->have_want && hosted_conds_match(e->seen, &want)) {
            e->seen_right = true;
            e->write_reason = NULL;
            e->conflicts = 0;
            kube_backoff_reset(&e->retry_backoff);
        }
        if (patch_if_needed(e, obj))
            return; /* the patch ends the check */
        finish(e, e->write_reason ? retry_delay(e) : period(e));
    }
    pump(p);
}

/* Starts a check: one GET; patched() or got_cv() ends it. */
static void check_start(entry_t *e)
{
    hosted_t *p = e->p;
    kube_call call = {.verb = KUBE_VERB_GET, .path = CV_PATH, .on_done = got_cv, .ud = e};
    kube_error ke;

    ev_timer_stop(p->loop, &e->tick);
    e->check_started = ev_now(p->loop);
    e->busy = true;
    e->again = false;
    p->in_flight++;
    p->stats.reads++;
    if (kube_client_call(&e->client, &call, NULL, &ke) < 0) {
        p->stats.read_errors++;
        set_api_error(e, &ke);
        finish(e, retry_delay(e)); /* no pump: we are inside one */
    }
}

/* Drops the hosted client and the entry's place in the queue. Never called
 * from the client's callbacks: only from Secret callbacks and releases. */
void hosted__disconnect(entry_t *e)
{
    hosted_t *p = e->p;
    if (!e->connected)
        return;
    if (!e->need_enroll)
        unqueue(e);
    if (e->busy && !e->enrolling) {
        e->busy = false;
        p->in_flight--; /* the request is cancelled below, without callback */
    }
    kube_client_close(&e->client);
    kube_config_free(&e->cfg);
    json_decref(e->seen);
    e->seen = NULL;
    e->again = false;
    e->cv_read = false;
    e->cv_absent = false;
    e->phased = false;
    e->conflicts = 0;
    e->write_reason = NULL;
    e->api_reason = NULL;
    e->seen_right = false;
    ev_timer_stop(p->loop, &e->tick);
    e->connected = false;
}

/* Builds the hosted client (cfg: the address, the CA and the
 * ServiceAccount's token) and queues the first check. Takes ownership of
 * cfg on success and on failure; the token is left in the client alone. */
int hosted__connect(entry_t *e, kube_config *cfg, char *err, size_t errlen)
{
    hosted_t *p = e->p;
    kube_client_opts copts = {.qps = p->opts.hosted_qps, .burst = p->opts.hosted_burst,
                              .timeout = p->opts.hosted_timeout, .max_retries = -1};
    kube_error ke;

    e->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    if (kube_client_init(&e->client, &p->http, &e->cfg, &copts, &ke) < 0) {
        snprintf(err, errlen, "%s", ke.message);
        kube_config_free(&e->cfg);
        return ke.code == HCP_ENOMEM ? HCP_ENOMEM : HCP_ECONFIG;
    }
    kube_secret_free(e->cfg.token); /* the client keeps its own copy */
    e->cfg.token = NULL;
    e->connected = true;
    kube_backoff_reset(&e->retry_backoff);
    p->stats.clients++;
    hosted__kick(e);
    return 0;
}

/* Starts what the queue holds; for releases that freed slots. */
void hosted__pump(hosted_t *p)
{
    pump(p);
}
