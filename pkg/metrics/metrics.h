/*
 * metrics/metrics.h - Prometheus text exposition format (version 0.0.4):
 * a small writer for families and samples, and a registry rendered at scrape
 * time.
 *
 * Two kinds of family live in a registry:
 *
 *   - owned families (counter, gauge, histogram) keep one child per label set,
 *     created on first use, for the controller's own metrics ("API requests
 *     by verb and code", "reconcile latency");
 *   - collector families own no values: a callback emits their samples while
 *     the registry renders, so values derived from a cache and a clock (the
 *     change_management_* gauges) are computed per scrape and never stale.
 *
 * Everything is single-threaded: the registry is used from the event loop
 * that also serves /metrics. Families are caller-allocated (for instance
 * fields of a struct grouping the controller's metrics) and linked into the
 * registry by metrics_register(); the registry frees what they allocate.
 *
 * Label values and help texts are untrusted bytes: they are escaped as the
 * format requires, and invalid UTF-8 is replaced by U+FFFD, so no input can
 * produce an exposition that a Prometheus server rejects.
 */
#ifndef METRICS_METRICS_H
#define METRICS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "base/list.h"

/* Errors: functions return 0 or a negative HCP_E* code (base/error.h):
 * HCP_EINVAL for a bad name, label, value or argument, HCP_ENOMEM when
 * allocation fails, HCP_EEXIST when a family of that name is already
 * registered, HCP_ECALLBACK when a collector callback reported failure. */

#define METRICS_MAX_LABELS 8 /* label names per family (histograms: plus "le") */

typedef enum metrics_type {
    METRICS_COUNTER,  /* monotonically increasing; names conventionally end in _total */
    METRICS_GAUGE,    /* any value, may go up and down */
    METRICS_HISTOGRAM /* cumulative buckets, _sum and _count */
} metrics_type;

/* ---- output buffer ---------------------------------------------------- */

/*
 * A growable byte buffer holding rendered text. Appends never fail halfway
 * silently: after an allocation failure `failed` stays set, later appends do
 * nothing and return HCP_ENOMEM, so a caller may check once at the end.
 */
typedef struct metrics_buf {
    char *data;  /* owned, NUL-terminated when len > 0 (text, not gzip); NULL until
                    first append */
    size_t len;  /* bytes used, not counting the NUL */
    size_t cap;  /* bytes allocated */
    int failed;  /* non-zero after an allocation failure */
    struct metrics_gzip *gz; /* metrics_buf_gzip(): data is the gzip stream of
                                what was appended, NULL: data is the text */
} metrics_buf;

/* Starts an empty buffer; it allocates nothing until the first append. */
void metrics_buf_init(metrics_buf *b);

/*
 * Makes the empty buffer b deflate what is appended as it comes, so that
 * data holds a gzip stream (RFC 1952) of the text, finished by
 * metrics_buf_take(); at no time does it hold more than METRICS_GZIP_CHUNK
 * bytes of text. For an answer to a client that accepts gzip (Prometheus
 * does): a fleet's /metrics is a few megabytes of text and a tenth of that
 * deflated. Returns 0 or HCP_ENOMEM (b unchanged).
 */
#define METRICS_GZIP_CHUNK 16384
int metrics_buf_gzip(metrics_buf *b);

/* Frees the data and returns the buffer to its initial state. */
void metrics_buf_free(metrics_buf *b);

/* Appends len bytes (copied). Returns 0 or HCP_ENOMEM. */
int metrics_buf_append(metrics_buf *b, const char *data, size_t len);

/*
 * Hands the rendered text (a gzip buffer: its finished gzip stream) to the
 * caller, who then owns it (free() it), and leaves the buffer empty. Lets
 * an HTTP response take the body without a copy. Returns NULL (and *len 0)
 * for an empty buffer, or a gzip buffer that failed.
 */
char *metrics_buf_take(metrics_buf *b, size_t *len);

/* ---- writer ----------------------------------------------------------- */

/*
 * Formats a sample value the way Prometheus parses it: integers up to 1e15
 * without exponent or fraction ("42", "-2", "0"), other finite numbers with
 * the shortest of %.15g/%.16g/%.17g that reads back exactly, and "+Inf",
 * "-Inf", "NaN". Negative zero prints as "0". out receives a NUL-terminated
 * string; 32 bytes always suffice. Returns the length written, or
 * HCP_EINVAL when outlen is too small.
 */
int metrics_format_value(double v, char *out, size_t outlen);

/* True for a valid metric name: [a-zA-Z_:][a-zA-Z0-9_:]*. */
int metrics_valid_name(const char *name);

/*
 * True for a valid label name: [a-zA-Z_][a-zA-Z0-9_]*, not starting with
 * "__" (reserved for Prometheus itself).
 */
int metrics_valid_label_name(const char *name);

/*
 * Writes "# HELP name help" (help escaped: backslash and newline) and
 * "# TYPE name type". Returns 0, HCP_EINVAL for an invalid name or
 * HCP_ENOMEM.
 */
int metrics_write_header(metrics_buf *b, const char *name, const char *help, metrics_type type);

/*
 * Writes one sample line: name, then suffix (may be NULL; "_bucket", "_sum"
 * and "_count" for histograms), then the label pairs in order (values
 * escaped: backslash, double quote, newline), then the value. A pair whose
 * value is NULL is left out. `le` (may be NULL) is appended as the last
 * label with its bound formatted by metrics_format_value(). Names are
 * assumed valid (checked at registration); values are escaped here.
 * Returns 0 or HCP_ENOMEM.
 */
int metrics_write_sample(metrics_buf *b, const char *name, const char *suffix,
                         const char *const *label_names, const char *const *label_values,
                         size_t nlabels, const double *le, double value);

