/* send.c: POSTing queued notifications on the loop (send.h). */
#include "notify/send.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "log/log.h"

/* One POST in flight. */
typedef struct notify_call {
    hcp_link_t link;          /* on the sender's list */
    notify_sender_t *s;
    kube_transfer *t;
    size_t endpoint;
    char id[40];
} notify_call_t;

/* A notification posted with its step, waiting for every endpoint. */
typedef struct notify_pending {
    char id[40];
    char *kind, *ns, *name; /* one allocation (kind's) */
    notify_due_t d;
} notify_pending_t;

static void pump(notify_sender_t *s);

static int pending_find(const notify_sender_t *s, const char *id)
{
    for (size_t i = 0; i < s->n_pending; i++)
        if (strcmp(s->pending[i].id, id) == 0)
            return (int)i;
    return -1;
}

static void pending_remove(notify_sender_t *s, size_t i)
{
    free(s->pending[i].kind);
    s->pending[i] = s->pending[--s->n_pending];
}

/* Pending notifications none of whose deliveries is queued any more
 * (dropped from a full queue): forgotten, never told delivered. */
static void pending_prune(notify_sender_t *s)
{
    for (size_t i = s->n_pending; i-- > 0;)
        if (!notify_queue_has(&s->q, s->pending[i].id))
            pending_remove(s, i);
}

static void pending_add(notify_sender_t *s, const char *id, const notify_event_t *ev,
                        const notify_due_t *d)
{
    size_t lk = strlen(ev->kind) + 1, ln = strlen(ev->ns) + 1, lm = strlen(ev->name) + 1;
    char *mem;
    if (pending_find(s, id) >= 0)
        return;
    if (s->n_pending == s->cap_pending) {
        size_t cap = s->cap_pending ? s->cap_pending * 2 : 16;
        notify_pending_t *p = realloc(s->pending, cap * sizeof(*p));
        if (!p)
            return; /* not told delivered: notified again after a restart */
        s->pending = p;
        s->cap_pending = cap;
    }
    if (!(mem = malloc(lk + ln + lm)))
        return;
    notify_pending_t *p = &s->pending[s->n_pending++];
    snprintf(p->id, sizeof(p->id), "%s", id);
    p->kind = mem;
    p->ns = mem + lk;
    p->name = mem + lk + ln;
    memcpy(p->kind, ev->kind, lk);
    memcpy(p->ns, ev->ns, ln);
    memcpy(p->name, ev->name, lm);
    p->d = *d;
}

static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    pump(w->data);
}

int notify_sender_init(notify_sender_t *s, struct ev_loop *loop, kube_http *http,
                       const notify_config_t *cfg)
{
    memset(s, 0, sizeof(*s));
    hcp_list_init(&s->calls);
    s->loop = loop;
    s->http = http;
    s->cfg = *cfg;
    ev_timer_init(&s->timer, on_timer, 0., 0.);
    s->timer.data = s;
    return notify_queue_init(&s->q, cfg->queue_size ? cfg->queue_size : NOTIFY_DEFAULT_QUEUE);
}

void notify_sender_free(notify_sender_t *s)
{
    hcp_link_t *n;

    ev_timer_stop(s->loop, &s->timer);
    while ((n = hcp_list_pop_front(&s->calls)) != NULL) {
        notify_call_t *c = hcp_list_entry(n, notify_call_t, link);
        kube_http_cancel(s->http, c->t);
        free(c);
    }
    while (s->n_pending)
        pending_remove(s, s->n_pending - 1);
    free(s->pending);
    s->pending = NULL;
    s->cap_pending = 0;
    notify_queue_free(&s->q);
}

void notify_sender_callbacks(notify_sender_t *s, notify_delivered_fn delivered,
                             notify_failing_fn failing, void *ud)
{
    s->delivered = delivered;
    s->failing = failing;
    s->cb_ud = ud;
}

