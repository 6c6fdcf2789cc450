/*
 * ask.h: what the TaskConstructor cannot know, asked in the editor.
 *
 * When "Generate kernel for this" stops because an input's shape, a size's
 * value or the module's constructor arguments are unknown
 * (akg_task_construct_needs), the server never guesses; it
 *   - publishes an Error diagnostic at each unknown's name (its parameter,
 *     its assignment, or the shape comment that still holds a `?`), code
 *     missing-shape or missing-value, that names it and the ways to give it:
 *     a shape comment, an annotation, a sample call in the file;
 *   - offers a quick fix (kind quickfix, preferred) whose edit inserts one
 *     `# akg:` line for each unknown, and only those, above the selection:
 *     snippet tab stops (`# akg: x: ${1:f32}[${2:?}]`, a 3.18 SnippetTextEdit)
 *     where the client declared workspace.workspaceEdit.snippetEditSupport,
 *     plain text with a `?` to fill (`# akg: x: f32[?]`) everywhere else;
 *   - asks at once with window/showMessageRequest, whose action sends that
 *     edit with workspace/applyEdit (selection.c keeps the failure and sends
 *     it).
 * A `?` left unfilled is no answer: the next construction stops on it, with a
 * diagnostic at that comment. Once the lines are filled, "Generate kernel for
 * this" builds the task.
 */
#ifndef AKG_LSP_ASK_H
#define AKG_LSP_ASK_H

#include "akg/task_constructor.h"
#include "server.h"

#define AKG_LSP_ASK_ACTION "Add the # akg: lines to fill in"

/* How many of needs get a line of their own (a `?` already in the file does not). */
size_t akg_lsp_ask_lines(const akg_task_needs *needs);

/* Appends the diagnostics of needs in doc (one a need) to list; selection is the range the user
 * asked a kernel for, named in each one's relatedInformation. */
void akg_lsp_ask_diagnostics(akg_lsp_server *s, const akg_lsp_document *doc,
                             const akg_task_needs *needs, akg_range selection, cJSON *list);

/* The WorkspaceEdit inserting the `# akg:` lines for needs into doc (versioned when open and the
 * client takes documentChanges; snippets only then and when it takes snippet edits); NULL when
 * no line is needed. The caller owns it. */
cJSON *akg_lsp_ask_edit(akg_lsp_server *s, const akg_lsp_document *doc, const akg_task_needs *needs,
                        int open);

/* The one-line question put with window/showMessageRequest (and the quick fix's title). */
void akg_lsp_ask_message(const akg_task_needs *needs, char *out, size_t outlen);
void akg_lsp_ask_title(const akg_task_needs *needs, char *out, size_t outlen);

#endif
