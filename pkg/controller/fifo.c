/* fifo.c: the FIFOs of queue.h, in two lanes of base/list. */
#include "controller/queue.h"

#include <stddef.h>

void ctl_queue_init(ctl_queue_t *q)
{
    *q = (ctl_queue_t){0};
    for (unsigned l = 0; l < CTL_QUEUE_LANES; l++)
        hcp_list_init(&q->lane[l]);
}

bool ctl_queue_push(ctl_queue_t *q, ctl_qitem_t *it)
{
    if (it->queued)
        return false;
    unsigned l = it->lane < CTL_QUEUE_LANES ? it->lane : CTL_QUEUE_LANES - 1;
    it->queued = true;
    hcp_list_push_back(&q->lane[l], &it->link);
    q->len++;
    return true;
}

static ctl_qitem_t *pop_lane(ctl_queue_t *q, unsigned l)
{
    ctl_qitem_t *it = hcp_list_entry(hcp_list_pop_front(&q->lane[l]), ctl_qitem_t, link);
    it->queued = false;
    q->len--;
    return it;
}

ctl_qitem_t *ctl_queue_peek(const ctl_queue_t *q, unsigned l)
{
    hcp_link_t *n = hcp_list_first(&q->lane[l]);
    return n ? hcp_list_entry(n, ctl_qitem_t, link) : NULL;
}

ctl_qitem_t *ctl_queue_pop(ctl_queue_t *q)
{
    bool first = ctl_queue_peek(q, 0) != NULL, second = ctl_queue_peek(q, 1) != NULL;
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
