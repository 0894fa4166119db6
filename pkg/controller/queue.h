/* queue: the controller's work queue (private to pkg/controller).
 *
 * FIFOs (base/list) of items that are queued at most once: pushing an item
 * that is already waiting does nothing, so a burst of events about one
 * object costs one reconcile. The items belong to the caller.
 *
 * Items wait in one of two lanes, chosen by the item (ctl_qitem_t.lane).
 * Lane 0 goes first: the controller puts HostedClusters there and everything
 * else (NodePools, policies, ConfigMaps, remediations) in lane 1, so that
 * after a cold start or at a boundary that many objects share, every
 * HostedCluster is decided (its held release written, its hosted
 * ClusterVersion projected) before the thousands of NodePool status writes,
 * rather than somewhere among them. A policy's status at the boundary its
 * objects share comes after them too, whatever order their timers fired in
 * (timers that expire together fire in no set order): by then the releases
 * fly, and its write waits for them. So that lane 1
 * cannot starve, it gets one turn after CTL_QUEUE_FAIR pops in a row from
 * lane 0 while it waits; the bound is above the thousand HostedClusters of
 * a large management cluster, so a boundary they share still puts all of
 * them first. Lane 0 empties quickly in practice: the queue holds each
 * record once, and a reconcile that writes nothing takes microseconds.
 */
#ifndef HCP_CONTROLLER_QUEUE_H
#define HCP_CONTROLLER_QUEUE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/list.h"

#define CTL_QUEUE_LANES 2
#define CTL_QUEUE_FAIR 1024 /* lane-0 pops in a row before a waiting lane 1 gets one */

/* Embedded in each queued object. */
typedef struct ctl_qitem {
    hcp_link_t link;        /* on its lane while queued */
    bool queued;            /* in the queue now */
    unsigned char lane;     /* 0 (first) or 1; set by the owner before pushing */
} ctl_qitem_t;

typedef struct ctl_queue {
    hcp_link_t lane[CTL_QUEUE_LANES]; /* heads of base/list (ctl_queue_init) */
    size_t len;             /* items queued, all lanes */
    unsigned streak;        /* lane-0 pops in a row while lane 1 waited */
} ctl_queue_t;

/* Makes q an empty queue; before any other use. */
void ctl_queue_init(ctl_queue_t *q);

/* Appends it to its lane unless it is queued already. Returns true when it
 * was added. */
bool ctl_queue_push(ctl_queue_t *q, ctl_qitem_t *it);

/* Removes and returns the next item (no longer queued), or NULL: the oldest
 * of lane 0, except that a waiting lane 1 gets every CTL_QUEUE_FAIR+1th turn. */
ctl_qitem_t *ctl_queue_pop(ctl_queue_t *q);

/* The item lane l would give next, left queued; NULL when the lane is
 * empty. */
ctl_qitem_t *ctl_queue_peek(const ctl_queue_t *q, unsigned l);

/* True when nothing is queued. */
bool ctl_queue_empty(const ctl_queue_t *q);

#endif
