/* libFuzzer target: an AdmissionReview request body, as a webhook route
 * receives it. The bytes go through the router (parse, resource check,
 * handler, answer); the handler reads the objects and answers with a patch
 * built from them, so rendering runs on parsed input too. Every answer must
 * be HTTP 400 or a JSON AdmissionReview carrying the request's uid. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "admission/router.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int handler(const adm_request_t *q, adm_response_t *a, void *ud, char *err,
                   size_t errlen)
{
    const char *const segs[] = {"metadata", "annotations", q->name, NULL};
    char path[600];

    (void)ud;
    if (q->object == NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: no object", q->name);
    if (adm_pointer(path, sizeof(path), segs) != 0)
        return hcp_errf(err, errlen, HCP_ERANGE, "name too long");
    if (q->old_object && json_object_get(q->old_object, "spec"))
        return adm_patch_op(a, "replace", "/spec",
                            json_deep_copy(json_object_get(q->old_object, "spec")));
    if (q->op == ADM_DELETE)
        adm_response_deny(a, 403, "%s %s", q->user, q->kind);
    adm_response_warn(a, "%s", q->subresource);
    return adm_patch_op(a, "add", path, json_string(q->uid));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static http_server srv;
    static adm_router_t r;
    static int init;
    http_response resp;

    if (!init) {
        http_server_init(&srv, NULL);
        adm_router_init(&r, &srv, size % 2, NULL, NULL);
        if (adm_router_add(&r, "/mutate", "hypershift.openshift.io", "hostedclusters", handler,
                           NULL) != 0)
            abort();
        init = 1;
    }
    r.fail_open = size % 2;
    memset(&resp, 0, sizeof(resp));
    resp.status = 200;
    if (adm_router_serve(&r.routes[0], (const char *)data, size, &resp) == 0) {
        if (resp.status == 200) {
            json_t *j = json_loadb(resp.body, resp.body_len, 0, NULL);
            if (j == NULL || !json_is_object(json_object_get(j, "response")))
                abort();
            json_decref(j);
        } else if (resp.status != 400) {
            abort();
        }
    }
    free(resp.body);
    return 0;
}
