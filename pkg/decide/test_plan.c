/* test_plan.c: decide_plan() gathers an object's inputs from a view. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/plan.h"
#include "decide/testutil_decide.h"
#include "decide/writes.h"

#define MAXOBJ 12

/* An in-memory view: a few objects and three policies ("weekend":
 * Saturdays 00:00-06:00 UTC; "early" and "late": its first and last two
 * hours). */
typedef struct fake {
    struct {
        decide_kind_t kind;
        const char *ns, *name;
        void *data;
    } obj[MAXOBJ];
    int n;
    sched_t *weekend, *early, *late;
    /* memo callbacks keep what they resolved here */
    stanza_resolution_t memo_res[32];
    int nmemo;
    stanza_nodepool_t memo_inter[32];
    int ninter;
    decide_projection_t proj; /* what the projection callback reports */
    int proj_calls;
} fake_t;

static bool fget(void *ud, decide_kind_t kind, const char *ns, const char *name, decide_ref_t *out)
{
    fake_t *f = ud;
    for (int i = 0; i < f->n; i++)
        if (f->obj[i].kind == kind && strcmp(f->obj[i].ns, ns) == 0 &&
            strcmp(f->obj[i].name, name) == 0) {
            *out = (decide_ref_t){f->obj[i].data, "7", "uid-1"};
            return true;
        }
    return false;
}

static int flookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    sched_t *s = strcmp(name, "weekend") == 0 ? f->weekend
                 : strcmp(name, "early") == 0 ? f->early
                 : strcmp(name, "late") == 0  ? f->late
                                              : NULL;
    if (s) {
        out->found = out->ready = 1;
        out->sched = s;
    }
    return 0;
}

static const stanza_resolution_t *fmemo_res(void *ud, decide_kind_t kind, const char *ns,
                                            const char *name, const stanza_t *st)
{
    fake_t *f = ud;
    (void)kind;
    (void)name;
    assert_true(f->nmemo < 32);
    assert_int_equal(stanza_resolve(st, ns, flookup, f, &f->memo_res[f->nmemo]), 0);
    return &f->memo_res[f->nmemo++];
}

static const stanza_nodepool_t *fmemo_inter(void *ud, const char *ns, const char *name,
                                            sched_t *own, sched_t *cluster, sched_time_t now)
{
    fake_t *f = ud;
    (void)ns;
    (void)name;
    assert_true(f->ninter < 32);
    assert_int_equal(stanza_resolve_nodepool(own, cluster, now, &f->memo_inter[f->ninter]), 0);
    return &f->memo_inter[f->ninter++];
}

static void fproj(void *ud, const char *ns, const char *name, const decide_decision_t *d,
                  decide_projection_t *out)
{
    fake_t *f = ud;
    (void)ns;
    (void)name;
    (void)d;
    f->proj_calls++;
    *out = f->proj;
}

static void add(fake_t *f, decide_kind_t kind, const char *ns, const char *name, void *data)
{
    assert_true(f->n < MAXOBJ);
    f->obj[f->n].kind = kind;
    f->obj[f->n].ns = ns;
    f->obj[f->n].name = name;
    f->obj[f->n].data = data;
    f->n++;
}

static void *from_json(decide_kind_t kind, const char *text)
{
    json_t *j = tu_doc(text);
    void *d = kind == DECIDE_HC   ? (void *)decide_hc_extract(j)
              : kind == DECIDE_NP ? (void *)decide_np_extract(j)
                                  : (void *)decide_capi_extract(kind, j);
    json_decref(j);
    assert_non_null(d);
    return d;
}

#define HC_JSON                                                                                \
    "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"     \
    "\"weekend\"}},\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"}},"             \
    "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}"
#define NP_JSON                                                                                \
    "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/strategy\":"   \
    "\"Permissive\"}},\"spec\":{\"clusterName\":\"a\"}}"

static void fake_setup(fake_t *f)
{
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * 3600, NULL, 0};
    sched_spec_t early = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 2 * 3600, NULL, 0};
    sched_spec_t late = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 4 * 60, 2 * 3600, NULL, 0};
    char err[128];
    memset(f, 0, sizeof(*f));
    assert_int_equal(sched_compile(&sp, tu_at("2026-03-04T12:00:00Z"), &f->weekend, err, sizeof(err)),
                     0);
    assert_int_equal(sched_compile(&early, tu_at("2026-03-04T12:00:00Z"), &f->early, err,
                                   sizeof(err)),
                     0);
    assert_int_equal(sched_compile(&late, tu_at("2026-03-04T12:00:00Z"), &f->late, err,
                                   sizeof(err)),
                     0);
    add(f, DECIDE_HC, "clusters", "a", from_json(DECIDE_HC, HC_JSON));
    add(f, DECIDE_NP, "clusters", "np1", from_json(DECIDE_NP, NP_JSON));
    add(f, DECIDE_CLUSTER, "clusters-a", "a-x1", from_json(DECIDE_CLUSTER, "{}"));
}

static void fake_teardown(fake_t *f)
{
    for (int i = 0; i < f->n; i++) {
        if (f->obj[i].kind == DECIDE_HC)
            decide_hc_free(f->obj[i].data);
        else if (f->obj[i].kind == DECIDE_NP)
            decide_np_free(f->obj[i].data);
        else
            decide_capi_free(f->obj[i].data);
    }
    for (int i = 0; i < f->nmemo; i++)
        stanza_resolution_free(&f->memo_res[i]);
    for (int i = 0; i < f->ninter; i++)
        stanza_nodepool_free(&f->memo_inter[i]);
    sched_unref(f->weekend);
    sched_unref(f->early);
    sched_unref(f->late);
}

