/* libFuzzer target for the schedule module's parsers of untrusted text:
 * the rrule gate (sched_rrule_check), and for accepted rules, compiling them
 * and querying the result; and the RFC 3339 timestamp parser.
 *
 * The input bytes are used as a NUL-terminated string. The first byte also
 * picks a time zone, a start time and a duration so that accepted rules are
 * exercised with DST zones. No crash, leak or hang is acceptable.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *zones[] = {"UTC", "Europe/Zurich", "America/New_York", "Australia/Lord_Howe",
                              "Pacific/Chatham", "Asia/Kolkata", "America/Sao_Paulo", ""};

static void query(sched_t *s, sched_time_t t)
{
    sched_interval_t iv;
    sched_time_t when;
    sched_set_t out;
    (void)sched_permitted(s, t);
    (void)sched_containing(s, t, &iv);
    if (sched_next(s, t, &iv) == 1 && iv.end != SCHED_POS_INF)
        (void)sched_next(s, iv.end, &iv);
    (void)sched_prev(s, t, &iv);
    (void)sched_next_transition(s, t, &when);
    (void)sched_prev_transition(s, t, &when);
    sched_set_init(&out);
    (void)sched_between(s, t, t + 40 * 86400, &out);
    sched_set_free(&out);
    (void)sched_exclusion_reason(s, t);
    (void)sched_exclusion_at(s, t, &when);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *str = malloc(size + 1);
    if (!str)
        return 0;
    memcpy(str, data, size);
    str[size] = '\0';

    sched_time_t t;
    if (sched_parse_rfc3339(str, &t) == 0) {
        char buf[64];
        if (t >= 0 && t < (sched_time_t)253402300800)
            sched_format_utc(t, buf, sizeof buf);
    }

    char err[256];
    if (sched_rrule_check(str, err, sizeof err) == 0) {
        uint8_t k = size > 0 ? data[0] : 0;
        sched_exclusion_t ex = {20460 + (k & 7), 20462 + (k & 15), "fuzz"};
        sched_spec_t spec = {
            .time_zone = zones[k % (sizeof zones / sizeof zones[0])],
            .rrule = str,
            .start_minute = (k * 37) % 1440,
            .duration = (k & 1) ? 0 : (int32_t)((k % 60) + 1) * 3600,
            .exclusions = &ex,
            .n_exclusions = (k & 2) ? 1 : 0,
        };
        sched_t *s = NULL;
        const sched_time_t now = 1767398400; /* 2026-01-03T00:00:00Z */
        if (sched_compile(&spec, now, &s, err, sizeof err) == 0) {
            query(s, now);
            query(s, now + 2 * 365 * 86400 + k * 3600);
            sched_t *sat = NULL;
            sched_spec_t wk = {.rrule = "FREQ=WEEKLY;BYDAY=SA"};
            if (sched_compile(&wk, now, &sat, err, sizeof err) == 0) {
                sched_t *both = sched_and(s, sat);
                sched_t *either = sched_or(s, sat);
                if (both)
                    query(both, now);
                if (either)
                    query(either, now);
                sched_unref(both);
                sched_unref(either);
                sched_unref(sat);
            }
            sched_unref(s);
        }
    }
    free(str);
    return 0;
}
