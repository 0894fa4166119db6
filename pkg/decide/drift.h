/* drift: a new configuration HyperShift makes by itself, held on a Replace
 * pool's MachineDeployment without replacing a machine (DESIGN.md 3.6,
 * "Changes HyperShift makes by itself"), as pure functions of objects.
 *
 * HyperShift's configuration hash of a pool covers inputs no NodePool,
 * HostedCluster or ConfigMap write carries: the control-plane operator's
 * core ignition ConfigMaps, the HAProxy configuration HyperShift's operator
 * renders, its machine template code (nodepool/config.go, ConfigGenerator;
 * nodepool/capi.go). When an update of either operator changes them,
 * HyperShift writes a new token and user data, retires the running ones
 * (nodepool/token.go, secret_janitor.go) and points every pool's
 * MachineDeployment at the new template. Nothing upstream defers it.
 *
 * The hold: while the pool is restricted, such a template write is
 * admitted (HyperShift's own state, its Secrets and its status, stay true:
 * the template is its target) with the rollout strategy OnDelete in the
 * same write, and the record DECIDE_HELD_DRIFT_ANNOTATION. Under OnDelete
 * Cluster API makes the new MachineSet and replaces no running machine;
 * the old MachineSets never create a machine again
 * (machinedeployment_rollout_ondelete.go), so no machine boots from the
 * retired user data: a scale-up or a replacement comes from the new
 * template, whose token HyperShift keeps valid. HyperShift writes its
 * strategy on every pass (capi.go, reconcileMachineDeployment): while the
 * record stays, each such write is answered with OnDelete kept (a no-op
 * write). When a window opens the controller writes the strategy HyperShift
 * asked for back and drops the record in one patch; Cluster API then rolls
 * the old machines as for any change.
 *
 * A write is drift when it changes the template's user data
 * (bootstrap.dataSecretName) or machine template (infrastructureRef.name)
 * and not its version, and nothing a request can change was changed since
 * the template it replaces was made: the fingerprint of the NodePool's held
 * fields and its HostedCluster's fields that roll every pool
 * (DECIDE_TEMPLATE_INPUTS_ANNOTATION) is the same. A release is a NodePool
 * field the NodePool hold keeps, so a release change reaching the
 * MachineDeployment while restricted is no drift (the backstop's); neither
 * are the HostedCluster fields a PermissiveUntil override or the common
 * window applies while a pool is restricted (they roll every pool: what the
 * override says). A pool whose own strategy is OnDelete replaces nothing
 * anyway. The admission webhook decides from its cache, which may not have
 * seen the request yet: the controller then lets the held template through
 * as soon as its own view shows other inputs than the record. Objects are untrusted bytes: anything
 * of an unexpected type reads as absent.
 */
#ifndef HCP_DECIDE_DRIFT_H
#define HCP_DECIDE_DRIFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DECIDE_HELD_DRIFT_ANNOTATION "changemanagement.hypershift.openshift.io/held-drift"
/* The requested inputs the MachineDeployment's template was made from:
 * decide_pool_inputs_fp() (slim.h) of its NodePool and HostedCluster, as 16
 * hex digits, set by the webhook in each write that changes the template
 * and by the controller on a settled pool that has none. */
#define DECIDE_TEMPLATE_INPUTS_ANNOTATION \
    "changemanagement.hypershift.openshift.io/template-inputs"
#define DECIDE_ON_DELETE "OnDelete"
/* What HyperShift writes for a Replace pool that names no strategy
 * (NodePool spec.management.replace.strategy's default). */
#define DECIDE_DRIFT_DEFAULT_STRATEGY "RollingUpdate"

/* The record of a held drift: JSON {"since", "strategy", "input", "inputs"}. */
typedef struct decide_drift {
    char *since;    /* RFC 3339: when the template was admitted */
    char *strategy; /* the strategy type HyperShift asked for (released at the window) */
    char *input;    /* what changed, in words ("user data a -> b") */
    uint64_t inputs; /* the requested inputs the template was made from (0: unknown) */
} decide_drift_t;

/* DECIDE_TEMPLATE_INPUTS_ANNOTATION's text: 16 hex digits into out (17
 * bytes); its value, 0 when text is NULL or malformed. */
void decide_inputs_format(uint64_t fp, char out[17]);
uint64_t decide_inputs_parse(const char *text);

