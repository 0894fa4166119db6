/* kubeconfig: a hosted cluster's kubeconfig, taken from a Secret and vetted.
 *
 * The Secret `service-network-admin-kubeconfig` in a control-plane namespace
 * is written by whoever can write Secrets on the management cluster, so its
 * bytes are untrusted: this module decodes them with limits, refuses
 * kubeconfigs that would make the controller read its own files, and
 * optionally points the server at the in-cluster service address. Pure
 * functions: no I/O beyond the caller's buffers.
 */
#ifndef HCP_HOSTED_KUBECONFIG_H
#define HCP_HOSTED_KUBECONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "kube/config.h"

#define HOSTED_SECRET "service-network-admin-kubeconfig"
#define HOSTED_SECRET_KEY "kubeconfig"
/* Largest decoded kubeconfig accepted (a Secret holds at most 1 MiB). */
#define HOSTED_KUBECONFIG_MAX (1024 * 1024)

/* Extracts and decodes data.kubeconfig of a Secret (the whole API object,
 * untrusted). On success *out is a new NUL-terminated buffer (caller frees)
 * of *outlen bytes. Returns 0, or HCP_ECONFIG with err saying what is wrong
 * (no data, no key, not a string, not base64, empty, too large), or
 * HCP_ENOMEM. */
int hosted_kubeconfig_from_secret(const json_t *secret, char **out, size_t *outlen, char *err,
                                  size_t errlen);

/* Rewrites an API server URL ("https://host[:port][/path]") to
 * "https://kube-apiserver.<hcpns>.svc:<port>[/path]", keeping the scheme,
 * the port (443 / 80 when absent) and any path. hcpns must be a valid
 * namespace name. Returns 0, or HCP_EINVAL with err filled. */
int hosted_kubeconfig_rewrite_server(const char *server, const char *hcpns, char *out,
                                     size_t outlen,
                                     char *err, size_t errlen);

/* Loads a kubeconfig taken from a Secret into cfg (which the caller frees
 * with kube_config_free() on success). Because its content comes from the
 * management cluster, it may only carry inline credentials: references to
 * local files (certificate-authority, client-certificate, client-key,
 * tokenFile) are refused, so a crafted Secret cannot make the controller
 * read its own files or send its service-account token anywhere. With
 * rewrite, the server is rewritten as hosted_kubeconfig_rewrite_server() does.
 * Returns 0, or a negative HCP_E* code with err filled and cfg empty. */
int hosted_kubeconfig_load(const char *yaml, size_t len, const char *hcpns, bool rewrite,
                           kube_config *cfg, char *err, size_t errlen);

/* hosted_kubeconfig_from_secret() then hosted_kubeconfig_load(): the
 * Secret's kubeconfig into cfg, its decoded text zeroed before it is freed
 * (it is an admin credential). Returns 0, or a negative HCP_E* code with
 * err filled and cfg empty. */
int hosted_kubeconfig_from_secret_load(const json_t *secret, const char *hcpns, bool rewrite,
                                       kube_config *cfg, char *err, size_t errlen);

#endif
