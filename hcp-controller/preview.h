/* preview: the `hcp-controller preview` subcommand.
 *
 * Offline view of a schedule: reads HostedChangeManagementPolicy manifests
 * (YAML or JSON), intersects them, and prints the permitted windows from a
 * given instant, as a table for people or as JSON for scripts.
 */
#ifndef HCP_CONTROLLER_PREVIEW_H
#define HCP_CONTROLLER_PREVIEW_H

#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"
#include "schedule/schedule.h"

/* Runs the subcommand. argv[0] is "preview"; the remaining arguments are
 * its options. Writes results to stdout and diagnostics to stderr. Returns
 * the process exit status: 0 success, 1 an I/O or internal error, 2 bad
 * usage or an invalid manifest or policy. */
int preview_main(int argc, char **argv);

/* Prints the options of preview to f. */
void preview_usage(FILE *f);

/* Reads a whole file (or standard input for "-") into a new buffer (the
 * caller frees it). Returns 0, or HCP_EIO with a message on stderr. */
int preview_read_file(const char *path, char **data, size_t *len);

/* `preview --check`: judges the effective schedule s (the intersection of
 * the n policies p) against the guard rails in guard_file, over the 12
 * months from `from`, and prints the verdict (a sentence per failed rule,
 * or JSON). Returns the exit status: 0 allowed, 3 refused, 2 an invalid
 * guard rail configuration, 1 an I/O or internal error. */
int preview_check(const char *guard_file, policy_t *const *p, int n, sched_t *s,
                  sched_time_t from, int has_restrictive_until, sched_time_t restrictive_until,
                  int json);

#endif
