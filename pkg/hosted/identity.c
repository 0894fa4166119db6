/* identity.c: the controller's own identity in a hosted cluster.
 *
 * The admin kubeconfig of the Secret is used for one thing: to set up, in
 * the hosted cluster, a ServiceAccount of the controller's own bound to a
 * ClusterRole that allows exactly what the projection does (get
 * ClusterVersion `version`, patch its status), and to ask a short-lived
 * token of it (TokenRequest). The projection's client then carries that
 * token alone; the admin client and its configuration are freed (keys and
 * tokens zeroed) when the set-up ends, and its requests never share a
 * connection with anything (kube_client_opts.no_reuse). The set-up runs
 * again, from a fresh read of the Secret, when the token has lived 80% of
 * its time (or opts.token_renew), when the hosted API server refuses the
 * token (someone deleted the ServiceAccount, the ClusterRole or the
 * binding: they are put back) and when the Secret changes. It runs from the
 * module's queue of checks, so a cold start of 1,000 clusters sets up at
 * most max_in_flight at once.
 *
 * hosted_retire() removes it all again (our two conditions from the
 * ClusterVersion, the binding, the ClusterRole, the ServiceAccount) when a
 * HostedCluster opts out, with a fresh read of the Secret: a job of its
 * own, apart from the entries, tried three times.
 */
#include "hosted/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "decide/conditions.h"
#include "hosted/kubeconfig.h"
#include "kube/error.h"
#include "log/log.h"

#define RBAC_PATH "/apis/rbac.authorization.k8s.io/v1"
#define SA_PATH "/api/v1/namespaces/" HOSTED_SA_NAMESPACE "/serviceaccounts/" HOSTED_SA_NAME
#define ROLE_PATH RBAC_PATH "/clusterroles/" HOSTED_ROLE_NAME
#define BINDING_PATH RBAC_PATH "/clusterrolebindings/" HOSTED_ROLE_NAME
#define RETIRE_TRIES 3

/* ---- what is set up (pure) ---------------------------------------------------- */

static json_t *labels(void)
{
    return json_pack("{s:s}", "app.kubernetes.io/managed-by", KUBE_FIELD_MANAGER);
}

json_t *hosted_identity_object(int which)
{
    switch (which) {
    case HOSTED_ID_SERVICEACCOUNT:
        return json_pack("{s:s,s:s,s:{s:s,s:s,s:o}}", "apiVersion", "v1", "kind",
                         "ServiceAccount", "metadata", "name", HOSTED_SA_NAME, "namespace",
                         HOSTED_SA_NAMESPACE, "labels", labels());
    case HOSTED_ID_CLUSTERROLE:
        /* get of the object (the check reads it whole), patch of its
         * status (our two conditions), of the one ClusterVersion there is. */
        return json_pack("{s:s,s:s,s:{s:s,s:o},s:[{s:[s],s:[s],s:[s],s:[s]},"
                         "{s:[s],s:[s],s:[s],s:[s]}]}",
                         "apiVersion", "rbac.authorization.k8s.io/v1", "kind", "ClusterRole",
                         "metadata", "name", HOSTED_ROLE_NAME, "labels", labels(), "rules",
                         "apiGroups", "config.openshift.io", "resources", "clusterversions",
                         "resourceNames", HOSTED_CV_NAME, "verbs", "get", "apiGroups",
                         "config.openshift.io", "resources", "clusterversions/status",
                         "resourceNames", HOSTED_CV_NAME, "verbs", "patch");
    case HOSTED_ID_BINDING:
        return json_pack("{s:s,s:s,s:{s:s,s:o},s:{s:s,s:s,s:s},s:[{s:s,s:s,s:s}]}",
                         "apiVersion", "rbac.authorization.k8s.io/v1", "kind",
                         "ClusterRoleBinding", "metadata", "name", HOSTED_ROLE_NAME, "labels",
                         labels(), "roleRef", "apiGroup", "rbac.authorization.k8s.io", "kind",
                         "ClusterRole", "name", HOSTED_ROLE_NAME, "subjects", "kind",
                         "ServiceAccount", "name", HOSTED_SA_NAME, "namespace",
                         HOSTED_SA_NAMESPACE);
    default:
        return NULL;
    }
}

/* The steps of the set-up, in order; the last one asks the token. */
static const struct {
    const char *path, *what;
} steps[] = {
    {SA_PATH, "ServiceAccount " HOSTED_SA_NAMESPACE "/" HOSTED_SA_NAME},
    {ROLE_PATH, "ClusterRole " HOSTED_ROLE_NAME},
    {BINDING_PATH, "ClusterRoleBinding " HOSTED_ROLE_NAME},
    {SA_PATH "/token", "a token of ServiceAccount " HOSTED_SA_NAMESPACE "/" HOSTED_SA_NAME},
};
#define N_STEPS (int)(sizeof(steps) / sizeof(steps[0]))

