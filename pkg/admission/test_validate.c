/* test_validate.c: the validating webhooks (validate.c) answered from the
 * controller's cache. The caches are filled directly, as the watch would;
 * each request goes through the route table as the API server's would.
 * Test JSON is written with single quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "admission/holds.h"
#include "admission/router.h"
#include "admission/validate.h"
#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/testutil_decide.h"
#include "log/log.h"
#include "policy/testutil_policy.h"

#define NOW "2026-03-03T12:00:00Z" /* a Tuesday */
#define CM "changemanagement.hypershift.openshift.io/"

#define META(kind, ns, name)                                                             \
    "'kind':'" kind "','metadata':{'namespace':'" ns "','name':'" name "','uid':'u-" name \
    "','resourceVersion':'7','generation':1"
#define POLICY(name, spec)                                                             \
    "{'apiVersion':'changemanagement.hypershift.openshift.io/v1alpha1'," META(          \
        "HostedChangeManagementPolicy", "clusters", name) "},'spec':" spec "}"
#define WEEKLY(days, dur)                                                              \
    "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{'recurrence':{" \
    "'frequency':'Weekly','weekly':{'daysOfWeek':" days "}},'startTime':'01:00',"       \
    "'duration':'" dur "'}}}"
#define DAILY_EXCLUDING(from, until)                                                     \
    "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{'rrule':"         \
    "'FREQ=DAILY','duration':'8h'},'exclude':[{'fromDate':'" from "','untilDate':'" until \
    "','reason':'freeze'}]}}"
#define SAT12 POLICY("sat12", WEEKLY("['Saturday']", "12h"))
#define SAT_SHORT POLICY("sat-short", WEEKLY("['Saturday']", "11h59m"))
#define WEEKDAYS POLICY("weekdays", WEEKLY("['Monday','Tuesday','Wednesday','Thursday','Friday']", "12h"))
#define HC(name, ann, spec) "{" META("HostedCluster", "clusters", name) ",'annotations':{" ann "}},'spec':" spec "}"
#define NP(name, ann, cluster)                                                          \
    "{" META("NodePool", "clusters", name) ",'annotations':{" ann "}},'spec':{'clusterName':'" \
    cluster "'}}"

/* testutil_ctl_add() of single-quoted JSON. */
static void add(kube_cache *cache, const char *text)
{
    json_t *j = tu_json(text);
    char *s = json_dumps(j, JSON_COMPACT);
    testutil_ctl_add(cache, s);
    free(s);
    json_decref(j);
}

typedef struct fixture {
    struct ev_loop *loop;
    ctl_controller_t *c;
    http_server srv;
    adm_router_t r;
} fixture_t;

/* Policies sat12 (Saturdays 01:00-13:00), sat-short (one minute less) and
 * weekdays (Monday to Friday 01:00-13:00); HostedCluster a follows sat12. */
static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    assert_non_null(f);
    f->loop = ev_loop_new(EVFLAG_AUTO);
    f->c = testutil_ctl_new(f->loop, NULL, tu_at(NOW));
    add(&f->c->policies, SAT12);
    add(&f->c->policies, SAT_SHORT);
    add(&f->c->policies, WEEKDAYS);
    add(&f->c->hcs, HC("a", "'" CM "policy':'sat12'", "{'infraID':'a-x1'}"));
    http_server_init(&f->srv, NULL);
    adm_router_init(&f->r, &f->srv, false, NULL, NULL);
    assert_int_equal(adm_validation_register(&f->r, f->c), 0);
    assert_int_equal(f->r.nroutes, 3);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;
    ctl_stop(f->c);
    ev_loop_destroy(f->loop);
    free(f);
    return 0;
}

typedef struct answer {
    bool allowed;
    int code;
    char message[2048];
} answer_t;

static answer_t review(fixture_t *f, testutil_review_t q)
{
    json_t *resp = testutil_ctl_review(&f->r, &q);
    json_t *status = json_object_get(resp, "status");
    const char *m = json_string_value(json_object_get(status, "message"));
    answer_t a = {.allowed = json_is_true(json_object_get(resp, "allowed")),
                  .code = (int)json_integer_value(json_object_get(status, "code"))};
    snprintf(a.message, sizeof(a.message), "%s", m ? m : "");
    json_decref(resp);
    return a;
}

static answer_t policy(fixture_t *f, const char *op, const char *obj, const char *old)
{
    return review(f, (testutil_review_t){.path = ADM_WEBHOOK_VALIDATE_POLICIES, .op = op,
                                       .group = CM_GROUP,
                                       .resource = "hostedchangemanagementpolicies",
                                       .ns = "clusters", .name = "p", .object = obj,
                                       .old_object = old});
}

