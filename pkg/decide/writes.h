/* writes: the writes a plan asks for, in the order they go (pure).
 *
 * A plan (plan.h) says what a HostedCluster or NodePool should look like;
 * decide_writes() turns it into at most three writes, each a merge patch of
 * one object conditional on the resourceVersion the plan read:
 *
 *   1. its CAPI object: the pause and, for a NodePool, the opt-in label that
 *      the MachineDeployment/MachineSet hold selects by, in one patch; or,
 *      in a window, a drift held on the MachineDeployment let through
 *      (drift.h: HyperShift's strategy back, the record dropped);
 *   2. the object itself: a held change let through (a HostedCluster's
 *      release or the fields that roll every NodePool, a NodePool's held
 *      request), and its opt-in label;
 *   3. its status conditions.
 *
 * A held change let through goes alone and is marked first: the writer
 * sends it before every other write (DESIGN.md 3.6), and the CAPI pause,
 * status and Events follow with the next plan, after its answer. A write of
 * the object itself (2) is followed by no status write (3): both replace
 * the same resourceVersion, and the second would conflict.
 *
 * Nothing here knows paths, caches or the network: the shell addresses
 * each write by its target and submits the list in order.
 */
#ifndef HCP_DECIDE_WRITES_H
#define HCP_DECIDE_WRITES_H

#include <jansson.h>
#include <stdbool.h>

#include "decide/plan.h"

typedef enum decide_write_target {
    DECIDE_WRITE_CAPI, /* the plan's CAPI object (plan.capi_kind, capi_ns, capi_name) */
    DECIDE_WRITE_SELF, /* the HostedCluster or NodePool itself */
} decide_write_target_t;

typedef enum decide_write_kind {
    DECIDE_WRITE_METADATA, /* a merge patch of the object (metadata, spec) */
    DECIDE_WRITE_STATUS,   /* a merge patch of its status subresource */
} decide_write_kind_t;

typedef struct decide_write {
    decide_write_target_t target;
    decide_write_kind_t kind;
    json_t *patch;     /* owned by the list */
    const char *what;  /* for logs and counts: "pause", "opt-in label", "held release",
                          "held request", "status" (static) */
    bool first;        /* a held change let through: before every other write */
} decide_write_t;

#define DECIDE_WRITES_MAX 3

typedef struct decide_writes {
    decide_write_t w[DECIDE_WRITES_MAX]; /* in the order they go */
    int n;
    bool releasing; /* the plan lets a held change through (decide_releases_held()) */
} decide_writes_t;

/* True when plan p (decided) lets a held change through now: a HostedCluster
 * whose held release meets its open window, or whose fields that roll every
 * NodePool meet the common window of it and its pools (p->fields_go); a
 * NodePool whose held request, or the drift held on its MachineDeployment,
 * meets its open window. */
bool decide_releases_held(const decide_plan_t *p);

/* Fills *out with the writes plan p (decided) asks for at now, in order;
 * nothing to write leaves out->n 0. Returns 0, or HCP_ENOMEM / HCP_EPARSE
 * when a patch could not be built (the writes built so far are kept in
 * *out: the shell sends them and tries the rest again later). Always release
 * *out with decide_writes_free(). */
int decide_writes(const decide_plan_t *p, sched_time_t now, decide_writes_t *out);

/* Releases the patches of *ws and empties it. */
void decide_writes_free(decide_writes_t *ws);

#endif
