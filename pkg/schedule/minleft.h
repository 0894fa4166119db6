/* minleft: the effective start of a change that needs time left in its
 * window (a minimum time left: GKE and AKS start an upgrade only with
 * enough of the window left).
 *
 * A change may start at t only while at least `min_left` seconds of the
 * permitted interval holding t remain (t + min_left <= its end): a window
 * [s, e) offers starts in [s, e - min_left], none when it is shorter than
 * min_left. An interval that never ends (SCHED_POS_INF) always has time
 * left. Pure: the schedule and the instants are parameters.
 */
#ifndef HCP_SCHEDULE_MINLEFT_H
#define HCP_SCHEDULE_MINLEFT_H

#include "schedule/schedule.h"

/* The first starts at or after `from`, looking until from + horizon: *out
 * gets [first start, last start + 1) (half-open, seconds), the permitted
 * interval they belong to in *window (when not NULL). min_left <= 0: every
 * permitted instant. Returns 1 found, 0 none within the horizon (every
 * window is shorter than min_left, or none), or a negative schedule error. */
int sched_min_left_start(sched_t *s, sched_time_t from, sched_time_t min_left,
                         sched_time_t horizon, sched_interval_t *out, sched_interval_t *window);

/* The longest permitted interval starting before from + horizon and ending
 * after from (its part after `from` counted), into *len (0 when none).
 * Returns 0 or a negative schedule error. */
int sched_longest_window(sched_t *s, sched_time_t from, sched_time_t horizon, sched_time_t *len);

#endif
