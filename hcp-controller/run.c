/* run.c: `hcp-controller run`, the controller process.
 *
 * Parses the flags operators know from other controllers, loads credentials
 * (a kubeconfig, else the in-cluster service account), starts the
 * controller on one libev loop, optionally campaigns for the leader Lease,
 * and serves /metrics, /healthz and /readyz. SIGTERM or SIGINT stops
 * writing and releases the Lease at once (another replica leads at its next
 * try); with the webhooks served, the process then keeps answering them for
 * --shutdown-delay seconds while /readyz says it is not ready (the time a
 * cluster takes to stop routing the webhook Service to a terminating pod),
 * and exits 0 within that delay plus 5 seconds.
 */
#include "run.h"

#include <ev.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"
#include "controller/controller.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/http.h"
#include "kube/lease.h"
#include "log/log.h"
#include "serve.h"
#include "webhook.h"
#include "check/call.h"
#include "decide/wave.h"
#include "notify/send.h"
#include "policy/guard.h"

#define EXIT_USAGE 2
#define SHUTDOWN_GRACE 4.0 /* seconds after the delay; the process exits within delay + 5 */
#define SHUTDOWN_DELAY 5.0 /* --shutdown-delay's default, seconds */
#define STANDBY_AFTER 1.0  /* --standby-release-after's default, seconds */

static const char usage_text[] =
    "Usage: hcp-controller run [FLAGS]\n"
    "\n"
    "Runs the change management controller against the cluster of the\n"
    "kubeconfig, or in-cluster with its service account.\n"
    "\n"
    "Flags:\n"
    "  --kubeconfig PATH                  kubeconfig to use (default: $KUBECONFIG, else\n"
    "                                     the in-cluster service account, else ~/.kube/config)\n"
    "  --context NAME                     kubeconfig context (default: current-context)\n"
    "  --namespace NS                     watch policies, HostedClusters and NodePools of\n"
    "                                     this namespace only (default: all namespaces)\n"
    "  --leader-elect[=true|false]        campaign for a Lease; only the leader writes\n"
    "                                     (default false)\n"
    "  --leader-election-namespace NS     namespace of the Lease (default: the pod's\n"
    "                                     namespace in-cluster, else \"default\")\n"
    "  --leader-election-id NAME          name of the Lease (default hcp-controller)\n"
    "  --metrics-bind-address ADDR        serve /metrics and /calendar/ here (default :8080;\n"
    "                                     0 disables)\n"
    "  --metrics-secure[=true|false]      serve them over HTTPS to callers the API server\n"
    "                                     authenticates (TokenReview) and authorizes\n"
    "                                     (SubjectAccessReview: get on the URL /metrics; get\n"
    "                                     hostedclusters in a calendar's namespace); false\n"
    "                                     serves plain HTTP to anyone (default true)\n"
    "  --metrics-cert-file PATH           the metrics server's certificate chain (PEM), read\n"
    "                                     again when it changes (default: self-signed)\n"
    "  --metrics-key-file PATH            its private key (PEM)\n"
    "  --health-probe-bind-address ADDR   serve /healthz and /readyz here (default :8081;\n"
    "                                     0 disables)\n"
    "  --webhook-bind-address ADDR        serve the admission webhooks over TLS here\n"
    "                                     (default 0: disabled); every replica serves them\n"
    "  --webhook-cert-file PATH           the webhooks' certificate chain (PEM), read again\n"
    "                                     when the file changes\n"
    "  --webhook-key-file PATH            the certificate's private key (PEM)\n"
    "  --webhook-failure-policy Fail|Ignore\n"
    "                                     the failurePolicy of the webhook configurations:\n"
    "                                     a request the webhooks cannot check (caches not\n"
    "                                     synced, another resource) is refused (Fail, the\n"
    "                                     default) or admitted with a warning (Ignore)\n"
    "  --shutdown-delay SECONDS           after SIGTERM, keep answering the webhooks this\n"
    "                                     long while /readyz says not ready, so that calls\n"
    "                                     still routed here are answered (default 5; the\n"
    "                                     Lease is released at once; no delay without\n"
    "                                     --webhook-bind-address)\n"
    "  --standby-release-after SECONDS    with --leader-elect: a replica that does not lead\n"
    "                                     writes a held change whose window opened when it\n"
    "                                     is still held this long after and no held change\n"
    "                                     was let through meanwhile (the leader is gone);\n"
    "                                     conditional on the version it decided from, so\n"
    "                                     never twice (default 1; 0: never)\n"
    "  --hypershift-users NAME,...        the users whose writes never withdraw a held\n"
    "                                     request (HyperShift's own, and the controller's;\n"
    "                                     default " RUN_HYPERSHIFT_USERS_DEFAULT ")\n"
    "  --remediate-held-drift[=true|false]\n"
    "                                     while a HyperShift configuration update is held,\n"
    "                                     delete a machine of the older template that fails\n"
    "                                     its health check, which Cluster API leaves to the\n"
    "                                     deferred rollout; it is replaced from the new\n"
    "                                     template (default true)\n"
    "  --guard-config PATH                the guard rails the validating webhooks enforce\n"
    "                                     (YAML or JSON, as preview --check reads them),\n"
    "                                     read again when the file changes (default: none)\n"
    "  --hosted-apiserver auto|service|kubeconfig\n"
    "                                     how to reach a hosted cluster's API server for\n"
    "                                     its ClusterVersion: the in-cluster service\n"
    "                                     kube-apiserver.<hcp-namespace>.svc, or the address\n"
    "                                     in its service-network-admin-kubeconfig Secret\n"
    "                                     (default auto: the service when running in-cluster)\n"
    "  --hosted-reassert-period SECONDS   how often each hosted ClusterVersion is read\n"
    "                                     again, and our conditions restored when another\n"
    "                                     writer changed them (default 120)\n"
    "  --kube-api-qps N                   client-side request rate limit (default 20)\n"
    "  --kube-api-burst N                 burst above the rate limit (default 30)\n"
    "  --log-format text|json             log line format (default text)\n"
    "  -v N, --v N                        log verbosity (default 0)\n"
    "  --simulated-start-time RFC3339     start a simulated clock at this instant\n"
    "                                     (tests and demos)\n"
    "  --time-scale N                     simulated seconds per real second (default 1;\n"
    "                                     with --simulated-start-time)\n"
    "  -h, --help                         show this help\n";

