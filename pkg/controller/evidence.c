/* evidence.c: the release waves across management clusters (DESIGN.md
 * 3.14, decide/evidence.h). The ConfigMaps of the evidence namespace that
 * carry the evidence label are watched; what another management cluster
 * published goes into the waves' index as more members, and when it
 * changes what the waves read, the held releases of later waves are
 * decided again, as for a cluster of this one. The leader publishes what
 * this management cluster's clusters tell the waves, at most once a
 * second and only when it changed, by server-side apply of its own
 * ConfigMap. */
#include "controller/internal.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/evidence.h"
#include "log/log.h"

#define PUBLISH_EVERY 1.0 /* seconds between publications, at most one */

typedef struct evm {
    unsigned system;
    char *ns, *cluster, *pool;
    wave_member_t m;
} evm_t;

/* What one evidence ConfigMap says, as extracted. */
typedef struct ctl_evidence {
    char source[WAVE_SOURCELEN]; /* "" the ConfigMap cannot be read */
    evm_t *v;
    size_t n, cap;
    bool oom;
    char *error;                 /* why it is ignored, NULL read */
} ctl_evidence_t;

static void keep(unsigned system, const char *ns, const char *cluster, const char *id,
                 const wave_member_t *m, void *ud)
{
    ctl_evidence_t *e = ud;
    if (e->oom)
        return;
    if (e->n == e->cap) {
        size_t cap = e->cap ? 2 * e->cap : 16;
        evm_t *v = realloc(e->v, cap * sizeof(*v));
        if (!v) {
            e->oom = true;
            return;
        }
        e->v = v;
        e->cap = cap;
    }
    evm_t *x = &e->v[e->n];
    x->system = system;
    x->ns = strdup(ns);
    x->cluster = strdup(cluster);
    x->pool = strdup(id);
    x->m = *m;
    if (!x->ns || !x->cluster || !x->pool) {
        free(x->ns);
        free(x->cluster);
        free(x->pool);
        e->oom = true;
        return;
    }
    e->n++;
}

/* Frees the members e holds and leaves it with none. */
static void clear_members(ctl_evidence_t *e)
{
    for (size_t i = 0; i < e->n; i++) {
        free(e->v[i].ns);
        free(e->v[i].cluster);
        free(e->v[i].pool);
    }
    free(e->v);
    e->v = NULL;
    e->n = e->cap = 0;
}

static void release_evidence(void *data, kube_intern *s, void *ud)
{
    ctl_evidence_t *e = data;
    (void)s;
    (void)ud;
    if (e) {
        clear_members(e);
        free(e->error);
    }
    free(e);
}

static int extract_evidence(const json_t *obj, kube_intern *s, void **out, void *ud)
{
    ctl_controller_t *c = ud;
    ctl_evidence_t *e = calloc(1, sizeof(*e));
    char err[512];
    const char *src = json_string_value(
        json_object_get(hcp_json_path(obj, "metadata.labels"), WAVE_EVIDENCE_LABEL));
    (void)s;
    if (!e)
        return -1;
    *out = e;
    if (!c->waves)
        return 0;
    long n = wave_evidence_read(obj, wave_index_config(c->waves), keep, e, err, sizeof(err));
    if (n < 0 || e->oom) { /* ignored whole: none of what it said is kept */
        clear_members(e);
        e->error = strdup(e->oom ? "out of memory" : err);
    }
    snprintf(e->source, sizeof(e->source), "%s", src ? src : "");
    return 0;
}

/* Puts what source says (e; NULL: nothing any more) into the index,
 * removes what it no longer says, and decides the held releases of later
 * waves again when that changed the waves. A document that could not be
 * read changes nothing: its source's last word stays (a halt it told is
 * not lifted by a broken copy). */
static void apply(ctl_controller_t *c, const ctl_evidence_t *e, const char *source)
{
    char prefix[WAVE_SOURCELEN + 1];
    int low = WAVE_UNASSIGNED, w;
    if (!c->waves || !source || !source[0] || (e && e->error))
        return;
    uint32_t round = wave_index_round(c->waves);
    for (size_t i = 0; e && i < e->n; i++) {
        const evm_t *x = &e->v[i];
        bool changed = false;
        if (wave_index_put(c->waves, x->system, x->ns, x->cluster, x->pool, &x->m, &changed) ==
            HCP_ENOMEM)
            log_kv(LOG_ERROR, "release waves: out of memory; evidence left out", "source",
                   source, NULL);
        if (changed && x->m.wave < low)
            low = x->m.wave;
    }
    snprintf(prefix, sizeof(prefix), "%s:", source);
    if (wave_index_sweep(c->waves, prefix, round, &w) && w < low)
        low = w;
    if (low != WAVE_UNASSIGNED)
        ctl_wave_told(c, low);
}

