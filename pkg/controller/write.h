/* write: the controller's writer (private to pkg/controller).
 *
 * Reconcilers say what an object should look like (the ordered writes of
 * decide_writes(), pkg/decide/writes.h); the writer carries them out and
 * owns their order: a held change let through is marked first and goes
 * before every other write, the work that would write meanwhile waits in
 * the writer's own lane (ctl_write_wait()) and comes back in the order it
 * waited once the last of them is answered (ctl_write_resume()), and the
 * writes in flight are bounded (ctl_write_room()). It owns the writes in
 * flight (per object and in total), counts them,
 * sorts their outcomes (done, refused with 409 Conflict, failed), caches the
 * object each answer returns, and remembers which resourceVersions our own
 * writes replaced, so a reconcile does not decide from a watch event older
 * than its own write (ctl_write_stale()); a write whose answer is the
 * version it was made on replaced none. Events are writes too.
 *
 * It runs on the caller's libev loop and client; nothing here decides.
 */
#ifndef HCP_CONTROLLER_WRITE_H
#define HCP_CONTROLLER_WRITE_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "controller/controller.h"
#include "controller/queue.h"
#include "kube/cache.h"
#include "kube/client.h"

/* What the writer keeps per object; embedded in the caller's record. */
typedef struct ctl_wtarget {
    const char *ns, *name;   /* borrowed from the record, for logs and Events */
    int inflight;            /* writes in flight for this object */
    bool redo;               /* decide again once settled (a write met a conflict; marks
                                waited for the writes in flight) */
    bool recheck;            /* a held release was answered: decide again a little later */
    uint64_t stale_own[2];   /* versions of the object our writes replaced, newest first */
    uint64_t stale_capi[2];  /* the same for its CAPI object */
} ctl_wtarget_t;

/* How a write ended, for the settle callback. */
typedef enum ctl_write_outcome {
    CTL_WRITE_OK,        /* acknowledged; the answer is in the cache */
    CTL_WRITE_CONFLICT,  /* 409: target->redo is set, the watch brings the newer object */
    CTL_WRITE_FAILED,    /* any other failure (already logged and counted) */
    CTL_WRITE_ABSENT,    /* 404 of a CTL_WRITE_PATCH_IF_THERE: neither logged nor
                            counted as an error */
} ctl_write_outcome_t;

/* Called once per answered write, after the writer's bookkeeping. The
 * callback may free the record that embeds t; the writer does not touch t
 * afterwards. */
typedef void (*ctl_write_settled_fn)(ctl_wtarget_t *t, ctl_write_outcome_t outcome, void *ud);

/* Called once when one write is answered, before the writer's settled
 * callback: its outcome and the object the server answered (NULL when none:
 * a failure, or a delete of an object already gone). Borrowed. */
typedef void (*ctl_write_done_fn)(ctl_write_outcome_t outcome, const json_t *answer, void *ud);

typedef struct ctl_writer {
    struct ev_loop *loop;    /* borrowed */
    kube_client *client;     /* borrowed */
    ctl_stats_t *stats;      /* borrowed: writes, errors, conflicts, events, last_write_at */
    ctl_write_settled_fn settled;
    void *ud;                /* for settled */
    int inflight;            /* writes in flight, every object */
    int first_inflight;      /* of them, writes marked first (held releases) */
    ctl_queue_t waiting;     /* work that waits for them (ctl_write_wait()), in order */
    unsigned answered;       /* answers since free memory was last returned */
} ctl_writer_t;

typedef enum ctl_write_verb {
    CTL_WRITE_PATCH,  /* merge patch */
    CTL_WRITE_PATCH_IF_THERE, /* merge patch; a 404 is an answer (CTL_WRITE_ABSENT) */
    CTL_WRITE_STATUS, /* merge patch of the status subresource */
    CTL_WRITE_CREATE, /* create */
    CTL_WRITE_UPDATE, /* replace (PUT), conditional on the doc's metadata.resourceVersion */
    CTL_WRITE_DELETE, /* delete, with doc as its DeleteOptions when not NULL; an object
                         already gone counts as done */
} ctl_write_verb_t;

/* One write. Everything is borrowed for the duration of ctl_write(). */
typedef struct ctl_write {
    ctl_write_verb_t verb;   /* merge patch, status merge patch, create, replace, delete */
    const char *path;        /* the object's (or the collection's) API path */
    json_t *doc;             /* the patch or the object to create */
    kube_cache *cache;       /* where the answer is applied, or NULL */
    const char *what;        /* for logs: "pause", "status", "event", ... */
    uint64_t *stale;         /* target->stale_own or stale_capi, or NULL */
    const char *base_rv;     /* the resourceVersion the write replaces, or NULL */
    bool first;              /* a held release: other writes wait until it is answered
                                (counted in ctl_writer_t.first_inflight) */
    ctl_write_done_fn done;  /* this write's answer, or NULL (not called when ctl_write()
                                fails: done_ud stays the caller's) */
    void *done_ud;
} ctl_write_t;

/* Sends w for target t. Returns 0 when the request is on its way (settled
 * runs later), or a negative HCP_E* code when it could not be sent (counted
 * as a write error and logged; settled does not run). */
int ctl_write(ctl_writer_t *wr, ctl_wtarget_t *t, const ctl_write_t *w);

/* Writes in flight before reconciles wait for answers: every request holds
 * buffers, and the API server does not answer faster for more. */
#define CTL_WRITE_MAX_INFLIGHT 32

/* Makes wr a writer with nothing in flight or waiting, on loop and client;
 * settled (with ud) is called once per answered write. */
void ctl_write_init(ctl_writer_t *wr, struct ev_loop *loop, kube_client *client,
                    ctl_stats_t *stats, ctl_write_settled_fn settled, void *ud);

/* True when another write may be sent now (below CTL_WRITE_MAX_INFLIGHT). */
bool ctl_write_room(const ctl_writer_t *wr);

/* True when work that would write anything but a held change let through
 * (first false) must wait: a write marked first is in flight. */
bool ctl_write_must_wait(const ctl_writer_t *wr, bool first);

/* Puts it in the writer's waiting lane, behind what waits already; it comes
 * back from ctl_write_resume() once no write marked first is in flight. */
void ctl_write_wait(ctl_writer_t *wr, ctl_qitem_t *it);

/* The next item that waited, in order, or NULL while a write marked first
 * is in flight or nothing waits. The caller queues it again. */
ctl_qitem_t *ctl_write_resume(ctl_writer_t *wr);

/* True when rv is a version of the object that our own writes replaced: a
 * watch delivered it after the answer to a later write was cached. */
bool ctl_write_stale(const uint64_t stale[2], const char *rv);

/* An Event about an object (t's ns/name), created through the writer. */
typedef struct ctl_event {
    const char *kind, *api_version, *uid; /* the involved object */
    const char *type;                     /* "Normal" or "Warning" */
    const char *reason, *message;
} ctl_event_t;

/* Creates the Event (stamped with the loop's time) and logs it. Returns as
 * ctl_write(). */
int ctl_write_event(ctl_writer_t *wr, ctl_wtarget_t *t, const ctl_event_t *ev);

#endif
