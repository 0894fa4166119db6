/* schedule.c: schedule trees and the lazily expanded MaintenanceSchedule leaf.
 *
 * A rule leaf memoises the merged windows of every occurrence whose local
 * date lies in [lo_day, hi_day). Within that span the memo is exact on the
 * UTC range [valid_lo, valid_hi): occurrences before lo_day end before
 * valid_lo (they start before lo_day and last at most dmax) and occurrences
 * from hi_day on start after valid_hi. A query first widens the span until
 * the instants it needs are inside the exact range, so answers never depend
 * on how much was expanded before.
 */
#include "schedule/schedule.h"

#include "schedule/rrule.h"
#include "schedule/tz.h"

#include <libical/ical.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DAY 86400
#define SEED_BACK_DAYS 8     /* initial expansion before the compile instant */
#define SEED_AHEAD_DAYS 40   /* and after it */
#define FIRST_CHUNK_DAYS 32  /* first extension; each further one doubles */
#define RESEED_GAP_DAYS 800  /* a query this far past the memo starts afresh */
/* Supported query instants: 1970-01-01 (the recurrence anchor) to the end
 * of 2500 (libical iterates recurrences up to 2582, which leaves room for
 * the look-ahead). */
#define T_MIN ((sched_time_t)0)
#define T_MAX ((sched_time_t)16756761599LL)

enum kind { K_ALWAYS, K_NEVER, K_BEFORE, K_AFTER, K_AND, K_OR, K_RULE };

struct exclusion {
    sched_time_t from;  /* UTC instant of fromDate 00:00 local */
    sched_time_t until; /* UTC instant of untilDate 00:00 local */
    char *reason;       /* owned; "" when none was given */
};

struct rule {
    struct icalrecurrencetype recur; /* the rule without UNTIL */
    sched_zone_t zone;               /* NULL for UTC */
    bool has_permit;                 /* false: permitted outside exclusions */
    int start_second;                /* window start, seconds after local midnight */
    int32_t duration;                /* seconds; 0 = until next local midnight */
    sched_time_t dmax;               /* upper bound of one window's length */
    sched_until_t until;             /* the rule's UNTIL */
    int week_interval;               /* weekly rules: select every Nth week */
    int32_t week0;                   /* weekly rules: first day of week 0, the
                                        WKST-week holding 1970-01-01 */
    int32_t last_day;                /* no occurrence on a local date after this */
    struct exclusion *ex;            /* sorted by from */
    size_t nex;
    sched_set_t exset; /* union of the exclusions */

    /* Memo of the expansion. */
    int32_t lo_day, hi_day; /* occurrences on local dates [lo_day, hi_day) */
    bool lo_origin;         /* lo_day is the anchor: nothing precedes it */
    bool hi_end;            /* no occurrence on or after hi_day */
    int32_t fwd_chunk;      /* days added by the next forward extension */
    int32_t back_chunk;     /* days added by the next backward extension */
    sched_set_t win;        /* merged windows of the expanded occurrences */
    sched_set_t perm;       /* win minus exclusions, or complement of them */
};

/* What an intersection has learnt from earlier next-window searches.
 * Timelines never change, so it stays true: a window found from t0 is the
 * answer for every t in [t0, its end), and a range known to hold no
 * permitted instant is skipped by later searches instead of walking the
 * look-ahead again. */
struct and_memo {
    bool found;          /* iv is the first window ending after t0 */
    sched_time_t t0;
    sched_time_t E;      /* the end look-ahead iv.end was computed with */
    sched_interval_t iv;
    bool empty;          /* nothing is permitted in [e_lo, e_hi) */
    sched_time_t e_lo, e_hi;
};

struct sched {
    enum kind kind;
    int refs;             /* < 0 for the static constants */
    sched_time_t t;       /* K_BEFORE / K_AFTER */
    sched_t *a, *b;       /* K_AND / K_OR operands (owned references) */
    struct rule *rule;    /* K_RULE (owned) */
    struct and_memo memo; /* K_AND */
};

static sched_t always_node = {K_ALWAYS, -1, 0, NULL, NULL, NULL, {0}};
static sched_t never_node = {K_NEVER, -1, 0, NULL, NULL, NULL, {0}};

