/* libFuzzer target: the pre-start checks' configuration as the mounted file
 * carries it (YAML or JSON bytes: a mapping with `checks`, or a ConfigMap
 * whose data holds its JSON text), and a check's answer (its body's bytes,
 * untrusted) recorded and told as a verdict. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "check/check.h"
#include "policy/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512], why[600];
    json_t *docs = NULL;
    check_config_t cfg;
    check_entry_t e;

    /* The bytes as an answer's body, to a Hold and an Ignore check. */
    memset(&cfg, 0, sizeof(cfg));
    cfg.n = 2;
    strcpy(cfg.checks[0].name, "a");
    strcpy(cfg.checks[1].name, "b");
    cfg.checks[0].systems = cfg.checks[1].systems = CHECK_CONTROL_PLANE;
    cfg.checks[1].ignore = true;
    char words[64];
    size_t n = size < sizeof(words) - 1 ? size : sizeof(words) - 1;
    memcpy(words, data, n);
    words[n] = '\0';
    check_entry_reset(&e, check_change_key(words, (sched_time_t)size), CHECK_CONTROL_PLANE);
    long status = size ? 100 + data[0] * 2 : 0;
    check_entry_answer(&e, &cfg, 0, status, (const char *)data, size, "x", 0);
    check_entry_answer(&e, &cfg, 1, 200 + (long)(size % 400), (const char *)data, size, NULL, 0);
    if (check_entry_verdict(&e, &cfg, why, sizeof(why)) > CHECK_FAIL || strlen(why) >= sizeof(why))
        abort();

    if (manifest_load((const char *)data, size, &docs, err, sizeof err) != 0)
        return 0;
    for (size_t i = 0; i < json_array_size(docs); i++) {
        const json_t *doc = json_array_get(docs, i);
        const json_t *v = json_object_get(doc, "checks");
        if (!v)
            v = json_object_get(json_object_get(doc, "data"), "checks");
        if (check_config_parse(v ? v : doc, &cfg, err, sizeof err) == 0)
            for (size_t k = 0; k < cfg.n; k++)
                if (!cfg.checks[k].name[0] || cfg.checks[k].timeout < 1 ||
                    cfg.checks[k].timeout > CHECK_MAX_TIMEOUT || !cfg.checks[k].systems)
                    abort();
    }
    json_decref(docs);
    return 0;
}
