/*
 * inlay.h: textDocument/inlayHint: the tensor shapes and dtypes of forward's
 * inputs and outputs, from the probe stored with the latest (not stale)
 * result (the report's "task" field). Nothing is shown before a probe ran:
 * the server never runs the reference to get them.
 */
#ifndef AKG_LSP_INLAY_H
#define AKG_LSP_INLAY_H

#include "server.h"

int akg_lsp_handle_inlay_hint(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen);

#endif
