/* notify.c: the steps an object's state calls for, handed to the
 * notifications, and the notified marks written back once delivered
 * (DESIGN.md 3.9; notify/due.h). */
#include "controller/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/aging.h"
#include "decide/conditions.h"
#include "log/log.h"

/* What the plan says, as notify_due() reads it; initiated: the decision
 * tells ChangesInitiated (decide_initiated()), a held change let through
 * even when nothing shows as pending (a change of configuration alone). */
static notify_obs_t observe(const ctl_controller_t *c, const decide_plan_t *p, sched_time_t now,
                            bool initiated)
{
    const decide_decision_t *d = &p->d;
    const decide_gate_t *g = &d->gate;
    const stanza_t *st = &p->managed->stanza;
    const decide_health_t *h = &p->managed->health;
    const char *at = p->managed->audit.override_at;
    const char *asked = p->managed->audit.requested_at;
    bool hc = p->kind == DECIDE_HC;
    notify_obs_t o = {.now = now,
                      .held = hc ? decide_hc_held(p->self.data) : decide_np_held(p->self.data),
                      .request = SCHED_NEG_INF,
                      .restricted = d->restricted,
                      .current = d->state.current.start,
                      .gate_failed = g->applies && !g->pass && !g->skipped && !g->by_rec &&
                                     !g->by_check,
                      .rec_failed = g->applies && !g->pass && !g->skipped && g->by_rec,
                      .let_through = !d->restricted && (d->pending_metric == 1 || initiated),
                      .outcome = h->outcome,
                      .outcome_at = h->outcome_at,
                      .override_at = SCHED_NEG_INF,
                      .override_end = SCHED_POS_INF,
                      .withdrawn_at = SCHED_NEG_INF,
                      .after_unhealthy = d->after.state == DECIDE_AFTER_UNHEALTHY,
                      .after_completed = d->after.completed,
                      .after_at = d->after.at,
                      .after_final = d->after.state == DECIDE_AFTER_UNHEALTHY ||
                                     d->after.state == DECIDE_AFTER_HEALTHY,
                      .after_final_at = d->after.at};
    if (!d->state.permitted)
        o.current = SCHED_NEG_INF;
    /* The next start, not merely the next window's open: with a minimum
     * time left a first window too short (or the rest of the one open now)
     * is skipped, and held / window-soon name the effective start. */
    o.has_next = decide_next_start(d, &o.next);
    /* Only the fields that roll every NodePool held (no release): they wait
     * for the common window of the HostedCluster and its NodePools
     * (hcfields.h), which held, window-soon and initiated name. */
    if (hc && !o.held && decide_hc_fields_held(p->self.data) && p->common.computed) {
        o.held = true;
        o.restricted = !p->fields_go;
        o.let_through = p->fields_go || initiated;
        o.current = p->fields_go ? p->common.start : SCHED_NEG_INF;
        o.has_next = !p->common.permitted && p->common.has_window;
        o.next = o.has_next ? p->common.start : SCHED_POS_INF;
    }
    if (at && sched_parse_rfc3339(at, &o.override_at) != 0)
        o.override_at = SCHED_NEG_INF;
    /* DESIGN.md 3.13: the last withdrawal, as the admission webhook
     * recorded it. */
    const char *gone = p->managed->audit.withdrawn_at;
    if (gone && p->managed->audit.withdrawn_by && sched_parse_rfc3339(gone, &o.withdrawn_at) != 0)
        o.withdrawn_at = SCHED_NEG_INF;
    /* The held request, as the admission webhook recorded it: a second
     * request held for the same window is told again. A record left from
     * a request let through long ago names no held change; harmless, as
     * only held, window-soon and initiated read it. */
    if (asked && sched_parse_rfc3339(asked, &o.request) != 0)
        o.request = SCHED_NEG_INF;
    /* A drift held on the MachineDeployment (drift.h): held since its
     * record, with no request behind it. */
    const decide_capi_t *md = !hc && p->capi_kind == DECIDE_MD ? p->capi.data : NULL;
    if (!o.held && md && md->drift) {
        o.held = true;
        if (!md->drift_since || sched_parse_rfc3339(md->drift_since, &o.request) != 0)
            o.request = SCHED_NEG_INF;
    }
    /* Held longer than holdAgeWarning (decide/aging.h). */
    decide_aging_t ag;
    decide_aging(decide_held_since(p), c->hold_age, now, &ag);
    o.aging = ag.aging;
    o.aging_at = ag.occasion;
    o.aging_next = ag.next;
    /* The release waves' verdict (decide/wave.h), unless an override let
     * the change past them. A halt whose since is not known is told once
     * ("none"). */
    if (!d->wave_skipped && d->wave.state != WAVE_PASS) {
        o.wave = d->wave.state;
        o.wave_until = d->wave.until;
        o.wave_since = d->wave.since != SCHED_NEG_INF ? d->wave.since : SCHED_POS_INF;
    }
    if (st->valid && st->strategy == STANZA_PERMISSIVE_UNTIL && st->has_permissive_until)
        o.override_end = st->permissive_until;
    else if (st->valid && st->strategy == STANZA_RESTRICTIVE_UNTIL && st->has_restrictive_until)
        o.override_end = st->restrictive_until;
    return o;
}

