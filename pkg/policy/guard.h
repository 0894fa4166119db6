/* guard: the guard rails Service Delivery sets on change management.
 *
 * A fleet's operator limits how far a policy or a changeManagement stanza
 * may hold changes back, the way GKE enforces "48 hours of maintenance
 * availability in any 32 days, in blocks of 4 hours or more" and at most 30
 * days of "no upgrades" exclusion. The limits are a small configuration
 * (guard_config_t, read from a ConfigMap's data or a YAML/JSON file by
 * guard_config_parse()), and guard_check() evaluates them on an *effective*
 * schedule: a HostedCluster's timeline, or a NodePool's intersection with
 * its HostedCluster's, over the next 12 months. The verdict names each rule
 * that fails, by how much, and the first period that falls short.
 *
 * Everything here is pure: `now` is a parameter, the caller reads files and
 * the admission request. The validating webhook, `preview --check` and the
 * tests share these functions.
 */
#ifndef HCP_POLICY_GUARD_H
#define HCP_POLICY_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "policy/policy.h"
#include "schedule/schedule.h"

/* Errors: HCP_EINVAL (base/error.h) for an invalid configuration (detail in
 * err, naming the key), HCP_ENOMEM when allocation fails, and the schedule
 * engine's codes from guard_check(). */

/* How far ahead guard_check() looks: 12 months of 365 days. */
#define GUARD_HORIZON ((sched_time_t)365 * 86400)

#define GUARD_MAX_EXEMPT 32     /* exempt namespaces, and users, each */
#define GUARD_NAMELEN 254       /* a namespace or user name, NUL included */
#define GUARD_MSGLEN 512        /* room for one rule's message */
#define GUARD_AFTER_SETTLE 1800 /* afterChangeSettle's default (30m) */
#define GUARD_AFTER_GRACE 600   /* afterChangeGrace's default (10m) */
#define GUARD_AFTER_MAX 604800  /* afterChangeSettle at most (7 days) */
#define GUARD_HOLD_AGE 2592000  /* holdAgeWarning's default (30 days) */
#define GUARD_HOLD_AGE_REPEAT 604800 /* a hold still aging is told again weekly */

/* The limits. A zero limit is not enforced. Plain data: copy it freely. */
typedef struct guard_config {
    sched_time_t min_permitted;     /* minPermittedTime: seconds permitted in
                                       every rolling period */
    sched_time_t period;            /* rollingPeriod: length of that period */
    sched_time_t min_block;         /* minBlockLength: shorter permitted
                                       blocks do not count */
    sched_time_t max_exclusion;     /* maxExclusionLength: longest exclusion */
    sched_time_t max_restrictive;   /* maxRestrictiveUntil: furthest
                                       RestrictiveUntil from now */
    sched_time_t min_time_left;     /* minTimeLeft: time a window must still
                                       have for a change to start in it
                                       (schedule/minleft.h); the controller
                                       holds changes by it as the floor under
                                       each policy's (decide/minleft.h) */
    sched_time_t after_settle;      /* afterChangeSettle: how long the health after a
                                       completed change is watched (decide/after.h);
                                       0: GUARD_AFTER_SETTLE */
    sched_time_t after_grace;       /* afterChangeGrace: unhealthy for longer than this
                                       inside it is told at once; 0: the default */
    bool has_max_skew;              /* maxNodePoolSkew given; else HyperShift's (3) */
    int max_skew;                   /* maxNodePoolSkew: minor versions a control-plane
                                       release may be ahead of a NodePool
                                       (decide/skew.h) */
    sched_time_t hold_age_warning;  /* holdAgeWarning: a change held longer is told
                                       (decide/aging.h); 0: GUARD_HOLD_AGE, negative:
                                       off ("0" in the file) */
    char exempt_ns[GUARD_MAX_EXEMPT][GUARD_NAMELEN];    /* exemptNamespaces;
                                       "prefix*" matches by prefix */
    size_t n_exempt_ns;
    char exempt_users[GUARD_MAX_EXEMPT][GUARD_NAMELEN]; /* exemptUsers */
    size_t n_exempt_users;
    char exempt_groups[GUARD_MAX_EXEMPT][GUARD_NAMELEN]; /* exemptGroups: a
                                       requester in any of them is exempt */
    size_t n_exempt_groups;
} guard_config_t;

