/*
 * tt_expr.c: values inside a kernel. Every computation of the sketch becomes
 * one Python assignment to a fresh temporary, its block shape the NumPy
 * broadcast of its operands' (right-aligned), its valid extents carried along
 * so that reductions pad with their identity (tl.where before tl.sum /
 * tl.reduce) and stores mask what is not real. Numbers stay Python literals
 * (weakly typed); integer scalars and params that meet a block are cast to
 * the block's dtype, as the language says a scalar takes the tile's dtype.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

tt_val *tt_new_val(tt_ctx *C, int rank, akg_dtype dt, const char *py)
{
    tt_val *v = tt_alloc(C, sizeof *v);
    if (!v)
        return NULL;
    v->rank = rank;
    v->dt = dt;
    v->py = py;
    for (int d = 0; d < rank; d++)
        v->pad[d] = "1";
    return v;
}

static tt_val *copy_val(tt_ctx *C, const tt_val *src, const char *py)
{
    tt_val *v = tt_alloc(C, sizeof *v);
    if (!v)
        return NULL;
    *v = *src;
    v->py = py;
    v->literal = false;
    v->index = false;
    return v;
}

const char *tt_arange(tt_ctx *C, const char *pad, int d, int r)
{
    if (r <= 1)
        return tt_strf(C, "tl.arange(0, %s)", pad);
    char idx[64] = "";
    size_t n = 0;
    for (int k = 0; k < r && n + 8 < sizeof idx; k++)
        n +=
            (size_t)snprintf(idx + n, sizeof idx - n, "%s%s", k ? ", " : "", k == d ? ":" : "None");
    return tt_strf(C, "tl.arange(0, %s)[%s]", pad, idx);
}

const char *tt_as_dtype(tt_ctx *C, const tt_val *v, akg_dtype dt)
{
    if (v->literal) {
        if (tt_dtype_is_int(dt) && strpbrk(v->py, ".eE") && strncmp(v->py, "float", 5))
            return tt_strf(C, "%lld", (long long)strtod(v->py, NULL));
        return v->py;
    }
    if (v->dt == dt || dt == AKG_DTYPE_UNKNOWN)
        return v->py;
    return tt_strf(C, "tl.cast(%s, %s)", v->py, tt_dtype_tl(dt));
}

/* Binds the Python text to a fresh temporary and returns the temporary's name. */
static const char *emit_temp(tt_ctx *C, const char *py)
{
    const char *t = tt_temp(C);
    tt_line(C, "%s = %s", t, py);
    return t;
}

/* The broadcast shape of vals into out (rank, pad, ext). */
static bool broadcast(tt_ctx *C, tt_val *const *vals, int n, tt_val *out)
{
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (vals[i] && vals[i]->rank > rank)
            rank = vals[i]->rank;
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        const char *pad = "1", *ext = NULL;
        bool found = false;
        for (int i = 0; i < n; i++) {
            const tt_val *v = vals[i];
            if (!v)
                continue;
            int k = d - (rank - v->rank);
            if (k < 0 || !strcmp(v->pad[k], "1"))
                continue;
            if (!found) {
                pad = v->pad[k];
                ext = v->ext[k];
                found = true;
            } else if (strcmp(pad, v->pad[k])) {
                tt_fail(C, NULL,
                        "blocks of different padded extents meet in one computation (%s and %s): "
                        "their tiles' extents differ",
                        pad, v->pad[k]);
                return false;
            } else if (!ext && v->ext[k]) {
                ext = v->ext[k];
            }
        }
        out->pad[d] = pad;
        out->ext[d] = ext;
    }
    return true;
}

/* An elementwise operation of the formula table on evaluated operands. */
static tt_val *apply_op(tt_ctx *C, const tt_op *op, tt_val **args, int nargs)
{
    int kind = tt_op_kind(op);
    int first = kind == 3 ? 1 : 0; /* where: the mask does not decide the dtype */
    akg_dtype dt = AKG_DTYPE_UNKNOWN;
    for (int i = first; i < nargs && dt == AKG_DTYPE_UNKNOWN; i++)
        if (args[i] && args[i]->rank > 0)
            dt = args[i]->dt;
    for (int i = first; i < nargs && dt == AKG_DTYPE_UNKNOWN; i++)
        if (args[i] && !args[i]->literal)
            dt = args[i]->dt;
    if (dt == AKG_DTYPE_UNKNOWN) {
        dt = AKG_DTYPE_F32;
        for (int i = first; i < nargs; i++)
            if (args[i] && args[i]->literal && !strpbrk(args[i]->py, ".eEn"))
                dt = AKG_DTYPE_I64;
    }
    const char *py[3];
    for (int i = 0; i < nargs; i++) {
        if (kind == 3 && i == 0)
            py[i] = args[i]->py;
        else if (kind == 2)
            py[i] = args[i]->py;
        else
            py[i] = tt_as_dtype(C, args[i], dt);
    }
    tt_val shape = {0};
    if (!broadcast(C, args, nargs, &shape))
        return NULL;
    const char *t = emit_temp(C, tt_op_apply(C, op, py));
    tt_val *v = copy_val(C, &shape, t);
    if (v)
        v->dt = kind == 1 || kind == 2 ? AKG_DTYPE_BOOL : dt;
    return v;
}

static tt_val *apply_named(tt_ctx *C, const char *name, tt_val **args, int nargs)
{
    const tt_op *op = tt_op_find(name);
    if (!op) {
        tt_fail(C, NULL, "internal: no formula for '%s'", name);
        return NULL;
    }
    return apply_op(C, op, args, nargs);
}

