/* base/buf.c - appending to a growing byte string (see buf.h). */
#include "base/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int hcp_buf_reserve(char **buf, size_t *len, size_t *cap, size_t first, size_t n)
{
    size_t want, ncap;
    char *p;

    if (n >= SIZE_MAX - *len)
        return HCP_ENOMEM;
    want = *len + n + 1;
    if (want > *cap) {
        ncap = *cap ? *cap : (first ? first : 64);
        while (ncap < want) {
            if (ncap > SIZE_MAX / 2)
                return HCP_ENOMEM;
            ncap *= 2;
        }
        if ((p = realloc(*buf, ncap)) == NULL)
            return HCP_ENOMEM;
        *buf = p;
        *cap = ncap;
    }
    return 0;
}

int hcp_buf_append(char **buf, size_t *len, size_t *cap, size_t first, const void *data,
                   size_t n)
{
    if (hcp_buf_reserve(buf, len, cap, first, n))
        return HCP_ENOMEM;
    if (n > 0)
        memcpy(*buf + *len, data, n);
    *len += n;
    (*buf)[*len] = '\0';
    return 0;
}
