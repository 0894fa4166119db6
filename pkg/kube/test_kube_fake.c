/*
 * Tests for pkg/kube against the fake API server (kube/testutil_fakeapi.h):
 * behaviours a real kube-apiserver will not produce on demand (429
 * throttling, broken JSON, silent watch streams, 410 Gone as a watch event,
 * token rotation). Each test installs a handler that decides how the fake
 * answers: at once, with a chunked stream (a watch) that the test feeds
 * later, or not at all; the assertions read the requests the fake recorded.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <ev.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/testutil_fakeapi.h"
#include "kube/watch.h"

#define CM_PATH "/api/v1/namespaces/default/configmaps"
/* Seconds any single wait may take before the test fails (valgrind on a
 * loaded machine is slow). */
#define WAIT_LIMIT 20.0

/* The k-th (0-based) logged request with this method, path and kind; fails the test if absent. */
static const fakeapi_req_t *fake_nth(const fakeapi_t *s, const char *method, const char *path,
                                     bool watch, int k)
{
    const fakeapi_req_t *r = fakeapi_find(s, method, path, watch, k);

    if (r == NULL)
        fail_msg("no request %s %s (watch=%d) number %d", method, path, (int)watch, k);
    return r;
}

/* Value of a query parameter (not decoded; the tests use plain values), "" when absent. */
static const char *query_param(const fakeapi_req_t *r, const char *key, char *out, size_t outlen)
{
    const char *p = r->query;
    size_t klen = strlen(key);

    out[0] = '\0';
    while (*p) {
        size_t len = strcspn(p, "&");
        if (len > klen && strncmp(p, key, klen) == 0 && p[klen] == '=') {
            snprintf(out, outlen, "%.*s", (int)(len - klen - 1), p + klen + 1);
            break;
        }
        p += len;
        if (*p == '&')
            p++;
    }
    return out;
}

/* ---- fixture: loop, fake, config, http engine, client ---------------------- */

typedef struct fixture {
    struct ev_loop *loop;
    fakeapi_t *srv;
    kube_config cfg;
    kube_http http;
    kube_client client;
    char dir[64];             /* scratch directory (token file) */
    char token_file[128];
} fixture;

/* A one-shot ev_timer that raises a flag: deadlines follow the monotonic clock. */
typedef struct deadline {
    ev_timer t;
    bool passed;
} deadline;

static void deadline_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    ((deadline *)w)->passed = true;
}

static void deadline_start(fixture *f, deadline *d, double seconds)
{
    d->passed = false;
    ev_timer_init(&d->t, deadline_cb, seconds, 0.);
    ev_timer_start(f->loop, &d->t);
}

/* Runs the loop until expr holds or WAIT_LIMIT seconds pass; the caller asserts expr. */
#define RUN_UNTIL(f, expr)                                                       \
    do {                                                                         \
        deadline d_;                                                             \
        deadline_start((f), &d_, WAIT_LIMIT);                                    \
        while (!(expr) && !d_.passed)                                            \
            ev_run((f)->loop, EVRUN_ONCE);                                       \
        ev_timer_stop((f)->loop, &d_.t);                                         \
    } while (0)

/* Runs the loop for `seconds`. */
static void run_for(fixture *f, double seconds)
{
    deadline d;

    deadline_start(f, &d, seconds);
    while (!d.passed)
        ev_run(f->loop, EVRUN_ONCE);
}

/* Writes the token file (atomically, as the kubelet does) with an explicit mtime. */
static void write_token(fixture *f, const char *token, time_t mtime)
{
    char tmp[160];
    struct timespec ts[2];
    FILE *fp;

    snprintf(tmp, sizeof(tmp), "%s.new", f->token_file);
    fp = fopen(tmp, "w");
    assert_non_null(fp);
    fprintf(fp, "%s\n", token);
    assert_int_equal(fclose(fp), 0);
    ts[0].tv_sec = ts[1].tv_sec = mtime;
    ts[0].tv_nsec = ts[1].tv_nsec = 0;
    assert_int_equal(utimensat(AT_FDCWD, tmp, ts, 0), 0);
    assert_int_equal(rename(tmp, f->token_file), 0);
}

/*
 * Starts the fake and a client configured through a kubeconfig naming the
 * fake's http:// URL; with_token adds a tokenFile user.
 */
static void fixture_start(fixture *f, const kube_client_opts *opts, bool with_token,
                          fakeapi_serve_fn h, void *ud)
{
    char yaml[2048];
    kube_error e;
    int rc;

    memset(f, 0, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(f->loop);
    f->srv = fakeapi_start_serve(f->loop, h, ud);
    if (with_token) {
        snprintf(f->dir, sizeof(f->dir), "/tmp/test_kube_fake.XXXXXX");
        assert_non_null(mkdtemp(f->dir));
        snprintf(f->token_file, sizeof(f->token_file), "%s/token", f->dir);
        write_token(f, "token-one", 1000000000);
    }
    rc = snprintf(yaml, sizeof(yaml),
                  "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
                  "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:%d/\n"
                  "contexts:\n- name: fake\n  context:\n    cluster: fake\n%s"
                  "users:\n- name: u\n  user:\n    tokenFile: %s\n",
                  fakeapi_port(f->srv), with_token ? "    user: u\n" : "",
                  with_token ? f->token_file : "unused");
    assert_true(rc > 0 && (size_t)rc < sizeof(yaml));
    rc = kube_config_load_yaml(&f->cfg, yaml, strlen(yaml), NULL, NULL, &e);
    if (rc != 0)
        fail_msg("kubeconfig: %s", e.message);
    assert_true(strncmp(f->cfg.server, "http://127.0.0.1:", 17) == 0);
    assert_int_equal(kube_http_init(&f->http, f->loop, &e), 0);
    assert_int_equal(kube_client_init(&f->client, &f->http, &f->cfg, opts, &e), 0);
}

static void fixture_stop(fixture *f)
{
    kube_client_close(&f->client);
    kube_http_close(&f->http);
    fakeapi_stop(f->srv);
    kube_config_free(&f->cfg);
    ev_loop_destroy(f->loop);
    if (f->token_file[0]) {
        unlink(f->token_file);
        rmdir(f->dir);
    }
}

/* Completion of one request, kept for the assertions. */
typedef struct result {
    bool done;
    kube_error err;
    bool failed;
    json_t *obj;     /* owned reference or NULL */
    double started;  /* ev_now() when the request was made */
    double finished; /* ev_now() at completion */
} result;

static void store(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    result *r = ud;

    r->done = true;
    r->finished = ev_now(c->http->loop);
    r->failed = err != NULL;
    if (err)
        r->err = *err;
    r->obj = json_incref(obj);
}

static unsigned long stat_count(const kube_client *c, kube_verb verb, int code)
{
    size_t n, i;
    const kube_stat *st = kube_client_stats(c, &n);

    for (i = 0; i < n; i++) {
        if (st[i].verb == verb && st[i].code == code)
            return st[i].count;
    }
    return 0;
}

/* A ConfigMap as the API would send it. */
static const char *cm(char *buf, size_t len, const char *name, const char *rv)
{
    int n = snprintf(buf, len,
                     "{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
                     "\"namespace\":\"default\",\"uid\":\"uid-%s\",\"resourceVersion\":\"%s\"},"
                     "\"data\":{\"k\":\"v\"}}",
                     name, name, rv);
    assert_true(n > 0 && (size_t)n < len);
    return buf;
}

/* ---- 429 Too Many Requests ---------------------------------------------- */

#define THROTTLE_STATUS                                                                       \
    "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"%s\","  \
    "\"reason\":\"TooManyRequests\",\"code\":429}"

typedef struct throttle {
    int refuse;               /* answer this many requests per method with 429 (-1: all) */
    const char *retry_after;  /* Retry-After value, NULL to leave it out */
    const char *message;      /* Status.message of the 429 */
} throttle;

static void throttle_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    throttle *t = ud;
    int seen = fakeapi_count_of(s, r->method, r->path, r->watch);
    char body[512], hdr[64];

    if (t->refuse < 0 || seen <= t->refuse) {
        snprintf(body, sizeof(body), THROTTLE_STATUS, t->message);
        if (t->retry_after)
            snprintf(hdr, sizeof(hdr), "Retry-After: %s\r\n", t->retry_after);
        fakeapi_reply(c, 429, t->retry_after ? hdr : NULL, body);
        return;
    }
    fakeapi_reply(c, 200, NULL, cm(body, sizeof(body), strrchr(r->path, '/') + 1, "7"));
}

