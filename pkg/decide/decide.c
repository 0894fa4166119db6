/* decide.c: decisions, conditions, status documents and patches. */
#include "decide/decide.h"

#include "base/error.h"
#include "decide/conditions.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void decide_format_time(sched_time_t t, char *buf, size_t len)
{
    if (t == SCHED_NEG_INF || t == SCHED_POS_INF) {
        snprintf(buf, len, "%s", "");
        return;
    }
    sched_format_utc(t, buf, len);
}

json_t *decide_json_time(sched_time_t t)
{
    char buf[32];
    if (t == SCHED_NEG_INF || t == SCHED_POS_INF)
        return json_null();
    sched_format_utc(t, buf, sizeof(buf));
    return json_string(buf);
}

decide_pause_action_t decide_pause_action(bool want_paused, const decide_capi_t *obj)
{
    if (!obj)
        return DECIDE_PAUSE_NONE;
    if (want_paused) {
        if (obj->paused)
            return DECIDE_PAUSE_NONE; /* ours, or somebody else's: paused either way */
        return obj->marker ? DECIDE_PAUSE_REASSERT : DECIDE_PAUSE_ADD;
    }
    if (!obj->marker)
        return DECIDE_PAUSE_NONE; /* never lift a pause we did not set */
    return obj->paused ? DECIDE_PAUSE_REMOVE : DECIDE_PAUSE_REMOVE_MARKER;
}

/* Why the timeline restricts changes at now, as a condition reason. */
static const char *restricted_reason(const stanza_resolution_t *res, const stanza_t *st,
                                     const sched_state_t *state, sched_time_t now)
{
    if (res->degraded)
        return res->reason; /* PolicyNotFound, PolicyNotReady, InvalidChangeManagement */
    if (res->strategy == STANZA_RESTRICTIVE)
        return "Restrictive";
    /* A RestrictiveUntil whose time has passed restricts no more by itself. */
    if (res->strategy == STANZA_RESTRICTIVE_UNTIL && st->has_restrictive_until &&
        now < st->restrictive_until)
        return "RestrictiveUntil";
    if (state->no_window)
        return "NoPermittedWindow";
    return "OutsideMaintenanceWindow";
}

/* " (<message>)" or "" when the resolution says nothing more: the
 * resolution's messages are lower-case clauses ("following policy ..."). */
static const char *more(const stanza_resolution_t *res, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s", res->message[0] ? " (" : "", res->message,
             res->message[0] ? ")" : "");
    return buf;
}

/* Records in d the exclusion covering now in timeline, if any: a policy's
 * exclusion says why changes are restricted better than "outside the
 * window", and its reason is what the policy's author wrote for people. */
static void find_exclusion(sched_t *timeline, sched_time_t now, decide_decision_t *d)
{
    const char *why = sched_exclusion_at(timeline, now, &d->excluded_until);
    d->excluded = why != NULL && !d->state.permitted;
    if (d->excluded)
        snprintf(d->excluded_reason, sizeof(d->excluded_reason), "%s", why);
}

/* " (inside the exclusion "R", which ends at T; <more>)" for an excluded
 * decision, else the resolution's own " (<more>)". */
static void exclusion_extra(const decide_decision_t *d, const stanza_resolution_t *res,
                            char *buf, size_t len)
{
    char until[32];
    if (!d->excluded) {
        more(res, buf, len);
        return;
    }
    decide_format_time(d->excluded_until, until, sizeof(until));
    snprintf(buf, len, " (inside the exclusion%s%s%s, which ends at %s%s%s)",
             d->excluded_reason[0] ? " \"" : "", d->excluded_reason,
             d->excluded_reason[0] ? "\"" : "", until, res->message[0] ? "; " : "",
             res->message);
}

enum which { PAUSED, PENDING }; /* our two conditions in a decision */

/* Sets condition `which` of d (the message through the shared formatter,
 * which truncates a long message safely). */
