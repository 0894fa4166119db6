/* test_scope.c: the kind of an object's change (scope.h), and the plan of
 * an object whose policy has scoped exclusions: each kind of change meets
 * only the exclusions whose scope holds it (DESIGN.md 3.16). */
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
#include "decide/scope.h"
#include "decide/testutil_decide.h"

#define REL "quay.io/openshift-release-dev/ocp-release:"
#define CM "changemanagement.hypershift.openshift.io/"

static void test_minor_upgrade(void **state)
{
    (void)state;
    assert_false(decide_minor_upgrade("4.17.1", REL "4.17.3-x86_64"));
    assert_false(decide_minor_upgrade("4.17.9", REL "4.17.10-multi"));
    assert_true(decide_minor_upgrade("4.17.1", REL "4.18.0-x86_64"));
    assert_true(decide_minor_upgrade("4.18.2", REL "4.17.9-x86_64")); /* a minor down too */
    /* not known: the narrower timeline holds it */
    assert_true(decide_minor_upgrade(NULL, REL "4.17.3-x86_64"));
    assert_true(decide_minor_upgrade("", REL "4.17.3-x86_64"));
    assert_true(decide_minor_upgrade("4.17.1", "quay.io/x/y@sha256:0123456789abcdef"));
    assert_true(decide_minor_upgrade("4.17.1", NULL));
    /* OpenShift 5.0 follows 4.22 on HyperShift's line of minors */
    assert_true(decide_minor_upgrade("4.22.3", REL "5.0.0-x86_64"));
}

static void *extract(decide_kind_t kind, const char *text)
{
    json_t *j = tu_doc(text);
    void *d = kind == DECIDE_HC ? (void *)decide_hc_extract(j) : (void *)decide_np_extract(j);
    json_decref(j);
    assert_non_null(d);
    return d;
}

/* A HostedCluster at 4.17.1 (completed) following policy "freeze", with
 * annotations (JSON members, may be ""). */
static decide_hc_t *hc_at(const char *annotations)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"annotations\":{\"" CM "policy\":\"freeze\"%s%s}},"
             "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"
             "\"status\":{\"version\":{\"desired\":{\"image\":\"" REL "4.17.1-x86_64\"},"
             "\"history\":[{\"state\":\"Completed\",\"image\":\"" REL "4.17.1-x86_64\","
             "\"version\":\"4.17.1\"}]}}}",
             annotations[0] ? "," : "", annotations);
    return extract(DECIDE_HC, text);
}

/* A NodePool of "a" at 4.17.1 following "freeze", with annotations. */
static decide_np_t *np_at(const char *annotations)
{
    char text[2048];
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"annotations\":{\"" CM "policy\":\"freeze\"%s%s}},"
             "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"" REL "4.17.1-x86_64\"}},"
             "\"status\":{\"version\":\"4.17.1\"}}",
             annotations[0] ? "," : "", annotations);
    return extract(DECIDE_NP, text);
}

#define HELD_RELEASE(v) "\"" CM "requested-release-image\":\"" REL v "-x86_64\""
#define HELD_NP_RELEASE(v)                                                                    \
    "\"" CM "requested-nodepool-spec\":\"{\\\"release\\\":{\\\"image\\\":\\\"" REL v           \
    "-x86_64\\\"}}\""
#define HELD_NP_CONFIG "\"" CM "requested-nodepool-spec\":\"{\\\"config\\\":[{\\\"name\\\":\\\"c\\\"}]}\""

