#include "policy/policy.h"
#include "policy/calendars.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/field.h"
#include "policy/quote.h"
#include "policy/recurrence.h"
#include "schedule/civil.h"

#define API_VERSION "changemanagement.hypershift.openshift.io/v1alpha1"
#define KIND "HostedChangeManagementPolicy"

#define TZ_MAX 128           /* longest time zone name accepted */
#define REASON_MAX 1024      /* longest exclusion reason accepted */
#define NAME_MAX_LEN 253     /* Kubernetes object names */
#define EXCLUSIONS_MAX 1000  /* bounds compile and query cost */
/* A window longer than a year is better written as strategy Permissive; the
 * cap also keeps durations far from int32 overflow in the engine. */
#define DURATION_MAX_H 8760
#define DURATION_MAX_S (DURATION_MAX_H * 3600LL)

/* ---- small grammars --------------------------------------------------- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "HH:MM", 00:00..23:59, exactly five characters. */
static int parse_hhmm(const char *s, int *minute)
{
    int h, m;

    if (strlen(s) != 5 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' ||
        !is_digit(s[3]) || !is_digit(s[4]))
        return -1;
    h = (s[0] - '0') * 10 + (s[1] - '0');
    m = (s[3] - '0') * 10 + (s[4] - '0');
    if (h > 23 || m > 59)
        return -1;
    *minute = h * 60 + m;
    return 0;
}

/* Go's duration syntax as metav1.Duration writes it ("8h0m0s", "1h30m0s")
 * and as people write it ("8h", "90m", "45s"): an hours, a minutes and a
 * seconds part, each optional but in that order, each 1..9 digits, at least
 * one part. Fractions, signs and sub-second units are not accepted: a window
 * is measured in whole seconds. Stores total seconds (may be 0; the caller
 * checks the range). */
static int parse_duration(const char *s, long long *seconds)
{
    static const struct {
        char unit;
        long long factor;
    } parts[] = {{'h', 3600}, {'m', 60}, {'s', 1}};
    long long total = 0;
    size_t next = 0; /* index of the first unit still allowed */
    const char *p = s;

    if (*p == '\0')
        return -1;
    while (*p != '\0') {
        char digits[12];
        size_t n = 0, i;
        char *end;
        long long v;

        while (is_digit(p[n]))
            n++;
        if (n == 0 || n > 9)
            return -1;
        memcpy(digits, p, n);
        digits[n] = '\0';
        errno = 0;
        v = strtoll(digits, &end, 10);
        if (errno != 0 || *end != '\0')
            return -1;
        p += n;
        for (i = next; i < sizeof parts / sizeof parts[0] && parts[i].unit != *p; i++)
            ;
        if (i == sizeof parts / sizeof parts[0])
            return -1;
        total += v * parts[i].factor;
        next = i + 1;
        p++;
    }
    *seconds = total;
    return 0;
}

/* ---- spec sections ------------------------------------------------------ */

