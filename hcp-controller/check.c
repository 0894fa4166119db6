/* check.c: `hcp-controller preview --check`, the guard rails' verdict on
 * policy files, offline (preview.h). */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "notify/config.h"
#include "policy/guard.h"
#include "preview.h"
#include "webhook.h"

#define EXIT_RUNTIME 1
#define EXIT_USAGE 2
#define EXIT_REFUSED 3

static const char *PROG = "hcp-controller preview";

/* Reads the guard rail file, and its `notifications`, `checks` and `waves` as the
 * controller would at its start (a bad key refused the same way). Returns
 * -1 to go on, or an exit status after saying why. */
static int load_config(const char *path, guard_config_t *cfg)
{
    char err[700];
    int rc = webhook_config_load("--guard-config", path, cfg, NULL, NULL, NULL, err,
                                 sizeof err);

    if (rc == 0)
        return -1;
    fprintf(stderr, "%s: %s\n", PROG, err);
    return rc == HCP_EINVAL || rc == HCP_EPARSE ? EXIT_USAGE : EXIT_RUNTIME;
}

static void print_limits(const char *path, const guard_config_t *c)
{
    char a[48], b[48], d[48];

    printf("Guard rails (%s):", path);
    if (c->min_permitted > 0) {
        guard_format_duration(c->min_permitted, a, sizeof a);
        guard_format_duration(c->period, b, sizeof b);
        guard_format_duration(c->min_block, d, sizeof d);
        printf(" minPermittedTime %s per rollingPeriod %s", a, b);
        if (c->min_block > 0)
            printf(" in blocks of at least %s", d);
        printf(";");
    }
    if (c->max_exclusion > 0) {
        guard_format_duration(c->max_exclusion, a, sizeof a);
        printf(" maxExclusionLength %s;", a);
    }
    if (c->max_restrictive > 0) {
        guard_format_duration(c->max_restrictive, a, sizeof a);
        printf(" maxRestrictiveUntil %s;", a);
    }
    if (c->min_time_left > 0) {
        guard_format_duration(c->min_time_left, a, sizeof a);
        printf(" minTimeLeft %s;", a);
    }
    if (c->min_permitted == 0 && c->max_exclusion == 0 && c->max_restrictive == 0 &&
        c->min_time_left == 0)
        printf(" none enforced");
    printf("\n");
}

static void print_text(const char *path, const guard_config_t *c, const guard_verdict_t *v,
                       sched_time_t from)
{
    char t[32], least[48], per[48];
    size_t i;

    print_limits(path, c);
    sched_format_utc(from, t, sizeof t);
    printf("Checked the 12 months from %s.\n", t);
    if (v->least_permitted >= 0) {
        guard_format_duration(v->least_permitted, least, sizeof least);
        guard_format_duration(c->period > GUARD_HORIZON ? GUARD_HORIZON : c->period, per,
                              sizeof per);
        printf("The least permitted time counted in any %s is %s.\n", per, least);
    }
    if (v->allowed) {
        printf("Verdict: allowed.\n");
        return;
    }
    printf("Verdict: refused, %zu rule%s failed:\n", v->n, v->n == 1 ? "" : "s");
    for (i = 0; i < v->n; i++)
        printf("  - %s\n", v->v[i].message);
}

static int print_json(const guard_verdict_t *v)
{
    json_t *doc = json_object(), *list = json_array();
    char a[32], b[32];
    size_t i;
    int rc = -1;

    if (doc == NULL || list == NULL)
        goto done;
    json_object_set_new(doc, "allowed", json_boolean(v->allowed));
    json_object_set_new(doc, "leastPermittedSeconds",
                        v->least_permitted >= 0 ? json_integer(v->least_permitted) : json_null());
    for (i = 0; i < v->n; i++) {
        sched_format_utc(v->v[i].period_start, a, sizeof a);
        sched_format_utc(v->v[i].period_end, b, sizeof b);
        json_array_append_new(list, json_pack("{s:s,s:I,s:s,s:s,s:s}", "rule",
                                              guard_rule_name(v->v[i].rule), "bySeconds",
                                              (json_int_t)v->v[i].by, "start", a, "end", b,
                                              "message", v->v[i].message));
    }
    json_object_set(doc, "violations", list);
    rc = json_dumpf(doc, stdout, JSON_COMPACT) == 0 && fputc('\n', stdout) != EOF ? 0 : -1;
done:
    json_decref(list);
    json_decref(doc);
    return rc;
}

int preview_check(const char *guard_file, policy_t *const *p, int n, sched_t *s,
                  sched_time_t from, int has_restrictive_until, sched_time_t restrictive_until,
                  int json)
{
    guard_config_t cfg;
    guard_verdict_t v;
    int status, rc;

    if ((status = load_config(guard_file, &cfg)) >= 0)
        return status;
    guard_input_t in = {.effective = s, .policies = (const policy_t *const *)p,
                        .n_policies = (size_t)n, .has_restrictive_until = has_restrictive_until,
                        .restrictive_until = restrictive_until};
    if ((rc = guard_check(&cfg, &in, from, &v)) < 0) {
        fprintf(stderr, "%s: cannot evaluate the guard rails (%s)\n", PROG, hcp_strerror(rc));
        return EXIT_RUNTIME;
    }
    /* A policy's own spec.minTimeLeft that none of its windows meets, as
     * the validating webhook refuses it (one minTimeLeft entry at most). */
    for (int k = 0; k < n; k++) {
        guard_verdict_t own;
        bool have = false;
        for (size_t i = 0; i < v.n; i++)
            have = have || v.v[i].rule == GUARD_RULE_MIN_TIME_LEFT;
        if ((rc = guard_check_policy_min_left(p[k], from, &own)) < 0) {
            fprintf(stderr, "%s: cannot evaluate spec.minTimeLeft (%s)\n", PROG,
                    hcp_strerror(rc));
            return EXIT_RUNTIME;
        }
        if (!own.allowed && !have && v.n < GUARD_NRULES) {
            v.v[v.n++] = own.v[0];
            v.allowed = 0;
        }
    }
    if (json) {
        if (print_json(&v) < 0) {
            fprintf(stderr, "%s: out of memory\n", PROG);
            return EXIT_RUNTIME;
        }
    } else {
        print_text(guard_file, &cfg, &v, from);
    }
    return v.allowed ? 0 : EXIT_REFUSED;
}
