/* wave.c: release waves, their configuration, index and verdict (wave.h). */
#include "decide/wave.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/htab.h"
#include "base/json.h"
#include "decide/decide.h"
#include "decide/version.h"
#include "policy/guard.h"

/* ---- configuration ---------------------------------------------------- */

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* A label name or value as Kubernetes allows it: at most 63 of
 * [A-Za-z0-9._-], beginning and ending alphanumeric (a value may be
 * empty). */
static bool label_word(const char *s, size_t len, bool empty_ok)
{
    if (len == 0)
        return empty_ok;
    if (len > 63 || !alnum(s[0]) || !alnum(s[len - 1]))
        return false;
    for (size_t i = 0; i < len; i++)
        if (!alnum(s[i]) && s[i] != '.' && s[i] != '_' && s[i] != '-')
            return false;
    return true;
}

/* A DNS-1123 label (a namespace, a wave's name): [a-z0-9-], at most 63,
 * alphanumeric at both ends. */
static bool dns_label(const char *s)
{
    size_t len = strlen(s);
    if (len == 0 || len > 63 || s[0] == '-' || s[len - 1] == '-')
        return false;
    for (size_t i = 0; i < len; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
            return false;
    return true;
}

/* A label key: [prefix/]name, the prefix a DNS subdomain of at most 253. */
static bool label_key(const char *k)
{
    const char *slash = strchr(k, '/');
    if (!slash)
        return label_word(k, strlen(k), false);
    size_t plen = (size_t)(slash - k);
    if (plen == 0 || plen > 253)
        return false;
    for (size_t i = 0; i < plen; i++)
        if (!((k[i] >= 'a' && k[i] <= 'z') || (k[i] >= '0' && k[i] <= '9') || k[i] == '-' ||
              k[i] == '.'))
            return false;
    return label_word(slash + 1, strlen(slash + 1), false);
}

static bool plain_string(const json_t *v)
{
    return json_is_string(v) && json_string_length(v) == strlen(json_string_value(v));
}

static int selector(const json_t *o, const char *at, wave_def_t *w, char *err, size_t errlen)
{
    static const char *const keys[] = {"matchLabels", "namespaces", NULL};
    const json_t *ml, *nss, *x;
    const char *k;
    size_t i;
    int rc;

    if (!o)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: is required (matchLabels, namespaces, or both)", at);
    if ((rc = guard_mapping_check(o, at, keys, err, errlen)) != 0)
        return rc;
    ml = json_object_get(o, "matchLabels");
    nss = json_object_get(o, "namespaces");
    if (ml) {
        if (!json_is_object(ml) || json_object_size(ml) == 0 ||
            json_object_size(ml) > WAVE_MAX_LABELS)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.matchLabels: must be a mapping of 1 to %d labels", at,
                            WAVE_MAX_LABELS);
        json_object_foreach((json_t *)ml, k, x) {
            const char *val = json_string_value(x);
            if (!label_key(k) || strlen(k) >= WAVE_KEYLEN)
                return hcp_errf(err, errlen, HCP_EINVAL,
                                "%s.matchLabels: \"%.80s\" is not a label key", at, k);
            if (!plain_string(x) || !label_word(val, strlen(val), true))
                return hcp_errf(err, errlen, HCP_EINVAL,
                                "%s.matchLabels.%.80s: must be a label value (at most 63 of "
                                "A-Z a-z 0-9 . _ -)",
                                at, k);
            snprintf(w->label_key[w->n_labels], WAVE_KEYLEN, "%s", k);
            snprintf(w->label_val[w->n_labels], WAVE_VALLEN, "%s", val);
            w->n_labels++;
        }
    }
    if (nss) {
        if (!json_is_array(nss) || json_array_size(nss) == 0 ||
            json_array_size(nss) > WAVE_MAX_NS)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.namespaces: must be a list of 1 to %d namespaces", at,
                            WAVE_MAX_NS);
        json_array_foreach(nss, i, x) {
            if (!plain_string(x) || !dns_label(json_string_value(x)))
                return hcp_errf(err, errlen, HCP_EINVAL,
                                "%s.namespaces[%zu]: must be a namespace name", at, i);
            snprintf(w->ns[w->n_ns++], WAVE_VALLEN, "%s", json_string_value(x));
        }
    }
    if (!ml && !nss)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: selects every HostedCluster; name matchLabels, namespaces, or both",
                        at);
    return 0;
}

