/* webhook.c: the TLS listener of the admission webhooks and the reload of
 * its certificate (served from the next handshake on, without closing the
 * listener). */
#include "webhook.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/holds.h"
#include "admission/validate.h"
#include "base/error.h"
#include "httpserver/httpserver.h"
#include "log/log.h"
#include "check/check.h"
#include "decide/wave.h"
#include "notify/config.h"
#include "policy/guard.h"
#include "policy/manifest.h"
#include "tlspair.h"

struct webhook {
    struct ev_loop *loop;
    ctl_controller_t *ctl;     /* borrowed */
    webhook_opts_t opts;       /* flags (strings borrowed) */
    char bind[300];            /* the address actually bound ("host:port") */
    http_server srv;           /* the TLS server */
    adm_router_t router;       /* the webhooks on srv */
    char *cert, *key;          /* owned: the pair being served */
    ev_stat cert_watch, key_watch; /* the files */
    ev_stat guard_watch;       /* --guard-config, when given */
    bool draining;             /* stopping: not ready, every connection closed after its answer */
};

/* Where the served pair comes from. */
static tls_files_t pair_files(const webhook_opts_t *o)
{
    return (tls_files_t){.what = "webhook", .cert_flag = "--webhook-cert-file",
                         .cert_file = o->cert_file, .key_flag = "--webhook-key-file",
                         .key_file = o->key_file};
}

/* Reads the one document of the configuration file path into *doc. */
static int load_doc(const char *flag, const char *path, json_t **doc, char *err, size_t errlen)
{
    char e[512], *data = NULL;
    json_t *docs = NULL;
    int rc;

    *doc = NULL;
    if ((rc = tls_read_file(flag, path, &data, err, errlen)) != 0)
        return rc;
    rc = manifest_load(data, strlen(data), &docs, e, sizeof(e));
    if (rc == 0 && json_array_size(docs) != 1)
        rc = hcp_errf(e, sizeof(e), HCP_EINVAL, "expected one document, found %zu",
                      json_array_size(docs));
    if (rc != 0)
        rc = hcp_errf(err, errlen, rc, "%s %s: %s", flag, path, e);
    else
        *doc = json_incref(json_array_get(docs, 0));
    json_decref(docs);
    free(data);
    return rc;
}

int webhook_guard_load(const char *flag, const char *path, guard_config_t *cfg, char *err,
                       size_t errlen)
{
    char e[512];
    json_t *doc;
    int rc;

    if ((rc = load_doc(flag, path, &doc, err, errlen)) != 0)
        return rc;
    if ((rc = guard_config_parse(doc, cfg, e, sizeof(e))) != 0)
        rc = hcp_errf(err, errlen, rc, "%s %s: %s", flag, path, e);
    json_decref(doc);
    return rc;
}

/* The value of key in the guard rails' file's mapping (a ConfigMap's data,
 * or the file's own mapping), NULL when absent. */
static const json_t *doc_key(const json_t *doc, const char *key)
{
    const json_t *data = json_object_get(doc, "kind") ? json_object_get(doc, "data") : doc;
    return json_is_object(data) ? json_object_get(data, key) : NULL;
}

int webhook_config_load(const char *flag, const char *path, guard_config_t *guard,
                        notify_config_t *notify, check_config_t *checks, wave_config_t *waves,
                        char *err, size_t errlen)
{
    guard_config_t g;
    notify_config_t n;
    check_config_t c;
    static wave_config_t w; /* 80 kB: not on the stack */
    char e[600];
    json_t *doc;
    int rc;

    guard = guard ? guard : &g;
    notify = notify ? notify : &n;
    checks = checks ? checks : &c;
    waves = waves ? waves : &w;
    memset(guard, 0, sizeof(*guard));
    memset(waves, 0, sizeof(*waves));
    notify_config_default(notify);
    memset(checks, 0, sizeof(*checks));
    if (!path)
        return 0;
    if ((rc = load_doc(flag, path, &doc, err, errlen)) != 0)
        return rc;
    if ((rc = guard_config_parse(doc, guard, e, sizeof(e))) == 0 &&
        (rc = notify_config_parse(doc_key(doc, "notifications"), notify, e, sizeof(e))) == 0 &&
        (rc = check_config_parse(doc_key(doc, "checks"), checks, e, sizeof(e))) == 0)
        rc = wave_config_parse(doc_key(doc, "waves"), waves, e, sizeof(e));
    if (rc != 0)
        rc = hcp_errf(err, errlen, rc, "%s %s: %s", flag, path, e);
    json_decref(doc);
    return rc;
}

/* The guard rail file changed: enforce what it says now, or keep the
 * limits in force when it does not load. */
static void on_guard_file(struct ev_loop *loop, ev_stat *st, int revents)
{
    webhook_t *w = st->data;
    guard_config_t cfg;
    char err[700];

    (void)loop;
    (void)revents;
    if (webhook_guard_load("--guard-config", w->opts.guard_file, &cfg, err, sizeof(err)) != 0) {
        log_kv(LOG_ERROR, "cannot read the changed guard rails; the previous ones stay in force",
               "error", err, NULL);
        return;
    }
    ctl_set_guard(w->ctl, &cfg);
    log_kv(LOG_INFO, "guard rails read again", "file", w->opts.guard_file, "enforced",
           guard_enforced(&cfg) ? "true" : "false", NULL);
}

