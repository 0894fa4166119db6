/* Tests of pkg/decide/companion: names that cannot collide, the companion's
 * status as a function of the plan and the status last written (history,
 * held-since), and the digest that decides whether to write. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/companion.h"
#include "policy/testutil_policy.h"
#include "schedule/testutil_sched.h"

#define T(lit) ((sched_time_t)tu_ts(lit))
#define J(text) tu_json(text)

static const char *S(const json_t *doc, const char *path)
{
    return json_string_value(hcp_json_path(doc, path));
}

/* A HostedCluster following Saturday windows 00:00-06:00 UTC by policy,
 * with a release requested (4.17.1) that is not running (4.17.0), planned
 * at `now` (no CAPI Cluster). */
typedef struct {
    sched_t *sat;
    stanza_resolution_t res;
    decide_hc_t *hc;
    decide_plan_t p;
} fixture_t;

static void plan_at(fixture_t *f, sched_time_t now)
{
    json_decref(f->p.status_doc);
    memset(&f->p, 0, sizeof(f->p));
    f->p.kind = DECIDE_HC;
    f->p.present = f->p.decided = true;
    f->p.self = (decide_ref_t){f->hc, "7", "uid-hc1"};
    f->p.managed = &f->hc->m;
    f->p.res = &f->res;
    assert_int_equal(decide_hc(f->hc, &f->res, NULL, false, now, &f->p.d), 0);
    f->p.status_doc = decide_status_doc(DECIDE_HC, f->hc, &f->p.d, &f->res, NULL, now);
    assert_non_null(f->p.status_doc);
}

static void setup(fixture_t *f, const char *release)
{
    char text[512];
    sched_spec_t sp = {"UTC", "FREQ=WEEKLY;BYDAY=SA", 0, 6 * 3600, NULL, 0};
    char err[128];
    memset(f, 0, sizeof(*f));
    assert_int_equal(sched_compile(&sp, T("2026-01-01T00:00:00Z"), &f->sat, err, sizeof(err)), 0);
    f->res.sched = f->sat;
    f->res.strategy = STANZA_BY_POLICY;
    f->res.reason = "ByPolicy";
    f->res.policy_strategy = "MaintenanceSchedule";
    snprintf(text, sizeof(text),
             "{\"metadata\":{\"name\":\"hc1\",\"annotations\":{"
             "\"changemanagement.hypershift.openshift.io/policy\":\"weekend\"}},"
             "\"spec\":{\"release\":{\"image\":\"%s\"}},"
             "\"status\":{\"version\":{\"desired\":{\"image\":\"r:4.17.0\"}}}}",
             release);
    json_t *obj = J(text);
    f->hc = decide_hc_extract(obj);
    json_decref(obj);
    assert_non_null(f->hc);
}

static void teardown(fixture_t *f)
{
    json_decref(f->p.status_doc);
    decide_hc_free(f->hc);
    sched_unref(f->sat);
}

static void test_names(void **state)
{
    (void)state;
    char a[DECIDE_COMPANION_NAMELEN], b[DECIDE_COMPANION_NAMELEN], longname[260];
    decide_kind_t k;
    const char *t;
    /* A HostedCluster and a NodePool of one name: two names. */
    assert_int_equal(decide_companion_name(DECIDE_HC, "x", a, sizeof(a)), 0);
    assert_int_equal(decide_companion_name(DECIDE_NP, "x", b, sizeof(b)), 0);
    assert_string_equal(a, "hostedcluster.x");
    assert_string_equal(b, "nodepool.x");
    /* Not even a NodePool named after the other prefix can collide. */
    assert_int_equal(decide_companion_name(DECIDE_NP, "hostedcluster.x", b, sizeof(b)), 0);
    assert_string_not_equal(a, b);
    assert_true(decide_companion_target(b, &k, &t));
    assert_int_equal(k, DECIDE_NP);
    assert_string_equal(t, "hostedcluster.x");
    assert_true(decide_companion_target(a, &k, &t));
    assert_int_equal(k, DECIDE_HC);
    assert_string_equal(t, "x");
    assert_false(decide_companion_target("x", &k, &t));
    assert_false(decide_companion_target("nodepool.", &k, &t));
    /* 253 characters at most, prefix included. */
    memset(longname, 'n', 239);
    longname[239] = '\0';
    assert_int_equal(decide_companion_name(DECIDE_HC, longname, a, sizeof(a)), 0);
    assert_int_equal(strlen(a), 253);
    longname[239] = 'n';
    longname[240] = '\0';
    assert_int_equal(decide_companion_name(DECIDE_HC, longname, a, sizeof(a)), HCP_EINVAL);
    assert_int_equal(decide_companion_name(DECIDE_MD, "x", a, sizeof(a)), HCP_EINVAL);
}

