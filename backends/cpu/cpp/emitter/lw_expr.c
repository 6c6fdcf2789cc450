/*
 * lw_expr.c: the value of a sketch expression.
 *
 * Elementwise operations stay lazy (EXPR values computed inside whatever loop
 * consumes them); reductions, scans, gathers and GEMMs are materialised where
 * they appear. Scalars (numbers, symbols, params, loop variables and
 * arithmetic on them) are C++ expressions. Keyword arguments of the
 * operations follow the language reference (`leaky_relu(x, slope=0.01)`,
 * `softplus(x, beta=1, threshold=20)`, `reduce_sum(x, axis=None,
 * keepdim=True)`, ...).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

static lw_val *scalar(lw_ctx *L, akg_dtype dt, const char *c)
{
    lw_val *v = lw_new(L, LV_SCALAR);
    if (!v)
        return NULL;
    v->dt = dt;
    v->c = c;
    return v;
}

lw_val *lw_scalar(lw_ctx *L, akg_dtype dt, const char *c)
{
    return scalar(L, dt, c);
}

lw_val *lw_float_scalar(lw_ctx *L, double v)
{
    lw_val *s = scalar(L, AKG_DTYPE_F32, lw_float_lit(L, v, "float"));
    if (s) {
        s->literal = true;
        s->fval = v;
    }
    return s;
}

static bool is_int(akg_dtype dt)
{
    return !lw_is_float(dt) && dt != AKG_DTYPE_BOOL;
}

/* The dtype two operands combine to: a tile's dtype wins over a scalar's (a number adopts
 * the tile's type), except that a float number with an integer tile gives f32. */
static akg_dtype promote(const lw_val *a, const lw_val *b)
{
    if (!b)
        return a->dt;
    bool at = a->kind != LV_SCALAR, bt = b->kind != LV_SCALAR;
    if (at && !bt)
        return lw_is_float(b->dt) && !lw_is_float(a->dt) ? AKG_DTYPE_F32 : a->dt;
    if (bt && !at)
        return lw_is_float(a->dt) && !lw_is_float(b->dt) ? AKG_DTYPE_F32 : b->dt;
    if (a->dt == b->dt)
        return a->dt;
    if (a->dt == AKG_DTYPE_F64 || b->dt == AKG_DTYPE_F64)
        return AKG_DTYPE_F64;
    if (lw_is_float(a->dt) || lw_is_float(b->dt))
        return AKG_DTYPE_F32;
    return AKG_DTYPE_I64;
}

/* A scalar operand in the type of the computation it joins: a number of the sketch is
 * written as a literal of that type (`0.5f` in a float computation: a double literal would
 * make the whole expression double). */
static lw_val *retype(lw_ctx *L, lw_val *s, akg_dtype dt)
{
    if (!s || s->kind != LV_SCALAR)
        return s;
    const char *ct = lw_comptype(dt);
    if (s->literal) {
        if (!strcmp(ct, "bool"))
            return scalar(L, dt, s->fval != 0 ? "true" : "false");
        lw_val *r = scalar(L, dt, lw_float_lit(L, s->fval, ct));
        if (r && lw_is_float(dt)) {
            r->literal = true;
            r->fval = s->fval;
        }
        return r;
    }
    if (s->dt == dt)
        return s;
    return scalar(L, dt, lw_strf(L, "((%s)(%s))", ct, s->c));
}

static bool broadcast_shape(lw_ctx *L, lw_val *out, lw_val *const *args, int n)
{
    int R = 0;
    for (int i = 0; i < n; i++)
        if (args[i] && args[i]->rank > R)
            R = args[i]->rank;
    out->rank = R;
    for (int d = 0; d < R; d++)
        out->dim[d] = lw_dim_const(L, 1);
    for (int i = 0; i < n; i++) {
        lw_val *a = args[i];
        if (!a)
            continue;
        for (int j = 0; j < a->rank; j++) {
            int d = R - a->rank + j;
            lw_dim ad = a->dim[j];
            if (ad.known && ad.k == 1)
                continue;
            if (out->dim[d].known && out->dim[d].k == 1)
                out->dim[d] = ad;
            else if (!lw_dim_equal(out->dim[d], ad) && ad.known && out->dim[d].known)
                return lw_fail(L, "shapes do not broadcast: %lld against %lld",
                               (long long)out->dim[d].k, (long long)ad.k),
                       false;
        }
    }
    return true;
}

