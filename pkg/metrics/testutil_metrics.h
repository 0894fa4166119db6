/*
 * metrics/testutil_metrics.h - owned families, for tests.
 *
 * An owned family (registered without a collector) keeps its label sets
 * (children) and their values itself; metrics_registry_render() prints them
 * and metrics_registry_free() frees them. The program registers collector
 * families only, so the functions that create and update children live in
 * the tests' helper library (linked into unit tests only).
 */
#ifndef METRICS_TESTUTIL_METRICS_H
#define METRICS_TESTUTIL_METRICS_H

#include "metrics/metrics.h"

/*
 * Returns the child of an owned family for these label values (one per
 * label name, in order; NULL when the family has no labels), creating it
 * with value 0 on first use. Borrowed: valid until the family's registry is
 * freed or the label set is removed. Values are copied. Returns NULL for a
 * collector family, a NULL value, or when memory runs out.
 */
metrics_child *metrics_child_get(metrics_family *f, const char *const *values);

/* Adds delta (>= 0, finite) to a counter child. Returns 0 or HCP_EINVAL. */
int metrics_child_add(metrics_child *c, double delta);

/* Sets a gauge child to v. Returns 0 or HCP_EINVAL (not a gauge). */
int metrics_child_set(metrics_child *c, double v);

/* Adds delta (any sign) to a gauge child. Returns 0 or HCP_EINVAL. */
int metrics_child_gauge_add(metrics_child *c, double delta);

/*
 * Records one observation in a histogram child: the smallest bucket whose
 * bound is >= v, the sum and the count. NaN is refused (HCP_EINVAL)
 * because it would poison _sum for the life of the process.
 */
int metrics_child_observe(metrics_child *c, double v);

/* Current value of a counter or gauge child (histograms: the sum). */
double metrics_child_value(const metrics_child *c);

/* Observations recorded by a histogram child (0 for other types). */
uint64_t metrics_child_count(const metrics_child *c);

/*
 * Shorthands: find or create the child, then add/set/observe. Return 0,
 * HCP_EINVAL or HCP_ENOMEM.
 */
int metrics_counter_add(metrics_family *f, const char *const *values, double delta);
int metrics_gauge_set(metrics_family *f, const char *const *values, double v);
int metrics_histogram_observe(metrics_family *f, const char *const *values, double v);

/*
 * Forgets one label set of an owned family (an object that was deleted), so
 * it is no longer rendered. Any metrics_child pointer to it becomes invalid.
 * Returns 0, or HCP_EINVAL when the label set is unknown.
 */
int metrics_child_remove(metrics_family *f, const char *const *values);

#endif
