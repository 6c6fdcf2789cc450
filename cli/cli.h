/* cli.h: the subcommands of akg_cli; each returns the process exit status. */
#ifndef AKG_CLI_H
#define AKG_CLI_H

int cli_op(int argc, char **argv);
int cli_runs(int argc, char **argv);
int cli_sketch(int argc, char **argv);
int cli_bench(int argc, char **argv);
int cli_task(int argc, char **argv);

/* Flag parsing shared by the subcommands: "--name value" and "--name=value". */
typedef struct {
    const char *name;  /* without the dashes */
    int takes_value;
    const char **value; /* set when takes_value */
    int *flag;          /* set to 1 when !takes_value */
} cli_flag;

/* Parses argv[1..] into flags and positionals (at most max_pos). Prints one
 * line and returns 2 on an unknown flag or a missing value; 0 otherwise. */
int cli_parse(const char *cmd, int argc, char **argv, cli_flag *flags, const char **pos,
              int max_pos, int *npos);

#endif
