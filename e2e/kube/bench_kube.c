/*
 * Benchmark: a cold list + watch sync of 10,000 NodePool-sized objects
 * (~3 KiB of JSON each) into a kube_cache.
 *
 * Creates the objects first when the benchmark namespace holds fewer (with
 * the client itself: 200 creates in flight, over at most 64 connections), then
 * syncs a fresh cache from a fresh connection and prints:
 *   - the time from start to synced,
 *   - cache memory per object, split into retained field strings and
 *     overhead (malloc accounting with mallinfo2() around the sync, after the
 *     HTTP machinery is closed so only the cache remains),
 *   - HTTP connections opened (CURLINFO_NUM_CONNECTS summed).
 *
 * HCP_BENCH_OBJECTS overrides the object count.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define NS "bench-kube"
#define IN_FLIGHT 200

static const char *group = "hypershift.openshift.io", *version = "v1beta1",
                  *resource = "nodepools";
static bool use_configmaps;

/* The fields the controller keeps from a NodePool (see DESIGN 3.4-3.6). */
typedef struct np_slim {
    const char *cluster;      /* spec.clusterName (interned: shared by pools of a cluster) */
    char *release;            /* spec.release.image */
    const char *strategy;     /* changemanagement annotation (interned) */
    int replicas;             /* spec.replicas */
    unsigned char upgrade_inplace;   /* spec.management.upgradeType == InPlace */
    unsigned char updating_version;  /* condition UpdatingVersion == True */
    unsigned char updating_config;   /* condition UpdatingConfig == True */
} np_slim;

static size_t retained_strings; /* bytes of non-interned strings the extractor keeps */

static int extract(const json_t *obj, kube_intern *strings, void **out, void *ud)
{
    const json_t *spec = json_object_get(obj, "spec");
    const json_t *ann = json_object_get(json_object_get(obj, "metadata"), "annotations");
    const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions"), *c;
    const char *s;
    np_slim *np = calloc(1, sizeof(*np));
    size_t i;

    (void)ud;
    if (np == NULL)
        return -1;
    if (use_configmaps) { /* same shape, stored under data as strings */
        spec = json_object_get(obj, "data");
        s = json_string_value(json_object_get(spec, "clusterName"));
        np->cluster = s ? kube_intern_get(strings, s) : NULL;
        s = json_string_value(json_object_get(spec, "releaseImage"));
    } else {
        s = json_string_value(json_object_get(spec, "clusterName"));
        np->cluster = s ? kube_intern_get(strings, s) : NULL;
        np->replicas = (int)json_integer_value(json_object_get(spec, "replicas"));
        np->upgrade_inplace = json_string_value(json_object_get(json_object_get(spec, "management"),
                                                                "upgradeType")) &&
                              strcmp(json_string_value(json_object_get(
                                         json_object_get(spec, "management"), "upgradeType")),
                                     "InPlace") == 0;
        s = json_string_value(json_object_get(json_object_get(spec, "release"), "image"));
    }
    if (s) {
        np->release = strdup(s);
        retained_strings += strlen(s) + 1;
    }
    s = json_string_value(json_object_get(ann, "changemanagement.hypershift.openshift.io/strategy"));
    np->strategy = s ? kube_intern_get(strings, s) : NULL;
    json_array_foreach(conds, i, c) {
        const char *t = json_string_value(json_object_get(c, "type"));
        const char *st = json_string_value(json_object_get(c, "status"));
        if (t && st && strcmp(st, "True") == 0) {
            if (strcmp(t, "UpdatingVersion") == 0)
                np->updating_version = 1;
            if (strcmp(t, "UpdatingConfig") == 0)
                np->updating_config = 1;
        }
    }
    *out = np;
    return 0;
}

static void release(void *data, kube_intern *strings, void *ud)
{
    np_slim *np = data;

    (void)ud;
    kube_intern_put(strings, np->cluster);
    kube_intern_put(strings, np->strategy);
    free(np->release);
    free(np);
}

static const kube_cache_ops ops = {extract, release, NULL, NULL, NULL};

