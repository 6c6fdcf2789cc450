/*
 * designer_graph_tiles.c: the graph Designer's general design of a reduction
 * group (see designer_graph_reduce.c for what a group is).
 *
 * Every index of the dims of S that are not reduced is one task; its task holds
 * the whole reduced extent in tiles of S's rank (a kept dim is 1 there), so
 * each op of the graph is one tile op with the graph's own broadcasting, each
 * reduction a reduce over R with keepdim, and statistics that depend on others
 * simply come later. When S's last dim is kept it is not split per task: CH
 * columns of it are taken together, vectorised along them (the reduced dims
 * are then strided, as in the strided branch of the suite's reductions).
 * Reduced dims that are not one contiguous run are read as a strided view: the
 * tile is S's region with the kept dims pinned, the reduce runs over R's axes.
 * Sums, means and variances accumulate in f64; each output is stored from the
 * same task.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph_reduce_int.h"
#include "graph_ops.h"

/* The region a task reads (alloc 0) or its tile's extents (alloc 1), for a tensor of rank
 * r aligned right against S; *per_task: whether it depends on the task. */
static void task_region(akg_buf *b, const rctx *c, const long *shape, int r, int keep_red,
                        int alloc, int *per_task)
{
    akg_buf_puts(b, "[");
    for (int k = 0; k < r; k++) {
        int q = k + c->n - r;
        int one = (shape[k] == 1 && c->S[q] != 1) || (keep_red && c->red[q]);
        akg_buf_appendf(b, "%s", k ? ", " : "");
        if (one)
            akg_buf_puts(b, alloc ? "1" : "0:1");
        else if (c->red[q])
            akg_buf_appendf(b, alloc ? "A%d" : ":", q);
        else if (q == c->col) {
            akg_buf_puts(b, alloc ? "CH" : "c:c+CH");
            *per_task = 1;
        } else {
            if (alloc)
                akg_buf_puts(b, "1");
            else
                akg_buf_appendf(b, "k%d:k%d+1", q, q);
            *per_task = 1;
        }
    }
    akg_buf_puts(b, "]");
}

/* "axis=[..]" over the reduced dims (the tile's rank is S's). */
static void axes(akg_buf *b, const rctx *c)
{
    int nred = 0;
    for (int q = 0; q < c->n; q++)
        nred += c->red[q];
    akg_buf_puts(b, nred == 1 ? "axis=" : "axis=[");
    int first = 1;
    for (int q = 0; q < c->n; q++)
        if (c->red[q]) {
            akg_buf_appendf(b, "%s%d", first ? "" : ", ", q);
            first = 0;
        }
    if (nred != 1)
        akg_buf_puts(b, "]");
}

