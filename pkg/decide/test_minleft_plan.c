/* test_minleft_plan.c: the minimum time left in a plan (decide/minleft.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/plan.h"
#include "decide/testutil_decide.h"

#define MAXOBJ 8
#define H 3600

/* A view of one HostedCluster "a" (and optionally NodePool "np1") with two
 * policies: "weekend" (Saturdays 00:00-06:00 UTC) and "short" (Saturdays
 * 00:00-01:00), whose minimums the test sets. */
typedef struct fake {
    struct {
        decide_kind_t kind;
        const char *name;
        void *data;
    } obj[MAXOBJ];
    int n;
    sched_t *weekend, *shortw;
    sched_time_t cp, workers; /* the policies' spec.minTimeLeft */
    sched_time_t floor;       /* the guard rails' minTimeLeft */
} fake_t;

static bool fget(void *ud, decide_kind_t kind, const char *ns, const char *name, decide_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    for (int i = 0; i < f->n; i++)
        if (f->obj[i].kind == kind && strcmp(f->obj[i].name, name) == 0) {
            *out = (decide_ref_t){f->obj[i].data, "7", "uid-1"};
            return true;
        }
    return false;
}

static int flookup(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    fake_t *f = ud;
    (void)ns;
    if (strcmp(name, "weekend") != 0 && strcmp(name, "short") != 0)
        return 0;
    out->found = out->ready = 1;
    out->sched = strcmp(name, "weekend") == 0 ? f->weekend : f->shortw;
    out->min_left_cp = f->cp;
    out->min_left_workers = f->workers;
    return 0;
}

static sched_time_t ffloor(void *ud, const char *ns)
{
    (void)ns;
    return ((fake_t *)ud)->floor;
}

static void add(fake_t *f, decide_kind_t kind, const char *name, const char *text)
{
    json_error_t e;
    json_t *j = json_loads(text, 0, &e);
    if (!j)
        fail_msg("bad test JSON: %s (%s)", e.text, text);
    void *d = kind == DECIDE_HC ? (void *)decide_hc_extract(j) : (void *)decide_np_extract(j);
    json_decref(j);
    assert_non_null(d);
    assert_true(f->n < MAXOBJ);
    f->obj[f->n].kind = kind;
    f->obj[f->n].name = name;
    f->obj[f->n].data = d;
    f->n++;
}

#define ANN "changemanagement.hypershift.openshift.io/"
/* A HostedCluster with the given annotations (JSON members) and a held
 * release request. */
#define HC(ann)                                                                                \
    "{\"metadata\":{\"annotations\":{" ann ",\"" ANN "requested-release-image\":\"r:2\"}},"    \
    "\"spec\":{\"release\":{\"image\":\"r:1\"}},"                                            \
    "\"status\":{\"version\":{\"desired\":{\"image\":\"r:1\"}}}}"
#define BYPOLICY(p) "\"" ANN "policy\":\"" p "\""

static void setup(fake_t *f, const char *hc_json)
{
    sched_spec_t we = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * H, NULL, 0};
    sched_spec_t sh = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 1 * H, NULL, 0};
    char err[128];
    memset(f, 0, sizeof(*f));
    assert_int_equal(sched_compile(&we, tu_at("2026-03-04T12:00:00Z"), &f->weekend, err, sizeof(err)),
                     0);
    assert_int_equal(sched_compile(&sh, tu_at("2026-03-04T12:00:00Z"), &f->shortw, err, sizeof(err)),
                     0);
    add(f, DECIDE_HC, "a", hc_json);
}

static void teardown(fake_t *f)
{
    for (int i = 0; i < f->n; i++) {
        if (f->obj[i].kind == DECIDE_HC)
            decide_hc_free(f->obj[i].data);
        else
            decide_np_free(f->obj[i].data);
    }
    sched_unref(f->weekend);
    sched_unref(f->shortw);
}

/* Plans kind/name at now into *p (released by the caller). */
static void plan(fake_t *f, decide_kind_t kind, const char *name, const char *now,
                 decide_plan_t *p)
{
    decide_view_t v = {.ud = f, .get = fget, .lookup_policy = flookup, .admission_holds = true,
                       .min_time_left = ffloor};
    char err[256];
    assert_int_equal(decide_plan(&v, kind, "clusters", name, tu_at(now), p, err, sizeof(err)), 0);
    assert_true(p->decided);
}

/* A held release in a 6h window with 2h to be left: let through up to
 * exactly 2h before the end (waking the instant after), held after it with
 * the window, the minimum and the next start in both conditions, waking at
 * the window's end (before the effective start). */
