/*
 * kube/client.c - REST requests: auth, TLS, rate limit, 429 retries, a read
 * sent again when its connection broke, stats.
 */
#include "kube/client.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct kube_request {
    kube_client *c;
    hcp_link_t link;              /* on the client's live list */
    kube_verb verb;
    char *url;                        /* owned */
    char *body;                       /* owned copy or NULL */
    size_t body_len;
    char *content_type;               /* owned copy or NULL */
    kube_data_cb on_data;
    kube_done_cb on_done;
    void *ud;
    kube_transfer *t;                 /* current attempt or NULL */
    ev_timer delay;                   /* rate limit or Retry-After wait */
    kube_backoff backoff;             /* 429 without Retry-After */
    int attempts;
    bool no_ratelimit;
    bool reauthed;                    /* retried once after a 401 already */
    bool resent;                      /* sent again once after its connection broke */
    bool in_cb;                       /* a user callback of this request is running */
    bool cancelled;
};

static const char *const verb_names[KUBE_VERB_COUNT] = {
    "get", "list", "watch", "create", "update", "patch", "apply", "delete",
};

const char *kube_verb_name(kube_verb v)
{
    return (unsigned)v < KUBE_VERB_COUNT ? verb_names[v] : "unknown";
}

static const char *method_of(kube_verb v)
{
    switch (v) {
    case KUBE_VERB_CREATE: return "POST";
    case KUBE_VERB_UPDATE: return "PUT";
    case KUBE_VERB_PATCH:
    case KUBE_VERB_APPLY: return "PATCH";
    case KUBE_VERB_DELETE: return "DELETE";
    default: return "GET";
    }
}

static void count(kube_client *c, kube_verb verb, int code)
{
    size_t i;

    for (i = 0; i < c->nstats; i++) {
        if (c->stats[i].verb == verb && c->stats[i].code == code) {
            c->stats[i].count++;
            return;
        }
    }
    if (c->nstats == c->stats_cap && c->stats_cap < KUBE_STATS_MAX) {
        /* Grown as rows appear: most clients (a hosted cluster's) see two
         * or three (verb, code) pairs in their life, not 64. */
        size_t cap = c->stats_cap ? 2 * c->stats_cap : 4;
        kube_stat *rows = realloc(c->stats, cap * sizeof(*rows));
        if (!rows)
            return;
        c->stats = rows;
        c->stats_cap = cap;
    }
    if (c->nstats < c->stats_cap) {
        c->stats[c->nstats].verb = verb;
        c->stats[c->nstats].code = code;
        c->stats[c->nstats].count = 1;
        c->nstats++;
    }
}

const kube_stat *kube_client_stats(const kube_client *c, size_t *n)
{
    *n = c->nstats;
    return c->stats;
}

/* Re-reads the token file when it changed (or when forced after a 401). */
static void refresh_token(kube_client *c, bool force)
{
    const char *file = c->cfg->token_file;
    double now = ev_now(c->http->loop);
    struct stat st;
    char *tok = NULL;

    if (file == NULL)
        return;
    if (!force && now - c->token_checked < c->opts.token_recheck)
        return;
    c->token_checked = now;
    if (stat(file, &st) != 0)
        return; /* keep the old token; the server will tell us if it is stale */
    if (!force && st.st_mtim.tv_sec == c->token_mtime.tv_sec &&
        st.st_mtim.tv_nsec == c->token_mtime.tv_nsec)
        return;
    if (kube_config_read_token(file, &tok, NULL) < 0)
        return;
    c->token_mtime = st.st_mtim;
    if (c->token == NULL || strcmp(c->token, tok) != 0)
        c->token_reloads++;
    free(c->token);
    c->token = tok;
}

/* ---- the API server answering again ------------------------------------- */

static void probe_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    (void)err; /* /readyz answers "ok", not JSON: the answer itself is what counts */
    (void)obj;
    (void)ud;
    c->probing = false;
}

static void probe_now(kube_client *c)
{
    kube_call call = {.verb = KUBE_VERB_GET, .path = "/readyz", .on_done = probe_done,
                      .no_ratelimit = true};

    if (!c->unreachable || c->probing)
        return;
    if (kube_client_call(c, &call, NULL, NULL) == 0)
        c->probing = true;
}

static void probe_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    probe_now(w->data);
}

static void back_now(kube_client *c)
{
    ev_timer_stop(c->http->loop, &c->back_later);
    c->back_at = ev_now(c->http->loop);
    c->on_back(c->back_ud);
}