lw_val *lw_elementwise(lw_ctx *L, const char *name, lw_val *const *args, int n)
{
    const lw_op *op = lw_op_find(name);
    if (!op)
        return lw_fail(L, "no elementwise lowering for %s()", name), NULL;
    lw_val *v = lw_new(L, LV_EXPR);
    if (!v)
        return NULL;
    v->op = op;
    v->nargs = n;
    v->precise = L->precise;
    v->simd = L->vectorize;
    v->simdlen = L->simdlen;
    for (int i = 0; i < n; i++)
        if (!args[i])
            return NULL;
    akg_dtype dt;
    if (lw_op_is_where(op))
        dt = promote(args[1], args[2]);
    else if (n >= 2)
        dt = promote(args[0], args[1]);
    else
        dt = args[0]->dt;
    if (!strcmp(name, "div") && !lw_is_float(dt))
        dt = AKG_DTYPE_F32; /* true division */
    /* operands of a computation share its type (a comparison's: the operands') */
    for (int i = 0; i < n; i++) {
        lw_val *a = args[i];
        if (lw_op_is_where(op) && i == 0) {
            v->arg[i] = a;
            continue;
        }
        if (a->kind == LV_SCALAR)
            a = retype(L, a, dt);
        else if (a->dt != dt && (lw_is_float(dt) || !lw_is_float(a->dt)) &&
                 strcmp(lw_comptype(a->dt), lw_comptype(dt))) {
            lw_val *c = lw_new(L, LV_EXPR);
            if (!c)
                return NULL;
            *c = *a;
            c->kind = LV_EXPR;
            c->id = ++L->next_id;
            c->keep = NULL;
            c->keep_filled = false;
            c->op = lw_op_find("cast");
            c->nargs = 1;
            c->arg[0] = a;
            c->dt = dt;
            a = c;
        }
        v->arg[i] = a;
    }
    if (!broadcast_shape(L, v, v->arg, n))
        return NULL;
    v->dt = lw_op_result_dtype(op, dt);
    /* all-scalar operands fold into a scalar expression */
    bool all_scalar = true;
    for (int i = 0; i < n; i++)
        all_scalar &= v->arg[i]->kind == LV_SCALAR;
    if (all_scalar) {
        const char *a[3] = {0};
        for (int i = 0; i < n; i++)
            a[i] = v->arg[i]->c;
        return scalar(L, v->dt, lw_op_apply(L, v, a));
    }
    return v;
}

lw_val *lw_cast(lw_ctx *L, lw_val *x, akg_dtype dt)
{
    if (!x)
        return NULL;
    if (x->kind == LV_SCALAR && x->literal && (dt == AKG_DTYPE_F32 || dt == AKG_DTYPE_F64))
        return retype(L, x, dt); /* a number of the sketch: a literal of that type */
    if (x->kind == LV_SCALAR)
        return scalar(L, dt, lw_strf(L, "akg_cvt<%s>(%s)", lw_comptype(dt), x->c));
    lw_val *v = lw_new(L, LV_EXPR);
    if (!v)
        return NULL;
    v->op = lw_op_find("cast");
    v->nargs = 1;
    v->arg[0] = x;
    v->dt = dt;
    v->rank = x->rank;
    for (int d = 0; d < x->rank; d++)
        v->dim[d] = x->dim[d];
    return v;
}

/* ---- expressions ---- */

static akg_dtype dtype_of_expr(const akg_sketch_expr *e)
{
    if (!e)
        return AKG_DTYPE_UNKNOWN;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    if (k == AKG_SKETCH_EXPR_NAME || k == AKG_SKETCH_EXPR_STRING)
        return akg_dtype_from_name(akg_sketch_expr_text(e));
    return AKG_DTYPE_UNKNOWN;
}

static int axis_value(lw_ctx *L, const akg_sketch_expr *e, int rank)
{
    bool k;
    int64_t v;
    lw_index(L, e, &k, &v);
    if (!k)
        return lw_fail(L, "an axis must be a constant"), 0;
    if (v < 0)
        v += rank;
    if (v < 0 || v >= rank)
        return lw_fail(L, "axis %lld is out of range for rank %d", (long long)v, rank), 0;
    return (int)v;
}

static bool bool_kwarg(lw_ctx *L, const akg_sketch_expr *call, const char *name, bool def)
{
    const akg_sketch_expr *e = akg_sketch_expr_kwarg(call, name);
    if (!e)
        return def;
    bool k;
    int64_t v;
    lw_index(L, e, &k, &v);
    if (!k)
        return lw_fail(L, "%s= must be True or False", name), def;
    return v != 0;
}

