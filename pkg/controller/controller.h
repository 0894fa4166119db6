/* controller: the imperative shell around the decision core.
 *
 * One controller watches HostedChangeManagementPolicies, HostedClusters,
 * NodePools and the CAPI Clusters, MachineDeployments and MachineSets into
 * slim caches, keeps a deduplicating work queue of objects to reconcile, and
 * arms one libev timer per object at its next window boundary (no polling).
 * A reconcile asks pkg/decide (decide_plan()) what the object should look
 * like and writes only what differs (DESIGN.md 3.3-3.7); /metrics asks the
 * same plan, read only. Only a leading controller writes; a follower keeps its caches
 * warm and takes over at once when it is elected, and meanwhile writes a held change
 * whose window opened that the leader leaves behind (standby.c).
 *
 * Everything runs on the caller's libev loop. The clock is injectable: with
 * a simulated start and a time scale, a week of windows passes in minutes.
 */
#ifndef HCP_CONTROLLER_CONTROLLER_H
#define HCP_CONTROLLER_CONTROLLER_H

#include "notify/due.h"
#include "notify/payload.h"
#include <ev.h>
#include <stdbool.h>
#include <stdint.h>

#include "hosted/hosted.h"
#include "kube/client.h"
#include "policy/policy.h"
#include "schedule/schedule.h"

/* The controller's clock: real time, or simulated time that starts at
 * sim_start when the controller starts and runs `scale` times faster. */
typedef struct ctl_clock {
    bool simulated;       /* false: wall-clock UTC */
    sched_time_t sim0;    /* simulated instant at real0 */
    double real0;         /* ev_now() when the clock started */
    double scale;         /* simulated seconds per real second (> 0) */
} ctl_clock_t;

/* The controller's current instant (seconds, UTC). */
sched_time_t ctl_clock_now(const ctl_clock_t *clk, struct ev_loop *loop);

/* Real seconds from now until the simulated or real instant t (>= 0). */
double ctl_clock_delay(const ctl_clock_t *clk, struct ev_loop *loop, sched_time_t t);

typedef struct ctl_options {
    const char *watch_namespace; /* watch policies, HostedClusters and NodePools of
                                    this namespace only; NULL or "" for all */
    ctl_clock_t clock;           /* the clock every decision uses */
    bool leading;                /* start as the writer (no leader election) */
    bool rewrite_hosted_server;  /* reach hosted API servers at
                                    kube-apiserver.<hcp-namespace>.svc (in a cluster)
                                    instead of the Secret's address as written */
    double hosted_period;        /* seconds between checks of each hosted
                                    ClusterVersion; 0 = hosted's default */
    /* Called (when set and leading) for each step due (DESIGN.md 3.9,
     * notify/due.h): held, window-soon, initiated, completed, failed,
     * health-gate-skipped, release-withdrawn, override-set, override-expired, withdrawn. ev, d and their
     * strings are valid during the call only. The caller tells
     * ctl_notified() once every endpoint took it. */
    void (*notify)(const notify_event_t *ev, const notify_due_t *d, void *ud);
    void *notify_ud;
    const notify_config_t *notify_cfg; /* the leads; borrowed, NULL: no notifications */
    /* The users whose writes never withdraw a held request (DESIGN.md 3.13:
     * HyperShift's ServiceAccounts and the controller's own), read by the
     * holds; NULL-terminated, borrowed; NULL: none. */
    const char *const *hypershift_users;
    /* Delete the older template's machines that fail their health check
     * while a drift is held, which Cluster API leaves to the deferred
     * rollout (remediate.c). */
    bool remediate_drift;
    /* The pre-start checks of other systems (DESIGN.md 3.15, check/call.h):
     * asked about each held change its lead before the window; their
     * verdict is the last stage of the gate. Borrowed; NULL: none. */
    struct check_runner *checks;
    /* A replica that does not lead writes a held change its plan lets
     * through when, this many real seconds after, it is still held and no
     * held change was seen let through meanwhile (the leader is gone:
     * standby.c); 0 never. */
    double standby_after;
} ctl_options_t;

