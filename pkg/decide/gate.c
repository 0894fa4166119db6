/* gate.c: the health gate's verdict and what it does to a decision. */
#include "decide/gate.h"
#include "check/check.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "decide/decide.h"
#include "decide/slim.h"
#include "decide/version.h"

/* Condition `type` of a conditions array: its status, and its reason into
 * reason (when given) when the condition is there. */
static decide_cond3_t cond3(const json_t *conds, const char *type, const char **reason)
{
    size_t i;
    const json_t *c;
    if (!json_is_array(conds))
        return DECIDE_COND_ABSENT;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (!t || strcmp(t, type) != 0)
            continue;
        const char *st = json_string_value(json_object_get(c, "status"));
        *reason = json_string_value(json_object_get(c, "reason"));
        if (st && strcmp(st, "True") == 0)
            return DECIDE_COND_TRUE;
        if (st && strcmp(st, "False") == 0)
            return DECIDE_COND_FALSE;
        return DECIDE_COND_UNKNOWN;
    }
    return DECIDE_COND_ABSENT;
}

/* Condition `type`'s lastTransitionTime, SCHED_NEG_INF when absent or not
 * RFC 3339. */
static sched_time_t cond_time(const json_t *conds, const char *type)
{
    size_t i;
    const json_t *c;
    sched_time_t t;
    json_array_foreach(conds, i, c) {
        const char *ty = json_string_value(json_object_get(c, "type"));
        const char *ltt = json_string_value(json_object_get(c, "lastTransitionTime"));
        if (ty && strcmp(ty, type) == 0)
            return ltt && sched_parse_rfc3339(ltt, &t) == 0 ? t : SCHED_NEG_INF;
    }
    return SCHED_NEG_INF;
}

/* reason (printable ASCII only: it is quoted in conditions, Events and
 * notifications) into dst, "" when NULL. */
void decide_copy_printable(char *dst, size_t len, const char *reason)
{
    size_t n = 0;
    for (; reason && reason[n] && n + 1 < len; n++)
        dst[n] = reason[n] >= 0x20 && reason[n] < 0x7f ? reason[n] : '?';
    dst[n] = '\0';
}

/* The outcome of the last change (gate.h) into h. */
static void outcome(const json_t *obj, const json_t *conds, bool nodepool, const char *state,
                    decide_health_t *h)
{
    const char *reason = NULL, *done;
    sched_time_t t;
    h->outcome = NOTIFY_OUTCOME_NONE;
    h->outcome_at = SCHED_NEG_INF;
    if (nodepool) {
        if (cond3(conds, "UpdatingVersion", &reason) != DECIDE_COND_FALSE)
            return;
        h->outcome = reason && strcmp(reason, "AsExpected") == 0 ? NOTIFY_OUTCOME_COMPLETED
                                                                  : NOTIFY_OUTCOME_FAILED;
        h->outcome_at = cond_time(conds, "UpdatingVersion");
        if (h->outcome == NOTIFY_OUTCOME_FAILED)
            decide_copy_printable(h->outcome_reason, sizeof(h->outcome_reason), reason);
        return;
    }
    if (state && strcmp(state, "Completed") == 0) {
        done = json_string_value(json_object_get(
            json_array_get(hcp_json_path(obj, "status.version.history"), 0),
            "completionTime"));
        if (done && sched_parse_rfc3339(done, &t) == 0) {
            h->outcome = NOTIFY_OUTCOME_COMPLETED;
            h->outcome_at = t;
        }
        return;
    }
    if (state && strcmp(state, "Partial") == 0 &&
        cond3(conds, "ClusterVersionFailing", &reason) == DECIDE_COND_TRUE) {
        h->outcome = NOTIFY_OUTCOME_FAILED;
        h->outcome_at = cond_time(conds, "ClusterVersionFailing");
        decide_copy_printable(h->outcome_reason, sizeof(h->outcome_reason), reason);
    }
}

/* Keeps the first failing condition's reason (printable ASCII only: it is
 * quoted in conditions and Events) and its lastTransitionTime. */
static void keep_reason(decide_health_t *h, bool failing, const json_t *conds, const char *type,
                        const char *reason)
{
    if (!failing || h->unhealthy_since != SCHED_NEG_INF || h->reason[0])
        return;
    h->unhealthy_since = cond_time(conds, type);
    if (reason)
        decide_copy_printable(h->reason, sizeof(h->reason), reason);
}

/* True when release rel (an availableUpdates entry, a conditional update's
 * release) names the held image, or the version its tag names. */
