/* Tests of pkg/policy/stanza: reading the changeManagement stanza from spec
 * and annotations, resolving every strategy (DESIGN.md 3.3) and the NodePool
 * intersection (3.4). Test JSON is single-quoted; q() converts it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"
#include "policy/stanza.h"
#include "schedule/testutil_sched.h"

#define A "changemanagement.hypershift.openshift.io/"

static json_t *q(const char *text)
{
    char *s = strdup(text);
    json_error_t je;
    json_t *doc;
    size_t i;

    assert_non_null(s);
    for (i = 0; s[i]; i++)
        if (s[i] == '\'')
            s[i] = '"';
    doc = json_loads(s, JSON_DECODE_ANY, &je);
    if (doc == NULL)
        fail_msg("bad test JSON (%s): %s", je.text, s);
    free(s);
    return doc;
}

static void parse(const char *text, stanza_t *st, int want_rc)
{
    json_t *obj = q(text);

    assert_int_equal(stanza_parse(obj, st), want_rc);
    json_decref(obj);
}

/* ---- parsing --------------------------------------------------------------- */

static void test_no_stanza(void **state)
{
    static const char *const objs[] = {
        "{'metadata':{'name':'hc'},'spec':{}}",
        "{'metadata':{'annotations':{'other.io/strategy':'Restrictive'}},'spec':{}}",
        "{'spec':{'changeManagement':null}}",
        "{}",
        "[]",
    };
    stanza_t st;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof objs / sizeof objs[0]; i++) {
        parse(objs[i], &st, 0);
        assert_int_equal(st.present, 0);
        assert_int_equal(st.valid, 1);
        assert_int_equal(st.strategy, STANZA_PERMISSIVE);
    }
}

static void test_spec_form(void **state)
{
    stanza_t st;

    (void)state;
    parse("{'spec':{'changeManagement':{'strategy':'PermissiveUntil','byPolicy':{'name':'weekend'},"
          "'permissiveUntil':'2026-01-07T12:00:00Z','restrictiveUntil':'2026-01-08T00:00:00+02:00'}}}",
          &st, 0);
    assert_int_equal(st.present, 1);
    assert_int_equal(st.from_spec, 1);
    assert_int_equal(st.valid, 1);
    assert_string_equal(st.error, "");
    assert_int_equal(st.strategy, STANZA_PERMISSIVE_UNTIL);
    assert_string_equal(st.policy, "weekend");
    assert_int_equal(st.has_permissive_until, 1);
    assert_int_equal(st.permissive_until, tu_ts("2026-01-07T12:00:00Z"));
    assert_int_equal(st.has_restrictive_until, 1);
    assert_int_equal(st.restrictive_until, tu_ts("2026-01-07T22:00:00Z"));
}

static void test_annotation_form(void **state)
{
    stanza_t st;

    (void)state;
    parse("{'metadata':{'annotations':{'" A "strategy':'RestrictiveUntil','" A "policy':'nights',"
          "'" A "restrictive-until':'2026-02-01T00:00:00Z','unrelated':'x'}}}",
          &st, 0);
    assert_int_equal(st.present, 1);
    assert_int_equal(st.from_spec, 0);
    assert_int_equal(st.strategy, STANZA_RESTRICTIVE_UNTIL);
    assert_string_equal(st.policy, "nights");
    assert_int_equal(st.has_restrictive_until, 1);
    assert_int_equal(st.restrictive_until, tu_ts("2026-02-01"));
    assert_int_equal(st.has_permissive_until, 0);

    /* a policy alone means ByPolicy */
    parse("{'metadata':{'annotations':{'" A "policy':'nights'}}}", &st, 0);
    assert_int_equal(st.strategy, STANZA_BY_POLICY);
    assert_string_equal(st.policy, "nights");

    parse("{'spec':{'changeManagement':{'byPolicy':{'name':'nights'}}}}", &st, 0);
    assert_int_equal(st.strategy, STANZA_BY_POLICY);
    assert_int_equal(st.from_spec, 1);

    /* until alone is still a stanza (restricted until given a strategy) */
    parse("{'metadata':{'annotations':{'" A "permissive-until':'2026-02-01T00:00:00Z'}}}", &st,
          HCP_EINVAL);
    assert_int_equal(st.present, 1);
}

