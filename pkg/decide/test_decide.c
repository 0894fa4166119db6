/* test_controller.c: the controller's pure decisions (slim views + decide). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/companion.h"
#include "decide/decide.h"
#include "decide/slim.h"
#include "decide/testutil_decide.h"

static decide_capi_t *capi(bool paused, bool marker)
{
    decide_capi_t *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->paused = paused;
    c->marker = marker;
    c->updated = -1;
    c->existing = -1;
    return c;
}

/* A resolution around a borrowed schedule. */
static stanza_resolution_t resolution(sched_t *s, stanza_strategy_t strategy, const char *reason)
{
    stanza_resolution_t r;
    memset(&r, 0, sizeof(r));
    r.sched = s;
    r.strategy = strategy;
    r.reason = reason;
    snprintf(r.message, sizeof(r.message), "test timeline");
    return r;
}

/* Weekly Saturday windows 00:00-06:00 UTC. */
static sched_t *saturdays(sched_time_t now)
{
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * 3600, NULL, 0};
    sched_t *s;
    char err[128];
    assert_int_equal(sched_compile(&sp, now, &s, err, sizeof(err)), 0);
    return s;
}

static void test_pause_action_table(void **state)
{
    (void)state;
    struct {
        bool want, paused, marker;
        decide_pause_action_t expect;
    } rows[] = {
        {true, false, false, DECIDE_PAUSE_ADD},
        {true, false, true, DECIDE_PAUSE_REASSERT},
        {true, true, true, DECIDE_PAUSE_NONE},
        {true, true, false, DECIDE_PAUSE_NONE}, /* foreign pause: no marker added */
        {false, true, true, DECIDE_PAUSE_REMOVE},
        {false, false, true, DECIDE_PAUSE_REMOVE_MARKER},
        {false, true, false, DECIDE_PAUSE_NONE}, /* foreign pause never lifted */
        {false, false, false, DECIDE_PAUSE_NONE},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        decide_capi_t *c = capi(rows[i].paused, rows[i].marker);
        assert_int_equal(decide_pause_action(rows[i].want, c), rows[i].expect);
        decide_capi_free(c);
    }
    assert_int_equal(decide_pause_action(true, NULL), DECIDE_PAUSE_NONE);
}

static void test_pause_patch_documents(void **state)
{
    (void)state;
    json_t *p = decide_pause_patch(DECIDE_PAUSE_ADD, "42");
    char *s = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                           "openshift.io/paused-by\":\"hcp-controller\",\"cluster.x-k8s.io/"
                           "paused\":\"true\"},\"resourceVersion\":\"42\"}}");
    free(s);
    json_decref(p);
    p = decide_pause_patch(DECIDE_PAUSE_REMOVE, "7");
    s = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                           "openshift.io/paused-by\":null,\"cluster.x-k8s.io/paused\":null},"
                           "\"resourceVersion\":\"7\"}}");
    free(s);
    json_decref(p);
    p = decide_pause_patch(DECIDE_PAUSE_REMOVE_MARKER, "8");
    s = json_dumps(p, JSON_SORT_KEYS | JSON_COMPACT);
    assert_string_equal(s, "{\"metadata\":{\"annotations\":{\"changemanagement.hypershift."
                           "openshift.io/paused-by\":null},\"resourceVersion\":\"8\"}}");
    free(s);
    json_decref(p);
    assert_null(decide_pause_patch(DECIDE_PAUSE_NONE, "1"));
}

static void test_extract_hostedcluster(void **state)
{
    (void)state;
    json_t *obj = tu_doc("{\"metadata\":{\"name\":\"a\",\"namespace\":\"clusters\",\"generation\":3,"
                    "\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":\"w\"}},"
                    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"}},"
                    "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"},"
                    "\"history\":[{\"state\":\"Completed\"}]},"
                    "\"conditions\":[{\"type\":\"Available\",\"status\":\"True\"}]}}");
    decide_hc_t *hc = decide_hc_extract(obj);
    assert_non_null(hc);
    assert_string_equal(hc->infra_id, "a-x1");
    assert_string_equal(hc->release_image, "r:2");
    assert_string_equal(hc->desired_image, "r:1");
    assert_false(hc->history_partial);
    assert_int_equal(hc->m.generation, 3);
    assert_true(hc->m.stanza.present);
    assert_string_equal(hc->m.stanza.policy, "w");
    assert_true(decide_hc_pending(hc)); /* r:2 differs from desired r:1 */
    decide_hc_free(hc);
    json_decref(obj);

    /* controlPlaneRelease wins; equal images and Completed: nothing pending. */
    obj = tu_doc("{\"spec\":{\"release\":{\"image\":\"r:2\"},\"controlPlaneRelease\":{\"image\":\"c:1\"}},"
            "\"status\":{\"version\":{\"desired\":{\"image\":\"c:1\"}}}}");
    hc = decide_hc_extract(obj);
    assert_string_equal(hc->release_image, "c:1");
    assert_false(decide_hc_pending(hc));
    assert_false(hc->m.stanza.present);
    decide_hc_free(hc);
    json_decref(obj);

    /* Partial history: pending even when images agree. Wrong types read as absent. */
    obj = tu_doc("{\"spec\":{\"infraID\":5,\"release\":{\"image\":\"r\"}},\"status\":{\"version\":"
            "{\"desired\":{\"image\":\"r\"},\"history\":[{\"state\":\"Partial\"}]},"
            "\"conditions\":{\"not\":\"a list\"}}}");
    hc = decide_hc_extract(obj);
    assert_null(hc->infra_id);
    assert_true(hc->history_partial);
    assert_true(decide_hc_pending(hc));
    assert_null(hc->m.conditions);
    decide_hc_free(hc);
    json_decref(obj);
}