static bool names_release(const json_t *rel, const char *image, const char *version)
{
    const char *i = json_string_value(json_object_get(rel, "image"));
    const char *v = json_string_value(json_object_get(rel, "version"));
    return (i && strcmp(i, image) == 0) || (version[0] && v && strcmp(v, version) == 0);
}

/* Appends "Name (URL)" of each risk of a conditional update to h->rec_risk,
 * as long as it fits. */
static void risks(const json_t *list, decide_health_t *h)
{
    size_t i, n = 0;
    const json_t *r;
    char one[DECIDE_REC_WHYLEN];
    json_array_foreach(list, i, r) {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *url = json_string_value(json_object_get(r, "url"));
        char nm[64], u[128];
        decide_copy_printable(nm, sizeof(nm), name ? name : "unnamed");
        decide_copy_printable(u, sizeof(u), url ? url : "");
        int k = snprintf(one, sizeof(one), "%s%s%s%s%s", n ? ", " : "", nm, u[0] ? " (" : "", u,
                         u[0] ? ")" : "");
        if (k < 0 || n + (size_t)k >= sizeof(h->rec_risk))
            break;
        memcpy(h->rec_risk + n, one, (size_t)k + 1);
        n += (size_t)k;
    }
}

/* Whether a HostedCluster's held release is still recommended (gate.h). */
static void recommendation(const json_t *obj, decide_health_t *h)
{
    const json_t *ann = hcp_json_path(obj, "metadata.annotations");
    const char *image = json_string_value(json_object_get(ann, DECIDE_REQUESTED_CP_RELEASE_ANNOTATION));
    char version[DECIDE_VERSIONLEN];
    size_t i;
    const json_t *e;

    if (!image || !image[0])
        image = json_string_value(json_object_get(ann, DECIDE_REQUESTED_RELEASE_ANNOTATION));
    if (!image || !image[0])
        return; /* DECIDE_REC_NONE */
    if (!decide_release_version(image, version, sizeof(version)))
        version[0] = '\0';
    decide_copy_printable(h->rec_version, sizeof(h->rec_version), version);
    const json_t *avail = hcp_json_path(obj, "status.version.availableUpdates");
    const json_t *cond = hcp_json_path(obj, "status.version.conditionalUpdates");
    if (json_array_size(avail) == 0 && json_array_size(cond) == 0) {
        h->rec = DECIDE_REC_UNCHECKED;
        return;
    }
    json_array_foreach(avail, i, e) {
        if (names_release(e, image, version)) {
            h->rec = DECIDE_REC_OK;
            return;
        }
    }
    json_array_foreach(cond, i, e) {
        const char *reason = NULL;
        if (!names_release(json_object_get(e, "release"), image, version))
            continue;
        if (cond3(json_object_get(e, "conditions"), "Recommended", &reason) != DECIDE_COND_FALSE) {
            h->rec = DECIDE_REC_OK;
            return;
        }
        h->rec = DECIDE_REC_RISK;
        risks(json_object_get(e, "risks"), h);
        return;
    }
    h->rec = DECIDE_REC_GONE;
}

