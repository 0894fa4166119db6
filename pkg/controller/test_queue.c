/* test_queue.c: the controller's deduplicating work queue. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "controller/queue.h"

static void test_fifo_order(void **state)
{
    (void)state;
    ctl_queue_t q;
    ctl_queue_init(&q);
    ctl_qitem_t a = {0}, b = {0}, c = {0};
    assert_true(ctl_queue_empty(&q));
    assert_null(ctl_queue_pop(&q));
    assert_true(ctl_queue_push(&q, &a));
    assert_true(ctl_queue_push(&q, &b));
    assert_true(ctl_queue_push(&q, &c));
    assert_int_equal(q.len, 3);
    assert_ptr_equal(ctl_queue_pop(&q), &a);
    assert_ptr_equal(ctl_queue_pop(&q), &b);
    assert_ptr_equal(ctl_queue_pop(&q), &c);
    assert_true(ctl_queue_empty(&q));
    assert_int_equal(q.len, 0);
    assert_null(ctl_queue_peek(&q, 0));
    assert_false(hcp_list_linked(&c.link));
}

static void test_push_twice_queues_once(void **state)
{
    (void)state;
    ctl_queue_t q;
    ctl_queue_init(&q);
    ctl_qitem_t a = {0}, b = {0};
    assert_true(ctl_queue_push(&q, &a));
    assert_true(ctl_queue_push(&q, &b));
    assert_false(ctl_queue_push(&q, &a)); /* a burst of events: one reconcile */
    assert_true(a.queued);
    assert_int_equal(q.len, 2);
    assert_ptr_equal(ctl_queue_pop(&q), &a);
    assert_false(a.queued);
    assert_ptr_equal(ctl_queue_pop(&q), &b);
    assert_null(ctl_queue_pop(&q));
}

static void test_requeue_after_pop_goes_last(void **state)
{
    (void)state;
    ctl_queue_t q;
    ctl_queue_init(&q);
    ctl_qitem_t a = {0}, b = {0};
    ctl_queue_push(&q, &a);
    ctl_queue_push(&q, &b);
    assert_ptr_equal(ctl_queue_pop(&q), &a);
    /* Enqueued again while being reconciled (an event during the reconcile):
     * it waits behind what was already queued. */
    assert_true(ctl_queue_push(&q, &a));
    assert_ptr_equal(ctl_queue_pop(&q), &b);
    assert_ptr_equal(ctl_queue_pop(&q), &a);
    assert_true(ctl_queue_empty(&q));
    /* A drained queue takes items again. */
    assert_true(ctl_queue_push(&q, &b));
    assert_ptr_equal(ctl_queue_peek(&q, 0), &b);
    assert_ptr_equal(q.lane[0].prev, &b.link); /* first and last */
    assert_null(ctl_queue_peek(&q, 1));
}

/* Lane 0 (HostedClusters) goes before lane 1 (NodePools), whatever the
 * order of pushes; within a lane, first in first out. */
static void test_lane_zero_first(void **state)
{
    (void)state;
    ctl_queue_t q;
    ctl_queue_init(&q);
    ctl_qitem_t n1 = {.lane = 1}, n2 = {.lane = 1}, h1 = {0}, h2 = {0};
    ctl_queue_push(&q, &n1);
    ctl_queue_push(&q, &h1);
    ctl_queue_push(&q, &n2);
    ctl_queue_push(&q, &h2);
    assert_int_equal(q.len, 4);
    assert_ptr_equal(ctl_queue_pop(&q), &h1);
    assert_ptr_equal(ctl_queue_pop(&q), &h2);
    assert_ptr_equal(ctl_queue_pop(&q), &n1);
    /* A lane-0 item pushed now still overtakes what waits in lane 1. */
    ctl_queue_push(&q, &h1);
    assert_ptr_equal(ctl_queue_pop(&q), &h1);
    assert_ptr_equal(ctl_queue_pop(&q), &n2);
    assert_true(ctl_queue_empty(&q));
    assert_null(ctl_queue_pop(&q));
}

/* Lane 1 cannot starve: while it waits, it gets one turn after
 * CTL_QUEUE_FAIR lane-0 pops in a row, even when lane 0 is refilled. */
static void test_lane_one_gets_a_turn(void **state)
{
    (void)state;
    ctl_queue_t q;
    ctl_queue_init(&q);
    ctl_qitem_t hc[CTL_QUEUE_FAIR + 1], np = {.lane = 1};
    for (int i = 0; i <= CTL_QUEUE_FAIR; i++) {
        hc[i] = (ctl_qitem_t){0};
        ctl_queue_push(&q, &hc[i]);
    }
    ctl_queue_push(&q, &np);
    for (int i = 0; i < CTL_QUEUE_FAIR; i++) {
        ctl_qitem_t *it = ctl_queue_pop(&q);
        assert_ptr_equal(it, &hc[i]);
        ctl_queue_push(&q, it); /* a HostedCluster that keeps coming back */
    }
    assert_ptr_equal(ctl_queue_pop(&q), &np);
    assert_ptr_equal(ctl_queue_pop(&q), &hc[CTL_QUEUE_FAIR]);
    assert_int_equal(q.len, CTL_QUEUE_FAIR);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_order),
        cmocka_unit_test(test_push_twice_queues_once),
        cmocka_unit_test(test_requeue_after_pop_goes_last),
        cmocka_unit_test(test_lane_zero_first),
        cmocka_unit_test(test_lane_one_gets_a_turn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
