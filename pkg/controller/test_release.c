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
    testutil_ctl_api_t t;
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
    f->reply = NULL;
    testutil_ctl_api_start(&f->t, answer, f, "2030-01-09T06:00:00Z");
    f->t.c->admission_holds = true;
    testutil_ctl_add(&f->t.c->hcs, HELD_HC("a"));
    testutil_ctl_add(&f->t.c->hcs, HELD_HC("b"));
    testutil_ctl_add(&f->t.c->nps, META("NodePool", "n") "\"annotations\":{" PERMISSIVE "}},"
                                 "\"spec\":{\"clusterName\":\"a\"}}");
    /* The caches' handlers queued the three records: the test reconciles
     * them itself, in the order a boundary would. */
    while (ctl_queue_pop(&f->t.c->queue))
        ;
}

static record_t *reconcile(fixture_t *f, rkind_t k, const char *name)
{
    record_t *r = ctl_record_get(f->t.c, k, "clusters", name);
    assert_non_null(r);
    ctl_reconcile(f->t.c, r);
    return r;
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
    assert_int_equal(f.t.c->writer.first_inflight, 2);
    assert_int_equal(f.t.c->writer.inflight, 2);
    /* ... and the NodePool's status waits for them. */
    assert_true(n->q.queued);
    assert_int_equal(f.t.c->writer.waiting.len, 1);
    assert_true(ctl_queue_empty(&f.t.c->queue));
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 2);
    for (int i = 0; i < 2; i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.t.api, i);
        assert_string_equal(r->method, "PATCH");
        assert_non_null(strstr(r->path, "/hostedclusters/"));
        assert_null(strstr(r->path, "/status"));
        assert_non_null(strstr(r->body, "\"image\":\"r:2\""));
    }
    /* Answered: the parked NodePool is queued again, not lost; its
     * reconcile now writes (status and companion). */
    assert_int_equal(f.t.c->writer.first_inflight, 0);
    assert_true(ctl_queue_empty(&f.t.c->writer.waiting));
    assert_ptr_equal(RECORD_OF(q, ctl_queue_pop(&f.t.c->queue)), n);
    ctl_reconcile(f.t.c, n);
    assert_true(f.t.c->writer.inflight > 0);
    assert_int_equal(f.t.c->writer.first_inflight, 0);
    testutil_ctl_api_settle(&f.t);
    assert_true(fakeapi_count(f.t.api) > 2);
    assert_non_null(strstr(fakeapi_nth(f.t.api, 2)->path, "n"));
    testutil_ctl_api_stop(&f.t);
}

/* A policy shares the boundary of the HostedClusters that follow it, and
 * its timer may fire first: its status still goes after their held
 * releases. It waits in the queue behind them, and its write is parked
 * while they fly. */
static void test_policy_status_after_releases(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    testutil_ctl_add(&f.t.c->policies,
                     "{" TESTUTIL_OBJ_META("HostedChangeManagementPolicy", "clusters", "w")
                     "},\"spec\":{\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{"
                     "\"permit\":{\"rrule\":\"FREQ=WEEKLY;BYDAY=WE\",\"startTime\":\"06:00\","
                     "\"duration\":\"8h\"}}}}");
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    /* The boundary's timers, the policy's first. */
    ctl_enqueue(f.t.c, R_POLICY, "clusters", "w");
    ctl_enqueue(f.t.c, R_HC, "clusters", "a");
    ctl_enqueue(f.t.c, R_HC, "clusters", "b");
    record_t *order[3];
    for (int i = 0; i < 3; i++) {
        ctl_qitem_t *it = ctl_queue_pop(&f.t.c->queue);
        assert_non_null(it);
        order[i] = RECORD_OF(q, it);
        ctl_reconcile(f.t.c, order[i]);
    }
    assert_int_equal(order[0]->kind, R_HC);
    assert_int_equal(order[1]->kind, R_HC);
    assert_int_equal(order[2]->kind, R_POLICY);
    /* The releases fly; the policy is parked, not written. */
    assert_int_equal(f.t.c->writer.first_inflight, 2);
    assert_int_equal(f.t.c->writer.inflight, 2);
    assert_int_equal(f.t.c->writer.waiting.len, 1);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 2);
    for (int i = 0; i < 2; i++)
        assert_non_null(strstr(fakeapi_nth(f.t.api, i)->path, "/hostedclusters/"));
    /* Answered: the policy is queued again and writes its status. */
    ctl_qitem_t *it = ctl_queue_pop(&f.t.c->queue);
    assert_non_null(it);
    assert_ptr_equal(RECORD_OF(q, it), order[2]);
    ctl_reconcile(f.t.c, order[2]);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 3);
    assert_non_null(strstr(fakeapi_nth(f.t.api, 2)->path, "/hostedchangemanagementpolicies/w"));
    testutil_ctl_api_stop(&f.t);
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
    assert_int_equal(f.t.c->writer.first_inflight, 1);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 1);
    assert_true(ev_is_active(&a->timer));
    double left = ev_timer_remaining(f.t.loop, &a->timer);
    if (left < 0.5 || left > 1.0)
        fail_msg("the answered release is decided again in %.2f s, want about 1 s", left);
    ctl_reconcile(f.t.c, a); /* what the timer does */
    assert_int_equal(f.t.c->writer.first_inflight, 1);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 2);
    assert_non_null(strstr(fakeapi_nth(f.t.api, 1)->path, "/hostedclusters/a"));
    assert_non_null(strstr(fakeapi_nth(f.t.api, 1)->body, "\"image\":\"r:2\""));
    /* Held again: checked again a second later (one write a second at most
     * while a replica's clock lags). */
    left = ev_timer_remaining(f.t.loop, &a->timer);
    if (left < 0.5 || left > 1.0)
        fail_msg("the second check is in %.2f s, want about 1 s", left);
    testutil_ctl_api_stop(&f.t);
}

