/* planview: what the admission webhooks read of a controller.
 *
 * The holds and the validating webhooks (pkg/admission) decide from the
 * controller's caches through the same plan as reconcile and the scrape
 * (decide_plan()), on every replica, and keep nothing. This is all they see
 * of it: a read-only plan view, the caches they judge against, the
 * controller's clock and guard rails. Nothing here writes, except the one
 * flag that tells the plan the webhooks now hold changes where they start.
 */
#ifndef HCP_CONTROLLER_PLANVIEW_H
#define HCP_CONTROLLER_PLANVIEW_H

#include <stdbool.h>

#include "controller/controller.h"
#include "decide/plan.h"
#include "kube/cache.h"
#include "policy/guard.h"
#include "policy/policy.h"
#include "policy/stanza.h"

#define CTL_HS_GROUP "hypershift.openshift.io"
#define CTL_CAPI_GROUP "cluster.x-k8s.io"
#define CTL_CM_GROUP "changemanagement.hypershift.openshift.io"

/* The controller's read-only view for decide_plan(): it hands out what the
 * records keep and lets the plan resolve the rest into storage the plan
 * frees; without the hosted projection. Valid while c is. */
void ctl_plan_view(ctl_controller_t *c, decide_view_t *v);

/* The controller's clock now, the loop's time brought up to date first (a
 * webhook answers between polls). */
sched_time_t ctl_now_exact(ctl_controller_t *c);

typedef enum ctl_cache_id {
    CTL_CACHE_POLICIES, /* HostedChangeManagementPolicies; data: ctl_policy_of() */
    CTL_CACHE_HCS,      /* HostedClusters; data: decide_hc_t */
    CTL_CACHE_NPS,      /* NodePools; data: decide_np_t */
} ctl_cache_id_t;

/* One of the controller's caches, read-only. */
const kube_cache *ctl_cache(const ctl_controller_t *c, ctl_cache_id_t id);

/* The parsed policy of a policies cache entry (obj->data), or NULL. */
const policy_t *ctl_policy_of(const kube_obj *obj);

/* The policy ns/name as the cache holds it, for stanza_resolve() (ud: the
 * controller). */
int ctl_lookup_policy(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out);

/* The two stanzas resolve alike (same fields, same times, same policy). */
bool ctl_stanza_same(const stanza_t *a, const stanza_t *b);

/* The users whose writes never withdraw a held request
 * (ctl_options_t.hypershift_users): NULL-terminated, or NULL. */
const char *const *ctl_hypershift_users(const ctl_controller_t *c);

/* The guard rails in force (ctl_set_guard()), or NULL when none are. */
const guard_config_t *ctl_guard(const ctl_controller_t *c);

/* The guard rails' maxNodePoolSkew in force (decide/skew.h; HyperShift's 3
 * without one), and the file's exemptions from it in *exempt (NULL when no
 * file was read). */
int ctl_max_nodepool_skew(const ctl_controller_t *c, const guard_config_t **exempt);

/* The admission webhooks hold changes where they start from now on: a
 * NodePool's MachineDeployment is then paused only in mid-rollout
 * (decide_view_t.admission_holds). */
void ctl_set_admission_holds(ctl_controller_t *c);

#endif
