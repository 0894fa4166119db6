/* holds.c: the holds of DESIGN.md 3.6, answered at admission.
 *
 * While an object's timeline restricts changes, a write that would start a
 * material change is admitted with that change undone in the same write,
 * where it is requested:
 *
 * - HostedCluster: spec.release.image and spec.controlPlaneRelease.image
 *   stay at the running values; the requested ones are recorded in the
 *   requested-* annotations, which reconcile applies when a window opens.
 * - NodePool: the fields whose change rolls the pool's machines
 *   (decide_np_held_fields: release, config, tuningConfig, the platform
 *   fields of a new machine template) stay at the running values; the
 *   request is recorded as a merge patch of spec in the
 *   requested-nodepool-spec annotation, which reconcile applies when a
 *   window opens. HyperShift never sees a new target while it is held, so
 *   its ignition token, user data and status stay those of the machines
 *   that run, and the machines a scale-up or a remediation creates join.
 *   A write let through in a window that sets a recorded field itself
 *   drops it from the record (the newer request wins).
 * - MachineDeployment and MachineSet: nothing new is held there. A
 *   template or target held the old way (the held-template annotation) is
 *   kept while restricted and let through by the first write in a window,
 *   which drops the record; a pause of ours (the annotation with our
 *   marker) that the write deletes, as HyperShift's NodePool reconcile
 *   does on every pass, is kept while the plan keeps it (mid-rollout): no
 *   fight, no gap. A pause the plan lifts (the rollout ended) is not.
 *
 * - ConfigMap: a change of the data or binaryData of a ConfigMap named by
 *   the spec.config of a restricted NodePool of its namespace, or its
 *   deletion, is refused with what to do instead (decide/cmhold.h):
 *   HyperShift would roll the pool on it and no NodePool write carries it.
 *
 * Replicas and everything else pass, so scaling and remediation go on.
 * Each replica answers from its own cache through a read-only view
 * (ctl_view_init() without memoizing: the plan resolves what no record
 * keeps into storage of its own and frees it), so the answer is the one
 * reconcile would give; nothing is written and no state is kept. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "admission/holds.h"

#include "check/call.h"
#include "decide/cmhold.h"
#include "decide/companion.h"
#include "decide/cpfirst.h"
#include "decide/drift.h"
#include "decide/hcfields.h"
#include "decide/nphold.h"
#include "decide/skew.h"
#include "decide/withdraw.h"
#include "log/log.h"

#define POINTER_LEN 768 /* a JSON pointer into the object admitted */

#define TARGET_CONFIG_ANNOTATION "hypershift.openshift.io/nodePoolTargetConfigVersion"

/* What the plan says about the managed object ns/name of kind, at now. */
typedef struct verdict {
    bool restricted;          /* hold: the timeline does not permit changes */
    bool permitted;           /* decided, and the timeline permits changes now */
    bool keep_pause;          /* NodePools: the plan keeps our pause (mid-rollout) */
    char until[96];           /* the next window's start, RFC 3339, "" when none; held by
                                 the release waves: what it waits for */
    char capi_ns[DECIDE_NSLEN]; /* the plan's CAPI object (NodePools) */
    char capi_name[254];
    bool cp_held;             /* NodePools: the release the write asks for is one the
                                 control plane has not completed (cpfirst.h) */
    char cp_why[DECIDE_MSGLEN / 2]; /* why, "" when not cp_held */
    uint64_t inputs;          /* opted-in NodePools: decide_pool_inputs_fp() as the cache
                                 has it; 0 for a pool that did not opt in */
    bool mine;                /* pool_verdict(): the object is the pool's CAPI object */
    bool opted_in;            /* the plan's opted_in */
    sched_time_t current;     /* permitted: the start of the window open now */
    bool check_held;          /* permitted, but the change the write asks for waits for
                                 the pre-start checks (DESIGN.md 3.15) */
    bool np_asked;            /* NodePools: the plan has a held change the checks are
                                 asked about (np_key: its check_change_key()) */
    uint64_t np_key;
    bool wave_held;           /* the release waves hold it in an open window: until says
                                 until what (wave_until()) */
    char skipped[DECIDE_AUDIT_VALLEN + 64]; /* the override in force lets the release past
                                               the waves: the record of it (audit.h),
                                               "" none */
} verdict_t;

/* A release the waves hold (decide/wave.h): until what, in words. */
static void wave_until(const decide_decision_t *d, char *until, size_t len)
{
    char t[32];
    if (!d->wave_held)
        return;
    if (d->wave.state == WAVE_SOAK && d->wave.until != SCHED_POS_INF) {
        decide_format_time(d->wave.until, t, sizeof(t));
        snprintf(until, len, "the first window from %s (release waves: %s)", t,
                 d->restricted_reason);
    } else {
        snprintf(until, len, "the release waves let it through (%s)", d->restricted_reason);
    }
}

/* The instant an admission request is decided at: the time of the request,
 * not of the start of the loop's iteration. At a boundary the loop may have
 * been busy with every object of a policy before it reached this request,
 * and a write answered with the window as it was then would pass after the
 * window closed (and its audit record would name an earlier time). */
/* The plan's verdict; for a NodePool also whether image (the release a
 * write asks for, NULL when it asks for none) waits for the control plane. */
static int plan_verdict_asked(ctl_controller_t *c, decide_kind_t kind, const char *ns,
                              const char *name, const char *const asked[2], verdict_t *out,
                              char *err, size_t errlen)
{
    const char *image = asked[0];
    decide_view_t v;
    decide_plan_t p;
    int rc;

    memset(out, 0, sizeof(*out));
    ctl_plan_view(c, &v);
    v.projection = NULL;
    /* The kind of change a scoped exclusion holds is the write's. */
    v.asked[0] = asked[0];
    v.asked[1] = asked[1];
    rc = decide_plan(&v, kind, ns, name, ctl_now_exact(c), &p, err, errlen);
    if (rc == 0 && p.present && p.decided) {
        out->restricted = p.d.restricted;
        out->permitted = !p.d.restricted;
        out->keep_pause = p.d.pause_wanted;
        out->opted_in = p.opted_in;
        out->current = p.d.state.current.start;
        if (p.d.state.has_next)
            decide_format_time(p.d.state.next.start, out->until, sizeof(out->until));
        wave_until(&p.d, out->until, sizeof(out->until));
        out->wave_held = p.d.wave_held;
        if (p.d.wave_skipped && p.managed) {
            char what[DECIDE_AUDIT_VALLEN];
            snprintf(what, sizeof(what), "release waves: %.200s", p.d.wave.why);
            decide_audit_skipped(p.managed->audit.override_at, what, out->skipped,
                                 sizeof(out->skipped));
        }
        snprintf(out->capi_ns, sizeof(out->capi_ns), "%s", p.capi_ns);
        snprintf(out->capi_name, sizeof(out->capi_name), "%s", p.capi_name ? p.capi_name : "");
        out->cp_held = kind == DECIDE_NP && image && p.opted_in &&
                       !decide_cp_first_ok(image, p.hc, out->cp_why, sizeof(out->cp_why));
        if (kind == DECIDE_NP && p.opted_in) /* never noted on a pool that did not opt in */
            out->inputs = decide_pool_inputs_fp(p.self.data, p.hc);
        if (kind == DECIDE_NP && ctl_check_runner(c)) { /* only the checks read it */
            sched_time_t window;
            unsigned system;
            out->np_asked = decide_plan_check_key(&p, &window, &out->np_key, &system);
        }
    }
    decide_plan_free(&p);
    return rc;
}

