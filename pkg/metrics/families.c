/* families.c: the controller's metric families. See families.h. */
#include "metrics/families.h"

#include "check/call.h"
#include "decide/wave.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "metrics/metrics.h"
#include "notify/send.h"

static const char *const object_labels[] = {"kind", "namespace", "object", "system", NULL};
static const char *const strategy_labels[] = {"kind", "namespace", "object", "system",
                                              "strategy", NULL};
static const char *const request_labels[] = {"verb", "code", NULL};
static const char *const policy_labels[] = {"namespace", "policy", NULL};
static const char *const admission_labels[] = {"result", NULL};
static const char *const unheld_labels[] = {"kind", "system", NULL};
static const char *const notify_labels[] = {"endpoint", "result", NULL};
static const char *const check_labels[] = {"check", "answer", NULL};
static const char *const watch_labels[] = {"resource", NULL};
static const char *const wave_labels[] = {"system", "wave", "release", "state", NULL};

enum { F_PENDING, F_ETA, F_REMAINING, F_LAST, F_STRATEGY, F_STANZA, F_REQUESTS, F_RESTARTS, F_RECONCILE,
       F_REASSERTS, F_WRITES, F_WRITE_ERRORS, F_LAST_WRITE, F_EVENTS, F_LEADER, F_POLICY_READY,
       F_HOSTED_WRITES, F_HOSTED_WRITE_ERRORS, F_HOSTED_REASSERTS, F_HOSTED_TOKENS, F_HOSTED_ADMIN, F_HOSTED_ID_ERRORS, F_STANDBY, F_STANDBY_CONFLICTS, F_WAVE_SUMS, F_WAVES, F_ADMISSION, F_UNHELD, F_GATE, F_REC, F_REMEDIATIONS, F_NOTIFY,
       F_CHECK_HOLDS, F_CHECK_ANSWERS, F_AFTER, F_AGE, F_AGING, F_AGE_WARN, F_LISTS, F_COUNT };

/* One object's values, copied out of the controller for one scrape. */
typedef struct row {
    char *kind, *ns, *name, *system; /* owned */
    const char *strategy, *stanza;   /* static (ctl_object_metrics_t says) */
    double v[4];                                 /* pending, eta, remaining, last */
    double age;                                  /* held_age: -1 none */
} row_t;

/* Collector of the four per-object gauges; ud selects the value. */
typedef struct gauge_sel {
    struct metrics_families *s;
    int index;
} gauge_sel_t;

/* Scalar counters and gauges read from the controller. */
typedef struct scalar_sel {
    struct metrics_families *s;
    int which;
} scalar_sel_t;

/* The families and what their collectors read. */
struct metrics_families {
    ctl_controller_t *ctl;
    kube_client *client;
    const adm_stats_t *adm;        /* the webhooks' counters, NULL when off */
    const notify_sender_t *notify; /* the notifications, NULL when off */
    metrics_registry reg;
    metrics_family fam[F_COUNT];
    gauge_sel_t sels[4];           /* collect_object's selectors, one per gauge */
    scalar_sel_t scalars[F_COUNT]; /* collect_scalar's selectors */
    row_t *rows;                   /* the snapshot of the scrape in progress */
    size_t nrows, crows;
    bool oom;
};

static char *dup_str(const char *s)
{
    return strdup(s ? s : "");
}

static void take_row(const ctl_object_metrics_t *m, void *ud)
{
    metrics_families_t *s = ud;
    if (s->oom)
        return;
    if (s->nrows == s->crows) {
        size_t n = s->crows ? s->crows * 2 : 64;
        row_t *r = realloc(s->rows, n * sizeof(*r));
        if (!r) {
            s->oom = true;
            return;
        }
        s->rows = r;
        s->crows = n;
    }
    row_t *r = &s->rows[s->nrows];
    r->kind = dup_str(m->kind);
    r->ns = dup_str(m->ns);
    r->name = dup_str(m->name);
    r->system = dup_str(m->system);
    r->strategy = m->strategy;
    r->stanza = m->stanza;
    r->v[0] = m->change_pending;
    r->v[1] = m->next_change_eta;
    r->v[2] = m->permissive_remaining;
    r->v[3] = m->last_change;
    r->age = m->held_age;
    s->nrows++;
    if (!r->kind || !r->ns || !r->name || !r->system)
        s->oom = true;
}

