/* hosted.c: ChangesPaused/ChangesPending projected into hosted ClusterVersions. */
#include "hosted/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "decide/conditions.h"
#include "hosted/kubeconfig.h"
#include "kube/error.h"
#include "kube/objmap.h"
#include "kube/ratelimit.h"
#include "log/log.h"

/* ---- small helpers ------------------------------------------------------ */

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Removes the parts of library messages that differ from one attempt to the
 * next (libfyaml's "<memory-@0x...-0x...>:" buffer address, libcurl's
 * "after N ms"), so a state repeated by retries reads the same. In place. */
static void scrub(char *msg)
{
    char *p;
    while ((p = strstr(msg, "<memory-@")) != NULL) {
        char *end = strchr(p, '>');
        if (!end)
            break;
        end++;
        if (*end == ':')
            end++;
        if (*end == ' ')
            end++;
        memmove(p, end, strlen(end) + 1);
    }
    for (p = msg; (p = strstr(p, " after ")) != NULL;) {
        char *d = p + 7, *q = d;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > d && strncmp(q, " ms", 3) == 0)
            memmove(p, q + 3, strlen(q + 3) + 1);
        else
            p++;
    }
}

/* The two wanted conditions in the form decide/conditions takes. */
static void as_conds(const hosted_conds_t *want, sched_time_t paused_since,
                     sched_time_t pending_since, decide_cond_t out[2])
{
    out[0] = (decide_cond_t){COND_PAUSED, want->paused.status, want->paused.reason,
                             want->paused.message, paused_since};
    out[1] = (decide_cond_t){COND_PENDING, want->pending.status, want->pending.reason,
                             want->pending.message, pending_since};
}

bool hosted_conds_match(const json_t *conditions, const hosted_conds_t *want)
{
    decide_cond_t w[2];
    as_conds(want, 0, 0, w);
    return decide_conditions_match(conditions, w, 2);
}

int hosted_patch(const json_t *conditions, const hosted_conds_t *want,
                 sched_time_t paused_since, sched_time_t pending_since,
                 const char *resource_version, json_t **out)
{
    decide_cond_t w[2];
    json_t *conds;

    *out = NULL;
    as_conds(want, paused_since, pending_since, w);
    if (decide_conditions_match(conditions, w, 2))
        return 0;
    conds = decide_conditions_merge(conditions, w, 2, NULL);
    if (conds)
        *out = decide_status_patch_doc(json_pack("{s:o}", "conditions", conds),
                                       resource_version);
    return *out ? 0 : HCP_ENOMEM;
}

void hosted__set_msg(char **slot, const char *fmt, ...)
{
    char buf[512];
    free(*slot);
    *slot = NULL;
    if (!fmt)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    *slot = strdup(buf); /* out of memory: no message, the reason stays */
}

