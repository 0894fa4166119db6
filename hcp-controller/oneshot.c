/* oneshot.c: what explain reads, as a one-shot view for the plan. See
 * oneshot.h. */
#include "oneshot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kube/config.h"

#define PROG ONESHOT_PROG
#define EXIT_ACCESS ONESHOT_EXIT_ACCESS
#define EXIT_MISSING ONESHOT_EXIT_MISSING

typedef struct fetch {
    int done;
    kube_error err;
    json_t *obj;              /* owned */
} fetch_t;

static void fetched(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    fetch_t *f = ud;
    (void)c;
    f->done = 1;
    if (err)
        f->err = *err;
    else
        f->obj = json_incref(obj);
}

/* GETs path. Returns the object (new), or NULL with *err filled. */
json_t *oneshot_get(session_t *s, const char *path, kube_error *err)
{
    fetch_t f = {0};

    if (kube_get(&s->client, path, fetched, &f, &f.err) != 0) {
        *err = f.err;
        return NULL;
    }
    while (!f.done)
        ev_run(s->loop, EVRUN_ONCE);
    *err = f.err;
    return f.obj;
}

/* The exit status of a failed GET, after saying why. */
int oneshot_get_failed(const char *what, const kube_error *e)
{
    if (e->http_status == 404) {
        fprintf(stderr, "%s: %s not found\n", PROG, what);
        return EXIT_MISSING;
    }
    if (e->http_status == 401 || e->http_status == 403)
        fprintf(stderr, "%s: no access to %s (HTTP %d %s): %s\n", PROG, what, e->http_status,
                e->reason, e->message);
    else
        fprintf(stderr, "%s: cannot read %s: %s\n", PROG, what, e->message);
    return EXIT_ACCESS;
}

/* The ConfigMaps GET for a policy's exclusion calendars, kept while it
 * reads them. */
typedef struct cm_reads {
    session_t *s;
    json_t *docs; /* owned array */
} cm_reads_t;

/* policy_configmap_fn: GETs the ConfigMap; one that cannot be read is
 * missing to the policy (which then holds what it covers), said here. */
static const json_t *get_configmap(const char *ns, const char *name, void *ud)
{
    cm_reads_t *r = ud;
    char path[1024], what[600];
    kube_error e;
    json_t *doc;

    kube_path(path, sizeof path, "", "v1", "configmaps", ns, name, NULL);
    if ((doc = oneshot_get(r->s, path, &e)) == NULL) {
        if (e.http_status != 404) {
            snprintf(what, sizeof what, "ConfigMap %s/%s (an exclusion calendar)", ns, name);
            (void)oneshot_get_failed(what, &e);
        }
        return NULL;
    }
    if (json_array_append_new(r->docs, doc) != 0)
        return NULL;
    const json_t *data = json_object_get(doc, "data");
    return json_is_object(data) ? data : NULL;
}

/* Reads the policy x's stanza names. Returns -1 to go on, or an exit status. */
static int read_policy(oneshot_t *v, subject_t *x)
{
    char path[1024], what[600], perr[POLICY_ERRLEN];
    json_t *doc;
    kube_error e;

    if (!x->st->present || !x->st->policy[0])
        return -1;
    kube_path(path, sizeof path, "changemanagement.hypershift.openshift.io", "v1alpha1",
              "hostedchangemanagementpolicies", x->ns, x->st->policy, NULL);
    if ((doc = oneshot_get(v->s, path, &e)) == NULL && e.http_status != 404) {
        snprintf(what, sizeof what, "HostedChangeManagementPolicy %s/%s", x->ns, x->st->policy);
        return oneshot_get_failed(what, &e);
    }
    x->policy_missing = doc == NULL;
    if (doc && policy_parse(doc, v->at, &x->policy, perr, sizeof perr) == HCP_ENOMEM) {
        json_decref(doc);
        fprintf(stderr, "%s: out of memory\n", PROG);
        return EXIT_ACCESS;
    }
    json_decref(doc);
    if (x->policy && x->policy->n_calendars > 0) {
        cm_reads_t r = {v->s, json_array()};
        int rc = r.docs ? policy_read_calendars(x->policy, get_configmap, &r, v->at, NULL)
                        : HCP_ENOMEM;
        json_decref(r.docs);
        if (rc != 0) {
            fprintf(stderr, "%s: out of memory\n", PROG);
            return EXIT_ACCESS;
        }
    }
    x->scoped = x->policy && x->policy->valid && x->policy->scoped;
    return -1;
}

