/* serve.c: /metrics and /calendar/, /healthz and /readyz. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authz/authz.h"
#include "base/error.h"
#include "httpserver/httpserver.h"
#include "log/log.h"
#include "metrics/metrics.h"
#include "notify/send.h"
#include "policy/ics.h"
#include "policy/stanza.h"
#include "tlspair.h"

static const char *const object_labels[] = {"kind", "namespace", "object", "system", NULL};
static const char *const strategy_labels[] = {"kind", "namespace", "object", "system",
                                              "strategy", NULL};
static const char *const request_labels[] = {"verb", "code", NULL};
static const char *const policy_labels[] = {"namespace", "policy", NULL};
static const char *const admission_labels[] = {"result", NULL};
static const char *const unheld_labels[] = {"kind", "system", NULL};
static const char *const notify_labels[] = {"endpoint", "result", NULL};

enum { F_PENDING, F_ETA, F_REMAINING, F_LAST, F_STRATEGY, F_STANZA, F_REQUESTS, F_RESTARTS, F_RECONCILE,
       F_REASSERTS, F_WRITES, F_WRITE_ERRORS, F_LAST_WRITE, F_EVENTS, F_LEADER, F_POLICY_READY,
       F_HOSTED_WRITES, F_HOSTED_WRITE_ERRORS, F_HOSTED_REASSERTS, F_ADMISSION, F_UNHELD, F_GATE, F_NOTIFY, F_COUNT };

/* One object's values, copied out of the controller for one scrape. */
typedef struct row {
    char *kind, *ns, *name, *system; /* owned */
    const char *strategy, *stanza;   /* static (ctl_object_metrics_t says) */
    double v[4];                                 /* pending, eta, remaining, last */
} row_t;

/* Collector of the four per-object gauges; ud selects the value. */
typedef struct gauge_sel {
    struct serve *s;
    int index;
} gauge_sel_t;

/* Scalar counters and gauges read from the controller. */
typedef struct scalar_sel {
    struct serve *s;
    int which;
} scalar_sel_t;

/* A request the gate holds while its reviews run. */
typedef struct held {
    http_pending *p;          /* the request */
    authz_check_t *check;     /* its reviews */
    struct serve *s;
    struct held *next, *prev; /* serve's list */
} held_t;

struct serve {
    struct ev_loop *loop;
    serve_metrics_opts_t mopts;  /* strings borrowed from the flags */
    authz_t *authz;              /* NULL when --metrics-secure=false */
    held_t *held;                /* requests waiting for their reviews */
    char *cert, *key;            /* owned: the metrics server's pair */
    ev_stat cert_watch, key_watch; /* the pair's files, when given */
    bool watching;
    ctl_controller_t *ctl;
    kube_client *client;
    const adm_stats_t *adm; /* the webhooks' counters, NULL when off */
    const notify_sender_t *notify; /* the notifications, NULL when off */
    http_server metrics_srv, health_srv;
    bool metrics_on, health_on;
    metrics_registry reg;
    metrics_family fam[F_COUNT];
    gauge_sel_t sels[4];   /* collect_object's selectors, one per gauge */
    scalar_sel_t scalars[F_COUNT]; /* collect_scalar's selectors */
    row_t *rows;           /* the snapshot of the scrape in progress */
    size_t nrows, crows;
    bool oom;
    bool draining;         /* stopping: /readyz answers 503 */
};

static char *dup_str(const char *s)
{
    return strdup(s ? s : "");
}

static void take_row(const ctl_object_metrics_t *m, void *ud)
{
    serve_t *s = ud;
    if (s->oom)
        return;
    if (s->nrows == s->crows) {
        size_t n = s->crows ? s->crows * 2 : 64;
        row_t *r = realloc(s->rows, n * sizeof(*r));
        if (!r) {
            s->oom = true;
            return;
        }
        s->rows = r;
        s->crows = n;
    }
    row_t *r = &s->rows[s->nrows];
    r->kind = dup_str(m->kind);
    r->ns = dup_str(m->ns);
    r->name = dup_str(m->name);
    r->system = dup_str(m->system);
    r->strategy = m->strategy;
    r->stanza = m->stanza;
    r->v[0] = m->change_pending;
    r->v[1] = m->next_change_eta;
    r->v[2] = m->permissive_remaining;
    r->v[3] = m->last_change;
    s->nrows++;
    if (!r->kind || !r->ns || !r->name || !r->system)
        s->oom = true;
}

