#include "explain.h"
#include "oneshot.h"
#include "recorded.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "decide/after.h"
#include "decide/aging.h"
#include "decide/gate.h"
#include "decide/hcfields.h"
#include "decide/minleft.h"
#include "decide/plan.h"
#include "policy/guard.h"
#include "policy/policy.h"
#include "policy/stanza.h"

#define EXIT_ACCESS ONESHOT_EXIT_ACCESS
#define EXIT_MISSING ONESHOT_EXIT_MISSING
#define MAX_COUNT 100

static const char *PROG = ONESHOT_PROG;

void explain_usage(FILE *f)
{
    fprintf(f,
            "Usage: hcp-controller explain hostedcluster|nodepool NAMESPACE/NAME\n"
            "                              [--kubeconfig PATH] [--context NAME]\n"
            "                              [--at RFC3339] [--count N] [-o text|json]\n"
            "\n"
            "Reads a HostedCluster or NodePool from the cluster, with its policy (and a\n"
            "NodePool's HostedCluster), and explains what governs its changes: the stanza\n"
            "and policy in force, whether changes are permitted now and why (window,\n"
            "exclusion, override, the HostedCluster constraining a NodePool), the change\n"
            "held or in progress, and the next windows of its effective schedule; beside\n"
            "it, what the controller last recorded (its HostedChangeManagementStatus:\n"
            "state, held change, the last transitions), and whether that differs.\n"
            "\n"
            "Options:\n"
            "      --kubeconfig PATH  kubeconfig (default: $KUBECONFIG, else in-cluster,\n"
            "                         else ~/.kube/config)\n"
            "      --context NAME     kubeconfig context (default: current-context)\n"
            "      --at TIME          explain at this RFC 3339 instant (default: now)\n"
            "      --count N          next windows to list (default 5, at most %d)\n"
            "  -o, --output FORMAT    text (default) or json\n"
            "  -h, --help             show this help\n"
            "\n"
            "Exit status: 0 explained; 1 no access (credentials refused, forbidden) or\n"
            "the API server unreachable; 2 bad usage, or the object, its HostedCluster\n"
            "or its policy does not exist (a missing policy is still explained: it\n"
            "holds every change, as the controller does).\n",
            MAX_COUNT);
}

typedef struct opts {
    int nodepool;             /* 1: nodepool, 0: hostedcluster */
    char ns[254], name[254];
    const char *kubeconfig, *context; /* borrowed from argv */
    sched_time_t at;
    long count;
    int json;
} opts_t;

/* A HostedCluster's common window with its opted-in NodePools (hcfields.h):
 * when a change of the fields that roll every NodePool may start. */
typedef struct common {
    int known;                 /* the NodePools could be listed and read */
    decide_common_t cw;
    char held[512];            /* the held request's fields, "" when none */
} common_t;

/* The common window as the plan p computed it, with the held request's
 * fields named as the annotation on hc has them. */
static void common_of(const oneshot_t *v, const subject_t *hc, const decide_plan_t *p,
                      common_t *out)
{
    const json_t *ann = json_object_get(json_object_get(hc->obj, "metadata"), "annotations");
    const char *req = json_string_value(json_object_get(ann, DECIDE_REQUESTED_HC_SPEC_ANNOTATION));

    memset(out, 0, sizeof *out);
    if (req) {
        json_t *r = json_loads(req, 0, NULL);
        const char *key;
        json_t *val;
        size_t m = 0;
        json_object_foreach(r, key, val) {
            if (m < sizeof out->held)
                m += (size_t)snprintf(out->held + m, sizeof out->held - m, "%sspec.%s",
                                      m ? ", " : "", key);
        }
        json_decref(r);
        if (!out->held[0])
            snprintf(out->held, sizeof out->held, "an unreadable request");
    }
    out->known = v->pools_known;
    out->cw = p->common;
}

/* The common window in a sentence. */
static void common_line(const common_t *c, char *buf, size_t len)
{
    if (!c->known)
        snprintf(buf, len, "unknown (the NodePools could not be read)");
    else
        snprintf(buf, len, "%s%s%s", c->held[0] ? c->held : "none held",
                 c->held[0] ? " held: " : "; a change of them is ", c->cw.message);
}

/* ---- explaining ---------------------------------------------------------- */

