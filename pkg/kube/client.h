/*
 * kube/client.h - Kubernetes REST requests over kube_http.
 *
 * A kube_client binds one API server's address and credentials (a
 * kube_config) to a shared kube_http. It adds what every request needs:
 * bearer token (re-read when its file rotates, and once more after a 401),
 * TLS material as in-memory blobs, HTTP/1.1, TCP keepalive, a client-side token
 * bucket (QPS and burst), retries of 429 Too Many Requests after Retry-After,
 * and per-verb/per-status request counts for metrics.
 *
 * All requests are asynchronous. Their completion callback receives either
 * the parsed JSON answer (err == NULL) or a kube_error carrying the HTTP
 * status and the API's Status.reason and Status.message.
 */
#ifndef KUBE_CLIENT_H
#define KUBE_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "kube/config.h"
#include "kube/error.h"
#include "kube/http.h"
#include "kube/ratelimit.h"
#include "base/list.h"

#define KUBE_FIELD_MANAGER "hcp-controller"
#define KUBE_STATS_MAX 64

typedef enum kube_verb {
    KUBE_VERB_GET,
    KUBE_VERB_LIST,
    KUBE_VERB_WATCH,
    KUBE_VERB_CREATE,
    KUBE_VERB_UPDATE,
    KUBE_VERB_PATCH,
    KUBE_VERB_APPLY,
    KUBE_VERB_DELETE,
    KUBE_VERB_COUNT
} kube_verb;

/* Static lowercase name of a verb ("get", "list", ...). */
const char *kube_verb_name(kube_verb v);

/* One row of request statistics: how many requests of `verb` ended with `code`. */
typedef struct kube_stat {
    kube_verb verb;
    int code;              /* HTTP status, 0 for transport/TLS failures */
    unsigned long count;
} kube_stat;

typedef struct kube_client_opts {
    double qps;            /* client-side rate limit; 0 = unlimited */
    int burst;             /* token bucket size */
    int max_retries;       /* 429 retries per request (default 5 when 0; -1 = none) */
    double timeout;        /* seconds for non-stream requests (default 60) */
    /* Seconds a read (get, list) may stay below 1 byte/s before it fails
     * and its caller tries again (default 15; < 0: only `timeout`). libcurl
     * averages the speed over about 5 s, so a read that stops half-way ends
     * some 5 s later than that. Such a read must not hold a cache's first
     * list for the whole timeout. */
    double stall;
    const char *user_agent; /* default "hcp-controller" */
    double retry_initial;  /* first wait after a 429 without Retry-After, seconds (default 1) */
    double retry_max;      /* cap of that doubling wait, seconds (default 30) */
    double token_recheck;  /* seconds between checks of cfg->token_file for rotation (default 1) */
    /* Called once per Warning header of a response (the API server warns of
     * pruned unknown fields, deprecated APIs, ...); text is borrowed for the
     * call. NULL: warnings are only counted. */
    void (*on_warning)(const char *method, const char *url, const char *text, void *ud);
    void *warning_ud;      /* passed to on_warning */
    /* Once a request got no answer at all (the API server unreachable: a
     * refused or broken connection, a timeout), the client asks the API
     * server's /readyz every probe_interval seconds (default 0.5; < 0: never)
     * until it answers (and at once when any other request is answered),
     * and then calls the function set with
     * kube_client_on_back() (at most once a second, a call too soon made
     * later, not dropped): its owner retries at
     * once what failed, instead of at the end of its backoff. A 503 counts
     * as no answer: a restarting API server answers it until it serves
     * every path. Without that function the client does not probe. */
    double probe_interval;
    /* Every request on a connection of its own, closed after it: for a
     * credential used a few times and then dropped (a hosted cluster's
     * admin kubeconfig), so that no connection authenticated by its client
     * certificate outlives the request or carries another client's. */
    bool no_reuse;
    /* Seconds a kept-alive connection may have been idle and still carry a
     * request (default 60; libcurl's own default is 118). The API server
     * closes a connection idle for 90 s (its IdleTimeout); reused later,
     * libcurl finds it closed and opens another, but a request sent on it
     * as it closes fails ("Send failure: Broken pipe") and a write is not
     * sent again (it may have happened): a held release would wait for
     * its backoff. */
    long idle_max;
} kube_client_opts;

typedef struct kube_request kube_request;
typedef struct kube_client kube_client;

/*
 * Completion of a request. err is NULL on success, and then obj is the
 * parsed response body (borrowed for the call: json_incref() to keep it; NULL
 * when the body was empty). On failure obj is NULL.
 */
typedef void (*kube_done_cb)(kube_client *c, const kube_error *err, json_t *obj, void *ud);
/* Stream bytes of a successful streaming request (a watch), in arbitrary chunks. */
typedef void (*kube_data_cb)(kube_client *c, const char *data, size_t len, void *ud);

