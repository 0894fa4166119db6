/*
 * httpserver/httpserver.c - libmicrohttpd in epoll mode, driven by libev.
 */
#include "httpserver/httpserver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"

#define DEFAULT_MAX_BODY (1024 * 1024)
#define DEFAULT_TIMEOUT 30
#define DEFAULT_MAX_CONNECTIONS 64
#define DEFAULT_CONTENT_TYPE "text/plain; charset=utf-8"

#define MAX_CHAIN 8 /* certificates in a served chain */

/* One certificate pair as GnuTLS serves it. The handshakes of a running
 * server take the newest; older ones stay until the server stops, since a
 * session may still refer to the pair it was given. */
typedef struct tls_pair {
    gnutls_pcert_st chain[MAX_CHAIN]; /* the chain, leaf first */
    unsigned nchain;                  /* certificates in chain */
    gnutls_privkey_t key;             /* the leaf's key */
    struct tls_pair *older;           /* the pair served before this one */
} tls_pair;

static void pair_free(tls_pair *p);

/* Where a request stands with the gate. */
enum { GATE_NONE, GATE_HELD, GATE_PASSED, GATE_ANSWERED };

/* Per-request state, from the first access-handler call to MHD's completion
 * notice. It is also the http_pending handle a gate holds. */
typedef struct http_pending {
    const http_route *route; /* matched route, or NULL with early_status set */
    int gate;                /* GATE_*: what the gate decided */
    http_server *srv;        /* while held: the server */
    struct MHD_Connection *conn;             /* while held: the suspended connection */
    hcp_link_t link;         /* while held: on the server's list */
    http_response answer;    /* GATE_ANSWERED: what to send */
    int early_status;        /* 404/405/413 decided from the headers, else 0 */
    int too_large;           /* body exceeded max_body: discarded, answer 413 */
    char *body;              /* owned, NUL-terminated */
    size_t len;              /* body bytes */
    size_t cap;              /* body bytes allocated */
} req_ctx;


/* ---- response helpers ------------------------------------------------------ */

static int reserve_body(http_response *resp, size_t extra)
{
    size_t want, cap;
    char *p;

    if (resp->failed)
        return HCP_ENOMEM;
    if (extra > SIZE_MAX - resp->body_len - 1)
        goto fail;
    want = resp->body_len + extra + 1;
    if (want <= resp->body_cap)
        return 0;
    cap = resp->body_cap ? resp->body_cap : 256;
    while (cap < want) {
        if (cap > SIZE_MAX / 2)
            goto fail;
        cap *= 2;
    }
    p = realloc(resp->body, cap);
    if (p == NULL)
        goto fail;
    resp->body = p;
    resp->body_cap = cap;
    return 0;
fail:
    resp->failed = 1;
    return HCP_ENOMEM;
}

int http_response_append(http_response *resp, const void *data, size_t len)
{
    if (len == 0)
        return resp->failed ? HCP_ENOMEM : 0;
    if (reserve_body(resp, len) != 0)
        return HCP_ENOMEM;
    memcpy(resp->body + resp->body_len, data, len);
    resp->body_len += len;
    resp->body[resp->body_len] = '\0';
    return 0;
}

int http_response_set_body(http_response *resp, const void *data, size_t len)
{
    resp->body_len = 0;
    return http_response_append(resp, data, len);
}

int http_response_printf(http_response *resp, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        resp->failed = 1;
        return HCP_ENOMEM;
    }
    if (reserve_body(resp, (size_t)n) != 0)
        return HCP_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(resp->body + resp->body_len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    resp->body_len += (size_t)n;
    return 0;
}

void http_response_take_body(http_response *resp, char *body, size_t len)
{
    free(resp->body);
    resp->body = body;
    resp->body_len = body ? len : 0;
    resp->body_cap = body ? len : 0;
}

static int has_crlf(const char *s)
{
    return strpbrk(s, "\r\n") != NULL;
}

/* An HTTP token (RFC 9110 tchar). */
static int is_token(const char *s)
{
    const char *p;

    if (s == NULL || *s == '\0')
        return 0;
    for (p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("!#$%&'*+-.^_`|~", c) != NULL))
            return 0;
    }
    return 1;
}

