/* minleft.c: starts with enough of the window left (minleft.h). */
#include "schedule/minleft.h"

/* A bound on the windows looked at (a window a minute over ten years). */
#define MINLEFT_MAX_WINDOWS 200000

int sched_min_left_start(sched_t *s, sched_time_t from, sched_time_t min_left,
                         sched_time_t horizon, sched_interval_t *out, sched_interval_t *window)
{
    sched_interval_t iv;
    sched_time_t t = from, until = from + horizon;
    int rc;

    if (min_left < 0)
        min_left = 0;
    for (long n = 0; n < MINLEFT_MAX_WINDOWS && t < until; n++) {
        if ((rc = sched_next(s, t, &iv)) <= 0)
            return rc;
        sched_time_t start = iv.start > t ? iv.start : t;
        if (start >= until)
            return 0;
        if (iv.end == SCHED_POS_INF || iv.end - start >= min_left) {
            out->start = start;
            out->end = iv.end == SCHED_POS_INF ? SCHED_POS_INF : iv.end - min_left + 1;
            if (window)
                *window = iv;
            return 1;
        }
        t = iv.end; /* too little left in this one: the next */
    }
    return 0;
}

int sched_longest_window(sched_t *s, sched_time_t from, sched_time_t horizon, sched_time_t *len)
{
    sched_interval_t iv;
    sched_time_t t = from, until = from + horizon;
    int rc;

    *len = 0;
    for (long n = 0; n < MINLEFT_MAX_WINDOWS && t < until; n++) {
        if ((rc = sched_next(s, t, &iv)) < 0)
            return rc;
        if (rc == 0 || iv.start >= until)
            return 0;
        if (iv.end == SCHED_POS_INF) {
            *len = SCHED_POS_INF;
            return 0;
        }
        sched_time_t start = iv.start > t ? iv.start : t;
        if (iv.end - start > *len)
            *len = iv.end - start;
        t = iv.end;
    }
    return 0;
}
