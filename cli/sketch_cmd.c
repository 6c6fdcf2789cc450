/* sketch_cmd.c: `akg_cli sketch check|fmt FILE...`, the sketch checker and printer. */
#include <stdio.h>
#include <string.h>

#include "akg/sketch.h"
#include "cli.h"

int cli_sketch(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: akg_cli sketch check FILE...   diagnostics as file:line:col: error: ...\n"
                   "       akg_cli sketch fmt [--write] FILE  print the canonical form\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "check"))
        return akg_sketch_cli_check(argc - 2, argv + 2);
    if (!strcmp(argv[1], "fmt"))
        return akg_sketch_cli_fmt(argc - 2, argv + 2);
    fprintf(stderr, "akg_cli sketch: unknown subcommand '%s' (check or fmt)\n", argv[1]);
    return 2;
}