/* Takes the value of flag `name` from "--name=value" or "--name value".
 * Returns 1 and *val when argv[*i] is this flag, 0 when it is another, -1
 * when the value is missing. */
static int flag_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

static int parse_double(const char *s, double min, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !(v >= min) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

static int parse_bool_flag(const char *arg, const char *name, bool *out)
{
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '\0') {
        *out = true;
        return 1;
    }
    if (arg[n] != '=')
        return 0;
    if (strcmp(arg + n + 1, "true") == 0)
        *out = true;
    else if (strcmp(arg + n + 1, "false") == 0)
        *out = false;
    else
        return -1;
    return 1;
}

/* The flags that are true or false ("--name", "--name=true|false"). */
static const struct bflag {
    const char *name;
    size_t field; /* offset of the bool in run_opts_t */
} bflags[] = {
    {"--leader-elect", offsetof(run_opts_t, leader_elect)},
    {"--metrics-secure", offsetof(run_opts_t, metrics_secure)},
    {"--remediate-held-drift", offsetof(run_opts_t, remediate_drift)},
};

/* Returns 1 when arg is one of bflags (its value set in o), 0 when it is
 * none, or HCP_EINVAL with err when its value is neither true nor false. */
static int bool_flag(const char *arg, run_opts_t *o, char *err, size_t errlen)
{
    for (size_t k = 0; k < sizeof(bflags) / sizeof(bflags[0]); k++) {
        int r = parse_bool_flag(arg, bflags[k].name, (bool *)((char *)o + bflags[k].field));
        if (r < 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s takes true or false, not \"%.40s\"",
                            bflags[k].name, arg + strlen(bflags[k].name) + 1);
        if (r > 0)
            return 1;
    }
    return 0;
}

/* The flags that take a value, and how each value is read. */
typedef enum vkind { V_STRING, V_QPS, V_BURST, V_LOG_FORMAT, V_VERBOSITY, V_SIM_START,
                     V_TIME_SCALE, V_HOSTED_PERIOD, V_SHUTDOWN_DELAY, V_STANDBY, V_USERS } vkind_t;

