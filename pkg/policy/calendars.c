/* calendars.c: `spec.exclusionCalendars` (calendars.h, policy.h). */
#include "policy/calendars.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/field.h"
#include "policy/quote.h"

#define CALENDARS_MAX 10
#define NAME_MAX_LEN 253
#define WHY_MAX 512

/* ---- the spec ----------------------------------------------------------- */

int policy_scope_get(const json_t *obj, const char *path, policy_scope_t *out, char *err,
                     size_t errlen)
{
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN];
    json_t *scope;
    int rc, k = POLICY_NSCOPES;

    *out = POLICY_SCOPE_ALL;
    if ((rc = policy_field_get(obj, "scope", JSON_STRING, path, &scope, err, errlen)) < 0)
        return rc;
    if (scope == NULL)
        return 0;
    if (strlen(json_string_value(scope)) == json_string_length(scope))
        for (k = 0; k < POLICY_NSCOPES; k++)
            if (strcmp(json_string_value(scope), policy_scope_name((policy_scope_t)k)) == 0)
                break;
    if (k == POLICY_NSCOPES) {
        policy_field_join(fp, sizeof fp, path, "scope");
        quote_string(json_string_value(scope), q, sizeof q);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not one of AllChanges, "
                        "MinorUpgrades, Nodes, MinorUpgradesAndNodes", fp, q);
    }
    *out = (policy_scope_t)k;
    return 0;
}

/* Kubernetes' rule for a ConfigMap key: [-._a-zA-Z0-9]+, not "." or "..". */
static bool valid_key(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX_LEN || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.'))
            return false;
    }
    return true;
}

static int name_field(const json_t *obj, const char *key, const char *path, bool required,
                      char **out, char *err, size_t errlen)
{
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN];
    json_t *v;
    int rc = required ? policy_field_required(obj, key, JSON_STRING, path, &v, err, errlen)
                      : policy_field_get(obj, key, JSON_STRING, path, &v, err, errlen);
    if (rc < 0 || v == NULL)
        return rc < 0 ? rc : 0;
    policy_field_join(fp, sizeof fp, path, key);
    if ((rc = policy_field_check_string(v, fp, NAME_MAX_LEN, err, errlen)) < 0)
        return rc;
    if (required ? !policy_field_is_name(json_string_value(v))
                 : !valid_key(json_string_value(v))) {
        quote_string(json_string_value(v), q, sizeof q);
        return hcp_errf(err, errlen, HCP_EINVAL, required
                        ? "%s: %s is not a ConfigMap name (lower-case letters, digits, '-' and "
                          "'.', at most 253)"
                        : "%s: %s is not a ConfigMap key (letters, digits, '-', '_' and '.', at "
                          "most 253)", fp, q);
    }
    return (*out = strdup(json_string_value(v))) ? 0 : HCP_ENOMEM;
}

