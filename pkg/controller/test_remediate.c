/* test_remediate.c: the older template's machines that fail their health
 * check while a drift is held (remediate.c), against a fake API server: a
 * MachineSet of an older revision that reports Remediating has exactly the
 * machines Cluster API declined to remediate deleted, conditional on their
 * uid and resourceVersion, each counted and told on the NodePool; nothing
 * without a held drift, on the current revision, when not leading or when
 * turned off; a delete the preconditions refuse is neither counted nor told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "kube/testutil_fakeapi.h"

#define NS "clusters-hc"
#define DRIFT_ANN                                                                            \
    "\"changemanagement.hypershift.openshift.io/held-drift\":\"{\\\"since\\\":"              \
    "\\\"2030-01-09T05:00:00Z\\\",\\\"strategy\\\":\\\"RollingUpdate\\\",\\\"input\\\":"    \
    "\\\"user data a -> b\\\"}\","
/* MachineDeployment np at revision 3, its strategy and annotations given. */
#define MD(strategy, ann)                                                                    \
    "{\"kind\":\"MachineDeployment\",\"metadata\":{\"namespace\":\"" NS "\",\"name\":\"np\"," \
    "\"uid\":\"u-md\",\"resourceVersion\":\"5\",\"annotations\":{" ann                       \
    "\"hypershift.openshift.io/nodePool\":\"clusters/np\","                                  \
    "\"machinedeployment.clusters.x-k8s.io/revision\":\"3\"}},"                              \
    "\"spec\":{\"strategy\":{\"type\":\"" strategy "\"}}}"
/* MachineSet name at revision rev, its Remediating condition given. */
#define MS(name, rev, remediating) MS_AT(name, rev, remediating, "6")
#define MS_AT(name, rev, remediating, rv)                                                    \
    "{\"kind\":\"MachineSet\",\"metadata\":{\"namespace\":\"" NS "\",\"name\":\"" name      \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\",\"labels\":{"                        \
    "\"cluster.x-k8s.io/deployment-name\":\"np\"},\"annotations\":{"                         \
    "\"machinedeployment.clusters.x-k8s.io/revision\":\"" rev "\"}},"                        \
    "\"status\":{\"v1beta2\":{\"conditions\":[{\"type\":\"Remediating\",\"status\":\""      \
    remediating "\"}]}}}"
/* A Machine of MachineSet old: its conditions (v1beta1 API: v1beta2 ones
 * under status.v1beta2). */
#define MACHINE(name, set, extra_meta, health, owner, reason)                                \
    "{\"metadata\":{\"namespace\":\"" NS "\",\"name\":\"" name "\",\"uid\":\"u-" name       \
    "\",\"resourceVersion\":\"9" name "\"," extra_meta "\"labels\":{"                        \
    "\"cluster.x-k8s.io/set-name\":\"" set "\"}},\"status\":{\"v1beta2\":{\"conditions\":["  \
    "{\"type\":\"HealthCheckSucceeded\",\"status\":\"" health "\"},"                         \
    "{\"type\":\"OwnerRemediated\",\"status\":\"" owner "\",\"reason\":\"" reason "\"}]}}}"
#define MACHINES                                                                             \
    "{\"kind\":\"MachineList\",\"items\":["                                                  \
    MACHINE("m-sick", "np-old", "", "False", "False", "CannotBeRemediated") ","              \
    MACHINE("m-ok", "np-old", "", "True", "False", "CannotBeRemediated") ","                 \
    MACHINE("m-waiting", "np-old", "", "False", "False", "WaitingForRemediation") ","        \
    MACHINE("m-going", "np-old", "\"deletionTimestamp\":\"2030-01-09T05:59:00Z\",", "False", \
            "False", "CannotBeRemediated") ","                                               \
    MACHINE("m-other", "np-new", "", "False", "False", "CannotBeRemediated") "]}"
/* m-sick once our delete is carried out: deleting (Cluster API's finalizer). */
#define MACHINES_SICK_GOING                                                                  \
    "{\"kind\":\"MachineList\",\"items\":["                                                  \
    MACHINE("m-sick", "np-old", "\"deletionTimestamp\":\"2030-01-09T06:00:01Z\",", "False",  \
            "False", "CannotBeRemediated") "]}"

typedef struct fixture {
    testutil_ctl_api_t t;
    int deletes;        /* DELETEs answered */
    int deletes_ok;     /* of them, the first ones answered 200; later ones 409 */
    int lists;          /* Machine LISTs answered */
    int lists_before;   /* of them, the first ones served before the first delete */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    *status = strcmp(r->method, "POST") == 0 ? 201 : 200;
    if (strcmp(r->method, "DELETE") == 0 && ++f->deletes > f->deletes_ok) {
        *status = 409; /* the preconditions: the machine changed since it was listed */
        return "{\"kind\":\"Status\",\"status\":\"Failure\",\"reason\":\"Conflict\","
               "\"code\":409}";
    }
    if (strcmp(r->method, "GET") != 0 || !strstr(r->path, "/machines"))
        return "{}";
    return ++f->lists > f->lists_before ? MACHINES_SICK_GOING : MACHINES;
}

