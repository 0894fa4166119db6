/* skew: a control-plane release that would leave a NodePool too far behind
 * (guard rails' maxNodePoolSkew).
 *
 * HyperShift supports a NodePool up to three minor versions behind its
 * control plane (supportedversion.ValidateVersionSkew, reported in the
 * NodePool's SupportedVersionSkew condition; OpenShift 5.0 counts as 4.23),
 * and a hold keeps pools behind. So a HostedCluster write that asks for a
 * control-plane release more minors ahead of one of its NodePools than the
 * bound allows, and further ahead than the release it runs, is refused in
 * that same write, naming the pools: upgrade them first. A pool's version
 * is what HyperShift reports it runs (status.version), else the one its
 * spec.release.image names by tag; a pool whose version is not known, or a
 * release whose tag names no version, is not judged (the caller says so).
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_SKEW_H
#define HCP_DECIDE_SKEW_H

#include <stdbool.h>
#include <stddef.h>

#include "decide/slim.h"

#define DECIDE_SKEW_DEFAULT 3 /* HyperShift's supported lag (n-3) */
#define DECIDE_SKEW_NAMED 8   /* pools named in a refusal, at most */

/* One NodePool of the HostedCluster. */
typedef struct decide_skew_pool {
    const char *name;
    const decide_np_t *np;
} decide_skew_pool_t;

typedef struct decide_skew {
    bool judged;          /* the release's version is known */
    char target[64];      /* its version */
    size_t over;          /* pools left more than max minors behind */
    size_t unknown;       /* pools whose version is not known */
} decide_skew_t;

/* The version a NodePool runs: status.version, else the version its
 * spec.release.image names by tag; NULL when neither is known. */
const char *decide_np_running_version(const decide_np_t *np);

/* Judges the release image `want` for a control plane that runs `running`
 * (an image, or NULL) against the n pools, at most max minors behind.
 * Fills *out; when some pool is over the bound, writes the refusal in
 * words into msg (field: "spec.release.image" or
 * "spec.controlPlaneRelease.image"). */
void decide_skew_check(const char *field, const char *want, const char *running,
                       const decide_skew_pool_t *pools, size_t n, int max, decide_skew_t *out,
                       char *msg, size_t len);

#endif
