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
#include <stdint.h>

#include <jansson.h>

/* What the hold does to one write. */
typedef struct decide_np_hold {
    json_t *ops;       /* new JSON array of RFC 6902 operations ({op, path,
                          value}) to apply to the write, possibly empty */
    char held[256];    /* the fields held, "spec.release, spec.config", "" when none */
    uint64_t withdrawn; /* the fields whose recorded requests the write
                           withdraws (bit i: fields[i]), by intent or by
                           dropping them from the record */
    uint64_t dropped;  /* of those, the ones the write dropped from the record */
    char withdrawn_words[256]; /* those requests in words, "release 4.17.1,
                                  spec.config" (decide_request_words()), ""
                                  when none */
    bool left;         /* a request is recorded after the write */
    bool asked;        /* the write asks for something not recorded before it
                          (a held field set to another value than the record
                          held): a new request, whose who and when the audit
                          records; a GitOps tool's re-apply of what is
                          recorded asks for nothing new */
    char kept_words[256]; /* the requests recorded before the write and after
                             it unchanged (neither withdrawn nor asked for
                             again), in words; "" when none */
} decide_np_hold_t;

/* What decides a write's hold beside its two objects. */
typedef struct decide_hold_in {
    bool restricted;   /* the plan restricts changes now (else permitted) */
    uint64_t withdraw; /* the fields the write sets to their running values
                          by intent (withdraw.h: bit i for fields[i]) */
    bool exempt;       /* the writer is one of HyperShift's users: it
                          withdraws nothing, and a record it drops is kept */
} decide_hold_in_t;

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
 * NULL-terminated, at most 64) kept at their running values while
 * restricted, the request recorded in annotation key. decide_np_hold() is
 * this with decide_np_held_fields and DECIDE_REQUESTED_NODEPOOL_ANNOTATION;
 * the HostedCluster's fields that roll every NodePool use it too
 * (hcfields.h). Beside holding, restricted or not (DESIGN.md 3.13): a
 * recorded field the write sets to its running value by intent
 * (in->withdraw) leaves the record, and so does one the write dropped from
 * the record itself while leaving the field as it runs (a withdrawal by
 * hand); both are told in withdrawn. A write by an exempt user withdraws
 * nothing: a record it drops whole is put back as it was. One write may
 * withdraw one field and request another: the record then holds the new
 * request alone. */
int decide_spec_hold(const json_t *old_obj, const json_t *new_obj, const decide_hold_in_t *in,
                     const char *const *fields, const char *key, decide_np_hold_t *out);

#endif