static int wave_def(const json_t *o, size_t idx, wave_config_t *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "selector", "soak", "minClusters", NULL};
    wave_def_t *w = &cfg->waves[idx];
    const json_t *v;
    char at[48], what[96], e[256];
    int rc;

    snprintf(at, sizeof(at), "waves.sequence[%zu]", idx);
    memset(w, 0, sizeof(*w));
    w->min_clusters = -1;
    if ((rc = guard_mapping_check(o, at, keys, err, errlen)) != 0 ||
        (rc = guard_str_field(o, "name", at, true, w->name, sizeof(w->name), err, errlen)) != 0)
        return rc;
    if (!dns_label(w->name))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s.name: \"%s\" must be lower case letters, digits and '-'", at,
                        w->name);
    for (size_t i = 0; i < idx; i++)
        if (strcmp(cfg->waves[i].name, w->name) == 0)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.name: \"%s\" is the name of waves.sequence[%zu] too", at, w->name,
                            i);
    snprintf(what, sizeof(what), "%s.selector", at);
    if ((rc = selector(json_object_get(o, "selector"), what, w, err, errlen)) != 0)
        return rc;
    if ((v = json_object_get(o, "soak")) != NULL) {
        snprintf(what, sizeof(what), "%s.soak", at);
        if (!plain_string(v))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be a duration such as \"48h\"",
                            what);
        if (guard_duration_parse(json_string_value(v), what, &w->soak, e, sizeof(e)))
            return hcp_errf(err, errlen, HCP_EINVAL, "%s", e);
        if (w->soak > WAVE_MAX_SOAK)
            return hcp_errf(err, errlen, HCP_EINVAL, "%s: must be at most 90d", what);
    }
    if ((v = json_object_get(o, "minClusters")) != NULL) {
        if (!json_is_integer(v) || json_integer_value(v) < 1 ||
            json_integer_value(v) > 100000)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "%s.minClusters: must be a whole number from 1 to 100000", at);
        w->min_clusters = (int)json_integer_value(v);
    }
    if (idx == 0 && (w->soak || w->min_clusters > 0))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "%s: the first wave has no wave before it to soak on (soak and "
                        "minClusters belong to the waves after it)",
                        at);
    return 0;
}

/* True when no HostedCluster can match both a and b. */
static bool disjoint(const wave_def_t *a, const wave_def_t *b)
{
    if (a->n_ns && b->n_ns) {
        bool common = false;
        for (size_t i = 0; i < a->n_ns && !common; i++)
            for (size_t j = 0; j < b->n_ns && !common; j++)
                common = strcmp(a->ns[i], b->ns[j]) == 0;
        if (!common)
            return true;
    }
    for (size_t i = 0; i < a->n_labels; i++)
        for (size_t j = 0; j < b->n_labels; j++)
            if (strcmp(a->label_key[i], b->label_key[j]) == 0 &&
                strcmp(a->label_val[i], b->label_val[j]) != 0)
                return true;
    return false;
}

static bool version_ok(const char *v)
{
    int c;
    return decide_version_cmp(v, v, &c) == 0;
}

static int blocked_entry(const json_t *x, size_t idx, wave_blocked_t *b, char *err,
                         size_t errlen)
{
    static const char *const ops[] = {">=", "<=", ">", "<", "=", NULL};
    const char *s = json_string_value(x), *p;

    memset(b, 0, sizeof(*b));
    if (!plain_string(x) || json_string_length(x) == 0 || json_string_length(x) >= sizeof(b->text))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "waves.blockedReleases[%zu]: must be a version (\"4.17.2\") or a range "
                        "(\">=4.17.5 <4.17.8\")",
                        idx);
    snprintf(b->text, sizeof(b->text), "%s", s);
    for (p = s; *p;) {
        size_t k, n;
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        if (b->n == WAVE_MAX_CMP)
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "waves.blockedReleases[%zu]: at most %d comparators", idx,
                            WAVE_MAX_CMP);
        wave_cmp_t *c = &b->cmp[b->n];
        for (k = 0; ops[k] && strncmp(p, ops[k], strlen(ops[k])) != 0; k++)
            ;
        snprintf(c->op, sizeof(c->op), "%s", ops[k] ? ops[k] : "=");
        if (ops[k])
            p += strlen(ops[k]);
        for (n = 0; p[n] && p[n] != ' '; n++)
            ;
        if (n == 0 || n >= sizeof(c->version))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "waves.blockedReleases[%zu]: \"%s\": a comparator without a version",
                            idx, s);
        memcpy(c->version, p, n);
        c->version[n] = '\0';
        if (!version_ok(c->version))
            return hcp_errf(err, errlen, HCP_EINVAL,
                            "waves.blockedReleases[%zu]: \"%s\" is not a semantic version (as "
                            "\"4.17.2\")",
                            idx, c->version);
        p += n;
        b->n++;
    }
    if (b->n == 0)
        return hcp_errf(err, errlen, HCP_EINVAL, "waves.blockedReleases[%zu]: is empty", idx);
    return 0;
}

/* waves.evidence: {name, namespace}, both required. */
static int evidence_cfg(const json_t *o, wave_config_t *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = {"name", "namespace", NULL};
    int rc;
    if ((rc = guard_mapping_check(o, "waves.evidence", keys, err, errlen)) != 0 ||
        (rc = guard_str_field(o, "name", "waves.evidence", true, cfg->evidence_name,
                              sizeof(cfg->evidence_name), err, errlen)) != 0 ||
        (rc = guard_str_field(o, "namespace", "waves.evidence", true, cfg->evidence_ns,
                              sizeof(cfg->evidence_ns), err, errlen)) != 0)
        return rc;
    if (!dns_label(cfg->evidence_name) || strlen(cfg->evidence_name) >= WAVE_SOURCELEN)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "waves.evidence.name: \"%s\" must be at most %d lower case letters, "
                        "digits and '-' (it names this management cluster's evidence)",
                        cfg->evidence_name, WAVE_SOURCELEN - 1);
    if (!dns_label(cfg->evidence_ns))
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "waves.evidence.namespace: \"%s\" must be a namespace name",
                        cfg->evidence_ns);
    if (cfg->n == 0)
        return hcp_errf(err, errlen, HCP_EINVAL,
                        "waves.evidence: needs waves.sequence (evidence is what the clusters "
                        "of the waves completed)");
    return 0;
}

