/* reconcile.c: one object's plan carried out: writes, Events, projection. */
#include "controller/internal.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "check/call.h"
#include "decide/aging.h"
#include "decide/conditions.h"
#include "decide/cpfirst.h"
#include "decide/writes.h"
#include "log/log.h"
#include "policy/behavior.h"
#include "policy/guard.h"

/* ---- carrying a plan out ----------------------------------------------- */

static void event(ctl_controller_t *c, record_t *r, const char *kind, const char *api_version,
                  const char *uid, const char *type, const char *reason, const char *message)
{
    ctl_event_t ev = {kind, api_version, uid, type, reason, message};
    if (ctl_write_event(&c->writer, &r->wt, &ev))
        ctl_arm_retry(c, r);
}

static void submit(ctl_controller_t *c, record_t *r, const ctl_write_t *w)
{
    if (ctl_write(&c->writer, &r->wt, w))
        ctl_arm_retry(c, r);
}

/* The backstop (DESIGN.md 3.6, decide_unheld()): a material change that
 * got past the admission holds is counted
 * (change_management_unheld_changes_total), logged and told in a
 * ChangeNotHeld Event. The plan already pauses a NodePool in mid-rollout
 * (no new replacement starts); a control-plane update HyperShift has begun
 * is one material change and is not interrupted. */
static void unheld_change(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                          const char *kind)
{
    bool hc = p->kind == DECIDE_HC;
    char msg[DECIDE_MSGLEN];
    const char *release = hc ? ((const decide_hc_t *)p->self.data)->release_image : NULL;

    if (!decide_unheld(p, &r->seen, &r->seen))
        return;
    c->stats.unheld[hc ? 0 : 1]++;
    if (hc)
        snprintf(msg, sizeof(msg),
                 "The release changed to %s while changes are restricted: the admission "
                 "webhook did not hold it. HyperShift starts the control-plane update at "
                 "once; it is not interrupted.", release ? release : "(none)");
    else
        snprintf(msg, sizeof(msg),
                 "A node rollout started while changes are restricted: the admission webhook "
                 "did not hold it. The %s is paused: replacements under way finish, no new "
                 "one starts until a window opens.",
                 p->capi_kind == DECIDE_MS ? "MachineSet" : "MachineDeployment");
    log_kv(LOG_WARN, "change not held at admission", "kind", kind, "namespace", r->ns, "name",
           r->name, NULL);
    event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Warning", "ChangeNotHeld", msg);
}

/* ---- health gate (DESIGN.md 3.10) ---- */
/* A held change that a failing health gate keeps held: counted
 * (change_management_health_gate_holds_total) and told in a HealthGate
 * Event once per failing spell; a gate skipped by an override is told too.
 * The conditions, the companion and the hosted ClusterVersion say it from
 * the decision itself. */
static void health_gate_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                               const char *kind)
{
    const decide_gate_t *g = &p->d.gate;
    bool failed = g->applies && !g->pass && !g->skipped;
    bool by_rec = g->by_rec;
    char msg[DECIDE_MSGLEN];
    /* Once per failing spell, and again when what fails changes (the
     * health, then the release's recommendation). */
    if (failed && (!r->last_gate_failed || r->last_gate_reason != g->reason)) {
        bool pending = g->by_check && strcmp(g->reason, "CheckPending") == 0;
        if (g->by_check && !pending)
            c->stats.check_holds++;
        else if (by_rec)
            c->stats.rec_holds++;
        else if (!g->by_check)
            c->stats.gate_holds[p->kind == DECIDE_HC ? 0 : 1]++;
        log_kv(pending ? LOG_INFO : LOG_WARN,
               g->by_check ? (pending ? "held change waits for the pre-start checks"
                                      : "held change kept held: a pre-start check refused it")
               : by_rec    ? "held release kept held: no longer recommended"
                           : "held change kept held by the health gate",
               "kind", kind, "namespace", r->ns, "name", r->name, "why", g->why, NULL);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, pending ? "Normal" : "Warning",
              g->reason, p->d.paused_message);
    }
    if (g->applies && g->skipped && !r->last_gate_failed) {
        snprintf(msg, sizeof(msg),
                 "%s (%s), but the override's %s annotation skips it: the held change is let "
                 "through.",
                 by_rec ? "The held release is not recommended" : "The health gate failed",
                 g->why, by_rec ? DECIDE_SKIP_RECOMMENDATION_ANNOTATION : DECIDE_SKIP_GATE_ANNOTATION);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Warning",
              by_rec ? "RecommendationCheckSkipped" : "HealthGateSkipped", msg);
    }
    r->last_gate_failed = failed;
    r->last_gate_reason = failed ? g->reason : NULL;
}

