/*
 * lw_tile.c: the tile operations that are not elementwise: reductions,
 * scans, gather and GEMM, each materialised into a buffer.
 *
 * Reductions iterate their operand in row-major order. When the reduced axes
 * are the innermost ones, each output element is a scalar accumulation whose
 * innermost loop is an `omp simd reduction`; otherwise the output row is
 * updated element by element, vectorised along the kept innermost axis. Max
 * and min propagate NaN like PyTorch (a NaN seen anywhere makes the result
 * NaN), argmax/argmin return the first index of the extreme value (a NaN
 * counting as the extreme), as the language reference says.
 *
 * GEMM: when the accumulator is a register tile (a "fastest" [MR, NR] tile
 * with NR a multiple of the vector width), `gemm` is an inline micro-kernel:
 * the accumulator stays in vector registers for the whole K loop, each k
 * loads one row of B as vectors and broadcasts MR elements of A. Operands are
 * read where the sketch put them: packed panels (buffers the sketch loaded in
 * the "medium"/"fast" tier, laid out as panels because the sketch reads them
 * in MR-row or NR-column slices), or regions of tensors read in place. Views
 * that could leave their base get a run-time test: the micro-kernel runs when
 * the whole tile is inside, the general loop otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

/* ---- reductions ---- */

typedef struct {
    const char *op;
    lw_val *x, *out;
    bool red[LW_MAXR];
    int split;        /* dims [0, split) outer, [split, rank) the reduced tail */
    const char *idx_outer[LW_MAXR];
    const char *acc, *nan, *aidx; /* scalar accumulator names */
    bool arg;         /* argmax/argmin */
    bool is_max;      /* max-like comparison */
    const char *ct;   /* accumulation computation type */
    const char *count;
} red_job;

static bool is_arg(const char *op)
{
    return !strcmp(op, "argmax") || !strcmp(op, "argmin") || !strcmp(op, "reduce_argmax");
}

static const char *identity(lw_ctx *L, const char *op, const char *ct)
{
    if (!strcmp(op, "reduce_sum") || !strcmp(op, "reduce_mean"))
        return lw_float_lit(L, 0, ct);
    if (!strcmp(op, "reduce_prod"))
        return lw_float_lit(L, 1, ct);
    bool mx = !strcmp(op, "reduce_max") || !strcmp(op, "argmax") || !strcmp(op, "reduce_argmax");
    if (!strcmp(ct, "float") || !strcmp(ct, "double"))
        return mx ? lw_strf(L, "-std::numeric_limits<%s>::infinity()", ct)
                  : lw_strf(L, "std::numeric_limits<%s>::infinity()", ct);
    return mx ? lw_strf(L, "std::numeric_limits<%s>::lowest()", ct)
              : lw_strf(L, "std::numeric_limits<%s>::max()", ct);
}

/* out index (keepdim or not) from the operand's index */
static void out_index(red_job *j, const char *const *xidx, const char **oidx)
{
    int o = 0;
    bool keep = j->out->rank == j->x->rank;
    for (int d = 0; d < j->x->rank; d++) {
        if (j->red[d]) {
            if (keep)
                oidx[o++] = "0";
        } else {
            oidx[o++] = xidx[d];
        }
    }
}

static const char *out_lhs(lw_ctx *L, lw_val *b, const char *const *idx)
{
    return lw_strf(L, "%s[%s]", b->ptr, lw_addr(L, b, idx));
}

/* one accumulation step of acc (scalar or element) with value x */
static void accumulate(lw_ctx *L, red_job *j, const char *acc, const char *x, const char *pos,
                       const char *accidx, const char *nanflag)
{
    const char *op = j->op;
    if (!strcmp(op, "reduce_sum") || !strcmp(op, "reduce_mean"))
        lw_line(L, "%s += %s;", acc, x);
    else if (!strcmp(op, "reduce_prod"))
        lw_line(L, "%s *= %s;", acc, x);
    else if (j->arg) {
        /* the first index of the extreme; a NaN is the extreme and the first one wins */
        lw_line(L, "if ((%s %s %s) || (%s != %s && %s == %s)) { %s = %s; %s = %s; }", x,
                j->is_max ? ">" : "<", acc, x, x, acc, acc, acc, x, accidx, pos);
    } else {
        lw_line(L, "%s = %s %s %s ? %s : %s;", acc, x, j->is_max ? ">" : "<", acc, x, acc);
        if (nanflag)
            lw_line(L, "%s |= (int)(%s != %s);", nanflag, x, x);
    }
}

