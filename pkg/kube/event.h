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

/* Releases what kube_watch_event_parse() returned in ev. ev may be empty. */
void kube_watch_event_free(kube_watch_event *ev);

#endif
