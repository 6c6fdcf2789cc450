/*
 * reference_index.h: what the server knows about each open Python document:
 * its tree-sitter parse (akg_reference_parse, which runs nothing) and whether
 * it is a reference operator in KernelBench form.
 *
 * Typing marks a document dirty and restarts one debounce timer; when typing
 * pauses, dirty documents are re-parsed and their diagnostics published.
 * A request that needs the parse (hover, lens) re-parses at once instead.
 */
#ifndef AKG_LSP_REFERENCE_INDEX_H
#define AKG_LSP_REFERENCE_INDEX_H

#include "server.h"

#define AKG_LSP_DEBOUNCE_MS 150

/* The document's text changed: schedule a re-parse. */
void akg_lsp_refindex_changed(akg_lsp_server *s, akg_lsp_document *doc);
/* Re-parses now if the document is dirty. */
void akg_lsp_refindex_ensure(akg_lsp_server *s, akg_lsp_document *doc);
/* 1 when doc is a Python file holding `class Model` (a reference, perhaps
 * with parts missing; diagnostics say which). Parses first if needed. */
int akg_lsp_is_reference(akg_lsp_server *s, akg_lsp_document *doc);
/* The forward call whose range holds byte offset, or NULL. */
const akg_ref_call *akg_lsp_ref_call_at(const akg_lsp_document *doc, size_t offset);
/* 1 when offset lies inside r. */
int akg_lsp_range_holds(const akg_lsp_document *doc, akg_range r, size_t offset);

#endif