int wave_config_parse(const json_t *v, wave_config_t *cfg, char *err, size_t errlen)
{
    static const char *const keys[] = {"sequence", "blockedReleases", "evidence", NULL};
    json_t *owned = NULL;
    const json_t *seq, *bl, *x;
    size_t i;
    int rc = 0;

    memset(cfg, 0, sizeof(*cfg));
    if (v == NULL)
        return 0;
    if ((rc = guard_json_text(&v, "waves", &owned, err, errlen)) != 0)
        return rc;
    if ((rc = guard_mapping_check(v, "waves", keys, err, errlen)) != 0)
        goto done;
    seq = json_object_get(v, "sequence");
    bl = json_object_get(v, "blockedReleases");
    if (seq && (!json_is_array(seq) || json_array_size(seq) == 0 ||
                json_array_size(seq) > WAVE_MAX)) {
        rc = hcp_errf(err, errlen, HCP_EINVAL, "waves.sequence: must be a list of 1 to %d waves",
                      WAVE_MAX);
        goto done;
    }
    json_array_foreach(seq, i, x) {
        if ((rc = wave_def(x, i, cfg, err, errlen)) != 0)
            goto done;
        for (size_t j = 0; j < i; j++)
            if (!disjoint(&cfg->waves[j], &cfg->waves[i])) {
                rc = hcp_errf(err, errlen, HCP_EINVAL,
                              "waves.sequence[%zu] (%s) and waves.sequence[%zu] (%s) may select "
                              "the same HostedCluster: give both a matchLabels key with "
                              "different values, or namespaces apart",
                              j, cfg->waves[j].name, i, cfg->waves[i].name);
                goto done;
            }
        cfg->n = i + 1;
    }
    if (bl && (!json_is_array(bl) || json_array_size(bl) > WAVE_MAX_BLOCKED)) {
        rc = hcp_errf(err, errlen, HCP_EINVAL,
                      "waves.blockedReleases: must be a list of at most %d releases",
                      WAVE_MAX_BLOCKED);
        goto done;
    }
    json_array_foreach(bl, i, x) {
        if ((rc = blocked_entry(x, i, &cfg->blocked[i], err, errlen)) != 0)
            goto done;
        cfg->n_blocked = i + 1;
    }
    if ((x = json_object_get(v, "evidence")) != NULL &&
        (rc = evidence_cfg(x, cfg, err, errlen)) != 0)
        goto done;
done:
    if (rc)
        memset(cfg, 0, sizeof(*cfg));
    json_decref(owned);
    return rc;
}

bool wave_config_on(const wave_config_t *cfg)
{
    return cfg && (cfg->n > 0 || cfg->n_blocked > 0);
}

int wave_of(const wave_config_t *cfg, const char *ns, const json_t *labels)
{
    for (size_t i = 0; i < cfg->n; i++) {
        const wave_def_t *w = &cfg->waves[i];
        bool ok = w->n_ns == 0;
        for (size_t j = 0; j < w->n_ns && !ok; j++)
            ok = ns && strcmp(w->ns[j], ns) == 0;
        for (size_t j = 0; j < w->n_labels && ok; j++) {
            const char *v = json_string_value(json_object_get(labels, w->label_key[j]));
            ok = v && strcmp(v, w->label_val[j]) == 0;
        }
        if (ok)
            return (int)i;
    }
    return WAVE_UNASSIGNED;
}

const char *wave_name(const wave_config_t *cfg, int wave)
{
    return wave >= 0 && (size_t)wave < cfg->n ? cfg->waves[wave].name : "(unassigned)";
}

static bool cmp_holds(const wave_cmp_t *c, const char *v)
{
    int r;
    if (decide_version_cmp(v, c->version, &r) != 0)
        return strcmp(c->op, "=") == 0 && strcmp(v, c->version) == 0;
    if (strcmp(c->op, "=") == 0)
        return r == 0;
    if (strcmp(c->op, ">") == 0)
        return r > 0;
    if (strcmp(c->op, ">=") == 0)
        return r >= 0;
    if (strcmp(c->op, "<") == 0)
        return r < 0;
    return r <= 0;
}

const wave_blocked_t *wave_blocked(const wave_config_t *cfg, const char *v)
{
    for (size_t i = 0; v && v[0] && i < cfg->n_blocked; i++) {
        size_t k;
        for (k = 0; k < cfg->blocked[i].n && cmp_holds(&cfg->blocked[i].cmp[k], v); k++)
            ;
        if (k == cfg->blocked[i].n)
            return &cfg->blocked[i];
    }
    return NULL;
}