static const struct vflag {
    const char *name;
    vkind_t kind;
    size_t field; /* V_STRING: offset of the const char * in run_opts_t */
} vflags[] = {
    {"--kubeconfig", V_STRING, offsetof(run_opts_t, kubeconfig)},
    {"--context", V_STRING, offsetof(run_opts_t, context)},
    {"--namespace", V_STRING, offsetof(run_opts_t, ns)},
    {"--leader-election-namespace", V_STRING, offsetof(run_opts_t, leader_election_ns)},
    {"--leader-election-id", V_STRING, offsetof(run_opts_t, leader_election_id)},
    {"--metrics-bind-address", V_STRING, offsetof(run_opts_t, metrics_addr)},
    {"--health-probe-bind-address", V_STRING, offsetof(run_opts_t, health_addr)},
    {"--metrics-cert-file", V_STRING, offsetof(run_opts_t, metrics_cert)},
    {"--metrics-key-file", V_STRING, offsetof(run_opts_t, metrics_key)},
    {"--hosted-apiserver", V_STRING, offsetof(run_opts_t, hosted_apiserver)},
    {"--webhook-bind-address", V_STRING, offsetof(run_opts_t, webhook_addr)},
    {"--webhook-cert-file", V_STRING, offsetof(run_opts_t, webhook_cert)},
    {"--webhook-key-file", V_STRING, offsetof(run_opts_t, webhook_key)},
    {"--webhook-failure-policy", V_STRING, offsetof(run_opts_t, webhook_policy)},
    {"--guard-config", V_STRING, offsetof(run_opts_t, guard_config)},
    {"--hosted-reassert-period", V_HOSTED_PERIOD, 0},
    {"--shutdown-delay", V_SHUTDOWN_DELAY, 0},
    {"--standby-release-after", V_STANDBY, 0},
    {"--hypershift-users", V_USERS, 0},
    {"--kube-api-qps", V_QPS, 0},
    {"--kube-api-burst", V_BURST, 0},
    {"--log-format", V_LOG_FORMAT, 0},
    {"--v", V_VERBOSITY, 0},
    {"-v", V_VERBOSITY, 0},
    {"--simulated-start-time", V_SIM_START, 0},
    {"--time-scale", V_TIME_SCALE, 0},
};

/* Splits the comma-separated user names v into o->hypershift_users. "" is
 * none. Returns 0 or HCP_EINVAL with err. */
static int set_users(const char *v, run_opts_t *o, char *err, size_t errlen)
{
    size_t n = 0;
    char *p;

    if (strlen(v) >= sizeof(o->users_buf))
        return hcp_errf(err, errlen, HCP_EINVAL, "--hypershift-users: longer than %zu bytes",
                        sizeof(o->users_buf) - 1);
    memcpy(o->users_buf, v, strlen(v) + 1);
    for (p = o->users_buf; *p;) {
        char *end = strchr(p, ',');
        if (end)
            *end = '\0';
        if (!*p)
            return hcp_errf(err, errlen, HCP_EINVAL, "--hypershift-users: an empty name in \"%.60s\"",
                            v);
        if (n == RUN_MAX_USERS)
            return hcp_errf(err, errlen, HCP_EINVAL, "--hypershift-users: more than %d names",
                            RUN_MAX_USERS);
        o->hypershift_users[n++] = p;
        p = end ? end + 1 : p + strlen(p);
    }
    o->hypershift_users[n] = NULL;
    return 0;
}

/* Reads the value v of flag f into o. Returns 0 or HCP_EINVAL with err. */
static int set_value(const struct vflag *f, const char *v, run_opts_t *o, char *err,
                     size_t errlen)
{
    double d;
    switch (f->kind) {
    case V_STRING:
        *(const char **)((char *)o + f->field) = v;
        return 0;
    case V_QPS:
        if (parse_double(v, 0, &o->qps))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--kube-api-qps: \"%.40s\" is not a number >= 0", v);
        return 0;
    case V_BURST:
        if (parse_double(v, 1, &d) || d != (int)d)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--kube-api-burst: \"%.40s\" is not a whole number >= 1", v);
        o->burst = (int)d;
        return 0;
    case V_LOG_FORMAT:
        if (strcmp(v, "json") != 0 && strcmp(v, "text") != 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--log-format: \"%.40s\" is not text or json", v);
        o->log_json = strcmp(v, "json") == 0;
        return 0;
    case V_VERBOSITY:
        if (parse_double(v, 0, &d) || d != (int)d || d > 10)
            return hcp_errf(err, errlen, HCP_EINVAL, "-v: \"%.40s\" is not a verbosity 0..10",
                            v);
        o->verbosity = (int)d;
        return 0;
    case V_SIM_START:
        if (sched_parse_rfc3339(v, &o->sim_start))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--simulated-start-time: \"%.40s\" is not an RFC 3339 time "
                            "(e.g. 2026-01-03T00:00:00Z)",
                            v);
        o->simulated = true;
        return 0;
    case V_HOSTED_PERIOD:
        if (parse_double(v, 1, &o->hosted_period))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--hosted-reassert-period: \"%.40s\" is not a number of seconds >= 1",
                            v);
        return 0;
    case V_SHUTDOWN_DELAY:
        if (parse_double(v, 0, &o->shutdown_delay) || o->shutdown_delay > 3600)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--shutdown-delay: \"%.40s\" is not a number of seconds 0..3600", v);
        return 0;
    case V_STANDBY:
        if (parse_double(v, 0, &o->standby_after) || o->standby_after > 60)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--standby-release-after: \"%.40s\" is not a number of seconds "
                            "0..60", v);
        return 0;
    case V_USERS:
        return set_users(v, o, err, errlen);
    case V_TIME_SCALE:
        if (parse_double(v, 1e-6, &o->time_scale))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "--time-scale: \"%.40s\" is not a number > 0", v);
        return 0;
    }
    return HCP_EINVAL;
}