int hosted_token_from_request(const json_t *answer, double now_unix, char **token,
                              double *lifetime, char *err, size_t errlen)
{
    const json_t *st = json_object_get(answer, "status");
    const char *tok = json_string_value(json_object_get(st, "token"));
    const char *exp = json_string_value(json_object_get(st, "expirationTimestamp"));
    sched_time_t until;

    *token = NULL;
    if (!tok || !tok[0] || strlen(tok) > 8192)
        return hcp_errf(err, errlen, HCP_EPARSE, "the TokenRequest's answer has no status.token");
    for (const char *c = tok; *c; c++)
        if (*c <= ' ' || *c > '~')
            return hcp_errf(err, errlen, HCP_EPARSE,
                            "the TokenRequest's status.token holds a byte no header may carry");
    if (!exp || sched_parse_rfc3339(exp, &until) != 0)
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "the TokenRequest's answer has no RFC 3339 status.expirationTimestamp");
    *lifetime = (double)until - now_unix;
    if (*lifetime <= 0)
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "the TokenRequest's token expired already (%s)", exp);
    *token = strdup(tok);
    return *token ? 0 : hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
}

/* ---- the set-up ---------------------------------------------------------------- */

static void step_done(kube_client *c, const kube_error *err, json_t *obj, void *ud);

/* A transport or TLS failure, or no answer: the server is not reached. */
static bool unreached(const kube_error *err)
{
    return err->code == HCP_ETRANSPORT || err->code == HCP_ETLS;
}

/* The set-up's slot of the queue is free again. */
static void release_slot(entry_t *e)
{
    if (e->enrolling) {
        e->enrolling = false;
        e->busy = false;
        e->p->in_flight--;
    }
}

/* Frees the admin client and its configuration; never from inside one of
 * its own callbacks (admin_close_later() is for those). */
static void drop_admin(entry_t *e)
{
    release_slot(e);
    ev_timer_stop(e->p->loop, &e->admin_timer);
    if (!e->admin)
        return;
    if (e->admin->up)
        kube_client_close(&e->admin->c); /* cancels its request: no callback */
    kube_config_free(&e->admin->cfg);    /* key and token zeroed */
    free(e->admin);
    e->admin = NULL;
}

void hosted__admin_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    drop_admin(w->data);
}

/* The set-up ended inside a callback of the admin client: its slot is
 * free now, the client and its configuration go at the next loop turn. */
static void admin_close_later(entry_t *e)
{
    release_slot(e);
    ev_timer_stop(e->p->loop, &e->admin_timer);
    ev_timer_set(&e->admin_timer, 0., 0.);
    ev_timer_start(e->p->loop, &e->admin_timer);
}

void hosted__identity_stop(entry_t *e)
{
    drop_admin(e);
    e->need_enroll = false;
}

int hosted__identity_want(entry_t *e, kube_config *admin)
{
    drop_admin(e);
    e->admin = calloc(1, sizeof(*e->admin));
    if (!e->admin) {
        kube_config_free(admin);
        return HCP_ENOMEM;
    }
    e->admin->cfg = *admin;
    memset(admin, 0, sizeof(*admin));
    e->need_enroll = true;
    hosted__kick(e);
    return 0;
}

/* Ends the set-up: the admin client goes, the queue moves on (in_cb: from
 * a callback of the admin client, outside the queue's pump). */
static void enroll_end(entry_t *e, bool in_cb)
{
    if (in_cb)
        admin_close_later(e);
    else
        drop_admin(e);
    e->need_enroll = false;
    if (!e->gone && e->again) {
        e->again = false;
        hosted__kick(e);
    }
    hosted__evaluate(e);
    if (in_cb)
        hosted__pump(e->p);
}

static void enroll_failed(entry_t *e, int step, const kube_error *err, bool in_cb)
{
    hosted_t *p = e->p;
    p->stats.identity_errors++;
    e->reenroll = true;
    if (unreached(err)) {
        e->id_reason = HOSTED_UNREACHABLE;
        hosted__api_msg(&e->id_msg, e->admin->cfg.server, err);
    } else {
        e->id_reason = HOSTED_IDENTITY_FAILED;
        hosted__set_msg(&e->id_msg,
                        "Setting up the controller's identity in the hosted cluster with the "
                        "Secret's admin kubeconfig: %s: %s%s%s",
                        steps[step].what,
                        err->http_status ? err->reason : hcp_strerror(err->code),
                        err->message[0] ? ": " : "", err->message);
    }
    log_kv(LOG_WARN, "hosted identity set-up failed", "namespace", e->ns, "name", e->name,
           "error", e->id_msg ? e->id_msg : "", NULL);
    hosted__secret_retry_soon(e); /* a fresh read of the Secret, after the backoff */
    enroll_end(e, in_cb);
}

