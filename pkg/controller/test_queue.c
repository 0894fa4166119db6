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
    ctl_queue_t q = {0};
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
    assert_null(q.tail);
}

static void test_push_twice_queues_once(void **state)
{
    (void)state;
    ctl_queue_t q = {0};
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
    ctl_queue_t q = {0};
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
    assert_ptr_equal(q.head, &b);
    assert_ptr_equal(q.tail, &b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_order),
        cmocka_unit_test(test_push_twice_queues_once),
        cmocka_unit_test(test_requeue_after_pop_goes_last),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
