/* test_holds_withdraw.c: a held request follows its owner's newest intent
 * (DESIGN.md 3.13), answered at admission. Each request goes through the
 * route table as the API server's would, with the options and
 * managedFields kube-apiserver v1.33 hands a webhook; the answer's patch
 * is applied to the request's object to see what would be stored: which
 * record goes, the withdrawal's audit record, and the warning the writer
 * reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admission/holds.h"
#include "admission/router.h"
#include "base/json.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/testutil_decide.h"

#define OBJ_META TESTUTIL_OBJ_META
#define BY_WEEKEND TESTUTIL_BY_WEEKEND
#define CM "changemanagement.hypershift.openshift.io/"
#define R0 "quay.io/openshift-release-dev/ocp-release:4.17.0-x86_64"
#define R1 "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"
#define R2 "quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64"
#define HYPERSHIFT "system:serviceaccount:hypershift:operator"
#define FLUX "system:serviceaccount:flux-system:kustomize-controller"
#define TUESDAY "2026-03-03T12:00:00Z"
#define SATURDAY "2026-03-07T02:00:00Z" /* inside the window */

static const char *const exempt[] = {HYPERSHIFT, NULL};

/* The options of a write by field manager m, as the API server hands them
 * to admission for an update, a patch and an apply alike. */
#define OPTS(m) "{\"kind\":\"UpdateOptions\",\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":\"" m "\"}"
/* managedFields with manager m's Apply entry owning spec fields `f`. */
#define APPLIED(m, f)                                                                    \
    ",\"managedFields\":[{\"manager\":\"" m "\",\"operation\":\"Apply\",\"apiVersion\":" \
    "\"hypershift.openshift.io/v1beta1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{"     \
    "\"f:spec\":{" f "}}}]"
#define OWNS_RELEASE "\"f:release\":{\"f:image\":{}}"
#define LA "\"kubectl.kubernetes.io/last-applied-configuration\":"

static void with_holds(const char *when, void (*fn)(adm_router_t *r, ctl_controller_t *c))
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c = testutil_ctl_weekend(loop, tu_at(when));
    http_server srv;
    adm_router_t r;

    c->opts.hypershift_users = exempt;
    /* The simulated clock all but stands still, so the instants stamped are
     * `when` however slowly the test runs (valgrind). */
    c->opts.clock.scale = 1e-6;
    http_server_init(&srv, NULL);
    adm_router_init(&r, &srv, false, NULL, NULL);
    assert_int_equal(adm_holds_register(&r, c), 0);
    fn(&r, c);
    ctl_stop(c);
    ev_loop_destroy(loop);
}

/* An UPDATE by user with options (NULL: none) through the hold of kind
 * ("hostedclusters" or "nodepools") of object name. */
static testutil_answer_t write_by(adm_router_t *r, const char *resource, const char *name,
                                  const char *user, const char *options, const char *old,
                                  const char *new_obj)
{
    testutil_review_t q = {.path = strcmp(resource, "nodepools") == 0 ? ADM_WEBHOOK_NODEPOOLS
                                                                      : ADM_WEBHOOK_HOSTEDCLUSTERS,
                           .op = "UPDATE", .group = CTL_HS_GROUP, .resource = resource,
                           .ns = "clusters", .name = name, .user = user, .object = new_obj,
                           .old_object = old, .options = options};
    return testutil_ctl_answer(r, &q);
}

static const char *ann(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(o, "metadata.annotations"), key));
}

/* ---- HostedCluster ------------------------------------------------------- */

/* HostedCluster a running R0, with the annotations (JSON members after the
 * stanza's) and metadata members `meta` (",\"managedFields\":..." or "")
 * given. */
#define HC(annotations, meta, spec)                                                      \
    "{" OBJ_META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND       \
    annotations "}" meta "},\"spec\":{\"infraID\":\"a-x1\"," spec "}}"
#define RUNS_R0 "\"release\":{\"image\":\"" R0 "\"}"
#define ASKED_R1 ",\"" CM "requested-release-image\":\"" R1 "\",\"" CM "requested-by\":\"ocm\",\"" CM \
                 "requested-at\":\"2026-03-02T09:00:00Z\""

