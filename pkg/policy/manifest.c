#include "policy/manifest.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libfyaml.h>

#include "base/yaml.h"
#include "policy/quote.h"

#define SCALAR_MAX 64 /* longest scalar considered as a number */

static int eq(const char *s, size_t len, const char *lit)
{
    return strlen(lit) == len && memcmp(s, lit, len) == 0;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* YAML 1.2 core schema integer: [-+]?[0-9]+ (hex and octal forms are left
 * as strings; manifests never need them). */
static int is_int(const char *s, size_t len)
{
    size_t i = 0;

    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    if (i == len)
        return 0;
    for (; i < len; i++)
        if (!is_digit(s[i]))
            return 0;
    return 1;
}

/* YAML 1.2 core schema float without .inf/.nan (JSON cannot hold them):
 * [-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)? */
static int is_float(const char *s, size_t len)
{
    size_t i = 0, digits = 0;

    if (i < len && (s[i] == '-' || s[i] == '+'))
        i++;
    while (i < len && is_digit(s[i])) {
        i++;
        digits++;
    }
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && is_digit(s[i])) {
            i++;
            digits++;
        }
    }
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        size_t exp = 0;
        i++;
        if (i < len && (s[i] == '-' || s[i] == '+'))
            i++;
        while (i < len && is_digit(s[i])) {
            i++;
            exp++;
        }
        if (exp == 0)
            return 0;
    }
    return i == len;
}

/* Types a plain scalar by the core schema; anything else is a string. */
static json_t *plain_scalar(const char *s, size_t len)
{
    char buf[SCALAR_MAX + 1];
    char *end;

    if (len == 0 || eq(s, len, "~") || eq(s, len, "null") || eq(s, len, "Null") ||
        eq(s, len, "NULL"))
        return json_null();
    if (eq(s, len, "true") || eq(s, len, "True") || eq(s, len, "TRUE"))
        return json_true();
    if (eq(s, len, "false") || eq(s, len, "False") || eq(s, len, "FALSE"))
        return json_false();
    if (len <= SCALAR_MAX && is_int(s, len)) {
        long long v;
        memcpy(buf, s, len);
        buf[len] = '\0';
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno == 0 && *end == '\0')
            return json_integer((json_int_t)v);
    } else if (len <= SCALAR_MAX && is_float(s, len)) {
        double v;
        memcpy(buf, s, len);
        buf[len] = '\0';
        errno = 0;
        v = strtod(buf, &end);
        if (errno == 0 && *end == '\0')
            return json_real(v);
    }
    return json_stringn(s, len);
}

static int is_str_tag(const char *tag, size_t len)
{
    return eq(tag, len, "!!str") || eq(tag, len, "tag:yaml.org,2002:str") || eq(tag, len, "!");
}

/* The bytes a YAML stream was parsed from (scalars are read from them). */
typedef struct source {
    const char *data; /* borrowed */
    size_t len;
} source;

static int convert(const source *src, struct fy_node *n, int depth, json_t **out, char *err,
                   size_t errlen);

/* A scalar (n may be NULL: an empty document) as a new JSON value, typed by
 * the YAML 1.2 core schema unless quoted or tagged !!str. */
static int convert_scalar(const source *src, struct fy_node *n, json_t **out, char *err,
                          size_t errlen)
{
    size_t len = 0, taglen = 0;
    char *s = n != NULL ? hcp_yaml_scalar(n, src->data, src->len, &len) : strdup("");
    const char *tag = n != NULL ? fy_node_get_tag(n, &taglen) : NULL;
    json_t *v;

    if (s == NULL)
        return HCP_ENOMEM;
    if (n != NULL &&
        (fy_node_get_style(n) != FYNS_PLAIN || (tag != NULL && is_str_tag(tag, taglen))))
        v = json_stringn(s, len);
    else
        v = plain_scalar(s, len);
    free(s);
    if (v == NULL) {
        /* json_stringn() refuses invalid UTF-8 as well as failing to
         * allocate; the former is the user's problem. */
        v = json_stringn_nocheck("", 0);
        if (v == NULL)
            return HCP_ENOMEM;
        json_decref(v);
        return hcp_errf(err, errlen, HCP_EINVAL, "a YAML scalar is not valid UTF-8");
    }
    *out = v;
    return 0;
}