static tt_val *literal(tt_ctx *C, const char *py)
{
    tt_val *v = tt_new_val(C, 0, AKG_DTYPE_UNKNOWN, py);
    if (v)
        v->literal = true;
    return v;
}

tt_val *tt_cast(tt_ctx *C, tt_val *x, akg_dtype dt, const akg_sketch_expr *at)
{
    if (!x)
        return NULL;
    if (dt == AKG_DTYPE_UNKNOWN) {
        tt_fail_expr(C, at, "cast to an unknown dtype");
        return NULL;
    }
    if (x->dt == dt && !x->literal)
        return x;
    const char *T = tt_dtype_tl(dt), *py;
    if (x->literal || x->rank == 0) {
        py = tt_strf(C, "tl.cast(%s, %s)", x->py, T);
    } else if (dt == AKG_DTYPE_BOOL) {
        py = tt_strf(C, "(%s != 0)", x->py);
    } else if (tt_dtype_is_int(dt) && tt_dtype_is_float(x->dt)) {
        /* round to nearest even; NaN to 0; saturate */
        const char *lo = "-2147483648", *hi = "2147483647";
        if (dt == AKG_DTYPE_I64)
            lo = "-9223372036854775808", hi = "9223372036854775807";
        else if (dt == AKG_DTYPE_I16)
            lo = "-32768", hi = "32767";
        else if (dt == AKG_DTYPE_I8)
            lo = "-128", hi = "127";
        else if (dt == AKG_DTYPE_U8)
            lo = "0", hi = "255";
        const char *r = emit_temp(C, tt_strf(C, "_akg_rint(%s)", x->py));
        py = tt_strf(C,
                     "tl.where(%s != %s, 0, tl.where(%s <= %s.0, %s, tl.where(%s >= %s.0, %s, "
                     "%s.to(%s))))",
                     r, r, r, lo, lo, r, hi, hi, r, T);
        py = tt_strf(C, "(%s).to(%s)", py, T);
    } else if (tt_dtype_is_int(dt) && tt_dtype_is_int(x->dt) &&
               (dt == AKG_DTYPE_I8 || dt == AKG_DTYPE_I16 || dt == AKG_DTYPE_U8 ||
                (dt == AKG_DTYPE_I32 && x->dt == AKG_DTYPE_I64))) {
        const char *lo = dt == AKG_DTYPE_I32   ? "-2147483648"
                         : dt == AKG_DTYPE_I16 ? "-32768"
                         : dt == AKG_DTYPE_I8  ? "-128"
                                               : "0";
        const char *hi = dt == AKG_DTYPE_I32   ? "2147483647"
                         : dt == AKG_DTYPE_I16 ? "32767"
                         : dt == AKG_DTYPE_I8  ? "127"
                                               : "255";
        py = tt_strf(C, "tl.minimum(tl.maximum(%s, %s), %s).to(%s)", x->py, lo, hi, T);
    } else {
        py = tt_strf(C, "%s.to(%s)", x->py, T);
    }
    tt_val *v = copy_val(C, x, emit_temp(C, py));
    if (v)
        v->dt = dt;
    return v;
}

/* ---- reductions ---- */

static const char *identity(tt_ctx *C, const char *kind, akg_dtype dt)
{
    bool f = tt_dtype_is_float(dt);
    if (!strcmp(kind, "max") || !strcmp(kind, "argmax")) {
        if (f)
            return "float(\"-inf\")";
        return dt == AKG_DTYPE_I64   ? "-9223372036854775808"
               : dt == AKG_DTYPE_I32 ? "-2147483648"
               : dt == AKG_DTYPE_I16 ? "-32768"
               : dt == AKG_DTYPE_I8  ? "-128"
                                     : "0";
    }
    if (!strcmp(kind, "min") || !strcmp(kind, "argmin")) {
        if (f)
            return "float(\"inf\")";
        return dt == AKG_DTYPE_I64   ? "9223372036854775807"
               : dt == AKG_DTYPE_I32 ? "2147483647"
               : dt == AKG_DTYPE_I16 ? "32767"
               : dt == AKG_DTYPE_I8  ? "127"
               : dt == AKG_DTYPE_U8  ? "255"
                                     : "1";
    }
    (void)C;
    return !strcmp(kind, "prod") ? "1" : "0";
}

/* x padded with the identity along axis a (where the axis has a valid extent). */
static const char *masked(tt_ctx *C, const tt_val *x, int a, const char *ident)
{
    if (!x->ext[a])
        return x->py;
    return emit_temp(C, tt_strf(C, "tl.where(%s < %s, %s, %s)", tt_arange(C, x->pad[a], a, x->rank),
                                x->ext[a], x->py, ident));
}

