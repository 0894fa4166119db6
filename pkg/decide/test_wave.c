/* test_wave.c: release waves: the `waves` configuration, a cluster's wave,
 * blocked releases, the index's verdict and its application to a decision
 * (decide/wave.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "decide/decide.h"
#include "decide/testutil_decide.h"
#include "decide/wave.h"

#define DAY 86400

static const char *const THREE =
    "{\"sequence\":["
    "{\"name\":\"canary\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"canary\"}}},"
    "{\"name\":\"early\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"early\"}},"
    "\"soak\":\"48h\"},"
    "{\"name\":\"fleet\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"fleet\"},"
    "\"namespaces\":[\"clusters\"]},\"soak\":\"2d\",\"minClusters\":3}],"
    "\"blockedReleases\":[\"4.17.2\",\">=4.17.5 <4.17.8\"]}";

static void parse_ok(const char *text, wave_config_t *cfg)
{
    char err[512] = "";
    json_t *j = tu_doc(text);
    int rc = wave_config_parse(j, cfg, err, sizeof(err));
    json_decref(j);
    if (rc)
        fail_msg("refused: %s", err);
}

static void test_parse(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    assert_int_equal(cfg.n, 3);
    assert_string_equal(cfg.waves[1].name, "early");
    assert_int_equal(cfg.waves[1].soak, 2 * DAY);
    assert_int_equal(cfg.waves[1].min_clusters, -1);
    assert_int_equal(cfg.waves[2].min_clusters, 3);
    assert_string_equal(cfg.waves[2].ns[0], "clusters");
    assert_int_equal(cfg.n_blocked, 2);
    assert_int_equal(cfg.blocked[1].n, 2);
    assert_true(wave_config_on(&cfg));

    /* A ConfigMap holds the section as JSON text. */
    json_t *s = json_string(THREE);
    char err[512];
    static wave_config_t again;
    assert_int_equal(wave_config_parse(s, &again, err, sizeof(err)), 0);
    assert_memory_equal(&cfg, &again, sizeof(cfg));
    json_decref(s);

    /* Absent: off. */
    assert_int_equal(wave_config_parse(NULL, &cfg, err, sizeof(err)), 0);
    assert_false(wave_config_on(&cfg));
}