static decide_view_t plain_view(fake_t *f)
{
    return (decide_view_t){.ud = f, .status_doc = true, .get = fget, .lookup_policy = flookup};
}

static void test_plan_absent_object(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    decide_view_t v = plain_view(&f);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "nope", 0, &p, NULL, 0), 0);
    assert_false(p.present);
    assert_false(p.decided);
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* Stale when the object is at resourceVersion 7 (what the fake holds) and
 * the CAPI object was found: counts its calls. */
static int stale_calls;
static bool fstale(void *ud, decide_kind_t kind, const char *ns, const char *name,
                   const decide_ref_t *self, const decide_ref_t *capi)
{
    (void)ud;
    (void)kind;
    (void)ns;
    (void)name;
    stale_calls++;
    return strcmp(self->rv, "7") == 0 && capi->data != NULL;
}

/* A view that calls the inputs stale stops the plan after gathering them:
 * the object and its CAPI object are read, nothing is decided and no status
 * document is built; a view that does not gets the full decision. */
static void test_plan_stale_stops_before_deciding(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    decide_view_t v = plain_view(&f);
    v.stale = fstale;
    sched_time_t now = tu_at("2026-03-04T12:00:00Z");
    stale_calls = 0;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", now, &p, NULL, 0), 0);
    assert_int_equal(stale_calls, 1);
    assert_true(p.present);
    assert_true(p.stale);
    assert_false(p.decided);
    assert_non_null(p.capi.data);
    assert_null(p.status_doc);
    assert_int_equal(p.d.wake, 0);
    decide_plan_free(&p);
    v.stale = NULL;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", now, &p, NULL, 0), 0);
    assert_true(p.decided && !p.stale);
    assert_non_null(p.status_doc);
    decide_plan_free(&p);
    fake_teardown(&f);
}

static void test_plan_hostedcluster(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    decide_view_t v = plain_view(&f);
    v.projection = fproj;
    f.proj = (decide_projection_t){.known = true, .ok = true, .reason = "Projected"};
    snprintf(f.proj.message, sizeof(f.proj.message), "carried");
    /* Wednesday: outside the Saturday window, a release is pending. */
    sched_time_t now = tu_at("2026-03-04T12:00:00Z");
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", now, &p, NULL, 0), 0);
    assert_true(p.present && p.decided);
    assert_string_equal(p.self.rv, "7");
    assert_non_null(p.capi.data); /* its CAPI Cluster, found in "<ns>-<name>" */
    assert_string_equal(p.capi_ns, "clusters-a");
    assert_string_equal(p.capi_name, "a-x1");
    assert_int_equal(p.capi_kind, DECIDE_CLUSTER);
    assert_true(p.d.restricted);
    assert_int_equal(p.d.action, DECIDE_PAUSE_ADD);
    assert_int_equal(p.d.pending_metric, 2);
    assert_int_equal(p.d.wake, tu_at("2026-03-07T00:00:00Z"));
    /* The projection's state is part of the returned decision. */
    assert_int_equal(f.proj_calls, 1);
    assert_true(p.d.has_projected);
    assert_string_equal(p.d.projected_reason, "Projected");
    assert_string_equal(p.d.projected_message, "carried");
    assert_string_equal(json_string_value(json_object_get(p.status_doc, "policy")), "weekend");
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* Opted out: a projection condition written while it was in says it is no
 * longer projected (the hosted cluster's conditions were removed); one that
 * never opted in gets none. */
static void test_plan_hostedcluster_opted_out(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "was",
        from_json(DECIDE_HC,
                  "{\"spec\":{\"infraID\":\"w\"},\"status\":{\"conditions\":[{\"type\":"
                  "\"HostedClusterVersionProjected\",\"status\":\"True\",\"reason\":"
                  "\"Projected\",\"message\":\"carried\"}]}}"));
    add(&f, DECIDE_HC, "clusters", "never", from_json(DECIDE_HC, "{\"spec\":{}}"));
    decide_view_t v = plain_view(&f);
    v.projection = fproj;
    f.proj = (decide_projection_t){.known = true, .ok = true, .reason = "Projected"};
    sched_time_t now = tu_at("2026-03-04T12:00:00Z");
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "was", now, &p, NULL, 0), 0);
    assert_false(p.opted_in);
    assert_true(p.d.has_projected);
    assert_false(p.d.projected_status);
    assert_string_equal(p.d.projected_reason, "NotOptedIn");
    assert_non_null(strstr(p.d.projected_message, "opted in"));
    assert_int_equal(f.proj_calls, 0); /* what it last projected is not asked */
    json_t *patch = NULL;
    assert_int_equal(decide_status_patch(&((const decide_hc_t *)p.self.data)->m, &p.d, "1",
                                         false, now, &patch),
                     0);
    assert_non_null(patch); /* the condition is rewritten */
    json_decref(patch);
    decide_plan_free(&p);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "never", now, &p, NULL, 0), 0);
    assert_false(p.d.has_projected);
    decide_plan_free(&p);
    fake_teardown(&f);
}

static void test_plan_nodepool_within_cluster(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    /* A MachineDeployment of the pool's name whose link names another pool
     * is not the pool's. */
    add(&f, DECIDE_MD, "clusters-a", "np1",
        from_json(DECIDE_MD, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/"
                             "nodePool\":\"clusters/other\"}}}"));
    decide_view_t v = plain_view(&f);
    sched_time_t now = tu_at("2026-03-04T12:00:00Z");
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.decided);
    assert_int_equal(p.capi_kind, DECIDE_MD);
    assert_null(p.capi.data);
    assert_non_null(p.cluster);
    assert_true(p.owns_res && p.owns_cluster && p.owns_inter);
    /* Permissive on its own, restricted by its HostedCluster's window. */
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "HostedClusterRestricted");
    assert_non_null(json_object_get(p.status_doc, "clusterConstraint"));
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* The backstop: a change that started while restricted, told from one the
 * window's close finds under way. */
