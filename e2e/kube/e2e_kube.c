/*
 * pkg/kube against the local cluster (make cluster-up): list + watch,
 * 410 Gone and relist, bookmarks, TLS/auth/RBAC errors, apiserver restart,
 * large paginated lists beside other streams, requests (create, merge patch,
 * status patch, apply, delete) and discovery.
 *
 * Cluster hooks come from the environment (set by e2e/kube/kube.mk):
 *   HCP_E2E_KUBECONFIG   admin kubeconfig
 *   HCP_E2E_COMPACT      command that compacts etcd to its current revision
 *   HCP_E2E_RESTART      command that kills and restarts the kube-apiserver
 * A test whose hook is missing is skipped.
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

#include "harness.h"
#include "kube/discovery.h"

static harness H;
static char run_id[32];

/* ---- an event log fed by cache callbacks ---------------------------------- */

typedef struct evlog {
    char lines[512][128];
    int n;
    bool synced;
} evlog;

static void log_line(evlog *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void log_line(evlog *l, const char *fmt, ...)
{
    va_list ap;

    if (l->n >= 512)
        return;
    va_start(ap, fmt);
    vsnprintf(l->lines[l->n++], sizeof(l->lines[0]), fmt, ap);
    va_end(ap);
}

/* The slim struct: just the value of data.v, to see which version we hold. */
static int extract(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    const char *v = json_string_value(json_object_get(json_object_get(obj, "data"), "v"));

    (void)ud;
    *out = (void *)(v ? kube_intern_get(strings, v) : NULL);
    return 0;
}

static void release(void *data, kube_intern *strings, void *ud)
{
    (void)ud;
    kube_intern_put(strings, data);
}

static const char *v_of(const kube_obj *o)
{
    return o->data ? (const char *)o->data : "-";
}

static void on_add(const kube_obj *o, void *ud)
{
    log_line(ud, "add %s v=%s", o->name, v_of(o));
}

static void on_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    log_line(ud, "update %s v=%s->%s", o->name, v_of(old), v_of(o));
}

static void on_delete(const kube_obj *old, void *ud)
{
    log_line(ud, "delete %s v=%s", old->name, v_of(old));
}

static const kube_cache_ops log_ops = {extract, release, on_add, on_update, on_delete};

static void on_synced(kube_watch *w, void *ud)
{
    (void)w;
    ((evlog *)ud)->synced = true;
}

static void on_error(kube_watch *w, const kube_error *err, void *ud)
{
    (void)w;
    (void)ud;
    fprintf(stderr, "  watch: HTTP %d %s: %s\n", err->http_status, err->reason, err->message);
}

static int count_lines(const evlog *l, const char *prefix)
{
    int i, n = 0;

    for (i = 0; i < l->n; i++)
        n += strncmp(l->lines[i], prefix, strlen(prefix)) == 0;
    return n;
}

/* Runs the loop until the log has at least n lines. */
static bool wait_lines(evlog *l, int n, double seconds)
{
    double deadline = ev_time() + seconds;

    while (l->n < n && ev_time() < deadline)
        harness_run_for(&H, 0.05);
    return l->n >= n;
}

static void dump(const evlog *l)
{
    int i;

    for (i = 0; i < l->n; i++)
        fprintf(stderr, "  [%d] %s\n", i, l->lines[i]);
}

/* ---- synchronous request helpers ------------------------------------------- */

static void cm_path(char *buf, size_t len, const char *ns, const char *name)
{
    assert_int_equal(kube_path(buf, len, "", "v1", "configmaps", ns, name, NULL), 0);
}

static int cm_create(kube_client *c, const char *ns, const char *name, const char *v,
                     kube_error *out)
{
    sync_result r = {0};
    char path[256];
    json_t *obj = json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                            "metadata", "name", name, "data", "v", v);
    int rc;

    cm_path(path, sizeof(path), ns, NULL);
    rc = kube_create(c, path, obj, harness_store, &r, out);
    json_decref(obj);
    if (rc == 0)
        rc = harness_wait(&H, &r, 30);
    if (out)
        *out = r.err;
    sync_result_clear(&r);
    return rc;
}

/* Merge-patches the object at `path` (takes the reference to `patch`) and
 * waits for the answer, running the loop meanwhile; says why on failure. */
static int merge_patch_sync(const char *path, json_t *patch)
{
    sync_result r = {0};
    int rc = kube_merge_patch(&H.client, path, patch, harness_store, &r, NULL);

    json_decref(patch);
    if (rc == 0)
        rc = harness_wait(&H, &r, 30);
    if (rc < 0)
        fprintf(stderr, "patch %s: %s\n", path, r.err.message);
    sync_result_clear(&r);
    return rc;
}

