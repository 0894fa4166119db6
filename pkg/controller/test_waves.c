/* test_waves.c: release waves through the controller (DESIGN.md 3.14): the
 * HostedCluster cache tells the index each cluster's wave from its labels,
 * what it completed and its health; the reconcile's plan asks the index.
 * Three waves (canary 2 clusters, early 5, fleet 20), a soak of two days,
 * a daily window from 06:00 to 08:00 UTC; every cluster holds release
 * 4.17.1. The test plays HyperShift: a cluster let through runs the
 * release for two hours and completes it (status.version.history); it
 * decides each cluster again only at its decision's wake instant or when
 * the caches' handlers queue it, so a wake instant or a queueing that is
 * missing shows as a late start. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/plan.h"
#include "decide/wave.h"
#include "decide/evidence.h"
#include "decide/writes.h"
#include "policy/ics.h"
#include "policy/testutil_policy.h"

#define HOUR 3600
#define DAY 86400
#define NCLUSTERS 27
#define IMG(v) "quay.io/openshift-release-dev/ocp-release:" v "-x86_64"

static const char *const WAVES =
    "{\"sequence\":["
    "{\"name\":\"canary\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"canary\"}}},"
    "{\"name\":\"early\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"early\"}},"
    "\"soak\":\"48h\"},"
    "{\"name\":\"fleet\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"fleet\"}},"
    "\"soak\":\"48h\"}]}";

/* How long HyperShift's update of a control plane takes. */
static sched_time_t update_secs = 2 * HOUR;

typedef struct cluster {
    char name[16];
    const char *wave;
    int wave_index;
    sched_time_t started;   /* 0: not yet */
    bool completed;
    bool degraded;
    sched_time_t degraded_at; /* the Degraded condition's lastTransitionTime */
    sched_time_t override;  /* PermissiveUntil this instant; 0 none */
    int rv;
} cluster_t;

typedef struct fleet {
    struct ev_loop *loop;
    ctl_controller_t *c;
    cluster_t cl[NCLUSTERS];
    sched_time_t t0;
} fleet_t;

/* The cluster as HyperShift would serve it at instant now. */
static void serve(fleet_t *f, cluster_t *k, sched_time_t now)
{
    char text[4096], started[32], done[32], hist[1024], over[512] = "", since[32] = "";
    if (k->override) {
        char t[32];
        decide_format_time(k->override, t, sizeof(t));
        snprintf(over, sizeof(over),
                 ",\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
                 "\"changemanagement.hypershift.openshift.io/permissive-until\":\"%s\","
                 "\"" DECIDE_OVERRIDE_BY_ANNOTATION "\":\"sre\","
                 "\"" DECIDE_OVERRIDE_AT_ANNOTATION "\":\"2030-01-01T00:00:00Z\"",
                 t);
    }
    const char *held = k->started ? "" : ",\"changemanagement.hypershift.openshift.io/"
                                         "requested-release-image\":\"" IMG("4.17.1") "\"";
    if (!k->started)
        snprintf(hist, sizeof(hist),
                 "{\"version\":\"4.17.0\",\"image\":\"" IMG("4.17.0") "\","
                 "\"state\":\"Completed\",\"completionTime\":\"2029-12-01T00:00:00Z\"}");
    else {
        decide_format_time(k->started, started, sizeof(started));
        decide_format_time(k->started + update_secs, done, sizeof(done));
        k->completed = now >= k->started + update_secs;
        snprintf(hist, sizeof(hist),
                 "{\"version\":\"4.17.1\",\"image\":\"" IMG("4.17.1") "\",\"state\":\"%s\","
                 "\"startedTime\":\"%s\"%s%s%s},"
                 "{\"version\":\"4.17.0\",\"image\":\"" IMG("4.17.0") "\","
                 "\"state\":\"Completed\",\"completionTime\":\"2029-12-01T00:00:00Z\"}",
                 k->completed ? "Completed" : "Partial", started,
                 k->completed ? ",\"completionTime\":\"" : "", k->completed ? done : "",
                 k->completed ? "\"" : "");
    }
    if (k->degraded_at)
        decide_format_time(k->degraded_at, since, sizeof(since));
    snprintf(text, sizeof(text),
             "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"clusters\","
             "\"name\":\"%s\",\"uid\":\"u-%s\",\"resourceVersion\":\"%d\",\"generation\":1,"
             "\"labels\":{\"fleet/wave\":\"%s\"},\"annotations\":{"
             "\"changemanagement.hypershift.openshift.io/policy\":\"daily\"%s%s}},"
             "\"spec\":{\"release\":{\"image\":\"%s\"}},"
             "\"status\":{\"conditions\":["
             "{\"type\":\"Available\",\"status\":\"True\"},"
             "{\"type\":\"Degraded\",\"status\":\"%s\",\"reason\":\"%s\"%s%s%s}],"
             "\"version\":{\"history\":[%s]}}}",
             k->name, k->name, ++k->rv, k->wave, over, held,
             k->started ? IMG("4.17.1") : IMG("4.17.0"), k->degraded ? "True" : "False",
             k->degraded ? "ClusterOperatorsDegraded" : "AsExpected",
             since[0] ? ",\"lastTransitionTime\":\"" : "", since, since[0] ? "\"" : "", hist);
    testutil_ctl_apply(&f->c->hcs, k->rv == 1 ? KUBE_EVENT_ADDED : KUBE_EVENT_MODIFIED, text);
}

