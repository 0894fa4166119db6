/* aging: a held change that waits too long is told (DESIGN.md 3.9, guard
 * rails' holdAgeWarning).
 *
 * A hold that outlives its purpose harms the cluster: a release held for
 * months keeps it on a release past its fixes. The age of a held change is
 * counted from its request as the admission webhook recorded it
 * (DECIDE_REQUESTED_AT_ANNOTATION: the request held now, the last one
 * recorded), or from a drift's record (drift.h); a change held with no
 * record (held the old way, by the pause alone) has no known age. Once the
 * age reaches the warning, the hold is told (a `hold-aging` notification, a
 * Warning Event), then again every GUARD_HOLD_AGE_REPEAT while it stays
 * held: each telling has an occasion, since + warning + k weeks, which
 * makes it once per (request, occasion) across restarts.
 *
 * Everything here is pure.
 */
#ifndef HCP_DECIDE_AGING_H
#define HCP_DECIDE_AGING_H

#include <stdbool.h>

#include "schedule/schedule.h"

struct decide_plan;

#define DECIDE_AGING_REASON "HoldAging"

typedef struct decide_aging {
    sched_time_t since;    /* when the held request was recorded; SCHED_NEG_INF: no
                              change held, or none with a known start */
    bool aging;            /* held for at least the warning */
    sched_time_t occasion; /* aging: the telling due now (since + warning + k *
                              GUARD_HOLD_AGE_REPEAT, the latest not after now) */
    sched_time_t next;     /* the next telling after now; SCHED_POS_INF none */
} decide_aging_t;

/* When the change p holds was requested (a release, a NodePool's held
 * fields, the HostedCluster fields that roll every NodePool: the requested-at
 * record; a drift held on the MachineDeployment: its record), or
 * SCHED_NEG_INF when p holds nothing or the record is missing or
 * malformed. */
sched_time_t decide_held_since(const struct decide_plan *p);

/* The age of a change held since `since` at now, with warning `warn`
 * (seconds; 0 or less: never told). */
void decide_aging(sched_time_t since, sched_time_t warn, sched_time_t now, decide_aging_t *out);

/* The guard rails' holdAgeWarning as decide_aging() takes it: 0 is the
 * default (GUARD_HOLD_AGE), a negative value none. */
sched_time_t decide_aging_warning(sched_time_t configured);

#endif