/* A NodePool as HyperShift writes it, padded to about 3 KiB of JSON. */
static json_t *make_object(int i)
{
    char name[64], cluster[64], filler[1900];
    json_t *o;

    snprintf(name, sizeof(name), "np-%05d", i);
    snprintf(cluster, sizeof(cluster), "hc-%03d", i / 10);
    memset(filler, 'x', sizeof(filler) - 1);
    filler[sizeof(filler) - 1] = '\0';
    if (use_configmaps) {
        o = json_pack("{s:s,s:s,s:{s:s,s:{s:s,s:s},s:{s:s,s:s}},s:{s:s,s:s,s:s,s:s}}",
                      "apiVersion", "v1", "kind", "ConfigMap", "metadata", "name", name,
                      "labels", "hypershift.openshift.io/nodePool", name,
                      "cluster.x-k8s.io/cluster-name", cluster, "annotations",
                      "changemanagement.hypershift.openshift.io/strategy", "ByPolicy",
                      "hypershift.openshift.io/nodePoolPlatformMachineTemplate", filler,
                      "data", "clusterName", cluster, "releaseImage",
                      "quay.io/openshift-release-dev/ocp-release:4.14.8-x86_64", "pad", filler,
                      "pad2", filler);
        return o;
    }
    o = json_pack(
        "{s:s,s:s,"
        "s:{s:s,s:{s:s,s:s},s:{s:s,s:s,s:s}},"
        "s:{s:s,s:i,s:{s:s,s:{s:i,s:i},s:b,s:b},s:{s:s},"
        "   s:{s:s,s:{s:s,s:s,s:{s:s},s:[{s:s,s:s}],s:{s:i,s:s,s:i},s:[{s:s,s:s}]}},"
        "   s:[{s:s},{s:s}], s:{s:s}, s:[{s:s}]}}",
        "apiVersion", "hypershift.openshift.io/v1beta1", "kind", "NodePool",
        "metadata", "name", name,
        "labels", "hypershift.openshift.io/auto-created-for-infra", cluster,
        "cluster.x-k8s.io/cluster-name", cluster,
        "annotations", "changemanagement.hypershift.openshift.io/strategy", "ByPolicy",
        "changemanagement.hypershift.openshift.io/policy", "weekend-windows",
        "hypershift.openshift.io/nodePoolPlatformMachineTemplate", filler,
        "spec", "clusterName", cluster, "replicas", 3,
        "management", "upgradeType", "Replace", "replace", "maxSurge", 1, "maxUnavailable", 0,
        "autoRepair", 1, "inPlaceUpgradeMaxUnavailable", 0,
        "release", "image", "quay.io/openshift-release-dev/ocp-release:4.14.8-x86_64",
        "platform", "type", "AWS", "aws", "instanceType", "m5.xlarge", "instanceProfile",
        "hc-instance-profile-worker", "subnet", "id", "subnet-0123456789abcdef0",
        "securityGroups", "id", "sg-0123456789abcdef0", "sgid-extra", "default",
        "rootVolume", "size", 120, "type", "gp3", "iops", 3000,
        "resourceTags", "key", "kubernetes.io/cluster/hc", "value", "owned",
        "tuningConfig", "name", "tuned-a", "name", "tuned-b",
        "nodeLabels", "node-role.kubernetes.io/worker", "true",
        "config", "name", "machineconfig-worker");
    return o;
}

typedef struct creator {
    harness *h;
    int next, total, in_flight, failed, done;
    char coll[256];
    kube_error last;
} creator;

static void create_more(creator *cr);

static void created(kube_client *c, const kube_error *err, json_t *obj, void *ud)
{
    creator *cr = ud;

    (void)c;
    (void)obj;
    cr->in_flight--;
    cr->done++;
    if (err && err->http_status != 409) {
        cr->failed++;
        cr->last = *err;
    }
    create_more(cr);
}

static void create_more(creator *cr)
{
    while (cr->in_flight < IN_FLIGHT && cr->next < cr->total) {
        json_t *o = make_object(cr->next++);
        kube_error e;
        if (kube_create(&cr->h->client, cr->coll, o, created, cr, &e) < 0) {
            cr->failed++;
            cr->done++;
            cr->last = e;
        } else {
            cr->in_flight++;
        }
        json_decref(o);
    }
}

static int count_existing(harness *h, const char *coll)
{
    sync_result r = {0};
    int n = -1;

    {
        kube_call call;
        memset(&call, 0, sizeof(call));
        call.verb = KUBE_VERB_LIST;
        call.path = coll;
        call.query = "limit=1";
        call.on_done = harness_store;
        call.ud = &r;
        if (kube_client_call(&h->client, &call, NULL, NULL) < 0)
            return -1;
    }
    if (harness_wait(h, &r, 60) == 0) {
        json_t *md = json_object_get(r.obj, "metadata");
        n = (int)json_array_size(json_object_get(r.obj, "items"));
        n += (int)json_integer_value(json_object_get(md, "remainingItemCount"));
    } else {
        fprintf(stderr, "bench: list %s: HTTP %d %s\n", coll, r.err.http_status, r.err.message);
    }
    sync_result_clear(&r);
    return n;
}

static void synced_cb(kube_watch *w, void *ud)
{
    (void)w;
    *(bool *)ud = true;
}

static void add_strings(const kube_obj *o, void *ud)
{
    *(size_t *)ud += strlen(o->name) + 1 + strlen(o->uid) + 1 + strlen(o->rv) + 1;
}