/* ---- registry --------------------------------------------------------- */

typedef struct metrics_family metrics_family;
typedef struct metrics_child metrics_child;
typedef struct metrics_emitter metrics_emitter;

/*
 * A collector: called once per render of its family, after the family's
 * # HELP and # TYPE lines; it emits samples with metrics_emit() or
 * metrics_emit_histogram(). Each label set should be emitted once. Returning
 * a negative value aborts the render with HCP_ECALLBACK.
 */
typedef int (*metrics_collect_fn)(metrics_emitter *e, void *ud);

/* What metrics_register() needs to know about a family. Nothing is kept: strings are copied. */
typedef struct metrics_desc {
    const char *name;             /* metric name, e.g. "hcp_api_requests_total" */
    const char *help;             /* one line of help text (escaped on output) */
    metrics_type type;            /* counter, gauge or histogram */
    const char *const *labels;    /* NULL-terminated label names; NULL for none */
    const double *buckets;        /* histogram upper bounds, finite, strictly increasing */
    size_t nbuckets;              /* number of bounds; +Inf is implicit and not listed */
    metrics_collect_fn collect;   /* non-NULL: samples come from this callback at render */
    void *collect_ud;             /* passed to collect */
} metrics_desc;

/* The registry: an ordered list of families. Caller-allocated. */
typedef struct metrics_registry {
    hcp_link_t families;    /* in registration order (borrowed storage) */
    char err[160];          /* detail of the last registration or render failure */
} metrics_registry;

/* A family. Caller-allocated; fields are private to metrics.c. */
struct metrics_family {
    hcp_link_t link;               /* on its registry's list */
    metrics_registry *reg;         /* the registry it is linked into */
    char *name;                    /* owned copy */
    char *help;                    /* owned copy */
    metrics_type type;             /* counter, gauge or histogram */
    size_t nlabels;                /* label names in use */
    char *labels[METRICS_MAX_LABELS]; /* owned copies of the label names */
    double *buckets;               /* owned copy of the histogram bounds */
    size_t nbuckets;               /* bounds, without +Inf */
    metrics_collect_fn collect;    /* collector, or NULL for an owned family */
    void *collect_ud;              /* collector's argument */
    metrics_child **children;      /* owned; label sets in creation order */
    size_t nchildren;              /* children in use */
    size_t cchildren;              /* children allocated */
    uint32_t *index;               /* owned open-addressing table: child position + 1, 0 = empty */
    size_t index_size;             /* slots in index, a power of two (0 before the first child) */
};

/* One label set of an owned family (created by the tests' helpers,
 * testutil_metrics.h; rendered and freed here): one allocation holding the
 * struct, the bucket counts and the values. Fields are private. */
struct metrics_child {
    metrics_family *family;            /* owner, for type checks */
    uint32_t hash;                     /* hash of the label values */
    double value;                      /* counter or gauge value; histogram sum */
    uint64_t count;                    /* histogram observations */
    uint64_t *buckets;                 /* histogram per-bucket (not cumulative) counts, nbuckets */
    char *values[METRICS_MAX_LABELS];  /* label values, in the family's label order */
};

/* Bucket bounds suited to latencies in seconds (5 ms .. 10 s, as Prometheus clients use). */
extern const double metrics_default_buckets[];
#define METRICS_DEFAULT_NBUCKETS 11

/* Starts an empty registry. */
void metrics_registry_init(metrics_registry *r);

/*
 * Frees everything the registry's families allocated (copies, children,
 * indexes) and unlinks them. The family structs themselves belong to the
 * caller and may be reused or discarded afterwards.
 */
void metrics_registry_free(metrics_registry *r);

/*
 * Validates desc and links f into r. Names and label names are checked
 * against the exposition grammar; a histogram may not use the label "le"
 * and needs finite, strictly increasing bounds. Registering the same name
 * twice fails with HCP_EEXIST, so two parts of the program cannot
 * silently emit a family twice; so does passing a family already linked
 * into r. On failure r->err explains and nothing is allocated or linked
 * (f's contents are unspecified unless it was already registered). Returns 0, HCP_EINVAL,
 * HCP_EEXIST or HCP_ENOMEM.
 */
int metrics_register(metrics_registry *r, metrics_family *f, const metrics_desc *desc);

/*
 * True when values holds one non-NULL value per label name of f, in order
 * (values may be NULL for a family without labels).
 */
int metrics_label_values_ok(const metrics_family *f, const char *const *values);

/*
 * Emits one sample of a counter or gauge collector family. values has one
 * entry per label name of the family, in order. Returns 0, HCP_EINVAL
 * (wrong family type, NULL value) or HCP_ENOMEM.
 */
int metrics_emit(metrics_emitter *e, const char *const *values, double value);

/*
 * Emits one label set of a histogram collector family: cumulative[i] is the
 * number of observations <= the family's bucket i, count the total (the +Inf
 * bucket) and sum their sum. Counts must be non-decreasing and end <= count.
 * Returns 0, HCP_EINVAL or HCP_ENOMEM.
 */
int metrics_emit_histogram(metrics_emitter *e, const char *const *values,
                           const uint64_t *cumulative, uint64_t count, double sum);

/*
 * Appends the whole registry to out, family by family in registration order,
 * owned children in creation order; collectors run now. An owned family
 * without labels always shows one sample (0 before first use); a labelled one
 * with no children shows only its header. Returns 0, HCP_ENOMEM or
 * HCP_ECALLBACK (r->err names the family); on failure out holds a
 * partial rendering that must not be served.
 */
int metrics_registry_render(metrics_registry *r, metrics_buf *out);

/* The content type to serve the rendering with. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

#endif