static void red_inner_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    red_job *j = user;
    const char *xidx[LW_MAXR];
    for (int d = 0; d < j->split; d++)
        xidx[d] = j->idx_outer[d];
    for (int d = j->split; d < j->x->rank; d++)
        xidx[d] = idx[d - j->split];
    const char *x = lw_elem(L, j->x, xidx, guarded);
    if (strcmp(lw_comptype(j->x->dt), j->ct))
        x = lw_strf(L, "akg_cvt<%s>(%s)", j->ct, x);
    /* the position along the reduced tail, flattened */
    const char *pos = NULL;
    if (j->arg) {
        for (int d = j->split; d < j->x->rank; d++)
            pos = pos ? lw_strf(L, "(%s * %s + %s)", pos, j->x->dim[d].c, idx[d - j->split])
                      : idx[d - j->split];
    }
    accumulate(L, j, j->acc, x, pos, j->aidx, j->nan);
}

/* Reductions of one shape over the same trailing axes, computed in one nest (siblings). */
#define RED_GROUP_MAX 8
typedef struct {
    red_job *j[RED_GROUP_MAX];
    int n;
} red_group;

static void group_inner_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    red_group *g = user;
    for (int i = 0; i < g->n; i++)
        red_inner_body(L, g->j[i], idx, guarded);
}

/* Declares j's scalar accumulator(s) for one output element; returns its reduction clause
 * (NULL: the loop cannot take one). */
static const char *red_open(lw_ctx *L, red_job *j, const char *const *idx)
{
    for (int d = 0; d < j->split; d++)
        j->idx_outer[d] = idx[d];
    j->acc = lw_fresh(L, "acc");
    j->nan = j->arg || (strcmp(j->op, "reduce_max") && strcmp(j->op, "reduce_min"))
                 ? NULL
                 : lw_fresh(L, "nan");
    j->aidx = j->arg ? lw_fresh(L, "at") : NULL;
    lw_line(L, "%s %s = %s;", j->ct, j->acc, identity(L, j->op, j->ct));
    if (j->nan) /* an int, not a bool: a bool or-reduction vectorises badly */
        lw_line(L, "int %s = 0;", j->nan);
    if (j->aidx)
        lw_line(L, "int64_t %s = 0;", j->aidx);
    if (!strcmp(j->op, "reduce_sum") || !strcmp(j->op, "reduce_mean"))
        return lw_strf(L, "reduction(+ : %s)", j->acc);
    if (!strcmp(j->op, "reduce_prod"))
        return lw_strf(L, "reduction(* : %s)", j->acc);
    if (!j->arg)
        return lw_strf(L, "reduction(%s : %s) reduction(| : %s)", j->is_max ? "max" : "min",
                       j->acc, j->nan);
    return NULL;
}

/* Writes j's accumulated value into its output element. */
static void red_close(lw_ctx *L, red_job *j)
{
    const char *res = j->acc;
    if (j->nan)
        res = lw_strf(L, "(%s ? std::numeric_limits<%s>::quiet_NaN() : %s)", j->nan, j->ct,
                      j->acc);
    if (j->arg)
        res = j->aidx;
    else if (!strcmp(j->op, "reduce_mean"))
        res = lw_strf(L, "%s / (%s)(%s)", res, j->ct, j->count);
    const char *oidx[LW_MAXR];
    out_index(j, j->idx_outer, oidx);
    lw_line(L, "%s = %s;", out_lhs(L, j->out, oidx),
            strcmp(lw_comptype(j->out->dt), j->ct) && !j->arg
                ? lw_strf(L, "akg_cvt<%s>(%s)", lw_ctype(j->out->dt), res)
                : res);
}

/* One output element of every reduction of the group (no outer dim is reduced): scalar
 * accumulators over the reduced tail, vectorised with reduction clauses. */
static void red_outer_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    (void)guarded;
    red_group *g = user;
    const char *clause = "";
    bool all = true;
    lw_val *reads[RED_GROUP_MAX];
    for (int i = 0; i < g->n; i++) {
        const char *c = red_open(L, g->j[i], idx);
        all &= c != NULL;
        if (c)
            clause = *clause ? lw_strf(L, "%s %s", clause, c) : c;
        reads[i] = g->j[i]->x;
    }
    red_job *j0 = g->j[0];
    lw_dim tail[LW_MAXR];
    for (int d = j0->split; d < j0->x->rank; d++)
        tail[d - j0->split] = j0->x->dim[d];
    const char *save = L->simd_clause;
    L->simd_clause = all ? clause : NULL;
    bool simd = L->vectorize && all;
    lw_emit_nest(L, j0->x->rank - j0->split, tail, NULL, NULL, reads, g->n, simd,
                 group_inner_body, g);
    L->simd_clause = save;
    for (int i = 0; i < g->n; i++)
        red_close(L, g->j[i]);
}

