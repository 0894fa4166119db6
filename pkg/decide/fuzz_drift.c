/* libFuzzer target: the drift hold's reading of outside bytes (drift.h):
 * the input is both a held-drift record (annotation text) and a JSON array
 * [oldObject, object] of MachineDeployments. A record that parses writes
 * back one that parses to the same fields; an object is never drift
 * against itself, a drift needs the inputs its template was made from and
 * a changed template, and its words fit their buffer; the inputs' text
 * reads back; the strategy operations set exactly one path; the release
 * patch always builds. The array's items are also read as the Machines of a
 * LIST answer and a MachineSet (remediation): a machine remediable is one
 * whose delete has both preconditions. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "decide/drift.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char input[64];
    decide_drift_t d, again;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (decide_drift_parse(text, &d) == 0) {
        char *rec = decide_drift_record(d.since, d.strategy, d.input, d.inputs);
        if (!rec || decide_drift_parse(rec, &again) != 0)
            abort();
        if (!same(again.since, d.since ? d.since : "") ||
            !same(again.input, d.input ? d.input : "") ||
            !same(again.strategy, d.strategy ? d.strategy : DECIDE_DRIFT_DEFAULT_STRATEGY) ||
            again.inputs != d.inputs)
            abort();
        decide_drift_free(&again);
        free(rec);
        json_t *patch = decide_drift_release_patch(size & 1, d.strategy, d.inputs, d.since);
        if (!patch)
            abort();
        json_decref(patch);
        decide_drift_free(&d);
    }
    free(text);

    json_t *doc = json_loadb((const char *)data, size, 0, NULL);
    if (!doc)
        return 0;
    json_t *old_md = json_array_get(doc, 0), *new_md = json_array_get(doc, 1);
    uint64_t fp = (uint64_t)size * 0x9e3779b97f4a7c15ULL;
    if (decide_drift_is(old_md, old_md, fp, input, sizeof(input)) ||
        decide_drift_is(new_md, new_md, fp, input, sizeof(input)))
        abort();
    /* drift only from the inputs the old template was made from */
    uint64_t made = decide_inputs_parse(json_string_value(json_object_get(
        json_object_get(json_object_get(old_md, "metadata"), "annotations"),
        DECIDE_TEMPLATE_INPUTS_ANNOTATION)));
    if (decide_drift_is(old_md, new_md, made, input, sizeof(input)) &&
        (!made || strlen(input) >= sizeof(input) || !decide_template_changed(old_md, new_md)))
        abort();
    char hex[17];
    decide_inputs_format(fp, hex);
    if (decide_inputs_parse(hex) != fp)
        abort();
    json_t *ops = decide_md_strategy_ops(new_md, DECIDE_ON_DELETE);
    if (!ops || json_array_size(ops) != 1)
        abort();
    json_decref(ops);
    (void)decide_md_strategy(old_md);
    (void)decide_ms_remediating(old_md);
    for (size_t i = 0; i < json_array_size(doc); i++) {
        json_t *m = json_array_get(doc, i);
        json_t *del = decide_drift_remediation_delete(m);
        if (decide_drift_remediable(m) && del &&
            (!json_is_string(json_object_get(json_object_get(del, "preconditions"), "uid")) ||
             !json_is_string(
                 json_object_get(json_object_get(del, "preconditions"), "resourceVersion"))))
            abort();
        json_decref(del);
    }
    json_decref(doc);
    return 0;
}