/* spec wins over annotations, and the two forms are never mixed */
static void test_spec_wins(void **state)
{
    stanza_t st;

    (void)state;
    parse("{'metadata':{'annotations':{'" A "strategy':'Restrictive','" A "policy':'ann'}},"
          "'spec':{'changeManagement':{'strategy':'Permissive'}}}",
          &st, 0);
    assert_int_equal(st.from_spec, 1);
    assert_int_equal(st.strategy, STANZA_PERMISSIVE);
    assert_string_equal(st.policy, "");

    /* an invalid spec stanza is not rescued by valid annotations */
    parse("{'metadata':{'annotations':{'" A "strategy':'Permissive'}},"
          "'spec':{'changeManagement':{'strategy':'Whenever'}}}",
          &st, HCP_EINVAL);
    assert_int_equal(st.from_spec, 1);
    assert_int_equal(st.valid, 0);
}

/* byPolicy is kept when another strategy is forced */
static void test_policy_kept(void **state)
{
    stanza_t st;

    (void)state;
    parse("{'spec':{'changeManagement':{'strategy':'Restrictive','byPolicy':{'name':'weekend'}}}}",
          &st, 0);
    assert_int_equal(st.strategy, STANZA_RESTRICTIVE);
    assert_string_equal(st.policy, "weekend");
}

typedef struct bad_stanza {
    const char *obj;
    const char *error;
} bad_stanza_t;

#define CM(x) "{'spec':{'changeManagement':" x "}}"
#define ANN(x) "{'metadata':{'annotations':{" x "}}}"
#define ANNP "metadata.annotations[\"" A

static const bad_stanza_t BAD[] = {
    {CM("'ByPolicy'"), "spec.changeManagement: must be an object, not a string"},
    {CM("{'strategy':'Permissive','mode':1}"), "spec.changeManagement.mode: unknown field"},
    {CM("{'strategy':1}"), "spec.changeManagement.strategy: must be a string, not a number"},
    {CM("{'strategy':'Whenever'}"),
     "spec.changeManagement.strategy: \"Whenever\" is not one of ByPolicy, Permissive, "
     "Restrictive, PermissiveUntil, RestrictiveUntil"},
    {CM("{}"), "spec.changeManagement.strategy: required field is missing"},
    {CM("{'strategy':'ByPolicy'}"), "spec.changeManagement.byPolicy.name: required when strategy "
                                    "is ByPolicy"},
    {CM("{'strategy':'ByPolicy','byPolicy':'weekend'}"),
     "spec.changeManagement.byPolicy: must be an object, not a string"},
    {CM("{'strategy':'ByPolicy','byPolicy':{'nam':'weekend'}}"),
     "spec.changeManagement.byPolicy.nam: unknown field"},
    {CM("{'strategy':'ByPolicy','byPolicy':{'name':7}}"),
     "spec.changeManagement.byPolicy.name: must be a string, not a number"},
    {CM("{'strategy':'ByPolicy','byPolicy':{'name':'Week_End'}}"),
     "spec.changeManagement.byPolicy.name: \"Week_End\" is not a valid policy name"},
    {CM("{'strategy':'ByPolicy','byPolicy':{'name':''}}"),
     "spec.changeManagement.byPolicy.name: \"\" is not a valid policy name"},
    {CM("{'strategy':'ByPolicy','byPolicy':{'name':'-x'}}"),
     "spec.changeManagement.byPolicy.name: \"-x\" is not a valid policy name"},
    {CM("{'strategy':'PermissiveUntil'}"),
     "spec.changeManagement.permissiveUntil: required when strategy is PermissiveUntil"},
    {CM("{'strategy':'PermissiveUntil','restrictiveUntil':'2026-01-01T00:00:00Z'}"),
     "spec.changeManagement.permissiveUntil: required when strategy is PermissiveUntil"},
    {CM("{'strategy':'RestrictiveUntil'}"),
     "spec.changeManagement.restrictiveUntil: required when strategy is RestrictiveUntil"},
    {CM("{'strategy':'PermissiveUntil','permissiveUntil':'next tuesday'}"),
     "spec.changeManagement.permissiveUntil: \"next tuesday\" is not an RFC 3339 time (e.g. "
     "2026-01-03T00:00:00Z)"},
    {CM("{'strategy':'RestrictiveUntil','restrictiveUntil':'2026-13-01T00:00:00Z'}"),
     "spec.changeManagement.restrictiveUntil: \"2026-13-01T00:00:00Z\" is not an RFC 3339 time "
     "(e.g. 2026-01-03T00:00:00Z)"},
    {CM("{'strategy':'RestrictiveUntil','restrictiveUntil':1767225600}"),
     "spec.changeManagement.restrictiveUntil: must be a string, not a number"},
    {ANN("'" A "strategy':'Sometimes'"),
     ANNP "strategy\"]: \"Sometimes\" is not one of ByPolicy, Permissive, Restrictive, "
          "PermissiveUntil, RestrictiveUntil"},
    {ANN("'" A "strategy':'ByPolicy'"), ANNP "policy\"]: required when strategy is ByPolicy"},
    {ANN("'" A "strategy':'PermissiveUntil','" A "policy':'p'"),
     ANNP "permissive-until\"]: required when strategy is PermissiveUntil"},
    {ANN("'" A "strategy':'RestrictiveUntil','" A "restrictive-until':'2026-01-01'"),
     ANNP "restrictive-until\"]: \"2026-01-01\" is not an RFC 3339 time (e.g. "
          "2026-01-03T00:00:00Z)"},
    {ANN("'" A "policy':'UPPER'"), ANNP "policy\"]: \"UPPER\" is not a valid policy name"},
    {ANN("'" A "permissive-until':'2026-01-01T00:00:00Z'"),
     ANNP "strategy\"]: required field is missing"},
    {ANN("'" A "strategy':true"), ANNP "strategy\"]: must be a string, not a boolean"},
};