static void test_plan_unheld(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    decide_seen_t now_seen, prev;
    sched_time_t now = tu_at("2026-03-04T12:00:00Z"); /* a Wednesday: restricted */
    fake_setup(&f);
    add(&f, DECIDE_MD, "clusters-a", "np1",
        from_json(DECIDE_MD, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/"
                             "nodePool\":\"clusters/np1\"}},\"spec\":{\"replicas\":3},"
                             "\"status\":{\"replicas\":4,\"updatedReplicas\":1}}"));
    decide_view_t v = plain_view(&f);

    /* HostedCluster a reads release r:2. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", now, &p, NULL, 0), 0);
    assert_true(p.d.restricted);
    prev = (decide_seen_t){0};
    assert_false(decide_unheld(&p, &prev, &now_seen)); /* nothing seen before */
    assert_true(now_seen.known && now_seen.restricted);
    assert_true(now_seen.release == decide_release_hash("r:2") && now_seen.release != 0);
    prev = (decide_seen_t){true, true, false, decide_release_hash("r:1"), 0, 0};
    assert_true(decide_unheld(&p, &prev, &prev)); /* r:1 -> r:2 while restricted */
    assert_false(decide_unheld(&p, &prev, &prev)); /* counted once */
    prev = (decide_seen_t){true, false, false, decide_release_hash("r:1"), 0, 0};
    assert_false(decide_unheld(&p, &prev, &now_seen)); /* changed while permitted */
    decide_plan_free(&p);

    /* NodePool np1, restricted by its cluster, MachineDeployment mid-rollout. */
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.d.restricted);
    assert_true(p.d.pause_wanted); /* the plan pauses it at once */
    prev = (decide_seen_t){true, true, false, 0, 0, 0};
    assert_true(decide_unheld(&p, &prev, &prev)); /* started while restricted */
    assert_true(prev.rolling);
    assert_false(decide_unheld(&p, &prev, &prev)); /* counted once */
    prev = (decide_seen_t){true, false, false, 0, 0, 0};
    assert_false(decide_unheld(&p, &prev, &now_seen)); /* the close found it under way */
    prev = (decide_seen_t){0};
    assert_true(decide_unheld(&p, &prev, &now_seen)); /* found unpaused, no decision before */
    decide_plan_free(&p);
    /* With Cluster API's revision (5) the rollout is told apart: one that
     * looked done for a moment is the one seen before, not a new one. */
    ((decide_capi_t *)f.obj[f.n - 1].data)->revision = 5;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    prev = (decide_seen_t){.known = true, .restricted = true, .rollout = 6, .settled = 6};
    assert_false(decide_unheld(&p, &prev, &now_seen)); /* revision 5 again */
    assert_true(now_seen.rolling && now_seen.rollout == 6 && now_seen.settled == 6);
    prev = (decide_seen_t){.known = true, .restricted = true, .rollout = 5, .settled = 5};
    assert_true(decide_unheld(&p, &prev, &now_seen)); /* revision 4 -> 5 while restricted */
    assert_int_equal(now_seen.settled, 5);            /* kept: started while restricted */
    /* The new revision first shown with the old counts (not rolling yet). */
    prev = (decide_seen_t){.known = true, .restricted = true, .rollout = 6, .settled = 5};
    assert_true(decide_unheld(&p, &prev, &now_seen));
    /* The window's close finds it under way, then it looks done a moment. */
    prev = (decide_seen_t){.known = true, .restricted = false, .rolling = true, .rollout = 6,
                           .settled = 6};
    assert_false(decide_unheld(&p, &prev, &prev));
    assert_int_equal(prev.settled, 6);
    prev.rolling = false;
    assert_false(decide_unheld(&p, &prev, &prev));
    decide_plan_free(&p);
    /* Paused (by anyone): it is stopped, not a change that got past. */
    ((decide_capi_t *)f.obj[f.n - 1].data)->paused = true; /* ours */
    ((decide_capi_t *)f.obj[f.n - 1].data)->marker = true;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    prev = (decide_seen_t){true, true, false, 0, 0, 0};
    assert_false(decide_unheld(&p, &prev, &now_seen));
    decide_plan_free(&p);
    fake_teardown(&f);
}

static void fmachinesets(void *ud, const char *ns,
                         void (*fn)(const decide_capi_t *ms, void *arg), void *arg)
{
    fake_t *f = ud;
    for (int i = 0; i < f->n; i++)
        if (f->obj[i].kind == DECIDE_MS && strcmp(f->obj[i].ns, ns) == 0)
            fn(f->obj[i].data, arg);
}

#define MD_REV(rev, existing, updated)                                                         \
    "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePool\":\"clusters/np1\","     \
    "\"machinedeployment.clusters.x-k8s.io/revision\":\"" rev "\"}},\"spec\":{\"replicas\":5},"   \
    "\"status\":{\"replicas\":" existing ",\"deprecated\":{\"v1beta1\":{\"updatedReplicas\":"   \
    updated "}}}}"
#define MS_REV(rev, existing)                                                                  \
    "{\"metadata\":{\"labels\":{\"cluster.x-k8s.io/deployment-name\":\"np1\"},"                \
    "\"annotations\":{\"machinedeployment.clusters.x-k8s.io/revision\":\"" rev "\"}},"          \
    "\"status\":{\"replicas\":" existing "}}"

