/* test_cpfirst.c: a NodePool never runs ahead of its control plane
 * (decide_cp_first_ok(), decide_cp_first_apply() through decide_plan()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/companion.h"
#include "decide/cpfirst.h"
#include "decide/plan.h"
#include "decide/testutil_decide.h"

#define REL "quay.io/openshift-release-dev/ocp-release:"

/* A HostedCluster view from its status.version.history (JSON array text). */
static decide_hc_t *hc_with(const char *history)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"spec\":{\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"
             "\"status\":{\"version\":{\"history\":%s}}}",
             history);
    json_t *j = tu_doc(text);
    decide_hc_t *hc = decide_hc_extract(j);
    json_decref(j);
    assert_non_null(hc);
    return hc;
}

static void test_completed(void **state)
{
    (void)state;
    char why[512];
    /* 4.17.1 started (Partial), 4.17.0 completed, 4.16.9 before it. */
    decide_hc_t *hc = hc_with("[{\"state\":\"Partial\",\"image\":\"" REL "4.17.1-x86_64\","
                              "\"version\":\"4.17.1\"},"
                              "{\"state\":\"Completed\",\"image\":\"" REL "4.17.0-x86_64\","
                              "\"version\":\"4.17.0\"},"
                              "{\"state\":\"Completed\",\"image\":\"" REL "4.16.9-x86_64\","
                              "\"version\":\"4.16.9\"}]");
    assert_true(hc->cp_reported);
    assert_string_equal(hc->cp_completed, "4.17.0");
    assert_true(decide_cp_first_ok(REL "4.17.0-x86_64", hc, why, sizeof(why)));
    assert_string_equal(why, "");
    /* N-3 older is fine; a patch ahead is not, nor a minor. */
    assert_true(decide_cp_first_ok(REL "4.14.3-x86_64", hc, why, sizeof(why)));
    assert_false(decide_cp_first_ok(REL "4.17.1-x86_64", hc, why, sizeof(why)));
    assert_string_equal(why, "release 4.17.1 is newer than 4.17.0, the newest release the "
                             "control plane has completed");
    assert_false(decide_cp_first_ok(REL "4.18.0-x86_64", hc, why, sizeof(why)));
    /* Numerically: 4.17.10 is ahead of 4.17.9. */
    decide_hc_free(hc);
    hc = hc_with("[{\"state\":\"Completed\",\"image\":\"" REL "4.17.9-x86_64\",\"version\":\"4.17.9\"}]");
    assert_false(decide_cp_first_ok(REL "4.17.10-x86_64", hc, why, sizeof(why)));
    assert_true(decide_cp_first_ok(REL "4.17.8-x86_64", hc, why, sizeof(why)));
    /* Pinned by digest: fine only when the control plane completed that very
     * image; otherwise held, in doubt. */
    decide_hc_free(hc);
    hc = hc_with("[{\"state\":\"Completed\",\"image\":\"quay.io/ocp@sha256:aa\",\"version\":\"4.17.0\"}]");
    assert_true(decide_cp_first_ok("quay.io/ocp@sha256:aa", hc, why, sizeof(why)));
    assert_false(decide_cp_first_ok("quay.io/ocp@sha256:bb", hc, why, sizeof(why)));
    assert_non_null(strstr(why, "names no version"));
    /* An entry without a version counts by its image's tag. */
    decide_hc_free(hc);
    hc = hc_with("[{\"state\":\"Completed\",\"image\":\"" REL "4.17.2-x86_64\"}]");
    assert_string_equal(hc->cp_completed, "4.17.2");
    assert_true(decide_cp_first_ok(REL "4.17.2-multi", hc, why, sizeof(why)));
    /* Nothing completed yet: held. No history at all: nothing to compare. */
    decide_hc_free(hc);
    hc = hc_with("[{\"state\":\"Partial\",\"image\":\"" REL "4.17.0-x86_64\"}]");
    assert_string_equal(hc->cp_completed, "");
    assert_false(decide_cp_first_ok(REL "4.17.0-x86_64", hc, why, sizeof(why)));
    assert_non_null(strstr(why, "has not completed any release yet"));
    decide_hc_free(hc);
    hc = hc_with("[]");
    assert_false(hc->cp_reported);
    assert_true(decide_cp_first_ok(REL "4.99.0-x86_64", hc, why, sizeof(why)));
    decide_hc_free(hc);
    /* A long history keeps the newest few images only. */
    char hist[4096] = "[";
    for (int k = 0; k < 10; k++) {
        char e[160];
        snprintf(e, sizeof(e), "%s{\"state\":\"Completed\",\"image\":\"q/ocp@sha256:%02d\"}",
                 k ? "," : "", k);
        strncat(hist, e, sizeof(hist) - strlen(hist) - 1);
    }
    strncat(hist, "]", sizeof(hist) - strlen(hist) - 1);
    hc = hc_with(hist);
    assert_true(decide_cp_first_ok("q/ocp@sha256:00", hc, why, sizeof(why)));
    assert_true(decide_cp_first_ok("q/ocp@sha256:07", hc, why, sizeof(why)));
    assert_false(decide_cp_first_ok("q/ocp@sha256:08", hc, why, sizeof(why)));
    decide_hc_free(hc);
    /* Garbage history entries read as absent. */
    hc = hc_with("[7,{\"state\":\"Completed\",\"image\":5,\"version\":\"x\"},"
                 "{\"state\":\"Completed\",\"version\":\"4.16.0\"}]");
    assert_string_equal(hc->cp_completed, "4.16.0");
    assert_null(hc->cp_completed_images);
    decide_hc_free(hc);
    assert_true(decide_cp_first_ok(NULL, NULL, why, sizeof(why)));
    assert_true(decide_cp_first_ok(REL "4.17.1-x86_64", NULL, why, sizeof(why)));
}

