/* test_notify_queue.c: the delivery queue, its backoff and its bounds, on
 * an injected clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "notify/queue.h"

static char *body(const char *s)
{
    char *b = strdup(s);
    assert_non_null(b);
    return b;
}

static void test_backoff(void **state)
{
    (void)state;
    assert_true(notify_backoff(1) == 1.0);
    assert_true(notify_backoff(2) == 2.0);
    assert_true(notify_backoff(5) == 16.0);
    assert_true(notify_backoff(9) == 256.0);
    assert_true(notify_backoff(10) == 300.0);
    assert_true(notify_backoff(1000) == 300.0);
}

/* An endpoint down for a day: the delivery is tried again with growing
 * waits, never given up, and delivered once the endpoint answers; the
 * endpoint is said to keep failing once. */
static void test_retry_until_delivered(void **state)
{
    (void)state;
    notify_queue_t q;
    double now = 1000, wait;
    int told = 0, attempts = 0;
    assert_int_equal(notify_queue_init(&q, 4), 0);
    assert_int_equal(notify_queue_push(&q, 0, "id-1", body("{}"), "application/json", now), 1);
    while (now < 1000 + 86400) {
        notify_item_t *it = notify_queue_next(&q, now, &wait);
        if (!it) {
            assert_true(wait > 0 && wait <= NOTIFY_BACKOFF_MAX);
            now += wait;
            continue;
        }
        attempts++;
        told += notify_queue_done(&q, 0, "id-1", false, now);
    }
    assert_int_equal(told, 1);
    assert_in_range(attempts, 86400 / 300, 86400 / 300 + 12);
    assert_int_equal(q.len, 1);
    notify_item_t *it = notify_queue_next(&q, now + 300, NULL);
    assert_non_null(it);
    assert_false(notify_queue_done(&q, 0, "id-1", true, now + 300));
    assert_int_equal(q.len, 0);
    assert_int_equal(q.sent, 1);
    assert_int_equal(q.failed, (uint64_t)attempts);
    assert_int_equal(q.failing[0], 0);
    assert_null(notify_queue_next(&q, now + 1000, &wait));
    assert_true(wait == -1);
    notify_queue_free(&q);
}

/* The same notification for the same endpoint is queued once; for another
 * endpoint it is another delivery. */
static void test_dedupe(void **state)
{
    (void)state;
    notify_queue_t q;
    assert_int_equal(notify_queue_init(&q, 4), 0);
    assert_int_equal(notify_queue_push(&q, 0, "a", body("1"), "t", 0), 1);
    assert_int_equal(notify_queue_push(&q, 0, "a", body("2"), "t", 5), 0);
    assert_int_equal(notify_queue_push(&q, 1, "a", body("3"), "t", 5), 1);
    assert_int_equal(q.len, 2);
    notify_queue_free(&q);
}

/* Full: the oldest waiting delivery is dropped and counted; deliveries in
 * flight are never dropped; answers find theirs after others moved. */
static void test_bounds(void **state)
{
    (void)state;
    notify_queue_t q;
    char id[8];
    assert_int_equal(notify_queue_init(&q, 3), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof(id), "n%d", i);
        assert_int_equal(notify_queue_push(&q, 0, id, body(id), "t", i), 1);
    }
    notify_item_t *it = notify_queue_next(&q, 10, NULL); /* n0 in flight */
    assert_string_equal(it->id, "n0");
    assert_int_equal(notify_queue_push(&q, 0, "n3", body("n3"), "t", 10), 1);
    assert_int_equal(q.dropped, 1); /* n1, the oldest waiting */
    it = notify_queue_next(&q, 10, NULL);
    assert_string_equal(it->id, "n2");
    assert_false(notify_queue_done(&q, 0, "n0", true, 11)); /* n0 answered after n2 went out */
    assert_false(notify_queue_done(&q, 0, "n2", true, 11));
    it = notify_queue_next(&q, 11, NULL);
    assert_string_equal(it->id, "n3");
    assert_int_equal(q.sent, 2);
    /* Every delivery in flight: a new one is refused, and counted. */
    notify_queue_t r;
    assert_int_equal(notify_queue_init(&r, 1), 0);
    assert_int_equal(notify_queue_push(&r, 0, "x", body("x"), "t", 0), 1);
    assert_non_null(notify_queue_next(&r, 0, NULL));
    assert_int_equal(notify_queue_push(&r, 0, "y", body("y"), "t", 0), 0);
    assert_int_equal(r.dropped, 1);
    assert_false(notify_queue_done(&r, 0, "y", true, 0)); /* not in flight: nothing */
    notify_queue_free(&r);
    notify_queue_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_backoff),
        cmocka_unit_test(test_retry_until_delivered),
        cmocka_unit_test(test_dedupe),
        cmocka_unit_test(test_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