static void back_later_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    back_now(w->data);
}

/* A request got no answer: probe until something is answered (only for an
 * owner who listens: a client of a hosted cluster that is down does not
 * probe it twice a second for hours). */
static void lost(kube_client *c)
{
    if (c->unreachable || c->opts.probe_interval < 0 || c->on_back == NULL)
        return;
    c->unreachable = true;
    ev_timer_set(&c->probe, c->opts.probe_interval, c->opts.probe_interval);
    ev_timer_start(c->http->loop, &c->probe);
}

/* /readyz answered: the API server serves again. */
static void answered(kube_client *c)
{
    if (!c->unreachable)
        return;
    c->unreachable = false;
    ev_timer_stop(c->http->loop, &c->probe);
    c->backs++;
    /* At most once a second: a path that answers 503 for good (none the
     * controller reads) must not make its owner decide everything again
     * and again. A call that comes too soon (the API server answered a
     * core path, then a 503 for a custom resource while it was still
     * starting) is made a second after the last one, not dropped. */
    if (c->on_back == NULL)
        return;
    double wait = c->back_at + 1.0 - ev_now(c->http->loop); /* back_at 0: never called */
    if (wait <= 0) {
        back_now(c);
    } else {
        ev_timer_stop(c->http->loop, &c->back_later);
        ev_timer_set(&c->back_later, wait, 0.);
        ev_timer_start(c->http->loop, &c->back_later);
    }
}

void kube_client_on_back(kube_client *c, void (*on_back)(void *ud), void *ud)
{
    c->on_back = on_back;
    c->back_ud = ud;
}

int kube_client_init(kube_client *c, kube_http *http, const kube_config *cfg,
                     const kube_client_opts *opts, kube_error *err)
{
    memset(c, 0, sizeof(*c));
    hcp_list_init(&c->reqs);
    kube_error_clear(err);
    if (http == NULL || cfg == NULL || cfg->server == NULL)
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "client needs an http engine and a server");
    c->http = http;
    c->cfg = cfg;
    if (opts)
        c->opts = *opts;
    if (c->opts.max_retries == 0)
        c->opts.max_retries = 5;
    if (c->opts.timeout <= 0)
        c->opts.timeout = 60;
    if (c->opts.stall == 0)
        c->opts.stall = 15;
    if (c->opts.user_agent == NULL)
        c->opts.user_agent = "hcp-controller";
    if (c->opts.retry_initial <= 0)
        c->opts.retry_initial = 1.0;
    if (c->opts.retry_max <= 0)
        c->opts.retry_max = 30.0;
    if (c->opts.token_recheck <= 0)
        c->opts.token_recheck = 1.0;
    if (c->opts.probe_interval == 0)
        c->opts.probe_interval = 0.5;
    if (c->opts.idle_max <= 0)
        c->opts.idle_max = 60;
    ev_init(&c->probe, probe_cb);
    c->probe.data = c;
    ev_init(&c->back_later, back_later_cb);
    c->back_later.data = c;
    kube_ratelimit_init(&c->rl, c->opts.qps, c->opts.burst, ev_now(http->loop));
    if (cfg->token) {
        c->token = strdup(cfg->token);
        if (c->token == NULL)
            return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
    }
    if (cfg->token_file) {
        struct stat st;
        if (stat(cfg->token_file, &st) == 0)
            c->token_mtime = st.st_mtim;
        c->token_checked = ev_now(http->loop);
    }
    return 0;
}

int kube_client_set_token(kube_client *c, const char *token)
{
    char *t = strdup(token ? token : "");
    if (t == NULL)
        return HCP_ENOMEM;
    kube_secret_free(c->token);
    c->token = t;
    return 0;
}

static void request_free(kube_request *r)
{
    kube_client *c = r->c;

    hcp_list_remove(&r->link);
    ev_timer_stop(c->http->loop, &r->delay);
    free(r->url);
    free(r->body);
    free(r->content_type);
    free(r);
}

void kube_client_close(kube_client *c)
{
    if (c->http) {
        ev_timer_stop(c->http->loop, &c->probe);
        ev_timer_stop(c->http->loop, &c->back_later);
    }
    while (!hcp_list_empty(&c->reqs)) {
        kube_request *r = hcp_list_entry(c->reqs.next, kube_request, link);
        kube_http_cancel(c->http, r->t);
        request_free(r);
    }
    kube_secret_free(c->token);
    free(c->stats);
    memset(c, 0, sizeof(*c));
    hcp_list_init(&c->reqs);
}

