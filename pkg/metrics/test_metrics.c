/*
 * Tests for pkg/metrics: exact text of the exposition format (headers,
 * escaping, number formatting, histograms), the registry's owned and
 * collector families, and a representative registry checked by promtool.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zlib.h>

#include "metrics/metrics.h"
#include "metrics/testutil_metrics.h"

#define LABELS(...) ((const char *const[]){__VA_ARGS__})

static int scale_small(void)
{
    const char *s = getenv("HCP_TEST_SCALE");

    return s && strcmp(s, "small") == 0;
}

static void check_format(double v, const char *want)
{
    char out[32];
    int n = metrics_format_value(v, out, sizeof(out));

    assert_int_equal(n, (int)strlen(want));
    assert_string_equal(out, want);
}

static void test_format_value(void **state)
{
    char small[4];

    (void)state;
    check_format(0, "0");
    check_format(-0.0, "0");
    check_format(1, "1");
    check_format(-2, "-2");
    check_format(42, "42");
    check_format(604800, "604800");
    check_format(999999999999999.0, "999999999999999");
    check_format(1e15, "1e+15");
    check_format(1e20, "1e+20");
    check_format(0.1, "0.1");
    check_format(0.005, "0.005");
    check_format(2.5, "2.5");
    check_format(-1.25, "-1.25");
    check_format(1.0 / 3.0, "0.3333333333333333");
    check_format(0.1 + 0.2, "0.30000000000000004");
    check_format(1e-300, "1e-300");
    check_format(INFINITY, "+Inf");
    check_format(-INFINITY, "-Inf");
    check_format(NAN, "NaN");
    /* Every finite value reads back exactly. */
    {
        double vs[] = {3.141592653589793, 123456.789, 5e-324, 1.7976931348623157e308, -9.5e-7};
        char out[32];
        size_t i;

        for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
            assert_true(metrics_format_value(vs[i], out, sizeof(out)) > 0);
            assert_true(strtod(out, NULL) == vs[i]);
        }
    }
    assert_int_equal(metrics_format_value(123456, small, sizeof(small)), HCP_EINVAL);
    assert_int_equal(metrics_format_value(1, small, 0), HCP_EINVAL);
}

static void test_names(void **state)
{
    (void)state;
    assert_true(metrics_valid_name("change_management_change_pending"));
    assert_true(metrics_valid_name("a:b_c9"));
    assert_true(metrics_valid_name(":x"));
    assert_true(metrics_valid_name("_x"));
    assert_false(metrics_valid_name(""));
    assert_false(metrics_valid_name(NULL));
    assert_false(metrics_valid_name("9abc"));
    assert_false(metrics_valid_name("a-b"));
    assert_false(metrics_valid_name("a b"));
    assert_false(metrics_valid_name("caf\xc3\xa9"));

    assert_true(metrics_valid_label_name("namespace"));
    assert_true(metrics_valid_label_name("_x"));
    assert_true(metrics_valid_label_name("a1"));
    assert_false(metrics_valid_label_name("__name__"));
    assert_false(metrics_valid_label_name("a:b"));
    assert_false(metrics_valid_label_name("1a"));
    assert_false(metrics_valid_label_name(""));
    assert_false(metrics_valid_label_name("a.b"));
}

static void test_write_escaping(void **state)
{
    metrics_buf b;
    const char *names[] = {"object", "empty", "skipped", "utf8"};
    const char *values[] = {"a\\b\"c\nd", "", NULL, "\xc3\xa9t\xc3\xa9"};
    double le = 0.25;

    (void)state;
    metrics_buf_init(&b);
    assert_int_equal(metrics_write_header(&b, "m", "Help with \\ and\nnewline and \"quotes\".",
                                          METRICS_GAUGE),
                     0);
    assert_int_equal(metrics_write_sample(&b, "m", NULL, names, values, 4, NULL, 1.5), 0);
    assert_int_equal(metrics_write_sample(&b, "m", "_bucket", NULL, NULL, 0, &le, 3), 0);
    assert_int_equal(metrics_write_sample(&b, "m", NULL, NULL, NULL, 0, NULL, -1), 0);
    assert_string_equal(b.data,
                        "# HELP m Help with \\\\ and\\nnewline and \"quotes\".\n"
                        "# TYPE m gauge\n"
                        "m{object=\"a\\\\b\\\"c\\nd\",empty=\"\",utf8=\"\xc3\xa9t\xc3\xa9\"} 1.5\n"
                        "m_bucket{le=\"0.25\"} 3\n"
                        "m -1\n");
    assert_int_equal(b.len, strlen(b.data));
    assert_int_equal(metrics_write_header(&b, "bad name", "", METRICS_GAUGE), HCP_EINVAL);
    metrics_buf_free(&b);
}

