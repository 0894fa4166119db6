/*
 * kube/cache.h - an in-memory store of slim objects keyed by namespace/name.
 *
 * The cache never keeps whole JSON documents. For each object it keeps the
 * identity the watch protocol needs (namespace, name, uid, resourceVersion)
 * and whatever small struct the caller's extractor builds from the JSON.
 * Namespaces are interned. Changes are reported through callbacks with the
 * old and new views, so a consumer sees every add, update and delete exactly
 * once, including the differences found by a relist after a 410 Gone.
 *
 * The cache is driven by kube_watch (list + watch), but it is pure: no I/O,
 * so the event and relist logic is unit-tested directly.
 */
#ifndef KUBE_CACHE_H
#define KUBE_CACHE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/error.h"
#include "base/htab.h"
#include "kube/intern.h"

/* One cached object as consumers see it. All fields are owned by the cache. */
typedef struct kube_obj {
    const char *ns;   /* namespace, "" for cluster-scoped objects (interned) */
    const char *name; /* metadata.name */
    const char *uid;  /* metadata.uid, "" when absent */
    const char *rv;   /* metadata.resourceVersion */
    void *data;       /* the extractor's struct, NULL without an extractor */
} kube_obj;

typedef enum kube_event_type {
    KUBE_EVENT_ADDED,
    KUBE_EVENT_MODIFIED,
    KUBE_EVENT_DELETED
} kube_event_type;

typedef struct kube_cache_ops {
    /*
     * Builds the slim struct for obj (the whole API object) into *out. May
     * intern strings in `strings`. Returns 0, or negative to reject the object
     * (it is then treated as absent). NULL extract keeps metadata only.
     */
    int (*extract)(const json_t *obj, kube_intern *strings, void **out, void *ud);
    /* Frees what extract built. Called once per successful extract. */
    void (*release)(void *data, kube_intern *strings, void *ud);
    /* Change notifications; the kube_obj pointers are valid during the call only. */
    void (*on_add)(const kube_obj *obj, void *ud);
    void (*on_update)(const kube_obj *old, const kube_obj *obj, void *ud);
    void (*on_delete)(const kube_obj *old, void *ud);
} kube_cache_ops;

typedef struct kube_cache {
    kube_cache_ops ops;          /* copied at init */
    void *ud;                    /* passed to every op */
    hcp_htab_t tab;              /* the objects, by namespace and name */
    uint32_t epoch;              /* relist generation */
    bool relisting;              /* between relist_begin and relist_end */
    bool synced;                 /* a full list has completed at least once */
    kube_intern strings;         /* namespaces and extractor strings */
    uint64_t adds, updates, deletes; /* callbacks delivered */
} kube_cache;

/* Prepares an empty cache. ops may be NULL (metadata only, no callbacks). */
int kube_cache_init(kube_cache *c, const kube_cache_ops *ops, void *ud);

/* Releases every object (calling ops.release, never the change callbacks). */
void kube_cache_free(kube_cache *c);

/* Looks up an object; ns "" or NULL for cluster-scoped. Borrowed pointer. */
const kube_obj *kube_cache_get(const kube_cache *c, const char *ns, const char *name);

/* True when the cache holds ns/name at resourceVersion rv: an ADDED or
 * MODIFIED event of that version would change nothing (kube_cache_apply()
 * would find it seen already, and this marks it seen as that does), so the
 * watch need not parse it. */
bool kube_cache_holds(kube_cache *c, const char *ns, const char *name, const char *rv);

/* Number of objects held. */
size_t kube_cache_count(const kube_cache *c);

/* Calls fn for every object, in no particular order. fn must not modify the cache. */
void kube_cache_foreach(const kube_cache *c, void (*fn)(const kube_obj *obj, void *ud),
                        void *ud);

/*
 * Applies one watch event. ADDED for a known object and MODIFIED for an
 * unknown one are treated as what they mean for the store (update / add), and
 * an event whose resourceVersion equals the cached one is dropped, so replays
 * after a reconnect never duplicate a callback. DELETED of an unknown object
 * is ignored. Returns 0, or negative with err filled when obj has no usable
 * metadata.
 */
int kube_cache_apply(kube_cache *c, kube_event_type type, const json_t *obj, kube_error *err);

/*
 * A relist: call begin, then item for every object of a complete list (in
 * any number of pages), then end. Items are diffed against the store as they
 * arrive (add / update / nothing when the resourceVersion is unchanged); end
 * deletes every object the list did not contain and marks the cache synced.
 * abort (after a failed list) keeps the store as it is.
 */
void kube_cache_relist_begin(kube_cache *c);
int kube_cache_relist_item(kube_cache *c, const json_t *obj, kube_error *err);
void kube_cache_relist_end(kube_cache *c);
void kube_cache_relist_abort(kube_cache *c);

/*
 * Bytes the cache itself allocated (entries, table, interned strings), not
 * counting what extractors allocate outside the intern pool. For memory
 * reports.
 */
size_t kube_cache_bytes(const kube_cache *c);

#endif