static void set_blob(CURL *e, CURLoption opt, const char *data, size_t len)
{
    struct curl_blob b;

    b.data = (void *)data;
    b.len = len;
    b.flags = CURL_BLOB_COPY;
    curl_easy_setopt(e, opt, &b);
}

static int launch(kube_request *r, kube_error *err);

/* Hands each line of a response's Warning texts to the client's on_warning. */
static void report_warnings(kube_client *c, kube_request *r, const char *warnings)
{
    char line[512];
    const char *p, *nl;
    size_t n;

    for (p = warnings; p != NULL && *p != '\0'; p = nl + 1) {
        nl = strchr(p, '\n');
        if (nl == NULL)
            break;
        c->warnings++;
        if (c->opts.on_warning == NULL)
            continue;
        n = (size_t)(nl - p) < sizeof(line) - 1 ? (size_t)(nl - p) : sizeof(line) - 1;
        memcpy(line, p, n);
        line[n] = '\0';
        c->opts.on_warning(method_of(r->verb), r->url, line, c->opts.warning_ud);
    }
}

static void finish(kube_request *r, const kube_error *e, json_t *obj)
{
    r->in_cb = true;
    r->on_done(r->c, e, obj, r->ud);
    request_free(r);
}

static void delay_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    kube_request *r = (kube_request *)((char *)w - offsetof(kube_request, delay));
    kube_error e;

    (void)loop;
    (void)revents;
    if (launch(r, &e) < 0)
        finish(r, &e, NULL);
}

static void schedule(kube_request *r, double seconds)
{
    ev_timer_stop(r->c->http->loop, &r->delay);
    ev_timer_set(&r->delay, seconds, 0.);
    ev_timer_start(r->c->http->loop, &r->delay);
}

/* Waits for the rate limiter, then launches; used for first attempts and retries. */
static int admit(kube_request *r, kube_error *err)
{
    double wait = 0;

    if (!r->no_ratelimit)
        wait = kube_ratelimit_reserve(&r->c->rl, ev_now(r->c->http->loop));
    if (wait > 0) {
        schedule(r, wait);
        return 0;
    }
    return launch(r, err);
}

static void on_stream_data(kube_transfer *t, const char *data, size_t len, void *ud)
{
    kube_request *r = ud;

    (void)t;
    r->in_cb = true;
    r->on_data(r->c, data, len, r->ud);
    r->in_cb = false;
    if (r->cancelled)
        request_free(r);
}

static void on_transfer_done(kube_transfer *t, const kube_transfer_result *res, void *ud)
{
    kube_request *r = ud;
    kube_client *c = r->c;
    kube_error e;
    json_t *obj = NULL;
    int status = (int)res->http_status;

    (void)t;
    r->t = NULL;
    kube_error_clear(&e);
    if (res->code < 0) {
        count(c, r->verb, 0);
        /* A read whose connection broke under it is sent again at once, on
         * another connection, as client-go does for a GET and a watch
         * (rest/request.go: a connection reset or an unexpected EOF is
         * retried for GETs only, a write may have happened). The API server
         * closes an idle keep-alive connection after its IdleTimeout;
         * libcurl sends again by itself only when a reused connection
         * answered nothing, not when the send failed ("Send failure:
         * Broken pipe") nor on a new connection; the resend opens a new
         * connection (launch()). A watch only before its
         * answer began: nothing of it was delivered. Once: a second break
         * is the server going away, which the caller's backoff handles. */
        if (res->conn_lost && !r->resent &&
            (r->verb == KUBE_VERB_GET || r->verb == KUBE_VERB_LIST ||
             r->verb == KUBE_VERB_WATCH) &&
            (r->on_data == NULL || res->http_status == 0)) {
            r->resent = true;
            c->resent++;
            if (launch(r, &e) == 0)
                return;
        }
        if (res->code == HCP_ETRANSPORT)
            lost(c);
        kube_error_set(&e, res->code, 0, NULL, "%s %s: %s%s", method_of(r->verb), r->url,
                       res->code == HCP_ETLS ? "TLS error: " : "", res->errmsg);
        finish(r, &e, NULL);
        return;
    }
    count(c, r->verb, status);
    if (status == 503) {
        /* Just after a restart the API server answers 503 ("the request has
         * been made before all known HTTP paths have been installed") until
         * it serves everything: not serving yet. */
        lost(c);
    } else if (c->unreachable) {
        /* Serving again: a request done (2xx), or /readyz answered (a
         * /readyz it may not read, 401, 403 or 404, is an answer too; 500
         * is "not ready"). A watch's 410 right after a restart is not:
         * another answer asks /readyz at once. */
        if ((status >= 200 && status < 300) || (r->on_done == probe_done && status < 500))
            answered(c); /* may call the owner, which may start requests: r stays */
        else if (!c->probing)
            probe_now(c);
    }
    report_warnings(c, r, res->warnings);
    if (status == 429 && r->attempts <= c->opts.max_retries) {
        double wait = res->retry_after >= 0 ? res->retry_after : kube_backoff_next(&r->backoff,
                                                                   (double)rand() / RAND_MAX);
        c->throttled++;
        schedule(r, wait > 0 ? wait : 0.001);
        return;
    }
    if (status == 401 && c->cfg->token_file && !r->reauthed) {
        char *old = c->token ? strdup(c->token) : NULL;
        bool changed;
        refresh_token(c, true);
        changed = c->token && (old == NULL || strcmp(old, c->token) != 0);
        free(old);
        r->reauthed = true;
        if (changed) {
            if (launch(r, &e) < 0)
                finish(r, &e, NULL);
            return;
        }
    }
    if (status < 200 || status >= 300) {
        kube_error_from_response(&e, status, res->body, res->body_len);
        finish(r, &e, NULL);
        return;
    }
    if (res->body_len > 0) {
        json_error_t jerr;
        obj = json_loadb(res->body, res->body_len, 0, &jerr);
        if (obj == NULL) {
            kube_error_set(&e, HCP_EPARSE, status, NULL, "%s %s: invalid JSON response: %s",
                           method_of(r->verb), r->url, jerr.text);
            finish(r, &e, NULL);
            return;
        }
    }
    finish(r, NULL, obj);
    json_decref(obj);
}

