/*
 * Shared helpers for the pkg/kube tests against the local cluster: one loop,
 * one kube_http, the admin client, and synchronous wrappers that run the
 * loop until a request finishes.
 */
#ifndef E2E_KUBE_HARNESS_H
#define E2E_KUBE_HARNESS_H

#include <ev.h>
#include <jansson.h>
#include <stdbool.h>

#include "kube/cache.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/watch.h"

typedef struct harness {
    struct ev_loop *loop;
    kube_http http;
    kube_config cfg;
    kube_client client;
    char kubeconfig[1024];
} harness;

/* Result of a synchronous request. */
typedef struct sync_result {
    bool done;
    int code;          /* 0 or KUBE_E* */
    kube_error err;
    json_t *obj;       /* owned reference or NULL */
} sync_result;

/* Loads the admin kubeconfig ($HCP_E2E_KUBECONFIG or e2e/.local/kubeconfig). */
int harness_init(harness *h, const char *kubeconfig);
void harness_close(harness *h);

/* Runs the loop until *flag is true or `seconds` pass. Returns *flag. */
bool harness_run_until(harness *h, const bool *flag, double seconds);
/* Runs the loop for `seconds`. */
void harness_run_for(harness *h, double seconds);

/* Completion callback storing into a sync_result (ud). */
void harness_store(kube_client *c, const kube_error *err, json_t *obj, void *ud);

/* Waits for r; returns r->code. */
int harness_wait(harness *h, sync_result *r, double seconds);
void sync_result_clear(sync_result *r);

/* Creates a namespace (ignores AlreadyExists) and deletes one (ignores NotFound). */
int harness_create_ns(harness *h, kube_client *c, const char *ns);
int harness_delete_ns(harness *h, kube_client *c, const char *ns);

/* Runs a shell command; returns its exit status (or -1). */
int harness_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
