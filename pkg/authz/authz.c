/*
 * authz/authz.c - TokenReview and SubjectAccessReview through the kube
 * client, with a small table of recent verdicts.
 */
#include "authz/authz.h"

#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/error.h"
#include "base/list.h"

#define KEY_MAX 640
#define TOKENREVIEWS "/apis/authentication.k8s.io/v1/tokenreviews"
#define SARS "/apis/authorization.k8s.io/v1/subjectaccessreviews"

/* One kept verdict. */
typedef struct entry {
    char key[KEY_MAX];     /* authz_key(); "" when the slot is free */
    authz_verdict v;       /* ALLOWED, UNAUTHENTICATED or FORBIDDEN */
    char reason[256];      /* the sentence given with it */
    double expires;        /* now_fn() time after which it is not used */
} entry;

struct authz_check {
    authz_t *z;
    char key[KEY_MAX];
    authz_attrs a;             /* strings owned (copies) */
    char *token;               /* owned until the TokenReview is sent, then wiped */
    authz_user user;           /* after the TokenReview */
    kube_request *req;         /* the review in flight */
    authz_done_fn done;
    void *ud;
    hcp_link_t link;           /* on the checker's pending list */
};

struct authz {
    kube_client *client;   /* borrowed */
    double ttl;
    double (*now)(void);
    entry cache[AUTHZ_CACHE_SIZE];
    hcp_link_t pending;     /* checks waiting for the API server */
    int npending;
    authz_stats stats;
};

/* ---- pure parts ---------------------------------------------------------- */

static bool all_strings(const json_t *arr, size_t max)
{
    size_t i;
    json_t *v;

    if (!json_is_array(arr) || json_array_size(arr) > max)
        return false;
    json_array_foreach(arr, i, v) {
        if (!json_is_string(v))
            return false;
    }
    return true;
}

void authz_user_free(authz_user *u)
{
    free(u->username);
    free(u->uid);
    json_decref(u->groups);
    json_decref(u->extra);
    memset(u, 0, sizeof(*u));
}

int authz_parse_tokenreview(const json_t *obj, authz_user *u, char *err, size_t errlen)
{
    const json_t *st = json_object_get(obj, "status"), *user, *v, *groups, *extra;
    const char *k;
    json_t *vals;

    memset(u, 0, sizeof(*u));
    if (!json_is_object(obj) || !json_is_object(st))
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: no status object");
    v = json_object_get(st, "authenticated");
    if (v && !json_is_boolean(v))
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: status.authenticated is not a boolean");
    if (!json_is_true(v)) {
        const json_t *e = json_object_get(st, "error");
        hcp_errf(err, errlen, 0, "%.200s",
                 json_is_string(e) ? json_string_value(e) : "the token was not accepted");
        return 0;
    }
    user = json_object_get(st, "user");
    if (!json_is_object(user))
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: status.user is not an object");
    v = json_object_get(user, "username");
    if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > 1024)
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: status.user.username is not a name");
    groups = json_object_get(user, "groups");
    if (groups && !all_strings(groups, AUTHZ_MAX_GROUPS))
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "TokenReview: status.user.groups is not a list of strings");
    extra = json_object_get(user, "extra");
    if (extra && !json_is_object(extra))
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: status.user.extra is not an object");
    json_object_foreach((json_t *)extra, k, vals) {
        if (!all_strings(vals, AUTHZ_MAX_GROUPS))
            return hcp_errf(err, errlen, HCP_EPARSE,
                            "TokenReview: status.user.extra[\"%.60s\"] is not a list of strings",
                            k);
    }
    const json_t *uid = json_object_get(user, "uid");
    if (uid && !json_is_string(uid))
        return hcp_errf(err, errlen, HCP_EPARSE, "TokenReview: status.user.uid is not a string");
    u->username = strdup(json_string_value(v));
    u->uid = strdup(uid ? json_string_value(uid) : "");
    u->groups = groups ? json_deep_copy(groups) : json_array();
    u->extra = extra ? json_deep_copy(extra) : json_object();
    if (!u->username || !u->uid || !u->groups || !u->extra) {
        authz_user_free(u);
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    }
    return 1;
}