/* the kept innermost axis: update the output row element by element */
static void red_rowwise_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    red_job *j = user;
    const char *x = lw_elem(L, j->x, idx, guarded);
    if (strcmp(lw_comptype(j->x->dt), j->ct))
        x = lw_strf(L, "akg_cvt<%s>(%s)", j->ct, x);
    const char *oidx[LW_MAXR];
    out_index(j, idx, oidx);
    const char *lhs = out_lhs(L, j->out, oidx);
    if (j->arg) {
        /* out holds the index; the running extreme lives in a companion buffer */
        const char *vlhs = lw_strf(L, "%s_v[%s]", j->out->ptr, lw_addr(L, j->out, oidx));
        const char *pos = NULL;
        for (int d = 0; d < j->x->rank; d++)
            if (j->red[d])
                pos = pos ? lw_strf(L, "(%s * %s + %s)", pos, j->x->dim[d].c, idx[d]) : idx[d];
        const char *c = lw_fresh(L, "better");
        lw_line(L, "const bool %s = (%s %s %s) || (%s != %s && %s == %s);", c, x,
                j->is_max ? ">" : "<", vlhs, x, x, vlhs, vlhs);
        lw_line(L, "%s = %s ? %s : %s;", vlhs, c, x, vlhs);
        lw_line(L, "%s = %s ? (%s)%s : %s;", lhs, c, lw_ctype(j->out->dt), pos, lhs);
        return;
    }
    accumulate(L, j, lhs, x, NULL, NULL, NULL);
    if (!strcmp(j->op, "reduce_max") || !strcmp(j->op, "reduce_min"))
        lw_line(L, "%s_n[%s] |= (int32_t)(%s != %s);", j->out->ptr, lw_addr(L, j->out, oidx), x,
                x);
}

/* Sets j up for op(x) over axes and allocates its output. */
static lw_val *red_setup(lw_ctx *L, red_job *j, const char *op, lw_val *x, const int *axes,
                         int n_axes, bool keepdim, lw_dim *od, int *orank)
{
    j->op = op;
    j->x = x;
    j->arg = is_arg(op);
    j->is_max = !strcmp(op, "reduce_max") || !strcmp(op, "argmax") || !strcmp(op, "reduce_argmax");
    for (int i = 0; i < n_axes; i++)
        j->red[axes[i]] = true;
    if (n_axes == 0)
        for (int d = 0; d < x->rank; d++)
            j->red[d] = true;
    /* result dtype: argmax/argmin give i32 indices; sums of integers and bools give i64; mean
     * of integers f32 */
    akg_dtype odt = x->dt;
    if (j->arg)
        odt = AKG_DTYPE_I32;
    else if (!lw_is_float(x->dt) && !strcmp(op, "reduce_mean"))
        odt = AKG_DTYPE_F32;
    else if (!lw_is_float(x->dt) && (!strcmp(op, "reduce_sum") || !strcmp(op, "reduce_prod")))
        odt = AKG_DTYPE_I64;
    j->ct = lw_comptype(j->arg ? x->dt : odt);
    const char *count = NULL;
    *orank = 0;
    for (int d = 0; d < x->rank; d++) {
        if (j->red[d]) {
            count = count ? lw_strf(L, "%s * %s", count, x->dim[d].c) : x->dim[d].c;
            if (keepdim)
                od[(*orank)++] = lw_dim_const(L, 1);
        } else {
            od[(*orank)++] = x->dim[d];
        }
    }
    j->count = count ? count : "1";
    j->out = lw_buffer(L, odt, *orank, od, TIER_FAST, "r");
    int split = x->rank;
    while (split > 0 && j->red[split - 1])
        split--;
    j->split = split;
    return j->out;
}

/* Whether j's reduced axes are its trailing ones (the scalar-accumulator path). */
static bool red_trailing(const red_job *j)
{
    if (j->split >= j->x->rank)
        return false;
    for (int d = 0; d < j->split; d++)
        if (j->red[d])
            return false;
    return true;
}

