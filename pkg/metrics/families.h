/* families: the controller's metric families (DESIGN.md 3.8).
 *
 * The names, help texts and labels of every series /metrics serves, and
 * their collectors: the change_management_* values of each HostedCluster
 * and NodePool, computed at scrape time through the controller's plan
 * (ctl_foreach_object_metrics(), pkg/controller/scrape.c), each policy's
 * readiness, and the counters of the controller, its API client, the
 * admission webhooks and the notifications. The registry and the text
 * format are metrics.h; this is what the product registers in it.
 */
#ifndef HCP_METRICS_FAMILIES_H
#define HCP_METRICS_FAMILIES_H

#include <stdbool.h>
#include <stddef.h>

#include "admission/router.h"
#include "controller/controller.h"
#include "kube/client.h"

typedef struct metrics_families metrics_families_t;
struct notify_sender;

/* Registers every family, read from ctl, client and adm (the webhooks'
 * counters, NULL when they are off), all borrowed. Returns 0 with *out, or
 * a negative HCP_E* code with a sentence in err. */
int metrics_families_new(metrics_families_t **out, ctl_controller_t *ctl, kube_client *client,
                         const adm_stats_t *adm, char *err, size_t errlen);

/* The notifications whose counts hcp_controller_notifications_total
 * serves (borrowed), or NULL. */
void metrics_families_set_notify(metrics_families_t *m, const struct notify_sender *n);

/* Renders every family now into *body (malloc'd Prometheus text, *len
 * bytes; with gzip, its gzip stream, made as the text is written:
 * metrics_buf_gzip()). Returns 0, or -1 when memory ran out. */
int metrics_families_render(metrics_families_t *m, bool gzip, char **body, size_t *len);

/* Frees m. NULL is accepted. */
void metrics_families_free(metrics_families_t *m);

#endif
