/* testutil_ctl: a controller for unit tests that fill its caches directly
 * (no API server, no watches): the handlers run as they do for watch
 * events. */
#ifndef HCP_CONTROLLER_TESTUTIL_CTL_H
#define HCP_CONTROLLER_TESTUTIL_CTL_H

#include <ev.h>

#include "controller/internal.h"

/* A controller on loop with empty caches, CAPI version v1beta1 discovered,
 * and a simulated clock standing at now. Free with ctl_stop(). Aborts when
 * out of memory. */
ctl_controller_t *testutil_ctl_new(struct ev_loop *loop, sched_time_t now);

/* Adds the object (JSON text) to cache as a watch ADDED event would.
 * Aborts, printing the text, when it is not JSON or the cache refuses it. */
void testutil_ctl_add(kube_cache *cache, const char *json);

#endif
