/*
 * base/buf.h - appending to a growing byte string.
 *
 * Response bodies, watch streams, request bodies, metric expositions and
 * decoded scalars all grow a heap buffer the same way: double the capacity
 * until the new bytes and a terminating NUL fit. The buffer is the caller's
 * three fields (pointer, length, capacity), so each module keeps its own
 * struct.
 */
#ifndef HCP_BASE_BUF_H
#define HCP_BASE_BUF_H

#include <stddef.h>

/*
 * Appends n bytes of data to *buf (holding *len bytes in *cap allocated;
 * all three 0/NULL for an empty buffer) and NUL-terminates it. The first
 * allocation has at least `first` bytes; the capacity doubles from there.
 * *buf stays owned by the caller (free() it). Returns 0, or HCP_ENOMEM
 * (also when the size would overflow) with the buffer unchanged.
 */
int hcp_buf_append(char **buf, size_t *len, size_t *cap, size_t first, const void *data,
                   size_t n);

/*
 * Makes room for n more bytes and a NUL after the *len held, growing *buf
 * as hcp_buf_append() does, for a writer that fills the room itself (a
 * deflate stream). *len is unchanged. Returns 0, or HCP_ENOMEM with the
 * buffer unchanged.
 */
int hcp_buf_reserve(char **buf, size_t *len, size_t *cap, size_t first, size_t n);

#endif
