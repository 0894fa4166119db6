/* test_holds.c: the admission holds (DESIGN.md 3.6) answered from the
 * controller's cache. The caches are filled directly, as the watch would;
 * each request goes through the route table as the API server's would, and
 * the JSON Patch of the answer is decoded and applied to the request's
 * object to see what would be stored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/json.h"
#include "admission/holds.h"
#include "check/call.h"
#include "admission/router.h"
#include "admission/validate.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/testutil_decide.h"
#include "decide/drift.h"
#include "decide/writes.h"
#include "log/log.h"

#define add_object testutil_ctl_add

#define OBJ_META TESTUTIL_OBJ_META
#define BY_WEEKEND TESTUTIL_BY_WEEKEND
#define OUR_PAUSE                                                            \
    "\"cluster.x-k8s.io/paused\":\"true\","                                 \
    "\"changemanagement.hypershift.openshift.io/paused-by\":\"hcp-controller\""

static const char md_np1[] =
    "{" OBJ_META("MachineDeployment", "clusters-a", "np1") ",\"annotations\":{"
    "\"hypershift.openshift.io/nodePool\":\"clusters/np1\"," OUR_PAUSE "}},"
    "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"version\":\"4.17.0\"}}},"
    "\"status\":{\"replicas\":4,\"updatedReplicas\":1}}"; /* paused mid-rollout */
/* np1's MachineDeployment rolled out (4.17.0), with a held 4.17.1. */
#define MD_NP1_DONE(extra)                                                             \
    "{\"kind\":\"MachineDeployment\",\"metadata\":{\"namespace\":\"clusters-a\","     \
    "\"name\":\"np1\",\"uid\":\"u-np1\",\"resourceVersion\":\"9\",\"annotations\":{"     \
    "\"hypershift.openshift.io/nodePool\":\"clusters/np1\"" extra "}},"               \
    "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"version\":\"4.17.0\"}}},"   \
    "\"status\":{\"replicas\":3,\"updatedReplicas\":3}}"
/* HyperShift's write of np1's MachineDeployment with the 4.17.1 template. */
#define MD_NP1_WRITE(extra)                                                          \
    "{" OBJ_META("MachineDeployment", "clusters-a", "np1") ",\"annotations\":{"     \
    "\"hypershift.openshift.io/nodePool\":\"clusters/np1\"" extra "}},"             \
    "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"version\":\"4.17.1\"}}}}"
static const char md_np1_held[] =
    MD_NP1_DONE(",\"changemanagement.hypershift.openshift.io/held-template\":\"version 4.17.1\"");
static const char ms_np2[] =
    "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
    "\"hypershift.openshift.io/nodePool\":\"clusters/np2\","
    "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c1\"}},"
    "\"spec\":{\"replicas\":2}}";

/* Weekend windows (Saturday 01:00-05:00 UTC); HostedCluster a and its two
 * pools follow them, HostedCluster free has no stanza. */
static ctl_controller_t *controller(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = testutil_ctl_weekend(loop, now);
    add_object(&c->hcs, "{" OBJ_META("HostedCluster", "clusters", "free") "},"
                        "\"spec\":{\"release\":{\"image\":\"r:1\"}}}");
    add_object(&c->clusters, "{" OBJ_META("Cluster", "clusters-a", "a-x1") "}}");
    add_object(&c->mds, md_np1);
    add_object(&c->mss, ms_np2);
    return c;
}

typedef testutil_answer_t answer_t;

/* Sends an UPDATE of ns/name from old to new through the webhook at path. */
static answer_t update(adm_router_t *r, const char *path, const char *group,
                       const char *resource, const char *ns, const char *name, const char *old,
                       const char *new_obj)
{
    testutil_review_t q = {.path = path, .op = "UPDATE", .group = group, .resource = resource,
                           .ns = ns, .name = name, .object = new_obj, .old_object = old};
    return testutil_ctl_answer(r, &q);
}

/* An UPDATE of np1's MachineDeployment from old to new_obj. */
static answer_t md_update(adm_router_t *r, const char *old, const char *new_obj)
{
    return update(r, ADM_WEBHOOK_MACHINEDEPLOYMENTS, CAPI_GROUP, "machinedeployments",
                  "clusters-a", "np1", old, new_obj);
}

/* The same, by user. */
static answer_t md_update_by(adm_router_t *r, const char *user, const char *old,
                             const char *new_obj)
{
    testutil_review_t q = {.path = ADM_WEBHOOK_MACHINEDEPLOYMENTS, .op = "UPDATE",
                           .group = CAPI_GROUP, .resource = "machinedeployments",
                           .ns = "clusters-a", .name = "np1", .user = user,
                           .object = new_obj, .old_object = old};
    return testutil_ctl_answer(r, &q);
}

static const char hc_old[] =
    "{" OBJ_META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND "}},"
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"}}}";
static const char hc_new[] =
    "{" OBJ_META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND "}},"
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"},"
    "\"controlPlaneRelease\":{\"image\":\"c:2\"}}}";

static void with_router(const char *when, void (*fn)(adm_router_t *r, ctl_controller_t *c))
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = controller(loop, tu_at(when));
    http_server srv;
    adm_router_t r;

    http_server_init(&srv, NULL);
    adm_router_init(&r, &srv, false, NULL, NULL);
    assert_int_equal(adm_holds_register(&r, c), 0);
    assert_int_equal(r.nroutes, 5);
    fn(&r, c);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

static const char *str_at(const json_t *o, const char *path)
{
    return hcp_json_str(o, path);
}

static const char *ann(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(o, "metadata.annotations"), key));
}

/* Tuesday: the release stays, the requests are recorded; the pending
 * change then reads as held until a window opens. */
static void hc_restricted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_old, hc_new);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_null(hcp_json_path(a.stored, "spec.controlPlaneRelease"));
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_RELEASE_ANNOTATION), "r:2");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_CP_RELEASE_ANNOTATION), "c:2");
    assert_int_equal(a.nwarnings, 2);
    assert_string_equal(a.warnings[0], "spec.release.image is held until 2026-03-07T01:00:00Z: "
                                       "r:2 requested, r:1 kept; see HostedChangeManagementStatus "
                                       "hostedcluster.a");
    assert_string_equal(a.warnings[1], "spec.controlPlaneRelease.image is held until "
                                       "2026-03-07T01:00:00Z: c:2 requested, (none) kept; see "
                                       "HostedChangeManagementStatus hostedcluster.a");
    decide_hc_t *hc = decide_hc_extract(a.stored);
    assert_true(decide_hc_pending(hc));
    json_t *rp = decide_release_patch(hc, "8");
    assert_string_equal(str_at(rp, "spec.release.image"), "r:2");
    assert_string_equal(str_at(rp, "spec.controlPlaneRelease.image"), "c:2");
    assert_true(json_is_null(json_object_get(hcp_json_path(rp, "metadata.annotations"),
                                             DECIDE_REQUESTED_RELEASE_ANNOTATION)));
    assert_string_equal(str_at(rp, "metadata.resourceVersion"), "8");
    json_decref(rp);
    decide_hc_free(hc);
    json_decref(a.stored);

    /* An object without a stanza is never touched. */
    a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters", "free",
               "{\"spec\":{\"release\":{\"image\":\"r:1\"}}}",
               "{\"spec\":{\"release\":{\"image\":\"r:2\"}}}");
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
}

/* Release images by digest and the longest HostedCluster name: each
 * warning still fits the API server's 256 characters whole (it is not cut),
 * and says what is held, until when, and what was asked for. */
#define LONG_NAME "a123456789b123456789c123456789d123456789e123456789f123456789xyz"
#define DIGEST_IMAGE(c)                                                               \
    "quay.io/openshift-release-dev/ocp-release@sha256:" c "0123456789abcdef0123456789" \
    "abcdef0123456789abcdef0123456789abcdef01234" c