static void clear_rows(metrics_families_t *s)
{
    for (size_t i = 0; i < s->nrows; i++) {
        free(s->rows[i].kind);
        free(s->rows[i].ns);
        free(s->rows[i].name);
        free(s->rows[i].system);
    }
    s->nrows = 0;
}


static int collect_object(metrics_emitter *e, void *ud)
{
    gauge_sel_t *g = ud;
    for (size_t i = 0; i < g->s->nrows; i++) {
        row_t *r = &g->s->rows[i];
        const char *vals[] = {r->kind, r->ns, r->name, r->system};
        if (metrics_emit(e, vals, r->v[g->index]))
            return -1;
    }
    return 0;
}

/* The enhancement's label values, one series each per object. */
static int collect_strategy(metrics_emitter *e, void *ud)
{
    static const char *const names[] = {"MaintenanceSchedule", "Permissive", "Restrictive"};
    metrics_families_t *s = ud;
    for (size_t i = 0; i < s->nrows; i++) {
        row_t *r = &s->rows[i];
        for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
            const char *vals[] = {r->kind, r->ns, r->name, r->system, names[k]};
            if (metrics_emit(e, vals, strcmp(r->strategy, names[k]) == 0))
                return -1;
        }
    }
    return 0;
}

/* The stanza as written: one series per object, value 1. */
static int collect_stanza(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    for (size_t i = 0; i < s->nrows; i++) {
        row_t *r = &s->rows[i];
        const char *vals[] = {r->kind, r->ns, r->name, r->system, r->stanza};
        if (metrics_emit(e, vals, 1))
            return -1;
    }
    return 0;
}

typedef struct policy_emit {
    metrics_emitter *e;
    int rc;
} policy_emit_t;

static void emit_policy(const ctl_policy_metrics_t *m, void *ud)
{
    policy_emit_t *x = ud;
    const char *vals[] = {m->ns, m->name};
    if (x->rc == 0 && metrics_emit(x->e, vals, m->ready))
        x->rc = -1;
}

static int collect_policies(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    policy_emit_t x = {e, 0};
    ctl_foreach_policy_metrics(s->ctl, emit_policy, &x);
    return x.rc;
}

static int collect_requests(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    size_t n;
    const kube_stat *st = kube_client_stats(s->client, &n);
    for (size_t i = 0; i < n; i++) {
        char code[16];
        snprintf(code, sizeof(code), "%d", st[i].code);
        const char *vals[] = {kube_verb_name(st[i].verb), code};
        if (metrics_emit(e, vals, (double)st[i].count))
            return -1;
    }
    return 0;
}

typedef struct lists_emit {
    metrics_emitter *e;
    int rc;
} lists_emit_t;

static void emit_lists(const char *resource, uint64_t lists, void *ud)
{
    lists_emit_t *x = ud;
    const char *vals[] = {resource};
    if (x->rc == 0)
        x->rc = metrics_emit(x->e, vals, (double)lists);
}

static int collect_lists(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    lists_emit_t x = {e, 0};
    ctl_foreach_watch_lists(s->ctl, emit_lists, &x);
    return x.rc;
}

static int collect_admission(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    const char *names[] = {"allowed", "patched", "denied", "invalid", "failed"};
    adm_stats_t z = {0};
    const adm_stats_t *a = s->adm ? s->adm : &z;
    const uint64_t v[] = {a->allowed, a->patched, a->denied, a->invalid, a->failed};
    for (int i = 0; i < 5; i++) {
        const char *vals[] = {names[i]};
        if (metrics_emit(e, vals, (double)v[i]))
            return -1;
    }
    return 0;
}