/* Outside the window with a release waiting, an hour later (nothing
 * changes), then in the next window (a transition; the change goes). */
static void test_status_history_and_held(void **state)
{
    (void)state;
    fixture_t f;
    setup(&f, "r:4.17.1");
    sched_time_t t1 = T("2026-01-03T07:00:00Z");
    plan_at(&f, t1);
    json_t *s1 = decide_companion_status(&f.p, NULL, t1);
    assert_non_null(s1);
    assert_string_equal(S(s1, "strategy"), "ByPolicy");
    assert_string_equal(S(s1, "policy"), "weekend");
    assert_string_equal(S(s1, "behavior.current.state"), "ChangesPaused");
    assert_string_equal(S(s1, "behavior.current.startTime"), "2026-01-03T06:00:00Z");
    assert_string_equal(S(s1, "behavior.next.startTime"), "2026-01-10T00:00:00Z");
    assert_int_equal(json_array_size(hcp_json_path(s1, "behavior.history")), 1);
    assert_null(hcp_json_path(json_array_get(hcp_json_path(s1, "behavior.history"), 0),
                              "endTime")); /* nulls are left out */
    assert_string_equal(S(s1, "heldChange.summary"), "release r:4.17.1");
    assert_string_equal(S(s1, "heldChange.release"), "r:4.17.1");
    assert_string_equal(S(s1, "heldChange.since"), "2026-01-03T07:00:00Z");

    /* An hour later: the same status, so nothing to write. */
    sched_time_t t2 = t1 + 3600;
    plan_at(&f, t2);
    json_t *s2 = decide_companion_status(&f.p, s1, t2);
    assert_true(json_equal(s1, s2));

    /* In the next window: a transition on top; the held change is going. */
    sched_time_t t3 = T("2026-01-10T01:00:00Z");
    plan_at(&f, t3);
    json_t *s3 = decide_companion_status(&f.p, s2, t3);
    json_t *h = hcp_json_path(s3, "behavior.history");
    assert_int_equal(json_array_size(h), 2);
    assert_string_equal(S(json_array_get(h, 0), "state"), "ChangesUnpaused");
    assert_string_equal(S(json_array_get(h, 0), "startTime"), "2026-01-10T00:00:00Z");
    assert_string_equal(S(json_array_get(h, 1), "endTime"), "2026-01-10T00:00:00Z");
    assert_null(hcp_json_path(s3, "heldChange"));
    assert_null(hcp_json_path(s3, "behavior.current.exclusion"));
    json_decref(s3);
    json_decref(s2);

    /* Another release requested while held: held since now. */
    teardown(&f);
    setup(&f, "r:4.18.0");
    plan_at(&f, t2);
    json_t *s4 = decide_companion_status(&f.p, s1, t2);
    assert_string_equal(S(s4, "heldChange.summary"), "release r:4.18.0");
    assert_string_equal(S(s4, "heldChange.since"), "2026-01-03T08:00:00Z");
    json_decref(s4);
    json_decref(s1);
    teardown(&f);
}

/* The digest compares what matters as the API server stores it: not
 * metadata, not key order, not null members. */