static int launch(kube_request *r, kube_error *err)
{
    kube_client *c = r->c;
    const kube_config *cfg = c->cfg;
    struct curl_slist *hdrs = NULL, *tmp;
    CURL *e = NULL;
    char line[8192];

    refresh_token(c, false);
    r->attempts++;
    e = curl_easy_init();
    if (e == NULL)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "curl_easy_init failed");
    curl_easy_setopt(e, CURLOPT_URL, r->url);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    /* HTTP/1.1: one connection per transfer in flight (see http.h). */
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    /* A read sent again after its connection broke goes on a new one: the
     * pool may hold more connections the server closed while idle (after a
     * burst, all of them), and another of those breaks the same way. */
    if (r->resent || c->opts.no_reuse)
        curl_easy_setopt(e, CURLOPT_FRESH_CONNECT, 1L);
    if (c->opts.no_reuse)
        curl_easy_setopt(e, CURLOPT_FORBID_REUSE, 1L);
    /* below k8s.io/apiserver's IdleTimeout (pkg/server/secure_serving.go) */
    curl_easy_setopt(e, CURLOPT_MAXAGE_CONN, c->opts.idle_max);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPIDLE, 30L);
    curl_easy_setopt(e, CURLOPT_TCP_KEEPINTVL, 10L);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(e, CURLOPT_USERAGENT, c->opts.user_agent);
    if (r->on_data == NULL)
        curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)(c->opts.timeout * 1000));
    if (r->on_data == NULL && c->opts.stall > 0 &&
        (r->verb == KUBE_VERB_GET || r->verb == KUBE_VERB_LIST)) {
        /* Writes are left alone: an admission webhook may take its own
         * timeout before the first byte of the answer. */
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_LIMIT, 1L);
        curl_easy_setopt(e, CURLOPT_LOW_SPEED_TIME, (long)(c->opts.stall + 0.999));
    }
    if (cfg->insecure) {
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
        curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
    } else if (cfg->ca) {
        /* Trust exactly the configured CA, not the system store as well. */
        set_blob(e, CURLOPT_CAINFO_BLOB, cfg->ca, cfg->ca_len);
        curl_easy_setopt(e, CURLOPT_CAPATH, NULL);
    }
    if (cfg->cert && cfg->key) {
        curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
        set_blob(e, CURLOPT_SSLCERT_BLOB, cfg->cert, cfg->cert_len);
        curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
        set_blob(e, CURLOPT_SSLKEY_BLOB, cfg->key, cfg->key_len);
    }
    if (r->verb != KUBE_VERB_GET && r->verb != KUBE_VERB_LIST && r->verb != KUBE_VERB_WATCH)
        curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method_of(r->verb));
    if (r->body) {
        curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->body_len);
        curl_easy_setopt(e, CURLOPT_POSTFIELDS, r->body); /* r outlives the transfer */
    }
    tmp = curl_slist_append(hdrs, "Accept: application/json");
    if (tmp == NULL)
        goto nomem;
    hdrs = tmp;
    if (r->body) {
        snprintf(line, sizeof(line), "Content-Type: %s",
                 r->content_type ? r->content_type : "application/json");
        if ((tmp = curl_slist_append(hdrs, line)) == NULL)
            goto nomem;
        hdrs = tmp;
    }
    if (c->token) {
        if ((size_t)snprintf(line, sizeof(line), "Authorization: Bearer %s", c->token) >=
            sizeof(line)) {
            kube_error_set(err, HCP_ECONFIG, 0, NULL, "bearer token is too long");
            goto fail;
        }
        tmp = curl_slist_append(hdrs, line);
        memset(line, 0, sizeof(line));
        if (tmp == NULL)
            goto nomem;
        hdrs = tmp;
    }
    r->t = kube_http_start(c->http, e, hdrs, r->on_data != NULL,
                           r->on_data ? on_stream_data : NULL, on_transfer_done, r, err);
    if (r->t == NULL)
        return err ? err->code : HCP_ETRANSPORT; /* e and hdrs were freed */
    return 0;