static void fmt_in(sched_time_t from, sched_time_t t, char *buf, size_t len)
{
    char when[32], d[48];

    sched_format_utc(t, when, sizeof when);
    guard_format_duration(t > from ? t - from : from - t, d, sizeof d);
    snprintf(buf, len, "%s (%s %s)", when, t > from ? "in" : "since", d);
}

/* Why the policy behind x permits changes at `at` or not. */
static void why_policy(const subject_t *x, sched_time_t at, int permitted, char *buf, size_t len)
{
    const policy_t *p = x->policy;
    const char *excl;

    if (x->policy_missing)
        snprintf(buf, len, "policy %s does not exist in %s: changes are held", x->st->policy,
                 x->ns);
    else if (p == NULL)
        snprintf(buf, len, "no policy is named");
    else if (!p->valid)
        snprintf(buf, len, "policy %s is not Ready (%s): changes are held", p->name, p->message);
    else if (p->strategy == POLICY_RESTRICTIVE || (p->strategy == POLICY_PERMISSIVE &&
                                                    (permitted || p->n_calendars == 0)))
        snprintf(buf, len, "policy %s is %s", p->name, policy_strategy_name(p->strategy));
    else if (permitted)
        snprintf(buf, len, "inside a window of policy %s", p->name);
    else {
        /* Only the exclusions whose scope holds the kind of change planned
         * (of the schedule or of an exclusion calendar). */
        sched_t *ks = policy_schedule_for(p, x->change);
        if (ks && (excl = sched_exclusion_at(ks, at, NULL)) != NULL)
            snprintf(buf, len, "inside an exclusion of policy %s%s%.300s", p->name,
                     excl[0] ? ", reason: " : "", excl);
        else
            snprintf(buf, len, "outside the windows of policy %s", p->name);
        sched_unref(ks);
    }
}

/* Why x's own timeline permits changes at `at` or not. */
static void why_own(const subject_t *x, sched_time_t at, int permitted, char *buf, size_t len)
{
    const stanza_t *st = x->st;
    char t[96];

    if (!st->present) {
        snprintf(buf, len, "no changeManagement stanza: changes are never held");
    } else if (!st->valid) {
        snprintf(buf, len, "the stanza is invalid (%s): changes are held", st->error);
    } else if (st->strategy == STANZA_PERMISSIVE || st->strategy == STANZA_RESTRICTIVE) {
        snprintf(buf, len, "the stanza is %s", stanza_strategy_name(st->strategy));
    } else if (st->strategy == STANZA_PERMISSIVE_UNTIL && at < st->permissive_until) {
        fmt_in(at, st->permissive_until, t, sizeof t);
        snprintf(buf, len, "a PermissiveUntil override permits changes until %s", t);
    } else if (st->strategy == STANZA_RESTRICTIVE_UNTIL && at < st->restrictive_until) {
        fmt_in(at, st->restrictive_until, t, sizeof t);
        snprintf(buf, len, "a RestrictiveUntil override holds changes until %s", t);
    } else if (!st->policy[0]) {
        snprintf(buf, len, "the %s override has expired; without a policy changes are %s",
                 stanza_strategy_name(st->strategy), permitted ? "permitted" : "held");
    } else {
        why_policy(x, at, permitted, buf, len);
    }
}

/* What the plan says at `at`, as explain prints it: the effective timeline
 * (the object's own, or a NodePool's within its HostedCluster's), its
 * state, the policies' minimum time left with the effective start, and why
 * in a sentence. */
typedef struct effective {
    sched_t *sched;           /* borrowed from the plan */
    sched_state_t state;      /* the plan's decision: the effective timeline at `at` */
    char why[2048];
    decide_minleft_t min;     /* the plan's decision: the minimum and the effective start */
} effective_t;

