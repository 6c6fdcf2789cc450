/*
 * cu_scan.c: scans of a tile along one axis (cumsum, cumprod; inclusive or
 * exclusive, forward or reverse) in CUDA C.
 *
 * A scan's element depends on every element before it along the axis, so it
 * cannot be a formula of its own index as the other tile values are (cu.h):
 * it is materialized in a per-block buffer. A run is the axis at one index of
 * the other axes. With at least as many runs as elements along the axis (a
 * [BD, CH] tile scanned along BD), each thread takes a run and walks it
 * serially. Otherwise the runs are taken one after another by the whole
 * block: a run is walked in chunks of blockDim.x elements, one element a
 * thread (element j of the chunk to thread j, counted from the end of the run
 * for a reverse scan), each chunk scanned by akg_block_scan (warp shuffles,
 * then one warp over the warps' totals in shared memory, the prelude in
 * cu_ops.c), combined with the carry of the chunks before and written; the
 * carry then takes the chunk's total. Which of the two runs is decided when
 * the kernel runs (the extents may be run-time values). The arithmetic is the tile's (f16/bf16 in
 * float, small integers in int), the result has the tile's dtype.
 */
#include <string.h>

#include "cu.h"

/* A call's boolean keyword (reverse=True), a constant. */
static bool scan_flag(cu_ctx *C, const akg_sketch_expr *call, const char *kw, bool *out)
{
    const akg_sketch_expr *k = akg_sketch_expr_kwarg(call, kw);
    int64_t v = 0;
    *out = false;
    if (!k)
        return true;
    if (akg_sketch_expr_get_kind(k) == AKG_SKETCH_EXPR_BOOL) {
        *out = akg_sketch_expr_int(k) != 0;
        return true;
    }
    if (akg_sketch_expr_eval(C->sk, k, NULL, 0, &v) != 0) {
        cu_fail_expr(C, k, "`%s=` of a scan must be True or False (a constant)", kw);
        return false;
    }
    *out = v != 0;
    return true;
}

/* The indices of run r (a C name) along every axis but a, row-major, into idx. */
static void run_indices(cu_ctx *C, const cu_node *x, int a, const char *r, const char **idx)
{
    bool take[CU_MAXR];
    for (int d = 0; d < x->rank; d++)
        take[d] = d != a;
    cu_unflatten(C, x->rank, x->ext, take, r, false, idx);
}

static const char *lin_index(cu_ctx *C, const cu_node *out, const char *const *idx)
{
    const char *lin = NULL;
    for (int d = 0; d < out->rank; d++)
        lin = lin ? cu_strf(C, "(%s) * (%s) + %s", lin, out->ext[d], idx[d]) : idx[d];
    return lin;
}

/* As many runs as elements along the axis or more: a run a thread, walked serially (the
 * threads of a warp read neighbouring runs: a scan along rows of a tile of columns). */
static void scan_serial(cu_ctx *C, const cu_node *x, const cu_node *out, int a, const char *runs,
                        const char *L, akg_dtype acc, int op, const char *ident, bool rev,
                        bool excl)
{
    const char *ct = cu_comptype(acc);
    const char *run = cu_temp(C, "_run");
    cu_line(C, "for (long long %s = threadIdx.x; %s < %s; %s += blockDim.x) {", run, run, runs,
            run);
    C->indent++;
    const char *idx[CU_MAXR];
    run_indices(C, x, a, run, idx);
    const char *carry = cu_temp(C, "_carry"), *k = cu_temp(C, "_k");
    cu_line(C, "%s %s = %s;", ct, carry, ident);
    cu_line(C, "for (long long %s = 0; %s < %s; ++%s) {", k, k, L, k);
    C->indent++;
    idx[a] = cu_temp(C, "_p");
    if (rev)
        cu_line(C, "const long long %s = %s - 1 - %s;", idx[a], L, k);
    else
        cu_line(C, "const long long %s = %s;", idx[a], k);
    const char *e = cu_elem_as(C, x, idx, acc);
    const char *lin = lin_index(C, out, idx);
    if (excl)
        cu_line(C, "%s[%s] = AKG_CVT(%s, %s);", out->c, lin, cu_ctype(out->dt), carry);
    cu_line(C, "%s = akg_comb<%d>(%s, %s);", carry, op, carry, e);
    if (!excl)
        cu_line(C, "%s[%s] = AKG_CVT(%s, %s);", out->c, lin, cu_ctype(out->dt), carry);
    cu_loop_end(C);
    cu_loop_end(C);
}

/* Fewer runs than elements along the axis: each run by the whole block, in chunks of
 * blockDim.x elements, akg_block_scan per chunk and a carry between chunks. */