static int cm_patch(const char *ns, const char *name, const char *v)
{
    char path[256];

    cm_path(path, sizeof(path), ns, name);
    return merge_patch_sync(path, json_pack("{s:{s:s}}", "data", "v", v));
}

static int cm_delete(const char *ns, const char *name)
{
    sync_result r = {0};
    char path[256];
    int rc;

    cm_path(path, sizeof(path), ns, name);
    rc = kube_delete(&H.client, path, harness_store, &r, NULL);
    if (rc == 0)
        rc = harness_wait(&H, &r, 30);
    sync_result_clear(&r);
    return rc;
}

static void make_ns(char *ns, size_t len, const char *what)
{
    snprintf(ns, len, "kube-e2e-%s-%s", run_id, what);
    assert_int_equal(harness_create_ns(&H, &H.client, ns), 0);
}

static void start_watch(kube_watch *w, kube_cache *cache, evlog *l, const char *ns,
                        int timeout_min)
{
    kube_watch_opts o;
    kube_error e;
    char path[256];

    memset(&o, 0, sizeof(o));
    cm_path(path, sizeof(path), ns, NULL);
    o.path = path;
    o.timeout_min = timeout_min;
    o.page_size = 2; /* exercise continue tokens */
    o.on_synced = on_synced;
    o.on_error = on_error;
    o.ud = l;
    o.backoff_initial = 0.2;
    o.backoff_max = 2;
    assert_int_equal(kube_watch_start(w, &H.client, cache, &o, &e), 0);
}

/* ---- tests ----------------------------------------------------------------- */

static void test_list_watch_sees_changes_in_order(void **state)
{
    static evlog l;
    kube_cache cache;
    kube_watch w;
    char ns[128];

    (void)state;
    memset(&l, 0, sizeof(l));
    make_ns(ns, sizeof(ns), "order");
    assert_int_equal(cm_create(&H.client, ns, "pre1", "1", NULL), 0);
    assert_int_equal(cm_create(&H.client, ns, "pre2", "1", NULL), 0);
    assert_int_equal(cm_create(&H.client, ns, "pre3", "1", NULL), 0);
    assert_int_equal(kube_cache_init(&cache, &log_ops, &l), 0);
    start_watch(&w, &cache, &l, ns, 60);
    assert_true(harness_run_until(&H, &l.synced, 30));
    assert_int_equal(l.n, 3); /* three pages of two */
    assert_true(w.stats.lists >= 2);
    l.n = 0;
    assert_int_equal(cm_create(&H.client, ns, "a", "1", NULL), 0);
    assert_int_equal(cm_patch(ns, "a", "2"), 0);
    assert_int_equal(cm_patch(ns, "a", "3"), 0);
    assert_int_equal(cm_delete(ns, "a"), 0);
    assert_true(wait_lines(&l, 4, 20));
    harness_run_for(&H, 0.3); /* nothing more may arrive */
    dump(&l);
    assert_int_equal(l.n, 4);
    assert_string_equal(l.lines[0], "add a v=1");
    assert_string_equal(l.lines[1], "update a v=1->2");
    assert_string_equal(l.lines[2], "update a v=2->3");
    assert_string_equal(l.lines[3], "delete a v=3");
    assert_int_equal(kube_cache_count(&cache), 3);
    kube_watch_stop(&w);
    kube_cache_free(&cache);
}