static int plan_verdict_image(ctl_controller_t *c, decide_kind_t kind, const char *ns,
                              const char *name, const char *image, verdict_t *out, char *err,
                              size_t errlen)
{
    const char *asked[2] = {image, NULL};
    return plan_verdict_asked(c, kind, ns, name, asked, out, err, errlen);
}

static int plan_verdict(ctl_controller_t *c, decide_kind_t kind, const char *ns,
                        const char *name, verdict_t *out, char *err, size_t errlen)
{
    return plan_verdict_image(c, kind, ns, name, NULL, out, err, errlen);
}

/* The image at path in the write when it differs from the old object's. */
static const char *changed_image(const adm_request_t *q, const char *path)
{
    const char *was = hcp_json_str(q->old_object, path), *want = hcp_json_str(q->object, path);
    return want && (!was || strcmp(was, want) != 0) ? want : NULL;
}

static bool same_str(const char *a, const char *b)
{
    return (a == NULL && b == NULL) || (a && b && strcmp(a, b) == 0);
}

/* Sets annotation key to value in the object being admitted (obj). When
 * obj has no annotations the first such call adds the map (an earlier
 * operation of this response may have added it already). */
static int patch_annotation(adm_response_t *a, const json_t *obj, const char *key,
                            const char *value)
{
    const char *const seg[] = {"metadata", "annotations", key, NULL};
    char path[POINTER_LEN];
    size_t i;
    json_t *op;
    int rc;

    if (!json_is_object(hcp_json_path(obj, "metadata.annotations"))) {
        json_array_foreach(a->patch, i, op) {
            if (same_str(json_string_value(json_object_get(op, "path")), "/metadata/annotations"))
                break;
        }
        if (a->patch == NULL || i == json_array_size(a->patch))
            if ((rc = adm_patch_op(a, "add", "/metadata/annotations", json_object())) != 0)
                return rc;
    }
    if (adm_pointer(path, sizeof(path), seg))
        return HCP_ERANGE;
    return adm_patch_op(a, "add", path, json_string(value));
}

/* Adds each {op, path, value} of ops (a hold's JSON Patch, built by
 * pkg/decide) to the answer. Returns 0 or the first error. */
static int add_ops(adm_response_t *a, const json_t *ops)
{
    const json_t *op;
    size_t i;
    int rc;

    json_array_foreach(ops, i, op) {
        rc = adm_patch_op(a, json_string_value(json_object_get(op, "op")),
                          json_string_value(json_object_get(op, "path")),
                          json_incref(json_object_get(op, "value")));
        if (rc)
            return rc;
    }
    return 0;
}

/* Removes annotation key from the object the request stores. */
static int remove_annotation(adm_response_t *a, const char *key)
{
    const char *const seg[] = {"metadata", "annotations", key, NULL};
    char path[POINTER_LEN];

    if (adm_pointer(path, sizeof(path), seg))
        return HCP_ERANGE;
    return adm_patch_op(a, "remove", path, NULL);
}

/* The value of annotation key of obj, or NULL. */
static const char *annotation(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(obj, "metadata.annotations"),
                                             key));
}

/* Elides the middle of s with "..." so that it takes at most max bytes
 * (max >= 8), keeping its start and its end (an image's registry and its
 * tag or digest tail); out has room for max + 1 bytes. */
static void elide(char *out, size_t max, const char *s)
{
    size_t n = strlen(s), head, tail;

    if (n <= max) {
        memcpy(out, s, n + 1);
        return;
    }
    head = (max - 3) / 2;
    tail = max - 3 - head;
    snprintf(out, max + 1, "%.*s...%s", (int)head, s, s + n - tail);
}

/* The warning of a hold, at most ADM_WARNING_MAX bytes (the API server
 * drops a longer warning's end): what is held and until when come first
 * and always fit; then the value asked for (want, elided in the middle
 * when long), the value kept (kept), and where the rest is said (the
 * companion of the HostedCluster or NodePool `name` of kind, or the
 * Events). Parts that do not fit are left out, last first; want and kept
 * may be NULL. */
static void warn_held(adm_response_t *a, const char *what, const char *want, const char *kept,
                      const char *until, decide_kind_t kind, const char *name)
{
    char msg[ADM_WARNING_MAX + 1], cname[DECIDE_COMPANION_NAMELEN], v[ADM_WARNING_MAX + 1];
    char see[DECIDE_COMPANION_NAMELEN + 64];
    size_t n;

    if (name && decide_companion_name(kind, name, cname, sizeof(cname)) == 0)
        snprintf(see, sizeof(see), "; see %s %s", DECIDE_COMPANION_KIND, cname);
    else
        snprintf(see, sizeof(see), "; see the object's Events");
    n = (size_t)snprintf(msg, sizeof(msg), "%s is held until %s", what,
                         until && until[0] ? until : "a window opens (none is scheduled)");
    if (n >= sizeof(msg))
        goto out; /* cannot happen with the callers' constants; cut by the writer */
    if (want) {
        /* The value asked for, at least 24 bytes of it, more if there is room. */
        size_t room = sizeof(msg) - 1 - n - strlen(": ") - strlen(" requested");
        if (room >= 24) {
            elide(v, room, want);
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, ": %s requested", v);
        }
    }
    if (kept && n + strlen(", ") + strlen(kept) + strlen(" kept") < sizeof(msg))
        n += (size_t)snprintf(msg + n, sizeof(msg) - n, ", %s kept", kept);
    if (n + strlen(see) < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - n, "%s", see);
out:
    adm_response_warn(a, "%s", msg);
}

/* ---- withdrawals (DESIGN.md 3.13) ---- */

/* What one write does to the held requests of its object, gathered over the
 * records it carries (a HostedCluster's releases and its fields that roll
 * every NodePool, a NodePool's), for the audit record and the answer. */
typedef struct outcome {
    char withdrawn[DECIDE_AUDIT_VALLEN]; /* what the write withdraws, in words */
    bool held;                           /* the write asks for a change held and not
                                            recorded before (a new request: who and
                                            when are recorded); a re-apply of what
                                            is recorded is held again, as it was */
    bool left;                           /* a request is recorded after the write */
} outcome_t;

/* Appends words to the outcome's withdrawn list. */
static void note_withdrawn(outcome_t *o, const char *words)
{
    size_t n = strlen(o->withdrawn);
    if (words[0] && n < sizeof(o->withdrawn))
        snprintf(o->withdrawn + n, sizeof(o->withdrawn) - n, "%s%s", n ? ", " : "", words);
}

/* The warning of a withdrawal, at most ADM_WARNING_MAX bytes: "request for
 * release 4.17.1 withdrawn: the write sets the running 4.17.0" (n: how
 * many requests words names; running: the running value in words when it
 * is one; dropped: the write removed the record itself). words is elided
 * in the middle when long. */
static void warn_withdrawn(adm_response_t *a, const char *words, size_t n, const char *running,
                           bool dropped)
{
    char tail[160], w[ADM_WARNING_MAX + 1];
    size_t room;

    if (dropped)
        snprintf(tail, sizeof(tail), ": the write removes %s record", n > 1 ? "their" : "its");
    else if (n > 1)
        snprintf(tail, sizeof(tail), ": the write sets their running values");
    else
        snprintf(tail, sizeof(tail), ": the write sets the running %.100s", running);
    room = ADM_WARNING_MAX - strlen("requests for  withdrawn") - strlen(tail);
    elide(w, room, words);
    adm_response_warn(a, "request%s for %s withdrawn%s", n > 1 ? "s" : "", w, tail);
}

/* Until when a request held by verdict v waits, as "until <time>", "until
 * a window opens (none is scheduled)", or, in a window (a request the
 * health gate, the control plane or the time left keeps), where to read why. */