json_t *authz_sar_request(const authz_user *u, const authz_attrs *a)
{
    json_t *attrs;

    if (a->path)
        attrs = json_pack("{s:s, s:s}", "path", a->path, "verb", a->verb);
    else if (a->resource)
        attrs = json_pack("{s:s, s:s, s:s, s:s, s:s}", "verb", a->verb, "group",
                          a->group ? a->group : "", "resource", a->resource, "namespace",
                          a->ns ? a->ns : "", "name", a->name ? a->name : "");
    else
        return NULL;
    if (!attrs)
        return NULL;
    return json_pack("{s:s, s:s, s:{s:o, s:s, s:s, s:O, s:O}}", "apiVersion",
                     "authorization.k8s.io/v1", "kind", "SubjectAccessReview", "spec",
                     a->path ? "nonResourceAttributes" : "resourceAttributes", attrs, "user",
                     u->username, "uid", u->uid, "groups", u->groups, "extra", u->extra);
}

int authz_parse_sar(const json_t *obj, char *err, size_t errlen)
{
    const json_t *st = json_object_get(obj, "status"), *allowed, *denied, *reason;

    if (!json_is_object(obj) || !json_is_object(st))
        return hcp_errf(err, errlen, HCP_EPARSE, "SubjectAccessReview: no status object");
    allowed = json_object_get(st, "allowed");
    denied = json_object_get(st, "denied");
    reason = json_object_get(st, "reason");
    if (!json_is_boolean(allowed))
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "SubjectAccessReview: status.allowed is not a boolean");
    if (denied && !json_is_boolean(denied))
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "SubjectAccessReview: status.denied is not a boolean");
    if (reason && !json_is_string(reason))
        return hcp_errf(err, errlen, HCP_EPARSE,
                        "SubjectAccessReview: status.reason is not a string");
    if (json_is_true(allowed) && !json_is_true(denied)) {
        hcp_errf(err, errlen, 0, "allowed");
        return 1;
    }
    hcp_errf(err, errlen, 0, "%.200s",
             reason && json_string_length(reason) ? json_string_value(reason)
                                                  : "no RBAC rule allows it");
    return 0;
}

int authz_key(const char *token, const authz_attrs *a, char *key, size_t keylen)
{
    unsigned char d[32];
    char hex[65];
    int n;

    if (gnutls_hash_fast(GNUTLS_DIG_SHA256, token, strlen(token), d) < 0)
        return HCP_EINVAL;
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
    if (a->path)
        n = snprintf(key, keylen, "%s|%s|url|%s", hex, a->verb, a->path);
    else
        n = snprintf(key, keylen, "%s|%s|res|%s|%s|%s|%s", hex, a->verb,
                     a->group ? a->group : "", a->resource ? a->resource : "", a->ns ? a->ns : "",
                     a->name ? a->name : "");
    return n < 0 || (size_t)n >= keylen ? HCP_EINVAL : 0;
}

/* ---- the table of verdicts ---------------------------------------------- */

static entry *lookup(authz_t *z, const char *key, double now)
{
    for (size_t i = 0; i < AUTHZ_CACHE_SIZE; i++)
        if (z->cache[i].key[0] && z->cache[i].expires > now && strcmp(z->cache[i].key, key) == 0)
            return &z->cache[i];
    return NULL;
}

/* Keeps a verdict in a free or expired slot, else in place of the one that
 * expires first (the table stays bounded). */
static void keep(authz_t *z, const char *key, authz_verdict v, const char *reason, double now)
{
    entry *slot = NULL;

    for (size_t i = 0; i < AUTHZ_CACHE_SIZE; i++) {
        entry *e = &z->cache[i];
        if (e->key[0] == '\0' || e->expires <= now || strcmp(e->key, key) == 0) {
            slot = e;
            break;
        }
        if (slot == NULL || e->expires < slot->expires)
            slot = e;
    }
    snprintf(slot->key, sizeof(slot->key), "%s", key);
    slot->v = v;
    snprintf(slot->reason, sizeof(slot->reason), "%.255s", reason ? reason : "");
    slot->expires = now + z->ttl;
}

