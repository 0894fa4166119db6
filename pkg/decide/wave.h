/* wave: release waves across the fleet (DESIGN.md 3.14).
 *
 * A fleet's operator rolls a release to canary clusters first, lets it soak,
 * then to the next group, and stops everything when a canary breaks (GKE's
 * rollout sequencing, Azure Kubernetes Fleet Manager's update stages). The
 * guard rails' file says how, under `waves`:
 *
 *   waves:
 *     sequence:                      # in order, at most WAVE_MAX
 *     - name: canary
 *       selector:
 *         matchLabels: {fleet.example.com/wave: canary}
 *         namespaces: [clusters]     # optional
 *     - name: early
 *       selector: {matchLabels: {fleet.example.com/wave: early}}
 *       soak: 48h                    # R completed this long on the wave before
 *       minClusters: 2               # on this many of its clusters (default all
 *                                    # of them that opted in)
 *     blockedReleases: ["4.17.2", ">=4.17.5 <4.17.8"]
 *
 * A HostedCluster belongs to the first wave whose selector matches it (every
 * matchLabels pair among its labels, and its namespace among namespaces when
 * they are given). Two waves that could both select one cluster are refused
 * with the file, naming both: any two waves must differ in the value of a
 * label key both name, or name namespaces apart. A cluster no wave selects
 * goes last, after the last wave (WAVE_UNASSIGNED; the last wave's soak and
 * minClusters apply to it): a cluster nobody placed is never the first to
 * take a release. Its NodePools are in its wave.
 *
 * The gate. A control-plane release R held for a cluster of wave k > 0 goes
 * at its window only when
 *   - no cluster of a wave before k that runs R (status.version.history[0])
 *     is unhealthy (the health gate's verdict, gate.h): WAVE_HALTED naming
 *     the first such cluster and its condition; it resumes by itself when
 *     that cluster is healthy again or runs something else;
 *   - the nearest wave before k with a cluster that opted in (an empty wave
 *     is passed over) has R completed (the history entry's completionTime)
 *     on at least minClusters of its clusters, the soak ago: WAVE_SOAK with
 *     the instant it may go (never, while too few completed it).
 * A NodePool's release is sequenced the same way by the pools of the same
 * waves (its version is status.version, completed when HyperShift's
 * UpdatingVersion turned False with reason AsExpected); a cluster counts
 * once when one of its pools completed R. Configuration-only changes are not
 * sequenced. A release blocked by blockedReleases never goes (WAVE_BLOCKED),
 * whatever wave; a release whose version is not known (pinned by digest
 * only) cannot be sequenced and is held (WAVE_SOAK, never). An override in
 * force (Permissive, PermissiveUntil) passes the waves and the soak, never a
 * blocked release (decide_wave_apply()).
 *
 * Everything here is pure: the index keeps what the shell hands it, and the
 * verdict is a function of the index, the wave and the instant. A verdict
 * costs O(1) once the wave before was summed for (system, wave, release):
 * the sums are kept until a member of an earlier wave changes.
 */
#ifndef HCP_DECIDE_WAVE_H
#define HCP_DECIDE_WAVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "decide/gate.h"
#include "policy/stanza.h"
#include "schedule/schedule.h"

#define WAVE_MAX 16           /* waves in the sequence */
#define WAVE_MAX_LABELS 8     /* matchLabels pairs of one selector */
#define WAVE_MAX_NS 16        /* namespaces of one selector */
#define WAVE_MAX_BLOCKED 32   /* blockedReleases */
#define WAVE_MAX_CMP 4        /* comparators of one range */
#define WAVE_NAMELEN 64
#define WAVE_KEYLEN 320       /* a label key: prefix/name */
#define WAVE_VALLEN 64        /* a label value, a namespace */
#define WAVE_VERLEN 64        /* a version in the file */
#define WAVE_MVERLEN 32       /* a version a member runs or completed */
#define WAVE_MAX_SOAK ((sched_time_t)90 * 86400)
#define WAVE_HISTORY 4        /* completed releases kept per member */
#define WAVE_WHYLEN 384

/* The index of the implicit wave after the last: clusters no wave selects. */
#define WAVE_UNASSIGNED WAVE_MAX

/* Whose release: a control plane's or a NodePool's. */
enum { WAVE_CONTROL_PLANE = 0, WAVE_NODEPOOL = 1, WAVE_SYSTEMS = 2 };

typedef struct wave_def {
    char name[WAVE_NAMELEN];
    char label_key[WAVE_MAX_LABELS][WAVE_KEYLEN];
    char label_val[WAVE_MAX_LABELS][WAVE_VALLEN];
    size_t n_labels;
    char ns[WAVE_MAX_NS][WAVE_VALLEN];
    size_t n_ns;
    sched_time_t soak;   /* on the wave before; 0 none */
    int min_clusters;    /* of the wave before; -1: all that opted in */
} wave_def_t;

