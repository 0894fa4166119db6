/*
 * Benchmark: hcp-controller at fleet scale against the local cluster.
 *
 * Loads 1,000 HostedClusters (each with its control-plane namespace and CAPI
 * Cluster), 3,000 NodePools (each with its MachineDeployment) and 50
 * policies in 10 namespaces, with HyperShift-sized status conditions, then
 * runs `hcp-controller run` on a simulated clock and prints:
 *
 *   1. cold start to converged, and the same number of PATCHes sent by a
 *      plain client (pkg/kube) with the controller's bound on writes in
 *      flight (32; BENCH_BASELINE_IN_FLIGHT): the ratio;
 *   2. one window boundary that flips all 3,000 NodePools: the time from the
 *      boundary to the last write acknowledged;
 *   3. steady state for BENCH_STEADY_SECONDS (default 600): writes (must be
 *      0) and CPU seconds of the controller;
 *   4. the controller's peak RSS (VmHWM).
 *
 * Converged means: the controller's writes (hcp_controller_writes_total)
 * have not grown for BENCH_SETTLE_SECONDS, every write has been answered
 * (PATCH and POST answers in hcp_controller_api_requests_total add up to
 * it), and a list of every object over the API finds each in its expected
 * state (see check_state()). The converged instant is the acknowledgement
 * of the last write, which the controller reports with its wall clock
 * (hcp_controller_last_write_timestamp_seconds): the figures do not depend on
 * how often the bench scrapes, and the bench scrapes only once a second, as
 * rendering /metrics for 4,000 objects takes CPU from the API server.
 *
 * The layout (per HostedCluster index i, namespace bench-<i % 10>):
 *   i % 4 == 3  restricted, no NodePools: Restrictive, a closed policy,
 *               RestrictiveUntil 2099, or a policy that does not exist
 *   otherwise   permitted (no stanza, open policies, Permissive,
 *               PermissiveUntil 2099) with 4 NodePools each
 * Every NodePool follows its namespace's policy np-window, closed at start
 * and opening at the boundary, so all NodePools are restricted at start
 * (their MachineDeployments paused) and all flip at the boundary.
 *
 * Exits 1 on a correctness failure (not converged, objects in the wrong
 * state, writes in steady state); the timing targets are reported only.
 *
 * With BENCH_HOSTED=1 every HostedCluster also gets a hosted API server
 * (e2e/hostedsim, one process) and its kubeconfig Secret, and the hosted
 * ClusterVersion projection is measured too (see hosted_report()): cold start
 * to every ClusterVersion projected, requests per hosted cluster, steady
 * state per re-assertion period (BENCH_HOSTED_PERIOD, default 60 s), a
 * foreign writer dropping the conditions, and convergence against the run
 * without hosted servers, whose figure BENCH_COMPARE names (a file the run
 * with BENCH_HOSTED=0 writes).
 *
 * With BENCH_HELD=1 (make bench-boundary) every HostedCluster and NodePool
 * instead holds a change across one shared boundary, as the admission
 * webhooks leave it (the controller serves them, so it holds by admission
 * and pauses nothing that merely waits): each HostedCluster follows np-window
 * with a requested release recorded in its annotation, each NodePool a
 * release its machines do not run yet. At the boundary the controller writes
 * 1,000 held releases and the status of 4,000 objects; the bench follows the
 * API server's watch streams and reports the order in which they were
 * committed (the releases must all come first), when the last release was
 * committed, and the same number of release patches back to back from a
 * plain client, timed by the same watch recorders from its first patch,
 * once before the controller starts and once after it stops (target: the
 * last release within 1.1 times the mean of the two: the API server's pace
 * drifts over a run, and the two runs bracket the boundary). A third run,
 * before the controller starts, has a replica of the controller beside it
 * that only watches (a standby on a Lease the bench holds): the API server
 * sends the burst to it as it does to the controller, and the boundary's
 * ratio to that run is the controller's own cost, without the cost of being
 * watched. Before the boundary a plain client's burst that the controller
 * does not act on (warm_up()) makes the boundary, like every plain run, the
 * second burst on the API server's heap as the cold start left it.
 *
 * Usage: bench_controller HCP_BIN, with HCP_E2E_KUBECONFIG set (admin).
 * BENCH_HCS, BENCH_NPS scale the fleet down for quick runs.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/list.h"
#include "boundary.h"
#include "gctrace.h"
#include "hostedsim_driver.h"
#include "harness.h"

#define NSPACES 10
#define POLICIES_PER_NS 5
#define LOAD_IN_FLIGHT 200
#define SCRAPE_INTERVAL 1.0 /* at least; twice the last scrape's duration when longer */
#define RELEASE "quay.io/openshift-release-dev/ocp-release:4.17.3-x86_64"
#define OLD_RELEASE "quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64"
/* BENCH_HELD: the plain client's run before the controller starts writes
 * this image, and removes this annotation, which nobody sets. */
#define BEFORE_RELEASE "quay.io/openshift-release-dev/ocp-release:4.17.2-x86_64"
#define BEFORE_ANN "bench.hcp-controller.example/unset"
#define CM "changemanagement.hypershift.openshift.io"
#define PAUSED_ANN "cluster.x-k8s.io/paused"
#define MARKER_ANN CM "/paused-by"
#define REQUESTED_ANN CM "/requested-release-image"
#define HS "/apis/hypershift.openshift.io/v1beta1"
#define CAPI "/apis/cluster.x-k8s.io/v1beta1"
#define HCMP "/apis/" CM "/v1alpha1"
/* The NodePools' window opens at this simulated instant (a Wednesday). */
#define BOUNDARY "2030-01-09T06:00:00Z"
#define BOUNDARY_EPOCH 1894168800L

static int n_hc = 1000, n_np = 3000;
static double steady_seconds = 600, boundary_after = 120, settle = 3, baseline_in_flight = 32;
static bool hosted_on;         /* BENCH_HOSTED: a hosted API server per HostedCluster */
static double hosted_period;   /* BENCH_HOSTED_PERIOD: --hosted-reassert-period, 0 = none */
static bool held_on;           /* BENCH_HELD: every object holds a change until the boundary */
static bool waves_on;          /* BENCH_WAVES (with BENCH_HELD): release waves configured, the
                                  canary wave (1% of the clusters) ran the held release
                                  healthy long ago, every other cluster is in the early wave */
static bool waves_fleet_only;  /* BENCH_WAVES=2: the same labels and statuses, no waves
                                  configured (what the fleet's difference alone costs) */
static double failover;        /* BENCH_FAILOVER: seconds before the boundary the leader of two
                                  replicas is killed (SIGKILL); 0: none */
static bool standby_on;        /* BENCH_STANDBY: two replicas, the leader left alone */
static bool warm_up_on;        /* BENCH_WARM_UP (default 1, with BENCH_HELD): a burst that
                                  changes nothing the controller reads before the boundary */

/* ---- small helpers ------------------------------------------------------------ */

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static double env_num(const char *name, double dflt, double min, double max)
{
    const char *v = getenv(name);
    char *end;
    if (!v || !*v)
        return dflt;
    errno = 0;
    double d = strtod(v, &end);
    if (errno || end == v || *end || d < min || d > max)
        die("%s: \"%s\" is not a number in %g..%g", name, v, min, max);
    return d;
}

static const char *ns_of(int hc) /* the namespace of HostedCluster hc */
{
    static char buf[NSPACES][16];
    int k = hc % NSPACES;
    snprintf(buf[k], sizeof(buf[k]), "bench-%d", k);
    return buf[k];
}

static bool hc_restricted(int hc) { return hc % 4 == 3; }

/* Whether HostedCluster hc is restricted before (or after) the boundary. */
static bool hc_restricted_at(int hc, bool after_boundary)
{
    return held_on ? !after_boundary : hc >= 0 && hc_restricted(hc);
}

/* The number after `prefix` in an object name ("hc-0042-x7k2q" -> 42), or -1. */
static int index_of(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);
    char *end;
    if (!name || strncmp(name, prefix, n) != 0)
        return -1;
    errno = 0;
    long v = strtol(name + n, &end, 10);
    if (errno || end == name + n || v < 0 || v > 1000000)
        return -1;
    return (int)v;
}

/* The HostedCluster of NodePool np: the permitted ones, round robin. */
static int np_cluster(int np)
{
    int permitted = n_hc - n_hc / 4, k = np % permitted;
    return (k / 3) * 4 + k % 3; /* the k-th index i with i % 4 != 3 */
}

/* ---- the loader: requests with a bounded number in flight ---------------------- */

typedef enum op_kind { OP_CREATE, OP_PATCH, OP_STATUS, OP_JSONPATCH_STATUS } op_kind_t;

typedef struct pump pump_t;

typedef struct op {
    hcp_link_t link;  /* on the pump's queue while waiting */
    pump_t *pump;     /* while in flight */
    op_kind_t kind;
    char path[384];   /* collection (create) or object path */
    json_t *body;     /* owned */
    int repeat;       /* more rounds on the same object, each after the previous */
    int round;
} op_t;

struct pump {
    harness *h;
    hcp_link_t ops;   /* waiting to be sent, in order */
    int in_flight, max_in_flight;
    size_t sent, done, failed;
    bool finished;
    kube_error last;
    char last_path[384];
};

/* Empties the pump and sets its harness and bound. */
static void pump_init(pump_t *p, harness *h, int max_in_flight)
{
    memset(p, 0, sizeof(*p));
    hcp_list_init(&p->ops);
    p->h = h;
    p->max_in_flight = max_in_flight;
}

static void pump_push(pump_t *p, op_t *op)
{
    hcp_list_push_back(&p->ops, &op->link);
}

static op_t *op_new(op_kind_t kind, json_t *body, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static op_t *op_new(op_kind_t kind, json_t *body, const char *fmt, ...)
{
    op_t *op = calloc(1, sizeof(*op));
    va_list ap;
    if (!op || !body)
        die("out of memory");
    op->kind = kind;
    op->body = body;
    va_start(ap, fmt);
    vsnprintf(op->path, sizeof(op->path), fmt, ap);
    va_end(ap);
    return op;
}

static void op_free(op_t *op)
{
    json_decref(op->body);
    free(op);
}

/* Baseline rounds: the next status write on the same object is conditional
 * on the version the previous one produced and changes one message. */
static void op_again(op_t *op, const json_t *answer)
{
    const char *rv = json_string_value(
        json_object_get(json_object_get(answer, "metadata"), "resourceVersion"));
    json_t *md = json_object_get(op->body, "metadata");
    if (rv && md)
        json_object_set_new(md, "resourceVersion", json_string(rv));
    json_t *conds = json_object_get(json_object_get(op->body, "status"), "conditions");
    if (json_array_size(conds) > 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "baseline round %d", ++op->round);
        json_object_set_new(json_array_get(conds, 0), "message", json_string(msg));
    }
}

static void pump_fill(pump_t *p);

static void pump_done(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    op_t *op = ud;
    pump_t *p = op->pump;
    (void)c;
    p->in_flight--;
    p->done++;
    if (err && !(op->kind == OP_CREATE && err->http_status == 409)) {
        p->failed++;
        p->last = *err;
        snprintf(p->last_path, sizeof(p->last_path), "%s", op->path);
        op_free(op);
    } else if (op->repeat > 0 && !err) {
        op->repeat--;
        op_again(op, obj);
        pump_push(p, op);
    } else {
        op_free(op);
    }
    pump_fill(p);
}

static void pump_fill(pump_t *p)
{
    while (p->in_flight < p->max_in_flight && !hcp_list_empty(&p->ops)) {
        op_t *op = hcp_list_entry(hcp_list_pop_front(&p->ops), op_t, link);
        char *body = json_dumps(op->body, JSON_COMPACT);
        char path[400];
        kube_call call;
        kube_error e;
        if (!body)
            die("out of memory");
        memset(&call, 0, sizeof(call));
        snprintf(path, sizeof(path), "%s%s", op->path,
                 op->kind == OP_STATUS || op->kind == OP_JSONPATCH_STATUS ? "/status" : "");
        call.path = path;
        call.body = body;
        call.body_len = strlen(body);
        call.verb = op->kind == OP_CREATE ? KUBE_VERB_CREATE : KUBE_VERB_PATCH;
        call.content_type = op->kind == OP_CREATE ? "application/json"
                            : op->kind == OP_JSONPATCH_STATUS ? "application/json-patch+json"
                                                              : "application/merge-patch+json";
        call.on_done = pump_done;
        call.ud = op;
        op->pump = p;
        if (kube_client_call(&p->h->client, &call, NULL, &e) < 0) {
            p->failed++;
            p->done++;
            p->last = e;
            snprintf(p->last_path, sizeof(p->last_path), "%s", op->path);
            op_free(op);
        } else {
            p->in_flight++;
            p->sent++;
        }
        free(body);
    }
    if (hcp_list_empty(&p->ops) && p->in_flight == 0)
        p->finished = true;
}

