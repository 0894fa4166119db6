/* testutil_fakeapi: a minimal in-process fake API server for unit tests.
 *
 * A plain HTTP/1.1 server on 127.0.0.1 (ephemeral port) driven by ev_io
 * watchers on the test's own libev loop, so a test stays single-threaded:
 * it runs the loop until the client under test reaches a state. Each
 * complete request is logged and answered by the test's handler with a
 * status and a JSON body (Content-Length framing, keep-alive). Streams
 * (watches) are not served; pkg/kube/test_kube_fake.c has a fuller fake for
 * the client's own tests. Failures of the fake itself abort the test.
 */
#ifndef HCP_CONTROLLER_TESTUTIL_FAKEAPI_H
#define HCP_CONTROLLER_TESTUTIL_FAKEAPI_H

#include <ev.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"

#define FAKEAPI_MAX_LOG 32

/* One request as the fake saw it. */
typedef struct fakeapi_req {
    char method[16];
    char path[512];   /* with the query string */
    char body[4096];  /* truncated copy */
} fakeapi_req_t;

/* Answers r: sets *status and returns the body (static or owned by ud). */
typedef const char *(*fakeapi_handler_fn)(const fakeapi_req_t *r, int *status, void *ud);

typedef struct fakeapi fakeapi_t;

/* Starts a fake on loop; returns it (never NULL: aborts on failure). */
fakeapi_t *fakeapi_start(struct ev_loop *loop, fakeapi_handler_fn handler, void *ud);

/* The port it listens on. */
int fakeapi_port(const fakeapi_t *f);

/* Requests answered so far, and the first FAKEAPI_MAX_LOG of them. */
int fakeapi_count(const fakeapi_t *f);
const fakeapi_req_t *fakeapi_nth(const fakeapi_t *f, int i);

/* Sets up cfg, http and client (no retries) on loop to talk to f; aborts
 * on failure. Close them with kube_client_close(), kube_http_close() and
 * kube_config_free(). */
void fakeapi_connect(const fakeapi_t *f, struct ev_loop *loop, kube_config *cfg,
                     kube_http *http, kube_client *client);

/* Closes every connection and frees the fake. */
void fakeapi_stop(fakeapi_t *f);

#endif