int http_response_set_content_type(http_response *resp, const char *content_type)
{
    size_t n = strlen(content_type);

    if (n == 0 || n >= sizeof(resp->content_type) || has_crlf(content_type))
        return HCP_EINVAL;
    memcpy(resp->content_type, content_type, n + 1);
    return 0;
}

int http_response_add_header(http_response *resp, const char *name, const char *value)
{
    http_header *h;

    if (!is_token(name) || value == NULL || has_crlf(value) ||
        strcasecmp(name, "Content-Type") == 0 || strcasecmp(name, "Content-Length") == 0)
        return HCP_EINVAL;
    if (resp->nheaders == HTTP_RESPONSE_MAX_HEADERS)
        return HCP_EFULL;
    h = &resp->headers[resp->nheaders];
    h->name = strdup(name);
    h->value = strdup(value);
    if (h->name == NULL || h->value == NULL) {
        free(h->name);
        free(h->value);
        h->name = h->value = NULL;
        return HCP_ENOMEM;
    }
    resp->nheaders++;
    return 0;
}

static void response_init(http_response *resp)
{
    memset(resp, 0, sizeof(*resp));
    resp->status = 200;
    memcpy(resp->content_type, DEFAULT_CONTENT_TYPE, sizeof(DEFAULT_CONTENT_TYPE));
}

static void response_free(http_response *resp)
{
    size_t i;

    for (i = 0; i < resp->nheaders; i++) {
        free(resp->headers[i].name);
        free(resp->headers[i].value);
    }
    free(resp->body);
    memset(resp, 0, sizeof(*resp));
}

/* ---- request accessors ------------------------------------------------------ */

const char *http_request_header(const http_request *req, const char *name)
{
    return MHD_lookup_connection_value(req->conn, MHD_HEADER_KIND, name);
}

const char *http_request_query(const http_request *req, const char *key)
{
    return MHD_lookup_connection_value(req->conn, MHD_GET_ARGUMENT_KIND, key);
}

/* The weight of one element's parameters (";q=0.5;x=y"): 1 when no q is
 * given, 0 for q=0 (or 0.000), -1 when the q is malformed. */
static int coding_weight(const char *p, const char *end)
{
    int weight = 1;
    while (p < end) {
        while (p < end && (*p == ';' || *p == ' ' || *p == '\t'))
            p++;
        const char *param = p;
        while (p < end && *p != ';')
            p++;
        const char *stop = p;
        while (stop > param && (stop[-1] == ' ' || stop[-1] == '\t'))
            stop--;
        if (stop - param < 2 || (param[0] != 'q' && param[0] != 'Q') || param[1] != '=')
            continue;
        /* qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ) */
        const char *v = param + 2;
        if (v == stop || (*v != '0' && *v != '1'))
            return -1;
        bool zero = *v == '0', nonzero = false;
        if (++v < stop) {
            if (*v++ != '.' || stop - v > 3)
                return -1;
            for (; v < stop; v++) {
                if (*v < '0' || *v > '9' || (!zero && *v != '0'))
                    return -1;
                nonzero |= *v != '0';
            }
        }
        weight = zero && !nonzero ? 0 : 1;
    }
    return weight;
}

bool http_accepts_coding(const char *accept_encoding, const char *coding)
{
    size_t want = strlen(coding);
    const char *p = accept_encoding;
    while (p && *p) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        const char *elem = p, *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        const char *name_end = elem;
        while (name_end < end && *name_end != ';' && *name_end != ' ' && *name_end != '\t')
            name_end++;
        if ((size_t)(name_end - elem) == want && want > 0 &&
            strncasecmp(elem, coding, want) == 0 && coding_weight(name_end, end) > 0)
            return true;
        p = end;
    }
    return false;
}

/* ---- server ------------------------------------------------------------------ */

