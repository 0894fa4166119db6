/* guard.c: evaluating the guard rails (guard.h) on an effective schedule. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/guard.h"

#include "schedule/minleft.h"

const char *guard_rule_name(guard_rule_t r)
{
    static const char *const names[GUARD_NRULES] = {"minPermittedTime", "maxExclusionLength",
                                                    "maxRestrictiveUntil", "minTimeLeft"};
    return (unsigned)r < GUARD_NRULES ? names[r] : "unknown";
}

void guard_format_duration(sched_time_t secs, char *buf, size_t len)
{
    long long d = secs / 86400, h = secs % 86400 / 3600, m = secs % 3600 / 60, s = secs % 60;
    long long v[4] = {d, h, m, s};
    const char *u = "dhms";
    size_t o = 0;
    int i;

    if (len == 0)
        return;
    buf[0] = '\0';
    for (i = 0; i < 4; i++)
        if (v[i] > 0 && o < len)
            o += (size_t)snprintf(buf + o, len - o, "%s%lld%c", o ? " " : "", v[i], u[i]);
    if (o == 0)
        snprintf(buf, len, "0s");
}

/* The permitted blocks of at least min_block, clipped to [h0, h1). A block
 * cut by either end of the horizon is judged by its whole length. */
static int counted_blocks(sched_t *s, sched_time_t h0, sched_time_t h1, sched_time_t min_block,
                          sched_set_t *out)
{
    sched_set_t raw;
    size_t i;
    int rc;

    sched_set_init(&raw);
    if ((rc = sched_between(s, h0, h1, &raw)) < 0)
        goto done;
    for (i = 0; i < raw.len; i++) {
        sched_interval_t iv = raw.iv[i], whole = iv;
        /* the maximal interval holding the clipped one's start is the block */
        if ((iv.start == h0 || iv.end == h1) && (rc = sched_containing(s, iv.start, &whole)) < 0)
            goto done;
        int unbounded = whole.start == SCHED_NEG_INF || whole.end == SCHED_POS_INF;
        if ((unbounded || whole.end - whole.start >= min_block) &&
            (rc = sched_set_add(out, iv.start, iv.end)) < 0)
            goto done;
    }
    rc = 0;
done:
    sched_set_free(&raw);
    return rc;
}

/* Permitted time counted before x: prefix[k] holds the lengths of blocks
 * 0..k-1. */
static sched_time_t measure_before(const sched_set_t *b, const sched_time_t *prefix,
                                   sched_time_t x)
{
    size_t k = sched_set_search(b, x);
    sched_time_t m = prefix[k];

    if (k < b->len && b->iv[k].start < x)
        m += x - b->iv[k].start;
    return m;
}

static int cmp_time(const void *a, const void *b)
{
    sched_time_t x = *(const sched_time_t *)a, y = *(const sched_time_t *)b;
    return (x > y) - (x < y);
}

/* The least-permitted periods: candidates are where a period's start
 * leaves a block or its end reaches one (the only local minima), plus the
 * two ends of the horizon. Sets *least and *first_short (the earliest
 * candidate short of min, or -1 with *short_by 0). */
static int scan_periods(const sched_set_t *b, sched_time_t h0, sched_time_t h1, sched_time_t p,
                        sched_time_t min, sched_time_t *least, sched_time_t *first_short,
                        sched_time_t *short_by)
{
    sched_time_t *prefix = malloc((b->len + 1) * sizeof *prefix);
    sched_time_t *cand = malloc((2 * b->len + 2) * sizeof *cand);
    size_t i, n = 0;

    if (prefix == NULL || cand == NULL) {
        free(prefix);
        free(cand);
        return HCP_ENOMEM;
    }
    prefix[0] = 0;
    for (i = 0; i < b->len; i++)
        prefix[i + 1] = prefix[i] + (b->iv[i].end - b->iv[i].start);
    cand[n++] = h0;
    cand[n++] = h1 - p;
    for (i = 0; i < b->len; i++) {
        if (b->iv[i].end >= h0 && b->iv[i].end <= h1 - p)
            cand[n++] = b->iv[i].end;
        if (b->iv[i].start - p >= h0 && b->iv[i].start - p <= h1 - p)
            cand[n++] = b->iv[i].start - p;
    }
    qsort(cand, n, sizeof *cand, cmp_time);
    *least = -1;
    *first_short = -1;
    *short_by = 0;
    for (i = 0; i < n; i++) {
        sched_time_t f = measure_before(b, prefix, cand[i] + p) - measure_before(b, prefix, cand[i]);
        if (*least < 0 || f < *least)
            *least = f;
        if (f < min && *first_short < 0) {
            *first_short = cand[i];
            *short_by = min - f;
        }
    }
    free(prefix);
    free(cand);
    return 0;
}