/* Runs the queued operations; returns the seconds it took. */
static double pump_run(pump_t *p, const char *what)
{
    double t0 = ev_time();
    p->finished = false;
    pump_fill(p);
    while (!p->finished)
        harness_run_until(p->h, &p->finished, 3600);
    if (p->failed)
        die("%s: %zu of %zu requests failed, last %s: HTTP %d %s", what, p->failed, p->done,
            p->last_path, p->last.http_status, p->last.message);
    return ev_time() - t0;
}

/* ---- the fleet ------------------------------------------------------------------ */

static json_t *condition(const char *type, const char *status, const char *reason,
                         const char *message)
{
    return json_pack("{s:s, s:s, s:s, s:s, s:s, s:i}", "type", type, "status", status, "reason",
                     reason, "message", message, "lastTransitionTime", "2029-12-01T08:00:00Z",
                     "observedGeneration", 1);
}

/* The conditions HyperShift keeps on a HostedCluster (about 20). */
static json_t *hc_conditions(void)
{
    static const char *const types[] = {
        "ValidConfiguration", "SupportedHostedCluster", "ValidHostedControlPlaneConfiguration",
        "ValidReleaseImage", "ValidReleaseInfo", "ValidOIDCConfiguration",
        "ReconciliationActive", "ReconciliationSucceeded", "PlatformCredentialsFound",
        "InfrastructureReady", "ExternalDNSReachable", "EtcdAvailable",
        "KubeAPIServerAvailable", "IgnitionEndpointAvailable", "ClusterVersionSucceeding",
        "ClusterVersionUpgradeable", "ClusterVersionAvailable", "ClusterVersionReleaseAccepted",
        "Available", "Degraded"};
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        bool degraded = strcmp(types[i], "Degraded") == 0;
        json_array_append_new(
            a, condition(types[i], degraded ? "False" : "True", "AsExpected",
                         degraded ? "The hosted control plane is not degraded."
                                  : "The hosted control plane component reports as expected "
                                    "after its last reconciliation."));
    }
    return a;
}

/* The conditions HyperShift keeps on a NodePool (about 10). */
static json_t *np_conditions(void)
{
    static const char *const types[][2] = {
        {"AutoscalingEnabled", "False"}, {"UpdateManagementEnabled", "True"},
        {"ValidReleaseImage", "True"},   {"ValidPlatformImage", "True"},
        {"ValidMachineConfig", "True"},  {"ValidTuningConfig", "True"},
        {"UpdatingConfig", "False"},     {"UpdatingVersion", "False"},
        {"Ready", "True"},               {"AllMachinesReady", "True"},
        {"AllNodesHealthy", "True"},     {"ReachedIgnitionEndpoint", "True"}};
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        json_array_append_new(a, condition(types[i][0], types[i][1], "AsExpected",
                                           "Reconciled as expected by the NodePool controller."));
    return a;
}

/* BENCH_WAVES: HostedCluster i is in the canary wave (the first 1%). */
static bool canary(int i) { return waves_on && i < (n_hc + 99) / 100; }

/* Whether HostedCluster i has a stanza (hc_stanza() gives every one but a
 * fifth of the open ones one): those and every NodePool have a companion. */
static bool hc_has_stanza(int i) { return held_on || hc_restricted(i) || (i / 4) % 5 != 0; }

/* A stanza for HostedCluster i, as annotations (into ann): the form today's
 * HyperShift keeps (its CRDs prune spec.changeManagement). */
static void hc_stanza(int i, json_t *ann)
{
    int k = (i / 4) % 5;
    if (held_on) { /* restricted until the boundary, a release held by the webhook */
        json_object_set_new(ann, CM "/policy", json_string("np-window"));
        json_object_set_new(ann, REQUESTED_ANN, json_string(RELEASE));
        return;
    }
    if (hc_restricted(i)) {
        switch (k) {
        case 0: json_object_set_new(ann, CM "/strategy", json_string("Restrictive")); break;
        case 1: json_object_set_new(ann, CM "/policy", json_string("hc-closed-weekly")); break;
        case 2: json_object_set_new(ann, CM "/policy", json_string("hc-closed-rrule")); break;
        case 3:
            json_object_set_new(ann, CM "/strategy", json_string("RestrictiveUntil"));
            json_object_set_new(ann, CM "/restrictive-until", json_string("2099-01-01T00:00:00Z"));
            break;
        default: json_object_set_new(ann, CM "/policy", json_string("no-such-policy")); break;
        }
        return;
    }
    switch (k) {
    case 0: break; /* no stanza: Permissive */
    case 1: json_object_set_new(ann, CM "/policy", json_string("hc-open-daily")); break;
    case 2: json_object_set_new(ann, CM "/policy", json_string("hc-open-exclusions")); break;
    case 3: json_object_set_new(ann, CM "/strategy", json_string("Permissive")); break;
    default:
        json_object_set_new(ann, CM "/strategy", json_string("PermissiveUntil"));
        json_object_set_new(ann, CM "/permissive-until", json_string("2099-01-01T00:00:00Z"));
        json_object_set_new(ann, CM "/policy", json_string("hc-closed-weekly"));
        break;
    }
}

static json_t *policy_spec(int k)
{
    switch (k) {
    case 0: /* np-window: Wednesdays 06:00-14:00 UTC; the boundary is its opening */
        return json_pack("{s:s, s:{s:s, s:{s:{s:s, s:{s:[s]}}, s:s, s:s}}}", "strategy",
                         "MaintenanceSchedule", "maintenanceSchedule", "timeZone", "UTC",
                         "permit", "recurrence", "frequency", "Weekly", "weekly", "daysOfWeek",
                         "Wednesday", "startTime", "06:00", "duration", "8h");
    case 1: /* hc-open-daily: every day 00:00-23:00 */
        return json_pack("{s:s, s:{s:s, s:{s:{s:s, s:{s:i}}, s:s, s:s}}}", "strategy",
                         "MaintenanceSchedule", "maintenanceSchedule", "timeZone",
                         "Europe/Zurich", "permit", "recurrence", "frequency", "Daily", "daily",
                         "interval", 1, "startTime", "00:00", "duration", "23h");
    case 2: /* hc-open-exclusions: always, except a freeze next year */
        return json_pack("{s:s, s:{s:s, s:[{s:s, s:s, s:s}]}}", "strategy",
                         "MaintenanceSchedule", "maintenanceSchedule", "timeZone",
                         "America/New_York", "exclude", "fromDate", "2030-12-20", "untilDate",
                         "2031-01-04", "reason", "year-end freeze");
    case 3: /* hc-closed-weekly: Sundays 02:00-06:00 */
        return json_pack("{s:s, s:{s:s, s:{s:{s:s, s:{s:[s]}}, s:s, s:s}}}", "strategy",
                         "MaintenanceSchedule", "maintenanceSchedule", "timeZone", "UTC",
                         "permit", "recurrence", "frequency", "Weekly", "weekly", "daysOfWeek",
                         "Sunday", "startTime", "02:00", "duration", "4h");
    default: /* hc-closed-rrule: the 15th of every month */
        return json_pack("{s:s, s:{s:s, s:{s:s, s:s, s:s}}}", "strategy",
                         "MaintenanceSchedule", "maintenanceSchedule", "timeZone", "Asia/Tokyo",
                         "permit", "rrule", "FREQ=MONTHLY;BYMONTHDAY=15", "startTime", "01:00",
                         "duration", "2h");
    }
}

static const char *const policy_names[POLICIES_PER_NS] = {
    "np-window", "hc-open-daily", "hc-open-exclusions", "hc-closed-weekly", "hc-closed-rrule"};

static void queue_namespaces(pump_t *p)
{
    for (int k = 0; k < NSPACES; k++)
        pump_push(p, op_new(OP_CREATE, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
                                                 "kind", "Namespace", "metadata", "name",
                                                 ns_of(k)), "/api/v1/namespaces"));
    for (int i = 0; i < n_hc; i++) {
        char name[64];
        snprintf(name, sizeof(name), "%s-hc-%04d", ns_of(i), i);
        pump_push(p, op_new(OP_CREATE, json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
                                                 "kind", "Namespace", "metadata", "name", name),
                            "/api/v1/namespaces"));
    }
}

static void queue_objects(pump_t *p)
{
    for (int k = 0; k < NSPACES; k++)
        for (int j = 0; j < POLICIES_PER_NS; j++)
            pump_push(p, op_new(OP_CREATE,
                                json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
                                          CM "/v1alpha1", "kind", "HostedChangeManagementPolicy",
                                          "metadata", "name", policy_names[j], "spec",
                                          policy_spec(j)),
                                HCMP "/namespaces/%s/hostedchangemanagementpolicies", ns_of(k)));
    for (int i = 0; i < n_hc; i++) {
        char name[32], infra[48];
        const char *ns = ns_of(i);
        snprintf(name, sizeof(name), "hc-%04d", i);
        snprintf(infra, sizeof(infra), "%s-x7k2q", name);
        json_t *ann = json_object(), *spec = json_pack(
            "{s:{s:s}, s:s, s:s, s:{s:s, s:{s:s, s:s}}, s:{s:s, s:[{s:s}], s:[{s:s}], s:s},"
            " s:[{s:s, s:{s:s}}, {s:s, s:{s:s}}, {s:s, s:{s:s}}], s:{s:s}, s:s}",
            "release", "image", i % 10 == 0 && !held_on ? RELEASE : OLD_RELEASE, "infraID", infra,
            "clusterID", "0f8e3c6a-5b1d-4c2e-9a7f-1d2c3b4a5e6f", "platform", "type", "AWS",
            "aws", "region", "us-east-1", "endpointAccess", "Public", "networking",
            "networkType", "OVNKubernetes", "clusterNetwork", "cidr", "10.132.0.0/14",
            "serviceNetwork", "cidr", "172.31.0.0/16", "machineNetwork", "10.0.0.0/16",
            "services", "service", "APIServer", "servicePublishingStrategy", "type",
            "LoadBalancer", "service", "OAuthServer", "servicePublishingStrategy", "type",
            "Route", "service", "Ignition", "servicePublishingStrategy", "type", "Route",
            "pullSecret", "name", "pull-secret", "issuerURL", "https://oidc.example.com/hc");
        hc_stanza(i, ann);
        if (hosted_on) {
            char hcpns[64];
            snprintf(hcpns, sizeof(hcpns), "%s-%s", ns, name);
            char *data = hostedsim_kubeconfig_b64(i);
            if (!data)
                die("hostedsim: no kubeconfig for server %d", i);
            pump_push(p, op_new(OP_CREATE,
                                json_pack("{s:s, s:s, s:{s:s}, s:s, s:{s:s}}", "apiVersion",
                                          "v1", "kind", "Secret", "metadata", "name",
                                          "service-network-admin-kubeconfig", "type", "Opaque",
                                          "data", "kubeconfig", data),
                                "/api/v1/namespaces/%s/secrets", hcpns));
            free(data);
        }
        json_t *hco = json_pack("{s:s, s:s, s:{s:s, s:o}, s:o}", "apiVersion",
                                "hypershift.openshift.io/v1beta1", "kind", "HostedCluster",
                                "metadata", "name", name, "annotations", ann, "spec", spec);
        if (waves_on)
            json_object_set_new(json_object_get(hco, "metadata"), "labels",
                                json_pack("{s:s}", "fleet.example.com/wave",
                                          canary(i) ? "canary" : "early"));
        pump_push(p, op_new(OP_CREATE, hco, HS "/namespaces/%s/hostedclusters", ns));
        pump_push(p, op_new(OP_CREATE,
                            json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, s:{s:{s:s, s:s, s:s}}}",
                                      "apiVersion", "cluster.x-k8s.io/v1beta1", "kind", "Cluster",
                                      "metadata", "name", infra, "labels",
                                      "cluster.x-k8s.io/cluster-name", infra, "spec",
                                      "infrastructureRef", "apiVersion",
                                      "infrastructure.cluster.x-k8s.io/v1beta2", "kind",
                                      "AWSCluster", "name", infra),
                            CAPI "/namespaces/%s-%s/clusters", ns, name));
    }
    for (int j = 0; j < n_np; j++) {
        int i = np_cluster(j);
        char name[32], cluster[32], infra[48], link[80];
        const char *ns = ns_of(i);
        snprintf(name, sizeof(name), "np-%05d", j);
        snprintf(cluster, sizeof(cluster), "hc-%04d", i);
        snprintf(infra, sizeof(infra), "%s-x7k2q", cluster);
        snprintf(link, sizeof(link), "%s/%s", ns, name);
        json_t *ann = json_object(), *spec = json_pack(
            "{s:s, s:i, s:{s:s, s:{s:i, s:i}, s:b}, s:{s:s}, s:{s:s, s:{s:s, s:s, s:{s:i, s:s}}}}",
            "clusterName", cluster, "replicas", 3, "management", "upgradeType", "Replace",
            "replace", "maxSurge", 1, "maxUnavailable", 0, "autoRepair", 1, "release", "image",
            held_on ? RELEASE : OLD_RELEASE, "platform", "type", "AWS", "aws", "instanceType", "m5.xlarge",
            "instanceProfile", "worker-profile", "rootVolume", "size", 120, "type", "gp3");
        json_object_set_new(ann, CM "/policy", json_string("np-window"));
        pump_push(p, op_new(OP_CREATE,
                            json_pack("{s:s, s:s, s:{s:s, s:o}, s:o}", "apiVersion",
                                      "hypershift.openshift.io/v1beta1", "kind", "NodePool",
                                      "metadata", "name", name, "annotations", ann, "spec", spec),
                            HS "/namespaces/%s/nodepools", ns));
        pump_push(p, op_new(
            OP_CREATE,
            json_pack("{s:s, s:s, s:{s:s, s:{s:s}, s:{s:s}}, s:{s:s, s:i, s:{s:{s:s}},"
                      " s:{s:{s:{s:s}}, s:{s:s, s:{s:s}, s:{s:s, s:s, s:s}}}}}",
                      "apiVersion", "cluster.x-k8s.io/v1beta1", "kind", "MachineDeployment",
                      "metadata", "name", name, "annotations", "hypershift.openshift.io/nodePool",
                      link, "labels", "cluster.x-k8s.io/cluster-name", infra, "spec",
                      "clusterName", infra, "replicas", 3, "selector", "matchLabels",
                      "hypershift.openshift.io/nodePool", name, "template", "metadata",
                      "labels", "hypershift.openshift.io/nodePool", name, "spec", "clusterName",
                      infra, "bootstrap", "dataSecretName", "user-data", "infrastructureRef",
                      "apiVersion", "infrastructure.cluster.x-k8s.io/v1beta2", "kind",
                      "AWSMachineTemplate", "name", name),
            CAPI "/namespaces/%s-%s/machinedeployments", ns, cluster));
    }
}

