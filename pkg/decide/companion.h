/* companion: the object of our own kind that carries a HostedCluster's or
 * NodePool's change-management state.
 *
 * HyperShift's CRDs have no changeManagement in spec or status and nothing
 * that keeps unknown fields there, so the API server prunes
 * status.changeManagement from every write: the enhancement's per-object
 * state (behavior.current/next/history, the strategy in force, the policy,
 * a NodePool's clusterConstraint, the held change) cannot live on the object
 * itself. It lives on a HostedChangeManagementStatus in the object's
 * namespace, owned by it (garbage-collected with it), one per HostedCluster
 * and NodePool that has a stanza (a NodePool also when only its
 * HostedCluster has one: the cluster constrains it). Our conditions
 * ChangesPaused/ChangesPending stay on the object: conditions survive.
 *
 * Naming: "hostedcluster.<name>" and "nodepool.<name>". A HostedCluster and
 * a NodePool may share a name in one namespace; the prefixes differ in
 * their first DNS label, so no HostedCluster's companion name can equal a
 * NodePool's, whatever the names hold, and within one kind the name maps
 * one to one. A target whose name is too long for the prefix (over 239
 * characters for HostedClusters, 244 for NodePools) gets no companion.
 *
 * Everything here is pure: the content is a function of the plan, the
 * companion as last written (whose history and held-since it extends) and
 * now, so steady state writes nothing and a transition writes once.
 */
#ifndef HCP_DECIDE_COMPANION_H
#define HCP_DECIDE_COMPANION_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "decide/packed.h"
#include "decide/plan.h"

#define DECIDE_COMPANION_KIND "HostedChangeManagementStatus"
#define DECIDE_COMPANION_RESOURCE "hostedchangemanagementstatuses"
#define DECIDE_COMPANION_API_VERSION "changemanagement.hypershift.openshift.io/v1alpha1"
#define DECIDE_COMPANION_NAMELEN 254 /* a Kubernetes name, NUL included */

/* Writes the companion name of the object of kind (DECIDE_HC or DECIDE_NP)
 * named `name` into buf. Returns 0, or HCP_EINVAL when the name with its
 * prefix exceeds 253 characters or kind is neither. */
int decide_companion_name(decide_kind_t kind, const char *name, char *buf, size_t len);

/* The target a companion name stands for: kind and a pointer into name at
 * the target's name (borrowed). False when name has neither prefix. */
bool decide_companion_target(const char *name, decide_kind_t *kind, const char **target);

/* Whether the planned object has a companion: it has a stanza, or (a
 * NodePool) its HostedCluster has one. */
bool decide_companion_wanted(const decide_plan_t *p);

/* The part of a companion's status that is a function of a decision alone
 * (kind DECIDE_HC with self a decide_hc_t, or DECIDE_NP with a decide_np_t,
 * its decision d, resolution res and for a NodePool its intersection): strategy (the stanza as written), strategyInForce, policy,
 * behavior.current (with the exclusion and its reason while inside one)
 * and behavior.next, a NodePool's clusterConstraint (its HostedCluster's
 * next window on its own), heldChange {summary, release,
 * controlPlaneRelease} while a change waits. Unbounded times are null.
 * decide_plan() builds it as plan.status_doc. New reference, or NULL when
 * out of memory. */
json_t *decide_status_doc(decide_kind_t kind, const void *self, const decide_decision_t *d,
                          const stanza_resolution_t *res, const stanza_nodepool_t *inter,
                          sched_time_t now);

/* The companion's status for plan p (decided, with status_doc) at now:
 * p->status_doc plus behavior.history (behavior_history_extend() of the
 * history in prev_status) and heldChange.since (kept from prev_status
 * while the same change stays held, else now). prev_status is the
 * companion's status as last written (borrowed, NULL when none). New
 * reference, or NULL when out of memory. */
json_t *decide_companion_status(const decide_plan_t *p, const json_t *prev_status,
                                sched_time_t now);

/* The whole companion object for plan p of ns/name with status (borrowed):
 * metadata (name, namespace, an owner reference to the target's uid),
 * target {kind, name, uid} and status, without a resourceVersion. New
 * reference, or NULL when out of memory or the name does not fit. */
json_t *decide_companion_object(const decide_plan_t *p, const char *ns, const char *name,
                                const json_t *status);

/* The part of a companion that decides whether it must be written: its
 * target, owner uids and status, with null members removed (the API server
 * drops them), as canonical text (sorted keys, compact). obj is a whole
 * companion as served or as decide_companion_object() builds it. New
 * string (free()), or NULL when out of memory. */
char *decide_companion_digest(const json_t *obj);

/* How a cache keeps a companion: decide_companion_digest(obj) deflated
 * with a dictionary of the words companions repeat (packed.h), about a
 * fifth of the text's size. 0, or HCP_ENOMEM (*out empty). */
int decide_companion_pack(const json_t *obj, decide_packed_t *out);

/* The digest text p was packed from (new string), or NULL when p is
 * damaged or memory runs out. */
char *decide_companion_unpack(const decide_packed_t *p);

#endif
