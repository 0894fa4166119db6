/* Benchmark of the calendar feed: /calendar/<namespace>.ics for a namespace
 * of 1,000 HostedClusters, each with a NodePool, following 10 policies of
 * the usual kinds (weekends, weeknights, monthly, with exclusions), rendered
 * from the controller's cache as the metrics server renders it.
 *
 * Prints "calendar: ..." lines: events and bytes, and the render time
 * (first request, and the median and worst of the next ones) against the
 * 200 ms target. Exits non-zero only when rendering fails, never on a missed
 * target (a shared machine's load is not the code's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "log/log.h"
#include "policy/ics.h"
#include "schedule/testutil_sched.h"

#define N_CLUSTERS 1000
#define N_RUNS 9
#define LIMIT_MS 200.0

static const char *const permits[10] = {
    "{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA,SU\",\"duration\":\"8h\"}",
    "{\"rrule\":\"FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR\",\"startTime\":\"22:00\","
    "\"duration\":\"4h\"}",
    "{\"rrule\":\"FREQ=DAILY\",\"startTime\":\"02:00\",\"duration\":\"3h\"}",
    "{\"rrule\":\"FREQ=MONTHLY;BYDAY=1SA\",\"duration\":\"12h\"}",
    "{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"startTime\":\"01:00\",\"duration\":\"4h\"}",
    "{\"rrule\":\"FREQ=WEEKLY;INTERVAL=2;BYDAY=SU\",\"duration\":\"6h\"}",
    "{\"rrule\":\"FREQ=MONTHLY;BYMONTHDAY=15\",\"startTime\":\"03:00\",\"duration\":\"5h\"}",
    "{\"rrule\":\"FREQ=WEEKLY;BYDAY=TU,TH\",\"startTime\":\"09:30\",\"duration\":\"2h\"}",
    "{\"rrule\":\"FREQ=DAILY;INTERVAL=3\",\"duration\":\"8h\"}",
    "{\"rrule\":\"FREQ=WEEKLY;BYDAY=FR\",\"startTime\":\"18:00\",\"duration\":\"1d\"}",
};
static const char *const zones[] = {"UTC", "Europe/Berlin", "America/New_York", "Asia/Tokyo"};

static int apply(kube_cache *cache, const char *text)
{
    json_error_t je;
    kube_error e;
    json_t *j = json_loads(text, 0, &je);
    int rc = j ? kube_cache_apply(cache, KUBE_EVENT_ADDED, j, &e) : -1;
    json_decref(j);
    if (rc != 0)
        fprintf(stderr, "calendar: cannot load %.200s\n", text);
    return rc;
}

/* The fleet: 10 policies, N_CLUSTERS HostedClusters and a NodePool each
 * (every fifth with a narrower policy of its own). */
static int fleet(ctl_controller_t *c)
{
    char doc[1024];
    int i;

    for (i = 0; i < 10; i++) {
        snprintf(doc, sizeof doc,
                 "{\"kind\":\"HostedChangeManagementPolicy\",\"metadata\":{\"namespace\":"
                 "\"fleet\",\"name\":\"p%d\",\"uid\":\"p%d\",\"resourceVersion\":\"1\","
                 "\"generation\":1},\"spec\":{\"strategy\":\"MaintenanceSchedule\","
                 "\"maintenanceSchedule\":{\"timeZone\":\"%s\",\"permit\":%s,\"exclude\":["
                 "{\"fromDate\":\"2026-12-20\",\"untilDate\":\"2027-01-04\",\"reason\":"
                 "\"year-end freeze, no changes\"}]}}}",
                 i, i, zones[i % 4], permits[i]);
        if (apply(&c->policies, doc))
            return -1;
    }
    for (i = 0; i < N_CLUSTERS; i++) {
        snprintf(doc, sizeof doc,
                 "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"fleet\",\"name\":"
                 "\"hc%04d\",\"uid\":\"h%d\",\"resourceVersion\":\"1\",\"generation\":1,"
                 "\"annotations\":{\"changemanagement.hypershift.openshift.io/policy\":"
                 "\"p%d\"}},\"spec\":{\"infraID\":\"hc%04d-x\"}}",
                 i, i, i % 10, i);
        if (apply(&c->hcs, doc))
            return -1;
        snprintf(doc, sizeof doc,
                 "{\"kind\":\"NodePool\",\"metadata\":{\"namespace\":\"fleet\",\"name\":"
                 "\"hc%04d-workers\",\"uid\":\"n%d\",\"resourceVersion\":\"1\",\"generation\":1,"
                 "\"annotations\":{\"changemanagement.hypershift.openshift.io/%s\":\"%s\"}},"
                 "\"spec\":{\"clusterName\":\"hc%04d\"}}",
                 i, i, i % 5 ? "strategy" : "policy", i % 5 ? "Permissive" : "p4", i);
        if (apply(&c->nps, doc))
            return -1;
    }
    return 0;
}

static ctl_controller_t *controller(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->loop = loop;
    c->opts.clock = (ctl_clock_t){true, now, ev_now(loop), 1.0};
    if (ctl_state_init(c, 4096) || fleet(c)) {
        ctl_stop(c);
        return NULL;
    }
    return c;
}

int main(void)
{
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    ctl_controller_t *c;
    double t[N_RUNS], first = 0;
    size_t events = 0, bytes = 0;
    int i, rc = 0;

    log_setup(false, 0);
    if (!loop || (c = controller(loop, 1795435200 /* 2026-11-23T12:00:00Z */)) == NULL) {
        fprintf(stderr, "calendar: cannot set up the fleet\n");
        return 1;
    }
    for (i = -1; i < N_RUNS && rc == 0; i++) {
        ics_t ics = {0};
        double t0 = tu_now_ms();
        int status = ctl_calendar_render(c, "/calendar/fleet.ics", &ics);
        double ms = tu_now_ms() - t0;
        if (status != 200) {
            fprintf(stderr, "calendar: render failed with %d\n", status);
            rc = 1;
        }
        if (i < 0) {
            first = ms;
            bytes = ics.len;
            events = ics.buf ? (size_t)tu_count(ics.buf, "BEGIN:VEVENT") : 0;
        } else {
            t[i] = ms;
        }
        ics_free(&ics);
    }
    qsort(t, N_RUNS, sizeof t[0], tu_cmp_double);
    printf("calendar: /calendar/fleet.ics for %d HostedClusters and %d NodePools (10 policies, "
           "%d days): %zu events, %zu bytes\n",
           N_CLUSTERS, N_CLUSTERS, ICS_FEED_DAYS, events, bytes);
    printf("calendar: render first %.1f ms, median %.1f ms, worst %.1f ms of %d (limit %.0f ms)\n",
           first, t[N_RUNS / 2], t[N_RUNS - 1], N_RUNS, LIMIT_MS);
    if (rc == 0 && t[N_RUNS / 2] > LIMIT_MS)
        printf("calendar: the median render time is over the limit\n");
    ctl_stop(c);
    ev_loop_destroy(loop);
    return rc;
}
