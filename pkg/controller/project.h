/* project: the HostedCluster's change-management conditions, projected into
 * the hosted cluster's ClusterVersion (DESIGN.md 3.7).
 *
 * A hosted-cluster admin cannot see HostedClusters, so the conditions
 * ChangesPaused and ChangesPending are also written into the ClusterVersion
 * `version` of the hosted cluster's own API server. Per HostedCluster this
 * module reads the Secret `service-network-admin-kubeconfig` (key
 * `kubeconfig`) in the control-plane namespace `<hc-ns>-<hc-name>` through the
 * management client (a single GET by name: no list or watch of Secrets),
 * builds a client for the hosted API server on the shared kube_http, watches
 * ClusterVersion `version` into a slim cache, and patches its
 * status.conditions whenever our two conditions differ from what the
 * controller wants: after the controller's decision changes, and when another
 * writer drops or changes them. Steady state writes nothing.
 *
 * The Secret is read again periodically (jittered) and, with backoff, after
 * authentication, TLS or connection failures; a changed kubeconfig replaces
 * the hosted client. Nothing that goes wrong with one HostedCluster (missing
 * or broken Secret, unreachable API server, no ClusterVersion) affects the
 * others: each has a state (ctl_project_status()) the controller surfaces as
 * a condition on the HostedCluster.
 *
 * The pure parts (Secret decoding, kubeconfig vetting and server rewrite,
 * the conditions patch) are public so they are tested without a cluster.
 * Everything else runs on the caller's libev loop.
 */
#ifndef HCP_CONTROLLER_PROJECT_H
#define HCP_CONTROLLER_PROJECT_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "schedule/schedule.h"

#define CTL_PROJECT_SECRET "service-network-admin-kubeconfig"
#define CTL_PROJECT_SECRET_KEY "kubeconfig"
#define CTL_PROJECT_CV_NAME "version"
/* Largest decoded kubeconfig accepted (a Secret holds at most 1 MiB). */
#define CTL_PROJECT_KUBECONFIG_MAX (1024 * 1024)

/* The per-HostedCluster states, as condition reasons (static strings). */
#define CTL_PROJECT_PROJECTED "Projected"
#define CTL_PROJECT_PENDING "ProjectionPending"
#define CTL_PROJECT_SECRET_NOT_FOUND "KubeconfigSecretNotFound"
#define CTL_PROJECT_SECRET_UNREADABLE "KubeconfigSecretUnreadable"
#define CTL_PROJECT_KUBECONFIG_INVALID "KubeconfigInvalid"
#define CTL_PROJECT_UNREACHABLE "HostedAPIUnreachable"
#define CTL_PROJECT_CV_NOT_FOUND "ClusterVersionNotFound"
#define CTL_PROJECT_UPDATE_FAILED "ClusterVersionUpdateFailed"

/* One of our conditions as the controller wants it. */
typedef struct ctl_project_cond {
    bool status;          /* "True" / "False" */
    const char *reason;   /* CamelCase; NULL is written as "" */
    const char *message;  /* NULL is written as "" */
} ctl_project_cond_t;

/* The two conditions, as in ctl_decision_t (paused_* and pending_*). */
typedef struct ctl_project_conds {
    ctl_project_cond_t paused;   /* ChangesPaused */
    ctl_project_cond_t pending;  /* ChangesPending */
} ctl_project_conds_t;

/* Called when a HostedCluster's state (ok or reason) changed, so the
 * controller can reconcile it and surface the new state. The message alone
 * changing (a retry failing with different details) is not reported: it is
 * current whenever ctl_project_status() is read. The strings are
 * valid during the call only. From this callback any ctl_project_ function
 * may be called except ctl_project_free(). */
typedef void (*ctl_project_change_cb)(const char *ns, const char *name, void *ud);

typedef struct ctl_project_opts {
    /* Rewrite the kubeconfig's server to
     * https://kube-apiserver.<hc-ns>-<hc-name>.svc:<port> (the port of the
     * original server): right when the controller runs inside the
     * management cluster, where the Secret's own address (the service's
     * short name) only resolves in the control-plane namespace. false uses
     * the address as written. */
    bool rewrite_server;
    bool leading;             /* start as the writer */
    double recheck;           /* seconds between Secret re-reads, jittered
                                 +-20%; default 300 */
    double backoff_initial;   /* first retry delay after a failure; default 1 */
    double backoff_max;       /* retry delay cap; default 120 */
    double absent_retry;      /* first retry delay while the Secret is missing or
                                 holds no usable kubeconfig: states that last
                                 until someone writes the Secret (a cluster
                                 being created), not failures that pass, so
                                 1,000 such clusters must not poll the API
                                 server every second; doubles up to
                                 backoff_max; default 15 */
    double hosted_qps;        /* per hosted API server; default 5 */
    int hosted_burst;         /* default 10 */
    ctl_project_change_cb on_change; /* optional */
    void *ud;                 /* for on_change */
} ctl_project_opts_t;

/* One HostedCluster's projection state. */
typedef struct ctl_project_status {
    bool ok;                  /* our conditions are on the ClusterVersion as wanted */
    const char *reason;       /* one of CTL_PROJECT_* (static) */
    char message[512];
    uint64_t writes;          /* status patches sent for this HostedCluster */
} ctl_project_status_t;

