/* behavior: the status an HCMP reports about itself (DESIGN.md 2.1).
 *
 * status.behavior tells a reader, without evaluating the schedule, whether
 * changes are permitted now, until when, what comes next, the next windows
 * and the recent transitions. It is a pure function of the policy, the
 * instant and the previously written status (whose history it extends), so
 * the controller writes it only when it changes and tests can pin `now`.
 */
#ifndef HCP_POLICY_BEHAVIOR_H
#define HCP_POLICY_BEHAVIOR_H

#include <jansson.h>

#include "base/error.h"
#include "policy/policy.h"
#include "schedule/schedule.h"

/* Errors: HCP_ENOMEM (base/error.h) when allocation fails. */

#define BEHAVIOR_UPCOMING 5 /* permitted windows listed in `upcoming` */
#define BEHAVIOR_HISTORY 5  /* transitions kept in `history` */

/* Computes the whole HCMP status object at `now`:
 *
 *   {"observedGeneration": N,
 *    "behavior": {
 *      "current":  {"state", "startTime", "endTime", "reason"},
 *      "next":     {"state", "startTime", "endTime", "reason"} | null,
 *      "upcoming": [{"startTime", "endTime"}, ...],
 *      "history":  [{"strategy", "state", "startTime", "endTime"}, ...]},
 *    "conditions": [Ready, ChangesRestricted]}
 *
 * state is ChangesUnpaused or ChangesPaused. Times are UTC RFC 3339 with Z;
 * null marks an unbounded end (permitted since forever, never ending).
 * `next` is null when the current state never ends. `upcoming` holds the
 * next BEHAVIOR_UPCOMING permitted windows whose end is after now (the
 * current one first when permitted now), none starting SCHED_LOOKAHEAD or
 * later after now. The reason names why the state holds; inside an
 * exclusion it carries the exclusion's reason ("Excluded: <reason>").
 *
 * history lists the last BEHAVIOR_HISTORY periods, newest first, the newest
 * one ongoing (endTime null). Without a previous history it is derived from
 * the schedule's past transitions. With one, the previous entries are kept
 * as the record of what happened: while the generation is unchanged, newer
 * transitions of the schedule are added on top; after a spec edit (a new
 * generation) a period starting at `now` under the new spec is added and
 * the previous newest period is closed at `now`, so the past is never
 * rewritten with the new spec's windows.
 *
 * An invalid policy reports Ready=False with the validation message and
 * behaves as Restrictive. prev_status (borrowed, may be NULL) is the object
 * previously written; malformed parts of it are ignored. Condition
 * lastTransitionTime is carried over while a condition's status is
 * unchanged. Returns 0 with *out a new reference, or HCP_ENOMEM or an
 * engine error with *out NULL. */
int behavior_status(const policy_t *p, sched_time_t now, const json_t *prev_status,
                    json_t **out);

/* status.behavior.history of an object whose timeline is resolved from a
 * stanza rather than owned (a HostedCluster's or NodePool's, kept on its
 * companion object): prev_status's behavior.history (borrowed, may be NULL;
 * malformed entries end it) extended by the period in state `permitted`
 * under `strategy` (the strategy in force) that began at `start`. When the
 * newest recorded entry already has that state and strategy, the history
 * is returned as recorded (steady state changes nothing). Otherwise the new
 * period goes on top, the previous newest one is closed at its start, and
 * the oldest beyond BEHAVIOR_HISTORY are dropped. A start at or before the
 * newest recorded start (the timeline itself was replaced, e.g. by a policy
 * edit) reads as `now`, so history never runs backwards. Returns 0 with
 * *out a new array, or HCP_ENOMEM. */
int behavior_history_extend(const json_t *prev_status, const char *strategy, int permitted,
                            sched_time_t start, sched_time_t now, json_t **out);

#endif
