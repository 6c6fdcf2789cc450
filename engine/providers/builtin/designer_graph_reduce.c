/*
 * designer_graph_reduce.c: reductions, norms and softmax designed from the
 * probe's op graph, whatever their spelling (a LayerNorm written by hand,
 * `x.abs().max()`, `torch.logsumexp`, `var`, a reduction over dims that are not
 * adjacent, a `torch.where` before a mean, softmax written as exp(x - max) /
 * sum).
 *
 * The group: an elementwise prologue on the inputs and weights (any of
 * graph_ops' ops, broadcasting), reductions (`sum mean amax amin prod var std
 * logsumexp argmax argmin`) and row-wise composites (`softmax log_softmax
 * layer_norm cumsum cumprod`) that all reduce one set R of dims of one shape S,
 * and an elementwise epilogue that may read the reduced values broadcast back
 * against the prologue's (a reduction kept with keepdim, or one without it that
 * meets only other reduced values). A reduction may read values computed from
 * earlier ones (the variance of x - mean).
 *
 * The design: every index of the dims of S that are not reduced is one task;
 * its task holds the whole reduced extent in tiles of S's rank (a kept dim is 1
 * there), so each op of the graph is one tile op with the graph's own
 * broadcasting, each reduction a reduce over R with keepdim, and statistics
 * that depend on others simply come later. When S's last dim is kept it is not
 * split per task: CH columns of it are taken together, vectorised along them
 * (the reduced dims are then strided, as in the strided branch of the suite's
 * reductions). Reduced dims that are not one contiguous run are read as a
 * strided view: the tile is S's region with the kept dims pinned, the reduce
 * runs over R's axes. Sums, means and variances accumulate in f64.
 *
 * Declined with a message naming the op and its line: ops that are neither
 * elementwise nor these (views, matrix products, gathers), reductions over
 * another shape or another set of dims, a reduction without keepdim meeting the
 * values it reduced (torch aligns it to the right, which is rarely meant),
 * constants made inside forward, tensors that are not f32, argmax/argmin over
 * several dims or feeding further ops, several outputs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph.h"
#include "designer_graph_reduce.h"
#include "graph_ops.h"
#include "rule_util.h"

#define NAME_LEN 48

typedef struct {
    const akg_reference *ref;
    const akg_graph *g;
    akg_range *where;
    char *err;
    size_t errlen;
    int n;                       /* rank of S, the shape reduced */
    long S[AKG_GRAPH_MAX_RANK];  /* S */
    int red[AKG_GRAPH_MAX_RANK]; /* 1: dim reduced */
    int col;                     /* S's last dim when kept (CH columns a task), else -1 */
    int *rk;                     /* per value: 1 when its rank lost the reduced dims */
    char (*names)[24];           /* per value: its tile in the sketch */
    char (*tensor)[NAME_LEN];    /* per leaf: its tensor in the sketch */
    long correction;             /* of var/std with correction != 0 (one value) */
    int need_nc;
} rctx;

static const char *const reduction_ops[] = {"sum", "mean",   "amax",   "amin",      "prod", "var",
                                            "std", "argmax", "argmin", "logsumexp", NULL};
static const char *const composite_ops[] = {"softmax", "log_softmax", "layer_norm",
                                            "cumsum",  "cumprod",     NULL};

static int in_list(const char *const *list, const char *op)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], op))
            return 1;
    return 0;
}

static int is_reduction(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && in_list(reduction_ops, v->op);
}

static int is_index(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && (!strcmp(v->op, "argmax") || !strcmp(v->op, "argmin"));
}