static int convert_sequence(const source *src, struct fy_node *n, int depth, json_t **out,
                            char *err, size_t errlen)
{
    void *it = NULL;
    struct fy_node *item;
    json_t *v, *c;
    int rc;

    if ((v = json_array()) == NULL)
        return HCP_ENOMEM;
    while ((item = fy_node_sequence_iterate(n, &it)) != NULL) {
        if ((rc = convert(src, item, depth + 1, &c, err, errlen)) < 0)
            goto fail;
        if (json_array_append_new(v, c) != 0) {
            rc = HCP_ENOMEM;
            goto fail;
        }
    }
    *out = v;
    return 0;
fail:
    json_decref(v);
    return rc;
}

/* The key of a mapping pair as a new C string (no NUL inside). */
static int mapping_key(const source *src, struct fy_node *k, char **key, char *err,
                       size_t errlen)
{
    size_t klen = 0;

    *key = NULL;
    if (k == NULL || fy_node_get_type(k) != FYNT_SCALAR || fy_node_is_alias(k))
        return hcp_errf(err, errlen, HCP_EINVAL, "YAML mapping keys must be scalars");
    if ((*key = hcp_yaml_scalar(k, src->data, src->len, &klen)) == NULL)
        return HCP_ENOMEM;
    if (memchr(*key, '\0', klen) != NULL) {
        free(*key);
        *key = NULL;
        return hcp_errf(err, errlen, HCP_EINVAL, "a YAML mapping key is not a string");
    }
    return 0;
}

static int convert_mapping(const source *src, struct fy_node *n, int depth, json_t **out,
                           char *err, size_t errlen)
{
    void *it = NULL;
    struct fy_node_pair *pair;
    char *key = NULL;
    json_t *v, *c;
    int rc;

    if ((v = json_object()) == NULL)
        return HCP_ENOMEM;
    while ((pair = fy_node_mapping_iterate(n, &it)) != NULL) {
        if ((rc = mapping_key(src, fy_node_pair_key(pair), &key, err, errlen)) < 0)
            goto fail;
        if (json_object_get(v, key) != NULL) {
            char q[QUOTE_BUFLEN];
            quote_string(key, q, sizeof q);
            rc = hcp_errf(err, errlen, HCP_EINVAL, "duplicate key %s", q);
            goto fail;
        }
        if ((rc = convert(src, fy_node_pair_value(pair), depth + 1, &c, err, errlen)) < 0)
            goto fail;
        /* json_object_set_new() validates the key as UTF-8. */
        if (json_object_set_new(v, key, c) != 0) {
            rc = hcp_errf(err, errlen, HCP_EINVAL, "a YAML mapping key is not valid UTF-8");
            goto fail;
        }
        free(key);
        key = NULL;
    }
    *out = v;
    return 0;
fail:
    free(key);
    json_decref(v);
    return rc;
}

/* Converts a YAML node to a new JSON value. Returns 0, HCP_EINVAL with
 * err filled, or HCP_ENOMEM. */
static int convert(const source *src, struct fy_node *n, int depth, json_t **out, char *err,
                   size_t errlen)
{
    *out = NULL;
    if (depth > MANIFEST_MAX_DEPTH)
        return hcp_errf(err, errlen, HCP_EINVAL, "YAML nesting is too deep");
    if (n != NULL && fy_node_is_alias(n))
        return hcp_errf(err, errlen, HCP_EINVAL, "YAML aliases are not supported");
    switch (fy_node_get_type(n)) {
    case FYNT_SCALAR:
        return convert_scalar(src, n, out, err, errlen);
    case FYNT_SEQUENCE:
        return convert_sequence(src, n, depth, out, err, errlen);
    case FYNT_MAPPING:
        return convert_mapping(src, n, depth, out, err, errlen);
    }
    return hcp_errf(err, errlen, HCP_EINVAL, "unknown YAML node type");
}

