#include "policy/behavior.h"

#include <stdio.h>
#include <string.h>

#define REASONLEN 1100 /* "Excluded: " plus the longest exclusion reason */

/* One period of constant state, as kept in status.behavior.history. */
typedef struct period {
    char strategy[32];  /* strategy in force */
    int permitted;      /* 1: ChangesUnpaused, 0: ChangesPaused */
    sched_time_t start; /* SCHED_NEG_INF: since forever */
    sched_time_t end;   /* SCHED_POS_INF: ongoing */
} period_t;

static const char *state_name(int permitted)
{
    return permitted ? "ChangesUnpaused" : "ChangesPaused";
}

/* A new JSON timestamp, or null for an unbounded end. */
static json_t *time_json(sched_time_t t)
{
    char buf[32];

    if (t == SCHED_NEG_INF || t == SCHED_POS_INF)
        return json_null();
    sched_format_utc(t, buf, sizeof buf);
    return json_string(buf);
}

/* Parses a status timestamp; null means unbounded (the given default). */
static int time_of(const json_t *v, sched_time_t unbounded, sched_time_t *t)
{
    if (v == NULL || json_is_null(v)) {
        *t = unbounded;
        return 0;
    }
    if (!json_is_string(v))
        return -1;
    return sched_parse_rfc3339(json_string_value(v), t) == 0 ? 0 : -1;
}

/* The strategy in force: an invalid policy behaves as Restrictive. */
static const char *effective_strategy(const policy_t *p)
{
    return p->valid ? policy_strategy_name(p->strategy) : "Restrictive";
}

/* Why the policy is in the given state at t: a CamelCase token, or for an
 * exclusion "Excluded: <reason>". */
static void reason_at(const policy_t *p, sched_t *s, sched_time_t t, int permitted, char *buf,
                      size_t len)
{
    const char *why;

    if (!p->valid)
        why = "PolicyInvalid";
    else if (p->strategy == POLICY_RESTRICTIVE)
        why = "StrategyRestrictive";
    else if (p->strategy == POLICY_MAINTENANCE_SCHEDULE && !p->has_schedule)
        why = "NoMaintenanceSchedule";
    else if (!permitted && (why = sched_exclusion_at(s, t, NULL)) != NULL) {
        /* An exclusion, of the schedule or of a calendar (also beside
         * Permissive). */
        if (why[0] == '\0')
            snprintf(buf, len, "Excluded");
        else
            snprintf(buf, len, "Excluded: %.*s", (int)(len > 11 ? len - 11 : 0), why);
        return;
    } else if (p->strategy == POLICY_PERMISSIVE)
        why = "StrategyPermissive";
    else if (permitted)
        why = p->has_permit ? "InMaintenanceWindow" : "OutsideExclusions";
    else if (!p->has_permit)
        why = "NoMaintenanceWindows";
    else
        why = "OutsideMaintenanceWindow";
    snprintf(buf, len, "%s", why);
}

/* The condition reason: the token before any ": <text>". */
static void reason_token(const char *reason, char *buf, size_t len)
{
    size_t n = strcspn(reason, ":");

    snprintf(buf, len, "%.*s", (int)n, reason);
}

static int set(json_t *obj, const char *key, json_t *v)
{
    if (v == NULL)
        return HCP_ENOMEM;
    return json_object_set_new(obj, key, v) == 0 ? 0 : HCP_ENOMEM;
}

/* {"state", "startTime", "endTime", "reason"} for the period [start, end)
 * in state `permitted`; the reason is the one at instant `at` inside it. */
static int state_json(const policy_t *p, sched_t *s, int permitted, sched_time_t start,
                      sched_time_t end, sched_time_t at, json_t **out)
{
    char reason[REASONLEN];
    json_t *o = json_object();
    int rc;

    *out = NULL;
    if (o == NULL)
        return HCP_ENOMEM;
    reason_at(p, s, at, permitted, reason, sizeof reason);
    if ((rc = set(o, "state", json_string(state_name(permitted)))) < 0 ||
        (rc = set(o, "startTime", time_json(start))) < 0 ||
        (rc = set(o, "endTime", time_json(end))) < 0 ||
        (rc = set(o, "reason", json_string(reason))) < 0)
        goto fail;
    *out = o;
    return 0;
fail:
    json_decref(o);
    return rc;
}