nomem:
    kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
fail:
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(e);
    return err ? err->code : HCP_ENOMEM;
}

int kube_client_call(kube_client *c, const kube_call *call, kube_request **out, kube_error *err)
{
    kube_request *r = NULL;
    int rc;

    kube_error_clear(err);
    if (out)
        *out = NULL;
    if (call == NULL || call->path == NULL || call->path[0] != '/' || call->on_done == NULL)
        return kube_error_set(err, HCP_EINVAL, 0, NULL,
                              "request needs an absolute path and on_done");
    r = calloc(1, sizeof(*r));
    if (r == NULL)
        goto nomem;
    hcp_list_init(&r->link);
    r->c = c;
    r->verb = call->verb;
    r->on_data = call->on_data;
    r->on_done = call->on_done;
    r->ud = call->ud;
    r->no_ratelimit = call->no_ratelimit;
    kube_backoff_init(&r->backoff, c->opts.retry_initial, c->opts.retry_max);
    ev_init(&r->delay, delay_cb);
    if (asprintf(&r->url, "%s%s%s%s", c->cfg->server, call->path,
                 call->query && call->query[0] ? "?" : "", call->query ? call->query : "") < 0) {
        r->url = NULL;
        goto nomem;
    }
    if (call->body) {
        r->body = malloc(call->body_len + 1);
        if (r->body == NULL)
            goto nomem;
        memcpy(r->body, call->body, call->body_len);
        r->body[call->body_len] = '\0';
        r->body_len = call->body_len;
    }
    if (call->content_type && (r->content_type = strdup(call->content_type)) == NULL)
        goto nomem;
    hcp_list_push_front(&c->reqs, &r->link);
    rc = admit(r, err);
    if (rc < 0) {
        request_free(r);
        return rc;
    }
    if (out)
        *out = r;
    return 0;
nomem:
    if (r) {
        free(r->url);
        free(r->body);
        free(r);
    }
    return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
}

void kube_request_cancel(kube_request *r)
{
    if (r == NULL || r->cancelled)
        return;
    r->cancelled = true;
    kube_http_cancel(r->c->http, r->t);
    r->t = NULL;
    ev_timer_stop(r->c->http->loop, &r->delay);
    if (!r->in_cb)
        request_free(r);
}

size_t kube_request_bytes(const kube_request *r)
{
    return r->t ? kube_transfer_bytes(r->t) : 0;
}

static int call_json(kube_client *c, kube_verb verb, const char *path, const char *query,
                     const char *ctype, const json_t *obj, kube_done_cb cb, void *ud,
                     kube_error *err)
{
    kube_call call;
    char *body = NULL;
    int rc;

    memset(&call, 0, sizeof(call));
    if (obj) {
        body = json_dumps(obj, JSON_COMPACT);
        if (body == NULL)
            return kube_error_set(err, HCP_EINVAL, 0, NULL, "cannot serialise request body");
        call.body = body;
        call.body_len = strlen(body);
    }
    call.verb = verb;
    call.path = path;
    call.query = query;
    call.content_type = ctype;
    call.on_done = cb;
    call.ud = ud;
    rc = kube_client_call(c, &call, NULL, err);
    free(body);
    return rc;
}

