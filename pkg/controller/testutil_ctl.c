/* testutil_ctl.c: a controller with caches filled by the test. */
#include "controller/testutil_ctl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admission/router.h"
#include "decide/skew.h"
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
    c->max_skew = DECIDE_SKEW_DEFAULT;
    must(ctl_state_init(c, 16) == 0, "cannot set up the caches");
    return c;
}

void testutil_ctl_api_start(testutil_ctl_api_t *t, fakeapi_handler_fn answer, void *ud,
                            const char *now)
{
    sched_time_t at;
    must(sched_parse_rfc3339(now, &at) == 0, "bad test time");
    *t = (testutil_ctl_api_t){0};
    t->loop = ev_loop_new(EVFLAG_AUTO);
    must(t->loop != NULL, "no event loop");
    t->api = fakeapi_start(t->loop, answer, ud);
    fakeapi_connect(t->api, t->loop, &t->cfg, &t->http, &t->client);
    t->c = testutil_ctl_new(t->loop, &t->client, at);
    t->c->leading = true;
}

void testutil_ctl_api_stop(testutil_ctl_api_t *t)
{
    ctl_stop(t->c);
    kube_client_close(&t->client);
    kube_http_close(&t->http);
    kube_config_free(&t->cfg);
    fakeapi_stop(t->api);
    ev_loop_destroy(t->loop);
}

void testutil_ctl_api_settle(testutil_ctl_api_t *t)
{
    double until = ev_time() + 20;
    while (t->c->writer.inflight > 0 && ev_time() < until)
        ev_run(t->loop, EVRUN_ONCE);
    must(t->c->writer.inflight == 0, "writes not answered in 20 s");
}

void testutil_ctl_apply(kube_cache *cache, kube_event_type type, const char *json)
{
    json_error_t je;
    kube_error e;
    json_t *j = json_loads(json, 0, &je);

    if (j == NULL)
        fprintf(stderr, "testutil_ctl: bad test JSON: %s (%s)\n", je.text, json);
    must(j != NULL, "bad test JSON");
    must(kube_cache_apply(cache, type, j, &e) == 0, json);
    json_decref(j);
}

void testutil_ctl_add(kube_cache *cache, const char *json)
{
    testutil_ctl_apply(cache, KUBE_EVENT_ADDED, json);
}

ctl_controller_t *testutil_ctl_weekend(struct ev_loop *loop, sched_time_t now)
{
    ctl_controller_t *c = testutil_ctl_new(loop, NULL, now);
    testutil_ctl_add(&c->policies,
                     "{" TESTUTIL_OBJ_META("HostedChangeManagementPolicy", "clusters", "weekend")
                     "},\"spec\":{\"strategy\":\"MaintenanceSchedule\",\"maintenanceSchedule\":{"
                     "\"permit\":{\"rrule\":\"FREQ=WEEKLY;BYDAY=SA\",\"startTime\":\"01:00\","
                     "\"duration\":\"4h\"}}}}");
    testutil_ctl_add(&c->hcs, "{" TESTUTIL_OBJ_META("HostedCluster", "clusters", "a")
                              ",\"annotations\":{" TESTUTIL_BY_WEEKEND "}},\"spec\":{\"infraID\":"
                              "\"a-x1\",\"release\":{\"image\":\"r:1\"}}}");
    testutil_ctl_add(&c->nps, "{" TESTUTIL_OBJ_META("NodePool", "clusters", "np1")
                              ",\"annotations\":{" TESTUTIL_BY_WEEKEND "}},\"spec\":{"
                              "\"clusterName\":\"a\"}}");
    testutil_ctl_add(&c->nps, "{" TESTUTIL_OBJ_META("NodePool", "clusters", "np2")
                              ",\"annotations\":{" TESTUTIL_BY_WEEKEND "}},\"spec\":{"
                              "\"clusterName\":\"a\",\"management\":{\"upgradeType\":"
                              "\"InPlace\"}}}");
    return c;
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
    if (q->options)
        json_object_set_new(req, "options", tu_json(q->options));
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

static int b64val(char ch)
{
    const char *tab = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(tab, ch);
    return p && ch ? (int)(p - tab) : -1;
}

/* The patch of an answer, decoded (NULL when none). */
static json_t *decode_patch(const json_t *resp)
{
    const char *b = json_string_value(json_object_get(resp, "patch"));
    size_t n, o = 0;
    char *out;
    json_t *j;

    if (b == NULL)
        return NULL;
    n = strlen(b);
    out = calloc(1, n + 1);
    must(out != NULL, "out of memory");
    for (size_t i = 0; i + 3 < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++)
            v[k] = b[i + k] == '=' ? 0 : b64val(b[i + k]);
        must(v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[3] >= 0, "the patch is not base64");
        uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 |
                     (uint32_t)v[3];
        out[o++] = (char)(w >> 16);
        if (b[i + 2] != '=')
            out[o++] = (char)(w >> 8 & 255);
        if (b[i + 3] != '=')
            out[o++] = (char)(w & 255);
    }
    j = json_loadb(out, o, 0, NULL);
    free(out);
    must(json_is_array(j), "the patch is not a JSON array");
    return j;
}