/* A MachineDeployment whose status says mid-rollout (6 machines, 5 of the
 * newest MachineSet: counters from two passes of Cluster API's reconcile,
 * e.g. during a remediation) while its only MachineSet with machines has its
 * own revision: no machine is on an older template, so a restricted pool
 * merely waiting is neither paused nor counted as a change that got past.
 * An older MachineSet with machines keeps it a rollout; without MachineSets
 * (or revisions) to read, the status is taken as is. */
static void test_plan_rolling_read_against_machinesets(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    decide_seen_t prev;
    sched_time_t now = tu_at("2026-03-04T12:00:00Z"); /* a Wednesday: restricted */
    fake_setup(&f);
    add(&f, DECIDE_MD, "clusters-a", "np1", from_json(DECIDE_MD, MD_REV("3", "6", "5")));
    add(&f, DECIDE_MS, "clusters-a", "np1-new", from_json(DECIDE_MS, MS_REV("3", "6")));
    add(&f, DECIDE_MS, "clusters-a", "np1-old", from_json(DECIDE_MS, MS_REV("2", "0")));
    add(&f, DECIDE_MS, "clusters-a", "other", from_json(DECIDE_MS, "{\"status\":{\"replicas\":2}}"));
    decide_view_t v = plain_view(&f);
    v.admission_holds = true;

    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.d.restricted && p.d.pause_wanted); /* the status alone: mid-rollout */
    decide_plan_free(&p);

    v.machinesets = fmachinesets;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.d.restricted);
    assert_false(p.d.pause_wanted);
    assert_false(((const decide_capi_t *)p.capi.data)->rolling);
    prev = (decide_seen_t){true, true, false, 0, 0, 0};
    assert_false(decide_unheld(&p, &prev, &prev));
    decide_plan_free(&p);

    /* The older MachineSet still has a machine: a rollout under way. */
    ((decide_capi_t *)f.obj[f.n - 2].data)->existing = 1;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.d.pause_wanted);
    assert_true(((const decide_capi_t *)p.capi.data)->rolling);
    decide_plan_free(&p);
    ((decide_capi_t *)f.obj[f.n - 2].data)->existing = 0;

    /* A MachineSet with machines and no revision: nothing to tell by. */
    ((decide_capi_t *)f.obj[f.n - 3].data)->revision = -1;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, &p, NULL, 0), 0);
    assert_true(p.d.pause_wanted);
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* The opt-in label the webhooks' objectSelector reads: on a HostedCluster
 * with a stanza, on the MachineDeployment of a NodePool with one (or whose
 * HostedCluster has one), off everything else; only with the webhooks. */
static void test_plan_optin_label(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    sched_time_t now = tu_at("2026-03-04T12:00:00Z");
    fake_setup(&f);
    add(&f, DECIDE_MD, "clusters-a", "np1",
        from_json(DECIDE_MD, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/"
                             "nodePool\":\"clusters/np1\"}}}"));
    add(&f, DECIDE_HC, "clusters", "free",
        from_json(DECIDE_HC, "{\"metadata\":{\"labels\":{\"" DECIDE_OPTIN_LABEL "\":\"true\"}},"
                             "\"spec\":{\"release\":{\"image\":\"r:1\"}}}"));
    add(&f, DECIDE_NP, "clusters", "np2",
        from_json(DECIDE_NP, "{\"spec\":{\"clusterName\":\"free\"}}"));
    add(&f, DECIDE_MD, "clusters-free", "np2",
        from_json(DECIDE_MD, "{\"metadata\":{\"labels\":{\"" DECIDE_OPTIN_LABEL "\":\"true\"}}}"));
    add(&f, DECIDE_NP, "clusters", "np3",
        from_json(DECIDE_NP, "{\"spec\":{\"clusterName\":\"a\"}}"));
    add(&f, DECIDE_MD, "clusters-a", "np3", from_json(DECIDE_MD, "{}"));
    decide_view_t v = plain_view(&f);
    const struct {
        decide_kind_t kind;
        const char *name;
        int want;
    } cases[] = {
        {DECIDE_HC, "a", 1},     /* a stanza, no label yet */
        {DECIDE_HC, "free", -1}, /* no stanza, labelled */
        {DECIDE_NP, "np1", 1},   /* its own stanza */
        {DECIDE_NP, "np2", -1},  /* neither it nor its cluster has one */
        {DECIDE_NP, "np3", 1},   /* no stanza of its own; its cluster has one */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        v.admission_holds = true;
        assert_int_equal(decide_plan(&v, cases[i].kind, "clusters", cases[i].name, now, &p,
                                     NULL, 0), 0);
        if (p.optin_label != cases[i].want)
            fail_msg("%s: optin_label %d, want %d", cases[i].name, p.optin_label, cases[i].want);
        decide_plan_free(&p);
        v.admission_holds = false; /* without the webhooks the label is not kept */
        assert_int_equal(decide_plan(&v, cases[i].kind, "clusters", cases[i].name, now, &p,
                                     NULL, 0), 0);
        assert_int_equal(p.optin_label, 0);
        decide_plan_free(&p);
    }
    /* Already labelled: nothing to write. */
    ((decide_hc_t *)f.obj[0].data)->optin_label = true;
    v.admission_holds = true;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", now, &p, NULL, 0), 0);
    assert_int_equal(p.optin_label, 0);
    decide_plan_free(&p);
    /* The patch: the label joins a pause patch of the same object. */
    json_t *patch = decide_label_patch(decide_pause_patch(DECIDE_PAUSE_ADD, "9"), true, "9");
    assert_string_equal(hcp_json_str(patch, "metadata.resourceVersion"), "9");
    assert_string_equal(json_string_value(json_object_get(
                            hcp_json_path(patch, "metadata.labels"), DECIDE_OPTIN_LABEL)),
                        "true");
    assert_non_null(json_object_get(hcp_json_path(patch, "metadata.annotations"),
                                    DECIDE_PAUSED_ANNOTATION));
    json_decref(patch);
    patch = decide_label_patch(NULL, false, "3");
    assert_true(json_is_null(json_object_get(hcp_json_path(patch, "metadata.labels"),
                                             DECIDE_OPTIN_LABEL)));
    json_decref(patch);
    fake_teardown(&f);
}