#define HELD_SEE_CONDITION "(see its ChangesPending condition)"
static void held_until(const verdict_t *v, char *buf, size_t len)
{
    if (v->restricted && v->until[0])
        snprintf(buf, len, "until %s", v->until);
    else if (v->restricted)
        snprintf(buf, len, "until a window opens (none is scheduled)");
    else
        snprintf(buf, len, HELD_SEE_CONDITION);
}

/* The warning to a write that leaves a held request as it was (a label, a
 * merge or JSON patch of the running value: nothing the API server can
 * see says its author meant the running value): what is still held, until
 * when (until: "until <time>" or where to read it), and how to withdraw
 * it, at most ADM_WARNING_MAX bytes. The command comes whole or not at
 * all; what is held is elided first. */
static void warn_still_held(adm_response_t *a, const char *words, const char *until,
                            const char *kind, const adm_request_t *q, const char *key)
{
    char cmd[ADM_WARNING_MAX + 1], w[72], head[ADM_WARNING_MAX + 1];
    static const char why[] = " (this write withdraws nothing)";
    int c;

    c = snprintf(cmd, sizeof(cmd), "; to withdraw it: kubectl annotate -n %s %s %s %s-", q->ns,
                 kind, q->name, key);
    if (c < 0 || (size_t)c >= sizeof(cmd) || (size_t)c + 40 > ADM_WARNING_MAX)
        snprintf(cmd, sizeof(cmd), "; to withdraw it, remove annotation %s", key);
    elide(w, sizeof(w) - 1, words);
    snprintf(head, sizeof(head), "request for %s is still held %.100s", w, until);
    if (strlen(head) + strlen(cmd) > ADM_WARNING_MAX)
        snprintf(head, sizeof(head), "request for %s is still held", w);
    adm_response_warn(a, "%s%s%s", head,
                      strlen(head) + strlen(why) + strlen(cmd) <= ADM_WARNING_MAX ? why : "", cmd);
}

/* One release field (spec.<field>.image) of a HostedCluster and its record
 * in annotation key: kept at its running value while restricted, the
 * request recorded; a record the write sets by intent to the running
 * value (withdraw.h), or removes itself, withdrawn; one that a write in a
 * window replaces by setting the field itself dropped (the newer request
 * wins); one HyperShift's write drops put back. until: the next window. */
static int release_request(adm_response_t *a, const adm_request_t *q, const verdict_t *v,
                           const decide_intent_t *in, const char *field, const char *key,
                           outcome_t *o)
{
    char path[128], jpath[128], words[320], running_words[320], what[64];
    const char *want, *running, *rec = annotation(q->object, key), *was = annotation(q->old_object, key);
    int rc;

    snprintf(jpath, sizeof(jpath), "spec.%s.image", field);
    want = hcp_json_str(q->object, jpath);
    running = hcp_json_str(q->old_object, jpath);
    snprintf(jpath, sizeof(jpath), "%s.image", field);
    if (same_str(want, running)) {
        json_t *jrec = json_string(rec ? rec : was ? was : "");
        json_t *jrun = running ? json_string(running) : NULL;
        decide_request_words(jpath, jrec, words, sizeof(words));
        decide_running_words(jpath, jrun, running_words, sizeof(running_words));
        json_decref(jrec);
        json_decref(jrun);
        if (rec && decide_intent_field(in, q->old_object, q->object, jpath) != DECIDE_SIGNAL_NONE) {
            note_withdrawn(o, words);
            warn_withdrawn(a, words, 1, running_words, false);
            return remove_annotation(a, key);
        }
        if (was && !rec) {
            if (in->exempt) { /* carried along by HyperShift: kept */
                o->left = true;
                return patch_annotation(a, q->object, key, was);
            }
            note_withdrawn(o, words);
            warn_withdrawn(a, words, 1, running_words, true);
            return 0;
        }
        if (rec) {
            o->left = true;
            if (same_str(rec, was) && !in->exempt) {
                char until[112];
                held_until(v, until, sizeof(until));
                warn_still_held(a, words, until, "hostedcluster", q, key);
            }
        }
        return 0;
    }
    if (!v->restricted && !v->check_held) {
        /* In a window the write goes through: a record it carries is
         * replaced by the field it sets (the newer request wins). */
        return rec ? remove_annotation(a, key) : 0;
    }
    snprintf(path, sizeof(path), "/spec/%s/image", field);
    snprintf(jpath, sizeof(jpath), "spec.%s", field);
    if (running == NULL) {
        /* Nothing runs there: the new field goes, with its parent when the
         * running object had none (the CRD wants an image in it). */
        if (!hcp_json_path(q->old_object, jpath))
            snprintf(path, sizeof(path), "/spec/%s", field);
        rc = adm_patch_op(a, "remove", path, NULL);
    } else if (json_is_object(hcp_json_path(q->object, jpath))) {
        rc = adm_patch_op(a, "add", path, json_string(running));
    } else if (json_is_object(hcp_json_path(q->object, "spec"))) {
        snprintf(path, sizeof(path), "/spec/%s", field);
        rc = adm_patch_op(a, "add", path, json_pack("{s:s}", "image", running));
    } else {
        rc = HCP_EINVAL; /* an update without a spec: the API server refuses it anyway */
    }
    if (rc == 0 && want)
        rc = patch_annotation(a, q->object, key, want);
    if (rc == 0) {
        o->held = o->held || !same_str(want, was);
        o->left = true;
        snprintf(what, sizeof(what), "spec.%s.image", field);
        warn_held(a, what, want ? want : "(none)", running ? running : "(none)",
                  v->restricted ? v->until : "the pre-start checks allow it", DECIDE_HC,
                  q->name);
    }
    return rc;
}

/* ---- audit (DESIGN.md 3.11) ---- */
/* Records who made an override, a held request or a withdrawal
 * (decide_audit_marks()) in the write being admitted. */
static int audit_marks(ctl_controller_t *c, adm_response_t *a, const adm_request_t *q,
                       const outcome_t *o)
{
    decide_audit_mark_t m[DECIDE_AUDIT_MAX];
    decide_audit_write_t w = {o->held, o->withdrawn[0] ? o->withdrawn : NULL, o->left};
    size_t n = decide_audit_marks(q->old_object, q->object, q->user, &w, ctl_now_exact(c), m);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = m[i].remove ? remove_annotation(a, m[i].key)
                         : patch_annotation(a, q->object, m[i].key, m[i].value);
    return rc;
}

/* The override let the release this write asks for past the release waves
 * (decide/wave.h) and it goes now: the record of it, in this write. */
static int skipped_mark(adm_response_t *a, const adm_request_t *q, const verdict_t *v,
                        const outcome_t *o)
{
    if (!v->skipped[0] || o->held || !v->permitted)
        return 0;
    return patch_annotation(a, q->object, DECIDE_OVERRIDE_SKIPPED_ANNOTATION, v->skipped);
}
/* ---- end audit ---- */

/* A write that changes one of the fields that roll every NodePool. */
static bool fields_requested(const adm_request_t *q)
{
    char jpath[128];

    for (const char *const *f = decide_hc_held_fields; *f; f++) {
        snprintf(jpath, sizeof(jpath), "spec.%s", *f);
        if (!hcp_json_equal_stored(hcp_json_path(q->old_object, jpath),
                                   hcp_json_path(q->object, jpath)))
            return true;
    }
    return false;
}

/* A record of held spec fields (decide_spec_hold() over fields, in
 * annotation key) applied to the answer: the hold's operations, its
 * withdrawals told (warning, outcome) and the requests it leaves as they
 * were told as still held until until (a write by the object's kind, e.g.
 * "nodepool"). *h is filled (release it with decide_np_hold_free()). */
