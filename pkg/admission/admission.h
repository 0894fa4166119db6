/*
 * admission/admission.h - Kubernetes admission reviews (admission.k8s.io/v1),
 * pure: the request parser and the response builder (JSON Patch, base64).
 *
 * The API server POSTs an AdmissionReview whose `request` names the object's
 * resource, operation, the object as it would be stored and, for an update,
 * the object as it is. A webhook answers with an AdmissionReview whose
 * `response` carries the request's uid, allowed or not with a status, and
 * for a mutating webhook an RFC 6902 patch (base64 of the JSON array).
 * Every byte of the request is untrusted: the parser checks each field it
 * reads and names the one that is wrong.
 */
#ifndef ADMISSION_ADMISSION_H
#define ADMISSION_ADMISSION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define ADM_API_VERSION "admission.k8s.io/v1"
#define ADM_MAX_WARNINGS 4 /* warnings per response */
/* Bytes of one warning: "individual warning messages over 256 characters
 * may be truncated by the API server" (the AdmissionReview response of
 * admissionregistration v1), so a warning is written to fit. */
#define ADM_WARNING_MAX 255
#define ADM_MAX_GROUPS 32  /* request.userInfo.groups kept; the rest are dropped */

/* request.operation */
typedef enum adm_op { ADM_CREATE, ADM_UPDATE, ADM_DELETE, ADM_CONNECT } adm_op_t;

/* One parsed request. The strings are copies; the objects belong to it. */
typedef struct adm_request {
    char uid[128];          /* request.uid; kept even when a later field is wrong */
    char group[128];        /* request.resource.group ("" for the core group) */
    char version[64];       /* request.resource.version */
    char resource[128];     /* request.resource.resource, plural ("hostedclusters") */
    char subresource[64];   /* request.subResource, "" for the object itself */
    char kind[128];         /* request.kind.kind */
    char ns[254];           /* request.namespace, "" when cluster-scoped */
    char name[254];         /* request.name, "" for a create with generateName */
    char user[254];         /* request.userInfo.username, "" when absent */
    char groups[ADM_MAX_GROUPS][254]; /* request.userInfo.groups, the first
                                         ADM_MAX_GROUPS (a user with more
                                         loses exemptions, never gains) */
    size_t ngroups;         /* groups in use */
    adm_op_t op;            /* request.operation */
    bool dry_run;           /* request.dryRun */
    json_t *object;         /* owned: request.object, NULL for DELETE */
    json_t *old_object;     /* owned: request.oldObject, NULL for CREATE */
    json_t *options;        /* owned: request.options, NULL when absent. For an
                               update or a patch (a server-side apply included:
                               the API server converts its PatchOptions) the
                               UpdateOptions, whose fieldManager names the
                               writer's entry of metadata.managedFields */
} adm_request_t;

/*
 * Parses an AdmissionReview v1 request body of len bytes (need not be
 * NUL-terminated). Returns 0 with *req filled (free with
 * adm_request_free()), or HCP_EPARSE when the bytes are not the JSON of an
 * AdmissionReview (a field missing or of the wrong type, named in err),
 * HCP_EINVAL when apiVersion or kind is another (err names it), HCP_ENOMEM.
 * On failure req->uid holds the uid when it could be read ("" otherwise)
 * and nothing else needs freeing.
 */
int adm_request_parse(const char *body, size_t len, adm_request_t *req, char *err,
                      size_t errlen);

/* Frees what adm_request_parse() stored in req. Safe to call twice. */
void adm_request_free(adm_request_t *req);

/* "CREATE", "UPDATE", "DELETE" or "CONNECT". */
const char *adm_op_name(adm_op_t op);

/* A webhook's answer, built by a handler. */
typedef struct adm_response {
    bool allowed;                              /* admit the request (default true) */
    int code;                                  /* status.code when refused (403, 503...) */
    char message[1536];                        /* status.message when refused */
    json_t *patch;                             /* owned JSON array of patch operations, or NULL */
    char warnings[ADM_MAX_WARNINGS][ADM_WARNING_MAX + 1];      /* shown to the client (kubectl prints them) */
    size_t nwarnings;                          /* warnings in use */
} adm_response_t;

/* An allowing response with no patch. */
void adm_response_init(adm_response_t *r);

/* Frees the patch. The response may be initialised again. */
void adm_response_free(adm_response_t *r);

/* Refuses the request with an HTTP-like code and a printf message;
 * drops any patch. */
void adm_response_deny(adm_response_t *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Adds a warning for the client (at most ADM_MAX_WARNINGS, the rest are
 * dropped; a warning is cut at ADM_WARNING_MAX bytes, on a UTF-8
 * character boundary). */
void adm_response_warn(adm_response_t *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Appends one RFC 6902 operation ("add", "replace", "remove", "test") at
 * path (a JSON Pointer, see adm_pointer()). value is stolen (NULL for
 * "remove"). Returns 0, HCP_EINVAL (unknown op, a path not starting with
 * '/', a value missing or given for remove) or HCP_ENOMEM.
 */
int adm_patch_op(adm_response_t *r, const char *op, const char *path, json_t *value);

/*
 * Writes a JSON Pointer (RFC 6901) of the NULL-terminated segments into
 * out: "/" before each, "~" written "~0" and "/" written "~1", so that an
 * annotation key such as "cluster.x-k8s.io/paused" is one segment. Returns
 * 0 or HCP_ERANGE when out is too small (out then holds "").
 */
int adm_pointer(char *out, size_t cap, const char *const *segments);

/*
 * Renders the AdmissionReview answer for the request uid: allowed, status
 * when refused, patchType JSONPatch and the base64 patch when there is one,
 * warnings. Returns 0 with *out (malloc'd, NUL-terminated, caller frees) and
 * *len, or HCP_ENOMEM.
 */
int adm_review_render(const char *uid, const adm_response_t *r, char **out, size_t *len);

/* Standard base64 (RFC 4648, padded) of len bytes into a malloc'd string;
 * NULL when out of memory. */
char *adm_base64(const void *data, size_t len);

#endif
