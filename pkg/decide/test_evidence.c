/* test_evidence.c: the release waves' evidence across management clusters
 * (evidence.h): what one publishes, another reads as more clusters of the
 * waves; bad documents are refused whole, naming the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/evidence.h"
#include "decide/testutil_decide.h"

#define DAY 86400

/* Two waves; each management cluster names itself. */
static void config(const char *me, wave_config_t *cfg)
{
    char text[1024], err[256] = "";
    snprintf(text, sizeof(text),
             "{\"sequence\":["
             "{\"name\":\"canary\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"canary\"}}},"
             "{\"name\":\"early\",\"selector\":{\"matchLabels\":{\"fleet/wave\":\"early\"}},"
             "\"soak\":\"48h\"}],"
             "\"evidence\":{\"name\":\"%s\",\"namespace\":\"hcp-system\"}}",
             me);
    json_t *j = tu_doc(text);
    int rc = wave_config_parse(j, cfg, err, sizeof(err));
    json_decref(j);
    if (rc)
        fail_msg("refused: %s", err);
}

static wave_member_t canary(const char *v, sched_time_t done, bool healthy, sched_time_t since)
{
    wave_member_t m;
    memset(&m, 0, sizeof(m));
    m.wave = 0;
    m.opted_in = true;
    m.healthy = healthy;
    m.unhealthy_since = healthy ? SCHED_NEG_INF : since;
    if (!healthy)
        snprintf(m.why, sizeof(m.why), "Degraded is True (reason ClusterOperatorsDegraded)");
    snprintf(m.running, sizeof(m.running), "%s", v);
    if (done) {
        snprintf(m.done[0], sizeof(m.done[0]), "%s", v);
        m.done_at[0] = done;
        m.n_done = 1;
    }
    return m;
}

static void into(unsigned system, const char *ns, const char *cluster, const char *id,
                 const wave_member_t *m, void *ud)
{
    assert_int_equal(wave_index_put(ud, system, ns, cluster, id, m, NULL), 0);
}

/* What management cluster a publishes (its own members only), b reads:
 * a canary of a that completed 4.17.1 lets b's early wave go after the
 * soak, and a canary of a turned Degraded halts it. */
