/* testutil_ctl.c: a controller with caches filled by the test. */
#include "controller/testutil_ctl.h"

#include <stdio.h>
#include <stdlib.h>

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "testutil_ctl: %s\n", what);
        abort();
    }
}

ctl_controller_t *testutil_ctl_new(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));

    must(c != NULL, "out of memory");
    c->loop = loop;
    c->opts.clock = (ctl_clock_t){true, now, ev_now(loop), 1.0};
    snprintf(c->capi_version, sizeof(c->capi_version), "v1beta1");
    must(kube_objmap_init(&c->records, 16) == 0 &&
             kube_cache_init(&c->policies, &ctl_policy_ops, c) == 0 &&
             kube_cache_init(&c->hcs, &ctl_hc_ops, c) == 0 &&
             kube_cache_init(&c->nps, &ctl_np_ops, c) == 0 &&
             kube_cache_init(&c->clusters, &ctl_cluster_ops, c) == 0 &&
             kube_cache_init(&c->mds, &ctl_machines_ops, c) == 0 &&
             kube_cache_init(&c->mss, &ctl_machines_ops, c) == 0,
         "cannot set up the caches");
    return c;
}

void testutil_ctl_add(kube_cache *cache, const char *json)
{
    json_error_t je;
    kube_error e;
    json_t *j = json_loads(json, 0, &je);

    if (j == NULL)
        fprintf(stderr, "testutil_ctl: bad test JSON: %s (%s)\n", je.text, json);
    must(j != NULL, "bad test JSON");
    must(kube_cache_apply(cache, KUBE_EVENT_ADDED, j, &e) == 0, json);
    json_decref(j);
}