/* Every refusal names its key. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"[]", "waves: must be a mapping"},
        {"{\"sequnce\":[]}", "waves.sequnce: unknown key"},
        {"{\"sequence\":{}}", "waves.sequence: must be a list of 1 to 16 waves"},
        {"{\"sequence\":[]}", "waves.sequence: must be a list of 1 to 16 waves"},
        {"{\"sequence\":[{\"selector\":{\"namespaces\":[\"a\"]}}]}",
         "waves.sequence[0].name"},
        {"{\"sequence\":[{\"name\":\"Canary\",\"selector\":{\"namespaces\":[\"a\"]}}]}",
         "waves.sequence[0].name: \"Canary\" must be lower case"},
        {"{\"sequence\":[{\"name\":\"a\"}]}", "waves.sequence[0].selector: is required"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{}}]}",
         "waves.sequence[0].selector: selects every HostedCluster"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"matchLabel\":{}}}]}",
         "waves.sequence[0].selector.matchLabel: unknown key"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"matchLabels\":{\"-x\":\"y\"}}}]}",
         "waves.sequence[0].selector.matchLabels: \"-x\" is not a label key"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"matchLabels\":{\"x\":7}}}]}",
         "waves.sequence[0].selector.matchLabels.x: must be a label value"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"A_b\"]}}]}",
         "waves.sequence[0].selector.namespaces[0]: must be a namespace name"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]}},"
         "{\"name\":\"b\",\"selector\":{\"namespaces\":[\"b\"]},\"soak\":\"2 days\"}]}",
         "waves.sequence[1].soak: \"2 days\" is not a duration"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]}},"
         "{\"name\":\"b\",\"selector\":{\"namespaces\":[\"b\"]},\"soak\":\"91d\"}]}",
         "waves.sequence[1].soak: must be at most 90d"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]}},"
         "{\"name\":\"b\",\"selector\":{\"namespaces\":[\"b\"]},\"minClusters\":0}]}",
         "waves.sequence[1].minClusters: must be a whole number"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]},"
         "\"soak\":\"1h\"}]}",
         "waves.sequence[0]: the first wave has no wave before it"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]}},"
         "{\"name\":\"a\",\"selector\":{\"namespaces\":[\"b\"]}}]}",
         "waves.sequence[1].name: \"a\" is the name of waves.sequence[0] too"},
        /* Two waves one cluster could match: refused, naming both. */
        {"{\"sequence\":[{\"name\":\"canary\",\"selector\":{\"matchLabels\":{\"w\":\"c\"}}},"
         "{\"name\":\"early\",\"selector\":{\"matchLabels\":{\"tier\":\"gold\"}}}]}",
         "waves.sequence[0] (canary) and waves.sequence[1] (early) may select the same "
         "HostedCluster"},
        {"{\"sequence\":[{\"name\":\"canary\",\"selector\":{\"namespaces\":[\"a\",\"b\"]}},"
         "{\"name\":\"early\",\"selector\":{\"namespaces\":[\"b\"]}}]}",
         "(canary) and waves.sequence[1] (early) may select"},
        {"{\"blockedReleases\":\"4.17.2\"}", "waves.blockedReleases: must be a list"},
        {"{\"blockedReleases\":[\"4.17\"]}",
         "waves.blockedReleases[0]: \"4.17\" is not a semantic version"},
        {"{\"blockedReleases\":[\"4.17.1\",\">=4.17.5 <\"]}",
         "waves.blockedReleases[1]: \">=4.17.5 <\": a comparator without a version"},
        {"{\"blockedReleases\":[\"\"]}", "waves.blockedReleases[0]: must be a version"},
        {"{\"sequence\":[{\"name\":\"a\",\"selector\":{\"namespaces\":[\"a\"]}}],", "waves: not JSON"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        static wave_config_t cfg;
        char err[512] = "";
        json_t *j = cases[i].text[strlen(cases[i].text) - 1] == ','
                        ? json_string(cases[i].text)
                        : tu_doc(cases[i].text);
        int rc = wave_config_parse(j, &cfg, err, sizeof(err));
        json_decref(j);
        if (rc != HCP_EINVAL || !strstr(err, cases[i].want))
            fail_msg("case %zu: rc %d, \"%s\", want \"%s\"", i, rc, err, cases[i].want);
        assert_int_equal(cfg.n, 0);
    }
}

static void test_wave_of_and_blocked(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    json_t *l = tu_doc("{\"fleet/wave\":\"early\",\"other\":\"x\"}");
    assert_int_equal(wave_of(&cfg, "any", l), 1);
    json_decref(l);
    l = tu_doc("{\"fleet/wave\":\"fleet\"}");
    assert_int_equal(wave_of(&cfg, "clusters", l), 2);
    /* The right label in a namespace the wave does not name: no wave. */
    assert_int_equal(wave_of(&cfg, "elsewhere", l), WAVE_UNASSIGNED);
    json_decref(l);
    assert_int_equal(wave_of(&cfg, "clusters", NULL), WAVE_UNASSIGNED);
    assert_string_equal(wave_name(&cfg, WAVE_UNASSIGNED), "(unassigned)");
    assert_string_equal(wave_name(&cfg, 0), "canary");

    assert_non_null(wave_blocked(&cfg, "4.17.2"));
    assert_null(wave_blocked(&cfg, "4.17.3"));
    assert_null(wave_blocked(&cfg, "4.17.4"));
    assert_non_null(wave_blocked(&cfg, "4.17.5"));
    assert_non_null(wave_blocked(&cfg, "4.17.7"));
    assert_null(wave_blocked(&cfg, "4.17.8"));
    assert_null(wave_blocked(&cfg, "4.18.6"));
    assert_null(wave_blocked(&cfg, ""));
}

