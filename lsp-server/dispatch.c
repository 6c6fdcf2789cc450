/* dispatch.c: see dispatch.h. */
#include "dispatch.h"

#include "actions.h"
#include "selection.h"
#include "diagnostics.h"
#include "format.h"
#include "hover.h"
#include "inlay.h"
#include "jobs.h"
#include "lens.h"
#include "sync.h"
#include "watch.h"

static const akg_lsp_method feature_methods[] = {
    {"textDocument/didOpen", akg_lsp_handle_did_open, 0},
    {"textDocument/didChange", akg_lsp_handle_did_change, 0},
    {"textDocument/didSave", akg_lsp_handle_did_save, 0},
    {"textDocument/didClose", akg_lsp_handle_did_close, 0},
    {"textDocument/hover", akg_lsp_handle_hover, 1},
    {"textDocument/codeAction", akg_lsp_handle_code_action, 1},
    {"textDocument/codeLens", akg_lsp_handle_code_lens, 1},
    {"textDocument/inlayHint", akg_lsp_handle_inlay_hint, 1},
    {"textDocument/formatting", akg_lsp_handle_formatting, 1},
    {"workspace/executeCommand", akg_lsp_handle_execute_command, 1},
    {"workspace/didChangeWatchedFiles", akg_lsp_handle_watched_files, 0},
    {"window/workDoneProgress/cancel", akg_lsp_handle_progress_cancel, 0},
    {NULL, NULL, 0},
};

const akg_lsp_method *akg_lsp_feature_methods(void)
{
    return feature_methods;
}

cJSON *akg_lsp_command_names(void)
{
    static const char *const names[] = {AKG_LSP_CMD_GENERATE,     AKG_LSP_CMD_DESIGN_SKETCH,
                                        AKG_LSP_CMD_VERIFY,       AKG_LSP_CMD_OPEN_REPORT,
                                        AKG_LSP_CMD_CANCEL,       AKG_LSP_CMD_FROM_SKETCH,
                                        AKG_LSP_CMD_FOR_SELECTION, AKG_LSP_CMD_USE_KERNEL};
    return cJSON_CreateStringArray(names, (int)(sizeof names / sizeof names[0]));
}
