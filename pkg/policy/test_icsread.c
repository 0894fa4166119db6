/* Tests of pkg/policy/icsread: calendars in the shapes Outlook and Google
 * Calendar export (VTIMEZONE definitions, IANA and Windows zone names,
 * all-day events, RRULE with UNTIL and COUNT, EXDATE, instances moved and
 * cancelled by RECURRENCE-ID, RDATE periods), floating times in the policy's
 * zone across a DST change, and what cannot be read: reported with its line,
 * never an exclusion less. Run from the repository's root (the calendars
 * are in pkg/policy/testdata). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "policy/icsread.h"
#include "schedule/testutil_sched.h"

#define NOW "2026-12-01T00:00:00Z"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = malloc(1 << 20);
    if (!f || !buf)
        fail_msg("cannot read %s (run from the repository's root)", path);
    *len = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

/* The spans read, one "start end reason" line each, in the order read. */
static char *spans_text(const icsread_t *r)
{
    size_t cap = 64 + r->n_spans * 300, o = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    s[0] = '\0';
    for (size_t i = 0; i < r->n_spans; i++) {
        char a[32], b[32];
        sched_format_utc(r->spans[i].start, a, sizeof a);
        sched_format_utc(r->spans[i].end, b, sizeof b);
        o += (size_t)snprintf(s + o, cap - o, "%s %s %s\n", a, b, r->reasons[r->spans[i].reason]);
    }
    return s;
}

static void read_text(const char *text, const char *tz, icsread_t *r)
{
    assert_int_equal(icsread_parse(text, strlen(text), tz, tu_ts(NOW), r), 0);
}

static void test_outlook(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp("pkg/policy/testdata/outlook-freezes.ics", &len);
    icsread_t r;
    assert_int_equal(icsread_parse(text, len, "Europe/Berlin", tu_ts(NOW), &r), 0);
    assert_int_equal(r.n_problems, 0);
    /* Four VEVENTs: four exclusions (the moved instance is one of them). */
    assert_int_equal(r.events, 4);
    assert_int_equal(r.n_reasons, 4);
    assert_int_equal(r.cancelled, 0);
    assert_false(r.beyond);
    char *got = spans_text(&r);
    assert_string_equal(got,
        /* all-day, 21 Dec to 4 Jan exclusive, Berlin midnights */
        "2026-12-20T23:00:00Z 2027-01-03T23:00:00Z Year-end freeze\n"
        /* every 3 months on the last day, 17:00 to 09:00 in the VTIMEZONE's
         * "W. Europe Standard Time"; 31 Mar by EXDATE, 30 Jun moved */
        "2026-12-31T16:00:00Z 2027-01-01T08:00:00Z Quarter-end close\n"
        "2027-09-30T15:00:00Z 2027-10-01T07:00:00Z Quarter-end close\n"
        "2027-12-31T16:00:00Z 2028-01-01T08:00:00Z Quarter-end close\n"
        "2027-06-29T15:00:00Z 2027-06-30T10:00:00Z Quarter-end close (moved)\n"
        /* "Pacific Standard Time" */
        "2026-11-27T08:00:00Z 2026-12-01T08:00:00Z Black Friday\n");
    free(got);
    icsread_free(&r);
    free(text);
}