lw_val *lw_reduce(lw_ctx *L, const char *op, lw_val *x, const int *axes, int n_axes,
                  bool keepdim)
{
    if (!lw_ok(L) || !x)
        return NULL;
    red_job *j = lw_alloc(L, sizeof *j);
    if (!j)
        return NULL;
    x = lw_hoist(L, x);
    lw_dim od[LW_MAXR];
    int orank;
    lw_val *out = red_setup(L, j, op, x, axes, n_axes, keepdim, od, &orank);
    if (!out)
        return NULL;
    lw_keep_scope ks;
    lw_keep_begin(L, &ks, x->rank, x->dim);
    if (x->rank == 0) {
        lw_line(L, "%s[0] = %s;", out->ptr, lw_elem(L, x, NULL, true));
        lw_keep_end(L, &ks, true);
        return out;
    }
    if (red_trailing(j)) {
        red_group *g = lw_alloc(L, sizeof *g);
        if (!g)
            return NULL;
        g->j[0] = j;
        g->n = 1;
        lw_val *reads[1] = {x};
        lw_emit_nest_outer(L, j->split, x->dim, reads, 1, red_outer_body, g);
        lw_keep_end(L, &ks, true);
        return out;
    }
    /* a kept axis is innermost (or reduced axes are spread): initialise, then update */
    bool nk;
    int64_t nv;
    const char *n = lw_strf(L, "(int64_t)(%s)", lw_count(L, orank, od, &nk, &nv));
    lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s[q] = %s;", n, out->ptr,
            j->arg ? "0" : identity(L, op, j->ct));
    if (j->arg) {
        lw_val *vals = lw_buffer(L, x->dt, orank, od, TIER_FAST, "rv");
        if (!vals)
            return NULL;
        lw_line(L, "%s *%s_v = %s;", lw_ctype(x->dt), out->ptr, vals->ptr);
        lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s_v[q] = %s;", n, out->ptr,
                identity(L, op, j->ct));
    }
    bool mm = !strcmp(op, "reduce_max") || !strcmp(op, "reduce_min");
    if (mm) {
        lw_val *flags = lw_buffer(L, AKG_DTYPE_I32, orank, od, TIER_FAST, "rn");
        if (!flags)
            return NULL;
        lw_line(L, "int32_t *%s_n = %s;", out->ptr, flags->ptr);
        lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s_n[q] = 0;", n, out->ptr);
    }
    lw_val *reads[1] = {x};
    lw_emit_nest(L, x->rank, x->dim, NULL, NULL, reads, 1, L->vectorize && !j->arg,
                 red_rowwise_body, j);
    lw_keep_end(L, &ks, true);
    if (mm)
        lw_line(L, "for (int64_t q = 0; q < %s; ++q) if (%s_n[q]) %s[q] = "
                   "std::numeric_limits<%s>::quiet_NaN();",
                n, out->ptr, out->ptr, j->ct);
    if (!strcmp(op, "reduce_mean"))
        lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s[q] /= (%s)(%s);", n, out->ptr, j->ct,
                j->count);
    out->version++;
    return out;
}

bool lw_reduce_group(lw_ctx *L, const char *const *ops, lw_val *const *xs, int n,
                     const int *axes, int n_axes, bool keepdim, lw_val **outs)
{
    if (!lw_ok(L) || n < 1 || n > RED_GROUP_MAX)
        return false;
    for (int i = 0; i < n; i++) {
        if (!xs[i] || xs[i]->rank != xs[0]->rank || xs[i]->rank == 0 || is_arg(ops[i]))
            return false;
        for (int d = 0; d < xs[0]->rank; d++)
            if (!lw_dim_equal(xs[i]->dim[d], xs[0]->dim[d]))
                return false;
    }
    red_group *g = lw_alloc(L, sizeof *g);
    if (!g)
        return false;
    for (int i = 0; i < n; i++) {
        red_job *j = lw_alloc(L, sizeof *j);
        if (!j)
            return false;
        /* the axes alone decide the path: check it before anything is emitted */
        for (int a = 0; a < n_axes; a++)
            j->red[axes[a]] = true;
        if (n_axes == 0)
            for (int d = 0; d < xs[i]->rank; d++)
                j->red[d] = true;
        j->x = xs[i];
        int split = xs[i]->rank;
        while (split > 0 && j->red[split - 1])
            split--;
        j->split = split;
        if (!red_trailing(j))
            return false;
        memset(j, 0, sizeof *j);
        g->j[i] = j;
    }
    g->n = n;
    lw_val *reads[RED_GROUP_MAX];
    for (int i = 0; i < n; i++) {
        lw_val *x = lw_hoist(L, xs[i]);
        lw_dim od[LW_MAXR];
        int orank;
        outs[i] = red_setup(L, g->j[i], ops[i], x, axes, n_axes, keepdim, od, &orank);
        if (!outs[i])
            return false;
        reads[i] = x;
    }
    lw_val *x0 = g->j[0]->x;
    lw_keep_scope ks;
    lw_keep_begin(L, &ks, x0->rank, x0->dim);
    lw_emit_nest_outer(L, g->j[0]->split, x0->dim, reads, n, red_outer_body, g);
    lw_keep_end(L, &ks, true);
    for (int i = 0; i < n; i++)
        outs[i]->version++;
    return lw_ok(L);
}

/* ---- scans ---- */

typedef struct {
    bool prod, reverse, exclusive;
    lw_val *x, *out;
    int axis;
    const char *ct;
    const char *outer[LW_MAXR];
    const char *ia;
    const char *acc;
} scan_job;

