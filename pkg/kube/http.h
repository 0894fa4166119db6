/*
 * kube/http.h - libcurl's multi interface driven by a libev loop.
 *
 * One kube_http owns one CURLM: every request and watch of every kube_client
 * built on it shares its connection cache. Requests use HTTP/1.1, one TLS
 * connection per transfer in flight: a watch holds its own, a request reuses
 * an idle one. At most KUBE_HTTP_MAX_HOST_CONNECTIONS go to one server;
 * transfers beyond that wait in libcurl's queue.
 *
 * Not HTTP/2: with the libcurl of Debian 12 (7.88), multiplexing every
 * transfer over one connection let a response stop on the way with both
 * sockets' queues empty, until a timeout cut it. A controller start over
 * 2,800 MachineSets waited 15 s or more for a LIST page in 12 of 20 starts,
 * and in none of 20 over HTTP/1.1 (docs/architecture.md, "Transport").
 *
 * Callbacks never run inside libcurl's own callbacks. The write callback only
 * buffers bytes; after curl_multi_socket_action() returns, buffered stream
 * data is delivered (kube_transfer_data_cb), then finished transfers are read
 * with curl_multi_info_read(), removed from the multi handle and reported
 * (kube_transfer_done_cb). Callbacks may therefore start and cancel transfers
 * freely; transfers are freed only after their callbacks have returned.
 */
#ifndef KUBE_HTTP_H
#define KUBE_HTTP_H

#include <curl/curl.h>
#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/list.h"
#include "kube/error.h"

typedef struct kube_transfer kube_transfer;

/* What a finished transfer reports. Pointers are valid during the callback only. */
typedef struct kube_transfer_result {
    int code;            /* 0, HCP_ETRANSPORT or HCP_ETLS */
    long http_status;    /* 0 when no response arrived */
    const char *body;    /* buffered body (for streams: only when not 2xx) */
    size_t body_len;
    double retry_after;  /* seconds from a Retry-After header, -1 when absent */
    const char *errmsg;  /* libcurl's explanation when code != 0 */
    const char *warnings; /* texts of the Warning headers, one per line, or NULL */
    bool conn_lost;      /* the connection broke under the request (reset, broken pipe,
                          * closed with no answer or mid-answer), not a timeout or refusal */
} kube_transfer_result;

/* Bytes of Warning texts kept per response; later ones are dropped. */
#define KUBE_WARNINGS_MAX 2048

/* Connections to one API server at once; watches count (one each), so this
 * leaves room for requests beside every watch the controller holds. */
#define KUBE_HTTP_MAX_HOST_CONNECTIONS 64

/* Stream data, delivered only for 2xx responses of streaming transfers. */
typedef void (*kube_transfer_data_cb)(kube_transfer *t, const char *data, size_t len, void *ud);
/* Completion; called exactly once unless the transfer was cancelled first. */
typedef void (*kube_transfer_done_cb)(kube_transfer *t, const kube_transfer_result *r, void *ud);

typedef struct kube_http {
    struct ev_loop *loop;           /* borrowed */
    CURLM *multi;                   /* owned */
    ev_timer timer;                 /* libcurl's single timeout */
    hcp_link_t active;              /* transfers started, not finished */
    hcp_link_t pending;             /* transfers with stream bytes to deliver, newest first */
    hcp_link_t zombies;             /* transfers finished or cancelled, freed after dispatch */
    hcp_link_t dead_socks;          /* sockets libcurl released, freed after dispatch */
    int dispatching;                /* > 0 while callbacks run */
    int running;                    /* libcurl's count of running transfers */
    long connects;                  /* new connections made (CURLINFO_NUM_CONNECTS summed) */
    unsigned long started;          /* transfers started */
} kube_http;

/*
 * Extracts the text of one Warning header value (RFC 9111 5.5 as the API
 * server writes it: `299 - "unknown field \"spec.x\""`, the quoted text
 * unescaped) into out (outlen bytes, NUL-terminated, truncated). A value that
 * does not have that shape is copied as it is, trimmed. Returns the length
 * written, 0 for an empty value. value (len bytes, untrusted) need not be
 * NUL-terminated.
 */
size_t kube_http_warning_text(const char *value, size_t len, char *out, size_t outlen);

/*
 * Creates the multi handle on `loop` (HTTP/1.1, see above).
 * Calls curl_global_init() once per process. Returns 0 or HCP_ENOMEM.
 */
int kube_http_init(kube_http *h, struct ev_loop *loop, kube_error *err);

/*
 * Cancels every transfer without calling their callbacks and releases the
 * multi handle. Must not be called from a kube_http callback.
 */
void kube_http_close(kube_http *h);

/*
 * Keeps at most n connections in libcurl's connection cache (in use ones
 * are never closed; beyond n the oldest idle one is). libcurl's own bound
 * grows with the transfers in flight, so a client of many servers each
 * asked rarely would otherwise hold hundreds of idle TLS connections, tens
 * of KiB each. n <= 0 is ignored.
 */
void kube_http_max_connections(kube_http *h, long n);

/*
 * Starts a transfer on `easy`, which the caller configured (URL, method,
 * headers, TLS) and whose ownership passes to the transfer, together with
 * `headers` (freed with it; may be NULL). With stream set, response bytes of
 * a 2xx answer go to on_data as they arrive instead of being buffered.
 * Returns the transfer (borrowed: valid until on_done returns or it is
 * cancelled) or NULL with err filled; on failure easy and headers are freed.
 */
kube_transfer *kube_http_start(kube_http *h, CURL *easy, struct curl_slist *headers, bool stream,
                               kube_transfer_data_cb on_data, kube_transfer_done_cb on_done,
                               void *ud, kube_error *err);

/*
 * Stops a transfer; none of its callbacks run afterwards. Safe from any
 * callback, including the transfer's own. NULL is ignored.
 */
void kube_http_cancel(kube_http *h, kube_transfer *t);

/* Bytes received so far by a transfer (for the watchdog and statistics). */
size_t kube_transfer_bytes(const kube_transfer *t);

#endif
