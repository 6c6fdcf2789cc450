/*
 * designer_graph_reduce.c: reductions, norms and softmax designed from the
 * probe's op graph, whatever their spelling (a LayerNorm written by hand,
 * `x.abs().max()`, `torch.logsumexp`, `var`, a reduction over dims that are not
 * adjacent, a `torch.where` before a mean, softmax written as exp(x - max) /
 * sum, `x.reshape(B, -1).sum(1)`, a global average pool then `flatten`).
 *
 * The group: an elementwise prologue on the inputs and weights (any of
 * graph_ops' ops, broadcasting), reductions (`sum mean amax amin prod var std
 * logsumexp argmax argmin`) and row-wise composites (`softmax log_softmax
 * layer_norm cumsum cumprod`) that all reduce one set R of dims of one shape S,
 * and an elementwise epilogue that may read the reduced values broadcast back
 * against the prologue's (a reduction kept with keepdim, or one without it that
 * meets only other reduced values). A reduction may read values computed from
 * earlier ones (the variance of x - mean). Forward may return several of these
 * values (a tuple): each is an output of the one kernel.
 *
 * Views are absorbed where they cost nothing: a reshape of an input or weight
 * that merges adjacent dims is read as that tensor (the task tensor is
 * contiguous, so the reshape is the same row-major elements: the sketch
 * declares the reshaped dims and binds the input's own, their product being
 * the merged dim); a reshape of a result that merges dims (`flatten` after a
 * keepdim mean) only changes the output's shape.
 *
 * The tensors are f32 or f64, one dtype per kernel; sums, means and variances
 * accumulate in f64 either way.
 *
 * Two designs (designer_graph_reduce_int.h): plain statistics (sum, mean,
 * prod, amax, amin, logsumexp) of a prologue over tensors of S's shape, whose
 * outputs all have the reduced shape, are streamed as the reduction rules'
 * sketches are (designer_graph_rows.c); everything else holds each task's
 * whole reduced extent in one tile (designer_graph_tiles.c).
 *
 * Declined with a message naming the op and its line: ops that are neither
 * elementwise nor these (other views, matrix products, gathers), reductions over
 * another shape or another set of dims, a reduction without keepdim meeting the
 * values it reduced (torch aligns it to the right, which is rarely meant),
 * constants made inside forward, tensors that are neither f32 nor f64 or of two
 * dtypes, argmax/argmin over several dims or feeding further ops.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph.h"
#include "designer_graph_reduce.h"
#include "designer_graph_reduce_int.h"
#include "graph_ops.h"
#include "rule_util.h"

static const char *const reduction_ops[] = {"sum", "mean",   "amax",   "amin",      "prod", "var",
                                            "std", "argmax", "argmin", "logsumexp", NULL};
static const char *const composite_ops[] = {"softmax", "log_softmax", "layer_norm",
                                            "cumsum",  "cumprod",     NULL};

int rg_in_list(const char *const *list, const char *op)
{
    for (int i = 0; list[i]; i++)
        if (!strcmp(list[i], op))
            return 1;
    return 0;
}

int rg_is_reduction(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && rg_in_list(reduction_ops, v->op);
}

int rg_is_composite(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && rg_in_list(composite_ops, v->op);
}

int rg_is_index(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && (!strcmp(v->op, "argmax") || !strcmp(v->op, "argmin"));
}

int rg_decline(rctx *c, const akg_graph_value *v, const char *fmt, ...)
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
    if (rg_is_composite(v)) {
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

int rg_keepdim(const akg_graph_value *v)
{
    double x = 0;
    if (rg_is_composite(v))
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

void rg_shape_text(const akg_graph_value *v, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < v->rank && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? ", " : "", v->shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, "]");
}

void rg_dims_text(const int *red, int n, char *buf, size_t len)
{
    size_t off = 0;
    buf[0] = 0;
    for (int q = 0; q < n && off < len; q++)
        if (red[q])
            off += (size_t)snprintf(buf + off, len - off, "%s%d", off ? ", " : "", q);
}

/* ---------- views ---------- */

static int is_reshape(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && !strcmp(v->op, "reshape") && v->n_args >= 1 &&
           v->args[0].kind == AKG_GRAPH_ARG_VALUE;
}

/* Marks the reshapes the design absorbs: of an input or weight (view 1), of a result that
 * forward returns (view 2, its shape only). */
