/*
 * Unit tests for base/htab: the hash table behind kube/cache, kube/intern
 * and kube/objmap.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/htab.h"

typedef struct node {
    hcp_hnode_t h;
    int id;
} node_t;

static bool same_id(const hcp_hnode_t *n, const void *key)
{
    return ((const node_t *)n)->id == *(const int *)key;
}

/* A hash with few distinct low bits, so chains hold several members. */
static uint64_t hash_of(int id)
{
    return (uint64_t)(id % 7) * 0x9e3779b97f4a7c15ULL;
}

static void add(hcp_htab_t *t, node_t *n, int id)
{
    n->id = id;
    hcp_hnode_t **slot = hcp_htab_slot(t, hash_of(id), same_id, &id);
    assert_null(*slot);
    hcp_htab_insert(t, slot, &n->h, hash_of(id));
}

static node_t *find(const hcp_htab_t *t, int id)
{
    return (node_t *)*hcp_htab_slot(t, hash_of(id), same_id, &id);
}

/* Inserted members are found by key, equal hashes are told apart by the
 * equality test, and the table doubles past one member per chain without
 * losing or duplicating any: every member sits on the chain its hash's low
 * bits name. */
static void test_insert_find_grow(void **state)
{
    enum { N = 100 };
    node_t nodes[N];
    hcp_htab_t t;

    (void)state;
    assert_int_equal(hcp_htab_init(&t, 3), 0);
    assert_int_equal(t.nbuckets, 4); /* rounded up to a power of two */
    for (int i = 0; i < N; i++)
        add(&t, &nodes[i], i);
    assert_int_equal(t.count, N);
    assert_true(t.nbuckets >= N);
    for (int i = 0; i < N; i++)
        assert_ptr_equal(find(&t, i), &nodes[i]);
    int missing = N + 1;
    assert_null(find(&t, missing));

    int seen[N] = {0}, total = 0;
    size_t i;
    hcp_hnode_t *n;
    HCP_HTAB_FOREACH(&t, i, n) {
        assert_int_equal(n->hash & (t.nbuckets - 1), i);
        assert_int_equal(seen[((node_t *)n)->id]++, 0);
        total++;
    }
    assert_int_equal(total, N);
    hcp_htab_free(&t);
    assert_null(t.buckets);
}

/* A frozen table does not double (a walk that inserts keeps its place);
 * removal unlinks one member, keeps its own link, and replacement puts a new
 * member in the old one's place under the same hash. */
static void test_frozen_remove_replace(void **state)
{
    node_t nodes[10], other;
    hcp_htab_t t;

    (void)state;
    assert_int_equal(hcp_htab_init(&t, 2), 0);
    t.frozen++;
    for (int i = 0; i < 10; i++)
        add(&t, &nodes[i], i);
    assert_int_equal(t.nbuckets, 2);
    t.frozen--;

    int id = 3;
    hcp_hnode_t **slot = hcp_htab_slot(&t, hash_of(id), same_id, &id);
    hcp_hnode_t *kept = nodes[3].h.next;
    hcp_htab_remove(&t, slot);
    assert_int_equal(t.count, 9);
    assert_null(find(&t, 3));
    assert_ptr_equal(nodes[3].h.next, kept);

    id = 5;
    slot = hcp_htab_slot(&t, hash_of(id), same_id, &id);
    other.id = 5;
    hcp_htab_replace(slot, &other.h);
    assert_ptr_equal(find(&t, 5), &other);
    assert_int_equal(other.h.hash, hash_of(5));
    assert_int_equal(t.count, 9);

    size_t i, total = 0;
    hcp_hnode_t *n, *next;
    HCP_HTAB_FOREACH_SAFE(&t, i, n, next) {
        assert_ptr_not_equal(n, &nodes[3].h);
        assert_ptr_not_equal(n, &nodes[5].h);
        total++;
    }
    assert_int_equal(total, 9);
    hcp_htab_free(&t);
}

static void count_release(hcp_hnode_t *n, void *ud)
{
    ((int *)ud)[((node_t *)n)->id]++;
}

/* Draining releases every member once and frees the bucket array; a table
 * that was never initialised is left alone. */
static void test_drain(void **state)
{
    enum { N = 30 };
    node_t nodes[N];
    int released[N] = {0};
    hcp_htab_t t, never = {0};

    (void)state;
    assert_int_equal(hcp_htab_init(&t, 4), 0);
    for (int i = 0; i < N; i++)
        add(&t, &nodes[i], i);
    hcp_htab_drain(&t, count_release, released);
    for (int i = 0; i < N; i++)
        assert_int_equal(released[i], 1);
    assert_null(t.buckets);
    assert_int_equal(t.count, 0);
    hcp_htab_drain(&never, count_release, released);
    assert_null(never.buckets);
}

/* The hash is FNV-1a: the published 64-bit vectors. */
static void test_hash(void **state)
{
    (void)state;
    assert_true(hcp_hash_str(HCP_HASH_SEED, "") == 0xcbf29ce484222325ULL);
    assert_true(hcp_hash_str(HCP_HASH_SEED, "a") == 0xaf63dc4c8601ec8cULL);
    assert_true(hcp_hash_bytes(HCP_HASH_SEED, "foobar", 6) == 0x85944171f73967e8ULL);
    assert_true(hcp_hash_bytes(hcp_hash_str(HCP_HASH_SEED, "foo"), "bar", 3) ==
                hcp_hash_str(HCP_HASH_SEED, "foobar"));
    /* An object's key is "ns/name": the same bytes, the same hash. */
    uint64_t key = hcp_hash_nsname(HCP_HASH_SEED, "ns", "obj");
    assert_true(key == hcp_hash_str(HCP_HASH_SEED, "ns/obj"));
    assert_true(key != hcp_hash_nsname(HCP_HASH_SEED, "ns/", "obj"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_insert_find_grow),
        cmocka_unit_test(test_frozen_remove_replace),
        cmocka_unit_test(test_drain),
        cmocka_unit_test(test_hash),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