/* ---- members ------------------------------------------------------------ */

static void copy_version(char *dst, const char *src)
{
    decide_copy_printable(dst, WAVE_MVERLEN, src);
}

void wave_member_hc(const json_t *obj, const decide_health_t *h, int wave, bool opted_in,
                    wave_member_t *out)
{
    const json_t *hist = hcp_json_path(obj, "status.version.history"), *e;
    decide_health_t hh = *h;
    size_t i;

    memset(out, 0, sizeof(*out));
    out->wave = wave;
    out->opted_in = opted_in;
    /* An update under way is not ill health: the halt reads the
     * conditions alone. */
    hh.partial = false;
    out->healthy = decide_health_ok(&hh, false, out->why, sizeof(out->why));
    out->unhealthy_since = out->healthy ? SCHED_NEG_INF : h->unhealthy_since;
    if (out->healthy)
        out->why[0] = '\0';
    copy_version(out->running, json_string_value(json_object_get(json_array_get(hist, 0),
                                                                 "version")));
    json_array_foreach(hist, i, e) {
        const char *state = json_string_value(json_object_get(e, "state"));
        const char *v = json_string_value(json_object_get(e, "version"));
        const char *at = json_string_value(json_object_get(e, "completionTime"));
        sched_time_t t;
        if (out->n_done == WAVE_HISTORY)
            break;
        if (!state || strcmp(state, "Completed") != 0 || !v || !v[0] || !at ||
            sched_parse_rfc3339(at, &t) != 0)
            continue;
        copy_version(out->done[out->n_done], v);
        out->done_at[out->n_done++] = t;
    }
}

void wave_member_np(const char *status_version, const decide_health_t *h, int wave,
                    bool opted_in, wave_member_t *out)
{
    memset(out, 0, sizeof(*out));
    out->wave = wave;
    out->opted_in = opted_in;
    out->healthy = decide_health_ok(h, true, out->why, sizeof(out->why));
    out->unhealthy_since = out->healthy ? SCHED_NEG_INF : h->unhealthy_since;
    if (out->healthy)
        out->why[0] = '\0';
    copy_version(out->running, status_version);
    if (out->running[0] && h->outcome == NOTIFY_OUTCOME_COMPLETED &&
        h->outcome_at != SCHED_NEG_INF) {
        memcpy(out->done[0], out->running, sizeof(out->done[0]));
        out->done_at[0] = h->outcome_at;
        out->n_done = 1;
    }
}

/* ---- the index ----------------------------------------------------------- */

static sched_time_t done_at(const wave_member_t *m, const char *version);

typedef struct wnode {
    hcp_hnode_t h;
    unsigned system;
    size_t cluster_len;   /* bytes of key that name the cluster ("ns/cluster") */
    wave_member_t m;
    uint8_t held_state;   /* wave_index_note_held() */
    uint32_t round;       /* the round that put it last (wave_index_round()) */
    char held[WAVE_MVERLEN];
    char key[];           /* "ns/cluster/id" */
} wnode_t;

/* The sums for (system, wave, version), kept while no member of an
 * earlier wave changes. */
typedef struct wsum {
    hcp_hnode_t h;
    unsigned system;
    int wave;
    char version[WAVE_MVERLEN];
    uint64_t gen;          /* the earlier waves' generations summed */
    int from;              /* the wave it soaks on, -1 none */
    sched_time_t ready_at; /* the soak satisfied (SCHED_POS_INF never) */
    int have, need;
    bool halted;
    sched_time_t since;    /* halted: since when (SCHED_NEG_INF not known) */
    char why[WAVE_WHYLEN]; /* halted: which cluster and why */
    char waiting[WAVE_WHYLEN]; /* too few completed it: the clusters of the wave
                                  before that did not, "" */
} wsum_t;

#define WAVE_MAX_SUMS 512 /* kept sums; more are dropped all at once */

struct wave_index {
    wave_config_t cfg;
    hcp_htab_t members, sums;
    uint64_t gen[WAVE_SYSTEMS][WAVE_MAX + 1];
    uint64_t nsums; /* sums made */
    uint32_t round; /* wave_index_round() */
};

typedef struct wkey {
    unsigned system;
    const char *key;
} wkey_t;

static bool wnode_eq(const hcp_hnode_t *n, const void *k)
{
    const wnode_t *w = (const wnode_t *)n;
    const wkey_t *x = k;
    return w->system == x->system && strcmp(w->key, x->key) == 0;
}

typedef struct skey {
    unsigned system;
    int wave;
    const char *version;
} skey_t;

static bool wsum_eq(const hcp_hnode_t *n, const void *k)
{
    const wsum_t *s = (const wsum_t *)n;
    const skey_t *x = k;
    return s->system == x->system && s->wave == x->wave && strcmp(s->version, x->version) == 0;
}

