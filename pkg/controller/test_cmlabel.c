/* test_cmlabel.c: the opted-in label on the ConfigMaps an opted-in NodePool
 * names (cmlabel.c), written to a fake API server: one patch per ConfigMap
 * and none once it is right, removed when none names it, a missing
 * ConfigMap answered without an error and tried again later. */
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

#define LABEL "changemanagement.hypershift.openshift.io/opted-in"
#define NP(name, ann, config)                                                                \
    "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"" name      \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"7\",\"generation\":1,\"annotations\":{" \
    ann "}},\"spec\":{\"clusterName\":\"hc\",\"config\":[" config "]}}"
#define STANZA "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\""
#define CM(name, rv)                                                                         \
    "{\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"" name     \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\",\"labels\":{\"" LABEL         \
    "\":\"true\"}}}"

typedef struct fixture {
    testutil_ctl_api_t t;
    int status;         /* the API server's status */
    const char *reply;  /* its answer; NULL: "{}" */
} fixture_t;

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fixture_t *f = ud;
    *status = strcmp(r->method, "POST") == 0 ? 201 : f->status; /* Events are created */
    return f->reply ? f->reply : "{}";
}

static void start(fixture_t *f)
{
    memset(f, 0, sizeof(*f));
    f->status = 200;
    testutil_ctl_api_start(&f->t, answer, f, "2030-01-09T06:00:00Z");
    f->t.c->admission_holds = true;
    testutil_ctl_add(&f->t.c->hcs, "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":"
                                 "\"clusters\",\"name\":\"hc\",\"resourceVersion\":\"1\"}}");
    /* np names tuned and shared with a stanza; np2 shared with one; bare
     * (no stanza, nor its HostedCluster) names free. */
    testutil_ctl_add(&f->t.c->nps, NP("np", STANZA, "{\"name\":\"tuned\"},{\"name\":\"shared\"}"));
    testutil_ctl_add(&f->t.c->nps, NP("np2", STANZA, "{\"name\":\"shared\"}"));
    testutil_ctl_add(&f->t.c->nps, NP("bare", "", "{\"name\":\"free\"}"));
}

/* Reconciles ConfigMap name's record and waits for what it wrote. */
static void reconcile(fixture_t *f, const char *name)
{
    record_t *r = ctl_record_get(f->t.c, R_CM, "clusters", name);
    assert_non_null(r);
    ctl_reconcile(f->t.c, r);
    testutil_ctl_api_settle(&f->t);
}

/* The handlers queue the ConfigMaps of the NodePools they see: those named,
 * whatever the stanza (the reconcile decides). */
static void test_queued_by_nodepools(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    assert_non_null(ctl_record_find(f.t.c, R_CM, "clusters", "tuned"));
    assert_non_null(ctl_record_find(f.t.c, R_CM, "clusters", "shared"));
    assert_non_null(ctl_record_find(f.t.c, R_CM, "clusters", "free"));
    assert_null(ctl_record_find(f.t.c, R_CM, "clusters", "other"));
    testutil_ctl_api_stop(&f.t);
}

static void test_added_once(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    f.reply = CM("tuned", "8"); /* the answer: the ConfigMap as labelled */
    reconcile(&f, "tuned");
    assert_int_equal(fakeapi_count(f.t.api), 1);
    const fakeapi_req_t *q = fakeapi_nth(f.t.api, 0);
    assert_string_equal(q->method, "PATCH");
    assert_string_equal(q->path, "/api/v1/namespaces/clusters/configmaps/tuned");
    assert_non_null(strstr(q->body, "\"" LABEL "\":\"true\""));
    assert_null(strstr(q->body, "resourceVersion"));
    /* The answer is cached: decided again, nothing more is written, and
     * nothing is remembered. */
    assert_non_null(kube_cache_get(&f.t.c->cms, "clusters", "tuned"));
    reconcile(&f, "tuned");
    assert_int_equal(fakeapi_count(f.t.api), 1);
    assert_null(ctl_record_find(f.t.c, R_CM, "clusters", "tuned"));
    /* A ConfigMap named only by a pool that did not opt in: never written. */
    reconcile(&f, "free");
    assert_int_equal(fakeapi_count(f.t.api), 1);
    testutil_ctl_api_stop(&f.t);
}