static void hc_long_values(adm_router_t *r, ctl_controller_t *c)
{
    static const char old[] =
        "{" OBJ_META("HostedCluster", "clusters", LONG_NAME) ",\"annotations\":{" BY_WEEKEND
        "}},\"spec\":{\"infraID\":\"a-x2\",\"release\":{\"image\":\"" DIGEST_IMAGE("a") "\"},"
        "\"controlPlaneRelease\":{\"image\":\"" DIGEST_IMAGE("b") "\"}}}";
    static const char new_obj[] =
        "{" OBJ_META("HostedCluster", "clusters", LONG_NAME) ",\"annotations\":{" BY_WEEKEND
        "}},\"spec\":{\"infraID\":\"a-x2\",\"release\":{\"image\":\"" DIGEST_IMAGE("c") "\"},"
        "\"controlPlaneRelease\":{\"image\":\"" DIGEST_IMAGE("d") "\"}}}";
    static const char *const field[] = {"spec.release.image", "spec.controlPlaneRelease.image"};
    static const char *const want[] = {DIGEST_IMAGE("c"), DIGEST_IMAGE("d")};

    add_object(&c->hcs, old);
    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        LONG_NAME, old, new_obj);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), DIGEST_IMAGE("a"));
    assert_int_equal(a.nwarnings, 2);
    for (int i = 0; i < 2; i++) {
        const char *w = a.warnings[i];
        char head[128];
        size_t n = strlen(w);

        print_message("warning %d (%zu bytes): %s\n", i, n, w);
        assert_true(n <= ADM_WARNING_MAX);
        snprintf(head, sizeof(head), "%s is held until 2026-03-07T01:00:00Z: ", field[i]);
        assert_true(strncmp(w, head, strlen(head)) == 0);
        assert_non_null(strstr(w, want[i])); /* the whole image fits */
        /* Whole: it ends with one of its parts, not somewhere inside one. */
        assert_true((n > 10 && strcmp(w + n - 10, " requested") == 0) ||
                    (n > 5 && strcmp(w + n - 5, " kept") == 0) ||
                    (n > strlen("hostedcluster." LONG_NAME) &&
                     strcmp(w + n - strlen("hostedcluster." LONG_NAME),
                            "hostedcluster." LONG_NAME) == 0));
    }
    json_decref(a.stored);
}

static void test_warnings_fit(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", hc_long_values);
}

static void test_hostedcluster_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", hc_restricted);
}

static void hc_permitted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_old, hc_new);
    assert_true(a.allowed);
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
}

static void test_hostedcluster_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_permitted);
}

/* DESIGN.md 3.15: with a pre-start check for the control plane, a release
 * asked for in an open window is held until the checks allow it (the
 * leader asks at once); a standby, which knows no answer, lets it pass;
 * without a check for the control plane it passes. */
static void hc_in_window_checks(adm_router_t *r, ctl_controller_t *c)
{
    check_runner_t run;
    testutil_ctl_checks_on(c, &run, CHECK_CONTROL_PLANE);

    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_old, hc_new);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_string_equal(json_string_value(json_object_get(
                            hcp_json_path(a.stored, "metadata.annotations"),
                            DECIDE_REQUESTED_RELEASE_ANNOTATION)),
                        "r:2");
    assert_string_equal(a.warnings[0], "spec.release.image is held until the pre-start checks "
                                       "allow it: r:2 requested, r:1 kept; see "
                                       "HostedChangeManagementStatus hostedcluster.a");
    json_decref(a.stored);

    c->leading = false; /* a standby knows no answer: it passes */
    a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters", "a",
               hc_old, hc_new);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    json_decref(a.stored);

    c->leading = true; /* a check for the nodes only: the release passes */
    run.cfg.checks[0].systems = CHECK_WORKER_NODES;
    a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters", "a",
               hc_old, hc_new);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    json_decref(a.stored);
    testutil_ctl_checks_off(c, &run);
}

static void test_hostedcluster_in_window_checks(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_in_window_checks);
}

/* The fields that roll every NodePool (hcfields.h): in the HostedCluster's
 * own window they are held while one of its pools (np3, Restrictive) may
 * not change, naming it, while the release passes; with np3 following the
 * weekend too they pass. */
static const char hc_proxy_old[] =
    "{" OBJ_META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND "}},"
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:1\"},"
    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p1\"}}}}";
static const char hc_proxy_new[] =
    "{" OBJ_META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND "}},"
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:2\"},"
    "\"additionalTrustBundle\":{\"name\":\"tb2\"},"
    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p2\"}}}}";

static void hc_fields_pool_restricted(adm_router_t *r, ctl_controller_t *c)
{
    add_object(&c->nps, "{" OBJ_META("NodePool", "clusters", "np3") ",\"annotations\":{"
                        "\"changemanagement.hypershift.openshift.io/strategy\":\"Restrictive\"}},"
                        "\"spec\":{\"clusterName\":\"a\"}}");
    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_proxy_old, hc_proxy_new);
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p1");
    assert_null(hcp_json_path(a.stored, "spec.additionalTrustBundle"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), "r:2");
    json_t *ann = hcp_json_path(a.stored, "metadata.annotations");
    const char *rec = json_string_value(
        json_object_get(ann, "changemanagement.hypershift.openshift.io/requested-hostedcluster-spec"));
    assert_non_null(rec);
    assert_non_null(strstr(rec, "http://p2"));
    assert_non_null(strstr(rec, "tb2"));
    assert_non_null(json_object_get(ann, "changemanagement.hypershift.openshift.io/requested-by"));
    assert_non_null(strstr(a.warning, "spec.additionalTrustBundle, spec.configuration.proxy"));
    assert_non_null(strstr(a.warning, "NodePool np3"));
    json_decref(a.stored);
}

static void test_hc_fields_pool_restricted(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_fields_pool_restricted);
}

static void hc_fields_all_open(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_proxy_old, hc_proxy_new);
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p2");
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
}

static void test_hc_fields_all_open(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_fields_all_open);
}

/* DESIGN.md 3.15: in their common window the fields that roll every
 * NodePool wait for a pre-start check as the release does; a standby lets
 * them pass. */
static void hc_fields_in_window_checks(adm_router_t *r, ctl_controller_t *c)
{
    check_runner_t run;
    testutil_ctl_checks_on(c, &run, CHECK_CONTROL_PLANE | CHECK_WORKER_NODES);

    answer_t a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters",
                        "a", hc_proxy_old, hc_proxy_new);
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p1");
    assert_null(hcp_json_path(a.stored, "spec.additionalTrustBundle"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), "r:1");
    const char *rec = ann(a.stored, DECIDE_REQUESTED_HC_SPEC_ANNOTATION);
    assert_non_null(rec);
    assert_non_null(strstr(rec, "http://p2"));
    assert_non_null(strstr(a.warnings[0], "spec.additionalTrustBundle, "
                                          "spec.configuration.proxy (rolls every NodePool): "
                                          "held until the pre-start checks allow it"));
    json_decref(a.stored);

    c->leading = false; /* a standby knows no answer: it passes */
    a = update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters", "a",
               hc_proxy_old, hc_proxy_new);
    assert_int_equal(a.nops, 0);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p2");
    json_decref(a.stored);
    testutil_ctl_checks_off(c, &run);
}

static void test_hc_fields_in_window_checks(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_fields_in_window_checks);
}

/* HostedCluster free has no stanza of its own: it is never restricted,
 * but once one of its pools follows the weekend its fields that roll every
 * NodePool are held outside the pool's window (the release passes); while
 * no pool of it has a stanza they pass, untouched. */
static const char hc_free_old[] =
    "{" OBJ_META("HostedCluster", "clusters", "free") "},"
    "\"spec\":{\"release\":{\"image\":\"r:1\"},"
    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p1\"}}}}";
static const char hc_free_new[] =
    "{" OBJ_META("HostedCluster", "clusters", "free") "},"
    "\"spec\":{\"release\":{\"image\":\"r:2\"},"
    "\"configuration\":{\"proxy\":{\"httpProxy\":\"http://p2\"}}}}";

static answer_t update_free(adm_router_t *r)
{
    return update(r, ADM_WEBHOOK_HOSTEDCLUSTERS, HS_GROUP, "hostedclusters", "clusters", "free",
                  hc_free_old, hc_free_new);
}