/* One comparator of a blocked range: op is one of "=", ">", ">=", "<", "<=". */
typedef struct wave_cmp {
    char op[3];
    char version[WAVE_VERLEN];
} wave_cmp_t;

/* A blocked release: every comparator holds (an exact version is "="). */
typedef struct wave_blocked {
    char text[128];      /* as written, for the message */
    wave_cmp_t cmp[WAVE_MAX_CMP];
    size_t n;
} wave_blocked_t;

#define WAVE_SOURCELEN 41 /* evidence.name: a DNS label of at most 40 */

/* Plain data: copy it freely. n 0 and n_blocked 0: waves are off. */
typedef struct wave_config {
    wave_def_t waves[WAVE_MAX];
    size_t n;
    wave_blocked_t blocked[WAVE_MAX_BLOCKED];
    size_t n_blocked;
    char evidence_name[WAVE_SOURCELEN]; /* evidence.name: this management cluster in the
                                           evidence it publishes (evidence.h); "" off */
    char evidence_ns[WAVE_VALLEN];      /* evidence.namespace: where it is published and
                                           read */
} wave_config_t;

/* Reads the guard rails' `waves` value v (a mapping, or its JSON text as a
 * ConfigMap holds it; NULL: waves off). Keys: sequence (each: name,
 * selector {matchLabels, namespaces}, soak, minClusters), blockedReleases
 * and evidence {name, namespace} (evidence.h; it needs a sequence). Every key is checked; a refusal names it
 * ("waves.sequence[1].soak: ..."), and two waves that may select the same
 * cluster are refused naming both. Returns 0 with *cfg filled, or
 * HCP_EINVAL with err set and *cfg emptied. */
int wave_config_parse(const json_t *v, wave_config_t *cfg, char *err, size_t errlen);

/* True when cfg sequences anything (a wave or a blocked release). */
bool wave_config_on(const wave_config_t *cfg);

/* The wave of a HostedCluster in namespace ns with labels (a JSON object
 * of strings, NULL none): the index of the first wave that selects it, or
 * WAVE_UNASSIGNED. */
int wave_of(const wave_config_t *cfg, const char *ns, const json_t *labels);

/* The wave's name ("(unassigned)" for WAVE_UNASSIGNED). Borrowed. */
const char *wave_name(const wave_config_t *cfg, int wave);

/* The blocked entry version v matches, or NULL. */
const wave_blocked_t *wave_blocked(const wave_config_t *cfg, const char *v);

/* What one member (a HostedCluster, or one of its NodePools) says. */
typedef struct wave_member {
    int wave;                 /* wave_of() its HostedCluster */
    bool opted_in;            /* it has a changeManagement stanza, or its pool's cluster */
    bool healthy;             /* the health gate's verdict (decide_health_ok()) */
    uint8_t n_done;           /* releases it completed, newest first */
    char running[WAVE_MVERLEN]; /* the release it runs or is moving to, "" unknown */
    char why[128];            /* unhealthy: the failing condition in words */
    sched_time_t unhealthy_since; /* unhealthy: that condition's lastTransitionTime
                                     (SCHED_NEG_INF not given) */
    char done[WAVE_HISTORY][WAVE_MVERLEN];
    sched_time_t done_at[WAVE_HISTORY];
} wave_member_t;

/* A member from a HostedCluster as served: history entries with state
 * Completed and a completionTime, history[0]'s version, health h. */
void wave_member_hc(const json_t *obj, const decide_health_t *h, int wave, bool opted_in,
                    wave_member_t *out);

/* A member from a NodePool: status_version (NULL none) completed at its
 * UpdatingVersion False AsExpected (h->outcome_at), health h. */
void wave_member_np(const char *status_version, const decide_health_t *h, int wave,
                    bool opted_in, wave_member_t *out);

typedef struct wave_index wave_index_t;

/* New index over cfg (copied), NULL when out of memory. */
wave_index_t *wave_index_new(const wave_config_t *cfg);
void wave_index_free(wave_index_t *ix);

/* Sets the member of system keyed by cluster ns/name (a NodePool: its
 * HostedCluster's name) and id (the NodePool's name, "" for the cluster),
 * replacing what it said before; m NULL removes it. Returns 0 or
 * HCP_ENOMEM. *changed (may be NULL) says whether what the gate reads
 * changed: the shell then decides the held changes of later waves again. */
int wave_index_put(wave_index_t *ix, unsigned system, const char *ns, const char *cluster,
                   const char *id, const wave_member_t *m, bool *changed);