static answer_t managed(fixture_t *f, const char *resource, const char *name, const char *op,
                        const char *obj, const char *old)
{
    return review(f, (testutil_review_t){.path = strcmp(resource, "nodepools") == 0
                                                   ? ADM_WEBHOOK_VALIDATE_NODEPOOLS
                                                   : ADM_WEBHOOK_VALIDATE_HOSTEDCLUSTERS,
                                       .op = op, .group = HS_GROUP, .resource = resource,
                                       .ns = "clusters", .name = name, .object = obj,
                                       .old_object = old});
}

/* The message the controller writes into the policy's Ready condition. */
static void ready_message(const char *obj, char *out, size_t len)
{
    json_t *doc = tu_json(obj);
    policy_t *p = NULL;
    assert_int_equal(policy_parse(doc, tu_at(NOW), &p, NULL, 0), HCP_EINVAL);
    snprintf(out, len, "%s", p->message);
    policy_free(p);
    json_decref(doc);
}

/* Refused at CREATE with the very message of the Ready condition. */
static void test_policy_invalid_refused(void **state)
{
    static const char *const bad[] = {
        POLICY("p", "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{"
                    "'rrule':'FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30'}}}"),
        POLICY("p", "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'exclude':[{"
                    "'fromDate':'1969-12-31'}]}}"),
        POLICY("p", "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'timeZone':"
                    "'Mars/Olympus_Mons'}}"),
        POLICY("p", WEEKLY("['Saturday']", "8 hours")),
    };
    fixture_t *f = *state;
    char want[POLICY_ERRLEN];

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        answer_t a = policy(f, "CREATE", bad[i], NULL);
        ready_message(bad[i], want, sizeof(want));
        assert_false(a.allowed);
        assert_int_equal(a.code, 422);
        assert_string_equal(a.message, want);
    }
    answer_t a = policy(f, "CREATE", bad[0], NULL);
    assert_string_equal(a.message,
                        "spec.maintenanceSchedule.permit.rrule: BYMONTHDAY and BYMONTH together "
                        "select no date");
}

/* A day listed twice is normalised, not refused; an unchanged spec and the
 * status subresource pass whatever they hold. */
static void test_policy_normalised_and_untouched(void **state)
{
    fixture_t *f = *state;
    const char *dup = POLICY("p", WEEKLY("['Sunday','Saturday','Sunday']", "4h"));
    const char *bad = POLICY("p", WEEKLY("['Saturday']", "8 hours"));
    char relabelled[1024];

    assert_true(policy(f, "CREATE", dup, NULL).allowed);
    snprintf(relabelled, sizeof(relabelled), "%s", bad);
    memcpy(strstr(relabelled, "'generation':1"), "'generation':2", 14);
    assert_true(policy(f, "UPDATE", relabelled, bad).allowed);
    assert_false(policy(f, "UPDATE", bad, dup).allowed);
    answer_t a = review(f, (testutil_review_t){.path = ADM_WEBHOOK_VALIDATE_POLICIES,
                                             .op = "UPDATE", .subresource = "status",
                                             .group = CM_GROUP,
                                             .resource = "hostedchangemanagementpolicies",
                                             .ns = "clusters", .name = "p", .object = bad,
                                             .old_object = bad});
    assert_true(a.allowed);
}

/* A policy whose own spec.minTimeLeft no window meets is refused, without
 * guard rails, naming the field, the longest window and the shortfall; one
 * a window meets (exactly), and one whose strategy has no windows, pass. */
#define MIN_LEFT(spec, m) POLICY("p", spec ",'minTimeLeft':" m "}")
#define SAT4 "{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{'recurrence':{" \
             "'frequency':'Weekly','weekly':{'daysOfWeek':['Saturday']}},'startTime':'01:00'," \
             "'duration':'4h'}}"
static void test_policy_min_time_left(void **state)
{
    fixture_t *f = *state;
    answer_t a = policy(f, "CREATE", MIN_LEFT(SAT4, "{'controlPlane':'5h','workerNodes':'1h'}"),
                        NULL);
    assert_false(a.allowed);
    assert_int_equal(a.code, 422);
    assert_string_equal(a.message, "spec.minTimeLeft.controlPlane: a change starts only with 5h "
                                   "of its window left, but the longest window over the next 12 "
                                   "months is 4h (1h short): no change could ever start");
    a = policy(f, "CREATE", MIN_LEFT(SAT4, "{'controlPlane':'1h','workerNodes':'4h30m'}"), NULL);
    assert_false(a.allowed);
    assert_non_null(strstr(a.message, "spec.minTimeLeft.workerNodes: a change starts only with "
                                      "4h 30m of its window left"));
    assert_non_null(strstr(a.message, "(30m short)"));
    assert_true(policy(f, "CREATE", MIN_LEFT(SAT4, "{'controlPlane':'4h'}"), NULL).allowed);
    assert_true(policy(f, "CREATE",
                       MIN_LEFT("{'strategy':'Restrictive'", "{'controlPlane':'8h'}"), NULL)
                    .allowed);
}

