/*
 * designer_graph_ew_header.c: the header of an elementwise pass's sketch
 * (designer_graph_ew.c): its symbols, the tensors it reads and writes, and
 * the bind: section. A tensor read at the output's own indices binds the
 * output's dim symbols by its SHAPE; one read sliced or picked (x[:, 1::2],
 * x[:, 0]) gets symbols of its own for those dims; one read through a
 * reshape that merges or splits dims is declared in the reshaped shape and
 * bound from the original, and the reshaped dims' symbols are bound from the
 * original's (a merge is their product, a split its traced sizes but the
 * last). A dim no tensor binds is bound to its traced size.
 */
#include <stdio.h>
#include <string.h>

#include "designer_graph_ew_int.h"

/* The tensor read by slot i: the leaf itself, or the leaf a regrouping reshape reads. */
const akg_graph_value *akg_ew_slot_tensor(const ew *e, int i)
{
    const akg_graph_value *v = &e->g->values[e->leaves[i]];
    return akg_graph_is_leaf(v) ? v : &e->g->values[v->args[0].value];
}

/* The SHAPE of a tensor declared in its reshaped shape (slot i): per dim of the original, the
 * symbol of the reshaped dim it is (1:1), a fresh symbol En (dims merged into one, or one dim
 * split), or 1; then bindings of the reshaped dims no earlier item bound: a merge is the
 * product of its En, a split's dims their traced sizes but the last, which is En divided by
 * the others. */
static void bind_regrouped(ew *e, akg_buf *b, int i, int *bound, int *n_extra)
{
    const akg_graph_value *v = &e->g->values[e->leaves[i]], *src = akg_ew_slot_tensor(e, i);
    const akg_graph_dimmap *m = &e->leaf_map[i];
    char entry[AKG_GRAPH_MAX_RANK][16], after[1024] = "";
    size_t off = 0;
    int fa[AKG_GRAPH_MAX_RANK], fb[AKG_GRAPH_MAX_RANK], ta[AKG_GRAPH_MAX_RANK],
        tb[AKG_GRAPH_MAX_RANK];
    for (int k = 0; k < src->rank; k++)
        snprintf(entry[k], sizeof entry[k], "1");
    int n = akg_graph_reshape_groups(src, v, fa, fb, ta, tb);
    for (int k = 0; k < n; k++) {
        int first_s = -1, first_v = -1;
        for (int d = fa[k]; d < fb[k] && first_s < 0; d++)
            if (src->shape[d] != 1)
                first_s = d;
        for (int d = ta[k]; d < tb[k] && first_v < 0; d++)
            if (v->shape[d] != 1)
                first_v = d;
        if (akg_ew_count_big(src, fa[k], fb[k]) == 1 && akg_ew_count_big(v, ta[k], tb[k]) == 1) {
            snprintf(entry[first_s], sizeof entry[0], "D%d", m->q[first_v]);
            bound[m->q[first_v]] = 1;
            continue;
        }
        if (akg_ew_count_big(v, ta[k], tb[k]) == 1) { /* dims merged into one */
            int q = m->q[first_v];
            if (!bound[q] && off < sizeof after)
                off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = 1", q);
            for (int d = fa[k]; d < fb[k]; d++) {
                if (src->shape[d] == 1)
                    continue;
                snprintf(entry[d], sizeof entry[0], "E%d", *n_extra);
                if (!bound[q] && off < sizeof after)
                    off += (size_t)snprintf(after + off, sizeof after - off, " * E%d", *n_extra);
                (*n_extra)++;
            }
            bound[q] = 1;
            continue;
        }
        /* one dim split into several */
        int e_sym = (*n_extra)++, last = -1;
        snprintf(entry[first_s], sizeof entry[0], "E%d", e_sym);
        for (int d = ta[k]; d < tb[k]; d++)
            if (v->shape[d] != 1 && !bound[m->q[d]])
                last = d;
        for (int d = ta[k]; d < tb[k] && last >= 0; d++) {
            if (v->shape[d] == 1 || bound[m->q[d]] || d == last || off >= sizeof after)
                continue;
            off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = %ld", m->q[d],
                                    v->shape[d]);
            bound[m->q[d]] = 1;
        }
        if (last >= 0 && off < sizeof after) {
            off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = E%d // (1",
                                    m->q[last], e_sym);
            for (int d = ta[k]; d < tb[k] && off < sizeof after; d++)
                if (v->shape[d] != 1 && d != last)
                    off += (size_t)snprintf(after + off, sizeof after - off, " * D%d", m->q[d]);
            if (off < sizeof after)
                off += (size_t)snprintf(after + off, sizeof after - off, ")");
            bound[m->q[last]] = 1;
        }
    }
    for (int k = 0; k < src->rank; k++)
        akg_buf_appendf(b, "%s%s", k ? ", " : "", entry[k]);
    akg_buf_appendf(b, "])%s\n", after);
}

/* The bindings: each tensor (the symbols of the dims it runs along bound by its SHAPE), the
 * dims no tensor binds, the row or element count, the outputs. */