struct kube_client {
    kube_http *http;              /* borrowed; shared with other clients */
    const kube_config *cfg;       /* borrowed; must outlive the client */
    kube_client_opts opts;
    char *token;                  /* current bearer token (owned) */
    struct timespec token_mtime;  /* of cfg->token_file when last read */
    double token_checked;         /* ev_now() of the last stat() */
    kube_ratelimit rl;
    hcp_link_t reqs;              /* live requests */
    kube_stat *stats;             /* rows by (verb, code), at most KUBE_STATS_MAX (owned) */
    size_t nstats, stats_cap;
    unsigned long throttled;      /* 429 answers retried */
    unsigned long resent;         /* reads sent again after their connection broke */
    bool unreachable;             /* a request got no answer, none answered since */
    bool probing;                 /* a /readyz probe is in flight */
    ev_timer probe;               /* the next /readyz while unreachable */
    unsigned long backs;          /* times the API server answered again */
    double back_at;               /* ev_now() of the last on_back call */
    ev_timer back_later;          /* an on_back call deferred to a second after the last */
    void (*on_back)(void *ud);    /* kube_client_on_back() */
    void *back_ud;
    unsigned long token_reloads;  /* times the token file was re-read */
    unsigned long warnings;       /* Warning headers received */
};

/*
 * Binds cfg to http. opts may be NULL for defaults (no rate limit). cfg and
 * http must outlive the client. Returns 0 or negative with err filled.
 */
int kube_client_init(kube_client *c, kube_http *http, const kube_config *cfg,
                     const kube_client_opts *opts, kube_error *err);

/* Sets the function called when the API server answers again after a
 * request got no answer (kube_client_opts.probe_interval); NULL: none. */
void kube_client_on_back(kube_client *c, void (*on_back)(void *ud), void *ud);

/* Replaces the bearer token sent from the next request on (a renewed
 * TokenRequest token); the old one is zeroed. Returns 0 or HCP_ENOMEM (the
 * old token then stays). */
int kube_client_set_token(kube_client *c, const char *token);

/* Cancels every outstanding request (no callbacks) and frees the client's memory. */
void kube_client_close(kube_client *c);

/* A fully described request, for kube_client_call(). */
typedef struct kube_call {
    kube_verb verb;            /* for statistics and the HTTP method */
    const char *path;          /* absolute API path, e.g. "/api/v1/namespaces" */
    const char *query;         /* query string without '?', or NULL */
    const char *content_type;  /* of body; NULL = application/json */
    const char *body;          /* request body or NULL (copied) */
    size_t body_len;
    kube_data_cb on_data;      /* set => streaming request */
    kube_done_cb on_done;      /* required */
    void *ud;
    bool no_ratelimit;         /* bypass the token bucket (watch restarts are paced elsewhere) */
} kube_call;

/*
 * Starts a request. *out (when out is not NULL) receives a handle valid
 * until on_done returns or the request is cancelled. Returns 0, or negative
 * with err filled when the request could not even be queued (then no
 * callback runs).
 */
int kube_client_call(kube_client *c, const kube_call *call, kube_request **out, kube_error *err);

/*
 * Cancels a request: no callback runs for it afterwards. Safe from any
 * callback, including the request's own. NULL is ignored.
 */
void kube_request_cancel(kube_request *r);

/* Bytes received by the request's current HTTP transfer (0 while waiting). */
size_t kube_request_bytes(const kube_request *r);

/* GET path. */
int kube_get(kube_client *c, const char *path, kube_done_cb cb, void *ud, kube_error *err);

/* POST obj to a collection path (Events, Leases, ...). */
int kube_create(kube_client *c, const char *collection, const json_t *obj, kube_done_cb cb,
                void *ud, kube_error *err);

/* PUT obj to path (used for Leases, with metadata.resourceVersion for optimistic locking). */
int kube_update(kube_client *c, const char *path, const json_t *obj, kube_done_cb cb, void *ud,
                kube_error *err);

/* PATCH path with an RFC 7386 JSON merge patch (application/merge-patch+json). */
int kube_merge_patch(kube_client *c, const char *path, const json_t *patch, kube_done_cb cb,
                     void *ud, kube_error *err);

/* kube_merge_patch() against path + "/status" (the status subresource). */
int kube_merge_patch_status(kube_client *c, const char *path, const json_t *patch,
                            kube_done_cb cb, void *ud, kube_error *err);

/*
 * Server-side apply of obj (application/apply-patch+yaml; JSON is YAML) with
 * fieldManager=hcp-controller; force takes ownership of conflicting fields.
 */
int kube_apply(kube_client *c, const char *path, const json_t *obj, bool force, kube_done_cb cb,
               void *ud, kube_error *err);

/* DELETE path. */
int kube_delete(kube_client *c, const char *path, kube_done_cb cb, void *ud, kube_error *err);

/* DELETE path with a DeleteOptions body (preconditions, propagation). */
int kube_delete_with(kube_client *c, const char *path, const json_t *options, kube_done_cb cb,
                     void *ud, kube_error *err);

/* GET a collection path with query (e.g. "labelSelector=..." escaped, or NULL). */
int kube_list(kube_client *c, const char *path, const char *query, kube_done_cb cb, void *ud,
              kube_error *err);

/*
 * Builds an API path into buf: "/api/v1" for the core group ("" or NULL),
 * else "/apis/<group>/<version>", then "/namespaces/<ns>" when ns is
 * non-empty, "/<resource>", "/<name>" and "/<sub>" when given. Rejects
 * segments containing '/', '?', '#', '%' or control bytes. Returns 0 or
 * HCP_EINVAL (also when buf is too small).
 */
int kube_path(char *buf, size_t len, const char *group, const char *version,
              const char *resource, const char *ns, const char *name, const char *sub);

/* The statistics rows (borrowed, valid until the next request finishes). */
const kube_stat *kube_client_stats(const kube_client *c, size_t *n);

#endif
