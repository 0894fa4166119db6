/* write.c: writes in flight, their outcomes, staleness, and Events. */
#include "controller/write.h"

#include <stdio.h>
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/error.h"
#include "base/htab.h"
#include "log/log.h"

#define TRIM_EVERY 500 /* writes answered between returns of free memory */
#define PATH_LEN 768

typedef struct inflight {
    ctl_writer_t *wr;
    ctl_wtarget_t *t;
    kube_cache *cache;   /* where the answer is applied, or NULL */
    const char *what;    /* for logs (static) */
    bool deleting;       /* a delete: its answer leaves the cache */
    bool first;          /* counted in wr->first_inflight */
    uint64_t *stale;     /* the target's stale_own or stale_capi, or NULL */
    uint64_t base;       /* hash of the resourceVersion the write replaces */
    bool absent_ok;      /* a 404 is CTL_WRITE_ABSENT */
    ctl_write_done_fn done; /* the caller's, for this write's answer */
    void *done_ud;
} inflight_t;

/* The hash of a resourceVersion (compared for equality only: their order
 * is the server's business). 0 for NULL. */
static uint64_t rv_hash(const char *rv)
{
    return rv ? hcp_hash_str(HCP_HASH_SEED, rv) : 0;
}

bool ctl_write_stale(const uint64_t stale[2], const char *rv)
{
    uint64_t h = rv_hash(rv);
    return h && (stale[0] == h || stale[1] == h);
}

/* Returns free heap pages to the system (glibc; elsewhere nothing). */
static void return_free_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}

/* Whether the answer obj of write w may go into its cache: only while the
 * cache still holds the version the write replaced (or nothing, or the
 * write knew no version). Otherwise the watch has delivered the answer
 * already, or another writer's version on top of it (HyperShift deleting a
 * pause right after we set it): the answer is older than what is cached,
 * and no later event would correct a cache put back to it. */
static bool answer_is_next(const inflight_t *w, const json_t *obj)
{
    const json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    const kube_obj *have;

    if (w->deleting || w->base == 0 || name == NULL)
        return true;
    have = kube_cache_get(w->cache, ns ? ns : "", name);
    return have == NULL || rv_hash(have->rv) == w->base;
}

