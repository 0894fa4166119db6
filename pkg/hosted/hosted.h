/* hosted: the HostedCluster's change-management conditions, projected into
 * the hosted cluster's ClusterVersion (DESIGN.md 3.7).
 *
 * A hosted-cluster admin cannot see HostedClusters, so the conditions
 * ChangesPaused and ChangesPending are also written into the ClusterVersion
 * `version` of the hosted cluster's own API server. Per HostedCluster this
 * module reads the Secret `service-network-admin-kubeconfig` (key
 * `kubeconfig`) in the control-plane namespace `<hc-ns>-<hc-name>` through the
 * management client (a single GET by name: no list or watch of Secrets), and
 * uses that admin kubeconfig only to set up an identity of its own in the
 * hosted cluster (identity.c: a ServiceAccount allowed to get ClusterVersion
 * `version` and patch its status, and a short-lived token of it); then it
 * drops the admin credential, builds a client carrying the token on the
 * shared kube_http, and checks ClusterVersion `version`: one GET, and a status patch (conditional
 * on the resourceVersion read, on the same connection) only when our two
 * conditions differ from what the controller wants. A check runs when the
 * client is built, when the controller's decision changes, on becoming the
 * writer, and every re-assertion period, which is how conditions
 * another writer dropped or changed come back. There is no standing watch:
 * 1,000 hosted clusters cost one request each per period and no open
 * connection between checks. Checks over all HostedClusters share one FIFO
 * queue with a bound on those in flight, so a cold start or a slow server
 * never opens more than max_in_flight connections at once; a failed check is
 * retried with backoff per HostedCluster. Steady state writes nothing.
 *
 * The Secret is read again periodically (jittered) and, with backoff, after
 * authentication, TLS or connection failures; a changed kubeconfig, a token
 * at 80% of its life and a token the hosted API server refuses (the set-up
 * deleted) set the identity up again, the token swapped in place while the
 * address and CA stay. Nothing that goes wrong with one HostedCluster (missing
 * or broken Secret, unreachable API server, no ClusterVersion) affects the
 * others: each has a state (hosted_status()) the controller surfaces as
 * a condition on the HostedCluster.
 *
 * The pure parts are public so they are tested without a cluster: Secret
 * decoding, kubeconfig vetting and server rewrite in hosted/kubeconfig.h,
 * the conditions patch (decide/conditions.h's merge) here.
 * Everything else runs on the caller's libev loop.
 */
#ifndef HCP_HOSTED_HOSTED_H
#define HCP_HOSTED_HOSTED_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hosted/kubeconfig.h"
#include "kube/client.h"
#include "kube/http.h"
#include "schedule/schedule.h"

#define HOSTED_CV_NAME "version"

/* The controller's own identity in each hosted cluster (identity.c): a
 * ServiceAccount bound to a ClusterRole of the same purpose that grants get
 * of ClusterVersion `version` and patch of its status, nothing else. */
#define HOSTED_SA_NAMESPACE "kube-system"
#define HOSTED_SA_NAME "hcp-controller"
#define HOSTED_ROLE_NAME "hcp-controller:clusterversion-conditions"

/* The per-HostedCluster states, as condition reasons (static strings). */
#define HOSTED_PROJECTED "Projected"
#define HOSTED_PENDING "ProjectionPending"
#define HOSTED_SECRET_NOT_FOUND "KubeconfigSecretNotFound"
#define HOSTED_SECRET_UNREADABLE "KubeconfigSecretUnreadable"
#define HOSTED_KUBECONFIG_INVALID "KubeconfigInvalid"
#define HOSTED_UNREACHABLE "HostedAPIUnreachable"
#define HOSTED_CV_NOT_FOUND "ClusterVersionNotFound"
#define HOSTED_UPDATE_FAILED "ClusterVersionUpdateFailed"
#define HOSTED_IDENTITY_FAILED "IdentitySetupFailed"

/* One of our conditions as the controller wants it. */
typedef struct hosted_cond {
    bool status;          /* "True" / "False" */
    const char *reason;   /* CamelCase; NULL is written as "" */
    const char *message;  /* NULL is written as "" */
} hosted_cond_t;

