/*
 * kube/watch.c - list + watch state machine feeding a kube_cache.
 */
#include "kube/watch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/event.h"

/* Seconds; a watch that ends cleanly sooner without any data counts as a failure. */
#define SHORT_WATCH 1.0

static void start_list(kube_watch *w);
static void start_watch(kube_watch *w);
static int request(kube_watch *w, bool watch, kube_error *err);

static double rnd01(kube_watch *w)
{
    /* xorshift64*: cheap, and independent of the process-wide rand() state. */
    w->rng ^= w->rng >> 12;
    w->rng ^= w->rng << 25;
    w->rng ^= w->rng >> 27;
    return (double)((w->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

static void set_rv(kube_watch *w, const char *rv)
{
    if (rv != NULL && rv[0] != '\0' && strlen(rv) < sizeof(w->rv))
        snprintf(w->rv, sizeof(w->rv), "%s", rv);
}

static void report(kube_watch *w, const kube_error *err)
{
    w->stats.errors++;
    if (err != &w->last_error)
        w->last_error = *err;
    if (w->opts.on_error)
        w->opts.on_error(w, err, w->opts.ud);
}

/* Waits (backoff with jitter), then lists or watches again. */
static void retry_later(kube_watch *w, bool relist)
{
    double d = kube_backoff_next(&w->backoff, rnd01(w));

    if (relist)
        w->relist_pending = true;
    w->state = KUBE_WATCH_BACKOFF;
    ev_timer_stop(w->c->http->loop, &w->watchdog);
    ev_timer_set(&w->retry, d, 0.);
    ev_timer_start(w->c->http->loop, &w->retry);
}

static void retry_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    kube_watch *w = (kube_watch *)((char *)t - offsetof(kube_watch, retry));

    (void)loop;
    (void)revents;
    if (w->relist_pending || !w->cache->synced || w->rv[0] == '\0')
        start_list(w);
    else
        start_watch(w);
}

/* Drops the current stream (if any) and resumes from w->rv; relist on request. */
static void resume(kube_watch *w, bool relist)
{
    kube_request_cancel(w->req);
    w->req = NULL;
    ev_timer_stop(w->c->http->loop, &w->watchdog);
    if (relist) {
        w->relist_pending = true;
        start_list(w);
    } else {
        start_watch(w);
    }
}

/* ---- list ------------------------------------------------------------------ */

static void list_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    kube_watch *w = ud;
    json_t *items, *item, *md;
    kube_error e;
    size_t i;
    const char *cont;

    (void)c;
    w->req = NULL;
    if (err != NULL) {
        bool expired = err->http_status == 410;
        report(w, err);
        kube_cache_relist_abort(w->cache);
        free(w->cont);
        w->cont = NULL;
        if (expired) /* the continue token expired: start the list over now */
            start_list(w);
        else
            retry_later(w, true);
        return;
    }
    items = json_object_get(obj, "items");
    md = json_object_get(obj, "metadata");
    if (!json_is_array(items) || !json_is_object(md)) {
        kube_error_set(&e, HCP_EPARSE, 200, NULL, "list of %s has no items or metadata", w->path);
        report(w, &e);
        kube_cache_relist_abort(w->cache);
        retry_later(w, true);
        return;
    }
    if (w->cont == NULL) /* first page: the snapshot's resourceVersion */
        set_rv(w, json_string_value(json_object_get(md, "resourceVersion")));
    json_array_foreach(items, i, item) {
        if (kube_cache_relist_item(w->cache, item, &e) < 0)
            report(w, &e); /* skip a bad object, keep the rest */
    }
    cont = json_string_value(json_object_get(md, "continue"));
    free(w->cont);
    w->cont = NULL;
    if (cont != NULL && cont[0] != '\0') {
        w->cont = strdup(cont);
        if (w->cont == NULL) {
            kube_error_set(&e, HCP_ENOMEM, 0, NULL, "out of memory");
            report(w, &e);
            kube_cache_relist_abort(w->cache);
            retry_later(w, true);
            return;
        }
        start_list(w);
        return;
    }
    {
        bool first = !w->cache->synced;
        kube_cache_relist_end(w->cache);
        w->relist_pending = false;
        kube_backoff_reset(&w->backoff);
        if (first && w->opts.on_synced)
            w->opts.on_synced(w, w->opts.ud);
    }
    if (w->state != KUBE_WATCH_STOPPED)
        start_watch(w);
}

/* Percent-encodes s for a query value. */
static int append_escaped(char *buf, size_t len, size_t *n, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p;

    for (p = (const unsigned char *)s; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.' || *p == '~';
        if (*n + (plain ? 1 : 3) >= len)
            return HCP_EINVAL;
        if (plain) {
            buf[(*n)++] = (char)*p;
        } else {
            buf[(*n)++] = '%';
            buf[(*n)++] = hex[*p >> 4];
            buf[(*n)++] = hex[*p & 15];
        }
    }
    buf[*n] = '\0';
    return 0;
}

static int build_query(kube_watch *w, char *q, size_t len, bool watch, kube_error *err)
{
    size_t n;
    int k;

    if (watch) {
        int timeout = w->opts.timeout_min + (int)(rnd01(w) * (w->opts.timeout_min + 1));
        k = snprintf(q, len, "watch=1&allowWatchBookmarks=true&timeoutSeconds=%d&resourceVersion=",
                     timeout);
        if (k < 0 || (size_t)k >= len)
            goto toolong;
        n = (size_t)k;
        if (append_escaped(q, len, &n, w->rv) < 0)
            goto toolong;
    } else if (w->opts.first_list_from_cache && !w->cache->synced && !w->relist_pending &&
               w->cont == NULL) {
        k = snprintf(q, len, "resourceVersion=0");
        if (k < 0 || (size_t)k >= len)
            goto toolong;
        n = (size_t)k;
    } else {
        k = snprintf(q, len, "limit=%d", w->opts.page_size);
        if (k < 0 || (size_t)k >= len)
            goto toolong;
        n = (size_t)k;
        if (w->cont) {
            if (n + 10 >= len)
                goto toolong;
            memcpy(q + n, "&continue=", 11);
            n += 10;
            if (append_escaped(q, len, &n, w->cont) < 0)
                goto toolong;
        }
    }
    if (w->query_sel) {
        k = snprintf(q + n, len - n, "%s", w->query_sel);
        if (k < 0 || (size_t)k >= len - n)
            goto toolong;
    }
    return 0;
toolong:
    return kube_error_set(err, HCP_EINVAL, 0, NULL, "query for %s too long", w->path);
}

static void start_list(kube_watch *w)
{
    kube_error e;

    w->state = KUBE_WATCH_LISTING;
    if (w->cont == NULL) {
        if (w->cache->synced && w->relist_pending)
            w->stats.relists++;
        kube_cache_relist_begin(w->cache);
    }
    if (request(w, false, &e) < 0)
        goto fail;
    return;
fail:
    report(w, &e);
    kube_cache_relist_abort(w->cache);
    free(w->cont);
    w->cont = NULL;
    retry_later(w, true);
}

/* ---- watch ----------------------------------------------------------------- */

/* Applies one event line. Returns 1 to keep going, 0 when the stream was replaced. */
static int handle_event(kube_watch *w, const char *line, size_t len)
{
    kube_watch_event ev;
    kube_error e;
    char why[256];
    int rc, keep = 1;

    /* The echo of a write whose answer is cached already: nothing to
     * parse (the controller's writes at a boundary would otherwise each
     * be parsed twice, the answer and this). */
    kube_watch_peek pk;
    if (kube_watch_event_peek(line, len, &pk) == 0 && pk.change != KUBE_EVENT_DELETED &&
        kube_cache_holds(w->cache, pk.ns, pk.name, pk.rv)) {
        w->stats.events++;
        w->stats.echoes++;
        set_rv(w, pk.rv);
        return 1;
    }
    rc = kube_watch_event_parse(line, len, &ev, why, sizeof(why));
    if (rc < 0) {
        kube_error_set(&e, HCP_EPARSE, 200, NULL, "watch %s: %s", w->path, why);
        report(w, &e);
        if (rc == HCP_EINVAL)
            return 1;
        w->stats.restarts++;
        resume(w, false);
        return 0;
    }
    switch (ev.type) {
    case KUBE_WATCH_BOOKMARK:
        w->stats.bookmarks++;
        set_rv(w, ev.rv);
        break;
    case KUBE_WATCH_ERROR:
        kube_error_set(&e, HCP_EHTTP, (int)ev.code, ev.reason, "watch %s: %s", w->path,
                       ev.message ? ev.message : "error event");
        report(w, &e);
        w->stats.restarts++;
        if (ev.code == 410) {
            w->stats.gone++;
            resume(w, true);
        } else {
            kube_request_cancel(w->req);
            w->req = NULL;
            retry_later(w, false);
        }
        keep = 0;
        break;
    case KUBE_WATCH_OBJECT:
        w->stats.events++;
        if (kube_cache_apply(w->cache, ev.change, ev.obj, &e) < 0)
            report(w, &e);
        set_rv(w, ev.rv);
        break;
    case KUBE_WATCH_UNKNOWN:
        break;
    }
    kube_watch_event_free(&ev);
    return keep;
}

static void watch_data(kube_client *c, const char *data, size_t len, void *ud)
{
    kube_watch *w = ud;
    kube_request *req = w->req;
    const char *line;
    size_t n;
    kube_error e;

    (void)c;
    w->last_bytes = ev_now(w->c->http->loop);
    w->stream_data = true;
    if (kube_lines_feed(&w->lines, data, len) < 0) {
        kube_error_set(&e, HCP_EPARSE, 200, NULL, "watch %s: event line too long", w->path);
        report(w, &e);
        resume(w, false);
        return;
    }
    while (w->req == req && kube_lines_next(&w->lines, &line, &n)) {
        if (!handle_event(w, line, n))
            break;
    }
}

static void watch_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    kube_watch *w = ud;
    kube_error e;

    (void)c;
    (void)obj;
    w->req = NULL;
    ev_timer_stop(w->c->http->loop, &w->watchdog);
    if (err == NULL && !w->stream_data &&
        ev_now(w->c->http->loop) - w->stream_started < SHORT_WATCH) {
        kube_error_set(&e, HCP_EPARSE, 200, NULL,
                       "watch %s: the server ended the stream at once without data", w->path);
        err = &e;
    }
    if (err == NULL) {
        /* The server ended the stream at timeoutSeconds: resume at once. */
        kube_backoff_reset(&w->backoff);
        start_watch(w);
        return;
    }
    report(w, err);
    w->stats.restarts++;
    if (err->http_status == 410) {
        w->stats.gone++;
        w->relist_pending = true;
        start_list(w);
        return;
    }
    retry_later(w, false);
}