static void setup_waves(fleet_t *f, const char *waves)
{
    static wave_config_t cfg;
    char err[256];
    json_t *w = json_loads(waves, 0, NULL);
    assert_int_equal(wave_config_parse(w, &cfg, err, sizeof(err)), 0);
    json_decref(w);

    memset(f, 0, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    /* Monday 2030-01-07 05:00 UTC: the first window opens in an hour. */
    assert_int_equal(sched_parse_rfc3339("2030-01-07T05:00:00Z", &f->t0), 0);
    f->c = testutil_ctl_new(f->loop, NULL, f->t0);
    f->c->admission_holds = true;
    assert_int_equal(ctl_set_waves(f->c, &cfg), 0);
    testutil_ctl_add(&f->c->policies,
                     "{" TESTUTIL_OBJ_META("HostedChangeManagementPolicy", "clusters", "daily")
                     "},\"spec\":{\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{"
                     "\"permit\":{\"rrule\":\"FREQ=DAILY\",\"startTime\":\"06:00\","
                     "\"duration\":\"2h\"}}}}");
    for (int i = 0; i < NCLUSTERS; i++) {
        cluster_t *k = &f->cl[i];
        k->wave_index = i < 2 ? 0 : i < 7 ? 1 : 2;
        k->wave = i < 2 ? "canary" : i < 7 ? "early" : "fleet";
        snprintf(k->name, sizeof(k->name), "%s-%d", k->wave, i);
        serve(f, k, f->t0);
    }
    f->c->hcs.synced = true;
    while (ctl_queue_pop(&f->c->queue))
        ;
}

static void setup_fleet(fleet_t *f) { setup_waves(f, WAVES); }

static void teardown_fleet(fleet_t *f)
{
    ctl_stop(f->c);
    ev_loop_destroy(f->loop);
}

/* Plans cluster k at now: true when its held release is let through. */
static bool let_through(fleet_t *f, cluster_t *k, sched_time_t now, decide_decision_t *out)
{
    decide_view_t v;
    decide_plan_t p;
    char err[256];
    ctl_view_init(f->c, true, &v);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", k->name, now, &p, err, sizeof(err)),
                     0);
    assert_true(p.decided);
    bool go = !p.d.restricted;
    if (out)
        *out = p.d;
    decide_plan_free(&p);
    return go;
}

/* The override-skipped record in the write that lets cluster k's release
 * through at now, into buf ("" none). */
static void release_record(fleet_t *f, cluster_t *k, sched_time_t now, char *buf, size_t len)
{
    decide_view_t v;
    decide_plan_t p;
    decide_writes_t ws;
    char err[256];
    buf[0] = '\0';
    ctl_view_init(f->c, true, &v);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", k->name, now, &p, err, sizeof(err)),
                     0);
    assert_int_equal(decide_writes(&p, now, &ws), 0);
    for (int i = 0; i < ws.n; i++) {
        const char *s = json_string_value(json_object_get(
            hcp_json_path(ws.w[i].patch, "metadata.annotations"),
            DECIDE_OVERRIDE_SKIPPED_ANNOTATION));
        if (ws.w[i].target == DECIDE_WRITE_SELF && s) {
            assert_string_equal(ws.w[i].what, "held release");
            snprintf(buf, len, "%s", s);
        }
    }
    decide_writes_free(&ws);
    decide_plan_free(&p);
}