static void test_invalid_utf8_replaced(void **state)
{
    metrics_buf b;
    const char *names[] = {"v"};
    /* Truncated sequence, stray continuation, overlong '/', surrogate, > U+10FFFF, 0xFF. */
    const char *values[] = {"a\xc3" "b\x80" "c\xc0\xaf" "d\xed\xa0\x80" "e\xf4\x90\x80\x80" "f\xff"};

    (void)state;
    metrics_buf_init(&b);
    assert_int_equal(metrics_write_sample(&b, "m", NULL, names, values, 1, NULL, 1), 0);
#define R "\xef\xbf\xbd"
    assert_string_equal(b.data, "m{v=\"a" R "b" R "c" R R "d" R R R "e" R R R R "f" R "\"} 1\n");
#undef R
    metrics_buf_free(&b);
}

static void test_buf_take(void **state)
{
    metrics_buf b;
    size_t len = 99;
    char *p;
    int i;

    (void)state;
    metrics_buf_init(&b);
    assert_null(metrics_buf_take(&b, &len));
    assert_int_equal(len, 0);
    for (i = 0; i < 1000; i++)
        assert_int_equal(metrics_buf_append(&b, "0123456789", 10), 0);
    assert_int_equal(b.len, 10000);
    p = metrics_buf_take(&b, &len);
    assert_non_null(p);
    assert_int_equal(len, 10000);
    assert_int_equal(p[9999], '9');
    assert_int_equal(p[10000], '\0');
    assert_null(b.data);
    assert_int_equal(b.len, 0);
    free(p);
}

/* Inflates a gzip stream (RFC 1952) into a new NUL-terminated string. */
static char *gunzip(const char *z, size_t zlen, size_t *len)
{
    z_stream zs;
    size_t cap = 4096;
    char *out = malloc(cap);
    memset(&zs, 0, sizeof(zs));
    assert_non_null(out);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (Bytef *)z;
    zs.avail_in = (uInt)zlen;
    int rc;
    do {
        if (cap - zs.total_out < 1024) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        zs.next_out = (Bytef *)out + zs.total_out;
        zs.avail_out = (uInt)(cap - zs.total_out - 1);
        rc = inflate(&zs, Z_NO_FLUSH);
    } while (rc == Z_OK);
    assert_int_equal(rc, Z_STREAM_END);
    assert_int_equal(zs.avail_in, 0); /* nothing after the stream */
    *len = zs.total_out;
    out[*len] = '\0';
    inflateEnd(&zs);
    return out;
}

/* A gzip buffer holds the gzip stream of exactly the text a plain one
 * would, however the appends fall across its chunks, and never more than a
 * chunk of text at a time. */
static void test_buf_gzip(void **state)
{
    metrics_buf plain, gz;
    size_t len, zlen, tlen;
    char line[64];

    (void)state;
    metrics_buf_init(&plain);
    metrics_buf_init(&gz);
    assert_int_equal(metrics_buf_gzip(&gz), 0);
    for (int i = 0; i < 20000; i++) {
        /* Lines of varying length; one append larger than a chunk. */
        int n = snprintf(line, sizeof(line), "per_object{object=\"obj-%d\"} %d\n", i, i % 7);
        assert_int_equal(metrics_buf_append(&plain, line, (size_t)n), 0);
        assert_int_equal(metrics_buf_append(&gz, line, (size_t)n), 0);
        assert_true(gz.len < plain.len / 2 + 512); /* deflated as it comes */
    }
    char *big = malloc(3 * METRICS_GZIP_CHUNK + 5);
    assert_non_null(big);
    for (size_t i = 0; i < 3 * METRICS_GZIP_CHUNK + 5; i++)
        big[i] = (char)('a' + (i * 7) % 26);
    assert_int_equal(metrics_buf_append(&plain, big, 3 * METRICS_GZIP_CHUNK + 5), 0);
    assert_int_equal(metrics_buf_append(&gz, big, 3 * METRICS_GZIP_CHUNK + 5), 0);
    free(big);

    char *text = metrics_buf_take(&plain, &len);
    char *z = metrics_buf_take(&gz, &zlen);
    assert_non_null(z);
    assert_null(gz.data);
    assert_null(gz.gz);
    assert_true(zlen < len / 4);
    char *back = gunzip(z, zlen, &tlen);
    assert_int_equal(tlen, len);
    assert_memory_equal(back, text, len);
    free(back);
    free(z);
    free(text);

    /* Nothing appended: an empty stream, not nothing. */
    assert_int_equal(metrics_buf_gzip(&gz), 0);
    z = metrics_buf_take(&gz, &zlen);
    assert_non_null(z);
    back = gunzip(z, zlen, &tlen);
    assert_int_equal(tlen, 0);
    free(back);
    free(z);

    /* Freed unfinished: nothing leaks (the sanitizer and valgrind runs). */
    assert_int_equal(metrics_buf_gzip(&gz), 0);
    assert_int_equal(metrics_buf_append(&gz, "x 1\n", 4), 0);
    metrics_buf_free(&gz);
    assert_null(gz.gz);
}

