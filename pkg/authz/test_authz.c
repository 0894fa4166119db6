/* test_authz: the TokenReview and SubjectAccessReview parsers, the request
 * the access review sends, and the checker against a fake API server that
 * answers reviews the way kube-apiserver does (authenticated users, RBAC
 * rules for one path and one namespace). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <ev.h>

#include "authz/authz.h"
#include "base/error.h"
#include "kube/testutil_fakeapi.h"

/* ---- parsers ------------------------------------------------------------ */

static json_t *js(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s", e.text);
    return j;
}

static void test_parse_tokenreview(void **state)
{
    authz_user u;
    char err[256];
    json_t *j;

    (void)state;
    j = js("{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"system:serviceaccount:m:"
           "prometheus\",\"uid\":\"u-1\",\"groups\":[\"system:serviceaccounts\"],\"extra\":{"
           "\"authentication.kubernetes.io/pod-name\":[\"p\"]}}}}");
    assert_int_equal(authz_parse_tokenreview(j, &u, err, sizeof(err)), 1);
    assert_string_equal(u.username, "system:serviceaccount:m:prometheus");
    assert_string_equal(u.uid, "u-1");
    assert_int_equal(json_array_size(u.groups), 1);
    assert_non_null(json_object_get(u.extra, "authentication.kubernetes.io/pod-name"));
    authz_user_free(&u);
    json_decref(j);

    j = js("{\"status\":{\"authenticated\":false,\"error\":\"token expired\"}}");
    assert_int_equal(authz_parse_tokenreview(j, &u, err, sizeof(err)), 0);
    assert_string_equal(err, "token expired");
    assert_null(u.username);
    json_decref(j);

    j = js("{\"status\":{}}"); /* authenticated omitted: false */
    assert_int_equal(authz_parse_tokenreview(j, &u, err, sizeof(err)), 0);
    json_decref(j);

    static const struct {
        const char *json, *field;
    } bad[] = {
        {"[]", "status"},
        {"{\"status\":3}", "status"},
        {"{\"status\":{\"authenticated\":\"yes\"}}", "status.authenticated"},
        {"{\"status\":{\"authenticated\":true}}", "status.user"},
        {"{\"status\":{\"authenticated\":true,\"user\":{}}}", "status.user.username"},
        {"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"\"}}}", "status.user.username"},
        {"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"groups\":[1]}}}",
         "status.user.groups"},
        {"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"extra\":[]}}}",
         "status.user.extra"},
        {"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"extra\":{\"k\":\"v\"}}}}",
         "status.user.extra[\"k\"]"},
        {"{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"a\",\"uid\":5}}}",
         "status.user.uid"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = js(bad[i].json);
        assert_int_equal(authz_parse_tokenreview(j, &u, err, sizeof(err)), HCP_EPARSE);
        if (!strstr(err, bad[i].field))
            fail_msg("%s: error \"%s\" does not name %s", bad[i].json, err, bad[i].field);
        assert_null(u.username);
        json_decref(j);
    }
}

static void test_parse_sar(void **state)
{
    char err[256];
    json_t *j;

    (void)state;
    j = js("{\"status\":{\"allowed\":true}}");
    assert_int_equal(authz_parse_sar(j, err, sizeof(err)), 1);
    json_decref(j);
    j = js("{\"status\":{\"allowed\":true,\"denied\":true}}");
    assert_int_equal(authz_parse_sar(j, err, sizeof(err)), 0);
    json_decref(j);
    j = js("{\"status\":{\"allowed\":false,\"reason\":\"RBAC: no\"}}");
    assert_int_equal(authz_parse_sar(j, err, sizeof(err)), 0);
    assert_string_equal(err, "RBAC: no");
    json_decref(j);
    j = js("{\"status\":{\"allowed\":false}}");
    assert_int_equal(authz_parse_sar(j, err, sizeof(err)), 0);
    assert_string_equal(err, "no RBAC rule allows it");
    json_decref(j);
    const char *bad[] = {"{}", "{\"status\":{}}", "{\"status\":{\"allowed\":1}}",
                         "{\"status\":{\"allowed\":true,\"denied\":\"no\"}}",
                         "{\"status\":{\"allowed\":false,\"reason\":{}}}"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        j = js(bad[i]);
        assert_int_equal(authz_parse_sar(j, err, sizeof(err)), HCP_EPARSE);
        assert_non_null(strstr(err, "SubjectAccessReview: "));
        json_decref(j);
    }
}

static void test_sar_request_and_key(void **state)
{
    authz_user u = {.username = "alice", .uid = "1", .groups = NULL, .extra = NULL};
    authz_attrs m = {.verb = "get", .path = "/metrics"};
    authz_attrs c = {.verb = "get", .group = "hypershift.openshift.io",
                     .resource = "hostedclusters", .ns = "team-a", .name = ""};
    authz_attrs none = {.verb = "get"};
    char k1[640], k2[640], k3[640];
    json_t *r;

    (void)state;
    u.groups = json_pack("[s]", "devs");
    u.extra = json_object();
    r = authz_sar_request(&u, &m);
    assert_non_null(r);
    assert_string_equal(json_string_value(json_object_get(r, "kind")), "SubjectAccessReview");
    assert_string_equal(
        json_string_value(json_object_get(
            json_object_get(json_object_get(r, "spec"), "nonResourceAttributes"), "path")),
        "/metrics");
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "spec"), "user")),
                        "alice");
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(r, "spec"), "groups"), 0)),
                        "devs");
    json_decref(r);
    r = authz_sar_request(&u, &c);
    json_t *ra = json_object_get(json_object_get(r, "spec"), "resourceAttributes");
    assert_string_equal(json_string_value(json_object_get(ra, "namespace")), "team-a");
    assert_string_equal(json_string_value(json_object_get(ra, "resource")), "hostedclusters");
    assert_string_equal(json_string_value(json_object_get(ra, "group")), "hypershift.openshift.io");
    assert_null(json_object_get(json_object_get(r, "spec"), "nonResourceAttributes"));
    json_decref(r);
    assert_null(authz_sar_request(&u, &none));
    json_decref(u.groups);
    json_decref(u.extra);

    assert_int_equal(authz_key("secret-token", &m, k1, sizeof(k1)), 0);
    assert_int_equal(authz_key("secret-tokeN", &m, k2, sizeof(k2)), 0);
    assert_int_equal(authz_key("secret-token", &c, k3, sizeof(k3)), 0);
    assert_null(strstr(k1, "secret")); /* the token is not kept, only its digest */
    assert_string_not_equal(k1, k2);
    assert_string_not_equal(k1, k3);
    assert_int_equal(authz_key("t", &m, k1, 40), HCP_EINVAL);
}