static uint64_t skey_hash(const skey_t *k)
{
    uint64_t h = hcp_hash_bytes(HCP_HASH_SEED, &k->system, sizeof(k->system));
    h = hcp_hash_bytes(h, &k->wave, sizeof(k->wave));
    return hcp_hash_str(h, k->version);
}

wave_index_t *wave_index_new(const wave_config_t *cfg)
{
    wave_index_t *ix = calloc(1, sizeof(*ix));
    if (!ix)
        return NULL;
    ix->cfg = *cfg;
    if (hcp_htab_init(&ix->members, 64) || hcp_htab_init(&ix->sums, 16)) {
        wave_index_free(ix);
        return NULL;
    }
    return ix;
}

static void release_node(hcp_hnode_t *n, void *ud)
{
    (void)ud;
    free(n);
}

void wave_index_free(wave_index_t *ix)
{
    if (!ix)
        return;
    hcp_htab_drain(&ix->members, release_node, NULL);
    hcp_htab_drain(&ix->sums, release_node, NULL);
    free(ix);
}

static void bump(wave_index_t *ix, unsigned system, int wave)
{
    if (wave >= 0 && wave <= WAVE_MAX)
        ix->gen[system][wave]++;
}

#define WAVE_KEYMAX 800 /* "ns/cluster/id" */

/* The link of member (system, ns/cluster/id) in the index, its key in
 * key (WAVE_KEYMAX bytes) and *hash; NULL when the system is unknown or
 * the key too long. */
static hcp_hnode_t **member_slot(wave_index_t *ix, unsigned system, const char *ns,
                                 const char *cluster, const char *id, char *key,
                                 uint64_t *hash)
{
    int klen = snprintf(key, WAVE_KEYMAX, "%s/%s/%s", ns, cluster, id ? id : "");
    wkey_t k = {system, key};
    if (system >= WAVE_SYSTEMS || klen < 0 || klen >= WAVE_KEYMAX)
        return NULL;
    *hash = hcp_hash_bytes(hcp_hash_str(HCP_HASH_SEED, key), &system, sizeof(system));
    return hcp_htab_slot(&ix->members, *hash, wnode_eq, &k);
}

int wave_index_put(wave_index_t *ix, unsigned system, const char *ns, const char *cluster,
                   const char *id, const wave_member_t *m, bool *changed)
{
    char key[WAVE_KEYMAX];
    uint64_t hash;
    hcp_hnode_t **slot = member_slot(ix, system, ns, cluster, id, key, &hash);
    wnode_t *old = slot ? (wnode_t *)*slot : NULL;
    int klen = (int)strlen(key);

    if (changed)
        *changed = false;
    if (!slot)
        return HCP_EINVAL;
    if (!m) {
        if (old) {
            bump(ix, system, old->m.wave);
            hcp_htab_remove(&ix->members, slot);
            free(old);
            if (changed)
                *changed = true;
        }
        return 0;
    }
    if (old)
        old->round = ix->round;
    if (old && memcmp(&old->m, m, sizeof(*m)) == 0)
        return 0;
    if (changed)
        *changed = true;
    if (old) {
        bump(ix, system, old->m.wave);
        bump(ix, system, m->wave);
        old->m = *m;
        return 0;
    }
    wnode_t *n = malloc(sizeof(*n) + (size_t)klen + 1);
    if (!n)
        return HCP_ENOMEM;
    n->system = system;
    n->held_state = WAVE_PASS;
    n->round = ix->round;
    n->held[0] = '\0';
    n->cluster_len = strlen(ns) + 1 + strlen(cluster);
    n->m = *m;
    memcpy(n->key, key, (size_t)klen + 1);
    hcp_htab_insert(&ix->members, slot, &n->h, hash);
    bump(ix, system, m->wave);
    return 0;
}

void wave_index_note_held(wave_index_t *ix, unsigned system, const char *ns,
                          const char *cluster, const char *id, const char *version,
                          uint8_t state)
{
    char key[WAVE_KEYMAX];
    uint64_t hash;
    hcp_hnode_t **slot = member_slot(ix, system, ns, cluster, id, key, &hash);
    wnode_t *n = slot ? (wnode_t *)*slot : NULL;
    if (!n)
        return;
    n->held_state = state <= WAVE_BLOCKED ? state : WAVE_PASS;
    copy_version(n->held, n->held_state == WAVE_PASS ? "" : version);
}

typedef struct wcount {
    unsigned system;
    int wave;
    const char *release; /* borrowed from a member */
    const char *state;   /* static */
    double n;
} wcount_t;

static void count_one(wcount_t *c, size_t *nc, const wnode_t *w, const char *release,
                      const char *state)
{
    size_t i;
    for (i = 0; i < *nc; i++)
        if (c[i].system == w->system && c[i].wave == w->m.wave && c[i].state == state &&
            strcmp(c[i].release, release) == 0)
            break;
    if (i == *nc) {
        if (*nc == WAVE_MAX_COUNTS)
            return;
        c[(*nc)++] = (wcount_t){w->system, w->m.wave, release, state, 0};
    }
    c[i].n++; /* a HostedCluster is one member; a NodePool count is of pools */
}

