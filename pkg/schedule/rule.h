/* rule: the MaintenanceSchedule leaf of a schedule tree (internal to
 * pkg/schedule; schedule.c builds the trees around it).
 *
 * A leaf is compiled from a sched_spec_t and expands its occurrences
 * lazily, as queries need them, into a memo that only grows: the functions
 * below that take a non-const rule may extend it (and may fail with
 * HCP_ENOMEM doing so), but never change an answer.
 */
#ifndef HCP_SCHEDULE_RULE_H
#define HCP_SCHEDULE_RULE_H

#include <stddef.h>

#include "schedule/schedule.h"

struct sched_rule;

/* Compiles spec into a new leaf (*out, owned by the caller: free it with
 * sched_rule_free()), expanded around `now`. Returns 0, HCP_EINVAL with err
 * filled (time zone, start minute, duration, rule, exclusions), or
 * HCP_ENOMEM. */
int sched_rule_compile(const sched_spec_t *spec, sched_time_t now, struct sched_rule **out,
                       char *err, size_t errlen);

/* Frees a leaf; r may be NULL. */
void sched_rule_free(struct sched_rule *r);

/* The permitted interval holding t, or else the first one after t, when it
 * starts before H; its ends are followed no further than E. In *iv.
 * Returns 1 (found), 0 (none) or HCP_ENOMEM. */
int sched_rule_next(struct sched_rule *r, sched_time_t t, sched_time_t H, sched_time_t E,
                    sched_interval_t *iv);

/* The permitted interval holding t, or else the last one before t, when it
 * ends after L; its ends are followed no further than E. In *iv. Returns 1,
 * 0 or HCP_ENOMEM. */
int sched_rule_prev(struct sched_rule *r, sched_time_t t, sched_time_t L, sched_time_t E,
                    sched_interval_t *iv);

/* Whether t is permitted: 1, 0, or HCP_ENOMEM. */
int sched_rule_member(struct sched_rule *r, sched_time_t t);

/* The reason of the exclusion holding t (borrowed from r), or NULL. */
const char *sched_rule_exclusion_reason(const struct sched_rule *r, sched_time_t t);

/* Like sched_rule_exclusion_reason(), and *until (when not NULL) gets the
 * end of the excluded span that contains t: the latest end among the
 * exclusions that cover t or continue one that does without a gap. */
const char *sched_rule_exclusion_at(const struct sched_rule *r, sched_time_t t,
                                    sched_time_t *until);

/* Bytes the leaf holds, for the memory figures. */
size_t sched_rule_memory(const struct sched_rule *r);

#endif
