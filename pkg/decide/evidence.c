/* evidence.c: the release waves' evidence across management clusters
 * (evidence.h). */
#include "decide/evidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/json.h"
#include "decide/decide.h"
#include "decide/gate.h"

static const char *const systems[WAVE_SYSTEMS] = {"ControlPlane", "NodePool"};

/* ---- publishing ---------------------------------------------------------- */

typedef struct own {
    unsigned system;
    const char *key;
    size_t cluster_len;
    const wave_member_t *m;
} own_t;

typedef struct owns {
    own_t *v;
    size_t n, cap;
    bool oom;
} owns_t;

static void collect(unsigned system, const char *key, size_t cluster_len,
                    const wave_member_t *m, void *ud)
{
    owns_t *o = ud;
    if (strchr(key, ':'))
        return; /* another management cluster's: it publishes its own */
    if (o->n == o->cap) {
        size_t cap = o->cap ? 2 * o->cap : 64;
        own_t *v = realloc(o->v, cap * sizeof(*v));
        if (!v) {
            o->oom = true;
            return;
        }
        o->v = v;
        o->cap = cap;
    }
    o->v[o->n++] = (own_t){system, key, cluster_len, m};
}

static int own_cmp(const void *a, const void *b)
{
    const own_t *x = a, *y = b;
    if (x->system != y->system)
        return x->system < y->system ? -1 : 1;
    return strcmp(x->key, y->key);
}

static json_t *member_doc(const wave_config_t *cfg, const own_t *o)
{
    const wave_member_t *m = o->m;
    char cluster[WAVE_KEYLEN];
    json_t *done = json_array();
    snprintf(cluster, sizeof(cluster), "%.*s", (int)o->cluster_len, o->key);
    for (size_t i = 0; done && i < m->n_done && i < WAVE_HISTORY; i++)
        json_array_append_new(done, json_pack("{s:s, s:o}", "version", m->done[i], "at",
                                              decide_json_time(m->done_at[i])));
    return json_pack("{s:s, s:s, s:s, s:o, s:b, s:b, s:s, s:o, s:s, s:o}", "system",
                     systems[o->system], "cluster", cluster, "pool",
                     o->key + o->cluster_len + 1, "wave",
                     m->wave >= 0 && m->wave < (int)cfg->n ? json_string(cfg->waves[m->wave].name)
                                                           : json_null(),
                     "optedIn", m->opted_in, "healthy", m->healthy, "why", m->why,
                     "unhealthySince", m->healthy ? json_null() : decide_json_time(m->unhealthy_since),
                     "running", m->running, "completed", done);
}

json_t *wave_evidence_configmap(const wave_index_t *ix, size_t *bytes)
{
    const wave_config_t *cfg = wave_index_config(ix);
    owns_t o = {0};
    json_t *members, *doc, *cm = NULL;
    char name[80], *text = NULL;

    if (bytes)
        *bytes = 0;
    if (!cfg->evidence_name[0])
        return NULL;
    wave_index_foreach(ix, collect, &o);
    if (o.oom || !(members = json_array()))
        goto done;
    if (o.n > 1)
        qsort(o.v, o.n, sizeof(*o.v), own_cmp);
    for (size_t i = 0; i < o.n; i++)
        if (json_array_append_new(members, member_doc(cfg, &o.v[i]))) {
            json_decref(members);
            goto done;
        }
    doc = json_pack("{s:s, s:o}", "source", cfg->evidence_name, "members", members);
    text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    if (!text)
        goto done;
    if (bytes)
        *bytes = strlen(text);
    snprintf(name, sizeof(name), WAVE_EVIDENCE_PREFIX "%s", cfg->evidence_name);
    cm = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, s:{s:s}}", "apiVersion", "v1", "kind",
                   "ConfigMap", "metadata", "name", name, "namespace", cfg->evidence_ns,
                   "labels", WAVE_EVIDENCE_LABEL, cfg->evidence_name, "data",
                   WAVE_EVIDENCE_KEY, text);
done:
    free(text);
    free(o.v);
    return cm;
}

/* ---- reading -------------------------------------------------------------- */

/* [a-z0-9-], 1 to max bytes, not starting or ending with '-'. */
static bool label_ok(const char *s, size_t max)
{
    size_t len = s ? strlen(s) : 0;
    if (len == 0 || len > max || s[0] == '-' || s[len - 1] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

/* A DNS subdomain (a HostedCluster's or NodePool's name): [a-z0-9.-]. */
static bool subdomain_ok(const char *s, size_t len)
{
    if (len == 0 || len > 253)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-' ||
              s[i] == '.'))
            return false;
    return true;
}

/* A version as the history names it: 1 to WAVE_MVERLEN - 1 of
 * [0-9A-Za-z.+-]. */
