/* testutil_ctl: a controller for unit tests that fill its caches directly
 * (no API server, no watches): the handlers run as they do for watch
 * events. */
#ifndef HCP_CONTROLLER_TESTUTIL_CTL_H
#define HCP_CONTROLLER_TESTUTIL_CTL_H

#include <ev.h>

#include "controller/internal.h"

/* A controller on loop with empty caches, CAPI version v1beta1 discovered,
 * and a simulated clock standing at now; it writes through client (NULL:
 * it writes nothing). Free with ctl_stop(). Aborts when out of memory. */
ctl_controller_t *testutil_ctl_new(struct ev_loop *loop, kube_client *client, sched_time_t now);

/* Adds the object (JSON text) to cache as a watch ADDED event would.
 * Aborts, printing the text, when it is not JSON or the cache refuses it. */
void testutil_ctl_add(kube_cache *cache, const char *json);

/* One AdmissionReview request, as the API server sends it. */
typedef struct testutil_review {
    const char *path;       /* the webhook's path on the router */
    const char *op;         /* "CREATE", "UPDATE" or "DELETE" */
    const char *subresource; /* NULL or "status" */
    const char *group, *resource; /* request.resource */
    const char *ns, *name;
    const char *user;       /* userInfo.username, NULL for none */
    const char *const *groups; /* userInfo.groups, NULL-terminated; NULL for none */
    const char *object;     /* JSON text (single quotes read as double), NULL for a DELETE */
    const char *old_object; /* JSON text, NULL for a CREATE */
} testutil_review_t;

/* Sends q through the router's route at q->path as the API server would
 * and returns the answer's `response` member (a new reference). Aborts on
 * a bad test (no such route, bad JSON, an answer that is not HTTP 200). */
struct adm_router;
json_t *testutil_ctl_review(struct adm_router *r, const testutil_review_t *q);

#endif
