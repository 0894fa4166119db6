/* Tests of kube_watch_event_peek(): what a watch line says about itself,
 * read without a tree, agrees with kube_watch_event_parse() on every line it
 * reads (the last occurrence of a key winning, nested objects and arrays,
 * strings with brackets and escaped quotes), and declines what it cannot be
 * sure of: escapes in the fields it reads, a namespace it cannot keep, bad
 * brackets, trailing bytes, other event types. Then kube_cache_holds(). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kube/cache.h"
#include "kube/event.h"

static void agree(const char *line, const char *change, const char *ns, const char *name,
                  const char *rv)
{
    kube_watch_peek p;
    kube_watch_event ev;
    char why[128];
    if (kube_watch_event_peek(line, strlen(line), &p) != 0)
        fail_msg("peek declined: %s", line);
    assert_int_equal(kube_watch_event_parse(line, strlen(line), &ev, why, sizeof why), 0);
    const json_t *md = json_object_get(ev.obj, "metadata");
    const char *pns = json_string_value(json_object_get(md, "namespace"));
    assert_int_equal(p.change, ev.change);
    assert_string_equal(p.ns, pns ? pns : "");
    assert_string_equal(p.name, json_string_value(json_object_get(md, "name")));
    assert_string_equal(p.rv, ev.rv);
    assert_string_equal(p.ns, ns);
    assert_string_equal(p.name, name);
    assert_string_equal(p.rv, rv);
    assert_int_equal(p.change, strcmp(change, "ADDED") == 0      ? KUBE_EVENT_ADDED
                               : strcmp(change, "MODIFIED") == 0 ? KUBE_EVENT_MODIFIED
                                                                 : KUBE_EVENT_DELETED);
    kube_watch_event_free(&ev);
}

static void test_reads(void **state)
{
    (void)state;
    agree("{\"type\":\"MODIFIED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"X\",\"metadata\":"
          "{\"name\":\"a\",\"namespace\":\"ns\",\"resourceVersion\":\"42\"},\"spec\":{}}}",
          "MODIFIED", "ns", "a", "42");
    /* keys in any order, type last; managedFields' "f:name" is not "name" */
    agree(" {\"object\": {\"metadata\": {\"managedFields\": [{\"fieldsV1\": {\"f:metadata\": "
          "{\"f:name\": {}}}, \"manager\": \"x\"}], \"resourceVersion\": \"7\", \"name\": \"b\"},"
          " \"status\": {\"conditions\": [{\"message\": \"a } ] \\\" { [ string\"}], "
          "\"n\": [1, -2.5e3, true, false, null]}}, \"type\": \"ADDED\"}\r\n",
          "ADDED", "", "b", "7");
    /* a later key replaces an earlier one, as in the parser */
    agree("{\"type\":\"ADDED\",\"type\":\"DELETED\",\"object\":{\"metadata\":{\"name\":\"x\","
          "\"resourceVersion\":\"1\"}},\"object\":{\"metadata\":{\"name\":\"y\","
          "\"namespace\":\"n2\",\"resourceVersion\":\"2\"}}}",
          "DELETED", "n2", "y", "2");
    agree("{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"z\",\"resourceVersion\":"
          "\"3\"},\"metadata\":{\"name\":\"w\",\"resourceVersion\":\"4\"}}}",
          "MODIFIED", "", "w", "4");
    /* "metadata" deeper down is not the object's */
    agree("{\"type\":\"ADDED\",\"object\":{\"spec\":{\"metadata\":{\"name\":\"no\"}},"
          "\"metadata\":{\"name\":\"yes\",\"resourceVersion\":\"5\"}}}",
          "ADDED", "", "yes", "5");
    /* a namespace that is not a string reads as none, in both */
    agree("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"n\",\"namespace\":null,"
          "\"resourceVersion\":\"6\"}}}", "ADDED", "", "n", "6");
}

static void test_declines(void **state)
{
    (void)state;
    static const char *const lines[] = {
        "",
        "[]",
        "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}",
        "{\"type\":\"ERROR\",\"object\":{\"code\":410}}",
        "{\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\"}}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\",\"resourceVersion\":\"1\"}}}",
        /* escapes in what it reads */
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\\u0061\",\"resourceVersion\":\"1\"}}}",
        "{\"type\":\"ADD\\u0045D\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"namespace\":\"n\\u0073\","
        "\"resourceVersion\":\"1\"}}}",
        /* the fields replaced by a later object without them */
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}},"
        "\"object\":{}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"},"
        "\"metadata\":7}}",
        /* malformed */
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}x",
        "{\"type\":\"ADDED\" \"object\":{}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"],}}",
        "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\nb\",\"resourceVersion\":\"1\"}}}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        kube_watch_peek p;
        if (kube_watch_event_peek(lines[i], strlen(lines[i]), &p) != -1)
            fail_msg("line %zu read: %s", i, lines[i]);
    }
    /* too deep */
    char deep[4096];
    size_t o = (size_t)snprintf(deep, sizeof deep, "{\"type\":\"ADDED\",\"x\":");
    for (int d = 0; d < 600; d++)
        deep[o++] = '[';
    for (int d = 0; d < 600; d++)
        deep[o++] = ']';
    o += (size_t)snprintf(deep + o, sizeof deep - o,
                          ",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}");
    kube_watch_peek p;
    assert_int_equal(kube_watch_event_peek(deep, o, &p), -1);
}

static void test_cache_holds(void **state)
{
    (void)state;
    kube_cache c;
    kube_error e;
    assert_int_equal(kube_cache_init(&c, NULL, NULL), 0);
    json_t *o = json_pack("{s:{s:s,s:s,s:s}}", "metadata", "name", "a", "namespace", "ns",
                          "resourceVersion", "9");
    assert_int_equal(kube_cache_apply(&c, KUBE_EVENT_ADDED, o, &e), 0);
    assert_true(kube_cache_holds(&c, "ns", "a", "9"));
    assert_false(kube_cache_holds(&c, "ns", "a", "10"));
    assert_false(kube_cache_holds(&c, "", "a", "9"));
    assert_false(kube_cache_holds(&c, "ns", "b", "9"));
    json_decref(o);
    kube_cache_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads),
        cmocka_unit_test(test_declines),
        cmocka_unit_test(test_cache_holds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