/* Status as HyperShift writes it: the version (a JSON patch, for the
 * nullable fields) and the conditions. */
static void queue_status(pump_t *p)
{
    for (int i = 0; i < n_hc; i++) {
        json_t *st = json_pack(
            "{s:{s:{s:s, s:s}, s:i, s:n, s:[{s:s, s:s, s:s, s:s, s:s, s:b}]}, s:o}", "version",
            "desired", "image", OLD_RELEASE, "version", "4.17.1", "observedGeneration", 1,
            "availableUpdates", "history", "state", "Completed", "image", OLD_RELEASE, "version",
            "4.17.1", "startedTime", "2029-11-01T00:00:00Z", "completionTime",
            "2029-11-01T01:00:00Z", "verified", 0, "conditions", hc_conditions());
        if (canary(i)) /* the canary wave ran the held release, healthy, a month ago */
            json_array_insert_new(
                json_object_get(json_object_get(st, "version"), "history"), 0,
                json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "state", "Completed", "image",
                          RELEASE, "version", "4.17.3", "startedTime", "2029-12-01T00:00:00Z",
                          "completionTime", "2029-12-01T01:00:00Z", "verified", 0));
        pump_push(p, op_new(OP_JSONPATCH_STATUS,
                            json_pack("[{s:s, s:s, s:o}]", "op", "add", "path", "/status",
                                      "value", st),
                            HS "/namespaces/%s/hostedclusters/hc-%04d", ns_of(i), i));
    }
    for (int j = 0; j < n_np; j++)
        pump_push(p, op_new(OP_STATUS,
                            json_pack("{s:{s:o, s:i, s:s}}", "status", "conditions",
                                      np_conditions(), "replicas", 3, "version",
                                      canary(np_cluster(j)) ? "4.17.3" : "4.17.1"),
                            HS "/namespaces/%s/nodepools/np-%05d", ns_of(np_cluster(j)), j));
}

/* ---- the controller process ------------------------------------------------------ */

typedef struct proc {
    pid_t pid;
    double t_spawn;
    int metrics_port;
    char log[512];
} proc_t;

static int free_port(void)
{
    for (int tries = 0; tries < 200; tries++) {
        int p = 20000 + rand() % 20000;
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "ss -Htan 'sport = :%d' | grep -q .", p);
        if (harness_sh("%s", cmd) != 0)
            return p;
    }
    die("no free port");
}

/* Starts `hcp-controller run` as pr, logging to logdir/name.log; lease: with
 * leader election on that Lease of namespace default (BENCH_FAILOVER: two
 * replicas on "hcp-bench"), NULL: without. */
static void spawn_controller(proc_t *pr, const char *bin, const char *kubeconfig,
                             const char *logdir, const char *name, const char *lease)
{
    char sim[32], mport[64], hport[64];
    time_t t = BOUNDARY_EPOCH - (time_t)boundary_after;
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(sim, sizeof(sim), "%Y-%m-%dT%H:%M:%SZ", &tm);
    pr->metrics_port = free_port();
    snprintf(mport, sizeof(mport), "127.0.0.1:%d", pr->metrics_port);
    int hp = free_port();
    snprintf(hport, sizeof(hport), "127.0.0.1:%d", hp == pr->metrics_port ? hp + 1 : hp);
    snprintf(pr->log, sizeof(pr->log), "%s/%s.log", logdir, name);
    char period[32];
    snprintf(period, sizeof(period), "%g", hosted_period);
    /* /metrics over plain HTTP: the bench times the render, not the access
     * checks (--metrics-secure=false). */
    char *argv[40] = {(char *)bin, "run", "--kubeconfig", (char *)kubeconfig,
                      "--simulated-start-time", sim, "--time-scale", "1",
                      "--kube-api-qps", "0", "--kube-api-burst", "1000000",
                      "--metrics-bind-address", mport, "--metrics-secure=false",
                      "--health-probe-bind-address", hport};
    int argc = 17;
    char waddr[64], cert[600], key[600];
    if (hosted_period > 0) {
        argv[argc++] = "--hosted-reassert-period";
        argv[argc++] = period;
    }
    if (lease) {
        char *le[] = {"--leader-elect", "--leader-election-namespace", "default",
                      "--leader-election-id", (char *)lease};
        for (size_t i = 0; i < 5; i++)
            argv[argc++] = le[i];
    }
    if (held_on) { /* the webhooks served (nothing calls them): holds by admission */
        snprintf(cert, sizeof(cert), "%s/webhook.crt", logdir);
        snprintf(key, sizeof(key), "%s/webhook.key", logdir);
        if (harness_sh("openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost "
                       "-keyout '%s' -out '%s' >/dev/null 2>&1", key, cert) != 0)
            die("openssl: cannot make the webhooks' certificate");
        int wp = free_port();
        snprintf(waddr, sizeof(waddr), "127.0.0.1:%d", wp);
        char *w[] = {"--webhook-bind-address", waddr, "--webhook-cert-file", cert,
                     "--webhook-key-file", key};
        for (size_t i = 0; i < 6; i++)
            argv[argc++] = w[i];
    }
    char guard[600];
    if (held_on && waves_on && !waves_fleet_only) { /* canary first; the early wave soaks 2 days */
        snprintf(guard, sizeof(guard), "%s/guard-waves.yaml", logdir);
        FILE *g = fopen(guard, "w");
        if (!g || fprintf(g, "waves:\n  sequence:\n"
                             "  - {name: canary, selector: {matchLabels: "
                             "{fleet.example.com/wave: canary}}}\n"
                             "  - {name: early, selector: {matchLabels: "
                             "{fleet.example.com/wave: early}}, soak: 48h}\n") < 0 ||
            fclose(g) != 0)
            die("cannot write %s", guard);
        argv[argc++] = "--guard-config";
        argv[argc++] = guard;
    }
    argv[argc] = NULL;
    printf("controller: %s run --simulated-start-time %s --time-scale 1 --kube-api-qps 0 "
           "(no client-side rate limit) --kube-api-burst 1000000 --metrics-secure=false%s%s%s%s%s\n", bin, sim,
           hosted_period > 0 ? " --hosted-reassert-period " : "",
           hosted_period > 0 ? period : "", held_on ? " --webhook-bind-address ..." : "",
           lease ? " --leader-elect ..." : "",
           held_on && waves_on && !waves_fleet_only ? " --guard-config (waves: canary, early soak 48h)"
           : waves_on                                ? " (the waves' fleet, no waves configured)"
                                                     : "");
    fflush(stdout);
    pr->t_spawn = ev_time();
    pr->pid = fork();
    if (pr->pid < 0)
        die("fork: %s", strerror(errno));
    if (pr->pid == 0) {
        int fd = open(pr->log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        /* Nothing else the bench inherited (a caller's lock, say) outlives
         * it in a controller left running. */
        close_range(3, ~0U, 0);
        execv(bin, argv);
        _exit(127);
    }
}

static bool alive(const proc_t *pr)
{
    int st;
    return waitpid(pr->pid, &st, WNOHANG) == 0;
}

static void stop_controller(proc_t *pr)
{
    int st;
    if (pr->pid <= 0)
        return;
    kill(pr->pid, SIGTERM);
    for (int i = 0; i < 100; i++) {
        if (waitpid(pr->pid, &st, WNOHANG) == pr->pid) {
            pr->pid = 0;
            return;
        }
        usleep(100000);
    }
    kill(pr->pid, SIGKILL);
    waitpid(pr->pid, &st, 0);
    pr->pid = 0;
}

static double cpu_seconds(pid_t pid);

/* The pid of the bench instance's PROC (apiserver, etcd), from its pid file
 * in $HCP_E2E_STATE; 0 when unknown. */
static pid_t instance_pid(const char *proc)
{
    const char *state = getenv("HCP_E2E_STATE");
    char file[600];
    long pid = 0;
    snprintf(file, sizeof(file), "%s/%s.pid", state ? state : ".", proc);
    FILE *fp = fopen(file, "r");
    if (fp) {
        if (fscanf(fp, "%ld", &pid) != 1)
            pid = 0;
        fclose(fp);
    }
    return (pid_t)pid;
}

/* CPU seconds of the API server and etcd (0 when unknown), and of the
 * writer `pid` (0: the bench itself, the plain client), now. */
typedef struct cpu_mark {
    double t, writer, apiserver, etcd, apiserver_sys, apiserver_faults, machine, steal;
} cpu_mark_t;

static int proc_times(pid_t pid, double *user, double *sys, double *minflt);

/* The machine's CPU seconds busy (every state but idle and iowait) and
 * stolen, from the first line of /proc/stat; 0 when unreadable. */
static void machine_times(double *busy, double *steal)
{
    unsigned long long v[8] = {0};
    FILE *fp = fopen("/proc/stat", "r");
    *busy = *steal = 0;
    if (!fp)
        return;
    if (fscanf(fp, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) == 8) {
        double hz = (double)sysconf(_SC_CLK_TCK);
        *busy = (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / hz;
        *steal = (double)v[7] / hz;
    }
    fclose(fp);
}

static cpu_mark_t cpu_mark(pid_t writer)
{
    pid_t a = instance_pid("apiserver"), e = instance_pid("etcd");
    cpu_mark_t m = {.t = ev_time(), .apiserver = a > 0 ? cpu_seconds(a) : 0,
                    .etcd = e > 0 ? cpu_seconds(e) : 0};
    double user;
    if (a > 0 && proc_times(a, &user, &m.apiserver_sys, &m.apiserver_faults) != 0)
        m.apiserver_sys = m.apiserver_faults = 0;
    m.writer = cpu_seconds(writer > 0 ? writer : getpid());
    machine_times(&m.machine, &m.steal);
    return m;
}

static void cpu_between(boundary_figs_t *f, const cpu_mark_t *a, const cpu_mark_t *b)
{
    f->cpu_writer = b->writer - a->writer;
    f->cpu_apiserver = b->apiserver - a->apiserver;
    f->cpu_etcd = b->etcd - a->etcd;
    f->sys_apiserver = b->apiserver_sys - a->apiserver_sys;
    f->faults_apiserver = b->apiserver_faults - a->apiserver_faults;
    f->cpu_machine = b->machine - a->machine;
    f->steal = b->steal - a->steal;
}

/* utime and stime of the process, in seconds, and its minor page faults. */
static int proc_times(pid_t pid, double *user, double *sys, double *minflt)
{
    char buf[2048];
    const char *p = proc_stat(pid, buf, sizeof(buf));
    unsigned long flt = 0, ut = 0, stime = 0;
    if (!p || sscanf(p, "%*c %*d %*d %*d %*d %*d %*u %lu %*u %*u %*u %lu %lu", &flt, &ut,
                     &stime) != 3)
        return -1;
    *user = (double)ut / (double)sysconf(_SC_CLK_TCK);
    *sys = (double)stime / (double)sysconf(_SC_CLK_TCK);
    *minflt = (double)flt;
    return 0;
}

/* utime + stime of the process, in seconds. */
static double cpu_seconds(pid_t pid)
{
    double user, sys, flt;
    return proc_times(pid, &user, &sys, &flt) == 0 ? user + sys : -1;
}

/* VmHWM or VmRSS of the process, in KiB. */
static long status_kib(pid_t pid, const char *field)
{
    char path[64], line[256];
    long v = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, field, strlen(field)) == 0 && line[strlen(field)] == ':')
            v = strtol(line + strlen(field) + 1, NULL, 10);
    fclose(f);
    return v;
}

