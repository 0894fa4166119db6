/* Benchmark of the schedule engine: precompute time per policy, next-window
 * queries per second on one core (single policies and NodePool-style
 * intersections), and peak RSS, over 10,000 generated policies with a
 * realistic mix of rules, time zones and exclusions.
 *
 * Prints plain "schedule: ..." lines. Exits non-zero only on errors (a
 * policy that does not compile, a query that fails), never on a missed
 * target.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "schedule/schedule.h"
#include "schedule/testutil_sched.h"

#define N_POLICIES 10000
#define N_INSTANTS 4096

static const char *zones[] = {
    "UTC",           "Europe/Zurich",   "Europe/London",      "Europe/Berlin",
    "America/New_York", "America/Chicago", "America/Los_Angeles", "America/Sao_Paulo",
    "Asia/Kolkata",  "Asia/Tokyo",      "Australia/Sydney",   "Australia/Lord_Howe",
    "Pacific/Chatham", "Pacific/Auckland",
};

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

typedef struct bench_policy {
    char rrule[128];
    const char *tz;
    int start_minute;
    int32_t duration;
    size_t n_ex;
    sched_exclusion_t ex[3];
} bench_policy_t;

static void gen(uint64_t *rng, bench_policy_t *p, int32_t today)
{
    static const char *wd[] = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"};
    memset(p, 0, sizeof *p);
    p->tz = zones[tu_rand_range(rng, 0, (int64_t)(sizeof zones / sizeof zones[0]) - 1)];
    int kind = (int)tu_rand_range(rng, 0, 99);
    if (kind < 30) { /* weekend windows */
        snprintf(p->rrule, sizeof p->rrule, "%s",
                 tu_chance(rng, 60) ? "FREQ=WEEKLY;BYDAY=SA,SU" : "FREQ=WEEKLY;BYDAY=SA");
        p->start_minute = (int)tu_rand_range(rng, 0, 6) * 60;
        p->duration = tu_chance(rng, 40) ? 0 : (int32_t)tu_rand_range(rng, 4, 48) * 3600;
    } else if (kind < 55) { /* weekday nightly */
        snprintf(p->rrule, sizeof p->rrule, "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR");
        p->start_minute = (int)((22 + tu_rand_range(rng, 0, 4)) % 24) * 60;
        p->duration = (int32_t)tu_rand_range(rng, 2, 6) * 3600;
    } else if (kind < 70) { /* monthly patch days */
        int m = (int)tu_rand_range(rng, 0, 3);
        const char *r = m == 0   ? "FREQ=MONTHLY;BYDAY=2TU"
                        : m == 1 ? "FREQ=MONTHLY;BYDAY=-1FR"
                        : m == 2 ? "FREQ=MONTHLY;BYMONTHDAY=1,15"
                                 : "FREQ=MONTHLY;INTERVAL=3;BYDAY=1SA";
        snprintf(p->rrule, sizeof p->rrule, "%s", r);
        p->start_minute = (int)tu_rand_range(rng, 0, 23) * 60;
        p->duration = (int32_t)tu_rand_range(rng, 4, 8) * 3600;
    } else if (kind < 80) { /* yearly */
        if (tu_chance(rng, 50))
            snprintf(p->rrule, sizeof p->rrule, "FREQ=YEARLY;BYMONTH=%d;BYMONTHDAY=%d",
                     (int)tu_rand_range(rng, 1, 12), (int)tu_rand_range(rng, 1, 28));
        else
            snprintf(p->rrule, sizeof p->rrule, "FREQ=YEARLY;BYMONTH=%d;BYDAY=1%s",
                     (int)tu_rand_range(rng, 1, 12), wd[tu_rand_range(rng, 0, 6)]);
        p->start_minute = 0;
        p->duration = tu_chance(rng, 50) ? 0 : (int32_t)tu_rand_range(rng, 24, 72) * 3600;
    } else { /* daily with an interval */
        snprintf(p->rrule, sizeof p->rrule, "FREQ=DAILY;INTERVAL=%d",
                 (int)tu_rand_range(rng, 1, 14));
        p->start_minute = (int)tu_rand_range(rng, 0, 95) * 15;
        p->duration = (int32_t)tu_rand_range(rng, 1, 8) * 3600;
    }
    if (tu_chance(rng, 20)) {
        p->n_ex = (size_t)tu_rand_range(rng, 1, 3);
        for (size_t i = 0; i < p->n_ex; i++) {
            p->ex[i].from_day = today + (int32_t)tu_rand_range(rng, -30, 90);
            p->ex[i].until_day = p->ex[i].from_day + (int32_t)tu_rand_range(rng, 1, 14);
            p->ex[i].reason = "change freeze";
        }
    }
}

