/* slim: the slim views of API objects that the controller decides from.
 *
 * The watch cache never keeps whole documents. For each kind this module
 * extracts exactly the fields the decisions need (DESIGN.md 3.3-3.7), parsed
 * once at watch time: the changeManagement stanza, pending-change signals, and
 * the pause annotations of the CAPI objects. Extraction is pure and treats
 * every byte as untrusted: a field of the wrong type reads as absent, and an
 * unusable stanza is kept (as invalid) so that the object resolves to
 * Restrictive with a message rather than disappearing.
 *
 * Ownership: every decide_*_extract() returns a new struct freed with the
 * matching decide_*_free(); json_t members hold their own references.
 */
#ifndef HCP_DECIDE_SLIM_H
#define HCP_DECIDE_SLIM_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "decide/audit.h"
#include "decide/gate.h"
#include "decide/packed.h"
#include "policy/stanza.h"

/* The annotation CAPI honours to stop reconciling an object. */
#define DECIDE_PAUSED_ANNOTATION "cluster.x-k8s.io/paused"
/* Our ownership marker on every pause this controller adds (DESIGN.md 3.6). */
#define DECIDE_MARKER_ANNOTATION "changemanagement.hypershift.openshift.io/paused-by"
#define DECIDE_MARKER_VALUE "hcp-controller"
/* Our marker on a MachineDeployment's spec.paused (DESIGN.md 3.6): set with
 * it, so that only a spec.paused of ours is ever cleared. */
#define DECIDE_SPEC_MARKER_ANNOTATION "changemanagement.hypershift.openshift.io/spec-paused-by"
/* A HostedCluster's release requests held while changes are restricted
 * (DESIGN.md 3.6): the admission webhook keeps spec.release.image and
 * spec.controlPlaneRelease.image at their running values and records the
 * requested ones here; reconcile applies them when a window opens. */
#define DECIDE_REQUESTED_RELEASE_ANNOTATION \
    "changemanagement.hypershift.openshift.io/requested-release-image"
#define DECIDE_REQUESTED_CP_RELEASE_ANNOTATION \
    "changemanagement.hypershift.openshift.io/requested-control-plane-release-image"
/* A NodePool's rollout-triggering fields held while changes are restricted
 * (DESIGN.md 3.6): the admission webhook keeps them at their running values
 * in the write that changes them and records the request here, as a JSON
 * merge patch of spec ({"release":{"image":"..."},"config":[...]}, null for
 * a field the write removed); reconcile applies it when a window opens. */
#define DECIDE_REQUESTED_NODEPOOL_ANNOTATION \
    "changemanagement.hypershift.openshift.io/requested-nodepool-spec"
/* The NodePool fields whose change makes HyperShift roll the pool's
 * machines (HyperShift's docs/content/reference/nodepool-rollouts.md): the
 * release, the configuration (spec.config, spec.tuningConfig) and the
 * platform fields that make a new machine template (every platform's whole
 * machine template, AWS's listed fields: resourceTags rolls nothing), as
 * dotted paths under spec, NULL-terminated. */
extern const char *const decide_np_held_fields[];
/* The HostedCluster fields whose change rolls every NodePool of the
 * cluster, held on the HostedCluster while it or any of its opted-in
 * NodePools is restricted (DESIGN.md 3.6). HyperShift hashes them into each
 * pool's target (hypershift-operator/controllers/nodepool/config.go:
 * rolloutConfig, Hash(): pullSecretName, additionalTrustBundleName and
 * globalConfig, the proxy and image configuration of globalConfigString();
 * imageContentSources adds a core ignition config to mcoRawConfig,
 * getCoreConfigs) and docs/content/reference/nodepool-rollouts.md lists
 * them as rolling all NodePools: spec.pullSecret, spec.additionalTrustBundle,
 * spec.imageContentSources, spec.configuration.proxy and
 * spec.configuration.image. Dotted paths under spec, NULL-terminated. */
extern const char *const decide_hc_held_fields[];
/* Where the request of those fields is recorded while held: a JSON merge
 * patch of spec, as DECIDE_REQUESTED_NODEPOOL_ANNOTATION for a NodePool;
 * reconcile applies it at the first instant the HostedCluster and all its
 * opted-in NodePools may change (decide_common_window()). */
