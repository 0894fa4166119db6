/* check: pre-start checks by other systems (DESIGN.md 3.15).
 *
 * Seed 004 asks for "extension points before/after each upgrade phase"
 * (POSTing to some HTTP API), seed 003's update informers "have a say" in a
 * planned update: a held change is let through only when every check the
 * fleet operator configured says yes. The checks live in the guard rails'
 * file, under the key `checks` (a list; in a ConfigMap's data, whose values
 * are strings, its JSON text):
 *
 *   checks:
 *     - name: cab                          # [a-z0-9-], 1-63, unique
 *       url: https://cab.example.com/hcp   # http:// or https://
 *       tokenFile: /etc/hcp-controller/checks/cab   # optional bearer token file
 *       timeout: 10s                       # an answer's wait, 1s to 60s (default 10s)
 *       failurePolicy: Hold                # or Ignore (default Hold)
 *       steps: [pre-start]                 # and/or post-change (default pre-start)
 *       systems: [control-plane, worker-nodes]   # whose changes (default both)
 *       lead: 10m                          # asked this long before the window (default 10m)
 *
 * Each check is asked (a POST of the CloudEvent `pre-start`, the
 * notifications' payload) once per held change and window, `lead` before the
 * window opens, so that a slow check does not delay the opening: its answer
 * is in by then. A 2xx answer lets the change go at its window; anything else
 * (another status, no answer within `timeout`) is a refusal: under
 * failurePolicy Hold it keeps the change held (reason CheckFailed, naming the
 * check and its answer's first line) and is asked again with backoff while
 * the window is open; under Ignore it is recorded and the change goes. A
 * change whose window opens before the answer waits for it (CheckPending).
 * The checks decide only what windows, the health gate and the release's
 * recommendation let through: they can hold a change, never release one.
 *
 * A check whose steps name `post-change` is told, once per completed
 * change, the health after it (decide/after.h): the CloudEvent
 * `post-change` with data.verdict Healthy (not found unhealthy within the
 * settle time) or Unhealthy (with the failing condition). Its answer holds
 * nothing; it is delivered as the notifications are (tried again until a
 * 2xx, recorded in the object's notified marks, so that a restart does not
 * tell it twice): the controller hands these checks to the notifications'
 * sender as endpoints taking that step alone (check_post_change_endpoint()).
 *
 * This file: the configuration (every key checked, a refusal names it) and
 * the answers kept per object (a pure table: time is a parameter, no I/O).
 * call.c is the shell that POSTs on the loop.
 */
#ifndef HCP_CHECK_H
#define HCP_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "schedule/schedule.h"

#define CHECK_MAX 16
#define CHECK_NAMELEN 64
#define CHECK_URLLEN 2048
#define CHECK_PATHLEN 1024
#define CHECK_MSGLEN 160             /* an answer's first line as kept */
#define CHECK_DEFAULT_TIMEOUT 10     /* seconds */
#define CHECK_MAX_TIMEOUT 60
#define CHECK_DEFAULT_LEAD 600       /* seconds before the window */
#define CHECK_MAX_LEAD (7 * 86400)
#define CHECK_BACKOFF_FIRST 1.0      /* seconds before a refused check is asked again */
#define CHECK_BACKOFF_MAX 60.0
#define CHECK_MAX_INFLIGHT 16       /* calls to one check at once; the others wait for one */

/* The systems whose changes a check is asked about (a bit set). */
#define CHECK_CONTROL_PLANE 1u
#define CHECK_WORKER_NODES 2u

/* The steps a check is called at (a bit set). */
#define CHECK_PRE_START 1u   /* asked before a held change goes; may hold it */
#define CHECK_POST_CHANGE 2u /* told the health after a completed change; holds nothing */

typedef struct check_def {
    char name[CHECK_NAMELEN];
    char url[CHECK_URLLEN];
    char token_file[CHECK_PATHLEN]; /* "" when none */
    int timeout;                    /* seconds */
    bool ignore;                    /* failurePolicy Ignore */
    unsigned systems;               /* CHECK_CONTROL_PLANE | CHECK_WORKER_NODES */
    unsigned steps;                 /* CHECK_PRE_START | CHECK_POST_CHANGE */
    sched_time_t lead;              /* seconds before the window */
} check_def_t;