/* Reads argv[*i] (and its value) when it is one of vflags. Returns 1 when
 * it was, 0 when it is no such flag, or HCP_EINVAL with err. */
static int value_flag(int argc, char **argv, int *i, run_opts_t *o, char *err, size_t errlen)
{
    for (size_t k = 0; k < sizeof(vflags) / sizeof(vflags[0]); k++) {
        const char *v = NULL;
        int r = flag_value(argc, argv, i, vflags[k].name, &v);
        if (r < 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "flag %.60s needs a value", argv[*i]);
        if (r > 0) {
            int rc = set_value(&vflags[k], v, o, err, errlen);
            return rc ? rc : 1;
        }
    }
    return 0;
}

int run_parse_flags(int argc, char **argv, run_opts_t *o, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->leader_election_id = "hcp-controller";
    o->metrics_addr = ":8080";
    o->metrics_secure = true;
    o->remediate_drift = true;
    o->health_addr = ":8081";
    o->qps = 20;
    o->burst = 30;
    o->time_scale = 1;
    o->hosted_apiserver = "auto";
    o->webhook_addr = "0";
    o->webhook_policy = "Fail";
    o->shutdown_delay = SHUTDOWN_DELAY;
    o->standby_after = STANDBY_AFTER;
    o->hypershift_users[0] = RUN_HYPERSHIFT_USERS_DEFAULT;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            o->help = true;
            return 0;
        }
        if ((r = bool_flag(a, o, err, errlen)) < 0)
            return r;
        if (r > 0)
            continue;
        if ((r = value_flag(argc, argv, &i, o, err, errlen)) < 0)
            return r;
        if (r == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "unknown flag \"%.60s\"", a);
    }
    if (strcmp(o->hosted_apiserver, "auto") != 0 && strcmp(o->hosted_apiserver, "service") != 0 &&
        strcmp(o->hosted_apiserver, "kubeconfig") != 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--hosted-apiserver: \"%.40s\" is not auto, service or kubeconfig",
                        o->hosted_apiserver);
    if (strcmp(o->webhook_policy, "Fail") != 0 && strcmp(o->webhook_policy, "Ignore") != 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--webhook-failure-policy: \"%.40s\" is not Fail or Ignore",
                        o->webhook_policy);
    if (o->guard_config && strcmp(o->webhook_addr, "0") == 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--guard-config needs --webhook-bind-address (the guard rails are "
                        "enforced by the validating webhooks)");
    if ((o->metrics_cert == NULL) != (o->metrics_key == NULL))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--metrics-cert-file and --metrics-key-file go together");
    if (o->metrics_cert && !o->metrics_secure)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "--metrics-cert-file needs --metrics-secure=true (plain HTTP has no "
                        "certificate)");
    if (o->time_scale != 1 && !o->simulated)
        return hcp_errf(err, errlen, HCP_EINVAL, "--time-scale needs --simulated-start-time");
    return 0;
}

/* ---- the running process ------------------------------------------------ */

