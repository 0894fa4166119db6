/* decide: what every managed object should look like.
 *
 * Pure functions of (slim views, resolved timelines, now), the functional
 * core the reconciler calls (DESIGN.md 3.4-3.7): whether changes are
 * restricted, whether work already initiated must be left running, what to do
 * to the CAPI object's pause annotation, the ChangesPaused/ChangesPending
 * conditions, the pending metric, and the next
 * instant at which the answer can change. The merge patches that carry a
 * decision out are built here too, so that "already right" is decided in one
 * place and steady state writes nothing.
 */
#ifndef HCP_DECIDE_DECIDE_H
#define HCP_DECIDE_DECIDE_H

#include <stdbool.h>

#include <jansson.h>

#include "decide/after.h"
#include "decide/gate.h"
#include "decide/minleft.h"
#include "decide/slim.h"
#include "decide/wave.h"
#include "policy/stanza.h"
#include "schedule/schedule.h"

#define DECIDE_MSGLEN 1024
#define DECIDE_REASONLEN 256 /* an exclusion's reason as conditions quote it */
#define DECIDE_HELDLEN 256   /* a held template as the companion quotes it */
/* HostedClusterVersionProjected's reason once the HostedCluster opted out. */
#define DECIDE_NOT_OPTED_IN "NotOptedIn"

typedef enum decide_pause_action {
    DECIDE_PAUSE_NONE,          /* the CAPI object is already right */
    DECIDE_PAUSE_ADD,           /* add the pause and our marker */
    DECIDE_PAUSE_REASSERT,      /* our marker is there but the pause was stripped */
    DECIDE_PAUSE_REMOVE,        /* lift our pause (pause + marker) */
    DECIDE_PAUSE_REMOVE_MARKER, /* the pause is gone already; drop the stale marker */
} decide_pause_action_t;

typedef struct decide_decision {
    sched_state_t state;   /* the object's timeline at now */
    bool restricted;       /* the timeline does not permit changes now */
    const char *restricted_reason; /* why, when restricted (static CamelCase) */
    bool excluded;         /* now is inside an exclusion of a policy of the
                              timeline (the object's, or its HostedCluster's) */
    sched_time_t excluded_until;   /* when the excluded span ends */
    char excluded_reason[DECIDE_REASONLEN]; /* its reason ("" when none given) */
    bool hold_open;        /* restricted, but initiated work is left running */
    bool paused_by_other;  /* the CAPI object carries a pause that is not ours */
    bool pending;          /* changes are pending (DESIGN.md 3.5) */
    char held[DECIDE_HELDLEN]; /* NodePools: the request held at admission
                                  in words (DECIDE_REQUESTED_NODEPOOL_ANNOTATION),
                                  else a template or target held the old way
                                  (DECIDE_HELD_TEMPLATE_ANNOTATION), else a
                                  drift held on the MachineDeployment (drift.h),
                                  "" when none */
    bool drift;            /* held names a drift: a configuration HyperShift
                              made by itself, no request */
    int pending_metric;    /* 0 none, 1 pending and being initiated, 2 blocked */
    bool pause_wanted;     /* the CAPI object should carry our pause */
    decide_pause_action_t action;
    /* NodePools of upgradeType Replace: MachineDeployment.spec.paused, with
     * our marker, beside the pause annotation while paused in mid-rollout:
     * Cluster API then starts no rollout step even while HyperShift's
     * NodePool reconcile has deleted the annotation and no webhook keeps it
     * (HyperShift never writes spec.paused), and still scales. +1 set it, -1
     * clear ours, 0 nothing to do. */
    int spec_pause;
    sched_time_t wake;     /* next instant the decision can change by time
                              alone; SCHED_POS_INF when never */
    bool paused_status;    /* ChangesPaused condition */
    const char *paused_reason;            /* static CamelCase */
    char paused_message[DECIDE_MSGLEN];
    bool pending_status;   /* ChangesPending condition */
    const char *pending_reason;           /* static CamelCase */
    char pending_message[DECIDE_MSGLEN];
    bool has_projected;    /* HostedClusters: the hosted ClusterVersion state is known */
    bool projected_status; /* HostedClusterVersionProjected condition */
    const char *projected_reason;         /* static CamelCase */
    char projected_message[DECIDE_MSGLEN];
    decide_gate_t gate;    /* the health gate's verdict (decide_gate_apply()) */
    wave_verdict_t wave;   /* the release waves' verdict (decide_wave_apply()) */
    bool wave_skipped;     /* an override let the held change past the waves */
    bool wave_held;        /* the waves hold it: restricted_reason is theirs */
    bool gate_held;        /* restricted by a gate (health, recommendation, checks,
                              waves: decide_gate_hold()) while the timeline permits
                              changes: no window closed */
    decide_after_t after;  /* the health after the last change (after.h) */
    bool has_after;        /* the UnhealthyAfterChange condition is written: the verdict
                              is unhealthy, or the object carries it already */
    bool after_status;     /* UnhealthyAfterChange condition */
    const char *after_reason;             /* static CamelCase */
    char after_message[DECIDE_MSGLEN];
    decide_minleft_t minleft; /* the minimum time left and the effective start
                                 (decide_min_left_apply()); min 0 when none */
    bool cp_first;         /* NodePools: the held request asks for a release its
                              control plane has not completed (cpfirst.h) */
    char cp_why[DECIDE_MSGLEN / 2]; /* why, in words; "" when not cp_first */
} decide_decision_t;