static void test_extract_nodepool_and_capi(void **state)
{
    (void)state;
    json_t *obj = tu_doc("{\"spec\":{\"clusterName\":\"a\",\"management\":{\"upgradeType\":\"InPlace\"}},"
                    "\"status\":{\"conditions\":[{\"type\":\"UpdatingConfig\",\"status\":\"True\"},"
                    "{\"type\":\"UpdatingVersion\",\"status\":\"False\"}]}}");
    decide_np_t *np = decide_np_extract(obj);
    assert_string_equal(np->cluster_name, "a");
    assert_true(np->in_place);
    assert_true(np->updating_config);
    assert_false(np->updating_version);
    assert_true(decide_np_pending(np, NULL));
    np->updating_config = false;
    assert_false(decide_np_pending(np, NULL));
    json_decref(obj);

    /* A release let through and not yet reported: spec.release names
     * 4.17.1, status.version still 4.17.0, no Updating condition yet. */
    obj = tu_doc("{\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":"
            "\"quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64\"}},"
            "\"status\":{\"version\":\"4.17.0\"}}");
    decide_np_t *np2 = decide_np_extract(obj);
    assert_string_equal(np2->release_version, "4.17.1");
    assert_string_equal(np2->status_version, "4.17.0");
    assert_true(decide_np_pending(np2, NULL));
    free(np2->status_version);
    np2->status_version = strdup("4.17.1+build.7"); /* same precedence */
    assert_false(decide_np_pending(np2, NULL));
    free(np2->status_version);
    np2->status_version = NULL; /* a new pool: nothing reported yet */
    assert_false(decide_np_pending(np2, NULL));
    np2->status_version = strdup("image-1234abcd"); /* no version: as text */
    assert_true(decide_np_pending(np2, NULL));
    free(np2->release_version);
    np2->release_version = NULL; /* pinned by digest: nothing to compare */
    assert_false(decide_np_pending(np2, NULL));
    decide_np_free(np2);
    json_decref(obj);

    /* v1beta2 MachineDeployment: upToDateReplicas. */
    obj = tu_doc("{\"metadata\":{\"annotations\":{\"cluster.x-k8s.io/paused\":\"\","
            "\"hypershift.openshift.io/nodePool\":\"clusters/np1\","
            "\"changemanagement.hypershift.openshift.io/paused-by\":\"hcp-controller\"}},"
            "\"spec\":{\"replicas\":3},\"status\":{\"upToDateReplicas\":1}}");
    decide_capi_t *md = decide_capi_extract(DECIDE_MD, obj);
    assert_true(md->paused);
    assert_true(md->marker);
    assert_string_equal(md->nodepool, "clusters/np1");
    assert_int_equal(md->updated, 1);
    /* No status.replicas: no count of the machines of every template, so
     * nothing says a rollout is pending (the first status Cluster API
     * v1.14 writes for a new MachineDeployment, below). */
    assert_int_equal(md->existing, -1);
    assert_false(decide_np_pending(np, md));
    md->existing = 3; /* one of three machines on the newest template */
    assert_true(decide_np_pending(np, md));
    decide_capi_free(md);
    json_decref(obj);
    obj = tu_doc("{\"spec\":{\"replicas\":2},\"status\":{\"deprecated\":{\"v1beta1\":"
                 "{\"availableReplicas\":0,\"readyReplicas\":0,\"unavailableReplicas\":2,"
                 "\"updatedReplicas\":0}}}}");
    md = decide_capi_extract(DECIDE_MD, obj);
    assert_int_equal(md->updated, 0);
    assert_false(decide_np_pending(np, md));
    decide_capi_free(md);
    json_decref(obj);

    /* Scaling up (3 -> 5) with every existing machine on the current
     * template is not a pending change; machines of an older template are. */
    obj = tu_doc("{\"spec\":{\"replicas\":5},\"status\":{\"replicas\":3,\"updatedReplicas\":3}}");
    md = decide_capi_extract(DECIDE_MD, obj);
    assert_int_equal(md->existing, 3);
    assert_false(decide_np_pending(np, md));
    md->existing = 4; /* a surge machine of the new template, three old ones */
    assert_true(decide_np_pending(np, md));
    md->existing = 2; /* scaling down */
    md->updated = 2;
    assert_false(decide_np_pending(np, md));
    decide_capi_free(md);
    json_decref(obj);

    /* An InPlace pool's MachineSet: its replica counts are no rollout
     * (upToDateReplicas stays 0 on a stand-alone MachineSet), so a pool
     * merely scaling or waiting has no pending change. */
    obj = tu_doc("{\"spec\":{\"replicas\":4},\"status\":{\"replicas\":3,\"upToDateReplicas\":0}}");
    md = decide_capi_extract(DECIDE_MS, obj);
    assert_int_equal(md->updated, -1);
    assert_int_equal(md->existing, 3);
    assert_false(md->rolling);
    assert_false(decide_np_pending(np, md));
    decide_capi_free(md);
    json_decref(obj);

    /* A marker with another value is not ours. */
    obj = tu_doc("{\"metadata\":{\"annotations\":{\"changemanagement.hypershift.openshift.io/"
            "paused-by\":\"someone-else\"}},\"status\":{\"updatedReplicas\":2},\"spec\":{}}");
    md = decide_capi_extract(DECIDE_MD, obj);
    assert_false(md->marker);
    assert_false(md->paused);
    assert_int_equal(md->updated, 2);
    assert_false(decide_np_pending(np, md));
    decide_capi_free(md);
    json_decref(obj);
    decide_np_free(np);
}

static decide_hc_t *hc_from(const char *text)
{
    json_t *obj = tu_doc(text);
    decide_hc_t *hc = decide_hc_extract(obj);
    json_decref(obj);
    assert_non_null(hc);
    return hc;
}