typedef struct app {
    struct ev_loop *loop;
    run_opts_t opts;
    kube_config cfg;
    kube_http http;
    kube_client client;
    ctl_controller_t *ctl;
    kube_lease lease;
    bool lease_started;
    serve_t *serve;
    webhook_t *webhook;
    ev_signal sigterm, sigint;
    ev_timer drain;     /* the shutdown delay: webhooks answered, not ready */
    ev_timer grace;     /* the last resort after the delay */
    ev_timer flush;     /* polls until the notified marks are written */
    bool stopping;
    bool drained;       /* the shutdown delay is over */
    bool flushed;       /* no notification in flight, every one delivered
                           recorded in its object's marks */
    bool released;      /* the Lease is released (or there is none) */
    log_once_t warned;  /* API server warnings logged at full level already */
    notify_sender_t notify; /* the notifications (DESIGN.md 3.9) */
    bool notify_on;
    check_runner_t checks;  /* the pre-start checks (DESIGN.md 3.15) */
    bool checks_on;
    guard_config_t guard;   /* the guard rails --guard-config said at the start */
} app_t;

/* The management API server's Warning headers (a pruned unknown field, a
 * deprecated API): each distinct text is logged as a warning once, repeats
 * only at verbosity 2. */
static void on_api_warning(const char *method, const char *url, const char *text, void *ud)
{
    app_t *a = ud;
    int level = log_once_first(&a->warned, text) ? LOG_WARN : 2;

    log_kv(level, "the API server warns", "method", method, "url", url, "warning", text, NULL);
}

static void on_leading(kube_lease *l, bool leading, void *ud)
{
    (void)l;
    app_t *a = ud;
    log_kv(LOG_INFO, leading ? "became the leader" : "stopped leading", "identity",
           a->lease.opts.identity, NULL);
    if (!a->stopping) {
        ctl_set_leading(a->ctl, leading);
        if (a->notify_on)
            notify_sender_lead(&a->notify, leading);
        if (a->checks_on)
            check_runner_lead(&a->checks, leading);
    }
}

/* The API server answers again after requests got no answer: the Lease is
 * tried at once (a leader that stepped down leads again) and the leader
 * decides every object again, so that what failed meanwhile goes out now. */
static void on_api_back(void *ud)
{
    app_t *a = ud;
    log_kv(LOG_INFO, "the API server answers again", NULL);
    if (a->stopping)
        return;
    if (a->lease_started)
        kube_lease_kick(&a->lease);
    if (a->ctl)
        ctl_api_back(a->ctl);
}

/* A pre-start check answered about an object: decide it again. */
static void on_check_answer(const char *kind, const char *ns, const char *name, void *ud)
{
    app_t *a = ud;
    if (a->ctl)
        ctl_check_answered(a->ctl, kind, ns, name);
}

/* A step to notify: queued for every endpoint (the controller calls it
 * only while it leads). */
static void on_notify(const notify_event_t *ev, const notify_due_t *d, void *ud)
{
    notify_sender_post_due(ud, ev, d);
}

/* Every endpoint took a step's notification: the controller writes it to
 * the object's notified marks. */
static void on_delivered(const char *kind, const char *ns, const char *name,
                         const notify_due_t *d, void *ud)
{
    app_t *a = ud;
    if (a->ctl)
        ctl_notified(a->ctl, kind, ns, name, d);
}

static void on_failing(const char *kind, const char *ns, const char *name, const char *endpoint,
                       const char *why, void *ud)
{
    app_t *a = ud;
    if (a->ctl)
        ctl_notify_failing(a->ctl, kind, ns, name, endpoint, why);
}

/* Stops the loop once the shutdown delay is over, the Lease released and
 * the notified marks written. */
static void maybe_exit(app_t *a)
{
    if (a->drained && a->released && a->flushed)
        ev_break(a->loop, EVBREAK_ALL);
}

/* Every notification in flight answered and every one delivered in the
 * notified marks of its object: a restart sends none of them again. */
static bool notify_flushed(const app_t *a)
{
    return !a->notify_on || (a->notify.inflight == 0 && (!a->ctl || ctl_notify_flushed(a->ctl)));
}

static void on_flush(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    app_t *a = w->data;
    if (!notify_flushed(a))
        return;
    ev_timer_stop(loop, w);
    a->flushed = true;
    maybe_exit(a);
}

static void lease_released(void *ud)
{
    app_t *a = ud;
    a->released = true;
    maybe_exit(a);
}

static void on_drained(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    app_t *a = w->data;
    a->drained = true;
    maybe_exit(a);
}

