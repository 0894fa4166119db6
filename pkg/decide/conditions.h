/* conditions: status.conditions as hcp-controller writes them.
 *
 * HostedClusters, NodePools and hosted ClusterVersions all carry a list of
 * conditions that other writers own too, and a merge patch replaces a list
 * as a whole. So every status write takes the list as served, keeps every
 * condition that is not ours unchanged and in order, and appends ours, with
 * lastTransitionTime carried over while a condition's status does not
 * change. This module is that one merge, the test that a list already holds
 * what is wanted, and the status patch document around it. Pure functions.
 */
#ifndef HCP_DECIDE_CONDITIONS_H
#define HCP_DECIDE_CONDITIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "schedule/schedule.h"

/* One of our conditions as wanted. The strings are borrowed. */
typedef struct decide_cond {
    const char *type;     /* condition type, e.g. "ChangesPaused" */
    bool status;          /* written as "True" / "False" */
    const char *reason;   /* CamelCase; NULL is written as "" */
    const char *message;  /* NULL is written as "" */
    sched_time_t since;   /* lastTransitionTime when the status changes */
} decide_cond_t;

/* The dialect of the object the conditions are written on. */
typedef struct decide_cond_style {
    bool generation_set;  /* write observedGeneration */
    int64_t generation;   /* its value */
    bool severity;        /* NodePools: "severity":"Info" on True conditions */
} decide_cond_style_t;

/* The conditions list `have` (a served status.conditions; NULL or not an
 * array reads as empty) with want[0..n) merged in: every condition whose type
 * is not among want, unchanged and in order, then want in order. The first
 * condition of a wanted type in `have` supplies the lastTransitionTime kept
 * while the status is unchanged. style may be NULL (neither generation nor
 * severity). Returns a new array, or NULL when out of memory. */
json_t *decide_conditions_merge(const json_t *have, const decide_cond_t *want, size_t n,
                                const decide_cond_style_t *style);

/* True when `have` holds exactly one condition of each wanted type, with the
 * wanted status, reason and message (a missing reason or message never
 * matches, an empty wanted one matches ""). */
bool decide_conditions_match(const json_t *have, const decide_cond_t *want, size_t n);

/* The status merge patch {"metadata":{"resourceVersion":rv},"status":status}
 * (without metadata when rv is NULL). Takes the reference to status, also on
 * failure. Returns a new reference, or NULL when out of memory. */
json_t *decide_status_patch_doc(json_t *status, const char *resource_version);

#endif
