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

/*
 * What a construction lacks that only the user can tell. Shapes are never
 * guessed: a front end that can ask (the editor, a terminal) asks for each
 * need, turns each answer into an `# akg:` comment (akg_task_need_answer),
 * puts the comments above needs.comment_line and constructs again.
 */
typedef enum {
    AKG_TASK_NEED_SHAPE = 1, /* an input's dtype and sizes: `# akg: x: f32[8, 64]` */
    AKG_TASK_NEED_VALUE,     /* a size symbol's value: `# akg: B = 32` */
    AKG_TASK_NEED_INIT,      /* the module's constructor arguments: `# akg: init = [64]` */
} akg_task_need_kind;

typedef struct {
    akg_task_need_kind kind;
    char name[64];         /* the input, the symbol, or the __init__ parameter without a value */
    char owner[160];       /* SHAPE: what reads it ("class Block"); INIT: the class */
    unsigned line;         /* 1-based line that names it (its parameter, assignment or comment) */
    unsigned col, end_col; /* its bytes on that line; end_col == col when not found there */
    int placeholder;       /* SHAPE: a shape comment for it (at line) still holds a `?` */
} akg_task_need;

#define AKG_TASK_NEEDS_CAP 16

typedef struct {
    akg_task_need items[AKG_TASK_NEEDS_CAP];
    size_t n;
    unsigned comment_line; /* 1-based: the `# akg:` lines that answer go above this line */
    char indent[64];       /* with this indentation (the selection's) */
} akg_task_needs;

/*
 * akg_task_construct that also says what is missing: when it returns
 * AKG_ENOTFOUND because of inputs whose shapes, symbols whose values or a
 * constructor whose arguments are unknown, needs lists every one of them
 * (not just the first, which err names) and where their comments go; on any
 * other outcome needs->n is 0.
 */
int akg_task_construct_needs(const char *source, size_t len, const char *path, unsigned first_line,
                             unsigned last_line, akg_constructed_task *out, akg_task_needs *needs,
                             char *err, size_t errlen);

/* The question for need, one line for a person: what is asked, of what, and a sample answer. */
void akg_task_need_question(const akg_task_need *need, char *out, size_t outlen);

/* The `# akg:` comment for need with `?` where the answer goes (`# akg: x: f32[?]`,
 * `# akg: B = ?`, `# akg: init = [?]`): the constructor takes a comment that still holds a `?`
 * for no answer, so an unfilled one is asked again, never guessed. */
void akg_task_need_placeholder(const akg_task_need *need, char *out, size_t outlen);

/*
 * Checks a person's answer to need and writes its `# akg:` comment to out
 * (no indentation, no line break). A shape takes `f32[8, 64]` (a dtype of
 * f32, f16, bf16, f64, i64, i32, i8, u8, bool; sizes that are whole numbers
 * or symbols) or `8x64` / `8, 64` (float32); a value a whole number; the
 * constructor's arguments a Python list or arguments (`[64]`, `64, 4`).
 * Returns AKG_OK, or AKG_EINVAL with a message that says what was wrong and
 * what would work.
 */
int akg_task_need_answer(const akg_task_need *need, const char *answer, char *out, size_t outlen,
                         char *err, size_t errlen);

#endif