static void test_removed_when_named_no_more(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    testutil_ctl_add(&f.t.c->cms, CM("shared", "5"));
    testutil_ctl_add(&f.t.c->cms, CM("old", "5"));
    /* shared: np2 goes, np still names it: nothing to write. */
    const kube_obj *o = kube_cache_get(&f.t.c->nps, "clusters", "np2");
    json_t *j = json_pack("{s:{s:s, s:s, s:s}}", "metadata", "namespace", "clusters", "name",
                          "np2", "resourceVersion", "7");
    kube_error e;
    assert_non_null(o);
    assert_int_equal(kube_cache_apply(&f.t.c->nps, KUBE_EVENT_DELETED, j, &e), 0);
    json_decref(j);
    reconcile(&f, "shared");
    assert_int_equal(fakeapi_count(f.t.api), 0);
    /* old: no NodePool names it: one patch removes the label. */
    reconcile(&f, "old");
    assert_int_equal(fakeapi_count(f.t.api), 1);
    assert_non_null(strstr(fakeapi_nth(f.t.api, 0)->body, "\"" LABEL "\":null"));
    /* Until the watch says it left the selector, the cached version is
     * the one our write replaced: nothing is written again. */
    reconcile(&f, "old");
    assert_int_equal(fakeapi_count(f.t.api), 1);
    testutil_ctl_api_stop(&f.t);
}

static void test_missing_once(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    f.status = 404;
    f.reply = "{\"kind\":\"Status\",\"code\":404,\"reason\":\"NotFound\"}";
    reconcile(&f, "tuned");
    testutil_ctl_api_settle(&f.t); /* and the Event */
    record_t *r = ctl_record_find(f.t.c, R_CM, "clusters", "tuned");
    assert_non_null(r);
    assert_true(r->cm_absent);
    assert_int_equal(f.t.c->stats.write_errors, 0); /* an answer, not a failure */
    assert_true(ev_is_active(&r->timer));         /* tried again later */
    double first = ev_timer_remaining(f.t.loop, &r->timer);
    assert_true(first > 5 && first <= 10);
    /* Told once on the NodePool that names it. */
    assert_int_equal(fakeapi_count(f.t.api), 2);
    const char *ev = fakeapi_nth(f.t.api, 1)->body;
    assert_non_null(strstr(fakeapi_nth(f.t.api, 1)->path, "/namespaces/clusters/events"));
    assert_non_null(strstr(ev, "\"reason\":\"ConfigMapNotFound\""));
    assert_non_null(strstr(ev, "\"kind\":\"NodePool\""));
    assert_non_null(strstr(ev, "\"name\":\"np\""));
    assert_non_null(strstr(ev, "\"uid\":\"u-np\""));
    assert_non_null(strstr(ev, "names ConfigMap tuned, which does not exist"));
    reconcile(&f, "tuned");
    testutil_ctl_api_settle(&f.t);
    assert_int_equal(fakeapi_count(f.t.api), 3); /* the patch again, no second Event */
    assert_true(ev_timer_remaining(f.t.loop, &r->timer) > first); /* slower each time */
    /* Created: the next try labels it and the record goes. */
    f.status = 200;
    f.reply = CM("tuned", "9");
    reconcile(&f, "tuned");
    reconcile(&f, "tuned");
    assert_int_equal(fakeapi_count(f.t.api), 4);
    assert_null(ctl_record_find(f.t.c, R_CM, "clusters", "tuned"));
    testutil_ctl_api_stop(&f.t);
}

/* Only the leader writes, and only while the webhooks are served. */
static void test_leader_with_webhooks_only(void **state)
{
    (void)state;
    fixture_t f;
    start(&f);
    f.t.c->leading = false;
    reconcile(&f, "tuned");
    f.t.c->leading = true;
    f.t.c->admission_holds = false;
    reconcile(&f, "shared");
    assert_int_equal(fakeapi_count(f.t.api), 0);
    testutil_ctl_api_stop(&f.t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queued_by_nodepools),
        cmocka_unit_test(test_added_once),
        cmocka_unit_test(test_removed_when_named_no_more),
        cmocka_unit_test(test_missing_once),
        cmocka_unit_test(test_leader_with_webhooks_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
