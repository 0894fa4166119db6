/* libFuzzer target: the policy parser and the rrule gate.
 *
 * The input is used twice: as a C string for sched_rrule_check(), and as
 * JSON for policy_parse(). A policy that parses is then queried the way the
 * controller and the status writer use it, so that the compiled schedule is
 * exercised too. No crash, leak, hang or sanitizer report is acceptable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "policy/behavior.h"
#include "policy/policy.h"
#include "schedule/schedule.h"

#define NOW ((sched_time_t)1767225600) /* 2026-01-01T00:00:00Z */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void query(sched_t *s)
{
    static const sched_time_t at[] = {NOW, NOW + 86399, NOW - 3 * 86400 + 1234,
                                      NOW + 400 * 86400, 0};
    sched_interval_t iv;
    sched_time_t when;
    sched_set_t set;
    size_t i;

    sched_set_init(&set);
    for (i = 0; i < sizeof at / sizeof at[0]; i++) {
        (void)sched_permitted(s, at[i]);
        (void)sched_containing(s, at[i], &iv);
        (void)sched_next(s, at[i], &iv);
        (void)sched_prev(s, at[i], &iv);
        (void)sched_prev_transition(s, at[i], &when);
        (void)sched_next_transition(s, at[i], &when);
        (void)sched_exclusion_reason(s, at[i]);
    }
    (void)sched_between(s, NOW, NOW + 62 * 86400, &set);
    sched_set_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[POLICY_ERRLEN];
    json_error_t je;
    json_t *doc, *st = NULL, *st2 = NULL;
    policy_t *p = NULL;
    char *s;

    /* the rrule gate sees the raw bytes as a string */
    s = malloc(size + 1);
    if (s == NULL)
        return 0;
    memcpy(s, data, size);
    s[size] = '\0';
    (void)sched_rrule_check(s, err, sizeof err);
    free(s);

    doc = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
    if (doc == NULL)
        return 0;
    if (policy_parse(doc, NOW, &p, err, sizeof err) != HCP_ENOMEM && p != NULL) {
        if (p->valid) {
            sched_t *sc = policy_schedule(p);
            if (sc != NULL) {
                query(sc);
                sched_unref(sc);
            }
            /* each kind of change's timeline of a policy with scoped exclusions */
            for (int c = 0; p->scoped && c < POLICY_NCHANGES; c++) {
                sc = policy_schedule_for(p, (policy_change_t)c);
                if (sc != NULL) {
                    query(sc);
                    sched_unref(sc);
                }
            }
        }
        /* the status writer, fed its own previous output */
        if (behavior_status(p, NOW, NULL, &st) == 0 &&
            behavior_status(p, NOW + 3 * 86400, st, &st2) == 0)
            json_decref(st2);
        json_decref(st);
        policy_free(p);
    }
    json_decref(doc);
    return 0;
}