static void test_decide_hc_window(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-03T02:00:00Z"); /* Saturday, inside 00:00-06:00 */
    sched_t *sat = saturdays(now);
    stanza_resolution_t res = resolution(sat, STANZA_BY_POLICY, "ByPolicy");
    decide_hc_t *hc = hc_from("{\"spec\":{\"release\":{\"image\":\"r:2\"}},"
                           "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}");
    decide_capi_t *cl = capi(true, true);
    decide_decision_t d;

    /* Inside the window: our pause is lifted, changes are initiated. */
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_false(d.restricted);
    assert_int_equal(d.action, DECIDE_PAUSE_REMOVE);
    assert_int_equal(d.pending_metric, 1);
    assert_int_equal(d.wake, tu_at("2026-01-03T06:00:00Z"));
    assert_false(d.paused_status);
    assert_string_equal(d.paused_reason, "ChangesPermitted");
    assert_non_null(strstr(d.paused_message, "until 2026-01-03T06:00:00Z"));

    /* After it: paused again, pending blocked until next Saturday. */
    now = tu_at("2026-01-03T07:00:00Z");
    cl->paused = false;
    cl->marker = false;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_true(d.restricted);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    assert_int_equal(d.pending_metric, 2);
    assert_true(d.paused_status);
    assert_string_equal(d.paused_reason, "OutsideMaintenanceWindow");
    assert_int_equal(d.wake, tu_at("2026-01-10T00:00:00Z"));
    assert_string_equal(d.pending_reason, "ChangesBlocked");
    assert_non_null(strstr(d.pending_message, "2026-01-10T00:00:00Z"));

    /* Somebody stripped our pause but left the marker: re-assert. */
    cl->marker = true;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_int_equal(d.action, DECIDE_PAUSE_REASSERT);

    decide_capi_free(cl);
    decide_hc_free(hc);
    sched_unref(sat);
}

/* With the admission webhooks served (DESIGN.md 3.6) the Cluster carries
 * our pause only while a release change is held; merely restricted, it is
 * not paused, and a pause of ours is lifted. Conditions are unchanged:
 * changes are paused whatever the Cluster carries. */
static void test_decide_hc_paused_only_while_held(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-03T07:00:00Z"); /* after Saturday's window */
    sched_t *sat = saturdays(now);
    stanza_resolution_t res = resolution(sat, STANZA_BY_POLICY, "ByPolicy");
    decide_hc_t *idle = hc_from("{\"spec\":{\"release\":{\"image\":\"r:1\"}},"
                                "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}");
    decide_hc_t *held = hc_from(
        "{\"metadata\":{\"annotations\":{\"" DECIDE_REQUESTED_RELEASE_ANNOTATION "\":\"r:2\"}},"
        "\"spec\":{\"release\":{\"image\":\"r:1\"}},"
        "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}");
    decide_capi_t *cl = capi(false, false);
    decide_decision_t d;

    assert_int_equal(decide_hc(idle, &res, cl, true, now, &d), 0);
    assert_true(d.restricted);
    assert_false(d.pause_wanted);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    assert_true(d.paused_status);
    assert_int_equal(decide_hc(held, &res, cl, true, now, &d), 0);
    assert_true(d.pause_wanted);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    assert_int_equal(d.pending_metric, 2);
    /* Our pause from a held change that has since gone is lifted. */
    cl->paused = cl->marker = true;
    assert_int_equal(decide_hc(idle, &res, cl, true, now, &d), 0);
    assert_int_equal(d.action, DECIDE_PAUSE_REMOVE);
    /* Without the webhooks the pause is the brake: restricted is enough. */
    cl->paused = cl->marker = false;
    assert_int_equal(decide_hc(idle, &res, cl, false, now, &d), 0);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);

    decide_capi_free(cl);
    decide_hc_free(idle);
    decide_hc_free(held);
    sched_unref(sat);
}

static void test_decide_hc_update_in_progress_not_paused(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-05T12:00:00Z");
    stanza_resolution_t res = resolution(sched_never(), STANZA_RESTRICTIVE, "Restrictive");
    decide_hc_t *hc = hc_from("{\"spec\":{\"release\":{\"image\":\"r:2\"}},\"status\":{\"version\":"
                           "{\"desired\":{\"image\":\"r:2\"},\"history\":[{\"state\":\"Partial\"}]}}}");
    decide_capi_t *cl = capi(false, false);
    decide_decision_t d;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_true(d.restricted);
    assert_true(d.hold_open);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    assert_string_equal(d.paused_reason, "UpdateInProgress");
    assert_false(d.paused_status);
    assert_int_equal(d.pending_metric, 1);

    /* Once the update completes the pause follows. */
    hc->history_partial = false;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_false(d.hold_open);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    assert_string_equal(d.paused_reason, "Restrictive");
    assert_int_equal(d.wake, SCHED_POS_INF);
    assert_non_null(strstr(d.paused_message, "indefinitely"));
    decide_capi_free(cl);
    decide_hc_free(hc);
}

static void test_decide_foreign_pause_left_alone(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-05T12:00:00Z");
    stanza_resolution_t res = resolution(sched_always(), STANZA_PERMISSIVE, "Permissive");
    decide_hc_t *hc = hc_from("{\"spec\":{\"release\":{\"image\":\"r:2\"}}}");
    decide_capi_t *cl = capi(true, false);
    decide_decision_t d;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_false(d.restricted);
    assert_true(d.paused_by_other);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    assert_true(d.paused_status);
    assert_string_equal(d.paused_reason, "PausedExternally");
    assert_int_equal(d.pending_metric, 2);
    decide_capi_free(cl);
    decide_hc_free(hc);
}

static void test_decide_degraded_reason(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-05T12:00:00Z");
    stanza_resolution_t res = resolution(sched_never(), STANZA_BY_POLICY, "PolicyNotFound");
    res.degraded = 1;
    snprintf(res.message, sizeof(res.message), "Policy \"w\" was not found in namespace \"c\".");
    decide_hc_t *hc = hc_from("{}");
    decide_decision_t d;
    assert_int_equal(decide_hc(hc, &res, NULL, false, now, &d), 0);
    assert_true(d.restricted);
    assert_string_equal(d.paused_reason, "PolicyNotFound");
    assert_non_null(strstr(d.paused_message, "was not found"));
    assert_int_equal(d.action, DECIDE_PAUSE_NONE); /* no Cluster known: nothing to patch */
    assert_int_equal(d.pending_metric, 0);
    decide_hc_free(hc);
}

/* A restricted NodePool on a Monday (Restrictive), its MachineDeployment
 * md, decided into d; held: the webhooks hold changes at admission. */
