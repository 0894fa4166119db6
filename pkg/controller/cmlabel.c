/* cmlabel.c: the opted-in label on the ConfigMaps that an opted-in NodePool
 * names in spec.config (decide/cmhold.h), so that the chart's ConfigMap
 * webhook selects them by label and may fail closed.
 *
 * A cache of the labelled ConfigMaps only (a watch with a label selector:
 * the controller never lists every ConfigMap of the cluster) says which
 * carry the label; the NodePool cache says which should. A record per
 * ConfigMap (R_CM) is queued by the events of both; its reconcile writes at
 * most one merge patch of metadata.labels and forgets the record once the
 * label is right. A ConfigMap named but not there is logged and told in a
 * Warning Event on the NodePool once, and tried again later, slower each
 * time (CM_ABSENT_MIN doubling to CM_ABSENT_MAX), and whenever its NodePool
 * changes. */
#include "controller/internal.h"

#include <stdio.h>
#include <string.h>

#include "decide/cmhold.h"
#include "log/log.h"

#define CM_ABSENT_MIN 10.0  /* seconds before a missing ConfigMap is tried again */
#define CM_ABSENT_MAX 600.0

/* ---- handlers ----------------------------------------------------------- */

static void cm_add(const kube_obj *o, void *ud) { ctl_enqueue(ud, R_CM, o->ns, o->name); }
static void cm_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    (void)old;
    ctl_enqueue(ud, R_CM, o->ns, o->name);
}
static void cm_delete(const kube_obj *o, void *ud) { ctl_enqueue(ud, R_CM, o->ns, o->name); }

const kube_cache_ops ctl_cm_ops = {NULL, NULL, cm_add, cm_update, cm_delete};

void ctl_cm_enqueue_names(ctl_controller_t *c, const char *ns, const char *names,
                          bool absent_only)
{
    char name[254];
    const char *p = names;

    while (p && *p) {
        const char *end = strchr(p, '\n');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l < sizeof(name)) {
            memcpy(name, p, l);
            name[l] = '\0';
            record_t *r = absent_only ? ctl_record_find(c, R_CM, ns, name) : NULL;
            if (!absent_only || (r && r->cm_absent))
                ctl_enqueue(c, R_CM, ns, name);
        }
        p = end ? end + 1 : NULL;
    }
}

/* ---- reconcile ---------------------------------------------------------- */

typedef struct named_ctx {
    ctl_controller_t *c;
    const char *ns, *name;  /* the ConfigMap */
    bool named;
    const char *by;         /* a NodePool that names it (for the log) */
} named_ctx_t;

static void find_namer(const kube_obj *o, void *ud)
{
    named_ctx_t *x = ud;
    const decide_np_t *np = o->data;
    bool cluster_stanza = false;

    if (x->named || !np || strcmp(o->ns, x->ns) != 0 ||
        !decide_config_names_has(np->config_names, x->name))
        return;
    if (!np->m.stanza.present && np->cluster_name) {
        const kube_obj *h = kube_cache_get(&x->c->hcs, o->ns, np->cluster_name);
        cluster_stanza = h && h->data && ((const decide_hc_t *)h->data)->m.stanza.present;
    }
    if (decide_cm_named(np, cluster_stanza, x->name)) {
        x->named = true;
        x->by = o->name;
    }
}

void ctl_reconcile_cm(ctl_controller_t *c, record_t *r)
{
    named_ctx_t x = {c, r->ns, r->name, false, NULL};
    const kube_obj *have;
    char path[PATH_MAX_LEN];
    json_t *patch;
    int action;

    /* Without the webhooks nothing reads the label: it is left as it is,
     * as on the other kinds (plan.c, label_action()). */
    if (!c->admission_holds || !c->leading) {
        ctl_record_forget(c, r);
        return;
    }
    have = kube_cache_get(&c->cms, r->ns, r->name);
    if (have && ctl_write_stale(r->wt.stale_own, have->rv))
        return; /* our removal is answered; the watch has yet to say so */
    kube_cache_foreach(&c->nps, find_namer, &x);
    action = decide_cm_label_action(x.named, have != NULL);
    if (action == 0) {
        if (r->cm_absent && have)
            log_kv(LOG_INFO, "ConfigMap named by spec.config found and labelled", "namespace",
                   r->ns, "name", r->name, NULL);
        ctl_record_forget(c, r); /* right as it is: nothing to remember */
        return;
    }
    if (kube_path(path, sizeof(path), NULL, "v1", "configmaps", r->ns, r->name, NULL) ||
        (patch = decide_cm_label_patch(action > 0)) == NULL) {
        c->stats.write_errors++;
        ctl_arm_retry(c, r);
        return;
    }
    /* An added label's answer goes into the cache (it now matches the
     * selector); a removed one's leaves the selector, which the watch says
     * with a DELETED event: until then the version replaced is stale. */
    ctl_write_t w = {.verb = action > 0 ? CTL_WRITE_PATCH_IF_THERE : CTL_WRITE_PATCH,
                     .path = path, .doc = patch, .cache = action > 0 ? &c->cms : NULL,
                     .what = action > 0 ? "ConfigMap opt-in label"
                                        : "ConfigMap opt-in label removed",
                     .stale = action > 0 ? NULL : r->wt.stale_own,
                     .base_rv = have ? have->rv : NULL};
    if (ctl_write(&c->writer, &r->wt, &w) != 0)
        ctl_arm_retry(c, r);
    json_decref(patch);
}

/* Told once per absence on the NodePool that names it, where its owner
 * looks: a Warning Event (HyperShift says on its own side that it cannot
 * render the pool's configuration). */
static void absent_event(ctl_controller_t *c, const char *ns, const char *cm, const char *by)
{
    const kube_obj *np = by ? kube_cache_get(&c->nps, ns, by) : NULL;
    record_t *npr = np ? ctl_record_get(c, R_NP, ns, by) : NULL;
    char msg[DECIDE_MSGLEN];

    if (!npr)
        return;
    snprintf(msg, sizeof(msg),
             "spec.config names ConfigMap %s, which does not exist in namespace %s: it cannot "
             "carry the opted-in label, so an edit of it is not held until it is created (it is "
             "looked for again after 10 s, then less often, at least every 10 min).",
             cm, ns);
    ctl_event_t ev = {"NodePool", HS_GROUP "/" HS_VERSION, np->uid, "Warning",
                      "ConfigMapNotFound", msg};
    if (ctl_write_event(&c->writer, &npr->wt, &ev))
        ctl_arm_retry(c, npr);
}

void ctl_cm_absent(ctl_controller_t *c, record_t *r)
{
    if (!r->cm_absent) {
        named_ctx_t x = {c, r->ns, r->name, false, NULL};
        kube_cache_foreach(&c->nps, find_namer, &x);
        log_kv(LOG_WARN,
               "ConfigMap named by spec.config does not exist; labelled once it does (until "
               "then an edit of it is not held)",
               "namespace", r->ns, "name", r->name, "nodepool", x.by ? x.by : "", NULL);
        absent_event(c, r->ns, r->name, x.by);
        r->cm_absent = true;
        r->cm_retry = CM_ABSENT_MIN;
    }
    ev_timer_stop(c->loop, &r->timer);
    ev_timer_set(&r->timer, r->cm_retry, 0.);
    ev_timer_start(c->loop, &r->timer);
    r->cm_retry = r->cm_retry * 2 > CM_ABSENT_MAX ? CM_ABSENT_MAX : r->cm_retry * 2;
}