static int explain_state(const subject_t *x, const subject_t *hc, const decide_plan_t *p,
                         sched_time_t at, effective_t *e)
{
    char own[700], cl[700];
    sched_state_t os, cs;
    int rc;

    memset(e, 0, sizeof *e);
    e->sched = hc ? p->inter->sched : p->res->sched;
    e->state = p->d.state;
    e->min = p->d.minleft;
    if (!hc) {
        why_own(x, at, e->state.permitted, e->why, sizeof e->why);
        return 0;
    }
    if ((rc = sched_state_at(x->res->sched, at, &os)) != 0 ||
        (rc = sched_state_at(hc->res->sched, at, &cs)) != 0)
        return rc;
    why_own(x, at, os.permitted, own, sizeof own);
    why_own(hc, at, cs.permitted, cl, sizeof cl);
    if (os.permitted && !cs.permitted)
        snprintf(e->why, sizeof e->why,
                 "its own schedule permits changes (%.600s), but HostedCluster %.253s/%.253s "
                 "constrains it: %.600s",
                 own, hc->ns, hc->name, cl);
    else
        snprintf(e->why, sizeof e->why, "%.600s; HostedCluster %.253s/%.253s: %.600s", own, hc->ns, hc->name,
                 cl);
    return 0;
}

static const json_t *condition(const json_t *obj, const char *type)
{
    const json_t *c;
    size_t i;

    json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c)
        if (json_is_string(json_object_get(c, "type")) &&
            strcmp(json_string_value(json_object_get(c, "type")), type) == 0)
            return c;
    return NULL;
}

/* The change held or in progress (DESIGN.md 3.5), in a sentence, from the
 * slim view the plan read. */
static void pending(const subject_t *x, int permitted, const decide_decision_t *d, char *buf,
                    size_t len)
{
    if (x->dk == DECIDE_NP) {
        const decide_np_t *np = x->slim;
        if (d->drift) /* held on the MachineDeployment: no rollout (drift.h) */
            snprintf(buf, len, "held: %s (%s)", d->held,
                     permitted ? "being initiated" : "until changes are permitted; no machine "
                                                     "is replaced before then");
        else if (np->updating_version || np->updating_config)
            snprintf(buf, len, "a worker-node %s update is in progress (nodes being replaced "
                               "finish; while changes are held no new replacement starts)",
                     np->updating_version ? "version" : "configuration");
        else
            snprintf(buf, len, "no worker-node rollout in progress");
        return;
    }
    const decide_hc_t *hc = x->slim;
    const char *want = hc->release_image, *running = hc->desired_image;
    if (hc->history_partial)
        snprintf(buf, len, "a control-plane update to %s is in progress (never interrupted)",
                 running ? running : "a new release");
    else if (want && running && strcmp(want, running) != 0)
        snprintf(buf, len, "release %s requested, %s running: %s", want, running,
                 permitted ? "being initiated" : "held until changes are permitted");
    else
        snprintf(buf, len, "no control-plane change pending");
}

static void fmt_time(sched_time_t t, char *buf, size_t len)
{
    if (t == SCHED_NEG_INF || t == SCHED_POS_INF)
        snprintf(buf, len, "%s", t == SCHED_NEG_INF ? "(always)" : "(never)");
    else
        sched_format_utc(t, buf, len);
}

static void stanza_line(const subject_t *x, char *buf, size_t len)
{
    const stanza_t *st = x->st;

    if (!st->present)
        snprintf(buf, len, "none (changes are never held)");
    else if (!st->valid)
        snprintf(buf, len, "invalid: %s (from %s)", st->error,
                 st->from_spec ? "spec.changeManagement" : "annotations");
    else
        snprintf(buf, len, "%s%s%s (from %s)", stanza_strategy_name(st->strategy),
                 st->policy[0] ? ", policy " : "", st->policy,
                 st->from_spec ? "spec.changeManagement" : "annotations");
}

static void policy_line(const subject_t *x, char *buf, size_t len)
{
    const policy_t *p = x->policy;

    if (x->policy_missing)
        snprintf(buf, len, "%s/%s does not exist", x->ns, x->st->policy);
    else if (!p)
        snprintf(buf, len, "none");
    else
        snprintf(buf, len, "%s/%s: %s, time zone %s, %s", p->namespace_, p->name,
                 policy_strategy_name(p->strategy), p->time_zone,
                 p->valid ? "Ready" : "not Ready");
}

static void controller_line(const subject_t *x, const char *type)
{
    const json_t *c = condition(x->obj, type);

    if (c)
        printf("  %-11s %s=%s (%s): %s\n", "Controller:", type, oneshot_str(c, "status", NULL, NULL),
               oneshot_str(c, "reason", NULL, NULL) ? oneshot_str(c, "reason", NULL, NULL) : "",
               oneshot_str(c, "message", NULL, NULL) ? oneshot_str(c, "message", NULL, NULL) : "");
}

