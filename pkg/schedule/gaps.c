/* gaps.c: permitted everywhere except a sorted list of excluded spans. The
 * spans are kept twice: as given, sorted by start (for their reasons), and
 * merged into disjoint, non-touching runs (for the queries, by binary
 * search). */
#include "schedule/gaps.h"

#include <stdlib.h>
#include <string.h>

struct sched_gaps {
    sched_excluded_t *ev;   /* the spans, by start */
    size_t n_ev;
    sched_interval_t *run;  /* merged, ascending, non-touching */
    size_t n_run;
    char **reasons;
    size_t n_reasons;
};

static int by_start(const void *a, const void *b)
{
    const sched_excluded_t *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

struct sched_gaps *sched_gaps_new(const sched_excluded_t *v, size_t n,
                                  const char *const *reasons, size_t n_reasons)
{
    struct sched_gaps *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    if ((n && (!(g->ev = malloc(n * sizeof *g->ev)) || !(g->run = malloc(n * sizeof *g->run)))) ||
        (n_reasons && !(g->reasons = calloc(n_reasons, sizeof *g->reasons))))
        goto fail;
    for (size_t i = 0; i < n_reasons; i++) {
        g->n_reasons = i + 1;
        if (!(g->reasons[i] = strdup(reasons[i] ? reasons[i] : "")))
            goto fail;
    }
    for (size_t i = 0; i < n; i++)
        if (v[i].start < v[i].end && v[i].reason < n_reasons)
            g->ev[g->n_ev++] = v[i];
    if (g->n_ev > 1)
        qsort(g->ev, g->n_ev, sizeof *g->ev, by_start);
    for (size_t i = 0; i < g->n_ev; i++) {
        sched_interval_t *last = g->n_run ? &g->run[g->n_run - 1] : NULL;
        if (last && g->ev[i].start <= last->end) {
            if (g->ev[i].end > last->end)
                last->end = g->ev[i].end;
        } else {
            g->run[g->n_run++] = (sched_interval_t){g->ev[i].start, g->ev[i].end};
        }
    }
    return g;
fail:
    sched_gaps_free(g);
    return NULL;
}

void sched_gaps_free(struct sched_gaps *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->n_reasons; i++)
        free(g->reasons[i]);
    free(g->reasons);
    free(g->ev);
    free(g->run);
    free(g);
}

/* The number of runs starting by t (those with start <= t). */
static size_t runs_started(const struct sched_gaps *g, sched_time_t t)
{
    size_t lo = 0, hi = g->n_run;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->run[mid].start <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Permitted piece k (0..n_run) lies between run k-1 and run k. */
static sched_interval_t piece(const struct sched_gaps *g, size_t k)
{
    return (sched_interval_t){k ? g->run[k - 1].end : SCHED_NEG_INF,
                              k < g->n_run ? g->run[k].start : SCHED_POS_INF};
}

int sched_gaps_step(const struct sched_gaps *g, sched_time_t t, sched_time_t B, int forward,
                    sched_interval_t *iv)
{
    size_t k = runs_started(g, t);
    if (forward) {
        /* The piece holding t ends at run k's start (> t); unless t is
         * inside run k-1, where the next piece starts at its end. */
        *iv = piece(g, k);
        return iv->start < B;
    }
    /* The last piece starting by t: piece k when t is past run k-1's end,
     * else piece k-1 (t inside run k-1). */
    if (k && t < g->run[k - 1].end)
        k--;
    *iv = piece(g, k);
    return iv->start <= t && iv->end > B;
}

int sched_gaps_member(const struct sched_gaps *g, sched_time_t t)
{
    size_t k = runs_started(g, t);
    return !(k && t < g->run[k - 1].end);
}

const char *sched_gaps_exclusion_at(const struct sched_gaps *g, sched_time_t t,
                                    sched_time_t *until)
{
    size_t k = runs_started(g, t);
    if (!k || t >= g->run[k - 1].end)
        return NULL;
    if (until)
        *until = g->run[k - 1].end;
    /* Only the spans of run k-1 can cover t: they start at its start. */
    size_t lo = 0, hi = g->n_ev;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (g->ev[mid].start < g->run[k - 1].start)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < g->n_ev && g->ev[i].start <= t; i++)
        if (t < g->ev[i].end)
            return g->reasons[g->ev[i].reason];
    return NULL; /* not reached: run k-1 is made of spans */
}

size_t sched_gaps_memory(const struct sched_gaps *g)
{
    size_t n = sizeof *g + g->n_ev * sizeof *g->ev + g->n_run * sizeof *g->run;
    for (size_t i = 0; i < g->n_reasons; i++)
        n += strlen(g->reasons[i]) + 1 + sizeof *g->reasons;
    return n;
}
