/* quote: safe rendering of untrusted text inside messages.
 *
 * Validation messages echo what the user wrote ("\"25:00\" is not a valid
 * HH:MM time"). Those bytes come from outside and may contain control
 * characters, invalid UTF-8 or be very long, so they are escaped and
 * truncated before they reach a log line, a status condition or a terminal.
 */
#ifndef HCP_POLICY_QUOTE_H
#define HCP_POLICY_QUOTE_H

#include <stddef.h>

#include <jansson.h>

/* Longest run of input bytes quote_string() reproduces before it truncates
 * with "...". */
#define QUOTE_MAX_INPUT 64

/* Writes s into buf as a double-quoted string: printable ASCII is copied,
 * '"' and '\\' are backslash-escaped, every other byte becomes \xNN. Input
 * longer than QUOTE_MAX_INPUT bytes is cut and marked with "...". The result
 * is always NUL-terminated when buflen > 0 (truncated to fit buflen). A
 * buffer of QUOTE_MAX_INPUT * 4 + 8 bytes never truncates. */
void quote_string(const char *s, char *buf, size_t buflen);

/* Like quote_string() without the surrounding quotes, for field names that
 * become part of a path. */
void quote_name(const char *s, char *buf, size_t buflen);

/* What kind of JSON value v is, for messages: "an object", "a string",
 * "null", ... Static storage. */
const char *quote_json_type(const json_t *v);

/* Size of a buffer that holds any quote_string() result untruncated. */
#define QUOTE_BUFLEN (QUOTE_MAX_INPUT * 4 + 8)

#endif
