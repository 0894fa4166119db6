/* test_gate.c: the health gate's verdicts and what it does to a plan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "check/check.h"
#include "decide/companion.h"
#include "decide/gate.h"
#include "decide/plan.h"
#include "decide/testutil_decide.h"

/* The verdict on a status.conditions list (JSON text) of a HostedCluster
 * (nodepool false) or NodePool; why receives the clause. */
static bool verdict(const char *conds, const char *history_state, bool nodepool, char *why,
                    size_t len)
{
    char text[2048];
    decide_health_t h;
    snprintf(text, sizeof(text),
             "{\"status\":{\"conditions\":%s,\"version\":{\"history\":[{\"state\":\"%s\"}]}}}",
             conds, history_state);
    json_t *obj = tu_doc(text);
    decide_health_extract(obj, nodepool, &h);
    json_decref(obj);
    why[0] = '\0';
    return decide_health_ok(&h, nodepool, why, len);
}

#define COND(t, s, r) "{\"type\":\"" t "\",\"status\":\"" s "\",\"reason\":\"" r "\"}"

static void test_gate_hostedcluster_verdicts(void **state)
{
    (void)state;
    char why[DECIDE_GATE_WHYLEN];
    assert_true(verdict("[" COND("Available", "True", "AsExpected") "," COND(
                            "Degraded", "False", "AsExpected") "]",
                        "Completed", false, why, sizeof(why)));
    assert_false(verdict("[" COND("Available", "False", "KASLoadBalancerNotReachable") "]",
                         "Completed", false, why, sizeof(why)));
    assert_string_equal(why, "Available is False (reason KASLoadBalancerNotReachable)");
    assert_false(verdict("[" COND("Available", "Unknown", "StatusUnknown") "]", "Completed",
                         false, why, sizeof(why)));
    assert_string_equal(why, "Available is Unknown (reason StatusUnknown)");
    assert_false(verdict("[" COND("Available", "True", "AsExpected") "," COND(
                             "Degraded", "True", "UnavailableReplicas") "]",
                         "Completed", false, why, sizeof(why)));
    assert_string_equal(why, "Degraded is True (reason UnavailableReplicas)");
    assert_false(verdict("[" COND("Available", "True", "AsExpected") "]", "Partial", false, why,
                         sizeof(why)));
    assert_string_equal(why,
                        "a control-plane update is still Partial in status.version.history");
    /* Not reported at all: nothing to judge; a NodePool's conditions on a
     * HostedCluster are not the HostedCluster's. */
    assert_true(verdict("[]", "Completed", false, why, sizeof(why)));
    assert_true(verdict("[" COND("Ready", "False", "X") "]", "Completed", false, why,
                        sizeof(why)));
    /* Control bytes in a reason are not quoted as they are. */
    assert_false(verdict("[" COND("Available", "False", "a\\u0001b") "]", "Completed", false, why,
                         sizeof(why)));
    assert_string_equal(why, "Available is False (reason a?b)");
}

static void test_gate_nodepool_verdicts(void **state)
{
    (void)state;
    char why[DECIDE_GATE_WHYLEN];
    assert_true(verdict("[" COND("Ready", "True", "AsExpected") "," COND(
                            "AllNodesHealthy", "True", "AsExpected") "]",
                        "", true, why, sizeof(why)));
    assert_false(verdict("[" COND("Ready", "False", "WaitingForAvailableMachines") "]", "", true,
                         why, sizeof(why)));
    assert_string_equal(why, "Ready is False (reason WaitingForAvailableMachines)");
    assert_false(verdict("[" COND("Ready", "True", "AsExpected") "," COND(
                             "AllNodesHealthy", "False", "NodeConditionsFailed") "]",
                         "", true, why, sizeof(why)));
    assert_string_equal(why, "AllNodesHealthy is False (reason NodeConditionsFailed)");
    /* A pool without a single Machine: HyperShift's AllNodesHealthy is False
     * with reason NotFound, or AsExpected when set to no replicas
     * (nodepool/conditions.go); no machine fails a health check. */
    assert_true(verdict("[" COND("AllNodesHealthy", "False", "NotFound") "]", "", true, why,
                        sizeof(why)));
    assert_true(verdict("[" COND("Ready", "True", "AsExpected") "," COND(
                            "AllNodesHealthy", "False", "AsExpected") "]",
                        "", true, why, sizeof(why)));
    /* Machines still provisioning (AllMachinesReady False) are not failing;
     * a HostedCluster's Degraded on a NodePool is not judged. */
    assert_true(verdict("[" COND("Ready", "True", "AsExpected") "," COND(
                            "AllMachinesReady", "False", "Provisioning") "," COND(
                            "Degraded", "True", "X") "]",
                        "Partial", true, why, sizeof(why)));
}