/* Runs the fleet from the start to `until` as the controller would: a
 * cluster still held is planned again at its decision's wake instant, or
 * as soon as the cache's handlers queue it (what another cluster told the
 * waves changed); one let through starts, one that ran two hours
 * completes. `at` (may be NULL) is called at each instant of marks. */
static void run(fleet_t *f, sched_time_t until, void (*at)(fleet_t *, sched_time_t),
                const sched_time_t *marks, size_t nmarks)
{
    sched_time_t next[NCLUSTERS];
    for (int i = 0; i < NCLUSTERS; i++)
        next[i] = f->t0;
    for (sched_time_t now = f->t0; now <= until;) {
        for (size_t m = 0; at && m < nmarks; m++)
            if (marks[m] == now)
                at(f, now);
        for (int pass = 0; pass < 8; pass++) {
            for (int i = 0; i < NCLUSTERS; i++) {
                cluster_t *k = &f->cl[i];
                if (k->started && !k->completed && now >= k->started + update_secs)
                    serve(f, k, now);
            }
            /* What the handlers queued is decided again now. */
            for (ctl_qitem_t *it; (it = ctl_queue_pop(&f->c->queue)) != NULL;) {
                record_t *r = RECORD_OF(q, it);
                for (int i = 0; i < NCLUSTERS; i++)
                    if (r->kind == R_HC && strcmp(r->name, f->cl[i].name) == 0)
                        next[i] = now;
            }
            bool planned = false;
            for (int i = 0; i < NCLUSTERS; i++) {
                cluster_t *k = &f->cl[i];
                decide_decision_t d;
                if (k->started || next[i] > now)
                    continue;
                planned = true;
                if (let_through(f, k, now, &d)) {
                    k->started = now;
                    serve(f, k, now);
                } else {
                    assert_true(d.wake > now);
                    next[i] = d.wake;
                }
            }
            if (!planned && ctl_queue_empty(&f->c->queue))
                break;
        }
        sched_time_t t = SCHED_POS_INF;
        for (int i = 0; i < NCLUSTERS; i++) {
            const cluster_t *k = &f->cl[i];
            sched_time_t w = !k->started ? next[i]
                           : !k->completed ? k->started + update_secs
                                           : SCHED_POS_INF;
            if (w > now && w < t)
                t = w;
        }
        for (size_t m = 0; m < nmarks; m++)
            if (marks[m] > now && marks[m] < t)
                t = marks[m];
        if (t == SCHED_POS_INF)
            break;
        now = t;
    }
}

static sched_time_t window(const fleet_t *f, int day) { return f->t0 + HOUR + day * DAY; }

/* Canary first; each wave after the one before soaked two days; each at
 * the first window after that, at its opening. */
static void test_three_waves(void **state)
{
    (void)state;
    fleet_t f;
    setup_fleet(&f);
    run(&f, f.t0 + 8 * DAY, NULL, NULL, 0);
    /* canary: day 0 06:00, done 08:00; early soaks until day 2 08:00, the
     * window closed: day 3 06:00; fleet until day 5 08:00: day 6 06:00. */
    for (int i = 0; i < NCLUSTERS; i++) {
        const cluster_t *k = &f.cl[i];
        sched_time_t want = window(&f, k->wave_index == 0 ? 0 : k->wave_index == 1 ? 3 : 6);
        if (k->started != want)
            fail_msg("%s started %+lld s from its expected start", k->name,
                     (long long)(k->started - want));
    }
    /* While it waits, it says why and until when. */
    teardown_fleet(&f);
    setup_fleet(&f);
    run(&f, window(&f, 1), NULL, NULL, 0);
    decide_decision_t d;
    assert_false(let_through(&f, &f.cl[3], window(&f, 1), &d));
    assert_string_equal(d.paused_reason, "WaitingForSoak");
    assert_int_equal(d.wave.state, WAVE_SOAK);
    assert_true(d.wave.until == f.t0 + 2 * DAY + 3 * HOUR);
    assert_true(d.wake <= d.wave.until);
    assert_non_null(strstr(d.paused_message, "wave early waits for wave canary to soak: 4.17.1 "
                                             "completed on 2 of its clusters (2 needed), and "
                                             "may go from 2030-01-09T08:00:00Z"));
    /* The fleet wave waits for early, which has not completed it. */
    assert_false(let_through(&f, &f.cl[20], window(&f, 1), &d));
    assert_non_null(strstr(d.paused_message, "4.17.1 completed on 0 of the 5 clusters it needs"));
    teardown_fleet(&f);
}

