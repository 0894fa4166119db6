/*
 * Tests for pkg/httpserver: the server runs in the test's libev loop on the
 * main thread while a helper thread issues real HTTP requests with libcurl
 * and records what came back; assertions run on the main thread after the
 * helper is joined.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <ev.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "httpserver/httpserver.h"
#include "httpserver/testutil_tls.h"

#define BIG_SIZE (1024 * 1024)

static int scale_small(void)
{
    const char *s = getenv("HCP_TEST_SCALE");

    return s && strcmp(s, "small") == 0;
}

/* ---- client side (helper thread) ------------------------------------------ */

typedef struct req_spec {
    /* in */
    const char *method;   /* "GET", "HEAD", "POST", ... */
    const char *path;     /* path and query */
    const char *host;     /* default 127.0.0.1; "[::1]" for IPv6 */
    const char *body;     /* request body or NULL */
    size_t body_len;
    int chunked;          /* send the body with chunked encoding (no Content-Length) */
    const char *ca_pem;   /* HTTPS, trusting only this CA (PEM); NULL: plain HTTP */
    /* out */
    CURLcode curl_rc;
    long status;
    char *resp;           /* malloc'd response body */
    size_t resp_len;
    char content_type[128];
    char headers[1024];   /* raw response header lines */
    long connects;        /* new connections curl made for this request */
} req_spec;

typedef struct client_job {
    int port;
    req_spec *reqs;
    size_t n;
    int fresh;            /* a new connection for every request */
    int signal_after;     /* after the requests, SIGUSR1 instead of the async wake-up */
    struct ev_loop *loop;
    ev_async *done;
    pthread_t thread;
} client_job;

static size_t on_body(char *data, size_t size, size_t nmemb, void *ud)
{
    req_spec *r = ud;
    size_t n = size * nmemb;
    char *p = realloc(r->resp, r->resp_len + n + 1);

    if (p == NULL)
        return 0;
    r->resp = p;
    memcpy(r->resp + r->resp_len, data, n);
    r->resp_len += n;
    r->resp[r->resp_len] = '\0';
    return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *ud)
{
    req_spec *r = ud;
    size_t n = size * nmemb, used = strlen(r->headers);

    if (used + n < sizeof(r->headers)) {
        memcpy(r->headers + used, data, n);
        r->headers[used + n] = '\0';
    }
    return n;
}

/* Chunked uploads read from a cursor over the body. */
typedef struct upload {
    const char *data;
    size_t len, off;
} upload;

static size_t on_read(char *buf, size_t size, size_t nmemb, void *ud)
{
    upload *u = ud;
    size_t n = size * nmemb;

    if (n > u->len - u->off)
        n = u->len - u->off;
    memcpy(buf, u->data + u->off, n);
    u->off += n;
    return n;
}

static void perform(CURL *c, int port, req_spec *r)
{
    char url[512];
    char *ct = NULL;
    struct curl_slist *hdrs = NULL;
    upload up = {r->body, r->body_len, 0};

    snprintf(url, sizeof(url), "%s://%s:%d%s", r->ca_pem ? "https" : "http",
             r->host ? r->host : "127.0.0.1", port, r->path);
    if (r->ca_pem) {
        struct curl_blob ca = {(void *)r->ca_pem, strlen(r->ca_pem), CURL_BLOB_COPY};
        curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &ca);
    }
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
    curl_easy_setopt(c, CURLOPT_NOBODY, strcmp(r->method, "HEAD") == 0 ? 1L : 0L);
    if (strcmp(r->method, "HEAD") != 0 && strcmp(r->method, "GET") != 0)
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    else
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    if (strcmp(r->method, "GET") == 0)
        curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    if (r->body && r->chunked) {
        hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
        curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(c, CURLOPT_READFUNCTION, on_read);
        curl_easy_setopt(c, CURLOPT_READDATA, &up);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, r->method);
    } else if (r->body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, r->body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)r->body_len);
    }
    hdrs = curl_slist_append(hdrs, "Expect:");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
    r->headers[0] = '\0';
    r->curl_rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
    curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &r->connects);
    if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
        snprintf(r->content_type, sizeof(r->content_type), "%s", ct);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    /* Reset per-request options so the handle can be reused for the next one. */
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, NULL);
    curl_easy_setopt(c, CURLOPT_UPLOAD, 0L);
}

static void *client_main(void *arg)
{
    client_job *job = arg;
    CURL *c = NULL;
    size_t i;

    for (i = 0; i < job->n; i++) {
        if (c == NULL)
            c = curl_easy_init();
        if (c == NULL) {
            job->reqs[i].curl_rc = CURLE_OUT_OF_MEMORY;
            continue;
        }
        perform(c, job->port, &job->reqs[i]);
        if (job->fresh) {
            curl_easy_cleanup(c);
            c = NULL;
        }
    }
    if (c)
        curl_easy_cleanup(c);
    if (job->signal_after)
        kill(getpid(), SIGUSR1);
    else
        ev_async_send(job->loop, job->done);
    return NULL;
}

static void on_client_done(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

/* Runs the requests from a helper thread while the loop serves them. */
static void run_requests(struct ev_loop *loop, int port, req_spec *reqs, size_t n, int fresh)
{
    ev_async done;
    client_job job;

    memset(&job, 0, sizeof(job));
    job.port = port;
    job.reqs = reqs;
    job.n = n;
    job.fresh = fresh;
    job.loop = loop;
    job.done = &done;
    ev_async_init(&done, on_client_done);
    ev_async_start(loop, &done);
    assert_int_equal(pthread_create(&job.thread, NULL, client_main, &job), 0);
    ev_run(loop, 0);
    pthread_join(job.thread, NULL);
    ev_async_stop(loop, &done);
}

static void free_reqs(req_spec *reqs, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        free(reqs[i].resp);
        reqs[i].resp = NULL;
    }
}

