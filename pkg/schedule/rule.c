/* rule.c: the MaintenanceSchedule leaf of a schedule tree, compiled from a
 * sched_spec_t and expanded lazily.
 *
 * A rule leaf memoises the merged windows of every occurrence whose local
 * date lies in [lo_day, hi_day). Within that span the memo is exact on the
 * UTC range [valid_lo, valid_hi): occurrences before lo_day end before
 * valid_lo (they start before lo_day and last at most dmax) and occurrences
 * from hi_day on start after valid_hi. A query first widens the span until
 * the instants it needs are inside the exact range, so answers never depend
 * on how much was expanded before.
 */
#include "schedule/rule.h"

#include "schedule/civil.h"
#include "schedule/rrule.h"
#include "schedule/tz.h"

#include <libical/ical.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define DAY 86400
#define SEED_BACK_DAYS 8     /* initial expansion before the compile instant */
#define SEED_AHEAD_DAYS 40   /* and after it */
#define FIRST_CHUNK_DAYS 32  /* first extension; each further one doubles */
#define RESEED_GAP_DAYS 800  /* a query this far past the memo starts afresh */
struct exclusion {
    sched_time_t from;  /* UTC instant of fromDate 00:00 local */
    sched_time_t until; /* UTC instant of untilDate 00:00 local */
    char *reason;       /* owned; "" when none was given */
};

struct sched_rule {
    struct icalrecurrencetype recur; /* the rule without UNTIL */
    sched_zone_t zone;               /* NULL for UTC */
    bool has_permit;                 /* false: permitted outside exclusions */
    int start_second;                /* window start, seconds after local midnight */
    int32_t duration;                /* seconds; 0 = until next local midnight */
    sched_time_t dmax;               /* upper bound of one window's length */
    sched_until_t until;             /* the rule's UNTIL */
    int week_interval;               /* weekly rules: select every Nth week */
    int day_interval;                /* > 0: a simple daily rule (rrule.h) */
    int weekday_mask;                /* != 0: a simple weekly rule (rrule.h) */
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

void sched_rule_free(struct sched_rule *r)
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

static sched_time_t valid_lo(const struct sched_rule *r)
{
    if (r->lo_origin)
        return SCHED_NEG_INF;
    return (sched_time_t)(r->lo_day + 1) * DAY + r->dmax;
}

static sched_time_t valid_hi(const struct sched_rule *r)
{
    if (r->hi_end)
        return SCHED_POS_INF;
    return (sched_time_t)(r->hi_day - 1) * DAY;
}

static const sched_set_t *perm_of(const struct sched_rule *r)
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

static bool after_until(const struct sched_rule *r, int32_t day, sched_time_t start)
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

/* Adds the window of the occurrence on local date d to r->win, unless the
 * week interval skips d. Returns 0, 1 when d is past UNTIL (r->last_day is
 * then set: nothing follows), or HCP_ENOMEM. */
static int add_occurrence(struct sched_rule *r, int32_t d)
{
    if (r->week_interval > 1 && floor_div32(d - r->week0, 7) % r->week_interval != 0)
        return 0;
    sched_time_t s = sched_zone_local_to_utc(r->zone, d, r->start_second);
    if (after_until(r, d, s)) {
        r->last_day = d - 1;
        return 1;
    }
    sched_time_t e = r->duration ? s + r->duration : sched_zone_local_to_utc(r->zone, d + 1, 0);
    return sched_set_add(&r->win, s, e);
}

/* expand() for the simple daily and weekly rules: the selected dates by
 * arithmetic, as libical would select them from the anchor 1970-01-01
 * (a Thursday), at a fraction of its cost. */
static int expand_simple(struct sched_rule *r, int32_t d0, int32_t d1)
{
    int32_t d, step = r->day_interval > 0 ? r->day_interval : 1;
    int rc = 0;

    d = r->day_interval > 0 ? d0 + (step - d0 % step) % step : d0;
    for (; d < d1 && rc == 0; d += step)
        if (r->day_interval > 0 || (r->weekday_mask & (1 << (d + 3) % 7)))
            rc = add_occurrence(r, d);
    return rc < 0 ? rc : 0;
}

/* Adds the windows of occurrences on local dates [d0, d1) to r->win. */
static int expand(struct sched_rule *r, int32_t d0, int32_t d1)
{
    if (d1 > r->last_day + 1)
        d1 = r->last_day + 1;
    if (d0 < 0)
        d0 = 0;
    if (d0 >= d1)
        return 0;
    if (r->day_interval > 0 || r->weekday_mask)
        return expand_simple(r, d0, d1);
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
        if ((rc = add_occurrence(r, d)) != 0)
            break;
    }
    icalrecur_iterator_free(it);
    return rc < 0 ? rc : 0;
}