static void write_binds(ew *e, akg_buf *b, int *n_extra)
{
    const akg_graph *g = e->g;
    int rank = e->rank;
    int bound[AKG_GRAPH_MAX_RANK] = {0};
    for (int i = 0; i < e->n_leaves; i++) {
        const akg_graph_value *l = akg_ew_slot_tensor(e, i);
        akg_buf_appendf(b, "  bind: x%d = %s(\"%s\", [", i,
                        l->kind == AKG_GRAPH_INPUT ? "input" : "weight", l->name);
        const akg_graph_dimmap *m = &e->leaf_map[i];
        if (!akg_graph_is_leaf(&g->values[e->leaves[i]])) {
            for (int k = 0; k < m->rank; k++) /* declared in the reshaped shape */
                snprintf(e->decl[i][k], sizeof e->decl[i][k], m->q[k] < 0 ? "1" : "D%d", m->q[k]);
            bind_regrouped(e, b, i, bound, n_extra);
            continue;
        }
        for (int k = 0; k < m->rank; k++) {
            /* a dim read at its own index is the output's; a sliced or picked one its own */
            if (akg_graph_dimmap_plain(m, k) && l->shape[k] == e->o->shape[m->q[k]]) {
                snprintf(e->decl[i][k], sizeof e->decl[i][k], "D%d", m->q[k]);
                bound[m->q[k]] = 1;
            } else if (m->q[k] < 0 && m->off[k] == 0 && l->shape[k] == 1) {
                snprintf(e->decl[i][k], sizeof e->decl[i][k], "1");
            } else {
                snprintf(e->decl[i][k], sizeof e->decl[i][k], "E%d", (*n_extra)++);
            }
            akg_buf_appendf(b, "%s%s", k ? ", " : "", e->decl[i][k]);
        }
        akg_buf_puts(b, "])\n");
    }
    akg_buf_puts(b, "  bind: ");
    for (int k = 0; k < rank; k++)
        if (!bound[k]) /* a dim of size 1 that no operand runs along */
            akg_buf_appendf(b, "D%d = %ld, ", k, e->o->shape[k]);
    akg_buf_appendf(b, "%s = 1", e->flat ? "N" : e->tiled ? "O" : "R");
    for (int k = 0; k < (e->flat ? rank : e->tiled ? rank - 2 : rank - 1); k++)
        akg_buf_appendf(b, " * D%d", k);
    for (int j = 0; j < g->n_outputs; j++) {
        akg_buf_appendf(b, ", out%d = output(%d, [", j, j);
        for (int k = 0; k < rank; k++)
            akg_buf_appendf(b, "%sD%d", k ? ", " : "", k);
        akg_buf_puts(b, "])");
    }
    akg_buf_puts(b, "\n");
}

/* The header: symbols, tensors, constexprs and bindings. */
void akg_ew_write_header(ew *e, akg_buf *b, int numeric_retry)
{
    const akg_graph *g = e->g;
    int rank = e->rank, n_extra = 0;
    akg_buf binds;
    akg_buf_init(&binds, 1 << 16);
    write_binds(e, &binds, &n_extra);
    if (e->tiled)
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over [BW, BC] tiles of the output's "
                        "last two dims;\n# an operand read transposed is loaded along its own "
                        "last dim and transposed in\n# registers, so both its reads and the "
                        "output's writes are contiguous\n",
                        e->name);
    else if (e->flat)
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over the flattened operands (N "
                        "elements),\n# BLOCK elements per task, tasks split across the cores\n",
                        e->name);
    else
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over the rows of the output's last "
                        "dimension;\n# each operand is read at the index the output's index "
                        "maps to through its views\n# (permuted dims, broadcast dims pinned to "
                        "0)\n",
                        e->name);
    akg_buf_appendf(b, "sketch %s {\n  symbols: %s", e->name, e->flat ? "N" : e->tiled ? "O" : "R");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(b, ", D%d", i);
    for (int i = 0; i < n_extra; i++)
        akg_buf_appendf(b, ", E%d", i);
    akg_buf_puts(b, ";\n  tensors: ");
    for (int i = 0; i < e->n_leaves; i++) {
        akg_buf_appendf(b, "x%d", i);
        if (e->flat) {
            akg_buf_puts(b, "[N]");
        } else {
            for (int k = 0; k < e->leaf_map[i].rank; k++)
                akg_buf_appendf(b, "%s%s", k ? ", " : "[", e->decl[i][k]);
            akg_buf_puts(b, "]");
        }
        akg_buf_appendf(b, ": %s; ", akg_ew_slot_tensor(e, i)->dtype);
    }
    for (int j = 0; j < g->n_outputs; j++) {
        const char *dt = g->values[g->outputs[j]].dtype;
        if (e->flat)
            akg_buf_appendf(b, "%sout%d[N]: %s", j ? "; " : "", j, dt);
        else if (e->tiled) {
            akg_buf_appendf(b, "%sout%d[", j ? "; " : "", j);
            for (int k = 0; k < rank; k++)
                akg_buf_appendf(b, "%sD%d", k ? ", " : "", k);
            akg_buf_appendf(b, "]: %s", dt);
        } else
            akg_buf_appendf(b, "%sout%d[R, D%d]: %s", j ? "; " : "", j, rank - 1, dt);
    }
    akg_buf_puts(b, ";\n");
    if (e->flat)
        akg_buf_appendf(b, "  constexpr: BLOCK = tune(%d, 4096, 65536);\n",
                        numeric_retry ? 4096 * 4 : 16384);
    else if (e->tiled)
        akg_buf_puts(b, "  constexpr: BW = tune(32, 16, 64), BC = tune(32, 16, 64);\n");
    else
        akg_buf_puts(b, "  constexpr: BLOCK = tune(1024, 256, 4096), RB = tune(16, 4, 64);\n");
    akg_buf_puts(b, binds.data ? binds.data : "");
    akg_buf_free(&binds);
    akg_buf_puts(b, "\n  @llm_hint(\"parallel\", \"coreidx\")\n");
    if (numeric_retry)
        akg_buf_puts(b, "  @llm_hint(\"math\", \"precise\")\n");
}