/* ---- handlers ------------------------------------------------------------------ */

static int h_hello(const http_request *req, http_response *resp, void *ud)
{
    const char *who = http_request_query(req, "who");
    int *calls = ud;

    (*calls)++;
    return http_response_printf(resp, "hello %s\n", who ? who : "world");
}

static int h_json(const http_request *req, http_response *resp, void *ud)
{
    const char *agent = http_request_header(req, "user-agent");

    (void)ud;
    assert_int_equal(http_response_set_content_type(resp, "application/json"), 0);
    assert_int_equal(http_response_add_header(resp, "X-Served-By", "test"), 0);
    resp->status = 201;
    return http_response_printf(resp, "{\"agent_seen\":%s}", agent ? "true" : "false");
}

static int h_fail(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    (void)ud;
    http_response_printf(resp, "partial output that must not be sent");
    return -1;
}

static int h_echo(const http_request *req, http_response *resp, void *ud)
{
    (void)ud;
    http_response_printf(resp, "%s %s %zu:", req->method, req->path, req->body_len);
    return http_response_append(resp, req->body, req->body_len);
}

static int h_big(const http_request *req, http_response *resp, void *ud)
{
    char *body = malloc(BIG_SIZE);
    size_t i;

    (void)req;
    (void)ud;
    if (body == NULL)
        return -1;
    for (i = 0; i < BIG_SIZE; i++)
        body[i] = (char)('a' + (i * 7 + i / 1000) % 26);
    http_response_take_body(resp, body, BIG_SIZE);
    http_response_set_content_type(resp, "application/octet-stream");
    return 0;
}

static int h_stop(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    http_server_stop(ud);
    return http_response_printf(resp, "stopping\n");
}

static int h_empty(const http_request *req, http_response *resp, void *ud)
{
    (void)req;
    (void)ud;
    resp->status = 204;
    return 0;
}

static void start_local(http_server *s, struct ev_loop *loop)
{
    char err[256] = "";
    int rc = http_server_start(s, loop, "127.0.0.1:0", err, sizeof(err));

    if (rc != 0)
        print_message("start failed: %s\n", err);
    assert_int_equal(rc, 0);
    assert_true(http_server_port(s) > 0);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_parse_bind_address(void **state)
{
    struct sockaddr_storage a;
    socklen_t len;
    int any;
    char err[256];
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)&a;
    const struct sockaddr_in6 *a6 = (const struct sockaddr_in6 *)&a;
    static const char *bad[][2] = {
        {":99999", "0..65535"},
        {"nonsense", "missing port"},
        {"", "empty"},
        {"127.0.0.1", "missing port"},
        {"127.0.0.1:", "port"},
        {":-1", "port"},
        {":80x", "port"},
        {":+80", "port"},
        {": 80", "port"},
        {":000080", "port"},
        {"::1:80", "brackets"},
        {"[::1]", "[ipv6]:port"},
        {"[::1]80", "[ipv6]:port"},
        {"[]:80", "IPv6"},
        {"[127.0.0.1]:80", "not an IPv6"},
        {"[::1:80", "[ipv6]:port"},
        {"999.1.1.1:80", "not an IPv4"},
        {"example.com:80", "not resolved"},
        {"1.2.3.4 :80", "not an IPv4"},
    };
    size_t i;

    (void)state;
    assert_int_equal(http_parse_bind_address(":8080", &a, &len, &any, err, sizeof(err)), 0);
    assert_int_equal(any, 1);
    assert_int_equal(ntohs(a6->sin6_port), 8080);

    assert_int_equal(http_parse_bind_address("127.0.0.1:0", &a, &len, &any, err, sizeof(err)), 0);
    assert_int_equal(any, 0);
    assert_int_equal(a.ss_family, AF_INET);
    assert_int_equal(len, sizeof(struct sockaddr_in));
    assert_int_equal(ntohl(a4->sin_addr.s_addr), 0x7f000001);
    assert_int_equal(ntohs(a4->sin_port), 0);

    assert_int_equal(http_parse_bind_address("[::1]:9000", &a, &len, &any, err, sizeof(err)), 0);
    assert_int_equal(a.ss_family, AF_INET6);
    assert_int_equal(len, sizeof(struct sockaddr_in6));
    assert_int_equal(ntohs(a6->sin6_port), 9000);
    assert_true(IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr));

    assert_int_equal(http_parse_bind_address("localhost:65535", &a, &len, &any, err, sizeof(err)), 0);
    assert_int_equal(ntohl(a4->sin_addr.s_addr), 0x7f000001);
    assert_int_equal(ntohs(a4->sin_port), 65535);
    assert_int_equal(http_parse_bind_address("0.0.0.0:8081", &a, &len, &any, err, sizeof(err)), 0);
    assert_int_equal(any, 0);

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err[0] = '\0';
        if (http_parse_bind_address(bad[i][0], &a, &len, &any, err, sizeof(err)) != HCP_EINVAL ||
            strstr(err, bad[i][1]) == NULL)
            fail_msg("\"%s\": want an error mentioning \"%s\", got \"%s\"", bad[i][0], bad[i][1], err);
    }
    assert_int_equal(http_parse_bind_address(NULL, &a, &len, &any, err, sizeof(err)), HCP_EINVAL);
    /* A NULL error buffer is allowed. */
    assert_int_equal(http_parse_bind_address("x", &a, &len, &any, NULL, 0), HCP_EINVAL);
}

