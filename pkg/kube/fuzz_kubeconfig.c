/* libFuzzer target: the kubeconfig reader (YAML bytes, as found in a
 * Secret), with and without a named context. File references resolve below
 * a directory that does not exist, so the input alone decides the result. */
#include <stdint.h>
#include <stdlib.h>

#include "kube/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const contexts[] = {NULL, "admin", "lab"};
    size_t i;

    for (i = 0; i < sizeof contexts / sizeof contexts[0]; i++) {
        kube_config cfg;
        kube_error err;

        if (kube_config_load_yaml(&cfg, (const char *)data, size, "/nonexistent/hcp-fuzz",
                                  contexts[i], &err) == 0)
            kube_config_free(&cfg);
    }
    return 0;
}
