/*
 * base/htab.c - the tree's one hash table.
 */
#include "base/htab.h"

#include <stdlib.h>

#include "base/error.h"

uint64_t hcp_hash_bytes(uint64_t h, const void *p, size_t len)
{
    const unsigned char *b = p;

    for (size_t i = 0; i < len; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

uint64_t hcp_hash_str(uint64_t h, const char *s)
{
    for (const unsigned char *b = (const unsigned char *)s; *b; b++)
        h = (h ^ *b) * 1099511628211ULL;
    return h;
}

uint64_t hcp_hash_nsname(uint64_t h, const char *ns, const char *name)
{
    h = hcp_hash_str(h, ns);
    h = hcp_hash_bytes(h, "/", 1);
    return hcp_hash_str(h, name);
}

int hcp_htab_init(hcp_htab_t *t, size_t nbuckets)
{
    size_t n = 1;

    while (n < nbuckets)
        n *= 2;
    t->buckets = calloc(n, sizeof(*t->buckets));
    if (t->buckets == NULL)
        return HCP_ENOMEM;
    t->nbuckets = n;
    t->count = 0;
    t->frozen = 0;
    return 0;
}

void hcp_htab_free(hcp_htab_t *t)
{
    free(t->buckets);
    t->buckets = NULL;
    t->nbuckets = t->count = 0;
}

void hcp_htab_drain(hcp_htab_t *t, void (*release)(hcp_hnode_t *n, void *ud), void *ud)
{
    size_t i;
    hcp_hnode_t *n, *next;

    if (t->buckets == NULL)
        return;
    HCP_HTAB_FOREACH_SAFE(t, i, n, next)
        release(n, ud);
    hcp_htab_free(t);
}

hcp_hnode_t **hcp_htab_slot(const hcp_htab_t *t, uint64_t hash, hcp_htab_eq_fn eq,
                            const void *key)
{
    hcp_hnode_t **link = &t->buckets[hash & (t->nbuckets - 1)];

    while (*link && !((*link)->hash == hash && eq(*link, key)))
        link = &(*link)->next;
    return link;
}

/* Doubles the bucket array: every member moves to the chain its hash's low
 * bits now name. Left as it was when the new array cannot be allocated. */
static void grow(hcp_htab_t *t)
{
    size_t n = t->nbuckets * 2;
    hcp_hnode_t **nb = calloc(n, sizeof(*nb));

    if (nb == NULL)
        return;
    for (size_t i = 0; i < t->nbuckets; i++) {
        for (hcp_hnode_t *e = t->buckets[i], *next; e; e = next) {
            hcp_hnode_t **b = &nb[e->hash & (n - 1)];
            next = e->next;
            e->next = *b;
            *b = e;
        }
    }
    free(t->buckets);
    t->buckets = nb;
    t->nbuckets = n;
}

void hcp_htab_insert(hcp_htab_t *t, hcp_hnode_t **slot, hcp_hnode_t *n, uint64_t hash)
{
    n->hash = hash;
    n->next = NULL;
    *slot = n;
    if (++t->count > t->nbuckets && t->frozen == 0)
        grow(t);
}

void hcp_htab_replace(hcp_hnode_t **slot, hcp_hnode_t *n)
{
    n->hash = (*slot)->hash;
    n->next = (*slot)->next;
    *slot = n;
}

void hcp_htab_remove(hcp_htab_t *t, hcp_hnode_t **slot)
{
    *slot = (*slot)->next;
    t->count--;
}