static void test_accepts_coding(void **state)
{
    (void)state;
    static const struct {
        const char *header;
        bool gzip;
    } cases[] = {
        {"gzip", true},                       /* Prometheus */
        {"GZIP", true},                       /* codings are case-insensitive */
        {"deflate, gzip", true},
        {"br;q=1.0, gzip;q=0.5, *;q=0", true},
        {"gzip ; q=0.001", true},
        {" , gzip", true},                    /* empty elements are allowed */
        {"gzip;level=1", true},               /* another parameter: weight 1 */
        {"gzip;q=1.000", true},
        {"gzip;q=0", false},
        {"gzip;q=0.000", false},
        {"gzip;Q=0.0", false},
        {"identity", false},
        {"*", false},                         /* not a coding it named */
        {"x-gzip2", false},
        {"gzipx", false},
        {"agzip", false},
        {"", false},
        {"gzip;q=2", false},                  /* malformed weights: skipped */
        {"gzip;q=1.5", false},
        {"gzip;q=0.0001", false},
        {"gzip;q=", false},
        {"gzip;q=abc", false},
        {"gzip;q=0, gzip", true},             /* named twice: one element accepts it */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        if (http_accepts_coding(cases[i].header, "gzip") != cases[i].gzip)
            fail_msg("Accept-Encoding \"%s\": expected %s", cases[i].header,
                     cases[i].gzip ? "gzip" : "no gzip");
    }
    assert_false(http_accepts_coding(NULL, "gzip"));
    assert_false(http_accepts_coding("gzip", ""));
}

static void test_routes_and_errors(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    http_server_options opts = {.max_body = 1024};
    int calls = 0;
    char body2k[2048];
    req_spec r[] = {
        {.method = "GET", .path = "/hello"},
        {.method = "GET", .path = "/hello?who=caller%20one"},
        {.method = "GET", .path = "/nope"},
        {.method = "POST", .path = "/hello", .body = "x", .body_len = 1},
        {.method = "HEAD", .path = "/hello"},
        {.method = "GET", .path = "/fail"},
        {.method = "GET", .path = "/json"},
        {.method = "POST", .path = "/echo", .body = "{\"a\":1}", .body_len = 7},
        {.method = "POST", .path = "/echo", .body = body2k, .body_len = sizeof(body2k)},
        {.method = "POST", .path = "/echo", .body = body2k, .body_len = sizeof(body2k), .chunked = 1},
        {.method = "POST", .path = "/echo", .body = "chunk", .body_len = 5, .chunked = 1},
        {.method = "GET", .path = "/echo"},
        {.method = "HEAD", .path = "/echo"},
        {.method = "DELETE", .path = "/hello"},
        {.method = "GET", .path = "/empty"},
        {.method = "GET", .path = "/hello/"},
        {.method = "GET", .path = "/hello"},
        {.method = "GET", .path = "/pre/a/b.ics"},
        {.method = "GET", .path = "/pre"},
    };

    (void)state;
    memset(body2k, 'b', sizeof(body2k));
    http_server_init(&s, &opts);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_route(&s, "GET", "/fail", h_fail, NULL), 0);
    assert_int_equal(http_server_route(&s, "GET", "/json", h_json, NULL), 0);
    assert_int_equal(http_server_route(&s, "POST", "/echo", h_echo, NULL), 0);
    assert_int_equal(http_server_route(&s, "PUT", "/echo", h_echo, NULL), 0);
    assert_int_equal(http_server_route(&s, "GET", "/pre/*", h_echo, NULL), 0);
    start_local(&s, loop);
    /* Routes may be added after start. */
    assert_int_equal(http_server_route(&s, "GET", "/empty", h_empty, NULL), 0);
    run_requests(loop, http_server_port(&s), r, sizeof(r) / sizeof(r[0]), 0);

    assert_int_equal(r[0].curl_rc, CURLE_OK);
    assert_int_equal(r[0].status, 200);
    assert_string_equal(r[0].resp, "hello world\n");
    assert_string_equal(r[0].content_type, "text/plain; charset=utf-8");
    assert_string_equal(r[1].resp, "hello caller one\n");

    assert_int_equal(r[2].status, 404);
    assert_string_equal(r[2].resp, "404 page not found\n");

    assert_int_equal(r[3].status, 405);
    assert_non_null(strcasestr(r[3].headers, "Allow: GET, HEAD\r\n"));

    assert_int_equal(r[4].curl_rc, CURLE_OK);
    assert_int_equal(r[4].status, 200);
    assert_null(r[4].resp);
    assert_non_null(strcasestr(r[4].headers, "Content-Length: 12\r\n"));
    assert_string_equal(r[4].content_type, "text/plain; charset=utf-8");

    assert_int_equal(r[5].status, 500);
    assert_string_equal(r[5].resp, "500 internal server error\n");

    assert_int_equal(r[6].status, 201);
    assert_string_equal(r[6].content_type, "application/json");
    assert_string_equal(r[6].resp, "{\"agent_seen\":false}");
    assert_non_null(strcasestr(r[6].headers, "X-Served-By: test\r\n"));

    assert_int_equal(r[7].status, 200);
    assert_string_equal(r[7].resp, "POST /echo 7:{\"a\":1}");

    assert_int_equal(r[8].status, 413);   /* Content-Length over the limit */
    assert_int_equal(r[9].status, 413);   /* chunked, found out while reading */
    assert_int_equal(r[10].status, 200);
    assert_string_equal(r[10].resp, "POST /echo 5:chunk");

    assert_int_equal(r[11].status, 405);
    assert_non_null(strcasestr(r[11].headers, "Allow: POST, PUT\r\n"));
    assert_int_equal(r[12].status, 405);
    assert_int_equal(r[13].status, 405);
    assert_int_equal(r[14].status, 204);
    assert_null(r[14].resp);
    assert_int_equal(r[15].status, 404); /* exact paths only */
    assert_int_equal(r[16].status, 200);
    assert_int_equal(r[17].status, 200); /* a prefix route gets the whole path */
    assert_string_equal(r[17].resp, "GET /pre/a/b.ics 0:");
    assert_int_equal(r[18].status, 404); /* the prefix, with its final '/' */
    /* GET twice, GET with query, HEAD and the last GET reached the handler. */
    assert_int_equal(calls, 4);

    free_reqs(r, sizeof(r) / sizeof(r[0]));
    http_server_stop(&s);
    assert_int_equal(http_server_port(&s), 0);
}