static int emit_op(rctx *c, akg_buf *b, const char *ind, const akg_graph_value *v)
{
    const char *t = c->names[v->id];
    const char *a = v->args[0].kind == AKG_GRAPH_ARG_VALUE ? c->names[v->args[0].value] : "?";
    const char *op = v->op;
    const char *dt = c->dt;
    if (akg_graph_op_elementwise(v)) {
        char expr[256];
        const char *why = NULL;
        if (akg_graph_op_render(c->g, v, c->names, expr, sizeof expr, &why))
            return rg_decline(c, v, "%s", why);
        akg_buf_appendf(b, "%s%s = %s\n", ind, t, expr);
        return AKG_OK;
    }
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "prod")) {
        akg_buf_appendf(b, "%s%s = cast(reduce_%s(cast(%s, f64), ", ind, t, op, a);
        axes(b, c);
        akg_buf_appendf(b, "), %s)\n", dt);
    } else if (!strcmp(op, "amax") || !strcmp(op, "amin")) {
        akg_buf_appendf(b, "%s%s = reduce_%s(%s, ", ind, t, !strcmp(op, "amax") ? "max" : "min", a);
        axes(b, c);
        akg_buf_puts(b, ")\n");
    } else if (rg_is_index(v)) {
        akg_buf_appendf(b, "%s%s = %s(%s, ", ind, t, op, a);
        axes(b, c);
        akg_buf_puts(b, ")\n");
    } else if (!strcmp(op, "logsumexp")) {
        akg_buf_appendf(b, "%sm%d = reduce_max(%s, ", ind, v->id, a);
        axes(b, c);
        akg_buf_puts(b, ")\n");
        akg_buf_appendf(b, "%ss%d = reduce_sum(cast(exp(sub(%s, m%d)), f64), ", ind, v->id, a,
                        v->id);
        axes(b, c);
        akg_buf_appendf(b, ")\n%s%s = add(m%d, log(cast(s%d, %s)))\n", ind, t, v->id, v->id, dt);
    } else if (!strcmp(op, "var") || !strcmp(op, "std") || !strcmp(op, "layer_norm")) {
        int ln = !strcmp(op, "layer_norm");
        double corr = ln ? 0 : 1; /* layer_norm: the biased variance */
        if (!ln)
            akg_graph_attr_number(v, "correction", &corr);
        akg_buf_appendf(b, "%su%d = cast(%s, f64)\n%sm%d = reduce_mean(u%d, ", ind, v->id, a, ind,
                        v->id, v->id);
        axes(b, c);
        akg_buf_appendf(b, ")\n%sd%d = sub(u%d, m%d)\n%ss%d = reduce_%s(mul(d%d, d%d), ", ind,
                        v->id, v->id, v->id, ind, v->id, corr != 0 ? "sum" : "mean", v->id, v->id);
        axes(b, c);
        akg_buf_puts(b, ")\n");
        if (corr != 0)
            akg_buf_appendf(b, "%ss%d = div(s%d, NC)\n", ind, v->id, v->id);
        if (!strcmp(op, "var"))
            akg_buf_appendf(b, "%s%s = cast(s%d, %s)\n", ind, t, v->id, dt);
        else if (!strcmp(op, "std"))
            akg_buf_appendf(b, "%s%s = cast(sqrt(s%d), %s)\n", ind, t, v->id, dt);
        else {
            double eps = 1e-5;
            akg_graph_attr_number(v, "eps", &eps);
            char e[48];
            akg_graph_number_text(eps, e, sizeof e);
            akg_buf_appendf(b, "%s%s = cast(mul(d%d, rsqrt(add(s%d, %s))), %s)\n", ind, t, v->id,
                            v->id, e, dt);
            for (int k = 1; k < 3 && k < v->n_args; k++)
                if (v->args[k].kind == AKG_GRAPH_ARG_VALUE)
                    akg_buf_appendf(b, "%s%s = %s(%s, %s)\n", ind, t, k == 1 ? "mul" : "add", t,
                                    c->names[v->args[k].value]);
        }
    } else if (!strcmp(op, "softmax") || !strcmp(op, "log_softmax") || !strcmp(op, "cumsum") ||
               !strcmp(op, "cumprod")) {
        akg_buf_appendf(b, "%s%s = %s(%s, ", ind, t, op, a);
        axes(b, c);
        akg_buf_puts(b, ")\n");
    } else {
        return rg_decline(c, v, "no rule for this operation in a reduction's group");
    }
    return AKG_OK;
}

static void header(rctx *c, akg_buf *b, const char *name)
{
    int n = c->n;
    char dims[64];
    rg_dims_text(c->red, n, dims, sizeof dims);
    int contiguous = 1, seen = 0, ended = 0;
    for (int q = 0; q < n; q++) {
        if (c->red[q] && ended)
            contiguous = 0;
        if (!c->red[q] && seen)
            ended = 1;
        seen |= c->red[q];
    }
    akg_buf_appendf(b,
                    "# %s: reductions over dims [%s] of the shape [A0..A%d], one task per index "
                    "of the kept dims\n# holding the whole reduced extent in tiles of that "
                    "rank (kept dims 1 there)",
                    name, dims, n - 1);
    if (c->col >= 0)
        akg_buf_appendf(b, ", CH columns of\n# the kept last dim together, vectorised along "
                           "them (the reduced dims are strided)");
    if (!contiguous)
        akg_buf_appendf(b, ";\n# the reduced dims are not one run: each tile is a strided "
                           "view with the kept dims pinned");
    akg_buf_puts(b, "\nsketch ");
    akg_buf_appendf(b, "%s {\n  symbols: O", name);
    if (c->need_nc)
        akg_buf_puts(b, ", NC");
    for (int q = 0; q < n; q++)
        akg_buf_appendf(b, ", A%d", q);
    rg_view_symbols(b, c);
    akg_buf_puts(b, ";\n  tensors: ");
    for (int i = 0; i < c->g->n_values; i++) {
        const akg_graph_value *v = &c->g->values[i];
        if (!rg_is_tensor(c, v))
            continue;
        akg_buf_appendf(b, "%s", c->tensor[i]);
        rg_tensor_dims(b, c, v->shape, v->rank, 0);
        akg_buf_appendf(b, ": %s; ", c->dt);
    }
    for (int k = 0; k < c->n_out; k++) {
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        akg_buf_puts(b, rn);
        rg_tensor_dims(b, c, c->S, n, c->red_out[k]);
        akg_buf_appendf(b, ": %s%s", rg_is_index(&c->g->values[c->out[k]]) ? "i64" : c->dt,
                        k + 1 < c->n_out ? "; " : ";\n");
    }
    if (c->col >= 0)
        akg_buf_puts(b, "  constexpr: CH = tune(64, 16, 256);\n");
    rg_bind_tensors(b, c);
    akg_buf_puts(b, "  bind: O = 1");
    for (int q = 0; q < n; q++)
        if (!c->red[q] && q != c->col)
            akg_buf_appendf(b, " * A%d", q);
    if (c->need_nc) {
        akg_buf_puts(b, ", NC = 1");
        for (int q = 0; q < n; q++)
            if (c->red[q])
                akg_buf_appendf(b, " * A%d", q);
        akg_buf_appendf(b, " - %ld", c->correction);
    }
    for (int k = 0; k < c->n_out; k++) {
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        akg_buf_appendf(b, ", %s = output(%d, ", rn, k);
        rg_output_shape(b, c, k);
        akg_buf_puts(b, ")");
    }
    akg_buf_puts(b, "\n\n");
}

