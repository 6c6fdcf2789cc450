/*
 * sync.h: text synchronisation (didOpen, didChange, didSave, didClose).
 * Opening or editing a document runs nothing: it parses, and re-reads stored
 * results. Only the autoProbe setting starts a job on open.
 */
#ifndef AKG_LSP_SYNC_H
#define AKG_LSP_SYNC_H

#include "server.h"

int akg_lsp_handle_did_open(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                            size_t errlen);
int akg_lsp_handle_did_change(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                              size_t errlen);
int akg_lsp_handle_did_save(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                            size_t errlen);
int akg_lsp_handle_did_close(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                             size_t errlen);

#endif