void http_server_init(http_server *s, const http_server_options *opts)
{
    memset(s, 0, sizeof(*s));
    hcp_list_init(&s->held);
    if (opts)
        s->opts = *opts;
    if (s->opts.max_body == 0)
        s->opts.max_body = DEFAULT_MAX_BODY;
    if (s->opts.connection_timeout == 0)
        s->opts.connection_timeout = DEFAULT_TIMEOUT;
    if (s->opts.max_connections == 0)
        s->opts.max_connections = DEFAULT_MAX_CONNECTIONS;
}

int http_server_set_tls(http_server *s, const char *cert_pem, const char *key_pem)
{
    if ((cert_pem == NULL) != (key_pem == NULL))
        return HCP_EINVAL;
    if (s->daemon)
        return HCP_ESTATE;
    s->opts.tls_cert_pem = cert_pem;
    s->opts.tls_key_pem = key_pem;
    return 0;
}

int http_server_route(http_server *s, const char *method, const char *path,
                      http_handler_fn handler, void *ud)
{
    http_route *r;
    size_t i;

    if (!is_token(method) || strlen(method) >= sizeof(r->method) || path == NULL ||
        path[0] != '/' || strlen(path) >= HTTP_SERVER_MAX_PATH || handler == NULL ||
        strcmp(method, "HEAD") == 0)
        return HCP_EINVAL;
    for (i = 0; i < s->nroutes; i++)
        if (strcmp(s->routes[i].method, method) == 0 && strcmp(s->routes[i].path, path) == 0)
            return HCP_EINVAL;
    if (s->nroutes == HTTP_SERVER_MAX_ROUTES)
        return HCP_EFULL;
    r = &s->routes[s->nroutes++];
    snprintf(r->method, sizeof(r->method), "%s", method);
    snprintf(r->path, sizeof(r->path), "%s", path);
    r->handler = handler;
    r->ud = ud;
    return 0;
}

/* A route path ending in '*' matches every path that starts with the rest. */
static int path_matches(const char *route, const char *path)
{
    size_t n = strlen(route);

    if (n > 0 && route[n - 1] == '*')
        return strncmp(route, path, n - 1) == 0;
    return strcmp(route, path) == 0;
}

/*
 * Finds the route for method and path. Returns it, or NULL with *status 404
 * (no route has this path) or 405 (another method does; allow lists them).
 */
static const http_route *match(const http_server *s, const char *method, const char *path,
                               int *status, char *allow, size_t allowlen)
{
    size_t i, used = 0;
    int path_known = 0;
    const char *m = strcmp(method, "HEAD") == 0 ? "GET" : method;

    allow[0] = '\0';
    for (i = 0; i < s->nroutes; i++) {
        const http_route *r = &s->routes[i];

        if (!path_matches(r->path, path))
            continue;
        if (strcmp(r->method, m) == 0)
            return r;
        path_known = 1;
        if (used < allowlen) {
            int n = snprintf(allow + used, allowlen - used, "%s%s%s", used ? ", " : "", r->method,
                             strcmp(r->method, "GET") == 0 ? ", HEAD" : "");
            used += n > 0 ? (size_t)n : 0;
        }
    }
    *status = path_known ? 405 : 404;
    return NULL;
}

/* Queues a response built from resp (consumed). Returns MHD's verdict. */
static enum MHD_Result send_response(const http_server *s, struct MHD_Connection *conn,
                                      http_response *resp)
{
    struct MHD_Response *r;
    enum MHD_Result ok = MHD_NO;
    size_t i;

    if (resp->body) {
        r = MHD_create_response_from_buffer(resp->body_len, resp->body, MHD_RESPMEM_MUST_FREE);
        if (r)
            resp->body = NULL; /* MHD frees it now */
    } else {
        r = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
    }
    if (r == NULL)
        goto done;
    if (MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, resp->content_type) != MHD_YES)
        goto done;
    for (i = 0; i < resp->nheaders; i++)
        if (MHD_add_response_header(r, resp->headers[i].name, resp->headers[i].value) != MHD_YES)
            goto done;
    if (s->closing && MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close") != MHD_YES)
        goto done;
    ok = MHD_queue_response(conn, (unsigned int)resp->status, r);
done:
    if (r)
        MHD_destroy_response(r);
    response_free(resp);
    return ok;
}

