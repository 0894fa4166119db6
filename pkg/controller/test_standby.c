/* test_standby.c: a replica that does not lead lets a held change through
 * when the leader leaves it (standby.c): not before its time, not while it
 * sees the leader let changes through, conditional on the version it
 * decided from, the change alone (no status, no Event), nothing more after
 * another replica wrote first, again when a webhook held it back, nothing at all when a pre-start check
 * applies or the replica is shutting down; and what it let through is told
 * once it leads soon after. The replica writes to a fake API server that
 * records every request; the test reconciles what the controller queues, as
 * the queue's drain would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "check/call.h"
#include "check/check.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "kube/testutil_fakeapi.h"

#define PERMISSIVE "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\""
#define REQUESTED "\"changemanagement.hypershift.openshift.io/requested-release-image\""
/* A release held while the cluster was restricted; now changes are permitted. */
#define HELD_HC(name)                                                                        \
    "{" TESTUTIL_OBJ_META("HostedCluster", "clusters", name) ",\"annotations\":{" PERMISSIVE \
    "," REQUESTED ":\"r:2\"}},\"spec\":{\"infraID\":\"" name "-x1\","                     \
    "\"release\":{\"image\":\"r:2-running\"}}}"
/* The same after a write let it through (by this replica or another). */
#define RELEASED_HC(name)                                                                  \
    "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"" name \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"8\",\"generation\":2,"                 \
    "\"annotations\":{" PERMISSIVE "}},\"spec\":{\"infraID\":\"" name "-x1\","             \
    "\"release\":{\"image\":\"r:2\"}}}"

#define AFTER 0.4 /* --standby-release-after in these tests, seconds */

typedef struct fixture {
    testutil_ctl_api_t t;
    int status;         /* the API server's answer to a write */
    bool held_back;     /* a HostedCluster's patch answers it as it was (a webhook
                           whose replica's clock is behind the window held it again) */
    bool released;      /* a HostedCluster's patch answers it released; else "{}"
                           (the caches keep what the test set) */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    *status = f->status;
    if (f->status == 409)
        return "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\","
               "\"code\":409,\"message\":\"the object has been modified\"}";
    if (f->held_back && strstr(r->path, "/hostedclusters/a"))
        return HELD_HC("a");
    if (f->released && strstr(r->path, "/hostedclusters/a"))
        return RELEASED_HC("a");
    if (f->released && strstr(r->path, "/hostedclusters/b"))
        return RELEASED_HC("b");
    return "{}";
}

/* A replica that does not lead, with HostedClusters a and (with_b) b holding
 * a release its plan lets through now. */
static void start_n(fixture_t *f, double after, bool with_b)
{
    *f = (fixture_t){.status = 200};
    testutil_ctl_api_start(&f->t, answer, f, "2030-01-09T06:00:00Z");
    f->t.c->admission_holds = true;
    f->t.c->leading = false;
    ctl_set_standby(f->t.c, after);
    testutil_ctl_add(&f->t.c->hcs, HELD_HC("a"));
    if (with_b)
        testutil_ctl_add(&f->t.c->hcs, HELD_HC("b"));
}

static void start(fixture_t *f, double after) { start_n(f, after, true); }

/* Reconciles what the controller queued (its drain is not running here),
 * then runs the loop until every write is answered. */
static void drain(fixture_t *f)
{
    for (ctl_qitem_t *it; (it = ctl_queue_pop(&f->t.c->queue)) != NULL;)
        ctl_reconcile(f->t.c, RECORD_OF(q, it));
    testutil_ctl_api_settle(&f->t);
}

/* One turn of the loop, what it queued decided, and a short sleep. */
static void step(fixture_t *f)
{
    ev_run(f->t.loop, EVRUN_ONCE | EVRUN_NOWAIT);
    drain(f);
    ev_sleep(0.005);
}

/* Runs the loop until real time t (ev_time()), reconciling what it queues. */
static void run_until(fixture_t *f, double t)
{
    drain(f);
    while (ev_time() < t)
        step(f);
}

static void run_for(fixture_t *f, double seconds) { run_until(f, ev_time() + seconds); }

/* Runs the loop until the fake API server has n requests (at most 20 s:
 * under valgrind everything is slow; the bounds that matter are lower
 * bounds, asserted with run_until()). */
