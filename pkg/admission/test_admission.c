/*
 * Tests for pkg/admission: the AdmissionReview parser (every field it reads,
 * right and wrong), the answer (status, warnings, JSON Patch in base64),
 * JSON Pointers, and the router's answers for each kind of bad input under
 * both failure policies.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/admission.h"
#include "admission/router.h"

#define REVIEW_HEAD "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\","
#define HC_RESOURCE                                                                     \
    "\"resource\":{\"group\":\"hypershift.openshift.io\",\"version\":\"v1beta1\","     \
    "\"resource\":\"hostedclusters\"},\"kind\":{\"group\":\"hypershift.openshift.io\"," \
    "\"version\":\"v1beta1\",\"kind\":\"HostedCluster\"}"

static const char update_hc[] =
    REVIEW_HEAD "\"request\":{\"uid\":\"u-1\"," HC_RESOURCE
    ",\"namespace\":\"clusters\",\"name\":\"a\",\"operation\":\"UPDATE\","
    "\"userInfo\":{\"username\":\"system:serviceaccount:hypershift:operator\","
    "\"groups\":[\"system:serviceaccounts\",\"system:authenticated\"]},"
    "\"object\":{\"spec\":{\"release\":{\"image\":\"new\"}}},"
    "\"oldObject\":{\"spec\":{\"release\":{\"image\":\"old\"}}},\"dryRun\":false,"
    "\"options\":{\"kind\":\"UpdateOptions\",\"apiVersion\":\"meta.k8s.io/v1\","
    "\"fieldManager\":\"kustomize-controller\"}}}";

static int parse(const char *body, adm_request_t *q, char *err, size_t errlen)
{
    return adm_request_parse(body, strlen(body), q, err, errlen);
}

static void test_parse_update(void **state)
{
    adm_request_t q;
    char err[256] = "";

    (void)state;
    assert_int_equal(parse(update_hc, &q, err, sizeof(err)), 0);
    assert_string_equal(q.uid, "u-1");
    assert_string_equal(q.group, "hypershift.openshift.io");
    assert_string_equal(q.version, "v1beta1");
    assert_string_equal(q.resource, "hostedclusters");
    assert_string_equal(q.kind, "HostedCluster");
    assert_string_equal(q.subresource, "");
    assert_string_equal(q.ns, "clusters");
    assert_string_equal(q.name, "a");
    assert_string_equal(q.user, "system:serviceaccount:hypershift:operator");
    assert_int_equal(q.ngroups, 2);
    assert_string_equal(q.groups[0], "system:serviceaccounts");
    assert_string_equal(q.groups[1], "system:authenticated");
    assert_int_equal(q.op, ADM_UPDATE);
    assert_false(q.dry_run);
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(q.object, "spec"), "release"), "image")),
        "new");
    assert_non_null(q.old_object);
    /* request.options as the API server hands them for an update, a patch
     * and a server-side apply alike (withdraw.h reads fieldManager). */
    assert_string_equal(json_string_value(json_object_get(q.options, "fieldManager")),
                        "kustomize-controller");
    adm_request_free(&q);
    assert_null(q.options);
    adm_request_free(&q); /* twice is harmless */
}

