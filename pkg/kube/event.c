/* kube/event.c - decoding one line of a watch stream (see event.h). */
#include "kube/event.h"

#include <string.h>

int kube_watch_event_parse(const char *line, size_t len, kube_watch_event *ev, char *err,
                           size_t errlen)
{
    json_error_t jerr;
    const char *type;

    memset(ev, 0, sizeof(*ev));
    ev->doc = json_loadb(line, len, 0, &jerr);
    if (ev->doc == NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "bad event JSON: %s", jerr.text);
    type = json_string_value(json_object_get(ev->doc, "type"));
    ev->obj = json_object_get(ev->doc, "object");
    if (type == NULL || !json_is_object(ev->obj)) {
        kube_watch_event_free(ev);
        return hcp_errf(err, errlen, HCP_EINVAL, "event without type or object");
    }
    ev->rv = json_string_value(
        json_object_get(json_object_get(ev->obj, "metadata"), "resourceVersion"));
    ev->type = KUBE_WATCH_OBJECT;
    if (strcmp(type, "ADDED") == 0) {
        ev->change = KUBE_EVENT_ADDED;
    } else if (strcmp(type, "MODIFIED") == 0) {
        ev->change = KUBE_EVENT_MODIFIED;
    } else if (strcmp(type, "DELETED") == 0) {
        ev->change = KUBE_EVENT_DELETED;
    } else if (strcmp(type, "BOOKMARK") == 0) {
        ev->type = KUBE_WATCH_BOOKMARK;
    } else if (strcmp(type, "ERROR") == 0) {
        ev->type = KUBE_WATCH_ERROR;
        ev->code = (long)json_integer_value(json_object_get(ev->obj, "code"));
        ev->reason = json_string_value(json_object_get(ev->obj, "reason"));
        ev->message = json_string_value(json_object_get(ev->obj, "message"));
    } else {
        ev->type = KUBE_WATCH_UNKNOWN;
    }
    return 0;
}

void kube_watch_event_free(kube_watch_event *ev)
{
    json_decref(ev->doc);
    memset(ev, 0, sizeof(*ev));
}