static int32_t floor_div32(int32_t a, int32_t b)
{
    int32_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

static int32_t day_of(sched_time_t t)
{
    sched_time_t d = t / DAY;
    if (t % DAY != 0 && t < 0)
        d--;
    return (int32_t)d;
}

/* ---- construction ------------------------------------------------------- */

sched_t *sched_always(void)
{
    return &always_node;
}

sched_t *sched_never(void)
{
    return &never_node;
}

static sched_t *node_new(enum kind kind)
{
    sched_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->kind = kind;
    s->refs = 1;
    return s;
}

sched_t *sched_before(sched_time_t t)
{
    sched_t *s = node_new(K_BEFORE);
    if (s)
        s->t = t;
    return s;
}

sched_t *sched_after(sched_time_t t)
{
    sched_t *s = node_new(K_AFTER);
    if (s)
        s->t = t;
    return s;
}

static sched_t *binary(enum kind kind, sched_t *a, sched_t *b)
{
    if (!a || !b)
        return NULL;
    sched_t *s = node_new(kind);
    if (!s)
        return NULL;
    s->a = sched_ref(a);
    s->b = sched_ref(b);
    return s;
}

sched_t *sched_and(sched_t *a, sched_t *b)
{
    /* Simplify the constant cases so that per-object trees stay shallow. */
    if (a && b) {
        if (a->kind == K_NEVER || b->kind == K_ALWAYS)
            return sched_ref(a);
        if (b->kind == K_NEVER || a->kind == K_ALWAYS)
            return sched_ref(b);
    }
    return binary(K_AND, a, b);
}

sched_t *sched_or(sched_t *a, sched_t *b)
{
    if (a && b) {
        if (a->kind == K_ALWAYS || b->kind == K_NEVER)
            return sched_ref(a);
        if (b->kind == K_ALWAYS || a->kind == K_NEVER)
            return sched_ref(b);
    }
    return binary(K_OR, a, b);
}

sched_t *sched_ref(sched_t *s)
{
    if (s && s->refs > 0)
        s->refs++;
    return s;
}

static void rule_free(struct rule *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nex; i++)
        free(r->ex[i].reason);
    free(r->ex);
    sched_set_free(&r->exset);
    sched_set_free(&r->win);
    sched_set_free(&r->perm);
    free(r);
}

void sched_unref(sched_t *s)
{
    if (!s || s->refs < 0 || --s->refs > 0)
        return;
    sched_unref(s->a);
    sched_unref(s->b);
    rule_free(s->rule);
    free(s);
}

/* ---- rule expansion ----------------------------------------------------- */

static sched_time_t valid_lo(const struct rule *r)
{
    if (r->lo_origin)
        return SCHED_NEG_INF;
    return (sched_time_t)(r->lo_day + 1) * DAY + r->dmax;
}

static sched_time_t valid_hi(const struct rule *r)
{
    if (r->hi_end)
        return SCHED_POS_INF;
    return (sched_time_t)(r->hi_day - 1) * DAY;
}

static const sched_set_t *perm_of(const struct rule *r)
{
    return (r->nex > 0 || !r->has_permit) ? &r->perm : &r->win;
}

static struct icaltimetype local_date(int32_t day)
{
    struct icaltimetype tt = icaltime_null_time();
    int y, m, d;
    sched_civil_from_days(day, &y, &m, &d);
    tt.year = y;
    tt.month = m;
    tt.day = d;
    tt.is_date = 0;
    return tt;
}

static bool after_until(const struct rule *r, int32_t day, sched_time_t start)
{
    switch (r->until.kind) {
    case SCHED_UNTIL_DATE:
        return day > r->until.day;
    case SCHED_UNTIL_LOCAL:
        return day > r->until.day || (day == r->until.day && r->start_second > r->until.second);
    case SCHED_UNTIL_UTC:
        return start > r->until.utc;
    default:
        return false;
    }
}

