/* stanza: the changeManagement stanza of HostedClusters and NodePools.
 *
 * A HostedCluster or NodePool opts into change management with a stanza
 * (DESIGN.md 2.2), read from spec.changeManagement or, because today's CRDs
 * prune unknown spec fields, from annotations. This module parses it and
 * resolves it into a timeline (DESIGN.md 3.3): constants, a referenced
 * policy, or a forced PermissiveUntil/RestrictiveUntil override that falls
 * back to the policy or to the opposite constant. A NodePool's timeline is
 * then intersected with its HostedCluster's (DESIGN.md 3.4).
 *
 * Every failure resolves to Restrictive (fail safe) with a message saying
 * why. Pure computation: policies are found through a caller-supplied
 * lookup function, and `now` is a parameter.
 */
#ifndef HCP_POLICY_STANZA_H
#define HCP_POLICY_STANZA_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"
#include "policy/policy.h"
#include "schedule/schedule.h"

/* Errors: HCP_EINVAL (base/error.h) when the stanza is invalid (detail in
 * the stanza), HCP_ENOMEM when allocation fails. */

#define STANZA_MSGLEN 512  /* room for any message of this module */
#define STANZA_NAMELEN 254 /* Kubernetes names are at most 253 bytes */

/* The annotation prefix of the stanza's annotation form. */
#define STANZA_ANNOTATION_PREFIX "changemanagement.hypershift.openshift.io/"

typedef enum stanza_strategy {
    STANZA_PERMISSIVE = 0,     /* always permitted (also: no stanza at all) */
    STANZA_RESTRICTIVE,        /* never permitted */
    STANZA_BY_POLICY,          /* follow the named HCMP */
    STANZA_PERMISSIVE_UNTIL,   /* permitted until T, then policy or Restrictive */
    STANZA_RESTRICTIVE_UNTIL   /* restricted until T, then policy or Permissive */
} stanza_strategy_t;

#define STANZA_NSTRATEGIES 5 /* strategies above, numbered 0 .. STANZA_NSTRATEGIES - 1 */

/* A parsed stanza. Plain data, no heap: copy it freely. */
typedef struct stanza {
    int present;                  /* a stanza was found (spec or annotations) */
    int from_spec;                /* 1: spec.changeManagement, 0: annotations */
    int valid;                    /* 0: unusable, `error` says why */
    char error[STANZA_MSGLEN];    /* why the stanza is invalid; "" when valid */
    stanza_strategy_t strategy;   /* meaningful when valid */
    char policy[STANZA_NAMELEN];  /* byPolicy.name; "" when unset */
    int has_permissive_until;     /* permissiveUntil given and parsed */
    sched_time_t permissive_until;
    int has_restrictive_until;    /* restrictiveUntil given and parsed */
    sched_time_t restrictive_until;
} stanza_t;

/* Reads the stanza of a HostedCluster or NodePool object (JSON as served by
 * the API server). spec.changeManagement wins over the annotations when both
 * exist; the two forms are never mixed. No stanza means Permissive (present
 * = 0). The strategy may be omitted when a policy is named (ByPolicy).
 * Unknown fields, unknown strategies, missing or unparsable RFC 3339 times
 * for the chosen Until strategy, and ByPolicy without a name make the stanza
 * invalid. Returns 0, or HCP_EINVAL with out->valid = 0 and out->error
 * set. Never allocates. */
int stanza_parse(const json_t *obj, stanza_t *out);

/* The validation a webhook calls for a HostedCluster or NodePool: parses
 * its stanza as stanza_parse() does. Returns 0 when there is no stanza or a
 * valid one, HCP_EINVAL with *out filled with the field path and what is
 * wrong, in the words of the controller's InvalidChangeManagement
 * condition. */
int stanza_validate(const json_t *obj, policy_problem_t *out);

/* The strategy's name as written in manifests ("Unknown" outside
 * 0 .. STANZA_NSTRATEGIES - 1). Static storage. */
const char *stanza_strategy_name(stanza_strategy_t s);

/* What a lookup tells about a referenced policy. */
typedef struct stanza_policy_ref {
    int found;           /* a policy of that name exists in the namespace */
    int ready;           /* it is Ready=True (valid and computed) */
    sched_t *sched;      /* borrowed; its timeline, used when found && ready */
    sched_t *const *sched_for; /* borrowed: the timeline of each kind of change
                                  (policy_t.sched_for) when an exclusion is
                                  scoped; NULL: sched for every kind */
    const char *message; /* borrowed; why it is not ready (may be NULL) */
    const char *strategy; /* static: the policy's spec.strategy ("Permissive",
                             "Restrictive", "MaintenanceSchedule"), used when
                             found && ready; NULL counts as MaintenanceSchedule */
    sched_time_t min_left_cp;      /* its spec.minTimeLeft.controlPlane (seconds, 0 none) */
    sched_time_t min_left_workers; /* its spec.minTimeLeft.workerNodes */
} stanza_policy_ref_t;

/* Finds the policy `name` in namespace `ns`, filling *out (zeroed by the
 * caller). Returns 0, or a negative error code that aborts resolution. */
