/* notify due: which notifications an object's state calls for (DESIGN.md 3.9).
 *
 * Each step is notified at least once per (object, step, window), and a
 * change held for a window is told per request too: a second request held
 * for the same window (a NodePool asked again while its first change still
 * waits) is told held, window-soon and initiated once more. What is due is
 * derived from the cluster's state, not from the process's memory:
 * the caller hands notify_due() what the object says now (held change, its
 * timeline, HyperShift's outcome, the override) and the marks of what was
 * delivered already, and gets the steps due. A mark is the window (an
 * instant: the window's start, or the completion/override time that names
 * the step's occasion) last delivered per step; the controller keeps them in
 * the object's NOTIFY_MARKS_ANNOTATION, written only after every endpoint
 * took the notification, so that a restarted controller sends what is due
 * and was not delivered, and nothing delivered again within a window.
 *
 * The annotation is for people too: space-separated `step=time` tokens,
 *
 *   held=2026-03-07T00:00:00Z window-soon-1h=2026-03-07T00:00:00Z
 *   initiated=2026-03-07T00:00:00Z completed=2026-03-07T00:20:00Z
 *
 * (window-soon carries its lead: 48h, 90m, 30s). held, window-soon and
 * initiated name the request they were told for after an `@`: the instant
 * the admission webhook recorded the held request at
 * (DECIDE_REQUESTED_AT_ANNOTATION), e.g.
 * `held=2026-03-07T00:00:00Z@2026-03-04T09:12:00Z`; a hold with no record
 * (SCHED_NEG_INF) is told per window alone. Two requests recorded in the
 * same second are one request here. Unknown or malformed
 * tokens are ignored (an older or newer controller's, or a hand edit): at
 * worst a step is notified once more.
 *
 * Everything here is pure.
 */
#ifndef HCP_NOTIFY_DUE_H
#define HCP_NOTIFY_DUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "notify/config.h"
#include "notify/payload.h"
#include "schedule/schedule.h"

#define NOTIFY_MARKS_ANNOTATION "changemanagement.hypershift.openshift.io/notified"
#define NOTIFY_MARKS_LEN 1024 /* the annotation's text, at most */
/* A completion, failure or override older than this (seconds) that no mark
 * ties to a change this controller let through is not news: not notified
 * (a controller seeing a cluster for the first time does not report the
 * past). */
#define NOTIFY_FRESH 600

/* HyperShift's word on the last change (notify_obs_t.outcome). */
typedef enum notify_outcome {
    NOTIFY_OUTCOME_NONE = 0,
    NOTIFY_OUTCOME_COMPLETED,
    NOTIFY_OUTCOME_FAILED,
} notify_outcome_t;

/* What was delivered: per step the window last notified (SCHED_NEG_INF:
 * never) and the request it was told for (SCHED_NEG_INF: none recorded);
 * window-soon per lead (seconds). A mark is later than another when its
 * window is, or its window is the same and its request later. Plain data. */
typedef struct notify_marks {
    sched_time_t at[NOTIFY_STEP_COUNT];
    sched_time_t req[NOTIFY_STEP_COUNT];
    sched_time_t soon_lead[NOTIFY_MAX_LEADS];
    sched_time_t soon_at[NOTIFY_MAX_LEADS];
    sched_time_t soon_req[NOTIFY_MAX_LEADS];
    size_t n_soon;
} notify_marks_t;

/* What the object says now. */
typedef struct notify_obs {
    sched_time_t now;
    bool held;                /* a change is held, waiting for a window */
    sched_time_t request;     /* when the held request was recorded at admission
                                 (DECIDE_REQUESTED_AT_ANNOTATION); SCHED_NEG_INF
                                 when none is */
    bool restricted;          /* the decision does not permit changes now */
    sched_time_t current;     /* the permitted interval holding now: its start
                                 (meaningful when !restricted) */
    bool has_next;            /* restricted: a window follows */
    sched_time_t next;        /* its start */
    bool gate_failed;         /* the health gate keeps the change held in an open window */
    bool rec_failed;          /* the held release is no longer recommended: kept held in an
                                 open window (gate.h) */
    bool let_through;         /* this decision lets the held change through (a window
                                 is open and the gate passes) */
    uint8_t outcome;          /* notify_outcome_t */
    sched_time_t outcome_at;  /* when HyperShift reported it (SCHED_NEG_INF: unknown) */
    sched_time_t override_at; /* the override record's time, SCHED_NEG_INF none */
    sched_time_t override_end; /* PermissiveUntil/RestrictiveUntil's end, SCHED_POS_INF none */
    sched_time_t withdrawn_at; /* the last withdrawal record's time
                                  (DECIDE_WITHDRAWN_AT_ANNOTATION), SCHED_NEG_INF none */
    bool after_unhealthy;      /* the last completed change is found unhealthy after it
                                  (decide/after.h) */
    sched_time_t after_completed; /* its completion (the step's mark) */
    sched_time_t after_at;     /* when it was found unhealthy */
    bool after_final;          /* the verdict on the last completed change is final:
                                  unhealthy, or healthy at the settle time's end */
    sched_time_t after_final_at; /* when it became final */
    bool aging;                /* held longer than holdAgeWarning (decide/aging.h) */
    sched_time_t aging_at;     /* aging: the telling due now (decide_aging_t.occasion) */
    sched_time_t aging_next;   /* the next telling (decide_aging_t.next); 0 or
                                  SCHED_POS_INF none */
    uint8_t wave;              /* the release waves' verdict on the held release
                                  (wave_state_t: 0 nothing holds it, 1 soak, 2
                                  halted, 3 blocked); 0 when an override passes them */
    sched_time_t wave_until;   /* soak: the earliest instant it may go, SCHED_POS_INF
                                  not known */
    sched_time_t wave_since;   /* halted: since when the halting cluster is unhealthy
                                  (the halt's identity) */
} notify_obs_t;

