/* packed.c: JSON text kept deflated (packed.h). */
#include "decide/packed.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

/* Raw deflate, 16 KiB window (the texts are smaller), default level. */
#define ZBITS 14

void decide_packed_free(decide_packed_t *p)
{
    free(p->z);
    memset(p, 0, sizeof(*p));
}

int decide_pack(const char *text, size_t len, const char *dict, decide_packed_t *out)
{
    z_stream zs;
    unsigned char *buf = NULL, *exact;
    memset(&zs, 0, sizeof(zs));
    memset(out, 0, sizeof(*out));
    if (len > UINT32_MAX / 2)
        return -1;
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -ZBITS, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return -1;
    if (deflateSetDictionary(&zs, (const Bytef *)dict, (uInt)strlen(dict)) != Z_OK)
        goto fail;
    uLong bound = deflateBound(&zs, (uLong)len);
    if (!(buf = malloc(bound)))
        goto fail;
    zs.next_in = (Bytef *)text;
    zs.avail_in = (uInt)len;
    zs.next_out = buf;
    zs.avail_out = (uInt)bound;
    if (deflate(&zs, Z_FINISH) != Z_STREAM_END)
        goto fail;
    out->zlen = (uint32_t)zs.total_out;
    out->len = (uint32_t)len;
    deflateEnd(&zs);
    exact = realloc(buf, out->zlen ? out->zlen : 1);
    out->z = exact ? exact : buf;
    return 0;
fail:
    deflateEnd(&zs);
    free(buf);
    return -1;
}

char *decide_unpack(const decide_packed_t *p, const char *dict)
{
    z_stream zs;
    char *text = malloc((size_t)p->len + 1);
    int rc;
    memset(&zs, 0, sizeof(zs));
    if (!text || inflateInit2(&zs, -ZBITS) != Z_OK) {
        free(text);
        return NULL;
    }
    if (inflateSetDictionary(&zs, (const Bytef *)dict, (uInt)strlen(dict)) != Z_OK)
        goto fail;
    zs.next_in = p->z;
    zs.avail_in = p->zlen;
    zs.next_out = (Bytef *)text;
    zs.avail_out = p->len;
    rc = inflate(&zs, Z_FINISH);
    if (rc != Z_STREAM_END || zs.total_out != p->len)
        goto fail;
    inflateEnd(&zs);
    text[p->len] = '\0';
    return text;
fail:
    inflateEnd(&zs);
    free(text);
    return NULL;
}
