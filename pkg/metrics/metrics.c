/*
 * metrics/metrics.c - Prometheus text exposition writer and registry.
 */
#include "metrics/metrics.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "base/buf.h"

/* Passed to collectors: where their samples go. */
struct metrics_emitter {
    metrics_family *family; /* family being rendered */
    metrics_buf *out;       /* destination */
    int rc;                 /* first failure of an emit, 0 if none */
};

const double metrics_default_buckets[METRICS_DEFAULT_NBUCKETS] = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};

/* ---- buffer ------------------------------------------------------------ */

/* The deflate stream of a gzip buffer and the text not yet given to it. */
struct metrics_gzip {
    z_stream zs;
    size_t n;                      /* bytes in text */
    char text[METRICS_GZIP_CHUNK];
};

void metrics_buf_init(metrics_buf *b)
{
    memset(b, 0, sizeof(*b));
}

static void gzip_end(metrics_buf *b)
{
    if (b->gz) {
        deflateEnd(&b->gz->zs);
        free(b->gz);
        b->gz = NULL;
    }
}

void metrics_buf_free(metrics_buf *b)
{
    gzip_end(b);
    free(b->data);
    metrics_buf_init(b);
}

int metrics_buf_gzip(metrics_buf *b)
{
    struct metrics_gzip *gz = calloc(1, sizeof(*gz));
    /* windowBits 15 + 16: a gzip header and trailer; the fastest level, as
     * the answer is made again for every scrape. */
    if (!gz || deflateInit2(&gz->zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8,
                            Z_DEFAULT_STRATEGY) != Z_OK) {
        free(gz);
        return HCP_ENOMEM;
    }
    b->gz = gz;
    return 0;
}

/* Deflates the text held into data (flush: Z_NO_FLUSH, or Z_FINISH to end
 * the stream). 0 or HCP_ENOMEM (failed set). */
static int gzip_drain(metrics_buf *b, int flush)
{
    struct metrics_gzip *gz = b->gz;
    gz->zs.next_in = (Bytef *)gz->text;
    gz->zs.avail_in = (uInt)gz->n;
    for (;;) {
        if (hcp_buf_reserve(&b->data, &b->len, &b->cap, 4096,
                            deflateBound(&gz->zs, gz->zs.avail_in) + 64)) {
            b->failed = 1;
            return HCP_ENOMEM;
        }
        gz->zs.next_out = (Bytef *)b->data + b->len;
        gz->zs.avail_out = (uInt)(b->cap - b->len);
        int rc = deflate(&gz->zs, flush);
        b->len = b->cap - gz->zs.avail_out;
        if (rc == Z_STREAM_END || (flush == Z_NO_FLUSH && gz->zs.avail_in == 0))
            break;
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            b->failed = 1;
            return HCP_ENOMEM;
        }
    }
    gz->n = 0;
    return 0;
}

int metrics_buf_append(metrics_buf *b, const char *data, size_t len)
{
    if (b->failed)
        return HCP_ENOMEM;
    if (len == 0)
        return 0;
    if (b->gz) {
        while (len > 0) {
            size_t n = sizeof(b->gz->text) - b->gz->n;
            if (n > len)
                n = len;
            memcpy(b->gz->text + b->gz->n, data, n);
            b->gz->n += n;
            data += n;
            len -= n;
            if (b->gz->n == sizeof(b->gz->text) && gzip_drain(b, Z_NO_FLUSH))
                return HCP_ENOMEM;
        }
        return 0;
    }
    if (hcp_buf_append(&b->data, &b->len, &b->cap, 256, data, len) != 0) {
        b->failed = 1;
        return HCP_ENOMEM;
    }
    return 0;
}

static int append_str(metrics_buf *b, const char *s)
{
    return metrics_buf_append(b, s, strlen(s));
}

