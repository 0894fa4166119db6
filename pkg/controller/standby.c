/* standby.c: a held change whose window opened, let through by a replica
 * that does not lead when the leader does not.
 *
 * Every replica decides every object from its own caches; only the leader
 * writes. A leader that dies (SIGKILL, its node lost) keeps its Lease until
 * the Lease expires, and nobody would write the held changes of a boundary
 * in that time (15 s and more). A standby sees the same plans: when one of
 * them lets a held change through and the change is still held `after`
 * real seconds later, and it has seen no held change of this management
 * cluster let through by anyone in that time, the leader is not writing,
 * and the standby writes the held change itself (only that: status,
 * pauses, Events and notifications stay the leader's).
 *
 * Why it is safe:
 *   - Outside a window: the standby writes only what its own plan lets
 *     through, from its own clock, `after` seconds after its plan first
 *     did; the admission webhooks judge the write as they judge the
 *     leader's.
 *   - Never twice: the write is a merge patch conditional on the
 *     resourceVersion the plan read (decide_writes()), as the leader's is.
 *     Whichever replica writes first changes that version; the other's
 *     write is refused with 409 Conflict and decides again from the newer
 *     object, which no longer carries the request. A standby whose write
 *     lost only counts it.
 *   - No more writes with a healthy leader: the leader's releases reach
 *     the standby's caches within milliseconds, each one a held change the
 *     standby saw due and then let through by someone else; while they keep
 *     coming the standby waits, `after` from the last. At a boundary of a
 *     thousand held releases the leader writes one every few milliseconds.
 *   - The pre-start checks' answers are the leader's alone: a change a
 *     check applies to is never let through by a standby (the next leader
 *     asks).
 */
#include "controller/internal.h"

#include "log/log.h"

#include <jansson.h>
#include <string.h>

/* A change let through by a standby is told (ChangesInitiated, its
 * notification) by that replica when it leads within this many seconds of
 * the write: the leader it replaced died before writing, so told nothing.
 * Later, a leader that was alive after all has told it. */
#define STANDBY_TELL_WITHIN 30.0

static bool standby_on(const ctl_controller_t *c)
{
    return c->standby.after > 0 && !c->standby.off && !c->leading;
}

static double due_until(const ctl_controller_t *c, const record_t *r)
{
    double from = r->sb_due > c->standby.seen ? r->sb_due : c->standby.seen;
    return from + c->standby.after;
}

static void standby_arm(ctl_controller_t *c, double at)
{
    ctl_standby_t *s = &c->standby;
    if (ev_is_active(&s->timer) && s->at <= at)
        return;
    ev_timer_stop(c->loop, &s->timer);
    s->at = at;
    double d = at - ev_time();
    ev_timer_set(&s->timer, d > 0 ? d + 0.001 : 0.001, 0.);
    ev_timer_start(c->loop, &s->timer);
}

/* The standby's timer: the changes due long enough with nobody writing are
 * decided again (and written); the others wait for their instant. */
static void standby_timer(struct ev_loop *loop, ev_timer *w, int revents)
{
    (void)loop;
    (void)revents;
    ctl_controller_t *c = w->data;
    double now = ev_time(), next = 0;
    size_t i;
    hcp_hnode_t *n;
    if (!standby_on(c))
        return;
    HCP_HTAB_FOREACH(&c->records.tab, i, n) {
        record_t *r = (record_t *)n;
        if (r->gone || r->sb_due <= 0 || r->sb_mine)
            continue;
        double at = due_until(c, r);
        if (at <= now + 0.0005)
            ctl_enqueue(c, r->kind, r->ns, r->name);
        else if (next == 0 || at < next)
            next = at;
    }
    if (next > 0)
        standby_arm(c, next);
}

void ctl_standby_init(ctl_controller_t *c)
{
    ev_timer_init(&c->standby.timer, standby_timer, 1., 0.);
    c->standby.timer.data = c;
}

void ctl_standby_stop(ctl_controller_t *c)
{
    ev_timer_stop(c->loop, &c->standby.timer);
}

void ctl_set_standby(ctl_controller_t *c, double after)
{
    c->standby.after = after > 0 ? after : 0;
    c->standby.off = after <= 0;
    if (c->standby.off)
        ev_timer_stop(c->loop, &c->standby.timer);
}

void ctl_standby_lead(ctl_controller_t *c, bool was, bool leading)
{
    size_t i;
    hcp_hnode_t *n;
    if (was && !leading) /* the next leader gets `after` before this replica writes */
        c->standby.seen = ev_time();
    if (!leading || was)
        return;
    /* Leading: what it noted as a standby is over; a change due once it
     * follows again is timed from then. */
    ev_timer_stop(c->loop, &c->standby.timer);
    HCP_HTAB_FOREACH(&c->records.tab, i, n) {
        record_t *r = (record_t *)n;
        r->sb_due = 0;
        r->sb_mine = false;
    }
}

bool ctl_standby_takes(ctl_controller_t *c, record_t *r, const decide_plan_t *p, bool releasing)
{
    double now = ev_time(); /* not the loop's: a drain of many reconciles takes time */
    if (!releasing || !standby_on(c) || ctl_checks_apply(c, p)) {
        if (r->sb_due > 0 && !r->sb_mine && !releasing)
            c->standby.seen = now; /* let through by another writer: the leader writes */
        r->sb_due = 0;
        r->sb_mine = false;
        return false;
    }
    if (r->sb_due <= 0)
        r->sb_due = now;
    if (r->sb_mine)
        return true; /* written and still held (a webhook behind the window held it back) */
    double at = due_until(c, r);
    if (now + 0.0005 < at) {
        standby_arm(c, at);
        return false;
    }
    r->sb_mine = true;
    return true;
}

void ctl_standby_answered(ctl_controller_t *c, record_t *r, ctl_write_outcome_t outcome,
                          const json_t *answer)
{
    if (outcome == CTL_WRITE_OK) {
        const char *rv = json_string_value(
            json_object_get(json_object_get(answer, "metadata"), "resourceVersion"));
        if (!rv || strcmp(rv, r->sb_rv) == 0)
            return; /* a webhook behind the window held it back: written again */
        /* It landed: told if this replica leads soon. */
        c->stats.standby_releases++;
        r->let_through = true;
        r->sb_told = ev_time();
        log_kv(LOG_INFO, "held change let through by a standby", "namespace", r->ns, "name",
               r->name, NULL);
        return;
    }
    if (outcome == CTL_WRITE_CONFLICT) {
        /* Another replica wrote first: the leader is there after all. The
         * next try waits `after` (the watch brings the newer object first). */
        c->stats.standby_conflicts++;
        c->standby.seen = ev_time();
    }
    r->sb_mine = false;
}

void ctl_standby_told(record_t *r)
{
    if (r->sb_told <= 0)
        return;
    if (ev_time() - r->sb_told > STANDBY_TELL_WITHIN)
        r->let_through = false;
    r->sb_told = 0;
}
