/* Property test: the schedule engine against a brute-force oracle.
 *
 * Random MaintenanceSchedules (frequency, INTERVAL, BYDAY with ordinals,
 * BYMONTHDAY 1..31, BYMONTH, BYSETPOS, UNTIL, start time, duration,
 * exclusions, time zone) are compiled by the engine and compared, minute by
 * minute over a span of days around a random instant between 1990 and 2060,
 * with an oracle that shares nothing with the engine: its own calendar
 * arithmetic decides whether the rule selects a local date (anchored at
 * 1970-01-01 as in DESIGN.md 3.1), and glibc's zone database (TZ + tzset +
 * localtime_r) converts local times with the gap/overlap rules. Interval
 * boundaries (containing, next, prev, transitions, between) are compared
 * exactly wherever the oracle knows them exactly.
 *
 * HCP_TEST_SCALE=small runs a few dozen policies over short spans.
 * HCP_PROPERTY_SEED=<n> replays one seed; HCP_PROPERTY_POLICIES=<n> overrides
 * the count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "schedule/schedule.h"
#include "schedule/testutil_sched.h"

#define DAY 86400
#define MAX_IV 4096

enum freq { F_DAILY, F_WEEKLY, F_MONTHLY, F_YEARLY };

typedef struct byday {
    int ord; /* 0 = every such weekday; 1..5 or -1..-5 within the month */
    int wd;  /* 0 = Monday .. 6 = Sunday */
} byday_t;

typedef struct policy {
    const char *tz;
    int has_rule;
    enum freq freq;
    int interval;
    int n_byday;
    byday_t byday[7];
    int n_bymd;
    int bymd[4];
    int n_bymonth;
    int bymonth[3];
    int n_setpos;
    int setpos[2];
    int has_until;
    int64_t until;
    char rrule[256];
    int start_minute;
    int32_t duration;
    size_t n_ex;
    sched_exclusion_t ex[3];
} policy_t;

typedef struct ivlist {
    int64_t *s, *e;
    size_t len, cap;
} ivlist_t;

/* The oracle's answer over a range of generated local dates. Instants in
 * (lo_exact, hi_exact) are known exactly; an interval start <= lo_exact or an
 * end >= hi_exact may continue beyond what was generated. */
typedef struct oracle {
    ivlist_t set;
    int64_t lo_exact;
    int64_t hi_exact;
    int32_t d_lo, d_hi;
} oracle_t;

static const char *zones[] = {
    "UTC",          "Europe/Zurich",   "America/New_York", "Australia/Lord_Howe",
    "Asia/Kolkata", "Pacific/Chatham", "America/Sao_Paulo", "Europe/London",
};

static int n_reports;
static char cur_tz[64];

/* ---- oracle: local time ----------------------------------------------------- */

static void oracle_set_zone(const char *tz)
{
    if (strcmp(cur_tz, tz) == 0)
        return;
    snprintf(cur_tz, sizeof cur_tz, "%s", tz);
    setenv("TZ", tz, 1);
    tzset();
}

static int64_t tz_off(int64_t u)
{
    time_t tt = (time_t)u;
    struct tm tm;
    if (localtime_r(&tt, &tm) == NULL)
        abort();
    return tm.tm_gmtoff;
}

/* Local wall time (date, second of day) to UTC: the earliest instant showing
 * that wall time, or for a wall time inside a gap, the reading with the
 * offset in force before the gap. */
static int64_t l2u(int32_t day, int sec)
{
    int64_t L = (int64_t)day * DAY + sec;
    int64_t before = tz_off(L - 36 * 3600), after = tz_off(L + 36 * 3600);
    int64_t cands[3] = {before, after, tz_off(L - before)};
    int64_t best = INT64_MAX;
    for (int i = 0; i < 3; i++) {
        int64_t u = L - cands[i];
        if (tz_off(u) == cands[i] && u < best)
            best = u;
    }
    return best != INT64_MAX ? best : L - before;
}

static int32_t local_day_of(int64_t u)
{
    int64_t l = u + tz_off(u);
    return (int32_t)(l >= 0 ? l / DAY : -((-l + DAY - 1) / DAY));
}

/* ---- oracle: does the rule select local date d? ------------------------------ */

static int in_list(const int *a, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return 1;
    return 0;
}

static int weekday_mon0(int32_t d)
{
    int w = (int)((d + 3) % 7); /* 1970-01-01 was a Thursday (3) */
    return w < 0 ? w + 7 : w;
}

/* For MONTHLY/YEARLY: is day-of-month dd (weekday wd) a candidate within
 * its month, before BYSETPOS? */
static int month_candidate(const policy_t *p, int dd, int wd, int dim)
{
    int ok_md = p->n_bymd == 0 || in_list(p->bymd, p->n_bymd, dd);
    int ok_bd = p->n_byday == 0;
    for (int i = 0; i < p->n_byday && !ok_bd; i++) {
        const byday_t *b = &p->byday[i];
        if (b->wd != wd)
            continue;
        if (b->ord == 0 || (b->ord > 0 && (dd - 1) / 7 + 1 == b->ord) ||
            (b->ord < 0 && (dim - dd) / 7 + 1 == -b->ord))
            ok_bd = 1;
    }
    if (p->n_bymd == 0 && p->n_byday == 0)
        return dd == 1; /* DTSTART's day of month */
    return ok_md && ok_bd;
}

