/* libFuzzer target: a hosted API server's answer to the controller's
 * TokenRequest (untrusted JSON: the token that goes into every later
 * Authorization header, and its expiry), and the Secret's kubeconfig decode
 * beside it (the same bytes read as a Secret). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hosted/hosted.h"
#include "hosted/kubeconfig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *doc = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, NULL);
    char err[256], *token = NULL, *yaml = NULL;
    double life = 0;
    size_t len = 0;

    if (!doc)
        return 0;
    if (hosted_token_from_request(doc, 1780000000.0, &token, &life, err, sizeof(err)) == 0) {
        if (!token || life <= 0 || strpbrk(token, " \r\n\t"))
            abort(); /* a token a header could not carry, or one expired */
        free(token);
    }
    if (hosted_kubeconfig_from_secret(doc, &yaml, &len, err, sizeof(err)) == 0)
        free(yaml);
    json_decref(doc);
    return 0;
}
