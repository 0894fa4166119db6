/* companion.c: what a HostedCluster's or NodePool's companion holds. */
#include "decide/companion.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "policy/behavior.h"

#define HC_PREFIX "hostedcluster."
#define NP_PREFIX "nodepool."

int decide_companion_name(decide_kind_t kind, const char *name, char *buf, size_t len)
{
    const char *prefix = kind == DECIDE_HC ? HC_PREFIX : kind == DECIDE_NP ? NP_PREFIX : NULL;
    if (!prefix || !name || !*name || strlen(prefix) + strlen(name) > 253)
        return HCP_EINVAL;
    int n = snprintf(buf, len, "%s%s", prefix, name);
    return n < 0 || (size_t)n >= len ? HCP_EINVAL : 0;
}

bool decide_companion_target(const char *name, decide_kind_t *kind, const char **target)
{
    if (strncmp(name, HC_PREFIX, strlen(HC_PREFIX)) == 0 && name[strlen(HC_PREFIX)]) {
        *kind = DECIDE_HC;
        *target = name + strlen(HC_PREFIX);
        return true;
    }
    if (strncmp(name, NP_PREFIX, strlen(NP_PREFIX)) == 0 && name[strlen(NP_PREFIX)]) {
        *kind = DECIDE_NP;
        *target = name + strlen(NP_PREFIX);
        return true;
    }
    return false;
}

bool decide_companion_wanted(const decide_plan_t *p)
{
    return p->present && p->managed &&
           (p->managed->stanza.present || (p->kind == DECIDE_NP && p->cluster_stanza));
}

static json_t *state_doc(bool permitted, sched_interval_t iv, const char *reason)
{
    return json_pack("{s:s, s:o, s:o, s:s}", "state",
                     permitted ? "ChangesUnpaused" : "ChangesPaused", "startTime",
                     decide_json_time(iv.start), "endTime", decide_json_time(iv.end), "reason", reason);
}

/* behavior.current and behavior.next of a decision. */
static json_t *behavior_doc(const decide_decision_t *d)
{
    const sched_state_t *s = &d->state;
    /* A failing health gate holds changes inside the window (DESIGN.md 3.10). */
    bool held_by_gate = s->permitted && d->gate.applies && !d->gate.pass && !d->gate.skipped;
    /* So does a request that waits for its control plane (cpfirst.h), and
     * the last minimum time left of a window (minleft.h). */
    held_by_gate = held_by_gate || (s->permitted && d->cp_first) ||
                   (s->permitted && d->minleft.tail && d->restricted);
    bool permitted = s->permitted && !held_by_gate;
    const char *cur_reason = permitted ? "ChangesPermitted" : d->restricted_reason;
    json_t *cur = state_doc(permitted, s->current, cur_reason);
    if (cur && d->excluded &&
        json_object_set_new(cur, "exclusion",
                            json_pack("{s:s, s:o}", "reason", d->excluded_reason, "endTime",
                                      decide_json_time(d->excluded_until)))) {
        json_decref(cur);
        return NULL;
    }
    json_t *next = s->has_next ? state_doc(!s->permitted, s->next,
                                           s->permitted ? "OutsideMaintenanceWindow"
                                                        : "InMaintenanceWindow")
                               : json_null();
    return cur && next ? json_pack("{s:o, s:o}", "current", cur, "next", next)
                       : (json_decref(cur), json_decref(next), NULL);
}

/* The change held while restricted, or json_null() when none:
 * {summary, release?, controlPlaneRelease?}; a NodePool's
 * {summary, nodePoolSpec} (the held merge patch of spec), {summary,
 * template} for a template held the old way, or {summary, source, change}
 * for a drift held on its MachineDeployment (drift.h). */