static int selects(const policy_t *p, int32_t d)
{
    if (d < 0)
        return 0;
    int y, m, dd;
    tu_civil_from_days(d, &y, &m, &dd);
    int wd = weekday_mon0(d);
    if (p->n_bymonth && !in_list(p->bymonth, p->n_bymonth, m))
        return 0;
    switch (p->freq) {
    case F_DAILY:
        if (d % p->interval != 0)
            return 0;
        if (p->n_bymd && !in_list(p->bymd, p->n_bymd, dd))
            return 0;
        if (p->n_byday) {
            for (int i = 0; i < p->n_byday; i++)
                if (p->byday[i].wd == wd)
                    return 1;
            return 0;
        }
        return 1;
    case F_WEEKLY: {
        int32_t week = (d + 3) / 7; /* weeks start on Monday 1969-12-29 */
        if (week % p->interval != 0)
            return 0;
        if (p->n_byday == 0)
            return wd == 3; /* DTSTART's weekday */
        for (int i = 0; i < p->n_byday; i++)
            if (p->byday[i].wd == wd)
                return 1;
        return 0;
    }
    case F_MONTHLY:
    case F_YEARLY: {
        if (p->freq == F_MONTHLY && ((y - 1970) * 12 + (m - 1)) % p->interval != 0)
            return 0;
        if (p->freq == F_YEARLY && (y - 1970) % p->interval != 0)
            return 0;
        int dim = tu_days_in_month(y, m);
        if (!month_candidate(p, dd, wd, dim))
            return 0;
        if (p->n_setpos == 0)
            return 1;
        /* Position of d among all candidates of its period. */
        int32_t first, last;
        if (p->freq == F_MONTHLY) {
            first = d - (dd - 1);
            last = first + dim - 1;
        } else {
            first = tu_days_from_civil(y, 1, 1);
            last = tu_days_from_civil(y, 12, 31);
        }
        int idx = -1, n = 0;
        for (int32_t x = first; x <= last; x++) {
            int yy, mm, xd;
            tu_civil_from_days(x, &yy, &mm, &xd);
            if (p->n_bymonth && !in_list(p->bymonth, p->n_bymonth, mm))
                continue;
            if (!month_candidate(p, xd, weekday_mon0(x), tu_days_in_month(yy, mm)))
                continue;
            if (x == d)
                idx = n;
            n++;
        }
        for (int i = 0; i < p->n_setpos; i++) {
            int sp = p->setpos[i];
            if ((sp > 0 && idx == sp - 1) || (sp < 0 && idx == n + sp))
                return 1;
        }
        return 0;
    }
    }
    return 0;
}

/* ---- oracle: interval lists -------------------------------------------------- */

static void iv_push(ivlist_t *l, int64_t s, int64_t e)
{
    if (l->len == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->s = realloc(l->s, l->cap * sizeof *l->s);
        l->e = realloc(l->e, l->cap * sizeof *l->e);
        if (!l->s || !l->e)
            abort();
    }
    l->s[l->len] = s;
    l->e[l->len] = e;
    l->len++;
}

static void iv_free(ivlist_t *l)
{
    free(l->s);
    free(l->e);
    memset(l, 0, sizeof *l);
}

typedef struct pair {
    int64_t s, e;
} pair_t;

static int cmp_pair(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    return x->s < y->s ? -1 : x->s > y->s ? 1 : 0;
}

/* Sorts and merges overlapping or touching intervals in place. */
static void iv_normalize(ivlist_t *l)
{
    if (l->len == 0)
        return;
    pair_t *tmp = malloc(l->len * sizeof *tmp);
    if (!tmp)
        abort();
    for (size_t i = 0; i < l->len; i++)
        tmp[i] = (pair_t){l->s[i], l->e[i]};
    qsort(tmp, l->len, sizeof *tmp, cmp_pair);
    size_t n = 0;
    for (size_t i = 0; i < l->len; i++) {
        if (tmp[i].s >= tmp[i].e)
            continue;
        if (n > 0 && tmp[i].s <= l->e[n - 1]) {
            if (tmp[i].e > l->e[n - 1])
                l->e[n - 1] = tmp[i].e;
        } else {
            l->s[n] = tmp[i].s;
            l->e[n] = tmp[i].e;
            n++;
        }
    }
    l->len = n;
    free(tmp);
}

/* out = a \ b, both normalized. */
static void iv_subtract(const ivlist_t *a, const ivlist_t *b, ivlist_t *out)
{
    size_t j = 0;
    for (size_t i = 0; i < a->len; i++) {
        int64_t s = a->s[i], e = a->e[i];
        while (j < b->len && b->e[j] <= s)
            j++;
        size_t k = j;
        while (s < e) {
            if (k >= b->len || b->s[k] >= e) {
                iv_push(out, s, e);
                break;
            }
            if (b->s[k] > s)
                iv_push(out, s, b->s[k]);
            s = b->e[k];
            k++;
        }
    }
}

/* out = a ∩ b or a ∪ b (both normalized). */
static void iv_combine(const ivlist_t *a, const ivlist_t *b, int is_and, ivlist_t *out)
{
    if (is_and) {
        size_t i = 0, j = 0;
        while (i < a->len && j < b->len) {
            int64_t s = a->s[i] > b->s[j] ? a->s[i] : b->s[j];
            int64_t e = a->e[i] < b->e[j] ? a->e[i] : b->e[j];
            if (s < e)
                iv_push(out, s, e);
            if (a->e[i] < b->e[j])
                i++;
            else
                j++;
        }
    } else {
        for (size_t i = 0; i < a->len; i++)
            iv_push(out, a->s[i], a->e[i]);
        for (size_t i = 0; i < b->len; i++)
            iv_push(out, b->s[i], b->e[i]);
        iv_normalize(out);
    }
}

