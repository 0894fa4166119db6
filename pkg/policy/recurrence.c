/* policy/recurrence.c - the recurrence form of a permit, translated into an
 * rrule (see recurrence.h). */
#include "policy/recurrence.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy/field.h"
#include "policy/quote.h"

static const char *const DAY_NAMES[7] = {"Monday", "Tuesday", "Wednesday", "Thursday",
                                         "Friday", "Saturday", "Sunday"};
static const char *const DAY_CODES[7] = {"MO", "TU", "WE", "TH", "FR", "SA", "SU"};
static const char *const MONTH_NAMES[12] = {"January", "February", "March",     "April",
                                            "May",     "June",     "July",      "August",
                                            "September", "October", "November", "December"};
static const char *const WEEK_NAMES[6] = {"First", "Second", "Third", "Fourth", "Fifth", "Last"};
static const int WEEK_ORDINALS[6] = {1, 2, 3, 4, 5, -1};

typedef struct rbuf {
    char s[POLICY_RRULE_MAX]; /* the rule being built */
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

/* One element of a list field: fills code with its RRULE text and returns
 * its index (0..63, so that a repeat is recognised), or a negative error
 * naming the element's path p. */
typedef int (*list_elem_fn)(const json_t *v, const char *p, char *code, size_t codelen,
                            char *err, size_t errlen);

/* A non-empty list whose elements are `what`, appended as ";by=a,b,...". A
 * repeated element is dropped (normalised), as it selects nothing more. */
static int list_field(const json_t *arr, const char *path, const char *what, const char *by,
                      list_elem_fn elem, rbuf_t *b, char *err, size_t errlen)
{
    char p[POLICY_PATHLEN], code[16];
    uint64_t seen = 0;
    size_t i;
    json_t *v;

    if (json_array_size(arr) == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must list at least one %s", path, what);
    rb_add(b, ";%s=", by);
    json_array_foreach((json_t *)arr, i, v) {
        policy_field_index(p, sizeof p, path, i);
        int k = elem(v, p, code, sizeof code, err, errlen);
        if (k < 0)
            return k;
        if (seen & ((uint64_t)1 << k))
            continue;
        rb_add(b, "%s%s", seen ? "," : "", code);
        seen |= (uint64_t)1 << k;
    }
    return 0;
}

/* daysOfWeek[i]: a day name, as its BYDAY code. */
static int day_of_week(const json_t *v, const char *p, char *code, size_t codelen, char *err,
                       size_t errlen)
{
    char q[QUOTE_BUFLEN];
    int d;

    if (!json_is_string(v))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a string, not %s", p,
                        quote_json_type(v));
    d = policy_field_lookup(json_string_value(v), DAY_NAMES, 7);
    if (d < 0 || strlen(json_string_value(v)) != json_string_length(v)) {
        quote_string(json_string_value(v), q, sizeof q);
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: %s is not a day of the week (Monday..Sunday)", p, q);
    }
    snprintf(code, codelen, "%s", DAY_CODES[d]);
    return d;
}

/* datesOfMonth[i]: an integer 1..31, as a BYMONTHDAY number. */
static int date_of_month(const json_t *v, const char *p, char *code, size_t codelen, char *err,
                         size_t errlen)
{
    json_int_t d;

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
    snprintf(code, codelen, "%d", (int)d);
    return (int)d;
}

/* days[i]: a {weekOfMonth, dayOfWeek} pair, as an ordinal BYDAY entry
 * (First => 1MO, Last => -1MO). */
static int week_day(const json_t *v, const char *p, char *code, size_t codelen, char *err,
                    size_t errlen)
{
    static const char *const fields[] = {"weekOfMonth", "dayOfWeek", NULL};
    int w, d, rc;

    if (!json_is_object(v))
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be an object, not %s", p,
                        quote_json_type(v));
    if ((rc = policy_field_check_fields(v, p, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get_enum(v, "weekOfMonth", p, WEEK_NAMES, 6,
                                    "one of First, Second, Third, Fourth, Fifth, Last", &w, err,
                                    errlen)) < 0)
        return rc;
    if ((rc = policy_field_get_enum(v, "dayOfWeek", p, DAY_NAMES, 7,
                                    "a day of the week (Monday..Sunday)", &d, err, errlen)) < 0)
        return rc;
    snprintf(code, codelen, "%d%s", WEEK_ORDINALS[w], DAY_CODES[d]);
    return w * 7 + d;
}

/* Yearly by Date: at least one listed date exists in the month (February
 * counts its 29th, which leap years have). A rule that can never select a
 * date is a mistake, not a way to write Restrictive: it is refused. */
static int some_date_exists(const json_t *list, int month, const char *path, char *err,
                            size_t errlen)
{
    static const int DAYS[12] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    size_t i;
    json_t *v;

    json_array_foreach((json_t *)list, i, v)
        if (json_integer_value(v) <= DAYS[month])
            return 0;
    return hcp_errf(err, errlen, HCP_EINVAL,
                    "%s: %s has at most %d days, so none of these dates ever occurs", path,
                    MONTH_NAMES[month], DAYS[month]);
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
    char p[POLICY_PATHLEN], lp[POLICY_PATHLEN];
    json_t *sub, *other, *list;
    int by, rc, month = 0;
    long interval;

    if ((rc = policy_field_check_fields(obj, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get_enum(obj, "by", path, BY_NAMES, 2, "one of Day, Date", &by, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get(obj, by ? "day" : "date", JSON_OBJECT, path, &other, err, errlen)) < 0)
        return rc;
    if (rc > 0) {
        policy_field_join(p, sizeof p, path, by ? "day" : "date");
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: not allowed when by is %s", p, BY_NAMES[by]);
    }
    if ((rc = policy_field_get(obj, by ? "date" : "day", JSON_OBJECT, path, &sub, err, errlen)) < 0)
        return rc;
    policy_field_join(p, sizeof p, path, by ? "date" : "day");
    if (rc == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required when by is %s", p, BY_NAMES[by]);
    if ((rc = policy_field_check_fields(sub, p,
                           yearly ? (by ? yearly_date : yearly_day)
                                  : (by ? monthly_date : monthly_day),
                           err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_required(sub, by ? "datesOfMonth" : "days", JSON_ARRAY, p, &list, err,
                       errlen)) < 0)
        return rc;
    if (yearly) {
        if ((rc = policy_field_get_enum(sub, "month", p, MONTH_NAMES, 12, "a month (January..December)",
                           &month, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=YEARLY;BYMONTH=%d", month + 1);
    } else {
        if ((rc = policy_field_get_int(sub, "interval", p, 1, 11, 1, &interval, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=MONTHLY;INTERVAL=%ld", interval);
    }
    policy_field_join(lp, sizeof lp, p, by ? "datesOfMonth" : "days");
    if (!by)
        return list_field(list, lp, "day", "BYDAY", week_day, b, err, errlen);
    if ((rc = list_field(list, lp, "date", "BYMONTHDAY", date_of_month, b, err, errlen)) < 0)
        return rc;
    return yearly ? some_date_exists(list, month, lp, err, errlen) : 0;
}

/* Translates permit.recurrence into the rrule subset of DESIGN.md 3.2. */
static int recurrence(const json_t *rec, const char *path, rbuf_t *b, char *err,
                      size_t errlen)
{
    static const char *const fields[] = {"frequency", "daily", "weekly", "monthly", "yearly",
                                         NULL};
    static const char *const daily_fields[] = {"interval", NULL};
    static const char *const weekly_fields[] = {"daysOfWeek", "interval", NULL};
    char p[POLICY_PATHLEN], lp[POLICY_PATHLEN];
    json_t *sub = NULL, *list;
    int freq, rc, i;
    long interval;

    if ((rc = policy_field_check_fields(rec, path, fields, err, errlen)) < 0)
        return rc;
    if ((rc = policy_field_get_enum(rec, "frequency", path, FREQ_NAMES, 4,
                       "one of Daily, Weekly, Monthly, Yearly", &freq, err, errlen)) < 0)
        return rc;
    for (i = 0; i < 4; i++) {
        json_t *v;
        if ((rc = policy_field_get(rec, FREQ_KEYS[i], JSON_OBJECT, path, &v, err, errlen)) < 0)
            return rc;
        policy_field_join(p, sizeof p, path, FREQ_KEYS[i]);
        if (i != freq && rc > 0)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: not allowed when frequency is %s", p,
                            FREQ_NAMES[freq]);
        if (i == freq)
            sub = v;
    }
    policy_field_join(p, sizeof p, path, FREQ_KEYS[freq]);
    if (sub == NULL && freq != 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "%s: required when frequency is %s", p,
                        FREQ_NAMES[freq]);
    switch (freq) {
    case 0: /* Daily: the sub-object only carries the interval */
        interval = 1;
        if (sub != NULL) {
            if ((rc = policy_field_check_fields(sub, p, daily_fields, err, errlen)) < 0)
                return rc;
            if ((rc = policy_field_get_int(sub, "interval", p, 1, 730, 1, &interval, err, errlen)) < 0)
                return rc;
        }
        rb_add(b, "FREQ=DAILY;INTERVAL=%ld", interval);
        return 0;
    case 1:
        if ((rc = policy_field_check_fields(sub, p, weekly_fields, err, errlen)) < 0)
            return rc;
        if ((rc = policy_field_required(sub, "daysOfWeek", JSON_ARRAY, p, &list, err, errlen)) < 0)
            return rc;
        if ((rc = policy_field_get_int(sub, "interval", p, 1, 26, 1, &interval, err, errlen)) < 0)
            return rc;
        rb_add(b, "FREQ=WEEKLY;INTERVAL=%ld", interval);
        policy_field_join(lp, sizeof lp, p, "daysOfWeek");
        if ((rc = list_field(list, lp, "day", "BYDAY", day_of_week, b, err, errlen)) < 0)
            return rc;
        rb_add(b, ";WKST=MO");
        return 0;
    default:
        return by_day_or_date(sub, p, freq == 3, b, err, errlen);
    }
}

int policy_recurrence_rrule(const json_t *rec, const char *path, char *out, char *err,
                            size_t errlen)
{
    rbuf_t b;
    int rc;

    memset(&b, 0, sizeof b);
    if ((rc = recurrence(rec, path, &b, err, errlen)) < 0)
        return rc;
    if (b.overflow)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: translates to a rule longer than %d characters", path,
                        POLICY_RRULE_MAX - 1);
    memcpy(out, b.s, b.len + 1);
    return 0;
}