static void clear_rows(serve_t *s)
{
    for (size_t i = 0; i < s->nrows; i++) {
        free(s->rows[i].kind);
        free(s->rows[i].ns);
        free(s->rows[i].name);
        free(s->rows[i].system);
    }
    s->nrows = 0;
}


static int collect_object(metrics_emitter *e, void *ud)
{
    gauge_sel_t *g = ud;
    for (size_t i = 0; i < g->s->nrows; i++) {
        row_t *r = &g->s->rows[i];
        const char *vals[] = {r->kind, r->ns, r->name, r->system};
        if (metrics_emit(e, vals, r->v[g->index]))
            return -1;
    }
    return 0;
}

/* The enhancement's label values, one series each per object. */
static int collect_strategy(metrics_emitter *e, void *ud)
{
    static const char *const names[] = {"MaintenanceSchedule", "Permissive", "Restrictive"};
    serve_t *s = ud;
    for (size_t i = 0; i < s->nrows; i++) {
        row_t *r = &s->rows[i];
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            const char *vals[] = {r->kind, r->ns, r->name, r->system, names[k]};
            if (metrics_emit(e, vals, strcmp(r->strategy, names[k]) == 0))
                return -1;
        }
    }
    return 0;
}

/* The stanza as written: one series per object, value 1. */
static int collect_stanza(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    for (size_t i = 0; i < s->nrows; i++) {
        row_t *r = &s->rows[i];
        const char *vals[] = {r->kind, r->ns, r->name, r->system, r->stanza};
        if (metrics_emit(e, vals, 1))
            return -1;
    }
    return 0;
}

typedef struct policy_emit {
    metrics_emitter *e;
    int rc;
} policy_emit_t;

static void emit_policy(const ctl_policy_metrics_t *m, void *ud)
{
    policy_emit_t *x = ud;
    const char *vals[] = {m->ns, m->name};
    if (x->rc == 0 && metrics_emit(x->e, vals, m->ready))
        x->rc = -1;
}

static int collect_policies(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    policy_emit_t x = {e, 0};
    ctl_foreach_policy_metrics(s->ctl, emit_policy, &x);
    return x.rc;
}

static int collect_requests(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    size_t n;
    const kube_stat *st = kube_client_stats(s->client, &n);
    for (size_t i = 0; i < n; i++) {
        char code[16];
        snprintf(code, sizeof(code), "%d", st[i].code);
        const char *vals[] = {kube_verb_name(st[i].verb), code};
        if (metrics_emit(e, vals, (double)st[i].count))
            return -1;
    }
    return 0;
}

static int collect_admission(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    const char *names[] = {"allowed", "patched", "denied", "invalid", "failed"};
    adm_stats_t z = {0};
    const adm_stats_t *a = s->adm ? s->adm : &z;
    const uint64_t v[] = {a->allowed, a->patched, a->denied, a->invalid, a->failed};
    for (int i = 0; i < 5; i++) {
        const char *vals[] = {names[i]};
        if (metrics_emit(e, vals, (double)v[i]))
            return -1;
    }
    return 0;
}

/* The backstop's count: changes the webhooks did not hold, by system. */
static int collect_unheld(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    const char *hc[] = {"HostedCluster", "control-plane"}, *np[] = {"NodePool", "worker-nodes"};
    if (metrics_emit(e, hc, (double)st->unheld[0]) || metrics_emit(e, np, (double)st->unheld[1]))
        return -1;
    return 0;
}