static bool notifying(const ctl_controller_t *c)
{
    return c->opts.notify && c->opts.notify_cfg && c->leading;
}

sched_time_t ctl_notify_wake(ctl_controller_t *c, const decide_plan_t *p, sched_time_t now)
{
    if (!notifying(c) || !p->managed)
        return SCHED_POS_INF;
    notify_obs_t o = observe(c, p, now, false);
    return notify_due_wake(&o, c->opts.notify_cfg);
}

static void detail(const decide_plan_t *p, const notify_due_t *d, char *buf, size_t len)
{
    const decide_audit_t *au = &p->managed->audit;
    switch (d->step) {
    case NOTIFY_HELD:
    case NOTIFY_WINDOW_SOON:
        if (au->requested_by)
            snprintf(buf, len, "Requested by %s at %s%s%s%s.", au->requested_by,
                     au->requested_at ? au->requested_at : "", au->requested_reason ? " (reason: " : "",
                     au->requested_reason ? au->requested_reason : "",
                     au->requested_reason ? ")" : "");
        else if (p->d.drift)
            snprintf(buf, len, "HyperShift made a new configuration by itself (no request): "
                               "it waits for the next window.");
        else
            snprintf(buf, len, "The change waits for the next window.");
        return;
    case NOTIFY_INITIATED:
        snprintf(buf, len, "The held change is let through: its window is open.");
        return;
    case NOTIFY_HOLD_AGING:
        if (au->requested_by)
            snprintf(buf, len, "Requested by %s at %s. It is held longer than the guard rails' "
                               "holdAgeWarning: a cluster kept on an older release misses its "
                               "fixes.", au->requested_by, au->requested_at ? au->requested_at : "");
        else
            snprintf(buf, len, "It is held longer than the guard rails' holdAgeWarning: a "
                               "cluster kept on an older release misses its fixes.");
        return;
    case NOTIFY_GATE_SKIPPED:
    case NOTIFY_RELEASE_WITHDRAWN:
        snprintf(buf, len, "%s", p->d.paused_message);
        return;
    case NOTIFY_SOAK_WAITING:
    case NOTIFY_WAVE_HALTED:
        /* the waves' clause: who it waits on, or who halts it and why */
        snprintf(buf, len, "Release waves: %s.", p->d.wave.why);
        return;
    case NOTIFY_WAVE_RESUMED:
        if (p->d.wave.state == WAVE_SOAK)
            snprintf(buf, len, "It still waits for the soak: %s.", p->d.wave.why);
        else
            snprintf(buf, len, "The cluster that halted it is healthy again, or runs another "
                               "release: it goes at its window.");
        return;
    case NOTIFY_COMPLETED:
        snprintf(buf, len, "HyperShift reports the change completed.");
        return;
    case NOTIFY_UNHEALTHY_AFTER_CHANGE:
        snprintf(buf, len, "%s", p->d.after_message);
        return;
    case NOTIFY_POST_CHANGE:
        if (p->d.after.state == DECIDE_AFTER_UNHEALTHY)
            snprintf(buf, len, "%s", p->d.after_message);
        else
            snprintf(buf, len, "Not found unhealthy within the settle time after it.");
        return;
    case NOTIFY_FAILED: {
        /* HyperShift's reason for the failure, else the health gate's */
        const char *why = p->managed->health.outcome_reason[0] ? p->managed->health.outcome_reason
                                                               : p->managed->health.reason;
        snprintf(buf, len, "HyperShift reports the change failed%s%s%s.", why[0] ? " (" : "",
                 why, why[0] ? ")" : "");
        return;
    }
    case NOTIFY_WITHDRAWN:
        snprintf(buf, len, "Withdrawn by %s at %s.", au->withdrawn_by ? au->withdrawn_by : "unknown",
                 au->withdrawn_at ? au->withdrawn_at : "");
        return;
    case NOTIFY_OVERRIDE_SET:
    case NOTIFY_OVERRIDE_EXPIRED:
        snprintf(buf, len, "%s%s%s%s%s%s%s%s.",
                 p->managed->stanza.valid ? stanza_strategy_name(p->managed->stanza.strategy)
                                          : "An invalid stanza",
                 au->override_by ? " set by " : "", au->override_by ? au->override_by : "",
                 au->override_at ? " at " : "", au->override_at ? au->override_at : "",
                 au->override_reason ? " (reason: " : "",
                 au->override_reason ? au->override_reason : "",
                 au->override_reason ? ")" : "");
        return;
    default:
        buf[0] = '\0';
    }
}

