/* Benchmark of the admission webhooks as the API server calls them: the
 * controller's route table on the TLS server (pkg/httpserver, the
 * certificate of testutil_tls), caches filled as the watch would fill them,
 * the guard rails of GKE (48 h in every 32 days in blocks of 4 h, 30-day
 * exclusions), and a load driver on its own thread that POSTs
 * AdmissionReviews with libcurl over one kept-alive TLS connection at a
 * fixed rate (100 requests/s), as an API server does.
 *
 * Each case prints the median, p99 and worst latency (request sent to
 * answer read, as the client sees it) against its target, and the CPU time
 * the serving thread spent per request (TLS, HTTP, the webhook: what a
 * loaded machine does not inflate):
 *   policy, typical       a weekly policy created              (<= 5 ms)
 *   policy, 1,000 excl.   the busy policy created              (<= 10 ms)
 *   HostedCluster write   HyperShift's spec write, stanza unchanged
 *   NodePool stanza       a NodePool's new stanza judged within its
 *                         HostedCluster's timeline
 * The figures depend on the machine's load; the bench fails only when a
 * request fails or is answered wrongly, never on a missed target.
 */
#include <curl/curl.h>
#include <ev.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "admission/holds.h"
#include "admission/router.h"
#include "admission/validate.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "httpserver/testutil_tls.h"
#include "log/log.h"
#include "policy/testutil_policy.h"
#include "schedule/testutil_sched.h"

#define RATE 100 /* requests per second */
#define NOW ((sched_time_t)1795435200) /* 2026-11-23T12:00:00Z */

typedef struct bench_case {
    const char *name;
    const char *path;     /* webhook */
    const char *resource;
    const char *op;
    char *object, *old;   /* owned JSON texts */
    bool want_allowed;
    int n;                /* requests */
    double target_ms;     /* 0: none */
} bench_case_t;

typedef struct driver {
    int port;
    clockid_t server_cpu;  /* the CPU clock of the thread serving the webhooks */
    bench_case_t *cases;
    size_t ncases;
    ev_async done;        /* wakes the loop when the driver is finished */
    struct ev_loop *loop;
    int failed;
} driver_t;

static size_t collect(char *data, size_t size, size_t n, void *ud)
{
    size_t *len = ud;
    (void)data;
    *len += size * n;
    return size * n;
}

/* The AdmissionReview of one request of case c (new, the caller frees). */
static char *review_of(const bench_case_t *c, int i)
{
    char uid[32];
    json_error_t je;
    json_t *obj = json_loads(c->object, 0, &je), *old = c->old ? json_loads(c->old, 0, &je) : NULL;
    snprintf(uid, sizeof(uid), "u-%d", i);
    json_t *req = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s}, s:s, s:s, s:s, s:{s:s}, s:o}",
                            "uid", uid, "resource", "group",
                            strstr(c->path, "policies") ? CM_GROUP : HS_GROUP, "version",
                            "v1", "resource", c->resource, "kind", "kind", "X", "namespace",
                            "clusters", "name", "p", "operation", c->op, "userInfo", "username",
                            "bench", "object", obj);
    if (req && old)
        json_object_set_new(req, "oldObject", old);
    json_t *rev = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                            "AdmissionReview", "request", req);
    char *s = rev ? json_dumps(rev, JSON_COMPACT) : NULL;
    json_decref(rev);
    return s;
}