/*
 * A GET and a PATCH, throttled twice each with Retry-After: 1, both succeed
 * on the third attempt; every wait is at least the server's Retry-After (the
 * backoff, set far longer here, is not used); the PATCH body is sent again
 * with every attempt.
 */
static void test_429_retry_after(void **state)
{
    throttle t = {.refuse = 2, .retry_after = "1", .message = "too many requests, try again later"};
    kube_client_opts o = {.max_retries = 5, .retry_initial = 20, .retry_max = 40};
    const char *get_path = CM_PATH "/cm-get", *patch_path = CM_PATH "/cm-patch";
    json_t *patch = json_pack("{s:{s:s}}", "data", "k", "patched");
    result get = {0}, pat = {0};
    fixture f;
    kube_error e;
    int i;

    (void)state;
    fixture_start(&f, &o, false, throttle_handler, &t);
    get.started = pat.started = ev_now(f.loop);
    assert_int_equal(kube_get(&f.client, get_path, store, &get, &e), 0);
    assert_int_equal(kube_merge_patch(&f.client, patch_path, patch, store, &pat, &e), 0);
    RUN_UNTIL(&f, get.done && pat.done);
    assert_true(get.done && pat.done);
    if (get.failed || pat.failed)
        fail_msg("request failed: %s / %s", get.err.message, pat.err.message);
    assert_string_equal(json_string_value(json_object_get(json_object_get(get.obj, "metadata"),
                                                          "name")),
                        "cm-get");
    assert_string_equal(json_string_value(json_object_get(json_object_get(pat.obj, "metadata"),
                                                          "name")),
                        "cm-patch");
    assert_int_equal(fakeapi_count_of(f.srv, "GET", get_path, false), 3);
    assert_int_equal(fakeapi_count_of(f.srv, "PATCH", patch_path, false), 3);
    for (i = 0; i < 3; i++)
        assert_string_equal(fake_nth(f.srv, "PATCH", patch_path, false, i)->body,
                            "{\"data\":{\"k\":\"patched\"}}");
    for (i = 1; i < 3; i++) {
        double gap_get = fake_nth(f.srv, "GET", get_path, false, i)->at -
                         fake_nth(f.srv, "GET", get_path, false, i - 1)->at;
        double gap_patch = fake_nth(f.srv, "PATCH", patch_path, false, i)->at -
                           fake_nth(f.srv, "PATCH", patch_path, false, i - 1)->at;
        /* The fake stamps a request with its loop's cached time (ev_now())
         * when it is complete, which may be a loop iteration late; under
         * valgrind on a loaded machine that iteration took tens of ms
         * (a gap of 0.99x s was seen). A retry that ignored Retry-After
         * would come at once, far below this bound. */
        assert_true(gap_get >= 1.0 - 0.1);
        assert_true(gap_patch >= 1.0 - 0.1);
    }
    /* The sum of the Retry-After values, and far below the 20 s backoff. */
    assert_true(get.finished - get.started >= 2.0 - 1e-3);
    assert_true(pat.finished - pat.started >= 2.0 - 1e-3);
    assert_true(get.finished - get.started < 10.0);
    assert_int_equal(f.client.throttled, 4);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 429), 2);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 200), 1);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_PATCH, 429), 2);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_PATCH, 200), 1);
    json_decref(get.obj);
    json_decref(pat.obj);
    json_decref(patch);
    fixture_stop(&f);
}

/* ---- a connection that breaks under a request ---------------------------- */

typedef struct breaker {
    int breaks;               /* reset this many requests per method and path (-1: all) */
} breaker;

static void breaker_serve(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    breaker *b = ud;
    char body[512];

    if (b->breaks < 0 || fakeapi_count_of(s, r->method, r->path, r->watch) <= b->breaks) {
        fakeapi_reset(c);
        return;
    }
    if (r->watch) {
        fakeapi_stream_open(c);
        return;
    }
    if (strcmp(r->method, "GET") == 0 && strstr(r->path, "/cm-") == NULL)
        fakeapi_reply(c, 200, NULL, "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\","
                                    "\"metadata\":{\"resourceVersion\":\"9\"},\"items\":[]}");
    else
        fakeapi_reply(c, 200, NULL, cm(body, sizeof(body), strrchr(r->path, '/') + 1, "7"));
}

/* A streaming request's outcome: the result first, so store() takes it too. */
typedef struct streamed {
    result r;
    size_t bytes;
} streamed;

static void count_bytes(kube_client *c, const char *data, size_t len, void *ud)
{
    (void)c;
    (void)data;
    ((streamed *)ud)->bytes += len;
}

/*
 * The server resets the connection under the first request of each: a GET
 * and a LIST are sent again at once, on a new connection, and succeed (two
 * requests each, no backoff: the 20 s backoff is never waited); a PATCH and
 * a POST are not sent again (the write may have happened), their failure is
 * reported as a transport error naming the request. A watch whose
 * connection breaks before its answer is sent again and streams. A read
 * whose second attempt breaks too is reported after its one resend.
 */
