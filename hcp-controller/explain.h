/* explain: the `hcp-controller explain` subcommand.
 *
 * Reads one HostedCluster or NodePool from a live cluster (with the usual
 * kubeconfig flags), with its policy and, for a NodePool, its HostedCluster
 * and that cluster's policy, and tells a person what governs it: the stanza
 * and the policy in force, whether changes are permitted now and why (a
 * window, an exclusion and its reason, an override and its expiry, the
 * HostedCluster constraining the NodePool), the change held or in progress,
 * and the next windows of the effective schedule. The same resolution as
 * the controller's (policy/stanza.h) is used, so the answer is the
 * controller's answer; beside it, what the running controller recorded
 * (recorded.h), so that a controller that has not acted on it shows.
 */
#ifndef HCP_EXPLAIN_H
#define HCP_EXPLAIN_H

#include <stdio.h>

/* Runs the subcommand; argv[0] is "explain". Returns the exit status: 0
 * explained, 1 no access (credentials refused, 401/403) or the API server
 * unreachable, 2 bad usage, or the object, its HostedCluster or its policy
 * does not exist (a missing policy is still explained: it resolves to
 * Restrictive, as the controller resolves it). */
int explain_main(int argc, char **argv);

/* Prints the options of explain to f. */
void explain_usage(FILE *f);

#endif
