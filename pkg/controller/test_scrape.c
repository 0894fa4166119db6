/* test_scrape.c: /metrics values come from the same plan as reconcile, and a
 * scrape creates no per-object state. The controller's caches are filled
 * directly (no API server): the handlers run as they do for watch events. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "log/log.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", e.text, text);
    return j;
}

static void apply(kube_cache *cache, const char *text)
{
    kube_error e;
    json_t *j = J(text);
    assert_int_equal(kube_cache_apply(cache, KUBE_EVENT_ADDED, j, &e), 0);
    json_decref(j);
}

#define META(kind, ns, name)                                                                   \
    "\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name           \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"1\",\"generation\":1"

/* A controller whose clock stands at now, with a policy, two HostedClusters
 * (one following the policy, one Restrictive), their NodePools and CAPI
 * objects in its caches. */
static ctl_controller_t *controller(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->loop = loop;
    c->opts.clock = (ctl_clock_t){true, now, ev_now(loop), 1.0};
    snprintf(c->capi_version, sizeof(c->capi_version), "v1beta1");
    assert_int_equal(kube_objmap_init(&c->records, 16), 0);
    assert_int_equal(kube_cache_init(&c->policies, &ctl_policy_ops, c), 0);
    assert_int_equal(kube_cache_init(&c->hcs, &ctl_hc_ops, c), 0);
    assert_int_equal(kube_cache_init(&c->nps, &ctl_np_ops, c), 0);
    assert_int_equal(kube_cache_init(&c->clusters, &ctl_cluster_ops, c), 0);
    assert_int_equal(kube_cache_init(&c->mds, &ctl_machines_ops, c), 0);
    assert_int_equal(kube_cache_init(&c->mss, &ctl_machines_ops, c), 0);
    apply(&c->policies,
          "{" META("HostedChangeManagementPolicy", "clusters", "weekend") "},\"spec\":{"
          "\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{\"permit\":{"
          "\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"startTime\":\"01:00\",\"duration\":\"4h\"}}}}");
    apply(&c->hcs, "{" META("HostedCluster", "clusters", "a") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\"}},"
                   "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"}},"
                   "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}");
    apply(&c->hcs, "{" META("HostedCluster", "clusters", "b") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\"}}}");
    apply(&c->nps, "{" META("NodePool", "clusters", "np1") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\"}},"
                   "\"spec\":{\"clusterName\":\"a\"}}");
    apply(&c->nps, "{" META("NodePool", "clusters", "np2") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/policy\":\"missing\"}},"
                   "\"spec\":{\"clusterName\":\"b\"}}");
    apply(&c->clusters, "{" META("Cluster", "clusters-a", "a-x1") "}}");
    apply(&c->mds, "{" META("MachineDeployment", "clusters-a", "np1") "},"
                   "\"spec\":{\"replicas\":3},\"status\":{\"updatedReplicas\":1}}");
    return c;
}

/* Frees every record (as if none had been reconciled yet). */
static void drop_records(ctl_controller_t *c)
{
    for (size_t i = 0; i < c->records.nbuckets; i++) {
        kube_objkey_t *k = c->records.buckets[i], *next;
        for (; k; k = next) {
            next = k->hnext;
            ctl_record_free((record_t *)k);
        }
        c->records.buckets[i] = NULL;
    }
    c->records.count = 0;
    c->queue = (ctl_queue_t){0};
}

typedef struct seen {
    ctl_object_metrics_t m[8];
    char names[8][64];
    int n;
} seen_t;

static void take(const ctl_object_metrics_t *m, void *ud)
{
    seen_t *s = ud;
    assert_true(s->n < 8);
    s->m[s->n] = *m;
    snprintf(s->names[s->n], sizeof(s->names[0]), "%s", m->name);
    s->m[s->n].name = s->names[s->n];
    s->n++;
}

static const ctl_object_metrics_t *find(const seen_t *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return &s->m[i];
    fail_msg("no metrics for %s", name);
    return NULL;
}

static sched_time_t T(const char *s)
{
    sched_time_t t;
    assert_int_equal(sched_parse_rfc3339(s, &t), 0);
    return t;
}

static void test_scrape_creates_no_records(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = controller(loop, T("2026-03-04T12:00:00Z"));
    seen_t s = {0};
    drop_records(c);
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(c->records.count, 0);
    assert_int_equal(s.n, 4);
    const ctl_object_metrics_t *a = find(&s, "a");
    assert_string_equal(a->strategy, "MaintenanceSchedule"); /* its policy's */
    assert_string_equal(a->stanza, "ByPolicy");
    assert_int_equal(a->change_pending, 2);
    /* Wednesday 12:00 to Saturday 01:00. */
    assert_true(a->next_change_eta ==
                (double)(T("2026-03-07T01:00:00Z") - T("2026-03-04T12:00:00Z")));
    const ctl_object_metrics_t *np2 = find(&s, "np2"); /* its policy is missing */
    assert_true(np2->next_change_eta == -2);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

/* For every object and several instants, the values a scrape reports are
 * the ones the reconcile plan decides from the same cache. */
static void test_scrape_matches_reconcile_plan(void **state)
{
    (void)state;
    const char *instants[] = {"2026-03-04T12:00:00Z", "2026-03-07T02:00:00Z",
                              "2026-03-07T05:00:00Z"};
    for (size_t i = 0; i < sizeof(instants) / sizeof(instants[0]); i++) {
        struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
        sched_time_t now = T(instants[i]);
        ctl_controller_t *c = controller(loop, now);
        decide_view_t rv;
        seen_t s = {0};
        ctl_view_init(c, true, &rv);
        ctl_foreach_object_metrics(c, take, &s);
        const struct {
            decide_kind_t kind;
            const char *name;
        } objs[] = {{DECIDE_HC, "a"}, {DECIDE_HC, "b"}, {DECIDE_NP, "np1"}, {DECIDE_NP, "np2"}};
        for (size_t k = 0; k < 4; k++) {
            decide_plan_t p;
            const ctl_object_metrics_t *m = find(&s, objs[k].name);
            assert_int_equal(decide_plan(&rv, objs[k].kind, "clusters", objs[k].name, now, &p,
                                         NULL, 0),
                             0);
            assert_true(p.decided);
            assert_int_equal(m->change_pending, p.d.pending_metric);
            assert_string_equal(m->strategy,
                                stanza_enforced_strategy(&p.managed->stanza, p.res, now));
            assert_string_equal(m->stanza, stanza_configured_strategy(&p.managed->stanza));
            bool degraded = p.res->degraded || (p.cluster && p.cluster->degraded);
            if (!degraded && p.d.state.permitted)
                assert_true(m->next_change_eta == 0);
            if (!degraded && !p.d.state.permitted && p.d.state.has_next)
                assert_true(m->next_change_eta == (double)(p.d.state.next.start - now));
            if (degraded)
                assert_true(m->next_change_eta == -2);
            decide_plan_free(&p);
        }
        ctl_stop(c);
        ev_loop_destroy(loop);
    }
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrape_creates_no_records),
        cmocka_unit_test(test_scrape_matches_reconcile_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