/* A count per system: [0] HostedClusters (control-plane), [1] NodePools
 * (worker-nodes). */
static int emit_systems(metrics_emitter *e, const uint64_t v[2])
{
    const char *hc[] = {"HostedCluster", "control-plane"}, *np[] = {"NodePool", "worker-nodes"};
    return metrics_emit(e, hc, (double)v[0]) || metrics_emit(e, np, (double)v[1]) ? -1 : 0;
}

/* The backstop's count: changes the webhooks did not hold, by system. */
static int collect_unheld(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return emit_systems(e, ctl_get_stats(s->ctl)->unheld);
}

/* Held changes that a failing health gate kept held, by system. */
static int collect_gate(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return emit_systems(e, ctl_get_stats(s->ctl)->gate_holds);
}

/* Completed changes found unhealthy after them, by system. */
static int collect_after(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return emit_systems(e, ctl_get_stats(s->ctl)->unhealthy_after);
}

/* How long each held change has waited since its request: a series only
 * for an object holding a change whose start is known. */
static int collect_age(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    for (size_t i = 0; i < s->nrows; i++) {
        row_t *r = &s->rows[i];
        const char *vals[] = {r->kind, r->ns, r->name, r->system};
        if (r->age >= 0 && metrics_emit(e, vals, r->age))
            return -1;
    }
    return 0;
}

/* Held changes told aging, by system. */
static int collect_aging(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return emit_systems(e, ctl_get_stats(s->ctl)->hold_aging);
}

/* The holdAgeWarning in force; no series when held changes are never told
 * aging. */
static int collect_age_warn(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    sched_time_t w = ctl_hold_age_warning(s->ctl);
    return w > 0 && metrics_emit(e, NULL, (double)w) ? -1 : 0;
}

typedef struct wave_emit {
    metrics_emitter *e;
    int rc;
} wave_emit_t;

static void emit_wave(unsigned system, const char *wave, const char *release, const char *state,
                      double n, void *ud)
{
    wave_emit_t *x = ud;
    const char *vals[] = {system == WAVE_CONTROL_PLANE ? "control-plane" : "worker-nodes", wave,
                          release, state};
    if (x->rc == 0 && metrics_emit(x->e, vals, n))
        x->rc = -1;
}

/* The release waves: HostedClusters (NodePools) per wave, release and
 * state; no series when waves are off. */
static int collect_waves(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    wave_emit_t x = {e, 0};
    ctl_foreach_wave_count(s->ctl, emit_wave, &x);
    return x.rc;
}

/* Held releases kept held because they are no longer recommended. */
static int collect_rec(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return metrics_emit(e, NULL, (double)ctl_get_stats(s->ctl)->rec_holds) ? -1 : 0;
}

/* Held changes a refusing pre-start check kept held (check/check.h). */
static int collect_check_holds(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return metrics_emit(e, NULL, (double)ctl_get_stats(s->ctl)->check_holds) ? -1 : 0;
}

/* Each pre-start check's answers. */
static int collect_check_answers(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    const check_runner_t *r = ctl_check_runner(s->ctl);
    for (size_t i = 0; r && i < r->cfg.n; i++) {
        const check_counts_t *c = &r->counts[i];
        const char *name = r->cfg.checks[i].name;
        const char *l[4][2] = {{name, "allowed"}, {name, "refused"}, {name, "unanswered"},
                               {name, "ignored"}};
        double v[4] = {(double)c->allowed, (double)c->refused, (double)c->unanswered,
                       (double)c->ignored};
        for (int k = 0; k < 4; k++)
            if (metrics_emit(e, l[k], v[k]))
                return -1;
    }
    return 0;
}

/* Older-template machines deleted for a failed health check while a drift
 * was held (pkg/controller/remediate.c). */
static int collect_remediations(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    return metrics_emit(e, NULL, (double)ctl_get_stats(s->ctl)->drift_remediations) ? -1 : 0;
}