static void test_counter_vec_golden(void **state)
{
    metrics_registry r;
    metrics_family req, restarts;
    metrics_buf b;
    metrics_child *c;

    (void)state;
    metrics_registry_init(&r);
    assert_int_equal(metrics_register(&r, &req,
                                      &(metrics_desc){.name = "hcp_api_requests_total",
                                                      .help = "API requests by verb and code.",
                                                      .type = METRICS_COUNTER,
                                                      .labels = LABELS("verb", "code", NULL)}),
                     0);
    assert_int_equal(metrics_register(&r, &restarts,
                                      &(metrics_desc){.name = "hcp_watch_restarts_total",
                                                      .help = "Watch restarts.",
                                                      .type = METRICS_COUNTER}),
                     0);
    assert_int_equal(metrics_counter_add(&req, LABELS("GET", "200"), 1), 0);
    assert_int_equal(metrics_counter_add(&req, LABELS("PATCH", "200"), 1), 0);
    assert_int_equal(metrics_counter_add(&req, LABELS("GET", "200"), 2), 0);
    assert_int_equal(metrics_counter_add(&req, LABELS("GET", "404"), 0.5), 0);
    c = metrics_child_get(&req, LABELS("GET", "200"));
    assert_non_null(c);
    assert_true(metrics_child_value(c) == 3);
    assert_ptr_equal(c, metrics_child_get(&req, LABELS("GET", "200")));
    assert_int_equal(metrics_child_add(c, -1), HCP_EINVAL);
    assert_int_equal(metrics_child_add(c, NAN), HCP_EINVAL);
    assert_int_equal(metrics_child_add(c, INFINITY), HCP_EINVAL);
    assert_int_equal(metrics_child_set(c, 5), HCP_EINVAL); /* not a gauge */
    assert_int_equal(metrics_child_observe(c, 5), HCP_EINVAL);
    assert_int_equal(metrics_gauge_set(&req, LABELS("GET", "200"), 1), HCP_EINVAL);
    assert_int_equal(metrics_counter_add(&req, LABELS("GET", NULL), 1), HCP_EINVAL);
    assert_int_equal(metrics_counter_add(&req, NULL, 1), HCP_EINVAL);
    assert_true(metrics_child_value(c) == 3);

    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), 0);
    assert_string_equal(b.data, "# HELP hcp_api_requests_total API requests by verb and code.\n"
                                "# TYPE hcp_api_requests_total counter\n"
                                "hcp_api_requests_total{verb=\"GET\",code=\"200\"} 3\n"
                                "hcp_api_requests_total{verb=\"PATCH\",code=\"200\"} 1\n"
                                "hcp_api_requests_total{verb=\"GET\",code=\"404\"} 0.5\n"
                                "# HELP hcp_watch_restarts_total Watch restarts.\n"
                                "# TYPE hcp_watch_restarts_total counter\n"
                                "hcp_watch_restarts_total 0\n");
    metrics_buf_free(&b);

    assert_int_equal(metrics_counter_add(&restarts, NULL, 4), 0);
    assert_int_equal(metrics_child_remove(&req, LABELS("PATCH", "200")), 0);
    assert_int_equal(metrics_child_remove(&req, LABELS("PATCH", "200")), HCP_EINVAL);
    assert_true(metrics_child_value(metrics_child_get(&req, LABELS("GET", "404"))) == 0.5);
    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), 0);
    assert_string_equal(b.data, "# HELP hcp_api_requests_total API requests by verb and code.\n"
                                "# TYPE hcp_api_requests_total counter\n"
                                "hcp_api_requests_total{verb=\"GET\",code=\"200\"} 3\n"
                                "hcp_api_requests_total{verb=\"GET\",code=\"404\"} 0.5\n"
                                "# HELP hcp_watch_restarts_total Watch restarts.\n"
                                "# TYPE hcp_watch_restarts_total counter\n"
                                "hcp_watch_restarts_total 4\n");
    metrics_buf_free(&b);
    metrics_registry_free(&r);
    assert_true(hcp_list_empty(&r.families));
}