/* The graph Designer's decline (designer_graph.c), for this rule's ops. */
static int decline(rctx *c, const akg_graph_value *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int decline(rctx *c, const akg_graph_value *v, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return akg_graph_decline(c->ref, v, 0, c->where, c->err, c->errlen, why);
}

/* The set of dims op v reduces (or runs along), into red; 0, or -1 when it cannot be read. */
static int reduced_dims(const akg_graph_value *v, int n, int *red)
{
    memset(red, 0, sizeof(int) * AKG_GRAPH_MAX_RANK);
    long d[AKG_GRAPH_MAX_RANK];
    int k;
    if (!strcmp(v->op, "layer_norm")) {
        k = akg_graph_attr_ints(v, "normalized_shape", d, AKG_GRAPH_MAX_RANK);
        if (k < 1 || k > n)
            return -1;
        for (int i = n - k; i < n; i++)
            red[i] = 1;
        return 0;
    }
    if (in_list(composite_ops, v->op)) {
        double x;
        if (akg_graph_attr_number(v, "dim", &x) != AKG_OK)
            return -1;
        int q = (int)x < 0 ? (int)x + n : (int)x;
        if (q < 0 || q >= n)
            return -1;
        red[q] = 1;
        return 0;
    }
    k = akg_graph_attr_ints(v, "dims", d, AKG_GRAPH_MAX_RANK);
    if (k <= 0) { /* none given: all */
        for (int i = 0; i < n; i++)
            red[i] = 1;
        return 0;
    }
    for (int i = 0; i < k; i++) {
        long q = d[i] < 0 ? d[i] + n : d[i];
        if (q < 0 || q >= n)
            return -1;
        red[q] = 1;
    }
    return 0;
}

static int keepdim(const akg_graph_value *v)
{
    double x = 0;
    if (in_list(composite_ops, v->op))
        return 1;
    return akg_graph_attr_number(v, "keepdim", &x) == AKG_OK && x != 0;
}

/* Whether shape of value v (right-aligned) broadcasts to S without growing it. */
static int fits_s(const rctx *c, const akg_graph_value *v)
{
    if (v->rank > c->n)
        return 0;
    for (int k = 0; k < v->rank; k++) {
        int q = k + c->n - v->rank;
        if (v->shape[k] != c->S[q] && v->shape[k] != 1)
            return 0;
    }
    return 1;
}

static void shape_text(const akg_graph_value *v, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < v->rank && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? ", " : "", v->shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, "]");
}

static void dims_text(const int *red, int n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int q = 0; q < n && off < len; q++)
        if (red[q])
            off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? ", " : "", q);
}

/* ---------- reading the group ---------- */

