/*
 * sketch_link.h: a .sketch file as a design the user lowers ("Generate from
 * this sketch", command akg.generateFromSketch): which reference it is
 * lowered for, and how its last run went.
 *
 * The link: the sketch's first line `# akg: reference PATH` (PATH relative to
 * the sketch's folder, or absolute); without it, a report.json next to the
 * sketch naming the reference (akg's run folders hold sketch.sketch beside
 * report.json).
 *
 * The last run: a job from a sketch that ends with an error placed in that
 * sketch (the report's error.file: a numerical failure of the design, a
 * sketch that does not check or has no bind: section, one the Coder cannot
 * lower) is remembered and shown as a diagnostic on the sketch, until the
 * next run from it or until the sketch's text changes.
 */
#ifndef AKG_LSP_SKETCH_LINK_H
#define AKG_LSP_SKETCH_LINK_H

#include "server.h"

/* The reference the sketch at sketch_path (with text, len bytes) is linked
 * to, as an absolute path into out; how says which link found it ("first
 * line" or "report.json"). Returns 1 when a link names an existing file, 0
 * otherwise (out then holds the named path, or ""). */
int akg_lsp_sketch_reference(const char *sketch_path, const char *text, size_t len, char *out,
                             size_t outlen, const char **how);

/* A job from the sketch at sketch_path ended with report (may be NULL);
 * hash is the SHA-256 of the sketch text the job read. */
void akg_lsp_sketch_run_ended(akg_lsp_server *s, const char *sketch_path, const char *hash,
                              const cJSON *report);
/* Appends the remembered error of doc's last run (if any, and if doc's text
 * is still what that run read) to list, unless a diagnostic already in list
 * starts at the same place. */
void akg_lsp_sketch_run_diagnostics(akg_lsp_server *s, const akg_lsp_document *doc, cJSON *list);
void akg_lsp_sketch_runs_free(akg_lsp_server *s);

#endif
