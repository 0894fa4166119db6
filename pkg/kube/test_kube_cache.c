/*
 * Unit tests for kube/cache.c and kube/intern.c: watch events and relist
 * diffs produce exactly the expected callbacks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/cache.h"

typedef struct slim {
    const char *owner; /* interned */
    int replicas;
} slim;

typedef struct log {
    char lines[64][96];
    int n;
} log;

static int extract(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    slim *s;
    const char *owner = json_string_value(json_object_get(json_object_get(obj, "spec"), "owner"));

    (void)ud;
    if (json_object_get(obj, "reject"))
        return -1;
    s = calloc(1, sizeof(*s));
    if (s == NULL)
        return -1;
    s->owner = owner ? kube_intern_get(strings, owner) : NULL;
    s->replicas = (int)json_integer_value(json_object_get(json_object_get(obj, "spec"), "replicas"));
    *out = s;
    return 0;
}

static void release(void *data, kube_intern *strings, void *ud)
{
    slim *s = data;

    (void)ud;
    kube_intern_put(strings, s->owner);
    free(s);
}

static void on_add(const kube_obj *o, void *ud)
{
    log *l = ud;
    snprintf(l->lines[l->n++], 96, "add %s/%s rv=%s r=%d", o->ns, o->name, o->rv,
             ((slim *)o->data)->replicas);
}

static void on_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    log *l = ud;
    snprintf(l->lines[l->n++], 96, "update %s/%s rv=%s->%s r=%d->%d", o->ns, o->name, old->rv,
             o->rv, ((slim *)old->data)->replicas, ((slim *)o->data)->replicas);
}

static void on_delete(const kube_obj *old, void *ud)
{
    log *l = ud;
    snprintf(l->lines[l->n++], 96, "delete %s/%s rv=%s", old->ns, old->name, old->rv);
}

static const kube_cache_ops ops = {extract, release, on_add, on_update, on_delete};

static json_t *mk(const char *ns, const char *name, const char *rv, int replicas)
{
    return json_pack("{s:{s:s,s:s,s:s,s:s},s:{s:i,s:s}}", "metadata", "namespace", ns, "name",
                     name, "resourceVersion", rv, "uid", "u-1", "spec", "replicas", replicas,
                     "owner", "team-a");
}

static void apply(kube_cache *c, kube_event_type t, json_t *o)
{
    assert_int_equal(kube_cache_apply(c, t, o, NULL), 0);
    json_decref(o);
}

static void test_events_in_order(void **state)
{
    kube_cache c;
    log l = {.n = 0};

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, &l), 0);
    apply(&c, KUBE_EVENT_ADDED, mk("ns1", "a", "10", 1));
    apply(&c, KUBE_EVENT_MODIFIED, mk("ns1", "a", "11", 2));
    apply(&c, KUBE_EVENT_DELETED, mk("ns1", "a", "12", 2));
    assert_int_equal(l.n, 3);
    assert_string_equal(l.lines[0], "add ns1/a rv=10 r=1");
    assert_string_equal(l.lines[1], "update ns1/a rv=10->11 r=1->2");
    assert_string_equal(l.lines[2], "delete ns1/a rv=11");
    assert_int_equal(kube_cache_count(&c), 0);
    kube_cache_free(&c);
}

static void test_replayed_event_is_dropped(void **state)
{
    kube_cache c;
    log l = {.n = 0};

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, &l), 0);
    apply(&c, KUBE_EVENT_ADDED, mk("ns1", "a", "10", 1));
    apply(&c, KUBE_EVENT_ADDED, mk("ns1", "a", "10", 1));     /* replay after reconnect */
    apply(&c, KUBE_EVENT_MODIFIED, mk("ns1", "b", "12", 3));  /* unknown: becomes add */
    apply(&c, KUBE_EVENT_DELETED, mk("ns1", "zzz", "13", 0)); /* unknown: ignored */
    assert_int_equal(l.n, 2);
    assert_string_equal(l.lines[1], "add ns1/b rv=12 r=3");
    kube_cache_free(&c);
}

static void test_relist_diff(void **state)
{
    kube_cache c;
    log l = {.n = 0};
    json_t *o;
    const kube_obj *got;

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, &l), 0);
    kube_cache_relist_begin(&c);
    o = mk("ns1", "keep", "5", 1);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    o = mk("ns1", "change", "6", 1);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    o = mk("ns2", "gone", "7", 1);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    assert_false(c.synced);
    kube_cache_relist_end(&c);
    assert_true(c.synced);
    assert_int_equal(l.n, 3);
    l.n = 0;

    /* Second relist (after a 410): one unchanged, one changed, one new, one gone. */
    kube_cache_relist_begin(&c);
    o = mk("ns1", "keep", "5", 1);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    o = mk("ns1", "change", "9", 4);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    o = mk("ns3", "new", "10", 1);
    kube_cache_relist_item(&c, o, NULL);
    json_decref(o);
    kube_cache_relist_end(&c);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.lines[0], "update ns1/change rv=6->9 r=1->4");
    assert_string_equal(l.lines[1], "add ns3/new rv=10 r=1");
    assert_string_equal(l.lines[2], "delete ns2/gone rv=7");
    assert_int_equal(kube_cache_count(&c), 3);
    got = kube_cache_get(&c, "ns1", "change");
    assert_non_null(got);
    assert_string_equal(got->rv, "9");
    assert_string_equal(((slim *)got->data)->owner, "team-a");
    assert_null(kube_cache_get(&c, "ns2", "gone"));
    kube_cache_free(&c);
}