static int read_group(rctx *c)
{
    const akg_graph *g = c->g;
    int first = -1;
    for (int i = 0; i < g->n_values && first < 0; i++)
        if (akg_graph_op_reduces(&g->values[i]))
            first = i;
    const akg_graph_value *r0 = &g->values[first];
    if (r0->n_args < 1 || r0->args[0].kind != AKG_GRAPH_ARG_VALUE)
        return decline(c, r0, "a reduction without a tensor operand");
    const akg_graph_value *x0 = &g->values[r0->args[0].value];
    c->n = x0->rank;
    if (c->n < 1)
        return decline(c, r0, "a reduction of a 0-d tensor");
    memcpy(c->S, x0->shape, sizeof(long) * (size_t)c->n);
    if (reduced_dims(r0, c->n, c->red))
        return decline(c, r0, "its dims cannot be read");
    c->col = c->red[c->n - 1] ? -1 : c->n - 1;
    c->correction = -1;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (akg_graph_is_leaf(v))
            continue;
        for (int k = 0; k < v->n_args; k++) {
            if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            const akg_graph_value *a = &g->values[v->args[k].value];
            if (is_index(a))
                return decline(c, v,
                               "it reads the index result of %s (line %d): an index "
                               "is only designed as the output",
                               a->op, a->line);
            if (a->kind == AKG_GRAPH_CONSTANT)
                return decline(c, v,
                               "it reads a tensor made inside forward (constants are "
                               "not designed yet)");
            if (akg_graph_is_leaf(a) && strcmp(a->dtype, "f32"))
                return decline(c, v, "it reads %s %s, which is not f32 (f32 only for now)",
                               akg_graph_kind_name(a->kind), a->name);
            if (akg_graph_is_leaf(a) && !fits_s(c, a)) {
                char s1[96], s2[96];
                shape_text(a, s1, sizeof s1);
                shape_text(x0, s2, sizeof s2);
                return decline(c, v,
                               "it reads %s of shape %s, which does not broadcast to "
                               "the reduced shape %s",
                               a->name, s1, s2);
            }
        }
        if (akg_graph_op_reduces(v)) {
            const akg_graph_value *x = &g->values[v->args[0].value];
            int red[AKG_GRAPH_MAX_RANK];
            char s1[96], s2[96];
            if (x->rank != c->n || memcmp(x->shape, c->S, sizeof(long) * (size_t)c->n) ||
                c->rk[x->id]) {
                shape_text(x, s1, sizeof s1);
                shape_text(x0, s2, sizeof s2);
                return decline(c, v,
                               "it reduces a value of shape %s, another than the first "
                               "reduction's %s (line %d): one reduced shape per kernel",
                               s1, s2, r0->line);
            }
            if (reduced_dims(v, c->n, red))
                return decline(c, v, "its dims cannot be read");
            if (memcmp(red, c->red, sizeof red)) {
                dims_text(red, c->n, s1, sizeof s1);
                dims_text(c->red, c->n, s2, sizeof s2);
                return decline(c, v,
                               "it runs over dims [%s], the first reduction (line %d) "
                               "over [%s]: one set of dims per kernel",
                               s1, r0->line, s2);
            }
            int nred = 0;
            for (int q = 0; q < c->n; q++)
                nred += red[q];
            if (is_index(v) && nred != 1)
                return decline(c, v,
                               "an index over %d dims (a flattened index is not "
                               "designed yet)",
                               nred);
            if ((!strcmp(v->op, "var") || !strcmp(v->op, "std"))) {
                double corr = 1;
                akg_graph_attr_number(v, "correction", &corr);
                if (corr != 0 && c->correction >= 0 && (long)corr != c->correction)
                    return decline(c, v, "two different variance corrections in one kernel");
                if (corr != 0) {
                    c->correction = (long)corr;
                    c->need_nc = 1;
                }
            }
            if (!strcmp(v->op, "layer_norm"))
                for (int k = 1; k < v->n_args && k < 3; k++)
                    if (v->args[k].kind == AKG_GRAPH_ARG_VALUE && c->rk[v->args[k].value])
                        return decline(c, v, "a layer_norm weight computed by a reduction");
            c->rk[i] = is_reduction(v) && !keepdim(v);
            continue;
        }
        if (!akg_graph_op_elementwise(v)) {
            if (!strcmp(v->op, "matmul"))
                return decline(c, v,
                               "a matrix product with a reduction is not fused (one "
                               "kernel per graph for now)");
            if (!strcmp(v->op, "permute") || !strcmp(v->op, "reshape") ||
                !strcmp(v->op, "expand") || !strcmp(v->op, "slice") || !strcmp(v->op, "select"))
                return decline(c, v, "a view (%s) in a reduction's group is not designed yet",
                               v->op);
            return decline(c, v, "no rule for this operation in a reduction's group");
        }
        int n_rk = 0, n_full = 0;
        for (int k = 0; k < v->n_args; k++) {
            if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            if (c->rk[v->args[k].value])
                n_rk++;
            else
                n_full++;
        }
        if (n_rk && n_full)
            return decline(c, v,
                           "it combines a reduction taken without keepdim with values "
                           "of the reduced shape (torch aligns the reduced result to "
                           "the right); keepdim=True is designed");
        c->rk[i] = n_rk > 0;
        if (!c->rk[i] && !fits_s(c, v)) {
            char s1[96], s2[96];
            shape_text(v, s1, sizeof s1);
            shape_text(x0, s2, sizeof s2);
            return decline(c, v,
                           "its result has shape %s, which does not broadcast to the "
                           "reduced shape %s",
                           s1, s2);
        }
    }
    /* every dim's size must come from a tensor the kernel reads */
    for (int q = 0; q < c->n; q++) {
        int held = 0;
        for (int i = 0; i < g->n_values && !held; i++) {
            const akg_graph_value *v = &g->values[i];
            if (!akg_graph_is_leaf(v) || !v->uses)
                continue;
            int k = q - (c->n - v->rank);
            held = k >= 0 && v->shape[k] == c->S[q];
        }
        if (!held)
            return decline(c, x0, "no input or weight holds dim %d of the reduced shape", q);
    }
    return AKG_OK;
}

