/* guard_config.c: reading the guard rails' configuration (guard.h). Every
 * byte comes from outside (a ConfigMap, a file), so each key is checked and
 * a refusal names it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/field.h"
#include "policy/guard.h"

#define MAX_DURATION ((sched_time_t)3660 * 86400) /* ten years and a bit */

int guard_duration_parse(const char *s, const char *what, sched_time_t *out, char *err,
                         size_t errlen)
{
    static const char units[] = "dhms";
    static const sched_time_t secs[] = {86400, 3600, 60, 1};
    sched_time_t total = 0;
    const char *p = s;
    int last = -1;

    if (s == NULL || s[0] == '\0')
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: a duration is required (e.g. \"48h\")",
                        what);
    if (strcmp(s, "0") == 0) {
        *out = 0;
        return 0;
    }
    while (*p) {
        sched_time_t n = 0;
        const char *u;
        int digits = 0;
        while (*p >= '0' && *p <= '9' && digits < 12) {
            n = n * 10 + (*p++ - '0');
            digits++;
        }
        u = *p ? strchr(units, *p) : NULL;
        if (digits == 0 || u == NULL || (int)(u - units) <= last)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s: \"%.64s\" is not a duration (use d, h, m and s in that order, "
                            "e.g. \"1d12h\")",
                            what, s);
        last = (int)(u - units);
        total += n * secs[last];
        if (total > MAX_DURATION)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: \"%.64s\" is longer than 3660d", what,
                            s);
        p++;
    }
    *out = total;
    return 0;
}

/* Appends one name to a list, refusing what cannot be a name. */
static int add_name(char list[][GUARD_NAMELEN], size_t *n, const char *name, size_t len,
                    const char *key, char *err, size_t errlen)
{
    size_t i;

    if (len == 0)
        return 0;
    if (len >= GUARD_NAMELEN)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: a name is longer than %d bytes", key,
                        GUARD_NAMELEN - 1);
    for (i = 0; i < len; i++)
        if ((unsigned char)name[i] < 0x21 || (unsigned char)name[i] == 0x7f)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: a name holds a control character",
                            key);
    if (*n == GUARD_MAX_EXEMPT)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: at most %d names are supported", key,
                        GUARD_MAX_EXEMPT);
    memcpy(list[*n], name, len);
    list[(*n)++][len] = '\0';
    return 0;
}

/* A list of names: a string of comma- or space-separated names, or an array
 * of strings. */
static int name_list(const json_t *v, const char *key, char list[][GUARD_NAMELEN], size_t *n,
                     char *err, size_t errlen)
{
    size_t i;
    int rc;

    *n = 0;
    if (json_is_array(v)) {
        for (i = 0; i < json_array_size(v); i++) {
            const json_t *e = json_array_get(v, i);
            if (!json_is_string(e) || json_string_length(e) != strlen(json_string_value(e)))
                return hcp_errf(err, errlen, HCP_EINVAL, "%s[%zu]: must be a name", key, i);
            if ((rc = add_name(list, n, json_string_value(e), json_string_length(e), key, err,
                               errlen)) < 0)
                return rc;
        }
        return 0;
    }
    if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: must be a string of comma-separated names", key);
    const char *s = json_string_value(v);
    while (*s) {
        size_t len = strcspn(s, ", \t\n");
        if ((rc = add_name(list, n, s, len, key, err, errlen)) < 0)
            return rc;
        s += len;
        if (*s)
            s++;
    }
    return 0;
}

static int duration_value(const json_t *v, const char *key, sched_time_t *out, char *err,
                          size_t errlen)
{
    if (!json_is_string(v) || json_string_length(v) != strlen(json_string_value(v)))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a duration string such as \"48h\"",
                        key);
    return guard_duration_parse(json_string_value(v), key, out, err, errlen);
}