static int64_t max_window(const policy_t *p)
{
    return p->duration ? p->duration : 27 * 3600;
}

/* Builds the permitted set for local dates [d_lo, d_hi]. */
static void oracle_build(const policy_t *p, int32_t d_lo, int32_t d_hi, oracle_t *o)
{
    ivlist_t win = {0}, ex = {0};
    iv_free(&o->set);
    o->d_lo = d_lo;
    o->d_hi = d_hi;
    for (size_t i = 0; i < p->n_ex; i++)
        iv_push(&ex, l2u(p->ex[i].from_day, 0), l2u(p->ex[i].until_day, 0));
    iv_normalize(&ex);
    if (p->has_rule) {
        for (int32_t d = d_lo < 0 ? 0 : d_lo; d <= d_hi; d++) {
            if (!selects(p, d))
                continue;
            int64_t s = l2u(d, p->start_minute * 60);
            if (p->has_until && s > p->until)
                continue;
            int64_t e = p->duration ? s + p->duration : l2u(d + 1, 0);
            iv_push(&win, s, e);
        }
        iv_normalize(&win);
        iv_subtract(&win, &ex, &o->set);
        o->lo_exact = d_lo <= 0 ? INT64_MIN : l2u(d_lo, 0) + max_window(p);
        o->hi_exact = l2u(d_hi + 1, 0);
    } else {
        if (ex.len > 0) {
            ivlist_t all = {0};
            iv_push(&all, INT64_MIN, INT64_MAX);
            iv_subtract(&all, &ex, &o->set);
            iv_free(&all);
        }
        o->lo_exact = INT64_MIN;
        o->hi_exact = INT64_MAX;
    }
    iv_free(&win);
    iv_free(&ex);
}