static int read_views(rctx *c)
{
    const akg_graph *g = c->g;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!is_reshape(v))
            continue;
        const akg_graph_value *a = &g->values[v->args[0].value];
        int start[AKG_GRAPH_MAX_RANK + 1];
        char s1[96], s2[96];
        rg_shape_text(a, s1, sizeof s1);
        rg_shape_text(v, s2, sizeof s2);
        if (a->kind == AKG_GRAPH_CONSTANT)
            return rg_decline(c, v,
                              "a reshape of a tensor made inside forward (constants are not "
                              "designed yet)");
        if (akg_graph_is_leaf(a)) {
            if (v->is_output)
                return rg_decline(c, v, "forward returns a reshape of %s %s unchanged",
                                  akg_graph_kind_name(a->kind), a->name);
            if (rg_merge_groups(a->shape, a->rank, v->shape, v->rank, start))
                return rg_decline(c, v,
                                  "a reshape of %s from %s to %s that splits or reorders its "
                                  "dims (a reshape that merges adjacent dims, as flatten does, "
                                  "is designed)",
                                  a->name, s1, s2);
            c->view[i] = 1;
            continue;
        }
        if (v->is_output && v->n_consumers == 0 && !akg_graph_is_leaf(a)) {
            if (rg_merge_groups(a->shape, a->rank, v->shape, v->rank, start))
                return rg_decline(c, v,
                                  "a reshape of the result from %s to %s that splits or "
                                  "reorders its dims (one that merges adjacent dims, as "
                                  "flatten does, is designed)",
                                  s1, s2);
            c->view[i] = 2;
            continue;
        }
        return rg_decline(c, v,
                          "a reshape of a value computed in a reduction's group is not designed "
                          "yet (a reshape of an input or weight, or of the returned result, is)");
    }
    return AKG_OK;
}

/* ---------- reading the group ---------- */