/* The health after the last completed change (DESIGN.md 3.15,
 * decide/after.h) as read, with the default settle and grace times (the
 * controller's own word, with the fleet's times, is its
 * UnhealthyAfterChange condition). */
static void after_line(const subject_t *x, sched_time_t at, char *buf, size_t len)
{
    decide_after_t a;
    char words[64], done[32], t[32], d[32];

    decide_after_change(&x->m->health, x->dk == DECIDE_NP, 0, 0, at, &a);
    decide_after_change_words(&x->m->health, words, sizeof words);
    sched_format_utc(a.completed, done, sizeof done);
    switch (a.state) {
    case DECIDE_AFTER_SETTLING:
        sched_format_utc(a.completed + GUARD_AFTER_SETTLE, t, sizeof t);
        guard_format_duration(GUARD_AFTER_SETTLE, d, sizeof d);
        snprintf(buf, len, "%s completed at %s: watched until %s (settle time %s by default)",
                 words, done, t, d);
        break;
    case DECIDE_AFTER_HEALTHY:
        snprintf(buf, len, "%s completed at %s: not found unhealthy within its settle time", words,
                 done);
        break;
    case DECIDE_AFTER_UNHEALTHY:
        sched_format_utc(a.since, t, sizeof t);
        snprintf(buf, len, "%s completed at %s: UNHEALTHY after it (%s since %s)", words, done,
                 a.why, t);
        break;
    default:
        snprintf(buf, len, "no completed change to watch");
    }
}

/* The health gate's verdict on x as read (DESIGN.md 3.10): whether a held
 * change would be let through when changes are permitted. */
static bool gate_verdict(const subject_t *x, sched_time_t at, char *buf, size_t len,
                         bool *skipped)
{
    char why[DECIDE_GATE_WHYLEN], rwhy[DECIDE_GATE_WHYLEN];
    bool np = x->dk == DECIDE_NP, ok;

    ok = decide_health_ok(&x->m->health, np, why, sizeof why);
    *skipped = !ok && decide_gate_override(x->st, &x->m->health, at);
    /* The held release's recommendation, once health passes (or is skipped). */
    if ((ok || *skipped) && !np && !decide_rec_ok(&x->m->health, rwhy, sizeof rwhy)) {
        bool rec_skipped = decide_rec_override(x->st, &x->m->health, at);
        snprintf(buf, len, "fails (%s)%s", rwhy,
                 rec_skipped ? ", but the override's " DECIDE_SKIP_RECOMMENDATION_ANNOTATION
                               " annotation skips it"
                             : ": the held release stays held while it is not recommended, "
                               "even in a window");
        *skipped = rec_skipped;
        return false;
    }
    if (ok && !np && x->m->health.rec == DECIDE_REC_UNCHECKED) {
        snprintf(buf, len, "passes (Available not False, Degraded not True, no update Partial); "
                           "whether the held release is still recommended cannot be checked: "
                           "no available or conditional updates reported");
        return true;
    }
    if (ok && !np && x->m->health.rec == DECIDE_REC_OK) {
        snprintf(buf, len, "passes (Available not False, Degraded not True, no update Partial; "
                           "the held release is still recommended): a held change is let "
                           "through while changes are permitted");
        return true;
    }
    if (ok)
        snprintf(buf, len, "passes (%s): a held change is let through while changes are "
                           "permitted",
                 np ? "Ready not False, AllNodesHealthy not False"
                    : "Available not False, Degraded not True, no update Partial");
    else if (*skipped)
        snprintf(buf, len, "fails (%s), but the override's %s annotation skips it", why,
                 DECIDE_SKIP_GATE_ANNOTATION);
    else
        snprintf(buf, len, "fails (%s): a held change stays held while it fails, even in a "
                           "window",
                 why);
    return ok;
}

/* "window opens X, changes may start until Y (min time left 2h)", or why
 * none may start now; "" without a minimum. */