static void test_gauge_and_histogram_golden(void **state)
{
    static const double bounds[] = {0.1, 1, 10};
    metrics_registry r;
    metrics_family g, h, empty_h, empty_vec;
    metrics_child *c;
    metrics_buf b;

    (void)state;
    metrics_registry_init(&r);
    assert_int_equal(metrics_register(&r, &g,
                                      &(metrics_desc){.name = "queue_depth",
                                                      .help = "Items waiting.",
                                                      .type = METRICS_GAUGE}),
                     0);
    assert_int_equal(metrics_register(&r, &h,
                                      &(metrics_desc){.name = "reconcile_duration_seconds",
                                                      .help = "Reconcile latency.",
                                                      .type = METRICS_HISTOGRAM,
                                                      .labels = LABELS("kind", NULL),
                                                      .buckets = bounds,
                                                      .nbuckets = 3}),
                     0);
    assert_int_equal(metrics_register(&r, &empty_h,
                                      &(metrics_desc){.name = "idle_seconds",
                                                      .help = "Nothing yet.",
                                                      .type = METRICS_HISTOGRAM,
                                                      .buckets = bounds,
                                                      .nbuckets = 1}),
                     0);
    assert_int_equal(metrics_register(&r, &empty_vec,
                                      &(metrics_desc){.name = "by_kind",
                                                      .help = "Labelled, unused.",
                                                      .type = METRICS_GAUGE,
                                                      .labels = LABELS("kind", NULL)}),
                     0);
    c = metrics_child_get(&g, NULL);
    assert_int_equal(metrics_child_set(c, 7), 0);
    assert_int_equal(metrics_child_gauge_add(c, -9.5), 0);
    assert_int_equal(metrics_child_add(c, 1), HCP_EINVAL); /* not a counter */

    /* A value equal to a bound falls in that bucket; above all bounds only in +Inf. */
    assert_int_equal(metrics_histogram_observe(&h, LABELS("NodePool"), 0.05), 0);
    assert_int_equal(metrics_histogram_observe(&h, LABELS("NodePool"), 0.1), 0);
    assert_int_equal(metrics_histogram_observe(&h, LABELS("NodePool"), 5), 0);
    assert_int_equal(metrics_histogram_observe(&h, LABELS("NodePool"), 20), 0);
    assert_int_equal(metrics_histogram_observe(&h, LABELS("HostedCluster"), 1), 0);
    assert_int_equal(metrics_histogram_observe(&h, LABELS("HostedCluster"), NAN), HCP_EINVAL);
    c = metrics_child_get(&h, LABELS("NodePool"));
    assert_int_equal(metrics_child_count(c), 4);
    assert_true(fabs(metrics_child_value(c) - 25.15) < 1e-9);

    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), 0);
    assert_string_equal(b.data, "# HELP queue_depth Items waiting.\n"
                                "# TYPE queue_depth gauge\n"
                                "queue_depth -2.5\n"
                                "# HELP reconcile_duration_seconds Reconcile latency.\n"
                                "# TYPE reconcile_duration_seconds histogram\n"
                                "reconcile_duration_seconds_bucket{kind=\"NodePool\",le=\"0.1\"} 2\n"
                                "reconcile_duration_seconds_bucket{kind=\"NodePool\",le=\"1\"} 2\n"
                                "reconcile_duration_seconds_bucket{kind=\"NodePool\",le=\"10\"} 3\n"
                                "reconcile_duration_seconds_bucket{kind=\"NodePool\",le=\"+Inf\"} 4\n"
                                "reconcile_duration_seconds_sum{kind=\"NodePool\"} 25.15\n"
                                "reconcile_duration_seconds_count{kind=\"NodePool\"} 4\n"
                                "reconcile_duration_seconds_bucket{kind=\"HostedCluster\",le=\"0.1\"} 0\n"
                                "reconcile_duration_seconds_bucket{kind=\"HostedCluster\",le=\"1\"} 1\n"
                                "reconcile_duration_seconds_bucket{kind=\"HostedCluster\",le=\"10\"} 1\n"
                                "reconcile_duration_seconds_bucket{kind=\"HostedCluster\",le=\"+Inf\"} 1\n"
                                "reconcile_duration_seconds_sum{kind=\"HostedCluster\"} 1\n"
                                "reconcile_duration_seconds_count{kind=\"HostedCluster\"} 1\n"
                                "# HELP idle_seconds Nothing yet.\n"
                                "# TYPE idle_seconds histogram\n"
                                "idle_seconds_bucket{le=\"0.1\"} 0\n"
                                "idle_seconds_bucket{le=\"+Inf\"} 0\n"
                                "idle_seconds_sum 0\n"
                                "idle_seconds_count 0\n"
                                "# HELP by_kind Labelled, unused.\n"
                                "# TYPE by_kind gauge\n");
    metrics_buf_free(&b);
    metrics_registry_free(&r);
}

