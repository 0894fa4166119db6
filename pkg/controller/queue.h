/* queue: the controller's work queue (private to pkg/controller).
 *
 * An intrusive FIFO of items that are queued at most once: pushing an item
 * that is already waiting does nothing, so a burst of events about one
 * object costs one reconcile. The items belong to the caller.
 */
#ifndef HCP_CONTROLLER_QUEUE_H
#define HCP_CONTROLLER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

/* Embedded in each queued object. */
typedef struct ctl_qitem {
    struct ctl_qitem *next; /* next in the queue */
    bool queued;            /* in the queue now */
} ctl_qitem_t;

typedef struct ctl_queue {
    ctl_qitem_t *head, *tail;
    size_t len;             /* items queued */
} ctl_queue_t;

/* Appends it unless it is queued already. Returns true when it was added. */
bool ctl_queue_push(ctl_queue_t *q, ctl_qitem_t *it);

/* Removes and returns the oldest item (no longer queued), or NULL. */
ctl_qitem_t *ctl_queue_pop(ctl_queue_t *q);

/* True when nothing is queued. */
bool ctl_queue_empty(const ctl_queue_t *q);

#endif
