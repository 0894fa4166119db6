/* objmap.c: the tree's hash table keyed by kind, namespace and name. */
#include "kube/objmap.h"

#include <string.h>

typedef struct want {
    int kind;
    const char *ns, *name;
} want_t;

static uint64_t hash(int kind, const char *ns, const char *name)
{
    return hcp_hash_nsname(HCP_HASH_SEED ^ (uint64_t)(unsigned)kind, ns, name);
}

static bool same_key(const hcp_hnode_t *n, const void *key)
{
    const kube_objkey_t *k = (const kube_objkey_t *)n;
    const want_t *want = key;

    return k->kind == want->kind && strcmp(k->ns, want->ns) == 0 &&
           strcmp(k->name, want->name) == 0;
}

int kube_objmap_init(kube_objmap_t *m, size_t nbuckets)
{
    return hcp_htab_init(&m->tab, nbuckets);
}

void kube_objmap_free(kube_objmap_t *m)
{
    hcp_htab_free(&m->tab);
}

hcp_hnode_t **kube_objmap_slot(const kube_objmap_t *m, int kind, const char *ns,
                               const char *name)
{
    want_t want = {kind, ns, name};

    return hcp_htab_slot(&m->tab, hash(kind, ns, name), same_key, &want);
}

void kube_objmap_insert(kube_objmap_t *m, hcp_hnode_t **slot, kube_objkey_t *k)
{
    hcp_htab_insert(&m->tab, slot, &k->node, hash(k->kind, k->ns, k->name));
}

void kube_objmap_remove(kube_objmap_t *m, hcp_hnode_t **slot)
{
    hcp_htab_remove(&m->tab, slot);
}