static void run_until_requests(fixture_t *f, int n)
{
    double end = ev_time() + 20;
    drain(f);
    while (fakeapi_count(f->t.api) < n && ev_time() < end)
        step(f);
    assert_int_equal(fakeapi_count(f->t.api), n);
}

/* When the standby first saw name's held change due. */
static double due(fixture_t *f, const char *name)
{
    drain(f);
    record_t *r = ctl_record_find(f->t.c, R_HC, "clusters", name);
    assert_non_null(r);
    assert_true(r->sb_due > 0);
    return r->sb_due;
}

static int writes_to(fixture_t *f, const char *name)
{
    char seg[64];
    int n = 0;
    snprintf(seg, sizeof(seg), "/hostedclusters/%s", name);
    for (int i = 0; i < fakeapi_count(f->t.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f->t.api, i);
        const char *p = strstr(r->path, seg);
        if (p && (p[strlen(seg)] == '\0' || p[strlen(seg)] == '/' || p[strlen(seg)] == '?'))
            n++;
    }
    return n;
}

static int events(fixture_t *f, const char *reason)
{
    int n = 0;
    for (int i = 0; i < fakeapi_count(f->t.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f->t.api, i);
        if (strstr(r->path, "/events") && strstr(r->body, reason))
            n++;
    }
    return n;
}

/* Runs the loop until *counter reaches n (at most 20 s), and asserts it. */
static void run_until_count(fixture_t *f, const uint64_t *counter, uint64_t n)
{
    double end = ev_time() + 20;
    while (*counter < n && ev_time() < end)
        run_for(f, 0.02);
    assert_int_equal(*counter, n);
}

/* The replica leads now (the Lease expired): it decides everything again,
 * telling what is due. Returns the ChangesInitiated Events it created. */
static int lead(fixture_t *f)
{
    f->status = 200;
    f->released = false;
    ctl_set_leading(f->t.c, true);
    drain(f);
    return events(f, "ChangesInitiated");
}

/* Another writer (the leader) let name's release through: the watch event. */
static void released_elsewhere(fixture_t *f, const char *name)
{
    char text[1024];
    json_error_t je;
    kube_error e;
    if (strcmp(name, "a") == 0)
        snprintf(text, sizeof(text), "%s", RELEASED_HC("a"));
    else
        snprintf(text, sizeof(text), "%s", RELEASED_HC("b"));
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    assert_int_equal(kube_cache_apply(&f->t.c->hcs, KUBE_EVENT_MODIFIED, j, &e), 0);
    json_decref(j);
}

/* The leader is gone: after AFTER seconds with nothing let through, the
 * standby writes each held release once, alone, conditional on the version
 * it decided from; once the object shows it, it is counted, and told
 * (ChangesInitiated) when this replica leads soon after. */
static void test_writes_what_the_leader_left(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, AFTER);
    f.released = true;
    run_until(&f, due(&f, "a") + AFTER * 0.5);
    assert_int_equal(fakeapi_count(f.t.api), 0); /* not before its time */
    run_until_requests(&f, 2);
    assert_int_equal(writes_to(&f, "a"), 1);
    assert_int_equal(writes_to(&f, "b"), 1);
    for (int i = 0; i < fakeapi_count(f.t.api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(f.t.api, i);
        assert_string_equal(r->method, "PATCH");
        assert_null(strstr(r->path, "/status")); /* the change alone */
        assert_non_null(strstr(r->body, "\"resourceVersion\":\"7\""));
        assert_non_null(strstr(r->body, "\"image\":\"r:2\""));
        assert_non_null(strstr(r->body, REQUESTED ":null"));
    }
    /* The answers are the objects released: counted. */
    run_until_count(&f, &f.t.c->stats.standby_releases, 2);
    assert_int_equal(f.t.c->stats.standby_conflicts, 0);
    assert_int_equal(events(&f, ""), 0);
    record_t *a = ctl_record_find(f.t.c, R_HC, "clusters", "a");
    assert_true(a->let_through);
    run_for(&f, AFTER * 2);
    assert_int_equal(fakeapi_count(f.t.api), 2); /* nothing written twice */
    /* It leads now: the change it let through is told. */
    assert_int_equal(lead(&f), 2);
    testutil_ctl_api_stop(&f.t);
}

/* A leader that writes: each release it lets through tells the standby it
 * is there, and the standby waits AFTER from the last; when the leader
 * stops (it died half way through a boundary), the rest goes. */
