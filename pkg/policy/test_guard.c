/* Tests of pkg/policy/guard: the guard rails' configuration and their
 * evaluation on effective schedules, each limit just inside and just
 * outside. Test JSON is single-quoted; tu_json() reads it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/guard.h"
#include "policy/policy.h"
#include "policy/testutil_policy.h"
#include "schedule/testutil_sched.h"

#define H 3600
#define D 86400

#define MS(ms)                                                                             \
    "{'apiVersion':'changemanagement.hypershift.openshift.io/v1alpha1',"                  \
    "'kind':'HostedChangeManagementPolicy','metadata':{'name':'p','namespace':'ns'},"     \
    "'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':" ms "}}"

static policy_t *pol(const char *text)
{
    json_t *doc = tu_json(text);
    char err[POLICY_ERRLEN];
    policy_t *p = NULL;

    if (policy_parse(doc, tu_ts("2026-11-23T00:00:00Z"), &p, err, sizeof err) != 0)
        fail_msg("policy: %s", err);
    json_decref(doc);
    return p;
}

static guard_config_t config(const char *text)
{
    json_t *doc = tu_json(text);
    char err[512];
    guard_config_t cfg;

    if (guard_config_parse(doc, &cfg, err, sizeof err) != 0)
        fail_msg("config: %s", err);
    json_decref(doc);
    return cfg;
}

/* Checks one policy at now; returns the verdict. */
static guard_verdict_t check(const guard_config_t *cfg, const char *policy, const char *now)
{
    policy_t *p = pol(policy);
    const policy_t *ps[1] = {p};
    guard_input_t in = {.effective = p->sched, .policies = ps, .n_policies = 1};
    guard_verdict_t v;

    assert_int_equal(guard_check(cfg, &in, tu_ts(now), &v), 0);
    policy_free(p);
    return v;
}

static void bad_config(const char *text, const char *want)
{
    json_t *doc = tu_json(text);
    char err[512] = "";
    guard_config_t cfg;

    assert_int_equal(guard_config_parse(doc, &cfg, err, sizeof err), HCP_EINVAL);
    if (strstr(err, want) == NULL)
        fail_msg("error \"%s\" does not contain \"%s\"", err, want);
    json_decref(doc);
}

static void test_config_configmap(void **state)
{
    (void)state;
    guard_config_t c = config(
        "{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'g'},'data':{"
        "'minPermittedTime':'48h','rollingPeriod':'32d','minBlockLength':'4h',"
        "'maxExclusionLength':'30d','maxRestrictiveUntil':'1d12h',"
        "'exemptNamespaces':'sre, ops-*','exemptUsers':'alice'}}");
    assert_int_equal(c.min_permitted, 48 * H);
    assert_int_equal(c.period, 32 * D);
    assert_int_equal(c.min_block, 4 * H);
    assert_int_equal(c.max_exclusion, 30 * D);
    assert_int_equal(c.max_restrictive, 36 * H);
    assert_int_equal(c.n_exempt_ns, 2);
    assert_true(guard_exempt(&c, "sre", NULL, NULL, 0));
    assert_true(guard_exempt(&c, "ops-eu", NULL, NULL, 0));
    assert_false(guard_exempt(&c, "sre2", NULL, NULL, 0));
    assert_false(guard_exempt(&c, "clusters", "bob", NULL, 0));
    assert_true(guard_exempt(&c, "clusters", "alice", NULL, 0));
    assert_false(guard_enforced(&(guard_config_t){0}));
    assert_true(guard_enforced(&c));
}

/* Groups of the requester (AdmissionReview userInfo.groups) exempt too. */
static void test_config_groups(void **state)
{
    (void)state;
    guard_config_t c = config("{'maxExclusionLength':'30d','exemptGroups':'sre-*, system:masters'}");
    const char *const sre[] = {"system:authenticated", "sre-admins"};
    const char *const dev[] = {"system:authenticated", "developers"};
    assert_int_equal(c.n_exempt_groups, 2);
    assert_true(guard_exempt(&c, "clusters", "bob", sre, 2));
    assert_false(guard_exempt(&c, "clusters", "bob", dev, 2));
    assert_false(guard_exempt(&c, "clusters", "bob", sre, 1));
    bad_config("{'exemptGroups':7}", "exemptGroups");
}