/* The schedule's last periods up to now, newest first (the newest one
 * ongoing). Returns the count or a negative error. */
static int derive(const policy_t *p, sched_t *s, sched_time_t now, period_t *out, int max)
{
    sched_time_t t = now, end = SCHED_POS_INF, when;
    int n = 0, state, rc;

    if ((state = sched_permitted(s, now)) < 0)
        return state;
    while (n < max) {
        period_t *e = &out[n++];
        snprintf(e->strategy, sizeof e->strategy, "%s", effective_strategy(p));
        e->permitted = state;
        e->end = end;
        if ((rc = sched_prev_transition(s, t, &when)) < 0)
            return rc;
        if (rc == 0 || when == SCHED_NEG_INF) {
            e->start = SCHED_NEG_INF;
            break;
        }
        e->start = when;
        end = when;
        state = !state;
        t = when - 1;
    }
    return n;
}

/* Reads a previous status.behavior.history; malformed entries end it. */
static int read_history(const json_t *prev, period_t *out, int max)
{
    const json_t *b = json_object_get(prev, "behavior");
    const json_t *h = json_object_get(b, "history");
    size_t i;
    int n = 0;

    if (!json_is_array(h))
        return 0;
    for (i = 0; i < json_array_size(h) && n < max; i++) {
        const json_t *e = json_array_get(h, i);
        const json_t *st = json_object_get(e, "strategy");
        const json_t *state = json_object_get(e, "state");
        period_t *x = &out[n];
        if (!json_is_string(st) || !json_is_string(state))
            break;
        if (strcmp(json_string_value(state), "ChangesUnpaused") == 0)
            x->permitted = 1;
        else if (strcmp(json_string_value(state), "ChangesPaused") == 0)
            x->permitted = 0;
        else
            break;
        if (time_of(json_object_get(e, "startTime"), SCHED_NEG_INF, &x->start) != 0 ||
            time_of(json_object_get(e, "endTime"), SCHED_POS_INF, &x->end) != 0)
            break;
        snprintf(x->strategy, sizeof x->strategy, "%s", json_string_value(st));
        n++;
    }
    return n;
}

/* The periods as status.behavior.history, newest first. */
static int history_json(const period_t *h, int n, json_t **out)
{
    json_t *arr = json_array();
    int i, rc;

    if (arr == NULL)
        return HCP_ENOMEM;
    for (i = 0; i < n; i++) {
        json_t *e = json_object();
        if (e == NULL || json_array_append_new(arr, e) != 0) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        if ((rc = set(e, "strategy", json_string(h[i].strategy))) < 0 ||
            (rc = set(e, "state", json_string(state_name(h[i].permitted)))) < 0 ||
            (rc = set(e, "startTime", time_json(h[i].start))) < 0 ||
            (rc = set(e, "endTime", time_json(h[i].end))) < 0)
            goto fail;
    }
    *out = arr;
    return 0;
fail:
    json_decref(arr);
    return rc;
}

