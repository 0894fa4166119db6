/*
 * Helpers for the pkg/kube end-to-end tests and benchmark.
 */
#include "harness.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

int harness_init(harness *h, const char *kubeconfig)
{
    kube_error e;
    const char *path = kubeconfig ? kubeconfig : getenv("HCP_E2E_KUBECONFIG");

    memset(h, 0, sizeof(*h));
    snprintf(h->kubeconfig, sizeof(h->kubeconfig), "%s", path ? path : "e2e/.local/kubeconfig");
    h->loop = ev_loop_new(EVFLAG_AUTO);
    if (h->loop == NULL)
        return -1;
    if (kube_config_load_file(&h->cfg, h->kubeconfig, NULL, &e) < 0) {
        fprintf(stderr, "harness: %s\n", e.message);
        return -1;
    }
    if (kube_http_init(&h->http, h->loop, &e) < 0 ||
        kube_client_init(&h->client, &h->http, &h->cfg, NULL, &e) < 0) {
        fprintf(stderr, "harness: %s\n", e.message);
        return -1;
    }
    return 0;
}

void harness_close(harness *h)
{
    kube_client_close(&h->client);
    kube_http_close(&h->http);
    kube_config_free(&h->cfg);
    if (h->loop)
        ev_loop_destroy(h->loop);
    memset(h, 0, sizeof(*h));
}

static void stop_cb(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ONE);
}

bool harness_run_until(harness *h, const bool *flag, double seconds)
{
    double deadline = ev_time() + seconds;

    while (!*flag && ev_time() < deadline) {
        ev_timer t;
        ev_timer_init(&t, stop_cb, 0.05, 0.);
        ev_timer_start(h->loop, &t);
        ev_run(h->loop, EVRUN_ONCE);
        ev_timer_stop(h->loop, &t);
        ev_now_update(h->loop);
    }
    return *flag;
}

void harness_run_for(harness *h, double seconds)
{
    bool never = false;
    harness_run_until(h, &never, seconds);
}

void harness_store(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    sync_result *r = ud;

    (void)c;
    r->done = true;
    r->code = err ? err->code : 0;
    if (err)
        r->err = *err;
    r->obj = obj ? json_incref(obj) : NULL;
}

int harness_wait(harness *h, sync_result *r, double seconds)
{
    if (!harness_run_until(h, &r->done, seconds)) {
        r->code = HCP_ETRANSPORT;
        snprintf(r->err.message, sizeof(r->err.message), "timed out after %.0f s", seconds);
    }
    return r->code;
}

void sync_result_clear(sync_result *r)
{
    json_decref(r->obj);
    memset(r, 0, sizeof(*r));
}

int harness_create_ns(harness *h, kube_client *c, const char *ns)
{
    sync_result r = {0};
    json_t *obj = json_pack("{s:s,s:s,s:{s:s}}", "apiVersion", "v1", "kind", "Namespace",
                            "metadata", "name", ns);
    int rc = kube_create(c, "/api/v1/namespaces", obj, harness_store, &r, NULL);

    json_decref(obj);
    if (rc == 0)
        rc = harness_wait(h, &r, 30);
    if (rc < 0 && r.err.http_status == 409)
        rc = 0;
    if (rc < 0)
        fprintf(stderr, "create namespace %s: %s\n", ns, r.err.message);
    sync_result_clear(&r);
    return rc;
}

int harness_delete_ns(harness *h, kube_client *c, const char *ns)
{
    sync_result r = {0};
    char path[256];
    int rc;

    snprintf(path, sizeof(path), "/api/v1/namespaces/%s", ns);
    rc = kube_delete(c, path, harness_store, &r, NULL);
    if (rc == 0)
        rc = harness_wait(h, &r, 30);
    if (rc < 0 && r.err.http_status == 404)
        rc = 0;
    sync_result_clear(&r);
    return rc;
}

int harness_sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    int st;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    st = system(cmd);
    if (st == -1 || !WIFEXITED(st))
        return -1;
    return WEXITSTATUS(st);
}
