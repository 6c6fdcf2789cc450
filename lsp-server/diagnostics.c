/* diagnostics.c: see diagnostics.h. */
#include "diagnostics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "reference_index.h"
#include "results.h"
#include "selection.h"
#include "sketch_link.h"
#include "sketch_support.h"

enum { SEV_ERROR = 1, SEV_WARNING = 2, SEV_INFO = 3, SEV_HINT = 4 };

static void add_diag(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc, akg_range r,
                     int severity, const char *code, const char *message)
{
    cJSON *d = cJSON_CreateObject();
    cJSON_AddItemToObject(d, "range", akg_lsp_doc_range_json(doc, s->encoding, r));
    cJSON_AddNumberToObject(d, "severity", severity);
    if (code)
        cJSON_AddStringToObject(d, "code", code);
    cJSON_AddStringToObject(d, "source", "akg");
    cJSON_AddStringToObject(d, "message", message);
    cJSON_AddItemToArray(list, d);
}

static int contains_word(const char *hay, const char *word)
{
    if (!hay || !word || !*word)
        return 0;
    size_t n = strlen(word);
    for (const char *p = strstr(hay, word); p; p = strstr(p + 1, word)) {
        int left = p == hay || !(p[-1] == '_' || (p[-1] >= 'a' && p[-1] <= 'z') ||
                                 (p[-1] >= 'A' && p[-1] <= 'Z') || (p[-1] >= '0' && p[-1] <= '9'));
        char c = p[n];
        int right = !(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                      (c >= '0' && c <= '9'));
        if (left && right)
            return 1;
    }
    return 0;
}

static int is_probe_failure(const cJSON *entry)
{
    const char *stage = akg_lsp_result_string(entry, "report.error.stage");
    if (!stage)
        stage = akg_lsp_result_string(entry, "report.stage");
    if (stage)
        return strcmp(stage, "probe") == 0;
    const char *cls = akg_lsp_result_string(entry, "report.error.class");
    const char *detail = akg_lsp_result_string(entry, "report.error.detail");
    return (cls && strstr(cls, "probe")) || (detail && strstr(detail, "probe"));
}

/* The range an error names with 1-based "line"/"column" (and optional
 * "end_line"/"end_column"), as the engine reports where the reference
 * failed; 0 when it names none. */
static int error_range(const akg_lsp_document *doc, const cJSON *entry, akg_range *out)
{
    double line = akg_lsp_result_number(entry, "report.error.line");
    if (isnan(line) || line < 1 || line > doc->n_lines)
        return 0;
    double col = akg_lsp_result_number(entry, "report.error.column");
    double end_line = akg_lsp_result_number(entry, "report.error.end_line");
    double end_col = akg_lsp_result_number(entry, "report.error.end_column");
    akg_range r = akg_lsp_doc_line_range(doc, (unsigned)line - 1);
    if (!isnan(col) && col >= 1 && col - 1 <= r.end_col)
        r.start_col = (unsigned)col - 1;
    if (!isnan(end_line) && !isnan(end_col) && end_line >= line && end_line <= doc->n_lines &&
        end_col >= 1) {
        r.end_row = (unsigned)end_line - 1;
        r.end_col = (unsigned)end_col - 1;
    }
    /* Indentation is not the error: start at the first non-blank. */
    size_t len;
    const char *text = akg_lsp_doc_line(doc, r.start_row, &len);
    while (r.start_col < len && (text[r.start_col] == ' ' || text[r.start_col] == '\t'))
        r.start_col++;
    *out = r;
    return 1;
}

