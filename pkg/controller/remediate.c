/* remediate.c: the machines of the older template that fail their health
 * check while a drift is held (decide/drift.h, "Remediation of the older
 * template's machines").
 *
 * Cluster API declines to remediate a machine of a MachineSet that is not
 * its MachineDeployment's current revision and leaves it to the rollout,
 * which the drift's OnDelete defers to the window. The MachineSet says so
 * in its Remediating condition, which the MachineSet cache reads
 * (decide_capi_t.remediating): a record per such MachineSet (R_REM) is
 * queued by its events; its reconcile checks that the MachineSet is an
 * older revision of a MachineDeployment whose drift is held under our
 * OnDelete, lists the MachineSet's Machines (one LIST by label: the
 * controller keeps no Machine cache) and deletes each that Cluster API
 * found unhealthy and declined to remediate for its revision
 * (decide_drift_remediable()), conditional on its uid and resourceVersion.
 * Cluster API then makes the replacement in the new MachineSet. Each delete
 * the API server carries out is counted
 * (change_management_held_drift_remediations_total) and told in a
 * MachineRemediated Event on the NodePool, once: a second LIST may be
 * served before the first delete, and its delete is then refused (409) by
 * the preconditions. Leader only; off with
 * --remediate-held-drift=false (the machine then waits for the window,
 * where the rollout replaces it). */
#include "controller/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/json.h"
#include "decide/drift.h"
#include "log/log.h"

/* The LIST in flight for a record: found again by its key when it is
 * answered, so the record may be forgotten meanwhile. */
typedef struct rem_list {
    ctl_controller_t *c;
    char *ns, *name; /* the MachineSet */
} rem_list_t;

/* The MachineDeployment of MachineSet ms when the MachineSet is an older
 * revision of it and a drift is held on it under OnDelete, else NULL. */
static const decide_capi_t *held_drift_md(ctl_controller_t *c, const char *ns,
                                          const decide_capi_t *ms)
{
    const kube_obj *o = ms->deployment ? kube_cache_get(&c->mds, ns, ms->deployment) : NULL;
    const decide_capi_t *md = o ? o->data : NULL;
    if (!md || !md->drift || !md->on_delete || md->revision < 0 || ms->revision < 0 ||
        ms->revision == md->revision)
        return NULL;
    return md;
}

void ctl_rem_enqueue(ctl_controller_t *c, const kube_obj *ms)
{
    const decide_capi_t *m = ms->data;
    if ((c->opts.remediate_drift && m && m->remediating && held_drift_md(c, ms->ns, m)) ||
        ctl_record_find(c, R_REM, ms->ns, ms->name))
        ctl_enqueue(c, R_REM, ms->ns, ms->name);
}

/* One delete in flight: counted and told when the API server answers it
 * with the machine (deleting now). Not when it answers 409 (the machine
 * changed since it was listed: a LIST served before our earlier delete of
 * it, or Cluster API's own write) nor 404 (gone already, by an earlier
 * delete, ours or another's). */
typedef struct rem_delete {
    ctl_controller_t *c;
    char *nodepool, *drift, *ms, *machine; /* copies: the caches may change meanwhile */
} rem_delete_t;

static void rem_delete_free(rem_delete_t *d)
{
    if (d) {
        free(d->nodepool);
        free(d->drift);
        free(d->ms);
        free(d->machine);
    }
    free(d);
}

/* Told on the NodePool (its owner looks there), through its record. */
static void remediated_event(ctl_controller_t *c, const rem_delete_t *d)
{
    char ns[300], msg[DECIDE_MSGLEN];
    const char *name;
    if (!ctl_nodepool_ref(d->nodepool, ns, sizeof(ns), &name))
        return;
    const kube_obj *np = kube_cache_get(&c->nps, ns, name);
    record_t *npr = np ? ctl_record_get(c, R_NP, ns, name) : NULL;
    if (!npr)
        return;
    snprintf(msg, sizeof(msg),
             "Machine %s of MachineSet %s failed its health check. It runs the configuration "
             "before the held HyperShift configuration update (%s), which Cluster API leaves "
             "to the rollout; the rollout waits for the window, so it was deleted now: Cluster "
             "API replaces it from the new template.",
             d->machine, d->ms, d->drift);
    ctl_event_t ev = {"NodePool", HS_GROUP "/" HS_VERSION, np->uid, "Normal",
                      "MachineRemediated", msg};
    if (ctl_write_event(&c->writer, &npr->wt, &ev))
        ctl_arm_retry(c, npr);
}