/* ---- the checker ------------------------------------------------------------ */

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

authz_t *authz_new(kube_client *client, double ttl, double (*now_fn)(void))
{
    authz_t *z = calloc(1, sizeof(*z));

    if (!z)
        return NULL;
    z->client = client;
    z->ttl = ttl > 0 ? ttl : AUTHZ_DEFAULT_TTL;
    z->now = now_fn ? now_fn : mono_now;
    hcp_list_init(&z->pending);
    return z;
}

const authz_stats *authz_get_stats(const authz_t *z)
{
    return &z->stats;
}

static void wipe_token(authz_check_t *c)
{
    kube_secret_free(c->token); /* zeroed, not left in freed memory */
    c->token = NULL;
}

static void check_free(authz_check_t *c)
{
    authz_t *z = c->z;

    hcp_list_remove(&c->link);
    z->npending--;
    wipe_token(c);
    authz_user_free(&c->user);
    free((char *)c->a.verb);
    free((char *)c->a.path);
    free((char *)c->a.group);
    free((char *)c->a.resource);
    free((char *)c->a.ns);
    free((char *)c->a.name);
    free(c);
}

/* Ends a check: keeps a definite verdict, tells the caller, frees it. */
static void finish(authz_check_t *c, authz_verdict v, const char *reason)
{
    authz_t *z = c->z;
    authz_done_fn done = c->done;
    void *ud = c->ud;
    char why[256];

    snprintf(why, sizeof(why), "%.255s", reason);
    if (v != AUTHZ_ERROR)
        keep(z, c->key, v, why, z->now());
    z->stats.verdicts[v]++;
    c->req = NULL;
    check_free(c);
    done(v, why, ud);
}

/* Posts obj (consumed) to collection; the answer goes to cb. */
static int post(authz_check_t *c, const char *collection, json_t *obj, kube_done_cb cb,
                char *why, size_t whylen)
{
    kube_error e;
    char *body = obj ? json_dumps(obj, JSON_COMPACT) : NULL;
    kube_call call = {.verb = KUBE_VERB_CREATE, .path = collection, .body = body,
                      .body_len = body ? strlen(body) : 0, .on_done = cb, .ud = c,
                      .no_ratelimit = true};
    int rc;

    json_decref(obj);
    if (!body)
        return hcp_errf(why, whylen, HCP_ENOMEM, "out of memory");
    rc = kube_client_call(c->z->client, &call, &c->req, &e);
    memset(body, 0, strlen(body)); /* may hold the token */
    free(body);
    if (rc < 0)
        return hcp_errf(why, whylen, rc, "cannot ask the API server: %.200s", e.message);
    c->z->stats.reviews++;
    return 0;
}

static void on_sar(kube_client *kc, const kube_error *err, json_t *obj, void *ud)
{
    authz_check_t *c = ud;
    char why[256];
    int rc;

    (void)kc;
    if (err) {
        snprintf(why, sizeof(why), "the SubjectAccessReview failed: %.200s", err->message);
        finish(c, AUTHZ_ERROR, why);
        return;
    }
    rc = authz_parse_sar(obj, why, sizeof(why));
    if (rc < 0) {
        finish(c, AUTHZ_ERROR, why);
        return;
    }
    if (rc == 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "%.60s may not %s this: %.150s", c->user.username, c->a.verb,
                 why);
        finish(c, AUTHZ_FORBIDDEN, msg);
        return;
    }
    finish(c, AUTHZ_ALLOWED, "allowed");
}

static void on_tokenreview(kube_client *kc, const kube_error *err, json_t *obj, void *ud)
{
    authz_check_t *c = ud;
    char why[256];
    int rc;

    (void)kc;
    if (err) {
        snprintf(why, sizeof(why), "the TokenReview failed: %.200s", err->message);
        finish(c, AUTHZ_ERROR, why);
        return;
    }
    rc = authz_parse_tokenreview(obj, &c->user, why, sizeof(why));
    if (rc < 0) {
        finish(c, AUTHZ_ERROR, why);
        return;
    }
    if (rc == 0) {
        char msg[256];
        snprintf(msg, sizeof(msg), "the bearer token was not accepted: %.200s", why);
        finish(c, AUTHZ_UNAUTHENTICATED, msg);
        return;
    }
    if (post(c, SARS, authz_sar_request(&c->user, &c->a), on_sar, why, sizeof(why)) < 0)
        finish(c, AUTHZ_ERROR, why);
}

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