/* Counters the metrics endpoint exports. */
typedef struct ctl_stats {
    uint64_t reconciles;       /* reconciles run */
    uint64_t writes;           /* patches and creates sent */
    uint64_t write_errors;     /* writes that failed */
    uint64_t conflicts;        /* writes refused with 409 (retried) */
    uint64_t reasserts;        /* pauses re-asserted after another writer removed them */
    uint64_t events;           /* Kubernetes Events created */
    uint64_t unheld[2];        /* material changes that started while restricted,
                                  not held at admission (a webhook that was not
                                  called), caught by the watch: [0] control
                                  plane (HostedClusters), [1] worker nodes
                                  (NodePools) */
    uint64_t gate_holds[2];    /* held changes a failing health gate kept held
                                  when changes were permitted (DESIGN.md 3.10),
                                  counted once per failing spell: [0]
                                  HostedClusters, [1] NodePools */
    uint64_t rec_holds;        /* held releases kept held because they are no longer
                                  recommended for their cluster, once per spell */
    uint64_t check_holds;      /* held changes a refusing pre-start check kept held in
                                  their window, once per spell */
    uint64_t hold_aging[2];    /* held changes told aging (HoldAging, decide/aging.h), once
                                  per occasion: [0] HostedClusters, [1] NodePools */
    uint64_t unhealthy_after[2]; /* completed changes found unhealthy after them
                                  (DESIGN.md 3.15), once per change: [0] control
                                  plane (HostedClusters), [1] worker nodes (NodePools) */
    uint64_t standby_releases; /* held changes this replica let through while it did not
                                  lead (standby.c), seen landed */
    uint64_t standby_conflicts; /* of its writes of them, those another replica's write
                                  preceded (409) */
    uint64_t plans_parked;     /* plans made while held releases flew that let none
                                  through, set aside to wait for them (reconcile.c) */
    uint64_t drift_remediations; /* machines of an older template deleted for their failed
                                  health check while a drift was held (remediate.c) */
    double reconcile_seconds;  /* total time spent reconciling */
    double last_write_at;      /* Unix time the API server last acknowledged a
                                  write; 0 before the first */
    uint64_t latency_buckets[8]; /* reconcile latency histogram, see ctl_latency_bounds */
} ctl_stats_t;

/* Upper bounds (seconds) of the reconcile latency buckets; the last is +Inf. */
extern const double ctl_latency_bounds[8];

typedef struct ctl_controller ctl_controller_t;

/* An answer of a pre-start check about HostedCluster or NodePool (kind)
 * ns/name came: decide it again (check/call.h's changed callback). */
void ctl_check_answered(ctl_controller_t *c, const char *kind, const char *ns, const char *name);

/* The pre-start checks' runner (ctl_options_t.checks), NULL when none. */
const struct check_runner *ctl_check_runner(const ctl_controller_t *c);


/* Starts a controller on loop using client (both borrowed, must outlive it).
 * Returns 0 with *out, or a negative HCP_E* code with err filled. */
int ctl_start(struct ev_loop *loop, kube_client *client, const ctl_options_t *opts,
              ctl_controller_t **out, char *err, size_t errlen);

/* Stops every watch, timer and request, then frees the controller. Not to be
 * called from the controller's own callbacks. */
void ctl_stop(ctl_controller_t *c);

/* True once every cache has completed its first list. */
bool ctl_synced(const ctl_controller_t *c);

/* Makes the controller the writer (true) or a follower (false). Becoming
 * the writer reconciles every object. */
void ctl_set_leading(ctl_controller_t *c, bool leading);

/* The API server answers again after requests got no answer (an outage, a
 * restart): a leader decides every object again at once, so that a write
 * that failed (a held change at a window that opened meanwhile) does not
 * wait for its backoff (up to a minute). */
void ctl_api_back(ctl_controller_t *c);

/* True when the queue is empty and no write is in flight (for tests, the
 * demo and benchmarks). */
bool ctl_idle(const ctl_controller_t *c);

const ctl_stats_t *ctl_get_stats(const ctl_controller_t *c);

