/* internal: what the files of pkg/hosted share (not part of its API).
 *
 *   hosted.c   entries, their state (evaluate), the public functions
 *   link.c     the hosted API server: client, the shared queue of reads, patcher
 *   secret.c   reading the kubeconfig Secret, with periodic re-reads and backoff
 *   identity.c the controller's ServiceAccount in the hosted cluster and its
 *              tokens, set up with the Secret's admin kubeconfig; its removal
 */
#ifndef HCP_HOSTED_INTERNAL_H
#define HCP_HOSTED_INTERNAL_H

#include "base/list.h"
#include "hosted/hosted.h"
#include "kube/objmap.h"
#include "kube/ratelimit.h"

#define CV_COLLECTION "/apis/config.openshift.io/v1/clusterversions"
#define CV_PATH CV_COLLECTION "/" HOSTED_CV_NAME
#define COND_PAUSED "ChangesPaused"
#define COND_PENDING "ChangesPending"
#define PATH_LEN 512
#define NS_LEN 64            /* a namespace name is at most 63 bytes */
#define CONFLICTS_MAX 3      /* 409s in a row re-read at once; then the backoff paces them */

/* A wanted condition, owned copy. */
typedef struct want_cond {
    bool status;
    char *reason, *message;
    sched_time_t since;   /* lastTransitionTime when the status changes */
} want_cond_t;

/* The Secret's admin kubeconfig and its client, allocated for one set-up
 * and freed (keys and tokens zeroed) when it ends. */
typedef struct admin {
    kube_config cfg;
    kube_client c;             /* on cfg, no connection reused */
    bool up;                   /* c is initialised */
} admin_t;

/* One HostedCluster. */
typedef struct entry {
    kube_objkey_t key;          /* ns and name in the module's map */
    hcp_link_t zlink;          /* once forgotten: on the list awaiting release */
    hosted_t *p;
    char *ns, *name;           /* owned */
    char hcpns[NS_LEN * 2 + 2]; /* "<ns>-<name>" */
    bool gone;                 /* forgotten; released from the reaper */

    bool have_want;
    want_cond_t paused, pending;

    /* The Secret. */
    kube_request *secret_req;  /* GET in flight */
    ev_timer secret_timer;     /* periodic re-read or retry */
    bool secret_retry;         /* the timer is an error retry (not the periodic re-read) */
    kube_backoff secret_backoff;
    kube_backoff absent_backoff; /* the same while the Secret is missing or invalid */
    char secret_rv[64];        /* resourceVersion of the Secret in use */
    const char *secret_reason; /* static, NULL while the Secret is usable */
    char *secret_msg;             /* heap, only while it has something to say */

    /* The identity (identity.c): the Secret's admin kubeconfig, kept only
     * until the set-up it is read for has ended. */
    bool need_enroll;          /* a set-up waits for its turn in the queue */
    bool enrolling;            /* a set-up holds a slot of the queue */
    int step;                  /* the set-up's request in flight */
    struct admin *admin;       /* while a set-up waits or runs, else NULL */
    ev_timer admin_timer;      /* frees `admin` out of its client's callbacks */
    bool reenroll;             /* the hosted API server refused the token, or the
                                  last set-up failed: set up again at the next
                                  read of the Secret */
    double token_until;        /* ev_now() time the token in use expires */
    double renew_at;           /* ev_now() time it is renewed */
    const char *id_reason;     /* static, NULL while the last set-up went well */
    char *id_msg;                 /* heap, only while it has something to say */

    /* The hosted API server; everything below is valid while `connected`:
     * cfg holds its address and CA, the client the ServiceAccount's token. */
    bool connected;
    kube_config cfg;
    kube_client client;
    const char *api_reason;    /* static, NULL while the server answers */
    char *api_msg;                /* heap, only while it has something to say */

    /* The check: read ClusterVersion `version`, patch it when it differs.
     * One at a time per HostedCluster, at most opts.max_in_flight over all
     * of them; the others wait in the module's queue. */
    bool queued;               /* in the module's queue */
    struct entry *qnext;       /* next in the queue */
    bool busy;                 /* a read or patch is in flight */
    bool again;                /* a reason to check arrived while busy */
    ev_timer tick;             /* next check: the re-assertion period, or a retry */
    double check_started;      /* ev_now() when the last check started */
    bool phased;               /* the first periodic check was placed at random */
    kube_backoff retry_backoff; /* after a failed read or patch */
    int conflicts;             /* 409s in a row */
    bool cv_read;              /* a read was answered since connecting */
    bool cv_absent;            /* the last read answered 404 */
    json_t *seen;              /* our two conditions as last read (a
                                  ChangesPaused/ChangesPending-only copy of
                                  status.conditions), or NULL */
    const char *write_reason;  /* static, NULL when the last write succeeded */
    char *write_msg;              /* heap, only while it has something to say */
    bool seen_right;           /* the ClusterVersion was seen as wanted since the
                                  wanted conditions last changed */

    hosted_status_t st;   /* last evaluated state */
} entry_t;

