/* validate.c: the validating webhooks of policies and stanzas.
 *
 * A policy or a changeManagement stanza that the controller would call
 * invalid is refused at write time, with the controller's own field path
 * and message: the same policy_parse() and stanza_parse() that write the
 * policy's Ready condition and the object's InvalidChangeManagement reason
 * decide here, so there is no second copy of the rules. What the controller
 * normalises (a day listed twice, overlapping exclusions) is admitted as it
 * is; docs/user-guide.md lists the cases.
 *
 * With guard rails configured (ctl_set_guard()), a policy or stanza that
 * passes validation is also judged by guard_check() on the schedule it
 * makes effective over the next 12 months, from this replica's cache:
 *
 * - a policy: its own timeline, which is the effective schedule of every
 *   HostedCluster that follows it (the objects that reference it are not
 *   judged again: see docs/architecture.md);
 * - a HostedCluster's stanza: its resolved timeline (the policy it names,
 *   an override's instant);
 * - a NodePool's stanza: its resolved timeline within its HostedCluster's
 *   (the intersection), or its own alone while the HostedCluster is not in
 *   the cache.
 *
 * Requests in an exempt namespace, or by an exempt user or group, skip the
 * guard rails (never the validation).
 *
 * Writes that leave the stanza as it was (HyperShift's spec writes, a
 * label) and objects without a stanza pass at once, whatever else is wrong
 * with the object: a pre-existing problem never blocks an unrelated write.
 * Likewise a policy update that leaves spec alone (metadata, finalizers).
 * The status subresource is never checked. */
#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "admission/validate.h"
#include "log/log.h"
#include "policy/guard.h"

#define CODE_INVALID 422 /* the object is not valid (as the API server's own validation) */
#define CODE_GUARD 403   /* valid, but the guard rails forbid it */

/* True when the request is for the object itself and creates or updates
 * it (not its status, not a delete). */
static bool writes_object(const adm_request_t *q)
{
    return (q->op == ADM_CREATE || q->op == ADM_UPDATE) && q->subresource[0] == '\0';
}

/* True when the guard rails apply to the request. */
static bool guarded(const ctl_controller_t *c, const adm_request_t *q)
{
    const char *groups[ADM_MAX_GROUPS];
    size_t i;

    const guard_config_t *g = ctl_guard(c);
    if (!g)
        return false;
    for (i = 0; i < q->ngroups; i++)
        groups[i] = q->groups[i];
    return !guard_exempt(g, q->ns, q->user, groups, q->ngroups);
}

/* The policy ns/name as the cache holds it, or NULL. */
static const policy_t *cached_policy(ctl_controller_t *c, const char *ns, const char *name)
{
    return name && name[0]
               ? ctl_policy_of(kube_cache_get(ctl_cache(c, CTL_CACHE_POLICIES), ns, name))
               : NULL;
}

/* Judges in by the guard rails and refuses the request in a when a rule
 * fails; what names the schedule judged. */
static int judge(ctl_controller_t *c, const guard_input_t *in, const char *what,
                 adm_response_t *a, char *err, size_t errlen)
{
    char msg[sizeof(a->message)];
    guard_verdict_t v;
    size_t i, o;
    int rc;

    if ((rc = guard_check(ctl_guard(c), in, ctl_now(c), &v)) < 0)
        return hcp_errf(err, errlen, rc, "evaluating the guard rails: %s", hcp_strerror(rc));
    if (v.allowed)
        return 0;
    o = (size_t)snprintf(msg, sizeof(msg), "the guard rails refuse %s:", what);
    for (i = 0; i < v.n && o < sizeof(msg); i++)
        o += (size_t)snprintf(msg + o, sizeof(msg) - o, "%s %s", i ? ";" : "", v.v[i].message);
    adm_response_deny(a, CODE_GUARD, "%s", msg);
    return 0;
}

static int validate_policy(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                           size_t errlen)
{
    ctl_controller_t *c = ud;
    char msg[POLICY_ERRLEN], what[600];
    policy_t *p = NULL;
    int rc;

    if (!writes_object(q))
        return 0;
    if (q->op == ADM_UPDATE && json_equal(json_object_get(q->object, "spec"),
                                          json_object_get(q->old_object, "spec")))
        return 0;
    rc = policy_parse(q->object, ctl_now(c), &p, msg, sizeof(msg));
    guard_verdict_t own;
    if (rc == 0 && (rc = guard_check_policy_min_left(p, ctl_now(c), &own)) < 0)
        rc = hcp_errf(err, errlen, rc, "evaluating spec.minTimeLeft: %s", hcp_strerror(rc));
    if (rc == HCP_EINVAL) {
        adm_response_deny(a, CODE_INVALID, "%s", msg);
        rc = 0;
    } else if (rc == 0 && !own.allowed) {
        /* A minimum no window of the policy meets: no change could start. */
        adm_response_deny(a, CODE_INVALID, "%s", own.v[0].message);
    } else if (rc == 0 && guarded(c, q)) {
        const policy_t *ps[1] = {p};
        guard_input_t in = {.effective = p->sched, .policies = ps, .n_policies = 1};
        snprintf(what, sizeof(what), "policy %s/%s (the schedule of every HostedCluster "
                                     "that follows it)", q->ns, q->name);
        rc = judge(c, &in, what, a, err, errlen);
    } else if (rc != 0) {
        rc = hcp_errf(err, errlen, rc, "parsing the policy: %s", hcp_strerror(rc));
    }
    policy_free(p);
    return rc;
}