static enum MHD_Result send_status(const http_server *s, struct MHD_Connection *conn, int status,
                                    const char *allow)
{
    http_response resp;
    const char *text = status == 404   ? "404 page not found\n"
                       : status == 405 ? "405 method not allowed\n"
                       : status == 413 ? "413 request body too large\n"
                                       : "500 internal server error\n";

    response_init(&resp);
    resp.status = status;
    http_response_set_body(&resp, text, strlen(text));
    if (allow && allow[0])
        http_response_add_header(&resp, "Allow", allow);
    if (resp.failed) {
        response_free(&resp);
        return MHD_NO;
    }
    return send_response(s, conn, &resp);
}

static enum MHD_Result dispatch(http_server *s, struct MHD_Connection *conn, const char *url,
                                const char *method, req_ctx *ctx)
{
    http_request req;
    http_response resp;
    int rc;

    memset(&req, 0, sizeof(req));
    req.method = method;
    req.path = url;
    req.body = ctx->body ? ctx->body : "";
    req.body_len = ctx->len;
    req.conn = conn;
    response_init(&resp);
    rc = ctx->route->handler(&req, &resp, ctx->route->ud);
    s->requests++;
    if (rc < 0 || resp.failed || resp.status < 100 || resp.status > 599) {
        response_free(&resp);
        return send_status(s, conn, 500, NULL);
    }
    return send_response(s, conn, &resp);
}

static void fill_request(http_request *req, struct MHD_Connection *conn, const char *url,
                         const char *method, const req_ctx *ctx)
{
    memset(req, 0, sizeof(*req));
    req->method = method;
    req->path = url;
    req->body = ctx->body ? ctx->body : "";
    req->body_len = ctx->len;
    req->conn = conn;
}

/* Asks the gate; a held request's connection is suspended until the gate
 * resumes it (on_request then runs again for it). */
static enum MHD_Result run_gate(http_server *s, struct MHD_Connection *conn, const char *url,
                                const char *method, req_ctx *ctx)
{
    http_request req;
    http_response resp;
    http_gate_verdict v;

    fill_request(&req, conn, url, method, ctx);
    response_init(&resp);
    v = s->gate(&req, &resp, ctx, s->gate_ud);
    if (v == HTTP_GATE_ANSWER) {
        s->requests++;
        if (resp.failed || resp.status < 100 || resp.status > 599) {
            response_free(&resp);
            return send_status(s, conn, 500, NULL);
        }
        return send_response(s, conn, &resp);
    }
    response_free(&resp);
    if (v == HTTP_GATE_PASS) {
        ctx->gate = GATE_PASSED;
        return dispatch(s, conn, url, method, ctx);
    }
    ctx->gate = GATE_HELD;
    ctx->srv = s;
    ctx->conn = conn;
    hcp_list_push_front(&s->held, &ctx->link);
    MHD_suspend_connection(conn);
    return MHD_YES;
}

/* Takes a held request off its server's list and resumes its connection. */
static void resume(req_ctx *p, int gate)
{
    http_server *s = p->srv;

    hcp_list_remove(&p->link);
    p->gate = gate;
    MHD_resume_connection(p->conn);
    /* MHD serves the connection again in its next run: make it soon. */
    if (s->loop && s->running_mhd == 0)
        ev_feed_event(s->loop, &s->io, EV_READ);
}

void http_pending_pass(http_pending *p)
{
    resume(p, GATE_PASSED);
}

void http_pending_answer(http_pending *p, int status, const char *body, const char *header_name,
                         const char *header_value)
{
    http_response *a = &p->answer;

    response_init(a);
    a->status = status >= 100 && status <= 599 ? status : 500;
    if (body)
        http_response_set_body(a, body, strlen(body));
    if (header_name && header_value)
        http_response_add_header(a, header_name, header_value);
    if (a->failed) {
        response_free(a);
        response_init(a);
        a->status = 500;
    }
    p->srv->requests++;
    resume(p, GATE_ANSWERED);
}

