/* run: the `run` subcommand, the controller process. */
#ifndef HCP_RUN_H
#define HCP_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "schedule/schedule.h"

#define RUN_MAX_USERS 16 /* --hypershift-users, at most */
/* HyperShift's operator's ServiceAccount (its install: the Deployment
 * "operator" in namespace "hypershift" runs as ServiceAccount "operator"),
 * the one writer of HostedClusters and NodePools of its own. */
#define RUN_HYPERSHIFT_USERS_DEFAULT "system:serviceaccount:hypershift:operator"

/* The flags of `hcp-controller run`. Strings are borrowed from argv. */
typedef struct run_opts {
    const char *kubeconfig;          /* --kubeconfig or NULL */
    const char *context;             /* --context or NULL */
    const char *ns;                  /* --namespace or NULL (all) */
    bool leader_elect;               /* --leader-elect */
    const char *leader_election_ns;  /* --leader-election-namespace or NULL */
    const char *leader_election_id;  /* --leader-election-id */
    const char *metrics_addr;        /* --metrics-bind-address */
    const char *health_addr;         /* --health-probe-bind-address */
    bool metrics_secure;             /* --metrics-secure (default true) */
    bool remediate_drift;            /* --remediate-held-drift (default true) */
    const char *metrics_cert;        /* --metrics-cert-file, NULL: self-signed */
    const char *metrics_key;         /* --metrics-key-file */
    double qps;                      /* --kube-api-qps */
    int burst;                       /* --kube-api-burst */
    bool log_json;                   /* --log-format json */
    int verbosity;                   /* -v */
    bool simulated;                  /* --simulated-start-time given */
    sched_time_t sim_start;
    double time_scale;               /* --time-scale */
    const char *hosted_apiserver;    /* --hosted-apiserver: auto, service or kubeconfig */
    const char *webhook_addr;        /* --webhook-bind-address ("0": disabled) */
    const char *webhook_cert;        /* --webhook-cert-file or NULL */
    const char *webhook_key;         /* --webhook-key-file or NULL */
    const char *webhook_policy;      /* --webhook-failure-policy: Fail or Ignore */
    const char *guard_config;        /* --guard-config: the guard rails file, or NULL */
    double hosted_period;            /* --hosted-reassert-period; 0 = the default */
    double shutdown_delay;           /* --shutdown-delay, seconds (default 5) */
    double standby_after;            /* --standby-release-after, seconds (default 1) */
    const char *hypershift_users[RUN_MAX_USERS + 1]; /* --hypershift-users, split at
                                        commas (into users_buf), NULL-terminated */
    char users_buf[2048];
    bool help;                       /* -h/--help */
} run_opts_t;

/* Parses the flags after "run". Returns 0, or HCP_EINVAL with a sentence in
 * err. */
int run_parse_flags(int argc, char **argv, run_opts_t *o, char *err, size_t errlen);

/* Runs the controller until SIGTERM/SIGINT. Returns the exit status. */
int run_main(int argc, char **argv);

#endif