/* Adds the windows of occurrences on local dates [d0, d1) to r->win. */
static int expand(struct rule *r, int32_t d0, int32_t d1)
{
    if (d1 > r->last_day + 1)
        d1 = r->last_day + 1;
    if (d0 < 0)
        d0 = 0;
    if (d0 >= d1)
        return 0;
    icalrecur_iterator *it = icalrecur_iterator_new(r->recur, local_date(0));
    if (!it)
        return HCP_ENOMEM; /* sched_compile() has made sure libical accepts the rule */
    if (d0 > 0)
        icalrecur_iterator_set_start(it, local_date(d0));
    int rc = 0;
    for (;;) {
        struct icaltimetype tt = icalrecur_iterator_next(it);
        if (icaltime_is_null_time(tt)) {
            /* libical's iteration ends (year 2582): nothing follows. */
            if (r->last_day > d1 - 1)
                r->last_day = d1 - 1;
            break;
        }
        int32_t d = sched_days_from_civil(tt.year, tt.month, tt.day);
        if (d >= d1)
            break;
        if (d < d0)
            continue;
        if (r->week_interval > 1 && floor_div32(d - r->week0, 7) % r->week_interval != 0)
            continue;
        sched_time_t s = sched_zone_local_to_utc(r->zone, d, r->start_second);
        if (after_until(r, d, s)) {
            r->last_day = d - 1;
            break;
        }
        sched_time_t e = r->duration ? s + r->duration : sched_zone_local_to_utc(r->zone, d + 1, 0);
        if ((rc = sched_set_add(&r->win, s, e)) != 0)
            break;
    }
    icalrecur_iterator_free(it);
    return rc;
}

static int refresh_perm(struct rule *r)
{
    if (r->nex == 0)
        return 0;
    return sched_set_subtract(&r->win, &r->exset, &r->perm);
}

static void update_flags(struct rule *r)
{
    r->lo_origin = r->lo_day <= 0;
    r->hi_end = r->hi_day > r->last_day;
}

static int seed(struct rule *r, sched_time_t t)
{
    int32_t d = day_of(t);
    sched_set_clear(&r->win);
    sched_set_clear(&r->perm);
    r->lo_day = d - SEED_BACK_DAYS < 0 ? 0 : d - SEED_BACK_DAYS;
    r->hi_day = d + SEED_AHEAD_DAYS < r->lo_day ? r->lo_day : d + SEED_AHEAD_DAYS;
    r->fwd_chunk = FIRST_CHUNK_DAYS;
    r->back_chunk = FIRST_CHUNK_DAYS;
    int rc = expand(r, r->lo_day, r->hi_day);
    update_flags(r);
    return rc ? rc : refresh_perm(r);
}

static int extend_fwd(struct rule *r)
{
    int32_t to = r->hi_day + r->fwd_chunk;
    int rc = expand(r, r->hi_day, to);
    r->hi_day = to;
    if (r->fwd_chunk < (1 << 20))
        r->fwd_chunk *= 2;
    update_flags(r);
    return rc ? rc : refresh_perm(r);
}

static int extend_back(struct rule *r)
{
    int32_t from = r->lo_day - r->back_chunk;
    if (from < 0)
        from = 0;
    int rc = expand(r, from, r->lo_day);
    r->lo_day = from;
    if (r->back_chunk < (1 << 20))
        r->back_chunk *= 2;
    update_flags(r);
    return rc ? rc : refresh_perm(r);
}

/* Widens the memo until t lies in the exact range. */
static int cover(struct rule *r, sched_time_t t)
{
    int rc;
    if (!r->hi_end && t >= valid_hi(r) + (sched_time_t)RESEED_GAP_DAYS * DAY) {
        if ((rc = seed(r, t)) != 0)
            return rc;
    }
    if (!r->lo_origin && t < valid_lo(r) - (sched_time_t)RESEED_GAP_DAYS * DAY &&
        (rc = seed(r, t)) != 0)
        return rc;
    while (t >= valid_hi(r))
        if ((rc = extend_fwd(r)) != 0)
            return rc;
    while (t < valid_lo(r))
        if ((rc = extend_back(r)) != 0)
            return rc;
    return 0;
}

/* Does anything end a window chain that is still running at the end of the
 * look-ahead? Only the rule's UNTIL or a later exclusion can. */
