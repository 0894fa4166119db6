/* internal: what the files of pkg/controller share, and nobody else sees.
 *
 * The controller reads like controller-runtime's pieces, one file each:
 *   controller.c  wiring: caches, watches, CAPI discovery, start/stop, clock
 *   handlers.c    cache events -> keys to enqueue (they decide nothing), and
 *                 the extractors that slim objects down as they arrive
 *   queue.c       records, the deduplicating work queue, timers
 *   reconcile.c   plan (pkg/decide) -> writes, Events, hosted projection
 *   write.c       the writer (write.h): in-flight writes, conflicts, staleness
 *   standby.c     a held change the leader leaves, written by a follower
 *   cmlabel.c     the opted-in label on the ConfigMaps a NodePool names
 *   companion.c   each object's HostedChangeManagementStatus brought to its plan
 *   scrape.c      /metrics values: the same plan, read only
 */
#ifndef HCP_CONTROLLER_INTERNAL_H
#define HCP_CONTROLLER_INTERNAL_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/controller.h"
#include "controller/planview.h"
#include "controller/pools.h"
#include "controller/queue.h"
#include "controller/write.h"
#include "decide/companion.h"
#include "hosted/cv.h"
#include "decide/plan.h"
#include "hosted/hosted.h"
#include "kube/cache.h"
#include "kube/objmap.h"
#include "kube/watch.h"
#include "policy/guard.h"
#include "policy/policy.h"
#include "policy/stanza.h"

#define HS_GROUP CTL_HS_GROUP
#define HS_VERSION "v1beta1"
#define CM_GROUP CTL_CM_GROUP
#define CM_VERSION "v1alpha1"
#define CAPI_GROUP CTL_CAPI_GROUP
#define PATH_MAX_LEN 768

typedef enum rkind {
    R_POLICY,
    R_HC,
    R_NP,
    R_CM,  /* a ConfigMap's opted-in label */
    R_REM, /* a MachineSet whose older-template machines wait for remediation */
} rkind_t;

/* What an object's /metrics values are computed from, as one plan left it
 * (view.c: ctl_plan_inputs()); the values themselves depend on now. */
typedef struct ctl_metric_inputs {
    const char *strategy;    /* static; NULL when the stanza did not resolve:
                                the strategy in force before strategy_switch
                                (stanza_enforced_strategy()) */
    const char *strategy_after; /* static: the one in force from strategy_switch on */
    sched_time_t strategy_switch; /* an override's instant; SCHED_NEG_INF when none */
    const char *stanza;      /* static: the stanza as written (stanza_configured_strategy()) */
    bool decided;            /* state and pending are set */
    bool degraded;           /* a timeline (own or the HostedCluster's) is in error */
    sched_state_t state;
    decide_minleft_t minleft; /* the minimum time left and the effective start */
    int pending;
    sched_time_t held_since; /* decide_held_since(): SCHED_NEG_INF none */
} ctl_metric_inputs_t;