static void watchdog_cb(struct ev_loop *loop, ev_timer *t, int revents)
{
    kube_watch *w = (kube_watch *)((char *)t - offsetof(kube_watch, watchdog));
    kube_error e;

    (void)revents;
    if (w->state != KUBE_WATCH_WATCHING)
        return;
    if (ev_now(loop) - w->last_bytes < w->opts.silence)
        return;
    kube_error_set(&e, HCP_ETRANSPORT, 0, NULL,
                   "watch %s: no data for %.0f s, restarting the stream", w->path,
                   w->opts.silence);
    w->stats.watchdog_fired++;
    w->stats.restarts++;
    report(w, &e);
    resume(w, false);
}

/* Sends the next list page or a watch request (w->req). Returns 0 or
 * negative with err filled. */
static int request(kube_watch *w, bool watch, kube_error *err)
{
    kube_call call;
    char q[4096];
    int rc;

    if ((rc = build_query(w, q, sizeof(q), watch, err)) < 0)
        return rc;
    memset(&call, 0, sizeof(call));
    call.verb = watch ? KUBE_VERB_WATCH : KUBE_VERB_LIST;
    call.path = w->path;
    call.query = q;
    call.on_data = watch ? watch_data : NULL;
    call.on_done = watch ? watch_done : list_done;
    call.ud = w;
    if (watch)
        w->stats.watches++;
    else
        w->stats.lists++;
    return kube_client_call(w->c, &call, &w->req, err);
}