static void test_register_errors(void **state)
{
    static const double bad_bounds[] = {1, 1};
    static const double inf_bounds[] = {1, INFINITY};
    metrics_registry r;
    metrics_family a, b;

    (void)state;
    metrics_registry_init(&r);
    assert_int_equal(metrics_register(&r, &a,
                                      &(metrics_desc){.name = "bad-name", .type = METRICS_GAUGE}),
                     HCP_EINVAL);
    assert_non_null(strstr(r.err, "bad-name"));
    assert_int_equal(
        metrics_register(&r, &a,
                         &(metrics_desc){.name = "m", .type = METRICS_GAUGE,
                                         .labels = LABELS("ok", "not-ok", NULL)}),
        HCP_EINVAL);
    assert_non_null(strstr(r.err, "not-ok"));
    assert_int_equal(
        metrics_register(&r, &a,
                         &(metrics_desc){.name = "m", .type = METRICS_GAUGE,
                                         .labels = LABELS("__reserved", NULL)}),
        HCP_EINVAL);
    assert_int_equal(
        metrics_register(&r, &a,
                         &(metrics_desc){.name = "m", .type = METRICS_GAUGE,
                                         .labels = LABELS("x", "x", NULL)}),
        HCP_EINVAL);
    assert_non_null(strstr(r.err, "duplicate"));
    assert_int_equal(
        metrics_register(&r, &a,
                         &(metrics_desc){.name = "m",
                                         .type = METRICS_GAUGE,
                                         .labels = LABELS("a", "b", "c", "d", "e", "f", "g", "h",
                                                          "i", NULL)}),
        HCP_EINVAL);
    assert_int_equal(metrics_register(&r, &a,
                                      &(metrics_desc){.name = "m_seconds",
                                                      .type = METRICS_HISTOGRAM,
                                                      .labels = LABELS("le", NULL)}),
                     HCP_EINVAL);
    assert_int_equal(metrics_register(&r, &a,
                                      &(metrics_desc){.name = "m_seconds",
                                                      .type = METRICS_HISTOGRAM,
                                                      .buckets = bad_bounds,
                                                      .nbuckets = 2}),
                     HCP_EINVAL);
    assert_non_null(strstr(r.err, "increasing"));
    assert_int_equal(metrics_register(&r, &a,
                                      &(metrics_desc){.name = "m_seconds",
                                                      .type = METRICS_HISTOGRAM,
                                                      .buckets = inf_bounds,
                                                      .nbuckets = 2}),
                     HCP_EINVAL);
    assert_int_equal(metrics_register(&r, &a, &(metrics_desc){.name = "m", .type = 42}),
                     HCP_EINVAL);
    assert_true(hcp_list_empty(&r.families));

    /* A label named "le" is fine outside histograms; names must be unique. */
    assert_int_equal(metrics_register(&r, &a,
                                      &(metrics_desc){.name = "m", .type = METRICS_GAUGE,
                                                      .labels = LABELS("le", NULL)}),
                     0);
    assert_int_equal(metrics_register(&r, &b, &(metrics_desc){.name = "m", .type = METRICS_COUNTER}),
                     HCP_EEXIST);
    assert_non_null(strstr(r.err, "already registered"));
    /* The same struct twice must not corrupt the list. */
    assert_int_equal(metrics_register(&r, &a, &(metrics_desc){.name = "other", .type = METRICS_GAUGE}),
                     HCP_EEXIST);
    assert_string_equal(a.name, "m");
    assert_ptr_equal(hcp_list_first(&r.families), &a.link);
    assert_ptr_equal(r.families.prev, &a.link); /* first and last */
    assert_ptr_equal(a.link.next, &r.families);
    metrics_registry_free(&r);
}

/* A collector with a scripted set of samples, and a way to fail. */
typedef struct {
    int calls;
    int fail;       /* return -1 */
    int bad_emit;   /* emit a NULL label value */
} collector_state;

static int collect_pending(metrics_emitter *e, void *ud)
{
    collector_state *st = ud;

    st->calls++;
    if (st->fail)
        return -1;
    metrics_emit(e, LABELS("HostedCluster", "clusters", "prod-1", "control-plane"), 2);
    metrics_emit(e, LABELS("NodePool", "clusters", "prod-1-\"pool\"", "nodes"), st->calls);
    if (st->bad_emit)
        metrics_emit(e, LABELS("NodePool", NULL, "x", "nodes"), 1);
    return 0;
}

static int collect_hist(metrics_emitter *e, void *ud)
{
    const uint64_t bad[] = {3, 1};

    (void)ud;
    assert_int_equal(metrics_emit(e, NULL, 1), HCP_EINVAL); /* histograms need emit_histogram */
    assert_int_equal(metrics_emit_histogram(e, NULL, bad, 3, 1), HCP_EINVAL);
    return 0;
}

static int collect_hist_ok(metrics_emitter *e, void *ud)
{
    const uint64_t cum[] = {1, 3};

    (void)ud;
    return metrics_emit_histogram(e, NULL, cum, 4, 12.5);
}

