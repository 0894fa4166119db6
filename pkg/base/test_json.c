/*
 * Unit tests for base/json: reading a member by dotted path and comparing a
 * wanted document with the object as the API server stores it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "base/json.h"

static json_t *doc(const char *text)
{
    json_t *d = json_loads(text, 0, NULL);
    assert_non_null(d);
    return d;
}

/* A path walks objects only; a missing step or a step through a non-object
 * reads as NULL, and the empty path is the document itself. */
static void test_path(void **state)
{
    json_t *d = doc("{\"spec\":{\"release\":{\"image\":\"img:1\"},\"n\":3,\"list\":[{\"a\":1}]},"
                    "\"a.b\":1}");

    (void)state;
    assert_ptr_equal(hcp_json_path(d, ""), d);
    assert_ptr_equal(hcp_json_path(d, "spec"), json_object_get(d, "spec"));
    assert_int_equal(json_integer_value(hcp_json_path(d, "spec.n")), 3);
    assert_string_equal(json_string_value(hcp_json_path(d, "spec.release.image")), "img:1");
    assert_true(json_is_array(hcp_json_path(d, "spec.list")));
    assert_null(hcp_json_path(d, "spec.list.a"));        /* through an array */
    assert_null(hcp_json_path(d, "spec.n.x"));           /* through an integer */
    assert_null(hcp_json_path(d, "spec.missing.image")); /* a step missing */
    assert_null(hcp_json_path(d, "spec.releas"));        /* a prefix of a name */
    assert_null(hcp_json_path(d, "a.b"));                /* names never contain a dot */
    assert_null(hcp_json_path(NULL, "spec"));
    json_decref(d);
}

/* A string member reads as a borrowed pointer; any other type as NULL. */
static void test_str(void **state)
{
    json_t *d = doc("{\"spec\":{\"release\":{\"image\":\"img:1\"},\"n\":3,\"e\":\"\"}}");

    (void)state;
    assert_string_equal(hcp_json_str(d, "spec.release.image"), "img:1");
    assert_ptr_equal(hcp_json_str(d, "spec.release.image"),
                     json_string_value(json_object_get(
                         json_object_get(json_object_get(d, "spec"), "release"), "image")));
    assert_string_equal(hcp_json_str(d, "spec.e"), "");
    assert_null(hcp_json_str(d, "spec.n"));
    assert_null(hcp_json_str(d, "spec.release"));
    assert_null(hcp_json_str(d, "spec.release.tag"));
    assert_null(hcp_json_str(NULL, "spec.e"));
    json_decref(d);
}

static void test_json_equal_stored(void **state)
{
    (void)state;
    struct {
        const char *a, *b;
        bool equal;
    } rows[] = {
        {"{\"a\":1,\"b\":null}", "{\"a\":1}", true},
        {"{\"a\":{\"x\":null}}", "{\"a\":{}}", true},
        {"[{\"x\":null,\"y\":2}]", "[{\"y\":2}]", true},
        {"{\"a\":1}", "{\"a\":2}", false},
        {"{\"a\":null}", "{\"a\":1}", false},
        {"{\"a\":[1,2]}", "{\"a\":[2,1]}", false},
        {"{\"a\":1,\"b\":2}", "{\"a\":1}", false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_t *a = doc(rows[i].a), *b = doc(rows[i].b);
        assert_int_equal(hcp_json_equal_stored(a, b), rows[i].equal);
        assert_int_equal(hcp_json_equal_stored(b, a), rows[i].equal);
        json_decref(a);
        json_decref(b);
    }
    json_t *empty = doc("{\"x\":null}"), *full = doc("{\"x\":1}");
    assert_true(hcp_json_equal_stored(NULL, NULL));
    assert_true(hcp_json_equal_stored(NULL, empty));
    assert_false(hcp_json_equal_stored(full, NULL));
    json_decref(empty);
    json_decref(full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path),
        cmocka_unit_test(test_str),
        cmocka_unit_test(test_json_equal_stored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