static void on_grace(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)revents;
    app_t *a = w->data;
    log_kv(LOG_WARN, "shutdown grace period over; exiting", "notified-marks-written",
           notify_flushed(a) ? "true" : "false", NULL);
    ev_break(loop, EVBREAK_ALL);
}

/* SIGTERM (the kubelet stopping the pod) or SIGINT. On a cluster the pod's
 * endpoints are removed from the webhook Service at about the same time as
 * the signal comes, and every node and the API server see that some time
 * later, so admission calls may still arrive here for a few seconds. In
 * order: stop writing (and notifying), release the Lease (a peer leads at
 * its next try, without waiting for the Lease to expire), report not ready
 * and close each webhook connection after its answer, keep answering the
 * webhooks for the shutdown delay, write the notified marks of what was
 * delivered, then exit. A second signal ends the delay and the wait. */
static void on_signal(struct ev_loop *loop, ev_signal *w, int revents)
{
    (void)loop;
    (void)revents;
    app_t *a = w->data;
    char delay[32];
    if (a->stopping) {
        a->drained = a->flushed = true;
        maybe_exit(a);
        return;
    }
    a->stopping = true;
    double d = a->webhook ? a->opts.shutdown_delay : 0;
    snprintf(delay, sizeof(delay), "%g", d);
    log_kv(LOG_INFO, "shutting down", "signal", w->signum == SIGTERM ? "SIGTERM" : "SIGINT",
           "webhooks-answered-for-seconds", delay, NULL);
    ctl_set_leading(a->ctl, false); /* stop writing first */
    ctl_set_standby(a->ctl, 0);     /* and leave nothing to a standby here */
    if (a->notify_on)
        notify_sender_lead(&a->notify, false);
    if (a->checks_on)
        check_runner_lead(&a->checks, false);
    webhook_drain(a->webhook);
    serve_drain(a->serve);
    ev_timer_set(&a->grace, d + SHUTDOWN_GRACE, 0.);
    ev_timer_start(a->loop, &a->grace);
    /* Notifications delivered but not yet in their objects' marks (the
     * marks are written by whoever sent them, leading or not) would be sent
     * again by the next leader: the exit waits for them, within the grace. */
    a->flushed = notify_flushed(a);
    if (!a->flushed)
        ev_timer_start(a->loop, &a->flush);
    a->drained = d <= 0;
    if (!a->drained) {
        ev_timer_set(&a->drain, d, 0.);
        ev_timer_start(a->loop, &a->drain);
    }
    a->released = !a->lease_started;
    if (a->lease_started)
        kube_lease_release(&a->lease, lease_released, a);
    maybe_exit(a);
}

/* The namespace the pod runs in, when in a cluster. */
static const char *pod_namespace(char *buf, size_t len)
{
    FILE *f = fopen("/var/run/secrets/kubernetes.io/serviceaccount/namespace", "r");
    if (!f)
        return "default";
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    return buf[0] ? buf : "default";
}

/* Campaigns for the Lease under a unique identity (host name and a
 * per-process suffix). Returns 0, or HCP_EINVAL when the election could not
 * start (logged). */
static int start_election(app_t *a)
{
    char nsbuf[256], identity[300], host[200];
    kube_error ke;
    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "hcp-controller");
    host[sizeof(host) - 1] = '\0';
    snprintf(identity, sizeof(identity), "%s_%08lx", host,
             (unsigned long)((unsigned)getpid() * 2654435761u ^ (unsigned)ev_time()));
    kube_lease_opts lo = {
        .ns = a->opts.leader_election_ns ? a->opts.leader_election_ns
                                         : pod_namespace(nsbuf, sizeof(nsbuf)),
        .name = a->opts.leader_election_id,
        .identity = identity,
        .on_change = on_leading,
        .ud = a,
    };
    if (kube_lease_start(&a->lease, &a->client, &lo, &ke)) {
        log_kv(LOG_ERROR, "cannot start leader election", "error", ke.message, NULL);
        return HCP_EINVAL;
    }
    a->lease_started = true;
    return 0;
}

/* Starts the admission webhooks, then /metrics and the probes. Returns 0,
 * or -1 with nothing left running (logged). */
