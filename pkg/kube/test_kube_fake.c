/*
 * Tests for pkg/kube against a fake API server: behaviours a real
 * kube-apiserver will not produce on demand (429 throttling, broken JSON,
 * silent watch streams, 410 Gone as a watch event, token rotation).
 *
 * The fake is a plain HTTP/1.1 server on 127.0.0.1 with an ephemeral port,
 * driven by ev_io watchers in the same libev loop as the client, so a test is
 * single-threaded and deterministic: it runs the loop until the client or the
 * fake reaches a state, then asserts. Each test installs a handler that
 * decides how the fake answers; a handler may reply at once, open a chunked
 * stream (a watch) that the test feeds later, or leave the request
 * unanswered. The fake records every request it saw (method, path, query,
 * Authorization, body, arrival time) for the assertions.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <errno.h>
#include <ev.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/watch.h"

#define CM_PATH "/api/v1/namespaces/default/configmaps"
#define FAKE_MAX_LOG 64
/* Seconds any single wait may take before the test fails (valgrind on a
 * loaded machine is slow). */
#define WAIT_LIMIT 20.0

/* ---- the fake API server ------------------------------------------------- */

typedef struct fake_server fake_server;
typedef struct fake_conn fake_conn;

/* One request as the fake saw it. */
typedef struct fake_req {
    char method[16];
    char path[256];    /* without the query string */
    char query[512];   /* raw query string, "" when none */
    char auth[256];    /* Authorization header, "" when absent */
    char body[1024];   /* request body (truncated copy) */
    bool watch;        /* query has watch=1 */
    double at;         /* ev_now() when the request was complete */
} fake_req;

/*
 * Decides the answer to request r (already in the log when it is among the
 * first FAKE_MAX_LOG). It may call fake_reply(), fake_stream_open(), or
 * neither (the request then hangs).
 */
typedef void (*fake_handler)(fake_server *s, fake_conn *c, const fake_req *r, void *ud);

struct fake_conn {
    ev_io io;                /* readable */
    fake_server *s;
    int fd;
    char buf[16384];         /* request bytes not yet parsed */
    size_t len;
    fake_conn *next;
};

struct fake_server {
    struct ev_loop *loop;
    int lfd;
    int port;
    ev_io accept_io;
    fake_conn *conns;        /* open connections */
    fake_conn *stream;       /* connection of the last stream opened, NULL once closed */
    fake_handler handler;
    void *ud;
    fake_req log[FAKE_MAX_LOG]; /* the first requests, in order */
    int nlog;
    unsigned long requests;  /* all requests, logged or not */
    int closed;              /* connections the client closed */
};

static void fake_write(fake_conn *c, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, data, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the client went away; the read side notices */
        data += n;
        len -= (size_t)n;
    }
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 401: return "Unauthorized";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    default: return "Status";
    }
}

/* A complete response with Content-Length. extra: more header lines ("Name: v\r\n") or NULL. */
static void fake_reply(fake_conn *c, int status, const char *extra, const char *body)
{
    char head[512];
    int n = snprintf(head, sizeof(head),
                     "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                     "Content-Length: %zu\r\n%s\r\n",
                     status, reason_phrase(status), strlen(body), extra ? extra : "");

    assert_true(n > 0 && (size_t)n < sizeof(head));
    fake_write(c, head, (size_t)n);
    fake_write(c, body, strlen(body));
}

/* Starts a chunked 200 response left open; the test feeds it with fake_stream_send(). */
static void fake_stream_open(fake_conn *c)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";

    fake_write(c, head, sizeof(head) - 1);
    c->s->stream = c;
}

/* Sends one chunk on the open stream. */
static void fake_stream_send(fake_server *s, const char *data)
{
    char head[32];
    int n;

    assert_non_null(s->stream);
    n = snprintf(head, sizeof(head), "%zx\r\n", strlen(data));
    fake_write(s->stream, head, (size_t)n);
    fake_write(s->stream, data, strlen(data));
    fake_write(s->stream, "\r\n", 2);
}

static void conn_close(fake_conn *c)
{
    fake_server *s = c->s;
    fake_conn **p;

    for (p = &s->conns; *p; p = &(*p)->next) {
        if (*p == c) {
            *p = c->next;
            break;
        }
    }
    if (s->stream == c)
        s->stream = NULL;
    ev_io_stop(s->loop, &c->io);
    close(c->fd);
    free(c);
}