static void hc_fields_no_stanza(adm_router_t *r, ctl_controller_t *c)
{
    answer_t a = update_free(r);
    assert_true(a.allowed);
    assert_int_equal(a.nops, 0); /* no pool of it opted in */
    json_decref(a.stored);
    add_object(&c->nps, "{" OBJ_META("NodePool", "clusters", "freenp") ",\"annotations\":{"
                        BY_WEEKEND "}},\"spec\":{\"clusterName\":\"free\"}}");
    a = update_free(r);
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p1");
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), "r:2");
    assert_non_null(strstr(json_string_value(json_object_get(
                               hcp_json_path(a.stored, "metadata.annotations"),
                               DECIDE_REQUESTED_HC_SPEC_ANNOTATION)),
                           "http://p2"));
    assert_non_null(strstr(a.warning, "spec.configuration.proxy"));
    json_decref(a.stored);
}

static void test_hc_fields_no_stanza_pool_restricted(void **state)
{
    (void)state;
    with_router("2026-03-04T12:00:00Z", hc_fields_no_stanza);
}

static void hc_fields_no_stanza_open(adm_router_t *r, ctl_controller_t *c)
{
    add_object(&c->nps, "{" OBJ_META("NodePool", "clusters", "freenp") ",\"annotations\":{"
                        BY_WEEKEND "}},\"spec\":{\"clusterName\":\"free\"}}");
    answer_t a = update_free(r);
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.configuration.proxy.httpProxy"),
                        "http://p2");
    json_decref(a.stored);
}

static void test_hc_fields_no_stanza_pool_open(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", hc_fields_no_stanza_open);
}

/* HyperShift's NodePool reconcile writes a new template and drops the
 * pause. Nothing new is held at the MachineDeployment (the NodePool hold
 * keeps HyperShift from wanting another template while restricted): the
 * template passes, our pause (mid-rollout) is kept, the scale goes. */
static void md_restricted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    const char *hs_write =
        "{" OBJ_META("MachineDeployment", "clusters-a", "np1") ",\"annotations\":{"
        "\"hypershift.openshift.io/nodePool\":\"clusters/np1\","
        "\"changemanagement.hypershift.openshift.io/paused-by\":\"hcp-controller\"}},"
        "\"spec\":{\"replicas\":5,\"template\":{\"spec\":{\"version\":\"4.17.1\"}}}}";
    answer_t a = md_update(r, md_np1, hs_write);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.template.spec.version"), "4.17.1");
    assert_int_equal(json_integer_value(hcp_json_path(a.stored, "spec.replicas")), 5);
    assert_string_equal(ann(a.stored, DECIDE_PAUSED_ANNOTATION), "true");
    assert_string_equal(ann(a.stored, DECIDE_MARKER_ANNOTATION), DECIDE_MARKER_VALUE);
    assert_null(ann(a.stored, DECIDE_HELD_TEMPLATE_ANNOTATION));
    /* the pause kept, and the inputs the new template is made from noted */
    assert_int_equal(a.nops, 2);
    assert_non_null(ann(a.stored, "changemanagement.hypershift.openshift.io/template-inputs"));
    json_decref(a.stored);

    /* A MachineDeployment of no known pool passes untouched. */
    a = update(r, ADM_WEBHOOK_MACHINEDEPLOYMENTS, CAPI_GROUP, "machinedeployments", "clusters-a",
               "other", "{\"spec\":{\"template\":{\"a\":1}}}",
               "{\"spec\":{\"template\":{\"a\":2}}}");
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);

    /* InPlace: a new target config version passes. */
    a = update(r, ADM_WEBHOOK_MACHINESETS, CAPI_GROUP, "machinesets", "clusters-a", "np2", ms_np2,
               "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
               "\"hypershift.openshift.io/nodePool\":\"clusters/np2\","
               "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c2\"}},"
               "\"spec\":{\"replicas\":4}}");
    assert_int_equal(a.nops, 0);
    assert_string_equal(ann(a.stored, "hypershift.openshift.io/nodePoolTargetConfigVersion"),
                        "c2");
    json_decref(a.stored);

    /* Migration: a MachineSet whose target was held the old way keeps its
     * template and target while restricted (let through at the next
     * window, never lost). */
    a = update(r, ADM_WEBHOOK_MACHINESETS, CAPI_GROUP, "machinesets", "clusters-a", "np2",
               "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
               "\"hypershift.openshift.io/nodePool\":\"clusters/np2\","
               "\"changemanagement.hypershift.openshift.io/held-template\":\"configuration c2\","
               "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c1\"}},"
               "\"spec\":{\"replicas\":2,\"template\":{\"spec\":{\"version\":\"4.17.0\","
               "\"bootstrap\":{\"dataSecretName\":\"ud-1\"}}}}}",
               "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
               "\"hypershift.openshift.io/nodePool\":\"clusters/np2\","
               "\"changemanagement.hypershift.openshift.io/held-template\":\"configuration c2\","
               "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c2\"}},"
               "\"spec\":{\"replicas\":3,\"template\":{\"spec\":{\"version\":\"4.17.1\","
               "\"bootstrap\":{\"dataSecretName\":\"ud-2\"}}}}}");
    assert_true(a.allowed);
    assert_string_equal(ann(a.stored, "hypershift.openshift.io/nodePoolTargetConfigVersion"),
                        "c1");
    assert_string_equal(str_at(a.stored, "spec.template.spec.bootstrap.dataSecretName"), "ud-1");
    assert_string_equal(str_at(a.stored, "spec.template.spec.version"), "4.17.0");
    assert_string_equal(ann(a.stored, DECIDE_HELD_TEMPLATE_ANNOTATION), "version 4.17.1");
    assert_int_equal(json_integer_value(hcp_json_path(a.stored, "spec.replicas")), 3);
    json_decref(a.stored);

    /* Migration, Replace: the template held the old way stays. */
    a = md_update(r, md_np1_held,
               MD_NP1_WRITE(",\"changemanagement.hypershift.openshift.io/held-template\":"
                            "\"version 4.17.1\""));
    assert_string_equal(str_at(a.stored, "spec.template.spec.version"), "4.17.0");
    assert_string_equal(ann(a.stored, DECIDE_HELD_TEMPLATE_ANNOTATION), "version 4.17.1");
    json_decref(a.stored);

    /* A pool merely waiting (not mid-rollout): a pause of ours that the
     * write deletes is not kept; the controller lifts it anyway. */
    a = update(r, ADM_WEBHOOK_MACHINESETS, CAPI_GROUP, "machinesets", "clusters-a", "np2",
               "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
               "\"hypershift.openshift.io/nodePool\":\"clusters/np2\"," OUR_PAUSE ","
               "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c1\"}},"
               "\"spec\":{\"replicas\":2}}",
               "{" OBJ_META("MachineSet", "clusters-a", "np2") ",\"annotations\":{"
               "\"hypershift.openshift.io/nodePool\":\"clusters/np2\","
               "\"hypershift.openshift.io/nodePoolTargetConfigVersion\":\"c1\"}},"
               "\"spec\":{\"replicas\":3}}");
    assert_true(a.allowed);
    assert_int_equal(a.nops, 0);
    assert_null(ann(a.stored, DECIDE_PAUSED_ANNOTATION));
    json_decref(a.stored);

    /* A write that carries no other template (someone's metadata patch)
     * keeps the record of the held one. */
    a = md_update(r, md_np1_held, md_np1_held);
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
}

static void test_workers_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", md_restricted);
}

static void md_permitted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = md_update(r, md_np1, MD_NP1_WRITE(""));
    assert_int_equal(a.nops, 1); /* the inputs it is made from noted */
    assert_non_null(ann(a.stored, "changemanagement.hypershift.openshift.io/template-inputs"));
    assert_string_equal(str_at(a.stored, "spec.template.spec.version"), "4.17.1");
    json_decref(a.stored);

    /* HyperShift's first write in the window: the held template goes
     * through and its record goes with the same write. */
    a = md_update(r, md_np1_held,
               MD_NP1_WRITE(",\"changemanagement.hypershift.openshift.io/held-template\":"
                            "\"version 4.17.1\""));
    assert_int_equal(a.nops, 2); /* the record dropped, the inputs noted */
    assert_string_equal(str_at(a.stored, "spec.template.spec.version"), "4.17.1");
    assert_null(ann(a.stored, DECIDE_HELD_TEMPLATE_ANNOTATION));
    json_decref(a.stored);
}

