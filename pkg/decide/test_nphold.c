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

#define REQ_KEY "changemanagement.hypershift.openshift.io/requested-nodepool-spec"
#define REQ_PTR "/metadata/annotations/changemanagement.hypershift.openshift.io~1requested-nodepool-spec"
#define RUNS "\"spec\":{\"release\":{\"image\":\"q:4.17.0\"},\"config\":[{\"name\":\"c1\"}]}"
/* A NodePool running 4.17.0 and config c1 whose record is `rec` (JSON text
 * as the annotation holds it, NULL: none) and spec `spec`. */
static json_t *pool(const char *rec, const char *spec)
{
    json_t *o = tu_doc(spec);
    json_t *ann = json_object();
    if (rec)
        json_object_set_new(ann, REQ_KEY, json_string(rec));
    json_object_set_new(o, "metadata", json_pack("{s:o}", "annotations", ann));
    return o;
}

/* The bit of NodePool field f in decide_np_held_fields. */
static uint64_t bit(const char *f)
{
    for (size_t i = 0; decide_np_held_fields[i]; i++)
        if (strcmp(decide_np_held_fields[i], f) == 0)
            return (uint64_t)1 << i;
    fail_msg("no held field %s", f);
    return 0;
}

static int spec_hold(const json_t *old, const json_t *new_obj, bool restricted, uint64_t withdraw,
                     bool exempt, decide_np_hold_t *h)
{
    decide_hold_in_t in = {restricted, withdraw, exempt};
    return decide_spec_hold(old, new_obj, &in, decide_np_held_fields, REQ_KEY, h);
}

/* Restricted: a revert of the release by intent takes it out of the record;
 * the config request stays, told as kept. */