/* The record's marks, allocated empty at the first use; NULL when out of
 * memory. */
static record_marks_t *record_marks(record_t *r)
{
    if (!r->marks && (r->marks = malloc(sizeof(*r->marks))) != NULL) {
        notify_marks_init(&r->marks->told);
        notify_marks_init(&r->marks->delivered);
    }
    return r->marks;
}

/* The marks the object carries merged with what was delivered since. */
static notify_marks_t known_marks(const record_t *r, const decide_plan_t *p)
{
    notify_marks_t m = p->managed->health.notified;
    if (r->marks)
        notify_marks_merge(&m, &r->marks->delivered);
    return m;
}

/* Writes the notified annotation when what was delivered is not on the
 * object yet (one merge patch for every step delivered since). While a
 * write of the object is in flight the marks wait for its answer: the
 * record is decided again then (redo), so that they are written even when
 * nothing else about the object changes; otherwise a restart before the
 * object's next event would send the step again within its window. */
static void write_marks(ctl_controller_t *c, record_t *r, const notify_marks_t *on_object)
{
    char path[PATH_MAX_LEN], text[NOTIFY_MARKS_LEN];
    notify_marks_t m = *on_object;
    if (!r->marks || notify_marks_cover(on_object, &r->marks->delivered))
        return;
    if (r->wt.inflight > 0) {
        r->wt.redo = true;
        return;
    }
    notify_marks_merge(&m, &r->marks->delivered);
    notify_marks_format(&m, text, sizeof(text));
    if (kube_path(path, sizeof(path), HS_GROUP, HS_VERSION,
                  r->kind == R_HC ? "hostedclusters" : "nodepools", r->ns, r->name, NULL))
        return;
    json_t *patch = json_pack("{s:{s:{s:s}}}", "metadata", "annotations", NOTIFY_MARKS_ANNOTATION,
                              text);
    if (!patch)
        return;
    ctl_write_t w = {.verb = CTL_WRITE_PATCH, .path = path, .doc = patch,
                     .cache = r->kind == R_HC ? &c->hcs : &c->nps, .what = "notified marks",
                     .stale = r->wt.stale_own};
    if (ctl_write(&c->writer, &r->wt, &w))
        ctl_arm_retry(c, r);
    json_decref(patch);
}

void ctl_notify_steps(ctl_controller_t *c, record_t *r, const decide_plan_t *p, const char *kind,
                      sched_time_t now)
{
    notify_due_t due[NOTIFY_DUE_MAX];
    char change[DECIDE_MSGLEN], why[DECIDE_MSGLEN], done[64];

    if (!p->managed || !c->opts.notify_cfg || !notifying(c))
        return;
    notify_obs_t o = observe(c, p, now, r->initiated);
    notify_marks_t m = known_marks(r, p);
    if (r->marks)
        notify_marks_merge(&m, &r->marks->told);
    size_t n = notify_due(&o, c->opts.notify_cfg, &m, due);
    /* What is handed over is noted: without room for the note nothing is
     * (it stays due, and the next decision tries again). */
    if (n > 0 && !record_marks(r))
        return;
    decide_plan_change_words(p, change, sizeof(change));
    for (size_t i = 0; i < n; i++) {
        /* A step no endpoint takes (post-change without a check asking
         * for it) is not due at all. */
        if (!notify_config_takes(c->opts.notify_cfg, (int)due[i].step))
            continue;
        detail(p, &due[i], why, sizeof(why));
        /* A withdrawal is about the request it withdrew, the health after
         * a change about the change HyperShift completed, not what waits
         * now. */
        const char *what = due[i].step == NOTIFY_WITHDRAWN && p->managed->audit.withdrawn
                               ? p->managed->audit.withdrawn
                               : change;
        if (due[i].step == NOTIFY_UNHEALTHY_AFTER_CHANGE || due[i].step == NOTIFY_POST_CHANGE) {
            decide_after_change_words(&p->managed->health, done, sizeof(done));
            what = done;
        }
        notify_event_t ev = {.step = due[i].step, .kind = kind, .ns = r->ns, .name = r->name,
                             .uid = p->self.uid, .window = due[i].window, .at = now,
                             .change = what, .until = due[i].until, .lead = due[i].lead,
                             .request = due[i].request, .superseded = due[i].superseded,
                             .superseded_held = due[i].superseded_held,
                             .detail = why,
                             .verdict = due[i].step != NOTIFY_POST_CHANGE ? NULL
                                        : p->d.after.state == DECIDE_AFTER_UNHEALTHY
                                            ? "Unhealthy"
                                            : "Healthy"};
        c->opts.notify(&ev, &due[i], c->opts.notify_ud);
        notify_marks_note(&r->marks->told, &due[i], c->opts.notify_cfg);
    }
}