/* ---- release waves (DESIGN.md 3.14) ---- */
/* A release the waves hold: told once per spell, and again when what
 * holds it changes (WaitingForSoak, then WaveHalted): a Normal Event while
 * it soaks, a Warning when a wave before broke or the release is blocked. */
static void wave_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                        const char *kind)
{
    const decide_decision_t *d = &p->d;
    /* Not when the window, or another stage, holds it first. */
    const char *reason = d->wave_held ? d->restricted_reason : NULL;
    if (reason && reason != r->last_wave_reason) {
        bool soak = strcmp(reason, "WaitingForSoak") == 0;
        log_kv(soak ? LOG_INFO : LOG_WARN, "held release kept held by the release waves",
               "kind", kind, "namespace", r->ns, "name", r->name, "reason", reason, "why",
               d->wave.why, NULL);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, soak ? "Normal" : "Warning",
              reason, d->paused_message);
    }
    r->last_wave_reason = reason;
}

/* ---- control plane first (DESIGN.md 3.6) ---- */
/* A NodePool request held for its control plane: told in a
 * WaitingForControlPlane Event once per spell (the conditions, the
 * companion and the hosted ClusterVersion say it from the decision). */
static void cp_first_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                            const char *kind)
{
    if (p->d.cp_first && !r->last_cp_first) {
        log_kv(LOG_INFO, "held change waits for the control plane", "kind", kind, "namespace",
               r->ns, "name", r->name, "why", p->d.cp_why, NULL);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Normal",
              DECIDE_CP_FIRST_REASON, p->d.pending_message);
    }
    r->last_cp_first = p->d.cp_first;
}

/* ---- health after the change (DESIGN.md 3.15) ---- */
/* A completed change found unhealthy after it (decide/after.h): counted
 * (change_management_unhealthy_after_change_total), logged and told in an
 * UnhealthyAfterChange Warning Event, once per change (its completion).
 * The condition says it from the decision; the notification from its
 * marks. */
static void after_change_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                                const char *kind)
{
    const decide_after_t *a = &p->d.after;
    const decide_seen_cond_t *on = p->managed ? &p->managed->after : NULL;
    if (a->state != DECIDE_AFTER_UNHEALTHY || r->last_after == a->completed)
        return;
    r->last_after = a->completed;
    /* Told already by the process before this one: the object says so. */
    if (on && on->present && on->status && on->message &&
        strcmp(on->message, p->d.after_message) == 0)
        return;
    c->stats.unhealthy_after[p->kind == DECIDE_HC ? 0 : 1]++;
    log_kv(LOG_WARN, "unhealthy after the change", "kind", kind, "namespace", r->ns, "name",
           r->name, "why", a->why, NULL);
    event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Warning", DECIDE_AFTER_CONDITION,
          p->d.after_message);
}

/* ---- a hold that ages (guard rails' holdAgeWarning, decide/aging.h) ---- */
/* A change held longer than holdAgeWarning: logged, counted
 * (change_management_hold_aging_total) and told in a HoldAging Warning
 * Event, once per occasion (then weekly while it stays held). A telling the
 * object's notified marks already carry was made by the process before
 * this one. */