static const char *source_of(const kube_obj *o)
{
    const ctl_evidence_t *e = o->data;
    return e ? e->source : NULL;
}

static void told(const kube_obj *o)
{
    const ctl_evidence_t *e = o->data;
    if (e && e->error)
        log_kv(LOG_WARN, "release waves: evidence ignored", "namespace", o->ns, "name", o->name,
               "error", e->error, NULL);
}

static void evid_add(const kube_obj *o, void *ud)
{
    told(o);
    apply(ud, o->data, source_of(o));
}

static void evid_update(const kube_obj *old, const kube_obj *o, void *ud)
{
    const char *was = source_of(old), *now = source_of(o);
    told(o);
    if (was && was[0] && (!now || strcmp(was, now) != 0))
        apply(ud, NULL, was); /* relabelled: what it said as before goes */
    apply(ud, o->data, now);
}

static void evid_delete(const kube_obj *o, void *ud)
{
    apply(ud, NULL, source_of(o));
}

const kube_cache_ops ctl_evidence_ops = {extract_evidence, release_evidence, evid_add,
                                         evid_update, evid_delete};

/* ---- publishing ------------------------------------------------------------ */

static void published(kube_client *kc, const kube_error *err, json_t *obj, void *ud)
{
    ctl_controller_t *c = ud;
    (void)kc;
    (void)obj;
    c->evid_req = NULL;
    if (err) {
        log_kv(LOG_WARN, "release waves: publishing the evidence failed; trying again",
               "error", err->message, NULL);
        free(c->evid_sent);
        c->evid_sent = NULL;
        c->evid_dirty = true;
    }
}

static void publish(struct ev_loop *loop, ev_timer *t, int revents)
{
    ctl_controller_t *c = t->data;
    char path[PATH_MAX_LEN];
    size_t bytes;
    kube_error e;
    (void)loop;
    (void)revents;

    if (!c->leading || !c->evid_dirty || c->evid_req || !c->hcs.synced || !c->nps.synced)
        return;
    const wave_config_t *cfg = wave_index_config(c->waves);
    json_t *cm = wave_evidence_configmap(c->waves, &bytes);
    char *text = cm ? json_dumps(cm, JSON_COMPACT) : NULL;
    json_decref(cm);
    if (!text)
        return; /* out of memory: the next tick tries again */
    if (bytes > WAVE_EVIDENCE_MAX_BYTES) {
        if (!c->evid_too_big)
            log_kv(LOG_ERROR, "release waves: the evidence exceeds what a ConfigMap holds; not "
                              "published", "namespace", cfg->evidence_ns, NULL);
        c->evid_too_big = true;
        free(text);
        return;
    }
    c->evid_too_big = false;
    c->evid_dirty = false;
    if (c->evid_sent && strcmp(c->evid_sent, text) == 0) {
        free(text);
        return;
    }
    char name[80];
    snprintf(name, sizeof(name), WAVE_EVIDENCE_PREFIX "%s", cfg->evidence_name);
    kube_call call = {.verb = KUBE_VERB_APPLY, .path = path,
                      .query = "fieldManager=" KUBE_FIELD_MANAGER "&force=true",
                      .content_type = "application/apply-patch+yaml", .body = text,
                      .body_len = strlen(text), .on_done = published, .ud = c};
    if (kube_path(path, sizeof(path), NULL, "v1", "configmaps", cfg->evidence_ns, name, NULL) ||
        kube_client_call(c->client, &call, &c->evid_req, &e)) {
        c->evid_dirty = true;
        free(text);
        return;
    }
    free(c->evid_sent);
    c->evid_sent = text;
}

int ctl_evidence_start(ctl_controller_t *c, char *err, size_t errlen)
{
    const wave_config_t *cfg = wave_index_config(c->waves);
    int rc = ctl_start_watch(c, &c->w_evid, &c->evid, NULL, "v1", "configmaps",
                             cfg->evidence_ns, WAVE_EVIDENCE_LABEL, err, errlen);
    if (rc)
        return rc;
    c->evid_dirty = true;
    ev_timer_init(&c->evid_timer, publish, PUBLISH_EVERY, PUBLISH_EVERY);
    c->evid_timer.data = c;
    ev_timer_start(c->loop, &c->evid_timer);
    return 0;
}

void ctl_evidence_stop(ctl_controller_t *c)
{
    if (ev_is_active(&c->evid_timer))
        ev_timer_stop(c->loop, &c->evid_timer);
    kube_request_cancel(c->evid_req);
    c->evid_req = NULL;
    free(c->evid_sent);
    c->evid_sent = NULL;
}