/* Updates of an hour: the canaries complete at 07:00, and the early
 * wave's soak ends inside Wednesday's window; it goes at that instant (the
 * decision's wake instant is the soak's end), not at the next window. */
static void test_soak_ends_in_window(void **state)
{
    (void)state;
    fleet_t f;
    update_secs = HOUR;
    setup_fleet(&f);
    run(&f, f.t0 + 8 * DAY, NULL, NULL, 0);
    update_secs = 2 * HOUR;
    for (int i = 0; i < NCLUSTERS; i++) {
        const cluster_t *k = &f.cl[i];
        sched_time_t want = k->wave_index == 0   ? window(&f, 0)
                          : k->wave_index == 1 ? window(&f, 2) + HOUR
                                               : window(&f, 5);
        if (k->started != want)
            fail_msg("%s started %+lld s from its expected start", k->name,
                     (long long)(k->started - want));
    }
    teardown_fleet(&f);
}

/* A canary Degraded on the release: no later wave starts it; the halt
 * names the cluster; healthy again, the next window lets it through. */
static void degrade(fleet_t *f, sched_time_t now)
{
    cluster_t *k = &f->cl[1];
    if (now == f->t0 + DAY && !k->degraded) {
        k->degraded = true;
        /* The held releases of the later waves are decided again at
         * once: 25, and the cluster itself. */
        while (ctl_queue_pop(&f->c->queue))
            ;
        serve(f, k, now);
        assert_int_equal(f->c->queue.len, 26);
    }
    if (now == window(f, 4) + 3 * HOUR && k->degraded) {
        k->degraded = false;
        serve(f, k, now);
    }
}

/* The instants degrade() acts at. */
static const sched_time_t *degrade_at(const fleet_t *f, sched_time_t marks[2])
{
    marks[0] = f->t0 + DAY;
    marks[1] = window(f, 4) + 3 * HOUR;
    return marks;
}

static void test_halted(void **state)
{
    (void)state;
    fleet_t f;
    sched_time_t marks[2];
    setup_fleet(&f);
    run(&f, window(&f, 3) + HOUR, degrade, degrade_at(&f, marks), 2);
    decide_decision_t d;
    for (int i = 2; i < NCLUSTERS; i++)
        assert_int_equal(f.cl[i].started, 0);
    assert_false(let_through(&f, &f.cl[2], window(&f, 3) + HOUR, &d));
    assert_string_equal(d.paused_reason, "WaveHalted");
    assert_non_null(strstr(d.paused_message, "clusters/canary-1 of wave canary runs 4.17.1 and "
                                             "is unhealthy: Degraded is True (reason "
                                             "ClusterOperatorsDegraded)"));
    teardown_fleet(&f);
    setup_fleet(&f);
    run(&f, f.t0 + 8 * DAY, degrade, degrade_at(&f, marks), 2);
    /* Healthy again on day 4 after its window: the early wave goes at the
     * next, day 5. */
    for (int i = 2; i < 7; i++)
        assert_true(f.cl[i].started == window(&f, 5));
    teardown_fleet(&f);
}

/* An override in force passes the soak, and the Event says so; a blocked
 * release holds even it. */
