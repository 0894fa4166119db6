/* Tests of pkg/policy/manifest (YAML/JSON manifests to JSON documents) and
 * pkg/policy/quote (escaping untrusted text in messages). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/manifest.h"
#include "policy/policy.h"
#include "policy/quote.h"

static json_t *load_ok(const char *text)
{
    char err[256];
    json_t *docs = NULL;

    if (manifest_load(text, strlen(text), &docs, err, sizeof err) != 0)
        fail_msg("unexpected error: %s", err);
    assert_true(json_is_array(docs));
    return docs;
}

static void load_bad(const char *text, const char *want_prefix)
{
    char err[256];
    json_t *docs = (json_t *)1;

    assert_int_equal(manifest_load(text, strlen(text), &docs, err, sizeof err),
                     HCP_EINVAL);
    assert_null(docs);
    if (strncmp(err, want_prefix, strlen(want_prefix)) != 0)
        fail_msg("error \"%s\" does not start with \"%s\"", err, want_prefix);
}

static void test_json(void **state)
{
    json_t *docs = load_ok("  \n{\"kind\": \"X\", \"n\": 2}");


    (void)state;
    assert_int_equal(json_array_size(docs), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 0), "kind")), "X");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(docs, 0), "n")), 2);
    json_decref(docs);

    load_bad("{\"a\": 1,}", "JSON line 1, column");
    load_bad("{\"a\": 1, \"a\": 2}", "JSON line 1");
    load_bad("{\"a\": 1} {\"b\": 2}", "JSON line 1");
}

static void test_yaml_documents(void **state)
{
    json_t *docs = load_ok("---\n"
                           "kind: A\n"
                           "---\n"
                           "# only a comment\n"
                           "---\n"
                           "kind: B\n"
                           "...\n");

    (void)state;
    assert_int_equal(json_array_size(docs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 0), "kind")), "A");
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 1), "kind")), "B");
    json_decref(docs);

    docs = load_ok("");
    assert_int_equal(json_array_size(docs), 0);
    json_decref(docs);

    /* multi-byte UTF-8 passes through */
    docs = load_ok("reason: \"F\xc3\xaate \xe2\x82\xac \xf0\x9f\x8e\x84\"\n");
    assert_string_equal(json_string_value(json_object_get(json_array_get(docs, 0), "reason")),
                        "F\xc3\xaate \xe2\x82\xac \xf0\x9f\x8e\x84");
    json_decref(docs);
}

/*
 * Escaped quotes in single-quoted scalars, keys and values: a run of them
 * long enough made libfyaml's own text cache cut the key short and leak its
 * formatting buffer; the text must come out whole, and valgrind and the
 * fuzzers see no leak.
 */
static void test_yaml_escaped_quotes(void **state)
{
    char yaml[512], want[128];
    json_t *docs, *d;
    const char *key;
    size_t i, n = 0;

    (void)state;
    for (i = 0; i < 108; i++)
        yaml[n++] = '\'';
    memcpy(yaml + n, ": 'it''s'\n", 11);
    n += 11;
    yaml[n] = '\0';
    docs = load_ok(yaml);
    assert_int_equal(json_array_size(docs), 1);
    d = json_array_get(docs, 0);
    assert_int_equal(json_object_size(d), 1);
    memset(want, '\'', 53);
    want[53] = '\0';
    key = json_object_iter_key(json_object_iter(d));
    assert_string_equal(key, want);
    assert_string_equal(json_string_value(json_object_get(d, want)), "it's");
    json_decref(docs);
    /* Folding: blanks around a line break go, one break is a space, an
     * empty line a newline. */
    docs = load_ok("k: 'a  \n\n  b''''c  \n d'\nj: ''''' x'\n");
    d = json_array_get(docs, 0);
    assert_string_equal(json_string_value(json_object_get(d, "k")), "a\nb''c d");
    assert_string_equal(json_string_value(json_object_get(d, "j")), "'' x");
    json_decref(docs);
}

static void test_yaml_scalars(void **state)
{
    json_t *docs = load_ok("int: 2\n"
                           "neg: -7\n"
                           "quoted: \"2\"\n"
                           "single: '3'\n"
                           "time: 08:00\n"
                           "date: 2026-01-03\n"
                           "yes: true\n"
                           "no: False\n"
                           "nul: null\n"
                           "tilde: ~\n"
                           "empty:\n"
                           "real: 1.5\n"
                           "exp: 1e3\n"
                           "tagged: !!str 3\n"
                           "hex: 0x1F\n"
                           "inf: .inf\n"
                           "huge: 99999999999999999999\n"
                           "word: Saturday\n"
                           "list: [1, two, \"3\"]\n"
                           "block: |\n"
                           "  text\n"
                           "nested: {a: {b: [x]}}\n");
    json_t *d, *want;
    json_error_t je;

    (void)state;
    assert_int_equal(json_array_size(docs), 1);
    d = json_array_get(docs, 0);
    want = json_loads("{\"int\":2,\"neg\":-7,\"quoted\":\"2\",\"single\":\"3\",\"time\":\"08:00\","
                      "\"date\":\"2026-01-03\",\"yes\":true,\"no\":false,\"nul\":null,"
                      "\"tilde\":null,\"empty\":null,\"real\":1.5,\"exp\":1000.0,"
                      "\"tagged\":\"3\",\"hex\":\"0x1F\",\"inf\":\".inf\","
                      "\"huge\":\"99999999999999999999\",\"word\":\"Saturday\","
                      "\"list\":[1,\"two\",\"3\"],\"block\":\"text\\n\","
                      "\"nested\":{\"a\":{\"b\":[\"x\"]}}}",
                      0, &je);
    assert_non_null(want);
    if (!json_equal(d, want)) {
        char *s = json_dumps(d, JSON_SORT_KEYS);
        fail_msg("got %s", s);
    }
    json_decref(want);
    json_decref(docs);
}

