/*
 * kube/intern.c - string interning with reference counts.
 */
#include "kube/intern.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/chain.h"
#include "kube/error.h"

struct kube_istr {
    struct kube_istr *next; /* bucket chain */
    uint32_t hash;
    uint32_t refs;
    char s[];               /* the string, NUL-terminated */
};

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

/* The hash a string was inserted by. */
static uint32_t istr_hash(const struct kube_istr *e)
{
    return e->hash;
}

int kube_intern_init(kube_intern *p)
{
    memset(p, 0, sizeof(*p));
    p->nbuckets = 16;
    p->buckets = calloc(p->nbuckets, sizeof(*p->buckets));
    return p->buckets ? 0 : HCP_ENOMEM;
}

const char *kube_intern_getn(kube_intern *p, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len);
    struct kube_istr *e;

    for (e = p->buckets[h & (p->nbuckets - 1)]; e; e = e->next) {
        if (e->hash == h && strncmp(e->s, s, len) == 0 && e->s[len] == '\0') {
            e->refs++;
            return e->s;
        }
    }
    e = malloc(sizeof(*e) + len + 1);
    if (e == NULL)
        return NULL;
    e->hash = h;
    e->refs = 1;
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    e->next = p->buckets[h & (p->nbuckets - 1)];
    p->buckets[h & (p->nbuckets - 1)] = e;
    p->count++;
    p->bytes += sizeof(*e) + len + 1;
    if (p->count > p->nbuckets)
        HCP_CHAIN_GROW(struct kube_istr, p->buckets, p->nbuckets, next, istr_hash);
    return e->s;
}

const char *kube_intern_get(kube_intern *p, const char *s)
{
    return kube_intern_getn(p, s, strlen(s));
}

void kube_intern_put(kube_intern *p, const char *s)
{
    struct kube_istr *e, **link;

    if (s == NULL)
        return;
    e = (struct kube_istr *)(void *)(s - offsetof(struct kube_istr, s));
    if (--e->refs > 0)
        return;
    for (link = &p->buckets[e->hash & (p->nbuckets - 1)]; *link; link = &(*link)->next) {
        if (*link == e) {
            *link = e->next;
            p->count--;
            p->bytes -= sizeof(*e) + strlen(e->s) + 1;
            free(e);
            return;
        }
    }
}

void kube_intern_free(kube_intern *p)
{
    size_t i;

    for (i = 0; i < p->nbuckets && p->buckets; i++) {
        struct kube_istr *e = p->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            free(e);
        }
    }
    free(p->buckets);
    memset(p, 0, sizeof(*p));
}