/* One axis of a reduction: kind sum, max, min, prod, argmax, argmin. */
static tt_val *reduce_axis(tt_ctx *C, const char *kind, tt_val *x, int a, bool keep)
{
    const char *K = keep ? "True" : "False";
    const char *m = masked(C, x, a, identity(C, kind, x->dt));
    const char *py;
    akg_dtype dt = x->dt;
    if (!strcmp(kind, "sum")) {
        if (dt == AKG_DTYPE_F16 || dt == AKG_DTYPE_BF16)
            py = tt_strf(C, "tl.sum(%s, axis=%d, keep_dims=%s, dtype=tl.float32).to(%s)", m, a, K,
                         tt_dtype_tl(dt));
        else if (dt == AKG_DTYPE_BOOL || dt == AKG_DTYPE_I8 || dt == AKG_DTYPE_I16 ||
                 dt == AKG_DTYPE_U8) {
            py = tt_strf(C, "tl.sum(%s.to(tl.int32), axis=%d, keep_dims=%s)", m, a, K);
            dt = AKG_DTYPE_I32;
        } else
            py = tt_strf(C, "tl.sum(%s, axis=%d, keep_dims=%s)", m, a, K);
    } else if (!strcmp(kind, "max") || !strcmp(kind, "min") || !strcmp(kind, "prod")) {
        const char *fn = !strcmp(kind, "max")   ? "_akg_maxnan"
                         : !strcmp(kind, "min") ? "_akg_minnan"
                                                : "_akg_mul";
        py = tt_strf(C, "tl.reduce(%s, %d, %s, keep_dims=%s)", m, a, fn, K);
    } else { /* argmax, argmin: the first index of the extreme, a NaN being the extreme */
        const char *ext = tt_strf(C, "tl.reduce(%s, %d, %s, keep_dims=True)", m, a,
                                  !strcmp(kind, "argmax") ? "_akg_maxnan" : "_akg_minnan");
        const char *e = emit_temp(C, ext);
        const char *r = tt_arange(C, x->pad[a], a, x->rank);
        const char *valid = x->ext[a] ? tt_strf(C, " & (%s < %s)", r, x->ext[a]) : "";
        py = tt_strf(C,
                     "tl.min(tl.where(((%s == %s) | (%s != %s))%s, %s, 2147483647), axis=%d, "
                     "keep_dims=%s)",
                     x->py, e, x->py, x->py, valid, r, a, K);
        dt = AKG_DTYPE_I32;
    }
    tt_val *v = copy_val(C, x, emit_temp(C, py));
    if (!v)
        return NULL;
    v->dt = dt;
    if (keep) {
        v->pad[a] = "1";
        v->ext[a] = NULL;
    } else {
        for (int d = a; d + 1 < v->rank; d++) {
            v->pad[d] = v->pad[d + 1];
            v->ext[d] = v->ext[d + 1];
        }
        v->rank--;
    }
    return v;
}

static tt_val *reduce(tt_ctx *C, const char *kind, tt_val *x, const akg_sketch_expr *axis_e,
                      bool keep, const akg_sketch_expr *at)
{
    if (!x)
        return NULL;
    if (x->rank == 0) {
        tt_fail_expr(C, at, "reduction of a scalar");
        return NULL;
    }
    bool axes[TT_MAXR] = {0};
    int n_axes = 0;
    if (!axis_e || akg_sketch_expr_get_kind(axis_e) == AKG_SKETCH_EXPR_NONE) {
        for (int d = 0; d < x->rank; d++)
            axes[d] = true;
        n_axes = x->rank;
    } else {
        size_t n = akg_sketch_expr_get_kind(axis_e) == AKG_SKETCH_EXPR_LIST
                       ? akg_sketch_expr_item_count(axis_e)
                       : 1;
        for (size_t i = 0; i < n; i++) {
            const akg_sketch_expr *ae = akg_sketch_expr_get_kind(axis_e) == AKG_SKETCH_EXPR_LIST
                                            ? akg_sketch_expr_item(axis_e, i)
                                            : axis_e;
            int64_t a;
            if (!tt_const_value(C, ae, &a)) {
                tt_fail_expr(C, ae, "a reduction axis must be a constant");
                return NULL;
            }
            if (a < 0)
                a += x->rank;
            if (a < 0 || a >= x->rank) {
                tt_fail_expr(C, ae, "reduction axis out of range");
                return NULL;
            }
            if (!axes[a])
                n_axes++;
            axes[a] = true;
        }
    }
    bool arg = !strcmp(kind, "argmax") || !strcmp(kind, "argmin");
    if (arg && n_axes != 1) {
        tt_fail_expr(C, at, "%s over more than one axis is not lowered yet", kind);
        return NULL;
    }
    bool mean = !strcmp(kind, "mean");
    const char *count = NULL;
    tt_val *v = x;
    for (int a = x->rank - 1; a >= 0; a--) {
        if (!axes[a])
            continue;
        if (mean) {
            const char *c = x->ext[a] ? x->ext[a] : x->pad[a];
            count = count ? tt_strf(C, "%s * %s", count, c) : c;
        }
        v = reduce_axis(C, mean ? "sum" : kind, v, a, keep);
        if (!v)
            return NULL;
    }
    if (mean) {
        tt_val *r = copy_val(C, v, emit_temp(C, tt_strf(C, "%s / (%s)", v->py, count)));
        if (r && !tt_dtype_is_float(r->dt))
            r->dt = AKG_DTYPE_F32;
        return r;
    }
    return v;
}

/* ---- calls ---- */

/* Operand i of a call whose first n positional operands count (a destination-form call
 * statement leaves its destination out), else its keyword kw. */
static const akg_sketch_expr *arg_at(const akg_sketch_expr *call, size_t n, size_t i,
                                     const char *kw)
{
    if (n > akg_sketch_expr_item_count(call))
        n = akg_sketch_expr_item_count(call);
    if (i < n)
        return akg_sketch_expr_item(call, i);
    return kw ? akg_sketch_expr_kwarg(call, kw) : NULL;
}

static akg_dtype dtype_arg(const akg_sketch_expr *e)
{
    if (!e)
        return AKG_DTYPE_UNKNOWN;
    const char *t = akg_sketch_expr_text(e);
    return t ? akg_dtype_from_name(t) : AKG_DTYPE_UNKNOWN;
}