/* ---- the checker against a fake API server ------------------------------- */

/* Tokens: "alice-token" is alice (may get /metrics and hostedclusters in
 * team-a), "bob-token" is bob (may nothing); other tokens are not
 * authenticated. fail makes every review answer 500. */
typedef struct fx {
    struct ev_loop *loop;
    fakeapi_t *api;
    kube_config cfg;
    kube_http http;
    kube_client client;
    authz_t *z;
    int fail;
    int done;
    authz_verdict last;
    char reason[256];
} fx_t;

static double fake_now;
static double now_fn(void)
{
    return fake_now;
}

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    fx_t *f = ud;

    *status = 201;
    if (f->fail) {
        *status = 500;
        return "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"etcd is down\"}";
    }
    if (strstr(r->path, "/tokenreviews")) {
        if (strstr(r->body, "\"token\":\"alice-token\""))
            return "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"alice\","
                   "\"groups\":[\"system:authenticated\"]}}}";
        if (strstr(r->body, "\"token\":\"bob-token\""))
            return "{\"status\":{\"authenticated\":true,\"user\":{\"username\":\"bob\"}}}";
        return "{\"status\":{\"authenticated\":false,\"error\":\"invalid bearer token\"}}";
    }
    if (strstr(r->path, "/subjectaccessreviews")) {
        bool alice = strstr(r->body, "\"user\":\"alice\"") != NULL;
        bool metrics = strstr(r->body, "\"path\":\"/metrics\"") != NULL;
        bool team_a = strstr(r->body, "\"namespace\":\"team-a\"") != NULL &&
                      strstr(r->body, "\"resource\":\"hostedclusters\"") != NULL;
        if (alice && (metrics || team_a))
            return "{\"status\":{\"allowed\":true}}";
        return "{\"status\":{\"allowed\":false,\"reason\":\"no RBAC policy matched\"}}";
    }
    *status = 404;
    return "{\"kind\":\"Status\",\"status\":\"Failure\",\"message\":\"not found\"}";
}