static void test_gate_override(void **state)
{
    (void)state;
    stanza_t st;
    decide_health_t h;
    json_t *o = tu_doc("{\"metadata\":{\"annotations\":{"
                  "\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
                  "\"changemanagement.hypershift.openshift.io/permissive-until\":"
                  "\"2026-03-07T03:00:00Z\","
                  "\"changemanagement.hypershift.openshift.io/skip-health-gate\":\"true\"}}}");
    stanza_parse(o, &st);
    decide_health_extract(o, false, &h);
    assert_true(st.valid);
    assert_true(h.skip);
    assert_true(decide_gate_override(&st, &h, tu_at("2026-03-07T02:59:59Z")));
    assert_false(decide_gate_override(&st, &h, tu_at("2026-03-07T03:00:00Z"))); /* expired */
    h.skip = false; /* an override that does not say so */
    assert_false(decide_gate_override(&st, &h, tu_at("2026-03-07T01:00:00Z")));
    json_decref(o);
    /* The annotation without an override: no skip. */
    o = tu_doc("{\"metadata\":{\"annotations\":{"
          "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\","
          "\"changemanagement.hypershift.openshift.io/skip-health-gate\":\"true\"}}}");
    stanza_parse(o, &st);
    decide_health_extract(o, false, &h);
    assert_true(h.skip);
    assert_false(decide_gate_override(&st, &h, tu_at("2026-03-07T01:00:00Z")));
    json_decref(o);
    o = tu_doc("{\"metadata\":{\"annotations\":{"
          "\"changemanagement.hypershift.openshift.io/skip-health-gate\":\"yes\"}}}");
    decide_health_extract(o, false, &h);
    assert_false(h.skip); /* only "true" says so */
    json_decref(o);
}

/* ---- through decide_plan() --------------------------------------------- */

typedef struct fake {
    decide_kind_t kind[4];
    const char *name[4];
    void *data[4];
    int n;
    sched_t *weekend;
} fake_t;

static bool fget(void *ud, decide_kind_t kind, const char *ns, const char *name, decide_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    for (int i = 0; i < f->n; i++)
        if (f->kind[i] == kind && strcmp(f->name[i], name) == 0) {
            *out = (decide_ref_t){f->data[i], "7", "uid-1"};
            return true;
        }
    return false;
}

static int flookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    if (strcmp(name, "weekend") == 0) {
        out->found = out->ready = 1;
        out->sched = f->weekend;
    }
    return 0;
}

static void add(fake_t *f, decide_kind_t kind, const char *name, const char *text)
{
    json_t *j = tu_doc(text);
    f->kind[f->n] = kind;
    f->name[f->n] = name;
    f->data[f->n] = kind == DECIDE_HC   ? (void *)decide_hc_extract(j)
                    : kind == DECIDE_NP ? (void *)decide_np_extract(j)
                                        : (void *)decide_capi_extract(kind, j);
    assert_non_null(f->data[f->n]);
    f->n++;
    json_decref(j);
}

static void fake_free(fake_t *f)
{
    for (int i = 0; i < f->n; i++) {
        if (f->kind[i] == DECIDE_HC)
            decide_hc_free(f->data[i]);
        else if (f->kind[i] == DECIDE_NP)
            decide_np_free(f->data[i]);
        else
            decide_capi_free(f->data[i]);
    }
    sched_unref(f->weekend);
}

/* Saturdays 00:00-06:00 UTC. */
static void fake_init(fake_t *f)
{
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * 3600, NULL, 0};
    char err[128];
    memset(f, 0, sizeof(*f));
    assert_int_equal(sched_compile(&sp, tu_at("2026-03-04T12:00:00Z"), &f->weekend, err, sizeof(err)),
                     0);
}

/* A HostedCluster following "weekend" with release r:2 held (r:1 runs);
 * extra: more annotations; conds: its status.conditions. */
static void add_hc_updates(fake_t *f, const char *extra, const char *conds, const char *updates)
{
    char text[4096];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"annotations\":{"
             "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\","
             "\"changemanagement.hypershift.openshift.io/requested-release-image\":\"r:2\"%s}},"
             "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"}},"
             "\"status\":{\"conditions\":%s,\"version\":{\"desired\":{\"image\":\"r:1\"},"
             "\"history\":[{\"state\":\"Completed\",\"image\":\"r:1\"}]%s}}}",
             extra, conds, updates);
    add(f, DECIDE_HC, "a", text);
    add(f, DECIDE_CLUSTER, "a-x1", "{}");
}

static void add_hc(fake_t *f, const char *extra, const char *conds)
{
    add_hc_updates(f, extra, conds, "");
}

