/* interactive.h: `akg_cli op` without a reference, at a terminal: a session of requests and
 * pasted code, each run through the pipeline (interactive.c). */
#ifndef AKG_CLI_INTERACTIVE_H
#define AKG_CLI_INTERACTIVE_H

#include <uv.h>

#include "akg/engine.h"

typedef struct {
    akg_engine *engine;         /* the session owns it from here and closes it at the end */
    const akg_job_options *job; /* every flag of the command line; reference_path is set per run */
    int quiet, json;
} cli_session_options;

/* Runs the session on loop until Ctrl-D, `quit` or SIGTERM; returns the exit status (0 when it
 * ended cleanly). The engine is closed when it returns. */
int cli_interactive(uv_loop_t *loop, const cli_session_options *opts);

/* op.c's printing, shared with the session: progress lines on stderr, the summary on stdout. */
void cli_op_print_progress(const akg_event *ev);
void cli_op_print_summary(const akg_event *ev, int json);

#endif
