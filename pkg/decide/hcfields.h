/* hcfields: the HostedCluster fields that roll every NodePool (DESIGN.md
 * 3.6), pure.
 *
 * A change of one of decide_hc_held_fields rolls every NodePool of the
 * cluster at once (HyperShift hashes them into each pool's target), so it
 * may start only at an instant when the HostedCluster and all its opted-in
 * NodePools may change. While that is not now, the admission webhook keeps
 * the fields at their running values and records the request in
 * DECIDE_REQUESTED_HC_SPEC_ANNOTATION (decide_hc_fields_hold()); reconcile
 * applies it at the first common instant (decide_common_window()), or says
 * that none exists within the look-ahead. A Permissive or PermissiveUntil
 * override on the HostedCluster applies it at once.
 */
#ifndef HCP_DECIDE_HCFIELDS_H
#define HCP_DECIDE_HCFIELDS_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "decide/slim.h"
#include "decide/nphold.h"
#include "schedule/schedule.h"

#define DECIDE_COMMON_NAMES 256
/* ChangesPending reasons of a HostedCluster whose held fields wait. */
#define DECIDE_COMMON_WAIT_REASON "WaitingForCommonWindow"
#define DECIDE_NO_COMMON_REASON "NoCommonWindow" /* room for the pools a message names */

/* One opted-in NodePool's own timeline (borrowed). */
typedef struct decide_pool_sched {
    const char *name;
    sched_t *sched;
} decide_pool_sched_t;

/* When the HostedCluster and all its opted-in NodePools may change. */
typedef struct decide_common {
    bool computed;       /* the plan computed it (else nothing below is set) */
    bool override;       /* a Permissive override on the HostedCluster: now */
    bool permitted;      /* all may change now */
    bool has_window;     /* a common instant exists within the look-ahead */
    sched_time_t start;  /* the first common instant (when has_window; now
                            or earlier when permitted) */
    sched_time_t wake;   /* the next instant the answer can change by time
                            alone; SCHED_POS_INF when never */
    size_t pools;        /* opted-in NodePools taken into account */
    char blocking[DECIDE_COMMON_NAMES]; /* when !has_window: the NodePools
                            whose windows meet none of the others', comma-
                            separated ("" when the HostedCluster alone has none) */
    char message[512];   /* the answer in one sentence */
} decide_common_t;

/*
 * The first instant at or after now when hc (the HostedCluster's own
 * timeline) and every pools[i].sched permit changes together, searched
 * within SCHED_LOOKAHEAD (sched_and of them all). When there is none, the
 * pools whose windows meet nobody else's are named: each pool is added in
 * turn to the intersection of the HostedCluster and the pools that fit so
 * far; one that leaves no window is a blocker and is left out of the rest.
 * override: the HostedCluster is under a Permissive override, which applies
 * at once. Returns 0 with *out filled, HCP_ENOMEM, or an engine error.
 */
int decide_common_window(sched_t *hc, const decide_pool_sched_t *pools, size_t n,
                         bool override, sched_time_t now, decide_common_t *out);

/* The hold of an UPDATE of a HostedCluster (decide_spec_hold() over
 * decide_hc_held_fields, recorded in DECIDE_REQUESTED_HC_SPEC_ANNOTATION);
 * restricted: the common window (decide_common_window()) is not open now. */
int decide_hc_fields_hold(const json_t *old_obj, const json_t *new_obj, bool restricted,
                          decide_np_hold_t *out);

/* Merges into base (a merge patch of the same HostedCluster, or NULL for a
 * new one conditional on resource_version) the application of its held
 * request: the recorded spec fields, and the annotation dropped. Only when
 * the common window is open. New reference (base is consumed); NULL when
 * nothing is held (base returned) or out of memory (base released). */
json_t *decide_hc_fields_patch(json_t *base, const decide_hc_t *hc, const char *resource_version);

#endif
