/* libFuzzer target: another management cluster's release-wave evidence
 * (decide/evidence.h), the text of its ConfigMap's evidence.json, read by a
 * controller whose waves know two names; what is read goes into an index,
 * which then publishes its own evidence and judges a release. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decide/evidence.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static wave_config_t cfg;

static void into(unsigned system, const char *ns, const char *cluster, const char *id,
                 const wave_member_t *m, void *ud)
{
    if (strncmp(ns, "mc-a:", 5) != 0 || !cluster[0] || m->wave < 0 || m->wave >= (int)cfg.n ||
        m->n_done > WAVE_HISTORY || (system == WAVE_NODEPOOL) != (id[0] != 0))
        abort();
    if (wave_index_put(ud, system, ns, cluster, id, m, NULL) != 0)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (!cfg.n) {
        json_t *c = json_loads(
            "{\"sequence\":[{\"name\":\"canary\",\"selector\":{\"namespaces\":[\"a\"]}},"
            "{\"name\":\"early\",\"selector\":{\"namespaces\":[\"b\"]},\"soak\":\"1h\"}],"
            "\"evidence\":{\"name\":\"mc-b\",\"namespace\":\"hcp\"}}",
            0, NULL);
        if (wave_config_parse(c, &cfg, err, sizeof err) != 0)
            abort();
        json_decref(c);
    }
    json_t *cm = json_pack("{s:{s:{s:s}}, s:{s:s%}}", "metadata", "labels", WAVE_EVIDENCE_LABEL,
                           "mc-a", "data", WAVE_EVIDENCE_KEY, (const char *)data, size);
    if (!cm)
        return 0; /* not UTF-8: the API server never serves it */
    wave_index_t *ix = wave_index_new(&cfg);
    if (!ix)
        abort();
    err[0] = '\0';
    long n = wave_evidence_read(cm, &cfg, into, ix, err, sizeof err);
    if ((n < 0 && !err[0]) || (n >= 0 && (size_t)n != wave_index_members(ix)))
        abort();
    wave_verdict_t v;
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", 7200, &v);
    if (v.state > WAVE_BLOCKED || (v.state != WAVE_PASS && !v.why[0]))
        abort();
    json_decref(wave_evidence_configmap(ix, NULL));
    int low;
    wave_index_sweep(ix, "mc-a:", wave_index_round(ix), &low);
    if (wave_index_members(ix) != 0)
        abort();
    wave_index_free(ix);
    json_decref(cm);
    return 0;
}