static int why(policy_calendar_t *cal, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int why(policy_calendar_t *cal, const char *fmt, ...)
{
    va_list ap;
    char *s = malloc(WHY_MAX);
    if (!s)
        return HCP_ENOMEM;
    va_start(ap, fmt);
    vsnprintf(s, WHY_MAX, fmt, ap);
    va_end(ap);
    free(cal->why);
    cal->why = s;
    return 0;
}

/* A calendar's timeline: permitted outside its events, or nowhere, with
 * the reason why. */
static int make_sched(policy_calendar_t *cal)
{
    sched_t *s;
    sched_unref(cal->sched);
    cal->sched = NULL;
    if (cal->state != POLICY_CALENDAR_READ) {
        sched_excluded_t all = {SCHED_NEG_INF, SCHED_POS_INF, 0};
        const char *r = cal->why;
        s = sched_excluding(&all, 1, &r, 1);
    } else {
        icsread_t *rd = &cal->read;
        size_t n = rd->n_reasons + 1;
        char **reasons = calloc(n, sizeof *reasons);
        sched_excluded_t *v = malloc((rd->n_spans + 1) * sizeof *v);
        bool ok = reasons && v;
        char scope[64] = "";
        if (cal->scope != POLICY_SCOPE_ALL)
            snprintf(scope, sizeof scope, ", scope %s", policy_scope_name(cal->scope));
        for (size_t i = 0; ok && i < rd->n_reasons; i++)
            ok = asprintf(&reasons[i], "%s (calendar %s%s)", rd->reasons[i], cal->name,
                          scope) >= 0 || (reasons[i] = NULL);
        if (ok) {
            char until[32];
            sched_format_utc(rd->until, until, sizeof until);
            ok = asprintf(&reasons[n - 1], "calendar %s%s has events past %s, the end of what "
                          "is read", cal->name, scope, until) >= 0 || (reasons[n - 1] = NULL);
        }
        if (ok) {
            if (rd->n_spans)
                memcpy(v, rd->spans, rd->n_spans * sizeof *v);
            size_t m = rd->n_spans;
            if (rd->beyond)
                v[m++] = (sched_excluded_t){rd->until, SCHED_POS_INF, n - 1};
            s = sched_excluding(v, m, (const char *const *)reasons, n);
        } else {
            s = NULL;
        }
        for (size_t i = 0; reasons && i < n; i++)
            free(reasons[i]);
        free(reasons);
        free(v);
        /* The leaf has its copy: the spans are not kept twice. */
        free(rd->spans);
        rd->spans = NULL;
        rd->n_spans = 0;
    }
    cal->sched = s;
    return s ? 0 : HCP_ENOMEM;
}

int policy_calendars_parse(const json_t *spec, policy_t *p, char *err, size_t errlen)
{
    static const char *const fields[] = {"name", "key", "scope", NULL};
    const char *path = "spec.exclusionCalendars";
    json_t *arr, *v;
    size_t i;
    int rc;

    if ((rc = policy_field_get(spec, "exclusionCalendars", JSON_ARRAY, "spec", &arr, err,
                               errlen)) < 0)
        return rc;
    if (arr == NULL || json_array_size(arr) == 0)
        return 0;
    if (json_array_size(arr) > CALENDARS_MAX)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: has %zu entries; at most %d are supported",
                        path, json_array_size(arr), CALENDARS_MAX);
    if (!(p->calendars = calloc(json_array_size(arr), sizeof *p->calendars)))
        return HCP_ENOMEM;
    json_array_foreach(arr, i, v) {
        char ip[POLICY_PATHLEN];
        policy_calendar_t *cal = &p->calendars[i];
        policy_field_index(ip, sizeof ip, path, i);
        p->n_calendars = i + 1;
        if (!json_is_object(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", ip,
                            quote_json_type(v));
        if ((rc = policy_field_check_fields(v, ip, fields, err, errlen)) < 0 ||
            (rc = name_field(v, "name", ip, true, &cal->name, err, errlen)) < 0 ||
            (rc = name_field(v, "key", ip, false, &cal->key, err, errlen)) < 0 ||
            (rc = policy_scope_get(v, ip, &cal->scope, err, errlen)) < 0)
            return rc;
        for (size_t k = 0; k < i; k++)
            if (strcmp(p->calendars[k].name, cal->name) == 0 &&
                (p->calendars[k].key == NULL) == (cal->key == NULL) &&
                (!cal->key || strcmp(p->calendars[k].key, cal->key) == 0))
                return hcp_errf(err, errlen, HCP_EINVAL, "%s: names the same calendar as "
                                "%s[%zu]", ip, path, k);
        if (cal->scope != POLICY_SCOPE_ALL)
            p->scoped = true;
        if ((rc = why(cal, "exclusion calendar %s has not been read yet", cal->name)) < 0 ||
            (rc = make_sched(cal)) < 0)
            return rc;
    }
    return 0;
}

/* ---- composition -------------------------------------------------------- */

int policy_calendars_compose(policy_t *p)
{
    int c;
    if (!p->base) {
        p->base = p->sched;
        p->sched = NULL;
        for (c = 0; c < POLICY_NCHANGES; c++) {
            p->base_for[c] = p->sched_for[c];
            p->sched_for[c] = NULL;
        }
    }
    sched_unref(p->sched);
    p->sched = NULL;
    for (c = 0; c < POLICY_NCHANGES; c++) {
        sched_t *s = sched_ref(p->base_for[c] ? p->base_for[c] : p->base);
        for (size_t i = 0; s && i < p->n_calendars; i++) {
            if (!policy_scope_covers(p->calendars[i].scope, (policy_change_t)c))
                continue;
            sched_t *t = sched_and(s, p->calendars[i].sched);
            sched_unref(s);
            s = t;
        }
        sched_unref(p->sched_for[c]);
        if (!(p->sched_for[c] = s))
            return HCP_ENOMEM;
    }
    p->sched = sched_ref(p->sched_for[POLICY_CHANGE_NODES_MINOR]);
    for (size_t i = 0; i < p->n_calendars; i++)
        if (p->calendars[i].scope != POLICY_SCOPE_ALL)
            p->scoped = true;
    return 0;
}

void policy_calendars_free(policy_t *p)
{
    for (size_t i = 0; i < p->n_calendars; i++) {
        free(p->calendars[i].name);
        free(p->calendars[i].key);
        free(p->calendars[i].why);
        icsread_free(&p->calendars[i].read);
        sched_unref(p->calendars[i].sched);
    }
    free(p->calendars);
    p->calendars = NULL;
    p->n_calendars = 0;
    sched_unref(p->base);
    p->base = NULL;
    for (int c = 0; c < POLICY_NCHANGES; c++) {
        sched_unref(p->base_for[c]);
        p->base_for[c] = NULL;
    }
}

/* ---- reading ------------------------------------------------------------ */

/* The text of cal in the ConfigMap data, or NULL with cal's state and why
 * set. */
static const char *text_of(policy_calendar_t *cal, const char *ns, const json_t *data,
                           size_t *len, int *rc)
{
    const json_t *v = NULL;
    *rc = 0;
    if (!data) {
        cal->state = POLICY_CALENDAR_MISSING;
        *rc = why(cal, "exclusion calendar %s: ConfigMap %s/%s not found", cal->name, ns,
                  cal->name);
        return NULL;
    }
    if (cal->key) {
        v = json_object_get(data, cal->key);
        if (!json_is_string(v)) {
            cal->state = POLICY_CALENDAR_MISSING;
            *rc = why(cal, "exclusion calendar %s: ConfigMap %s/%s has no key %s in its data",
                      cal->name, ns, cal->name, cal->key);
            return NULL;
        }
    } else if (json_is_object(data) && json_object_size(data) == 1) {
        const char *k;
        json_t *x;
        json_object_foreach((json_t *)data, k, x) v = x;
    }
    if (!cal->key && !json_is_string(v)) {
        cal->state = POLICY_CALENDAR_MISSING;
        *rc = why(cal, "exclusion calendar %s: ConfigMap %s/%s has %zu keys in its data; "
                  "name the one with the calendar in `key`", cal->name, ns, cal->name,
                  json_is_object(data) ? json_object_size(data) : (size_t)0);
        return NULL;
    }
    *len = json_string_length(v);
    return json_string_value(v);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ULL;
    return h;
}

static int read_one(policy_t *p, policy_calendar_t *cal, const json_t *data, sched_time_t now,
                    bool *changed)
{
    size_t len = 0;
    int rc;
    const char *text = text_of(cal, p->namespace_, data, &len, &rc);
    uint64_t fp = 14695981039346656037ULL;

    if (rc != 0)
        return rc;
    icsread_free(&cal->read);
    if (text) {
        if ((rc = icsread_parse(text, len, p->time_zone, now, &cal->read)) != 0)
            return rc;
        fp = fnv(fp, text, len);
        if (cal->read.n_problems == 0) {
            cal->state = POLICY_CALENDAR_READ;
            free(cal->why);
            cal->why = NULL;
        } else {
            const icsread_problem_t *pr = &cal->read.problems[0];
            char line[32] = "";
            cal->state = POLICY_CALENDAR_UNREADABLE;
            if (pr->line > 0)
                snprintf(line, sizeof line, "line %d: ", pr->line);
            if ((rc = why(cal, "exclusion calendar %s could not be read: %s%s%s", cal->name,
                          line, pr->message,
                          cal->read.n_problems > 1 ? " (and more: see the policy's status)"
                                                   : "")) < 0)
                return rc;
        }
    }
    fp = fnv(fp, &cal->state, sizeof cal->state);
    if (cal->why)
        fp = fnv(fp, cal->why, strlen(cal->why));
    if (fp == cal->fp && cal->sched) {
        /* The same text and verdict: the timeline stands. */
        free(cal->read.spans);
        cal->read.spans = NULL;
        cal->read.n_spans = 0;
        return 0;
    }
    *changed = true;
    cal->fp = fp;
    return make_sched(cal);
}

int policy_read_calendars(policy_t *p, policy_configmap_fn data_of, void *ud, sched_time_t now,
                          bool *changed)
{
    bool any = false;
    int rc;

    if (changed)
        *changed = false;
    if (!p || !p->valid || p->n_calendars == 0)
        return 0;
    for (size_t i = 0; i < p->n_calendars; i++) {
        policy_calendar_t *cal = &p->calendars[i];
        if ((rc = read_one(p, cal, data_of(p->namespace_, cal->name, ud), now, &any)) != 0)
            return rc;
    }
    if (any && (rc = policy_calendars_compose(p)) != 0)
        return rc;
    if (changed)
        *changed = any;
    return 0;
}

bool policy_uses_calendar(const policy_t *p, const char *name)
{
    for (size_t i = 0; p && i < p->n_calendars; i++)
        if (strcmp(p->calendars[i].name, name) == 0)
            return true;
    return false;
}