static int spec_record(adm_response_t *a, const adm_request_t *q, const decide_intent_t *in,
                       bool restricted, const char *const *fields, const char *key,
                       const char *kind, const char *until, outcome_t *o, decide_np_hold_t *h)
{
    decide_hold_in_t hi = {restricted, decide_intent_mask(in, q->old_object, q->object, fields),
                           in->exempt};
    int rc = decide_spec_hold(q->old_object, q->object, &hi, fields, key, h);

    if (rc || (rc = add_ops(a, h->ops)) != 0)
        return rc;
    o->held = o->held || h->asked;
    o->left = o->left || h->left;
    if (h->withdrawn) {
        char running[320] = "value", jpath[160];
        size_t n = (size_t)__builtin_popcountll(h->withdrawn);
        note_withdrawn(o, h->withdrawn_words);
        if (n == 1) {
            size_t i = (size_t)__builtin_ctzll(h->withdrawn);
            snprintf(jpath, sizeof(jpath), "spec.%s", fields[i]);
            decide_running_words(fields[i], hcp_json_path(q->old_object, jpath), running,
                                 sizeof(running));
        }
        warn_withdrawn(a, h->withdrawn_words, n, running, h->dropped == h->withdrawn);
    }
    if (h->kept_words[0] && !in->exempt)
        warn_still_held(a, h->kept_words, until, kind, q, key);
    return 0;
}

/* The pre-start checks' view of the plan's held change (a HostedCluster's
 * fields or release): whether the checks are asked about one, its key and
 * whose change it is. */
typedef struct asked {
    bool opted_in; /* the plan's opted_in */
    bool any;
    uint64_t key;
    unsigned system;
} asked_t;

/* When HostedCluster ns/name and all its opted-in NodePools may change
 * (hcfields.h), into *out, and what the checks are asked about (*asked);
 * *decided false when the plan decided nothing. */
static int common_verdict(ctl_controller_t *c, const char *ns, const char *name,
                          decide_common_t *out, bool *decided, asked_t *asked, char *err,
                          size_t errlen)
{
    decide_view_t v;
    decide_plan_t p;
    int rc;

    ctl_plan_view(c, &v);
    v.projection = NULL;
    v.common_window = true;
    rc = decide_plan(&v, DECIDE_HC, ns, name, ctl_now_exact(c), &p, err, errlen);
    *decided = rc == 0 && p.present && p.decided;
    *out = p.common;
    sched_time_t window;
    asked->opted_in = *decided && p.opted_in;
    asked->any = asked->opted_in && ctl_check_runner(c) &&
                 decide_plan_check_key(&p, &window, &asked->key, &asked->system);
    /* The gate or the HostedCluster's own timeline holds it too. */
    if (*decided && out->permitted && !out->override && p.d.restricted)
        out->permitted = false;
    decide_plan_free(&p);
    return rc;
}

/* The warning of a hold of the fields that roll every NodePool, at most
 * ADM_WARNING_MAX bytes: what is held and why first, then where the request
 * is recorded when it fits. */
static void warn_fields_held(adm_response_t *a, const char *held, const decide_common_t *cw,
                             bool check_held)
{
    char msg[ADM_WARNING_MAX + 1], part[160];
    size_t n;

    n = (size_t)snprintf(msg, sizeof(msg), "%s (rolls every NodePool): %s", held,
                         check_held ? "held until the pre-start checks allow it" : cw->message);
    if (n >= sizeof(msg)) /* a long list of pools: the condition has it whole */
        n = (size_t)snprintf(msg, sizeof(msg),
                             "%s (rolls every NodePool): held until the HostedCluster and all its "
                             "NodePools may change; see its ChangesPending condition",
                             held);
    if (n >= sizeof(msg))
        goto out; /* cut by the writer */
    snprintf(part, sizeof(part), "; recorded in annotation %s",
             DECIDE_REQUESTED_HC_SPEC_ANNOTATION);
    if (n + strlen(part) < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - n, "%s", part);
out:
    adm_response_warn(a, "%s", msg);
}

/* DESIGN.md 3.15: in their common window, the fields that roll every
 * NodePool wait for the pre-start checks as a release does
 * (release_waits_for_checks()), unless the checks have allowed the held
 * change the plan asks them about: the controller's own write that lets it
 * through. */
static bool fields_wait_for_checks(ctl_controller_t *c, const adm_request_t *q,
                                   const asked_t *asked)
{
    const check_runner_t *r = ctl_check_runner(c);
    const char *uid = hcp_json_str(q->old_object, "metadata.uid");

    if (!r || !ctl_leading(c) || !asked->opted_in)
        return false;
    check_verdict_t cv =
        check_runner_verdict(r, uid ? uid : "", asked->any ? asked->key : 0,
                             asked->any ? asked->system : CHECK_CONTROL_PLANE, NULL, 0);
    return cv != CHECK_NONE && !(asked->any && cv == CHECK_PASS);
}

/* The hold of the fields that roll every NodePool (decide_hc_fields_hold(),
 * pure) and their record applied to the answer. */
static int hold_fields(ctl_controller_t *c, const adm_request_t *q, adm_response_t *a,
                       const decide_intent_t *in, outcome_t *o, char *err, size_t errlen)
{
    decide_common_t cw;
    decide_np_hold_t h;
    asked_t asked = {0};
    char until[64];
    bool decided, check_held;
    int rc;

    if (!fields_requested(q) &&
        annotation(q->object, DECIDE_REQUESTED_HC_SPEC_ANNOTATION) == NULL &&
        annotation(q->old_object, DECIDE_REQUESTED_HC_SPEC_ANNOTATION) == NULL)
        return 0;
    if ((rc = common_verdict(c, q->ns, q->name, &cw, &decided, &asked, err, errlen)) != 0)
        return rc;
    if (!decided)
        return 0; /* undecided: nothing to say */
    check_held = cw.permitted && fields_wait_for_checks(c, q, &asked);
    if (cw.has_window && !cw.permitted) {
        memcpy(until, "until ", 6);
        decide_format_time(cw.start, until + 6, sizeof(until) - 6);
    } else {
        snprintf(until, sizeof(until), "%s",
                 cw.permitted ? HELD_SEE_CONDITION : "until a common window (none is scheduled)");
    }
    rc = spec_record(a, q, in, !cw.permitted || check_held, decide_hc_held_fields,
                     DECIDE_REQUESTED_HC_SPEC_ANNOTATION, "hostedcluster", until, o, &h);
    if (rc == 0 && h.held[0])
        warn_fields_held(a, h.held, &cw, check_held);
    decide_np_hold_free(&h);
    if (rc)
        return hcp_errf(err, errlen, rc, "building the hold of the HostedCluster's fields");
    return 0;
}

/* DESIGN.md 3.15: in an open window, a new release of an opted-in
 * HostedCluster waits for the pre-start checks like a release held for the
 * window (held, asked at once, let through at the checks' yes), unless they
 * have allowed this very release for this window: the controller's own
 * write that lets it through. Only the leader knows the checks' answers: a
 * standby's webhook lets such a write pass. */
static bool release_waits_for_checks(ctl_controller_t *c, const adm_request_t *q,
                                     const verdict_t *v)
{
    const check_runner_t *r = ctl_check_runner(c);
    const char *want = hcp_json_str(q->object, "spec.release.image");
    const char *uid = hcp_json_str(q->old_object, "metadata.uid");
    char words[DECIDE_MSGLEN];

    if (!r || !ctl_leading(c) || v->restricted || !v->permitted || !v->opted_in || !want ||
        same_str(want, hcp_json_str(q->old_object, "spec.release.image")))
        return false;
    snprintf(words, sizeof(words), "release %s", want);
    check_verdict_t cv = check_runner_verdict(r, uid ? uid : "",
                                              check_change_key(words, v->current),
                                              CHECK_CONTROL_PLANE, NULL, 0);
    return cv == CHECK_WAIT || cv == CHECK_FAIL;
}