/* One step due. */
typedef struct notify_due {
    notify_step_t step;
    sched_time_t window;  /* the mark (and the id's window) */
    sched_time_t until;   /* held until / opens at / ends at; SCHED_POS_INF none */
    sched_time_t lead;    /* NOTIFY_WINDOW_SOON: the lead */
    sched_time_t request; /* held, window-soon, initiated: the request told about
                             (notify_obs_t.request; part of the id); else
                             SCHED_NEG_INF */
    sched_time_t superseded; /* NOTIFY_INITIATED: the shortest lead whose
                                window-soon was not told for this window and
                                request (the window opened before the
                                controller reached the lead); 0 none */
    bool superseded_held;    /* NOTIFY_INITIATED: held (and every window-soon) was
                                not told for this request: the controller
                                first saw the held request with its window
                                open (it was down, or behind) */
} notify_due_t;

#define NOTIFY_DUE_MAX NOTIFY_STEP_COUNT

/* No marks. */
void notify_marks_init(notify_marks_t *m);

/* Reads the annotation's text s (NULL: none) into *m; never fails. */
void notify_marks_parse(const char *s, notify_marks_t *m);

/* The annotation's text of m into buf (the steps in a fixed order). */
void notify_marks_format(const notify_marks_t *m, char *buf, size_t len);

/* Records d delivered. A window-soon mark covers every longer lead too
 * (a change held 30 minutes before its window is told "within 1h" once,
 * not "within 48h" as well). */
void notify_marks_note(notify_marks_t *m, const notify_due_t *d, const notify_config_t *cfg);

/* True when m has every mark of add (nothing to write). */
bool notify_marks_cover(const notify_marks_t *m, const notify_marks_t *add);

/* Merges add into m: per step, the later window. */
void notify_marks_merge(notify_marks_t *m, const notify_marks_t *add);

/* The steps due for o given the marks m: fills out (NOTIFY_DUE_MAX at
 * most) and returns how many.
 *  - held: a change held while restricted, for the next window (or none),
 *    once per (window, request);
 *  - window-soon: a change held and the next window opens within a lead
 *    (only the shortest lead reached is told), once per (window, request).
 *    It is told late as long as the window has not opened; once it has,
 *    the initiated step supersedes it and names the lead (superseded);
 *  - initiated: the held change let through in the open window, once per
 *    (window, request) told held; or, for a request still held (o->held)
 *    whose held step was never told (the controller first saw it with its
 *    window open), once per (window, request), superseding held and every
 *    window-soon (superseded_held): a change held while the controller was
 *    down is told when it starts, not skipped;
 *  - health-gate-skipped: the gate keeps it held in the open window;
 *  - release-withdrawn: the held release is no longer recommended and is
 *    kept held in the open window, once per window;
 *  - completed / failed: HyperShift's outcome at outcome_at, when newer than
 *    its mark and either fresh (NOTIFY_FRESH) or after a window this
 *    controller let a change through in (the initiated mark) or told a
 *    change held for (the held mark: the initiated mark may not have been
 *    written before a restart);
 *  - override-set: a new override record (fresh, or after an earlier one
 *    was told);
 *  - override-expired: the override's end passed (fresh, or its set was
 *    told);
 *  - withdrawn: a new withdrawal record (its time the mark's window), when
 *    fresh, or after an earlier one was told, or after a held step told for
 *    a request recorded before it (a controller down when the request was
 *    withdrawn still tells those it told held);
 *  - unhealthy-after-change: the last completed change found unhealthy
 *    after it, once per change (its completion the mark's window), when
 *    the verdict is fresh or the completion was told;
 *  - post-change: the same for a final verdict, healthy or not (for the
 *    checks that ask for it, check/check.h);
 *  - soak-waiting: a change held (o->held) whose release waits for the
 *    waves before it to soak (decide/wave.h), once per (soak end, request):
 *    the wave's end moving (more clusters completed it) is told again;
 *  - wave-halted: a held change whose release an unhealthy cluster of an
 *    earlier wave halts, once per halt (its since: the mark's window);
 *  - wave-resumed: a halt told ended and the change is still held, once per
 *    halt told (the same window);
 *  - hold-aging: a change held (o->held) longer than the guard rails'
 *    holdAgeWarning (o->aging), once per (occasion, request): o->aging_at, a week
 *    apart (decide/aging.h); until names the next start. */
size_t notify_due(const notify_obs_t *o, const notify_config_t *cfg, const notify_marks_t *m,
                  notify_due_t *out);

/* The next instant after o->now at which notify_due() can answer
 * differently by time alone (a lead reached, an override's end), or
 * SCHED_POS_INF. */
sched_time_t notify_due_wake(const notify_obs_t *o, const notify_config_t *cfg);

#endif
