/*
 * sketch_support.h: what the server does with .sketch documents, through
 * the engine's sketch module (akg/sketch.h): live parser and checker
 * diagnostics, formatting with the canonical printer, and the meaning of
 * each operation from the language reference (sketch-grammar/README.md).
 */
#ifndef AKG_LSP_SKETCH_SUPPORT_H
#define AKG_LSP_SKETCH_SUPPORT_H

#include <cjson/cJSON.h>

#include "documents.h"

/* Appends LSP diagnostics for the sketch text of doc to list. */
void akg_lsp_sketch_diagnostics(const akg_lsp_document *doc, akg_lsp_encoding enc, cJSON *list);
/* The canonical text of a sketch document into *out (malloc'd, the caller
 * frees it). AKG_EPARSE with a message when it does not parse. */
int akg_lsp_sketch_format(const char *text, size_t len, char **out, char *err, size_t errlen);
/* Markdown for the sketch operation or keyword `name` from the language
 * reference; NULL when it has none. Malloc'd; the caller frees it. */
char *akg_lsp_sketch_op_doc(const char *name);
/* The identifier around byte offset in text into out; 0 when none. */
int akg_lsp_word_at(const char *text, size_t len, size_t offset, char *out, size_t outlen,
                    size_t *start, size_t *end);

#endif