/* ---------- writing the sketch ---------- */

static int reserved(const char *n)
{
    static const char *const words[] = {
        "O",      "CH",   "NC",   "o",     "c",    "result", "for",  "in",   "if",    "else",
        "range",  "and",  "or",   "not",   "min",  "max",    "ceil", "load", "store", "alloc",
        "sketch", "bind", "True", "False", "None", "pass",   "elif", NULL};
    if (in_list(words, n))
        return 1;
    static const char stems[] = "vkAmdsu";
    return n[0] && strchr(stems, n[0]) && n[1] >= '0' && n[1] <= '9';
}

static void name_tensors(rctx *c)
{
    const akg_graph *g = c->g;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        snprintf(c->names[i], sizeof c->names[i], "v%d", i);
        if (!akg_graph_is_leaf(v))
            continue;
        char base[NAME_LEN];
        snprintf(base, sizeof base, "%.40s", v->name[0] ? v->name : "t");
        for (char *q = base; *q; q++)
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
                  (*q >= '0' && *q <= '9') || *q == '_'))
                *q = '_';
        if (base[0] >= '0' && base[0] <= '9')
            base[0] = '_';
        snprintf(c->tensor[i], NAME_LEN, "%s", base);
        for (int tries = 1; tries < 100; tries++) {
            int clash = reserved(c->tensor[i]);
            for (int j = 0; j < i && !clash; j++)
                clash = akg_graph_is_leaf(&g->values[j]) && !strcmp(c->tensor[j], c->tensor[i]);
            if (!clash)
                break;
            snprintf(c->tensor[i], NAME_LEN, "%.40s_%d", base, tries);
        }
    }
}

/* The extent of leaf (or output) dim k of a tensor of rank r in the sketch: "1" where it
 * broadcasts, else S's symbol. */
static void tensor_dims(akg_buf *b, const rctx *c, const long *shape, int r, int keep_red)
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
    if (akg_graph_op_elementwise(v)) {
        char expr[256];
        const char *why = NULL;
        if (akg_graph_op_render(c->g, v, c->names, expr, sizeof expr, &why))
            return decline(c, v, "%s", why);
        akg_buf_appendf(b, "%s%s = %s\n", ind, t, expr);
        return AKG_OK;
    }
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "prod")) {
        akg_buf_appendf(b, "%s%s = cast(reduce_%s(cast(%s, f64), ", ind, t, op, a);
        axes(b, c);
        akg_buf_puts(b, "), f32)\n");
    } else if (!strcmp(op, "amax") || !strcmp(op, "amin")) {
        akg_buf_appendf(b, "%s%s = reduce_%s(%s, ", ind, t, !strcmp(op, "amax") ? "max" : "min", a);
        axes(b, c);
        akg_buf_puts(b, ")\n");
    } else if (is_index(v)) {
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
        akg_buf_appendf(b, ")\n%s%s = add(m%d, log(cast(s%d, f32)))\n", ind, t, v->id, v->id);
    } else if (!strcmp(op, "var") || !strcmp(op, "std") || !strcmp(op, "layer_norm")) {
        double corr = 1;
        int ln = !strcmp(op, "layer_norm");
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
            akg_buf_appendf(b, "%s%s = cast(s%d, f32)\n", ind, t, v->id);
        else if (!strcmp(op, "std"))
            akg_buf_appendf(b, "%s%s = cast(sqrt(s%d), f32)\n", ind, t, v->id);
        else {
            double eps = 1e-5;
            akg_graph_attr_number(v, "eps", &eps);
            char e[48];
            akg_graph_number_text(eps, e, sizeof e);
            akg_buf_appendf(b, "%s%s = cast(mul(d%d, rsqrt(add(s%d, %s))), f32)\n", ind, t, v->id,
                            v->id, e);
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
        return decline(c, v, "no rule for this operation in a reduction's group");
    }
    return AKG_OK;
}