/* The two conditions, as in decide_decision_t (paused_* and pending_*). */
typedef struct hosted_conds {
    hosted_cond_t paused;   /* ChangesPaused */
    hosted_cond_t pending;  /* ChangesPending */
} hosted_conds_t;

/* Called when a HostedCluster's state (ok or reason) changed, so the
 * controller can reconcile it and surface the new state. The message alone
 * changing (a retry failing with different details) is not reported: it is
 * current whenever hosted_status() is read. The strings are
 * valid during the call only. From this callback any hosted_ function
 * may be called except hosted_free(). */
typedef void (*hosted_change_cb)(const char *ns, const char *name, void *ud);

typedef struct hosted_opts {
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
    double period;            /* seconds between re-assertion checks of one
                                 ClusterVersion (the first one after connecting
                                 at a random 50-100% of it); default 120 */
    int max_in_flight;        /* checks running at once over all HostedClusters;
                                 default 16 */
    double hosted_timeout;    /* seconds for one hosted request, so a blackholed
                                 server holds a slot that long at most;
                                 default 10 */
    double token_ttl;         /* seconds asked for each token of the controller's
                                 ServiceAccount (TokenRequest
                                 expirationSeconds; the API server's minimum
                                 is 600); default 3600 */
    double token_renew;       /* seconds after a token is issued that it is
                                 renewed; default (0) 80% of its lifetime */
    hosted_change_cb on_change; /* optional */
    void *ud;                 /* for on_change */
} hosted_opts_t;

/* One HostedCluster's projection state. */
typedef struct hosted_status {
    bool ok;                  /* our conditions are on the ClusterVersion as wanted */
    const char *reason;       /* one of HOSTED_* (static) */
    char message[512];
    uint64_t writes;          /* status patches sent for this HostedCluster */
} hosted_status_t;

/* Counters for metrics, all HostedClusters. */
typedef struct hosted_stats {
    uint64_t writes;          /* status patches sent to hosted API servers */
    uint64_t write_errors;    /* patches that failed (other than 409) */
    uint64_t conflicts;       /* patches refused with 409 (retried) */
    uint64_t reasserts;       /* writes restoring conditions another writer changed */
    uint64_t reads;           /* ClusterVersion GETs sent to hosted API servers */
    uint64_t read_errors;     /* of those, failed */
    uint64_t secret_reads;    /* Secret GETs answered */
    uint64_t clients;         /* hosted clients built (first kubeconfig and changes) */
    uint64_t tokens;          /* ServiceAccount tokens issued (set-ups that ended well) */
    uint64_t renewals;        /* of those, put in place of a token in use */
    uint64_t identity_requests; /* requests made with an admin kubeconfig (set-up) */
    uint64_t identity_errors; /* set-ups and removals that failed */
    uint64_t refused;         /* times a hosted API server refused the token in use
                                 (401/403): the identity is set up again */
    uint64_t retired;         /* identities removed from opted-out clusters */
} hosted_stats_t;

typedef struct hosted hosted_t;

/* Creates the module. loop and mgmt (the management cluster's client,
 * which must be allowed to get the Secret) are borrowed and must outlive it.
 * Hosted clients are built on a kube_http of the module's own on loop,
 * whose connection cache is bounded to max_in_flight connections
 * (kube_http_max_connections()), apart from the management API's. opts may
 * be NULL for defaults. Returns 0 with *out, or a negative HCP_E* code with
 * err filled. */
int hosted_new(struct ev_loop *loop, kube_client *mgmt, const hosted_opts_t *opts,
               hosted_t **out, char *err, size_t errlen);

/* Cancels every request and timer and frees everything; no callback
 * (on_change or otherwise) runs afterwards. NULL is ignored. Must not be
 * called from on_change. */
void hosted_free(hosted_t *p);

/* Makes the module the writer or not. Only the writer patches
 * ClusterVersions; a follower still reads Secrets and ClusterVersions, so
 * its states are current: becoming the writer queues a check of every
 * ClusterVersion, which brings them up to date. */
