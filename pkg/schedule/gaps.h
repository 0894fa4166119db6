/* gaps: the leaf of a schedule tree that excludes a list of instants, each
 * span with its reason (internal to pkg/schedule; schedule.c builds the
 * trees around it). Everything outside the spans is permitted. An exclusion
 * calendar (policy/icsread) becomes one. Immutable once built. */
#ifndef HCP_SCHEDULE_GAPS_H
#define HCP_SCHEDULE_GAPS_H

#include <stddef.h>

#include "schedule/schedule.h"

struct sched_gaps;

/* A new leaf from n spans (any order, may overlap; empty ones are dropped)
 * and their reasons (copied). NULL when out of memory. */
struct sched_gaps *sched_gaps_new(const sched_excluded_t *v, size_t n,
                                  const char *const *reasons, size_t n_reasons);
void sched_gaps_free(struct sched_gaps *g);

/* Forward: the permitted interval holding t or the first after it, when it
 * starts before B. Backward: the permitted interval holding t or the last
 * before it, when it ends after B. Returns 1 with *iv set, or 0. */
int sched_gaps_step(const struct sched_gaps *g, sched_time_t t, sched_time_t B, int forward,
                    sched_interval_t *iv);

/* 1 when t is permitted, else 0. */
int sched_gaps_member(const struct sched_gaps *g, sched_time_t t);

/* The reason of the span covering t that starts first (borrowed), or NULL;
 * *until (when not NULL) the end of the excluded run containing t. */
const char *sched_gaps_exclusion_at(const struct sched_gaps *g, sched_time_t t,
                                    sched_time_t *until);

size_t sched_gaps_memory(const struct sched_gaps *g);

#endif