/* Diagnostics from one stored result. */
static void result_diagnostics(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc,
                               const cJSON *entry)
{
    const akg_reference *ref = doc->ref;
    char target[80], msg[1024];
    akg_lsp_result_target(entry, target, sizeof target);
    const char *status = akg_lsp_result_status(entry);
    if (cJSON_IsTrue(akg_lsp_param(entry, "stale"))) {
        snprintf(msg, sizeof msg,
                 "%s: the last result (%s) is for an earlier version of this file; run it again",
                 target, status);
        add_diag(list, s, doc, ref->model_name_range, SEV_INFO, "stale-result", msg);
        return;
    }
    if (strcmp(status, "pass") == 0 &&
        cJSON_IsTrue(akg_lsp_param(entry, "report.perf.slower_than_reference"))) {
        /* verified, but not a kernel to put in place of forward: never shown as done */
        double sp = akg_lsp_result_number(entry, "report.perf.speedup");
        snprintf(msg, sizeof msg,
                 "%s: the kernel is verified but slower than the reference (%.2fx, %.2fx its "
                 "time); it is not a drop-in speedup",
                 target, sp, sp > 0 ? 1.0 / sp : 0);
        add_diag(list, s, doc, ref->has_forward ? ref->forward_name_range : ref->model_name_range,
                 SEV_WARNING, "slower-than-reference", msg);
        return;
    }
    if (strcmp(status, "fail") != 0 && strcmp(status, "error") != 0)
        return;
    const char *cls = akg_lsp_result_string(entry, "report.error.class");
    const char *detail = akg_lsp_result_string(entry, "report.error.detail");
    if (!cls)
        cls = "error";
    if (!detail)
        detail = "";

    akg_range at;
    int has_at = error_range(doc, entry, &at);
    if (strstr(cls, "unsupported") || strstr(detail, "unsupported") ||
        strstr(detail, "not supported")) {
        int placed = 0;
        if (has_at) {
            snprintf(msg, sizeof msg, "%s: %s", target, detail);
            add_diag(list, s, doc, at, SEV_WARNING, "unsupported-op", msg);
            return;
        }
        for (size_t i = 0; i < ref->n_calls; i++) {
            const akg_ref_call *c = &ref->calls[i];
            if (contains_word(detail, c->op) || contains_word(detail, c->callee)) {
                snprintf(msg, sizeof msg, "%s: %s is not supported: %s", target, c->callee, detail);
                add_diag(list, s, doc, c->range, SEV_WARNING, "unsupported-op", msg);
                placed = 1;
            }
        }
        if (!placed) {
            snprintf(msg, sizeof msg, "%s: %s", target, detail);
            add_diag(list, s, doc, ref->model_name_range, SEV_WARNING, "unsupported-op", msg);
        }
        return;
    }
    if (is_probe_failure(entry)) {
        snprintf(msg, sizeof msg, "%s: probing the reference failed (%s): %s", target, cls, detail);
        akg_range r = ref->has_get_inputs ? ref->get_inputs_range : ref->model_name_range;
        r.end_row = r.start_row; /* the def line, not the whole body */
        r.end_col = (unsigned)strlen("def get_inputs") + r.start_col;
        add_diag(list, s, doc, has_at ? at : r, SEV_ERROR, "probe-failed", msg);
        return;
    }
    if (strcmp(cls, "numerical_mismatch") == 0 || strcmp(cls, "shape_mismatch") == 0) {
        double abs_err = akg_lsp_result_number(entry, "report.correctness.max_abs_err");
        double rel_err = akg_lsp_result_number(entry, "report.correctness.max_rel_err");
        double trial = akg_lsp_result_number(entry, "report.correctness.worst_trial");
        if (isnan(trial))
            trial = akg_lsp_result_number(entry, "report.correctness.trial");
        int n =
            snprintf(msg, sizeof msg, "%s: the kernel does not match forward (%s)", target, cls);
        if (!isnan(abs_err) && n > 0 && (size_t)n < sizeof msg)
            n += snprintf(msg + n, sizeof msg - (size_t)n, "; worst abs err %.3g", abs_err);
        if (!isnan(rel_err) && n > 0 && (size_t)n < sizeof msg)
            n += snprintf(msg + n, sizeof msg - (size_t)n, ", rel err %.3g", rel_err);
        if (!isnan(trial) && n > 0 && (size_t)n < sizeof msg)
            n += snprintf(msg + n, sizeof msg - (size_t)n, " at trial %.0f", trial);
        if (*detail && n > 0 && (size_t)n < sizeof msg)
            snprintf(msg + n, sizeof msg - (size_t)n, ": %s", detail);
        add_diag(list, s, doc, ref->has_forward ? ref->forward_name_range : ref->model_name_range,
                 SEV_ERROR, cls, msg);
        return;
    }
    snprintf(msg, sizeof msg, "%s %s (%s)%s%s", target,
             strcmp(status, "fail") == 0 ? "failed" : "could not run", cls, *detail ? ": " : "",
             detail);
    add_diag(list, s, doc, ref->model_name_range, SEV_WARNING, cls, msg);
}

