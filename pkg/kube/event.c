/* kube/event.c - decoding one line of a watch stream (see event.h). */
#include "kube/event.h"

#include <stdbool.h>
#include <string.h>

int kube_watch_event_parse(const char *line, size_t len, kube_watch_event *ev, char *err,
                           size_t errlen)
{
    json_error_t jerr;
    const char *type;

    memset(ev, 0, sizeof(*ev));
    ev->doc = json_loadb(line, len, 0, &jerr);
    if (ev->doc == NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "bad event JSON: %s", jerr.text);
    type = json_string_value(json_object_get(ev->doc, "type"));
    ev->obj = json_object_get(ev->doc, "object");
    if (type == NULL || !json_is_object(ev->obj)) {
        kube_watch_event_free(ev);
        return hcp_errf(err, errlen, HCP_EINVAL, "event without type or object");
    }
    ev->rv = json_string_value(
        json_object_get(json_object_get(ev->obj, "metadata"), "resourceVersion"));
    ev->type = KUBE_WATCH_OBJECT;
    if (strcmp(type, "ADDED") == 0) {
        ev->change = KUBE_EVENT_ADDED;
    } else if (strcmp(type, "MODIFIED") == 0) {
        ev->change = KUBE_EVENT_MODIFIED;
    } else if (strcmp(type, "DELETED") == 0) {
        ev->change = KUBE_EVENT_DELETED;
    } else if (strcmp(type, "BOOKMARK") == 0) {
        ev->type = KUBE_WATCH_BOOKMARK;
    } else if (strcmp(type, "ERROR") == 0) {
        ev->type = KUBE_WATCH_ERROR;
        ev->code = (long)json_integer_value(json_object_get(ev->obj, "code"));
        ev->reason = json_string_value(json_object_get(ev->obj, "reason"));
        ev->message = json_string_value(json_object_get(ev->obj, "message"));
    } else {
        ev->type = KUBE_WATCH_UNKNOWN;
    }
    return 0;
}

void kube_watch_event_free(kube_watch_event *ev)
{
    json_decref(ev->doc);
    memset(ev, 0, sizeof(*ev));
}

/* ---- peek ------------------------------------------------------------------ */

#define PEEK_MAX_DEPTH 512

/* Where a value sits: the members the peek reads, or elsewhere. */
enum at { AT_ROOT, AT_OBJECT, AT_META, AT_OTHER };

typedef struct scan {
    const char *s, *end;
    kube_watch_peek *p;
    bool has_type, has_ns, has_name, has_rv;
    bool ns_unread;  /* a namespace string that could not be kept */
    char type[16];
} scan_t;

static void skip_ws(scan_t *x)
{
    while (x->s < x->end && (*x->s == ' ' || *x->s == '\t' || *x->s == '\n' || *x->s == '\r'))
        x->s++;
}

/* A string at x->s: its raw bytes between the quotes in [*b, *b + *n), *esc
 * when it holds an escape. 0, or -1 when it is not one. */
static int scan_string(scan_t *x, const char **b, size_t *n, bool *esc)
{
    if (x->s >= x->end || *x->s != '"')
        return -1;
    *b = ++x->s;
    *esc = false;
    while (x->s < x->end) {
        unsigned char c = (unsigned char)*x->s;
        if (c == '"') {
            *n = (size_t)(x->s - *b);
            x->s++;
            return 0;
        }
        if (c < 0x20)
            return -1;
        if (c == '\\') {
            *esc = true;
            if (++x->s >= x->end)
                return -1;
        }
        x->s++;
    }
    return -1;
}

/* Copies a string value into buf (size cap) when it is plain and fits;
 * otherwise *ok goes false. */
static void keep(const char *b, size_t n, bool esc, char *buf, size_t cap, bool *ok)
{
    *ok = !esc && n < cap;
    if (*ok) {
        memcpy(buf, b, n);
        buf[n] = '\0';
    }
}

static int scan_value(scan_t *x, enum at at, int depth);

