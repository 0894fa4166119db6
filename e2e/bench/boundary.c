/* boundary.c: the order of writes at one boundary (boundary.h). */
#include "boundary.h"

#include <errno.h>
#include <ev.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOSTEDCLUSTERS 0 /* the resource whose events carry the releases */
#define FIRST_CAPI 5     /* CAPI objects from here on */

static const char *const paths[BOUNDARY_RESOURCES] = {
    "/apis/hypershift.openshift.io/v1beta1/hostedclusters",
    "/apis/hypershift.openshift.io/v1beta1/nodepools",
    "/apis/changemanagement.hypershift.openshift.io/v1alpha1/hostedchangemanagementstatuses",
    "/apis/changemanagement.hypershift.openshift.io/v1alpha1/hostedchangemanagementpolicies",
    "/api/v1/events",
    "/apis/cluster.x-k8s.io/v1beta1/clusters",
    "/apis/cluster.x-k8s.io/v1beta1/machinedeployments",
};

static void file_of(const boundary_rec_t *r, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s/watch-%d.log", r->dir, k);
}

/* The resourceVersion of the object of one watch event line, into rv. */
static void line_rv(const char *line, char *rv, size_t len)
{
    json_t *ev = json_loads(line, 0, NULL);
    const char *v = json_string_value(json_object_get(
        json_object_get(json_object_get(ev, "object"), "metadata"), "resourceVersion"));
    if (v)
        snprintf(rv, len, "%s", v);
    json_decref(ev);
}

/* The recorder: kubectl's watch stream, each line prefixed with its arrival.
 * The API server closes a watch whose reader falls behind (a burst of a
 * thousand objects on a loaded machine): the recorder then watches again
 * from the last version it saw, so no event is lost. It runs until killed. */
static void record_one(const char *kubeconfig, const char *rv0, const char *path,
                       const char *file)
{
    char cmd[1600], rv[32];
    FILE *out = fopen(file, "w");
    char *line = NULL;
    size_t cap = 0;
    setpgid(0, 0);
    if (!out)
        _exit(1);
    snprintf(rv, sizeof(rv), "%s", rv0);
    for (;;) {
        snprintf(cmd, sizeof(cmd),
                 "exec kubectl --kubeconfig '%s' get --raw "
                 "'%s?watch=1&resourceVersion=%s&timeoutSeconds=3600' 2>/dev/null",
                 kubeconfig, path, rv);
        FILE *in = popen(cmd, "r");
        if (!in)
            _exit(1);
        while (getline(&line, &cap, in) > 0) {
            fprintf(out, "%.6f\t%s", ev_time(), line);
            fflush(out);
            line_rv(line, rv, sizeof(rv));
        }
        pclose(in);
        usleep(100000);
    }
}

void boundary_record(boundary_rec_t *r, const char *kubeconfig, const char *rv,
                     const char *dir)
{
    snprintf(r->dir, sizeof(r->dir), "%s", dir);
    for (int k = 0; k < BOUNDARY_RESOURCES; k++) {
        char file[600];
        file_of(r, k, file, sizeof(file));
        r->pid[k] = fork();
        if (r->pid[k] == 0)
            record_one(kubeconfig, rv, paths[k], file);
        if (r->pid[k] > 0)
            setpgid(r->pid[k], r->pid[k]);
    }
}

void boundary_stop(boundary_rec_t *r)
{
    for (int k = 0; k < BOUNDARY_RESOURCES; k++)
        if (r->pid[k] > 0) {
            kill(-r->pid[k], SIGTERM);
            waitpid(r->pid[k], NULL, 0);
            r->pid[k] = 0;
        }
}

static const char *str_at(const json_t *o, const char *a, const char *b, const char *c)
{
    const json_t *v = json_object_get(json_object_get(o, a), b);
    return json_string_value(c ? json_object_get(v, c) : v);
}

typedef struct release_set {
    char **names;
    size_t n, cap;
} release_set_t;

/* Adds ns/name; false when it was there already. */
static bool set_add(release_set_t *s, const char *key)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->names[i], key) == 0)
            return false;
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->names = realloc(s->names, s->cap * sizeof(*s->names));
        if (!s->names)
            abort();
    }
    s->names[s->n++] = strdup(key);
    return true;
}

/* One write seen: its commit order, arrival and what it was. */
typedef struct seen {
    uint64_t rv;
    double t;
    bool release;
    bool capi;
    char what[160];
} seen_t;

