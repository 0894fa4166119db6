/* rrule.c: the RFC 5545 subset accepted for maintenance windows
 * (DESIGN.md 3.2). Everything outside the subset is rejected with a sentence
 * naming the part, before libical ever sees the string. */
#include "schedule/rrule.h"

#include "schedule/civil.h"

#include <libical/ical.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RRULE_LEN 1024
#define MAX_LIST_ITEMS 64
#define MAX_INTERVAL 1000

static const char *const weekdays[] = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"};

static int weekday_index(const char *s, size_t n)
{
    if (n != 2)
        return -1;
    for (int i = 0; i < 7; i++)
        if (s[0] == weekdays[i][0] && s[1] == weekdays[i][1])
            return i;
    return -1;
}

/* Parses a signed decimal integer occupying exactly [s, s+n). */
static int parse_int(const char *s, size_t n, long *out)
{
    char buf[16];
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (!((c >= '0' && c <= '9') || (i == 0 && (c == '+' || c == '-'))))
            return -1;
    }
    if (n == 1 && (buf[0] == '+' || buf[0] == '-'))
        return -1;
    char *end;
    long v = strtol(buf, &end, 10);
    if (*end != '\0')
        return -1;
    *out = v;
    return 0;
}

/* A list of integers read by parse_int_list(), or where its first bad
 * item is. */
typedef struct int_list {
    long vals[MAX_LIST_ITEMS];
    int bad_item;       /* index of the first bad item (from 0), when refused */
    const char *bad_at; /* that item in the rule */
    size_t bad_len;     /* its length */
} int_list_t;

/* Parses a comma-separated list of integers within [-max, max] \ {0}
 * (or [1, max] when !negative_ok) into l->vals. Returns the count, or -1
 * with the first bad item in l. */
static int parse_int_list(const char *v, size_t n, long max, int negative_ok, int_list_t *l)
{
    int count = 0;
    size_t i = 0;
    while (i <= n) {
        size_t j = i;
        while (j < n && v[j] != ',')
            j++;
        long x;
        if (count >= MAX_LIST_ITEMS || parse_int(v + i, j - i, &x) || x == 0 || x > max ||
            x < (negative_ok ? -max : 1)) {
            l->bad_item = count;
            l->bad_at = v + i;
            l->bad_len = j - i;
            return -1;
        }
        l->vals[count++] = x;
        i = j + 1;
    }
    return count;
}

static int parse_until(const char *v, size_t n, sched_until_t *u)
{
    int y, mo, d, h = 0, mi = 0, s = 0;
    char buf[32];
    if (n != 8 && n != 15 && n != 16)
        return -1;
    memcpy(buf, v, n);
    buf[n] = '\0';
    if (sscanf(buf, "%4d%2d%2d", &y, &mo, &d) != 3)
        return -1;
    for (size_t i = 0; i < 8; i++)
        if (buf[i] < '0' || buf[i] > '9')
            return -1;
    if (n >= 15) {
        if (buf[8] != 'T')
            return -1;
        for (size_t i = 9; i < 15; i++)
            if (buf[i] < '0' || buf[i] > '9')
                return -1;
        if (sscanf(buf + 9, "%2d%2d%2d", &h, &mi, &s) != 3)
            return -1;
        if (n == 16 && buf[15] != 'Z')
            return -1;
    }
    if (y < 1970 || y > 9999 || mo < 1 || mo > 12 || d < 1 || d > sched_days_in_month(y, mo) ||
        h > 23 || mi > 59 || s > 59)
        return -1;
    u->day = sched_days_from_civil(y, mo, d);
    u->second = h * 3600 + mi * 60 + s;
    u->kind = n == 8 ? SCHED_UNTIL_DATE : n == 15 ? SCHED_UNTIL_LOCAL : SCHED_UNTIL_UTC;
    u->utc = (sched_time_t)u->day * 86400 + u->second;
    return 0;
}

/* The parts of the subset, in the order they are handed to libical. */
enum { P_FREQ, P_INTERVAL, P_BYDAY, P_BYMONTHDAY, P_BYMONTH, P_BYSETPOS, P_WKST, P_UNTIL, P_N };
static const char *const part_names[P_N] = {"FREQ",    "INTERVAL", "BYDAY", "BYMONTHDAY",
                                            "BYMONTH", "BYSETPOS", "WKST",  "UNTIL"};