static void test_410_relists_without_loss_or_duplicates(void **state)
{
    static evlog l;
    kube_cache cache;
    kube_watch w;
    char ns[128], old_rv[64];
    const char *compact = getenv("HCP_E2E_COMPACT"), *restart = getenv("HCP_E2E_RESTART");
    kube_watch_opts o;
    kube_error e;
    char path[256];

    (void)state;
    memset(&l, 0, sizeof(l));
    make_ns(ns, sizeof(ns), "gone");
    assert_int_equal(cm_create(&H.client, ns, "x1", "1", NULL), 0);
    assert_int_equal(cm_create(&H.client, ns, "x2", "1", NULL), 0);
    assert_int_equal(cm_create(&H.client, ns, "x3", "1", NULL), 0);
    assert_int_equal(kube_cache_init(&cache, &log_ops, &l), 0);
    start_watch(&w, &cache, &l, ns, 60);
    assert_true(harness_run_until(&H, &l.synced, 30));
    snprintf(old_rv, sizeof(old_rv), "%s", w.rv);
    kube_watch_stop(&w); /* the cache keeps its contents */
    l.n = 0;

    /* Changes the old resourceVersion will no longer be able to replay. */
    assert_int_equal(cm_create(&H.client, ns, "x4", "1", NULL), 0);
    assert_int_equal(cm_patch(ns, "x1", "2"), 0);
    assert_int_equal(cm_delete(ns, "x2"), 0);
    /*
     * Compact etcd so the old revision is gone from storage, and restart the
     * apiserver so its watch cache starts after it as well: resuming from
     * old_rv must now fail with 410 Gone whichever layer answers.
     */
    if (compact == NULL || compact[0] == '\0' || restart == NULL || restart[0] == '\0') {
        fprintf(stderr, "  HCP_E2E_COMPACT or HCP_E2E_RESTART unset\n");
        kube_cache_free(&cache);
        skip();
    }
    assert_int_equal(harness_sh("%s >/dev/null", compact), 0);
    assert_int_equal(harness_sh("%s >/dev/null", restart), 0);

    memset(&o, 0, sizeof(o));
    cm_path(path, sizeof(path), ns, NULL);
    o.path = path;
    o.timeout_min = 60;
    o.on_synced = on_synced;
    o.on_error = on_error;
    o.ud = &l;
    o.backoff_initial = 0.2;
    o.resume_rv = old_rv;
    assert_int_equal(kube_watch_start(&w, &H.client, &cache, &o, &e), 0);
    assert_true(wait_lines(&l, 3, 30));
    harness_run_for(&H, 0.5);
    dump(&l);
    assert_true(w.stats.gone >= 1);
    assert_true(w.stats.relists >= 1);
    assert_int_equal(l.n, 3);
    assert_int_equal(count_lines(&l, "update x1 v=1->2"), 1);
    assert_int_equal(count_lines(&l, "add x4 v=1"), 1);
    assert_int_equal(count_lines(&l, "delete x2 v=1"), 1);
    /* And the watch is live again afterwards. */
    l.n = 0;
    assert_int_equal(cm_patch(ns, "x3", "5"), 0);
    assert_true(wait_lines(&l, 1, 20));
    assert_string_equal(l.lines[0], "update x3 v=1->5");
    kube_watch_stop(&w);
    kube_cache_free(&cache);
}

static void test_bookmarks_advance_resource_version(void **state)
{
    static evlog l;
    kube_cache cache;
    kube_watch w;
    char ns[128], other[128], rv0[64];
    double deadline;

    (void)state;
    memset(&l, 0, sizeof(l));
    make_ns(ns, sizeof(ns), "quiet");
    make_ns(other, sizeof(other), "busy");
    assert_int_equal(kube_cache_init(&cache, &log_ops, &l), 0);
    start_watch(&w, &cache, &l, ns, 3); /* timeoutSeconds 3..6: bookmark shortly before */
    assert_true(harness_run_until(&H, &l.synced, 30));
    snprintf(rv0, sizeof(rv0), "%s", w.rv);
    assert_int_equal(cm_create(&H.client, other, "elsewhere", "1", NULL), 0);
    /* The API server's watch cache sends them on a ticker of about a
     * second, 2 s before each watch's deadline: on a busy machine a watch
     * can end before its turn comes, so several are given time. */
    deadline = ev_time() + 45;
    while (w.stats.bookmarks == 0 && ev_time() < deadline)
        harness_run_for(&H, 0.1);
    fprintf(stderr, "  rv %s -> %s after %lu bookmark(s), %lu watch(es), %lu restart(s)\n", rv0,
            w.rv, (unsigned long)w.stats.bookmarks, (unsigned long)w.stats.watches,
            (unsigned long)w.stats.restarts);
    assert_true(w.stats.bookmarks >= 1);
    assert_int_equal(w.stats.events, 0);
    assert_int_equal(l.n, 0);
    assert_true(strtoull(w.rv, NULL, 10) > strtoull(rv0, NULL, 10));
    kube_watch_stop(&w);
    kube_cache_free(&cache);
}

/* Runs GET path with a modified copy of the admin config. */
static int get_with(kube_config *cfg, const char *path, kube_error *out)
{
    kube_client c;
    sync_result r = {0};
    int rc;

    assert_int_equal(kube_client_init(&c, &H.http, cfg, NULL, out), 0);
    rc = kube_get(&c, path, harness_store, &r, out);
    if (rc == 0)
        rc = harness_wait(&H, &r, 30);
    *out = r.err;
    sync_result_clear(&r);
    kube_client_close(&c);
    return rc;
}

