/* version: OpenShift release versions as HyperShift compares them.
 *
 * A NodePool's spec.release.image is a pull spec and its status.version the
 * version HyperShift read from that release's payload; a HostedCluster's
 * status.version.history names both. HyperShift compares versions as
 * semantic versions (hypershift-operator supportedversion, blang/semver), so
 * 4.17.10 is newer than 4.17.9 and 4.17.0-rc.1 older than 4.17.0. Pure
 * functions, no allocation.
 */
#ifndef HCP_DECIDE_VERSION_H
#define HCP_DECIDE_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#define DECIDE_VERSIONLEN 64 /* longest version text kept */

/* The version a release pull spec names by its tag, as OpenShift tags its
 * payloads ("quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64" ->
 * "4.17.1", a "-multi"/"-aarch64"/... architecture suffix dropped). Copies it
 * into out (size n) and returns true; false, with out "", when the image is
 * pinned by digest only or its tag is not a semantic version: the caller
 * then has to learn the version elsewhere (a history entry that names the
 * image). */
bool decide_release_version(const char *image, char *out, size_t n);

/* Compares two semantic versions (MAJOR.MINOR.PATCH[-pre][+build], a leading
 * "v" allowed) by semver precedence: *cmp < 0 when a is older than b, 0 when
 * of equal precedence (build metadata ignored), > 0 when newer. Returns 0, or
 * -1 (and *cmp untouched) when either is not a semantic version. */
int decide_version_cmp(const char *a, const char *b, int *cmp);

/* The minor version of v on one line of minors, as HyperShift counts the
 * skew between a NodePool and its control plane (supportedversion
 * ValidateVersionSkew, normalizeToV4: OpenShift 5.0 is 4.23, so 5.y is
 * 23 + y): 4.y gives y. Returns 0 with *out set, or -1 when v is no
 * semantic version or its major is neither 4 nor 5. */
int decide_version_minor_line(const char *v, long *out);

#endif