static void design_name(const rctx *c, char *name, size_t len)
{
    name[0] = 0;
    int count = 0;
    for (int i = 0; i < c->g->n_values && count < 6; i++) {
        const akg_graph_value *v = &c->g->values[i];
        if (akg_graph_is_leaf(v))
            continue;
        if (akg_graph_op_elementwise(v))
            akg_graph_op_word(v, 0, name, len);
        else if (strlen(name) + strlen(v->op) + 2 < len)
            snprintf(name + strlen(name), len - strlen(name), "%s%s", name[0] ? "_" : "", v->op);
        count++;
    }
    if (!name[0])
        snprintf(name, len, "reduce");
}

static int write_sketch(rctx *c, const akg_graph_value *o, int red_out, int precise, akg_buf *b,
                        const char *name)
{
    const akg_graph *g = c->g;
    int n = c->n;
    char dims[64];
    dims_text(c->red, n, dims, sizeof dims);
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
    akg_buf_puts(b, ";\n  tensors: ");
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!akg_graph_is_leaf(v) || !v->uses)
            continue;
        akg_buf_appendf(b, "%s", c->tensor[i]);
        tensor_dims(b, c, v->shape, v->rank, 0);
        akg_buf_puts(b, ": f32; ");
    }
    akg_buf_puts(b, "result");
    tensor_dims(b, c, c->S, n, red_out);
    akg_buf_appendf(b, ": %s;\n", is_index(o) ? "i64" : "f32");
    if (c->col >= 0)
        akg_buf_puts(b, "  constexpr: CH = tune(64, 16, 256);\n");
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!akg_graph_is_leaf(v) || !v->uses)
            continue;
        akg_buf_appendf(b, "  bind: %s = %s(\"%s\", ", c->tensor[i],
                        v->kind == AKG_GRAPH_INPUT ? "input" : "weight", v->name);
        tensor_dims(b, c, v->shape, v->rank, 0);
        akg_buf_puts(b, ")\n");
    }
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
    akg_buf_puts(b, ", result = output(0, [");
    for (int k = 0; k < o->rank; k++) {
        int q = red_out && c->rk[o->id] ? -1 : k + n - o->rank;
        if (q < 0) { /* the kept dims, in order */
            int seen_k = -1;
            for (q = 0; q < n; q++)
                if (!c->red[q] && ++seen_k == k)
                    break;
        }
        if (o->shape[k] == 1 && (q >= n || c->red[q] || c->S[q] != 1))
            akg_buf_appendf(b, "%s1", k ? ", " : "");
        else
            akg_buf_appendf(b, "%sA%d", k ? ", " : "", q);
    }
    akg_buf_puts(b, "])\n\n");
    /* leaves that do not depend on the task are loaded once */
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
            if (!akg_graph_is_leaf(v) || !v->uses)
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
        if (akg_graph_is_leaf(v))
            continue;
        int rc = emit_op(c, b, ind, v);
        if (rc)
            return rc;
    }
    int per_task = 0;
    akg_buf_appendf(b, "%sstore(%s%s%s -> result", ind, is_index(o) ? "cast(" : "", c->names[o->id],
                    is_index(o) ? ", i64)" : "");
    task_region(b, c, c->S, n, red_out, 0, &per_task);
    akg_buf_puts(b, ")\n}\n");
    return AKG_OK;
}