char *metrics_buf_take(metrics_buf *b, size_t *len)
{
    if (b->gz) {
        int rc = b->failed ? HCP_ENOMEM : gzip_drain(b, Z_FINISH);
        gzip_end(b);
        if (rc) {
            metrics_buf_free(b);
            *len = 0;
            return NULL;
        }
    }
    char *p = b->data;

    *len = p ? b->len : 0;
    metrics_buf_init(b);
    return p;
}

/* ---- formatting ---------------------------------------------------------- */

int metrics_format_value(double v, char *out, size_t outlen)
{
    int n, prec;

    if (outlen == 0)
        return HCP_EINVAL;
    if (isnan(v))
        n = snprintf(out, outlen, "NaN");
    else if (isinf(v))
        n = snprintf(out, outlen, "%s", v > 0 ? "+Inf" : "-Inf");
    else if (v == 0)
        n = snprintf(out, outlen, "0"); /* also -0 */
    else if (v == trunc(v) && fabs(v) < 1e15)
        n = snprintf(out, outlen, "%lld", (long long)v); /* exact, and cheaper than %.0f */
    else {
        n = -1;
        for (prec = 15; prec <= 17; prec++) {
            n = snprintf(out, outlen, "%.*g", prec, v);
            if (n < 0 || (size_t)n >= outlen || strtod(out, NULL) == v)
                break;
        }
    }
    if (n < 0 || (size_t)n >= outlen)
        return HCP_EINVAL;
    return n;
}

static int is_alpha_(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_digit(int c)
{
    return c >= '0' && c <= '9';
}

int metrics_valid_name(const char *name)
{
    const char *p;

    if (name == NULL || name[0] == '\0' || !(is_alpha_((unsigned char)name[0]) || name[0] == ':'))
        return 0;
    for (p = name + 1; *p; p++)
        if (!(is_alpha_((unsigned char)*p) || is_digit((unsigned char)*p) || *p == ':'))
            return 0;
    return 1;
}

int metrics_valid_label_name(const char *name)
{
    const char *p;

    if (name == NULL || name[0] == '\0' || !is_alpha_((unsigned char)name[0]))
        return 0;
    if (name[0] == '_' && name[1] == '_')
        return 0;
    for (p = name + 1; *p; p++)
        if (!(is_alpha_((unsigned char)*p) || is_digit((unsigned char)*p)))
            return 0;
    return 1;
}

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes), or 0 when the
 * bytes there are not one (overlong forms, surrogates and code points above
 * U+10FFFF included).
 */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len, i;
    uint32_t cp;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF) {
        len = 2;
        cp = s[0] & 0x1F;
    } else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        len = 3;
        cp = s[0] & 0x0F;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        len = 4;
        cp = s[0] & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/*
 * Appends s escaped for a label value (quote set: \\, \", \n) or for help
 * text (\\ and \n only), replacing invalid UTF-8 with U+FFFD.
 */
static int append_escaped(metrics_buf *b, const char *s, int quote)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s), i = 0, run = 0, len;

    /* Names, namespaces and reasons are plain ASCII with nothing to escape:
     * skip to the first byte that is not, often the end (one copy). */
    while (i < n && p[i] < 0x80 && p[i] != '\\' && p[i] != '\n' && !(quote && p[i] == '"'))
        i++;
    while (i < n) {
        const char *esc = NULL;

        if (p[i] == '\\')
            esc = "\\\\";
        else if (p[i] == '\n')
            esc = "\\n";
        else if (quote && p[i] == '"')
            esc = "\\\"";
        if (esc) {
            metrics_buf_append(b, s + run, i - run);
            append_str(b, esc);
            run = ++i;
            continue;
        }
        len = utf8_seq(p + i, n - i);
        if (len == 0) {
            metrics_buf_append(b, s + run, i - run);
            append_str(b, "\xEF\xBF\xBD");
            run = ++i;
            continue;
        }
        i += len;
    }
    return metrics_buf_append(b, s + run, i - run);
}

