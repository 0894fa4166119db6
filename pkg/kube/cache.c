/*
 * kube/cache.c - hash table of slim objects with change callbacks.
 */
#include "kube/cache.h"

#include <stdlib.h>
#include <string.h>


struct kube_centry {
    hcp_hnode_t node;         /* the cache's table (first member) */
    kube_obj obj;             /* public view; strings point into s[] / the pool */
    uint32_t epoch;           /* last relist that saw this object */
    char s[];                 /* name\0uid\0rv\0 */
};

typedef struct objname {
    const char *ns, *name;
} objname_t;

static uint64_t key_hash(const char *ns, const char *name)
{
    return hcp_hash_nsname(HCP_HASH_SEED, ns, name);
}

/* The entry linked at n (its first member). */
static struct kube_centry *entry_at(hcp_hnode_t *n)
{
    return (struct kube_centry *)n;
}

static bool same_name(const hcp_hnode_t *n, const void *key)
{
    const struct kube_centry *e = (const struct kube_centry *)n;
    const objname_t *k = key;

    return strcmp(e->obj.name, k->name) == 0 && strcmp(e->obj.ns, k->ns) == 0;
}

int kube_cache_init(kube_cache *c, const kube_cache_ops *ops, void *ud)
{
    memset(c, 0, sizeof(*c));
    if (ops)
        c->ops = *ops;
    c->ud = ud;
    if (hcp_htab_init(&c->tab, 64) < 0)
        return HCP_ENOMEM;
    if (kube_intern_init(&c->strings) < 0) {
        hcp_htab_free(&c->tab);
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

static void entry_drop(hcp_hnode_t *n, void *c)
{
    entry_free(c, entry_at(n));
}

void kube_cache_free(kube_cache *c)
{
    hcp_htab_drain(&c->tab, entry_drop, c);
    kube_intern_free(&c->strings);
    memset(c, 0, sizeof(*c));
}

static hcp_hnode_t **find_link(const kube_cache *c, const char *ns, const char *name, uint64_t h)
{
    objname_t want = {ns, name};

    return hcp_htab_slot(&c->tab, h, same_name, &want);
}

const kube_obj *kube_cache_get(const kube_cache *c, const char *ns, const char *name)
{
    hcp_hnode_t **link;

    if (ns == NULL)
        ns = "";
    if (name == NULL)
        return NULL;
    link = find_link(c, ns, name, key_hash(ns, name));
    return *link ? &entry_at(*link)->obj : NULL;
}

bool kube_cache_holds(kube_cache *c, const char *ns, const char *name, const char *rv)
{
    hcp_hnode_t **link = find_link(c, ns, name, key_hash(ns, name));
    struct kube_centry *e = *link ? entry_at(*link) : NULL;

    if (e == NULL || strcmp(e->obj.rv, rv) != 0)
        return false;
    e->epoch = c->epoch;
    return true;
}

size_t kube_cache_count(const kube_cache *c)
{
    return c->tab.count;
}

void kube_cache_foreach(const kube_cache *c, void (*fn)(const kube_obj *obj, void *ud), void *ud)
{
    size_t i;
    hcp_hnode_t *n;

    HCP_HTAB_FOREACH(&c->tab, i, n)
        fn(&entry_at(n)->obj, ud);
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
static struct kube_centry *entry_new(kube_cache *c, const json_t *obj, const meta *m,
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
    uint64_t h = key_hash(m->ns, m->name);
    hcp_hnode_t **link = find_link(c, m->ns, m->name, h);
    struct kube_centry *old = *link ? entry_at(*link) : NULL, *e;

    if (old != NULL && strcmp(old->obj.rv, m->rv) == 0) {
        old->epoch = c->epoch;
        return 0; /* already seen this version */
    }
    e = entry_new(c, obj, m, err);
    if (e == NULL)
        return err ? err->code : HCP_ENOMEM;
    if (old != NULL) {
        hcp_htab_replace(link, &e->node);
        c->updates++;
        if (c->ops.on_update)
            c->ops.on_update(&old->obj, &e->obj, c->ud);
        entry_free(c, old);
        return 0;
    }
    hcp_htab_insert(&c->tab, link, &e->node, h);
    c->adds++;
    if (c->ops.on_add)
        c->ops.on_add(&e->obj, c->ud);
    return 0;
}

static void remove_link(kube_cache *c, hcp_hnode_t **link)
{
    struct kube_centry *e = entry_at(*link);

    hcp_htab_remove(&c->tab, link);
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
        hcp_hnode_t **link = find_link(c, m.ns, m.name, key_hash(m.ns, m.name));
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

    for (i = 0; i < c->tab.nbuckets; i++) {
        hcp_hnode_t **link = &c->tab.buckets[i];
        while (*link) {
            if (entry_at(*link)->epoch != c->epoch)
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
    size_t i, n = c->tab.nbuckets * sizeof(*c->tab.buckets) + c->strings.bytes +
                  c->strings.tab.nbuckets * sizeof(void *);
    hcp_hnode_t *h;

    HCP_HTAB_FOREACH(&c->tab, i, h) {
        const struct kube_centry *e = entry_at(h);
        n += sizeof(*e) + strlen(e->obj.name) + strlen(e->obj.uid) + strlen(e->obj.rv) + 3;
    }
    return n;
}
