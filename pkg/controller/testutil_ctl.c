/* testutil_ctl.c: a controller with caches filled by the test. */
#include "controller/testutil_ctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/router.h"
#include "policy/testutil_policy.h"

static void must(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "testutil_ctl: %s\n", what);
        abort();
    }
}

ctl_controller_t *testutil_ctl_new(struct ev_loop *loop, kube_client *client, sched_time_t now)
{
    ctl_controller_t *c = calloc(1, sizeof(*c));

    must(c != NULL, "out of memory");
    c->loop = loop;
    c->client = client;
    c->opts.clock = (ctl_clock_t){true, now, ev_now(loop), 1.0};
    snprintf(c->capi_version, sizeof(c->capi_version), "v1beta1");
    must(ctl_state_init(c, 16) == 0, "cannot set up the caches");
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

json_t *testutil_ctl_review(struct adm_router *r, const testutil_review_t *q)
{
    http_response h = {.status = 200};
    adm_route_t *rt = NULL;
    json_t *groups = json_array(), *user, *req, *review, *root, *resp;
    char *body;

    for (size_t i = 0; i < r->nroutes; i++)
        if (strcmp(r->routes[i].path, q->path) == 0)
            rt = &r->routes[i];
    must(rt != NULL && groups != NULL, "no such webhook route");
    for (size_t i = 0; q->groups && q->groups[i]; i++)
        json_array_append_new(groups, json_string(q->groups[i]));
    user = json_pack("{s:s?, s:o}", "username", q->user, "groups", groups);
    req = json_pack("{s:s, s:{s:s, s:s, s:s}, s:{s:s}, s:s, s:s, s:s, s:s?, s:o, s:o}", "uid",
                    "u", "resource", "group", q->group, "version", "v1", "resource",
                    q->resource, "kind", "kind", "X", "namespace", q->ns, "name", q->name,
                    "operation", q->op, "subResource", q->subresource, "userInfo", user,
                    "object", q->object ? tu_json(q->object) : json_null());
    must(req != NULL, "cannot build the review");
    if (q->old_object)
        json_object_set_new(req, "oldObject", tu_json(q->old_object));
    review = json_pack("{s:s, s:s, s:o}", "apiVersion", "admission.k8s.io/v1", "kind",
                       "AdmissionReview", "request", req);
    body = json_dumps(review, JSON_COMPACT);
    json_decref(review);
    must(body != NULL && adm_router_serve(rt, body, strlen(body), &h) == 0 && h.status == 200,
         "the webhook did not answer 200");
    free(body);
    root = json_loads(h.body, 0, NULL);
    free(h.body);
    must(root != NULL, "the answer is not JSON");
    resp = json_incref(json_object_get(root, "response"));
    json_decref(root);
    must(resp != NULL, "the answer has no response");
    return resp;
}
