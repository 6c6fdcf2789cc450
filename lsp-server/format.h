/*
 * format.h: textDocument/formatting of .sketch files through the sketch
 * printer (the canonical form). A sketch that does not parse is left alone
 * and the request fails with the parser's first message.
 */
#ifndef AKG_LSP_FORMAT_H
#define AKG_LSP_FORMAT_H

#include "server.h"

int akg_lsp_handle_formatting(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen);

#endif
