/* interval.c: sorted sets of disjoint half-open intervals (sched_set_t). */
#include "schedule/schedule.h"

#include <stdlib.h>
#include <string.h>

void sched_set_init(sched_set_t *set)
{
    set->iv = NULL;
    set->len = 0;
    set->cap = 0;
}

void sched_set_free(sched_set_t *set)
{
    free(set->iv);
    sched_set_init(set);
}

void sched_set_clear(sched_set_t *set)
{
    set->len = 0;
}

static int reserve(sched_set_t *set, size_t want)
{
    if (want <= set->cap)
        return 0;
    size_t cap = set->cap ? set->cap : 8;
    while (cap < want)
        cap *= 2;
    sched_interval_t *iv = realloc(set->iv, cap * sizeof(*iv));
    if (!iv)
        return HCP_ENOMEM;
    set->iv = iv;
    set->cap = cap;
    return 0;
}

size_t sched_set_search(const sched_set_t *set, sched_time_t t)
{
    size_t lo = 0, hi = set->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->iv[mid].end > t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

int sched_set_add(sched_set_t *set, sched_time_t start, sched_time_t end)
{
    if (start >= end)
        return 0;
    /* Appending in order is the common case (expansion walks forward). */
    if (set->len > 0 && set->iv[set->len - 1].end < start) {
        if (reserve(set, set->len + 1))
            return HCP_ENOMEM;
        set->iv[set->len++] = (sched_interval_t){start, end};
        return 0;
    }
    /* First interval that overlaps or touches [start, end): its end >= start. */
    size_t lo = 0, hi = set->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (set->iv[mid].end >= start)
            hi = mid;
        else
            lo = mid + 1;
    }
    size_t first = lo, last = lo; /* [first, last) are merged away */
    while (last < set->len && set->iv[last].start <= end) {
        if (set->iv[last].start < start)
            start = set->iv[last].start;
        if (set->iv[last].end > end)
            end = set->iv[last].end;
        last++;
    }
    if (first == last) {
        if (reserve(set, set->len + 1))
            return HCP_ENOMEM;
        memmove(&set->iv[first + 1], &set->iv[first], (set->len - first) * sizeof(set->iv[0]));
        set->len++;
    } else if (last - first > 1) {
        memmove(&set->iv[first + 1], &set->iv[last], (set->len - last) * sizeof(set->iv[0]));
        set->len -= last - first - 1;
    }
    set->iv[first] = (sched_interval_t){start, end};
    return 0;
}

/* Appends [s, e) to out, which is built in ascending order. */
static int push(sched_set_t *out, sched_time_t s, sched_time_t e)
{
    if (s >= e)
        return 0;
    if (out->len > 0 && out->iv[out->len - 1].end >= s) {
        if (out->iv[out->len - 1].end < e)
            out->iv[out->len - 1].end = e;
        return 0;
    }
    if (reserve(out, out->len + 1))
        return HCP_ENOMEM;
    out->iv[out->len++] = (sched_interval_t){s, e};
    return 0;
}

int sched_set_union(const sched_set_t *a, const sched_set_t *b, sched_set_t *out)
{
    size_t i = 0, j = 0;
    sched_set_clear(out);
    while (i < a->len || j < b->len) {
        const sched_interval_t *x;
        if (j >= b->len || (i < a->len && a->iv[i].start <= b->iv[j].start))
            x = &a->iv[i++];
        else
            x = &b->iv[j++];
        if (push(out, x->start, x->end))
            return HCP_ENOMEM;
    }
    return 0;
}

int sched_set_intersect(const sched_set_t *a, const sched_set_t *b, sched_set_t *out)
{
    size_t i = 0, j = 0;
    sched_set_clear(out);
    while (i < a->len && j < b->len) {
        sched_time_t s = a->iv[i].start > b->iv[j].start ? a->iv[i].start : b->iv[j].start;
        sched_time_t e = a->iv[i].end < b->iv[j].end ? a->iv[i].end : b->iv[j].end;
        if (push(out, s, e))
            return HCP_ENOMEM;
        if (a->iv[i].end < b->iv[j].end)
            i++;
        else
            j++;
    }
    return 0;
}

int sched_set_subtract(const sched_set_t *a, const sched_set_t *b, sched_set_t *out)
{
    size_t j = 0;
    sched_set_clear(out);
    for (size_t i = 0; i < a->len; i++) {
        sched_time_t s = a->iv[i].start, e = a->iv[i].end;
        while (j < b->len && b->iv[j].end <= s)
            j++;
        size_t k = j;
        while (s < e && k < b->len && b->iv[k].start < e) {
            if (push(out, s, b->iv[k].start))
                return HCP_ENOMEM;
            if (b->iv[k].end > s)
                s = b->iv[k].end;
            k++;
        }
        if (push(out, s, e))
            return HCP_ENOMEM;
    }
    return 0;
}