static int copy_config(kube_config *dst)
{
    kube_error e;
    return kube_config_load_file(dst, H.kubeconfig, NULL, &e);
}

static void test_wrong_ca_is_a_tls_error(void **state)
{
    kube_config cfg;
    kube_error e;
    char dir[] = "/tmp/wrongcaXXXXXX", *pem = NULL;
    size_t len = 0;
    FILE *f;
    char path[256];

    (void)state;
    assert_non_null(mkdtemp(dir));
    assert_int_equal(harness_sh("cd %s && openssl req -x509 -newkey rsa:2048 -nodes -keyout k.pem "
                                "-out ca.pem -days 1 -subj /CN=not-the-cluster-ca >/dev/null 2>&1",
                                dir), 0);
    snprintf(path, sizeof(path), "%s/ca.pem", dir);
    f = fopen(path, "r");
    assert_non_null(f);
    pem = calloc(1, 65536);
    len = fread(pem, 1, 65535, f);
    fclose(f);
    assert_int_equal(copy_config(&cfg), 0);
    free(cfg.ca);
    cfg.ca = pem;
    cfg.ca_len = len;
    assert_int_equal(get_with(&cfg, "/api/v1/namespaces", &e), HCP_ETLS);
    fprintf(stderr, "  %s\n", e.message);
    assert_int_equal(e.http_status, 0);
    assert_non_null(strstr(e.message, "TLS error"));
    assert_non_null(strstr(e.message, "certificate"));
    kube_config_free(&cfg);
    harness_sh("rm -rf %s", dir);
}

static void test_bad_token_is_401(void **state)
{
    kube_config cfg;
    kube_error e;

    (void)state;
    assert_int_equal(copy_config(&cfg), 0);
    free(cfg.cert);
    free(cfg.key);
    cfg.cert = cfg.key = NULL;
    free(cfg.token);
    cfg.token = strdup("not-a-valid-token");
    assert_int_equal(get_with(&cfg, "/api/v1/namespaces", &e), HCP_EHTTP);
    fprintf(stderr, "  HTTP %d %s: %s\n", e.http_status, e.reason, e.message);
    assert_int_equal(e.http_status, 401);
    assert_string_equal(e.reason, "Unauthorized");
    assert_string_equal(e.message, "Unauthorized");
    kube_config_free(&cfg);
}

