/*
 * ask.c: see ask.h.
 *
 * Why the lines go above the selection and not beside each parameter: the
 * constructor reads a shape comment for an input anywhere in the selection's
 * definition (and a size's value or `init` anywhere in the file), so one
 * block of lines at one place is one edit and one undo, it is where the
 * constructor's own messages tell the user to write them, and it leaves the
 * signature as the user wrote it.
 */
#include "ask.h"

#include <stdio.h>
#include <string.h>

#include "akg/akg.h"

size_t akg_lsp_ask_lines(const akg_task_needs *needs)
{
    size_t n = 0;
    for (size_t i = 0; i < needs->n; i++)
        n += !needs->items[i].placeholder;
    return n;
}

static int reads_statements(const akg_task_need *need)
{
    return strncmp(need->owner, "the statements", 14) == 0;
}

static void need_message(const akg_task_needs *needs, const akg_task_need *need, char *out,
                         size_t n)
{
    switch (need->kind) {
    case AKG_TASK_NEED_SHAPE:
        if (need->placeholder)
            snprintf(out, n,
                     "the shape comment for `%s` still holds `?`, so akg did not generate a "
                     "kernel: write its dtype and sizes there, such as `# akg: %s: f32[8, 64]`, "
                     "and run \"Generate kernel for this\" again",
                     need->name, need->name);
        else if (reads_statements(need))
            snprintf(out, n,
                     "akg cannot know the shape of `%s` (read by %s), so it did not "
                     "generate a kernel: give it with a shape comment `# akg: %s: f32[B, 4096]` "
                     "(and `# akg: B = 32`) above line %u; the quick fix adds the line with `?` "
                     "to fill in",
                     need->name, need->owner, need->name, needs->comment_line);
        else
            snprintf(out, n,
                     "akg cannot know the shape of `%s` (read by %s), so it did not generate a "
                     "kernel: give it with a shape comment `# akg: %s: f32[B, 4096]` (and "
                     "`# akg: B = 32`) above line %u, an annotation `%s: \"f32[B, 4096]\"`, or a "
                     "sample call in the file that passes tensors; the quick fix adds the comment "
                     "with `?` to fill in",
                     need->name, need->owner, need->name, needs->comment_line, need->name);
        break;
    case AKG_TASK_NEED_VALUE:
        snprintf(out, n,
                 "akg cannot know the value of `%s`, a size in the shape of `%s`, so it did not "
                 "generate a kernel: give it with `# akg: %s = 32` (its real value), a hint "
                 "`# @hint: %s in range(1, 4096)`, or a definition of %s in the file",
                 need->name, need->owner, need->name, need->name, need->name);
        break;
    case AKG_TASK_NEED_INIT:
        snprintf(out, n,
                 "akg cannot know how to construct %s: its __init__ parameter `%s` has no default "
                 "and no call %s(...) in the file gives it; add `# akg: init = [64]` (the real "
                 "arguments) above line %u, or such a call",
                 need->owner, need->name, need->owner, needs->comment_line);
        break;
    }
}

void akg_lsp_ask_diagnostics(akg_lsp_server *s, const akg_lsp_document *doc,
                             const akg_task_needs *needs, akg_range selection, cJSON *list)
{
    for (size_t i = 0; i < needs->n; i++) {
        const akg_task_need *need = &needs->items[i];
        if (!need->line || need->line > doc->n_lines)
            continue;
        akg_range r = akg_lsp_doc_line_range(doc, need->line - 1);
        if (need->end_col > need->col) {
            r.start_col = need->col;
            r.end_row = r.start_row;
            r.end_col = need->end_col;
        }
        char msg[1200];
        need_message(needs, need, msg, sizeof msg);
        cJSON *d = cJSON_CreateObject();
        cJSON_AddItemToObject(d, "range", akg_lsp_doc_range_json(doc, s->encoding, r));
        cJSON_AddNumberToObject(d, "severity", 1);
        cJSON_AddStringToObject(
            d, "code", need->kind == AKG_TASK_NEED_SHAPE ? "missing-shape" : "missing-value");
        cJSON_AddStringToObject(d, "source", "akg");
        cJSON_AddStringToObject(d, "message", msg);
        cJSON *rel = cJSON_AddArrayToObject(d, "relatedInformation");
        cJSON *info = cJSON_CreateObject();
        cJSON *loc = cJSON_AddObjectToObject(info, "location");
        cJSON_AddStringToObject(loc, "uri", doc->uri);
        cJSON_AddItemToObject(loc, "range", akg_lsp_doc_range_json(doc, s->encoding, selection));
        cJSON_AddStringToObject(info, "message",
                                "the selection akg was asked to generate a "
                                "kernel for");
        cJSON_AddItemToArray(rel, info);
        cJSON_AddItemToArray(list, d);
    }
}

