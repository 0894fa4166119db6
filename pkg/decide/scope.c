/* scope.c: the kind of an object's change (scope.h). */
#include "decide/scope.h"

#include <string.h>

#include "decide/cpfirst.h"
#include "decide/version.h"

/* Two versions on different minors, or either not known. */
static bool minor_between(const char *from, const char *to)
{
    long a, b;

    if (!from || !to || decide_version_minor_line(from, &a) != 0 ||
        decide_version_minor_line(to, &b) != 0)
        return true;
    return a != b;
}

bool decide_minor_upgrade(const char *from, const char *to)
{
    char ver[DECIDE_VERSIONLEN];

    return !to || !decide_release_version(to, ver, sizeof(ver)) || minor_between(from, ver);
}

/* A release change from the control plane's newest completed version. */
static bool hc_minor(const decide_hc_t *hc, const char *image)
{
    return image && decide_minor_upgrade(hc->cp_completed, image);
}

policy_change_t decide_hc_change(const decide_hc_t *hc, const char *const asked[2])
{
    bool minor;

    if (asked && (asked[0] || asked[1]))
        minor = hc_minor(hc, asked[0]) || hc_minor(hc, asked[1]);
    else if (hc->requested_release || hc->requested_cp_release)
        minor = hc_minor(hc, hc->requested_release) || hc_minor(hc, hc->requested_cp_release);
    else /* without the webhooks: a release written and not yet taken up */
        minor = hc->release_image && hc->desired_image &&
                strcmp(hc->release_image, hc->desired_image) != 0 &&
                hc_minor(hc, hc->release_image);
    return minor ? POLICY_CHANGE_CP_MINOR : POLICY_CHANGE_CP;
}

policy_change_t decide_np_change(const decide_np_t *np, const char *const asked[2])
{
    const char *to = asked && asked[0] ? asked[0] : decide_np_requested_image(np);
    /* The version its machines run; else the one its release names. */
    const char *from = np->status_version ? np->status_version : np->release_version;
    bool minor;

    if (to)
        minor = decide_minor_upgrade(from, to);
    else /* without the webhooks: a release written and not yet rolled out */
        minor = np->release_version && np->status_version &&
                strcmp(np->release_version, np->status_version) != 0 &&
                minor_between(np->status_version, np->release_version);
    return minor ? POLICY_CHANGE_NODES_MINOR : POLICY_CHANGE_NODES;
}

const stanza_resolution_t *decide_res_for(const stanza_resolution_t *res, policy_change_t c,
                                          stanza_resolution_t *tmp)
{
    if (!res || c < 0 || c >= POLICY_NCHANGES || !res->sched_for[c])
        return res;
    *tmp = *res;
    tmp->sched = res->sched_for[c];
    memset(tmp->sched_for, 0, sizeof(tmp->sched_for));
    return tmp;
}