/* A positional argument, or the keyword one of the given names. */
static const akg_sketch_expr *arg_at(const akg_sketch_expr *call, size_t pos, const char *kw1,
                                     const char *kw2)
{
    if (pos < akg_sketch_expr_item_count(call))
        return akg_sketch_expr_item(call, pos);
    const akg_sketch_expr *e = kw1 ? akg_sketch_expr_kwarg(call, kw1) : NULL;
    if (!e && kw2)
        e = akg_sketch_expr_kwarg(call, kw2);
    return e;
}

static lw_val *shape_fill(lw_ctx *L, const akg_sketch_expr *list, lw_val *value, akg_dtype dt)
{
    if (!list || akg_sketch_expr_get_kind(list) != AKG_SKETCH_EXPR_LIST)
        return lw_fail(L, "the shape must be a list such as [BM, BN]"), NULL;
    lw_val *v = lw_new(L, LV_EXPR);
    if (!v)
        return NULL;
    v->op = lw_op_find("copy");
    v->nargs = 1;
    v->arg[0] = retype(L, value, dt);
    v->dt = dt;
    v->rank = (int)akg_sketch_expr_item_count(list);
    if (v->rank > LW_MAXR)
        return lw_fail(L, "rank %d is over the limit", v->rank), NULL;
    for (int d = 0; d < v->rank; d++)
        v->dim[d] = lw_index_dim(L, akg_sketch_expr_item(list, (size_t)d));
    return v;
}

static lw_val *reduce_call(lw_ctx *L, const char *f, const akg_sketch_expr *e)
{
    for (int i = 0; i < L->n_prered; i++)
        if (L->prered[i].call == e)
            return L->prered[i].out;
    const akg_sketch_expr *xe = arg_at(e, 0, "x", NULL);
    lw_val *x = lw_value_of(L, xe);
    if (!x)
        return NULL;
    if (x->kind == LV_SCALAR)
        return lw_fail(L, "%s() of a scalar", f), NULL;
    const akg_sketch_expr *ax = arg_at(e, 1, "axis", "dim");
    int axes[LW_MAXR], n = 0;
    if (ax && akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_LIST) {
        for (size_t i = 0; i < akg_sketch_expr_item_count(ax) && n < LW_MAXR; i++)
            axes[n++] = axis_value(L, akg_sketch_expr_item(ax, i), x->rank);
    } else if (ax && akg_sketch_expr_get_kind(ax) != AKG_SKETCH_EXPR_NONE) {
        axes[n++] = axis_value(L, ax, x->rank);
    }
    bool keep = bool_kwarg(L, e, "keepdim", true);
    const char *op = !strcmp(f, "reduce_argmax") ? "argmax" : f;
    return lw_reduce(L, op, x, axes, n, keep);
}

bool lw_reduce_siblings(lw_ctx *L, const akg_sketch_expr *const *calls, int n)
{
    if (n < 2 || n > 8 || L->n_prered + n > 8)
        return false;
    const char *ops[8];
    lw_val *xs[8], *outs[8];
    int axes[LW_MAXR], n_axes = 0;
    bool keep = true;
    char *axis_text = NULL;
    bool same = true;
    for (int i = 0; i < n && same; i++) {
        const akg_sketch_expr *e = calls[i];
        const char *f = akg_sketch_expr_text(e);
        ops[i] = f;
        const akg_sketch_expr *ax = arg_at(e, 1, "axis", "dim");
        char *t = ax ? akg_sketch_expr_to_string(ax) : NULL;
        bool k = bool_kwarg(L, e, "keepdim", true);
        if (i == 0) {
            axis_text = t;
            keep = k;
        } else {
            same = k == keep && ((!t && !axis_text) || (t && axis_text && !strcmp(t, axis_text)));
            free(t);
        }
    }
    if (!same || !lw_ok(L)) {
        free(axis_text);
        return false;
    }
    free(axis_text);
    for (int i = 0; i < n; i++) {
        xs[i] = lw_value_of(L, arg_at(calls[i], 0, "x", NULL));
        if (!xs[i] || xs[i]->kind == LV_SCALAR || xs[i]->rank != xs[0]->rank)
            return false;
    }
    const akg_sketch_expr *ax = arg_at(calls[0], 1, "axis", "dim");
    if (ax && akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_LIST) {
        for (size_t i = 0; i < akg_sketch_expr_item_count(ax) && n_axes < LW_MAXR; i++)
            axes[n_axes++] = axis_value(L, akg_sketch_expr_item(ax, i), xs[0]->rank);
    } else if (ax && akg_sketch_expr_get_kind(ax) != AKG_SKETCH_EXPR_NONE) {
        axes[n_axes++] = axis_value(L, ax, xs[0]->rank);
    }
    if (!lw_ok(L) || !lw_reduce_group(L, ops, xs, n, axes, n_axes, keep, outs))
        return false;
    for (int i = 0; i < n; i++) {
        L->prered[L->n_prered].call = calls[i];
        L->prered[L->n_prered].out = outs[i];
        L->n_prered++;
    }
    return true;
}