/* Notifications by endpoint: delivered, attempts failed, dropped. */
static int collect_notify(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    const notify_sender_t *n = s->notify;
    for (size_t i = 0; n && i < n->cfg.n_endpoints; i++) {
        const notify_counts_t *c = &n->counts[i];
        const char *sent[] = {n->cfg.endpoints[i].name, "sent"};
        const char *failed[] = {n->cfg.endpoints[i].name, "failed"};
        const char *dropped[] = {n->cfg.endpoints[i].name, "dropped"};
        if (metrics_emit(e, sent, (double)c->sent) ||
            metrics_emit(e, failed, (double)c->failed) ||
            metrics_emit(e, dropped, (double)c->dropped))
            return -1;
    }
    return 0;
}

void metrics_families_set_notify(metrics_families_t *s, const notify_sender_t *n)
{
    if (s)
        s->notify = n;
}

static int collect_reconcile(metrics_emitter *e, void *ud)
{
    metrics_families_t *s = ud;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    uint64_t cum[7], total = 0;
    for (int i = 0; i < 7; i++) {
        total += st->latency_buckets[i];
        cum[i] = total;
    }
    return metrics_emit_histogram(e, NULL, cum, total + st->latency_buckets[7],
                                  st->reconcile_seconds);
}

static int collect_scalar(metrics_emitter *e, void *ud)
{
    const scalar_sel_t *x = ud;
    metrics_families_t *s = x->s;
    const ctl_stats_t *st = ctl_get_stats(s->ctl);
    const hosted_stats_t *ps = ctl_get_hosted_stats(s->ctl);
    double v = 0;
    switch (x->which) {
    case F_RESTARTS: v = (double)ctl_watch_restarts(s->ctl); break;
    case F_REASSERTS: v = (double)st->reasserts; break;
    case F_WRITES: v = (double)st->writes; break;
    case F_WRITE_ERRORS: v = (double)st->write_errors; break;
    case F_LAST_WRITE: v = st->last_write_at; break;
    case F_EVENTS: v = (double)st->events; break;
    case F_LEADER: v = ctl_leading(s->ctl); break;
    case F_HOSTED_WRITES: v = (double)ps->writes; break;
    case F_HOSTED_WRITE_ERRORS: v = (double)ps->write_errors; break;
    case F_HOSTED_REASSERTS: v = (double)ps->reasserts; break;
    case F_HOSTED_TOKENS: v = (double)ps->tokens; break;
    case F_HOSTED_ADMIN: v = (double)ps->identity_requests; break;
    case F_HOSTED_ID_ERRORS: v = (double)ps->identity_errors; break;
    case F_STANDBY: v = (double)st->standby_releases; break;
    case F_STANDBY_CONFLICTS: v = (double)st->standby_conflicts; break;
    case F_WAVE_SUMS: v = (double)ctl_wave_sums(s->ctl); break;
    }
    return metrics_emit(e, NULL, v);
}

/* The four per-object gauges (DESIGN.md 3.8). */
static int register_objects(metrics_families_t *s)
{
    static const struct {
        const char *name, *help;
    } objs[4] = {
        {"change_management_change_pending",
         "0: no change pending; 1: pending and being initiated; 2: pending and blocked"},
        {"change_management_next_change_eta",
         "Seconds until changes may start: -2 error or not ready, -1 paused indefinitely, 0 "
         "permitted now"},
        {"change_management_permissive_remaining",
         "Seconds changes stay permitted: -2 error, -1 permitted indefinitely, 0 not permitted"},
        {"change_management_last_change",
         "Seconds since changes were last permitted: -1 unknown, 0 permitted now"},
    };
    for (int i = 0; i < 4; i++) {
        s->sels[i] = (gauge_sel_t){s, i};
        metrics_desc d = {.name = objs[i].name, .help = objs[i].help, .type = METRICS_GAUGE,
                          .labels = object_labels, .collect = collect_object,
                          .collect_ud = &s->sels[i]};
        if (metrics_register(&s->reg, &s->fam[i], &d))
            return -1;
    }
    return 0;
}

