/*
 * kube/error.c - filling kube_error records.
 */
#include "kube/error.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void kube_error_clear(kube_error *err)
{
    if (err == NULL)
        return;
    err->code = 0;
    err->http_status = 0;
    err->reason[0] = '\0';
    err->message[0] = '\0';
}

int kube_error_set(kube_error *err, int code, int http_status, const char *reason,
                   const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    err->http_status = http_status;
    snprintf(err->reason, sizeof(err->reason), "%s", reason ? reason : "");
    va_start(ap, fmt);
    hcp_verrf(err->message, sizeof(err->message), code, fmt, ap);
    va_end(ap);
    return code;
}

/* Copies at most n bytes of untrusted text, replacing control bytes. */
static void quote_prefix(char *out, size_t outlen, const char *s, size_t n)
{
    size_t i, j = 0;

    for (i = 0; i < n && j + 1 < outlen; i++) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = (c < 0x20 || c == 0x7f) ? ' ' : (char)c;
    }
    out[j] = '\0';
}

int kube_error_from_response(kube_error *err, int http_status, const char *body, size_t len)
{
    json_t *doc = NULL;
    const char *reason = "", *message = NULL;
    char snippet[128];

    if (body != NULL && len > 0)
        doc = json_loadb(body, len, 0, NULL);
    if (json_is_object(doc)) {
        json_t *r = json_object_get(doc, "reason");
        json_t *m = json_object_get(doc, "message");
        if (json_is_string(r))
            reason = json_string_value(r);
        if (json_is_string(m))
            message = json_string_value(m);
    }
    if (message != NULL) {
        kube_error_set(err, HCP_EHTTP, http_status, reason, "%s", message);
    } else {
        quote_prefix(snippet, sizeof(snippet), body ? body : "", body ? len : 0);
        kube_error_set(err, HCP_EHTTP, http_status, reason,
                       "HTTP %d without a Status message%s%s", http_status,
                       snippet[0] ? ": " : "", snippet);
    }
    json_decref(doc);
    return HCP_EHTTP;
}