static void test_config_plain(void **state)
{
    (void)state;
    guard_config_t c = config("{'maxExclusionLength':'90m','exemptUsers':['a','b']}");
    assert_int_equal(c.max_exclusion, 90 * 60);
    assert_int_equal(c.min_permitted, 0);
    assert_int_equal(c.n_exempt_users, 2);
    c = config("{'kind':'ConfigMap'}");
    assert_int_equal(c.max_exclusion, 0);
    /* The same file carries the notifications (notify_config_parse()
     * reads them); the guard rails neither refuse nor read the key. */
    c = config("{'kind':'ConfigMap','data':{'maxExclusionLength':'2h',"
               "'notifications':'endpoints: []'}}");
    assert_int_equal(c.max_exclusion, 2 * 60 * 60);
}

static void test_config_bad(void **state)
{
    (void)state;
    bad_config("{'minPermitedTime':'48h'}", "minPermitedTime");
    bad_config("{'minPermittedTime':'48h'}", "rollingPeriod: required");
    bad_config("{'minPermittedTime':'48h','rollingPeriod':'1d'}", "minPermittedTime: longer");
    bad_config("{'maxExclusionLength':'30'}", "maxExclusionLength: \"30\" is not a duration");
    bad_config("{'maxExclusionLength':'1h1d'}", "maxExclusionLength: \"1h1d\"");
    bad_config("{'maxExclusionLength':30}", "maxExclusionLength: must be a duration");
    bad_config("{'maxExclusionLength':'99999d'}", "longer than 3660d");
    bad_config("{'exemptUsers':[3]}", "exemptUsers[0]");
    bad_config("{'kind':'Secret'}", "kind: must be ConfigMap");
    bad_config("[]", "must be a mapping");
    bad_config("{'afterChangeSettle':'30s'}", "afterChangeSettle: must be from 1m to 168h");
    bad_config("{'afterChangeSettle':'8d'}", "afterChangeSettle: must be from 1m to 168h");
    bad_config("{'afterChangeSettle':'20m','afterChangeGrace':'21m'}",
               "afterChangeGrace: longer than afterChangeSettle (1200s)");
    bad_config("{'afterChangeGrace':'31m'}", "afterChangeGrace: longer than afterChangeSettle");
    bad_config("{'afterChangeGrace':10}", "afterChangeGrace: must be a duration");
    /* DESIGN.md 3.15: the settle and grace times of the health after a change */
    guard_config_t c = config("{'afterChangeSettle':'1h','afterChangeGrace':'5m'}");
    assert_int_equal(c.after_settle, 3600);
    assert_int_equal(c.after_grace, 300);
    c = config("{}");
    assert_int_equal(c.after_settle, 0); /* the defaults: 30m, 10m */
    assert_int_equal(c.after_grace, 0);
    /* holdAgeWarning: absent the default (0, 30 days), "0" none, else at
     * least an hour; not a limit: nothing is enforced by it */
    assert_int_equal(c.hold_age_warning, 0);
    c = config("{'holdAgeWarning':'14d'}");
    assert_int_equal(c.hold_age_warning, 14 * 86400);
    assert_false(guard_enforced(&c));
    c = config("{'holdAgeWarning':'0'}");
    assert_true(c.hold_age_warning < 0);
    bad_config("{'holdAgeWarning':'30m'}", "holdAgeWarning: must be 0 (no warning) or at least 1h");
    bad_config("{'holdAgeWarning':'a month'}", "holdAgeWarning");
    bad_config("{'holdAgeWarning':30}", "holdAgeWarning: must be a duration");
    /* maxNodePoolSkew: absent HyperShift's, else 0 to 9 minors, text or number */
    c = config("{}");
    assert_false(c.has_max_skew);
    c = config("{'maxNodePoolSkew':'2'}");
    assert_true(c.has_max_skew);
    assert_int_equal(c.max_skew, 2);
    c = config("{'maxNodePoolSkew':0}");
    assert_true(c.has_max_skew);
    assert_int_equal(c.max_skew, 0);
    assert_false(guard_enforced(&c));
    bad_config("{'maxNodePoolSkew':'10'}", "maxNodePoolSkew: must be a number of minor versions from 0 to 9");
    bad_config("{'maxNodePoolSkew':-1}", "maxNodePoolSkew: must be a number");
    bad_config("{'maxNodePoolSkew':'two'}", "maxNodePoolSkew: must be a number");
    bad_config("{'maxNodePoolSkew':true}", "maxNodePoolSkew: must be a number");
}

