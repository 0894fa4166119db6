/* cv: the conditions ChangesPaused and ChangesPending of a hosted cluster's
 * ClusterVersion `version`.
 *
 * A hosted cluster's administrator sees neither the HostedCluster nor its
 * NodePools, only the ClusterVersion (`oc adm upgrade`, `oc get
 * clusterversion version -o yaml`). Its two conditions therefore tell, in
 * sentences, what is pending and when changes may next start, for the
 * control plane and for each NodePool: one sentence per system, taken from
 * the control plane's decision and from the conditions each NodePool
 * carries (which say why not now: the window, an exclusion and its reason,
 * an override and its expiry). Pure: no I/O, no allocation.
 */
#ifndef HCP_HOSTED_CV_H
#define HCP_HOSTED_CV_H

#include <stdbool.h>
#include <stddef.h>

#include "decide/decide.h"
#include "decide/slim.h"
#include "hosted/hosted.h"
#include "kube/cache.h"

#define HOSTED_CV_MSGLEN 4096 /* a message; NodePools past it are counted, not listed */

/* One NodePool of the HostedCluster, as its cache entry shows it. */
typedef struct hosted_cv_pool {
    const char *name;                  /* borrowed */
    const decide_seen_cond_t *paused;  /* borrowed: its ChangesPaused as written */
    const decide_seen_cond_t *pending; /* borrowed: its ChangesPending as written */
} hosted_cv_pool_t;

/* The two conditions. The reasons are borrowed from the inputs (static
 * strings of the decision, or a pool's condition): copy them before the
 * inputs go. */
typedef struct hosted_cv {
    bool paused_status;   /* the control plane's: it is what ClusterVersion updates */
    const char *paused_reason;
    char paused_message[HOSTED_CV_MSGLEN];
    bool pending_status;  /* any system has a pending change */
    const char *pending_reason; /* the control plane's when it has one pending,
                                   else the first pending NodePool's */
    char pending_message[HOSTED_CV_MSGLEN];
} hosted_cv_t;

/* Builds the conditions from the control plane's decision cp and the
 * NodePools pools[0..n) (sorted by name here, in place, so that the text
 * does not depend on the cache's order; a pool without our conditions yet is
 * said to be waiting for its first decision). Messages read e.g.
 *   Control plane: changes are paused until 2026-03-07T00:00:00Z (following
 *   policy "weekly"). NodePool workers: changes are paused until ...
 */
void hosted_cv_conditions(const decide_decision_t *cp, hosted_cv_pool_t *pools, size_t n,
                          hosted_cv_t *out);

/* What a HostedCluster's projection writes into the hosted ClusterVersion
 * for its decision d: the control plane's conditions and each of its
 * NodePools' (pools[0..n), sorted here), built into *cv, which the returned
 * strings point into (keep cv while they are used). */
hosted_conds_t hosted_want(const decide_decision_t *d, hosted_cv_pool_t *pools, size_t n,
                           hosted_cv_t *cv);

#endif