static bool something_ends(const struct rule *r, sched_time_t from)
{
    if (r->until.kind != SCHED_UNTIL_NONE)
        return true;
    for (size_t i = 0; i < r->nex; i++)
        if (r->ex[i].from >= from)
            return true;
    return false;
}

/* Makes the start and end of the memo interval containing p exact and
 * stores it in *iv. E is the end of the look-ahead for ends. */
static int settle(struct rule *r, sched_time_t p, sched_time_t E, sched_interval_t *iv)
{
    int rc;
    const sched_set_t *P = perm_of(r);
    *iv = P->iv[sched_set_search(P, p)];
    while (iv->start < valid_lo(r)) {
        if ((rc = extend_back(r)) != 0)
            return rc;
        P = perm_of(r);
        *iv = P->iv[sched_set_search(P, p)];
    }
    while (!r->hi_end && iv->end >= valid_hi(r)) {
        if (valid_hi(r) >= E && !something_ends(r, valid_hi(r))) {
            iv->end = SCHED_POS_INF;
            break;
        }
        if ((rc = extend_fwd(r)) != 0)
            return rc;
        P = perm_of(r);
        *iv = P->iv[sched_set_search(P, p)];
    }
    return 0;
}

static int rule_next(struct rule *r, sched_time_t t, sched_time_t H, sched_time_t E,
                     sched_interval_t *iv)
{
    int rc = cover(r, t);
    if (rc)
        return rc;
    for (;;) {
        const sched_set_t *P = perm_of(r);
        size_t i = sched_set_search(P, t);
        if (i < P->len && P->iv[i].start < valid_hi(r)) {
            if (P->iv[i].start >= H)
                return 0;
            sched_time_t p = P->iv[i].start > t ? P->iv[i].start : t;
            if ((rc = settle(r, p, E, iv)) != 0)
                return rc;
            return 1;
        }
        if (r->hi_end || valid_hi(r) >= H)
            return 0;
        if ((rc = extend_fwd(r)) != 0)
            return rc;
    }
}

static int rule_prev(struct rule *r, sched_time_t t, sched_time_t L, sched_time_t E,
                     sched_interval_t *iv)
{
    int rc = cover(r, t);
    if (rc)
        return rc;
    for (;;) {
        const sched_set_t *P = perm_of(r);
        size_t i = sched_set_search(P, t);
        size_t c = P->len; /* candidate: last interval starting at or before t */
        if (i < P->len && P->iv[i].start <= t)
            c = i;
        else if (i > 0)
            c = i - 1;
        if (c < P->len && (r->lo_origin || P->iv[c].end > valid_lo(r))) {
            if (P->iv[c].end <= L)
                return 0;
            sched_time_t p = P->iv[c].end > t ? t : P->iv[c].end - 1;
            if ((rc = settle(r, p, E, iv)) != 0)
                return rc;
            return iv->end > L;
        }
        if (r->lo_origin || valid_lo(r) <= L)
            return 0;
        if ((rc = extend_back(r)) != 0)
            return rc;
    }
}

/* ---- tree queries ------------------------------------------------------- */

static int node_next(sched_t *s, sched_time_t t, sched_time_t H, sched_time_t E,
                     sched_interval_t *iv);
static int node_prev(sched_t *s, sched_time_t t, sched_time_t L, sched_time_t E,
                     sched_interval_t *iv);

/* Grows *iv (an interval of the union s) over touching operand intervals. */
static int or_merge(sched_t *s, sched_time_t E, sched_interval_t *iv)
{
    sched_t *kids[2] = {s->a, s->b};
    bool changed = true;
    while (changed) {
        changed = false;
        for (int k = 0; k < 2; k++) {
            sched_interval_t x;
            int rc;
            if (iv->end != SCHED_POS_INF) {
                rc = node_next(kids[k], iv->end, iv->end + 1, E, &x);
                if (rc < 0)
                    return rc;
                if (rc && x.start <= iv->end && x.end > iv->end) {
                    iv->end = x.end;
                    changed = true;
                }
            }
            if (iv->start != SCHED_NEG_INF) {
                rc = node_prev(kids[k], iv->start - 1, iv->start - 1, E, &x);
                if (rc < 0)
                    return rc;
                if (rc && x.start < iv->start && x.end >= iv->start) {
                    iv->start = x.start;
                    changed = true;
                }
            }
        }
    }
    return 0;
}

