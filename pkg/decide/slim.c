/* slim.c: slim views of HostedClusters, NodePools and CAPI objects. */
#include "decide/slim.h"
#include "decide/cpfirst.h"
#include "decide/cmhold.h"
#include "decide/drift.h"
#include "decide/plan.h"
#include "decide/version.h"

#include "base/error.h"
#include "base/json.h"

#include <stdlib.h>
#include <string.h>

#include <zlib.h>

static char *dup_or_null(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *annotation(const json_t *obj, const char *key)
{
    const json_t *ann = hcp_json_path(obj, "metadata.annotations");
    return json_is_object(ann) ? json_string_value(json_object_get(ann, key)) : NULL;
}

/* obj carries our opt-in label with our value. */
static bool optin_label(const json_t *obj)
{
    const json_t *labels = hcp_json_path(obj, "metadata.labels");
    const char *v = json_is_object(labels)
                        ? json_string_value(json_object_get(labels, DECIDE_OPTIN_LABEL))
                        : NULL;
    return v && strcmp(v, DECIDE_OPTIN_VALUE) == 0;
}

/* Finds condition `type` in a conditions array; borrowed or NULL. */
static const json_t *find_condition(const json_t *conds, const char *type)
{
    size_t i;
    const json_t *c;
    if (!json_is_array(conds))
        return NULL;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        if (t && strcmp(t, type) == 0)
            return c;
    }
    return NULL;
}

static bool condition_true(const json_t *conds, const char *type)
{
    const json_t *c = find_condition(conds, type);
    const char *st = c ? json_string_value(json_object_get(c, "status")) : NULL;
    return st && strcmp(st, "True") == 0;
}

static int read_cond(const json_t *conds, const char *type, decide_seen_cond_t *out)
{
    const json_t *c = find_condition(conds, type);
    memset(out, 0, sizeof(*out));
    if (!c)
        return 0;
    const char *st = json_string_value(json_object_get(c, "status"));
    const char *reason = json_string_value(json_object_get(c, "reason"));
    const char *message = json_string_value(json_object_get(c, "message"));
    out->present = true;
    out->status = st && strcmp(st, "True") == 0;
    out->reason = dup_or_null(reason);
    out->message = dup_or_null(message);
    if ((reason && !out->reason) || (message && !out->message))
        return -1;
    return 0;
}

static void cond_free(decide_seen_cond_t *c)
{
    free(c->reason);
    free(c->message);
}

static int managed_extract(const json_t *obj, decide_managed_t *m)
{
    stanza_parse(obj, &m->stanza); /* an invalid stanza is kept, marked invalid */
    json_t *gen = hcp_json_path(obj, "metadata.generation");
    m->generation = json_is_integer(gen) ? json_integer_value(gen) : 0;
    json_t *conds = hcp_json_path(obj, "status.conditions");
    m->conditions = json_is_array(conds) ? json_incref(conds) : NULL;
    if (read_cond(conds, "ChangesPaused", &m->paused) ||
        read_cond(conds, "ChangesPending", &m->pending) ||
        read_cond(conds, "HostedClusterVersionProjected", &m->projected) ||
        read_cond(conds, "UnhealthyAfterChange", &m->after) ||
        decide_audit_extract(obj, &m->audit))
        return -1;
    return 0;
}

/* Words that every condition list and changeManagement status repeats: a
 * preset dictionary lets deflate refer to them from the first condition on,
 * which matters for texts of a few kilobytes. The most frequent come last
 * (nearest to the text, the cheapest to refer to). */
static const char zdict[] =
    "\"observedGeneration\":1,\"reason\":\"ReconciliationActive\"\"ValidConfiguration\""
    "\"Available\",\"Degraded\",\"Progressing\",\"Ready\",\"UpdatingVersion\","
    "\"UpdatingConfig\",\"ChangesPaused\",\"ChangesPending\",\"HostedClusterVersionProjected\","
    "\"strategy\":\"ByPolicy\",\"policy\":\"nextWindow\":{\"start\":\"end\":"
    "\"InMaintenanceWindow\",\"OutsideMaintenanceWindow\",\"message\":\"The \" is \"AsExpected\""
    "\"status\":\"False\",\"status\":\"True\",\"reason\":\"AsExpected\",\"message\":\"\""
    "\"lastTransitionTime\":\"20\"},{\"type\":\"";