static void start(fixture_t *f, const char *md, const char *old_remediating)
{
    memset(f, 0, sizeof(*f));
    f->deletes_ok = f->lists_before = 1000;
    testutil_ctl_api_start(&f->t, answer, f, "2030-01-09T06:00:00Z");
    f->t.c->opts.remediate_drift = true;
    testutil_ctl_add(&f->t.c->nps, "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":"
                                   "\"clusters\",\"name\":\"np\",\"uid\":\"u-np\","
                                   "\"resourceVersion\":\"1\"},\"spec\":{\"clusterName\":\"hc\"}}");
    testutil_ctl_add(&f->t.c->mds, md);
    testutil_ctl_add(&f->t.c->mss, MS("np-new", "3", "False"));
    testutil_ctl_add(&f->t.c->mss, old_remediating);
}

/* Runs the queued remediation records (the other records queued are left
 * alone) until their LISTs and writes are answered; returns how many were
 * reconciled. */
static int run(fixture_t *f)
{
    int n = 0;
    for (ctl_qitem_t *it; (it = ctl_queue_pop(&f->t.c->queue)) != NULL;) {
        record_t *r = RECORD_OF(q, it);
        if (r->gone && r->wt.inflight == 0)
            ctl_record_free(r);
        if (r->gone || r->kind != R_REM)
            continue;
        char name[64];
        snprintf(name, sizeof(name), "%s", r->name);
        ctl_reconcile(f->t.c, r);
        n++;
        double until = ev_time() + 20;
        while ((r = ctl_record_find(f->t.c, R_REM, NS, name)) && r->rem_listing &&
               ev_time() < until)
            ev_run(f->t.loop, EVRUN_ONCE);
        testutil_ctl_api_settle(&f->t);
    }
    return n;
}

static bool is(const fakeapi_req_t *q, const char *method, const char *path_end)
{
    size_t l = strlen(q->path), e = strlen(path_end);
    return strcmp(q->method, method) == 0 && l >= e && strcmp(q->path + l - e, path_end) == 0;
}

static int count(fixture_t *f, const char *method, const char *path_end)
{
    int n = 0;
    for (int i = 0; i < fakeapi_count(f->t.api); i++)
        n += is(fakeapi_nth(f->t.api, i), method, path_end);
    return n;
}

static const fakeapi_req_t *find(fixture_t *f, const char *method, const char *path_end)
{
    for (int i = 0; i < fakeapi_count(f->t.api); i++)
        if (is(fakeapi_nth(f->t.api, i), method, path_end))
            return fakeapi_nth(f->t.api, i);
    return NULL;
}

/* The one machine Cluster API declined for its revision is deleted, with
 * preconditions; the others (healthy, waiting for Cluster API, already
 * going, of another MachineSet) are not; counted and told on the NodePool. */
static void test_deletes_declined_machine(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "True"));
    assert_int_equal(run(&f), 1);
    const fakeapi_req_t *list = find(&f, "GET", "/namespaces/" NS "/machines");
    assert_non_null(list);
    assert_string_equal(list->query, "labelSelector=cluster.x-k8s.io%2Fset-name%3Dnp-old");
    assert_int_equal(count(&f, "DELETE", "/machines/m-sick"), 1);
    assert_int_equal(count(&f, "DELETE", ""), 1);
    const fakeapi_req_t *del = find(&f, "DELETE", "/machines/m-sick");
    assert_string_equal(del->path,
                        "/apis/cluster.x-k8s.io/v1beta1/namespaces/" NS "/machines/m-sick");
    assert_non_null(strstr(del->body, "\"preconditions\":{\"uid\":\"u-m-sick\","
                                      "\"resourceVersion\":\"9m-sick\"}"));
    assert_int_equal(f.t.c->stats.drift_remediations, 1);
    const fakeapi_req_t *ev = find(&f, "POST", "/namespaces/clusters/events");
    assert_non_null(ev);
    assert_non_null(strstr(ev->body, "\"reason\":\"MachineRemediated\""));
    assert_non_null(strstr(ev->body, "\"name\":\"np\""));
    assert_non_null(strstr(ev->body, "Machine m-sick of MachineSet np-old failed its health "
                                     "check"));
    assert_non_null(strstr(ev->body, "(user data a -> b)"));
    /* The MachineSet's next event with nothing to remediate forgets it. */
    testutil_ctl_add(&f.t.c->mss, MS_AT("np-old", "2", "False", "8"));
    assert_int_equal(run(&f), 1);
    assert_null(ctl_record_find(f.t.c, R_REM, NS, "np-old"));
    assert_int_equal(count(&f, "GET", "/machines"), 1);
    testutil_ctl_api_stop(&f.t);
}

