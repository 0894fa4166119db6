/* cmhold: the ConfigMaps a restricted NodePool names in spec.config, as
 * pure functions of an admission request's objects (DESIGN.md 3.6).
 *
 * HyperShift rolls a NodePool when the content of a ConfigMap its
 * spec.config names changes: the pool's config hash covers the ConfigMaps'
 * data (docs/content/reference/nodepool-rollouts.md; nodepool/config.go).
 * Such an edit carries no NodePool write the NodePool hold could keep, so
 * while one of the pools naming the ConfigMap is restricted the edit is
 * refused, with what to do instead: a new ConfigMap with the new content,
 * then spec.config changed to name it, which the NodePool hold keeps like
 * any other change until a window. A deletion is refused too: HyperShift
 * would fail the pool's configuration, and a ConfigMap created again under
 * the same name with other content would roll the pool at once. Everything
 * else about a ConfigMap (its metadata, its labels) passes. Objects are
 * untrusted bytes: anything of an unexpected type reads as absent.
 */
#ifndef HCP_DECIDE_CMHOLD_H
#define HCP_DECIDE_CMHOLD_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "decide/slim.h"

/* A restricted NodePool that names the ConfigMap. */
typedef struct decide_cm_pool {
    const char *name;  /* the NodePool's name (borrowed) */
    const char *until; /* the next window's start, RFC 3339, "" or NULL when none */
} decide_cm_pool_t;

/*
 * The names spec.config of NodePool np lists (spec.config[].name), one per
 * line with no trailing newline: new string (free()), or NULL when it lists
 * none or memory ran out (*oom tells which; oom may be NULL).
 */
char *decide_np_config_names(const json_t *np, bool *oom);

/* True when names (as decide_np_config_names() returns them; NULL is
 * empty) contains name. */
bool decide_config_names_has(const char *names, const char *name);

/* True when an UPDATE from old_cm to new_cm changes data or binaryData (an
 * absent map and an empty one are the same content). */
bool decide_cm_content_changed(const json_t *old_cm, const json_t *new_cm);

/*
 * The refusal of a write to ConfigMap cm (deletion: a DELETE, else an
 * UPDATE of its content) named by the n (>= 1) restricted pools: written
 * into msg (len bytes, cut when longer), naming the pools, until when each
 * is restricted, and what to do instead. Pools past the
 * fourth are counted, not named.
 */
void decide_cm_refusal(bool deletion, const char *cm, const decide_cm_pool_t *pools, size_t n,
                       char *msg, size_t len);

/*
 * The opted-in label on ConfigMaps. The chart's ConfigMap entry selects
 * DECIDE_OPTIN_LABEL (objectSelector), so the API server sends the webhook
 * only the ConfigMaps the controller labelled, and its failurePolicy can be
 * Fail like the other holds': an unnamed ConfigMap is never sent, whether a
 * replica answers or not. A ConfigMap carries the label while a NodePool of
 * its namespace that opted in (its own stanza, or its HostedCluster's:
 * cluster_stanza) names it in spec.config; the controller adds it and
 * removes it, one merge patch of metadata.labels each.
 *
 * Why a label written after the fact is enough: a NodePool's spec.config
 * that starts naming a ConfigMap is itself a rollout-triggering change,
 * held at the NodePool while the pool is restricted (nphold.h), so
 * HyperShift does not read the ConfigMap for that pool before the label is
 * there; and when the change goes through in a window, the ConfigMap may
 * change anyway until the window ends.
 */

/* True when NodePool np names ConfigMap cm (of its namespace) in
 * spec.config and has opted in: its own stanza, or cluster_stanza (its
 * HostedCluster has one). */
bool decide_cm_named(const decide_np_t *np, bool cluster_stanza, const char *cm);

/* The label write a ConfigMap needs: 1 add, -1 remove, 0 none. named: an
 * opted-in NodePool names it (decide_cm_named()); labelled: it carries
 * DECIDE_OPTIN_LABEL with DECIDE_OPTIN_VALUE (a ConfigMap that does not
 * exist is not labelled). */
int decide_cm_label_action(bool named, bool labelled);

/* The merge patch that adds (add) or removes DECIDE_OPTIN_LABEL and touches
 * nothing else of a ConfigMap; unconditional (no resourceVersion: a write
 * of its content at the same time does not conflict with a label). New
 * reference, NULL when memory ran out. */
json_t *decide_cm_label_patch(bool add);

#endif