void decide_health_extract(const json_t *obj, bool nodepool, decide_health_t *out)
{
    const json_t *conds = hcp_json_path(obj, "status.conditions");
    const json_t *ann = hcp_json_path(obj, "metadata.annotations");
    const char *skip = json_string_value(json_object_get(ann, DECIDE_SKIP_GATE_ANNOTATION));
    const char *r1 = NULL, *r2 = NULL;

    memset(out, 0, sizeof(*out));
    out->unhealthy_since = SCHED_NEG_INF;
    const char *skip_rec =
        json_string_value(json_object_get(ann, DECIDE_SKIP_RECOMMENDATION_ANNOTATION));
    out->skip = skip && strcmp(skip, "true") == 0;
    out->skip_rec = skip_rec && strcmp(skip_rec, "true") == 0;
    notify_marks_parse(json_string_value(json_object_get(ann, NOTIFY_MARKS_ANNOTATION)),
                       &out->notified);
    if (nodepool) {
        outcome(obj, conds, true, NULL, out);
        out->ready = (uint8_t)cond3(conds, "Ready", &r1);
        out->nodes_healthy = (uint8_t)cond3(conds, "AllNodesHealthy", &r2);
        /* HyperShift writes AllNodesHealthy False also for a pool without a
         * single Machine: reason NotFound ("No Machines are created"), or
         * AsExpected when it is set to no replicas (nodepool/conditions.go,
         * setAllNodesHealthyCondition). No machine fails a health check
         * then; holding on it would hold a pool scaled to zero for good. */
        if (out->nodes_healthy == DECIDE_COND_FALSE && r2 &&
            (strcmp(r2, "NotFound") == 0 || strcmp(r2, "AsExpected") == 0))
            out->nodes_healthy = DECIDE_COND_ABSENT;
        keep_reason(out, out->ready == DECIDE_COND_FALSE || out->ready == DECIDE_COND_UNKNOWN,
                    conds, "Ready", r1);
        keep_reason(out, out->nodes_healthy == DECIDE_COND_FALSE, conds, "AllNodesHealthy", r2);
        decide_copy_printable(out->outcome_version, sizeof(out->outcome_version),
                    json_string_value(hcp_json_path(obj, "status.version")));
        return;
    }
    out->available = (uint8_t)cond3(conds, "Available", &r1);
    out->degraded = (uint8_t)cond3(conds, "Degraded", &r2);
    keep_reason(out,
                out->available == DECIDE_COND_FALSE || out->available == DECIDE_COND_UNKNOWN,
                conds, "Available", r1);
    keep_reason(out, out->degraded == DECIDE_COND_TRUE, conds, "Degraded", r2);
    const json_t *hist = hcp_json_path(obj, "status.version.history");
    const char *state = json_is_array(hist) ? json_string_value(json_object_get(
                                                  json_array_get(hist, 0), "state"))
                                            : NULL;
    out->partial = state && strcmp(state, "Partial") == 0;
    outcome(obj, conds, false, state, out);
    decide_copy_printable(out->outcome_version, sizeof(out->outcome_version),
                json_string_value(json_object_get(json_array_get(hist, 0), "version")));
    recommendation(obj, out);
}

static const char *status_word(uint8_t c)
{
    return c == DECIDE_COND_TRUE ? "True" : c == DECIDE_COND_FALSE ? "False" : "Unknown";
}

/* "<type> is <status> (reason R)". */
static void failed(char *why, size_t len, const char *type, uint8_t c, const char *reason)
{
    snprintf(why, len, "%s is %s%s%s%s", type, status_word(c), reason[0] ? " (reason " : "",
             reason, reason[0] ? ")" : "");
}

bool decide_health_ok(const decide_health_t *h, bool nodepool, char *why, size_t len)
{
    if (nodepool) {
        if (h->ready == DECIDE_COND_FALSE || h->ready == DECIDE_COND_UNKNOWN)
            failed(why, len, "Ready", h->ready, h->reason);
        else if (h->nodes_healthy == DECIDE_COND_FALSE)
            failed(why, len, "AllNodesHealthy", h->nodes_healthy, h->reason);
        else
            return true;
        return false;
    }
    if (h->available == DECIDE_COND_FALSE || h->available == DECIDE_COND_UNKNOWN)
        failed(why, len, "Available", h->available, h->reason);
    else if (h->degraded == DECIDE_COND_TRUE)
        failed(why, len, "Degraded", h->degraded, h->reason);
    else if (h->partial)
        snprintf(why, len, "a control-plane update is still Partial in status.version.history");
    else
        return true;
    return false;
}

bool decide_rec_ok(const decide_health_t *h, char *why, size_t len)
{
    char what[64];
    snprintf(what, sizeof(what), "%s%s", h->rec_version[0] ? "release " : "the held release",
             h->rec_version);
    if (h->rec == DECIDE_REC_GONE)
        snprintf(why, len,
                 "%s is no longer offered for this cluster: neither status.version."
                 "availableUpdates nor conditionalUpdates lists it (pulled from the update graph)",
                 what);
    else if (h->rec == DECIDE_REC_RISK)
        snprintf(why, len,
                 "%s is not recommended for this cluster: conditionalUpdates says Recommended "
                 "False (risk %s)",
                 what, h->rec_risk[0] ? h->rec_risk : "not named");
    else
        return true;
    return false;
}

bool decide_gate_override(const stanza_t *st, const decide_health_t *h, sched_time_t now)
{
    return h->skip && stanza_permissive_at(st, now);
}

bool decide_rec_override(const stanza_t *st, const decide_health_t *h, sched_time_t now)
{
    return h->skip_rec && stanza_permissive_at(st, now);
}