static void test_bad(void **state)
{
    const bad_stanza_t *c = *state;
    stanza_t st;

    parse(c->obj, &st, HCP_EINVAL);
    assert_int_equal(st.present, 1);
    assert_int_equal(st.valid, 0);
    assert_string_equal(st.error, c->error);
    /* A webhook gets the same words, split into field path and message. */
    {
        policy_problem_t pr;
        char joined[2 * POLICY_ERRLEN + 2];
        json_t *o = q(c->obj);
        assert_int_equal(stanza_validate(o, &pr), HCP_EINVAL);
        json_decref(o);
        snprintf(joined, sizeof joined, "%s: %s", pr.field, pr.message);
        assert_string_equal(joined, c->error);
        assert_true(strncmp(pr.field, "spec.changeManagement", 21) == 0 ||
                    strncmp(pr.field, "metadata.annotations[", 21) == 0);
    }
}

/* ---- resolution ------------------------------------------------------------ */

#define NOW ((sched_time_t)1767225600) /* 2026-01-01T00:00:00Z, a Thursday */

/* Weekend windows (UTC): Saturday 00:00 to Monday 00:00. */
#define WEEKEND                                                                            \
    "{'kind':'HostedChangeManagementPolicy','metadata':{'name':'weekend','namespace':'clusters'}," \
    "'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{"             \
    "'rrule':'FREQ=WEEKLY;BYDAY=SA,SU'}}}}"

typedef struct fixture {
    policy_t *weekend; /* clusters/weekend, ready */
    int lookups;       /* calls of lookup() */
    int fail;          /* make lookup() return an error */
} fixture_t;

static int lookup(void *ctx, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    fixture_t *f = ctx;

    f->lookups++;
    if (f->fail)
        return -5;
    if (strcmp(ns, "clusters") == 0 && strcmp(name, "weekend") == 0) {
        out->found = 1;
        out->ready = 1;
        out->sched = f->weekend->sched;
        out->strategy = "MaintenanceSchedule";
    } else if (strcmp(ns, "clusters") == 0 && strcmp(name, "open") == 0) {
        out->found = 1;
        out->ready = 1;
        out->sched = f->weekend->sched; /* only its strategy matters here */
        out->strategy = "Permissive";
    } else if (strcmp(ns, "clusters") == 0 && strcmp(name, "broken") == 0) {
        out->found = 1;
        out->ready = 0;
        out->message = "spec.strategy: required field is missing";
    }
    return 0;
}