/* Compact JSON text of v, deflated. */
static int pack_json(const json_t *v, decide_packed_t *out)
{
    char *text = json_dumps(v, JSON_COMPACT);
    int rc;
    if (!text)
        return -1;
    rc = decide_pack(text, strlen(text), zdict, out);
    free(text);
    return rc;
}

static void managed_free(decide_managed_t *m)
{
    json_decref(m->conditions);
    decide_packed_free(&m->conditions_z);
    cond_free(&m->paused);
    cond_free(&m->pending);
    cond_free(&m->projected);
    cond_free(&m->after);
    decide_audit_free(&m->audit);
}

int decide_managed_compact(decide_managed_t *m)
{
    decide_packed_t conds = {0};
    if (m->conditions && pack_json(m->conditions, &conds))
        return HCP_ENOMEM;
    if (m->conditions) {
        decide_packed_free(&m->conditions_z);
        m->conditions_z = conds;
        json_decref(m->conditions);
        m->conditions = NULL;
    }
    return 0;
}

/* A tree for the packed text, or a new reference to tree when there is none. */
static int expand_one(json_t *tree, const decide_packed_t *p, json_t **out)
{
    if (!p->z) {
        *out = json_incref(tree);
        return 0;
    }
    char *text = decide_unpack(p, zdict);
    *out = text ? json_loadb(text, p->len, 0, NULL) : NULL;
    free(text);
    return *out ? 0 : -1;
}

int decide_managed_expand(const decide_managed_t *m, decide_managed_t *view)
{
    *view = *m;
    memset(&view->conditions_z, 0, sizeof(view->conditions_z));
    view->conditions = NULL;
    if (expand_one(m->conditions, &m->conditions_z, &view->conditions)) {
        decide_managed_view_free(view);
        return HCP_EPARSE;
    }
    return 0;
}

void decide_managed_view_free(decide_managed_t *view)
{
    json_decref(view->conditions);
    view->conditions = NULL;
}

static int spec_request(const json_t *obj, const char *key, json_t **req_out, bool *bad,
                        char **summary);

decide_hc_t *decide_hc_extract(const json_t *obj)
{
    decide_hc_t *hc = calloc(1, sizeof(*hc));
    if (!hc)
        return NULL;
    if (managed_extract(obj, &hc->m))
        goto fail;
    const char *infra = hcp_json_str(obj, "spec.infraID");
    const char *cp = hcp_json_str(obj, "spec.controlPlaneRelease.image");
    const char *rel = cp && *cp ? cp : hcp_json_str(obj, "spec.release.image");
    const char *desired = hcp_json_str(obj, "status.version.desired.image");
    hc->infra_id = dup_or_null(infra);
    hc->release_image = dup_or_null(rel);
    hc->inputs_fp = decide_inputs_fp(obj, decide_hc_held_fields);
    hc->desired_image = dup_or_null(desired);
    if ((infra && !hc->infra_id) || (rel && !hc->release_image) || (desired && !hc->desired_image))
        goto fail;
    const json_t *ann = hcp_json_path(obj, "metadata.annotations");
    const char *held[4] = {hcp_json_str(obj, "spec.release.image"), cp,
                           json_string_value(json_object_get(ann,
                                                             DECIDE_REQUESTED_RELEASE_ANNOTATION)),
                           json_string_value(json_object_get(
                               ann, DECIDE_REQUESTED_CP_RELEASE_ANNOTATION))};
    char **to[4] = {&hc->spec_release, &hc->spec_cp_release, &hc->requested_release,
                    &hc->requested_cp_release};
    for (int i = 0; i < 4; i++)
        if (held[i] && (*to[i] = strdup(held[i])) == NULL)
            goto fail;
    json_t *hist = hcp_json_path(obj, "status.version.history");
    const char *state = json_is_array(hist) ? json_string_value(json_object_get(
                                                  json_array_get(hist, 0), "state"))
                                            : NULL;
    hc->history_partial = state && strcmp(state, "Partial") == 0;
    if (decide_cp_completed(obj, &hc->cp_reported, hc->cp_completed, sizeof(hc->cp_completed),
                            &hc->cp_completed_images))
        goto fail;
    hc->optin_label = optin_label(obj);
    decide_health_extract(obj, false, &hc->m.health);
    if (spec_request(obj, DECIDE_REQUESTED_HC_SPEC_ANNOTATION, &hc->requested_fields,
                     &hc->requested_fields_bad, &hc->requested_fields_summary))
        goto fail;
    return hc;
fail:
    decide_hc_free(hc);
    return NULL;
}

