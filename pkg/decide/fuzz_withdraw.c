/* libFuzzer target: a write's intent for the held fields it leaves as they
 * run (withdraw.h) from outside bytes: the input is a JSON array
 * [oldObject, object, options, user], the parts the API server sends a
 * webhook (managedFields, the last-applied-configuration annotation's text
 * parsed again inside, request.options), and the NodePool hold with the
 * withdrawals the intent gives (decide_spec_hold()); the first byte's low
 * bits say restricted and whether the writer is exempt. Signals only for
 * fields left at their running values; an exempt writer withdraws nothing;
 * the hold's operations well formed; its lists terminated strings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/hcfields.h"
#include "decide/nphold.h"
#include "decide/slim.h"
#include "decide/withdraw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const release_fields[] = {"release.image", "controlPlaneRelease.image", NULL};

static void check_mask(const decide_intent_t *in, const json_t *old, const json_t *new_obj,
                       const char *const *fields)
{
    uint64_t mask = decide_intent_mask(in, old, new_obj, fields);
    char path[200];
    for (size_t i = 0; fields[i]; i++) {
        if (!(mask >> i & 1))
            continue;
        snprintf(path, sizeof(path), "spec.%s", fields[i]);
        if (in->exempt || !hcp_json_equal_stored(hcp_json_path(old, path),
                                                 hcp_json_path(new_obj, path)))
            abort(); /* a signal for a field that changes, or from an exempt writer */
    }
}

static void check_hold(const json_t *old, const json_t *new_obj, const decide_intent_t *in,
                       bool restricted)
{
    decide_hold_in_t hi = {restricted, decide_intent_mask(in, old, new_obj, decide_np_held_fields),
                           in->exempt};
    decide_np_hold_t h;
    json_t *op;
    size_t i;

    if (decide_spec_hold(old, new_obj, &hi, decide_np_held_fields,
                         DECIDE_REQUESTED_NODEPOOL_ANNOTATION, &h) != 0)
        return;
    if (!json_is_array(h.ops) || !memchr(h.held, '\0', sizeof(h.held)) ||
        !memchr(h.withdrawn_words, '\0', sizeof(h.withdrawn_words)) ||
        !memchr(h.kept_words, '\0', sizeof(h.kept_words)) || (h.dropped & ~h.withdrawn) ||
        (in->exempt && h.withdrawn))
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    static const char *const exempt[] = {"hypershift", NULL};

    if (json_is_array(doc)) {
        const json_t *old = json_array_get(doc, 0), *new_obj = json_array_get(doc, 1);
        const char *user = json_string_value(json_array_get(doc, 3));
        bool restricted = size && (data[0] & 1), as_exempt = size && (data[0] & 2);
        decide_intent_t in;
        decide_intent_read(old, new_obj, json_array_get(doc, 2), as_exempt ? "hypershift" : user,
                           exempt, &in);
        check_mask(&in, old, new_obj, decide_np_held_fields);
        check_mask(&in, old, new_obj, decide_hc_held_fields);
        check_mask(&in, old, new_obj, release_fields);
        check_hold(old, new_obj, &in, restricted);
        decide_intent_free(&in);
    }
    json_decref(doc);
    return 0;
}
