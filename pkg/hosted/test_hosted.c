/* test_hosted.c: the ClusterVersion conditions patch, the identity set up in
 * a hosted cluster and the TokenRequest's answer, and the projection's
 * lifecycle against an address where nothing listens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "hosted/hosted.h"
#include "log/log.h"

static json_t *J(const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", e.text, text);
    return j;
}

static sched_time_t T(const char *s)
{
    sched_time_t t;
    assert_int_equal(sched_parse_rfc3339(s, &t), 0);
    return t;
}

/* ---- conditions ------------------------------------------------------------- */

static const hosted_conds_t WANT = {
    {true, "Restricted", "Changes are paused until 2026-03-01T02:00:00Z."},
    {false, "NoChangesPending", "No changes are pending."}};

#define AVAILABLE                                                                              \
    "{\"type\":\"Available\",\"status\":\"True\",\"lastTransitionTime\":"                      \
    "\"2025-01-01T00:00:00Z\",\"message\":\"Done applying 4.15.0\"}"
#define PAUSED_OK                                                                              \
    "{\"type\":\"ChangesPaused\",\"status\":\"True\",\"lastTransitionTime\":"                  \
    "\"2026-02-01T00:00:00Z\",\"reason\":\"Restricted\",\"message\":"                          \
    "\"Changes are paused until 2026-03-01T02:00:00Z.\"}"
#define PENDING_OK                                                                             \
    "{\"type\":\"ChangesPending\",\"status\":\"False\",\"lastTransitionTime\":"                \
    "\"2026-01-15T00:00:00Z\",\"reason\":\"NoChangesPending\",\"message\":"                    \
    "\"No changes are pending.\"}"

static void expect_match(const char *conds_json, bool want)
{
    json_t *c = conds_json ? J(conds_json) : NULL;
    if (hosted_conds_match(c, &WANT) != want)
        fail_msg("conds_match(%s) != %d", conds_json ? conds_json : "NULL", want);
    json_decref(c);
}

static void test_conds_match(void **state)
{
    (void)state;
    expect_match(NULL, false);
    expect_match("{}", false);
    expect_match("[]", false);
    expect_match("[" AVAILABLE "]", false);
    expect_match("[" PAUSED_OK "]", false);
    expect_match("[" AVAILABLE "," PAUSED_OK "," PENDING_OK "]", true);
    expect_match("[" PENDING_OK "," AVAILABLE "," PAUSED_OK ", 7]", true);
    /* A duplicate is not "right": the patch removes it. */
    expect_match("[" PAUSED_OK "," PENDING_OK "," PAUSED_OK "]", false);
    expect_match("[{\"type\":\"ChangesPaused\",\"status\":\"False\",\"reason\":\"Restricted\","
                 "\"message\":\"Changes are paused until 2026-03-01T02:00:00Z.\"}," PENDING_OK "]",
                 false);
    expect_match("[{\"type\":\"ChangesPaused\",\"status\":\"True\",\"reason\":\"Restricted\","
                 "\"message\":\"other\"}," PENDING_OK "]",
                 false);
    expect_match("[{\"type\":\"ChangesPaused\",\"status\":\"True\",\"reason\":\"Other\","
                 "\"message\":\"Changes are paused until 2026-03-01T02:00:00Z.\"}," PENDING_OK "]",
                 false);
    expect_match("[{\"type\":\"ChangesPaused\",\"status\":true,\"reason\":\"Restricted\","
                 "\"message\":\"Changes are paused until 2026-03-01T02:00:00Z.\"}," PENDING_OK "]",
                 false);
    /* A missing message is not an empty one. */
    hosted_conds_t empty = {{false, "", ""}, {false, "", ""}};
    json_t *c = J("[{\"type\":\"ChangesPaused\",\"status\":\"False\",\"reason\":\"\"},"
                  "{\"type\":\"ChangesPending\",\"status\":\"False\",\"reason\":\"\","
                  "\"message\":\"\"}]");
    assert_false(hosted_conds_match(c, &empty));
    json_decref(c);
}