/* The same answer whether the view memoizes resolutions or not. */
static void test_plan_memo_parity(void **state)
{
    (void)state;
    fake_t f;
    fake_setup(&f);
    decide_view_t plain = plain_view(&f), memo = plain;
    memo.resolution = fmemo_res;
    memo.intersection = fmemo_inter;
    const char *instants[] = {"2026-03-04T12:00:00Z", "2026-03-07T01:00:00Z",
                              "2026-03-07T06:00:00Z"};
    for (size_t i = 0; i < sizeof(instants) / sizeof(instants[0]); i++) {
        for (decide_kind_t k = DECIDE_HC; k <= DECIDE_NP; k++) {
            decide_plan_t a, b;
            const char *name = k == DECIDE_HC ? "a" : "np1";
            sched_time_t now = tu_at(instants[i]);
            assert_int_equal(decide_plan(&plain, k, "clusters", name, now, &a, NULL, 0), 0);
            assert_int_equal(decide_plan(&memo, k, "clusters", name, now, &b, NULL, 0), 0);
            assert_false(b.owns_res);
            assert_int_equal(a.d.restricted, b.d.restricted);
            assert_int_equal(a.d.action, b.d.action);
            assert_int_equal(a.d.wake, b.d.wake);
            assert_int_equal(a.d.pending_metric, b.d.pending_metric);
            assert_string_equal(a.d.paused_message, b.d.paused_message);
            assert_string_equal(a.d.pending_message, b.d.pending_message);
            assert_true(json_equal(a.status_doc, b.status_doc));
            decide_plan_free(&a);
            decide_plan_free(&b);
        }
    }
    fake_teardown(&f);
}


/* The NodePools of a HostedCluster in the fake. */
static void fnodepools(void *ud, const char *ns, const char *cluster,
                       void (*fn)(const char *name, const decide_np_t *np, void *arg), void *arg)
{
    fake_t *f = ud;
    for (int i = 0; i < f->n; i++) {
        const decide_np_t *np = f->obj[i].data;
        if (f->obj[i].kind == DECIDE_NP && strcmp(f->obj[i].ns, ns) == 0 && np->cluster_name &&
            strcmp(np->cluster_name, cluster) == 0)
            fn(f->obj[i].name, np, arg);
    }
}

#define HC_HELD_JSON                                                                           \
    "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"    \
    "\"weekend\",\"changemanagement.hypershift.openshift.io/requested-hostedcluster-spec\":"    \
    "\"{\\\"configuration\\\":{\\\"proxy\\\":{\\\"httpProxy\\\":\\\"http://p2\\\"}}}\"}},"   \
    "\"spec\":{\"infraID\":\"b-x1\",\"release\":{\"image\":\"r:1\"}},"                        \
    "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}"

/* A HostedCluster with held fields that roll every NodePool: they go when
 * it and all its pools may change (Saturday), not before (pending
 * WaitingForCommonWindow, woken at the window); a Restrictive pool leaves
 * no common instant (NoCommonWindow, naming it). */
static void test_plan_common_window(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "b", from_json(DECIDE_HC, HC_HELD_JSON));
    add(&f, DECIDE_NP, "clusters", "b1",
        from_json(DECIDE_NP, "{\"metadata\":{},\"spec\":{\"clusterName\":\"b\"}}"));
    decide_view_t v = plain_view(&f);
    v.nodepools = fnodepools;
    /* Wednesday: restricted; the common window is Saturday's. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "b", tu_at("2026-03-04T12:00:00Z"), &p,
                                 NULL, 0),
                     0);
    assert_true(p.decided);
    assert_true(p.common.computed);
    assert_int_equal(p.common.pools, 1);
    assert_false(p.fields_go);
    assert_string_equal(p.d.pending_reason, "WaitingForCommonWindow");
    assert_non_null(strstr(p.d.pending_message, "(configuration)"));
    assert_true(p.d.wake <= tu_at("2026-03-07T00:00:00Z"));
    decide_plan_free(&p);
    /* Saturday: all may change; the request goes. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "b", tu_at("2026-03-07T01:00:00Z"), &p,
                                 NULL, 0),
                     0);
    assert_true(p.common.permitted);
    assert_true(p.fields_go);
    decide_plan_free(&p);
    /* A Restrictive pool: no common instant, named; nothing goes on Saturday. */
    add(&f, DECIDE_NP, "clusters", "b2",
        from_json(DECIDE_NP, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                             "openshift.io/strategy\":\"Restrictive\"}},\"spec\":{\"clusterName\":"
                             "\"b\"}}"));
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "b", tu_at("2026-03-07T01:00:00Z"), &p,
                                 NULL, 0),
                     0);
    assert_false(p.fields_go);
    assert_false(p.common.has_window);
    assert_string_equal(p.d.pending_reason, "NoCommonWindow");
    assert_non_null(strstr(p.d.pending_message, "NodePool b2"));
    assert_true(p.d.pending_status);
    decide_plan_free(&p);
    /* Nothing held, nothing asked: no common window computed. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", tu_at("2026-03-07T01:00:00Z"), &p,
                                 NULL, 0),
                     0);
    assert_false(p.common.computed);
    decide_plan_free(&p);
    fake_teardown(&f);
}

#define NP_POLICY_JSON(policy, cluster)                                                        \
    "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"     \
    "\"" policy "\"}},\"spec\":{\"clusterName\":\"" cluster "\"}}"

/* Two pools that each meet the HostedCluster's window but not each other:
 * the one named as leaving no common instant is the later name, whatever
 * order the view gives them in (the controller's cache and explain's list
 * give different orders; both must name the same pool). */