static void test_override_and_blocked(void **state)
{
    (void)state;
    fleet_t f;
    decide_decision_t d;
    setup_fleet(&f);
    run(&f, window(&f, 0) + 3 * HOUR, NULL, NULL, 0);
    cluster_t *k = &f.cl[4];
    assert_false(let_through(&f, k, window(&f, 1), &d));
    assert_int_equal(d.wave.state, WAVE_SOAK);
    k->override = window(&f, 1) + HOUR;
    serve(&f, k, window(&f, 1) - 1800);
    assert_true(let_through(&f, k, window(&f, 1) - 1800, &d));
    assert_true(d.wave_skipped);
    assert_int_equal(d.wave.state, WAVE_SOAK);
    /* The write that lets it through records what the override skipped,
     * for that override; the companion's audit reads it back. */
    char skipped[512];
    release_record(&f, k, window(&f, 1) - 1800, skipped, sizeof(skipped));
    assert_non_null(strstr(skipped, "2030-01-01T00:00:00Z release waves: wave early waits for "
                                    "wave canary to soak"));
    /* Its end: held again. */
    assert_false(let_through(&f, k, window(&f, 1) + HOUR, &d));
    assert_string_equal(d.paused_reason, "WaitingForSoak");
    teardown_fleet(&f);

    setup_waves(&f, "{\"sequence\":[{\"name\":\"canary\",\"selector\":{\"matchLabels\":"
                    "{\"fleet/wave\":\"canary\"}}}],\"blockedReleases\":[\">=4.17.1 <4.17.3\"]}");
    k = &f.cl[0];
    k->override = window(&f, 0) + HOUR;
    serve(&f, k, f.t0);
    assert_false(let_through(&f, k, window(&f, 0), &d));
    assert_string_equal(d.paused_reason, "ReleaseBlocked");
    assert_non_null(strstr(d.paused_message, "release 4.17.1 is blocked for the fleet "
                                             "(waves.blockedReleases \">=4.17.1 <4.17.3\")"));
    /* Not in the sequence: unassigned, after the canary wave. */
    assert_false(let_through(&f, &f.cl[5], window(&f, 0), &d));
    assert_int_equal(d.wave.wave, WAVE_UNASSIGNED);
    teardown_fleet(&f);
}

/* A NodePool of cluster `cluster` holding release 4.17.1, or running it
 * since `done` (0: not yet), as HyperShift serves it. */
static void serve_pool(fleet_t *f, const char *name, const char *cluster, sched_time_t done,
                       int rv)
{
    char text[2048], t[32] = "2029-12-01T00:00:00Z";
    if (done)
        decide_format_time(done, t, sizeof(t));
    snprintf(text, sizeof(text),
             "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"%s\","
             "\"uid\":\"u-%s\",\"resourceVersion\":\"%d\",\"generation\":1,\"annotations\":{%s}},"
             "\"spec\":{\"clusterName\":\"%s\",\"release\":{\"image\":\"%s\"}},"
             "\"status\":{\"version\":\"%s\",\"conditions\":["
             "{\"type\":\"Ready\",\"status\":\"True\"},"
             "{\"type\":\"UpdatingVersion\",\"status\":\"False\",\"reason\":\"AsExpected\","
             "\"lastTransitionTime\":\"%s\"}]}}",
             name, name, rv,
             done ? ""
                  : "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
                    "\"{\\\"release\\\":{\\\"image\\\":\\\"" IMG("4.17.1") "\\\"}}\"",
             cluster, done ? IMG("4.17.1") : IMG("4.17.0"), done ? "4.17.1" : "4.17.0", t);
    testutil_ctl_apply(&f->c->nps, rv == 1 ? KUBE_EVENT_ADDED : KUBE_EVENT_MODIFIED, text);
}

static bool pool_through(fleet_t *f, const char *name, sched_time_t now, decide_decision_t *d)
{
    decide_view_t v;
    decide_plan_t p;
    char err[256];
    ctl_view_init(f->c, true, &v);
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", name, now, &p, err, sizeof(err)), 0);
    assert_true(p.decided);
    bool go = !p.d.restricted;
    *d = p.d;
    decide_plan_free(&p);
    return go;
}

/* NodePool releases follow the same waves, pool by pool of the same
 * clusters, once every control plane completed the release. */
static void test_nodepools(void **state)
{
    (void)state;
    fleet_t f;
    decide_decision_t d;
    setup_fleet(&f);
    serve_pool(&f, "canary-pool", "canary-0", 0, 1);
    serve_pool(&f, "early-pool", "early-2", 0, 1);
    run(&f, f.t0 + 7 * DAY, NULL, NULL, 0);
    sched_time_t w7 = window(&f, 7);
    /* The early pool waits: the canary's pool has not run it. */
    assert_false(pool_through(&f, "early-pool", w7, &d));
    assert_string_equal(d.paused_reason, "WaitingForSoak");
    assert_non_null(strstr(d.paused_message, "4.17.1 completed on 0 of the 1 clusters it needs"));
    assert_true(pool_through(&f, "canary-pool", w7, &d));
    /* The canary's pool completes it at 07:00; the early pool soaks 48h. */
    serve_pool(&f, "canary-pool", "canary-0", w7 + HOUR, 2);
    assert_false(pool_through(&f, "early-pool", window(&f, 9), &d));
    assert_true(d.wave.until == w7 + HOUR + 2 * DAY);
    assert_true(pool_through(&f, "early-pool", window(&f, 9) + HOUR, &d));
    teardown_fleet(&f);
}