/* A member of wave w that completed version v at t (t 0: runs it, not
 * completed), healthy or not. */
static wave_member_t member(int w, const char *v, sched_time_t t, bool healthy)
{
    wave_member_t m;
    memset(&m, 0, sizeof(m));
    m.wave = w;
    m.opted_in = true;
    m.healthy = healthy;
    snprintf(m.running, sizeof(m.running), "%s", v);
    m.unhealthy_since = healthy ? SCHED_NEG_INF : tu_at("2030-01-03T12:00:00Z");
    if (!healthy)
        snprintf(m.why, sizeof(m.why), "Degraded is True (reason ClusterOperatorsDegraded)");
    if (t) {
        snprintf(m.done[0], sizeof(m.done[0]), "%s", v);
        m.done_at[0] = t;
        m.n_done = 1;
        snprintf(m.done[1], sizeof(m.done[1]), "4.17.0");
        m.done_at[1] = t - 30 * DAY;
        m.n_done = 2;
    }
    return m;
}

static void put(wave_index_t *ix, const char *name, const wave_member_t *m)
{
    assert_int_equal(wave_index_put(ix, WAVE_CONTROL_PLANE, "clusters", name, "", m, NULL), 0);
}

/* A wave waiting for too few completions names who it waits on: the first
 * three by name, then how many more. */
static void test_verdict_names(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    wave_index_t *ix = wave_index_new(&cfg);
    assert_non_null(ix);
    sched_time_t t0 = tu_at("2030-01-01T00:00:00Z");
    wave_verdict_t v;
    wave_member_t m;
    char n[8];

    for (int i = 5; i >= 1; i--) {
        snprintf(n, sizeof(n), "c%d", i);
        m = member(0, i == 4 ? "4.17.1" : "4.17.0", i == 4 ? t0 : 0, true);
        put(ix, n, &m);
    }
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_int_equal(v.have, 1);
    assert_int_equal(v.need, 5);
    assert_non_null(strstr(v.why, "completed on 1 of the 5 clusters it needs (not yet on "
                                  "clusters/c1, clusters/c2, clusters/c3 and 1 more)"));
    assert_true(v.since == SCHED_NEG_INF);
    wave_index_free(ix);
}