static void test_rbac_denial_is_403_with_message(void **state)
{
    kube_config cfg;
    kube_error e;
    sync_result r = {0};
    char ns[128], path[256];
    json_t *sa, *req;
    const char *token;

    (void)state;
    if (getenv("HCP_E2E_KUBECONFIG_NOPERM")) {
        /* The cluster's user without any RoleBinding. */
        assert_int_equal(kube_config_load_file(&cfg, getenv("HCP_E2E_KUBECONFIG_NOPERM"), NULL, &e), 0);
        assert_int_equal(get_with(&cfg, "/api/v1/namespaces/kube-system/configmaps", &e), HCP_EHTTP);
        fprintf(stderr, "  HTTP %d %s: %s\n", e.http_status, e.reason, e.message);
        assert_int_equal(e.http_status, 403);
        assert_string_equal(e.reason, "Forbidden");
        assert_non_null(strstr(e.message, "configmaps is forbidden: User"));
        assert_non_null(strstr(e.message, "cannot list resource \"configmaps\""));
        kube_config_free(&cfg);
    }
    /* And a service account's bound token, which RBAC knows nothing about either. */
    make_ns(ns, sizeof(ns), "rbac");
    sa = json_pack("{s:{s:s}}", "metadata", "name", "nobody");
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts", ns);
    assert_int_equal(kube_create(&H.client, path, sa, harness_store, &r, NULL), 0);
    json_decref(sa);
    assert_int_equal(harness_wait(&H, &r, 30), 0);
    sync_result_clear(&r);
    /* A bound token for the service account, from the TokenRequest API. */
    req = json_pack("{s:s,s:s,s:{s:i}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                    "TokenRequest", "spec", "expirationSeconds", 600);
    snprintf(path, sizeof(path), "/api/v1/namespaces/%s/serviceaccounts/nobody/token", ns);
    assert_int_equal(kube_create(&H.client, path, req, harness_store, &r, NULL), 0);
    json_decref(req);
    if (harness_wait(&H, &r, 30) < 0) {
        fprintf(stderr, "  TokenRequest failed: %s\n", r.err.message);
        sync_result_clear(&r);
        skip();
    }
    token = json_string_value(json_object_get(json_object_get(r.obj, "status"), "token"));
    assert_non_null(token);
    assert_int_equal(copy_config(&cfg), 0);
    free(cfg.cert);
    free(cfg.key);
    cfg.cert = cfg.key = NULL;
    free(cfg.token);
    cfg.token = strdup(token);
    sync_result_clear(&r);
    assert_int_equal(get_with(&cfg, "/api/v1/namespaces/kube-system/configmaps", &e), HCP_EHTTP);
    fprintf(stderr, "  HTTP %d %s: %s\n", e.http_status, e.reason, e.message);
    assert_int_equal(e.http_status, 403);
    assert_string_equal(e.reason, "Forbidden");
    assert_non_null(strstr(e.message, "configmaps is forbidden"));
    assert_non_null(strstr(e.message, ":nobody"));
    kube_config_free(&cfg);
}

static void test_apiserver_restart_resumes_watch(void **state)
{
    static evlog l;
    kube_cache cache;
    kube_watch w;
    char ns[128];
    const char *restart = getenv("HCP_E2E_RESTART");
    double deadline;
    int i;

    (void)state;
    if (restart == NULL || restart[0] == '\0') {
        fprintf(stderr, "  HCP_E2E_RESTART unset\n");
        skip();
    }
    memset(&l, 0, sizeof(l));
    make_ns(ns, sizeof(ns), "restart");
    assert_int_equal(kube_cache_init(&cache, &log_ops, &l), 0);
    start_watch(&w, &cache, &l, ns, 60);
    assert_true(harness_run_until(&H, &l.synced, 30));
    assert_int_equal(cm_create(&H.client, ns, "before", "1", NULL), 0);
    assert_true(wait_lines(&l, 1, 20));
    /* The command blocks until the new apiserver is ready; the loop is idle meanwhile. */
    assert_int_equal(harness_sh("%s >/dev/null", restart), 0);
    assert_int_equal(cm_patch(ns, "before", "2"), 0);
    for (i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof(name), "after%d", i);
        assert_int_equal(cm_create(&H.client, ns, name, "1", NULL), 0);
    }
    deadline = ev_time() + 60;
    while (l.n < 5 && ev_time() < deadline)
        harness_run_for(&H, 0.1);
    harness_run_for(&H, 0.5);
    dump(&l);
    fprintf(stderr, "  restarts=%lu relists=%lu\n", (unsigned long)w.stats.restarts,
            (unsigned long)w.stats.relists);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.lines[0], "add before v=1");
    assert_int_equal(count_lines(&l, "update before v=1->2"), 1);
    assert_int_equal(count_lines(&l, "add after0"), 1);
    assert_int_equal(count_lines(&l, "add after1"), 1);
    assert_int_equal(count_lines(&l, "add after2"), 1);
    assert_true(w.stats.restarts >= 1);
    kube_watch_stop(&w);
    kube_cache_free(&cache);
}

static void test_requests_apply_and_errors(void **state)
{
    sync_result r = {0};
    char ns[128], path[256];
    json_t *obj;
    kube_error e;
    size_t n, i;
    const kube_stat *st;
    unsigned long creates_201 = 0;

    (void)state;
    make_ns(ns, sizeof(ns), "req");
    /* Server-side apply creates, then a conflicting manager needs force. */
    cm_path(path, sizeof(path), ns, "applied");
    obj = json_pack("{s:s,s:s,s:{s:s},s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                    "metadata", "name", "applied", "data", "v", "1");
    assert_int_equal(kube_apply(&H.client, path, obj, false, harness_store, &r, NULL), 0);
    assert_int_equal(harness_wait(&H, &r, 30), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.obj, "data"), "v")), "1");
    sync_result_clear(&r);
    assert_int_equal(cm_patch(ns, "applied", "2"), 0); /* someone changes the value in between */
    json_object_set_new(json_object_get(obj, "data"), "v", json_string("3"));
    assert_int_equal(kube_apply(&H.client, path, obj, true, harness_store, &r, NULL), 0);
    assert_int_equal(harness_wait(&H, &r, 30), 0);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r.obj, "data"), "v")), "3");
    sync_result_clear(&r);
    json_decref(obj);
    /* GET of a missing object: 404 with the API's message. */
    cm_path(path, sizeof(path), ns, "missing");
    assert_int_equal(kube_get(&H.client, path, harness_store, &r, NULL), 0);
    assert_int_equal(harness_wait(&H, &r, 30), HCP_EHTTP);
    assert_int_equal(r.err.http_status, 404);
    assert_string_equal(r.err.reason, "NotFound");
    assert_string_equal(r.err.message, "configmaps \"missing\" not found");
    sync_result_clear(&r);
    /* Create twice: 409 AlreadyExists. */
    assert_int_equal(cm_create(&H.client, ns, "dup", "1", NULL), 0);
    assert_int_equal(cm_create(&H.client, ns, "dup", "1", &e), HCP_EHTTP);
    assert_int_equal(e.http_status, 409);
    assert_string_equal(e.reason, "AlreadyExists");
    /* Statistics count by verb and code. */
    st = kube_client_stats(&H.client, &n);
    for (i = 0; i < n; i++) {
        if (st[i].verb == KUBE_VERB_CREATE && st[i].code == 201)
            creates_201 = st[i].count;
        if (st[i].verb == KUBE_VERB_GET && st[i].code == 404)
            assert_int_equal(st[i].count, 1);
    }
    assert_true(creates_201 >= 2);
    fprintf(stderr, "  connections opened so far: %ld (transfers %lu)\n", H.http.connects,
            H.http.started);
}