/* A release held on Monday, reverted on Tuesday by a server-side apply of
 * the running release (Flux): the record goes, with who asked; who
 * withdrew, when and what is recorded; the writer is told in the answer. */
static void hc_ssa_revert(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    testutil_answer_t a = write_by(r, "hostedclusters", "a", FLUX, OPTS("kustomize-controller"),
                                   HC(ASKED_R1, "", RUNS_R0),
                                   HC(ASKED_R1, APPLIED("kustomize-controller", OWNS_RELEASE),
                                      RUNS_R0));
    assert_true(a.allowed);
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_null(ann(a.stored, CM "requested-release-image"));
    assert_null(ann(a.stored, CM "requested-by"));
    assert_null(ann(a.stored, CM "requested-at"));
    assert_string_equal(ann(a.stored, CM "withdrawn-by"), FLUX);
    assert_string_equal(ann(a.stored, CM "withdrawn-at"), TUESDAY);
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    assert_int_equal(a.nwarnings, 1);
    assert_string_equal(a.warnings[0],
                        "request for release 4.17.1 withdrawn: the write sets the running 4.17.0");
    json_decref(a.stored);
}

static void test_hc_ssa_revert(void **state)
{
    (void)state;
    with_holds(TUESDAY, hc_ssa_revert);
}

/* The control-plane release, reverted by a client-side apply (Argo CD's
 * default): last-applied held 4.17.1, now holds the running 4.17.0. The
 * release's record stays: the apply said nothing about it... it is not
 * in last-applied at all, so it is still held, and the writer is told. */
#define LA_CP(v) LA "\"{\\\"spec\\\":{\\\"controlPlaneRelease\\\":{\\\"image\\\":\\\"" v "\\\"}}}\""
#define CP_R0 ",\"controlPlaneRelease\":{\"image\":\"" R0 "\"}"
static void hc_csa_revert_cp(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    testutil_answer_t a = write_by(
        r, "hostedclusters", "a", "argocd", OPTS("argocd-controller"),
        HC(ASKED_R1 ",\"" CM "requested-control-plane-release-image\":\"" R1 "\"," LA_CP(R1), "",
           RUNS_R0 CP_R0),
        HC(ASKED_R1 ",\"" CM "requested-control-plane-release-image\":\"" R1 "\"," LA_CP(R0), "",
           RUNS_R0 CP_R0));
    assert_null(ann(a.stored, CM "requested-control-plane-release-image"));
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    assert_string_equal(ann(a.stored, CM "requested-by"), "ocm"); /* a request is left */
    assert_string_equal(ann(a.stored, CM "withdrawn"), "control-plane release 4.17.1");
    assert_int_equal(a.nwarnings, 2);
    assert_string_equal(a.warnings[1], "request for control-plane release 4.17.1 withdrawn: the "
                                       "write sets the running 4.17.0");
    assert_string_equal(a.warnings[0],
                        "request for release 4.17.1 is still held until 2026-03-07T01:00:00Z "
                        "(this write withdraws nothing); to withdraw it: kubectl annotate -n "
                        "clusters hostedcluster a " CM "requested-release-image-");
    json_decref(a.stored);
}

static void test_hc_csa_revert_cp(void **state)
{
    (void)state;
    with_holds(TUESDAY, hc_csa_revert_cp);
}

/* Writes that only carry the release along never withdraw it: a merge
 * patch of the running value (warned), HyperShift's full update with
 * every signal (not warned: HyperShift reads no warnings), and
 * HyperShift's update that drops the record (it is put back). */