static void test_yaml_rejected(void **state)
{
    char deep[400];
    size_t i, o = 0;

    (void)state;
    load_bad("a: &x 1\nb: *x\n", "YAML aliases are not supported");
    load_bad("a: 1\na: 2\n", "YAML line 2, column 1: duplicate key");
    load_bad("a: [1, 2\n", "YAML line");
    load_bad("? [1, 2]\n: x\n", "YAML mapping keys must be scalars");
    load_bad("a: \"\xff\"\n", "YAML input is not valid UTF-8 text (byte 4)");
    load_bad("a: b\xff\n", "YAML input is not valid UTF-8 text (byte 4)");
    load_bad("a: \xc3\n", "YAML input is not valid UTF-8 text (byte 3)");
    load_bad("a: \xe0\x80\x80\n", "YAML input is not valid UTF-8 text (byte 3)"); /* overlong */
    load_bad("a: \xed\xa0\x80\n", "YAML input is not valid UTF-8 text (byte 3)"); /* surrogate */
    load_bad("a: \xf4\x90\x80\x80\n", "YAML input is not valid UTF-8 text (byte 3)");
    /* this once made the YAML scanner loop forever */
    load_bad("%\xd5", "YAML input is not valid UTF-8 text (byte 1)");
    {
        static const char nul[] = "a: b\0c\n";
        char err[128];
        json_t *docs;
        assert_int_equal(manifest_load(nul, sizeof nul - 1, &docs, err, sizeof err),
                         HCP_EINVAL);
        assert_string_equal(err, "YAML input is not valid UTF-8 text (byte 4)");
    }
    for (i = 0; i < 70; i++)
        deep[o++] = '[';
    for (i = 0; i < 70; i++)
        deep[o++] = ']';
    deep[o] = '\0';
    load_bad(deep, "");
}

/* A YAML manifest and its JSON twin give the same policy. */
static void test_yaml_policy(void **state)
{
    const char *yaml = "apiVersion: changemanagement.hypershift.openshift.io/v1alpha1\n"
                       "kind: HostedChangeManagementPolicy\n"
                       "metadata: {name: nights, namespace: clusters, generation: 2}\n"
                       "spec:\n"
                       "  strategy: MaintenanceSchedule\n"
                       "  maintenanceSchedule:\n"
                       "    timeZone: Europe/Zurich\n"
                       "    permit:\n"
                       "      recurrence:\n"
                       "        frequency: Weekly\n"
                       "        weekly:\n"
                       "          daysOfWeek: [Monday, Friday]\n"
                       "          interval: 2\n"
                       "      startTime: 22:00\n"
                       "      duration: 6h\n"
                       "    exclude:\n"
                       "    - fromDate: 2026-12-24\n"
                       "      reason: Holidays\n";
    char err[POLICY_ERRLEN];
    json_t *docs = load_ok(yaml);
    policy_t *p;

    (void)state;
    assert_true(policy_is_hcmp(json_array_get(docs, 0)));
    assert_int_equal(policy_parse(json_array_get(docs, 0), 0, &p, err, sizeof err), 0);
    assert_string_equal(p->rrule, "FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,FR;WKST=MO");
    assert_int_equal(p->start_minute, 22 * 60);
    assert_int_equal(p->duration, 6 * 3600);
    assert_int_equal(p->generation, 2);
    assert_string_equal(p->exclusions[0].reason, "Holidays");
    policy_free(p);
    json_decref(docs);

    /* an unquoted number where a string belongs is named as such */
    docs = load_ok("spec: {strategy: MaintenanceSchedule, maintenanceSchedule: {permit: "
                   "{rrule: FREQ=DAILY, duration: 8}}}\n");
    assert_int_equal(policy_parse(json_array_get(docs, 0), 0, &p, err, sizeof err),
                     HCP_EINVAL);
    assert_string_equal(err, "spec.maintenanceSchedule.permit.duration: must be a string, not a "
                             "number");
    policy_free(p);
    json_decref(docs);
}

static void test_quote(void **state)
{
    char buf[QUOTE_BUFLEN], small[8];
    char long_in[100];

    (void)state;
    quote_string("a\"b\\c\n\x01\xc3\xa9", buf, sizeof buf);
    assert_string_equal(buf, "\"a\\\"b\\\\c\\x0a\\x01\\xc3\\xa9\"");
    quote_name("key", buf, sizeof buf);
    assert_string_equal(buf, "key");
    quote_string(NULL, buf, sizeof buf);
    assert_string_equal(buf, "\"\"");
    memset(long_in, 'a', sizeof long_in - 1);
    long_in[sizeof long_in - 1] = '\0';
    quote_string(long_in, buf, sizeof buf);
    assert_int_equal(strlen(buf), 1 + QUOTE_MAX_INPUT + 3 + 1);
    assert_string_equal(buf + 1 + QUOTE_MAX_INPUT, "...\"");
    /* a small buffer truncates but stays terminated */
    quote_string("abcdefghij", small, sizeof small);
    assert_string_equal(small, "\"abcdef");
    quote_string("\x01\x02", small, sizeof small);
    assert_string_equal(small, "\"\\x01");
    quote_string("x", small, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json),          cmocka_unit_test(test_yaml_documents),
        cmocka_unit_test(test_yaml_escaped_quotes),
        cmocka_unit_test(test_yaml_scalars),  cmocka_unit_test(test_yaml_rejected),
        cmocka_unit_test(test_yaml_policy),   cmocka_unit_test(test_quote),
    };

    return cmocka_run_group_tests_name("manifest", tests, NULL, NULL);
}