/* True when md (a MachineDeployment of either served version) is
 * cluster.x-k8s.io/v1beta2, whose strategy is spec.rollout.strategy (by its
 * apiVersion, else by spec.rollout: a list's items carry none). */
bool decide_md_v1beta2(const json_t *md);

/* The rollout strategy type of md (v1beta1 spec.strategy.type, v1beta2
 * spec.rollout.strategy.type), borrowed, or NULL when absent. */
const char *decide_md_strategy(const json_t *md);

/* True when an UPDATE from old_md to new_md changes the template (its user
 * data, machine template or version). */
bool decide_template_changed(const json_t *old_md, const json_t *new_md);

/* True when an UPDATE from old_md to new_md is drift (above), inputs being
 * the fingerprint of the requested inputs now: the template was made from
 * the same (old_md's DECIDE_TEMPLATE_INPUTS_ANNOTATION). Without that
 * record a change is taken as requested. input (len bytes) gets what
 * changed in words. */
bool decide_drift_is(const json_t *old_md, const json_t *new_md, uint64_t inputs, char *input,
                     size_t len);

/* The JSON Patch operations (a new array) that set the strategy type of md
 * to type, adding what of its path is absent; NULL when out of memory. */
json_t *decide_md_strategy_ops(const json_t *md, const char *type);

/* The record as annotation text (a new string, free()), NULL when out of
 * memory. */
char *decide_drift_record(const char *since, const char *strategy, const char *input,
                          uint64_t inputs);

/* Reads a record. Returns 0, or HCP_EPARSE when text is no such record
 * (*out then empty), HCP_ENOMEM. Release with decide_drift_free(). */
int decide_drift_parse(const char *text, decide_drift_t *out);
void decide_drift_free(decide_drift_t *d);

/* The release at a window (a new merge patch): the strategy HyperShift
 * asked for written back, the record dropped, conditional on
 * resource_version; v1beta2: the version the controller writes Cluster
 * API in (a watched object's apiVersion is not always served). NULL
 * when out of memory. */
json_t *decide_drift_release_patch(bool v1beta2, const char *strategy, uint64_t inputs,
                                   const char *resource_version);

/* The patch that gives a settled pool's MachineDeployment its first
 * DECIDE_TEMPLATE_INPUTS_ANNOTATION (merged into patch, a new object when
 * NULL); NULL when out of memory. */
json_t *decide_inputs_patch(json_t *patch, uint64_t inputs, const char *resource_version);

/* Remediation of the older template's machines while a drift is held.
 * Cluster API remediates no machine of a MachineSet that is not its
 * MachineDeployment's current revision: it marks it OwnerRemediated False,
 * reason CannotBeRemediated, "pending removal due to rollout", and counts
 * on the rollout to delete it (core/reconcilers/machineset/
 * machineset_controller.go, reconcileUnhealthyMachines). Under the drift's
 * OnDelete no rollout comes before the window, so a machine of the older
 * template that fails its health check would stay broken for the whole
 * hold. The controller deletes such a machine itself: the delete Cluster
 * API would have done, within what the MachineHealthCheck allowed (it
 * marks OwnerRemediated only while its maxUnhealthy holds); under OnDelete
 * Cluster API then scales the old MachineSet down and makes the
 * replacement in the new one, from the template HyperShift keeps valid
 * (machinedeployment_rollout_ondelete.go). */

/* The current conditions of a Cluster API object of either served version
 * (v1beta1 status.v1beta2.conditions, else status.conditions), borrowed;
 * NULL when none. */
const json_t *decide_capi_conditions(const json_t *obj);

/* True when MachineSet ms reports machines to remediate (its Remediating
 * condition is True). */
bool decide_ms_remediating(const json_t *ms);

/* True when machine is one Cluster API found unhealthy and declined to
 * remediate for its revision (above): HealthCheckSucceeded False,
 * OwnerRemediated False with reason CannotBeRemediated, and not already
 * being deleted. */
bool decide_drift_remediable(const json_t *machine);

/* The delete options of such a machine (a new object): preconditions on
 * its uid and resourceVersion, so a machine that changed meanwhile (healthy
 * again, or another one of that name) is not deleted; NULL when out of
 * memory or when the machine has neither. */
json_t *decide_drift_remediation_delete(const json_t *machine);

#endif