static int read_group(rctx *c)
{
    const akg_graph *g = c->g;
    int rc = read_views(c);
    if (rc)
        return rc;
    int first = -1;
    for (int i = 0; i < g->n_values && first < 0; i++)
        if (akg_graph_op_reduces(&g->values[i]))
            first = i;
    const akg_graph_value *r0 = &g->values[first];
    if (r0->n_args < 1 || r0->args[0].kind != AKG_GRAPH_ARG_VALUE)
        return rg_decline(c, r0, "a reduction without a tensor operand");
    const akg_graph_value *x0 = &g->values[r0->args[0].value];
    c->n = x0->rank;
    if (c->n < 1)
        return rg_decline(c, r0, "a reduction of a 0-d tensor");
    memcpy(c->S, x0->shape, sizeof(long) * (size_t)c->n);
    if (reduced_dims(r0, c->n, c->red))
        return rg_decline(c, r0, "its dims cannot be read");
    c->col = c->red[c->n - 1] ? -1 : c->n - 1;
    c->correction = -1;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (akg_graph_is_leaf(v) || c->view[i])
            continue;
        for (int k = 0; k < v->n_args; k++) {
            if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            const akg_graph_value *a = &g->values[v->args[k].value];
            if (rg_is_index(a))
                return rg_decline(c, v,
                                  "it reads the index result of %s (line %d): an index "
                                  "is only designed as the output",
                                  a->op, a->line);
            if (a->kind == AKG_GRAPH_CONSTANT)
                return rg_decline(c, v,
                                  "it reads a tensor made inside forward (constants are "
                                  "not designed yet)");
            if (!rg_is_tensor(c, a))
                continue;
            const akg_graph_value *src = rg_source(c, a);
            if (strcmp(src->dtype, "f32") && strcmp(src->dtype, "f64"))
                return rg_decline(c, v,
                                  "it reads %s %s of dtype %s (f32 and f64 tensors are "
                                  "designed)",
                                  akg_graph_kind_name(src->kind), src->name, src->dtype);
            if (!c->dt[0])
                snprintf(c->dt, sizeof c->dt, "%s", src->dtype);
            else if (strcmp(c->dt, src->dtype))
                return rg_decline(c, v,
                                  "it reads %s %s of dtype %s in a kernel over %s tensors (one "
                                  "dtype per kernel: cast them to one dtype first)",
                                  akg_graph_kind_name(src->kind), src->name, src->dtype, c->dt);
            if (!fits_s(c, a)) {
                char s1[96], s2[96];
                rg_shape_text(a, s1, sizeof s1);
                rg_shape_text(x0, s2, sizeof s2);
                return rg_decline(c, v,
                                  "it reads %s of shape %s, which does not broadcast to "
                                  "the reduced shape %s",
                                  src->name, s1, s2);
            }
        }
        if (akg_graph_op_reduces(v)) {
            const akg_graph_value *x = &g->values[v->args[0].value];
            int red[AKG_GRAPH_MAX_RANK];
            char s1[96], s2[96];
            if (x->rank != c->n || memcmp(x->shape, c->S, sizeof(long) * (size_t)c->n) ||
                c->rk[x->id]) {
                rg_shape_text(x, s1, sizeof s1);
                rg_shape_text(x0, s2, sizeof s2);
                return rg_decline(c, v,
                                  "it reduces a value of shape %s, another than the first "
                                  "reduction's %s (line %d): one reduced shape per kernel",
                                  s1, s2, r0->line);
            }
            if (reduced_dims(v, c->n, red))
                return rg_decline(c, v, "its dims cannot be read");
            if (memcmp(red, c->red, sizeof red)) {
                rg_dims_text(red, c->n, s1, sizeof s1);
                rg_dims_text(c->red, c->n, s2, sizeof s2);
                return rg_decline(c, v,
                                  "it runs over dims [%s], the first reduction (line %d) "
                                  "over [%s]: one set of dims per kernel",
                                  s1, r0->line, s2);
            }
            int nred = 0;
            for (int q = 0; q < c->n; q++)
                nred += red[q];
            if (rg_is_index(v) && nred != 1)
                return rg_decline(c, v,
                                  "an index over %d dims (a flattened index is not "
                                  "designed yet)",
                                  nred);
            if ((!strcmp(v->op, "var") || !strcmp(v->op, "std"))) {
                double corr = 1;
                akg_graph_attr_number(v, "correction", &corr);
                if (corr != 0 && c->correction >= 0 && (long)corr != c->correction)
                    return rg_decline(c, v, "two different variance corrections in one kernel");
                if (corr != 0) {
                    c->correction = (long)corr;
                    c->need_nc = 1;
                }
            }
            if (!strcmp(v->op, "layer_norm"))
                for (int k = 1; k < v->n_args && k < 3; k++)
                    if (v->args[k].kind == AKG_GRAPH_ARG_VALUE && c->rk[v->args[k].value])
                        return rg_decline(c, v, "a layer_norm weight computed by a reduction");
            c->rk[i] = rg_is_reduction(v) && !rg_keepdim(v);
            continue;
        }
        if (!akg_graph_op_elementwise(v)) {
            if (!strcmp(v->op, "matmul"))
                return rg_decline(c, v,
                                  "a matrix product with a reduction is not fused (one "
                                  "kernel per graph for now)");
            if (!strcmp(v->op, "permute") || !strcmp(v->op, "expand") || !strcmp(v->op, "slice") ||
                !strcmp(v->op, "select"))
                return rg_decline(c, v, "a view (%s) in a reduction's group is not designed yet",
                                  v->op);
            return rg_decline(c, v, "no rule for this operation in a reduction's group");
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
            return rg_decline(c, v,
                              "it combines a reduction taken without keepdim with values "
                              "of the reduced shape (torch aligns the reduced result to "
                              "the right); keepdim=True is designed");
        c->rk[i] = n_rk > 0;
        if (!c->rk[i] && !fits_s(c, v)) {
            char s1[96], s2[96];
            rg_shape_text(v, s1, sizeof s1);
            rg_shape_text(x0, s2, sizeof s2);
            return rg_decline(c, v,
                              "its result has shape %s, which does not broadcast to the "
                              "reduced shape %s",
                              s1, s2);
        }
    }
    if (!c->dt[0])
        snprintf(c->dt, sizeof c->dt, "f32");
    /* every dim's size must come from a tensor the kernel reads */
    for (int q = 0; q < c->n; q++) {
        int held = 0;
        for (int i = 0; i < g->n_values && !held; i++) {
            const akg_graph_value *v = &g->values[i];
            if (!rg_is_tensor(c, v))
                continue;
            int k = q - (c->n - v->rank);
            held = k >= 0 && v->shape[k] == c->S[q];
        }
        if (!held)
            return rg_decline(c, x0, "no input or weight holds dim %d of the reduced shape", q);
    }
    return AKG_OK;
}

