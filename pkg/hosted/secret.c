/* secret.c: the kubeconfig Secret of a hosted cluster, read and re-read. */
#include "hosted/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "hosted/kubeconfig.h"
#include "kube/error.h"
#include "log/log.h"

/* ---- the Secret ------------------------------------------------------------ */

static void arm_secret(entry_t *e, double delay, bool retry)
{
    ev_timer_stop(e->p->loop, &e->secret_timer);
    ev_timer_set(&e->secret_timer, delay, 0.);
    ev_timer_start(e->p->loop, &e->secret_timer);
    e->secret_retry = retry;
}

/* The next periodic read: the re-read period (jittered), or when the token
 * in use is due for renewal if that is sooner. */
static void arm_recheck(entry_t *e)
{
    double d = e->p->opts.recheck * (0.8 + 0.4 * hosted__rnd01(e->p));
    if (e->connected && !e->need_enroll) {
        double renew = e->renew_at - ev_now(e->p->loop);
        if (renew < d)
            d = renew > 0 ? renew : 0;
    }
    arm_secret(e, d, false);
}

void hosted__secret_arm(entry_t *e)
{
    if (!e->secret_req)
        arm_recheck(e);
}

static void arm_secret_retry(entry_t *e)
{
    arm_secret(e, kube_backoff_next(&e->secret_backoff, hosted__rnd01(e->p)), true);
}

/* After a hosted API failure: read the Secret again after the backoff,
 * unless a read is in flight or already scheduled as a retry. */
void hosted__secret_retry_soon(entry_t *e)
{
    if (e->secret_req || e->secret_retry)
        return;
    arm_secret_retry(e);
}

static void secret_fail(entry_t *e, const char *reason, bool drop)
{
    if (drop) {
        hosted__identity_stop(e);
        hosted__disconnect(e);
    }
    e->secret_reason = reason;
    e->secret_rv[0] = '\0';
    if (strcmp(reason, HOSTED_SECRET_NOT_FOUND) == 0 ||
        strcmp(reason, HOSTED_KUBECONFIG_INVALID) == 0)
        arm_secret(e, kube_backoff_next(&e->absent_backoff, hosted__rnd01(e->p)), true);
    else
        arm_secret_retry(e);
}

static void secret_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    hosted_t *p = e->p;
    char msg[512] = "";
    (void)c;
    e->secret_req = NULL;
    if (e->gone)
        return;
    p->stats.secret_reads++;
    if (err) {
        if (err->http_status == 404) {
            hosted__set_msg(&e->secret_msg, "Secret %s/%s not found.", e->hcpns,
                            HOSTED_SECRET);
            secret_fail(e, HOSTED_SECRET_NOT_FOUND, true);
        } else if (e->connected) {
            /* The management API hiccuped; the client in use still works. */
            log_kv(LOG_WARN, "reading kubeconfig Secret failed", "namespace", e->hcpns,
                   "error", err->message, NULL);
            arm_secret_retry(e);
        } else {
            hosted__set_msg(&e->secret_msg, "Reading Secret %s/%s: %s", e->hcpns,
                            HOSTED_SECRET, err->message);
            secret_fail(e, HOSTED_SECRET_UNREADABLE, false);
        }
        hosted__evaluate(e);
        return;
    }
    const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                       "resourceVersion"));
    bool renew = e->connected && ev_now(p->loop) >= e->renew_at - 0.5;
    /* A set-up under way (the next read sees what it left), or the Secret
     * unchanged and the token in use good: nothing to do. */
    if (e->need_enroll || (e->connected && rv && strcmp(rv, e->secret_rv) == 0 && !renew &&
                           !e->reenroll)) {
        arm_recheck(e);
        return;
    }
    kube_config cfg;
    int rc = hosted_kubeconfig_from_secret_load(obj, e->hcpns, p->opts.rewrite_server, &cfg,
                                                msg, sizeof(msg));
    if (rc < 0) {
        hosted__set_msg(&e->secret_msg, "Secret %s/%s: %s", e->hcpns, HOSTED_SECRET, msg);
        secret_fail(e, HOSTED_KUBECONFIG_INVALID, true);
        hosted__evaluate(e);
        return;
    }
    log_kv(LOG_INFO, renew ? "renewing the hosted token" : "setting up the hosted identity",
           "namespace", e->ns, "name", e->name, "server", cfg.server, NULL);
    snprintf(e->secret_rv, sizeof(e->secret_rv), "%s", rv ? rv : "");
    e->secret_reason = NULL;
    kube_backoff_reset(&e->absent_backoff);
    if (hosted__identity_want(e, &cfg) < 0) { /* queued: the set-up takes a slot in turn */
        arm_secret_retry(e);
        return;
    }
    arm_recheck(e);
    hosted__evaluate(e);
}

void hosted__secret_fetch(entry_t *e)
{
    char path[PATH_LEN];
    kube_error ke;
    if (e->secret_req)
        return;
    if (kube_path(path, sizeof(path), NULL, "v1", "secrets", e->hcpns, HOSTED_SECRET,
                  NULL) < 0) {
        hosted__set_msg(&e->secret_msg, "\"%s\" is not a usable namespace", e->hcpns);
        e->secret_reason = HOSTED_SECRET_NOT_FOUND;
        return; /* permanent: no retry */
    }
    kube_call call = {.verb = KUBE_VERB_GET, .path = path, .on_done = secret_done, .ud = e};
    if (kube_client_call(e->p->mgmt, &call, &e->secret_req, &ke) < 0) {
        e->secret_req = NULL;
        if (!e->connected) {
            hosted__set_msg(&e->secret_msg, "Reading Secret %s/%s: %s",
                            e->hcpns, HOSTED_SECRET, ke.message);
            e->secret_reason = HOSTED_SECRET_UNREADABLE;
        }
        arm_secret_retry(e);
    }
}

void hosted__secret_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    e->secret_retry = false;
    hosted__secret_fetch(e);
    hosted__evaluate(e);
}