static void test_change_kinds(void **state)
{
    (void)state;
    const char *none[2] = {NULL, NULL};
    decide_hc_t *hc = hc_at("");
    assert_int_equal(decide_hc_change(hc, none), POLICY_CHANGE_CP);
    assert_int_equal(decide_hc_change(hc, NULL), POLICY_CHANGE_CP);
    const char *z[2] = {REL "4.17.3-x86_64", NULL}, *minor_cp[2] = {NULL, REL "4.18.0-x86_64"};
    assert_int_equal(decide_hc_change(hc, z), POLICY_CHANGE_CP);
    assert_int_equal(decide_hc_change(hc, minor_cp), POLICY_CHANGE_CP_MINOR);
    decide_hc_free(hc);
    hc = hc_at(HELD_RELEASE("4.17.3"));
    assert_int_equal(decide_hc_change(hc, NULL), POLICY_CHANGE_CP);
    decide_hc_free(hc);
    hc = hc_at(HELD_RELEASE("4.18.0"));
    assert_int_equal(decide_hc_change(hc, NULL), POLICY_CHANGE_CP_MINOR);
    /* a write's own release is the change asked about, not the one held */
    assert_int_equal(decide_hc_change(hc, z), POLICY_CHANGE_CP);
    decide_hc_free(hc);

    decide_np_t *np = np_at("");
    assert_int_equal(decide_np_change(np, NULL), POLICY_CHANGE_NODES);
    const char *np_minor[2] = {REL "4.18.0-x86_64", NULL};
    assert_int_equal(decide_np_change(np, np_minor), POLICY_CHANGE_NODES_MINOR);
    assert_int_equal(decide_np_change(np, z), POLICY_CHANGE_NODES);
    decide_np_free(np);
    np = np_at(HELD_NP_RELEASE("4.18.0"));
    assert_int_equal(decide_np_change(np, NULL), POLICY_CHANGE_NODES_MINOR);
    decide_np_free(np);
    np = np_at(HELD_NP_CONFIG);
    assert_int_equal(decide_np_change(np, NULL), POLICY_CHANGE_NODES);
    decide_np_free(np);
}

/* ---- plans under a scoped policy ---------------------------------------------- */

/* Every day permitted, but: 2026-03-07 a Nodes freeze ("black-friday"),
 * 2026-03-14 MinorUpgrades ("year-end"), 2026-03-21 every change. */
#define FREEZE                                                                                 \
    "{\"kind\":\"HostedChangeManagementPolicy\",\"metadata\":{\"name\":\"freeze\","           \
    "\"namespace\":\"ns\"},\"spec\":{\"strategy\":\"MaintenanceSchedule\","                    \
    "\"maintenanceSchedule\":{\"permit\":{\"rrule\":\"FREQ=DAILY\",\"duration\":\"24h\"},"    \
    "\"exclude\":[{\"fromDate\":\"2026-03-07\",\"reason\":\"black-friday\",\"scope\":\"Nodes\"},"   \
    "{\"fromDate\":\"2026-03-14\",\"reason\":\"year-end\",\"scope\":\"MinorUpgrades\"},"        \
    "{\"fromDate\":\"2026-03-21\",\"reason\":\"all\"}]}}}"

typedef struct fake {
    policy_t *freeze;
    decide_hc_t *hc;
    decide_np_t *np;
} fake_t;

static bool fget(void *ud, decide_kind_t kind, const char *ns, const char *name, decide_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    if (kind == DECIDE_HC && strcmp(name, "a") == 0)
        *out = (decide_ref_t){f->hc, "7", "uid-a"};
    else if (kind == DECIDE_NP && strcmp(name, "p") == 0)
        *out = (decide_ref_t){f->np, "8", "uid-p"};
    else
        return false;
    return true;
}

static int flookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    if (strcmp(name, "freeze") != 0)
        return 0;
    out->found = 1;
    out->ready = f->freeze->valid;
    out->sched = f->freeze->sched;
    out->sched_for = f->freeze->scoped ? f->freeze->sched_for : NULL;
    return 0;
}

/* The plan of kind (HostedCluster a or NodePool p) at `at`, the write
 * asking for asked (NULL: none): restricted or not, and the exclusion's
 * reason ("" when none) into why. */
static bool restricted(fake_t *f, decide_kind_t kind, const char *at, const char *asked,
                       policy_change_t want_kind, char *why, size_t n)
{
    decide_view_t v = {.ud = f, .get = fget, .lookup_policy = flookup, .admission_holds = true};
    decide_plan_t p;
    char err[256];
    v.asked[0] = asked;
    assert_int_equal(decide_plan(&v, kind, "ns", kind == DECIDE_HC ? "a" : "p", tu_at(at), &p, err,
                                 sizeof(err)),
                     0);
    assert_true(p.decided);
    assert_int_equal(p.change, want_kind);
    bool r = p.d.restricted;
    snprintf(why, n, "%s", p.d.excluded ? p.d.excluded_reason : "");
    decide_plan_free(&p);
    return r;
}