static json_t *held_doc(decide_kind_t kind, const void *self, const decide_decision_t *d)
{
    if (kind == DECIDE_HC) {
        const decide_hc_t *hc = self;
        const char *rel = hc->requested_release, *cp = hc->requested_cp_release;
        bool fields = decide_hc_fields_held(hc);
        if (!decide_hc_held(hc) && !fields && !(d->pending && d->pending_metric == 2))
            return json_null();
        if (!decide_hc_held(hc) && fields) {
            /* Only the fields that roll every NodePool are held. */
            char summary[600];
            snprintf(summary, sizeof(summary), "%s (rolls every NodePool)",
                     hc->requested_fields_summary ? hc->requested_fields_summary : "a change");
            return json_pack("{s:s, s:O}", "summary", summary, "hostedClusterSpec",
                             hc->requested_fields);
        }
        if (!decide_hc_held(hc)) {
            rel = hc->spec_release;
            cp = hc->spec_cp_release;
        }
        char summary[600];
        snprintf(summary, sizeof(summary), "release %s%s%s", cp ? cp : rel ? rel : "update",
                 fields ? "; " : "", fields && hc->requested_fields_summary
                                         ? hc->requested_fields_summary
                                         : "");
        json_t *doc = json_pack("{s:s, s:s?, s:s?}", "summary", summary, "release", rel,
                                "controlPlaneRelease", cp);
        if (doc && fields &&
            json_object_set_new(doc, "hostedClusterSpec", json_deep_copy(hc->requested_fields))) {
            json_decref(doc);
            return NULL;
        }
        return doc;
    }
    if (!(d->pending && d->pending_metric == 2))
        return json_null();
    const decide_np_t *np = self;
    if (d->held[0] && d->drift && !np->requested)
        return json_pack("{s:s, s:s, s:s}", "summary", "HyperShift configuration update",
                         "source", "HyperShift, by itself (no request)", "change", d->held);
    if (d->held[0]) {
        char summary[DECIDE_HELDLEN + 32];
        snprintf(summary, sizeof(summary), "%s to %s",
                 np->in_place ? "in-place update" : "node rollout", d->held);
        if (np->requested)
            return json_pack("{s:s, s:O}", "summary", summary, "nodePoolSpec", np->requested);
        return json_pack("{s:s, s:s}", "summary", summary,
                         np->requested_bad ? "request" : "template", d->held);
    }
    return json_pack("{s:s}", "summary", np->updating_version  ? "version update"
                                         : np->updating_config ? "configuration update"
                                                               : "node rollout");
}

/* The release waves' verdict (wave.h) on the held change. */
static json_t *wave_doc(const decide_decision_t *d)
{
    static const char *const states[] = {"Passed", "WaitingForSoak", "WaveHalted",
                                         "ReleaseBlocked"};
    const wave_verdict_t *w = &d->wave;
    json_t *o = json_pack("{s:s, s:s, s:s, s:b}", "name", w->name,
                          "state", states[w->state <= WAVE_BLOCKED ? w->state : 0], "message",
                          w->why, "skipped", d->wave_skipped);
    if (o && w->state == WAVE_SOAK && w->until != SCHED_POS_INF && w->until != SCHED_NEG_INF)
        json_object_set_new(o, "until", decide_json_time(w->until));
    return o;
}