static int setup(void **state)
{
    fx_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->api = fakeapi_start(f->loop, answer, f);
    fakeapi_connect(f->api, f->loop, &f->cfg, &f->http, &f->client);
    fake_now = 1000;
    f->z = authz_new(&f->client, 10, now_fn);
    assert_non_null(f->z);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx_t *f = *state;
    authz_free(f->z);
    kube_client_close(&f->client);
    kube_http_close(&f->http);
    kube_config_free(&f->cfg);
    fakeapi_stop(f->api);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

static void on_done(authz_verdict v, const char *reason, void *ud)
{
    fx_t *f = ud;
    f->done++;
    f->last = v;
    snprintf(f->reason, sizeof(f->reason), "%s", reason);
}

/* One check: the verdict, from the table or after the reviews. */
static authz_verdict check(fx_t *f, const char *token, const authz_attrs *a)
{
    authz_check_t *c;
    char why[256];
    int before = f->done;
    authz_verdict v = authz_check(f->z, token, a, on_done, f, &c, why, sizeof(why));
    double until;

    if (v != AUTHZ_PENDING) {
        assert_null(c);
        snprintf(f->reason, sizeof(f->reason), "%s", why);
        return v;
    }
    assert_non_null(c);
    assert_int_equal(f->done, before); /* never called back inside authz_check() */
    until = ev_time() + 5;
    while (f->done == before && ev_time() < until)
        ev_run(f->loop, EVRUN_ONCE);
    assert_int_equal(f->done, before + 1);
    return f->last;
}

static const authz_attrs metrics = {.verb = "get", .path = "/metrics"};
static const authz_attrs cal_a = {.verb = "get", .group = "hypershift.openshift.io",
                                  .resource = "hostedclusters", .ns = "team-a"};
static const authz_attrs cal_b = {.verb = "get", .group = "hypershift.openshift.io",
                                  .resource = "hostedclusters", .ns = "team-b"};

static void test_verdicts(void **state)
{
    fx_t *f = *state;

    assert_int_equal(check(f, NULL, &metrics), AUTHZ_UNAUTHENTICATED);
    assert_int_equal(check(f, "", &metrics), AUTHZ_UNAUTHENTICATED);
    assert_non_null(strstr(f->reason, "bearer token is required"));
    assert_int_equal(fakeapi_count(f->api), 0); /* no token: the API server is not asked */

    assert_int_equal(check(f, "alice-token", &metrics), AUTHZ_ALLOWED);
    assert_int_equal(fakeapi_count(f->api), 2);
    assert_string_equal(fakeapi_nth(f->api, 0)->method, "POST");
    assert_string_equal(fakeapi_nth(f->api, 0)->path, "/apis/authentication.k8s.io/v1/tokenreviews");
    assert_string_equal(fakeapi_nth(f->api, 1)->path,
                        "/apis/authorization.k8s.io/v1/subjectaccessreviews");
    assert_non_null(strstr(fakeapi_nth(f->api, 1)->body, "\"nonResourceAttributes\""));
    assert_non_null(strstr(fakeapi_nth(f->api, 1)->body, "\"system:authenticated\""));

    /* Kept: no review within the TTL, reviewed again after it. */
    assert_int_equal(check(f, "alice-token", &metrics), AUTHZ_ALLOWED);
    assert_int_equal(fakeapi_count(f->api), 2);
    assert_int_equal(authz_get_stats(f->z)->hits, 1);
    fake_now += 10.5;
    assert_int_equal(check(f, "alice-token", &metrics), AUTHZ_ALLOWED);
    assert_int_equal(fakeapi_count(f->api), 4);

    assert_int_equal(check(f, "forged", &metrics), AUTHZ_UNAUTHENTICATED);
    assert_non_null(strstr(f->reason, "invalid bearer token"));
    assert_int_equal(fakeapi_count(f->api), 5); /* no access review for an unknown token */
    assert_int_equal(check(f, "forged", &metrics), AUTHZ_UNAUTHENTICATED);
    assert_int_equal(fakeapi_count(f->api), 5);

    assert_int_equal(check(f, "bob-token", &metrics), AUTHZ_FORBIDDEN);
    assert_non_null(strstr(f->reason, "bob"));
    assert_non_null(strstr(f->reason, "no RBAC policy matched"));

    /* A namespace's calendar: hostedclusters in that namespace. */
    assert_int_equal(check(f, "alice-token", &cal_a), AUTHZ_ALLOWED);
    assert_int_equal(check(f, "alice-token", &cal_b), AUTHZ_FORBIDDEN);
    assert_int_equal(check(f, "bob-token", &cal_a), AUTHZ_FORBIDDEN);
}

/* An API server that cannot review: an error, never kept. */
static void test_errors_not_kept(void **state)
{
    fx_t *f = *state;

    f->fail = 1;
    assert_int_equal(check(f, "alice-token", &metrics), AUTHZ_ERROR);
    assert_non_null(strstr(f->reason, "TokenReview failed"));
    assert_non_null(strstr(f->reason, "etcd is down"));
    f->fail = 0;
    assert_int_equal(check(f, "alice-token", &metrics), AUTHZ_ALLOWED);
}

/* At most AUTHZ_MAX_INFLIGHT checks wait; freeing the checker cancels them
 * without callbacks. The table stays bounded with many tokens. */
static void test_bounds(void **state)
{
    fx_t *f = *state;
    authz_check_t *c;
    char tok[32], why[256];

    for (int i = 0; i < AUTHZ_MAX_INFLIGHT; i++) {
        snprintf(tok, sizeof(tok), "t%d", i);
        assert_int_equal(authz_check(f->z, tok, &metrics, on_done, f, &c, why, sizeof(why)),
                         AUTHZ_PENDING);
    }
    assert_int_equal(authz_check(f->z, "one-more", &metrics, on_done, f, &c, why, sizeof(why)),
                     AUTHZ_BUSY);
    authz_free(f->z);
    f->z = authz_new(&f->client, 10, now_fn);
    for (int i = 0; i < 20; i++)
        ev_run(f->loop, EVRUN_NOWAIT);
    assert_int_equal(f->done, 0);

    /* 300 distinct tokens: the table keeps 256, the newest. */
    for (int i = 0; i < AUTHZ_CACHE_SIZE + 44; i++) {
        snprintf(tok, sizeof(tok), "n%d", i);
        fake_now += 0.001;
        assert_int_equal(check(f, tok, &metrics), AUTHZ_UNAUTHENTICATED);
    }
    int asked = fakeapi_count(f->api);
    assert_int_equal(check(f, "n299", &metrics), AUTHZ_UNAUTHENTICATED);
    assert_int_equal(fakeapi_count(f->api), asked);     /* the newest is kept */
    assert_int_equal(check(f, "n0", &metrics), AUTHZ_UNAUTHENTICATED);
    assert_int_equal(fakeapi_count(f->api), asked + 1); /* the oldest was dropped */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_tokenreview),
        cmocka_unit_test(test_parse_sar),
        cmocka_unit_test(test_sar_request_and_key),
        cmocka_unit_test_setup_teardown(test_verdicts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_not_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounds, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