#define DECIDE_REQUESTED_HC_SPEC_ANNOTATION \
    "changemanagement.hypershift.openshift.io/requested-hostedcluster-spec"
/* The old way (before the NodePool hold, DESIGN.md 3.6): a Replace pool's
 * MachineDeployment template or an InPlace pool's MachineSet target kept
 * at admission, with what the write asked for recorded here ("version
 * 4.17.1", "configuration <target or user-data secret>"). A controller
 * that finds one keeps it held while restricted and lets HyperShift's next
 * write through at the next window, which drops it; nothing new is held
 * this way. */
#define DECIDE_HELD_TEMPLATE_ANNOTATION "changemanagement.hypershift.openshift.io/held-template"
/* An InPlace MachineSet's wanted and reached config versions (HyperShift). */
#define DECIDE_TARGET_CONFIG_ANNOTATION "hypershift.openshift.io/nodePoolTargetConfigVersion"
#define DECIDE_CURRENT_CONFIG_ANNOTATION "hypershift.openshift.io/nodePoolCurrentConfigVersion"
/* The label the controller keeps on the objects the admission webhooks
 * must see (DESIGN.md 3.6): HostedClusters with a stanza, and the
 * MachineDeployments/MachineSets of NodePools that have a stanza or whose
 * HostedCluster has one. The chart's webhook configurations select it
 * (objectSelector), so the API server never calls the webhooks for anything
 * else. HyperShift adds its own labels to a MachineDeployment/MachineSet
 * without replacing the others (nodepool/capi.go,
 * reconcileMachineDeployment, reconcileMachineSet), so the label stays. */
#define DECIDE_OPTIN_LABEL "changemanagement.hypershift.openshift.io/opted-in"
#define DECIDE_OPTIN_VALUE "true"
/* Links a MachineDeployment/MachineSet to its NodePool as "<ns>/<name>". */
#define DECIDE_NODEPOOL_ANNOTATION "hypershift.openshift.io/nodePool"

/* Our two conditions as last written on an object. */
typedef struct decide_seen_cond {
    bool present;   /* the condition exists on the object */
    bool status;    /* "True" */
    char *reason;   /* owned, NULL when absent */
    char *message;  /* owned, NULL when absent */
} decide_seen_cond_t;

/* What HostedCluster and NodePool views share. */
typedef struct decide_managed {
    stanza_t stanza;        /* parsed changeManagement stanza */
    int64_t generation;     /* metadata.generation */
    json_t *conditions;     /* status.conditions as served (a merge patch
                               replaces the whole list, so it is kept);
                               NULL while compact */
    decide_packed_t conditions_z; /* compact: status.conditions as deflated JSON text */
    decide_seen_cond_t paused;      /* our ChangesPaused condition */
    decide_seen_cond_t pending;     /* our ChangesPending condition */
    decide_seen_cond_t projected;   /* our HostedClusterVersionProjected condition */
    decide_seen_cond_t after;       /* our UnhealthyAfterChange condition (after.h) */
    decide_health_t health;         /* what the health gate reads (gate.h) */
    decide_audit_t audit;           /* who made the last override and held request (audit.h) */
} decide_managed_t;

typedef struct decide_hc {
    decide_managed_t m;
    char *infra_id;        /* spec.infraID: the CAPI Cluster's name */
    char *release_image;   /* spec.controlPlaneRelease.image, else spec.release.image */
    char *desired_image;   /* status.version.desired.image */
    bool history_partial;  /* status.version.history[0].state == "Partial" */
    bool optin_label;      /* carries DECIDE_OPTIN_LABEL: DECIDE_OPTIN_VALUE */
    char *spec_release;    /* spec.release.image or NULL */
    char *spec_cp_release; /* spec.controlPlaneRelease.image or NULL */
    char *requested_release;    /* the held request for spec.release.image, or NULL */
    char *requested_cp_release; /* the held request for spec.controlPlaneRelease.image */
    char cp_completed[64];      /* the newest version in status.version.history
                                   with state Completed, "" when none
                                   (decide_cp_completed()) */
    char *cp_completed_images;  /* the images of those entries, one per line, or NULL */
    bool cp_reported;           /* status.version.history has an entry */
    json_t *requested_fields;   /* the held request of the fields that roll every
                                   NodePool (DECIDE_REQUESTED_HC_SPEC_ANNOTATION)
                                   as a JSON object, or NULL */
    bool requested_fields_bad;  /* that annotation is there but is no JSON object */
    uint64_t inputs_fp;         /* decide_inputs_fp() of decide_hc_held_fields */
    char *requested_fields_summary; /* the request in words ("configuration,
                                       additionalTrustBundle"), or NULL */
    /* Release waves (wave.h), set by the shell when they are on: */
    int wave;                   /* wave_of() its labels and namespace; 0 when off */
    struct wave_member *member; /* what it tells the waves (owned), or NULL */
} decide_hc_t;