int http_server_set_gate(http_server *s, http_gate_fn gate, http_gate_cancel_fn cancel, void *ud)
{
    if (s->daemon)
        return HCP_ESTATE;
    s->gate = gate;
    s->gate_cancel = cancel;
    s->gate_ud = ud;
    return 0;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls)
{
    http_server *s = cls;
    req_ctx *ctx = *con_cls;
    char allow[128];

    (void)version;
    if (ctx == NULL) {
        const char *cl;

        ctx = calloc(1, sizeof(*ctx));
        if (ctx == NULL)
            return MHD_NO;
        *con_cls = ctx;
        ctx->route = match(s, method, url, &ctx->early_status, allow, sizeof(allow));
        if (ctx->route == NULL)
            return send_status(s, conn, ctx->early_status, allow);
        cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl) {
            char *end;
            unsigned long long n;

            errno = 0;
            n = strtoull(cl, &end, 10);
            if (errno != 0 || end == cl || *end != '\0' || n > s->opts.max_body) {
                ctx->early_status = 413;
                return send_status(s, conn, 413, NULL);
            }
        }
        return MHD_YES;
    }
    if (ctx->early_status) {
        /* Answer already queued; drop whatever body still arrives. */
        *upload_data_size = 0;
        return MHD_YES;
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;

        *upload_data_size = 0;
        if (ctx->too_large || n > s->opts.max_body - ctx->len) {
            ctx->too_large = 1;
            free(ctx->body);
            ctx->body = NULL;
            ctx->len = ctx->cap = 0;
            return MHD_YES;
        }
        if (hcp_buf_append(&ctx->body, &ctx->len, &ctx->cap, 1024, upload_data, n) != 0)
            return MHD_NO;
        return MHD_YES;
    }
    if (ctx->too_large)
        return send_status(s, conn, 413, NULL);
    if (ctx->gate == GATE_ANSWERED)
        return send_response(s, conn, &ctx->answer);
    if (s->gate && ctx->gate == GATE_NONE)
        return run_gate(s, conn, url, method, ctx);
    return dispatch(s, conn, url, method, ctx);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    req_ctx *ctx = *con_cls;

    (void)cls;
    (void)conn;
    (void)toe;
    if (ctx) {
        response_free(&ctx->answer);
        free(ctx->body);
        free(ctx);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    http_server *s = cls;
    size_t n;

    vsnprintf(s->mhd_log, sizeof(s->mhd_log), fmt, ap);
    n = strlen(s->mhd_log);
    while (n > 0 && (s->mhd_log[n - 1] == '\n' || s->mhd_log[n - 1] == '.'))
        s->mhd_log[--n] = '\0';
}

static void do_stop(http_server *s)
{
    /* libmicrohttpd refuses to stop with suspended connections: the gate
     * forgets each held request, which is resumed only to be closed. */
    while (!hcp_list_empty(&s->held)) {
        req_ctx *p = hcp_list_entry(s->held.next, req_ctx, link);

        if (s->gate_cancel)
            s->gate_cancel(p, s->gate_ud);
        p->srv = s;
        resume(p, GATE_ANSWERED);
        p->answer.status = 503;
    }
    ev_io_stop(s->loop, &s->io);
    ev_timer_stop(s->loop, &s->timer);
    MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    s->loop = NULL;
    s->port = 0;
    s->stop_pending = 0;
    pair_free(s->tls);
    s->tls = NULL;
}

/* Re-arms the timer for MHD's next deadline (connection timeouts, pending work). */
static void rearm(http_server *s)
{
    MHD_UNSIGNED_LONG_LONG ms;

    ev_timer_stop(s->loop, &s->timer);
    if (MHD_get_timeout(s->daemon, &ms) == MHD_YES) {
        ev_timer_set(&s->timer, (double)ms / 1000.0, 0.);
        ev_timer_start(s->loop, &s->timer);
    }
}

static void run_mhd(http_server *s)
{
    s->running_mhd++;
    MHD_run(s->daemon);
    s->running_mhd--;
    if (s->stop_pending) {
        do_stop(s);
        return;
    }
    rearm(s);
}

static void on_io(struct ev_loop *loop, ev_io *w, int revents)
{
    (void)loop;
    (void)revents;
    run_mhd(w->data);
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    run_mhd(w->data);
}

