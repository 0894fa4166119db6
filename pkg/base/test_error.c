/*
 * Unit tests for base/error: the one code space and the one message
 * formatter of the tree.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/error.h"

/* hcp_errf returns the code it was given, so a failure reads as one line. */
static void test_errf_returns_code_and_formats(void **state)
{
    char err[64];

    (void)state;
    assert_int_equal(hcp_errf(err, sizeof err, HCP_EINVAL, "spec.%s: %d is too large", "x", 7),
                     HCP_EINVAL);
    assert_string_equal(err, "spec.x: 7 is too large");
    assert_int_equal(hcp_errf(err, sizeof err, HCP_ENOMEM, "out of memory"), HCP_ENOMEM);
    assert_string_equal(err, "out of memory");
}

/* A long message is cut to the buffer, always NUL-terminated. */
static void test_errf_truncates(void **state)
{
    char err[8];

    (void)state;
    memset(err, 'x', sizeof err);
    assert_int_equal(hcp_errf(err, sizeof err, HCP_EPARSE, "%s", "0123456789"), HCP_EPARSE);
    assert_string_equal(err, "0123456");
}

/* err may be NULL or errlen 0: nothing is written, the code still returns. */
static void test_errf_without_buffer(void **state)
{
    char err[4] = "abc";

    (void)state;
    assert_int_equal(hcp_errf(NULL, 16, HCP_EIO, "ignored"), HCP_EIO);
    assert_int_equal(hcp_errf(err, 0, HCP_ECONFIG, "ignored"), HCP_ECONFIG);
    assert_string_equal(err, "abc");
}

static int call_verrf(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int call_verrf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = hcp_verrf(err, errlen, code, fmt, ap);
    va_end(ap);
    return rc;
}

static void test_verrf(void **state)
{
    char err[32];

    (void)state;
    assert_int_equal(call_verrf(err, sizeof err, HCP_ESTATE, "%s %u", "state", 3u), HCP_ESTATE);
    assert_string_equal(err, "state 3");
}

/* Every code has its own name; the errno-based ones are negative errno
 * values, and the others do not collide with them or with each other. */
static void test_codes_are_distinct_and_named(void **state)
{
    static const int codes[] = {HCP_OK,         HCP_EINVAL, HCP_ENOMEM,    HCP_EIO,
                                HCP_EEXIST,     HCP_ERANGE, HCP_ECANCELED, HCP_ECONFIG,
                                HCP_ETRANSPORT, HCP_ETLS,   HCP_EHTTP,     HCP_EPARSE,
                                HCP_ELISTEN,    HCP_EFULL,  HCP_ESTATE,    HCP_ECALLBACK};
    size_t n = sizeof codes / sizeof codes[0], i, j;

    (void)state;
    assert_int_equal(HCP_EINVAL, -EINVAL);
    assert_int_equal(HCP_ENOMEM, -ENOMEM);
    assert_int_equal(HCP_ERANGE, -ERANGE);
    for (i = 0; i < n; i++) {
        assert_true(codes[i] <= 0);
        assert_string_not_equal(hcp_strerror(codes[i]), "unknown error");
        for (j = i + 1; j < n; j++) {
            assert_int_not_equal(codes[i], codes[j]);
            assert_string_not_equal(hcp_strerror(codes[i]), hcp_strerror(codes[j]));
        }
    }
    assert_string_equal(hcp_strerror(HCP_ETLS), "TLS error");
    assert_string_equal(hcp_strerror(-99999), "unknown error");
    assert_string_equal(hcp_strerror(1), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errf_returns_code_and_formats),
        cmocka_unit_test(test_errf_truncates),
        cmocka_unit_test(test_errf_without_buffer),
        cmocka_unit_test(test_verrf),
        cmocka_unit_test(test_codes_are_distinct_and_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
