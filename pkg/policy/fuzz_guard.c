/* libFuzzer target: the guard rails' configuration (a ConfigMap or a plain
 * mapping, YAML or JSON bytes), then a check of an always-permitted
 * schedule against whatever limits were read. */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "policy/guard.h"
#include "policy/manifest.h"

#define NOW ((sched_time_t)1767225600) /* 2026-01-01T00:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    json_t *docs = NULL;
    size_t i;

    if (manifest_load((const char *)data, size, &docs, err, sizeof err) != 0)
        return 0;
    for (i = 0; i < json_array_size(docs); i++) {
        guard_config_t cfg;
        guard_verdict_t v;
        sched_t *always;

        if (guard_config_parse(json_array_get(docs, i), &cfg, err, sizeof err) != 0)
            continue;
        {
            const char *const groups[] = {"system:masters", "sre"};
            (void)guard_exempt(&cfg, "ns", "user", groups, 2);
        }
        if ((always = sched_always()) == NULL)
            continue;
        guard_input_t in = {.effective = always, .has_restrictive_until = 1,
                            .restrictive_until = NOW + 86400};
        (void)guard_check(&cfg, &in, NOW, &v);
        sched_unref(always);
    }
    json_decref(docs);
    return 0;
}