typedef int (*stanza_lookup_fn)(void *ctx, const char *ns, const char *name,
                                stanza_policy_ref_t *out);

/* A resolved stanza. */
typedef struct stanza_resolution {
    sched_t *sched;                /* owned reference: the object's timeline,
                                      where every kind of change is permitted */
    sched_t *sched_for[POLICY_NCHANGES]; /* owned references: the timeline of a
                                      kind of change where a scoped exclusion
                                      of the policy makes it differ from
                                      sched; NULL: sched (stanza_sched_for()) */
    stanza_strategy_t strategy;    /* the strategy in force (Permissive when
                                      there is no stanza) */
    const char *reason;            /* static CamelCase condition reason:
                                      Permissive (also without a stanza),
                                      Restrictive,
                                      ByPolicy, PermissiveUntil,
                                      RestrictiveUntil, PolicyNotFound,
                                      PolicyNotReady, InvalidChangeManagement */
    int degraded;                  /* 1 when an error forced Restrictive for
                                      all or part of the timeline */
    const char *policy_strategy;   /* static: the referenced policy's strategy,
                                      "Restrictive" when it is missing or not
                                      Ready; NULL when no policy is consulted */
    sched_time_t min_left_cp;      /* the referenced policy's minTimeLeft for
                                      the control plane (seconds; 0 when none,
                                      or no Ready policy is consulted) */
    sched_time_t min_left_workers; /* the same for worker nodes */
    char message[STANZA_MSGLEN];   /* one sentence describing the timeline */
} stanza_resolution_t;

/* Resolves a stanza of an object in namespace ns into its timeline
 * (DESIGN.md 3.3):
 *   Permissive/Restrictive  always / never
 *   ByPolicy                the policy; missing or not Ready => never
 *   PermissiveUntil T       before(T) ∪ (policy if named, else never)
 *   RestrictiveUntil T      after(T) ∩ (policy if named, else always)
 *   invalid stanza          never
 * The policy is named by byPolicy, which is kept while another strategy is
 * forced. Returns 0 with out filled (release with
 * stanza_resolution_free()), HCP_ENOMEM, or the lookup's error. */
int stanza_resolve(const stanza_t *st, const char *ns, stanza_lookup_fn lookup, void *ctx,
                   stanza_resolution_t *out);

void stanza_resolution_free(stanza_resolution_t *r);

/* The object's timeline for one kind of change (borrowed from r). */
sched_t *stanza_sched_for(const stanza_resolution_t *r, policy_change_t c);

/* The enhancement's strategy in force for an object at now, after resolving
 * its stanza and the policy it names: "MaintenanceSchedule", "Permissive" or
 * "Restrictive" (the label values of change_management_strategy_enabled).
 * No stanza is Permissive; an invalid stanza, and a policy that is missing or
 * not Ready, are Restrictive (fail safe). A PermissiveUntil or
 * RestrictiveUntil override counts as Permissive or Restrictive before its
 * instant, and as what follows it (the policy, else the opposite constant)
 * from then on. res is st's resolution. Static storage. */
const char *stanza_enforced_strategy(const stanza_t *st, const stanza_resolution_t *res,
                                     sched_time_t now);

/* The stanza as written: "None" without a stanza, "Invalid" for one that
 * does not parse, else its strategy's name (ByPolicy, Permissive,
 * Restrictive, PermissiveUntil, RestrictiveUntil). It tells an override and
 * an opted-out object apart from what stanza_enforced_strategy() reports.
 * Static storage. */
const char *stanza_configured_strategy(const stanza_t *st);

/* True when st is a valid Permissive override, or a PermissiveUntil one
 * before its instant, at now. */
bool stanza_permissive_at(const stanza_t *st, sched_time_t now);

/* A NodePool's timeline within its HostedCluster's. */
typedef struct stanza_nodepool {
    sched_t *sched;                /* owned reference: own ∩ cluster */
    int has_window;                /* 0: NoPermittedWindow within the look-ahead */
    sched_interval_t next;         /* first interval of the intersection whose
                                      end is after now, when has_window */
    int cluster_has_window;        /* the cluster constraint on its own */
    sched_interval_t cluster_next; /* its first interval ending after now */
    const char *reason;            /* static: "PermittedWindow" or "NoPermittedWindow" */
    char message[STANZA_MSGLEN];   /* explains a missing window */
} stanza_nodepool_t;

/* Intersects a NodePool's own timeline with its HostedCluster's (DESIGN.md
 * 3.4): the pool can narrow but never widen the cluster's windows. Both
 * schedules are borrowed (the result takes its own references). When the
 * intersection has no window starting within SCHED_LOOKAHEAD of now the
 * result says NoPermittedWindow instead of a date, and the message tells
 * whether the pool's own windows, the cluster's, or their overlap is the
 * problem. Returns 0 (release with stanza_nodepool_free()), HCP_ENOMEM or
 * an engine error. */
int stanza_resolve_nodepool(sched_t *own, sched_t *cluster, sched_time_t now,
                            stanza_nodepool_t *out);

void stanza_nodepool_free(stanza_nodepool_t *np);

#endif