/* The controller's peak RSS (VmHWM) and RSS after each phase of the run,
 * for the report: which phase set the peak. */
typedef struct mem_mark {
    const char *what;
    long hwm, rss; /* KiB */
} mem_mark_t;

static mem_mark_t mem_marks[8];
static int n_mem_marks;

static void mem_mark(const proc_t *pr, const char *what)
{
    if (n_mem_marks < (int)(sizeof(mem_marks) / sizeof(mem_marks[0])))
        mem_marks[n_mem_marks++] = (mem_mark_t){what, status_kib(pr->pid, "VmHWM"),
                                                status_kib(pr->pid, "VmRSS")};
}

static void mem_report(void)
{
    printf("the controller's peak RSS / RSS after each phase:");
    for (int i = 0; i < n_mem_marks; i++)
        printf("%s %s %.1f / %.1f MiB", i ? ";" : "", mem_marks[i].what,
               mem_marks[i].hwm / 1024.0, mem_marks[i].rss / 1024.0);
    printf("\n");
}

/* ---- /metrics ---------------------------------------------------------------------- */

typedef struct scrape {
    double writes;   /* hcp_controller_writes_total */
    double answered; /* PATCH, POST, PUT and DELETE answers, any code (companions are
                        created, replaced and deleted) */
    double errors;   /* hcp_controller_write_errors_total */
    double conflicts; /* PATCHes answered 409 Conflict (retried after the watch) */
    double last_write; /* hcp_controller_last_write_timestamp_seconds */
    double gets;       /* GET answers (Secrets of the ClusterVersion projection) */
    double seconds;  /* how long the scrape took */
    double leader;   /* hcp_controller_leader */
    double standby, standby_conflicts; /* hcp_controller_standby_releases_total, and
                        hcp_controller_standby_release_conflicts_total */
    double wave_sums; /* hcp_controller_wave_sums_total */
    double text_bytes, wire_bytes; /* the answer's text, and what came over the wire */
} scrape_t;

typedef struct buf {
    char *p;
    size_t n;
} buf_t;

static size_t collect(char *ptr, size_t size, size_t nmemb, void *ud)
{
    buf_t *b = ud;
    size_t n = size * nmemb;
    char *q = realloc(b->p, b->n + n + 1);
    if (!q)
        return 0;
    memcpy(q + b->n, ptr, n);
    b->p = q;
    b->n += n;
    b->p[b->n] = '\0';
    return n;
}

static int scrape(const proc_t *pr, scrape_t *out)
{
    static CURL *curl;
    char url[64];
    buf_t b = {NULL, 0};
    double t0 = ev_time();
    if (!curl && !(curl = curl_easy_init()))
        return -1;
    snprintf(url, sizeof(url), "http://127.0.0.1:%d/metrics", pr->metrics_port);
    curl_easy_setopt(curl, CURLOPT_URL, url);
    curl_easy_setopt(curl, CURLOPT_TIMEOUT, 10L);
    curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, collect);
    curl_easy_setopt(curl, CURLOPT_WRITEDATA, &b);
    /* As Prometheus asks (its scrape's Accept-Encoding is gzip unless
     * compression is turned off): libcurl inflates the answer. */
    curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, "gzip");
    if (curl_easy_perform(curl) != CURLE_OK || !b.p) {
        free(b.p);
        return -1;
    }
    memset(out, 0, sizeof(*out));
    curl_off_t wire = 0;
    curl_easy_getinfo(curl, CURLINFO_SIZE_DOWNLOAD_T, &wire);
    out->text_bytes = (double)b.n;
    out->wire_bytes = (double)wire;
    /* Line by line: "name{labels} value". */
    for (char *line = b.p; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *sp = strrchr(line, ' ');
        if (line[0] != '#' && sp) {
            double v = strtod(sp + 1, NULL);
            if (strncmp(line, "hcp_controller_writes_total ", 28) == 0)
                out->writes = v;
            else if (strncmp(line, "hcp_controller_write_errors_total ", 34) == 0)
                out->errors = v;
            else if (strncmp(line, "hcp_controller_last_write_timestamp_seconds ", 44) == 0)
                out->last_write = v;
            else if (strncmp(line, "hcp_controller_leader ", 22) == 0)
                out->leader = v;
            else if (strncmp(line, "hcp_controller_standby_releases_total ", 38) == 0)
                out->standby = v;
            else if (strncmp(line, "hcp_controller_standby_release_conflicts_total ", 47) == 0)
                out->standby_conflicts = v;
            else if (strncmp(line, "hcp_controller_wave_sums_total ", 31) == 0)
                out->wave_sums = v;
            else if (strncmp(line, "hcp_controller_api_requests_total{", 34) == 0 &&
                     (strstr(line, "verb=\"patch\"") || strstr(line, "verb=\"create\"") ||
                      strstr(line, "verb=\"update\"") || strstr(line, "verb=\"delete\""))) {
                out->answered += v;
                if (strstr(line, "code=\"409\""))
                    out->conflicts += v;
            } else if (strncmp(line, "hcp_controller_api_requests_total{", 34) == 0 &&
                       strstr(line, "verb=\"get\"")) {
                out->gets += v;
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(b.p);
    out->seconds = ev_time() - t0;
    return 0;
}

/* Scrapes until the write count has been steady, and answered, for
 * `settle` seconds. Returns the instant the last write was acknowledged
 * (the controller's hcp_controller_last_write_timestamp_seconds, exact
 * whatever the scrape interval), or a negative value on timeout. */
static double scrape_every = SCRAPE_INTERVAL; /* at least, seconds */

static double wait_plateau(const proc_t *pr, double timeout, scrape_t *last, double *max_scrape)
{
    double deadline = ev_time() + timeout, since = -1;
    scrape_t prev = {.writes = -1, .answered = -1}, s = {0};
    while (ev_time() < deadline) {
        double t = ev_time();
        if (!alive(pr))
            die("the controller exited; see %s", pr->log);
        if (scrape(pr, &s) == 0) {
            if (s.seconds > *max_scrape)
                *max_scrape = s.seconds;
            bool answered = s.answered >= s.writes && s.writes > 0;
            if (!answered || s.writes != prev.writes)
                since = -1;
            else if (since < 0)
                since = t;
            if (answered && since < 0)
                since = t;
            prev = s;
            *last = s;
            if (since >= 0 && ev_time() - since >= settle)
                return s.last_write > 0 ? s.last_write : since;
        }
        double interval = 2 * s.seconds > scrape_every ? 2 * s.seconds : scrape_every;
        double wait = interval - (ev_time() - t);
        if (wait > 0)
            usleep((useconds_t)(wait * 1e6));
    }
    return -1;
}

/* ---- the independent check -------------------------------------------------------- */

static json_t *list(harness *h, const char *path)
{
    sync_result r = {0};
    if (kube_get(&h->client, path, harness_store, &r, NULL) < 0 || harness_wait(h, &r, 120))
        die("list %s: HTTP %d %s", path, r.err.http_status, r.err.message);
    json_t *items = json_incref(json_object_get(r.obj, "items"));
    sync_result_clear(&r);
    return items;
}

static const char *ann_of(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(
        json_object_get(json_object_get(o, "metadata"), "annotations"), key));
}

static const char *cond_status(const json_t *o, const char *type, size_t *n)
{
    const json_t *conds = json_object_get(json_object_get(o, "status"), "conditions"), *c;
    size_t i;
    *n = json_array_size(conds);
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return json_string_value(json_object_get(c, "status"));
    }
    return NULL;
}

typedef struct checker {
    int bad;
    char first[8][256];
} checker_t;

static void bad(checker_t *ck, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(checker_t *ck, const char *fmt, ...)
{
    if (ck->bad < 8) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ck->first[ck->bad], sizeof(ck->first[0]), fmt, ap);
        va_end(ap);
    }
    ck->bad++;
}

/* A CAPI object paused by the controller (pause + marker) or not paused at all. */
static void check_pause(checker_t *ck, const json_t *o, bool want, const char *what)
{
    const char *p = ann_of(o, PAUSED_ANN), *m = ann_of(o, MARKER_ANN);
    bool paused = p && m && strcmp(m, "hcp-controller") == 0;
    if (want ? !paused : (p || m))
        bad(ck, "%s: want %s, has paused=%s marker=%s", what, want ? "paused" : "unpaused",
            p ? p : "-", m ? m : "-");
}

/* Our conditions on a HostedCluster or NodePool, with HyperShift's own
 * conditions kept (the rest of our state is on the companion). */
static void check_status(checker_t *ck, const json_t *o, bool restricted, size_t own,
                         const char *what)
{
    size_t n;
    const char *st = cond_status(o, "ChangesPaused", &n);
    const char *pe = cond_status(o, "ChangesPending", &n);
    if (!st || strcmp(st, restricted ? "True" : "False") != 0 || !pe)
        bad(ck, "%s: ChangesPaused %s, ChangesPending %s (want ChangesPaused %s)", what,
            st ? st : "missing", pe ? pe : "missing", restricted ? "True" : "False");
    else if (n < own + 2)
        bad(ck, "%s: %zu conditions, want HyperShift's %zu plus ours", what, n, own);
}

/* BENCH_HELD: a HostedCluster's release is held before the boundary (the
 * running image, the requested one in the annotation) and through after it. */
static void check_release(checker_t *ck, const json_t *o, bool after_boundary, const char *what)
{
    const char *img = json_string_value(json_object_get(
        json_object_get(json_object_get(o, "spec"), "release"), "image"));
    const char *req = ann_of(o, REQUESTED_ANN);
    if (!img || strcmp(img, after_boundary ? RELEASE : OLD_RELEASE) != 0 ||
        (after_boundary ? req != NULL : !req || strcmp(req, RELEASE) != 0))
        bad(ck, "%s: release %s, requested %s (want %s)", what, img ? img : "missing",
            req ? req : "none", after_boundary ? "released" : "held");
}

/* The companions: one per HostedCluster with a stanza and per NodePool,
 * each in the state its target's ChangesPaused says (NodePools: restricted
 * before the boundary, permitted after). */
static void check_companions(checker_t *ck, const json_t *list, bool after_boundary)
{
    size_t i, want = (size_t)n_np;
    const json_t *o;
    for (int k = 0; k < n_hc; k++)
        want += hc_has_stanza(k);
    if (json_array_size(list) != want)
        bad(ck, "%zu HostedChangeManagementStatuses, want %zu", json_array_size(list), want);
    json_array_foreach(list, i, o) {
        const char *kind = json_string_value(json_object_get(json_object_get(o, "target"), "kind"));
        const char *name = json_string_value(json_object_get(json_object_get(o, "target"), "name"));
        const char *state = json_string_value(json_object_get(json_object_get(json_object_get(
            json_object_get(o, "status"), "behavior"), "current"), "state"));
        bool np = kind && strcmp(kind, "NodePool") == 0;
        int idx = name ? index_of(name, "hc-") : -1;
        bool restricted = np ? !after_boundary : hc_restricted_at(idx, after_boundary);
        if (!state || strcmp(state, restricted ? "ChangesPaused" : "ChangesUnpaused") != 0)
            bad(ck, "companion of %s %s: state %s", kind ? kind : "?", name ? name : "?",
                state ? state : "missing");
    }
}

/* Lists everything and compares it with the expected state: before the
 * boundary every NodePool restricted, after it every NodePool permitted. */