/* Reads forward's results: each has S's shape, or S's with the reduced dims gone or kept
 * as 1 (after a reshape that merges dims, when forward returns one). */
static int read_outputs(rctx *c)
{
    const akg_graph *g = c->g;
    if (g->n_outputs > RG_MAX_OUT)
        return rg_decline(c, &g->values[g->outputs[RG_MAX_OUT]],
                          "forward returns %d tensors (at most %d are designed in one kernel)",
                          g->n_outputs, RG_MAX_OUT);
    c->n_out = g->n_outputs;
    for (int k = 0; k < c->n_out; k++) {
        const akg_graph_value *ov = &g->values[g->outputs[k]];
        const akg_graph_value *o = c->view[ov->id] == 2 ? &g->values[ov->args[0].value] : ov;
        c->out_val[k] = ov->id;
        c->out[k] = o->id;
        if (akg_graph_is_leaf(o) || c->view[o->id])
            return rg_decline(c, ov, "forward returns a %s unchanged",
                              akg_graph_kind_name(rg_source(c, o)->kind));
        const char *want = rg_is_index(o) ? "i64" : c->dt;
        if (strcmp(ov->dtype, want))
            return rg_decline(c, ov, "an output of dtype %s from %s tensors (%s is designed)",
                              ov->dtype, c->dt, want);
        int full = o->rank == c->n && !memcmp(o->shape, c->S, sizeof(long) * (size_t)c->n);
        int keep = o->rank == c->n && !c->rk[o->id];
        for (int q = 0; q < c->n && keep; q++)
            keep = c->red[q] ? o->shape[q] == 1 : o->shape[q] == c->S[q];
        if (!full && !keep && !c->rk[o->id]) {
            char s1[96];
            rg_shape_text(o, s1, sizeof s1);
            return rg_decline(c, o,
                              "an output of shape %s, neither the reduced shape nor the "
                              "shape of its reductions",
                              s1);
        }
        c->red_out[k] = !full;
    }
    return AKG_OK;
}

static void design_name(const rctx *c, char *name, size_t len)
{
    name[0] = 0;
    int count = 0;
    for (int i = 0; i < c->g->n_values && count < 6; i++) {
        const akg_graph_value *v = &c->g->values[i];
        if (akg_graph_is_leaf(v) || c->view[i])
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
    c.view = calloc((size_t)g->n_values + 1, sizeof *c.view);
    c.names = calloc((size_t)g->n_values + 1, sizeof *c.names);
    c.tensor = calloc((size_t)g->n_values + 1, sizeof *c.tensor);
    akg_buf b;
    akg_buf_init(&b, 1 << 17);
    int rc = !c.rk || !c.view || !c.names || !c.tensor ? AKG_ENOMEM : read_group(&c);
    if (!rc)
        rc = read_outputs(&c);
    if (!rc) {
        char name[64];
        design_name(&c, name, sizeof name);
        rg_name_tensors(&c);
        const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
        int precise = fb && !strcmp(fb, "numerical_mismatch");
        int rows = rg_rows_fit(&c);
        rc = rows ? rg_write_rows(&c, precise, &b, name) : rg_write_tiles(&c, precise, &b, name);
        const akg_graph_value *o = &g->values[c.out_val[0]];
        if (!rc && akg_buf_status(&b))
            rc = rg_decline(&c, o, "the sketch exceeds its size limit");
        int reduced = 1;
        for (int k = 0; k < c.n_out; k++)
            reduced &= c.red_out[k];
        akg_design *d = NULL;
        if (!rc && !(d = akg_rule_family_design(reduced ? "reduction" : "norm", name)))
            rc = AKG_ENOMEM;
        if (!rc) {
            d->rank = c.n;
            d->math = precise ? AKG_MATH_PRECISE : AKG_MATH_FAST;
            char dims[64];
            rg_dims_text(c.red, c.n, dims, sizeof dims);
            cJSON_AddStringToObject(d->params, "from", "graph");
            cJSON_AddStringToObject(d->params, "kind", rows ? "reduce_rows" : "reduce_group");
            cJSON_AddStringToObject(d->params, "dims", dims);
            cJSON_AddStringToObject(d->params, "dtype", c.dt);
            cJSON_AddNumberToObject(d->params, "outputs", c.n_out);
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
    free(c.view);
    free(c.names);
    free(c.tensor);
    return rc;
}
