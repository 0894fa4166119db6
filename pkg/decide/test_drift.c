/* test_drift.c: the pure parts of the remediation under a held drift
 * (drift.h): which conditions are read in either served version of Cluster
 * API, which machines are remediable, and the delete's preconditions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "decide/drift.h"
#include "decide/slim.h"

static json_t *j(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    assert_non_null(v);
    return v;
}

/* v1beta1 serves the current conditions under status.v1beta2 beside its
 * own; v1beta2 under status.conditions. */
static void test_conditions_either_version(void **state)
{
    (void)state;
    json_t *b1 = j("{\"status\":{\"conditions\":[{\"type\":\"Remediating\",\"status\":\"False\"}],"
                   "\"v1beta2\":{\"conditions\":[{\"type\":\"Remediating\",\"status\":\"True\"}]}}}");
    json_t *b2 = j("{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"status\":{\"conditions\":"
                   "[{\"type\":\"Ready\",\"status\":\"True\"},"
                   "{\"type\":\"Remediating\",\"status\":\"True\"}]}}");
    json_t *no = j("{\"status\":{\"conditions\":[{\"type\":\"Remediating\",\"status\":\"False\"}]}}");
    json_t *bad = j("{\"status\":{\"conditions\":{\"type\":\"Remediating\"},\"v1beta2\":7}}");
    assert_true(decide_ms_remediating(b1));
    assert_true(decide_ms_remediating(b2));
    assert_false(decide_ms_remediating(no));
    assert_false(decide_ms_remediating(bad));
    assert_null(decide_capi_conditions(bad));
    /* The MachineSet's slim view carries it. */
    decide_capi_t *ms = decide_capi_extract(DECIDE_MS, b1);
    assert_true(ms->remediating);
    decide_capi_free(ms);
    ms = decide_capi_extract(DECIDE_MS, no);
    assert_false(ms->remediating);
    decide_capi_free(ms);
    json_decref(b1);
    json_decref(b2);
    json_decref(no);
    json_decref(bad);
}

#define MACHINE(meta, health, owner, reason)                                                  \
    "{\"metadata\":{\"name\":\"m\",\"uid\":\"u1\",\"resourceVersion\":\"42\"" meta "},"      \
    "\"status\":{\"conditions\":[{\"type\":\"HealthCheckSucceeded\",\"status\":\"" health    \
    "\"},{\"type\":\"OwnerRemediated\",\"status\":\"" owner "\",\"reason\":\"" reason "\"}]}}"

static void test_remediable(void **state)
{
    (void)state;
    struct {
        const char *m;
        bool want;
    } cases[] = {
        {MACHINE("", "False", "False", "CannotBeRemediated"), true},
        {MACHINE(",\"deletionTimestamp\":null", "False", "False", "CannotBeRemediated"), true},
        /* already being deleted */
        {MACHINE(",\"deletionTimestamp\":\"2030-01-01T00:00:00Z\"", "False", "False",
                 "CannotBeRemediated"), false},
        /* healthy again */
        {MACHINE("", "True", "False", "CannotBeRemediated"), false},
        /* Cluster API remediates it itself (the current revision) */
        {MACHINE("", "False", "False", "WaitingForRemediation"), false},
        {MACHINE("", "False", "True", "CannotBeRemediated"), false},
        /* the MachineHealthCheck did not allow remediation (no OwnerRemediated) */
        {"{\"metadata\":{\"name\":\"m\"},\"status\":{\"conditions\":[{\"type\":"
         "\"HealthCheckSucceeded\",\"status\":\"False\"}]}}", false},
        {"{\"status\":\"broken\"}", false},
        {"[]", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *m = j(cases[i].m);
        if (decide_drift_remediable(m) != cases[i].want)
            fail_msg("case %zu: %s", i, cases[i].m);
        json_decref(m);
    }
}

static void test_delete_preconditions(void **state)
{
    (void)state;
    json_t *m = j(MACHINE("", "False", "False", "CannotBeRemediated"));
    json_t *o = decide_drift_remediation_delete(m);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "kind")), "DeleteOptions");
    json_t *p = json_object_get(o, "preconditions");
    assert_string_equal(json_string_value(json_object_get(p, "uid")), "u1");
    assert_string_equal(json_string_value(json_object_get(p, "resourceVersion")), "42");
    json_decref(o);
    json_decref(m);
    m = j("{\"metadata\":{\"name\":\"m\",\"uid\":\"u1\"}}");
    assert_null(decide_drift_remediation_delete(m)); /* no version: no delete */
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conditions_either_version),
        cmocka_unit_test(test_remediable),
        cmocka_unit_test(test_delete_preconditions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
