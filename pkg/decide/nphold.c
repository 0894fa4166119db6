/* nphold.c: the NodePool hold, pure. */
#include "decide/nphold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/slim.h"
#include "decide/withdraw.h"

#define PTR_MAX 512

/* Appends "/" and seg (RFC 6901: "~" as "~0", "/" as "~1") to p. */
static int ptr_add(char *p, size_t cap, const char *seg)
{
    size_t n = strlen(p);

    if (n + 1 >= cap)
        return HCP_ERANGE;
    p[n++] = '/';
    for (; *seg; seg++) {
        const char *w = *seg == '~' ? "~0" : *seg == '/' ? "~1" : NULL;
        size_t k = w ? 2 : 1;
        if (n + k >= cap)
            return HCP_ERANGE;
        memcpy(p + n, w ? w : seg, k);
        n += k;
    }
    p[n] = '\0';
    return 0;
}

/* Appends {op, path, value (stolen, may be NULL)} to ops. */
static int add_op(json_t *ops, const char *op, const char *path, json_t *value)
{
    json_t *o = json_pack("{s:s, s:s}", "op", op, "path", path);

    if (o == NULL || (value && json_object_set_new(o, "value", value) != 0)) {
        json_decref(o);
        if (o == NULL)
            json_decref(value);
        return HCP_ENOMEM;
    }
    return json_array_append_new(ops, o) ? HCP_ENOMEM : 0;
}

static const char *annotation(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(obj, "metadata.annotations"), key));
}

/* Sets (value stolen, json_null() for a removed field) or, with value NULL,
 * deletes the member at dotted path in req, creating objects on the way
 * and pruning the ones a deletion leaves empty. */
static int request_set(json_t *req, const char *path, json_t *value)
{
    const char *dot = strchr(path, '.');
    char key[64];
    json_t *sub;
    int rc;

    if (dot == NULL) {
        if (value == NULL) {
            json_object_del(req, path);
            return 0;
        }
        return json_object_set_new(req, path, value) ? HCP_ENOMEM : 0;
    }
    snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
    sub = json_object_get(req, key);
    if (!json_is_object(sub)) {
        if (value == NULL)
            return 0;
        if (json_object_set_new(req, key, json_object()) != 0) {
            json_decref(value);
            return HCP_ENOMEM;
        }
        sub = json_object_get(req, key);
    }
    rc = request_set(sub, dot + 1, value);
    if (rc == 0 && value == NULL && json_object_size(sub) == 0)
        json_object_del(req, key);
    return rc;
}

/* The member at dotted path of req, or NULL. */
static const json_t *request_get(const json_t *req, const char *path)
{
    char key[64];
    const char *dot;

    while ((dot = strchr(path, '.')) != NULL && json_is_object(req)) {
        snprintf(key, sizeof(key), "%.*s", (int)(dot - path), path);
        req = json_object_get(req, key);
        path = dot + 1;
    }
    return json_is_object(req) ? json_object_get(req, path) : NULL;
}

/* Appends the request of field (value as recorded) in words to list (of
 * len bytes). */
static void add_words(char *list, size_t len, const char *field, const json_t *value)
{
    char words[160];
    size_t n = strlen(list);

    decide_request_words(field, value, words, sizeof(words));
    if (n < len)
        snprintf(list + n, len - n, "%s%s", n ? ", " : "", words);
}

/* The record the write carries as a new object (empty when none or not an
 * object of spec fields). */
static json_t *request_of(const json_t *obj, const char *key)
{
    const char *text = annotation(obj, key);
    json_t *req = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;

    if (json_is_object(req))
        return req;
    json_decref(req);
    return json_object();
}

/* The operations that store req in the annotation (or remove it when req
 * is empty) unless the write carries exactly that already. */
static int store_request(json_t *ops, const json_t *new_obj, const json_t *req, const char *key)
{
    const char *have = annotation(new_obj, key);
    char path[PTR_MAX] = "";
    char *text;
    int rc;

    if ((rc = ptr_add(path, sizeof(path), "metadata")) != 0 ||
        (rc = ptr_add(path, sizeof(path), "annotations")) != 0)
        return rc;
    if (json_object_size(req) == 0) {
        if (!have)
            return 0;
        if ((rc = ptr_add(path, sizeof(path), key)) != 0)
            return rc;
        return add_op(ops, "remove", path, NULL);
    }
    if ((text = json_dumps(req, JSON_COMPACT | JSON_SORT_KEYS)) == NULL)
        return HCP_ENOMEM;
    if (have && strcmp(have, text) == 0) {
        free(text);
        return 0;
    }
    if (!json_is_object(hcp_json_path(new_obj, "metadata.annotations")))
        rc = json_is_object(json_object_get(new_obj, "metadata"))
                 ? add_op(ops, "add", path, json_object())
                 : HCP_ERANGE; /* no metadata: the API server refuses the write anyway */
    if (rc == 0)
        rc = ptr_add(path, sizeof(path), key);
    if (rc == 0)
        rc = add_op(ops, "add", path, json_string(text));
    free(text);
    return rc;
}

/* The operation that puts field (dotted, under spec) of the write back to
 * its running value: the value itself where the write has its parent
 * object, else the first level the write lacks, whole (from the running
 * object); a remove when nothing ran there. */
