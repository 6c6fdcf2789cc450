/* task.c: `akg_cli task FILE --select LINE[:LINE]`, the TaskConstructor alone.
 * It prints the constructed KernelBench-form reference on stdout and saves it
 * (default .akg/tasks/<name>.py next to FILE) so that `akg_cli op` can take it
 * and the user can read and edit it. A selection it cannot turn into a
 * reference exits 1 with the line and what would fix it. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/task_constructor.h"
#include "cli.h"

static void task_usage(FILE *f)
{
    fprintf(f,
            "usage: akg_cli task FILE --select LINE[:LINE] [--output PATH] [--no-save]\n"
            "\n"
            "Builds a KernelBench-form reference (Model, get_inputs, get_init_inputs and,\n"
            "with `# @hint:` comments, get_inputs_dyn_list) from the selected lines of FILE:\n"
            "an nn.Module subclass, a function, or statements inside a forward. Input shapes\n"
            "come from `# akg: x: f32[B, 4096]` comments (`# akg: B = 32`), annotations,\n"
            "hints (`# @hint: M in range(16, 65536)`) or a sample call in the file.\n"
            "\n"
            "  --select LINE[:LINE]  the selection, 1-based lines, inclusive\n"
            "  --output PATH         where to save it (default .akg/tasks/<name>.py beside FILE)\n"
            "  --no-save             print only\n");
}

int cli_task(int argc, char **argv)
{
    const char *select = NULL, *output = NULL;
    int help = 0, no_save = 0;
    cli_flag flags[] = {{"select", 1, &select, NULL},
                        {"output", 1, &output, NULL},
                        {"no-save", 0, NULL, &no_save},
                        {"help", 0, NULL, &help},
                        {NULL, 0, NULL, NULL}};
    const char *pos[1];
    int npos;
    if (cli_parse("task", argc, argv, flags, pos, 1, &npos))
        return 2;
    if (help) {
        task_usage(stdout);
        return 0;
    }
    if (npos != 1 || !select) {
        task_usage(stderr);
        return 2;
    }
    char *end;
    long first = strtol(select, &end, 10), last = first;
    if (*end == ':' || *end == '-')
        last = strtol(end + 1, &end, 10);
    if (*end || first < 1 || last < first) {
        fprintf(stderr,
                "akg_cli task: --select %s is not a line range; write LINE or FIRST:LAST "
                "(1-based, FIRST <= LAST)\n",
                select);
        return 2;
    }
    char err[2048];
    char *src;
    size_t len;
    if (akg_read_file(pos[0], (size_t)16 << 20, &src, &len, err, sizeof err)) {
        fprintf(stderr, "akg_cli task: %s\n", err);
        return 2;
    }
    akg_constructed_task t;
    int rc =
        akg_task_construct(src, len, pos[0], (unsigned)first, (unsigned)last, &t, err, sizeof err);
    free(src);
    if (rc) {
        fprintf(stderr, "akg_cli task: %s\n", err);
        return 1;
    }
    fputs(t.reference, stdout);
    int status = 0;
    if (!no_save) {
        char path[4096];
        if (output) {
            snprintf(path, sizeof path, "%s", output);
        } else {
            char *copy = akg_strdup(pos[0]);
            snprintf(path, sizeof path, "%s/.akg/tasks/%s.py", copy ? dirname(copy) : ".", t.name);
            free(copy);
        }
        char *dir = akg_strdup(path);
        if (!dir || akg_mkdirs(dirname(dir), err, sizeof err) ||
            akg_write_file(path, t.reference, strlen(t.reference), err, sizeof err)) {
            fprintf(stderr, "akg_cli task: cannot save %s: %s\n", path, dir ? err : "no memory");
            status = 1;
        } else {
            fprintf(stderr, "akg_cli task: saved %s (akg_cli op %s)\n", path, path);
        }
        free(dir);
    }
    akg_constructed_task_free(&t);
    return status;
}