static void test_collectors(void **state)
{
    static const double bounds[] = {1, 5};
    metrics_registry r;
    metrics_family pending, hist, bad_hist;
    collector_state st = {0, 0, 0};
    metrics_buf b;
    const char *want_head, *want_tail;

    (void)state;
    metrics_registry_init(&r);
    assert_int_equal(metrics_register(&r, &pending,
                                      &(metrics_desc){.name = "change_management_change_pending",
                                                      .help = "0 none, 1 initiated, 2 blocked.",
                                                      .type = METRICS_GAUGE,
                                                      .labels = LABELS("kind", "namespace",
                                                                       "object", "system", NULL),
                                                      .collect = collect_pending,
                                                      .collect_ud = &st}),
                     0);
    assert_int_equal(metrics_register(&r, &hist,
                                      &(metrics_desc){.name = "computed_seconds",
                                                      .help = "Computed histogram.",
                                                      .type = METRICS_HISTOGRAM,
                                                      .buckets = bounds,
                                                      .nbuckets = 2,
                                                      .collect = collect_hist_ok}),
                     0);
    /* Collector families own no children. */
    assert_null(metrics_child_get(&pending, LABELS("a", "b", "c", "d")));
    assert_int_equal(metrics_gauge_set(&pending, LABELS("a", "b", "c", "d"), 1), HCP_EINVAL);

    /* Values are computed per render: the second NodePool sample counts the calls. */
    want_head = "# HELP change_management_change_pending 0 none, 1 initiated, 2 blocked.\n"
                "# TYPE change_management_change_pending gauge\n"
                "change_management_change_pending{kind=\"HostedCluster\",namespace=\"clusters\","
                "object=\"prod-1\",system=\"control-plane\"} 2\n"
                "change_management_change_pending{kind=\"NodePool\",namespace=\"clusters\","
                "object=\"prod-1-\\\"pool\\\"\",system=\"nodes\"} ";
    want_tail = "\n"
                "# HELP computed_seconds Computed histogram.\n"
                "# TYPE computed_seconds histogram\n"
                "computed_seconds_bucket{le=\"1\"} 1\n"
                "computed_seconds_bucket{le=\"5\"} 3\n"
                "computed_seconds_bucket{le=\"+Inf\"} 4\n"
                "computed_seconds_sum 12.5\n"
                "computed_seconds_count 4\n";
    {
        char expect[1024];
        int i;

        for (i = 1; i <= 2; i++) {
            metrics_buf_init(&b);
            assert_int_equal(metrics_registry_render(&r, &b), 0);
            snprintf(expect, sizeof(expect), "%s%d%s", want_head, i, want_tail);
            assert_string_equal(b.data, expect);
            metrics_buf_free(&b);
        }
    }
    assert_int_equal(st.calls, 2);

    st.fail = 1;
    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), HCP_ECALLBACK);
    assert_non_null(strstr(r.err, "change_management_change_pending"));
    metrics_buf_free(&b);
    st.fail = 0;
    st.bad_emit = 1;
    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), HCP_ECALLBACK);
    metrics_buf_free(&b);

    assert_int_equal(metrics_register(&r, &bad_hist,
                                      &(metrics_desc){.name = "bad_seconds",
                                                      .type = METRICS_HISTOGRAM,
                                                      .buckets = bounds,
                                                      .nbuckets = 2,
                                                      .collect = collect_hist}),
                     0);
    st.bad_emit = 0;
    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), HCP_ECALLBACK);
    assert_non_null(strstr(r.err, "bad_seconds"));
    metrics_buf_free(&b);
    metrics_registry_free(&r);
}