static void plan(fake_t *f, decide_kind_t kind, const char *name, sched_time_t now,
                 decide_plan_t *p)
{
    decide_view_t v = {.ud = f, .status_doc = true, .admission_holds = true, .get = fget,
                       .lookup_policy = flookup};
    char err[256];
    assert_int_equal(decide_plan(&v, kind, "clusters", name, now, p, err, sizeof(err)), 0);
    assert_true(p->decided);
}

/* A window opens on a degraded cluster with a release held: the release
 * stays held, and every place that tells says why. */
static void test_gate_holds_release_of_unhealthy_cluster(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_init(&f);
    add_hc(&f, "", "[" COND("Available", "True", "AsExpected") "," COND(
                       "Degraded", "True", "UnavailableReplicas") "]");
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.state.permitted); /* the window is open */
    assert_true(p.d.gate.applies);
    assert_false(p.d.gate.pass);
    assert_false(p.d.gate.skipped);
    assert_true(p.d.restricted); /* so the release patch is not written */
    assert_string_equal(p.d.restricted_reason, "HealthGate");
    assert_string_equal(p.d.paused_reason, "HealthGate");
    assert_string_equal(p.d.pending_reason, "HealthGate");
    assert_true(p.d.paused_status);
    assert_non_null(strstr(p.d.paused_message, "Degraded is True (reason UnavailableReplicas)"));
    assert_non_null(strstr(p.d.paused_message, "until 2026-03-07T06:00:00Z"));
    assert_int_equal(p.d.pending_metric, 2);
    assert_int_equal(p.d.action, DECIDE_PAUSE_ADD); /* the CAPI signal of a held change */
    assert_true(p.d.wake == tu_at("2026-03-07T06:00:00Z"));
    json_t *gate = json_object_get(p.status_doc, "healthGate");
    assert_true(json_is_false(json_object_get(gate, "passed")));
    assert_string_equal(json_string_value(json_object_get(gate, "message")),
                        "Degraded is True (reason UnavailableReplicas)");
    assert_string_equal(hcp_json_str(p.status_doc, "behavior.current.state"), "ChangesPaused");
    assert_string_equal(hcp_json_str(p.status_doc, "behavior.current.reason"), "HealthGate");
    assert_string_equal(hcp_json_str(p.status_doc, "heldChange.release"), "r:2");
    decide_plan_free(&p);
    fake_free(&f);
}

/* The same window on a healthy cluster lets the release through; outside
 * the window the gate has nothing to say. */
static void test_gate_passes_healthy_cluster(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_init(&f);
    add_hc(&f, "", "[" COND("Available", "True", "AsExpected") "," COND(
                       "Degraded", "False", "AsExpected") "]");
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.applies);
    assert_true(p.d.gate.pass);
    assert_false(p.d.restricted);
    assert_string_equal(p.d.paused_reason, "ChangesPermitted");
    assert_true(json_is_true(hcp_json_path(p.status_doc, "healthGate.passed")));
    json_t *rel = decide_release_patch(p.self.data, p.self.rv);
    assert_non_null(rel);
    json_decref(rel);
    decide_plan_free(&p);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T07:00:00Z"), &p);
    assert_false(p.d.gate.applies);
    assert_string_equal(p.d.restricted_reason, "OutsideMaintenanceWindow");
    assert_null(json_object_get(p.status_doc, "healthGate"));
    decide_plan_free(&p);
    fake_free(&f);
}

/* An override lets a held release through an unhealthy cluster only when
 * it says so. */
static void test_gate_override_in_plan(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    const char *conds = "[" COND("Available", "False", "Down") "]";
    fake_init(&f);
    add_hc(&f,
           ",\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
           "\"changemanagement.hypershift.openshift.io/permissive-until\":"
           "\"2026-03-10T00:00:00Z\"",
           conds);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-09T01:00:00Z"), &p);
    assert_true(p.d.gate.applies);
    assert_false(p.d.gate.skipped);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "HealthGate");
    decide_plan_free(&p);
    fake_free(&f);

    fake_init(&f);
    add_hc(&f,
           ",\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
           "\"changemanagement.hypershift.openshift.io/permissive-until\":"
           "\"2026-03-10T00:00:00Z\","
           "\"changemanagement.hypershift.openshift.io/skip-health-gate\":\"true\"",
           conds);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-09T01:00:00Z"), &p);
    assert_true(p.d.gate.applies);
    assert_false(p.d.gate.pass);
    assert_true(p.d.gate.skipped);
    assert_false(p.d.restricted);
    json_t *gate = json_object_get(p.status_doc, "healthGate");
    assert_true(json_is_true(json_object_get(gate, "skipped")));
    decide_plan_free(&p);
    fake_free(&f);
}

