/*
 * base/json.h - reading and comparing jansson documents.
 *
 * Every layer reads Kubernetes objects by a dotted path of member names
 * ("spec.release.image"): the slim views of the decision core, the
 * admission holds, the controller's handlers and the CLI's preview. The
 * readers here never allocate and never fail loudly: a missing step, or
 * one of the wrong type, reads as NULL, which each caller turns into its
 * own default or error.
 */
#ifndef HCP_BASE_JSON_H
#define HCP_BASE_JSON_H

#include <stdbool.h>

#include <jansson.h>

/* Reads a member by path ("metadata.annotations"), any type: a borrowed
 * pointer into obj, or NULL when obj is NULL, a step is missing or a step
 * before the last is not an object. Names cannot contain a dot. */
json_t *hcp_json_path(const json_t *obj, const char *path);

/* Reads a string member by path ("spec.release.image"): borrowed pointer into
 * the document, or NULL when a step is missing or not of the right type. */
const char *hcp_json_str(const json_t *obj, const char *path);

/* Equality of two JSON values where an object member whose value is null
 * counts as absent. A merge patch deletes the members it sets to null, and
 * the API server drops null fields of custom resources, so this is how a
 * desired document compares with the object as stored. NULL equals NULL and
 * an empty object. */
bool hcp_json_equal_stored(const json_t *a, const json_t *b);

#endif
