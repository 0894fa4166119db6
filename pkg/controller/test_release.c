/* test_release.c: held releases go first (DESIGN.md 3.6). At a boundary that
 * many HostedClusters share, the reconcile that lets a held release through
 * writes nothing else, and every other reconcile waits (parked) until the
 * releases in flight are answered; nothing parked is lost. The controller
 * writes to a fake API server that logs the order of the requests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "kube/testutil_fakeapi.h"
#include "kube/config.h"
#include "kube/http.h"

#define META(kind, name)                                                                 \
    "{\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"" name \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"7\",\"generation\":1,"
#define PERMISSIVE "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\""
/* A release held while the cluster was restricted; now changes are permitted. */
#define HELD_HC(name)                                                                        \
    META("HostedCluster", name) "\"annotations\":{" PERMISSIVE ","                           \
    "\"changemanagement.hypershift.openshift.io/requested-release-image\":\"r:2\"}},"        \
    "\"spec\":{\"infraID\":\"" name "-x1\",\"release\":{\"image\":\"r:1\"}}}"

typedef struct fixture {
    struct ev_loop *loop;
    fakeapi_t *api;
    kube_config cfg;
    kube_http http;
    kube_client client;
    ctl_controller_t *c;
    const char *reply;  /* the API server's answer; NULL: "{}" */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    (void)r;
    *status = 200;
    /* "{}" is not an object the caches keep: they stay as the test set them */
    return f->reply ? f->reply : "{}";
}

static void start(fixture_t *f)
{
    sched_time_t now;
    f->reply = NULL;
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->api = fakeapi_start(f->loop, answer, f);
    fakeapi_connect(f->api, f->loop, &f->cfg, &f->http, &f->client);
    assert_int_equal(sched_parse_rfc3339("2030-01-09T06:00:00Z", &now), 0);
    f->c = testutil_ctl_new(f->loop, &f->client, now);
    f->c->leading = true;
    f->c->admission_holds = true;
    testutil_ctl_add(&f->c->hcs, HELD_HC("a"));
    testutil_ctl_add(&f->c->hcs, HELD_HC("b"));
    testutil_ctl_add(&f->c->nps, META("NodePool", "n") "\"annotations\":{" PERMISSIVE "}},"
                                 "\"spec\":{\"clusterName\":\"a\"}}");
    /* The caches' handlers queued the three records: the test reconciles
     * them itself, in the order a boundary would. */
    while (ctl_queue_pop(&f->c->queue))
        ;
}

static void stop(fixture_t *f)
{
    ctl_stop(f->c);
    kube_client_close(&f->client);
    kube_http_close(&f->http);
    kube_config_free(&f->cfg);
    fakeapi_stop(f->api);
    ev_loop_destroy(f->loop);
}

static record_t *reconcile(fixture_t *f, rkind_t k, const char *name)
{
    record_t *r = ctl_record_get(f->c, k, "clusters", name);
    assert_non_null(r);
    ctl_reconcile(f->c, r);
    return r;
}

static void run_until_answered(fixture_t *f)
{
    double until = ev_time() + 20;
    while (f->c->writer.inflight > 0 && ev_time() < until)
        ev_run(f->loop, EVRUN_ONCE);
    assert_int_equal(f->c->writer.inflight, 0);
}

static void test_releases_first(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    /* The boundary: both HostedClusters and the NodePool are reconciled. */
    reconcile(&f, R_HC, "a");
    reconcile(&f, R_HC, "b");
    record_t *n = reconcile(&f, R_NP, "n");
    /* Each release went alone (no Event, status or companion with it) ... */
    assert_int_equal(f.c->writer.first_inflight, 2);
    assert_int_equal(f.c->writer.inflight, 2);
    /* ... and the NodePool's status waits for them. */
    assert_true(n->q.queued);
    assert_int_equal(f.c->writer.waiting.len, 1);
    assert_true(ctl_queue_empty(&f.c->queue));
    run_until_answered(&f);
    assert_int_equal(fakeapi_count(f.api), 2);
    for (int i = 0; i < 2; i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.api, i);
        assert_string_equal(r->method, "PATCH");
        assert_non_null(strstr(r->path, "/hostedclusters/"));
        assert_null(strstr(r->path, "/status"));
        assert_non_null(strstr(r->body, "\"image\":\"r:2\""));
    }
    /* Answered: the parked NodePool is queued again, not lost; its
     * reconcile now writes (status and companion). */
    assert_int_equal(f.c->writer.first_inflight, 0);
    assert_true(ctl_queue_empty(&f.c->writer.waiting));
    assert_ptr_equal(RECORD_OF(q, ctl_queue_pop(&f.c->queue)), n);
    ctl_reconcile(f.c, n);
    assert_true(f.c->writer.inflight > 0);
    assert_int_equal(f.c->writer.first_inflight, 0);
    run_until_answered(&f);
    assert_true(fakeapi_count(f.api) > 2);
    assert_non_null(strstr(fakeapi_nth(f.api, 2)->path, "n"));
    stop(&f);
}

