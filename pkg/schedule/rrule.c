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

/* Parses a comma-separated list of integers within [-max, max] \ {0}
 * (or [1, max] when !negative_ok) into vals. Returns the count or -1. */
static int parse_int_list(const char *v, size_t n, long max, int negative_ok, long *vals,
                          int *bad_item, size_t *bad_len, const char **bad_at)
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
            *bad_item = count;
            *bad_at = v + i;
            *bad_len = j - i;
            return -1;
        }
        vals[count++] = x;
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

int sched_rrule_parse(const char *rrule, sched_rrule_info_t *info, char *err, size_t errlen)
{
    memset(info, 0, sizeof(*info));
    if (!rrule || !*rrule)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "the rule is empty; expected e.g. FREQ=WEEKLY;BYDAY=SA,SU");
    size_t len = strlen(rrule);
    if (len > MAX_RRULE_LEN)
        return hcp_errf(err, errlen, HCP_EINVAL, "the rule is longer than %d characters",
                        MAX_RRULE_LEN);
    if (strncmp(rrule, "RRULE:", 6) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "write the rule without the \"RRULE:\" prefix");

    enum { P_FREQ, P_INTERVAL, P_BYDAY, P_BYMONTHDAY, P_BYMONTH, P_BYSETPOS, P_WKST, P_UNTIL, P_N };
    static const char *const names[P_N] = {"FREQ",    "INTERVAL", "BYDAY", "BYMONTHDAY",
                                           "BYMONTH", "BYSETPOS", "WKST",  "UNTIL"};
    const char *val[P_N] = {0};
    size_t vlen[P_N] = {0};

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
            if (strlen(names[k]) == nlen && memcmp(names[k], part, nlen) == 0)
                which = k;
        if (which < 0) {
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
                if (strlen(known[k].name) == nlen && memcmp(known[k].name, part, nlen) == 0)
                    return hcp_errf(err, errlen, HCP_EINVAL, "%s", known[k].why);
            return hcp_errf(err, errlen, HCP_EINVAL, "unknown rule part \"%.*s\"",
                            (int)(nlen > 40 ? 40 : nlen), part);
        }
        if (val[which])
            return hcp_errf(err, errlen, HCP_EINVAL, "%s appears more than once", names[which]);
        val[which] = eq + 1;
        vlen[which] = plen - nlen - 1;
        if (vlen[which] == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s has an empty value", names[which]);
        i = j + 1;
        if (j + 1 == len && rrule[j] == ';')
            return hcp_errf(err, errlen, HCP_EINVAL, "the rule ends with ';'");
    }

    if (!val[P_FREQ])
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "FREQ is required (DAILY, WEEKLY, MONTHLY or YEARLY)");
    static const char *const freqs[] = {"DAILY", "WEEKLY", "MONTHLY", "YEARLY"};
    static const char *const subdaily[] = {"HOURLY", "MINUTELY", "SECONDLY"};
    info->freq = -1;
    for (int k = 0; k < 4; k++)
        if (strlen(freqs[k]) == vlen[P_FREQ] && memcmp(freqs[k], val[P_FREQ], vlen[P_FREQ]) == 0)
            info->freq = k;
    if (info->freq < 0) {
        for (int k = 0; k < 3; k++)
            if (strlen(subdaily[k]) == vlen[P_FREQ] &&
                memcmp(subdaily[k], val[P_FREQ], vlen[P_FREQ]) == 0)
                return hcp_errf(err, errlen, HCP_EINVAL,
                            "FREQ=%s is not supported: windows recur at most daily", subdaily[k]);
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "FREQ=%.*s is not one of DAILY, WEEKLY, MONTHLY, YEARLY",
                        (int)(vlen[P_FREQ] > 20 ? 20 : vlen[P_FREQ]), val[P_FREQ]);
    }
    const int monthly_or_yearly = info->freq >= SCHED_FREQ_MONTHLY;

    long nums[MAX_LIST_ITEMS];
    int bad_item;
    size_t bad_len;
    const char *bad_at;
    if (val[P_INTERVAL]) {
        long v;
        if (parse_int(val[P_INTERVAL], vlen[P_INTERVAL], &v) || v < 1 || v > MAX_INTERVAL ||
            val[P_INTERVAL][0] == '+' || val[P_INTERVAL][0] == '-')
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "INTERVAL=%.*s is not a whole number from 1 to %d",
                            (int)(vlen[P_INTERVAL] > 20 ? 20 : vlen[P_INTERVAL]), val[P_INTERVAL],
                            MAX_INTERVAL);
    }
    int month_mask = 0x1fff; /* bit m set when month m may be selected */
    if (val[P_BYMONTH]) {
        int n = parse_int_list(val[P_BYMONTH], vlen[P_BYMONTH], 12, 0, nums, &bad_item, &bad_len,
                               &bad_at);
        if (n < 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYMONTH item %d \"%.*s\" is not a month number 1..12", bad_item + 1,
                            (int)(bad_len > 20 ? 20 : bad_len), bad_at);
        month_mask = 0;
        for (int k = 0; k < n; k++)
            month_mask |= 1 << nums[k];
    }
    int has_bymonthday = 0;
    if (val[P_BYMONTHDAY]) {
        if (info->freq == SCHED_FREQ_WEEKLY)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYMONTHDAY cannot be used with FREQ=WEEKLY (RFC 5545)");
        int n = parse_int_list(val[P_BYMONTHDAY], vlen[P_BYMONTHDAY], 31, 1, nums, &bad_item,
                               &bad_len, &bad_at);
        if (n < 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                        "BYMONTHDAY item %d \"%.*s\" is not a day of the month 1..31 or -31..-1",
                        bad_item + 1, (int)(bad_len > 20 ? 20 : bad_len), bad_at);
        has_bymonthday = 1;
        /* Reject combinations that select no date at all (e.g. February 30):
         * they would otherwise make the expansion search for centuries. */
        int possible = 0;
        for (int m = 1; m <= 12 && !possible; m++) {
            if (!(month_mask & (1 << m)))
                continue;
            int days = m == 2 ? 29 : sched_days_in_month(2001, m);
            for (int k = 0; k < n && !possible; k++)
                if ((nums[k] > 0 ? nums[k] : -nums[k]) <= days)
                    possible = 1;
        }
        if (!possible)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYMONTHDAY and BYMONTH together select no date");
    }
    int has_byday = 0;
    if (val[P_BYDAY]) {
        const char *v = val[P_BYDAY];
        size_t n = vlen[P_BYDAY], k = 0;
        int item = 0;
        while (k <= n) {
            size_t e = k;
            while (e < n && v[e] != ',')
                e++;
            size_t ilen = e - k;
            item++;
            if (item > MAX_LIST_ITEMS || ilen < 2 || weekday_index(v + e - 2, 2) < 0)
                return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYDAY item %d \"%.*s\" is not a weekday (MO, TU, WE, TH, FR, SA, SU "
                            "with an optional ordinal like 1MO or -1FR)",
                            item, (int)(ilen > 20 ? 20 : ilen), v + k);
            if (ilen > 2) {
                long ord;
                long max = info->freq == SCHED_FREQ_YEARLY ? 53 : 5;
                if (!monthly_or_yearly)
                    return hcp_errf(err, errlen, HCP_EINVAL,
                                "BYDAY ordinal \"%.*s\" is only allowed with FREQ=MONTHLY or "
                                "FREQ=YEARLY",
                                (int)ilen, v + k);
                if (parse_int(v + k, ilen - 2, &ord) || ord == 0 || ord > max || ord < -max)
                    return hcp_errf(err, errlen, HCP_EINVAL,
                                "BYDAY item %d \"%.*s\" has an ordinal outside 1..%ld / -%ld..-1",
                                item, (int)(ilen > 20 ? 20 : ilen), v + k, max, max);
            }
            k = e + 1;
        }
        has_byday = 1;
    }
    if (val[P_BYSETPOS]) {
        if (!monthly_or_yearly)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYSETPOS is only allowed with FREQ=MONTHLY or FREQ=YEARLY");
        if (!has_byday && !has_bymonthday && !val[P_BYMONTH])
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYSETPOS needs another BYxxx part to select from");
        int n = parse_int_list(val[P_BYSETPOS], vlen[P_BYSETPOS], 366, 1, nums, &bad_item,
                               &bad_len, &bad_at);
        if (n < 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "BYSETPOS item %d \"%.*s\" is not within 1..366 or -366..-1",
                            bad_item + 1, (int)(bad_len > 20 ? 20 : bad_len), bad_at);
    }
    if (val[P_WKST] && weekday_index(val[P_WKST], vlen[P_WKST]) < 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "WKST=%.*s is not a weekday (MO..SU)",
                    (int)(vlen[P_WKST] > 20 ? 20 : vlen[P_WKST]), val[P_WKST]);
    if (val[P_UNTIL] && parse_until(val[P_UNTIL], vlen[P_UNTIL], &info->until))
        return hcp_errf(err, errlen, HCP_EINVAL,
                    "UNTIL=%.*s is not a date (YYYYMMDD) or date-time (YYYYMMDDTHHMMSS[Z]) "
                    "from 1970 on",
                    (int)(vlen[P_UNTIL] > 20 ? 20 : vlen[P_UNTIL]), val[P_UNTIL]);

    /* The rule handed to libical: everything but UNTIL, which the engine
     * applies itself against the real window start (startTime, time zone).
     * For weekly rules the engine also counts the INTERVAL weeks itself:
     * libical 3.0 miscounts them when the only BYDAY is the last day of the
     * week (FREQ=WEEKLY;INTERVAL=2;BYDAY=SU starts a week late). */
    info->week_interval = 1;
    info->wkst = 0;
    if (info->freq == SCHED_FREQ_WEEKLY) {
        long v;
        if (val[P_INTERVAL] && parse_int(val[P_INTERVAL], vlen[P_INTERVAL], &v) == 0)
            info->week_interval = (int)v;
        if (val[P_WKST])
            info->wkst = weekday_index(val[P_WKST], vlen[P_WKST]);
    }
    /* The two shapes the structured Daily and Weekly recurrences translate
     * to are simple enough to expand by arithmetic. */
    if (info->freq == SCHED_FREQ_DAILY && !val[P_BYDAY] && !val[P_BYMONTH] &&
        !val[P_BYMONTHDAY]) {
        long v = 1;
        if (val[P_INTERVAL])
            parse_int(val[P_INTERVAL], vlen[P_INTERVAL], &v);
        info->day_interval = (int)v;
    }
    if (info->freq == SCHED_FREQ_WEEKLY && val[P_BYDAY] && !val[P_BYMONTH]) {
        for (size_t k = 0; k + 2 <= vlen[P_BYDAY]; k += 3)
            info->weekday_mask |= 1 << weekday_index(val[P_BYDAY] + k, 2);
    }
    size_t out = 0;
    for (int k = 0; k < P_N; k++) {
        if (!val[k] || k == P_UNTIL)
            continue;
        if (info->freq == SCHED_FREQ_WEEKLY && (k == P_INTERVAL || k == P_WKST))
            continue;
        int w = snprintf(info->libical_rule + out, sizeof(info->libical_rule) - out, "%s%s=%.*s",
                         out ? ";" : "", names[k], (int)vlen[k], val[k]);
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

int sched_rrule_check(const char *rrule, char *err, size_t errlen)
{
    sched_rrule_info_t info;
    return sched_rrule_parse(rrule, &info, err, errlen);
}