/* Index of the first oracle interval whose end is after t. */
static size_t o_search(const ivlist_t *l, int64_t t)
{
    size_t lo = 0, hi = l->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->e[mid] > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

static int o_permitted(const ivlist_t *l, int64_t t)
{
    size_t i = o_search(l, t);
    return i < l->len && l->s[i] <= t;
}

/* Builds the oracle for a span, widening backwards until the interval in
 * force at span_start (or the next one) has an exactly known start. */
static void oracle_for_span(const policy_t *p, int64_t span_start, int64_t span_end, oracle_t *o)
{
    int32_t d0 = local_day_of(span_start), d1 = local_day_of(span_end);
    int32_t back = (int32_t)(max_window(p) / DAY) + 3;
    int32_t lo = d0 - back, hi = d1 + back;
    for (;;) {
        oracle_build(p, lo, hi, o);
        size_t i = o_search(&o->set, span_start);
        if (lo <= 0 || i >= o->set.len || o->set.s[i] > o->lo_exact)
            return;
        int32_t widen = (hi - lo) * 8;
        lo = lo - widen < 0 ? 0 : lo - widen;
    }
}

/* ---- random policies ----------------------------------------------------------- */

static const char *wd_name[7] = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"};

static void gen_byday_plain(uint64_t *rng, policy_t *p, int max)
{
    int n = (int)tu_rand_range(rng, 1, max);
    p->n_byday = 0;
    for (int i = 0; i < n; i++) {
        int wd = (int)tu_rand_range(rng, 0, 6);
        int dup = 0;
        for (int j = 0; j < p->n_byday; j++)
            dup |= p->byday[j].wd == wd;
        if (!dup)
            p->byday[p->n_byday++] = (byday_t){0, wd};
    }
}

static void gen_byday_ord(uint64_t *rng, policy_t *p)
{
    static const int ords[] = {1, 2, 3, 4, 5, -1, -1, -1, -2};
    int n = (int)tu_rand_range(rng, 1, 2);
    p->n_byday = 0;
    for (int i = 0; i < n; i++) {
        byday_t b = {ords[tu_rand_range(rng, 0, 8)], (int)tu_rand_range(rng, 0, 6)};
        int dup = 0;
        for (int j = 0; j < p->n_byday; j++)
            dup |= p->byday[j].wd == b.wd && p->byday[j].ord == b.ord;
        if (!dup)
            p->byday[p->n_byday++] = b;
    }
}

static void gen_bymd(uint64_t *rng, policy_t *p, int max)
{
    int n = (int)tu_rand_range(rng, 1, max);
    p->n_bymd = 0;
    for (int i = 0; i < n; i++) {
        int v = tu_chance(rng, 35) ? (int)tu_rand_range(rng, 28, 31) : (int)tu_rand_range(rng, 1, 31);
        if (!in_list(p->bymd, p->n_bymd, v))
            p->bymd[p->n_bymd++] = v;
    }
}

static void gen_bymonth(uint64_t *rng, policy_t *p, int max)
{
    int n = (int)tu_rand_range(rng, 1, max);
    p->n_bymonth = 0;
    for (int i = 0; i < n; i++) {
        int v = (int)tu_rand_range(rng, 1, 12);
        if (!in_list(p->bymonth, p->n_bymonth, v))
            p->bymonth[p->n_bymonth++] = v;
    }
}

static void gen_setpos(uint64_t *rng, policy_t *p)
{
    static const int pos[] = {1, 2, 3, -1, -1, -2};
    p->n_setpos = 1;
    p->setpos[0] = pos[tu_rand_range(rng, 0, 5)];
    if (tu_chance(rng, 25)) {
        int v = pos[tu_rand_range(rng, 0, 5)];
        if (v != p->setpos[0])
            p->setpos[p->n_setpos++] = v;
    }
}

static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

static void format_rrule(policy_t *p)
{
    static const char *fn[] = {"DAILY", "WEEKLY", "MONTHLY", "YEARLY"};
    char *b = p->rrule;
    size_t n = sizeof p->rrule;
    b[0] = '\0';
    append(b, n, "FREQ=%s", fn[p->freq]);
    if (p->interval != 1)
        append(b, n, ";INTERVAL=%d", p->interval);
    if (p->n_bymonth) {
        append(b, n, ";BYMONTH=");
        for (int i = 0; i < p->n_bymonth; i++)
            append(b, n, "%s%d", i ? "," : "", p->bymonth[i]);
    }
    if (p->n_bymd) {
        append(b, n, ";BYMONTHDAY=");
        for (int i = 0; i < p->n_bymd; i++)
            append(b, n, "%s%d", i ? "," : "", p->bymd[i]);
    }
    if (p->n_byday) {
        append(b, n, ";BYDAY=");
        for (int i = 0; i < p->n_byday; i++) {
            if (p->byday[i].ord)
                append(b, n, "%s%d%s", i ? "," : "", p->byday[i].ord, wd_name[p->byday[i].wd]);
            else
                append(b, n, "%s%s", i ? "," : "", wd_name[p->byday[i].wd]);
        }
    }
    if (p->n_setpos) {
        append(b, n, ";BYSETPOS=");
        for (int i = 0; i < p->n_setpos; i++)
            append(b, n, "%s%d", i ? "," : "", p->setpos[i]);
    }
    if (p->has_until) {
        int y, m, d;
        int64_t days = p->until / DAY, sod = p->until % DAY;
        tu_civil_from_days((int32_t)days, &y, &m, &d);
        append(b, n, ";UNTIL=%04d%02d%02dT%02d%02d%02dZ", y, m, d, (int)(sod / 3600),
               (int)(sod / 60 % 60), (int)(sod % 60));
    }
}

static void gen_policy(uint64_t *rng, policy_t *p, int64_t span_start, int64_t span_end)
{
    memset(p, 0, sizeof *p);
    p->tz = zones[tu_rand_range(rng, 0, (int64_t)(sizeof zones / sizeof zones[0]) - 1)];
    p->has_rule = tu_chance(rng, 93);
    int r = (int)tu_rand_range(rng, 0, 99);
    p->freq = r < 25 ? F_DAILY : r < 60 ? F_WEEKLY : r < 85 ? F_MONTHLY : F_YEARLY;
    p->interval = 1;
    switch (p->freq) {
    case F_DAILY:
        if (tu_chance(rng, 50))
            p->interval = (int)tu_rand_range(rng, 2, 10);
        if (tu_chance(rng, 15))
            gen_byday_plain(rng, p, 5);
        if (tu_chance(rng, 10))
            gen_bymonth(rng, p, 3);
        if (tu_chance(rng, 10))
            gen_bymd(rng, p, 4);
        break;
    case F_WEEKLY:
        if (tu_chance(rng, 40))
            p->interval = (int)tu_rand_range(rng, 2, 4);
        if (tu_chance(rng, 90))
            gen_byday_plain(rng, p, 7);
        if (tu_chance(rng, 8))
            gen_bymonth(rng, p, 3);
        break;
    case F_MONTHLY:
    case F_YEARLY: {
        if (p->freq == F_MONTHLY && tu_chance(rng, 40))
            p->interval = (int)tu_rand_range(rng, 2, 6);
        if (p->freq == F_YEARLY && tu_chance(rng, 20))
            p->interval = (int)tu_rand_range(rng, 2, 3);
        if (p->freq == F_YEARLY || tu_chance(rng, 10))
            gen_bymonth(rng, p, p->freq == F_YEARLY ? 2 : 3);
        int mode = (int)tu_rand_range(rng, 0, 99);
        if (mode < 38) {
            gen_bymd(rng, p, 3);
        } else if (mode < 76) {
            gen_byday_ord(rng, p);
        } else if (mode < 92) {
            gen_byday_plain(rng, p, 5);
            if (tu_chance(rng, 70))
                gen_setpos(rng, p);
        } else if (mode < 96) {
            gen_byday_plain(rng, p, 1);
            gen_bymd(rng, p, 2);
        } /* else: neither, DTSTART's day of month */
        break;
    }
    }
    if (tu_chance(rng, 15)) {
        p->has_until = 1;
        p->until = tu_rand_range(rng, span_start - 5 * DAY, span_end + 5 * DAY);
    }
    format_rrule(p);

    int sm = (int)tu_rand_range(rng, 0, 99);
    p->start_minute = sm < 10 ? 0 : sm < 25 ? (int)tu_rand_range(rng, 90, 239)
                                            : (int)tu_rand_range(rng, 0, 1439);
    int dm = (int)tu_rand_range(rng, 0, 99);
    p->duration = dm < 25 ? 0 : dm < 50 ? (int32_t)tu_rand_range(rng, 1, 50) * 3600
                                        : (int32_t)tu_rand_range(rng, 1, 3000) * 60;

    if (tu_chance(rng, p->has_rule ? 35 : 85)) {
        int32_t d0 = (int32_t)(span_start / DAY), d1 = (int32_t)(span_end / DAY);
        p->n_ex = (size_t)tu_rand_range(rng, 1, 3);
        for (size_t i = 0; i < p->n_ex; i++) {
            p->ex[i].from_day = (int32_t)tu_rand_range(rng, d0 - 10, d1 + 5);
            p->ex[i].until_day = p->ex[i].from_day + (int32_t)tu_rand_range(rng, 1, 10);
            p->ex[i].reason = tu_chance(rng, 50) ? "freeze" : NULL;
        }
    }
}

static void describe(const policy_t *p, char *buf, size_t len)
{
    buf[0] = '\0';
    append(buf, len, "tz=%s rrule=%s start=%02d:%02d duration=%ds", p->tz,
           p->has_rule ? p->rrule : "(none)", p->start_minute / 60, p->start_minute % 60,
           (int)p->duration);
    for (size_t i = 0; i < p->n_ex; i++) {
        char f[32], u[32];
        tu_fmt((int64_t)p->ex[i].from_day * DAY, f, sizeof f);
        tu_fmt((int64_t)p->ex[i].until_day * DAY, u, sizeof u);
        f[10] = u[10] = '\0';
        append(buf, len, " exclude=%s..%s", f, u);
    }
}

/* 1 when the oracle finds a selected date in 1970..2200. */
static int selects_anything(const policy_t *p)
{
    int32_t end = tu_days_from_civil(2200, 1, 1);
    for (int32_t d = 0; d < end; d++)
        if (selects(p, d))
            return 1;
    return 0;
}

static int compile_policy(const policy_t *p, int64_t now, sched_t **out)
{
    sched_spec_t spec = {
        .time_zone = p->tz,
        .rrule = p->has_rule ? p->rrule : NULL,
        .start_minute = p->start_minute,
        .duration = p->duration,
        .exclusions = p->ex,
        .n_exclusions = p->n_ex,
    };
    char err[256] = "";
    int rc = sched_compile(&spec, now, out, err, sizeof err);
    /* Rejecting a rule that can never select a date is fine. */
    if (rc == HCP_EINVAL && p->has_rule && err[0] != '\0' && !selects_anything(p))
        return 1;
    if (rc != 0) {
        char d[512];
        describe(p, d, sizeof d);
        print_error("sched_compile failed (%d: %s) for %s\n", rc, err, d);
    }
    return rc;
}

/* ---- comparison ------------------------------------------------------------------ */

typedef struct ctx {
    const policy_t *p;
    int64_t now;
    int64_t span_start, span_end;
    int failed;
} ctx_t;

static void report(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(ctx_t *c, const char *fmt, ...)
{
    c->failed = 1;
    if (++n_reports > 12)
        return;
    char d[512], msg[512], b1[32], b2[32], b3[32];
    describe(c->p, d, sizeof d);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    print_error("MISMATCH %s\n  compiled at %s, span [%s, %s)\n  %s\n", d,
                tu_fmt(c->now, b1, 32), tu_fmt(c->span_start, b2, 32),
                tu_fmt(c->span_end, b3, 32), msg);
}

/* Compares an engine interval with the oracle's interval index i. */
static void compare_iv(ctx_t *c, const oracle_t *o, const char *q, int64_t t, int rc,
                       const sched_interval_t *iv, size_t i)
{
    char b0[32], b1[32], b2[32], b3[32], b4[32];
    if (rc < 0) {
        report(c, "%s(%s) error %d", q, tu_fmt(t, b0, 32), rc);
        return;
    }
    if (i >= o->set.len) {
        if (rc == 1 && iv->start < o->hi_exact)
            report(c, "%s(%s): expected none before %s, got [%s, %s)", q, tu_fmt(t, b0, 32),
                   tu_fmt(o->hi_exact, b1, 32), tu_fmt(iv->start, b2, 32),
                   tu_fmt(iv->end, b3, 32));
        return;
    }
    int64_t s = o->set.s[i], e = o->set.e[i];
    if (s >= o->hi_exact) {
        if (rc == 1 && iv->start < o->hi_exact)
            report(c, "%s(%s): expected nothing starting before %s, got [%s, %s)", q,
                   tu_fmt(t, b0, 32), tu_fmt(o->hi_exact, b1, 32), tu_fmt(iv->start, b2, 32),
                   tu_fmt(iv->end, b3, 32));
        return;
    }
    if (rc != 1) {
        report(c, "%s(%s): expected [%s, %s), got none", q, tu_fmt(t, b0, 32),
               tu_fmt(s, b1, 32), tu_fmt(e, b2, 32));
        return;
    }
    int start_ok = s > o->lo_exact ? iv->start == s : iv->start <= s;
    int end_ok = e < o->hi_exact ? iv->end == e : iv->end >= o->hi_exact;
    if (!start_ok || !end_ok)
        report(c, "%s(%s): expected [%s, %s)%s, got [%s, %s)", q, tu_fmt(t, b0, 32),
               tu_fmt(s, b1, 32), tu_fmt(e, b2, 32),
               e >= o->hi_exact ? " (end open)" : "", tu_fmt(iv->start, b3, 32),
               tu_fmt(iv->end, b4, 32));
}

static void check_policy(ctx_t *c, sched_t *s, const oracle_t *o, uint64_t *rng)
{
    char b0[32], b1[32], b2[32];
    const ivlist_t *set = &o->set;

    /* permitted(t), every minute of the span. */
    size_t i = o_search(set, c->span_start);
    for (int64_t t = c->span_start; t < c->span_end && !c->failed; t += 60) {
        while (i < set->len && set->e[i] <= t)
            i++;
        int want = i < set->len && set->s[i] <= t;
        int got = sched_permitted(s, t);
        if (got != want)
            report(c, "sched_permitted(%s) = %d, expected %d", tu_fmt(t, b0, 32), got, want);
    }
    /* One second before every transition inside the span. */
    for (size_t k = o_search(set, c->span_start); k < set->len && !c->failed; k++) {
        int64_t pts[2] = {set->s[k], set->e[k]};
        for (int j = 0; j < 2; j++) {
            int64_t x = pts[j];
            if (x <= c->span_start || x >= c->span_end)
                continue;
            int want = o_permitted(set, x - 1);
            int got = sched_permitted(s, x - 1);
            if (got != want)
                report(c, "sched_permitted(%s) = %d, expected %d", tu_fmt(x - 1, b0, 32), got,
                       want);
        }
    }
    if (c->failed)
        return;

    /* sched_next walk through the span. */
    int64_t t = c->span_start;
    for (int guard = 0; t < c->span_end && guard < 10000 && !c->failed; guard++) {
        sched_interval_t iv = {0, 0};
        int rc = sched_next(s, t, &iv);
        size_t k = o_search(set, t);
        compare_iv(c, o, "sched_next", t, rc, &iv, k);
        if (k >= set->len || set->e[k] >= o->hi_exact)
            break;
        t = set->e[k];
    }
    /* sched_containing and sched_prev at random instants. */
    for (int n = 0; n < 6 && !c->failed; n++) {
        int64_t x = tu_rand_range(rng, c->span_start, c->span_end - 1);
        if (n == 0 && set->len > 0)
            x = set->s[o_search(set, c->span_start) < set->len ? o_search(set, c->span_start)
                                                                : 0];
        if (x < c->span_start || x >= c->span_end)
            continue;
        sched_interval_t iv = {0, 0};
        int rc = sched_containing(s, x, &iv);
        size_t k = o_search(set, x);
        if (k < set->len && set->s[k] <= x) {
            compare_iv(c, o, "sched_containing", x, rc, &iv, k);
        } else if (rc != 0) {
            report(c, "sched_containing(%s): expected none, got %d [%s, %s)",
                   tu_fmt(x, b0, 32), rc, tu_fmt(iv.start, b1, 32), tu_fmt(iv.end, b2, 32));
        }
        /* prev: the last interval starting at or before x. */
        size_t pk = k < set->len && set->s[k] <= x ? k : k; /* k: first ending after x */
        int has_prev;
        if (k < set->len && set->s[k] <= x) {
            has_prev = 1;
        } else {
            has_prev = k > 0;
            pk = k - 1;
        }
        /* As for transitions: a far previous interval makes the engine
         * search the look-back, so check those only now and then. */
        if (has_prev && pk < set->len && set->s[pk] > o->lo_exact &&
            set->e[pk] > x - SCHED_LOOKAHEAD &&
            (set->e[pk] >= c->span_start - 7 * DAY || tu_chance(rng, 3))) {
            rc = sched_prev(s, x, &iv);
            compare_iv(c, o, "sched_prev", x, rc, &iv, pk);
        }
    }
    /* Transitions: walk forward from span_start, and back from span_end. */
    t = c->span_start;
    for (int guard = 0; t < c->span_end && guard < 10000 && !c->failed; guard++) {
        size_t k = o_search(set, t);
        int64_t want = INT64_MAX;
        if (k < set->len)
            want = set->s[k] > t ? set->s[k] : set->e[k];
        if (want == INT64_MAX && o->hi_exact != INT64_MAX)
            want = o->hi_exact; /* unknown beyond: only a lower bound */
        sched_time_t when = 0;
        int rc = sched_next_transition(s, t, &when);
        if (want < o->hi_exact) {
            if (rc != 1 || when != want)
                report(c, "sched_next_transition(%s) = %d, %s; expected %s", tu_fmt(t, b0, 32),
                       rc, tu_fmt(when, b1, 32), tu_fmt(want, b2, 32));
            t = want;
        } else {
            if (rc == 1 && when < o->hi_exact)
                report(c, "sched_next_transition(%s) = %s; expected none before %s",
                       tu_fmt(t, b0, 32), tu_fmt(when, b1, 32), tu_fmt(o->hi_exact, b2, 32));
            break;
        }
    }
    {
        int64_t x = c->span_end - 1;
        /* Last oracle transition at or before x. */
        int64_t want = INT64_MIN;
        for (size_t k = 0; k < set->len; k++) {
            if (set->s[k] <= x && set->s[k] != INT64_MIN)
                want = set->s[k];
            if (set->e[k] <= x && set->e[k] != INT64_MAX)
                want = set->e[k];
        }
        /* A transition far back makes the engine search up to the whole
         * look-back; do that only now and then to keep the run short. */
        int near = want != INT64_MIN && want > o->lo_exact && want >= c->span_start - 7 * DAY;
        sched_time_t when = 0;
        int rc = near || tu_chance(rng, 3) ? sched_prev_transition(s, x, &when) : -1000;
        if (rc == -1000) {
            /* skipped */
        } else if (want != INT64_MIN && want > o->lo_exact && want > x - SCHED_LOOKAHEAD) {
            if (rc != 1 || when != want)
                report(c, "sched_prev_transition(%s) = %d, %s; expected %s", tu_fmt(x, b0, 32),
                       rc, tu_fmt(when, b1, 32), tu_fmt(want, b2, 32));
        } else if (want == INT64_MIN && o->lo_exact == INT64_MIN && rc != 0) {
            report(c, "sched_prev_transition(%s) = %d, %s; expected none", tu_fmt(x, b0, 32), rc,
                   tu_fmt(when, b1, 32));
        }
    }
    /* sched_between over the span. */
    if (!c->failed) {
        sched_set_t out;
        sched_set_init(&out);
        int rc = sched_between(s, c->span_start, c->span_end, &out);
        ivlist_t want = {0};
        for (size_t k = o_search(set, c->span_start); k < set->len && set->s[k] < c->span_end;
             k++)
            iv_push(&want, set->s[k] > c->span_start ? set->s[k] : c->span_start,
                    set->e[k] < c->span_end ? set->e[k] : c->span_end);
        int same = rc == 0 && out.len == want.len;
        for (size_t k = 0; same && k < want.len; k++)
            same = out.iv[k].start == want.s[k] && out.iv[k].end == want.e[k];
        if (!same)
            report(c, "sched_between: rc %d, %zu intervals, expected %zu", rc, out.len,
                   want.len);
        iv_free(&want);
        sched_set_free(&out);
    }
}

/* Picks the span: anywhere in 1990..2060, or just before a DST change. */
static void pick_span(uint64_t *rng, const char *tz, int small, int64_t *span_start,
                      int64_t *span_end)
{
    int64_t lo = tu_utc(1990, 1, 1, 0, 0, 0), hi = tu_utc(2060, 1, 1, 0, 0, 0);
    int64_t t = tu_rand_range(rng, lo, hi) / 60 * 60;
    if (tu_chance(rng, 45)) {
        oracle_set_zone(tz);
        int64_t off = tz_off(t);
        for (int64_t x = t; x < t + 400 * (int64_t)DAY; x += 3600) {
            if (tz_off(x) != off) {
                t = (x - tu_rand_range(rng, 0, 3 * DAY)) / 60 * 60;
                break;
            }
        }
    }
    int64_t days = small ? tu_rand_range(rng, 1, 2) : tu_rand_range(rng, 1, 5);
    *span_start = t;
    *span_end = t + days * DAY + tu_rand_range(rng, 0, 23) * 3600;
}

static void test_engine_vs_oracle(void **state)
{
    (void)state;
    int small = tu_scale_small();
    int n_policies = small ? 40 : 2000;
    uint64_t seed = 0x5eed2026;
    const char *env = getenv("HCP_PROPERTY_POLICIES");
    if (env)
        n_policies = (int)strtol(env, NULL, 10);
    env = getenv("HCP_PROPERTY_SEED");
    if (env)
        seed = strtoull(env, NULL, 10);
    int failed = 0, compiled = 0;
    for (int n = 0; n < n_policies; n++) {
        uint64_t pseed = seed + (uint64_t)n * 7919;
        uint64_t rng = pseed;
        int64_t span_start, span_end;
        const char *tz = zones[tu_rand_range(&rng, 0, (int64_t)(sizeof zones / sizeof zones[0]) - 1)];
        pick_span(&rng, tz, small, &span_start, &span_end);
        policy_t p;
        gen_policy(&rng, &p, span_start, span_end);
        p.tz = tz;
        int64_t now = span_start;
        /* Results must not depend on where the engine did its initial
         * expansion: sometimes compile far from the span. */
        int w = (int)tu_rand_range(&rng, 0, 19);
        if (w == 0)
            now = span_start - tu_rand_range(&rng, 0, 12 * 365 * (int64_t)DAY);
        else if (w == 1)
            now = span_start + tu_rand_range(&rng, 0, 12 * 365 * (int64_t)DAY);
        else if (w < 6)
            now = span_start + tu_rand_range(&rng, -40 * (int64_t)DAY, 40 * (int64_t)DAY);
        if (now < 0)
            now = 0;

        sched_t *s = NULL;
        int crc = compile_policy(&p, now, &s);
        if (crc == 1)
            continue;
        if (crc != 0) {
            failed++;
            continue;
        }
        compiled++;
        oracle_set_zone(p.tz);
        oracle_t o = {0};
        oracle_for_span(&p, span_start, span_end, &o);
        ctx_t c = {&p, now, span_start, span_end, 0};
        check_policy(&c, s, &o, &rng);
        if (c.failed) {
            failed++;
            if (n_reports <= 12)
                print_error("  (policy #%d, HCP_PROPERTY_SEED=%llu HCP_PROPERTY_POLICIES=%d "
                            "replays up to it)\n",
                            n, (unsigned long long)seed, n + 1);
        }
        iv_free(&o.set);
        sched_unref(s);
    }
    print_message("property: %d policies, %d compiled, %d failed\n", n_policies, compiled,
                  failed);
    if (failed)
        fail_msg("%d of %d random policies disagree with the oracle", failed, n_policies);
}

/* Intersections and unions of two random policies against the oracle. */
static void test_and_or_vs_oracle(void **state)
{
    (void)state;
    int small = tu_scale_small();
    int n_pairs = small ? 15 : 120;
    uint64_t seed = 0xa11d0;
    int failed = 0;
    for (int n = 0; n < n_pairs; n++) {
        uint64_t rng = seed + (uint64_t)n * 104729;
        int64_t span_start, span_end;
        const char *tz = zones[tu_rand_range(&rng, 0, (int64_t)(sizeof zones / sizeof zones[0]) - 1)];
        pick_span(&rng, tz, small, &span_start, &span_end);
        policy_t p[2];
        oracle_t o[2] = {{{0}, 0, 0, 0, 0}, {{0}, 0, 0, 0, 0}};
        sched_t *s[2] = {NULL, NULL};
        int ok = 1;
        for (int k = 0; k < 2; k++) {
            gen_policy(&rng, &p[k], span_start, span_end);
            if (k == 0)
                p[k].tz = tz;
            int crc = compile_policy(&p[k], span_start, &s[k]);
            if (crc == 1) {
                p[k].has_rule = 0; /* rejected as never selecting: use "never" */
                p[k].n_ex = 0;
                s[k] = sched_never();
            } else if (crc != 0) {
                ok = 0;
                continue;
            }
            oracle_set_zone(p[k].tz);
            oracle_for_span(&p[k], span_start, span_end, &o[k]);
        }
        if (!ok) {
            failed++;
            print_error("  (pair #%d)\n", n);
            sched_unref(s[0]);
            sched_unref(s[1]);
            iv_free(&o[0].set);
            iv_free(&o[1].set);
            continue;
        }
        int64_t lo_exact = o[0].lo_exact > o[1].lo_exact ? o[0].lo_exact : o[1].lo_exact;
        int64_t hi_exact = o[0].hi_exact < o[1].hi_exact ? o[0].hi_exact : o[1].hi_exact;
        for (int is_and = 0; is_and < 2; is_and++) {
            sched_t *x = is_and ? sched_and(s[0], s[1]) : sched_or(s[0], s[1]);
            assert_non_null(x);
            oracle_t ox = {{0}, lo_exact, hi_exact, 0, 0};
            iv_combine(&o[0].set, &o[1].set, is_and, &ox.set);
            /* Describe the pair through the first policy and print the second. */
            ctx_t c = {&p[0], span_start, span_start, span_end, 0};
            check_policy(&c, x, &ox, &rng);
            if (c.failed) {
                failed++;
                char d[512];
                describe(&p[1], d, sizeof d);
                if (n_reports <= 12)
                    print_error("  ... as %s with %s\n", is_and ? "sched_and" : "sched_or", d);
            }
            iv_free(&ox.set);
            sched_unref(x);
        }
        sched_unref(s[0]);
        sched_unref(s[1]);
        iv_free(&o[0].set);
        iv_free(&o[1].set);
    }
    print_message("property: %d pairs (and/or), %d failed\n", n_pairs, failed);
    if (failed)
        fail_msg("%d combinations disagree with the oracle", failed);
}

/* The oracle itself, on hand-checked facts, so that a broken oracle cannot
 * pass silently. */
static void test_oracle_self_check(void **state)
{
    (void)state;
    oracle_set_zone("Europe/Zurich");
    assert_int_equal(l2u(tu_days_from_civil(2026, 3, 29), 2 * 3600 + 1800),
                     tu_utc(2026, 3, 29, 1, 30, 0));
    assert_int_equal(l2u(tu_days_from_civil(2026, 10, 25), 2 * 3600 + 1800),
                     tu_utc(2026, 10, 25, 0, 30, 0));
    oracle_set_zone("Australia/Lord_Howe");
    assert_int_equal(l2u(tu_days_from_civil(2026, 10, 4), 2 * 3600 + 900),
                     tu_utc(2026, 10, 3, 15, 45, 0));
    assert_int_equal(l2u(tu_days_from_civil(2026, 4, 5), 3600 + 2700),
                     tu_utc(2026, 4, 4, 14, 45, 0));
    oracle_set_zone("UTC");
    policy_t p = {0};
    p.has_rule = 1;
    p.freq = F_MONTHLY;
    p.interval = 1;
    p.n_byday = 1;
    p.byday[0] = (byday_t){5, 0}; /* 5th Monday */
    assert_true(selects(&p, tu_days_from_civil(2026, 3, 30)));
    assert_false(selects(&p, tu_days_from_civil(2026, 3, 23)));
    p.byday[0] = (byday_t){-1, 4}; /* last Friday */
    assert_true(selects(&p, tu_days_from_civil(2026, 2, 27)));
    assert_false(selects(&p, tu_days_from_civil(2026, 2, 20)));
    p.freq = F_WEEKLY;
    p.interval = 2;
    p.byday[0] = (byday_t){0, 6}; /* every other Sunday */
    assert_true(selects(&p, tu_days_from_civil(1970, 1, 4)));
    assert_false(selects(&p, tu_days_from_civil(1970, 1, 11)));
    p.freq = F_MONTHLY;
    p.interval = 1;
    p.n_byday = 5;
    for (int i = 0; i < 5; i++)
        p.byday[i] = (byday_t){0, i};
    p.n_setpos = 1;
    p.setpos[0] = -1; /* last weekday */
    assert_true(selects(&p, tu_days_from_civil(2026, 1, 30)));
    assert_false(selects(&p, tu_days_from_civil(2026, 1, 29)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_oracle_self_check),
        cmocka_unit_test(test_engine_vs_oracle),
        cmocka_unit_test(test_and_or_vs_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
