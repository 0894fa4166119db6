/*
 * pkg/hosted (the ClusterVersion projection) against the local cluster: "main" plays the
 * management cluster (HostedCluster namespaces, the kubeconfig Secrets),
 * "hosted" a hosted cluster's API server with ClusterVersion `version`.
 *
 * Environment (set by e2e/project/project.mk):
 *   HCP_E2E_KUBECONFIG             admin kubeconfig of main
 *   HCP_E2E_KUBECONFIG_CONTROLLER  main's unprivileged user, given only
 *                                  `get` on the Secret name by this test
 *   HCP_E2E_HOSTED_KUBECONFIG      admin kubeconfig of hosted (its bytes go
 *                                  into the Secret)
 *
 *   HCP_E2E_HOSTED_AUDIT_LOG       the hosted instance's audit log (who made
 *                                  each request there)
 *
 * The last test adds three hosted API servers of e2e/hostedsim (one process)
 * and blackholes one of them.
 *
 * The tests run in order and share the fixture below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "hosted/hosted.h"
#include "harness.h"
#include "log/log.h"
#include "hostedsim_driver.h"

#define CV_PATH "/apis/config.openshift.io/v1/clusterversions/version"
#define WAIT 30.0
#define PERIOD 2.0   /* the re-assertion period the tests run with */
#define RENEW 3.0    /* seconds after which a token is renewed in these tests */
#define SA_USER "system:serviceaccount:" HOSTED_SA_NAMESPACE ":" HOSTED_SA_NAME
#define SA_PATH "/api/v1/namespaces/" HOSTED_SA_NAMESPACE "/serviceaccounts/" HOSTED_SA_NAME
#define ROLE_PATH "/apis/rbac.authorization.k8s.io/v1/clusterroles/" HOSTED_ROLE_NAME
#define BINDING_PATH "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" HOSTED_ROLE_NAME

static harness H;              /* main, admin */
static kube_config ctl_cfg;    /* main, the controller's user */
static kube_client ctl_client;
static kube_config hosted_cfg; /* hosted, admin */
static kube_client hosted;
static char *hosted_yaml;      /* bytes of the hosted kubeconfig */
static char ns[64], role[96];
static bool cv_created;        /* this run created ClusterVersion version */
static hosted_t *P;
static int changes;
static double started;         /* ev_time() at setup: the audit log is read from then on */

/* ---- helpers ------------------------------------------------------------- */

static char *b64(const char *s, size_t n)
{
    static const char tab[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char *out = malloc((n + 2) / 3 * 4 + 1);
    size_t o = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned char)s[i] << 16;
        if (i + 1 < n)
            v |= (unsigned char)s[i + 1] << 8;
        if (i + 2 < n)
            v |= (unsigned char)s[i + 2];
        out[o++] = tab[(v >> 18) & 63];
        out[o++] = tab[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tab[(v >> 6) & 63] : '=';
        out[o++] = i + 2 < n ? tab[v & 63] : '=';
    }
    out[o] = '\0';
    return out;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) != NULL) {
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        } else {
            buf[n] = '\0';
        }
    }
    fclose(f);
    return buf;
}

/* Sends a request with a JSON body and waits; returns the code, *out gets the answer. */
typedef int (*send_fn)(kube_client *, const char *, const json_t *, kube_done_cb, void *,
                       kube_error *);

static int sync_send(kube_client *c, send_fn fn, const char *path, json_t *body, json_t **out,
                     kube_error *err)
{
    sync_result r = {0};
    int rc = fn(c, path, body, harness_store, &r, &r.err);
    json_decref(body);
    if (rc == 0)
        rc = harness_wait(&H, &r, WAIT);
    if (err)
        *err = r.err;
    if (out)
        *out = r.obj ? json_incref(r.obj) : NULL;
    sync_result_clear(&r);
    return rc;
}

static json_t *sync_get(kube_client *c, const char *path, kube_error *err)
{
    sync_result r = {0};
    json_t *obj = NULL;
    if (kube_get(c, path, harness_store, &r, &r.err) == 0 && harness_wait(&H, &r, WAIT) == 0)
        obj = json_incref(r.obj);
    if (err)
        *err = r.err;
    sync_result_clear(&r);
    return obj;
}

static int put_secret(const char *hc, const char *kubeconfig_b64, bool replace)
{
    char hcpns[160], path[256];
    json_t *s;
    kube_error e;
    snprintf(hcpns, sizeof(hcpns), "%s-%s", ns, hc);
    if (harness_create_ns(&H, &H.client, hcpns) < 0)
        return -1;
    s = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "v1", "kind", "Secret",
                  "metadata", "name", HOSTED_SECRET, "data", HOSTED_SECRET_KEY,
                  kubeconfig_b64);
    if (replace) {
        kube_path(path, sizeof(path), NULL, "v1", "secrets", hcpns, HOSTED_SECRET, NULL);
        json_t *patch = json_pack("{s:O}", "data", json_object_get(s, "data"));
        json_decref(s);
        return sync_send(&H.client, kube_merge_patch, path, patch, NULL, &e);
    }
    kube_path(path, sizeof(path), NULL, "v1", "secrets", hcpns, NULL, NULL);
    int rc = sync_send(&H.client, kube_create, path, s, NULL, &e);
    if (rc < 0)
        fprintf(stderr, "create secret in %s: %s\n", hcpns, e.message);
    return rc;
}

static const json_t *find_cond(const json_t *cv, const char *type)
{
    const json_t *conds = json_object_get(json_object_get(cv, "status"), "conditions");
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
    const char *v = json_string_value(json_object_get(o, k));
    return v ? v : "";
}

static const char *reason_of(const char *hc)
{
    static hosted_status_t st;
    if (hosted_status(P, ns, hc, &st) < 0)
        return "(unknown)";
    return st.reason;
}