static void aging_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                         const char *kind, const decide_aging_t *ag, sched_time_t now)
{
    char change[DECIDE_MSGLEN / 2], msg[DECIDE_MSGLEN], since[32], next[64] = "";
    sched_time_t at;
    if (!ag->aging || r->last_aging == ag->occasion)
        return;
    r->last_aging = ag->occasion;
    const notify_marks_t *m = &p->managed->health.notified;
    if (m->at[NOTIFY_HOLD_AGING] == ag->occasion && m->req[NOTIFY_HOLD_AGING] == ag->since)
        return;
    c->stats.hold_aging[p->kind == DECIDE_HC ? 0 : 1]++;
    decide_plan_change_words(p, change, sizeof(change));
    sched_format_utc(ag->since, since, sizeof(since));
    if (decide_next_start(&p->d, &at) && at > now) {
        memcpy(next, "the next window opens at ", 25);
        sched_format_utc(at, next + 25, sizeof(next) - 25);
    }
    char age[48], warn[48];
    guard_format_duration((now - ag->since) / 60 * 60, age, sizeof(age));
    guard_format_duration(c->hold_age, warn, sizeof(warn));
    snprintf(msg, sizeof(msg),
             "%s has been held for %s (requested at %s), longer than the guard rails' "
             "holdAgeWarning (%s): %s. A cluster kept on an older release misses its "
             "fixes: let it through with a PermissiveUntil override, or withdraw the request.",
             change, age, since, warn, next[0] ? next : "no window lets it through yet");
    log_kv(LOG_WARN, "a held change is aging", "kind", kind, "namespace", r->ns, "name", r->name,
           "since", since, NULL);
    event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Warning", DECIDE_AGING_REASON, msg);
}

/* ---- audit (DESIGN.md 3.11) ---- */
/* The record's hash (decide_release_hash() of "by at"), 0 when none. */
static uint64_t audit_hash(const char *by, const char *at)
{
    char buf[600];
    if (!by || !at)
        return 0;
    snprintf(buf, sizeof(buf), "%s %s", by, at);
    return decide_release_hash(buf);
}

/* Events for a new override record (OverrideSet), a new held request
 * (ChangeHeld) and a new withdrawal (ChangeWithdrawn, DESIGN.md 3.13), each
 * naming who, when, the reason given or what was withdrawn, and what it
 * means (the override's expiry, the next window). */
static void audit_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                         const char *kind, sched_time_t now)
{
    const decide_audit_t *au = &p->managed->audit;
    const stanza_t *st = &p->managed->stanza;
    uint64_t ho = audit_hash(au->override_by, au->override_at);
    uint64_t hr = audit_hash(au->requested_by, au->requested_at);
    char msg[DECIDE_MSGLEN], until[32] = "", next[32] = "";
    bool held = decide_request_held(p->kind, p->self.data, &p->d);

    if (decide_audit_fresh(r->last_override, ho, au->override_at, now, c->started)) {
        if (st->valid && st->strategy == STANZA_PERMISSIVE_UNTIL && st->has_permissive_until)
            decide_format_time(st->permissive_until, until, sizeof(until));
        else if (st->valid && st->strategy == STANZA_RESTRICTIVE_UNTIL &&
                 st->has_restrictive_until)
            decide_format_time(st->restrictive_until, until, sizeof(until));
        snprintf(msg, sizeof(msg), "%s set by %s at %s%s%s%s%s%s.",
                 st->valid ? stanza_strategy_name(st->strategy) : "An invalid stanza",
                 au->override_by, au->override_at, au->override_reason ? " (reason: " : "",
                 au->override_reason ? au->override_reason : "",
                 au->override_reason ? ")" : "", until[0] ? "; it expires at " : "", until);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Normal", "OverrideSet", msg);
    }
    if (ho)
        r->last_override = ho;
    if (held && decide_audit_fresh(r->last_request, hr, au->requested_at, now, c->started)) {
        /* The next start (a window's opening, or the effective start with
         * a minimum time left); inside an open window, the gate that holds
         * it (its own Event says why), not the end of the window. */
        char tail[96] = "";
        sched_time_t at;
        if (p->d.gate_held && p->d.restricted_reason)
            snprintf(tail, sizeof(tail), " in the open window (%s)", p->d.restricted_reason);
        else if (decide_next_start(&p->d, &at)) {
            decide_format_time(at, next, sizeof(next));
            snprintf(tail, sizeof(tail), " until the window at %s", next);
        }
        snprintf(msg, sizeof(msg), "A change requested by %s at %s%s%s%s is held%s.",
                 au->requested_by, au->requested_at, au->requested_reason ? " (reason: " : "",
                 au->requested_reason ? au->requested_reason : "",
                 au->requested_reason ? ")" : "", tail);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Normal", "ChangeHeld", msg);
    }
    if (hr)
        r->last_request = hr;
    uint64_t hw = audit_hash(au->withdrawn_by, au->withdrawn_at);
    if (decide_audit_fresh(r->last_withdrawn, hw, au->withdrawn_at, now, c->started)) {
        snprintf(msg, sizeof(msg),
                 "The request for %s was withdrawn by %s at %s: nothing of it starts at the "
                 "window.",
                 au->withdrawn ? au->withdrawn : "a held change", au->withdrawn_by,
                 au->withdrawn_at);
        event(c, r, kind, HS_GROUP "/" HS_VERSION, p->self.uid, "Normal", "ChangeWithdrawn", msg);
    }
    if (hw)
        r->last_withdrawn = hw;
}
/* ---- end audit ---- */

