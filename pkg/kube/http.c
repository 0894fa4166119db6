/*
 * kube/http.c - curl multi socket API on libev (see http.h for the rules).
 */
#include "kube/http.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/buf.h"

struct kube_transfer {
    kube_http *h;
    CURL *easy;                   /* owned */
    struct curl_slist *headers;   /* owned */
    hcp_link_t link;              /* on the active list */
    hcp_link_t plink;             /* on the pending list (while it has bytes to deliver) or
                                     the zombie list */
    kube_transfer_data_cb on_data;
    kube_transfer_done_cb on_done;
    void *ud;
    char *buf;                    /* buffered body or undelivered stream bytes */
    size_t len, cap;
    size_t total;                 /* bytes received */
    double retry_after;
    char *warnings;               /* Warning texts, '\n'-terminated; owned, NULL when none */
    size_t warnings_len;
    bool stream;                  /* deliver 2xx bytes through on_data */
    bool status_checked;          /* first body byte seen */
    bool stream_ok;               /* streaming is on for this response */
    bool dead;                    /* cancelled or finished: no more callbacks */
    char errbuf[CURL_ERROR_SIZE];
};

struct kube_sock {
    ev_io io;
    kube_http *h;
    curl_socket_t fd;
    hcp_link_t link;              /* on the dead list, once released */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static CURLcode global_rc;

static void global_init(void)
{
    global_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void transfer_free(struct kube_transfer *t)
{
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    free(t->buf);
    free(t->warnings);
    free(t);
}

/* Frees what callbacks left behind; only when no callback is on the stack. */
static void reap(kube_http *h)
{
    if (h->dispatching > 0)
        return;
    hcp_link_t *n;

    while ((n = hcp_list_pop_front(&h->zombies)) != NULL)
        transfer_free(hcp_list_entry(n, struct kube_transfer, plink));
    while ((n = hcp_list_pop_front(&h->dead_socks)) != NULL)
        free(hcp_list_entry(n, struct kube_sock, link));
}

/* Moves a transfer out of libcurl and onto the zombie list. */
static void retire(kube_http *h, struct kube_transfer *t)
{
    t->dead = true;
    curl_multi_remove_handle(h->multi, t->easy);
    hcp_list_remove(&t->link);
    hcp_list_remove(&t->plink); /* off the pending list, if on it */
    hcp_list_push_front(&h->zombies, &t->plink);
}

static int is_tls_error(CURLcode rc)
{
    switch (rc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_SHUTDOWN_FAILED:
        return 1;
    default:
        return 0;
    }
}

/* Whether rc says the connection went away under the transfer: the server
 * closed or reset it (an idle keep-alive connection closed by the server at
 * the moment it was reused, a server that stopped), not a timeout, a refused
 * connection or a TLS failure. */
static bool is_conn_lost(CURLcode rc)
{
    return rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || rc == CURLE_GOT_NOTHING ||
           rc == CURLE_PARTIAL_FILE;
}

/* Delivers buffered stream bytes, then completions. Runs outside libcurl callbacks. */
static void dispatch(kube_http *h)
{
    CURLMsg *msg;
    int left;

    h->dispatching++;
    for (hcp_link_t *p; (p = hcp_list_pop_front(&h->pending)) != NULL;) {
        struct kube_transfer *t = hcp_list_entry(p, struct kube_transfer, plink);
        if (t->dead || t->len == 0)
            continue;
        /* Hand over the buffer; the callback may cancel t or start others. */
        {
            char *data = t->buf;
            size_t n = t->len;
            t->buf = NULL;
            t->len = t->cap = 0;
            t->on_data(t, data, n, t->ud);
            if (t->buf == NULL && !t->dead) {
                t->buf = data; /* reuse the allocation */
                t->cap = n;
                t->len = 0;
            } else {
                free(data);
            }
        }
    }
    while ((msg = curl_multi_info_read(h->multi, &left)) != NULL) {
        struct kube_transfer *t = NULL;
        kube_transfer_result r;
        long connects = 0;

        if (msg->msg != CURLMSG_DONE)
            continue;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&t);
        if (t == NULL || t->dead)
            continue;
        memset(&r, 0, sizeof(r));
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &r.http_status);
        curl_easy_getinfo(t->easy, CURLINFO_NUM_CONNECTS, &connects);
        h->connects += connects;
        r.retry_after = t->retry_after;
        r.warnings = t->warnings;
        if (msg->data.result != CURLE_OK) {
            r.code = is_tls_error(msg->data.result) ? HCP_ETLS : HCP_ETRANSPORT;
            r.conn_lost = is_conn_lost(msg->data.result);
            r.errmsg = t->errbuf[0] ? t->errbuf : curl_easy_strerror(msg->data.result);
        }
        retire(h, t); /* removes the handle: safe, we are not inside libcurl */
        if (!t->stream_ok) {
            r.body = t->buf ? t->buf : "";
            r.body_len = t->len;
        } else {
            r.body = "";
        }
        t->on_done(t, &r, t->ud);
    }
    h->dispatching--;
    reap(h);
}