/* What the controller remembers of one managed object between reconciles. */
typedef struct record {
    kube_objkey_t key;       /* kind, ns and name in the controller's map */
    ctl_qitem_t q;           /* work queue link */
    ctl_wtarget_t wt;        /* the writer's per-object state */
    ctl_controller_t *ctl;
    rkind_t kind;
    char *ns, *name;         /* owned */
    ev_timer timer;          /* next window boundary, or a retry */
    bool gone;               /* the object was deleted; free when idle */
    double retry;            /* next retry delay after a failed write */
    bool have_last;          /* the fields below hold the previous decision */
    bool last_restricted;
    int last_pending;
    bool let_through;        /* a reconcile since the last decision wrote the
                                application of a held request (decide_initiated()) */
    bool initiated;          /* this decision tells ChangesInitiated (its notification
                                step reads it) */
    bool last_gate_failed;   /* the previous decision was held by the health gate */
    const char *last_gate_reason; /* its reason (decide_gate_t.reason, static), NULL */
    bool release_unchecked;  /* the held release let through was not checked against the
                                update graph (told in ChangesInitiated) */
    bool wave_skipped;       /* ... and an override let it past the release waves */
    const char *last_wave_reason; /* the release waves held the last decision: its reason
                                (static), NULL none */
    bool last_min_left;      /* the previous decision was held by the minimum time left */
    sched_time_t last_aging; /* the last aging occasion told in a HoldAging Event
                                (decide/aging.h), 0 none */
    char reassert_rv[32];    /* the CAPI object's version the last re-assertion was told
                                on, "" when the pause was seen in place since */
    sched_time_t last_after; /* the completion of the change last told unhealthy after it
                                (decide/after.h), 0 none */
    bool last_cp_first;      /* the previous decision held a NodePool's request
                                for its control plane (decide_cp_first_apply()) */
    uint64_t last_override;  /* hash of the override record last told (audit), 0 none */
    uint64_t last_request;   /* hash of the held-request record last told, 0 none */
    uint64_t last_withdrawn; /* hash of the withdrawal record last told, 0 none */
    /* Notifications (notify/due.h): the steps handed to the sender by this
     * process, and those every endpoint took (written to the object's
     * notified annotation); NULL until a step is first handed over (most
     * objects of a fleet never have one: 656 bytes each otherwise). */
    struct record_marks *marks;
    bool last_valid;         /* policies: last seen validity */
    decide_seen_t seen;      /* what the previous decision saw (decide_unheld()) */
    /* HostedClusters and NodePools: the resolved stanza, kept until the
     * object changes or a policy is added, removed or edited (a resolution
     * depends on nothing else, and not on time). */
    bool have_res;
    uint64_t res_epoch;      /* the controller's policy_epoch when resolved */
    stanza_resolution_t res;
    /* NodePools: the intersection with the cluster's timeline as computed
     * at inter_from; its answers (next windows) hold until inter_until as
     * long as both timelines are the same objects. */
    bool have_inter;
    sched_t *inter_cluster;  /* reference: the cluster timeline intersected */
    sched_time_t inter_from, inter_until;
    stanza_nodepool_t *inter; /* allocated at the first (NodePools only) */
    /* HostedClusters and NodePools: the metric inputs of the last plan, for
     * the scrape. Current until the plan's wake instant, while the policy
     * epoch is the same and until the record is queued again (every event
     * that can change its plan queues it). */
    bool have_metrics;
    uint64_t metrics_epoch;
    sched_time_t metrics_until;
    ctl_metric_inputs_t metrics;
    /* ConfigMaps (cmlabel.c): the last label patch found none, logged once. */
    bool rem_listing;        /* R_REM: its Machines' LIST is in flight */
    bool cm_absent;
    double cm_retry;         /* next try of an absent ConfigMap, seconds */
    /* A replica that does not lead (standby.c), real time (ev_time()): */
    double sb_due;           /* when its plan first let the held change through, 0 none */
    bool sb_mine;            /* it wrote the held change itself (not answered 409) */
    char sb_rv[32];          /* the version that write was made on */
    double sb_told;          /* when what it wrote landed, 0 none: told if it
                                leads soon (ctl_standby_told()) */
} record_t;

/* A record's notification marks (record_t.marks). */
typedef struct record_marks {
    notify_marks_t told, delivered;
} record_marks_t;

/* The record that embeds `field` at ptr. */
#define RECORD_OF(field, ptr) ((record_t *)((char *)(ptr) - offsetof(record_t, field)))

/* A parsed policy, shared by the cache entries of one generation: a status
 * write does not change the spec, so its answer keeps the parsed policy and
 * the schedule's memory of expanded windows. */
typedef struct policy_shared {
    int refs;
    policy_t *p;
} policy_shared_t;

/* The slim view a policy's cache keeps: the parsed policy and the status
 * last written, whose history the next status extends. */
typedef struct policy_entry {
    policy_t *p;             /* borrowed from shared */
    policy_shared_t *shared;
    json_t *status;
} policy_entry_t;

/* A replica that does not lead, watching the held changes whose window
 * opened (standby.c). Times are real (ev_time()). */
typedef struct ctl_standby {
    double after;               /* seconds a change stays due, with nobody letting one
                                   through, before this replica writes it; 0 never */
    bool off;                   /* never (ctl_set_standby(), a replica shutting down) */
    double seen;                /* a change due here was last let through by another
                                   writer, or this replica stopped leading */
    ev_timer timer;             /* the next instant a waiting change may go */
    double at;                  /* when the timer fires */
} ctl_standby_t;