int main(void)
{
    harness h;
    creator cr;
    int total = 10000, existing;
    const char *env = getenv("HCP_BENCH_OBJECTS");
    double t0, t1;
    struct mallinfo2 before, after;
    kube_cache cache;
    kube_watch w;
    kube_watch_opts o;
    kube_error e;
    bool synced = false;
    size_t meta_strings = 0, count, total_bytes;
    long connects;
    char path[256];

    if (env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (end == env || *end != '\0' || v <= 0 || v > 1000000) {
            fprintf(stderr, "bench: HCP_BENCH_OBJECTS must be 1..1000000\n");
            return 1;
        }
        total = (int)v;
    }
    if (harness_init(&h, NULL) < 0)
        return 1;
    if (harness_create_ns(&h, &h.client, NS) < 0)
        return 1;
    kube_path(path, sizeof(path), group, version, resource, NS, NULL, NULL);
    existing = count_existing(&h, path);
    if (existing < 0) {
        fprintf(stderr, "bench: NodePool CRD not served; using ConfigMaps of the same size\n");
        use_configmaps = true;
        kube_path(path, sizeof(path), "", "v1", "configmaps", NS, NULL, NULL);
        existing = count_existing(&h, path);
        if (existing < 0)
            return 1;
    }
    {
        json_t *sample = make_object(0);
        char *s = json_dumps(sample, JSON_COMPACT);
        printf("object size:             %zu bytes of JSON as sent (%s)\n", strlen(s),
               use_configmaps ? "ConfigMap" : "NodePool");
        free(s);
        json_decref(sample);
    }
    if (existing < total) {
        memset(&cr, 0, sizeof(cr));
        cr.h = &h;
        cr.next = existing;
        cr.total = total;
        snprintf(cr.coll, sizeof(cr.coll), "%s", path);
        t0 = ev_time();
        create_more(&cr);
        while (cr.done < total - existing)
            harness_run_for(&h, 0.2);
        t1 = ev_time();
        printf("created:                 %d objects in %.2f s (%.0f/s), %d failed%s%s, "
               "%ld connection(s)\n",
               total - existing, t1 - t0, (total - existing) / (t1 - t0), cr.failed,
               cr.failed ? ": " : "", cr.failed ? cr.last.message : "", h.http.connects);
        if (cr.failed)
            return 1;
    } else {
        printf("created:                 0 (namespace %s already holds %d)\n", NS, existing);
    }
    harness_close(&h);

    /* Cold sync: fresh engine, fresh connection, empty cache. */
    malloc_trim(0);
    if (harness_init(&h, NULL) < 0)
        return 1;
    before = mallinfo2();
    if (kube_cache_init(&cache, &ops, NULL) < 0)
        return 1;
    memset(&o, 0, sizeof(o));
    o.path = path;
    o.page_size = 500;
    o.first_list_from_cache = getenv("HCP_BENCH_PAGINATED") == NULL;
    o.on_synced = synced_cb;
    o.ud = &synced;
    t0 = ev_time();
    if (kube_watch_start(&w, &h.client, &cache, &o, &e) < 0) {
        fprintf(stderr, "bench: %s\n", e.message);
        return 1;
    }
    if (!harness_run_until(&h, &synced, 120)) {
        fprintf(stderr, "bench: not synced after 120 s: %s\n", w.last_error.message);
        return 1;
    }
    t1 = ev_time();
    kube_watch_stop(&w);
    connects = h.http.connects;
    {
        size_t n;
        const kube_stat *st = kube_client_stats(&h.client, &n);
        unsigned long lists = 0, i;
        for (i = 0; i < n; i++)
            if (st[i].verb == KUBE_VERB_LIST)
                lists += st[i].count;
        printf("cold list+watch sync:    %zu objects in %.3f s (target < 3 s), %lu list "
               "request(s), %s\n", kube_cache_count(&cache), t1 - t0, lists,
               o.first_list_from_cache ? "first list from the watch cache (resourceVersion=0)"
                                       : "paginated consistent list (limit=500)");
    }
    /* Close the HTTP side (whose connections count, below) so only the cache remains. */
    kube_client_close(&h.client);
    kube_http_close(&h.http);
    malloc_trim(0);
    after = mallinfo2();
    count = kube_cache_count(&cache);
    kube_cache_foreach(&cache, add_strings, &meta_strings);
    total_bytes = after.uordblks - before.uordblks;
    printf("cache memory:            %zu bytes total, %.0f bytes/object (malloc accounting)\n",
           total_bytes, (double)total_bytes / (double)count);
    printf("  retained strings:      %.0f bytes/object (name, uid, resourceVersion, release image)\n",
           (double)(meta_strings + retained_strings) / (double)count);
    printf("  overhead:              %.0f bytes/object beyond those strings (target <= 1024)\n",
           ((double)total_bytes - (double)(meta_strings + retained_strings)) / (double)count);
    printf("  interned strings:      %zu distinct (namespaces, cluster names, strategies)\n",
           cache.strings.count);
    printf("HTTP connections used:   %ld (CURLINFO_NUM_CONNECTS summed over the sync)\n", connects);
    kube_cache_free(&cache);
    kube_config_free(&h.cfg);
    ev_loop_destroy(h.loop);
    return (t1 - t0) < 3.0 && ((double)total_bytes - (double)(meta_strings + retained_strings)) /
                                      (double)count <= 1024
               ? 0
               : 2;
}