/* True while this controller is the writer. */
bool ctl_leading(const ctl_controller_t *c);

/* A replica that does not lead writes held changes the leader leaves
 * behind after `after` seconds (ctl_options_t.standby_after); <= 0 never
 * again (a replica shutting down). */
void ctl_set_standby(ctl_controller_t *c, double after);

/* The guard rails' holdAgeWarning in force, seconds (decide/aging.h); 0
 * when held changes are never told aging. */
sched_time_t ctl_hold_age_warning(const ctl_controller_t *c);

/* Watch streams restarted (errors, watchdog, 410 Gone relists), all watches. */
uint64_t ctl_watch_restarts(const ctl_controller_t *c);

/* Calls fn for each collection watched so far (its resource, e.g.
 * "hostedclusters") with its list requests (pages: the first list and the
 * relists after 410 Gone). */
void ctl_foreach_watch_lists(const ctl_controller_t *c,
                             void (*fn)(const char *resource, uint64_t lists, void *ud),
                             void *ud);

/* One managed object's state as the metrics endpoint reports it, computed
 * from the cache and the clock at the time of the call (DESIGN.md 3.8). */
typedef struct ctl_object_metrics {
    const char *kind;        /* "HostedCluster" or "NodePool" */
    const char *ns, *name;   /* borrowed for the duration of the callback */
    const char *system;      /* "control-plane" or "worker-nodes" */
    const char *strategy;    /* static: the strategy in force,
                                stanza_enforced_strategy() */
    const char *stanza;      /* static: the stanza as written,
                                stanza_configured_strategy() */
    int change_pending;      /* 0 none, 1 being initiated, 2 blocked */
    double next_change_eta;  /* seconds; -2 error, -1 paused indefinitely, 0 permitted */
    double permissive_remaining; /* seconds; -2 error, -1 indefinitely, 0 not permitted */
    double last_change;      /* seconds since changes were last permitted; -1 unknown, 0 now */
    double held_age;         /* seconds the held change has waited since its request
                                (decide/aging.h); -1 when none is held or its start is
                                not known */
} ctl_object_metrics_t;

/* Calls fn for every HostedCluster and NodePool with its metric values at
 * the controller's current instant, planned as reconcile plans them
 * (decide_plan()) without creating or keeping any per-object state. */
void ctl_foreach_object_metrics(ctl_controller_t *c,
                                void (*fn)(const ctl_object_metrics_t *m, void *ud), void *ud);

/* One object's effective timeline, for the calendar feed. */
typedef struct ctl_timeline {
    const char *kind;          /* "HostedCluster" or "NodePool" */
    const char *ns, *name;     /* borrowed for the duration of the callback */
    const char *system;        /* "control-plane" or "worker-nodes" */
    const char *hostedcluster; /* the HostedCluster (the object itself, or the
                                  NodePool's spec.clusterName) */
    sched_t *sched;            /* borrowed: the HostedCluster's timeline, or the
                                  NodePool's intersection with it */
    const policy_t *policies[2]; /* borrowed: the policies behind it (the
                                    object's, then its HostedCluster's) */
    size_t n_policies;
    sched_time_t min_left;     /* the minimum time left in force at now
                                  (decide/minleft.h; 0 none) */
    sched_time_t held_from;    /* the release waves hold its held change until this
                                  instant (SCHED_POS_INF: no instant known yet), 0
                                  when they hold nothing (policy/ics.h) */
    const char *held_why;      /* held_from: what is held and why, borrowed */
} ctl_timeline_t;

/* The controller's current instant (its clock: real or simulated). */
sched_time_t ctl_now(const ctl_controller_t *c);

/* Calls fn for every HostedCluster of namespace ns (only hc when not NULL)
 * and every NodePool of those HostedClusters, with its effective timeline
 * planned at now as the scrape plans (nothing created or kept). */
void ctl_foreach_timeline(ctl_controller_t *c, const char *ns, const char *hc, sched_time_t now,
                          void (*fn)(const ctl_timeline_t *t, void *ud), void *ud);