static int read_keys(const json_t *data, guard_config_t *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = {"minPermittedTime",   "rollingPeriod",
                                       "minBlockLength",     "maxExclusionLength",
                                       "maxRestrictiveUntil", "minTimeLeft",
                                       "afterChangeSettle",  "afterChangeGrace",
                                       "holdAgeWarning",     "maxNodePoolSkew",
                                       "exemptNamespaces",
                                       "exemptUsers",        "exemptGroups",
                                       "notifications",      "checks",
                                       "waves",              NULL};
    sched_time_t *dur[] = {&cfg->min_permitted, &cfg->period, &cfg->min_block,
                           &cfg->max_exclusion, &cfg->max_restrictive, &cfg->min_time_left,
                           &cfg->after_settle,  &cfg->after_grace, &cfg->hold_age_warning};
    int rc, i;

    if ((rc = policy_field_check_fields(data, "data", keys, err, errlen)) < 0)
        return rc;
    for (i = 0; i < 9; i++) {
        const json_t *v = json_object_get(data, keys[i]);
        if (v != NULL && (rc = duration_value(v, keys[i], dur[i], err, errlen)) < 0)
            return rc;
    }
    const json_t *ns = json_object_get(data, "exemptNamespaces");
    const json_t *users = json_object_get(data, "exemptUsers");
    const json_t *groups = json_object_get(data, "exemptGroups");
    if (ns && (rc = name_list(ns, "exemptNamespaces", cfg->exempt_ns, &cfg->n_exempt_ns, err,
                              errlen)) < 0)
        return rc;
    if (users && (rc = name_list(users, "exemptUsers", cfg->exempt_users, &cfg->n_exempt_users,
                                 err, errlen)) < 0)
        return rc;
    if (groups && (rc = name_list(groups, "exemptGroups", cfg->exempt_groups,
                                  &cfg->n_exempt_groups, err, errlen)) < 0)
        return rc;
    return 0;
}

int guard_config_parse(const json_t *doc, guard_config_t *cfg, char *err, size_t errlen)
{
    const json_t *data = doc;
    int rc;

    memset(cfg, 0, sizeof *cfg);
    if (!json_is_object(doc))
        return hcp_errf(err, errlen, HCP_EINVAL, "the guard rail configuration must be a mapping");
    const json_t *kind = json_object_get(doc, "kind");
    if (kind != NULL) {
        if (!json_is_string(kind) || strcmp(json_string_value(kind), "ConfigMap") != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "kind: must be ConfigMap");
        data = json_object_get(doc, "data");
        if (data == NULL || json_is_null(data))
            return 0; /* an empty ConfigMap enforces nothing */
        if (!json_is_object(data))
            return hcp_errf(err, errlen, HCP_EINVAL, "data: must be a mapping");
    }
    if ((rc = read_keys(data, cfg, err, errlen)) < 0)
        return rc;
    if (cfg->min_permitted > 0 && cfg->period == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "rollingPeriod: required with minPermittedTime");
    if (cfg->min_permitted > cfg->period && cfg->period > 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "minPermittedTime: longer than rollingPeriod, no schedule could pass");
    if (json_object_get(data, "afterChangeSettle") &&
        (cfg->after_settle < 60 || cfg->after_settle > GUARD_AFTER_MAX))
        return hcp_errf(err, errlen, HCP_EINVAL, "afterChangeSettle: must be from 1m to 168h");
    if (cfg->after_grace > (cfg->after_settle ? cfg->after_settle : GUARD_AFTER_SETTLE))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "afterChangeGrace: longer than afterChangeSettle (%lds)",
                        (long)(cfg->after_settle ? cfg->after_settle : GUARD_AFTER_SETTLE));
    const json_t *skew = json_object_get(data, "maxNodePoolSkew");
    if (skew) {
        const char *t = json_is_string(skew) ? json_string_value(skew) : NULL;
        json_int_t v = json_is_integer(skew) ? json_integer_value(skew) : -1;
        if (t && t[0] >= '0' && t[0] <= '9' && t[1] == '\0')
            v = t[0] - '0';
        if (v < 0 || v > 9)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "maxNodePoolSkew: must be a number of minor versions from 0 to 9");
        cfg->has_max_skew = true;
        cfg->max_skew = (int)v;
    }
    const json_t *age = json_object_get(data, "holdAgeWarning");
    if (age && cfg->hold_age_warning == 0)
        cfg->hold_age_warning = -1; /* "0": told never */
    else if (age && cfg->hold_age_warning < 3600)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "holdAgeWarning: must be 0 (no warning) or at least 1h");
    return 0;
}

static int name_matches(const char *pattern, const char *name)
{
    size_t n = strlen(pattern);

    if (n > 0 && pattern[n - 1] == '*')
        return strncmp(pattern, name, n - 1) == 0;
    return strcmp(pattern, name) == 0;
}