/* The lines to insert; with snippet tab stops when snippet is set. */
static void edit_text(const akg_task_needs *needs, int snippet, akg_buf *b)
{
    int stop = 1;
    for (size_t i = 0; i < needs->n; i++) {
        const akg_task_need *need = &needs->items[i];
        if (need->placeholder)
            continue;
        char line[256];
        if (!snippet) {
            akg_task_need_placeholder(need, line, sizeof line);
        } else if (need->kind == AKG_TASK_NEED_SHAPE) {
            snprintf(line, sizeof line, "# akg: %s: ${%d:f32}[${%d:?}]", need->name, stop,
                     stop + 1);
            stop += 2;
        } else if (need->kind == AKG_TASK_NEED_VALUE) {
            snprintf(line, sizeof line, "# akg: %s = ${%d:?}", need->name, stop++);
        } else {
            snprintf(line, sizeof line, "# akg: init = [${%d:?}]", stop++);
        }
        akg_buf_appendf(b, "%s%s\n", needs->indent, line);
    }
}

cJSON *akg_lsp_ask_edit(akg_lsp_server *s, const akg_lsp_document *doc, const akg_task_needs *needs,
                        int open)
{
    if (akg_lsp_ask_lines(needs) == 0 || needs->comment_line == 0)
        return NULL;
    int versioned = s->caps.document_changes && open;
    int snippet = versioned && s->caps.snippet_edit;
    akg_buf text;
    akg_buf_init(&text, 64 * 1024);
    edit_text(needs, snippet, &text);
    size_t at = needs->comment_line - 1 < doc->n_lines ? doc->line_starts[needs->comment_line - 1]
                                                       : doc->text.len;
    cJSON *edit = cJSON_CreateObject();
    cJSON *range = cJSON_AddObjectToObject(edit, "range");
    cJSON_AddItemToObject(range, "start", akg_lsp_doc_position_json(doc, s->encoding, at));
    cJSON_AddItemToObject(range, "end", akg_lsp_doc_position_json(doc, s->encoding, at));
    if (snippet) {
        cJSON *sv = cJSON_AddObjectToObject(edit, "snippet");
        cJSON_AddStringToObject(sv, "kind", "snippet");
        cJSON_AddStringToObject(sv, "value", text.data ? text.data : "");
    } else {
        cJSON_AddStringToObject(edit, "newText", text.data ? text.data : "");
    }
    akg_buf_free(&text);
    cJSON *edits = cJSON_CreateArray();
    cJSON_AddItemToArray(edits, edit);
    return akg_lsp_doc_workspace_edit(doc, edits, versioned);
}

/* "`x` and `g`" (names of needs of kind, or of all kinds when kind is 0). */
static void names(const akg_task_needs *needs, char *out, size_t n)
{
    out[0] = '\0';
    size_t count = akg_lsp_ask_lines(needs), k = 0;
    for (size_t i = 0; i < needs->n; i++) {
        const akg_task_need *need = &needs->items[i];
        if (need->placeholder)
            continue;
        size_t used = strlen(out);
        const char *sep = k == 0 ? "" : k + 1 == count ? " and " : ", ";
        if (need->kind == AKG_TASK_NEED_INIT)
            snprintf(out + used, n - used, "%sthe arguments of %s", sep, need->owner);
        else
            snprintf(out + used, n - used, "%s`%s`", sep, need->name);
        k++;
    }
}

void akg_lsp_ask_message(const akg_task_needs *needs, char *out, size_t outlen)
{
    char what[600];
    names(needs, what, sizeof what);
    int shapes_only = 1;
    for (size_t i = 0; i < needs->n; i++)
        shapes_only &= needs->items[i].kind == AKG_TASK_NEED_SHAPE;
    snprintf(out, outlen,
             "akg cannot know %s%s, so it did not generate a kernel (it never guesses). Add "
             "`# akg:` lines for %s above line %u to fill in, then run \"Generate kernel for "
             "this\" again?",
             shapes_only ? "the shape of " : "", what, akg_lsp_ask_lines(needs) > 1 ? "them" : "it",
             needs->comment_line);
}

void akg_lsp_ask_title(const akg_task_needs *needs, char *out, size_t outlen)
{
    char what[600];
    names(needs, what, sizeof what);
    snprintf(out, outlen, "akg: Add # akg: lines for %s to fill in", what);
}