/* The same for a NodePool: in an open window, a change of the fields held
 * at admission (decide_np_held_fields) waits for the pre-start checks of
 * the worker nodes, held like a change outside a window and asked at once,
 * unless the checks have allowed the pool's held change in this window:
 * the controller's own write that lets it through. As for a HostedCluster,
 * a standby lets such a write pass. A write that changes none of those
 * fields holds nothing (decide_spec_hold()). */
static bool pool_waits_for_checks(ctl_controller_t *c, const adm_request_t *q,
                                  const verdict_t *v)
{
    const check_runner_t *r = ctl_check_runner(c);
    const char *uid = hcp_json_str(q->old_object, "metadata.uid");

    if (!r || !ctl_leading(c) || v->restricted || !v->permitted || !v->opted_in)
        return false;
    check_verdict_t cv = check_runner_verdict(r, uid ? uid : "", v->np_asked ? v->np_key : 0,
                                              CHECK_WORKER_NODES, NULL, 0);
    if (cv == CHECK_NONE)
        return false;
    return !(v->np_asked && cv == CHECK_PASS);
}

/* ---- NodePools kept within reach (guard rails' maxNodePoolSkew, skew.h) ---- */
typedef struct hc_pools {
    decide_skew_pool_t *p;
    size_t n, cap;
    bool oom;
} hc_pools_t;

static void collect_pool(const char *name, const decide_np_t *np, void *arg)
{
    hc_pools_t *x = arg;
    if (x->oom)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 16;
        decide_skew_pool_t *p = realloc(x->p, cap * sizeof(*p));
        if (!p) {
            x->oom = true;
            return;
        }
        x->p = p;
        x->cap = cap;
    }
    x->p[x->n++] = (decide_skew_pool_t){name, np};
}

/* Refuses a write that asks for a control-plane release (a new one: not
 * the running one, nor the request already recorded, which the controller
 * applies at the window) more minor versions ahead of one of the
 * HostedCluster's NodePools than maxNodePoolSkew allows; true when it did.
 * A release whose tag names no version is let be, with a warning when a
 * pool's version is known (it could have been judged). */
static bool skew_refused(ctl_controller_t *c, const adm_request_t *q, adm_response_t *a,
                         const char *field, const char *key, int *rc, char *err, size_t errlen)
{
    const guard_config_t *exempt;
    const char *groups[ADM_MAX_GROUPS];
    char jpath[64], msg[2048];
    int max = ctl_max_nodepool_skew(c, &exempt);
    snprintf(jpath, sizeof(jpath), "spec.%s.image", field);
    const char *want = hcp_json_str(q->object, jpath), *running = hcp_json_str(q->old_object, jpath);
    const char *was = annotation(q->old_object, key);
    if (!want || same_str(want, running) || same_str(want, was))
        return false;
    for (size_t i = 0; i < q->ngroups; i++)
        groups[i] = q->groups[i];
    if (exempt && guard_exempt(exempt, q->ns, q->user, groups, q->ngroups))
        return false;
    /* the control plane runs the release the write replaces: for
     * controlPlaneRelease unset before, spec.release.image */
    if (!running && strcmp(field, "controlPlaneRelease") == 0)
        running = hcp_json_str(q->old_object, "spec.release.image");
    hc_pools_t x = {0};
    decide_view_t view;
    ctl_plan_view(c, &view);
    view.nodepools(view.ud, q->ns, q->name, collect_pool, &x);
    if (x.oom) {
        free(x.p);
        *rc = hcp_errf(err, errlen, HCP_ENOMEM, "listing the NodePools of the HostedCluster");
        return true;
    }
    decide_skew_t sk;
    decide_skew_check(jpath, want, running, x.p, x.n, max, &sk, msg, sizeof(msg));
    size_t known = 0;
    for (size_t i = 0; i < x.n; i++)
        known += decide_np_running_version(x.p[i].np) != NULL;
    free(x.p);
    if (!sk.judged && known > 0) {
        adm_response_warn(a, "%s: the release's tag names no version: its distance to the "
                             "NodePools (maxNodePoolSkew %d) was not checked", jpath, max);
        return false;
    }
    if (sk.over == 0)
        return false;
    log_kv(LOG_INFO, "control-plane release refused: NodePools too far behind", "namespace", q->ns,
           "name", q->name, "release", sk.target, NULL);
    adm_response_deny(a, 422, "%s", msg);
    return true;
}

static int hold_hostedcluster(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                              size_t errlen)
{
    ctl_controller_t *c = ud;
    decide_intent_t in;
    outcome_t o = {0};
    verdict_t v;
    int rc = 0;

    if (q->op != ADM_UPDATE || q->subresource[0])
        return 0;
    if (skew_refused(c, q, a, "release", DECIDE_REQUESTED_RELEASE_ANNOTATION, &rc, err, errlen) ||
        skew_refused(c, q, a, "controlPlaneRelease", DECIDE_REQUESTED_CP_RELEASE_ANNOTATION, &rc,
                     err, errlen))
        return rc;
    const char *asked[2] = {changed_image(q, "spec.release.image"),
                            changed_image(q, "spec.controlPlaneRelease.image")};
    if ((rc = plan_verdict_asked(c, DECIDE_HC, q->ns, q->name, asked, &v, err, errlen)) != 0)
        return rc;
    v.check_held = release_waits_for_checks(c, q, &v);
    decide_intent_read(q->old_object, q->object, q->options, q->user, ctl_hypershift_users(c),
                       &in);
    if ((rc = hold_fields(c, q, a, &in, &o, err, errlen)) != 0)
        goto out;
    if ((rc = release_request(a, q, &v, &in, "release", DECIDE_REQUESTED_RELEASE_ANNOTATION,
                              &o)) != 0 ||
        (rc = release_request(a, q, &v, &in, "controlPlaneRelease",
                              DECIDE_REQUESTED_CP_RELEASE_ANNOTATION, &o)) != 0) {
        rc = hcp_errf(err, errlen, rc, "building the hold of the release");
        goto out;
    }
    /* DESIGN.md 3.11: who asked, when and why, or who withdrew what (after
     * the holds' operations: they may add the annotations map). */
    if ((rc = audit_marks(c, a, q, &o)) != 0 || (rc = skipped_mark(a, q, &v, &o)) != 0)
        rc = hcp_errf(err, errlen, rc, "recording who made the change");
out:
    decide_intent_free(&in);
    return rc;
}

/* The NodePool of a MachineDeployment or MachineSet (link annotation
 * "ns/name"), planned; false when the object belongs to no pool the cache
 * knows, or the pool's plan does not name this very object. */
static bool pool_verdict(ctl_controller_t *c, const adm_request_t *q, verdict_t *v, int *rc,
                         char *err, size_t errlen)
{
    const char *link = annotation(q->old_object, DECIDE_NODEPOOL_ANNOTATION);
    char ns[254], name[254];
    const char *slash;

    *rc = 0;
    if (link == NULL || (slash = strchr(link, '/')) == NULL || slash == link ||
        (size_t)(slash - link) >= sizeof(ns) || strlen(slash + 1) >= sizeof(name))
        return false;
    snprintf(ns, sizeof(ns), "%.*s", (int)(slash - link), link);
    snprintf(name, sizeof(name), "%s", slash + 1);
    if ((*rc = plan_verdict(c, DECIDE_NP, ns, name, v, err, errlen)) != 0)
        return false;
    bool mine = strcmp(v->capi_ns, q->ns) == 0 && strcmp(v->capi_name, q->name) == 0;
    v->mine = mine;
    v->permitted = v->permitted && mine;
    return v->restricted && mine;
}