/* Whether the held release is still recommended, as read from the
 * HostedCluster's status.version (availableUpdates, conditionalUpdates). */
static void outcome_of(const char *text, bool nodepool, decide_health_t *h);

static decide_health_t rec_of(const char *annotations, const char *version)
{
    char text[4096];
    decide_health_t h;
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"annotations\":{%s}},\"status\":{\"version\":{%s}}}",
             annotations, version);
    outcome_of(text, false, &h);
    return h;
}

#define REQ(img) "\"" DECIDE_REQUESTED_RELEASE_ANNOTATION "\":\"" img "\""
#define REQ_CP(img) "\"" DECIDE_REQUESTED_CP_RELEASE_ANNOTATION "\":\"" img "\""
#define OCP "quay.io/openshift-release-dev/ocp-release:"
#define AVAIL(v, img) "{\"version\":\"" v "\",\"image\":\"" img "\"}"
#define CONDU(v, img, st, risks)                                                              \
    "{\"release\":" AVAIL(v, img) ",\"risks\":" risks ",\"conditions\":[{\"type\":"            \
    "\"Recommended\",\"status\":\"" st "\",\"reason\":\"R\"}]}"

static void test_rec_extract(void **state)
{
    (void)state;
    char why[DECIDE_GATE_WHYLEN];
    decide_health_t h;
    /* Nothing held: nothing to check. */
    h = rec_of("", "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "]");
    assert_int_equal(h.rec, DECIDE_REC_NONE);
    assert_true(decide_rec_ok(&h, why, sizeof(why)));
    /* No update service: both lists empty or absent: cannot judge, passes. */
    h = rec_of(REQ(OCP "4.18.2-x86_64"), "\"availableUpdates\":null");
    assert_int_equal(h.rec, DECIDE_REC_UNCHECKED);
    assert_true(decide_rec_ok(&h, why, sizeof(why)));
    h = rec_of(REQ(OCP "4.18.2-x86_64"), "\"availableUpdates\":[],\"conditionalUpdates\":[]");
    assert_int_equal(h.rec, DECIDE_REC_UNCHECKED);
    /* Listed: by its image, or by the version its tag names (the graph
     * names payloads by digest). */
    h = rec_of(REQ("x@sha256:1"), "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "]");
    assert_int_equal(h.rec, DECIDE_REC_OK);
    h = rec_of(REQ(OCP "4.18.2-x86_64"),
               "\"availableUpdates\":[" AVAIL("4.18.1", "x@sha256:0") "," AVAIL("4.18.2", "x@sha256:1") "]");
    assert_int_equal(h.rec, DECIDE_REC_OK);
    assert_string_equal(h.rec_version, "4.18.2");
    /* Gone from the graph: listed nowhere while others are. */
    h = rec_of(REQ(OCP "4.18.3-x86_64"), "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "]");
    assert_int_equal(h.rec, DECIDE_REC_GONE);
    assert_false(decide_rec_ok(&h, why, sizeof(why)));
    assert_string_equal(why, "release 4.18.3 is no longer offered for this cluster: neither "
                             "status.version.availableUpdates nor conditionalUpdates lists it "
                             "(pulled from the update graph)");
    /* Conditional: Recommended True or Unknown passes, False holds and
     * names its risks. */
    h = rec_of(REQ(OCP "4.18.3-x86_64"),
               "\"conditionalUpdates\":[" CONDU("4.18.3", "x@sha256:3", "True", "[]") "]");
    assert_int_equal(h.rec, DECIDE_REC_OK);
    h = rec_of(REQ(OCP "4.18.3-x86_64"),
               "\"conditionalUpdates\":[" CONDU("4.18.3", "x@sha256:3", "Unknown", "[]") "]");
    assert_int_equal(h.rec, DECIDE_REC_OK);
    h = rec_of(REQ(OCP "4.18.3-x86_64"),
               "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "],"
               "\"conditionalUpdates\":[" CONDU("4.18.3", "x@sha256:3", "False",
               "[{\"name\":\"OVNDrop\",\"url\":\"https://issues.redhat.com/OCPBUGS-1\"},"
               "{\"name\":\"Etcd\"}]") "]");
    assert_int_equal(h.rec, DECIDE_REC_RISK);
    assert_false(decide_rec_ok(&h, why, sizeof(why)));
    assert_string_equal(why, "release 4.18.3 is not recommended for this cluster: "
                             "conditionalUpdates says Recommended False (risk OVNDrop "
                             "(https://issues.redhat.com/OCPBUGS-1), Etcd)");
    /* The control plane's own request is the one HyperShift rolls to. */
    h = rec_of(REQ(OCP "4.18.2-x86_64") "," REQ_CP(OCP "4.18.9-x86_64"),
               "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "]");
    assert_int_equal(h.rec, DECIDE_REC_GONE);
    assert_string_equal(h.rec_version, "4.18.9");
    /* A digest-pinned request the lists do not name: "the held release". */
    h = rec_of(REQ("y@sha256:9"), "\"availableUpdates\":[" AVAIL("4.18.2", "x@sha256:1") "]");
    assert_false(decide_rec_ok(&h, why, sizeof(why)));
    assert_non_null(strstr(why, "the held release is no longer offered"));
    /* Malformed lists read as absent, never as recommended. */
    h = rec_of(REQ(OCP "4.18.2-x86_64"), "\"availableUpdates\":{\"a\":1},"
               "\"conditionalUpdates\":[7,{\"release\":[]}]");
    assert_int_equal(h.rec, DECIDE_REC_GONE);
}