json_t *decide_status_doc(decide_kind_t kind, const void *self, const decide_decision_t *d,
                          const stanza_resolution_t *res, const stanza_nodepool_t *inter,
                          sched_time_t now)
{
    const stanza_t *st = kind == DECIDE_HC ? &((const decide_hc_t *)self)->m.stanza
                                           : &((const decide_np_t *)self)->m.stanza;
    json_t *doc = json_pack("{s:s, s:s, s:o, s:o}", "strategy", stanza_configured_strategy(st),
                            "strategyInForce", stanza_enforced_strategy(st, res, now),
                            "behavior", behavior_doc(d), "heldChange", held_doc(kind, self, d));
    if (!doc)
        return NULL;
    if (st->policy[0] && json_object_set_new(doc, "policy", json_string(st->policy)))
        goto fail;
    const decide_managed_t *m = kind == DECIDE_HC ? &((const decide_hc_t *)self)->m
                                                  : &((const decide_np_t *)self)->m;
    json_t *audit = decide_audit_doc(&m->audit, decide_request_held(kind, self, d));
    if (audit && json_object_set_new(doc, "audit", audit))
        goto fail;
    if (d->gate.applies &&
        json_object_set_new(doc, "healthGate",
                            d->gate.pass ? json_pack("{s:b}", "passed", 1)
                                         : json_pack("{s:b, s:b, s:s}", "passed", 0, "skipped",
                                                     d->gate.skipped, "message", d->gate.why)))
        goto fail;
    if ((d->wave.state != WAVE_PASS || d->wave_skipped) &&
        json_object_set_new(doc, "wave", wave_doc(d)))
        goto fail;
    if (d->minleft.min > 0 &&
        json_object_set_new(doc, "minTimeLeft",
                            json_pack("{s:I, s:s, s:o, s:o}", "seconds", (json_int_t)d->minleft.min,
                                      "source",
                                      d->minleft.source == DECIDE_MIN_GUARD ? "GuardRails"
                                                                            : "Policy",
                                      "effectiveStart",
                                      d->minleft.found ? decide_json_time(d->minleft.start) : json_null(),
                                      "lastStart",
                                      d->minleft.found ? decide_json_time(d->minleft.last)
                                                       : json_null())))
        goto fail;
    if (d->after.state == DECIDE_AFTER_UNHEALTHY) {
        char words[64];
        decide_after_change_words(&m->health, words, sizeof(words));
        if (json_object_set_new(doc, "afterChange",
                                json_pack("{s:s, s:o, s:o, s:s}", "change", words, "completedAt",
                                          decide_json_time(d->after.completed), "unhealthySince",
                                          decide_json_time(d->after.since), "message",
                                          d->after_message)))
            goto fail;
    }
    if (d->cp_first && json_object_set_new(doc, "waitingForControlPlane",
                                           json_pack("{s:s}", "message", d->cp_why)))
        goto fail;
    if (kind == DECIDE_NP && inter) {
        const char *hc = ((const decide_np_t *)self)->cluster_name;
        json_t *cc = inter->cluster_has_window
                         ? json_pack("{s:s, s:o, s:o}", "hostedCluster", hc ? hc : "",
                                     "startTime", decide_json_time(inter->cluster_next.start),
                                     "endTime", decide_json_time(inter->cluster_next.end))
                         : json_pack("{s:s, s:s}", "hostedCluster", hc ? hc : "", "reason",
                                     "NoPermittedWindow");
        if (!cc || json_object_set_new(doc, "clusterConstraint", cc))
            goto fail;
    }
    return doc;
fail:
    json_decref(doc);
    return NULL;
}

/* Removes null members of every object in v, recursively (the API server
 * drops them from what it stores). */
static void drop_nulls(json_t *v)
{
    const char *key;
    json_t *m;
    void *tmp;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach_safe(v, tmp, key, m) {
            if (json_is_null(m))
                json_object_del(v, key);
            else
                drop_nulls(m);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m) drop_nulls(m);
    }
}

json_t *decide_companion_status(const decide_plan_t *p, const json_t *prev_status,
                                sched_time_t now)
{
    const sched_state_t *s = &p->d.state;
    const char *strategy = stanza_enforced_strategy(&p->managed->stanza, p->res, now);
    json_t *hist = NULL, *st = p->status_doc ? json_deep_copy(p->status_doc) : NULL;
    if (!st || behavior_history_extend(prev_status, strategy, s->permitted, s->current.start,
                                       now, &hist) ||
        json_object_set_new(json_object_get(st, "behavior"), "history", hist))
        goto fail;
    json_t *held = json_object_get(st, "heldChange");
    if (json_is_object(held)) {
        const json_t *was = json_object_get(prev_status, "heldChange");
        const json_t *since = json_object_get(was, "since");
        bool same = json_is_string(since) &&
                    json_equal(json_object_get(was, "summary"), json_object_get(held, "summary"));
        if (json_object_set_new(held, "since", same ? json_copy((json_t *)since)
                                                    : decide_json_time(now)))
            goto fail;
    }
    drop_nulls(st);
    return st;
fail:
    json_decref(st);
    return NULL;
}

