/*
 * admission/admission.c - AdmissionReview v1: parse the request, render the
 * answer.
 */
#include "admission/admission.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT"};

const char *adm_op_name(adm_op_t op)
{
    return (unsigned)op < 4 ? op_names[op] : "?";
}

/* Copies the string v (field names it) into out. A missing or null v is an
 * error only when required (out is then ""). */
static int copy_str(const json_t *v, const char *field, bool required, char *out, size_t cap,
                    char *err, size_t errlen)
{
    size_t n;

    out[0] = '\0';
    if (v == NULL || json_is_null(v)) {
        if (required)
            return hcp_errf(err, errlen, HCP_EPARSE, "%s: missing", field);
        return 0;
    }
    if (!json_is_string(v))
        return hcp_errf(err, errlen, HCP_EPARSE, "%s: not a string", field);
    n = json_string_length(v);
    if (n >= cap || memchr(json_string_value(v), '\0', n) != NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "%s: longer than %zu bytes or contains NUL",
                        field, cap - 1);
    memcpy(out, json_string_value(v), n + 1);
    return 0;
}

/* Copies the string member key of obj into out (see copy_str()). */
static int get_str(const json_t *obj, const char *key, const char *field, bool required,
                   char *out, size_t cap, char *err, size_t errlen)
{
    return copy_str(json_object_get(obj, key), field, required, out, cap, err, errlen);
}

/* The member key of obj when it is an object; NULL when absent or null;
 * an error when it is something else. */
static int get_obj(json_t *obj, const char *key, const char *field, json_t **out, char *err,
                   size_t errlen)
{
    json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (!json_is_object(v))
        return hcp_errf(err, errlen, HCP_EPARSE, "%s: not an object", field);
    *out = v;
    return 0;
}

static int parse_op(const json_t *rq, adm_request_t *req, char *err, size_t errlen)
{
    char op[16];
    int rc = get_str(rq, "operation", "request.operation", true, op, sizeof(op), err, errlen);

    if (rc)
        return rc;
    for (int i = 0; i < 4; i++) {
        if (strcmp(op, op_names[i]) == 0) {
            req->op = (adm_op_t)i;
            return 0;
        }
    }
    return hcp_errf(err, errlen, HCP_EPARSE,
                    "request.operation: \"%s\" is not CREATE, UPDATE, DELETE or CONNECT", op);
}

/* request.resource, request.kind, request.subResource. */
static int parse_target(json_t *rq, adm_request_t *req, char *err, size_t errlen)
{
    json_t *res, *kind;
    int rc;

    if ((rc = get_obj(rq, "resource", "request.resource", &res, err, errlen)))
        return rc;
    if (res == NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "request.resource: missing");
    if ((rc = get_str(res, "group", "request.resource.group", false, req->group,
                      sizeof(req->group), err, errlen)) ||
        (rc = get_str(res, "version", "request.resource.version", true, req->version,
                      sizeof(req->version), err, errlen)) ||
        (rc = get_str(res, "resource", "request.resource.resource", true, req->resource,
                      sizeof(req->resource), err, errlen)))
        return rc;
    if ((rc = get_obj(rq, "kind", "request.kind", &kind, err, errlen)))
        return rc;
    if (kind == NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "request.kind: missing");
    if ((rc = get_str(kind, "kind", "request.kind.kind", true, req->kind, sizeof(req->kind), err,
                      errlen)))
        return rc;
    return get_str(rq, "subResource", "request.subResource", false, req->subresource,
                   sizeof(req->subresource), err, errlen);
}

/* request.userInfo: the username and the first ADM_MAX_GROUPS groups. */
static int parse_user(json_t *rq, adm_request_t *req, char *err, size_t errlen)
{
    json_t *user, *groups, *g;
    char field[64];
    size_t i;
    int rc;

    if ((rc = get_obj(rq, "userInfo", "request.userInfo", &user, err, errlen)) || user == NULL)
        return rc;
    if ((rc = get_str(user, "username", "request.userInfo.username", false, req->user,
                      sizeof(req->user), err, errlen)))
        return rc;
    groups = json_object_get(user, "groups");
    if (groups == NULL || json_is_null(groups))
        return 0;
    if (!json_is_array(groups))
        return hcp_errf(err, errlen, HCP_EPARSE, "request.userInfo.groups: not an array");
    json_array_foreach(groups, i, g) {
        if (req->ngroups == ADM_MAX_GROUPS)
            break;
        snprintf(field, sizeof(field), "request.userInfo.groups[%zu]", i);
        if ((rc = copy_str(g, field, true, req->groups[req->ngroups], sizeof(req->groups[0]),
                           err, errlen)))
            return rc;
        req->ngroups++;
    }
    return 0;
}

/* request.object and request.oldObject, which the operation requires, and
 * request.options. */
