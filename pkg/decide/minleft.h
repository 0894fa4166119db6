/* minleft: a held change starts only with enough of its window left.
 *
 * A control-plane update started a minute before its window closes runs
 * mostly outside it; GKE and AKS start an upgrade only with enough of the
 * window left. A policy says how much must remain (spec.minTimeLeft: the
 * controlPlane value for a HostedCluster, workerNodes for a NodePool, the
 * larger of its own policy's and its HostedCluster's), the guard rails'
 * minTimeLeft is the fleet-wide floor, and the larger applies. In the last
 * minimum of a window no change may start: a held change stays held, and a
 * new request is held at admission (the decision is restricted); its
 * effective start is the first instant with that much left
 * (schedule/minleft.h), usually the next long enough window's open.
 *
 * Work already under way is not a start: a control-plane update in
 * progress and a NodePool rollout under way go on as the window permits.
 * An override in force (Permissive, or PermissiveUntil before its instant)
 * on the object's own stanza or, for a NodePool, on its HostedCluster's
 * lifts the minimum: an SRE who forces a change expects it to go now.
 *
 * Everything here is pure: the timeline, the minimum and now are
 * parameters.
 */
#ifndef HCP_DECIDE_MINLEFT_H
#define HCP_DECIDE_MINLEFT_H

#include <stdbool.h>

#include "policy/stanza.h"
#include "schedule/schedule.h"

/* Where an object's minimum comes from. */
typedef enum decide_min_source {
    DECIDE_MIN_NONE = 0,  /* no minimum */
    DECIDE_MIN_POLICY,    /* spec.minTimeLeft of a policy the object follows */
    DECIDE_MIN_GUARD,     /* the guard rails' minTimeLeft (larger than any policy's) */
} decide_min_source_t;

/* An object's minimum and its effective start at now. */
typedef struct decide_minleft {
    sched_time_t min;            /* seconds; 0: none (nothing else is set) */
    decide_min_source_t source;
    bool found;                  /* an effective start within SCHED_LOOKAHEAD */
    sched_time_t start;          /* the effective start: the first instant at
                                    or after now a change may start */
    sched_time_t last;           /* the last instant of that run of starts
                                    (its window's end - min); SCHED_POS_INF
                                    for a window that never ends */
    sched_interval_t window;     /* the permitted interval holding start */
    bool tail;                   /* now is permitted but start is later: now
                                    lies in the last min of a window (or in a
                                    window shorter than min) */
    sched_interval_t now_window; /* when tail: the permitted interval holding now */
} decide_minleft_t;

/* The minimum in force for an object at now: own is its resolution (its
 * policy's minimums), cluster its HostedCluster's for a NodePool (else
 * NULL), floor the guard rails' minTimeLeft (0: none). st and cluster_st
 * are the stanzas behind own and cluster (cluster_st NULL for a
 * HostedCluster). 0 while an override is in force (see above). */
sched_time_t decide_min_left_of(bool nodepool, const stanza_t *st, const stanza_resolution_t *own,
                                const stanza_t *cluster_st, const stanza_resolution_t *cluster,
                                sched_time_t floor, sched_time_t now,
                                decide_min_source_t *source);

/* Fills *out for timeline at now with minimum min (source as given).
 * Returns 0 or a negative schedule engine error. */
int decide_min_left(sched_t *timeline, sched_time_t min, decide_min_source_t source,
                    sched_time_t now, decide_minleft_t *out);

/* "2h", "1h 30m": a minimum as messages write it (guard_format_duration()
 * with the spaces dropped). */
void decide_min_left_format(sched_time_t secs, char *buf, size_t len);

struct decide_decision;
struct decide_capi;

/* Applies m to a decision d of a HostedCluster (nodepool false) or NodePool
 * made without it. In the tail of a window d becomes restricted (reason
 * MinTimeLeft, both conditions saying the window, the minimum and the
 * effective start), and wakes at the effective start at the latest. held:
 * a change is held and waits to be let through (the pending metric is then
 * blocked); partial: a control-plane update is under way (its Cluster is
 * not paused). A NodePool's MachineDeployment/MachineSet is paused only
 * without the admission webhooks (held_at_admission false), as for the
 * health gate; a rollout under way is not stopped. Outside the tail a
 * permitted decision with a held change wakes when the tail begins, and a
 * restricted one with a pending change says the effective start in
 * ChangesPending. */
void decide_min_left_apply(struct decide_decision *d, bool nodepool, const decide_minleft_t *m,
                           bool held, bool partial, const struct decide_capi *capi,
                           bool held_at_admission);

/* The next instant a change held by the restricted decision d may start,
 * as the notifications (held, window-soon) tell it: the effective start
 * when a minimum time left applies (d->minleft; a first window too short,
 * or the tail of the window open now, is skipped), else the next window's
 * open. Returns false with *at SCHED_POS_INF when none is known: no window
 * ahead, none with that much time, or the decision is restricted inside a
 * window for another reason (the health gate, the control plane first). */
bool decide_next_start(const struct decide_decision *d, sched_time_t *at);

/* change_management_next_change_eta (seconds until a change may start; 0
 * now; -1 none) at now for a decision whose minimum time left is m, given
 * what the timeline alone says (timeline_eta, the same units). m was
 * computed at an earlier instant: before its effective start the answer
 * is the time to it, in its run of starts 0, -1 when no window has enough
 * time; without a minimum, or after the last start m knows of (the
 * decision is made again then), timeline_eta. */
double decide_min_left_eta(const decide_minleft_t *m, double timeline_eta, sched_time_t now);

#endif