static void scan_inner_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    scan_job *j = user;
    const char *xi[LW_MAXR];
    int r = j->x->rank;
    for (int d = 0; d < j->axis; d++)
        xi[d] = j->outer[d];
    xi[j->axis] = j->ia;
    for (int d = j->axis + 1; d < r; d++)
        xi[d] = idx[d - j->axis - 1];
    const char *x = lw_elem(L, j->x, xi, guarded);
    if (strcmp(lw_comptype(j->x->dt), j->ct))
        x = lw_strf(L, "akg_cvt<%s>(%s)", j->ct, x);
    /* the running value of this column: a scalar for an innermost axis, else an array */
    const char *acc = r - j->axis - 1 == 0 ? j->acc
                                           : lw_strf(L, "%s[%s]", j->acc,
                                                     lw_addr(L, j->out, xi) /* same layout */);
    if (r - j->axis - 1 > 0) {
        /* index the accumulator by the inner dims only */
        const char *a = NULL;
        for (int d = j->axis + 1; d < r; d++) {
            const char *term = d == r - 1 ? idx[d - j->axis - 1]
                                          : lw_strf(L, "%s * %s", idx[d - j->axis - 1],
                                                    j->out->stride[d]);
            a = a ? lw_strf(L, "%s + %s", a, term) : term;
        }
        acc = lw_strf(L, "%s[%s]", j->acc, a);
    }
    const char *lhs = lw_strf(L, "%s[%s]", j->out->ptr, lw_addr(L, j->out, xi));
    if (j->exclusive) {
        lw_line(L, "%s = %s;", lhs, acc);
        lw_line(L, "%s %s= %s;", acc, j->prod ? "*" : "+", x);
    } else {
        lw_line(L, "%s %s= %s;", acc, j->prod ? "*" : "+", x);
        lw_line(L, "%s = %s;", lhs, acc);
    }
}

static void scan_outer_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    (void)guarded;
    scan_job *j = user;
    int r = j->x->rank;
    for (int d = 0; d < j->axis; d++)
        j->outer[d] = idx[d];
    const char *init = lw_float_lit(L, j->prod ? 1 : 0, j->ct);
    j->acc = lw_fresh(L, "run");
    int inner = r - j->axis - 1;
    if (inner == 0) {
        lw_line(L, "%s %s = %s;", j->ct, j->acc, init);
    } else {
        const char *n = j->out->stride[j->axis];
        lw_line(L, "%s %s[%s];", j->ct, j->acc, n);
        lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s[q] = %s;", n, j->acc, init);
    }
    j->ia = lw_fresh(L, "s");
    const char *E = j->x->dim[j->axis].c;
    if (j->reverse)
        lw_line(L, "for (int64_t %s = %s - 1; %s >= 0; --%s) {", j->ia, E, j->ia, j->ia);
    else
        lw_line(L, "for (int64_t %s = 0; %s < %s; ++%s) {", j->ia, j->ia, E, j->ia);
    L->indent++;
    lw_dim tail[LW_MAXR];
    for (int d = j->axis + 1; d < r; d++)
        tail[d - j->axis - 1] = j->x->dim[d];
    lw_val *reads[1] = {NULL};
    int saved = L->n_proven;
    lw_emit_nest(L, inner, tail, NULL, NULL, reads, 0, L->vectorize, scan_inner_body, j);
    L->n_proven = saved;
    L->indent--;
    lw_line(L, "}");
}

lw_val *lw_scan(lw_ctx *L, const char *op, lw_val *x, int axis, bool reverse, bool exclusive)
{
    if (!lw_ok(L) || !x)
        return NULL;
    scan_job *j = lw_alloc(L, sizeof *j);
    if (!j)
        return NULL;
    j->prod = strstr(op, "prod") != NULL;
    j->reverse = reverse;
    j->exclusive = exclusive;
    j->x = x;
    j->axis = axis;
    akg_dtype odt = lw_is_float(x->dt) ? x->dt : AKG_DTYPE_I64;
    j->ct = lw_comptype(odt);
    lw_val *out = lw_buffer(L, odt, x->rank, x->dim, TIER_FAST, "c");
    if (!out)
        return NULL;
    j->out = out;
    lw_val *reads[1] = {x};
    lw_emit_nest_outer(L, axis, x->dim, reads, 1, scan_outer_body, j);
    out->version++;
    return out;
}

/* ---- gather ---- */

typedef struct {
    lw_val *x, *index, *out;
    int axis;
} gather_job;