void decide_hc_free(decide_hc_t *hc)
{
    if (!hc)
        return;
    managed_free(&hc->m);
    free(hc->infra_id);
    free(hc->release_image);
    free(hc->desired_image);
    free(hc->spec_release);
    free(hc->spec_cp_release);
    free(hc->requested_release);
    free(hc->requested_cp_release);
    free(hc->cp_completed_images);
    json_decref(hc->requested_fields);
    free(hc->requested_fields_summary);
    free(hc->member);
    free(hc);
}

const char *const decide_np_held_fields[] = {
    "release", "config", "tuningConfig",
    "platform.aws.ami", "platform.aws.instanceType", "platform.aws.instanceProfile",
    "platform.aws.subnet", "platform.aws.securityGroups", "platform.aws.rootVolume",
    "platform.aws.placement",
    "platform.azure", "platform.kubevirt", "platform.openstack", "platform.agent",
    "platform.powervs", NULL};

/* The held request in words: "release <image>" first, then the other
 * top-level fields it changes ("config", "platform"), comma-separated. */
static char *request_summary(const json_t *req)
{
    char buf[768];
    size_t n = 0;
    const char *k;
    const json_t *v;
    const char *img = hcp_json_str(req, "release.image");

    buf[0] = '\0';
    if (json_object_get(req, "release"))
        n = (size_t)snprintf(buf, sizeof(buf), "release %s", img ? img : "(removed)");
    json_object_foreach((json_t *)req, k, v) {
        if (strcmp(k, "release") == 0 || n >= sizeof(buf))
            continue;
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", k);
    }
    return strdup(buf[0] ? buf : "a change");
}

/* A held request recorded as a merge patch of spec in annotation key:
 * *req the object (NULL when none or unreadable), *bad when the annotation
 * is there but is no JSON object of spec fields, *summary it in words. */
static int spec_request(const json_t *obj, const char *key, json_t **req_out, bool *bad,
                        char **summary)
{
    const char *text = annotation(obj, key);
    json_t *req;
    char msg[256];

    if (text == NULL)
        return 0;
    req = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
    if (!json_is_object(req) || json_object_size(req) == 0) {
        json_decref(req);
        *bad = true;
        snprintf(msg, sizeof(msg),
                 "an unreadable request (annotation %s is not a JSON object of spec fields)", key);
        *summary = strdup(msg);
        return *summary ? 0 : -1;
    }
    *req_out = req;
    *summary = request_summary(req);
    return *summary ? 0 : -1;
}

/* The held request of a NodePool (DECIDE_REQUESTED_NODEPOOL_ANNOTATION). */
static int np_request(const json_t *obj, decide_np_t *np)
{
    return spec_request(obj, DECIDE_REQUESTED_NODEPOOL_ANNOTATION, &np->requested,
                        &np->requested_bad, &np->requested_summary);
}