/* The value of each part as it appears in the rule: val[k] points into the
 * rule (NULL when part k is absent), vlen[k] its length (never 0 when
 * present). */
typedef struct parts {
    const char *val[P_N];
    size_t vlen[P_N];
} parts_t;

/* At most 20 bytes of a value, for quoting it in a message. */
static int quoted(size_t n)
{
    return (int)(n > 20 ? 20 : n);
}

/* Checks the rule as a whole before its parts are read: not empty, not
 * longer than MAX_RRULE_LEN, not written with the iCalendar "RRULE:"
 * property prefix. Returns 0 or HCP_EINVAL with the sentence in err. */
static int check_whole(const char *rrule, size_t len, char *err, size_t errlen)
{
    if (len > MAX_RRULE_LEN)
        return hcp_errf(err, errlen, HCP_EINVAL, "the rule is longer than %d characters",
                        MAX_RRULE_LEN);
    if (strncmp(rrule, "RRULE:", 6) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "write the rule without the \"RRULE:\" prefix");
    return 0;
}

/* The refusal of a part name outside the subset ([name, name + nlen)): the
 * RFC 5545 parts we leave out on purpose say why and what to write instead,
 * any other name is unknown. Always returns HCP_EINVAL. */
static int refuse_part(const char *name, size_t nlen, char *err, size_t errlen)
{
    static const struct {
        const char *name, *why;
    } known[] = {
        {"COUNT", "COUNT is not supported; use UNTIL"},
        {"BYHOUR", "BYHOUR is not supported; the window start is startTime"},
        {"BYMINUTE", "BYMINUTE is not supported; the window start is startTime"},
        {"BYSECOND", "BYSECOND is not supported; the window start is startTime"},
        {"BYWEEKNO", "BYWEEKNO is not supported"},
        {"BYYEARDAY", "BYYEARDAY is not supported"},
        {"DTSTART", "DTSTART is not allowed in the rule; recurrences are anchored at "
                    "1970-01-01 and start at startTime"},
        {"RSCALE", "RSCALE is not supported"},
        {"SKIP", "SKIP is not supported"},
    };
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        if (strlen(known[k].name) == nlen && memcmp(known[k].name, name, nlen) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s", known[k].why);
    return hcp_errf(err, errlen, HCP_EINVAL, "unknown rule part \"%.*s\"",
                    (int)(nlen > 40 ? 40 : nlen), name);
}

/* Splits the rule (len bytes) at ';' into NAME=VALUE parts and records each
 * value in *p, refusing, at the first offending part from the left: an
 * empty part, a part with no '=' or no name, a name outside the subset
 * (refuse_part), a part given twice, an empty value, and a trailing ';'.
 * Only the syntax is checked; the values are read by the stages below.
 * Returns 0 or HCP_EINVAL with the sentence in err. */
static int split_parts(const char *rrule, size_t len, parts_t *p, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && rrule[j] != ';')
            j++;
        const char *part = rrule + i;
        size_t plen = j - i;
        const char *eq = memchr(part, '=', plen);
        if (plen == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "empty part at offset %zu (two ';' in a row?)",
                            i);
        if (!eq || eq == part)
            return hcp_errf(err, errlen, HCP_EINVAL, "part \"%.*s\" is not NAME=VALUE",
                            (int)(plen > 40 ? 40 : plen), part);
        size_t nlen = (size_t)(eq - part);
        int which = -1;
        for (int k = 0; k < P_N; k++)
            if (strlen(part_names[k]) == nlen && memcmp(part_names[k], part, nlen) == 0)
                which = k;
        if (which < 0)
            return refuse_part(part, nlen, err, errlen);
        if (p->val[which])
            return hcp_errf(err, errlen, HCP_EINVAL, "%s appears more than once",
                            part_names[which]);
        p->val[which] = eq + 1;
        p->vlen[which] = plen - nlen - 1;
        if (p->vlen[which] == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s has an empty value", part_names[which]);
        i = j + 1;
        if (j + 1 == len && rrule[j] == ';')
            return hcp_errf(err, errlen, HCP_EINVAL, "the rule ends with ';'");
    }
    return 0;
}

/* Reads FREQ, which is required, into info->freq (SCHED_FREQ_*; -1 when it
 * is refused). The sub-daily frequencies are named in their own refusal:
 * a window recurs at most daily. Returns 0 or HCP_EINVAL with the sentence
 * in err. */