/* The plain intersection search: the first window of a ∩ b ending after
 * cur and starting before H. */
static int and_walk(sched_t *s, sched_time_t cur, sched_time_t H, sched_time_t E,
                    sched_interval_t *iv)
{
    sched_interval_t ia, ib;
    int rc;
    for (;;) {
        if ((rc = node_next(s->a, cur, H, E, &ia)) <= 0 ||
            (rc = node_next(s->b, cur, H, E, &ib)) <= 0)
            return rc;
        sched_time_t st = ia.start > ib.start ? ia.start : ib.start;
        sched_time_t en = ia.end < ib.end ? ia.end : ib.end;
        if (st < en) {
            *iv = (sched_interval_t){st, en};
            return 1;
        }
        cur = st;
    }
}

/* Records that nothing is permitted in [lo, hi), growing the known empty
 * range when the two touch. */
static void and_learn_empty(struct and_memo *m, sched_time_t lo, sched_time_t hi)
{
    if (lo >= hi)
        return;
    if (m->empty && lo <= m->e_hi && hi >= m->e_lo) {
        if (lo < m->e_lo)
            m->e_lo = lo;
        if (hi > m->e_hi)
            m->e_hi = hi;
        return;
    }
    m->empty = true;
    m->e_lo = lo;
    m->e_hi = hi;
}

static int and_next(sched_t *s, sched_time_t t, sched_time_t H, sched_time_t E,
                    sched_interval_t *iv)
{
    struct and_memo *m = &s->memo;
    int rc;
    if (m->found && t >= m->t0 && t < m->iv.end && E <= m->E) {
        if (m->iv.start >= H)
            return 0;
        *iv = m->iv;
        return 1;
    }
    sched_time_t cur = t;
    if (m->empty && t < m->e_lo && H > m->e_lo) {
        /* Search up to the known empty range first. */
        if ((rc = and_walk(s, t, m->e_lo, E, iv)) < 0)
            return rc;
        if (rc) {
            and_learn_empty(m, t, iv->start);
            m->found = true;
            m->t0 = t;
            m->E = E;
            m->iv = *iv;
            return iv->start < H;
        }
        and_learn_empty(m, t, m->e_lo);
    }
    if (m->empty && cur >= m->e_lo && cur < m->e_hi) {
        if (H <= m->e_hi)
            return 0;
        cur = m->e_hi; /* a window ending after t starts at e_hi or later */
    }
    if ((rc = and_walk(s, cur, H, E, iv)) < 0)
        return rc;
    if (rc == 0) {
        and_learn_empty(m, t, H);
        return 0;
    }
    and_learn_empty(m, t, iv->start);
    m->found = true;
    m->t0 = t;
    m->E = E;
    m->iv = *iv;
    return 1;
}

static int node_next(sched_t *s, sched_time_t t, sched_time_t H, sched_time_t E,
                     sched_interval_t *iv)
{
    sched_interval_t ia, ib;
    int ra, rb;
    switch (s->kind) {
    case K_ALWAYS:
        *iv = (sched_interval_t){SCHED_NEG_INF, SCHED_POS_INF};
        return 1;
    case K_NEVER:
        return 0;
    case K_BEFORE:
        if (t >= s->t)
            return 0;
        *iv = (sched_interval_t){SCHED_NEG_INF, s->t};
        return 1;
    case K_AFTER:
        if (s->t >= H)
            return 0;
        *iv = (sched_interval_t){s->t, SCHED_POS_INF};
        return 1;
    case K_AND:
        return and_next(s, t, H, E, iv);
    case K_OR:
        if ((ra = node_next(s->a, t, H, E, &ia)) < 0)
            return ra;
        if ((rb = node_next(s->b, t, H, E, &ib)) < 0)
            return rb;
        if (!ra && !rb)
            return 0;
        *iv = (ra && (!rb || ia.start <= ib.start)) ? ia : ib;
        {
        int rc = or_merge(s, E, iv);
        return rc ? rc : 1;
    }
    case K_RULE:
        return rule_next(s->rule, t, H, E, iv);
    }
    return 0;
}

