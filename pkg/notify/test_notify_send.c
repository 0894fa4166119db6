/* test_notify_send.c: the sender against a real HTTP server on the same
 * loop: a 5xx is tried again after the backoff and then delivered, the
 * bearer token is sent, a follower sends nothing, an endpoint nobody
 * listens on is counted failed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "httpserver/httpserver.h"
#include "notify/send.h"

typedef struct recv {
    int fail_first;   /* answers 503 to this many POSTs first */
    int posts;        /* POSTs seen */
    int ok;           /* POSTs answered 200 */
    char auth[128];
    char ctype[128];
    char body[4096];
} recv_t;

static int on_post(const http_request *req, http_response *resp, void *ud)
{
    recv_t *r = ud;
    const char *a = http_request_header(req, "Authorization");
    const char *ct = http_request_header(req, "Content-Type");

    r->posts++;
    snprintf(r->auth, sizeof(r->auth), "%s", a ? a : "");
    snprintf(r->ctype, sizeof(r->ctype), "%s", ct ? ct : "");
    snprintf(r->body, sizeof(r->body), "%s", req->body);
    if (r->posts <= r->fail_first) {
        resp->status = 503;
        return 0;
    }
    r->ok++;
    resp->status = 200;
    return 0;
}

typedef struct waiter {
    notify_sender_t *s;
    uint64_t want_sent, want_failed;
} waiter_t;

static void on_check(struct ev_loop *loop, ev_timer *w, int revents)
{
    waiter_t *x = w->data;
    (void)revents;
    if (x->s->counts[0].sent >= x->want_sent && x->s->counts[0].failed >= x->want_failed)
        ev_break(loop, EVBREAK_ALL);
}

static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* Runs loop until the counts reach the wanted ones or secs pass. */
static void run_until(struct ev_loop *loop, notify_sender_t *s, uint64_t sent, uint64_t failed,
                      double secs)
{
    waiter_t x = {s, sent, failed};
    ev_timer check, deadline;
    ev_timer_init(&check, on_check, 0.01, 0.01);
    check.data = &x;
    ev_timer_init(&deadline, on_deadline, secs, 0.);
    ev_timer_start(loop, &check);
    ev_timer_start(loop, &deadline);
    ev_run(loop, 0);
    ev_timer_stop(loop, &check);
    ev_timer_stop(loop, &deadline);
}

static const notify_event_t held = {
    .step = NOTIFY_HELD, .kind = "HostedCluster", .ns = "clusters", .name = "prod",
    .uid = "0b8c8f7e-1", .window = 1772841600, .at = 1772830000,
    .request = SCHED_NEG_INF, .change = "release quay.io/x:4.17.1", .until = 1772841600,
    .detail = NULL};

static void config(notify_config_t *cfg, int port, const char *token_file)
{
    notify_config_default(cfg);
    cfg->n_endpoints = 1;
    snprintf(cfg->endpoints[0].name, NOTIFY_NAMELEN, "ops");
    snprintf(cfg->endpoints[0].url, NOTIFY_URLLEN, "http://127.0.0.1:%d/hook", port);
    cfg->endpoints[0].format = NOTIFY_CLOUDEVENTS;
    snprintf(cfg->endpoints[0].token_file, NOTIFY_PATHLEN, "%s", token_file ? token_file : "");
}

/* A 503 is tried again after the first backoff and then delivered; the
 * body is the CloudEvent and the token goes as a bearer token. A follower
 * queues nothing. */
static void test_retry_then_delivered(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    http_server srv;
    kube_http http;
    kube_error ke;
    notify_sender_t s;
    notify_config_t cfg;
    recv_t r = {.fail_first = 1};
    char err[200], tok[] = "/tmp/test_notify_send_XXXXXX";
    int fd = mkstemp(tok);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\n", 7), 7);
    close(fd);
    http_server_init(&srv, NULL);
    assert_int_equal(http_server_route(&srv, "POST", "/hook", on_post, &r), 0);
    assert_int_equal(http_server_start(&srv, loop, "127.0.0.1:0", err, sizeof(err)), 0);
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    config(&cfg, http_server_port(&srv), tok);
    assert_int_equal(notify_sender_init(&s, loop, &http, &cfg), 0);

    notify_sender_post(&s, &held); /* not leading: nothing queued */
    run_until(loop, &s, 1, 0, 0.3);
    assert_int_equal(r.posts, 0);
    assert_int_equal(s.q.len, 0);

    notify_sender_lead(&s, true);
    notify_sender_post(&s, &held);
    run_until(loop, &s, 1, 1, 5.0);
    assert_int_equal(r.posts, 2);
    assert_int_equal(r.ok, 1);
    assert_int_equal((int)s.counts[0].failed, 1);
    assert_int_equal((int)s.counts[0].sent, 1);
    assert_int_equal(s.q.len, 0);
    assert_string_equal(r.auth, "Bearer s3cret");
    assert_string_equal(r.ctype, "application/cloudevents+json");
    assert_non_null(strstr(r.body, "\"specversion\":\"1.0\""));
    assert_non_null(strstr(r.body, "\"type\":\"io.openshift.hypershift.changemanagement.held.v1\""));
    assert_non_null(strstr(r.body, "\"name\":\"prod\""));

    notify_sender_free(&s);
    kube_http_close(&http);
    http_server_stop(&srv);
    ev_loop_destroy(loop);
    unlink(tok);
}