static void transition_events(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                              const char *kind)
{
    const decide_decision_t *d = &p->d;
    const char *uid = p->self.uid;
    unheld_change(c, r, p, kind);
    /* The last minimum time left of a window (minleft.h): no change may
     * start; told once per spell, with the effective start. */
    bool min_left = d->restricted && strcmp(d->restricted_reason, "MinTimeLeft") == 0;
    if (min_left && !r->last_min_left)
        event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Normal", "MinTimeLeft",
              d->paused_message);
    else if (r->have_last && !d->gate_held && r->last_restricted != d->restricted)
        event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Normal",
              d->restricted ? "WindowClosed" : "WindowOpened", d->paused_message);
    r->last_min_left = min_left;
    /* Once per held change let through: a release, or a change of
     * configuration alone (which never shows as a pending version). */
    ctl_standby_told(r);
    r->initiated = decide_initiated(p, r->have_last, r->last_pending, r->let_through);
    r->let_through = false;
    if (r->initiated) {
        char msg[DECIDE_MSGLEN];
        snprintf(msg, sizeof(msg), "Pending changes may start now.%s%s",
                 r->release_unchecked
                     ? " Whether the release is still recommended was not checked: the "
                       "HostedCluster reports no available or conditional updates (no update "
                       "service)."
                     : "",
                 r->wave_skipped ? " The override in force let the release past the release "
                                   "waves: the waves before this cluster's had not run it its "
                                   "soak time, healthy."
                                 : "");
        event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Normal", "ChangesInitiated", msg);
        r->release_unchecked = false;
        r->wave_skipped = false;
    }
    if (d->action == DECIDE_PAUSE_REASSERT) {
        /* Once per removal. A re-assertion whose write conflicted (Cluster
         * API records the Paused condition of a Cluster whose pause was
         * removed) is written again on the newer version of the same
         * removal; the version the last one was written on, replaced by
         * that write, means the pause was removed again. */
        bool same = r->reassert_rv[0] && !ctl_write_stale(r->wt.stale_capi, r->reassert_rv);
        if (!same) {
            c->stats.reasserts++;
            event(c, r, kind, HS_GROUP "/" HS_VERSION, uid, "Warning", "PauseReasserted",
                  "Another writer removed the pause while changes are restricted; it was "
                  "re-asserted.");
        }
        snprintf(r->reassert_rv, sizeof(r->reassert_rv), "%s", p->capi.rv ? p->capi.rv : "");
    } else {
        r->reassert_rv[0] = '\0';
    }
    health_gate_events(c, r, p, kind);
    wave_events(c, r, p, kind);
    cp_first_events(c, r, p, kind);
    after_change_events(c, r, p, kind);
    audit_events(c, r, p, kind, ctl_clock_now(&c->opts.clock, c->loop));
    ctl_notify_marks(c, r, p);
    ctl_notify_steps(c, r, p, kind, ctl_clock_now(&c->opts.clock, c->loop));
    r->have_last = true;
    /* A gate holding a change in an open window (health, recommendation,
     * checks, waves: decide_gate_hold()) tells its own Events; no window
     * closed or opened, so WindowClosed and WindowOpened compare with the
     * last decision no gate held. */
    if (!d->gate_held)
        r->last_restricted = d->restricted;
    r->last_pending = d->pending_metric;
}

