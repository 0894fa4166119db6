/* testutil_sched: see testutil_sched.h. */
#include "schedule/testutil_sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Howard Hinnant's days_from_civil, written out independently here. */
int32_t tu_days_from_civil(int year, int month, int day)
{
    int64_t y = (int64_t)year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t mp = (month + 9) % 12;
    int64_t doy = (153 * mp + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return (int32_t)(era * 146097 + doe - 719468);
}

void tu_civil_from_days(int32_t days, int *year, int *month, int *day)
{
    int64_t z = (int64_t)days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    *year = (int)(yoe + era * 400 + (m <= 2));
    *month = (int)m;
    *day = (int)d;
}

int tu_days_in_month(int year, int month)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (month == 2) {
        int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
        return 28 + leap;
    }
    return dim[month - 1];
}

int64_t tu_utc(int year, int month, int day, int hour, int minute, int second)
{
    return (int64_t)tu_days_from_civil(year, month, day) * 86400 + hour * 3600 +
           minute * 60 + second;
}

static int digits(const char *s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

static void bad_literal(const char *lit) __attribute__((noreturn));
static void bad_literal(const char *lit)
{
    fprintf(stderr, "malformed time literal in test table: \"%s\"\n", lit);
    abort();
}

int32_t tu_day(const char *lit)
{
    int y = 0, m = 0, d = 0;
    if (strlen(lit) != 10 || lit[4] != '-' || lit[7] != '-' || digits(lit, 4, &y) ||
        digits(lit + 5, 2, &m) || digits(lit + 8, 2, &d) || m < 1 || m > 12 || d < 1 ||
        d > tu_days_in_month(y, m))
        bad_literal(lit);
    return tu_days_from_civil(y, m, d);
}

int64_t tu_ts(const char *lit)
{
    if (strcmp(lit, "-inf") == 0)
        return INT64_MIN;
    if (strcmp(lit, "+inf") == 0)
        return INT64_MAX;
    size_t len = strlen(lit);
    if (len == 10)
        return (int64_t)tu_day(lit) * 86400;
    char date[11];
    int h = 0, mi = 0, s = 0;
    if (len < 17 || lit[10] != 'T' || lit[13] != ':' || lit[len - 1] != 'Z')
        bad_literal(lit);
    memcpy(date, lit, 10);
    date[10] = '\0';
    if (digits(lit + 11, 2, &h) || digits(lit + 14, 2, &mi) || h > 23 || mi > 59)
        bad_literal(lit);
    if (len == 20) {
        if (lit[16] != ':' || digits(lit + 17, 2, &s) || s > 59)
            bad_literal(lit);
    } else if (len != 17) {
        bad_literal(lit);
    }
    return (int64_t)tu_day(date) * 86400 + h * 3600 + mi * 60 + s;
}

char *tu_fmt(int64_t t, char *buf, size_t buflen)
{
    if (t == INT64_MIN) {
        snprintf(buf, buflen, "-inf");
        return buf;
    }
    if (t == INT64_MAX) {
        snprintf(buf, buflen, "+inf");
        return buf;
    }
    int64_t days = t >= 0 ? t / 86400 : -((-t + 86399) / 86400);
    int64_t sod = t - days * 86400;
    int y, m, d;
    tu_civil_from_days((int32_t)days, &y, &m, &d);
    snprintf(buf, buflen, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, m, d, (int)(sod / 3600),
             (int)(sod / 60 % 60), (int)(sod % 60));
    return buf;
}

uint64_t tu_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t tu_rand_range(uint64_t *state, int64_t lo, int64_t hi)
{
    uint64_t span = (uint64_t)(hi - lo) + 1;
    if (span == 0)
        return (int64_t)tu_rand(state);
    return lo + (int64_t)(tu_rand(state) % span);
}

int tu_chance(uint64_t *state, int percent)
{
    return (int)(tu_rand(state) % 100) < percent;
}

int tu_scale_small(void)
{
    const char *s = getenv("HCP_TEST_SCALE");
    return s != NULL && strcmp(s, "small") == 0;
}

double tu_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

int tu_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

int tu_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)) != NULL; p += strlen(needle))
        n++;
    return n;
}