static void np_held_case(decide_capi_t *md, bool held, decide_decision_t *d)
{
    sched_time_t now = tu_at("2026-01-05T12:00:00Z");
    stanza_resolution_t res = resolution(sched_never(), STANZA_RESTRICTIVE, "Restrictive");
    stanza_nodepool_t inter;
    memset(&inter, 0, sizeof(inter));
    inter.sched = sched_never();
    json_t *obj = tu_doc("{\"spec\":{\"clusterName\":\"a\"}}");
    decide_np_t *np = decide_np_extract(obj);
    json_decref(obj);
    assert_int_equal(decide_np(np, &res, &inter, md, held, now, d), 0);
    decide_np_free(np);
}

static void decide_restricted_np(decide_capi_t *md, decide_decision_t *d)
{
    np_held_case(md, true, d);
}

/* A window closing on a node rollout pauses it (nothing new starts; the
 * rollout resumes in the next window), unlike a control-plane update. */
static void test_decide_np_rollout_paused_at_close(void **state)
{
    (void)state;
    decide_capi_t *md = capi(false, false);
    md->existing = 3;
    md->updated = 1;
    md->rolling = true;
    decide_decision_t d;
    decide_restricted_np(md, &d);
    assert_false(d.hold_open);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    assert_true(d.paused_status);
    assert_int_equal(d.pending_metric, 2);
    md->paused = md->marker = true; /* paused: stays so */
    decide_restricted_np(md, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    md->paused = false; /* HyperShift deleted it: re-asserted */
    decide_restricted_np(md, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_REASSERT);
    decide_capi_free(md);
}

/* A Replace rollout paused in mid-rollout also gets spec.paused (with our
 * marker), which HyperShift never deletes; it is cleared, ours only, when
 * the pause is no longer wanted. */
static void test_decide_np_spec_paused_mid_rollout(void **state)
{
    (void)state;
    decide_capi_t *md = capi(false, false);
    md->existing = 3;
    md->updated = 1;
    md->rolling = true;
    decide_decision_t d;
    decide_restricted_np(md, &d);
    assert_int_equal(d.spec_pause, 1);
    md->spec_paused = md->spec_marker = true;
    decide_restricted_np(md, &d);
    assert_int_equal(d.spec_pause, 0); /* already right */
    md->marker = true; /* HyperShift deleted the annotation: not put back, no loop */
    decide_restricted_np(md, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    assert_true(d.paused_status);
    md->marker = false;
    md->rolling = false;                /* the rollout is over */
    md->updated = 3;
    decide_restricted_np(md, &d);
    assert_int_equal(d.spec_pause, -1);
    md->spec_marker = false; /* somebody else's spec.paused: left alone */
    decide_restricted_np(md, &d);
    assert_int_equal(d.spec_pause, 0);
    md->spec_paused = false; /* merely waiting: none */
    decide_restricted_np(md, &d);
    assert_int_equal(d.spec_pause, 0);
    decide_capi_free(md);

    json_t *p = decide_spec_pause_patch(decide_pause_patch(DECIDE_PAUSE_ADD, "4"), true, "4");
    assert_true(json_is_true(hcp_json_path(p, "spec.paused")));
    assert_string_equal(json_string_value(json_object_get(
                            hcp_json_path(p, "metadata.annotations"),
                            DECIDE_SPEC_MARKER_ANNOTATION)),
                        DECIDE_MARKER_VALUE);
    assert_non_null(json_object_get(hcp_json_path(p, "metadata.annotations"),
                                    DECIDE_PAUSED_ANNOTATION));
    json_decref(p);
    p = decide_spec_pause_patch(NULL, false, "5");
    assert_true(json_is_false(hcp_json_path(p, "spec.paused")));
    assert_true(json_is_null(json_object_get(hcp_json_path(p, "metadata.annotations"),
                                             DECIDE_SPEC_MARKER_ANNOTATION)));
    assert_string_equal(hcp_json_str(p, "metadata.resourceVersion"), "5");
    json_decref(p);
}

/* Restricted and merely waiting (the change is held at admission): the
 * MachineDeployment is not paused, so Cluster API keeps scaling and
 * remediating; a pause of ours from a rollout that has ended is lifted; the
 * conditions still say changes are paused. */
static void test_decide_np_waiting_not_paused(void **state)
{
    (void)state;
    decide_capi_t *md = capi(false, false);
    md->existing = 3; /* scaling up from 3 to 5: not a rollout */
    md->updated = 3;
    decide_decision_t d;
    decide_restricted_np(md, &d);
    assert_true(d.restricted);
    assert_int_equal(d.action, DECIDE_PAUSE_NONE);
    assert_true(d.paused_status);
    assert_string_equal(d.paused_reason, "Restrictive");
    md->paused = md->marker = true; /* our pause, the rollout since done */
    decide_restricted_np(md, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_REMOVE);
    md->paused = false; /* only our marker left */
    decide_restricted_np(md, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_REMOVE_MARKER);
    /* Without the webhooks nothing holds the change: paused while waiting. */
    np_held_case(md, false, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_REASSERT);
    md->paused = md->marker = false;
    np_held_case(md, false, &d);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    decide_capi_free(md);
}

/* A pause we did not set is never lifted, rolling or not, and never gets
 * our marker. */
static void test_decide_np_foreign_pause_kept(void **state)
{
    (void)state;
    for (int rolling = 0; rolling <= 1; rolling++) {
        decide_capi_t *md = capi(true, false);
        md->rolling = rolling;
        decide_decision_t d;
        decide_restricted_np(md, &d);
        assert_int_equal(d.action, DECIDE_PAUSE_NONE);
        assert_true(d.paused_by_other);
        decide_capi_free(md);
    }
}

/* What counts as mid-rollout in a MachineDeployment or MachineSet as
 * served: machines on an older template, or an InPlace target config
 * version not yet reached; a scale-up is not. */
static void test_extract_rolling(void **state)
{
    (void)state;
    static const struct {
        decide_kind_t kind;
        const char *json;
        bool rolling;
    } cases[] = {
        {DECIDE_MD, "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":4,\"updatedReplicas\":1}}", true},
        {DECIDE_MD, "{\"status\":{\"replicas\":3,\"upToDateReplicas\":0}}", true},
        {DECIDE_MD, "{\"spec\":{\"replicas\":5},\"status\":{\"replicas\":3,\"updatedReplicas\":3}}", false},
        {DECIDE_MD, "{\"spec\":{\"replicas\":5},\"status\":{\"replicas\":5,\"upToDateReplicas\":3}}", true},
        /* v1beta2 as Cluster API v1.14 serves it: the newest MachineSet's
         * machines under status.deprecated.v1beta1.updatedReplicas, which
         * upToDateReplicas lags while new machines come up. */
        {DECIDE_MD, "{\"spec\":{\"replicas\":5},\"status\":{\"replicas\":5,\"upToDateReplicas\":3,"
         "\"deprecated\":{\"v1beta1\":{\"updatedReplicas\":5}}}}", false},
        {DECIDE_MD, "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":3,\"upToDateReplicas\":0,"
         "\"deprecated\":{\"v1beta1\":{\"updatedReplicas\":3}}}}", false},
        {DECIDE_MD, "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":4,\"upToDateReplicas\":4,"
         "\"deprecated\":{\"v1beta1\":{\"updatedReplicas\":1}}}}", true},
        {DECIDE_MD, "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":3,\"upToDateReplicas\":3,"
         "\"deprecated\":{\"v1beta1\":{\"updatedReplicas\":0}}}}", true},
        {DECIDE_MD, "{\"spec\":{\"replicas\":3}}", false},
        {DECIDE_MD, "{\"status\":{\"replicas\":\"3\",\"updatedReplicas\":1}}", false},
        {DECIDE_MS, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePoolTargetConfigVersion\":"
         "\"b\",\"hypershift.openshift.io/nodePoolCurrentConfigVersion\":\"a\"}}}", true},
        {DECIDE_MS, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePoolTargetConfigVersion\":"
         "\"a\",\"hypershift.openshift.io/nodePoolCurrentConfigVersion\":\"a\"}}}", false},
        {DECIDE_MS, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePoolTargetConfigVersion\":"
         "\"a\"}}}", false},
        /* HyperShift's InPlace MachineSet as Cluster API v1.14 serves it:
         * a stand-alone MachineSet's machines get no UpToDate condition,
         * so upToDateReplicas stays 0; scaling is no rollout either. */
        {DECIDE_MS, "{\"spec\":{\"replicas\":3},\"status\":{\"replicas\":3,\"upToDateReplicas\":0}}",
         false},
        {DECIDE_MS, "{\"spec\":{\"replicas\":4},\"status\":{\"replicas\":4,\"upToDateReplicas\":0,"
         "\"readyReplicas\":3}}", false},
        {DECIDE_MS, "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePoolTargetConfigVersion\":"
         "\"b\",\"hypershift.openshift.io/nodePoolCurrentConfigVersion\":\"a\"}},"
         "\"status\":{\"replicas\":3,\"upToDateReplicas\":0}}", true},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *obj = tu_doc(cases[i].json);
        decide_capi_t *c = decide_capi_extract(cases[i].kind, obj);
        assert_non_null(c);
        if (c->rolling != cases[i].rolling)
            fail_msg("case %zu (%s): rolling %d, want %d", i, cases[i].json, c->rolling,
                     cases[i].rolling);
        decide_capi_free(c);
        json_decref(obj);
    }
}

/* Applies a status merge patch's status to a served object, as the API
 * server would, and re-extracts the view. */
static decide_hc_t *apply_status(json_t *obj, const json_t *patch)
{
    json_t *status = json_object_get(obj, "status");
    if (!status) {
        status = json_object();
        json_object_set_new(obj, "status", status);
    }
    json_t *ps = json_object_get(patch, "status");
    json_object_set(status, "conditions", json_object_get(ps, "conditions"));
    assert_null(json_object_get(ps, "changeManagement")); /* pruned by HyperShift's CRDs */
    return decide_hc_extract(obj);
}

/* A ByPolicy HostedCluster on Saturday windows, decided one hour after a
 * window closed (paused until the next), with an Available condition that a
 * status patch must carry over, and its status document. */
typedef struct {
    sched_time_t now;
    sched_t *sat;
    stanza_resolution_t res;
    json_t *obj;
    decide_hc_t *hc;
    decide_decision_t d;
    json_t *doc;
} paused_hc_t;

static void paused_hc_setup(paused_hc_t *f)
{
    f->now = tu_at("2026-01-03T07:00:00Z");
    f->sat = saturdays(f->now);
    f->res = resolution(f->sat, STANZA_BY_POLICY, "ByPolicy");
    f->obj = tu_doc("{\"metadata\":{\"generation\":2},\"status\":{\"conditions\":["
               "{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"AsExpected\"}]}}");
    f->hc = decide_hc_extract(f->obj);
    assert_non_null(f->hc);
    assert_int_equal(decide_hc(f->hc, &f->res, NULL, false, f->now, &f->d), 0);
    f->doc = decide_status_doc(DECIDE_HC, f->hc, &f->d, &f->res, NULL, f->now);
    assert_non_null(f->doc);
}

static void paused_hc_teardown(paused_hc_t *f)
{
    json_decref(f->doc);
    decide_hc_free(f->hc);
    json_decref(f->obj);
    sched_unref(f->sat);
}

static void test_status_patch_zero_writes_when_right(void **state)
{
    (void)state;
    paused_hc_t f;
    paused_hc_setup(&f);
    assert_string_equal(json_string_value(hcp_json_path(f.doc, "behavior.current.state")), "ChangesPaused");
    assert_string_equal(json_string_value(hcp_json_path(f.doc, "behavior.current.startTime")),
                        "2026-01-03T06:00:00Z");
    assert_string_equal(json_string_value(hcp_json_path(f.doc, "behavior.current.endTime")),
                        "2026-01-10T00:00:00Z");
    assert_string_equal(json_string_value(hcp_json_path(f.doc, "behavior.next.state")), "ChangesUnpaused");
    assert_string_equal(json_string_value(hcp_json_path(f.doc, "behavior.next.endTime")),
                        "2026-01-10T06:00:00Z");

    json_t *patch;

    assert_int_equal(decide_status_patch(&f.hc->m, &f.d, "5", false, f.now, &patch), 0);
    assert_non_null(patch);
    json_t *conds = hcp_json_path(patch, "status.conditions");
    assert_int_equal(json_array_size(conds), 3); /* Available is carried over */
    assert_string_equal(json_string_value(json_object_get(json_array_get(conds, 0), "type")),
                        "Available");
    assert_string_equal(json_string_value(hcp_json_path(patch, "metadata.resourceVersion")), "5");

    /* Once applied, the same decision writes nothing. */
    decide_hc_t *hc2 = apply_status(f.obj, patch);
    json_t *again;
    assert_int_equal(decide_status_patch(&hc2->m, &f.d, "6", false, f.now + 60, &again), 0);
    assert_null(again);

    /* A changed message rewrites, keeping lastTransitionTime when the status holds. */
    snprintf(f.d.pending_message, sizeof(f.d.pending_message), "changed");
    json_t *p3;
    assert_int_equal(decide_status_patch(&hc2->m, &f.d, "6", false, f.now + 60, &p3), 0);
    assert_non_null(p3);
    json_t *c = json_array_get(hcp_json_path(p3, "status.conditions"), 2);
    assert_string_equal(json_string_value(json_object_get(c, "type")), "ChangesPending");
    assert_string_equal(json_string_value(json_object_get(c, "lastTransitionTime")),
                        "2026-01-03T07:00:00Z");

    json_decref(p3);
    decide_hc_free(hc2);
    json_decref(patch);
    paused_hc_teardown(&f);
}

/* The compact form the controller's caches keep decides exactly like the
 * trees: the same patch while something differs, none once it is right. */
static void test_compact_view_same_patches(void **state)
{
    (void)state;
    paused_hc_t f;
    paused_hc_setup(&f);
    json_t *want;
    assert_int_equal(decide_status_patch(&f.hc->m, &f.d, "5", false, f.now, &want), 0);
    assert_non_null(want);

    assert_int_equal(decide_managed_compact(&f.hc->m), 0);
    assert_null(f.hc->m.conditions);
    assert_non_null(f.hc->m.conditions_z.z);
    decide_managed_t view;
    assert_int_equal(decide_managed_expand(&f.hc->m, &view), 0);
    json_t *got;
    assert_int_equal(decide_status_patch(&view, &f.d, "5", false, f.now, &got), 0);
    assert_true(json_equal(want, got));
    decide_managed_view_free(&view);

    /* Applied and compacted again: nothing to write. */
    decide_hc_t *hc2 = apply_status(f.obj, want);
    assert_int_equal(decide_managed_compact(&hc2->m), 0);
    assert_int_equal(decide_managed_expand(&hc2->m, &view), 0);
    {
        json_t *none;
        assert_int_equal(decide_status_patch(&view, &f.d, "6", false, f.now + 60, &none), 0);
        assert_null(none);
    }
    decide_managed_view_free(&view);

    /* Damaged data is refused rather than read as "no conditions": a length
     * that does not match, then a stream that does not inflate. */
    hc2->m.conditions_z.len++;
    assert_int_equal(decide_managed_expand(&hc2->m, &view), HCP_EPARSE);
    hc2->m.conditions_z.len--;
    assert_int_equal(decide_managed_expand(&hc2->m, &view), 0);
    decide_managed_view_free(&view);
    memset(hc2->m.conditions_z.z, 0xff, hc2->m.conditions_z.zlen);
    assert_int_equal(decide_managed_expand(&hc2->m, &view), HCP_EPARSE);

    json_decref(got);
    json_decref(want);
    decide_hc_free(hc2);
    paused_hc_teardown(&f);
}

/* NodePool conditions: severity Info when True, left out when False (the
 * API rejects an empty severity). */
static void test_nodepool_condition_severity(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-05T12:00:00Z");
    stanza_resolution_t res = resolution(sched_never(), STANZA_RESTRICTIVE, "Restrictive");
    stanza_nodepool_t inter;
    memset(&inter, 0, sizeof(inter));
    inter.sched = sched_never();
    json_t *obj = tu_doc("{\"spec\":{\"clusterName\":\"a\"}}");
    decide_np_t *np = decide_np_extract(obj);
    decide_decision_t d;
    assert_int_equal(decide_np(np, &res, &inter, NULL, true, now, &d), 0);
    json_t *doc = decide_status_doc(DECIDE_NP, np, &d, &res, &inter, now);
    json_t *p;
    assert_int_equal(decide_status_patch(&np->m, &d, "1", true, now, &p), 0);
    json_t *conds = hcp_json_path(p, "status.conditions");
    json_t *paused = json_array_get(conds, 0), *pending = json_array_get(conds, 1);
    assert_string_equal(json_string_value(json_object_get(paused, "status")), "True");
    assert_string_equal(json_string_value(json_object_get(paused, "severity")), "Info");
    assert_string_equal(json_string_value(json_object_get(pending, "status")), "False");
    assert_null(json_object_get(pending, "severity"));
    assert_string_equal(json_string_value(json_object_get(paused, "message")),
                        "Changes are paused indefinitely (test timeline).");
    json_decref(p);
    json_decref(doc);
    json_decref(obj);
    decide_np_free(np);
}

/* RestrictiveUntil T then the policy: before T the reason is the override,
 * after T (outside a window) the policy's. */
static void test_restrictive_until_reason(void **state)
{
    (void)state;
    sched_time_t until = tu_at("2026-01-06T00:00:00Z");
    sched_t *sat = saturdays(until);
    sched_t *after = sched_after(until);
    sched_t *tl = sched_and(after, sat);
    stanza_resolution_t res = resolution(tl, STANZA_RESTRICTIVE_UNTIL, "RestrictiveUntil");
    decide_hc_t *hc = hc_from("{}");
    hc->m.stanza.present = 1;
    hc->m.stanza.valid = 1;
    hc->m.stanza.strategy = STANZA_RESTRICTIVE_UNTIL;
    hc->m.stanza.has_restrictive_until = 1;
    hc->m.stanza.restrictive_until = until;
    decide_decision_t d;
    assert_int_equal(decide_hc(hc, &res, NULL, false, tu_at("2026-01-05T00:00:00Z"), &d), 0);
    assert_string_equal(d.paused_reason, "RestrictiveUntil");
    assert_int_equal(decide_hc(hc, &res, NULL, false, tu_at("2026-01-07T00:00:00Z"), &d), 0);
    assert_string_equal(d.paused_reason, "OutsideMaintenanceWindow");
    assert_int_equal(d.wake, tu_at("2026-01-10T00:00:00Z"));
    decide_hc_free(hc);
    sched_unref(tl);
    sched_unref(after);
    sched_unref(sat);
}

/* A NodePool whose own timeline permits changes but whose HostedCluster's
 * does not says so, instead of blaming a window of its own. */
static void test_nodepool_restricted_by_cluster(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-01-05T12:00:00Z"); /* a Monday */
    sched_t *sat = saturdays(now);
    stanza_resolution_t own = resolution(sched_always(), STANZA_PERMISSIVE, "Permissive");
    stanza_nodepool_t inter;
    assert_int_equal(stanza_resolve_nodepool(own.sched, sat, now, &inter), 0);
    json_t *obj = tu_doc("{\"spec\":{\"clusterName\":\"a\"}}");
    decide_np_t *np = decide_np_extract(obj);
    json_decref(obj);
    decide_capi_t *md = capi(false, false);
    md->rolling = true;
    decide_decision_t d;
    assert_int_equal(decide_np(np, &own, &inter, md, true, now, &d), 0);
    assert_true(d.restricted);
    assert_int_equal(d.action, DECIDE_PAUSE_ADD);
    assert_string_equal(d.paused_reason, "HostedClusterRestricted");
    assert_non_null(strstr(d.paused_message, "Changes are paused until 2026-01-10T00:00:00Z (the"));
    assert_non_null(strstr(d.paused_message, "its HostedCluster's does not"));
    stanza_nodepool_free(&inter);

    /* Restricted by its own timeline: the usual reason. */
    stanza_resolution_t narrow = resolution(sat, STANZA_BY_POLICY, "PolicyResolved");
    assert_int_equal(stanza_resolve_nodepool(narrow.sched, sched_always(), now, &inter), 0);
    assert_int_equal(decide_np(np, &narrow, &inter, md, true, now, &d), 0);
    assert_string_equal(d.paused_reason, "OutsideMaintenanceWindow");
    assert_null(strstr(d.paused_message, "HostedCluster"));
    stanza_nodepool_free(&inter);

    /* Its cluster never permits: the pool still wakes when its own window
     * opens and closes (NoPermittedWindow says more than the cluster). */
    assert_int_equal(stanza_resolve_nodepool(narrow.sched, sched_never(), now, &inter), 0);
    assert_int_equal(decide_np(np, &narrow, &inter, md, true, now, &d), 0);
    assert_int_equal(d.wake, tu_at("2026-01-10T00:00:00Z"));
    assert_int_equal(decide_np(np, &narrow, &inter, md, true, tu_at("2026-01-10T01:00:00Z"), &d), 0);
    assert_string_equal(d.paused_reason, "NoPermittedWindow");
    assert_int_equal(d.wake, tu_at("2026-01-10T06:00:00Z"));
    stanza_nodepool_free(&inter);
    decide_capi_free(md);
    decide_np_free(np);
    sched_unref(sat);
}

/* Inside a policy's exclusion the HostedCluster says so with the reason and
 * the exclusion's end, and so does a NodePool restricted by it through its
 * HostedCluster; the status document carries both. */
static void test_exclusion_in_conditions(void **state)
{
    (void)state;
    sched_time_t now = tu_at("2026-12-26T12:00:00Z"); /* a Saturday, inside the freeze */
    sched_exclusion_t ex = {sched_days_from_civil(2026, 12, 24),
                            sched_days_from_civil(2027, 1, 2), "year-end freeze"};
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * 3600, &ex, 1};
    sched_t *s;
    char err[128];
    assert_int_equal(sched_compile(&sp, now, &s, err, sizeof(err)), 0);
    stanza_resolution_t res = resolution(s, STANZA_BY_POLICY, "ByPolicy");
    json_t *obj = tu_doc("{\"spec\":{\"release\":{\"image\":\"b\"}},"
                    "\"status\":{\"version\":{\"desired\":{\"image\":\"a\"}}}}");
    decide_hc_t *hc = decide_hc_extract(obj);
    json_decref(obj);
    decide_capi_t *cl = capi(false, false);
    decide_decision_t d;
    assert_int_equal(decide_hc(hc, &res, cl, false, now, &d), 0);
    assert_true(d.excluded);
    assert_string_equal(d.excluded_reason, "year-end freeze");
    assert_int_equal(d.excluded_until, tu_at("2027-01-02T00:00:00Z"));
    assert_string_equal(d.paused_reason, "Excluded");
    assert_string_equal(d.paused_message,
                        "Changes are paused until 2027-01-02T00:00:00Z (inside the exclusion "
                        "\"year-end freeze\", which ends at 2027-01-02T00:00:00Z; test "
                        "timeline).");
    json_t *doc = decide_status_doc(DECIDE_HC, hc, &d, &res, NULL, now);
    assert_string_equal(json_string_value(json_object_get(
                            hcp_json_path(doc, "behavior.current.exclusion"),
                            "reason")),
                        "year-end freeze");
    json_decref(doc);

    /* A NodePool free on its own, restricted by its HostedCluster's freeze. */
    stanza_resolution_t own = resolution(sched_always(), STANZA_PERMISSIVE, "Permissive");
    stanza_nodepool_t inter;
    assert_int_equal(stanza_resolve_nodepool(own.sched, s, now, &inter), 0);
    obj = tu_doc("{\"spec\":{\"clusterName\":\"a\"}}");
    decide_np_t *np = decide_np_extract(obj);
    json_decref(obj);
    assert_int_equal(decide_np(np, &own, &inter, cl, true, now, &d), 0);
    assert_string_equal(d.paused_reason, "HostedClusterRestricted");
    assert_non_null(strstr(d.paused_message, "its HostedCluster's is inside the exclusion "
                                             "\"year-end freeze\", which ends at "
                                             "2027-01-02T00:00:00Z"));

    /* After the freeze, in the Saturday window: nothing excluded. */
    assert_int_equal(decide_hc(hc, &res, cl, false, tu_at("2027-01-02T01:00:00Z"), &d), 0);
    assert_false(d.excluded);
    assert_null(strstr(d.paused_message, "exclusion"));
    /* The exclusion is gone from the companion's status once it is over. */
    doc = decide_status_doc(DECIDE_HC, hc, &d, &res, NULL, tu_at("2027-01-02T01:00:00Z"));
    assert_non_null(hcp_json_path(doc, "behavior.current"));
    assert_null(hcp_json_path(doc, "behavior.current.exclusion"));
    json_decref(doc);
    stanza_nodepool_free(&inter);
    decide_np_free(np);
    decide_capi_free(cl);
    decide_hc_free(hc);
    sched_unref(s);
}

/* A HostedCluster's conditions as HyperShift writes them, each with its own
 * reason, message and time: the cache keeps them deflated, exactly, in a
 * fraction of their text. */
static void test_compact_conditions_shrink(void **state)
{
    (void)state;
    static const char *const c[][4] = {
        {"ValidConfiguration", "True", "AsExpected", "Configuration passes validation"},
        {"SupportedHostedCluster", "True", "AsExpected", "HostedCluster is supported by operator configuration"},
        {"ValidHostedControlPlaneConfiguration", "True", "AsExpected", "Configuration passes validation"},
        {"ValidReleaseImage", "True", "AsExpected", "Release image is valid"},
        {"ValidReleaseInfo", "True", "AsExpected", "All is well"},
        {"ValidOIDCConfiguration", "True", "StatusUnknown", "OIDC configuration is valid"},
        {"ReconciliationActive", "True", "AsExpected", "Reconciliation active on resource"},
        {"ReconciliationSucceeded", "True", "ReconciliatonSucceeded", "Reconciliation completed successfully"},
        {"PlatformCredentialsFound", "True", "AsExpected", "Required platform credentials are found"},
        {"InfrastructureReady", "True", "AsExpected", "All is well"},
        {"ExternalDNSReachable", "Unknown", "StatusUnknown", "Condition not found in the HCP"},
        {"EtcdAvailable", "True", "QuorumAvailable", "All is well"},
        {"KubeAPIServerAvailable", "True", "AsExpected", "Kube APIServer deployment is available"},
        {"IgnitionEndpointAvailable", "True", "AsExpected", "Ignition server deployment is available"},
        {"ClusterVersionSucceeding", "True", "FromClusterVersion", "Cluster version is 4.17.3"},
        {"ClusterVersionUpgradeable", "False", "NotUpgradeable", "Cluster operator machine-config should not be upgraded between minor versions: One or more machine config pools are updating, please see `oc get mcp` for further details"},
        {"ClusterVersionAvailable", "True", "FromClusterVersion", "Done applying 4.17.3"},
        {"ClusterVersionReleaseAccepted", "True", "PayloadLoaded", "Payload loaded version=\"4.17.3\" image=\"quay.io/openshift-release-dev/ocp-release@sha256:01cb6a3e6b2d5a5e1b2f0c4d\" architecture=\"amd64\""},
        {"Available", "True", "AsExpected", "The hosted control plane is available"},
        {"Degraded", "False", "AsExpected", "The hosted cluster is not degraded"},
    };
    json_t *conds = json_array();
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        char when[32];
        snprintf(when, sizeof(when), "2026-0%zu-%02zuT%02zu:%02zu:%02zuZ", 1 + i % 9, 1 + i,
                 (i * 7) % 24, (i * 13) % 60, (i * 29) % 60);
        json_array_append_new(conds, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I}", "type", c[i][0],
                                               "status", c[i][1], "reason", c[i][2], "message",
                                               c[i][3], "lastTransitionTime", when,
                                               "observedGeneration", (json_int_t)(3 + i % 2)));
    }
    json_t *obj = json_pack("{s:{s:i}, s:{s:o}}", "metadata", "generation", 4, "status",
                            "conditions", conds);
    decide_hc_t *hc = decide_hc_extract(obj);
    assert_non_null(hc);
    char *text = json_dumps(json_object_get(json_object_get(obj, "status"), "conditions"),
                            JSON_COMPACT);
    assert_int_equal(decide_managed_compact(&hc->m), 0);
    assert_int_equal(hc->m.conditions_z.len, strlen(text));
    print_message("# %u bytes of conditions kept in %u\n", hc->m.conditions_z.len,
                  hc->m.conditions_z.zlen);
    assert_true(hc->m.conditions_z.zlen * 3 < hc->m.conditions_z.len);

    decide_managed_t view;
    assert_int_equal(decide_managed_expand(&hc->m, &view), 0);
    char *again = json_dumps(view.conditions, JSON_COMPACT);
    assert_string_equal(again, text);
    decide_managed_view_free(&view);
    free(again);
    free(text);
    decide_hc_free(hc);
    json_decref(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pause_action_table),
        cmocka_unit_test(test_pause_patch_documents),
        cmocka_unit_test(test_extract_hostedcluster),
        cmocka_unit_test(test_extract_nodepool_and_capi),
        cmocka_unit_test(test_decide_hc_window),
        cmocka_unit_test(test_decide_hc_paused_only_while_held),
        cmocka_unit_test(test_decide_hc_update_in_progress_not_paused),
        cmocka_unit_test(test_decide_foreign_pause_left_alone),
        cmocka_unit_test(test_decide_degraded_reason),
        cmocka_unit_test(test_decide_np_rollout_paused_at_close),
        cmocka_unit_test(test_decide_np_spec_paused_mid_rollout),
        cmocka_unit_test(test_decide_np_waiting_not_paused),
        cmocka_unit_test(test_decide_np_foreign_pause_kept),
        cmocka_unit_test(test_extract_rolling),
        cmocka_unit_test(test_status_patch_zero_writes_when_right),
        cmocka_unit_test(test_compact_view_same_patches),
        cmocka_unit_test(test_compact_conditions_shrink),
        cmocka_unit_test(test_nodepool_condition_severity),
        cmocka_unit_test(test_restrictive_until_reason),
        cmocka_unit_test(test_nodepool_restricted_by_cluster),
        cmocka_unit_test(test_exclusion_in_conditions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