static const char *type_name(metrics_type t)
{
    switch (t) {
    case METRICS_COUNTER:
        return "counter";
    case METRICS_GAUGE:
        return "gauge";
    case METRICS_HISTOGRAM:
        return "histogram";
    }
    return "untyped";
}

int metrics_write_header(metrics_buf *b, const char *name, const char *help, metrics_type type)
{
    if (!metrics_valid_name(name))
        return HCP_EINVAL;
    append_str(b, "# HELP ");
    append_str(b, name);
    append_str(b, " ");
    append_escaped(b, help ? help : "", 0);
    append_str(b, "\n# TYPE ");
    append_str(b, name);
    append_str(b, " ");
    append_str(b, type_name(type));
    return append_str(b, "\n");
}

int metrics_write_sample(metrics_buf *b, const char *name, const char *suffix,
                         const char *const *label_names, const char *const *label_values,
                         size_t nlabels, const double *le, double value)
{
    char num[32];
    size_t i;
    int first = 1;

    append_str(b, name);
    if (suffix)
        append_str(b, suffix);
    for (i = 0; i < nlabels; i++) {
        if (label_values[i] == NULL)
            continue;
        append_str(b, first ? "{" : ",");
        first = 0;
        append_str(b, label_names[i]);
        append_str(b, "=\"");
        append_escaped(b, label_values[i], 1);
        append_str(b, "\"");
    }
    if (le) {
        metrics_format_value(*le, num, sizeof(num));
        append_str(b, first ? "{le=\"" : ",le=\"");
        append_str(b, num);
        append_str(b, "\"");
        first = 0;
    }
    if (!first)
        append_str(b, "}");
    metrics_format_value(value, num, sizeof(num));
    append_str(b, " ");
    append_str(b, num);
    return append_str(b, "\n");
}

/*
 * Writes the _bucket, _sum and _count lines of one histogram label set.
 * counts has nbuckets entries, cumulative or per bucket as said; NULL means
 * all zero (a histogram nothing was observed in yet).
 */
static int write_histogram(metrics_buf *b, const metrics_family *f, const char *const *values,
                           const uint64_t *counts, int cumulative, uint64_t count, double sum)
{
    uint64_t cum = 0;
    double inf = INFINITY;
    size_t i;

    for (i = 0; i < f->nbuckets; i++) {
        if (counts)
            cum = cumulative ? counts[i] : cum + counts[i];
        metrics_write_sample(b, f->name, "_bucket", (const char *const *)f->labels, values,
                             f->nlabels, &f->buckets[i], (double)cum);
    }
    metrics_write_sample(b, f->name, "_bucket", (const char *const *)f->labels, values, f->nlabels,
                         &inf, (double)count);
    metrics_write_sample(b, f->name, "_sum", (const char *const *)f->labels, values, f->nlabels,
                         NULL, sum);
    return metrics_write_sample(b, f->name, "_count", (const char *const *)f->labels, values,
                                f->nlabels, NULL, (double)count);
}

/* ---- registry ------------------------------------------------------------ */

void metrics_registry_init(metrics_registry *r)
{
    memset(r, 0, sizeof(*r));
    hcp_list_init(&r->families);
}

static void family_free(metrics_family *f)
{
    size_t i;

    for (i = 0; i < f->nchildren; i++)
        free(f->children[i]);
    free(f->children);
    free(f->index);
    for (i = 0; i < f->nlabels; i++)
        free(f->labels[i]);
    free(f->buckets);
    free(f->help);
    free(f->name);
    memset(f, 0, sizeof(*f));
}

void metrics_registry_free(metrics_registry *r)
{
    hcp_link_t *n;

    while ((n = hcp_list_pop_front(&r->families)) != NULL)
        family_free(hcp_list_entry(n, metrics_family, link));
    metrics_registry_init(r);
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);

    if (p)
        memcpy(p, s, n);
    return p;
}