typedef enum wave_state {
    WAVE_PASS = 0,  /* nothing holds it */
    WAVE_SOAK,      /* the wave before has not run it long enough, or enough */
    WAVE_HALTED,    /* a cluster of an earlier wave runs it unhealthy */
    WAVE_BLOCKED,   /* blockedReleases names it */
} wave_state_t;

typedef struct wave_verdict {
    uint8_t state;            /* wave_state_t */
    int wave;                 /* the object's wave */
    char name[WAVE_NAMELEN];  /* its name (wave_name()), "" when waves are off */
    char version[WAVE_MVERLEN]; /* the release judged, "" not known */
    sched_time_t until;       /* WAVE_SOAK: the earliest instant it may go,
                                 SCHED_POS_INF never (too few completed it) */
    int have, need;           /* WAVE_SOAK: clusters of the wave before that
                                 completed it, of how many needed */
    sched_time_t since;       /* WAVE_HALTED: when the halting cluster turned
                                 unhealthy (its condition's lastTransitionTime),
                                 SCHED_NEG_INF not known: the halt's identity for
                                 the notifications */
    char why[WAVE_WHYLEN];    /* a clause, for every state but WAVE_PASS */
} wave_verdict_t;

/* The verdict on release version (NULL or "": not known) held for a member
 * of wave of system, at now. */
void wave_index_verdict(wave_index_t *ix, unsigned system, int wave, const char *version,
                        sched_time_t now, wave_verdict_t *out);

/* What the last decision of member (system, ns/cluster, id) said of its
 * held release: version and the verdict's state when the waves hold it
 * (WAVE_SOAK, WAVE_HALTED, WAVE_BLOCKED), WAVE_PASS when they hold
 * nothing. Kept beside the member for the counts, not part of what it
 * tells the gate. A member not in the index is ignored. */
void wave_index_note_held(wave_index_t *ix, unsigned system, const char *ns,
                          const char *cluster, const char *id, const char *version,
                          uint8_t state);

/* The clusters of each (system, wave, release, state), of this management
 * cluster (not those other management clusters published), the states being
 * "Completed" (it runs the release and completed it), "Updating" (it runs
 * it, not completed yet), "Unhealthy" (it runs it and is unhealthy),
 * "WaitingForSoak", "WaveHalted" and "ReleaseBlocked" (its held release is
 * held by the waves), of HostedClusters (WAVE_CONTROL_PLANE) or NodePools
 * (WAVE_NODEPOOL): fn is called once per non-zero count, at most
 * WAVE_MAX_COUNTS of them (the rest are dropped). For the metrics. */
#define WAVE_MAX_COUNTS 256
typedef void (*wave_count_fn)(unsigned system, const char *wave, const char *release,
                              const char *state, double n, void *ud);
void wave_index_counts(const wave_index_t *ix, wave_count_fn fn, void *ud);

/* Every member: its system, its key "ns/cluster/id" (cluster_len bytes of
 * it name the cluster) and what it says. A member another management
 * cluster published (evidence.h) has "<source>:" before its namespace. */
typedef void (*wave_member_fn)(unsigned system, const char *key, size_t cluster_len,
                               const wave_member_t *m, void *ud);
void wave_index_foreach(const wave_index_t *ix, wave_member_fn fn, void *ud);

/* Rounds of what one source publishes: wave_index_put() marks each member
 * it puts (also one unchanged) with the round wave_index_round() began;
 * wave_index_sweep() then removes every member whose namespace begins with
 * prefix ("<source>:") and that the round did not put, and returns how many
 * it removed, the earliest wave of those in *wave (WAVE_UNASSIGNED none). */
uint32_t wave_index_round(wave_index_t *ix);
size_t wave_index_sweep(wave_index_t *ix, const char *prefix, uint32_t round, int *wave);

/* The configuration the index was made with. */
const wave_config_t *wave_index_config(const wave_index_t *ix);

/* Members kept, and sums made since the index was made (for the tests and
 * the bench: a verdict must not walk the fleet). */
size_t wave_index_members(const wave_index_t *ix);
uint64_t wave_index_sums(const wave_index_t *ix);

struct decide_decision;
struct decide_capi;

/* Applies verdict wv to decision d (as decide_gate_apply() does its own;
 * h: the object's health, for the pause of a control-plane update under
 * way): when d permits changes and a change is held, a verdict other than
 * WAVE_PASS makes d restricted with reason ReleaseBlocked, WaveHalted or
 * WaitingForSoak, the soak's end folded into d->wake; an override in force
 * (st) passes all but a blocked release, and says so (d->wave_skipped);
 * d->wave_held says the waves hold it.
 * Returns true when it held the change. */
bool decide_wave_apply(struct decide_decision *d, bool nodepool, const decide_health_t *h,
                       const wave_verdict_t *wv, const stanza_t *st, bool held,
                       const struct decide_capi *capi, bool held_at_admission, sched_time_t now);

#endif