/* Held changes that a failing health gate kept held, by system. */
static int collect_gate(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    const char *hc[] = {"HostedCluster", "control-plane"}, *np[] = {"NodePool", "worker-nodes"};
    if (metrics_emit(e, hc, (double)st->gate_holds[0]) ||
        metrics_emit(e, np, (double)st->gate_holds[1]))
        return -1;
    return 0;
}

/* Notifications by endpoint: delivered, attempts failed, dropped. */
static int collect_notify(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    const notify_sender_t *n = s->notify;
    for (size_t i = 0; n && i < n->cfg.n_endpoints; i++) {
        const notify_counts_t *c = &n->counts[i];
        const char *sent[] = {n->cfg.endpoints[i].name, "sent"};
        const char *failed[] = {n->cfg.endpoints[i].name, "failed"};
        const char *dropped[] = {n->cfg.endpoints[i].name, "dropped"};
        if (metrics_emit(e, sent, (double)c->sent) ||
            metrics_emit(e, failed, (double)c->failed) ||
            metrics_emit(e, dropped, (double)c->dropped))
            return -1;
    }
    return 0;
}

void serve_set_notify(serve_t *s, const notify_sender_t *n)
{
    if (s)
        s->notify = n;
}

static int collect_reconcile(metrics_emitter *e, void *ud)
{
    serve_t *s = ud;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    uint64_t cum[7], total = 0;
    for (int i = 0; i < 7; i++) {
        total += st->latency_buckets[i];
        cum[i] = total;
    }
    return metrics_emit_histogram(e, NULL, cum, total + st->latency_buckets[7],
                                  st->reconcile_seconds);
}

static int collect_scalar(metrics_emitter *e, void *ud)
{
    const scalar_sel_t *x = ud;
    serve_t *s = x->s;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    const hosted_stats_t *ps = ctl_get_hosted_stats(s->ctl);
    double v = 0;
    switch (x->which) {
    case F_RESTARTS: v = (double)ctl_watch_restarts(s->ctl); break;
    case F_REASSERTS: v = (double)st->reasserts; break;
    case F_WRITES: v = (double)st->writes; break;
    case F_WRITE_ERRORS: v = (double)st->write_errors; break;
    case F_LAST_WRITE: v = st->last_write_at; break;
    case F_EVENTS: v = (double)st->events; break;
    case F_LEADER: v = ctl_leading(s->ctl); break;
    case F_HOSTED_WRITES: v = (double)ps->writes; break;
    case F_HOSTED_WRITE_ERRORS: v = (double)ps->write_errors; break;
    case F_HOSTED_REASSERTS: v = (double)ps->reasserts; break;
    }
    return metrics_emit(e, NULL, v);
}

static int metrics_handler(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    serve_t *s = ud;
    metrics_buf b;
    size_t len;
    s->oom = false;
    ctl_foreach_object_metrics(s->ctl, take_row, s);
    metrics_buf_init(&b);
    int rc = s->oom ? -1 : metrics_registry_render(&s->reg, &b);
    clear_rows(s);
    if (rc) {
        metrics_buf_free(&b);
        return -1;
    }
    char *body = metrics_buf_take(&b, &len);
    http_response_take_body(resp, body, len);
    return http_response_set_content_type(resp, METRICS_CONTENT_TYPE);
}

/* /calendar/<namespace>.ics and /calendar/<namespace>/<hostedcluster>.ics
 * (ctl_calendar_render()). */
static int calendar_handler(const http_request *req, http_response *resp, void *ud)
{
    ics_t c = {0};
    int status = ctl_calendar_render(ud, req->path, &c);

    if (status == 500) {
        ics_free(&c);
        return -1;
    }
    if (status == 404) {
        ics_free(&c);
        resp->status = 404;
        return http_response_printf(resp, "no calendar at %.300s (use /calendar/<namespace>.ics "
                                          "or /calendar/<namespace>/<hostedcluster>.ics)\n",
                                    req->path);
    }
    http_response_take_body(resp, c.buf, c.len);
    return http_response_set_content_type(resp, "text/calendar; charset=utf-8");
}

static int healthz(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    (void)ud;
    return http_response_printf(resp, "ok\n");
}