void notify_sender_lead(notify_sender_t *s, bool leading)
{
    if (!s)
        return;
    s->leading = leading;
    if (leading)
        pump(s);
    else
        ev_timer_stop(s->loop, &s->timer);
}

void notify_read_token(const char *file, const char *label, const char *name, char *buf,
                       size_t len)
{
    FILE *f;
    size_t n;

    buf[0] = '\0';
    if (!file[0])
        return;
    if ((f = fopen(file, "r")) == NULL) {
        log_kv(LOG_WARN, "cannot read a token file", label, name, "file", file, NULL);
        return;
    }
    n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
}

static void on_done(kube_transfer *t, const kube_transfer_result *r, void *ud)
{
    notify_call_t *c = ud;
    notify_sender_t *s = c->s;
    const notify_endpoint_t *e = &s->cfg.endpoints[c->endpoint];
    bool ok = r->code == 0 && r->http_status >= 200 && r->http_status < 300;
    char status[16], fails[16];

    (void)t;
    hcp_list_remove(&c->link);
    s->inflight--;
    if (ok) {
        s->counts[c->endpoint].sent++;
        log_kv(2, "notification delivered", "endpoint", e->name, "id", c->id, NULL);
    } else {
        s->counts[c->endpoint].failed++;
        snprintf(status, sizeof(status), "%ld", r->http_status);
        log_kv(2, "notification not delivered; it is tried again", "endpoint", e->name, "id",
               c->id, "status", status, "error", r->errmsg ? r->errmsg : "", NULL);
    }
    int pi = pending_find(s, c->id);
    if (notify_queue_done(&s->q, c->endpoint, c->id, ok, ev_now(s->loop))) {
        char why[160];
        snprintf(fails, sizeof(fails), "%d", NOTIFY_FAILING_AFTER);
        snprintf(status, sizeof(status), "%ld", r->http_status);
        log_kv(LOG_WARN, "a notification endpoint keeps failing; its notifications wait and are "
               "tried again", "endpoint", e->name, "url", e->url, "failures", fails,
               "status", status, "error", r->errmsg ? r->errmsg : "", NULL);
        if (r->http_status)
            snprintf(why, sizeof(why), "HTTP status %ld", r->http_status);
        else
            snprintf(why, sizeof(why), "%s", r->errmsg ? r->errmsg : "no answer");
        if (s->failing && pi >= 0)
            s->failing(s->pending[pi].kind, s->pending[pi].ns, s->pending[pi].name, e->name,
                       why, s->cb_ud);
    }
    if (ok && pi >= 0 && !notify_queue_has(&s->q, c->id)) {
        if (s->delivered)
            s->delivered(s->pending[pi].kind, s->pending[pi].ns, s->pending[pi].name,
                         &s->pending[pi].d, s->cb_ud);
        pending_remove(s, (size_t)pi);
    }
    free(c);
    pump(s);
}