/* Counts the API server's warnings and keeps the last text. */
typedef struct warnings_seen {
    int n;
    char last[256];
} warnings_seen;

static void on_warning(const char *method, const char *url, const char *text, void *ud)
{
    warnings_seen *w = ud;

    (void)method;
    (void)url;
    w->n++;
    snprintf(w->last, sizeof(w->last), "%s", text);
}

static void test_status_patch_on_fixture_crd(void **state)
{
    sync_result r = {0};
    char ns[128], path[256], coll[256];
    json_t *np, *patch;

    (void)state;
    make_ns(ns, sizeof(ns), "status");
    assert_int_equal(kube_path(coll, sizeof(coll), "hypershift.openshift.io", "v1beta1",
                               "nodepools", ns, NULL, NULL), 0);
    np = json_pack("{s:s,s:s,s:{s:s},s:{s:s,s:i,s:{s:s},s:{s:s}}}", "apiVersion",
                   "hypershift.openshift.io/v1beta1", "kind", "NodePool", "metadata", "name", "np1",
                   "spec", "clusterName", "hc1", "replicas", 2, "management", "upgradeType",
                   "Replace", "release", "image", "quay.io/openshift-release-dev/ocp-release:4.14.0");
    assert_int_equal(kube_create(&H.client, coll, np, harness_store, &r, NULL), 0);
    json_decref(np);
    if (harness_wait(&H, &r, 30) < 0) {
        fprintf(stderr, "  NodePool fixture CRD not usable: HTTP %d %s\n", r.err.http_status,
                r.err.message);
        sync_result_clear(&r);
        skip();
    }
    sync_result_clear(&r);
    assert_int_equal(kube_path(path, sizeof(path), "hypershift.openshift.io", "v1beta1",
                               "nodepools", ns, "np1", NULL), 0);
    patch = json_pack("{s:{s:[{s:s,s:s,s:s,s:s}]}}", "status", "conditions", "type",
                      "ChangesPaused", "status", "True", "reason", "Test", "lastTransitionTime",
                      "2024-01-01T00:00:00Z");
    assert_int_equal(kube_merge_patch_status(&H.client, path, patch, harness_store, &r, NULL), 0);
    json_decref(patch);
    assert_int_equal(harness_wait(&H, &r, 30), 0);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(json_object_get(r.obj, "status"),
                                                           "conditions"), 0), "type")),
                        "ChangesPaused");
    sync_result_clear(&r);

    /* A field the schema does not have is pruned, and the server (field
     * validation "Warn", the default for clients that do not ask) says so in
     * a Warning header, which reaches the client's on_warning. */
    {
        warnings_seen w = {0};
        H.client.opts.on_warning = on_warning;
        H.client.opts.warning_ud = &w;
        patch = json_pack("{s:{s:s}}", "status", "notAStatusField", "x");
        assert_int_equal(kube_merge_patch_status(&H.client, path, patch, harness_store, &r, NULL),
                         0);
        json_decref(patch);
        assert_int_equal(harness_wait(&H, &r, 30), 0);
        H.client.opts.on_warning = NULL;
        assert_null(json_object_get(json_object_get(r.obj, "status"), "notAStatusField"));
        assert_int_equal(w.n, 1);
        assert_string_equal(w.last, "unknown field \"status.notAStatusField\"");
        sync_result_clear(&r);
    }
}

typedef struct disc_out {
    bool done;
    char version[64];
    kube_error err;
} disc_out;