/* 1 when name matches one of the n patterns. */
static int listed(const char (*list)[GUARD_NAMELEN], size_t n, const char *name)
{
    size_t i;

    for (i = 0; name && i < n; i++)
        if (name_matches(list[i], name))
            return 1;
    return 0;
}

int guard_exempt(const guard_config_t *cfg, const char *ns, const char *user,
                 const char *const *groups, size_t ngroups)
{
    size_t i;

    if (listed(cfg->exempt_ns, cfg->n_exempt_ns, ns) ||
        listed(cfg->exempt_users, cfg->n_exempt_users, user))
        return 1;
    for (i = 0; i < ngroups; i++)
        if (listed(cfg->exempt_groups, cfg->n_exempt_groups, groups[i]))
            return 1;
    return 0;
}

int guard_enforced(const guard_config_t *cfg)
{
    return cfg->min_permitted > 0 || cfg->max_exclusion > 0 || cfg->max_restrictive > 0 ||
           cfg->min_time_left > 0;
}

int guard_str_field(const json_t *o, const char *key, const char *at, bool required, char *buf,
                    size_t len, char *err, size_t errlen)
{
    const json_t *v = json_object_get(o, key);
    const char *s;
    size_t n;

    buf[0] = '\0';
    if (!v)
        return required ? hcp_errf(err, errlen, HCP_EINVAL, "%s.%s: required", at, key) : 0;
    if (!json_is_string(v))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.%s: must be a string", at, key);
    s = json_string_value(v);
    n = json_string_length(v);
    if (n == 0 || n >= len)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.%s: must be 1 to %zu characters", at, key,
                        len - 1);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.%s: only printable ASCII without spaces is allowed", at, key);
    memcpy(buf, s, n + 1);
    return 0;
}

int guard_json_text(const json_t **v, const char *at, json_t **owned, char *err,
                    size_t errlen)
{
    json_error_t je;

    *owned = NULL;
    if (!json_is_string(*v))
        return 0;
    *owned = json_loadb(json_string_value(*v), json_string_length(*v), JSON_REJECT_DUPLICATES,
                        &je);
    if (!*owned)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: not JSON (line %d: %.120s)", at, je.line,
                        je.text);
    *v = *owned;
    return 0;
}

int guard_choice_field(const json_t *o, const char *key, const char *at, size_t len,
                       const char *const choices[], size_t *out, char *err, size_t errlen)
{
    char v[64], list[128] = "";
    size_t k;
    int rc = guard_str_field(o, key, at, false, v, len < sizeof(v) ? len : sizeof(v), err,
                             errlen);

    *out = 0;
    if (rc || v[0] == '\0')
        return rc;
    for (k = 0; choices[k]; k++)
        if (strcmp(choices[k], v) == 0) {
            *out = k;
            return 0;
        }
    for (k = 0; choices[k]; k++)
        snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                 choices[k]);
    return hcp_errf(err, errlen, HCP_EINVAL, "%s.%s: \"%s\" is not one of %s", at, key, v, list);
}

int guard_endpoint_check(const char *at, const char *name, const char *url,
                         const char *token_file, const char *names, size_t stride, size_t n,
                         char *err, size_t errlen)
{
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.name: \"%s\" may hold only a-z, 0-9 and -", at, name);
    for (size_t i = 0; i < n; i++)
        if (strcmp(names + i * stride, name) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s.name: \"%s\" is used twice", at, name);
    size_t host = strncmp(url, "https://", 8) == 0  ? 8
                  : strncmp(url, "http://", 7) == 0 ? 7
                                                    : 0;
    if (!host)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.url: must start with https:// or http://",
                        at);
    if (url[host] == '\0' || strchr("/?#", url[host]))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.url: names no host", at);
    if (token_file[0] && token_file[0] != '/')
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.tokenFile: must be an absolute path", at);
    return 0;
}

int guard_mapping_check(const json_t *o, const char *at, const char *const known[], char *err,
                        size_t errlen)
{
    const char *key;
    const json_t *v;

    if (!json_is_object(o))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a mapping", at);
    json_object_foreach((json_t *)o, key, v) {
        size_t k = 0;
        char list[256] = "";
        while (known[k] && strcmp(known[k], key) != 0)
            k++;
        if (known[k])
            continue;
        for (k = 0; known[k]; k++)
            snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? ", " : "",
                     known[k]);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s.%.64s: unknown key (%s)", at, key, list);
    }
    return 0;
}