/* An invalid stanza is refused with the controller's words; HyperShift's
 * writes that leave it alone pass even while it is invalid. */
static void test_stanza(void **state)
{
    fixture_t *f = *state;
    const char *bad_hc = HC("b", "'" CM "strategy':'Sometimes'", "{'release':{'image':'r:1'}}");
    const char *bad_hc2 = HC("b", "'" CM "strategy':'Sometimes'", "{'release':{'image':'r:2'}}");
    const char *fixed = HC("b", "'" CM "strategy':'Restrictive'", "{'release':{'image':'r:2'}}");
    stanza_t st;

    answer_t a = managed(f, "hostedclusters", "b", "CREATE", bad_hc, NULL);
    json_t *obj = tu_json(bad_hc);
    assert_int_equal(stanza_parse(obj, &st), HCP_EINVAL);
    json_decref(obj);
    assert_false(a.allowed);
    assert_int_equal(a.code, 422);
    assert_string_equal(a.message, st.error);
    assert_non_null(strstr(a.message, "\"Sometimes\" is not one of ByPolicy"));
    /* HyperShift bumps the release: the stanza is as it was */
    assert_true(managed(f, "hostedclusters", "b", "UPDATE", bad_hc2, bad_hc).allowed);
    assert_true(managed(f, "hostedclusters", "b", "UPDATE", fixed, bad_hc2).allowed);
    assert_false(managed(f, "hostedclusters", "b", "UPDATE", bad_hc2, fixed).allowed);
    /* no stanza: untouched */
    assert_true(managed(f, "hostedclusters", "c", "CREATE", HC("c", "", "{}"), NULL).allowed);
    /* the spec form on a NodePool */
    a = managed(f, "nodepools", "np9", "CREATE",
                "{" META("NodePool", "clusters", "np9") "},'spec':{'clusterName':'a',"
                "'changeManagement':{'strategy':'PermissiveUntil'}}}", NULL);
    assert_false(a.allowed);
    assert_string_equal(a.message,
                        "spec.changeManagement.permissiveUntil: required when strategy is "
                        "PermissiveUntil");
}

static const guard_config_t GKE = {.min_permitted = 48 * 3600, .period = 32 * 86400,
                                   .min_block = 4 * 3600,
                                   .exempt_ns = {"sre-*"}, .n_exempt_ns = 1,
                                   .exempt_users = {"alice"}, .n_exempt_users = 1,
                                   .exempt_groups = {"sre-admins"}, .n_exempt_groups = 1};

/* 4 Saturdays of 12 h in any 32 days: exactly the 48 h needed; a minute
 * less each is refused, by 4 minutes, with the first period short. */
static void test_guard_min_permitted(void **state)
{
    fixture_t *f = *state;

    assert_true(policy(f, "CREATE", SAT_SHORT, NULL).allowed); /* no guard rails yet */
    ctl_set_guard(f->c, &GKE);
    assert_true(policy(f, "CREATE", SAT12, NULL).allowed);
    answer_t a = policy(f, "CREATE", SAT_SHORT, NULL);
    assert_false(a.allowed);
    assert_int_equal(a.code, 403);
    assert_non_null(strstr(a.message, "the guard rails refuse policy clusters/p"));
    assert_non_null(strstr(a.message, "minPermittedTime: the 32d from 2026-03-07T12:59:00Z to "
                                      "2026-04-08T12:59:00Z permit 1d 23h 56m of changes"));
    assert_non_null(strstr(a.message, "4m short of the 2d required"));
    ctl_set_guard(f->c, NULL);
    assert_true(policy(f, "CREATE", SAT_SHORT, NULL).allowed);
}

/* Exempt namespaces, users and groups skip the guard rails, never the
 * validation. */