static void start_watch(kube_watch *w)
{
    kube_error e;
    double check;

    w->state = KUBE_WATCH_WATCHING;
    kube_lines_reset(&w->lines);
    if (request(w, true, &e) < 0)
        goto fail;
    w->last_bytes = w->stream_started = ev_now(w->c->http->loop);
    w->stream_data = false;
    check = w->opts.silence / 4;
    if (check < 0.25)
        check = 0.25;
    ev_timer_stop(w->c->http->loop, &w->watchdog);
    ev_timer_set(&w->watchdog, check, check);
    ev_timer_start(w->c->http->loop, &w->watchdog);
    return;
fail:
    report(w, &e);
    retry_later(w, false);
}

/* ---- lifecycle -------------------------------------------------------------- */

int kube_watch_start(kube_watch *w, kube_client *c, kube_cache *cache,
                     const kube_watch_opts *opts, kube_error *err)
{
    char sel[2048];
    size_t n = 0;

    memset(w, 0, sizeof(*w));
    kube_error_clear(err);
    if (c == NULL || cache == NULL || opts == NULL || opts->path == NULL || opts->path[0] != '/')
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "watch needs a client, cache and path");
    w->c = c;
    w->cache = cache;
    w->opts = *opts;
    if (w->opts.page_size <= 0)
        w->opts.page_size = 500;
    if (w->opts.timeout_min <= 0)
        w->opts.timeout_min = 300;
    if (w->opts.silence <= 0)
        w->opts.silence = 2.0 * w->opts.timeout_min + 30;
    if (w->opts.backoff_initial <= 0)
        w->opts.backoff_initial = 0.5;
    if (w->opts.backoff_max <= 0)
        w->opts.backoff_max = 30;
    kube_backoff_init(&w->backoff, w->opts.backoff_initial, w->opts.backoff_max);
    w->rng = (uint64_t)(uintptr_t)w ^ (uint64_t)(ev_time() * 1e6) ^ 0x9E3779B97F4A7C15ull;
    if (w->rng == 0)
        w->rng = 1;
    w->path = strdup(opts->path);
    if (w->path == NULL)
        goto nomem;
    sel[0] = '\0';
    if (opts->label_selector && opts->label_selector[0]) {
        n = (size_t)snprintf(sel, sizeof(sel), "&labelSelector=");
        if (append_escaped(sel, sizeof(sel), &n, opts->label_selector) < 0)
            goto toolong;
    }
    if (opts->field_selector && opts->field_selector[0]) {
        int k = snprintf(sel + n, sizeof(sel) - n, "&fieldSelector=");
        if (k < 0 || (size_t)k >= sizeof(sel) - n)
            goto toolong;
        n += (size_t)k;
        if (append_escaped(sel, sizeof(sel), &n, opts->field_selector) < 0)
            goto toolong;
    }
    if (sel[0] && (w->query_sel = strdup(sel)) == NULL)
        goto nomem;
    w->opts.label_selector = w->opts.field_selector = NULL;
    w->opts.path = w->path;
    kube_lines_init(&w->lines, 0);
    ev_init(&w->retry, retry_cb);
    ev_init(&w->watchdog, watchdog_cb);
    w->opts.resume_rv = NULL;
    if (opts->resume_rv && opts->resume_rv[0] && cache->synced) {
        set_rv(w, opts->resume_rv);
        start_watch(w);
    } else {
        start_list(w);
    }
    return 0;
toolong:
    kube_error_set(err, HCP_EINVAL, 0, NULL, "selectors too long");
    goto fail;
nomem:
    kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
fail:
    free(w->path);
    free(w->query_sel);
    memset(w, 0, sizeof(*w));
    return err ? err->code : HCP_EINVAL;
}

void kube_watch_stop(kube_watch *w)
{
    if (w->c == NULL)
        return;
    w->state = KUBE_WATCH_STOPPED;
    kube_request_cancel(w->req);
    w->req = NULL;
    ev_timer_stop(w->c->http->loop, &w->retry);
    ev_timer_stop(w->c->http->loop, &w->watchdog);
    if (w->cache->relisting)
        kube_cache_relist_abort(w->cache);
    kube_lines_free(&w->lines);
    free(w->cont);
    free(w->path);
    free(w->query_sel);
    w->cont = w->path = w->query_sel = NULL;
    w->c = NULL;
}

void kube_watch_restart(kube_watch *w)
{
    if (w->c == NULL || w->state != KUBE_WATCH_WATCHING)
        return;
    w->stats.restarts++;
    resume(w, false);
}

void kube_watch_set_rv(kube_watch *w, const char *rv)
{
    set_rv(w, rv);
}
