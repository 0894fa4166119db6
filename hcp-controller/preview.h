/* preview: the `hcp-controller preview` subcommand.
 *
 * Offline view of a schedule: reads HostedChangeManagementPolicy manifests
 * (YAML or JSON), intersects them, and prints the permitted windows from a
 * given instant, as a table for people or as JSON for scripts.
 */
#ifndef HCP_CONTROLLER_PREVIEW_H
#define HCP_CONTROLLER_PREVIEW_H

#include <stdio.h>

/* Runs the subcommand. argv[0] is "preview"; the remaining arguments are
 * its options. Writes results to stdout and diagnostics to stderr. Returns
 * the process exit status: 0 success, 1 an I/O or internal error, 2 bad
 * usage or an invalid manifest or policy. */
int preview_main(int argc, char **argv);

/* Prints the options of preview to f. */
void preview_usage(FILE *f);

#endif
