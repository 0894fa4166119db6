/* libFuzzer target: a client's Accept-Encoding header (untrusted text that
 * decides whether /metrics is answered in gzip). The answer must not depend
 * on anything but the elements that name gzip: a header without the word
 * never accepts it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "httpserver/httpserver.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *h = malloc(size + 1);
    if (!h)
        return 0;
    memcpy(h, data, size);
    h[size] = '\0'; /* a header value ends at its first NUL as MHD hands it over */
    bool yes = http_accepts_coding(h, "gzip");
    if (yes && !strcasestr(h, "gzip"))
        abort();
    free(h);
    return 0;
}
