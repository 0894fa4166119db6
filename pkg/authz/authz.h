/*
 * authz/authz.h - who may read an endpoint: the caller's bearer token
 * checked by the API server (TokenReview), then the caller's right checked
 * by the API server (SubjectAccessReview), as controller-runtime's secure
 * metrics server does (filters.WithAuthenticationAndAuthorization).
 *
 * Both reviews are asynchronous requests of the controller's own kube
 * client on its libev loop: nothing blocks. A verdict (allowed, forbidden,
 * not authenticated) is kept for a short time (default 10 s) in a bounded
 * table keyed by a SHA-256 digest of the token and the attributes asked, so
 * a scrape every few seconds costs two API requests per TTL, and a token
 * never stays in memory longer than its request. Errors (API server
 * unreachable, the controller not allowed to create reviews) are never
 * kept. At most AUTHZ_MAX_INFLIGHT checks run at once; more are refused at
 * once (AUTHZ_BUSY), so a flood of tokens cannot queue unbounded work or
 * load the API server beyond that.
 *
 * The parsers (authz_parse_tokenreview(), authz_parse_sar()) take the API
 * server's answers, which are outside bytes: they check every field's type
 * and size and have a libFuzzer target (fuzz_review.c).
 */
#ifndef AUTHZ_AUTHZ_H
#define AUTHZ_AUTHZ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "kube/client.h"

#define AUTHZ_MAX_INFLIGHT 16   /* checks waiting for the API server at once */
#define AUTHZ_CACHE_SIZE 256    /* verdicts kept */
#define AUTHZ_DEFAULT_TTL 10.0  /* seconds a verdict is kept */
#define AUTHZ_MAX_TOKEN 16384   /* bytes of a bearer token accepted */
#define AUTHZ_MAX_GROUPS 1024   /* groups of a user passed on to the access review */

/* A check's outcome. */
typedef enum authz_verdict {
    AUTHZ_ALLOWED = 0,      /* authenticated and allowed: 200 */
    AUTHZ_UNAUTHENTICATED,  /* no token, or the API server did not accept it: 401 */
    AUTHZ_FORBIDDEN,        /* authenticated, not allowed: 403 */
    AUTHZ_ERROR,            /* the reviews could not be made: 503, not kept */
    AUTHZ_BUSY,             /* AUTHZ_MAX_INFLIGHT checks already wait: 429 */
    AUTHZ_PENDING           /* asked the API server; the callback will tell */
} authz_verdict;

/* What the caller wants to do: a non-resource URL (path set) or a resource
 * (resource set). Strings borrowed for the call. */
typedef struct authz_attrs {
    const char *verb;      /* "get" */
    const char *path;      /* non-resource URL, e.g. "/metrics"; NULL for a resource */
    const char *group;     /* API group of the resource ("" core) */
    const char *resource;  /* e.g. "hostedclusters" */
    const char *ns;        /* namespace, "" for cluster scope */
    const char *name;      /* object name, NULL or "" for any */
} authz_attrs;

/* The user a TokenReview authenticated, as the SubjectAccessReview wants it. */
typedef struct authz_user {
    char *username;  /* owned, non-empty */
    char *uid;       /* owned, may be "" */
    json_t *groups;  /* owned: array of strings */
    json_t *extra;   /* owned: object of arrays of strings */
} authz_user;

/* ---- pure parts (no I/O) ------------------------------------------------ */

/*
 * Reads a TokenReview answer. Returns 1 with *u filled (free with
 * authz_user_free()) when status.authenticated is true and status.user is
 * well formed; 0 when the token was not accepted (err may say the API
 * server's status.error); HCP_EPARSE with err naming the field when the
 * answer is malformed (also when authenticated without a username).
 */
int authz_parse_tokenreview(const json_t *obj, authz_user *u, char *err, size_t errlen);

/* Frees what authz_parse_tokenreview() filled; a zeroed user is accepted. */
void authz_user_free(authz_user *u);

/* A SubjectAccessReview (new reference) asking whether u may do a, or NULL
 * when out of memory or a lacks both path and resource. */
json_t *authz_sar_request(const authz_user *u, const authz_attrs *a);

/*
 * Reads a SubjectAccessReview answer. Returns 1 when status.allowed is
 * true and status.denied is not, 0 when not allowed (err gets
 * status.reason, or "no RBAC rule allows it"), HCP_EPARSE with err naming
 * the field when malformed.
 */
int authz_parse_sar(const json_t *obj, char *err, size_t errlen);

/* The cache key of a token and the attributes asked: hex SHA-256 of the
 * token, then the attributes. Returns 0, or HCP_EINVAL when key is too small. */
int authz_key(const char *token, const authz_attrs *a, char *key, size_t keylen);

/* ---- the checker (on the loop) ---------------------------------------- */

typedef struct authz authz_t;
typedef struct authz_check authz_check_t;

/* Completion of a pending check. reason is a sentence for the answer's body
 * (borrowed for the call). Runs on the loop, never inside authz_check(). */
typedef void (*authz_done_fn)(authz_verdict v, const char *reason, void *ud);

/*
 * A checker using client (borrowed; it must outlive the checker) for the
 * reviews. ttl <= 0 takes AUTHZ_DEFAULT_TTL. now_fn gives the time in
 * seconds (NULL: the monotonic clock), for tests. Returns NULL when out of
 * memory.
 */
authz_t *authz_new(kube_client *client, double ttl, double (*now_fn)(void));

/*
 * Checks token (the bearer token without "Bearer ", NULL or "" when the
 * request had none) against a. Returns AUTHZ_UNAUTHENTICATED at once for a
 * missing or oversized token, a kept verdict when one is fresh, AUTHZ_BUSY
 * when too many checks wait, AUTHZ_ERROR when the review cannot be sent;
 * otherwise AUTHZ_PENDING with *out set: done runs later, exactly once,
 * unless authz_cancel(*out) comes first. reason (may be NULL) receives a
 * sentence for the answer's body of an immediate verdict.
 */
authz_verdict authz_check(authz_t *z, const char *token, const authz_attrs *a, authz_done_fn done,
                          void *ud, authz_check_t **out, char *reason, size_t reasonlen);

/* Abandons a pending check: done is not called, the review request is
 * cancelled. NULL is accepted. Not from inside that check's done. */
void authz_cancel(authz_check_t *c);

/* Counts for /metrics and tests. */
typedef struct authz_stats {
    unsigned long reviews;   /* TokenReviews and SubjectAccessReviews sent */
    unsigned long hits;      /* checks answered from the kept verdicts */
    unsigned long verdicts[AUTHZ_PENDING]; /* checks by outcome */
} authz_stats;

const authz_stats *authz_get_stats(const authz_t *z);

/* Cancels every pending check (no callbacks) and frees the checker. NULL is accepted. */
void authz_free(authz_t *z);

#endif