static void test_google(void **state)
{
    (void)state;
    size_t len;
    char *text = slurp("pkg/policy/testdata/google-freezes.ics", &len);
    icsread_t r;
    assert_int_equal(icsread_parse(text, len, "America/New_York", tu_ts(NOW), &r), 0);
    assert_int_equal(r.n_problems, 0);
    /* Five VEVENTs, one of them a cancelled instance: four exclusions. */
    assert_int_equal(r.events, 4);
    assert_int_equal(r.cancelled, 1);
    assert_true(r.beyond); /* Memorial Day recurs every year */
    char *got = spans_text(&r);
    assert_string_equal(got,
        /* FR, COUNT=6 from 4 Dec: 18 Dec moved, 25 Dec by EXDATE, 1 Jan
         * cancelled by its own VEVENT */
        "2026-12-04T23:00:00Z 2026-12-07T11:00:00Z Weekend freeze\n"
        "2026-12-11T23:00:00Z 2026-12-14T11:00:00Z Weekend freeze\n"
        "2027-01-08T23:00:00Z 2027-01-11T11:00:00Z Weekend freeze\n"
        "2026-12-19T01:00:00Z 2026-12-21T11:00:00Z Weekend freeze (late start)\n"
        /* yearly all-day, New York midnights, up to five years ahead */
        "2027-05-25T04:00:00Z 2027-05-26T04:00:00Z Memorial Day\n"
        "2028-05-25T04:00:00Z 2028-05-26T04:00:00Z Memorial Day\n"
        "2029-05-25T04:00:00Z 2029-05-26T04:00:00Z Memorial Day\n"
        "2030-05-25T04:00:00Z 2030-05-26T04:00:00Z Memorial Day\n"
        "2031-05-25T04:00:00Z 2031-05-26T04:00:00Z Memorial Day\n"
        /* UTC, with two RDATE periods (a duration and an end) */
        "2026-12-15T14:00:00Z 2026-12-15T15:00:00Z DB migration, no changes\n"
        "2026-12-16T14:00:00Z 2026-12-16T16:00:00Z DB migration, no changes\n"
        "2026-12-17T14:00:00Z 2026-12-17T14:30:00Z DB migration, no changes\n");
    free(got);
    icsread_free(&r);
    free(text);
}

/* Floating times and dates are the policy's local time: a daily 22:00 for
 * two hours keeps its local hour across the end of summer time. */
static void test_floating_across_dst(void **state)
{
    (void)state;
    icsread_t r;
    read_text("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:f\r\nSUMMARY:nightly\r\n"
              "DTSTART:20271030T220000\r\nDURATION:PT2H\r\nRRULE:FREQ=DAILY;COUNT=2\r\n"
              "END:VEVENT\r\nBEGIN:VEVENT\r\nUID:d\r\nSUMMARY:day\r\n"
              "DTSTART;VALUE=DATE:20270328\r\nDURATION:P1D\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
              "Europe/Berlin", &r);
    assert_int_equal(r.n_problems, 0);
    char *got = spans_text(&r);
    assert_string_equal(got,
                        "2027-10-30T20:00:00Z 2027-10-30T22:00:00Z nightly\n"
                        "2027-10-31T21:00:00Z 2027-10-31T23:00:00Z nightly\n"
                        /* a 23-hour day: the clocks go forward */
                        "2027-03-27T23:00:00Z 2027-03-28T22:00:00Z day\n");
    free(got);
    icsread_free(&r);
}

/* A DURATION's days are calendar days in the event's zone, its hours exact;
 * an event with neither DTEND nor DURATION: an all-day one lasts its day, a
 * timed one excludes nothing (RFC 5545 3.6.1) but is still read. */
static void test_durations(void **state)
{
    (void)state;
    icsread_t r;
    read_text("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:a\n"
              "DTSTART;TZID=Europe/Berlin:20270327T120000\nDURATION:P1DT1H\nEND:VEVENT\n"
              "BEGIN:VEVENT\nSUMMARY:b\nDTSTART;VALUE=DATE:20270101\nEND:VEVENT\n"
              "BEGIN:VEVENT\nSUMMARY:c\nDTSTART:20270101T100000Z\nEND:VEVENT\nEND:VCALENDAR\n",
              "UTC", &r);
    assert_int_equal(r.n_problems, 0);
    assert_int_equal(r.events, 3);
    char *got = spans_text(&r);
    assert_string_equal(got,
                        "2027-03-27T11:00:00Z 2027-03-28T11:00:00Z a\n"
                        "2027-01-01T00:00:00Z 2027-01-02T00:00:00Z b\n");
    free(got);
    icsread_free(&r);
}

/* What cannot be read is told with the line of its VEVENT and never read
 * as less than it says: the event is not an exclusion, and the caller holds
 * (policy/calendars.c). */
