/* sketch_cmd.c: `akg_cli sketch check|fmt|json FILE...`, the sketch checker, printer and JSON form. */
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"
#include "akg/sketch_json.h"
#include "cli.h"

/* `akg_cli sketch emit`: the kernel a backend lowers from one sketch, on stdout. */
static int cli_sketch_emit(int argc, char **argv)
{
    const char *backend = "cpu", *dsl = "cpp", *file = NULL;
    bool safe = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc)
            backend = argv[++i];
        else if (!strcmp(argv[i], "--dsl") && i + 1 < argc)
            dsl = argv[++i];
        else if (!strcmp(argv[i], "--safe"))
            safe = true;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "akg_cli sketch emit: unknown option '%s'\n", argv[i]);
            return 2;
        } else if (!file)
            file = argv[i];
        else {
            fprintf(stderr, "akg_cli sketch emit: one sketch file at a time\n");
            return 2;
        }
    }
    if (!file) {
        fprintf(stderr, "usage: akg_cli sketch emit [--backend cpu] [--dsl cpp] [--safe] FILE\n");
        return 2;
    }
    const akg_backend *be = akg_backend_find(backend, dsl);
    if (!be) {
        char names[256];
        akg_backend_names(names, sizeof names);
        fprintf(stderr, "akg_cli sketch emit: no backend %s/%s in this build (known: %s)\n",
                backend, dsl, names);
        return 2;
    }
    char err[1024];
    char *text = NULL;
    size_t len = 0;
    if (akg_read_file(file, AKG_SKETCH_MAX_TEXT, &text, &len, err, sizeof err)) {
        fprintf(stderr, "akg_cli sketch emit: %s\n", err);
        return 2;
    }
    akg_sketch *sk = NULL;
    akg_sketch_diag_list *diags = akg_sketch_diag_list_new();
    int rc = akg_sketch_parse(text, len, &sk, diags);
    if (rc == 0 && akg_sketch_check(sk, diags) != 0)
        rc = 1;
    if (rc) {
        for (size_t i = 0; i < akg_sketch_diag_count(diags); i++) {
            char *line = akg_sketch_diag_format(file, akg_sketch_diag_at(diags, i));
            if (line)
                fprintf(stderr, "%s\n", line);
            free(line);
        }
        akg_sketch_diag_list_free(diags);
        akg_sketch_free(sk);
        free(text);
        return 1;
    }
    akg_sketch_diag_list_free(diags);
    char *src = NULL;
    rc = be->lower(sk, safe, &src, err, sizeof err);
    if (rc)
        fprintf(stderr, "%s: %s\n", file, err);
    else
        fputs(src, stdout);
    free(src);
    akg_sketch_free(sk);
    free(text);
    return rc ? 1 : 0;
}

int cli_sketch(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: akg_cli sketch check FILE...   diagnostics as file:line:col: error: ...\n"
                   "       akg_cli sketch fmt [--write] FILE  print the canonical form\n"
                   "       akg_cli sketch json FILE...    check, then print the JSON form (one line a file)\n"
                   "       akg_cli sketch emit [--backend cpu] [--dsl cpp] [--safe] FILE\n"
                   "                                      check, then print the kernel lowered from it\n");
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "check"))
        return akg_sketch_cli_check(argc - 2, argv + 2);
    if (!strcmp(argv[1], "fmt"))
        return akg_sketch_cli_fmt(argc - 2, argv + 2);
    if (!strcmp(argv[1], "json"))
        return akg_sketch_cli_json(argc - 2, argv + 2);
    if (!strcmp(argv[1], "emit"))
        return cli_sketch_emit(argc - 2, argv + 2);
    fprintf(stderr, "akg_cli sketch: unknown subcommand '%s' (check or fmt)\n", argv[1]);
    return 2;
}