static int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof *f);
    json_t *doc = q(WEEKEND);

    if (f == NULL || policy_parse(doc, NOW, &f->weekend, NULL, 0) != 0)
        return -1;
    json_decref(doc);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture_t *f = *state;

    policy_free(f->weekend);
    free(f);
    return 0;
}

/* Resolves a stanza given as JSON in namespace "clusters". */
static void resolve(fixture_t *f, const char *obj, stanza_resolution_t *r)
{
    stanza_t st;
    json_t *o = q(obj);

    (void)stanza_parse(o, &st);
    json_decref(o);
    assert_int_equal(stanza_resolve(&st, "clusters", lookup, f, r), 0);
    assert_non_null(r->sched);
}

/* The strategy in force (change_management_strategy_enabled) and the stanza
 * as written (change_management_stanza_strategy), before and after an
 * override's instant. */
static void test_enforced_strategy(void **state)
{
    static const struct {
        const char *obj;
        const char *at;         /* instant */
        const char *enforced;
        const char *configured;
    } cases[] = {
        {"{}", "2026-01-01", "Permissive", "None"},
        {ANN("'" A "strategy':'Restrictive'"), "2026-01-01", "Restrictive", "Restrictive"},
        {ANN("'" A "strategy':'Permissive'"), "2026-01-01", "Permissive", "Permissive"},
        {ANN("'" A "policy':'weekend'"), "2026-01-01", "MaintenanceSchedule", "ByPolicy"},
        {ANN("'" A "policy':'open'"), "2026-01-01", "Permissive", "ByPolicy"},
        {ANN("'" A "policy':'missing'"), "2026-01-01", "Restrictive", "ByPolicy"},
        {ANN("'" A "policy':'broken'"), "2026-01-01", "Restrictive", "ByPolicy"},
        {ANN("'" A "strategy':'Sometimes'"), "2026-01-01", "Restrictive", "Invalid"},
#define PU ANN("'" A "strategy':'PermissiveUntil','" A "permissive-until':'2026-01-02T00:00:00Z'")
#define PUP                                                                                \
    ANN("'" A "strategy':'PermissiveUntil','" A "policy':'weekend','" A                     \
        "permissive-until':'2026-01-02T00:00:00Z'")
#define RU ANN("'" A "strategy':'RestrictiveUntil','" A "restrictive-until':'2026-01-02T00:00:00Z'")
#define RUP                                                                                \
    ANN("'" A "strategy':'RestrictiveUntil','" A "policy':'weekend','" A                    \
        "restrictive-until':'2026-01-02T00:00:00Z'")
        {PU, "2026-01-01T23:59:59Z", "Permissive", "PermissiveUntil"},
        {PU, "2026-01-02", "Restrictive", "PermissiveUntil"},
        {PUP, "2026-01-01", "Permissive", "PermissiveUntil"},
        {PUP, "2026-01-03", "MaintenanceSchedule", "PermissiveUntil"},
        {RU, "2026-01-01", "Restrictive", "RestrictiveUntil"},
        {RU, "2026-01-02", "Permissive", "RestrictiveUntil"},
        {RUP, "2026-01-01", "Restrictive", "RestrictiveUntil"},
        {RUP, "2026-01-03", "MaintenanceSchedule", "RestrictiveUntil"},
#undef PU
#undef PUP
#undef RU
#undef RUP
    };
    fixture_t *f = *state;
    size_t i;

    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        stanza_t st;
        stanza_resolution_t r;
        json_t *o = q(cases[i].obj);

        (void)stanza_parse(o, &st);
        json_decref(o);
        assert_int_equal(stanza_resolve(&st, "clusters", lookup, f, &r), 0);
        if (strcmp(stanza_enforced_strategy(&st, &r, tu_ts(cases[i].at)), cases[i].enforced) ||
            strcmp(stanza_configured_strategy(&st), cases[i].configured))
            fail_msg("case %zu at %s: got %s/%s, want %s/%s", i, cases[i].at,
                     stanza_enforced_strategy(&st, &r, tu_ts(cases[i].at)),
                     stanza_configured_strategy(&st), cases[i].enforced, cases[i].configured);
        stanza_resolution_free(&r);
    }
}

