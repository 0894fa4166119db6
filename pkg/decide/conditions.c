/* conditions.c: the one condition merge and status patch document. */
#include "decide/conditions.h"

#include <string.h>

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

static const char *type_of(const json_t *c)
{
    return json_string_value(json_object_get(c, "type"));
}

/* The index in want of the condition's type, or n when it is not ours. */
static size_t wanted_index(const json_t *c, const decide_cond_t *want, size_t n)
{
    const char *t = type_of(c);
    size_t i = 0;
    while (t && i < n && strcmp(t, want[i].type) != 0)
        i++;
    return t ? i : n;
}

/* Our condition as written: lastTransitionTime carried over from `old`
 * while the status does not change. */
static json_t *condition(const json_t *old, const decide_cond_t *w,
                         const decide_cond_style_t *style)
{
    char ts[32];
    const char *status = w->status ? "True" : "False";
    const char *old_status = json_string_value(json_object_get(old, "status"));
    const char *old_ltt = json_string_value(json_object_get(old, "lastTransitionTime"));
    sched_format_utc(w->since, ts, sizeof(ts));
    const char *ltt = old_status && old_ltt && strcmp(old_status, status) == 0 ? old_ltt : ts;
    json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", w->type, "status", status,
                          "reason", w->reason ? w->reason : "", "message",
                          w->message ? w->message : "", "lastTransitionTime", ltt);
    if (!c || !style)
        return c;
    if (style->generation_set &&
        json_object_set_new(c, "observedGeneration", json_integer(style->generation)))
        goto fail;
    /* NodePool conditions carry a severity; it is optional and left out when
     * there is nothing to report. */
    if (style->severity && w->status && json_object_set_new(c, "severity", json_string("Info")))
        goto fail;
    return c;
fail:
    json_decref(c);
    return NULL;
}

json_t *decide_conditions_merge(const json_t *have, const decide_cond_t *want, size_t n,
                                const decide_cond_style_t *style)
{
    const json_t *old[8] = {NULL};
    json_t *out = json_array(), *c;
    size_t i;
    if (!out || n > sizeof(old) / sizeof(old[0]))
        goto fail;
    if (json_is_array(have)) {
        json_array_foreach(have, i, c) {
            size_t k = wanted_index(c, want, n);
            if (k < n) {
                if (!old[k])
                    old[k] = c;
            } else if (json_array_append(out, c)) {
                goto fail;
            }
        }
    }
    for (i = 0; i < n; i++)
        if (json_array_append_new(out, condition(old[i], &want[i], style)))
            goto fail;
    return out;
fail:
    json_decref(out);
    return NULL;
}

static bool matches(const json_t *c, const decide_cond_t *w)
{
    const char *status = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    const char *message = json_string_value(json_object_get(c, "message"));
    return status && strcmp(status, w->status ? "True" : "False") == 0 && reason &&
           str_eq(reason, w->reason) && message && str_eq(message, w->message);
}

bool decide_conditions_match(const json_t *have, const decide_cond_t *want, size_t n)
{
    int seen[8] = {0};
    size_t i;
    const json_t *c;
    if (!json_is_array(have) || n > sizeof(seen) / sizeof(seen[0]))
        return false;
    json_array_foreach(have, i, c) {
        size_t k = wanted_index(c, want, n);
        if (k < n && (++seen[k] > 1 || !matches(c, &want[k])))
            return false;
    }
    for (i = 0; i < n; i++)
        if (seen[i] != 1)
            return false;
    return true;
}

json_t *decide_status_patch_doc(json_t *status, const char *resource_version)
{
    json_t *patch = json_pack("{s:o}", "status", status);
    if (!patch)
        return NULL; /* json_pack released status */
    if (resource_version &&
        json_object_set_new(patch, "metadata",
                            json_pack("{s:s}", "resourceVersion", resource_version))) {
        json_decref(patch);
        return NULL;
    }
    return patch;
}
