/* base/json.c - reading and comparing jansson documents (see json.h). */
#include "base/json.h"

#include <string.h>

json_t *hcp_json_path(const json_t *obj, const char *path)
{
    const json_t *cur = obj;
    const char *p = path;
    while (cur && *p) {
        const char *dot = strchr(p, '.');
        size_t n = dot ? (size_t)(dot - p) : strlen(p);
        if (!json_is_object(cur))
            return NULL;
        cur = json_object_getn(cur, p, n);
        p += n;
        if (*p == '.')
            p++;
    }
    return (json_t *)cur;
}

/* Members of o that are not null. */
static size_t non_null_members(const json_t *o)
{
    const char *k;
    const json_t *v;
    size_t n = 0;
    json_object_foreach((json_t *)o, k, v) {
        if (!json_is_null(v))
            n++;
    }
    return n;
}

bool hcp_json_equal_stored(const json_t *a, const json_t *b)
{
    if (!a || !b) {
        const json_t *x = a ? a : b;
        return !x || (json_is_object(x) && non_null_members(x) == 0);
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (non_null_members(a) != non_null_members(b))
            return false;
        const char *k;
        const json_t *v;
        json_object_foreach((json_t *)a, k, v) {
            if (json_is_null(v))
                continue;
            const json_t *w = json_object_get(b, k);
            if (!w || json_is_null(w) || !hcp_json_equal_stored(v, w))
                return false;
        }
        return true;
    }
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return false;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!hcp_json_equal_stored(json_array_get(a, i), json_array_get(b, i)))
                return false;
        return true;
    }
    return json_equal(a, b);
}

const char *hcp_json_str(const json_t *obj, const char *path)
{
    return json_string_value(hcp_json_path(obj, path)); /* NULL unless a string */
}