/* What this replica delivered is recorded even once it no longer leads (a
 * SIGTERM stops the lead first): the next leader must not send it again. */
void ctl_notify_marks(ctl_controller_t *c, record_t *r, const decide_plan_t *p)
{
    if (p->managed && c->opts.notify_cfg)
        write_marks(c, r, &p->managed->health.notified);
}

void ctl_notified(ctl_controller_t *c, const char *kind, const char *ns, const char *name,
                  const notify_due_t *d)
{
    rkind_t k = strcmp(kind, "HostedCluster") == 0 ? R_HC : R_NP;
    record_t *r = ctl_record_find(c, k, ns, name);
    const kube_obj *o = kube_cache_get(k == R_HC ? &c->hcs : &c->nps, ns, name);
    if (!r || !o || !o->data || !c->opts.notify_cfg || !record_marks(r))
        return;
    notify_marks_note(&r->marks->delivered, d, c->opts.notify_cfg);
    const decide_managed_t *m = k == R_HC ? &((const decide_hc_t *)o->data)->m
                                          : &((const decide_np_t *)o->data)->m;
    /* Leading or not: this replica sent it (a transfer in flight when the
     * lead was lost, or at a SIGTERM, still ends here). */
    write_marks(c, r, &m->health.notified);
}

struct flushed_scan {
    const ctl_controller_t *c;
    rkind_t kind;
    bool flushed;
};

static void flushed_each(const kube_obj *o, void *ud)
{
    struct flushed_scan *x = ud;
    if (!x->flushed || !o->data)
        return;
    const record_t *r = ctl_record_find(x->c, x->kind, o->ns, o->name);
    if (!r)
        return;
    const decide_managed_t *m = x->kind == R_HC ? &((const decide_hc_t *)o->data)->m
                                                : &((const decide_np_t *)o->data)->m;
    if (r->marks && !notify_marks_cover(&m->health.notified, &r->marks->delivered))
        x->flushed = false;
}

bool ctl_notify_flushed(const ctl_controller_t *c)
{
    struct flushed_scan x = {c, R_HC, true};
    if (!c->opts.notify_cfg)
        return true;
    kube_cache_foreach(&c->hcs, flushed_each, &x);
    x.kind = R_NP;
    kube_cache_foreach(&c->nps, flushed_each, &x);
    return x.flushed;
}

void ctl_notify_failing(ctl_controller_t *c, const char *kind, const char *ns, const char *name,
                        const char *endpoint, const char *why)
{
    rkind_t k = strcmp(kind, "HostedCluster") == 0 ? R_HC : R_NP;
    record_t *r = ctl_record_find(c, k, ns, name);
    const kube_obj *o = kube_cache_get(k == R_HC ? &c->hcs : &c->nps, ns, name);
    char msg[DECIDE_MSGLEN];
    if (!r || !o || !c->leading)
        return;
    snprintf(msg, sizeof(msg),
             "The notification endpoint %s keeps failing (%s): notifications about this object "
             "wait and are tried again with backoff.",
             endpoint, why);
    ctl_event_t ev = {kind, HS_GROUP "/" HS_VERSION, o->uid, "Warning",
                      "NotificationEndpointFailing", msg};
    if (ctl_write_event(&c->writer, &r->wt, &ev))
        ctl_arm_retry(c, r);
}