static int check_state(harness *h, bool after_boundary, bool verbose)
{
    checker_t ck = {0};
    json_t *hcs = list(h, HS "/hostedclusters"), *nps = list(h, HS "/nodepools");
    json_t *cls = list(h, CAPI "/clusters"), *mds = list(h, CAPI "/machinedeployments");
    json_t *pols = list(h, HCMP "/hostedchangemanagementpolicies"), *o;
    json_t *comps = list(h, HCMP "/hostedchangemanagementstatuses");
    size_t i, n;
    if (json_array_size(hcs) != (size_t)n_hc || json_array_size(nps) != (size_t)n_np ||
        json_array_size(cls) != (size_t)n_hc || json_array_size(mds) != (size_t)n_np)
        bad(&ck, "object counts: %zu HostedClusters, %zu NodePools, %zu Clusters, %zu "
                 "MachineDeployments", json_array_size(hcs), json_array_size(nps),
            json_array_size(cls), json_array_size(mds));
    json_array_foreach(hcs, i, o) {
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"),
                                                             "name"));
        int idx = index_of(name, "hc-");
        check_status(&ck, o, hc_restricted_at(idx, after_boundary), 20, name ? name : "?");
        if (held_on)
            check_release(&ck, o, after_boundary, name ? name : "?");
    }
    json_array_foreach(cls, i, o) {
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"),
                                                             "name"));
        int idx = index_of(name, "hc-");
        check_pause(&ck, o, hc_restricted_at(idx, after_boundary), name ? name : "?");
    }
    json_array_foreach(nps, i, o)
        check_status(&ck, o, !after_boundary, 12,
                     json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
    json_array_foreach(mds, i, o)
        check_pause(&ck, o, !held_on && !after_boundary,
                    json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
    json_array_foreach(pols, i, o) {
        const char *name = json_string_value(json_object_get(json_object_get(o, "metadata"),
                                                             "name"));
        const char *ready = cond_status(o, "Ready", &n);
        const char *state = json_string_value(json_object_get(
            json_object_get(json_object_get(json_object_get(o, "status"), "behavior"),
                            "current"), "state"));
        bool np_window = name && strcmp(name, "np-window") == 0;
        if (!ready || strcmp(ready, "True") != 0 || !state ||
            (np_window && strcmp(state, after_boundary ? "ChangesUnpaused" : "ChangesPaused")))
            bad(&ck, "policy %s: Ready %s, current state %s", name ? name : "?",
                ready ? ready : "missing", state ? state : "missing");
    }
    check_companions(&ck, comps, after_boundary);
    if (ck.bad && verbose) {
        printf("  state check: %d object(s) not as expected, e.g.\n", ck.bad);
        for (int k = 0; k < ck.bad && k < 8; k++)
            printf("    %s\n", ck.first[k]);
    }
    json_decref(hcs);
    json_decref(nps);
    json_decref(cls);
    json_decref(mds);
    json_decref(pols);
    json_decref(comps);
    return ck.bad;
}

/* ---- the baseline ------------------------------------------------------------------ */

static const char *rv_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "resourceVersion"));
}

static const char *name_of(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "name"));
}

static const char *ns_name(const json_t *o)
{
    return json_string_value(json_object_get(json_object_get(o, "metadata"), "namespace"));
}

/* The controller's pause merge patch on a CAPI object: adds the pause and
 * the marker where there is none, lifts them where they are (so every
 * request really writes). */
static void queue_pause(pump_t *p, const json_t *o, const char *resource)
{
    bool paused = ann_of(o, PAUSED_ANN) != NULL;
    json_t *ann = paused ? json_pack("{s:n, s:n}", PAUSED_ANN, MARKER_ANN)
                         : json_pack("{s:s, s:s}", PAUSED_ANN, "true", MARKER_ANN,
                                     "hcp-controller");
    pump_push(p, op_new(OP_PATCH,
                        json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion", rv_of(o),
                                  "annotations", ann),
                        CAPI "/namespaces/%s/%s/%s", ns_name(o), resource, name_of(o)));
}

/* The controller's status merge patch: the whole conditions list (one
 * message changed, so the object really changes) and the rest of the status
 * it writes, conditional on the resourceVersion; `rounds` times in a row. */
static void queue_status_rounds(pump_t *p, const json_t *o, const char *collection, int rounds)
{
    const json_t *st = json_object_get(o, "status");
    json_t *doc = json_object();
    if (!doc)
        die("out of memory");
    const char *keys[] = {"conditions", "changeManagement", "behavior"};
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
        json_t *v = json_object_get(st, keys[k]);
        if (v)
            json_object_set_new(doc, keys[k], json_deep_copy(v));
    }
    op_t *op = op_new(OP_STATUS,
                      json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion", rv_of(o),
                                "status", doc),
                      "%s/namespaces/%s/%s/%s", strcmp(collection, "hostedchangemanagementpolicies") == 0 ? HCMP : HS, ns_name(o),
                      collection, name_of(o));
    op->repeat = rounds - 1;
    op_again(op, NULL);
    pump_push(p, op);
}

/* Queues `writes` PATCHes: first one pause patch per CAPI object the
 * controller paused at cold start, then status patches spread evenly over
 * the HostedClusters, NodePools and policies. */
static void queue_baseline(harness *h, pump_t *p, long writes, long *pauses, long *statuses)
{
    json_t *cls = list(h, CAPI "/clusters"), *mds = list(h, CAPI "/machinedeployments");
    json_t *hcs = list(h, HS "/hostedclusters"), *nps = list(h, HS "/nodepools");
    json_t *pols = list(h, HCMP "/hostedchangemanagementpolicies"), *o;
    size_t i;
    *pauses = *statuses = 0;
    json_array_foreach(cls, i, o) {
        if (*pauses < writes && hc_restricted(index_of(name_of(o), "hc-"))) {
            queue_pause(p, o, "clusters");
            ++*pauses;
        }
    }
    json_array_foreach(mds, i, o) {
        if (*pauses < writes) {
            queue_pause(p, o, "machinedeployments");
            ++*pauses;
        }
    }
    long left = writes - *pauses;
    size_t objects = json_array_size(hcs) + json_array_size(nps) + json_array_size(pols), k = 0;
    json_t *groups[] = {hcs, nps, pols};
    const char *colls[] = {"hostedclusters", "nodepools", "hostedchangemanagementpolicies"};
    for (size_t g = 0; g < 3 && objects > 0; g++) {
        json_array_foreach(groups[g], i, o) {
            int rounds = (int)(left / (long)objects) + ((long)k < left % (long)objects ? 1 : 0);
            k++;
            if (rounds > 0) {
                queue_status_rounds(p, o, colls[g], rounds);
                *statuses += rounds;
            }
        }
    }
    json_decref(cls);
    json_decref(mds);
    json_decref(hcs);
    json_decref(nps);
    json_decref(pols);
}

static boundary_rec_t *recorders;

static proc_t *controller;

/* At exit (die() too): no recorder and no controller outlives the bench. */
static void stop_recorders(void)
{
    if (recorders)
        boundary_stop(recorders);
}

static proc_t *standby_proc;  /* BENCH_FAILOVER: the replica that does not lead */

static void stop_controller_at_exit(void)
{
    if (controller)
        stop_controller(controller);
    if (standby_proc)
        stop_controller(standby_proc);
}

/* BENCH_FAILOVER: waits until one of a and b leads (60 s) and makes *a the
 * leader. */
static void pick_leader(proc_t *a, proc_t *b)
{
    double end = ev_time() + 60;
    scrape_t sa, sb;
    while (ev_time() < end) {
        if (scrape(a, &sa) == 0 && sa.leader == 1)
            return;
        if (scrape(b, &sb) == 0 && sb.leader == 1) {
            proc_t t = *a;
            *a = *b;
            *b = t;
            return;
        }
        usleep(200000);
    }
    die("neither replica leads after 60 s");
}

static void sleep_until(double t)
{
    double d;
    while ((d = t - ev_time()) > 0)
        usleep((useconds_t)((d > 0.5 ? 0.5 : d) * 1e6));
}

/* BENCH_FAILOVER: the leader killed at instant t (SIGKILL: a node lost). */
static void kill_leader_at(proc_t *leader, double t)
{
    sleep_until(t);
    kill(leader->pid, SIGKILL);
    waitpid(leader->pid, NULL, 0);
    leader->pid = 0;
}

/* BENCH_FAILOVER: the figures of a boundary whose leader was killed
 * `failover` seconds before it. Returns the failures. */
static int failover_report(const boundary_figs_t *f, const scrape_t *st, double kill_before)
{
    int failures = 0;
    printf("failover: the leader killed (SIGKILL) %.1f s before the boundary; the standby "
           "let through %d of %d held releases, committed %.2f s to %.2f s after the "
           "boundary (watch streams of the API server); before it: %s; written by the "
           "standby before it led: %.0f (the rest as the leader, once the Lease expired), "
           "%.0f of its writes refused as written already (409)\n",
           kill_before, f->releases, n_hc, f->first_release, f->last_release,
           f->first_release >= 0 ? "none" : "SOME FAIL", st->standby, st->standby_conflicts);
    printf("status writes of the boundary: %ld, committed before the last release: %ld "
           "(must be 0)%s\n", f->others, f->others_before_last, f->others_before_last ? " FAIL" : "");
    /* The rest goes once the standby leads (the Lease expired), as leader. */
    failures += f->releases != n_hc || f->first_release < 0 || f->others_before_last != 0 ||
                st->standby < 1 || st->standby > n_hc || st->standby_conflicts != 0;
    return failures;
}

/* What a plain client's burst patches on every HostedCluster, with the
 * resourceVersion it read as a precondition (as the controller's release
 * does): a release as the controller sends it (spec.release.image becomes
 * image, an image it does not run so that each really writes; the
 * annotation ann removed: the request's after the boundary, before it one
 * nobody set, so that the request stays and the patch keeps its shape), or,
 * with mark set, that annotation set to value and nothing else (beside the
 * controller, which would hold a release). The watch recorders time the
 * writes by the same field. */
typedef struct burst {
    const char *image, *ann;
    const char *mark, *value;
} burst_t;

#define WARM_UP_ANN "bench.hcp-controller.example/warm-up"

static void queue_burst(harness *h, pump_t *p, const burst_t *b)
{
    json_t *hcs = list(h, HS "/hostedclusters"), *o;
    size_t i;
    json_array_foreach(hcs, i, o)
        pump_push(p, op_new(OP_PATCH,
                            b->mark ? json_pack("{s:{s:s, s:{s:s}}}", "metadata",
                                                "resourceVersion", rv_of(o), "annotations",
                                                b->mark, b->value)
                                    : json_pack("{s:{s:s, s:{s:n}}, s:{s:{s:s}}}", "metadata",
                                                "resourceVersion", rv_of(o), "annotations",
                                                b->ann, "spec", "release", "image", b->image),
                            HS "/namespaces/%s/hostedclusters/%s", ns_name(o), name_of(o)));
    json_decref(hcs);
}

/* The resourceVersion of the store now (every resource shares etcd's). */
static const char *list_rv(harness *h)
{
    static char rv[32];
    sync_result r = {0};
    if (kube_get(&h->client, HS "/hostedclusters?limit=1", harness_store, &r, NULL) < 0 ||
        harness_wait(h, &r, 60))
        die("list: HTTP %d %s", r.err.http_status, r.err.message);
    snprintf(rv, sizeof(rv), "%s", json_string_value(json_object_get(
        json_object_get(r.obj, "metadata"), "resourceVersion")) ?: "");
    sync_result_clear(&r);
    if (!rv[0])
        die("list: no resourceVersion");
    return rv;
}

/* Compacts the instance's etcd now (e2e/cluster.sh compact): the API server
 * of the bench compacts nothing on its own (bench.mk), so that no compaction
 * runs beside a measured phase, and the bench compacts before each. */
static void compact_store(const char *before)
{
    const char *inst = getenv("HCP_E2E_INSTANCE");
    double t0 = ev_time();
    if (harness_sh("e2e/cluster.sh compact '%s' >/dev/null", inst && *inst ? inst : "bench"))
        die("cannot compact etcd before %s", before);
    printf("etcd compacted before %s: %.2f s\n", before, ev_time() - t0);
    fflush(stdout);
}

/* curl to the bench instance's API server, as its admin (the shell's
 * environment: e2e/cluster.sh env). */
#define APISERVER_CURL                                                                          \
    "curl -sf --cacert \"$HCP_E2E_CA\" -H \"Authorization: Bearer "                             \
    "$(cat \"$HCP_E2E_ADMIN_TOKEN_FILE\")\""

/* BENCH_HELD: a garbage collection of the API server now (its
 * /debug/pprof/heap?gc=1 runs one before it answers; bench.mk starts the
 * bench's instance with --profiling), so that every burst of releases
 * starts on a heap just collected: where the next collection falls is then
 * no longer chance. Says so once when the API server does not serve it. */
static void apiserver_gc(const char *before)
{
    static bool unserved;
    double t0 = ev_time();
    if (unserved)
        return;
    const char *dir = getenv("BENCH_HEAP_DIR");
    char out[PATH_MAX];
    if (dir && *dir) {
        int n = snprintf(out, sizeof out, "%s/", dir);
        for (const char *c = before; *c && n < (int)sizeof(out) - 7; c++) /* no spaces */
            out[n++] = *c == ' ' ? '-' : *c;
        snprintf(out + n, sizeof(out) - (size_t)n, ".pb.gz");
    } else {
        snprintf(out, sizeof out, "/dev/null");
    }
    if (harness_sh(APISERVER_CURL " --max-time 60 -o '%s' "
                   "\"$HCP_E2E_SERVER/debug/pprof/heap?gc=1\"", out)) {
        printf("the API server's garbage collection before each burst: not served (run it "
               "with --profiling)\n");
        unserved = true;
        return;
    }
    printf("the API server's heap collected before %s: %.2f s\n", before, ev_time() - t0);
    fflush(stdout);
}

