/*
 * task_constructor.h: a KernelBench-form reference built from a selection in
 * any Python file (an nn.Module subclass, a function, or a run of statements
 * inside forward). See engine/task/constructor.c for what is read and how.
 */
#ifndef AKG_TASK_CONSTRUCTOR_H
#define AKG_TASK_CONSTRUCTOR_H

#include <stddef.h>

typedef struct {
    char *name;      /* the task's name: the class or function, or Class_forward_L12_14 */
    char *reference; /* the reference source, ready to write to a .py file */
    /* For each line of reference (n_lines of them), the 1-based line of the file it comes from,
     * 0 for a line akg wrote (an input's line maps to its shape comment or annotation), so that
     * an error in the reference is told at the user's line. */
    unsigned *source_lines;
    size_t n_lines;
    unsigned shapes_line; /* 1-based line the first input's shape comes from; 0: none */
} akg_constructed_task;

/*
 * Builds the reference for the selection first_line..last_line (1-based,
 * inclusive) of source (path is only named in messages). On success fills
 * *out (the caller owns both strings: akg_constructed_task_free) and returns
 * AKG_OK; otherwise returns AKG_EPARSE, AKG_EUNSUPPORTED or AKG_ENOTFOUND with
 * a message in err that names the construct, the line, the reason and what
 * would fix it (for an unknown shape: the comment to add).
 */
int akg_task_construct(const char *source, size_t len, const char *path, unsigned first_line,
                       unsigned last_line, akg_constructed_task *out, char *err, size_t errlen);
void akg_constructed_task_free(akg_constructed_task *t);

#endif