#define SAT_SUN(dur) MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA,SU','duration':'" dur "'}}")
#define NOW "2026-11-23T10:00:00Z"

/* Any 7 days of a weekly pattern hold exactly one week's windows: 2 x 4h. */
static void test_min_permitted_edges(void **state)
{
    (void)state;
    guard_config_t c = config("{'minPermittedTime':'8h','rollingPeriod':'7d',"
                              "'minBlockLength':'4h'}");
    guard_verdict_t v = check(&c, SAT_SUN("4h"), NOW);
    assert_true(v.allowed); /* exactly the minimum, blocks exactly long enough */
    assert_int_equal(v.least_permitted, 8 * H);

    c.min_permitted = 8 * H + 60; /* one minute more than any week gives */
    v = check(&c, SAT_SUN("4h"), NOW);
    assert_false(v.allowed);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].rule, GUARD_RULE_MIN_PERMITTED);
    assert_int_equal(v.v[0].by, 60);
    assert_int_equal(v.v[0].period_start, tu_ts(NOW));
    assert_non_null(strstr(v.v[0].message, "minPermittedTime: the 7d from 2026-11-23T10:00:00Z"));
    assert_non_null(strstr(v.v[0].message, "1m short of the 8h 1m required"));

    c.min_permitted = 8 * H;
    c.min_block = 4 * H + 1; /* the 4h blocks no longer count */
    v = check(&c, SAT_SUN("4h"), NOW);
    assert_false(v.allowed);
    assert_int_equal(v.v[0].by, 8 * H);
    assert_int_equal(v.least_permitted, 0);
    assert_non_null(strstr(v.v[0].message, "in blocks of at least 4h 1s"));
}

/* The first period that falls short, and by how much: daily 8h windows,
 * five excluded days from 2027-03-01. */
static void test_min_permitted_first_period(void **state)
{
    (void)state;
    guard_config_t c = config("{'minPermittedTime':'48h','rollingPeriod':'7d'}");
    guard_verdict_t v = check(&c,
                              MS("{'permit':{'rrule':'FREQ=DAILY','duration':'8h'},'exclude':"
                                 "[{'fromDate':'2027-03-01','untilDate':'2027-03-06'}]}"),
                              NOW);
    assert_false(v.allowed);
    assert_int_equal(v.v[0].period_start, tu_ts("2027-02-23T08:00:00Z"));
    assert_int_equal(v.v[0].period_end, tu_ts("2027-03-02T08:00:00Z"));
    assert_int_equal(v.v[0].by, 8 * H);
    assert_int_equal(v.least_permitted, 16 * H); /* Feb 27 08:00 .. Mar 6 08:00 */
    /* without the exclusion, 56h in every week */
    v = check(&c, MS("{'permit':{'rrule':'FREQ=DAILY','duration':'8h'}}"), NOW);
    assert_true(v.allowed);
    assert_int_equal(v.least_permitted, 56 * H);
}

/* The period is the whole horizon when it is longer than 12 months. */
static void test_min_permitted_constants(void **state)
{
    (void)state;
    guard_config_t c = config("{'minPermittedTime':'1h','rollingPeriod':'400d'}");
    guard_verdict_t v = check(&c, MS("{'exclude':[{'fromDate':'2020-01-01'}]}"), NOW);
    assert_true(v.allowed); /* permitted always (outside a past exclusion) */
    assert_int_equal(v.least_permitted, GUARD_HORIZON);
    v = check(&c, MS("{}"), NOW); /* no permit, no exclusion: never */
    assert_false(v.allowed);
    assert_int_equal(v.least_permitted, 0);
    assert_int_equal(v.v[0].period_end - v.v[0].period_start, GUARD_HORIZON);
}

