/* libFuzzer target: a watch response stream. The bytes are cut into chunks
 * of varying size (as the network delivers them), split into lines, each
 * line decoded as a watch event, and ADDED/MODIFIED/DELETED events applied
 * to a cache, as the watch does. A line that is not JSON drops the buffered
 * rest, as a restarted stream would. Each line is also peeked
 * (kube_watch_event_peek()): whenever the peek and the parser both read a
 * line, they must agree on its type, namespace, name and resourceVersion
 * (the watch skips the parse of an echo on the peek's word). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "kube/cache.h"
#include "kube/event.h"
#include "kube/lines.h"

#define MAX_LINE (64 * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void drain(kube_lines *l, kube_cache *c)
{
    const char *line;
    size_t n;

    while (kube_lines_next(l, &line, &n)) {
        kube_watch_event ev;
        kube_error e;
        char why[256];
        int rc = kube_watch_event_parse(line, n, &ev, why, sizeof why);
        kube_watch_peek pk;

        if (kube_watch_event_peek(line, n, &pk) == 0 && rc == 0) {
            const json_t *md = json_object_get(ev.obj, "metadata");
            const char *ns = json_string_value(json_object_get(md, "namespace"));
            const char *name = json_string_value(json_object_get(md, "name"));
            if (ev.type != KUBE_WATCH_OBJECT || ev.change != pk.change || !ev.rv ||
                strcmp(ev.rv, pk.rv) != 0 || !name || strcmp(name, pk.name) != 0 ||
                strcmp(ns ? ns : "", pk.ns) != 0)
                abort(); /* the peek read something the parser does not */
        }

        if (rc == HCP_EPARSE) {
            kube_lines_reset(l);
            return;
        }
        if (rc < 0)
            continue;
        if (ev.type == KUBE_WATCH_OBJECT)
            (void)kube_cache_apply(c, ev.change, ev.obj, &e);
        kube_watch_event_free(&ev);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    kube_lines lines;
    kube_cache cache;
    uint32_t rng;
    size_t off = 0;

    if (size < 1 || kube_cache_init(&cache, NULL, NULL) != 0)
        return 0;
    rng = 2166136261u ^ data[0];
    data++;
    size--;
    kube_lines_init(&lines, MAX_LINE);
    while (off < size) {
        size_t chunk;
        rng = rng * 1664525u + 1013904223u;
        chunk = 1 + (rng >> 24) % 97;
        if (chunk > size - off)
            chunk = size - off;
        if (kube_lines_feed(&lines, (const char *)data + off, chunk) < 0)
            kube_lines_reset(&lines);
        else
            drain(&lines, &cache);
        off += chunk;
    }
    kube_lines_free(&lines);
    kube_cache_free(&cache);
    return 0;
}
