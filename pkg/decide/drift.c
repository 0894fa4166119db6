/* drift: a new configuration HyperShift makes by itself. See drift.h. */
#include "decide/drift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"

static bool same(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

bool decide_md_v1beta2(const json_t *md)
{
    const char *v = hcp_json_str(md, "apiVersion");
    if (v)
        return strcmp(v, "cluster.x-k8s.io/v1beta2") == 0;
    /* A list's items carry no apiVersion: v1beta2's shape tells. */
    return json_is_object(hcp_json_path(md, "spec.rollout"));
}

const char *decide_md_strategy(const json_t *md)
{
    return hcp_json_str(md, decide_md_v1beta2(md) ? "spec.rollout.strategy.type"
                                                  : "spec.strategy.type");
}

/* The template's machine template name, in either version
 * (infrastructureRef.name in both). */
static const char *machine_template(const json_t *md)
{
    return hcp_json_str(md, "spec.template.spec.infrastructureRef.name");
}

void decide_inputs_format(uint64_t fp, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)fp);
}

uint64_t decide_inputs_parse(const char *text)
{
    uint64_t v = 0;
    if (!text || strlen(text) != 16)
        return 0;
    for (const char *p = text; *p; p++) {
        int d = *p >= '0' && *p <= '9' ? *p - '0' : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        v = v << 4 | (uint64_t)d;
    }
    return v;
}

static const char *inputs_of(const json_t *md)
{
    return json_string_value(json_object_get(hcp_json_path(md, "metadata.annotations"),
                                             DECIDE_TEMPLATE_INPUTS_ANNOTATION));
}

bool decide_template_changed(const json_t *old_md, const json_t *new_md)
{
    return !same(hcp_json_str(old_md, "spec.template.spec.bootstrap.dataSecretName"),
                 hcp_json_str(new_md, "spec.template.spec.bootstrap.dataSecretName")) ||
           !same(machine_template(old_md), machine_template(new_md)) ||
           !same(hcp_json_str(old_md, "spec.template.spec.version"),
                 hcp_json_str(new_md, "spec.template.spec.version"));
}

bool decide_drift_is(const json_t *old_md, const json_t *new_md, uint64_t inputs, char *input,
                     size_t len)
{
    const char *ud0 = hcp_json_str(old_md, "spec.template.spec.bootstrap.dataSecretName");
    const char *ud1 = hcp_json_str(new_md, "spec.template.spec.bootstrap.dataSecretName");
    const char *mt0 = machine_template(old_md), *mt1 = machine_template(new_md);
    const char *strategy = decide_md_strategy(new_md);
    uint64_t made_from = decide_inputs_parse(inputs_of(old_md));

    if (len)
        input[0] = '\0';
    if (same(ud0, ud1) && same(mt0, mt1))
        return false; /* no new configuration */
    if (!made_from || made_from != inputs)
        return false; /* requested (or not known not to be) */
    if (!same(hcp_json_str(old_md, "spec.template.spec.version"),
              hcp_json_str(new_md, "spec.template.spec.version")))
        return false; /* a release: the NodePool's, held there */
    if (same(strategy, DECIDE_ON_DELETE))
        return false; /* the pool's own OnDelete replaces nothing */
    if (!ud0 && !mt0)
        return false; /* a template written for the first time */
    if (!same(mt0, mt1))
        snprintf(input, len, "machine template %s -> %s", mt0 ? mt0 : "(none)",
                 mt1 ? mt1 : "(none)");
    else
        snprintf(input, len, "user data %s -> %s", ud0 ? ud0 : "(none)", ud1 ? ud1 : "(none)");
    return true;
}

json_t *decide_md_strategy_ops(const json_t *md, const char *type)
{
    bool v2 = decide_md_v1beta2(md);
    json_t *ops = json_array(), *value;
    const char *path;

    if (!ops)
        return NULL;
    /* The deepest existing object of the strategy's path gets what is
     * missing below it. */
    if (v2 && !json_is_object(hcp_json_path(md, "spec.rollout"))) {
        path = "/spec/rollout";
        value = json_pack("{s:{s:s}}", "strategy", "type", type);
    } else if (!json_is_object(hcp_json_path(md, v2 ? "spec.rollout.strategy" : "spec.strategy"))) {
        path = v2 ? "/spec/rollout/strategy" : "/spec/strategy";
        value = json_pack("{s:s}", "type", type);
    } else {
        path = v2 ? "/spec/rollout/strategy/type" : "/spec/strategy/type";
        value = json_string(type);
    }
    if (!value || json_array_append_new(ops, json_pack("{s:s, s:s, s:o}", "op", "add", "path",
                                                       path, "value", value))) {
        json_decref(ops);
        return NULL;
    }
    return ops;
}