static int node_prev(sched_t *s, sched_time_t t, sched_time_t L, sched_time_t E,
                     sched_interval_t *iv)
{
    sched_interval_t ia, ib;
    int ra, rb;
    switch (s->kind) {
    case K_ALWAYS:
        *iv = (sched_interval_t){SCHED_NEG_INF, SCHED_POS_INF};
        return 1;
    case K_NEVER:
        return 0;
    case K_BEFORE:
        if (s->t <= L)
            return 0;
        *iv = (sched_interval_t){SCHED_NEG_INF, s->t};
        return 1;
    case K_AFTER:
        if (s->t > t)
            return 0;
        *iv = (sched_interval_t){s->t, SCHED_POS_INF};
        return 1;
    case K_AND: {
        sched_time_t cur = t;
        for (;;) {
            if ((ra = node_prev(s->a, cur, L, E, &ia)) <= 0)
                return ra;
            if ((rb = node_prev(s->b, cur, L, E, &ib)) <= 0)
                return rb;
            sched_time_t st = ia.start > ib.start ? ia.start : ib.start;
            sched_time_t en = ia.end < ib.end ? ia.end : ib.end;
            if (st < en) {
                if (en <= L)
                    return 0;
                *iv = (sched_interval_t){st, en};
                return 1;
            }
            cur = st - 1;
        }
    }
    case K_OR:
        if ((ra = node_prev(s->a, t, L, E, &ia)) < 0)
            return ra;
        if ((rb = node_prev(s->b, t, L, E, &ib)) < 0)
            return rb;
        if (!ra && !rb)
            return 0;
        *iv = (ra && (!rb || ia.end >= ib.end)) ? ia : ib;
        {
        int rc = or_merge(s, E, iv);
        return rc ? rc : 1;
    }
    case K_RULE:
        return rule_prev(s->rule, t, L, E, iv);
    }
    return 0;
}

static int in_range(sched_time_t t)
{
    return t >= T_MIN && t <= T_MAX;
}

int sched_containing(sched_t *s, sched_time_t t, sched_interval_t *iv)
{
    if (!in_range(t))
        return HCP_ERANGE;
    return node_next(s, t, t + 1, t + SCHED_LOOKAHEAD, iv);
}

int sched_next(sched_t *s, sched_time_t t, sched_interval_t *iv)
{
    if (!in_range(t))
        return HCP_ERANGE;
    return node_next(s, t, t + SCHED_LOOKAHEAD, t + SCHED_LOOKAHEAD, iv);
}

int sched_prev(sched_t *s, sched_time_t t, sched_interval_t *iv)
{
    if (!in_range(t))
        return HCP_ERANGE;
    return node_prev(s, t, t - SCHED_LOOKAHEAD, t + SCHED_LOOKAHEAD, iv);
}

/* Is t permitted? Unlike sched_containing() this never works out how far
 * the interval around t reaches. */
static int member(sched_t *s, sched_time_t t)
{
    int ra, rc;
    switch (s->kind) {
    case K_ALWAYS:
        return 1;
    case K_NEVER:
        return 0;
    case K_BEFORE:
        return t < s->t;
    case K_AFTER:
        return t >= s->t;
    case K_AND:
        if ((ra = member(s->a, t)) <= 0)
            return ra;
        return member(s->b, t);
    case K_OR:
        if ((ra = member(s->a, t)) != 0)
            return ra;
        return member(s->b, t);
    case K_RULE: {
        struct rule *r = s->rule;
        if ((rc = cover(r, t)) != 0)
            return rc;
        const sched_set_t *P = perm_of(r);
        size_t i = sched_set_search(P, t);
        return i < P->len && P->iv[i].start <= t;
    }
    }
    return 0;
}

int sched_permitted(sched_t *s, sched_time_t t)
{
    if (!in_range(t))
        return HCP_ERANGE;
    return member(s, t);
}