/* BENCH_HELD with BENCH_PROFILE_DIR: the API server's CPU profile of the
 * next `seconds` (its /debug/pprof/profile, in the background) into
 * DIR/NAME.cpu.pb.gz, to compare what it spends a burst on. */
static void apiserver_profile(const char *name, int seconds)
{
    const char *dir = getenv("BENCH_PROFILE_DIR");
    if (!dir || !*dir)
        return;
    harness_sh(APISERVER_CURL " --max-time %d -o '%s/%s.cpu.pb.gz' "
               "\"$HCP_E2E_SERVER/debug/pprof/profile?seconds=%d\" >/dev/null 2>&1 &",
               seconds + 30, dir, name, seconds);
}

/* Reads the watch records once every release is in them (or 30 s have
 * passed), then stops the recorders: a recorder whose watch the API server
 * closed (a slow reader) is still watching again when the last patch is
 * acknowledged. */
static void record_releases(boundary_rec_t *rec, const burst_t *b, double t0,
                            boundary_figs_t *out)
{
    const char *value = b->mark ? b->value : b->image;
    double give_up = ev_time() + 30;
    for (;;) {
        if (boundary_analyse(rec, b->mark, value, t0, out) != 0)
            die("cannot read the watch records in %s", rec->dir);
        if (out->releases >= n_hc || ev_time() > give_up)
            break;
        usleep(200000);
    }
    boundary_stop(rec);
    if (boundary_analyse(rec, b->mark, value, t0, out) != 0)
        die("cannot read the watch records in %s", rec->dir);
}

/* A plain client's timed burst: as the watch streams saw it, and when its
 * last patch was acknowledged (seconds after the first was sent; 0: not
 * run). */
typedef struct plain_run {
    boundary_figs_t seen;
    double acked;
} plain_run_t;

/* The plain client's timed bursts of a run. */
typedef struct plain_runs {
    plain_run_t before;       /* before the controller started */
    plain_run_t watched;      /* beside a replica of the controller that only watches */
    plain_run_t beside;       /* beside the controller, before the boundary */
    plain_run_t beside_after; /* beside the controller, once the boundary's writes are done */
    plain_run_t after;        /* after the controller stopped */
} plain_runs_t;

/* BENCH_HELD: the patches of queue_burst() from a plain client under the
 * same watch recorders as the boundary (they load the API server: every
 * HostedCluster event is sent to each), their records in logdir/NAME; timed
 * as the boundary is, when the watch streams saw the last of them, from the
 * first patch sent. Returns once the last was acknowledged. */
static void release_baseline(harness *h, const char *logdir, const char *name,
                             const burst_t *b, plain_run_t *out)
{
    char bdir[600];
    boundary_rec_t brec = {0};
    pump_t p;
    snprintf(bdir, sizeof(bdir), "%s/%s", logdir, name);
    if (mkdir(bdir, 0755) != 0)
        die("mkdir %s: %s", bdir, strerror(errno));
    pump_init(&p, h, (int)baseline_in_flight);
    apiserver_gc(name);
    boundary_record(&brec, h->kubeconfig, list_rv(h), bdir);
    recorders = &brec;
    usleep(500000); /* the watches are open */
    queue_burst(h, &p, b);
    apiserver_profile(name, 5);
    cpu_mark_t c0 = cpu_mark(0);
    double t_pump = ev_time();
    out->acked = pump_run(&p, name);
    cpu_mark_t c1 = cpu_mark(0);
    record_releases(&brec, b, t_pump, &out->seen);
    cpu_between(&out->seen, &c0, &c1);
    recorders = NULL;
}

/* BENCH_HELD (BENCH_WARM_UP): the plain client's patches beside the
 * controller, timed as the boundary is (value: the annotation's new value),
 * into out, their records in logdir/NAME. The controller must write nothing
 * for them. */
static void beside_run(harness *h, proc_t *ctl, const char *logdir, const char *name,
                       const char *value, plain_run_t *out)
{
    const burst_t timed = {.mark = WARM_UP_ANN, .value = value};
    scrape_t a, b;
    compact_store(name);
    if (scrape(ctl, &a))
        die("cannot scrape the controller's metrics");
    release_baseline(h, logdir, name, &timed, out);
    sleep_until(ev_time() + 2);
    if (scrape(ctl, &b))
        die("cannot scrape the controller's metrics");
    printf("%s: the controller's writes meanwhile: %.0f (must be 0); its GETs %.0f\n", name,
           b.writes - a.writes, b.gets - a.gets);
    if (b.writes != a.writes)
        die("the controller wrote during the plain client's burst beside it (%s)", name);
}

/* BENCH_HELD (BENCH_WARM_UP): the plain client beside the controller, on
 * the API server as the boundary will find it: a patch of an annotation
 * nobody reads on every HostedCluster (a release there would be held).
 * - 60 s before the boundary, untimed: every burst the bench times then
 *   follows another on the API server's heap. Without it the boundary came
 *   first after the cold start's 16,000 writes, which take the API server's
 *   live heap from 0.5 to 1.3 GB: the same requests then cost it a third
 *   more CPU (the same composition in its CPU profile; 270,000-330,000 page
 *   faults, the run after it 11-71,000), and the ratio read 1.16-1.42.
 * - 45 s before it, timed: the plain client on the same objects, the same
 *   heap and beside the same watches (the controller's) as the boundary's
 *   releases. Once the boundary's writes are done, main() runs the same
 *   again (beside_run()): the boundary is compared with the mean of the two.
 *   The run before the controller starts is on an API server half as large
 *   (the controller's status and managed fields not yet written), the runs
 *   before it and after it stops without the controller's watches.
 * out->acked is 0 when it was not measured (the cold start ended too late). */
static void beside_controller(harness *h, proc_t *ctl, const char *logdir, double t_b,
                              plain_run_t *out)
{
    static const burst_t untimed = {.mark = WARM_UP_ANN, .value = "1"};
    pump_t p;
    if (ev_time() > t_b - 62) {
        printf("the plain client beside the controller: not measured: the cold start ended "
               "%.0f s before the boundary (raise BENCH_BOUNDARY_AFTER)\n", t_b - ev_time());
        return;
    }
    sleep_until(t_b - 60);
    pump_init(&p, h, (int)baseline_in_flight);
    queue_burst(h, &p, &untimed);
    double took = pump_run(&p, "the warm-up");
    printf("warm-up before the boundary: %d patches of an annotation nobody reads in %.2f s\n",
           n_hc, took);
    sleep_until(t_b - 45);
    beside_run(h, ctl, logdir, "baseline-beside-before", "2", out);
}

/* BENCH_HELD: after a plain client's run before the controller starts, every
 * HostedCluster's image back to the one it runs (not timed). */
static void images_back(harness *h)
{
    static const burst_t back = {.image = OLD_RELEASE, .ann = BEFORE_ANN};
    pump_t p;
    pump_init(&p, h, (int)baseline_in_flight);
    queue_burst(h, &p, &back);
    pump_run(&p, "the images back");
}

/* BENCH_HELD: a replica of the controller that only watches, for the plain
 * client's run beside it: every controller keeps watches open on what it
 * writes, and the API server sends each of the burst's objects to them as
 * well (and the replica decides on each event, as the controller does). It
 * runs with leader election on a Lease the bench holds for an hour, so it
 * stays a standby that writes nothing; its clock is the controller's, well
 * before the boundary, so no window opens for it. Returns once its caches
 * are loaded and it has idled for a second. */
