/* Benchmark of the /metrics values at fleet scale, without an API server:
 * 1,000 HostedClusters and 3,000 NodePools in 10 namespaces with 50
 * policies and a CAPI object each, filled into the controller's caches as
 * the watches would. Measures on one core:
 *   - a scrape before any reconcile (every object planned at scrape time:
 *     the scrape's shared resolutions and intersections only),
 *   - one reconcile of every object (what a cold start decides),
 *   - a scrape after it (the inputs reconcile left on the records are
 *     current, so the scrape plans nothing),
 *   - the same scrape with those inputs forgotten (every object planned
 *     again from the resolutions the records keep).
 * Prints plain "scrape: ..." lines; exits non-zero only on errors.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "controller/internal.h"
#include "log/log.h"

#define N_NS 10
#define N_HC 1000
#define NP_PER_HC 3
#define POLICIES_PER_NS 5
#define ROUNDS 20

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_scrape: %s\n", what);
    exit(1);
}

static void apply(kube_cache *cache, const char *text)
{
    json_error_t je;
    kube_error e;
    json_t *j = json_loads(text, 0, &je);
    if (!j || kube_cache_apply(cache, KUBE_EVENT_ADDED, j, &e) != 0)
        die(text);
    json_decref(j);
}

#define META "\"metadata\":{\"namespace\":\"%s\",\"name\":\"%s\",\"uid\":\"u-%s-%s\"," \
             "\"resourceVersion\":\"1\",\"generation\":1"
#define CM "changemanagement.hypershift.openshift.io/"

static void fill(ctl_controller_t *c)
{
    char buf[2048], ns[32], hcp[64], name[32], np[32];
    static const char *days[] = {"SA", "SU", "WE", "TH", "FR"};
    for (int n = 0; n < N_NS; n++) {
        snprintf(ns, sizeof ns, "fleet-%d", n);
        for (int p = 0; p < POLICIES_PER_NS; p++) {
            snprintf(name, sizeof name, "window-%d", p);
            snprintf(buf, sizeof buf,
                     "{\"kind\":\"HostedChangeManagementPolicy\"," META "},\"spec\":{"
                     "\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{\"permit\":{"
                     "\"rrule\":\"FREQ=WEEKLY;BYDAY=%s\",\"startTime\":\"0%d:00\","
                     "\"duration\":\"4h\"},\"timeZone\":\"Europe/Zurich\"}}}",
                     ns, name, ns, name, days[p], p + 1);
            apply(&c->policies, buf);
        }
    }
    for (int h = 0; h < N_HC; h++) {
        snprintf(ns, sizeof ns, "fleet-%d", h % N_NS);
        snprintf(name, sizeof name, "hc-%04d", h);
        snprintf(hcp, sizeof hcp, "%s-%s", ns, name);
        snprintf(buf, sizeof buf,
                 "{\"kind\":\"HostedCluster\"," META ",\"annotations\":{\"" CM
                 "policy\":\"window-%d\"}},\"spec\":{\"infraID\":\"%s-x\",\"release\":{"
                 "\"image\":\"r:2\"}},\"status\":{\"version\":{\"desired\":{\"image\":\"r:%d\"}}}}",
                 ns, name, ns, name, h % POLICIES_PER_NS, name, 1 + h % 2);
        apply(&c->hcs, buf);
        snprintf(buf, sizeof buf, "{\"kind\":\"Cluster\"," META "}}", hcp, name, hcp, name);
        apply(&c->clusters, buf);
        for (int k = 0; k < NP_PER_HC; k++) {
            snprintf(np, sizeof np, "np-%05d", h * NP_PER_HC + k);
            snprintf(buf, sizeof buf,
                     "{\"kind\":\"NodePool\"," META ",\"annotations\":{\"" CM
                     "policy\":\"window-%d\"}},\"spec\":{\"clusterName\":\"%s\"}}",
                     ns, np, ns, np, (h + k + 1) % POLICIES_PER_NS, name);
            apply(&c->nps, buf);
            snprintf(buf, sizeof buf,
                     "{\"kind\":\"MachineDeployment\"," META "},\"spec\":{\"replicas\":3},"
                     "\"status\":{\"updatedReplicas\":%d}}",
                     hcp, np, hcp, np, k == 0 ? 1 : 3);
            apply(&c->mds, buf);
        }
    }
}

static ctl_controller_t *controller(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));
    if (!c)
        die("out of memory");
    c->loop = loop;
    c->opts.clock = (ctl_clock_t){true, now, ev_now(loop), 1.0};
    snprintf(c->capi_version, sizeof(c->capi_version), "v1beta1");
    if (ctl_state_init(c, 1024))
        die("cannot create the caches");
    fill(c);
    return c;
}

typedef struct tally {
    long objects, pending;
} tally_t;

static void count(const ctl_object_metrics_t *m, void *ud)
{
    tally_t *t = ud;
    t->objects++;
    t->pending += m->change_pending;
}

/* CPU seconds of one scrape, the mean of ROUNDS. */
static double scrape_seconds(ctl_controller_t *c, tally_t *t)
{
    double t0 = cpu_seconds();
    for (int i = 0; i < ROUNDS; i++) {
        *t = (tally_t){0};
        ctl_foreach_object_metrics(c, count, t);
    }
    return (cpu_seconds() - t0) / ROUNDS;
}

