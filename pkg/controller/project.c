/* project.c: ChangesPaused/ChangesPending projected into hosted ClusterVersions. */
#include "controller/project.h"

#include "controller/objmap.h"

#include <libfyaml.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/cache.h"
#include "kube/error.h"
#include "kube/ratelimit.h"
#include "kube/watch.h"
#include "log/log.h"

#define CV_COLLECTION "/apis/config.openshift.io/v1/clusterversions"
#define CV_PATH CV_COLLECTION "/" CTL_PROJECT_CV_NAME
#define COND_PAUSED "ChangesPaused"
#define COND_PENDING "ChangesPending"
#define PATH_LEN 512
#define NS_LEN 64            /* a namespace name is at most 63 bytes */
#define HEALTH_INTERVAL 2.0  /* seconds between recovery checks after an API error */
#define REASSERT_QUIET 60.0  /* re-asserts this far apart are not a fight */

/* ---- small helpers ------------------------------------------------------ */

static void errf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void errf(char *buf, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!buf || len == 0)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

static bool str_eq(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "") == 0;
}

/* Removes the parts of library messages that differ from one attempt to the
 * next (libfyaml's "<memory-@0x...-0x...>:" buffer address, libcurl's
 * "after N ms"), so a state repeated by retries reads the same. In place. */
static void scrub(char *msg)
{
    char *p;
    while ((p = strstr(msg, "<memory-@")) != NULL) {
        char *end = strchr(p, '>');
        if (!end)
            break;
        end++;
        if (*end == ':')
            end++;
        if (*end == ' ')
            end++;
        memmove(p, end, strlen(end) + 1);
    }
    for (p = msg; (p = strstr(p, " after ")) != NULL;) {
        char *d = p + 7, *q = d;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > d && strncmp(q, " ms", 3) == 0)
            memmove(p, q + 3, strlen(q + 3) + 1);
        else
            p++;
    }
}

/* A namespace name (RFC 1123 label): 1-63 of [a-z0-9-], alphanumeric ends. */
static bool valid_namespace(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= NS_LEN || s[0] == '-' || s[n - 1] == '-')
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

/* ---- pure parts ----------------------------------------------------------- */