static void test_broken_connection_resends_reads_once(void **state)
{
    breaker b = {.breaks = 1};
    kube_client_opts o = {.max_retries = 5, .retry_initial = 20, .retry_max = 40};
    const char *get_path = CM_PATH "/cm-get", *patch_path = CM_PATH "/cm-patch";
    json_t *patch = json_pack("{s:{s:s}}", "data", "k", "patched");
    json_t *obj = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "ConfigMap",
                            "metadata", "name", "cm-new");
    result get = {0}, list = {0}, pat = {0}, post = {0}, again = {0};
    streamed watch = {0};
    kube_call call = {.verb = KUBE_VERB_WATCH, .path = CM_PATH, .query = "watch=1",
                      .on_data = count_bytes, .on_done = store, .ud = &watch};
    fixture f;
    kube_error e;

    (void)state;
    fixture_start(&f, &o, false, breaker_serve, &b);
    get.started = list.started = ev_now(f.loop);
    assert_int_equal(kube_get(&f.client, get_path, store, &get, &e), 0);
    assert_int_equal(kube_list(&f.client, CM_PATH, "limit=10", store, &list, &e), 0);
    assert_int_equal(kube_merge_patch(&f.client, patch_path, patch, store, &pat, &e), 0);
    assert_int_equal(kube_create(&f.client, CM_PATH, obj, store, &post, &e), 0);
    RUN_UNTIL(&f, get.done && list.done && pat.done && post.done);
    if (get.failed || list.failed)
        fail_msg("read failed: %s / %s", get.err.message, list.err.message);
    assert_string_equal(json_string_value(json_object_get(json_object_get(get.obj, "metadata"),
                                                          "name")),
                        "cm-get");
    assert_string_equal(json_string_value(json_object_get(list.obj, "kind")), "ConfigMapList");
    assert_int_equal(fakeapi_count_of(f.srv, "GET", get_path, false), 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 2);
    assert_true(get.finished - get.started < 5.0);
    assert_true(list.finished - list.started < 5.0);
    assert_true(pat.failed && post.failed);
    assert_int_equal(pat.err.code, HCP_ETRANSPORT);
    assert_int_equal(pat.err.http_status, 0);
    assert_non_null(strstr(pat.err.message, "PATCH "));
    assert_non_null(strstr(pat.err.message, "/cm-patch"));
    assert_int_equal(post.err.code, HCP_ETRANSPORT);
    assert_int_equal(fakeapi_count_of(f.srv, "PATCH", patch_path, false), 1);
    assert_int_equal(fakeapi_count_of(f.srv, "POST", CM_PATH, false), 1);
    assert_int_equal(f.client.resent, 2);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 0), 1);

    /* A watch whose new connection broke before its answer (the idle ones
     * closed first: libcurl tries a reused one again by itself): sent again
     * once, it streams. */
    {
        static const char ev[] = "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\","
                                 "\"metadata\":{\"resourceVersion\":\"10\"}}}\n";
        kube_request *req = NULL;
        fakeapi_close_idle(f.srv);
        assert_int_equal(kube_client_call(&f.client, &call, &req, &e), 0);
        RUN_UNTIL(&f, fakeapi_streaming(f.srv));
        assert_true(fakeapi_streaming(f.srv));
        fakeapi_stream_send(f.srv, ev);
        RUN_UNTIL(&f, watch.bytes >= sizeof(ev) - 1 || watch.r.done);
        assert_false(watch.r.done);
        assert_int_equal(watch.bytes, sizeof(ev) - 1);
        assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, true), 2);
        assert_int_equal(f.client.resent, 3);
        kube_request_cancel(req);
    }
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 200), 1);

    /* Every connection breaks: the read is reported after its one resend
     * (libcurl itself tries again once when a reused keep-alive connection
     * answered nothing, so each attempt is one or two requests). */
    b.breaks = -1;
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-again", store, &again, &e), 0);
    RUN_UNTIL(&f, again.done);
    assert_true(again.failed);
    assert_int_equal(again.err.code, HCP_ETRANSPORT);
    assert_in_range(fakeapi_count_of(f.srv, "GET", CM_PATH "/cm-again", false), 2, 4);
    assert_int_equal(f.client.resent, 4);
    json_decref(get.obj);
    json_decref(list.obj);
    json_decref(patch);
    json_decref(obj);
    fixture_stop(&f);
}

/* ---- kept-alive connections: not reused once idle too long ------------------ */

/* Two GETs on one client, idle_seconds apart: the connections the server accepted. */
static int connections_for(const kube_client_opts *o, double idle_seconds)
{
    breaker none = {.breaks = 0}; /* answers every GET of a ConfigMap */
    result a = {0}, b = {0};
    fixture f;
    kube_error e;
    fixture_start(&f, o, false, breaker_serve, &none);
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-a", store, &a, &e), 0);
    RUN_UNTIL(&f, a.done);
    assert_false(a.failed);
    run_for(&f, idle_seconds);
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-b", store, &b, &e), 0);
    RUN_UNTIL(&f, b.done);
    assert_false(b.failed);
    int n = fakeapi_accepted(f.srv);
    json_decref(a.obj);
    json_decref(b.obj);
    fixture_stop(&f);
    return n;
}

/*
 * A kept-alive connection idle longer than idle_max carries no more
 * requests: the API server closes one idle for 90 s, and a write sent on it
 * as it closes fails without being sent again. libcurl counts the idle
 * time in whole seconds (idle 2.2 s is "2", more than 1). By default (60 s)
 * the same pause reuses the connection.
 */
static void test_idle_connection_not_reused_past_idle_max(void **state)
{
    kube_client_opts short_idle = {.max_retries = -1, .idle_max = 1}, dflt = {.max_retries = -1};
    (void)state;
    assert_int_equal(connections_for(&short_idle, 0.1), 1);
    assert_int_equal(connections_for(&short_idle, 2.2), 2);
    assert_int_equal(connections_for(&dflt, 2.2), 1);
}

/* ---- the API server answering again -------------------------------------- */

typedef struct restarting {
    bool serving;             /* false: 503 to every request, 500 to /readyz */
} restarting;

static void restarting_serve(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    restarting *st = ud;
    char body[512];

    (void)s;
    if (strcmp(r->path, "/readyz") == 0) {
        fakeapi_reply(c, st->serving ? 200 : 500, NULL, st->serving ? "ok" : "not ready");
        return;
    }
    if (!st->serving) {
        fakeapi_reply(c, 503, NULL, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":"
                                    "\"Failure\",\"message\":\"the request has been made before "
                                    "all known HTTP paths have been installed, please try again\","
                                    "\"reason\":\"ServiceUnavailable\",\"code\":503}");
        return;
    }
    fakeapi_reply(c, 200, NULL, cm(body, sizeof(body), strrchr(r->path, '/') + 1, "7"));
}

static void count_back(void *ud)
{
    ++*(int *)ud;
}

/*
 * A restarting API server (503 to every request, /readyz 500): after the
 * first 503 the client asks /readyz every probe_interval; once /readyz
 * answers 200 it calls on_back once, and asks no more. A client whose owner
 * set no on_back never probes. A request done (2xx) says it serves too; a
 * second call within a second of the last is made a second after it.
 */