void hosted_set_leading(hosted_t *p, bool leading);

/* Declares the conditions HostedCluster ns/name wants in its hosted
 * ClusterVersion, as of `now` (controller time; it becomes a condition's
 * lastTransitionTime when its status changes). The first call for a
 * HostedCluster starts reading its Secret. Call it after every reconcile:
 * when nothing changed it does no I/O and no allocation. The strings in
 * conds are copied. Returns 0, or a negative HCP_E* code with err (may be
 * NULL) filled. */
int hosted_update(hosted_t *p, const char *ns, const char *name,
                  const hosted_conds_t *conds, sched_time_t now, char *err,
                  size_t errlen);

/* Stops projecting for a deleted HostedCluster: its client, check and timers
 * go away (released from the loop shortly after, so this is safe from any
 * callback, including on_change). The ClusterVersion is left as it is.
 * Unknown names are ignored. */
void hosted_forget(hosted_t *p, const char *ns, const char *name);

/* Stops projecting for a HostedCluster that opted out: as hosted_forget(),
 * and then, on the writer, our two conditions are taken out of its
 * ClusterVersion and the controller's ServiceAccount, ClusterRole and
 * binding are deleted from the hosted cluster, with a fresh read of the
 * Secret's admin kubeconfig (tried three times). Names this process never
 * projected for are ignored: nothing is read for a HostedCluster that never
 * opted in. */
void hosted_retire(hosted_t *p, const char *ns, const char *name);

/* Copies HostedCluster ns/name's state into *st. Returns 0, or HCP_EINVAL
 * when ns/name is not known (never updated, or forgotten). */
int hosted_status(const hosted_t *p, const char *ns, const char *name,
                  hosted_status_t *st);

/* The state HostedCluster ns/name would report once hosted_update() asked
 * it for want, read from what is known now, without I/O or any change: the
 * controller decides the HostedCluster's HostedClusterVersionProjected
 * condition from it before it hands the wanted conditions over. Returns 0,
 * or HCP_EINVAL when ns/name is not known. */
int hosted_preview(const hosted_t *p, const char *ns, const char *name,
                   const hosted_conds_t *want, hosted_status_t *st);

/* Counters (borrowed, live). */
const hosted_stats_t *hosted_stats(const hosted_t *p);

/* ---- the conditions patch (pure) ------------------------------------- */

/* True when `conditions` (a ClusterVersion's status.conditions; NULL or not
 * an array reads as empty) holds exactly one ChangesPaused and one
 * ChangesPending condition with the wanted status, reason and message. */
bool hosted_conds_match(const json_t *conditions, const hosted_conds_t *want);

/* The status merge patch that brings `conditions` to `want` into *out (new
 * reference), or *out = NULL when they already match. The patch carries the
 * whole list, because a merge patch replaces arrays: every other condition
 * unchanged and in order, then ours (decide_conditions_merge()). A
 * condition's lastTransitionTime is carried over while its status is
 * unchanged and is otherwise paused_since / pending_since. resource_version
 * (may be NULL) makes the write conditional. Returns 0 or HCP_ENOMEM. */
int hosted_patch(const json_t *conditions, const hosted_conds_t *want, sched_time_t paused_since,
                 sched_time_t pending_since, const char *resource_version, json_t **out);

/* ---- the identity (pure) ---------------------------------------------- */

enum { HOSTED_ID_SERVICEACCOUNT, HOSTED_ID_CLUSTERROLE, HOSTED_ID_BINDING };

/* The object the set-up applies (server-side apply) for one of HOSTED_ID_*:
 * new reference, NULL when out of memory. */
json_t *hosted_identity_object(int which);

/* Reads a TokenRequest's answer (untrusted): *token (new string, caller
 * frees) and *lifetime, its seconds left from now_unix. Returns 0, or
 * HCP_EPARSE with err naming the field (no token, a byte a header may not
 * carry, no or a past expirationTimestamp), or HCP_ENOMEM. */
int hosted_token_from_request(const json_t *answer, double now_unix, char **token,
                              double *lifetime, char *err, size_t errlen);

#endif