static void test_plan_common_window_pool_order(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "b", from_json(DECIDE_HC, HC_HELD_JSON));
    add(&f, DECIDE_NP, "clusters", "z1", from_json(DECIDE_NP, NP_POLICY_JSON("late", "b")));
    add(&f, DECIDE_NP, "clusters", "a1", from_json(DECIDE_NP, NP_POLICY_JSON("early", "b")));
    decide_view_t v = plain_view(&f);
    v.nodepools = fnodepools; /* gives z1, then a1 */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "b", tu_at("2026-03-07T01:00:00Z"), &p,
                                 NULL, 0),
                     0);
    assert_false(p.common.has_window);
    assert_int_equal(p.common.pools, 2);
    assert_string_equal(p.d.pending_reason, "NoCommonWindow");
    assert_non_null(strstr(p.d.pending_message,
                           "NodePool z1 meet none of the HostedCluster's and NodePool a1"));
    decide_plan_free(&p);
    fake_teardown(&f);
}

#define NP_WEEKEND_JSON(cluster)                                                               \
    "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"     \
    "\"weekend\"}},\"spec\":{\"clusterName\":\"" cluster "\"}}"

/* A HostedCluster without a stanza of its own whose NodePool has one: it
 * opts in (the label the webhook's objectSelector reads), a held request
 * of its fields that roll every NodePool waits for the pool's window
 * (never restricted itself), and the webhook's common window is closed
 * outside it. One whose pools have no stanza stays untouched. */
static void test_plan_pools_opt_cluster_in(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    sched_time_t wed = tu_at("2026-03-04T12:00:00Z"), sat = tu_at("2026-03-07T01:00:00Z");
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "c",
        from_json(DECIDE_HC, "{\"spec\":{\"release\":{\"image\":\"r:1\"}}}"));
    add(&f, DECIDE_NP, "clusters", "c1", from_json(DECIDE_NP, NP_WEEKEND_JSON("c")));
    add(&f, DECIDE_HC, "clusters", "free",
        from_json(DECIDE_HC, "{\"spec\":{\"release\":{\"image\":\"r:1\"}}}"));
    add(&f, DECIDE_NP, "clusters", "free1",
        from_json(DECIDE_NP, "{\"metadata\":{},\"spec\":{\"clusterName\":\"free\"}}"));
    add(&f, DECIDE_HC, "clusters", "d",
        from_json(DECIDE_HC,
                  "{\"metadata\":{\"labels\":{\"" DECIDE_OPTIN_LABEL "\":\"true\"},"
                  "\"annotations\":{\"changemanagement.hypershift.openshift.io/"
                  "requested-hostedcluster-spec\":\"{\\\"configuration\\\":{\\\"proxy\\\":"
                  "{\\\"httpProxy\\\":\\\"http://p2\\\"}}}\"}},"
                  "\"spec\":{\"release\":{\"image\":\"r:1\"}}}"));
    add(&f, DECIDE_NP, "clusters", "d1", from_json(DECIDE_NP, NP_WEEKEND_JSON("d")));
    decide_view_t v = plain_view(&f);
    v.nodepools = fnodepools;
    v.admission_holds = true;

    /* The label follows the pools' stanzas. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "c", wed, &p, NULL, 0), 0);
    assert_true(p.opted_in);
    assert_int_equal(p.optin_label, 1);
    assert_false(p.d.restricted); /* never restricted itself */
    decide_plan_free(&p);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "free", wed, &p, NULL, 0), 0);
    assert_false(p.opted_in);
    assert_int_equal(p.optin_label, 0); /* untouched */
    assert_false(p.common.computed);
    decide_plan_free(&p);
    ((decide_hc_t *)f.obj[f.n - 4].data)->optin_label = true; /* "free", labelled by hand */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "free", wed, &p, NULL, 0), 0);
    assert_int_equal(p.optin_label, -1);
    decide_plan_free(&p);

    /* The webhook's question (common_window): closed on Wednesday, open on
     * Saturday, though the HostedCluster itself may always change. */
    v.common_window = true;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "c", wed, &p, NULL, 0), 0);
    assert_true(p.common.computed);
    assert_int_equal(p.common.pools, 1);
    assert_false(p.common.permitted);
    assert_true(p.common.has_window);
    assert_true(p.common.start == tu_at("2026-03-07T00:00:00Z"));
    decide_plan_free(&p);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "c", sat, &p, NULL, 0), 0);
    assert_true(p.common.permitted);
    decide_plan_free(&p);
    v.common_window = false;

    /* A held request: waits for the pool's window, then goes. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "d", wed, &p, NULL, 0), 0);
    assert_int_equal(p.optin_label, 0); /* labelled already */
    assert_false(p.fields_go);
    assert_string_equal(p.d.pending_reason, DECIDE_COMMON_WAIT_REASON);
    assert_int_equal(p.d.pending_metric, 2);
    decide_plan_free(&p);
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "d", sat, &p, NULL, 0), 0);
    assert_true(p.fields_go);
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* ChangesInitiated is told once per held change let through: a NodePool's
 * configuration alone (never a pending version) and the HostedCluster's
 * fields that roll every NodePool once the write that applies them shows,
 * not while the request is still carried; a pause's pending changes that
 * may start (2 -> 1) as before; nothing undecided. */