/* Keeps our pause (annotation and marker) when the write deletes it and the
 * plan keeps it. */
static int keep_pause(adm_response_t *a, const adm_request_t *q, const verdict_t *v)
{
    if (!v->keep_pause)
        return 0;
    const char *paused = annotation(q->old_object, DECIDE_PAUSED_ANNOTATION);
    const char *marker = annotation(q->old_object, DECIDE_MARKER_ANNOTATION);
    int rc = 0;

    if (paused == NULL || !same_str(marker, DECIDE_MARKER_VALUE))
        return 0;
    if (annotation(q->object, DECIDE_PAUSED_ANNOTATION) == NULL) {
        rc = patch_annotation(a, q->object, DECIDE_PAUSED_ANNOTATION, paused);
        if (rc == 0)
            adm_response_warn(a, "annotation %s is kept: changes are restricted",
                              DECIDE_PAUSED_ANNOTATION);
    }
    if (rc == 0 && annotation(q->object, DECIDE_MARKER_ANNOTATION) == NULL)
        rc = patch_annotation(a, q->object, DECIDE_MARKER_ANNOTATION, marker);
    return rc;
}

/* The common part of the two pool holds: true when q updates the machines
 * of a restricted NodePool (v filled) and our pause, if the write deleted
 * it, is kept in a; false with *rc 0 when there is nothing to hold, or a
 * negative *rc with err. */
static bool pool_held(ctl_controller_t *c, const adm_request_t *q, adm_response_t *a,
                      verdict_t *v, int *rc, char *err, size_t errlen)
{
    *rc = 0;
    memset(v, 0, sizeof(*v));
    if (q->op != ADM_UPDATE || q->subresource[0] || !pool_verdict(c, q, v, rc, err, errlen))
        return false;
    if ((*rc = keep_pause(a, q, v)) != 0) {
        *rc = hcp_errf(err, errlen, *rc, "keeping the pause");
        return false;
    }
    return true;
}

/* Keeps spec.template of a MachineDeployment or MachineSet as it was;
 * *held tells whether the write asked for another one. */
static int hold_template(adm_response_t *a, const adm_request_t *q, const verdict_t *v,
                         bool *held, char *err, size_t errlen)
{
    const json_t *old_tmpl = hcp_json_path(q->old_object, "spec.template");
    const json_t *new_tmpl = hcp_json_path(q->object, "spec.template");
    int rc;

    *held = false;
    /* Only a template held the old way stays held (until the next window). */
    if (!annotation(q->old_object, DECIDE_HELD_TEMPLATE_ANNOTATION))
        return 0;
    if (!old_tmpl || hcp_json_equal_stored(old_tmpl, new_tmpl))
        return 0;
    rc = adm_patch_op(a, new_tmpl ? "replace" : "add", "/spec/template", json_deep_copy(old_tmpl));
    if (rc)
        return hcp_errf(err, errlen, rc, "holding spec.template");
    *held = true;
    warn_held(a, "spec.template", NULL, NULL, v->until, DECIDE_MD, NULL);
    return 0;
}

/* Records what a held write asked for in DECIDE_HELD_TEMPLATE_ANNOTATION:
 * the template's new spec.version, else the new target config version
 * (InPlace), else the new user-data secret. A function of the write alone,
 * so the same template written again stores nothing new (no write loop
 * with HyperShift). */
static int record_held(adm_response_t *a, const adm_request_t *q, const char *target)
{
    const char *ver = hcp_json_str(q->object, "spec.template.spec.version");
    const char *was = hcp_json_str(q->old_object, "spec.template.spec.version");
    const char *ud = hcp_json_str(q->object, "spec.template.spec.bootstrap.dataSecretName");
    char what[DECIDE_HELDLEN];

    if (ver && !same_str(ver, was))
        snprintf(what, sizeof(what), "version %s", ver);
    else if (target || ud)
        snprintf(what, sizeof(what), "configuration %s", target ? target : ud);
    else
        snprintf(what, sizeof(what), "a new template");
    if (same_str(annotation(q->object, DECIDE_HELD_TEMPLATE_ANNOTATION), what))
        return 0;
    return patch_annotation(a, q->object, DECIDE_HELD_TEMPLATE_ANNOTATION, what);
}

/* Drops the held-template record from a write that is let through in a
 * window: the template it carries now reaches Cluster API. */
static int drop_held(adm_response_t *a, const adm_request_t *q, char *err, size_t errlen)
{
    int rc;

    if (q->op != ADM_UPDATE || q->subresource[0] ||
        annotation(q->object, DECIDE_HELD_TEMPLATE_ANNOTATION) == NULL)
        return 0;
    if ((rc = remove_annotation(a, DECIDE_HELD_TEMPLATE_ANNOTATION)) != 0)
        return hcp_errf(err, errlen, rc, "dropping annotation %s",
                        DECIDE_HELD_TEMPLATE_ANNOTATION);
    return 0;
}

/* ---- drift: a configuration HyperShift made by itself (decide/drift.h) ---- */

/* A write that changes the template of a known pool's MachineDeployment
 * notes the requested inputs it is made from (DECIDE_TEMPLATE_INPUTS_ANNOTATION). */
static int note_inputs(adm_response_t *a, const adm_request_t *q, const verdict_t *v)
{
    char fp[17];

    if (!v->mine || !v->inputs || q->op != ADM_UPDATE || q->subresource[0] ||
        !decide_template_changed(q->old_object, q->object))
        return 0;
    decide_inputs_format(v->inputs, fp);
    if (same_str(annotation(q->object, DECIDE_TEMPLATE_INPUTS_ANNOTATION), fp))
        return 0;
    return patch_annotation(a, q->object, DECIDE_TEMPLATE_INPUTS_ANNOTATION, fp);
}

/* Sets the rollout strategy of the MachineDeployment being admitted to
 * OnDelete, in either served version (decide_md_strategy_ops()). */
static int set_on_delete(adm_response_t *a, const adm_request_t *q)
{
    json_t *ops = decide_md_strategy_ops(q->object, DECIDE_ON_DELETE);
    int rc = ops ? add_ops(a, ops) : HCP_ENOMEM;
    json_decref(ops);
    return rc;
}

/* A held drift kept while restricted: the strategy HyperShift writes on
 * every pass answered with OnDelete, what it asks for (and a newer
 * template's change) recorded, the record put back when a write drops it.
 * HyperShift's later writes are then no-ops. Anyone else who writes a
 * strategy (kubectl patch, an apply) is told that it is kept, and how to
 * let the drift through now. */
static int keep_drift(ctl_controller_t *c, adm_response_t *a, const adm_request_t *q,
                      const verdict_t *v, const char *rec)
{
    const char *type = decide_md_strategy(q->object);
    char input[DECIDE_HELDLEN];
    decide_drift_t d;
    char *text = NULL;
    int rc = decide_drift_parse(rec, &d);

    if (rc == HCP_ENOMEM)
        return rc;
    if (!same_str(type, DECIDE_ON_DELETE) && (rc = set_on_delete(a, q)) != 0)
        goto out;
    if (type && !same_str(type, DECIDE_ON_DELETE) &&
        !same_str(type, decide_md_strategy(q->old_object)) &&
        !decide_user_exempt(q->user, ctl_hypershift_users(c))) {
        char until[112];
        held_until(v, until, sizeof(until));
        /* Short enough for a warning (ADM_WARNING_MAX): what changed is in
         * the record and the NodePool's conditions. */
        adm_response_warn(a,
                          "strategy %s: OnDelete is kept %s while HyperShift's own configuration "
                          "update is held, then %s is written back; a PermissiveUntil override "
                          "on the NodePool lets it through now",
                          type, until, type);
    }
    bool newer = decide_drift_is(q->old_object, q->object, v->inputs, input, sizeof(input));
    const char *wanted = type && !same_str(type, DECIDE_ON_DELETE) ? type : d.strategy;
    if ((text = decide_drift_record(d.since, wanted, newer ? input : d.input,
                                    d.inputs ? d.inputs : v->inputs)) == NULL) {
        rc = HCP_ENOMEM;
        goto out;
    }
    if (!same_str(annotation(q->object, DECIDE_HELD_DRIFT_ANNOTATION), text))
        rc = patch_annotation(a, q->object, DECIDE_HELD_DRIFT_ANNOTATION, text);
out:
    free(text);
    decide_drift_free(&d);
    return rc;
}