static void test_large_body(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    req_spec r[2] = {{.method = "GET", .path = "/big"}, {.method = "HEAD", .path = "/big"}};
    size_t i;

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/big", h_big, NULL), 0);
    start_local(&s, loop);
    run_requests(loop, http_server_port(&s), r, 2, 0);
    assert_int_equal(r[0].curl_rc, CURLE_OK);
    assert_int_equal(r[0].status, 200);
    assert_string_equal(r[0].content_type, "application/octet-stream");
    assert_int_equal(r[0].resp_len, BIG_SIZE);
    for (i = 0; i < BIG_SIZE; i++)
        if (r[0].resp[i] != (char)('a' + (i * 7 + i / 1000) % 26))
            fail_msg("byte %zu differs", i);
    assert_int_equal(r[1].status, 200);
    assert_int_equal(r[1].resp_len, 0);
    assert_non_null(strcasestr(r[1].headers, "Content-Length: 1048576\r\n"));
    free_reqs(r, 2);
    http_server_stop(&s);
}

static void test_many_sequential(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0, fresh;
    size_t n = scale_small() ? 100 : 1000, i;
    req_spec *r = calloc(n, sizeof(*r));

    (void)state;
    assert_non_null(r);
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_route(&s, "POST", "/echo", h_echo, NULL), 0);
    start_local(&s, loop);
    /* Once over one keep-alive connection, once with a new connection each time. */
    for (fresh = 0; fresh <= 1; fresh++) {
        for (i = 0; i < n; i++) {
            memset(&r[i], 0, sizeof(r[i]));
            r[i].method = i % 3 == 2 ? "POST" : "GET";
            r[i].path = i % 3 == 2 ? "/echo" : "/hello";
            r[i].body = i % 3 == 2 ? "ping" : NULL;
            r[i].body_len = 4;
        }
        run_requests(loop, http_server_port(&s), r, n, fresh);
        for (i = 0; i < n; i++) {
            assert_int_equal(r[i].curl_rc, CURLE_OK);
            assert_int_equal(r[i].status, 200);
            assert_string_equal(r[i].resp, i % 3 == 2 ? "POST /echo 4:ping" : "hello world\n");
        }
        free_reqs(r, n);
    }
    assert_int_equal(s.requests, 2 * n);
    http_server_stop(&s);
    free(r);
}

/* http_server_set_closing(): keep-alive until then; afterwards every
 * response says "Connection: close" and the next request needs a new
 * connection, which the listener still accepts and answers. */
static void test_closing(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0, round;
    req_spec r[3];
    size_t i;

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    start_local(&s, loop);
    for (round = 0; round < 2; round++) {
        memset(r, 0, sizeof(r));
        for (i = 0; i < 3; i++) {
            r[i].method = "GET";
            r[i].path = "/hello";
        }
        if (round == 1)
            http_server_set_closing(&s);
        run_requests(loop, http_server_port(&s), r, 3, 0);
        for (i = 0; i < 3; i++) {
            assert_int_equal(r[i].curl_rc, CURLE_OK);
            assert_int_equal(r[i].status, 200);
            assert_string_equal(r[i].resp, "hello world\n");
            if (round == 0) {
                assert_null(strcasestr(r[i].headers, "Connection: close"));
                assert_int_equal(r[i].connects, i == 0 ? 1 : 0); /* one connection, kept */
            } else {
                assert_non_null(strcasestr(r[i].headers, "Connection: close"));
                assert_int_equal(r[i].connects, 1); /* each on a new connection */
            }
        }
        free_reqs(r, 3);
    }
    assert_int_equal(calls, 6);
    http_server_stop(&s);
}