static void test_hc_boundaries(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, HC(BYPOLICY("weekend")));
    f.cp = 2 * H;

    plan(&f, DECIDE_HC, "a", "2026-03-07T04:00:00Z", &p); /* exactly 2h left */
    assert_false(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 2 * H);
    assert_int_equal(p.d.minleft.start, tu_at("2026-03-07T04:00:00Z"));
    assert_int_equal(p.d.wake, tu_at("2026-03-07T04:00:01Z")); /* the tail begins */
    decide_plan_free(&p);

    plan(&f, DECIDE_HC, "a", "2026-03-07T04:00:01Z", &p); /* a second less */
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "MinTimeLeft");
    assert_true(p.d.paused_status);
    assert_string_equal(p.d.paused_reason, "MinTimeLeft");
    assert_string_equal(p.d.paused_message,
                        "No change may start now: the window "
                        "2026-03-07T00:00:00Z\u20132026-03-07T06:00:00Z has less than 2h left (the "
                        "policy's minTimeLeft); the next start is at 2026-03-14T00:00:00Z.");
    assert_string_equal(p.d.pending_reason, "MinTimeLeft");
    assert_string_equal(p.d.pending_message,
                        "Pending changes wait: the window "
                        "2026-03-07T00:00:00Z\u20132026-03-07T06:00:00Z has less than 2h left; the "
                        "next start is at 2026-03-14T00:00:00Z.");
    assert_int_equal(p.d.pending_metric, 2);
    assert_int_equal(p.d.action, DECIDE_PAUSE_NONE); /* no CAPI Cluster in the view */
    assert_int_equal(p.d.minleft.start, tu_at("2026-03-14T00:00:00Z"));
    assert_int_equal(p.d.wake, tu_at("2026-03-07T06:00:00Z"));
    decide_plan_free(&p);

    /* Outside: ChangesPending names the effective start; wakes there. */
    plan(&f, DECIDE_HC, "a", "2026-03-04T12:00:00Z", &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "OutsideMaintenanceWindow");
    assert_string_equal(p.d.pending_message,
                        "Pending changes wait for the next start at 2026-03-07T00:00:00Z (a "
                        "permitted window with at least 2h left).");
    assert_int_equal(p.d.wake, tu_at("2026-03-07T00:00:00Z"));
    decide_plan_free(&p);

    /* Without a minimum the tail is an ordinary part of the window. */
    f.cp = 0;
    plan(&f, DECIDE_HC, "a", "2026-03-07T05:59:59Z", &p);
    assert_false(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 0);
    assert_int_equal(p.d.wake, tu_at("2026-03-07T06:00:00Z"));
    decide_plan_free(&p);
    teardown(&f);
}

/* A window shorter than the minimum never lets a change start: held at its
 * open, and no start is found when every window is that short. */
static void test_window_shorter_than_minimum(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, HC(BYPOLICY("short")));
    f.cp = 2 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-07T00:00:00Z", &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "MinTimeLeft");
    assert_false(p.d.minleft.found);
    assert_non_null(strstr(p.d.paused_message,
                           "has less than 2h left (the policy's minTimeLeft); no window within "
                           "10 years has that much time."));
    assert_int_equal(p.d.wake, tu_at("2026-03-07T01:00:00Z"));
    decide_plan_free(&p);
    teardown(&f);
}

/* An override in force (PermissiveUntil) lifts the minimum, the guard
 * rails' floor included: the change goes now. After its instant the
 * policy's minimum holds again. */
static void test_override(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, HC(BYPOLICY("weekend") ",\"" ANN "strategy\":\"PermissiveUntil\",\"" ANN
                 "permissive-until\":\"2026-03-07T05:30:00Z\""));
    f.cp = 2 * H;
    f.floor = 3 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-07T05:00:00Z", &p);
    assert_false(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 0);
    decide_plan_free(&p);
    plan(&f, DECIDE_HC, "a", "2026-03-07T05:30:00Z", &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "MinTimeLeft");
    decide_plan_free(&p);
    teardown(&f);
}

/* The guard rails' floor applies when larger than the policy's, and says
 * so; the policy's when larger. */
static void test_guard_floor(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, HC(BYPOLICY("weekend")));
    f.cp = 1 * H;
    f.floor = 3 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-07T03:30:00Z", &p);
    assert_true(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 3 * H);
    assert_int_equal(p.d.minleft.source, DECIDE_MIN_GUARD);
    assert_non_null(strstr(p.d.paused_message, "less than 3h left (the guard rails' minTimeLeft)"));
    decide_plan_free(&p);
    f.cp = 4 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-07T02:30:00Z", &p);
    assert_true(p.d.restricted);
    assert_int_equal(p.d.minleft.source, DECIDE_MIN_POLICY);
    assert_int_equal(p.d.minleft.min, 4 * H);
    decide_plan_free(&p);
    teardown(&f);
}

#define NP(ann)                                                                                \
    "{\"metadata\":{\"annotations\":{" ann "\"" ANN "requested-nodepool-spec\":"               \
    "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"                                      \
    "\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"r:1\"}}}"

/* A NodePool takes workerNodes (its HostedCluster's policy's when it has
 * none of its own), never controlPlane; the held request is named. */