int ctl_project_secret_kubeconfig(const json_t *secret, char **out, size_t *outlen, char *err,
                                  size_t errlen)
{
    *out = NULL;
    *outlen = 0;
    const json_t *data = json_object_get(secret, "data");
    if (!json_is_object(data)) {
        errf(err, errlen, "Secret %s has no data", CTL_PROJECT_SECRET);
        return HCP_ECONFIG;
    }
    const json_t *v = json_object_get(data, CTL_PROJECT_SECRET_KEY);
    if (!v) {
        errf(err, errlen, "Secret %s has no key %s", CTL_PROJECT_SECRET, CTL_PROJECT_SECRET_KEY);
        return HCP_ECONFIG;
    }
    if (!json_is_string(v)) {
        errf(err, errlen, "Secret %s key %s is not a string", CTL_PROJECT_SECRET,
             CTL_PROJECT_SECRET_KEY);
        return HCP_ECONFIG;
    }
    size_t inlen = json_string_length(v);
    if (inlen == 0) {
        errf(err, errlen, "Secret %s key %s is empty", CTL_PROJECT_SECRET, CTL_PROJECT_SECRET_KEY);
        return HCP_ECONFIG;
    }
    if (inlen / 4 * 3 > CTL_PROJECT_KUBECONFIG_MAX + 3) {
        errf(err, errlen, "Secret %s key %s is larger than %d bytes", CTL_PROJECT_SECRET,
             CTL_PROJECT_SECRET_KEY, CTL_PROJECT_KUBECONFIG_MAX);
        return HCP_ECONFIG;
    }
    char *buf = NULL;
    size_t n = 0;
    int rc = kube_base64_decode(json_string_value(v), inlen, &buf, &n);
    if (rc == HCP_ENOMEM) {
        errf(err, errlen, "out of memory");
        return HCP_ENOMEM;
    }
    if (rc < 0 || !buf) {
        errf(err, errlen, "Secret %s key %s is not valid base64", CTL_PROJECT_SECRET,
             CTL_PROJECT_SECRET_KEY);
        free(buf);
        return HCP_ECONFIG;
    }
    if (n == 0 || n > CTL_PROJECT_KUBECONFIG_MAX || memchr(buf, '\0', n)) {
        errf(err, errlen, "Secret %s key %s %s", CTL_PROJECT_SECRET, CTL_PROJECT_SECRET_KEY,
             n == 0 ? "decodes to nothing" : n > CTL_PROJECT_KUBECONFIG_MAX
                                                 ? "is too large"
                                                 : "is binary, not a kubeconfig");
        free(buf);
        return HCP_ECONFIG;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

int ctl_project_rewrite_server(const char *server, const char *hcpns, char *out, size_t outlen,
                               char *err, size_t errlen)
{
    const char *scheme, *p, *host_end, *port = NULL, *path;
    size_t port_len = 0;

    if (!server || !hcpns || !valid_namespace(hcpns)) {
        errf(err, errlen, "namespace \"%s\" is not a valid namespace name", hcpns ? hcpns : "");
        return HCP_EINVAL;
    }
    if (strncmp(server, "https://", 8) == 0) {
        scheme = "https";
        p = server + 8;
    } else if (strncmp(server, "http://", 7) == 0) {
        scheme = "http";
        p = server + 7;
    } else {
        errf(err, errlen, "server \"%.200s\" is not an http(s) URL", server);
        return HCP_EINVAL;
    }
    /* Host: a bracketed IPv6 literal or up to ':' or '/'. */
    if (*p == '[') {
        host_end = strchr(p, ']');
        if (!host_end) {
            errf(err, errlen, "server \"%.200s\" has an unterminated IPv6 address", server);
            return HCP_EINVAL;
        }
        host_end++;
    } else {
        host_end = p + strcspn(p, ":/?#");
    }
    if (host_end == p) {
        errf(err, errlen, "server \"%.200s\" has no host", server);
        return HCP_EINVAL;
    }
    path = host_end;
    if (*host_end == ':') {
        port = host_end + 1;
        port_len = strspn(port, "0123456789");
        path = port + port_len;
        long v = 0;
        for (size_t i = 0; i < port_len && v <= 65535; i++)
            v = v * 10 + (port[i] - '0');
        if (port_len == 0 || port_len > 5 || v < 1 || v > 65535) {
            errf(err, errlen, "server \"%.200s\" has an invalid port", server);
            return HCP_EINVAL;
        }
    }
    if (*path != '\0' && *path != '/') {
        errf(err, errlen, "server \"%.200s\" is not of the form scheme://host[:port][/path]",
             server);
        return HCP_EINVAL;
    }
    for (const char *q = path; *q; q++)
        if ((unsigned char)*q <= ' ' || *q == '?' || *q == '#' || *q == 0x7f) {
            errf(err, errlen, "server \"%.200s\" has a query, fragment or control byte", server);
            return HCP_EINVAL;
        }
    int n;
    if (port)
        n = snprintf(out, outlen, "%s://kube-apiserver.%s.svc:%.*s%s", scheme, hcpns,
                     (int)port_len, port, path);
    else
        n = snprintf(out, outlen, "%s://kube-apiserver.%s.svc:%s%s", scheme, hcpns,
                     scheme[4] == 's' ? "443" : "80", path);
    if (n < 0 || (size_t)n >= outlen) {
        errf(err, errlen, "rewritten server address is too long");
        return HCP_EINVAL;
    }
    return 0;
}

/* Looks up a non-empty scalar under a mapping. */
static const char *yaml_scalar(struct fy_node *map, const char *key)
{
    if (!map || !fy_node_is_mapping(map))
        return NULL;
    struct fy_node *v = fy_node_mapping_lookup_value_by_simple_key(map, key, strlen(key));
    if (!v || !fy_node_is_scalar(v))
        return NULL;
    const char *s = fy_node_get_scalar0(v);
    return s && s[0] ? s : NULL;
}

/* Finds a file reference in clusters[].cluster or users[].user; returns the
 * offending field name, or NULL. */
static const char *file_reference(struct fy_node *root, const char *list, const char *inner,
                                  const char *const *fields)
{
    struct fy_node *seq = fy_node_mapping_lookup_value_by_simple_key(root, list, strlen(list));
    struct fy_node *item;
    void *iter = NULL;
    if (!seq || !fy_node_is_sequence(seq))
        return NULL;
    while ((item = fy_node_sequence_iterate(seq, &iter)) != NULL) {
        struct fy_node *m =
            fy_node_is_mapping(item)
                ? fy_node_mapping_lookup_value_by_simple_key(item, inner, strlen(inner))
                : NULL;
        for (size_t i = 0; m && fields[i]; i++)
            if (yaml_scalar(m, fields[i]))
                return fields[i];
    }
    return NULL;
}

static void diag_discard(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

/* Refuses kubeconfigs that point at local files (see the header). */
static int vet_kubeconfig(const char *yaml, size_t len, char *err, size_t errlen)
{
    static const char *const cluster_fields[] = {"certificate-authority", NULL};
    static const char *const user_fields[] = {"client-certificate", "client-key", "tokenFile",
                                              "token-file", NULL};
    struct fy_parse_cfg pcfg = {.flags = FYPCF_QUIET};
    struct fy_diag_cfg dcfg;
    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = diag_discard;
    dcfg.colorize = false;
    pcfg.diag = fy_diag_create(&dcfg);
    struct fy_document *fyd = fy_document_build_from_string(&pcfg, yaml, len);
    fy_diag_unref(pcfg.diag);
    if (!fyd)
        return 0; /* the loader reports the syntax error with detail */
    struct fy_node *root = fy_document_root(fyd);
    const char *bad = NULL;
    if (root && fy_node_is_mapping(root)) {
        bad = file_reference(root, "clusters", "cluster", cluster_fields);
        if (!bad)
            bad = file_reference(root, "users", "user", user_fields);
    }
    if (bad)
        errf(err, errlen, "kubeconfig refers to a local file (%s); only inline credentials "
                          "(*-data, token) are accepted", bad);
    fy_document_destroy(fyd);
    return bad ? HCP_ECONFIG : 0;
}

int ctl_project_load_kubeconfig(const char *yaml, size_t len, const char *hcpns, bool rewrite,
                                kube_config *cfg, char *err, size_t errlen)
{
    kube_error ke;
    char server[PATH_LEN];
    int rc;

    memset(cfg, 0, sizeof(*cfg));
    if (!yaml || len == 0) {
        errf(err, errlen, "kubeconfig is empty");
        return HCP_ECONFIG;
    }
    rc = vet_kubeconfig(yaml, len, err, errlen);
    if (rc < 0)
        return rc;
    rc = kube_config_load_yaml(cfg, yaml, len, NULL, NULL, &ke);
    if (rc < 0) {
        errf(err, errlen, "%s", ke.message);
        return rc;
    }
    if (cfg->token_file) { /* defense in depth: vet_kubeconfig refuses these */
        errf(err, errlen, "kubeconfig refers to a local token file");
        rc = HCP_ECONFIG;
        goto fail;
    }
    if (rewrite) {
        rc = ctl_project_rewrite_server(cfg->server, hcpns, server, sizeof(server), err, errlen);
        if (rc < 0) {
            rc = HCP_ECONFIG;
            goto fail;
        }
        char *s = strdup(server);
        if (!s) {
            errf(err, errlen, "out of memory");
            rc = HCP_ENOMEM;
            goto fail;
        }
        free(cfg->server);
        cfg->server = s;
    }
    return 0;
fail:
    kube_config_free(cfg);
    return rc;
}

static bool cond_is(const json_t *c, const char *type)
{
    const char *t = json_string_value(json_object_get(c, "type"));
    return t && strcmp(t, type) == 0;
}

static bool cond_matches(const json_t *c, const ctl_project_cond_t *want)
{
    const char *status = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    const char *message = json_string_value(json_object_get(c, "message"));
    return status && strcmp(status, want->status ? "True" : "False") == 0 && reason &&
           str_eq(reason, want->reason) && message && str_eq(message, want->message);
}

bool ctl_project_conds_match(const json_t *conditions, const ctl_project_conds_t *want)
{
    int paused = 0, pending = 0;
    size_t i;
    const json_t *c;
    if (!json_is_array(conditions))
        return false;
    json_array_foreach(conditions, i, c) {
        if (cond_is(c, COND_PAUSED)) {
            if (++paused > 1 || !cond_matches(c, &want->paused))
                return false;
        } else if (cond_is(c, COND_PENDING)) {
            if (++pending > 1 || !cond_matches(c, &want->pending))
                return false;
        }
    }
    return paused == 1 && pending == 1;
}

/* Our condition as written, lastTransitionTime carried over from `old`
 * while the status does not change. */
static json_t *condition(const json_t *old, const char *type, const ctl_project_cond_t *want,
                         sched_time_t since)
{
    char ts[32];
    const char *status = want->status ? "True" : "False";
    const char *old_status = json_string_value(json_object_get(old, "status"));
    const char *old_ltt = json_string_value(json_object_get(old, "lastTransitionTime"));
    sched_format_utc(since, ts, sizeof(ts));
    const char *ltt = old_status && old_ltt && strcmp(old_status, status) == 0 ? old_ltt : ts;
    return json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type, "status", status,
                     "lastTransitionTime", ltt, "reason", want->reason ? want->reason : "",
                     "message", want->message ? want->message : "");
}

json_t *ctl_project_patch(const json_t *conditions, const ctl_project_conds_t *want,
                          sched_time_t paused_since, sched_time_t pending_since,
                          const char *resource_version, int *err)
{
    json_t *conds = NULL, *patch = NULL, *c;
    const json_t *old_paused = NULL, *old_pending = NULL;
    size_t i;

    *err = 0;
    if (ctl_project_conds_match(conditions, want))
        return NULL;
    conds = json_array();
    if (!conds)
        goto fail;
    if (json_is_array(conditions)) {
        json_array_foreach(conditions, i, c) {
            if (cond_is(c, COND_PAUSED)) {
                if (!old_paused)
                    old_paused = c;
            } else if (cond_is(c, COND_PENDING)) {
                if (!old_pending)
                    old_pending = c;
            } else if (json_array_append_new(conds, json_deep_copy(c))) {
                goto fail;
            }
        }
    }
    if (json_array_append_new(conds, condition(old_paused, COND_PAUSED, &want->paused,
                                               paused_since)) ||
        json_array_append_new(conds, condition(old_pending, COND_PENDING, &want->pending,
                                               pending_since)))
        goto fail;
    patch = json_pack("{s:{s:O}}", "status", "conditions", conds);
    if (!patch)
        goto fail;
    if (resource_version &&
        json_object_set_new(patch, "metadata",
                            json_pack("{s:s}", "resourceVersion", resource_version)))
        goto fail;
    json_decref(conds);
    return patch;
fail:
    json_decref(patch);
    json_decref(conds);
    *err = 1;
    return NULL;
}

/* ---- state ---------------------------------------------------------------- */

/* The slim view of ClusterVersion `version`: only its conditions, which a
 * merge patch must carry back whole. */
typedef struct cv_view {
    json_t *conditions;   /* deep copy of status.conditions, or NULL */
} cv_view_t;

/* A wanted condition, owned copy. */
typedef struct want_cond {
    bool status;
    char *reason, *message;
    sched_time_t since;   /* lastTransitionTime when the status changes */
} want_cond_t;

/* One HostedCluster. */
typedef struct entry {
    ctl_objkey_t key;          /* ns and name in the module's map */
    struct entry *znext;       /* forgotten entries awaiting release */
    ctl_project_t *p;
    char *ns, *name;           /* owned */
    char hcpns[NS_LEN * 2 + 2]; /* "<ns>-<name>" */
    bool gone;                 /* forgotten; released from the reaper */

    bool have_want;
    want_cond_t paused, pending;

    /* The Secret. */
    kube_request *secret_req;  /* GET in flight */
    ev_timer secret_timer;     /* periodic re-read or retry */
    bool secret_retry;         /* the timer is an error retry (not the periodic re-read) */
    kube_backoff secret_backoff;
    kube_backoff absent_backoff; /* the same while the Secret is missing or invalid */
    char secret_rv[64];        /* resourceVersion of the Secret in use */
    const char *secret_reason; /* static, NULL while the Secret is usable */
    char secret_msg[512];

    /* The hosted API server; everything below is valid while `connected`. */
    bool connected;
    char *kubeconfig;          /* decoded bytes in use (owned) */
    size_t kubeconfig_len;
    kube_config cfg;
    kube_client client;
    kube_cache cache;
    kube_watch watch;
    const char *api_reason;    /* static, NULL while the server answers */
    char api_msg[512];
    ev_timer health;           /* recovery check while api_reason is set */
    uint64_t health_errors;    /* watch error count at the last check */

    /* Writes. */
    bool writing;              /* a patch is in flight */
    char sent_rv[64];          /* resourceVersion the patch was conditional on */
    ev_timer write_timer;      /* retry after a failed write */
    bool write_wait;           /* a failed write is backing off */
    kube_backoff write_backoff;
    const char *write_reason;  /* static, NULL when the last write succeeded */
    char write_msg[512];
    bool seen_right;           /* the ClusterVersion was seen as wanted since the
                                  wanted conditions last changed */
    double last_reassert;      /* ev_now() of the last re-assert, 0 = never */
    double reassert_at;        /* no re-assert before this ev_now() */
    kube_backoff reassert_backoff; /* paces a fight with another writer */

    ctl_project_status_t st;   /* last evaluated state */
} entry_t;

struct ctl_project {
    struct ev_loop *loop;
    kube_http *http;
    kube_client *mgmt;
    ctl_project_opts_t opts;
    bool leading;
    ctl_objmap_t entries;      /* entry_t by ns/name */
    entry_t *zombies;          /* forgotten, released by `reap` */
    ev_timer reap;
    uint64_t rng;
    ctl_project_stats_t stats;
};

static double rnd01(ctl_project_t *p)
{
    p->rng ^= p->rng >> 12;
    p->rng ^= p->rng << 25;
    p->rng ^= p->rng >> 27;
    return (double)((p->rng * 2685821657736338717ull) >> 11) / 9007199254740992.0;
}

/* Computes the entry's state from what is known and reports a change. */
static void evaluate(entry_t *e)
{
    ctl_project_t *p = e->p;
    ctl_project_status_t st = {.writes = e->st.writes};
    const kube_obj *o = e->connected && e->cache.synced
                            ? kube_cache_get(&e->cache, NULL, CTL_PROJECT_CV_NAME)
                            : NULL;
    const cv_view_t *cv = o ? o->data : NULL;

    if (e->gone)
        return;
    if (e->secret_reason) {
        st.reason = e->secret_reason;
        errf(st.message, sizeof(st.message), "%s", e->secret_msg);
    } else if (!e->connected) {
        st.reason = CTL_PROJECT_PENDING;
        errf(st.message, sizeof(st.message), "Reading Secret %s/%s.", e->hcpns,
                 CTL_PROJECT_SECRET);
    } else if (e->api_reason) {
        st.reason = e->api_reason;
        errf(st.message, sizeof(st.message), "%s", e->api_msg);
    } else if (!e->cache.synced) {
        st.reason = CTL_PROJECT_PENDING;
        errf(st.message, sizeof(st.message), "Connecting to the hosted API server %.300s.",
                 e->cfg.server);
    } else if (!o) {
        st.reason = CTL_PROJECT_CV_NOT_FOUND;
        errf(st.message, sizeof(st.message),
                 "ClusterVersion %s does not exist in the hosted cluster.", CTL_PROJECT_CV_NAME);
    } else if (e->write_reason) {
        st.reason = e->write_reason;
        errf(st.message, sizeof(st.message), "%s", e->write_msg);
    } else if (!e->have_want) {
        st.reason = CTL_PROJECT_PENDING;
        errf(st.message, sizeof(st.message), "No conditions decided yet.");
    } else {
        ctl_project_conds_t want = {
            {e->paused.status, e->paused.reason, e->paused.message},
            {e->pending.status, e->pending.reason, e->pending.message}};
        if (cv && ctl_project_conds_match(cv->conditions, &want)) {
            st.ok = true;
            st.reason = CTL_PROJECT_PROJECTED;
            errf(st.message, sizeof(st.message),
                     "ClusterVersion %s carries ChangesPaused and ChangesPending.",
                     CTL_PROJECT_CV_NAME);
        } else {
            st.reason = CTL_PROJECT_PENDING;
            errf(st.message, sizeof(st.message), "%s",
                     p->leading ? "Updating ClusterVersion conditions."
                                : "Waiting for leadership to update ClusterVersion conditions.");
        }
    }
    scrub(st.message);
    if (st.ok == e->st.ok && e->st.reason && strcmp(st.reason, e->st.reason) == 0) {
        /* Messages of repeated failures differ in details (timings), so
         * only a new reason is news; the message is kept current. */
        e->st = st;
        return;
    }
    e->st = st;
    log_kv(st.ok ? 1 : LOG_INFO, "ClusterVersion projection", "namespace", e->ns, "name",
           e->name, "reason", st.reason, "message", st.message, NULL);
    if (p->opts.on_change)
        p->opts.on_change(e->ns, e->name, p->opts.ud);
}

/* ---- writes --------------------------------------------------------------- */

static void secret_retry_soon(entry_t *e);

static bool transport_or_auth(const kube_error *err)
{
    return err->code == HCP_ETRANSPORT || err->code == HCP_ETLS || err->http_status == 401 ||
           err->http_status == 403;
}

static void set_api_error(entry_t *e, const kube_error *err)
{
    e->api_reason = CTL_PROJECT_UNREACHABLE;
    errf(e->api_msg, sizeof(e->api_msg), "Hosted API server %.200s: %s%s%s", e->cfg.server,
             err->http_status ? err->reason : hcp_strerror(err->code),
             err->message[0] ? ": " : "", err->message);
    e->health_errors = e->watch.stats.errors;
    if (!ev_is_active(&e->health)) {
        ev_timer_set(&e->health, HEALTH_INTERVAL, HEALTH_INTERVAL);
        ev_timer_start(e->p->loop, &e->health);
    }
    secret_retry_soon(e); /* credentials or address may have been rotated */
}

static void clear_api_error(entry_t *e)
{
    e->api_reason = NULL;
    e->api_msg[0] = '\0';
    ev_timer_stop(e->p->loop, &e->health);
    kube_backoff_reset(&e->secret_backoff);
}

static void sync_entry(entry_t *e);

static void write_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    ctl_project_t *p = e->p;
    (void)c;
    e->writing = false;
    if (e->gone)
        return;
    if (err) {
        const kube_obj *o = kube_cache_get(&e->cache, NULL, CTL_PROJECT_CV_NAME);
        if (err->http_status == 409) {
            p->stats.conflicts++;
            /* Retry at once when the watch already brought a newer version;
             * otherwise its update triggers the retry, and the timer is the
             * safety net should it not come. */
            if (o && strcmp(o->rv, e->sent_rv) != 0) {
                sync_entry(e);
                return;
            }
            ev_timer_stop(p->loop, &e->write_timer);
            ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, rnd01(p)), 0.);
            ev_timer_start(p->loop, &e->write_timer);
            return;
        }
        p->stats.write_errors++;
        if (transport_or_auth(err)) {
            set_api_error(e, err);
        } else if (err->http_status == 404) {
            e->write_reason = CTL_PROJECT_CV_NOT_FOUND;
            errf(e->write_msg, sizeof(e->write_msg),
                     "ClusterVersion %s: %s", CTL_PROJECT_CV_NAME, err->message);
        } else {
            e->write_reason = CTL_PROJECT_UPDATE_FAILED;
            errf(e->write_msg, sizeof(e->write_msg), "Patching ClusterVersion %s: %s%s%s",
                     CTL_PROJECT_CV_NAME, err->reason, err->reason[0] ? ": " : "",
                     err->message);
        }
        log_kv(LOG_ERROR, "ClusterVersion write failed", "namespace", e->ns, "name", e->name,
               "error", err->message, NULL);
        e->write_wait = true;
        ev_timer_stop(p->loop, &e->write_timer);
        ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, rnd01(p)), 0.);
        ev_timer_start(p->loop, &e->write_timer);
        evaluate(e);
        return;
    }
    kube_backoff_reset(&e->write_backoff);
    e->write_reason = NULL;
    if (e->api_reason)
        clear_api_error(e);
    /* The answer is the object as written: cache it now, so the next
     * comparison sees it (the watch event is then a duplicate the cache
     * drops). */
    if (json_is_object(obj)) {
        kube_error ke;
        kube_cache_apply(&e->cache, KUBE_EVENT_MODIFIED, obj, &ke);
    }
    /* The update callback does not run when the watch delivered this
     * version first (it arrived while the write was in flight). */
    sync_entry(e);
}