static int history(const policy_t *p, sched_t *s, sched_time_t now, const json_t *prev,
                   int permitted_now, json_t **out)
{
    period_t derived[BEHAVIOR_HISTORY], old[BEHAVIOR_HISTORY], merged[BEHAVIOR_HISTORY];
    const json_t *gen = json_object_get(prev, "observedGeneration");
    int nd, no, nm = 0, i;

    *out = NULL;
    no = prev != NULL ? read_history(prev, old, BEHAVIOR_HISTORY) : 0;
    if (no == 0) {
        if ((nd = derive(p, s, now, derived, BEHAVIOR_HISTORY)) < 0)
            return nd;
        memcpy(merged, derived, (size_t)nd * sizeof *derived);
        nm = nd;
    } else if (json_is_integer(gen) && json_integer_value(gen) == p->generation) {
        /* Same spec: transitions newer than the recorded newest period are
         * real; everything older stays as recorded. */
        if ((nd = derive(p, s, now, derived, BEHAVIOR_HISTORY)) < 0)
            return nd;
        for (i = 0; i < nd && derived[i].start > old[0].start; i++)
            merged[nm++] = derived[i];
        if (nm > 0)
            old[0].end = merged[nm - 1].start;
        for (i = 0; i < no && nm < BEHAVIOR_HISTORY; i++)
            merged[nm++] = old[i];
    } else {
        /* Spec edited: the new spec is in force from now on. */
        period_t *e = &merged[nm++];
        snprintf(e->strategy, sizeof e->strategy, "%s", effective_strategy(p));
        e->permitted = permitted_now;
        e->start = now;
        e->end = SCHED_POS_INF;
        if (old[0].end > now)
            old[0].end = now;
        for (i = 0; i < no && nm < BEHAVIOR_HISTORY; i++)
            merged[nm++] = old[i];
    }

    return history_json(merged, nm, out);
}

static int upcoming(sched_t *s, sched_time_t now, json_t **out)
{
    sched_interval_t iv;
    sched_time_t t = now;
    json_t *arr = json_array();
    int n, rc;

    *out = NULL;
    if (arr == NULL)
        return HCP_ENOMEM;
    for (n = 0; n < BEHAVIOR_UPCOMING; n++) {
        json_t *e;
        if ((rc = sched_next(s, t, &iv)) < 0)
            goto fail;
        if (rc == 0 || (iv.start != SCHED_NEG_INF && iv.start - now >= SCHED_LOOKAHEAD))
            break;
        e = json_object();
        if (e == NULL || json_array_append_new(arr, e) != 0) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        if ((rc = set(e, "startTime", time_json(iv.start))) < 0 ||
            (rc = set(e, "endTime", time_json(iv.end))) < 0)
            goto fail;
        if (iv.end == SCHED_POS_INF)
            break;
        t = iv.end;
    }
    *out = arr;
    return 0;
fail:
    json_decref(arr);
    return rc;
}

/* A condition, keeping the previous lastTransitionTime while its status is
 * unchanged. */
static int condition(const char *type, int status, const char *reason, const char *message,
                     int64_t generation, sched_time_t now, const json_t *prev, json_t **out)
{
    const json_t *conds = json_object_get(prev, "conditions");
    const char *st = status ? "True" : "False";
    json_t *c = json_object(), *ltt = NULL;
    size_t i;
    int rc;

    *out = NULL;
    if (c == NULL)
        return HCP_ENOMEM;
    for (i = 0; json_is_array(conds) && i < json_array_size(conds); i++) {
        const json_t *pc = json_array_get(conds, i);
        const json_t *pt = json_object_get(pc, "type"), *ps = json_object_get(pc, "status");
        const json_t *pl = json_object_get(pc, "lastTransitionTime");
        sched_time_t t;
        if (json_is_string(pt) && strcmp(json_string_value(pt), type) == 0 &&
            json_is_string(ps) && strcmp(json_string_value(ps), st) == 0 &&
            time_of(pl, SCHED_NEG_INF, &t) == 0 && t != SCHED_NEG_INF && t <= now)
            ltt = time_json(t);
    }
    if (ltt == NULL)
        ltt = time_json(now);
    if ((rc = set(c, "type", json_string(type))) < 0 ||
        (rc = set(c, "status", json_string(st))) < 0 ||
        (rc = set(c, "reason", json_string(reason))) < 0 ||
        (rc = set(c, "message", json_string(message))) < 0 ||
        (rc = set(c, "lastTransitionTime", ltt)) < 0 ||
        (rc = set(c, "observedGeneration", json_integer(generation))) < 0)
        goto fail;
    *out = c;
    return 0;
fail:
    json_decref(c);
    return rc;
}

/* A calendar's state as the status words it (condition reason, `state`). */
static const char *calendar_state(policy_calendar_state_t st)
{
    switch (st) {
    case POLICY_CALENDAR_READ: return "Read";
    case POLICY_CALENDAR_MISSING: return "NotFound";
    case POLICY_CALENDAR_UNREADABLE: return "Unreadable";
    case POLICY_CALENDAR_UNREAD: break;
    }
    return "NotReadYet";
}

