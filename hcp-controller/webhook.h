/* webhook: the admission webhooks over TLS, on the process's libev loop.
 *
 * Every replica serves admission, leader or not, from its own cache: the
 * router (pkg/admission) answers "not ready" until the controller's caches
 * have synced, as the failure policy says. The certificate and key are read
 * from files given by flags and read again when either file changes (a
 * renewed Secret), so a rotation needs no restart; a pair that does not
 * load keeps the old one serving and is logged.
 */
#ifndef HCP_WEBHOOK_H
#define HCP_WEBHOOK_H

#include <ev.h>
#include <stdbool.h>
#include <stddef.h>

#include "admission/router.h"
#include "controller/controller.h"

typedef struct webhook webhook_t;

/* The webhook flags of `hcp-controller run`. Strings are borrowed. */
typedef struct webhook_opts {
    const char *bind_address; /* --webhook-bind-address; NULL or "0": no webhooks */
    const char *cert_file;    /* --webhook-cert-file: certificate chain, PEM */
    const char *key_file;     /* --webhook-key-file: its private key, PEM */
    bool fail_open;           /* --webhook-failure-policy Ignore (default Fail) */
    double reload_interval;   /* seconds between checks of the files (0: 10 s) */
    const char *guard_file;   /* --guard-config: the guard rails (YAML or JSON), read
                                 again when it changes; NULL: none */
    const struct guard_config *guard; /* what guard_file said at the start
                                 (webhook_config_load()); NULL: read it */
} webhook_opts_t;

/*
 * Reads the guard rails from the file path (YAML or JSON: a ConfigMap or a
 * plain mapping, guard_config_parse()) into *cfg. Returns 0, HCP_EIO (the
 * file unreadable) or HCP_EINVAL (not one valid document), with a sentence
 * starting "<flag> <path>: " in err. `preview --check` and `run` share it.
 */
struct guard_config;
int webhook_guard_load(const char *flag, const char *path, struct guard_config *cfg, char *err,
                       size_t errlen);

/*
 * Reads the whole guard rails' file at once (a file that may be read once,
 * such as a pipe): the guard rails (as above), its `notifications`
 * (notify_config_parse(); the defaults, no endpoint, when the key is
 * absent), its `checks` (check_config_parse(); none when absent) and its
 * `waves` (wave_config_parse(); off when absent), into
 * whichever of guard, notify, checks and waves is not NULL (the others are
 * checked, not kept). A NULL path gives the defaults. Returns 0, HCP_EIO or
 * HCP_EINVAL with "<flag> <path>: <key>...: ..." in err, naming the key,
 * never a token. `run` reads its configuration with it, `preview --check`
 * checks a file with it.
 */
struct notify_config;
struct check_config;
struct wave_config;
int webhook_config_load(const char *flag, const char *path, struct guard_config *guard,
                        struct notify_config *notify, struct check_config *checks,
                        struct wave_config *waves, char *err, size_t errlen);

/*
 * Reads the certificate files (and the guard rails when o->guard_file is
 * set), registers the controller's webhooks (the holds and the
 * validation) and starts listening. ctl is borrowed. Returns 0 with *out (NULL when the
 * bind address disables the webhooks), or a negative HCP_E* code with a
 * sentence naming the flag in err: HCP_EINVAL (a file flag missing),
 * HCP_EIO (a file unreadable), HCP_ELISTEN (address in use, a pair that
 * does not load).
 */
int webhook_start(webhook_t **out, struct ev_loop *loop, ctl_controller_t *ctl,
                  const webhook_opts_t *o, char *err, size_t errlen);

/* The port the webhooks listen on (0 when stopped). */
int webhook_port(const webhook_t *w);

/*
 * The process is stopping (SIGTERM): from now on GET /readyz answers 503
 * "shutting down", so the pod leaves the webhook Service's endpoints, while
 * admission requests are still answered as before (the API server may
 * still route some here until every node has seen the endpoints change);
 * each answer closes its connection, so the API server's next call opens a
 * new one through the Service to a replica that stays. The listener keeps
 * accepting until webhook_stop(). NULL is accepted; a second call does
 * nothing.
 */
void webhook_drain(webhook_t *w);

/* Counters of answered requests, for /metrics. NULL w gives NULL. */
const adm_stats_t *webhook_stats(const webhook_t *w);

/* Stops serving and frees. NULL is accepted. */
void webhook_stop(webhook_t *w);

#endif
