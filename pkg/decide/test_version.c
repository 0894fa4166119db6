/* test_version.c: release versions from pull specs and their semver order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "decide/version.h"

/* The order of a and b: -1, 0, 1; 99 when either is no version. */
static int order(const char *a, const char *b)
{
    int cmp = 42;
    if (decide_version_cmp(a, b, &cmp))
        return 99;
    assert_int_not_equal(cmp, 42);
    return cmp < 0 ? -1 : cmp > 0 ? 1 : 0;
}

static void test_order(void **state)
{
    (void)state;
    assert_int_equal(order("4.17.1", "4.17.0"), 1);
    assert_int_equal(order("4.17.0", "4.17.1"), -1);
    assert_int_equal(order("4.17.0", "4.17.0"), 0);
    /* Numerically, not as text. */
    assert_int_equal(order("4.17.10", "4.17.9"), 1);
    assert_int_equal(order("4.9.0", "4.17.0"), -1);
    assert_int_equal(order("5.0.0", "4.99.99"), 1);
    /* A prerelease comes before its release; identifiers in order. */
    assert_int_equal(order("4.17.0-rc.1", "4.17.0"), -1);
    assert_int_equal(order("4.17.0", "4.17.0-rc.1"), 1);
    assert_int_equal(order("4.17.0-rc.2", "4.17.0-rc.10"), -1);
    assert_int_equal(order("4.17.0-ec.3", "4.17.0-rc.0"), -1);
    assert_int_equal(order("4.17.0-rc", "4.17.0-rc.1"), -1);
    assert_int_equal(order("4.17.0-1", "4.17.0-alpha"), -1);
    assert_int_equal(order("4.17.0-0.nightly-2026-08-01-000000", "4.17.0-0.nightly-2026-08-02-000000"), -1);
    /* Build metadata does not count; a leading v is allowed. */
    assert_int_equal(order("4.17.1+abc", "4.17.1"), 0);
    assert_int_equal(order("v4.17.1", "4.17.1"), 0);
    /* Not versions. */
    assert_int_equal(order("4.17", "4.17.0"), 99);
    assert_int_equal(order("4.17.01", "4.17.1"), 99);
    assert_int_equal(order("4.17.1-", "4.17.1"), 99);
    assert_int_equal(order("4.17.1-a..b", "4.17.1"), 99);
    assert_int_equal(order("4.17.1+", "4.17.1"), 99);
    assert_int_equal(order("image-1234abcd", "4.17.1"), 99);
    assert_int_equal(order("", "4.17.1"), 99);
    assert_int_equal(order(NULL, "4.17.1"), 99);
}

static void test_release_version(void **state)
{
    (void)state;
    char v[DECIDE_VERSIONLEN];
    assert_true(decide_release_version("quay.io/openshift-release-dev/ocp-release:4.17.1-x86_64", v,
                                       sizeof(v)));
    assert_string_equal(v, "4.17.1");
    assert_true(decide_release_version("quay.io/openshift-release-dev/ocp-release:4.18.0-rc.2-multi", v,
                                       sizeof(v)));
    assert_string_equal(v, "4.18.0-rc.2");
    assert_true(decide_release_version("registry.example:5000/ocp/release:4.16.3", v, sizeof(v)));
    assert_string_equal(v, "4.16.3");
    /* A registry port is no tag; a digest names no version. */
    assert_false(decide_release_version("registry.example:5000/ocp/release", v, sizeof(v)));
    assert_string_equal(v, "");
    assert_false(decide_release_version("quay.io/ocp-release@sha256:0123abcd", v, sizeof(v)));
    assert_false(decide_release_version("quay.io/ocp-release:4.17.1@sha256:0123abcd", v, sizeof(v)));
    assert_false(decide_release_version("quay.io/ocp-release:latest", v, sizeof(v)));
    assert_false(decide_release_version("quay.io/ocp-release:", v, sizeof(v)));
    assert_false(decide_release_version(NULL, v, sizeof(v)));
    /* Too long for the buffer: no version rather than a cut one. */
    char small[4];
    assert_false(decide_release_version("r:4.17.1", small, sizeof(small)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_release_version),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