static void start_line(const effective_t *e, sched_time_t at, char *buf, size_t len)
{
    const decide_minleft_t *m = &e->min;
    char min[48], a[32], b[32], y[32], s[32];

    buf[0] = '\0';
    if (m->min <= 0)
        return;
    decide_min_left_format(m->min, min, sizeof min);
    if (!m->found) {
        snprintf(buf, len, "no window within 10 years has %s left: no change would start "
                           "(min time left %s)", min, min);
        return;
    }
    fmt_time(m->window.start, a, sizeof a);
    fmt_time(m->window.end, b, sizeof b);
    fmt_time(m->last, y, sizeof y);
    fmt_time(m->start, s, sizeof s);
    if (m->start == at)
        snprintf(buf, len, "a change may start now, until %s (min time left %s; window %s - %s)",
                 y, min, a, b);
    else if (m->tail)
        snprintf(buf, len, "no change may start now: less than %s is left in this window; "
                           "next start %s (window opens %s, changes may start until %s)",
                 min, s, a, y);
    else
        snprintf(buf, len, "window opens %s, changes may start until %s (min time left %s)%s%s",
                 a, y, min, m->start != m->window.start ? "; first start " : "",
                 m->start != m->window.start ? s : "");
}

/* How long the change held has waited (aging.h): from its request as the
 * admission webhook recorded it; "" when nothing is held or no record says. */
static void held_line(sched_time_t since, sched_time_t at, char *buf, size_t len)
{
    char t[32], d[48];

    buf[0] = '\0';
    if (since == SCHED_NEG_INF)
        return;
    sched_format_utc(since, t, sizeof t);
    guard_format_duration(at > since ? at - since : 0, d, sizeof d);
    snprintf(buf, len, "%s (%s), the request as the admission webhook recorded it", t, d);
}

static void print_text(const subject_t *x, const subject_t *hc, const effective_t *e,
                       const sched_set_t *w, sched_time_t at, const char *change,
                       sched_time_t since, const common_t *cm)
{
    char line[1100], a[32], b[32], d[48];
    size_t i;

    printf("%s %s/%s\n", x->kind, x->ns, x->name);
    stanza_line(x, line, sizeof line);
    printf("  %-11s %s\n", "Stanza:", line);
    policy_line(x, line, sizeof line);
    printf("  %-11s %s\n", "Policy:", line);
    printf("  %-11s %s\n", "Timeline:", x->res->message);
    if (x->scoped || (hc && hc->scoped))
        printf("  %-11s %s (the exclusions whose scope holds it apply)\n", "Kind:",
               policy_change_name(x->change));
    if (hc) {
        stanza_line(hc, line, sizeof line);
        printf("  %-11s HostedCluster %s/%s, stanza %s; %s\n", "Cluster:", hc->ns, hc->name, line,
               hc->res->message);
    }
    sched_format_utc(at, a, sizeof a);
    printf("  %-11s %s: changes are %s: %s\n", "Now:", a,
           e->state.permitted ? "permitted" : "NOT permitted", e->why);
    if (e->state.permitted && e->state.current.end != SCHED_POS_INF) {
        fmt_in(at, e->state.current.end, line, sizeof line);
        printf("  %-11s permitted until %s\n", "Until:", line);
    } else if (!e->state.permitted) {
        if (e->state.no_window || !e->state.has_next)
            printf("  %-11s no window within 10 years\n", "Next:");
        else {
            fmt_in(at, e->state.next.start, line, sizeof line);
            printf("  %-11s a window opens %s\n", "Next:", line);
        }
    }
    start_line(e, at, line, sizeof line);
    if (line[0])
        printf("  %-11s %s\n", "Start:", line);
    printf("  %-11s %s\n", "Change:", change);
    held_line(since, at, line, sizeof line);
    if (line[0])
        printf("  %-11s %s\n", "Held since:", line);
    /* DESIGN.md 3.13: the last request withdrawn, as the webhook recorded it. */
    const decide_audit_t *au = &x->m->audit;
    if (au->withdrawn_by && au->withdrawn_at)
        printf("  %-11s %s, by %s at %s\n", "Withdrawn:",
               au->withdrawn ? au->withdrawn : "a held request", au->withdrawn_by,
               au->withdrawn_at);
    if (cm) {
        common_line(cm, line, sizeof line);
        printf("  %-11s fields that roll every NodePool: %s\n", "Rollouts:", line);
    }
    bool skipped;
    gate_verdict(x, at, line, sizeof line, &skipped);
    printf("  %-11s %s\n", "Health:", line);
    after_line(x, at, line, sizeof line);
    printf("  %-11s %s\n", "After:", line);
    controller_line(x, "ChangesPaused");
    controller_line(x, "ChangesPending");
    controller_line(x, DECIDE_AFTER_CONDITION);
    recorded_text(&x->rec, e->state.permitted, at);
    printf("Next windows%s:\n", hc ? " (the intersection with the HostedCluster's)" : "");
    for (i = 0; i < w->len; i++) {
        fmt_time(w->iv[i].start, a, sizeof a);
        fmt_time(w->iv[i].end, b, sizeof b);
        if (w->iv[i].start == SCHED_NEG_INF || w->iv[i].end == SCHED_POS_INF)
            snprintf(d, sizeof d, "unbounded");
        else
            guard_format_duration(w->iv[i].end - w->iv[i].start, d, sizeof d);
        printf("  %zu. %s - %s  (%s)\n", i + 1, a, b, d);
    }
    if (w->len == 0)
        printf("  (none within 10 years)\n");
}