static void test_withdraw_one_of_two(void **state)
{
    (void)state;
    const char *rec = "{\"config\":[{\"name\":\"c2\"}],\"release\":{\"image\":\"q:4.17.1\"}}";
    json_t *old = pool(rec, "{" RUNS "}"), *new_obj = pool(rec, "{" RUNS "}");
    decide_np_hold_t h;
    assert_int_equal(spec_hold(old, new_obj, true, bit("release"), false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 1);
    op_is(&h, 0, "add", REQ_PTR, "\"{\\\"config\\\":[{\\\"name\\\":\\\"c2\\\"}]}\"");
    assert_int_equal(h.withdrawn, bit("release"));
    assert_int_equal(h.dropped, 0);
    assert_string_equal(h.withdrawn_words, "release 4.17.1");
    assert_string_equal(h.kept_words, "spec.config");
    assert_string_equal(h.held, "");
    assert_true(h.left);
    decide_np_hold_free(&h);
    /* Without the signal nothing changes: both requests kept. */
    assert_int_equal(spec_hold(old, new_obj, true, 0, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    assert_int_equal(h.withdrawn, 0);
    assert_string_equal(h.kept_words, "release 4.17.1, spec.config");
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new_obj);
}

/* One write withdraws the release and asks for another config: both in one
 * computation, restricted (the config held, the record holds it alone) and
 * permitted (the config goes through, the record goes). */
static void test_withdraw_and_request(void **state)
{
    (void)state;
    const char *rec = "{\"release\":{\"image\":\"q:4.17.1\"}}";
    json_t *old = pool(rec, "{" RUNS "}");
    json_t *new_obj = pool(rec, "{\"spec\":{\"release\":{\"image\":\"q:4.17.0\"},\"config\":"
                                "[{\"name\":\"c3\"}]}}");
    decide_np_hold_t h;
    assert_int_equal(spec_hold(old, new_obj, true, bit("release"), false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 2);
    op_is(&h, 0, "add", "/spec/config", "[{\"name\":\"c1\"}]");
    op_is(&h, 1, "add", REQ_PTR, "\"{\\\"config\\\":[{\\\"name\\\":\\\"c3\\\"}]}\"");
    assert_string_equal(h.held, "spec.config");
    assert_string_equal(h.withdrawn_words, "release 4.17.1");
    assert_true(h.left);
    assert_true(h.asked);
    assert_string_equal(h.kept_words, "");
    decide_np_hold_free(&h);
    assert_int_equal(spec_hold(old, new_obj, false, bit("release"), false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 1);
    op_is(&h, 0, "remove", REQ_PTR, NULL);
    assert_string_equal(h.held, "");
    assert_string_equal(h.withdrawn_words, "release 4.17.1");
    assert_false(h.left);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(new_obj);
}

/* A GitOps tool's re-apply of what is recorded is held again and asks for
 * nothing new; another value does. */
static void test_reapply_asks_nothing(void **state)
{
    (void)state;
    const char *rec = "{\"release\":{\"image\":\"q:4.17.1\"}}";
    json_t *old = pool(rec, "{" RUNS "}");
    json_t *same = pool(rec, "{\"spec\":{\"release\":{\"image\":\"q:4.17.1\"},\"config\":"
                             "[{\"name\":\"c1\"}]}}");
    json_t *other = pool(rec, "{\"spec\":{\"release\":{\"image\":\"q:4.17.2\"},\"config\":"
                              "[{\"name\":\"c1\"}]}}");
    decide_np_hold_t h;
    assert_int_equal(spec_hold(old, same, true, 0, false, &h), 0);
    assert_string_equal(h.held, "spec.release");
    assert_false(h.asked);
    assert_int_equal(json_array_size(h.ops), 1); /* the release kept; the record as it is */
    decide_np_hold_free(&h);
    assert_int_equal(spec_hold(old, other, true, 0, false, &h), 0);
    assert_true(h.asked);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(same);
    json_decref(other);
}

/* The last request withdrawn: the annotation goes, restricted or not. */
static void test_withdraw_last(void **state)
{
    (void)state;
    const char *rec = "{\"release\":{\"image\":\"q:4.17.1\"}}";
    json_t *old = pool(rec, "{" RUNS "}"), *new_obj = pool(rec, "{" RUNS "}");
    decide_np_hold_t h;
    for (int restricted = 0; restricted < 2; restricted++) {
        assert_int_equal(spec_hold(old, new_obj, restricted, bit("release"), false, &h), 0);
        assert_int_equal(json_array_size(h.ops), 1);
        op_is(&h, 0, "remove", REQ_PTR, NULL);
        assert_false(h.left);
        assert_int_equal(h.withdrawn, bit("release"));
        decide_np_hold_free(&h);
    }
    json_decref(old);
    json_decref(new_obj);
}

/* The record removed by hand (kubectl annotate ...-) is a withdrawal too,
 * told as dropped; HyperShift's write that drops it gets it back, and its
 * signals withdraw nothing. */
static void test_dropped_and_exempt(void **state)
{
    (void)state;
    const char *rec = "{\"release\":{\"image\":\"q:4.17.1\"}}";
    json_t *old = pool(rec, "{" RUNS "}"), *gone = pool(NULL, "{" RUNS "}");
    json_t *carried = pool(rec, "{" RUNS "}");
    decide_np_hold_t h;
    assert_int_equal(spec_hold(old, gone, true, 0, false, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    assert_int_equal(h.withdrawn, bit("release"));
    assert_int_equal(h.dropped, bit("release"));
    assert_string_equal(h.withdrawn_words, "release 4.17.1");
    assert_false(h.left);
    decide_np_hold_free(&h);
    /* in a window too */
    assert_int_equal(spec_hold(old, gone, false, 0, false, &h), 0);
    assert_int_equal(h.dropped, bit("release"));
    decide_np_hold_free(&h);

    assert_int_equal(spec_hold(old, gone, true, bit("release"), true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 1);
    op_is(&h, 0, "add", REQ_PTR, "\"{\\\"release\\\":{\\\"image\\\":\\\"q:4.17.1\\\"}}\"");
    assert_int_equal(h.withdrawn, 0);
    assert_true(h.left);
    assert_string_equal(h.kept_words, "release 4.17.1");
    decide_np_hold_free(&h);
    assert_int_equal(spec_hold(old, carried, true, bit("release"), true, &h), 0);
    assert_int_equal(json_array_size(h.ops), 0);
    assert_int_equal(h.withdrawn, 0);
    assert_true(h.left);
    decide_np_hold_free(&h);
    json_decref(old);
    json_decref(gone);
    json_decref(carried);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_release_no_annotations),
        cmocka_unit_test(test_parent_missing),
        cmocka_unit_test(test_nothing_held),
        cmocka_unit_test(test_permitted_supersedes),
        cmocka_unit_test(test_bad_shapes),
        cmocka_unit_test(test_withdraw_one_of_two),
        cmocka_unit_test(test_withdraw_and_request),
        cmocka_unit_test(test_withdraw_last),
        cmocka_unit_test(test_reapply_asks_nothing),
        cmocka_unit_test(test_dropped_and_exempt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
