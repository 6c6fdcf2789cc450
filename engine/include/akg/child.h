/*
 * child.h: run one short-lived child process (a compiler) on the loop.
 *
 * The child gets its own process group; its stdout and stderr are captured
 * together (capped at 1 MiB, the rest dropped and noted); a deadline kills the
 * group. Exactly one callback per run, also on cancellation.
 */
#ifndef AKG_CHILD_H
#define AKG_CHILD_H

#include <uv.h>

typedef struct akg_child akg_child;

typedef struct {
    int spawned; /* 0 when the program could not be started */
    int exit_status;
    int term_signal;
    int timed_out;
    int cancelled;
    const char *output; /* stdout+stderr, NUL-terminated, valid during the callback */
} akg_child_result;

typedef void (*akg_child_cb)(const akg_child_result *result, void *user);

/* Starts argv[0] (looked up on PATH) in cwd (NULL: inherit). The child owns
 * its memory and frees it after the callback. *out (may be NULL) is valid
 * until the callback. */
int akg_child_run(uv_loop_t *loop, char *const argv[], const char *cwd, double timeout_s,
                  akg_child_cb cb, void *user, akg_child **out);
/* Kills the child's process group; the callback follows with cancelled=1. */
void akg_child_cancel(akg_child *child);

#endif