static void write_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    e->write_wait = false;
    sync_entry(e);
}

/* Writes our conditions when they differ and writing is possible, then
 * evaluates the state. */
static void sync_entry(entry_t *e)
{
    ctl_project_t *p = e->p;
    if (e->gone)
        return;
    if (!e->connected || !e->cache.synced || !e->have_want || e->writing) {
        evaluate(e);
        return;
    }
    const kube_obj *o = kube_cache_get(&e->cache, NULL, CTL_PROJECT_CV_NAME);
    const cv_view_t *cv = o ? o->data : NULL;
    if (!cv) {
        evaluate(e);
        return;
    }
    ctl_project_conds_t want = {{e->paused.status, e->paused.reason, e->paused.message},
                                {e->pending.status, e->pending.reason, e->pending.message}};
    if (ctl_project_conds_match(cv->conditions, &want)) {
        e->seen_right = true;
        e->write_reason = NULL;
        evaluate(e);
        return;
    }
    if (!p->leading || e->write_wait) {
        evaluate(e);
        return;
    }
    /* Re-asserting against another writer that keeps undoing it: the
     * first time at once, then paced with backoff so two writers never
     * ping-pong at full speed. */
    double now = ev_now(p->loop);
    if (e->seen_right && now < e->reassert_at) {
        if (!ev_is_active(&e->write_timer)) {
            ev_timer_set(&e->write_timer, e->reassert_at - now, 0.);
            ev_timer_start(p->loop, &e->write_timer);
        }
        evaluate(e);
        return;
    }
    int oom = 0;
    json_t *patch = ctl_project_patch(cv->conditions, &want, e->paused.since, e->pending.since,
                                      o->rv, &oom);
    if (!patch) {
        evaluate(e);
        return;
    }
    kube_error ke;
    snprintf(e->sent_rv, sizeof(e->sent_rv), "%s", o->rv);
    if (kube_merge_patch_status(&e->client, CV_PATH, patch, write_done, e, &ke) < 0) {
        p->stats.write_errors++;
        e->write_reason = CTL_PROJECT_UPDATE_FAILED;
        errf(e->write_msg, sizeof(e->write_msg), "Patching ClusterVersion %s: %s",
                 CTL_PROJECT_CV_NAME, ke.message);
        e->write_wait = true;
        ev_timer_set(&e->write_timer, kube_backoff_next(&e->write_backoff, rnd01(p)), 0.);
        ev_timer_start(p->loop, &e->write_timer);
    } else {
        e->writing = true;
        p->stats.writes++;
        e->st.writes++;
        if (e->seen_right) {
            if (e->last_reassert == 0 || now - e->last_reassert > REASSERT_QUIET)
                kube_backoff_reset(&e->reassert_backoff);
            e->last_reassert = now;
            e->reassert_at = now + kube_backoff_next(&e->reassert_backoff, rnd01(p));
            p->stats.reasserts++;
            log_kv(LOG_INFO, "ClusterVersion conditions re-asserted", "namespace", e->ns,
                   "name", e->name, NULL);
        }
        e->seen_right = false;
    }
    json_decref(patch);
    evaluate(e);
}