static lw_val *softmax_call(lw_ctx *L, const char *f, const akg_sketch_expr *e)
{
    lw_val *x = lw_value_of(L, arg_at(e, 0, "x", NULL));
    if (!x)
        return NULL;
    const akg_sketch_expr *ax = arg_at(e, 1, "axis", "dim");
    int axis = ax ? axis_value(L, ax, x->rank) : x->rank - 1;
    lw_val *m = lw_reduce(L, "reduce_max", x, &axis, 1, true);
    lw_val *args[2] = {x, m};
    lw_val *d = lw_elementwise(L, "sub", args, 2);
    lw_val *ex = lw_elementwise(L, "exp", &d, 1);
    lw_val *s = lw_reduce(L, "reduce_sum", ex, &axis, 1, true);
    if (!strcmp(f, "log_softmax")) {
        lw_val *ls = lw_elementwise(L, "log", &s, 1);
        lw_val *a2[2] = {d, ls};
        return lw_elementwise(L, "sub", a2, 2);
    }
    lw_val *a2[2] = {ex, s};
    return lw_elementwise(L, "div", a2, 2);
}

static lw_val *iota(lw_ctx *L, lw_val *start, lw_dim n)
{
    lw_val *v = lw_new(L, LV_EXPR);
    if (!v)
        return NULL;
    v->op = lw_op_find("iota");
    v->nargs = 0;
    v->lit[0] = start->c;
    v->dt = AKG_DTYPE_I32;
    v->rank = 1;
    v->dim[0] = n;
    return v;
}