static void add_violation(guard_verdict_t *out, guard_rule_t rule, sched_time_t by,
                          sched_time_t a, sched_time_t b, const char *msg)
{
    guard_violation_t *v = &out->v[out->n++];

    v->rule = rule;
    v->by = by;
    v->period_start = a;
    v->period_end = b;
    snprintf(v->message, sizeof v->message, "%s", msg);
    out->allowed = 0;
}

static int check_min_permitted(const guard_config_t *cfg, sched_t *s, sched_time_t now,
                               guard_verdict_t *out)
{
    sched_time_t h1 = now + GUARD_HORIZON, p = cfg->period > GUARD_HORIZON ? GUARD_HORIZON
                                                                           : cfg->period;
    sched_time_t least, first, by;
    char a[32], b[32], have[48], need[48], len[48], blk[48], byf[48], msg[GUARD_MSGLEN];
    sched_set_t blocks;
    int rc;

    sched_set_init(&blocks);
    if ((rc = counted_blocks(s, now, h1, cfg->min_block, &blocks)) < 0 ||
        (rc = scan_periods(&blocks, now, h1, p, cfg->min_permitted, &least, &first, &by)) < 0)
        goto done;
    out->least_permitted = least;
    if (first >= 0) {
        sched_format_utc(first, a, sizeof a);
        sched_format_utc(first + p, b, sizeof b);
        guard_format_duration(cfg->min_permitted - by, have, sizeof have);
        guard_format_duration(cfg->min_permitted, need, sizeof need);
        guard_format_duration(p, len, sizeof len);
        guard_format_duration(cfg->min_block, blk, sizeof blk);
        guard_format_duration(by, byf, sizeof byf);
        snprintf(msg, sizeof msg,
                 "minPermittedTime: the %s from %s to %s permit %s of changes%s%s%s, %s short "
                 "of the %s required",
                 len, a, b, have, cfg->min_block > 0 ? " in blocks of at least " : "",
                 cfg->min_block > 0 ? blk : "", cfg->min_block > 0 ? " (minBlockLength)" : "",
                 byf, need);
        add_violation(out, GUARD_RULE_MIN_PERMITTED, by, first, first + p, msg);
    }
done:
    sched_set_free(&blocks);
    return rc;
}

/* The first exclusion of the policies, ending after now, longer than the
 * limit (by the most when several are: the worst names the fix). */
static void check_exclusions(const guard_config_t *cfg, const guard_input_t *in,
                             sched_time_t now, guard_verdict_t *out)
{
    const policy_t *wp = NULL;
    size_t i, k, wi = 0;
    sched_time_t worst = 0, wa = 0, wb = 0;
    char a[32], b[32], len[48], max[48], by[48], msg[GUARD_MSGLEN];

    for (k = 0; k < in->n_policies; k++) {
        const policy_t *p = in->policies[k];
        for (i = 0; p && p->valid && i < p->n_exclusions; i++) {
            const policy_exclusion_t *e = &p->exclusions[i];
            sched_time_t from, until, length = (sched_time_t)(e->until_day - e->from_day) * 86400;
            /* Only an exclusion over the limit needs its instants (the
             * length is counted in days): most are not, and a time zone
             * conversion costs more than everything else here. */
            if (length - cfg->max_exclusion <= worst ||
                sched_local_to_utc(p->time_zone, e->until_day, 0, &until) != 0 ||
                sched_local_to_utc(p->time_zone, e->from_day, 0, &from) != 0 || until <= now)
                continue;
            worst = length - cfg->max_exclusion;
            wp = p, wi = i, wa = from, wb = until;
        }
    }
    if (wp == NULL)
        return;
    sched_format_utc(wa, a, sizeof a);
    sched_format_utc(wb, b, sizeof b);
    guard_format_duration(worst + cfg->max_exclusion, len, sizeof len);
    guard_format_duration(cfg->max_exclusion, max, sizeof max);
    guard_format_duration(worst, by, sizeof by);
    snprintf(msg, sizeof msg,
             "maxExclusionLength: policy %s%s%s spec.maintenanceSchedule.exclude[%zu] "
             "(%s to %s, reason \"%.120s\") is %s long, %s more than the %s allowed",
             wp->namespace_, wp->namespace_[0] ? "/" : "", wp->name, wi, a, b,
             wp->exclusions[wi].reason, len, by, max);
    add_violation(out, GUARD_RULE_MAX_EXCLUSION, worst, wa, wb, msg);
}