/* Copies the value of header `name` from the header block into out ("" when absent). */
static void header_value(const char *head, size_t hlen, const char *name, char *out, size_t outlen)
{
    size_t nlen = strlen(name), i = 0;

    out[0] = '\0';
    while (i < hlen) {
        const char *line = head + i;
        const char *eol = memchr(line, '\n', hlen - i);
        size_t llen = eol ? (size_t)(eol - line) : hlen - i;
        if (llen > nlen && strncasecmp(line, name, nlen) == 0 && line[nlen] == ':') {
            size_t v = nlen + 1;
            while (v < llen && line[v] == ' ')
                v++;
            while (llen > v && (line[llen - 1] == '\r' || line[llen - 1] == ' '))
                llen--;
            snprintf(out, outlen, "%.*s", (int)(llen - v), line + v);
            return;
        }
        i += llen + 1;
    }
}

/* Parses one complete request from c->buf; returns its size, or 0 when incomplete. */
static size_t parse_request(fake_conn *c, fake_req *r)
{
    const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    char clen[32], target[768];
    size_t hlen, blen = 0, ml, tl;
    const char *sp1, *sp2, *q;

    if (end == NULL)
        return 0;
    hlen = (size_t)(end - c->buf) + 4;
    header_value(c->buf, hlen, "Content-Length", clen, sizeof(clen));
    if (clen[0]) {
        char *e;
        unsigned long v = strtoul(clen, &e, 10);
        assert_true(*e == '\0' && v < sizeof(c->buf));
        blen = v;
    }
    if (c->len < hlen + blen)
        return 0;
    memset(r, 0, sizeof(*r));
    sp1 = memchr(c->buf, ' ', hlen);
    assert_non_null(sp1);
    sp2 = memchr(sp1 + 1, ' ', hlen - (size_t)(sp1 + 1 - c->buf));
    assert_non_null(sp2);
    ml = (size_t)(sp1 - c->buf);
    tl = (size_t)(sp2 - sp1 - 1);
    snprintf(r->method, sizeof(r->method), "%.*s", (int)ml, c->buf);
    snprintf(target, sizeof(target), "%.*s", (int)tl, sp1 + 1);
    q = strchr(target, '?');
    if (q == NULL)
        q = target + strlen(target);
    assert_true((size_t)(q - target) < sizeof(r->path));
    snprintf(r->path, sizeof(r->path), "%.*s", (int)(q - target), target);
    if (*q == '?') {
        assert_true(strlen(q + 1) < sizeof(r->query));
        snprintf(r->query, sizeof(r->query), "%.*s", (int)(sizeof(r->query) - 1), q + 1);
    }
    header_value(c->buf, hlen, "Authorization", r->auth, sizeof(r->auth));
    snprintf(r->body, sizeof(r->body), "%.*s", (int)blen, c->buf + hlen);
    r->watch = strncmp(r->query, "watch=1", 7) == 0 || strstr(r->query, "&watch=1") != NULL;
    r->at = ev_now(c->s->loop);
    return hlen + blen;
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    fake_conn *c = (fake_conn *)w;
    fake_server *s = c->s;
    ssize_t n;
    size_t used;
    fake_req r;

    (void)loop;
    (void)revents;
    n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        s->closed++;
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    while ((used = parse_request(c, &r)) > 0) {
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        s->requests++;
        if (s->nlog < FAKE_MAX_LOG)
            s->log[s->nlog++] = r;
        s->handler(s, c, &r, s->ud);
    }
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    fake_server *s = (fake_server *)((char *)w - offsetof(fake_server, accept_io));
    fake_conn *c;
    int fd;

    (void)revents;
    fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return;
    c = calloc(1, sizeof(*c));
    assert_non_null(c);
    c->s = s;
    c->fd = fd;
    c->next = s->conns;
    s->conns = c;
    ev_io_init(&c->io, conn_cb, fd, EV_READ);
    ev_io_start(loop, &c->io);
}