int kube_get(kube_client *c, const char *path, kube_done_cb cb, void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_GET, path, NULL, NULL, NULL, cb, ud, err);
}

int kube_create(kube_client *c, const char *collection, const json_t *obj, kube_done_cb cb,
                void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_CREATE, collection, NULL, "application/json", obj, cb, ud, err);
}

int kube_update(kube_client *c, const char *path, const json_t *obj, kube_done_cb cb, void *ud,
                kube_error *err)
{
    return call_json(c, KUBE_VERB_UPDATE, path, NULL, "application/json", obj, cb, ud, err);
}

int kube_merge_patch(kube_client *c, const char *path, const json_t *patch, kube_done_cb cb,
                     void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_PATCH, path, NULL, "application/merge-patch+json", patch, cb,
                     ud, err);
}

int kube_merge_patch_status(kube_client *c, const char *path, const json_t *patch,
                            kube_done_cb cb, void *ud, kube_error *err)
{
    char full[2048];

    if ((size_t)snprintf(full, sizeof(full), "%s/status", path) >= sizeof(full))
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "path too long");
    return kube_merge_patch(c, full, patch, cb, ud, err);
}

int kube_apply(kube_client *c, const char *path, const json_t *obj, bool force, kube_done_cb cb,
               void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_APPLY, path,
                     force ? "fieldManager=" KUBE_FIELD_MANAGER "&force=true"
                           : "fieldManager=" KUBE_FIELD_MANAGER,
                     "application/apply-patch+yaml", obj, cb, ud, err);
}

int kube_delete(kube_client *c, const char *path, kube_done_cb cb, void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_DELETE, path, NULL, NULL, NULL, cb, ud, err);
}

int kube_delete_with(kube_client *c, const char *path, const json_t *options, kube_done_cb cb,
                     void *ud, kube_error *err)
{
    return call_json(c, KUBE_VERB_DELETE, path, NULL, "application/json", options, cb, ud, err);
}

int kube_list(kube_client *c, const char *path, const char *query, kube_done_cb cb, void *ud,
              kube_error *err)
{
    return call_json(c, KUBE_VERB_LIST, path, query, NULL, NULL, cb, ud, err);
}

static int segment_ok(const char *s)
{
    const unsigned char *p;

    if (s == NULL || s[0] == '\0')
        return 0;
    for (p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x21 || *p == 0x7f || *p == '/' || *p == '?' || *p == '#' || *p == '%')
            return 0;
    }
    return strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int kube_path(char *buf, size_t len, const char *group, const char *version,
              const char *resource, const char *ns, const char *name, const char *sub)
{
    size_t n;
    int w;

    if (buf == NULL || len == 0 || !segment_ok(version) || !segment_ok(resource))
        return HCP_EINVAL;
    if (group && group[0] && !segment_ok(group))
        return HCP_EINVAL;
    if ((ns && ns[0] && !segment_ok(ns)) || (name && name[0] && !segment_ok(name)) ||
        (sub && sub[0] && !segment_ok(sub)))
        return HCP_EINVAL;
    if (sub && sub[0] && !(name && name[0]))
        return HCP_EINVAL;
    if (group && group[0])
        w = snprintf(buf, len, "/apis/%s/%s", group, version);
    else
        w = snprintf(buf, len, "/api/%s", version);
    if (w < 0 || (size_t)w >= len)
        return HCP_EINVAL;
    n = (size_t)w;
    if (ns && ns[0]) {
        w = snprintf(buf + n, len - n, "/namespaces/%s", ns);
        if (w < 0 || (size_t)w >= len - n)
            return HCP_EINVAL;
        n += (size_t)w;
    }
    w = snprintf(buf + n, len - n, "/%s", resource);
    if (w < 0 || (size_t)w >= len - n)
        return HCP_EINVAL;
    n += (size_t)w;
    if (name && name[0]) {
        w = snprintf(buf + n, len - n, "/%s", name);
        if (w < 0 || (size_t)w >= len - n)
            return HCP_EINVAL;
        n += (size_t)w;
    }
    if (sub && sub[0]) {
        w = snprintf(buf + n, len - n, "/%s", sub);
        if (w < 0 || (size_t)w >= len - n)
            return HCP_EINVAL;
    }
    return 0;
}