static int start_servers(app_t *a)
{
    char err[512];
    webhook_opts_t wo = {.bind_address = a->opts.webhook_addr, .cert_file = a->opts.webhook_cert,
                         .key_file = a->opts.webhook_key,
                         .fail_open = strcmp(a->opts.webhook_policy, "Ignore") == 0,
                         .guard_file = a->opts.guard_config, .guard = &a->guard};

    if (webhook_start(&a->webhook, a->loop, a->ctl, &wo, err, sizeof(err))) {
        log_kv(LOG_ERROR, "cannot serve the admission webhooks", "error", err, NULL);
        return -1;
    }
    serve_metrics_opts_t mo = {.secure = a->opts.metrics_secure,
                               .cert_file = a->opts.metrics_cert,
                               .key_file = a->opts.metrics_key};
    if (!mo.secure && strcmp(a->opts.metrics_addr, "0") != 0)
        log_kv(LOG_INFO, "serving /metrics and /calendar/ over plain HTTP to every caller "
               "(--metrics-secure=false)", "address", a->opts.metrics_addr, NULL);
    if (serve_start(&a->serve, a->loop, a->ctl, &a->client, webhook_stats(a->webhook),
                    a->opts.metrics_addr, &mo, a->opts.health_addr, err, sizeof(err))) {
        log_kv(LOG_ERROR, "cannot serve metrics and probes", "error", err, NULL);
        webhook_stop(a->webhook);
        a->webhook = NULL;
        return -1;
    }
    if (a->notify_on)
        serve_set_notify(a->serve, &a->notify);
    return 0;
}