static const json_t *find_cond(const json_t *conds, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static const char *S(const json_t *o, const char *k)
{
    return json_string_value(json_object_get(o, k));
}

static void test_patch_builds_whole_list(void **state)
{
    (void)state;
    sched_time_t now = T("2026-02-20T10:00:00Z");

    /* Already right: no patch. */
    json_t *right = J("[" AVAILABLE "," PAUSED_OK "," PENDING_OK "]");
    {
        json_t *none;
        assert_int_equal(hosted_patch(right, &WANT, now, now, "5", &none), 0);
        assert_null(none);
    }
    json_decref(right);

    /* Paused keeps its status (its transition time is carried over) but
     * has a stale message; pending flips and gets `now`; the other
     * conditions stay, in order, untouched; a duplicate goes away. */
    json_t *have = J("[" AVAILABLE ","
                     "{\"type\":\"ChangesPaused\",\"status\":\"True\",\"lastTransitionTime\":"
                     "\"2026-02-01T00:00:00Z\",\"reason\":\"Restricted\",\"message\":\"old\"},"
                     "{\"type\":\"ChangesPending\",\"status\":\"True\",\"lastTransitionTime\":"
                     "\"2026-01-15T00:00:00Z\",\"reason\":\"X\",\"message\":\"y\"},"
                     "{\"type\":\"Progressing\",\"status\":\"False\",\"lastTransitionTime\":"
                     "\"2025-01-01T00:00:00Z\",\"extra\":{\"k\":[1,2]}},"
                     "{\"type\":\"ChangesPaused\",\"status\":\"False\"}]");
    json_t *p;
    assert_int_equal(hosted_patch(have, &WANT, T("2026-02-19T00:00:00Z"), now, "123", &p), 0);
    assert_non_null(p);
    assert_string_equal(S(json_object_get(p, "metadata"), "resourceVersion"), "123");
    assert_int_equal(json_object_size(json_object_get(p, "metadata")), 1);
    assert_int_equal(json_object_size(p), 2);
    const json_t *conds = json_object_get(json_object_get(p, "status"), "conditions");
    assert_int_equal(json_array_size(conds), 4);
    assert_string_equal(S(json_array_get(conds, 0), "type"), "Available");
    assert_true(json_equal(json_array_get(conds, 0), json_array_get(have, 0)));
    assert_string_equal(S(json_array_get(conds, 1), "type"), "Progressing");
    assert_true(json_equal(json_array_get(conds, 1), json_array_get(have, 3)));
    const json_t *paused = find_cond(conds, "ChangesPaused");
    const json_t *pending = find_cond(conds, "ChangesPending");
    assert_string_equal(S(paused, "status"), "True");
    assert_string_equal(S(paused, "reason"), "Restricted");
    assert_string_equal(S(paused, "message"), WANT.paused.message);
    assert_string_equal(S(paused, "lastTransitionTime"), "2026-02-01T00:00:00Z");
    assert_string_equal(S(pending, "status"), "False");
    assert_string_equal(S(pending, "reason"), "NoChangesPending");
    assert_string_equal(S(pending, "lastTransitionTime"), "2026-02-20T10:00:00Z");
    assert_int_equal(json_object_size(paused), 5);
    /* The patch applied gives a list that is right. */
    assert_true(hosted_conds_match(conds, &WANT));
    json_decref(p);
    json_decref(have);

    /* No conditions at all (or garbage): ours only, times from `since`. */
    json_t *garbage = J("{\"not\":\"a list\"}");
    assert_int_equal(hosted_patch(garbage, &WANT, T("2026-02-19T00:00:00Z"), now, NULL, &p), 0);
    assert_non_null(p);
    assert_null(json_object_get(p, "metadata"));
    conds = json_object_get(json_object_get(p, "status"), "conditions");
    assert_int_equal(json_array_size(conds), 2);
    assert_string_equal(S(find_cond(conds, "ChangesPaused"), "lastTransitionTime"),
                        "2026-02-19T00:00:00Z");
    json_decref(p);
    json_decref(garbage);

    /* NULL reason/message are written as empty strings. */
    hosted_conds_t nulls = {{false, NULL, NULL}, {true, NULL, NULL}};
    assert_int_equal(hosted_patch(NULL, &nulls, now, now, "1", &p), 0);
    assert_non_null(p);
    conds = json_object_get(json_object_get(p, "status"), "conditions");
    assert_string_equal(S(find_cond(conds, "ChangesPending"), "reason"), "");
    assert_string_equal(S(find_cond(conds, "ChangesPending"), "status"), "True");
    assert_true(hosted_conds_match(conds, &nulls));
    json_decref(p);
}

/* ---- lifecycle without a cluster ------------------------------------------ */

typedef struct watcher {
    int changes;
    hosted_t *p;
    bool forget_in_callback;
} watcher_t;

static void on_change(const char *ns, const char *name, void *ud)
{
    watcher_t *w = ud;
    w->changes++;
    if (w->forget_in_callback)
        hosted_forget(w->p, ns, name); /* must be safe from the callback */
}

static void stop_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    (void)t;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

static void run_for(struct ev_loop *loop, double seconds)
{
    ev_timer t;
    ev_timer_init(&t, stop_cb, seconds, 0.);
    ev_timer_start(loop, &t);
    ev_run(loop, 0);
    ev_timer_stop(loop, &t);
}

/* Runs the loop until ns/name is in state `reason` or 20 s pass. */
static void run_until_reason(struct ev_loop *loop, hosted_t *p, const char *ns,
                             const char *name, const char *reason)
{
    hosted_status_t st;
    for (int i = 0; i < 200; i++) {
        if (hosted_status(p, ns, name, &st) == 0 && strcmp(st.reason, reason) == 0)
            return;
        run_for(loop, 0.1);
    }
}

/* ---- the identity ------------------------------------------------------------ */

/* The ClusterRole grants get of ClusterVersion `version` and patch of its
 * status, and nothing else: no wildcard, no other verb, resource or name. */
static void test_identity_grants_exactly(void **state)
{
    (void)state;
    json_t *role = hosted_identity_object(HOSTED_ID_CLUSTERROLE);
    const json_t *rules = json_object_get(role, "rules");
    assert_int_equal(json_array_size(rules), 2);
    static const char *const res[2] = {"clusterversions", "clusterversions/status"};
    static const char *const verb[2] = {"get", "patch"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *r = json_array_get(rules, i);
        assert_int_equal(json_object_size(r), 4);
        const char *keys[4] = {"apiGroups", "resources", "resourceNames", "verbs"};
        const char *want[4] = {"config.openshift.io", res[i], HOSTED_CV_NAME, verb[i]};
        for (int k = 0; k < 4; k++) {
            const json_t *a = json_object_get(r, keys[k]);
            assert_int_equal(json_array_size(a), 1);
            assert_string_equal(json_string_value(json_array_get(a, 0)), want[k]);
        }
    }
    json_decref(role);
    json_t *b = hosted_identity_object(HOSTED_ID_BINDING);
    const json_t *sub = json_array_get(json_object_get(b, "subjects"), 0);
    assert_int_equal(json_array_size(json_object_get(b, "subjects")), 1);
    assert_string_equal(json_string_value(json_object_get(sub, "kind")), "ServiceAccount");
    assert_string_equal(json_string_value(json_object_get(sub, "name")), HOSTED_SA_NAME);
    assert_string_equal(json_string_value(json_object_get(sub, "namespace")),
                        HOSTED_SA_NAMESPACE);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(b, "roleRef"), "name")),
        HOSTED_ROLE_NAME);
    json_decref(b);
    json_t *sa = hosted_identity_object(HOSTED_ID_SERVICEACCOUNT);
    assert_string_equal(json_string_value(json_object_get(sa, "kind")), "ServiceAccount");
    json_decref(sa);
    assert_null(hosted_identity_object(99));
}