static int parse_objects(json_t *rq, adm_request_t *req, char *err, size_t errlen)
{
    json_t *obj, *old, *opts;
    int rc;

    if ((rc = get_obj(rq, "object", "request.object", &obj, err, errlen)) ||
        (rc = get_obj(rq, "oldObject", "request.oldObject", &old, err, errlen)) ||
        (rc = get_obj(rq, "options", "request.options", &opts, err, errlen)) ||
        (rc = parse_user(rq, req, err, errlen)))
        return rc;
    if (obj == NULL && (req->op == ADM_CREATE || req->op == ADM_UPDATE))
        return hcp_errf(err, errlen, HCP_EPARSE, "request.object: missing for %s",
                        adm_op_name(req->op));
    if (old == NULL && req->op == ADM_UPDATE)
        return hcp_errf(err, errlen, HCP_EPARSE, "request.oldObject: missing for UPDATE");
    req->object = json_incref(obj);
    req->old_object = json_incref(old);
    req->options = json_incref(opts);
    return 0;
}

/* apiVersion and kind of the review itself. */
static int check_review(const json_t *root, char *err, size_t errlen)
{
    char v[64];
    int rc;

    if ((rc = get_str(root, "apiVersion", "apiVersion", true, v, sizeof(v), err, errlen)))
        return rc;
    if (strcmp(v, ADM_API_VERSION) != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "apiVersion: \"%s\" is not %s", v,
                        ADM_API_VERSION);
    if ((rc = get_str(root, "kind", "kind", true, v, sizeof(v), err, errlen)))
        return rc;
    if (strcmp(v, "AdmissionReview") != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "kind: \"%s\" is not AdmissionReview", v);
    return 0;
}

int adm_request_parse(const char *body, size_t len, adm_request_t *req, char *err,
                      size_t errlen)
{
    json_error_t jerr;
    json_t *root, *rq;
    bool dry = false;
    int rc;

    memset(req, 0, sizeof(*req));
    root = json_loadb(body, len, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL)
        return hcp_errf(err, errlen, HCP_EPARSE, "not JSON: %s (byte %d)", jerr.text,
                        jerr.position);
    if (!json_is_object(root)) {
        rc = hcp_errf(err, errlen, HCP_EPARSE, "not a JSON object");
        goto fail;
    }
    if ((rc = get_obj(root, "request", "request", &rq, err, errlen)))
        goto fail;
    if (rq == NULL) {
        rc = hcp_errf(err, errlen, HCP_EPARSE, "request: missing");
        goto fail;
    }
    if ((rc = get_str(rq, "uid", "request.uid", true, req->uid, sizeof(req->uid), err, errlen)))
        goto fail;
    if ((rc = check_review(root, err, errlen)) || (rc = parse_op(rq, req, err, errlen)) ||
        (rc = parse_target(rq, req, err, errlen)) ||
        (rc = get_str(rq, "namespace", "request.namespace", false, req->ns, sizeof(req->ns), err,
                      errlen)) ||
        (rc = get_str(rq, "name", "request.name", false, req->name, sizeof(req->name), err,
                      errlen)))
        goto fail;
    if (json_object_get(rq, "dryRun") && !json_is_null(json_object_get(rq, "dryRun"))) {
        if (!json_is_boolean(json_object_get(rq, "dryRun"))) {
            rc = hcp_errf(err, errlen, HCP_EPARSE, "request.dryRun: not a boolean");
            goto fail;
        }
        dry = json_is_true(json_object_get(rq, "dryRun"));
    }
    req->dry_run = dry;
    if ((rc = parse_objects(rq, req, err, errlen)))
        goto fail;
    json_decref(root);
    return 0;
fail:
    json_decref(root);
    {
        char uid[sizeof(req->uid)];
        memcpy(uid, req->uid, sizeof(uid));
        adm_request_free(req);
        memcpy(req->uid, uid, sizeof(uid));
    }
    return rc;
}

void adm_request_free(adm_request_t *req)
{
    json_decref(req->object);
    json_decref(req->old_object);
    json_decref(req->options);
    memset(req, 0, sizeof(*req));
}

/* ---- the answer ---------------------------------------------------------- */

void adm_response_init(adm_response_t *r)
{
    memset(r, 0, sizeof(*r));
    r->allowed = true;
}

void adm_response_free(adm_response_t *r)
{
    json_decref(r->patch);
    r->patch = NULL;
}

/* Cuts a UTF-8 sequence that vsnprintf's truncation left incomplete at the
 * end of s, so that the text stays valid for JSON. */