static void test_verdict(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    wave_index_t *ix = wave_index_new(&cfg);
    assert_non_null(ix);
    sched_time_t t0 = tu_at("2030-01-01T00:00:00Z");
    wave_verdict_t v;
    wave_member_t m;

    /* No canary at all: the early wave has nothing to soak on. */
    m = member(1, "4.17.0", 0, true);
    put(ix, "e1", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0, &v);
    assert_int_equal(v.state, WAVE_PASS);

    /* Two canaries: one completed 4.17.1 at t0, the other still on 4.17.0. */
    m = member(0, "4.17.1", t0, true);
    put(ix, "c1", &m);
    m = member(0, "4.17.0", 0, true);
    put(ix, "c2", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 5 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_true(v.until == SCHED_POS_INF);
    assert_int_equal(v.have, 1);
    assert_int_equal(v.need, 2);
    assert_non_null(strstr(v.why, "wave early waits for wave canary: 4.17.1 completed on 1 of "
                                  "the 2 clusters it needs (not yet on clusters/c2)"));
    /* The first wave is never sequenced. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 0, "4.17.1", t0, &v);
    assert_int_equal(v.state, WAVE_PASS);

    /* The second canary completes it a day later: soak 48h from then. */
    m = member(0, "4.17.1", t0 + DAY, true);
    put(ix, "c2", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 2 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_true(v.until == t0 + 3 * DAY);
    assert_non_null(strstr(v.why, "may go from 2030-01-04T00:00:00Z"));
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_PASS);

    /* The sums are kept: verdicts do not walk the fleet again ... */
    uint64_t sums = wave_index_sums(ix);
    for (int i = 0; i < 100; i++)
        wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(wave_index_sums(ix), sums);
    /* ... nor when a later wave changes ... */
    m = member(2, "4.16.9", 0, true);
    put(ix, "f1", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(wave_index_sums(ix), sums);
    /* ... nor when a member tells the same again. */
    bool changed = true;
    m = member(0, "4.17.1", t0 + DAY, true);
    assert_int_equal(wave_index_put(ix, WAVE_CONTROL_PLANE, "clusters", "c2", "", &m, &changed),
                     0);
    assert_false(changed);

    /* A canary running 4.17.1 turns Degraded: every later wave halts. */
    m = member(0, "4.17.1", t0, false);
    assert_int_equal(wave_index_put(ix, WAVE_CONTROL_PLANE, "clusters", "c1", "", &m, &changed),
                     0);
    assert_true(changed);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_HALTED);
    assert_non_null(strstr(v.why, "clusters/c1 of wave canary runs 4.17.1 and is unhealthy "
                                  "since 2030-01-03T12:00:00Z: Degraded is True"));
    assert_true(v.since == tu_at("2030-01-03T12:00:00Z"));
    assert_int_equal(wave_index_sums(ix), sums + 1);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, WAVE_UNASSIGNED, "4.17.1", t0 + 9 * DAY, &v);
    assert_int_equal(v.state, WAVE_HALTED);
    /* Not for another release. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.3", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    /* Healthy again: it resumes. */
    m = member(0, "4.17.1", t0, true);
    put(ix, "c1", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_PASS);

    /* The fleet wave soaks on early (minClusters 3 of 1 there: never yet);
     * the clusters no wave selects soak on the last wave, fleet. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 2, "4.17.1", t0 + 9 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_int_equal(v.need, 3);
    m = member(1, "4.17.1", t0 + 4 * DAY, true);
    put(ix, "e1", &m);
    for (int i = 2; i <= 3; i++) {
        char n[8];
        snprintf(n, sizeof(n), "e%d", i);
        m = member(1, "4.17.1", t0 + (3 + i) * DAY, true);
        put(ix, n, &m);
    }
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 2, "4.17.1", t0 + 7 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_true(v.until == t0 + 8 * DAY);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, WAVE_UNASSIGNED, "4.17.1", t0 + 9 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK); /* fleet has 1 cluster, none completed */
    assert_non_null(strstr(v.why, "wave (unassigned) waits for wave fleet"));
    m = member(2, "4.17.1", t0 + 9 * DAY, true);
    put(ix, "f1", &m);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, WAVE_UNASSIGNED, "4.17.1", t0 + 10 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK); /* minClusters 3 of fleet's, as the last wave's */
    assert_int_equal(v.need, 3);

    /* A blocked release never goes, in any wave. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 0, "4.17.6", t0, &v);
    assert_int_equal(v.state, WAVE_BLOCKED);
    assert_non_null(strstr(v.why, "release 4.17.6 is blocked for the fleet "
                                  "(waves.blockedReleases \">=4.17.5 <4.17.8\")"));
    /* A version not known cannot be sequenced after the first wave. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "", t0, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_true(v.until == SCHED_POS_INF);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 0, "", t0, &v);
    assert_int_equal(v.state, WAVE_PASS);

    /* A member removed: the canary wave has one cluster left to soak on. */
    assert_int_equal(wave_index_members(ix), 6);
    put(ix, "c2", NULL);
    assert_int_equal(wave_index_members(ix), 5);
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 2 * DAY + 1, &v);
    assert_int_equal(v.state, WAVE_PASS); /* c1 at t0 + 48h */
    wave_index_free(ix);
}

/* A NodePool's pools: a cluster counts once, when one of its pools
 * completed the release, at the first. */