typedef struct decide_np {
    decide_managed_t m;
    char *cluster_name;     /* spec.clusterName: its HostedCluster */
    bool in_place;          /* spec.management.upgradeType == "InPlace" */
    bool updating_version;  /* condition UpdatingVersion is True */
    bool updating_config;   /* condition UpdatingConfig is True */
    bool optin_label;       /* carries DECIDE_OPTIN_LABEL: DECIDE_OPTIN_VALUE */
    char *release_version;  /* the version spec.release.image names by its tag
                               (decide_release_version()), or NULL */
    char *status_version;   /* status.version: the version HyperShift reports
                               the pool's machines run, or NULL */
    json_t *requested;      /* the held request (DECIDE_REQUESTED_NODEPOOL_ANNOTATION)
                               as a JSON object, or NULL */
    bool requested_bad;     /* the annotation is there but is not a JSON object */
    char *requested_summary; /* the request in words ("release <image>, config"),
                                or NULL when none */
    char *config_names;     /* the ConfigMaps spec.config names, one a line
                               (decide_np_config_names()), or NULL when none */
    uint64_t inputs_fp;     /* decide_inputs_fp() of decide_np_held_fields */
} decide_np_t;

/* A CAPI Cluster, MachineDeployment or MachineSet. */
typedef struct decide_capi {
    bool paused;            /* annotation cluster.x-k8s.io/paused present */
    bool marker;            /* our marker annotation present */
    bool spec_paused;       /* spec.paused (MachineDeployments) */
    bool spec_marker;       /* our marker of spec.paused present */
    bool optin_label;       /* carries DECIDE_OPTIN_LABEL: DECIDE_OPTIN_VALUE */
    char *nodepool;         /* hypershift.openshift.io/nodePool annotation or NULL */
    char *held;             /* DECIDE_HELD_TEMPLATE_ANNOTATION (what is held) or NULL */
    int64_t updated;        /* machines of the newest MachineSet: v1beta1
                               status.updatedReplicas, v1beta2
                               status.deprecated.v1beta1.updatedReplicas
                               (else status.upToDateReplicas); -1 when
                               absent, and always for a MachineSet */
    int64_t existing;       /* status.replicas: machines that exist, of any
                               template; -1 when absent */
    bool rolling;           /* mid-rollout: machines on an older template
                               (existing > updated), or an InPlace target
                               config version that differs from the current
                               one; a scale-up is not a rollout */
    char *deployment;       /* MachineSets: label cluster.x-k8s.io/deployment-name,
                               or NULL */
    int64_t revision;       /* annotation machinedeployment.clusters.x-k8s.io/revision
                               (Cluster API's, on a MachineDeployment and each
                               of its MachineSets); -1 when absent or malformed */
    uint64_t target;        /* CRC-32 + 1 of the target config version
                               annotation (an InPlace MachineSet's rollout),
                               0 when absent */
    bool on_delete;         /* its rollout strategy is OnDelete */
    char *drift;            /* a held drift (drift.h): what changed, in words,
                               or NULL when none is held */
    char *drift_strategy;   /* the strategy HyperShift asked for, or NULL */
    char *drift_since;      /* RFC 3339, or NULL */
    uint64_t drift_inputs;  /* the record's template inputs (drift.h), 0 when none */
    uint64_t template_inputs; /* DECIDE_TEMPLATE_INPUTS_ANNOTATION, 0 when absent */
    bool remediating;       /* MachineSets: machines to remediate (decide_ms_remediating()) */
} decide_capi_t;

/* A fingerprint of the values of fields (dotted paths under spec of obj,
 * NULL-terminated): what requests can change of a NodePool's or
 * HostedCluster's rollout (drift.h). Never 0. */
uint64_t decide_inputs_fp(const json_t *obj, const char *const fields[]);

