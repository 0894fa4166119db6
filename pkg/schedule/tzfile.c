/* tzfile.c: the system's zoneinfo database (RFC 8536 TZif files).
 *
 * Why not libical's built-in zones: libical 3.0 rebuilds each zone as a
 * VTIMEZONE and gets offsets wrong in real zones (America/Sao_Paulo in
 * 2014, Australia/Lord_Howe and Pacific/Chatham after 2037, where its
 * recurring rules start DST a week late). Windows would open an hour off.
 * Reading the TZif transition table and, past its end, the POSIX TZ rule in
 * its footer is what the C library does too; it is small and exact.
 *
 * Loaded zones are kept for the life of the process (a handful at most).
 */
#include "schedule/tzfile.h"

#include "base/list.h"
#include "schedule/civil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TZFILE (1 << 20)

typedef struct tzrule_date {
    char kind;    /* 'M' month.week.day, 'J' Julian 1..365 without Feb 29, 'n' 0..365 */
    int m, w, d;  /* 'M': month 1..12, week 1..5 (5 = last), weekday 0..6 (0 = Sunday) */
    int n;        /* 'J' and 'n': the day number */
    int time;     /* seconds after local midnight (may be negative or >= 24h) */
} tzrule_date_t;

struct sched_tzdata {
    hcp_link_t link;          /* on the process-wide list of loaded zones */
    char name[72];
    int64_t *trans;            /* transition instants, ascending */
    unsigned char *idx;        /* type index of each transition */
    size_t ntrans;
    int32_t *utoff;            /* UTC offset of each type */
    size_t ntypes;
    bool has_rule;             /* the footer gives a rule after the table */
    int32_t std_off, dst_off;  /* footer: UTC offsets of standard and daylight time */
    bool has_dst;              /* footer: daylight time exists */
    tzrule_date_t start, end;  /* footer: daylight time starts and ends */
};

static hcp_link_t loaded = {&loaded, &loaded}; /* every zone loaded */

static int64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    if (n == 4)
        return (int32_t)(uint32_t)v;
    return (int64_t)v;
}

/* ---- POSIX TZ strings ("CET-1CEST,M3.5.0,M10.5.0/3") ---------------------- */

static const char *tz_name(const char *p)
{
    if (*p == '<') {
        const char *q = strchr(p, '>');
        return q ? q + 1 : NULL;
    }
    const char *q = p;
    while ((*q >= 'A' && *q <= 'Z') || (*q >= 'a' && *q <= 'z'))
        q++;
    return q - p >= 3 ? q : NULL;
}

/* [+-]hh[:mm[:ss]] into seconds; hours up to 167 (RFC 8536 extension). */
static const char *tz_time(const char *p, int *out)
{
    int sign = 1, h = 0, m = 0, s = 0, digits = 0;
    if (*p == '+' || *p == '-')
        sign = *p++ == '-' ? -1 : 1;
    while (*p >= '0' && *p <= '9' && digits < 3) {
        h = h * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || h > 167)
        return NULL;
    if (*p == ':') {
        p++;
        if (!(p[0] >= '0' && p[0] <= '5' && p[1] >= '0' && p[1] <= '9'))
            return NULL;
        m = (p[0] - '0') * 10 + (p[1] - '0');
        p += 2;
        if (*p == ':') {
            p++;
            if (!(p[0] >= '0' && p[0] <= '5' && p[1] >= '0' && p[1] <= '9'))
                return NULL;
            s = (p[0] - '0') * 10 + (p[1] - '0');
            p += 2;
        }
    }
    *out = sign * (h * 3600 + m * 60 + s);
    return p;
}

static const char *tz_num(const char *p, int *out, int max)
{
    int v = 0, digits = 0;
    while (*p >= '0' && *p <= '9' && digits < 4) {
        v = v * 10 + (*p++ - '0');
        digits++;
    }
    if (digits == 0 || v > max)
        return NULL;
    *out = v;
    return p;
}

