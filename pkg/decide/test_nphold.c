/* test_nphold.c: the NodePool hold as a pure function (decide_np_hold()). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

#include "decide/slim.h"
#include "decide/nphold.h"
#include "decide/testutil_decide.h"

/* The i-th operation as "op path [value]". */
static void op_is(const decide_np_hold_t *h, size_t i, const char *op, const char *path,
                  const char *value)
{
    json_t *o = json_array_get(h->ops, i);
    assert_non_null(o);
    assert_string_equal(json_string_value(json_object_get(o, "op")), op);
    assert_string_equal(json_string_value(json_object_get(o, "path")), path);
    if (value) {
        char *v = json_dumps(json_object_get(o, "value"), JSON_COMPACT | JSON_SORT_KEYS |
                                                              JSON_ENCODE_ANY);
        assert_string_equal(v, value);
        free(v);
    } else {
        assert_null(json_object_get(o, "value"));
    }
}

/* Restricted, a write without annotations: the release goes back, the map
 * is added, then the record. */
static void test_release_no_annotations(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"metadata\":{},\"spec\":{\"release\":{\"image\":\"r:1\"}}}");
    json_t *new = tu_doc("{\"metadata\":{},\"spec\":{\"release\":{\"image\":\"r:2\"},\"replicas\":5}}");
    decide_np_hold_t h;
    assert_int_equal(decide_np_hold(old, new, true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 3);
    op_is(&h, 0, "add", "/spec/release", "{\"image\":\"r:1\"}");
    op_is(&h, 1, "add", "/metadata/annotations", "{}");
    op_is(&h, 2, "add",
          "/metadata/annotations/changemanagement.hypershift.openshift.io~1requested-nodepool-spec",
          "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"");
    assert_string_equal(h.held, "spec.release");
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

/* A write that drops spec.platform.aws whole: the running aws object comes
 * back whole (its resourceTags with it), the removal of the instance type
 * is recorded as null; nothing else is touched. */
static void test_parent_missing(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"metadata\":{\"annotations\":{}},\"spec\":{\"platform\":{\"type\":\"AWS\","
                    "\"aws\":{\"instanceType\":\"m5\"}}}}");
    json_t *new = tu_doc("{\"metadata\":{\"annotations\":{}},\"spec\":{\"platform\":{\"type\":\"AWS\"}}}");
    decide_np_hold_t h;
    assert_int_equal(decide_np_hold(old, new, true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 2);
    op_is(&h, 0, "add", "/spec/platform/aws", "{\"instanceType\":\"m5\"}");
    op_is(&h, 1, "add",
          "/metadata/annotations/changemanagement.hypershift.openshift.io~1requested-nodepool-spec",
          "\"{\\\"platform\\\":{\\\"aws\\\":{\\\"instanceType\\\":null}}}\"");
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

/* Nothing held changes: no operation, restricted or not; a field that rolls
 * nothing (resourceTags, replicas) passes. */
static void test_nothing_held(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"metadata\":{},\"spec\":{\"replicas\":3,\"platform\":{\"aws\":{"
                    "\"resourceTags\":[1]}}}}");
    json_t *new = tu_doc("{\"metadata\":{},\"spec\":{\"replicas\":5,\"platform\":{\"aws\":{"
                    "\"resourceTags\":[2]}}}}");
    decide_np_hold_t h;
    assert_int_equal(decide_np_hold(old, new, true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    assert_string_equal(h.held, "");
    decide_np_hold_free(&h);
    assert_int_equal(decide_np_hold(old, new, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

/* Permitted: the write's own release supersedes the recorded one; when the
 * record empties, the annotation goes. An unreadable record is dropped by
 * a write that changes a held field. */
static void test_permitted_supersedes(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"metadata\":{},\"spec\":{\"release\":{\"image\":\"r:1\"}}}");
    json_t *new = tu_doc("{\"metadata\":{\"annotations\":{"
                    "\"changemanagement.hypershift.openshift.io/requested-nodepool-spec\":"
                    "\"{\\\"release\\\":{\\\"image\\\":\\\"r:2\\\"}}\"}},"
                    "\"spec\":{\"release\":{\"image\":\"r:3\"}}}");
    decide_np_hold_t h;
    assert_int_equal(decide_np_hold(old, new, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 1);
    op_is(&h, 0, "remove",
          "/metadata/annotations/changemanagement.hypershift.openshift.io~1requested-nodepool-spec",
          NULL);
    decide_np_hold_free(&h);
    json_object_set_new(json_object_get(json_object_get(new, "metadata"), "annotations"),
                        DECIDE_REQUESTED_NODEPOOL_ANNOTATION, json_string("not json"));
    assert_int_equal(decide_np_hold(old, new, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 1);
    op_is(&h, 0, "remove",
          "/metadata/annotations/changemanagement.hypershift.openshift.io~1requested-nodepool-spec",
          NULL);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

/* Objects of the wrong shape read as absent; nothing crashes. */
static void test_bad_shapes(void **state)
{
    (void)state;
    json_t *old = tu_doc("{\"spec\":[]}");
    json_t *new = tu_doc("{\"spec\":{\"release\":7}}");
    decide_np_hold_t h;
    /* No metadata in the write: the record cannot be stored; an error. */
    assert_int_equal(decide_np_hold(old, new, true, &h), HCP_ERANGE);
    assert_int_equal(decide_np_hold(NULL, NULL, true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_no_annotations),
        cmocka_unit_test(test_parent_missing),
        cmocka_unit_test(test_nothing_held),
        cmocka_unit_test(test_permitted_supersedes),
        cmocka_unit_test(test_bad_shapes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