static void test_digest(void **state)
{
    (void)state;
    fixture_t f;
    setup(&f, "r:4.17.0");
    sched_time_t t = T("2026-01-03T07:00:00Z");
    plan_at(&f, t);
    json_t *st = decide_companion_status(&f.p, NULL, t);
    json_t *obj = decide_companion_object(&f.p, "ns", "hc1", st);
    assert_non_null(obj);
    assert_string_equal(S(obj, "metadata.name"), "hostedcluster.hc1");
    assert_string_equal(S(obj, "kind"), DECIDE_COMPANION_KIND);
    json_t *ref = json_array_get(hcp_json_path(obj, "metadata.ownerReferences"), 0);
    assert_string_equal(S(ref, "uid"), "uid-hc1");
    assert_string_equal(S(ref, "kind"), "HostedCluster");
    assert_string_equal(S(obj, "target.name"), "hc1");
    assert_null(hcp_json_path(st, "heldChange")); /* nothing waits */
    char *d1 = decide_companion_digest(obj);

    /* As served: more metadata, keys in another order, a null member. */
    char *text = json_dumps(obj, JSON_COMPACT);
    json_t *served = J(text);
    free(text);
    json_object_set_new(json_object_get(served, "metadata"), "resourceVersion", json_string("9"));
    json_object_set_new(json_object_get(served, "metadata"), "uid", json_string("u"));
    json_object_set_new(json_object_get(served, "status"), "heldChange", json_null());
    char *d2 = decide_companion_digest(served);
    assert_string_equal(d1, d2);
    free(d2);
    /* Another state, or another owner: different. */
    json_object_set_new(json_object_get(json_object_get(json_object_get(served, "status"),
                                                        "behavior"), "current"),
                        "state", json_string("ChangesUnpaused"));
    d2 = decide_companion_digest(served);
    assert_string_not_equal(d1, d2);
    free(d2);
    json_decref(served);
    f.p.self.uid = "uid-other";
    json_t *obj2 = decide_companion_object(&f.p, "ns", "hc1", st);
    d2 = decide_companion_digest(obj2);
    assert_string_not_equal(d1, d2);
    free(d2);
    json_decref(obj2);

    /* Packed, as the cache keeps it: the same text back, in a fraction of
     * its size; a damaged stream reads as nothing, not as another text. */
    decide_packed_t pk;
    assert_int_equal(decide_companion_pack(obj, &pk), 0);
    char *back = decide_companion_unpack(&pk), *d3 = decide_companion_digest(obj);
    assert_non_null(back);
    assert_string_equal(back, d3);
    assert_string_equal(back, d1);
    assert_int_equal(pk.len, strlen(d3));
    assert_true(pk.zlen * 2 < pk.len);
    free(back);
    free(d3);
    pk.z[pk.zlen / 2] ^= 0x55;
    pk.zlen /= 2;
    assert_null(decide_companion_unpack(&pk));
    decide_packed_free(&pk);
    assert_null(pk.z);

    free(d1);
    json_decref(obj);
    json_decref(st);
    teardown(&f);
}

static void test_wanted(void **state)
{
    (void)state;
    decide_np_t np;
    decide_plan_t p;
    memset(&np, 0, sizeof(np));
    memset(&p, 0, sizeof(p));
    p.kind = DECIDE_NP;
    p.present = true;
    p.managed = &np.m;
    assert_false(decide_companion_wanted(&p)); /* no stanza anywhere */
    p.cluster_stanza = true;
    assert_true(decide_companion_wanted(&p)); /* its HostedCluster constrains it */
    p.kind = DECIDE_HC;
    assert_false(decide_companion_wanted(&p)); /* a HostedCluster: its own stanza only */
    np.m.stanza.present = 1;
    assert_true(decide_companion_wanted(&p));
    p.present = false;
    assert_false(decide_companion_wanted(&p));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_status_history_and_held),
        cmocka_unit_test(test_digest),
        cmocka_unit_test(test_wanted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
