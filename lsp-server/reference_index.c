/* reference_index.c: see reference_index.h. */
#include "reference_index.h"

#include <string.h>

#include "diagnostics.h"
#include "log.h"

void akg_lsp_refindex_ensure(akg_lsp_server *s, akg_lsp_document *doc)
{
    (void)s;
    if (!doc->dirty)
        return;
    doc->dirty = 0;
    akg_sha256_hex(doc->text.data, doc->text.len, doc->hash);
    if (doc->kind != AKG_LSP_DOC_PYTHON)
        return;
    double t0 = akg_now_ms();
    akg_reference *ref = akg_reference_parse(doc->text.data, doc->text.len, doc->path);
    if (!ref) {
        akg_lsp_log_error("%s: out of memory parsing", doc->uri);
        return;
    }
    akg_reference_free(doc->ref);
    doc->ref = ref;
    akg_lsp_log_debug("parsed %s in %.2f ms (%zu calls in forward)", doc->uri, akg_now_ms() - t0,
                      ref->n_calls);
}

static void on_debounce(uv_timer_t *t)
{
    akg_lsp_server *s = t->data;
    for (akg_lsp_document *d = s->docs.head; d; d = d->next) {
        if (!d->dirty)
            continue;
        akg_lsp_refindex_ensure(s, d);
        akg_lsp_diagnostics_publish(s, d);
    }
}

void akg_lsp_refindex_changed(akg_lsp_server *s, akg_lsp_document *doc)
{
    doc->dirty = 1;
    if (s->state == AKG_LSP_EXITING)
        return;
    uv_timer_start(&s->debounce, on_debounce, AKG_LSP_DEBOUNCE_MS, 0);
}

int akg_lsp_is_reference(akg_lsp_server *s, akg_lsp_document *doc)
{
    if (doc->kind != AKG_LSP_DOC_PYTHON)
        return 0;
    akg_lsp_refindex_ensure(s, doc);
    return doc->ref && doc->ref->has_model;
}

int akg_lsp_range_holds(const akg_lsp_document *doc, akg_range r, size_t offset)
{
    size_t a = akg_lsp_doc_point_offset(doc, r.start_row, r.start_col);
    size_t b = akg_lsp_doc_point_offset(doc, r.end_row, r.end_col);
    return offset >= a && offset <= b && b > a;
}

const akg_ref_call *akg_lsp_ref_call_at(const akg_lsp_document *doc, size_t offset)
{
    if (!doc->ref)
        return NULL;
    const akg_ref_call *best = NULL;
    size_t best_len = (size_t)-1;
    /* Nested calls: the innermost (shortest) one under the cursor wins. */
    for (size_t i = 0; i < doc->ref->n_calls; i++) {
        const akg_ref_call *c = &doc->ref->calls[i];
        if (!akg_lsp_range_holds(doc, c->range, offset))
            continue;
        size_t len = akg_lsp_doc_point_offset(doc, c->range.end_row, c->range.end_col) -
                     akg_lsp_doc_point_offset(doc, c->range.start_row, c->range.start_col);
        if (len < best_len) {
            best = c;
            best_len = len;
        }
    }
    return best;
}