/* Checks a family description against the exposition grammar and the
 * registry; *nlabels gets its label count. Returns 0, HCP_EINVAL or
 * HCP_EEXIST with r->err filled. */
static int check_desc(metrics_registry *r, const metrics_family *f, const metrics_desc *d,
                      size_t *nlabels)
{
    hcp_link_t *pos, *tmp;
    size_t i, n = 0;

    HCP_LIST_FOREACH(pos, tmp, &r->families) {
        if (pos == &f->link) {
            return hcp_errf(r->err, sizeof(r->err), HCP_EEXIST,
                            "%s: this family is already registered", f->name);
        }
    }
    if (d == NULL || !metrics_valid_name(d->name)) {
        return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL, "invalid metric name \"%s\"",
                        d && d->name ? d->name : "(null)");
    }
    if (d->type != METRICS_COUNTER && d->type != METRICS_GAUGE && d->type != METRICS_HISTOGRAM) {
        return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL, "%s: unknown metric type", d->name);
    }
    HCP_LIST_FOREACH(pos, tmp, &r->families) {
        if (strcmp(hcp_list_entry(pos, metrics_family, link)->name, d->name) == 0) {
            return hcp_errf(r->err, sizeof(r->err), HCP_EEXIST, "%s: already registered", d->name);
        }
    }
    while (d->labels && d->labels[n]) {
        if (n == METRICS_MAX_LABELS) {
            return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL, "%s: more than %d labels", d->name,
                            METRICS_MAX_LABELS);
        }
        if (!metrics_valid_label_name(d->labels[n]) ||
            (d->type == METRICS_HISTOGRAM && strcmp(d->labels[n], "le") == 0)) {
            return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL, "%s: invalid label name \"%s\"",
                            d->name, d->labels[n]);
        }
        for (i = 0; i < n; i++) {
            if (strcmp(d->labels[i], d->labels[n]) == 0) {
                return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL,
                                "%s: duplicate label name \"%s\"", d->name, d->labels[n]);
            }
        }
        n++;
    }
    if (d->type == METRICS_HISTOGRAM) {
        if (d->nbuckets > 0 && d->buckets == NULL) {
            return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL, "%s: bucket bounds missing",
                            d->name);
        }
        for (i = 0; i < d->nbuckets; i++) {
            if (!isfinite(d->buckets[i]) || (i > 0 && !(d->buckets[i] > d->buckets[i - 1]))) {
                return hcp_errf(r->err, sizeof(r->err), HCP_EINVAL,
                                "%s: bucket bounds must be finite and strictly increasing",
                                d->name);
            }
        }
    }
    *nlabels = n;
    return 0;
}

int metrics_register(metrics_registry *r, metrics_family *f, const metrics_desc *d)
{
    size_t i, n = 0;
    int rc;

    if ((rc = check_desc(r, f, d, &n)) != 0)
        return rc;
    rc = HCP_ENOMEM;
    memset(f, 0, sizeof(*f));
    f->type = d->type;
    f->collect = d->collect;
    f->collect_ud = d->collect_ud;
    f->name = dup_str(d->name);
    f->help = dup_str(d->help ? d->help : "");
    if (f->name == NULL || f->help == NULL)
        goto fail;
    for (i = 0; i < n; i++) {
        f->labels[i] = dup_str(d->labels[i]);
        if (f->labels[i] == NULL)
            goto fail;
        f->nlabels++;
    }
    if (d->type == METRICS_HISTOGRAM && d->nbuckets > 0) {
        f->buckets = malloc(d->nbuckets * sizeof(double));
        if (f->buckets == NULL)
            goto fail;
        memcpy(f->buckets, d->buckets, d->nbuckets * sizeof(double));
        f->nbuckets = d->nbuckets;
    }
    f->reg = r;
    hcp_list_push_back(&r->families, &f->link);
    return 0;
fail:
    hcp_errf(r->err, sizeof(r->err), rc, "%s: out of memory", d->name);
    family_free(f);
    return rc;
}

