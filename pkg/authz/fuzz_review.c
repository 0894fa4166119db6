/* libFuzzer target: an API server's answer to a TokenReview or a
 * SubjectAccessReview. The bytes are decoded as JSON (as the kube client
 * does) and read by both parsers; an accepted user is turned into the
 * access review the checker would send. */
#include <stdint.h>
#include <stdlib.h>

#include "authz/authz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t e;
    json_t *j = json_loadb((const char *)data, size, JSON_DECODE_ANY, &e);
    authz_user u;
    char err[256];

    if (!j)
        return 0;
    if (authz_parse_tokenreview(j, &u, err, sizeof(err)) == 1) {
        const authz_attrs m = {.verb = "get", .path = "/metrics"};
        const authz_attrs c = {.verb = "get", .group = "hypershift.openshift.io",
                               .resource = "hostedclusters", .ns = "ns", .name = "hc"};
        json_t *r = authz_sar_request(&u, &m);
        json_decref(r);
        r = authz_sar_request(&u, &c);
        json_decref(r);
        authz_user_free(&u);
    }
    (void)authz_parse_sar(j, err, sizeof(err));
    json_decref(j);
    return 0;
}
