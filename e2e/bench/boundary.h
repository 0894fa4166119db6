/*
 * The order of writes at one boundary, as the API server committed them.
 *
 * A recorder per resource follows a watch from a resourceVersion taken
 * before the boundary (`kubectl get --raw '...?watch=1&resourceVersion=RV'`)
 * and writes each event with the instant it arrived. Every object lives in
 * the same etcd, so resourceVersions order the writes across resources.
 * boundary_analyse() then finds each HostedCluster's held release (the
 * first event whose spec.release.image is the released image) and counts
 * the other writes committed before the last of them; with an annotation
 * it times a plain client's patch of that annotation the same way.
 */
#ifndef E2E_BENCH_BOUNDARY_H
#define E2E_BENCH_BOUNDARY_H

#include <stdint.h>
#include <sys/types.h>

#define BOUNDARY_RESOURCES 7
#define BOUNDARY_STALLS_MAX 64

typedef struct boundary_rec {
    pid_t pid[BOUNDARY_RESOURCES];   /* recorders (each leads a process group) */
    char dir[512];                   /* their files: one per resource */
} boundary_rec_t;

typedef struct boundary_figs {
    int releases;              /* HostedClusters whose release went through */
    double first_release;      /* seen, seconds after the boundary */
    double last_release;
    long others;               /* status writes after the resourceVersion: HostedClusters
                                  (but their releases), NodePools, companions, policies, Events */
    long others_before_last;   /* of them, committed before the last release */
    long capi, capi_before_last; /* writes to CAPI objects (pauses), the same */
    double first_other;        /* seconds after the boundary; -1 when none */
    char first_other_what[160]; /* which object, for the report */
    int stalls;                /* pauses of more than STALL_S between two releases seen */
    double stalled;            /* their seconds in all */
    double stall[BOUNDARY_STALLS_MAX][2]; /* the first of them: from, to (wall clock) */
    double t_first, t_last;    /* the first and last release seen (wall clock) */
    /* Filled by the bench after boundary_analyse(): CPU seconds from the
     * first patch (or the boundary) to the last release, of the writer
     * (the controller, or the plain client), the API server and etcd. */
    double cpu_writer, cpu_apiserver, cpu_etcd;
    /* Of the API server's: seconds in the kernel, and its minor page
     * faults (memory it touches for the first time, or again after Go's
     * scavenger returned it to the system). */
    double sys_apiserver, faults_apiserver;
    /* The machine's: CPU seconds busy (all processes, both cores) and
     * stolen by the hypervisor, over the same span. */
    double cpu_machine, steal;
} boundary_figs_t;

/* A pause in the releases seen this long is the API server (or etcd) not
 * committing, not the writer's pace: a thousand releases in some 7 s come
 * every 7 ms on average. */
#define STALL_S 0.15

/* Starts the recorders: kubectl (on PATH) with kubeconfig, from resourceVersion rv. */
void boundary_record(boundary_rec_t *r, const char *kubeconfig, const char *rv,
                     const char *dir);

/* Stops them (the whole process group of each). */
void boundary_stop(boundary_rec_t *r);

/* Reads the files: the writes timed (releases) are the first HostedCluster
 * event per object whose spec.release.image becomes `value` or, with
 * annotation set, whose annotation does; t_boundary is the boundary's
 * wall-clock instant. Returns 0, or -1 when a file cannot be read. */
int boundary_analyse(const boundary_rec_t *r, const char *annotation, const char *value,
                     double t_boundary, boundary_figs_t *out);

#endif