/* ---- the hosted watch ----------------------------------------------------- */

static int cv_extract(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    (void)strings;
    (void)ud;
    cv_view_t *v = calloc(1, sizeof(*v));
    if (!v)
        return HCP_ENOMEM;
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
    if (json_is_array(conds)) {
        v->conditions = json_deep_copy(conds);
        if (!v->conditions) {
            free(v);
            return HCP_ENOMEM;
        }
    }
    *out = v;
    return 0;
}

static void cv_release(void *data, kube_intern *strings, void *ud)
{
    cv_view_t *v = data;
    (void)strings;
    (void)ud;
    if (v)
        json_decref(v->conditions);
    free(v);
}

static void cv_seen(entry_t *e)
{
    if (e->api_reason)
        clear_api_error(e);
    sync_entry(e);
}

static void cv_add(const kube_obj *o, void *ud)
{
    (void)o;
    cv_seen(ud);
}

static void cv_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    (void)o;
    cv_seen(ud);
}

static void cv_delete(const kube_obj *o, void *ud)
{
    entry_t *e = ud;
    (void)o;
    e->seen_right = false;
    cv_seen(e);
}

static void watch_synced(kube_watch *w, void *ud)
{
    (void)w;
    cv_seen(ud);
}

static void watch_error(kube_watch *w, const kube_error *err, void *ud)
{
    entry_t *e = ud;
    (void)w;
    if (e->gone)
        return;
    if (err->http_status == 404) {
        /* The ClusterVersion API itself is not served. */
        e->api_reason = CTL_PROJECT_CV_NOT_FOUND;
        errf(e->api_msg, sizeof(e->api_msg),
                 "The hosted API server does not serve %s: %s", CV_COLLECTION, err->message);
        if (!ev_is_active(&e->health)) {
            e->health_errors = e->watch.stats.errors;
            ev_timer_set(&e->health, HEALTH_INTERVAL, HEALTH_INTERVAL);
            ev_timer_start(e->p->loop, &e->health);
        }
    } else if (transport_or_auth(err) || err->code == HCP_EHTTP || err->code == HCP_EPARSE) {
        set_api_error(e, err);
    } else {
        return; /* out of memory and the like: retried by the watch */
    }
    evaluate(e);
}