/* The fingerprint of the requested inputs of NodePool np's template: its
 * own held fields and its HostedCluster's (hc may be NULL). Never 0. */
uint64_t decide_pool_inputs_fp(const decide_np_t *np, const decide_hc_t *hc);

/* The kinds of slim views. */
typedef enum decide_kind {
    DECIDE_HC,      /* HostedCluster: data is a decide_hc_t */
    DECIDE_NP,      /* NodePool: data is a decide_np_t */
    DECIDE_CLUSTER, /* CAPI Cluster: data is a decide_capi_t */
    DECIDE_MD,      /* CAPI MachineDeployment: decide_capi_t */
    DECIDE_MS,      /* CAPI MachineSet: decide_capi_t */
} decide_kind_t;

/* The slim view of an object of kind (any of the above) as the watch cache
 * keeps it: for HostedClusters and NodePools with their status compacted
 * (decide_managed_compact()). New, release with decide_view_free(); NULL
 * when out of memory. */
void *decide_view_extract(decide_kind_t kind, const json_t *obj);
void decide_view_free(decide_kind_t kind, void *view);

/* Trades the JSON trees of m (conditions) for their compact
 * text, deflated. A jansson tree takes several times the memory of its text,
 * and a cache of thousands of HostedClusters and NodePools, each with the
 * dozen or more conditions HyperShift writes, would otherwise spend most of
 * its memory there; even as plain text the conditions were most of the
 * controller's heap at fleet scale, and condition lists repeat their keys and
 * reasons so much that deflate (with a preset dictionary of those words)
 * shrinks them several times. The trees are only needed to build a status
 * patch, which decide_managed_expand() serves. Returns 0, or HCP_ENOMEM (m is
 * then unchanged). */
int decide_managed_compact(decide_managed_t *m);

/* Fills *view with a copy of m whose conditions are a tree
 * (inflated and parsed when m is compact, else new references); the other
 * members are borrowed from m, which must outlive the view. Release with
 * decide_managed_view_free(). Returns 0, or HCP_EPARSE when memory ran out or
 * the kept data does not inflate to JSON of its recorded length. */
int decide_managed_expand(const decide_managed_t *m, decide_managed_t *view);
void decide_managed_view_free(decide_managed_t *view);

decide_hc_t *decide_hc_extract(const json_t *obj);
void decide_hc_free(decide_hc_t *hc);

decide_np_t *decide_np_extract(const json_t *obj);
void decide_np_free(decide_np_t *np);

/* kind is DECIDE_CLUSTER, DECIDE_MD or DECIDE_MS: a MachineSet's replica
 * counts say nothing of a rollout (decide_capi_t.updated). */
decide_capi_t *decide_capi_extract(decide_kind_t kind, const json_t *obj);
void decide_capi_free(decide_capi_t *c);

/* Pending changes (DESIGN.md 3.5): for a HostedCluster also a held request
 * that differs from the running value. A NodePool's change is pending while
 * it carries a held request (readable or not), while its
 * MachineDeployment/MachineSet carries a held template or target, while
 * HyperShift says it is updating its version or configuration, while the
 * release it asks for (spec.release.image, by its version tag) differs from
 * the version HyperShift reports the pool runs (status.version: HyperShift
 * sets it only once the rollout is done, and says UpdatingVersion only once
 * it has seen the new spec, so a change just let through is pending in
 * between), or while its
 * MachineDeployment still has machines of an older template (status.replicas
 * above the updated count). A scale-up alone (spec.replicas above both) is
 * not a pending change: the machines it adds use the current template. Nor
 * is a MachineDeployment that reports no status.replicas yet (Cluster API
 * v1.14's first status of a new one: updatedReplicas 0, no machine counted):
 * without a count of all machines nothing says any is of an older
 * template. */
bool decide_hc_pending(const decide_hc_t *hc);

/* True when the HostedCluster carries a held release request. */
bool decide_hc_held(const decide_hc_t *hc);
/* True when the HostedCluster carries a held request of the fields that
 * roll every NodePool (decide_hc_held_fields). */
bool decide_hc_fields_held(const decide_hc_t *hc);
/* True when the NodePool carries a held request that can be applied. */
bool decide_np_held(const decide_np_t *np);
/* md may be NULL when the MachineDeployment is not (yet) known. */
bool decide_np_pending(const decide_np_t *np, const decide_capi_t *md);

#endif