/* A new template no request carries, on a restricted pool: admitted with
 * the strategy OnDelete and the record, in the same write. */
static int hold_drift(ctl_controller_t *c, adm_response_t *a, const adm_request_t *q,
                      const verdict_t *v, char *err, size_t errlen)
{
    const char *rec = annotation(q->old_object, DECIDE_HELD_DRIFT_ANNOTATION);
    char input[DECIDE_HELDLEN], since[32], until[80];
    char *text = NULL;
    int rc;

    if (rec && decide_template_changed(q->old_object, q->object) &&
        !decide_drift_is(q->old_object, q->object, v->inputs, input, sizeof(input))) {
        /* A requested template over a held drift (a release, or fields a
         * request changed): it goes as any request does, the drift with it. */
        if ((annotation(q->object, DECIDE_HELD_DRIFT_ANNOTATION) &&
             (rc = remove_annotation(a, DECIDE_HELD_DRIFT_ANNOTATION)) != 0) ||
            (rc = note_inputs(a, q, v)) != 0)
            return hcp_errf(err, errlen, rc, "letting the requested template through");
        return 0;
    }
    if (rec) {
        if ((rc = keep_drift(c, a, q, v, rec)) != 0)
            return hcp_errf(err, errlen, rc, "keeping the held drift");
        return 0;
    }
    if (!decide_drift_is(q->old_object, q->object, v->inputs, input, sizeof(input))) {
        /* A requested template: the inputs it is made from noted. */
        if ((rc = note_inputs(a, q, v)) != 0)
            return hcp_errf(err, errlen, rc, "noting the template's inputs");
        return 0;
    }
    rc = set_on_delete(a, q);
    decide_format_time(ctl_now_exact(c), since, sizeof(since));
    if (rc == 0 && (text = decide_drift_record(since, decide_md_strategy(q->object), input,
                                               v->inputs)) == NULL)
        rc = HCP_ENOMEM;
    if (rc == 0)
        rc = patch_annotation(a, q->object, DECIDE_HELD_DRIFT_ANNOTATION, text);
    free(text);
    if (rc)
        return hcp_errf(err, errlen, rc, "holding the new configuration");
    held_until(v, until, sizeof(until));
    adm_response_warn(a,
                      "spec.template: a configuration HyperShift made by itself (%s) is admitted "
                      "with rollout strategy OnDelete %s: no running machine is replaced before "
                      "then; machines added meanwhile use it",
                      input, until);
    return 0;
}

/* A held drift in a window: a write that sets a strategy of its own
 * (HyperShift's) lets it through and drops the record; any other write
 * leaves it to the controller's release. */
static int drop_drift(adm_response_t *a, const adm_request_t *q, char *err, size_t errlen)
{
    const char *type = decide_md_strategy(q->object);
    int rc;

    if (q->op != ADM_UPDATE || q->subresource[0] ||
        annotation(q->object, DECIDE_HELD_DRIFT_ANNOTATION) == NULL || !type ||
        same_str(type, DECIDE_ON_DELETE))
        return 0;
    if ((rc = remove_annotation(a, DECIDE_HELD_DRIFT_ANNOTATION)) != 0)
        return hcp_errf(err, errlen, rc, "dropping annotation %s", DECIDE_HELD_DRIFT_ANNOTATION);
    return 0;
}

static int hold_machinedeployment(const adm_request_t *q, adm_response_t *a, void *ud,
                                  char *err, size_t errlen)
{
    verdict_t v;
    bool held;
    int rc;

    if (!pool_held(ud, q, a, &v, &rc, err, errlen)) {
        if (rc)
            return rc;
        if (v.permitted && ((rc = drop_held(a, q, err, errlen)) != 0 ||
                            (rc = drop_drift(a, q, err, errlen)) != 0))
            return rc;
        if ((rc = note_inputs(a, q, &v)) != 0)
            return hcp_errf(err, errlen, rc, "noting the template's inputs");
        return 0;
    }
    if ((rc = hold_template(a, q, &v, &held, err, errlen)) != 0)
        return rc;
    if (!held)
        return hold_drift(ud, a, q, &v, err, errlen);
    if ((rc = record_held(a, q, NULL)) != 0)
        return hcp_errf(err, errlen, rc, "recording the held template");
    return 0;
}

static int hold_machineset(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                           size_t errlen)
{
    const char *was, *want;
    verdict_t v;
    bool held;
    int rc;

    if (!pool_held(ud, q, a, &v, &rc, err, errlen))
        return rc ? rc : v.permitted ? drop_held(a, q, err, errlen) : 0;
    /* HyperShift writes the target only in the write that changes the
     * template's user data (nodepool/capi.go, reconcileMachineSet): a
     * template let through would leave nothing for its reconcile at the
     * window to write, and the in-place update would never start. Both are
     * held, and both go through in the same write when a window opens. */
    if ((rc = hold_template(a, q, &v, &held, err, errlen)) != 0)
        return rc;
    was = annotation(q->old_object, TARGET_CONFIG_ANNOTATION);
    want = annotation(q->object, TARGET_CONFIG_ANNOTATION);
    if (!annotation(q->old_object, DECIDE_HELD_TEMPLATE_ANNOTATION))
        return 0; /* nothing held the old way: the target passes */
    if ((held || !same_str(was, want)) &&
        (rc = record_held(a, q, same_str(was, want) ? NULL : want)) != 0)
        return hcp_errf(err, errlen, rc, "recording the held target");
    if (same_str(was, want))
        return 0;
    rc = was ? patch_annotation(a, q->object, TARGET_CONFIG_ANNOTATION, was)
             : remove_annotation(a, TARGET_CONFIG_ANNOTATION);
    if (rc)
        return hcp_errf(err, errlen, rc, "holding annotation %s", TARGET_CONFIG_ANNOTATION);
    warn_held(a, "annotation " TARGET_CONFIG_ANNOTATION, want ? want : "(none)",
              was ? was : "(none)", v.until, DECIDE_MD, NULL);
    return 0;
}

/* ---- NodePools ------------------------------------------------------------ */

/* The warning of a NodePool hold, at most ADM_WARNING_MAX bytes, as
 * warn_held() does for the others: what is held and until when first (a
 * window, the control plane, or both), then why the control plane holds it,
 * then where the request is recorded; parts that do not fit are left out,
 * last first. */