/* The plan of np1 with its MachineDeployment as stored (JSON text). */
static void plan_np1(ctl_controller_t *c, const char *md, decide_plan_t *p)
{
    decide_view_t v;
    char err[256];

    add_object(&c->mds, md);
    ctl_view_init(c, false, &v);
    v.projection = NULL;
    v.status_doc = true;
    assert_int_equal(decide_plan(&v, DECIDE_NP, "clusters", "np1",
                                 ctl_clock_now(&c->opts.clock, c->loop), p, err, sizeof(err)),
                     0);
    assert_true(p->present && p->decided);
}

/* plan_np1() with md at resourceVersion rv, newer than the cache's (the
 * watch replaces an object by version). */
static void plan_np1_at(ctl_controller_t *c, const char *md, const char *rv, decide_plan_t *p)
{
    json_t *doc = tu_doc(md);
    json_object_set_new(json_object_get(doc, "metadata"), "resourceVersion", json_string(rv));
    char *text = json_dumps(doc, JSON_COMPACT);
    plan_np1(c, text, p);
    free(text);
    json_decref(doc);
}

/* A template held the old way is a pending change (DESIGN.md 3.5) until
 * the next window: the pool reads ChangesPending, blocked until the window,
 * and its companion names the held template. */
static void md_held_pending(adm_router_t *r, ctl_controller_t *c)
{
    decide_plan_t p;

    (void)r;
    plan_np1(c, MD_NP1_DONE(""), &p);
    assert_false(p.d.pending);
    assert_true(json_is_null(json_object_get(p.status_doc, "heldChange")));
    decide_plan_free(&p);

    plan_np1_at(c, md_np1_held, "10", &p);
    assert_true(p.d.pending);
    assert_int_equal(p.d.pending_metric, 2);
    assert_string_equal(p.d.pending_reason, "ChangesBlocked");
    assert_string_equal(str_at(p.status_doc, "heldChange.summary"),
                        "node rollout to version 4.17.1");
    assert_string_equal(str_at(p.status_doc, "heldChange.template"), "version 4.17.1");
    decide_plan_free(&p);
}


/* ---- drift: a configuration HyperShift made by itself (decide/drift.h) ---- */

#define DRIFT_ANN "changemanagement.hypershift.openshift.io/held-drift"
/* np1's MachineDeployment (v1beta1, as HyperShift writes it): template
 * user data UD, strategy TYPE, extra annotations EXTRA. */
#define MD_NP1_V1(ud, type, extra)                                                          \
    "{\"apiVersion\":\"cluster.x-k8s.io/v1beta1\"," OBJ_META("MachineDeployment",          \
    "clusters-a", "np1") ",\"annotations\":{"                                               \
    "\"hypershift.openshift.io/nodePool\":\"clusters/np1\"" extra "}},"                    \
    "\"spec\":{\"replicas\":3,\"strategy\":{\"type\":\"" type "\",\"rollingUpdate\":"      \
    "{\"maxSurge\":1,\"maxUnavailable\":0}},\"template\":{\"spec\":{\"version\":\"4.17.0\"," \
    "\"bootstrap\":{\"dataSecretName\":\"" ud "\"},\"infrastructureRef\":{\"name\":\"mt-1\"}}}}," \
    "\"status\":{\"replicas\":3,\"updatedReplicas\":3}}"


#define DRIFT_REC                                                                       \
    ",\"" DRIFT_ANN "\":\"{\\\"input\\\":\\\"user data ud-1 -> ud-2\\\","                \
    "\\\"since\\\":\\\"2026-03-03T12:00:00Z\\\",\\\"strategy\\\":\\\"RollingUpdate\\\"}\""

#define INPUTS_ANN "changemanagement.hypershift.openshift.io/template-inputs"

/* np1's requested inputs as the cache has them (decide_pool_inputs_fp()). */
static uint64_t np1_inputs(ctl_controller_t *c)
{
    decide_view_t v;
    decide_ref_t np, hc;
    ctl_view_init(c, false, &v);
    assert_true(v.get(v.ud, DECIDE_NP, "clusters", "np1", &np));
    assert_true(v.get(v.ud, DECIDE_HC, "clusters", "a", &hc));
    return decide_pool_inputs_fp(np.data, hc.data);
}

/* md (JSON text) with annotation key set to value: new text (free()). */
static char *with_ann(const char *md, const char *key, const char *value)
{
    json_t *doc = tu_doc(md);
    json_object_set_new(hcp_json_path(doc, "metadata.annotations"), key, json_string(value));
    char *text = json_dumps(doc, JSON_COMPACT);
    json_decref(doc);
    return text;
}

/* md made from the inputs fp (DECIDE_TEMPLATE_INPUTS_ANNOTATION). */
static char *with_inputs(const char *md, uint64_t fp)
{
    char hex[17];
    decide_inputs_format(fp, hex);
    return with_ann(md, INPUTS_ANN, hex);
}

/* Tuesday: HyperShift points np1 at new user data that no request carries
 * (its operator changed what goes into the ignition payload): admitted with
 * OnDelete and the record in the same write; its next writes of its
 * strategy are answered with OnDelete kept; a write that drops the record
 * gets it back. A release, or the pool's own OnDelete, is no drift. */