typedef struct seen_list {
    seen_t *v;
    size_t n, cap;
} seen_list_t;

static void seen_add(seen_list_t *l, const seen_t *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->v = realloc(l->v, l->cap * sizeof(*l->v));
        if (!l->v)
            abort();
    }
    l->v[l->n++] = *s;
}

static int read_file(const char *file, int k, const char *annotation, const char *release,
                     release_set_t *rel, seen_list_t *out)
{
    FILE *f = fopen(file, "r");
    char *line = NULL;
    size_t cap = 0;
    if (!f)
        return -1;
    while (getline(&line, &cap, f) > 0) {
        char *tab = strchr(line, '\t');
        json_t *ev = tab ? json_loads(tab + 1, 0, NULL) : NULL;
        const json_t *o = json_object_get(ev, "object");
        const char *type = json_string_value(json_object_get(ev, "type"));
        const char *rv = str_at(o, "metadata", "resourceVersion", NULL);
        if (!ev || !type || !rv || strcmp(type, "BOOKMARK") == 0 || strcmp(type, "ERROR") == 0) {
            json_decref(ev);
            continue;
        }
        seen_t s = {strtoull(rv, NULL, 10), strtod(line, NULL), false, k >= FIRST_CAPI, ""};
        snprintf(s.what, sizeof(s.what), "%s %s %s/%s", type,
                 json_string_value(json_object_get(o, "kind")),
                 str_at(o, "metadata", "namespace", NULL), str_at(o, "metadata", "name", NULL));
        const char *img = annotation ? str_at(o, "metadata", "annotations", annotation)
                                     : str_at(o, "spec", "release", "image");
        if (k == HOSTEDCLUSTERS && img && strcmp(img, release) == 0) {
            char key[200];
            snprintf(key, sizeof(key), "%s/%s", str_at(o, "metadata", "namespace", NULL),
                     str_at(o, "metadata", "name", NULL));
            s.release = set_add(rel, key);
        }
        seen_add(out, &s);
        json_decref(ev);
    }
    free(line);
    fclose(f);
    return 0;
}

int boundary_analyse(const boundary_rec_t *r, const char *annotation, const char *release,
                     double t_boundary, boundary_figs_t *out)
{
    release_set_t rel = {0};
    seen_list_t all = {0};
    int rc = 0;
    for (int k = 0; k < BOUNDARY_RESOURCES && rc == 0; k++) {
        char file[600];
        file_of(r, k, file, sizeof(file));
        rc = read_file(file, k, annotation, release, &rel, &all);
    }
    *out = (boundary_figs_t){.first_release = -1, .last_release = -1, .first_other = -1};
    uint64_t last_rv = 0, first_other_rv = UINT64_MAX;
    double prev = -1; /* the release seen before (one file, the HostedClusters', in arrival order) */
    for (size_t i = 0; i < all.n; i++) {
        const seen_t *s = &all.v[i];
        double dt = s->t - t_boundary;
        if (s->release) {
            if (prev >= 0 && s->t - prev > STALL_S) {
                if (out->stalls < BOUNDARY_STALLS_MAX) {
                    out->stall[out->stalls][0] = prev;
                    out->stall[out->stalls][1] = s->t;
                }
                out->stalls++;
                out->stalled += s->t - prev;
            }
            prev = s->t;
            out->releases++;
            if (out->first_release < 0 || dt < out->first_release) {
                out->first_release = dt;
                out->t_first = s->t;
            }
            if (dt > out->last_release) {
                out->last_release = dt;
                out->t_last = s->t;
            }
            if (s->rv > last_rv)
                last_rv = s->rv;
        } else if (s->capi) {
            out->capi++;
        } else {
            out->others++;
            if (s->rv < first_other_rv) {
                first_other_rv = s->rv;
                out->first_other = dt;
                snprintf(out->first_other_what, sizeof(out->first_other_what), "%s", s->what);
            }
        }
    }
    for (size_t i = 0; i < all.n; i++) {
        const seen_t *s = &all.v[i];
        if (!s->release && s->rv < last_rv) {
            out->capi_before_last += s->capi;
            out->others_before_last += !s->capi;
        }
    }
    for (size_t i = 0; i < rel.n; i++)
        free(rel.names[i]);
    free(rel.names);
    free(all.v);
    return rc;
}