static int scan_object(scan_t *x, enum at at, int depth)
{
    x->s++; /* '{' */
    skip_ws(x);
    if (x->s < x->end && *x->s == '}') {
        x->s++;
        return 0;
    }
    for (;;) {
        const char *k;
        size_t kn;
        bool esc;
        skip_ws(x);
        if (scan_string(x, &k, &kn, &esc) != 0)
            return -1;
        skip_ws(x);
        if (x->s >= x->end || *x->s != ':')
            return -1;
        x->s++;
        skip_ws(x);
#define KEY(lit) (!esc && kn == sizeof(lit) - 1 && memcmp(k, lit, kn) == 0)
        enum at child = AT_OTHER;
        bool *flag = NULL;
        char *buf = NULL;
        size_t cap = 0;
        if (at == AT_ROOT && KEY("type")) {
            flag = &x->has_type, buf = x->type, cap = sizeof x->type;
        } else if (at == AT_ROOT && KEY("object")) {
            child = AT_OBJECT; /* a later "object" replaces an earlier one */
            x->has_ns = x->has_name = x->has_rv = x->ns_unread = false;
        } else if (at == AT_OBJECT && KEY("metadata")) {
            child = AT_META;
            x->has_ns = x->has_name = x->has_rv = x->ns_unread = false;
        } else if (at == AT_META && KEY("namespace")) {
            flag = &x->has_ns, buf = x->p->ns, cap = sizeof x->p->ns;
        } else if (at == AT_META && KEY("name")) {
            flag = &x->has_name, buf = x->p->name, cap = sizeof x->p->name;
        } else if (at == AT_META && KEY("resourceVersion")) {
            flag = &x->has_rv, buf = x->p->rv, cap = sizeof x->p->rv;
        }
#undef KEY
        if (flag) {
            const char *b;
            size_t n;
            *flag = false;
            if (flag == &x->has_ns)
                x->ns_unread = false;
            if (x->s < x->end && *x->s == '"') {
                if (scan_string(x, &b, &n, &esc) != 0)
                    return -1;
                keep(b, n, esc, buf, cap, flag);
                /* A namespace that is a string the peek cannot keep is not
                 * "" (as a non-string one reads): the parser must read it. */
                if (flag == &x->has_ns && !*flag)
                    x->ns_unread = true;
            } else if (scan_value(x, AT_OTHER, depth + 1) != 0) {
                return -1;
            }
        } else if (child != AT_OTHER && (x->s >= x->end || *x->s != '{')) {
            if (scan_value(x, AT_OTHER, depth + 1) != 0) /* not an object: nothing read */
                return -1;
        } else if (scan_value(x, child, depth + 1) != 0) {
            return -1;
        }
        skip_ws(x);
        if (x->s < x->end && *x->s == ',') {
            x->s++;
            continue;
        }
        if (x->s < x->end && *x->s == '}') {
            x->s++;
            return 0;
        }
        return -1;
    }
}

static int scan_array(scan_t *x, int depth)
{
    x->s++; /* '[' */
    skip_ws(x);
    if (x->s < x->end && *x->s == ']') {
        x->s++;
        return 0;
    }
    for (;;) {
        skip_ws(x);
        if (scan_value(x, AT_OTHER, depth + 1) != 0)
            return -1;
        skip_ws(x);
        if (x->s < x->end && *x->s == ',') {
            x->s++;
            continue;
        }
        if (x->s < x->end && *x->s == ']') {
            x->s++;
            return 0;
        }
        return -1;
    }
}

static int scan_value(scan_t *x, enum at at, int depth)
{
    const char *b;
    size_t n;
    bool esc;

    if (depth > PEEK_MAX_DEPTH || x->s >= x->end)
        return -1;
    switch (*x->s) {
    case '{':
        return scan_object(x, at, depth);
    case '[':
        return scan_array(x, depth);
    case '"':
        return scan_string(x, &b, &n, &esc);
    default:
        /* A number or a literal: its characters, then a delimiter. */
        b = x->s;
        while (x->s < x->end && (strchr("+-.0123456789eE", *x->s) ||
                                 (*x->s >= 'a' && *x->s <= 'z')))
            x->s++;
        return x->s > b ? 0 : -1;
    }
}

int kube_watch_event_peek(const char *line, size_t len, kube_watch_peek *p)
{
    scan_t x = {.s = line, .end = line + len, .p = p};

    memset(p, 0, sizeof *p);
    skip_ws(&x);
    if (x.s >= x.end || *x.s != '{' || scan_value(&x, AT_ROOT, 0) != 0)
        return -1;
    skip_ws(&x);
    if (x.s != x.end || !x.has_type || !x.has_name || !x.has_rv || !x.p->name[0] ||
        x.ns_unread)
        return -1;
    if (!x.has_ns)
        p->ns[0] = '\0';
    if (strcmp(x.type, "ADDED") == 0)
        p->change = KUBE_EVENT_ADDED;
    else if (strcmp(x.type, "MODIFIED") == 0)
        p->change = KUBE_EVENT_MODIFIED;
    else if (strcmp(x.type, "DELETED") == 0)
        p->change = KUBE_EVENT_DELETED;
    else
        return -1;
    return 0;
}