static lw_val *call_value(lw_ctx *L, const akg_sketch_expr *e)
{
    const char *f = akg_sketch_expr_text(e);
    size_t n = akg_sketch_expr_item_count(e);
    if (!strncmp(f, "reduce_", 7) || !strcmp(f, "argmax") || !strcmp(f, "argmin"))
        return reduce_call(L, f, e);
    if (!strcmp(f, "softmax") || !strcmp(f, "log_softmax"))
        return softmax_call(L, f, e);
    if (!strcmp(f, "cumsum") || !strcmp(f, "cumprod") || !strcmp(f, "local_cumsum") ||
        !strcmp(f, "local_cumprod")) {
        lw_val *x = lw_value_of(L, arg_at(e, 0, "x", NULL));
        if (!x)
            return NULL;
        const akg_sketch_expr *ax = arg_at(e, 1, "axis", "dim");
        int axis = ax ? axis_value(L, ax, x->rank) : x->rank - 1;
        return lw_scan(L, strstr(f, "prod") ? "cumprod" : "cumsum", x, axis,
                       bool_kwarg(L, e, "reverse", false), bool_kwarg(L, e, "exclusive", false));
    }
    if (!strcmp(f, "gemm") || !strcmp(f, "dot")) {
        lw_val *a = lw_value_of(L, arg_at(e, 0, "a", NULL));
        lw_val *b = lw_value_of(L, arg_at(e, 1, "b", NULL));
        if (!a || !b)
            return NULL;
        if (!strcmp(f, "dot") && a->rank == 1 && b->rank == 1) {
            lw_val *args[2] = {a, b};
            lw_val *p = lw_elementwise(L, "mul", args, 2);
            int ax0 = 0;
            return lw_reduce(L, "reduce_sum", p, &ax0, 1, true);
        }
        lw_val *acc = NULL;
        const akg_sketch_expr *ae = arg_at(e, 2, "acc", NULL);
        if (ae) {
            lw_val *a0 = lw_value_of(L, ae);
            if (!a0)
                return NULL;
            /* acc + a @ b is a new value: accumulate into a copy (the statement form
             * `gemm(a, b, acc)` and `acc = gemm(a, b, acc)` update acc in place) */
            acc = L->gemm_in_place == a0 && a0->kind == LV_BUF ? a0 : lw_copy_to_buffer(L, a0);
        }
        return lw_gemm(L, a, b, acc, bool_kwarg(L, e, "trans_a", false),
                       bool_kwarg(L, e, "trans_b", false));
    }
    if (!strcmp(f, "gather")) {
        lw_val *x = lw_value_of(L, arg_at(e, 0, "x", NULL));
        lw_val *ix = lw_value_of(L, arg_at(e, 1, "index", NULL));
        const akg_sketch_expr *ax = arg_at(e, 2, "axis", "dim");
        if (!x || !ix)
            return NULL;
        return lw_gather(L, x, ix, ax ? axis_value(L, ax, x->rank) : 0);
    }
    if (!strcmp(f, "transpose")) {
        lw_val *x = lw_value_of(L, arg_at(e, 0, "x", NULL));
        if (!x)
            return NULL;
        lw_val *v = lw_new(L, LV_EXPR);
        if (!v)
            return NULL;
        v->op = lw_op_find("transpose");
        v->nargs = 1;
        v->arg[0] = x;
        v->dt = x->dt;
        v->rank = x->rank;
        const akg_sketch_expr *pe = arg_at(e, 1, "perm", NULL);
        for (int d = 0; d < x->rank; d++)
            v->perm[d] = x->rank - 1 - d;
        if (pe && akg_sketch_expr_get_kind(pe) == AKG_SKETCH_EXPR_LIST)
            for (int d = 0; d < x->rank && (size_t)d < akg_sketch_expr_item_count(pe); d++)
                v->perm[d] = axis_value(L, akg_sketch_expr_item(pe, (size_t)d), x->rank);
        for (int d = 0; d < x->rank; d++)
            v->dim[d] = x->dim[v->perm[d]];
        return v;
    }
    if (!strcmp(f, "cast")) {
        lw_val *x = lw_value_of(L, arg_at(e, 0, "x", NULL));
        akg_dtype dt = dtype_of_expr(arg_at(e, 1, "dtype", NULL));
        if (!dt)
            return lw_fail(L, "cast() needs a dtype such as f32"), NULL;
        return lw_cast(L, x, dt);
    }
    if (!strcmp(f, "fill") || !strcmp(f, "zeros")) {
        akg_dtype dt = dtype_of_expr(akg_sketch_expr_kwarg(e, "dtype"));
        if (!dt)
            dt = AKG_DTYPE_F32;
        lw_val *val = !strcmp(f, "zeros") ? lw_scalar(L, dt, "0")
                                          : lw_value_of(L, arg_at(e, 1, "value", NULL));
        if (!val)
            return NULL;
        if (val->kind != LV_SCALAR)
            return lw_fail(L, "fill() takes a scalar value"), NULL;
        return shape_fill(L, arg_at(e, 0, "shape", NULL), val, dt);
    }
    if (!strcmp(f, "arange")) {
        const akg_sketch_expr *a0 = arg_at(e, 0, NULL, NULL), *a1 = arg_at(e, 1, NULL, NULL);
        const akg_sketch_expr *lo = a1 ? a0 : NULL, *hi = a1 ? a1 : a0;
        bool k;
        int64_t v;
        const char *s = lo ? lw_index(L, lo, &k, &v) : "0";
        lw_dim nd;
        if (lo) {
            bool k1;
            int64_t v1;
            const char *t = lw_index(L, hi, &k1, &v1);
            if (k && k1)
                nd = lw_dim_const(L, v1 - v);
            else
                nd = lw_dim_text(L, lw_strf(L, "(%s - %s)", t, s));
        } else {
            nd = lw_index_dim(L, hi);
        }
        return iota(L, lw_scalar(L, AKG_DTYPE_I64, s), nd);
    }
    if ((!strcmp(f, "min") || !strcmp(f, "max")) && n == 2) {
        lw_val *a = lw_value_of(L, akg_sketch_expr_item(e, 0));
        lw_val *b = lw_value_of(L, akg_sketch_expr_item(e, 1));
        if (!a || !b)
            return NULL;
        if (a->kind == LV_SCALAR && b->kind == LV_SCALAR && is_int(a->dt) && is_int(b->dt))
            return scalar(L, AKG_DTYPE_I64, lw_index(L, e, NULL, NULL));
        lw_val *args[2] = {a, b};
        return lw_elementwise(L, f[1] == 'a' ? "maximum" : "minimum", args, 2);
    }
    if (!strcmp(f, "ceil") || !strcmp(f, "floor_div") || !strcmp(f, "min") || !strcmp(f, "max"))
        return scalar(L, AKG_DTYPE_I64, lw_index(L, e, NULL, NULL));
    const lw_op *op = lw_op_find(f);
    if (op) {
        /* keyword names of the optional operands: two spellings each */
        static const struct {
            const char *op, *kw[3][2];
        } kws[] = {
            {"leaky_relu", {{0}, {"slope", "negative_slope"}, {0}}},
            {"softplus", {{0}, {"beta", NULL}, {"threshold", NULL}}},
            {"elu", {{0}, {"alpha", NULL}, {0}}},
            {"hardtanh", {{0}, {"lo", "min_val"}, {"hi", "max_val"}}},
            {"clamp", {{0}, {"lo", "min"}, {"hi", "max"}}},
        };
        lw_val *args[3] = {0};
        int na = lw_op_nargs(op);
        for (int i = 0; i < na; i++) {
            const char *kw1 = NULL, *kw2 = NULL;
            for (size_t q = 0; q < sizeof kws / sizeof kws[0]; q++)
                if (!strcmp(kws[q].op, lw_op_name(op))) {
                    kw1 = kws[q].kw[i][0];
                    kw2 = kws[q].kw[i][1];
                }
            const akg_sketch_expr *ae = arg_at(e, (size_t)i, kw1, kw2);
            if (ae) {
                args[i] = lw_value_of(L, ae);
            } else if (lw_op_default(op, i)) {
                args[i] = lw_float_scalar(L, strtod(lw_op_default(op, i), NULL));
            } else {
                return lw_fail(L, "%s() is missing its operand %d", f, i + 1), NULL;
            }
            if (!args[i])
                return NULL;
        }
        return lw_elementwise(L, f, args, na);
    }
    return lw_fail(L, "the cpu/cpp Coder has no lowering for %s()", f), NULL;
}

