/*
 * metrics/testutil_metrics.c - owned families for tests: label sets created,
 * updated and removed by the caller (see testutil_metrics.h). The program
 * itself only registers collector families; this code is linked into the
 * unit tests only.
 */
#include "metrics/testutil_metrics.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t hash_values(const metrics_family *f, const char *const *values)
{
    uint32_t h = 2166136261u;
    size_t i;
    const unsigned char *p;

    for (i = 0; i < f->nlabels; i++) {
        for (p = (const unsigned char *)values[i]; *p; p++) {
            h ^= *p;
            h *= 16777619u;
        }
        h ^= 0xff; /* separator: ("a","bc") and ("ab","c") differ */
        h *= 16777619u;
    }
    return h;
}

static int same_values(const metrics_family *f, const metrics_child *c, const char *const *values)
{
    size_t i;

    for (i = 0; i < f->nlabels; i++)
        if (strcmp(c->values[i], values[i]) != 0)
            return 0;
    return 1;
}

/* Rebuilds the index with `size` slots (a power of two larger than nchildren). */
static int rebuild_index(metrics_family *f, size_t size)
{
    uint32_t *idx = calloc(size, sizeof(uint32_t));
    size_t i, slot;

    if (idx == NULL)
        return HCP_ENOMEM;
    for (i = 0; i < f->nchildren; i++) {
        slot = f->children[i]->hash & (size - 1);
        while (idx[slot])
            slot = (slot + 1) & (size - 1);
        idx[slot] = (uint32_t)(i + 1);
    }
    free(f->index);
    f->index = idx;
    f->index_size = size;
    return 0;
}

/* Position of the child with these values, or -1. */
static long find_child(const metrics_family *f, const char *const *values, uint32_t h)
{
    size_t slot;

    if (f->index_size == 0)
        return -1;
    slot = h & (f->index_size - 1);
    while (f->index[slot]) {
        const metrics_child *c = f->children[f->index[slot] - 1];

        if (c->hash == h && same_values(f, c, values))
            return (long)f->index[slot] - 1;
        slot = (slot + 1) & (f->index_size - 1);
    }
    return -1;
}

metrics_child *metrics_child_get(metrics_family *f, const char *const *values)
{
    metrics_child *c = NULL;
    uint32_t h;
    long pos;
    size_t i, size, need, off, lens[METRICS_MAX_LABELS];
    char *p;

    if (f == NULL || f->collect != NULL || f->name == NULL || !metrics_label_values_ok(f, values))
        return NULL;
    h = hash_values(f, values);
    pos = find_child(f, values, h);
    if (pos >= 0)
        return f->children[pos];
    if (f->nchildren >= UINT32_MAX - 1)
        return NULL;

    /* One allocation: struct, bucket counts, then the NUL-terminated values. */
    off = sizeof(metrics_child) + f->nbuckets * sizeof(uint64_t);
    need = off;
    for (i = 0; i < f->nlabels; i++) {
        lens[i] = strlen(values[i]) + 1;
        need += lens[i];
    }
    c = calloc(1, need);
    if (c == NULL)
        goto fail;
    c->family = f;
    c->hash = h;
    c->buckets = f->nbuckets ? (uint64_t *)(void *)(c + 1) : NULL;
    p = (char *)c + off;
    for (i = 0; i < f->nlabels; i++) {
        memcpy(p, values[i], lens[i]);
        c->values[i] = p;
        p += lens[i];
    }
    if (f->nchildren == f->cchildren) {
        size_t cap = f->cchildren ? f->cchildren * 2 : 8;
        metrics_child **arr = realloc(f->children, cap * sizeof(*arr));

        if (arr == NULL)
            goto fail;
        f->children = arr;
        f->cchildren = cap;
    }
    f->children[f->nchildren++] = c;
    /* Keep the table at most half full. */
    size = f->index_size ? f->index_size : 16;
    while (size < 2 * f->nchildren)
        size *= 2;
    if (size != f->index_size) {
        if (rebuild_index(f, size) != 0) {
            f->nchildren--;
            goto fail;
        }
    } else {
        size_t slot = h & (size - 1);

        while (f->index[slot])
            slot = (slot + 1) & (size - 1);
        f->index[slot] = (uint32_t)f->nchildren;
    }
    return c;
fail:
    free(c);
    return NULL;
}

