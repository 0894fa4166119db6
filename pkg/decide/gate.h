/* gate: the health gate before a held change is let through (DESIGN.md 3.10).
 *
 * Seed 004: "maintenance is skipped when cluster is unhealthy". When a
 * window opens (or an override permits changes) and a change is held, the
 * change is let through only when HyperShift reports the object healthy:
 *
 * - a HostedCluster: condition Available not False/Unknown, Degraded not
 *   True, and no control-plane update still Partial in
 *   status.version.history (HyperShift: api/hypershift/v1beta1/
 *   hostedcluster_conditions.go, HostedClusterAvailable and
 *   HostedClusterDegraded; the history entries of ClusterVersion);
 * - a NodePool: condition Ready not False/Unknown, and AllNodesHealthy not
 *   False (api/hypershift/v1beta1/nodepool_conditions.go,
 *   NodePoolReadyConditionType and NodePoolAllNodesHealthyConditionType:
 *   HyperShift's word that a machine of the pool failed its health checks).
 *
 * A condition HyperShift has not written at all reads as not reported and
 * does not fail the gate: HyperShift writes these conditions on its first
 * reconcile of an object, and an object it has never reconciled has no
 * other state to judge; every reported False (or Unknown) fails it.
 *
 * A HostedCluster's held release must also still be recommended for it
 * (seed 004: "the UpgradeJob rechecks the available updates at the time of
 * the upgrade"): listed in status.version.availableUpdates, or in
 * status.version.conditionalUpdates with its Recommended condition not
 * False. HyperShift copies both from the hosted cluster's ClusterVersion,
 * which the cluster-version operator fills from its update service
 * (control-plane-operator/hostedclusterconfigoperator/controllers/hcpstatus/
 * hcpstatus.go; api/hypershift/v1beta1/hostedcluster_types.go,
 * ClusterVersionStatus). A release in neither list was pulled from the
 * graph, one whose Recommended is False carries a known risk: either keeps
 * the change held with reason ReleaseNotRecommended. With both lists empty
 * (no update service, or none answered) the check cannot judge: it passes,
 * and says it did not check. A NodePool's release is one its control plane
 * has completed (cpfirst.h), so it has no check of its own.
 *
 * A failing gate keeps the change held: the decision becomes restricted
 * with reason HealthGate (or ReleaseNotRecommended) on both conditions, and is decided again on the
 * object's next event (HyperShift's status writes enqueue it) for as long as
 * the window is open. Last come the pre-start checks of other systems
 * (check/check.h): a check that refused the change (CheckFailed) or has not
 * answered yet (CheckPending) keeps it held the same way. An override skips
 * the gate only when it says so: the
 * object's own stanza is a PermissiveUntil in force (or Permissive) and the
 * object carries DECIDE_SKIP_GATE_ANNOTATION: "true" (the health) or
 * DECIDE_SKIP_RECOMMENDATION_ANNOTATION: "true" (the recommendation).
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_GATE_H
#define HCP_DECIDE_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "notify/due.h"
#include "policy/stanza.h"
#include "schedule/schedule.h"

/* Set to "true" beside a PermissiveUntil (or Permissive) override: the held
 * change is let through whatever the object's health. */
#define DECIDE_SKIP_GATE_ANNOTATION "changemanagement.hypershift.openshift.io/skip-health-gate"
/* The same for the check that the held release is still recommended. */
#define DECIDE_SKIP_RECOMMENDATION_ANNOTATION \
    "changemanagement.hypershift.openshift.io/skip-recommendation-check"

#define DECIDE_GATE_REASONLEN 64 /* a failing condition's reason as kept */
#define DECIDE_GATE_WHYLEN 384   /* a verdict in words */

/* A condition's status as the gate reads it. */
typedef enum decide_cond3 {
    DECIDE_COND_ABSENT = 0, /* not written (not reported) */
    DECIDE_COND_TRUE,
    DECIDE_COND_FALSE,
    DECIDE_COND_UNKNOWN,    /* "Unknown" or anything else */
} decide_cond3_t;