/* A window opens on a healthy cluster whose held release was pulled: held
 * with reason ReleaseNotRecommended; listed again: let through; an
 * override with the skip annotation lets it through; a failing health says
 * so first. */
static void test_rec_in_plan(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    const char *healthy = "[" COND("Available", "True", "AsExpected") "]";
    const char *pulled = ",\"availableUpdates\":[" AVAIL("4.18.1", "r:1b") "]";
    fake_init(&f);
    add_hc_updates(&f, "", healthy, pulled);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.applies);
    assert_false(p.d.gate.pass);
    assert_false(p.d.gate.skipped);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "ReleaseNotRecommended");
    assert_string_equal(p.d.pending_reason, "ReleaseNotRecommended");
    assert_non_null(strstr(p.d.paused_message, "The held release is not let through: the held "
                                               "release is no longer offered"));
    assert_non_null(strstr(p.d.paused_message, DECIDE_SKIP_RECOMMENDATION_ANNOTATION));
    assert_int_equal(p.d.pending_metric, 2);
    assert_string_equal(hcp_json_str(p.status_doc, "behavior.current.reason"),
                        "ReleaseNotRecommended");
    decide_plan_free(&p);
    fake_free(&f);

    fake_init(&f);
    add_hc_updates(&f, "", healthy, ",\"availableUpdates\":[" AVAIL("4.18.2", "r:2") "]");
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.pass);
    assert_false(p.d.gate.unchecked);
    assert_false(p.d.restricted);
    decide_plan_free(&p);
    fake_free(&f);

    fake_init(&f); /* no update service: passes, says it did not check */
    add_hc(&f, "", healthy);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.pass);
    assert_true(p.d.gate.unchecked);
    decide_plan_free(&p);
    fake_free(&f);

    const char *override =
        ",\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
        "\"changemanagement.hypershift.openshift.io/permissive-until\":\"2026-03-10T00:00:00Z\"";
    char ann[512];
    snprintf(ann, sizeof(ann), "%s,\"%s\":\"true\"", override,
             DECIDE_SKIP_RECOMMENDATION_ANNOTATION);
    fake_init(&f);
    add_hc_updates(&f, ann, healthy, pulled);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-09T01:00:00Z"), &p);
    assert_false(p.d.gate.pass);
    assert_true(p.d.gate.skipped);
    assert_string_equal(p.d.gate.reason, "ReleaseNotRecommended");
    assert_false(p.d.restricted);
    decide_plan_free(&p);
    fake_free(&f);
    /* The health gate's skip does not skip the recommendation. */
    snprintf(ann, sizeof(ann), "%s,\"%s\":\"true\"", override, DECIDE_SKIP_GATE_ANNOTATION);
    fake_init(&f);
    add_hc_updates(&f, ann, "[" COND("Available", "False", "Down") "]", pulled);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-09T01:00:00Z"), &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "ReleaseNotRecommended");
    decide_plan_free(&p);
    fake_free(&f);
    /* Unhealthy and pulled, no override: the health says it first. */
    fake_init(&f);
    add_hc_updates(&f, "", "[" COND("Available", "False", "Down") "]", pulled);
    plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_string_equal(p.d.restricted_reason, "HealthGate");
    decide_plan_free(&p);
    fake_free(&f);
}

/* The pre-start checks' verdict, as a shell's view gives it. */
typedef struct fcheck {
    fake_t *f;
    uint8_t verdict;
    const char *why;
    int asked;
    uint64_t key;
    unsigned system;
} fcheck_t;

static void fcheck_fn(void *ud, const char *uid, uint64_t key, unsigned system,
                      decide_check_t *out)
{
    fcheck_t *c = ud;
    assert_string_equal(uid, "uid-1");
    c->asked++;
    c->key = key;
    c->system = system;
    out->verdict = c->verdict;
    snprintf(out->why, sizeof(out->why), "%s", c->why);
}