/* Plain data: copy it freely. */
typedef struct check_config {
    check_def_t checks[CHECK_MAX];
    size_t n;                       /* 0: no checks */
} check_config_t;

/* Reads the `checks` value v (a list, or a string holding its JSON text;
 * NULL: none) into *cfg. Unknown keys are refused. Returns 0, or
 * HCP_EINVAL with err naming the key ("checks[1].timeout: ..."). */
int check_config_parse(const json_t *v, check_config_t *cfg, char *err, size_t errlen);

/* Adds to ncfg every check of cfg whose steps name post-change, as an
 * endpoint named "check/<name>" (CloudEvents, its url and tokenFile) that
 * takes the step NOTIFY_POST_CHANGE alone. */
struct notify_config;
void check_post_change_endpoints(const check_config_t *cfg, struct notify_config *ncfg);

/* The longest lead of the pre-start checks that apply to system (-1: none
 * apply). */
sched_time_t check_config_lead(const check_config_t *cfg, unsigned system);

/* ---- the answers ---------------------------------------------------------- */

/* One check's answer about one change. */
typedef enum check_state {
    CHECK_UNASKED = 0, /* not asked yet (its lead not reached) */
    CHECK_ASKING,      /* a POST in flight: waiting, or still refused when asked again */
    CHECK_ALLOWED,     /* 2xx */
    CHECK_REFUSED,     /* another status, or no answer: asked again at next_at */
    CHECK_IGNORED,     /* refused, under failurePolicy Ignore: counts as allowed */
} check_state_t;

typedef struct check_answer {
    uint8_t state;          /* check_state_t */
    long status;            /* the HTTP status, 0 when none came */
    char msg[CHECK_MSGLEN]; /* the answer's first line, or why none came */
    unsigned attempts;      /* refusals in a row */
    double next_at;         /* CHECK_REFUSED: when it may be asked again (the loop's clock) */
} check_answer_t;

/* The answers about one object's held change for one window. */
typedef struct check_entry {
    uint64_t change;            /* check_change_key() of what was asked about */
    unsigned system;            /* CHECK_CONTROL_PLANE or CHECK_WORKER_NODES */
    check_answer_t a[CHECK_MAX];
} check_entry_t;

/* The verdict of the checks on one change. */
typedef enum check_verdict {
    CHECK_NONE = 0, /* no check applies to it */
    CHECK_PASS,     /* every check that applies allowed it (or is ignored) */
    CHECK_WAIT,     /* some answer has not come yet, none refused */
    CHECK_FAIL,     /* a check under Hold refused it */
} check_verdict_t;

/* The key of a change: its words ("release 4.17.1", "node rollout ...") and
 * the window it waits for (its start). */
uint64_t check_change_key(const char *change, sched_time_t window);

/* Starts e for change on system: every answer unasked. */
void check_entry_reset(check_entry_t *e, uint64_t change, unsigned system);

/* The verdict of cfg's checks on e; why (when not NULL) gets a clause for
 * CHECK_FAIL ("check cab refused it: HTTP 503: CAB meeting on Thursday") and
 * CHECK_WAIT ("waiting for the answer of check cab"), the allowing answers'
 * messages for CHECK_PASS ("" when none said anything). */
check_verdict_t check_entry_verdict(const check_entry_t *e, const check_config_t *cfg,
                                    char *why, size_t len);

/* Whether check i should be asked now: it applies to e's system, and it is
 * unasked, or refused and its backoff passed (now >= next_at). */
bool check_entry_due(const check_entry_t *e, const check_config_t *cfg, size_t i, double now);

/* Records check i's answer: status (0: none came, errmsg says why), the
 * body's first line (body may be NULL; untrusted bytes, len of them) at now. */
void check_entry_answer(check_entry_t *e, const check_config_t *cfg, size_t i, long status,
                        const char *body, size_t len, const char *errmsg, double now);

/* The wait after n refusals: 1 s doubled each time, CHECK_BACKOFF_MAX at most. */
double check_backoff(unsigned n);

#endif