/* Diagnostics are collected, never printed: the caller decides what to say. */
static void silent(struct fy_diag *diag, void *user, const char *buf, size_t len)
{
    (void)diag;
    (void)user;
    (void)buf;
    (void)len;
}

/* Copies the first collected error into err; returns HCP_EINVAL. */
static int diag_error(struct fy_diag *diag, char *err, size_t errlen)
{
    struct fy_diag_error *e;
    void *it = NULL;

    e = fy_diag_errors_iterate(diag, &it);
    if (e != NULL && e->msg != NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "YAML line %d, column %d: %s", e->line,
                        e->column, e->msg);
    return hcp_errf(err, errlen, HCP_EINVAL, "YAML line ?: not valid YAML");
}

static int load_yaml(const char *data, size_t len, json_t *docs, char *err, size_t errlen)
{
    struct fy_diag_cfg dcfg;
    struct fy_parse_cfg cfg;
    struct fy_diag *diag;
    struct fy_parser *fyp = NULL;
    struct fy_document *fyd = NULL;
    source src = {data, len};
    int rc = 0;

    fy_diag_cfg_default(&dcfg);
    dcfg.fp = NULL;
    dcfg.output_fn = silent;
    diag = fy_diag_create(&dcfg);
    if (diag == NULL)
        return HCP_ENOMEM;
    fy_diag_set_collect_errors(diag, true);
    memset(&cfg, 0, sizeof cfg);
    cfg.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2 | FYPCF_JSON_NONE;
    cfg.diag = diag;
    fyp = fy_parser_create(&cfg);
    if (fyp == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    if (fy_parser_set_string(fyp, data, len) != 0) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "cannot read the YAML input");
        goto fail;
    }
    for (;;) {
        json_t *doc;
        fyd = fy_parse_load_document(fyp);
        if (fyd == NULL)
            break;
        if (fy_document_root(fyd) != NULL) {
            if ((rc = convert(&src, fy_document_root(fyd), 0, &doc, err, errlen)) < 0)
                goto fail;
            if (!json_is_null(doc) && json_array_append(docs, doc) != 0) {
                json_decref(doc);
                rc = HCP_ENOMEM;
                goto fail;
            }
            json_decref(doc);
        }
        fy_parse_document_destroy(fyp, fyd);
        fyd = NULL;
    }
    if (fy_parser_get_stream_error(fyp)) {
        rc = diag_error(diag, err, errlen);
        goto fail;
    }
    fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return 0;
fail:
    if (fyd != NULL)
        fy_parse_document_destroy(fyp, fyd);
    if (fyp != NULL)
        fy_parser_destroy(fyp);
    fy_diag_destroy(diag);
    return rc;
}

int manifest_load(const char *data, size_t len, json_t **docs, char *err, size_t errlen)
{
    json_t *arr;
    size_t i = 0;
    int rc;

    *docs = NULL;
    if (err != NULL && errlen > 0)
        err[0] = '\0';
    arr = json_array();
    if (arr == NULL)
        return HCP_ENOMEM;
    while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
        i++;
    if (i < len && data[i] == '{') {
        json_error_t je;
        json_t *doc = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
        if (doc == NULL) {
            rc = hcp_errf(err, errlen, HCP_EINVAL, "JSON line %d, column %d: %s", je.line,
                          je.column, je.text);
            goto fail;
        }
        if (json_array_append_new(arr, doc) != 0) {
            rc = HCP_ENOMEM;
            goto fail;
        }
    } else if ((i = hcp_yaml_bad_utf8(data, len)) < len) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "YAML input is not valid UTF-8 text (byte %zu)", i);
        goto fail;
    } else if ((rc = load_yaml(data, len, arr, err, errlen)) < 0) {
        goto fail;
    }
    *docs = arr;
    return 0;
fail:
    json_decref(arr);
    return rc;
}
