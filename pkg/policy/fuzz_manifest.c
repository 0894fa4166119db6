/* libFuzzer target: manifest loading (YAML and JSON bytes) followed by the
 * policy parser and the changeManagement stanza parser on every document. */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "policy/manifest.h"
#include "policy/policy.h"
#include "policy/stanza.h"

#define NOW ((sched_time_t)1767225600) /* 2026-01-01T00:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[POLICY_ERRLEN];
    json_t *docs = NULL;
    size_t i;

    if (manifest_load((const char *)data, size, &docs, err, sizeof err) != 0)
        return 0;
    for (i = 0; i < json_array_size(docs); i++) {
        json_t *doc = json_array_get(docs, i);
        stanza_resolution_t r;
        policy_t *p = NULL;
        stanza_t st;

        if (policy_parse(doc, NOW, &p, err, sizeof err) != HCP_ENOMEM)
            policy_free(p);
        (void)stanza_parse(doc, &st);
        if (stanza_resolve(&st, "ns", NULL, NULL, &r) == 0) {
            sched_interval_t iv;
            (void)sched_next(r.sched, NOW, &iv);
            stanza_resolution_free(&r);
        }
    }
    json_decref(docs);
    return 0;
}
