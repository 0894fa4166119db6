/*
 * Unit tests for base/list: the intrusive list every list in the tree is.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/list.h"

typedef struct item {
    int id;
    hcp_link_t link; /* not first: hcp_list_entry() finds the item */
} item_t;

/* The ids on the list, first to last, into out; returns how many. */
static int ids(hcp_link_t *head, int *out)
{
    hcp_link_t *pos, *tmp;
    int n = 0;

    HCP_LIST_FOREACH(pos, tmp, head)
        out[n++] = hcp_list_entry(pos, item_t, link)->id;
    return n;
}

/* Pushes at either end, removal from the middle and the ends, and popping
 * keep the order; removed and popped members are unlinked. */
static void test_order(void **state)
{
    item_t it[4] = {{.id = 0}, {.id = 1}, {.id = 2}, {.id = 3}};
    hcp_link_t head;
    int got[4];

    (void)state;
    hcp_list_init(&head);
    assert_true(hcp_list_empty(&head));
    assert_null(hcp_list_first(&head));
    assert_null(hcp_list_pop_front(&head));
    for (int i = 0; i < 4; i++)
        hcp_list_init(&it[i].link);
    assert_false(hcp_list_linked(&it[0].link));

    hcp_list_push_back(&head, &it[1].link);
    hcp_list_push_back(&head, &it[2].link);
    hcp_list_push_front(&head, &it[0].link);
    hcp_list_push_back(&head, &it[3].link);
    assert_int_equal(ids(&head, got), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], i);
    assert_true(hcp_list_linked(&it[2].link));

    hcp_list_remove(&it[2].link);
    assert_false(hcp_list_linked(&it[2].link));
    hcp_list_remove(&it[2].link); /* again: nothing */
    assert_int_equal(ids(&head, got), 3);
    assert_int_equal(got[0], 0);
    assert_int_equal(got[1], 1);
    assert_int_equal(got[2], 3);

    assert_ptr_equal(hcp_list_pop_front(&head), &it[0].link);
    assert_false(hcp_list_linked(&it[0].link));
    hcp_list_remove(&it[3].link);
    assert_ptr_equal(hcp_list_first(&head), &it[1].link);
    assert_ptr_equal(hcp_list_pop_front(&head), &it[1].link);
    assert_true(hcp_list_empty(&head));
}

/* The walk goes on when its body removes the member it stands on. */
static void test_walk_removing(void **state)
{
    item_t it[5];
    hcp_link_t head, *pos, *tmp;
    int n = 0;

    (void)state;
    hcp_list_init(&head);
    for (int i = 0; i < 5; i++) {
        it[i].id = i;
        hcp_list_push_back(&head, &it[i].link);
    }
    HCP_LIST_FOREACH(pos, tmp, &head) {
        if (hcp_list_entry(pos, item_t, link)->id % 2 == 0)
            hcp_list_remove(pos);
        n++;
    }
    assert_int_equal(n, 5);
    int got[5];
    assert_int_equal(ids(&head, got), 2);
    assert_int_equal(got[0], 1);
    assert_int_equal(got[1], 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_walk_removing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