int notify_post_setup(const char *url, const char *content_type, const char *token_file,
                      const char *label, const char *name, const char *body, long timeout,
                      CURL **easy, struct curl_slist **headers)
{
    struct curl_slist *h = NULL, *h2;
    char line[600], token[512];

    *easy = curl_easy_init();
    *headers = NULL;
    snprintf(line, sizeof(line), "Content-Type: %s", content_type);
    if (!*easy || (h = curl_slist_append(NULL, line)) == NULL)
        goto fail;
    notify_read_token(token_file, label, name, token, sizeof(token));
    if (token[0]) {
        snprintf(line, sizeof(line), "Authorization: Bearer %s", token);
        h2 = curl_slist_append(h, line);
        memset(line, 0, sizeof(line));
        memset(token, 0, sizeof(token));
        if (!h2)
            goto fail;
        h = h2;
    }
    curl_easy_setopt(*easy, CURLOPT_URL, url);
    curl_easy_setopt(*easy, CURLOPT_COPYPOSTFIELDS, body);
    curl_easy_setopt(*easy, CURLOPT_TIMEOUT, timeout);
    curl_easy_setopt(*easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(*easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(*easy, CURLOPT_USERAGENT, "hcp-controller");
    *headers = h;
    return 0;
fail:
    curl_slist_free_all(h);
    if (*easy)
        curl_easy_cleanup(*easy);
    *easy = NULL;
    return -1;
}

/* Starts the POST of item it. Returns 0, or -1 when it could not start
 * (the item is answered as failed). */
static int start(notify_sender_t *s, const notify_item_t *it)
{
    const notify_endpoint_t *e = &s->cfg.endpoints[it->endpoint];
    struct curl_slist *h = NULL;
    notify_call_t *c = calloc(1, sizeof(*c));
    CURL *easy = NULL;
    kube_error ke;

    if (!c || notify_post_setup(e->url, it->content_type, e->token_file, "endpoint", e->name,
                                it->body, NOTIFY_SEND_TIMEOUT, &easy, &h) != 0)
        goto fail;
    c->s = s;
    c->endpoint = it->endpoint;
    snprintf(c->id, sizeof(c->id), "%s", it->id);
    c->t = kube_http_start(s->http, easy, h, false, NULL, on_done, c, &ke);
    if (!c->t) /* easy and h are freed with it */
        goto fail;
    hcp_list_push_front(&s->calls, &c->link);
    s->inflight++;
    return 0;
fail:
    free(c);
    s->counts[it->endpoint].failed++;
    log_kv(LOG_WARN, "cannot start a notification's delivery; it is tried again", "endpoint",
           e->name, NULL);
    return -1;
}

/* Starts every delivery due, up to NOTIFY_MAX_INFLIGHT, and arms the timer
 * for the next one. */
static void pump(notify_sender_t *s)
{
    notify_item_t *it;
    double wait = -1;

    ev_timer_stop(s->loop, &s->timer);
    if (!s->leading)
        return;
    while (s->inflight < NOTIFY_MAX_INFLIGHT &&
           (it = notify_queue_next(&s->q, ev_now(s->loop), &wait)) != NULL) {
        char id[40];
        size_t ep = it->endpoint;
        snprintf(id, sizeof(id), "%s", it->id);
        if (start(s, it) != 0)
            notify_queue_done(&s->q, ep, id, false, ev_now(s->loop));
    }
    if (s->inflight < NOTIFY_MAX_INFLIGHT && wait >= 0) {
        ev_timer_set(&s->timer, wait > 0 ? wait : 0.001, 0.);
        ev_timer_start(s->loop, &s->timer);
    }
}

void notify_sender_post(notify_sender_t *s, const notify_event_t *ev)
{
    notify_sender_post_due(s, ev, NULL);
}

void notify_sender_post_due(notify_sender_t *s, const notify_event_t *ev, const notify_due_t *d)
{
    char id[40];

    if (!s || !s->leading || s->cfg.n_endpoints == 0)
        return;
    notify_event_id(ev, id, sizeof(id));
    if (d && ev->kind && ev->ns && ev->name)
        pending_add(s, id, ev, d);
    for (size_t i = 0; i < s->cfg.n_endpoints; i++) {
        char *body = NULL;
        const char *ct = NULL;
        uint64_t before = s->q.dropped;
        if (!notify_endpoint_takes(&s->cfg.endpoints[i], (int)ev->step))
            continue;
        if (notify_payload(ev, s->cfg.endpoints[i].format, &body, &ct) != 0) {
            s->counts[i].dropped++;
            continue;
        }
        notify_queue_push(&s->q, i, id, body, ct, ev_now(s->loop));
        if (s->q.dropped != before) {
            s->counts[i].dropped += s->q.dropped - before;
            log_kv(LOG_WARN, "the notification queue is full; the oldest waiting is dropped",
                   "endpoint", s->cfg.endpoints[i].name, NULL);
        }
    }
    pending_prune(s);
    pump(s);
}