static void test_many_label_sets(void **state)
{
    metrics_registry r;
    metrics_family f;
    metrics_buf b;
    char name[32], expect[64];
    const char *v[2];
    int i, n = scale_small() ? 2000 : 20000;
    const char *line;

    (void)state;
    metrics_registry_init(&r);
    assert_int_equal(metrics_register(&r, &f,
                                      &(metrics_desc){.name = "per_object",
                                                      .help = "h",
                                                      .type = METRICS_GAUGE,
                                                      .labels = LABELS("ns", "object", NULL)}),
                     0);
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "obj-%d", i);
        v[0] = i % 2 ? "a" : "b";
        v[1] = name;
        assert_int_equal(metrics_gauge_set(&f, v, i), 0);
    }
    assert_int_equal(f.nchildren, (size_t)n);
    /* Lookups find the same children; ("a","bc") and ("ab","c") are different sets. */
    for (i = 0; i < n; i += 7) {
        snprintf(name, sizeof(name), "obj-%d", i);
        v[0] = i % 2 ? "a" : "b";
        v[1] = name;
        assert_true(metrics_child_value(metrics_child_get(&f, v)) == i);
    }
    assert_int_equal(f.nchildren, (size_t)n);
    /* Removing every third set keeps the others, in order. */
    for (i = 0; i < n; i += 3) {
        snprintf(name, sizeof(name), "obj-%d", i);
        v[0] = i % 2 ? "a" : "b";
        v[1] = name;
        assert_int_equal(metrics_child_remove(&f, v), 0);
    }
    for (i = 0; i < n; i++) {
        snprintf(name, sizeof(name), "obj-%d", i);
        v[0] = i % 2 ? "a" : "b";
        v[1] = name;
        if (i % 3 == 0)
            assert_int_equal(metrics_child_remove(&f, v), HCP_EINVAL);
        else
            assert_true(metrics_child_value(metrics_child_get(&f, v)) == i);
    }
    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), 0);
    line = strstr(b.data, "per_object{");
    assert_non_null(line);
    assert_int_equal(strncmp(line, "per_object{ns=\"a\",object=\"obj-1\"} 1\n", 36), 0);
    snprintf(expect, sizeof(expect), "per_object{ns=\"b\",object=\"obj-2\"} 2\n");
    assert_non_null(strstr(line, expect));
    metrics_buf_free(&b);
    metrics_registry_free(&r);
}

/* ---- promtool --------------------------------------------------------- */

static const char *find_promtool(void)
{
    static const char *paths[] = {"/usr/bin/promtool", "/usr/local/bin/promtool"};
    size_t i;

    for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
        if (access(paths[i], X_OK) == 0)
            return paths[i];
    return NULL;
}

typedef struct {
    const char *kind, *ns, *object, *system;
    double pending, eta, permissive, last;
    const char *strategy;
} fake_object;

static const fake_object fake_objects[] = {
    {"HostedCluster", "clusters", "prod-1", "control-plane", 0, 0, 3600, 0, "ByPolicy"},
    {"NodePool", "clusters", "prod-1-workers", "nodes", 2, 86400, 0, 604800, "ByPolicy"},
    {"NodePool", "clusters", "odd \"name\"\\with\nnewline", "nodes", 1, -1, -1, -1,
     "RestrictiveUntil"},
    {"HostedCluster", "team-b", "dev", "control-plane", 0, -2, -2, 12.75, "PermissiveUntil"},
};

#define NFAKE (sizeof(fake_objects) / sizeof(fake_objects[0]))

/* Field offsets are awkward in C; one collector per field, chosen by ud. */
static int collect_field(metrics_emitter *e, void *ud)
{
    int field = (int)(intptr_t)ud;
    size_t i;

    for (i = 0; i < NFAKE; i++) {
        const fake_object *o = &fake_objects[i];
        const double v[] = {o->pending, o->eta, o->permissive, o->last};

        metrics_emit(e, LABELS(o->kind, o->ns, o->object, o->system), v[field]);
    }
    return 0;
}

static int collect_strategy(metrics_emitter *e, void *ud)
{
    static const char *strategies[] = {"ByPolicy", "PermissiveUntil", "RestrictiveUntil"};
    size_t i, j;

    (void)ud;
    for (i = 0; i < NFAKE; i++) {
        const fake_object *o = &fake_objects[i];

        for (j = 0; j < 3; j++)
            metrics_emit(e, LABELS(o->kind, o->ns, o->object, o->system, strategies[j]),
                         strcmp(o->strategy, strategies[j]) == 0);
    }
    return 0;
}

