/*
 * hover.h: textDocument/hover.
 *  - on `class Model` and on forward's calls of a reference: the latest result
 *    per target (speedup, reference and kernel ms, tolerance, trials, target,
 *    when, report link), from the store;
 *  - on an operation or keyword of a .sketch file: its meaning from the
 *    language reference.
 */
#ifndef AKG_LSP_HOVER_H
#define AKG_LSP_HOVER_H

#include "server.h"

int akg_lsp_handle_hover(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                         size_t errlen);

/* Appends the markdown table of results to b (shared with tests of lenses). */
void akg_lsp_results_markdown(akg_buf *b, const cJSON *results);

#endif
