/*
 * Unit tests for base/chain: the doubling of a chained hash table that
 * kube/cache, kube/intern and kube/objmap share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdlib.h>

#include "base/chain.h"

typedef struct node {
    struct node *link; /* the chain, under a name of the node's own */
    uint64_t hash;
    int id;
} node_t;

static uint64_t node_hash(const node_t *n)
{
    return n->hash;
}

/* Pushes n at the front of its chain, as the tables insert. */
static void push(node_t **b, size_t nb, node_t *n)
{
    node_t **head = &b[n->hash & (nb - 1)];
    n->link = *head;
    *head = n;
}

/* After a doubling every node is on the chain its hash's low bits name, none
 * is lost or linked twice, and each new chain holds the nodes of one old
 * chain in the reverse of their old order (the order in which the tables'
 * walks meet them is a function of what was inserted, as before). */
static void test_grow_rehashes_every_node(void **state)
{
    enum { N = 40 };
    node_t nodes[N];
    size_t nb = 4;
    node_t **b = calloc(nb, sizeof(*b));

    (void)state;
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        nodes[i].hash = (uint64_t)i * 0x9e3779b97f4a7c15ULL + (uint64_t)i; /* varied low bits */
        nodes[i].id = i;
        push(b, nb, &nodes[i]);
    }
    HCP_CHAIN_GROW(node_t, b, nb, link, node_hash);
    assert_int_equal(nb, 8);
    int seen[N] = {0}, total = 0;
    for (size_t i = 0; i < nb; i++) {
        int last_id = -1;
        for (node_t *n = b[i]; n; n = n->link) {
            assert_int_equal(n->hash & (nb - 1), i);
            assert_int_equal(seen[n->id]++, 0);
            total++;
            /* The old chains held the last inserted first. */
            assert_true(n->id > last_id);
            last_id = n->id;
        }
    }
    assert_int_equal(total, N);
    free(b);
}

/* An empty table doubles to an empty table of twice the chains. */
static void test_grow_empty(void **state)
{
    size_t nb = 16;
    node_t **b = calloc(nb, sizeof(*b));

    (void)state;
    assert_non_null(b);
    HCP_CHAIN_GROW(node_t, b, nb, link, node_hash);
    assert_int_equal(nb, 32);
    for (size_t i = 0; i < nb; i++)
        assert_null(b[i]);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grow_rehashes_every_node),
        cmocka_unit_test(test_grow_empty),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