static void drift_restricted(adm_router_t *r, ctl_controller_t *c)
{
    uint64_t fp = np1_inputs(c);
    char hex[17];
    decide_inputs_format(fp, hex);
    char *old1 = with_inputs(MD_NP1_V1("ud-1", "RollingUpdate", ""), fp);
    char *new2 = with_inputs(MD_NP1_V1("ud-2", "RollingUpdate", ""), fp);
    char *other1 = with_inputs(MD_NP1_V1("ud-1", "RollingUpdate", ""), fp ^ 0xff);

    /* Made from other inputs than the pool's now (a request changed them:
     * the HostedCluster's fields a PermissiveUntil override applied), or
     * not known: a requested template, which passes; the inputs it is made
     * from are noted. */
    answer_t a = md_update(r, other1, new2);
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "RollingUpdate");
    assert_null(ann(a.stored, DRIFT_ANN));
    assert_string_equal(ann(a.stored, INPUTS_ANN), hex);
    json_decref(a.stored);
    a = md_update(r, MD_NP1_V1("ud-1", "RollingUpdate", ""), MD_NP1_V1("ud-2", "RollingUpdate", ""));
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "RollingUpdate");
    assert_null(ann(a.stored, DRIFT_ANN));
    assert_string_equal(ann(a.stored, INPUTS_ANN), hex);
    json_decref(a.stored);

    /* Made from the same inputs: drift. */
    a = md_update(r, old1, new2);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.template.spec.bootstrap.dataSecretName"), "ud-2");
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "OnDelete");
    assert_int_equal(json_integer_value(hcp_json_path(a.stored, "spec.strategy.rollingUpdate.maxSurge")), 1);
    json_t *rec = json_loads(ann(a.stored, DRIFT_ANN), 0, NULL);
    assert_non_null(rec);
    assert_string_equal(str_at(rec, "strategy"), "RollingUpdate");
    assert_string_equal(str_at(rec, "input"), "user data ud-1 -> ud-2");
    assert_string_equal(str_at(rec, "since"), "2026-03-03T12:00:00Z");
    assert_string_equal(str_at(rec, "inputs"), hex);
    json_decref(rec);
    assert_non_null(strstr(a.warning, "HyperShift made by itself (user data ud-1 -> ud-2)"));
    assert_non_null(strstr(a.warning, "OnDelete until 2026-03-07T01:00:00Z"));
    char *held = json_dumps(a.stored, JSON_COMPACT);
    json_decref(a.stored);

    /* HyperShift's next pass writes its strategy again: kept at OnDelete,
     * so the API server stores nothing new, and nothing to tell it. */
    static const char *const hs[] = {"system:serviceaccount:hypershift:operator", NULL};
    c->opts.hypershift_users = hs;
    json_t *again = json_loads(held, 0, NULL);
    json_object_set_new(json_object_get(hcp_json_path(again, "spec"), "strategy"), "type",
                        json_string("RollingUpdate"));
    char *again_text = json_dumps(again, JSON_COMPACT);
    a = md_update_by(r, hs[0], held, again_text);
    assert_int_equal(a.nops, 1);
    json_t *before = json_loads(held, 0, NULL);
    assert_true(json_equal(a.stored, before));
    json_decref(before);
    assert_int_equal(a.nwarnings, 0);
    json_decref(a.stored);
    /* Anyone else's strategy (kubectl patch, an apply) is kept too, and
     * told what happens to it and how to let the drift through now. */
    a = md_update_by(r, "alice", held, again_text);
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "OnDelete");
    assert_string_equal(a.warning,
                        "strategy RollingUpdate: OnDelete is kept until 2026-03-07T01:00:00Z "
                        "while HyperShift's own configuration update is held, then RollingUpdate "
                        "is written back; a PermissiveUntil override on the NodePool lets it "
                        "through now");
    json_decref(a.stored);
    c->opts.hypershift_users = NULL;
    /* A full-object write without the record (a GitOps tool's): put back. */
    json_object_del(hcp_json_path(again, "metadata.annotations"), DRIFT_ANN);
    free(again_text);
    again_text = json_dumps(again, JSON_COMPACT);
    a = md_update(r, held, again_text);
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "OnDelete");
    assert_non_null(strstr(ann(a.stored, DRIFT_ANN), "user data ud-1 -> ud-2"));
    json_decref(a.stored);
    free(again_text);
    json_decref(again);
    free(held);

    /* A release on the MachineDeployment is no drift (the NodePool's,
     * held there): nothing of it is changed here. */
    json_t *rel = json_loads(new2, 0, NULL);
    json_object_set_new(hcp_json_path(rel, "spec.template.spec"), "version", json_string("4.17.1"));
    char *rel_text = json_dumps(rel, JSON_COMPACT);
    a = md_update(r, old1, rel_text);
    assert_int_equal(a.nops, 0);
    assert_null(ann(a.stored, DRIFT_ANN));
    json_decref(a.stored);
    free(rel_text);
    json_decref(rel);

    /* The pool's own OnDelete replaces nothing: nothing to hold. */
    char *od1 = with_inputs(MD_NP1_V1("ud-1", "OnDelete", ""), fp);
    char *od2 = with_inputs(MD_NP1_V1("ud-2", "OnDelete", ""), fp);
    a = md_update(r, od1, od2);
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
    free(od1);
    free(od2);

    /* A requested template over a held drift: it goes as requested, the
     * record with it. */
    char *held_other = with_ann(MD_NP1_V1("ud-2", "OnDelete", DRIFT_REC), INPUTS_ANN, "00000000000000ff");
    char *hs3 = with_ann(MD_NP1_V1("ud-3", "RollingUpdate", DRIFT_REC), INPUTS_ANN, "00000000000000ff");
    a = md_update(r, held_other, hs3);
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "RollingUpdate");
    assert_null(ann(a.stored, DRIFT_ANN));
    assert_string_equal(ann(a.stored, INPUTS_ANN), hex);
    json_decref(a.stored);
    free(held_other);
    free(hs3);

    /* v1beta2 (spec.rollout.strategy), with and without a rollout block. */
    char *v2old = with_inputs(
        "{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\"," OBJ_META("MachineDeployment",
        "clusters-a", "np1") ",\"annotations\":{\"hypershift.openshift.io/nodePool\":"
        "\"clusters/np1\"}},\"spec\":{\"template\":{\"spec\":{\"version\":\"4.17.0\","
        "\"infrastructureRef\":{\"name\":\"mt-1\"}}}}}", fp);
    a = md_update(r, v2old,
               "{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\"," OBJ_META("MachineDeployment",
               "clusters-a", "np1") ",\"annotations\":{\"hypershift.openshift.io/nodePool\":"
               "\"clusters/np1\"}},\"spec\":{\"template\":{\"spec\":{\"version\":\"4.17.0\","
               "\"infrastructureRef\":{\"name\":\"mt-2\"}}}}}");
    assert_string_equal(str_at(a.stored, "spec.rollout.strategy.type"), "OnDelete");
    assert_non_null(strstr(ann(a.stored, DRIFT_ANN), "machine template mt-1 -> mt-2"));
    json_decref(a.stored);
    free(v2old);
    free(old1);
    free(new2);
    free(other1);
}

static void test_drift_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", drift_restricted);
}

/* Saturday, in the window: HyperShift's write of its own strategy lets the
 * held drift through and drops the record; a write that keeps OnDelete
 * (someone's label) leaves it to the controller's release. */
static void drift_permitted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = md_update(r, MD_NP1_V1("ud-2", "OnDelete", DRIFT_REC),
                        MD_NP1_V1("ud-2", "RollingUpdate", DRIFT_REC));
    assert_int_equal(a.nops, 1);
    assert_string_equal(str_at(a.stored, "spec.strategy.type"), "RollingUpdate");
    assert_null(ann(a.stored, DRIFT_ANN));
    json_decref(a.stored);
    a = md_update(r, MD_NP1_V1("ud-2", "OnDelete", DRIFT_REC),
               MD_NP1_V1("ud-2", "OnDelete", DRIFT_REC ",\"x\":\"y\""));
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);
}

static void test_drift_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", drift_permitted);
}

/* The plan of a pool holding a drift: pending and blocked until the window,
 * not rolling (no pause, no backstop), named in ChangesPending and the
 * companion; in the window, one write: HyperShift's strategy back and the
 * record dropped, on the version read, before any other. */
static void drift_plan(ctl_controller_t *c, bool window)
{
    decide_plan_t p;
    decide_writes_t ws;
    plan_np1_at(c, MD_NP1_V1("ud-2", "OnDelete", DRIFT_REC), "10", &p);
    assert_true(p.d.drift);
    assert_non_null(strstr(p.d.held, "HyperShift configuration update: user data ud-1 -> ud-2"));
    assert_false(((const decide_capi_t *)p.capi.data)->rolling);
    assert_false(p.d.pause_wanted);
    assert_int_equal(decide_writes(&p, ctl_clock_now(&c->opts.clock, c->loop), &ws), 0);
    if (!window) {
        assert_int_equal(p.d.pending_metric, 2);
        assert_non_null(strstr(p.d.pending_message, "The held change (HyperShift configuration "
                                                     "update: user data ud-1 -> ud-2;"));
        assert_string_equal(str_at(p.status_doc, "heldChange.summary"),
                            "HyperShift configuration update");
        assert_non_null(strstr(str_at(p.status_doc, "heldChange.change"), "ud-1 -> ud-2"));
        assert_false(decide_releases_held(&p));
        for (int i = 0; i < ws.n; i++)
            assert_false(ws.w[i].first);
    } else {
        assert_true(decide_releases_held(&p));
        assert_true(ws.n >= 1); /* and the NodePool's opt-in label, not a release */
        for (int i = 1; i < ws.n; i++)
            assert_false(ws.w[i].first);
        assert_true(ws.w[0].first);
        assert_int_equal(ws.w[0].target, DECIDE_WRITE_CAPI);
        assert_string_equal(str_at(ws.w[0].patch, "spec.strategy.type"), "RollingUpdate");
        assert_true(json_is_null(
            json_object_get(hcp_json_path(ws.w[0].patch, "metadata.annotations"), DRIFT_ANN)));
        assert_string_equal(str_at(ws.w[0].patch, "metadata.resourceVersion"), "10");
    }
    decide_writes_free(&ws);
    decide_plan_free(&p);
}

static void drift_plan_restricted(adm_router_t *r, ctl_controller_t *c)
{
    (void)r;
    drift_plan(c, false);
}

static void drift_plan_window(adm_router_t *r, ctl_controller_t *c)
{
    (void)r;
    drift_plan(c, true);
}

/* Tuesday: a drift held whose record names other inputs than the pool's
 * now (the webhook's cache had not seen the request that made the
 * template) is let through at once, as the request was; a settled pool's
 * MachineDeployment without the inputs of its template gets them. */
