/*
 * kube/watch.h - list + watch of one collection into a kube_cache (an
 * "informer").
 *
 * The watch lists the collection page by page (limit/continue), feeds the
 * pages to the cache as a relist (so after the first sync every difference
 * becomes an add, update or delete callback), then watches from the list's
 * resourceVersion with bookmarks and a jittered timeoutSeconds. It keeps the
 * newest resourceVersion seen (events and bookmarks) and resumes from it when
 * a stream ends or breaks. 410 Gone, as an HTTP status or as an ERROR event,
 * starts a relist. Other failures retry after exponential backoff with
 * jitter. A watchdog restarts a stream that has been silent (no bytes at all)
 * for longer than opts.silence seconds. A stream the server ends cleanly
 * within a second without sending a byte also counts as a failure, so an
 * API server or proxy that closes every watch at once is retried after
 * backoff rather than in a tight loop.
 *
 * Caller-allocated; the client, cache and loop must outlive it.
 */
#ifndef KUBE_WATCH_H
#define KUBE_WATCH_H

#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/lines.h"
#include "kube/ratelimit.h"

typedef struct kube_watch kube_watch;

typedef struct kube_watch_opts {
    const char *path;           /* collection path, e.g. "/api/v1/namespaces/ns/configmaps" */
    const char *label_selector; /* or NULL */
    const char *field_selector; /* or NULL */
    int page_size;              /* list limit per page; default 500 */
    int timeout_min;            /* timeoutSeconds is uniform in [min, 2*min]; default 300 */
    double silence;             /* watchdog, seconds without bytes; default 2*min + 30 */
    double backoff_initial;     /* seconds; default 0.5 */
    double backoff_max;         /* seconds; default 30 */
    /*
     * Resume a watch from this resourceVersion without listing first, when
     * the cache already holds a synced copy (e.g. a watch restarted by its
     * owner). NULL: list first.
     */
    const char *resume_rv;
    /*
     * Serve the first list from the apiserver's watch cache
     * (resourceVersion=0, one response, no pagination) as client-go's
     * reflector does: several times faster for large collections, possibly
     * slightly stale, which the watch that follows corrects. Relists after
     * 410 Gone always use the consistent paginated list.
     */
    bool first_list_from_cache;
    /* Optional: the first complete list has been applied (cache->synced). */
    void (*on_synced)(kube_watch *w, void *ud);
    /* Optional: something failed and will be retried; err says what. */
    void (*on_error)(kube_watch *w, const kube_error *err, void *ud);
    void *ud;
} kube_watch_opts;

typedef enum kube_watch_state {
    KUBE_WATCH_STOPPED,
    KUBE_WATCH_LISTING,
    KUBE_WATCH_WATCHING,
    KUBE_WATCH_BACKOFF
} kube_watch_state;

typedef struct kube_watch_stats {
    uint64_t lists;           /* list requests (pages) made */
    uint64_t relists;         /* complete relists after the first (410, ...) */
    uint64_t watches;         /* watch requests started */
    uint64_t restarts;        /* watches restarted after an error or the watchdog */
    uint64_t watchdog_fired;  /* streams the watchdog killed */
    uint64_t gone;            /* 410 Gone seen */
    uint64_t events;          /* ADDED/MODIFIED/DELETED events received */
    uint64_t echoes;          /* of which ADDED/MODIFIED at a version the cache
                                 held already (the answer of our own write):
                                 not parsed (kube_watch_event_peek()) */
    uint64_t bookmarks;       /* BOOKMARK events received */
    uint64_t errors;          /* failures reported through on_error */
} kube_watch_stats;

struct kube_watch {
    kube_client *c;            /* borrowed */
    kube_cache *cache;         /* borrowed */
    kube_watch_opts opts;      /* copy; strings below are owned copies */
    char *path, *query_sel;    /* owned: path and encoded selector query part */
    kube_watch_state state;
    char rv[64];               /* newest resourceVersion seen ("" before the first list) */
    char *cont;                /* continue token of the list in progress (owned) */
    kube_request *req;         /* list page or watch stream in flight */
    kube_lines lines;          /* watch stream splitter */
    ev_timer retry;            /* backoff wait */
    ev_timer watchdog;         /* silence check while watching */
    double last_bytes;         /* ev_now() when the stream last delivered bytes */
    double stream_started;     /* ev_now() when the current watch request was made */
    bool stream_data;          /* the current watch has delivered bytes */
    kube_backoff backoff;
    uint64_t rng;              /* jitter source */
    bool relist_pending;       /* the next list is a relist (counts in stats.relists) */
    kube_error last_error;     /* most recent failure */
    kube_watch_stats stats;
};

/*
 * Starts listing and watching. opts->path is required. Returns 0, or
 * negative with err filled (nothing started).
 */
int kube_watch_start(kube_watch *w, kube_client *c, kube_cache *cache,
                     const kube_watch_opts *opts, kube_error *err);

/*
 * Stops everything and frees the watch's memory; the cache keeps its
 * contents. Must not be called from this watch's own callbacks (on_synced,
 * on_error, or cache callbacks it triggers), because the caller may free w
 * right after: stop it from a timer or another watcher instead.
 */
void kube_watch_stop(kube_watch *w);

/*
 * Forces the watch to drop its stream and resume from its resourceVersion
 * (as the watchdog would). For tests and operator-triggered resyncs.
 */
void kube_watch_restart(kube_watch *w);

/*
 * Sets the resourceVersion the next watch resumes from (for tests that need
 * to resume from an old, compacted version). Takes effect on the next
 * restart.
 */
void kube_watch_set_rv(kube_watch *w, const char *rv);

#endif