/* What the notifications were handed. */
typedef struct told {
    notify_step_t step[16];
    sched_time_t at[16], until[16];
    char detail[16][512];
    size_t n;
} told_t;

static void collect(const notify_event_t *ev, const notify_due_t *d, void *ud)
{
    told_t *t = ud;
    (void)d;
    if (t->n < 16) {
        t->step[t->n] = ev->step;
        t->at[t->n] = ev->at;
        t->until[t->n] = ev->until;
        snprintf(t->detail[t->n], sizeof(t->detail[0]), "%s", ev->detail ? ev->detail : "");
        t->n++;
    }
}

/* Plans cluster k at now and hands its notifications over; returns how
 * many were due of step. */
static size_t tell(fleet_t *f, cluster_t *k, sched_time_t now, notify_step_t step, told_t *t)
{
    decide_view_t v;
    decide_plan_t p;
    char err[256];
    size_t from = t->n, n = 0;
    ctl_view_init(f->c, true, &v);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", k->name, now, &p, err, sizeof(err)),
                     0);
    ctl_notify_steps(f->c, ctl_record_get(f->c, R_HC, "clusters", k->name), &p,
                     "HostedCluster", now);
    decide_plan_free(&p);
    for (size_t i = from; i < t->n; i++)
        n += t->step[i] == step;
    return n;
}

/* The last step of kind step told, or -1. */
static int last(const told_t *t, notify_step_t step)
{
    for (size_t i = t->n; i-- > 0;)
        if (t->step[i] == step)
            return (int)i;
    return -1;
}

/* The waves' notifications, as the controller hands them over: soak-waiting
 * (who it waits on; again once the soak's end is known), wave-halted at the
 * instant of the verdict naming the cluster, wave-resumed once it is
 * healthy; each once. */
static void test_notified(void **state)
{
    (void)state;
    fleet_t f;
    notify_config_t cfg;
    told_t t = {0};
    setup_fleet(&f);
    notify_config_default(&cfg);
    cfg.n_endpoints = 1;
    f.c->opts.notify = collect;
    f.c->opts.notify_ud = &t;
    f.c->opts.notify_cfg = &cfg;
    f.c->leading = true;
    cluster_t *early = &f.cl[2];

    assert_int_equal(tell(&f, early, f.t0, NOTIFY_SOAK_WAITING, &t), 1);
    int i = last(&t, NOTIFY_SOAK_WAITING);
    assert_true(t.until[i] == SCHED_POS_INF);
    assert_non_null(strstr(t.detail[i], "completed on 0 of the 2 clusters it needs (not yet on "
                                        "clusters/canary-0, clusters/canary-1)"));
    assert_int_equal(tell(&f, early, f.t0 + 60, NOTIFY_SOAK_WAITING, &t), 0);

    /* The canaries run it from the window and complete it two hours later:
     * the soak's end is told. */
    sched_time_t w0 = window(&f, 0), done = w0 + update_secs;
    for (int c = 0; c < 2; c++) {
        f.cl[c].started = w0;
        serve(&f, &f.cl[c], done);
    }
    assert_int_equal(tell(&f, early, done, NOTIFY_SOAK_WAITING, &t), 1);
    i = last(&t, NOTIFY_SOAK_WAITING);
    assert_true(t.until[i] == done + 2 * DAY);

    /* canary-1 turns Degraded: the halt is told at that instant, naming it */
    sched_time_t bad = done + 5 * HOUR;
    f.cl[1].degraded = true;
    f.cl[1].degraded_at = bad;
    serve(&f, &f.cl[1], bad);
    assert_int_equal(tell(&f, early, bad, NOTIFY_WAVE_HALTED, &t), 1);
    i = last(&t, NOTIFY_WAVE_HALTED);
    assert_true(t.at[i] == bad);
    assert_non_null(strstr(t.detail[i], "clusters/canary-1 of wave canary runs 4.17.1 and is "
                                        "unhealthy since "));
    assert_int_equal(tell(&f, early, bad + 60, NOTIFY_WAVE_HALTED, &t), 0);
    assert_int_equal(last(&t, NOTIFY_WAVE_RESUMED), -1);

    /* healthy again: resumed, once; it still waits for the soak */
    f.cl[1].degraded = false;
    f.cl[1].degraded_at = 0;
    serve(&f, &f.cl[1], bad + HOUR);
    assert_int_equal(tell(&f, early, bad + HOUR, NOTIFY_WAVE_RESUMED, &t), 1);
    i = last(&t, NOTIFY_WAVE_RESUMED);
    assert_non_null(strstr(t.detail[i], "It still waits for the soak"));
    assert_int_equal(tell(&f, early, bad + 2 * HOUR, NOTIFY_WAVE_RESUMED, &t), 0);
    f.c->opts.notify_cfg = NULL;
    teardown_fleet(&f);
}