static const char *binop_name(const char *op)
{
    static const struct {
        const char *py, *name;
    } t[] = {{"+", "add"},     {"-", "sub"},     {"*", "mul"},         {"/", "div"},
             {"//", "floordiv"}, {"%", "mod"},   {"**", "pow"},        {"<", "lt"},
             {"<=", "le"},     {">", "gt"},      {">=", "ge"},         {"==", "eq"},
             {"!=", "ne"},     {"and", "logical_and"}, {"or", "logical_or"}, {"&", "bitand"},
             {"|", "bitor"},   {"^", "bitxor"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(t[i].py, op))
            return t[i].name;
    return NULL;
}

/* Whether e is an integer expression of scalars only (indices, symbols, loop variables). */
static bool int_scalar_expr(lw_ctx *L, const akg_sketch_expr *e)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        lw_val *v = lw_lookup(L, akg_sketch_expr_text(e));
        if (v)
            return v->kind == LV_SCALAR && !lw_is_float(v->dt);
        const akg_sketch *sk = L->sk;
        for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
            int64_t x;
            if (!strcmp(akg_sketch_const_name(sk, i), akg_sketch_expr_text(e)))
                return akg_sketch_const_int(sk, i, &x) == 0;
        }
        return false;
    }
    case AKG_SKETCH_EXPR_UNARY:
        return strcmp(akg_sketch_expr_text(e), "-") == 0 || !strcmp(akg_sketch_expr_text(e), "+")
                   ? int_scalar_expr(L, akg_sketch_expr_lhs(e))
                   : false;
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "/"))
            return false;
        return int_scalar_expr(L, akg_sketch_expr_lhs(e)) &&
               int_scalar_expr(L, akg_sketch_expr_rhs(e));
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        if (strcmp(f, "ceil") && strcmp(f, "min") && strcmp(f, "max") && strcmp(f, "floor_div"))
            return false;
        for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
            if (!int_scalar_expr(L, akg_sketch_expr_item(e, i)))
                return false;
        return true;
    }
    default:
        return false;
    }
}