/* Each wrong body: the code, the field named, and the uid kept when read. */
static void test_parse_errors(void **state)
{
    static const struct {
        const char *body, *want, *uid;
        int rc;
    } cases[] = {
        {"", "not JSON", "", HCP_EPARSE},
        {"{\"apiVersion\":", "not JSON", "", HCP_EPARSE},
        {"[1,2]", "not a JSON object", "", HCP_EPARSE},
        {"{\"request\":{\"uid\":\"x\"},\"request\":{}}", "not JSON", "", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":7}", "request: not an object", "", HCP_EPARSE},
        {REVIEW_HEAD "\"response\":{}}", "request: missing", "", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":5}}", "request.uid: not a string", "", HCP_EPARSE},
        {"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":\"AdmissionReview\","
         "\"request\":{\"uid\":\"u-2\"}}",
         "apiVersion: \"admission.k8s.io/v1beta1\" is not admission.k8s.io/v1", "u-2",
         HCP_EINVAL},
        {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Review\",\"request\":{\"uid\":"
         "\"u-3\"}}",
         "kind: \"Review\" is not AdmissionReview", "u-3", HCP_EINVAL},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-4\",\"operation\":\"PATCH\"}}",
         "request.operation: \"PATCH\" is not CREATE", "u-4", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-5\",\"operation\":\"CREATE\"}}",
         "request.resource: missing", "u-5", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-6\",\"operation\":\"CREATE\",\"resource\":{"
                     "\"version\":\"v1\"}}}",
         "request.resource.resource: missing", "u-6", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-7\",\"operation\":\"CREATE\"," HC_RESOURCE "}}",
         "request.object: missing for CREATE", "u-7", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-8\",\"operation\":\"UPDATE\"," HC_RESOURCE
                     ",\"object\":{}}}",
         "request.oldObject: missing for UPDATE", "u-8", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-9\",\"operation\":\"UPDATE\"," HC_RESOURCE
                     ",\"object\":[],\"oldObject\":{}}}",
         "request.object: not an object", "u-9", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-9o\",\"operation\":\"UPDATE\"," HC_RESOURCE
                     ",\"object\":{},\"oldObject\":{},\"options\":\"force\"}}",
         "request.options: not an object", "u-9o", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-10\",\"operation\":\"DELETE\"," HC_RESOURCE
                     ",\"dryRun\":\"yes\"}}",
         "request.dryRun: not a boolean", "u-10", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-11\",\"operation\":\"DELETE\"," HC_RESOURCE
                     ",\"name\":\"a\\u0000b\"}}",
         "not JSON: \\u0000 is not allowed", "", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-12\",\"operation\":\"DELETE\"," HC_RESOURCE
                     ",\"namespace\":\"" "0123456789012345678901234567890123456789012345678901234567890123"
                     "0123456789012345678901234567890123456789012345678901234567890123"
                     "0123456789012345678901234567890123456789012345678901234567890123"
                     "0123456789012345678901234567890123456789012345678901234567890123\"}}",
         "request.namespace: longer than 253 bytes", "u-12", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-13\",\"operation\":\"DELETE\"," HC_RESOURCE
                     ",\"userInfo\":{\"username\":\"a\",\"groups\":\"sre\"}}}",
         "request.userInfo.groups: not an array", "u-13", HCP_EPARSE},
        {REVIEW_HEAD "\"request\":{\"uid\":\"u-14\",\"operation\":\"DELETE\"," HC_RESOURCE
                     ",\"userInfo\":{\"groups\":[\"sre\",7]}}}",
         "request.userInfo.groups[1]: not a string", "u-14", HCP_EPARSE},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        adm_request_t q;
        char err[256] = "";
        int rc = parse(cases[i].body, &q, err, sizeof(err));
        if (rc != cases[i].rc || strstr(err, cases[i].want) == NULL ||
            strcmp(q.uid, cases[i].uid) != 0)
            fail_msg("case %zu: rc %d err \"%s\" uid \"%s\", want rc %d err \"%s\" uid \"%s\"",
                     i, rc, err, q.uid, cases[i].rc, cases[i].want, cases[i].uid);
        assert_null(q.object);
    }
}

static void test_pointer(void **state)
{
    char out[64];
    const char *const segs[] = {"metadata", "annotations", "cluster.x-k8s.io/paused", NULL};
    const char *const tilde[] = {"a~b/c", NULL};
    const char *const none[] = {NULL};

    (void)state;
    assert_int_equal(adm_pointer(out, sizeof(out), segs), 0);
    assert_string_equal(out, "/metadata/annotations/cluster.x-k8s.io~1paused");
    assert_int_equal(adm_pointer(out, sizeof(out), tilde), 0);
    assert_string_equal(out, "/a~0b~1c");
    assert_int_equal(adm_pointer(out, sizeof(out), none), 0);
    assert_string_equal(out, "");
    assert_int_equal(adm_pointer(out, 10, segs), HCP_ERANGE);
    assert_string_equal(out, "");
    assert_int_equal(adm_pointer(out, 6, tilde), HCP_ERANGE);
}

