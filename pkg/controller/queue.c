/* queue.c: records, the work queue's drain (each record handed to
 * c->reconcile once the caches are synced, while the writer has room), and
 * per-object timers. The FIFOs themselves are fifo.c. */
#include "controller/internal.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 128           /* reconciles per loop iteration */
#define RETRY_MIN 1.0       /* seconds before retrying a failed write */
#define RETRY_MAX 60.0

/* ---- records ----------------------------------------------------------- */


static void on_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    record_t *r = w->data;
    ctl_enqueue(r->ctl, r->kind, r->ns, r->name);
}

record_t *ctl_record_find(const ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    return (record_t *)*kube_objmap_slot(&c->records, (int)k, ns, name);
}

record_t *ctl_record_get(ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    hcp_hnode_t **slot = kube_objmap_slot(&c->records, (int)k, ns, name);
    if (*slot)
        return (record_t *)*slot;
    record_t *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->ns = strdup(ns);
    r->name = strdup(name);
    if (!r->ns || !r->name)
        goto fail;
    r->ctl = c;
    r->kind = k;
    r->retry = RETRY_MIN;
    r->wt.ns = r->ns;
    r->wt.name = r->name;
    ev_init(&r->timer, on_timer);
    r->timer.data = r;
    r->q.lane = k != R_HC; /* HostedClusters first (queue.h) */
    r->key = (kube_objkey_t){.kind = (int)k, .ns = r->ns, .name = r->name};
    kube_objmap_insert(&c->records, slot, &r->key);
    return r;
fail:
    free(r->ns);
    free(r->name);
    free(r);
    return NULL;
}

void ctl_record_drop_inter(record_t *r)
{
    if (r->have_inter) {
        stanza_nodepool_free(r->inter);
        sched_unref(r->inter_cluster);
        r->inter_cluster = NULL;
        r->have_inter = false;
    }
}

void ctl_record_drop_res(record_t *r)
{
    ctl_record_drop_inter(r);
    if (r->have_res) {
        stanza_resolution_free(&r->res);
        r->have_res = false;
    }
}

void ctl_record_free(record_t *r)
{
    ctl_record_drop_res(r);
    free(r->inter);
    free(r->marks);
    free(r->ns);
    free(r->name);
    free(r);
}

/* Unlinks a record of a deleted object; it is freed now or, when writes
 * are in flight or it is queued, once they are done. */
void ctl_record_forget(ctl_controller_t *c, record_t *r)
{
    hcp_hnode_t **slot = kube_objmap_slot(&c->records, (int)r->kind, r->ns, r->name);
    if (*slot == &r->key.node)
        kube_objmap_remove(&c->records, slot);
    ev_timer_stop(c->loop, &r->timer);
    if (r->kind == R_HC && c->proj)
        hosted_forget(c->proj, r->ns, r->name);
    r->gone = true;
    if (r->wt.inflight == 0 && !r->q.queued)
        ctl_record_free(r);
}

/* Every list is in: the queue may drain (controller.h). */
bool ctl_synced(const ctl_controller_t *c)
{
    return c->policies.synced && c->hcs.synced && c->nps.synced && c->capi_started &&
           c->clusters.synced && c->mds.synced && c->mss.synced && c->companions.synced &&
           c->cms.synced && c->cals.synced && (!c->w_evid.c || c->evid.synced);
}

/* ---- the work queue ---------------------------------------------------- */

/* Keeps the loop turning while there is work it may do now. */
void ctl_queue_kick(ctl_controller_t *c)
{
    if (!ctl_queue_empty(&c->queue) && ctl_write_room(&c->writer) && ctl_synced(c))
        ev_idle_start(c->loop, &c->qidle);
}

void ctl_enqueue(ctl_controller_t *c, rkind_t k, const char *ns, const char *name)
{
    record_t *r = ctl_record_get(c, k, ns, name);
    if (r)
        r->have_metrics = false; /* its next plan may differ */
    if (r && ctl_queue_push(&c->queue, &r->q))
        ctl_queue_kick(c);
}

void ctl_queue_drain(struct ev_loop *loop, ev_check *w, int revents)
{
    (void)revents;
    ctl_controller_t *c = w->data;
    /* Deciding from a partial cache would act on a world where a policy or
     * a CAPI object does not exist yet: wait until every list is in. */
    if (!ctl_synced(c))
        return;
    for (int i = 0; i < BATCH && !ctl_queue_empty(&c->queue) && ctl_write_room(&c->writer);
         i++) {
        record_t *r = RECORD_OF(q, ctl_queue_pop(&c->queue));
        if (r->gone) {
            if (r->wt.inflight == 0)
                ctl_record_free(r);
            continue;
        }
        double t0 = ev_time();
        c->reconcile(c, r);
        double dt = ev_time() - t0;
        c->stats.reconciles++;
        c->stats.reconcile_seconds += dt;
        for (int b = 0; b < 8; b++)
            if (dt <= ctl_latency_bounds[b]) {
                c->stats.latency_buckets[b]++;
                break;
            }
    }
    /* At the write limit the loop sleeps until answers come in. */
    if (ctl_queue_empty(&c->queue) || !ctl_write_room(&c->writer))
        ev_idle_stop(loop, &c->qidle);
}

/* Arms the record's timer for the instant `when` (controller time). */
void ctl_arm(ctl_controller_t *c, record_t *r, sched_time_t when)
{
    ev_timer_stop(c->loop, &r->timer);
    if (when == SCHED_POS_INF)
        return;
    /* A millisecond of slack so that the clock has passed the boundary. */
    ev_timer_set(&r->timer, ctl_clock_delay(&c->opts.clock, c->loop, when) + 0.001, 0.);
    ev_timer_start(c->loop, &r->timer);
}

void ctl_arm_retry(ctl_controller_t *c, record_t *r)
{
    ev_timer_stop(c->loop, &r->timer);
    ev_timer_set(&r->timer, r->retry, 0.);
    ev_timer_start(c->loop, &r->timer);
    r->retry = r->retry * 2 > RETRY_MAX ? RETRY_MAX : r->retry * 2;
}

void ctl_queue_resume(ctl_controller_t *c)
{
    ctl_qitem_t *it;
    while ((it = ctl_write_resume(&c->writer)) != NULL)
        ctl_queue_push(&c->queue, it);
}

void ctl_retry_reset(record_t *r)
{
    r->retry = RETRY_MIN;
}