static int refresh_perm(struct sched_rule *r)
{
    if (r->nex == 0)
        return 0;
    return sched_set_subtract(&r->win, &r->exset, &r->perm);
}

static void update_flags(struct sched_rule *r)
{
    r->lo_origin = r->lo_day <= 0;
    r->hi_end = r->hi_day > r->last_day;
}

static int seed(struct sched_rule *r, sched_time_t t)
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

static int extend_fwd(struct sched_rule *r)
{
    int32_t to = r->hi_day + r->fwd_chunk;
    int rc = expand(r, r->hi_day, to);
    r->hi_day = to;
    if (r->fwd_chunk < (1 << 20))
        r->fwd_chunk *= 2;
    update_flags(r);
    return rc ? rc : refresh_perm(r);
}

static int extend_back(struct sched_rule *r)
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
static int cover(struct sched_rule *r, sched_time_t t)
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
static bool something_ends(const struct sched_rule *r, sched_time_t from)
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
static int settle(struct sched_rule *r, sched_time_t p, sched_time_t E, sched_interval_t *iv)
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

#define KEEP_LOOKING 2 /* the windows known so far cannot answer: extend them */

/* Forward, over the windows known so far: the first ending after t and
 * starting before H (1, *iv set), none (0), or KEEP_LOOKING. */
static int next_known(struct sched_rule *r, sched_time_t t, sched_time_t H, sched_time_t E,
                      sched_interval_t *iv)
{
    const sched_set_t *P = perm_of(r);
    size_t i = sched_set_search(P, t);
    if (i < P->len && P->iv[i].start < valid_hi(r)) {
        if (P->iv[i].start >= H)
            return 0;
        int rc = settle(r, P->iv[i].start > t ? P->iv[i].start : t, E, iv);
        return rc ? rc : 1;
    }
    return r->hi_end || valid_hi(r) >= H ? 0 : KEEP_LOOKING;
}

/* The index of P's last interval starting at or before t, P->len when none. */
static size_t last_starting_by(const sched_set_t *P, sched_time_t t)
{
    size_t i = sched_set_search(P, t);
    if (i < P->len && P->iv[i].start <= t)
        return i;
    return i > 0 ? i - 1 : P->len;
}

/* Backward, over the windows known so far: the last starting by t and
 * ending after L (1, *iv set), none (0), or KEEP_LOOKING. */
static int prev_known(struct sched_rule *r, sched_time_t t, sched_time_t L, sched_time_t E,
                      sched_interval_t *iv)
{
    const sched_set_t *P = perm_of(r);
    size_t c = last_starting_by(P, t);
    if (c < P->len && (r->lo_origin || P->iv[c].end > valid_lo(r))) {
        if (P->iv[c].end <= L)
            return 0;
        int rc = settle(r, P->iv[c].end > t ? t : P->iv[c].end - 1, E, iv);
        return rc ? rc : iv->end > L;
    }
    return r->lo_origin || valid_lo(r) <= L ? 0 : KEEP_LOOKING;
}

/* The query in either direction, extending the known windows as needed. */
static int find(struct sched_rule *r, sched_time_t t, sched_time_t bound, sched_time_t E,
                int forward, sched_interval_t *iv)
{
    int rc = cover(r, t);
    while (rc == 0) {
        rc = forward ? next_known(r, t, bound, E, iv) : prev_known(r, t, bound, E, iv);
        if (rc != KEEP_LOOKING)
            return rc;
        rc = forward ? extend_fwd(r) : extend_back(r);
    }
    return rc;
}

int sched_rule_next(struct sched_rule *r, sched_time_t t, sched_time_t H, sched_time_t E,
                    sched_interval_t *iv)
{
    return find(r, t, H, E, 1, iv);
}

int sched_rule_prev(struct sched_rule *r, sched_time_t t, sched_time_t L, sched_time_t E,
                    sched_interval_t *iv)
{
    return find(r, t, L, E, 0, iv);
}

