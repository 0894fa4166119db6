/*
 * policy/field.h - typed access to the fields of a JSON document.
 *
 * The policy parser reads untrusted documents field by field; every helper
 * here checks one thing and, when it fails, writes a message that starts
 * with the field's path ("spec.maintenanceSchedule.permit.duration: ...")
 * into err through hcp_errf() and returns HCP_EINVAL. Pointers returned in
 * *out are borrowed from the document.
 */
#ifndef HCP_POLICY_FIELD_H
#define HCP_POLICY_FIELD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

#define POLICY_PATHLEN 256 /* room for any field path the parser writes */

/* The path of a field or an element below parent; a path cut off at len
 * still names the place well enough. */
void policy_field_join(char *buf, size_t len, const char *parent, const char *key);

/* parent[i], for an element of an array. */
void policy_field_index(char *buf, size_t len, const char *parent, size_t i);

/* Rejects any key of obj that is not in the NULL-terminated allowed list:
 * a misspelt field must never be ignored silently. */
int policy_field_check_fields(const json_t *obj, const char *path, const char *const *allowed,
                              char *err, size_t errlen);

/* Looks up key in obj. Returns 1 with *out set when present and not null, 0
 * when absent or null, or HCP_EINVAL when it has a type other than want
 * (JSON_INTEGER also rejects reals). */
int policy_field_get(const json_t *obj, const char *key, json_type want, const char *path,
                     json_t **out, char *err, size_t errlen);

/* policy_field_get() for a field that must be present: absent or null is
 * HCP_EINVAL ("required field is missing"). Returns 1 or HCP_EINVAL. */
int policy_field_required(const json_t *obj, const char *key, json_type want, const char *path,
                          json_t **out, char *err, size_t errlen);

/* Strings given to the engine are C strings: an embedded NUL would make the
 * engine see something other than what was validated. */
int policy_field_check_string(const json_t *v, const char *path, size_t max, char *err,
                              size_t errlen);

/* An RFC 1123 subdomain of at most 253 bytes, as Kubernetes requires of
 * object names (a stanza's byPolicy.name, an exclusion calendar's
 * ConfigMap). */
bool policy_field_is_name(const char *s);

/* Index of s in names[0..n), or -1. */
int policy_field_lookup(const char *s, const char *const *names, int n);

/* An integer field with an inclusive range and a default. */
int policy_field_get_int(const json_t *obj, const char *key, const char *path, long lo, long hi,
                         long dflt, long *out, char *err, size_t errlen);

/* A required string field whose value must be one of names; *idx gets its
 * index. `what` completes "is not ..." in the message. */
int policy_field_get_enum(const json_t *obj, const char *key, const char *path,
                          const char *const *names, int n, const char *what, int *idx, char *err,
                          size_t errlen);

#endif