/* Whether a HostedCluster's held release is still recommended. */
typedef enum decide_rec {
    DECIDE_REC_NONE = 0,  /* no held release (or a NodePool): nothing to check */
    DECIDE_REC_UNCHECKED, /* both lists empty: cannot judge, passes */
    DECIDE_REC_OK,        /* listed as available, or conditional and not False */
    DECIDE_REC_GONE,      /* in neither list: pulled from the update graph */
    DECIDE_REC_RISK,      /* conditional, Recommended False */
} decide_rec_t;

#define DECIDE_REC_WHYLEN 192 /* the risk as kept: its name and URL */

/* What the gate reads of an object, extracted at watch time (no JSON kept). */
typedef struct decide_health {
    uint8_t available;      /* HostedCluster Available (decide_cond3_t) */
    uint8_t degraded;       /* HostedCluster Degraded */
    uint8_t ready;          /* NodePool Ready */
    uint8_t nodes_healthy;  /* NodePool AllNodesHealthy */
    bool partial;           /* HostedCluster: status.version.history[0].state Partial */
    bool skip;              /* carries DECIDE_SKIP_GATE_ANNOTATION: "true" */
    bool skip_rec;          /* carries DECIDE_SKIP_RECOMMENDATION_ANNOTATION: "true" */
    uint8_t rec;            /* decide_rec_t of the held release */
    char rec_version[32];   /* its version as the lists name it, else its image's tag, "" */
    char rec_risk[DECIDE_REC_WHYLEN]; /* DECIDE_REC_RISK: "Name (URL)" of its risks */
    char reason[DECIDE_GATE_REASONLEN]; /* the first failing condition's reason, "" */
    sched_time_t unhealthy_since; /* its lastTransitionTime (SCHED_NEG_INF: none, or
                                     not given) */
    /* Read beside the gate's inputs, for the notifications (notify/due.h):
     * HyperShift's word on the last change, and what was notified. */
    uint8_t outcome;        /* notify_outcome_t */
    sched_time_t outcome_at; /* when (SCHED_NEG_INF: none or unknown) */
    char outcome_reason[DECIDE_GATE_REASONLEN]; /* a failure's reason as HyperShift gives
                                                   it (InplaceUpgradeFailed), "" */
    char outcome_version[32]; /* the version the change reached: a HostedCluster's
                                 history[0].version, a NodePool's status.version; "" */
    notify_marks_t notified; /* NOTIFY_MARKS_ANNOTATION as read */
} decide_health_t;

/* The pre-start checks' verdict on a held change (check/check.h), as the
 * shell knows it when the plan is made; zero: no check applies. */
typedef struct decide_check {
    uint8_t verdict;              /* check_verdict_t */
    char why[DECIDE_GATE_WHYLEN]; /* CHECK_FAIL / CHECK_WAIT: a clause; CHECK_PASS:
                                     what the checks said, "" */
} decide_check_t;

/* The gate's verdict on one decision. */
typedef struct decide_gate {
    bool applies;   /* changes are permitted and a change is held: the gate decides */
    bool pass;      /* healthy (meaningful when applies) */
    bool skipped;   /* failing, but the override says to skip the gate */
    bool by_rec;    /* failing: on the held release's recommendation, not on health */
    bool by_check;  /* failing: on the pre-start checks (health and release passed) */
    const char *reason; /* failing: "HealthGate", "ReleaseNotRecommended" when by_rec,
                           "CheckFailed" or "CheckPending" when by_check (static) */
    bool unchecked; /* the held release's recommendation could not be checked */
    char why[DECIDE_GATE_WHYLEN]; /* failing (also when skipped): what failed,
                                     a clause ("Degraded is True (reason X)") */
} decide_gate_t;