static void test_plan_initiated(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    sched_time_t wed = tu_at("2026-03-04T12:00:00Z"), sat = tu_at("2026-03-07T01:00:00Z");
    fake_setup(&f);
    add(&f, DECIDE_NP, "clusters", "held",
        from_json(DECIDE_NP,
                  "{\"metadata\":{\"annotations\":{" "\"changemanagement.hypershift.openshift.io/"
                  "policy\":\"weekend\",\"" DECIDE_REQUESTED_NODEPOOL_ANNOTATION "\":"
                  "\"{\\\"config\\\":[{\\\"name\\\":\\\"cm2\\\"}]}\"}},"
                  "\"spec\":{\"clusterName\":\"a\",\"config\":[{\"name\":\"cm1\"}]}}"));
    add(&f, DECIDE_NP, "clusters", "applied",
        from_json(DECIDE_NP, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                             "openshift.io/policy\":\"weekend\"}},\"spec\":{\"clusterName\":"
                             "\"a\",\"config\":[{\"name\":\"cm2\"}]}}"));
    add(&f, DECIDE_HC, "clusters", "b", from_json(DECIDE_HC, HC_HELD_JSON));
    decide_view_t v = plain_view(&f);
    v.nodepools = fnodepools;

    /* Held on Wednesday: blocked, nothing told. */
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "held", wed, &p, NULL, 0), 0);
    assert_int_equal(p.d.pending_metric, 2);
    assert_false(decide_initiated(&p, true, 2, false));
    decide_plan_free(&p);
    /* Saturday, the release write sent but not seen yet: not told. */
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "held", sat, &p, NULL, 0), 0);
    assert_false(decide_initiated(&p, true, 2, true));
    decide_plan_free(&p);
    /* The write landed: nothing pending (configuration alone), told once. */
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "applied", sat, &p, NULL, 0), 0);
    assert_int_equal(p.d.pending_metric, 0);
    assert_true(decide_initiated(&p, true, 2, true));
    assert_false(decide_initiated(&p, true, 2, false)); /* the next decision: not again */
    assert_false(decide_initiated(&p, true, 0, false));
    p.d.pending_metric = 1; /* a pause's pending changes may start */
    assert_true(decide_initiated(&p, true, 2, false));
    assert_false(decide_initiated(&p, false, 2, false));
    p.decided = false;
    assert_false(decide_initiated(&p, true, 2, true));
    decide_plan_free(&p);
    /* The HostedCluster's held fields: not while it carries the request. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "b", sat, &p, NULL, 0), 0);
    assert_true(p.fields_go);
    assert_false(decide_initiated(&p, true, 2, true));
    decide_plan_free(&p);
    /* ... and once it is applied (no request left, nothing pending). */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", sat, &p, NULL, 0), 0);
    assert_true(decide_initiated(&p, false, 0, true));
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* The writes a plan asks for, in order: the CAPI object, the object
 * itself, its status; a held change let through alone and first. */
static void expect_write(const decide_writes_t *ws, int i, decide_write_target_t target,
                         decide_write_kind_t kind, const char *what, bool first)
{
    assert_true(i < ws->n);
    if (ws->w[i].target != target || ws->w[i].kind != kind || strcmp(ws->w[i].what, what) != 0 ||
        ws->w[i].first != first)
        fail_msg("write %d: target %d kind %d %s first %d; want %d %d %s %d", i, ws->w[i].target,
                 ws->w[i].kind, ws->w[i].what, ws->w[i].first, target, kind, what, first);
    assert_non_null(ws->w[i].patch);
}

static void test_writes_order(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    decide_writes_t ws;
    sched_time_t wed = tu_at("2026-03-04T12:00:00Z"), sat = tu_at("2026-03-07T01:00:00Z");
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "held",
        from_json(DECIDE_HC,
                  "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/"
                  "policy\":\"weekend\",\"" DECIDE_REQUESTED_RELEASE_ANNOTATION "\":\"r:2\"}},"
                  "\"spec\":{\"infraID\":\"h-x1\",\"release\":{\"image\":\"r:1\"}},"
                  "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}"));
    add(&f, DECIDE_CLUSTER, "clusters-held", "h-x1", from_json(DECIDE_CLUSTER, "{}"));
    decide_view_t v = plain_view(&f);

    /* Restricted: the CAPI Cluster's pause, then the status. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", wed, &p, NULL, 0), 0);
    assert_int_equal(decide_writes(&p, wed, &ws), 0);
    assert_false(ws.releasing);
    assert_int_equal(ws.n, 2);
    expect_write(&ws, 0, DECIDE_WRITE_CAPI, DECIDE_WRITE_METADATA, "pause", false);
    expect_write(&ws, 1, DECIDE_WRITE_SELF, DECIDE_WRITE_STATUS, "status", false);
    assert_string_equal(hcp_json_str(ws.w[0].patch, "metadata.resourceVersion"), "7");
    decide_writes_free(&ws);
    assert_int_equal(ws.n, 0);
    decide_plan_free(&p);

    /* With the webhooks (they hold the release; no pause), the opt-in
     * label on the object itself: the status waits for the next plan (it
     * would replace the same version). */
    v.admission_holds = true;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", wed, &p, NULL, 0), 0);
    assert_int_equal(decide_writes(&p, wed, &ws), 0);
    assert_int_equal(ws.n, 1);
    expect_write(&ws, 0, DECIDE_WRITE_SELF, DECIDE_WRITE_METADATA, "opt-in label", false);
    decide_writes_free(&ws);
    decide_plan_free(&p);
    v.admission_holds = false;

    /* A release held outside its window: written like any other. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "held", wed, &p, NULL, 0), 0);
    assert_false(decide_releases_held(&p));
    assert_int_equal(decide_writes(&p, wed, &ws), 0);
    assert_false(ws.releasing);
    assert_int_equal(ws.n, 2);
    expect_write(&ws, 0, DECIDE_WRITE_CAPI, DECIDE_WRITE_METADATA, "pause", false);
    expect_write(&ws, 1, DECIDE_WRITE_SELF, DECIDE_WRITE_STATUS, "status", false);
    decide_writes_free(&ws);
    decide_plan_free(&p);

    /* Its window open: the release alone and first; the pause of its CAPI
     * Cluster is lifted by the next plan, after the answer. */
    ((decide_capi_t *)f.obj[f.n - 1].data)->paused = true; /* ours */
    ((decide_capi_t *)f.obj[f.n - 1].data)->marker = true;
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "held", sat, &p, NULL, 0), 0);
    assert_true(decide_releases_held(&p));
    assert_int_equal(p.d.action, DECIDE_PAUSE_REMOVE);
    assert_int_equal(decide_writes(&p, sat, &ws), 0);
    assert_true(ws.releasing);
    assert_int_equal(ws.n, 1);
    expect_write(&ws, 0, DECIDE_WRITE_SELF, DECIDE_WRITE_METADATA, "held release", true);
    assert_string_equal(hcp_json_str(ws.w[0].patch, "spec.release.image"), "r:2");
    decide_writes_free(&ws);
    decide_plan_free(&p);

    /* The same window, nothing held, its CAPI Cluster not paused: the
     * status alone. */
    assert_int_equal(decide_plan(&v, DECIDE_HC, "clusters", "a", sat, &p, NULL, 0), 0);
    assert_int_equal(decide_writes(&p, sat, &ws), 0);
    assert_false(ws.releasing);
    assert_int_equal(ws.n, 1);
    expect_write(&ws, 0, DECIDE_WRITE_SELF, DECIDE_WRITE_STATUS, "status", false);
    decide_writes_free(&ws);
    decide_plan_free(&p);
    fake_teardown(&f);
}

