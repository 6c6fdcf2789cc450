/*
 * cu_gemm.c: gemm and dot of rank-2 tiles inside a kernel, by the language's
 * semantics (sketch-grammar/README.md): gemm(a, b[, acc], trans_a=, trans_b=)
 * is acc + op(a) @ op(b), accumulated in f32 (f64 when acc is f64), the
 * result in acc's dtype (f32 without acc); dot(a, b) of rank-2 tiles is the
 * product. The block of the program computes the whole [M, N] product of its
 * tiles (the program is one output tile of the sketch's tiling):
 *   - the product is cut into AKG_GT x AKG_GT sub-tiles; the block's 256
 *     threads are a 16 x 16 grid, each owning an AKG_GR x AKG_GR micro-tile
 *     (rows ty + 16 r, columns tx + 16 c) whose sums live in registers;
 *   - K is walked in AKG_GK-deep chunks: all threads stage the chunk of
 *     op(a) and op(b) into __shared__ arrays (k-major, one column of padding
 *     against bank conflicts; one pair an element type, declared once by the
 *     kernel and shared by all its gemms), reading the operand tiles through their
 *     element formulas (a loaded tile reads the tensor there, guarded by the
 *     tensor's bounds); an element outside a tile's extents is staged as 0,
 *     so ragged M, N and K add nothing; between chunks, barriers;
 *   - each thread then writes its micro-tile: acc's element plus the sum,
 *     converted to the result's dtype, guarded by the extents.
 * Plain f32 (or f64) multiply-adds: no tensor cores, no TF32. The result is a
 * per-block buffer (cu_new_buffer), or, for `acc = gemm(a, b, acc)` and the
 * statement gemm(a, b, acc) on a kept accumulator, that buffer updated in
 * place (each element read and written by the thread that owns it, after
 * every chunk was staged: in place is exact unless a or b reads the buffer,
 * which then takes the copying path).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

typedef struct {
    cu_node *a, *b, *acc; /* acc: NULL for none */
    bool ta, tb;
    akg_dtype out; /* the result's dtype */
    akg_dtype cd;  /* the accumulation's: f32, or f64 */
} gemm_args;

/* Argument i of the call: positional when given so, else the keyword kw. */
static const akg_sketch_expr *arg_at(const akg_sketch_expr *call, size_t n_items, size_t i,
                                     const char *kw)
{
    if (i < n_items)
        return akg_sketch_expr_item(call, i);
    return akg_sketch_expr_kwarg(call, kw);
}

/* A constant boolean flag of the call (trans_a=True); false when absent. */
static bool flag_of(cu_ctx *C, const akg_sketch_expr *call, const char *kw)
{
    const akg_sketch_expr *f = akg_sketch_expr_kwarg(call, kw);
    if (!f)
        return false;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(f);
    if (k != AKG_SKETCH_EXPR_BOOL && k != AKG_SKETCH_EXPR_INT) {
        cu_fail_expr(C, f, "%s= must be True or False", kw);
        return false;
    }
    return akg_sketch_expr_int(f) != 0;
}

/* Whether the value n reads the per-block buffer whose element pointer is c. */
static bool reads_buffer(const cu_node *n, const char *c)
{
    if (!n)
        return false;
    if (n->kind == CN_BUF && n->c && !strcmp(n->c, c))
        return true;
    for (int i = 0; i < n->nargs && i < 3; i++)
        if (reads_buffer(n->a[i], c))
            return true;
    return false;
}

/* The operands of a gemm/dot call; acc_name, when not NULL, gets the accumulator's
 * expression (a name for the in-place form). False after a failure. */