/* The calendar feed: the held release's earliest start is the soak's end,
 * once the canaries completed it; before that no start is known. */
static void test_calendar(void **state)
{
    (void)state;
    fleet_t f;
    ics_t cal = {0};
    setup_fleet(&f);
    assert_int_equal(ctl_calendar_render(f.c, "/calendar/clusters/early-2.ics", &cal), 200);
    tu_ics_unfold(cal.buf);
    assert_non_null(strstr(cal.buf, "Not in this window: release 4.17.1 (wave early waits for "));
    assert_non_null(strstr(cal.buf, "held with no start known yet."));
    ics_free(&cal);
    /* canary-0 and canary-1 complete it on Monday at 08:00: the early wave
     * may start from Wednesday 08:00, after that day's window */
    sched_time_t w0 = window(&f, 0), done = w0 + update_secs;
    for (int c = 0; c < 2; c++) {
        f.cl[c].started = w0;
        serve(&f, &f.cl[c], done);
    }
    f.c->opts.clock.sim0 = done; /* the loop does not run: its real instant stays */
    assert_int_equal(ctl_calendar_render(f.c, "/calendar/clusters/early-2.ics", &cal), 200);
    tu_ics_unfold(cal.buf);
    assert_null(strstr(cal.buf, "held with no start known yet."));
    assert_non_null(strstr(cal.buf, "held until 2030-01-09T08:00:00Z."));
    const char *thu = strstr(cal.buf, "DTSTART:20300110T060000Z");
    assert_non_null(thu);
    assert_null(strstr(thu, "release 4.17.1")); /* Thursday's window: nothing held past it */
    ics_free(&cal);
    /* the canary's own feed holds nothing */
    assert_int_equal(ctl_calendar_render(f.c, "/calendar/clusters/canary-0.ics", &cal), 200);
    assert_null(strstr(cal.buf, "release 4.17.1"));
    ics_free(&cal);
    teardown_fleet(&f);
}

/* Another management cluster's evidence ConfigMap (decide/evidence.h):
 * its canary remote-c running 4.17.1, Degraded or not. */
static void remote_evidence(fleet_t *f, kube_event_type type, bool degraded, int rv)
{
    char data[1024], esc[1400], text[2048];
    snprintf(data, sizeof(data),
             "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\","
             "\"cluster\":\"clusters/remote-c\",\"pool\":\"\",\"wave\":\"canary\","
             "\"optedIn\":true,\"healthy\":%s,\"why\":\"%s\",\"unhealthySince\":%s,"
             "\"running\":\"4.17.1\",\"completed\":[{\"version\":\"4.17.1\","
             "\"at\":\"2030-01-07T08:00:00Z\"}]}]}",
             degraded ? "false" : "true", degraded ? "Degraded is True" : "",
             degraded ? "\"2030-01-08T00:00:00Z\"" : "null");
    json_t *str = json_string(data);
    char *dumped = json_dumps(str, JSON_ENCODE_ANY);
    snprintf(esc, sizeof(esc), "%s", dumped);
    free(dumped);
    json_decref(str);
    snprintf(text, sizeof(text),
             "{\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"hcp-system\","
             "\"name\":\"hcp-wave-evidence-mc-a\",\"uid\":\"u-ev\",\"resourceVersion\":\"%d\","
             "\"labels\":{\"" WAVE_EVIDENCE_LABEL "\":\"mc-a\"}},\"data\":{\""
             WAVE_EVIDENCE_KEY "\":%s}}",
             rv, esc);
    testutil_ctl_apply(&f->c->evid, type, text);
}

