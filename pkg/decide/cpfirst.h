/* cpfirst: a NodePool never runs ahead of its control plane (DESIGN.md 3.6).
 *
 * HyperShift's versioning support (docs/content/reference/
 * versioning-support.md) says a NodePool's release may not be newer than
 * its HostedCluster's, not even by a patch (N-3 older is fine). HyperShift
 * itself refuses only a minor ahead (supportedversion.IsValidReleaseVersion);
 * a patch ahead (4.17.1 over 4.17.0) starts with no more than the
 * SupportedVersionSkew condition (nodepool/conditions.go). So a NodePool
 * change whose release is newer than every release its control plane has
 * completed (HostedCluster status.version.history, state Completed) is held,
 * window or not; when both are asked for together, the control plane goes
 * first and the pool follows as soon as the control plane has completed, if
 * its window is still open.
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_CPFIRST_H
#define HCP_DECIDE_CPFIRST_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "decide/decide.h"
#include "decide/slim.h"

#define DECIDE_CP_FIRST_REASON "WaitingForControlPlane"
#define DECIDE_CP_IMAGES_KEPT 8 /* completed images kept, newest first */

/* What a HostedCluster's status.version.history says the control plane has
 * completed: whether there is a history at all (*reported), the newest version of its Completed entries (an entry's
 * version, else the one its image names by tag) into newest (size n, "" when
 * none), and the images of the newest DECIDE_CP_IMAGES_KEPT of them, one per
 * line, as a new string into *images (NULL when none). Returns 0, or HCP_ENOMEM. */
int decide_cp_completed(const json_t *hc_obj, bool *reported, char *newest, size_t n,
                        char **images);

/*
 * Whether a NodePool of HostedCluster hc may run release image
 * (spec.release.image as asked): true when it is one the control plane has
 * completed or names by tag a version no newer than the newest it has
 * completed (hc->cp_completed, hc->cp_completed_images). Otherwise false,
 * with why (size n) the reason in words: the version is newer, the control
 * plane has completed no release yet, or the image names no version (pinned
 * by digest) and is not one the control plane has completed: when in doubt
 * it is held. A NULL image, a NULL hc and a HostedCluster whose
 * status.version.history HyperShift has not written at all
 * (hc->cp_reported false: nothing to compare with; HyperShift writes it
 * before anything else of the cluster runs) are fine.
 */
bool decide_cp_first_ok(const char *image, const decide_hc_t *hc, char *why, size_t n);

/* The release image a NodePool's held request asks for (borrowed), or NULL. */
const char *decide_np_requested_image(const decide_np_t *np);

/*
 * Applies the rule to a NodePool's decision d: when np's held request asks
 * for a release its control plane (hc; NULL when unknown: nothing is
 * decided here) has not completed, the request stays held even while the
 * window is open (d becomes restricted, reason DECIDE_CP_FIRST_REASON, on
 * both conditions; the MachineDeployment/MachineSet stays as the health
 * gate leaves it: unpaused with the webhooks, so it keeps scaling), and the
 * ChangesPending message says what it waits for either way. Sets
 * d->cp_first and d->cp_why. capi: the pool's MachineDeployment/MachineSet
 * or NULL; held_at_admission as for decide_np().
 */
void decide_cp_first_apply(decide_decision_t *d, const decide_np_t *np, const decide_hc_t *hc,
                           const decide_capi_t *capi, bool held_at_admission);

#endif