int rg_write_tiles(rctx *c, int precise, akg_buf *b, const char *name)
{
    const akg_graph *g = c->g;
    int n = c->n;
    header(c, b, name);
    /* tensors that do not depend on the task are loaded once */
    for (int pass = 0; pass < 2; pass++) {
        const char *ind = pass == 0 ? "  " : c->col >= 0 ? "      " : "    ";
        if (pass == 1) {
            akg_buf_puts(b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
            if (precise)
                akg_buf_puts(b, "  @llm_hint(\"math\", \"precise\")\n");
            akg_buf_puts(b, "  for o in range(0, O):\n");
            int later = 0;
            for (int q = n - 1; q >= 0; q--) {
                if (c->red[q] || q == c->col)
                    continue;
                akg_buf_appendf(b, "    k%d = o", q);
                if (later)
                    akg_buf_puts(b, " // (1");
                for (int p = q + 1; p < n && later; p++)
                    if (!c->red[p] && p != c->col)
                        akg_buf_appendf(b, " * A%d", p);
                akg_buf_appendf(b, "%s %% A%d\n", later ? ")" : "", q);
                later = 1;
            }
            if (c->col >= 0)
                akg_buf_appendf(b,
                                "    @llm_hint(\"parallel\", \"coreidx\")\n"
                                "    for c in range(0, A%d, CH):\n",
                                c->col);
        }
        for (int i = 0; i < g->n_values; i++) {
            const akg_graph_value *v = &g->values[i];
            if (!rg_is_tensor(c, v))
                continue;
            akg_buf tmp;
            akg_buf_init(&tmp, 512);
            int per_task = 0;
            task_region(&tmp, c, v->shape, v->rank, 0, 0, &per_task);
            if (per_task == pass) {
                akg_buf_appendf(b, "%s%s = alloc(", ind, c->names[i]);
                task_region(b, c, v->shape, v->rank, 0, 1, &per_task);
                akg_buf_appendf(b, ")\n%sload(%s%s -> %s)\n", ind, c->tensor[i],
                                tmp.data ? tmp.data : "", c->names[i]);
            }
            akg_buf_free(&tmp);
        }
    }
    const char *ind = c->col >= 0 ? "      " : "    ";
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (akg_graph_is_leaf(v) || c->view[i])
            continue;
        int rc = emit_op(c, b, ind, v);
        if (rc)
            return rc;
    }
    for (int k = 0; k < c->n_out; k++) {
        const akg_graph_value *o = &g->values[c->out[k]];
        char rn[16];
        rg_result_name(c, k, rn, sizeof rn);
        int per_task = 0;
        akg_buf_appendf(b, "%sstore(%s%s%s -> %s", ind, rg_is_index(o) ? "cast(" : "",
                        c->names[o->id], rg_is_index(o) ? ", i64)" : "", rn);
        task_region(b, c, c->S, n, c->red_out[k], 0, &per_task);
        akg_buf_puts(b, ")\n");
    }
    akg_buf_puts(b, "}\n");
    return AKG_OK;
}
