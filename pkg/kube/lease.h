/*
 * kube/lease.h - leader election with a coordination.k8s.io/v1 Lease.
 *
 * Several replicas run; exactly one writes. Each replica tries every
 * retry_period to acquire or renew the Lease. A holder that cannot renew
 * within renew_deadline stops leading before its lease can expire, and a
 * candidate takes over a lease whose holder has not renewed it for
 * lease_duration, measured on the candidate's own clock from when it last
 * saw the record change (so clock skew between replicas does not matter).
 * Updates carry the resourceVersion, so two candidates never both win.
 *
 * Runs on the client's libev loop; caller-allocated.
 */
#ifndef KUBE_LEASE_H
#define KUBE_LEASE_H

#include <ev.h>
#include <stdbool.h>

#include "kube/client.h"

typedef struct kube_lease kube_lease;

typedef struct kube_lease_opts {
    const char *ns;          /* namespace of the Lease */
    const char *name;        /* its name */
    const char *identity;    /* this replica, e.g. pod name + random suffix */
    double lease_duration;   /* seconds; default 15 */
    double renew_deadline;   /* seconds; default 10 */
    double retry_period;     /* seconds; default 2 */
    /* Called when this replica starts or stops leading. */
    void (*on_change)(kube_lease *l, bool leading, void *ud);
    void *ud;
} kube_lease_opts;

struct kube_lease {
    kube_client *c;            /* borrowed */
    struct ev_loop *loop;
    kube_lease_opts opts;      /* strings owned (copies) */
    char path[512];            /* the Lease's path */
    char collection[512];      /* its collection, for create */
    bool leading;
    bool releasing;
    double last_renew;         /* ev_now() of our last successful renewal */
    char observed_rv[64];      /* resourceVersion of the record last seen */
    double observed_at;        /* ev_now() when it last changed */
    int transitions;           /* leaseTransitions last seen */
    kube_request *req;         /* in flight */
    ev_timer tick;
    void (*released)(void *ud);
    void *released_ud;
};

/* Starts campaigning. Returns 0, or negative with err filled. */
int kube_lease_start(kube_lease *l, kube_client *c, const kube_lease_opts *opts,
                     kube_error *err);

/* Gives the lease up so another replica can take over at once: when
 * leading, writes the Lease with no holder, then calls done (also when not
 * leading, or on failure, so shutdown always proceeds). */
void kube_lease_release(kube_lease *l, void (*done)(void *ud), void *ud);

/* Tries again now rather than at the next retry period: the API server
 * answers again after an outage (kube_client_on_back()), and a leader that
 * stepped down for want of renewals leads again at once. No-op while a
 * request is in flight or the lease is being released. */
void kube_lease_kick(kube_lease *l);

/* Stops campaigning and frees the lease's memory (no callbacks). */
void kube_lease_stop(kube_lease *l);

#endif
