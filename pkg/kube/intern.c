/*
 * kube/intern.c - string interning with reference counts.
 */
#include "kube/intern.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kube/error.h"

struct kube_istr {
    hcp_hnode_t node; /* the pool's table (first member) */
    uint32_t refs;
    char s[];         /* the string, NUL-terminated */
};

typedef struct bytes {
    const char *s;
    size_t len;
} bytes_t;

static bool same_bytes(const hcp_hnode_t *n, const void *key)
{
    const struct kube_istr *e = (const struct kube_istr *)n;
    const bytes_t *b = key;

    return strncmp(e->s, b->s, b->len) == 0 && e->s[b->len] == '\0';
}

static bool same_node(const hcp_hnode_t *n, const void *key)
{
    return n == key;
}

int kube_intern_init(kube_intern *p)
{
    memset(p, 0, sizeof(*p));
    return hcp_htab_init(&p->tab, 16);
}

const char *kube_intern_getn(kube_intern *p, const char *s, size_t len)
{
    bytes_t want = {s, len};
    uint64_t h = hcp_hash_bytes(HCP_HASH_SEED, s, len);
    hcp_hnode_t **slot = hcp_htab_slot(&p->tab, h, same_bytes, &want);
    struct kube_istr *e;

    if (*slot != NULL) {
        e = (struct kube_istr *)*slot;
        e->refs++;
        return e->s;
    }
    e = malloc(sizeof(*e) + len + 1);
    if (e == NULL)
        return NULL;
    e->refs = 1;
    memcpy(e->s, s, len);
    e->s[len] = '\0';
    hcp_htab_insert(&p->tab, slot, &e->node, h);
    p->count++;
    p->bytes += sizeof(*e) + len + 1;
    return e->s;
}

const char *kube_intern_get(kube_intern *p, const char *s)
{
    return kube_intern_getn(p, s, strlen(s));
}

void kube_intern_put(kube_intern *p, const char *s)
{
    struct kube_istr *e;
    hcp_hnode_t **slot;

    if (s == NULL)
        return;
    e = (struct kube_istr *)(void *)(s - offsetof(struct kube_istr, s));
    if (--e->refs > 0)
        return;
    slot = hcp_htab_slot(&p->tab, e->node.hash, same_node, e);
    if (*slot == NULL)
        return;
    hcp_htab_remove(&p->tab, slot);
    p->count--;
    p->bytes -= sizeof(*e) + strlen(e->s) + 1;
    free(e);
}

static void istr_free(hcp_hnode_t *n, void *ud)
{
    (void)ud;
    free(n);
}

void kube_intern_free(kube_intern *p)
{
    hcp_htab_drain(&p->tab, istr_free, NULL);
    memset(p, 0, sizeof(*p));
}
