/*
 * httpserver/httpserver.h - a small HTTP server (libmicrohttpd) running
 * inside the caller's libev loop.
 *
 * The controller is one thread around one libev loop; the server must not
 * add threads of its own. libmicrohttpd is therefore started without any
 * internal thread in epoll mode: its epoll descriptor is watched by an ev_io
 * and its timeout (idle connections) by an ev_timer re-armed after every
 * MHD_run(). Handlers run on the loop, between other watchers, and may read
 * the controller's state without locks.
 *
 * Routes are exact paths, or prefixes ending in '*', with one method each
 * ("GET /metrics"). A GET route also answers HEAD (same status and headers,
 * no body). An unknown path gets 404, a known path with another method gets 405 with an Allow header.
 * Request bodies (for POST routes such as admission webhooks) are collected
 * up to a limit before the handler runs; larger ones get 413.
 *
 * A gate (http_server_set_gate()) sees every routed request before its
 * handler and may answer it, let it through, or hold it while it asks
 * something on the loop (an authorization review): the connection is then
 * suspended (libmicrohttpd's suspend/resume, no thread) until the gate calls
 * http_pending_pass() or http_pending_answer().
 *
 * TLS: with a certificate and key in the options (PEM in memory) the server
 * speaks only HTTPS. The pair is read when the server starts (GnuTLS,
 * libmicrohttpd's TLS library, through its certificate callback);
 * http_server_renew_tls() gives a running server a renewed pair, which the
 * next handshakes present, without closing the listening socket or any
 * connection.
 */
#ifndef HTTPSERVER_HTTPSERVER_H
#define HTTPSERVER_HTTPSERVER_H

#include <ev.h>
#include <stddef.h>
#include <sys/socket.h>

#include "base/error.h"
#include "base/list.h"

/* Errors: functions return 0 or a negative HCP_E* code (base/error.h):
 * HCP_EINVAL for a bad argument (address, route, header), HCP_ENOMEM when
 * allocation fails, HCP_ELISTEN when the daemon could not start (address in
 * use, ...), HCP_EFULL when there is no room for another route or header,
 * HCP_ESTATE in the wrong state (already started, not started). */

#define HTTP_SERVER_MAX_ROUTES 16       /* routes per server */
#define HTTP_SERVER_MAX_PATH 128        /* bytes of a route path, with the NUL */
#define HTTP_RESPONSE_MAX_HEADERS 8     /* extra response headers per response */

/* What a handler sees of a request. Valid only while the handler runs. */
typedef struct http_request {
    const char *method;  /* as received: "GET", "HEAD", "POST", ... */
    const char *path;    /* the path, percent-decoded, without the query string */
    const char *body;    /* request body (NUL-terminated copy), "" when none */
    size_t body_len;     /* bytes in body, not counting the NUL */
    void *conn;          /* the underlying MHD connection; use the accessors below */
} http_request;

/* One extra response header. */
typedef struct http_header {
    char *name;  /* owned */
    char *value; /* owned */
} http_header;

/*
 * What a handler fills in. The server prepares it (status 200, content type
 * "text/plain; charset=utf-8", empty body), calls the handler, then sends
 * it and frees everything the response owns.
 */
typedef struct http_response {
    int status;               /* HTTP status code, 100..599 */
    char content_type[128];   /* Content-Type value */
    char *body;               /* owned by the response (malloc); NULL means empty */
    size_t body_len;          /* bytes in body */
    size_t body_cap;          /* bytes allocated for body */
    http_header headers[HTTP_RESPONSE_MAX_HEADERS]; /* extra headers */
    size_t nheaders;          /* headers in use */
    int failed;               /* an append ran out of memory: the server answers 500 */
} http_response;

/*
 * A route handler. Fill resp and return 0; a negative return discards resp
 * and sends 500, so handlers can bail out on internal errors without
 * building an error page. Handlers may call http_server_stop() (the stop
 * happens as soon as libmicrohttpd returns to the server, so this response
 * may not reach the client) but must not free or reuse the server.
 */
typedef int (*http_handler_fn)(const http_request *req, http_response *resp, void *ud);

/* A request a gate holds (see http_server_set_gate()). Opaque. */
typedef struct http_pending http_pending;

/* What a gate decided about a request. */
typedef enum http_gate_verdict {
    HTTP_GATE_PASS = 0,   /* run the route's handler now */
    HTTP_GATE_ANSWER = 1, /* send resp as the gate filled it; the handler does not run */
    HTTP_GATE_WAIT = 2    /* the gate keeps the pending handle and decides later */
} http_gate_verdict;

/*
 * A gate: called on the loop for every request that matched a route, after
 * its body arrived and before its handler. req is valid only during the
 * call (copy what a later decision needs); resp is prepared as for a
 * handler. Returning HTTP_GATE_WAIT suspends the connection: the gate must
 * later call http_pending_pass() or http_pending_answer() with p exactly
 * once, or receive p in its cancel callback (the server stops), after
 * which p is gone.
 */
