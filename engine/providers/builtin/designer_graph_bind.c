/*
 * designer_graph_bind.c: the tensors of the graph Designer's reduction sketches
 * and how they are bound to the task (see designer_graph_reduce_int.h).
 *
 * A sketch tensor is an input, weight or buffer of the graph, or a reshape of
 * one that merges adjacent dims (`x.reshape(B, -1)`, `flatten`). The task's
 * tensors are contiguous, so a reshape is the same row-major elements: the
 * sketch declares the reshaped dims (S's symbols A<q>), and the binding reads
 * the input with its own dims, a merged run as fresh symbols X<id>_<k> whose
 * product binds the A<q> it forms (a dim of one input dim is that A<q>
 * itself). Outputs are declared with S's rank; their SHAPE in the binding is
 * forward's result, each of its dims a product of S's symbols, so a result
 * reshaped by merging dims costs nothing.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph_reduce_int.h"

int rg_is_tensor(const rctx *c, const akg_graph_value *v)
{
    if (c->view[v->id] == 1)
        return 1;
    if (!akg_graph_is_leaf(v) || v->kind == AKG_GRAPH_CONSTANT || !v->uses)
        return 0;
    for (int k = 0; k < v->n_consumers; k++)
        if (c->view[v->consumers[k]] != 1)
            return 1;
    return 0;
}

const akg_graph_value *rg_source(const rctx *c, const akg_graph_value *v)
{
    if (c->view[v->id] == 1)
        return &c->g->values[v->args[0].value];
    return v;
}

int rg_merge_groups(const long *from, int nf, const long *to, int nt, int *start)
{
    int i = 0;
    for (int k = 0; k < nt; k++) {
        start[k] = i;
        long prod = 1;
        while (i < nf && prod < to[k] && from[i] <= to[k] / prod) {
            prod *= from[i];
            i++;
        }
        if (prod != to[k])
            return -1;
        /* size-1 dims after a complete group join it, but for the last group's */
        while (i < nf && from[i] == 1 && k + 1 < nt && to[k + 1] != 1)
            i++;
    }
    while (i < nf && from[i] == 1)
        i++;
    start[nt] = i;
    return i == nf ? 0 : -1;
}

/* ---------- names ---------- */

static int reserved(const char *n)
{
    static const char *const words[] = {
        "P",     "p",      "lo",   "hi",    "O",     "CH",   "NC",   "NR",   "D",
        "I",     "BLK",    "o",    "c",     "q",     "for",  "in",   "if",   "else",
        "range", "and",    "or",   "not",   "min",   "max",  "ceil", "load", "store",
        "alloc", "sketch", "bind", "True",  "False", "None", "pass", "elif", "fill",
        "cast",  "exp",    "log",  "where", NULL};
    if (rg_in_list(words, n))
        return 1;
    if (!strncmp(n, "result", 6) && (!n[6] || (n[6] >= '0' && n[6] <= '9')))
        return 1;
    if (!strncmp(n, "part_", 5))
        return 1;
    static const char stems[] = "vkAmdsuXrt";
    if (n[0] && strchr(stems, n[0]) && n[1] >= '0' && n[1] <= '9')
        return 1;
    return !strncmp(n, "acc", 3) && n[3] >= '0' && n[3] <= '9';
}

void rg_name_tensors(rctx *c)
{
    const akg_graph *g = c->g;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        snprintf(c->names[i], sizeof c->names[i], "v%d", i);
        if (!rg_is_tensor(c, v))
            continue;
        char base[RG_NAME_LEN];
        snprintf(base, sizeof base, "%.40s", rg_source(c, v)->name);
        for (char *q = base; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                  (*q >= '0' && *q <= '9') || *q == '_'))
                *q = '_';
        if (base[0] >= '0' && base[0] <= '9')
            base[0] = '_';
        snprintf(c->tensor[i], RG_NAME_LEN, "%s", base);
        for (int tries = 1; tries < 100; tries++) {
            int clash = reserved(c->tensor[i]);
            for (int j = 0; j < i && !clash; j++)
                clash = rg_is_tensor(c, &g->values[j]) && !strcmp(c->tensor[j], c->tensor[i]);
            if (!clash)
                break;
            snprintf(c->tensor[i], RG_NAME_LEN, "%.40s_%d", base, tries);
        }
    }
}

void rg_result_name(const rctx *c, int k, char *buf, size_t len)
{
    if (c->n_out == 1)
        snprintf(buf, len, "result");
    else
        snprintf(buf, len, "result%d", k);
}

/* ---------- declarations and bindings ---------- */

void rg_tensor_dims(akg_buf *b, const rctx *c, const long *shape, int r, int keep_red)
{
    akg_buf_puts(b, "[");
    for (int k = 0; k < r; k++) {
        int q = k + c->n - r;
        int one = shape[k] == 1 && c->S[q] != 1;
        if (keep_red && c->red[q])
            one = 1;
        akg_buf_appendf(b, "%s", k ? ", " : "");
        if (one)
            akg_buf_puts(b, "1");
        else
            akg_buf_appendf(b, "A%d", q);
    }
    akg_buf_puts(b, "]");
}

