/* after: the cluster's health after a change (DESIGN.md 3.15).
 *
 * Seed 004: "The controller should also check the cluster health after the
 * upgrade. If the cluster is unhealthy, the controller should send a
 * notification." Once HyperShift reports a change completed (a
 * HostedCluster's status.version.history[0] Completed at its
 * completionTime, a NodePool's UpdatingVersion False with reason
 * AsExpected: gate.h, the outcome), the health gate's verdict on the object
 * (decide_health_ok()) is watched for a settle time. The change is judged
 * unhealthy when the object is unhealthy at the settle time's end, or has
 * been unhealthy for longer than a grace time inside it (a cluster Degraded
 * ten minutes after its update is told then, not twenty minutes later).
 * Trouble that begins after the settle time is not the change's.
 *
 * How long the object has been unhealthy is the failing condition's
 * lastTransitionTime, as HyperShift wrote it (decide_health_t.
 * unhealthy_since; the completion when it is older or unknown): the verdict
 * is derived from the object alone, so that a restarted controller reaches
 * the same one and tells nothing twice (the notification's mark is the
 * completion). A NodePool's configuration rollout has no completion
 * HyperShift reports apart from its version's: only a version rollout is
 * judged.
 *
 * The verdict is shown as the condition DECIDE_AFTER_CONDITION (written
 * once a change is found unhealthy, kept False afterwards), a Warning Event
 * and the notification `unhealthy-after-change`. Everything here is pure.
 */
#ifndef HCP_DECIDE_AFTER_H
#define HCP_DECIDE_AFTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decide/gate.h"
#include "schedule/schedule.h"

#define DECIDE_AFTER_CONDITION "UnhealthyAfterChange"
/* How long after the settle time's end a change is still judged (seconds):
 * a controller started long after a change (a new installation, a cluster
 * Degraded since its update a month ago) tells nothing about it, and the
 * condition of a change found unhealthy turns False a day after (the
 * cluster's own conditions go on saying it is unhealthy). */
#define DECIDE_AFTER_HORIZON 86400

typedef enum decide_after_state {
    DECIDE_AFTER_NONE = 0,  /* no completed change (none, one under way, or one more
                               than DECIDE_AFTER_HORIZON past its settle time) */
    DECIDE_AFTER_SETTLING,  /* completed, within its settle time, not (yet) unhealthy */
    DECIDE_AFTER_HEALTHY,   /* the settle time passed without a verdict of unhealthy */
    DECIDE_AFTER_UNHEALTHY, /* unhealthy at the settle time's end, or for longer than
                               the grace time inside it, and still unhealthy */
} decide_after_state_t;

typedef struct decide_after {
    uint8_t state;          /* decide_after_state_t */
    sched_time_t completed; /* the change's completion (SCHED_NEG_INF: NONE) */
    sched_time_t since;     /* UNHEALTHY: unhealthy since (the completion at the earliest) */
    sched_time_t at;        /* UNHEALTHY, HEALTHY: when the verdict was reached (HEALTHY:
                               the settle time's end) */
    sched_time_t wake;      /* the next instant the verdict can change by time alone,
                               SCHED_POS_INF none */
    char why[DECIDE_GATE_WHYLEN]; /* UNHEALTHY: the failing condition, a clause */
} decide_after_t;

/* The verdict on object h (a NodePool when nodepool) at now, with the settle
 * and grace times in seconds (0: the defaults, GUARD_AFTER_SETTLE and
 * GUARD_AFTER_GRACE; a grace longer than the settle time is the settle
 * time). */
void decide_after_change(const decide_health_t *h, bool nodepool, sched_time_t settle,
                         sched_time_t grace, sched_time_t now, decide_after_t *out);

/* The change judged, in words: "release 4.17.2" (h's outcome_version), or
 * "the last change" when HyperShift names no version. */
void decide_after_change_words(const decide_health_t *h, char *buf, size_t len);

/* The condition DECIDE_AFTER_CONDITION as a (status, reason, message) for
 * a: True with reason Unhealthy and a message naming the change (words),
 * the condition, since when and the times; otherwise False with reason
 * AsExpected and a fixed message. */
void decide_after_condition(const decide_after_t *a, const char *words, sched_time_t settle,
                            sched_time_t grace, bool *status, const char **reason, char *msg,
                            size_t len);

#endif