static void test_stop_restart(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0, port;
    char err[256], addr[64];
    req_spec r[3];

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_route(&s, "GET", "/stop", h_stop, &s), 0);
    start_local(&s, loop);
    port = http_server_port(&s);
    assert_int_equal(http_server_start(&s, loop, "127.0.0.1:0", err, sizeof(err)), HCP_ESTATE);
    assert_int_equal(http_server_port(&s), port);

    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    run_requests(loop, port, r, 1, 0);
    assert_int_equal(r[0].status, 200);
    free_reqs(r, 1);

    http_server_stop(&s);
    http_server_stop(&s); /* harmless */
    assert_int_equal(http_server_port(&s), 0);
    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    run_requests(loop, port, r, 1, 0);
    assert_int_equal(r[0].curl_rc, CURLE_COULDNT_CONNECT);
    free_reqs(r, 1);

    /* The same port again: the listening socket was really closed. */
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    if (http_server_start(&s, loop, addr, err, sizeof(err)) != 0)
        fail_msg("restart on %s: %s", addr, err);
    assert_int_equal(http_server_port(&s), port);

    /* Stop from inside a handler: deferred until libmicrohttpd returns. */
    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    r[1].method = "GET";
    r[1].path = "/stop";
    r[2].method = "GET";
    r[2].path = "/hello";
    run_requests(loop, port, r, 3, 1);
    assert_int_equal(r[0].status, 200);
    /* The last request finds no server: refused when it opens a new
     * connection, or cut off when it went out on the kept-alive one the
     * stop closed (which one depends on scheduling). */
    if (r[2].curl_rc != CURLE_COULDNT_CONNECT && r[2].curl_rc != CURLE_RECV_ERROR &&
        r[2].curl_rc != CURLE_GOT_NOTHING && r[2].curl_rc != CURLE_SEND_ERROR)
        fail_msg("request after stop: curl code %d, want no answer", (int)r[2].curl_rc);
    assert_int_equal(r[2].status, 0);
    assert_int_equal(http_server_port(&s), 0);
    assert_null(s.daemon);
    free_reqs(r, 3);
    assert_int_equal(calls, 2);
}

/* TLS: the server presents the configured pair; a client trusting another CA
 * is refused at the handshake; a renewed pair is served after a restart; a
 * key that does not parse keeps the server from starting, with a reason. */
static void test_tls(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0, port;
    char err[256] = "", addr[64];
    req_spec r[2];

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "POST", "/echo", h_echo, NULL), 0);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_set_tls(&s, testutil_tls_cert_a, NULL), HCP_EINVAL);
    assert_int_equal(http_server_set_tls(&s, testutil_tls_cert_a, testutil_tls_key_a), 0);
    start_local(&s, loop);
    port = http_server_port(&s);
    assert_int_equal(http_server_set_tls(&s, NULL, NULL), HCP_ESTATE);

    memset(r, 0, sizeof(r));
    r[0] = (req_spec){.method = "POST", .path = "/echo", .body = "{}", .body_len = 2,
                      .ca_pem = testutil_tls_cert_a};
    r[1] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_b};
    run_requests(loop, port, r, 2, 1);
    assert_int_equal(r[0].curl_rc, CURLE_OK);
    assert_int_equal(r[0].status, 200);
    assert_string_equal(r[0].resp, "POST /echo 2:{}");
    assert_int_equal(r[1].curl_rc, CURLE_PEER_FAILED_VERIFICATION);
    free_reqs(r, 2);

    /* A renewed certificate: stop, set, start on the same port. */
    http_server_stop(&s);
    assert_int_equal(http_server_set_tls(&s, testutil_tls_cert_b, testutil_tls_key_b), 0);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
    if (http_server_start(&s, loop, addr, err, sizeof(err)) != 0)
        fail_msg("restart with pair b: %s", err);
    memset(r, 0, sizeof(r));
    r[0] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_b};
    r[1] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_a};
    run_requests(loop, port, r, 2, 1);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].curl_rc, CURLE_PEER_FAILED_VERIFICATION);
    free_reqs(r, 2);
    assert_int_equal(calls, 1);
    http_server_stop(&s);

    /* A key that is not PEM: the start fails and says why. */
    assert_int_equal(http_server_set_tls(&s, testutil_tls_cert_a, "not a key"), 0);
    assert_int_equal(http_server_start(&s, loop, "127.0.0.1:0", err, sizeof(err)), HCP_ELISTEN);
    assert_non_null(strstr(err, "cannot listen on 127.0.0.1:0"));
    assert_int_equal(http_server_port(&s), 0);
}

/* A renewed pair on a running server: the next handshakes present it, on
 * the same listening socket (the daemon is never restarted); a pair whose
 * key is not the certificate's is refused and the current one stays. */
