/* clock.c: the controller's time, real or simulated (ctl_clock_t), and the
 * reconcile latency histogram's bounds. */
#include "controller/controller.h"

const double ctl_latency_bounds[8] = {0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 1e300};

sched_time_t ctl_clock_now(const ctl_clock_t *clk, struct ev_loop *loop)
{
    double now = ev_now(loop);
    if (!clk->simulated)
        return (sched_time_t)now;
    return clk->sim0 + (sched_time_t)((now - clk->real0) * clk->scale);
}

double ctl_clock_delay(const ctl_clock_t *clk, struct ev_loop *loop, sched_time_t t)
{
    double now = ev_now(loop);
    double d;
    if (!clk->simulated)
        d = (double)t - now;
    else
        d = ((double)(t - clk->sim0)) / clk->scale - (now - clk->real0);
    return d < 0 ? 0 : d;
}
