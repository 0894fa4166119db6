/* schedule.c: schedule trees (always, never, before, after, and, or and
 * the MaintenanceSchedule leaf of rule.c) and the queries over them. */
#include "schedule/schedule.h"

#include "schedule/gaps.h"
#include "schedule/rule.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Supported query instants: 1970-01-01 (the recurrence anchor) to the end
 * of 2500 (libical iterates recurrences up to 2582, which leaves room for
 * the look-ahead). */
#define T_MIN ((sched_time_t)0)
#define T_MAX ((sched_time_t)16756761599LL)

enum kind { K_ALWAYS, K_NEVER, K_BEFORE, K_AFTER, K_AND, K_OR, K_RULE, K_GAPS };

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
    struct sched_rule *rule; /* K_RULE (owned) */
    struct and_memo memo; /* K_AND */
    struct sched_gaps *gaps; /* K_GAPS (owned) */
};

static sched_t always_node = {K_ALWAYS, -1, 0, NULL, NULL, NULL, {0}, NULL};
static sched_t never_node = {K_NEVER, -1, 0, NULL, NULL, NULL, {0}, NULL};

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

/* a op b with the constant cases folded so that per-object trees stay
 * shallow: zero absorbs (NEVER for ∩, ALWAYS for ∪), one is the identity. */
static sched_t *combine(enum kind op, enum kind zero, enum kind one, sched_t *a, sched_t *b)
{
    if (a && b) {
        if (a->kind == zero || b->kind == one)
            return sched_ref(a);
        if (b->kind == zero || a->kind == one)
            return sched_ref(b);
    }
    return binary(op, a, b);
}

sched_t *sched_excluding(const sched_excluded_t *v, size_t n, const char *const *reasons,
                         size_t n_reasons)
{
    sched_t *s = node_new(K_GAPS);
    if (s && !(s->gaps = sched_gaps_new(v, n, reasons, n_reasons))) {
        free(s);
        s = NULL;
    }
    return s;
}

sched_t *sched_and(sched_t *a, sched_t *b)
{
    return combine(K_AND, K_NEVER, K_ALWAYS, a, b);
}

sched_t *sched_or(sched_t *a, sched_t *b)
{
    return combine(K_OR, K_ALWAYS, K_NEVER, a, b);
}

sched_t *sched_ref(sched_t *s)
{
    if (s && s->refs > 0)
        s->refs++;
    return s;
}

