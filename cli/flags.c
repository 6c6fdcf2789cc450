/* flags.c: "--name value" / "--name=value" parsing for every subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int cli_parse(const char *cmd, int argc, char **argv, cli_flag *flags, const char **pos,
              int max_pos, int *npos)
{
    *npos = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            for (i++; i < argc; i++) {
                if (*npos >= max_pos) {
                    fprintf(stderr, "akg_cli %s: too many arguments: %s\n", cmd, argv[i]);
                    return 2;
                }
                pos[(*npos)++] = argv[i];
            }
            break;
        }
        if (a[0] == '-' && a[1] == '-' && a[2]) {
            const char *name = a + 2;
            const char *eq = strchr(name, '=');
            size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
            cli_flag *f = NULL;
            for (cli_flag *g = flags; g->name; g++)
                if (strlen(g->name) == nlen && strncmp(g->name, name, nlen) == 0)
                    f = g;
            if (!f) {
                fprintf(stderr, "akg_cli %s: unknown flag --%.*s (see akg_cli %s --help)\n", cmd,
                        (int)nlen, name, cmd);
                return 2;
            }
            if (f->takes_value) {
                if (eq) {
                    *f->value = eq + 1;
                } else if (i + 1 < argc) {
                    *f->value = argv[++i];
                } else {
                    fprintf(stderr, "akg_cli %s: --%s needs a value\n", cmd, f->name);
                    return 2;
                }
            } else {
                if (eq) {
                    fprintf(stderr, "akg_cli %s: --%s takes no value\n", cmd, f->name);
                    return 2;
                }
                *f->flag = 1;
            }
            continue;
        }
        if (a[0] == '-' && a[1] == 'h' && a[2] == '\0') {
            for (cli_flag *g = flags; g->name; g++)
                if (strcmp(g->name, "help") == 0)
                    *g->flag = 1;
            continue;
        }
        if (a[0] == '-' && a[1] && a[1] != '-') {
            fprintf(stderr, "akg_cli %s: unknown flag %s (see akg_cli %s --help)\n", cmd, a, cmd);
            return 2;
        }
        if (*npos >= max_pos) {
            fprintf(stderr, "akg_cli %s: unexpected argument: %s\n", cmd, a);
            return 2;
        }
        pos[(*npos)++] = a;
    }
    return 0;
}