/* A TokenRequest's answer: the token and its lifetime; anything else is
 * refused with the field named. */
static void test_token_from_request(void **state)
{
    (void)state;
    double now = (double)T("2026-12-04T16:00:00Z"), life = 0;
    char err[256], *tok = NULL;
    json_t *a = J("{\"status\":{\"token\":\"eyJ.abc.def\","
                  "\"expirationTimestamp\":\"2026-12-04T17:00:00Z\"}}");
    assert_int_equal(hosted_token_from_request(a, now, &tok, &life, err, sizeof(err)), 0);
    assert_string_equal(tok, "eyJ.abc.def");
    assert_true(life > 3599.9 && life < 3600.1);
    free(tok);
    json_decref(a);
    static const struct {
        const char *answer, *field;
    } bad[] = {
        {"{}", "status.token"},
        {"{\"status\":{\"token\":\"\",\"expirationTimestamp\":\"2026-12-04T17:00:00Z\"}}",
         "status.token"},
        {"{\"status\":{\"token\":7}}", "status.token"},
        {"{\"status\":{\"token\":\"a b\",\"expirationTimestamp\":\"2026-12-04T17:00:00Z\"}}",
         "status.token"},
        {"{\"status\":{\"token\":\"a\\nb\",\"expirationTimestamp\":\"2026-12-04T17:00:00Z\"}}",
         "status.token"},
        {"{\"status\":{\"token\":\"abc\"}}", "status.expirationTimestamp"},
        {"{\"status\":{\"token\":\"abc\",\"expirationTimestamp\":\"tomorrow\"}}",
         "status.expirationTimestamp"},
        {"{\"status\":{\"token\":\"abc\",\"expirationTimestamp\":\"2026-12-04T15:00:00Z\"}}",
         "expired"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        a = J(bad[i].answer);
        tok = (char *)1;
        assert_int_equal(hosted_token_from_request(a, now, &tok, &life, err, sizeof(err)),
                         HCP_EPARSE);
        assert_null(tok);
        if (!strstr(err, bad[i].field))
            fail_msg("%s: \"%s\" does not name %s", bad[i].answer, err, bad[i].field);
        json_decref(a);
    }
}

/* The management API is unreachable (nothing listens on port 1): the state
 * says so, nothing crashes, forget from the callback and free are clean. */
static void test_unreachable_management_api(void **state)
{
    (void)state;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    kube_http http;
    kube_config cfg;
    kube_client mgmt;
    kube_error ke;
    const char *yaml = "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                       "contexts:\n- name: x\n  context: {cluster: c}\ncurrent-context: x\n";
    assert_non_null(loop);
    assert_int_equal(kube_http_init(&http, loop, &ke), 0);
    assert_int_equal(kube_config_load_yaml(&cfg, yaml, strlen(yaml), NULL, NULL, &ke), 0);
    assert_int_equal(kube_client_init(&mgmt, &http, &cfg, NULL, &ke), 0);

    watcher_t w = {0};
    hosted_opts_t opts = {.leading = true, .backoff_initial = 0.05, .backoff_max = 0.1,
                               .on_change = on_change, .ud = &w};
    hosted_t *p = NULL;
    char err[256];
    assert_int_equal(hosted_new(loop, &mgmt, &opts, &p, err, sizeof(err)), 0);
    w.p = p;

    hosted_status_t st;
    assert_int_equal(hosted_status(p, "clusters", "hc1", &st), HCP_EINVAL);
    assert_int_equal(hosted_update(p, "clusters", "hc1", &WANT, 1000, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(p, "clusters", "hc2", &WANT, 1000, err, sizeof(err)), 0);
    assert_int_equal(hosted_status(p, "clusters", "hc1", &st), 0);
    assert_false(st.ok);
    assert_string_equal(st.reason, HOSTED_PENDING);
    assert_int_equal(hosted_update(p, "", "x", &WANT, 1000, err, sizeof(err)), HCP_EINVAL);

    run_until_reason(loop, p, "clusters", "hc1", HOSTED_SECRET_UNREADABLE);
    run_until_reason(loop, p, "clusters", "hc2", HOSTED_SECRET_UNREADABLE);
    /* Until the retries below have happened, or 20 s: a refused connection
     * takes a while to be told under valgrind on a busy machine (0.8 s
     * seen at load average 12), so no fixed time is enough. */
    for (int i = 0; i < 200 && hosted_stats(p)->secret_reads < 4; i++)
        run_for(loop, 0.1);
    assert_int_equal(hosted_status(p, "clusters", "hc1", &st), 0);
    assert_false(st.ok);
    assert_string_equal(st.reason, HOSTED_SECRET_UNREADABLE);
    assert_non_null(strstr(st.message, "clusters-hc1/" HOSTED_SECRET));
    assert_int_equal(st.writes, 0);
    assert_true(w.changes >= 2);
    /* Retries happened (backoff 0.05-0.1 s), each one a Secret read. */
    assert_true(hosted_stats(p)->secret_reads >= 4);
    assert_int_equal(hosted_stats(p)->writes, 0);

    /* Forgetting from inside the change callback. */
    hosted_forget(p, "clusters", "hc1");
    assert_int_equal(hosted_status(p, "clusters", "hc1", &st), HCP_EINVAL);
    w.forget_in_callback = true;
    assert_int_equal(hosted_update(p, "clusters", "hc4", &WANT, 2000, err, sizeof(err)), 0);
    assert_int_equal(hosted_status(p, "clusters", "hc4", &st), HCP_EINVAL);
    run_for(loop, 0.5);
    /* hc2's state does not change any more (same error): no callback. */
    assert_int_equal(hosted_status(p, "clusters", "hc2", &st), 0);
    assert_string_equal(st.reason, HOSTED_SECRET_UNREADABLE);
    /* Unchanged conditions: nothing happens, not even a state evaluation. */
    int changes = w.changes;
    assert_int_equal(hosted_update(p, "clusters", "hc2", &WANT, 3000, err, sizeof(err)), 0);
    assert_int_equal(w.changes, changes);

    /* Free with a request in flight: no callback afterwards. */
    w.forget_in_callback = false;
    assert_int_equal(hosted_update(p, "clusters", "hc3", &WANT, 1000, err, sizeof(err)), 0);
    int before = w.changes;
    hosted_free(p);
    run_for(loop, 0.2);
    assert_int_equal(w.changes, before);

    kube_client_close(&mgmt);
    kube_config_free(&cfg);
    kube_http_close(&http);
    ev_loop_destroy(loop);
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conds_match),
        cmocka_unit_test(test_patch_builds_whole_list),
        cmocka_unit_test(test_identity_grants_exactly),
        cmocka_unit_test(test_token_from_request),
        cmocka_unit_test(test_unreachable_management_api),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
