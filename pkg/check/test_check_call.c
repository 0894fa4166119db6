/* test_check_call.c: the runner against a real HTTP server on the same
 * loop: a refusal holds and names the answer, the owner is told at each
 * answer and again when the backoff passed, a 2xx then passes; the
 * CloudEvent and the bearer token are sent; a follower asks nothing; a
 * check that never answers is bounded by its timeout; another change of
 * the object forgets the answers about the first. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check/call.h"
#include "httpserver/httpserver.h"

typedef struct recv {
    int refuse_first; /* answers 503 "change freeze" to this many POSTs first */
    int posts;
    char auth[128], ctype[128], body[4096];
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
    resp->status = r->posts <= r->refuse_first ? 503 : 200;
    const char *text = r->posts <= r->refuse_first ? "change freeze until Monday\nmore" : "ok";
    return http_response_set_body(resp, text, strlen(text));
}

typedef struct told {
    int n;
    char obj[200];
} told_t;

static void on_changed(const char *kind, const char *ns, const char *name, void *ud)
{
    told_t *t = ud;
    t->n++;
    snprintf(t->obj, sizeof(t->obj), "%s/%s/%s", kind, ns, name);
}

static void on_deadline(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w, (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* What a run waits for: the owner told want times in all (t), or check 0
 * of r with want calls unanswered (r). */
typedef struct waiter {
    const told_t *t;
    const check_runner_t *r;
    uint64_t want;
} waiter_t;

static void on_poll(struct ev_loop *loop, ev_timer *w, int revents)
{
    const waiter_t *x = w->data;
    (void)revents;
    if ((x->t && (uint64_t)x->t->n >= x->want) ||
        (x->r && x->r->counts[0].unanswered >= x->want))
        ev_break(loop, EVBREAK_ALL);
}

/* Runs loop until x is met, or secs pass; returns the seconds it took. */
static double run_for(struct ev_loop *loop, waiter_t x, double secs)
{
    ev_timer poll, deadline;
    ev_now_update(loop);
    double t0 = ev_now(loop);
    ev_timer_init(&poll, on_poll, 0.005, 0.005);
    poll.data = &x;
    ev_timer_init(&deadline, on_deadline, secs, 0.);
    ev_timer_start(loop, &poll);
    ev_timer_start(loop, &deadline);
    ev_run(loop, 0);
    ev_timer_stop(loop, &poll);
    ev_timer_stop(loop, &deadline);
    ev_now_update(loop);
    return ev_now(loop) - t0;
}

static double run_until(struct ev_loop *loop, const told_t *t, int want, double secs)
{
    return run_for(loop, (waiter_t){t, NULL, (uint64_t)want}, secs);
}

static double run_until_unanswered(struct ev_loop *loop, const check_runner_t *r, uint64_t want,
                                   double secs)
{
    return run_for(loop, (waiter_t){NULL, r, want}, secs);
}

static const notify_event_t pre = {
    .step = NOTIFY_PRE_START, .kind = "HostedCluster", .ns = "clusters", .name = "prod",
    .uid = "0b8c8f7e-1", .window = 1772841600, .at = 1772841000,
    .request = SCHED_NEG_INF, .change = "release quay.io/x:4.17.1", .until = 1772841600};

static void config(check_config_t *cfg, const char *url, const char *token_file, int timeout)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->n = 1;
    snprintf(cfg->checks[0].name, CHECK_NAMELEN, "cab");
    snprintf(cfg->checks[0].url, CHECK_URLLEN, "%s", url);
    snprintf(cfg->checks[0].token_file, CHECK_PATHLEN, "%s", token_file ? token_file : "");
    cfg->checks[0].timeout = timeout;
    cfg->checks[0].systems = CHECK_CONTROL_PLANE | CHECK_WORKER_NODES;
    cfg->checks[0].steps = CHECK_PRE_START;
    cfg->checks[0].lead = CHECK_DEFAULT_LEAD;
}

static void test_refused_then_allowed(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    http_server srv;
    kube_http http;
    kube_error ke;
    check_runner_t r;
    check_config_t cfg;
    recv_t rv = {.refuse_first = 1};
    told_t t = {0};
    char err[200], why[300], url[100], tok[] = "/tmp/test_check_call_XXXXXX";
    int fd = mkstemp(tok);
    uint64_t k = check_change_key(pre.change, pre.window);

    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\n", 7), 7);
    close(fd);
    http_server_init(&srv, NULL);
    assert_int_equal(http_server_route(&srv, "POST", "/check", on_post, &rv), 0);
    assert_int_equal(http_server_start(&srv, loop, "127.0.0.1:0", err, sizeof(err)), 0);
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/check", http_server_port(&srv));
    config(&cfg, url, tok, 5);
    check_runner_init(&r, loop, &http, &cfg, on_changed, &t);

    /* a follower asks nothing, and knows nothing: the change waits */
    check_runner_ask(&r, pre.uid, k, CHECK_CONTROL_PLANE, &pre);
    run_until(loop, &t, 1, 0.3);
    assert_int_equal(rv.posts, 0);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_CONTROL_PLANE, why, sizeof(why)),
                     CHECK_WAIT);
    assert_int_equal(check_runner_verdict(NULL, pre.uid, k, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_NONE);

    check_runner_lead(&r, true);
    check_runner_ask(&r, pre.uid, k, CHECK_CONTROL_PLANE, &pre);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_CONTROL_PLANE, why, sizeof(why)),
                     CHECK_WAIT);
    run_until(loop, &t, 1, 5.0);
    assert_int_equal(rv.posts, 1);
    assert_int_equal(t.n, 1); /* told at the answer */
    assert_string_equal(t.obj, "HostedCluster/clusters/prod");
    assert_string_equal(rv.auth, "Bearer s3cret");
    assert_string_equal(rv.ctype, "application/cloudevents+json");
    assert_non_null(strstr(rv.body, "\"type\":\"io.openshift.hypershift.changemanagement.pre-start.v1\""));
    assert_non_null(strstr(rv.body, "\"change\":\"release quay.io/x:4.17.1\""));
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_CONTROL_PLANE, why, sizeof(why)),
                     CHECK_FAIL);
    assert_string_equal(why, "check cab refused it: HTTP 503: change freeze until Monday");
    assert_int_equal((int)r.counts[0].refused, 1);
    /* asked again now: not due before its backoff */
    check_runner_ask(&r, pre.uid, k, CHECK_CONTROL_PLANE, &pre);
    /* the backoff passes: the owner is told, asks again, and it passes */
    double took = run_until(loop, &t, 2, 5.0);
    assert_int_equal(t.n, 2);
    assert_true(took > 0.5 && took < 2.0);
    assert_int_equal(rv.posts, 1);
    check_runner_ask(&r, pre.uid, k, CHECK_CONTROL_PLANE, &pre);
    run_until(loop, &t, 3, 5.0);
    assert_int_equal(rv.posts, 2);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_CONTROL_PLANE, why, sizeof(why)),
                     CHECK_PASS);
    assert_string_equal(why, "cab says: ok");
    assert_int_equal((int)r.counts[0].allowed, 1);
    /* allowed: not asked again for this change */
    check_runner_ask(&r, pre.uid, k, CHECK_CONTROL_PLANE, &pre);
    run_until(loop, &t, 4, 0.3);
    assert_int_equal(rv.posts, 2);
    /* another change of the object: asked afresh */
    uint64_t k2 = check_change_key("release quay.io/x:4.17.2", pre.window);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_WAIT);
    check_runner_ask(&r, pre.uid, k2, CHECK_CONTROL_PLANE, &pre);
    run_until(loop, &t, 4, 5.0);
    assert_int_equal(rv.posts, 3);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_PASS);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_WAIT);
    check_runner_forget(&r, pre.uid);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_WAIT);
    /* an object that is gone: forgotten by its name */
    check_runner_ask(&r, pre.uid, k2, CHECK_CONTROL_PLANE, &pre);
    run_until(loop, &t, 5, 5.0);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_PASS);
    check_runner_forget_object(&r, "NodePool", "clusters", "prod"); /* another kind: kept */
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_PASS);
    check_runner_forget_object(&r, "HostedCluster", "clusters", "prod");
    assert_int_equal(check_runner_verdict(&r, pre.uid, k2, CHECK_CONTROL_PLANE, NULL, 0),
                     CHECK_WAIT);

    check_runner_free(&r);
    kube_http_close(&http);
    http_server_stop(&srv);
    ev_loop_destroy(loop);
    unlink(tok);
}

