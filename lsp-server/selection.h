/*
 * selection.h: "Generate kernel for this" on a selection in any Python file,
 * and "Use the generated kernel" once the kernel is verified.
 *
 *   akg.generateForSelection [{uri, range, backend?, dsl?, arch?, workflow?, profileRuns?,
 *                              minSpeedup?}] -> {jobId, task, name}
 *       The TaskConstructor (akg/task_constructor.h, the code of `akg_cli task`) builds a
 *       KernelBench-form reference from the selected lines (an nn.Module subclass, a
 *       function, or statements inside a forward) of the document's current text; it is
 *       saved as .akg/tasks/<name>.py beside the model and an ordinary job (jobs.h) runs
 *       on it. A selection it cannot turn into a reference is answered with -32803 and
 *       becomes an Error diagnostic (the constructor's message names the construct, the
 *       line, the reason and what would work) until the text changes or a later
 *       construction in that file succeeds: at the selection for an unsupported-construct
 *       or syntax error; for what only the user can tell (an input's shape, a size's value,
 *       the constructor's arguments: missing-shape, missing-value) at each unknown's name,
 *       with a quick fix and a window/showMessageRequest that insert the `# akg:` lines to
 *       fill in (ask.h).
 *   akg.useGeneratedKernel   [{uri, jobId?}] -> {label}
 *       Sends workspace/applyEdit: one WorkspaceEdit (versioned when the client takes
 *       documentChanges), so the original is one undo away. The kernel's model_new.py
 *       stays in its run folder (it loads the compiled kernel beside it) and is imported
 *       by its path relative to the model file: two helpers (_akg_kernel, _akg_on) are
 *       added once after the imports, and
 *         a class     gets `Name = _akg_kernel("...")` after its definition (ModelNew
 *                     takes the same constructor arguments and builds the same weights);
 *         a function  gets `name = _akg_kernel("...")()` after its definition;
 *         statements  are replaced by one call `outs = _akg_on(self, "...").forward(ins)`
 *                     (or `return ...`): ModelNew's forward run over the module's own
 *                     weights and attributes (a view of self, nothing copied), so the
 *                     module's state_dict and its trained weights stay as they are.
 *       When a job from a selection passes, the server also asks
 *       (window/showMessageRequest) whether to use the kernel; the answer
 *       "Use the generated kernel" does the same.
 *
 * The jobs from selections are remembered (at most 32; a failed or cancelled job is
 * forgotten) with the selected lines' text: a kernel is only swapped in while those
 * lines are as they were.
 */
#ifndef AKG_LSP_SELECTION_H
#define AKG_LSP_SELECTION_H

#include "server.h"

#define AKG_LSP_CMD_FOR_SELECTION "akg.generateForSelection"
#define AKG_LSP_CMD_USE_KERNEL "akg.useGeneratedKernel"

/* Appends the selection's code actions (kind refactor.akg) for range in doc. */
void akg_lsp_selection_actions(akg_lsp_server *s, akg_lsp_document *doc, const cJSON *range,
                               const cJSON *only, cJSON *list);
/* akg.generateForSelection with its target already read (uri, path, backend, dsl, arch). */
int akg_lsp_selection_generate(akg_lsp_server *s, const cJSON *arg, const char *uri,
                               const char *path, const char *backend, const char *dsl,
                               const char *arch, cJSON **result, char *err, size_t errlen);
/* akg.useGeneratedKernel. */
int akg_lsp_selection_use(akg_lsp_server *s, const cJSON *arg, cJSON **result, char *err,
                          size_t errlen);
/* A job ended: model_new is its verified model_new.py, or NULL when it did not pass. */
void akg_lsp_selection_job_done(akg_lsp_server *s, long long job_id, const char *model_new,
                                double speedup);
/* The model file's URI of a job from a selection, or NULL. Borrowed. */
const char *akg_lsp_selection_model_uri(akg_lsp_server *s, long long job_id);
/* Appends the construction failure shown for doc (if its text is unchanged). */
void akg_lsp_selection_diagnostics(akg_lsp_server *s, akg_lsp_document *doc, cJSON *list);
void akg_lsp_selections_free(akg_lsp_server *s);

#endif