__attribute__((format(printf, 5, 6))) static void set_cond(decide_decision_t *d, enum which which,
                                                           bool status, const char *reason,
                                                           const char *fmt, ...)
{
    va_list ap;
    char *msg = which == PAUSED ? d->paused_message : d->pending_message;
    *(which == PAUSED ? &d->paused_status : &d->pending_status) = status;
    *(which == PAUSED ? &d->paused_reason : &d->pending_reason) = reason;
    va_start(ap, fmt);
    (void)hcp_verrf(msg, DECIDE_MSGLEN, 0, fmt, ap);
    va_end(ap);
}

/* The ChangesPending condition of a decision whose pause side is decided;
 * when is the next window's start as written in status. */
static void pending_condition(decide_decision_t *d, bool pending, const char *when)
{
    if (!pending)
        set_cond(d, PENDING, false, "NoChangesPending", "No changes are pending.");
    else if (d->pending_metric == 1)
        set_cond(d, PENDING, true, "ChangesInitiated", "Pending changes are being initiated.");
    else if (d->paused_by_other)
        set_cond(d, PENDING, true, "ChangesBlocked",
                 "Pending changes wait for a pause that hcp-controller did not set to be "
                 "lifted.");
    else if (d->state.has_next)
        set_cond(d, PENDING, true, "ChangesBlocked",
                 "Pending changes wait for the next permitted window at %s.", when);
    else
        set_cond(d, PENDING, true, "ChangesBlocked",
                 "Pending changes wait; no permitted window is scheduled.");
}

/* by_cluster: the object's own timeline permits changes at now and only its
 * HostedCluster's restricts them (a NodePool inside a closed cluster window). */
static void decide(const stanza_resolution_t *res, const stanza_t *st, sched_time_t now,
                   const decide_capi_t *capi, bool pending, bool work_in_progress, bool by_cluster,
                   const char *what, const char *work, decide_decision_t *d)
{
    char when[32], until[32], xend[32], extra[STANZA_MSGLEN + DECIDE_REASONLEN + 96];
    exclusion_extra(d, res, extra, sizeof(extra));
    decide_format_time(d->excluded_until, xend, sizeof(xend));
    d->restricted = !d->state.permitted;
    d->restricted_reason = restricted_reason(res, st, &d->state, now);
    if (d->excluded && strcmp(d->restricted_reason, "OutsideMaintenanceWindow") == 0)
        d->restricted_reason = "Excluded";
    if (d->restricted && by_cluster && !d->state.no_window) {
        d->restricted_reason = "HostedClusterRestricted";
        if (d->excluded)
            snprintf(extra, sizeof(extra),
                     " (the NodePool's own schedule permits changes; its HostedCluster's is "
                     "inside the exclusion%s%s%s, which ends at %s)",
                     d->excluded_reason[0] ? " \"" : "", d->excluded_reason,
                     d->excluded_reason[0] ? "\"" : "", xend);
        else
            snprintf(extra, sizeof(extra), " (the NodePool's own schedule permits changes; its "
                                           "HostedCluster's does not)");
    }
    /* Initiated work is never interrupted: an unpaused object whose update is
     * under way stays unpaused until the work completes. */
    d->hold_open = d->restricted && work_in_progress && capi && !capi->paused;
    bool want_paused = d->restricted && !d->hold_open;
    d->paused_by_other = capi && capi->paused && !capi->marker;
    d->pause_wanted = want_paused;
    d->action = decide_pause_action(want_paused, capi);
    d->pending = pending;
    d->pending_metric = !pending ? 0 : (want_paused || d->paused_by_other) ? 2 : 1;
    d->wake = d->state.current.end;

    decide_format_time(d->state.current.end, until, sizeof(until));
    decide_format_time(d->state.has_next ? d->state.next.start : SCHED_POS_INF, when, sizeof(when));
    if (d->hold_open)
        set_cond(d, PAUSED, false, "UpdateInProgress",
                 "Changes are restricted, but %s is in progress and is not interrupted; the %s "
                 "will be paused when it completes.",
                 work, what);
    else if (want_paused && d->state.no_window &&
             strcmp(d->restricted_reason, "NoPermittedWindow") == 0)
        set_cond(d, PAUSED, true, d->restricted_reason,
                 "Changes are paused: no permitted window starts within 10 years%s.", extra);
    else if (want_paused && d->state.current.end == SCHED_POS_INF)
        set_cond(d, PAUSED, true, d->restricted_reason, "Changes are paused indefinitely%s.", extra);
    else if (want_paused)
        set_cond(d, PAUSED, true, d->restricted_reason, "Changes are paused until %s%s.", until, extra);
    else if (d->paused_by_other)
        set_cond(d, PAUSED, true, "PausedExternally",
                 "Changes are permitted, but the %s carries a pause that hcp-controller did not "
                 "set; it is left in place%s.",
                 what, extra);
    else if (d->state.current.end == SCHED_POS_INF)
        set_cond(d, PAUSED, false, "ChangesPermitted", "Changes are permitted%s.", extra);
    else
        set_cond(d, PAUSED, false, "ChangesPermitted", "Changes are permitted until %s%s.", until, extra);

    pending_condition(d, pending, when);
}

