/*
 * kube/lines.h - splits a byte stream into newline-terminated lines.
 *
 * A watch response is newline-delimited JSON arriving in chunks of any size:
 * one event may span many chunks and one chunk may hold many events. The
 * splitter keeps the incomplete tail between chunks. Caller-allocated.
 */
#ifndef KUBE_LINES_H
#define KUBE_LINES_H

#include <stddef.h>

typedef struct kube_lines {
    char *buf;    /* bytes received and not yet consumed (owned) */
    size_t len;   /* bytes in buf */
    size_t cap;   /* allocated size of buf */
    size_t start; /* offset of the first unconsumed byte */
    size_t max;   /* a line longer than this is an error */
} kube_lines;

/* max_line bounds memory when the peer never sends a newline. */
void kube_lines_init(kube_lines *l, size_t max_line);

/* Appends a chunk. Returns 0, HCP_ENOMEM, or HCP_EPARSE when the pending line exceeds max. */
int kube_lines_feed(kube_lines *l, const char *data, size_t len);

/*
 * Returns the next complete line (without its '\n', not NUL-terminated,
 * borrowed until the next feed, next or reset) in *line and *len, or 0 when no
 * complete line is pending. Empty lines are skipped.
 */
int kube_lines_next(kube_lines *l, const char **line, size_t *len);

/* Bytes of an incomplete line held back. */
size_t kube_lines_pending(const kube_lines *l);

/* Drops everything buffered (a new stream starts). */
void kube_lines_reset(kube_lines *l);

/* Releases the buffer. */
void kube_lines_free(kube_lines *l);

#endif