static void fake_start(fake_server *s, struct ev_loop *loop)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);

    memset(s, 0, sizeof(*s));
    s->loop = loop;
    s->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    assert_true(s->lfd >= 0);
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    assert_int_equal(bind(s->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(listen(s->lfd, 16), 0);
    assert_int_equal(getsockname(s->lfd, (struct sockaddr *)&a, &alen), 0);
    s->port = ntohs(a.sin_port);
    ev_io_init(&s->accept_io, accept_cb, s->lfd, EV_READ);
    ev_io_start(loop, &s->accept_io);
}

static void fake_stop(fake_server *s)
{
    while (s->conns)
        conn_close(s->conns);
    ev_io_stop(s->loop, &s->accept_io);
    close(s->lfd);
}

/* Requests in the log with this method and path; watch selects watches or the rest. */
static int fake_count(const fake_server *s, const char *method, const char *path, bool watch)
{
    int i, n = 0;

    for (i = 0; i < s->nlog; i++) {
        if (strcmp(s->log[i].method, method) == 0 && strcmp(s->log[i].path, path) == 0 &&
            s->log[i].watch == watch)
            n++;
    }
    return n;
}

/* The k-th (0-based) logged request with this method, path and kind; fails the test if absent. */
static const fake_req *fake_nth(const fake_server *s, const char *method, const char *path,
                                bool watch, int k)
{
    int i, left = k;

    for (i = 0; i < s->nlog; i++) {
        if (strcmp(s->log[i].method, method) == 0 && strcmp(s->log[i].path, path) == 0 &&
            s->log[i].watch == watch && left-- == 0)
            return &s->log[i];
    }
    fail_msg("no request %s %s (watch=%d) number %d", method, path, (int)watch, k);
    return NULL;
}

/* Value of a query parameter (not decoded; the tests use plain values), "" when absent. */
static const char *query_param(const fake_req *r, const char *key, char *out, size_t outlen)
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
    fake_server srv;
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
                          fake_handler h, void *ud)
{
    char yaml[2048];
    kube_error e;
    int rc;

    memset(f, 0, sizeof(*f));
    f->loop = ev_loop_new(EVFLAG_AUTO);
    assert_non_null(f->loop);
    fake_start(&f->srv, f->loop);
    f->srv.handler = h;
    f->srv.ud = ud;
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
                  f->srv.port, with_token ? "    user: u\n" : "",
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
    fake_stop(&f->srv);
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

static void throttle_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    throttle *t = ud;
    int seen = fake_count(s, r->method, r->path, r->watch);
    char body[512], hdr[64];

    if (t->refuse < 0 || seen <= t->refuse) {
        snprintf(body, sizeof(body), THROTTLE_STATUS, t->message);
        if (t->retry_after)
            snprintf(hdr, sizeof(hdr), "Retry-After: %s\r\n", t->retry_after);
        fake_reply(c, 429, t->retry_after ? hdr : NULL, body);
        return;
    }
    fake_reply(c, 200, NULL, cm(body, sizeof(body), strrchr(r->path, '/') + 1, "7"));
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
    assert_int_equal(fake_count(&f.srv, "GET", get_path, false), 3);
    assert_int_equal(fake_count(&f.srv, "PATCH", patch_path, false), 3);
    for (i = 0; i < 3; i++)
        assert_string_equal(fake_nth(&f.srv, "PATCH", patch_path, false, i)->body,
                            "{\"data\":{\"k\":\"patched\"}}");
    for (i = 1; i < 3; i++) {
        double gap_get = fake_nth(&f.srv, "GET", get_path, false, i)->at -
                         fake_nth(&f.srv, "GET", get_path, false, i - 1)->at;
        double gap_patch = fake_nth(&f.srv, "PATCH", patch_path, false, i)->at -
                           fake_nth(&f.srv, "PATCH", patch_path, false, i - 1)->at;
        assert_true(gap_get >= 1.0 - 1e-3);
        assert_true(gap_patch >= 1.0 - 1e-3);
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
    assert_int_equal(fake_count(&f.srv, "GET", path, false), 4);
    for (i = 1; i < 4; i++) {
        double gap = fake_nth(&f.srv, "GET", path, false, i)->at -
                     fake_nth(&f.srv, "GET", path, false, i - 1)->at;
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
    assert_int_equal(fake_count(&f.srv, "GET", path, false), 1);
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

static void warning_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    char body[512];

    (void)s;
    (void)ud;
    fake_reply(c, 200,
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

static void canned_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    const canned *k = ud;

    (void)s;
    (void)r;
    fake_reply(c, k->status, NULL, k->body);
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

    (void)w;
    if (wd->nerrors == 0) {
        wd->count_at_first_error = kube_cache_count(&wd->cache);
        wd->synced_at_first_error = wd->cache.synced;
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

static void script_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    script *sc = ud;
    int n;

    if (strcmp(r->method, "GET") != 0 || strcmp(r->path, CM_PATH) != 0) {
        fake_reply(c, 404, NULL, "{\"kind\":\"Status\",\"code\":404,\"message\":\"not here\"}");
        return;
    }
    if (r->watch) {
        fake_stream_open(c);
        return;
    }
    n = fake_count(s, "GET", CM_PATH, false);
    fake_reply(c, 200, NULL, sc->lists[n <= sc->nlists ? n - 1 : sc->nlists - 1]);
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
    RUN_UNTIL(&f, f.srv.stream != NULL);
    assert_non_null(f.srv.stream);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, false), 2);
    assert_true(wd.nerrors >= 1);
    assert_int_equal(wd.errors[0].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[0].message, "has no items or metadata"));
    assert_int_equal(wd.count_at_first_error, 0);
    assert_false(wd.synced_at_first_error);
    assert_int_equal(wd.synced, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_non_null(kube_cache_get(&wd.cache, "default", "a"));
    assert_string_equal(query_param(fake_nth(&f.srv, "GET", CM_PATH, true, 0), "resourceVersion",
                                    rv, sizeof(rv)),
                        "6");
    watched_stop(&wd);
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
    RUN_UNTIL(&f, f.srv.stream != NULL);
    assert_non_null(f.srv.stream);
    assert_int_equal(wd.synced, 1);

    /* One chunk: good ADDED c, an event without object, a broken line, then DELETED a. */
    snprintf(chunk, sizeof(chunk), "%s%s%s%s", event(ev1, sizeof(ev1), "ADDED", "c", "11"),
             "{\"type\":\"ADDED\"}\n", "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":\n",
             event(ev2, sizeof(ev2), "DELETED", "a", "13"));
    fake_stream_send(&f.srv, chunk);
    RUN_UNTIL(&f, fake_count(&f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, false), 1); /* no relist */
    assert_int_equal(wd.nerrors, 2);
    assert_int_equal(wd.errors[0].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[0].message, "event without type or object"));
    assert_int_equal(wd.errors[1].code, HCP_EPARSE);
    assert_non_null(strstr(wd.errors[1].message, "bad event JSON"));
    assert_int_equal(wd.w.stats.restarts, 1);
    assert_string_equal(query_param(fake_nth(&f.srv, "GET", CM_PATH, true, 1), "resourceVersion",
                                    rv, sizeof(rv)),
                        "11");
    assert_int_equal(kube_cache_count(&wd.cache), 3);
    assert_non_null(kube_cache_get(&wd.cache, "default", "a"));
    assert_string_equal(kube_cache_get(&wd.cache, "default", "c")->rv, "11");
    assert_int_equal(wd.ndeleted, 0);

    /* The old stream was dropped by the client; the new one works. */
    RUN_UNTIL(&f, f.srv.closed >= 1);
    assert_true(f.srv.closed >= 1);
    fake_stream_send(&f.srv, event(ev2, sizeof(ev2), "DELETED", "a", "13"));
    RUN_UNTIL(&f, wd.ndeleted == 1);
    assert_int_equal(wd.ndeleted, 1);
    assert_string_equal(wd.deleted[0], "a");
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    assert_string_equal(wd.w.rv, "13");
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
    const fake_req *w1, *w2;
    int i;

    (void)state;
    sc.lists[0] = cm_list(listbuf, sizeof(listbuf), "20", items, 1);
    fixture_start(&f, NULL, false, script_handler, &sc);
    watched_start(&wd, &f, silence);
    RUN_UNTIL(&f, fake_count(&f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(wd.w.stats.watchdog_fired, 1);
    assert_int_equal(wd.nerrors, 1);
    assert_int_equal(wd.errors[0].code, HCP_ETRANSPORT);
    assert_non_null(strstr(wd.errors[0].message, "no data for"));
    w1 = fake_nth(&f.srv, "GET", CM_PATH, true, 0);
    w2 = fake_nth(&f.srv, "GET", CM_PATH, true, 1);
    assert_true(w2->at - w1->at >= silence - 1e-3);
    assert_string_equal(query_param(w2, "resourceVersion", rv, sizeof(rv)), "20");
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, false), 1); /* no relist */
    RUN_UNTIL(&f, f.srv.closed >= 1); /* the silent stream's connection was closed */
    assert_true(f.srv.closed >= 1);

    /* Bookmarks every 0.1 s for 1 s: no more watchdog, no new watch. */
    for (i = 0; i < 10; i++) {
        snprintf(bm, sizeof(bm),
                 "{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\","
                 "\"metadata\":{\"resourceVersion\":\"%d\"}}}\n",
                 21 + i);
        fake_stream_send(&f.srv, bm);
        run_for(&f, 0.1);
    }
    assert_int_equal(wd.w.stats.watchdog_fired, 1);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, true), 2);
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
    RUN_UNTIL(&f, f.srv.stream != NULL);
    assert_non_null(f.srv.stream);
    assert_int_equal(kube_cache_count(&wd.cache), 2);

    fake_stream_send(&f.srv, event(ev, sizeof(ev), "MODIFIED", "b", "7"));
    fake_stream_send(&f.srv, "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":"
                             "\"v1\",\"status\":\"Failure\",\"message\":\"too old resource version: "
                             "7 (8)\",\"reason\":\"Expired\",\"code\":410}}\n");
    RUN_UNTIL(&f, fake_count(&f.srv, "GET", CM_PATH, true) == 2);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, true), 2);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, false), 2);
    assert_true(fake_nth(&f.srv, "GET", CM_PATH, false, 1)->at >=
                fake_nth(&f.srv, "GET", CM_PATH, true, 0)->at);
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
    assert_string_equal(query_param(fake_nth(&f.srv, "GET", CM_PATH, true, 1), "resourceVersion",
                                    rv, sizeof(rv)),
                        "9");

    /* A late DELETED b on the new stream changes nothing: b is reported once. */
    fake_stream_send(&f.srv, event(ev, sizeof(ev), "DELETED", "b", "10"));
    fake_stream_send(&f.srv, event(ev, sizeof(ev), "MODIFIED", "c", "11"));
    RUN_UNTIL(&f, wd.cache.updates == 2);
    assert_int_equal(wd.cache.updates, 2);
    assert_int_equal(wd.ndeleted, 1);
    assert_int_equal(kube_cache_count(&wd.cache), 2);
    watched_stop(&wd);
    fixture_stop(&f);
}