/* Runs the loop until HostedCluster hc reaches `reason`; returns true then. */
static bool wait_reason(const char *hc, const char *reason, double seconds)
{
    double deadline = ev_time() + seconds;
    while (ev_time() < deadline) {
        if (strcmp(reason_of(hc), reason) == 0)
            return true;
        harness_run_for(&H, 0.1);
    }
    hosted_status_t st;
    if (hosted_status(P, ns, hc, &st) == 0)
        fprintf(stderr, "%s: still %s: %s\n", hc, st.reason, st.message);
    return false;
}

/* Runs until ClusterVersion's ChangesPaused has `status` and `message`. */
static json_t *wait_cv(const char *paused_status, const char *paused_message, double seconds)
{
    double deadline = ev_time() + seconds;
    while (ev_time() < deadline) {
        json_t *cv = sync_get(&hosted, CV_PATH, NULL);
        const json_t *c = cv ? find_cond(cv, "ChangesPaused") : NULL;
        if (c && strcmp(S(c, "status"), paused_status) == 0 &&
            strcmp(S(c, "message"), paused_message) == 0)
            return cv;
        json_decref(cv);
        harness_run_for(&H, 0.2);
    }
    return NULL;
}

static void on_change(const char *n, const char *name, void *ud)
{
    (void)n;
    (void)name;
    (void)ud;
    changes++;
}

static const hosted_conds_t WANT1 = {
    {true, "OutsideMaintenanceWindow", "Changes resume at 2026-03-01T02:00:00Z."},
    {true, "ChangesPending", "Release 4.17.1 is waiting for a window."}};
static const hosted_conds_t WANT2 = {
    {false, "InsideMaintenanceWindow", "Changes are permitted until 2026-03-01T06:00:00Z."},
    {true, "ChangesPending", "Release 4.17.1 is waiting for a window."}};

/* A token of the controller's ServiceAccount, asked by the test (admin). */
static char *sa_token(void)
{
    json_t *tr = json_pack("{s:s,s:s,s:{s:i}}", "apiVersion", "authentication.k8s.io/v1",
                           "kind", "TokenRequest", "spec", "expirationSeconds", 600);
    json_t *out = NULL;
    kube_error e;
    if (sync_send(&hosted, kube_create, SA_PATH "/token", tr, &out, &e) < 0) {
        fprintf(stderr, "TokenRequest: %s\n", e.message);
        return NULL;
    }
    char *t = strdup(S(json_object_get(out, "status"), "token"));
    json_decref(out);
    return t;
}

/* The HTTP status of a request made with the ServiceAccount's token. */
static int as_sa(const char *token, send_fn fn, const char *path, json_t *body)
{
    kube_config cfg = {0};
    kube_client c;
    kube_error e = {0};
    json_t *out = NULL;
    cfg.server = strdup(hosted_cfg.server);
    cfg.ca = malloc(hosted_cfg.ca_len + 1);
    memcpy(cfg.ca, hosted_cfg.ca, hosted_cfg.ca_len);
    cfg.ca[hosted_cfg.ca_len] = '\0';
    cfg.ca_len = hosted_cfg.ca_len;
    cfg.token = strdup(token);
    int code = 0;
    if (kube_client_init(&c, &H.http, &cfg,
                         &(kube_client_opts){.user_agent = "hcp-e2e-project", .max_retries = -1},
                         &e) == 0) {
        if (fn)
            code = sync_send(&c, fn, path, body, &out, &e) == 0 ? 200 : e.http_status;
        else {
            json_t *o = sync_get(&c, path, &e);
            code = o ? 200 : e.http_status;
            json_decref(o);
        }
        kube_client_close(&c);
    } else {
        json_decref(body);
    }
    json_decref(out);
    kube_config_free(&cfg);
    return code;
}

/* The hosted instance's audit events since setup, made with the user agent
 * of pkg/hosted (the test's own requests carry "hcp-e2e-project"). For each:
 * *sa counts those made as the controller's ServiceAccount, *admin those
 * made as anyone else, and *admin_cv those of them about ClusterVersions
 * (which must be none: the admin kubeconfig only sets the identity up).
 * False when the log is not there. */
static bool audit_counts(int *sa, int *admin, int *admin_cv)
{
    const char *path = getenv("HCP_E2E_HOSTED_AUDIT_LOG");
    FILE *f = path ? fopen(path, "r") : NULL;
    char *line = NULL;
    size_t cap = 0;
    *sa = *admin = *admin_cv = 0;
    if (!f)
        return false;
    while (getline(&line, &cap, f) > 0) {
        json_t *ev = json_loads(line, 0, NULL);
        const char *ua = S(ev, "userAgent"), *ts = S(ev, "requestReceivedTimestamp");
        sched_time_t t;
        if (ev && strncmp(ua, "hcp-controller", 14) == 0 && sched_parse_rfc3339(ts, &t) == 0 &&
            (double)t >= started - 1) {
            const char *user = S(json_object_get(ev, "user"), "username");
            const char *res = S(json_object_get(ev, "objectRef"), "resource");
            if (strcmp(user, SA_USER) == 0) {
                (*sa)++;
            } else {
                (*admin)++;
                if (strcmp(res, "clusterversions") == 0)
                    (*admin_cv)++;
            }
        }
        json_decref(ev);
    }
    free(line);
    fclose(f);
    return true;
}

/* ---- setup ----------------------------------------------------------------- */