static void reference_diagnostics(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc)
{
    if (!akg_lsp_is_reference(s, doc))
        return;
    const akg_reference *ref = doc->ref;
    if (ref->syntax_errors)
        add_diag(list, s, doc, ref->first_error, SEV_ERROR, "syntax",
                 ref->syntax_errors == 1 ? "syntax error" : "syntax error (and more below)");
    char err[512];
    if (akg_reference_check_form(ref, err, sizeof err) != AKG_OK)
        add_diag(list, s, doc, ref->model_name_range, SEV_ERROR, "kernelbench-form", err);
    if (!doc->path)
        return;
    cJSON *results = akg_lsp_results_for(s, doc->path, doc->hash);
    const cJSON *entry;
    cJSON_ArrayForEach(entry, results) result_diagnostics(list, s, doc, entry);
    cJSON_Delete(results);
}

/* "path:line:col: error: message" lines of a build log that name doc. */
static void build_log_diagnostics(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc,
                                  const char *log)
{
    const char *base = strrchr(doc->path, '/');
    base = base ? base + 1 : doc->path;
    size_t blen = strlen(base);
    for (const char *line = log; line && *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        const char *hit = NULL;
        for (const char *p = line; p + blen < line + len; p++)
            if (strncmp(p, base, blen) == 0 && p[blen] == ':') {
                hit = p + blen + 1;
                break;
            }
        unsigned row = 0, col = 0;
        int consumed = 0;
        if (hit && sscanf(hit, "%u:%u:%n", &row, &col, &consumed) == 2 && consumed > 0 && row > 0) {
            const char *text = hit + consumed;
            while (*text == ' ')
                text++;
            int sev = strncmp(text, "warning", 7) == 0 ? SEV_WARNING : SEV_ERROR;
            char msg[512];
            size_t mlen = len - (size_t)(text - line);
            snprintf(msg, sizeof msg, "%.*s", (int)(mlen < 500 ? mlen : 500), text);
            akg_range r = akg_lsp_doc_line_range(doc, row - 1);
            if (col > 0 && col - 1 < r.end_col)
                r.start_col = col - 1;
            add_diag(list, s, doc, r, sev, "build", msg);
        }
        line = eol ? eol + 1 : NULL;
    }
}

static void kernel_diagnostics(cJSON *list, akg_lsp_server *s, akg_lsp_document *doc)
{
    if (!doc->path || !s->results)
        return;
    const cJSON *all = akg_lsp_results_all(s);
    const cJSON *e;
    cJSON_ArrayForEach(e, all)
    {
        const char *kernel = akg_lsp_result_string(e, "report.paths.kernel");
        const char *cls = akg_lsp_result_string(e, "report.error.class");
        const char *detail = akg_lsp_result_string(e, "report.error.detail");
        if (kernel && cls && detail && strcmp(kernel, doc->path) == 0 &&
            strcmp(cls, "build_error") == 0)
            build_log_diagnostics(list, s, doc, detail);
    }
}

cJSON *akg_lsp_diagnostics_compute(akg_lsp_server *s, akg_lsp_document *doc)
{
    cJSON *list = cJSON_CreateArray();
    akg_lsp_refindex_ensure(s, doc);
    if (doc->kind == AKG_LSP_DOC_SKETCH) {
        akg_lsp_sketch_diagnostics(doc, s->encoding, list);
        akg_lsp_sketch_run_diagnostics(s, doc, list);
    } else if (doc->kind == AKG_LSP_DOC_PYTHON && akg_lsp_is_reference(s, doc)) {
        reference_diagnostics(list, s, doc);
    } else {
        kernel_diagnostics(list, s, doc);
    }
    if (doc->kind == AKG_LSP_DOC_PYTHON)
        akg_lsp_selection_diagnostics(s, doc, list);
    return list;
}

void akg_lsp_diagnostics_publish(akg_lsp_server *s, akg_lsp_document *doc)
{
    if (s->state != AKG_LSP_RUNNING)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", doc->uri);
    cJSON_AddNumberToObject(p, "version", doc->version);
    cJSON_AddItemToObject(p, "diagnostics", akg_lsp_diagnostics_compute(s, doc));
    akg_lsp_notify(s, "textDocument/publishDiagnostics", p);
}

void akg_lsp_diagnostics_clear(akg_lsp_server *s, const char *uri)
{
    if (s->state != AKG_LSP_RUNNING)
        return;
    cJSON *p = cJSON_CreateObject();
    cJSON_AddStringToObject(p, "uri", uri);
    cJSON_AddArrayToObject(p, "diagnostics");
    akg_lsp_notify(s, "textDocument/publishDiagnostics", p);
}