static const char *tz_date(const char *p, tzrule_date_t *r)
{
    r->time = 7200;
    if (*p == 'M') {
        r->kind = 'M';
        if (!(p = tz_num(p + 1, &r->m, 12)) || r->m < 1 || *p++ != '.' ||
            !(p = tz_num(p, &r->w, 5)) || r->w < 1 || *p++ != '.' || !(p = tz_num(p, &r->d, 6)))
            return NULL;
    } else if (*p == 'J') {
        r->kind = 'J';
        if (!(p = tz_num(p + 1, &r->n, 365)) || r->n < 1)
            return NULL;
    } else {
        r->kind = 'n';
        if (!(p = tz_num(p, &r->n, 365)))
            return NULL;
    }
    if (*p == '/' && !(p = tz_time(p + 1, &r->time)))
        return NULL;
    return p;
}

static int parse_footer(const char *s, struct sched_tzdata *z)
{
    int off;
    const char *p = tz_name(s);
    if (!p || !(p = tz_time(p, &off)))
        return -1;
    z->std_off = -off; /* POSIX offsets count west of Greenwich */
    z->has_rule = true;
    if (*p == '\0')
        return 0;
    if (!(p = tz_name(p)))
        return -1;
    z->has_dst = true;
    z->dst_off = z->std_off + 3600;
    if (*p != ',' && *p != '\0') {
        if (!(p = tz_time(p, &off)))
            return -1;
        z->dst_off = -off;
    }
    if (*p == '\0') {
        /* No rule given: the traditional US rule. */
        z->start = (tzrule_date_t){'M', 3, 2, 0, 0, 7200};
        z->end = (tzrule_date_t){'M', 11, 1, 0, 0, 7200};
        return 0;
    }
    if (*p++ != ',' || !(p = tz_date(p, &z->start)) || *p++ != ',' ||
        !(p = tz_date(p, &z->end)) || *p != '\0')
        return -1;
    return 0;
}

/* Days since 1970-01-01 of the rule's date in year y. */
static int32_t rule_day(int y, const tzrule_date_t *r)
{
    int32_t jan1 = sched_days_from_civil(y, 1, 1);
    bool leap = sched_days_in_month(y, 2) == 29;
    switch (r->kind) {
    case 'J':
        return jan1 + r->n - 1 + (leap && r->n >= 60 ? 1 : 0);
    case 'n':
        return jan1 + r->n;
    default: {
        int32_t first = sched_days_from_civil(y, r->m, 1);
        int wd1 = (int)(((first % 7) + 7 + 4) % 7); /* 1970-01-01 was a Thursday (4) */
        int day = 1 + (r->d - wd1 + 7) % 7 + (r->w - 1) * 7;
        int dim = sched_days_in_month(y, r->m);
        while (day > dim)
            day -= 7;
        return first + day - 1;
    }
    }
}

static int32_t rule_offset(const struct sched_tzdata *z, sched_time_t t)
{
    if (!z->has_dst)
        return z->std_off;
    int64_t local = t + z->std_off;
    int64_t d = local / 86400 - (local % 86400 < 0);
    int y, m, dd;
    sched_civil_from_days((int32_t)d, &y, &m, &dd);
    /* Transition times are local: the start in standard time, the end in
     * daylight time. */
    int64_t start = (int64_t)rule_day(y, &z->start) * 86400 + z->start.time - z->std_off;
    int64_t end = (int64_t)rule_day(y, &z->end) * 86400 + z->end.time - z->dst_off;
    bool dst = start < end ? (t >= start && t < end) : !(t >= end && t < start);
    return dst ? z->dst_off : z->std_off;
}

/* ---- TZif files ----------------------------------------------------------- */