static void test_waits_while_the_leader_writes(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, AFTER);
    run_until(&f, due(&f, "b") + AFTER * 0.3);
    released_elsewhere(&f, "a"); /* the leader wrote a */
    drain(&f);
    double seen = f.t.c->standby.seen;
    assert_true(seen > 0);
    /* Past b's own AFTER, within AFTER of a's release: nothing. */
    run_until(&f, seen + AFTER * 0.6);
    assert_int_equal(fakeapi_count(f.t.api), 0);
    /* AFTER since a's release with nothing more: the leader is gone. */
    run_until_requests(&f, 1);
    assert_int_equal(writes_to(&f, "b"), 1);
    assert_true(ev_time() >= seen + AFTER);
    testutil_ctl_api_stop(&f.t);
}

/* The leader wrote first after all: the standby's write is refused (409),
 * counted, and nothing more is written once the watch shows the release. */
static void test_loses_the_race(void **state)
{
    (void)state;
    fixture_t f;
    start_n(&f, AFTER, false);
    f.status = 409;
    run_until_requests(&f, 1);
    run_until_count(&f, &f.t.c->stats.standby_conflicts, 1);
    /* A conflict says the leader writes: the next try waits AFTER, and the
     * watch brings the release first. */
    assert_true(f.t.c->standby.seen > 0);
    released_elsewhere(&f, "a");
    run_for(&f, AFTER * 2);
    assert_int_equal(writes_to(&f, "a"), 1);
    assert_int_equal(f.t.c->stats.standby_releases, 0);
    /* Leading now: the leader that wrote told it; this replica does not. */
    assert_int_equal(lead(&f), 0);
    testutil_ctl_api_stop(&f.t);
}

/* The write answered, but as the object was: a webhook whose replica's
 * clock is a moment behind the window held the release again. Not counted;
 * decided again a second later and written again, as the leader's would. */
static void test_held_back_by_a_webhook(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, AFTER);
    f.held_back = true;
    f.released = true; /* b's answer */
    run_until_requests(&f, 2);
    run_until_count(&f, &f.t.c->stats.standby_releases, 1); /* b only */
    f.held_back = false;
    run_until_requests(&f, 3);
    assert_int_equal(writes_to(&f, "a"), 2);
    run_until_count(&f, &f.t.c->stats.standby_releases, 2);
    assert_int_equal(f.t.c->stats.standby_conflicts, 0);
    testutil_ctl_api_stop(&f.t);
}

/* Never: with --standby-release-after 0, on a replica shutting down, and
 * for a change a pre-start check applies to (its answers are the
 * leader's). A replica that stopped leading gives the next leader AFTER. */
static void test_never_when_it_must_not(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, 0);
    run_for(&f, AFTER * 3);
    assert_int_equal(fakeapi_count(f.t.api), 0);
    testutil_ctl_api_stop(&f.t);

    start(&f, AFTER);
    ctl_set_standby(f.t.c, 0); /* SIGTERM */
    run_for(&f, AFTER * 3);
    assert_int_equal(fakeapi_count(f.t.api), 0);
    testutil_ctl_api_stop(&f.t);

    check_runner_t run;
    start(&f, AFTER);
    testutil_ctl_checks_on(f.t.c, &run, CHECK_CONTROL_PLANE);
    f.t.c->leading = false;
    run_for(&f, AFTER * 3);
    assert_int_equal(fakeapi_count(f.t.api), 0);
    testutil_ctl_checks_off(f.t.c, &run);
    testutil_ctl_api_stop(&f.t);

    /* It led for a while after the changes were due, and follows again:
     * nothing goes before AFTER from the step down (what it noted before
     * it led is over). */
    start(&f, AFTER);
    run_until(&f, due(&f, "a") + AFTER * 0.5);
    f.t.c->leading = true;
    ctl_set_leading(f.t.c, false);
    double down = f.t.c->standby.seen;
    run_until(&f, down + AFTER * 0.6);
    assert_int_equal(fakeapi_count(f.t.api), 0);
    run_until_requests(&f, 2);
    assert_int_equal(writes_to(&f, "a"), 1);
    testutil_ctl_api_stop(&f.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_what_the_leader_left),
        cmocka_unit_test(test_waits_while_the_leader_writes),
        cmocka_unit_test(test_loses_the_race),
        cmocka_unit_test(test_held_back_by_a_webhook),
        cmocka_unit_test(test_never_when_it_must_not),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