/* A NodePool is judged on its intersection with its HostedCluster. */
static void test_effective_intersection(void **state)
{
    (void)state;
    guard_config_t c = config("{'minPermittedTime':'4h','rollingPeriod':'7d',"
                              "'minBlockLength':'4h'}");
    policy_t *hc = pol(MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA','duration':'8h'}}"));
    policy_t *np = pol(MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA','startTime':'05:00',"
                          "'duration':'8h'}}"));
    const policy_t *ps[2] = {hc, np};
    sched_t *both = sched_and(hc->sched, np->sched);
    guard_input_t in = {.effective = hc->sched, .policies = ps, .n_policies = 2};
    guard_verdict_t v;

    assert_int_equal(guard_check(&c, &in, tu_ts(NOW), &v), 0);
    assert_true(v.allowed); /* the cluster alone: 8h blocks */
    in.effective = both;    /* Saturdays 05:00-08:00: 3h blocks do not count */
    assert_int_equal(guard_check(&c, &in, tu_ts(NOW), &v), 0);
    assert_false(v.allowed);
    assert_int_equal(v.v[0].by, 4 * H);
    sched_unref(both);
    policy_free(hc);
    policy_free(np);
}

static void test_max_exclusion_edges(void **state)
{
    (void)state;
    guard_config_t c = config("{'maxExclusionLength':'30d'}");
    guard_verdict_t v = check(
        &c, MS("{'exclude':[{'fromDate':'2026-12-01','untilDate':'2026-12-31'}]}"), NOW);
    assert_true(v.allowed); /* exactly 30 days */
    v = check(&c,
              MS("{'exclude':[{'fromDate':'2026-12-01','untilDate':'2026-12-31'},"
                 "{'fromDate':'2027-01-10','untilDate':'2027-02-10','reason':'freeze'}]}"),
              NOW);
    assert_false(v.allowed); /* 31 days */
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].rule, GUARD_RULE_MAX_EXCLUSION);
    assert_int_equal(v.v[0].by, D);
    assert_int_equal(v.v[0].period_start, tu_ts("2027-01-10T00:00:00Z"));
    assert_string_equal(v.v[0].message,
                        "maxExclusionLength: policy ns/p spec.maintenanceSchedule.exclude[1] "
                        "(2027-01-10T00:00:00Z to 2027-02-10T00:00:00Z, reason \"freeze\") is "
                        "31d long, 1d more than the 30d allowed");
    /* an exclusion over before now is history, not a setting */
    v = check(&c, MS("{'exclude':[{'fromDate':'2026-01-01','untilDate':'2026-11-23'}]}"), NOW);
    assert_true(v.allowed);
    /* local dates: a day in Europe/Berlin starts at 23:00Z */
    v = check(&c,
              MS("{'timeZone':'Europe/Berlin','exclude':[{'fromDate':'2027-01-01',"
                 "'untilDate':'2027-02-01'}]}"),
              NOW);
    assert_false(v.allowed);
    assert_int_equal(v.v[0].period_start, tu_ts("2026-12-31T23:00:00Z"));
}

static void test_max_restrictive_edges(void **state)
{
    (void)state;
    guard_config_t c = config("{'maxRestrictiveUntil':'90d'}");
    guard_input_t in = {.has_restrictive_until = 1};
    sched_time_t now = tu_ts(NOW);
    guard_verdict_t v;

    in.restrictive_until = now + 90 * D;
    assert_int_equal(guard_check(&c, &in, now, &v), 0);
    assert_true(v.allowed);
    in.restrictive_until = now + 90 * D + 1;
    assert_int_equal(guard_check(&c, &in, now, &v), 0);
    assert_false(v.allowed);
    assert_int_equal(v.v[0].rule, GUARD_RULE_MAX_RESTRICTIVE);
    assert_int_equal(v.v[0].by, 1);
    assert_string_equal(v.v[0].message, "maxRestrictiveUntil: restrictiveUntil "
                                        "2027-02-21T10:00:01Z is 1s later than the 90d from "
                                        "now allowed");
    in.has_restrictive_until = 0;
    assert_int_equal(guard_check(&c, &in, now, &v), 0);
    assert_true(v.allowed);
}

/* minTimeLeft: refused when no window of the next 12 months is that long,
 * naming the key, the longest window and by how much it falls short;
 * accepted when one is (exactly as long counts). */