static void test_nodepool(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, "{\"metadata\":{\"annotations\":{" BYPOLICY("weekend") "}},\"spec\":{}}");
    add(&f, DECIDE_NP, "np1", NP(""));
    f.cp = 4 * H;
    f.workers = 1 * H;
    plan(&f, DECIDE_NP, "np1", "2026-03-07T04:30:00Z", &p);
    assert_false(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 1 * H);
    decide_plan_free(&p);
    plan(&f, DECIDE_NP, "np1", "2026-03-07T05:30:00Z", &p);
    assert_true(p.d.restricted);
    assert_string_equal(p.d.restricted_reason, "MinTimeLeft");
    assert_non_null(strstr(p.d.pending_message, "The held change ("));
    assert_non_null(strstr(p.d.pending_message, "has less than 1h left"));
    decide_plan_free(&p);
    teardown(&f);
}

/* Objects that did not opt in are never held, whatever the floor. */
static void test_not_opted_in(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    setup(&f, "{\"metadata\":{},\"spec\":{}}");
    f.floor = 8 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-07T05:30:00Z", &p);
    assert_false(p.d.restricted);
    assert_int_equal(p.d.minleft.min, 0);
    decide_plan_free(&p);
    teardown(&f);
}

/* The next start a held change is told (held, window-soon) and the
 * next_change_eta metric: the effective start, not the next window's open.
 * In the tail of a window the timeline alone says "permitted now"; with a
 * window shorter than the minimum it names a window no change can use. */
static void test_next_start_and_eta(void **state)
{
    (void)state;
    fake_t f;
    decide_plan_t p;
    sched_time_t at;
    setup(&f, HC(BYPOLICY("weekend")));
    f.cp = 2 * H;

    plan(&f, DECIDE_HC, "a", "2026-03-07T05:00:00Z", &p); /* the tail: 1h left */
    assert_true(p.d.restricted);
    assert_true(p.d.state.permitted); /* the window is open, but no start */
    assert_true(decide_next_start(&p.d, &at));
    assert_int_equal(at, tu_at("2026-03-14T00:00:00Z"));
    /* eta: the timeline alone says 0 (permitted); the effective start is
     * 7 days less 5 hours away, and counts down between decisions. */
    assert_true(decide_min_left_eta(&p.d.minleft, 0, tu_at("2026-03-07T05:00:00Z")) ==
                7 * 86400 - 5 * H);
    assert_true(decide_min_left_eta(&p.d.minleft, 0, tu_at("2026-03-07T05:30:00Z")) ==
                7 * 86400 - 5.5 * H);
    assert_true(decide_min_left_eta(&p.d.minleft, 0, tu_at("2026-03-14T00:00:00Z")) == 0);
    decide_plan_free(&p);

    /* Outside a window: the window's open, which is the effective start. */
    plan(&f, DECIDE_HC, "a", "2026-03-04T12:00:00Z", &p);
    assert_true(decide_next_start(&p.d, &at));
    assert_int_equal(at, tu_at("2026-03-07T00:00:00Z"));
    assert_true(decide_min_left_eta(&p.d.minleft, 2.5 * 86400, tu_at("2026-03-04T12:00:00Z")) ==
                2.5 * 86400);
    /* In the run of starts: 0; after the last start it knows, the
     * timeline's value until decided again. */
    assert_true(decide_min_left_eta(&p.d.minleft, 0, tu_at("2026-03-07T04:00:00Z")) == 0);
    assert_true(decide_min_left_eta(&p.d.minleft, 0, tu_at("2026-03-07T04:00:01Z")) == 0);
    assert_true(decide_min_left_eta(&p.d.minleft, 42, tu_at("2026-03-07T04:00:01Z")) == 42);
    decide_plan_free(&p);

    /* Without a minimum: the next window's open; the timeline's eta. */
    f.cp = 0;
    plan(&f, DECIDE_HC, "a", "2026-03-04T12:00:00Z", &p);
    assert_true(decide_next_start(&p.d, &at));
    assert_int_equal(at, tu_at("2026-03-07T00:00:00Z"));
    assert_true(decide_min_left_eta(&p.d.minleft, 123, tu_at("2026-03-04T12:00:00Z")) == 123);
    decide_plan_free(&p);
    teardown(&f);

    /* Every window shorter than the minimum: no start, though the
     * timeline has a next window; eta -1. */
    setup(&f, HC(BYPOLICY("short")));
    f.cp = 2 * H;
    plan(&f, DECIDE_HC, "a", "2026-03-04T12:00:00Z", &p);
    assert_true(p.d.restricted && p.d.state.has_next);
    assert_false(decide_next_start(&p.d, &at));
    assert_true(at == SCHED_POS_INF);
    assert_true(decide_min_left_eta(&p.d.minleft, 2.5 * 86400, tu_at("2026-03-04T12:00:00Z")) ==
                -1);
    decide_plan_free(&p);
    teardown(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hc_boundaries),    cmocka_unit_test(test_window_shorter_than_minimum),
        cmocka_unit_test(test_override),         cmocka_unit_test(test_guard_floor),
        cmocka_unit_test(test_nodepool),         cmocka_unit_test(test_not_opted_in),
        cmocka_unit_test(test_next_start_and_eta),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
