/* withdraw.c: a write's intent for the held fields it leaves as they run. */
#include "decide/withdraw.h"

#include <stdio.h>
#include <string.h>

#include "base/json.h"
#include "decide/version.h"

static const char *ann(const json_t *obj, const char *key)
{
    return json_string_value(json_object_get(hcp_json_path(obj, "metadata.annotations"), key));
}

static bool same(const char *a, const char *b)
{
    return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

bool decide_user_exempt(const char *user, const char *const *exempt)
{
    if (!user || !user[0])
        return false;
    for (; exempt && *exempt; exempt++)
        if (strcmp(user, *exempt) == 0)
            return true;
    return false;
}

/* The entry of managedFields (an array, untrusted) of manager m with
 * operation op on the object itself (no subresource), or NULL. */
static const json_t *entry(const json_t *managed, const char *m, const char *op)
{
    const json_t *e;
    size_t i;

    json_array_foreach(managed, i, e) {
        const char *sub = json_string_value(json_object_get(e, "subresource"));
        if (same(json_string_value(json_object_get(e, "manager")), m) &&
            same(json_string_value(json_object_get(e, "operation")), op) && (!sub || !sub[0]))
            return e;
    }
    return NULL;
}

/* The fieldsV1 of the writer's Apply entry when this write is its apply. */
static const json_t *applied_fields(const json_t *old_obj, const json_t *new_obj, const char *m)
{
    const json_t *now = hcp_json_path(new_obj, "metadata.managedFields");
    const json_t *was = hcp_json_path(old_obj, "metadata.managedFields");
    const json_t *apply, *upd;

    if (!m[0] || !json_is_array(now))
        return NULL;
    apply = entry(now, m, "Apply");
    if (!apply || !json_is_object(json_object_get(apply, "fieldsV1")))
        return NULL;
    /* An Update of the same manager's in this write: no apply. */
    upd = entry(now, m, "Update");
    if (upd && !json_equal(upd, entry(was, m, "Update")))
        return NULL;
    return json_object_get(apply, "fieldsV1");
}

/* The annotation's text as a JSON object, or NULL. */
static json_t *parse_object(const char *text)
{
    json_t *j = text ? json_loads(text, JSON_REJECT_DUPLICATES, NULL) : NULL;
    if (json_is_object(j))
        return j;
    json_decref(j);
    return NULL;
}

void decide_intent_read(const json_t *old_obj, const json_t *new_obj, const json_t *options,
                        const char *user, const char *const *exempt, decide_intent_t *out)
{
    const char *m = json_string_value(json_object_get(options, "fieldManager"));
    const char *was = ann(old_obj, DECIDE_LAST_APPLIED_ANNOTATION);
    const char *now = ann(new_obj, DECIDE_LAST_APPLIED_ANNOTATION);

    memset(out, 0, sizeof(*out));
    out->exempt = decide_user_exempt(user, exempt);
    if (out->exempt)
        return;
    if (m && strlen(m) < sizeof(out->manager))
        memcpy(out->manager, m, strlen(m) + 1);
    out->applied = applied_fields(old_obj, new_obj, out->manager);
    if (now && !same(was, now)) {
        out->last_applied = parse_object(now);
        out->was_applied = parse_object(was);
    }
}

void decide_intent_free(decide_intent_t *in)
{
    json_decref(in->last_applied);
    json_decref(in->was_applied);
    in->last_applied = in->was_applied = NULL;
}

/* fieldsV1 holds spec.<field>: "f:spec", then "f:<segment>" for each
 * segment (a member for a whole object or list field, with members of its
 * own for the parts an apply set). */
static bool fields_hold(const json_t *fields, const char *field)
{
    char key[130];
    const json_t *at = json_object_get(fields, "f:spec");
    const char *p = field;

    while (json_is_object(at) && *p) {
        size_t n = strcspn(p, ".");
        if (n + 3 > sizeof(key))
            return false;
        snprintf(key, sizeof(key), "f:%.*s", (int)n, p);
        at = json_object_get(at, key);
        p += n + (p[n] == '.');
    }
    return json_is_object(at) && !*p;
}

decide_signal_t decide_intent_field(const decide_intent_t *in, const json_t *old_obj,
                                    const json_t *new_obj, const char *field)
{
    char path[160];
    const json_t *running, *la, *was;

    if (in->exempt || snprintf(path, sizeof(path), "spec.%s", field) >= (int)sizeof(path))
        return DECIDE_SIGNAL_NONE;
    running = hcp_json_path(old_obj, path);
    if (!hcp_json_equal_stored(running, hcp_json_path(new_obj, path)))
        return DECIDE_SIGNAL_NONE; /* not the running value: a request, not a revert */
    if (in->applied && fields_hold(in->applied, field))
        return DECIDE_SIGNAL_SSA;
    la = in->last_applied ? hcp_json_path(in->last_applied, path) : NULL;
    if (la && !json_is_null(la) && hcp_json_equal_stored(la, running)) {
        was = in->was_applied ? hcp_json_path(in->was_applied, path) : NULL;
        if (!was || !hcp_json_equal_stored(was, la))
            return DECIDE_SIGNAL_CSA;
    }
    return DECIDE_SIGNAL_NONE;
}

uint64_t decide_intent_mask(const decide_intent_t *in, const json_t *old_obj,
                            const json_t *new_obj, const char *const *fields)
{
    uint64_t mask = 0;
    for (size_t i = 0; fields[i] && i < DECIDE_WITHDRAW_FIELDS; i++)
        if (decide_intent_field(in, old_obj, new_obj, fields[i]) != DECIDE_SIGNAL_NONE)
            mask |= (uint64_t)1 << i;
    return mask;
}

uint64_t decide_withdrawn(const json_t *old_obj, const json_t *new_obj, const json_t *options,
                          const char *user, const char *const *exempt,
                          const char *const *fields)
{
    decide_intent_t in;
    decide_intent_read(old_obj, new_obj, options, user, exempt, &in);
    uint64_t mask = decide_intent_mask(&in, old_obj, new_obj, fields);
    decide_intent_free(&in);
    return mask;
}

/* The release image a release field's value names: the value itself
 * ("release.image", "controlPlaneRelease.image") or its image member
 * ("release"); NULL for any other field. */
static const char *release_image(const char *field, const json_t *value, bool *cp)
{
    *cp = strcmp(field, "controlPlaneRelease.image") == 0 ||
          strcmp(field, "controlPlaneRelease") == 0;
    if (strcmp(field, "release.image") == 0 || strcmp(field, "controlPlaneRelease.image") == 0)
        return json_string_value(value);
    if (strcmp(field, "release") == 0 || strcmp(field, "controlPlaneRelease") == 0)
        return json_string_value(json_object_get(value, "image"));
    return NULL;
}

/* An image by its version when its tag names one, else the image. */
static void image_words(const char *image, char *buf, size_t len)
{
    char v[DECIDE_VERSIONLEN];
    if (decide_release_version(image, v, sizeof(v)))
        snprintf(buf, len, "%s", v);
    else
        snprintf(buf, len, "%s", image);
}

void decide_request_words(const char *field, const json_t *value, char *buf, size_t len)
{
    bool cp;
    char img[512];
    const char *image = release_image(field, value, &cp);

    if (image) {
        image_words(image, img, sizeof(img));
        snprintf(buf, len, "%srelease %s", cp ? "control-plane " : "", img);
    } else if (strncmp(field, "release", 7) == 0 || strncmp(field, "controlPlaneRelease", 19) == 0) {
        snprintf(buf, len, "%srelease (removed)", cp ? "control-plane " : "");
    } else {
        snprintf(buf, len, "spec.%s", field);
    }
}

void decide_running_words(const char *field, const json_t *value, char *buf, size_t len)
{
    bool cp;
    const char *image = release_image(field, value, &cp);

    if (image)
        image_words(image, buf, len);
    else if (strncmp(field, "release", 7) == 0 || strncmp(field, "controlPlaneRelease", 19) == 0)
        snprintf(buf, len, "(none)");
    else
        snprintf(buf, len, "value");
}
