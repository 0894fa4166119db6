/* test_reassert.c: a pause another writer removed while changes are
 * restricted is put back and told once per removal (a PauseReasserted
 * Event, hcp_controller_pause_reassertions_total). With Cluster API running,
 * the removal is followed by Cluster API's own write of the Cluster (its
 * Paused condition), and the re-assertion, conditional on the version it
 * read, conflicts: written again on the newer version, it is the same
 * removal. A pause removed again after a re-assertion went through is a new
 * one. The controller writes to a fake API server that answers 409 when
 * the test says so. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/slim.h"

#define CLUSTER_PATH "/apis/cluster.x-k8s.io/v1beta1/namespaces/clusters-a/clusters/a-x1"
#define EVENTS_PATH "/api/v1/namespaces/clusters/events"

/* The Cluster of HostedCluster clusters/a at resourceVersion rv: our
 * marker, and the pause when paused. */
static void cluster(kube_cache *cache, const char *rv, bool paused)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"kind\":\"Cluster\",\"metadata\":{\"namespace\":\"clusters-a\","
             "\"name\":\"a-x1\",\"uid\":\"u-a-x1\",\"resourceVersion\":\"%s\","
             "\"generation\":1,\"annotations\":{%s\"" DECIDE_MARKER_ANNOTATION "\":\""
             DECIDE_MARKER_VALUE "\"}}}",
             rv, paused ? "\"" DECIDE_PAUSED_ANNOTATION "\":\"true\"," : "");
    testutil_ctl_add(cache, json);
}

/* HostedCluster clusters/a, Restrictive, at resourceVersion h<gen>. */
static void hosted_cluster(kube_cache *cache, int gen)
{
    char json[1024];
    snprintf(json, sizeof(json),
             "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"clusters\","
             "\"name\":\"a\",\"uid\":\"u-a\",\"resourceVersion\":\"h%d\","
             "\"generation\":1,\"annotations\":{"
             "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\"}},"
             "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"}}}",
             gen);
    testutil_ctl_add(cache, json);
}

typedef struct fixture {
    testutil_ctl_api_t t;
    int conflicts; /* how many of the next Cluster patches answer 409 */
    int hc_gen;    /* the HostedCluster's version in the cache */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    *status = 200;
    if (strcmp(r->method, "PATCH") == 0 && strcmp(r->path, CLUSTER_PATH) == 0 &&
        f->conflicts > 0) {
        f->conflicts--;
        *status = 409;
        return "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\","
               "\"code\":409,\"message\":\"the object has been modified\"}";
    }
    return "{}"; /* not an object the caches keep: they stay as the test sets them */
}

static int setup(void **state)
{
    static fixture_t f;
    f = (fixture_t){0};
    testutil_ctl_api_start(&f.t, answer, &f, "2030-01-09T06:00:00Z");
    hosted_cluster(&f.t.c->hcs, ++f.hc_gen);
    cluster(&f.t.c->clusters, "7", true);
    *state = &f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    testutil_ctl_api_stop(&f->t);
    return 0;
}

/* Reconciles clusters/a (as its queue would), waits for its writes, and
 * brings the HostedCluster's status as written into the cache (as the
 * watch would: the version the status was written on is stale). */
static void reconcile(fixture_t *f)
{
    record_t *r = ctl_record_get(f->t.c, R_HC, "clusters", "a");
    assert_non_null(r);
    while (ctl_queue_pop(&f->t.c->queue))
        ;
    r->wt.redo = false;
    ctl_reconcile(f->t.c, r);
    testutil_ctl_api_settle(&f->t);
    hosted_cluster(&f->t.c->hcs, ++f->hc_gen);
}

/* How many PauseReasserted Events were posted so far. */
static int told(fixture_t *f)
{
    int n = 0, k = fakeapi_count_of(f->t.api, "POST", EVENTS_PATH, false);
    for (int i = 0; i < k; i++)
        if (strstr(fakeapi_find(f->t.api, "POST", EVENTS_PATH, false, i)->body,
                   "\"PauseReasserted\""))
            n++;
    return n;
}

static int cluster_patches(fixture_t *f)
{
    return fakeapi_count_of(f->t.api, "PATCH", CLUSTER_PATH, false);
}

static void test_conflict_is_the_same_removal(void **state)
{
    fixture_t *f = *state;
    reconcile(f); /* paused, with our marker: nothing to say */
    assert_int_equal(told(f), 0);
    assert_int_equal(f->t.c->stats.reasserts, 0);

    cluster(&f->t.c->clusters, "8", false); /* somebody removes the pause */
    f->conflicts = 1;                     /* and Cluster API writes the Cluster first */
    reconcile(f);
    assert_int_equal(cluster_patches(f), 1);
    assert_int_equal(told(f), 1);
    assert_int_equal(f->t.c->stats.reasserts, 1);

    cluster(&f->t.c->clusters, "9", false); /* Cluster API's write, still without the pause */
    reconcile(f);
    assert_int_equal(cluster_patches(f), 2); /* written again on the newer version */
    assert_int_equal(told(f), 1);            /* the same removal: told once */
    assert_int_equal(f->t.c->stats.reasserts, 1);
}

static void test_removed_again_is_told_again(void **state)
{
    fixture_t *f = *state;
    cluster(&f->t.c->clusters, "8", false);
    reconcile(f); /* re-asserted on version 8, the write went through */
    assert_int_equal(told(f), 1);

    /* Removed again before the controller saw its own write (HyperShift's
     * NodePool reconcile deletes pauses it did not set, at once). */
    cluster(&f->t.c->clusters, "10", false);
    reconcile(f);
    assert_int_equal(cluster_patches(f), 2);
    assert_int_equal(told(f), 2);
    assert_int_equal(f->t.c->stats.reasserts, 2);
}

static void test_seen_in_place_then_removed(void **state)
{
    fixture_t *f = *state;
    f->conflicts = 1;
    cluster(&f->t.c->clusters, "8", false);
    reconcile(f); /* conflicted */
    cluster(&f->t.c->clusters, "9", true); /* another writer put it back meanwhile */
    reconcile(f);
    assert_int_equal(cluster_patches(f), 1);
    cluster(&f->t.c->clusters, "10", false); /* and it is removed again */
    reconcile(f);
    assert_int_equal(cluster_patches(f), 2);
    assert_int_equal(told(f), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_conflict_is_the_same_removal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_removed_again_is_told_again, setup, teardown),
        cmocka_unit_test_setup_teardown(test_seen_in_place_then_removed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