static void expect_iv(int rc, const sched_interval_t *iv, const char *start, const char *end)
{
    char a[32], b[32];

    assert_int_equal(rc, 1);
    if (iv->start != tu_ts(start) || iv->end != tu_ts(end))
        fail_msg("got [%s, %s), want [%s, %s)", tu_fmt(iv->start, a, 32), tu_fmt(iv->end, b, 32),
                 start, end);
}

static void expect_next(sched_t *s, const char *from, const char *start, const char *end)
{
    sched_interval_t iv;

    expect_iv(sched_next(s, tu_ts(from), &iv), &iv, start, end);
}

static void expect_none(sched_t *s, const char *from)
{
    sched_interval_t iv;

    assert_int_equal(sched_next(s, tu_ts(from), &iv), 0);
}

static void test_resolve_constants(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;

    resolve(f, "{'spec':{}}", &r);
    assert_string_equal(r.reason, "Permissive");
    assert_int_equal(r.strategy, STANZA_PERMISSIVE);
    assert_string_equal(r.message, "no changeManagement stanza: changes are always permitted");
    expect_next(r.sched, "2026-01-01", "-inf", "+inf");
    stanza_resolution_free(&r);

    resolve(f, CM("{'strategy':'Permissive','byPolicy':{'name':'weekend'}}"), &r);
    assert_string_equal(r.reason, "Permissive");
    assert_int_equal(r.degraded, 0);
    expect_next(r.sched, "2026-01-01", "-inf", "+inf");
    stanza_resolution_free(&r);

    resolve(f, CM("{'strategy':'Restrictive','byPolicy':{'name':'weekend'}}"), &r);
    assert_string_equal(r.reason, "Restrictive");
    assert_string_equal(r.message, "strategy Restrictive: changes are never permitted");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);
    /* forced constants never consult the policy */
    assert_int_equal(f->lookups, 0);
}

static void test_resolve_by_policy(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;

    resolve(f, CM("{'strategy':'ByPolicy','byPolicy':{'name':'weekend'}}"), &r);
    assert_string_equal(r.reason, "ByPolicy");
    assert_int_equal(r.degraded, 0);
    assert_string_equal(r.message, "following policy \"weekend\"");
    expect_next(r.sched, "2026-01-01", "2026-01-03", "2026-01-05");
    expect_next(r.sched, "2026-01-05", "2026-01-10", "2026-01-12");
    stanza_resolution_free(&r);

    resolve(f, ANN("'" A "policy':'missing'"), &r);
    assert_string_equal(r.reason, "PolicyNotFound");
    assert_int_equal(r.degraded, 1);
    assert_int_equal(r.strategy, STANZA_BY_POLICY);
    assert_string_equal(r.message, "policy \"missing\" not found in namespace \"clusters\"; "
                                   "changes are restricted");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);

    resolve(f, CM("{'strategy':'ByPolicy','byPolicy':{'name':'broken'}}"), &r);
    assert_string_equal(r.reason, "PolicyNotReady");
    assert_string_equal(r.message, "policy \"broken\" in namespace \"clusters\" is not Ready: "
                                   "spec.strategy: required field is missing; changes are "
                                   "restricted");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);
}

/* The policy is looked up in the object's own namespace only. */
static void test_resolve_namespace(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;
    stanza_t st;
    json_t *o = q(CM("{'strategy':'ByPolicy','byPolicy':{'name':'weekend'}}"));

    assert_int_equal(stanza_parse(o, &st), 0);
    json_decref(o);
    assert_int_equal(stanza_resolve(&st, "other", lookup, f, &r), 0);
    assert_string_equal(r.reason, "PolicyNotFound");
    assert_string_equal(r.message, "policy \"weekend\" not found in namespace \"other\"; "
                                   "changes are restricted");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);

    /* no lookup function at all: nothing can be found */
    assert_int_equal(stanza_resolve(&st, "clusters", NULL, NULL, &r), 0);
    assert_string_equal(r.reason, "PolicyNotFound");
    stanza_resolution_free(&r);
}