static void disc_cb(kube_client *c, const char *group, const char *version,
                    const kube_error *err, void *ud)
{
    disc_out *o = ud;

    (void)c;
    (void)group;
    o->done = true;
    if (version)
        snprintf(o->version, sizeof(o->version), "%s", version);
    if (err)
        o->err = *err;
}

static void test_discovery_prefers_capi_v1beta2(void **state)
{
    static const char *const capi[] = {"v1beta2", "v1beta1", NULL};
    disc_out o = {0};

    (void)state;
    assert_int_equal(kube_discover_version(&H.client, "cluster.x-k8s.io", capi, disc_cb, &o, NULL), 0);
    assert_true(harness_run_until(&H, &o.done, 30));
    if (o.version[0] == '\0') {
        fprintf(stderr, "  cluster.x-k8s.io: HTTP %d %s\n", o.err.http_status, o.err.message);
        skip();
    }
    assert_string_equal(o.version, "v1beta2");
    memset(&o, 0, sizeof(o));
    assert_int_equal(kube_discover_version(&H.client, "no.such.group", capi, disc_cb, &o, NULL), 0);
    assert_true(harness_run_until(&H, &o.done, 30));
    assert_string_equal(o.version, "");
    assert_int_equal(o.err.http_status, 404);
}

/* ---- pages of a large list beside other streams ----------------------------- */

#define PAGES_OBJECTS 2000
#define PAGES_WATCHES 6
#define PAGES_ROUNDS 4

typedef struct pages_watch {
    bool synced;
    int failed;               /* requests that got no answer (a 410 Gone is an answer) */
    char last_error[512];
} pages_watch;

static void pages_synced(kube_watch *w, void *ud)
{
    (void)w;
    ((pages_watch *)ud)->synced = true;
}

static void pages_error(kube_watch *w, const kube_error *err, void *ud)
{
    pages_watch *p = ud;

    (void)w;
    if (err->http_status != 0)
        return; /* the API server's answer, such as 410 Gone after a burst of writes */
    p->failed++;
    snprintf(p->last_error, sizeof(p->last_error), "%s", err->message);
}

static void count_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    int *n = ud;

    (void)c;
    (void)obj;
    n[err ? 1 : 0]++;
}

/* Sets annotation "v" of object `name` in collection `collection`; runs the loop meanwhile. */
static int annotate(const char *collection, const char *name, const char *v)
{
    char path[512];

    snprintf(path, sizeof(path), "%s/%s", collection, name);
    return merge_patch_sync(path, json_pack("{s:{s:{s:s}}}", "metadata", "annotations", "v", v));
}

/*
 * A controller's start: several caches list a collection of thousands of
 * objects page by page at once, while writes go on and every watch already
 * open streams their events. Every page must arrive whole, the first time:
 * a page that stopped on the way would be cut only by the stall guard
 * (kube_client_opts.stall) and listed again, seconds later (a 410 Gone is
 * the API server's answer, not a failed read). MachineSets (a
 * custom resource, as the controller lists), each with 1 KiB of annotation,
 * created 2,000 at once: beyond the connections one server gets
 * (KUBE_HTTP_MAX_HOST_CONNECTIONS), the rest wait in libcurl's queue.
 */