void wave_index_counts(const wave_index_t *ix, wave_count_fn fn, void *ud)
{
    static const char *const held[] = {NULL, "WaitingForSoak", "WaveHalted", "ReleaseBlocked"};
    wcount_t *c = calloc(WAVE_MAX_COUNTS, sizeof(*c));
    size_t nc = 0, i;
    hcp_hnode_t *n;
    if (!c)
        return;
    HCP_HTAB_FOREACH(&ix->members, i, n) {
        const wnode_t *w = (const wnode_t *)n;
        if (strchr(w->key, ':'))
            continue; /* another management cluster's: its own metrics count it */
        if (w->m.running[0])
            count_one(c, &nc, w, w->m.running,
                      !w->m.healthy                                    ? "Unhealthy"
                      : done_at(&w->m, w->m.running) != SCHED_POS_INF ? "Completed"
                                                                       : "Updating");
        if (w->held_state != WAVE_PASS)
            count_one(c, &nc, w, w->held, held[w->held_state]);
    }
    for (i = 0; i < nc; i++)
        fn(c[i].system, wave_name(&ix->cfg, c[i].wave), c[i].release, c[i].state, c[i].n, ud);
    free(c);
}

void wave_index_foreach(const wave_index_t *ix, wave_member_fn fn, void *ud)
{
    size_t i;
    hcp_hnode_t *n;
    HCP_HTAB_FOREACH(&ix->members, i, n) {
        const wnode_t *w = (const wnode_t *)n;
        fn(w->system, w->key, w->cluster_len, &w->m, ud);
    }
}

uint32_t wave_index_round(wave_index_t *ix) { return ++ix->round; }

size_t wave_index_sweep(wave_index_t *ix, const char *prefix, uint32_t round, int *wave)
{
    size_t removed = 0, len = strlen(prefix);
    *wave = WAVE_UNASSIGNED;
    for (size_t b = 0; b < ix->members.nbuckets; b++) {
        hcp_hnode_t **link = &ix->members.buckets[b];
        while (*link) {
            wnode_t *w = (wnode_t *)*link;
            if (w->round == round || strncmp(w->key, prefix, len) != 0) {
                link = &(*link)->next;
                continue;
            }
            if (w->m.wave < *wave)
                *wave = w->m.wave;
            bump(ix, w->system, w->m.wave);
            hcp_htab_remove(&ix->members, link);
            free(w);
            removed++;
        }
    }
    return removed;
}

const wave_config_t *wave_index_config(const wave_index_t *ix) { return &ix->cfg; }
size_t wave_index_members(const wave_index_t *ix) { return ix->members.count; }
uint64_t wave_index_sums(const wave_index_t *ix) { return ix->nsums; }

/* The last wave of the sequence before wave k (k itself for a wave of the
 * sequence; the whole sequence for WAVE_UNASSIGNED). */
static int top_of(const wave_index_t *ix, int wave)
{
    return wave >= (int)ix->cfg.n ? (int)ix->cfg.n : wave;
}

static uint64_t gen_before(const wave_index_t *ix, unsigned system, int wave)
{
    uint64_t g = 0;
    for (int j = 0; j < top_of(ix, wave); j++)
        g += ix->gen[system][j] * (uint64_t)(j + 1);
    return g;
}

/* The completion of version by member m, SCHED_POS_INF when none. */
static sched_time_t done_at(const wave_member_t *m, const char *version)
{
    for (size_t i = 0; i < m->n_done; i++)
        if (strcmp(m->done[i], version) == 0)
            return m->done_at[i];
    return SCHED_POS_INF;
}

typedef struct ev {
    const char *cluster;
    size_t len;
    bool opted_in;
    sched_time_t at;
} ev_t;

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->cluster, y->cluster, n);
    return c ? c : x->len < y->len ? -1 : x->len > y->len;
}

static int time_cmp(const void *a, const void *b)
{
    sched_time_t x = *(const sched_time_t *)a, y = *(const sched_time_t *)b;
    return x < y ? -1 : x > y;
}

#define WAVE_NAMED 3 /* clusters a message names, then "and N more" */

/* Adds cluster (ns/name, len bytes), the k-th of the wave before that did
 * not complete the release, to s->waiting: the first WAVE_NAMED by name. */
static void note_waiting(wsum_t *s, const char *cluster, size_t len, int k)
{
    size_t used = strlen(s->waiting);
    if (k > WAVE_NAMED)
        return;
    snprintf(s->waiting + used, sizeof(s->waiting) - used, "%s%.*s", k > 1 ? ", " : "",
             (int)(len < 120 ? len : 120), cluster);
}