/* The removal of the identity from a HostedCluster that opted out
 * (hosted_retire()): a job of its own, the entry is forgotten. */
typedef struct retire {
    hcp_link_t link;           /* on hosted.retiring */
    hosted_t *p;
    char *ns, *name;           /* owned */
    int stage;                 /* identity.c's R_* */
    int tries;
    bool dead;                 /* ended: freed by the timer, out of callbacks */
    bool reset;                /* start again from the Secret at the timer */
    kube_request *req;         /* a GET in flight, or NULL */
    kube_config cfg;           /* the admin kubeconfig while it runs */
    kube_client admin;
    bool admin_up;
    ev_timer timer;
} retire_t;

struct hosted {
    struct ev_loop *loop;
    kube_http http;            /* the hosted clients' own: their connections are
                                  cached apart from the management API's */
    kube_client *mgmt;
    hosted_opts_t opts;
    bool leading;
    kube_objmap_t entries;      /* entry_t by ns/name */
    hcp_link_t zombies;        /* forgotten entries, released by `reap` */
    hcp_link_t retiring;       /* retire_t: identities being removed */
    entry_t *qhead, *qtail;    /* entries waiting for a check (FIFO) */
    int in_flight;             /* checks running */
    ev_timer reap;
    uint64_t rng;
    hosted_stats_t stats;
};


/* hosted.c */
double hosted__rnd01(hosted_t *p);
/* Replaces *slot with the message (at most 511 bytes), or frees it (fmt
 * NULL): entries keep their failure messages on the heap, since most of a
 * fleet's have none. */
void hosted__set_msg(char **slot, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hosted__evaluate(entry_t *e);

/* link.c */
/* "Hosted API server <server>: <reason>: <message>" into *slot
 * (hosted__set_msg()): how a failed request to a hosted API server is told. */
void hosted__api_msg(char **slot, const char *server, const kube_error *err);
void hosted__kick(entry_t *e);
void hosted__pump(hosted_t *p);
void hosted__disconnect(entry_t *e);
int hosted__connect(entry_t *e, kube_config *cfg, char *err, size_t errlen);
void hosted__tick_cb(struct ev_loop *loop, ev_timer *w, int revents);

/* secret.c */
void hosted__secret_fetch(entry_t *e);
void hosted__secret_retry_soon(entry_t *e);
void hosted__secret_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
void hosted__secret_arm(entry_t *e);

/* identity.c */
int hosted__identity_want(entry_t *e, kube_config *admin);
void hosted__identity_start(entry_t *e);
void hosted__identity_stop(entry_t *e);
void hosted__admin_timer_cb(struct ev_loop *loop, ev_timer *w, int revents);
void hosted__retire_cancel(hosted_t *p, const char *ns, const char *name);
void hosted__retire_all(hosted_t *p);

#endif
