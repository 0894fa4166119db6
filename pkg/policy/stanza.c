#include "policy/stanza.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "policy/field.h"
#include "policy/quote.h"

#define PATHLEN 160

static const char *const STRATEGY_NAMES[STANZA_NSTRATEGIES] = {"Permissive", "Restrictive", "ByPolicy",
                                              "PermissiveUntil", "RestrictiveUntil"};

const char *stanza_strategy_name(stanza_strategy_t s)
{
    if ((int)s < 0 || (int)s >= STANZA_NSTRATEGIES)
        return "Unknown";
    return STRATEGY_NAMES[s];
}

/* The raw text of the four stanza fields and where each came from, so that
 * both forms are validated by the same code with paths that name the field
 * the user actually wrote. */
typedef struct raw {
    const json_t *strategy, *policy, *permissive_until, *restrictive_until; /* borrowed */
    char strategy_path[PATHLEN];
    char policy_path[PATHLEN];
    char permissive_path[PATHLEN];
    char restrictive_path[PATHLEN];
} raw_t;

/* A value that must be a string (or absent); returns its text or NULL. */
static int string_of(stanza_t *st, const json_t *v, const char *path, const char **out)
{
    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL, "%s: must be a string, not %s",
                        path, quote_json_type(v));
    if (strlen(json_string_value(v)) != json_string_length(v))
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                        "%s: must not contain NUL characters", path);
    *out = json_string_value(v);
    return 0;
}

static int until(stanza_t *st, const json_t *v, const char *path, int *has, sched_time_t *t)
{
    char q[QUOTE_BUFLEN];
    const char *s;
    int rc;

    if ((rc = string_of(st, v, path, &s)) < 0 || s == NULL)
        return rc;
    if (sched_parse_rfc3339(s, t) != 0) {
        quote_string(s, q, sizeof q);
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                        "%s: %s is not an RFC 3339 time (e.g. 2026-01-03T00:00:00Z)", path, q);
    }
    *has = 1;
    return 0;
}

static int interpret(stanza_t *st, const raw_t *r)
{
    char q[QUOTE_BUFLEN];
    const char *strategy, *policy;
    int rc, i;

    if ((rc = string_of(st, r->strategy, r->strategy_path, &strategy)) < 0)
        return rc;
    if ((rc = string_of(st, r->policy, r->policy_path, &policy)) < 0)
        return rc;
    if (policy != NULL) {
        if (!policy_field_is_name(policy)) {
            quote_string(policy, q, sizeof q);
            return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                            "%s: %s is not a valid policy name", r->policy_path, q);
        }
        snprintf(st->policy, sizeof st->policy, "%s", policy);
    }
    if ((rc = until(st, r->permissive_until, r->permissive_path, &st->has_permissive_until,
                    &st->permissive_until)) < 0)
        return rc;
    if ((rc = until(st, r->restrictive_until, r->restrictive_path, &st->has_restrictive_until,
                    &st->restrictive_until)) < 0)
        return rc;
    if (strategy == NULL) {
        if (policy == NULL)
            return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                            "%s: required field is missing", r->strategy_path);
        st->strategy = STANZA_BY_POLICY;
        return 0;
    }
    for (i = 0; i < 5; i++)
        if (strcmp(strategy, STRATEGY_NAMES[i]) == 0)
            break;
    if (i == 5) {
        quote_string(strategy, q, sizeof q);
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL, "%s: "
                       "%s is not one of ByPolicy, Permissive, Restrictive, PermissiveUntil, "
                       "RestrictiveUntil", r->strategy_path,
                       q);
    }
    st->strategy = (stanza_strategy_t)i;
    if (st->strategy == STANZA_BY_POLICY && policy == NULL)
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                        "%s: required when strategy is ByPolicy", r->policy_path);
    if (st->strategy == STANZA_PERMISSIVE_UNTIL && !st->has_permissive_until)
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                        "%s: required when strategy is PermissiveUntil", r->permissive_path);
    if (st->strategy == STANZA_RESTRICTIVE_UNTIL && !st->has_restrictive_until)
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                        "%s: required when strategy is RestrictiveUntil", r->restrictive_path);
    return 0;
}