static bool version_ok(const char *s, bool empty_ok)
{
    size_t len = s ? strlen(s) : 0;
    if (!s || len >= WAVE_MVERLEN || (len == 0 && !empty_ok))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
              (s[i] >= 'A' && s[i] <= 'Z') || s[i] == '.' || s[i] == '+' || s[i] == '-'))
            return false;
    return true;
}

static int bad(char *err, size_t errlen, const char *at, const char *what)
{
    return hcp_errf(err, errlen, HCP_EINVAL, WAVE_EVIDENCE_KEY " %s: %s", at, what);
}

static int wave_named(const wave_config_t *cfg, const char *name)
{
    for (size_t i = 0; i < cfg->n; i++)
        if (strcmp(cfg->waves[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* One member: its fields into *m, its namespace, cluster and pool. Returns
 * 1 read, 0 to ignore (a wave the reader does not know), or an error. */
static int read_member(const json_t *e, const char *at, const wave_config_t *cfg,
                       unsigned *system, char *ns, char *cluster, char *pool, wave_member_t *m,
                       char *err, size_t errlen)
{
    static const char *const keys[] = {"system", "cluster", "pool", "wave", "optedIn",
                                       "healthy", "why", "unhealthySince", "running",
                                       "completed", NULL};
    const char *k, *s, *slash;
    const json_t *v, *done, *x;
    char where[96];
    size_t i;

    if (!json_is_object(e))
        return bad(err, errlen, at, "must be a mapping");
    json_object_foreach((json_t *)e, k, v) {
        bool known = false;
        for (const char *const *p = keys; *p && !known; p++)
            known = strcmp(*p, k) == 0;
        if (!known)
            return hcp_errf(err, errlen, HCP_EINVAL, WAVE_EVIDENCE_KEY " %s: unknown key "
                            "\"%.40s\"", at, k);
    }
    memset(m, 0, sizeof(*m));
    s = json_string_value(json_object_get(e, "system"));
    for (*system = 0; s && *system < WAVE_SYSTEMS && strcmp(systems[*system], s); (*system)++)
        ;
    if (!s || *system >= WAVE_SYSTEMS)
        return bad(err, errlen, at, "system must be ControlPlane or NodePool");
    s = json_string_value(json_object_get(e, "cluster"));
    slash = s ? strchr(s, '/') : NULL;
    if (!slash || slash - s > 63 || !subdomain_ok(slash + 1, strlen(slash + 1)))
        return bad(err, errlen, at, "cluster must be \"namespace/name\"");
    snprintf(ns, WAVE_VALLEN, "%.*s", (int)(slash - s), s);
    if (!label_ok(ns, 63))
        return bad(err, errlen, at, "cluster must be \"namespace/name\"");
    snprintf(cluster, 254, "%s", slash + 1);
    s = json_string_value(json_object_get(e, "pool"));
    if (!s || (s[0] && !subdomain_ok(s, strlen(s))) || (*system == WAVE_NODEPOOL) != (s[0] != 0))
        return bad(err, errlen, at, "pool must name the NodePool of a NodePool member, and be "
                                    "\"\" for a ControlPlane member");
    snprintf(pool, 254, "%s", s);
    v = json_object_get(e, "wave");
    if (!json_is_null(v) && !json_is_string(v))
        return bad(err, errlen, at, "wave must be a wave's name or null");
    if (!json_is_string(v) || (m->wave = wave_named(cfg, json_string_value(v))) < 0)
        return 0;
    if (!json_is_boolean(json_object_get(e, "optedIn")) ||
        !json_is_boolean(json_object_get(e, "healthy")))
        return bad(err, errlen, at, "optedIn and healthy must be true or false");
    m->opted_in = json_is_true(json_object_get(e, "optedIn"));
    m->healthy = json_is_true(json_object_get(e, "healthy"));
    s = json_string_value(json_object_get(e, "why"));
    if (!s)
        return bad(err, errlen, at, "why must be a string");
    decide_copy_printable(m->why, sizeof(m->why), s);
    m->unhealthy_since = SCHED_NEG_INF;
    v = json_object_get(e, "unhealthySince");
    if (!json_is_null(v) && (!json_is_string(v) ||
                             sched_parse_rfc3339(json_string_value(v), &m->unhealthy_since)))
        return bad(err, errlen, at, "unhealthySince must be an RFC 3339 instant or null");
    if (m->healthy)
        m->unhealthy_since = SCHED_NEG_INF;
    s = json_string_value(json_object_get(e, "running"));
    if (!version_ok(s, true))
        return bad(err, errlen, at, "running must be a version or \"\"");
    snprintf(m->running, sizeof(m->running), "%s", s);
    done = json_object_get(e, "completed");
    if (!json_is_array(done) || json_array_size(done) > WAVE_HISTORY)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        WAVE_EVIDENCE_KEY " %s: completed must be a list of at most %d", at,
                        WAVE_HISTORY);
    json_array_foreach(done, i, x) {
        const char *ver = json_string_value(json_object_get(x, "version"));
        const char *when = json_string_value(json_object_get(x, "at"));
        snprintf(where, sizeof(where), "%s.completed[%zu]", at, i);
        if (!json_is_object(x) || json_object_size(x) != 2 || !version_ok(ver, false) ||
            !when || sched_parse_rfc3339(when, &m->done_at[i]))
            return bad(err, errlen, where, "must be {version, at: RFC 3339}");
        snprintf(m->done[i], sizeof(m->done[i]), "%s", ver);
        m->n_done = (uint8_t)(i + 1);
    }
    return 1;
}

typedef struct pending {
    unsigned system;
    char ns[WAVE_SOURCELEN + WAVE_VALLEN + 1], cluster[254], pool[254];
    wave_member_t m;
} pending_t;

long wave_evidence_read(const json_t *cm, const wave_config_t *cfg, wave_evidence_fn fn,
                        void *ud, char *err, size_t errlen)
{
    const char *source = json_string_value(
        json_object_get(hcp_json_path(cm, "metadata.labels"), WAVE_EVIDENCE_LABEL));
    const json_t *data = json_object_get(hcp_json_path(cm, "data"), WAVE_EVIDENCE_KEY);
    const json_t *members, *e;
    json_error_t je;
    json_t *doc;
    pending_t *got = NULL;
    long n = 0;
    size_t i;
    char at[48], ns[WAVE_VALLEN];

    if (!label_ok(source, WAVE_SOURCELEN - 1)) {
        hcp_errf(err, errlen, HCP_EINVAL,
                 "label " WAVE_EVIDENCE_LABEL ": must name the management cluster (at most %d "
                 "of a-z 0-9 -)", WAVE_SOURCELEN - 1);
        return -1;
    }
    if (strcmp(source, cfg->evidence_name) == 0)
        return 0; /* this management cluster's own */
    if (!json_is_string(data) || json_string_length(data) > WAVE_EVIDENCE_MAX_BYTES) {
        hcp_errf(err, errlen, HCP_EINVAL, "data." WAVE_EVIDENCE_KEY ": must be the evidence's "
                 "JSON text, at most %d bytes", WAVE_EVIDENCE_MAX_BYTES);
        return -1;
    }
    if (!(doc = json_loadb(json_string_value(data), json_string_length(data), JSON_REJECT_DUPLICATES,
                           &je))) {
        hcp_errf(err, errlen, HCP_EINVAL, WAVE_EVIDENCE_KEY ": not JSON (line %d: %.80s)",
                 je.line, je.text);
        return -1;
    }
    members = json_object_get(doc, "members");
    const char *said = json_string_value(json_object_get(doc, "source"));
    if (!json_is_object(doc) || json_object_size(doc) != 2 || !said || strcmp(said, source)) {
        hcp_errf(err, errlen, HCP_EINVAL, WAVE_EVIDENCE_KEY ": must be {source, members} with "
                 "source \"%s\", as its label says", source);
        n = -1;
    } else if (!json_is_array(members) ||
               json_array_size(members) > WAVE_EVIDENCE_MAX_MEMBERS) {
        hcp_errf(err, errlen, HCP_EINVAL, WAVE_EVIDENCE_KEY " members: must be a list of at "
                 "most %d", WAVE_EVIDENCE_MAX_MEMBERS);
        n = -1;
    } else if (json_array_size(members) > 0 &&
               !(got = malloc(json_array_size(members) * sizeof(*got)))) {
        hcp_errf(err, errlen, HCP_ENOMEM, "out of memory");
        n = -1;
    }
    /* Every member is checked before any is handed over: a document that
     * fails is ignored whole. */
    json_array_foreach(n < 0 ? NULL : members, i, e) {
        pending_t *p = &got[n];
        snprintf(at, sizeof(at), "members[%zu]", i);
        int rc = read_member(e, at, cfg, &p->system, ns, p->cluster, p->pool, &p->m, err,
                             errlen);
        if (rc < 0) {
            n = -1;
            break;
        }
        if (rc == 0)
            continue;
        snprintf(p->ns, sizeof(p->ns), "%s:%s", source, ns);
        n++;
    }
    for (long j = 0; j < n; j++)
        fn(got[j].system, got[j].ns, got[j].cluster, got[j].pool, &got[j].m, ud);
    free(got);
    json_decref(doc);
    return n;
}