static void test_base64(void **state)
{
    static const struct {
        const char *in, *out;
    } v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"},
             {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"},
             {"\xff\xfe", "//4="}};

    (void)state;
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        char *b = adm_base64(v[i].in, strlen(v[i].in));
        assert_non_null(b);
        assert_string_equal(b, v[i].out);
        free(b);
    }
}

/* The rendered review, parsed back. */
static json_t *render(const char *uid, const adm_response_t *a)
{
    char *out;
    size_t n;
    json_t *j;

    assert_int_equal(adm_review_render(uid, a, &out, &n), 0);
    assert_int_equal(strlen(out), n);
    j = json_loads(out, 0, NULL);
    free(out);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "apiVersion")),
                        "admission.k8s.io/v1");
    assert_string_equal(json_string_value(json_object_get(j, "kind")), "AdmissionReview");
    return j;
}

static void test_render(void **state)
{
    adm_response_t a;
    json_t *j, *r;
    char *b64;

    (void)state;
    adm_response_init(&a);
    assert_int_equal(adm_patch_op(&a, "replace", "/spec/release/image", json_string("old")), 0);
    assert_int_equal(adm_patch_op(&a, "remove", "/metadata/labels/x", NULL), 0);
    assert_int_equal(adm_patch_op(&a, "remove", "/x", json_true()), HCP_EINVAL);
    assert_int_equal(adm_patch_op(&a, "add", "/x", NULL), HCP_EINVAL);
    assert_int_equal(adm_patch_op(&a, "move", "/x", json_true()), HCP_EINVAL);
    assert_int_equal(adm_patch_op(&a, "add", "x", json_true()), HCP_EINVAL);
    adm_response_warn(&a, "held %s", "release");
    j = render("u-1", &a);
    r = json_object_get(j, "response");
    assert_string_equal(json_string_value(json_object_get(r, "uid")), "u-1");
    assert_true(json_is_true(json_object_get(r, "allowed")));
    assert_null(json_object_get(r, "status"));
    assert_string_equal(json_string_value(json_object_get(r, "patchType")), "JSONPatch");
    {
        const char *want = "[{\"op\":\"replace\",\"path\":\"/spec/release/image\",\"value\":"
                           "\"old\"},{\"op\":\"remove\",\"path\":\"/metadata/labels/x\"}]";
        b64 = adm_base64(want, strlen(want));
        assert_string_equal(json_string_value(json_object_get(r, "patch")), b64);
        free(b64);
    }
    assert_string_equal(json_string_value(json_array_get(json_object_get(r, "warnings"), 0)),
                        "held release");
    json_decref(j);

    /* Refused: status with code and message, and no patch. */
    adm_response_deny(&a, 403, "spec.x: %s", "not allowed");
    assert_null(a.patch);
    j = render("u-2", &a);
    r = json_object_get(j, "response");
    assert_true(json_is_false(json_object_get(r, "allowed")));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "status"), "code")),
                     403);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(r, "status"), "message")),
        "spec.x: not allowed");
    assert_null(json_object_get(r, "patch"));
    json_decref(j);
    adm_response_free(&a);
}