void sched_unref(sched_t *s)
{
    if (!s || s->refs < 0 || --s->refs > 0)
        return;
    sched_unref(s->a);
    sched_unref(s->b);
    sched_rule_free(s->rule);
    sched_gaps_free(s->gaps);
    free(s);
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

/* The answer of a union from its operands' answers ra/ia and rb/ib: the
 * window nearer t (first to start going forward, last to end going back),
 * merged with whatever touches it. */
static int or_pick(sched_t *s, int ra, const sched_interval_t *ia, int rb,
                   const sched_interval_t *ib, int forward, sched_time_t E, sched_interval_t *iv)
{
    int rc;

    if (rb < 0)
        return rb;
    if (!ra && !rb)
        return 0;
    if (ra && (!rb || (forward ? ia->start <= ib->start : ia->end >= ib->end)))
        *iv = *ia;
    else
        *iv = *ib;
    rc = or_merge(s, E, iv);
    return rc ? rc : 1;
}

/* The whole interval of a leaf without a calendar (ALWAYS, BEFORE, AFTER):
 * 1 with *iv set; 0 for NEVER; -1 when s is not such a leaf. */
static int leaf(const sched_t *s, sched_interval_t *iv)
{
    switch (s->kind) {
    case K_ALWAYS:
        *iv = (sched_interval_t){SCHED_NEG_INF, SCHED_POS_INF};
        return 1;
    case K_NEVER:
        return 0;
    case K_BEFORE:
        *iv = (sched_interval_t){SCHED_NEG_INF, s->t};
        return 1;
    case K_AFTER:
        *iv = (sched_interval_t){s->t, SCHED_POS_INF};
        return 1;
    default:
        return -1;
    }
}

/* The last window of a ∩ b starting by t and ending after L. */
static int and_prev(sched_t *s, sched_time_t t, sched_time_t L, sched_time_t E,
                    sched_interval_t *iv)
{
    sched_interval_t ia, ib;
    int rc;
    for (sched_time_t cur = t;;) {
        if ((rc = node_prev(s->a, cur, L, E, &ia)) <= 0 ||
            (rc = node_prev(s->b, cur, L, E, &ib)) <= 0)
            return rc;
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

/* One query of the tree in either direction. Forward: the first window
 * ending after t and starting before the bound B. Backward: the last
 * window starting by t and ending after B. E bounds how far a window's
 * end is followed. */
static int node_step(sched_t *s, sched_time_t t, sched_time_t B, sched_time_t E, int forward,
                     sched_interval_t *iv)
{
    sched_interval_t ia, ib;
    int ra, rb;
    if ((ra = leaf(s, iv)) >= 0)
        return ra && (forward ? iv->end > t && iv->start < B : iv->start <= t && iv->end > B);
    switch (s->kind) {
    case K_AND:
        return forward ? and_next(s, t, B, E, iv) : and_prev(s, t, B, E, iv);
    case K_OR:
        if ((ra = node_step(s->a, t, B, E, forward, &ia)) < 0)
            return ra;
        rb = node_step(s->b, t, B, E, forward, &ib);
        return or_pick(s, ra, &ia, rb, &ib, forward, E, iv);
    case K_RULE:
        return forward ? sched_rule_next(s->rule, t, B, E, iv)
                       : sched_rule_prev(s->rule, t, B, E, iv);
    case K_GAPS:
        return sched_gaps_step(s->gaps, t, B, forward, iv);
    default: /* the leaves above */
        break;
    }
    return 0;
}

static int node_next(sched_t *s, sched_time_t t, sched_time_t H, sched_time_t E,
                     sched_interval_t *iv)
{
    return node_step(s, t, H, E, 1, iv);
}

static int node_prev(sched_t *s, sched_time_t t, sched_time_t L, sched_time_t E,
                     sched_interval_t *iv)
{
    return node_step(s, t, L, E, 0, iv);
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
    sched_interval_t iv;
    int ra;
    if ((ra = leaf(s, &iv)) >= 0)
        return ra && iv.start <= t && t < iv.end;
    switch (s->kind) {
    case K_AND:
        if ((ra = member(s->a, t)) <= 0)
            return ra;
        return member(s->b, t);
    case K_OR:
        if ((ra = member(s->a, t)) != 0)
            return ra;
        return member(s->b, t);
    case K_RULE:
        return sched_rule_member(s->rule, t);
    case K_GAPS:
        return sched_gaps_member(s->gaps, t);
    default: /* the leaves above */
        break;
    }
    return 0;
}

int sched_permitted(sched_t *s, sched_time_t t)
{
    if (!in_range(t))
        return HCP_ERANGE;
    return member(s, t);
}

/* The edge of the window holding t (its end going forward, its start going
 * back), or else of the nearest window in that direction. */
static int transition(sched_t *s, sched_time_t t, int forward, sched_time_t *when)
{
    sched_interval_t iv;
    int rc = sched_containing(s, t, &iv);
    if (rc < 0)
        return rc;
    if (rc) {
        sched_time_t edge = forward ? iv.end : iv.start;
        if (edge == (forward ? SCHED_POS_INF : SCHED_NEG_INF))
            return 0;
        *when = edge;
        return 1;
    }
    rc = forward ? sched_next(s, t, &iv) : sched_prev(s, t, &iv);
    if (rc <= 0)
        return rc;
    *when = forward ? iv.start : iv.end;
    return 1;
}

int sched_prev_transition(sched_t *s, sched_time_t t, sched_time_t *when)
{
    return transition(s, t, 0, when);
}

int sched_next_transition(sched_t *s, sched_time_t t, sched_time_t *when)
{
    return transition(s, t, 1, when);
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

int sched_windows(sched_t *s, sched_time_t from, size_t count, sched_set_t *out)
{
    sched_time_t t = from;

    while (out->len < count) {
        sched_interval_t iv;
        int rc = sched_next(s, t, &iv);
        if (rc < 0)
            return rc;
        if (rc == 0 || (iv.start != SCHED_NEG_INF && iv.start - from >= SCHED_LOOKAHEAD))
            break;
        if (iv.start <= t && iv.end <= t)
            break; /* defensive: the engine must move forward */
        /* maximal, disjoint and ascending: adding never merges them */
        if ((rc = sched_set_add(out, iv.start, iv.end)) < 0)
            return rc;
        if (iv.end == SCHED_POS_INF)
            break;
        t = iv.end;
    }
    return 0;
}

const char *sched_exclusion_reason(const sched_t *s, sched_time_t t)
{
    if (!s || s->kind != K_RULE)
        return NULL;
    return sched_rule_exclusion_reason(s->rule, t);
}

const char *sched_exclusion_at(const sched_t *s, sched_time_t t, sched_time_t *until)
{
    const char *why;

    if (!s)
        return NULL;
    if (s->kind == K_RULE)
        return sched_rule_exclusion_at(s->rule, t, until);
    if (s->kind == K_GAPS)
        return sched_gaps_exclusion_at(s->gaps, t, until);
    if (s->kind != K_AND && s->kind != K_OR)
        return NULL;
    why = sched_exclusion_at(s->a, t, until);
    return why != NULL ? why : sched_exclusion_at(s->b, t, until);
}

size_t sched_memory(const sched_t *s)
{
    if (!s || s->refs < 0)
        return 0;
    size_t n = sizeof(*s) + sched_memory(s->a) + sched_memory(s->b);
    if (s->rule)
        n += sched_rule_memory(s->rule);
    if (s->gaps)
        n += sched_gaps_memory(s->gaps);
    return n;
}

/* ---- compilation -------------------------------------------------------- */

int sched_compile(const sched_spec_t *spec, sched_time_t now, sched_t **out, char *err,
                  size_t errlen)
{
    struct sched_rule *r = NULL;
    sched_t *s;
    int rc;

    *out = NULL;
    if (!in_range(now))
        return HCP_ERANGE;
    if ((rc = sched_rule_compile(spec, now, &r, err, errlen)) != 0)
        return rc;
    s = node_new(K_RULE);
    if (!s) {
        sched_rule_free(r);
        return HCP_ENOMEM;
    }
    s->rule = r;
    *out = s;
    return 0;
}
