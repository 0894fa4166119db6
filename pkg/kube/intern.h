/*
 * kube/intern.h - reference-counted string interning.
 *
 * Thousands of cached objects share a handful of namespaces (and, for
 * extractors that want it, owner names, policy names, ...). An interned
 * string is stored once; every holder keeps a reference. Caller-allocated
 * pool; strings returned are owned by the pool and valid until the last
 * reference is put back.
 */
#ifndef KUBE_INTERN_H
#define KUBE_INTERN_H

#include <stddef.h>

#include "base/htab.h"

typedef struct kube_intern {
    hcp_htab_t tab; /* the strings, by their bytes */
    size_t count;   /* distinct strings held */
    size_t bytes;   /* bytes allocated for strings and nodes */
} kube_intern;

/* Prepares an empty pool. Returns 0 or HCP_ENOMEM. */
int kube_intern_init(kube_intern *p);

/*
 * Returns the pool's copy of s (len bytes, need not be NUL-terminated),
 * adding a reference. NULL only when out of memory.
 */
const char *kube_intern_getn(kube_intern *p, const char *s, size_t len);

/* kube_intern_getn() for a NUL-terminated string. */
const char *kube_intern_get(kube_intern *p, const char *s);

/* Drops one reference to a string returned by kube_intern_get*(); NULL is ignored. */
void kube_intern_put(kube_intern *p, const char *s);

/* Frees every string regardless of references. */
void kube_intern_free(kube_intern *p);

#endif