static void drift_plan_corrected(adm_router_t *r, ctl_controller_t *c)
{
    decide_plan_t p;
    decide_writes_t ws;
    char hex[17], *md;
    (void)r;
    decide_inputs_format(np1_inputs(c), hex);

    md = with_ann(MD_NP1_V1("ud-2", "OnDelete", ""), DRIFT_ANN,
                  "{\"input\":\"user data ud-1 -> ud-2\",\"inputs\":\"00000000000000ff\","
                  "\"strategy\":\"RollingUpdate\"}");
    plan_np1_at(c, md, "10", &p);
    free(md);
    assert_true(p.d.restricted);
    assert_true(decide_releases_held(&p));
    assert_int_equal(decide_writes(&p, ctl_clock_now(&c->opts.clock, c->loop), &ws), 0);
    assert_true(ws.n >= 1);
    assert_true(ws.w[0].first);
    assert_string_equal(str_at(ws.w[0].patch, "spec.strategy.type"), "RollingUpdate");
    assert_string_equal(json_string_value(json_object_get(
                            hcp_json_path(ws.w[0].patch, "metadata.annotations"), INPUTS_ANN)),
                        hex);
    decide_writes_free(&ws);
    decide_plan_free(&p);

    /* The same record naming the pool's inputs now: held. */
    char rec[256];
    snprintf(rec, sizeof(rec),
             "{\"input\":\"user data ud-1 -> ud-2\",\"inputs\":\"%s\",\"strategy\":"
             "\"RollingUpdate\"}", hex);
    md = with_ann(MD_NP1_V1("ud-2", "OnDelete", ""), DRIFT_ANN, rec);
    plan_np1_at(c, md, "11", &p);
    free(md);
    assert_false(decide_releases_held(&p));
    decide_plan_free(&p);
}

static void drift_seed(adm_router_t *r, ctl_controller_t *c)
{
    decide_plan_t p;
    decide_writes_t ws;
    char hex[17];
    (void)r;
    decide_inputs_format(np1_inputs(c), hex);
    plan_np1(c, MD_NP1_DONE(""), &p);
    assert_false(p.d.pending);
    assert_int_equal(decide_writes(&p, ctl_clock_now(&c->opts.clock, c->loop), &ws), 0);
    const char *seeded = NULL;
    for (int i = 0; i < ws.n; i++)
        if (ws.w[i].target == DECIDE_WRITE_CAPI)
            seeded = json_string_value(json_object_get(
                hcp_json_path(ws.w[i].patch, "metadata.annotations"), INPUTS_ANN));
    assert_non_null(seeded);
    assert_string_equal(seeded, hex);
    decide_writes_free(&ws);
    decide_plan_free(&p);
}

static void test_drift_plan(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", drift_plan_restricted);
    with_router("2026-03-07T02:00:00Z", drift_plan_window);
    with_router("2026-03-03T12:00:00Z", drift_plan_corrected);
    with_router("2026-03-03T12:00:00Z", drift_seed);
}

/* ---- the NodePool hold ------------------------------------------------------- */

#define NP1_OLD                                                                            \
    "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND "}},"  \
    "\"spec\":{\"clusterName\":\"a\",\"replicas\":3,\"release\":{\"image\":\"r:1\"},"        \
    "\"config\":[{\"name\":\"c1\"}],\"platform\":{\"type\":\"AWS\",\"aws\":{"           \
    "\"instanceType\":\"m5\",\"resourceTags\":[{\"key\":\"a\",\"value\":\"1\"}]}}}}"
/* A GitOps apply: a new release, configuration, tuning and instance type,
 * new tags (no rollout) and a scale from 3 to 5. */
#define NP1_APPLY                                                                          \
    "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND "}},"  \
    "\"spec\":{\"clusterName\":\"a\",\"replicas\":5,\"release\":{\"image\":\"r:2\"},"        \
    "\"config\":[{\"name\":\"c2\"}],\"tuningConfig\":[{\"name\":\"t1\"}],"               \
    "\"platform\":{\"type\":\"AWS\",\"aws\":{\"instanceType\":\"m6\","                   \
    "\"resourceTags\":[{\"key\":\"a\",\"value\":\"2\"}]}}}}"
#define NP1_REQUEST                                                                        \
    "{\"config\":[{\"name\":\"c2\"}],\"platform\":{\"aws\":{\"instanceType\":\"m6\"}},"     \
    "\"release\":{\"image\":\"r:2\"},\"tuningConfig\":[{\"name\":\"t1\"}]}"

static answer_t np_update(adm_router_t *r, const char *old, const char *new_obj)
{
    return update(r, ADM_WEBHOOK_NODEPOOLS, HS_GROUP, "nodepools", "clusters", "np1", old,
                  new_obj);
}

/* Tuesday: every rollout-triggering field stays as it runs, the request is
 * recorded as a merge patch of spec; the scale and the tags go through. */
static void np_restricted(adm_router_t *r, ctl_controller_t *c)
{
    answer_t a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_string_equal(str_at(json_array_get(hcp_json_path(a.stored, "spec.config"), 0),
                               "name"),
                        "c1");
    assert_null(hcp_json_path(a.stored, "spec.tuningConfig"));
    assert_string_equal(str_at(a.stored, "spec.platform.aws.instanceType"), "m5");
    assert_string_equal(str_at(json_array_get(hcp_json_path(a.stored,
                                                            "spec.platform.aws.resourceTags"),
                                              0),
                               "value"),
                        "2");
    assert_int_equal(json_integer_value(hcp_json_path(a.stored, "spec.replicas")), 5);
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION), NP1_REQUEST);
    assert_non_null(strstr(a.warning, "spec.release, spec.config, spec.tuningConfig, "
                                      "spec.platform.aws.instanceType: held until"));
    /* It fits the API server's 256 characters whole: parts that do not
     * fit are left out, none is cut (here where the request is recorded). */
    assert_true(strlen(a.warning) <= ADM_WARNING_MAX);
    assert_true(a.warning[strlen(a.warning) - 1] == ')' ||
                strstr(a.warning, DECIDE_REQUESTED_NODEPOOL_ANNOTATION) != NULL);

    /* The same apply again (GitOps re-syncs) onto what was stored: the
     * same answer, nothing new recorded (no write loop). */
    char *stored = json_dumps(a.stored, JSON_COMPACT);
    json_t *again = tu_doc(NP1_APPLY);
    json_object_set(json_object_get(again, "metadata"), "annotations",
                    hcp_json_path(a.stored, "metadata.annotations"));
    char *again_text = json_dumps(again, JSON_COMPACT);
    answer_t b = np_update(r, stored, again_text);
    assert_true(json_equal(a.stored, b.stored));
    json_decref(b.stored);

    /* A later request for the release joins the record; the rest stays. */
    json_object_set_new(hcp_json_path(again, "spec.release"), "image", json_string("r:3"));
    free(again_text);
    again_text = json_dumps(again, JSON_COMPACT);
    b = np_update(r, stored, again_text);
    assert_string_equal(str_at(b.stored, "spec.release.image"), "r:1");
    json_t *rec = tu_doc(ann(b.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION));
    assert_string_equal(str_at(rec, "release.image"), "r:3");
    assert_string_equal(str_at(rec, "platform.aws.instanceType"), "m6");
    json_decref(rec);
    json_decref(b.stored);

    /* The held request is a pending change that names itself; the
     * controller's patch at the window applies exactly the record. */
    decide_np_t *np = decide_np_extract(a.stored);
    assert_true(decide_np_held(np));
    assert_true(decide_np_pending(np, NULL));
    assert_string_equal(np->requested_summary, "release r:2, config, platform, tuningConfig");
    json_t *rp = decide_np_request_patch(np, "8");
    assert_true(json_equal(json_object_get(rp, "spec"), np->requested));
    assert_true(json_is_null(json_object_get(hcp_json_path(rp, "metadata.annotations"),
                                             DECIDE_REQUESTED_NODEPOOL_ANNOTATION)));
    assert_string_equal(str_at(rp, "metadata.resourceVersion"), "8");
    json_decref(rp);
    decide_np_free(np);

    json_object_set_new(json_object_get(a.stored, "metadata"), "resourceVersion",
                        json_string("8"));
    char *stored8 = json_dumps(a.stored, JSON_COMPACT);
    add_object(&c->nps, stored8);
    free(stored8);
    decide_plan_t p;
    plan_np1(c, MD_NP1_DONE(""), &p);
    assert_true(p.d.pending);
    assert_int_equal(p.d.pending_metric, 2);
    assert_string_equal(p.d.pending_reason, "ChangesBlocked");
    assert_non_null(strstr(p.d.pending_message,
                           "The held change (release r:2, config, platform, tuningConfig) waits "
                           "for the next permitted window at 2026-03-07T01:00:00Z"));
    assert_string_equal(str_at(p.status_doc, "heldChange.summary"),
                        "node rollout to release r:2, config, platform, tuningConfig");
    assert_string_equal(str_at(p.status_doc, "heldChange.nodePoolSpec.release.image"), "r:2");
    assert_false(p.d.pause_wanted); /* merely waiting: scaling and remediation go on */
    decide_plan_free(&p);

    json_decref(again);
    free(again_text);
    free(stored);
    json_decref(a.stored);

    /* A write that drops the annotation withdraws the request. */
    a = np_update(r, "{\"metadata\":{\"annotations\":{\"" DECIDE_REQUESTED_NODEPOOL_ANNOTATION
                     "\":\"{}\"}},\"spec\":{\"release\":{\"image\":\"r:1\"}}}",
                  "{\"metadata\":{},\"spec\":{\"release\":{\"image\":\"r:1\"}}}");
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);

    /* A field removed while restricted stays; its removal is recorded as
     * null (a merge patch deletes it at the window). */
    a = np_update(r, NP1_OLD,
                  "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND
                  "}},\"spec\":{\"clusterName\":\"a\",\"replicas\":3,\"release\":{"
                  "\"image\":\"r:1\"},\"platform\":{\"type\":\"AWS\",\"aws\":{"
                  "\"instanceType\":\"m5\",\"resourceTags\":[{\"key\":\"a\",\"value\":\"1\"}]}}}}");
    assert_string_equal(str_at(json_array_get(hcp_json_path(a.stored, "spec.config"), 0),
                               "name"),
                        "c1");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION), "{\"config\":null}");
    json_decref(a.stored);
}