authz_verdict authz_check(authz_t *z, const char *token, const authz_attrs *a, authz_done_fn done,
                          void *ud, authz_check_t **out, char *reason, size_t reasonlen)
{
    char key[KEY_MAX], why[256];
    entry *e;
    authz_check_t *c;
    json_t *tr;

    *out = NULL;
    if (token == NULL || token[0] == '\0' || strlen(token) > AUTHZ_MAX_TOKEN) {
        hcp_errf(reason, reasonlen, 0, "%s",
                 token && token[0] ? "the bearer token is too long"
                                   : "a bearer token is required (Authorization: Bearer ...)");
        z->stats.verdicts[AUTHZ_UNAUTHENTICATED]++;
        return AUTHZ_UNAUTHENTICATED;
    }
    if (authz_key(token, a, key, sizeof(key)) != 0) {
        hcp_errf(reason, reasonlen, 0, "the request's attributes are too long");
        z->stats.verdicts[AUTHZ_FORBIDDEN]++;
        return AUTHZ_FORBIDDEN;
    }
    if ((e = lookup(z, key, z->now())) != NULL) {
        hcp_errf(reason, reasonlen, 0, "%s", e->reason);
        z->stats.hits++;
        z->stats.verdicts[e->v]++;
        return e->v;
    }
    if (z->npending >= AUTHZ_MAX_INFLIGHT) {
        hcp_errf(reason, reasonlen, 0, "%d requests are already being reviewed; try again",
                 AUTHZ_MAX_INFLIGHT);
        z->stats.verdicts[AUTHZ_BUSY]++;
        return AUTHZ_BUSY;
    }
    c = calloc(1, sizeof(*c));
    if (!c)
        goto oom;
    c->z = z;
    c->done = done;
    c->ud = ud;
    snprintf(c->key, sizeof(c->key), "%s", key);
    hcp_list_push_front(&z->pending, &c->link);
    z->npending++;
    c->token = strdup(token);
    c->a.verb = dup_or_null(a->verb ? a->verb : "get");
    c->a.path = dup_or_null(a->path);
    c->a.group = dup_or_null(a->group);
    c->a.resource = dup_or_null(a->resource);
    c->a.ns = dup_or_null(a->ns);
    c->a.name = dup_or_null(a->name);
    if (!c->token || !c->a.verb || (a->path && !c->a.path) || (a->group && !c->a.group) ||
        (a->resource && !c->a.resource) || (a->ns && !c->a.ns) || (a->name && !c->a.name))
        goto oom;
    tr = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "authentication.k8s.io/v1", "kind",
                   "TokenReview", "spec", "token", c->token);
    wipe_token(c);
    if (post(c, TOKENREVIEWS, tr, on_tokenreview, why, sizeof(why)) < 0) {
        check_free(c);
        hcp_errf(reason, reasonlen, 0, "%s", why);
        z->stats.verdicts[AUTHZ_ERROR]++;
        return AUTHZ_ERROR;
    }
    *out = c;
    return AUTHZ_PENDING;
oom:
    if (c)
        check_free(c);
    hcp_errf(reason, reasonlen, 0, "out of memory");
    z->stats.verdicts[AUTHZ_ERROR]++;
    return AUTHZ_ERROR;
}

void authz_cancel(authz_check_t *c)
{
    if (!c)
        return;
    kube_request_cancel(c->req);
    check_free(c);
}

void authz_free(authz_t *z)
{
    if (!z)
        return;
    while (!hcp_list_empty(&z->pending))
        authz_cancel(hcp_list_entry(z->pending.next, authz_check_t, link));
    memset(z->cache, 0, sizeof(z->cache));
    free(z);
}