static void test_guard_exemptions(void **state)
{
    fixture_t *f = *state;
    const char *const sre[] = {"system:authenticated", "sre-admins", NULL};
    const char *const dev[] = {"system:authenticated", "developers", NULL};
    testutil_review_t q = {.path = ADM_WEBHOOK_VALIDATE_POLICIES, .op = "CREATE",
                           .group = CM_GROUP, .resource = "hostedchangemanagementpolicies",
                           .ns = "sre-tools", .name = "p", .object = SAT_SHORT};

    ctl_set_guard(f->c, &GKE);
    assert_true(review(f, q).allowed);
    q.ns = "clusters";
    q.user = "bob";
    q.groups = dev;
    assert_false(review(f, q).allowed);
    q.groups = sre;
    assert_true(review(f, q).allowed);
    q.groups = NULL;
    q.user = "alice";
    assert_true(review(f, q).allowed);
    q.object = POLICY("p", WEEKLY("['Saturday']", "8 hours"));
    assert_false(review(f, q).allowed);
}

/* maxExclusionLength: 30 days pass, 31 are refused by a day. */
static void test_guard_exclusion(void **state)
{
    fixture_t *f = *state;
    guard_config_t g = {.max_exclusion = 30 * 86400};

    ctl_set_guard(f->c, &g);
    assert_true(policy(f, "CREATE", POLICY("p", DAILY_EXCLUDING("2026-04-01", "2026-05-01")),
                       NULL).allowed);
    answer_t a = policy(f, "CREATE", POLICY("p", DAILY_EXCLUDING("2026-04-01", "2026-05-02")),
                        NULL);
    assert_false(a.allowed);
    assert_non_null(strstr(a.message, "maxExclusionLength: policy clusters/p "
                                      "spec.maintenanceSchedule.exclude[0]"));
    assert_non_null(strstr(a.message, "is 31d long, 1d more than the 30d allowed"));
}

/* maxRestrictiveUntil on a HostedCluster's stanza: 30 days from now pass,
 * a second more does not. */
static void test_guard_restrictive_until(void **state)
{
    fixture_t *f = *state;
    guard_config_t g = {.max_restrictive = 30 * 86400};

    ctl_set_guard(f->c, &g);
#define RU(t) "'" CM "strategy':'RestrictiveUntil','" CM "restrictive-until':'" t "'"
    assert_true(managed(f, "hostedclusters", "b", "CREATE", HC("b", RU("2026-04-02T12:00:00Z"), "{}"),
                        NULL).allowed);
    answer_t a = managed(f, "hostedclusters", "b", "CREATE",
                         HC("b", RU("2026-04-02T12:00:01Z"), "{}"), NULL);
    assert_false(a.allowed);
    assert_non_null(strstr(a.message, "the schedule of HostedCluster clusters/b"));
    assert_non_null(strstr(a.message, "is 1s later than the 30d from now allowed"));
}

/* A NodePool is judged on its own schedule within its HostedCluster's:
 * weekdays within Saturdays permit nothing. A HostedCluster's stanza edit
 * is judged on its new timeline. */
static void test_guard_effective(void **state)
{
    fixture_t *f = *state;

    ctl_set_guard(f->c, &GKE);
    assert_true(managed(f, "nodepools", "np1", "CREATE", NP("np1", "'" CM "policy':'sat12'", "a"),
                        NULL).allowed);
    answer_t a = managed(f, "nodepools", "np1", "CREATE",
                         NP("np1", "'" CM "policy':'weekdays'", "a"), NULL);
    assert_false(a.allowed);
    assert_non_null(strstr(a.message, "NodePool clusters/np1 (its own within HostedCluster a's)"));
    assert_non_null(strstr(a.message, "permit 0s of changes"));
    /* weekdays alone are plenty while the HostedCluster is unknown */
    assert_true(managed(f, "nodepools", "np2", "CREATE",
                        NP("np2", "'" CM "policy':'weekdays'", "ghost"), NULL).allowed);
    a = managed(f, "hostedclusters", "a", "UPDATE",
                HC("a", "'" CM "policy':'sat-short'", "{'infraID':'a-x1'}"),
                HC("a", "'" CM "policy':'sat12'", "{'infraID':'a-x1'}"));
    assert_false(a.allowed);
    assert_non_null(strstr(a.message, "4m short"));
    /* a write that leaves the stanza alone is not judged again */
    assert_true(managed(f, "hostedclusters", "a", "UPDATE",
                        HC("a", "'" CM "policy':'sat-short'", "{'infraID':'a-x2'}"),
                        HC("a", "'" CM "policy':'sat-short'", "{'infraID':'a-x1'}"))
                    .allowed);
}

int main(void)
{
    log_setup(false, 0);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_policy_invalid_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_normalised_and_untouched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stanza, setup, teardown),
        cmocka_unit_test_setup_teardown(test_policy_min_time_left, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_min_permitted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_exemptions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_exclusion, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_restrictive_until, setup, teardown),
        cmocka_unit_test_setup_teardown(test_guard_effective, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