/* While an API error is shown: the watch streaming again with no new error
 * for a whole interval means the server answers again. */
static void health_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    if (!e->connected || !e->api_reason) {
        ev_timer_stop(e->p->loop, &e->health);
        return;
    }
    if (e->watch.state == KUBE_WATCH_WATCHING && e->watch.stats.errors == e->health_errors) {
        clear_api_error(e);
        sync_entry(e);
        return;
    }
    e->health_errors = e->watch.stats.errors;
}

/* Drops the hosted client, watch and cache. Never called from their own
 * callbacks: only from Secret callbacks, timers and ctl_project_free(). */
static void disconnect(entry_t *e)
{
    if (!e->connected)
        return;
    kube_watch_stop(&e->watch);
    kube_client_close(&e->client); /* cancels a write in flight, no callback */
    kube_cache_free(&e->cache);
    kube_config_free(&e->cfg);
    free(e->kubeconfig);
    e->kubeconfig = NULL;
    e->kubeconfig_len = 0;
    e->writing = false;
    e->write_wait = false;
    e->write_reason = NULL;
    e->api_reason = NULL;
    e->seen_right = false;
    ev_timer_stop(e->p->loop, &e->write_timer);
    ev_timer_stop(e->p->loop, &e->health);
    e->connected = false;
}