static int setup(void **state)
{
    kube_error e;
    const char *ctl_kc = getenv("HCP_E2E_KUBECONFIG_CONTROLLER");
    const char *hosted_kc = getenv("HCP_E2E_HOSTED_KUBECONFIG");
    char path[256];
    (void)state;

    if (!ctl_kc || !hosted_kc) {
        fprintf(stderr, "HCP_E2E_KUBECONFIG_CONTROLLER and HCP_E2E_HOSTED_KUBECONFIG are "
                        "required (make e2e-project sets them)\n");
        return -1;
    }
    if (harness_init(&H, NULL) < 0)
        return -1;
    if (kube_config_load_file(&ctl_cfg, ctl_kc, NULL, &e) < 0 ||
        kube_client_init(&ctl_client, &H.http, &ctl_cfg, NULL, &e) < 0 ||
        kube_config_load_file(&hosted_cfg, hosted_kc, NULL, &e) < 0 ||
        kube_client_init(&hosted, &H.http, &hosted_cfg,
                         &(kube_client_opts){.user_agent = "hcp-e2e-project"}, &e) < 0) {
        fprintf(stderr, "setup: %s\n", e.message);
        return -1;
    }
    hosted_yaml = read_all(hosted_kc);
    if (!hosted_yaml)
        return -1;
    snprintf(ns, sizeof(ns), "prj-%d", (int)getpid());
    snprintf(role, sizeof(role), "hcp-e2e-project-%d", (int)getpid());
    if (harness_create_ns(&H, &H.client, ns) < 0)
        return -1;

    /* The controller's user may get the Secret by name, nothing else. */
    json_t *cr = json_pack(
        "{s:s, s:s, s:{s:s}, s:[{s:[s], s:[s], s:[s], s:[s]}]}", "apiVersion",
        "rbac.authorization.k8s.io/v1", "kind", "ClusterRole", "metadata", "name", role, "rules",
        "apiGroups", "", "resources", "secrets", "resourceNames", HOSTED_SECRET, "verbs",
        "get");
    json_t *crb = json_pack(
        "{s:s, s:s, s:{s:s}, s:{s:s, s:s, s:s}, s:[{s:s, s:s, s:s}]}", "apiVersion",
        "rbac.authorization.k8s.io/v1", "kind", "ClusterRoleBinding", "metadata", "name", role,
        "roleRef", "apiGroup", "rbac.authorization.k8s.io", "kind", "ClusterRole", "name", role,
        "subjects", "apiGroup", "rbac.authorization.k8s.io", "kind", "User", "name",
        "hcp-e2e-controller");
    if (sync_send(&H.client, kube_create, "/apis/rbac.authorization.k8s.io/v1/clusterroles", cr,
                  NULL, &e) < 0 ||
        sync_send(&H.client, kube_create,
                  "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", crb, NULL, &e) < 0) {
        fprintf(stderr, "setup RBAC: %s\n", e.message);
        return -1;
    }

    /* ClusterVersion `version` with the status the CVO would have written. */
    json_t *cv = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion", "config.openshift.io/v1",
                           "kind", "ClusterVersion", "metadata", "name", "version", "spec",
                           "clusterID", "0b7c4d46-4f2a-4bd4-9d3c-1c2e3b4a5d6e");
    int rc = sync_send(&hosted, kube_create, "/apis/config.openshift.io/v1/clusterversions", cv,
                       NULL, &e);
    if (rc < 0 && e.http_status != 409) {
        fprintf(stderr, "setup ClusterVersion: %s\n", e.message);
        return -1;
    }
    cv_created = rc == 0;
    json_t *st = json_pack(
        "{s:{s:{s:s, s:s}, s:i, s:s, s:[], s:[{s:s, s:s, s:s, s:s}]}}", "status", "desired",
        "image", "quay.io/x:4.17.0", "version", "4.17.0", "observedGeneration", 1, "versionHash",
        "abc", "availableUpdates", "conditions", "type", "Available", "status", "True",
        "lastTransitionTime", "2026-01-01T00:00:00Z", "message", "Done applying 4.17.0");
    if (sync_send(&hosted, kube_merge_patch_status, CV_PATH, st, NULL, &e) < 0) {
        fprintf(stderr, "seed ClusterVersion status: %s\n", e.message);
        return -1;
    }

    /* The Secret of hc1: the hosted instance's kubeconfig as is. */
    char *enc = b64(hosted_yaml, strlen(hosted_yaml));
    rc = enc ? put_secret("hc1", enc, false) : -1;
    free(enc);
    if (rc < 0)
        return -1;

    hosted_opts_t opts = {.rewrite_server = false, .leading = true, .recheck = 2.0,
                               .backoff_initial = 0.2, .backoff_max = 2.0,
                               .period = PERIOD, .max_in_flight = 2, .hosted_timeout = 3,
                               .token_ttl = 600, .on_change = on_change};
    started = ev_time();
    char err[256];
    (void)path;
    if (hosted_new(H.loop, &ctl_client, &opts, &P, err, sizeof(err)) < 0) {
        fprintf(stderr, "hosted_new: %s\n", err);
        return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    char path[256], hcpns[160];
    static const char *const hcs[] = {"hc1", "hc-bad", "hc-text", "hc-down", "hc-missing",
                                       "hc-fight", "sim-0", "sim-1", "sim-2"};
    (void)state;
    hosted_free(P);
    P = NULL;
    hostedsim_stop();
    if (cv_created) {
        sync_result r = {0};
        if (kube_delete(&hosted, CV_PATH, harness_store, &r, NULL) == 0)
            harness_wait(&H, &r, WAIT);
        sync_result_clear(&r);
    }
    for (size_t i = 0; i < sizeof(hcs) / sizeof(hcs[0]); i++) {
        snprintf(hcpns, sizeof(hcpns), "%s-%s", ns, hcs[i]);
        harness_delete_ns(&H, &H.client, hcpns);
    }
    harness_delete_ns(&H, &H.client, ns);
    static const char *const kinds[] = {"clusterrolebindings", "clusterroles"};
    for (size_t i = 0; i < 2; i++) {
        sync_result r = {0};
        snprintf(path, sizeof(path), "/apis/rbac.authorization.k8s.io/v1/%s/%s", kinds[i], role);
        if (kube_delete(&H.client, path, harness_store, &r, NULL) == 0)
            harness_wait(&H, &r, WAIT);
        sync_result_clear(&r);
    }
    kube_client_close(&hosted);
    kube_config_free(&hosted_cfg);
    kube_client_close(&ctl_client);
    kube_config_free(&ctl_cfg);
    free(hosted_yaml);
    harness_close(&H);
    return 0;
}