/* Nobody listens: the attempt fails, is counted, and stays queued. */
static void test_refused_stays_queued(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    http_server srv;
    kube_http http;
    kube_error ke;
    notify_sender_t s;
    notify_config_t cfg;
    char err[200];
    int port;

    /* A port that was just free. */
    http_server_init(&srv, NULL);
    assert_int_equal(http_server_start(&srv, loop, "127.0.0.1:0", err, sizeof(err)), 0);
    port = http_server_port(&srv);
    http_server_stop(&srv);
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    config(&cfg, port, NULL);
    assert_int_equal(notify_sender_init(&s, loop, &http, &cfg), 0);
    notify_sender_lead(&s, true);
    notify_sender_post(&s, &held);
    run_until(loop, &s, 0, 1, 5.0);
    assert_int_equal((int)s.counts[0].failed, 1);
    assert_int_equal((int)s.counts[0].sent, 0);
    assert_int_equal(s.q.len, 1);
    notify_sender_free(&s);
    kube_http_close(&http);
    ev_loop_destroy(loop);
}

typedef struct told {
    int delivered, failing;
    notify_due_t d;
    char obj[200];
} told_t;

static void on_delivered(const char *kind, const char *ns, const char *name,
                         const notify_due_t *d, void *ud)
{
    told_t *t = ud;
    t->delivered++;
    t->d = *d;
    snprintf(t->obj, sizeof(t->obj), "%s/%s/%s", kind, ns, name);
}

static void on_failing(const char *kind, const char *ns, const char *name, const char *endpoint,
                       const char *why, void *ud)
{
    (void)kind, (void)ns, (void)name, (void)endpoint, (void)why;
    ((told_t *)ud)->failing++;
}

/* Two endpoints, the second answering 503 once: the step is told delivered
 * once, only after both took it (a step posted again meanwhile is not told
 * twice). */
static void test_delivered_after_every_endpoint(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    http_server srv;
    kube_http http;
    kube_error ke;
    notify_sender_t s;
    notify_config_t cfg;
    recv_t r1 = {0}, r2 = {.fail_first = 1};
    told_t t = {0};
    char err[200];
    notify_due_t d = {.step = NOTIFY_HELD, .window = 1772841600, .until = 1772841600,
                      .request = SCHED_NEG_INF};

    http_server_init(&srv, NULL);
    assert_int_equal(http_server_route(&srv, "POST", "/hook", on_post, &r1), 0);
    assert_int_equal(http_server_route(&srv, "POST", "/hook2", on_post, &r2), 0);
    assert_int_equal(http_server_start(&srv, loop, "127.0.0.1:0", err, sizeof(err)), 0);
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    config(&cfg, http_server_port(&srv), NULL);
    cfg.endpoints[1] = cfg.endpoints[0];
    snprintf(cfg.endpoints[1].name, NOTIFY_NAMELEN, "ops2");
    snprintf(cfg.endpoints[1].url, NOTIFY_URLLEN, "http://127.0.0.1:%d/hook2",
             http_server_port(&srv));
    cfg.endpoints[1].format = NOTIFY_SLACK;
    cfg.n_endpoints = 2;
    assert_int_equal(notify_sender_init(&s, loop, &http, &cfg), 0);
    notify_sender_callbacks(&s, on_delivered, on_failing, &t);
    notify_sender_lead(&s, true);
    notify_sender_post_due(&s, &held, &d);
    run_until(loop, &s, 1, 0, 5.0);
    assert_int_equal(r1.ok, 1);
    assert_int_equal(t.delivered, 0); /* the second endpoint has not taken it */
    notify_sender_post_due(&s, &held, &d); /* still queued for ops2: not twice */
    run_until(loop, &s, 2, 0, 0.3);
    for (int i = 0; i < 40 && t.delivered == 0; i++)
        run_until(loop, &s, 99, 0, 0.1);
    assert_int_equal(r2.ok, 1);
    assert_int_equal(t.delivered, 1);
    assert_int_equal(t.d.step, NOTIFY_HELD);
    assert_true(t.d.window == 1772841600);
    assert_string_equal(t.obj, "HostedCluster/clusters/prod");
    assert_int_equal(t.failing, 0);
    assert_int_equal((int)s.n_pending, 0);
    notify_sender_free(&s);
    kube_http_close(&http);
    http_server_stop(&srv);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_retry_then_delivered),
        cmocka_unit_test(test_refused_stays_queued),
        cmocka_unit_test(test_delivered_after_every_endpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