static void gather_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    gather_job *j = user;
    const char *ii = lw_elem(L, j->index, idx, guarded);
    const char *xi[LW_MAXR];
    for (int d = 0; d < j->x->rank; d++)
        xi[d] = idx[d];
    /* an index outside [0, extent) reads a clamped element, never memory outside x */
    xi[j->axis] = lw_strf(L, "akg_imin(akg_imax((int64_t)(%s), 0), %s - 1)",
                          ii, j->x->dim[j->axis].c);
    int saved = L->n_proven;
    L->n_proven = 0; /* the gathered index is not the loop's */
    const char *x = lw_elem(L, j->x, xi, true);
    L->n_proven = saved;
    lw_line(L, "%s[%s] = %s;", j->out->ptr, lw_addr(L, j->out, idx), x);
}

lw_val *lw_gather(lw_ctx *L, lw_val *x, lw_val *index, int axis)
{
    if (!lw_ok(L) || !x || !index)
        return NULL;
    gather_job *j = lw_alloc(L, sizeof *j);
    if (!j)
        return NULL;
    j->x = x;
    j->index = index;
    j->axis = axis;
    lw_val *out = lw_buffer(L, x->dt, index->rank, index->dim, TIER_FAST, "g");
    if (!out)
        return NULL;
    j->out = out;
    lw_val *reads[1] = {index};
    lw_emit_nest(L, index->rank, index->dim, NULL, NULL, reads, 1, false, gather_body, j);
    out->version++;
    return out;
}

/* ---- GEMM ---- */

typedef struct {
    lw_val *a, *b, *acc;
    bool ta, tb;
    const char *i, *p; /* loop names of the general path */
    const char *aval;
} gemm_job;

/* element (m, k) of op(a) */
static const char *a_elem(lw_ctx *L, gemm_job *j, const char *m, const char *k, bool guards)
{
    const char *idx[2] = {j->ta ? k : m, j->ta ? m : k};
    return lw_elem(L, j->a, idx, guards);
}

static const char *b_elem(lw_ctx *L, gemm_job *j, const char *k, const char *n, bool guards)
{
    const char *idx[2] = {j->tb ? n : k, j->tb ? k : n};
    return lw_elem(L, j->b, idx, guards);
}

static void gemm_general_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    gemm_job *j = user;
    const char *n = idx[0];
    const char *bv = b_elem(L, j, j->p, n, guarded);
    const char *ct = lw_comptype(j->acc->dt);
    const char *cidx[2] = {j->i, n};
    const char *lhs = j->acc->reg
                          ? lw_strf(L, "%s[%s][(%s) / %lld][(%s) %% %lld]", j->acc->ptr, j->i, n,
                                    (long long)j->acc->vw, n, (long long)j->acc->vw)
                          : lw_strf(L, "%s[%s]", j->acc->ptr, lw_addr(L, j->acc, cidx));
    lw_line(L, "%s += (%s)%s * (%s)%s;", lhs, ct, j->aval, ct, bv);
}

/* acc[i][:] += a(i, p) * b(p, :) for all i, p: the loop order of a row-major accumulator */
static void gemm_general(lw_ctx *L, gemm_job *j, const lw_dim *M, const lw_dim *K,
                         const lw_dim *N)
{
    j->i = lw_fresh(L, "gi");
    j->p = lw_fresh(L, "gk");
    lw_line(L, "for (int64_t %s = 0; %s < %s; ++%s) {", j->i, j->i, M->c, j->i);
    L->indent++;
    lw_line(L, "for (int64_t %s = 0; %s < %s; ++%s) {", j->p, j->p, K->c, j->p);
    L->indent++;
    lw_memo_reset(L);
    j->aval = a_elem(L, j, j->i, j->p, true);
    lw_val *reads[1] = {NULL};
    lw_emit_nest(L, 1, N, NULL, NULL, reads, 0, L->vectorize, gemm_general_body, j);
    L->indent--;
    lw_line(L, "}");
    L->indent--;
    lw_line(L, "}");
}

/* The whole of view v's tile is inside its base (C++ condition), or NULL when no bound can
 * fail. */
const char *lw_interior(lw_ctx *L, lw_val *v)
{
    if (!v || v->kind != LV_VIEW)
        return NULL;
    if (lw_view_has_pos(v))
        return "false"; /* positions are data: each is tested where it is read */
    const char *c = NULL;
    for (int b = 0; b < v->base->rank; b++) {
        if (!v->guard[b])
            continue;
        int t = v->tile_of_bdim[b];
        const char *x;
        if (t < 0) {
            x = lw_strf(L, "akg_in(%s, %s)", v->bstart[b], v->base->dim[b].c);
        } else {
            const char *lo, *hi;
            lw_view_range(L, v, b, &lo, &hi);
            x = strcmp(lo, "0") ? lw_strf(L, "%s <= 0 && %s >= %s", lo, hi, v->dim[t].c)
                                : lw_strf(L, "%s >= %s", hi, v->dim[t].c);
        }
        c = c ? lw_strf(L, "%s && %s", c, x) : x;
    }
    if (v->mask)
        return "false";
    return c;
}