/* ---- tests --------------------------------------------------------------------- */

static sched_time_t t1, t2;

/* Our two conditions appear with the right values; Available is kept. */
static void test_projects_conditions(void **state)
{
    char err[256];
    (void)state;
    t1 = (sched_time_t)ev_time() - 3600;
    assert_int_equal(hosted_update(P, ns, "hc1", &WANT1, t1, err, sizeof(err)), 0);
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
    json_t *cv = wait_cv("True", WANT1.paused.message, 5);
    assert_non_null(cv);
    const json_t *paused = find_cond(cv, "ChangesPaused");
    const json_t *pending = find_cond(cv, "ChangesPending");
    const json_t *avail = find_cond(cv, "Available");
    assert_string_equal(S(paused, "reason"), "OutsideMaintenanceWindow");
    assert_string_equal(S(pending, "status"), "True");
    assert_string_equal(S(pending, "reason"), "ChangesPending");
    assert_string_equal(S(pending, "message"), WANT1.pending.message);
    char ts[32];
    sched_format_utc(t1, ts, sizeof(ts));
    assert_string_equal(S(paused, "lastTransitionTime"), ts);
    assert_non_null(avail);
    assert_string_equal(S(avail, "status"), "True");
    assert_string_equal(S(avail, "lastTransitionTime"), "2026-01-01T00:00:00Z");
    assert_string_equal(S(avail, "message"), "Done applying 4.17.0");
    /* The rest of the status is untouched. */
    assert_string_equal(S(json_object_get(cv, "status"), "versionHash"), "abc");
    json_decref(cv);
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc1", &st), 0);
    assert_true(st.ok);
    assert_int_equal(st.writes, 1);
    assert_true(changes >= 1);
}

/* The admin kubeconfig only set the controller's identity up: a
 * ServiceAccount whose ClusterRole grants get of ClusterVersion `version`
 * and patch of its status, nothing else; every ClusterVersion request was
 * made as that ServiceAccount (the API server's audit log says so), and a
 * write outside the grant is refused. */
static void test_identity_least_privilege(void **state)
{
    kube_error e;
    (void)state;
    json_t *cr = sync_get(&hosted, ROLE_PATH, &e);
    assert_non_null(cr);
    json_t *want = hosted_identity_object(HOSTED_ID_CLUSTERROLE);
    assert_true(json_equal(json_object_get(cr, "rules"), json_object_get(want, "rules")));
    json_decref(want);
    json_decref(cr);
    json_t *b = sync_get(&hosted, BINDING_PATH, &e);
    assert_non_null(b);
    const json_t *sub = json_array_get(json_object_get(b, "subjects"), 0);
    assert_string_equal(S(sub, "name"), HOSTED_SA_NAME);
    assert_string_equal(S(sub, "namespace"), HOSTED_SA_NAMESPACE);
    json_decref(b);

    char *tok = sa_token();
    assert_non_null(tok);
    assert_int_equal(as_sa(tok, NULL, CV_PATH, NULL), 200);
    assert_int_equal(as_sa(tok, kube_merge_patch_status, CV_PATH,
                           json_pack("{s:{}}", "status")), 200);
    /* The spec, another object, a Secret, a write of RBAC: refused. */
    assert_int_equal(as_sa(tok, kube_merge_patch, CV_PATH,
                           json_pack("{s:{s:s}}", "spec", "channel", "candidate-4.18")), 403);
    assert_int_equal(as_sa(tok, NULL, "/api/v1/namespaces/kube-system/secrets", NULL), 403);
    assert_int_equal(as_sa(tok, kube_create, "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                           json_pack("{s:s,s:s,s:{s:s},s:[]}", "apiVersion",
                                     "rbac.authorization.k8s.io/v1", "kind", "ClusterRole",
                                     "metadata", "name", "escalate", "rules")), 403);
    free(tok);

    const hosted_stats_t *s = hosted_stats(P);
    assert_true(s->tokens >= 1);
    assert_int_equal(s->identity_requests, 4 * s->tokens); /* four per set-up */
    int sa, admin, admin_cv;
    if (!audit_counts(&sa, &admin, &admin_cv))
        skip();
    printf("# audit: %d requests as %s, %d with the admin kubeconfig (set-ups: %llu)\n", sa,
           SA_USER, admin, (unsigned long long)s->tokens);
    assert_true(sa >= 2); /* at least a read and the patch */
    assert_int_equal(admin_cv, 0);
    assert_int_equal(admin, (int)s->identity_requests);
}

/* The token is renewed before it expires, in place: the same client (no
 * new connection state), the projection unaffected. A module of its own
 * that renews every RENEW seconds, beside the one the other tests use. */
