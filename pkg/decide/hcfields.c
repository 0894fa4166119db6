/* hcfields.c: the HostedCluster fields that roll every NodePool, pure. */
#include "decide/hcfields.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "decide/decide.h"

/* Appends name to the comma-separated list buf (cut when full). */
static void name_add(char *buf, size_t cap, const char *name)
{
    size_t n = strlen(buf);

    if (n + 1 < cap)
        snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
}

/* The first transition of s after now into *when, lowered. */
static int wake_min(sched_t *s, sched_time_t now, sched_time_t *when)
{
    sched_time_t t;
    int rc = sched_next_transition(s, now, &t);

    if (rc < 0)
        return rc;
    if (rc == 1 && t < *when)
        *when = t;
    return 0;
}

int decide_common_window(sched_t *hc, const decide_pool_sched_t *pools, size_t n,
                         bool override, sched_time_t now, decide_common_t *out)
{
    char fit[DECIDE_COMMON_NAMES] = "", ts[40];
    sched_interval_t iv;
    sched_t *acc, *t;
    int rc;

    memset(out, 0, sizeof(*out));
    out->computed = true;
    out->pools = n;
    out->wake = SCHED_POS_INF;
    if (override) {
        out->override = out->permitted = out->has_window = true;
        out->start = now;
        snprintf(out->message, sizeof(out->message),
                 "a Permissive override on the HostedCluster lets it change now, whatever "
                 "its NodePools' windows");
        return 0;
    }
    if ((acc = sched_ref(hc)) == NULL)
        return HCP_ENOMEM;
    if ((rc = sched_next(acc, now, &iv)) < 0)
        goto fail;
    if (rc == 0) {
        snprintf(out->message, sizeof(out->message),
                 "the HostedCluster has no window within 10 years");
        goto done; /* no pool can help: nothing is blocking but the cluster */
    }
    for (size_t i = 0; i < n; i++) {
        if ((t = sched_and(acc, pools[i].sched)) == NULL) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        if ((rc = sched_next(t, now, &iv)) < 0) {
            sched_unref(t);
            goto fail;
        }
        if (rc == 0) {
            sched_unref(t);
            name_add(out->blocking, sizeof(out->blocking), pools[i].name);
            continue;
        }
        sched_unref(acc);
        acc = t;
        name_add(fit, sizeof(fit), pools[i].name);
    }
    if (out->blocking[0]) {
        snprintf(out->message, sizeof(out->message),
                 "no instant within 10 years lets the HostedCluster and all its NodePools "
                 "change together: the windows of NodePool %s meet none of %s%s%s",
                 out->blocking, "the HostedCluster's", fit[0] ? " and NodePool " : "",
                 fit[0] ? fit : "");
        goto done;
    }
    if ((rc = sched_next(acc, now, &iv)) < 0)
        goto fail;
    out->has_window = rc == 1;
    out->start = iv.start;
    out->permitted = out->has_window && iv.start <= now;
    if (out->permitted) {
        out->wake = iv.end;
        snprintf(out->message, sizeof(out->message),
                 "the HostedCluster and its %zu NodePool(s) may all change now", n);
    } else {
        out->wake = iv.start;
        decide_format_time(iv.start, ts, sizeof(ts));
        snprintf(out->message, sizeof(out->message),
                 "held until %s, the first instant the HostedCluster and its %zu NodePool(s) "
                 "may all change",
                 ts, n);
    }
    sched_unref(acc);
    return 0;
done:
    /* No common window: the answer changes when any member's does. */
    if ((rc = wake_min(hc, now, &out->wake)) < 0)
        goto fail;
    for (size_t i = 0; i < n; i++)
        if ((rc = wake_min(pools[i].sched, now, &out->wake)) < 0)
            goto fail;
    sched_unref(acc);
    return 0;
fail:
    sched_unref(acc);
    return rc;
}

int decide_hc_fields_hold(const json_t *old_obj, const json_t *new_obj, bool restricted,
                          decide_np_hold_t *out)
{
    decide_hold_in_t in = {.restricted = restricted};
    return decide_spec_hold(old_obj, new_obj, &in, decide_hc_held_fields,
                            DECIDE_REQUESTED_HC_SPEC_ANNOTATION, out);
}

json_t *decide_hc_fields_patch(json_t *base, const decide_hc_t *hc, const char *resource_version)
{
    json_t *meta, *ann, *spec;
    const char *k;
    json_t *v;

    if (!decide_hc_fields_held(hc))
        return base;
    if (base == NULL &&
        (base = json_pack("{s:{s:s?}}", "metadata", "resourceVersion", resource_version)) == NULL)
        return NULL;
    meta = json_object_get(base, "metadata");
    if (!json_is_object(meta) && json_object_set_new(base, "metadata", json_object()))
        goto fail;
    meta = json_object_get(base, "metadata");
    if (!json_is_object(json_object_get(meta, "annotations")) &&
        json_object_set_new(meta, "annotations", json_object()))
        goto fail;
    ann = json_object_get(meta, "annotations");
    if (json_object_set_new(ann, DECIDE_REQUESTED_HC_SPEC_ANNOTATION, json_null()))
        goto fail;
    if (!json_is_object(json_object_get(base, "spec")) &&
        json_object_set_new(base, "spec", json_object()))
        goto fail;
    spec = json_object_get(base, "spec");
    json_object_foreach(hc->requested_fields, k, v) {
        if (json_object_set_new(spec, k, json_deep_copy(v)))
            goto fail;
    }
    return base;
fail:
    json_decref(base);
    return NULL;
}