/* A message cut inside a multi-byte character stays valid UTF-8. */
static void test_truncated_utf8(void **state)
{
    adm_response_t a;
    char big[600];
    json_t *j;

    (void)state;
    memset(big, 'a', sizeof(big));
    for (size_t i = 0; i + 2 < sizeof(big); i += 3)
        memcpy(big + i + 1, "\xc3\xa9", 2);
    big[sizeof(big) - 1] = '\0';
    adm_response_init(&a);
    for (int i = 0; i < ADM_MAX_WARNINGS + 2; i++)
        adm_response_warn(&a, "%.*s", 254 + i, big + i);
    assert_int_equal(a.nwarnings, ADM_MAX_WARNINGS);
    adm_response_deny(&a, 500, "%s", big);
    j = render("u", &a);
    json_decref(j);
    adm_response_free(&a);
}

/* ---- the router ---------------------------------------------------------- */

typedef struct hstate {
    int calls;
    int rc;           /* what the handler returns */
    bool long_err;    /* its error is 250 bytes of words */
    bool ready;
} hstate_t;

static int h_hold(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                  size_t errlen)
{
    hstate_t *h = ud;

    h->calls++;
    if (h->rc && h->long_err)
        return hcp_errf(err, errlen, h->rc, "%s",
                        "word word word word word word word word word word word word word word "
                        "word word word word word word word word word word word word word word "
                        "word word word word word word word word word word word word word word "
                        "word word word word word word word word word word");
    if (h->rc)
        return hcp_errf(err, errlen, h->rc, "spec.release.image: no running value");
    if (q->op == ADM_UPDATE)
        return adm_patch_op(a, "replace", "/spec/release/image", json_string("old"));
    return 0;
}

static bool is_ready(void *ud)
{
    return ((hstate_t *)ud)->ready;
}

/* The HTTP answer to body: status and, when 200, the review's response. */
static int serve(adm_route_t *rt, const char *body, json_t **resp, char *text, size_t cap)
{
    http_response h;
    int status;

    memset(&h, 0, sizeof(h));
    h.status = 200;
    assert_int_equal(adm_router_serve(rt, body, strlen(body), &h), 0);
    status = h.status;
    snprintf(text, cap, "%.*s", (int)h.body_len, h.body ? h.body : "");
    *resp = NULL;
    if (status == 200) {
        json_t *j = json_loads(text, 0, NULL);
        assert_non_null(j);
        *resp = json_incref(json_object_get(j, "response"));
        json_decref(j);
        assert_string_equal(h.content_type, "application/json");
    }
    free(h.body);
    return status;
}

/* A fail-open warning: one, at most 255 bytes, containing what, and whole
 * (it ends with the sentence's last words, not cut). */
static void check_fail_open_warning(json_t *resp, const char *what)
{
    json_t *w = json_object_get(resp, "warnings");
    const char *msg = json_string_value(json_array_get(w, 0));
    const char *tail = "(failurePolicy Ignore; details in the controller's log)";

    assert_int_equal(json_array_size(w), 1);
    assert_non_null(msg);
    if (strlen(msg) > ADM_WARNING_MAX || !strstr(msg, what) ||
        strcmp(msg + strlen(msg) - strlen(tail), tail) != 0)
        fail_msg("warning of %zu bytes, want <= %d, containing \"%s\", ending \"%s\": %s",
                 strlen(msg), ADM_WARNING_MAX, what, tail, msg);
}

