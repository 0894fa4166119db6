/* writes: the writes a plan asks for, in the order they go. See writes.h. */
#include "decide/writes.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "decide/decide.h"
#include "decide/drift.h"
#include "decide/hcfields.h"

/* A NodePool whose MachineDeployment holds a drift (drift.h). */
static const decide_capi_t *drift_held(const decide_plan_t *p)
{
    const decide_capi_t *md = p->kind == DECIDE_NP && p->capi_kind == DECIDE_MD ? p->capi.data
                                                                                 : NULL;
    return md && md->drift ? md : NULL;
}

/* A held drift whose template the NodePool's or HostedCluster's requested
 * inputs no longer match: a request made it after all, which the webhook's
 * cache had not seen yet (drift.h). It goes as the request did. */
static bool drift_requested(const decide_plan_t *p)
{
    const decide_capi_t *md = drift_held(p);
    return md && md->drift_inputs && p->hc && /* no HostedCluster read: nothing to compare */
           md->drift_inputs != decide_pool_inputs_fp(p->self.data, p->hc);
}

bool decide_releases_held(const decide_plan_t *p)
{
    if (p->kind == DECIDE_HC && p->fields_go)
        return true; /* the common window of the HostedCluster and its NodePools is open */
    if (drift_requested(p))
        return true;
    if (p->d.restricted)
        return false;
    return p->kind == DECIDE_HC ? decide_hc_held(p->self.data)
                                : decide_np_held(p->self.data) || drift_held(p);
}

/* The patch that lets a HostedCluster's held requests through: the release
 * while its own window is open, the fields that roll every NodePool while
 * the common window is (hcfields.h). */
static json_t *hc_release_patch(const decide_plan_t *p)
{
    json_t *patch = !p->d.restricted ? decide_release_patch(p->self.data, p->self.rv) : NULL;
    if (p->fields_go)
        patch = decide_hc_fields_patch(patch, p->self.data, p->self.rv);
    return patch;
}

static void add(decide_writes_t *ws, decide_write_target_t target, decide_write_kind_t kind,
                json_t *patch, const char *what, bool first)
{
    ws->w[ws->n++] = (decide_write_t){target, kind, patch, what, first};
}

/* A settled opted-in pool's MachineDeployment without the inputs its
 * template was made from gets them (drift.h): nothing held, pending or
 * rolling, so its template is the one its inputs make. */
static bool seeds_inputs(const decide_plan_t *p)
{
    const decide_capi_t *md = p->capi.data;
    return p->kind == DECIDE_NP && p->capi_kind == DECIDE_MD && md && p->opted_in &&
           !md->template_inputs && !md->drift && !md->held && !md->rolling && !p->d.pending &&
           !decide_np_held(p->self.data);
}

/* 1. The CAPI object: the pause, a NodePool's opt-in label and its
 * template's inputs, in one patch; none while a held change goes (it goes
 * alone). */
static int capi_write(const decide_plan_t *p, decide_writes_t *ws)
{
    bool hc = p->kind == DECIDE_HC;
    const decide_capi_t *md = drift_held(p);
    if (ws->releasing && md) {
        /* A held drift let through: HyperShift's strategy back, the record
         * dropped (drift.h). */
        json_t *patch = decide_drift_release_patch(p->capi_v1beta2, md->drift_strategy,
                                                   decide_pool_inputs_fp(p->self.data, p->hc),
                                                   p->capi.rv);
        if (!patch)
            return HCP_ENOMEM;
        add(ws, DECIDE_WRITE_CAPI, DECIDE_WRITE_METADATA, patch, "held drift", true);
        return 0;
    }
    if (!p->capi.data || ws->releasing)
        return 0;
    json_t *patch = p->d.action != DECIDE_PAUSE_NONE ? decide_pause_patch(p->d.action, p->capi.rv)
                                                      : NULL;
    if (!hc && p->d.spec_pause)
        patch = decide_spec_pause_patch(patch, p->d.spec_pause > 0, p->capi.rv);
    if (!hc && p->optin_label)
        patch = decide_label_patch(patch, p->optin_label > 0, p->capi.rv);
    if (!hc && seeds_inputs(p))
        patch = decide_inputs_patch(patch, decide_pool_inputs_fp(p->self.data, p->hc),
                                    p->capi.rv);
    if (patch)
        add(ws, DECIDE_WRITE_CAPI, DECIDE_WRITE_METADATA, patch,
            p->d.action != DECIDE_PAUSE_NONE || p->d.spec_pause ? "pause" : "opt-in label",
            false);
    return 0;
}