typedef http_gate_verdict (*http_gate_fn)(const http_request *req, http_response *resp,
                                          http_pending *p, void *ud);

/* Tells a gate that a request it holds is abandoned (the server stops): it
 * must forget p without calling http_pending_*(). */
typedef void (*http_gate_cancel_fn)(http_pending *p, void *ud);

/* Settings fixed at http_server_init(). Zero fields take defaults. */
typedef struct http_server_options {
    size_t max_body;               /* request body limit in bytes (default 1 MiB) */
    unsigned connection_timeout;   /* idle connection timeout in seconds (default 30) */
    unsigned max_connections;      /* concurrent connections (default 64) */
    const char *tls_cert_pem;      /* borrowed; NULL: plain HTTP. Certificate chain, PEM */
    const char *tls_key_pem;       /* borrowed; the certificate's private key, PEM */
} http_server_options;

/* A registered route. */
typedef struct http_route {
    char method[16];                 /* "GET", "POST", ... */
    char path[HTTP_SERVER_MAX_PATH]; /* exact path, starting with '/', or a
                                        prefix followed by '*' */
    http_handler_fn handler;         /* called for matching requests */
    void *ud;                        /* handler's argument */
} http_route;

/* The server. Caller-allocated; fields are private to httpserver.c. */
typedef struct http_server {
    http_server_options opts;                 /* settings, defaults applied */
    http_route routes[HTTP_SERVER_MAX_ROUTES]; /* registered routes */
    size_t nroutes;                           /* routes in use */
    struct ev_loop *loop;                     /* borrowed; set while started */
    struct MHD_Daemon *daemon;                /* owned; NULL when stopped */
    ev_io io;                                 /* MHD's epoll descriptor */
    ev_timer timer;                           /* MHD's next timeout */
    int port;                                 /* bound port, 0 when stopped */
    int running_mhd;                          /* > 0 while inside MHD_run() */
    int stop_pending;                         /* stop requested from inside MHD_run() */
    unsigned long requests;                   /* requests answered since start */
    struct tls_pair *tls;                     /* owned: the pairs served, newest first */
    http_gate_fn gate;                        /* NULL: every request goes to its handler */
    http_gate_cancel_fn gate_cancel;          /* told of held requests at stop */
    void *gate_ud;                            /* the gate's argument */
    hcp_link_t held;                          /* requests a gate holds (suspended) */
    char mhd_log[256];                        /* last message libmicrohttpd logged */
    int closing;                              /* every response says "Connection: close" */
} http_server;

/* ---- response helpers (for handlers) ------------------------------------ */

/* Replaces the body with a copy of len bytes. Returns 0 or HCP_ENOMEM. */
int http_response_set_body(http_response *resp, const void *data, size_t len);

/* Appends len bytes to the body. Returns 0 or HCP_ENOMEM. */
int http_response_append(http_response *resp, const void *data, size_t len);