static void test_plan_scoped(void **state)
{
    (void)state;
    fake_t f = {0};
    char why[256];
    json_t *doc = tu_doc(FREEZE);
    assert_int_equal(policy_parse(doc, tu_at("2026-03-01T00:00:00Z"), &f.freeze, NULL, 0), 0);
    json_decref(doc);
    f.hc = hc_at("");
    f.np = np_at("");

    /* The Nodes freeze: the control plane goes on, every pool change waits. */
    assert_false(restricted(&f, DECIDE_HC, "2026-03-07T12:00:00Z", NULL, POLICY_CHANGE_CP, why,
                            sizeof(why)));
    assert_false(restricted(&f, DECIDE_HC, "2026-03-07T12:00:00Z", REL "4.18.0-x86_64",
                            POLICY_CHANGE_CP_MINOR, why, sizeof(why)));
    assert_true(restricted(&f, DECIDE_NP, "2026-03-07T12:00:00Z", NULL, POLICY_CHANGE_NODES, why,
                           sizeof(why)));
    assert_string_equal(why, "black-friday (scope Nodes)");
    /* The minor freeze: z-streams and configuration go on, minors wait. */
    assert_false(restricted(&f, DECIDE_HC, "2026-03-14T12:00:00Z", REL "4.17.3-x86_64",
                            POLICY_CHANGE_CP, why, sizeof(why)));
    assert_true(restricted(&f, DECIDE_HC, "2026-03-14T12:00:00Z", REL "4.18.0-x86_64",
                           POLICY_CHANGE_CP_MINOR, why, sizeof(why)));
    assert_string_equal(why, "year-end (scope MinorUpgrades)");
    assert_false(restricted(&f, DECIDE_NP, "2026-03-14T12:00:00Z", NULL, POLICY_CHANGE_NODES, why,
                            sizeof(why)));
    assert_true(restricted(&f, DECIDE_NP, "2026-03-14T12:00:00Z", REL "4.18.0-x86_64",
                           POLICY_CHANGE_NODES_MINOR, why, sizeof(why)));
    /* AllChanges: everything waits. */
    assert_true(restricted(&f, DECIDE_HC, "2026-03-21T12:00:00Z", REL "4.17.3-x86_64",
                           POLICY_CHANGE_CP, why, sizeof(why)));
    assert_string_equal(why, "all");
    assert_true(restricted(&f, DECIDE_NP, "2026-03-21T12:00:00Z", NULL, POLICY_CHANGE_NODES, why,
                           sizeof(why)));

    /* A held minor request on the HostedCluster is planned as one: the
     * cluster's timeline for it, and its pools' node minor upgrade. */
    decide_hc_free(f.hc);
    f.hc = hc_at(HELD_RELEASE("4.18.0"));
    assert_true(restricted(&f, DECIDE_HC, "2026-03-14T12:00:00Z", NULL, POLICY_CHANGE_CP_MINOR,
                           why, sizeof(why)));
    decide_np_free(f.np);
    f.np = np_at(HELD_NP_CONFIG); /* a configuration: no minor upgrade */
    assert_false(restricted(&f, DECIDE_NP, "2026-03-14T12:00:00Z", NULL, POLICY_CHANGE_NODES, why,
                            sizeof(why)));
    decide_np_free(f.np);
    f.np = np_at(HELD_NP_RELEASE("4.18.0"));
    assert_true(restricted(&f, DECIDE_NP, "2026-03-14T12:00:00Z", NULL, POLICY_CHANGE_NODES_MINOR,
                           why, sizeof(why)));

    decide_hc_free(f.hc);
    decide_np_free(f.np);
    policy_free(f.freeze);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minor_upgrade),
        cmocka_unit_test(test_change_kinds),
        cmocka_unit_test(test_plan_scoped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
