/* pools.c: the NodePools of each HostedCluster, indexed (pools.h). */
#include "controller/pools.h"

#include <stdlib.h>
#include <string.h>

#include "decide/slim.h"

typedef struct ctl_pool_set {
    hcp_hnode_t node;
    char *ns, *cluster;    /* owned */
    const kube_obj **v;    /* the cache's entries, borrowed */
    size_t n, cap;
} pool_set_t;

typedef struct key {
    const char *ns, *cluster;
} key_t_;

static bool same_key(const hcp_hnode_t *n, const void *k)
{
    const pool_set_t *s = (const pool_set_t *)n;
    const key_t_ *want = k;
    return strcmp(s->ns, want->ns) == 0 && strcmp(s->cluster, want->cluster) == 0;
}

static const char *cluster_of(const kube_obj *o)
{
    const decide_np_t *np = o ? o->data : NULL;
    return np ? np->cluster_name : NULL;
}

static hcp_hnode_t **slot_of(const ctl_pools_t *p, const char *ns, const char *cluster,
                             uint64_t *h)
{
    key_t_ k = {ns, cluster};
    *h = hcp_hash_nsname(HCP_HASH_SEED, ns, cluster);
    return hcp_htab_slot(&p->tab, *h, same_key, &k);
}

int ctl_pools_init(ctl_pools_t *p)
{
    memset(p, 0, sizeof(*p));
    return hcp_htab_init(&p->tab, 256);
}

static void set_free(hcp_hnode_t *n, void *ud)
{
    (void)ud;
    pool_set_t *s = (pool_set_t *)n;
    free(s->ns);
    free(s->cluster);
    free(s->v);
    free(s);
}

void ctl_pools_free(ctl_pools_t *p)
{
    hcp_htab_drain(&p->tab, set_free, NULL);
    memset(p, 0, sizeof(*p));
}

void ctl_pools_add(ctl_pools_t *p, const kube_obj *o)
{
    const char *cluster = cluster_of(o);
    uint64_t h;
    if (!cluster)
        return;
    hcp_hnode_t **slot = slot_of(p, o->ns, cluster, &h);
    pool_set_t *s = (pool_set_t *)*slot;
    if (!s) {
        if (!(s = calloc(1, sizeof(*s))) || !(s->ns = strdup(o->ns)) ||
            !(s->cluster = strdup(cluster))) {
            if (s)
                set_free(&s->node, NULL);
            p->oom = true;
            return;
        }
        hcp_htab_insert(&p->tab, slot, &s->node, h);
    }
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        const kube_obj **v = realloc(s->v, cap * sizeof(*v));
        if (!v) {
            p->oom = true;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = o;
}

void ctl_pools_remove(ctl_pools_t *p, const kube_obj *o)
{
    const char *cluster = cluster_of(o);
    uint64_t h;
    if (!cluster)
        return;
    hcp_hnode_t **slot = slot_of(p, o->ns, cluster, &h);
    pool_set_t *s = (pool_set_t *)*slot;
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == o) {
            memmove(&s->v[i], &s->v[i + 1], (s->n - i - 1) * sizeof(*s->v));
            s->n--;
            break;
        }
    if (s->n == 0) {
        hcp_htab_remove(&p->tab, slot);
        set_free(&s->node, NULL);
    }
}

void ctl_pools_update(ctl_pools_t *p, const kube_obj *old, const kube_obj *o)
{
    const char *a = cluster_of(old), *b = cluster_of(o);
    if (a && b && strcmp(a, b) == 0) { /* the same cluster: the entry is replaced in place */
        uint64_t h;
        pool_set_t *s = (pool_set_t *)*slot_of(p, old->ns, a, &h);
        for (size_t i = 0; s && i < s->n; i++)
            if (s->v[i] == old) {
                s->v[i] = o;
                return;
            }
    }
    ctl_pools_remove(p, old);
    ctl_pools_add(p, o);
}

typedef struct walk {
    const char *ns, *cluster;
    void (*fn)(const kube_obj *o, void *ud);
    void *ud;
} walk_t;

static void walk_one(const kube_obj *o, void *ud)
{
    walk_t *w = ud;
    const char *cluster = cluster_of(o);
    if (cluster && strcmp(o->ns, w->ns) == 0 && strcmp(cluster, w->cluster) == 0)
        w->fn(o, w->ud);
}

void ctl_pools_foreach(const ctl_pools_t *p, const kube_cache *nps, const char *ns,
                       const char *cluster, void (*fn)(const kube_obj *o, void *ud), void *ud)
{
    if (p->oom) {
        walk_t w = {ns, cluster, fn, ud};
        kube_cache_foreach(nps, walk_one, &w);
        return;
    }
    uint64_t h;
    const pool_set_t *s = (const pool_set_t *)*slot_of(p, ns, cluster, &h);
    for (size_t i = 0; s && i < s->n; i++)
        fn(s->v[i], ud);
}