static kube_cache *capi_cache(ctl_controller_t *c, decide_kind_t k, const char **resource)
{
    *resource = k == DECIDE_CLUSTER ? "clusters" : k == DECIDE_MS ? "machinesets"
                                                                  : "machinedeployments";
    return k == DECIDE_CLUSTER ? &c->clusters : k == DECIDE_MS ? &c->mss : &c->mds;
}

/* The answer to a held change a standby wrote (standby.c). */
static void standby_answered(ctl_write_outcome_t outcome, const json_t *answer, void *ud)
{
    record_t *r = ud;
    ctl_standby_answered(r->ctl, r, outcome, answer);
}

/* Submits the writes the plan asks for (decide_writes(), in their order),
 * each addressed to its object and conditional on the version the plan
 * read. A held change let through is written alone and marked first: the
 * writer sends it before every other write, and its CAPI pause, Events,
 * status and companion come with the next reconcile, after the answer.
 * standby: a replica that does not lead writes the held change alone. */
static void carry_out(ctl_controller_t *c, record_t *r, const decide_plan_t *p,
                      const char *capi_path, const char *path, sched_time_t now, bool standby)
{
    const char *resource;
    kube_cache *cc = capi_cache(c, p->capi_kind, &resource);
    kube_cache *own = p->kind == DECIDE_HC ? &c->hcs : &c->nps;
    decide_writes_t ws;
    int rc = decide_writes(p, now, &ws);
    for (int i = 0; i < ws.n; i++) {
        const decide_write_t *dw = &ws.w[i];
        bool capi = dw->target == DECIDE_WRITE_CAPI;
        const char *base = capi ? p->capi.rv : p->self.rv;
        if ((capi && !capi_path[0]) || (standby && !dw->first))
            continue; /* no path for its CAPI object; a standby writes the change alone */
        if (dw->first) {
            if (!standby) /* a standby's is told once it landed (standby.c) */
                r->let_through = true; /* told once the object shows it (decide_initiated()) */
            else
                snprintf(r->sb_rv, sizeof(r->sb_rv), "%s", base ? base : "");
            r->release_unchecked = p->d.gate.applies && p->d.gate.unchecked;
            r->wave_skipped = p->d.wave_skipped;
            log_kv(LOG_INFO, "held change released", "kind",
                   p->kind == DECIDE_HC ? "HostedCluster" : "NodePool", "namespace", r->ns,
                   "name", r->name, "what", dw->what, "by", standby ? "standby" : "leader",
                   NULL);
        }
        ctl_write_t w = {.verb = dw->kind == DECIDE_WRITE_STATUS ? CTL_WRITE_STATUS
                                                                 : CTL_WRITE_PATCH,
                         .path = capi ? capi_path : path, .doc = dw->patch,
                         .cache = capi ? cc : own, .what = dw->what,
                         .stale = capi ? r->wt.stale_capi : r->wt.stale_own,
                         .base_rv = base, .first = dw->first,
                         .done = standby ? standby_answered : NULL, .done_ud = r};
        submit(c, r, &w);
    }
    decide_writes_free(&ws);
    if (rc) {
        c->stats.write_errors++;
        ctl_arm_retry(c, r);
    }
}