static int permit(const json_t *obj, const char *path, policy_t *p, char *err, size_t errlen)
{
    static const char *const fields[] = {"recurrence", "rrule", "startTime", "duration", NULL};
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN], msg[POLICY_ERRLEN];
    json_t *rec, *rule, *v;
    char rrule[POLICY_RRULE_MAX];
    int rc;
    long long seconds;

    if ((rc = policy_field_check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get(obj, "recurrence", JSON_OBJECT, path, &rec, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get(obj, "rrule", JSON_STRING, path, &rule, err, errlen)) < 0)
        return rc;
    if (rec != NULL && rule != NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: recurrence and rrule are mutually exclusive",
                        path);
    if (rec == NULL && rule == NULL) {
        /* The enhancement: a null recurrence permits every date, with
         * startTime and duration applied to each day. */
        snprintf(rrule, sizeof rrule, "FREQ=DAILY");
    } else if (rec != NULL) {
        policy_field_join(fp, sizeof fp, path, "recurrence");
        if ((rc = policy_recurrence_rrule(rec, fp, rrule, err, errlen)) < 0)
            return rc;
        /* The translation is ours; the gate still checks it so that the
         * engine never sees a rule it does not support. */
        if (sched_rrule_check(rrule, msg, sizeof msg) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: translates to %s, which is rejected: %s",
                            fp, rrule, msg);
    } else {
        policy_field_join(fp, sizeof fp, path, "rrule");
        if ((rc = policy_field_check_string(rule, fp, POLICY_RRULE_MAX - 1, err, errlen)) < 0)
            return rc;
        if (json_string_length(rule) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be empty", fp);
        msg[0] = '\0';
        if (sched_rrule_check(json_string_value(rule), msg, sizeof msg) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s", fp,
                            msg[0] ? msg : "is not a supported rule");
        memcpy(rrule, json_string_value(rule), json_string_length(rule) + 1);
    }
    p->rrule = strdup(rrule);
    if (p->rrule == NULL)
        return HCP_ENOMEM;

    p->start_minute = 0;
    if ((rc = policy_field_get(obj, "startTime", JSON_STRING, path, &v, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        policy_field_join(fp, sizeof fp, path, "startTime");
        if (parse_hhmm(json_string_value(v), &p->start_minute) != 0 ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a valid HH:MM time", fp, q);
        }
    }

    p->duration = 0;
    if ((rc = policy_field_get(obj, "duration", JSON_STRING, path, &v, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        policy_field_join(fp, sizeof fp, path, "duration");
        quote_string(json_string_value(v), q, sizeof q);
        if (parse_duration(json_string_value(v), &seconds) != 0 ||
            strlen(json_string_value(v)) != json_string_length(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a valid duration "
                            "(hours, minutes and seconds, e.g. 8h, 90m, 1h30m or 8h0m0s)", fp, q);
        if (seconds <= 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s must be longer than zero", fp, q);
        if (seconds > DURATION_MAX_S)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is longer than the maximum of %dh", fp,
                            q, DURATION_MAX_H);
        p->duration = (int32_t)seconds;
    }
    return 0;
}

/* spec.minTimeLeft (DESIGN.md 2.1 extension): how much of a window must
 * remain for a change to start in it, for the control plane and for the
 * worker nodes. Same duration grammar and cap as a window's duration; "0s"
 * (or an absent key) asks for no minimum. */
static int min_time_left(const json_t *obj, const char *path, policy_t *p, char *err,
                         size_t errlen)
{
    static const char *const fields[] = {"controlPlane", "workerNodes", NULL};
    sched_time_t *into[2] = {&p->min_left_cp, &p->min_left_workers};
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN];
    long long seconds;
    json_t *v;
    int rc;

    if ((rc = policy_field_check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    for (int i = 0; i < 2; i++) {
        if ((rc = policy_field_get(obj, fields[i], JSON_STRING, path, &v, err, errlen)) < 0)
            return rc;
        if (rc == 0)
            continue;
        policy_field_join(fp, sizeof fp, path, fields[i]);
        quote_string(json_string_value(v), q, sizeof q);
        if (parse_duration(json_string_value(v), &seconds) != 0 ||
            strlen(json_string_value(v)) != json_string_length(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a valid duration "
                            "(hours, minutes and seconds, e.g. 2h, 90m, 1h30m or 0s for none)",
                            fp, q);
        if (seconds > DURATION_MAX_S)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is longer than the maximum of %dh", fp,
                            q, DURATION_MAX_H);
        *into[i] = (sched_time_t)seconds;
    }
    return 0;
}

/* The refusal of exclusion date field (path.field) holding v. Paths and
 * quotes are built only here: a policy may hold a thousand exclusions, and
 * on the way to a valid one they cost more than the checks. */
static int bad_date(const char *path, const char *field, const json_t *v, char *err,
                    size_t errlen)
{
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN];

    policy_field_join(fp, sizeof fp, path, field);
    quote_string(json_string_value(v), q, sizeof q);
    return hcp_errf(err, errlen, HCP_EINVAL,
                    "%s: %s is not a valid date (YYYY-MM-DD, years 1970..9999)", fp, q);
}

static int exclusion(const json_t *obj, const char *path, policy_exclusion_t *x, char *err,
                     size_t errlen)
{
    static const char *const fields[] = {"fromDate", "untilDate", "reason", "scope", NULL};
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN], q2[QUOTE_BUFLEN];
    json_t *from, *until, *reason;
    int rc;

    if (!json_is_object(obj))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", path,
                        quote_json_type(obj));
    if ((rc = policy_field_check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_required(obj, "fromDate", JSON_STRING, path, &from, err, errlen)) < 0)
        return rc;
    if (strlen(json_string_value(from)) != json_string_length(from) ||
        sched_parse_date(json_string_value(from), &x->from_day) != 0)
        return bad_date(path, "fromDate", from, err, errlen);
    if ((rc = policy_field_get(obj, "untilDate", JSON_STRING, path, &until, err, errlen)) < 0)
        return rc;
    x->until_day = x->from_day + 1;
    if (until != NULL) {
        if (strlen(json_string_value(until)) != json_string_length(until) ||
            sched_parse_date(json_string_value(until), &x->until_day) != 0)
            return bad_date(path, "untilDate", until, err, errlen);
        if (x->until_day <= x->from_day) {
            policy_field_join(fp, sizeof fp, path, "untilDate");
            quote_string(json_string_value(from), q, sizeof q);
            quote_string(json_string_value(until), q2, sizeof q2);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: "
                        "%s must be after fromDate %s (untilDate is exclusive)", fp, q2, q);
        }
    }
    if ((rc = policy_field_get(obj, "reason", JSON_STRING, path, &reason, err, errlen)) < 0)
        return rc;
    if (reason != NULL) {
        policy_field_join(fp, sizeof fp, path, "reason");
        if ((rc = policy_field_check_string(reason, fp, REASON_MAX, err, errlen)) < 0)
            return rc;
    }
    if ((rc = policy_scope_get(obj, path, &x->scope, err, errlen)) < 0)
        return rc;
    x->reason = strdup(reason != NULL ? json_string_value(reason) : "");
    return x->reason == NULL ? HCP_ENOMEM : 0;
}

bool policy_scope_covers(policy_scope_t s, policy_change_t c)
{
    switch (s) {
    case POLICY_SCOPE_ALL: return true;
    case POLICY_SCOPE_MINOR: return c == POLICY_CHANGE_CP_MINOR || c == POLICY_CHANGE_NODES_MINOR;
    case POLICY_SCOPE_NODES: return c == POLICY_CHANGE_NODES || c == POLICY_CHANGE_NODES_MINOR;
    case POLICY_SCOPE_MINOR_AND_NODES: return c != POLICY_CHANGE_CP;
    case POLICY_NSCOPES: break;
    }
    return true; /* fail safe */
}

const char *policy_scope_name(policy_scope_t s)
{
    switch (s) {
    case POLICY_SCOPE_ALL: return "AllChanges";
    case POLICY_SCOPE_MINOR: return "MinorUpgrades";
    case POLICY_SCOPE_NODES: return "Nodes";
    case POLICY_SCOPE_MINOR_AND_NODES: return "MinorUpgradesAndNodes";
    case POLICY_NSCOPES: break;
    }
    return "Unknown";
}

const char *policy_change_name(policy_change_t c)
{
    switch (c) {
    case POLICY_CHANGE_CP: return "control-plane z-stream or configuration";
    case POLICY_CHANGE_CP_MINOR: return "control-plane minor upgrade";
    case POLICY_CHANGE_NODES: return "node z-stream or configuration";
    case POLICY_CHANGE_NODES_MINOR: return "node minor upgrade";
    case POLICY_NCHANGES: break;
    }
    return "change";
}

static int maintenance_schedule(const json_t *obj, const char *path, policy_t *p, char *err,
                                size_t errlen)
{
    static const char *const fields[] = {"timeZone", "permit", "exclude", NULL};
    char fp[POLICY_PATHLEN], q[QUOTE_BUFLEN];
    json_t *tz, *perm, *excl, *v;
    size_t i;
    int rc;

    if ((rc = policy_field_check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get(obj, "timeZone", JSON_STRING, path, &tz, err, errlen)) < 0)
        return rc;
    if (tz != NULL) {
        int32_t day;
        int sec, off;
        policy_field_join(fp, sizeof fp, path, "timeZone");
        if ((rc = policy_field_check_string(tz, fp, TZ_MAX, err, errlen)) < 0)
            return rc;
        quote_string(json_string_value(tz), q, sizeof q);
        if (json_string_length(tz) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be empty (omit it for UTC)", fp);
        if (sched_utc_to_local(json_string_value(tz), 0, &day, &sec, &off) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a known IANA time zone", fp, q);
    }
    free(p->time_zone);
    p->time_zone = strdup(tz != NULL ? json_string_value(tz) : "UTC");
    if (p->time_zone == NULL)
        return HCP_ENOMEM;

    if ((rc = policy_field_get(obj, "permit", JSON_OBJECT, path, &perm, err, errlen)) < 0)
        return rc;
    if (perm != NULL) {
        p->has_permit = 1;
        policy_field_join(fp, sizeof fp, path, "permit");
        if ((rc = permit(perm, fp, p, err, errlen)) < 0)
            return rc;
    }

    if ((rc = policy_field_get(obj, "exclude", JSON_ARRAY, path, &excl, err, errlen)) < 0)
        return rc;
    if (excl == NULL || json_array_size(excl) == 0)
        return 0;
    policy_field_join(fp, sizeof fp, path, "exclude");
    if (json_array_size(excl) > EXCLUSIONS_MAX)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: has %zu entries; at most %d are supported",
                        fp, json_array_size(excl), EXCLUSIONS_MAX);
    p->exclusions = calloc(json_array_size(excl), sizeof *p->exclusions);
    if (p->exclusions == NULL)
        return HCP_ENOMEM;
    json_array_foreach(excl, i, v) {
        char ip[POLICY_PATHLEN];
        policy_field_index(ip, sizeof ip, fp, i);
        p->n_exclusions = i + 1; /* so that policy_free() sees the reason */
        if ((rc = exclusion(v, ip, &p->exclusions[i], err, errlen)) < 0)
            return rc;
    }
    return 0;
}

static int metadata(const json_t *doc, policy_t *p, char *err, size_t errlen)
{
    json_t *md, *v;
    int rc;

    md = json_object_get(doc, "metadata");
    if (md == NULL || json_is_null(md))
        return 0;
    if (!json_is_object(md))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", "metadata",
                        quote_json_type(md));
    if ((rc = policy_field_get(md, "name", JSON_STRING, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if ((rc = policy_field_check_string(v, "metadata.name", NAME_MAX_LEN, err, errlen)) < 0)
            return rc;
        free(p->name);
        if ((p->name = strdup(json_string_value(v))) == NULL)
            return HCP_ENOMEM;
    }
    if ((rc = policy_field_get(md, "namespace", JSON_STRING, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if ((rc = policy_field_check_string(v, "metadata.namespace", NAME_MAX_LEN, err, errlen)) < 0)
            return rc;
        free(p->namespace_);
        if ((p->namespace_ = strdup(json_string_value(v))) == NULL)
            return HCP_ENOMEM;
    }
    if ((rc = policy_field_get(md, "generation", JSON_INTEGER, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if (json_integer_value(v) < 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be negative",
                            "metadata.generation");
        p->generation = json_integer_value(v);
    }
    return 0;
}

static int document(const json_t *doc, policy_t *p, char *err, size_t errlen)
{
    static const char *const fields[] = {"apiVersion", "kind", "metadata", "spec", "status",
                                         NULL};
    static const char *const spec_fields[] = {"strategy", "maintenanceSchedule", "minTimeLeft",
                                              "exclusionCalendars", NULL};
    static const char *const STRATEGIES[3] = {"Permissive", "Restrictive",
                                              "MaintenanceSchedule"};
    char q[QUOTE_BUFLEN];
    json_t *v, *spec, *ms;
    int rc, strategy;

    if (!json_is_object(doc))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a JSON object, not %s", "document",
                        quote_json_type(doc));
    if ((rc = metadata(doc, p, err, errlen)) < 0)
        return rc;
    /* Report unknown top-level fields by their own name, not "document.x". */
    {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)doc, key, val) {
            if (policy_field_lookup(key, fields, 5) < 0) {
                char name[QUOTE_BUFLEN];
                quote_name(key, name, sizeof name);
                return hcp_errf(err, errlen, HCP_EINVAL, "%s: unknown field", name);
            }
        }
    }
    v = json_object_get(doc, "apiVersion");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", "apiVersion",
                            quote_json_type(v));
        if (strcmp(json_string_value(v), API_VERSION) != 0 ||
            json_string_length(v) != strlen(API_VERSION)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", "apiVersion", q,
                            API_VERSION);
        }
    }
    v = json_object_get(doc, "kind");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", "kind",
                            quote_json_type(v));
        if (strcmp(json_string_value(v), KIND) != 0 || json_string_length(v) != strlen(KIND)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", "kind", q, KIND);
        }
    }
    spec = json_object_get(doc, "spec");
    if (spec == NULL || json_is_null(spec))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required field is missing", "spec");
    if (!json_is_object(spec))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", "spec",
                        quote_json_type(spec));
    if ((rc = policy_field_check_fields(spec, "spec", spec_fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get_enum(spec, "strategy", "spec", STRATEGIES, 3,
                       "one of Permissive, Restrictive, MaintenanceSchedule", &strategy, err,
                       errlen)) < 0)
        return rc;
    p->strategy = (policy_strategy_t)strategy;
    if ((rc = policy_field_get(spec, "maintenanceSchedule", JSON_OBJECT, "spec", &ms, err, errlen)) < 0)
        return rc;
    if (ms != NULL) {
        p->has_schedule = 1;
        if ((rc = maintenance_schedule(ms, "spec.maintenanceSchedule", p, err, errlen)) < 0)
            return rc;
    }
    if ((rc = policy_field_get(spec, "minTimeLeft", JSON_OBJECT, "spec", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL && (rc = min_time_left(v, "spec.minTimeLeft", p, err, errlen)) < 0)
        return rc;
    return policy_calendars_parse(spec, p, err, errlen);
}

/* Compiles the schedule with the exclusions whose scope covers change
 * kind c (every exclusion for POLICY_CHANGE_NODES_MINOR) into *out. The
 * reason of a scoped exclusion names its scope ("black-friday (scope
 * Nodes)"), so that whatever quotes it (conditions, explain) says which
 * changes it holds; scoped[i] holds those texts. */
static int compile_for(const policy_t *p, policy_change_t c, sched_exclusion_t *x,
                       char **scoped, sched_time_t now, sched_t **out, char *err, size_t errlen)
{
    char msg[POLICY_ERRLEN];
    sched_spec_t spec;
    size_t i, n = 0;
    int rc;

    for (i = 0; i < p->n_exclusions; i++) {
        const policy_exclusion_t *e = &p->exclusions[i];
        if (!policy_scope_covers(e->scope, c))
            continue;
        x[n].from_day = e->from_day;
        x[n].until_day = e->until_day;
        x[n].reason = e->reason;
        if (e->scope != POLICY_SCOPE_ALL) {
            if (scoped[i] == NULL &&
                asprintf(&scoped[i], "%s%s(scope %s)", e->reason, e->reason[0] ? " " : "",
                         policy_scope_name(e->scope)) < 0) {
                scoped[i] = NULL;
                return HCP_ENOMEM;
            }
            x[n].reason = scoped[i];
        }
        n++;
    }
    memset(&spec, 0, sizeof spec);
    spec.time_zone = p->time_zone;
    spec.rrule = p->has_permit ? p->rrule : NULL;
    spec.start_minute = p->start_minute;
    spec.duration = p->duration;
    spec.exclusions = n > 0 ? x : NULL;
    spec.n_exclusions = n;
    msg[0] = '\0';
    rc = sched_compile(&spec, now, out, msg, sizeof msg);
    if (rc != 0 && rc != HCP_ENOMEM)
        rc = hcp_errf(err, errlen, HCP_EINVAL, "%s: %s", "spec.maintenanceSchedule",
                      msg[0] ? msg : "cannot be compiled");
    return rc;
}

/* p->sched and p->sched_for[]: one schedule per kind of change only when an
 * exclusion is scoped; references to the same one otherwise. */
static int compile(policy_t *p, sched_time_t now, char *err, size_t errlen)
{
    sched_exclusion_t *x = NULL;
    char **scoped = NULL;
    size_t i;
    int rc = 0, c;

    for (i = 0; i < p->n_exclusions; i++)
        if (p->exclusions[i].scope != POLICY_SCOPE_ALL)
            p->scoped = true;
    if (p->strategy != POLICY_MAINTENANCE_SCHEDULE || !p->has_schedule) {
        /* A maintenanceSchedule next to another strategy is validated but
         * has no effect; MaintenanceSchedule without one never permits. */
        p->scoped = false;
        p->sched = p->strategy == POLICY_PERMISSIVE ? sched_always() : sched_never();
    } else {
        if (p->n_exclusions > 0 && ((x = calloc(p->n_exclusions, sizeof *x)) == NULL ||
                                    (scoped = calloc(p->n_exclusions, sizeof *scoped)) == NULL)) {
            free(x);
            return HCP_ENOMEM;
        }
        rc = compile_for(p, POLICY_CHANGE_NODES_MINOR, x, scoped, now, &p->sched, err, errlen);
    }
    for (c = 0; rc == 0 && c < POLICY_NCHANGES; c++) {
        if (!p->scoped || c == POLICY_CHANGE_NODES_MINOR)
            p->sched_for[c] = p->sched ? sched_ref(p->sched) : NULL;
        else
            rc = compile_for(p, (policy_change_t)c, x, scoped, now, &p->sched_for[c], err,
                             errlen);
        if (rc == 0 && p->sched_for[c] == NULL)
            rc = HCP_ENOMEM;
    }
    for (i = 0; scoped && i < p->n_exclusions; i++)
        free(scoped[i]);
    free(scoped);
    free(x);
    if (rc == 0 && p->n_calendars > 0)
        rc = policy_calendars_compose(p);
    return rc;
}

static void drop_schedules(policy_t *p)
{
    sched_unref(p->sched);
    p->sched = NULL;
    sched_unref(p->base);
    p->base = NULL;
    for (int c = 0; c < POLICY_NCHANGES; c++) {
        sched_unref(p->sched_for[c]);
        p->sched_for[c] = NULL;
        sched_unref(p->base_for[c]);
        p->base_for[c] = NULL;
    }
}

int policy_parse(const json_t *doc, sched_time_t now, policy_t **out, char *err,
                 size_t errlen)
{
    char local[POLICY_ERRLEN];
    policy_t *p;
    int rc;

    *out = NULL;
    if (err == NULL || errlen == 0) {
        err = local;
        errlen = sizeof local;
    }
    err[0] = '\0';
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return HCP_ENOMEM;
    p->name = strdup("");
    p->namespace_ = strdup("");
    p->time_zone = strdup("UTC");
    if (p->name == NULL || p->namespace_ == NULL || p->time_zone == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    rc = document(doc, p, err, errlen);
    if (rc == 0)
        rc = compile(p, now, err, errlen);
    if (rc == HCP_ENOMEM)
        goto fail;
    if (rc != 0) {
        /* Invalid: keep the metadata for status, behave as Restrictive. */
        p->valid = 0;
        p->scoped = false;
        drop_schedules(p);
        p->sched = sched_never();
        for (int c = 0; c < POLICY_NCHANGES && p->sched; c++)
            p->sched_for[c] = sched_ref(p->sched);
        p->message = strdup(err);
        if (p->sched == NULL || p->message == NULL) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        *out = p;
        return HCP_EINVAL;
    }
    p->valid = 1;
    p->message = strdup("");
    if (p->message == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    *out = p;
    return 0;
fail:
    policy_free(p);
    return rc;
}

void policy_free(policy_t *p)
{
    size_t i;

    if (p == NULL)
        return;
    drop_schedules(p);
    policy_calendars_free(p);
    for (i = 0; i < p->n_exclusions; i++)
        free(p->exclusions[i].reason);
    free(p->exclusions);
    free(p->rrule);
    free(p->time_zone);
    free(p->message);
    free(p->namespace_);
    free(p->name);
    free(p);
}

sched_t *policy_schedule(const policy_t *p)
{
    if (p == NULL || !p->valid || p->sched == NULL)
        return sched_never();
    return sched_ref(p->sched);
}

sched_t *policy_schedule_for(const policy_t *p, policy_change_t c)
{
    if (p == NULL || !p->valid || c < 0 || c >= POLICY_NCHANGES || p->sched_for[c] == NULL)
        return policy_schedule(p);
    return sched_ref(p->sched_for[c]);
}

const char *policy_strategy_name(policy_strategy_t s)
{
    switch (s) {
    case POLICY_PERMISSIVE: return "Permissive";
    case POLICY_RESTRICTIVE: return "Restrictive";
    case POLICY_MAINTENANCE_SCHEDULE: return "MaintenanceSchedule";
    }
    return "Unknown";
}

int policy_is_hcmp(const json_t *doc)
{
    const json_t *kind = json_object_get(doc, "kind");

    return json_is_object(doc) && json_is_string(kind) &&
           strcmp(json_string_value(kind), KIND) == 0;
}

void policy_problem_split(const char *text, policy_problem_t *out)
{
    const char *sep = strstr(text, ": ");

    if (sep == NULL) {
        snprintf(out->field, sizeof out->field, "document");
        snprintf(out->message, sizeof out->message, "%s", text);
        return;
    }
    snprintf(out->field, sizeof out->field, "%.*s", (int)(sep - text), text);
    snprintf(out->message, sizeof out->message, "%s", sep + 2);
}

int policy_validate(const json_t *doc, sched_time_t now, policy_problem_t *out)
{
    char err[POLICY_ERRLEN];
    policy_t *p = NULL;
    int rc;

    err[0] = '\0';
    rc = policy_parse(doc, now, &p, err, sizeof err);
    policy_free(p);
    if (rc == HCP_EINVAL)
        policy_problem_split(err, out);
    return rc;
}
