/* bench.c: `akg_cli bench`, an operator suite through the engine (see bench/README.md). */
#include <stdio.h>

#include "cli.h"

int cli_bench(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "akg_cli bench: not available in this build yet\n");
    return 2;
}
