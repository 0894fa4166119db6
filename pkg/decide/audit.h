/* audit: who changed what (DESIGN.md 3.11).
 *
 * Every override (a write that changes a stanza's strategy, permissiveUntil
 * or restrictiveUntil) and every request held at admission records who made
 * it (the admission request's userInfo.username, nothing else of userInfo),
 * when, and the reason the writer gave in DECIDE_REASON_ANNOTATION; every
 * withdrawal of a held request (DESIGN.md 3.13, withdraw.h) who made it,
 * when, and what it withdrew. The
 * admission webhook writes the record as annotations of the object in the
 * very write it admits (decide_audit_marks()), so it survives a restart and
 * every replica reads the same; the controller reads them back at watch time
 * (decide_audit_extract()) into the companion (decide_audit_doc()) and its
 * Events. A write that edits a record without making the change it records
 * gets the record back as it was: a record cannot be forged through the
 * webhook. Tokens and credentials are never recorded.
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_AUDIT_H
#define HCP_DECIDE_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "schedule/schedule.h"

/* The writer's reason, optional, as people write it on the object. */
#define DECIDE_REASON_ANNOTATION "changemanagement.hypershift.openshift.io/reason"
/* The last override: who, when (RFC 3339 UTC), the reason given with it. */
#define DECIDE_OVERRIDE_BY_ANNOTATION "changemanagement.hypershift.openshift.io/override-by"
#define DECIDE_OVERRIDE_AT_ANNOTATION "changemanagement.hypershift.openshift.io/override-at"
#define DECIDE_OVERRIDE_REASON_ANNOTATION \
    "changemanagement.hypershift.openshift.io/override-reason"
/* The last request held at admission: who, when, the reason given with it. */
#define DECIDE_REQUESTED_BY_ANNOTATION "changemanagement.hypershift.openshift.io/requested-by"
#define DECIDE_REQUESTED_AT_ANNOTATION "changemanagement.hypershift.openshift.io/requested-at"
#define DECIDE_REQUESTED_REASON_ANNOTATION \
    "changemanagement.hypershift.openshift.io/requested-reason"

/* The last withdrawal of a held request: who, when, what ("release 4.17.1,
 * spec.config"). */
#define DECIDE_WITHDRAWN_BY_ANNOTATION "changemanagement.hypershift.openshift.io/withdrawn-by"
#define DECIDE_WITHDRAWN_AT_ANNOTATION "changemanagement.hypershift.openshift.io/withdrawn-at"
#define DECIDE_WITHDRAWN_ANNOTATION "changemanagement.hypershift.openshift.io/withdrawn"

/* What the override in force let a held change past (DESIGN.md 3.14: the
 * release waves and their soak), written by the controller in the very
 * write that lets the change through: "<override-at> <what it skipped>",
 * so that it is read as the record of that override only. */
#define DECIDE_OVERRIDE_SKIPPED_ANNOTATION \
    "changemanagement.hypershift.openshift.io/override-skipped"

#define DECIDE_AUDIT_MAX 9      /* marks one write can get */
#define DECIDE_AUDIT_VALLEN 256 /* a mark's value, at most (longer reasons are cut) */

/* One annotation the webhook sets (value) or removes (remove). */
typedef struct decide_audit_mark {
    const char *key;               /* one of the *_ANNOTATION above (static) */
    bool remove;                   /* remove it (it is in the object written) */
    char value[DECIDE_AUDIT_VALLEN];
} decide_audit_mark_t;

/* What one write does to the held requests, as the webhook decided it. */
typedef struct decide_audit_write {
    bool held;             /* the webhook holds a requested change of this write */
    const char *withdrawn; /* what the write withdraws, in words; NULL: nothing */
    bool left;             /* a request is held on the object after the write */
} decide_audit_write_t;

/* The audit annotations for a write w of old_obj into new_obj (HostedCluster
 * or NodePool, as the AdmissionReview carries them) by user at now. An
 * override is a stanza whose strategy, permissiveUntil or restrictiveUntil
 * differ from the old object's. The reason recorded is the reason
 * annotation when this write sets or changes it, else none (a reason left
 * from an earlier write is not this one's). A withdrawal records who, when
 * and what; when it leaves no request on the object, the record of who
 * asked goes with it. Record annotations the write changes without making
 * the change they record are put back as they were. Fills out (at most
 * DECIDE_AUDIT_MAX) and returns how many. user "" reads "unknown". */
size_t decide_audit_marks(const json_t *old_obj, const json_t *new_obj, const char *user,
                          const decide_audit_write_t *w, sched_time_t now,
                          decide_audit_mark_t *out);

/* The records as an object carries them; every member owned, NULL when
 * absent. */
typedef struct decide_audit {
    char *override_by, *override_at, *override_reason;
    char *override_skipped; /* DECIDE_OVERRIDE_SKIPPED_ANNOTATION as written */
    char *requested_by, *requested_at, *requested_reason;
    char *withdrawn_by, *withdrawn_at, *withdrawn; /* the last withdrawal */
} decide_audit_t;

/* Reads the records of obj into *out (zeroed first). Returns 0 or
 * HCP_ENOMEM (*out then holds nothing). */
int decide_audit_extract(const json_t *obj, decide_audit_t *out);
void decide_audit_free(decide_audit_t *a);

/* Whether a record (who and when: hash, made at the RFC 3339 instant at)
 * is told as new by a process that last saw was (0: nothing yet) and
 * started at started: a hash of 0 or the one already seen never is; the
 * first one a process sees is when made since it started or within the
 * last 10 minutes (a restart does not tell old records again, a reconcile
 * that comes late still tells a new one); any later change is. */
bool decide_audit_fresh(uint64_t was, uint64_t hash, const char *at, sched_time_t now,
                        sched_time_t started);

/* How long the last withdrawal (a's) is news, told in ChangesPending and
 * so in the hosted ClusterVersion: from when it was made until the end of
 * the window the request waited for (the first of timeline's windows
 * that ends after it: the one it was withdrawn in, else the next), at most
 * DECIDE_WITHDRAWN_NEWS seconds, and only while no request recorded later
 * replaced it. True with *until when it is news at now; false when there
 * is none, it is not news, or its time does not parse. */
#define DECIDE_WITHDRAWN_NEWS (7 * 86400)
bool decide_withdrawn_news(const decide_audit_t *a, sched_t *timeline, sched_time_t now,
                           sched_time_t *until);

/* The override-skipped annotation's value for an override made at at
 * (NULL: not known) that let a change past `what`, into buf. */
void decide_audit_skipped(const char *at, const char *what, char *buf, size_t len);

/* The companion's `audit` member: {override: {by, at, reason?, skipped?}?,
 * heldRequest: {by, at, reason?}?, withdrawn: {by, at, what}?} with
 * heldRequest only while held, and override.skipped (what the override let
 * a change past) when the override-skipped record names this override;
 * NULL when there is nothing to say. New reference. */
json_t *decide_audit_doc(const decide_audit_t *a, bool held);

#endif