/* Builds the hosted client and starts the watch. Takes ownership of cfg
 * (loaded) and kubeconfig on success and on failure. */
static int connect_hosted(entry_t *e, kube_config *cfg, char *kubeconfig, size_t len, char *err,
                          size_t errlen)
{
    ctl_project_t *p = e->p;
    kube_client_opts copts = {.qps = p->opts.hosted_qps, .burst = p->opts.hosted_burst,
                              .timeout = 30};
    kube_cache_ops ops = {cv_extract, cv_release, cv_add, cv_update, cv_delete};
    kube_watch_opts wopts = {.path = CV_COLLECTION,
                             .field_selector = "metadata.name=" CTL_PROJECT_CV_NAME,
                             .backoff_initial = p->opts.backoff_initial,
                             .backoff_max = p->opts.backoff_max,
                             .on_synced = watch_synced,
                             .on_error = watch_error,
                             .ud = e};
    kube_error ke;
    bool client = false, cache = false;

    e->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    e->kubeconfig = kubeconfig;
    e->kubeconfig_len = len;
    if (kube_client_init(&e->client, p->http, &e->cfg, &copts, &ke) < 0)
        goto fail;
    client = true;
    if (kube_cache_init(&e->cache, &ops, e) < 0) {
        kube_error_set(&ke, HCP_ENOMEM, 0, NULL, "out of memory");
        goto fail;
    }
    cache = true;
    e->connected = true; /* the watch may report synchronously */
    if (kube_watch_start(&e->watch, &e->client, &e->cache, &wopts, &ke) < 0) {
        e->connected = false;
        goto fail;
    }
    p->stats.clients++;
    return 0;
fail:
    errf(err, errlen, "%s", ke.message);
    if (cache)
        kube_cache_free(&e->cache);
    if (client)
        kube_client_close(&e->client);
    kube_config_free(&e->cfg);
    free(e->kubeconfig);
    e->kubeconfig = NULL;
    e->kubeconfig_len = 0;
    return ke.code ? ke.code : HCP_ECONFIG;
}

/* ---- the Secret ------------------------------------------------------------ */

static void secret_fetch(entry_t *e);

static void arm_secret(entry_t *e, double delay, bool retry)
{
    ev_timer_stop(e->p->loop, &e->secret_timer);
    ev_timer_set(&e->secret_timer, delay, 0.);
    ev_timer_start(e->p->loop, &e->secret_timer);
    e->secret_retry = retry;
}

static void arm_recheck(entry_t *e)
{
    arm_secret(e, e->p->opts.recheck * (0.8 + 0.4 * rnd01(e->p)), false);
}

static void arm_secret_retry(entry_t *e)
{
    arm_secret(e, kube_backoff_next(&e->secret_backoff, rnd01(e->p)), true);
}

/* After a hosted API failure: read the Secret again after the backoff,
 * unless a read is in flight or already scheduled as a retry. */
static void secret_retry_soon(entry_t *e)
{
    if (e->secret_req || e->secret_retry)
        return;
    arm_secret_retry(e);
}

static void secret_fail(entry_t *e, const char *reason, bool drop)
{
    if (drop)
        disconnect(e);
    e->secret_reason = reason;
    e->secret_rv[0] = '\0';
    if (strcmp(reason, CTL_PROJECT_SECRET_NOT_FOUND) == 0 ||
        strcmp(reason, CTL_PROJECT_KUBECONFIG_INVALID) == 0)
        arm_secret(e, kube_backoff_next(&e->absent_backoff, rnd01(e->p)), true);
    else
        arm_secret_retry(e);
}