static void test_problems(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *says;
    } cases[] = {
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:x\nDTSTART:2026BAD\nEND:VEVENT\nEND:VCALENDAR\n",
         2, "DTSTART"},
        {"BEGIN:VCALENDAR\nVERSION:2.0\n\nBEGIN:VEVENT\nDTSTART;TZID=Mars/Olympus:20261210T100000"
         "\nEND:VEVENT\nEND:VCALENDAR\n", 4, "TZID \"Mars/Olympus\""},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261210T100000Z\nDTEND:20261209T100000Z\n"
         "END:VEVENT\nEND:VCALENDAR\n", 2, "DTEND"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:no start\nEND:VEVENT\nEND:VCALENDAR\n", 2,
         "no DTSTART"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261210T100000Z\nDTEND:20261210T110000Z\n"
         "DURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR\n", 2, "both DTEND and DURATION"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART;VALUE=DATE:20261210\nDTEND:20261211T000000Z\n"
         "END:VEVENT\nEND:VCALENDAR\n", 2, "DTEND is a date-time but DTSTART a date"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261210T100000Z\nDURATION:PT1S\n"
         "RRULE:FREQ=SECONDLY\nEND:VEVENT\nEND:VCALENDAR\n", 2, "more than 20000"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:19601210T100000Z\nEND:VEVENT\nEND:VCALENDAR\n",
         2, "1970 to 2500"},
        {"BEGIN:VCALENDAR\nBEGIN:VEVENT\nDTSTART:20261210T100000Z\nEXDATE;TZID=Nowhere:"
         "20261210T100000\nEND:VEVENT\nEND:VCALENDAR\n", 2, "EXDATE's TZID"},
        {"this is not a calendar\n", 0, "not iCalendar text"},
        {"", 0, "not iCalendar text"},
        {"BEGIN:VEVENT\nDTSTART:20261210T100000Z\nEND:VEVENT\n", 0, "not a VCALENDAR"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        icsread_t r;
        read_text(cases[i].text, "UTC", &r);
        if (r.n_problems == 0)
            fail_msg("case %zu: no problem reported", i);
        if (r.problems[0].line != cases[i].line || !strstr(r.problems[0].message, cases[i].says))
            fail_msg("case %zu: line %d: %s (want line %d, \"%s\")", i, r.problems[0].line,
                     r.problems[0].message, cases[i].line, cases[i].says);
        icsread_free(&r);
    }
}

/* A NUL byte, and text past 1 MiB, are refused whole; bytes that are not
 * UTF-8 in a SUMMARY become '?', so that the reason is valid in JSON. */
static void test_bytes(void **state)
{
    (void)state;
    icsread_t r;
    const char nul[] = "BEGIN:VCALENDAR\nX\0Y\nEND:VCALENDAR\n";
    assert_int_equal(icsread_parse(nul, sizeof nul - 1, "UTC", tu_ts(NOW), &r), 0);
    assert_int_equal(r.n_problems, 1);
    assert_non_null(strstr(r.problems[0].message, "NUL"));
    icsread_free(&r);
    assert_int_equal(icsread_parse(nul, ICSREAD_MAX_TEXT + 1, "UTC", tu_ts(NOW), &r), 0);
    assert_non_null(strstr(r.problems[0].message, "at most"));
    icsread_free(&r);
    read_text("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:caf\xc3\xa9 \xff\xfe end\n"
              "DTSTART:20261210T100000Z\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR\n", "UTC", &r);
    assert_int_equal(r.n_problems, 0);
    assert_string_equal(r.reasons[0], "caf\xc3\xa9 ?? end");
    icsread_free(&r);
}

/* The range read: an occurrence ending before it or starting after it is
 * left out, one across its start is kept; a single event past the range
 * counts as beyond it (the caller holds from there). */
static void test_range(void **state)
{
    (void)state;
    icsread_t r;
    read_text("BEGIN:VCALENDAR\nBEGIN:VEVENT\nSUMMARY:old\nDTSTART:20200101T000000Z\n"
              "DURATION:PT1H\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:long\nDTSTART:20251001T000000Z\n"
              "DTEND:20251101T000000Z\nEND:VEVENT\nBEGIN:VEVENT\nSUMMARY:far\n"
              "DTSTART:20400101T000000Z\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR\n", "UTC", &r);
    assert_int_equal(r.n_problems, 0);
    assert_int_equal(r.events, 3);
    assert_int_equal(r.n_spans, 1);
    assert_string_equal(r.reasons[r.spans[0].reason], "long");
    assert_true(r.beyond);
    icsread_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_outlook),      cmocka_unit_test(test_google),
        cmocka_unit_test(test_floating_across_dst), cmocka_unit_test(test_durations),
        cmocka_unit_test(test_problems),     cmocka_unit_test(test_bytes),
        cmocka_unit_test(test_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
