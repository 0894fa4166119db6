/* testutil_fakeapi.c: see testutil_fakeapi.h. */
#include "controller/testutil_fakeapi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct conn {
    ev_io io;            /* first member: the watcher is the connection */
    fakeapi_t *f;
    int fd;
    char buf[16384];     /* bytes not yet parsed */
    size_t len;
    struct conn *next;
} conn_t;

struct fakeapi {
    ev_io accept_io;     /* first member */
    struct ev_loop *loop;
    int lfd, port;
    conn_t *conns;
    fakeapi_handler_fn handler;
    void *ud;
    fakeapi_req_t log[FAKEAPI_MAX_LOG];
    int n;
};

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "fakeapi: %s failed\n", what);
        abort();
    }
}

static void send_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        p += n;
        len -= (size_t)n;
    }
}

static void conn_close(conn_t *c)
{
    for (conn_t **p = &c->f->conns; *p; p = &(*p)->next)
        if (*p == c) {
            *p = c->next;
            break;
        }
    ev_io_stop(c->f->loop, &c->io);
    close(c->fd);
    free(c);
}

/* Bytes of one complete request at the start of c->buf, or 0. */
static size_t parse(conn_t *c, fakeapi_req_t *r)
{
    const char *end = memmem(c->buf, c->len, "\r\n\r\n", 4);
    size_t hlen, blen = 0;
    if (!end)
        return 0;
    hlen = (size_t)(end - c->buf) + 4;
    for (const char *l = c->buf; l && l < end; l = memchr(l, '\n', (size_t)(end - l))) {
        if (*l == '\n')
            l++;
        if (strncasecmp(l, "Content-Length:", 15) == 0) {
            char *e;
            unsigned long v = strtoul(l + 15, &e, 10);
            must(v < sizeof(c->buf), "request size");
            blen = v;
        }
    }
    if (c->len < hlen + blen)
        return 0;
    memset(r, 0, sizeof(*r));
    const char *sp1 = memchr(c->buf, ' ', hlen), *sp2 = sp1 ? memchr(sp1 + 1, ' ', hlen) : NULL;
    must(sp1 && sp2, "request line");
    snprintf(r->method, sizeof(r->method), "%.*s", (int)(sp1 - c->buf), c->buf);
    snprintf(r->path, sizeof(r->path), "%.*s", (int)(sp2 - sp1 - 1), sp1 + 1);
    snprintf(r->body, sizeof(r->body), "%.*s", (int)blen, c->buf + hlen);
    return hlen + blen;
}

static void conn_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    conn_t *c = (conn_t *)w;
    fakeapi_t *f = c->f;
    fakeapi_req_t r;
    size_t used;
    (void)loop;
    (void)revents;
    ssize_t n = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    while ((used = parse(c, &r)) > 0) {
        int status = 200;
        char head[256];
        memmove(c->buf, c->buf + used, c->len - used);
        c->len -= used;
        if (f->n < FAKEAPI_MAX_LOG)
            f->log[f->n] = r;
        f->n++;
        const char *body = f->handler(&r, &status, f->ud);
        int hl = snprintf(head, sizeof(head),
                          "HTTP/1.1 %d Status\r\nContent-Type: application/json\r\n"
                          "Content-Length: %zu\r\n\r\n",
                          status, strlen(body));
        send_all(c->fd, head, (size_t)hl);
        send_all(c->fd, body, strlen(body));
    }
}

static void accept_cb(struct ev_loop *loop, ev_io *w, int revents)
{
    fakeapi_t *f = (fakeapi_t *)w;
    (void)revents;
    int fd = accept(f->lfd, NULL, NULL);
    if (fd < 0)
        return;
    conn_t *c = calloc(1, sizeof(*c));
    must(c != NULL, "calloc");
    c->f = f;
    c->fd = fd;
    c->next = f->conns;
    f->conns = c;
    ev_io_init(&c->io, conn_cb, fd, EV_READ);
    ev_io_start(loop, &c->io);
}

fakeapi_t *fakeapi_start(struct ev_loop *loop, fakeapi_handler_fn handler, void *ud)
{
    struct sockaddr_in a;
    socklen_t alen = sizeof(a);
    fakeapi_t *f = calloc(1, sizeof(*f));
    must(f != NULL, "calloc");
    f->loop = loop;
    f->handler = handler;
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
    return i >= 0 && i < f->n && i < FAKEAPI_MAX_LOG ? &f->log[i] : NULL;
}

void fakeapi_stop(fakeapi_t *f)
{
    while (f->conns)
        conn_close(f->conns);
    ev_io_stop(f->loop, &f->accept_io);
    close(f->lfd);
    free(f);
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