static void test_round_trip(void **state)
{
    (void)state;
    static wave_config_t ca, cb;
    config("mc-a", &ca);
    config("mc-b", &cb);
    wave_index_t *a = wave_index_new(&ca), *b = wave_index_new(&cb);
    sched_time_t t0 = tu_at("2030-01-07T08:00:00Z");
    wave_verdict_t v;
    size_t bytes;
    char err[256];

    wave_member_t m = canary("4.17.1", t0, true, 0);
    assert_int_equal(wave_index_put(a, WAVE_CONTROL_PLANE, "clusters", "canary-1", "", &m, NULL),
                     0);
    m.wave = WAVE_UNASSIGNED; /* no wave: published, not read */
    assert_int_equal(wave_index_put(a, WAVE_CONTROL_PLANE, "clusters", "other", "", &m, NULL),
                     0);
    json_t *cm = wave_evidence_configmap(a, &bytes);
    assert_non_null(cm);
    assert_true(bytes > 0);
    assert_string_equal(json_string_value(hcp_json_path(cm, "metadata.name")),
                        "hcp-wave-evidence-mc-a");
    assert_string_equal(json_string_value(hcp_json_path(cm, "metadata.namespace")), "hcp-system");
    const char *text = json_string_value(json_object_get(hcp_json_path(cm, "data"),
                                                         WAVE_EVIDENCE_KEY));
    assert_non_null(strstr(text, "\"cluster\":\"clusters/canary-1\""));
    assert_non_null(strstr(text, "{\"version\":\"4.17.1\",\"at\":\"2030-01-07T08:00:00Z\"}"));

    /* the same index gives the same bytes */
    json_t *again = wave_evidence_configmap(a, NULL);
    assert_true(json_equal(cm, again));
    json_decref(again);

    /* a reads its own: nothing */
    assert_int_equal(wave_evidence_read(cm, &ca, into, a, err, sizeof(err)), 0);
    /* b reads a's: the canary, not the cluster in no wave */
    assert_int_equal(wave_evidence_read(cm, &cb, into, b, err, sizeof(err)), 1);
    assert_int_equal(wave_index_members(b), 1);
    m = canary("4.17.0", 0, true, 0);
    m.wave = 1;
    assert_int_equal(wave_index_put(b, WAVE_CONTROL_PLANE, "clusters", "early-1", "", &m, NULL),
                     0);
    wave_index_verdict(b, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + DAY, &v);
    assert_int_equal(v.state, WAVE_SOAK);
    assert_true(v.until == t0 + 2 * DAY);
    wave_index_verdict(b, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 2 * DAY, &v);
    assert_int_equal(v.state, WAVE_PASS);
    /* b publishes only its own cluster, not a's */
    json_t *bcm = wave_evidence_configmap(b, NULL);
    const char *btext = json_string_value(json_object_get(hcp_json_path(bcm, "data"),
                                                          WAVE_EVIDENCE_KEY));
    assert_non_null(strstr(btext, "clusters/early-1"));
    assert_null(strstr(btext, "canary-1"));
    json_decref(bcm);
    json_decref(cm);

    /* a's canary turns Degraded: b's early wave halts, naming it */
    m = canary("4.17.1", t0, false, t0 + DAY);
    assert_int_equal(wave_index_put(a, WAVE_CONTROL_PLANE, "clusters", "canary-1", "", &m, NULL),
                     0);
    cm = wave_evidence_configmap(a, NULL);
    uint32_t round = wave_index_round(b);
    assert_int_equal(wave_evidence_read(cm, &cb, into, b, err, sizeof(err)), 1);
    int low;
    assert_int_equal(wave_index_sweep(b, "mc-a:", round, &low), 0);
    wave_index_verdict(b, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_HALTED);
    assert_non_null(strstr(v.why, "mc-a:clusters/canary-1 of wave canary runs 4.17.1 and is "
                                  "unhealthy since 2030-01-08T08:00:00Z"));
    assert_true(v.since == t0 + DAY);
    json_decref(cm);

    /* a publishes nothing any more (its canary went): the sweep removes it */
    round = wave_index_round(b);
    assert_int_equal(wave_index_sweep(b, "mc-a:", round, &low), 1);
    assert_int_equal(low, 0);
    assert_int_equal(wave_index_members(b), 1); /* b's own early-1 stays */
    wave_index_verdict(b, WAVE_CONTROL_PLANE, 1, "4.17.1", t0 + 3 * DAY, &v);
    assert_int_equal(v.state, WAVE_PASS); /* no canary left: nothing to soak on */
    wave_index_free(a);
    wave_index_free(b);
}

/* The reader refuses a bad document whole, naming the field. */
static void refused(const char *label, const char *text, const char *want)
{
    static wave_config_t cb;
    char doc[4096], err[512] = "";
    config("mc-b", &cb);
    json_t *data = json_string(text);
    snprintf(doc, sizeof(doc), "{\"metadata\":{\"labels\":{\"%s\":\"%s\"}}}",
             WAVE_EVIDENCE_LABEL, label);
    json_t *cm = tu_doc(doc);
    json_object_set_new(cm, "data", json_pack("{s:o}", WAVE_EVIDENCE_KEY, data));
    wave_index_t *b = wave_index_new(&cb);
    long n = wave_evidence_read(cm, &cb, into, b, err, sizeof(err));
    if (n != -1 || !strstr(err, want))
        fail_msg("%s: got %ld \"%s\", want -1 \"%s\"", text, n, err, want);
    assert_int_equal(wave_index_members(b), 0); /* nothing handed over */
    wave_index_free(b);
    json_decref(cm);
}

#define M(x)                                                                                       \
    "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"clusters/c1\"," \
    "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":true,\"why\":\"\","          \
    "\"unhealthySince\":null,\"running\":\"4.17.1\",\"completed\":[]}" x "]}"