/* status.exclusionCalendars: what was read from each calendar. */
static int calendars_json(const policy_t *p, json_t **out)
{
    json_t *arr = json_array();
    *out = arr;
    if (!arr)
        return HCP_ENOMEM;
    for (size_t i = 0; i < p->n_calendars; i++) {
        const policy_calendar_t *cal = &p->calendars[i];
        json_t *probs = json_array();
        json_t *o = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:o*}", "name", cal->name,
                              "scope", policy_scope_name(cal->scope), "state",
                              calendar_state(cal->state), "events",
                              (json_int_t)cal->read.events, "cancelledEvents",
                              (json_int_t)cal->read.cancelled, "problemCount",
                              (json_int_t)cal->read.n_problems, "problems", probs);
        if (!o || json_array_append_new(arr, o) != 0)
            return HCP_ENOMEM;
        if (cal->key && json_object_set_new(o, "key", json_string(cal->key)) != 0)
            return HCP_ENOMEM;
        if (cal->why && json_object_set_new(o, "message", json_string(cal->why)) != 0)
            return HCP_ENOMEM;
        for (size_t k = 0; probs && k < cal->read.n_problems && k < ICSREAD_MAX_PROBLEMS; k++) {
            json_t *pr = json_pack("{s:i, s:s}", "line", cal->read.problems[k].line, "message",
                                   cal->read.problems[k].message);
            if (!pr || json_array_append_new(probs, pr) != 0)
                return HCP_ENOMEM;
        }
        if (!probs)
            return HCP_ENOMEM;
    }
    return 0;
}

/* The Ready and ChangesRestricted conditions, added to status (which owns
 * them from then on). Returns 0 or HCP_ENOMEM. */
static int conditions(const policy_t *p, sched_t *s, sched_time_t now, int permitted,
                      const json_t *prev_status, json_t *status)
{
    char reason[REASONLEN], token[64], msg[REASONLEN + 128];
    json_t *conds, *v;
    int rc;

    if ((conds = json_array()) == NULL)
        return HCP_ENOMEM;
    if ((rc = set(status, "conditions", conds)) < 0)
        return rc;
    if ((rc = condition("Ready", p->valid, p->valid ? "PolicyValid" : "InvalidSpec",
                        p->valid ? "the policy is valid and its schedule is computed"
                                 : p->message,
                        p->generation, now, prev_status, &v)) < 0 ||
        json_array_append_new(conds, v) != 0) {
        return rc < 0 ? rc : HCP_ENOMEM;
    }
    if (p->valid && p->n_calendars > 0) {
        const policy_calendar_t *bad = NULL;
        size_t events = 0;
        for (size_t i = 0; i < p->n_calendars; i++) {
            events += p->calendars[i].read.events;
            if (!bad && p->calendars[i].state != POLICY_CALENDAR_READ)
                bad = &p->calendars[i];
        }
        if (bad)
            snprintf(msg, sizeof msg, "%s: the changes it covers are held", bad->why);
        else
            snprintf(msg, sizeof msg, "%zu exclusion calendar%s read: %zu events", p->n_calendars,
                     p->n_calendars == 1 ? "" : "s", events);
        if ((rc = condition("CalendarsRead", !bad, calendar_state(bad ? bad->state
                                                                       : POLICY_CALENDAR_READ),
                            msg, p->generation, now, prev_status, &v)) < 0 ||
            json_array_append_new(conds, v) != 0)
            return rc < 0 ? rc : HCP_ENOMEM;
    }
    reason_at(p, s, now, permitted, reason, sizeof reason);
    reason_token(reason, token, sizeof token);
    if (permitted)
        snprintf(msg, sizeof msg, "changes are permitted (%s)", reason);
    else
        snprintf(msg, sizeof msg, "changes are paused (%s)", reason);
    if ((rc = condition("ChangesRestricted", !permitted, token, msg, p->generation, now,
                        prev_status, &v)) < 0 ||
        json_array_append_new(conds, v) != 0) {
        return rc < 0 ? rc : HCP_ENOMEM;
    }
    return 0;
}