/* Reads the configuration from a JSON document: a ConfigMap (its `data`,
 * whose values are strings) or a plain object with the same keys. Keys:
 *   minPermittedTime, rollingPeriod, minBlockLength, maxExclusionLength,
 *   maxRestrictiveUntil, minTimeLeft   durations such as "48h", "32d", "1h30m", "0"
 *   afterChangeSettle, afterChangeGrace, holdAgeWarning   durations, not limits
 *                     (holdAgeWarning "0": no warning; absent: 30d)
 *   maxNodePoolSkew   minor versions, 0 to 9 (a number, or its text in a
 *                     ConfigMap); absent: HyperShift's 3
 *   exemptNamespaces, exemptUsers, exemptGroups
 *                     comma- or space-separated names, or (plain object
 *                     only) arrays of strings; "prefix*" matches by prefix
 *   notifications     not read here: the notify module's (notify/config.h)
 *   checks, waves     not read here: check/check.h's, decide/wave.h's
 * Unknown keys are refused, so that a misspelt limit is never silently
 * off; minPermittedTime needs rollingPeriod and may not exceed it. Returns
 * 0 with *cfg filled, or HCP_EINVAL with err naming the key. */
int guard_config_parse(const json_t *doc, guard_config_t *cfg, char *err, size_t errlen);

/* Parses a guard duration ("48h", "32d", "90m", "1d12h", "0"). Returns 0 or
 * HCP_EINVAL (err names `what`). Exposed for command-line flags. */
int guard_duration_parse(const char *s, const char *what, sched_time_t *out, char *err,
                         size_t errlen);

/* The string member key of mapping o (at: the mapping's place, for err) into
 * buf: 1 to len-1 bytes of printable ASCII without spaces; absent: "" and 0
 * unless required. Returns 0 or HCP_EINVAL naming "at.key". For the
 * endpoints of the same file (notifications, checks). */
int guard_str_field(const json_t *o, const char *key, const char *at, bool required, char *buf,
                    size_t len, char *err, size_t errlen);

/* The string member key of mapping o (as guard_str_field() reads it, at
 * most len-1 bytes, len at most 64), one of choices (NULL-terminated), as
 * its index into *out; absent: 0 (the first choice is the default).
 * Returns 0 or HCP_EINVAL naming "at.key" and the choices. */
int guard_choice_field(const json_t *o, const char *key, const char *at, size_t len,
                       const char *const choices[], size_t *out, char *err, size_t errlen);

/* The guard rails' file may give a section as JSON text (a ConfigMap's data
 * key): *v, when a string, is parsed (duplicate keys refused) and replaced
 * by the result, which *owned keeps for the caller to release; else
 * *owned is NULL. Returns 0 or HCP_EINVAL naming "at: not JSON (line N:
 * ...)". */
int guard_json_text(const json_t **v, const char *at, json_t **owned, char *err,
                    size_t errlen);

/* o is a mapping whose keys are all in known (NULL-terminated); else
 * HCP_EINVAL naming "at: must be a mapping" or "at.key: unknown key (the
 * known ones)". */
int guard_mapping_check(const json_t *o, const char *at, const char *const known[], char *err,
                        size_t errlen);

/* An endpoint's name ([a-z0-9-], none of the n names before it: the first
 * at names, each stride bytes after the last), url (http:// or https://,
 * with a host) and token file (absolute, or ""), checked; err names
 * "at.name", "at.url" or "at.tokenFile". Returns 0 or HCP_EINVAL. */
int guard_endpoint_check(const char *at, const char *name, const char *url,
                         const char *token_file, const char *names, size_t stride, size_t n,
                         char *err, size_t errlen);

