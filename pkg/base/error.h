/*
 * base/error.h - the one error convention of the whole tree.
 *
 * Codes. A function that can fail returns 0 on success or a negative HCP_E*
 * code from the single space below (libuv's model: the common cases are
 * negative errno values, so strerror(-code) also reads for them; the cases
 * errno has no word for are numbered from -4000 down). Module headers do not
 * define codes of their own; they say which HCP_E* codes a function returns.
 *
 * Messages. Detail for a person goes into a caller-supplied buffer, passed as
 * `char *err, size_t errlen` (err may be NULL or errlen 0: nothing is
 * written). It is written only through hcp_errf(), which returns the code so
 * that a failure reads as one line:
 *
 *     return hcp_errf(err, errlen, HCP_EINVAL, "spec.duration: %s", why);
 *
 * A message names what is wrong first (the field path, the object, the
 * address), then why, in lower case without a final period, so that callers
 * can prefix context ("policy clusters/weekend: spec.duration: ..."). A
 * function that succeeds leaves the buffer untouched.
 */
#ifndef HCP_BASE_ERROR_H
#define HCP_BASE_ERROR_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

enum {
    HCP_OK = 0,
    HCP_EINVAL = -EINVAL,       /* invalid input or argument; detail in err */
    HCP_ENOMEM = -ENOMEM,       /* allocation failed */
    HCP_EIO = -EIO,             /* local I/O (reading a file) failed */
    HCP_EEXIST = -EEXIST,       /* already present (a name registered twice) */
    HCP_ERANGE = -ERANGE,       /* a value outside the supported range */
    HCP_ECANCELED = -ECANCELED, /* cancelled before it finished */
    HCP_ECONFIG = -4001,        /* configuration unusable (kubeconfig, flags) */
    HCP_ETRANSPORT = -4002,     /* connection refused, reset, DNS, timeout */
    HCP_ETLS = -4003,           /* certificate verification or handshake failed */
    HCP_EHTTP = -4004,          /* a server answered with a non-2xx status */
    HCP_EPARSE = -4005,         /* a peer sent bytes that are not valid */
    HCP_ELISTEN = -4006,        /* a server could not start listening */
    HCP_EFULL = -4007,          /* a fixed-size table has no room left */
    HCP_ESTATE = -4008,         /* called in the wrong state */
    HCP_ECALLBACK = -4009       /* a caller-supplied callback reported failure */
};

/*
 * Writes the printf-style message into err (when err is not NULL and errlen
 * is not 0), truncating to errlen - 1 bytes plus the NUL, and returns code.
 */
int hcp_errf(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* hcp_errf with a va_list. */
int hcp_verrf(char *err, size_t errlen, int code, const char *fmt, va_list ap)
    __attribute__((format(printf, 4, 0)));

/* A static English name for an HCP_E* code ("invalid input", ...); never NULL. */
const char *hcp_strerror(int code);

#endif
