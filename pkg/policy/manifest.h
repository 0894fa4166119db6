/* manifest: Kubernetes manifests (YAML or JSON bytes) as JSON documents.
 *
 * Policies written by people arrive as YAML files, possibly holding several
 * documents separated by `---`; the API server speaks JSON. This module turns
 * either into jansson values so that one validator (policy_parse()) sees
 * them all. YAML scalars are typed with the YAML 1.2 core schema (a plain
 * `2` is an integer, `"2"` and `08:00` are strings, `true`/`null` are what
 * they say). Aliases are rejected: manifests do not need them and they allow
 * exponential expansion. Pure: the caller reads the file.
 */
#ifndef HCP_POLICY_MANIFEST_H
#define HCP_POLICY_MANIFEST_H

#include <stddef.h>

#include <jansson.h>

#include "base/error.h"

/* Errors: HCP_EINVAL (base/error.h) when the bytes are not parseable
 * (detail in err), HCP_ENOMEM when allocation fails. */

/* Deepest nesting of mappings and sequences accepted. */
#define MANIFEST_MAX_DEPTH 64

/* Parses len bytes (need not be NUL-terminated) as JSON when they start with
 * '{' after optional white space, otherwise as a YAML stream. Returns 0 with
 * *docs a new JSON array (caller owns it; release with json_decref()) of the
 * non-empty documents in file order, or HCP_EINVAL with err naming the
 * line and column, or HCP_ENOMEM. *docs is NULL on failure. */
int manifest_load(const char *data, size_t len, json_t **docs, char *err, size_t errlen);

#endif