/* 1 when a request in namespace ns by user, a member of the ngroups
 * groups (ns and user may be NULL, groups NULL when ngroups is 0), is
 * exempt from the guard rails, else 0. */
int guard_exempt(const guard_config_t *cfg, const char *ns, const char *user,
                 const char *const *groups, size_t ngroups);

/* 1 when cfg enforces at least one limit, else 0. */
int guard_enforced(const guard_config_t *cfg);

/* What guard_check() looks at. Everything is borrowed. */
typedef struct guard_input {
    sched_t *effective;                     /* the effective timeline */
    const policy_t *const *policies;        /* policies behind it, for their
                                               exclusions (may be NULL) */
    size_t n_policies;
    int has_restrictive_until;              /* a RestrictiveUntil stanza */
    sched_time_t restrictive_until;
} guard_input_t;

typedef enum guard_rule {
    GUARD_RULE_MIN_PERMITTED = 0, /* minPermittedTime per rollingPeriod */
    GUARD_RULE_MAX_EXCLUSION,     /* maxExclusionLength */
    GUARD_RULE_MAX_RESTRICTIVE,   /* maxRestrictiveUntil */
    GUARD_RULE_MIN_TIME_LEFT,     /* minTimeLeft */
    GUARD_NRULES
} guard_rule_t;

/* One failed rule. */
typedef struct guard_violation {
    guard_rule_t rule;
    sched_time_t by;                 /* how much the limit is missed, seconds */
    sched_time_t period_start;       /* the first period that falls short
                                        (min-permitted; else the offending
                                        interval) */
    sched_time_t period_end;
    char message[GUARD_MSGLEN];      /* one sentence naming the rule */
} guard_violation_t;

typedef struct guard_verdict {
    int allowed;                     /* 1: no rule failed */
    guard_violation_t v[GUARD_NRULES]; /* at most one per rule, in rule order */
    size_t n;
    sched_time_t least_permitted;    /* the smallest permitted time counted in
                                        any rolling period (-1 when not
                                        checked) */
} guard_verdict_t;

/* The rule's configuration key ("minPermittedTime", ...). Static storage. */
const char *guard_rule_name(guard_rule_t r);

/* Evaluates every enforced limit of cfg on in over [now, now +
 * GUARD_HORIZON) and fills *out:
 *   minPermittedTime  every period [s, s + rollingPeriod) inside the horizon
 *                     (the whole horizon when the period is longer) holds
 *                     at least that much permitted time, counting only
 *                     permitted blocks of at least minBlockLength (a block's
 *                     full length decides; the part inside the period
 *                     counts). The earliest period with the least time is
 *                     reported.
 *   maxExclusionLength  no exclusion of the policies that ends after now
 *                     is longer.
 *   maxRestrictiveUntil  a RestrictiveUntil instant is at most that far
 *                     after now.
 *   minTimeLeft       some window of the effective timeline within the
 *                     horizon is at least that long (else no change could
 *                     ever start: sched_min_left_start() finds none).
 * Returns 0 (the verdict says allowed or not) or a schedule engine error. */
int guard_check(const guard_config_t *cfg, const guard_input_t *in, sched_time_t now,
                guard_verdict_t *out);

/* A policy's own spec.minTimeLeft against its own windows, with or without
 * guard rails: a MaintenanceSchedule policy whose larger minimum
 * (controlPlane or workerNodes) no window over the next 12 months meets
 * could never let a change start, so the validating webhook refuses it. The
 * verdict, as guard_check()'s, holds at most a minTimeLeft violation whose
 * message names the field, the longest window and the shortfall
 * ("spec.minTimeLeft.controlPlane: a change starts only with 8h of its
 * window left, but the longest window over the next 12 months is 6h (2h
 * short): no change could ever start"). Returns 0 or an engine error. */
int guard_check_policy_min_left(const policy_t *p, sched_time_t now, guard_verdict_t *out);

/* Formats a duration in seconds as "2d 3h 30m" (or "0s"). */
void guard_format_duration(sched_time_t secs, char *buf, size_t len);

#endif