/* Sends case c's requests at RATE, timing each into ms[]. */
static int run_case(driver_t *d, CURL *h, bench_case_t *c, double *ms)
{
    char url[128], *body = review_of(c, 0);
    struct curl_slist *hdr = curl_slist_append(NULL, "Content-Type: application/json");
    double t0 = tu_now_ms();
    int rc = 0;

    snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", d->port, c->path);
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    for (int i = 0; i < c->n && rc == 0; i++) {
        double due = t0 + i * 1000.0 / RATE, now = tu_now_ms();
        if (due > now) {
            struct timespec ts = {0, (long)((due - now) * 1e6)};
            nanosleep(&ts, NULL);
        }
        size_t got = 0;
        long status = 0;
        double start = tu_now_ms();
        curl_easy_setopt(h, CURLOPT_WRITEDATA, &got);
        if (curl_easy_perform(h) != CURLE_OK ||
            curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status) != CURLE_OK || status != 200 ||
            got == 0) {
            fprintf(stderr, "admission: %s: request %d failed (HTTP %ld)\n", c->name, i, status);
            rc = -1;
        }
        ms[i] = tu_now_ms() - start;
    }
    curl_slist_free_all(hdr);
    free(body);
    return rc;
}

/* CPU seconds the server thread has used. */
static double cpu_seconds(clockid_t clk)
{
    struct timespec ts;
    return clock_gettime(clk, &ts) == 0 ? ts.tv_sec + ts.tv_nsec / 1e9 : 0;
}

static void *drive(void *ud)
{
    driver_t *d = ud;
    CURL *h = curl_easy_init();
    struct curl_blob ca = {(void *)testutil_tls_cert_a, strlen(testutil_tls_cert_a),
                           CURL_BLOB_COPY};

    curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, collect);
    for (size_t k = 0; k < d->ncases && !d->failed; k++) {
        bench_case_t *c = &d->cases[k];
        double *ms = calloc((size_t)c->n, sizeof(*ms)), cpu0 = cpu_seconds(d->server_cpu);
        if (ms == NULL || run_case(d, h, c, ms) != 0) {
            d->failed = 1;
            free(ms);
            break;
        }
        qsort(ms, (size_t)c->n, sizeof(*ms), tu_cmp_double);
        printf("admission: %-22s %4d requests at %d/s over TLS: median %.2f ms, p99 %.2f ms, "
               "worst %.2f ms", c->name, c->n, RATE, ms[c->n / 2], ms[c->n * 99 / 100],
               ms[c->n - 1]);
        if (c->target_ms > 0)
            printf(" (target p99 <= %.0f ms%s)", c->target_ms,
                   ms[c->n * 99 / 100] > c->target_ms ? ", missed" : "");
        printf("; server CPU %.2f ms a request\n",
               (cpu_seconds(d->server_cpu) - cpu0) * 1000 / c->n);
        fflush(stdout);
        free(ms);
    }
    curl_easy_cleanup(h);
    ev_async_send(d->loop, &d->done);
    return NULL;
}

static void on_done(struct ev_loop *loop, ev_async *w, int revents)
{
    (void)w;
    (void)revents;
    ev_break(loop, EVBREAK_ALL);
}

/* One answer checked outside the timed runs: allowed as the case says. */
static int check_case(adm_router_t *r, const bench_case_t *c)
{
    testutil_review_t q = {.path = c->path, .op = c->op, .group = strstr(c->path, "policies")
                                                                      ? CM_GROUP : HS_GROUP,
                           .resource = c->resource, .ns = "clusters", .name = "p",
                           .object = c->object, .old_object = c->old};
    json_t *resp = testutil_ctl_review(r, &q);
    bool allowed = json_is_true(json_object_get(resp, "allowed"));
    json_decref(resp);
    if (allowed != c->want_allowed)
        fprintf(stderr, "admission: %s: answered allowed=%d\n", c->name, allowed);
    return allowed == c->want_allowed ? 0 : -1;
}

#define HC_A(extra)                                                                         \
    "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"a\","     \
    "\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":\"weekend\"}},"     \
    "\"spec\":{\"infraID\":\"a-x1\",\"release\":{\"image\":\"r:" extra "\"}}}"
#define NP1(policy)                                                                         \
    "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"np1\","       \
    "\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":\"" policy "\"}},"  \
    "\"spec\":{\"clusterName\":\"a\"}}"