static bool gemm_parse(cu_ctx *C, const akg_sketch_expr *call, size_t n_items, gemm_args *g,
                       const akg_sketch_expr **acc_expr)
{
    const char *fn = akg_sketch_expr_text(call);
    bool is_dot = !strcmp(fn, "dot");
    memset(g, 0, sizeof *g);
    const akg_sketch_expr *ae = arg_at(call, n_items, 0, "a");
    const akg_sketch_expr *be = arg_at(call, n_items, 1, "b");
    if (!ae || !be) {
        cu_fail_expr(C, call, "`%s` needs two tiles a and b", fn);
        return false;
    }
    const akg_sketch_expr *ce = is_dot ? NULL : arg_at(call, n_items, 2, "acc");
    if (!is_dot && !ce) /* the statement gemm(a, b, dst=c) accumulates into c */
        ce = akg_sketch_expr_kwarg(call, "dst");
    if (acc_expr)
        *acc_expr = ce;
    g->a = cu_value(C, ae);
    g->b = cu_value(C, be);
    if (C->status)
        return false;
    if (g->a->rank != 2 || g->b->rank != 2) {
        if (is_dot && g->a->rank == 1 && g->b->rank == 1)
            cu_fail_expr(C, call,
                         "`dot` of rank-1 tiles: not lowered to CUDA C yet (write "
                         "reduce_sum(mul(a, b)))");
        else
            cu_fail_expr(C, call,
                         "`%s` takes rank-2 tiles a [M, K] and b [K, N] (got ranks %d and %d)", fn,
                         g->a->rank, g->b->rank);
        return false;
    }
    g->ta = flag_of(C, call, "trans_a");
    g->tb = flag_of(C, call, "trans_b");
    if (C->status)
        return false;
    g->out = AKG_DTYPE_F32;
    if (ce) {
        g->acc = cu_value(C, ce);
        if (C->status)
            return false;
        if (g->acc->rank != 2 && !cu_all_unit(g->acc)) {
            cu_fail_expr(C, ce, "gemm's accumulator must be a rank-2 tile [M, N] (got rank %d)",
                         g->acc->rank);
            return false;
        }
        if (!g->acc->weak && g->acc->dt != AKG_DTYPE_UNKNOWN)
            g->out = g->acc->dt;
    }
    g->cd = g->out == AKG_DTYPE_F64 ? AKG_DTYPE_F64 : AKG_DTYPE_F32;
    return true;
}

/* Stages the chunk of op(t) at rows (or, for b, columns) [r0, r0 + AKG_GT) and depths
 * [k0, k0 + AKG_GK) into the shared array sh[depth][row]; 0 outside t's extents. */
static void stage(cu_ctx *C, const cu_node *t, bool trans, bool is_b, const char *sh,
                  const char *r0, const char *k0, akg_dtype cd)
{
    /* op(t)'s dims: for a, [rows, K]; for b, [K, columns]. The tile's own dims are swapped
     * when trans. The thread order walks the tile's last dim fastest (coalesced reads). */
    int row_dim = is_b ? (trans ? 0 : 1) : (trans ? 1 : 0); /* the tile dim of rows/cols */
    int k_dim = 1 - row_dim;
    const char *ct = cu_comptype(cd);
    const char *l = cu_temp(C, "_gl");
    cu_line(C, "for (int %s = threadIdx.x; %s < AKG_GT * AKG_GK; %s += blockDim.x) {", l, l, l);
    C->indent++;
    const char *rr = cu_temp(C, "_gr"), *kk = cu_temp(C, "_gk");
    if (row_dim == 1) { /* rows (or columns) are the tile's last dim: fastest */
        cu_line(C, "const int %s = %s %% AKG_GT, %s = %s / AKG_GT;", rr, l, kk, l);
    } else {
        cu_line(C, "const int %s = %s %% AKG_GK, %s = %s / AKG_GK;", kk, l, rr, l);
    }
    const char *idx[2];
    const char *pr = cu_temp(C, "_gi"), *pk = cu_temp(C, "_gi");
    cu_line(C, "const long long %s = %s + %s, %s = %s + %s;", pr, r0, rr, pk, k0, kk);
    idx[row_dim] = pr;
    idx[k_dim] = pk;
    const char *v = cu_temp(C, "_gv");
    cu_line(C, "%s %s = (%s)0;", ct, v, ct);
    cu_line(C, "if (%s < %s && %s < %s) {", pr, t->ext[row_dim], pk, t->ext[k_dim]);
    C->indent++;
    const char *x = cu_elem_as(C, t, idx, cd);
    cu_line(C, "%s = %s;", v, x);
    C->indent--;
    cu_line(C, "}");
    cu_line(C, "%s[%s][%s] = %s;", sh, kk, rr, v);
    C->indent--;
    cu_line(C, "}");
}

