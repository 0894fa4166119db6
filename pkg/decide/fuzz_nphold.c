/* libFuzzer target: the NodePool hold (decide_np_hold()) of an UPDATE whose
 * two objects are outside bytes: the input is a JSON array [oldObject,
 * object], and the first byte's low bit says restricted or permitted. The
 * answer must be an array of operations, each with an op and a path
 * starting with "/", a value unless it removes, and the held list a
 * terminated string. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide/nphold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    decide_np_hold_t h;
    json_t *op;
    size_t i;

    if (doc == NULL)
        return 0;
    if (json_is_array(doc) &&
        decide_np_hold(json_array_get(doc, 0), json_array_get(doc, 1), size && (data[0] & 1),
                       &h) == 0) {
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
    json_decref(doc);
    return 0;
}