/* Reads x (GETs it unless obj, a listed item, is given) and its policy.
 * Returns -1 to go on, or an exit status. */
int oneshot_read_subject(oneshot_t *v, subject_t *x, int nodepool, const json_t *obj)
{
    char path[1024], what[600];
    kube_error e;

    x->kind = nodepool ? "NodePool" : "HostedCluster";
    x->dk = nodepool ? DECIDE_NP : DECIDE_HC;
    if (obj) {
        x->obj = json_incref((json_t *)obj);
    } else {
        kube_path(path, sizeof path, "hypershift.openshift.io", "v1beta1",
                  nodepool ? "nodepools" : "hostedclusters", x->ns, x->name, NULL);
        snprintf(what, sizeof what, "%s %s/%s", x->kind, x->ns, x->name);
        if ((x->obj = oneshot_get(v->s, path, &e)) == NULL)
            return oneshot_get_failed(what, &e);
    }
    if ((x->slim = decide_view_extract(x->dk, x->obj)) == NULL) {
        fprintf(stderr, "%s: out of memory\n", PROG);
        return EXIT_ACCESS;
    }
    x->m = x->dk == DECIDE_NP ? &((decide_np_t *)x->slim)->m : &((decide_hc_t *)x->slim)->m;
    x->st = &x->m->stanza;
    return read_policy(v, x);
}

json_t *oneshot_get_cb(void *s, const char *path, kube_error *err)
{
    return oneshot_get(s, path, err);
}

void oneshot_subject_free(subject_t *x)
{
    json_decref(x->rec.obj);
    if (x->slim)
        decide_view_free(x->dk, x->slim);
    policy_free(x->policy);
    json_decref(x->obj);
}

/* Lists HostedCluster hc's NodePools into the view, each with its policy;
 * a pool whose policy cannot be read is left out. */
void oneshot_read_pools(oneshot_t *v, const subject_t *hc)
{
    char path[1024];
    kube_error e;
    json_t *list, *item;
    size_t i, n;

    kube_path(path, sizeof path, "hypershift.openshift.io", "v1beta1", "nodepools", hc->ns, NULL,
              NULL);
    if ((list = oneshot_get(v->s, path, &e)) == NULL)
        return;
    n = json_array_size(json_object_get(list, "items"));
    if ((v->pools = calloc(n ? n : 1, sizeof *v->pools)) == NULL)
        goto done;
    json_array_foreach(json_object_get(list, "items"), i, item) {
        const char *cl = oneshot_str(item, "spec", "clusterName", NULL);
        const char *nm = oneshot_str(item, "metadata", "name", NULL);
        subject_t *x = &v->pools[v->npools];
        if (!cl || !nm || strcmp(cl, hc->name) != 0)
            continue;
        snprintf(x->ns, sizeof x->ns, "%s", hc->ns);
        snprintf(x->name, sizeof x->name, "%s", nm);
        if (oneshot_read_subject(v, x, 1, item) >= 0) {
            oneshot_subject_free(x);
            memset(x, 0, sizeof *x);
            continue;
        }
        v->npools++;
    }
    v->pools_known = 1;
done:
    json_decref(list);
}

void oneshot_free(oneshot_t *v)
{
    for (size_t i = 0; i < v->npools; i++)
        oneshot_subject_free(&v->pools[i]);
    free(v->pools);
    decide_capi_free(v->capi);
}

void oneshot_read_capi(oneshot_t *v, const subject_t *np)
{
    const decide_np_t *slim = np->slim;
    char path[1024];
    kube_error e;

    if (np->dk != DECIDE_NP || !slim->cluster_name)
        return;
    v->capi_kind = slim->in_place ? DECIDE_MS : DECIDE_MD;
    snprintf(v->capi_ns, sizeof v->capi_ns, "%s-%s", np->ns, slim->cluster_name);
    snprintf(v->capi_name, sizeof v->capi_name, "%s", np->name);
    kube_path(path, sizeof path, "cluster.x-k8s.io", "v1beta1",
              slim->in_place ? "machinesets" : "machinedeployments", v->capi_ns, v->capi_name,
              NULL);
    json_t *obj = oneshot_get(v->s, path, &e);
    if (obj)
        v->capi = decide_capi_extract(v->capi_kind, obj);
    json_decref(obj);
}

