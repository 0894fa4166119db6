/*
 * admission/router.c - webhook routes: parse, check, call, answer, log.
 */
#include "admission/router.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log.h"

void adm_router_init(adm_router_t *r, http_server *srv, bool fail_open, adm_ready_fn ready,
                     void *ready_ud)
{
    memset(r, 0, sizeof(*r));
    r->srv = srv;
    r->fail_open = fail_open;
    r->ready = ready;
    r->ready_ud = ready_ud;
}

static int on_http(const http_request *req, http_response *resp, void *ud)
{
    return adm_router_serve(ud, req->body, req->body_len, resp);
}

int adm_router_add(adm_router_t *r, const char *path, const char *group, const char *resource,
                   adm_handler_fn handler, void *ud)
{
    adm_route_t *rt;
    int rc;

    if (r->nroutes == ADM_MAX_ROUTES)
        return HCP_EFULL;
    if (path == NULL || group == NULL || resource == NULL || handler == NULL ||
        strlen(path) >= sizeof(rt->path) || strlen(group) >= sizeof(rt->group) ||
        strlen(resource) >= sizeof(rt->resource) || resource[0] == '\0')
        return HCP_EINVAL;
    rt = &r->routes[r->nroutes];
    memset(rt, 0, sizeof(*rt));
    snprintf(rt->path, sizeof(rt->path), "%s", path);
    snprintf(rt->group, sizeof(rt->group), "%s", group);
    snprintf(rt->resource, sizeof(rt->resource), "%s", resource);
    rt->handler = handler;
    rt->ud = ud;
    rt->router = r;
    if ((rc = http_server_route(r->srv, "POST", rt->path, on_http, rt)) != 0)
        return rc;
    r->nroutes++;
    return 0;
}

/* The request's object as "group/resource ns/name" for messages. */
static void describe(const adm_request_t *q, char *out, size_t cap)
{
    snprintf(out, cap, "%.100s%s%.100s%s%.60s %.63s%s%.200s", q->group, q->group[0] ? "/" : "", q->resource,
             q->subresource[0] ? "/" : "", q->subresource, q->ns, q->ns[0] ? "/" : "",
             q->name[0] ? q->name : "(unnamed)");
}

/* Copies s into out (cap bytes), cut at a space with "..." when longer, so
 * a warning never ends mid-word. */
static void shorten(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s);

    if (n < cap) {
        memcpy(out, s, n + 1);
        return;
    }
    n = cap - 4;
    while (n > 0 && s[n] != ' ')
        n--;
    if (n == 0)
        n = cap - 4;
    while (n > 0 && (s[n - 1] & 0xC0) == 0x80) /* not inside a UTF-8 sequence */
        n--;
    if (n > 0 && (unsigned char)s[n - 1] >= 0xC0)
        n--;
    memcpy(out, s, n);
    memcpy(out + n, "...", 4);
}

/* The answer when the webhook cannot decide: what the failure policy would
 * do with an unreachable webhook, but said and logged. A refusal carries
 * the whole reason; a warning (at most ADM_WARNING_MAX bytes, the API
 * server's limit) carries brief, a short reason that fits whole, and the
 * log line has the rest. */
static void by_policy(adm_route_t *rt, adm_response_t *a, int code, const char *why,
                      const char *brief)
{
    adm_response_free(a);
    adm_response_init(a);
    rt->router->stats.failed++;
    if (rt->router->fail_open)
        adm_response_warn(a, "hcp-controller admitted this change without checking it: %.140s "
                             "(failurePolicy Ignore; details in the controller's log)",
                          brief);
    else
        adm_response_deny(a, code, "hcp-controller cannot check this change: %s", why);
}

/* Runs the checks and the handler for a parsed request into a. */
static void decide(adm_route_t *rt, const adm_request_t *q, adm_response_t *a)
{
    char why[1024], obj[600], err[300] = "", brief[141]; /* brief: what fits a warning */
    adm_router_t *r = rt->router;

    describe(q, obj, sizeof(obj));
    if (strcmp(q->group, rt->group) != 0 || strcmp(q->resource, rt->resource) != 0) {
        snprintf(why, sizeof(why), "webhook %.127s serves %.127s%s%.127s, not %.530s", rt->path, rt->group,
                 rt->group[0] ? "/" : "", rt->resource, obj);
        by_policy(rt, a, 400, why, "it reached a webhook for another resource");
    } else if (r->ready && !r->ready(r->ready_ud)) {
        snprintf(why, sizeof(why), "its caches have not synced yet; retry (%.600s)", obj);
        by_policy(rt, a, 503, why, "its caches have not synced yet");
    } else if (rt->handler(q, a, rt->ud, err, sizeof(err)) != 0) {
        snprintf(why, sizeof(why), "%.600s: %.299s", obj, err[0] ? err : "internal error");
        shorten(err[0] ? err : "internal error", brief, sizeof(brief));
        by_policy(rt, a, 500, why, brief);
    } else {
        if (!a->allowed)
            r->stats.denied++;
        else if (a->patch && json_array_size(a->patch) > 0)
            r->stats.patched++;
        else
            r->stats.allowed++;
        log_kv(a->allowed ? 2 : LOG_INFO, a->allowed ? "admitted" : "refused", "webhook",
               rt->path, "operation", adm_op_name(q->op), "object", obj, "uid", q->uid,
               "patched", a->patch && json_array_size(a->patch) ? "true" : "false", "message",
               a->message, NULL);
        return;
    }
    log_kv(LOG_WARN, r->fail_open ? "admitted unchecked" : "refused unchecked", "webhook",
           rt->path, "operation", adm_op_name(q->op), "uid", q->uid, "reason", why, NULL);
}

int adm_router_serve(adm_route_t *rt, const char *body, size_t len, http_response *resp)
{
    adm_request_t q;
    adm_response_t a;
    char err[300], *out;
    size_t n;
    int rc;

    rc = adm_request_parse(body, len, &q, err, sizeof(err));
    if (rc == HCP_ENOMEM)
        return rc;
    if (rc != 0) {
        rt->router->stats.invalid++;
        log_kv(LOG_WARN, "not an admission review", "webhook", rt->path, "uid", q.uid, "error",
               err, NULL);
        resp->status = 400;
        return http_response_printf(resp, "hcp-controller webhook %s: not an %s AdmissionReview: "
                                          "%s\n", rt->path, ADM_API_VERSION, err);
    }
    adm_response_init(&a);
    decide(rt, &q, &a);
    rc = adm_review_render(q.uid, &a, &out, &n);
    adm_response_free(&a);
    adm_request_free(&q);
    if (rc != 0)
        return rc;
    http_response_take_body(resp, out, n);
    return http_response_set_content_type(resp, "application/json");
}