/* ---- through decide_plan() --------------------------------------------- */

typedef struct fake {
    decide_kind_t kind[4];
    const char *name[4];
    void *data[4];
    int n;
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

static void set(fake_t *f, int i, const char *text)
{
    json_t *j = tu_doc(text);
    if (f->kind[i] == DECIDE_HC) {
        decide_hc_free(f->data[i]);
        f->data[i] = decide_hc_extract(j);
    } else {
        decide_np_free(f->data[i]);
        f->data[i] = decide_np_extract(j);
    }
    assert_non_null(f->data[i]);
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
}

static void plan(fake_t *f, sched_time_t now, decide_plan_t *p)
{
    decide_view_t v = {.ud = f, .status_doc = true, .admission_holds = true, .get = fget};
    char err[256];
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1", now, p, err, sizeof(err)), 0);
    assert_true(p->decided);
}

#define HC_RUNNING(history)                                                                        \
    "{\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"          \
    "\"status\":{\"version\":{\"desired\":{\"image\":\"" REL "4.17.1-x86_64\"},"                 \
    "\"history\":" history "}}}"
#define PARTIAL_4171 "{\"state\":\"Partial\",\"image\":\"" REL "4.17.1-x86_64\",\"version\":\"4.17.1\"}"
#define DONE(v) "{\"state\":\"Completed\",\"image\":\"" REL v "-x86_64\",\"version\":\"" v "\"}"

/* A pool with 4.17.1 held, its window open (Permissive) and its control
 * plane still rolling to 4.17.1: the request stays held and every place
 * that tells says why; once the control plane has completed 4.17.1 it goes. */
static void test_plan_waits_for_control_plane(void **state)
{
    (void)state;
    fake_t f = {0};
    decide_plan_t p;
    add(&f, DECIDE_HC, "a", HC_RUNNING("[" PARTIAL_4171 "," DONE("4.17.0") "]"));
    add(&f, DECIDE_NP, "np1",
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\","
        "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
        "\"{\\\"release\\\":{\\\"image\\\":\\\"" REL "4.17.1-x86_64\\\"}}\"}},"
        "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"" REL "4.17.0-x86_64\"}},"
        "\"status\":{\"version\":\"4.17.0\"}}");
    add(&f, DECIDE_MD, "np1",
        "{\"metadata\":{\"annotations\":{\"hypershift.openshift.io/nodePool\":\"clusters/np1\"}},"
        "\"spec\":{\"replicas\":2},\"status\":{\"replicas\":2,\"updatedReplicas\":2}}");
    plan(&f, tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.state.permitted); /* the window is open */
    assert_true(p.d.cp_first);
    assert_true(p.d.restricted); /* so the request is not applied */
    assert_string_equal(p.d.restricted_reason, DECIDE_CP_FIRST_REASON);
    assert_string_equal(p.d.paused_reason, DECIDE_CP_FIRST_REASON);
    assert_string_equal(p.d.pending_reason, DECIDE_CP_FIRST_REASON);
    assert_non_null(strstr(p.d.pending_message, "release 4.17.1 is newer than 4.17.0"));
    assert_non_null(strstr(p.d.pending_message, "The held change (release"));
    assert_non_null(strstr(p.d.paused_message, "They start as soon as it has"));
    assert_int_equal(p.d.pending_metric, 2);
    assert_false(p.d.gate.applies);
    assert_int_equal(p.d.action, DECIDE_PAUSE_NONE); /* it keeps scaling */
    assert_string_equal(hcp_json_str(p.status_doc, "behavior.current.reason"),
                        DECIDE_CP_FIRST_REASON);
    assert_string_equal(hcp_json_str(p.status_doc, "waitingForControlPlane.message"),
                        "release 4.17.1 is newer than 4.17.0, the newest release the control "
                        "plane has completed");
    decide_plan_free(&p);

    /* The control plane completes 4.17.1: the request goes. */
    set(&f, 0, HC_RUNNING("[" DONE("4.17.1") "," DONE("4.17.0") "]"));
    plan(&f, tu_at("2026-03-07T01:00:00Z"), &p);
    assert_false(p.d.cp_first);
    assert_false(p.d.restricted);
    assert_int_equal(p.d.pending_metric, 1);
    assert_string_equal(p.d.pending_reason, "ChangesInitiated");
    assert_null(json_object_get(p.status_doc, "waitingForControlPlane"));
    json_t *patch = decide_np_request_patch(p.self.data, p.self.rv);
    assert_non_null(patch);
    json_decref(patch);
    decide_plan_free(&p);

    /* Asked for 4.18.0 while the control plane completed 4.17.1: never. */
    set(&f, 1,
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\","
        "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
        "\"{\\\"release\\\":{\\\"image\\\":\\\"" REL "4.18.0-x86_64\\\"}}\"}},"
        "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"
        "\"status\":{\"version\":\"4.17.1\"}}");
    plan(&f, tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.cp_first);
    assert_true(p.d.restricted);
    assert_non_null(strstr(p.d.pending_message, "release 4.18.0 is newer than 4.17.1"));
    decide_plan_free(&p);

    /* A request without a release (configuration only) is not its business. */
    set(&f, 1,
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/strategy\":\"Permissive\","
        "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
        "\"{\\\"config\\\":[{\\\"name\\\":\\\"c2\\\"}]}\"}},"
        "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"
        "\"status\":{\"version\":\"4.17.1\"}}");
    plan(&f, tu_at("2026-03-07T01:00:00Z"), &p);
    assert_false(p.d.cp_first);
    assert_false(p.d.restricted);
    decide_plan_free(&p);
    fake_free(&f);
}

/* Outside its window the pool says both what it waits for: the control
 * plane, and the window (ChangesPaused keeps the window's words). */
static void test_plan_restricted_says_control_plane(void **state)
{
    (void)state;
    fake_t f = {0};
    decide_plan_t p;
    add(&f, DECIDE_HC, "a", HC_RUNNING("[" DONE("4.17.0") "]"));
    add(&f, DECIDE_NP, "np1",
        "{\"metadata\":{\"annotations\":{"
        "\"changemanagement.hypershift.openshift.io/strategy\":\"None\","
        "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
        "\"{\\\"release\\\":{\\\"image\\\":\\\"" REL "4.17.1-x86_64\\\"}}\"}},"
        "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"" REL "4.17.0-x86_64\"}},"
        "\"status\":{\"version\":\"4.17.0\"}}");
    plan(&f, tu_at("2026-03-07T01:00:00Z"), &p);
    assert_true(p.d.restricted);
    assert_true(p.d.cp_first);
    assert_string_equal(p.d.pending_reason, DECIDE_CP_FIRST_REASON);
    assert_string_not_equal(p.d.paused_reason, DECIDE_CP_FIRST_REASON);
    decide_plan_free(&p);
    fake_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_completed),
        cmocka_unit_test(test_plan_waits_for_control_plane),
        cmocka_unit_test(test_plan_restricted_says_control_plane),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