/* Appends printf-formatted text to the body. Returns 0 or HCP_ENOMEM. */
int http_response_printf(http_response *resp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/*
 * Makes body (malloc'd, len bytes) the response body without copying; the
 * response owns it from now on, even when this is called twice. Lets
 * /metrics hand over a rendered buffer of any size.
 */
void http_response_take_body(http_response *resp, char *body, size_t len);

/* Sets the Content-Type. Returns 0, or HCP_EINVAL when too long or containing CR/LF. */
int http_response_set_content_type(http_response *resp, const char *content_type);

/*
 * Adds a response header (copied). Names must be tokens and values free of
 * CR/LF, so handler input cannot split the response. Returns 0,
 * HCP_EINVAL, HCP_EFULL or HCP_ENOMEM.
 */
int http_response_add_header(http_response *resp, const char *name, const char *value);

/* ---- request accessors ------------------------------------------------ */

/* Value of a request header (case-insensitive name), or NULL. Borrowed: valid during the handler. */
const char *http_request_header(const http_request *req, const char *name);

/* Value of a query-string argument, or NULL. Borrowed: valid during the handler. */
const char *http_request_query(const http_request *req, const char *key);

/*
 * Whether an Accept-Encoding value (RFC 9110 section 12.5.3; NULL: the
 * header is absent) names the content coding `coding` (case-insensitive)
 * with a weight above 0: "gzip", "br, gzip;q=0.5" accept gzip; "gzip;q=0",
 * "identity", "*" and NULL do not (a wildcard is not taken as consent to
 * a coding the client did not name). Malformed elements are skipped.
 */
bool http_accepts_coding(const char *accept_encoding, const char *coding);

/* ---- server ------------------------------------------------------------ */

/*
 * Parses a Go-style bind address: ":8080" (every interface), "127.0.0.1:0",
 * "[::1]:9000", "localhost:8081". The host must be a numeric IPv4 or IPv6
 * address or "localhost" (no DNS lookups on the event loop); the port
 * 0..65535 (0 asks the kernel for a free one). On success fills addr/len and
 * sets *any when no host was given. Returns 0 or HCP_EINVAL with err
 * explaining.
 */
int http_parse_bind_address(const char *bind_address, struct sockaddr_storage *addr,
                            socklen_t *len, int *any, char *err, size_t errlen);

/* Prepares a stopped server with no routes. opts may be NULL (defaults). */
void http_server_init(http_server *s, const http_server_options *opts);

/*
 * Registers handler for requests with this method and exact path, or with
 * every path that starts with path's text before a final '*' ("/calendar/"
 * then "*"; the handler reads req->path). A route for GET also serves HEAD.
 * Routes may be added before or after start.
 * Returns 0, HCP_EINVAL (method not a token, path not starting with '/',
 * too long, or the same method and path twice) or HCP_EFULL.
 */
int http_server_route(http_server *s, const char *method, const char *path,
                      http_handler_fn handler, void *ud);

/*
 * Starts listening on bind_address and serving from loop. ":port" binds
 * every IPv6 and IPv4 address (IPv4 only when the host has no IPv6).
 * Returns 0; HCP_EINVAL for an unparsable address, HCP_ELISTEN when the
 * socket cannot be bound (err says why, e.g. address in use) or
 * HCP_ESTATE when already started. A stopped server may be started again.
 */
int http_server_start(http_server *s, struct ev_loop *loop, const char *bind_address, char *err,
                      size_t errlen);

/*
 * Sets the TLS certificate chain and key (PEM, NUL-terminated, borrowed:
 * they must stay valid while the server runs) for the next start; NULL for
 * both serves plain HTTP. A pair that does not parse or match makes
 * http_server_start() fail with HCP_ELISTEN and libmicrohttpd's reason.
 * Returns 0, HCP_EINVAL (only one of the two given) or HCP_ESTATE (started).
 */
int http_server_set_tls(http_server *s, const char *cert_pem, const char *key_pem);

/*
 * Serves a renewed certificate chain and key (PEM, NUL-terminated) from the
 * next TLS handshake on, while the server keeps running: no
 * connection is closed and the listening socket stays open, so a client
 * never finds the port closed. The older pair is kept until the server
 * stops (a session may refer to it). The strings are also the pair of the
 * next start (borrowed, as with http_server_set_tls()). Returns 0; HCP_EINVAL with the reason
 * in err when the pair does not parse or the key is not the certificate's
 * (the old pair is still served); HCP_ESTATE when the server is not running
 * with TLS.
 */
int http_server_renew_tls(http_server *s, const char *cert_pem, const char *key_pem, char *err,
                          size_t errlen);

/*
 * Installs gate (NULL removes it) in front of every route of s; cancel is
 * called for each request the gate still holds when the server stops.
 * Only while the server is stopped. Returns 0 or HCP_ESTATE.
 */
int http_server_set_gate(http_server *s, http_gate_fn gate, http_gate_cancel_fn cancel, void *ud);

/*
 * Resumes a held request: its route's handler runs (on the loop, once
 * libmicrohttpd serves the connection again, not inside this call). p is
 * gone afterwards. Must not be called from inside the gate call that
 * returned HTTP_GATE_WAIT for p; any later loop callback is fine.
 */
void http_pending_pass(http_pending *p);

/*
 * Resumes a held request with this answer instead of its handler: status
 * (100..599), a plain-text body (copied; NULL for none) and, when
 * header_name is not NULL, one extra header (e.g. WWW-Authenticate). p is
 * gone afterwards. Same calling rules as http_pending_pass().
 */
void http_pending_answer(http_pending *p, int status, const char *body, const char *header_name,
                         const char *header_value);

/*
 * Makes a self-signed certificate for cn (also its DNS name), valid one
 * year, with a new ECDSA P-256 key: *cert_pem and *key_pem are new
 * NUL-terminated PEM strings (free() both). For a TLS listener given no
 * certificate (clients must skip verification or pin it). Returns 0,
 * HCP_ETLS with GnuTLS's reason in err, or HCP_ENOMEM.
 */
int http_self_signed(const char *cn, char **cert_pem, char **key_pem, char *err, size_t errlen);

/* The port actually bound (useful after ":0"), or 0 when stopped. */
int http_server_port(const http_server *s);

/*
 * From now on every response carries "Connection: close" and its
 * connection is closed once it is sent, while the listener keeps accepting
 * and answering. A process that is about to stop calls it first: a client
 * that keeps connections alive (the API server calling a webhook) then
 * opens its next connection afresh, through its Service, to a replica that
 * stays, instead of reusing one to this process when it exits. Kept across
 * a restart of the listener (a renewed certificate); cleared by
 * http_server_init().
 */
void http_server_set_closing(http_server *s);

/*
 * Closes the listening socket and every connection and detaches from the
 * loop. Safe from any loop callback, including a signal watcher and a route
 * handler (then the close happens as soon as libmicrohttpd returns, and the
 * handler's response may be lost). Does nothing when stopped. Routes stay
 * registered for a later start.
 */
void http_server_stop(http_server *s);

#endif
