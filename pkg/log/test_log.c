/* Unit tests for pkg/log: the once-only set behind warnings worth saying once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "log/log.h"

/* A key is first once; distinct keys are each first once; when the set is
 * full every key, old or new, answers false (no unbounded growth, no flood). */
static void test_log_once(void **state)
{
    log_once_t set;
    char key[32];
    int i;

    (void)state;
    memset(&set, 0, sizeof(set));
    assert_true(log_once_first(&set, "unknown field \"status.changeManagement\""));
    assert_false(log_once_first(&set, "unknown field \"status.changeManagement\""));
    assert_true(log_once_first(&set, "unknown field \"spec.changeManagement\""));
    assert_true(log_once_first(&set, ""));
    assert_false(log_once_first(&set, ""));
    for (i = 3; i < LOG_ONCE_SLOTS; i++) {
        snprintf(key, sizeof(key), "key %d", i);
        assert_true(log_once_first(&set, key));
    }
    assert_int_equal(set.n, LOG_ONCE_SLOTS);
    assert_false(log_once_first(&set, "one more distinct key"));
    assert_false(log_once_first(&set, "key 7"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_log_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