#define WEEKEND                                                                              \
    "{\"apiVersion\":\"changemanagement.hypershift.openshift.io/v1alpha1\",\"kind\":"          \
    "\"HostedChangeManagementPolicy\",\"metadata\":{\"namespace\":\"clusters\",\"name\":"      \
    "\"weekend\"},\"spec\":{\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{"   \
    "\"timeZone\":\"Europe/Berlin\",\"permit\":{\"recurrence\":{\"frequency\":\"Weekly\","    \
    "\"weekly\":{\"daysOfWeek\":[\"Saturday\",\"Sunday\"]}},\"startTime\":\"01:00\","         \
    "\"duration\":\"12h\"},\"exclude\":[{\"fromDate\":\"2026-12-24\",\"untilDate\":"          \
    "\"2026-12-27\",\"reason\":\"holidays\"}]}}}"

int main(void)
{
    struct ev_loop *loop = ev_default_loop(0);
    guard_config_t gke = {.min_permitted = 48 * 3600, .period = 32 * 86400,
                          .min_block = 4 * 3600, .max_exclusion = 30 * 86400};
    bench_case_t cases[] = {
        {"policy, typical", ADM_WEBHOOK_VALIDATE_POLICIES, "hostedchangemanagementpolicies",
         "CREATE", strdup(WEEKEND), NULL, true, 1000, 5},
        {"policy, 1,000 excl.", ADM_WEBHOOK_VALIDATE_POLICIES,
         "hostedchangemanagementpolicies", "CREATE", tu_busy_policy_json(1000), NULL, true, 1000,
         10},
        {"HostedCluster write", ADM_WEBHOOK_VALIDATE_HOSTEDCLUSTERS, "hostedclusters", "UPDATE",
         strdup(HC_A("2")), strdup(HC_A("1")), true, 500, 0},
        {"NodePool stanza", ADM_WEBHOOK_VALIDATE_NODEPOOLS, "nodepools", "UPDATE",
         strdup(NP1("busy")), strdup(NP1("weekend")), false, 500, 0},
    };
    driver_t d = {.cases = cases, .ncases = sizeof(cases) / sizeof(cases[0]), .loop = loop};
    char err[256];
    http_server srv;
    adm_router_t r;
    pthread_t th;
    int rc = 1;

    log_setup(false, -1);
    curl_global_init(CURL_GLOBAL_DEFAULT);
    ctl_controller_t *c = testutil_ctl_new(loop, NULL, NOW);
    testutil_ctl_add(&c->policies, WEEKEND);
    testutil_ctl_add(&c->policies, cases[1].object);
    testutil_ctl_add(&c->hcs, HC_A("1"));
    ctl_set_guard(c, &gke);
    http_server_init(&srv, NULL);
    adm_router_init(&r, &srv, false, NULL, NULL);
    if (adm_holds_register(&r, c) != 0 || adm_validation_register(&r, c) != 0 ||
        http_server_set_tls(&srv, testutil_tls_cert_a, testutil_tls_key_a) != 0 ||
        http_server_start(&srv, loop, "127.0.0.1:0", err, sizeof(err)) != 0) {
        fprintf(stderr, "admission: cannot serve the webhooks\n");
        goto done;
    }
    for (size_t k = 0; k < d.ncases; k++)
        if (cases[k].object == NULL || check_case(&r, &cases[k]) != 0)
            goto done;
    d.port = http_server_port(&srv);
    if (pthread_getcpuclockid(pthread_self(), &d.server_cpu) != 0)
        goto done;
    ev_async_init(&d.done, on_done);
    ev_async_start(loop, &d.done);
    if (pthread_create(&th, NULL, drive, &d) != 0)
        goto done;
    ev_run(loop, 0);
    pthread_join(th, NULL);
    rc = d.failed;
done:
    http_server_stop(&srv);
    ctl_stop(c);
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
        free(cases[k].object);
        free(cases[k].old);
    }
    curl_global_cleanup();
    return rc;
}