static int register_families(metrics_families_t *s, char *err, size_t errlen)
{
    if (register_objects(s))
        goto fail;
    const struct {
        int which;
        metrics_desc d;
    } fams[] = {
        {F_STRATEGY,
         {.name = "change_management_strategy_enabled",
          .help = "1 for the change management strategy in force (MaintenanceSchedule, "
                  "Permissive or Restrictive, after resolving the stanza and its policy), else 0",
          .type = METRICS_GAUGE, .labels = strategy_labels, .collect = collect_strategy,
          .collect_ud = s}},
        {F_STANZA,
         {.name = "change_management_stanza_strategy",
          .help = "1, labelled with the changeManagement stanza's strategy as written (None "
                  "without a stanza, Invalid when it does not parse)",
          .type = METRICS_GAUGE, .labels = strategy_labels, .collect = collect_stanza,
          .collect_ud = s}},
        {F_POLICY_READY,
         {.name = "change_management_policy_ready",
          .help = "1 when the policy is valid (its Ready condition is True), else 0",
          .type = METRICS_GAUGE, .labels = policy_labels, .collect = collect_policies,
          .collect_ud = s}},
        {F_REQUESTS,
         {.name = "hcp_controller_api_requests_total",
          .help = "Kubernetes API requests by verb and HTTP status (0: no answer)",
          .type = METRICS_COUNTER, .labels = request_labels, .collect = collect_requests,
          .collect_ud = s}},
        {F_ADMISSION,
         {.name = "hcp_controller_admission_requests_total",
          .help = "Admission requests by result: allowed, patched (a change held), denied, "
                  "invalid (not an AdmissionReview), failed (answered by the failure policy)",
          .type = METRICS_COUNTER, .labels = admission_labels, .collect = collect_admission,
          .collect_ud = s}},
        {F_WAVES,
         {.name = "change_management_wave_clusters",
          .help = "Release waves: HostedClusters (system control-plane) or NodePools "
                  "(worker-nodes) of each wave that run a release (state Completed, Updating, "
                  "Unhealthy) or hold it by the waves (WaitingForSoak, WaveHalted, "
                  "ReleaseBlocked)",
          .type = METRICS_GAUGE, .labels = wave_labels, .collect = collect_waves,
          .collect_ud = s}},
        {F_UNHELD,
         {.name = "change_management_unheld_changes_total",
          .help = "Material changes that started while changes were restricted, not held at "
                  "admission (no webhook was called), caught by the watch",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_unheld,
          .collect_ud = s}},
        {F_GATE,
         {.name = "change_management_health_gate_holds_total",
          .help = "Held changes a failing health gate kept held inside a permitted window, "
                  "once per failing spell",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_gate,
          .collect_ud = s}},
        {F_AFTER,
         {.name = "change_management_unhealthy_after_change_total",
          .help = "Completed changes whose object was unhealthy at the end of the settle time "
                  "after them, or for longer than the grace time inside it, once per change",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_after,
          .collect_ud = s}},
        {F_AGE,
         {.name = "change_management_held_change_age_seconds",
          .help = "Seconds a held change has waited since it was requested (the request held "
                  "now, as the admission webhook recorded it, or a held HyperShift "
                  "configuration update's record); no series when nothing is held",
          .type = METRICS_GAUGE, .labels = object_labels, .collect = collect_age,
          .collect_ud = s}},
        {F_AGING,
         {.name = "change_management_hold_aging_total",
          .help = "Held changes told aging: held longer than the guard rails' holdAgeWarning, "
                  "once when it is reached and then weekly while they stay held",
          .type = METRICS_COUNTER, .labels = unheld_labels, .collect = collect_aging,
          .collect_ud = s}},
        {F_AGE_WARN,
         {.name = "change_management_hold_age_warning_seconds",
          .help = "The guard rails' holdAgeWarning in force, seconds; no series when held "
                  "changes are never told aging",
          .type = METRICS_GAUGE, .collect = collect_age_warn, .collect_ud = s}},
        {F_REC,
         {.name = "change_management_release_not_recommended_total",
          .help = "Held control-plane releases kept held at their window because the cluster "
                  "no longer lists them as recommended (pulled from the update graph, or a "
                  "conditional update with Recommended False), once per spell",
          .type = METRICS_COUNTER, .collect = collect_rec, .collect_ud = s}},
        {F_REMEDIATIONS,
         {.name = "change_management_held_drift_remediations_total",
          .help = "Machines of an older template deleted for a failed health check while a "
                  "HyperShift configuration update was held (Cluster API leaves them to the "
                  "rollout); each is replaced from the new template",
          .type = METRICS_COUNTER, .collect = collect_remediations, .collect_ud = s}},
        {F_NOTIFY,
         {.name = "hcp_controller_notifications_total",
          .help = "Notification deliveries by endpoint and result: sent (a 2xx answer), failed "
                  "(an attempt that is tried again), dropped (the queue was full)",
          .type = METRICS_COUNTER, .labels = notify_labels, .collect = collect_notify,
          .collect_ud = s}},
        {F_CHECK_HOLDS,
         {.name = "change_management_check_holds_total",
          .help = "Held changes kept held in their window because a pre-start check of another "
                  "system (failurePolicy Hold) refused them or did not answer, once per spell",
          .type = METRICS_COUNTER, .collect = collect_check_holds, .collect_ud = s}},
        {F_CHECK_ANSWERS,
         {.name = "change_management_check_answers_total",
          .help = "Answers of each pre-start check: allowed (2xx), refused (another status), "
                  "unanswered (no answer within its timeout, or no connection), ignored (a "
                  "refusal or no answer under failurePolicy Ignore)",
          .type = METRICS_COUNTER, .labels = check_labels, .collect = collect_check_answers,
          .collect_ud = s}},
        {F_LISTS,
         {.name = "hcp_controller_watch_list_requests_total",
          .help = "List requests (pages) per watched collection: its first list and the "
                  "relists a watch needs (410 Gone); a watch that resumes from its "
                  "resourceVersion lists nothing",
          .type = METRICS_COUNTER, .labels = watch_labels, .collect = collect_lists,
          .collect_ud = s}},
        {F_RECONCILE,
         {.name = "hcp_controller_reconcile_duration_seconds",
          .help = "Time spent deciding one object", .type = METRICS_HISTOGRAM,
          .buckets = ctl_latency_bounds, .nbuckets = 7, .collect = collect_reconcile,
          .collect_ud = s}},
    };
    for (size_t i = 0; i < sizeof(fams) / sizeof(fams[0]); i++)
        if (metrics_register(&s->reg, &s->fam[fams[i].which], &fams[i].d))
            goto fail;
    static const struct {
        int which;
        const char *name, *help;
        metrics_type type;
    } sc[] = {
        {F_RESTARTS, "hcp_controller_watch_restarts_total",
         "Watch streams restarted after errors, silence or 410 Gone", METRICS_COUNTER},
        {F_REASSERTS, "hcp_controller_pause_reassertions_total",
         "Pauses re-asserted after another writer removed them", METRICS_COUNTER},
        {F_WRITES, "hcp_controller_writes_total", "Patches and creates sent", METRICS_COUNTER},
        {F_WRITE_ERRORS, "hcp_controller_write_errors_total", "Writes that failed",
         METRICS_COUNTER},
        {F_LAST_WRITE, "hcp_controller_last_write_timestamp_seconds",
         "Unix time the API server last acknowledged a write (0 before the first)",
         METRICS_GAUGE},
        {F_EVENTS, "hcp_controller_events_total", "Kubernetes Events created", METRICS_COUNTER},
        {F_LEADER, "hcp_controller_leader", "1 while this replica is the writer",
         METRICS_GAUGE},
        {F_HOSTED_WRITES, "hcp_controller_hosted_clusterversion_writes_total",
         "Status patches sent to hosted clusters' ClusterVersion", METRICS_COUNTER},
        {F_HOSTED_WRITE_ERRORS, "hcp_controller_hosted_clusterversion_write_errors_total",
         "Status patches to hosted clusters' ClusterVersion that failed", METRICS_COUNTER},
        {F_HOSTED_REASSERTS, "hcp_controller_hosted_condition_reassertions_total",
         "Hosted ClusterVersion conditions restored after another writer changed them",
         METRICS_COUNTER},
        {F_HOSTED_TOKENS, "hcp_controller_hosted_tokens_total",
         "Tokens of the controller's ServiceAccount issued in hosted clusters (first set-ups, "
         "renewals and repairs)", METRICS_COUNTER},
        {F_HOSTED_ADMIN, "hcp_controller_hosted_admin_requests_total",
         "Requests made to hosted clusters with their admin kubeconfig: the set-up of the "
         "controller's ServiceAccount and its tokens, nothing else", METRICS_COUNTER},
        {F_HOSTED_ID_ERRORS, "hcp_controller_hosted_identity_errors_total",
         "Set-ups and removals of the controller's ServiceAccount in hosted clusters that "
         "failed", METRICS_COUNTER},
        {F_STANDBY, "hcp_controller_standby_releases_total",
         "Held changes this replica let through while it did not lead, the leader not "
         "writing them (--standby-release-after)", METRICS_COUNTER},
        {F_STANDBY_CONFLICTS, "hcp_controller_standby_release_conflicts_total",
         "Of this replica's writes of such held changes, those another replica's write "
         "preceded (409 Conflict: nothing written twice)", METRICS_COUNTER},
        {F_WAVE_SUMS, "hcp_controller_wave_sums_total",
         "Sums of an earlier wave's clusters the release waves made for a verdict (one per "
         "wave and release, again only after a cluster of an earlier wave changed)",
         METRICS_COUNTER},
    };
    for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
        s->scalars[sc[i].which] = (scalar_sel_t){s, sc[i].which};
        metrics_desc d = {.name = sc[i].name, .help = sc[i].help, .type = sc[i].type,
                          .collect = collect_scalar, .collect_ud = &s->scalars[sc[i].which]};
        if (metrics_register(&s->reg, &s->fam[sc[i].which], &d))
            goto fail;
    }
    return 0;