static void io_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    struct kube_sock *s = (struct kube_sock *)w;
    kube_http *h = s->h;
    int action = 0;

    (void)loop;
    if (revents & EV_READ)
        action |= CURL_CSELECT_IN;
    if (revents & EV_WRITE)
        action |= CURL_CSELECT_OUT;
    /* s may be released by libcurl during this call; it is freed in reap(). */
    curl_multi_socket_action(h->multi, s->fd, action, &h->running);
    dispatch(h);
}

static void timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    kube_http *h = (kube_http *)((char *)w - offsetof(kube_http, timer));

    (void)loop;
    (void)revents;
    curl_multi_socket_action(h->multi, CURL_SOCKET_TIMEOUT, 0, &h->running);
    dispatch(h);
}

/* CURLMOPT_TIMERFUNCTION: only (re)arms the ev_timer. */
static int multi_timer_cb(CURLM *multi, long timeout_ms, void *userp)
{
    kube_http *h = userp;

    (void)multi;
    ev_timer_stop(h->loop, &h->timer);
    if (timeout_ms >= 0) {
        ev_timer_set(&h->timer, (double)timeout_ms / 1000.0, 0.);
        ev_timer_start(h->loop, &h->timer);
    }
    return 0;
}

/* CURLMOPT_SOCKETFUNCTION: mirrors libcurl's interest in a socket onto an ev_io. */
static int multi_sock_cb(CURL *easy, curl_socket_t fd, int what, void *userp, void *sockp)
{
    kube_http *h = userp;
    struct kube_sock *s = sockp;
    int events = 0;

    (void)easy;
    if (what == CURL_POLL_REMOVE) {
        if (s != NULL) {
            ev_io_stop(h->loop, &s->io);
            curl_multi_assign(h->multi, fd, NULL);
            hcp_list_push_front(&h->dead_socks, &s->link);
        }
        return 0;
    }
    if (s == NULL) {
        s = calloc(1, sizeof(*s));
        if (s == NULL)
            return -1;
        s->h = h;
        s->fd = fd;
        ev_init(&s->io, io_cb);
        curl_multi_assign(h->multi, fd, s);
    } else {
        ev_io_stop(h->loop, &s->io);
    }
    if (what & CURL_POLL_IN)
        events |= EV_READ;
    if (what & CURL_POLL_OUT)
        events |= EV_WRITE;
    ev_io_set(&s->io, fd, events);
    ev_io_start(h->loop, &s->io);
    return 0;
}

static int buf_append(struct kube_transfer *t, const char *data, size_t n)
{
    return hcp_buf_append(&t->buf, &t->len, &t->cap, 16384, data, n) == 0 ? 0 : -1;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    struct kube_transfer *t = userp;
    size_t n = size * nmemb;

    if (!t->status_checked) {
        long status = 0;
        curl_easy_getinfo(t->easy, CURLINFO_RESPONSE_CODE, &status);
        t->status_checked = true;
        t->stream_ok = t->stream && status >= 200 && status < 300;
    }
    t->total += n;
    if (buf_append(t, data, n) < 0)
        return 0; /* makes libcurl fail the transfer with CURLE_WRITE_ERROR */
    /* Not pending yet: plink is free, as libcurl calls no retired (zombie) transfer. */
    if (t->stream_ok && !hcp_list_linked(&t->plink))
        hcp_list_push_front(&t->h->pending, &t->plink);
    return n;
}

size_t kube_http_warning_text(const char *value, size_t len, char *out, size_t outlen)
{
    const char *p = value, *end = value + len;
    size_t n = 0;

    if (outlen == 0)
        return 0;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        end--;
    /* warn-code (3 digits) SP warn-agent SP quoted warn-text */
    if (end - p >= 7 && p[0] >= '0' && p[0] <= '9' && p[1] >= '0' && p[1] <= '9' &&
        p[2] >= '0' && p[2] <= '9' && p[3] == ' ') {
        const char *q = p + 4;
        while (q < end && *q != ' ')
            q++;
        if (q + 1 < end && q[1] == '"') {
            for (q += 2; q < end && *q != '"'; q++) {
                if (*q == '\\' && q + 1 < end)
                    q++;
                if (n + 1 < outlen)
                    out[n++] = *q;
            }
            if (q < end) { /* closing quote found */
                out[n] = '\0';
                return n;
            }
            n = 0;
        }
    }
    for (; p < end && n + 1 < outlen; p++)
        out[n++] = *p;
    out[n] = '\0';
    return n;
}

/* Appends the text of one Warning header to t->warnings, within the cap. */
static void keep_warning(struct kube_transfer *t, const char *value, size_t len)
{
    char text[512];
    size_t n = kube_http_warning_text(value, len, text, sizeof(text));

    if (n == 0 || t->warnings_len + n + 2 > KUBE_WARNINGS_MAX)
        return;
    if (t->warnings == NULL && (t->warnings = malloc(KUBE_WARNINGS_MAX)) == NULL)
        return; /* a warning is advice: losing it under memory pressure is fine */
    memcpy(t->warnings + t->warnings_len, text, n);
    t->warnings_len += n;
    t->warnings[t->warnings_len++] = '\n';
    t->warnings[t->warnings_len] = '\0';
}