int behavior_status(const policy_t *p, sched_time_t now, const json_t *prev_status,
                    json_t **out)
{
    sched_time_t start = SCHED_NEG_INF, end = SCHED_POS_INF, after = SCHED_POS_INF;
    json_t *status = NULL, *beh = NULL, *cur = NULL, *nxt = NULL, *v = NULL;
    sched_t *s;
    int permitted, rc;

    *out = NULL;
    if ((s = policy_schedule(p)) == NULL)
        return HCP_ENOMEM;
    if ((rc = permitted = sched_permitted(s, now)) < 0)
        goto fail;
    if ((rc = sched_prev_transition(s, now, &start)) < 0)
        goto fail;
    if (rc == 0)
        start = SCHED_NEG_INF;
    if ((rc = sched_next_transition(s, now, &end)) < 0)
        goto fail;
    if (rc == 0)
        end = SCHED_POS_INF;
    if (end != SCHED_POS_INF) {
        if ((rc = sched_next_transition(s, end, &after)) < 0)
            goto fail;
        if (rc == 0)
            after = SCHED_POS_INF;
    }

    rc = HCP_ENOMEM;
    if ((status = json_object()) == NULL || (beh = json_object()) == NULL)
        goto fail;
    if ((rc = state_json(p, s, permitted, start, end, now, &cur)) < 0)
        goto fail;
    if ((rc = set(beh, "current", cur)) < 0)
        goto fail;
    if (end != SCHED_POS_INF) {
        if ((rc = state_json(p, s, !permitted, end, after, end, &nxt)) < 0)
            goto fail;
    } else if ((nxt = json_null()) == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    if ((rc = set(beh, "next", nxt)) < 0)
        goto fail;
    if ((rc = upcoming(s, now, &v)) < 0 || (rc = set(beh, "upcoming", v)) < 0)
        goto fail;
    if ((rc = history(p, s, now, prev_status, permitted, &v)) < 0 ||
        (rc = set(beh, "history", v)) < 0)
        goto fail;
    if ((rc = set(status, "observedGeneration", json_integer(p->generation))) < 0)
        goto fail;
    rc = set(status, "behavior", beh);
    beh = NULL; /* owned by status from here, whatever set() returned */
    if (rc < 0)
        goto fail;

    if ((rc = conditions(p, s, now, permitted, prev_status, status)) < 0)
        goto fail;
    if (p->valid && p->n_calendars > 0) {
        if ((rc = calendars_json(p, &v)) < 0) {
            json_decref(v);
            goto fail;
        }
        if ((rc = set(status, "exclusionCalendars", v)) < 0)
            goto fail;
    }
    sched_unref(s);
    *out = status;
    return 0;
fail:
    json_decref(beh);
    json_decref(status);
    sched_unref(s);
    return rc;
}

int behavior_history_extend(const json_t *prev_status, const char *strategy, int permitted,
                            sched_time_t start, sched_time_t now, json_t **out)
{
    period_t h[BEHAVIOR_HISTORY + 1];
    int n = prev_status != NULL ? read_history(prev_status, h + 1, BEHAVIOR_HISTORY) : 0;

    *out = NULL;
    if (n > 0 && h[1].permitted == (permitted != 0) && strcmp(h[1].strategy, strategy) == 0)
        return history_json(h + 1, n, out); /* no transition: as recorded */
    /* A period cannot start before the one it follows: a timeline that
     * changed (a policy edit) is in force from now on. */
    if (n > 0 && start <= h[1].start)
        start = now;
    snprintf(h[0].strategy, sizeof h[0].strategy, "%s", strategy);
    h[0].permitted = permitted != 0;
    h[0].start = start;
    h[0].end = SCHED_POS_INF;
    if (n > 0 && h[1].end > start)
        h[1].end = start;
    return history_json(h, n + 1 > BEHAVIOR_HISTORY ? BEHAVIOR_HISTORY : n + 1, out);
}