static void test_pages_arrive_whole_beside_other_streams(void **state)
{
    static pages_watch pw[PAGES_WATCHES];
    kube_cache cache[PAGES_WATCHES];
    kube_watch w[PAGES_WATCHES];
    char ns[128], path[256], name[64], pad[1025], v[32];
    size_t counted[PAGES_WATCHES];
    int done[2] = {0, 0}, round, i, k = 0;
    double deadline;

    (void)state;
    make_ns(ns, sizeof(ns), "pages");
    memset(pad, 'x', sizeof(pad) - 1);
    pad[sizeof(pad) - 1] = '\0';
    assert_int_equal(kube_path(path, sizeof(path), "cluster.x-k8s.io", "v1beta2", "machinesets",
                               ns, NULL, NULL),
                     0);
    for (i = 0; i < PAGES_OBJECTS; i++) {
        json_t *obj;

        snprintf(name, sizeof(name), "ms-%d", i);
        /* Complete, as Cluster API's own CRD and webhook require. */
        obj = json_pack("{s:s,s:s,s:{s:s,s:{s:s}},s:{s:s,s:i,s:{s:{s:s}},s:{s:{s:{s:s}},"
                        "s:{s:s,s:{s:s},s:{s:s,s:s,s:s}}}}}",
                        "apiVersion", "cluster.x-k8s.io/v1beta2", "kind", "MachineSet", "metadata",
                        "name", name, "annotations", "pad", pad, "spec", "clusterName", "c",
                        "replicas", 1, "selector", "matchLabels", "cluster.x-k8s.io/cluster-name",
                        "c", "template", "metadata", "labels", "cluster.x-k8s.io/cluster-name", "c",
                        "spec", "clusterName", "c", "bootstrap", "dataSecretName", "c",
                        "infrastructureRef", "apiGroup", "infrastructure.cluster.x-k8s.io", "kind",
                        "AWSMachineTemplate", "name", "c");
        assert_int_equal(kube_create(&H.client, path, obj, count_done, done, NULL), 0);
        json_decref(obj);
    }
    deadline = ev_time() + 120;
    while (done[0] + done[1] < PAGES_OBJECTS && ev_time() < deadline)
        harness_run_for(&H, 0.05);
    assert_int_equal(done[0], PAGES_OBJECTS);

    for (round = 0; round < PAGES_ROUNDS; round++) {
        bool all = false;

        for (i = 0; i < PAGES_WATCHES; i++) {
            kube_watch_opts o;
            kube_error e;

            memset(&pw[i], 0, sizeof(pw[i]));
            memset(&o, 0, sizeof(o));
            o.path = path;
            o.page_size = 100;
            o.timeout_min = 60;
            o.on_synced = pages_synced;
            o.on_error = pages_error;
            o.ud = &pw[i];
            assert_int_equal(kube_cache_init(&cache[i], &(kube_cache_ops){0}, NULL), 0);
            assert_int_equal(kube_watch_start(&w[i], &H.client, &cache[i], &o, &e), 0);
        }
        deadline = ev_time() + 180;
        while (!all && ev_time() < deadline) {
            snprintf(name, sizeof(name), "ms-%d", k % 10);
            snprintf(v, sizeof(v), "%d", ++k);
            assert_int_equal(annotate(path, name, v), 0); /* runs the loop meanwhile */
            for (all = true, i = 0; i < PAGES_WATCHES; i++)
                all = all && pw[i].synced;
        }
        for (i = 0; i < PAGES_WATCHES; i++) {
            if (pw[i].failed)
                fprintf(stderr, "  round %d, cache %d: %d failed reads, the last: %s\n", round, i,
                        pw[i].failed, pw[i].last_error);
        }
        /* Stopped before any assertion: a watch left running on this
         * stack frame would fail the next test, not this one. */
        for (i = 0; i < PAGES_WATCHES; i++) {
            counted[i] = kube_cache_count(&cache[i]);
            kube_watch_stop(&w[i]);
            kube_cache_free(&cache[i]);
        }
        for (i = 0; i < PAGES_WATCHES; i++) {
            assert_true(pw[i].synced);
            assert_int_equal(pw[i].failed, 0);
            assert_int_equal(counted[i], PAGES_OBJECTS);
        }
    }
    fprintf(stderr, "  %lu reads sent again after their connection broke\n", H.client.resent);
    /* Gone before the controller suites, whose caches list every MachineSet. */
    {
        sync_result r = {0};
        assert_int_equal(kube_delete(&H.client, path, harness_store, &r, NULL), 0);
        assert_int_equal(harness_wait(&H, &r, 60), 0);
        sync_result_clear(&r);
        assert_int_equal(kube_get(&H.client, path, harness_store, &r, NULL), 0);
        assert_int_equal(harness_wait(&H, &r, 30), 0);
        assert_int_equal(json_array_size(json_object_get(r.obj, "items")), 0);
        sync_result_clear(&r);
    }
    assert_int_equal(harness_delete_ns(&H, &H.client, ns), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(run_id, sizeof(run_id), "%ld", (long)getpid());
    if (harness_init(&H, NULL) < 0)
        return -1;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    harness_close(&H);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_list_watch_sees_changes_in_order),
        cmocka_unit_test(test_requests_apply_and_errors),
        cmocka_unit_test(test_wrong_ca_is_a_tls_error),
        cmocka_unit_test(test_bad_token_is_401),
        cmocka_unit_test(test_rbac_denial_is_403_with_message),
        cmocka_unit_test(test_bookmarks_advance_resource_version),
        cmocka_unit_test(test_410_relists_without_loss_or_duplicates),
        cmocka_unit_test(test_status_patch_on_fixture_crd),
        cmocka_unit_test(test_discovery_prefers_capi_v1beta2),
        cmocka_unit_test(test_pages_arrive_whole_beside_other_streams),
        cmocka_unit_test(test_apiserver_restart_resumes_watch),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