static int readyz(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    serve_t *s = ud;
    if (s->draining) {
        resp->status = 503;
        return http_response_printf(resp, "shutting down\n");
    }
    if (ctl_synced(s->ctl))
        return http_response_printf(resp, "ok\n");
    resp->status = 503;
    return http_response_printf(resp, "caches are not synced yet\n");
}

/* The four per-object gauges (DESIGN.md 3.8). */
static int register_objects(serve_t *s)
{
    static const struct {
        const char *name, *help;
    } objs[4] = {
        {"change_management_change_pending",
         "0: no change pending; 1: pending and being initiated; 2: pending and blocked"},
        {"change_management_next_change_eta",
         "Seconds until changes may start: -2 error or not ready, -1 paused indefinitely, 0 "
         "permitted now"},
        {"change_management_permissive_remaining",
         "Seconds changes stay permitted: -2 error, -1 permitted indefinitely, 0 not permitted"},
        {"change_management_last_change",
         "Seconds since changes were last permitted: -1 unknown, 0 permitted now"},
    };
    for (int i = 0; i < 4; i++) {
        s->sels[i] = (gauge_sel_t){s, i};
        metrics_desc d = {.name = objs[i].name, .help = objs[i].help, .type = METRICS_GAUGE,
                          .labels = object_labels, .collect = collect_object,
                          .collect_ud = &s->sels[i]};
        if (metrics_register(&s->reg, &s->fam[i], &d))
            return -1;
    }
    return 0;
}

static int register_families(serve_t *s, char *err, size_t errlen)
{
    if (register_objects(s))
        goto fail;
    const struct {
        int which;
        metrics_desc d;
    } fams[] = {
        {F_STRATEGY,
         {.name = "change_management_strategy_enabled",
          .help = "1 for the change management strategy in force (MaintenanceSchedule, "
                  "Permissive or Restrictive, after resolving the stanza and its policy), else 0",
          .type = METRICS_GAUGE, .labels = strategy_labels, .collect = collect_strategy,
          .collect_ud = s}},
        {F_STANZA,
         {.name = "change_management_stanza_strategy",
          .help = "1, labelled with the changeManagement stanza's strategy as written (None "
                  "without a stanza, Invalid when it does not parse)",
          .type = METRICS_GAUGE, .labels = strategy_labels, .collect = collect_stanza,
          .collect_ud = s}},
        {F_POLICY_READY,
         {.name = "change_management_policy_ready",
          .help = "1 when the policy is valid (its Ready condition is True), else 0",
          .type = METRICS_GAUGE, .labels = policy_labels, .collect = collect_policies,
          .collect_ud = s}},
        {F_REQUESTS,
         {.name = "hcp_controller_api_requests_total",
          .help = "Kubernetes API requests by verb and HTTP status (0: no answer)",
          .type = METRICS_COUNTER, .labels = request_labels, .collect = collect_requests,
          .collect_ud = s}},
        {F_ADMISSION,
         {.name = "hcp_controller_admission_requests_total",
          .help = "Admission requests by result: allowed, patched (a change held), denied, "
                  "invalid (not an AdmissionReview), failed (answered by the failure policy)",
          .type = METRICS_COUNTER, .labels = admission_labels, .collect = collect_admission,
          .collect_ud = s}},
        {F_UNHELD,
         {.name = "change_management_unheld_changes_total",
          .help = "Material changes that started while changes were restricted, not held at "
                  "admission (no webhook was called), caught by the watch",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_unheld,
          .collect_ud = s}},
        {F_GATE,
         {.name = "change_management_health_gate_holds_total",
          .help = "Held changes a failing health gate kept held inside a permitted window, "
                  "once per failing spell",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_gate,
          .collect_ud = s}},
        {F_NOTIFY,
         {.name = "hcp_controller_notifications_total",
          .help = "Notification deliveries by endpoint and result: sent (a 2xx answer), failed "
                  "(an attempt that is tried again), dropped (the queue was full)",
          .type = METRICS_COUNTER, .labels = notify_labels, .collect = collect_notify,
          .collect_ud = s}},
        {F_RECONCILE,
         {.name = "hcp_controller_reconcile_duration_seconds",
          .help = "Time spent deciding one object", .type = METRICS_HISTOGRAM,
          .buckets = ctl_latency_bounds, .nbuckets = 7, .collect = collect_reconcile,
          .collect_ud = s}},
    };
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
        if (metrics_register(&s->reg, &s->fam[fams[i].which], &fams[i].d))
            goto fail;
    static const struct {
        int which;
        const char *name, *help;
        metrics_type type;
    } sc[] = {
        {F_RESTARTS, "hcp_controller_watch_restarts_total",
         "Watch streams restarted after errors, silence or 410 Gone", METRICS_COUNTER},
        {F_REASSERTS, "hcp_controller_pause_reassertions_total",
         "Pauses re-asserted after another writer removed them", METRICS_COUNTER},
        {F_WRITES, "hcp_controller_writes_total", "Patches and creates sent", METRICS_COUNTER},
        {F_WRITE_ERRORS, "hcp_controller_write_errors_total", "Writes that failed",
         METRICS_COUNTER},
        {F_LAST_WRITE, "hcp_controller_last_write_timestamp_seconds",
         "Unix time the API server last acknowledged a write (0 before the first)",
         METRICS_GAUGE},
        {F_EVENTS, "hcp_controller_events_total", "Kubernetes Events created", METRICS_COUNTER},
        {F_LEADER, "hcp_controller_leader", "1 while this replica is the writer",
         METRICS_GAUGE},
        {F_HOSTED_WRITES, "hcp_controller_hosted_clusterversion_writes_total",
         "Status patches sent to hosted clusters' ClusterVersion", METRICS_COUNTER},
        {F_HOSTED_WRITE_ERRORS, "hcp_controller_hosted_clusterversion_write_errors_total",
         "Status patches to hosted clusters' ClusterVersion that failed", METRICS_COUNTER},
        {F_HOSTED_REASSERTS, "hcp_controller_hosted_condition_reassertions_total",
         "Hosted ClusterVersion conditions restored after another writer changed them",
         METRICS_COUNTER},
    };
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
        s->scalars[sc[i].which] = (scalar_sel_t){s, sc[i].which};
        metrics_desc d = {.name = sc[i].name, .help = sc[i].help, .type = sc[i].type,
                          .collect = collect_scalar, .collect_ud = &s->scalars[sc[i].which]};
        if (metrics_register(&s->reg, &s->fam[sc[i].which], &d))
            goto fail;
    }
    return 0;