static void test_probe_until_the_api_server_serves(void **state)
{
    restarting st = {.serving = false};
    kube_client_opts o = {.max_retries = -1, .probe_interval = 0.05};
    result get = {0}, more = {0};
    fixture f;
    kube_error e;
    double t1;
    int backs = 0, n;

    (void)state;
    fixture_start(&f, &o, false, restarting_serve, &st);
    /* No owner listening: a 503 is reported and nothing is probed. */
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-a", store, &get, &e), 0);
    RUN_UNTIL(&f, get.done);
    assert_true(get.failed);
    assert_int_equal(get.err.http_status, 503);
    run_for(&f, 0.3);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", "/readyz", false), 0);

    kube_client_on_back(&f.client, count_back, &backs);
    memset(&get, 0, sizeof(get));
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-a", store, &get, &e), 0);
    RUN_UNTIL(&f, get.done);
    assert_true(f.client.unreachable);
    RUN_UNTIL(&f, fakeapi_count_of(f.srv, "GET", "/readyz", false) >= 3);
    assert_int_equal(backs, 0); /* /readyz 500: not ready */
    st.serving = true;
    RUN_UNTIL(&f, backs > 0);
    assert_int_equal(backs, 1);
    assert_false(f.client.unreachable);
    t1 = f.client.back_at;
    n = fakeapi_count_of(f.srv, "GET", "/readyz", false);
    run_for(&f, 0.3);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", "/readyz", false), n); /* no more probes */

    /* Down again (probes far apart now), then a request done (2xx) says it
     * serves; within a second of the last call, the call comes a second
     * after it, not never. */
    f.client.opts.probe_interval = 30;
    st.serving = false;
    memset(&get, 0, sizeof(get));
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-a", store, &get, &e), 0);
    RUN_UNTIL(&f, get.done);
    assert_true(f.client.unreachable);
    st.serving = true;
    assert_int_equal(kube_get(&f.client, CM_PATH "/cm-b", store, &more, &e), 0);
    RUN_UNTIL(&f, more.done);
    assert_false(more.failed);
    assert_false(f.client.unreachable);
    if (ev_now(f.loop) - f.client.back_at < 0.9)
        assert_int_equal(backs, 1); /* deferred */
    RUN_UNTIL(&f, backs == 2);
    assert_int_equal(backs, 2);
    assert_true(ev_now(f.loop) - t1 >= 1.0 - 0.01);
    assert_int_equal(f.client.backs, 2);
    json_decref(get.obj);
    json_decref(more.obj);
    fixture_stop(&f);
}

/*
 * Always 429 without Retry-After: the client backs off (each wait at least
 * half the doubling delay), gives up after max_retries retries and reports
 * HTTP 429 with the Status message; max_retries -1 does not retry at all.
 */
static void test_429_backoff_gives_up(void **state)
{
    throttle t = {.refuse = -1, .retry_after = NULL, .message = "storage is busy, slow down"};
    kube_client_opts o = {.max_retries = 3, .retry_initial = 0.04, .retry_max = 0.1};
    const char *path = CM_PATH "/busy";
    double want_min[3] = {0.02, 0.04, 0.05}; /* half of 0.04, 0.08, min(0.16, 0.1) */
    result r = {0};
    fixture f;
    kube_error e;
    int i;

    (void)state;
    fixture_start(&f, &o, false, throttle_handler, &t);
    assert_int_equal(kube_get(&f.client, path, store, &r, &e), 0);
    RUN_UNTIL(&f, r.done);
    assert_true(r.done);
    assert_true(r.failed);
    assert_null(r.obj);
    assert_int_equal(r.err.code, HCP_EHTTP);
    assert_int_equal(r.err.http_status, 429);
    assert_string_equal(r.err.reason, "TooManyRequests");
    assert_string_equal(r.err.message, "storage is busy, slow down");
    assert_int_equal(fakeapi_count_of(f.srv, "GET", path, false), 4);
    for (i = 1; i < 4; i++) {
        double gap = fake_nth(f.srv, "GET", path, false, i)->at -
                     fake_nth(f.srv, "GET", path, false, i - 1)->at;
        assert_true(gap >= want_min[i - 1] - 1e-3);
    }
    assert_int_equal(f.client.throttled, 3);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 429), 4);
    fixture_stop(&f);

    o.max_retries = -1;
    memset(&r, 0, sizeof(r));
    fixture_start(&f, &o, false, throttle_handler, &t);
    assert_int_equal(kube_get(&f.client, path, store, &r, &e), 0);
    RUN_UNTIL(&f, r.done);
    assert_true(r.done && r.failed);
    assert_int_equal(r.err.http_status, 429);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", path, false), 1);
    assert_int_equal(f.client.throttled, 0);
    fixture_stop(&f);
}

/* ---- Warning headers ------------------------------------------------------ */

typedef struct warned {
    int calls;
    char method[16];
    char url[256];
    char text[4][256];
} warned;

static void record_warning(const char *method, const char *url, const char *text, void *ud)
{
    warned *w = ud;

    if (w->calls < 4) {
        snprintf(w->method, sizeof(w->method), "%s", method);
        snprintf(w->url, sizeof(w->url), "%s", url);
        snprintf(w->text[w->calls], sizeof(w->text[0]), "%s", text);
    }
    w->calls++;
}

static void warning_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    char body[512];

    (void)s;
    (void)ud;
    fakeapi_reply(c, 200,
               "Warning: 299 - \"unknown field \\\"status.changeManagement\\\"\"\r\n"
               "Warning: 299 - \"policy/v1beta1 PodDisruptionBudget is deprecated\"\r\n",
               cm(body, sizeof(body), strrchr(r->path, '/') + 1, "7"));
}

/*
 * The API server's Warning headers (one per warning, RFC 9111 form with a
 * quoted, escaped text) reach on_warning once each with the text unquoted,
 * the method and the URL; the request itself succeeds. Without on_warning
 * they are only counted.
 */
static void test_warning_headers(void **state)
{
    warned w = {0};
    kube_client_opts o = {.on_warning = record_warning, .warning_ud = &w};
    json_t *patch = json_pack("{s:{s:s}}", "status", "changeManagement", "x");
    result r = {0};
    fixture f;
    kube_error e;

    (void)state;
    fixture_start(&f, &o, false, warning_handler, NULL);
    assert_int_equal(kube_merge_patch(&f.client, CM_PATH "/warned", patch, store, &r, &e), 0);
    RUN_UNTIL(&f, r.done);
    assert_true(r.done);
    assert_false(r.failed);
    assert_int_equal(w.calls, 2);
    assert_string_equal(w.method, "PATCH");
    assert_non_null(strstr(w.url, CM_PATH "/warned"));
    assert_string_equal(w.text[0], "unknown field \"status.changeManagement\"");
    assert_string_equal(w.text[1], "policy/v1beta1 PodDisruptionBudget is deprecated");
    assert_int_equal(f.client.warnings, 2);
    json_decref(r.obj);
    fixture_stop(&f);

    memset(&r, 0, sizeof(r));
    fixture_start(&f, NULL, false, warning_handler, NULL);
    assert_int_equal(kube_get(&f.client, CM_PATH "/warned", store, &r, &e), 0);
    RUN_UNTIL(&f, r.done);
    assert_true(r.done && !r.failed);
    assert_int_equal(f.client.warnings, 2);
    json_decref(r.obj);
    fixture_stop(&f);
    json_decref(patch);
}

