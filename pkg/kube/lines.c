/*
 * kube/lines.c - newline splitter for watch streams.
 */
#include "kube/lines.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "kube/error.h"

void kube_lines_init(kube_lines *l, size_t max_line)
{
    memset(l, 0, sizeof(*l));
    l->max = max_line ? max_line : (64u << 20);
}

int kube_lines_feed(kube_lines *l, const char *data, size_t len)
{
    if (len == 0)
        return 0;
    /* Compact first so the buffer holds only the unconsumed tail. */
    if (l->start > 0) {
        memmove(l->buf, l->buf + l->start, l->len - l->start);
        l->len -= l->start;
        l->start = 0;
    }
    if (hcp_buf_append(&l->buf, &l->len, &l->cap, 4096, data, len) != 0)
        return HCP_ENOMEM;
    if (memchr(l->buf, '\n', l->len) == NULL && l->len > l->max)
        return HCP_EPARSE;
    return 0;
}

int kube_lines_next(kube_lines *l, const char **line, size_t *len)
{
    for (;;) {
        char *s = l->buf + l->start, *nl;
        size_t avail = l->len - l->start;

        if (avail == 0)
            return 0;
        nl = memchr(s, '\n', avail);
        if (nl == NULL)
            return 0;
        l->start += (size_t)(nl - s) + 1;
        if (nl > s && nl[-1] == '\r')
            nl--;
        if (nl == s)
            continue;
        *line = s;
        *len = (size_t)(nl - s);
        return 1;
    }
}

size_t kube_lines_pending(const kube_lines *l)
{
    return l->len - l->start;
}

void kube_lines_reset(kube_lines *l)
{
    l->len = 0;
    l->start = 0;
}

void kube_lines_free(kube_lines *l)
{
    free(l->buf);
    l->buf = NULL;
    l->len = l->cap = l->start = 0;
}