static bool keepdim_of(tt_ctx *C, const akg_sketch_expr *call)
{
    const akg_sketch_expr *k = akg_sketch_expr_kwarg(call, "keepdim");
    if (!k)
        k = akg_sketch_expr_kwarg(call, "keep_dims");
    if (!k)
        return true;
    int64_t v;
    if (akg_sketch_expr_get_kind(k) == AKG_SKETCH_EXPR_BOOL)
        return akg_sketch_expr_int(k) != 0;
    return tt_const_value(C, k, &v) ? v != 0 : true;
}

static tt_val *shaped(tt_ctx *C, const akg_sketch_expr *dims, akg_dtype dt, const char *value)
{
    if (!dims || akg_sketch_expr_get_kind(dims) != AKG_SKETCH_EXPR_LIST) {
        tt_fail_expr(C, dims, "expected a list of extents");
        return NULL;
    }
    int r = (int)akg_sketch_expr_item_count(dims);
    if (r > TT_MAXR)
        r = TT_MAXR;
    tt_val *v = tt_new_val(C, r, dt, NULL);
    if (!v)
        return NULL;
    const char *list = "";
    for (int d = 0; d < r; d++) {
        if (!tt_dim(C, akg_sketch_expr_item(dims, (size_t)d), &v->pad[d], &v->ext[d]))
            return NULL;
        list = tt_strf(C, "%s%s%s", list, d ? ", " : "", v->pad[d]);
    }
    v->py = emit_temp(C, tt_strf(C, "tl.full([%s], %s, %s)", list, value, tt_dtype_tl(dt)));
    return v;
}

/* Whether a call's boolean keyword (trans_a=True) is set. */
static bool flag_of(tt_ctx *C, const akg_sketch_expr *call, const char *kw)
{
    const akg_sketch_expr *k = akg_sketch_expr_kwarg(call, kw);
    int64_t v;
    if (!k)
        return false;
    if (akg_sketch_expr_get_kind(k) == AKG_SKETCH_EXPR_BOOL)
        return akg_sketch_expr_int(k) != 0;
    return tt_const_value(C, k, &v) && v != 0;
}

/* Whether a padded extent is a constant of at least 16: tl.dot's minimum on every side. */
static bool dot_side(const char *pad)
{
    char *end;
    long v = strtol(pad, &end, 10);
    return *pad && !*end && v >= 16;
}

static tt_val *swap_axes(tt_ctx *C, tt_val *x)
{
    tt_val *v = copy_val(C, x, emit_temp(C, tt_strf(C, "tl.trans(%s)", x->py)));
    if (v) {
        v->pad[0] = x->pad[1], v->pad[1] = x->pad[0];
        v->ext[0] = x->ext[1], v->ext[1] = x->ext[0];
    }
    return v;
}

/* gemm(a, b[, acc], trans_a=, trans_b=) and dot(a, b): acc + op(a) @ op(b) of rank-2 tiles, as
 * the language says: accumulated in f32 (f64 when acc is f64), the result in acc's dtype (f32
 * without acc). The padded K of both operands is zeroed first (a padded lane may hold anything
 * a computation left there), so the padding adds nothing. With every side a constant of at
 * least 16 and f32/f16/bf16 operands it is tl.dot with an f32 accumulator; f32 products at
 * the target's f32_dot_precision (plain TF32 would miss the Verifier's f32 tolerance: on CUDA
 * "tf32x3", three tensor-core products of split operands with f32-level error, else "ieee");
 * otherwise (small or host-computed tiles, f64, integers) a broadcast product summed over K,
 * correct at any size. The kernel's largest dot tile is recorded for its launch (num_warps). */
