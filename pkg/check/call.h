/* check call: asking the pre-start checks on the loop (check.h).
 *
 * The shell of the checks: the answers about each object's held change are
 * kept per object (by uid) in a check_entry_t; asking POSTs the CloudEvent
 * `pre-start` (notify_payload(), the notifications' structured form) to
 * every check that is due, with libcurl's multi interface on the loop's
 * shared kube_http: nothing waits on a check. Each answer is recorded and
 * the object's owner told (changed callback), so that the controller
 * decides the object again at once; a refusal is asked again after its
 * backoff by the runner's own timer (then told changed too). At most
 * CHECK_MAX_INFLIGHT calls go to one check at once (a fleet whose windows
 * share a boundary asks about every cluster at its lead): the others start
 * as answers come, so that a call's timeout measures the check's answer,
 * not a queue. The bearer
 * token is read from the check's tokenFile at every attempt and never
 * logged. Only a runner told it leads asks: a standby decides from what its
 * own runner knows (nothing: it holds), and lets nothing through anyway.
 */
#ifndef HCP_CHECK_CALL_H
#define HCP_CHECK_CALL_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "base/htab.h"
#include "base/list.h"
#include "check/check.h"
#include "kube/http.h"
#include "notify/payload.h"

/* Per check: what its answers were. */
typedef struct check_counts {
    uint64_t allowed, refused, unanswered, ignored;
} check_counts_t;

/* Told when an answer about the object came (or a refused check's backoff
 * passed): decide it again. Strings valid during the call only. */
typedef void (*check_changed_fn)(const char *kind, const char *ns, const char *name, void *ud);

typedef struct check_runner {
    struct ev_loop *loop;   /* borrowed */
    kube_http *http;        /* borrowed */
    check_config_t cfg;
    bool leading;
    hcp_link_t objs;        /* check_obj_t: objects with a change asked about, oldest first */
    hcp_htab_t by_uid;      /* the same objects by uid (allocated at the first ask) */
    hcp_link_t calls;       /* POSTs in flight */
    ev_timer timer;         /* the next refused check due again */
    check_counts_t counts[CHECK_MAX];
    unsigned inflight[CHECK_MAX]; /* calls of each check in flight (CHECK_MAX_INFLIGHT at most) */
    check_changed_fn changed;
    void *ud;
} check_runner_t;

/* Sets r up for cfg (copied) on loop and http. Nothing is asked before
 * check_runner_lead(r, true). */
void check_runner_init(check_runner_t *r, struct ev_loop *loop, kube_http *http,
                       const check_config_t *cfg, check_changed_fn changed, void *ud);

/* Cancels every call and forgets every answer. */
void check_runner_free(check_runner_t *r);

/* Whether this replica leads (asks). Losing the lead cancels the calls in
 * flight and forgets the answers (the new leader asks again). */
void check_runner_lead(check_runner_t *r, bool leading);

/* Asks the checks that apply to system and are due about object uid's
 * change (check_change_key()), described by ev (its pre-start payload):
 * answers about another change of the object are forgotten first. Nothing
 * when r is NULL, has no check, or does not lead. */
void check_runner_ask(check_runner_t *r, const char *uid, uint64_t change, unsigned system,
                      const notify_event_t *ev);

/* The verdict on object uid's change (check_entry_verdict()): CHECK_NONE
 * when r is NULL or no check applies to system; CHECK_WAIT when nothing was
 * asked about that change yet. */
check_verdict_t check_runner_verdict(const check_runner_t *r, const char *uid, uint64_t change,
                                     unsigned system, char *why, size_t len);

/* Forgets what was asked about object uid (its change let through, no
 * longer held, or the object gone); a call in flight is cancelled. */
void check_runner_forget(check_runner_t *r, const char *uid);

/* The same for the object kind ns/name, whatever its uid (it is gone). */
void check_runner_forget_object(check_runner_t *r, const char *kind, const char *ns,
                                const char *name);

#endif