/* Sums the waves before `wave` for version into s. */
static void make_sum(wave_index_t *ix, unsigned system, int wave, const char *version, wsum_t *s)
{
    int top = top_of(ix, wave), opted[WAVE_MAX] = {0};
    const char *halt_key = NULL;
    hcp_hnode_t *n;
    size_t i, count = 0;

    ix->nsums++;
    s->from = -1;
    s->ready_at = SCHED_NEG_INF;
    s->have = s->need = 0;
    s->halted = false;
    s->since = SCHED_NEG_INF;
    s->why[0] = s->waiting[0] = '\0';
    /* An earlier wave that runs the release unhealthy halts it; each
     * wave's opted-in members say whether it is empty. */
    HCP_HTAB_FOREACH(&ix->members, i, n) {
        const wnode_t *w = (const wnode_t *)n;
        if (w->system != system || w->m.wave < 0 || w->m.wave >= top)
            continue;
        if (w->m.opted_in)
            opted[w->m.wave]++;
        if (!w->m.healthy && strcmp(w->m.running, version) == 0 &&
            (!halt_key || strcmp(w->key, halt_key) < 0)) {
            char since[48] = "";
            halt_key = w->key;
            s->halted = true;
            s->since = w->m.unhealthy_since;
            if (s->since != SCHED_NEG_INF) {
                memcpy(since, " since ", 8);
                decide_format_time(s->since, since + 7, sizeof(since) - 7);
            }
            snprintf(s->why, sizeof(s->why), "%.*s of wave %s runs %s and is unhealthy%s: %s",
                     (int)w->cluster_len, w->key, wave_name(&ix->cfg, w->m.wave), version,
                     since, w->m.why);
        }
    }
    for (int j = top - 1; j >= 0 && s->from < 0; j--)
        if (opted[j] > 0)
            s->from = j;
    if (s->from < 0)
        return; /* no wave before it has a cluster: nothing to soak on */
    const wave_def_t *def = &ix->cfg.waves[wave < (int)ix->cfg.n ? wave : (int)ix->cfg.n - 1];
    HCP_HTAB_FOREACH(&ix->members, i, n) {
        const wnode_t *w = (const wnode_t *)n;
        if (w->system == system && w->m.wave == s->from)
            count++;
    }
    ev_t *evs = calloc(count ? count : 1, sizeof(*evs));
    sched_time_t *times = calloc(count ? count : 1, sizeof(*times));
    if (!evs || !times) { /* cannot judge: held */
        free(evs);
        free(times);
        s->ready_at = SCHED_POS_INF;
        s->need = 1;
        return;
    }
    count = 0;
    HCP_HTAB_FOREACH(&ix->members, i, n) {
        const wnode_t *w = (const wnode_t *)n;
        if (w->system != system || w->m.wave != s->from)
            continue;
        evs[count++] = (ev_t){w->key, w->cluster_len, w->m.opted_in, done_at(&w->m, version)};
    }
    /* A cluster counts once: opted in when one of its members is, done
     * when one of them is, at the first. */
    qsort(evs, count, sizeof(*evs), ev_cmp);
    int clusters_opted = 0, ntimes = 0, waiting = 0;
    for (size_t a = 0; a < count;) {
        size_t b = a;
        bool in = false;
        sched_time_t at = SCHED_POS_INF;
        for (; b < count && ev_cmp(&evs[a], &evs[b]) == 0; b++) {
            in = in || evs[b].opted_in;
            if (evs[b].at < at)
                at = evs[b].at;
        }
        clusters_opted += in;
        if (at != SCHED_POS_INF)
            times[ntimes++] = at;
        else if (in)
            note_waiting(s, evs[a].cluster, evs[a].len, ++waiting);
        a = b;
    }
    qsort(times, (size_t)ntimes, sizeof(*times), time_cmp);
    if (waiting > WAVE_NAMED) {
        size_t len = strlen(s->waiting);
        snprintf(s->waiting + len, sizeof(s->waiting) - len, " and %d more",
                 waiting - WAVE_NAMED);
    }
    s->have = ntimes;
    s->need = def->min_clusters > 0 ? def->min_clusters : clusters_opted;
    s->ready_at = s->need == 0 ? SCHED_NEG_INF
                : ntimes >= s->need ? times[s->need - 1] + def->soak
                                    : SCHED_POS_INF;
    free(evs);
    free(times);
}

static const wsum_t *sum_for(wave_index_t *ix, unsigned system, int wave, const char *version)
{
    skey_t k = {system, wave, version};
    uint64_t hash = skey_hash(&k), gen = gen_before(ix, system, wave);
    hcp_hnode_t **slot = hcp_htab_slot(&ix->sums, hash, wsum_eq, &k);
    wsum_t *s = (wsum_t *)*slot;
    static wsum_t spare; /* out of memory: summed, not kept */

    if (s && s->gen == gen)
        return s;
    if (!s) {
        if (ix->sums.count >= WAVE_MAX_SUMS) {
            hcp_htab_drain(&ix->sums, release_node, NULL);
            if (hcp_htab_init(&ix->sums, 16))
                memset(&ix->sums, 0, sizeof(ix->sums));
            slot = ix->sums.buckets ? hcp_htab_slot(&ix->sums, hash, wsum_eq, &k) : NULL;
        }
        s = slot ? calloc(1, sizeof(*s)) : NULL;
        if (!s) {
            s = &spare;
            memset(s, 0, sizeof(*s));
        } else {
            s->system = system;
            s->wave = wave;
            copy_version(s->version, version);
            hcp_htab_insert(&ix->sums, slot, &s->h, hash);
        }
    }
    make_sum(ix, system, wave, version, s);
    s->gen = gen;
    return s;
}

