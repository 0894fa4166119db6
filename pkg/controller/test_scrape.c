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
#include "controller/testutil_ctl.h"
#include "decide/testutil_decide.h"
#include "log/log.h"
#include "policy/ics.h"
#include "schedule/testutil_sched.h"

#define apply testutil_ctl_add

#define META(kind, ns, name)                                                                   \
    "\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name           \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"1\",\"generation\":1"

/* A controller whose clock stands at now, with a policy, two HostedClusters
 * (one following the policy, one Restrictive), their NodePools and CAPI
 * objects in its caches. */
static ctl_controller_t *controller(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = testutil_ctl_new(loop, NULL, now);
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
    size_t i;
    hcp_hnode_t *n, *next;

    HCP_HTAB_FOREACH_SAFE(&c->records.tab, i, n, next)
        ctl_record_free((record_t *)n);
    for (i = 0; i < c->records.tab.nbuckets; i++)
        c->records.tab.buckets[i] = NULL;
    c->records.tab.count = 0;
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

static void test_scrape_creates_no_records(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = controller(loop, tu_at("2026-03-04T12:00:00Z"));
    seen_t s = {0};
    drop_records(c);
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(c->records.tab.count, 0);
    assert_int_equal(s.n, 4);
    const ctl_object_metrics_t *a = find(&s, "a");
    assert_string_equal(a->strategy, "MaintenanceSchedule"); /* its policy's */
    assert_string_equal(a->stanza, "ByPolicy");
    assert_int_equal(a->change_pending, 2);
    /* Wednesday 12:00 to Saturday 01:00. */
    assert_true(a->next_change_eta ==
                (double)(tu_at("2026-03-07T01:00:00Z") - tu_at("2026-03-04T12:00:00Z")));
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
        sched_time_t now = tu_at(instants[i]);
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

static void set_clock(ctl_controller_t *c, sched_time_t now)
{
    c->opts.clock = (ctl_clock_t){true, now, ev_now(c->loop), 1.0};
}

/* A scrape reads the inputs reconcile left on a record while they are
 * current, and plans afresh once the plan's wake instant has passed (its
 * timer not fired yet), the record is queued again, or a policy changed. */
static void test_scrape_reuses_current_reconcile(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    sched_time_t wed = tu_at("2026-03-04T12:00:00Z");
    ctl_controller_t *c = controller(loop, wed);
    while (!ctl_queue_empty(&c->queue)) /* as the drain does, without the sync check */
        ctl_queue_pop(&c->queue);
    const char *names[] = {"a", "b"};
    for (int i = 0; i < 2; i++)
        ctl_reconcile(c, ctl_record_get(c, R_HC, "clusters", names[i]));
    record_t *a = ctl_record_find(c, R_HC, "clusters", "a");
    assert_non_null(a);
    assert_true(a->have_metrics);
    assert_true(a->metrics_until == tu_at("2026-03-07T01:00:00Z"));
    a->metrics.pending = 7; /* only a scrape that reads the record reports this */

    seen_t s = {0};
    set_clock(c, wed + 3600);
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(find(&s, "a")->change_pending, 7);
    assert_true(find(&s, "a")->next_change_eta ==
                (double)(tu_at("2026-03-07T01:00:00Z") - (wed + 3600)));

    /* Past the wake instant: Saturday's window is open. */
    s = (seen_t){0};
    set_clock(c, tu_at("2026-03-07T01:00:30Z"));
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(find(&s, "a")->change_pending, 1);
    assert_true(find(&s, "a")->next_change_eta == 0);

    /* Queued again (an event arrived): planned afresh. */
    s = (seen_t){0};
    set_clock(c, wed + 3600);
    a->metrics.pending = 7;
    a->have_metrics = true;
    ctl_enqueue(c, R_HC, "clusters", "a");
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(find(&s, "a")->change_pending, 2);

    /* A policy changed since the record's plan. */
    s = (seen_t){0};
    a->metrics.pending = 7;
    a->have_metrics = true;
    while (!ctl_queue_empty(&c->queue))
        ctl_queue_pop(&c->queue);
    c->policy_epoch++;
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(find(&s, "a")->change_pending, 2);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

/* Renders a feed path; returns the status, the text in *text (owned). */
static int feed(ctl_controller_t *c, const char *path, char **text)
{
    ics_t ics = {0};
    int status = ctl_calendar_render(c, path, &ics);
    *text = ics.buf;
    return status;
}

/* The namespace feed holds each HostedCluster's control-plane windows and
 * its NodePools' intersections, planned without creating records; the
 * HostedCluster feed only that cluster's. */
static void test_calendar_feed(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = controller(loop, tu_at("2026-03-04T12:00:00Z"));
    char *text;
    drop_records(c);
    assert_int_equal(feed(c, "/calendar/clusters.ics", &text), 200);
    assert_int_equal(c->records.tab.count, 0);
    /* weekend: Saturdays 01:00-05:00 for 90 days from Wednesday 4 March:
     * 13 windows, for a and for np1 (Permissive within a); b is
     * Restrictive and np2's policy is missing: no windows. */
    assert_int_equal(tu_count(text, "SUMMARY:clusters/a control plane: changes permitted"), 13);
    assert_int_equal(tu_count(text, "SUMMARY:clusters/np1 worker nodes (HostedCluster a): "
                                 "changes permitted"), 13);
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 26);
    assert_non_null(strstr(text, "UID:window-20260307T010000Z-control-plane.clusters.a@"
                                 "hcp-controller\r\nDTSTAMP:20260304T120000Z\r\n"
                                 "DTSTART:20260307T010000Z\r\nDTEND:20260307T050000Z\r\n"));
    assert_non_null(strstr(text, "UID:window-20260307T010000Z-worker-nodes.clusters.np1@"));
    assert_non_null(strstr(text, "X-WR-CALNAME:Change management windows: clusters\r\n"));
    free(text);
    assert_int_equal(feed(c, "/calendar/clusters/b.ics", &text), 200);
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 0); /* b and np2: never permitted */
    assert_non_null(strstr(text, "END:VCALENDAR\r\n"));
    free(text);
    assert_int_equal(feed(c, "/calendar/other.ics", &text), 200); /* nothing there yet */
    assert_int_equal(tu_count(text, "BEGIN:VEVENT"), 0);
    free(text);
    const char *bad[] = {"/calendar/clusters/zzz.ics", "/calendar/Clusters.ics",
                         "/calendar/clusters", "/calendar/.ics", "/calendar/a/b/c.ics",
                         "/calendar/clusters/.ics"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(feed(c, bad[i], &text), 404);
        free(text);
    }
    assert_int_equal(c->records.tab.count, 0);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

/* An InPlace pool's MachineSet as Cluster API v1.14 serves it: a
 * stand-alone MachineSet's machines get no UpToDate condition, so
 * status.upToDateReplicas stays 0 however many run. The MachineSet cache
 * reads no rollout from its counts: the pool has no pending change, while a
 * MachineDeployment with the same counts would have machines to replace. */
static void test_scrape_inplace_machineset_counts(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = controller(loop, tu_at("2026-03-04T12:00:00Z"));
    static const char *counts = "\"spec\":{\"replicas\":4},"
                                "\"status\":{\"replicas\":4,\"readyReplicas\":3,\"upToDateReplicas\":0}}";
    char doc[512];
    apply(&c->nps, "{" META("NodePool", "clusters", "ip") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\"}},"
                   "\"spec\":{\"clusterName\":\"b\",\"management\":{\"upgradeType\":\"InPlace\"}}}");
    apply(&c->nps, "{" META("NodePool", "clusters", "rp") ",\"annotations\":{"
                   "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\"}},"
                   "\"spec\":{\"clusterName\":\"b\"}}");
    snprintf(doc, sizeof doc, "{" META("MachineSet", "clusters-b", "ip") "},%s", counts);
    apply(&c->mss, doc);
    snprintf(doc, sizeof doc, "{" META("MachineDeployment", "clusters-b", "rp") "},%s", counts);
    apply(&c->mds, doc);
    seen_t s = {0};
    ctl_foreach_object_metrics(c, take, &s);
    assert_int_equal(find(&s, "ip")->change_pending, 0);
    assert_int_equal(find(&s, "rp")->change_pending, 2);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scrape_creates_no_records),
        cmocka_unit_test(test_scrape_matches_reconcile_plan),
        cmocka_unit_test(test_scrape_reuses_current_reconcile),
        cmocka_unit_test(test_calendar_feed),
        cmocka_unit_test(test_scrape_inplace_machineset_counts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
