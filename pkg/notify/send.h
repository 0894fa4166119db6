/* notify send: delivering queued notifications (DESIGN.md 3.9).
 *
 * The shell of the notify queue: each notification is queued once per
 * configured endpoint and POSTed with libcurl's multi interface on the
 * loop's shared kube_http (the transfers of the Kubernetes client and of
 * the notifications share one multi handle and its socket watchers;
 * nothing blocks the loop). A 2xx answer is a delivery; anything else (no
 * answer, a timeout of NOTIFY_SEND_TIMEOUT s, another status) waits the
 * queue's backoff and is tried again. The bearer token is read from the
 * endpoint's tokenFile at every attempt (a rotated Secret is used at
 * once) and never logged. An endpoint that keeps failing is logged once
 * per failing spell. Only a sender told it leads sends: a replica that is
 * not the leader queues nothing.
 */
#ifndef HCP_NOTIFY_SEND_H
#define HCP_NOTIFY_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "base/list.h"
#include "kube/http.h"
#include "notify/config.h"
#include "notify/due.h"
#include "notify/payload.h"
#include "notify/queue.h"

#define NOTIFY_SEND_TIMEOUT 10L     /* seconds a POST may take */
#define NOTIFY_MAX_INFLIGHT 4       /* POSTs at once, all endpoints */

typedef struct notify_counts {
    uint64_t sent, failed, dropped; /* deliveries taken; attempts failed; dropped (full queue) */
} notify_counts_t;

/* Told when every endpoint took the notification of step d about the
 * object (kind, ns, name): the caller records it delivered (the notified
 * marks). Strings valid during the call only. */
typedef void (*notify_delivered_fn)(const char *kind, const char *ns, const char *name,
                                    const notify_due_t *d, void *ud);
/* Told once per failing spell when an endpoint keeps failing, about the
 * object whose notification failed last. */
typedef void (*notify_failing_fn)(const char *kind, const char *ns, const char *name,
                                  const char *endpoint, const char *why, void *ud);

typedef struct notify_sender {
    struct ev_loop *loop;       /* borrowed */
    kube_http *http;            /* borrowed */
    notify_config_t cfg;
    notify_queue_t q;
    ev_timer timer;             /* the next delivery due */
    bool leading;
    unsigned inflight;
    notify_counts_t counts[NOTIFY_MAX_ENDPOINTS];
    hcp_link_t calls;           /* POSTs in flight */
    struct notify_pending *pending; /* notifications posted with a step, not yet
                                       taken by every endpoint */
    size_t n_pending, cap_pending;
    notify_delivered_fn delivered;
    notify_failing_fn failing;
    void *cb_ud;
} notify_sender_t;

/* Sets s up for cfg (copied) on loop and http. Nothing is sent before
 * notify_sender_lead(s, true). Returns 0 or HCP_ENOMEM. */
int notify_sender_init(notify_sender_t *s, struct ev_loop *loop, kube_http *http,
                       const notify_config_t *cfg);

/* Cancels every transfer and frees the queue. */
void notify_sender_free(notify_sender_t *s);

/* Whether this replica leads (sends). Losing the lead keeps what is queued
 * (the new leader derives nothing from it; see the user guide). */
void notify_sender_lead(notify_sender_t *s, bool leading);

/* Queues ev for every endpoint (in each one's format) and starts what is
 * due. Nothing when s is NULL, not leading or has no endpoint. */
void notify_sender_post(notify_sender_t *s, const notify_event_t *ev);

/* Reads a bearer token, the first line of file, into buf ("" when file is
 * "" or unreadable: logged as "cannot read a token file", naming the
 * endpoint or check by label and name, never the token). Shared with the
 * pre-start checks (check/call.h). */
void notify_read_token(const char *file, const char *label, const char *name, char *buf,
                       size_t len);

/* A POST of body (copied) to url as content_type, with the bearer token of
 * token_file (notify_read_token(): label, name) and a timeout of timeout
 * seconds, into *easy and *headers for kube_http_start(). Returns 0, or -1
 * (nothing left to free) when memory ran out. */
int notify_post_setup(const char *url, const char *content_type, const char *token_file,
                      const char *label, const char *name, const char *body, long timeout,
                      CURL **easy, struct curl_slist **headers);

/* Sets the callbacks (either may be NULL). */
void notify_sender_callbacks(notify_sender_t *s, notify_delivered_fn delivered,
                             notify_failing_fn failing, void *ud);

/* As notify_sender_post(), for step d of ev's object: once every endpoint
 * took it, the delivered callback is told (also when it was queued
 * already). */
void notify_sender_post_due(notify_sender_t *s, const notify_event_t *ev, const notify_due_t *d);

#endif