int akg_designer_graph_reduce(const akg_reference *ref, const akg_graph *g, const cJSON *feedback,
                              akg_design **out, akg_range *where, char *err, size_t errlen)
{
    *out = NULL;
    rctx c;
    memset(&c, 0, sizeof c);
    c.ref = ref;
    c.g = g;
    c.where = where;
    c.err = err;
    c.errlen = errlen;
    c.rk = calloc((size_t)g->n_values + 1, sizeof *c.rk);
    c.names = calloc((size_t)g->n_values + 1, sizeof *c.names);
    c.tensor = calloc((size_t)g->n_values + 1, sizeof *c.tensor);
    akg_buf b;
    akg_buf_init(&b, 1 << 17);
    int rc = !c.rk || !c.names || !c.tensor ? AKG_ENOMEM : read_group(&c);
    const akg_graph_value *o = g->n_outputs == 1 ? &g->values[g->outputs[0]] : NULL;
    int red_out = 0;
    if (!rc && !o)
        rc = decline(&c, &g->values[g->outputs[1]],
                     "forward returns %d tensors (one output per kernel for now)", g->n_outputs);
    if (!rc && akg_graph_is_leaf(o))
        rc = decline(&c, o, "forward returns a %s unchanged", akg_graph_kind_name(o->kind));
    if (!rc && strcmp(o->dtype, is_index(o) ? "i64" : "f32"))
        rc = decline(&c, o, "an output of dtype %s (f32 only for now)", o->dtype);
    if (!rc) {
        /* the output has S's shape, or S's with the reduced dims gone or kept as 1 */
        int full = o->rank == c.n && !memcmp(o->shape, c.S, sizeof(long) * (size_t)c.n);
        int keep = o->rank == c.n && !c.rk[o->id];
        for (int q = 0; q < c.n && keep; q++)
            keep = c.red[q] ? o->shape[q] == 1 : o->shape[q] == c.S[q];
        if (!full && !keep && !c.rk[o->id]) {
            char s1[96];
            shape_text(o, s1, sizeof s1);
            rc = decline(&c, o,
                         "an output of shape %s, neither the reduced shape nor the "
                         "shape of its reductions",
                         s1);
        }
        red_out = !full;
    }
    if (!rc) {
        char name[64];
        design_name(&c, name, sizeof name);
        name_tensors(&c);
        const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
        int precise = fb && !strcmp(fb, "numerical_mismatch");
        rc = write_sketch(&c, o, red_out, precise, &b, name);
        if (!rc && akg_buf_status(&b))
            rc = decline(&c, o, "the sketch exceeds its size limit");
        akg_design *d = NULL;
        if (!rc && !(d = akg_rule_family_design(red_out ? "reduction" : "norm", name)))
            rc = AKG_ENOMEM;
        if (!rc) {
            d->rank = c.n;
            d->math = precise ? AKG_MATH_PRECISE : AKG_MATH_FAST;
            char dims[64];
            dims_text(c.red, c.n, dims, sizeof dims);
            cJSON_AddStringToObject(d->params, "from", "graph");
            cJSON_AddStringToObject(d->params, "kind", "reduce_group");
            cJSON_AddStringToObject(d->params, "dims", dims);
            cJSON_AddNumberToObject(d->params, "columns", c.col >= 0);
            d->sketch_text = akg_buf_take(&b);
            if (!d->sketch_text) {
                akg_design_free(d);
                rc = AKG_ENOMEM;
            } else
                *out = d;
        }
    }
    akg_buf_free(&b);
    free(c.rk);
    free(c.names);
    free(c.tensor);
    return rc;
}
