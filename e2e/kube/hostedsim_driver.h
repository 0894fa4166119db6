/*
 * hostedsim_driver: drives e2e/hostedsim (many hosted API servers in one process, see
 * main.go) from the C tests and benchmarks: starts and stops it, gives the
 * kubeconfig of each server, and reads and sets its counters and modes over
 * its control API. Requests are counted where they arrive, not where they
 * are sent. One hostedsim per process.
 */
#ifndef E2E_HOSTEDSIM_DRIVER_H
#define E2E_HOSTEDSIM_DRIVER_H

#include <stdbool.h>
#include <sys/types.h>

/* Totals of hostedsim's counters at one instant. */
typedef struct hostedsim_stats {
    double gets, patches, lists, watches, requests; /* over all servers */
    double first_requests; /* requests up to each server's first projection, summed */
    double admin_requests; /* requests made with the kubeconfig's admin token */
    double sa_requests;    /* requests made with a token of the controller's ServiceAccount */
    double tokens;         /* TokenRequests answered */
    int projected;         /* servers whose ClusterVersion carries both conditions */
    double last_projected; /* Unix time the last of them became so */
    double dropped_at, restored_at; /* of server hostedsim_drop()'s index */
} hostedsim_stats_t;

/* Starts hostedsim with n servers (building it with e2e/hostedsim/build.sh
 * when needed; run from the repository's top directory), its files in dir.
 * Exits the process on failure, naming what failed. */
void hostedsim_start(int n, const char *dir);

/* Stops hostedsim. */
void hostedsim_stop(void);

/* Server i's kubeconfig (token auth, its CA inline), base64-encoded as a
 * Secret's data holds it: a new string the caller frees. */
char *hostedsim_kubeconfig_b64(int i);

/* Reads the counters (index: the server whose drop times to report).
 * Returns 0, or -1 when hostedsim does not answer. */
int hostedsim_stats(int index, hostedsim_stats_t *out);

/* A foreign writer removes our two conditions from server index's
 * ClusterVersion. Returns 0 or -1. */
int hostedsim_drop(int index);

/* Sets server index's mode (ok, 429, 500, slow, blackhole). Returns 0 or -1. */
int hostedsim_mode(int index, const char *mode);

#endif
