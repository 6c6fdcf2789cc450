/*
 * sketch_file.h: a sketch file a user gives as the design (`akg_cli op
 * --sketch FILE`, the editor's "Generate from this sketch").
 *
 * A user's sketch replaces the Designer, so it must be a design the Coder can
 * lower for the task: it parses, it checks, and it has a complete bind:
 * section (the checker makes a present section complete; a sketch without one
 * is refused here). Failures come back as compiler-style lines,
 * "file:line:col: error: message", the way `akg_cli sketch check` prints them.
 */
#ifndef AKG_SKETCH_FILE_H
#define AKG_SKETCH_FILE_H

#include <stddef.h>

struct akg_sketch;

typedef struct {
    char *text;                /* the file's text; owned */
    struct akg_sketch *sketch; /* success: parsed, checked and bound; owned */
    char *diagnostics;         /* failure: the error lines, '\n'-separated; owned */
    unsigned line, column;     /* failure: the first error, 1-based (0: none) */
    unsigned end_line, end_column;
    unsigned header_line; /* the line of `sketch NAME`, 1-based (1 when not found) */
} akg_sketch_file;

/* Reads, parses and checks path; display names the file in the diagnostics
 * (NULL: path). Returns AKG_OK with out->sketch set; AKG_EPARSE when the
 * sketch does not parse, does not check or has no bind: section (out's
 * diagnostics and first error set, err the first line); AKG_ENOTFOUND or
 * AKG_EIO when the file cannot be read; AKG_ENOMEM. out is filled in every
 * case and released with akg_sketch_file_free. */
int akg_sketch_file_load(const char *path, const char *display, akg_sketch_file *out, char *err,
                         size_t errlen);
void akg_sketch_file_free(akg_sketch_file *f);

#endif