static void test_pools(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    wave_index_t *ix = wave_index_new(&cfg);
    sched_time_t t0 = tu_at("2030-01-01T00:00:00Z");
    wave_verdict_t v;
    wave_member_t m = member(0, "4.17.1", t0, true);
    assert_int_equal(wave_index_put(ix, WAVE_NODEPOOL, "clusters", "c1", "p1", &m, NULL), 0);
    m = member(0, "4.17.1", t0 + DAY, true);
    assert_int_equal(wave_index_put(ix, WAVE_NODEPOOL, "clusters", "c1", "p2", &m, NULL), 0);
    m = member(0, "4.17.0", 0, true);
    assert_int_equal(wave_index_put(ix, WAVE_NODEPOOL, "clusters", "c2", "p1", &m, NULL), 0);
    wave_index_verdict(ix, WAVE_NODEPOOL, 1, "4.17.1", t0 + 9 * DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_int_equal(v.have, 1);
    assert_int_equal(v.need, 2);
    /* The control plane's verdict is its own. */
    wave_index_verdict(ix, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 9 * DAY, &v);
    assert_int_equal(v.state, WAVE_PASS);
    wave_index_free(ix);
}

typedef struct counted {
    char rows[16][160];
    int n;
} counted_t;

static void count_row(unsigned system, const char *wave, const char *release, const char *state,
                      double n, void *ud)
{
    counted_t *c = ud;
    if (c->n < 16)
        snprintf(c->rows[c->n++], sizeof(c->rows[0]), "%u %s %s %s %g", system, wave, release,
                 state, n);
}

static bool has_row(const counted_t *c, const char *row)
{
    for (int i = 0; i < c->n; i++)
        if (strcmp(c->rows[i], row) == 0)
            return true;
    return false;
}

/* The metrics' counts: by what each member runs, and by what the waves
 * hold of its held release. */
static void test_counts(void **state)
{
    (void)state;
    static wave_config_t cfg;
    parse_ok(THREE, &cfg);
    wave_index_t *ix = wave_index_new(&cfg);
    sched_time_t t0 = tu_at("2030-01-01T00:00:00Z");
    wave_member_t m = member(0, "4.17.1", t0, true);
    put(ix, "c1", &m);
    m = member(0, "4.17.1", 0, false);
    put(ix, "c2", &m);
    m = member(1, "4.17.0", t0, true);
    put(ix, "e1", &m);
    put(ix, "e2", &m);
    wave_index_note_held(ix, WAVE_CONTROL_PLANE, "clusters", "e1", "", "4.17.1", WAVE_HALTED);
    wave_index_note_held(ix, WAVE_CONTROL_PLANE, "clusters", "e2", "", "4.17.1", WAVE_HALTED);
    wave_index_note_held(ix, WAVE_CONTROL_PLANE, "clusters", "nope", "", "4.17.1", WAVE_HALTED);
    counted_t c = {0};
    wave_index_counts(ix, count_row, &c);
    assert_int_equal(c.n, 4);
    assert_true(has_row(&c, "0 canary 4.17.1 Completed 1"));
    assert_true(has_row(&c, "0 canary 4.17.1 Unhealthy 1"));
    assert_true(has_row(&c, "0 early 4.17.0 Completed 2"));
    assert_true(has_row(&c, "0 early 4.17.1 WaveHalted 2"));
    /* Let through: no longer held. */
    wave_index_note_held(ix, WAVE_CONTROL_PLANE, "clusters", "e2", "", "4.17.1", WAVE_PASS);
    memset(&c, 0, sizeof(c));
    wave_index_counts(ix, count_row, &c);
    assert_true(has_row(&c, "0 early 4.17.1 WaveHalted 1"));
    wave_index_free(ix);
}

static void test_member_hc(void **state)
{
    (void)state;
    json_t *j = tu_doc(
        "{\"status\":{\"conditions\":[{\"type\":\"Available\",\"status\":\"True\"},"
        "{\"type\":\"Degraded\",\"status\":\"False\"}],"
        "\"version\":{\"history\":["
        "{\"version\":\"4.17.2\",\"state\":\"Partial\"},"
        "{\"version\":\"4.17.1\",\"state\":\"Completed\","
        "\"completionTime\":\"2030-01-02T03:04:05Z\"},"
        "{\"version\":\"4.17.0\",\"state\":\"Completed\"}]}}}");
    decide_health_t h;
    decide_health_extract(j, false, &h);
    assert_true(h.partial);
    wave_member_t m;
    wave_member_hc(j, &h, 1, true, &m);
    assert_true(m.healthy); /* an update under way is no ill health */
    assert_string_equal(m.running, "4.17.2");
    assert_int_equal(m.n_done, 1); /* 4.17.0 has no completionTime */
    assert_string_equal(m.done[0], "4.17.1");
    assert_true(m.done_at[0] == tu_at("2030-01-02T03:04:05Z"));
    json_decref(j);
}

static void test_apply(void **state)
{
    (void)state;
    decide_decision_t d;
    decide_health_t h;
    stanza_t st;
    wave_verdict_t v;
    sched_time_t now = tu_at("2030-01-05T00:00:00Z");

    memset(&h, 0, sizeof(h));
    memset(&st, 0, sizeof(st));
    memset(&v, 0, sizeof(v));
    v.state = WAVE_SOAK;
    v.until = now + 3600;
    snprintf(v.why, sizeof(v.why), "wave early waits for wave canary to soak");

    memset(&d, 0, sizeof(d));
    d.wake = now + DAY;
    assert_true(decide_wave_apply(&d, false, &h, &v, &st, true, NULL, true, now));
    assert_true(d.restricted);
    assert_string_equal(d.paused_reason, "WaitingForSoak");
    assert_string_equal(d.pending_reason, "WaitingForSoak");
    assert_int_equal(d.pending_metric, 2);
    assert_true(d.wake == now + 3600);
    assert_non_null(strstr(d.paused_message, "wave early waits for wave canary to soak"));

    /* Nothing held: nothing to do, but the verdict is kept. */
    memset(&d, 0, sizeof(d));
    assert_false(decide_wave_apply(&d, false, &h, &v, &st, false, NULL, true, now));
    assert_false(d.restricted);
    assert_int_equal(d.wave.state, WAVE_SOAK);

    /* An override in force passes the soak, and says so ... */
    st.present = true;
    st.valid = true;
    st.strategy = STANZA_PERMISSIVE_UNTIL;
    st.has_permissive_until = true;
    st.permissive_until = now + 600;
    memset(&d, 0, sizeof(d));
    assert_false(decide_wave_apply(&d, false, &h, &v, &st, true, NULL, true, now));
    assert_false(d.restricted);
    assert_true(d.wave_skipped);
    /* ... a halt too ... */
    v.state = WAVE_HALTED;
    memset(&d, 0, sizeof(d));
    assert_false(decide_wave_apply(&d, false, &h, &v, &st, true, NULL, true, now));
    assert_true(d.wave_skipped);
    /* ... never a blocked release; nor an override that ended. */
    v.state = WAVE_BLOCKED;
    memset(&d, 0, sizeof(d));
    assert_true(decide_wave_apply(&d, false, &h, &v, &st, true, NULL, true, now));
    assert_string_equal(d.paused_reason, "ReleaseBlocked");
    v.state = WAVE_HALTED;
    memset(&d, 0, sizeof(d));
    assert_true(decide_wave_apply(&d, false, &h, &v, &st, true, NULL, true, now + 600));
    assert_string_equal(d.paused_reason, "WaveHalted");
    assert_false(d.wave_skipped);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_wave_of_and_blocked),
        cmocka_unit_test(test_verdict),
        cmocka_unit_test(test_verdict_names),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_member_hc),
        cmocka_unit_test(test_apply),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