/* A held release answered, but held again: a replica whose clock is a
 * moment before the window answered the leader's write, and the answer (the
 * writer caches it) still records the request and keeps the running image.
 * No watch event follows an answer already cached; the record is decided
 * again a second later, and the release is written again. */
static void test_release_held_again(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    f.reply = "{\"apiVersion\":\"hypershift.openshift.io/v1beta1\"," "\"kind\":\"HostedCluster\","
              "\"metadata\":{\"namespace\":\"clusters\",\"name\":\"a\",\"uid\":\"u-a\","
              "\"resourceVersion\":\"8\",\"generation\":1,\"annotations\":{" PERMISSIVE ","
              "\"changemanagement.hypershift.openshift.io/requested-release-image\":\"r:2\"}},"
              "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"}}}";
    record_t *a = reconcile(&f, R_HC, "a");
    assert_int_equal(f.c->writer.first_inflight, 1);
    run_until_answered(&f);
    assert_int_equal(fakeapi_count(f.api), 1);
    assert_true(ev_is_active(&a->timer));
    double left = ev_timer_remaining(f.loop, &a->timer);
    if (left < 0.5 || left > 1.0)
        fail_msg("the answered release is decided again in %.2f s, want about 1 s", left);
    ctl_reconcile(f.c, a); /* what the timer does */
    assert_int_equal(f.c->writer.first_inflight, 1);
    run_until_answered(&f);
    assert_int_equal(fakeapi_count(f.api), 2);
    assert_non_null(strstr(fakeapi_nth(f.api, 1)->path, "/hostedclusters/a"));
    assert_non_null(strstr(fakeapi_nth(f.api, 1)->body, "\"image\":\"r:2\""));
    /* Held again: checked again a second later (one write a second at most
     * while a replica's clock lags). */
    left = ev_timer_remaining(f.loop, &a->timer);
    if (left < 0.5 || left > 1.0)
        fail_msg("the second check is in %.2f s, want about 1 s", left);
    stop(&f);
}

/* A NodePool whose request was held releases like a HostedCluster: while
 * the clusters' releases fly it still plans, and its first write is the
 * request alone (spec from the record, the annotation dropped), counted
 * among the first writes; a pool with nothing held waits. */
static void test_nodepool_request_first(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    testutil_ctl_add(&f.c->nps,
                     META("NodePool", "m") "\"annotations\":{" PERMISSIVE ","
                     "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
                     "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"
                     "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"r:1\"}}}");
    while (ctl_queue_pop(&f.c->queue))
        ;
    reconcile(&f, R_HC, "a");
    record_t *n = reconcile(&f, R_NP, "n");
    record_t *m = reconcile(&f, R_NP, "m");
    assert_int_equal(f.c->writer.first_inflight, 2);
    assert_true(n->q.queued);
    assert_false(m->q.queued);
    assert_int_equal(f.c->writer.waiting.len, 1);
    run_until_answered(&f);
    assert_int_equal(fakeapi_count(f.api), 2);
    const fakeapi_req_t *r = fakeapi_nth(f.api, 1);
    assert_string_equal(r->method, "PATCH");
    assert_non_null(strstr(r->path, "/nodepools/m"));
    assert_null(strstr(r->path, "/status"));
    json_t *body = json_loads(r->body, 0, NULL);
    assert_non_null(body);
    assert_string_equal(hcp_json_str(body, "spec.release.image"), "r:2");
    assert_true(json_is_null(json_object_get(
        hcp_json_path(body, "metadata.annotations"),
        "changemanagement.hypershift.openshift.io/requested-nodepool-spec")));
    json_decref(body);
    stop(&f);
}

/* Without a release in flight nothing waits. */
static void test_nothing_parked_without_releases(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    record_t *n = reconcile(&f, R_NP, "n");
    assert_false(n->q.queued);
    assert_true(ctl_queue_empty(&f.c->writer.waiting));
    assert_true(f.c->writer.inflight > 0);
    run_until_answered(&f);
    stop(&f);
}

/* start(), with notifications on: one endpoint, each step handed to fn. */
static void start_notifying(fixture_t *f, notify_config_t *cfg,
                            void (*fn)(const notify_event_t *, const notify_due_t *, void *))
{
    start(f);
    notify_config_default(cfg);
    cfg->n_endpoints = 1;
    f->c->opts.notify = fn;
    f->c->opts.notify_cfg = cfg;
}

static void no_notify(const notify_event_t *ev, const notify_due_t *d, void *ud)
{
    (void)ev;
    (void)d;
    (void)ud;
}

