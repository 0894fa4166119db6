/* plan: one object's closed decision, gathered from a read-only view.
 *
 * Reconcile, the /metrics scrape and (later) admission all ask the same
 * question about a HostedCluster or NodePool: given the cache as it is and
 * the instant now, what should this object look like? decide_plan() is the
 * one answer. It reads the object, the objects it depends on (its policy
 * through the stanza, its HostedCluster's timeline for a NodePool, its CAPI
 * Cluster, MachineDeployment or MachineSet, the hosted projection's state)
 * through a decide_view_t of callbacks, and returns a decide_plan_t that
 * nobody edits afterwards: the shell writes what it says, the scrape reports
 * it. The view only reads; where the shell keeps memoized resolutions it may
 * hand them out, otherwise the plan resolves into storage of its own, so
 * the answer is the same either way.
 */
#ifndef HCP_DECIDE_PLAN_H
#define HCP_DECIDE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "decide/decide.h"
#include "decide/hcfields.h"
#include "decide/slim.h"
#include "policy/stanza.h"
#include "schedule/schedule.h"

#define DECIDE_NSLEN 600 /* "<namespace>-<name>" of a control plane, NUL included */


/* One object as the view holds it; everything borrowed from the view and
 * valid until the cache changes. */
typedef struct decide_ref {
    const void *data;   /* the slim view, NULL when the object is not there */
    const char *rv;     /* metadata.resourceVersion */
    const char *uid;    /* metadata.uid */
} decide_ref_t;

/* The hosted ClusterVersion projection's state, as a view reports it. */
typedef struct decide_projection {
    bool known;                 /* false: nothing learnt yet, keep what is written */
    bool ok;                    /* the conditions are on the ClusterVersion */
    const char *reason;         /* static CamelCase */
    char message[DECIDE_MSGLEN];
} decide_projection_t;

/* A read-only view of the cache. Only get and lookup_policy are required. */
typedef struct decide_view {
    void *ud; /* passed to every callback */
    /* Build the plan's status_doc (a caller that writes status); a scrape,
     * which only reads the decision, leaves it false and saves the JSON. */
    bool status_doc;
    /* The admission webhooks hold NodePool changes where they start, so a
     * restricted pool's CAPI object is paused only in mid-rollout; without
     * them it is paused for as long as changes are restricted. */
    bool admission_holds;
    /* Cluster API is served to the controller as v1beta2 (a write of a
     * MachineDeployment's strategy names spec.rollout.strategy). */
    bool capi_v1beta2;
    /* Fills *out with the object of kind in ns/name; false when absent. */
    bool (*get)(void *ud, decide_kind_t kind, const char *ns, const char *name,
                decide_ref_t *out);
    /* Finds a policy for stanza_resolve(). */
    stanza_lookup_fn lookup_policy;
    /* Optional memo: the resolution of st for the object kind ns/name as the
     * shell keeps it (borrowed until the cache changes), or NULL to let the
     * plan resolve it. It must equal what stanza_resolve() gives. */
    const stanza_resolution_t *(*resolution)(void *ud, decide_kind_t kind, const char *ns,
                                             const char *name, const stanza_t *st);
    /* Optional memo: NodePool ns/name's intersection of own with cluster at
     * now, or NULL to let the plan compute it. It must equal what
     * stanza_resolve_nodepool() gives. */
    const stanza_nodepool_t *(*intersection)(void *ud, const char *ns, const char *name,
                                             sched_t *own, sched_t *cluster, sched_time_t now);
    /* Optional: the state HostedCluster ns/name's projection reports once it
     * is asked for the decision's ChangesPaused/ChangesPending. */
    void (*projection)(void *ud, const char *ns, const char *name, const decide_decision_t *d,
                       decide_projection_t *out);
    /* Optional: calls fn for every NodePool of HostedCluster ns/cluster
     * (spec.clusterName, same namespace), with its name and slim view
     * (borrowed for the call). Without it a HostedCluster's common window
     * counts no NodePool. */
    void (*nodepools)(void *ud, const char *ns, const char *cluster,
                      void (*fn)(const char *name, const decide_np_t *np, void *arg), void *arg);
    /* HostedClusters: compute the common window of the HostedCluster and
     * its NodePools (decide_plan_t.common) even when no request of the
     * fields that roll every NodePool is held (admission, explain). */
    bool common_window;
    /* Optional: calls fn for every CAPI MachineSet of namespace ns (its slim
     * view, borrowed for the call). A Replace pool's MachineDeployment whose
     * status says mid-rollout is read against its MachineSets: when every
     * one of them that has machines carries the MachineDeployment's own
     * revision, no machine is on an older template (the status was stale:
     * Cluster API computes its counters in two passes, and a pause stops
     * it from writing them again). Without it the status is taken as is. */
    void (*machinesets)(void *ud, const char *ns,
                        void (*fn)(const decide_capi_t *ms, void *arg), void *arg);
    /* Optional: true when the object (self) or its CAPI object (capi, data
     * NULL when none), as read, is older than what the caller itself wrote
     * (its watch has yet to catch up). The plan then stops before deciding:
     * deciding costs schedule queries, and its answer would be thrown away. */
    bool (*stale)(void *ud, decide_kind_t kind, const char *ns, const char *name,
                  const decide_ref_t *self, const decide_ref_t *capi);
    /* Optional: the guard rails' minTimeLeft for objects of namespace ns
     * (seconds, 0 none): the floor under every policy's (minleft.h). */
    sched_time_t (*min_time_left)(void *ud, const char *ns);
    /* Optional: the pre-start checks' verdict (check/check.h) on the held
     * change of object uid known by key (decide_plan_check_key()) for
     * system (CHECK_CONTROL_PLANE, CHECK_WORKER_NODES), into *out. Without
     * it no check applies. */
    void (*check)(void *ud, const char *uid, uint64_t key, unsigned system,
                  decide_check_t *out);
    /* Optional: the release waves' verdict (wave.h) on release version
     * ("" not known) held for a member of wave of system (WAVE_CONTROL_PLANE,
     * WAVE_NODEPOOL) at now, into *out. Without it nothing is sequenced. */
    void (*wave)(void *ud, unsigned system, int wave, const char *version, sched_time_t now,
                 wave_verdict_t *out);
    /* The health after a change (after.h): the settle and grace times in
     * seconds, 0 for the defaults. */
    sched_time_t after_settle, after_grace;
    /* Admission: the release images the write asks for (spec.release and,
     * for a HostedCluster, spec.controlPlaneRelease; NULL where it changes
     * none): the kind of change a scoped exclusion holds is the write's
     * (scope.h). Else the change held or pending on the object. */
    const char *asked[2];
} decide_view_t;

