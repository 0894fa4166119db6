/* libFuzzer target: the NodePool hold (decide_np_hold()), and the same hold
 * of the HostedCluster fields that roll every NodePool
 * (decide_hc_fields_hold()) with its record (decide_hc_extract()), of an UPDATE whose
 * two objects are outside bytes: the input is a JSON array [oldObject,
 * object], and the first byte's low bit says restricted or permitted. The
 * answer must be an array of operations, each with an op and a path
 * starting with "/", a value unless it removes, and the held list a
 * terminated string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide/hcfields.h"
#include "decide/nphold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const json_t *doc, bool restricted, bool hc)
{
    decide_np_hold_t h;
    json_t *op;
    size_t i;

    if ((hc ? decide_hc_fields_hold(json_array_get(doc, 0), json_array_get(doc, 1), restricted,
                                    &h)
            : decide_np_hold(json_array_get(doc, 0), json_array_get(doc, 1), restricted, &h)) ==
        0) {
        if (!json_is_array(h.ops) || memchr(h.held, '\0', sizeof(h.held)) == NULL)
            abort();
        json_array_foreach(h.ops, i, op) {
            const char *o = json_string_value(json_object_get(op, "op"));
            const char *p = json_string_value(json_object_get(op, "path"));
            if (!o || !p || p[0] != '/' ||
                (strcmp(o, "remove") != 0) != (json_object_get(op, "value") != NULL))
                abort();
        }
        decide_np_hold_free(&h);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);

    if (doc == NULL)
        return 0;
    if (json_is_array(doc)) {
        check(doc, size && (data[0] & 1), false);
        check(doc, size && (data[0] & 1), true);
        /* The record as the controller reads it and applies it. */
        decide_hc_t *hc = json_is_object(json_array_get(doc, 1))
                              ? decide_hc_extract(json_array_get(doc, 1))
                              : NULL;
        if (hc) {
            json_t *p = decide_hc_fields_patch(NULL, hc, "1");
            if (decide_hc_fields_held(hc) && p == NULL)
                abort(); /* only out of memory */
            json_decref(p);
            decide_hc_free(hc);
        }
    }
    json_decref(doc);
    return 0;
}
