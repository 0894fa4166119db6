/* queue.c: the bounded delivery queue with backoff. */
#include "notify/queue.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"

int notify_queue_init(notify_queue_t *q, size_t cap)
{
    memset(q, 0, sizeof(*q));
    if (cap == 0)
        return HCP_EINVAL;
    q->items = calloc(cap, sizeof(*q->items));
    if (!q->items)
        return HCP_ENOMEM;
    q->cap = cap;
    return 0;
}

static notify_item_t *at(notify_queue_t *q, size_t i)
{
    return &q->items[(q->head + i) % q->cap];
}

void notify_queue_free(notify_queue_t *q)
{
    for (size_t i = 0; i < q->len; i++)
        free(at(q, i)->body);
    free(q->items);
    memset(q, 0, sizeof(*q));
}

double notify_backoff(unsigned n)
{
    double d = NOTIFY_BACKOFF_FIRST;
    for (unsigned i = 1; i < n && d < NOTIFY_BACKOFF_MAX; i++)
        d *= 2;
    return d < NOTIFY_BACKOFF_MAX ? d : NOTIFY_BACKOFF_MAX;
}

bool notify_queue_has(const notify_queue_t *q, const char *id)
{
    for (size_t i = 0; i < q->len; i++)
        if (strcmp(q->items[(q->head + i) % q->cap].id, id) == 0)
            return true;
    return false;
}

/* Removes entry i, keeping the order of the others. */
static void remove_at(notify_queue_t *q, size_t i)
{
    free(at(q, i)->body);
    for (; i + 1 < q->len; i++)
        *at(q, i) = *at(q, i + 1);
    q->len--;
    if (q->len == 0)
        q->head = 0;
}

int notify_queue_push(notify_queue_t *q, size_t endpoint, const char *id, char *body,
                      const char *content_type, double now)
{
    size_t i;
    for (i = 0; i < q->len; i++)
        if (at(q, i)->endpoint == endpoint && strcmp(at(q, i)->id, id) == 0) {
            free(body);
            return 0;
        }
    if (q->len == q->cap) {
        for (i = 0; i < q->len && at(q, i)->inflight; i++)
            ;
        q->dropped++;
        if (i == q->len) {
            free(body);
            return 0;
        }
        remove_at(q, i);
    }
    notify_item_t *it = at(q, q->len++);
    memset(it, 0, sizeof(*it));
    it->endpoint = endpoint;
    size_t n = strlen(id);
    if (n >= sizeof(it->id))
        n = sizeof(it->id) - 1;
    memcpy(it->id, id, n);
    it->id[n] = '\0';
    it->body = body;
    it->content_type = content_type;
    it->next_at = now;
    return 1;
}

notify_item_t *notify_queue_next(notify_queue_t *q, double now, double *wait)
{
    notify_item_t *best = NULL;
    for (size_t i = 0; i < q->len; i++) {
        notify_item_t *it = at(q, i);
        if (!it->inflight && (!best || it->next_at < best->next_at))
            best = it;
    }
    if (wait)
        *wait = !best ? -1 : best->next_at > now ? best->next_at - now : 0;
    if (!best || best->next_at > now)
        return NULL;
    best->inflight = true;
    return best;
}

bool notify_queue_done(notify_queue_t *q, size_t endpoint, const char *id, bool ok, double now)
{
    size_t i, ep = endpoint;
    notify_item_t *it = NULL;
    for (i = 0; i < q->len; i++) {
        it = at(q, i);
        if (it->inflight && it->endpoint == endpoint && strcmp(it->id, id) == 0)
            break;
    }
    if (i == q->len)
        return false;
    if (ok) {
        q->sent++;
        if (ep < NOTIFY_MAX_ENDPOINTS)
            q->failing[ep] = 0;
        remove_at(q, i);
        return false;
    }
    q->failed++;
    it->inflight = false;
    it->attempts++;
    it->next_at = now + notify_backoff(it->attempts);
    if (ep >= NOTIFY_MAX_ENDPOINTS)
        return false;
    return ++q->failing[ep] == NOTIFY_FAILING_AFTER;
}
