/* fifo.c: the intrusive FIFOs of queue.h, in two lanes. */
#include "controller/queue.h"

#include <stddef.h>

bool ctl_queue_push(ctl_queue_t *q, ctl_qitem_t *it)
{
    if (it->queued)
        return false;
    unsigned l = it->lane < CTL_QUEUE_LANES ? it->lane : CTL_QUEUE_LANES - 1;
    it->queued = true;
    it->next = NULL;
    if (q->lane[l].tail)
        q->lane[l].tail->next = it;
    else
        q->lane[l].head = it;
    q->lane[l].tail = it;
    q->len++;
    return true;
}

static ctl_qitem_t *pop_lane(ctl_queue_t *q, unsigned l)
{
    ctl_qitem_t *it = q->lane[l].head;
    q->lane[l].head = it->next;
    if (!q->lane[l].head)
        q->lane[l].tail = NULL;
    it->next = NULL;
    it->queued = false;
    q->len--;
    return it;
}

ctl_qitem_t *ctl_queue_pop(ctl_queue_t *q)
{
    bool first = q->lane[0].head != NULL, second = q->lane[1].head != NULL;
    if (first && (!second || q->streak < CTL_QUEUE_FAIR)) {
        q->streak = second ? q->streak + 1 : 0;
        return pop_lane(q, 0);
    }
    q->streak = 0;
    return second ? pop_lane(q, 1) : NULL;
}

bool ctl_queue_empty(const ctl_queue_t *q)
{
    return q->len == 0;
}