static void trim_utf8(char *s)
{
    size_t n = strlen(s), i = n, need;

    while (i > 0 && n - i < 4 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--;
    if (i == 0 || ((unsigned char)s[i - 1] & 0x80) == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 0;
    if (need != n - i + 1)
        s[i - 1] = '\0';
}

void adm_response_deny(adm_response_t *r, int code, const char *fmt, ...)
{
    va_list ap;

    r->allowed = false;
    r->code = code;
    va_start(ap, fmt);
    vsnprintf(r->message, sizeof(r->message), fmt, ap);
    va_end(ap);
    trim_utf8(r->message);
    adm_response_free(r);
}

void adm_response_warn(adm_response_t *r, const char *fmt, ...)
{
    va_list ap;

    if (r->nwarnings == ADM_MAX_WARNINGS)
        return;
    va_start(ap, fmt);
    vsnprintf(r->warnings[r->nwarnings], sizeof(r->warnings[0]), fmt, ap);
    va_end(ap);
    trim_utf8(r->warnings[r->nwarnings++]);
}

int adm_patch_op(adm_response_t *r, const char *op, const char *path, json_t *value)
{
    bool remove = op && strcmp(op, "remove") == 0;
    json_t *o;

    if (op == NULL || path == NULL || path[0] != '/' || remove != (value == NULL) ||
        (!remove && strcmp(op, "add") != 0 && strcmp(op, "replace") != 0 &&
         strcmp(op, "test") != 0)) {
        json_decref(value);
        return HCP_EINVAL;
    }
    if (r->patch == NULL && (r->patch = json_array()) == NULL) {
        json_decref(value);
        return HCP_ENOMEM;
    }
    o = json_pack("{s:s, s:s}", "op", op, "path", path);
    if (o == NULL || (value && json_object_set_new(o, "value", value) != 0) ||
        json_array_append_new(r->patch, o) != 0)
        return HCP_ENOMEM;
    return 0;
}

int adm_pointer(char *out, size_t cap, const char *const *segments)
{
    size_t n = 0;

    for (; *segments; segments++) {
        const char *s = *segments;
        if (n + 1 >= cap)
            goto full;
        out[n++] = '/';
        for (; *s; s++) {
            const char *w = *s == '~' ? "~0" : *s == '/' ? "~1" : NULL;
            size_t k = w ? 2 : 1;
            if (n + k >= cap)
                goto full;
            if (w)
                memcpy(out + n, w, 2);
            else
                out[n] = *s;
            n += k;
        }
    }
    if (cap == 0)
        return HCP_ERANGE;
    out[n] = '\0';
    return 0;
full:
    if (cap)
        out[0] = '\0';
    return HCP_ERANGE;
}

char *adm_base64(const void *data, size_t len)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = data;
    char *out, *o;

    if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
        return NULL;
    out = o = malloc((len + 2) / 3 * 4 + 1);
    if (out == NULL)
        return NULL;
    for (size_t i = 0; i < len; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        size_t rest = len - i;
        if (rest > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (rest > 2)
            v |= p[i + 2];
        *o++ = tab[v >> 18 & 63];
        *o++ = tab[v >> 12 & 63];
        *o++ = rest > 1 ? tab[v >> 6 & 63] : '=';
        *o++ = rest > 2 ? tab[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

/* s as a JSON string; when s is not valid UTF-8 (a message built from
 * bytes cut mid-character), its ASCII with every other byte as '?'. */
static json_t *text(const char *s)
{
    json_t *j = json_string(s);
    char *copy;

    if (j != NULL || (copy = strdup(s)) == NULL)
        return j;
    for (char *p = copy; *p; p++)
        if ((unsigned char)*p >= 0x80)
            *p = '?';
    j = json_string(copy);
    free(copy);
    return j;
}

/* The response object's patch members, when there is a patch. */
static int add_patch(json_t *resp, const adm_response_t *r)
{
    char *doc, *b64;
    int rc;

    if (!r->allowed || r->patch == NULL || json_array_size(r->patch) == 0)
        return 0;
    doc = json_dumps(r->patch, JSON_COMPACT);
    if (doc == NULL)
        return HCP_ENOMEM;
    b64 = adm_base64(doc, strlen(doc));
    free(doc);
    if (b64 == NULL)
        return HCP_ENOMEM;
    rc = json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
                 json_object_set_new(resp, "patch", json_string(b64))
             ? HCP_ENOMEM
             : 0;
    free(b64);
    return rc;
}

int adm_review_render(const char *uid, const adm_response_t *r, char **out, size_t *len)
{
    json_t *root, *resp, *warn = NULL;
    int rc = HCP_ENOMEM;

    *out = NULL;
    root = json_pack("{s:s, s:s, s:{s:s, s:b}}", "apiVersion", ADM_API_VERSION, "kind",
                     "AdmissionReview", "response", "uid", uid ? uid : "", "allowed",
                     r->allowed);
    if (root == NULL)
        return HCP_ENOMEM;
    resp = json_object_get(root, "response");
    if (!r->allowed &&
        json_object_set_new(resp, "status", json_pack("{s:i, s:o*}", "code", r->code, "message",
                                                      text(r->message))) != 0)
        goto fail;
    if ((rc = add_patch(resp, r)) != 0)
        goto fail;
    rc = HCP_ENOMEM;
    if (r->nwarnings) {
        if ((warn = json_array()) == NULL || json_object_set_new(resp, "warnings", warn) != 0)
            goto fail;
        for (size_t i = 0; i < r->nwarnings; i++)
            if (json_array_append_new(warn, text(r->warnings[i])) != 0)
                goto fail;
    }
    *out = json_dumps(root, JSON_COMPACT);
    if (*out == NULL)
        goto fail;
    *len = strlen(*out);
    rc = 0;
fail:
    json_decref(root);
    return rc;
}