/* ---- broken JSON ---------------------------------------------------------- */

typedef struct canned {
    int status;
    const char *body;
} canned;

static void canned_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    const canned *k = ud;

    (void)s;
    (void)r;
    fakeapi_reply(c, k->status, NULL, k->body);
}

/* A 200 whose body is not JSON is a parse error naming the request, not a crash or a success. */
static void test_broken_json_response(void **state)
{
    static const canned cases[] = {
        {200, "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"x\""}, /* truncated */
        {200, "<html><body>gateway</body></html>"},
        {200, "{\"kind\":\"ConfigMap\"} trailing"},
    };
    canned nonjson_error = {500, "<html>upstream failed</html>"};
    fixture f;
    kube_error e;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        result r = {0};
        fixture_start(&f, NULL, false, canned_handler, (void *)&cases[i]);
        assert_int_equal(kube_get(&f.client, CM_PATH "/x", store, &r, &e), 0);
        RUN_UNTIL(&f, r.done);
        assert_true(r.done && r.failed);
        assert_null(r.obj);
        assert_int_equal(r.err.code, HCP_EPARSE);
        assert_int_equal(r.err.http_status, 200);
        if (strstr(r.err.message, "invalid JSON response") == NULL ||
            strstr(r.err.message, CM_PATH "/x") == NULL)
            fail_msg("unexpected message: %s", r.err.message);
        assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 200), 1);
        fixture_stop(&f);
    }

    /* An error status with a body that is not a Status quotes the body. */
    {
        result r = {0};
        fixture_start(&f, NULL, false, canned_handler, &nonjson_error);
        assert_int_equal(kube_get(&f.client, CM_PATH "/x", store, &r, &e), 0);
        RUN_UNTIL(&f, r.done);
        assert_true(r.done && r.failed);
        assert_int_equal(r.err.code, HCP_EHTTP);
        assert_int_equal(r.err.http_status, 500);
        assert_string_equal(r.err.message,
                            "HTTP 500 without a Status message: <html>upstream failed</html>");
        fixture_stop(&f);
    }
}

/* ---- watches ------------------------------------------------------------- */

/* What the cache reported, and what the watch reported. */
typedef struct watched {
    kube_cache cache;
    kube_watch w;
    char deleted[8][32];      /* names reported deleted, in order */
    int ndeleted;
    int synced;               /* on_synced calls */
    kube_error errors[16];    /* on_error reports, in order */
    int nerrors;
    size_t count_at_first_error; /* cache size when the first error was reported */
    bool synced_at_first_error;
    double quiet_at_first_error; /* seconds since the stream started, at the first error */
} watched;

static void on_delete(const kube_obj *old, void *ud)
{
    watched *wd = ud;

    assert_true(wd->ndeleted < 8);
    snprintf(wd->deleted[wd->ndeleted++], sizeof(wd->deleted[0]), "%s", old->name);
}

static void on_synced(kube_watch *w, void *ud)
{
    watched *wd = ud;

    (void)w;
    wd->synced++;
}

static void on_error(kube_watch *w, const kube_error *err, void *ud)
{
    watched *wd = ud;

    if (wd->nerrors == 0) {
        wd->count_at_first_error = kube_cache_count(&wd->cache);
        wd->synced_at_first_error = wd->cache.synced;
        wd->quiet_at_first_error = ev_now(w->c->http->loop) - w->stream_started;
    }
    if (wd->nerrors < 16)
        wd->errors[wd->nerrors] = *err;
    wd->nerrors++;
}

static void watched_start(watched *wd, fixture *f, double silence)
{
    kube_cache_ops ops = {.on_delete = on_delete};
    kube_watch_opts wo = {.path = CM_PATH,
                          .silence = silence,
                          .backoff_initial = 0.05,
                          .backoff_max = 0.2,
                          .on_synced = on_synced,
                          .on_error = on_error,
                          .ud = wd};
    kube_error e;

    memset(wd, 0, sizeof(*wd));
    assert_int_equal(kube_cache_init(&wd->cache, &ops, wd), 0);
    assert_int_equal(kube_watch_start(&wd->w, &f->client, &wd->cache, &wo, &e), 0);
}

static void watched_stop(watched *wd)
{
    kube_watch_stop(&wd->w);
    kube_cache_free(&wd->cache);
}

/* Builds a list response from "name:rv" pairs into buf. */
static const char *cm_list(char *buf, size_t len, const char *list_rv, const char *const *items,
                           size_t n)
{
    size_t used, i;
    char one[512];
    int k = snprintf(buf, len,
                     "{\"kind\":\"ConfigMapList\",\"apiVersion\":\"v1\",\"metadata\":"
                     "{\"resourceVersion\":\"%s\"},\"items\":[",
                     list_rv);

    assert_true(k > 0 && (size_t)k < len);
    used = (size_t)k;
    for (i = 0; i < n; i++) {
        char name[32];
        const char *colon = strchr(items[i], ':');
        snprintf(name, sizeof(name), "%.*s", (int)(colon - items[i]), items[i]);
        k = snprintf(buf + used, len - used, "%s%s", i ? "," : "",
                     cm(one, sizeof(one), name, colon + 1));
        assert_true(k > 0 && (size_t)k < len - used);
        used += (size_t)k;
    }
    k = snprintf(buf + used, len - used, "]}");
    assert_true(k > 0 && (size_t)k < len - used);
    return buf;
}

/* One watch event line. */
static const char *event(char *buf, size_t len, const char *type, const char *name, const char *rv)
{
    char one[512];
    int k = snprintf(buf, len, "{\"type\":\"%s\",\"object\":%s}\n", type,
                     cm(one, sizeof(one), name, rv));

    assert_true(k > 0 && (size_t)k < len);
    return buf;
}

/*
 * A scripted API for one collection: the n-th LIST (1-based) gets lists[n-1]
 * (the last one repeats), and every WATCH opens a stream the test feeds.
 */
typedef struct script {
    const char *lists[4];
    int nlists;
} script;

static void script_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    script *sc = ud;
    int n;

    if (strcmp(r->method, "GET") != 0 || strcmp(r->path, CM_PATH) != 0) {
        fakeapi_reply(c, 404, NULL, "{\"kind\":\"Status\",\"code\":404,\"message\":\"not here\"}");
        return;
    }
    if (r->watch) {
        fakeapi_stream_open(c);
        return;
    }
    n = fakeapi_count_of(s, "GET", CM_PATH, false);
    fakeapi_reply(c, 200, NULL, sc->lists[n <= sc->nlists ? n - 1 : sc->nlists - 1]);
}

