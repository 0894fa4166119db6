/* cmhold.c: the ConfigMaps a restricted NodePool names (cmhold.h). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "decide/cmhold.h"

char *decide_np_config_names(const json_t *np, bool *oom)
{
    const json_t *list = json_object_get(json_object_get(np, "spec"), "config");
    const json_t *ref;
    size_t i, len = 0, at = 0;
    char *out;

    if (oom)
        *oom = false;
    if (!json_is_array(list))
        return NULL;
    json_array_foreach(list, i, ref) {
        const char *n = json_string_value(json_object_get(ref, "name"));
        if (n && *n && !strchr(n, '\n'))
            len += strlen(n) + 1;
    }
    if (len == 0)
        return NULL;
    if ((out = malloc(len)) == NULL) {
        if (oom)
            *oom = true;
        return NULL;
    }
    json_array_foreach(list, i, ref) {
        const char *n = json_string_value(json_object_get(ref, "name"));
        if (!n || !*n || strchr(n, '\n'))
            continue;
        if (at)
            out[at++] = '\n';
        memcpy(out + at, n, strlen(n));
        at += strlen(n);
    }
    out[at] = '\0';
    return out;
}

bool decide_config_names_has(const char *names, const char *name)
{
    size_t n = name ? strlen(name) : 0;
    const char *p = names;

    if (!names || n == 0)
        return false;
    while (*p) {
        const char *end = strchr(p, '\n');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == n && memcmp(p, name, n) == 0)
            return true;
        if (!end)
            break;
        p = end + 1;
    }
    return false;
}

/* Map field of cm, NULL when absent, not a map, or empty. */
static const json_t *content(const json_t *cm, const char *field)
{
    const json_t *m = json_object_get(cm, field);
    return json_is_object(m) && json_object_size(m) ? m : NULL;
}

static bool same_map(const json_t *a, const json_t *b)
{
    return a == b || (a && b && json_equal(a, b));
}

bool decide_cm_content_changed(const json_t *old_cm, const json_t *new_cm)
{
    return !same_map(content(old_cm, "data"), content(new_cm, "data")) ||
           !same_map(content(old_cm, "binaryData"), content(new_cm, "binaryData"));
}

void decide_cm_refusal(bool deletion, const char *cm, const decide_cm_pool_t *pools, size_t n,
                       char *msg, size_t len)
{
    size_t at = 0, i;

#define ADD(...)                                                                         \
    do {                                                                                 \
        if (at < len) {                                                                  \
            int w = snprintf(msg + at, len - at, __VA_ARGS__);                           \
            at += w > 0 ? (size_t)w : 0;                                                 \
        }                                                                                \
    } while (0)

    if (len == 0)
        return;
    msg[0] = '\0';
    ADD("ConfigMap %s is named by spec.config of NodePool%s ", cm ? cm : "", n == 1 ? "" : "s");
    for (i = 0; i < n && i < 4; i++)
        ADD("%s%s (changes restricted until %s)", i ? ", " : "", pools[i].name ? pools[i].name : "",
            pools[i].until && pools[i].until[0] ? pools[i].until
                                                : "a window opens; none is scheduled");
    if (n > 4)
        ADD(" and %zu more restricted", n - 4);
    if (deletion)
        ADD(": deleting it would fail the pool's configuration, and a ConfigMap created again "
            "under this name would roll its machines at once. Delete it in a window, or change "
            "spec.config not to name it (held until the window like any other change)");
    else
        ADD(": a change of its data or binaryData would roll the pool's machines at once. "
            "Create a new ConfigMap with the new content and change spec.config to name it "
            "(held until the window like any other change), or make this edit in a window");
#undef ADD
}

bool decide_cm_named(const decide_np_t *np, bool cluster_stanza, const char *cm)
{
    return np && (np->m.stanza.present || cluster_stanza) &&
           decide_config_names_has(np->config_names, cm);
}

int decide_cm_label_action(bool named, bool labelled)
{
    if (named == labelled)
        return 0;
    return named ? 1 : -1;
}

json_t *decide_cm_label_patch(bool add)
{
    return json_pack("{s:{s:{s:o}}}", "metadata", "labels", DECIDE_OPTIN_LABEL,
                     add ? json_string(DECIDE_OPTIN_VALUE) : json_null());
}
