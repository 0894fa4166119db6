/* kube/testutil_fakeapi.c: see testutil_fakeapi.h. */
#include "kube/testutil_fakeapi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/list.h"

struct fakeapi_conn {
    ev_io io;              /* first member: the watcher is the connection */
    fakeapi_t *f;
    int fd;
    char buf[16384];       /* request bytes not yet parsed */
    size_t len;
    bool reset;            /* close with a RST once the serve function returns */
    hcp_link_t link;       /* on the server's list */
};

struct fakeapi {
    ev_io accept_io;       /* first member */
    struct ev_loop *loop;
    int lfd, port;
    hcp_link_t conns;      /* open connections */
    fakeapi_conn_t *stream; /* connection of the last stream opened, NULL once closed */
    fakeapi_handler_fn handler; /* one of handler and serve */
    fakeapi_serve_fn serve;
    void *ud;
    fakeapi_req_t **log;   /* every request, in order; each entry its own allocation */
    int n, cap;
    int closed;            /* connections the client closed */
    int accepted;          /* connections the client opened */
};

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fakeapi: %s failed\n", what);
        abort();
    }
}

static void send_all(fakeapi_conn_t *c, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return; /* the client went away; the read side notices */
        p += n;
        len -= (size_t)n;
    }
}

static const char *reason_phrase(int status)
{
    switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    default: return "Status";
    }
}

void fakeapi_reply(fakeapi_conn_t *c, int status, const char *extra, const char *body)
{
    char head[512];
    int n;

    if (body == NULL)
        body = "";
    n = snprintf(head, sizeof(head),
                 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                 "Content-Length: %zu\r\n%s\r\n",
                 status, reason_phrase(status), strlen(body), extra ? extra : "");
    must(n > 0 && (size_t)n < sizeof(head), "response head");
    send_all(c, head, (size_t)n);
    send_all(c, body, strlen(body));
}

void fakeapi_stream_open(fakeapi_conn_t *c)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";

    send_all(c, head, sizeof(head) - 1);
    c->f->stream = c;
}

void fakeapi_stream_send(fakeapi_t *f, const char *data)
{
    char head[32];
    int n;

    must(f->stream != NULL, "stream send (no open stream)");
    n = snprintf(head, sizeof(head), "%zx\r\n", strlen(data));
    send_all(f->stream, head, (size_t)n);
    send_all(f->stream, data, strlen(data));
    send_all(f->stream, "\r\n", 2);
}

bool fakeapi_streaming(const fakeapi_t *f)
{
    return f->stream != NULL;
}

static void conn_close(fakeapi_conn_t *c)
{
    fakeapi_t *f = c->f;

    hcp_list_remove(&c->link);
    if (f->stream == c)
        f->stream = NULL;
    ev_io_stop(f->loop, &c->io);
    close(c->fd);
    free(c);
}

void fakeapi_reset(fakeapi_conn_t *c)
{
    c->reset = true;
}

void fakeapi_close_idle(fakeapi_t *f)
{
    hcp_link_t *p = f->conns.next, *next;

    for (; p != &f->conns; p = next) {
        fakeapi_conn_t *c = hcp_list_entry(p, fakeapi_conn_t, link);
        next = p->next;
        if (c != f->stream)
            conn_close(c);
    }
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

/* Parses one complete request from c->buf into r; returns its size, or 0 when incomplete. */
static size_t parse_request(fakeapi_conn_t *c, fakeapi_req_t *r)
{
    const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    char clen[32];
    size_t hlen, blen = 0, tl, pl;
    const char *sp1, *sp2, *target, *q;

    if (end == NULL)
        return 0;
    hlen = (size_t)(end - c->buf) + 4;
    header_value(c->buf, hlen, "Content-Length", clen, sizeof(clen));
    if (clen[0]) {
        char *e;
        unsigned long v = strtoul(clen, &e, 10);
        must(*e == '\0' && v < sizeof(c->buf), "request size");
        blen = v;
    }
    if (c->len < hlen + blen)
        return 0;
    memset(r, 0, sizeof(*r));
    sp1 = memchr(c->buf, ' ', hlen);
    sp2 = sp1 ? memchr(sp1 + 1, ' ', hlen - (size_t)(sp1 + 1 - c->buf)) : NULL;
    must(sp1 && sp2 && (size_t)(sp1 - c->buf) < sizeof(r->method), "request line");
    snprintf(r->method, sizeof(r->method), "%.*s", (int)(sp1 - c->buf), c->buf);
    target = sp1 + 1;
    tl = (size_t)(sp2 - target);
    q = memchr(target, '?', tl);
    pl = q ? (size_t)(q - target) : tl;
    must(pl < sizeof(r->path), "request path size");
    snprintf(r->path, sizeof(r->path), "%.*s", (int)pl, target);
    if (q) {
        must(tl - pl - 1 < sizeof(r->query), "request query size");
        snprintf(r->query, sizeof(r->query), "%.*s", (int)(tl - pl - 1), q + 1);
    }
    header_value(c->buf, hlen, "Authorization", r->auth, sizeof(r->auth));
    snprintf(r->body, sizeof(r->body), "%.*s", (int)blen, c->buf + hlen);
    r->watch = strncmp(r->query, "watch=1", 7) == 0 || strstr(r->query, "&watch=1") != NULL;
    r->at = ev_now(c->f->loop);
    return hlen + blen;
}

/* Records r (copied) at the end of the log. */
static const fakeapi_req_t *record(fakeapi_t *f, const fakeapi_req_t *r)
{
    fakeapi_req_t *copy;

    if (f->n == f->cap) {
        int cap = f->cap ? 2 * f->cap : 32;
        fakeapi_req_t **log = realloc(f->log, (size_t)cap * sizeof(*log));
        must(log != NULL, "realloc");
        f->log = log;
        f->cap = cap;
    }
    copy = malloc(sizeof(*copy));
    must(copy != NULL, "malloc");
    *copy = *r;
    f->log[f->n++] = copy;
    return copy;
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    fakeapi_conn_t *c = (fakeapi_conn_t *)w;
    fakeapi_t *f = c->f;
    fakeapi_req_t r;
    size_t used;
    ssize_t n;

    (void)loop;
    (void)revents;
    n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        f->closed++;
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    while ((used = parse_request(c, &r)) > 0) {
        const fakeapi_req_t *logged;
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        logged = record(f, &r);
        if (f->serve) {
            f->serve(f, c, logged, f->ud);
            if (c->reset) {
                struct linger l = {.l_onoff = 1, .l_linger = 0};
                must(setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l)) == 0, "SO_LINGER");
                conn_close(c);
                return;
            }
        } else {
            int status = 200;
            const char *body = f->handler(logged, &status, f->ud);
            fakeapi_reply(c, status, NULL, body);
        }
    }
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    fakeapi_t *f = (fakeapi_t *)w;
    fakeapi_conn_t *c;
    int fd;

    (void)revents;
    fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return;
    c = calloc(1, sizeof(*c));
    must(c != NULL, "calloc");
    c->f = f;
    c->fd = fd;
    f->accepted++;
    hcp_list_push_front(&f->conns, &c->link);
    ev_io_init(&c->io, conn_cb, fd, EV_READ);
    ev_io_start(loop, &c->io);
}

