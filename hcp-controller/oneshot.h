/* oneshot: what `hcp-controller explain` reads, as a one-shot view for the
 * plan.
 *
 * explain GETs one HostedCluster or NodePool, a NodePool's HostedCluster or
 * a HostedCluster's NodePools, and their policies, keeps each as the slim
 * view the controller's watch cache keeps (decide_view_extract()), and
 * hands them to decide_plan() through a decide_view_t, the same plan that
 * reconcile, the scrape and the admission webhooks use. No CAPI objects
 * (explain says what the schedule permits, not what the controller writes)
 * and no guard rails (the controller's file).
 */
#ifndef HCP_ONESHOT_H
#define HCP_ONESHOT_H

#include <ev.h>
#include <jansson.h>

#include "decide/plan.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "policy/policy.h"
#include "policy/stanza.h"
#include "recorded.h"

#define ONESHOT_PROG "hcp-controller explain"
#define ONESHOT_EXIT_ACCESS 1  /* no access, or the API server unreachable */
#define ONESHOT_EXIT_MISSING 2 /* the object, its HostedCluster or its policy is missing */

/* The client explain reads with. */
typedef struct session {
    struct ev_loop *loop;
    kube_config cfg;
    kube_http http;
    kube_client client;
} session_t;

/* One HostedCluster or NodePool as read. */
typedef struct subject {
    const char *kind;         /* "HostedCluster" or "NodePool" */
    decide_kind_t dk;
    char ns[254], name[254];
    json_t *obj;              /* owned */
    void *slim;               /* its slim view as the watch cache keeps it, owned */
    const decide_managed_t *m; /* its shared part (in slim) */
    const stanza_t *st;       /* its stanza (in m) */
    policy_t *policy;         /* owned; NULL when none is named or found */
    int policy_missing;       /* the stanza names a policy that does not exist */
    const stanza_resolution_t *res; /* its timeline, from the plan */
    policy_change_t change;   /* the kind of change planned for (decide/scope.h) */
    bool scoped;              /* its policy's exclusions have scopes */
    recorded_t rec;           /* the controller's record of it */
} subject_t;

/* What explain read, as decide_plan() reads the cache: the object, a
 * NodePool's HostedCluster, a HostedCluster's NodePools, and their policies.
 * Of CAPI it has only a NodePool's MachineDeployment or MachineSet, for a
 * drift held there (explain says what the schedule permits and what is
 * held, not what the controller writes), and no guard rails (the
 * controller's file). */
typedef struct oneshot {
    session_t *s;
    sched_time_t at;
    subject_t *self;          /* the object explained */
    subject_t *hc;            /* a NodePool's HostedCluster, else NULL */
    subject_t *pools;         /* a HostedCluster's NodePools (npools) */
    size_t npools;
    int pools_known;          /* they could be listed */
    void *capi;               /* a NodePool's MachineDeployment (Replace) or
                                 MachineSet (InPlace) slim view, owned; NULL
                                 when it could not be read */
    decide_kind_t capi_kind;
    char capi_ns[300], capi_name[254];
} oneshot_t;

/* Reads NodePool np's MachineDeployment or MachineSet, best effort (a drift
 * held there, decide/drift.h, is a held change; without the object, or the
 * right to read it, nothing is said of it). */
void oneshot_read_capi(oneshot_t *v, const subject_t *np);

/* Opens the client from the kubeconfig (NULL: the default) and context.
 * Returns -1 to go on, or an exit status after saying why. */
int oneshot_open(session_t *s, const char *kubeconfig, const char *context);
void oneshot_close(session_t *s);

/* GETs path. Returns the object (new), or NULL with *err filled. */
json_t *oneshot_get(session_t *s, const char *path, kube_error *err);
/* The same for recorded_read() (s: the session). */
json_t *oneshot_get_cb(void *s, const char *path, kube_error *err);
/* The exit status of a failed GET of what, after saying why. */
int oneshot_get_failed(const char *what, const kube_error *e);

/* Reads x (x->ns, x->name; GETs it unless obj, a listed item, is given)
 * and its policy into v's session. Returns -1 to go on, or an exit status. */
int oneshot_read_subject(oneshot_t *v, subject_t *x, int nodepool, const json_t *obj);
/* Lists HostedCluster hc's NodePools into v, each with its policy; a pool
 * whose policy cannot be read is left out. */
void oneshot_read_pools(oneshot_t *v, const subject_t *hc);
void oneshot_subject_free(subject_t *x);
/* Frees the NodePools read (not self or hc). */
void oneshot_free(oneshot_t *v);

/* The view over what v read, for decide_plan(); a HostedCluster's view
 * also gives its NodePools and asks for the common window. */
decide_view_t oneshot_view(oneshot_t *v);

/* The string at obj.a[.b[.c]], or NULL. */
const char *oneshot_str(const json_t *obj, const char *a, const char *b, const char *c);

#endif