/* For view v (a reshape of a leaf): how many of the source dims in group k are not 1. */
static int wide_dims(const akg_graph_value *src, const int *start, int k)
{
    int wide = 0;
    for (int j = start[k]; j < start[k + 1]; j++)
        wide += src->shape[j] != 1;
    return wide;
}

void rg_view_symbols(akg_buf *b, const rctx *c)
{
    const akg_graph *g = c->g;
    for (int i = 0; i < g->n_values; i++) {
        if (c->view[i] != 1)
            continue;
        const akg_graph_value *v = &g->values[i], *src = rg_source(c, v);
        int start[AKG_GRAPH_MAX_RANK + 1];
        if (rg_merge_groups(src->shape, src->rank, v->shape, v->rank, start))
            continue;
        for (int k = 0; k < v->rank; k++)
            if (wide_dims(src, start, k) > 1)
                for (int j = start[k]; j < start[k + 1]; j++)
                    if (src->shape[j] != 1)
                        akg_buf_appendf(b, ", X%d_%d", i, j);
    }
}

void rg_bind_tensors(akg_buf *b, const rctx *c)
{
    const akg_graph *g = c->g;
    int bound[AKG_GRAPH_MAX_RANK] = {0};
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!rg_is_tensor(c, v))
            continue;
        const akg_graph_value *src = rg_source(c, v);
        akg_buf_appendf(b, "  bind: %s = %s(\"%s\", ", c->tensor[i],
                        src->kind == AKG_GRAPH_INPUT ? "input" : "weight", src->name);
        if (c->view[i] != 1) {
            rg_tensor_dims(b, c, v->shape, v->rank, 0);
            akg_buf_puts(b, ")");
            for (int k = 0; k < v->rank; k++) {
                int q = k + c->n - v->rank;
                bound[q] |= !(v->shape[k] == 1 && c->S[q] != 1);
            }
            akg_buf_puts(b, "\n");
            continue;
        }
        /* a reshape: the input's own dims, the merged runs as fresh symbols */
        int start[AKG_GRAPH_MAX_RANK + 1];
        rg_merge_groups(src->shape, src->rank, v->shape, v->rank, start);
        akg_buf_puts(b, "[");
        int first = 1;
        for (int k = 0; k < v->rank; k++) {
            int q = k + c->n - v->rank;
            int one = v->shape[k] == 1 && c->S[q] != 1;
            int wide = wide_dims(src, start, k);
            for (int j = start[k]; j < start[k + 1]; j++) {
                akg_buf_puts(b, first ? "" : ", ");
                first = 0;
                if (src->shape[j] == 1 || one)
                    akg_buf_puts(b, "1");
                else if (wide == 1)
                    akg_buf_appendf(b, "A%d", q);
                else
                    akg_buf_appendf(b, "X%d_%d", i, j);
            }
            if (wide == 1 && !one)
                bound[q] = 1;
        }
        akg_buf_puts(b, "])");
        for (int k = 0; k < v->rank; k++) {
            int q = k + c->n - v->rank;
            if (wide_dims(src, start, k) < 2 || bound[q])
                continue;
            akg_buf_appendf(b, ", A%d = ", q);
            int f = 1;
            for (int j = start[k]; j < start[k + 1]; j++)
                if (src->shape[j] != 1) {
                    akg_buf_appendf(b, "%sX%d_%d", f ? "" : " * ", i, j);
                    f = 0;
                }
            bound[q] = 1;
        }
        akg_buf_puts(b, "\n");
    }
}

void rg_output_shape(akg_buf *b, const rctx *c, int k)
{
    const akg_graph_value *o = &c->g->values[c->out[k]];
    const akg_graph_value *ov = &c->g->values[c->out_val[k]];
    /* the dims of the stored value, as sizes and S's symbols */
    long size[AKG_GRAPH_MAX_RANK] = {0};
    int sym[AKG_GRAPH_MAX_RANK] = {0}; /* q, or -1 for 1 */
    int r = o->rank;
    for (int i = 0; i < r; i++) {
        int q = c->rk[o->id] ? -1 : i + c->n - r;
        if (q < 0) { /* the kept dims, in order */
            int seen = -1;
            for (q = 0; q < c->n; q++)
                if (!c->red[q] && ++seen == i)
                    break;
        }
        size[i] = o->shape[i];
        sym[i] = o->shape[i] == 1 && (q >= c->n || c->red[q] || c->S[q] != 1) ? -1 : q;
    }
    int start[AKG_GRAPH_MAX_RANK + 1];
    if (ov == o || rg_merge_groups(size, r, ov->shape, ov->rank, start)) {
        for (int i = 0; i <= r; i++)
            start[i] = i;
    }
    int nt = ov == o ? r : ov->rank;
    akg_buf_puts(b, "[");
    for (int t = 0; t < nt; t++) {
        akg_buf_puts(b, t ? ", " : "");
        int f = 1;
        for (int i = start[t]; i < start[t + 1]; i++)
            if (sym[i] >= 0) {
                akg_buf_appendf(b, "%sA%d", f ? "" : " * ", sym[i]);
                f = 0;
            }
        if (f)
            akg_buf_puts(b, "1");
    }
    akg_buf_puts(b, "]");
}
