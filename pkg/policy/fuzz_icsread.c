/* libFuzzer target: an exclusion calendar's bytes (policy/icsread), read in
 * a zone with DST, then every span and reason touched and a timeline built
 * from them and queried, as a policy does with them. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/icsread.h"

#define NOW ((sched_time_t)1796083200) /* 2026-12-01T00:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    icsread_t r;
    if (icsread_parse((const char *)data, size, "Europe/Berlin", NOW, &r) == 0) {
        size_t n = 0;
        for (size_t i = 0; i < r.n_reasons; i++)
            n += strlen(r.reasons[i]);
        for (size_t i = 0; i < r.n_problems && i < ICSREAD_MAX_PROBLEMS; i++)
            n += strlen(r.problems[i].message);
        sched_t *s = sched_excluding(r.spans, r.n_spans, (const char *const *)r.reasons,
                                     r.n_reasons);
        if (s) {
            sched_interval_t iv;
            (void)sched_next(s, NOW, &iv);
            (void)sched_prev(s, NOW, &iv);
            (void)sched_exclusion_at(s, NOW + 86400, NULL);
            sched_unref(s);
        }
        (void)n;
    }
    icsread_free(&r);
    return 0;
}