uint64_t decide_inputs_fp(const json_t *obj, const char *const fields[])
{
    /* {field: value} of the fields present, as canonical text, hashed as
     * a release is (decide_release_hash(): FNV-1a, never 0). */
    const json_t *spec = hcp_json_path(obj, "spec");
    json_t *doc = json_object();
    for (size_t i = 0; doc && fields[i]; i++) {
        json_t *v = hcp_json_path(spec, fields[i]);
        if (v && json_object_set(doc, fields[i], v)) {
            json_decref(doc);
            doc = NULL;
        }
    }
    char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(doc);
    /* out of memory: a value no template was made from, so nothing is
     * taken for drift */
    uint64_t h = text ? decide_release_hash(text) : 1;
    free(text);
    return h;
}

uint64_t decide_pool_inputs_fp(const decide_np_t *np, const decide_hc_t *hc)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%016llx/%016llx", (unsigned long long)np->inputs_fp,
             (unsigned long long)(hc ? hc->inputs_fp : 0));
    return decide_release_hash(buf);
}

decide_np_t *decide_np_extract(const json_t *obj)
{
    decide_np_t *np = calloc(1, sizeof(*np));
    if (!np)
        return NULL;
    if (managed_extract(obj, &np->m))
        goto fail;
    const char *cluster = hcp_json_str(obj, "spec.clusterName");
    np->cluster_name = dup_or_null(cluster);
    if (cluster && !np->cluster_name)
        goto fail;
    const char *ut = hcp_json_str(obj, "spec.management.upgradeType");
    np->in_place = ut && strcmp(ut, "InPlace") == 0;
    np->inputs_fp = decide_inputs_fp(obj, decide_np_held_fields);
    np->updating_version = condition_true(np->m.conditions, "UpdatingVersion");
    np->updating_config = condition_true(np->m.conditions, "UpdatingConfig");
    decide_health_extract(obj, true, &np->m.health);
    np->optin_label = optin_label(obj);
    const char *image = hcp_json_str(obj, "spec.release.image");
    char version[DECIDE_VERSIONLEN];
    const char *status_version = hcp_json_str(obj, "status.version");
    np->release_version = decide_release_version(image, version, sizeof(version)) ? strdup(version) : NULL;
    np->status_version = status_version && *status_version ? strdup(status_version) : NULL;
    if ((version[0] && !np->release_version) ||
        (status_version && *status_version && !np->status_version))
        goto fail;
    if (np_request(obj, np))
        goto fail;
    bool oom;
    np->config_names = decide_np_config_names(obj, &oom);
    if (oom)
        goto fail;
    return np;
fail:
    decide_np_free(np);
    return NULL;
}

void decide_np_free(decide_np_t *np)
{
    if (!np)
        return;
    managed_free(&np->m);
    free(np->cluster_name);
    free(np->release_version);
    free(np->status_version);
    json_decref(np->requested);
    free(np->requested_summary);
    free(np->config_names);
    free(np);
}

static int64_t int_or(const json_t *obj, const char *path, int64_t dflt)
{
    json_t *v = hcp_json_path(obj, path);
    return json_is_integer(v) ? json_integer_value(v) : dflt;
}

/* Machines on an older template: fewer in the newest MachineSet than in
 * all of them. Without status.replicas there is no count of all: Cluster
 * API v1.14's first status of a new MachineDeployment carries v1beta1's
 * updatedReplicas 0 before it counts any machine, and spec.replicas is
 * what is being created, not an older template's machines (a new pool, or
 * a scale-up, is no rollout). */
static bool older_template_machines(const decide_capi_t *c)
{
    return c->updated >= 0 && c->existing > c->updated;
}