static int parse_freq(const parts_t *p, sched_rrule_info_t *info, char *err, size_t errlen)
{
    static const char *const freqs[] = {"DAILY", "WEEKLY", "MONTHLY", "YEARLY"};
    static const char *const subdaily[] = {"HOURLY", "MINUTELY", "SECONDLY"};
    const char *v = p->val[P_FREQ];
    size_t n = p->vlen[P_FREQ];

    if (!v)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "FREQ is required (DAILY, WEEKLY, MONTHLY or YEARLY)");
    info->freq = -1;
    for (int k = 0; k < 4; k++)
        if (strlen(freqs[k]) == n && memcmp(freqs[k], v, n) == 0)
            info->freq = k;
    if (info->freq >= 0)
        return 0;
    for (int k = 0; k < 3; k++)
        if (strlen(subdaily[k]) == n && memcmp(subdaily[k], v, n) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "FREQ=%s is not supported: windows recur at most daily", subdaily[k]);
    return hcp_errf(err, errlen, HCP_EINVAL,
                    "FREQ=%.*s is not one of DAILY, WEEKLY, MONTHLY, YEARLY", quoted(n), v);
}

/* Checks INTERVAL, when present: a whole number from 1 to MAX_INTERVAL
 * written without a sign. Returns 0 or HCP_EINVAL with the sentence in err. */
static int check_interval(const parts_t *p, char *err, size_t errlen)
{
    const char *v = p->val[P_INTERVAL];
    size_t n = p->vlen[P_INTERVAL];
    long x;

    if (!v)
        return 0;
    if (parse_int(v, n, &x) || x < 1 || x > MAX_INTERVAL || v[0] == '+' || v[0] == '-')
        return hcp_errf(err, errlen, HCP_EINVAL, "INTERVAL=%.*s is not a whole number from 1 to %d",
                        quoted(n), v, MAX_INTERVAL);
    return 0;
}

/* Reads BYMONTH (month numbers 1..12) into *month_mask, bit m set when
 * month m may be selected; every month when BYMONTH is absent. Returns 0 or
 * HCP_EINVAL with the sentence, naming the bad item, in err. */
static int parse_bymonth(const parts_t *p, int *month_mask, char *err, size_t errlen)
{
    int_list_t l;

    *month_mask = 0x1fff;
    if (!p->val[P_BYMONTH])
        return 0;
    int n = parse_int_list(p->val[P_BYMONTH], p->vlen[P_BYMONTH], 12, 0, &l);
    if (n < 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYMONTH item %d \"%.*s\" is not a month number 1..12", l.bad_item + 1,
                        quoted(l.bad_len), l.bad_at);
    *month_mask = 0;
    for (int k = 0; k < n; k++)
        *month_mask |= 1 << l.vals[k];
    return 0;
}

/* Checks BYMONTHDAY, when present: not with FREQ=WEEKLY (RFC 5545), days
 * 1..31 or -31..-1, and at least one of them a date of a month in
 * month_mask (February 30 alone selects nothing, and would make the
 * expansion search for centuries). Returns 0 or HCP_EINVAL with the
 * sentence in err. */
static int check_bymonthday(const parts_t *p, int freq, int month_mask, char *err, size_t errlen)
{
    int_list_t l;

    if (!p->val[P_BYMONTHDAY])
        return 0;
    if (freq == SCHED_FREQ_WEEKLY)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYMONTHDAY cannot be used with FREQ=WEEKLY (RFC 5545)");
    int n = parse_int_list(p->val[P_BYMONTHDAY], p->vlen[P_BYMONTHDAY], 31, 1, &l);
    if (n < 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYMONTHDAY item %d \"%.*s\" is not a day of the month 1..31 or -31..-1",
                        l.bad_item + 1, quoted(l.bad_len), l.bad_at);
    for (int m = 1; m <= 12; m++) {
        if (!(month_mask & (1 << m)))
            continue;
        int days = m == 2 ? 29 : sched_days_in_month(2001, m);
        for (int k = 0; k < n; k++)
            if ((l.vals[k] > 0 ? l.vals[k] : -l.vals[k]) <= days)
                return 0;
    }
    return hcp_errf(err, errlen, HCP_EINVAL, "BYMONTHDAY and BYMONTH together select no date");
}

