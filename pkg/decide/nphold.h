/* nphold: the NodePool hold of DESIGN.md 3.6 as a pure function of an
 * UPDATE's two objects.
 *
 * While a NodePool is restricted, a write that changes a field whose change
 * rolls the pool's machines (decide_np_held_fields) is admitted with that
 * field at its running value (oldObject's), and the request is recorded in
 * DECIDE_REQUESTED_NODEPOOL_ANNOTATION as a JSON merge patch of spec: the
 * record the write carries (a write that drops the annotation withdraws
 * it), with every field the write asked for set (null for a field it
 * removed). While changes are permitted, a recorded field the write sets
 * itself leaves the record (the newer request wins). Both objects are
 * untrusted bytes: anything of an unexpected type reads as absent.
 */
#ifndef HCP_DECIDE_NPHOLD_H
#define HCP_DECIDE_NPHOLD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

/* What the hold does to one write. */
typedef struct decide_np_hold {
    json_t *ops;       /* new JSON array of RFC 6902 operations ({op, path,
                          value}) to apply to the write, possibly empty */
    char held[256];    /* the fields held, "spec.release, spec.config", "" when none */
} decide_np_hold_t;

/*
 * Computes the hold of an UPDATE of a NodePool from old_obj (stored) to
 * new_obj (as written); restricted: the plan restricts changes now (else
 * they are permitted). Returns 0 with *out filled (release with
 * decide_np_hold_free()), or HCP_ENOMEM / HCP_ERANGE (a path too long).
 */
int decide_np_hold(const json_t *old_obj, const json_t *new_obj, bool restricted,
                   decide_np_hold_t *out);
void decide_np_hold_free(decide_np_hold_t *h);

/* The same hold for any object: fields (dotted paths under spec,
 * NULL-terminated) kept at their running values while restricted, the
 * request recorded in annotation key. decide_np_hold() is this with
 * decide_np_held_fields and DECIDE_REQUESTED_NODEPOOL_ANNOTATION; the
 * HostedCluster's fields that roll every NodePool use it too (hcfields.h). */
int decide_spec_hold(const json_t *old_obj, const json_t *new_obj, bool restricted,
                     const char *const *fields, const char *key, decide_np_hold_t *out);

#endif
