/* policy: HostedChangeManagementPolicy (HCMP) parsing and validation.
 *
 * An HCMP arrives as JSON (from the API server, or converted from YAML by the
 * manifest module). policy_parse() validates every field strictly, because a
 * typo that were silently ignored could widen a maintenance window, and turns
 * the MaintenanceSchedule into the schedule engine's input: the structured
 * `recurrence` is translated into the same RFC 5545 subset that `rrule`
 * accepts, so that one engine evaluates both (DESIGN.md 2.1, 3.1, 3.2).
 *
 * A policy that fails validation is still returned, carrying its metadata and
 * the validation message, so that its status can say why it is not Ready. Such
 * a policy behaves as Restrictive (policy_schedule() returns "never").
 *
 * Everything here is pure computation: no I/O, no clock.
 */
#ifndef HCP_POLICY_POLICY_H
#define HCP_POLICY_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/error.h"
#include "policy/icsread.h"
#include "schedule/schedule.h"

/* Errors: functions return 0 or a negative HCP_E* code (base/error.h):
 * HCP_EINVAL when the document is not a valid policy (detail in err),
 * HCP_ENOMEM when allocation fails. */

/* Room for any validation message policy_parse() writes. */
#define POLICY_ERRLEN 512

typedef enum policy_strategy {
    POLICY_PERMISSIVE = 0,          /* changes always permitted */
    POLICY_RESTRICTIVE,             /* changes never permitted */
    POLICY_MAINTENANCE_SCHEDULE     /* permitted inside the schedule's windows */
} policy_strategy_t;

/* What an exclusion holds (`exclude[].scope`, GKE's scopes, DESIGN.md
 * 3.16). */
typedef enum policy_scope {
    POLICY_SCOPE_ALL = 0,           /* AllChanges (the default) */
    POLICY_SCOPE_MINOR,             /* MinorUpgrades */
    POLICY_SCOPE_NODES,             /* Nodes */
    POLICY_SCOPE_MINOR_AND_NODES,   /* MinorUpgradesAndNodes */
    POLICY_NSCOPES
} policy_scope_t;

/* The kinds of change a scope tells apart. A control-plane change is a
 * release or configuration of the HostedCluster, a node change any change
 * of a NodePool; minor: a release whose minor version differs from the one
 * it replaces (or cannot be told: fail safe). */
typedef enum policy_change {
    POLICY_CHANGE_CP = 0,        /* control plane: z-stream or configuration */
    POLICY_CHANGE_CP_MINOR,      /* control plane: a minor upgrade */
    POLICY_CHANGE_NODES,         /* NodePool: z-stream or configuration */
    POLICY_CHANGE_NODES_MINOR,   /* NodePool: a minor upgrade */
    POLICY_NCHANGES
} policy_change_t;

/* True when an exclusion of scope s holds a change of kind c. Every scope
 * holds POLICY_CHANGE_NODES_MINOR. */
bool policy_scope_covers(policy_scope_t s, policy_change_t c);

/* The scope's name as written in manifests ("AllChanges", ...), and the
 * change kind's in words ("control-plane z-stream or configuration", ...).
 * Static storage. */
const char *policy_scope_name(policy_scope_t s);
const char *policy_change_name(policy_change_t c);

/* One `spec.maintenanceSchedule.exclude[]` entry in local dates. */
typedef struct policy_exclusion {
    int32_t from_day;  /* first excluded local date, days since 1970-01-01 */
    int32_t until_day; /* first local date no longer excluded; > from_day */
    char *reason;      /* owned; "" when the manifest gave none */
    policy_scope_t scope;
} policy_exclusion_t;

/* What became of an exclusion calendar when it was last read. */
typedef enum policy_calendar_state {
    POLICY_CALENDAR_UNREAD = 0,  /* not read yet: holds every change it covers */
    POLICY_CALENDAR_READ,        /* read whole: its events are exclusions */
    POLICY_CALENDAR_MISSING,     /* no such ConfigMap, or no such key: holds */
    POLICY_CALENDAR_UNREADABLE   /* something in it could not be read: holds */
} policy_calendar_state_t;

/* One `spec.exclusionCalendars[]` entry: a ConfigMap of the policy's
 * namespace holding text/calendar data, and what was read from it. */
typedef struct policy_calendar {
    char *name;          /* owned; the ConfigMap */
    char *key;           /* owned; its data key, NULL: the ConfigMap's only key */
    policy_scope_t scope;
    policy_calendar_state_t state;
    char *why;           /* owned; the sentence a change it holds is held by
                            when state is not READ, else NULL */
    icsread_t read;      /* what was read (problems and counts; its spans are
                            freed once composed) */
    sched_t *sched;      /* owned reference: permitted outside its events */
    uint64_t fp;         /* what it was composed from (text and verdict) */
} policy_calendar_t;

