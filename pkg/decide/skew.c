/* skew.c: NodePools too far behind a requested control-plane release. See
 * skew.h. */
#include "decide/skew.h"

#include <stdio.h>
#include <string.h>

#include "decide/version.h"

const char *decide_np_running_version(const decide_np_t *np)
{
    if (np->status_version && *np->status_version)
        return np->status_version;
    return np->release_version && *np->release_version ? np->release_version : NULL;
}

void decide_skew_check(const char *field, const char *want, const char *running,
                       const decide_skew_pool_t *pools, size_t n, int max, decide_skew_t *out,
                       char *msg, size_t len)
{
    char now[64], list[1024] = "", one[400];
    long t, r, base = -1;
    size_t used = 0, named = 0;

    memset(out, 0, sizeof(*out));
    if (len)
        msg[0] = '\0';
    if (!want || !decide_release_version(want, out->target, sizeof(out->target)) ||
        decide_version_minor_line(out->target, &t) != 0)
        return;
    out->judged = true;
    /* the release the control plane runs: a pool already that far behind
     * it is not left further behind by a z-stream */
    if (running && decide_release_version(running, now, sizeof(now)) &&
        decide_version_minor_line(now, &r) == 0)
        base = r;
    for (size_t i = 0; i < n; i++) {
        const char *v = decide_np_running_version(pools[i].np);
        long p;
        if (!v || decide_version_minor_line(v, &p) != 0) {
            out->unknown++;
            continue;
        }
        if (t - p <= max || (base >= 0 && t <= base))
            continue;
        out->over++;
        /* named while they fit; the rest are "and more" */
        int k = snprintf(one, sizeof(one), "%s%s runs %s (%ld minor version%s behind)",
                         named ? ", " : "", pools[i].name, v, t - p, t - p == 1 ? "" : "s");
        if (named < DECIDE_SKEW_NAMED && k > 0 && (size_t)k < sizeof(one) &&
            used + (size_t)k < sizeof(list)) {
            memcpy(list + used, one, (size_t)k + 1);
            used += (size_t)k;
            named++;
        }
    }
    if (out->over == 0 || len == 0)
        return;
    snprintf(msg, len,
             "%s: release %s would leave NodePools more minor versions behind their control "
             "plane than the guard rails' maxNodePoolSkew (%d) allows: %s%s. Upgrade those "
             "NodePools first (a held NodePool release goes at its window), or ask for a release "
             "at most %d minor version%s ahead of them.",
             field, out->target, max, list, out->over > named ? (named ? ", and more" : "some")
                                                              : "",
             max, max == 1 ? "" : "s");
}
