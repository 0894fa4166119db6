/* cvwant.c: what a HostedCluster's projection writes into the hosted
 * ClusterVersion: the control plane's decision and the conditions of each
 * of its NodePools, as sentences (decide_cv_conditions()). */
#include "controller/internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct pools {
    const char *ns, *cluster;
    decide_cv_pool_t *v;
    size_t n, cap;
    bool oom;
} pools_t;

static void collect_pool(const kube_obj *o, void *ud)
{
    pools_t *x = ud;
    const decide_np_t *np = o->data;
    if (x->oom || !np || !np->cluster_name || strcmp(o->ns, x->ns) != 0 ||
        strcmp(np->cluster_name, x->cluster) != 0)
        return;
    if (x->n == x->cap) {
        size_t cap = x->cap ? 2 * x->cap : 8;
        decide_cv_pool_t *v = realloc(x->v, cap * sizeof(*v));
        if (!v) {
            x->oom = true;
            return;
        }
        x->v = v;
        x->cap = cap;
    }
    x->v[x->n++] = (decide_cv_pool_t){o->name, &np->m.paused, &np->m.pending};
}

hosted_conds_t ctl_hosted_want(ctl_controller_t *c, const char *ns, const char *name,
                               const decide_decision_t *d, decide_cv_t *cv)
{
    pools_t x = {.ns = ns, .cluster = name};
    kube_cache_foreach(&c->nps, collect_pool, &x);
    /* Out of memory: the control plane alone, rather than nothing. */
    decide_cv_conditions(d, x.oom ? NULL : x.v, x.oom ? 0 : x.n, cv);
    free(x.v);
    return (hosted_conds_t){{cv->paused_status, cv->paused_reason, cv->paused_message},
                            {cv->pending_status, cv->pending_reason, cv->pending_message}};
}
