/* version: OpenShift release versions (see version.h). */
#include "decide/version.h"

#include <ctype.h>
#include <string.h>

/* A numeric identifier: digits, no leading zero unless it is "0". Stores its
 * value (saturating) and returns the characters read, 0 when not one. */
static size_t number(const char *s, size_t len, unsigned long long *v)
{
    size_t i = 0;
    *v = 0;
    while (i < len && isdigit((unsigned char)s[i])) {
        if (*v < 1000000000000ULL)
            *v = *v * 10 + (unsigned long long)(s[i] - '0');
        i++;
    }
    if (i > 1 && s[0] == '0')
        return 0;
    return i;
}

typedef struct parsed {
    unsigned long long core[3];
    const char *pre;   /* prerelease identifiers, NULL when none */
    size_t pre_len;
} parsed_t;

/* Parses s[0..len); 0 or -1. */
static int parse(const char *s, size_t len, parsed_t *p)
{
    size_t i = 0;
    if (len > 0 && s[0] == 'v')
        i = 1;
    for (int k = 0; k < 3; k++) {
        size_t n = number(s + i, len - i, &p->core[k]);
        if (n == 0)
            return -1;
        i += n;
        if (k < 2) {
            if (i >= len || s[i] != '.')
                return -1;
            i++;
        }
    }
    p->pre = NULL;
    p->pre_len = 0;
    size_t end = len;
    const char *plus = memchr(s + i, '+', len - i);
    if (plus) {
        end = (size_t)(plus - s);
        if (end + 1 >= len)
            return -1; /* empty build metadata */
        for (size_t j = end + 1; j < len; j++)
            if (!isalnum((unsigned char)s[j]) && s[j] != '-' && s[j] != '.')
                return -1;
    }
    if (i < end) {
        if (s[i] != '-' || i + 1 >= end)
            return -1;
        p->pre = s + i + 1;
        p->pre_len = end - i - 1;
        for (size_t j = 0; j < p->pre_len; j++) {
            char c = p->pre[j];
            if (!isalnum((unsigned char)c) && c != '-' && c != '.')
                return -1;
            if (c == '.' && (j == 0 || j + 1 == p->pre_len || p->pre[j + 1] == '.'))
                return -1;
        }
    }
    return 0;
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return false;
    return n > 0;
}

/* semver 2.0.0 section 11: identifiers left to right, numeric ones
 * numerically and below alphanumeric ones, a shorter list first when
 * equal so far. */
static int pre_cmp(const char *a, size_t an, const char *b, size_t bn)
{
    size_t i = 0, j = 0;
    while (i < an && j < bn) {
        size_t ie = i, je = j;
        while (ie < an && a[ie] != '.')
            ie++;
        while (je < bn && b[je] != '.')
            je++;
        bool ad = all_digits(a + i, ie - i), bd = all_digits(b + j, je - j);
        int c;
        if (ad && bd) {
            /* Numeric identifiers have no leading zeros: longer is bigger. */
            c = (ie - i) < (je - j) ? -1 : (ie - i) > (je - j) ? 1 : memcmp(a + i, b + j, ie - i);
        } else if (ad != bd) {
            c = ad ? -1 : 1;
        } else {
            size_t m = (ie - i) < (je - j) ? ie - i : je - j;
            c = memcmp(a + i, b + j, m);
            if (c == 0)
                c = (ie - i) < (je - j) ? -1 : (ie - i) > (je - j) ? 1 : 0;
        }
        if (c)
            return c < 0 ? -1 : 1;
        i = ie < an ? ie + 1 : ie;
        j = je < bn ? je + 1 : je;
    }
    return (i < an) - (j < bn);
}

int decide_version_cmp(const char *a, const char *b, int *cmp)
{
    parsed_t pa, pb;
    if (!a || !b || parse(a, strlen(a), &pa) || parse(b, strlen(b), &pb))
        return -1;
    for (int k = 0; k < 3; k++)
        if (pa.core[k] != pb.core[k]) {
            *cmp = pa.core[k] < pb.core[k] ? -1 : 1;
            return 0;
        }
    if (!pa.pre && !pb.pre)
        *cmp = 0;
    else if (!pa.pre || !pb.pre)
        *cmp = pa.pre ? -1 : 1; /* a prerelease comes before its release */
    else
        *cmp = pre_cmp(pa.pre, pa.pre_len, pb.pre, pb.pre_len);
    return 0;
}

static const char *const arch_suffixes[] = {"-x86_64", "-aarch64", "-arm64", "-multi", "-ppc64le",
                                            "-s390x"};

bool decide_release_version(const char *image, char *out, size_t n)
{
    if (n)
        out[0] = '\0';
    if (!image || n == 0 || strchr(image, '@'))
        return false;
    const char *slash = strrchr(image, '/');
    const char *colon = strrchr(slash ? slash : image, ':');
    if (!colon || !colon[1])
        return false;
    const char *tag = colon + 1;
    size_t len = strlen(tag);
    for (size_t k = 0; k < sizeof(arch_suffixes) / sizeof(arch_suffixes[0]); k++) {
        size_t sl = strlen(arch_suffixes[k]);
        if (len > sl && strcmp(tag + len - sl, arch_suffixes[k]) == 0) {
            len -= sl;
            break;
        }
    }
    parsed_t p;
    if (len >= n || parse(tag, len, &p))
        return false;
    memcpy(out, tag, len);
    out[len] = '\0';
    return true;
}

int decide_version_minor_line(const char *v, long *out)
{
    parsed_t p;
    if (!v || parse(v, strlen(v), &p) != 0 || p.core[1] > 1000)
        return -1;
    if (p.core[0] == 4)
        *out = (long)p.core[1];
    else if (p.core[0] == 5)
        *out = 23 + (long)p.core[1];
    else
        return -1;
    return 0;
}
