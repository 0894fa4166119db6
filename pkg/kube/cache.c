/*
 * kube/cache.c - hash table of slim objects with change callbacks.
 */
#include "kube/cache.h"

#include <stdlib.h>
#include <string.h>

#include "base/chain.h"

struct kube_centry {
    kube_obj obj;             /* public view; strings point into s[] / the pool */
    struct kube_centry *next; /* bucket chain */
    uint32_t hash;
    uint32_t epoch;           /* last relist that saw this object */
    char s[];                 /* name\0uid\0rv\0 */
};

static uint32_t key_hash(const char *ns, const char *name)
{
    uint32_t h = 2166136261u;
    const unsigned char *p;

    for (p = (const unsigned char *)ns; *p; p++)
        h = (h ^ *p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (p = (const unsigned char *)name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The hash an entry was inserted by. */
static uint32_t entry_hash(const struct kube_centry *e)
{
    return e->hash;
}

int kube_cache_init(kube_cache *c, const kube_cache_ops *ops, void *ud)
{
    memset(c, 0, sizeof(*c));
    if (ops)
        c->ops = *ops;
    c->ud = ud;
    c->nbuckets = 64;
    c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
    if (c->buckets == NULL)
        return HCP_ENOMEM;
    if (kube_intern_init(&c->strings) < 0) {
        free(c->buckets);
        c->buckets = NULL;
        return HCP_ENOMEM;
    }
    return 0;
}

static void entry_free(kube_cache *c, struct kube_centry *e)
{
    if (e->obj.data && c->ops.release)
        c->ops.release(e->obj.data, &c->strings, c->ud);
    kube_intern_put(&c->strings, e->obj.ns);
    free(e);
}

void kube_cache_free(kube_cache *c)
{
    size_t i;

    for (i = 0; i < c->nbuckets && c->buckets; i++) {
        struct kube_centry *e = c->buckets[i], *next;
        for (; e; e = next) {
            next = e->next;
            entry_free(c, e);
        }
    }
    free(c->buckets);
    kube_intern_free(&c->strings);
    memset(c, 0, sizeof(*c));
}

static struct kube_centry **find_link(const kube_cache *c, const char *ns, const char *name,
                                      uint32_t h)
{
    struct kube_centry **link = &c->buckets[h & (c->nbuckets - 1)];

    for (; *link; link = &(*link)->next) {
        struct kube_centry *e = *link;
        if (e->hash == h && strcmp(e->obj.name, name) == 0 && strcmp(e->obj.ns, ns) == 0)
            return link;
    }
    return link;
}

const kube_obj *kube_cache_get(const kube_cache *c, const char *ns, const char *name)
{
    struct kube_centry **link;

    if (ns == NULL)
        ns = "";
    if (name == NULL)
        return NULL;
    link = find_link(c, ns, name, key_hash(ns, name));
    return *link ? &(*link)->obj : NULL;
}

size_t kube_cache_count(const kube_cache *c)
{
    return c->count;
}

void kube_cache_foreach(const kube_cache *c, void (*fn)(const kube_obj *obj, void *ud), void *ud)
{
    size_t i;

    for (i = 0; i < c->nbuckets; i++) {
        struct kube_centry *e;
        for (e = c->buckets[i]; e; e = e->next)
            fn(&e->obj, ud);
    }
}

typedef struct meta {
    const char *ns, *name, *uid, *rv;
} meta;

static const char *str_or(const json_t *o, const char *key, const char *dflt)
{
    const json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : dflt;
}

static int read_meta(const json_t *obj, meta *m, kube_error *err)
{
    const json_t *md = json_object_get(obj, "metadata");

    if (!json_is_object(md))
        return kube_error_set(err, HCP_EPARSE, 0, NULL, "object without metadata");
    m->ns = str_or(md, "namespace", "");
    m->name = str_or(md, "name", NULL);
    m->uid = str_or(md, "uid", "");
    m->rv = str_or(md, "resourceVersion", "");
    if (m->name == NULL || m->name[0] == '\0')
        return kube_error_set(err, HCP_EPARSE, 0, NULL, "object without metadata.name");
    return 0;
}

/* Builds a detached entry for obj (extracting its data). NULL on failure. */
static struct kube_centry *entry_new(kube_cache *c, const json_t *obj, const meta *m, uint32_t h,
                                     kube_error *err)
{
    size_t ln = strlen(m->name), lu = strlen(m->uid), lr = strlen(m->rv);
    struct kube_centry *e = malloc(sizeof(*e) + ln + lu + lr + 3);

    if (e == NULL) {
        kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        return NULL;
    }
    memcpy(e->s, m->name, ln + 1);
    memcpy(e->s + ln + 1, m->uid, lu + 1);
    memcpy(e->s + ln + lu + 2, m->rv, lr + 1);
    e->obj.name = e->s;
    e->obj.uid = e->s + ln + 1;
    e->obj.rv = e->s + ln + lu + 2;
    e->obj.data = NULL;
    e->next = NULL;
    e->hash = h;
    e->epoch = c->epoch;
    e->obj.ns = kube_intern_get(&c->strings, m->ns);
    if (e->obj.ns == NULL) {
        free(e);
        kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
        return NULL;
    }
    if (c->ops.extract && c->ops.extract(obj, &c->strings, &e->obj.data, c->ud) < 0) {
        kube_intern_put(&c->strings, e->obj.ns);
        free(e);
        kube_error_set(err, HCP_EPARSE, 0, NULL, "extractor rejected %s/%s", m->ns, m->name);
        return NULL;
    }
    return e;
}

/* Inserts or replaces the object; the core of both watch events and relists. */
static int upsert(kube_cache *c, const json_t *obj, const meta *m, kube_error *err)
{
    uint32_t h = key_hash(m->ns, m->name);
    struct kube_centry **link = find_link(c, m->ns, m->name, h), *old = *link, *e;

    if (old != NULL && strcmp(old->obj.rv, m->rv) == 0) {
        old->epoch = c->epoch;
        return 0; /* already seen this version */
    }
    e = entry_new(c, obj, m, h, err);
    if (e == NULL)
        return err ? err->code : HCP_ENOMEM;
    if (old != NULL) {
        e->next = old->next;
        *link = e;
        c->updates++;
        if (c->ops.on_update)
            c->ops.on_update(&old->obj, &e->obj, c->ud);
        entry_free(c, old);
        return 0;
    }
    e->next = c->buckets[h & (c->nbuckets - 1)];
    c->buckets[h & (c->nbuckets - 1)] = e;
    c->count++;
    c->adds++;
    if (c->ops.on_add)
        c->ops.on_add(&e->obj, c->ud);
    if (c->count > c->nbuckets)
        HCP_CHAIN_GROW(struct kube_centry, c->buckets, c->nbuckets, next, entry_hash);
    return 0;
}

static void remove_link(kube_cache *c, struct kube_centry **link)
{
    struct kube_centry *e = *link;

    *link = e->next;
    c->count--;
    c->deletes++;
    if (c->ops.on_delete)
        c->ops.on_delete(&e->obj, c->ud);
    entry_free(c, e);
}

int kube_cache_apply(kube_cache *c, kube_event_type type, const json_t *obj, kube_error *err)
{
    meta m;
    int rc = read_meta(obj, &m, err);

    if (rc < 0)
        return rc;
    if (type == KUBE_EVENT_DELETED) {
        struct kube_centry **link = find_link(c, m.ns, m.name, key_hash(m.ns, m.name));
        if (*link != NULL)
            remove_link(c, link);
        return 0;
    }
    return upsert(c, obj, &m, err);
}

void kube_cache_relist_begin(kube_cache *c)
{
    c->epoch++;
    c->relisting = true;
}

int kube_cache_relist_item(kube_cache *c, const json_t *obj, kube_error *err)
{
    meta m;
    int rc = read_meta(obj, &m, err);

    if (rc < 0)
        return rc;
    return upsert(c, obj, &m, err);
}

void kube_cache_relist_end(kube_cache *c)
{
    size_t i;

    for (i = 0; i < c->nbuckets; i++) {
        struct kube_centry **link = &c->buckets[i];
        while (*link) {
            if ((*link)->epoch != c->epoch)
                remove_link(c, link);
            else
                link = &(*link)->next;
        }
    }
    c->relisting = false;
    c->synced = true;
}

void kube_cache_relist_abort(kube_cache *c)
{
    c->relisting = false;
}

size_t kube_cache_bytes(const kube_cache *c)
{
    size_t i, n = c->nbuckets * sizeof(*c->buckets) + c->strings.bytes +
                  c->strings.nbuckets * sizeof(void *);

    for (i = 0; i < c->nbuckets; i++) {
        struct kube_centry *e;
        for (e = c->buckets[i]; e; e = e->next)
            n += sizeof(*e) + strlen(e->obj.name) + strlen(e->obj.uid) + strlen(e->obj.rv) + 3;
    }
    return n;
}
