/*
 * diagnostics.h: textDocument/publishDiagnostics for open documents.
 *
 *  - a reference: syntax errors, missing KernelBench parts, and from the
 *    latest result per target: unsupported torch calls at their range, probe
 *    failures at get_inputs, correctness failures at forward (worst error and
 *    trial), results of an older version of the file as Information;
 *  - a .sketch file: the sketch parser and checker, live while typing, and
 *    the error its last run placed in it (sketch_link.h);
 *  - a generated kernel: build errors ("file:line:col: error: ...") of a
 *    failed run since the server started, at their line.
 * Every publish carries the document's version.
 */
#ifndef AKG_LSP_DIAGNOSTICS_H
#define AKG_LSP_DIAGNOSTICS_H

#include "server.h"

void akg_lsp_diagnostics_publish(akg_lsp_server *s, akg_lsp_document *doc);
/* Publishes an empty list (the document closed). */
void akg_lsp_diagnostics_clear(akg_lsp_server *s, const char *uri);
/* The diagnostics of doc as a new array (the caller deletes it). */
cJSON *akg_lsp_diagnostics_compute(akg_lsp_server *s, akg_lsp_document *doc);

#endif
