/* test_cmhold.c: the ConfigMaps a restricted NodePool names (cmhold.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "decide/cmhold.h"
#include "decide/testutil_decide.h"

static void test_config_names(void **state)
{
    (void)state;
    json_t *np = tu_doc("{\"spec\": {\"config\": [{\"name\": \"a\"}, {\"name\": 3}, {},"
                   " {\"name\": \"\"}, {\"name\": \"bc\"}, {\"name\": \"x\\ny\"}]}}");
    bool oom = true;
    char *names = decide_np_config_names(np, &oom);
    assert_false(oom);
    assert_string_equal(names, "a\nbc");
    assert_true(decide_config_names_has(names, "a"));
    assert_true(decide_config_names_has(names, "bc"));
    assert_false(decide_config_names_has(names, "b"));
    assert_false(decide_config_names_has(names, "c"));
    assert_false(decide_config_names_has(names, "a\nbc"));
    assert_false(decide_config_names_has(names, ""));
    assert_false(decide_config_names_has(names, NULL));
    assert_false(decide_config_names_has(NULL, "a"));
    free(names);
    json_decref(np);

    const char *none[] = {"{}", "{\"spec\": {}}", "{\"spec\": {\"config\": {}}}",
                          "{\"spec\": {\"config\": []}}", "{\"spec\": {\"config\": [{}]}}", "[]"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
        np = tu_doc(none[i]);
        assert_null(decide_np_config_names(np, &oom));
        assert_false(oom);
        json_decref(np);
    }
    assert_null(decide_np_config_names(NULL, NULL));
}

static void test_content_changed(void **state)
{
    (void)state;
    struct {
        const char *old, *new;
        bool changed;
    } c[] = {
        {"{\"data\": {\"k\": \"v\"}}", "{\"data\": {\"k\": \"v\"}}", false},
        {"{\"data\": {\"k\": \"v\"}, \"metadata\": {\"labels\": {\"a\": \"b\"}}}",
         "{\"data\": {\"k\": \"v\"}, \"metadata\": {\"labels\": {\"a\": \"c\"}}}", false},
        {"{\"data\": {\"k\": \"v\"}}", "{\"data\": {\"k\": \"w\"}}", true},
        {"{\"data\": {\"k\": \"v\"}}", "{\"data\": {\"k\": \"v\", \"l\": \"v\"}}", true},
        {"{\"data\": {\"k\": \"v\"}}", "{}", true},
        {"{}", "{\"data\": {\"k\": \"v\"}}", true},
        {"{}", "{\"data\": {}}", false},
        {"{\"data\": {}}", "{\"data\": null}", false},
        {"{\"binaryData\": {\"b\": \"AA==\"}}", "{\"binaryData\": {\"b\": \"AQ==\"}}", true},
        {"{\"binaryData\": {\"b\": \"AA==\"}}", "{\"binaryData\": {\"b\": \"AA==\"}}", false},
        {"{\"data\": {\"k\": \"v\"}}", "{\"data\": {\"k\": \"v\"}, \"binaryData\": {\"b\": \"AA==\"}}",
         true},
        {"{\"data\": {\"k\": \"v\"}, \"immutable\": false}",
         "{\"data\": {\"k\": \"v\"}, \"immutable\": true}", false},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        json_t *o = tu_doc(c[i].old), *n = tu_doc(c[i].new);
        if (decide_cm_content_changed(o, n) != c[i].changed)
            fail_msg("case %zu: %s -> %s", i, c[i].old, c[i].new);
        json_decref(o);
        json_decref(n);
    }
}

static void test_refusal(void **state)
{
    (void)state;
    char msg[2048];
    decide_cm_pool_t one[] = {{"workers", "2026-03-07T01:00:00Z"}};
    decide_cm_refusal(false, "tuning", one, 1, msg, sizeof(msg));
    assert_non_null(strstr(msg, "ConfigMap tuning is named by spec.config of NodePool workers "
                                "(changes restricted until 2026-03-07T01:00:00Z)"));
    assert_non_null(strstr(msg, "Create a new ConfigMap with the new content and change "
                                "spec.config to name it"));
    assert_non_null(strstr(msg, "or make this edit in a window"));
    assert_null(strstr(msg, "deleting"));

    decide_cm_refusal(true, "tuning", one, 1, msg, sizeof(msg));
    assert_non_null(strstr(msg, "deleting it would fail the pool's configuration"));
    assert_non_null(strstr(msg, "Delete it in a window"));

    decide_cm_pool_t six[] = {{"a", ""}, {"b", NULL}, {"c", "T"}, {"d", "T"}, {"e", "T"},
                              {"f", "T"}};
    decide_cm_refusal(false, "cm", six, 6, msg, sizeof(msg));
    assert_non_null(strstr(msg, "NodePools a (changes restricted until a window opens; none is "
                                "scheduled), b (changes restricted until a window opens; none "
                                "is scheduled), c (changes restricted until T), d ("));
    assert_non_null(strstr(msg, " and 2 more restricted"));
    assert_null(strstr(msg, "e ("));

    /* Cut, never overrun. */
    char small[40];
    memset(small, 'x', sizeof(small));
    decide_cm_refusal(false, "tuning", one, 1, small, 32);
    assert_int_equal(strlen(small), 31);
    assert_int_equal(small[32], 'x');
}