static void pair_free(tls_pair *p)
{
    while (p) {
        tls_pair *older = p->older;
        for (unsigned i = 0; i < p->nchain; i++)
            gnutls_pcert_deinit(&p->chain[i]);
        if (p->key)
            gnutls_privkey_deinit(p->key);
        free(p);
        p = older;
    }
}

/* True when the public keys of the leaf and of the private key are the same. */
static bool pair_matches(const tls_pair *p)
{
    gnutls_pubkey_t pub = NULL;
    gnutls_datum_t a = {NULL, 0}, b = {NULL, 0};
    bool same = false;

    if (gnutls_pubkey_init(&pub) == 0 && gnutls_pubkey_import_privkey(pub, p->key, 0, 0) == 0 &&
        gnutls_pubkey_export2(pub, GNUTLS_X509_FMT_DER, &a) == 0 &&
        gnutls_pubkey_export2(p->chain[0].pubkey, GNUTLS_X509_FMT_DER, &b) == 0)
        same = a.size == b.size && memcmp(a.data, b.data, a.size) == 0;
    gnutls_free(a.data);
    gnutls_free(b.data);
    if (pub)
        gnutls_pubkey_deinit(pub);
    return same;
}

/* Parses a PEM chain and its key into *out (new, pair_free() frees it).
 * Returns 0, or HCP_EINVAL with the reason in err. */
static int pair_load(const char *cert_pem, const char *key_pem, tls_pair **out, char *err,
                     size_t errlen)
{
    gnutls_datum_t c = {(unsigned char *)cert_pem, (unsigned)strlen(cert_pem)};
    gnutls_datum_t k = {(unsigned char *)key_pem, (unsigned)strlen(key_pem)};
    tls_pair *p = calloc(1, sizeof(*p));
    int rc;

    *out = NULL;
    if (p == NULL)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    p->nchain = MAX_CHAIN;
    if ((rc = gnutls_pcert_list_import_x509_raw(p->chain, &p->nchain, &c, GNUTLS_X509_FMT_PEM,
                                                 0)) < 0) {
        p->nchain = 0;
        rc = hcp_errf(err, errlen, HCP_EINVAL, "the certificate: %s", gnutls_strerror(rc));
        goto fail;
    }
    if ((rc = gnutls_privkey_init(&p->key)) < 0 ||
        (rc = gnutls_privkey_import_x509_raw(p->key, &k, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "the key: %s", gnutls_strerror(rc));
        goto fail;
    }
    if (!pair_matches(p)) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "the key is not the certificate's");
        goto fail;
    }
    *out = p;
    return 0;
fail:
    pair_free(p);
    return rc;
}

/* Every connection's socket context is its server, for the callback below. */
static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    (void)conn;
    if (toe == MHD_CONNECTION_NOTIFY_STARTED)
        *socket_context = cls;
}

/* GnuTLS asks for the pair to present in a handshake: the server's newest
 * (libmicrohttpd makes the connection the session's pointer). */
static int on_certificate(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                          const gnutls_pk_algorithm_t *algos, int nalgos, gnutls_pcert_st **pcert,
                          unsigned int *npcert, gnutls_privkey_t *key)
{
    struct MHD_Connection *conn = gnutls_session_get_ptr(session);
    const union MHD_ConnectionInfo *ci =
        conn ? MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT) : NULL;
    http_server *s = ci ? ci->socket_context : NULL;

    (void)req_ca_dn;
    (void)nreqs;
    (void)algos;
    (void)nalgos;
    if (s == NULL || s->tls == NULL)
        return -1;
    *pcert = s->tls->chain;
    *npcert = s->tls->nchain;
    *key = s->tls->key;
    return 0;
}

int http_server_renew_tls(http_server *s, const char *cert_pem, const char *key_pem, char *err,
                          size_t errlen)
{
    tls_pair *p;
    int rc;

    if (cert_pem == NULL || key_pem == NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "a certificate and a key are needed");
    if (s->daemon == NULL || s->tls == NULL)
        return hcp_errf(err, errlen, HCP_ESTATE, "the server is not serving TLS");
    if ((rc = pair_load(cert_pem, key_pem, &p, err, errlen)) != 0)
        return rc;
    p->older = s->tls;
    s->tls = p;
    s->opts.tls_cert_pem = cert_pem;
    s->opts.tls_key_pem = key_pem;
    return 0;
}

