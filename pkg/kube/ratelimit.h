/*
 * kube/ratelimit.h - client-side token bucket (QPS and burst), and the
 * exponential backoff with jitter used after errors.
 *
 * Both are pure: the caller passes the current time in seconds (monotonic)
 * and a random number source, so tests pin them exactly.
 */
#ifndef KUBE_RATELIMIT_H
#define KUBE_RATELIMIT_H

#include <stdint.h>

typedef struct kube_ratelimit {
    double qps;    /* tokens added per second; <= 0 disables limiting */
    double burst;  /* bucket size (at least 1) */
    double tokens; /* tokens available at time `last` (may go negative: reserved) */
    double last;   /* time of the last update, seconds */
} kube_ratelimit;

/* Starts a full bucket at time `now`. qps <= 0 means unlimited. */
void kube_ratelimit_init(kube_ratelimit *rl, double qps, int burst, double now);

/*
 * Reserves one token and returns how many seconds the caller must wait
 * before using it (0 when a token is available now). Reservations queue up:
 * the n-th caller beyond the burst waits n/qps seconds, so requests keep
 * their order and the long-run rate never exceeds qps.
 */
double kube_ratelimit_reserve(kube_ratelimit *rl, double now);

typedef struct kube_backoff {
    double initial; /* first delay, seconds */
    double max;     /* cap, seconds */
    double current; /* the un-jittered delay the next call returns around */
} kube_backoff;

/* initial and max in seconds; initial <= max. */
void kube_backoff_init(kube_backoff *b, double initial, double max);

/*
 * Returns the next delay: uniformly in [current/2, current] ("equal jitter",
 * so many clients restarting together spread out yet nobody retries
 * immediately), then doubles current up to max. rnd01 is a random number in
 * [0,1).
 */
double kube_backoff_next(kube_backoff *b, double rnd01);

/* Back to the initial delay, after something succeeded. */
void kube_backoff_reset(kube_backoff *b);

#endif