int decide_hc(const decide_hc_t *hc, const stanza_resolution_t *res, const decide_capi_t *cluster,
              bool held_at_admission, sched_time_t now, decide_decision_t *out)
{
    memset(out, 0, sizeof(*out));
    int rc = sched_state_at(res->sched, now, &out->state);
    if (rc)
        return rc;
    find_exclusion(res->sched, now, out);
    decide(res, &hc->m.stanza, now, cluster, decide_hc_pending(hc), hc->history_partial, false,
           "CAPI Cluster", "a control-plane update", out);
    /* DESIGN.md 3.6: HyperShift ignores the Cluster's pause for the control
     * plane, and Cluster API reads it only for the Cluster itself (a
     * MachineDeployment looks at its own annotation and Cluster.spec.paused).
     * With the webhooks served the release is held where it starts, and the
     * pause is only the signal CAPI tooling looks for while a control-plane
     * change is held; without them it stays while restricted, as before. */
    if (held_at_admission) {
        out->pause_wanted = out->pause_wanted && decide_hc_held(hc);
        out->action = decide_pause_action(out->pause_wanted, cluster);
    }
    return 0;
}

int decide_np(const decide_np_t *np, const stanza_resolution_t *res,
              const stanza_nodepool_t *inter, const decide_capi_t *md, bool held_at_admission,
              sched_time_t now, decide_decision_t *out)
{
    memset(out, 0, sizeof(*out));
    int rc = sched_state_at(inter->sched, now, &out->state);
    if (rc)
        return rc;
    find_exclusion(inter->sched, now, out);
    bool by_cluster = !out->state.permitted && !res->degraded && res->sched &&
                      sched_permitted(res->sched, now) == 1;
    decide(res, &np->m.stanza, now, md, decide_np_pending(np, md), false, by_cluster,
           np->in_place ? "MachineSet" : "MachineDeployment", "a node rollout", out);
    if (np->requested_summary)
        snprintf(out->held, sizeof(out->held), "%s", np->requested_summary);
    else if (md && md->held)
        snprintf(out->held, sizeof(out->held), "%s", md->held);
    else if (md && md->drift) {
        out->drift = true;
        snprintf(out->held, sizeof(out->held), "HyperShift configuration update: %s; nobody asked "
                 "for it, machines added meanwhile use it", md->drift);
    }
    /* The held change by name in ChangesPending (the hosted ClusterVersion
     * quotes it): what waits, and for what. */
    if (out->held[0] && out->pending_metric == 2 && !out->paused_by_other) {
        char when[32];
        decide_format_time(out->state.has_next ? out->state.next.start : SCHED_POS_INF, when,
                           sizeof(when));
        if (np->requested_bad)
            set_cond(out, PENDING, true, "ChangesBlocked",
                     "A held change cannot be applied: %s; remove or correct the annotation.",
                     out->held);
        else if (out->state.has_next)
            set_cond(out, PENDING, true, "ChangesBlocked",
                     "The held change (%s) waits for the next permitted window at %s.",
                     out->held, when);
        else
            set_cond(out, PENDING, true, "ChangesBlocked",
                     "The held change (%s) waits; no permitted window is scheduled.", out->held);
    }
    /* DESIGN.md 3.6: while restricted, the admission webhook holds a new
     * template (Replace) or target config version (InPlace) where it
     * starts, so the MachineDeployment/MachineSet is paused only in
     * mid-rollout: a rollout is not left running through a closing window
     * (nodes already being replaced finish; no new replacement starts; it
     * resumes in the next window). Merely waiting, it stays unpaused so that
     * Cluster API keeps scaling and remediating, and a pause of ours from a
     * rollout that has since ended is lifted. Without the webhooks the pause
     * is the only brake, so it stays for as long as changes are restricted. */
    out->pause_wanted = out->restricted && md && (md->rolling || !held_at_admission);
    out->action = decide_pause_action(out->pause_wanted, md);
    /* spec.paused beside it in mid-rollout (Replace): safe from Cluster
     * API's nil-MachineSet panic of v1.12.0 to v1.13.5, since a rollout
     * under way has the MachineSet of its template; a later template is
     * held at admission while restricted. A spec.paused we did not set
     * stays, and gets no marker. */
    bool want_spec = out->pause_wanted && md && md->rolling && !np->in_place;
    if (md && want_spec && !md->spec_paused)
        out->spec_pause = 1;
    else if (md && !want_spec && md->spec_marker)
        out->spec_pause = -1;
    /* With our spec.paused in place the annotation HyperShift deleted is not
     * put back: putting it back would only feed HyperShift's next deletion
     * (a write loop while no webhook keeps it). The rollout steps stay
     * stopped, but Cluster API's sync of a paused MachineDeployment still
     * tops its MachineSets up to replicas + maxSurge, once (user guide,
     * "Where the annotation is gone"): the MachineDeployment webhook, which
     * keeps the annotation, is what stops that. */
    if (want_spec && md->spec_paused && md->spec_marker && out->action == DECIDE_PAUSE_REASSERT)
        out->action = DECIDE_PAUSE_NONE;
    /* The reason also depends on the pool's own timeline: wake when it
     * changes too (its window opening inside a closed cluster window). */
    sched_time_t own_next;
    if (!res->degraded && res->sched && sched_next_transition(res->sched, now, &own_next) == 1 &&
        own_next < out->wake)
        out->wake = own_next;
    return 0;
}