static int parse_tzif(const unsigned char *b, size_t len, struct sched_tzdata *z)
{
    if (len < 44 || memcmp(b, "TZif", 4) != 0)
        return -1;
    int version = b[4];
    size_t pos = 0;
    int tsize = 4;
    if (version >= '2') {
        /* Skip the version 1 block to the 64-bit data. */
        size_t isut = (size_t)be(b + 20, 4), isstd = (size_t)be(b + 24, 4),
               leap = (size_t)be(b + 28, 4), timecnt = (size_t)be(b + 32, 4),
               typecnt = (size_t)be(b + 36, 4), charcnt = (size_t)be(b + 40, 4);
        size_t v1 = timecnt * 5 + typecnt * 6 + charcnt + leap * 8 + isstd + isut;
        if (v1 > len || 44 + v1 + 44 > len || memcmp(b + 44 + v1, "TZif", 4) != 0)
            return -1;
        pos = 44 + v1;
        tsize = 8;
    }
    const unsigned char *h = b + pos;
    size_t isut = (size_t)be(h + 20, 4), isstd = (size_t)be(h + 24, 4),
           leap = (size_t)be(h + 28, 4), timecnt = (size_t)be(h + 32, 4),
           typecnt = (size_t)be(h + 36, 4), charcnt = (size_t)be(h + 40, 4);
    if (typecnt == 0 || typecnt > 256 || timecnt > 100000 || charcnt > 100000 || leap > 100000 ||
        isstd > 256 || isut > 256)
        return -1;
    size_t need = timecnt * (size_t)tsize + timecnt + typecnt * 6 + charcnt +
                  leap * (size_t)(tsize + 4) + isstd + isut;
    const unsigned char *p = h + 44;
    if (pos + 44 + need > len)
        return -1;
    z->trans = malloc((timecnt ? timecnt : 1) * sizeof(*z->trans));
    z->idx = malloc(timecnt ? timecnt : 1);
    z->utoff = malloc(typecnt * sizeof(*z->utoff));
    if (!z->trans || !z->idx || !z->utoff)
        return -2;
    for (size_t i = 0; i < timecnt; i++)
        z->trans[i] = be(p + i * (size_t)tsize, tsize);
    p += timecnt * (size_t)tsize;
    for (size_t i = 0; i < timecnt; i++) {
        if (p[i] >= typecnt)
            return -1;
        z->idx[i] = p[i];
    }
    p += timecnt;
    for (size_t i = 0; i < typecnt; i++)
        z->utoff[i] = (int32_t)be(p + i * 6, 4);
    z->ntrans = timecnt;
    z->ntypes = typecnt;
    p = h + 44 + need;
    if (tsize == 8 && (size_t)(p - b) < len && *p == '\n') {
        const unsigned char *q = memchr(p + 1, '\n', len - (size_t)(p + 1 - b));
        if (q && q - p - 1 > 0 && q - p - 1 < 128) {
            char footer[128];
            memcpy(footer, p + 1, (size_t)(q - p - 1));
            footer[q - p - 1] = '\0';
            if (parse_footer(footer, z) != 0)
                z->has_rule = false; /* keep the table; after it the last type holds */
        }
    }
    return 0;
}

static void tzdata_free(struct sched_tzdata *z)
{
    if (!z)
        return;
    free(z->trans);
    free(z->idx);
    free(z->utoff);
    free(z);
}

int sched_tzfile_load(const char *name, const sched_tzdata_t **out)
{
    hcp_link_t *pos, *tmp;

    HCP_LIST_FOREACH(pos, tmp, &loaded) {
        struct sched_tzdata *z = hcp_list_entry(pos, struct sched_tzdata, link);
        if (strcmp(z->name, name) == 0) {
            *out = z;
            return 0;
        }
    }
    if (strlen(name) >= sizeof(((struct sched_tzdata *)NULL)->name))
        return HCP_EINVAL;
    const char *dir = getenv("TZDIR");
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir && *dir ? dir : "/usr/share/zoneinfo", name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return HCP_EINVAL;
    unsigned char *buf = malloc(MAX_TZFILE);
    struct sched_tzdata *z = calloc(1, sizeof(*z));
    int rc = HCP_ENOMEM;
    if (!buf || !z)
        goto fail;
    size_t len = fread(buf, 1, MAX_TZFILE, f);
    rc = parse_tzif(buf, len, z);
    if (rc != 0) {
        rc = rc == -2 ? HCP_ENOMEM : HCP_EINVAL;
        goto fail;
    }
    snprintf(z->name, sizeof(z->name), "%s", name);
    hcp_list_push_front(&loaded, &z->link);
    fclose(f);
    free(buf);
    *out = z;
    return 0;
fail:
    fclose(f);
    free(buf);
    tzdata_free(z);
    return rc;
}

int32_t sched_tzfile_offset(const sched_tzdata_t *z, sched_time_t t)
{
    if (z->ntrans == 0 || t < z->trans[0]) {
        if (z->ntrans == 0 && z->has_rule)
            return rule_offset(z, t);
        return z->utoff[0];
    }
    if (t >= z->trans[z->ntrans - 1] && z->has_rule)
        return rule_offset(z, t);
    size_t lo = 0, hi = z->ntrans; /* last transition <= t */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (z->trans[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return z->utoff[z->idx[lo]];
}