/* The action that brings a CAPI object (NULL: not found, nothing to do) to
 * the wanted pause state. Only pauses carrying our marker are ever lifted,
 * and our marker is never added to somebody else's pause. */
decide_pause_action_t decide_pause_action(bool want_paused, const decide_capi_t *obj);

/* Decides a HostedCluster: its own resolved timeline (system control-plane);
 * cluster is its CAPI Cluster or NULL. A control-plane update in progress
 * (history Partial) on an unpaused Cluster is never paused. With the
 * admission webhooks served (held_at_admission) the Cluster is paused only
 * while restricted with a release change held; without them, while
 * restricted. Returns 0 or a negative engine error. */
int decide_hc(const decide_hc_t *hc, const stanza_resolution_t *res, const decide_capi_t *cluster,
              bool held_at_admission, sched_time_t now, decide_decision_t *out);

/* Decides a NodePool: its timeline intersected with its HostedCluster's
 * (inter, from stanza_resolve_nodepool()); md is its MachineDeployment (or
 * MachineSet for InPlace pools) or NULL. A rollout in progress is paused
 * when the window closes (DESIGN.md 3.6: no new replacement starts; it
 * resumes in the next window). held_at_admission: the admission webhooks
 * hold new templates and targets, so md is paused only in mid-rollout;
 * false: paused whenever changes are restricted. Returns 0 or a negative
 * engine error. */
int decide_np(const decide_np_t *np, const stanza_resolution_t *res,
              const stanza_nodepool_t *inter, const decide_capi_t *md, bool held_at_admission,
              sched_time_t now, decide_decision_t *out);

/* The status merge patch that brings an object's conditions to the
 * decision into *out (new reference), or *out = NULL when they are already
 * right. Only status.conditions is written: HyperShift's CRDs prune
 * status.changeManagement, so the rest of the state goes to the companion
 * (companion.h). The conditions list is replaced as a whole (merge patches
 * replace arrays), so it carries every other condition unchanged;
 * resource_version makes the write conditional. Returns 0 or HCP_ENOMEM. */
int decide_status_patch(const decide_managed_t *m, const decide_decision_t *d,
                        const char *resource_version, bool nodepool, sched_time_t now,
                        json_t **out);

/* The metadata merge patch for a pause action (NULL for DECIDE_PAUSE_NONE or
 * when out of memory), conditional on resource_version. */
json_t *decide_pause_patch(decide_pause_action_t action, const char *resource_version);

/* The metadata merge patch that adds (add) or removes our opt-in label
 * (DECIDE_OPTIN_LABEL), conditional on resource_version; base, when not
 * NULL, is a metadata patch of the same object (decide_pause_patch()) that
 * the label joins and that is returned instead. New reference, NULL when
 * out of memory (base is then released). */
json_t *decide_label_patch(json_t *base, bool add, const char *resource_version);

/* Adds MachineDeployment.spec.paused (set: true, with our marker; else
 * false, the marker removed) to base, a metadata patch of the same object
 * or NULL (a new patch conditional on resource_version). New reference,
 * NULL when out of memory (base is then released). */
json_t *decide_spec_pause_patch(json_t *base, bool set, const char *resource_version);

/* The merge patch that applies a HostedCluster's held release requests
 * (spec.release.image, spec.controlPlaneRelease.image from the requested-*
 * annotations) and drops those annotations, conditional on
 * resource_version; NULL when nothing is held or out of memory. Only for a
 * HostedCluster whose changes are permitted now. */
json_t *decide_release_patch(const decide_hc_t *hc, const char *resource_version);

/* The merge patch that applies a NodePool's held request (the merge patch
 * of spec in DECIDE_REQUESTED_NODEPOOL_ANNOTATION) and drops the
 * annotation, conditional on resource_version; NULL when nothing
 * applicable is held or out of memory. Only for a NodePool whose changes
 * are permitted now. */
json_t *decide_np_request_patch(const decide_np_t *np, const char *resource_version);

/* True when object self (a decide_hc_t or decide_np_t, as kind says) carries
 * a request held by us, the request its audit record names: a HostedCluster's
 * release or fields that roll every NodePool, a NodePool's change held in
 * decision d. */
bool decide_request_held(decide_kind_t kind, const void *self, const decide_decision_t *d);

/* Formats an instant for status: RFC 3339 UTC, or "" for an unbounded end. */
void decide_format_time(sched_time_t t, char *buf, size_t len);

/* The same as a new JSON value: a string, or null for an unbounded end. */
json_t *decide_json_time(sched_time_t t);

#endif
