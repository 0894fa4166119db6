/*
 * kube/discovery.c - preferred served version of an API group.
 */
#include "kube/discovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kube_discovery_pick(const json_t *group, const char *const *prefer, char *out, size_t outlen,
                        kube_error *err)
{
    const json_t *versions = json_object_get(group, "versions"), *v;
    const char *preferred;
    char served[256];
    size_t i, n = 0;
    int k;

    if (!json_is_array(versions))
        return kube_error_set(err, HCP_EPARSE, 0, NULL, "not an APIGroup: no versions list");
    for (k = 0; prefer && prefer[k]; k++) {
        json_array_foreach(versions, i, v) {
            const char *name = json_string_value(json_object_get(v, "version"));
            if (name && strcmp(name, prefer[k]) == 0) {
                if ((size_t)snprintf(out, outlen, "%s", name) >= outlen)
                    return kube_error_set(err, HCP_EINVAL, 0, NULL, "version name too long");
                return 0;
            }
        }
    }
    preferred = json_string_value(
        json_object_get(json_object_get(group, "preferredVersion"), "version"));
    if (prefer == NULL && preferred != NULL) {
        if ((size_t)snprintf(out, outlen, "%s", preferred) >= outlen)
            return kube_error_set(err, HCP_EINVAL, 0, NULL, "version name too long");
        return 0;
    }
    served[0] = '\0';
    json_array_foreach(versions, i, v) {
        const char *name = json_string_value(json_object_get(v, "version"));
        int w;
        if (name == NULL)
            continue;
        w = snprintf(served + n, sizeof(served) - n, "%s%s", n ? ", " : "", name);
        if (w < 0 || (size_t)w >= sizeof(served) - n)
            break;
        n += (size_t)w;
    }
    return kube_error_set(err, HCP_EINVAL, 0, NULL,
                          "group %s serves none of the supported versions (served: %s)",
                          json_string_value(json_object_get(group, "name"))
                              ? json_string_value(json_object_get(group, "name"))
                              : "?",
                          served[0] ? served : "none");
}

typedef struct disc {
    char group[256];
    const char *const *prefer;
    kube_discovery_cb cb;
    void *ud;
} disc;

static void disc_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    disc *d = ud;
    kube_error e;
    char version[64];

    if (err != NULL) {
        d->cb(c, d->group, NULL, err, d->ud);
    } else if (kube_discovery_pick(obj, d->prefer, version, sizeof(version), &e) < 0) {
        d->cb(c, d->group, NULL, &e, d->ud);
    } else {
        d->cb(c, d->group, version, NULL, d->ud);
    }
    free(d);
}

int kube_discover_version(kube_client *c, const char *group, const char *const *prefer,
                          kube_discovery_cb cb, void *ud, kube_error *err)
{
    char path[300];
    disc *d;
    int rc;

    if (group == NULL || group[0] == '\0' || strchr(group, '/') || cb == NULL)
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "discovery needs a group name");
    if ((size_t)snprintf(path, sizeof(path), "/apis/%s", group) >= sizeof(path))
        return kube_error_set(err, HCP_EINVAL, 0, NULL, "group name too long");
    d = calloc(1, sizeof(*d));
    if (d == NULL)
        return kube_error_set(err, HCP_ENOMEM, 0, NULL, "out of memory");
    snprintf(d->group, sizeof(d->group), "%s", group);
    d->prefer = prefer;
    d->cb = cb;
    d->ud = ud;
    rc = kube_get(c, path, disc_done, d, err);
    if (rc < 0)
        free(d);
    return rc;
}