/* Which ConfigMaps carry the opted-in label: those an opted-in NodePool
 * names, and only those. */
static void test_label_wanted(void **state)
{
    (void)state;
    json_t *j = tu_doc("{\"metadata\": {\"annotations\": {"
                       "\"changemanagement.hypershift.openshift.io/policy\": \"weekend\"}},"
                       " \"spec\": {\"config\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}}");
    decide_np_t *own = decide_np_extract(j);
    json_decref(j);
    j = tu_doc("{\"spec\": {\"config\": [{\"name\": \"a\"}]}}");
    decide_np_t *bare = decide_np_extract(j);
    json_decref(j);
    assert_non_null(own);
    assert_non_null(bare);

    /* Its own stanza: the names it lists, nothing else. */
    assert_true(decide_cm_named(own, false, "a"));
    assert_true(decide_cm_named(own, false, "b"));
    assert_false(decide_cm_named(own, false, "c"));
    assert_false(decide_cm_named(own, false, ""));
    /* No stanza of its own: named only while its HostedCluster opted in. */
    assert_false(decide_cm_named(bare, false, "a"));
    assert_true(decide_cm_named(bare, true, "a"));
    assert_false(decide_cm_named(bare, true, "b"));
    assert_false(decide_cm_named(NULL, true, "a"));

    /* A ConfigMap shared by two pools stays named while either names it. */
    bool named = decide_cm_named(bare, false, "a") || decide_cm_named(own, false, "a");
    assert_int_equal(decide_cm_label_action(named, true), 0);

    assert_int_equal(decide_cm_label_action(true, false), 1);
    assert_int_equal(decide_cm_label_action(false, true), -1);
    assert_int_equal(decide_cm_label_action(true, true), 0);
    assert_int_equal(decide_cm_label_action(false, false), 0);
    decide_np_free(own);
    decide_np_free(bare);
}

/* The patch touches the label and nothing else, unconditionally. */
static void test_label_patch(void **state)
{
    (void)state;
    json_t *add = decide_cm_label_patch(true), *rm = decide_cm_label_patch(false);
    json_t *want_add = tu_doc("{\"metadata\": {\"labels\": {"
                              "\"changemanagement.hypershift.openshift.io/opted-in\": \"true\"}}}");
    json_t *want_rm = tu_doc("{\"metadata\": {\"labels\": {"
                             "\"changemanagement.hypershift.openshift.io/opted-in\": null}}}");
    assert_true(json_equal(add, want_add));
    assert_true(json_equal(rm, want_rm));
    json_decref(add);
    json_decref(rm);
    json_decref(want_add);
    json_decref(want_rm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_names),
        cmocka_unit_test(test_content_changed),
        cmocka_unit_test(test_refusal),
        cmocka_unit_test(test_label_wanted),
        cmocka_unit_test(test_label_patch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
