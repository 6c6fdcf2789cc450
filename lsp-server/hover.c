/* hover.c: see hover.h. */
#include "hover.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference_index.h"
#include "results.h"
#include "sketch_support.h"
#include "uri.h"

static void cell_number(akg_buf *b, double v, const char *fmt)
{
    if (isnan(v))
        akg_buf_puts(b, " – |");
    else {
        akg_buf_puts(b, " ");
        akg_buf_appendf(b, fmt, v);
        akg_buf_puts(b, " |");
    }
}

void akg_lsp_results_markdown(akg_buf *b, const cJSON *results)
{
    akg_buf_puts(
        b, "| target | status | speedup | ref ms | kernel ms | atol / rtol | trials | when |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    const cJSON *e;
    cJSON_ArrayForEach(e, results)
    {
        char target[80];
        akg_lsp_result_target(e, target, sizeof target);
        const char *status = akg_lsp_result_status(e);
        int slower = cJSON_IsTrue(akg_lsp_param(e, "report.perf.slower_than_reference"));
        akg_buf_appendf(b, "| %s | %s%s%s |", target, status,
                        slower ? " (slower than the reference)" : "",
                        cJSON_IsTrue(akg_lsp_param(e, "stale")) ? " (stale)" : "");
        double speedup = akg_lsp_result_number(e, "report.perf.speedup");
        if (isnan(speedup))
            speedup = akg_lsp_result_number(e, "speedup");
        cell_number(b, speedup, "%.2fx");
        cell_number(b, akg_lsp_result_number(e, "report.perf.ref_ms"), "%.4g");
        cell_number(b, akg_lsp_result_number(e, "report.perf.kernel_ms"), "%.4g");
        double atol = akg_lsp_result_number(e, "report.correctness.atol");
        double rtol = akg_lsp_result_number(e, "report.correctness.rtol");
        if (isnan(atol) && isnan(rtol))
            akg_buf_puts(b, " – |");
        else
            akg_buf_appendf(b, " %.3g / %.3g |", atol, rtol);
        cell_number(b, akg_lsp_result_number(e, "report.correctness.trials"), "%.0f");
        const char *when = akg_lsp_result_string(e, "finished_at");
        akg_buf_appendf(b, " %s |\n", when ? when : "–");
    }
    cJSON_ArrayForEach(e, results)
    {
        char target[80], path[PATH_MAX];
        akg_lsp_result_target(e, target, sizeof target);
        const char *cls = akg_lsp_result_string(e, "report.error.class");
        const char *detail = akg_lsp_result_string(e, "report.error.detail");
        if (cls || detail)
            akg_buf_appendf(b, "\n%s: **%s** %.400s\n", target, cls ? cls : "error",
                            detail ? detail : "");
        if (cJSON_IsTrue(akg_lsp_param(e, "report.perf.slower_than_reference"))) {
            double sp = akg_lsp_result_number(e, "report.perf.speedup");
            double kept = akg_lsp_result_number(e, "report.kept_step");
            akg_buf_appendf(b,
                            "\n%s: **slower than the reference** (%.2fx): the kernel is verified "
                            "but not a drop-in speedup",
                            target, sp);
            if (!isnan(kept))
                akg_buf_appendf(b, "; the fastest of the designs tried (attempt %.0f)", kept);
            akg_buf_puts(b, "\n");
        }
        if (akg_lsp_result_report_path(e, path, sizeof path)) {
            char *uri = akg_lsp_path_to_uri(path);
            akg_buf_appendf(b, "\n%s report: [%s](%s)\n", target, path, uri ? uri : "");
            free(uri);
        }
    }
}

static cJSON *markdown_hover(akg_buf *b, cJSON *range)
{
    cJSON *h = cJSON_CreateObject();
    cJSON *c = cJSON_AddObjectToObject(h, "contents");
    cJSON_AddStringToObject(c, "kind", "markdown");
    cJSON_AddStringToObject(c, "value", akg_buf_status(b) ? "*(this hover did not fit in memory)*"
                                        : b->data      ? b->data
                                                       : "");
    if (range)
        cJSON_AddItemToObject(h, "range", range);
    akg_buf_free(b);
    return h;
}

static cJSON *reference_hover(akg_lsp_server *s, akg_lsp_document *doc, size_t offset)
{
    const akg_reference *ref = doc->ref;
    const akg_ref_call *call = akg_lsp_ref_call_at(doc, offset);
    akg_range model_line = ref->model_range;
    model_line.end_row = model_line.start_row;
    model_line.end_col = akg_lsp_doc_line_range(doc, model_line.start_row).end_col;
    int on_model = akg_lsp_range_holds(doc, ref->model_name_range, offset) ||
                   akg_lsp_range_holds(doc, model_line, offset);
    if (!call && !on_model)
        return NULL;

    akg_buf b;
    akg_buf_init(&b, (size_t)1 << 20);
    akg_range r;
    if (call) {
        akg_buf_appendf(&b, "**`%s`**", call->callee);
        if (call->op && *call->op)
            akg_buf_appendf(&b, " — op `%s`", call->op);
        else
            akg_buf_puts(&b, " — not an op akg recognises");
        akg_buf_puts(&b, "\n\n");
        r = call->range;
    } else {
        akg_buf_puts(&b, "**akg: class Model**\n\n");
        r = ref->model_name_range;
    }
    cJSON *results = doc->path ? akg_lsp_results_for(s, doc->path, doc->hash) : cJSON_CreateArray();
    if (cJSON_GetArraySize(results) == 0)
        akg_buf_puts(&b, "No result yet. Run *akg: Generate kernel* from the code actions.\n");
    else
        akg_lsp_results_markdown(&b, results);
    cJSON_Delete(results);
    return markdown_hover(&b, akg_lsp_doc_range_json(doc, s->encoding, r));
}

static cJSON *sketch_hover(akg_lsp_server *s, akg_lsp_document *doc, size_t offset)
{
    char word[64];
    size_t a, z;
    if (!akg_lsp_word_at(doc->text.data, doc->text.len, offset, word, sizeof word, &a, &z))
        return NULL;
    /* Operations are calls: a tile or tensor that shares a name with one
     * (a tile called `exp`) gets no hover. */
    size_t after = z;
    while (after < doc->text.len && doc->text.data[after] == ' ')
        after++;
    if (after >= doc->text.len || doc->text.data[after] != '(')
        return NULL;
    char *md = akg_lsp_sketch_op_doc(word);
    if (!md)
        return NULL;
    akg_buf b;
    akg_buf_init(&b, (size_t)1 << 20);
    akg_buf_puts(&b, md);
    free(md);
    cJSON *range = cJSON_CreateObject();
    cJSON_AddItemToObject(range, "start", akg_lsp_doc_position_json(doc, s->encoding, a));
    cJSON_AddItemToObject(range, "end", akg_lsp_doc_position_json(doc, s->encoding, z));
    return markdown_hover(&b, range);
}

int akg_lsp_handle_hover(akg_lsp_server *s, const cJSON *params, cJSON **result, char *err,
                         size_t errlen)
{
    int code;
    akg_lsp_document *doc = akg_lsp_param_document(s, params, &code, err, errlen);
    if (!doc)
        return code;
    size_t offset;
    if (!akg_lsp_param_offset(s, doc, params, &offset))
        return akg_fail(err, errlen, AKG_EINVAL,
                        "hover: position must be {line, character} numbers"),
               AKG_RPC_INVALID_PARAMS;
    if (doc->kind == AKG_LSP_DOC_SKETCH)
        *result = sketch_hover(s, doc, offset);
    else if (akg_lsp_is_reference(s, doc))
        *result = reference_hover(s, doc, offset);
    return 0;
}