/* The calendar feed of a path: "/calendar/<namespace>.ics" holds the
 * effective windows of every HostedCluster of the namespace (control plane)
 * and of each of their NodePools (the intersection with the cluster's), and
 * "/calendar/<namespace>/<hostedcluster>.ics" those of one HostedCluster and
 * its NodePools, from the controller's now for ICS_FEED_DAYS days, with the
 * exclusions of the policies behind them (policy/ics.h). Planned per call
 * as the scrape plans: nothing is created or kept. Renders into *out
 * (zero-initialised by the caller; free with ics_free()) and returns 200,
 * 404 for a path that names no feed or a HostedCluster not in the cache,
 * or 500 when out of memory or the schedule engine failed. */
struct ics;
int ctl_calendar_render(ctl_controller_t *c, const char *path, struct ics *out);

/* Splits a calendar path, "/calendar/<ns>.ics" or "/calendar/<ns>/<hc>.ics",
 * into ns and hc (each CTL_CALENDAR_NAMELEN bytes; hc "" for a namespace's
 * feed), both DNS-1123 names. Returns 1, or 0 when the path names no feed.
 * The endpoint's authorization asks about the namespace this returns. */
#define CTL_CALENDAR_NAMELEN 254
int ctl_calendar_path(const char *path, char *ns, char *hc);

/* One HostedChangeManagementPolicy's readiness for the metrics endpoint. */
typedef struct ctl_policy_metrics {
    const char *ns, *name;   /* borrowed for the duration of the callback */
    bool ready;              /* the spec is valid (the Ready condition is True) */
} ctl_policy_metrics_t;

/* Calls fn for every policy in the cache. */
void ctl_foreach_policy_metrics(ctl_controller_t *c,
                                void (*fn)(const ctl_policy_metrics_t *m, void *ud), void *ud);

/* Every endpoint took the notification of step d about the HostedCluster
 * or NodePool (kind "HostedCluster" or "NodePool") ns/name: recorded, and
 * written to its NOTIFY_MARKS_ANNOTATION (by the replica that sent it,
 * leading or not any more), so that a restarted controller does not
 * notify it again within the window. */
void ctl_notified(ctl_controller_t *c, const char *kind, const char *ns, const char *name,
                  const notify_due_t *d);

/* A notification endpoint keeps failing: a Warning Event
 * NotificationEndpointFailing on the object whose notification failed
 * (leader only). */
/* True when every step this replica delivered is in the notified marks of
 * its object as the cache has it (written and seen back), or the object is
 * gone: a shutdown that waits for it sends nothing again after a restart. */
bool ctl_notify_flushed(const ctl_controller_t *c);

void ctl_notify_failing(ctl_controller_t *c, const char *kind, const char *ns, const char *name,
                        const char *endpoint, const char *why);


/* Sets the guard rails the validating webhooks enforce and the plan's
 * minimum time left reads (copied), or none
 * when cfg is NULL or enforces no limit. Takes effect for the next
 * request. */
struct guard_config;
void ctl_set_guard(ctl_controller_t *c, const struct guard_config *cfg);

/* Sequences held releases by the release waves of cfg (decide/wave.h,
 * DESIGN.md 3.14; NULL or nothing configured: off). Call it before the
 * caches fill (right after ctl_start(), before the loop runs). Returns 0
 * or HCP_ENOMEM. */
struct wave_config;
int ctl_set_waves(ctl_controller_t *c, const struct wave_config *cfg);

/* The release waves' counts per (system, wave, release, state)
 * (wave_index_counts()); nothing when off. */
void ctl_foreach_wave_count(const ctl_controller_t *c,
                            void (*fn)(unsigned system, const char *wave, const char *release,
                                       const char *state, double n, void *ud),
                            void *ud);

/* The release waves' sums made so far (decide/wave.h), 0 when off. */
uint64_t ctl_wave_sums(const ctl_controller_t *c);

/* The hosted ClusterVersion projection's counters (borrowed, live). */
const hosted_stats_t *ctl_get_hosted_stats(const ctl_controller_t *c);

#endif