/* (Re)starts the server with the pair cert/key. */
static int listen_with(webhook_t *w, const char *cert, const char *key, char *err, size_t errlen)
{
    char e[300];
    int rc;

    http_server_stop(&w->srv);
    if ((rc = http_server_set_tls(&w->srv, cert, key)) != 0 ||
        (rc = http_server_start(&w->srv, w->loop, w->bind, e, sizeof(e))) != 0)
        return hcp_errf(err, errlen, rc == HCP_ELISTEN ? HCP_ELISTEN : rc,
                        "--webhook-bind-address %s: %s (certificate %s, key %s)", w->bind,
                        rc == HCP_ELISTEN ? e : hcp_strerror(rc), w->opts.cert_file,
                        w->opts.key_file);
    return 0;
}

/* A file changed: serve the new pair when it loads, else keep the old. */
static void on_file(struct ev_loop *loop, ev_stat *st, int revents)
{
    webhook_t *w = st->data;
    tls_files_t f = pair_files(&w->opts);

    (void)loop;
    (void)revents;
    tls_pair_renew(&f, &w->srv, &w->cert, &w->key);
}

static bool synced(void *ud)
{
    return ctl_synced(ud);
}

/* GET /readyz on the webhooks' own TLS listener: the pod's readiness probe
 * when the webhooks are served, so that a pod is an endpoint of the
 * webhook Service only while this listener completes a TLS handshake with
 * the current certificate and the caches it answers from are synced. */
static int readyz(const http_request *req, http_response *resp, void *ud)
{
    const webhook_t *w = ud;

    (void)req;
    if (w->draining) {
        resp->status = 503;
        return http_response_printf(resp, "shutting down\n");
    }
    if (ctl_synced(w->ctl))
        return http_response_printf(resp, "ok\n");
    resp->status = 503;
    return http_response_printf(resp, "caches are not synced yet\n");
}

static void watch_file(webhook_t *w, ev_stat *st, const char *path,
                       void (*cb)(struct ev_loop *, ev_stat *, int))
{
    ev_stat_init(st, cb, path, w->opts.reload_interval);
    st->data = w;
    ev_stat_start(w->loop, st);
}

int webhook_start(webhook_t **out, struct ev_loop *loop, ctl_controller_t *ctl,
                  const webhook_opts_t *o, char *err, size_t errlen)
{
    webhook_t *w;
    int rc;

    *out = NULL;
    if (o->bind_address == NULL || o->bind_address[0] == '\0' ||
        strcmp(o->bind_address, "0") == 0)
        return 0;
    if (o->cert_file == NULL || o->key_file == NULL)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--webhook-bind-address needs --webhook-cert-file and "
                        "--webhook-key-file (admission is served over TLS only)");
    if ((w = calloc(1, sizeof(*w))) == NULL)
        return hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
    w->loop = loop;
    w->ctl = ctl;
    w->opts = *o;
    if (w->opts.reload_interval <= 0)
        w->opts.reload_interval = 10;
    snprintf(w->bind, sizeof(w->bind), "%s", o->bind_address);
    http_server_init(&w->srv, NULL);
    adm_router_init(&w->router, &w->srv, o->fail_open, synced, ctl);
    if ((rc = adm_holds_register(&w->router, ctl)) != 0 ||
        (rc = adm_validation_register(&w->router, ctl)) != 0 ||
        (rc = http_server_route(&w->srv, "GET", "/readyz", readyz, w)) != 0) {
        rc = hcp_errf(err, errlen, rc, "cannot register the webhooks: %s", hcp_strerror(rc));
        goto fail;
    }
    if (o->guard_file) {
        guard_config_t cfg;
        if (o->guard)
            cfg = *o->guard;
        else if ((rc = webhook_guard_load("--guard-config", o->guard_file, &cfg, err, errlen)) != 0)
            goto fail;
        ctl_set_guard(ctl, &cfg);
    }
    tls_files_t files = pair_files(o);
    if ((rc = tls_pair_read(&files, &w->cert, &w->key, err, errlen)) != 0 ||
        (rc = listen_with(w, w->cert, w->key, err, errlen)) != 0)
        goto fail;
    /* A restart after a renewal binds the same port, also after ":0". */
    size_t n = strlen(w->bind);
    if (n >= 2 && strcmp(w->bind + n - 2, ":0") == 0)
        snprintf(w->bind + n - 1, sizeof(w->bind) - (n - 1), "%d", http_server_port(&w->srv));
    watch_file(w, &w->cert_watch, o->cert_file, on_file);
    watch_file(w, &w->key_watch, o->key_file, on_file);
    if (o->guard_file)
        watch_file(w, &w->guard_watch, o->guard_file, on_guard_file);
    *out = w;
    return 0;
fail:
    webhook_stop(w);
    return rc;
}

int webhook_port(const webhook_t *w)
{
    return w ? http_server_port(&w->srv) : 0;
}

void webhook_drain(webhook_t *w)
{
    if (w == NULL || w->draining)
        return;
    w->draining = true;
    http_server_set_closing(&w->srv);
}

const adm_stats_t *webhook_stats(const webhook_t *w)
{
    return w ? &w->router.stats : NULL;
}

void webhook_stop(webhook_t *w)
{
    if (w == NULL)
        return;
    if (ev_is_active(&w->cert_watch))
        ev_stat_stop(w->loop, &w->cert_watch);
    if (ev_is_active(&w->key_watch))
        ev_stat_stop(w->loop, &w->key_watch);
    if (ev_is_active(&w->guard_watch))
        ev_stat_stop(w->loop, &w->guard_watch);
    http_server_stop(&w->srv);
    free(w->cert);
    free(w->key);
    free(w);
}