static void test_nodepool_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", np_restricted);
}

/* In the window: the write passes; a recorded field the write sets itself
 * leaves the record (the newer request wins), the others stay for the
 * controller to apply. */
static void np_permitted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_int_equal(a.nops, 0);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    json_decref(a.stored);

    a = np_update(r,
                  "{\"metadata\":{\"annotations\":{\"" DECIDE_REQUESTED_NODEPOOL_ANNOTATION
                  "\":\"{\\\"config\\\":[],\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"
                  "\"spec\":{\"release\":{\"image\":\"r:1\"}}}",
                  "{\"metadata\":{\"annotations\":{\"" DECIDE_REQUESTED_NODEPOOL_ANNOTATION
                  "\":\"{\\\"config\\\":[],\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"
                  "\"spec\":{\"release\":{\"image\":\"r:5\"}}}");
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:5");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION), "{\"config\":[]}");
    json_decref(a.stored);
}

static void test_nodepool_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", np_permitted);
}

/* DESIGN.md 3.15: with a pre-start check for the worker nodes, a NodePool
 * change asked for in an open window is held until the checks allow it,
 * the scale and the tags going through; a write that changes none of the
 * held fields holds nothing; a standby, which knows no answer, lets it
 * pass; a check for the control plane alone holds no pool. */
static void np_in_window_checks(adm_router_t *r, ctl_controller_t *c)
{
    check_runner_t run;
    testutil_ctl_checks_on(c, &run, CHECK_WORKER_NODES);

    answer_t a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_string_equal(str_at(a.stored, "spec.platform.aws.instanceType"), "m5");
    assert_int_equal(json_integer_value(hcp_json_path(a.stored, "spec.replicas")), 5);
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION), NP1_REQUEST);
    assert_string_equal(a.warning, "spec.release, spec.config, spec.tuningConfig, "
                                   "spec.platform.aws.instanceType: held until the pre-start "
                                   "checks allow it");
    json_decref(a.stored);

    a = np_update(r, NP1_OLD,
                  "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND
                  "}},\"spec\":{\"clusterName\":\"a\",\"replicas\":4,\"release\":{\"image\":"
                  "\"r:1\"},\"config\":[{\"name\":\"c1\"}],\"platform\":{\"type\":\"AWS\","
                  "\"aws\":{\"instanceType\":\"m5\",\"resourceTags\":[{\"key\":\"a\","
                  "\"value\":\"1\"}]}}}}");
    assert_int_equal(a.nops, 0); /* a scale alone: nothing held */
    json_decref(a.stored);

    c->leading = false; /* a standby knows no answer: it passes */
    a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_int_equal(a.nops, 0);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    json_decref(a.stored);

    c->leading = true; /* a check for the control plane only: the pool passes */
    run.cfg.checks[0].systems = CHECK_CONTROL_PLANE;
    a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_int_equal(a.nops, 0);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    json_decref(a.stored);
    testutil_ctl_checks_off(c, &run);
}

static void test_nodepool_in_window_checks(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", np_in_window_checks);
}

/* The window closes while the loop is busy (a day a real second here, so
 * 50 ms are 72 minutes): a request answered after the close is held, even
 * though the loop's iteration began inside the window. */
static void np_after_busy_close(adm_router_t *r, ctl_controller_t *c)
{
    c->opts.clock.scale = 86400.0;
    c->opts.clock.real0 = ev_now(c->loop);
    struct timespec busy = {0, 50 * 1000 * 1000};
    while (nanosleep(&busy, &busy) != 0)
        ;
    answer_t a = np_update(r, NP1_OLD, NP1_APPLY);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_NODEPOOL_ANNOTATION), NP1_REQUEST);
    json_decref(a.stored);
}

static void test_nodepool_after_busy_close(void **state)
{
    (void)state;
    with_router("2026-03-07T04:59:59Z", np_after_busy_close);
}

static void test_held_template_pending(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", md_held_pending);
}

static void test_workers_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", md_permitted);
}

/* ---- who asked for a held NodePool change (DESIGN.md 3.11) ------------------ */

#define REASON_ANN "\"changemanagement.hypershift.openshift.io/reason\":\"CVE-2026-1234\""
/* NP1_APPLY with the writer's reason annotation. */
#define NP1_APPLY_REASON                                                                   \
    "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND ","       \
    REASON_ANN "}},\"spec\":{\"clusterName\":\"a\",\"replicas\":3,\"release\":{"           \
    "\"image\":\"r:2\"},\"config\":[{\"name\":\"c1\"}],\"platform\":{\"type\":\"AWS\","     \
    "\"aws\":{\"instanceType\":\"m5\",\"resourceTags\":[{\"key\":\"a\",\"value\":\"1\"}]}}}}"

static answer_t np_update_by(adm_router_t *r, const char *user, const char *old,
                             const char *new_obj)
{
    static const char *const groups[] = {"system:authenticated", "sre-team", NULL};
    testutil_review_t q = {.path = ADM_WEBHOOK_NODEPOOLS, .op = "UPDATE", .group = HS_GROUP,
                           .resource = "nodepools", .ns = "clusters", .name = "np1",
                           .user = user, .groups = groups, .object = new_obj,
                           .old_object = old};
    return testutil_ctl_answer(r, &q);
}

/* Tuesday: the held request records who (userInfo.username and nothing
 * else of userInfo), when and why, in the write admitted; the companion
 * and the plan read it back. A write that holds nothing cannot forge or
 * drop the record. */