/* A step delivered while writes of its object are in flight (the status
 * and companion writes that follow a window's opening): the notified marks
 * wait for their answers and are then written, with nothing else about the
 * object changing, so that a controller restarted afterwards does not send
 * the step again within its window. */
static void test_marks_written_after_writes_in_flight(void **state)
{
    (void)state;
    fixture_t f;
    notify_config_t cfg;
    start_notifying(&f, &cfg, no_notify);
    record_t *n = reconcile(&f, R_NP, "n");
    assert_true(n->wt.inflight > 0);
    int before = fakeapi_count(f.api);
    notify_due_t d = {.step = NOTIFY_INITIATED, .window = f.c->opts.clock.sim0,
                      .until = SCHED_POS_INF, .request = SCHED_NEG_INF};
    ctl_notified(f.c, "NodePool", "clusters", "n", &d);
    run_until_answered(&f);
    /* Answered: the NodePool is decided again (nothing else would: the
     * answers and events of its own writes may all have come before the
     * delivery) ... */
    assert_true(n->q.queued);
    while (ctl_queue_pop(&f.c->queue))
        ;
    /* ... once the watch has the version its writes made, and writes its
     * marks. */
    testutil_ctl_add(&f.c->nps, "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\","
                                "\"name\":\"n\",\"uid\":\"u-n\",\"resourceVersion\":\"8\","
                                "\"generation\":1,\"annotations\":{" PERMISSIVE "}},"
                                "\"spec\":{\"clusterName\":\"a\"}}");
    while (ctl_queue_pop(&f.c->queue))
        ;
    before = fakeapi_count(f.api);
    ctl_reconcile(f.c, n);
    run_until_answered(&f);
    int marks = 0;
    for (int i = before; i < fakeapi_count(f.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.api, i);
        if (strstr(r->path, "/nodepools/n") && !strstr(r->path, "/status") &&
            strstr(r->body, NOTIFY_MARKS_ANNOTATION) && strstr(r->body, "initiated="))
            marks++;
    }
    assert_int_equal(marks, 1);
    f.c->opts.notify_cfg = NULL;
    stop(&f);
}

/* A step delivered after the lead was lost (a SIGTERM stops the lead
 * first, and a transfer in flight still ends): its marks are written all
 * the same, and the shutdown's wait (ctl_notify_flushed) holds until the
 * object carries them. */
static void test_marks_written_after_the_lead_is_lost(void **state)
{
    (void)state;
    fixture_t f;
    notify_config_t cfg;
    start_notifying(&f, &cfg, no_notify);
    record_t *n = reconcile(&f, R_NP, "n");
    run_until_answered(&f);
    assert_int_equal(n->wt.inflight, 0);
    ctl_set_leading(f.c, false);
    assert_true(ctl_notify_flushed(f.c));
    int before = fakeapi_count(f.api);
    notify_due_t d = {.step = NOTIFY_INITIATED, .window = f.c->opts.clock.sim0,
                      .until = SCHED_POS_INF, .request = SCHED_NEG_INF};
    ctl_notified(f.c, "NodePool", "clusters", "n", &d);
    assert_false(ctl_notify_flushed(f.c));
    run_until_answered(&f);
    int marks = 0;
    for (int i = before; i < fakeapi_count(f.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.api, i);
        if (strstr(r->path, "/nodepools/n") && strstr(r->body, NOTIFY_MARKS_ANNOTATION) &&
            strstr(r->body, "initiated="))
            marks++;
    }
    assert_int_equal(marks, 1);
    /* The watch brings the object back with its marks: flushed. */
    notify_marks_t m;
    char text[NOTIFY_MARKS_LEN], doc[NOTIFY_MARKS_LEN + 512];
    notify_marks_init(&m);
    notify_marks_note(&m, &d, &cfg);
    notify_marks_format(&m, text, sizeof(text));
    snprintf(doc, sizeof(doc),
             "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"n\","
             "\"uid\":\"u-n\",\"resourceVersion\":\"9\",\"generation\":1,\"annotations\":{"
             PERMISSIVE ",\"%s\":\"%s\"}},\"spec\":{\"clusterName\":\"a\"}}",
             NOTIFY_MARKS_ANNOTATION, text);
    testutil_ctl_add(&f.c->nps, doc);
    assert_true(ctl_notify_flushed(f.c));
    f.c->opts.notify_cfg = NULL;
    stop(&f);
}

static int initiated_told;
static void count_initiated(const notify_event_t *ev, const notify_due_t *d, void *ud)
{
    (void)d;
    (void)ud;
    if (ev->step == NOTIFY_INITIATED)
        initiated_told++;
}

