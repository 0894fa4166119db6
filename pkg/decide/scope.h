/* scope: which kind of change an object's change is, for the scoped
 * exclusions of its policies (DESIGN.md 3.16, exclude[].scope).
 *
 * A HostedCluster's change is a control-plane change, a NodePool's a node
 * change; either is a minor upgrade when the release it asks for has
 * another minor version than the one it runs (4.17 -> 4.18), or when
 * either cannot be told (an image pinned by digest, nothing completed yet):
 * when in doubt the narrower timeline holds it. A change that asks for no
 * release (configuration, a drift HyperShift made by itself, a scale) is
 * not a minor upgrade. An object that holds no change is planned as the
 * wider kind (z-stream or configuration), so that its status tells what a
 * routine change would meet.
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_SCOPE_H
#define HCP_DECIDE_SCOPE_H

#include <stdbool.h>

#include "decide/slim.h"
#include "policy/policy.h"
#include "policy/stanza.h"

/* True when a release from version `from` (a version, "" or NULL when not
 * known) to release image `to` changes the minor version, or either cannot
 * be told. */
bool decide_minor_upgrade(const char *from, const char *to);

/* The kind of a HostedCluster's change: the release images a write asks
 * for (admission: spec.release.image and spec.controlPlaneRelease.image,
 * NULL where unchanged; both NULL: the change held or pending on hc). */
policy_change_t decide_hc_change(const decide_hc_t *hc, const char *const asked[2]);

/* The same for a NodePool (asked[0]: its spec.release.image). */
policy_change_t decide_np_change(const decide_np_t *np, const char *const asked[2]);

/* res narrowed to the timeline of kind c: res itself when that is its whole
 * timeline, else *tmp, a copy that borrows res's references (never freed). */
const stanza_resolution_t *decide_res_for(const stanza_resolution_t *res, policy_change_t c,
                                          stanza_resolution_t *tmp);

#endif