char *decide_drift_record(const char *since, const char *strategy, const char *input,
                          uint64_t inputs)
{
    char fp[17];
    decide_inputs_format(inputs, fp);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:s}", "since", since ? since : "", "strategy",
                            strategy ? strategy : DECIDE_DRIFT_DEFAULT_STRATEGY, "input",
                            input ? input : "", "inputs", fp);
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    return text;
}

static char *dup_str(const json_t *doc, const char *key, bool *oom)
{
    const char *s = json_string_value(json_object_get(doc, key));
    char *d = s ? strdup(s) : NULL;
    if (s && !d)
        *oom = true;
    return d;
}

int decide_drift_parse(const char *text, decide_drift_t *out)
{
    bool oom = false;
    memset(out, 0, sizeof(*out));
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(doc)) {
        json_decref(doc);
        return HCP_EPARSE;
    }
    out->since = dup_str(doc, "since", &oom);
    out->strategy = dup_str(doc, "strategy", &oom);
    out->input = dup_str(doc, "input", &oom);
    out->inputs = decide_inputs_parse(json_string_value(json_object_get(doc, "inputs")));
    json_decref(doc);
    if (oom) {
        decide_drift_free(out);
        return HCP_ENOMEM;
    }
    /* A strategy HyperShift never writes is not written back. */
    if (out->strategy && strcmp(out->strategy, "RollingUpdate") != 0 &&
        strcmp(out->strategy, "OnDelete") != 0) {
        decide_drift_free(out);
        return HCP_EPARSE;
    }
    return 0;
}

void decide_drift_free(decide_drift_t *d)
{
    free(d->since);
    free(d->strategy);
    free(d->input);
    memset(d, 0, sizeof(*d));
}

json_t *decide_drift_release_patch(bool v1beta2, const char *strategy, uint64_t inputs,
                                   const char *resource_version)
{
    const char *type = strategy ? strategy : DECIDE_DRIFT_DEFAULT_STRATEGY;
    char fp[17];
    decide_inputs_format(inputs, fp);
    json_t *spec = v1beta2 ? json_pack("{s:{s:{s:s}}}", "rollout", "strategy", "type", type)
                           : json_pack("{s:{s:s}}", "strategy", "type", type);
    if (!spec)
        return NULL;
    return json_pack("{s:{s:s?, s:{s:n, s:s}}, s:o}", "metadata", "resourceVersion",
                     resource_version, "annotations", DECIDE_HELD_DRIFT_ANNOTATION,
                     DECIDE_TEMPLATE_INPUTS_ANNOTATION, fp, "spec", spec);
}

json_t *decide_inputs_patch(json_t *patch, uint64_t inputs, const char *resource_version)
{
    char fp[17];
    decide_inputs_format(inputs, fp);
    json_t *add = json_pack("{s:{s:s?, s:{s:s}}}", "metadata", "resourceVersion",
                            resource_version, "annotations", DECIDE_TEMPLATE_INPUTS_ANNOTATION, fp);
    if (!add) {
        json_decref(patch);
        return NULL;
    }
    if (!patch)
        return add;
    int rc = json_object_update_recursive(patch, add);
    json_decref(add);
    if (rc) {
        json_decref(patch);
        return NULL;
    }
    return patch;
}

const json_t *decide_capi_conditions(const json_t *obj)
{
    const json_t *c = hcp_json_path(obj, "status.v1beta2.conditions");
    if (!json_is_array(c))
        c = hcp_json_path(obj, "status.conditions");
    return json_is_array(c) ? c : NULL;
}

static const json_t *condition(const json_t *obj, const char *type)
{
    size_t i;
    const json_t *c;
    json_array_foreach(decide_capi_conditions(obj), i, c) {
        if (same(json_string_value(json_object_get(c, "type")), type))
            return c;
    }
    return NULL;
}

static bool condition_is(const json_t *obj, const char *type, const char *status,
                         const char *reason)
{
    const json_t *c = condition(obj, type);
    return c && same(json_string_value(json_object_get(c, "status")), status) &&
           (!reason || same(json_string_value(json_object_get(c, "reason")), reason));
}

bool decide_ms_remediating(const json_t *ms)
{
    return condition_is(ms, "Remediating", "True", NULL);
}

bool decide_drift_remediable(const json_t *machine)
{
    return !json_is_string(hcp_json_path(machine, "metadata.deletionTimestamp")) &&
           condition_is(machine, "HealthCheckSucceeded", "False", NULL) &&
           condition_is(machine, "OwnerRemediated", "False", "CannotBeRemediated");
}

json_t *decide_drift_remediation_delete(const json_t *machine)
{
    const char *uid = hcp_json_str(machine, "metadata.uid");
    const char *rv = hcp_json_str(machine, "metadata.resourceVersion");
    if (!uid || !rv)
        return NULL;
    return json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion", "v1", "kind", "DeleteOptions",
                     "preconditions", "uid", uid, "resourceVersion", rv);
}