/* The reconcile that lets a held release through tells it (initiated) at
 * once, though it writes nothing but the release: the next reconcile waits
 * for the release's answer, and a controller behind its clock (a busy
 * boundary) may reach it only after the window closed, when the change is
 * no longer let through. */
static void test_initiated_told_with_the_release(void **state)
{
    (void)state;
    fixture_t f;
    notify_config_t cfg;
    start_notifying(&f, &cfg, count_initiated);
    initiated_told = 0;
    testutil_ctl_add(&f.c->hcs,
                     META("HostedCluster", "c") "\"annotations\":{" PERMISSIVE ","
                     "\"changemanagement.hypershift.openshift.io/requested-release-image\":\"r:2\","
                     "\"changemanagement.hypershift.openshift.io/requested-at\":"
                     "\"2030-01-09T05:00:00Z\","
                     "\"" NOTIFY_MARKS_ANNOTATION "\":\"held=none@2030-01-09T05:00:00Z\"}},"
                     "\"spec\":{\"infraID\":\"c-x1\",\"release\":{\"image\":\"r:1\"}}}");
    while (ctl_queue_pop(&f.c->queue))
        ;
    int before = fakeapi_count(f.api);
    reconcile(&f, R_HC, "c");
    assert_int_equal(f.c->writer.first_inflight, 1); /* the release, alone */
    assert_int_equal(initiated_told, 1);
    run_until_answered(&f);
    /* Nothing but the release was written (no notified marks with it). */
    assert_int_equal(fakeapi_count(f.api), before + 1);
    assert_null(strstr(fakeapi_nth(f.api, before)->body, NOTIFY_MARKS_ANNOTATION));
    f.c->opts.notify_cfg = NULL;
    stop(&f);
}

static notify_step_t told_steps[8];
static char told_change[8][256];
static size_t n_told;
static void record_told(const notify_event_t *ev, const notify_due_t *d, void *ud)
{
    (void)d;
    (void)ud;
    if (n_told < 8) {
        told_steps[n_told] = ev->step;
        snprintf(told_change[n_told], sizeof(told_change[n_told]), "%s", ev->change);
        n_told++;
    }
}

#define FIELDS_HC(name, strategy, marks)                                                     \
    META("HostedCluster", name) "\"annotations\":{"                                          \
    "\"changemanagement.hypershift.openshift.io/strategy\":\"" strategy "\","               \
    "\"" DECIDE_REQUESTED_HC_SPEC_ANNOTATION "\":"                                            \
    "\"{\\\"configuration\\\":{\\\"proxy\\\":{\\\"httpProxy\\\":\\\"http://p:3128\\\"}}}\","  \
    "\"changemanagement.hypershift.openshift.io/requested-at\":\"2030-01-09T05:00:00Z\""   \
    marks "}},\"spec\":{\"infraID\":\"" name "-x1\",\"release\":{\"image\":\"r:1\"}}}"

/* A HostedCluster whose only held request is of the fields that roll every
 * NodePool (no release) is told held, naming those fields, while it waits
 * for its common window, and initiated when they are let through. */
static void test_fields_held_and_initiated_told(void **state)
{
    (void)state;
    fixture_t f;
    notify_config_t cfg;
    start_notifying(&f, &cfg, record_told);
    n_told = 0;
    testutil_ctl_add(&f.c->hcs, FIELDS_HC("w", "Restrictive", ""));
    testutil_ctl_add(&f.c->hcs,
                     FIELDS_HC("g", "Permissive",
                               ",\"" NOTIFY_MARKS_ANNOTATION
                               "\":\"held=none@2030-01-09T05:00:00Z\""));
    while (ctl_queue_pop(&f.c->queue))
        ;
    reconcile(&f, R_HC, "w");
    run_until_answered(&f);
    assert_int_equal(n_told, 1);
    assert_int_equal(told_steps[0], NOTIFY_HELD);
    assert_non_null(strstr(told_change[0], "fields that roll every NodePool"));
    assert_non_null(strstr(told_change[0], "configuration"));
    n_told = 0;
    reconcile(&f, R_HC, "g");
    run_until_answered(&f);
    assert_int_equal(n_told, 1);
    assert_int_equal(told_steps[0], NOTIFY_INITIATED);
    assert_non_null(strstr(told_change[0], "fields that roll every NodePool"));
    f.c->opts.notify_cfg = NULL;
    stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_releases_first),
        cmocka_unit_test(test_release_held_again),
        cmocka_unit_test(test_nothing_parked_without_releases),
        cmocka_unit_test(test_nodepool_request_first),
        cmocka_unit_test(test_marks_written_after_writes_in_flight),
        cmocka_unit_test(test_marks_written_after_the_lead_is_lost),
        cmocka_unit_test(test_initiated_told_with_the_release),
        cmocka_unit_test(test_fields_held_and_initiated_told),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