static int restore_field(json_t *ops, const json_t *old_obj, const json_t *new_obj,
                         const char *field)
{
    char path[PTR_MAX] = "", buf[128], jpath[160];
    const char *seg[12];
    size_t n = 0, k;
    const json_t *running, *cur = new_obj, *value = old_obj;
    int rc;

    snprintf(buf, sizeof(buf), "%s", field);
    seg[n++] = "spec";
    for (char *p = buf; p && *p && n < sizeof(seg) / sizeof(seg[0]);) {
        seg[n++] = p;
        if ((p = strchr(p, '.')) != NULL)
            *p++ = '\0';
    }
    snprintf(jpath, sizeof(jpath), "spec.%s", field);
    running = hcp_json_path(old_obj, jpath);
    if (running == NULL || json_is_null(running)) {
        for (k = 0; k < n; k++)
            if ((rc = ptr_add(path, sizeof(path), seg[k])) != 0)
                return rc;
        return add_op(ops, "remove", path, NULL);
    }
    for (k = 0; k + 1 < n; k++) {
        const json_t *next = json_object_get(cur, seg[k]);
        if (!json_is_object(next))
            break;
        cur = next;
    }
    for (size_t i = 0; i <= k; i++) {
        if ((rc = ptr_add(path, sizeof(path), seg[i])) != 0)
            return rc;
        value = json_object_get(value, seg[i]);
    }
    return add_op(ops, "add", path, json_deep_copy(value));
}

/* The field changes between the two objects (null counts as absent). */
static bool changes(const json_t *old_obj, const json_t *new_obj, const char *field)
{
    char jpath[160];

    snprintf(jpath, sizeof(jpath), "spec.%s", field);
    return !hcp_json_equal_stored(hcp_json_path(old_obj, jpath),
                                  hcp_json_path(new_obj, jpath));
}

int decide_spec_hold(const json_t *old_obj, const json_t *new_obj, const decide_hold_in_t *in,
                     const char *const *fields, const char *key, decide_np_hold_t *out)
{
    json_t *req = NULL, *was = NULL;
    size_t n = 0;
    bool changed = false;
    int rc = HCP_ENOMEM;

    memset(out, 0, sizeof(*out));
    if ((out->ops = json_array()) == NULL)
        return HCP_ENOMEM;
    /* HyperShift's write that drops a record whole keeps it: the write
     * carried the field along, it asked for nothing to be withdrawn. */
    const json_t *carried = new_obj;
    if (in->exempt && annotation(new_obj, key) == NULL && annotation(old_obj, key) != NULL) {
        carried = old_obj;
        changed = true;
    }
    /* In a window a write without a record, and that drops none, has
     * nothing to adjust. */
    if (!in->restricted && annotation(carried, key) == NULL && annotation(old_obj, key) == NULL)
        return 0;
    if ((req = request_of(carried, key)) == NULL || (was = request_of(old_obj, key)) == NULL)
        goto fail;
    rc = 0;
    for (size_t i = 0; fields[i] && i < 64 && rc == 0; i++) {
        const char *f = fields[i];
        if (!changes(old_obj, new_obj, f)) {
            /* Left as it runs: withdrawn by intent, or dropped from the
             * record by hand (not by HyperShift, whose drop was put back). */
            const json_t *asked = request_get(req, f), *had = request_get(was, f);
            if (asked && !in->exempt && (in->withdraw >> i & 1)) {
                out->withdrawn |= (uint64_t)1 << i;
                add_words(out->withdrawn_words, sizeof(out->withdrawn_words), f, asked);
                rc = request_set(req, f, NULL);
                changed = true;
            } else if (had && !asked && !in->exempt) {
                out->withdrawn |= (uint64_t)1 << i;
                out->dropped |= (uint64_t)1 << i;
                add_words(out->withdrawn_words, sizeof(out->withdrawn_words), f, had);
            } else if (asked && had && json_equal(asked, had)) {
                add_words(out->kept_words, sizeof(out->kept_words), f, asked);
            }
            continue;
        }
        changed = true;
        if (!in->restricted) {
            rc = request_set(req, f, NULL);
            continue;
        }
        char jpath[160];
        snprintf(jpath, sizeof(jpath), "spec.%s", f);
        const json_t *want = hcp_json_path(new_obj, jpath);
        if ((rc = restore_field(out->ops, old_obj, new_obj, f)) != 0)
            break;
        rc = request_set(req, f, want && !json_is_null(want) ? json_deep_copy(want) : json_null());
        if (n < sizeof(out->held))
            n += (size_t)snprintf(out->held + n, sizeof(out->held) - n, "%sspec.%s",
                                  n ? ", " : "", f);
    }
    if (rc == 0 && changed)
        rc = store_request(out->ops, new_obj, req, key);
    if (rc)
        goto fail;
    out->left = json_object_size(req) > 0;
    out->asked = out->held[0] && !json_equal(req, was);
    json_decref(req);
    json_decref(was);
    return 0;
fail:
    json_decref(req);
    json_decref(was);
    decide_np_hold_free(out);
    return rc;
}

int decide_np_hold(const json_t *old_obj, const json_t *new_obj, bool restricted,
                   decide_np_hold_t *out)
{
    decide_hold_in_t in = {.restricted = restricted};
    return decide_spec_hold(old_obj, new_obj, &in, decide_np_held_fields,
                            DECIDE_REQUESTED_NODEPOOL_ANNOTATION, out);
}

void decide_np_hold_free(decide_np_hold_t *h)
{
    json_decref(h->ops);
    h->ops = NULL;
}