double hosted__rnd01(hosted_t *p)
{
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return (double)((p->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* The state of entry e were it asked for want (NULL: nothing asked yet). A
 * pure reading of what is known; hosted__evaluate() and hosted_preview() share it. */
static void compute_status(const entry_t *e, const hosted_conds_t *want, hosted_status_t *st)
{
    const char *msg = NULL;

    memset(st, 0, sizeof(*st));
    st->writes = e->st.writes;
    st->reason = HOSTED_PENDING;
    if (e->secret_reason) {
        st->reason = e->secret_reason;
        msg = e->secret_msg;
    } else if (!e->connected && e->id_reason) { /* kept while the next set-up runs */
        st->reason = e->id_reason;
        msg = e->id_msg;
    } else if (!e->connected && e->need_enroll) {
        (void)hcp_errf(st->message, sizeof(st->message), 0,
                       "Setting up ServiceAccount %s/%s in the hosted cluster.",
                       HOSTED_SA_NAMESPACE, HOSTED_SA_NAME);
    } else if (!e->connected) {
        (void)hcp_errf(st->message, sizeof(st->message), 0, "Reading Secret %s/%s.", e->hcpns,
                       HOSTED_SECRET);
    } else if (e->api_reason) {
        st->reason = e->api_reason;
        msg = e->api_msg;
    } else if (!e->cv_read) {
        (void)hcp_errf(st->message, sizeof(st->message), 0,
                       "Connecting to the hosted API server %.300s.", e->cfg.server);
    } else if (e->cv_absent) {
        st->reason = HOSTED_CV_NOT_FOUND;
        (void)hcp_errf(st->message, sizeof(st->message), 0,
                       "ClusterVersion %s does not exist in the hosted cluster.", HOSTED_CV_NAME);
    } else if (want && hosted_conds_match(e->seen, want)) {
        st->ok = true;
        st->reason = HOSTED_PROJECTED;
        (void)hcp_errf(st->message, sizeof(st->message), 0,
                       "ClusterVersion %s carries ChangesPaused and ChangesPending.",
                       HOSTED_CV_NAME);
    } else if (e->write_reason) {
        st->reason = e->write_reason;
        msg = e->write_msg;
    } else if (!want) {
        msg = "No conditions decided yet.";
    } else {
        msg = e->p->leading ? "Updating ClusterVersion conditions."
                            : "Waiting for leadership to update ClusterVersion conditions.";
    }
    if (msg)
        (void)hcp_errf(st->message, sizeof(st->message), 0, "%s", msg);
    scrub(st->message);
}

/* Computes the entry's state from what is known and reports a change. */
void hosted__evaluate(entry_t *e)
{
    hosted_t *p = e->p;
    hosted_status_t st;
    hosted_conds_t want = {{e->paused.status, e->paused.reason, e->paused.message},
                           {e->pending.status, e->pending.reason, e->pending.message}};

    if (e->gone)
        return;
    compute_status(e, e->have_want ? &want : NULL, &st);
    if (st.ok == e->st.ok && e->st.reason && strcmp(st.reason, e->st.reason) == 0) {
        /* Messages of repeated failures differ in details (timings), so
         * only a new reason is news; the message is kept current. */
        e->st = st;
        return;
    }
    e->st = st;
    log_kv(st.ok ? 1 : LOG_INFO, "ClusterVersion projection", "namespace", e->ns, "name",
           e->name, "reason", st.reason, "message", st.message, NULL);
    if (p->opts.on_change)
        p->opts.on_change(e->ns, e->name, p->opts.ud);
}

/* ---- entries ---------------------------------------------------------------- */

static void want_free(want_cond_t *w)
{
    free(w->reason);
    free(w->message);
    w->reason = w->message = NULL;
}

/* Releases an entry: requests cancelled, timers stopped, memory freed. */
static void entry_release(entry_t *e)
{
    hosted_t *p = e->p;
    hosted__identity_stop(e);
    hosted__disconnect(e);
    kube_request_cancel(e->secret_req); /* no callback runs for it */
    e->secret_req = NULL;
    ev_timer_stop(p->loop, &e->secret_timer);
    want_free(&e->paused);
    want_free(&e->pending);
    free(e->secret_msg);
    free(e->id_msg);
    free(e->api_msg);
    free(e->write_msg);
    free(e->ns);
    free(e->name);
    free(e);
}

/* Releases every forgotten entry. */
static void release_zombies(hosted_t *p)
{
    hcp_link_t *n;

    while ((n = hcp_list_pop_front(&p->zombies)) != NULL)
        entry_release(hcp_list_entry(n, entry_t, zlink));
}

static void reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    hosted_t *p = w->data;
    (void)loop;
    (void)revents;
    release_zombies(p);
    hosted__pump(p); /* released checks freed their slots */
}

static entry_t *entry_new(hosted_t *p, const char *ns, const char *name, char *err,
                          size_t errlen)
{
    entry_t *e = NULL;
    int n = snprintf(NULL, 0, "%s-%s", ns, name);
    if (n < 0 || (size_t)n >= sizeof(e->hcpns)) {
        hcp_errf(err, errlen, HCP_EINVAL, "HostedCluster %s/%s: name too long", ns, name);
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (!e)
        goto nomem;
    e->ns = strdup(ns);
    e->name = strdup(name);
    if (!e->ns || !e->name)
        goto nomem;
    snprintf(e->hcpns, sizeof(e->hcpns), "%s-%s", ns, name);
    e->p = p;
    kube_backoff_init(&e->secret_backoff, p->opts.backoff_initial, p->opts.backoff_max);
    kube_backoff_init(&e->absent_backoff, p->opts.absent_retry,
                      p->opts.absent_retry > p->opts.backoff_max ? p->opts.absent_retry
                                                                 : p->opts.backoff_max);
    kube_backoff_init(&e->retry_backoff, p->opts.backoff_initial, p->opts.backoff_max);
    ev_init(&e->secret_timer, hosted__secret_timer_cb);
    e->secret_timer.data = e;
    ev_init(&e->tick, hosted__tick_cb);
    e->tick.data = e;
    ev_init(&e->admin_timer, hosted__admin_timer_cb);
    e->admin_timer.data = e;
    return e;
nomem:
    snprintf(err, errlen, "out of memory");
    if (e) {
        free(e->ns);
        free(e->name);
        free(e);
    }
    return NULL;
}

/* Copies a wanted condition; keeps `since` while the status is unchanged. */
static int want_set(want_cond_t *w, const hosted_cond_t *c, bool first, sched_time_t now)
{
    char *reason = strdup(c->reason ? c->reason : "");
    char *message = strdup(c->message ? c->message : "");
    if (!reason || !message) {
        free(reason);
        free(message);
        return HCP_ENOMEM;
    }
    if (first || w->status != c->status)
        w->since = now;
    w->status = c->status;
    free(w->reason);
    free(w->message);
    w->reason = reason;
    w->message = message;
    return 0;
}

static bool want_equal(const want_cond_t *w, const hosted_cond_t *c)
{
    return w->status == c->status && str_eq(w->reason, c->reason) &&
           str_eq(w->message, c->message);
}

/* ---- public shell ------------------------------------------------------------ */

/* Replaces an unset (<= 0) option by its default. */
static void or_default(double *v, double dflt)
{
    if (*v <= 0)
        *v = dflt;
}

int hosted_new(struct ev_loop *loop, kube_client *mgmt, const hosted_opts_t *opts,
               hosted_t **out, char *err, size_t errlen)
{
    hosted_t *p = NULL;
    kube_error ke;
    *out = NULL;
    if (!loop || !mgmt) {
        return hcp_errf(err, errlen, HCP_EINVAL, "project needs a loop and a client");
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        goto nomem;
    p->loop = loop;
    p->mgmt = mgmt;
    if (kube_http_init(&p->http, loop, &ke) < 0) {
        free(p);
        return hcp_errf(err, errlen, ke.code, "%s", ke.message);
    }
    if (opts)
        p->opts = *opts;
    or_default(&p->opts.recheck, 300);
    or_default(&p->opts.backoff_initial, 1);
    or_default(&p->opts.backoff_max, 120);
    if (p->opts.backoff_max < p->opts.backoff_initial)
        p->opts.backoff_max = p->opts.backoff_initial;
    or_default(&p->opts.absent_retry, 15);
    or_default(&p->opts.hosted_qps, 5);
    or_default(&p->opts.period, 120);
    or_default(&p->opts.hosted_timeout, 10);
    or_default(&p->opts.token_ttl, 3600);
    if (p->opts.max_in_flight <= 0)
        p->opts.max_in_flight = 16;
    if (p->opts.hosted_burst <= 0)
        p->opts.hosted_burst = 10;
    p->leading = p->opts.leading;
    /* A hosted API server is asked once a period: an idle connection to it
     * would not be reused before libcurl ages it out, so keep no more than
     * the checks in flight use. The management API's connections (one per
     * watch and per write in flight) are in the caller's kube_http, cached
     * apart: sharing one bound, they were closed after almost every write. */
    kube_http_max_connections(&p->http, p->opts.max_in_flight);
    hcp_list_init(&p->zombies);
    hcp_list_init(&p->retiring);
    if (kube_objmap_init(&p->entries, 16))
        goto nomem;
    p->rng = (uint64_t)(uintptr_t)p ^ (uint64_t)(ev_time() * 1e6) ^ 0x9E3779B97F4A7C15ull;
    if (p->rng == 0)
        p->rng = 1;
    ev_init(&p->reap, reap_cb);
    p->reap.data = p;
    *out = p;
    return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    if (p) {
        kube_objmap_free(&p->entries);
        kube_http_close(&p->http);
    }
    free(p);
    return HCP_ENOMEM;
}

void hosted_free(hosted_t *p)
{
    if (!p)
        return;
    ev_timer_stop(p->loop, &p->reap);
    size_t i;
    hcp_hnode_t *n, *next;
    HCP_HTAB_FOREACH_SAFE(&p->entries.tab, i, n, next) {
        entry_t *e = (entry_t *)n;
        e->gone = true;
        hcp_list_push_back(&p->zombies, &e->zlink);
    }
    release_zombies(p);
    hosted__retire_all(p);
    kube_objmap_free(&p->entries);
    kube_http_close(&p->http); /* after the clients: none of their transfers is left */
    free(p);
}

void hosted_set_leading(hosted_t *p, bool leading)
{
    if (p->leading == leading)
        return;
    p->leading = leading;
    /* on_change may forget entries (they stay allocated until the reaper
     * runs, with their link intact) or add some (no doubling meanwhile). */
    size_t i;
    hcp_hnode_t *n;
    p->entries.tab.frozen++;
    HCP_HTAB_FOREACH(&p->entries.tab, i, n) {
        if (leading)
            hosted__kick((entry_t *)n);
        hosted__evaluate((entry_t *)n);
    }
    p->entries.tab.frozen--;
}

int hosted_update(hosted_t *p, const char *ns, const char *name,
                  const hosted_conds_t *conds, sched_time_t now, char *err,
                  size_t errlen)
{
    if (!p || !ns || !name || !conds || !ns[0] || !name[0]) {
        return hcp_errf(err, errlen, HCP_EINVAL, "hosted_update: missing argument");
    }
    hcp_hnode_t **slot = kube_objmap_slot(&p->entries, 0, ns, name);
    entry_t *e = (entry_t *)*slot;
    bool created = false;
    if (!e) {
        e = entry_new(p, ns, name, err, errlen);
        if (!e)
            return HCP_ENOMEM;
        e->key = (kube_objkey_t){.ns = e->ns, .name = e->name};
        kube_objmap_insert(&p->entries, slot, &e->key);
        created = true;
        hosted__retire_cancel(p, ns, name); /* opted in again */
    }
    if (e->have_want && want_equal(&e->paused, &conds->paused) &&
        want_equal(&e->pending, &conds->pending))
        return 0;
    if (want_set(&e->paused, &conds->paused, !e->have_want, now) < 0 ||
        want_set(&e->pending, &conds->pending, !e->have_want, now) < 0) {
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    }
    e->have_want = true;
    e->seen_right = false;
    if (created)
        hosted__secret_fetch(e);
    hosted__kick(e);
    hosted__evaluate(e);
    return 0;
}

void hosted_forget(hosted_t *p, const char *ns, const char *name)
{
    if (!p || !ns || !name)
        return;
    hcp_hnode_t **slot = kube_objmap_slot(&p->entries, 0, ns, name);
    entry_t *e = (entry_t *)*slot;
    if (!e)
        return;
    kube_objmap_remove(&p->entries, slot);
    e->gone = true;
    kube_request_cancel(e->secret_req); /* safe from its own callback */
    e->secret_req = NULL;
    ev_timer_stop(p->loop, &e->secret_timer);
    ev_timer_stop(p->loop, &e->tick);
    hcp_list_push_back(&p->zombies, &e->zlink);
    if (!ev_is_active(&p->reap)) {
        ev_timer_set(&p->reap, 0., 0.);
        ev_timer_start(p->loop, &p->reap);
    }
}

int hosted_status(const hosted_t *p, const char *ns, const char *name,
                  hosted_status_t *st)
{
    if (!p || !ns || !name)
        return HCP_EINVAL;
    const entry_t *e = (const entry_t *)*kube_objmap_slot(&p->entries, 0, ns, name);
    if (!e)
        return HCP_EINVAL;
    *st = e->st;
    if (!st->reason) {
        st->reason = HOSTED_PENDING;
        snprintf(st->message, sizeof(st->message), "Starting.");
    }
    return 0;
}

int hosted_preview(const hosted_t *p, const char *ns, const char *name,
                   const hosted_conds_t *want, hosted_status_t *st)
{
    if (!p || !ns || !name || !want)
        return HCP_EINVAL;
    const entry_t *e = (const entry_t *)*kube_objmap_slot(&p->entries, 0, ns, name);
    if (!e)
        return HCP_EINVAL;
    compute_status(e, want, st);
    return 0;
}

const hosted_stats_t *hosted_stats(const hosted_t *p)
{
    return &p->stats;
}

