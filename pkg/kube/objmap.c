/* objmap.c: an intrusive hash table keyed by kind, namespace and name. */
#include "kube/objmap.h"

#include "base/chain.h"
#include "base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash(int kind, const char *ns, const char *name)
{
    uint64_t h = 1469598103934665603ULL ^ (uint64_t)(unsigned)kind; /* FNV-1a */
    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (const char *p = name; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    return h;
}

/* The hash of a linked object's key (the one it was inserted by). */
static uint64_t key_hash(const kube_objkey_t *k)
{
    return hash(k->kind, k->ns, k->name);
}

int kube_objmap_init(kube_objmap_t *m, size_t nbuckets)
{
    memset(m, 0, sizeof(*m));
    m->buckets = calloc(nbuckets, sizeof(*m->buckets));
    if (!m->buckets)
        return HCP_ENOMEM;
    m->nbuckets = nbuckets;
    return 0;
}

void kube_objmap_free(kube_objmap_t *m)
{
    free(m->buckets);
    m->buckets = NULL;
    m->nbuckets = m->count = 0;
}

kube_objkey_t **kube_objmap_slot(const kube_objmap_t *m, int kind, const char *ns,
                                 const char *name)
{
    kube_objkey_t **pp = &m->buckets[hash(kind, ns, name) & (m->nbuckets - 1)];
    while (*pp && !((*pp)->kind == kind && strcmp((*pp)->ns, ns) == 0 &&
                    strcmp((*pp)->name, name) == 0))
        pp = &(*pp)->hnext;
    return pp;
}

void kube_objmap_insert(kube_objmap_t *m, kube_objkey_t **slot, kube_objkey_t *k)
{
    k->hnext = NULL;
    *slot = k;
    if (++m->count > m->nbuckets * 2 && !m->frozen)
        HCP_CHAIN_GROW(kube_objkey_t, m->buckets, m->nbuckets, hnext, key_hash);
}

void kube_objmap_remove(kube_objmap_t *m, kube_objkey_t **slot)
{
    *slot = (*slot)->hnext;
    m->count--;
}