static void test_tls_renew(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0, port;
    char err[256] = "";
    req_spec r[2];
    struct MHD_Daemon *daemon;

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_renew_tls(&s, testutil_tls_cert_b, testutil_tls_key_b, err,
                                           sizeof(err)),
                     HCP_ESTATE);
    assert_int_equal(http_server_set_tls(&s, testutil_tls_cert_a, testutil_tls_key_a), 0);
    start_local(&s, loop);
    port = http_server_port(&s);
    daemon = s.daemon;

    assert_int_equal(http_server_renew_tls(&s, testutil_tls_cert_b, testutil_tls_key_b, err,
                                           sizeof(err)),
                     0);
    assert_ptr_equal(s.daemon, daemon);
    assert_int_equal(http_server_port(&s), port);
    memset(r, 0, sizeof(r));
    r[0] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_b};
    r[1] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_a};
    run_requests(loop, port, r, 2, 1);
    assert_int_equal(r[0].curl_rc, CURLE_OK);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].curl_rc, CURLE_PEER_FAILED_VERIFICATION);
    free_reqs(r, 2);

    /* The certificate of a with the key of b: refused, b still served. */
    assert_int_equal(http_server_renew_tls(&s, testutil_tls_cert_a, testutil_tls_key_b, err,
                                           sizeof(err)),
                     HCP_EINVAL);
    assert_non_null(strstr(err, "the key is not the certificate's"));
    assert_int_equal(http_server_renew_tls(&s, testutil_tls_cert_a, "not a key", err,
                                           sizeof(err)),
                     HCP_EINVAL);
    assert_non_null(strstr(err, "the key:"));
    memset(r, 0, sizeof(r));
    r[0] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_b};
    run_requests(loop, port, r, 1, 1);
    assert_int_equal(r[0].status, 200);
    free_reqs(r, 1);

    /* And back to a. */
    assert_int_equal(http_server_renew_tls(&s, testutil_tls_cert_a, testutil_tls_key_a, err,
                                           sizeof(err)),
                     0);
    memset(r, 0, sizeof(r));
    r[0] = (req_spec){.method = "GET", .path = "/hello", .ca_pem = testutil_tls_cert_a};
    run_requests(loop, port, r, 1, 1);
    assert_int_equal(r[0].status, 200);
    free_reqs(r, 1);
    assert_int_equal(calls, 3);
    http_server_stop(&s);
    assert_null(s.tls);
}

static void on_sigusr1(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)revents;
    http_server_stop(w->data);
    ev_break(loop, EVBREAK_ONE);
}

static void test_stop_from_signal_watcher(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    ev_signal sig;
    client_job job;
    int calls = 0, port;
    req_spec r[2];

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    start_local(&s, loop);
    port = http_server_port(&s);
    /* Started before the thread, so the thread inherits libev's signal mask. */
    ev_signal_init(&sig, on_sigusr1, SIGUSR1);
    sig.data = &s;
    ev_signal_start(loop, &sig);

    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    r[1].method = "GET";
    r[1].path = "/hello";
    memset(&job, 0, sizeof(job));
    job.port = port;
    job.reqs = r;
    job.n = 2;
    job.signal_after = 1;
    job.loop = loop;
    assert_int_equal(pthread_create(&job.thread, NULL, client_main, &job), 0);
    ev_run(loop, 0);
    pthread_join(job.thread, NULL);
    ev_signal_stop(loop, &sig);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].status, 200);
    assert_int_equal(http_server_port(&s), 0);
    free_reqs(r, 2);

    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    run_requests(loop, port, r, 1, 0);
    assert_int_equal(r[0].curl_rc, CURLE_COULDNT_CONNECT);
    free_reqs(r, 1);
}

static void test_bad_bind(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server a, b;
    char err[256], addr[64];

    (void)state;
    http_server_init(&a, NULL);
    http_server_init(&b, NULL);
    assert_int_equal(http_server_start(&a, loop, ":99999", err, sizeof(err)), HCP_EINVAL);
    assert_non_null(strstr(err, "99999"));
    assert_int_equal(http_server_start(&a, loop, "nonsense", err, sizeof(err)), HCP_EINVAL);
    assert_non_null(strstr(err, "nonsense"));
    assert_int_equal(http_server_port(&a), 0);

    start_local(&a, loop);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", http_server_port(&a));
    err[0] = '\0';
    assert_int_equal(http_server_start(&b, loop, addr, err, sizeof(err)), HCP_ELISTEN);
    assert_non_null(strstr(err, addr));
    assert_non_null(strcasestr(err, "in use"));
    assert_null(b.daemon);
    http_server_stop(&a);
}

static void test_any_and_ipv6(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    int calls = 0;
    char err[256];
    req_spec r[2];

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    /* ":0" listens everywhere, so 127.0.0.1 reaches it. */
    if (http_server_start(&s, loop, ":0", err, sizeof(err)) != 0)
        fail_msg("start :0: %s", err);
    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    run_requests(loop, http_server_port(&s), r, 1, 0);
    assert_int_equal(r[0].status, 200);
    free_reqs(r, 1);
    http_server_stop(&s);

    if (http_server_start(&s, loop, "[::1]:0", err, sizeof(err)) != 0) {
        print_message("no IPv6 loopback here (%s): skipping the IPv6 part\n", err);
        return;
    }
    memset(r, 0, sizeof(r));
    r[0].method = "GET";
    r[0].path = "/hello";
    r[0].host = "[::1]";
    r[1].method = "GET";
    r[1].path = "/hello";
    r[1].host = "127.0.0.1"; /* bound to ::1 only */
    run_requests(loop, http_server_port(&s), r, 2, 1);
    assert_int_equal(r[0].status, 200);
    /* Not served by us. Usually nothing listens there at all; on a shared
     * machine another program may hold the same port number on 127.0.0.1. */
    assert_true(r[1].curl_rc != CURLE_OK || r[1].status != 200);
    free_reqs(r, 2);
    http_server_stop(&s);
}