int sched_prev_transition(sched_t *s, sched_time_t t, sched_time_t *when)
{
    sched_interval_t iv;
    int rc = sched_containing(s, t, &iv);
    if (rc < 0)
        return rc;
    if (rc) {
        if (iv.start == SCHED_NEG_INF)
            return 0;
        *when = iv.start;
        return 1;
    }
    rc = sched_prev(s, t, &iv);
    if (rc <= 0)
        return rc;
    *when = iv.end;
    return 1;
}

int sched_next_transition(sched_t *s, sched_time_t t, sched_time_t *when)
{
    sched_interval_t iv;
    int rc = sched_containing(s, t, &iv);
    if (rc < 0)
        return rc;
    if (rc) {
        if (iv.end == SCHED_POS_INF)
            return 0;
        *when = iv.end;
        return 1;
    }
    rc = sched_next(s, t, &iv);
    if (rc <= 0)
        return rc;
    *when = iv.start;
    return 1;
}

int sched_state_at(sched_t *s, sched_time_t t, sched_state_t *st)
{
    sched_interval_t iv, nx;
    memset(st, 0, sizeof(*st));
    int rc = sched_containing(s, t, &iv);
    if (rc < 0)
        return rc;
    if (rc) {
        st->permitted = 1;
        st->current = iv;
        if (iv.end == SCHED_POS_INF)
            return 0;
        /* The restriction after this window lasts until the next one. */
        st->has_next = 1;
        rc = sched_next(s, iv.end, &nx);
        if (rc < 0)
            return rc;
        st->next = (sched_interval_t){iv.end, rc ? nx.start : SCHED_POS_INF};
        return 0;
    }
    sched_time_t since = SCHED_NEG_INF;
    if ((rc = sched_prev_transition(s, t, &since)) < 0)
        return rc;
    if (rc == 0)
        since = SCHED_NEG_INF;
    if ((rc = sched_next(s, t, &nx)) < 0)
        return rc;
    if (rc == 0) {
        st->no_window = 1;
        st->current = (sched_interval_t){since, SCHED_POS_INF};
        return 0;
    }
    st->current = (sched_interval_t){since, nx.start};
    st->has_next = 1;
    st->next = nx;
    return 0;
}

int sched_between(sched_t *s, sched_time_t from, sched_time_t to, sched_set_t *out)
{
    if (!in_range(from) || !in_range(to))
        return HCP_ERANGE;
    sched_time_t cur = from;
    while (cur < to) {
        sched_interval_t iv;
        int rc = node_next(s, cur, to, to, &iv);
        if (rc < 0)
            return rc;
        if (rc == 0)
            break;
        sched_time_t a = iv.start < from ? from : iv.start;
        sched_time_t b = iv.end > to ? to : iv.end;
        if ((rc = sched_set_add(out, a, b)) != 0)
            return rc;
        cur = iv.end;
    }
    return 0;
}

const char *sched_exclusion_reason(const sched_t *s, sched_time_t t)
{
    if (!s || s->kind != K_RULE)
        return NULL;
    const struct rule *r = s->rule;
    for (size_t i = 0; i < r->nex && r->ex[i].from <= t; i++)
        if (t < r->ex[i].until)
            return r->ex[i].reason;
    return NULL;
}

size_t sched_memory(const sched_t *s)
{
    if (!s || s->refs < 0)
        return 0;
    size_t n = sizeof(*s) + sched_memory(s->a) + sched_memory(s->b);
    if (s->rule) {
        const struct rule *r = s->rule;
        n += sizeof(*r) + r->nex * sizeof(r->ex[0]);
        n += (r->exset.cap + r->win.cap + r->perm.cap) * sizeof(sched_interval_t);
        for (size_t i = 0; i < r->nex; i++)
            n += strlen(r->ex[i].reason) + 1;
    }
    return n;
}

/* ---- compilation -------------------------------------------------------- */

static int cmp_exclusion(const void *a, const void *b)
{
    const struct exclusion *x = a, *y = b;
    return (x->from > y->from) - (x->from < y->from);
}