static void test_resolve_permissive_until(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;

    /* without a policy: permitted until T, then Restrictive */
    resolve(f, CM("{'strategy':'PermissiveUntil','permissiveUntil':'2026-01-07T12:00:00Z'}"), &r);
    assert_string_equal(r.reason, "PermissiveUntil");
    assert_string_equal(r.message, "permitted until 2026-01-07T12:00:00Z, then Restrictive");
    expect_next(r.sched, "2026-01-01", "-inf", "2026-01-07T12:00Z");
    expect_none(r.sched, "2026-01-07T12:00Z");
    stanza_resolution_free(&r);

    /* with the policy: then the weekend windows */
    resolve(f, CM("{'strategy':'PermissiveUntil','permissiveUntil':'2026-01-07T12:00:00Z',"
                  "'byPolicy':{'name':'weekend'}}"),
            &r);
    assert_string_equal(r.reason, "PermissiveUntil");
    assert_string_equal(r.message,
                        "permitted until 2026-01-07T12:00:00Z, then policy \"weekend\"");
    expect_next(r.sched, "2026-01-01", "-inf", "2026-01-07T12:00Z");
    expect_next(r.sched, "2026-01-07T12:00Z", "2026-01-10", "2026-01-12");
    stanza_resolution_free(&r);

    /* T inside a window: the override and the window merge */
    resolve(f, ANN("'" A "strategy':'PermissiveUntil','" A "permissive-until':'2026-01-04T06:00:00Z',"
                   "'" A "policy':'weekend'"),
            &r);
    expect_next(r.sched, "2026-01-01", "-inf", "2026-01-05");
    stanza_resolution_free(&r);

    /* with a missing policy: Restrictive after T, and said so */
    resolve(f, CM("{'strategy':'PermissiveUntil','permissiveUntil':'2026-01-07T12:00:00Z',"
                  "'byPolicy':{'name':'missing'}}"),
            &r);
    assert_string_equal(r.reason, "PolicyNotFound");
    assert_int_equal(r.degraded, 1);
    assert_string_equal(r.message, "permitted until 2026-01-07T12:00:00Z, then restricted "
                                   "because policy \"missing\" not found in namespace "
                                   "\"clusters\"");
    expect_next(r.sched, "2026-01-01", "-inf", "2026-01-07T12:00Z");
    expect_none(r.sched, "2026-01-08");
    stanza_resolution_free(&r);
}

static void test_resolve_restrictive_until(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;

    /* without a policy: restricted until T, then Permissive */
    resolve(f, CM("{'strategy':'RestrictiveUntil','restrictiveUntil':'2026-01-07T12:00:00Z'}"), &r);
    assert_string_equal(r.reason, "RestrictiveUntil");
    assert_string_equal(r.message, "restricted until 2026-01-07T12:00:00Z, then Permissive");
    assert_int_equal(sched_permitted(r.sched, tu_ts("2026-01-07T11:59:59Z")), 0);
    expect_next(r.sched, "2026-01-01", "2026-01-07T12:00Z", "+inf");
    stanza_resolution_free(&r);

    /* with the policy: the first window is cut at T */
    resolve(f, CM("{'strategy':'RestrictiveUntil','restrictiveUntil':'2026-01-03T12:00:00Z',"
                  "'byPolicy':{'name':'weekend'}}"),
            &r);
    assert_string_equal(r.message,
                        "restricted until 2026-01-03T12:00:00Z, then policy \"weekend\"");
    expect_next(r.sched, "2026-01-01", "2026-01-03T12:00Z", "2026-01-05");
    expect_next(r.sched, "2026-01-05", "2026-01-10", "2026-01-12");
    stanza_resolution_free(&r);

    /* with a policy that is not ready: never */
    resolve(f, CM("{'strategy':'RestrictiveUntil','restrictiveUntil':'2026-01-03T12:00:00Z',"
                  "'byPolicy':{'name':'broken'}}"),
            &r);
    assert_string_equal(r.reason, "PolicyNotReady");
    assert_int_equal(r.degraded, 1);
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);
}

