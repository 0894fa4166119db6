/* evidence: release waves across management clusters (DESIGN.md 3.14).
 *
 * A fleet spans several management clusters; its canaries may live on one
 * and its later waves on another. No protocol of ours joins them: each
 * controller publishes what the clusters of its waves completed and how
 * they are, as a ConfigMap in a namespace of its own management cluster,
 * and reads every ConfigMap there that carries the evidence label as more
 * clusters of the waves. What copies the ConfigMaps between management
 * clusters is the machinery the fleet already runs (a hub such as ACM
 * distributing them, a GitOps repository, a script).
 *
 *   apiVersion: v1
 *   kind: ConfigMap
 *   metadata:
 *     name: hcp-wave-evidence-<name>            # waves.evidence.name
 *     namespace: <waves.evidence.namespace>
 *     labels: {changemanagement.hypershift.openshift.io/wave-evidence: <name>}
 *   data:
 *     evidence.json: |
 *       {"source": "<name>", "members": [
 *         {"system": "ControlPlane", "cluster": "clusters/canary-1", "pool": "",
 *          "wave": "canary", "optedIn": true, "healthy": true, "why": "",
 *          "unhealthySince": null, "running": "4.17.1",
 *          "completed": [{"version": "4.17.1", "at": "2030-01-07T08:00:00Z"}]}]}
 *
 * A member read back is keyed "<source>:<namespace>/<cluster>" (a
 * namespace never holds ':'), in the wave of the reader's configuration
 * that has the same name; one whose wave the reader does not know, or no
 * wave ("unassigned"), is ignored: the waves must be named alike on every
 * management cluster of the fleet. A ConfigMap is the reader's own (its
 * label names the reader) or names another source than its label are
 * ignored too. Everything read is outside bytes: each field is checked,
 * and a document that does not parse is refused whole with the field
 * named. Pure.
 */
#ifndef HCP_DECIDE_EVIDENCE_H
#define HCP_DECIDE_EVIDENCE_H

#include <stddef.h>

#include <jansson.h>

#include "decide/wave.h"
#include "schedule/schedule.h"

#define WAVE_EVIDENCE_LABEL "changemanagement.hypershift.openshift.io/wave-evidence"
#define WAVE_EVIDENCE_KEY "evidence.json"
#define WAVE_EVIDENCE_PREFIX "hcp-wave-evidence-"
#define WAVE_EVIDENCE_MAX_MEMBERS 20000 /* members one document may hold */
#define WAVE_EVIDENCE_MAX_BYTES (900 * 1024) /* a ConfigMap holds at most 1 MiB */

/* The ConfigMap this management cluster publishes from ix (its own members
 * only, in a stable order: the same index gives the same bytes), or NULL
 * when out of memory, or when cfg has no evidence. *bytes (may be NULL) is
 * the evidence text's length: over WAVE_EVIDENCE_MAX_BYTES it is not
 * published (the caller says so). New reference. */
json_t *wave_evidence_configmap(const wave_index_t *ix, size_t *bytes);

/* One member read from another management cluster's evidence. */
typedef void (*wave_evidence_fn)(unsigned system, const char *ns, const char *cluster,
                                 const char *id, const wave_member_t *m, void *ud);

/* Reads ConfigMap cm (as served) published by source (its label's value)
 * for the reader configured by cfg: fn is called once per member of a wave
 * cfg knows, ns being "<source>:<namespace>". Returns how many members
 * were handed over, or -1 with err naming the field (the document is then
 * ignored whole: nothing is handed over). The reader's own ConfigMap gives
 * 0. */
long wave_evidence_read(const json_t *cm, const wave_config_t *cfg, wave_evidence_fn fn,
                        void *ud, char *err, size_t errlen);

#endif