fail:
    return hcp_errf(err, errlen, HCP_EINVAL, "metrics: %s", s->reg.err);
}

int metrics_families_new(metrics_families_t **out, ctl_controller_t *ctl, kube_client *client,
                         const adm_stats_t *adm, char *err, size_t errlen)
{
    metrics_families_t *s = calloc(1, sizeof(*s));
    int rc;
    if (!s)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    s->ctl = ctl;
    s->client = client;
    s->adm = adm;
    metrics_registry_init(&s->reg);
    if ((rc = register_families(s, err, errlen)) != 0) {
        metrics_families_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int metrics_families_render(metrics_families_t *s, bool gzip, char **body, size_t *len)
{
    metrics_buf b;
    s->oom = false;
    metrics_buf_init(&b);
    if (gzip && metrics_buf_gzip(&b))
        return -1;
    ctl_foreach_object_metrics(s->ctl, take_row, s);
    int rc = s->oom ? -1 : metrics_registry_render(&s->reg, &b);
    clear_rows(s);
    if (!rc)
        *body = metrics_buf_take(&b, len);
    metrics_buf_free(&b);
    return rc || (gzip && !*body) ? -1 : 0;
}

void metrics_families_free(metrics_families_t *s)
{
    if (!s)
        return;
    metrics_registry_free(&s->reg);
    clear_rows(s);
    free(s->rows);
    free(s);
}