static bool fcget(void *ud, decide_kind_t kind, const char *ns, const char *name, decide_ref_t *out)
{
    return fget(((fcheck_t *)ud)->f, kind, ns, name, out);
}

static int fclookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    return flookup(((fcheck_t *)ud)->f, ns, name, out);
}

static void plan_checked(fcheck_t *c, decide_kind_t kind, const char *name, sched_time_t now,
                         decide_plan_t *p)
{
    decide_view_t v = {.ud = c, .status_doc = true, .admission_holds = true, .get = fcget,
                       .lookup_policy = fclookup, .check = fcheck_fn};
    char err[256];
    assert_int_equal(decide_plan(&v, kind, "clusters", name, now, p, err, sizeof(err)), 0);
    assert_true(p->decided);
}

/* The checks come last: a refusal or a missing answer keeps a change held
 * that windows and health let through (CheckFailed, CheckPending), saying
 * why; a pass lets it go; they are never asked about what the health gate
 * holds, and an override's skip of the health gate does not skip them. The
 * key names the change and its window, the same before the window (the
 * lead) and in it. */
static void test_checks_in_plan(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    const char *healthy = "[" COND("Available", "True", "AsExpected") "]";
    fcheck_t c = {.f = &f, .verdict = CHECK_FAIL,
                  .why = "check cab refused it: HTTP 503: change freeze"};
    sched_time_t window = tu_at("2026-03-07T00:00:00Z"), w;
    uint64_t key;
    unsigned system;

    fake_init(&f);
    add_hc(&f, "", healthy);
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_int_equal(c.asked, 1);
    assert_int_equal(c.system, CHECK_CONTROL_PLANE);
    assert_true(c.key == check_change_key("release r:2", window));
    assert_true(p.d.gate.applies);
    assert_false(p.d.gate.pass);
    assert_true(p.d.gate.by_check);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "CheckFailed");
    assert_string_equal(p.d.pending_reason, "CheckFailed");
    assert_non_null(strstr(p.d.paused_message, "The held change is not let through yet: check cab "
                                               "refused it: HTTP 503: change freeze. The check is "
                                               "asked again while the window is open, until "
                                               "2026-03-07T06:00:00Z."));
    assert_non_null(strstr(p.d.pending_message, "wait for the pre-start checks"));
    assert_int_equal(p.d.pending_metric, 2);
    assert_string_equal(hcp_json_str(p.status_doc, "behavior.current.reason"), "CheckFailed");
    /* after the gate, the same key */
    assert_true(decide_plan_check_key(&p, &w, &key, &system));
    assert_true(w == window && key == c.key && system == CHECK_CONTROL_PLANE);
    decide_plan_free(&p);

    c.verdict = CHECK_WAIT;
    c.why = "waiting for the answer of check cab";
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_string_equal(p.d.restricted_reason, "CheckPending");
    assert_non_null(strstr(p.d.paused_message, "It goes as soon as every check allows it"));
    decide_plan_free(&p);

    c.verdict = CHECK_PASS;
    c.why = "cab says: approved";
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.pass);
    assert_false(p.d.restricted);
    decide_plan_free(&p);

    /* before the window: the checks are not the gate's yet; the key is the
     * one the window will have */
    c.verdict = CHECK_FAIL;
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-06T23:50:00Z"), &p);
    assert_string_equal(p.d.restricted_reason, "OutsideMaintenanceWindow");
    assert_true(decide_plan_check_key(&p, &w, &key, &system));
    assert_true(w == window && key == check_change_key("release r:2", window));
    decide_plan_free(&p);
    fake_free(&f);

    /* unhealthy: the health gate says it, not the checks */
    fake_init(&f);
    add_hc(&f, "", "[" COND("Available", "False", "Down") "]");
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_string_equal(p.d.restricted_reason, "HealthGate");
    assert_false(p.d.gate.by_check);
    decide_plan_free(&p);
    fake_free(&f);

    /* the health gate skipped by an override: the checks still hold */
    char ann[512];
    snprintf(ann, sizeof(ann),
             ",\"changemanagement.hypershift.openshift.io/strategy\":\"PermissiveUntil\","
             "\"changemanagement.hypershift.openshift.io/permissive-until\":\"2026-03-10T00:00:00Z\","
             "\"%s\":\"true\"",
             DECIDE_SKIP_GATE_ANNOTATION);
    fake_init(&f);
    add_hc(&f, ann, "[" COND("Available", "False", "Down") "]");
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-09T01:00:00Z"), &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "CheckFailed");
    assert_false(p.d.gate.skipped);
    decide_plan_free(&p);
    fake_free(&f);

    /* nothing held: nothing to check */
    fake_init(&f);
    add(&f, DECIDE_HC, "a",
        "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"
        "\"weekend\"}},\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"}}}");
    c.asked = 0;
    plan_checked(&c, DECIDE_HC, "a", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_int_equal(c.asked, 0);
    assert_false(decide_plan_check_key(&p, &w, &key, &system));
    decide_plan_free(&p);
    fake_free(&f);
}

