/* test_write.c: the controller's writer against a fake API server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/testutil_fakeapi.h"
#include "controller/write.h"
#include "kube/config.h"
#include "kube/http.h"
#include "log/log.h"

#define OBJ_PATH "/apis/hypershift.openshift.io/v1beta1/namespaces/ns/hostedclusters/a"
#define ANSWER                                                                                 \
    "{\"apiVersion\":\"hypershift.openshift.io/v1beta1\",\"kind\":\"HostedCluster\","         \
    "\"metadata\":{\"name\":\"a\",\"namespace\":\"ns\",\"uid\":\"u1\",\"resourceVersion\":\"2\"}}"

typedef struct fixture {
    struct ev_loop *loop;
    fakeapi_t *api;
    int status;                /* what the fake answers */
    kube_config cfg;
    kube_http http;
    kube_client client;
    kube_cache cache;
    ctl_stats_t stats;
    ctl_writer_t wr;
    ctl_wtarget_t t;
    int settled;               /* settle callbacks seen */
    ctl_write_outcome_t last;  /* the last outcome */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    (void)r;
    *status = f->status;
    return f->status == 200 ? ANSWER
                            : "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"no\"}";
}

static void settled(ctl_wtarget_t *t, ctl_write_outcome_t outcome, void *ud)
{
    fixture_t *f = ud;
    assert_ptr_equal(t, &f->t);
    f->settled++;
    f->last = outcome;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->api = fakeapi_start(f->loop, answer, f);
    f->status = 200;
    fakeapi_connect(f->api, f->loop, &f->cfg, &f->http, &f->client);
    assert_int_equal(kube_cache_init(&f->cache, NULL, NULL), 0);
    ctl_write_init(&f->wr, f->loop, &f->client, &f->stats, settled, f);
    f->t = (ctl_wtarget_t){.ns = "ns", .name = "a"};
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    kube_client_close(&f->client);
    kube_http_close(&f->http);
    kube_cache_free(&f->cache);
    kube_config_free(&f->cfg);
    fakeapi_stop(f->api);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

/* Runs the loop until n writes have settled (or 5 s pass). */
static void run_until_settled(fixture_t *f, int n)
{
    double until = ev_time() + 5;
    while (f->settled < n && ev_time() < until)
        ev_run(f->loop, EVRUN_ONCE);
    assert_int_equal(f->settled, n);
}

static void status_patch(fixture_t *f)
{
    json_t *doc = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "1");
    ctl_write_t w = {.verb = CTL_WRITE_STATUS, .path = OBJ_PATH, .doc = doc, .cache = &f->cache,
                     .what = "status", .stale = f->t.stale_own, .base_rv = "1"};
    assert_int_equal(ctl_write(&f->wr, &f->t, &w), 0);
    json_decref(doc);
    assert_int_equal(f->t.inflight, 1);
    assert_int_equal(f->wr.inflight, 1);
}

static void test_write_done_caches_answer_and_marks_stale(void **state)
{
    fixture_t *f = *state;
    status_patch(f);
    run_until_settled(f, 1);
    assert_int_equal(f->last, CTL_WRITE_OK);
    assert_int_equal(f->t.inflight, 0);
    assert_int_equal(f->wr.inflight, 0);
    assert_int_equal(f->stats.writes, 1);
    assert_int_equal(f->stats.write_errors, 0);
    assert_true(f->stats.last_write_at > 0);
    /* The version the write replaced is stale; the answer's is not. */
    assert_true(ctl_write_stale(f->t.stale_own, "1"));
    assert_false(ctl_write_stale(f->t.stale_own, "2"));
    /* The answer is in the cache before any watch event. */
    const kube_obj *o = kube_cache_get(&f->cache, "ns", "a");
    assert_non_null(o);
    assert_string_equal(o->rv, "2");
    const fakeapi_req_t *r = fakeapi_nth(f->api, 0);
    assert_string_equal(r->method, "PATCH");
    assert_string_equal(r->path, OBJ_PATH "/status");
    assert_non_null(strstr(r->body, "\"resourceVersion\":\"1\""));
}

/* A write whose answer is the version it was made on changed nothing (a
 * peer's admission webhook, its clock a moment before the window, held a
 * release back to the object as it was): that version stays current, not
 * stale, or the object would wait for a watch event that never comes. */