typedef struct policy {
    /* metadata */
    char *name;         /* owned; "" when absent */
    char *namespace_;   /* owned; "" when absent */
    int64_t generation; /* metadata.generation; 0 when absent */

    /* validation outcome */
    int valid;          /* 1 when the spec passed validation and compiled */
    char *message;      /* owned; the validation message when !valid, else "" */

    /* spec (meaningful only when valid) */
    policy_strategy_t strategy;
    int has_schedule;   /* spec.maintenanceSchedule present (and not null) */
    char *time_zone;    /* owned; IANA name, "UTC" by default */
    int has_permit;     /* permit present: rrule is set */
    char *rrule;        /* owned; the rule evaluated (translated from
                           `recurrence` or copied from `rrule`); NULL
                           without permit */
    int start_minute;   /* window start, minutes after local midnight */
    int32_t duration;   /* seconds; 0 means "until the next local midnight" */
    sched_time_t min_left_cp;      /* spec.minTimeLeft.controlPlane: seconds of
                                      a window that must remain for a
                                      control-plane change to start; 0 none */
    sched_time_t min_left_workers; /* spec.minTimeLeft.workerNodes: the same
                                      for a NodePool's change; 0 none */
    policy_exclusion_t *exclusions; /* owned array, in manifest order */
    size_t n_exclusions;

    sched_t *sched;     /* owned reference: the policy's whole timeline
                           (always, never or the compiled schedule), where
                           every kind of change is permitted (every
                           exclusion applies); never NULL for a parsed
                           policy, "never" when invalid */
    bool scoped;        /* an exclusion has a scope other than AllChanges */
    sched_t *sched_for[POLICY_NCHANGES]; /* owned references: the timeline of
                           each kind of change (the exclusions whose scope
                           covers it); each is a reference to sched when
                           !scoped, and sched_for[POLICY_CHANGE_NODES_MINOR]
                           always is */
    policy_calendar_t *calendars; /* owned array: spec.exclusionCalendars */
    size_t n_calendars;
    sched_t *base;       /* owned references: sched and sched_for[] before */
    sched_t *base_for[POLICY_NCHANGES]; /* the calendars; NULL without any */
} policy_t;

/* Parses and validates an HCMP document (a JSON object with apiVersion,
 * kind, metadata, spec and optionally status) and compiles its schedule.
 * `now` only tells the engine where to expand first; results never depend
 * on it.
 *
 * Returns 0 with *out a new valid policy; HCP_EINVAL with *out a new
 * policy whose `valid` is 0, whose `message` (and err) name the offending
 * field path and the reason, e.g.
 *   spec.maintenanceSchedule.permit.startTime: "25:00" is not a valid HH:MM time
 * and whose metadata is filled as far as it could be read; or HCP_ENOMEM
 * with *out NULL. The caller owns *out and frees it with policy_free(). err
 * may be NULL. The document is borrowed and not modified. */
int policy_parse(const json_t *doc, sched_time_t now, policy_t **out, char *err,
                 size_t errlen);

/* What is wrong with an object, as an admission webhook answers it: the
 * field path and the message, in the same words the controller writes into
 * the policy's Ready condition (joined there as "<field>: <message>"). */
typedef struct policy_problem {
    char field[POLICY_ERRLEN];   /* e.g. spec.maintenanceSchedule.permit.duration */
    char message[POLICY_ERRLEN]; /* e.g. "8 hours" is not a valid duration (...) */
} policy_problem_t;

/* The validation a webhook calls: parses and validates an HCMP document as
 * policy_parse() does (the controller's own check stays the second line)
 * and keeps nothing. Returns 0 when the policy is valid, HCP_EINVAL with
 * *out filled when it is not, HCP_ENOMEM. `now` as for policy_parse(). A
 * policy the controller accepts only after normalising it (a day listed
 * twice) is valid here too; docs/user-guide.md lists the cases. */
int policy_validate(const json_t *doc, sched_time_t now, policy_problem_t *out);

/* Splits a "<field>: <message>" text of this module (policy_parse()'s
 * message, an invalid stanza's error) at its first ": " into *out. A text
 * without one becomes a message about the whole document ("document"). */
void policy_problem_split(const char *text, policy_problem_t *out);

/* The label a ConfigMap carries to be read as an exclusion calendar (any
 * value): the controller watches only those, never every ConfigMap. */
#define POLICY_CALENDAR_LABEL "changemanagement.hypershift.openshift.io/exclusion-calendar"

/* The data of ConfigMap ns/name (its `data` object, borrowed), or NULL
 * when there is no such ConfigMap (or the caller cannot see it). */
typedef const json_t *(*policy_configmap_fn)(const char *ns, const char *name, void *ud);

/* Reads every exclusion calendar of p from the ConfigMaps `data_of` finds
 * (floating and all-day times in the policy's time zone, expanded around
 * now) and composes p's timelines again: a calendar's events are
 * exclusions of the changes its scope covers ("<SUMMARY> (calendar
 * <name>)"); a calendar missing or with anything that could not be read
 * holds all of them, with a reason that says so (fail safe: a freeze that
 * could not be read is still a freeze), as does time past the range read
 * when an event recurs beyond it. Sets changed when a timeline may have
 * changed. No-op for a policy without calendars or an invalid one. Returns
 * 0 or HCP_ENOMEM. */
int policy_read_calendars(policy_t *p, policy_configmap_fn data_of, void *ud, sched_time_t now,
                          bool *changed);

/* True when p names ConfigMap `name` as an exclusion calendar. */
bool policy_uses_calendar(const policy_t *p, const char *name);

/* Frees a policy and everything it owns. NULL is accepted. */
void policy_free(policy_t *p);

/* The policy's timeline as a new reference (release with sched_unref()):
 * Permissive => always, Restrictive => never, MaintenanceSchedule => the
 * compiled schedule, or never when the spec has no maintenanceSchedule or
 * the policy is invalid (fail safe). NULL only when out of memory. */
sched_t *policy_schedule(const policy_t *p);

/* The timeline of one kind of change, as a new reference (NULL only when
 * out of memory): policy_schedule() narrowed to the exclusions whose scope
 * covers it. */
sched_t *policy_schedule_for(const policy_t *p, policy_change_t c);

/* The strategy's name as written in manifests ("Permissive", ...). Static
 * storage. */
const char *policy_strategy_name(policy_strategy_t s);

/* Checks that doc looks like an HCMP: a JSON object whose `kind` is
 * HostedChangeManagementPolicy. Returns 1 or 0. Used to pick the policy
 * documents out of a multi-document manifest. */
int policy_is_hcmp(const json_t *doc);

#endif