/* The record that the override let the change past the release waves
 * (audit.h), in the write that lets it through. Returns HCP_ENOMEM with
 * patch released, else 0. */
static int skipped_record(const decide_plan_t *p, json_t *patch)
{
    char what[DECIDE_AUDIT_VALLEN], text[DECIDE_AUDIT_VALLEN + 64];
    json_t *meta = json_object_get(patch, "metadata"), *ann;
    snprintf(what, sizeof(what), "release waves: %.200s", p->d.wave.why);
    decide_audit_skipped(p->managed->audit.override_at, what, text, sizeof(text));
    if (!meta && json_object_set_new(patch, "metadata", meta = json_object()))
        goto fail;
    if (!(ann = json_object_get(meta, "annotations")) &&
        json_object_set_new(meta, "annotations", ann = json_object()))
        goto fail;
    if (json_object_set_new(ann, DECIDE_OVERRIDE_SKIPPED_ANNOTATION, json_string(text)) == 0)
        return 0;
fail:
    json_decref(patch);
    return HCP_ENOMEM;
}

/* 2. The object itself: the held change let through, and its opt-in
 * label. Returns true when it writes. */
static bool self_write(const decide_plan_t *p, decide_writes_t *ws)
{
    bool hc = p->kind == DECIDE_HC;
    json_t *patch = !ws->releasing ? NULL
                    : hc           ? hc_release_patch(p)
                                   : decide_np_request_patch(p->self.data, p->self.rv);
    const char *what = patch ? (hc ? "held release" : "held request") : "opt-in label";
    bool first = patch != NULL; /* not a label alone (a drift goes on the CAPI object) */
    if (patch && p->d.wave_skipped && skipped_record(p, patch))
        return false;
    int label = hc ? p->optin_label : p->np_label;
    if (label)
        patch = decide_label_patch(patch, label > 0, p->self.rv);
    if (!patch)
        return false;
    add(ws, DECIDE_WRITE_SELF, DECIDE_WRITE_METADATA, patch, what, first);
    return true;
}

/* 3. Its status conditions. */
static int status_write(const decide_plan_t *p, sched_time_t now, decide_writes_t *ws)
{
    decide_managed_t view;
    json_t *sp = NULL;
    if (decide_managed_expand(p->managed, &view))
        return HCP_EPARSE;
    decide_status_patch(&view, &p->d, p->self.rv, p->kind == DECIDE_NP, now, &sp);
    decide_managed_view_free(&view);
    if (sp)
        add(ws, DECIDE_WRITE_SELF, DECIDE_WRITE_STATUS, sp, "status", false);
    return 0;
}

int decide_writes(const decide_plan_t *p, sched_time_t now, decide_writes_t *out)
{
    memset(out, 0, sizeof(*out));
    out->releasing = decide_releases_held(p);
    int rc = capi_write(p, out);
    if (rc)
        return rc;
    if (self_write(p, out))
        return 0; /* the status write would replace the same version: next plan */
    if (out->releasing)
        return 0; /* a release goes alone: status with the next plan */
    return status_write(p, now, out);
}

void decide_writes_free(decide_writes_t *ws)
{
    for (int i = 0; i < ws->n; i++)
        json_decref(ws->w[i].patch);
    ws->n = 0;
}