struct ctl_controller {
    struct ev_loop *loop;
    kube_client *client;
    ctl_options_t opts;
    char *ns_filter;            /* owned copy of watch_namespace or NULL */
    bool leading;
    bool admission_holds;       /* the webhooks are registered (ctl_admission_register) */
    bool guard_set;             /* guard rails enforced at admission (ctl_set_guard) */
    guard_config_t guard;       /* their limits and exemptions, when guard_set */
    wave_index_t *waves;        /* the release waves (ctl_set_waves(), waves.c), NULL off */
    sched_time_t after_settle, after_grace; /* the health after a change (decide/after.h):
                                   the guard rails' file's times, 0 the defaults */
    bool rails_set;             /* a guard rails' file was read (rails holds it) */
    guard_config_t rails;       /* the file as read, enforced or not: its exemptions
                                   apply to maxNodePoolSkew too */
    int max_skew;               /* maxNodePoolSkew in force (decide/skew.h) */
    sched_time_t hold_age;      /* holdAgeWarning as decide_aging() takes it
                                   (decide_aging_warning()): <= 0 never told */
    char capi_version[32];      /* discovered, "" until known */
    sched_time_t started;       /* the controller's clock at ctl_start() */

    kube_cache policies, hcs, nps, clusters, mds, mss;
    ctl_pools_t pools;          /* the NodePools of each HostedCluster (pools.h) */
    kube_cache companions;      /* HostedChangeManagementStatus: data is its digest,
                                   packed (decide_companion_pack(), a decide_packed_t) */
    kube_cache cms;             /* the ConfigMaps that carry DECIDE_OPTIN_LABEL (a
                                   watch with that label selector; metadata only) */
    kube_cache cals;            /* the ConfigMaps that carry POLICY_CALENDAR_LABEL (a
                                   watch with that label selector): data is
                                   their `data` object (json_t), read as
                                   exclusion calendars (calendars.c) */
    kube_cache evid;            /* the release waves' evidence ConfigMaps of other
                                   management clusters (evidence.c): data is what
                                   each says (ctl_evidence_t) */
    kube_watch w_policies, w_hcs, w_nps, w_clusters, w_mds, w_mss, w_companions, w_cms,
        w_cals, w_evid;
    ev_timer evid_timer;        /* publishes this cluster's evidence (evidence.c) */
    bool evid_dirty;            /* what this management cluster tells the waves changed */
    kube_request *evid_req;     /* the publication in flight */
    char *evid_sent;            /* the evidence text last published, NULL none */
    bool evid_too_big;          /* said once: the evidence exceeds a ConfigMap */
    bool capi_started;
    kube_request *discovery;    /* in flight */
    ev_timer discovery_retry;

    kube_objmap_t records;      /* record_t by kind/ns/name */
    ctl_queue_t queue;          /* records to reconcile */
    void (*reconcile)(ctl_controller_t *c, record_t *r); /* what the drain
                                   calls for each (ctl_reconcile(), set by the wiring) */
    ev_check qcheck;            /* drains the queue after each poll */
    ev_idle qidle;              /* keeps the loop spinning while work is queued */
    ctl_writer_t writer;        /* writes in flight */
    uint64_t policy_epoch;      /* bumped when a policy appears, goes or is edited */
    hosted_t *proj;             /* hosted ClusterVersion projection */
    ctl_standby_t standby;      /* held changes a leader leaves behind (standby.c) */
    ctl_stats_t stats;
};

/* controller.c */
/* Makes c's records, caches, queue and writer empty: every constructor of a
 * controller calls it (ctl_start, and the tests and benches that fill one by
 * hand), on a c that comes zeroed with c->loop and c->client set (the
 * client may be NULL where nothing is written); nbuckets sizes the
 * records. Returns 0 or HCP_ENOMEM. */
int ctl_state_init(ctl_controller_t *c, size_t nbuckets);

/* notify.c */
/* Notifications: the steps p's state calls for, handed to opts.notify
 * (leader only); the next instant the steps due can change by time alone. */
void ctl_notify_steps(ctl_controller_t *c, record_t *r, const decide_plan_t *p, const char *kind,
                      sched_time_t now);
sched_time_t ctl_notify_wake(ctl_controller_t *c, const decide_plan_t *p, sched_time_t now);

/* The pre-start checks of p's held change (checks.c): asked once its lead
 * before the window is reached (leader only), forgotten when nothing is
 * held. Returns the instant of the lead when it is still ahead, else
 * SCHED_POS_INF. */
sched_time_t ctl_checks_ask(ctl_controller_t *c, const record_t *r, const decide_plan_t *p,
                            sched_time_t now);
/* True when a pre-start check applies to p's held change (its answers are
 * the leader's alone). */