/* A closed decision about one HostedCluster or NodePool. */
typedef struct decide_plan {
    bool present;                 /* the object is in the view (else nothing else is set) */
    bool decided;                 /* d is set, and status_doc when the view asked for it */
    bool stale;                   /* the view called the inputs stale: nothing decided */
    decide_kind_t kind;           /* DECIDE_HC or DECIDE_NP */
    decide_ref_t self;            /* the object as read */
    const decide_managed_t *managed; /* its shared part (borrowed from self.data) */
    decide_kind_t capi_kind;      /* DECIDE_CLUSTER, DECIDE_MD or DECIDE_MS */
    decide_ref_t capi;            /* its CAPI object as read; data NULL when none */
    char capi_ns[DECIDE_NSLEN];   /* the CAPI object's namespace, "" when none */
    const char *capi_name;        /* its name (borrowed), NULL when none */
    policy_change_t change;       /* the kind of change planned for (scope.h) */
    const stanza_resolution_t *res;     /* the object's own timeline for that kind of
                                           change (NULL: failed) */
    const stanza_resolution_t *res_all; /* the object's own timelines, every kind's */
    const stanza_resolution_t *cluster; /* NodePools: the HostedCluster's, or NULL */
    const stanza_nodepool_t *inter;     /* NodePools: own within the cluster's */
    const decide_hc_t *hc;        /* NodePools: its HostedCluster as read (borrowed, like
                                     self.data), NULL when not in the view */
    decide_decision_t d;          /* what the object should look like */
    bool cluster_stanza;          /* NodePools: its HostedCluster has a stanza */
    bool opted_in;                /* NodePools: it or its HostedCluster has a stanza;
                                     HostedClusters: it or one of its NodePools has one
                                     (the fields that roll every NodePool are held for
                                     the pools' windows, hcfields.h) */
    /* Our opt-in label (DECIDE_OPTIN_LABEL) on the HostedCluster (it or one
     * of its NodePools has a stanza: opted_in), or
     * on a NodePool's MachineDeployment/MachineSet: +1 add it, -1 remove
     * it, 0 already right (or no such object, or the view does not have
     * the webhooks: admission_holds false). */
    int optin_label;
    /* NodePools: the same for the NodePool itself (the NodePool hold's
     * objectSelector). */
    int np_label;
    /* HostedClusters: when it and all its opted-in NodePools may change
     * (computed when a request of decide_hc_held_fields is held or the view
     * asked for it), and whether the held request goes through now. */
    decide_common_t common;
    bool fields_go;
    json_t *status_doc;           /* the companion's status as a function of the plan
                                     (decide_status_doc(), owned); NULL when the view did
                                     not ask for it or out of memory */
    /* Storage for what the view keeps no memo of. */
    stanza_resolution_t own_res, own_cluster;
    stanza_resolution_t kind_res, kind_cluster; /* res and cluster narrowed to the kind of
                                                   change (borrowed references) */
    stanza_nodepool_t own_inter;
    bool owns_res, owns_cluster, owns_inter;
    bool capi_v1beta2;        /* decide_view_t.capi_v1beta2 */
    decide_capi_t own_capi;   /* capi.data when the MachineSets correct its
                                 rolling (decide_view_t.machinesets); its
                                 strings are the cache's */
} decide_plan_t;

