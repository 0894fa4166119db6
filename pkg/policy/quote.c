#include "policy/quote.h"

#include <stdio.h>
#include <string.h>

/* Appends the escaped form of s (at most QUOTE_MAX_INPUT input bytes) to buf,
 * optionally between double quotes. */
static void render(const char *s, int quoted, char *buf, size_t buflen)
{
    size_t o = 0, i;

    if (buflen == 0)
        return;
    buf[0] = '\0';
    if (s == NULL)
        s = "";
#define PUT(c)                          \
    do {                                \
        if (o + 1 >= buflen)            \
            goto done;                  \
        buf[o++] = (char)(c);           \
    } while (0)
/* An escape sequence is written whole or not at all. */
#define ROOM(n)                         \
    do {                                \
        if (o + (n) >= buflen)          \
            goto done;                  \
    } while (0)
    if (quoted)
        PUT('"');
    for (i = 0; s[i] != '\0'; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == QUOTE_MAX_INPUT) {
            ROOM(3);
            PUT('.');
            PUT('.');
            PUT('.');
            break;
        }
        if (c == '"' || c == '\\') {
            ROOM(2);
            PUT('\\');
            PUT(c);
        } else if (c >= 0x20 && c < 0x7f) {
            PUT(c);
        } else {
            char hex[5];
            snprintf(hex, sizeof hex, "\\x%02x", c);
            ROOM(4);
            PUT(hex[0]);
            PUT(hex[1]);
            PUT(hex[2]);
            PUT(hex[3]);
        }
    }
    if (quoted)
        PUT('"');
#undef PUT
#undef ROOM
done:
    buf[o] = '\0';
}

void quote_string(const char *s, char *buf, size_t buflen)
{
    render(s, 1, buf, buflen);
}

void quote_name(const char *s, char *buf, size_t buflen)
{
    render(s, 0, buf, buflen);
}

const char *quote_json_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "unknown";
}