/* Counters for metrics, all HostedClusters. */
typedef struct ctl_project_stats {
    uint64_t writes;          /* status patches sent to hosted API servers */
    uint64_t write_errors;    /* patches that failed (other than 409) */
    uint64_t conflicts;       /* patches refused with 409 (retried) */
    uint64_t reasserts;       /* writes restoring conditions another writer changed */
    uint64_t secret_reads;    /* Secret GETs answered */
    uint64_t clients;         /* hosted clients built (first kubeconfig and changes) */
} ctl_project_stats_t;

typedef struct ctl_project ctl_project_t;

/* Creates the module. loop, http and mgmt (the management cluster's client,
 * which must be allowed to get the Secret) are borrowed and must outlive it;
 * hosted clients are built on http too. opts may be NULL for defaults.
 * Returns 0 with *out, or a negative KUBE_E* code with err filled. */
int ctl_project_new(struct ev_loop *loop, kube_http *http, kube_client *mgmt,
                    const ctl_project_opts_t *opts, ctl_project_t **out, char *err,
                    size_t errlen);

/* Cancels every request, watch and timer and frees everything; no callback
 * (on_change or otherwise) runs afterwards. NULL is ignored. Must not be
 * called from on_change. */
void ctl_project_free(ctl_project_t *p);

/* Makes the module the writer or not. Only the writer patches
 * ClusterVersions; a follower still reads Secrets and watches, so it takes
 * over at once: becoming the writer brings every ClusterVersion up to date. */
void ctl_project_set_leading(ctl_project_t *p, bool leading);

/* Declares the conditions HostedCluster ns/name wants in its hosted
 * ClusterVersion, as of `now` (controller time; it becomes a condition's
 * lastTransitionTime when its status changes). The first call for a
 * HostedCluster starts reading its Secret. Call it after every reconcile:
 * when nothing changed it does no I/O and no allocation. The strings in
 * conds are copied. Returns 0, or a negative KUBE_E* code with err (may be
 * NULL) filled. */
int ctl_project_update(ctl_project_t *p, const char *ns, const char *name,
                       const ctl_project_conds_t *conds, sched_time_t now, char *err,
                       size_t errlen);

/* Stops projecting for a deleted HostedCluster: its watch, client and timers
 * go away (released from the loop shortly after, so this is safe from any
 * callback, including on_change). The ClusterVersion is left as it is.
 * Unknown names are ignored. */
void ctl_project_forget(ctl_project_t *p, const char *ns, const char *name);

/* Copies HostedCluster ns/name's state into *st. Returns 0, or HCP_EINVAL
 * when ns/name is not known (never updated, or forgotten). */
int ctl_project_status(const ctl_project_t *p, const char *ns, const char *name,
                       ctl_project_status_t *st);

/* Counters (borrowed, live). */
const ctl_project_stats_t *ctl_project_stats(const ctl_project_t *p);

/* ---- pure parts ------------------------------------------------------- */

/* Extracts and decodes data.kubeconfig of a Secret (the whole API object,
 * untrusted). On success *out is a new NUL-terminated buffer (caller frees)
 * of *outlen bytes. Returns 0, or HCP_ECONFIG with err saying what is wrong
 * (no data, no key, not a string, not base64, empty, too large), or
 * HCP_ENOMEM. */
int ctl_project_secret_kubeconfig(const json_t *secret, char **out, size_t *outlen, char *err,
                                  size_t errlen);

/* Rewrites an API server URL ("https://host[:port][/path]") to
 * "https://kube-apiserver.<hcpns>.svc:<port>[/path]", keeping the scheme,
 * the port (443 / 80 when absent) and any path. hcpns must be a valid
 * namespace name. Returns 0, or HCP_EINVAL with err filled. */
int ctl_project_rewrite_server(const char *server, const char *hcpns, char *out, size_t outlen,
                               char *err, size_t errlen);

/* Loads a kubeconfig taken from a Secret into cfg (which the caller frees
 * with kube_config_free() on success). Because its content comes from the
 * management cluster, it may only carry inline credentials: references to
 * local files (certificate-authority, client-certificate, client-key,
 * tokenFile) are refused, so a crafted Secret cannot make the controller
 * read its own files or send its service-account token anywhere. With
 * rewrite, the server is rewritten as ctl_project_rewrite_server() does.
 * Returns 0, or a negative KUBE_E* code with err filled and cfg empty. */
int ctl_project_load_kubeconfig(const char *yaml, size_t len, const char *hcpns, bool rewrite,
                                kube_config *cfg, char *err, size_t errlen);

/* True when `conditions` (a ClusterVersion's status.conditions; NULL or not
 * an array reads as empty) holds exactly one ChangesPaused and one
 * ChangesPending condition with the wanted status, reason and message. */
bool ctl_project_conds_match(const json_t *conditions, const ctl_project_conds_t *want);

/* The status merge patch that brings `conditions` to `want`, or NULL when
 * they already match (*err = 0) or memory ran out (*err = 1). The patch
 * carries the whole list, because a merge patch replaces arrays: every
 * other condition unchanged and in order, then ours. A condition's
 * lastTransitionTime is carried over while its status is unchanged and is
 * otherwise paused_since / pending_since. resource_version (may be NULL)
 * makes the write conditional. */
json_t *ctl_project_patch(const json_t *conditions, const ctl_project_conds_t *want,
                          sched_time_t paused_since, sched_time_t pending_since,
                          const char *resource_version, int *err);

#endif