/* The token arrived: the projection's client carries it alone. */
static void enroll_token(entry_t *e, json_t *answer)
{
    hosted_t *p = e->p;
    char msg[256];
    char *token = NULL;
    double life = 0;
    kube_error ke = {0};

    if (hosted_token_from_request(answer, (double)time(NULL), &token, &life, msg,
                                  sizeof(msg)) < 0) {
        ke.code = HCP_EPARSE;
        snprintf(ke.message, sizeof(ke.message), "%s", msg);
        enroll_failed(e, N_STEPS - 1, &ke, true);
        return;
    }
    const kube_config *a = &e->admin->cfg;
    bool same = e->connected && strcmp(e->cfg.server, a->server) == 0 &&
                e->cfg.insecure == a->insecure && e->cfg.ca_len == a->ca_len &&
                (a->ca_len == 0 || memcmp(e->cfg.ca, a->ca, a->ca_len) == 0);
    int rc = 0;
    if (same) {
        rc = kube_client_set_token(&e->client, token); /* in place: the checks go on */
    } else {
        kube_config cfg = {0};
        cfg.server = strdup(a->server);
        cfg.ca = a->ca ? malloc(a->ca_len + 1) : NULL;
        cfg.ca_len = a->ca_len;
        cfg.insecure = a->insecure;
        cfg.token = token;
        token = NULL;
        snprintf(cfg.context, sizeof(cfg.context), "%s", a->context);
        if (!cfg.server || (a->ca && !cfg.ca)) {
            kube_config_free(&cfg);
            rc = HCP_ENOMEM;
        } else {
            if (a->ca) {
                memcpy(cfg.ca, a->ca, a->ca_len);
                cfg.ca[a->ca_len] = '\0';
            }
            hosted__disconnect(e);
            rc = hosted__connect(e, &cfg, msg, sizeof(msg));
        }
    }
    kube_secret_free(token);
    if (rc < 0) {
        ke.code = rc;
        snprintf(ke.message, sizeof(ke.message), "%s", rc == HCP_ENOMEM ? "out of memory" : msg);
        enroll_failed(e, N_STEPS - 1, &ke, true);
        return;
    }
    double now = ev_now(p->loop);
    e->token_until = now + life;
    e->renew_at = now + (p->opts.token_renew > 0 && p->opts.token_renew < life
                             ? p->opts.token_renew
                             : 0.8 * life);
    e->reenroll = false;
    e->id_reason = NULL;
    hosted__set_msg(&e->id_msg, NULL);
    p->stats.tokens++;
    if (same)
        p->stats.renewals++;
    log_kv(1, "hosted token issued", "namespace", e->ns, "name", e->name, NULL);
    e->need_enroll = false;
    hosted__secret_arm(e);
    enroll_end(e, true);
}

static int step_start(entry_t *e, int step, kube_error *ke)
{
    hosted_t *p = e->p;
    e->step = step;
    if (step == N_STEPS - 1) {
        json_t *tr = json_pack("{s:s,s:s,s:{s:I}}", "apiVersion", "authentication.k8s.io/v1",
                               "kind", "TokenRequest", "spec", "expirationSeconds",
                               (json_int_t)p->opts.token_ttl);
        if (!tr)
            return kube_error_set(ke, HCP_ENOMEM, 0, NULL, "out of memory");
        int rc = kube_create(&e->admin->c, steps[step].path, tr, step_done, e, ke);
        json_decref(tr);
        return rc;
    }
    json_t *obj = hosted_identity_object(step);
    if (!obj)
        return kube_error_set(ke, HCP_ENOMEM, 0, NULL, "out of memory");
    int rc = kube_apply(&e->admin->c, steps[step].path, obj, true, step_done, e, ke);
    json_decref(obj);
    return rc;
}

static void step_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    kube_error ke;
    (void)c;
    if (e->gone) {
        enroll_end(e, true);
        return;
    }
    e->p->stats.identity_requests++;
    if (err) {
        enroll_failed(e, e->step, err, true);
    } else if (e->step == N_STEPS - 1) {
        enroll_token(e, obj);
    } else if (step_start(e, e->step + 1, &ke) < 0) {
        enroll_failed(e, e->step, &ke, true);
    }
}