static tt_val *gemm_value(tt_ctx *C, const akg_sketch_expr *e, size_t n, bool is_dot)
{
    const char *fn = is_dot ? "dot" : "gemm";
    tt_val *a = tt_value(C, arg_at(e, n, 0, "a"));
    tt_val *b = a ? tt_value(C, arg_at(e, n, 1, "b")) : NULL;
    const akg_sketch_expr *acc_e = is_dot ? NULL : arg_at(e, n, 2, "acc");
    if (!is_dot && !acc_e) /* the statement gemm(a, b, dst=c) accumulates into c */
        acc_e = akg_sketch_expr_kwarg(e, "dst");
    tt_val *acc = acc_e && b ? tt_value(C, acc_e) : NULL;
    if (!a || !b || (acc_e && !acc))
        return NULL;
    if (is_dot && a->rank == 1 && b->rank == 1) {
        tt_val *ops[2] = {tt_cast(C, a, AKG_DTYPE_F32, e), tt_cast(C, b, AKG_DTYPE_F32, e)};
        tt_val *p = ops[0] && ops[1] ? apply_named(C, "mul", ops, 2) : NULL;
        return p ? reduce_axis(C, "sum", p, 0, true) : NULL;
    }
    if (a->rank != 2 || b->rank != 2) {
        tt_fail_expr(C, e, "%s takes rank-2 tiles a [M, K] and b [K, N] (got ranks %d and %d)", fn,
                     a->rank, b->rank);
        return NULL;
    }
    if (acc && acc->rank != 2) {
        tt_fail_expr(C, e, "gemm's accumulator must be a rank-2 tile [M, N] (got rank %d)",
                     acc->rank);
        return NULL;
    }
    if (flag_of(C, e, "trans_a"))
        a = swap_axes(C, a);
    if (a && flag_of(C, e, "trans_b"))
        b = swap_axes(C, b);
    if (!a || !b)
        return NULL;
    if (strcmp(a->pad[1], b->pad[0])) {
        tt_fail_expr(C, e,
                     "%s: the K extents of a and b pad to %s and %s; allocate both with the same "
                     "K extent",
                     fn, a->pad[1], b->pad[0]);
        return NULL;
    }
    akg_dtype out_dt = acc && acc->dt ? acc->dt : AKG_DTYPE_F32;
    akg_dtype cd = out_dt == AKG_DTYPE_F64 ? AKG_DTYPE_F64 : AKG_DTYPE_F32;
    akg_dtype in = a->dt == b->dt ? a->dt : AKG_DTYPE_F32;
    bool f32ish = in == AKG_DTYPE_F32 || in == AKG_DTYPE_F16 || in == AKG_DTYPE_BF16;
    bool tc = cd == AKG_DTYPE_F32 && f32ish && dot_side(a->pad[0]) && dot_side(a->pad[1]) &&
              dot_side(b->pad[1]);
    const char *pa = masked(C, a, 1, "0"), *pb = masked(C, b, 0, "0");
    tt_val shape = {.rank = 2};
    shape.pad[0] = a->pad[0], shape.pad[1] = b->pad[1];
    shape.ext[0] = a->ext[0], shape.ext[1] = b->ext[1];
    if (acc) {
        tt_val *both[2] = {&shape, acc};
        tt_val s2 = {0};
        if (!broadcast(C, both, 2, &s2))
            return NULL;
        if (strcmp(acc->pad[0], shape.pad[0]) || strcmp(acc->pad[1], shape.pad[1])) {
            tt_fail_expr(C, e,
                         "gemm's accumulator pads to [%s, %s] but the product to [%s, %s]; "
                         "allocate it [M, N] of a [M, K] and b [K, N]",
                         acc->pad[0], acc->pad[1], shape.pad[0], shape.pad[1]);
            return NULL;
        }
        shape = s2;
    }
    const char *py;
    if (tc) {
        if (a->dt != in)
            pa = tt_strf(C, "%s.to(%s)", pa, tt_dtype_tl(in));
        if (b->dt != in)
            pb = tt_strf(C, "%s.to(%s)", pb, tt_dtype_tl(in));
        const char *prec =
            in == AKG_DTYPE_F32
                ? tt_strf(C, ", input_precision=\"%s\"",
                          C->target->f32_dot_precision ? C->target->f32_dot_precision : "ieee")
                : "";
        long tile = atol(a->pad[0]) * atol(b->pad[1]);
        if (tile > C->dot_tile)
            C->dot_tile = tile;
        if (acc && acc->dt == AKG_DTYPE_F32)
            py = tt_strf(C, "tl.dot(%s, %s, %s%s)", pa, pb, acc->py, prec);
        else if (acc)
            py = tt_strf(C, "(%s.to(tl.float32) + tl.dot(%s, %s%s)).to(%s)", acc->py, pa, pb, prec,
                         tt_dtype_tl(out_dt));
        else
            py = tt_strf(C, "tl.dot(%s, %s%s)", pa, pb, prec);
    } else {
        const char *t = tt_dtype_tl(cd);
        const char *prod = tt_strf(
            C, "tl.sum(%s.to(%s)[:, :, None] * %s.to(%s)[None, :, :], axis=1)", pa, t, pb, t);
        if (acc)
            py = tt_strf(C, "(%s.to(%s) + %s).to(%s)", acc->py, t, prod, tt_dtype_tl(out_dt));
        else
            py = prod;
    }
    tt_val *v = copy_val(C, &shape, emit_temp(C, py));
    if (v)
        v->dt = out_dt;
    return v;
}

/* cumsum / cumprod of a tile along one axis (inclusive or exclusive, forward or reverse):
 * tl.cumsum / tl.cumprod in the accumulation dtype (f16/bf16 in f32, small integers in i32),
 * the padding past the valid extent set to the identity (a reverse scan starts there). An
 * exclusive scan is a scan of pairs (running value, value before the element): the inclusive
 * sum minus the element would cancel (x = [1, 1e8] in f32 gives 0 for 1) and turn an inf into
 * NaN, the inclusive product over the element would divide by zero. */