static fakeapi_t *start(struct ev_loop *loop, fakeapi_handler_fn handler, fakeapi_serve_fn serve,
                        void *ud)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    fakeapi_t *f = calloc(1, sizeof(*f));

    must(f != NULL, "calloc");
    hcp_list_init(&f->conns);
    f->loop = loop;
    f->handler = handler;
    f->serve = serve;
    f->ud = ud;
    f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    must(f->lfd >= 0, "socket");
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    must(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)) == 0, "bind");
    must(listen(f->lfd, 16) == 0, "listen");
    must(getsockname(f->lfd, (struct sockaddr *)&a, &alen) == 0, "getsockname");
    f->port = ntohs(a.sin_port);
    ev_io_init(&f->accept_io, accept_cb, f->lfd, EV_READ);
    ev_io_start(loop, &f->accept_io);
    return f;
}

fakeapi_t *fakeapi_start(struct ev_loop *loop, fakeapi_handler_fn handler, void *ud)
{
    must(handler != NULL, "fakeapi_start (no handler)");
    return start(loop, handler, NULL, ud);
}

fakeapi_t *fakeapi_start_serve(struct ev_loop *loop, fakeapi_serve_fn serve, void *ud)
{
    must(serve != NULL, "fakeapi_start_serve (no serve function)");
    return start(loop, NULL, serve, ud);
}

int fakeapi_port(const fakeapi_t *f)
{
    return f->port;
}

int fakeapi_count(const fakeapi_t *f)
{
    return f->n;
}

const fakeapi_req_t *fakeapi_nth(const fakeapi_t *f, int i)
{
    return i >= 0 && i < f->n ? f->log[i] : NULL;
}

static bool matches(const fakeapi_req_t *r, const char *method, const char *path, bool watch)
{
    return strcmp(r->method, method) == 0 && strcmp(r->path, path) == 0 && r->watch == watch;
}

int fakeapi_count_of(const fakeapi_t *f, const char *method, const char *path, bool watch)
{
    int n = 0;

    for (int i = 0; i < f->n; i++)
        if (matches(f->log[i], method, path, watch))
            n++;
    return n;
}

const fakeapi_req_t *fakeapi_find(const fakeapi_t *f, const char *method, const char *path,
                                  bool watch, int k)
{
    for (int i = 0; i < f->n; i++)
        if (matches(f->log[i], method, path, watch) && k-- == 0)
            return f->log[i];
    return NULL;
}

int fakeapi_closed(const fakeapi_t *f)
{
    return f->closed;
}

int fakeapi_accepted(const fakeapi_t *f)
{
    return f->accepted;
}

void fakeapi_connect(const fakeapi_t *f, struct ev_loop *loop, kube_config *cfg,
                     kube_http *http, kube_client *client)
{
    char yaml[512];
    kube_error e;
    kube_client_opts o = {.max_retries = -1};

    snprintf(yaml, sizeof(yaml),
             "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
             "clusters:\n- name: fake\n  cluster:\n    server: http://127.0.0.1:%d/\n"
             "contexts:\n- name: fake\n  context:\n    cluster: fake\n",
             fakeapi_port(f));
    if (kube_config_load_yaml(cfg, yaml, strlen(yaml), NULL, NULL, &e) != 0 ||
        kube_http_init(http, loop, &e) != 0 || kube_client_init(client, http, cfg, &o, &e) != 0) {
        fprintf(stderr, "fakeapi: cannot connect a client: %s\n", e.message);
        abort();
    }
}

void fakeapi_stop(fakeapi_t *f)
{
    while (!hcp_list_empty(&f->conns))
        conn_close(hcp_list_entry(f->conns.next, fakeapi_conn_t, link));
    ev_io_stop(f->loop, &f->accept_io);
    close(f->lfd);
    for (int i = 0; i < f->n; i++)
        free(f->log[i]);
    free(f->log);
    free(f);
}