static int from_spec(stanza_t *st, const json_t *cm, raw_t *r)
{
    static const char *const P = "spec.changeManagement";
    const char *key;
    json_t *val, *bp;

    if (!json_is_object(cm))
        return hcp_errf(st->error, sizeof st->error, HCP_EINVAL, "%s: must be an object, not %s", P,
                        quote_json_type(cm));
    json_object_foreach((json_t *)cm, key, val) {
        if (strcmp(key, "strategy") != 0 && strcmp(key, "byPolicy") != 0 &&
            strcmp(key, "permissiveUntil") != 0 && strcmp(key, "restrictiveUntil") != 0) {
            char name[QUOTE_BUFLEN], path[PATHLEN + QUOTE_BUFLEN];
            quote_name(key, name, sizeof name);
            snprintf(path, sizeof path, "%s.%s", P, name);
            return hcp_errf(st->error, sizeof st->error, HCP_EINVAL, "%s: unknown field", path);
        }
    }
    snprintf(r->strategy_path, PATHLEN, "%s.strategy", P);
    snprintf(r->policy_path, PATHLEN, "%s.byPolicy.name", P);
    snprintf(r->permissive_path, PATHLEN, "%s.permissiveUntil", P);
    snprintf(r->restrictive_path, PATHLEN, "%s.restrictiveUntil", P);
    r->strategy = json_object_get(cm, "strategy");
    r->permissive_until = json_object_get(cm, "permissiveUntil");
    r->restrictive_until = json_object_get(cm, "restrictiveUntil");
    bp = json_object_get(cm, "byPolicy");
    if (bp != NULL && !json_is_null(bp)) {
        if (!json_is_object(bp))
            return hcp_errf(st->error, sizeof st->error, HCP_EINVAL,
                            "%s: must be an object, not %s", "spec.changeManagement.byPolicy",
                            quote_json_type(bp));
        json_object_foreach(bp, key, val) {
            if (strcmp(key, "name") != 0) {
                char name[QUOTE_BUFLEN], path[PATHLEN + QUOTE_BUFLEN];
                quote_name(key, name, sizeof name);
                snprintf(path, sizeof path, "spec.changeManagement.byPolicy.%s", name);
                return hcp_errf(st->error, sizeof st->error, HCP_EINVAL, "%s: unknown field", path);
            }
        }
        r->policy = json_object_get(bp, "name");
    }
    return 0;
}

/* Passes rc through; an invalid stanza (HCP_EINVAL, message already in
 * st->error) is marked so that resolution restricts changes. */
static int settle(stanza_t *st, int rc)
{
    if (rc == HCP_EINVAL)
        st->valid = 0;
    return rc;
}

int stanza_parse(const json_t *obj, stanza_t *out)
{
    const json_t *spec, *cm, *md, *ann;
    raw_t r;
    int rc;

    memset(out, 0, sizeof *out);
    memset(&r, 0, sizeof r);
    out->valid = 1;
    out->strategy = STANZA_PERMISSIVE;
    if (!json_is_object(obj))
        return 0;
    spec = json_object_get(obj, "spec");
    cm = json_is_object(spec) ? json_object_get(spec, "changeManagement") : NULL;
    if (cm != NULL && !json_is_null(cm)) {
        out->present = 1;
        out->from_spec = 1;
        if ((rc = from_spec(out, cm, &r)) < 0)
            return settle(out, rc);
        return settle(out, interpret(out, &r));
    }
    md = json_object_get(obj, "metadata");
    ann = json_is_object(md) ? json_object_get(md, "annotations") : NULL;
    if (!json_is_object(ann))
        return 0;
#define ANN(field, suffix)                                                                 \
    do {                                                                                   \
        r.field = json_object_get(ann, STANZA_ANNOTATION_PREFIX suffix);                   \
        snprintf(r.field##_path, PATHLEN,                                                  \
                 "metadata.annotations[\"" STANZA_ANNOTATION_PREFIX suffix "\"]");          \
    } while (0)
    ANN(strategy, "strategy");
    ANN(policy, "policy");
    r.permissive_until = json_object_get(ann, STANZA_ANNOTATION_PREFIX "permissive-until");
    snprintf(r.permissive_path, PATHLEN,
             "metadata.annotations[\"" STANZA_ANNOTATION_PREFIX "permissive-until\"]");
    r.restrictive_until = json_object_get(ann, STANZA_ANNOTATION_PREFIX "restrictive-until");
    snprintf(r.restrictive_path, PATHLEN,
             "metadata.annotations[\"" STANZA_ANNOTATION_PREFIX "restrictive-until\"]");
#undef ANN
    if (r.strategy == NULL && r.policy == NULL && r.permissive_until == NULL &&
        r.restrictive_until == NULL)
        return 0;
    out->present = 1;
    return settle(out, interpret(out, &r));
}