static bool storage_operand(lw_val *v)
{
    if (v->kind == LV_TENSOR || v->kind == LV_BUF)
        return !v->reg;
    if (v->kind == LV_VIEW)
        return (v->base->kind == LV_TENSOR || v->base->kind == LV_BUF) && !v->base->reg &&
               v->dt == v->base->dt;
    return false;
}

/* An operand read in place as base + r * s0 + c * s1 (tile dims r, c): true for a row-major
 * TENSOR/BUF and for views of them; *base, *s0, *s1 are C++ texts. */
static bool affine(lw_ctx *L, lw_val *v, const char **base, const char **s0, const char **s1)
{
    if (v->kind == LV_TENSOR || v->kind == LV_BUF) {
        if (v->reg || v->layout != LAYOUT_ROW || v->rank != 2)
            return false;
        *base = v->ptr;
        *s0 = v->stride[0];
        *s1 = v->stride[1];
        return true;
    }
    if (v->kind != LV_VIEW || !v->base || v->base->reg || v->base->layout != LAYOUT_ROW ||
        v->mask || v->rank != 2 || v->dt != v->base->dt || lw_view_has_pos(v))
        return false;
    lw_val *b = v->base;
    const char *bi[LW_MAXR];
    const char *st[2] = {"0", "0"};
    for (int d = 0; d < b->rank; d++) {
        bi[d] = v->bstart[d];
        int t = v->tile_of_bdim[d];
        if (t >= 0 && t < 2) {
            const char *step = v->bstep[d] ? v->bstep[d] : "1";
            st[t] = !strcmp(step, "1") ? b->stride[d] : lw_strf(L, "%s * %s", step, b->stride[d]);
        }
    }
    *base = lw_strf(L, "%s + %s", b->ptr, lw_addr(L, b, bi));
    *s0 = st[0];
    *s1 = st[1];
    return true;
}

/* The inline micro-kernel: acc[MR][NR/vw] vectors += op(a)[MR, K] @ op(b)[K, NR], with the
 * operands' base pointers and strides computed once before the K loop. */
static void gemm_micro(lw_ctx *L, gemm_job *j, const lw_dim *K)
{
    lw_val *acc = j->acc;
    int64_t MR = acc->dim[0].k, NR = acc->dim[1].k, vw = acc->vw, nv = NR / vw;
    const char *vt = lw_strf(L, "akg_v%lld", (long long)vw);
    const char *vu = lw_strf(L, "akg_v%lldu", (long long)vw);
    const char *p = lw_fresh(L, "k");
    const char *ab, *a0, *a1, *bb, *b0, *b1;
    bool aff_a = affine(L, j->a, &ab, &a0, &a1), aff_b = affine(L, j->b, &bb, &b0, &b1);
    /* strides of op(a) along (m, k) and op(b) along (k, n) */
    const char *am = j->ta ? a1 : a0, *ak = j->ta ? a0 : a1;
    const char *bk = j->tb ? b1 : b0, *bn = j->tb ? b0 : b1;
    bool bvec = aff_b && !strcmp(bn, "1") && j->b->dt == AKG_DTYPE_F32;
    const char *pa = NULL, *pb = NULL, *sam = NULL, *sak = NULL, *sbk = NULL;
    lw_line(L, "{");
    L->indent++;
    if (aff_a) {
        pa = lw_fresh(L, "pa");
        sam = lw_fresh(L, "sam");
        sak = lw_fresh(L, "sak");
        lw_line(L, "const %s *__restrict %s = %s;", lw_ctype(j->a->dt), pa, ab);
        lw_line(L, "const int64_t %s = %s, %s = %s;", sam, am, sak, ak);
    }
    if (bvec) {
        pb = lw_fresh(L, "pb");
        sbk = lw_fresh(L, "sbk");
        lw_line(L, "const float *__restrict %s = %s;", pb, bb);
        lw_line(L, "const int64_t %s = %s;", sbk, bk);
    }
    lw_line(L, "for (int64_t %s = 0; %s < %s; ++%s) {", p, p, K->c, p);
    L->indent++;
    lw_memo_reset(L);
    for (int64_t v = 0; v < nv; v++) {
        if (bvec) {
            lw_line(L, "const %s bv%lld = *(const %s *)(%s + %s * %s + %lld);", vt, (long long)v, vu,
                    pb, p, sbk, (long long)(v * vw));
        } else {
            const char *lanes = "";
            for (int64_t l = 0; l < vw; l++) {
                const char *col = lw_strf(L, "%lld", (long long)(v * vw + l));
                lanes = lw_strf(L, "%s%s%s", lanes, l ? ", " : "", b_elem(L, j, p, col, false));
            }
            lw_line(L, "const %s bv%lld = %s{%s};", vt, (long long)v, vt, lanes);
        }
    }
    for (int64_t i = 0; i < MR; i++) {
        const char *row = lw_strf(L, "%lld", (long long)i);
        const char *av = aff_a ? lw_strf(L, "%s[%s * %s + %lld * %s]", pa, p, sak, (long long)i,
                                         sam)
                               : a_elem(L, j, row, p, false);
        /* f16 and bf16 are stored as 16-bit words: decoded, not converted as integers */
        if (aff_a && j->a->dt == AKG_DTYPE_F16)
            av = lw_strf(L, "akg_h2f(%s)", av);
        else if (aff_a && j->a->dt == AKG_DTYPE_BF16)
            av = lw_strf(L, "akg_bf2f(%s)", av);
        else if (aff_a && j->a->dt != AKG_DTYPE_F32)
            av = lw_strf(L, "(float)%s", av);
        lw_line(L, "{ const %s av = akg_splat<%s>(%s);", vt, vt, av);
        for (int64_t v = 0; v < nv; v++)
            lw_line(L, "  %s[%lld][%lld] += av * bv%lld;", acc->ptr, (long long)i, (long long)v,
                    (long long)v);
        lw_line(L, "}");
    }
    L->indent--;
    lw_line(L, "}");
    L->indent--;
    lw_line(L, "}");
}

