/* libFuzzer target: the release waves' configuration as the guard rails'
 * file carries it (YAML or JSON bytes: a mapping with `waves`, or a
 * ConfigMap whose data holds its JSON text), then a wave chosen for labels
 * and a verdict asked of an index with a member in every wave. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decide/wave.h"
#include "policy/manifest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wave_config_t cfg;

static void exercise(const wave_config_t *c, const uint8_t *data, size_t size)
{
    char version[WAVE_MVERLEN];
    size_t n = size < sizeof(version) - 1 ? size : sizeof(version) - 1;
    memcpy(version, data, n);
    version[n] = '\0';
    wave_index_t *ix = wave_index_new(c);
    if (!ix)
        return;
    for (size_t w = 0; w <= c->n; w++) {
        wave_member_t m;
        memset(&m, 0, sizeof(m));
        m.wave = w < c->n ? (int)w : WAVE_UNASSIGNED;
        m.opted_in = true;
        m.healthy = w % 2 == 0;
        memcpy(m.running, version, sizeof(m.running));
        memcpy(m.done[0], version, sizeof(m.done[0]));
        m.done_at[0] = (sched_time_t)w * 3600;
        m.n_done = 1;
        char name[8] = {'c', (char)('a' + w), 0};
        if (wave_index_put(ix, WAVE_CONTROL_PLANE, "ns", name, "", &m, NULL) != 0)
            abort();
    }
    for (size_t w = 0; w <= c->n; w++) {
        wave_verdict_t v;
        wave_index_verdict(ix, WAVE_CONTROL_PLANE, w < c->n ? (int)w : WAVE_UNASSIGNED, version,
                           86400, &v);
        if (v.state > WAVE_BLOCKED || strlen(v.why) >= sizeof(v.why) ||
            (v.state != WAVE_PASS && !v.why[0]))
            abort();
    }
    wave_index_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    json_t *docs = NULL;

    if (manifest_load((const char *)data, size, &docs, err, sizeof err) != 0)
        return 0;
    for (size_t i = 0; i < json_array_size(docs); i++) {
        const json_t *doc = json_array_get(docs, i);
        const json_t *v = json_object_get(doc, "waves");
        if (!v)
            v = json_object_get(json_object_get(doc, "data"), "waves");
        if (wave_config_parse(v ? v : doc, &cfg, err, sizeof err) != 0) {
            if (!err[0] || cfg.n || cfg.n_blocked)
                abort();
            continue;
        }
        if (cfg.n > WAVE_MAX || cfg.n_blocked > WAVE_MAX_BLOCKED)
            abort();
        for (size_t k = 0; k < cfg.n; k++)
            if (!cfg.waves[k].name[0] || (!cfg.waves[k].n_labels && !cfg.waves[k].n_ns))
                abort();
        json_t *labels = json_object();
        for (size_t k = 0; k < cfg.n; k++)
            for (size_t l = 0; l < cfg.waves[k].n_labels; l++)
                json_object_set_new(labels, cfg.waves[k].label_key[l],
                                    json_string(cfg.waves[k].label_val[l]));
        int w = wave_of(&cfg, cfg.n && cfg.waves[0].n_ns ? cfg.waves[0].ns[0] : "x", labels);
        if (w != WAVE_UNASSIGNED && (w < 0 || (size_t)w >= cfg.n))
            abort();
        json_decref(labels);
        exercise(&cfg, data, size);
    }
    json_decref(docs);
    return 0;
}