static void watcher_start(proc_t *w, const char *bin, harness *h, const char *logdir)
{
    char now[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%S.000000Z", &tm);
    if (harness_sh("kubectl --kubeconfig '%s' apply -f - >/dev/null <<'EOF'\n"
                   "apiVersion: coordination.k8s.io/v1\nkind: Lease\n"
                   "metadata: {name: hcp-bench-watcher, namespace: default}\n"
                   "spec: {holderIdentity: the-bench, leaseDurationSeconds: 3600, "
                   "acquireTime: '%s', renewTime: '%s'}\nEOF", h->kubeconfig, now, now))
        die("cannot create the watcher's Lease");
    spawn_controller(w, bin, h->kubeconfig, logdir, "watcher", "hcp-bench-watcher");
    double end = ev_time() + 120, cpu = -1;
    scrape_t sc;
    while (ev_time() < end) {
        sleep_until(ev_time() + 1);
        if (!alive(w))
            die("the watching replica exited; see %s", w->log);
        double c = cpu_seconds(w->pid);
        if (scrape(w, &sc) == 0 && sc.leader == 0 && cpu >= 0 && c - cpu < 0.05)
            break;
        cpu = c;
    }
    if (ev_time() >= end)
        printf("the watching replica still used more than 5%% of a core after 120 s\n");
    if (scrape(w, &sc) || sc.leader != 0 || sc.writes != 0)
        die("the watching replica leads or wrote (%.0f writes); see %s", sc.writes, w->log);
}

/* Stops the watcher; it must have written nothing. */
static void watcher_stop(proc_t *w, harness *h)
{
    scrape_t sc;
    if (scrape(w, &sc) || sc.writes != 0 || sc.standby != 0)
        die("the watching replica wrote (%.0f writes, %.0f releases); see %s", sc.writes,
            sc.standby, w->log);
    stop_controller(w);
    harness_sh("kubectl --kubeconfig '%s' -n default delete lease hcp-bench-watcher "
               ">/dev/null 2>&1", h->kubeconfig);
}

/* BENCH_HELD: the API server's garbage collections in each burst of
 * releases (its log, with GODEBUG=gctrace=1 as bench.mk starts it): how
 * long they marked during the burst and how many of its pauses fell into a
 * mark phase. */
static void gc_burst_line(const char *what, const gc_trace_t *t, const boundary_figs_t *f)
{
    gc_burst_t g;
    gctrace_burst(t, f, &g);
    printf("  %s: %d collections marking %.2f s of its %.2f s (live heap up to %.0f MB); "
           "pauses in a mark phase %d of %d\n", what, g.collections, g.marking,
           f->t_last - f->t_first, g.live_mb, g.stalls_in_gc, f->stalls);
}

/* The bursts a run timed, for the report: the boundary first. */
typedef struct burst_row {
    const char *what;
    const boundary_figs_t *f;
    double acked; /* -1: the boundary (its writer is the controller) */
} burst_row_t;

static int burst_rows(const boundary_figs_t *f, const plain_runs_t *r, burst_row_t *rows)
{
    int n = 0;
    rows[n++] = (burst_row_t){"the boundary (the controller)", f, -1};
    if (r->beside.acked > 0)
        rows[n++] = (burst_row_t){"beside the controller, before the boundary",
                                  &r->beside.seen, r->beside.acked};
    if (r->beside_after.acked > 0)
        rows[n++] = (burst_row_t){"beside the controller, after the boundary",
                                  &r->beside_after.seen, r->beside_after.acked};
    rows[n++] = (burst_row_t){"before the controller started", &r->before.seen, r->before.acked};
    rows[n++] = (burst_row_t){"beside a replica that only watches", &r->watched.seen,
                              r->watched.acked};
    rows[n++] = (burst_row_t){"after the controller stopped", &r->after.seen, r->after.acked};
    return n;
}

static void gc_report(const burst_row_t *rows, int n)
{
    const char *log = getenv("HCP_E2E_APISERVER_LOG");
    pid_t pid = instance_pid("apiserver");
    gc_trace_t t;
    if (!log || pid <= 0 || gctrace_read(log, pid, &t) != 0 || t.n == 0) {
        printf("the API server's garbage collections: not in its log (GODEBUG=gctrace=1 "
               "shows them)\n");
        return;
    }
    printf("the API server's garbage collections during each burst (GODEBUG=gctrace=1; a "
           "mark phase slows its requests):\n");
    for (int i = 0; i < n; i++)
        gc_burst_line(rows[i].what, &t, rows[i].f);
    gctrace_free(&t);
}

/* The pace of a burst without its pauses (seconds). */
static double busy_of(const boundary_figs_t *f)
{
    return f->last_release - f->stalled;
}

/* BENCH_HELD: the order of the boundary's writes, and the pace of its
 * releases against a plain client's (as the same watch streams saw them,
 * from the first patch). The plain client that counts is the one beside the
 * controller (beside_controller()): the same objects, heap and watches,
 * the mean of its run before the boundary and its run after. The runs before
 * the controller started and after it stopped, and beside a watching
 * replica, are printed too: the first is on an API server half as large;
 * the mean of it and the run after was this figure's earlier reference.
 * Returns the failures. */
static int held_report(const boundary_figs_t *f, const plain_runs_t *r)
{
    int failures = 0;
    const boundary_figs_t *b = &r->before.seen, *a = &r->after.seen, *w = &r->watched.seen;
    const boundary_figs_t *s1 = &r->beside.seen, *s2 = &r->beside_after.seen;
    double mean = (b->last_release + a->last_release) / 2;
    bool by_beside = r->beside.acked > 0 && r->beside_after.acked > 0 &&
                     s1->last_release > 0 && s2->last_release > 0;
    double beside_mean = (s1->last_release + s2->last_release) / 2;
    burst_row_t rows[6];
    int n = burst_rows(f, r, rows);
    printf("held releases at the boundary: %d of %d HostedClusters released (watch streams "
           "of the API server), committed %.2f s to %.2f s after the boundary\n", f->releases,
           n_hc, f->first_release, f->last_release);
    printf("status writes of the boundary (HostedClusters, NodePools, companions, policies, "
           "Events): %ld; committed before the last release: %ld (must be 0)%s; the first of "
           "them %.2f s after the boundary (%s)\n", f->others, f->others_before_last,
           f->others_before_last ? " FAIL" : "", f->first_other,
           f->first_other_what[0] ? f->first_other_what : "none");
    printf("CAPI writes of the boundary (the Clusters' pauses lifted): %ld, %ld of them before "
           "the last release\n", f->capi, f->capi_before_last);
    printf("%d patches back to back, each timed by the same watch recorders from the first "
           "sent to the last committed; the plain client's up to %.0f in flight, beside the "
           "controller an annotation nobody reads (the same objects, heap and watches as the "
           "boundary's), elsewhere a release:\n", n_hc, baseline_in_flight);
    for (int i = 0; i < n; i++) {
        const boundary_figs_t *x = rows[i].f;
        printf("  %s: %.2f s (%d seen", rows[i].what, x->last_release, x->releases);
        if (rows[i].acked >= 0)
            printf("; the last acknowledged after %.2f s", rows[i].acked);
        printf("); pauses of more than %.2f s with no write seen %d (%.2f s); CPU seconds "
               "writer / API server / etcd / the machine (stolen) %.2f / %.2f / %.2f / %.2f "
               "(%.2f); the API server's in the kernel %.2f (%.0f minor page faults)\n", STALL_S,
               x->stalls, x->stalled, x->cpu_writer, x->cpu_apiserver, x->cpu_etcd,
               x->cpu_machine, x->steal, x->sys_apiserver, x->faults_apiserver);
    }
    if (by_beside)
        printf("last release committed %.2f s after the boundary; ratio to the plain client "
               "beside the controller (the mean of %.2f s before and %.2f s after: %.2f s): "
               "%.2f (target <= 1.1); to the run before %.2f, to the run after %.2f\n",
               f->last_release, s1->last_release, s2->last_release, beside_mean,
               f->last_release / beside_mean, f->last_release / s1->last_release,
               f->last_release / s2->last_release);
    else
        printf("the plain client beside the controller: not measured (BENCH_WARM_UP=0, or a "
               "cold start that ended late): the mean below is the reference\n");
    printf("last release committed %.2f s after the boundary; ratio to the plain client's "
           "mean before and after the controller %.2f s: %.2f%s; to the run before %.2f, to "
           "the run after %.2f\n", f->last_release, mean, mean > 0 ? f->last_release / mean : 0,
           by_beside ? "" : " (target <= 1.1)",
           b->last_release > 0 ? f->last_release / b->last_release : 0,
           a->last_release > 0 ? f->last_release / a->last_release : 0);
    printf("the cost of being watched: the plain client beside a replica of the controller "
           "that only watches (a standby: the API server sends it every object of the burst, "
           "as it sends the controller's), to its mean before and after the controller: %.2f; "
           "beside the controller, to the same: %.2f\n", mean > 0 ? w->last_release / mean : 0,
           by_beside && mean > 0 ? beside_mean / mean : 0);
    double busy_ref = by_beside ? (busy_of(s1) + busy_of(s2)) / 2
                                : (busy_of(b) + busy_of(a)) / 2;
    printf("without the pauses the boundary's releases took %.2f s, the plain client's %.2f s "
           "(%s): ratio %.2f\n", busy_of(f), busy_ref,
           by_beside ? "the mean beside the controller" : "the mean before and after",
           busy_ref > 0 ? busy_of(f) / busy_ref : 0);
    gc_report(rows, n);
    for (int i = 0; i < n; i++)
        failures += rows[i].f->releases != n_hc;
    failures += f->others_before_last != 0;
    return failures;
}

/* ---- the hosted API servers (BENCH_HOSTED=1) ------------------------------------ */

typedef struct hosted_figs {
    bool all;                 /* every ClusterVersion was projected */
    int projected;
    double cold;              /* controller start to the last one projected, s */
    double per_cluster;       /* requests per hosted cluster other than patches, by then */
    double patches;           /* patches per hosted cluster, by then */
    double admin;             /* requests per hosted cluster with its admin kubeconfig, by then */
    hostedsim_stats_t s0, s1; /* steady state's start and end */
    double restore;           /* a dropped condition pair back after, s (-1: not) */
} hosted_figs_t;

static void hosted_stats(int index, hostedsim_stats_t *st)
{
    if (hostedsim_stats(index, st))
        die("hostedsim does not answer");
}

/* Waits until every ClusterVersion carries our conditions (up to 300 s
 * after the controller started). */
static void hosted_cold(const proc_t *pr, hosted_figs_t *f)
{
    hostedsim_stats_t st;
    do {
        hosted_stats(0, &st);
        if (st.projected >= n_hc)
            break;
        usleep(250000);
    } while (ev_time() < pr->t_spawn + 300);
    f->all = st.projected >= n_hc;
    f->projected = st.projected;
    f->cold = st.last_projected - pr->t_spawn;
    /* Up to each cluster's own first projection: later periodic checks of
     * clusters projected early are steady state, not cold start. */
    f->per_cluster = (st.first_requests - st.admin_requests - n_hc) / n_hc;
    f->patches = st.patches / n_hc;
    f->admin = st.admin_requests / n_hc;
}

/* A foreign writer drops our conditions on one ClusterVersion: the time
 * until they are back, waiting up to a period and a half (or 120 s). */
static void hosted_drop(hosted_figs_t *f)
{
    const int victim = 1;
    hostedsim_stats_t st;
    double limit = ev_time() + (hosted_period > 0 ? 1.5 * hosted_period : 120);
    f->restore = -1;
    if (hostedsim_drop(victim))
        die("hostedsim: cannot drop conditions");
    do {
        usleep(100000);
        hosted_stats(victim, &st);
        if (st.restored_at >= st.dropped_at && st.dropped_at > 0) {
            f->restore = st.restored_at - st.dropped_at;
            return;
        }
    } while (ev_time() < limit);
}

/* Prints the hosted figures; returns the number of failures. */
static int hosted_report(const hosted_figs_t *f, double steady, double cold)
{
    int failures = 0;
    double sreq = f->s1.requests - f->s0.requests, spatch = f->s1.patches - f->s0.patches;
    double periods = hosted_period > 0 ? steady / hosted_period : 1;
    printf("hosted: %d hosted API servers (e2e/hostedsim, TLS, one ClusterVersion each), "
           "re-assertion period %s%g s\n", n_hc, hosted_period > 0 ? "" : "(none) ",
           hosted_period);
    printf("hosted cold start: %d/%d ClusterVersions projected, the last %.1f s after the "
           "controller started (target <= 60 s)%s; %.2f requests per hosted cluster besides "
           "its first patch and the set-up, up to its projection (target <= 2; %.2f patches "
           "per cluster by then); set-up with the admin kubeconfig: %.2f requests per cluster "
           "(must be 4: ServiceAccount, ClusterRole, binding, token)%s\n", f->projected, n_hc,
           f->cold, f->all ? "" : " FAIL", f->per_cluster, f->patches, f->admin,
           f->admin == 4 ? "" : " FAIL");
    failures += !f->all;
    failures += f->admin != 4;
    double sadmin = f->s1.admin_requests - f->s0.admin_requests;
    printf("hosted steady state: %.0f requests with an admin kubeconfig (must be 0: tokens "
           "are renewed at 80%% of their hour)%s, %.0f as the controller's ServiceAccount\n",
           sadmin, sadmin == 0 ? "" : " FAIL", f->s1.sa_requests - f->s0.sa_requests);
    failures += sadmin != 0;
    printf("hosted steady state: %.0f s, %.0f requests = %.2f per hosted cluster per period "
           "(target <= 1), %.0f patches (must be 0)%s; open watches at the end: %.0f started "
           "in total\n", steady, sreq, sreq / n_hc / periods, spatch,
           spatch == 0 ? "" : " FAIL", f->s1.watches);
    failures += spatch != 0;
    if (f->restore >= 0)
        printf("hosted foreign writer: conditions dropped on one ClusterVersion, restored "
               "after %.1f s (period %g s)\n", f->restore, hosted_period);
    else
        printf("hosted foreign writer: conditions dropped on one ClusterVersion, not restored "
               "within 1.5 periods FAIL\n");
    failures += f->restore < 0;
    const char *cmp = getenv("BENCH_COMPARE");
    FILE *fp = cmp && cmp[0] ? fopen(cmp, "r") : NULL;
    double base = 0;
    if (fp && fscanf(fp, "%lf", &base) == 1 && base > 0)
        printf("convergence with hosted servers: %.1f s, without (bench-controller): %.1f s; "
               "ratio %.2f (target <= 1.5)\n", cold, base, cold / base);
    else
        printf("convergence with hosted servers: %.1f s (no run without them to compare: "
               "BENCH_COMPARE)\n", cold);
    if (fp)
        fclose(fp);
    return failures;
}

static long count_items(harness *h, const char *path)
{
    json_t *items = list(h, path);
    long n = (long)json_array_size(items);
    json_decref(items);
    return n;
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    harness h;
    pump_t p;
    proc_t pr = {0};
    scrape_t s, s0, s1;
    double max_scrape = 0;
    int failures = 0;
    char logdir[] = "/tmp/bench-controller.XXXXXX";
    boundary_figs_t bf = {0};

    if (argc != 2 || access(argv[1], X_OK) != 0) {
        fprintf(stderr, "usage: bench_controller HCP_BIN (HCP_E2E_KUBECONFIG: admin)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    n_hc = (int)env_num("BENCH_HCS", 1000, 4, 100000);
    n_np = (int)env_num("BENCH_NPS", 3000, 1, 400000);
    steady_seconds = env_num("BENCH_STEADY_SECONDS", 600, 1, 86400);
    boundary_after = env_num("BENCH_BOUNDARY_AFTER", 120, 10, 3600);
    settle = env_num("BENCH_SETTLE_SECONDS", 3, 1, 60);
    baseline_in_flight = env_num("BENCH_BASELINE_IN_FLIGHT", 32, 1, 10000);
    warm_up_on = env_num("BENCH_WARM_UP", 1, 0, 1) != 0;
    hosted_on = env_num("BENCH_HOSTED", 0, 0, 1) != 0;
    hosted_period = env_num("BENCH_HOSTED_PERIOD", 60, 0, 3600);
    held_on = env_num("BENCH_HELD", 0, 0, 1) != 0;
    waves_on = env_num("BENCH_WAVES", 0, 0, 2) != 0;
    waves_fleet_only = env_num("BENCH_WAVES", 0, 0, 2) == 2;
    failover = env_num("BENCH_FAILOVER", 0, 0, 60);
    standby_on = env_num("BENCH_STANDBY", 0, 0, 1) != 0 || failover > 0;
    if (failover > 0)
        held_on = true;
    if (held_on && !getenv("BENCH_STEADY_SECONDS"))
        steady_seconds = 30;
    if (held_on && !getenv("BENCH_BOUNDARY_AFTER"))
        boundary_after = 300; /* a cold start of some 13,000 writes comes first */
    srand((unsigned)getpid());
    curl_global_init(CURL_GLOBAL_DEFAULT);
    if (harness_init(&h, NULL) < 0)
        return 1;
    if (!mkdtemp(logdir))
        die("mkdtemp: %s", strerror(errno));
    hosted_figs_t hf = {0};
    char simdir[600];
    snprintf(simdir, sizeof(simdir), "%s/hostedsim", logdir);
    if (hosted_on) {
        hostedsim_start(n_hc, simdir);
        atexit(hostedsim_stop);
    }

    /* 1. The fleet. */
    if (count_items(&h, HS "/hostedclusters") > 0)
        die("the instance already holds HostedClusters; start from an empty one "
            "(e2e/cluster.sh down bench)");
    pump_init(&p, &h, LOAD_IN_FLIGHT);
    queue_namespaces(&p);
    double t_load = pump_run(&p, "namespaces");
    queue_objects(&p);
    t_load += pump_run(&p, "objects");
    queue_status(&p);
    t_load += pump_run(&p, "status");
    printf("loaded: %d namespaces, %d HostedClusters + %d CAPI Clusters, %d NodePools + %d "
           "MachineDeployments, %d policies, HyperShift status on each: %zu requests in %.1f s "
           "(%d in flight)\n", NSPACES + n_hc, n_hc, n_hc, n_np, n_np, NSPACES * POLICIES_PER_NS,
           p.done, t_load, LOAD_IN_FLIGHT);
    if (held_on)
        printf("restricted at start, each with a change held: all %d HostedClusters (a release "
               "in %s) and all %d NodePools (a release their machines do not run); policy "
               "np-window opens at %s\n", n_hc, REQUESTED_ANN, n_np, BOUNDARY);
    else
        printf("restricted at start: %d HostedClusters (their CAPI Clusters to pause), all %d "
               "NodePools (policy np-window opens at %s)\n", n_hc / 4, n_np, BOUNDARY);

    /* 1b. BENCH_HELD: the plain client's release patches once before the
     * controller starts as well, on the API server as the boundary will find
     * it (before the boundary's 16,000 status writes, which the run after
     * it follows): to an image nobody asked for, then back (not timed), the
     * requests left as they are. Printed beside the runs that are the
     * target (beside the controller), with the run after it stops. */
    static const burst_t before_burst = {.image = BEFORE_RELEASE, .ann = BEFORE_ANN},
                         back_burst = {.image = OLD_RELEASE, .ann = REQUESTED_ANN},
                         boundary_burst = {.image = RELEASE};
    plain_runs_t runs = {0};
    if (held_on) {
        compact_store("the baseline before the controller");
        release_baseline(&h, logdir, "baseline-before", &before_burst, &runs.before);
        images_back(&h);
        /* The same beside a replica that watches as the controller does. */
        proc_t watcher = {0};
        watcher_start(&watcher, argv[1], &h, logdir);
        compact_store("the baseline beside a watching replica");
        release_baseline(&h, logdir, "baseline-watched", &before_burst, &runs.watched);
        watcher_stop(&watcher, &h);
        images_back(&h);
        compact_store("the controller's start");
    }

    /* 2. Cold start. */
    proc_t standby = {0};
    if (standby_on) {
        spawn_controller(&pr, argv[1], h.kubeconfig, logdir, "controller-a", "hcp-bench");
        spawn_controller(&standby, argv[1], h.kubeconfig, logdir, "controller-b", "hcp-bench");
        standby_proc = &standby;
        pick_leader(&pr, &standby);
    } else {
        spawn_controller(&pr, argv[1], h.kubeconfig, logdir, "controller", NULL);
    }
    controller = &pr;
    atexit(stop_controller_at_exit);
    double t_conv = -1, deadline = pr.t_spawn + 900;
    int bad_state = 0;
    while (ev_time() < deadline) {
        t_conv = wait_plateau(&pr, deadline - ev_time(), &s, &max_scrape);
        if (t_conv < 0)
            break;
        /* On a loaded machine the cold start may run past the boundary:
         * then the state to reach is the one after it (and the flip is
         * not measured on its own). */
        bool past = ev_time() >= pr.t_spawn + boundary_after;
        if ((bad_state = check_state(&h, past, true)) == 0)
            break;
        printf("  writes steady for %.0f s, but not every object is as expected: waiting\n",
               settle);
        t_conv = -1; /* a pause in the writes, not the end: keep waiting */
    }
    if (t_conv < 0 || bad_state) {
        printf("FAIL: cold start did not converge within 900 s (%.0f writes so far)\n",
               s.writes);
        check_state(&h, ev_time() >= pr.t_spawn + boundary_after, true);
        stop_controller(&pr);
        printf("controller log: %s\n", pr.log);
        return 1;
    }
    double cold = t_conv - pr.t_spawn, cold_writes = s.writes, cold_errors = s.errors;
    mem_mark(&pr, "the cold start");
    double cold_cpu = cpu_seconds(pr.pid);
    if (hosted_on)
        hosted_cold(&pr, &hf);
    printf("converged: writes steady for %.0f s and all answered, every object as expected "
           "over the API; timed to the last write's acknowledgement (/metrics scraped every "
           "%.2f s, or twice a scrape's duration)\n", settle, SCRAPE_INTERVAL);
    printf("cold start to converged: %.1f s, %.0f writes (%.0f failed, %.0f conflicts), "
           "%.0f GETs, %.1f CPU seconds of the controller\n", cold, cold_writes, cold_errors,
           s.conflicts, s.gets,
           cold_cpu);

    /* 3. The boundary. */
    double t_b = pr.t_spawn + boundary_after, flip = -1, flip_writes = 0;
    if (ev_time() < t_b - 30)
        compact_store("the boundary");
    if (ev_time() > t_b - 1) {
        printf("boundary flip: not measured: cold start ended %.1f s after the boundary's "
               "instant (raise BENCH_BOUNDARY_AFTER, now %.0f s)\n", ev_time() - t_b,
               boundary_after);
    } else {
        boundary_rec_t rec = {0};
        proc_t *m = failover > 0 ? &standby : &pr; /* whose writes are measured */
        if (failover >= 2)
            kill_leader_at(&pr, t_b - failover);
        if (held_on) {
            if (warm_up_on && failover == 0) {
                beside_controller(&h, m, logdir, t_b, &runs.beside);
                mem_mark(m, "the warm-up and the run beside it");
                if (runs.beside.acked > 0 && ev_time() < t_b - 10)
                    compact_store("the boundary");
            }
            sleep_until(t_b - 6);
            apiserver_gc("the boundary");
            sleep_until(t_b - 2);
            boundary_record(&rec, h.kubeconfig, list_rv(&h), logdir);
            recorders = &rec;
            atexit(stop_recorders); /* die() exits */
        }
        if (failover > 0 && failover < 2)
            kill_leader_at(&pr, t_b - failover);
        sleep_until(t_b - 1);
        scrape_t before;
        int tries = 0;
        while (scrape(m, &before) && ++tries < 3) /* a loaded machine: 10 s each */
            ;
        if (tries == 3)
            die("cannot scrape the controller's metrics");
        sleep_until(t_b);
        if (held_on)
            apiserver_profile("boundary", 5);
        /* A /metrics render of 4,000 objects holds the controller's loop for
         * up to a second: while the held releases go out, scrape as seldom
         * as Prometheus would (every 15 s), not every second; the watch
         * recorders time the releases. */
        cpu_mark_t marks[200];
        int n_marks = 0;
        if (held_on) {
            scrape_every = 15;
            /* nor right at the boundary; meanwhile the CPU of the writer, the
             * API server and etcd, every 0.1 s */
            while (ev_time() < t_b + scrape_every) {
                if (n_marks < (int)(sizeof(marks) / sizeof(marks[0])))
                    marks[n_marks++] = cpu_mark(m->pid);
                usleep(100000);
            }
        }
        double t_last = wait_plateau(m, 600, &s, &max_scrape);
        while (t_last >= 0 && s.writes <= before.writes && ev_time() < t_b + 60)
            t_last = wait_plateau(m, 600, &s, &max_scrape);
        if (t_last < 0 || check_state(&h, true, true)) {
            printf("FAIL: the boundary flip did not converge\n");
            failures++;
        } else {
            flip = t_last - t_b;
            flip_writes = s.writes - before.writes;
            mem_mark(m, "the boundary");
        }
        if (held_on) {
            record_releases(&rec, &boundary_burst, t_b, &bf);
            recorders = NULL;
            /* the CPU from the boundary to the first mark after the last release */
            for (int i = 1; i < n_marks; i++)
                if (marks[i].t >= bf.t_last || i == n_marks - 1) {
                    cpu_between(&bf, &marks[0], &marks[i]);
                    break;
                }
        }
        if (failover > 0) {
            if (scrape(m, &s))
                die("cannot scrape the standby's metrics");
            failures += failover_report(&bf, &s, failover);
            printf("boundary flip, the standby leading: last write acknowledged %.1f s after "
                   "the boundary (%.0f writes)\n", flip, flip_writes);
            stop_controller(m);
            printf("%s\n", failures ? "FAIL" : "PASS");
            return failures ? 1 : 0;
        }
        if (runs.beside.acked > 0 && flip >= 0) {
            sleep_until(ev_time() + 5);
            beside_run(&h, m, logdir, "baseline-beside-after", "3", &runs.beside_after);
            mem_mark(m, "the run beside it after");
        }
        if (standby_on) { /* beside a leader that writes: nothing */
            scrape_t sb;
            if (scrape(&standby, &sb))
                die("cannot scrape the standby's metrics");
            printf("the standby beside the leader at the boundary: %.0f writes, %.0f held "
                   "changes let through, %.0f refused as written already (must all be 0)%s\n",
                   sb.writes, sb.standby, sb.standby_conflicts,
                   sb.writes + sb.standby + sb.standby_conflicts > 0 ? " FAIL" : "");
            failures += sb.writes + sb.standby + sb.standby_conflicts > 0;
        }
    }

    /* 4. Steady state. */
    if (scrape(&pr, &s0))
        die("cannot scrape the controller's metrics");
    if (hosted_on)
        hosted_stats(0, &hf.s0);
    double cpu0 = cpu_seconds(pr.pid), t_s0 = ev_time();
    while (ev_time() < t_s0 + steady_seconds) {
        if (!alive(&pr))
            die("the controller exited during steady state; see %s", pr.log);
        sleep_until(ev_time() + 1 < t_s0 + steady_seconds ? ev_time() + 1 : t_s0 + steady_seconds);
    }
    double cpu1 = cpu_seconds(pr.pid), steady = ev_time() - t_s0;
    if (scrape(&pr, &s1))
        die("cannot scrape the controller's metrics");
    if (hosted_on) {
        hosted_stats(0, &hf.s1);
        hosted_drop(&hf);
    }
    long hwm = status_kib(pr.pid, "VmHWM"), rss = status_kib(pr.pid, "VmRSS");
    stop_controller(&pr);

    /* 5. The baseline: the same number of PATCHes from a plain client. */
    long pauses = 0, statuses = 0;
    double base = 0;
    compact_store("the baseline");
    pump_init(&p, &h, (int)baseline_in_flight);
    if (held_on) {
        release_baseline(&h, logdir, "baseline", &back_burst, &runs.after);
    } else {
        queue_baseline(&h, &p, (long)cold_writes, &pauses, &statuses);
        base = pump_run(&p, "baseline");
    }

    /* The figures. */
    printf("\n== bench-controller: %d HostedClusters, %d NodePools, %d policies\n", n_hc, n_np,
           NSPACES * POLICIES_PER_NS);
    if (held_on)
        printf("cold start to converged: %.1f s (%.0f writes)\n", cold, cold_writes);
    else
        printf("cold start to converged: %.1f s (%.0f writes); %ld PATCHes back to back: "
               "%.1f s (%ld pause + %ld status merge patches, up to %.0f in flight on one "
               "pkg/kube client, as the controller's write limit); ratio %.2f (target <= "
               "1.5)\n", cold, cold_writes, pauses + statuses, base, pauses, statuses,
               baseline_in_flight, cold / base);
    if (held_on && flip >= 0) {
        failures += held_report(&bf, &runs);
    } else if (held_on) {
        printf("FAIL: the boundary's held releases were not measured\n");
        failures++;
    }
    if (flip >= 0)
        printf("boundary flip: %d NodePools, %.1f s from the boundary to the last write "
               "acknowledged (%.0f writes)\n", n_np, flip, flip_writes);
    double steady_writes = s1.writes - s0.writes;
    printf("steady state: %.0f s, %.0f writes (must be 0)%s, %.2f CPU seconds (%.2f%% of a "
           "core)\n", steady, steady_writes, steady_writes == 0 ? "" : " FAIL", cpu1 - cpu0,
           100 * (cpu1 - cpu0) / steady);
    if (steady_writes != 0)
        failures++;
    printf("peak RSS: %.1f MiB (target <= 64 MiB); RSS at the end %.1f MiB\n", hwm / 1024.0,
           rss / 1024.0);
    mem_report();
    printf("longest /metrics scrape: %.3f s; the last answer %.2f MB of text, %.0f KB over the "
           "wire (gzip asked for)\n", max_scrape, s1.text_bytes / 1e6, s1.wire_bytes / 1e3);
    if (waves_on && !waves_fleet_only)
        printf("release waves (canary %d clusters, early %d, soak 48h): %.0f sums of an earlier "
               "wave made in all, cold start and boundary included, for %d HostedClusters and "
               "%d NodePools decided (one per wave and release and system, made again only "
               "when a cluster of an earlier wave changed)\n",
               (n_hc + 99) / 100, n_hc - (n_hc + 99) / 100, s1.wave_sums, n_hc, n_np);
    if (hosted_on) {
        failures += hosted_report(&hf, steady, cold);
    } else if (!held_on && getenv("BENCH_COMPARE") && getenv("BENCH_COMPARE")[0]) {
        FILE *fp = fopen(getenv("BENCH_COMPARE"), "w");
        if (fp) {
            fprintf(fp, "%.3f\n", cold);
            fclose(fp);
        }
    }
    if (failures || getenv("BENCH_KEEP_LOG")) {
        printf("controller log kept: %s\n", pr.log);
    } else {
        harness_sh("rm -rf '%s'", logdir); /* the log, certificates, watch records */
    }
    harness_close(&h);
    curl_global_cleanup();
    return failures ? 1 : 0;
}