/* Answers every watch with an empty 200 (a proxy that ends streams at once). */
static void empty_watch_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    script *sc = ud;

    if (r->watch) {
        fake_reply(c, 200, NULL, "");
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
    seen = fake_count(&f.srv, "GET", CM_PATH, true);
    /* The last watch may have been sent but not yet received when time ran out. */
    assert_true(seen == watches || seen + 1 == watches);
    assert_int_equal(f.srv.requests, (unsigned long)seen + 1); /* and the one list */
    /*
     * Backoff from 0.05 s doubling to 0.2 s, each wait at least half of that:
     * 0.025 + 0.05 + 0.1 + 0.1 + ... fit at most 11 retries into 1 s.
     */
    if (watches < 3 || watches > 12)
        fail_msg("%d watches in 1 s", watches);
    assert_int_equal(fake_count(&f.srv, "GET", CM_PATH, false), 1);
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

static void auth_handler(fake_server *s, fake_conn *c, const fake_req *r, void *ud)
{
    auth_check *a = ud;
    char body[512];

    (void)s;
    if (a->reject && strcmp(r->auth, a->reject) == 0) {
        fake_reply(c, 401, NULL,
                   "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\","
                   "\"message\":\"Unauthorized\",\"reason\":\"Unauthorized\",\"code\":401}");
        return;
    }
    fake_reply(c, 200, NULL, cm(body, sizeof(body), "x", "1"));
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
    assert_int_equal(f.srv.nlog, 1);
    assert_string_equal(f.srv.log[0].auth, "Bearer token-one");

    write_token(&f, "token-two", 1000000100);
    run_for(&f, 0.1);
    get_ok(&f);
    assert_int_equal(f.srv.nlog, 2);
    assert_string_equal(f.srv.log[1].auth, "Bearer token-two");
    assert_int_equal(f.client.token_reloads, 1);

    /* Same mtime as before: only the 401 reveals the rotation. */
    write_token(&f, "token-three", 1000000100);
    a.reject = "Bearer token-two";
    run_for(&f, 0.1);
    get_ok(&f);
    assert_int_equal(f.srv.nlog, 4);
    assert_string_equal(f.srv.log[2].auth, "Bearer token-two");
    assert_string_equal(f.srv.log[3].auth, "Bearer token-three");
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
    assert_int_equal(f.srv.nlog, 2);
    assert_string_equal(f.srv.log[1].auth, "Bearer token-one");
    assert_int_equal(f.client.token_reloads, 0);
    fixture_stop(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_429_retry_after),
        cmocka_unit_test(test_429_backoff_gives_up),
        cmocka_unit_test(test_warning_headers),
        cmocka_unit_test(test_broken_json_response),
        cmocka_unit_test(test_list_items_not_array),
        cmocka_unit_test(test_watch_malformed_event),
        cmocka_unit_test(test_watch_silent_watchdog),
        cmocka_unit_test(test_watch_gone_event_relists),
        cmocka_unit_test(test_watch_empty_stream_backs_off),
        cmocka_unit_test(test_token_rotation),
        cmocka_unit_test(test_token_recheck_interval),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
