/*
 * The hosted API servers of the controller benchmark: e2e/hostedsim serving
 * one per HostedCluster from one process (TLS, ClusterVersion `version`
 * each), the kubeconfig Secrets that point at them, and the figures of the
 * hosted ClusterVersion projection read from hostedsim's counters (requests
 * are counted where they arrive, not where they are sent).
 */
#ifndef BENCH_HOSTED_H
#define BENCH_HOSTED_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

/* Totals of hostedsim's counters at one instant. */
typedef struct bench_hosted_stats {
    double gets, patches, lists, watches, requests; /* over all servers */
    int projected;         /* servers whose ClusterVersion carries both conditions */
    double last_projected; /* Unix time the last of them became so */
    double dropped_at, restored_at; /* of server bench_hosted_drop()'s index */
} bench_hosted_stats;

/* Starts hostedsim with n servers (building it when needed), its files in
 * dir. Exits the benchmark on failure. */
void bench_hosted_start(int n, const char *dir);

/* Stops hostedsim. */
void bench_hosted_stop(void);

/* The kubeconfig Secret of HostedCluster index i (control-plane namespace
 * hcpns), pointing at server i: a new object. */
json_t *bench_hosted_secret(int i, const char *hcpns);

/* Reads the counters (index: the server whose drop times to report).
 * Returns 0, or -1 when hostedsim does not answer. */
int bench_hosted_stats_get(int index, bench_hosted_stats *out);

/* A foreign writer removes our two conditions from server index's
 * ClusterVersion. Returns 0 or -1. */
int bench_hosted_drop(int index);

/* Sets server index's mode (ok, 429, 500, slow, blackhole). Returns 0 or -1. */
int bench_hosted_mode(int index, const char *mode);

#endif