static tt_val *scan(tt_ctx *C, const akg_sketch_expr *e, size_t n, bool prod)
{
    const char *fn = akg_sketch_expr_text(e);
    tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
    if (!x)
        return NULL;
    if (x->rank == 0) {
        tt_fail_expr(C, e, "%s of a scalar: scan a tile", fn);
        return NULL;
    }
    const akg_sketch_expr *ax = arg_at(e, n, 1, "axis");
    int64_t a = -1;
    if (ax && !tt_const_value(C, ax, &a)) {
        tt_fail_expr(C, ax, "a scan's axis must be a constant");
        return NULL;
    }
    if (a < 0)
        a += x->rank;
    if (a < 0 || a >= x->rank) {
        tt_fail_expr(C, e, "%s: axis out of range for a tile of rank %d", fn, x->rank);
        return NULL;
    }
    bool rev = flag_of(C, e, "reverse"), excl = flag_of(C, e, "exclusive");
    akg_dtype acc = x->dt;
    if (acc == AKG_DTYPE_F16 || acc == AKG_DTYPE_BF16)
        acc = AKG_DTYPE_F32;
    else if (acc == AKG_DTYPE_BOOL || acc == AKG_DTYPE_I8 || acc == AKG_DTYPE_I16 ||
             acc == AKG_DTYPE_U8)
        acc = AKG_DTYPE_I32;
    tt_val *xa = x;
    if (acc != x->dt) {
        xa = copy_val(C, x, emit_temp(C, tt_strf(C, "%s.to(%s)", x->py, tt_dtype_tl(acc))));
        if (!xa)
            return NULL;
        xa->dt = acc;
    }
    const char *m = masked(C, xa, (int)a, prod ? "1" : "0");
    const char *R = rev ? "True" : "False", *py;
    if (excl) {
        const char *pair = emit_temp(
            C, tt_strf(C, "tl.associative_scan((%s, tl.zeros_like(%s)%s), %d, %s, reverse=%s)", m,
                       m, prod ? " + 1" : "", (int)a, prod ? "_akg_excl_mul" : "_akg_excl_add", R));
        py = tt_strf(C, "%s[1]", pair);
    } else {
        py =
            tt_strf(C, "tl.%s(%s, axis=%d, reverse=%s)", prod ? "cumprod" : "cumsum", m, (int)a, R);
    }
    if (acc != x->dt)
        py = tt_strf(C, "(%s).to(%s)", emit_temp(C, py), tt_dtype_tl(x->dt));
    return copy_val(C, x, emit_temp(C, py));
}

static tt_val *call_value(tt_ctx *C, const akg_sketch_expr *e, size_t n)
{
    const char *fn = akg_sketch_expr_text(e);
    if (!strcmp(fn, "gemm") || !strcmp(fn, "dot"))
        return gemm_value(C, e, n, !strcmp(fn, "dot"));
    if (!strcmp(fn, "cast")) {
        tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
        return tt_cast(C, x, dtype_arg(arg_at(e, n, 1, "dtype")), e);
    }
    static const char *reds[][2] = {{"reduce_sum", "sum"},   {"reduce_max", "max"},
                                    {"reduce_min", "min"},   {"reduce_mean", "mean"},
                                    {"reduce_prod", "prod"}, {"argmax", "argmax"},
                                    {"argmin", "argmin"}};
    for (size_t i = 0; i < sizeof reds / sizeof reds[0]; i++)
        if (!strcmp(fn, reds[i][0])) {
            tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
            return reduce(C, reds[i][1], x, arg_at(e, n, 1, "axis"), keepdim_of(C, e), e);
        }
    if (!strcmp(fn, "cumsum") || !strcmp(fn, "cumprod") || !strcmp(fn, "local_cumsum") ||
        !strcmp(fn, "local_cumprod"))
        return scan(C, e, n, strstr(fn, "cumprod") != NULL);
    if (!strcmp(fn, "softmax") || !strcmp(fn, "log_softmax")) {
        tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
        const akg_sketch_expr *ax = arg_at(e, n, 1, "axis");
        if (!x)
            return NULL;
        if (!ax) { /* the last axis */
            if (x->rank == 0) {
                tt_fail_expr(C, e, "softmax of a scalar");
                return NULL;
            }
        }
        int64_t a = x->rank - 1;
        if (ax && !tt_const_value(C, ax, &a)) {
            tt_fail_expr(C, ax, "a softmax axis must be a constant");
            return NULL;
        }
        if (a < 0)
            a += x->rank;
        tt_val *m = reduce_axis(C, "max", x, (int)a, true);
        tt_val *args[2] = {x, m};
        tt_val *d = apply_named(C, "sub", args, 2);
        tt_val *ex = d ? apply_named(C, "exp", &d, 1) : NULL;
        tt_val *s = ex ? reduce_axis(C, "sum", ex, (int)a, true) : NULL;
        if (!s)
            return NULL;
        if (!strcmp(fn, "softmax")) {
            tt_val *q[2] = {ex, s};
            return apply_named(C, "div", q, 2);
        }
        tt_val *ls = apply_named(C, "log", &s, 1);
        tt_val *q[2] = {d, ls};
        return ls ? apply_named(C, "sub", q, 2) : NULL;
    }
    if (!strcmp(fn, "arange")) {
        const akg_sketch_expr *start = n >= 2 ? akg_sketch_expr_item(e, 0) : NULL;
        const akg_sketch_expr *stop = n >= 2 ? akg_sketch_expr_item(e, 1) : arg_at(e, n, 0, "stop");
        if (!stop || (start && !tt_is_index(C, start)) || !tt_is_index(C, stop)) {
            tt_fail_expr(C, e, "arange takes integer bounds");
            return NULL;
        }
        tt_val *v = tt_new_val(C, 1, AKG_DTYPE_I32, NULL);
        if (!v || !tt_dim_range(C, start, stop, &v->pad[0], &v->ext[0]))
            return NULL;
        v->py = emit_temp(C, tt_strf(C, "(%s + tl.arange(0, %s)).to(tl.int32)",
                                     start ? tt_index(C, start, false) : "0", v->pad[0]));
        return v;
    }
    if (!strcmp(fn, "fill") || !strcmp(fn, "zeros")) {
        bool z = !strcmp(fn, "zeros");
        akg_dtype dt = dtype_arg(akg_sketch_expr_kwarg(e, "dtype"));
        if (!dt)
            dt = dtype_arg(arg_at(e, n, z ? 1 : 2, NULL));
        if (!dt)
            dt = AKG_DTYPE_F32;
        const char *value = "0";
        if (!z) {
            tt_val *fv = tt_value(C, arg_at(e, n, 1, "value"));
            if (!fv)
                return NULL;
            if (fv->rank) {
                tt_fail_expr(C, e, "fill takes a scalar value");
                return NULL;
            }
            value = fv->py;
        }
        return shaped(C, arg_at(e, n, 0, "shape"), dt, value);
    }
    if (!strcmp(fn, "gather")) {
        tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
        tt_val *idx = tt_value(C, arg_at(e, n, 1, "index"));
        if (!x || !idx)
            return NULL;
        if (x->rank != 1 || idx->rank != 1) {
            tt_fail_expr(C, e, "gather is lowered for rank-1 tiles only (got ranks %d and %d)",
                         x->rank, idx->rank);
            return NULL;
        }
        const char *valid =
            x->ext[0] ? tt_strf(C, " & (tl.arange(0, %s)[None, :] < %s)", x->pad[0], x->ext[0])
                      : "";
        tt_val *v = copy_val(C, idx, NULL);
        if (!v)
            return NULL;
        v->dt = x->dt;
        v->py = emit_temp(
            C, tt_strf(C,
                       "tl.sum(tl.where((tl.arange(0, %s)[None, :] == %s[:, None])%s, %s[None, "
                       ":], 0), axis=1)",
                       x->pad[0], idx->py, valid, x->py));
        return v;
    }
    if (!strcmp(fn, "transpose")) {
        tt_val *x = tt_value(C, arg_at(e, n, 0, "x"));
        if (!x)
            return NULL;
        if (x->rank != 2 || n > 1) {
            tt_fail_expr(C, e, "transpose is lowered for rank-2 tiles without a permutation only");
            return NULL;
        }
        tt_val *v = swap_axes(C, x);
        return v;
    }
    const tt_op *op = tt_op_find(fn);
    if (!op) {
        tt_fail_expr(C, e,
                     "'%s' is not lowered by the %s emitter yet (milestone 1: "
                     "elementwise operations, casts, where, comparisons, reductions, arange, "
                     "fill, gather of rank-1 tiles, softmax, cumsum, cumprod)",
                     fn, C->target->emitter);
        return NULL;
    }
    int nargs = tt_op_nargs(op);
    if ((int)n > nargs) {
        tt_fail_expr(C, e, "'%s' takes at most %d operands", fn, nargs);
        return NULL;
    }
    tt_val *args[3] = {0};
    for (int i = 0; i < (int)n; i++) {
        args[i] = tt_value(C, akg_sketch_expr_item(e, (size_t)i));
        if (!args[i])
            return NULL;
    }
    static const char *slot1[] = {"slope", "negative_slope", "alpha", "beta", "lo",
                                  "min",   "min_val",        "b",     "y",    "other"};
    static const char *slot2[] = {"threshold", "hi", "max", "max_val", "c"};
    for (int i = (int)n; i < nargs; i++) {
        const akg_sketch_expr *kv = NULL;
        const char *const *names = i == 1 ? slot1 : slot2;
        size_t nn = i == 1 ? sizeof slot1 / sizeof slot1[0] : sizeof slot2 / sizeof slot2[0];
        for (size_t k = 0; k < nn && !kv; k++)
            kv = akg_sketch_expr_kwarg(e, names[k]);
        if (kv) {
            args[i] = tt_value(C, kv);
        } else if (tt_op_default(op, i)) {
            args[i] = literal(C, tt_op_default(op, i));
        } else {
            tt_fail_expr(C, e, "'%s' needs %d operands", fn, nargs);
            return NULL;
        }
        if (!args[i])
            return NULL;
    }
    return apply_op(C, op, args, nargs);
}