static void deleted(ctl_write_outcome_t outcome, const json_t *answer, void *ud)
{
    rem_delete_t *d = ud;
    if (outcome == CTL_WRITE_OK && answer) {
        d->c->stats.drift_remediations++;
        log_kv(LOG_INFO, "machine of the older template remediated while a drift is held",
               "machineset", d->ms, "machine", d->machine, NULL);
        remediated_event(d->c, d);
    }
    rem_delete_free(d);
}

static void list_free(rem_list_t *x)
{
    if (x) {
        free(x->ns);
        free(x->name);
    }
    free(x);
}

static void listed(kube_client *kc, const kube_error *err, json_t *list, void *ud)
{
    (void)kc;
    rem_list_t *x = ud;
    ctl_controller_t *c = x->c;
    record_t *r = ctl_record_find(c, R_REM, x->ns, x->name);
    const kube_obj *mso = kube_cache_get(&c->mss, x->ns, x->name);
    const decide_capi_t *md = mso && mso->data ? held_drift_md(c, x->ns, mso->data) : NULL;
    const json_t *m;
    size_t i;

    if (r)
        r->rem_listing = false;
    if (err) {
        log_kv(LOG_WARN, "cannot list the Machines of a MachineSet to remediate", "namespace",
               x->ns, "machineset", x->name, "error", err->message, NULL);
        if (r)
            ctl_arm_retry(c, r);
    } else if (r && c->leading && md) {
        json_array_foreach(json_object_get(list, "items"), i, m) {
            const char *name = hcp_json_str(m, "metadata.name");
            const char *set = json_string_value(json_object_get(
                hcp_json_path(m, "metadata.labels"), "cluster.x-k8s.io/set-name"));
            char path[PATH_MAX_LEN];
            json_t *opts;
            if (!name || !set || strcmp(set, x->name) != 0 || !decide_drift_remediable(m) ||
                kube_path(path, sizeof(path), CAPI_GROUP, c->capi_version, "machines", x->ns,
                          name, NULL) ||
                (opts = decide_drift_remediation_delete(m)) == NULL)
                continue;
            rem_delete_t *d = calloc(1, sizeof(*d));
            if (!d || !(d->nodepool = strdup(md->nodepool ? md->nodepool : "")) ||
                !(d->drift = strdup(md->drift)) || !(d->ms = strdup(x->name)) ||
                !(d->machine = strdup(name))) {
                rem_delete_free(d);
                json_decref(opts);
                ctl_arm_retry(c, r);
                continue;
            }
            d->c = c;
            ctl_write_t w = {.verb = CTL_WRITE_DELETE, .path = path, .doc = opts,
                             .what = "held-drift remediation", .done = deleted, .done_ud = d};
            if (ctl_write(&c->writer, &r->wt, &w) != 0) {
                rem_delete_free(d);
                ctl_arm_retry(c, r);
            }
            json_decref(opts);
        }
    }
    /* Nothing in flight and no retry: nothing to do until the MachineSet
     * says so again. With deletes in flight the record stays; the
     * MachineSet's next event (ctl_rem_enqueue()) forgets it. */
    if (r && r->wt.inflight == 0 && !ev_is_active(&r->timer))
        ctl_record_forget(c, r);
    list_free(x);
}

void ctl_reconcile_rem(ctl_controller_t *c, record_t *r)
{
    const kube_obj *o = kube_cache_get(&c->mss, r->ns, r->name);
    const decide_capi_t *ms = o ? o->data : NULL;
    char path[PATH_MAX_LEN], query[400];
    kube_error err;

    if (r->rem_listing)
        return; /* the answer decides */
    if (!c->opts.remediate_drift || !c->leading || !ms || !ms->remediating ||
        !held_drift_md(c, r->ns, ms)) {
        ctl_record_forget(c, r);
        return;
    }
    rem_list_t *x = calloc(1, sizeof(*x));
    if (!x || !(x->ns = strdup(r->ns)) || !(x->name = strdup(r->name)) ||
        kube_path(path, sizeof(path), CAPI_GROUP, c->capi_version, "machines", r->ns, NULL,
                  NULL) ||
        snprintf(query, sizeof(query), "labelSelector=cluster.x-k8s.io%%2Fset-name%%3D%s",
                 r->name) >= (int)sizeof(query)) {
        list_free(x);
        ctl_arm_retry(c, r);
        return;
    }
    x->c = c;
    if (kube_list(c->client, path, query, listed, x, &err)) {
        log_kv(LOG_WARN, "cannot list the Machines of a MachineSet to remediate", "namespace",
               r->ns, "machineset", r->name, "error", err.message, NULL);
        list_free(x);
        ctl_arm_retry(c, r);
        return;
    }
    r->rem_listing = true;
}
