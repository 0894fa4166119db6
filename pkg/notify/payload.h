/* notify payload: one notification's body (DESIGN.md 3.9).
 *
 * A notification is about one object, one step and one window, and for
 * held, window-soon and initiated one request: the id is derived from
 * (object uid, step, window start, lead, the request's recorded time when
 * there is one) alone, so that a receiver (and a controller after a
 * restart) recognises a notification sent again as the same one, and a
 * second request held for the same window as another. Two forms: CloudEvents 1.0 in structured mode
 * (application/cloudevents+json: the attributes and `data` in one JSON
 * document) and a Slack-compatible {"text": ...}. Pure.
 */
#ifndef HCP_NOTIFY_PAYLOAD_H
#define HCP_NOTIFY_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>

#include "notify/config.h"
#include "schedule/schedule.h"

typedef enum notify_step {
    NOTIFY_HELD,             /* a change held (what, until when) */
    NOTIFY_WINDOW_SOON,      /* a window opens within a lead, a change pending */
    NOTIFY_INITIATED,        /* a held change let through */
    NOTIFY_COMPLETED,        /* HyperShift reports the change completed */
    NOTIFY_FAILED,           /* HyperShift reports the change failed */
    NOTIFY_GATE_SKIPPED,     /* the health gate kept a change held in a window */
    NOTIFY_OVERRIDE_SET,     /* an override set or changed */
    NOTIFY_OVERRIDE_EXPIRED, /* an override's time passed */
    NOTIFY_WITHDRAWN,        /* a held request withdrawn (DESIGN.md 3.13) */
    NOTIFY_RELEASE_WITHDRAWN, /* a held release no longer recommended kept held in a window */
    NOTIFY_UNHEALTHY_AFTER_CHANGE, /* a completed change found unhealthy after it
                                      (decide/after.h) */
    NOTIFY_HOLD_AGING,       /* a change held for longer than the guard rails'
                                holdAgeWarning (decide/aging.h), then weekly */
    NOTIFY_POST_CHANGE,      /* not a notification: the health after a completed change,
                                healthy or not, to the checks that ask for it (check/check.h) */
    NOTIFY_PRE_START,        /* not a notification: the question to the pre-start checks
                                (check/check.h), a held change about to be let through */
    NOTIFY_SOAK_WAITING,     /* a held release waits for the waves before it to soak
                                (decide/wave.h), until when */
    NOTIFY_WAVE_HALTED,      /* a held release is halted by an unhealthy cluster of an
                                earlier wave */
    NOTIFY_WAVE_RESUMED,     /* that halt is over */
    NOTIFY_STEP_COUNT
} notify_step_t;

typedef struct notify_event {
    notify_step_t step;
    const char *kind;        /* "HostedCluster" or "NodePool" */
    const char *ns, *name, *uid;
    sched_time_t window;     /* the window (its start) the step belongs to; the
                                id's third part; SCHED_NEG_INF when none */
    sched_time_t at;         /* when the step happened */
    const char *change;      /* what changes ("release 4.17.1"), or NULL */
    sched_time_t until;      /* held until / window opens at / override ends;
                                SCHED_POS_INF when not known */
    sched_time_t lead;       /* NOTIFY_WINDOW_SOON: the lead (seconds) */
    sched_time_t request;    /* held, window-soon, initiated, hold-aging: when the
                                request was recorded (part of the id); SCHED_NEG_INF
                                none */
    sched_time_t superseded; /* NOTIFY_INITIATED: the lead of a window-soon not told
                                as the window opened first (data.supersedes); 0 none */
    bool superseded_held;    /* NOTIFY_INITIATED: the held step was not told for
                                this request either (data.supersedes "held") */
    const char *detail;      /* a sentence more (why, who), or NULL */
    const char *verdict;     /* NOTIFY_POST_CHANGE: "Healthy" or "Unhealthy" (data.verdict);
                                NULL otherwise */
} notify_event_t;

/* The step's name in CloudEvents types and data ("held", "window-soon", ...). */
const char *notify_step_name(notify_step_t s);

/* The notification's id: 32 hex digits from (uid, step, window, lead) and
 * the request when known (ev->request not SCHED_NEG_INF; without one the
 * id is the same as before requests were part of it). */
void notify_event_id(const notify_event_t *ev, char *buf, size_t len);

/* The body of ev in format f: a new NUL-terminated string (free()) in
 * *body and its content type (static) in *content_type. Returns 0 or
 * HCP_ENOMEM. */
int notify_payload(const notify_event_t *ev, notify_format_t f, char **body,
                   const char **content_type);

#endif