/* decide_view_t.get: the objects read, and a NodePool's CAPI object. */
static bool view_get(void *ud, decide_kind_t kind, const char *ns, const char *name,
                     decide_ref_t *out)
{
    const oneshot_t *v = ud;
    const subject_t *x = kind == v->self->dk ? v->self : kind == DECIDE_HC ? v->hc : NULL;

    if ((kind == DECIDE_MD || kind == DECIDE_MS) && v->capi && kind == v->capi_kind &&
        strcmp(ns, v->capi_ns) == 0 && strcmp(name, v->capi_name) == 0) {
        out->data = v->capi;
        return true;
    }
    if (!x || strcmp(x->name, name) != 0)
        return false;
    out->data = x->slim;
    out->rv = oneshot_str(x->obj, "metadata", "resourceVersion", NULL);
    out->uid = oneshot_str(x->obj, "metadata", "uid", NULL);
    return true;
}

/* decide_view_t.lookup_policy: the policies read. */
static int view_policy(void *ud, const char *ns, const char *name, stanza_policy_ref_t *out)
{
    const oneshot_t *v = ud;
    const policy_t *p = NULL;

    for (size_t i = 0; i < v->npools + 2 && !p; i++) {
        const subject_t *x = i == 0 ? v->self : i == 1 ? v->hc : &v->pools[i - 2];
        if (x && x->policy && strcmp(x->policy->name, name) == 0)
            p = x->policy;
    }
    (void)ns;
    if (p == NULL)
        return 0;
    out->found = 1;
    out->ready = p->valid;
    out->sched = p->sched;
    out->sched_for = p->scoped ? p->sched_for : NULL;
    out->message = p->message;
    out->min_left_cp = p->min_left_cp;
    out->min_left_workers = p->min_left_workers;
    return 0;
}

/* decide_view_t.nodepools: the HostedCluster's NodePools listed. */
static void view_nodepools(void *ud, const char *ns, const char *cluster,
                           void (*fn)(const char *name, const decide_np_t *np, void *arg),
                           void *arg)
{
    const oneshot_t *v = ud;

    (void)ns;
    (void)cluster;
    for (size_t i = 0; i < v->npools; i++)
        fn(v->pools[i].name, v->pools[i].slim, arg);
}

const char *oneshot_str(const json_t *obj, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(obj, a);
    if (b)
        v = json_object_get(v, b);
    if (c)
        v = json_object_get(v, c);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

int oneshot_open(session_t *s, const char *kubeconfig, const char *context)
{
    kube_error e;

    s->loop = ev_default_loop(0);
    if (kube_config_load_default(&s->cfg, kubeconfig, context, &e) != 0) {
        fprintf(stderr, "%s: cannot load credentials: %s\n", PROG, e.message);
        return EXIT_ACCESS;
    }
    if (kube_http_init(&s->http, s->loop, &e) != 0) {
        fprintf(stderr, "%s: cannot start the client: %s\n", PROG, e.message);
        kube_config_free(&s->cfg);
        return EXIT_ACCESS;
    }
    if (kube_client_init(&s->client, &s->http, &s->cfg, NULL, &e) != 0) {
        fprintf(stderr, "%s: cannot start the client: %s\n", PROG, e.message);
        kube_http_close(&s->http);
        kube_config_free(&s->cfg);
        return EXIT_ACCESS;
    }
    return -1;
}

void oneshot_close(session_t *s)
{
    kube_client_close(&s->client);
    kube_http_close(&s->http);
    kube_config_free(&s->cfg);
}

decide_view_t oneshot_view(oneshot_t *v)
{
    return (decide_view_t){.ud = v,
                           .get = view_get,
                           .lookup_policy = view_policy,
                           .nodepools = v->hc ? NULL : view_nodepools,
                           .common_window = v->hc == NULL};
}