static void secret_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    entry_t *e = ud;
    ctl_project_t *p = e->p;
    char msg[512] = "";
    (void)c;
    e->secret_req = NULL;
    if (e->gone)
        return;
    p->stats.secret_reads++;
    if (err) {
        if (err->http_status == 404) {
            errf(e->secret_msg, sizeof(e->secret_msg), "Secret %s/%s not found.", e->hcpns,
                     CTL_PROJECT_SECRET);
            secret_fail(e, CTL_PROJECT_SECRET_NOT_FOUND, true);
        } else if (e->connected) {
            /* The management API hiccuped; the client in use still works. */
            log_kv(LOG_WARN, "reading kubeconfig Secret failed", "namespace", e->hcpns,
                   "error", err->message, NULL);
            arm_secret_retry(e);
        } else {
            errf(e->secret_msg, sizeof(e->secret_msg), "Reading Secret %s/%s: %s", e->hcpns,
                     CTL_PROJECT_SECRET, err->message);
            secret_fail(e, CTL_PROJECT_SECRET_UNREADABLE, false);
        }
        evaluate(e);
        return;
    }
    const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"),
                                                       "resourceVersion"));
    if (e->connected && rv && strcmp(rv, e->secret_rv) == 0) {
        arm_recheck(e); /* unchanged */
        return;
    }
    char *yaml = NULL;
    size_t len = 0;
    kube_config cfg;
    int rc = ctl_project_secret_kubeconfig(obj, &yaml, &len, msg, sizeof(msg));
    if (rc == 0 && e->connected && len == e->kubeconfig_len &&
        memcmp(yaml, e->kubeconfig, len) == 0) {
        free(yaml); /* same kubeconfig, new resourceVersion */
        snprintf(e->secret_rv, sizeof(e->secret_rv), "%s", rv ? rv : "");
        arm_recheck(e);
        return;
    }
    if (rc == 0)
        rc = ctl_project_load_kubeconfig(yaml, len, e->hcpns, p->opts.rewrite_server, &cfg, msg,
                                         sizeof(msg));
    if (rc == 0) {
        disconnect(e);
        rc = connect_hosted(e, &cfg, yaml, len, msg, sizeof(msg));
        yaml = NULL; /* owned by connect_hosted() */
    }
    free(yaml);
    if (rc < 0) {
        errf(e->secret_msg, sizeof(e->secret_msg), "Secret %s/%s: %s", e->hcpns,
                 CTL_PROJECT_SECRET, msg);
        secret_fail(e, CTL_PROJECT_KUBECONFIG_INVALID, true);
        evaluate(e);
        return;
    }
    log_kv(LOG_INFO, "hosted API client ready", "namespace", e->ns, "name", e->name, "server",
           e->cfg.server, NULL);
    snprintf(e->secret_rv, sizeof(e->secret_rv), "%s", rv ? rv : "");
    e->secret_reason = NULL;
    kube_backoff_reset(&e->absent_backoff);
    arm_recheck(e);
    sync_entry(e);
}

static void secret_fetch(entry_t *e)
{
    char path[PATH_LEN];
    kube_error ke;
    if (e->secret_req)
        return;
    if (kube_path(path, sizeof(path), NULL, "v1", "secrets", e->hcpns, CTL_PROJECT_SECRET,
                  NULL) < 0) {
        errf(e->secret_msg, sizeof(e->secret_msg), "\"%s\" is not a usable namespace",
                 e->hcpns);
        e->secret_reason = CTL_PROJECT_SECRET_NOT_FOUND;
        return; /* permanent: no retry */
    }
    kube_call call = {.verb = KUBE_VERB_GET, .path = path, .on_done = secret_done, .ud = e};
    if (kube_client_call(e->p->mgmt, &call, &e->secret_req, &ke) < 0) {
        e->secret_req = NULL;
        if (!e->connected) {
            errf(e->secret_msg, sizeof(e->secret_msg), "Reading Secret %s/%s: %s",
                     e->hcpns, CTL_PROJECT_SECRET, ke.message);
            e->secret_reason = CTL_PROJECT_SECRET_UNREADABLE;
        }
        arm_secret_retry(e);
    }
}

static void secret_timer_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    entry_t *e = w->data;
    (void)loop;
    (void)revents;
    e->secret_retry = false;
    secret_fetch(e);
    evaluate(e);
}

/* ---- entries ---------------------------------------------------------------- */

static void want_free(want_cond_t *w)
{
    free(w->reason);
    free(w->message);
    w->reason = w->message = NULL;
}

/* Releases an entry: requests cancelled, timers stopped, memory freed. */
static void entry_release(entry_t *e)
{
    ctl_project_t *p = e->p;
    disconnect(e);
    kube_request_cancel(e->secret_req); /* no callback runs for it */
    e->secret_req = NULL;
    ev_timer_stop(p->loop, &e->secret_timer);
    want_free(&e->paused);
    want_free(&e->pending);
    free(e->ns);
    free(e->name);
    free(e);
}

static void reap_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    ctl_project_t *p = w->data;
    (void)loop;
    (void)revents;
    while (p->zombies) {
        entry_t *e = p->zombies;
        p->zombies = e->znext;
        entry_release(e);
    }
}

static entry_t *entry_new(ctl_project_t *p, const char *ns, const char *name, char *err,
                          size_t errlen)
{
    entry_t *e = NULL;
    int n = snprintf(NULL, 0, "%s-%s", ns, name);
    if (n < 0 || (size_t)n >= sizeof(e->hcpns)) {
        errf(err, errlen, "HostedCluster %s/%s: name too long", ns, name);
        return NULL;
    }
    e = calloc(1, sizeof(*e));
    if (!e)
        goto nomem;
    e->ns = strdup(ns);
    e->name = strdup(name);
    if (!e->ns || !e->name)
        goto nomem;
    snprintf(e->hcpns, sizeof(e->hcpns), "%s-%s", ns, name);
    e->p = p;
    kube_backoff_init(&e->secret_backoff, p->opts.backoff_initial, p->opts.backoff_max);
    kube_backoff_init(&e->absent_backoff, p->opts.absent_retry,
                      p->opts.absent_retry > p->opts.backoff_max ? p->opts.absent_retry
                                                                 : p->opts.backoff_max);
    kube_backoff_init(&e->write_backoff, p->opts.backoff_initial, p->opts.backoff_max);
    kube_backoff_init(&e->reassert_backoff, p->opts.backoff_initial, p->opts.backoff_max);
    ev_init(&e->secret_timer, secret_timer_cb);
    e->secret_timer.data = e;
    ev_init(&e->write_timer, write_timer_cb);
    e->write_timer.data = e;
    ev_init(&e->health, health_cb);
    e->health.data = e;
    return e;
nomem:
    errf(err, errlen, "out of memory");
    if (e) {
        free(e->ns);
        free(e->name);
        free(e);
    }
    return NULL;
}

/* Copies a wanted condition; keeps `since` while the status is unchanged. */
static int want_set(want_cond_t *w, const ctl_project_cond_t *c, bool first, sched_time_t now)
{
    char *reason = strdup(c->reason ? c->reason : "");
    char *message = strdup(c->message ? c->message : "");
    if (!reason || !message) {
        free(reason);
        free(message);
        return HCP_ENOMEM;
    }
    if (first || w->status != c->status)
        w->since = now;
    w->status = c->status;
    free(w->reason);
    free(w->message);
    w->reason = reason;
    w->message = message;
    return 0;
}

static bool want_equal(const want_cond_t *w, const ctl_project_cond_t *c)
{
    return w->status == c->status && str_eq(w->reason, c->reason) &&
           str_eq(w->message, c->message);
}