/* A NodePool with a held template in an open window: held while the pool
 * is not Ready, without pausing its MachineDeployment (it keeps scaling);
 * a rollout already under way is no held change and is not gated. */
static void test_gate_nodepool(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    fake_init(&f);
    add_hc(&f, "", "[]");
    add(&f, DECIDE_NP, "np1",
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\"}},"
        "\"spec\":{\"clusterName\":\"a\"},\"status\":{\"conditions\":[" COND(
            "Ready", "False", "WaitingForAvailableMachines") "]}}");
    add(&f, DECIDE_MD, "np1",
        "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePool\":\"clusters/np1\","
        "\"changemanagement.hypershift.openshift.io/held-template\":\"version 4.17.1\"}},"
        "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":2,\"updatedReplicas\":2}}");
    plan(&f, DECIDE_NP, "np1", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.gate.applies);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.paused_reason, "HealthGate");
    assert_non_null(strstr(p.d.pending_message, "Ready is False"));
    assert_int_equal(p.d.action, DECIDE_PAUSE_NONE);
    assert_int_equal(p.d.spec_pause, 0);
    assert_int_equal(p.d.pending_metric, 2);
    assert_string_equal(hcp_json_str(p.status_doc, "heldChange.template"), "version 4.17.1");
    decide_plan_free(&p);
    /* Mid-rollout: three machines exist, two updated. */
    decide_capi_free(f.data[3]);
    json_t *j = tu_doc("{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePool\":"
                  "\"clusters/np1\",\"changemanagement.hypershift.openshift.io/held-template\":"
                  "\"version 4.17.1\"}},\"spec\":{\"replicas\":2},"
                  "\"status\":{\"replicas\":3,\"updatedReplicas\":2}}");
    f.data[3] = decide_capi_extract(DECIDE_MD, j);
    json_decref(j);
    plan(&f, DECIDE_NP, "np1", tu_at("2026-03-07T01:00:00Z"), &p);
    assert_false(p.d.gate.applies);
    assert_false(p.d.restricted);
    decide_plan_free(&p);
    fake_free(&f);
}

/* The outcome of the last change as HyperShift reports it, and the marks of
 * what was notified, read beside the gate's inputs. */
static void outcome_of(const char *text, bool nodepool, decide_health_t *h)
{
    json_t *obj = tu_doc(text);
    decide_health_extract(obj, nodepool, h);
    json_decref(obj);
}

/* DESIGN.md 3.15: a cluster Degraded after its update completed gets the
 * UnhealthyAfterChange condition at the verdict's instant; a healthy one
 * none, and the decision wakes at the settle time's end. */
static void test_after_in_plan(void **state)
{
    (void)state;
    static const char *const fmt =
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\"}},"
        "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"}},"
        "\"status\":{\"conditions\":[{\"type\":\"Degraded\",\"status\":\"%s\","
        "\"reason\":\"UnavailableReplicas\",\"lastTransitionTime\":\"2026-03-07T01:05:00Z\"}],"
        "\"version\":{\"desired\":{\"image\":\"r:2\"},\"history\":[{\"state\":\"Completed\","
        "\"image\":\"r:2\",\"version\":\"4.17.2\","
        "\"completionTime\":\"2026-03-07T01:00:00Z\"}]}}}";
    char text[2048];
    const char *st[] = {"True", "False"};
    for (int i = 0; i < 2; i++) {
        fake_t f;
        decide_plan_t p;
        json_t *patch = NULL;
        fake_init(&f);
        snprintf(text, sizeof(text), fmt, st[i]);
        add(&f, DECIDE_HC, "a", text);
        add(&f, DECIDE_CLUSTER, "a-x1", "{}");
        plan(&f, DECIDE_HC, "a", tu_at("2026-03-07T01:20:00Z"), &p);
        assert_int_equal(decide_status_patch(p.managed, &p.d, "7", false,
                                             tu_at("2026-03-07T01:20:00Z"), &patch),
                         0);
        const json_t *conds = hcp_json_path(patch, "status.conditions"), *c, *found = NULL;
        size_t k;
        json_array_foreach(conds, k, c)
            if (strcmp(hcp_json_str(c, "type"), DECIDE_AFTER_CONDITION) == 0)
                found = c;
        if (i == 0) {
            assert_int_equal(p.d.after.state, DECIDE_AFTER_UNHEALTHY);
            assert_non_null(found);
            assert_string_equal(hcp_json_str(found, "status"), "True");
            assert_string_equal(hcp_json_str(found, "reason"), "Unhealthy");
            assert_string_equal(hcp_json_str(found, "lastTransitionTime"),
                                "2026-03-07T01:15:00Z");
            assert_non_null(strstr(hcp_json_str(found, "message"), "release 4.17.2"));
        } else {
            assert_int_equal(p.d.after.state, DECIDE_AFTER_SETTLING);
            assert_null(found); /* never unhealthy: never written */
            assert_true(p.d.wake <= tu_at("2026-03-07T01:30:00Z"));
        }
        json_decref(patch);
        decide_plan_free(&p);
        fake_free(&f);
    }
}