/*
 * A list whose items is not an array is reported as a parse error, leaves
 * the cache empty and unsynced, and is retried; the next good list syncs and
 * the watch starts from its resourceVersion.
 */
static void test_list_items_not_array(void **state)
{
    static const char *const good[] = {"a:5", "b:6"};
    char goodbuf[2048], rv[32];
    script sc = {.lists = {"{\"kind\":\"ConfigMapList\",\"metadata\":{\"resourceVersion\":\"3\"},"
                           "\"items\":{\"a\":1}}",
                           NULL},
                 .nlists = 2};
    watched wd;
    fixture f;

    (void)state;
    sc.lists[1] = cm_list(goodbuf, sizeof(goodbuf), "6", good, 2);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, 0);
    RUN_UNTIL(&f, fakeapi_streaming(f.srv));
    assert_true(fakeapi_streaming(f.srv));
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 2);
    assert_true(wd.nerrors >= 1);
    assert_int_equal(wd.errors[0].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[0].message, "has no items or metadata"));
    assert_int_equal(wd.count_at_first_error, 0);
    assert_false(wd.synced_at_first_error);
    assert_int_equal(wd.synced, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_non_null(kube_cache_get(&wd.cache, "default", "a"));
    assert_string_equal(query_param(fake_nth(f.srv, "GET", CM_PATH, true, 0), "resourceVersion",
                                    rv, sizeof(rv)),
                        "6");
    watched_stop(&wd);
    fixture_stop(&f);
}

/*
 * The first list stops half-way (a 200 whose body never ends, as a stalled
 * stream of the API server's answer looks): the read fails once `stall`
 * seconds pass without a byte, well before the request's timeout, naming
 * the path; the watch lists again and syncs.
 */
static void stall_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    if (strcmp(r->method, "GET") == 0 && !r->watch &&
        fakeapi_count_of(s, "GET", CM_PATH, false) == 1) {
        fakeapi_stream_open(c);
        fakeapi_stream_send(s, "{\"kind\":\"ConfigMapList\",\"items\":[{\"metadata\":");
        return;
    }
    script_handler(s, c, r, ud);
}

static void test_list_stalled_half_way(void **state)
{
    static const char *const items[] = {"a:5", "b:6"};
    const double stall = 1.0;
    kube_client_opts o = {.stall = stall, .timeout = 30};
    char listbuf[2048];
    script sc = {.lists = {NULL}, .nlists = 1};
    const fakeapi_req_t *l1, *l2;
    watched wd;
    fixture f;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "6", items, 2);
    fixture_start(&f, &o, false, stall_handler, &sc);
    watched_start(&wd, &f, 0);
    RUN_UNTIL(&f, wd.synced == 1);
    assert_int_equal(wd.synced, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 2);
    assert_int_equal(wd.nerrors, 1);
    assert_int_equal(wd.errors[0].code, HCP_ETRANSPORT);
    if (strstr(wd.errors[0].message, CM_PATH) == NULL ||
        strstr(wd.errors[0].message, "too slow") == NULL)
        fail_msg("unexpected message: %s", wd.errors[0].message);
    assert_int_equal(wd.count_at_first_error, 0);
    l1 = fake_nth(f.srv, "GET", CM_PATH, false, 0);
    l2 = fake_nth(f.srv, "GET", CM_PATH, false, 1);
    /* Ended by the stall guard, not by the 30 s timeout: libcurl's speed is
     * an average over the last 5 s or so, so the bytes that did arrive
     * keep it above 1 byte/s for that long first. */
    assert_true(l2->at - l1->at >= stall - 1e-3);
    assert_true(l2->at - l1->at < stall + 12.0);
    watched_stop(&wd);
    fixture_stop(&f);
}

/* A write the server answers only after more than `stall` seconds is not
 * cut: an admission webhook may take that long before the first byte. */
static void late_reply_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    fakeapi_conn_t **pending = ud;

    (void)s;
    (void)r;
    *pending = c;
}

static void test_write_answered_late_is_not_cut(void **state)
{
    kube_client_opts o = {.stall = 1.0, .timeout = 30};
    json_t *patch = json_pack("{s:{s:s}}", "data", "k", "v");
    fakeapi_conn_t *pending = NULL;
    result pat = {0};
    fixture f;
    kube_error e;

    (void)state;
    fixture_start(&f, &o, false, late_reply_handler, &pending);
    assert_int_equal(kube_merge_patch(&f.client, CM_PATH "/slow", patch, store, &pat, &e), 0);
    RUN_UNTIL(&f, pending != NULL);
    assert_non_null(pending);
    run_for(&f, 2.5);
    assert_false(pat.done);
    fakeapi_reply(pending, 200, NULL,
                  "{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"slow\"}}");
    RUN_UNTIL(&f, pat.done);
    assert_true(pat.done);
    if (pat.failed)
        fail_msg("the write failed: %s", pat.err.message);
    assert_int_equal(fakeapi_count_of(f.srv, "PATCH", CM_PATH "/slow", false), 1);
    json_decref(pat.obj);
    json_decref(patch);
    fixture_stop(&f);
}

/*
 * A malformed line in a watch stream: the error is reported, the stream is
 * dropped (events after the bad line are not applied) and a new watch
 * resumes from the last good resourceVersion; an event without an object is
 * reported and skipped. The cache holds exactly what the good events said.
 */
static void test_watch_malformed_event(void **state)
{
    static const char *const items[] = {"a:5", "b:6"};
    char listbuf[2048], ev1[1024], ev2[1024], chunk[4096], rv[32];
    script sc = {.lists = {NULL}, .nlists = 1};
    watched wd;
    fixture f;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "6", items, 2);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, 0);
    RUN_UNTIL(&f, fakeapi_streaming(f.srv));
    assert_true(fakeapi_streaming(f.srv));
    assert_int_equal(wd.synced, 1);

    /* One chunk: good ADDED c, an event without object, a broken line, then DELETED a. */
    snprintf(chunk, sizeof(chunk), "%s%s%s%s", event(ev1, sizeof(ev1), "ADDED", "c", "11"),
             "{\"type\":\"ADDED\"}\n", "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":\n",
             event(ev2, sizeof(ev2), "DELETED", "a", "13"));
    fakeapi_stream_send(f.srv, chunk);
    RUN_UNTIL(&f, fakeapi_count_of(f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 1); /* no relist */
    assert_int_equal(wd.nerrors, 2);
    assert_int_equal(wd.errors[0].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[0].message, "event without type or object"));
    assert_int_equal(wd.errors[1].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[1].message, "bad event JSON"));
    assert_int_equal(wd.w.stats.restarts, 1);
    assert_string_equal(query_param(fake_nth(f.srv, "GET", CM_PATH, true, 1), "resourceVersion",
                                    rv, sizeof(rv)),
                        "11");
    assert_int_equal(kube_cache_count(&wd.cache), 3);
    assert_non_null(kube_cache_get(&wd.cache, "default", "a"));
    assert_string_equal(kube_cache_get(&wd.cache, "default", "c")->rv, "11");
    assert_int_equal(wd.ndeleted, 0);

    /* The old stream was dropped by the client; the new one works. */
    RUN_UNTIL(&f, fakeapi_closed(f.srv) >= 1);
    assert_true(fakeapi_closed(f.srv) >= 1);
    fakeapi_stream_send(f.srv, event(ev2, sizeof(ev2), "DELETED", "a", "13"));
    RUN_UNTIL(&f, wd.ndeleted == 1);
    assert_int_equal(wd.ndeleted, 1);
    assert_string_equal(wd.deleted[0], "a");
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_string_equal(wd.w.rv, "13");
    watched_stop(&wd);
    fixture_stop(&f);
}