static void test_aborted_relist_keeps_store(void **state)
{
    kube_cache c;
    log l = {.n = 0};

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, &l), 0);
    apply(&c, KUBE_EVENT_ADDED, mk("ns1", "a", "1", 1));
    kube_cache_relist_begin(&c);
    kube_cache_relist_abort(&c);
    kube_cache_relist_begin(&c);
    {
        json_t *o = mk("ns1", "a", "1", 1);
        kube_cache_relist_item(&c, o, NULL);
        json_decref(o);
    }
    kube_cache_relist_end(&c);
    assert_int_equal(l.n, 1); /* only the first add */
    assert_int_equal(kube_cache_count(&c), 1);
    kube_cache_free(&c);
}

static void test_bad_objects(void **state)
{
    kube_cache c;
    log l = {.n = 0};
    kube_error e;
    json_t *o;

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, &l), 0);
    o = json_pack("{s:{s:s}}", "metadata", "namespace", "x");
    assert_int_equal(kube_cache_apply(&c, KUBE_EVENT_ADDED, o, &e), HCP_EPARSE);
    assert_non_null(strstr(e.message, "name"));
    json_decref(o);
    o = json_pack("{s:s}", "kind", "Thing");
    assert_int_equal(kube_cache_apply(&c, KUBE_EVENT_ADDED, o, &e), HCP_EPARSE);
    json_decref(o);
    o = mk("ns", "r", "1", 1);
    json_object_set_new(o, "reject", json_true());
    assert_int_equal(kube_cache_apply(&c, KUBE_EVENT_ADDED, o, &e), HCP_EPARSE);
    json_decref(o);
    assert_int_equal(l.n, 0);
    assert_int_equal(kube_cache_count(&c), 0);
    kube_cache_free(&c);
}

static void test_many_objects_and_interning(void **state)
{
    kube_cache c;
    char name[32], ns[16];
    int i;

    (void)state;
    assert_int_equal(kube_cache_init(&c, &ops, NULL), 0);
    c.ops.on_add = NULL;
    for (i = 0; i < 5000; i++) {
        json_t *o;
        snprintf(name, sizeof(name), "obj-%d", i);
        snprintf(ns, sizeof(ns), "ns-%d", i % 7);
        o = mk(ns, name, "1", i);
        assert_int_equal(kube_cache_apply(&c, KUBE_EVENT_ADDED, o, NULL), 0);
        json_decref(o);
    }
    assert_int_equal(kube_cache_count(&c), 5000);
    assert_int_equal(c.strings.count, 8); /* 7 namespaces + one owner */
    for (i = 0; i < 5000; i += 97) {
        const kube_obj *o;
        snprintf(name, sizeof(name), "obj-%d", i);
        snprintf(ns, sizeof(ns), "ns-%d", i % 7);
        o = kube_cache_get(&c, ns, name);
        assert_non_null(o);
        assert_int_equal(((slim *)o->data)->replicas, i);
    }
    assert_null(kube_cache_get(&c, "ns-1", "obj-0"));
    assert_true(kube_cache_bytes(&c) / 5000 < 200);
    kube_cache_free(&c);
}

static void test_intern_refcounts(void **state)
{
    kube_intern p;
    const char *a, *b, *c2;

    (void)state;
    assert_int_equal(kube_intern_init(&p), 0);
    a = kube_intern_get(&p, "default");
    b = kube_intern_getn(&p, "default-ish", 7);
    assert_ptr_equal(a, b);
    c2 = kube_intern_get(&p, "other");
    assert_int_equal(p.count, 2);
    kube_intern_put(&p, a);
    assert_int_equal(p.count, 2);
    kube_intern_put(&p, b);
    assert_int_equal(p.count, 1);
    kube_intern_put(&p, c2);
    assert_int_equal(p.count, 0);
    assert_int_equal(p.bytes, 0);
    kube_intern_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_in_order),
        cmocka_unit_test(test_replayed_event_is_dropped),
        cmocka_unit_test(test_relist_diff),
        cmocka_unit_test(test_aborted_relist_keeps_store),
        cmocka_unit_test(test_bad_objects),
        cmocka_unit_test(test_many_objects_and_interning),
        cmocka_unit_test(test_intern_refcounts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
