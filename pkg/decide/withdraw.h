/* withdraw: a write that shows its author meant the running value of a held
 * field withdraws that field's request (DESIGN.md 3.13), pure.
 *
 * A request held at admission keeps the field at the value that runs, so a
 * revert (a Git revert applied again, an OCM cancellation, `kubectl apply`
 * of the old manifest) writes a value the API server already stores: the
 * field does not change, and the write alone cannot say whether its author
 * meant that value or merely carried the field along. What the write carries
 * beside the field can:
 *
 * - Server-side apply. The API server hands every update and patch to
 *   admission with UpdateOptions (it converts an apply's PatchOptions, so
 *   `force` never reaches a webhook; kube-apiserver v1.33, checked against
 *   kubectl apply --server-side with and without --force-conflicts), whose
 *   fieldManager names the writer, and the new object's managedFields as
 *   the apply left them. When that manager has an `Apply` entry whose
 *   fieldsV1 holds the field, its applied configuration holds the field,
 *   and the result is the running value: it applied the running value.
 *   Unheld, that apply would have overwritten the requested value too. The
 *   entry's time is no help: the API server puts back a timestamp an apply
 *   changed when nothing else changed, which a revert of a held field is.
 *   A manager that also updates under the same name (a merge patch, a full
 *   update) shows an `Update` entry this write added or changed: that write
 *   is no apply and tells nothing.
 * - Client-side apply (kubectl apply, Argo CD's default, Hive). The
 *   annotation kubectl.kubernetes.io/last-applied-configuration changes in
 *   this write, the new one holds the field at the running value and the
 *   old one lacked it or held another value: kubectl's three-way merge sends
 *   a field exactly then; a field unchanged in last-applied would not touch
 *   the live value, so it withdraws nothing.
 * - Never: a writer listed as one of HyperShift's own (its full-object
 *   updates carry every field along), a merge or JSON patch, a full update
 *   (kubectl edit, replace, a controller's Update), an apply whose
 *   configuration does not hold the field.
 *
 * Both objects and the options are untrusted bytes (a managedFields entry or
 * a last-applied text of the wrong shape reads as no signal), and so is the
 * annotation's text, parsed as JSON here.
 */
#ifndef HCP_DECIDE_WITHDRAW_H
#define HCP_DECIDE_WITHDRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#define DECIDE_LAST_APPLIED_ANNOTATION "kubectl.kubernetes.io/last-applied-configuration"
#define DECIDE_WITHDRAW_FIELDS 64 /* fields one mask covers */

/* How a write shows its author's intent. */
typedef enum decide_signal {
    DECIDE_SIGNAL_NONE = 0,
    DECIDE_SIGNAL_SSA,  /* server-side apply of a configuration holding the field */
    DECIDE_SIGNAL_CSA,  /* client-side apply: last-applied now holds the field */
} decide_signal_t;

/* What one write carries about its author's intent, read once per request. */
typedef struct decide_intent {
    bool exempt;            /* the writer is one of the exempt users: it
                               withdraws nothing */
    const json_t *applied;  /* the fieldsV1 of the writer's Apply entry of the
                               new object's managedFields (borrowed from the
                               new object), NULL when the write is no apply */
    json_t *last_applied;   /* the new last-applied-configuration, parsed, when
                               this write changes it (owned); NULL otherwise */
    json_t *was_applied;    /* the old one, parsed (owned); NULL when absent or
                               unreadable, or when the write does not change it */
    char manager[128];      /* the writer's field manager, "" when none */
} decide_intent_t;

/*
 * Reads the intent of a write of old_obj into new_obj by user, whose
 * admission request carried options (request.options, NULL when none);
 * exempt: the users that never withdraw (NULL-terminated, or NULL). Never
 * fails: what cannot be read (out of memory included) is no signal. Release
 * with decide_intent_free().
 */
void decide_intent_read(const json_t *old_obj, const json_t *new_obj, const json_t *options,
                        const char *user, const char *const *exempt, decide_intent_t *out);
void decide_intent_free(decide_intent_t *in);

/* How the write shows that its author meant field (dotted, under spec:
 * "release.image", "config") at the value it writes, when that value is
 * the running one (new_obj's equals old_obj's as the API server stores it);
 * DECIDE_SIGNAL_NONE when it does not, or the writer is exempt. */
decide_signal_t decide_intent_field(const decide_intent_t *in, const json_t *old_obj,
                                    const json_t *new_obj, const char *field);

/* The fields of fields (NULL-terminated, the first DECIDE_WITHDRAW_FIELDS)
 * the write sets to their running values by intent (decide_intent_field()),
 * as a mask: bit i for fields[i]. */
uint64_t decide_intent_mask(const decide_intent_t *in, const json_t *old_obj,
                            const json_t *new_obj, const char *const *fields);

/* decide_intent_read(), decide_intent_mask() and decide_intent_free() in
 * one: the held fields of fields whose requests a write withdraws, were
 * they recorded. */
uint64_t decide_withdrawn(const json_t *old_obj, const json_t *new_obj, const json_t *options,
                          const char *user, const char *const *exempt,
                          const char *const *fields);

/* True when user is one of exempt (NULL-terminated, or NULL). */
bool decide_user_exempt(const char *user, const char *const *exempt);

/* A held request of field (dotted, under spec) with the recorded value in
 * words, as the warning, the audit record and the notification say it:
 * "release 4.17.1" (a release field by its version, else its image),
 * "control-plane release 4.17.1", else "spec.<field>". */
void decide_request_words(const char *field, const json_t *value, char *buf, size_t len);

/* The running value of field in words for "the write sets the running
 * ...": a release's version (else its image, "(none)" when none runs),
 * else "value". */
void decide_running_words(const char *field, const json_t *value, char *buf, size_t len);

#endif