static const char *binary_op_name(const char *op)
{
    static const char *map[][2] = {{"+", "add"},
                                   {"-", "sub"},
                                   {"*", "mul"},
                                   {"/", "div"},
                                   {"<", "lt"},
                                   {"<=", "le"},
                                   {">", "gt"},
                                   {">=", "ge"},
                                   {"==", "eq"},
                                   {"!=", "ne"},
                                   {"and", "logical_and"},
                                   {"or", "logical_or"},
                                   {"&", "bitand"},
                                   {"|", "bitor"},
                                   {"^", "bitxor"},
                                   {"//", "floordiv"},
                                   {"%", "mod"}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (!strcmp(map[i][0], op))
            return map[i][1];
    return NULL;
}

/* A tile viewed with unit dims inserted, `t[:, None]`, `t[None, :]` (NumPy's expansion: every
 * ':' a whole dim of t in order, every None a new dim of extent 1), or NULL without a failure
 * when e is another subscript (the caller says what it is not). */
static tt_val *expand_dims(tt_ctx *C, const akg_sketch_expr *e)
{
    size_t n = akg_sketch_expr_item_count(e);
    int colons = 0;
    for (size_t i = 0; i < n; i++) {
        const akg_sketch_expr *it = akg_sketch_expr_item(e, i);
        akg_sketch_expr_kind k = akg_sketch_expr_get_kind(it);
        if (k == AKG_SKETCH_EXPR_SLICE && !akg_sketch_slice_start(it) &&
            !akg_sketch_slice_stop(it) && !akg_sketch_slice_step(it))
            colons++;
        else if (k != AKG_SKETCH_EXPR_NONE)
            return NULL;
    }
    tt_val *x = tt_value(C, akg_sketch_expr_base(e));
    if (!x)
        return NULL;
    if (x->rank == 0) {
        tt_fail_expr(C, e, "'%s' expands a scalar: use the scalar as it is (it broadcasts)",
                     tt_expr_text(C, e));
        return NULL;
    }
    if (colons != x->rank || n > TT_MAXR) {
        tt_fail_expr(C, e,
                     "'%s' keeps %d dims of a rank-%d tile: write one ':' per dim of the tile "
                     "and None for each new dim",
                     tt_expr_text(C, e), colons, x->rank);
        return NULL;
    }
    tt_val *v = copy_val(C, x, NULL);
    if (!v)
        return NULL;
    v->rank = (int)n;
    char idx[64] = "";
    size_t w = 0;
    for (size_t i = 0, d = 0; i < n && w + 8 < sizeof idx; i++) {
        bool keep = akg_sketch_expr_get_kind(akg_sketch_expr_item(e, i)) == AKG_SKETCH_EXPR_SLICE;
        v->pad[i] = keep ? x->pad[d] : "1";
        v->ext[i] = keep ? x->ext[d] : NULL;
        d += keep;
        w += (size_t)snprintf(idx + w, sizeof idx - w, "%s%s", i ? ", " : "", keep ? ":" : "None");
    }
    v->py = emit_temp(C, tt_strf(C, "%s[%s]", x->py, idx));
    return v;
}

tt_val *tt_value(tt_ctx *C, const akg_sketch_expr *e)
{
    if (!e || C->status)
        return NULL;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    if (k == AKG_SKETCH_EXPR_FLOAT) {
        double f = akg_sketch_expr_float(e);
        if (f != f)
            return literal(C, "float(\"nan\")");
        if (f > 1e308 || f < -1e308)
            return literal(C, f > 0 ? "float(\"inf\")" : "float(\"-inf\")");
        const char *s = tt_strf(C, "%.17g", f);
        return literal(C, strpbrk(s, ".e") ? s : tt_strf(C, "%s.0", s));
    }
    if (k == AKG_SKETCH_EXPR_BOOL)
        return literal(C, akg_sketch_expr_int(e) ? "True" : "False");
    if (k == AKG_SKETCH_EXPR_INT)
        return literal(C, tt_strf(C, "%lld", (long long)akg_sketch_expr_int(e)));
    if (k == AKG_SKETCH_EXPR_NAME) {
        const char *name = akg_sketch_expr_text(e);
        tt_name *n = tt_lookup(C, name);
        if (!n) {
            tt_fail_expr(C, e, "'%s' is not defined where the kernel reads it", name);
            return NULL;
        }
        switch (n->kind) {
        case TN_TILE:
            if (!n->val) {
                tt_fail_expr(C, e, "tile '%s' is read before anything is loaded into it", name);
                return NULL;
            }
            return n->val;
        case TN_PARAM: {
            tt_val *v = tt_new_val(C, 0, n->dt, n->py);
            return v;
        }
        case TN_CONST:
            if (n->dt == AKG_DTYPE_F64)
                return literal(C, n->py);
            /* fall through */
        case TN_SYMBOL:
        case TN_HOSTINT:
        case TN_KINT:
        case TN_KLOOP: {
            int64_t c;
            if (tt_const_value(C, e, &c))
                return literal(C, tt_strf(C, "%lld", (long long)c));
            tt_val *v = tt_new_val(C, 0, AKG_DTYPE_I64, n->py);
            if (v)
                v->index = true;
            return v;
        }
        case TN_SCRATCH:
            return tt_scratch_value(C, n);
        default:
            tt_fail_expr(C, e, "tensor '%s' used as a value: load a region of it into a tile first",
                         name);
            return NULL;
        }
    }
    if (tt_is_index(C, e)) {
        int64_t c;
        if (tt_const_value(C, e, &c))
            return literal(C, tt_strf(C, "%lld", (long long)c));
        tt_val *v = tt_new_val(C, 0, AKG_DTYPE_I64, tt_strf(C, "(%s)", tt_index(C, e, false)));
        if (v)
            v->index = true;
        return v;
    }
    if (k == AKG_SKETCH_EXPR_UNARY) {
        tt_val *x = tt_value(C, akg_sketch_expr_lhs(e));
        if (!x)
            return NULL;
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "+"))
            return x;
        if (x->literal && !strcmp(op, "-"))
            return literal(C, tt_strf(C, "(-%s)", x->py));
        return apply_named(C,
                           !strcmp(op, "-")   ? "neg"
                           : !strcmp(op, "~") ? "invert"
                                              : "logical_not",
                           &x, 1);
    }
    if (k == AKG_SKETCH_EXPR_BINARY) {
        const char *name = binary_op_name(akg_sketch_expr_text(e));
        if (!name) {
            tt_fail_expr(C, e, "operator '%s' on tiles is not lowered yet",
                         akg_sketch_expr_text(e));
            return NULL;
        }
        tt_val *args[2] = {tt_value(C, akg_sketch_expr_lhs(e)),
                           tt_value(C, akg_sketch_expr_rhs(e))};
        if (!args[0] || !args[1])
            return NULL;
        return apply_named(C, name, args, 2);
    }
    if (k == AKG_SKETCH_EXPR_CALL)
        return call_value(C, e, akg_sketch_expr_item_count(e));
    if (k == AKG_SKETCH_EXPR_SUBSCRIPT) {
        tt_val *v = expand_dims(C, e);
        if (v || C->status)
            return v;
    }
    tt_fail_expr(C, e, "'%s' is not a value the %s emitter lowers", tt_expr_text(C, e),
                 C->target->emitter);
    return NULL;
}

tt_val *tt_call_value(tt_ctx *C, const akg_sketch_expr *call, size_t n_items)
{
    return call_value(C, call, n_items);
}
