/* cpfirst: a NodePool never runs ahead of its control plane (see cpfirst.h). */
#include "decide/cpfirst.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/version.h"

int decide_cp_completed(const json_t *hc_obj, bool *reported, char *newest, size_t n,
                        char **images)
{
    json_t *hist = hcp_json_path(hc_obj, "status.version.history");
    json_t *e;
    size_t i, len = 0, kept = 0;
    char *list = NULL;

    if (n)
        newest[0] = '\0';
    *images = NULL;
    *reported = json_array_size(hist) > 0;
    json_array_foreach(hist, i, e) {
        const char *state = json_string_value(json_object_get(e, "state"));
        const char *image = json_string_value(json_object_get(e, "image"));
        const char *ver = json_string_value(json_object_get(e, "version"));
        char tagged[DECIDE_VERSIONLEN];
        int cmp;
        if (!state || strcmp(state, "Completed") != 0)
            continue;
        /* HyperShift writes the version of a Completed entry
         * (hostedcluster_controller.go, computeClusterVersionStatus:
         * History[0].Version = hcp.Status.Version); an entry without one
         * is read by its image's tag. */
        if ((!ver || !*ver) && decide_release_version(image, tagged, sizeof(tagged)))
            ver = tagged;
        /* Only versions count here; an entry without one still counts by
         * its image below. */
        if (ver && strlen(ver) < n && decide_version_cmp(ver, ver, &cmp) == 0 &&
            (!newest[0] || (decide_version_cmp(ver, newest, &cmp) == 0 && cmp > 0)))
            snprintf(newest, n, "%s", ver);
        /* The images of the newest few only: enough for N-3, and bounded
         * for a long history (HyperShift keeps up to 100 entries). */
        if (image && *image && !strchr(image, '\n') && kept++ < DECIDE_CP_IMAGES_KEPT) {
            size_t il = strlen(image);
            char *grown = realloc(list, len + il + 2);
            if (!grown) {
                free(list);
                return HCP_ENOMEM;
            }
            list = grown;
            memcpy(list + len, image, il);
            len += il;
            list[len++] = '\n';
            list[len] = '\0';
        }
    }
    *images = list;
    return 0;
}

static bool listed(const char *list, const char *image)
{
    size_t il = strlen(image);
    for (const char *p = list; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t l = nl ? (size_t)(nl - p) : strlen(p);
        if (l == il && memcmp(p, image, il) == 0)
            return true;
        p = nl ? nl + 1 : p + l;
    }
    return false;
}

bool decide_cp_first_ok(const char *image, const decide_hc_t *hc, char *why, size_t n)
{
    char ver[DECIDE_VERSIONLEN];
    int cmp;

    if (n)
        why[0] = '\0';
    if (!image || !*image || !hc || !hc->cp_reported || listed(hc->cp_completed_images, image))
        return true;
    const char *cp_newest = hc->cp_completed;
    if (!decide_release_version(image, ver, sizeof(ver))) {
        snprintf(why, n,
                 "release %s names no version by its tag and is not one the control plane has "
                 "completed",
                 image);
        return false;
    }
    if (!cp_newest || !*cp_newest) {
        snprintf(why, n, "release %s: the control plane has not completed any release yet", ver);
        return false;
    }
    if (decide_version_cmp(ver, cp_newest, &cmp) != 0) {
        snprintf(why, n, "release %s cannot be compared with %s, the control plane's", ver,
                 cp_newest);
        return false;
    }
    if (cmp <= 0)
        return true;
    snprintf(why, n, "release %s is newer than %s, the newest release the control plane has completed",
             ver, cp_newest);
    return false;
}

const char *decide_np_requested_image(const decide_np_t *np)
{
    return np->requested ? hcp_json_str(np->requested, "release.image") : NULL;
}

void decide_cp_first_apply(decide_decision_t *d, const decide_np_t *np, const decide_hc_t *hc,
                           const decide_capi_t *capi, bool held_at_admission)
{
    char until[32], tail[48] = "";

    d->cp_first = false;
    d->cp_why[0] = '\0';
    if (decide_cp_first_ok(decide_np_requested_image(np), hc, d->cp_why, sizeof(d->cp_why)))
        return;
    d->cp_first = true;
    if (!d->restricted) {
        /* The window is open: the request stays held, as the health gate
         * keeps one (gate.c), and goes through at the first decision after
         * the control plane has completed the release. */
        d->restricted = true;
        d->restricted_reason = DECIDE_CP_FIRST_REASON;
        d->pause_wanted = capi && !held_at_admission;
        d->hold_open = false;
        d->action = decide_pause_action(d->pause_wanted, capi);
        d->spec_pause = capi && capi->spec_marker ? -1 : 0;
        d->paused_status = true;
        d->paused_reason = DECIDE_CP_FIRST_REASON;
        if (d->state.current.end != SCHED_POS_INF) {
            decide_format_time(d->state.current.end, until, sizeof(until));
            snprintf(tail, sizeof(tail), " (until %s)", until);
        }
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "Changes are held until the control plane has completed the release the NodePool "
                 "asks for: %s. They start as soon as it has, while the window is open%s.",
                 d->cp_why, tail);
    }
    d->pending = true;
    d->pending_metric = 2;
    d->pending_status = true;
    d->pending_reason = DECIDE_CP_FIRST_REASON;
    snprintf(d->pending_message, sizeof(d->pending_message),
             "The held change (%s) waits for the control plane: %s; a NodePool never runs a "
             "release newer than its HostedCluster has completed.",
             d->held[0] ? d->held : "a new release", d->cp_why);
}
