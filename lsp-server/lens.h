/*
 * lens.h: textDocument/codeLens above `class Model`: per target the latest
 * status ("cpu/cpp 1.84x, verified 5/5", "cpu/cpp failed: numerical
 * mismatch", "cpu/cpp running...") whose command generates again, and an
 * "open report" lens where a report exists.
 */
#ifndef AKG_LSP_LENS_H
#define AKG_LSP_LENS_H

#include "server.h"

int akg_lsp_handle_code_lens(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                             size_t errlen);
/* The status title of one result, e.g. "cpu/cpp 1.84x, verified 5/5". */
void akg_lsp_lens_title(const cJSON *entry, char *out, size_t outlen);

#endif
