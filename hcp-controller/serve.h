/* serve: the process's HTTP endpoints on its libev loop.
 *
 * /metrics (Prometheus text format: the change_management_* values computed
 * at scrape time from the controller's cache and clock, and the controller's
 * own request, watch, reconcile and re-assertion counters) and the
 * calendar feed /calendar/<namespace>[/<hostedcluster>].ics on the metrics
 * address, /healthz and /readyz (ready once every cache has synced) on the
 * probe address. An address of "0" disables its server. The metrics
 * address speaks HTTPS and lets through only callers the API server
 * authenticates and authorizes (authz/authz.h), unless told to serve plain
 * HTTP (serve_metrics_opts_t.secure false).
 */
#ifndef HCP_SERVE_H
#define HCP_SERVE_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "admission/router.h"
#include "controller/controller.h"
#include "kube/client.h"

typedef struct serve serve_t;

/* Starts the servers. ctl, client and adm (the webhooks' counters, NULL
 * when the webhooks are off) are borrowed. Returns 0 with *out, or
 * a negative HCP_E* code with a sentence in err (HCP_ELISTEN: an address
 * already in use). */
/* The notifications whose counts /metrics serves
 * (hcp_controller_notifications_total); n is borrowed. */
struct notify_sender;
void serve_set_notify(serve_t *s, const struct notify_sender *n);

/* How the metrics address serves (DESIGN.md 3.8). */
typedef struct serve_metrics_opts {
    bool secure;            /* HTTPS, and every request authenticated (TokenReview) and
                               authorized (SubjectAccessReview); false: plain HTTP, open */
    const char *cert_file;  /* the serving pair (PEM), read again when the files change;  */
    const char *key_file;   /* both NULL: a self-signed pair made at start */
    double review_ttl;      /* seconds a review's verdict is kept; <= 0: 10 */
} serve_metrics_opts_t;

int serve_start(serve_t **out, struct ev_loop *loop, ctl_controller_t *ctl, kube_client *client,
                const adm_stats_t *adm, const char *metrics_addr, const serve_metrics_opts_t *mopts,
                const char *health_addr, char *err, size_t errlen);

/* The process is stopping: /readyz answers 503 "shutting down" from now
 * on (/healthz stays 200: the process is alive and still answers). NULL is
 * accepted. */
void serve_drain(serve_t *s);

/* Stops the servers and frees them. NULL is accepted. */
void serve_stop(serve_t *s);

#endif