/* Reads the gate's inputs from a HostedCluster (nodepool false) or NodePool
 * object as served, and the notifications' (the outcome of the last change,
 * the notified marks). Never fails: a field of the wrong type reads as
 * absent.
 *
 * The outcome, as HyperShift reports it:
 * - a HostedCluster: completed when status.version.history[0].state is
 *   Completed (at its completionTime; hostedcluster_controller.go,
 *   computeClusterVersionStatus); failed while that entry is Partial and
 *   condition ClusterVersionFailing is True (at its lastTransitionTime;
 *   api/hypershift/v1beta1/hostedcluster_conditions.go, ClusterVersionFailing
 *   mirrors the hosted ClusterVersion's Failing);
 * - a NodePool: condition UpdatingVersion False (at its lastTransitionTime)
 *   with reason AsExpected is a version rollout done (HyperShift compares
 *   status.version with the target release, nodepool_controller.go,
 *   isUpdatingVersion, and sets the condition False when they agree); with
 *   any other reason (InplaceUpgradeFailed: nodepool/inplace.go, a node's
 *   machine-config daemon Degraded) it failed. */
void decide_health_extract(const json_t *obj, bool nodepool, decide_health_t *out);

/* The verdict on health alone: true when healthy; else why (a clause) is
 * filled. nodepool selects which conditions are judged. */
bool decide_health_ok(const decide_health_t *h, bool nodepool, char *why, size_t len);

/* The verdict on the held release's recommendation alone (a HostedCluster):
 * true when it passes (recommended, unchecked or nothing held); else why is
 * filled. */
bool decide_rec_ok(const decide_health_t *h, char *why, size_t len);

/* True when the object's own stanza is an override in force (Permissive, or
 * PermissiveUntil before its end) and h carries the skip annotation. */
bool decide_gate_override(const stanza_t *st, const decide_health_t *h, sched_time_t now);

/* The same for the recommendation check (DECIDE_SKIP_RECOMMENDATION_ANNOTATION). */
bool decide_rec_override(const stanza_t *st, const decide_health_t *h, sched_time_t now);

/* The gate's verdict on h alone, as decide_gate_apply() reaches it (health
 * first, then a HostedCluster's held release, each override applied, then
 * the pre-start checks ck, NULL none, which no override skips: they are the
 * fleet operator's, whose failurePolicy Ignore is the way around a check):
 * g's pass, skipped, by_rec, by_check, reason, unchecked and why; applies is
 * left as it is. */
void decide_gate_verdict(const decide_health_t *h, bool nodepool, const stanza_t *st,
                         const decide_check_t *ck, sched_time_t now, decide_gate_t *g);

struct decide_decision;
struct decide_capi;

/* Applies the gate to a decision d of a HostedCluster (nodepool false) or
 * NodePool: held says a change is held and waits to be let through (not one
 * already under way). When d permits changes and held, the verdict goes to
 * d->gate; a failing gate (not skipped) makes d restricted with reason
 * HealthGate on both conditions, the pending metric blocked, and the CAPI
 * object's pause as a restricted decision with a held change wants it
 * (capi: the Cluster or MachineDeployment/MachineSet, NULL when none;
 * held_at_admission as for decide_hc()/decide_np()). A control-plane update
 * under way (Partial) on an unpaused Cluster is never paused. d->wake is
 * kept: the window's end changes the answer by time, health by events. */
void decide_gate_apply(struct decide_decision *d, bool nodepool, const decide_health_t *h,
                       const stanza_t *st, const decide_check_t *ck, bool held,
                       const struct decide_capi *capi, bool held_at_admission, sched_time_t now);

/* Copies at most len-1 bytes of s (NULL: "") into dst, NUL-terminated, each
 * byte outside printable ASCII as '?': text from an object that conditions,
 * Events and metrics quote. */
void decide_copy_printable(char *dst, size_t len, const char *s);

/* Holds d's change for reason (static CamelCase) as a failing gate does:
 * restricted, the pending metric blocked, both conditions with that
 * reason (their messages are the caller's) and the CAPI object's pause as
 * decide_gate_apply() wants it (h: the object's health, capi and
 * held_at_admission as there). */
void decide_gate_hold(struct decide_decision *d, bool nodepool, const decide_health_t *h,
                      const struct decide_capi *capi, bool held_at_admission, const char *reason);

#endif
