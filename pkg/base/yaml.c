/* base/yaml.c - scalar text without libfyaml's text cache (see yaml.h). */
#include "base/yaml.h"

#include "base/buf.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A growing output string. */
typedef struct text {
    char *s;    /* owned, NUL-terminated while ok */
    size_t len; /* bytes used, without the NUL */
    size_t cap; /* bytes allocated */
} text;

static int text_put(text *t, const char *s, size_t n)
{
    return hcp_buf_append(&t->s, &t->len, &t->cap, 64, s, n) == 0 ? 0 : -1;
}

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Length of the line break at s (LF or CR LF), 0 when there is none. */
static size_t line_break(const char *s, const char *end)
{
    if (s < end && *s == '\n')
        return 1;
    if (s + 1 < end && s[0] == '\r' && s[1] == '\n')
        return 2;
    if (s < end && *s == '\r')
        return 1;
    return 0;
}

/*
 * Decodes the inside of a single-quoted scalar (YAML 1.2, 7.3.2): '' is one
 * quote; a line break and the blanks around it fold into one space, or into
 * k newlines when k empty lines follow.
 */
static int single_quoted(text *t, const char *s, const char *end)
{
    size_t nl;

    while (s < end) {
        if (s + 1 < end && s[0] == '\'' && s[1] == '\'') {
            if (text_put(t, "'", 1) < 0)
                return -1;
            s += 2;
        } else if ((nl = line_break(s, end)) > 0) {
            size_t empty = 0;
            while (t->len > 0 && is_blank(t->s[t->len - 1]))
                t->s[--t->len] = '\0';
            for (s += nl;;) {
                while (s < end && is_blank(*s))
                    s++;
                if ((nl = line_break(s, end)) == 0)
                    break;
                s += nl;
                empty++;
            }
            if (empty == 0 && text_put(t, " ", 1) < 0)
                return -1;
            for (; empty > 0; empty--)
                if (text_put(t, "\n", 1) < 0)
                    return -1;
        } else {
            if (text_put(t, s, 1) < 0)
                return -1;
            s++;
        }
    }
    return 0;
}

/* Everything but single-quoted scalars: libfyaml's token iterator. */
static int iterate(text *t, struct fy_token *tok)
{
    struct fy_token_iter *it = fy_token_iter_create(tok);
    const struct fy_iter_chunk *ic = NULL;
    int err = 0, rc = 0;

    if (it == NULL)
        return -1;
    while (rc == 0 && (ic = fy_token_iter_chunk_next(it, ic, &err)) != NULL)
        rc = text_put(t, ic->str, ic->len);
    fy_token_iter_destroy(it);
    return rc == 0 && err == 0 ? 0 : -1;
}

char *hcp_yaml_scalar(struct fy_node *n, const char *input, size_t inputlen, size_t *lenp)
{
    struct fy_token *tok;
    const struct fy_mark *start, *end;
    text t = {NULL, 0, 0};

    if (lenp != NULL)
        *lenp = 0;
    if (n == NULL || !fy_node_is_scalar(n))
        return NULL;
    if (text_put(&t, "", 0) < 0)
        return NULL;
    if ((tok = fy_node_get_scalar_token(n)) == NULL)
        goto done; /* an empty scalar (`key:`) has no token */
    start = fy_token_start_mark(tok);
    end = fy_token_end_mark(tok);
    if (fy_node_get_style(n) == FYNS_SINGLE_QUOTED && input != NULL && start != NULL &&
        end != NULL && start->input_pos <= end->input_pos && end->input_pos <= inputlen) {
        if (single_quoted(&t, input + start->input_pos, input + end->input_pos) < 0)
            goto fail;
    } else if (iterate(&t, tok) < 0) {
        goto fail;
    }
done:
    if (lenp != NULL)
        *lenp = t.len;
    return t.s;
fail:
    free(t.s);
    return NULL;
}

size_t hcp_yaml_bad_utf8(const char *bytes, size_t len)
{
    const unsigned char *s = (const unsigned char *)bytes;
    size_t i = 0;

    while (i < len) {
        unsigned char c = s[i];
        size_t n, k;
        uint32_t cp;

        if (c == 0)
            return i;
        if (c < 0x80) {
            i++;
            continue;
        }
        if (c >= 0xc2 && c <= 0xdf) {
            n = 1;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            cp = c & 0x07;
        } else {
            return i;
        }
        if (len - i <= n)
            return i;
        for (k = 1; k <= n; k++) {
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
            cp = (cp << 6) | (s[i + k] & 0x3f);
        }
        if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
            (cp >= 0xd800 && cp <= 0xdfff))
            return i;
        i += n + 1;
    }
    return len;
}
