/*
 * kube/ratelimit.c - token bucket and backoff arithmetic.
 */
#include "kube/ratelimit.h"

void kube_ratelimit_init(kube_ratelimit *rl, double qps, int burst, double now)
{
    rl->qps = qps;
    rl->burst = burst < 1 ? 1.0 : (double)burst;
    rl->tokens = rl->burst;
    rl->last = now;
}

double kube_ratelimit_reserve(kube_ratelimit *rl, double now)
{
    double wait;

    if (rl->qps <= 0)
        return 0.0;
    if (now > rl->last) {
        rl->tokens += (now - rl->last) * rl->qps;
        if (rl->tokens > rl->burst)
            rl->tokens = rl->burst;
        rl->last = now;
    }
    rl->tokens -= 1.0;
    if (rl->tokens >= 0)
        return 0.0;
    wait = -rl->tokens / rl->qps;
    return wait;
}

void kube_backoff_init(kube_backoff *b, double initial, double max)
{
    b->initial = initial > 0 ? initial : 0.1;
    b->max = max >= b->initial ? max : b->initial;
    b->current = b->initial;
}

double kube_backoff_next(kube_backoff *b, double rnd01)
{
    double d = b->current;

    if (rnd01 < 0)
        rnd01 = 0;
    if (rnd01 >= 1)
        rnd01 = 0.999999;
    b->current *= 2;
    if (b->current > b->max)
        b->current = b->max;
    return d / 2 + d / 2 * rnd01;
}

void kube_backoff_reset(kube_backoff *b)
{
    b->current = b->initial;
}