fail:
    return hcp_errf(err, errlen, HCP_EINVAL, "metrics: %s", s->reg.err);
}


/* ---- the metrics server's TLS and access checks ----------------------------- */

/* Where the metrics server's pair comes from. */
static tls_files_t metrics_files(const serve_metrics_opts_t *o)
{
    return (tls_files_t){.what = "metrics", .cert_flag = "--metrics-cert-file",
                         .cert_file = o->cert_file, .key_flag = "--metrics-key-file",
                         .key_file = o->key_file};
}

/* The pair's files changed (a rotated Secret): serve the new pair from the
 * next handshake on; a pair that does not load leaves the old one served. */
static void on_metrics_pair(struct ev_loop *loop, ev_stat *st, int revents)
{
    serve_t *s = st->data;
    tls_files_t f = metrics_files(&s->mopts);

    (void)loop;
    (void)revents;
    tls_pair_renew(&f, &s->metrics_srv, &s->cert, &s->key);
}

static void unlink_held(held_t *h)
{
    serve_t *s = h->s;

    if (h->prev)
        h->prev->next = h->next;
    else
        s->held = h->next;
    if (h->next)
        h->next->prev = h->prev;
}

/* The status a verdict is answered with (controller-runtime's: 401, 403;
 * an API server that cannot review: 503, to be tried again). */
static int verdict_status(authz_verdict v)
{
    switch (v) {
    case AUTHZ_ALLOWED: return 200;
    case AUTHZ_UNAUTHENTICATED: return 401;
    case AUTHZ_FORBIDDEN: return 403;
    case AUTHZ_BUSY: return 429;
    default: return 503;
    }
}