/* Checks one BYDAY item ([v, v + ilen), the item-th of the list, from 1):
 * a weekday (MO..SU), optionally after an ordinal, which only FREQ=MONTHLY
 * (1..5 or -5..-1) and FREQ=YEARLY (1..53 or -53..-1) allow. Returns 0 or
 * HCP_EINVAL with the sentence in err. */
static int check_byday_item(const char *v, size_t ilen, int item, int freq, char *err,
                            size_t errlen)
{
    if (item > MAX_LIST_ITEMS || ilen < 2 || weekday_index(v + ilen - 2, 2) < 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYDAY item %d \"%.*s\" is not a weekday (MO, TU, WE, TH, FR, SA, SU "
                        "with an optional ordinal like 1MO or -1FR)",
                        item, quoted(ilen), v);
    if (ilen > 2) {
        long ord;
        long max = freq == SCHED_FREQ_YEARLY ? 53 : 5;
        if (freq < SCHED_FREQ_MONTHLY)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYDAY ordinal \"%.*s\" is only allowed with FREQ=MONTHLY or "
                            "FREQ=YEARLY",
                            (int)ilen, v);
        if (parse_int(v, ilen - 2, &ord) || ord == 0 || ord > max || ord < -max)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYDAY item %d \"%.*s\" has an ordinal outside 1..%ld / -%ld..-1",
                            item, quoted(ilen), v, max, max);
    }
    return 0;
}

/* Checks BYDAY, when present: a comma-separated list of at most
 * MAX_LIST_ITEMS items, each as check_byday_item() says, the first bad one
 * refused. Returns 0 or HCP_EINVAL with the sentence in err. */
static int check_byday(const parts_t *p, int freq, char *err, size_t errlen)
{
    const char *v = p->val[P_BYDAY];
    size_t n = p->vlen[P_BYDAY], k = 0;
    int item = 0;

    if (!v)
        return 0;
    while (k <= n) {
        size_t e = k;
        while (e < n && v[e] != ',')
            e++;
        item++;
        int rc = check_byday_item(v + k, e - k, item, freq, err, errlen);
        if (rc)
            return rc;
        k = e + 1;
    }
    return 0;
}

/* Checks BYSETPOS, when present: only with FREQ=MONTHLY or FREQ=YEARLY, only
 * beside another BYxxx part that gives it a set to pick from, positions
 * 1..366 or -366..-1. Returns 0 or HCP_EINVAL with the sentence in err. */
static int check_bysetpos(const parts_t *p, int freq, char *err, size_t errlen)
{
    int_list_t l;

    if (!p->val[P_BYSETPOS])
        return 0;
    if (freq < SCHED_FREQ_MONTHLY)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYSETPOS is only allowed with FREQ=MONTHLY or FREQ=YEARLY");
    if (!p->val[P_BYDAY] && !p->val[P_BYMONTHDAY] && !p->val[P_BYMONTH])
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYSETPOS needs another BYxxx part to select from");
    if (parse_int_list(p->val[P_BYSETPOS], p->vlen[P_BYSETPOS], 366, 1, &l) < 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYSETPOS item %d \"%.*s\" is not within 1..366 or -366..-1",
                        l.bad_item + 1, quoted(l.bad_len), l.bad_at);
    return 0;
}

/* Checks WKST (a weekday, MO..SU) and reads UNTIL (a date, or a local or
 * UTC date-time, from 1970 on) into info->until, each when present.
 * Returns 0 or HCP_EINVAL with the sentence in err. */
static int parse_wkst_until(const parts_t *p, sched_rrule_info_t *info, char *err,
                            size_t errlen)
{
    if (p->val[P_WKST] && weekday_index(p->val[P_WKST], p->vlen[P_WKST]) < 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "WKST=%.*s is not a weekday (MO..SU)",
                        quoted(p->vlen[P_WKST]), p->val[P_WKST]);
    if (p->val[P_UNTIL] && parse_until(p->val[P_UNTIL], p->vlen[P_UNTIL], &info->until))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "UNTIL=%.*s is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS[Z]) "
                        "from 1970 on",
                        quoted(p->vlen[P_UNTIL]), p->val[P_UNTIL]);
    return 0;
}

/* Fills what the engine applies itself from a rule the stages above
 * accepted: for weekly rules the INTERVAL weeks and WKST (libical 3.0
 * miscounts the weeks when the only BYDAY is the last day of the week:
 * FREQ=WEEKLY;INTERVAL=2;BYDAY=SU starts a week late), and the two shapes
 * the structured Daily and Weekly recurrences translate to, simple enough
 * to expand by arithmetic (day_interval, weekday_mask). */