/* A HostedCluster whose release was answered carries no request any more:
 * while other releases fly, deciding it again (the answer's second, a watch
 * event) could let nothing through, so it waits without a plan, as a
 * NodePool with nothing held does. At a boundary of 1,000 clusters those
 * plans were made and thrown away while the burst went on. */
static void test_released_waits_unplanned(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    f.reply = "{\"apiVersion\":\"hypershift.openshift.io/v1beta1\"," "\"kind\":\"HostedCluster\","
              "\"metadata\":{\"namespace\":\"clusters\",\"name\":\"a\",\"uid\":\"u-a\","
              "\"resourceVersion\":\"8\",\"generation\":2,\"annotations\":{" PERMISSIVE "}},"
              "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"}}}";
    record_t *a = reconcile(&f, R_HC, "a");
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 1);
    while (ctl_queue_pop(&f.t.c->queue)) /* the answer's cache event queued it */
        ;
    /* b's release flies; a is decided again (what its timer does). */
    reconcile(&f, R_HC, "b");
    assert_int_equal(f.t.c->writer.first_inflight, 1);
    uint64_t parked = f.t.c->stats.plans_parked;
    ctl_reconcile(f.t.c, a);
    assert_true(a->q.queued);
    assert_int_equal(f.t.c->writer.waiting.len, 1);
    assert_int_equal(f.t.c->stats.plans_parked, parked); /* waits without a plan */
    /* A NodePool with nothing held: the same. */
    record_t *n = reconcile(&f, R_NP, "n");
    assert_true(n->q.queued);
    assert_int_equal(f.t.c->stats.plans_parked, parked);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(f.t.c->writer.first_inflight, 0);
    assert_true(ctl_queue_empty(&f.t.c->writer.waiting));
    testutil_ctl_api_stop(&f.t);
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
    testutil_ctl_add(&f.t.c->nps,
                     META("NodePool", "m") "\"annotations\":{" PERMISSIVE ","
                     "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
                     "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"
                     "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"r:1\"}}}");
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    reconcile(&f, R_HC, "a");
    record_t *n = reconcile(&f, R_NP, "n");
    record_t *m = reconcile(&f, R_NP, "m");
    assert_int_equal(f.t.c->writer.first_inflight, 2);
    assert_true(n->q.queued);
    assert_false(m->q.queued);
    assert_int_equal(f.t.c->writer.waiting.len, 1);
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 2);
    const fakeapi_req_t *r = fakeapi_nth(f.t.api, 1);
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
    testutil_ctl_api_stop(&f.t);
}

/* Without a release in flight nothing waits. */
static void test_nothing_parked_without_releases(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    record_t *n = reconcile(&f, R_NP, "n");
    assert_false(n->q.queued);
    assert_true(ctl_queue_empty(&f.t.c->writer.waiting));
    assert_true(f.t.c->writer.inflight > 0);
    testutil_ctl_api_settle(&f.t);
    testutil_ctl_api_stop(&f.t);
}