/* ---- resolution ----------------------------------------------------------- */

/* The referenced policy's timeline (new reference), or NULL with *reason and
 * msg describing why it cannot be used. Returns 0, the lookup's error, or
 * HCP_ENOMEM. */
static int referenced(const stanza_t *st, const char *ns, stanza_lookup_fn lookup, void *ctx,
                      sched_t **out, sched_t *const **out_for, const char **reason, char *msg,
                      size_t msglen, stanza_resolution_t *res)
{
    stanza_policy_ref_t ref;
    char qn[QUOTE_BUFLEN], qs[QUOTE_BUFLEN];
    int rc;

    *out = NULL;
    *out_for = NULL;
    *reason = NULL;
    memset(&ref, 0, sizeof ref);
    quote_string(st->policy, qn, sizeof qn);
    quote_string(ns != NULL ? ns : "", qs, sizeof qs);
    if (lookup == NULL) {
        ref.found = 0;
    } else if ((rc = lookup(ctx, ns != NULL ? ns : "", st->policy, &ref)) < 0) {
        return rc;
    }
    res->policy_strategy = "Restrictive";
    if (!ref.found) {
        *reason = "PolicyNotFound";
        if (snprintf(msg, msglen, "policy %s not found in namespace %s", qn, qs) < 0)
            msg[0] = '\0';
        return 0;
    }
    if (!ref.ready || ref.sched == NULL) {
        *reason = "PolicyNotReady";
        if (snprintf(msg, msglen, "policy %s in namespace %s is not Ready%s%s", qn, qs,
                     ref.message != NULL && ref.message[0] ? ": " : "",
                     ref.message != NULL ? ref.message : "") < 0)
            msg[0] = '\0';
        return 0;
    }
    res->policy_strategy = ref.strategy != NULL ? ref.strategy : "MaintenanceSchedule";
    res->min_left_cp = ref.min_left_cp > 0 ? ref.min_left_cp : 0;
    res->min_left_workers = ref.min_left_workers > 0 ? ref.min_left_workers : 0;
    *out = sched_ref(ref.sched);
    *out_for = ref.sched_for;
    return *out == NULL ? HCP_ENOMEM : 0;
}

/* The timeline of each kind of change where the policy's differs from its
 * whole timeline (base_for, borrowed; NULL: none differs): the same
 * composition as the whole one, edge (NULL: none) joined with union
 * (permissive) or intersection. */
static int resolve_for(sched_t *base, sched_t *const *base_for, sched_t *edge, int permissive,
                       stanza_resolution_t *out)
{
    for (int c = 0; base_for != NULL && c < POLICY_NCHANGES; c++) {
        if (base_for[c] == NULL || base_for[c] == base)
            continue;
        out->sched_for[c] = edge == NULL   ? sched_ref(base_for[c])
                            : permissive ? sched_or(edge, base_for[c])
                                         : sched_and(edge, base_for[c]);
        if (out->sched_for[c] == NULL)
            return HCP_ENOMEM;
    }
    return 0;
}

/* The PermissiveUntil and RestrictiveUntil strategies: permitted (or
 * restricted) before the instant, then the referenced policy or the
 * opposite fixed strategy. Returns 0, the lookup's error, or HCP_ENOMEM. */