/* Applies the RFC 6902 operations the holds use (add, replace, remove) to
 * doc, a JSON Pointer at a time. */
static void apply_patch(json_t *doc, const json_t *patch)
{
    size_t i;
    json_t *op;

    json_array_foreach(patch, i, op) {
        const char *path = json_string_value(json_object_get(op, "path"));
        const char *kind = json_string_value(json_object_get(op, "op"));
        char seg[256], key[256];
        json_t *at = doc;
        const char *p = path;
        must(path != NULL && kind != NULL, "an operation without op or path");
        while (1) {
            size_t n = strcspn(p + 1, "/"), k = 0;
            snprintf(seg, sizeof(seg), "%.*s", (int)n, p + 1);
            for (size_t s = 0; seg[s]; s++, k++) {
                key[k] = seg[s];
                if (seg[s] == '~')
                    key[k] = seg[++s] == '1' ? '/' : '~';
            }
            key[k] = '\0';
            if (p[1 + n] == '\0')
                break;
            at = json_object_get(at, key);
            must(at != NULL, path);
            p += 1 + n;
        }
        if (strcmp(kind, "remove") == 0)
            must(json_object_del(at, key) == 0, path); /* the API server refuses it too */
        else
            json_object_set(at, key, json_object_get(op, "value"));
    }
}

testutil_answer_t testutil_ctl_answer(struct adm_router *r, const testutil_review_t *q)
{
    json_t *resp = testutil_ctl_review(r, q);
    const json_t *warn = json_object_get(resp, "warnings");
    testutil_answer_t a = {0};

    a.allowed = json_is_true(json_object_get(resp, "allowed"));
    a.stored = q->object ? tu_json(q->object) : NULL;
    json_t *patch = decode_patch(resp);
    if (patch) {
        a.nops = (int)json_array_size(patch);
        apply_patch(a.stored, patch);
        json_decref(patch);
    }
    for (size_t i = 0; i < json_array_size(warn) && i < 4; i++)
        snprintf(a.warnings[a.nwarnings++], sizeof(a.warnings[0]), "%s",
                 json_string_value(json_array_get(warn, i)));
    snprintf(a.warning, sizeof(a.warning), "%s", a.nwarnings ? a.warnings[0] : "");
    json_decref(resp);
    return a;
}

void testutil_ctl_checks_on(ctl_controller_t *c, check_runner_t *run, unsigned systems)
{
    check_config_t cfg = {.n = 1};
    snprintf(cfg.checks[0].name, CHECK_NAMELEN, "cab");
    snprintf(cfg.checks[0].url, CHECK_URLLEN, "http://127.0.0.1:1/");
    cfg.checks[0].timeout = 1;
    cfg.checks[0].systems = systems;
    cfg.checks[0].steps = CHECK_PRE_START;
    check_runner_init(run, c->loop, NULL, &cfg, NULL, NULL);
    c->opts.checks = run;
    c->leading = true;
}

void testutil_ctl_checks_off(ctl_controller_t *c, check_runner_t *run)
{
    c->opts.checks = NULL;
    check_runner_free(run);
}