lw_val *lw_gemm(lw_ctx *L, lw_val *a, lw_val *b, lw_val *acc, bool trans_a, bool trans_b)
{
    if (!lw_ok(L) || !a || !b)
        return NULL;
    if (a->rank != 2 || b->rank != 2)
        return lw_fail(L, "gemm takes rank-2 tiles, got ranks %d and %d", a->rank, b->rank),
               NULL;
    lw_dim M = trans_a ? a->dim[1] : a->dim[0];
    lw_dim K = trans_a ? a->dim[0] : a->dim[1];
    lw_dim N = trans_b ? b->dim[0] : b->dim[1];
    if (!acc) {
        lw_dim od[2] = {M, N};
        acc = lw_buffer(L, AKG_DTYPE_F32, 2, od, TIER_FAST, "mm");
        if (!acc)
            return NULL;
        lw_line(L, "std::memset(%s, 0, sizeof(float) * (size_t)(%s * %s));", acc->ptr, M.c, N.c);
    }
    gemm_job *j = lw_alloc(L, sizeof *j);
    if (!j)
        return NULL;
    /* lazy operands are materialised once instead of recomputed per use */
    if (a->kind == LV_EXPR)
        a = lw_force(L, a, TIER_FAST);
    if (b->kind == LV_EXPR)
        b = lw_force(L, b, TIER_FAST);
    j->a = a;
    j->b = b;
    j->acc = acc;
    j->ta = trans_a;
    j->tb = trans_b;
    bool micro = acc->reg && acc->dim[0].known && acc->dim[1].known && lw_dim_equal(M, acc->dim[0]) &&
                 lw_dim_equal(N, acc->dim[1]) && storage_operand(a) && storage_operand(b) &&
                 lw_comptype(a->dt)[0] == 'f' && lw_comptype(b->dt)[0] == 'f';
    if (micro) {
        const char *ca = lw_interior(L, a), *cb = lw_interior(L, b);
        const char *cond = ca && cb ? lw_strf(L, "%s && %s", ca, cb) : (ca ? ca : cb);
        if (cond) {
            lw_line(L, "if (%s) {", cond);
            L->indent++;
            gemm_micro(L, j, &K);
            L->indent--;
            lw_line(L, "} else {");
            L->indent++;
            /* a tile at an edge: the operands that leave their base are copied first (elements
             * outside read `other`), then the same micro-kernel runs on the copies */
            gemm_job edge = *j;
            if (ca) {
                edge.a = lw_buffer(L, a->dt, 2, a->dim, TIER_FAST, "ea");
                if (edge.a)
                    lw_assign_into(L, edge.a, a);
            }
            if (cb) {
                edge.b = lw_buffer(L, b->dt, 2, b->dim, TIER_FAST, "eb");
                if (edge.b)
                    lw_assign_into(L, edge.b, b);
            }
            if (edge.a && edge.b)
                gemm_micro(L, &edge, &K);
            L->indent--;
            lw_line(L, "}");
        } else {
            gemm_micro(L, j, &K);
        }
    } else {
        gemm_general(L, j, &M, &K, &N);
    }
    acc->version++;
    return acc;
}