json_t *decide_companion_object(const decide_plan_t *p, const char *ns, const char *name,
                                const json_t *status)
{
    char cname[DECIDE_COMPANION_NAMELEN];
    const char *kind = p->kind == DECIDE_HC ? "HostedCluster" : "NodePool";
    if (decide_companion_name(p->kind, name, cname, sizeof(cname)))
        return NULL;
    json_t *owners = json_array();
    if (owners && p->self.uid && p->self.uid[0] &&
        json_array_append_new(owners, json_pack("{s:s, s:s, s:s, s:s}", "apiVersion",
                                                "hypershift.openshift.io/v1beta1", "kind", kind,
                                                "name", name, "uid", p->self.uid))) {
        json_decref(owners);
        return NULL;
    }
    return owners ? json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}, s:o}, s:{s:s, s:s}, s:O}",
                              "apiVersion", DECIDE_COMPANION_API_VERSION, "kind",
                              DECIDE_COMPANION_KIND, "metadata", "name", cname, "namespace", ns,
                              "labels", "changemanagement.hypershift.openshift.io/target-kind",
                              kind, "ownerReferences", owners, "target", "kind", kind, "name",
                              name, "status", status)
                  : NULL;
}

/* The words every companion digest repeats (keys in the digest's sorted
 * order, the states and reasons, the usual release repository): the preset
 * dictionary that takes a digest of some 770 bytes to some 140. The most
 * frequent come last. Changing it changes nothing stored outside the
 * process: the caches pack what they read with it. */
static const char digest_zdict[] =
    "\"upcoming\":\"exclusion\":\"Restrictive\",\"RestrictiveUntil\",\"Permissive\","
    "\"PermissiveUntil\",\"Disabled\",\"waitingForControlPlane\":{\"message\":"
    "\"afterChange\":\"minTimeLeft\":\"controlPlaneRelease\":\"ChangesUnpaused\""
    "\"InMaintenanceWindow\"\"clusterConstraint\":{\"endTime\":\"20\",\"hostedCluster\":\"\","
    "\"startTime\":\"20\"},\"heldChange\":{\"release\":"
    "\"quay.io/openshift-release-dev/ocp-release:4.\",\"since\":\"20\",\"summary\":"
    "\"node rollout\"},\"policy\":\"\",\"strategy\":\"ByPolicy\",\"strategyInForce\":"
    "\"MaintenanceSchedule\"},\"target\":{\"kind\":\"NodePool\",\"name\":\"{\"owners\":"
    "[\"\"],\"status\":{\"behavior\":{\"current\":{\"endTime\":\"20\",\"reason\":"
    "\"OutsideMaintenanceWindow\",\"startTime\":\"20\",\"state\":\"ChangesPaused\"},"
    "\"history\":[{\"startTime\":\"20\",\"state\":\"ChangesPaused\",\"strategy\":"
    "\"MaintenanceSchedule\"}],\"next\":{\"endTime\":\"20\",\"reason\":"
    "\"InMaintenanceWindow\",\"startTime\":\"20\",\"state\":\"ChangesUnpaused\"}},";

char *decide_companion_digest(const json_t *obj)
{
    json_t *uids = json_array(), *ref;
    size_t i;
    json_array_foreach(hcp_json_path(obj, "metadata.ownerReferences"), i, ref) {
        const json_t *uid = json_object_get(ref, "uid");
        if (json_is_string(uid) && json_array_append(uids, (json_t *)uid))
            goto fail;
    }
    json_t *d = uids ? json_pack("{s:o, s:O*, s:O*}", "owners", uids, "target",
                                 json_object_get(obj, "target"), "status",
                                 json_object_get(obj, "status"))
                     : NULL;
    uids = NULL;
    if (!d)
        return NULL;
    json_t *copy = json_deep_copy(d);
    json_decref(d);
    if (!copy)
        return NULL;
    drop_nulls(copy);
    char *text = json_dumps(copy, JSON_SORT_KEYS | JSON_COMPACT);
    json_decref(copy);
    return text;
fail:
    json_decref(uids);
    return NULL;
}

int decide_companion_pack(const json_t *obj, decide_packed_t *out)
{
    char *text = decide_companion_digest(obj);
    int rc = text && decide_pack(text, strlen(text), digest_zdict, out) == 0 ? 0 : HCP_ENOMEM;
    free(text);
    return rc;
}

char *decide_companion_unpack(const decide_packed_t *p)
{
    return decide_unpack(p, digest_zdict);
}