static void test_resolve_invalid(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;

    resolve(f, CM("{'strategy':'PermissiveUntil','permissiveUntil':'soon'}"), &r);
    assert_string_equal(r.reason, "InvalidChangeManagement");
    assert_int_equal(r.degraded, 1);
    assert_int_equal(r.strategy, STANZA_RESTRICTIVE);
    assert_string_equal(r.message, "spec.changeManagement.permissiveUntil: \"soon\" is not an "
                                   "RFC 3339 time (e.g. 2026-01-03T00:00:00Z); changes are "
                                   "restricted");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);

    resolve(f, CM("{'strategy':'RestrictiveUntil'}"), &r);
    assert_string_equal(r.reason, "InvalidChangeManagement");
    expect_none(r.sched, "2026-01-01");
    stanza_resolution_free(&r);
    stanza_resolution_free(NULL);
}

static void test_resolve_lookup_error(void **state)
{
    fixture_t *f = *state;
    stanza_resolution_t r;
    stanza_t st;
    json_t *o = q(CM("{'strategy':'ByPolicy','byPolicy':{'name':'weekend'}}"));

    assert_int_equal(stanza_parse(o, &st), 0);
    json_decref(o);
    f->fail = 1;
    assert_int_equal(stanza_resolve(&st, "clusters", lookup, f, &r), -5);
    assert_null(r.sched);
    f->fail = 0;
}

static void test_strategy_names(void **state)
{
    (void)state;
    assert_string_equal(stanza_strategy_name(STANZA_BY_POLICY), "ByPolicy");
    assert_string_equal(stanza_strategy_name(STANZA_PERMISSIVE_UNTIL), "PermissiveUntil");
    assert_string_equal(stanza_strategy_name(STANZA_RESTRICTIVE_UNTIL), "RestrictiveUntil");
    assert_string_equal(stanza_strategy_name((stanza_strategy_t)42), "Unknown");
}

/* ---- NodePool within HostedCluster ------------------------------------------ */

static sched_t *weekly(const char *byday)
{
    char doc[512], err[POLICY_ERRLEN];
    json_t *j;
    policy_t *p;
    sched_t *s;

    snprintf(doc, sizeof doc,
             "{'spec':{'strategy':'MaintenanceSchedule','maintenanceSchedule':{'permit':{"
             "'rrule':'FREQ=WEEKLY;BYDAY=%s'}}}}",
             byday);
    j = q(doc);
    if (policy_parse(j, NOW, &p, err, sizeof err) != 0)
        fail_msg("%s", err);
    s = policy_schedule(p);
    policy_free(p);
    json_decref(j);
    return s;
}

static void test_nodepool_narrower(void **state)
{
    sched_t *cluster = weekly("SA,SU"), *own = weekly("SU");
    stanza_nodepool_t np;

    (void)state;
    assert_int_equal(stanza_resolve_nodepool(own, cluster, NOW, &np), 0);
    assert_int_equal(np.has_window, 1);
    assert_string_equal(np.reason, "PermittedWindow");
    expect_iv(1, &np.next, "2026-01-04", "2026-01-05");
    assert_int_equal(np.cluster_has_window, 1);
    expect_iv(1, &np.cluster_next, "2026-01-03", "2026-01-05");
    expect_next(np.sched, "2026-01-05", "2026-01-11", "2026-01-12");
    stanza_nodepool_free(&np);
    sched_unref(own);
    sched_unref(cluster);
}

static void test_nodepool_wider(void **state)
{
    sched_t *cluster = weekly("SA"), *own = sched_always();
    stanza_nodepool_t np;

    (void)state;
    assert_int_equal(stanza_resolve_nodepool(own, cluster, NOW, &np), 0);
    assert_int_equal(np.has_window, 1);
    /* the pool cannot widen the cluster's Saturday */
    expect_iv(1, &np.next, "2026-01-03", "2026-01-04");
    assert_int_equal(sched_permitted(np.sched, tu_ts("2026-01-04T12:00Z")), 0);
    stanza_nodepool_free(&np);

    /* a pool wider than the cluster but not everything */
    sched_unref(own);
    own = weekly("FR,SA,SU");
    assert_int_equal(stanza_resolve_nodepool(own, cluster, NOW, &np), 0);
    expect_iv(1, &np.next, "2026-01-03", "2026-01-04");
    stanza_nodepool_free(&np);
    sched_unref(own);
    sched_unref(cluster);
}