/* A second LIST served before the first delete lists the machine again,
 * not yet deleting: its delete is refused by the preconditions (409), and
 * the machine is counted and told once. */
static void test_second_list_before_delete(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "True"));
    f.deletes_ok = 1;
    f.lists_before = 2;
    assert_int_equal(run(&f), 1);
    testutil_ctl_add(&f.t.c->mss, MS_AT("np-old", "2", "True", "8"));
    /* Refused, it is decided again: the next LIST shows it deleting. */
    assert_int_equal(run(&f), 2);
    assert_int_equal(count(&f, "GET", "/machines"), 3);
    assert_int_equal(count(&f, "DELETE", "/machines/m-sick"), 2);
    assert_int_equal(f.t.c->stats.drift_remediations, 1);
    int events = 0;
    for (int i = 0; i < fakeapi_count(f.t.api); i++) {
        const fakeapi_req_t *q = fakeapi_nth(f.t.api, i);
        events += is(q, "POST", "/namespaces/clusters/events") &&
                  strstr(q->body, "\"reason\":\"MachineRemediated\"") != NULL;
    }
    assert_int_equal(events, 1);
    testutil_ctl_api_stop(&f.t);
}

/* Nothing is listed or deleted where Cluster API remediates, or would at
 * a rollout that is not deferred by us. */
static void test_nothing_without_held_drift(void **state)
{
    (void)state;
    struct {
        const char *md, *old;
        bool leading, on;
    } cases[] = {
        /* no drift held: the rollout deletes it */
        {MD("RollingUpdate", ""), MS("np-old", "2", "True"), true, true},
        /* the pool's own OnDelete, no drift: its owner's machines to delete */
        {MD("OnDelete", ""), MS("np-old", "2", "True"), true, true},
        /* the current revision: Cluster API remediates it */
        {MD("OnDelete", DRIFT_ANN), MS("np-old", "3", "True"), true, true},
        /* nothing to remediate */
        {MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "False"), true, true},
        /* not the leader */
        {MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "True"), false, true},
        /* --remediate-held-drift=false */
        {MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "True"), true, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        fixture_t f;
        memset(&f, 0, sizeof(f));
        testutil_ctl_api_start(&f.t, answer, &f, "2030-01-09T06:00:00Z");
        f.t.c->opts.remediate_drift = cases[i].on;
        f.t.c->leading = cases[i].leading;
        testutil_ctl_add(&f.t.c->mds, cases[i].md);
        testutil_ctl_add(&f.t.c->mss, cases[i].old);
        run(&f);
        assert_null(ctl_record_find(f.t.c, R_REM, NS, "np-old"));
        assert_int_equal(count(&f, "GET", "/machines"), 0);
        assert_int_equal(count(&f, "DELETE", ""), 0);
        assert_int_equal(f.t.c->stats.drift_remediations, 0);
        testutil_ctl_api_stop(&f.t);
    }
}

/* A leader that loses the lead while its LIST is in flight deletes nothing. */
static void test_lead_lost_while_listing(void **state)
{
    (void)state;
    fixture_t f;
    start(&f, MD("OnDelete", DRIFT_ANN), MS("np-old", "2", "True"));
    record_t *r = ctl_record_find(f.t.c, R_REM, NS, "np-old");
    assert_non_null(r);
    assert_true(r->q.queued);
    for (ctl_qitem_t *it; (it = ctl_queue_pop(&f.t.c->queue)) != NULL;)
        assert_false(RECORD_OF(q, it)->gone);
    ctl_reconcile(f.t.c, r);
    assert_true(r->rem_listing);
    f.t.c->leading = false;
    double until = ev_time() + 20;
    while ((r = ctl_record_find(f.t.c, R_REM, NS, "np-old")) && r->rem_listing &&
           ev_time() < until)
        ev_run(f.t.loop, EVRUN_ONCE);
    assert_int_equal(count(&f, "GET", "/machines"), 1);
    assert_int_equal(count(&f, "DELETE", ""), 0);
    assert_null(ctl_record_find(f.t.c, R_REM, NS, "np-old"));
    testutil_ctl_api_stop(&f.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deletes_declined_machine),
        cmocka_unit_test(test_second_list_before_delete),
        cmocka_unit_test(test_nothing_without_held_drift),
        cmocka_unit_test(test_lead_lost_while_listing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