static void test_token_renewed_in_place(void **state)
{
    hosted_opts_t opts = {.leading = true, .recheck = 30, .period = PERIOD,
                          .hosted_timeout = 3, .token_ttl = 600, .token_renew = RENEW};
    hosted_t *p2 = NULL;
    char err[256];
    (void)state;
    assert_int_equal(hosted_new(H.loop, &ctl_client, &opts, &p2, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(p2, ns, "hc1", &WANT2, t2, err, sizeof(err)), 0);
    const hosted_stats_t *s = hosted_stats(p2);
    double deadline = ev_time() + WAIT;
    hosted_status_t st = {0};
    while (ev_time() < deadline && (hosted_status(p2, ns, "hc1", &st) < 0 || !st.ok))
        harness_run_for(&H, 0.1);
    assert_true(st.ok);
    harness_run_for(&H, 3 * RENEW + 1);
    uint64_t renewals = s->renewals, clients = s->clients, writes = s->writes;
    hosted_free(p2);
    printf("# renewals in %.0f s: %llu (every %.0f s), clients built: %llu\n", 3 * RENEW + 1,
           (unsigned long long)renewals, RENEW, (unsigned long long)clients);
    if (renewals < 2)
        fail_msg("%llu renewals in %.0f s", (unsigned long long)renewals, 3 * RENEW + 1);
    assert_int_equal(clients, 1);
    assert_int_equal(writes, 0); /* the same conditions as the other module's */
    assert_string_equal(reason_of("hc1"), HOSTED_PROJECTED);
}

/* Someone deletes the binding, then the ServiceAccount: the hosted API
 * server refuses the token (403, then 401), the set-up is put back from the
 * Secret, and conditions dropped meanwhile come back. */
static void test_identity_put_back(void **state)
{
    kube_error e;
    static const char *const paths[] = {BINDING_PATH, SA_PATH};
    (void)state;
    for (int i = 0; i < 2; i++) {
        uint64_t tokens = hosted_stats(P)->tokens, refused = hosted_stats(P)->refused;
        sync_result r = {0};
        assert_int_equal(kube_delete(&hosted, paths[i], harness_store, &r, NULL), 0);
        assert_int_equal(harness_wait(&H, &r, WAIT), 0);
        sync_result_clear(&r);
        json_t *patch = json_pack("{s:{s:[{s:s, s:s, s:s}]}}", "status", "conditions", "type",
                                  "Available", "status", "True", "lastTransitionTime",
                                  "2026-01-01T00:00:00Z");
        assert_int_equal(sync_send(&hosted, kube_merge_patch_status, CV_PATH, patch, NULL, &e),
                         0);
        /* The API server keeps a token's authentication 10 s: a deleted
         * ServiceAccount's token is refused (401) only after that. */
        double deadline = ev_time() + WAIT;
        while (hosted_stats(P)->tokens == tokens && ev_time() < deadline)
            harness_run_for(&H, 0.2);
        json_t *back = sync_get(&hosted, paths[i], &e);
        assert_non_null(back);
        json_decref(back);
        json_t *cv = wait_cv("False", WANT2.paused.message, WAIT);
        assert_non_null(cv);
        json_decref(cv);
        assert_true(hosted_stats(P)->refused > refused); /* put back because it was refused */
        assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
    }
}

/* The same conditions again (a later `now`, re-reads of the Secret
 * meanwhile) send nothing; the ClusterVersion is read once per period. */
static void test_steady_state_zero_writes(void **state)
{
    char err[256];
    (void)state;
    const hosted_stats_t *s = hosted_stats(P);
    uint64_t writes = s->writes, reads = s->secret_reads, clients = s->clients;
    uint64_t cv_reads = s->reads;
    for (int i = 0; i < 5; i++) {
        assert_int_equal(hosted_update(P, ns, "hc1", &WANT1, t1 + 600 * i, err,
                                            sizeof(err)), 0);
        harness_run_for(&H, 1.0);
    }
    assert_int_equal(s->writes, writes);
    /* 5 s at one read per 1.6..2 s; a watch would read nothing, a poll
     * without the period many more. */
    if (s->reads - cv_reads < 2 || s->reads - cv_reads > 4)
        fail_msg("%llu ClusterVersion reads in 5 s", (unsigned long long)(s->reads - cv_reads));
    assert_true(s->secret_reads > reads); /* recheck every ~2 s */
    assert_int_equal(s->clients, clients); /* same kubeconfig: same client */
    assert_string_equal(reason_of("hc1"), HOSTED_PROJECTED);
}

/* A new decision rewrites ChangesPaused (new transition time) and leaves
 * ChangesPending's transition time alone. */
static void test_changed_conditions(void **state)
{
    char err[256], ts1[32], ts2[32];
    (void)state;
    json_t *before = sync_get(&hosted, CV_PATH, NULL);
    assert_non_null(before);
    char pending_ltt[64];
    snprintf(pending_ltt, sizeof(pending_ltt), "%s",
             S(find_cond(before, "ChangesPending"), "lastTransitionTime"));
    json_decref(before);

    t2 = t1 + 1800;
    assert_int_equal(hosted_update(P, ns, "hc1", &WANT2, t2, err, sizeof(err)), 0);
    json_t *cv = wait_cv("False", WANT2.paused.message, WAIT);
    assert_non_null(cv);
    const json_t *paused = find_cond(cv, "ChangesPaused");
    sched_format_utc(t1, ts1, sizeof(ts1));
    sched_format_utc(t2, ts2, sizeof(ts2));
    assert_string_equal(S(paused, "reason"), "InsideMaintenanceWindow");
    assert_string_equal(S(paused, "lastTransitionTime"), ts2);
    assert_string_equal(S(find_cond(cv, "ChangesPending"), "lastTransitionTime"), pending_ltt);
    assert_non_null(find_cond(cv, "Available"));
    json_decref(cv);
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc1", &st), 0);
    assert_int_equal(st.writes, 2);
}

/* Another writer replaces the conditions list without ours: re-asserted
 * by the next check, within one period. */
static void test_reasserted_after_removal(void **state)
{
    kube_error e;
    (void)state;
    uint64_t reasserts = hosted_stats(P)->reasserts;
    json_t *patch = json_pack("{s:{s:[{s:s, s:s, s:s}]}}", "status", "conditions", "type",
                              "Available", "status", "True", "lastTransitionTime",
                              "2026-01-01T00:00:00Z");
    assert_int_equal(sync_send(&hosted, kube_merge_patch_status, CV_PATH, patch, NULL, &e), 0);
    double t0 = ev_time();
    json_t *cv = wait_cv("False", WANT2.paused.message, WAIT);
    assert_non_null(cv);
    if (ev_time() - t0 > PERIOD + 1)
        fail_msg("restored after %.1f s (period %.0f s)", ev_time() - t0, PERIOD);
    assert_non_null(find_cond(cv, "ChangesPending"));
    assert_non_null(find_cond(cv, "Available"));
    json_decref(cv);
    assert_int_equal(hosted_stats(P)->reasserts, reasserts + 1);

    /* And one that only changes our message. */
    cv = sync_get(&hosted, CV_PATH, NULL);
    assert_non_null(cv);
    json_t *conds = json_deep_copy(json_object_get(json_object_get(cv, "status"), "conditions"));
    size_t i;
    json_t *c;
    json_array_foreach(conds, i, c) {
        if (strcmp(S(c, "type"), "ChangesPaused") == 0)
            json_object_set_new(c, "message", json_string("tampered"));
    }
    json_decref(cv);
    patch = json_pack("{s:{s:o}}", "status", "conditions", conds);
    assert_int_equal(sync_send(&hosted, kube_merge_patch_status, CV_PATH, patch, NULL, &e), 0);
    harness_run_for(&H, 0.5);
    cv = wait_cv("False", WANT2.paused.message, WAIT);
    assert_non_null(cv);
    json_decref(cv);
    assert_int_equal(hosted_stats(P)->reasserts, reasserts + 2);
}

/* No Secret (its namespace does not even exist): a state, no crash. */
static void test_missing_secret(void **state)
{
    char err[256];
    (void)state;
    assert_int_equal(hosted_update(P, ns, "hc-missing", &WANT1, t1, err, sizeof(err)), 0);
    assert_true(wait_reason("hc-missing", HOSTED_SECRET_NOT_FOUND, WAIT));
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc-missing", &st), 0);
    assert_false(st.ok);
    assert_non_null(strstr(st.message, "not found"));
}

/* A Secret whose kubeconfig is not YAML, one that is not base64, and one
 * whose server does not answer. The healthy HostedCluster is unaffected. */
static void test_broken_secrets(void **state)
{
    char err[256];
    const char *garbage = "clusters: [ {{ not yaml";
    const char *down = "clusters:\n- name: c\n  cluster:\n    server: https://127.0.0.1:1\n"
                       "users:\n- name: u\n  user:\n    token: t\n"
                       "contexts:\n- name: x\n  context: {cluster: c, user: u}\n"
                       "current-context: x\n";
    (void)state;
    char *enc = b64(garbage, strlen(garbage));
    int rc = put_secret("hc-bad", enc, false);
    free(enc);
    assert_int_equal(rc, 0);
    assert_int_equal(put_secret("hc-text", "bm90IGJhc2U2NA==", false), 0); /* "not base64" */
    enc = b64(down, strlen(down));
    rc = put_secret("hc-down", enc, false);
    free(enc);
    assert_int_equal(rc, 0);
    /* Invalid base64 cannot be stored in .data (the API server checks), so
     * the second Secret holds valid base64 of text that is not a kubeconfig. */
    assert_int_equal(hosted_update(P, ns, "hc-bad", &WANT1, t1, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "hc-text", &WANT1, t1, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "hc-down", &WANT1, t1, err, sizeof(err)), 0);
    assert_true(wait_reason("hc-bad", HOSTED_KUBECONFIG_INVALID, WAIT));
    assert_true(wait_reason("hc-text", HOSTED_KUBECONFIG_INVALID, WAIT));
    assert_true(wait_reason("hc-down", HOSTED_UNREACHABLE, WAIT));
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc-bad", &st), 0);
    assert_non_null(strstr(st.message, "YAML"));
    assert_int_equal(hosted_status(P, ns, "hc-down", &st), 0);
    assert_non_null(strstr(st.message, "127.0.0.1:1"));
    assert_string_equal(reason_of("hc1"), HOSTED_PROJECTED);

    /* No message carries a per-attempt detail (buffer address, timing),
     * so a repeated failure reads the same every time. */
    assert_null(strstr(st.message, " ms"));
    assert_int_equal(hosted_status(P, ns, "hc-bad", &st), 0);
    assert_null(strstr(st.message, "0x"));

    /* Fixing a Secret is picked up by the next read. (hc-bad now names the
     * same hosted cluster as hc1, so it wants the same conditions.) */
    assert_int_equal(hosted_update(P, ns, "hc-bad", &WANT2, t2, err, sizeof(err)), 0);
    enc = b64(hosted_yaml, strlen(hosted_yaml));
    rc = put_secret("hc-bad", enc, true);
    free(enc);
    assert_int_equal(rc, 0);
    assert_true(wait_reason("hc-bad", HOSTED_PROJECTED, WAIT));
    hosted_forget(P, ns, "hc-bad");
}

/* A rotated kubeconfig (other credentials for the same server: a client
 * certificate) sets the identity up again with them, the new token put in
 * place in the same client; nothing is written because nothing differs, and
 * the certificate was used for the set-up alone (the audit log). */
static void test_rotated_kubeconfig(void **state)
{
    const char *cert_kc = getenv("HCP_E2E_HOSTED_KUBECONFIG_CERT");
    (void)state;
    if (!cert_kc)
        skip();
    char *yaml = read_all(cert_kc);
    assert_non_null(yaml);
    char *enc = b64(yaml, strlen(yaml));
    free(yaml);
    const hosted_stats_t *s = hosted_stats(P);
    uint64_t clients = s->clients, tokens = s->tokens;
    hosted_status_t st0, st;
    assert_int_equal(hosted_status(P, ns, "hc1", &st0), 0);
    int rc = put_secret("hc1", enc, true);
    free(enc);
    assert_int_equal(rc, 0);
    double deadline = ev_time() + WAIT;
    while (s->tokens == tokens && ev_time() < deadline)
        harness_run_for(&H, 0.2);
    assert_true(s->tokens > tokens);
    assert_int_equal(s->clients, clients); /* same server and CA: the token swapped */
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
    harness_run_for(&H, 2 * PERIOD);
    assert_int_equal(hosted_status(P, ns, "hc1", &st), 0);
    assert_int_equal(st.writes, st0.writes);
    int sa, admin, admin_cv;
    if (!audit_counts(&sa, &admin, &admin_cv))
        return;
    printf("# audit: %d requests as the ServiceAccount, %d with an admin kubeconfig "
           "(token and certificate; set-ups: %llu)\n",
           sa, admin, (unsigned long long)s->tokens);
    assert_int_equal(admin_cv, 0); /* the certificate set the identity up, nothing else */
    assert_true(admin >= 8);       /* a set-up with each admin kubeconfig */
}

/* A follower writes nothing; becoming the leader catches up. */
static void test_only_leader_writes(void **state)
{
    kube_error e;
    (void)state;
    hosted_set_leading(P, false);
    uint64_t writes = hosted_stats(P)->writes;
    json_t *patch = json_pack("{s:{s:[{s:s, s:s, s:s}]}}", "status", "conditions", "type",
                              "Available", "status", "True", "lastTransitionTime",
                              "2026-01-01T00:00:00Z");
    assert_int_equal(sync_send(&hosted, kube_merge_patch_status, CV_PATH, patch, NULL, &e), 0);
    assert_true(wait_reason("hc1", HOSTED_PENDING, WAIT));
    harness_run_for(&H, 1.0);
    assert_int_equal(hosted_stats(P)->writes, writes);
    json_t *cv = sync_get(&hosted, CV_PATH, NULL);
    assert_null(find_cond(cv, "ChangesPaused"));
    json_decref(cv);
    hosted_set_leading(P, true);
    cv = wait_cv("False", WANT2.paused.message, WAIT);
    assert_non_null(cv);
    json_decref(cv);
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
}

/* Two writers that keep undoing each other (here: a second entry naming the
 * same hosted cluster with other conditions) are paced by the period
 * instead of ping-ponging at the client's full request rate. */
static void test_fight_is_paced(void **state)
{
    char err[256];
    (void)state;
    char *enc = b64(hosted_yaml, strlen(hosted_yaml));
    int rc = put_secret("hc-fight", enc, false);
    free(enc);
    assert_int_equal(rc, 0);
    uint64_t writes = hosted_stats(P)->writes;
    assert_int_equal(hosted_update(P, ns, "hc-fight", &WANT1, t1, err, sizeof(err)), 0);
    harness_run_for(&H, 5.0);
    uint64_t n = hosted_stats(P)->writes - writes;
    hosted_forget(P, ns, "hc-fight");
    /* Unpaced, two clients at 5 QPS each write about 50 times in 5 s; at
     * one check per 1.6..2 s each, at most 8. */
    assert_true(n >= 2);
    if (n > 8)
        fail_msg("%llu writes in 5 s of fighting", (unsigned long long)n);
    assert_true(hosted_stats(P)->reasserts >= 1);
    json_t *cv = wait_cv("False", WANT2.paused.message, WAIT);
    assert_non_null(cv);
    json_decref(cv);
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
}

/* The HostedCluster opts out: our conditions leave its ClusterVersion and
 * the ServiceAccount, the ClusterRole and the binding leave the hosted
 * cluster (the admin kubeconfig read again for it). Opting in again sets it
 * all up again. */
static void test_retired_on_opt_out(void **state)
{
    kube_error e;
    char err[256];
    (void)state;
    uint64_t retired = hosted_stats(P)->retired;
    hosted_retire(P, ns, "hc1");
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc1", &st), HCP_EINVAL);
    double deadline = ev_time() + WAIT;
    while (hosted_stats(P)->retired == retired && ev_time() < deadline)
        harness_run_for(&H, 0.1);
    assert_int_equal(hosted_stats(P)->retired, retired + 1);
    static const char *const paths[] = {SA_PATH, ROLE_PATH, BINDING_PATH};
    for (int i = 0; i < 3; i++) {
        json_t *o = sync_get(&hosted, paths[i], &e);
        assert_null(o);
        assert_int_equal(e.http_status, 404);
    }
    json_t *cv = sync_get(&hosted, CV_PATH, NULL);
    assert_non_null(cv);
    assert_null(find_cond(cv, "ChangesPaused"));
    assert_null(find_cond(cv, "ChangesPending"));
    assert_non_null(find_cond(cv, "Available")); /* the others' conditions stay */
    json_decref(cv);

    assert_int_equal(hosted_update(P, ns, "hc1", &WANT2, t2, err, sizeof(err)), 0);
    assert_true(wait_reason("hc1", HOSTED_PROJECTED, WAIT));
    json_t *sa = sync_get(&hosted, SA_PATH, &e);
    assert_non_null(sa);
    json_decref(sa);

    /* A name never projected for: nothing is read or removed. */
    hosted_retire(P, ns, "hc-never");
    harness_run_for(&H, 1.0);
    assert_int_equal(hosted_stats(P)->retired, retired + 1);
    sa = sync_get(&hosted, SA_PATH, &e);
    assert_non_null(sa);
    json_decref(sa);
}

/* The ClusterVersion disappears: ClusterVersionNotFound (only when this
 * run created it, so a shared one is left alone). Then forget. */
static void test_cv_deleted_and_forget(void **state)
{
    (void)state;
    if (cv_created) {
        sync_result r = {0};
        assert_int_equal(kube_delete(&hosted, CV_PATH, harness_store, &r, NULL), 0);
        assert_int_equal(harness_wait(&H, &r, WAIT), 0);
        sync_result_clear(&r);
        cv_created = false;
        assert_true(wait_reason("hc1", HOSTED_CV_NOT_FOUND, WAIT));
    }
    hosted_forget(P, ns, "hc1");
    hosted_status_t st;
    assert_int_equal(hosted_status(P, ns, "hc1", &st), HCP_EINVAL);
    harness_run_for(&H, 0.5);
}

/* Three hosted API servers (e2e/hostedsim); one is blackholed: it accepts
 * connections and never answers. With two checks in flight at most, the
 * other two still get new conditions at once, the blackholed one reports
 * HostedAPIUnreachable after the request timeout and catches up when it
 * answers again. Then one answers 429 and one 500: the same. */
static void test_blackholed_server_isolated(void **state)
{
    char err[256], dir[256], hc[16];
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/e2e-project-sim.%d", (int)getpid());
    hostedsim_start(3, dir);
    for (int i = 0; i < 3; i++) {
        char *enc = hostedsim_kubeconfig_b64(i);
        assert_non_null(enc);
        snprintf(hc, sizeof(hc), "sim-%d", i);
        int rc = put_secret(hc, enc, false);
        free(enc);
        assert_int_equal(rc, 0);
        assert_int_equal(hosted_update(P, ns, hc, &WANT1, t1, err, sizeof(err)), 0);
    }
    for (int i = 0; i < 3; i++) {
        snprintf(hc, sizeof(hc), "sim-%d", i);
        assert_true(wait_reason(hc, HOSTED_PROJECTED, WAIT));
    }
    hostedsim_stats_t st;
    assert_int_equal(hostedsim_stats(0, &st), 0);
    assert_int_equal(st.projected, 3);

    assert_int_equal(hostedsim_mode(1, "blackhole"), 0);
    /* sim-1 first, so its check takes a slot before the others. */
    assert_int_equal(hosted_update(P, ns, "sim-1", &WANT2, t2, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "sim-0", &WANT2, t2, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "sim-2", &WANT2, t2, err, sizeof(err)), 0);
    double t0 = ev_time();
    assert_true(wait_reason("sim-0", HOSTED_PROJECTED, WAIT));
    assert_true(wait_reason("sim-2", HOSTED_PROJECTED, WAIT));
    hosted_status_t s0, s2;
    assert_int_equal(hosted_status(P, ns, "sim-0", &s0), 0);
    assert_int_equal(hosted_status(P, ns, "sim-2", &s2), 0);
    if (ev_time() - t0 > 1.5)
        fail_msg("the answering servers took %.1f s beside a blackholed one", ev_time() - t0);
    assert_string_equal(reason_of("sim-1"), HOSTED_PENDING);
    assert_true(wait_reason("sim-1", HOSTED_UNREACHABLE, WAIT));
    hosted_status_t s1;
    assert_int_equal(hosted_status(P, ns, "sim-1", &s1), 0);
    assert_non_null(strstr(s1.message, "Hosted API server https://127.0.0.1:"));
    assert_string_equal(reason_of("sim-0"), HOSTED_PROJECTED);

    assert_int_equal(hostedsim_mode(1, "ok"), 0);
    assert_true(wait_reason("sim-1", HOSTED_PROJECTED, WAIT));

    /* Refusing (429) and failing (500) servers: the same isolation. */
    assert_int_equal(hostedsim_mode(1, "429"), 0);
    assert_int_equal(hostedsim_mode(2, "500"), 0);
    assert_int_equal(hosted_update(P, ns, "sim-1", &WANT1, t1, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "sim-2", &WANT1, t1, err, sizeof(err)), 0);
    assert_int_equal(hosted_update(P, ns, "sim-0", &WANT1, t1, err, sizeof(err)), 0);
    assert_true(wait_reason("sim-0", HOSTED_PROJECTED, 2));
    assert_true(wait_reason("sim-1", HOSTED_UNREACHABLE, WAIT));
    assert_true(wait_reason("sim-2", HOSTED_UNREACHABLE, WAIT));
    assert_int_equal(hosted_status(P, ns, "sim-2", &s2), 0);
    assert_non_null(strstr(s2.message, "InternalError"));
    assert_int_equal(hostedsim_mode(1, "ok"), 0);
    assert_int_equal(hostedsim_mode(2, "ok"), 0);
    assert_true(wait_reason("sim-1", HOSTED_PROJECTED, WAIT));
    assert_true(wait_reason("sim-2", HOSTED_PROJECTED, WAIT));
    for (int i = 0; i < 3; i++) {
        snprintf(hc, sizeof(hc), "sim-%d", i);
        hosted_forget(P, ns, hc);
    }
    harness_run_for(&H, 0.5);
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projects_conditions),
        cmocka_unit_test(test_identity_least_privilege),
        cmocka_unit_test(test_steady_state_zero_writes),
        cmocka_unit_test(test_changed_conditions),
        cmocka_unit_test(test_reasserted_after_removal),
        cmocka_unit_test(test_missing_secret),
        cmocka_unit_test(test_broken_secrets),
        cmocka_unit_test(test_rotated_kubeconfig),
        cmocka_unit_test(test_only_leader_writes),
        cmocka_unit_test(test_fight_is_paced),
        cmocka_unit_test(test_identity_put_back),
        cmocka_unit_test(test_token_renewed_in_place),
        cmocka_unit_test(test_retired_on_opt_out),
        cmocka_unit_test(test_cv_deleted_and_forget),
        cmocka_unit_test(test_blackholed_server_isolated),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