/* A check that accepts the connection and never answers: a refusal after
 * its timeout (1 s), not a wait without end. */
static void test_timeout(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    kube_http http;
    kube_error ke;
    check_runner_t r;
    check_config_t cfg;
    told_t t = {0};
    char why[300], url[100];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    uint64_t k = check_change_key(pre.change, pre.window);

    assert_true(s >= 0);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s, 8), 0); /* the kernel accepts; nobody reads */
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &sl), 0);
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/check", ntohs(sa.sin_port));
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    config(&cfg, url, NULL, 1);
    check_runner_init(&r, loop, &http, &cfg, on_changed, &t);
    check_runner_lead(&r, true);
    check_runner_ask(&r, pre.uid, k, CHECK_WORKER_NODES, &pre);
    double took = run_until(loop, &t, 1, 10.0);
    assert_int_equal(t.n, 1);
    assert_true(took >= 0.9 && took < 3.0);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_WORKER_NODES, why, sizeof(why)),
                     CHECK_FAIL);
    assert_non_null(strstr(why, "check cab refused it: no answer ("));
    assert_int_equal((int)r.counts[0].unanswered, 1);
    /* At most CHECK_MAX_INFLIGHT calls to one check at once: 20 objects
     * asked together, 16 calls start, the other 4 when answers come (each
     * with its own full timeout). */
    notify_event_t ev = pre;
    char uids[20][16];
    for (int i = 0; i < 20; i++) {
        snprintf(uids[i], sizeof(uids[i]), "uid-%d", i);
        ev.uid = uids[i];
        check_runner_ask(&r, uids[i], k, CHECK_WORKER_NODES, &ev);
    }
    assert_int_equal((int)r.inflight[0], CHECK_MAX_INFLIGHT);
    took = run_until_unanswered(loop, &r, 1 + 16, 10.0);
    assert_int_equal((int)r.inflight[0], 4); /* the rest started at the answers */
    took += run_until_unanswered(loop, &r, 1 + 20, 10.0);
    assert_int_equal((int)r.inflight[0], 0);
    assert_int_equal((int)r.counts[0].unanswered, 21);
    assert_true(took >= 1.8 && took < 6.0); /* two rounds of the 1 s timeout */
    /* losing the lead forgets it */
    check_runner_lead(&r, false);
    assert_int_equal(check_runner_verdict(&r, pre.uid, k, CHECK_WORKER_NODES, NULL, 0),
                     CHECK_WAIT);
    check_runner_free(&r);
    kube_http_close(&http);
    close(s);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_then_allowed),
        cmocka_unit_test(test_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