/* ---- public shell ------------------------------------------------------------ */

int ctl_project_new(struct ev_loop *loop, kube_http *http, kube_client *mgmt,
                    const ctl_project_opts_t *opts, ctl_project_t **out, char *err,
                    size_t errlen)
{
    ctl_project_t *p = NULL;
    *out = NULL;
    if (!loop || !http || !mgmt) {
        errf(err, errlen, "project needs a loop, an http multi handle and a client");
        return HCP_EINVAL;
    }
    p = calloc(1, sizeof(*p));
    if (!p)
        goto nomem;
    p->loop = loop;
    p->http = http;
    p->mgmt = mgmt;
    if (opts)
        p->opts = *opts;
    if (p->opts.recheck <= 0)
        p->opts.recheck = 300;
    if (p->opts.backoff_initial <= 0)
        p->opts.backoff_initial = 1;
    if (p->opts.backoff_max <= 0)
        p->opts.backoff_max = 120;
    if (p->opts.backoff_max < p->opts.backoff_initial)
        p->opts.backoff_max = p->opts.backoff_initial;
    if (p->opts.absent_retry <= 0)
        p->opts.absent_retry = 15;
    if (p->opts.hosted_qps <= 0)
        p->opts.hosted_qps = 5;
    if (p->opts.hosted_burst <= 0)
        p->opts.hosted_burst = 10;
    p->leading = p->opts.leading;
    if (ctl_objmap_init(&p->entries, 16))
        goto nomem;
    p->rng = (uint64_t)(uintptr_t)p ^ (uint64_t)(ev_time() * 1e6) ^ 0x9E3779B97F4A7C15ull;
    if (p->rng == 0)
        p->rng = 1;
    ev_init(&p->reap, reap_cb);
    p->reap.data = p;
    *out = p;
    return 0;
nomem:
    errf(err, errlen, "out of memory");
    if (p)
        ctl_objmap_free(&p->entries);
    free(p);
    return HCP_ENOMEM;
}

void ctl_project_free(ctl_project_t *p)
{
    if (!p)
        return;
    ev_timer_stop(p->loop, &p->reap);
    for (size_t i = 0; i < p->entries.nbuckets; i++) {
        ctl_objkey_t *k = p->entries.buckets[i], *next;
        for (; k; k = next) {
            next = k->hnext;
            entry_t *e = (entry_t *)k;
            e->gone = true;
            e->znext = p->zombies;
            p->zombies = e;
        }
    }
    while (p->zombies) {
        entry_t *e = p->zombies;
        p->zombies = e->znext;
        entry_release(e);
    }
    ctl_objmap_free(&p->entries);
    free(p);
}

void ctl_project_set_leading(ctl_project_t *p, bool leading)
{
    if (p->leading == leading)
        return;
    p->leading = leading;
    /* on_change may forget entries (they stay allocated until the reaper
     * runs, with hnext intact) or add some (no rehash meanwhile). */
    p->entries.frozen++;
    for (size_t i = 0; i < p->entries.nbuckets; i++)
        for (ctl_objkey_t *k = p->entries.buckets[i]; k; k = k->hnext)
            sync_entry((entry_t *)k);
    p->entries.frozen--;
}

int ctl_project_update(ctl_project_t *p, const char *ns, const char *name,
                       const ctl_project_conds_t *conds, sched_time_t now, char *err,
                       size_t errlen)
{
    if (!p || !ns || !name || !conds || !ns[0] || !name[0]) {
        errf(err, errlen, "ctl_project_update: missing argument");
        return HCP_EINVAL;
    }
    ctl_objkey_t **slot = ctl_objmap_slot(&p->entries, 0, ns, name);
    entry_t *e = (entry_t *)*slot;
    bool created = false;
    if (!e) {
        e = entry_new(p, ns, name, err, errlen);
        if (!e)
            return HCP_ENOMEM;
        e->key = (ctl_objkey_t){.ns = e->ns, .name = e->name};
        ctl_objmap_insert(&p->entries, slot, &e->key);
        created = true;
    }
    if (e->have_want && want_equal(&e->paused, &conds->paused) &&
        want_equal(&e->pending, &conds->pending))
        return 0;
    if (want_set(&e->paused, &conds->paused, !e->have_want, now) < 0 ||
        want_set(&e->pending, &conds->pending, !e->have_want, now) < 0) {
        errf(err, errlen, "out of memory");
        return HCP_ENOMEM;
    }
    e->have_want = true;
    e->seen_right = false;
    if (created)
        secret_fetch(e);
    sync_entry(e);
    return 0;
}

void ctl_project_forget(ctl_project_t *p, const char *ns, const char *name)
{
    if (!p || !ns || !name)
        return;
    ctl_objkey_t **slot = ctl_objmap_slot(&p->entries, 0, ns, name);
    entry_t *e = (entry_t *)*slot;
    if (!e)
        return;
    ctl_objmap_remove(&p->entries, slot);
    e->gone = true;
    kube_request_cancel(e->secret_req); /* safe from its own callback */
    e->secret_req = NULL;
    ev_timer_stop(p->loop, &e->secret_timer);
    ev_timer_stop(p->loop, &e->write_timer);
    ev_timer_stop(p->loop, &e->health);
    e->znext = p->zombies;
    p->zombies = e;
    if (!ev_is_active(&p->reap)) {
        ev_timer_set(&p->reap, 0., 0.);
        ev_timer_start(p->loop, &p->reap);
    }
}

int ctl_project_status(const ctl_project_t *p, const char *ns, const char *name,
                       ctl_project_status_t *st)
{
    if (!p || !ns || !name)
        return HCP_EINVAL;
    const entry_t *e = (const entry_t *)*ctl_objmap_slot(&p->entries, 0, ns, name);
    if (!e)
        return HCP_EINVAL;
    *st = e->st;
    if (!st->reason) {
        st->reason = CTL_PROJECT_PENDING;
        snprintf(st->message, sizeof(st->message), "Starting.");
    }
    return 0;
}

const ctl_project_stats_t *ctl_project_stats(const ctl_project_t *p)
{
    return &p->stats;
}