void decide_gate_verdict(const decide_health_t *h, bool nodepool, const stanza_t *st,
                         const decide_check_t *ck, sched_time_t now, decide_gate_t *g)
{
    char rwhy[DECIDE_GATE_WHYLEN];
    g->unchecked = !nodepool && h->rec == DECIDE_REC_UNCHECKED;
    /* Health first: a failing health holds whatever the release. */
    bool health = decide_health_ok(h, nodepool, g->why, sizeof(g->why));
    bool health_skipped = !health && decide_gate_override(st, h, now);
    bool rec = nodepool || decide_rec_ok(h, rwhy, sizeof(rwhy));
    bool rec_skipped = !rec && decide_rec_override(st, h, now);
    g->pass = health && rec;
    g->skipped = false;
    g->by_rec = false;
    g->by_check = false;
    g->reason = NULL;
    if (g->pass || ((health || health_skipped) && (rec || rec_skipped))) {
        /* What windows, health and the release let through, the checks may
         * still hold (never the reverse). */
        if (ck && (ck->verdict == CHECK_FAIL || ck->verdict == CHECK_WAIT)) {
            g->pass = false;
            g->by_check = true;
            g->reason = ck->verdict == CHECK_FAIL ? "CheckFailed" : "CheckPending";
            snprintf(g->why, sizeof(g->why), "%s", ck->why);
            return;
        }
        if (g->pass)
            return;
    }
    /* What is told: the health, unless it passed or was skipped and the
     * release's recommendation is what still holds. */
    g->by_rec = health || (health_skipped && !rec && !rec_skipped);
    g->reason = g->by_rec ? "ReleaseNotRecommended" : "HealthGate";
    if (g->by_rec)
        snprintf(g->why, sizeof(g->why), "%s", rwhy);
    g->skipped = (health || health_skipped) && (rec || rec_skipped);
}

void decide_gate_hold(decide_decision_t *d, bool nodepool, const decide_health_t *h,
                      const decide_capi_t *capi, bool held_at_admission, const char *reason)
{
    d->restricted = true;
    d->restricted_reason = reason;
    d->gate_held = true;
    /* A control-plane update under way is one material change: the
     * Cluster's pause (only the signal CAPI tooling reads) is not added
     * under it. A NodePool's held template is held at admission, so its
     * MachineDeployment/MachineSet stays unpaused and keeps scaling. */
    if (nodepool)
        d->pause_wanted = capi && !held_at_admission;
    else
        d->pause_wanted = !(h->partial && capi && !capi->paused);
    d->hold_open = !nodepool && !d->pause_wanted;
    d->action = decide_pause_action(d->pause_wanted, capi);
    if (nodepool)
        d->spec_pause = capi && capi->spec_marker ? -1 : 0;
    d->pending = true;
    d->pending_metric = 2;
    d->paused_status = true;
    d->paused_reason = reason;
    d->pending_status = true;
    d->pending_reason = reason;
}

void decide_gate_apply(decide_decision_t *d, bool nodepool, const decide_health_t *h,
                       const stanza_t *st, const decide_check_t *ck, bool held,
                       const decide_capi_t *capi, bool held_at_admission, sched_time_t now)
{
    char until[32];
    decide_gate_t *g = &d->gate;

    memset(g, 0, sizeof(*g));
    g->applies = !d->restricted && held;
    if (!g->applies)
        return;
    decide_gate_verdict(h, nodepool, st, ck, now, g);
    if (g->pass || g->skipped)
        return;

    bool by_rec = g->by_rec, by_check = g->by_check;
    decide_gate_hold(d, nodepool, h, capi, held_at_admission, g->reason);
    decide_format_time(d->state.current.end, until, sizeof(until));
    if (by_check)
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "The held change is not let through yet: %s. %s%s%s.", g->why,
                 strcmp(g->reason, "CheckFailed") == 0
                     ? "The check is asked again while the window is open"
                     : "It goes as soon as every check allows it, while the window is open",
                 until[0] ? ", until " : "", until);
    else if (by_rec)
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "The held release is not let through: %s. It is checked again while the window "
                 "is open%s%s; an override with the annotation %s: \"true\" lets it through.",
                 g->why, until[0] ? ", until " : "", until, DECIDE_SKIP_RECOMMENDATION_ANNOTATION);
    else
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "Changes are held by the health gate: %s. It is checked again while the window "
                 "is open%s%s.",
                 g->why, until[0] ? ", until " : "", until);
    snprintf(d->pending_message, sizeof(d->pending_message), "Pending changes wait %s: %s.",
             by_check ? "for the pre-start checks"
             : by_rec ? "for their release to be recommended again"
                      : "for the health gate",
             g->why);
}