static void scan_block(cu_ctx *C, const cu_node *x, const cu_node *out, int a, const char *runs,
                       const char *L, akg_dtype acc, int op, const char *ident, bool rev, bool excl)
{
    const char *ct = cu_comptype(acc);
    const char *run = cu_temp(C, "_run");
    cu_line(C, "for (long long %s = 0; %s < %s; ++%s) {", run, run, runs, run);
    C->indent++;
    const char *idx[CU_MAXR];
    run_indices(C, x, a, run, idx);
    const char *carry = cu_temp(C, "_carry");
    cu_line(C, "%s %s = %s;", ct, carry, ident);
    const char *c0 = cu_temp(C, "_c");
    cu_line(C, "for (long long %s = 0; %s < %s; %s += blockDim.x) {", c0, c0, L, c0);
    C->indent++;
    const char *j = cu_temp(C, "_j"), *v = cu_temp(C, "_v");
    cu_line(C, "const long long %s = %s + threadIdx.x;", j, c0);
    idx[a] = cu_temp(C, "_p");
    if (rev)
        cu_line(C, "const long long %s = %s - 1 - %s;", idx[a], L, j);
    else
        cu_line(C, "const long long %s = %s;", idx[a], j);
    cu_line(C, "%s %s = %s;", ct, v, ident);
    cu_line(C, "if (%s < %s) {", j, L);
    C->indent++;
    const char *e = cu_elem_as(C, x, idx, acc);
    cu_line(C, "%s = %s;", v, e);
    cu_loop_end(C);
    const char *tot = cu_temp(C, "_tot");
    cu_line(C, "%s %s;", ct, tot);
    cu_line(C, "%s = akg_block_scan<%d>(%s, %s, %s, &%s);", v, op, v, ident,
            excl ? "true" : "false", tot);
    cu_line(C, "if (%s < %s) %s[%s] = AKG_CVT(%s, akg_comb<%d>(%s, %s));", j, L, out->c,
            lin_index(C, out, idx), cu_ctype(out->dt), op, carry, v);
    cu_line(C, "%s = akg_comb<%d>(%s, %s);", carry, op, carry, tot);
    cu_loop_end(C);
    cu_loop_end(C);
}

cu_node *cu_scan_value(cu_ctx *C, const akg_sketch_expr *call, size_t n_items, bool prod)
{
    const char *f = akg_sketch_expr_text(call);
    cu_node *x = cu_value(C, akg_sketch_expr_item(call, 0));
    if (C->status)
        return x;
    if (x->rank == 0) {
        cu_fail_expr(C, call, "`%s` of a scalar: scan a tile (a value of rank 1 or more)", f);
        return x;
    }
    const akg_sketch_expr *ax = akg_sketch_expr_kwarg(call, "axis");
    if (!ax && n_items > 1)
        ax = akg_sketch_expr_item(call, 1);
    int64_t a = -1;
    if (ax && akg_sketch_expr_eval(C->sk, ax, NULL, 0, &a) != 0) {
        cu_fail_expr(C, ax, "`%s`: the axis must be an integer constant", f);
        return x;
    }
    if (a < 0)
        a += x->rank;
    if (a < 0 || a >= x->rank) {
        cu_fail_expr(C, call, "`%s`: the axis is out of range for a tile of rank %d", f, x->rank);
        return x;
    }
    bool rev, excl;
    if (!scan_flag(C, call, "reverse", &rev) || !scan_flag(C, call, "exclusive", &excl))
        return x;
    akg_dtype dt = x->weak ? AKG_DTYPE_F32 : x->dt;
    akg_dtype acc = dt;
    if (acc == AKG_DTYPE_BOOL || acc == AKG_DTYPE_I8 || acc == AKG_DTYPE_I16 || acc == AKG_DTYPE_U8)
        acc = AKG_DTYPE_I32;
    cu_node *out = cu_new_buffer(C, x, dt);
    if (C->status)
        return out;
    const int op = prod ? 3 : 0;
    const char *ident = cu_strf(C, "(%s)%d", cu_comptype(acc), prod ? 1 : 0);
    const char *L = cu_strf(C, "(long long)(%s)", x->ext[a]);
    const char *runs = "1LL";
    for (int d = 0; d < x->rank; d++)
        if (d != a)
            runs = cu_strf(C, "%s * (long long)(%s)", runs, x->ext[d]);

    const char *runs_v = cu_temp(C, "_runs");
    cu_sync(C);
    cu_line(C, "const long long %s = %s;", runs_v, runs);
    cu_line(C, "if (%s >= %s) {", runs_v, L);
    C->indent++;
    scan_serial(C, x, out, (int)a, runs_v, L, acc, op, ident, rev, excl);
    C->indent--;
    cu_line(C, "} else {");
    C->indent++;
    scan_block(C, x, out, (int)a, runs_v, L, acc, op, ident, rev, excl);
    cu_loop_end(C);
    C->synced = false;
    cu_sync(C);
    return out;
}
