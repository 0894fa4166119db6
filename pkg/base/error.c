/* base/error.c - the shared error formatter (see error.h). */
#include "base/error.h"

#include <stdio.h>

int hcp_verrf(char *err, size_t errlen, int code, const char *fmt, va_list ap)
{
    if (err != NULL && errlen > 0)
        vsnprintf(err, errlen, fmt, ap);
    return code;
}

int hcp_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    hcp_verrf(err, errlen, code, fmt, ap);
    va_end(ap);
    return code;
}

const char *hcp_strerror(int code)
{
    switch (code) {
    case HCP_OK: return "success";
    case HCP_EINVAL: return "invalid input";
    case HCP_ENOMEM: return "out of memory";
    case HCP_EIO: return "I/O error";
    case HCP_EEXIST: return "already exists";
    case HCP_ERANGE: return "out of range";
    case HCP_ECANCELED: return "cancelled";
    case HCP_ECONFIG: return "configuration error";
    case HCP_ETRANSPORT: return "transport error";
    case HCP_ETLS: return "TLS error";
    case HCP_EHTTP: return "HTTP error";
    case HCP_EPARSE: return "invalid response";
    case HCP_ELISTEN: return "cannot listen";
    case HCP_EFULL: return "table full";
    case HCP_ESTATE: return "wrong state";
    case HCP_ECALLBACK: return "callback failed";
    }
    return "unknown error";
}
