/* test_skew.c: NodePools too far behind a requested control-plane release
 * (guard rails' maxNodePoolSkew). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "decide/skew.h"
#include "decide/testutil_decide.h"
#include "decide/version.h"

#define IMG(v) "quay.io/openshift-release-dev/ocp-release:" v "-x86_64"

static decide_np_t *pool(const char *spec_version, const char *status_version)
{
    char text[512];
    snprintf(text, sizeof(text),
             "{\"spec\":{\"clusterName\":\"a\",\"release\":{\"image\":\"%s\"}}%s%s%s}",
             spec_version ? spec_version : "quay.io/x@sha256:00",
             status_version ? ",\"status\":{\"version\":\"" : "",
             status_version ? status_version : "", status_version ? "\"}" : "");
    json_t *j = tu_doc(text);
    decide_np_t *np = decide_np_extract(j);
    json_decref(j);
    assert_non_null(np);
    return np;
}

/* One line of minors: 5.0 is 4.23, as HyperShift counts. */
static void test_minor_line(void **state)
{
    (void)state;
    long m;
    assert_int_equal(decide_version_minor_line("4.17.3", &m), 0);
    assert_int_equal(m, 17);
    assert_int_equal(decide_version_minor_line("5.0.0", &m), 0);
    assert_int_equal(m, 23);
    assert_int_equal(decide_version_minor_line("5.2.1-rc.1", &m), 0);
    assert_int_equal(m, 25);
    assert_int_equal(decide_version_minor_line("3.11.0", &m), -1);
    assert_int_equal(decide_version_minor_line("4.17", &m), -1);
    assert_int_equal(decide_version_minor_line(NULL, &m), -1);
}

static void test_check(void **state)
{
    (void)state;
    decide_np_t *old = pool(IMG("4.17.0"), "4.17.3");   /* runs 4.17.3 */
    decide_np_t *mid = pool(IMG("4.18.1"), NULL);       /* by its image's tag */
    decide_np_t *unk = pool(NULL, NULL);                /* by digest, no status */
    decide_np_t *held = pool(IMG("4.16.0"), "4.16.0");
    decide_skew_pool_t pools[] = {{"old", old}, {"mid", mid}, {"unknown", unk}};
    decide_skew_t sk;
    char msg[1024];

    /* 4.20 is 3 ahead of 4.17: allowed */
    decide_skew_check("spec.release.image", IMG("4.20.0"), IMG("4.17.3"), pools, 3, 3, &sk, msg,
                      sizeof(msg));
    assert_true(sk.judged);
    assert_string_equal(sk.target, "4.20.0");
    assert_int_equal(sk.over, 0);
    assert_int_equal(sk.unknown, 1);
    assert_string_equal(msg, "");
    /* 4.21 is 4 ahead of 4.17 (status.version, not the spec's tag) */
    decide_skew_check("spec.release.image", IMG("4.21.0"), IMG("4.17.3"), pools, 3, 3, &sk, msg,
                      sizeof(msg));
    assert_int_equal(sk.over, 1);
    assert_string_equal(msg,
                        "spec.release.image: release 4.21.0 would leave NodePools more minor "
                        "versions behind their control plane than the guard rails' "
                        "maxNodePoolSkew (3) allows: old runs 4.17.3 (4 minor versions "
                        "behind). Upgrade those NodePools first (a held NodePool release goes "
                        "at its window), or ask for a release at most 3 minor versions ahead "
                        "of them.");
    /* a tighter bound names both */
    decide_skew_check("spec.release.image", IMG("4.20.0"), IMG("4.17.3"), pools, 3, 1, &sk, msg,
                      sizeof(msg));
    assert_int_equal(sk.over, 2);
    assert_non_null(strstr(msg, "old runs 4.17.3 (3 minor versions behind), mid runs 4.18.1 (2 "
                                "minor versions behind)"));
    /* a z-stream leaves nobody further behind, even a pool already over */
    decide_skew_pool_t behind[] = {{"held", held}};
    decide_skew_check("spec.release.image", IMG("4.20.2"), IMG("4.20.1"), behind, 1, 3, &sk, msg,
                      sizeof(msg));
    assert_int_equal(sk.over, 0);
    decide_skew_check("spec.release.image", IMG("4.21.0"), IMG("4.20.1"), behind, 1, 3, &sk, msg,
                      sizeof(msg));
    assert_int_equal(sk.over, 1);
    /* across 5.0 == 4.23: 5.0 is 3 ahead of 4.20, 5.1 four */
    decide_np_t *v420 = pool(IMG("4.20.0"), "4.20.0");
    decide_skew_pool_t p420[] = {{"p", v420}};
    decide_skew_check("spec.release.image", IMG("5.0.0"), NULL, p420, 1, 3, &sk, msg, sizeof(msg));
    assert_int_equal(sk.over, 0);
    decide_skew_check("spec.release.image", IMG("5.1.0"), NULL, p420, 1, 3, &sk, msg, sizeof(msg));
    assert_int_equal(sk.over, 1);
    /* a release by digest is not judged */
    decide_skew_check("spec.release.image", "quay.io/x@sha256:11", NULL, p420, 1, 0, &sk, msg,
                      sizeof(msg));
    assert_false(sk.judged);
    assert_int_equal(sk.over, 0);
    decide_np_free(old);
    decide_np_free(mid);
    decide_np_free(unk);
    decide_np_free(held);
    decide_np_free(v420);
}

/* Ten pools of the longest names: those that fit are named, the rest are
 * "and more", and the sentence is whole. */
static void test_many_long_names(void **state)
{
    (void)state;
    decide_np_t *np = pool(IMG("4.14.0"), NULL);
    char names[10][254], msg[2048];
    decide_skew_pool_t pools[10];
    decide_skew_t sk;
    for (int i = 0; i < 10; i++) {
        memset(names[i], 'a' + i, 253);
        names[i][253] = '\0';
        pools[i] = (decide_skew_pool_t){names[i], np};
    }
    decide_skew_check("spec.release.image", IMG("4.20.0"), NULL, pools, 10, 3, &sk, msg,
                      sizeof(msg));
    assert_int_equal(sk.over, 10);
    assert_non_null(strstr(msg, ", and more. Upgrade those NodePools first"));
    assert_non_null(strstr(msg, "at most 3 minor versions ahead of them."));
    assert_null(strstr(msg, names[9]));
    decide_np_free(np);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_minor_line),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_many_long_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