int metrics_label_values_ok(const metrics_family *f, const char *const *values)
{
    size_t i;

    if (f->nlabels > 0 && values == NULL)
        return 0;
    for (i = 0; i < f->nlabels; i++)
        if (values[i] == NULL)
            return 0;
    return 1;
}

int metrics_emit(metrics_emitter *e, const char *const *values, double value)
{
    const metrics_family *f = e->family;
    int rc;

    if (f->type == METRICS_HISTOGRAM || !metrics_label_values_ok(f, values))
        rc = HCP_EINVAL;
    else
        rc = metrics_write_sample(e->out, f->name, NULL, (const char *const *)f->labels, values,
                                  f->nlabels, NULL, value);
    if (rc != 0 && e->rc == 0)
        e->rc = rc;
    return rc;
}

int metrics_emit_histogram(metrics_emitter *e, const char *const *values,
                           const uint64_t *cumulative, uint64_t count, double sum)
{
    const metrics_family *f = e->family;
    size_t i;
    int rc = HCP_EINVAL;

    if (f->type != METRICS_HISTOGRAM || !metrics_label_values_ok(f, values) ||
        (f->nbuckets > 0 && cumulative == NULL))
        goto fail;
    for (i = 0; i < f->nbuckets; i++)
        if ((i > 0 && cumulative[i] < cumulative[i - 1]) || cumulative[i] > count)
            goto fail;
    rc = write_histogram(e->out, f, values, cumulative, 1, count, sum);
    if (rc != 0)
        goto fail;
    return 0;
fail:
    if (e->rc == 0)
        e->rc = rc;
    return rc;
}

static int render_owned(metrics_buf *out, const metrics_family *f)
{
    size_t i;
    metrics_child *c;

    if (f->nchildren == 0 && f->nlabels == 0) {
        if (f->type == METRICS_HISTOGRAM)
            return write_histogram(out, f, NULL, NULL, 1, 0, 0);
        return metrics_write_sample(out, f->name, NULL, NULL, NULL, 0, NULL, 0);
    }
    for (i = 0; i < f->nchildren; i++) {
        c = f->children[i];
        if (f->type == METRICS_HISTOGRAM)
            write_histogram(out, f, (const char *const *)c->values, c->buckets, 0, c->count,
                            c->value);
        else
            metrics_write_sample(out, f->name, NULL, (const char *const *)f->labels,
                                 (const char *const *)c->values, f->nlabels, NULL, c->value);
    }
    return out->failed ? HCP_ENOMEM : 0;
}

int metrics_registry_render(metrics_registry *r, metrics_buf *out)
{
    hcp_link_t *pos, *tmp;
    metrics_family *f;
    metrics_emitter e;
    int rc;

    HCP_LIST_FOREACH(pos, tmp, &r->families) {
        f = hcp_list_entry(pos, metrics_family, link);
        rc = metrics_write_header(out, f->name, f->help, f->type);
        if (rc != 0)
            goto fail;
        if (f->collect) {
            e.family = f;
            e.out = out;
            e.rc = 0;
            rc = f->collect(&e, f->collect_ud);
            if (rc < 0 || e.rc == HCP_EINVAL) {
                rc = HCP_ECALLBACK;
                goto fail;
            }
            if (e.rc != 0) {
                rc = e.rc;
                goto fail;
            }
        } else {
            rc = render_owned(out, f);
            if (rc != 0)
                goto fail;
        }
    }
    return out->failed ? HCP_ENOMEM : 0;
fail:
    if (rc == HCP_ENOMEM || out->failed) {
        return hcp_errf(r->err, sizeof(r->err), HCP_ENOMEM, "%s: out of memory while rendering",
                        f->name);
    }
    return hcp_errf(r->err, sizeof(r->err), HCP_ECALLBACK, "%s: collector failed", f->name);
}