int main(void)
{
    const sched_time_t now = tu_utc(2026, 1, 15, 12, 0, 0);
    const int32_t today = (int32_t)(now / 86400);
    uint64_t rng = 20260115;
    bench_policy_t *pol = calloc(N_POLICIES, sizeof *pol);
    sched_t **s = calloc(N_POLICIES, sizeof *s);
    sched_t **np = calloc(N_POLICIES, sizeof *np);
    double *ms = calloc(N_POLICIES, sizeof *ms);
    sched_time_t *inst = calloc(N_INSTANTS, sizeof *inst);
    if (!pol || !s || !np || !ms || !inst) {
        fprintf(stderr, "schedule: out of memory\n");
        return 1;
    }
    for (int i = 0; i < N_POLICIES; i++)
        gen(&rng, &pol[i], today);
    for (int i = 0; i < N_INSTANTS; i++)
        inst[i] = now + tu_rand_range(&rng, -7 * 86400, 30 * 86400);

    /* Precompute. */
    int errors = 0;
    double t0 = now_seconds();
    for (int i = 0; i < N_POLICIES; i++) {
        sched_spec_t spec = {
            .time_zone = pol[i].tz,
            .rrule = pol[i].rrule,
            .start_minute = pol[i].start_minute,
            .duration = pol[i].duration,
            .exclusions = pol[i].ex,
            .n_exclusions = pol[i].n_ex,
        };
        char err[256] = "";
        double a = now_seconds();
        int rc = sched_compile(&spec, now, &s[i], err, sizeof err);
        ms[i] = (now_seconds() - a) * 1e3;
        if (rc != 0) {
            fprintf(stderr, "schedule: compile failed (%d: %s) for %s in %s\n", rc, err,
                    pol[i].rrule, pol[i].tz);
            errors++;
            s[i] = sched_never();
        }
    }
    double total_compile = now_seconds() - t0;
    qsort(ms, N_POLICIES, sizeof *ms, cmp_double);
    printf("schedule: precompute median %.3f ms p90 %.3f ms p99 %.3f ms max %.3f ms "
           "(%d policies in %.2f s; target median < 1 ms)\n",
           ms[N_POLICIES / 2], ms[N_POLICIES * 9 / 10], ms[N_POLICIES * 99 / 100],
           ms[N_POLICIES - 1], N_POLICIES, total_compile);

    /* Next-window queries near now. A warm-up pass lets each schedule
     * extend its memoised expansion over the queried range. */
    sched_interval_t iv;
    long found = 0;
    for (int i = 0; i < N_POLICIES; i++)
        for (int k = 0; k < 8; k++)
            if (sched_next(s[i], inst[(i * 8 + k) % N_INSTANTS], &iv) < 0)
                errors++;
    const long n_queries = 4000000;
    t0 = now_seconds();
    for (long q = 0; q < n_queries; q++) {
        int rc = sched_next(s[q % N_POLICIES], inst[(q * 7) % N_INSTANTS], &iv);
        if (rc < 0)
            errors++;
        found += rc;
    }
    double dt = now_seconds() - t0;
    printf("schedule: next-window queries %.2fM/s (target >= 1M/s; %ld queries, %.1f%% found)\n",
           (double)n_queries / dt / 1e6, n_queries, 100.0 * (double)found / (double)n_queries);

    long permitted = 0;
    t0 = now_seconds();
    for (long q = 0; q < n_queries; q++)
        permitted += sched_permitted(s[q % N_POLICIES], inst[(q * 13) % N_INSTANTS]);
    dt = now_seconds() - t0;
    printf("schedule: permitted queries %.2fM/s (%.1f%% permitted)\n",
           (double)n_queries / dt / 1e6, 100.0 * (double)permitted / (double)n_queries);

    size_t mem_single = 0;
    for (int i = 0; i < N_POLICIES; i++)
        mem_single += sched_memory(s[i]);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("schedule: peak RSS after precompute and single-policy queries %.1f MiB "
           "(memoised expansions %.1f MiB)\n",
           (double)ru.ru_maxrss / 1024.0, (double)mem_single / (1024.0 * 1024.0));

    /* NodePool-style: each policy within another one as its cluster. */
    t0 = now_seconds();
    for (int i = 0; i < N_POLICIES; i++) {
        np[i] = sched_and(s[i], s[(i * 7 + 3) % N_POLICIES]);
        if (!np[i]) {
            fprintf(stderr, "schedule: sched_and failed\n");
            return 1;
        }
    }
    double build = now_seconds() - t0;
    /* The first query on each intersection (bounded to about 5 seconds;
     * the steady-state loop below only uses the intersections warmed here). */
    int n_warm = 0;
    t0 = now_seconds();
    for (int i = 0; i < N_POLICIES; i++) {
        if (sched_next(np[i], inst[i % N_INSTANTS], &iv) < 0)
            errors++;
        n_warm++;
        if (now_seconds() - t0 > 5.0)
            break;
    }
    double first = now_seconds() - t0;
    /* Time-bounded: at most n_queries or about 3 seconds. */
    long n_np = 0;
    found = 0;
    t0 = now_seconds();
    for (long q = 0; q < n_queries; q++) {
        int rc = sched_next(np[q % n_warm], inst[(q * 7) % N_INSTANTS], &iv);
        if (rc < 0)
            errors++;
        found += rc;
        n_np++;
        if ((q & 1023) == 1023 && now_seconds() - t0 > 3.0)
            break;
    }
    dt = now_seconds() - t0;
    printf("schedule: nodepool (and) next-window queries %.3fM/s (target >= 1M/s; %ld queries, "
           "%.1f%% found over %d intersections; building %d took %.1f ms; first query %.3f ms "
           "mean)\n",
           (double)n_np / dt / 1e6, n_np, 100.0 * (double)found / (double)n_np, n_warm,
           N_POLICIES, build * 1e3, first * 1e3 / n_warm);

    size_t mem = 0;
    for (int i = 0; i < N_POLICIES; i++)
        mem += sched_memory(s[i]);
    getrusage(RUSAGE_SELF, &ru);
    printf("schedule: memoised expansions %.1f MiB for %d policies at the end\n",
           (double)mem / (1024.0 * 1024.0), N_POLICIES);
    printf("schedule: peak RSS %.1f MiB\n", (double)ru.ru_maxrss / 1024.0);

    for (int i = 0; i < N_POLICIES; i++) {
        sched_unref(np[i]);
        sched_unref(s[i]);
    }
    free(pol);
    free(s);
    free(np);
    free(ms);
    free(inst);
    if (errors) {
        fprintf(stderr, "schedule: %d errors\n", errors);
        return 1;
    }
    return 0;
}