static json_t *jtime(sched_time_t t)
{
    char buf[32];

    if (t == SCHED_NEG_INF || t == SCHED_POS_INF)
        return json_null();
    sched_format_utc(t, buf, sizeof buf);
    return json_string(buf);
}

static json_t *subject_json(const subject_t *x)
{
    const policy_t *p = x->policy;
    json_t *pol = json_null();

    if (x->st->present && x->st->policy[0])
        pol = json_pack("{s:s,s:b,s:b,s:s?,s:s?,s:s?}", "name", x->st->policy, "found",
                        !x->policy_missing, "ready", p && p->valid, "strategy",
                        p ? policy_strategy_name(p->strategy) : NULL, "timeZone",
                        p ? p->time_zone : NULL, "message", p ? p->message : NULL);
    return json_pack("{s:s,s:s,s:s,s:{s:b,s:s,s:b,s:s,s:s?,s:o,s:o},s:o,s:{s:s,s:s,s:b,s:s}}",
                     "kind", x->kind, "namespace", x->ns, "name", x->name, "stanza", "present",
                     x->st->present, "source",
                     x->st->present ? (x->st->from_spec ? "spec" : "annotations") : "none",
                     "valid", x->st->valid || !x->st->present, "strategy",
                     stanza_strategy_name(x->st->strategy), "error",
                     x->st->error[0] ? x->st->error : NULL, "permissiveUntil",
                     x->st->has_permissive_until ? jtime(x->st->permissive_until) : json_null(),
                     "restrictiveUntil",
                     x->st->has_restrictive_until ? jtime(x->st->restrictive_until) : json_null(),
                     "policy", pol, "timeline", "strategy", stanza_strategy_name(x->res->strategy),
                     "reason", x->res->reason, "degraded", x->res->degraded, "message",
                     x->res->message);
}

