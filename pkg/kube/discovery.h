/*
 * kube/discovery.h - choosing which served version of an API group to use.
 *
 * The controller supports several versions of some groups (CAPI serves
 * v1beta2 on new clusters, only v1beta1 on older ones). Discovery asks the
 * server which versions of a group it serves (GET /apis/<group>) and picks
 * the first of the caller's preferences that is served, else the server's
 * preferredVersion.
 */
#ifndef KUBE_DISCOVERY_H
#define KUBE_DISCOVERY_H

#include <jansson.h>
#include <stddef.h>

#include "kube/client.h"

/*
 * Pure part: picks from an APIGroup document (`group`, as returned by GET
 * /apis/<name>). prefer is a NULL-terminated list, most wanted first, or
 * NULL to take the server's preferredVersion. Writes the version ("v1beta2")
 * into out. Returns 0, HCP_EPARSE when the document is not an APIGroup, or
 * HCP_EINVAL when nothing acceptable is served (err says what is served).
 */
int kube_discovery_pick(const json_t *group, const char *const *prefer, char *out, size_t outlen,
                        kube_error *err);

/*
 * Called with the chosen version (NULL on failure, then err says why: a
 * 404 means the group is not served at all).
 */
typedef void (*kube_discovery_cb)(kube_client *c, const char *group, const char *version,
                                  const kube_error *err, void *ud);

/*
 * Asks the server about `group` and reports the choice through cb. prefer
 * must stay valid until cb runs. Returns 0 or negative with err filled.
 */
int kube_discover_version(kube_client *c, const char *group, const char *const *prefer,
                          kube_discovery_cb cb, void *ud, kube_error *err);

#endif