static void test_nodepool_never(void **state)
{
    sched_t *cluster = weekly("SA,SU"), *own = weekly("MO,TU"), *never = sched_never();
    stanza_nodepool_t np;

    (void)state;
    /* disjoint windows: reported, not searched forever */
    assert_int_equal(stanza_resolve_nodepool(own, cluster, NOW, &np), 0);
    assert_int_equal(np.has_window, 0);
    assert_string_equal(np.reason, "NoPermittedWindow");
    assert_string_equal(np.message, "no permitted window within 10 years: the node pool's "
                                    "windows never overlap its hosted cluster's");
    assert_int_equal(np.cluster_has_window, 1);
    expect_iv(1, &np.cluster_next, "2026-01-03", "2026-01-05");
    stanza_nodepool_free(&np);

    assert_int_equal(stanza_resolve_nodepool(never, cluster, NOW, &np), 0);
    assert_int_equal(np.has_window, 0);
    assert_string_equal(np.message, "no permitted window within 10 years: the node pool's own "
                                    "schedule permits no changes");
    stanza_nodepool_free(&np);

    assert_int_equal(stanza_resolve_nodepool(own, never, NOW, &np), 0);
    assert_int_equal(np.cluster_has_window, 0);
    assert_string_equal(np.message, "no permitted window within 10 years: the hosted cluster "
                                    "permits no changes");
    stanza_nodepool_free(&np);

    assert_int_equal(stanza_resolve_nodepool(never, never, NOW, &np), 0);
    assert_string_equal(np.message, "no permitted window within 10 years: neither the node "
                                    "pool nor its hosted cluster permits changes");
    stanza_nodepool_free(&np);
    stanza_nodepool_free(NULL);
    sched_unref(never);
    sched_unref(own);
    sched_unref(cluster);
}

/* Windows that only start beyond the look-ahead count as none. */
static void test_nodepool_far(void **state)
{
    sched_t *cluster = sched_after(NOW + SCHED_LOOKAHEAD), *own = sched_always();
    sched_t *near = sched_after(NOW + SCHED_LOOKAHEAD - 1);
    stanza_nodepool_t np;

    (void)state;
    assert_int_equal(stanza_resolve_nodepool(own, cluster, NOW, &np), 0);
    assert_int_equal(np.has_window, 0);
    stanza_nodepool_free(&np);
    assert_int_equal(stanza_resolve_nodepool(own, near, NOW, &np), 0);
    assert_int_equal(np.has_window, 1);
    assert_true(np.next.start == NOW + SCHED_LOOKAHEAD - 1);
    stanza_nodepool_free(&np);
    sched_unref(near);
    sched_unref(own);
    sched_unref(cluster);
}

int main(void)
{
    const struct CMUnitTest fixed[] = {
        cmocka_unit_test(test_no_stanza),
        cmocka_unit_test(test_spec_form),
        cmocka_unit_test(test_annotation_form),
        cmocka_unit_test(test_spec_wins),
        cmocka_unit_test(test_policy_kept),
        cmocka_unit_test_setup_teardown(test_resolve_constants, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_by_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_namespace, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_permissive_until, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_restrictive_until, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_invalid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resolve_lookup_error, setup, teardown),
        cmocka_unit_test(test_strategy_names),
        cmocka_unit_test_setup_teardown(test_enforced_strategy, setup, teardown),
        cmocka_unit_test(test_nodepool_narrower),
        cmocka_unit_test(test_nodepool_wider),
        cmocka_unit_test(test_nodepool_never),
        cmocka_unit_test(test_nodepool_far),
    };
    size_t nb = sizeof BAD / sizeof BAD[0], nf = sizeof fixed / sizeof fixed[0], i, n = 0;
    struct CMUnitTest *tests = calloc(nb + nf, sizeof *tests);
    int rc;

    if (tests == NULL)
        return 1;
    for (i = 0; i < nb; i++) {
        tests[n].name = BAD[i].error;
        tests[n].test_func = test_bad;
        tests[n++].initial_state = (void *)&BAD[i];
    }
    for (i = 0; i < nf; i++)
        tests[n++] = fixed[i];
    rc = _cmocka_run_group_tests("stanza", tests, n, NULL, NULL);
    free(tests);
    return rc;
}