static void test_promtool_accepts_registry(void **state)
{
    static const char *fields[][2] = {
        {"change_management_change_pending",
         "Whether changes are pending: 0 none, 1 pending and being initiated, 2 pending and blocked."},
        {"change_management_next_change_eta",
         "Seconds until changes are next permitted: -2 error or not ready, -1 paused indefinitely, 0 permitted now."},
        {"change_management_permissive_remaining",
         "Seconds changes remain permitted: -2 error, -1 permitted indefinitely, 0 not permitted."},
        {"change_management_last_change",
         "Seconds since changes were last permitted: -1 unknown, 0 permitted now."},
    };
    metrics_registry r;
    metrics_family fam[4], strategy, requests, restarts, latency, reassert;
    metrics_buf b;
    const char *promtool = find_promtool();
    char path[] = "/tmp/test_metrics_XXXXXX";
    char cmd[256], out[4096];
    FILE *fp;
    size_t i, n;
    int fd, status;

    (void)state;
    metrics_registry_init(&r);
    for (i = 0; i < 4; i++)
        assert_int_equal(metrics_register(&r, &fam[i],
                                          &(metrics_desc){.name = fields[i][0],
                                                          .help = fields[i][1],
                                                          .type = METRICS_GAUGE,
                                                          .labels = LABELS("kind", "namespace",
                                                                           "object", "system",
                                                                           NULL),
                                                          .collect = collect_field,
                                                          .collect_ud = (void *)(intptr_t)i}),
                         0);
    assert_int_equal(metrics_register(&r, &strategy,
                                      &(metrics_desc){.name = "change_management_strategy_enabled",
                                                      .help = "1 for the strategy in effect, else 0.",
                                                      .type = METRICS_GAUGE,
                                                      .labels = LABELS("kind", "namespace", "object",
                                                                       "system", "strategy", NULL),
                                                      .collect = collect_strategy}),
                     0);
    assert_int_equal(metrics_register(&r, &requests,
                                      &(metrics_desc){.name = "hcp_controller_api_requests_total",
                                                      .help = "Kubernetes API requests by verb and HTTP code.",
                                                      .type = METRICS_COUNTER,
                                                      .labels = LABELS("verb", "code", NULL)}),
                     0);
    assert_int_equal(metrics_register(&r, &restarts,
                                      &(metrics_desc){.name = "hcp_controller_watch_restarts_total",
                                                      .help = "Watches restarted, by resource.",
                                                      .type = METRICS_COUNTER,
                                                      .labels = LABELS("resource", NULL)}),
                     0);
    assert_int_equal(metrics_register(&r, &latency,
                                      &(metrics_desc){.name = "hcp_controller_reconcile_duration_seconds",
                                                      .help = "Time to reconcile one object.",
                                                      .type = METRICS_HISTOGRAM,
                                                      .labels = LABELS("kind", NULL),
                                                      .buckets = metrics_default_buckets,
                                                      .nbuckets = METRICS_DEFAULT_NBUCKETS}),
                     0);
    assert_int_equal(metrics_register(&r, &reassert,
                                      &(metrics_desc){.name = "hcp_controller_pause_reassertions_total",
                                                      .help = "Pauses re-asserted after another writer removed them.",
                                                      .type = METRICS_COUNTER}),
                     0);
    metrics_counter_add(&requests, LABELS("GET", "200"), 1234);
    metrics_counter_add(&requests, LABELS("PATCH", "409"), 3);
    metrics_counter_add(&restarts, LABELS("nodepools"), 2);
    metrics_histogram_observe(&latency, LABELS("NodePool"), 0.0031);
    metrics_histogram_observe(&latency, LABELS("NodePool"), 0.2);
    metrics_histogram_observe(&latency, LABELS("HostedCluster"), 42);
    metrics_counter_add(&reassert, NULL, 1);

    metrics_buf_init(&b);
    assert_int_equal(metrics_registry_render(&r, &b), 0);
    assert_non_null(strstr(b.data, "change_management_strategy_enabled{kind=\"NodePool\","
                                   "namespace=\"clusters\",object=\"odd \\\"name\\\"\\\\with\\nnewline\","
                                   "system=\"nodes\",strategy=\"RestrictiveUntil\"} 1\n"));
    assert_non_null(strstr(b.data, "change_management_next_change_eta{kind=\"HostedCluster\","
                                   "namespace=\"team-b\",object=\"dev\",system=\"control-plane\"} -2\n"));
    assert_non_null(strstr(b.data, "hcp_controller_reconcile_duration_seconds_bucket{kind="
                                   "\"NodePool\",le=\"0.005\"} 1\n"));

    if (promtool == NULL) {
        metrics_buf_free(&b);
        metrics_registry_free(&r);
        print_message("promtool not installed (Debian package prometheus): skipping the check\n");
        skip();
    }
    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, b.data, b.len), (ssize_t)b.len);
    close(fd);
    snprintf(cmd, sizeof(cmd), "%s check metrics < %s 2>&1", promtool, path);
    fp = popen(cmd, "r");
    assert_non_null(fp);
    n = fread(out, 1, sizeof(out) - 1, fp);
    out[n] = '\0';
    status = pclose(fp);
    unlink(path);
    if (status != 0)
        print_message("promtool said:\n%s\n--- input ---\n%s", out, b.data);
    metrics_buf_free(&b);
    metrics_registry_free(&r);
    assert_int_equal(status, 0);
    assert_int_equal(n, 0); /* no lint warnings either */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format_value),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_write_escaping),
        cmocka_unit_test(test_invalid_utf8_replaced),
        cmocka_unit_test(test_buf_take),
        cmocka_unit_test(test_buf_gzip),
        cmocka_unit_test(test_counter_vec_golden),
        cmocka_unit_test(test_gauge_and_histogram_golden),
        cmocka_unit_test(test_register_errors),
        cmocka_unit_test(test_collectors),
        cmocka_unit_test(test_many_label_sets),
        cmocka_unit_test(test_promtool_accepts_registry),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
