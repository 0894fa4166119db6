/* packed: JSON text the caches keep deflated.
 *
 * Views keep a few texts that are read only now and then (a HostedCluster's
 * or NodePool's conditions as served, a companion's digest) but would
 * otherwise stay on the heap for every object of the fleet. Each is kept as
 * a raw deflate stream with a preset dictionary of the words its kind of
 * text repeats, which matters for texts of a few hundred bytes: without one
 * deflate has nothing to refer to until the text has said it once.
 */
#ifndef HCP_DECIDE_PACKED_H
#define HCP_DECIDE_PACKED_H

#include <stddef.h>
#include <stdint.h>

typedef struct decide_packed {
    unsigned char *z;       /* raw deflate stream (owned), NULL when empty */
    uint32_t zlen;          /* bytes of z */
    uint32_t len;           /* bytes of the text it inflates to */
} decide_packed_t;

/* Deflates len bytes of text into *out (z of exactly zlen bytes) with the
 * preset dictionary dict (NUL-terminated; the same one must unpack it).
 * Returns 0, or -1 when out of memory or len exceeds 2 GiB (*out empty). */
int decide_pack(const char *text, size_t len, const char *dict, decide_packed_t *out);

/* Inflates p with dict into a new NUL-terminated string of exactly p->len
 * bytes (free()), or NULL when the stream is damaged or memory runs out. */
char *decide_unpack(const decide_packed_t *p, const char *dict);

/* Frees p's stream and empties it. */
void decide_packed_free(decide_packed_t *p);

#endif