void hosted__identity_start(entry_t *e)
{
    hosted_t *p = e->p;
    kube_client_opts copts = {.qps = p->opts.hosted_qps, .burst = p->opts.hosted_burst,
                              .timeout = p->opts.hosted_timeout, .max_retries = -1,
                              .no_reuse = true};
    kube_error ke;

    e->busy = true;
    e->again = false;
    p->in_flight++;
    e->enrolling = true;
    if (kube_client_init(&e->admin->c, &p->http, &e->admin->cfg, &copts, &ke) < 0) {
        enroll_failed(e, 0, &ke, false);
        return;
    }
    e->admin->up = true;
    if (step_start(e, 0, &ke) < 0)
        enroll_failed(e, 0, &ke, false); /* inside the queue's pump: no pump */
}

/* ---- hosted_retire() ----------------------------------------------------------- */

/* The removal steps: our conditions, then the identity, last what the
 * others name. */
enum { R_SECRET, R_CV, R_CV_PATCH, R_BINDING, R_ROLE, R_SA, R_DONE };

static void retire_step(retire_t *r);

/* Frees a removal job; never from inside one of its clients' callbacks
 * (retire_end() is for those). */
static void retire_free(retire_t *r)
{
    hcp_list_remove(&r->link);
    kube_request_cancel(r->req);
    if (r->admin_up)
        kube_client_close(&r->admin);
    kube_config_free(&r->cfg);
    ev_timer_stop(r->p->loop, &r->timer);
    free(r->ns);
    free(r->name);
    free(r);
}

/* Ends a removal job from inside a callback: freed at the next loop turn. */
static void retire_end(retire_t *r)
{
    r->dead = true;
    ev_timer_stop(r->p->loop, &r->timer);
    ev_timer_set(&r->timer, 0., 0.);
    ev_timer_start(r->p->loop, &r->timer);
}

static void retire_fail(retire_t *r, const char *what, const char *msg)
{
    if (++r->tries < RETIRE_TRIES) {
        log_kv(LOG_INFO, "removing the hosted identity: trying again", "namespace", r->ns,
               "name", r->name, "step", what, "error", msg, NULL);
        r->reset = true; /* from a fresh read of the Secret, outside this callback */
        r->stage = R_SECRET;
        ev_timer_stop(r->p->loop, &r->timer);
        ev_timer_set(&r->timer, 2.0 * r->tries, 0.);
        ev_timer_start(r->p->loop, &r->timer);
        return;
    }
    r->p->stats.identity_errors++;
    log_kv(LOG_WARN, "the hosted identity could not be removed", "namespace", r->ns, "name",
           r->name, "step", what, "error", msg, NULL);
    retire_end(r);
}

/* Our two conditions taken out of a ClusterVersion's list, or NULL when it
 * holds neither. */
static json_t *without_ours(const json_t *conds)
{
    json_t *out = json_array();
    bool had = false;
    size_t i;
    const json_t *c;
    if (!out)
        return NULL;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && (strcmp(t, COND_PAUSED) == 0 || strcmp(t, COND_PENDING) == 0))
            had = true;
        else
            json_array_append(out, (json_t *)c);
    }
    if (!had) {
        json_decref(out);
        return NULL;
    }
    return out;
}