/* Whether the answer is the very version the write was made on. */
static bool answer_is_base(const inflight_t *w, const json_t *obj)
{
    const char *rv = json_string_value(
        json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
    return rv != NULL && rv_hash(rv) == w->base;
}

static void write_done(kube_client *client, const kube_error *err, json_t *obj, void *ud)
{
    (void)client;
    inflight_t *w = ud;
    ctl_writer_t *wr = w->wr;
    ctl_wtarget_t *t = w->t;
    ctl_write_outcome_t outcome = CTL_WRITE_OK;
    const json_t *answer = err ? NULL : obj;
    t->inflight--;
    wr->inflight--;
    wr->first_inflight -= w->first;
    if (err && err->http_status == 404 && w->deleting)
        err = NULL; /* already gone: what the delete wanted (no answer) */
    if (err && err->http_status == 404 && w->absent_ok) {
        outcome = CTL_WRITE_ABSENT; /* the caller says what it means, once */
    } else if (err && err->http_status == 409) {
        wr->stats->conflicts++;
        t->redo = true; /* the watch brings the newer object */
        outcome = CTL_WRITE_CONFLICT;
    } else if (err) {
        wr->stats->write_errors++;
        log_kv(LOG_ERROR, "write failed", "what", w->what, "namespace", t->ns, "name", t->name,
               "error", err->message, NULL);
        outcome = CTL_WRITE_FAILED;
    } else {
        wr->stats->last_write_at = ev_now(wr->loop);
        /* A held release answered: the object is decided again a little
         * later (ctl_write_settled). Every replica answers admission from
         * its own clock, and one still a moment before the window holds the
         * release again; no watch event follows an answer already cached. */
        if (w->first)
            t->recheck = true;
        /* The version written on is replaced, unless the answer is that
         * same version: a write that changed nothing (a webhook held the
         * release back, to the object as it was) leaves it current, and no
         * watch event will bring a newer one. */
        if (w->stale && w->base && w->stale[0] != w->base && !answer_is_base(w, obj)) {
            w->stale[1] = w->stale[0];
            w->stale[0] = w->base;
        }
        /* The answer is the object as written: cache it now, so that a
         * reconcile before the watch event sees it (the event itself is then
         * a duplicate the cache drops). */
        if (obj && w->cache && answer_is_next(w, obj)) {
            kube_error e;
            kube_cache_apply(w->cache, w->deleting ? KUBE_EVENT_DELETED : KUBE_EVENT_MODIFIED,
                             obj, &e);
        }
    }
    if (w->done)
        w->done(outcome, answer, w->done_ud);
    free(w);
    if (wr->settled)
        wr->settled(t, outcome, wr->ud);
    /* Every answer and watch event of a burst of writes is a parsed document
     * freed again between the cached objects that replace each other: give
     * the free pages back now and then, or the burst's peak stays. */
    if (++wr->answered >= TRIM_EVERY) {
        wr->answered = 0;
        return_free_memory();
    }
}

int ctl_write(ctl_writer_t *wr, ctl_wtarget_t *t, const ctl_write_t *w)
{
    inflight_t *f = calloc(1, sizeof(*f));
    kube_error err;
    int rc;
    if (!f) {
        wr->stats->write_errors++;
        return HCP_ENOMEM;
    }
    *f = (inflight_t){wr, t, w->cache, w->what, w->verb == CTL_WRITE_DELETE, w->first,
                      w->stale, rv_hash(w->base_rv), w->verb == CTL_WRITE_PATCH_IF_THERE,
                      w->done, w->done_ud};
    switch (w->verb) {
    case CTL_WRITE_PATCH:
    case CTL_WRITE_PATCH_IF_THERE:
        rc = kube_merge_patch(wr->client, w->path, w->doc, write_done, f, &err);
        break;
    case CTL_WRITE_STATUS:
        rc = kube_merge_patch_status(wr->client, w->path, w->doc, write_done, f, &err);
        break;
    case CTL_WRITE_UPDATE:
        rc = kube_update(wr->client, w->path, w->doc, write_done, f, &err);
        break;
    case CTL_WRITE_DELETE:
        rc = w->doc ? kube_delete_with(wr->client, w->path, w->doc, write_done, f, &err)
                    : kube_delete(wr->client, w->path, write_done, f, &err);
        break;
    default:
        rc = kube_create(wr->client, w->path, w->doc, write_done, f, &err);
        break;
    }
    if (rc) {
        wr->stats->write_errors++;
        log_kv(LOG_ERROR, "write not sent", "what", w->what, "path", w->path, "error",
               err.message, NULL);
        free(f);
        return HCP_ETRANSPORT;
    }
    wr->stats->writes++;
    t->inflight++;
    wr->inflight++;
    wr->first_inflight += w->first;
    /* Every write by what it is (-v 2): what hcp_controller_writes_total
     * counted, told apart. */
    log_kv(2, "write sent", "what", w->what, "path", w->path, NULL);
    return 0;
}

void ctl_write_init(ctl_writer_t *wr, struct ev_loop *loop, kube_client *client,
                    ctl_stats_t *stats, ctl_write_settled_fn settled, void *ud)
{
    *wr = (ctl_writer_t){.loop = loop, .client = client, .stats = stats, .settled = settled,
                         .ud = ud};
    ctl_queue_init(&wr->waiting);
}

bool ctl_write_room(const ctl_writer_t *wr)
{
    return wr->inflight < CTL_WRITE_MAX_INFLIGHT;
}

bool ctl_write_must_wait(const ctl_writer_t *wr, bool first)
{
    return wr->first_inflight > 0 && !first;
}

void ctl_write_wait(ctl_writer_t *wr, ctl_qitem_t *it)
{
    ctl_queue_push(&wr->waiting, it);
}

ctl_qitem_t *ctl_write_resume(ctl_writer_t *wr)
{
    return wr->first_inflight > 0 ? NULL : ctl_queue_pop(&wr->waiting);
}

int ctl_write_event(ctl_writer_t *wr, ctl_wtarget_t *t, const ctl_event_t *ev)
{
    char path[PATH_LEN], ts[32], gen[300];
    if (kube_path(path, sizeof(path), NULL, "v1", "events", t->ns, NULL, NULL))
        return HCP_EINVAL;
    sched_format_utc((sched_time_t)ev_now(wr->loop), ts, sizeof(ts));
    snprintf(gen, sizeof(gen), "%s.", t->name);
    json_t *doc = json_pack(
        "{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, s:{s:s},"
        " s:s, s:s, s:i, s:s}",
        "apiVersion", "v1", "kind", "Event", "metadata", "generateName", gen, "namespace", t->ns,
        "involvedObject", "apiVersion", ev->api_version, "kind", ev->kind, "name", t->name,
        "namespace", t->ns, "uid", ev->uid ? ev->uid : "", "type", ev->type, "reason",
        ev->reason, "message", ev->message, "source", "component", "hcp-controller",
        "firstTimestamp", ts, "lastTimestamp", ts, "count", 1, "reportingComponent",
        "hcp-controller");
    if (!doc)
        return HCP_ENOMEM;
    wr->stats->events++;
    ctl_write_t w = {.verb = CTL_WRITE_CREATE, .path = path, .doc = doc, .what = "event"};
    int rc = ctl_write(wr, t, &w);
    json_decref(doc);
    log_kv(LOG_INFO, ev->reason, "kind", ev->kind, "namespace", t->ns, "name", t->name,
           "message", ev->message, NULL);
    return rc;
}