static int print_json(const subject_t *x, const subject_t *hc, const effective_t *e,
                      const sched_set_t *w, sched_time_t at, const char *change,
                      sched_time_t since, const common_t *cm)
{
    json_t *doc = subject_json(x), *wins = json_array();
    size_t i;
    int rc = -1;

    if (!doc || !wins)
        goto done;
    for (i = 0; i < w->len; i++)
        json_array_append_new(wins, json_pack("{s:o,s:o}", "start", jtime(w->iv[i].start), "end",
                                              jtime(w->iv[i].end)));
    json_object_set_new(doc, "at", jtime(at));
    json_object_set_new(doc, "hostedCluster", hc ? subject_json(hc) : json_null());
    json_object_set_new(doc, "permitted", json_boolean(e->state.permitted));
    json_object_set_new(doc, "why", json_string(e->why));
    json_object_set_new(doc, "until", e->state.permitted ? jtime(e->state.current.end)
                                                         : json_null());
    json_object_set_new(doc, "nextWindowStart",
                        !e->state.permitted && e->state.has_next && !e->state.no_window
                            ? jtime(e->state.next.start) : json_null());
    json_object_set_new(doc, "change", json_string(change));
    json_object_set_new(doc, "heldSince", since == SCHED_NEG_INF ? json_null() : jtime(since));
    json_object_set_new(doc, "heldForSeconds",
                        since == SCHED_NEG_INF ? json_null()
                                               : json_integer(at > since ? at - since : 0));
    const decide_audit_t *au = &x->m->audit;
    json_object_set_new(doc, "withdrawn",
                        au->withdrawn_by && au->withdrawn_at
                            ? json_pack("{s:s, s:s, s:s}", "by", au->withdrawn_by, "at",
                                        au->withdrawn_at, "what",
                                        au->withdrawn ? au->withdrawn : "a held request")
                            : json_null());
    if (e->min.min > 0) {
        char st[1100];
        start_line(e, at, st, sizeof st);
        json_object_set_new(doc, "minTimeLeft",
                            json_pack("{s:I, s:o, s:o, s:b, s:s}", "seconds",
                                      (json_int_t)e->min.min, "effectiveStart",
                                      e->min.found ? jtime(e->min.start) : json_null(),
                                      "lastStart", e->min.found ? jtime(e->min.last) : json_null(),
                                      "tail", e->min.tail, "message", st));
    } else {
        json_object_set_new(doc, "minTimeLeft", json_null());
    }
    if (cm && cm->known)
        json_object_set_new(
            doc, "commonWindow",
            json_pack("{s:s?, s:b, s:b, s:b, s:o, s:I, s:s, s:s}", "held",
                      cm->held[0] ? cm->held : NULL, "permitted", cm->cw.permitted, "hasWindow",
                      cm->cw.has_window, "override", cm->cw.override, "start",
                      cm->cw.has_window ? jtime(cm->cw.start) : json_null(), "nodePools",
                      (json_int_t)cm->cw.pools, "blocking", cm->cw.blocking, "message",
                      cm->cw.message));
    {
        char gate[1024];
        bool skipped, ok = gate_verdict(x, at, gate, sizeof gate, &skipped);
        json_object_set_new(doc, "healthGate",
                            json_pack("{s:b, s:b, s:s}", "passed", ok, "skipped", skipped,
                                      "message", gate));
    }
    json_object_set_new(doc, "recorded", recorded_json(&x->rec, e->state.permitted, at));
    json_object_set(doc, "windows", wins);
    rc = json_dumpf(doc, stdout, JSON_INDENT(2)) == 0 && fputc('\n', stdout) != EOF ? 0 : -1;
done:
    json_decref(wins);
    json_decref(doc);
    return rc;
}

/* ---- the command ---------------------------------------------------------- */

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "%s: %s%s%.64s%s\n", PROG, msg, arg ? " \"" : "", arg ? arg : "",
            arg ? "\"" : "");
    explain_usage(stderr);
    return EXIT_MISSING;
}

static int target(const char *kind, const char *ref, opts_t *o)
{
    const char *slash = strchr(ref, '/');

    if (strcmp(kind, "hostedcluster") == 0 || strcmp(kind, "hc") == 0)
        o->nodepool = 0;
    else if (strcmp(kind, "nodepool") == 0 || strcmp(kind, "np") == 0)
        o->nodepool = 1;
    else
        return usage_error("the kind must be hostedcluster or nodepool, not", kind);
    if (!slash || slash == ref || !slash[1] || strchr(slash + 1, '/') ||
        (size_t)(slash - ref) >= sizeof o->ns || strlen(slash + 1) >= sizeof o->name)
        return usage_error("the object must be NAMESPACE/NAME, not", ref);
    memcpy(o->ns, ref, (size_t)(slash - ref));
    o->ns[slash - ref] = '\0';
    snprintf(o->name, sizeof o->name, "%s", slash + 1);
    return -1;
}

/* Returns -1 to go on, or an exit status. */
static int parse_args(int argc, char **argv, opts_t *o)
{
    const char *pos[2] = {NULL, NULL};
    int i, npos = 0;

    memset(o, 0, sizeof *o);
    o->count = 5;
    o->at = (sched_time_t)time(NULL);
    for (i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            explain_usage(stdout);
            return 0;
        } else if (strcmp(a, "--kubeconfig") == 0 && v) {
            o->kubeconfig = argv[++i];
        } else if (strcmp(a, "--context") == 0 && v) {
            o->context = argv[++i];
        } else if (strcmp(a, "--at") == 0 && v) {
            if (sched_parse_rfc3339(argv[++i], &o->at) != 0)
                return usage_error("--at needs an RFC 3339 time, not", v);
        } else if (strcmp(a, "--count") == 0 && v) {
            char *end;
            errno = 0;
            o->count = strtol(argv[++i], &end, 10);
            if (errno || *end || end == v || o->count < 1 || o->count > MAX_COUNT)
                return usage_error("--count needs a number from 1 to 100, not", v);
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && v) {
            if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0)
                return usage_error("unknown output format", v);
            o->json = strcmp(argv[++i], "json") == 0;
        } else if (a[0] == '-' || npos == 2) {
            return usage_error("unknown or incomplete argument", a);
        } else {
            pos[npos++] = a;
        }
    }
    if (npos != 2)
        return usage_error("needs hostedcluster|nodepool NAMESPACE/NAME", NULL);
    return target(pos[0], pos[1], o);
}