static void on_reviewed(authz_verdict v, const char *reason, void *ud)
{
    held_t *h = ud;
    char body[320];

    unlink_held(h);
    if (v == AUTHZ_ALLOWED) {
        http_pending_pass(h->p);
    } else {
        snprintf(body, sizeof(body), "%d: %.290s\n", verdict_status(v), reason);
        http_pending_answer(h->p, verdict_status(v), body,
                            v == AUTHZ_UNAUTHENTICATED ? "WWW-Authenticate" : NULL,
                            "Bearer realm=\"hcp-controller\"");
    }
    free(h);
}

/* The bearer token of an Authorization header, or NULL. */
static const char *bearer(const char *auth)
{
    if (auth == NULL || strncasecmp(auth, "Bearer ", 7) != 0)
        return NULL;
    auth += 7;
    while (*auth == ' ')
        auth++;
    return *auth ? auth : NULL;
}

/*
 * Every request to /metrics and /calendar/ passes here first: the caller's
 * bearer token must be accepted by a TokenReview, and a SubjectAccessReview
 * must allow "get" on the non-resource URL /metrics, or "get" on
 * hostedclusters (hypershift.openshift.io) in the calendar's namespace (and
 * of that name, for one HostedCluster's feed).
 */
static http_gate_verdict gate(const http_request *req, http_response *resp, http_pending *p,
                              void *ud)
{
    serve_t *s = ud;
    char ns[CTL_CALENDAR_NAMELEN], hc[CTL_CALENDAR_NAMELEN], why[256];
    authz_attrs a = {.verb = "get"};
    authz_check_t *c = NULL;
    authz_verdict v;
    held_t *h;

    if (strcmp(req->path, "/metrics") == 0) {
        a.path = "/metrics";
    } else if (ctl_calendar_path(req->path, ns, hc)) {
        a.group = "hypershift.openshift.io";
        a.resource = "hostedclusters";
        a.ns = ns;
        a.name = hc;
    } else {
        resp->status = 404;
        http_response_printf(resp, "no calendar at %.300s (use /calendar/<namespace>.ics "
                                   "or /calendar/<namespace>/<hostedcluster>.ics)\n",
                             req->path);
        return HTTP_GATE_ANSWER;
    }
    h = calloc(1, sizeof(*h));
    if (!h) {
        resp->status = 503;
        http_response_printf(resp, "503: out of memory\n");
        return HTTP_GATE_ANSWER;
    }
    v = authz_check(s->authz, bearer(http_request_header(req, "Authorization")), &a, on_reviewed,
                    h, &c, why, sizeof(why));
    if (v == AUTHZ_PENDING) {
        h->p = p;
        h->check = c;
        h->s = s;
        h->next = s->held;
        if (s->held)
            s->held->prev = h;
        s->held = h;
        return HTTP_GATE_WAIT;
    }
    free(h);
    if (v == AUTHZ_ALLOWED)
        return HTTP_GATE_PASS;
    resp->status = verdict_status(v);
    http_response_printf(resp, "%d: %s\n", resp->status, why);
    if (v == AUTHZ_UNAUTHENTICATED)
        http_response_add_header(resp, "WWW-Authenticate", "Bearer realm=\"hcp-controller\"");
    if (v == AUTHZ_BUSY)
        http_response_add_header(resp, "Retry-After", "1");
    return HTTP_GATE_ANSWER;
}

/* The server stops with requests held: their reviews are abandoned. */
static void gate_cancel(http_pending *p, void *ud)
{
    serve_t *s = ud;

    for (held_t *h = s->held; h; h = h->next)
        if (h->p == p) {
            unlink_held(h);
            authz_cancel(h->check);
            free(h);
            return;
        }
}