int metrics_child_remove(metrics_family *f, const char *const *values)
{
    long pos;

    if (f == NULL || f->collect != NULL || !metrics_label_values_ok(f, values))
        return HCP_EINVAL;
    pos = find_child(f, values, hash_values(f, values));
    if (pos < 0)
        return HCP_EINVAL;
    free(f->children[pos]);
    memmove(&f->children[pos], &f->children[pos + 1],
            (f->nchildren - (size_t)pos - 1) * sizeof(f->children[0]));
    f->nchildren--;
    /* Positions shifted: rebuild in place (same size, cannot need more room). */
    memset(f->index, 0, f->index_size * sizeof(uint32_t));
    {
        size_t i, slot;

        for (i = 0; i < f->nchildren; i++) {
            slot = f->children[i]->hash & (f->index_size - 1);
            while (f->index[slot])
                slot = (slot + 1) & (f->index_size - 1);
            f->index[slot] = (uint32_t)(i + 1);
        }
    }
    return 0;
}

int metrics_child_add(metrics_child *c, double delta)
{
    if (c == NULL || c->family->type != METRICS_COUNTER || !(delta >= 0) || isinf(delta))
        return HCP_EINVAL;
    c->value += delta;
    return 0;
}

int metrics_child_set(metrics_child *c, double v)
{
    if (c == NULL || c->family->type != METRICS_GAUGE)
        return HCP_EINVAL;
    c->value = v;
    return 0;
}

int metrics_child_gauge_add(metrics_child *c, double delta)
{
    if (c == NULL || c->family->type != METRICS_GAUGE)
        return HCP_EINVAL;
    c->value += delta;
    return 0;
}

int metrics_child_observe(metrics_child *c, double v)
{
    const metrics_family *f;
    size_t i;

    if (c == NULL || c->family->type != METRICS_HISTOGRAM || isnan(v))
        return HCP_EINVAL;
    f = c->family;
    for (i = 0; i < f->nbuckets; i++) {
        if (v <= f->buckets[i]) {
            c->buckets[i]++;
            break;
        }
    }
    c->count++;
    c->value += v;
    return 0;
}

double metrics_child_value(const metrics_child *c)
{
    return c->value;
}

uint64_t metrics_child_count(const metrics_child *c)
{
    return c->family->type == METRICS_HISTOGRAM ? c->count : 0;
}

int metrics_counter_add(metrics_family *f, const char *const *values, double delta)
{
    metrics_child *c;

    if (f == NULL || f->type != METRICS_COUNTER || f->collect || !metrics_label_values_ok(f, values))
        return HCP_EINVAL;
    c = metrics_child_get(f, values);
    return c ? metrics_child_add(c, delta) : HCP_ENOMEM;
}

int metrics_gauge_set(metrics_family *f, const char *const *values, double v)
{
    metrics_child *c;

    if (f == NULL || f->type != METRICS_GAUGE || f->collect || !metrics_label_values_ok(f, values))
        return HCP_EINVAL;
    c = metrics_child_get(f, values);
    return c ? metrics_child_set(c, v) : HCP_ENOMEM;
}

int metrics_histogram_observe(metrics_family *f, const char *const *values, double v)
{
    metrics_child *c;

    if (f == NULL || f->type != METRICS_HISTOGRAM || f->collect || !metrics_label_values_ok(f, values) || isnan(v))
        return HCP_EINVAL;
    c = metrics_child_get(f, values);
    return c ? metrics_child_observe(c, v) : HCP_ENOMEM;
}
