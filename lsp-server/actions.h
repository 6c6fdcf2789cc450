/*
 * actions.h: code actions on a reference and workspace/executeCommand with
 * the same command ids (so clients can bind keys to them).
 *
 *   akg.generate      [{uri, backend, dsl, arch?, workflow?}] -> {jobId}
 *   akg.designSketch  [{uri, backend?, dsl?}]                 -> {jobId}   (workflow design_only)
 *   akg.verify        [{uri, kernel?, backend?, dsl?}]        -> {jobId}   (workflow verifier_only;
 *                     kernel defaults to model_new.py next to the reference, else the last run's)
 *   akg.openReport    [{uri, backend?, dsl?}]                 -> {path}    (+ window/showDocument)
 *   akg.cancel        [{jobId?}]                              -> {cancelled: n} (none: all jobs)
 *   akg.generateFromSketch [{uri, reference?, backend?, dsl?, arch?, workflow?}] -> {jobId}
 *                     uri is a .sketch file: the design to lower and verify (the Designer is
 *                     skipped); reference (a URI or path) defaults to the sketch's link
 *                     (sketch_link.h). Offered as a code action on a linked sketch.
 *   akg.generateForSelection, akg.useGeneratedKernel: a selection in any Python file
 *                     (selection.h).
 */
#ifndef AKG_LSP_ACTIONS_H
#define AKG_LSP_ACTIONS_H

#include "server.h"

#define AKG_LSP_CMD_GENERATE "akg.generate"
#define AKG_LSP_CMD_DESIGN_SKETCH "akg.designSketch"
#define AKG_LSP_CMD_VERIFY "akg.verify"
#define AKG_LSP_CMD_OPEN_REPORT "akg.openReport"
#define AKG_LSP_CMD_CANCEL "akg.cancel"
#define AKG_LSP_CMD_FROM_SKETCH "akg.generateFromSketch"

int akg_lsp_handle_code_action(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                               size_t errlen);
int akg_lsp_handle_execute_command(akg_lsp_server *s, const cJSON *params, cJSON **result,
                                   char *err, size_t errlen);

/* A Command object {title, command, arguments: [argument]}; argument is taken. */
cJSON *akg_lsp_command(const char *title, const char *command, cJSON *argument);
/* 1 when the client's context.only (NULL or not an array: anything) admits kind, a kind being
 * admitted by itself and by each of its prefixes at a '.' ("refactor" admits "refactor.akg"). */
int akg_lsp_kind_allowed(const cJSON *only, const char *kind);
/* Appends a CodeAction {title, kind, command} to list (takes command). */
void akg_lsp_add_action(cJSON *list, const char *title, const char *kind, cJSON *command);

#endif