static void warn_np_held(adm_response_t *a, const char *held, const verdict_t *v)
{
    char msg[ADM_WARNING_MAX + 1], part[DECIDE_MSGLEN];
    size_t n;

    if (!v->restricted && !v->cp_held)
        n = (size_t)snprintf(msg, sizeof(msg), "%s: held until the pre-start checks allow it",
                             held);
    else if (!v->restricted)
        n = (size_t)snprintf(msg, sizeof(msg),
                             "%s: held until the control plane has completed the release it "
                             "asks for%s",
                             held, v->check_held ? " and the pre-start checks allow it" : "");
    else if (v->wave_held)
        n = (size_t)snprintf(msg, sizeof(msg), "%s: held until %s%s", held, v->until,
                             v->cp_held ? " and the control plane has completed the release it "
                                          "asks for"
                                        : "");
    else
        n = (size_t)snprintf(msg, sizeof(msg),
                             "%s: held until changes are permitted (next window %s)%s", held,
                             v->until[0] ? v->until : "not scheduled",
                             v->cp_held ? " and the control plane has completed the release it "
                                          "asks for"
                                        : "");
    if (n >= sizeof(msg))
        goto out; /* cut by the writer */
    if (v->cp_held) {
        snprintf(part, sizeof(part), " (%s)", v->cp_why);
        if (n + strlen(part) < sizeof(msg))
            n += (size_t)snprintf(msg + n, sizeof(msg) - n, "%s", part);
    }
    snprintf(part, sizeof(part),
             "; the NodePool keeps running what it runs and the request is recorded in "
             "annotation %s",
             DECIDE_REQUESTED_NODEPOOL_ANNOTATION);
    if (n + strlen(part) < sizeof(msg))
        snprintf(msg + n, sizeof(msg) - n, "%s", part);
out:
    adm_response_warn(a, "%s", msg);
}

/* The NodePool hold (decide_np_hold(), pure) applied to the answer. */
static int hold_nodepool(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                         size_t errlen)
{
    ctl_controller_t *c = ud;
    decide_intent_t in;
    decide_np_hold_t h;
    outcome_t o = {0};
    char until[112];
    verdict_t v;
    int rc;

    if (q->op != ADM_UPDATE || q->subresource[0])
        return 0;
    /* A release the write changes is checked against the control plane's
     * (DESIGN.md 3.6: the control plane first): one it has not completed
     * is held like any change outside a window, window or not. */
    const char *was = hcp_json_str(q->old_object, "spec.release.image");
    const char *want = hcp_json_str(q->object, "spec.release.image");
    if ((rc = plan_verdict_image(c, DECIDE_NP, q->ns, q->name, same_str(was, want) ? NULL : want,
                                 &v, err, errlen)) != 0)
        return rc;
    if (!v.restricted && !v.permitted) {
        /* undecided: nothing held; a record the write edits is put back */
        if ((rc = audit_marks(c, a, q, &o)) != 0)
            return hcp_errf(err, errlen, rc, "recording who made the change");
        return 0;
    }
    v.check_held = pool_waits_for_checks(c, q, &v);
    held_until(&v, until, sizeof(until));
    decide_intent_read(q->old_object, q->object, q->options, q->user, ctl_hypershift_users(c),
                       &in);
    rc = spec_record(a, q, &in, v.restricted || v.cp_held || v.check_held, decide_np_held_fields,
                     DECIDE_REQUESTED_NODEPOOL_ANNOTATION, "nodepool", until, &o, &h);
    decide_intent_free(&in);
    if (rc == 0 && h.held[0])
        warn_np_held(a, h.held, &v);
    decide_np_hold_free(&h);
    if (rc)
        return hcp_errf(err, errlen, rc, "building the hold of the NodePool's request");
    /* DESIGN.md 3.11: who asked, when and why, or who withdrew what, as for
     * a HostedCluster (after the hold's operations: they may add the
     * annotations map). */
    if ((rc = audit_marks(c, a, q, &o)) != 0 || (rc = skipped_mark(a, q, &v, &o)) != 0)
        return hcp_errf(err, errlen, rc, "recording who made the change");
    return 0;
}

/* ---- ConfigMaps named by a NodePool's spec.config -------------------------- */

#define CM_MAX_POOLS 16 /* pools checked per ConfigMap; more are very unlikely */

/* The NodePools of one namespace whose spec.config names one ConfigMap. */
typedef struct cm_refs {
    const char *ns, *name;                  /* the ConfigMap */
    char pools[CM_MAX_POOLS][254];          /* their names */
    size_t n;                               /* pools found, at most CM_MAX_POOLS */
    bool more;                              /* more were found than kept */
} cm_refs_t;

static void collect_ref(const kube_obj *o, void *ud)
{
    cm_refs_t *x = ud;
    const decide_np_t *np = o->data;

    if (!np || strcmp(o->ns, x->ns) != 0 || !decide_config_names_has(np->config_names, x->name))
        return;
    if (x->n == CM_MAX_POOLS) {
        x->more = true;
        return;
    }
    snprintf(x->pools[x->n++], sizeof(x->pools[0]), "%s", o->name);
}

/* Refuses a change of the content, or the deletion, of a ConfigMap that the
 * spec.config of a restricted NodePool of its namespace names (cmhold.h);
 * everything else passes. */
static int hold_configmap(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                          size_t errlen)
{
    ctl_controller_t *c = ud;
    cm_refs_t *x = NULL;
    verdict_t *v = NULL;
    decide_cm_pool_t held[CM_MAX_POOLS];
    char msg[2048];
    size_t n = 0;
    int rc = 0;

    if (q->subresource[0] || (q->op != ADM_DELETE && q->op != ADM_UPDATE))
        return 0;
    if (q->op == ADM_UPDATE && !decide_cm_content_changed(q->old_object, q->object))
        return 0;
    if ((x = calloc(1, sizeof(*x))) == NULL || (v = calloc(CM_MAX_POOLS, sizeof(*v))) == NULL) {
        rc = hcp_errf(err, errlen, HCP_ENOMEM, "checking the NodePools that name the ConfigMap");
        goto out;
    }
    x->ns = q->ns;
    x->name = q->name;
    kube_cache_foreach(ctl_cache(c, CTL_CACHE_NPS), collect_ref, x);
    for (size_t i = 0; i < x->n; i++) {
        if ((rc = plan_verdict(c, DECIDE_NP, q->ns, x->pools[i], &v[i], err, errlen)) != 0)
            goto out;
        if (v[i].restricted)
            held[n++] = (decide_cm_pool_t){.name = x->pools[i], .until = v[i].until};
    }
    if (n == 0 && x->more) {
        /* Pools past CM_MAX_POOLS were not planned: say so rather than
         * admit a change one of them may restrict. */
        rc = hcp_errf(err, errlen, HCP_ERANGE,
                      "ConfigMap %s is named by more than %d NodePools; not all were checked",
                      q->name, CM_MAX_POOLS);
        goto out;
    }
    if (n) {
        decide_cm_refusal(q->op == ADM_DELETE, q->name, held, n, msg, sizeof(msg));
        adm_response_deny(a, 403, "%s", msg);
    }
out:
    free(v);
    free(x);
    return rc;
}

int adm_holds_register(adm_router_t *r, ctl_controller_t *c)
{
    int rc;

    ctl_set_admission_holds(c); /* pools now paused only mid-rollout */

    if ((rc = adm_router_add(r, ADM_WEBHOOK_HOSTEDCLUSTERS, CTL_HS_GROUP, "hostedclusters",
                             hold_hostedcluster, c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_NODEPOOLS, CTL_HS_GROUP, "nodepools", hold_nodepool,
                             c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_MACHINEDEPLOYMENTS, CTL_CAPI_GROUP, "machinedeployments",
                             hold_machinedeployment, c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_MACHINESETS, CTL_CAPI_GROUP, "machinesets",
                             hold_machineset, c)) != 0 ||
        (rc = adm_router_add(r, ADM_WEBHOOK_CONFIGMAPS, "", "configmaps", hold_configmap, c)) != 0)
        return rc;
    return 0;
}