static void test_write_that_changed_nothing_leaves_it_current(void **state)
{
    fixture_t *f = *state;
    json_t *doc = json_pack("{s:{s:s}}", "metadata", "resourceVersion", "2");
    ctl_write_t w = {.verb = CTL_WRITE_PATCH, .path = OBJ_PATH, .doc = doc, .cache = &f->cache,
                     .what = "held release", .stale = f->t.stale_own, .base_rv = "2",
                     .first = true};
    assert_int_equal(ctl_write(&f->wr, &f->t, &w), 0);
    json_decref(doc);
    run_until_settled(f, 1);
    assert_int_equal(f->last, CTL_WRITE_OK);
    assert_false(ctl_write_stale(f->t.stale_own, "2"));
    assert_true(f->t.recheck); /* decided again a little later */
}

/* The watch delivered a newer version (another writer's, on top of ours)
 * before the answer: the answer does not put the cache back to it, since no
 * later event would correct that. */
static void test_late_answer_does_not_roll_the_cache_back(void **state)
{
    fixture_t *f = *state;
    json_t *newer = json_pack("{s:{s:s, s:s, s:s, s:s}}", "metadata", "name", "a", "namespace",
                              "ns", "uid", "u1", "resourceVersion", "3");
    status_patch(f);
    assert_int_equal(kube_cache_apply(&f->cache, KUBE_EVENT_MODIFIED, newer, NULL), 0);
    json_decref(newer);
    run_until_settled(f, 1);
    assert_int_equal(f->last, CTL_WRITE_OK);
    assert_string_equal(kube_cache_get(&f->cache, "ns", "a")->rv, "3");
    assert_true(ctl_write_stale(f->t.stale_own, "1"));
    assert_false(ctl_write_stale(f->t.stale_own, "3"));
}

static void test_write_conflict_asks_for_redo(void **state)
{
    fixture_t *f = *state;
    f->status = 409;
    status_patch(f);
    run_until_settled(f, 1);
    assert_int_equal(f->last, CTL_WRITE_CONFLICT);
    assert_true(f->t.redo);
    assert_int_equal(f->stats.conflicts, 1);
    assert_int_equal(f->stats.write_errors, 0);
    assert_false(ctl_write_stale(f->t.stale_own, "1")); /* nothing was replaced */
    assert_null(kube_cache_get(&f->cache, "ns", "a"));
}

static void test_write_failure_counted(void **state)
{
    fixture_t *f = *state;
    f->status = 500;
    status_patch(f);
    run_until_settled(f, 1);
    assert_int_equal(f->last, CTL_WRITE_FAILED);
    assert_false(f->t.redo);
    assert_int_equal(f->stats.write_errors, 1);
    assert_int_equal(f->t.inflight, 0);
    assert_int_equal(f->stats.last_write_at, 0);
}

static void test_event_created(void **state)
{
    fixture_t *f = *state;
    ctl_event_t ev = {"HostedCluster", "hypershift.openshift.io/v1beta1", "u1", "Normal",
                      "WindowOpened", "Changes are permitted."};
    assert_int_equal(ctl_write_event(&f->wr, &f->t, &ev), 0);
    run_until_settled(f, 1);
    assert_int_equal(f->stats.events, 1);
    const fakeapi_req_t *r = fakeapi_nth(f->api, 0);
    assert_string_equal(r->method, "POST");
    assert_string_equal(r->path, "/api/v1/namespaces/ns/events");
    json_t *body = json_loads(r->body, 0, NULL);
    assert_non_null(body);
    assert_string_equal(json_string_value(json_object_get(body, "reason")), "WindowOpened");
    assert_string_equal(json_string_value(json_object_get(
                            json_object_get(body, "involvedObject"), "uid")),
                        "u1");
    json_decref(body);
}

static void test_stale_never_matches_empty(void **state)
{
    (void)state;
    uint64_t stale[2] = {0, 0};
    assert_false(ctl_write_stale(stale, "1"));
    assert_false(ctl_write_stale(stale, NULL));
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write_done_caches_answer_and_marks_stale, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_that_changed_nothing_leaves_it_current, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_late_answer_does_not_roll_the_cache_back, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_write_conflict_asks_for_redo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_created, setup, teardown),
        cmocka_unit_test(test_stale_never_matches_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
