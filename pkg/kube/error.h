/*
 * kube/error.h - the error record every kube_ call fills in.
 *
 * Functions in pkg/kube return 0 on success or a negative HCP_E* code
 * (base/error.h). When they fail they also fill a caller-supplied kube_error
 * with the HTTP status (0 when no response was received), the API's Status
 * reason and Status.message, or a transport/TLS/config explanation. The
 * record is plain data: it owns no memory and may be copied freely.
 */
#ifndef KUBE_ERROR_H
#define KUBE_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "base/error.h"


typedef struct kube_error {
    int code;          /* HCP_E* (0 when no error) */
    int http_status;   /* HTTP status, 0 when no response was received */
    char reason[64];   /* Status.reason ("NotFound", "Forbidden", ...) or "" */
    char message[512]; /* Status.message or a human explanation */
} kube_error;

/* Resets err to "no error". err may be NULL. */
void kube_error_clear(kube_error *err);

/*
 * Fills err (when not NULL) with code, http_status, reason and a printf-style
 * message (formatted by hcp_verrf()), truncating to the record's buffers.
 * Returns code, so callers can
 * write `return kube_error_set(err, HCP_EINVAL, 0, NULL, "...")`.
 */
int kube_error_set(kube_error *err, int code, int http_status, const char *reason,
                   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Fills err from a non-2xx API response: http_status plus the reason and
 * message of the metav1.Status document in body (len bytes, untrusted, need
 * not be NUL-terminated). When the body is not a Status, the message says so
 * and quotes the start of the body. Returns HCP_EHTTP.
 */
int kube_error_from_response(kube_error *err, int http_status, const char *body, size_t len);

#endif
