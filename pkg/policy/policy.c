#include "policy/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/quote.h"

#define API_VERSION "changemanagement.hypershift.openshift.io/v1alpha1"
#define KIND "HostedChangeManagementPolicy"

#define PATHLEN 256
#define RRULE_MAX 512        /* longest rrule string accepted or produced */
#define TZ_MAX 128           /* longest time zone name accepted */
#define REASON_MAX 1024      /* longest exclusion reason accepted */
#define NAME_MAX_LEN 253     /* Kubernetes object names */
#define EXCLUSIONS_MAX 1000  /* bounds compile and query cost */
/* A window longer than a year is better written as strategy Permissive; the
 * cap also keeps durations far from int32 overflow in the engine. */
#define DURATION_MAX_MIN (8760 * 60)

static const char *const DAY_NAMES[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday"};
static const char *const DAY_CODES[7] = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"};
static const char *const MONTH_NAMES[12] = {"January", "February", "March",     "April",
                                            "May",     "June",     "July",      "August",
                                            "September", "October", "November", "December"};
static const char *const WEEK_NAMES[6] = {"First", "Second", "Third", "Fourth", "Fifth", "Last"};
static const int WEEK_ORDINALS[6] = {1, 2, 3, 4, 5, -1};

/* The path of a field or an element below parent; a path cut off at len
 * still names the place well enough. */
static void join(char *buf, size_t len, const char *parent, const char *key)
{
    if (snprintf(buf, len, "%s.%s", parent, key) < 0)
        buf[0] = '\0';
}

static void join_index(char *buf, size_t len, const char *parent, size_t i)
{
    if (snprintf(buf, len, "%s[%zu]", parent, i) < 0)
        buf[0] = '\0';
}

/* Rejects any key of obj that is not in the NULL-terminated allowed list:
 * a misspelt field must never be ignored silently. */
static int check_fields(const json_t *obj, const char *path, const char *const *allowed,
                        char *err, size_t errlen)
{
    const char *key;
    json_t *val;

    json_object_foreach((json_t *)obj, key, val) {
        size_t i;
        int ok = 0;
        for (i = 0; allowed[i] != NULL; i++) {
            if (strcmp(key, allowed[i]) == 0) {
                ok = 1;
                break;
            }
        }
        if (!ok) {
            char name[QUOTE_BUFLEN], p[PATHLEN];
            quote_name(key, name, sizeof name);
            join(p, sizeof p, path, name);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: unknown field", p);
        }
    }
    return 0;
}

/* Looks up key in obj. Returns 1 with *out set when present and not null, 0
 * when absent or null, or HCP_EINVAL when it has a type other than want
 * (JSON_INTEGER also rejects reals). */
static int get(const json_t *obj, const char *key, json_type want, const char *path,
               json_t **out, char *err, size_t errlen)
{
    char p[PATHLEN];
    json_t *v = json_object_get(obj, key);

    *out = NULL;
    if (v == NULL || json_is_null(v))
        return 0;
    if (json_typeof(v) != want) {
        const char *w = want == JSON_OBJECT   ? "an object"
                        : want == JSON_ARRAY  ? "an array"
                        : want == JSON_STRING ? "a string"
                                              : "an integer";
        join(p, sizeof p, path, key);
        if (want == JSON_INTEGER && json_is_real(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an integer, not %g", p,
                            json_real_value(v));
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be %s, not %s", p, w,
                        quote_json_type(v));
    }
    *out = v;
    return 1;
}

static int required(const json_t *obj, const char *key, json_type want, const char *path,
                    json_t **out, char *err, size_t errlen)
{
    char p[PATHLEN];
    int rc = get(obj, key, want, path, out, err, errlen);

    if (rc == 0) {
        join(p, sizeof p, path, key);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required field is missing", p);
    }
    return rc < 0 ? rc : 0;
}

/* Strings given to the engine are C strings: an embedded NUL would make the
 * engine see something other than what was validated. */
static int check_string(const json_t *v, const char *path, size_t max, char *err,
                        size_t errlen)
{
    size_t len = json_string_length(v);

    if (strlen(json_string_value(v)) != len)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not contain NUL characters", path);
    if (len > max)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: is longer than %zu characters", path, max);
    return 0;
}

/* Index of s in names[0..n), or -1. */
static int lookup(const char *s, const char *const *names, int n)
{
    int i;

    for (i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

/* An integer field with an inclusive range and a default. */
static int get_int(const json_t *obj, const char *key, const char *path, long lo, long hi,
                   long dflt, long *out, char *err, size_t errlen)
{
    char p[PATHLEN];
    json_t *v;
    int rc = get(obj, key, JSON_INTEGER, path, &v, err, errlen);

    if (rc < 0)
        return rc;
    if (rc == 0) {
        *out = dflt;
        return 0;
    }
    if (json_integer_value(v) < lo || json_integer_value(v) > hi) {
        join(p, sizeof p, path, key);
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: %" JSON_INTEGER_FORMAT " is out of range %ld..%ld", p,
                        json_integer_value(v), lo, hi);
    }
    *out = (long)json_integer_value(v);
    return 0;
}

/* A required string field whose value must be one of names; *idx gets its
 * index. `what` completes "is not ..." in the message. */
static int get_enum(const json_t *obj, const char *key, const char *path,
                    const char *const *names, int n, const char *what, int *idx, char *err,
                    size_t errlen)
{
    char p[PATHLEN], q[QUOTE_BUFLEN];
    json_t *v;
    int rc = required(obj, key, JSON_STRING, path, &v, err, errlen);

    if (rc < 0)
        return rc;
    join(p, sizeof p, path, key);
    *idx = lookup(json_string_value(v), names, n);
    if (*idx < 0 || strlen(json_string_value(v)) != json_string_length(v)) {
        quote_string(json_string_value(v), q, sizeof q);
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", p, q, what);
    }
    return 0;
}

/* ---- small grammars --------------------------------------------------- */

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* "HH:MM", 00:00..23:59, exactly five characters. */
static int parse_hhmm(const char *s, int *minute)
{
    int h, m;

    if (strlen(s) != 5 || !is_digit(s[0]) || !is_digit(s[1]) || s[2] != ':' ||
        !is_digit(s[3]) || !is_digit(s[4]))
        return -1;
    h = (s[0] - '0') * 10 + (s[1] - '0');
    m = (s[3] - '0') * 10 + (s[4] - '0');
    if (h > 23 || m > 59)
        return -1;
    *minute = h * 60 + m;
    return 0;
}

/* "8h", "90m", "1h30m": an hours part and/or a minutes part, in that order,
 * each 1..6 digits. Stores total minutes (may be 0; the caller checks). */
static int parse_duration(const char *s, long *minutes)
{
    long total = 0;
    int seen_h = 0, seen_m = 0;
    const char *p = s;

    if (*p == '\0')
        return -1;
    while (*p != '\0') {
        char digits[8];
        size_t n = 0;
        char *end;
        long v;

        while (is_digit(p[n]))
            n++;
        if (n == 0 || n > 6)
            return -1;
        memcpy(digits, p, n);
        digits[n] = '\0';
        errno = 0;
        v = strtol(digits, &end, 10);
        if (errno != 0 || *end != '\0')
            return -1;
        p += n;
        if (*p == 'h' && !seen_h && !seen_m) {
            seen_h = 1;
            total += v * 60;
        } else if (*p == 'm' && !seen_m) {
            seen_m = 1;
            total += v;
        } else {
            return -1;
        }
        p++;
    }
    *minutes = total;
    return 0;
}

static int days_in_month(int y, int m)
{
    static const int dim[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

    return m == 2 && leap ? 29 : dim[m - 1];
}

/* "YYYY-MM-DD", a real calendar date in 1970..9999. */
static int parse_date(const char *s, int32_t *day)
{
    int y, m, d, i;

    if (strlen(s) != 10 || s[4] != '-' || s[7] != '-')
        return -1;
    for (i = 0; i < 10; i++)
        if (i != 4 && i != 7 && !is_digit(s[i]))
            return -1;
    y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
    m = (s[5] - '0') * 10 + (s[6] - '0');
    d = (s[8] - '0') * 10 + (s[9] - '0');
    if (y < 1970 || m < 1 || m > 12 || d < 1 || d > days_in_month(y, m))
        return -1;
    *day = sched_days_from_civil(y, m, d);
    return 0;
}

/* ---- rrule building ----------------------------------------------------- */

typedef struct rbuf {
    char s[RRULE_MAX]; /* the rule being built */
    size_t len;        /* bytes used */
    int overflow;      /* set when something did not fit */
} rbuf_t;

__attribute__((format(printf, 2, 3))) static void rb_add(rbuf_t *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (b->overflow)
        return;
    va_start(ap, fmt);
    n = vsnprintf(b->s + b->len, sizeof b->s - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof b->s - b->len) {
        b->overflow = 1;
        return;
    }
    b->len += (size_t)n;
}

/* daysOfWeek: non-empty, distinct day names, appended as BYDAY codes. */
static int days_of_week(const json_t *arr, const char *path, rbuf_t *b, char *err,
                        size_t errlen)
{
    char p[PATHLEN], q[QUOTE_BUFLEN];
    unsigned seen = 0;
    size_t i;
    json_t *v;

    if (json_array_size(arr) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must list at least one day", path);
    rb_add(b, ";BYDAY=");
    json_array_foreach((json_t *)arr, i, v) {
        int d;
        join_index(p, sizeof p, path, i);
        if (!json_is_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", p,
                            quote_json_type(v));
        d = lookup(json_string_value(v), DAY_NAMES, 7);
        if (d < 0 || strlen(json_string_value(v)) != json_string_length(v)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s: %s is not a day of the week (Monday..Sunday)", p, q);
        }
        if (seen & (1u << d))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: \"%s\" is listed twice", p, DAY_NAMES[d]);
        seen |= 1u << d;
        rb_add(b, "%s%s", i ? "," : "", DAY_CODES[d]);
    }
    return 0;
}

/* datesOfMonth: non-empty, distinct integers 1..31, appended as BYMONTHDAY. */
static int dates_of_month(const json_t *arr, const char *path, rbuf_t *b, char *err,
                          size_t errlen)
{
    char p[PATHLEN];
    uint64_t seen = 0;
    size_t i;
    json_t *v;

    if (json_array_size(arr) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must list at least one date", path);
    rb_add(b, ";BYMONTHDAY=");
    json_array_foreach((json_t *)arr, i, v) {
        json_int_t d;
        join_index(p, sizeof p, path, i);
        if (json_is_real(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an integer, not %g", p,
                            json_real_value(v));
        if (!json_is_integer(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an integer, not %s", p,
                            quote_json_type(v));
        d = json_integer_value(v);
        if (d < 1 || d > 31)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s: %" JSON_INTEGER_FORMAT " is out of range 1..31", p, d);
        if (seen & ((uint64_t)1 << d))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %" JSON_INTEGER_FORMAT " is listed twice",
                            p, d);
        seen |= (uint64_t)1 << d;
        rb_add(b, "%s%d", i ? "," : "", (int)d);
    }
    return 0;
}

/* days: non-empty, distinct {weekOfMonth, dayOfWeek} pairs, appended as
 * ordinal BYDAY entries (First => 1MO, Last => -1MO). */
static int week_days(const json_t *arr, const char *path, rbuf_t *b, char *err,
                     size_t errlen)
{
    static const char *const fields[] = {"weekOfMonth", "dayOfWeek", NULL};
    char p[PATHLEN];
    unsigned seen[6] = {0};
    size_t i;
    json_t *v;
    int rc;

    if (json_array_size(arr) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must list at least one day", path);
    rb_add(b, ";BYDAY=");
    json_array_foreach((json_t *)arr, i, v) {
        int w, d;
        join_index(p, sizeof p, path, i);
        if (!json_is_object(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", p,
                            quote_json_type(v));
        if ((rc = check_fields(v, p, fields, err, errlen)) < 0)
            return rc;
        if ((rc = get_enum(v, "weekOfMonth", p, WEEK_NAMES, 6,
                           "one of First, Second, Third, Fourth, Fifth, Last", &w, err,
                           errlen)) < 0)
            return rc;
        if ((rc = get_enum(v, "dayOfWeek", p, DAY_NAMES, 7,
                           "a day of the week (Monday..Sunday)", &d, err, errlen)) < 0)
            return rc;
        if (seen[w] & (1u << d))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s %s is listed twice", p, WEEK_NAMES[w],
                            DAY_NAMES[d]);
        seen[w] |= 1u << d;
        rb_add(b, "%s%d%s", i ? "," : "", WEEK_ORDINALS[w], DAY_CODES[d]);
    }
    return 0;
}

static const char *const FREQ_NAMES[4] = {"Daily", "Weekly", "Monthly", "Yearly"};
static const char *const FREQ_KEYS[4] = {"daily", "weekly", "monthly", "yearly"};

/* The `monthly` / `yearly` sub-object: by Day|Date with its matching
 * sub-object. Monthly takes an interval, yearly a month. */
static int by_day_or_date(const json_t *obj, const char *path, int yearly, rbuf_t *b,
                          char *err, size_t errlen)
{
    static const char *const fields[] = {"by", "date", "day", NULL};
    static const char *const monthly_date[] = {"datesOfMonth", "interval", NULL};
    static const char *const monthly_day[] = {"days", "interval", NULL};
    static const char *const yearly_date[] = {"datesOfMonth", "month", NULL};
    static const char *const yearly_day[] = {"days", "month", NULL};
    static const char *const BY_NAMES[2] = {"Day", "Date"};
    char p[PATHLEN], lp[PATHLEN];
    json_t *sub, *other, *list;
    int by, rc, month;
    long interval;

    if ((rc = check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = get_enum(obj, "by", path, BY_NAMES, 2, "one of Day, Date", &by, err, errlen)) < 0)
        return rc;
    if ((rc = get(obj, by ? "day" : "date", JSON_OBJECT, path, &other, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        join(p, sizeof p, path, by ? "day" : "date");
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: not allowed when by is %s", p, BY_NAMES[by]);
    }
    if ((rc = get(obj, by ? "date" : "day", JSON_OBJECT, path, &sub, err, errlen)) < 0)
        return rc;
    join(p, sizeof p, path, by ? "date" : "day");
    if (rc == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required when by is %s", p, BY_NAMES[by]);
    if ((rc = check_fields(sub, p,
                           yearly ? (by ? yearly_date : yearly_day)
                                  : (by ? monthly_date : monthly_day),
                           err, errlen)) < 0)
        return rc;
    if ((rc = required(sub, by ? "datesOfMonth" : "days", JSON_ARRAY, p, &list, err,
                       errlen)) < 0)
        return rc;
    if (yearly) {
        if ((rc = get_enum(sub, "month", p, MONTH_NAMES, 12, "a month (January..December)",
                           &month, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=YEARLY;BYMONTH=%d", month + 1);
    } else {
        if ((rc = get_int(sub, "interval", p, 1, 11, 1, &interval, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=MONTHLY;INTERVAL=%ld", interval);
    }
    join(lp, sizeof lp, p, by ? "datesOfMonth" : "days");
    return by ? dates_of_month(list, lp, b, err, errlen) : week_days(list, lp, b, err, errlen);
}

/* Translates permit.recurrence into the rrule subset of DESIGN.md 3.2. */
static int recurrence(const json_t *rec, const char *path, rbuf_t *b, char *err,
                      size_t errlen)
{
    static const char *const fields[] = {"frequency", "daily", "weekly", "monthly", "yearly",
                                         NULL};
    static const char *const daily_fields[] = {"interval", NULL};
    static const char *const weekly_fields[] = {"daysOfWeek", "interval", NULL};
    char p[PATHLEN], lp[PATHLEN];
    json_t *sub = NULL, *list;
    int freq, rc, i;
    long interval;

    if ((rc = check_fields(rec, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = get_enum(rec, "frequency", path, FREQ_NAMES, 4,
                       "one of Daily, Weekly, Monthly, Yearly", &freq, err, errlen)) < 0)
        return rc;
    for (i = 0; i < 4; i++) {
        json_t *v;
        if ((rc = get(rec, FREQ_KEYS[i], JSON_OBJECT, path, &v, err, errlen)) < 0)
            return rc;
        join(p, sizeof p, path, FREQ_KEYS[i]);
        if (i != freq && rc > 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: not allowed when frequency is %s", p,
                            FREQ_NAMES[freq]);
        if (i == freq)
            sub = v;
    }
    join(p, sizeof p, path, FREQ_KEYS[freq]);
    if (sub == NULL && freq != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required when frequency is %s", p,
                        FREQ_NAMES[freq]);
    switch (freq) {
    case 0: /* Daily: the sub-object only carries the interval */
        interval = 1;
        if (sub != NULL) {
            if ((rc = check_fields(sub, p, daily_fields, err, errlen)) < 0)
                return rc;
            if ((rc = get_int(sub, "interval", p, 1, 730, 1, &interval, err, errlen)) < 0)
                return rc;
        }
        rb_add(b, "FREQ=DAILY;INTERVAL=%ld", interval);
        return 0;
    case 1:
        if ((rc = check_fields(sub, p, weekly_fields, err, errlen)) < 0)
            return rc;
        if ((rc = required(sub, "daysOfWeek", JSON_ARRAY, p, &list, err, errlen)) < 0)
            return rc;
        if ((rc = get_int(sub, "interval", p, 1, 26, 1, &interval, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=WEEKLY;INTERVAL=%ld", interval);
        join(lp, sizeof lp, p, "daysOfWeek");
        if ((rc = days_of_week(list, lp, b, err, errlen)) < 0)
            return rc;
        rb_add(b, ";WKST=MO");
        return 0;
    default:
        return by_day_or_date(sub, p, freq == 3, b, err, errlen);
    }
}

/* ---- spec sections ------------------------------------------------------ */

static int permit(const json_t *obj, const char *path, policy_t *p, char *err, size_t errlen)
{
    static const char *const fields[] = {"recurrence", "rrule", "startTime", "duration", NULL};
    char fp[PATHLEN], q[QUOTE_BUFLEN], msg[POLICY_ERRLEN];
    json_t *rec, *rule, *v;
    rbuf_t b;
    int rc;
    long minutes;

    memset(&b, 0, sizeof b);
    if ((rc = check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = get(obj, "recurrence", JSON_OBJECT, path, &rec, err, errlen)) < 0)
        return rc;
    if ((rc = get(obj, "rrule", JSON_STRING, path, &rule, err, errlen)) < 0)
        return rc;
    if (rec != NULL && rule != NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: recurrence and rrule are mutually exclusive",
                        path);
    if (rec == NULL && rule == NULL)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: one of recurrence or rrule is required",
                        path);
    if (rec != NULL) {
        join(fp, sizeof fp, path, "recurrence");
        if ((rc = recurrence(rec, fp, &b, err, errlen)) < 0)
            return rc;
        if (b.overflow)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s: translates to a rule longer than %d characters", fp,
                            RRULE_MAX - 1);
        /* The translation is ours; the gate still checks it so that the
         * engine never sees a rule it does not support. */
        if (sched_rrule_check(b.s, msg, sizeof msg) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: translates to %s, which is rejected: %s",
                            fp, b.s, msg);
    } else {
        join(fp, sizeof fp, path, "rrule");
        if ((rc = check_string(rule, fp, RRULE_MAX - 1, err, errlen)) < 0)
            return rc;
        if (json_string_length(rule) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be empty", fp);
        msg[0] = '\0';
        if (sched_rrule_check(json_string_value(rule), msg, sizeof msg) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s", fp,
                            msg[0] ? msg : "is not a supported rule");
        memcpy(b.s, json_string_value(rule), json_string_length(rule) + 1);
    }
    p->rrule = strdup(b.s);
    if (p->rrule == NULL)
        return HCP_ENOMEM;

    p->start_minute = 0;
    if ((rc = get(obj, "startTime", JSON_STRING, path, &v, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        join(fp, sizeof fp, path, "startTime");
        if (parse_hhmm(json_string_value(v), &p->start_minute) != 0 ||
            strlen(json_string_value(v)) != json_string_length(v)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a valid HH:MM time", fp, q);
        }
    }

    p->duration = 0;
    if ((rc = get(obj, "duration", JSON_STRING, path, &v, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        join(fp, sizeof fp, path, "duration");
        quote_string(json_string_value(v), q, sizeof q);
        if (parse_duration(json_string_value(v), &minutes) != 0 ||
            strlen(json_string_value(v)) != json_string_length(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: "
                        "%s is not a valid duration (hours and minutes, e.g. 8h, 90m or 1h30m)", fp,
                        q);
        if (minutes <= 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s must be longer than zero", fp, q);
        if (minutes > DURATION_MAX_MIN)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is longer than the maximum of %dh", fp,
                            q, DURATION_MAX_MIN / 60);
        p->duration = (int32_t)(minutes * 60);
    }
    return 0;
}

static int exclusion(const json_t *obj, const char *path, policy_exclusion_t *x, char *err,
                     size_t errlen)
{
    static const char *const fields[] = {"fromDate", "untilDate", "reason", NULL};
    char fp[PATHLEN], q[QUOTE_BUFLEN], q2[QUOTE_BUFLEN];
    json_t *from, *until, *reason;
    int rc;

    if (!json_is_object(obj))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", path,
                        quote_json_type(obj));
    if ((rc = check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = required(obj, "fromDate", JSON_STRING, path, &from, err, errlen)) < 0)
        return rc;
    join(fp, sizeof fp, path, "fromDate");
    quote_string(json_string_value(from), q, sizeof q);
    if (strlen(json_string_value(from)) != json_string_length(from) ||
        parse_date(json_string_value(from), &x->from_day) != 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: %s is not a valid date (YYYY-MM-DD, years 1970..9999)", fp, q);
    if ((rc = get(obj, "untilDate", JSON_STRING, path, &until, err, errlen)) < 0)
        return rc;
    x->until_day = x->from_day + 1;
    if (until != NULL) {
        join(fp, sizeof fp, path, "untilDate");
        quote_string(json_string_value(until), q2, sizeof q2);
        if (strlen(json_string_value(until)) != json_string_length(until) ||
            parse_date(json_string_value(until), &x->until_day) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: "
                        "%s is not a valid date (YYYY-MM-DD, years 1970..9999)", fp, q2);
        if (x->until_day <= x->from_day)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: "
                        "%s must be after fromDate %s (untilDate is exclusive)", fp, q2, q);
    }
    if ((rc = get(obj, "reason", JSON_STRING, path, &reason, err, errlen)) < 0)
        return rc;
    if (reason != NULL) {
        join(fp, sizeof fp, path, "reason");
        if ((rc = check_string(reason, fp, REASON_MAX, err, errlen)) < 0)
            return rc;
    }
    x->reason = strdup(reason != NULL ? json_string_value(reason) : "");
    return x->reason == NULL ? HCP_ENOMEM : 0;
}

static int maintenance_schedule(const json_t *obj, const char *path, policy_t *p, char *err,
                                size_t errlen)
{
    static const char *const fields[] = {"timeZone", "permit", "exclude", NULL};
    char fp[PATHLEN], q[QUOTE_BUFLEN];
    json_t *tz, *perm, *excl, *v;
    size_t i;
    int rc;

    if ((rc = check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = get(obj, "timeZone", JSON_STRING, path, &tz, err, errlen)) < 0)
        return rc;
    if (tz != NULL) {
        int32_t day;
        int sec, off;
        join(fp, sizeof fp, path, "timeZone");
        if ((rc = check_string(tz, fp, TZ_MAX, err, errlen)) < 0)
            return rc;
        quote_string(json_string_value(tz), q, sizeof q);
        if (json_string_length(tz) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be empty (omit it for UTC)", fp);
        if (sched_utc_to_local(json_string_value(tz), 0, &day, &sec, &off) != 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not a known IANA time zone", fp, q);
    }
    free(p->time_zone);
    p->time_zone = strdup(tz != NULL ? json_string_value(tz) : "UTC");
    if (p->time_zone == NULL)
        return HCP_ENOMEM;

    if ((rc = get(obj, "permit", JSON_OBJECT, path, &perm, err, errlen)) < 0)
        return rc;
    if (perm != NULL) {
        p->has_permit = 1;
        join(fp, sizeof fp, path, "permit");
        if ((rc = permit(perm, fp, p, err, errlen)) < 0)
            return rc;
    }

    if ((rc = get(obj, "exclude", JSON_ARRAY, path, &excl, err, errlen)) < 0)
        return rc;
    if (excl == NULL || json_array_size(excl) == 0)
        return 0;
    join(fp, sizeof fp, path, "exclude");
    if (json_array_size(excl) > EXCLUSIONS_MAX)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: has %zu entries; at most %d are supported",
                        fp, json_array_size(excl), EXCLUSIONS_MAX);
    p->exclusions = calloc(json_array_size(excl), sizeof *p->exclusions);
    if (p->exclusions == NULL)
        return HCP_ENOMEM;
    json_array_foreach(excl, i, v) {
        char ip[PATHLEN];
        join_index(ip, sizeof ip, fp, i);
        p->n_exclusions = i + 1; /* so that policy_free() sees the reason */
        if ((rc = exclusion(v, ip, &p->exclusions[i], err, errlen)) < 0)
            return rc;
    }
    return 0;
}

static int metadata(const json_t *doc, policy_t *p, char *err, size_t errlen)
{
    json_t *md, *v;
    int rc;

    md = json_object_get(doc, "metadata");
    if (md == NULL || json_is_null(md))
        return 0;
    if (!json_is_object(md))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", "metadata",
                        quote_json_type(md));
    if ((rc = get(md, "name", JSON_STRING, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if ((rc = check_string(v, "metadata.name", NAME_MAX_LEN, err, errlen)) < 0)
            return rc;
        free(p->name);
        if ((p->name = strdup(json_string_value(v))) == NULL)
            return HCP_ENOMEM;
    }
    if ((rc = get(md, "namespace", JSON_STRING, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if ((rc = check_string(v, "metadata.namespace", NAME_MAX_LEN, err, errlen)) < 0)
            return rc;
        free(p->namespace_);
        if ((p->namespace_ = strdup(json_string_value(v))) == NULL)
            return HCP_ENOMEM;
    }
    if ((rc = get(md, "generation", JSON_INTEGER, "metadata", &v, err, errlen)) < 0)
        return rc;
    if (v != NULL) {
        if (json_integer_value(v) < 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must not be negative",
                            "metadata.generation");
        p->generation = json_integer_value(v);
    }
    return 0;
}

static int document(const json_t *doc, policy_t *p, char *err, size_t errlen)
{
    static const char *const fields[] = {"apiVersion", "kind", "metadata", "spec", "status",
                                         NULL};
    static const char *const spec_fields[] = {"strategy", "maintenanceSchedule", NULL};
    static const char *const STRATEGIES[3] = {"Permissive", "Restrictive",
                                              "MaintenanceSchedule"};
    char q[QUOTE_BUFLEN];
    json_t *v, *spec, *ms;
    int rc, strategy;

    if (!json_is_object(doc))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a JSON object, not %s", "document",
                        quote_json_type(doc));
    if ((rc = metadata(doc, p, err, errlen)) < 0)
        return rc;
    /* Report unknown top-level fields by their own name, not "document.x". */
    {
        const char *key;
        json_t *val;
        json_object_foreach((json_t *)doc, key, val) {
            if (lookup(key, fields, 5) < 0) {
                char name[QUOTE_BUFLEN];
                quote_name(key, name, sizeof name);
                return hcp_errf(err, errlen, HCP_EINVAL, "%s: unknown field", name);
            }
        }
    }
    v = json_object_get(doc, "apiVersion");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", "apiVersion",
                            quote_json_type(v));
        if (strcmp(json_string_value(v), API_VERSION) != 0 ||
            json_string_length(v) != strlen(API_VERSION)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", "apiVersion", q,
                            API_VERSION);
        }
    }
    v = json_object_get(doc, "kind");
    if (v != NULL && !json_is_null(v)) {
        if (!json_is_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", "kind",
                            quote_json_type(v));
        if (strcmp(json_string_value(v), KIND) != 0 || json_string_length(v) != strlen(KIND)) {
            quote_string(json_string_value(v), q, sizeof q);
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: %s is not %s", "kind", q, KIND);
        }
    }
    spec = json_object_get(doc, "spec");
    if (spec == NULL || json_is_null(spec))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required field is missing", "spec");
    if (!json_is_object(spec))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", "spec",
                        quote_json_type(spec));
    if ((rc = check_fields(spec, "spec", spec_fields, err, errlen)) < 0)
        return rc;
    if ((rc = get_enum(spec, "strategy", "spec", STRATEGIES, 3,
                       "one of Permissive, Restrictive, MaintenanceSchedule", &strategy, err,
                       errlen)) < 0)
        return rc;
    p->strategy = (policy_strategy_t)strategy;
    if ((rc = get(spec, "maintenanceSchedule", JSON_OBJECT, "spec", &ms, err, errlen)) < 0)
        return rc;
    if (ms != NULL) {
        p->has_schedule = 1;
        if ((rc = maintenance_schedule(ms, "spec.maintenanceSchedule", p, err, errlen)) < 0)
            return rc;
    }
    return 0;
}

static int compile(policy_t *p, sched_time_t now, char *err, size_t errlen)
{
    char msg[POLICY_ERRLEN];
    sched_exclusion_t *x = NULL;
    sched_spec_t spec;
    sched_t *s = NULL;
    size_t i;
    int rc;

    if (p->strategy != POLICY_MAINTENANCE_SCHEDULE || !p->has_schedule) {
        /* A maintenanceSchedule next to another strategy is validated but
         * has no effect; MaintenanceSchedule without one never permits. */
        p->sched = p->strategy == POLICY_PERMISSIVE ? sched_always() : sched_never();
        return p->sched == NULL ? HCP_ENOMEM : 0;
    }
    if (p->n_exclusions > 0) {
        x = calloc(p->n_exclusions, sizeof *x);
        if (x == NULL)
            return HCP_ENOMEM;
    }
    for (i = 0; i < p->n_exclusions; i++) {
        x[i].from_day = p->exclusions[i].from_day;
        x[i].until_day = p->exclusions[i].until_day;
        x[i].reason = p->exclusions[i].reason;
    }
    memset(&spec, 0, sizeof spec);
    spec.time_zone = p->time_zone;
    spec.rrule = p->has_permit ? p->rrule : NULL;
    spec.start_minute = p->start_minute;
    spec.duration = p->duration;
    spec.exclusions = x;
    spec.n_exclusions = p->n_exclusions;
    msg[0] = '\0';
    rc = sched_compile(&spec, now, &s, msg, sizeof msg);
    if (rc == HCP_ENOMEM) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    if (rc != 0) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "%s: %s", "spec.maintenanceSchedule",
                  msg[0] ? msg : "cannot be compiled");
        goto fail;
    }
    free(x);
    p->sched = s;
    return 0;
fail:
    free(x);
    return rc;
}

int policy_parse(const json_t *doc, sched_time_t now, policy_t **out, char *err,
                 size_t errlen)
{
    char local[POLICY_ERRLEN];
    policy_t *p;
    int rc;

    *out = NULL;
    if (err == NULL || errlen == 0) {
        err = local;
        errlen = sizeof local;
    }
    err[0] = '\0';
    p = calloc(1, sizeof *p);
    if (p == NULL)
        return HCP_ENOMEM;
    p->name = strdup("");
    p->namespace_ = strdup("");
    p->time_zone = strdup("UTC");
    if (p->name == NULL || p->namespace_ == NULL || p->time_zone == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    rc = document(doc, p, err, errlen);
    if (rc == 0)
        rc = compile(p, now, err, errlen);
    if (rc == HCP_ENOMEM)
        goto fail;
    if (rc != 0) {
        /* Invalid: keep the metadata for status, behave as Restrictive. */
        p->valid = 0;
        if (p->sched != NULL)
            sched_unref(p->sched);
        p->sched = sched_never();
        p->message = strdup(err);
        if (p->sched == NULL || p->message == NULL) {
            rc = HCP_ENOMEM;
            goto fail;
        }
        *out = p;
        return HCP_EINVAL;
    }
    p->valid = 1;
    p->message = strdup("");
    if (p->message == NULL) {
        rc = HCP_ENOMEM;
        goto fail;
    }
    *out = p;
    return 0;
fail:
    policy_free(p);
    return rc;
}

void policy_free(policy_t *p)
{
    size_t i;

    if (p == NULL)
        return;
    sched_unref(p->sched);
    for (i = 0; i < p->n_exclusions; i++)
        free(p->exclusions[i].reason);
    free(p->exclusions);
    free(p->rrule);
    free(p->time_zone);
    free(p->message);
    free(p->namespace_);
    free(p->name);
    free(p);
}

sched_t *policy_schedule(const policy_t *p)
{
    if (p == NULL || !p->valid || p->sched == NULL)
        return sched_never();
    return sched_ref(p->sched);
}

const char *policy_strategy_name(policy_strategy_t s)
{
    switch (s) {
    case POLICY_PERMISSIVE: return "Permissive";
    case POLICY_RESTRICTIVE: return "Restrictive";
    case POLICY_MAINTENANCE_SCHEDULE: return "MaintenanceSchedule";
    }
    return "Unknown";
}

int policy_is_hcmp(const json_t *doc)
{
    const json_t *kind = json_object_get(doc, "kind");

    return json_is_object(doc) && json_is_string(kind) &&
           strcmp(json_string_value(kind), KIND) == 0;
}