bool ctl_checks_apply(const ctl_controller_t *c, const decide_plan_t *p);

/* Release waves (waves.c, decide/wave.h). The wave and what a HostedCluster
 * tells the waves, read as it is cached (extract_hc); 0 or HCP_ENOMEM. */
int ctl_wave_extract(ctl_controller_t *c, const json_t *obj, decide_hc_t *hc);
/* HostedCluster o came (old NULL), changed (old: as it was) or went
 * (gone): the index learns it, and when what the waves read changed, the
 * held releases of later waves are decided again. */
void ctl_wave_member(ctl_controller_t *c, const kube_obj *o, const kube_obj *old, bool gone);
/* NodePool o came, changed or went (gone): the same, in its
 * HostedCluster's wave. */
void ctl_wave_pool(ctl_controller_t *c, const kube_obj *o, bool gone);
/* What p's decision said of its held release, for the waves' counts
 * (wave_index_note_held()). */
void ctl_wave_note(ctl_controller_t *c, const record_t *r, const decide_plan_t *p);
/* Starts the watch w of resource in namespace ns (NULL every one) with
 * label selector (NULL none) into cache; 0 or an error in err. */
int ctl_start_watch(ctl_controller_t *c, kube_watch *w, kube_cache *cache, const char *group,
                    const char *version, const char *resource, const char *ns,
                    const char *selector, char *err, size_t errlen);
/* Something the waves read changed in wave (WAVE_UNASSIGNED: in none):
 * the held releases of the HostedClusters and NodePools of later waves are
 * decided again. */
void ctl_wave_told(ctl_controller_t *c, int wave);
/* The release waves' evidence across management clusters (evidence.c,
 * decide/evidence.h): the watch of the other clusters' ConfigMaps and the
 * publication of this one's, started when the waves name evidence; 0 or
 * an error in err. */
extern const kube_cache_ops ctl_evidence_ops;
int ctl_evidence_start(ctl_controller_t *c, char *err, size_t errlen);
void ctl_evidence_stop(ctl_controller_t *c);
/* The view's wave callback (decide_view_t.wave). */
void ctl_wave_verdict(void *ud, unsigned system, int wave, const char *version, sched_time_t now,
                      wave_verdict_t *out);
/* The notified annotation, written when what this replica delivered is not
 * on the object yet: by the leader before its steps, and by a replica that
 * no longer leads, for what it delivered while it led. Not by the reconcile
 * that lets a held change through: it writes nothing else, and the marks
 * follow on the next. */
void ctl_notify_marks(ctl_controller_t *c, record_t *r, const decide_plan_t *p);

/* queue.c */
record_t *ctl_record_get(ctl_controller_t *c, rkind_t k, const char *ns, const char *name);
record_t *ctl_record_find(const ctl_controller_t *c, rkind_t k, const char *ns,
                          const char *name);
void ctl_record_drop_res(record_t *r);
void ctl_record_drop_inter(record_t *r);
void ctl_record_forget(ctl_controller_t *c, record_t *r);
void ctl_record_free(record_t *r);
void ctl_enqueue(ctl_controller_t *c, rkind_t k, const char *ns, const char *name);
void ctl_queue_drain(struct ev_loop *loop, ev_check *w, int revents);
void ctl_queue_kick(ctl_controller_t *c);
void ctl_arm(ctl_controller_t *c, record_t *r, sched_time_t when);
void ctl_arm_retry(ctl_controller_t *c, record_t *r);
/* The next failure of r waits the shortest retry again. */
void ctl_retry_reset(record_t *r);
/* The records that waited in the writer's lane (ctl_write_wait()) go back
 * to the queue, in the order they waited, once no held release flies. */
void ctl_queue_resume(ctl_controller_t *c);

/* reconcile.c */
/* Decides record r again and writes what differs (c->reconcile, called by
 * the queue's drain). */
void ctl_reconcile(ctl_controller_t *c, record_t *r);
/* The writer's settle callback (ctl_writer_t.settled). */
void ctl_write_settled(ctl_wtarget_t *t, ctl_write_outcome_t outcome, void *ud);

/* view.c */
/* The controller's read-only view for decide_plan(); memoize: whether the
 * resolutions it computes are kept on the records (reconcile) or only
 * those already kept are handed out (scrape); reconcile's view also asks
 * for the status document, which a scrape does not need. */
