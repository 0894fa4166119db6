/* testutil_ctl: a controller for unit tests that fill its caches directly
 * (no API server, no watches): the handlers run as they do for watch
 * events. */
#ifndef HCP_CONTROLLER_TESTUTIL_CTL_H
#define HCP_CONTROLLER_TESTUTIL_CTL_H

#include <ev.h>

#include "check/call.h"
#include "controller/internal.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/testutil_fakeapi.h"

/* A controller on loop with empty caches, CAPI version v1beta1 discovered,
 * and a simulated clock standing at now; it writes through client (NULL:
 * it writes nothing). Free with ctl_stop(). Aborts when out of memory. */
ctl_controller_t *testutil_ctl_new(struct ev_loop *loop, kube_client *client, sched_time_t now);

/* A controller (testutil_ctl_new(), leading) on a loop of its own that
 * writes to an in-process fake API server (kube/testutil_fakeapi.h). */
typedef struct testutil_ctl_api {
    struct ev_loop *loop;
    fakeapi_t *api;
    kube_config cfg;
    kube_http http;
    kube_client client;
    ctl_controller_t *c;
} testutil_ctl_api_t;

/* Starts t: the fake answers every request with answer(ud); the
 * controller's clock stands at now (RFC 3339). Aborts when it cannot. */
void testutil_ctl_api_start(testutil_ctl_api_t *t, fakeapi_handler_fn answer, void *ud,
                            const char *now);

/* Stops and frees everything testutil_ctl_api_start() made. */
void testutil_ctl_api_stop(testutil_ctl_api_t *t);

/* Runs t's loop until every write of the controller is answered; aborts
 * after 20 s. */
void testutil_ctl_api_settle(testutil_ctl_api_t *t);

/* The start of an object's JSON text: kind and metadata (namespace, name,
 * uid "u-<name>", resourceVersion 7, generation 1) left open for more
 * metadata members. */
#define TESTUTIL_OBJ_META(kind, ns, name)                                         \
    "\"kind\":\"" kind "\",\"metadata\":{\"namespace\":\"" ns "\",\"name\":\"" name \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"7\",\"generation\":1"
/* The stanza annotation of an object that follows policy "weekend". */
#define TESTUTIL_BY_WEEKEND "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\""

/* A controller (testutil_ctl_new()) whose caches hold the policy "weekend"
 * of namespace "clusters" (Saturdays 01:00-05:00 UTC), HostedCluster
 * clusters/a (infraID a-x1, release r:1) and its NodePools np1 (Replace)
 * and np2 (InPlace), all three following it. */
ctl_controller_t *testutil_ctl_weekend(struct ev_loop *loop, sched_time_t now);

/* Adds the object (JSON text) to cache as a watch ADDED event would.
 * Aborts, printing the text, when it is not JSON or the cache refuses it. */
void testutil_ctl_add(kube_cache *cache, const char *json);

/* The same for a watch event of type (ADDED, MODIFIED, DELETED). */
void testutil_ctl_apply(kube_cache *cache, kube_event_type type, const char *json);

/* One pre-start check ("cab", nobody answers) for systems (check.h's
 * CHECK_* bits), with c leading: what the leader's webhook knows before
 * any answer. testutil_ctl_checks_off() undoes it. */
void testutil_ctl_checks_on(ctl_controller_t *c, check_runner_t *run, unsigned systems);
void testutil_ctl_checks_off(ctl_controller_t *c, check_runner_t *run);

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
    const char *options;    /* request.options, JSON text; NULL for none */
} testutil_review_t;

/* Sends q through the router's route at q->path as the API server would
 * and returns the answer's `response` member (a new reference). Aborts on
 * a bad test (no such route, bad JSON, an answer that is not HTTP 200). */
struct adm_router;
json_t *testutil_ctl_review(struct adm_router *r, const testutil_review_t *q);

/* An answer as a test reads it. */
typedef struct testutil_answer {
    bool allowed;
    json_t *stored;          /* owned: q->object with the answer's JSON Patch
                                applied, as the API server would store it */
    int nops;                /* operations in the patch */
    char warning[1024];      /* the first warning, as sent ("" when none) */
    char warnings[4][1024];  /* every warning, as sent */
    int nwarnings;
} testutil_answer_t;

/* testutil_ctl_review() of q, its patch decoded and applied (the add,
 * replace and remove the holds send). Aborts on a patch that is not
 * base64 of a JSON array or does not apply. */
testutil_answer_t testutil_ctl_answer(struct adm_router *r, const testutil_review_t *q);

#endif
