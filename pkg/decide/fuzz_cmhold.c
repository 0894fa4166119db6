/* libFuzzer target: the ConfigMap hold's reading of outside bytes
 * (cmhold.h): the input is a JSON array [oldObject, object, nodePool]. The
 * names read from the NodePool must be non-empty lines each found again by
 * decide_config_names_has(); an object never changes against itself; the
 * refusal is a terminated string within its buffer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decide/cmhold.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    char msg[256], line[512];
    bool oom;
    char *names;

    if (doc == NULL)
        return 0;
    json_t *old_cm = json_array_get(doc, 0), *new_cm = json_array_get(doc, 1);
    if (decide_cm_content_changed(old_cm, old_cm) || decide_cm_content_changed(new_cm, new_cm) ||
        decide_cm_content_changed(old_cm, new_cm) != decide_cm_content_changed(new_cm, old_cm))
        abort();
    names = decide_np_config_names(json_array_get(doc, 2), &oom);
    if (names) {
        const char *p = names;
        for (;;) {
            const char *end = strchr(p, '\n');
            size_t l = end ? (size_t)(end - p) : strlen(p);
            if (l == 0)
                abort();
            if (l < sizeof(line)) {
                memcpy(line, p, l);
                line[l] = '\0';
                if (!decide_config_names_has(names, line))
                    abort();
            }
            if (!end)
                break;
            p = end + 1;
        }
        decide_cm_pool_t pool = {.name = names, .until = names};
        decide_cm_refusal(size & 1, names, &pool, 1, msg, sizeof(msg));
        if (memchr(msg, '\0', sizeof(msg)) == NULL)
            abort();
        free(names);
    }
    json_decref(doc);
    return 0;
}