void ctl_view_init(ctl_controller_t *c, bool memoize, decide_view_t *v);
/* The metric inputs of plan p, left on its record. */
void ctl_plan_inputs(const decide_plan_t *p, ctl_metric_inputs_t *out);


/* companion.c */
/* Brings the companion of record r (a HostedCluster or NodePool) to plan p
 * at now: created when missing, replaced when its content differs, nothing
 * when it is right; deleted when p is NULL (the object is gone) or p is
 * decided and says the object has no stanza. Leader only. */
void ctl_companion_sync(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                        sched_time_t now);

/* cmlabel.c */
extern const kube_cache_ops ctl_cm_ops;
/* Queues the ConfigMap records of names (one a line, as
 * decide_np_config_names() returns them; NULL is none) in namespace ns;
 * absent_only: only those whose last label patch found no ConfigMap. */
void ctl_cm_enqueue_names(ctl_controller_t *c, const char *ns, const char *names,
                          bool absent_only);
/* Brings ConfigMap record r's opted-in label to what the NodePools say
 * (decide_cm_named()): one merge patch at most; the record is forgotten
 * when nothing is to be written. Leader only, and only with the webhooks. */
void ctl_reconcile_cm(ctl_controller_t *c, record_t *r);
/* The label patch of r found no ConfigMap: logged once, tried again later. */
void ctl_cm_absent(ctl_controller_t *c, record_t *r);

/* remediate.c */
/* Queues MachineSet ms's remediation record when it reports machines to
 * remediate as an older revision of a MachineDeployment whose drift is
 * held, or when it has one (to forget it). */
void ctl_rem_enqueue(ctl_controller_t *c, const kube_obj *ms);
/* Deletes the machines of record r's MachineSet that Cluster API declined
 * to remediate for their revision while a drift is held (one LIST, then a
 * conditional delete each); the record is forgotten when nothing is left
 * to do. Leader only, with opts.remediate_drift. */
void ctl_reconcile_rem(ctl_controller_t *c, record_t *r);

/* standby.c */
void ctl_standby_init(ctl_controller_t *c);
void ctl_standby_stop(ctl_controller_t *c);
/* c stopped (was) or started leading. */
void ctl_standby_lead(ctl_controller_t *c, bool was, bool leading);
/* A replica that does not lead, after deciding record r (plan p; releasing:
 * the plan lets a held change through): true when it writes the held change
 * now (standby.c says when); else it waits for that instant. Notes a change
 * due here let through by another writer. */
bool ctl_standby_takes(ctl_controller_t *c, record_t *r, const decide_plan_t *p, bool releasing);
/* The answer to the held change r's standby wrote: landed (counted, told
 * if it leads soon), held back by a webhook (written again), or a 409
 * (another replica wrote first). */
void ctl_standby_answered(ctl_controller_t *c, record_t *r, ctl_write_outcome_t outcome,
                          const json_t *answer);
/* Before the leader tells r's transitions: a change this replica let
 * through as a standby is told only when it leads soon after. */
void ctl_standby_told(record_t *r);

/* calendars.c */
extern const kube_cache_ops ctl_calendar_ops;
/* policy_configmap_fn over the calendar cache (ud: the controller). */
const json_t *ctl_calendar_data(const char *ns, const char *name, void *ud);

/* handlers.c */
/* A policy appeared, went or changed what it permits (its spec, one of its
 * exclusion calendars): every resolution may change, and anything in its
 * namespace may reference it. A cache callback (ud: the controller). */
void ctl_policy_changed(const kube_obj *o, void *ud);
extern const kube_cache_ops ctl_policy_ops, ctl_hc_ops, ctl_np_ops, ctl_cluster_ops,
    ctl_machines_ops, ctl_machinesets_ops, ctl_companion_ops;
void ctl_enqueue_all(ctl_controller_t *c);
/* Splits a NodePool reference "<namespace>/<name>" (the nodePool annotation
 * of a MachineDeployment/MachineSet): the namespace into ns (len bytes),
 * *name into ref. False when it is no such reference or ns is too small. */
bool ctl_nodepool_ref(const char *ref, char *ns, size_t len, const char **name);


/* What HostedCluster ns/name's projection writes into the hosted
 * ClusterVersion for its decision d, with its NodePools from the index
 * (hosted_want(); *cv holds the strings). */
hosted_conds_t ctl_hosted_want(ctl_controller_t *c, const char *ns, const char *name,
                               const decide_decision_t *d, hosted_cv_t *cv);

#endif
