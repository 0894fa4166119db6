/* objmap: the tree's hash table (base/htab) keyed by kind, namespace and
 * name.
 *
 * The controller keeps a record per managed object and the hosted
 * projection an entry per HostedCluster; both embed a kube_objkey_t as their first member
 * and find it here. The map allocates only its bucket array: the objects,
 * and the key strings they point to, belong to the caller.
 */
#ifndef HCP_KUBE_OBJMAP_H
#define HCP_KUBE_OBJMAP_H

#include <stddef.h>

#include "base/htab.h"

typedef struct kube_objkey {
    hcp_hnode_t node;      /* the table's link (first: a kube_objkey_t * is a
                              hcp_hnode_t *); kept by removal, so a walk
                              standing on a removed object can go on */
    int kind;              /* the caller's tag (0 when there is one kind) */
    const char *ns, *name; /* borrowed from the embedding object */
} kube_objkey_t;

typedef struct kube_objmap {
    hcp_htab_t tab; /* walk it with HCP_HTAB_FOREACH; tab.frozen > 0 while a
                       walk that may insert is under way */
} kube_objmap_t;

/* Prepares an empty map of nbuckets (a power of two) chains. Returns 0 or
 * HCP_ENOMEM. */
int kube_objmap_init(kube_objmap_t *m, size_t nbuckets);

/* Frees the bucket array; the objects are the caller's. */
void kube_objmap_free(kube_objmap_t *m);

/* The link that holds the object with this key, or the empty link where it
 * would be inserted. Valid until the map changes. */
hcp_hnode_t **kube_objmap_slot(const kube_objmap_t *m, int kind, const char *ns,
                               const char *name);

/* Links k (whose kind, ns and name are set) at an empty slot returned by
 * kube_objmap_slot(), doubling the table when chains grow long and no walk
 * is under way. */
void kube_objmap_insert(kube_objmap_t *m, hcp_hnode_t **slot, kube_objkey_t *k);

/* Unlinks the object at a non-empty slot. */
void kube_objmap_remove(kube_objmap_t *m, hcp_hnode_t **slot);

#endif