static void reconcile_hc(const kube_obj *o, void *ud)
{
    ctl_reconcile(ud, ctl_record_get(ud, R_HC, o->ns, o->name));
}

static void reconcile_np(const kube_obj *o, void *ud)
{
    ctl_reconcile(ud, ctl_record_get(ud, R_NP, o->ns, o->name));
}

int main(void)
{
    log_setup(false, 0);
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    sched_time_t now;
    if (sched_parse_rfc3339("2026-03-04T12:00:00Z", &now))
        die("bad instant");
    double t0 = cpu_seconds();
    ctl_controller_t *c = controller(loop, now);
    printf("scrape: %d HostedClusters, %d NodePools, %d policies in %d namespaces filled "
           "in %.2f CPU s\n", N_HC, N_HC * NP_PER_HC, N_NS * POLICIES_PER_NS, N_NS,
           cpu_seconds() - t0);
    /* The handlers queued every object as the watches would; a cold
     * controller has decided nothing yet. */
    while (!ctl_queue_empty(&c->queue))
        ctl_record_free(RECORD_OF(q, ctl_queue_pop(&c->queue)));
    kube_objmap_free(&c->records);
    if (kube_objmap_init(&c->records, 1024))
        die("out of memory");

    tally_t cold, warm;
    double s_cold = scrape_seconds(c, &cold);
    t0 = cpu_seconds();
    kube_cache_foreach(&c->hcs, reconcile_hc, c);
    kube_cache_foreach(&c->nps, reconcile_np, c);
    double rec = cpu_seconds() - t0;
    double s_warm = scrape_seconds(c, &warm);
    size_t i;
    hcp_hnode_t *n;
    HCP_HTAB_FOREACH(&c->records.tab, i, n)
        ((record_t *)n)->have_metrics = false;
    tally_t replan;
    double s_replan = scrape_seconds(c, &replan);
    if (cold.objects != N_HC * (1 + NP_PER_HC) || warm.objects != cold.objects ||
        warm.pending != cold.pending || replan.pending != cold.pending)
        die("the scrapes disagree");
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("scrape: before any reconcile (all planned at scrape time): %.1f ms a scrape, "
           "%.1f us an object\n", s_cold * 1e3, s_cold * 1e6 / (double)cold.objects);
    printf("scrape: one reconcile of every object: %.1f ms, %.1f us an object\n", rec * 1e3,
           rec * 1e6 / (double)cold.objects);
    printf("scrape: after reconcile (inputs read from the records): %.1f ms a scrape, "
           "%.2f us an object (%.0fx less)\n", s_warm * 1e3,
           s_warm * 1e6 / (double)warm.objects, s_warm > 0 ? s_cold / s_warm : 0);
    printf("scrape: after reconcile, planned again from the records' resolutions: %.1f ms a "
           "scrape, %.1f us an object\n", s_replan * 1e3, s_replan * 1e6 / (double)replan.objects);
    printf("scrape: peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);
    ctl_stop(c);
    ev_loop_destroy(loop);
    return 0;
}