/* Plans HostedCluster or NodePool (kind) ns/name at now from the view v.
 * Returns 0 with *out filled (out->present false when the object is not in
 * the view), or a negative HCP_E* code with err filled when resolution or
 * the schedule engine failed (out->res may then still be set). Always
 * release *out with decide_plan_free(). */
int decide_plan(const decide_view_t *v, decide_kind_t kind, const char *ns, const char *name,
                sched_time_t now, decide_plan_t *out, char *err, size_t errlen);

/* Releases what the plan owns. */
void decide_plan_free(decide_plan_t *p);

/* The held change of p in words ("release <image>", "node rollout <what>",
 * "fields that roll every NodePool: ..."). */
void decide_plan_change_words(const decide_plan_t *p, char *buf, size_t len);

/* The pre-start checks' view of p's held change (check/check.h): true when
 * a change is held and its window is open (the gate decides) or opens
 * next, with *window its start, *key check_change_key() of the change in
 * words and that start, *system whose change it is. Called before the gate
 * is applied and after, it gives the same key. */
bool decide_plan_check_key(const decide_plan_t *p, sched_time_t *window, uint64_t *key,
                           unsigned *system);

/* What an object's previous decision saw, as the shell remembers it for
 * decide_unheld(). */
typedef struct decide_seen {
    bool known;          /* there was a previous decision (of this process) */
    bool restricted;     /* it was restricted */
    bool rolling;        /* NodePools: its MachineDeployment/MachineSet was mid-rollout */
    uint64_t release;    /* HostedClusters: decide_release_hash() of the release read */
    uint64_t rollout;    /* NodePools: which rollout its MachineDeployment/MachineSet is
                            on (Cluster API's revision, an InPlace target config
                            version), 0 when it cannot be told */
    uint64_t settled;    /* NodePools: the rollout seen last in a window, or ended */
} decide_seen_t;

/* The ChangesInitiated step (its Event and notification): true when the
 * decided plan p is the first since a held change was let through, told
 * once per change. let_through: a reconcile since the previous decision
 * wrote the application of a held request of this object (a release, a
 * NodePool's config or tuningConfig, the HostedCluster's fields that roll
 * every NodePool); it counts once the object no longer carries the request
 * (the write landed), whatever the pending state says, since a change of
 * configuration alone never shows as a pending version. Otherwise the
 * pending changes a pause kept blocked may now start: have_last, and the
 * previous decision's pending_metric last_pending was 2 where p's is 1.
 * Never while the object still carries a held request. */
bool decide_initiated(const decide_plan_t *p, bool have_last, int last_pending, bool let_through);

/* A hash of a release image for decide_seen_t (never 0; 0 for NULL). */
uint64_t decide_release_hash(const char *image);

/* The backstop of the admission holds (DESIGN.md 3.6): true when the
 * decided plan p shows a material change that started while the object was
 * restricted, which the webhooks would have held had the API server called
 * them (not installed, or failurePolicy Ignore with no replica answering).
 * A HostedCluster: restricted now and before, and the release read differs
 * from the previous one. A NodePool: restricted, its MachineDeployment/
 * MachineSet mid-rollout and not paused, where the previous decision was
 * restricted and saw no rollout, or where there is no previous decision
 * (nobody stopped that rollout at a window's close). A rollout the window's
 * close finds under way (the previous decision was permitted) is not one,
 * nor is it when it shows again after a moment of looking done (Cluster
 * API's counts and MachineSets change one at a time): a rollout counts only
 * if it is not the one seen last in a window or last ended (rollout,
 * settled), when it can be told.
 * Then fills *now (which may be prev) with what p shows, for the next call. */
bool decide_unheld(const decide_plan_t *p, const decide_seen_t *prev, decide_seen_t *now);

#endif