decide_capi_t *decide_capi_extract(decide_kind_t kind, const json_t *obj)
{
    decide_capi_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    const json_t *ann = hcp_json_path(obj, "metadata.annotations");
    c->paused = json_is_object(ann) && json_object_get(ann, DECIDE_PAUSED_ANNOTATION) != NULL;
    const char *marker = annotation(obj, DECIDE_MARKER_ANNOTATION);
    c->marker = marker && strcmp(marker, DECIDE_MARKER_VALUE) == 0;
    c->spec_paused = json_is_true(hcp_json_path(obj, "spec.paused"));
    const char *spec_marker = annotation(obj, DECIDE_SPEC_MARKER_ANNOTATION);
    c->spec_marker = spec_marker && strcmp(spec_marker, DECIDE_MARKER_VALUE) == 0;
    c->optin_label = optin_label(obj);
    const char *np = annotation(obj, DECIDE_NODEPOOL_ANNOTATION);
    const char *held = annotation(obj, DECIDE_HELD_TEMPLATE_ANNOTATION);
    c->nodepool = dup_or_null(np);
    c->held = dup_or_null(held);
    if ((np && !c->nodepool) || (held && !c->held)) {
        decide_capi_free(c);
        return NULL;
    }
    /* The machines of the newest MachineSet (the one matching the
     * MachineDeployment's template): Cluster API v1.14 computes it as
     * GetActualReplicaCountForMachineSets({newMS}) (core/reconcilers/
     * machinedeployment/machinedeployment_sync.go, calculateV1Beta1Status)
     * and serves it as v1beta1 status.updatedReplicas and v1beta2
     * status.deprecated.v1beta1.updatedReplicas; status.replicas counts the
     * machines of all its MachineSets (machinedeployment_status.go,
     * setReplicas). v1beta2 status.upToDateReplicas counts machines whose
     * UpToDate condition is True, which a new machine gets only after it
     * exists: it lags during creation and scale-up, so it is read only
     * where the other is not served.
     *
     * A MachineSet has no such count. HyperShift's InPlace MachineSet is a
     * stand-alone one, whose machines Cluster API never gives an UpToDate
     * condition (core/reconcilers/machine/machine_controller_status.go,
     * setUpToDateCondition: "ms == nil || md == nil" returns), so its
     * status.upToDateReplicas stays 0 (core/reconcilers/machineset/
     * machineset_controller_status.go, setReplicas) and reading it would
     * make every InPlace pool look mid-rollout; its rollout is the
     * target config version alone (below). */
    c->updated = -1;
    if (kind != DECIDE_MS) {
        c->updated = int_or(obj, "status.updatedReplicas", -1);
        if (c->updated < 0)
            c->updated = int_or(obj, "status.deprecated.v1beta1.updatedReplicas", -1);
        if (c->updated < 0)
            c->updated = int_or(obj, "status.upToDateReplicas", -1);
    }
    c->existing = int_or(obj, "status.replicas", -1);
    /* Machines in a MachineSet other than the newest: a Replace rollout.
     * A scale-up adds machines to the newest, so it is not one. */
    const char *target = annotation(obj, DECIDE_TARGET_CONFIG_ANNOTATION);
    const char *current = annotation(obj, DECIDE_CURRENT_CONFIG_ANNOTATION);
    c->rolling = older_template_machines(c) || (target && current && strcmp(target, current) != 0);
    /* A drift held under our OnDelete (drift.h): the machines of the
     * older template are waiting, not rolling. */
    const char *strategy = kind != DECIDE_MS ? decide_md_strategy(obj) : NULL;
    c->on_delete = strategy && strcmp(strategy, DECIDE_ON_DELETE) == 0;
    const char *drift = kind != DECIDE_MS ? annotation(obj, DECIDE_HELD_DRIFT_ANNOTATION) : NULL;
    if (drift) {
        decide_drift_t d;
        int prc = decide_drift_parse(drift, &d);
        if (prc == HCP_ENOMEM) {
            decide_capi_free(c);
            return NULL;
        }
        /* An unreadable record still holds (when in doubt, hold) and
         * says so; its release writes HyperShift's default. */
        c->drift = prc == 0 && d.input && d.input[0] ? d.input : strdup("an unreadable record");
        c->drift_strategy = prc == 0 ? d.strategy : NULL;
        c->drift_since = prc == 0 ? d.since : NULL;
        c->drift_inputs = prc == 0 ? d.inputs : 0;
        if (prc == 0 && c->drift != d.input)
            free(d.input);
        if (!c->drift) {
            decide_capi_free(c);
            return NULL;
        }
        if (c->on_delete)
            c->rolling = false;
    }
    if (kind == DECIDE_MS)
        c->remediating = decide_ms_remediating(obj);
    else
        c->template_inputs =
            decide_inputs_parse(annotation(obj, DECIDE_TEMPLATE_INPUTS_ANNOTATION));
    c->target = target ? (uint64_t)crc32(0, (const Bytef *)target, (uInt)strlen(target)) + 1 : 0;
    json_t *labels = hcp_json_path(obj, "metadata.labels");
    const char *dep = json_string_value(json_object_get(labels, "cluster.x-k8s.io/deployment-name"));
    if (dep && !(c->deployment = strdup(dep))) {
        decide_capi_free(c);
        return NULL;
    }
    c->revision = -1;
    const char *rev = annotation(obj, "machinedeployment.clusters.x-k8s.io/revision");
    if (rev && *rev && strlen(rev) < 19 && strspn(rev, "0123456789") == strlen(rev))
        c->revision = strtoll(rev, NULL, 10);
    return c;
}