static size_t header_cb(char *data, size_t size, size_t nmemb, void *userp)
{
    struct kube_transfer *t = userp;
    size_t n = size * nmemb;
    static const char name[] = "retry-after:";
    static const char warning[] = "warning:";

    if (n > sizeof(warning) - 1 && strncasecmp(data, warning, sizeof(warning) - 1) == 0)
        keep_warning(t, data + sizeof(warning) - 1, n - (sizeof(warning) - 1));

    if (n > sizeof(name) - 1 && strncasecmp(data, name, sizeof(name) - 1) == 0) {
        char tmp[32], *end;
        size_t vlen = n - (sizeof(name) - 1);
        long secs;
        if (vlen >= sizeof(tmp))
            vlen = sizeof(tmp) - 1;
        memcpy(tmp, data + sizeof(name) - 1, vlen);
        tmp[vlen] = '\0';
        secs = strtol(tmp, &end, 10);
        while (*end == ' ' || *end == '\r' || *end == '\n')
            end++;
        if (end != tmp && *end == '\0' && secs >= 0 && secs < 3600)
            t->retry_after = (double)secs;
    }
    return n;
}

int kube_http_init(kube_http *h, struct ev_loop *loop, kube_error *err)
{
    memset(h, 0, sizeof(*h));
    hcp_list_init(&h->active);
    hcp_list_init(&h->pending);
    hcp_list_init(&h->zombies);
    hcp_list_init(&h->dead_socks);
    pthread_once(&global_once, global_init);
    if (global_rc != CURLE_OK)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "curl_global_init failed: %s",
                              curl_easy_strerror(global_rc));
    h->loop = loop;
    h->multi = curl_multi_init();
    if (h->multi == NULL)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "curl_multi_init failed");
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETFUNCTION, multi_sock_cb);
    curl_multi_setopt(h->multi, CURLMOPT_SOCKETDATA, h);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERFUNCTION, multi_timer_cb);
    curl_multi_setopt(h->multi, CURLMOPT_TIMERDATA, h);
    /* HTTP/1.1 only (see http.h): a transfer never waits behind another's bytes. */
    curl_multi_setopt(h->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    curl_multi_setopt(h->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)KUBE_HTTP_MAX_HOST_CONNECTIONS);
    ev_init(&h->timer, timer_cb);
    return 0;
}

void kube_http_max_connections(kube_http *h, long n)
{
    if (n > 0)
        curl_multi_setopt(h->multi, CURLMOPT_MAXCONNECTS, n);
}

void kube_http_close(kube_http *h)
{
    if (h->multi == NULL)
        return;
    while (!hcp_list_empty(&h->active))
        retire(h, hcp_list_entry(h->active.next, struct kube_transfer, link));
    while (hcp_list_pop_front(&h->pending) != NULL)
        ;
    ev_timer_stop(h->loop, &h->timer);
    h->dispatching = 0;
    reap(h);
    curl_multi_cleanup(h->multi); /* releases sockets through multi_sock_cb */
    reap(h);
    h->multi = NULL;
}

kube_transfer *kube_http_start(kube_http *h, CURL *easy, struct curl_slist *headers, bool stream,
                               kube_transfer_data_cb on_data, kube_transfer_done_cb on_done,
                               void *ud, kube_error *err)
{
    struct kube_transfer *t = calloc(1, sizeof(*t));
    CURLMcode mrc;

    if (t == NULL) {
        curl_easy_cleanup(easy);
        curl_slist_free_all(headers);
        kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        return NULL;
    }
    hcp_list_init(&t->link);
    hcp_list_init(&t->plink);
    t->h = h;
    t->easy = easy;
    t->headers = headers;
    t->stream = stream && on_data != NULL;
    t->on_data = on_data;
    t->on_done = on_done;
    t->ud = ud;
    t->retry_after = -1;
    curl_easy_setopt(easy, CURLOPT_PRIVATE, t);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, write_cb);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, t);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, header_cb);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, t);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, t->errbuf);
    if (headers)
        curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
    mrc = curl_multi_add_handle(h->multi, easy);
    if (mrc != CURLM_OK) {
        kube_error_set(err, HCP_ETRANSPORT, 0, NULL, "curl_multi_add_handle: %s",
                       curl_multi_strerror(mrc));
        transfer_free(t);
        return NULL;
    }
    hcp_list_push_front(&h->active, &t->link);
    h->started++;
    return t;
}

void kube_http_cancel(kube_http *h, kube_transfer *t)
{
    if (t == NULL || t->dead)
        return;
    retire(h, t);
    reap(h);
}

size_t kube_transfer_bytes(const kube_transfer *t)
{
    return t->total;
}
