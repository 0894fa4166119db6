/* serve.c: /metrics and /calendar/, /healthz and /readyz. */
#include "serve.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "authz/authz.h"
#include "base/error.h"
#include "base/list.h"
#include "httpserver/httpserver.h"
#include "log/log.h"
#include "metrics/families.h"
#include "metrics/metrics.h"
#include "notify/send.h"
#include "policy/ics.h"
#include "policy/stanza.h"
#include "tlspair.h"

/* A request the gate holds while its reviews run. */
typedef struct held {
    http_pending *p;          /* the request */
    authz_check_t *check;     /* its reviews */
    struct serve *s;
    hcp_link_t link;          /* on serve's list */
} held_t;

struct serve {
    struct ev_loop *loop;
    serve_metrics_opts_t mopts;  /* strings borrowed from the flags */
    authz_t *authz;              /* NULL when --metrics-secure=false */
    hcp_link_t held;             /* requests waiting for their reviews */
    char *cert, *key;            /* owned: the metrics server's pair */
    ev_stat cert_watch, key_watch; /* the pair's files, when given */
    bool watching;
    ctl_controller_t *ctl;
    metrics_families_t *families; /* what /metrics renders */
    http_server metrics_srv, health_srv;
    bool metrics_on, health_on;
    bool draining;         /* stopping: /readyz answers 503 */
};

/* /metrics: gzip to a client that accepts it (Prometheus does, by
 * default), deflated as it is rendered, so that the answer of a fleet
 * never lies on the heap as text. */
static int metrics_handler(const http_request *req, http_response *resp, void *ud)
{
    serve_t *s = ud;
    bool gzip = http_accepts_coding(http_request_header(req, "Accept-Encoding"), "gzip");
    char *body;
    size_t len;
    if (metrics_families_render(s->families, gzip, &body, &len))
        return -1;
    http_response_take_body(resp, body, len);
    if (http_response_add_header(resp, "Vary", "Accept-Encoding") ||
        (gzip && http_response_add_header(resp, "Content-Encoding", "gzip")))
        return -1;
    return http_response_set_content_type(resp, METRICS_CONTENT_TYPE);
}

void serve_set_notify(serve_t *s, const notify_sender_t *n)
{
    if (s)
        metrics_families_set_notify(s->families, n);
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

    hcp_list_remove(&h->link);
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
        hcp_list_push_front(&s->held, &h->link);
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

    hcp_link_t *n, *next;

    HCP_LIST_FOREACH(n, next, &s->held) {
        held_t *h = hcp_list_entry(n, held_t, link);
        if (h->p == p) {
            hcp_list_remove(&h->link);
            authz_cancel(h->check);
            free(h);
            return;
        }
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
    hcp_list_init(&s->held);
    http_server_init(&s->metrics_srv, NULL);
    http_server_init(&s->health_srv, NULL);
    if ((rc = metrics_families_new(&s->families, ctl, client, adm, err, errlen)))
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
    metrics_families_free(s->families);
    free(s);
}