static void test_route_validation(void **state)
{
    http_server s;
    char path[HTTP_SERVER_MAX_PATH + 8];
    int i;

    (void)state;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_route(&s, "GET", "/a", h_empty, NULL), 0);
    assert_int_equal(http_server_route(&s, "GET", "/a", h_empty, NULL), HCP_EINVAL);
    assert_int_equal(http_server_route(&s, "POST", "/a", h_empty, NULL), 0);
    assert_int_equal(http_server_route(&s, "HEAD", "/b", h_empty, NULL), HCP_EINVAL);
    assert_int_equal(http_server_route(&s, "G T", "/b", h_empty, NULL), HCP_EINVAL);
    assert_int_equal(http_server_route(&s, "", "/b", h_empty, NULL), HCP_EINVAL);
    assert_int_equal(http_server_route(&s, "GET", "b", h_empty, NULL), HCP_EINVAL);
    assert_int_equal(http_server_route(&s, "GET", "/b", NULL, NULL), HCP_EINVAL);
    memset(path, 'x', sizeof(path));
    path[0] = '/';
    path[sizeof(path) - 1] = '\0';
    assert_int_equal(http_server_route(&s, "GET", path, h_empty, NULL), HCP_EINVAL);
    for (i = 2; i < HTTP_SERVER_MAX_ROUTES; i++) {
        snprintf(path, sizeof(path), "/r%d", i);
        assert_int_equal(http_server_route(&s, "GET", path, h_empty, NULL), 0);
    }
    assert_int_equal(http_server_route(&s, "GET", "/one-too-many", h_empty, NULL), HCP_EFULL);
}

static void test_response_helpers(void **state)
{
    http_response resp;
    char *owned;
    char long_ct[200];
    int i;

    (void)state;
    memset(&resp, 0, sizeof(resp));
    assert_int_equal(http_response_set_body(&resp, "abc", 3), 0);
    assert_int_equal(http_response_append(&resp, "def", 3), 0);
    assert_int_equal(http_response_printf(&resp, "-%d-%s", 42, "x"), 0);
    assert_int_equal(resp.body_len, 11);
    assert_string_equal(resp.body, "abcdef-42-x");
    assert_int_equal(http_response_set_body(&resp, "z", 1), 0);
    assert_string_equal(resp.body, "z");
    owned = malloc(4);
    assert_non_null(owned);
    memcpy(owned, "own", 4);
    http_response_take_body(&resp, owned, 3);
    assert_ptr_equal(resp.body, owned);
    assert_int_equal(resp.body_len, 3);

    assert_int_equal(http_response_set_content_type(&resp, "text/html"), 0);
    assert_string_equal(resp.content_type, "text/html");
    assert_int_equal(http_response_set_content_type(&resp, "text/html\r\nX-Evil: 1"), HCP_EINVAL);
    memset(long_ct, 'a', sizeof(long_ct));
    long_ct[sizeof(long_ct) - 1] = '\0';
    assert_int_equal(http_response_set_content_type(&resp, long_ct), HCP_EINVAL);
    assert_string_equal(resp.content_type, "text/html");

    assert_int_equal(http_response_add_header(&resp, "X-Ok", "v"), 0);
    assert_int_equal(http_response_add_header(&resp, "X-Bad", "v\r\nSet-Cookie: x"), HCP_EINVAL);
    assert_int_equal(http_response_add_header(&resp, "X Bad", "v"), HCP_EINVAL);
    assert_int_equal(http_response_add_header(&resp, "content-type", "v"), HCP_EINVAL);
    for (i = 1; i < HTTP_RESPONSE_MAX_HEADERS; i++)
        assert_int_equal(http_response_add_header(&resp, "X-More", "v"), 0);
    assert_int_equal(http_response_add_header(&resp, "X-Full", "v"), HCP_EFULL);
    for (i = 0; i < (int)resp.nheaders; i++) {
        free(resp.headers[i].name);
        free(resp.headers[i].value);
    }
    free(resp.body);
}

/* An idle connection, for the timeout test. */
typedef struct idle_job {
    int port;
    double closed_after; /* seconds until the server closed it, -1 if it did not */
    struct ev_loop *loop;
    ev_async *done;
} idle_job;


/* ---- gate ------------------------------------------------------------------ */

/* A gate that decides from the "gate" query argument: "now" answers 401 at
 * once, "pass" and "deny" hold the request and decide 30 ms later from a
 * timer (as an authorization review answered by the API server would),
 * "stop" holds it and stops the server instead; no argument lets it through. */
typedef struct gate_state {
    http_server *srv;
    struct ev_loop *loop;
    ev_timer timer;
    http_pending *held[4];
    int deny[4];
    int nheld;
    int stop;        /* the timer stops the server instead of deciding */
    int cancelled;   /* held requests the server abandoned */
    int asked;       /* gate calls */
} gate_state;

static void on_gate_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    gate_state *g = w->data;

    (void)loop;
    (void)revents;
    if (g->stop) {
        http_server_stop(g->srv);
        return;
    }
    for (int i = 0; i < g->nheld; i++) {
        if (g->deny[i])
            http_pending_answer(g->held[i], 403, "denied\n", "X-Why", "test");
        else
            http_pending_pass(g->held[i]);
    }
    g->nheld = 0;
}

static http_gate_verdict t_gate(const http_request *req, http_response *resp, http_pending *p,
                                void *ud)
{
    gate_state *g = ud;
    const char *q = http_request_query(req, "gate");

    g->asked++;
    if (q == NULL)
        return HTTP_GATE_PASS;
    if (strcmp(q, "now") == 0) {
        resp->status = 401;
        http_response_printf(resp, "who are you\n");
        return HTTP_GATE_ANSWER;
    }
    assert_true(g->nheld < 4);
    g->deny[g->nheld] = strcmp(q, "deny") == 0;
    g->stop = strcmp(q, "stop") == 0;
    g->held[g->nheld++] = p;
    ev_timer_set(&g->timer, 0.03, 0.);
    ev_timer_start(g->loop, &g->timer);
    return HTTP_GATE_WAIT;
}