void wave_index_verdict(wave_index_t *ix, unsigned system, int wave, const char *version,
                        sched_time_t now, wave_verdict_t *out)
{
    const wave_config_t *cfg = &ix->cfg;
    const wave_blocked_t *b;
    char t[32];

    memset(out, 0, sizeof(*out));
    out->wave = wave;
    out->until = out->since = SCHED_NEG_INF;
    if (!wave_config_on(cfg) || system >= WAVE_SYSTEMS)
        return;
    snprintf(out->name, sizeof(out->name), "%s", wave_name(cfg, wave));
    copy_version(out->version, version);
    if (!version || !version[0]) {
        if (cfg->n == 0 || wave == 0)
            return; /* nothing to sequence it by: only blocked versions are checked */
        out->state = WAVE_SOAK;
        out->until = SCHED_POS_INF;
        snprintf(out->why, sizeof(out->why),
                 "its version is not known (a release pinned by digest alone), so wave %s "
                 "cannot tell whether the waves before it ran it",
                 wave_name(cfg, wave));
        return;
    }
    if ((b = wave_blocked(cfg, version)) != NULL) {
        out->state = WAVE_BLOCKED;
        snprintf(out->why, sizeof(out->why),
                 "release %s is blocked for the fleet (waves.blockedReleases \"%s\")", version,
                 b->text);
        return;
    }
    if (cfg->n == 0 || wave == 0)
        return;
    const wsum_t *s = sum_for(ix, system, wave, version);
    if (s->halted) {
        out->state = WAVE_HALTED;
        out->since = s->since;
        snprintf(out->why, sizeof(out->why), "wave %s waits: %.300s", wave_name(cfg, wave),
                 s->why);
        return;
    }
    if (s->from < 0 || now >= s->ready_at)
        return;
    out->state = WAVE_SOAK;
    out->until = s->ready_at;
    out->have = s->have;
    out->need = s->need;
    if (s->ready_at == SCHED_POS_INF) {
        char on[WAVE_WHYLEN] = "";
        if (s->waiting[0])
            snprintf(on, sizeof(on), " (not yet on %.200s)", s->waiting);
        snprintf(out->why, sizeof(out->why),
                 "wave %s waits for wave %s: %s completed on %d of the %d clusters it needs%.220s",
                 wave_name(cfg, wave), wave_name(cfg, s->from), version, s->have, s->need, on);
        return;
    }
    decide_format_time(s->ready_at, t, sizeof(t));
    snprintf(out->why, sizeof(out->why),
             "wave %s waits for wave %s to soak: %s completed on %d of its clusters (%d "
             "needed), and may go from %s",
             wave_name(cfg, wave), wave_name(cfg, s->from), version, s->have, s->need, t);
}

/* ---- the decision ---------------------------------------------------------- */

bool decide_wave_apply(decide_decision_t *d, bool nodepool, const decide_health_t *h,
                       const wave_verdict_t *wv, const stanza_t *st, bool held,
                       const decide_capi_t *capi, bool held_at_admission, sched_time_t now)
{
    const char *reason;
    char until[32];

    d->wave = *wv;
    d->wave_skipped = false;
    d->wave_held = false;
    if (d->restricted || !held || wv->state == WAVE_PASS)
        return false;
    if (wv->state != WAVE_BLOCKED && st->has_permissive_until && now < st->permissive_until) {
        d->wave_skipped = true; /* the SRE's override: the audit says it skipped the soak */
        return false;
    }
    reason = wv->state == WAVE_BLOCKED ? "ReleaseBlocked"
           : wv->state == WAVE_HALTED  ? "WaveHalted"
                                       : "WaitingForSoak";
    decide_gate_hold(d, nodepool, h, capi, held_at_admission, reason);
    d->wave_held = true;
    decide_format_time(d->state.current.end, until, sizeof(until));
    if (wv->state == WAVE_BLOCKED)
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "The held release is not let through: %s. It stays held until the fleet's "
                 "operator takes it off the list.",
                 wv->why);
    else if (wv->state == WAVE_HALTED)
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "The held release is not let through: %s. It goes by itself once that "
                 "cluster is healthy again, while a window is open.",
                 wv->why);
    else
        snprintf(d->paused_message, sizeof(d->paused_message),
                 "The held release is not let through yet: %s. It goes at the first window "
                 "open after that%s%s.",
                 wv->why, until[0] ? "; this window ends " : "", until);
    snprintf(d->pending_message, sizeof(d->pending_message), "Pending changes wait for %s: %s.",
             wv->state == WAVE_BLOCKED ? "a release that is not blocked"
             : wv->state == WAVE_HALTED ? "the waves before to be healthy"
                                        : "the waves before to soak",
             wv->why);
    if (wv->state == WAVE_SOAK && wv->until != SCHED_POS_INF && wv->until > now &&
        wv->until < d->wake)
        d->wake = wv->until;
    return true;
}