/*
 * The echo of a version the cache holds (the answer of the client's own
 * write went into it first) is counted and not parsed; a newer version of
 * the same object is applied, and a DELETED at the held version removes it.
 */
static void test_watch_echo_not_parsed(void **state)
{
    static const char *const items[] = {"a:5"};
    char listbuf[1024], ev[1024];
    script sc = {.lists = {NULL}, .nlists = 1};
    watched wd;
    fixture f;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "5", items, 1);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, 0);
    RUN_UNTIL(&f, fakeapi_streaming(f.srv));
    assert_int_equal(wd.synced, 1);
    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "MODIFIED", "a", "5"));
    RUN_UNTIL(&f, wd.w.stats.events == 1);
    assert_int_equal(wd.w.stats.echoes, 1);
    assert_int_equal(wd.cache.updates, 0);
    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "MODIFIED", "a", "7"));
    RUN_UNTIL(&f, wd.w.stats.events == 2);
    assert_int_equal(wd.w.stats.echoes, 1);
    assert_int_equal(wd.cache.updates, 1);
    assert_string_equal(kube_cache_get(&wd.cache, "default", "a")->rv, "7");
    assert_string_equal(wd.w.rv, "7");
    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "DELETED", "a", "7"));
    RUN_UNTIL(&f, wd.ndeleted == 1);
    assert_int_equal(wd.w.stats.echoes, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 0);
    assert_int_equal(wd.nerrors, 0);
    watched_stop(&wd);
    fixture_stop(&f);
}

/*
 * A watch that is accepted and then silent: the watchdog kills it after
 * `silence` seconds and a new watch resumes from the last resourceVersion.
 * A stream that keeps delivering bookmarks is left alone.
 */
static void test_watch_silent_watchdog(void **state)
{
    static const char *const items[] = {"a:20"};
    const double silence = 2.0; /* longer than a request takes under valgrind, loaded */
    char listbuf[2048], bm[256], rv[32];
    script sc = {.lists = {NULL}, .nlists = 1};
    watched wd;
    fixture f;
    const fakeapi_req_t *w1, *w2;
    int i;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "20", items, 1);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, silence);
    RUN_UNTIL(&f, fakeapi_count_of(f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(wd.w.stats.watchdog_fired, 1);
    assert_int_equal(wd.nerrors, 1);
    assert_int_equal(wd.errors[0].code, HCP_ETRANSPORT);
    assert_non_null(strstr(wd.errors[0].message, "no data for"));
    /* The silence is the client's: from the moment it sent the watch, not
     * from the moment the server had read it (later, on a loaded machine
     * under valgrind), to the watchdog's cut. The new watch comes after. */
    assert_true(wd.quiet_at_first_error >= silence - 1e-3);
    w1 = fake_nth(f.srv, "GET", CM_PATH, true, 0);
    w2 = fake_nth(f.srv, "GET", CM_PATH, true, 1);
    assert_true(w2->at > w1->at);
    assert_string_equal(query_param(w2, "resourceVersion", rv, sizeof(rv)), "20");
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 1); /* no relist */
    RUN_UNTIL(&f, fakeapi_closed(f.srv) >= 1); /* the silent stream's connection was closed */
    assert_true(fakeapi_closed(f.srv) >= 1);

    /* Bookmarks every 0.1 s for 1 s: no more watchdog, no new watch. */
    for (i = 0; i < 10; i++) {
        snprintf(bm, sizeof(bm),
                 "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                 "\"metadata\":{\"resourceVersion\":\"%d\"}}}\n",
                 21 + i);
        fakeapi_stream_send(f.srv, bm);
        run_for(&f, 0.1);
    }
    assert_int_equal(wd.w.stats.watchdog_fired, 1);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(wd.w.stats.bookmarks, 10);
    assert_string_equal(wd.w.rv, "30");
    assert_int_equal(kube_cache_count(&wd.cache), 1);
    watched_stop(&wd);
    fixture_stop(&f);
}

/*
 * 410 Gone as an ERROR event: the watch relists; the cache ends with exactly
 * the new list (b, deleted meanwhile, is reported deleted once; a,
 * unchanged, is not updated) and the next watch starts from the new list.
 */
static void test_watch_gone_event_relists(void **state)
{
    static const char *const first[] = {"a:5", "b:6"};
    static const char *const second[] = {"a:5", "c:9"};
    char l1[2048], l2[2048], ev[1024], rv[32];
    script sc = {.lists = {NULL}, .nlists = 2};
    watched wd;
    fixture f;

    (void)state;
    sc.lists[0] = cm_list(l1, sizeof(l1), "6", first, 2);
    sc.lists[1] = cm_list(l2, sizeof(l2), "9", second, 2);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, 0);
    RUN_UNTIL(&f, fakeapi_streaming(f.srv));
    assert_true(fakeapi_streaming(f.srv));
    assert_int_equal(kube_cache_count(&wd.cache), 2);

    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "MODIFIED", "b", "7"));
    fakeapi_stream_send(f.srv, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
                             "\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: "
                             "7 (8)\",\"reason\":\"Expired\",\"code\":410}}\n");
    RUN_UNTIL(&f, fakeapi_count_of(f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 2);
    assert_true(fake_nth(f.srv, "GET", CM_PATH, false, 1)->at >=
                fake_nth(f.srv, "GET", CM_PATH, true, 0)->at);
    assert_int_equal(wd.w.stats.gone, 1);
    assert_int_equal(wd.w.stats.relists, 1);
    assert_int_equal(wd.nerrors, 1);
    assert_int_equal(wd.errors[0].http_status, 410);
    assert_string_equal(wd.errors[0].reason, "Expired");
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_non_null(kube_cache_get(&wd.cache, "default", "a"));
    assert_non_null(kube_cache_get(&wd.cache, "default", "c"));
    assert_null(kube_cache_get(&wd.cache, "default", "b"));
    assert_int_equal(wd.ndeleted, 1);
    assert_string_equal(wd.deleted[0], "b");
    assert_int_equal(wd.cache.adds, 3);    /* a, b, then c */
    assert_int_equal(wd.cache.updates, 1); /* the MODIFIED b; a unchanged by the relist */
    assert_int_equal(wd.synced, 1);
    assert_string_equal(query_param(fake_nth(f.srv, "GET", CM_PATH, true, 1), "resourceVersion",
                                    rv, sizeof(rv)),
                        "9");

    /* A late DELETED b on the new stream changes nothing: b is reported once. */
    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "DELETED", "b", "10"));
    fakeapi_stream_send(f.srv, event(ev, sizeof(ev), "MODIFIED", "c", "11"));
    RUN_UNTIL(&f, wd.cache.updates == 2);
    assert_int_equal(wd.cache.updates, 2);
    assert_int_equal(wd.ndeleted, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    watched_stop(&wd);
    fixture_stop(&f);
}