/* A HostedCluster or NodePool: plan, then write what differs. */
static void reconcile_managed(ctl_controller_t *c, record_t *r, sched_time_t now)
{
    bool hc = r->kind == R_HC;
    char err[256], capi_path[PATH_MAX_LEN] = "", path[PATH_MAX_LEN];
    const char *resource;
    decide_view_t v;
    decide_plan_t p;
    ctl_view_init(c, true, &v);
    int rc = decide_plan(&v, hc ? DECIDE_HC : DECIDE_NP, r->ns, r->name, now, &p, err,
                         sizeof(err));
    if (!p.present) {
        ctl_companion_sync(c, r, NULL, now);
        check_runner_forget_object(c->opts.checks, hc ? "HostedCluster" : "NodePool", r->ns,
                                   r->name);
        ctl_record_forget(c, r);
        goto done;
    }
    if (rc) {
        log_kv(LOG_WARN, "cannot decide", "namespace", r->ns, "name", r->name, "error", err,
               NULL);
        goto done;
    }
    if (p.stale)
        goto done; /* the watch has yet to catch up with our writes */
    bool releasing = decide_releases_held(&p);
    if (ctl_write_must_wait(&c->writer, releasing)) {
        c->stats.plans_parked++;
        ctl_write_wait(&c->writer, &r->q); /* held releases first: decide again after */
        goto done;
    }
    capi_cache(c, p.capi_kind, &resource);
    if (p.capi.data && kube_path(capi_path, sizeof(capi_path), CAPI_GROUP, c->capi_version,
                                 resource, p.capi_ns, p.capi_name, NULL))
        capi_path[0] = '\0';
    if (kube_path(path, sizeof(path), HS_GROUP, HS_VERSION, hc ? "hostedclusters" : "nodepools",
                  r->ns, r->name, NULL))
        goto done;
    sched_time_t nw = ctl_notify_wake(c, &p, now), cw = ctl_checks_ask(c, r, &p, now);
    if (cw < nw)
        nw = cw;
    decide_aging_t ag;
    decide_aging(decide_held_since(&p), c->hold_age, now, &ag);
    if (ag.next > now && ag.next < nw)
        nw = ag.next;
    ctl_arm(c, r, nw < p.d.wake ? nw : p.d.wake);
    ctl_plan_inputs(&p, &r->metrics);
    ctl_wave_note(c, r, &p);
    r->have_metrics = true;
    r->metrics_epoch = c->policy_epoch;
    r->metrics_until = p.d.wake;
    if (hc && c->proj && p.opted_in) {
        hosted_cv_t cv;
        hosted_conds_t want = ctl_hosted_want(c, r->ns, r->name, &p.d, &cv);
        hosted_update(c->proj, r->ns, r->name, &want, now, NULL, 0);
    } else if (hc && c->proj) {
        /* Opted out (or never in): nothing of ours stays in its hosted
         * cluster. A no-op for a cluster this process never projected for. */
        hosted_retire(c->proj, r->ns, r->name);
    }
    if (c->leading && p.status_doc) {
        if (!releasing) {
            transition_events(c, r, &p, hc ? "HostedCluster" : "NodePool");
            aging_events(c, r, &p, hc ? "HostedCluster" : "NodePool", &ag, now);
        }
        else /* the change let through is told now (initiated, naming a
              * window-soon the window's opening superseded): the next
              * reconcile waits for the release's answer and may come after
              * the window closed */
            ctl_notify_steps(c, r, &p, hc ? "HostedCluster" : "NodePool",
                             ctl_clock_now(&c->opts.clock, c->loop));
        carry_out(c, r, &p, capi_path, path, now, false);
        if (!releasing)
            ctl_companion_sync(c, r, &p, now);
    } else if (!c->leading) {
        ctl_notify_marks(c, r, &p); /* what it delivered while it led */
        if (ctl_standby_takes(c, r, &p, releasing))
            carry_out(c, r, &p, capi_path, path, now, true); /* the leader left it */
    }
done:
    decide_plan_free(&p);
}