static void check_router(bool fail_open)
{
    http_server srv;
    adm_router_t r;
    hstate_t h = {0, 0, false, false};
    json_t *resp;
    char text[2048];
    const char *msg;

    http_server_init(&srv, NULL);
    adm_router_init(&r, &srv, fail_open, is_ready, &h);
    assert_int_equal(adm_router_add(&r, "/mutate-hostedclusters", "hypershift.openshift.io",
                                    "hostedclusters", h_hold, &h), 0);
    assert_int_equal(adm_router_add(&r, "/mutate-hostedclusters", "x", "y", h_hold, &h),
                     HCP_EINVAL);
    assert_int_equal(adm_router_add(&r, "/m", "x", "", h_hold, &h), HCP_EINVAL);
    assert_int_equal(r.nroutes, 1);
    adm_route_t *rt = &r.routes[0];

    /* Not a review at all: HTTP 400 naming the problem, the handler not called. */
    assert_int_equal(serve(rt, "{\"apiVersion\":", &resp, text, sizeof(text)), 400);
    assert_non_null(strstr(text, "not an admission.k8s.io/v1 AdmissionReview: not JSON"));
    assert_int_equal(r.stats.invalid, 1);

    /* Before the caches synced: refused 503, or admitted with a warning. */
    assert_int_equal(serve(rt, update_hc, &resp, text, sizeof(text)), 200);
    assert_int_equal(h.calls, 0);
    assert_string_equal(json_string_value(json_object_get(resp, "uid")), "u-1");
    if (fail_open) {
        assert_true(json_is_true(json_object_get(resp, "allowed")));
        msg = json_string_value(json_array_get(json_object_get(resp, "warnings"), 0));
    } else {
        assert_true(json_is_false(json_object_get(resp, "allowed")));
        json_t *st = json_object_get(resp, "status");
        assert_int_equal(json_integer_value(json_object_get(st, "code")), 503);
        msg = json_string_value(json_object_get(st, "message"));
    }
    assert_non_null(msg);
    assert_non_null(strstr(msg, "caches have not synced yet"));
    assert_null(json_object_get(resp, "patch"));
    json_decref(resp);

    /* Ready: the handler's patch goes out. */
    h.ready = true;
    assert_int_equal(serve(rt, update_hc, &resp, text, sizeof(text)), 200);
    assert_int_equal(h.calls, 1);
    assert_true(json_is_true(json_object_get(resp, "allowed")));
    assert_string_equal(json_string_value(json_object_get(resp, "patchType")), "JSONPatch");
    json_decref(resp);
    assert_int_equal(r.stats.patched, 1);

    /* Another resource on this path: by the policy, never the handler. */
    {
        char other[2048];
        snprintf(other, sizeof(other), "%s", update_hc);
        memcpy(strstr(other, "\"hostedclusters\""), "\"hostedclusterz\"", 16);
        assert_int_equal(serve(rt, other, &resp, text, sizeof(text)), 200);
        assert_int_equal(h.calls, 1);
        assert_true(json_is_boolean(json_object_get(resp, "allowed")));
        assert_int_equal(json_is_true(json_object_get(resp, "allowed")), fail_open);
        if (fail_open)
            check_fail_open_warning(resp, "it reached a webhook for another resource");
        else
            assert_non_null(strstr(text, "serves hypershift.openshift.io/hostedclusters, not "
                                         "hypershift.openshift.io/hostedclusterz clusters/a"));
        json_decref(resp);
    }

    /* The handler cannot decide: by the policy, with its reason. */
    h.rc = HCP_EINVAL;
    assert_int_equal(serve(rt, update_hc, &resp, text, sizeof(text)), 200);
    assert_int_equal(json_is_true(json_object_get(resp, "allowed")), fail_open);
    assert_null(json_object_get(resp, "patch"));
    assert_non_null(strstr(text, "spec.release.image: no running value"));
    if (fail_open)
        check_fail_open_warning(resp, "spec.release.image: no running value");
    json_decref(resp);

    /* A long reason: the warning still fits the API server's 256 characters
     * whole, cut at a word with "...", never mid-word. */
    h.long_err = true;
    assert_int_equal(serve(rt, update_hc, &resp, text, sizeof(text)), 200);
    if (fail_open)
        check_fail_open_warning(resp, "word word...");
    json_decref(resp);
    h.long_err = false;
    assert_int_equal(r.stats.failed, 4);
}

static void test_router_fail_closed(void **state)
{
    (void)state;
    check_router(false);
}

static void test_router_fail_open(void **state)
{
    (void)state;
    check_router(true);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_update),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_render),
        cmocka_unit_test(test_truncated_utf8),
        cmocka_unit_test(test_router_fail_closed),
        cmocka_unit_test(test_router_fail_open),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