/* DESIGN.md 3.13: a request withdrawn on Wednesday, with nothing else
 * pending, is news in ChangesPending (which the hosted ClusterVersion
 * quotes) until the end of the window it waited for, Saturday 06:00:
 * through the window, and no longer after it; a NodePool's too, read
 * against its timeline within its HostedCluster's. */
#define WITHDRAWN_ANN                                                                       \
    "\"changemanagement.hypershift.openshift.io/withdrawn-by\":\"flux\","                 \
    "\"changemanagement.hypershift.openshift.io/withdrawn-at\":\"2026-03-04T09:00:00Z\"," \
    "\"changemanagement.hypershift.openshift.io/withdrawn\":\"release 4.17.1\""
static void test_plan_withdrawn_news(void **state)
{
    (void)state;
    static const char news[] = "No changes are pending: the request for release 4.17.1 was "
                               "withdrawn by flux at 2026-03-04T09:00:00Z.";
    fake_t f;
    decide_plan_t p;
    fake_setup(&f);
    add(&f, DECIDE_HC, "clusters", "w",
        from_json(DECIDE_HC, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                             "openshift.io/policy\":\"weekend\"," WITHDRAWN_ANN "}},\"spec\":{"
                             "\"release\":{\"image\":\"r:1\"}},\"status\":{\"version\":{"
                             "\"desired\":{\"image\":\"r:1\"}}}}"));
    add(&f, DECIDE_NP, "clusters", "wp",
        from_json(DECIDE_NP, "{\"metadata\":{\"annotations\":{" WITHDRAWN_ANN "}},\"spec\":{"
                             "\"clusterName\":\"w\"}}"));
    decide_view_t v = plain_view(&f);
    static const struct {
        const char *now;
        bool news;
        const char *wake;
    } at[] = {{"2026-03-04T12:00:00Z", true, "2026-03-07T00:00:00Z"},
              {"2026-03-07T03:00:00Z", true, "2026-03-07T06:00:00Z"},
              {"2026-03-07T07:00:00Z", false, "2026-03-14T00:00:00Z"}};
    for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
        for (int k = 0; k < 2; k++) {
            assert_int_equal(decide_plan(&v, k ? DECIDE_NP : DECIDE_HC, "clusters", k ? "wp" : "w",
                                         tu_at(at[i].now), &p, NULL, 0),
                             0);
            assert_true(p.decided);
            assert_false(p.d.pending_status);
            assert_string_equal(p.d.pending_message, at[i].news ? news : "No changes are pending.");
            assert_true(p.d.wake == tu_at(at[i].wake));
            /* the companion shows the withdrawal whatever the time */
            assert_string_equal(
                json_string_value(json_object_get(
                    json_object_get(json_object_get(p.status_doc, "audit"), "withdrawn"), "what")),
                "release 4.17.1");
            decide_plan_free(&p);
        }
    fake_teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_common_window),
        cmocka_unit_test(test_plan_common_window_pool_order),
        cmocka_unit_test(test_plan_absent_object),
        cmocka_unit_test(test_plan_hostedcluster),
        cmocka_unit_test(test_plan_hostedcluster_opted_out),
        cmocka_unit_test(test_plan_stale_stops_before_deciding),
        cmocka_unit_test(test_plan_nodepool_within_cluster),
        cmocka_unit_test(test_plan_memo_parity),
        cmocka_unit_test(test_plan_unheld),
        cmocka_unit_test(test_plan_rolling_read_against_machinesets),
        cmocka_unit_test(test_plan_optin_label),
        cmocka_unit_test(test_plan_pools_opt_cluster_in),
        cmocka_unit_test(test_plan_initiated),
        cmocka_unit_test(test_plan_withdrawn_news),
        cmocka_unit_test(test_writes_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