int sched_compile(const sched_spec_t *spec, sched_time_t now, sched_t **out, char *err,
                  size_t errlen)
{
    sched_rrule_info_t info;
    struct rule *r = NULL;
    sched_t *s = NULL;
    int rc;

    *out = NULL;
    if (!in_range(now))
        return HCP_ERANGE;
    r = calloc(1, sizeof(*r));
    if (!r)
        return HCP_ENOMEM;
    if (sched_zone_lookup(spec->time_zone, &r->zone) != 0) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "unknown time zone \"%s\"", spec->time_zone);
        goto fail;
    }
    if (spec->start_minute < 0 || spec->start_minute > 1439) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "start minute %d is outside 0..1439",
                      spec->start_minute);
        goto fail;
    }
    if (spec->duration < 0) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "duration must not be negative");
        goto fail;
    }
    r->start_second = spec->start_minute * 60;
    r->duration = spec->duration;
    r->dmax = spec->duration ? spec->duration : 2 * DAY;
    r->last_day = sched_days_from_civil(2582, 1, 1); /* libical's iteration limit */
    if (spec->rrule) {
        if ((rc = sched_rrule_parse(spec->rrule, &info, err, errlen)) != 0)
            goto fail;
        r->recur = icalrecurrencetype_from_string(info.libical_rule);
        r->until = info.until;
        r->week_interval = info.week_interval;
        /* 1970-01-01 was a Thursday (weekday 3 counting from Monday). */
        r->week0 = -((3 - info.wkst + 7) % 7);
        icalerror_clear_errno();
        icalrecur_iterator *probe = icalrecur_iterator_new(r->recur, local_date(0));
        if (!probe) {
            rc = icalerrno == ICAL_NEWFAILED_ERROR
                     ? HCP_ENOMEM
                     : hcp_errf(err, errlen, HCP_EINVAL,
                                "the rule selects no date (its INTERVAL, BYMONTH and "
                                "BYMONTHDAY never coincide from 1970 on)");
            icalerror_clear_errno();
            goto fail;
        }
        icalrecur_iterator_free(probe);
        r->has_permit = true;
        int32_t until_last = r->last_day;
        if (info.until.kind == SCHED_UNTIL_DATE || info.until.kind == SCHED_UNTIL_LOCAL)
            until_last = info.until.day;
        else if (info.until.kind == SCHED_UNTIL_UTC)
            until_last = day_of(info.until.utc) + 1;
        if (until_last < r->last_day)
            r->last_day = until_last;
    }
    if (spec->n_exclusions > 0) {
        r->ex = calloc(spec->n_exclusions, sizeof(*r->ex));
        if (!r->ex) {
            rc = HCP_ENOMEM;
            goto fail;
        }
    }
    for (size_t i = 0; i < spec->n_exclusions; i++) {
        const sched_exclusion_t *x = &spec->exclusions[i];
        if (x->until_day <= x->from_day) {
            rc = hcp_errf(err, errlen, HCP_EINVAL, "exclusion %zu ends on or before its first day",
                          i);
            goto fail;
        }
        struct exclusion *e = &r->ex[r->nex];
        e->from = sched_zone_local_to_utc(r->zone, x->from_day, 0);
        e->until = sched_zone_local_to_utc(r->zone, x->until_day, 0);
        e->reason = strdup(x->reason ? x->reason : "");
        if (!e->reason) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        r->nex++;
        if ((rc = sched_set_add(&r->exset, e->from, e->until)) != 0)
            goto fail;
    }
    if (r->nex > 1)
        qsort(r->ex, r->nex, sizeof(r->ex[0]), cmp_exclusion);

    if (!r->has_permit) {
        /* Permitted exactly outside the exclusions: nothing to expand. */
        sched_set_t all;
        sched_set_init(&all);
        if ((rc = sched_set_add(&all, SCHED_NEG_INF, SCHED_POS_INF)) != 0 ||
            (rc = (r->nex ? sched_set_subtract(&all, &r->exset, &r->perm) : 0)) != 0) {
            sched_set_free(&all);
            goto fail;
        }
        sched_set_free(&all);
        r->lo_origin = true;
        r->hi_end = true;
    } else if ((rc = seed(r, now)) != 0) {
        goto fail;
    }

    s = node_new(K_RULE);
    if (!s) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    s->rule = r;
    *out = s;
    return 0;

fail:
    rule_free(r);
    return rc;
}