/* TLS and the access checks of the metrics server (--metrics-secure). */
static int secure_metrics(serve_t *s, kube_client *client, char *err, size_t errlen)
{
    const serve_metrics_opts_t *o = &s->mopts;
    int rc;

    if ((o->cert_file == NULL) != (o->key_file == NULL))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--metrics-cert-file and --metrics-key-file go together");
    if (o->cert_file) {
        tls_files_t files = metrics_files(o);
        if ((rc = tls_pair_read(&files, &s->cert, &s->key, err, errlen)))
            return rc;
        ev_stat_init(&s->cert_watch, on_metrics_pair, o->cert_file, 1.0);
        ev_stat_init(&s->key_watch, on_metrics_pair, o->key_file, 1.0);
        s->cert_watch.data = s->key_watch.data = s;
        ev_stat_start(s->loop, &s->cert_watch);
        ev_stat_start(s->loop, &s->key_watch);
        s->watching = true;
    } else if ((rc = http_self_signed("hcp-controller-metrics", &s->cert, &s->key, err,
                                      errlen))) {
        return rc;
    }
    if (!(s->authz = authz_new(client, o->review_ttl, NULL)))
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    if ((rc = http_server_set_tls(&s->metrics_srv, s->cert, s->key)) ||
        (rc = http_server_set_gate(&s->metrics_srv, gate, gate_cancel, s)))
        return hcp_errf(err, errlen, rc, "metrics server: %s", hcp_strerror(rc));
    return 0;
}

static bool enabled(const char *addr)
{
    return addr && *addr && strcmp(addr, "0") != 0;
}

int serve_start(serve_t **out, struct ev_loop *loop, ctl_controller_t *ctl, kube_client *client,
                const adm_stats_t *adm, const char *metrics_addr, const serve_metrics_opts_t *mopts,
                const char *health_addr, char *err, size_t errlen)
{
    serve_t *s = calloc(1, sizeof(*s));
    int rc;
    if (!s)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    s->loop = loop;
    s->ctl = ctl;
    s->client = client;
    s->adm = adm;
    metrics_registry_init(&s->reg);
    http_server_init(&s->metrics_srv, NULL);
    http_server_init(&s->health_srv, NULL);
    if ((rc = register_families(s, err, errlen)))
        goto fail;
    if (mopts)
        s->mopts = *mopts;
    if (enabled(metrics_addr)) {
        char e[200];
        if (s->mopts.secure && (rc = secure_metrics(s, client, err, errlen)))
            goto fail;
        if (http_server_route(&s->metrics_srv, "GET", "/metrics", metrics_handler, s) ||
            http_server_route(&s->metrics_srv, "GET", "/calendar/*", calendar_handler, ctl) ||
            http_server_start(&s->metrics_srv, loop, metrics_addr, e, sizeof(e))) {
            rc = hcp_errf(err, errlen, HCP_ELISTEN, "metrics server on %s: %s", metrics_addr, e);
            goto fail;
        }
        s->metrics_on = true;
    }
    if (enabled(health_addr)) {
        char e[200];
        if (http_server_route(&s->health_srv, "GET", "/healthz", healthz, s) ||
            http_server_route(&s->health_srv, "GET", "/readyz", readyz, s) ||
            http_server_start(&s->health_srv, loop, health_addr, e, sizeof(e))) {
            rc = hcp_errf(err, errlen, HCP_ELISTEN, "health probe server on %s: %s", health_addr,
                          e);
            goto fail;
        }
        s->health_on = true;
    }
    *out = s;
    return 0;
fail:
    serve_stop(s);
    return rc;
}

void serve_drain(serve_t *s)
{
    if (s)
        s->draining = true;
}

void serve_stop(serve_t *s)
{
    if (!s)
        return;
    http_server_stop(&s->metrics_srv); /* abandons the held requests' reviews */
    http_server_stop(&s->health_srv);
    if (s->watching) {
        ev_stat_stop(s->loop, &s->cert_watch);
        ev_stat_stop(s->loop, &s->key_watch);
    }
    authz_free(s->authz);
    free(s->cert);
    free(s->key);
    metrics_registry_free(&s->reg);
    clear_rows(s);
    free(s->rows);
    free(s);
}
