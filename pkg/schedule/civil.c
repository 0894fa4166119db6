/* civil.c: the proleptic Gregorian calendar, "YYYY-MM-DD" and RFC 3339. */
#include "schedule/civil.h"

#include <stdio.h>

int32_t sched_days_from_civil(int year, int month, int day)
{
    /* Proleptic Gregorian day count (H. Hinnant's algorithm). */
    int y = year - (month <= 2);
    int era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (unsigned)((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1);
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + (int)doe - 719468);
}

void sched_civil_from_days(int32_t days, int *year, int *month, int *day)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    unsigned d = doy - (153 * mp + 2) / 5 + 1;
    unsigned m = mp < 10 ? mp + 3 : mp - 9;
    *year = (int)(y + (m <= 2));
    *month = (int)m;
    *day = (int)d;
}

int sched_days_in_month(int year, int month)
{
    static const int dim[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0))
        return 29;
    return dim[month - 1];
}

int64_t sched_floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

void sched_format_utc(sched_time_t t, char *buf, size_t buflen)
{
    int64_t days = sched_floor_div(t, 86400);
    int64_t sod = t - days * 86400;
    int y, m, d;
    sched_civil_from_days((int32_t)days, &y, &m, &d);
    snprintf(buf, buflen, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d, (int)(sod / 3600),
             (int)(sod / 60 % 60), (int)(sod % 60));
}

/* Reads exactly n decimal digits from *p into *out and advances *p. */
static int digits(const char **p, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        char c = (*p)[i];
        if (c < '0' || c > '9')
            return -1;
        v = v * 10 + (c - '0');
    }
    *p += n;
    *out = v;
    return 0;
}

int sched_parse_date(const char *s, int32_t *day)
{
    int y, m, d;
    const char *p = s;
    if (!s || digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &m) || *p++ != '-' ||
        digits(&p, 2, &d) || *p != '\0')
        return HCP_EINVAL;
    if (y < 1970 || m < 1 || m > 12 || d < 1 || d > sched_days_in_month(y, m))
        return HCP_EINVAL;
    *day = sched_days_from_civil(y, m, d);
    return 0;
}

int sched_parse_rfc3339(const char *s, sched_time_t *t)
{
    int y, mo, d, h, mi, sec;
    const char *p = s;
    if (!s || digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
        digits(&p, 2, &d))
        return HCP_EINVAL;
    if (*p != 'T' && *p != 't' && *p != ' ')
        return HCP_EINVAL;
    p++;
    if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi) || *p++ != ':' ||
        digits(&p, 2, &sec))
        return HCP_EINVAL;
    if (*p == '.') {
        p++;
        if (*p < '0' || *p > '9')
            return HCP_EINVAL;
        while (*p >= '0' && *p <= '9')
            p++;
    }
    int offset = 0;
    if (*p == 'Z' || *p == 'z') {
        p++;
    } else if (*p == '+' || *p == '-') {
        int sign = *p++ == '-' ? -1 : 1, oh, om;
        if (digits(&p, 2, &oh) || *p++ != ':' || digits(&p, 2, &om) || oh > 23 || om > 59)
            return HCP_EINVAL;
        offset = sign * (oh * 3600 + om * 60);
    } else {
        return HCP_EINVAL;
    }
    if (*p != '\0')
        return HCP_EINVAL;
    if (y < 1 || mo < 1 || mo > 12 || d < 1 || d > sched_days_in_month(y, mo) || h > 23 ||
        mi > 59 || sec > 60)
        return HCP_EINVAL;
    if (sec == 60)
        sec = 59; /* a leap second is read as the last second of the minute */
    *t = (sched_time_t)sched_days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
         offset;
    return 0;
}