static void test_outcome_extract(void **state)
{
    (void)state;
    decide_health_t h;
    outcome_of("{\"metadata\":{\"annotations\":{\"" NOTIFY_MARKS_ANNOTATION "\":"
               "\"held=2026-03-07T00:00:00Z\"}},\"status\":{\"version\":{\"history\":["
               "{\"state\":\"Completed\",\"completionTime\":\"2026-03-07T00:20:00Z\"},"
               "{\"state\":\"Completed\",\"completionTime\":\"2026-02-07T00:20:00Z\"}]}}}",
               false, &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_COMPLETED);
    assert_true(h.outcome_at == tu_at("2026-03-07T00:20:00Z"));
    assert_true(h.notified.at[NOTIFY_HELD] == tu_at("2026-03-07T00:00:00Z"));
    /* Partial and failing: failed, since the condition's transition. */
    outcome_of("{\"status\":{\"conditions\":[{\"type\":\"ClusterVersionFailing\","
               "\"status\":\"True\",\"reason\":\"UpgradeFailed\","
               "\"lastTransitionTime\":\"2026-03-07T00:05:00Z\"}],\"version\":{\"history\":["
               "{\"state\":\"Partial\",\"completionTime\":null}]}}}",
               false, &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_FAILED);
    assert_true(h.outcome_at == tu_at("2026-03-07T00:05:00Z"));
    assert_string_equal(h.outcome_reason, "UpgradeFailed");
    assert_true(h.notified.at[NOTIFY_HELD] == SCHED_NEG_INF);
    /* Partial, not failing: under way, no outcome. */
    outcome_of("{\"status\":{\"version\":{\"history\":[{\"state\":\"Partial\"}]}}}", false,
               &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_NONE);
    /* NodePools: UpdatingVersion False, AsExpected (done) or not (failed);
     * True (under way) is no outcome. */
    outcome_of("{\"status\":{\"conditions\":[{\"type\":\"UpdatingVersion\",\"status\":"
               "\"False\",\"reason\":\"AsExpected\",\"lastTransitionTime\":"
               "\"2026-03-07T01:00:00Z\"}]}}",
               true, &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_COMPLETED);
    assert_true(h.outcome_at == tu_at("2026-03-07T01:00:00Z"));
    assert_string_equal(h.outcome_reason, "");
    outcome_of("{\"status\":{\"conditions\":[{\"type\":\"UpdatingVersion\",\"status\":"
               "\"False\",\"reason\":\"InplaceUpgradeFailed\",\"lastTransitionTime\":"
               "\"2026-03-07T01:00:00Z\"}]}}",
               true, &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_FAILED);
    assert_string_equal(h.outcome_reason, "InplaceUpgradeFailed"); /* told in the notification */
    outcome_of("{\"status\":{\"conditions\":[{\"type\":\"UpdatingVersion\",\"status\":"
               "\"True\",\"reason\":\"AsExpected\"}]}}",
               true, &h);
    assert_int_equal(h.outcome, NOTIFY_OUTCOME_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gate_hostedcluster_verdicts),
        cmocka_unit_test(test_gate_nodepool_verdicts),
        cmocka_unit_test(test_gate_override),
        cmocka_unit_test(test_gate_holds_release_of_unhealthy_cluster),
        cmocka_unit_test(test_gate_passes_healthy_cluster),
        cmocka_unit_test(test_gate_override_in_plan),
        cmocka_unit_test(test_gate_nodepool),
        cmocka_unit_test(test_checks_in_plan),
        cmocka_unit_test(test_outcome_extract),
        cmocka_unit_test(test_after_in_plan),
        cmocka_unit_test(test_rec_extract),
        cmocka_unit_test(test_rec_in_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
