/* hcp-controller: change management for HyperShift hosted clusters.
 *
 * The program is a set of subcommands: `run` (the controller itself, and the
 * default when no subcommand is given), `preview`, which shows the
 * windows of policy manifests offline, and `explain`, which tells what
 * governs one HostedCluster or NodePool of a live cluster.
 */
#include <stdio.h>
#include <string.h>

#include "explain.h"
#include "preview.h"
#include "run.h"
#include "version.h"

#define EXIT_USAGE 2

static void usage(FILE *f)
{
    fprintf(f, "Usage: hcp-controller [COMMAND] [OPTIONS]\n"
               "\n"
               "Commands:\n"
               "  run       run the controller (the default)\n"
               "  preview   show when change management policies permit changes\n"
               "  explain   explain what governs a HostedCluster's or NodePool's changes\n"
               "  version   print the version (also --version)\n"
               "  help      show this help\n"
               "\n"
               "Run 'hcp-controller COMMAND --help' for the options of run, preview and\n"
               "explain.\n");
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : "run";

    if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        usage(stdout);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    if (strcmp(cmd, "version") == 0 || strcmp(cmd, "--version") == 0) {
        printf("hcp-controller %s\n", HCP_VERSION);
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
    }
    if (strcmp(cmd, "preview") == 0)
        return preview_main(argc - 1, argv + 1);
    if (strcmp(cmd, "explain") == 0)
        return explain_main(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0)
        return run_main(argc - 2, argv + 2);
    if (cmd[0] == '-')
        return run_main(argc - 1, argv + 1); /* flags alone: run is the default */
    fprintf(stderr, "hcp-controller: unknown command \"%.64s\"\n", cmd);
    usage(stderr);
    return EXIT_USAGE;
}
