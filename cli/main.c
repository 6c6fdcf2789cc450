/*
 * main.c: akg_cli, the command-line front end.
 *
 *   akg_cli op ...        run a workflow on one reference (see `akg_cli op --help`)
 *   akg_cli runs          list recent runs from the store
 *   akg_cli sketch ...    check or format Unified Sketch files
 *   akg_cli bench ...     run an operator suite
 *   akg_cli task ...      build a reference from a selection in a model file
 *
 * Exit status: 0 success, 1 no kernel passed (or checks failed), 2 usage
 * errors (unknown flag, missing file, unsupported target).
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "cli.h"

static void usage(FILE *f)
{
    fprintf(f,
            "akg_cli %s: turn a PyTorch reference operator into a verified kernel\n"
            "\n"
            "usage: akg_cli <command> [options]\n"
            "\n"
            "commands:\n"
            "  op       generate, verify and profile a kernel for one reference\n"
            "  runs     list recent runs recorded in the store\n"
            "  sketch   check or format Unified Sketch files (sketch check|fmt FILE...)\n"
            "  bench    run an operator suite and summarise pass rate and speedups\n"
            "  task     build a reference from a selection in a model file (task FILE --select L:L)\n"
            "\n"
            "`akg_cli <command> --help` describes each command.\n",
            AKG_VERSION);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("akg_cli %s\n", AKG_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "op"))
        return cli_op(argc - 1, argv + 1);
    if (!strcmp(cmd, "runs"))
        return cli_runs(argc - 1, argv + 1);
    if (!strcmp(cmd, "sketch"))
        return cli_sketch(argc - 1, argv + 1);
    if (!strcmp(cmd, "bench"))
        return cli_bench(argc - 1, argv + 1);
    if (!strcmp(cmd, "task"))
        return cli_task(argc - 1, argv + 1);
    fprintf(stderr, "akg_cli: unknown command '%s' (try akg_cli --help)\n", cmd);
    return 2;
}
