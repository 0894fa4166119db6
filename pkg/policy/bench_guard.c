/* Benchmark of the guard rails as admission evaluates them: a policy with
 * 1,000 exclusions (daily windows, one or two days excluded every eight, in
 * Europe/Berlin) parsed and compiled, then judged against every rule over
 * the next 12 months, the way a validating webhook would for each request.
 *
 * Prints "guard: ..." lines with the median and p99 of parse + check and of
 * the check alone, against the 10 ms target of an admission request. Exits
 * non-zero only when a step fails, never on a missed target (a shared
 * machine's load is not the code's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/guard.h"
#include "policy/policy.h"
#include "policy/testutil_policy.h"
#include "schedule/testutil_sched.h"

#define N_EXCLUSIONS 1000
#define N_RUNS 200
#define LIMIT_MS 10.0
#define NOW ((sched_time_t)1795435200) /* 2026-11-23T12:00:00Z */

/* One admission: parse, compile, check. Fills the two timings. */
static int admit(const char *text, const guard_config_t *cfg, double *both, double *check)
{
    char err[POLICY_ERRLEN];
    double t0 = tu_now_ms(), t1;
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    policy_t *p = NULL;
    guard_verdict_t v;
    int rc = 1;

    if (!doc || policy_parse(doc, NOW, &p, err, sizeof err) != 0) {
        fprintf(stderr, "guard: the policy does not parse: %s\n", doc ? err : je.text);
        goto done;
    }
    const policy_t *ps[1] = {p};
    guard_input_t in = {.effective = p->sched, .policies = ps, .n_policies = 1};
    t1 = tu_now_ms();
    if (guard_check(cfg, &in, NOW, &v) != 0 || !v.allowed) {
        fprintf(stderr, "guard: the check failed or refused: %s\n",
                v.n ? v.v[0].message : "engine error");
        goto done;
    }
    *check = tu_now_ms() - t1;
    *both = tu_now_ms() - t0;
    rc = 0;
done:
    policy_free(p);
    json_decref(doc);
    return rc;
}

int main(void)
{
    guard_config_t cfg = {.min_permitted = 48 * 3600, .period = 32 * 86400,
                          .min_block = 4 * 3600, .max_exclusion = 30 * 86400,
                          .max_restrictive = 90 * 86400};
    double both[N_RUNS], check[N_RUNS];
    char *text = tu_busy_policy_json(N_EXCLUSIONS);
    int i;

    if (text == NULL) {
        fprintf(stderr, "guard: out of memory\n");
        return 1;
    }
    for (i = 0; i < N_RUNS; i++)
        if (admit(text, &cfg, &both[i], &check[i]) != 0) {
            free(text);
            return 1;
        }
    free(text);
    qsort(both, N_RUNS, sizeof both[0], tu_cmp_double);
    qsort(check, N_RUNS, sizeof check[0], tu_cmp_double);
    printf("guard: a policy with %d exclusions, every rule over 12 months, %d runs\n",
           N_EXCLUSIONS, N_RUNS);
    printf("guard: parse + check median %.2f ms, p99 %.2f ms (limit %.0f ms); check alone "
           "median %.2f ms, p99 %.2f ms\n",
           both[N_RUNS / 2], both[N_RUNS * 99 / 100], LIMIT_MS, check[N_RUNS / 2],
           check[N_RUNS * 99 / 100]);
    if (both[N_RUNS * 99 / 100] > LIMIT_MS)
        printf("guard: the p99 is over the limit\n");
    return 0;
}