int run_main(int argc, char **argv)
{
    app_t a;
    char err[512];
    kube_error ke;
    int status = 1;
    memset(&a, 0, sizeof(a));

    if (run_parse_flags(argc, argv, &a.opts, err, sizeof(err))) {
        fprintf(stderr, "hcp-controller run: %s\n\n%s", err, usage_text);
        return EXIT_USAGE;
    }
    if (a.opts.help) {
        fputs(usage_text, stdout);
        return 0;
    }
    log_setup(a.opts.log_json, a.opts.verbosity);
#ifdef __GLIBC__
    /* A /metrics answer for a fleet is megabytes (4 MB at 1,000 clusters
     * and 3,000 pools). glibc raises its mmap threshold to the size of
     * every mmapped block freed, so after the first scrape those buffers
     * came from the heap and its top stayed high between scrapes: a fixed
     * threshold keeps each in a mapping of its own, returned when freed. */
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
#endif
    a.loop = ev_default_loop(0);
    if (kube_config_load_default(&a.cfg, a.opts.kubeconfig, a.opts.context, &ke)) {
        log_kv(LOG_ERROR, "cannot load credentials", "error", ke.message, NULL);
        return 1;
    }
    kube_client_opts copts = {.qps = a.opts.qps, .burst = a.opts.burst,
                              .on_warning = on_api_warning, .warning_ud = &a};
    if (kube_http_init(&a.http, a.loop, &ke) ||
        kube_client_init(&a.client, &a.http, &a.cfg, &copts, &ke)) {
        log_kv(LOG_ERROR, "cannot start the Kubernetes client", "error", ke.message, NULL);
        goto out_cfg;
    }
    /* The notifications and the pre-start checks live in the guard rails'
     * file, read once here: a bad key stops the start, naming it, as the
     * guard rails do. */
    notify_config_t ncfg;
    check_config_t ccfg;
    static wave_config_t wcfg; /* 80 kB: not on the stack */
    if (webhook_config_load("--guard-config", a.opts.guard_config, &a.guard, &ncfg, &ccfg, &wcfg,
                            err, sizeof(err))) {
        log_kv(LOG_ERROR, "cannot read the guard rails' file", "error", err, NULL);
        goto out_client;
    }
    /* The checks told the health after a change are delivered as the
     * notifications are (check.h). */
    check_post_change_endpoints(&ccfg, &ncfg);
    if (ncfg.n_endpoints > 0) {
        if (notify_sender_init(&a.notify, a.loop, &a.http, &ncfg)) {
            log_kv(LOG_ERROR, "cannot start the notifications", "error", "out of memory", NULL);
            notify_sender_free(&a.notify);
            goto out_client;
        }
        a.notify_on = true;
        notify_sender_lead(&a.notify, !a.opts.leader_elect);
        char n[16];
        snprintf(n, sizeof(n), "%zu", ncfg.n_endpoints);
        log_kv(LOG_INFO, "notifications on", "endpoints", n, NULL);
    }
    if (ccfg.n > 0) {
        check_runner_init(&a.checks, a.loop, &a.http, &ccfg, on_check_answer, &a);
        a.checks_on = true;
        check_runner_lead(&a.checks, !a.opts.leader_elect);
        char n[16];
        snprintf(n, sizeof(n), "%zu", ccfg.n);
        log_kv(LOG_INFO, "pre-start checks on", "checks", n, NULL);
    }
    ctl_options_t co = {.watch_namespace = a.opts.ns, .leading = !a.opts.leader_elect,
                        .hosted_period = a.opts.hosted_period,
                        .notify = a.notify_on ? on_notify : NULL, .notify_ud = &a.notify,
                        .notify_cfg = a.notify_on ? &a.notify.cfg : NULL,
                        .hypershift_users = a.opts.hypershift_users,
                        .remediate_drift = a.opts.remediate_drift,
                        .checks = a.checks_on ? &a.checks : NULL,
                        .standby_after = a.opts.standby_after};
    if (a.notify_on)
        notify_sender_callbacks(&a.notify, on_delivered, on_failing, &a);
    /* In a cluster the Secret's address (the service's short name) only
     * resolves in the control-plane namespace; use the full service name. */
    co.rewrite_hosted_server = strcmp(a.opts.hosted_apiserver, "service") == 0 ||
                               (strcmp(a.opts.hosted_apiserver, "auto") == 0 &&
                                a.cfg.token_file != NULL && !a.opts.kubeconfig);
    co.clock.simulated = a.opts.simulated;
    co.clock.sim0 = a.opts.sim_start;
    co.clock.real0 = ev_now(a.loop);
    co.clock.scale = a.opts.time_scale;
    if (ctl_start(a.loop, &a.client, &co, &a.ctl, err, sizeof(err))) {
        log_kv(LOG_ERROR, "cannot start the controller", "error", err, NULL);
        goto out_client;
    }
    /* Before the loop runs: the caches fill with each cluster's wave. */
    if (ctl_set_waves(a.ctl, &wcfg)) {
        log_kv(LOG_ERROR, "cannot start the release waves", "error", "out of memory", NULL);
        goto out_ctl;
    }
    if (wave_config_on(&wcfg)) {
        char n[16], b[16];
        snprintf(n, sizeof(n), "%zu", wcfg.n);
        snprintf(b, sizeof(b), "%zu", wcfg.n_blocked);
        log_kv(LOG_INFO, "release waves on", "waves", n, "blockedReleases", b, NULL);
    }
    kube_client_on_back(&a.client, on_api_back, &a);
    if (start_servers(&a))
        goto out_ctl;
    if (a.opts.leader_elect && start_election(&a))
        goto out_serve;
    ev_signal_init(&a.sigterm, on_signal, SIGTERM);
    ev_signal_init(&a.sigint, on_signal, SIGINT);
    a.sigterm.data = a.sigint.data = &a;
    ev_signal_start(a.loop, &a.sigterm);
    ev_signal_start(a.loop, &a.sigint);
    ev_timer_init(&a.grace, on_grace, SHUTDOWN_GRACE, 0.);
    a.grace.data = &a;
    ev_timer_init(&a.flush, on_flush, 0.02, 0.02);
    a.flush.data = &a;
    ev_timer_init(&a.drain, on_drained, a.opts.shutdown_delay, 0.);
    a.drain.data = &a;
    log_kv(LOG_INFO, "hcp-controller started", "server", a.cfg.server, "leader-elect",
           a.opts.leader_elect ? "true" : "false", "webhook-port",
           a.webhook ? (snprintf(err, sizeof(err), "%d", webhook_port(a.webhook)), err) : "0",
           NULL);

    ev_run(a.loop, 0);
    status = 0;

    ev_signal_stop(a.loop, &a.sigterm);
    ev_signal_stop(a.loop, &a.sigint);
    ev_timer_stop(a.loop, &a.grace);
    ev_timer_stop(a.loop, &a.flush);
    ev_timer_stop(a.loop, &a.drain);
    if (a.lease_started)
        kube_lease_stop(&a.lease);
out_serve:
    serve_stop(a.serve);
    webhook_stop(a.webhook);
out_ctl:
    ctl_stop(a.ctl);
out_client:
    if (a.checks_on)
        check_runner_free(&a.checks);
    if (a.notify_on)
        notify_sender_free(&a.notify);
    kube_client_close(&a.client);
    kube_http_close(&a.http);
out_cfg:
    kube_config_free(&a.cfg);
    log_kv(LOG_INFO, "hcp-controller stopped", NULL);
    return status;
}