/* dst[m, n] = (acc ? acc[m, n] : 0) + sum_k op(a)[m, k] op(b)[k, n] over dst's extents. */
static void gemm_emit(cu_ctx *C, const cu_node *dst, const gemm_args *g)
{
    const char *ct = cu_comptype(g->cd);
    const char *M = dst->ext[0], *N = dst->ext[1];
    const char *K = g->a->ext[g->ta ? 0 : 1];
    cu_sync(C);
    cu_line(C, "{ /* %s = %sop(a) @ op(b): shared-memory chunks, register sums */", dst->c,
            g->acc ? "acc + " : "");
    C->indent++;
    /* the staging arrays are the kernel's, one pair an element type, shared by its gemms (they
     * run one after another, and each chunk is staged after a barrier): a kernel of many gemm
     * statements stays within the 48 KB of static shared memory */
    size_t gi0 = 0;
    while (gi0 < C->n_gemm_ct && strcmp(C->gemm_ct[gi0], ct))
        gi0++;
    if (gi0 == C->n_gemm_ct) {
        if (gi0 == sizeof C->gemm_ct / sizeof C->gemm_ct[0]) {
            cu_fail(C, NULL, "gemm on more than %zu element types in one kernel", gi0);
            return;
        }
        C->gemm_ct[C->n_gemm_ct++] = ct;
    }
    const char *sa = cu_strf(C, "_gsa%zu", gi0), *sb = cu_strf(C, "_gsb%zu", gi0);
    cu_line(C, "const int _gtx = threadIdx.x %% 16, _gty = threadIdx.x / 16;");
    const char *m0 = cu_temp(C, "_gm"), *n0 = cu_temp(C, "_gn"), *k0 = cu_temp(C, "_gk");
    cu_line(C, "for (long long %s = 0; %s < %s; %s += AKG_GT) {", m0, m0, M, m0);
    C->indent++;
    cu_line(C, "for (long long %s = 0; %s < %s; %s += AKG_GT) {", n0, n0, N, n0);
    C->indent++;
    const char *s = cu_temp(C, "_gs");
    cu_line(C, "%s %s[AKG_GR][AKG_GR];", ct, s);
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _r = 0; _r < AKG_GR; ++_r)");
    cu_line(C, "  #pragma unroll");
    cu_line(C, "  for (int _c = 0; _c < AKG_GR; ++_c) %s[_r][_c] = (%s)0;", s, ct);
    cu_line(C, "for (long long %s = 0; %s < %s; %s += AKG_GK) {", k0, k0, K, k0);
    C->indent++;
    cu_line(C, "__syncthreads(); /* the previous chunk has been read */");
    stage(C, g->a, g->ta, false, sa, m0, k0, g->cd);
    stage(C, g->b, g->tb, true, sb, n0, k0, g->cd);
    cu_line(C, "__syncthreads();");
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _q = 0; _q < AKG_GK; ++_q) {");
    C->indent++;
    cu_line(C, "%s _av[AKG_GR], _bv[AKG_GR];", ct);
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _r = 0; _r < AKG_GR; ++_r) {");
    cu_line(C, "  _av[_r] = %s[_q][_gty + 16 * _r];", sa);
    cu_line(C, "  _bv[_r] = %s[_q][_gtx + 16 * _r];", sb);
    cu_line(C, "}");
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _r = 0; _r < AKG_GR; ++_r)");
    cu_line(C, "  #pragma unroll");
    cu_line(C, "  for (int _c = 0; _c < AKG_GR; ++_c) %s[_r][_c] += _av[_r] * _bv[_c];", s);
    C->indent--;
    cu_line(C, "}");
    C->indent--;
    cu_line(C, "}");
    /* the micro-tile: acc's element plus the sum, by the thread that owns it */
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _r = 0; _r < AKG_GR; ++_r) {");
    C->indent++;
    cu_line(C, "#pragma unroll");
    cu_line(C, "for (int _c = 0; _c < AKG_GR; ++_c) {");
    C->indent++;
    const char *gi = cu_temp(C, "_gi"), *gj = cu_temp(C, "_gj");
    cu_line(C, "const long long %s = %s + _gty + 16 * _r, %s = %s + _gtx + 16 * _c;", gi, m0, gj,
            n0);
    cu_line(C, "if (%s < %s && %s < %s) {", gi, M, gj, N);
    C->indent++;
    const char *val = cu_strf(C, "%s[_r][_c]", s);
    if (g->acc) {
        const char *ix[2] = {gi, gj};
        const char *ai[CU_MAXR];
        int off = 2 - g->acc->rank;
        for (int d = 0; d < g->acc->rank; d++)
            ai[d] = g->acc->unit[d] || d + off < 0 ? "0" : ix[d + off];
        const char *x = cu_elem_as(C, g->acc, ai, g->cd);
        val = cu_strf(C, "%s + %s", x, val);
    }
    cu_line(C, "%s[(%s) * (%s) + %s] = AKG_CVT(%s, %s);", dst->c, gi, N, gj, cu_ctype(dst->dt),
            val);
    for (int i = 0; i < 6; i++) { /* the write's guard, its loops and the output tile loops above */
        C->indent--;
        cu_line(C, "}");
    }
    cu_sync(C);
}

