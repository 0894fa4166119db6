/*
 * admission/router.h - admission webhooks on an http_server: one POST route
 * per webhook path, each bound to the resource it serves.
 *
 * Registering a webhook is one call:
 *
 *     adm_router_add(&r, "/mutate-hostedclusters", "hypershift.openshift.io",
 *                    "hostedclusters", hold_hostedcluster, ctl);
 *
 * The router parses the AdmissionReview, checks that the request is for the
 * route's resource and that the replica is ready (its caches synced), calls
 * the handler and renders its answer. Everything that goes wrong before or
 * inside the handler gets a clear answer that is logged, never a crash and
 * never a silent permit:
 *
 * - a body that is not an AdmissionReview v1 (not JSON, another apiVersion
 *   or kind, a field missing) is answered HTTP 400 with the reason: the API
 *   server treats it as a failed call and applies the webhook's
 *   failurePolicy;
 * - a request for another resource, a request before the caches synced, or
 *   a handler that failed is answered as the failure policy would: refused
 *   (allowed false, code 400/503/500, the reason as message) when the policy
 *   is Fail, admitted with a warning naming the reason when it is Ignore.
 */
#ifndef ADMISSION_ROUTER_H
#define ADMISSION_ROUTER_H

#include <stdbool.h>
#include <stdint.h>

#include "admission/admission.h"
#include "httpserver/httpserver.h"

#define ADM_MAX_ROUTES 12

/*
 * A webhook. Fills resp (initialised to allow, no patch) from req; returns
 * 0, or a negative HCP_E* code with a sentence in err when it could not
 * decide (the router then answers as the failure policy says). Runs on the
 * loop; must not keep req or resp.
 */
typedef int (*adm_handler_fn)(const adm_request_t *req, adm_response_t *resp, void *ud,
                              char *err, size_t errlen);

/* Whether the replica can answer (its caches have synced). */
typedef bool (*adm_ready_fn)(void *ud);

/* What happened to requests, for /metrics. */
typedef struct adm_stats {
    uint64_t allowed;   /* admitted unchanged */
    uint64_t patched;   /* admitted with a patch */
    uint64_t denied;    /* refused by a handler */
    uint64_t invalid;   /* bodies that were not an AdmissionReview (HTTP 400) */
    uint64_t failed;    /* answered by the failure policy: wrong resource, not ready, error */
} adm_stats_t;

/* One registered webhook. */
typedef struct adm_route {
    char path[HTTP_SERVER_MAX_PATH]; /* URL path */
    char group[128];                 /* resource group it serves ("" core) */
    char resource[128];              /* plural resource it serves */
    adm_handler_fn handler;          /* the webhook */
    void *ud;                        /* handler's argument */
    struct adm_router *router;       /* back pointer for the HTTP handler */
} adm_route_t;

/* The routes of one server. Caller-allocated. */
typedef struct adm_router {
    http_server *srv;                    /* borrowed: where routes are registered */
    bool fail_open;                      /* the webhooks' failurePolicy is Ignore */
    adm_ready_fn ready;                  /* NULL: always ready */
    void *ready_ud;                      /* ready's argument */
    adm_route_t routes[ADM_MAX_ROUTES];  /* registered webhooks */
    size_t nroutes;                      /* routes in use */
    adm_stats_t stats;                   /* counters since init */
} adm_router_t;

/* Prepares a router adding its routes to srv (borrowed). fail_open: the
 * webhook configurations say failurePolicy: Ignore. ready may be NULL. */
void adm_router_init(adm_router_t *r, http_server *srv, bool fail_open, adm_ready_fn ready,
                     void *ready_ud);

/*
 * Registers handler for POST path, serving resource of group. Returns 0,
 * HCP_EFULL (no room), or HCP_EINVAL (a bad path, the path taken, a name
 * too long) from the server's route table.
 */
int adm_router_add(adm_router_t *r, const char *path, const char *group, const char *resource,
                   adm_handler_fn handler, void *ud);

/*
 * Answers one AdmissionReview body as the route's HTTP handler does (the
 * server calls this; tests and the fuzzer call it directly). Fills resp
 * with the HTTP status, content type and body. Returns 0 or HCP_ENOMEM.
 */
int adm_router_serve(adm_route_t *route, const char *body, size_t len, http_response *resp);

#endif