static void np_audit_restricted(adm_router_t *r, ctl_controller_t *c)
{
    answer_t a = np_update_by(r, "alice@example.com", NP1_OLD, NP1_APPLY_REASON);
    assert_true(a.allowed);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:1");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_BY_ANNOTATION), "alice@example.com");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_AT_ANNOTATION), "2026-03-03T12:00:00Z");
    assert_string_equal(ann(a.stored, DECIDE_REQUESTED_REASON_ANNOTATION), "CVE-2026-1234");
    /* Nothing else of userInfo: no annotation names a group. */
    char *text = json_dumps(a.stored, JSON_COMPACT);
    assert_null(strstr(text, "sre-team"));
    free(text);

    /* The companion (heldRequest) and the plan read the record back. */
    json_object_set_new(json_object_get(a.stored, "metadata"), "resourceVersion",
                        json_string("8"));
    char *stored = json_dumps(a.stored, JSON_COMPACT);
    add_object(&c->nps, stored);
    decide_plan_t p;
    plan_np1(c, MD_NP1_DONE(""), &p);
    assert_string_equal(str_at(p.status_doc, "audit.heldRequest.by"), "alice@example.com");
    assert_string_equal(str_at(p.status_doc, "audit.heldRequest.at"), "2026-03-03T12:00:00Z");
    assert_string_equal(str_at(p.status_doc, "audit.heldRequest.reason"), "CVE-2026-1234");
    decide_plan_free(&p);

    /* A scale (nothing held) by someone else that rewrites the record: the
     * record is put back as it was. */
    json_t *forged = json_deep_copy(a.stored);
    json_object_set_new(hcp_json_path(forged, "metadata.annotations"),
                        DECIDE_REQUESTED_BY_ANNOTATION, json_string("mallory"));
    json_object_set_new(json_object_get(forged, "spec"), "replicas", json_integer(4));
    char *forged_text = json_dumps(forged, JSON_COMPACT);
    answer_t b = np_update_by(r, "mallory", stored, forged_text);
    assert_true(b.allowed);
    assert_string_equal(ann(b.stored, DECIDE_REQUESTED_BY_ANNOTATION), "alice@example.com");
    assert_int_equal(json_integer_value(hcp_json_path(b.stored, "spec.replicas")), 4);
    json_decref(b.stored);
    free(forged_text);
    json_decref(forged);
    free(stored);
    json_decref(a.stored);
}

static void test_nodepool_audit_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", np_audit_restricted);
}

/* In the window the request goes through: nothing is held, no request is
 * recorded. */
static void np_audit_permitted(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    answer_t a = np_update_by(r, "alice@example.com", NP1_OLD, NP1_APPLY_REASON);
    assert_string_equal(str_at(a.stored, "spec.release.image"), "r:2");
    assert_null(ann(a.stored, DECIDE_REQUESTED_BY_ANNOTATION));
    assert_null(ann(a.stored, DECIDE_REQUESTED_AT_ANNOTATION));
    json_decref(a.stored);
}

static void test_nodepool_audit_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", np_audit_permitted);
}

/* ---- ConfigMaps named by a NodePool's spec.config ---------------------------- */

#define CM(name, data)                                                                  \
    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"namespace\":\"clusters\"," \
    "\"name\":\"" name "\",\"labels\":{\"l\":\"1\"}},\"data\":{\"config\":\"" data "\"}}"

/* Sends a review of ConfigMap clusters/name; returns whether it was allowed,
 * with the refusal's message in msg. */
static bool cm_review(adm_router_t *r, const char *op, const char *name, const char *old,
                      const char *new_obj, char *msg, size_t len)
{
    testutil_review_t q = {.path = ADM_WEBHOOK_CONFIGMAPS, .op = op, .group = "",
                           .resource = "configmaps", .ns = "clusters", .name = name,
                           .object = new_obj, .old_object = old};
    json_t *resp = testutil_ctl_review(r, &q);
    bool allowed = json_is_true(json_object_get(resp, "allowed"));
    const char *m = str_at(resp, "status.message");
    snprintf(msg, len, "%s", m ? m : "");
    json_decref(resp);
    return allowed;
}

/* np3 (restricted on Tuesdays) names tuned; pool free-np of the cluster
 * without a stanza names shared. */
static void cm_setup(ctl_controller_t *c)
{
    add_object(&c->nps, "{" OBJ_META("NodePool", "clusters", "np3") ",\"annotations\":{"
                        BY_WEEKEND "}},\"spec\":{\"clusterName\":\"a\","
                        "\"config\":[{\"name\":\"other\"},{\"name\":\"tuned\"}]}}");
    add_object(&c->nps, "{" OBJ_META("NodePool", "clusters", "free-np") "},"
                        "\"spec\":{\"clusterName\":\"free\",\"config\":[{\"name\":\"shared\"}]}}");
}

static void cm_restricted(adm_router_t *r, ctl_controller_t *c)
{
    char msg[2048];

    cm_setup(c);
    assert_false(cm_review(r, "UPDATE", "tuned", CM("tuned", "a"), CM("tuned", "b"), msg,
                           sizeof(msg)));
    assert_non_null(strstr(msg, "ConfigMap tuned is named by spec.config of NodePool np3 "
                                "(changes restricted until 2026-03-07T01:00:00Z)"));
    assert_non_null(strstr(msg, "Create a new ConfigMap"));
    assert_false(cm_review(r, "DELETE", "tuned", CM("tuned", "a"), NULL, msg, sizeof(msg)));
    assert_non_null(strstr(msg, "Delete it in a window"));
    /* Metadata only; a ConfigMap no restricted pool names; another kind of
     * operation: all pass. */
    assert_true(cm_review(r, "UPDATE", "tuned", CM("tuned", "a"),
                          "{\"metadata\":{\"name\":\"tuned\",\"labels\":{\"l\":\"2\"}},"
                          "\"data\":{\"config\":\"a\"}}", msg, sizeof(msg)));
    assert_true(cm_review(r, "UPDATE", "shared", CM("shared", "a"), CM("shared", "b"), msg,
                          sizeof(msg)));
    assert_true(cm_review(r, "UPDATE", "tune", CM("tune", "a"), CM("tune", "b"), msg,
                          sizeof(msg)));
    assert_true(cm_review(r, "CREATE", "tuned", NULL, CM("tuned", "b"), msg, sizeof(msg)));
}

static void test_configmap_restricted(void **state)
{
    (void)state;
    with_router("2026-03-03T12:00:00Z", cm_restricted);
}

static void cm_permitted(adm_router_t *r, ctl_controller_t *c)
{
    char msg[2048];

    cm_setup(c);
    assert_true(cm_review(r, "UPDATE", "tuned", CM("tuned", "a"), CM("tuned", "b"), msg,
                          sizeof(msg)));
    assert_true(cm_review(r, "DELETE", "tuned", CM("tuned", "a"), NULL, msg, sizeof(msg)));
}

static void test_configmap_in_window(void **state)
{
    (void)state;
    with_router("2026-03-07T02:00:00Z", cm_permitted);
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hostedcluster_restricted),
        cmocka_unit_test(test_warnings_fit),
        cmocka_unit_test(test_hostedcluster_in_window),
        cmocka_unit_test(test_hostedcluster_in_window_checks),
        cmocka_unit_test(test_hc_fields_pool_restricted),
        cmocka_unit_test(test_hc_fields_all_open),
        cmocka_unit_test(test_hc_fields_in_window_checks),
        cmocka_unit_test(test_hc_fields_no_stanza_pool_restricted),
        cmocka_unit_test(test_hc_fields_no_stanza_pool_open),
        cmocka_unit_test(test_workers_restricted),
        cmocka_unit_test(test_workers_in_window),
        cmocka_unit_test(test_held_template_pending),
        cmocka_unit_test(test_drift_restricted),
        cmocka_unit_test(test_drift_in_window),
        cmocka_unit_test(test_drift_plan),
        cmocka_unit_test(test_nodepool_restricted),
        cmocka_unit_test(test_nodepool_in_window),
        cmocka_unit_test(test_nodepool_in_window_checks),
        cmocka_unit_test(test_nodepool_after_busy_close),
        cmocka_unit_test(test_nodepool_audit_restricted),
        cmocka_unit_test(test_nodepool_audit_in_window),
        cmocka_unit_test(test_configmap_restricted),
        cmocka_unit_test(test_configmap_in_window),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
