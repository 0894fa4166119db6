/* libFuzzer target: the NodePool hold (decide_spec_hold() over
 * decide_np_held_fields), and the same hold of the HostedCluster fields
 * that roll every NodePool (decide_hc_fields_hold()) with its record
 * (decide_hc_extract()), of an UPDATE whose parts are outside bytes: the
 * input is a JSON array [oldObject, object, options, user] (the last two
 * optional: the request's options and userInfo.username, from which the
 * write's intent is read, withdraw.h), and the first byte's low bits say
 * restricted or permitted and whether the writer is exempt. The answer must
 * be an array of operations, each with an op and a path starting with "/",
 * a value unless it removes; the lists terminated strings; only the
 * requests withdrawn dropped, and none by an exempt writer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide/hcfields.h"
#include "decide/nphold.h"
#include "decide/withdraw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const json_t *doc, bool restricted, bool exempt, bool hc)
{
    static const char *const exempt_users[] = {"hypershift", NULL};
    const json_t *old = json_array_get(doc, 0), *new_obj = json_array_get(doc, 1);
    const char *const *fields = hc ? decide_hc_held_fields : decide_np_held_fields;
    decide_intent_t in;
    decide_np_hold_t h;
    json_t *op;
    size_t i;
    int rc;

    decide_intent_read(old, new_obj, json_array_get(doc, 2),
                       exempt ? "hypershift" : json_string_value(json_array_get(doc, 3)),
                       exempt_users, &in);
    decide_hold_in_t hi = {restricted, decide_intent_mask(&in, old, new_obj, fields), in.exempt};
    rc = decide_spec_hold(old, new_obj, &hi, fields,
                          hc ? DECIDE_REQUESTED_HC_SPEC_ANNOTATION
                             : DECIDE_REQUESTED_NODEPOOL_ANNOTATION,
                          &h);
    decide_intent_free(&in);
    if (rc != 0)
        return;
    if (!json_is_array(h.ops) || !memchr(h.held, '\0', sizeof(h.held)) ||
        !memchr(h.withdrawn_words, '\0', sizeof(h.withdrawn_words)) ||
        !memchr(h.kept_words, '\0', sizeof(h.kept_words)) || (h.dropped & ~h.withdrawn) ||
        (exempt && h.withdrawn) || (h.asked && !h.held[0]))
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

    if (doc == NULL)
        return 0;
    if (json_is_array(doc)) {
        bool restricted = size && (data[0] & 1), exempt = size && (data[0] & 2);
        check(doc, restricted, exempt, false);
        check(doc, restricted, exempt, true);
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
