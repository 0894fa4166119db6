/* notify queue: notifications waiting for delivery (DESIGN.md 3.9).
 *
 * A bounded FIFO of (endpoint, notification) deliveries, each retried with
 * exponential backoff until its endpoint takes it. It survives an endpoint
 * that is down for hours: a failed delivery waits (1 s, 2 s, 4 s, ... up
 * to 5 min between attempts) and is never given up while there is room;
 * when the queue is full the oldest delivery is dropped and counted, never
 * a held change let through or lost (a notification is only news about the
 * cluster's state, which stays the truth). The same notification id for
 * the same endpoint is queued once. Per endpoint, consecutive failures are
 * counted so that the shell can say when one keeps failing. Time is a
 * parameter (an injected clock); no I/O.
 */
#ifndef HCP_NOTIFY_QUEUE_H
#define HCP_NOTIFY_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify/config.h"

#define NOTIFY_BACKOFF_FIRST 1.0   /* seconds before the first retry */
#define NOTIFY_BACKOFF_MAX 300.0   /* the longest wait between attempts */
#define NOTIFY_FAILING_AFTER 5     /* consecutive failures that make an endpoint "failing" */

typedef struct notify_item {
    size_t endpoint;        /* index into the configuration's endpoints */
    char id[40];            /* notify_event_id() */
    char *body;             /* owned */
    const char *content_type; /* static */
    unsigned attempts;      /* failed attempts so far */
    double next_at;         /* when it may be tried (the clock's seconds) */
    bool inflight;          /* handed out by notify_queue_next(), not yet answered */
} notify_item_t;

typedef struct notify_queue {
    notify_item_t *items;   /* ring of cap */
    size_t cap, head, len;
    uint64_t sent, failed, dropped;  /* deliveries taken; attempts failed; dropped when full */
    unsigned failing[NOTIFY_MAX_ENDPOINTS]; /* consecutive failures per endpoint */
} notify_queue_t;

/* cap deliveries at most (>= 1). Returns 0 or HCP_ENOMEM. */
int notify_queue_init(notify_queue_t *q, size_t cap);
void notify_queue_free(notify_queue_t *q);

/* Queues a delivery of body (taken over: freed by the queue, also when
 * refused) to endpoint, due at now. Returns 1 queued, 0 already queued
 * (same id and endpoint; body freed), or 1 with the oldest not-in-flight
 * delivery dropped (q->dropped counts it) when full. A full queue whose
 * every delivery is in flight refuses the new one (counted as dropped) and
 * returns 0. */
int notify_queue_push(notify_queue_t *q, size_t endpoint, const char *id, char *body,
                      const char *content_type, double now);

/* The delivery due first at now that is not in flight, marked in flight;
 * NULL when none is due. *wait (when not NULL) gets the seconds until the
 * next one is due (-1 when the queue holds none waiting). The pointer (and
 * its body) stays valid only until the next push or done: a sender copies
 * what it sends and answers by (endpoint, id). */
notify_item_t *notify_queue_next(notify_queue_t *q, double now, double *wait);

/* The answer for the delivery (endpoint, id) handed out in flight: ok
 * removes it and resets its endpoint's failures; else it waits its backoff
 * and is tried again. Returns true when this failure made its endpoint
 * reach NOTIFY_FAILING_AFTER consecutive failures (tell it once); false
 * also when no such delivery is in flight. */
bool notify_queue_done(notify_queue_t *q, size_t endpoint, const char *id, bool ok, double now);

/* True when a delivery of id (to any endpoint) is queued. */
bool notify_queue_has(const notify_queue_t *q, const char *id);

/* The wait after n failed attempts: 1 s doubled each time, 5 min at most. */
double notify_backoff(unsigned n);

#endif