/* Plans the object through the one-shot view v, with decide_plan() as
 * reconcile does, and explains the plan; returns the exit status. */
static int explain(const opts_t *o, oneshot_t *v)
{
    subject_t *x = v->self, *hc = v->hc;
    const decide_view_t view = oneshot_view(v);
    char change[1024], err[256];
    decide_plan_t p;
    common_t cm;
    sched_set_t w;
    effective_t e;
    sched_time_t since;
    int rc, status = EXIT_ACCESS;

    sched_set_init(&w);
    rc = decide_plan(&view, x->dk, x->ns, x->name, o->at, &p, err, sizeof err);
    if (rc == 0 && (!p.decided || (hc && !p.cluster)))
        rc = HCP_ENOMEM; /* the view has the object: only resolving can fail */
    if (rc == 0) {
        x->res = p.res;
        x->change = p.change;
        if (hc) {
            hc->res = p.cluster;
            hc->change = p.change;
        }
        rc = explain_state(x, hc, &p, o->at, &e);
    }
    if (rc != 0 || (rc = sched_windows(e.sched, o->at, (size_t)o->count, &w)) != 0) {
        fprintf(stderr, "%s: cannot compute the schedule (%s)\n", PROG, hcp_strerror(rc));
        goto done;
    }
    if (!hc)
        common_of(v, x, &p, &cm);
    pending(x, e.state.permitted, &p.d, change, sizeof change);
    since = decide_held_since(&p);
    if (o->json ? print_json(x, hc, &e, &w, o->at, change, since, hc ? NULL : &cm) != 0
                : (print_text(x, hc, &e, &w, o->at, change, since, hc ? NULL : &cm), 0)) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        goto done;
    }
    status = x->policy_missing || (hc && hc->policy_missing) ? EXIT_MISSING : 0;
done:
    decide_plan_free(&p);
    sched_set_free(&w);
    return status;
}

int explain_main(int argc, char **argv)
{
    subject_t x = {0}, hc = {0};
    oneshot_t v = {0};
    session_t s;
    opts_t o;
    int status;

    if ((status = parse_args(argc, argv, &o)) >= 0)
        return status;
    if ((status = oneshot_open(&s, o.kubeconfig, o.context)) >= 0)
        return status;
    v.s = &s;
    v.at = o.at;
    v.self = &x;
    snprintf(x.ns, sizeof x.ns, "%s", o.ns);
    snprintf(x.name, sizeof x.name, "%s", o.name);
    if ((status = oneshot_read_subject(&v, &x, o.nodepool, NULL)) >= 0)
        goto done;
    recorded_read(&x.rec, o.nodepool, x.ns, x.name, oneshot_get_cb, &s);
    if (o.nodepool) {
        const char *cluster = ((const decide_np_t *)x.slim)->cluster_name;
        snprintf(hc.ns, sizeof hc.ns, "%s", o.ns);
        snprintf(hc.name, sizeof hc.name, "%s", cluster ? cluster : "");
        if (!cluster || !cluster[0]) {
            fprintf(stderr, "%s: NodePool %s/%s has no spec.clusterName\n", PROG, o.ns, o.name);
            status = EXIT_MISSING;
            goto done;
        }
        if ((status = oneshot_read_subject(&v, &hc, 0, NULL)) >= 0)
            goto done;
        v.hc = &hc;
        oneshot_read_capi(&v, &x);
    } else {
        oneshot_read_pools(&v, &x);
    }
    status = explain(&o, &v);
    if (fflush(stdout) != 0 || ferror(stdout))
        status = EXIT_ACCESS;
done:
    oneshot_free(&v);
    oneshot_subject_free(&hc);
    oneshot_subject_free(&x);
    oneshot_close(&s);
    return status;
}
