/* test_hold_aging.c: a change held longer than the guard rails'
 * holdAgeWarning is told in a HoldAging Warning Event once per occasion
 * (decide/aging.h), counted, and its age is a metric; the record wakes at
 * the next occasion. The controller writes to a fake API server. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "controller/internal.h"
#include "controller/testutil_ctl.h"
#include "decide/aging.h"
#include "kube/testutil_fakeapi.h"
#include "policy/guard.h"

#define CM "changemanagement.hypershift.openshift.io/"
/* Restricted since the request on 2030-01-01 (now is 2030-01-09 06:00). */
#define HC(name, annotations) HCV(name, "7", annotations)
#define HCV(name, rv, annotations)                                                            \
    "{\"kind\":\"HostedCluster\",\"metadata\":{\"namespace\":\"clusters\",\"name\":\"" name    \
    "\",\"uid\":\"u-" name "\",\"resourceVersion\":\"" rv "\",\"generation\":1,\"annotations\":{" \
    "\"" CM "strategy\":\"Restrictive\"" annotations "}},"                                     \
    "\"spec\":{\"infraID\":\"" name "-x1\",\"release\":{\"image\":\"r:1\"}}}"
#define ASKED(at)                                                                             \
    ",\"" CM "requested-release-image\":\"r:2\",\"" CM "requested-by\":\"ocm\",\"" CM         \
    "requested-at\":\"" at "\""

static const char *answer(const fakeapi_req_t *r, int *status, void *ud)
{
    (void)r;
    (void)ud;
    *status = 200;
    return "{}";
}

/* How many HoldAging Events were posted, and the last one's body. */
static int aging_events(const testutil_ctl_api_t *t, const char **last)
{
    int n = 0;
    for (int i = 0; i < fakeapi_count(t->api); i++) {
        const fakeapi_req_t *r = fakeapi_nth(t->api, i);
        if (strcmp(r->method, "POST") == 0 && strstr(r->path, "/events") &&
            strstr(r->body, "\"" DECIDE_AGING_REASON "\"")) {
            n++;
            *last = r->body;
        }
    }
    return n;
}

typedef struct seen {
    double age[4];
    char names[4][16];
    int n;
} seen_t;

static void take(const ctl_object_metrics_t *m, void *ud)
{
    seen_t *s = ud;
    assert_true(s->n < 4);
    s->age[s->n] = m->held_age;
    snprintf(s->names[s->n], sizeof(s->names[0]), "%s", m->name);
    s->n++;
}

static double age_of(const seen_t *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->names[i], name) == 0)
            return s->age[i];
    fail_msg("no metrics for %s", name);
    return 0;
}

static void test_told_once_per_occasion(void **state)
{
    (void)state;
    testutil_ctl_api_t t;
    const char *body = NULL;
    testutil_ctl_api_start(&t, answer, NULL, "2030-01-09T06:00:00Z");
    t.c->admission_holds = true;
    t.c->hold_age = 7 * 86400;
    testutil_ctl_add(&t.c->hcs, HC("old", ASKED("2030-01-01T00:00:00Z")));
    testutil_ctl_add(&t.c->hcs, HC("new", ASKED("2030-01-05T00:00:00Z")));
    testutil_ctl_add(&t.c->hcs, HC("none", ""));
    while (ctl_queue_pop(&t.c->queue))
        ;
    record_t *old = ctl_record_get(t.c, R_HC, "clusters", "old");
    record_t *young = ctl_record_get(t.c, R_HC, "clusters", "new");
    record_t *none = ctl_record_get(t.c, R_HC, "clusters", "none");
    ctl_reconcile(t.c, old);
    ctl_reconcile(t.c, young);
    ctl_reconcile(t.c, none);
    testutil_ctl_api_settle(&t);
    /* only the change held for 8 days is told, in words */
    assert_int_equal(aging_events(&t, &body), 1);
    assert_non_null(strstr(body, "u-old"));
    assert_non_null(strstr(body, "\"Warning\""));
    assert_non_null(strstr(body, "has been held for 8d 6h (requested at 2030-01-01T00:00:00Z), "
                                 "longer than the guard rails' holdAgeWarning (7d)"));
    assert_non_null(strstr(body, "no window lets it through yet"));
    assert_int_equal(ctl_get_stats(t.c)->hold_aging[0], 1);
    /* the record wakes at the next occasion, a week after the first */
    assert_true(ev_is_active(&old->timer));
    double left = ev_timer_remaining(t.loop, &old->timer);
    if (left > 6 * 86400.0 + 18 * 3600 + 1)
        fail_msg("woken in %.0f s, after the next occasion", left);
    /* the younger one wakes when it reaches the warning (2030-01-12) */
    left = ev_timer_remaining(t.loop, &young->timer);
    if (left > 2 * 86400.0 + 18 * 3600 + 1)
        fail_msg("the younger hold wakes in %.0f s, after its warning", left);
    /* decided again within the occasion (the watch brought our writes
     * back): not told again */
    testutil_ctl_add(&t.c->hcs, HCV("old", "9", ASKED("2030-01-01T00:00:00Z")));
    while (ctl_queue_pop(&t.c->queue))
        ;
    ctl_reconcile(t.c, old);
    testutil_ctl_api_settle(&t);
    assert_int_equal(aging_events(&t, &body), 1);
    assert_int_equal(ctl_get_stats(t.c)->hold_aging[0], 1);
    /* a week later: told again */
    t.c->opts.clock.sim0 += 7 * 86400;
    testutil_ctl_add(&t.c->hcs, HCV("old", "11", ASKED("2030-01-01T00:00:00Z")));
    while (ctl_queue_pop(&t.c->queue))
        ;
    ctl_reconcile(t.c, old);
    testutil_ctl_api_settle(&t);
    assert_int_equal(aging_events(&t, &body), 2);
    assert_non_null(strstr(body, "has been held for 15d 6h (requested"));
    /* the metric: the age of each held change, none for the object holding none */
    seen_t s = {0};
    ctl_foreach_object_metrics(t.c, take, &s);
    /* (the clock runs on in real seconds: under valgrind a few pass) */
    double old_age = age_of(&s, "old"), new_age = age_of(&s, "new");
    if (old_age < 15 * 86400.0 + 6 * 3600 || old_age > 15 * 86400.0 + 6 * 3600 + 60)
        fail_msg("old's age %.0f s, want 15d 6h", old_age);
    if (new_age - old_age != -4 * 86400.0)
        fail_msg("new's age %.0f s, want 4 days less than old's (%.0f s)", new_age, old_age);
    assert_true(age_of(&s, "none") == -1);
    assert_true(ctl_hold_age_warning(t.c) == 7 * 86400);
    /* no warning: never told, no wake for it */
    t.c->hold_age = decide_aging_warning(-1);
    assert_true(ctl_hold_age_warning(t.c) == 0);
    t.c->opts.clock.sim0 += 7 * 86400;
    testutil_ctl_add(&t.c->hcs, HCV("old", "13", ASKED("2030-01-01T00:00:00Z")));
    while (ctl_queue_pop(&t.c->queue))
        ;
    ctl_reconcile(t.c, old);
    testutil_ctl_api_settle(&t);
    assert_int_equal(aging_events(&t, &body), 2);
    testutil_ctl_api_stop(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_told_once_per_occasion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