static bool cond_equal(const decide_seen_cond_t *have, bool status, const char *reason,
                       const char *msg)
{
    return have->present && have->status == status && have->reason &&
           strcmp(have->reason, reason) == 0 && have->message && strcmp(have->message, msg) == 0;
}

int decide_status_patch(const decide_managed_t *m, const decide_decision_t *d,
                        const char *resource_version, bool nodepool, sched_time_t now,
                        json_t **out)
{
    *out = NULL;
    if (cond_equal(&m->paused, d->paused_status, d->paused_reason, d->paused_message) &&
        cond_equal(&m->pending, d->pending_status, d->pending_reason, d->pending_message) &&
        (!d->has_projected || cond_equal(&m->projected, d->projected_status,
                                         d->projected_reason, d->projected_message)) &&
        (!d->has_after ||
         cond_equal(&m->after, d->after_status, d->after_reason, d->after_message)))
        return 0;

    decide_cond_t want[4] = {
        {"ChangesPaused", d->paused_status, d->paused_reason, d->paused_message, now},
        {"ChangesPending", d->pending_status, d->pending_reason, d->pending_message, now}};
    size_t n = 2;
    if (d->has_projected)
        want[n++] = (decide_cond_t){"HostedClusterVersionProjected", d->projected_status,
                                    d->projected_reason, d->projected_message, now};
    /* since: the verdict's own instant, so that the condition says when
     * the change was found unhealthy, not when this write happened */
    if (d->has_after)
        want[n++] = (decide_cond_t){DECIDE_AFTER_CONDITION, d->after_status, d->after_reason,
                                    d->after_message,
                                    d->after_status && d->after.at != SCHED_NEG_INF ? d->after.at
                                                                                    : now};
    const decide_cond_style_t style = {true, m->generation, nodepool};
    json_t *conds = decide_conditions_merge(m->conditions, want, n, &style);
    json_t *status = conds ? json_pack("{s:o}", "conditions", conds) : NULL;
    *out = status ? decide_status_patch_doc(status, resource_version) : NULL;
    return *out ? 0 : HCP_ENOMEM;
}

