/* calendars: `spec.exclusionCalendars` of a policy (internal to pkg/policy;
 * policy.h declares what others call). policy.c parses the spec and
 * compiles the policy's own timelines; these functions read the entries,
 * keep those timelines as the base, and AND each calendar into the kinds of
 * change its scope covers. */
#ifndef HCP_POLICY_CALENDARS_H
#define HCP_POLICY_CALENDARS_H

#include <jansson.h>
#include <stddef.h>

#include "policy/policy.h"

/* Reads the `exclusionCalendars` array of spec (may be absent) into p.
 * Returns 0, HCP_EINVAL (err names the field) or HCP_ENOMEM. */
int policy_calendars_parse(const json_t *spec, policy_t *p, char *err, size_t errlen);

/* Moves p->sched and p->sched_for[] (the policy's own timelines) to its
 * base and composes them again with every calendar as it stands (one not
 * read yet holds all it covers). Returns 0 or HCP_ENOMEM. */
int policy_calendars_compose(policy_t *p);

/* Frees the calendar entries and the base timelines. */
void policy_calendars_free(policy_t *p);

/* A scope field (`exclude[].scope`, `exclusionCalendars[].scope`): absent
 * is AllChanges. Returns 0, HCP_EINVAL naming the field, HCP_ENOMEM. */
int policy_scope_get(const json_t *obj, const char *path, policy_scope_t *out, char *err,
                     size_t errlen);

#endif