static void test_min_time_left(void **state)
{
    (void)state;
    guard_config_t c = config("{'minTimeLeft':'2h'}");
    guard_verdict_t v;

    v = check(&c, MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA','duration':'1h'}}"), NOW);
    assert_false(v.allowed);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.v[0].rule, GUARD_RULE_MIN_TIME_LEFT);
    assert_int_equal(v.v[0].by, 3600);
    assert_string_equal(guard_rule_name(v.v[0].rule), "minTimeLeft");
    assert_string_equal(v.v[0].message,
                        "minTimeLeft: a change starts only with 2h of its window left, but the "
                        "longest window over the next 12 months is 1h (1h short): no change "
                        "could ever start");
    v = check(&c, MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA','duration':'2h'}}"), NOW);
    assert_true(v.allowed);
    /* Several short windows do not add up. */
    v = check(&c, MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA,SU','duration':'1h'},"
                     "'exclude':[{'fromDate':'2027-06-01','untilDate':'2027-06-02'}]}"),
              NOW);
    assert_false(v.allowed);
    assert_int_equal(guard_enforced(&c), 1);
}

/* Every rule at once, in rule order; a zero limit enforces nothing. */
static void test_all_rules(void **state)
{
    (void)state;
    guard_config_t c = config("{'minPermittedTime':'48h','rollingPeriod':'32d',"
                              "'minBlockLength':'4h','maxExclusionLength':'30d',"
                              "'maxRestrictiveUntil':'1d'}");
    policy_t *p = pol(MS("{'permit':{'rrule':'FREQ=WEEKLY;BYDAY=SA','duration':'4h'},"
                         "'exclude':[{'fromDate':'2027-06-01','untilDate':'2027-08-01'}]}"));
    const policy_t *ps[1] = {p};
    guard_input_t in = {.effective = p->sched, .policies = ps, .n_policies = 1,
                        .has_restrictive_until = 1,
                        .restrictive_until = tu_ts(NOW) + 2 * D};
    guard_config_t none;
    guard_verdict_t v;

    assert_int_equal(guard_check(&c, &in, tu_ts(NOW), &v), 0);
    assert_int_equal(v.n, 3);
    assert_int_equal(v.v[0].rule, GUARD_RULE_MIN_PERMITTED);
    assert_int_equal(v.v[1].rule, GUARD_RULE_MAX_EXCLUSION);
    assert_int_equal(v.v[2].rule, GUARD_RULE_MAX_RESTRICTIVE);
    assert_string_equal(guard_rule_name(v.v[1].rule), "maxExclusionLength");
    memset(&none, 0, sizeof none);
    assert_int_equal(guard_check(&none, &in, tu_ts(NOW), &v), 0);
    assert_true(v.allowed);
    policy_free(p);
}

static void test_durations(void **state)
{
    sched_time_t t;
    char buf[48];

    (void)state;
    assert_int_equal(guard_duration_parse("1d12h30m5s", "x", &t, NULL, 0), 0);
    assert_int_equal(t, D + 12 * H + 30 * 60 + 5);
    assert_int_equal(guard_duration_parse("0", "x", &t, NULL, 0), 0);
    assert_int_equal(t, 0);
    assert_int_equal(guard_duration_parse("", "x", &t, NULL, 0), HCP_EINVAL);
    assert_int_equal(guard_duration_parse("h", "x", &t, NULL, 0), HCP_EINVAL);
    assert_int_equal(guard_duration_parse("4hh", "x", &t, NULL, 0), HCP_EINVAL);
    assert_int_equal(guard_duration_parse("-4h", "x", &t, NULL, 0), HCP_EINVAL);
    guard_format_duration(D + 60, buf, sizeof buf);
    assert_string_equal(buf, "1d 1m");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_configmap),
        cmocka_unit_test(test_config_plain),
        cmocka_unit_test(test_config_groups),
        cmocka_unit_test(test_config_bad),
        cmocka_unit_test(test_min_permitted_edges),
        cmocka_unit_test(test_min_permitted_first_period),
        cmocka_unit_test(test_min_permitted_constants),
        cmocka_unit_test(test_effective_intersection),
        cmocka_unit_test(test_max_exclusion_edges),
        cmocka_unit_test(test_max_restrictive_edges),
        cmocka_unit_test(test_all_rules),
        cmocka_unit_test(test_min_time_left),
        cmocka_unit_test(test_durations),
    };
    return cmocka_run_group_tests_name("guard", tests, NULL, NULL);
}
