/* pools: the NodePools of each HostedCluster (private to pkg/controller).
 *
 * A HostedCluster's decision asks for its NodePools: the hosted
 * ClusterVersion's conditions name them, the common window of the fields
 * that roll every pool reads them. Found by walking the NodePool cache,
 * that cost a HostedCluster O(NodePools), and a boundary of a thousand
 * clusters and three thousand pools spent an eighth of the controller's
 * time walking. This index keeps each (namespace, spec.clusterName)'s pools
 * from the NodePool cache's own add, update and delete callbacks (a relist
 * calls them too), so the walk is a lookup. It holds the cache's entries,
 * borrowed: an update replaces the entry it held.
 */
#ifndef HCP_CONTROLLER_POOLS_H
#define HCP_CONTROLLER_POOLS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/htab.h"
#include "kube/cache.h"

typedef struct ctl_pools {
    hcp_htab_t tab; /* of struct ctl_pool_set, by (ns, cluster) */
    bool oom;       /* an entry could not be kept: lookups walk the cache instead */
} ctl_pools_t;

int ctl_pools_init(ctl_pools_t *p);
void ctl_pools_free(ctl_pools_t *p);

/* The cache's callbacks: o's data is a decide_np_t (NULL: not indexed). */
void ctl_pools_add(ctl_pools_t *p, const kube_obj *o);
void ctl_pools_update(ctl_pools_t *p, const kube_obj *old, const kube_obj *o);
void ctl_pools_remove(ctl_pools_t *p, const kube_obj *o);

/* Calls fn for each NodePool of cluster ns/cluster, in the order they came;
 * from the cache itself (a walk) when the index lost one (out of memory). */
void ctl_pools_foreach(const ctl_pools_t *p, const kube_cache *nps, const char *ns,
                       const char *cluster, void (*fn)(const kube_obj *o, void *ud), void *ud);

#endif