json_t *decide_pause_patch(decide_pause_action_t action, const char *resource_version)
{
    json_t *ann;
    switch (action) {
    case DECIDE_PAUSE_ADD:
    case DECIDE_PAUSE_REASSERT:
        ann = json_pack("{s:s, s:s}", DECIDE_PAUSED_ANNOTATION, "true", DECIDE_MARKER_ANNOTATION,
                        DECIDE_MARKER_VALUE);
        break;
    case DECIDE_PAUSE_REMOVE:
        ann = json_pack("{s:n, s:n}", DECIDE_PAUSED_ANNOTATION, DECIDE_MARKER_ANNOTATION);
        break;
    case DECIDE_PAUSE_REMOVE_MARKER:
        ann = json_pack("{s:n}", DECIDE_MARKER_ANNOTATION);
        break;
    default:
        return NULL;
    }
    if (!ann)
        return NULL;
    return json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion", resource_version,
                     "annotations", ann);
}

json_t *decide_label_patch(json_t *base, bool add, const char *resource_version)
{
    json_t *p = base ? base
                     : json_pack("{s:{s:s}}", "metadata", "resourceVersion", resource_version);
    json_t *meta = json_object_get(p, "metadata");
    if (!meta || json_object_set_new(meta, "labels",
                                     json_pack("{s:o}", DECIDE_OPTIN_LABEL,
                                               add ? json_string(DECIDE_OPTIN_VALUE)
                                                   : json_null()))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *decide_spec_pause_patch(json_t *base, bool set, const char *resource_version)
{
    json_t *p = base ? base
                     : json_pack("{s:{s:s}}", "metadata", "resourceVersion", resource_version);
    json_t *meta = json_object_get(p, "metadata");
    json_t *ann = json_object_get(meta, "annotations");

    if (meta && !ann && json_object_set_new(meta, "annotations", json_object()) == 0)
        ann = json_object_get(meta, "annotations");
    if (!ann ||
        json_object_set_new(ann, DECIDE_SPEC_MARKER_ANNOTATION,
                            set ? json_string(DECIDE_MARKER_VALUE) : json_null()) ||
        json_object_set_new(p, "spec", json_pack("{s:b}", "paused", set))) {
        json_decref(p);
        return NULL;
    }
    return p;
}

json_t *decide_np_request_patch(const decide_np_t *np, const char *resource_version)
{
    if (!decide_np_held(np))
        return NULL;
    return json_pack("{s:{s:s?, s:{s:n}}, s:O}", "metadata", "resourceVersion", resource_version,
                     "annotations", DECIDE_REQUESTED_NODEPOOL_ANNOTATION, "spec", np->requested);
}

bool decide_request_held(decide_kind_t kind, const void *self, const decide_decision_t *d)
{
    if (kind == DECIDE_HC)
        return decide_hc_held(self) || decide_hc_fields_held(self);
    return d->held[0] != 0;
}

json_t *decide_release_patch(const decide_hc_t *hc, const char *resource_version)
{
    json_t *p, *spec;

    if (!decide_hc_held(hc))
        return NULL;
    p = json_pack("{s:{s:s?, s:{s:n, s:n}}, s:{}}", "metadata", "resourceVersion",
                  resource_version, "annotations", DECIDE_REQUESTED_RELEASE_ANNOTATION,
                  DECIDE_REQUESTED_CP_RELEASE_ANNOTATION, "spec");
    if (p == NULL)
        return NULL;
    spec = json_object_get(p, "spec");
    if ((hc->requested_release &&
         json_object_set_new(spec, "release", json_pack("{s:s}", "image",
                                                        hc->requested_release))) ||
        (hc->requested_cp_release &&
         json_object_set_new(spec, "controlPlaneRelease",
                             json_pack("{s:s}", "image", hc->requested_cp_release)))) {
        json_decref(p);
        return NULL;
    }
    return p;
}