static void fill_engine(const parts_t *p, sched_rrule_info_t *info)
{
    info->week_interval = 1;
    info->wkst = 0;
    if (info->freq == SCHED_FREQ_WEEKLY) {
        long v;
        if (p->val[P_INTERVAL] && parse_int(p->val[P_INTERVAL], p->vlen[P_INTERVAL], &v) == 0)
            info->week_interval = (int)v;
        if (p->val[P_WKST])
            info->wkst = weekday_index(p->val[P_WKST], p->vlen[P_WKST]);
    }
    if (info->freq == SCHED_FREQ_DAILY && !p->val[P_BYDAY] && !p->val[P_BYMONTH] &&
        !p->val[P_BYMONTHDAY]) {
        long v = 1;
        if (p->val[P_INTERVAL])
            parse_int(p->val[P_INTERVAL], p->vlen[P_INTERVAL], &v);
        info->day_interval = (int)v;
    }
    if (info->freq == SCHED_FREQ_WEEKLY && p->val[P_BYDAY] && !p->val[P_BYMONTH]) {
        for (size_t k = 0; k + 2 <= p->vlen[P_BYDAY]; k += 3)
            info->weekday_mask |= 1 << weekday_index(p->val[P_BYDAY] + k, 2);
    }
}

/* Writes info->libical_rule: the accepted parts in a fixed order, without
 * UNTIL, which the engine applies against the real window start (startTime,
 * time zone), and for weekly rules without what fill_engine() took over
 * (INTERVAL, WKST); then has libical read it back. Returns 0 or HCP_EINVAL
 * with the sentence in err. */
static int libical_rule(const parts_t *p, sched_rrule_info_t *info, char *err, size_t errlen)
{
    size_t out = 0;
    for (int k = 0; k < P_N; k++) {
        if (!p->val[k] || k == P_UNTIL)
            continue;
        if (info->freq == SCHED_FREQ_WEEKLY && (k == P_INTERVAL || k == P_WKST))
            continue;
        int w = snprintf(info->libical_rule + out, sizeof(info->libical_rule) - out, "%s%s=%.*s",
                         out ? ";" : "", part_names[k], (int)p->vlen[k], p->val[k]);
        if (w < 0 || (size_t)w >= sizeof(info->libical_rule) - out)
            return hcp_errf(err, errlen, HCP_EINVAL, "the rule is too long");
        out += (size_t)w;
    }
    struct icalrecurrencetype rt = icalrecurrencetype_from_string(info->libical_rule);
    icalerror_clear_errno();
    if (rt.freq == ICAL_NO_RECURRENCE)
        return hcp_errf(err, errlen, HCP_EINVAL, "the rule is not a valid RFC 5545 recurrence");
    return 0;
}

/* The stages in the order their refusals take precedence: the whole rule,
 * its parts' syntax, FREQ (the later checks depend on it), then each part's
 * value, then what the engine and libical get. */
int sched_rrule_parse(const char *rrule, sched_rrule_info_t *info, char *err, size_t errlen)
{
    parts_t p = {{0}, {0}};
    int month_mask;
    int rc;

    memset(info, 0, sizeof(*info));
    if (!rrule || !*rrule)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "the rule is empty; expected e.g. FREQ=WEEKLY;BYDAY=SA,SU");
    size_t len = strlen(rrule);
    if ((rc = check_whole(rrule, len, err, errlen)) ||
        (rc = split_parts(rrule, len, &p, err, errlen)) ||
        (rc = parse_freq(&p, info, err, errlen)) || (rc = check_interval(&p, err, errlen)) ||
        (rc = parse_bymonth(&p, &month_mask, err, errlen)) ||
        (rc = check_bymonthday(&p, info->freq, month_mask, err, errlen)) ||
        (rc = check_byday(&p, info->freq, err, errlen)) ||
        (rc = check_bysetpos(&p, info->freq, err, errlen)) ||
        (rc = parse_wkst_until(&p, info, err, errlen)))
        return rc;
    fill_engine(&p, info);
    return libical_rule(&p, info, err, errlen);
}

int sched_rrule_check(const char *rrule, char *err, size_t errlen)
{
    sched_rrule_info_t info;
    return sched_rrule_parse(rrule, &info, err, errlen);
}