/* Answers every watch with an empty 200 (a proxy that ends streams at once). */
static void empty_watch_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    script *sc = ud;

    if (r->watch) {
        fakeapi_reply(c, 200, NULL, "");
        return;
    }
    script_handler(s, c, r, sc);
}

/*
 * A watch that ends cleanly at once without a byte is treated as a failure
 * and retried after backoff, not restarted in a tight loop.
 */
static void test_watch_empty_stream_backs_off(void **state)
{
    static const char *const items[] = {"a:5"};
    char listbuf[2048];
    script sc = {.lists = {NULL}, .nlists = 1};
    watched wd;
    fixture f;
    int watches, seen;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "5", items, 1);
    fixture_start(&f, NULL, false, empty_watch_handler, &sc);
    watched_start(&wd, &f, 0);
    run_for(&f, 1.0);
    watches = (int)wd.w.stats.watches;
    seen = fakeapi_count_of(f.srv, "GET", CM_PATH, true);
    /* The last watch may have been sent but not yet received when time ran out. */
    assert_true(seen == watches || seen + 1 == watches);
    assert_int_equal(fakeapi_count(f.srv), seen + 1); /* and the one list */
    /*
     * Backoff from 0.05 s doubling to 0.2 s, each wait at least half of that:
     * 0.025 + 0.05 + 0.1 + 0.1 + ... fit at most 11 retries into 1 s.
     */
    if (watches < 3 || watches > 12)
        fail_msg("%d watches in 1 s", watches);
    assert_int_equal(fakeapi_count_of(f.srv, "GET", CM_PATH, false), 1);
    assert_true(wd.nerrors >= watches - 1);
    assert_int_equal(wd.errors[0].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[0].message, "ended the stream at once without data"));
    assert_int_equal(kube_cache_count(&wd.cache), 1);
    watched_stop(&wd);
    fixture_stop(&f);
}

/* ---- token rotation -------------------------------------------------------- */

typedef struct auth_check {
    const char *reject;  /* Authorization value answered with 401, or NULL */
} auth_check;

static void auth_handler(fakeapi_t *s, fakeapi_conn_t *c, const fakeapi_req_t *r, void *ud)
{
    auth_check *a = ud;
    char body[512];

    (void)s;
    if (a->reject && strcmp(r->auth, a->reject) == 0) {
        fakeapi_reply(c, 401, NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                   "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}");
        return;
    }
    fakeapi_reply(c, 200, NULL, cm(body, sizeof(body), "x", "1"));
}

static void get_ok(fixture *f)
{
    result r = {0};
    kube_error e;

    assert_int_equal(kube_get(&f->client, CM_PATH "/x", store, &r, &e), 0);
    RUN_UNTIL(f, r.done);
    assert_true(r.done);
    if (r.failed)
        fail_msg("GET failed: %s", r.err.message);
    json_decref(r.obj);
}

/*
 * The token file is re-read when it changes (checked at most every
 * token_recheck seconds): the next request carries the new token. A token
 * rotated without a visible change (same mtime) is picked up when the server
 * answers 401, and the request is retried once with it.
 */
static void test_token_rotation(void **state)
{
    kube_client_opts o = {.token_recheck = 0.05};
    auth_check a = {.reject = NULL};
    fixture f;

    (void)state;
    fixture_start(&f, &o, true, auth_handler, &a);
    get_ok(&f);
    assert_int_equal(fakeapi_count(f.srv), 1);
    assert_string_equal(fakeapi_nth(f.srv, 0)->auth, "Bearer token-one");

    write_token(&f, "token-two", 1000000100);
    run_for(&f, 0.1);
    get_ok(&f);
    assert_int_equal(fakeapi_count(f.srv), 2);
    assert_string_equal(fakeapi_nth(f.srv, 1)->auth, "Bearer token-two");
    assert_int_equal(f.client.token_reloads, 1);

    /* Same mtime as before: only the 401 reveals the rotation. */
    write_token(&f, "token-three", 1000000100);
    a.reject = "Bearer token-two";
    run_for(&f, 0.1);
    get_ok(&f);
    assert_int_equal(fakeapi_count(f.srv), 4);
    assert_string_equal(fakeapi_nth(f.srv, 2)->auth, "Bearer token-two");
    assert_string_equal(fakeapi_nth(f.srv, 3)->auth, "Bearer token-three");
    assert_int_equal(f.client.token_reloads, 2);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 401), 1);
    assert_int_equal(stat_count(&f.client, KUBE_VERB_GET, 200), 3);
    fixture_stop(&f);
}

/*
 * With a long re-check interval the file is not looked at again before it
 * elapses: the rotated token is not used yet.
 */
static void test_token_recheck_interval(void **state)
{
    kube_client_opts o = {.token_recheck = 3600};
    auth_check a = {.reject = NULL};
    fixture f;

    (void)state;
    fixture_start(&f, &o, true, auth_handler, &a);
    get_ok(&f);
    write_token(&f, "token-two", 1000000100);
    run_for(&f, 0.1);
    get_ok(&f);
    assert_int_equal(fakeapi_count(f.srv), 2);
    assert_string_equal(fakeapi_nth(f.srv, 1)->auth, "Bearer token-one");
    assert_int_equal(f.client.token_reloads, 0);
    fixture_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_429_retry_after),
        cmocka_unit_test(test_idle_connection_not_reused_past_idle_max),
        cmocka_unit_test(test_broken_connection_resends_reads_once),
        cmocka_unit_test(test_probe_until_the_api_server_serves),
        cmocka_unit_test(test_429_backoff_gives_up),
        cmocka_unit_test(test_warning_headers),
        cmocka_unit_test(test_broken_json_response),
        cmocka_unit_test(test_list_items_not_array),
        cmocka_unit_test(test_list_stalled_half_way),
        cmocka_unit_test(test_write_answered_late_is_not_cut),
        cmocka_unit_test(test_watch_malformed_event),
        cmocka_unit_test(test_watch_echo_not_parsed),
        cmocka_unit_test(test_watch_silent_watchdog),
        cmocka_unit_test(test_watch_gone_event_relists),
        cmocka_unit_test(test_watch_empty_stream_backs_off),
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_token_recheck_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