static struct MHD_Daemon *start_daemon(http_server *s, unsigned int flags,
                                       const struct sockaddr_storage *addr)
{
    struct MHD_OptionItem tls[] = {{MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)on_certificate},
                                   {MHD_OPTION_END, 0, NULL}};
    int on = s->tls != NULL;

    s->mhd_log[0] = '\0';
    return MHD_start_daemon(flags | (on ? MHD_USE_TLS : 0), 0, NULL, NULL, on_request, s,
                            MHD_OPTION_ARRAY, on ? tls : tls + 1,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)s->opts.connection_timeout,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned int)s->opts.max_connections,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
                            MHD_OPTION_END);
}

int http_server_start(http_server *s, struct ev_loop *loop, const char *bind_address, char *err,
                      size_t errlen)
{
    struct sockaddr_storage addr;
    socklen_t len;
    const union MHD_DaemonInfo *info;
    unsigned int flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
    int any, rc;

    if (s->daemon) {
        return hcp_errf(err, errlen, HCP_ESTATE, "server already started");
    }
    rc = http_parse_bind_address(bind_address, &addr, &len, &any, err, errlen);
    if (rc != 0)
        return rc;
    if (s->opts.tls_cert_pem) {
        char e[200];
        if (pair_load(s->opts.tls_cert_pem, s->opts.tls_key_pem, &s->tls, e, sizeof(e)) != 0)
            return hcp_errf(err, errlen, HCP_ELISTEN, "cannot listen on %s: %s", bind_address, e);
    }
    if (any) {
        /* Both families on one socket; IPv4 alone where IPv6 is unavailable. */
        s->daemon = start_daemon(s, flags | MHD_USE_DUAL_STACK, &addr);
        if (s->daemon == NULL) {
            struct sockaddr_in *a4 = (struct sockaddr_in *)&addr;
            uint16_t port = ((struct sockaddr_in6 *)&addr)->sin6_port;

            memset(&addr, 0, sizeof(addr));
            a4->sin_family = AF_INET;
            a4->sin_addr.s_addr = htonl(INADDR_ANY);
            a4->sin_port = port;
            s->daemon = start_daemon(s, flags, &addr);
        }
    } else {
        s->daemon = start_daemon(s, flags | (addr.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0), &addr);
    }
    if (s->daemon == NULL) {
        rc = hcp_errf(err, errlen, HCP_ELISTEN, "cannot listen on %s: %s", bind_address,
                s->mhd_log[0] ? s->mhd_log : "libmicrohttpd failed to start");
        goto fail;
    }
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_EPOLL_FD);
    if (info == NULL || info->epoll_fd < 0) {
        rc = hcp_errf(err, errlen, HCP_ELISTEN, "libmicrohttpd has no epoll descriptor");
        goto fail;
    }
    s->loop = loop;
    ev_io_init(&s->io, on_io, info->epoll_fd, EV_READ);
    s->io.data = s;
    ev_init(&s->timer, on_timer);
    s->timer.data = s;
    info = MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? info->port : 0;
    s->requests = 0;
    s->stop_pending = 0;
    ev_io_start(loop, &s->io);
    rearm(s);
    return 0;
fail:
    if (s->daemon)
        MHD_stop_daemon(s->daemon);
    s->daemon = NULL;
    s->loop = NULL;
    pair_free(s->tls);
    s->tls = NULL;
    return rc;
}

int http_server_port(const http_server *s)
{
    return s->daemon ? s->port : 0;
}

void http_server_set_closing(http_server *s)
{
    s->closing = 1;
}

void http_server_stop(http_server *s)
{
    if (s->daemon == NULL)
        return;
    if (s->running_mhd > 0) {
        s->stop_pending = 1;
        return;
    }
    do_stop(s);
}