void decide_capi_free(decide_capi_t *c)
{
    if (!c)
        return;
    free(c->nodepool);
    free(c->held);
    free(c->deployment);
    free(c->drift);
    free(c->drift_strategy);
    free(c->drift_since);
    free(c);
}

static bool differs(const char *requested, const char *running)
{
    return requested && (!running || strcmp(requested, running) != 0);
}

bool decide_hc_held(const decide_hc_t *hc)
{
    return hc->requested_release || hc->requested_cp_release;
}

bool decide_hc_pending(const decide_hc_t *hc)
{
    if (hc->history_partial || differs(hc->requested_release, hc->spec_release) ||
        differs(hc->requested_cp_release, hc->spec_cp_release))
        return true;
    if (!hc->release_image || !*hc->release_image)
        return false;
    return !hc->desired_image || strcmp(hc->release_image, hc->desired_image) != 0;
}

const char *const decide_hc_held_fields[] = {
    "pullSecret", "additionalTrustBundle", "imageContentSources", "configuration.proxy",
    "configuration.image", NULL};

bool decide_hc_fields_held(const decide_hc_t *hc)
{
    return hc->requested_fields != NULL;
}

bool decide_np_held(const decide_np_t *np)
{
    return np->requested != NULL;
}

bool decide_np_pending(const decide_np_t *np, const decide_capi_t *md)
{
    if (np->requested || np->requested_bad || np->updating_version || np->updating_config ||
        (md && (md->held || md->drift)))
        return true;
    /* The release asked for is not yet the one the pool reports running.
     * Versions compare by semver precedence (4.17.1+build is 4.17.1); text
     * that is no version compares as text. No status.version yet (a new
     * pool) or no version in the image's tag (pinned by digest) says
     * nothing either way. */
    if (np->release_version && np->status_version) {
        int cmp;
        if (decide_version_cmp(np->release_version, np->status_version, &cmp))
            cmp = strcmp(np->release_version, np->status_version);
        if (cmp != 0)
            return true;
    }
    return md && older_template_machines(md);
}

void *decide_view_extract(decide_kind_t kind, const json_t *obj)
{
    decide_managed_t *m = NULL;
    void *v;
    if (kind == DECIDE_HC) {
        decide_hc_t *hc = decide_hc_extract(obj);
        v = hc;
        m = hc ? &hc->m : NULL;
    } else if (kind == DECIDE_NP) {
        decide_np_t *np = decide_np_extract(obj);
        v = np;
        m = np ? &np->m : NULL;
    } else {
        return decide_capi_extract(kind, obj);
    }
    if (m && decide_managed_compact(m) == 0)
        return v;
    decide_view_free(kind, v);
    return NULL;
}

void decide_view_free(decide_kind_t kind, void *view)
{
    if (kind == DECIDE_HC)
        decide_hc_free(view);
    else if (kind == DECIDE_NP)
        decide_np_free(view);
    else
        decide_capi_free(view);
}