static void t_gate_cancel(http_pending *p, void *ud)
{
    gate_state *g = ud;

    for (int i = 0; i < g->nheld; i++)
        if (g->held[i] == p) {
            g->held[i] = g->held[--g->nheld];
            g->cancelled++;
            return;
        }
    fail_msg("cancel of a request the gate does not hold");
}

/* A gate answers, lets through, or holds a request without blocking the
 * loop; a held request gets its handler or the gate's answer when the gate
 * decides; a server stopped with a request held closes it, telling the gate. */
static void test_gate(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    gate_state g;
    int calls = 0;
    req_spec r[] = {
        {.method = "GET", .path = "/hello"},
        {.method = "GET", .path = "/hello?gate=now"},
        {.method = "GET", .path = "/hello?gate=pass&who=held"},
        {.method = "GET", .path = "/hello?gate=deny"},
        {.method = "POST", .path = "/echo?gate=pass", .body = "kept", .body_len = 4},
        {.method = "GET", .path = "/nope?gate=now"},
    };
    req_spec r2[] = {{.method = "GET", .path = "/hello?gate=stop"}};

    (void)state;
    memset(&g, 0, sizeof(g));
    g.srv = &s;
    g.loop = loop;
    ev_init(&g.timer, on_gate_timer);
    g.timer.data = &g;
    http_server_init(&s, NULL);
    assert_int_equal(http_server_set_gate(&s, t_gate, t_gate_cancel, &g), 0);
    assert_int_equal(http_server_route(&s, "GET", "/hello", h_hello, &calls), 0);
    assert_int_equal(http_server_route(&s, "POST", "/echo", h_echo, NULL), 0);
    start_local(&s, loop);
    assert_int_equal(http_server_set_gate(&s, NULL, NULL, NULL), HCP_ESTATE);
    run_requests(loop, http_server_port(&s), r, 6, 0);
    assert_int_equal(r[0].status, 200);
    assert_int_equal(r[1].status, 401);
    assert_memory_equal(r[1].resp, "who are you\n", 12);
    assert_int_equal(r[2].status, 200);
    assert_non_null(strstr(r[2].resp, "held"));
    assert_int_equal(r[3].status, 403);
    assert_memory_equal(r[3].resp, "denied\n", 7);
    assert_non_null(strstr(r[3].headers, "X-Why: test"));
    assert_int_equal(r[4].status, 200);
    assert_int_equal(r[4].resp_len, 17);
    assert_memory_equal(r[4].resp, "POST /echo 4:kept", 17); /* the body survived the hold */
    assert_int_equal(r[5].status, 404); /* no route: the gate is not asked */
    assert_int_equal(g.asked, 5);
    assert_int_equal(calls, 2);         /* the denied and the answered never ran */
    free_reqs(r, 6);

    g.asked = 0;
    run_requests(loop, http_server_port(&s), r2, 1, 0);
    assert_int_equal(g.asked, 1);
    assert_int_equal(g.cancelled, 1);
    assert_int_equal(r2[0].status, 0);
    assert_null(s.daemon);
    free_reqs(r2, 1);
    ev_timer_stop(loop, &g.timer);
    assert_int_equal(calls, 2);
}

static double now_mono(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *idle_main(void *arg)
{
    idle_job *job = arg;
    struct sockaddr_in a;
    struct timeval tv = {5, 0};
    char c;
    double start;
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    job->closed_after = -1;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)job->port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        start = now_mono();
        if (recv(fd, &c, 1, 0) == 0)
            job->closed_after = now_mono() - start;
    }
    if (fd >= 0)
        close(fd);
    ev_async_send(job->loop, job->done);
    return NULL;
}

static void test_idle_timeout(void **state)
{
    struct ev_loop *loop = ev_default_loop(0);
    http_server s;
    http_server_options opts = {.connection_timeout = 1};
    idle_job job;
    ev_async done;
    pthread_t th;

    (void)state;
    /* Nothing but the server's ev_timer can close an idle connection. */
    http_server_init(&s, &opts);
    start_local(&s, loop);
    memset(&job, 0, sizeof(job));
    job.port = http_server_port(&s);
    job.loop = loop;
    job.done = &done;
    ev_async_init(&done, on_client_done);
    ev_async_start(loop, &done);
    assert_int_equal(pthread_create(&th, NULL, idle_main, &job), 0);
    ev_run(loop, 0);
    pthread_join(th, NULL);
    ev_async_stop(loop, &done);
    http_server_stop(&s);
    if (job.closed_after < 0.5 || job.closed_after > 3)
        fail_msg("idle connection closed after %.2f s, want about 1 s", job.closed_after);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bind_address),
        cmocka_unit_test(test_route_validation),
        cmocka_unit_test(test_response_helpers),
        cmocka_unit_test(test_routes_and_errors),
        cmocka_unit_test(test_large_body),
        cmocka_unit_test(test_many_sequential),
        cmocka_unit_test(test_stop_restart),
        cmocka_unit_test(test_closing),
        cmocka_unit_test(test_accepts_coding),
        cmocka_unit_test(test_gate),
        cmocka_unit_test(test_tls),
        cmocka_unit_test(test_tls_renew),
        cmocka_unit_test(test_idle_timeout),
        cmocka_unit_test(test_stop_from_signal_watcher),
        cmocka_unit_test(test_bad_bind),
        cmocka_unit_test(test_any_and_ipv6),
    };
    int rc;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    ev_loop_destroy(ev_default_loop(0));
    curl_global_cleanup();
    return rc;
}
