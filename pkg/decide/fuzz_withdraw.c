/* libFuzzer target: a write's intent for the held fields it leaves as they
 * run (withdraw.h) from outside bytes: the input is a JSON array
 * [oldObject, object, options, user], the parts the API server sends a
 * webhook (managedFields, the last-applied-configuration annotation's text
 * parsed again inside, request.options); the first byte's low bit says
 * whether the writer is exempt. Signals only for fields left at their
 * running values, over every field list that can be held, and none from an
 * exempt writer; the words of any value terminated. (The hold with the
 * withdrawals the intent gives is fuzz_nphold's.) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const exempt[] = {"hypershift", NULL};
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);

    if (json_is_array(doc)) {
        const json_t *old = json_array_get(doc, 0), *new_obj = json_array_get(doc, 1);
        const char *user = json_string_value(json_array_get(doc, 3));
        bool as_exempt = size && (data[0] & 1);
        decide_intent_t in;
        char words[256];

        decide_intent_read(old, new_obj, json_array_get(doc, 2), as_exempt ? "hypershift" : user,
                           exempt, &in);
        check_mask(&in, old, new_obj, decide_np_held_fields);
        check_mask(&in, old, new_obj, decide_hc_held_fields);
        check_mask(&in, old, new_obj, release_fields);
        decide_intent_free(&in);
        /* The words of whatever the objects hold at a release field. */
        decide_request_words("release", hcp_json_path(new_obj, "spec.release"), words,
                             sizeof(words));
        decide_running_words("release.image", hcp_json_path(old, "spec.release.image"), words,
                             sizeof(words));
        if (!memchr(words, '\0', sizeof(words)))
            abort();
    }
    json_decref(doc);
    return 0;
}
