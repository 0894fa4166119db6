/* test_holds_skew.c: a control-plane release more minor versions ahead of
 * a NodePool of its HostedCluster than the guard rails' maxNodePoolSkew
 * allows is refused in the write that asks for it, naming the pools
 * (decide/skew.h); a z-stream, the controller's own write of a recorded
 * request, an exempt user and a release by digest are not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "admission/holds.h"
#include "admission/router.h"
#include "base/json.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/testutil_decide.h"
#include "policy/guard.h"

#define META TESTUTIL_OBJ_META
#define BY_WEEKEND TESTUTIL_BY_WEEKEND
#define IMG(v) "quay.io/openshift-release-dev/ocp-release:" v "-x86_64"
#define HC(release, extra)                                                                 \
    "{" META("HostedCluster", "clusters", "a") ",\"annotations\":{" BY_WEEKEND extra "}},"  \
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"" release "\"}}}"
#define ASKED ",\"changemanagement.hypershift.openshift.io/requested-release-image\":\"" IMG("4.21.0") "\""

typedef struct answer {
    bool allowed;
    int code;
    char msg[2048];
    char warning[1024];
} answer_t;

static answer_t review(adm_router_t *r, const char *user, const char *old, const char *new_obj)
{
    testutil_review_t q = {.path = ADM_WEBHOOK_HOSTEDCLUSTERS, .op = "UPDATE",
                           .group = HS_GROUP, .resource = "hostedclusters", .ns = "clusters",
                           .name = "a", .user = user, .object = new_obj, .old_object = old};
    json_t *resp = testutil_ctl_review(r, &q);
    answer_t a = {.allowed = json_is_true(json_object_get(resp, "allowed"))};
    const char *m = hcp_json_str(resp, "status.message");
    json_t *code = hcp_json_path(resp, "status.code");
    const char *w = json_string_value(json_array_get(json_object_get(resp, "warnings"), 0));
    snprintf(a.msg, sizeof(a.msg), "%s", m ? m : "");
    snprintf(a.warning, sizeof(a.warning), "%s", w ? w : "");
    a.code = code ? (int)json_integer_value(code) : 0;
    json_decref(resp);
    return a;
}

static void test_skew_at_admission(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    /* a Tuesday: HostedCluster a is restricted */
    ctl_controller_t *c = testutil_ctl_weekend(loop, tu_at("2026-03-03T10:00:00Z"));
    http_server srv;
    adm_router_t r;
    char err[256];
    guard_config_t g;

    /* np3 runs 4.17.3; np4 4.19.0; a pool of another cluster runs 4.12 (np1
     * and np2 report no version: not judged) */
    testutil_ctl_add(&c->nps, "{" META("NodePool", "clusters", "np3") ",\"annotations\":{"
                              BY_WEEKEND "}},\"spec\":{\"clusterName\":\"a\",\"release\":{"
                              "\"image\":\"" IMG("4.17.0") "\"}},\"status\":{\"version\":\"4.17.3\"}}");
    testutil_ctl_add(&c->nps, "{" META("NodePool", "clusters", "np4") "},\"spec\":{"
                              "\"clusterName\":\"a\",\"release\":{\"image\":\"" IMG("4.19.0") "\"}}}");
    testutil_ctl_add(&c->nps, "{" META("NodePool", "clusters", "other") "},\"spec\":{"
                              "\"clusterName\":\"b\",\"release\":{\"image\":\"" IMG("4.12.0") "\"}}}");
    http_server_init(&srv, NULL);
    adm_router_init(&r, &srv, false, NULL, NULL);
    assert_int_equal(adm_holds_register(&r, c), 0);

    /* 4.21 is four minors ahead of np3: refused, np3 named, np4 not */
    answer_t a = review(&r, "ocm", HC(IMG("4.17.3"), ""), HC(IMG("4.21.0"), ""));
    assert_false(a.allowed);
    assert_int_equal(a.code, 422);
    assert_non_null(strstr(a.msg, "spec.release.image: release 4.21.0 would leave NodePools"));
    assert_non_null(strstr(a.msg, "maxNodePoolSkew (3)"));
    assert_non_null(strstr(a.msg, "np3 runs 4.17.3 (4 minor versions behind)"));
    assert_null(strstr(a.msg, "np4"));
    assert_null(strstr(a.msg, "other"));
    /* 4.20: within reach, held as any release on a Tuesday */
    a = review(&r, "ocm", HC(IMG("4.17.3"), ""), HC(IMG("4.20.0"), ""));
    assert_true(a.allowed);
    assert_non_null(strstr(a.warning, "is held until"));
    /* the controller's write of the recorded request at the window is not
     * judged again (the pools only got newer since it was admitted) */
    a = review(&r, "system:serviceaccount:hcp:hcp-controller", HC(IMG("4.17.3"), ASKED),
               HC(IMG("4.21.0"), ASKED));
    assert_true(a.allowed);
    /* a release by digest: not judged, and the writer is told */
    a = review(&r, "ocm", HC(IMG("4.17.3"), ""), HC("quay.io/x@sha256:12", ""));
    assert_true(a.allowed);
    assert_non_null(strstr(a.warning, "the release's tag names no version"));

    /* the guard rails: a bound of 1 refuses 4.19 (np3 two behind); an
     * exempt user passes */
    json_t *rails = tu_doc("{\"maxNodePoolSkew\":\"1\",\"exemptUsers\":\"sre\"}");
    assert_int_equal(guard_config_parse(rails, &g, err, sizeof(err)), 0);
    json_decref(rails);
    ctl_set_guard(c, &g);
    a = review(&r, "ocm", HC(IMG("4.17.3"), ""), HC(IMG("4.19.0"), ""));
    assert_false(a.allowed);
    assert_non_null(strstr(a.msg, "maxNodePoolSkew (1)"));
    a = review(&r, "sre", HC(IMG("4.17.3"), ""), HC(IMG("4.19.0"), ""));
    assert_true(a.allowed);
    /* a z-stream of the running minor passes even beyond the bound */
    a = review(&r, "ocm", HC(IMG("4.19.0"), ""), HC(IMG("4.19.1"), ""));
    assert_true(a.allowed);

    ctl_stop(c);
    ev_loop_destroy(loop);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skew_at_admission),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
