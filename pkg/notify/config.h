/* notify config: where notifications go (DESIGN.md 3.9).
 *
 * The endpoints and leads live in the mounted configuration file of the
 * guard rails, under the key `notifications` (a mapping in a plain file; in
 * a ConfigMap's data, whose values are strings, its JSON text):
 *
 *   notifications:
 *     endpoints:
 *       - name: ops                       # [a-z0-9-], 1-63, unique
 *         url: https://hooks.example.com/x # http:// or https://
 *         format: cloudevents             # or slack ({"text": ...}); default cloudevents
 *         tokenFile: /etc/hcp-controller/notify/ops   # optional bearer token file
 *     leads: ["48h", "1h"]                # before a window with a change pending
 *     queueSize: 1000                     # undelivered notifications kept
 *
 * The token file's path is configuration; the token itself is read from
 * the mounted Secret at delivery and never enters this structure or a log.
 * Every byte comes from outside: each key is checked and a refusal names
 * it, so that a bad file stops the start as the guard rails' do. Pure.
 */
#ifndef HCP_NOTIFY_CONFIG_H
#define HCP_NOTIFY_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "schedule/schedule.h"

#define NOTIFY_MAX_CONFIGURED 16 /* endpoints in `notifications` */
#define NOTIFY_MAX_ENDPOINTS 32  /* and the post-change checks' (check/check.h) */
#define NOTIFY_MAX_LEADS 4
#define NOTIFY_NAMELEN 64
#define NOTIFY_URLLEN 2048
#define NOTIFY_PATHLEN 1024
#define NOTIFY_DEFAULT_QUEUE 1000
#define NOTIFY_MAX_QUEUE 100000

typedef enum notify_format {
    NOTIFY_CLOUDEVENTS, /* CloudEvents 1.0, structured mode (application/cloudevents+json) */
    NOTIFY_SLACK,       /* {"text": ...}: Slack-compatible incoming webhooks */
} notify_format_t;

typedef struct notify_endpoint {
    char name[NOTIFY_NAMELEN];
    char url[NOTIFY_URLLEN];
    notify_format_t format;
    char token_file[NOTIFY_PATHLEN]; /* "" when none */
    unsigned steps;                  /* the steps it takes, a bit per notify_step_t;
                                        0: every notification (not pre-start nor
                                        post-change, which go to checks) */
} notify_endpoint_t;

/* Plain data: copy it freely. */
typedef struct notify_config {
    notify_endpoint_t endpoints[NOTIFY_MAX_ENDPOINTS];
    size_t n_endpoints;              /* 0: notifications are off */
    sched_time_t leads[NOTIFY_MAX_LEADS]; /* seconds before a window, longest first */
    size_t n_leads;
    size_t queue_size;
} notify_config_t;

/* Whether endpoint e takes step (a notify_step_t; its steps mask). */
bool notify_endpoint_takes(const notify_endpoint_t *e, int step);

/* Whether any endpoint of cfg takes step. */
bool notify_config_takes(const notify_config_t *cfg, int step);

/* The defaults: no endpoint, leads 48 h and 1 h, queue NOTIFY_DEFAULT_QUEUE. */
void notify_config_default(notify_config_t *cfg);

/* Reads the `notifications` value v (a mapping, or a string holding its
 * JSON text; NULL: the defaults) into *cfg. Unknown keys are refused.
 * Returns 0, or HCP_EINVAL with err naming the key
 * ("notifications.endpoints[1].url: ..."). */
int notify_config_parse(const json_t *v, notify_config_t *cfg, char *err, size_t errlen);

#endif
