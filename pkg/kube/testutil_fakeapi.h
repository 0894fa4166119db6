/*
 * kube/testutil_fakeapi.h - an in-process fake API server for unit tests.
 *
 * A plain HTTP/1.1 server on 127.0.0.1 (ephemeral port) driven by ev_io
 * watchers on the test's own libev loop, so a test stays single-threaded
 * and deterministic: it runs the loop until the client under test or the
 * fake reaches a state, then asserts. It serves what a real kube-apiserver
 * will not produce on demand (429s, broken JSON, silent or broken watch
 * streams, 410 Gone as a watch event, 401 after a token rotation).
 *
 * Every complete request is recorded (method, path, query, Authorization,
 * body, arrival time) and handed to the test's handler, in one of two
 * forms: an answer function that returns a status and a JSON body (sent at
 * once with Content-Length, keep-alive), or a serve function that gets the
 * connection and may reply with extra headers, open a chunked stream (a
 * watch) that the test feeds later, or leave the request unanswered.
 *
 * Linked into unit tests only. Failures of the fake itself (a socket that
 * cannot be bound, a request it cannot parse) print a line and abort the
 * test binary; it never calls the test framework, so benchmarks link it too.
 */
#ifndef KUBE_TESTUTIL_FAKEAPI_H
#define KUBE_TESTUTIL_FAKEAPI_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"

/* One request as the fake saw it. */
typedef struct fakeapi_req {
    char method[16];
    char path[512];   /* without the query string */
    char query[1024]; /* raw query string, "" when none */
    char auth[256];   /* Authorization header, "" when absent */
    char body[4096];  /* request body (truncated copy) */
    bool watch;       /* the query has watch=1 */
    double at;        /* ev_now() when the request was complete */
} fakeapi_req_t;

typedef struct fakeapi fakeapi_t;
typedef struct fakeapi_conn fakeapi_conn_t;

/* Answers r: sets *status (200 unless set) and returns the body, static or
 * owned by ud (NULL is an empty body). */
typedef const char *(*fakeapi_handler_fn)(const fakeapi_req_t *r, int *status, void *ud);

/* Decides the answer to r, which is already recorded: calls fakeapi_reply()
 * or fakeapi_stream_open() on c, or neither (the request then hangs until
 * the client gives up or the fake stops). c is valid during the call. */
typedef void (*fakeapi_serve_fn)(fakeapi_t *f, fakeapi_conn_t *c, const fakeapi_req_t *r,
                                 void *ud);

/* Starts a fake on loop whose every request handler answers at once.
 * Returns it (new; free with fakeapi_stop()); never NULL: aborts on failure. */
fakeapi_t *fakeapi_start(struct ev_loop *loop, fakeapi_handler_fn handler, void *ud);

/* Starts a fake on loop whose requests serve decides, as fakeapi_start(). */
fakeapi_t *fakeapi_start_serve(struct ev_loop *loop, fakeapi_serve_fn serve, void *ud);

/* Sends a complete response with Content-Length on c. extra: more header
 * lines, each ending in "\r\n", or NULL. */
void fakeapi_reply(fakeapi_conn_t *c, int status, const char *extra, const char *body);

/* Starts a chunked 200 response on c and leaves it open; it becomes the
 * fake's stream, fed with fakeapi_stream_send(). */
void fakeapi_stream_open(fakeapi_conn_t *c);

/* Sends data as one chunk on the stream opened last; aborts when it is closed. */
void fakeapi_stream_send(fakeapi_t *f, const char *data);

/* Resets c once the serve function returns: the connection is closed with a
 * TCP RST and no answer, as a server that dropped it under the request. */
void fakeapi_reset(fakeapi_conn_t *c);

/* Closes every connection but the open stream's, as a server that closed its
 * idle keep-alive connections: the client's next request makes a new one. */
void fakeapi_close_idle(fakeapi_t *f);

/* Whether the stream opened last is still open (the client has not closed it). */
bool fakeapi_streaming(const fakeapi_t *f);

/* The port it listens on. */
int fakeapi_port(const fakeapi_t *f);

/* Requests received so far; the i-th of them (0-based, borrowed, valid
 * until fakeapi_stop()), or NULL when i is out of range. */
int fakeapi_count(const fakeapi_t *f);
const fakeapi_req_t *fakeapi_nth(const fakeapi_t *f, int i);

/* Requests with this method and path (no query) that are watches or not. */
int fakeapi_count_of(const fakeapi_t *f, const char *method, const char *path, bool watch);

/* The k-th (0-based) of the requests fakeapi_count_of() counts (borrowed, as
 * fakeapi_nth()), or NULL when there are not that many. */
const fakeapi_req_t *fakeapi_find(const fakeapi_t *f, const char *method, const char *path,
                                  bool watch, int k);

/* Connections the client has closed so far. */
int fakeapi_closed(const fakeapi_t *f);

/* Connections the client has opened so far. */
int fakeapi_accepted(const fakeapi_t *f);

/* Sets up cfg, http and client (no retries) on loop to talk to f; aborts
 * on failure. Close them with kube_client_close(), kube_http_close() and
 * kube_config_free(). */
void fakeapi_connect(const fakeapi_t *f, struct ev_loop *loop, kube_config *cfg,
                     kube_http *http, kube_client *client);

/* Closes every connection and frees the fake and its requests. */
void fakeapi_stop(fakeapi_t *f);

#endif