static void retire_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    retire_t *r = ud;
    hosted_t *p = r->p;
    char msg[512];
    (void)c;
    r->req = NULL;
    if (err && !(err->http_status == 404 && r->stage != R_SECRET)) {
        retire_fail(r, r->stage == R_SECRET ? "reading the Secret" : "removing",
                    err->message[0] ? err->message : err->reason);
        return;
    }
    switch (r->stage) {
    case R_SECRET: {
        kube_error ke;
        kube_client_opts copts = {.timeout = p->opts.hosted_timeout, .max_retries = -1,
                                  .no_reuse = true};
        char hcpns[NS_LEN * 2 + 2];
        snprintf(hcpns, sizeof(hcpns), "%s-%s", r->ns, r->name);
        int rc = hosted_kubeconfig_from_secret_load(obj, hcpns, p->opts.rewrite_server, &r->cfg,
                                                    msg, sizeof(msg));
        if (rc == 0 && kube_client_init(&r->admin, &p->http, &r->cfg, &copts, &ke) < 0) {
            snprintf(msg, sizeof(msg), "%s", ke.message);
            rc = -1;
        }
        if (rc < 0) {
            r->tries = RETIRE_TRIES; /* a broken Secret does not mend in seconds */
            retire_fail(r, "reading the Secret", msg);
            return;
        }
        r->admin_up = true;
        r->stage = R_CV;
        break;
    }
    case R_CV: {
        json_t *rest = obj ? without_ours(json_object_get(json_object_get(obj, "status"),
                                                          "conditions"))
                           : NULL;
        const char *rv = json_string_value(
            json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
        r->stage = R_BINDING;
        if (rest && p->leading) {
            json_t *patch = decide_status_patch_doc(json_pack("{s:o}", "conditions", rest), rv);
            kube_error ke;
            if (!patch || kube_merge_patch_status(&r->admin, CV_PATH, patch, retire_done, r,
                                                  &ke) < 0) {
                json_decref(patch);
                retire_fail(r, "removing the ClusterVersion conditions",
                            patch ? ke.message : "out of memory");
                return;
            }
            json_decref(patch);
            r->stage = R_CV_PATCH;
            return;
        }
        json_decref(rest);
        break;
    }
    case R_CV_PATCH:
        r->stage = R_BINDING;
        break;
    case R_BINDING:
    case R_ROLE:
        r->stage++;
        break;
    case R_SA:
        p->stats.retired++;
        log_kv(LOG_INFO, "hosted identity removed", "namespace", r->ns, "name", r->name, NULL);
        retire_end(r);
        return;
    }
    retire_step(r);
}

static void retire_step(retire_t *r)
{
    kube_error ke;
    int rc = 0;
    switch (r->stage) {
    case R_SECRET: {
        char path[PATH_LEN], hcpns[NS_LEN * 2 + 2];
        snprintf(hcpns, sizeof(hcpns), "%s-%s", r->ns, r->name);
        if (kube_path(path, sizeof(path), NULL, "v1", "secrets", hcpns, HOSTED_SECRET, NULL) <
            0) {
            retire_end(r);
            return;
        }
        kube_call call = {.verb = KUBE_VERB_GET, .path = path, .on_done = retire_done, .ud = r};
        rc = kube_client_call(r->p->mgmt, &call, &r->req, &ke);
        break;
    }
    case R_CV: {
        kube_call call = {.verb = KUBE_VERB_GET, .path = CV_PATH, .on_done = retire_done,
                          .ud = r};
        rc = kube_client_call(&r->admin, &call, &r->req, &ke);
        break;
    }
    case R_BINDING:
        rc = kube_delete(&r->admin, BINDING_PATH, retire_done, r, &ke);
        break;
    case R_ROLE:
        rc = kube_delete(&r->admin, ROLE_PATH, retire_done, r, &ke);
        break;
    case R_SA:
        rc = kube_delete(&r->admin, SA_PATH, retire_done, r, &ke);
        break;
    default:
        retire_end(r);
        return;
    }
    if (rc < 0)
        retire_fail(r, "removing", ke.message);
}

static void retire_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    retire_t *r = w->data;
    (void)loop;
    (void)revents;
    if (r->dead) {
        retire_free(r);
        return;
    }
    if (r->reset) {
        if (r->admin_up)
            kube_client_close(&r->admin);
        r->admin_up = false;
        kube_config_free(&r->cfg);
        r->reset = false;
    }
    retire_step(r);
}

void hosted__retire_cancel(hosted_t *p, const char *ns, const char *name)
{
    hcp_link_t *n, *next;
    for (n = p->retiring.next; n != &p->retiring; n = next) {
        next = n->next;
        retire_t *r = hcp_list_entry(n, retire_t, link);
        if (strcmp(r->ns, ns) == 0 && strcmp(r->name, name) == 0)
            retire_free(r);
    }
}

void hosted__retire_all(hosted_t *p)
{
    while (!hcp_list_empty(&p->retiring))
        retire_free(hcp_list_entry(p->retiring.next, retire_t, link));
}

void hosted_retire(hosted_t *p, const char *ns, const char *name)
{
    if (!p || !ns || !name || !*kube_objmap_slot(&p->entries, 0, ns, name))
        return; /* never set up by this process */
    hosted_forget(p, ns, name);
    if (!p->leading)
        return; /* the leader removes it */
    hosted__retire_cancel(p, ns, name);
    retire_t *r = calloc(1, sizeof(*r));
    if (!r || !(r->ns = strdup(ns)) || !(r->name = strdup(name))) {
        if (r)
            free(r->ns);
        free(r);
        return;
    }
    r->p = p;
    ev_init(&r->timer, retire_timer_cb);
    r->timer.data = r;
    hcp_list_push_back(&p->retiring, &r->link);
    retire_step(r);
}