static void check_restrictive(const guard_config_t *cfg, const guard_input_t *in,
                              sched_time_t now, guard_verdict_t *out)
{
    sched_time_t over = in->restrictive_until - now - cfg->max_restrictive;
    char t[32], by[48], max[48], msg[GUARD_MSGLEN];

    if (!in->has_restrictive_until || over <= 0)
        return;
    sched_format_utc(in->restrictive_until, t, sizeof t);
    guard_format_duration(over, by, sizeof by);
    guard_format_duration(cfg->max_restrictive, max, sizeof max);
    snprintf(msg, sizeof msg,
             "maxRestrictiveUntil: restrictiveUntil %s is %s later than the %s from now allowed",
             t, by, max);
    add_violation(out, GUARD_RULE_MAX_RESTRICTIVE, over, now, in->restrictive_until, msg);
}

/* A minimum time left (min, named key in messages) that no window of eff
 * within the horizon meets: a violation of rule minTimeLeft. */
static int check_min_left(sched_t *eff, sched_time_t min_left, const char *key, sched_time_t now,
                          guard_verdict_t *out)
{
    sched_interval_t first;
    sched_time_t longest;
    char min[48], len[48], by[48], msg[GUARD_MSGLEN];
    int rc = sched_min_left_start(eff, now, min_left, GUARD_HORIZON, &first, NULL);

    if (rc != 0)
        return rc < 0 ? rc : 0;
    if ((rc = sched_longest_window(eff, now, GUARD_HORIZON, &longest)) < 0)
        return rc;
    guard_format_duration(min_left, min, sizeof min);
    guard_format_duration(longest, len, sizeof len);
    guard_format_duration(min_left - longest, by, sizeof by);
    if (longest > 0)
        snprintf(msg, sizeof msg,
                 "%s: a change starts only with %s of its window left, but the longest "
                 "window over the next 12 months is %s (%s short): no change could ever start",
                 key, min, len, by);
    else
        snprintf(msg, sizeof msg,
                 "%s: a change starts only with %s of its window left, but there is no "
                 "window over the next 12 months: no change could ever start",
                 key, min);
    add_violation(out, GUARD_RULE_MIN_TIME_LEFT, min_left - longest, now, now + GUARD_HORIZON,
                  msg);
    return 0;
}

/* minTimeLeft: a window at least that long within the horizon. */
static int check_min_time_left(const guard_config_t *cfg, sched_t *eff, sched_time_t now,
                               guard_verdict_t *out)
{
    return check_min_left(eff, cfg->min_time_left, "minTimeLeft", now, out);
}

int guard_check_policy_min_left(const policy_t *p, sched_time_t now, guard_verdict_t *out)
{
    memset(out, 0, sizeof *out);
    out->allowed = 1;
    out->least_permitted = -1;
    if (!p->valid || p->strategy != POLICY_MAINTENANCE_SCHEDULE || !p->has_schedule)
        return 0;
    /* The larger first: one message says what no window meets. */
    int cp_first = p->min_left_cp >= p->min_left_workers;
    sched_time_t min = cp_first ? p->min_left_cp : p->min_left_workers;
    if (min <= 0)
        return 0;
    return check_min_left(p->sched, min,
                          cp_first ? "spec.minTimeLeft.controlPlane"
                                   : "spec.minTimeLeft.workerNodes",
                          now, out);
}

int guard_check(const guard_config_t *cfg, const guard_input_t *in, sched_time_t now,
                guard_verdict_t *out)
{
    int rc;

    memset(out, 0, sizeof *out);
    out->allowed = 1;
    out->least_permitted = -1;
    if (cfg->min_permitted > 0 && in->effective != NULL &&
        (rc = check_min_permitted(cfg, in->effective, now, out)) < 0)
        return rc;
    if (cfg->max_exclusion > 0)
        check_exclusions(cfg, in, now, out);
    if (cfg->max_restrictive > 0)
        check_restrictive(cfg, in, now, out);
    if (cfg->min_time_left > 0 && in->effective != NULL &&
        (rc = check_min_time_left(cfg, in->effective, now, out)) < 0)
        return rc;
    return 0;
}