static void test_refused(void **state)
{
    (void)state;
    refused("mc-a", "{", "evidence.json: not JSON");
    refused("MC_A", M(""), "label " WAVE_EVIDENCE_LABEL ": must name the management cluster");
    refused("mc-x", M(""), "source \"mc-x\", as its label says");
    refused("mc-a", "{\"source\":\"mc-a\",\"members\":{}}", "members: must be a list");
    /* the second member is bad: the first is not handed over either */
    refused("mc-a", M(",{\"system\":\"ControlPlane\",\"replicas\":3}"),
            "members[1]: unknown key \"replicas\"");
    refused("mc-a", M(",{\"system\":\"Machine\",\"cluster\":\"a/b\"}"),
            "members[1]: system must be ControlPlane or NodePool");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"NodePool\",\"cluster\":\"clusters/c1"
            "\",\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":true,\"why\":\"\","
            "\"unhealthySince\":null,\"running\":\"4.17.1\",\"completed\":[]}]}",
            "members[0]: pool must name the NodePool");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"c1\","
            "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":true,\"why\":\"\","
            "\"unhealthySince\":null,\"running\":\"4.17.1\",\"completed\":[]}]}",
            "members[0]: cluster must be \"namespace/name\"");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"a/c1\","
            "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":true,\"why\":\"\","
            "\"unhealthySince\":null,\"running\":\"4.17.1\",\"completed\":[{\"version\":\"4.17.1"
            "\",\"at\":\"yesterday\"}]}]}",
            "members[0].completed[0]: must be {version, at: RFC 3339}");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"a/c1\","
            "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":false,\"why\":\"x\","
            "\"unhealthySince\":\"soon\",\"running\":\"4.17.1\",\"completed\":[]}]}",
            "members[0]: unhealthySince must be an RFC 3339 instant or null");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"a/c1\","
            "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":1,\"healthy\":true,\"why\":\"\","
            "\"unhealthySince\":null,\"running\":\"4.17.1\",\"completed\":[]}]}",
            "members[0]: optedIn and healthy must be true or false");
    refused("mc-a",
            "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\",\"cluster\":\"a/c1\","
            "\"pool\":\"\",\"wave\":\"canary\",\"optedIn\":true,\"healthy\":true,\"why\":\"\","
            "\"unhealthySince\":null,\"running\":\"4.17.1;rm\",\"completed\":[]}]}",
            "members[0]: running must be a version");
}

/* A wave the reader does not know is ignored (the fleet names its waves
 * alike everywhere); the evidence key needs a sequence and a name. */
static void test_unknown_wave_and_config(void **state)
{
    (void)state;
    static wave_config_t cb;
    char err[256];
    config("mc-b", &cb);
    json_t *cm = tu_doc("{\"metadata\":{\"labels\":{\"" WAVE_EVIDENCE_LABEL "\":\"mc-a\"}}}");
    json_object_set_new(cm, "data",
                        json_pack("{s:s}", WAVE_EVIDENCE_KEY,
                                  "{\"source\":\"mc-a\",\"members\":[{\"system\":\"ControlPlane\","
                                  "\"cluster\":\"a/c1\",\"pool\":\"\",\"wave\":\"pilot\","
                                  "\"optedIn\":true,\"healthy\":true,\"why\":\"\","
                                  "\"unhealthySince\":null,\"running\":\"4.17.1\","
                                  "\"completed\":[]}]}"));
    wave_index_t *b = wave_index_new(&cb);
    assert_int_equal(wave_evidence_read(cm, &cb, into, b, err, sizeof(err)), 0);
    assert_int_equal(wave_index_members(b), 0);
    wave_index_free(b);
    json_decref(cm);

    static const char *const bad[][2] = {
        {"{\"blockedReleases\":[\"4.17.2\"],\"evidence\":{\"name\":\"a\",\"namespace\":\"x\"}}",
         "waves.evidence: needs waves.sequence"},
        {"{\"sequence\":[{\"name\":\"c\",\"selector\":{\"namespaces\":[\"a\"]}}],"
         "\"evidence\":{\"namespace\":\"x\"}}",
         "waves.evidence.name"},
        {"{\"sequence\":[{\"name\":\"c\",\"selector\":{\"namespaces\":[\"a\"]}}],"
         "\"evidence\":{\"name\":\"Mc\",\"namespace\":\"x\"}}",
         "waves.evidence.name: \"Mc\" must be at most 40 lower case letters"},
        {"{\"sequence\":[{\"name\":\"c\",\"selector\":{\"namespaces\":[\"a\"]}}],"
         "\"evidence\":{\"name\":\"mc\",\"namespace\":\"x\",\"hub\":1}}",
         "waves.evidence"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        wave_config_t c;
        json_t *j = tu_doc(bad[i][0]);
        assert_int_equal(wave_config_parse(j, &c, err, sizeof(err)), HCP_EINVAL);
        json_decref(j);
        if (!strstr(err, bad[i][1]))
            fail_msg("%s: \"%s\" does not say \"%s\"", bad[i][0], err, bad[i][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_unknown_wave_and_config),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