static void hc_carried_along(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    const char *old = HC(ASKED_R1, "", RUNS_R0);
    testutil_answer_t a = write_by(r, "hostedclusters", "a", "alice", OPTS("kubectl-patch"), old,
                                   HC(ASKED_R1, "", RUNS_R0));
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    assert_null(ann(a.stored, CM "withdrawn-by"));
    assert_int_equal(a.nwarnings, 1);
    assert_non_null(strstr(a.warnings[0], "request for release 4.17.1 is still held until "
                                          "2026-03-07T01:00:00Z"));
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);

    a = write_by(r, "hostedclusters", "a", HYPERSHIFT, OPTS("hypershift-operator-manager"), old,
                 HC(ASKED_R1, APPLIED("hypershift-operator-manager", OWNS_RELEASE), RUNS_R0));
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    assert_int_equal(a.nwarnings, 0);
    assert_int_equal(a.nops, 0);
    json_decref(a.stored);

    /* A GitOps tool's re-apply of the requested release: held again, as
     * recorded; who asked and when stay (no new request). */
    a = write_by(r, "hostedclusters", "a", FLUX, OPTS("kustomize-controller"), old,
                 HC(ASKED_R1, APPLIED("kustomize-controller", OWNS_RELEASE),
                    "\"release\":{\"image\":\"" R1 "\"}"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    assert_string_equal(ann(a.stored, CM "requested-by"), "ocm");
    assert_string_equal(ann(a.stored, CM "requested-at"), "2026-03-02T09:00:00Z");
    assert_int_equal(a.nops, 2); /* the release kept; the record as it is */
    json_decref(a.stored);

    a = write_by(r, "hostedclusters", "a", HYPERSHIFT, OPTS("hypershift-operator-manager"), old,
                 HC(",\"" CM "requested-by\":\"ocm\",\"" CM "requested-at\":\"2026-03-02T09:00:00Z\"",
                    "", RUNS_R0));
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    assert_null(ann(a.stored, CM "withdrawn-by"));
    assert_int_equal(a.nwarnings, 0);
    json_decref(a.stored);
}

static void test_hc_carried_along(void **state)
{
    (void)state;
    with_holds(TUESDAY, hc_carried_along);
}

/* Removing the annotation by hand is a withdrawal too, recorded the same
 * way; a forged withdrawal record is put back. */
static void hc_by_hand(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    const char *old = HC(ASKED_R1, "", RUNS_R0);
    testutil_answer_t a = write_by(
        r, "hostedclusters", "a", "alice", OPTS("kubectl-annotate"), old,
        HC(",\"" CM "requested-by\":\"ocm\",\"" CM "requested-at\":\"2026-03-02T09:00:00Z\"", "",
           RUNS_R0));
    assert_null(ann(a.stored, CM "requested-release-image"));
    assert_null(ann(a.stored, CM "requested-by"));
    assert_string_equal(ann(a.stored, CM "withdrawn-by"), "alice");
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    assert_string_equal(a.warnings[0],
                        "request for release 4.17.1 withdrawn: the write removes its record");
    json_decref(a.stored);

    a = write_by(r, "hostedclusters", "a", "mallory", OPTS("kubectl-annotate"), old,
                 HC(ASKED_R1 ",\"" CM "withdrawn-by\":\"bob\"", "", RUNS_R0));
    assert_null(ann(a.stored, CM "withdrawn-by"));
    assert_string_equal(ann(a.stored, CM "requested-release-image"), R1);
    json_decref(a.stored);
}

static void test_hc_by_hand(void **state)
{
    (void)state;
    with_holds(TUESDAY, hc_by_hand);
}

#define PS_REC \
    ",\"" CM "requested-hostedcluster-spec\":\"{\\\"pullSecret\\\":{\\\"name\\\":\\\"ps2\\\"}}\""
/* The fields that roll every NodePool: one server-side apply withdraws the
 * pull secret's request and asks for another trust bundle, in one
 * computation: the record then holds the trust bundle alone. */
static void hc_fields_withdraw_and_request(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    testutil_answer_t a = write_by(
        r, "hostedclusters", "a", FLUX, OPTS("kustomize-controller"),
        HC(PS_REC, "", RUNS_R0 ",\"pullSecret\":{\"name\":\"ps\"},\"additionalTrustBundle\":{\"name\":\"tb\"}"),
        HC(PS_REC, APPLIED("kustomize-controller", "\"f:pullSecret\":{\"f:name\":{}},\"f:additionalTrustBundle\":{}"),
           RUNS_R0 ",\"pullSecret\":{\"name\":\"ps\"},\"additionalTrustBundle\":{\"name\":\"tb2\"}"));
    assert_string_equal(hcp_json_str(a.stored, "spec.pullSecret.name"), "ps");
    assert_string_equal(hcp_json_str(a.stored, "spec.additionalTrustBundle.name"), "tb");
    assert_string_equal(ann(a.stored, CM "requested-hostedcluster-spec"),
                        "{\"additionalTrustBundle\":{\"name\":\"tb2\"}}");
    assert_string_equal(ann(a.stored, CM "withdrawn"), "spec.pullSecret");
    assert_string_equal(ann(a.stored, CM "requested-by"), FLUX);
    assert_int_equal(a.nwarnings, 2);
    assert_string_equal(a.warnings[0],
                        "request for spec.pullSecret withdrawn: the write sets the running value");
    assert_non_null(strstr(a.warnings[1], "spec.additionalTrustBundle (rolls every NodePool)"));
    json_decref(a.stored);
}

static void test_hc_fields_withdraw_and_request(void **state)
{
    (void)state;
    with_holds(TUESDAY, hc_fields_withdraw_and_request);
}

/* In the window (the controller has not applied the request yet): a
 * revert withdraws it all the same, and a write of a third release
 * replaces it (the newer request wins, the write goes through). */
static void hc_in_window(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    const char *old = HC(ASKED_R1, "", RUNS_R0);
    testutil_answer_t a = write_by(r, "hostedclusters", "a", FLUX, OPTS("kustomize-controller"),
                                   old,
                                   HC(ASKED_R1, APPLIED("kustomize-controller", OWNS_RELEASE),
                                      RUNS_R0));
    assert_null(ann(a.stored, CM "requested-release-image"));
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    json_decref(a.stored);
    a = write_by(r, "hostedclusters", "a", "ocm", OPTS("kubectl-patch"), old,
                 HC(ASKED_R1, "", "\"release\":{\"image\":\"" R2 "\"}"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R2);
    assert_null(ann(a.stored, CM "requested-release-image"));
    assert_null(ann(a.stored, CM "withdrawn-by"));
    json_decref(a.stored);
}

static void test_hc_in_window(void **state)
{
    (void)state;
    with_holds(SATURDAY, hc_in_window);
}

/* ---- NodePool ------------------------------------------------------------ */

#define NP(annotations, meta, spec)                                                      \
    "{" OBJ_META("NodePool", "clusters", "np1") ",\"annotations\":{" BY_WEEKEND        \
    annotations "}" meta "},\"spec\":{\"clusterName\":\"a\",\"replicas\":3," spec "}}"
#define NP_RUNS "\"release\":{\"image\":\"" R0 "\"},\"config\":[{\"name\":\"c1\"}]"
#define NP_REC(json) ",\"" CM "requested-nodepool-spec\":\"" json "\""
#define REC_REL_CFG NP_REC("{\\\"config\\\":[{\\\"name\\\":\\\"c2\\\"}],\\\"release\\\":{\\\"image\\\":\\\"" R1 "\\\"}}")
#define REC_REL NP_REC("{\\\"release\\\":{\\\"image\\\":\\\"" R1 "\\\"}}")

/* A revert of the pool's release by server-side apply (kubectl's own
 * manager beside the GitOps tool's): the release leaves the record, the
 * config request stays and is told as still held. */
static void np_ssa_revert(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    testutil_answer_t a = write_by(r, "nodepools", "np1", "alice", OPTS("kubectl"),
                                   NP(REC_REL_CFG, "", NP_RUNS),
                                   NP(REC_REL_CFG, APPLIED("kubectl", "\"f:release\":{\"f:image\":{}}"),
                                      NP_RUNS));
    assert_string_equal(ann(a.stored, CM "requested-nodepool-spec"),
                        "{\"config\":[{\"name\":\"c2\"}]}");
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    assert_int_equal(a.nwarnings, 2);
    assert_string_equal(a.warnings[0],
                        "request for release 4.17.1 withdrawn: the write sets the running 4.17.0");
    assert_string_equal(a.warnings[1],
                        "request for spec.config is still held until 2026-03-07T01:00:00Z (this "
                        "write withdraws nothing); to withdraw it: kubectl annotate -n clusters "
                        "nodepool np1 " CM "requested-nodepool-spec-");
    json_decref(a.stored);
}

static void test_np_ssa_revert(void **state)
{
    (void)state;
    with_holds(TUESDAY, np_ssa_revert);
}

/* In the window, with a pre-start check of the worker nodes (DESIGN.md
 * 3.15): the request waits for the check, and follows its owner's newest
 * intent all the same: a server-side apply of the running release
 * withdraws it (the config stays asked), and a patch asking for a third
 * release replaces it in the record, held, rather than going through. */
static void np_in_window_checks(adm_router_t *r, ctl_controller_t *c)
{
    check_runner_t run;
    testutil_ctl_checks_on(c, &run, CHECK_WORKER_NODES);
    testutil_answer_t a = write_by(r, "nodepools", "np1", "alice", OPTS("kubectl"),
                                   NP(REC_REL_CFG, "", NP_RUNS),
                                   NP(REC_REL_CFG, APPLIED("kubectl", OWNS_RELEASE), NP_RUNS));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_string_equal(ann(a.stored, CM "requested-nodepool-spec"),
                        "{\"config\":[{\"name\":\"c2\"}]}");
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    json_decref(a.stored);

    a = write_by(r, "nodepools", "np1", "ocm", OPTS("kubectl-patch"), NP(REC_REL, "", NP_RUNS),
                 NP(REC_REL, "", "\"release\":{\"image\":\"" R2 "\"},\"config\":[{\"name\":\"c1\"}]"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_string_equal(ann(a.stored, CM "requested-nodepool-spec"),
                        "{\"release\":{\"image\":\"" R2 "\"}}");
    json_decref(a.stored);
    testutil_ctl_checks_off(c, &run);
}

static void test_np_in_window_checks(void **state)
{
    (void)state;
    with_holds(SATURDAY, np_in_window_checks);
}

/* One client-side apply reverts the release and asks for another config:
 * the release's request withdrawn, the config held, in the same answer. */
#define LA_NP(rel, cfg)                                                                     \
    LA "\"{\\\"spec\\\":{\\\"release\\\":{\\\"image\\\":\\\"" rel "\\\"},\\\"config\\\":[{"   \
       "\\\"name\\\":\\\"" cfg "\\\"}]}}\""
static void np_withdraw_and_request(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    testutil_answer_t a = write_by(
        r, "nodepools", "np1", "argocd", OPTS("kubectl-client-side-apply"),
        NP(REC_REL "," LA_NP(R1, "c1"), "", NP_RUNS),
        NP(REC_REL "," LA_NP(R0, "c3"), "",
           "\"release\":{\"image\":\"" R0 "\"},\"config\":[{\"name\":\"c3\"}]"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(hcp_json_path(a.stored, "spec.config"), 0), "name")),
                        "c1");
    assert_string_equal(ann(a.stored, CM "requested-nodepool-spec"),
                        "{\"config\":[{\"name\":\"c3\"}]}");
    assert_string_equal(ann(a.stored, CM "withdrawn"), "release 4.17.1");
    assert_string_equal(ann(a.stored, CM "requested-by"), "argocd");
    assert_int_equal(a.nwarnings, 2);
    assert_string_equal(a.warnings[0],
                        "request for release 4.17.1 withdrawn: the write sets the running 4.17.0");
    assert_non_null(strstr(a.warnings[1], "spec.config: held until changes are permitted"));
    json_decref(a.stored);
}

static void test_np_withdraw_and_request(void **state)
{
    (void)state;
    with_holds(TUESDAY, np_withdraw_and_request);
}

/* What cannot be told: a JSON patch of the running value and a label are
 * warned every time, and change nothing; a GitOps re-apply of the
 * requested value is held again and stores nothing new; HyperShift's
 * write is neither withdrawn nor warned. */
static void np_cannot_tell(adm_router_t *r, ctl_controller_t *c)
{
    (void)c;
    const char *old = NP(REC_REL, "", NP_RUNS);
    for (int i = 0; i < 2; i++) {
        testutil_answer_t a = write_by(r, "nodepools", "np1", "alice",
                                       OPTS("kubectl-patch"), old,
                                       i ? NP(REC_REL ",\"x\":\"y\"", "", NP_RUNS)
                                         : NP(REC_REL, "", NP_RUNS));
        assert_int_equal(a.nops, 0);
        assert_int_equal(a.nwarnings, 1);
        assert_string_equal(a.warnings[0],
                            "request for release 4.17.1 is still held until 2026-03-07T01:00:00Z "
                            "(this write withdraws nothing); to withdraw it: kubectl annotate -n "
                            "clusters nodepool np1 " CM "requested-nodepool-spec-");
        assert_true(strlen(a.warnings[0]) <= ADM_WARNING_MAX);
        json_decref(a.stored);
    }
    testutil_answer_t a = write_by(r, "nodepools", "np1", FLUX, OPTS("kustomize-controller"), old,
                                   NP(REC_REL, APPLIED("kustomize-controller", OWNS_RELEASE),
                                      "\"release\":{\"image\":\"" R1 "\"},\"config\":[{\"name\":\"c1\"}]"));
    assert_string_equal(hcp_json_str(a.stored, "spec.release.image"), R0);
    assert_string_equal(ann(a.stored, CM "requested-nodepool-spec"),
                        "{\"release\":{\"image\":\"" R1 "\"}}");
    assert_null(ann(a.stored, CM "withdrawn-by"));
    assert_null(ann(a.stored, CM "requested-by")); /* not a new request: nobody re-stamped */
    assert_int_equal(a.nops, 1);                   /* the release kept, nothing else */
    json_decref(a.stored);
    a = write_by(r, "nodepools", "np1", HYPERSHIFT, OPTS("hypershift"), old,
                 NP(REC_REL, APPLIED("hypershift", OWNS_RELEASE), NP_RUNS));
    assert_int_equal(a.nops, 0);
    assert_int_equal(a.nwarnings, 0);
    json_decref(a.stored);
}

static void test_np_cannot_tell(void **state)
{
    (void)state;
    with_holds(TUESDAY, np_cannot_tell);
}

/* The still-held warning with the longest pool name still fits whole,
 * the command that withdraws whole with it. */
#define LONG "a123456789b123456789c123456789d123456789e123456789f123456789xyz"
#define NP_LONG(annotations, spec)                                                         \
    "{" OBJ_META("NodePool", "clusters", LONG) ",\"annotations\":{" BY_WEEKEND annotations \
    "}},\"spec\":{\"clusterName\":\"a\",\"replicas\":3," spec "}}"
static void np_long_names(adm_router_t *r, ctl_controller_t *c)
{
    testutil_ctl_add(&c->nps, NP_LONG("", NP_RUNS));
    testutil_answer_t a = write_by(r, "nodepools", LONG, "alice", OPTS("kubectl-label"),
                                   NP_LONG(REC_REL, NP_RUNS), NP_LONG(REC_REL, NP_RUNS));
    assert_int_equal(a.nwarnings, 1);
    print_message("%zu bytes: %s\n", strlen(a.warnings[0]), a.warnings[0]);
    assert_true(strlen(a.warnings[0]) <= ADM_WARNING_MAX);
    assert_non_null(strstr(a.warnings[0], "request for release 4.17.1 is still held until "
                                          "2026-03-07T01:00:00Z"));
    assert_non_null(strstr(a.warnings[0], "; to withdraw it: kubectl annotate -n clusters "
                                          "nodepool " LONG " " CM "requested-nodepool-spec-"));
    json_decref(a.stored);
}

static void test_np_long_names(void **state)
{
    (void)state;
    with_holds(TUESDAY, np_long_names);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hc_ssa_revert),
        cmocka_unit_test(test_hc_csa_revert_cp),
        cmocka_unit_test(test_hc_carried_along),
        cmocka_unit_test(test_hc_by_hand),
        cmocka_unit_test(test_hc_fields_withdraw_and_request),
        cmocka_unit_test(test_hc_in_window),
        cmocka_unit_test(test_np_ssa_revert),
        cmocka_unit_test(test_np_in_window_checks),
        cmocka_unit_test(test_np_withdraw_and_request),
        cmocka_unit_test(test_np_cannot_tell),
        cmocka_unit_test(test_np_long_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
