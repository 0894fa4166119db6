/* policy/field.c - typed access to the fields of a JSON document, with
 * messages that name the field's path (see field.h). */
#include "policy/field.h"

#include <stdio.h>
#include <string.h>

#include "policy/quote.h"

/* The path of a field or an element below parent; a path cut off at len
 * still names the place well enough. */
void policy_field_join(char *buf, size_t len, const char *parent, const char *key)
{
    if (snprintf(buf, len, "%s.%s", parent, key) < 0)
        buf[0] = '\0';
}

void policy_field_index(char *buf, size_t len, const char *parent, size_t i)
{
    if (snprintf(buf, len, "%s[%zu]", parent, i) < 0)
        buf[0] = '\0';
}

/* Rejects any key of obj that is not in the NULL-terminated allowed list:
 * a misspelt field must never be ignored silently. */
int policy_field_check_fields(const json_t *obj, const char *path, const char *const *allowed,
                              char *err, size_t errlen)
{
    const char *key;
    json_t *val;

    json_object_foreach((json_t *)obj, key, val) {
        size_t i;
        int ok = 0;
        for (i = 0; allowed[i] != NULL; i++) {
            if (strcmp(key, allowed[i]) == 0) {
                ok = 1;
                break;
            }
        }
        if (!ok) {
            char name[QUOTE_BUFLEN], p[POLICY_PATHLEN];
            quote_name(key, name, sizeof name);
            policy_field_join(p, sizeof p, path, name);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: unknown field", p);
        }
    }
    return 0;
}

/* Looks up key in obj. Returns 1 with *out set when present and not null, 0
 * when absent or null, or HCP_EINVAL when it has a type other than want
 * (JSON_INTEGER also rejects reals). */
int policy_field_get(const json_t *obj, const char *key, json_type want, const char *path,
                     json_t **out, char *err, size_t errlen)
{
    char p[POLICY_PATHLEN];
    json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_typeof(v) != want) {
        const char *w = want == JSON_OBJECT   ? "an object"
                        : want == JSON_ARRAY  ? "an array"
                        : want == JSON_STRING ? "a string"
                                              : "an integer";
        policy_field_join(p, sizeof p, path, key);
        if (want == JSON_INTEGER && json_is_real(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an integer, not %g", p,
                            json_real_value(v));
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be %s, not %s", p, w,
                        quote_json_type(v));
    }
    *out = v;
    return 1;
}

int policy_field_required(const json_t *obj, const char *key, json_type want, const char *path,
                          json_t **out, char *err, size_t errlen)
{
    char p[POLICY_PATHLEN];
    int rc = policy_field_get(obj, key, want, path, out, err, errlen);

    if (rc == 0) {
        policy_field_join(p, sizeof p, path, key);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required field is missing", p);
    }
    return rc < 0 ? rc : 0;
}

/* Strings given to the engine are C strings: an embedded NUL would make the
 * engine see something other than what was validated. */
int policy_field_check_string(const json_t *v, const char *path, size_t max, char *err,
                              size_t errlen)
{
    size_t len = json_string_length(v);

    if (strlen(json_string_value(v)) != len)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not contain NUL characters", path);
    if (len > max)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: is longer than %zu characters", path, max);
    return 0;
}

/* Index of s in names[0..n), or -1. */
int policy_field_lookup(const char *s, const char *const *names, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* An integer field with an inclusive range and a default. */
int policy_field_get_int(const json_t *obj, const char *key, const char *path, long lo, long hi,
                         long dflt, long *out, char *err, size_t errlen)
{
    char p[POLICY_PATHLEN];
    json_t *v;
    int rc = policy_field_get(obj, key, JSON_INTEGER, path, &v, err, errlen);

    if (rc < 0)
        return rc;
    if (rc == 0) {
        *out = dflt;
        return 0;
    }
    if (json_integer_value(v) < lo || json_integer_value(v) > hi) {
        policy_field_join(p, sizeof p, path, key);
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: %" JSON_INTEGER_FORMAT " is out of range %ld..%ld", p,
                        json_integer_value(v), lo, hi);
    }
    *out = (long)json_integer_value(v);
    return 0;
}

/* A required string field whose value must be one of names; *idx gets its
 * index. `what` completes "is not ..." in the message. */
int policy_field_get_enum(const json_t *obj, const char *key, const char *path,
                          const char *const *names, int n, const char *what, int *idx, char *err,
                          size_t errlen)
{
    char p[POLICY_PATHLEN], q[QUOTE_BUFLEN];
    json_t *v;
    int rc = policy_field_required(obj, key, JSON_STRING, path, &v, err, errlen);

    if (rc < 0)
        return rc;
    policy_field_join(p, sizeof p, path, key);
    *idx = policy_field_lookup(json_string_value(v), names, n);
    if (*idx < 0 || strlen(json_string_value(v)) != json_string_length(v)) {
        quote_string(json_string_value(v), q, sizeof q);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", p, q, what);
    }
    return 0;
}

bool policy_field_is_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > 253)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        if (!alnum && c != '-' && c != '.')
            return false;
        if (!alnum && (i == 0 || i == n - 1))
            return false;
    }
    return true;
}