cu_node *cu_gemm_value(cu_ctx *C, const akg_sketch_expr *call, size_t n_items)
{
    gemm_args g;
    if (!gemm_parse(C, call, n_items, &g, NULL)) {
        cu_node *z = cu_new_node(C, CN_LIT, 0, AKG_DTYPE_F32);
        z->c = "0";
        return z;
    }
    /* the product's shape: op(a)'s rows by op(b)'s columns */
    cu_node shape;
    memset(&shape, 0, sizeof shape);
    shape.rank = 2;
    int ar = g.ta ? 1 : 0, bc = g.tb ? 0 : 1;
    shape.ext[0] = g.a->ext[ar];
    shape.bnd[0] = g.a->bnd[ar];
    shape.unit[0] = g.a->unit[ar];
    shape.ext[1] = g.b->ext[bc];
    shape.bnd[1] = g.b->bnd[bc];
    shape.unit[1] = g.b->unit[bc];
    cu_node *dst = cu_new_buffer(C, &shape, g.out);
    if (C->status)
        return dst;
    gemm_emit(C, dst, &g);
    return dst;
}

bool cu_gemm_in_place(cu_ctx *C, const char *name, const akg_sketch_expr *call, size_t n_items)
{
    const char *fn = akg_sketch_expr_text(call);
    if (strcmp(fn, "gemm") && strcmp(fn, "dot"))
        return false;
    cu_bind *b = cu_lookup(C, name);
    if (!b || b->kind != CB_VALUE || !b->mat || !b->node || b->node->kind != CN_BUF ||
        b->node->rank != 2)
        return false;
    /* the accumulator must be the destination itself (or absent: the product overwrites it) */
    const akg_sketch_expr *ce = NULL;
    bool is_dot = !strcmp(fn, "dot");
    if (!is_dot) {
        ce = arg_at(call, n_items, 2, "acc");
        if (!ce)
            ce = akg_sketch_expr_kwarg(call, "dst");
    }
    if (ce && (akg_sketch_expr_get_kind(ce) != AKG_SKETCH_EXPR_NAME ||
               strcmp(akg_sketch_expr_text(ce), name)))
        return false;
    /* the operands are evaluated without emitting anything that writes the buffer: a and b
     * are values (a reduction in them would be computed first, which is fine either way) */
    gemm_args g;
    if (!gemm_parse(C, call, n_items, &g, NULL))
        return true; /* failed: the message is set */
    cu_node *dst = b->node;
    if (dst->unit[0] != g.a->unit[g.ta ? 1 : 0] || dst->unit[1] != g.b->unit[g.tb ? 0 : 1]) {
        /* a broadcasting accumulator ([1, N] against [M, N]) cannot hold the product */
        cu_node *v = cu_gemm_value(C, call, n_items);
        if (!C->status)
            cu_write_buf(C, dst, v);
        return true;
    }
    if (reads_buffer(g.a, dst->c) || reads_buffer(g.b, dst->c)) {
        /* op(a) or op(b) reads the accumulator: compute into a new buffer, then copy */
        cu_node shape = *dst;
        cu_node *tmp = cu_new_buffer(C, &shape, dst->dt);
        if (C->status)
            return true;
        gemm_emit(C, tmp, &g);
        cu_write_buf(C, dst, tmp);
        return true;
    }
    if (!ce)
        g.acc = NULL;
    gemm_emit(C, dst, &g);
    return true;
}
