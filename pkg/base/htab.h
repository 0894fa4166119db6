/*
 * base/htab.h - the tree's one hash table.
 *
 * An intrusive chained hash table: each member embeds a hcp_hnode_t, which
 * carries the chain link and the member's hash, and the table allocates only
 * its bucket array (a power of two of chains, indexed by the low bits of the
 * hash). The table knows no keys: a lookup gives the hash and an equality
 * test, so each user keeps its own key (an object's kind, namespace and name
 * in kube/objmap, a namespace and name in kube/cache, the bytes of a string
 * in kube/intern) and the storage of its members.
 *
 * The table doubles when it holds more members than chains, unless a walk
 * that may insert is under way (frozen). Removal leaves the removed member's
 * own link intact, so a walk standing on it can go on.
 */
#ifndef HCP_BASE_HTAB_H
#define HCP_BASE_HTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct hcp_hnode {
    struct hcp_hnode *next; /* the chain; kept by removal (see above) */
    uint64_t hash;          /* the hash the member was inserted by */
} hcp_hnode_t;

typedef struct hcp_htab {
    hcp_hnode_t **buckets; /* nbuckets chains */
    size_t nbuckets;       /* a power of two */
    size_t count;          /* members linked */
    int frozen;            /* > 0 while a walk is under way: no doubling */
} hcp_htab_t;

/* Tells whether the member n has the key the lookup is for. */
typedef bool (*hcp_htab_eq_fn)(const hcp_hnode_t *n, const void *key);

#define HCP_HASH_SEED 14695981039346656037ULL /* the FNV-1a 64-bit offset basis */

/* FNV-1a over len bytes, continuing from h (HCP_HASH_SEED to start). */
uint64_t hcp_hash_bytes(uint64_t h, const void *p, size_t len);

/* FNV-1a over a NUL-terminated string, continuing from h. */
uint64_t hcp_hash_str(uint64_t h, const char *s);

/* FNV-1a of "ns/name", continuing from h: the key of a namespaced object. */
uint64_t hcp_hash_nsname(uint64_t h, const char *ns, const char *name);

/* Prepares an empty table of nbuckets (rounded up to a power of two, at
 * least 1) chains. Returns 0 or HCP_ENOMEM. */
int hcp_htab_init(hcp_htab_t *t, size_t nbuckets);

/* Frees the bucket array; the members are the caller's. */
void hcp_htab_free(hcp_htab_t *t);

/* Calls release(member, ud) on every member, each after its successor was
 * read (release may free it), then frees the bucket array as
 * hcp_htab_free() does. A table never initialised (no bucket array) is
 * left as it is. */
void hcp_htab_drain(hcp_htab_t *t, void (*release)(hcp_hnode_t *n, void *ud), void *ud);

/* The link that holds the first member of this hash for which eq(member,
 * key) is true, or the empty link at the end of its chain, where such a
 * member would be inserted. Valid until the table changes. */
hcp_hnode_t **hcp_htab_slot(const hcp_htab_t *t, uint64_t hash, hcp_htab_eq_fn eq,
                            const void *key);

/* Links n, of this hash, at an empty link returned by hcp_htab_slot(), and
 * doubles the table when it holds more members than chains and is not
 * frozen (a doubling that cannot be allocated leaves longer chains, never
 * wrong ones). */
void hcp_htab_insert(hcp_htab_t *t, hcp_hnode_t **slot, hcp_hnode_t *n, uint64_t hash);

/* Puts n in the place of the member at a non-empty link, under the same hash;
 * the old member is no longer linked. */
void hcp_htab_replace(hcp_hnode_t **slot, hcp_hnode_t *n);

/* Unlinks the member at a non-empty link. */
void hcp_htab_remove(hcp_htab_t *t, hcp_hnode_t **slot);

/* Walks every member n (a hcp_hnode_t *) of t, chain by chain, with the index
 * i (a size_t). The body may remove n, or insert while the table is frozen;
 * members inserted after n on its chain are met too. */
#define HCP_HTAB_FOREACH(t, i, n)                                                                 \
    for ((i) = 0; (i) < (t)->nbuckets; (i)++)                                                     \
        for ((n) = (t)->buckets[i]; (n) != NULL; (n) = (n)->next)

/* The same walk for a body that frees n: its successor is read first. */
#define HCP_HTAB_FOREACH_SAFE(t, i, n, tmp)                                                       \
    for ((i) = 0; (i) < (t)->nbuckets; (i)++)                                                     \
        for ((n) = (t)->buckets[i]; (n) != NULL && ((tmp) = (n)->next, 1); (n) = (tmp))

#endif