int sched_rule_member(struct sched_rule *r, sched_time_t t)
{
    int rc;

    if ((rc = cover(r, t)) != 0)
        return rc;
    const sched_set_t *P = perm_of(r);
    size_t i = sched_set_search(P, t);
    return i < P->len && P->iv[i].start <= t;
}

const char *sched_rule_exclusion_reason(const struct sched_rule *r, sched_time_t t)
{
    for (size_t i = 0; i < r->nex && r->ex[i].from <= t; i++)
        if (t < r->ex[i].until)
            return r->ex[i].reason;
    return NULL;
}

const char *sched_rule_exclusion_at(const struct sched_rule *r, sched_time_t t,
                                    sched_time_t *until)
{
    const char *why = NULL;
    sched_time_t end = t;

    /* sorted by start: extend the span through overlapping or touching ones */
    for (size_t i = 0; i < r->nex && r->ex[i].from <= end; i++) {
        if (why == NULL && r->ex[i].from <= t && t < r->ex[i].until)
            why = r->ex[i].reason;
        if (r->ex[i].until > end && (why != NULL || r->ex[i].from <= t))
            end = r->ex[i].until;
    }
    if (why != NULL && until != NULL)
        *until = end;
    return why;
}

size_t sched_rule_memory(const struct sched_rule *r)
{
    size_t n = sizeof(*r) + r->nex * sizeof(r->ex[0]);

    n += (r->exset.cap + r->win.cap + r->perm.cap) * sizeof(sched_interval_t);
    for (size_t i = 0; i < r->nex; i++)
        n += strlen(r->ex[i].reason) + 1;
    return n;
}

static int cmp_exclusion(const void *a, const void *b)
{
    const struct exclusion *x = a, *y = b;
    return (x->from > y->from) - (x->from < y->from);
}

/* The recurrence part of a leaf: the rule, its UNTIL and the last local
 * date it can select. Returns 0, HCP_EINVAL with err filled, or HCP_ENOMEM. */
static int set_rule(struct sched_rule *r, const char *rrule, char *err, size_t errlen)
{
    sched_rrule_info_t info;
    int rc;

    if ((rc = sched_rrule_parse(rrule, &info, err, errlen)) != 0)
        return rc;
    r->recur = icalrecurrencetype_from_string(info.libical_rule);
    r->until = info.until;
    r->week_interval = info.week_interval;
    r->day_interval = info.day_interval;
    r->weekday_mask = info.weekday_mask;
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
        return rc;
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
    return 0;
}

/* The exclusions of a leaf, sorted, and their union. Returns 0, HCP_EINVAL
 * with err filled, or HCP_ENOMEM (r is freed by the caller either way). */
static int set_exclusions(struct sched_rule *r, const sched_spec_t *spec, char *err,
                          size_t errlen)
{
    int rc;

    if (spec->n_exclusions > 0) {
        r->ex = calloc(spec->n_exclusions, sizeof(*r->ex));
        if (!r->ex)
            return HCP_ENOMEM;
    }
    for (size_t i = 0; i < spec->n_exclusions; i++) {
        const sched_exclusion_t *x = &spec->exclusions[i];
        if (x->until_day <= x->from_day)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "exclusion %zu ends on or before its first day", i);
        struct exclusion *e = &r->ex[r->nex];
        e->from = sched_zone_local_to_utc(r->zone, x->from_day, 0);
        e->until = sched_zone_local_to_utc(r->zone, x->until_day, 0);
        e->reason = strdup(x->reason ? x->reason : "");
        if (!e->reason)
            return HCP_ENOMEM;
        r->nex++;
        if ((rc = sched_set_add(&r->exset, e->from, e->until)) != 0)
            return rc;
    }
    if (r->nex > 1)
        qsort(r->ex, r->nex, sizeof(r->ex[0]), cmp_exclusion);
    return 0;
}

int sched_rule_compile(const sched_spec_t *spec, sched_time_t now, struct sched_rule **out,
                       char *err, size_t errlen)
{
    struct sched_rule *r = NULL;
    int rc;

    *out = NULL;
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
    if (spec->rrule && (rc = set_rule(r, spec->rrule, err, errlen)) != 0)
        goto fail;
    if ((rc = set_exclusions(r, spec, err, errlen)) != 0)
        goto fail;

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

    *out = r;
    return 0;

fail:
    sched_rule_free(r);
    return rc;
}