/* The timeline of HostedCluster ns/name as the cache resolves it (a new
 * reference, NULL when it is not cached) and the policy it follows. */
static int cluster_timeline(ctl_controller_t *c, const char *ns, const char *name,
                            sched_t **out, const policy_t **policy)
{
    const kube_obj *o = name ? kube_cache_get(ctl_cache(c, CTL_CACHE_HCS), ns, name) : NULL;
    const decide_hc_t *hc = o ? o->data : NULL;
    stanza_resolution_t res;
    int rc;

    *out = NULL;
    *policy = NULL;
    if (hc == NULL)
        return 0;
    if ((rc = stanza_resolve(&hc->m.stanza, ns, ctl_lookup_policy, c, &res)) != 0)
        return rc;
    *out = sched_ref(res.sched);
    if (res.policy_strategy)
        *policy = cached_policy(c, ns, hc->m.stanza.policy);
    stanza_resolution_free(&res);
    return 0;
}

/* The guard rails on the effective schedule of a HostedCluster or NodePool
 * (kind) whose new stanza st resolves to res. */
static int guard_stanza(ctl_controller_t *c, decide_kind_t kind, const adm_request_t *q,
                        const stanza_t *st, const stanza_resolution_t *res, adm_response_t *a,
                        char *err, size_t errlen)
{
    const char *hc_name = kind == DECIDE_NP ? hcp_json_str(q->object, "spec.clusterName") : NULL;
    const policy_t *ps[2] = {res->policy_strategy ? cached_policy(c, q->ns, st->policy) : NULL,
                             NULL};
    sched_t *own = res->sched;
    sched_t *cluster = NULL, *eff = NULL;
    char what[800];
    int rc;

    if (kind == DECIDE_NP && (rc = cluster_timeline(c, q->ns, hc_name, &cluster, &ps[1])) != 0)
        return hcp_errf(err, errlen, rc, "resolving HostedCluster %s: %s", hc_name,
                        hcp_strerror(rc));
    eff = cluster ? sched_and(own, cluster) : sched_ref(own);
    if (eff == NULL) {
        sched_unref(cluster);
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    }
    if (kind == DECIDE_HC)
        snprintf(what, sizeof(what), "the schedule of HostedCluster %s/%s", q->ns, q->name);
    else
        snprintf(what, sizeof(what), "the effective schedule of NodePool %s/%s (%s%s%s)", q->ns,
                 q->name, cluster ? "its own within HostedCluster " : "its own",
                 cluster ? hc_name : "", cluster ? "'s" : "; the HostedCluster is not known yet");
    guard_input_t in = {.effective = eff, .policies = ps, .n_policies = 2,
                        .has_restrictive_until = st->strategy == STANZA_RESTRICTIVE_UNTIL,
                        .restrictive_until = st->restrictive_until};
    rc = judge(c, &in, what, a, err, errlen);
    sched_unref(eff);
    sched_unref(cluster);
    return rc;
}

static int validate_managed(ctl_controller_t *c, decide_kind_t kind, const adm_request_t *q,
                            adm_response_t *a, char *err, size_t errlen)
{
    stanza_resolution_t res;
    stanza_t st, was;
    int rc;

    if (!writes_object(q))
        return 0;
    stanza_parse(q->object, &st);
    if (!st.present)
        return 0;
    if (q->op == ADM_UPDATE) {
        stanza_parse(q->old_object, &was);
        if (ctl_stanza_same(&st, &was))
            return 0;
    }
    if (!st.valid) {
        adm_response_deny(a, CODE_INVALID, "%s", st.error);
        return 0;
    }
    if (!guarded(c, q))
        return 0;
    if ((rc = stanza_resolve(&st, q->ns, ctl_lookup_policy, c, &res)) != 0)
        return hcp_errf(err, errlen, rc, "resolving the stanza: %s", hcp_strerror(rc));
    rc = guard_stanza(c, kind, q, &st, &res, a, err, errlen);
    stanza_resolution_free(&res);
    return rc;
}

static int validate_hostedcluster(const adm_request_t *q, adm_response_t *a, void *ud,
                                  char *err, size_t errlen)
{
    return validate_managed(ud, DECIDE_HC, q, a, err, errlen);
}

static int validate_nodepool(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                             size_t errlen)
{
    return validate_managed(ud, DECIDE_NP, q, a, err, errlen);
}

int adm_validation_register(adm_router_t *r, ctl_controller_t *c)
{
    int rc;

    if ((rc = adm_router_add(r, ADM_WEBHOOK_VALIDATE_POLICIES, CTL_CM_GROUP,
                             "hostedchangemanagementpolicies", validate_policy, c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_VALIDATE_HOSTEDCLUSTERS, CTL_HS_GROUP, "hostedclusters",
                             validate_hostedcluster, c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_VALIDATE_NODEPOOLS, CTL_HS_GROUP, "nodepools",
                             validate_nodepool, c)) != 0)
        return rc;
    return 0;
}