lw_val *lw_value_of(lw_ctx *L, const akg_sketch_expr *e)
{
    if (!e || !lw_ok(L))
        return NULL;
    if (int_scalar_expr(L, e)) {
        bool k;
        int64_t v;
        const char *c = lw_index(L, e, &k, &v);
        lw_val *s = scalar(L, AKG_DTYPE_I64, c);
        if (s) {
            s->nonneg = lw_index_nonneg(L, e);
            s->ub = k ? 0 : lw_index_upper(L, e);
            /* `a % D` of non-negative operands is below D (indexes a dim of extent D) */
            if (s->nonneg && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_BINARY &&
                !strcmp(akg_sketch_expr_text(e), "%"))
                s->upper = lw_index(L, akg_sketch_expr_rhs(e), NULL, NULL);
        }
        return s;
    }
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_FLOAT:
        return lw_float_scalar(L, akg_sketch_expr_float(e));
    case AKG_SKETCH_EXPR_NAME: {
        const char *name = akg_sketch_expr_text(e);
        lw_val *v = lw_lookup(L, name);
        if (v) {
            if (v->kind == LV_VIEW && !v->base)
                return lw_fail(L, "tile '%s' is read before anything is loaded into it", name),
                       NULL;
            return v;
        }
        const akg_sketch *sk = L->sk;
        for (size_t i = 0; i < akg_sketch_const_count(sk); i++)
            if (!strcmp(akg_sketch_const_name(sk, i), name)) {
                const akg_sketch_expr *cv = akg_sketch_const_value(sk, i);
                if (akg_sketch_const_is_tunable(sk, i))
                    cv = akg_sketch_const_candidate(sk, i, akg_sketch_const_choice(sk, i));
                if (cv && akg_sketch_expr_get_kind(cv) == AKG_SKETCH_EXPR_FLOAT)
                    return lw_float_scalar(L, akg_sketch_expr_float(cv));
            }
        return lw_fail(L, "'%s' has no value here", name), NULL;
    }
    case AKG_SKETCH_EXPR_UNARY: {
        lw_val *a = lw_value_of(L, akg_sketch_expr_lhs(e));
        const char *op = akg_sketch_expr_text(e);
        if (!a)
            return NULL;
        if (!strcmp(op, "+"))
            return a;
        if (!strcmp(op, "-") && a->kind == LV_SCALAR && a->literal)
            return lw_float_scalar(L, -a->fval);
        return lw_elementwise(L, !strcmp(op, "-") ? "neg" : !strcmp(op, "not") ? "logical_not"
                                                                                : "invert",
                              &a, 1);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *name = binop_name(akg_sketch_expr_text(e));
        if (!name)
            return lw_fail(L, "operator %s is not defined on tiles", akg_sketch_expr_text(e)),
                   NULL;
        lw_val *args[2] = {lw_value_of(L, akg_sketch_expr_lhs(e)),
                           lw_value_of(L, akg_sketch_expr_rhs(e))};
        if (!args[0] || !args[1])
            return NULL;
        return lw_elementwise(L, name, args, 2);
    }
    case AKG_SKETCH_EXPR_CALL:
        return call_value(L, e);
    case AKG_SKETCH_EXPR_SUBSCRIPT: {
        const akg_sketch_expr *base = akg_sketch_expr_base(e);
        lw_val *b = lw_value_of(L, base);
        if (!b)
            return NULL;
        if (b->kind == LV_EXPR || b->kind == LV_VIEW) {
            b = lw_force(L, b, TIER_FAST);
            if (akg_sketch_expr_get_kind(base) == AKG_SKETCH_EXPR_NAME)
                lw_bind(L, akg_sketch_expr_text(base), b);
        }
        if (!b || b->kind == LV_SCALAR)
            return lw_fail(L, "only tiles can be subscripted"), NULL;
        lw_dim sh[LW_MAXR];
        int r = lw_region_shape(L, b, e, sh);
        return lw_view(L, b, e, b->dt, r, sh);
    }
    default:
        return lw_fail(L, "this expression has no value on the cpu/cpp backend"), NULL;
    }
}

bool lw_is_index_expr(lw_ctx *L, const akg_sketch_expr *e)
{
    return int_scalar_expr(L, e);
}

lw_val *lw_copy_to_buffer(lw_ctx *L, lw_val *v)
{
    if (!v)
        return NULL;
    lw_val *b = lw_buffer(L, v->dt, v->rank, v->dim, TIER_FAST, "t");
    if (!b)
        return NULL;
    lw_assign_into(L, b, v);
    return b;
}