/* start(), with notifications on: one endpoint, each step handed to fn. */
static void start_notifying(fixture_t *f, notify_config_t *cfg,
                            void (*fn)(const notify_event_t *, const notify_due_t *, void *))
{
    start(f);
    notify_config_default(cfg);
    cfg->n_endpoints = 1;
    f->t.c->opts.notify = fn;
    f->t.c->opts.notify_cfg = cfg;
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
    int before = fakeapi_count(f.t.api);
    notify_due_t d = {.step = NOTIFY_INITIATED, .window = f.t.c->opts.clock.sim0,
                      .until = SCHED_POS_INF, .request = SCHED_NEG_INF};
    ctl_notified(f.t.c, "NodePool", "clusters", "n", &d);
    testutil_ctl_api_settle(&f.t);
    /* Answered: the NodePool is decided again (nothing else would: the
     * answers and events of its own writes may all have come before the
     * delivery) ... */
    assert_true(n->q.queued);
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    /* ... once the watch has the version its writes made, and writes its
     * marks. */
    testutil_ctl_add(&f.t.c->nps, "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\","
                                "\"name\":\"n\",\"uid\":\"u-n\",\"resourceVersion\":\"8\","
                                "\"generation\":1,\"annotations\":{" PERMISSIVE "}},"
                                "\"spec\":{\"clusterName\":\"a\"}}");
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    before = fakeapi_count(f.t.api);
    ctl_reconcile(f.t.c, n);
    testutil_ctl_api_settle(&f.t);
    int marks = 0;
    for (int i = before; i < fakeapi_count(f.t.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.t.api, i);
        if (strstr(r->path, "/nodepools/n") && !strstr(r->path, "/status") &&
            strstr(r->body, NOTIFY_MARKS_ANNOTATION) && strstr(r->body, "initiated="))
            marks++;
    }
    assert_int_equal(marks, 1);
    f.t.c->opts.notify_cfg = NULL;
    testutil_ctl_api_stop(&f.t);
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
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(n->wt.inflight, 0);
    ctl_set_leading(f.t.c, false);
    assert_true(ctl_notify_flushed(f.t.c));
    int before = fakeapi_count(f.t.api);
    notify_due_t d = {.step = NOTIFY_INITIATED, .window = f.t.c->opts.clock.sim0,
                      .until = SCHED_POS_INF, .request = SCHED_NEG_INF};
    ctl_notified(f.t.c, "NodePool", "clusters", "n", &d);
    assert_false(ctl_notify_flushed(f.t.c));
    testutil_ctl_api_settle(&f.t);
    int marks = 0;
    for (int i = before; i < fakeapi_count(f.t.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.t.api, i);
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
    testutil_ctl_add(&f.t.c->nps, doc);
    assert_true(ctl_notify_flushed(f.t.c));
    f.t.c->opts.notify_cfg = NULL;
    testutil_ctl_api_stop(&f.t);
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
    testutil_ctl_add(&f.t.c->hcs,
                     META("HostedCluster", "c") "\"annotations\":{" PERMISSIVE ","
                     "\"changemanagement.hypershift.openshift.io/requested-release-image\":\"r:2\","
                     "\"changemanagement.hypershift.openshift.io/requested-at\":"
                     "\"2030-01-09T05:00:00Z\","
                     "\"" NOTIFY_MARKS_ANNOTATION "\":\"held=none@2030-01-09T05:00:00Z\"}},"
                     "\"spec\":{\"infraID\":\"c-x1\",\"release\":{\"image\":\"r:1\"}}}");
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    int before = fakeapi_count(f.t.api);
    reconcile(&f, R_HC, "c");
    assert_int_equal(f.t.c->writer.first_inflight, 1); /* the release, alone */
    assert_int_equal(initiated_told, 1);
    testutil_ctl_api_settle(&f.t);
    /* Nothing but the release was written (no notified marks with it). */
    assert_int_equal(fakeapi_count(f.t.api), before + 1);
    assert_null(strstr(fakeapi_nth(f.t.api, before)->body, NOTIFY_MARKS_ANNOTATION));
    f.t.c->opts.notify_cfg = NULL;
    testutil_ctl_api_stop(&f.t);
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
    testutil_ctl_add(&f.t.c->hcs, FIELDS_HC("w", "Restrictive", ""));
    testutil_ctl_add(&f.t.c->hcs,
                     FIELDS_HC("g", "Permissive",
                               ",\"" NOTIFY_MARKS_ANNOTATION
                               "\":\"held=none@2030-01-09T05:00:00Z\""));
    while (ctl_queue_pop(&f.t.c->queue))
        ;
    reconcile(&f, R_HC, "w");
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(n_told, 1);
    assert_int_equal(told_steps[0], NOTIFY_HELD);
    assert_non_null(strstr(told_change[0], "fields that roll every NodePool"));
    assert_non_null(strstr(told_change[0], "configuration"));
    n_told = 0;
    reconcile(&f, R_HC, "g");
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(n_told, 1);
    assert_int_equal(told_steps[0], NOTIFY_INITIATED);
    assert_non_null(strstr(told_change[0], "fields that roll every NodePool"));
    f.t.c->opts.notify_cfg = NULL;
    testutil_ctl_api_stop(&f.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_releases_first),
        cmocka_unit_test(test_policy_status_after_releases),
        cmocka_unit_test(test_release_held_again),
        cmocka_unit_test(test_released_waits_unplanned),
        cmocka_unit_test(test_nothing_parked_without_releases),
        cmocka_unit_test(test_nodepool_request_first),
        cmocka_unit_test(test_marks_written_after_writes_in_flight),
        cmocka_unit_test(test_marks_written_after_the_lead_is_lost),
        cmocka_unit_test(test_initiated_told_with_the_release),
        cmocka_unit_test(test_fields_held_and_initiated_told),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
