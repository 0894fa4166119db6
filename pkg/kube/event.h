/*
 * kube/event.h - decoding one line of a watch stream.
 *
 * A watch response is a stream of JSON objects, one a line:
 * {"type": "ADDED", "object": {...}}. The types are ADDED, MODIFIED,
 * DELETED, BOOKMARK (only object.metadata.resourceVersion matters) and
 * ERROR (object is a metav1.Status: code, reason, message). The bytes come
 * from the API server or whatever sits in between and are untrusted. The
 * decoder is pure; the watch (watch.h) decides what an event does.
 */
#ifndef KUBE_EVENT_H
#define KUBE_EVENT_H

#include <jansson.h>
#include <stddef.h>

#include "base/error.h"
#include "kube/cache.h"

typedef enum kube_watch_event_type {
    KUBE_WATCH_OBJECT,   /* ADDED, MODIFIED or DELETED: see change */
    KUBE_WATCH_BOOKMARK, /* a resourceVersion to resume from, nothing changed */
    KUBE_WATCH_ERROR,    /* the server ends the watch: code, reason, message */
    KUBE_WATCH_UNKNOWN   /* a type this client does not know; ignored */
} kube_watch_event_type;

typedef struct kube_watch_event {
    kube_watch_event_type type;
    kube_event_type change; /* KUBE_WATCH_OBJECT: added, modified or deleted */
    json_t *doc;            /* the whole event (owned; kube_watch_event_free) */
    const json_t *obj;      /* "object", borrowed from doc */
    const char *rv;         /* object.metadata.resourceVersion, borrowed, or NULL */
    long code;              /* KUBE_WATCH_ERROR: object.code (410: resourceVersion gone) */
    const char *reason;     /* KUBE_WATCH_ERROR: object.reason, borrowed, or NULL */
    const char *message;    /* KUBE_WATCH_ERROR: object.message, borrowed, or NULL */
} kube_watch_event;

/*
 * Decodes one line (len bytes, not NUL-terminated) into ev. Returns 0 (ev
 * holds the event; release it with kube_watch_event_free), HCP_EPARSE when
 * the line is not JSON (the stream cannot be trusted from here on), or
 * HCP_EINVAL when it is JSON without a string "type" and an object "object"
 * (the line can be skipped). On failure err says why and ev holds nothing.
 */
int kube_watch_event_parse(const char *line, size_t len, kube_watch_event *ev, char *err,
                           size_t errlen);

/* What a watch line says about itself, read without building its tree:
 * enough to tell an event the cache already holds (the echo of the
 * client's own write, whose answer went into the cache) and skip its
 * parse. The strings are NUL-terminated copies. */
typedef struct kube_watch_peek {
    kube_event_type change;  /* ADDED, MODIFIED or DELETED */
    char ns[254];            /* object.metadata.namespace, "" when absent */
    char name[254];          /* object.metadata.name */
    char rv[64];             /* object.metadata.resourceVersion */
} kube_watch_peek;

/* Scans line (len bytes) for its type and its object's namespace, name and
 * resourceVersion, the last occurrence of each key winning as in
 * kube_watch_event_parse(). Returns 0 when the line is one JSON object
 * (brackets and strings well formed, nothing after it) of type ADDED,
 * MODIFIED or DELETED with a name and a resourceVersion, each a string
 * without escapes that fits; -1 otherwise (parse it). Pure; the bytes are
 * untrusted (fuzz_watch.c checks it against the parser). */
int kube_watch_event_peek(const char *line, size_t len, kube_watch_peek *p);

/* Releases what kube_watch_event_parse() returned in ev. ev may be empty. */
void kube_watch_event_free(kube_watch_event *ev);

#endif