static void count_completed(unsigned system, const char *wave, const char *release,
                            const char *state, double n, void *ud)
{
    if (system == WAVE_CONTROL_PLANE && strcmp(wave, "canary") == 0 &&
        strcmp(release, "4.17.1") == 0 && strcmp(state, "Completed") == 0)
        *(double *)ud += n;
}

/* What another management cluster publishes counts as clusters of the
 * waves: its Degraded canary halts this one's early wave at once (the held
 * releases are queued again), healthy again it lets it go, and its
 * evidence gone, its clusters are gone from the waves. */
static void test_evidence(void **state)
{
    (void)state;
    fleet_t f;
    decide_decision_t d;
    setup_fleet(&f);
    f.c->evid.synced = true;
    sched_time_t w0 = window(&f, 0);
    for (int c = 0; c < 2; c++) {
        f.cl[c].started = w0;
        serve(&f, &f.cl[c], w0 + update_secs);
    }
    while (ctl_queue_pop(&f.c->queue))
        ;
    assert_true(let_through(&f, &f.cl[2], window(&f, 3), &d));
    size_t before = wave_index_members(f.c->waves);

    remote_evidence(&f, KUBE_EVENT_ADDED, true, 1);
    assert_int_equal(wave_index_members(f.c->waves), before + 1);
    assert_int_equal(f.c->queue.len, 25); /* every held release of a later wave */
    assert_false(let_through(&f, &f.cl[2], window(&f, 3), &d));
    assert_string_equal(d.paused_reason, "WaveHalted");
    assert_non_null(strstr(d.paused_message, "mc-a:clusters/remote-c of wave canary runs 4.17.1 "
                                             "and is unhealthy since 2030-01-08T00:00:00Z"));
    while (ctl_queue_pop(&f.c->queue))
        ;
    /* a broken copy of it changes nothing: the halt it told stays */
    testutil_ctl_apply(&f.c->evid, KUBE_EVENT_MODIFIED,
                       "{\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"hcp-system\","
                       "\"name\":\"hcp-wave-evidence-mc-a\",\"uid\":\"u-ev\","
                       "\"resourceVersion\":\"9\",\"labels\":{\"" WAVE_EVIDENCE_LABEL
                       "\":\"mc-a\"}},\"data\":{\"" WAVE_EVIDENCE_KEY "\":\"{\\\"source\\\":\"}}");
    assert_int_equal(wave_index_members(f.c->waves), before + 1);
    assert_int_equal(f.c->queue.len, 0);
    assert_false(let_through(&f, &f.cl[2], window(&f, 3), &d));
    assert_string_equal(d.paused_reason, "WaveHalted");
    remote_evidence(&f, KUBE_EVENT_MODIFIED, false, 2);
    assert_int_equal(f.c->queue.len, 25);
    assert_true(let_through(&f, &f.cl[2], window(&f, 3), &d));
    /* the same again: nothing changed, nothing queued */
    while (ctl_queue_pop(&f.c->queue))
        ;
    remote_evidence(&f, KUBE_EVENT_MODIFIED, false, 3);
    assert_int_equal(f.c->queue.len, 0);
    /* the metrics count this management cluster's clusters only */
    double completed = 0;
    ctl_foreach_wave_count(f.c, count_completed, &completed);
    assert_true(completed == 2);
    /* its evidence gone: its clusters are gone from the waves */
    remote_evidence(&f, KUBE_EVENT_DELETED, false, 4);
    assert_int_equal(wave_index_members(f.c->waves), before);
    assert_int_equal(f.c->queue.len, 25);
    teardown_fleet(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_three_waves),
        cmocka_unit_test(test_soak_ends_in_window),
        cmocka_unit_test(test_halted),
        cmocka_unit_test(test_override_and_blocked),
        cmocka_unit_test(test_nodepools),
        cmocka_unit_test(test_notified),
        cmocka_unit_test(test_calendar),
        cmocka_unit_test(test_evidence),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