static void reconcile_policy(ctl_controller_t *c, record_t *r, sched_time_t now)
{
    const kube_obj *obj = kube_cache_get(&c->policies, r->ns, r->name);
    if (!obj || !obj->data) {
        ctl_record_forget(c, r);
        return;
    }
    const policy_entry_t *e = obj->data;
    json_t *status = NULL;
    sched_time_t when;
    char path[PATH_MAX_LEN];
    ctl_arm(c, r, sched_next_transition(e->p->sched, now, &when) == 1 ? when : SCHED_POS_INF);
    if (behavior_status(e->p, now, e->status, &status) != 0)
        return;
    if (c->leading) {
        if (!e->p->valid && (!r->have_last || r->last_valid))
            event(c, r, "HostedChangeManagementPolicy", CM_GROUP "/" CM_VERSION, obj->uid,
                  "Warning", "PolicyInvalid", e->p->message);
        r->have_last = true;
        r->last_valid = e->p->valid;
        if (!hcp_json_equal_stored(e->status, status) &&
            kube_path(path, sizeof(path), CM_GROUP, CM_VERSION, "hostedchangemanagementpolicies",
                      r->ns, r->name, NULL) == 0) {
            json_t *patch = decide_status_patch_doc(json_incref(status), obj->rv);
            if (patch) {
                ctl_write_t w = {.verb = CTL_WRITE_STATUS, .path = path, .doc = patch,
                                 .cache = &c->policies, .what = "policy status"};
                submit(c, r, &w);
                json_decref(patch);
            }
        }
    }
    json_decref(status);
}

/* The writer's settle callback: retry, redo or free the record; what
 * waited for held releases is queued again once the last is answered. */
void ctl_write_settled(ctl_wtarget_t *t, ctl_write_outcome_t outcome, void *ud)
{
    ctl_controller_t *c = ud;
    record_t *r = RECORD_OF(wt, t);
    if (outcome == CTL_WRITE_FAILED && !r->gone)
        ctl_arm_retry(c, r);
    else if (outcome == CTL_WRITE_ABSENT && !r->gone)
        ctl_cm_absent(c, r);
    else if (outcome == CTL_WRITE_OK)
        ctl_retry_reset(r);
    if (r->gone) {
        if (r->wt.inflight == 0 && !r->q.queued)
            ctl_record_free(r);
    } else if (r->wt.inflight == 0 && r->wt.redo) {
        r->wt.redo = false;
        ctl_enqueue(c, r->kind, r->ns, r->name);
    } else if (r->wt.inflight == 0 && r->wt.recheck) {
        /* Decided again from the answer in RETRY_MIN: nothing is written
         * when the release went through; a release held again by a replica
         * whose clock is behind is written again (once a second at most). */
        r->wt.recheck = false;
        ctl_arm_retry(c, r);
    }
    ctl_queue_resume(c); /* the last held release answered: what waited is queued */
    ctl_queue_kick(c);
}

/* A HostedCluster or NodePool carrying a held request: its reconcile may
 * release a held change, so it plans even while releases fly. One whose
 * release was just answered carries none any more, and waits with the rest
 * (planned again after the burst, not during it). */
static bool may_release(ctl_controller_t *c, const record_t *r)
{
    if (r->kind != R_HC && r->kind != R_NP)
        return false;
    const kube_obj *o = kube_cache_get(r->kind == R_HC ? &c->hcs : &c->nps, r->ns, r->name);
    if (!o || !o->data)
        return false;
    return r->kind == R_HC ? decide_hc_held(o->data) || decide_hc_fields_held(o->data)
                           : decide_np_held(o->data);
}

void ctl_reconcile(ctl_controller_t *c, record_t *r)
{
    if (r->wt.inflight > 0) {
        r->wt.redo = true; /* decide again once our own writes are visible */
        return;
    }
    if (ctl_write_must_wait(&c->writer, may_release(c, r))) {
        ctl_write_wait(&c->writer, &r->q); /* no plan while held releases fly, unless it
                                              may release one */
        return;
    }
    sched_time_t now = ctl_clock_now(&c->opts.clock, c->loop);
    if (r->kind == R_POLICY)
        reconcile_policy(c, r, now);
    else if (r->kind == R_CM)
        ctl_reconcile_cm(c, r);
    else if (r->kind == R_REM)
        ctl_reconcile_rem(c, r);
    else
        reconcile_managed(c, r, now);
}