static int resolve_until(const stanza_t *st, const char *ns, stanza_lookup_fn lookup, void *ctx,
                         const char *qn, stanza_resolution_t *out)
{
    char why[STANZA_MSGLEN], when[32];
    const char *bad = NULL;
    sched_t *base = NULL, *edge = NULL, *const *base_for = NULL;
    int permissive = st->strategy == STANZA_PERMISSIVE_UNTIL, rc = HCP_ENOMEM;
    sched_time_t t = permissive ? st->permissive_until : st->restrictive_until;

    sched_format_utc(t, when, sizeof when);
    out->reason = permissive ? "PermissiveUntil" : "RestrictiveUntil";
    if (st->policy[0] != '\0') {
        if ((rc = referenced(st, ns, lookup, ctx, &base, &base_for, &bad, why, sizeof why,
                             out)) < 0)
            goto fail;
        if (bad != NULL) {
            out->reason = bad;
            out->degraded = 1;
            base = sched_never();
            if (snprintf(out->message, sizeof out->message,
                         "%s until %s, then restricted because %s",
                         permissive ? "permitted" : "restricted", when, why) < 0)
                out->message[0] = '\0';
        } else {
            snprintf(out->message, sizeof out->message, "%s until %s, then policy %s",
                     permissive ? "permitted" : "restricted", when, qn);
        }
    } else {
        base = permissive ? sched_never() : sched_always();
        snprintf(out->message, sizeof out->message, "%s until %s, then %s",
                 permissive ? "permitted" : "restricted", when,
                 permissive ? "Restrictive" : "Permissive");
    }
    if (base == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    edge = permissive ? sched_before(t) : sched_after(t);
    if (edge == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    out->sched = permissive ? sched_or(edge, base) : sched_and(edge, base);
    rc = out->sched == NULL ? HCP_ENOMEM : resolve_for(base, base_for, edge, permissive, out);
fail:
    sched_unref(edge);
    sched_unref(base);
    return rc;
}

int stanza_resolve(const stanza_t *st, const char *ns, stanza_lookup_fn lookup, void *ctx,
                   stanza_resolution_t *out)
{
    char why[STANZA_MSGLEN], qn[QUOTE_BUFLEN];
    const char *bad = NULL;
    sched_t *base = NULL, *edge = NULL, *const *base_for = NULL;
    int rc = HCP_ENOMEM;

    memset(out, 0, sizeof *out);
    why[0] = '\0';
    quote_string(st->policy, qn, sizeof qn);
    out->strategy = st->strategy;
    if (!st->present) {
        out->strategy = STANZA_PERMISSIVE;
        out->reason = "Permissive";
        snprintf(out->message, sizeof out->message,
                 "no changeManagement stanza: changes are always permitted");
        out->sched = sched_always();
        return out->sched == NULL ? HCP_ENOMEM : 0;
    }
    if (!st->valid) {
        out->strategy = STANZA_RESTRICTIVE;
        out->reason = "InvalidChangeManagement";
        out->degraded = 1;
        if (snprintf(out->message, sizeof out->message, "%s; changes are restricted",
                     st->error) < 0)
            out->message[0] = '\0';
        out->sched = sched_never();
        return out->sched == NULL ? HCP_ENOMEM : 0;
    }
    switch (st->strategy) {
    case STANZA_PERMISSIVE:
        out->reason = "Permissive";
        snprintf(out->message, sizeof out->message,
                 "strategy Permissive: changes are always permitted");
        out->sched = sched_always();
        break;
    case STANZA_RESTRICTIVE:
        out->reason = "Restrictive";
        snprintf(out->message, sizeof out->message,
                 "strategy Restrictive: changes are never permitted");
        out->sched = sched_never();
        break;
    case STANZA_BY_POLICY:
        if ((rc = referenced(st, ns, lookup, ctx, &base, &base_for, &bad, why, sizeof why,
                             out)) < 0)
            goto fail;
        if (bad != NULL) {
            out->reason = bad;
            out->degraded = 1;
            snprintf(out->message, sizeof out->message, "%s; changes are restricted", why);
            out->sched = sched_never();
        } else {
            out->reason = "ByPolicy";
            snprintf(out->message, sizeof out->message, "following policy %s", qn);
            out->sched = sched_ref(base);
            if ((rc = resolve_for(base, base_for, NULL, 0, out)) < 0)
                goto fail;
        }
        break;
    case STANZA_PERMISSIVE_UNTIL:
    case STANZA_RESTRICTIVE_UNTIL:
        if ((rc = resolve_until(st, ns, lookup, ctx, qn, out)) < 0)
            goto fail;
        break;
    }
    if (out->sched == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    sched_unref(edge);
    sched_unref(base);
    return 0;
fail:
    sched_unref(edge);
    sched_unref(base);
    stanza_resolution_free(out);
    return rc;
}

void stanza_resolution_free(stanza_resolution_t *r)
{
    if (r == NULL)
        return;
    sched_unref(r->sched);
    r->sched = NULL;
    for (int c = 0; c < POLICY_NCHANGES; c++) {
        sched_unref(r->sched_for[c]);
        r->sched_for[c] = NULL;
    }
}

sched_t *stanza_sched_for(const stanza_resolution_t *r, policy_change_t c)
{
    return c >= 0 && c < POLICY_NCHANGES && r->sched_for[c] != NULL ? r->sched_for[c] : r->sched;
}

int stanza_resolve_nodepool(sched_t *own, sched_t *cluster, sched_time_t now,
                            stanza_nodepool_t *out)
{
    sched_interval_t own_next;
    int rc, own_has;

    memset(out, 0, sizeof *out);
    out->sched = sched_and(own, cluster);
    if (out->sched == NULL)
        return HCP_ENOMEM;
    if ((rc = sched_next(cluster, now, &out->cluster_next)) < 0)
        goto fail;
    out->cluster_has_window = rc;
    if ((rc = sched_next(out->sched, now, &out->next)) < 0)
        goto fail;
    out->has_window = rc;
    if (out->has_window) {
        out->reason = "PermittedWindow";
        return 0;
    }
    out->reason = "NoPermittedWindow";
    if ((rc = sched_next(own, now, &own_next)) < 0)
        goto fail;
    own_has = rc;
    if (!own_has && !out->cluster_has_window)
        snprintf(out->message, sizeof out->message,
                 "no permitted window within 10 years: neither the node pool nor its "
                 "hosted cluster permits changes");
    else if (!own_has)
        snprintf(out->message, sizeof out->message,
                 "no permitted window within 10 years: the node pool's own schedule "
                 "permits no changes");
    else if (!out->cluster_has_window)
        snprintf(out->message, sizeof out->message,
                 "no permitted window within 10 years: the hosted cluster permits no "
                 "changes");
    else
        snprintf(out->message, sizeof out->message,
                 "no permitted window within 10 years: the node pool's windows never "
                 "overlap its hosted cluster's");
    return 0;
fail:
    sched_unref(out->sched);
    out->sched = NULL;
    return rc;
}

void stanza_nodepool_free(stanza_nodepool_t *np)
{
    if (np == NULL)
        return;
    sched_unref(np->sched);
    np->sched = NULL;
}

const char *stanza_enforced_strategy(const stanza_t *st, const stanza_resolution_t *res,
                                     sched_time_t now)
{
    const char *then;

    if (!st->present)
        return "Permissive";
    if (!st->valid)
        return "Restrictive";
    switch (st->strategy) {
    case STANZA_PERMISSIVE:
        return "Permissive";
    case STANZA_BY_POLICY:
        return res->policy_strategy != NULL ? res->policy_strategy : "Restrictive";
    case STANZA_PERMISSIVE_UNTIL:
        if (now < st->permissive_until)
            return "Permissive";
        then = st->policy[0] != '\0' ? res->policy_strategy : "Restrictive";
        return then != NULL ? then : "Restrictive";
    case STANZA_RESTRICTIVE_UNTIL:
        if (now < st->restrictive_until)
            return "Restrictive";
        then = st->policy[0] != '\0' ? res->policy_strategy : "Permissive";
        return then != NULL ? then : "Restrictive";
    case STANZA_RESTRICTIVE:
    default:
        return "Restrictive";
    }
}

bool stanza_permissive_at(const stanza_t *st, sched_time_t now)
{
    if (!st->present || !st->valid)
        return false;
    return st->strategy == STANZA_PERMISSIVE ||
           (st->strategy == STANZA_PERMISSIVE_UNTIL && st->has_permissive_until &&
            now < st->permissive_until);
}

const char *stanza_configured_strategy(const stanza_t *st)
{
    if (!st->present)
        return "None";
    if (!st->valid)
        return "Invalid";
    return stanza_strategy_name(st->strategy);
}

int stanza_validate(const json_t *obj, policy_problem_t *out)
{
    stanza_t st;

    if (stanza_parse(obj, &st) == 0)
        return 0;
    policy_problem_split(st.error, out);
    return HCP_EINVAL;
}
