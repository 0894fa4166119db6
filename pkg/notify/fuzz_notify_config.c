/* libFuzzer target: the notifications' configuration, as the mounted file
 * carries it (YAML or JSON bytes: a mapping with `notifications`, or a
 * ConfigMap whose data holds its JSON text). */
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "notify/config.h"
#include "policy/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    json_t *docs = NULL;
    size_t i;

    if (manifest_load((const char *)data, size, &docs, err, sizeof err) != 0)
        return 0;
    for (i = 0; i < json_array_size(docs); i++) {
        const json_t *doc = json_array_get(docs, i);
        const json_t *v = json_object_get(doc, "notifications");
        notify_config_t cfg;
        if (!v)
            v = json_object_get(json_object_get(doc, "data"), "notifications");
        (void)notify_config_parse(v ? v : doc, &cfg, err, sizeof err);
    }
    json_decref(docs);
    return 0;
}
