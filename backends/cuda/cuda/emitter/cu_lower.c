/*
 * cu_lower.c: kernels and the launcher. The host walk (plan_*) keeps loops
 * and ifs on host-known values as C in akg_kernel, turns each outermost
 * parallel loop into a __global__ kernel and each host statement that writes
 * memory into a one-block kernel, and re-issues the pure host tile statements
 * seen so far at the top of every kernel (they define tiles, which are values:
 * re-issuing costs nothing until an element is read). The statements inside a
 * kernel are cu_stmt.c's (cu_kernel_stmts).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

static bool is_parallel(const akg_sketch_stmt *st)
{
    return akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_FOR &&
           akg_sketch_stmt_hint_value(st, "parallel") != NULL;
}

static bool has_parallel(const akg_sketch_stmt *st)
{
    if (is_parallel(st))
        return true;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
            if (has_parallel(akg_sketch_stmt_body_at(st, w, i)))
                return true;
    return false;
}

/* ---- the host walk ---- */

typedef struct {
    akg_buf *kernels;
    akg_buf *host;
    const akg_sketch_stmt *replay[512];
    size_t n_replay;
    const char *host_args[256]; /* "long long h_o" / "float *X_part" */
    const char *host_vals[256];
    size_t n_host;
} plan;

static void kernel_params(cu_ctx *C, plan *P, akg_buf *sig, akg_buf *call)
{
    const akg_sketch *sk = C->sk;
    bool first = true;
#define ARG(decl, val)                                                                             \
    do {                                                                                           \
        akg_buf_appendf(sig, "%s%s", first ? "" : ", ", decl);                                     \
        akg_buf_appendf(call, "%s%s", first ? "" : ", ", val);                                     \
        first = false;                                                                             \
    } while (0)
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
        const char *nm = akg_sketch_tensor_name(sk, i);
        ARG(cu_strf(C, "%s *__restrict__ T_%s", cu_ctype(akg_sketch_tensor_dtype(sk, i)), nm),
            cu_strf(C, "T_%s", nm));
    }
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++) {
        const char *nm = akg_sketch_symbol_name(sk, i);
        ARG(cu_strf(C, "const long long S_%s", nm), cu_strf(C, "S_%s", nm));
    }
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
        const char *nm = akg_sketch_param_name(sk, i);
        akg_dtype dt = akg_sketch_param_dtype(sk, i);
        ARG(cu_strf(C, "const %s P_%s", cu_comptype(dt == AKG_DTYPE_UNKNOWN ? AKG_DTYPE_F32 : dt),
                    nm),
            cu_strf(C, "P_%s", nm));
    }
    for (size_t i = 0; i < P->n_host; i++)
        ARG(P->host_args[i], P->host_vals[i]);
    for (size_t i = 0; i < C->n_scratch; i++)
        ARG(cu_strf(C, "%s *__restrict__ %s", C->scratch[i].ctype, C->scratch[i].c),
            C->scratch[i].c);
#undef ARG
}

/* One kernel: the replayed host statements, then body over the parallel axes loops[0..nl)
 * (none: one program). */
static void emit_kernel(cu_ctx *C, plan *P, const akg_sketch_stmt *const *loops, size_t nl,
                        const akg_sketch_stmt *const *body, size_t nb)
{
    int k = C->kernels++;
    akg_buf kb;
    akg_buf_init(&kb, 64u << 20);
    akg_buf *saved_out = C->out;
    int saved_indent = C->indent;
    size_t mark = C->n_binds;
    C->out = &kb;
    C->indent = 1;
    C->in_kernel = true;
    C->n_scratch = 0;
    C->n_gemm_ct = 0;
    C->epoch = 0;
    C->loop_depth = 0;
    C->synced = false;
    cu_kernel_stmts(C, P->replay, P->n_replay);
    /* the program loop: program ids flattened over the axes, a grid-stride loop */
    const char *np = "1LL";
    const char *counts[CU_MAXR];
    for (size_t a = 0; a < nl; a++) {
        const akg_sketch_stmt *f = loops[a];
        const akg_sketch_expr *s0 = akg_sketch_for_start(f), *s1 = akg_sketch_for_stop(f),
                              *s2 = akg_sketch_for_step(f);
        if ((s0 && !cu_host_known(C, s0)) || !cu_host_known(C, s1) ||
            (s2 && !cu_host_known(C, s2))) {
            cu_fail(C, f,
                    "the bounds of a parallel loop must be known on the host (symbols, "
                    "constexprs, host loop variables)");
            break;
        }
        counts[a] = cu_temp(C, "_n");
        cu_line(C, "const long long %s = akg_trip(%s, %s, %s);", counts[a],
                s0 ? cu_index(C, s0) : "0LL", cu_index(C, s1), s2 ? cu_index(C, s2) : "1LL");
        np = cu_strf(C, "%s * %s", np, counts[a]);
    }
    const char *npv = cu_temp(C, "_np");
    cu_line(C, "const long long %s = %s;", npv, np);
    cu_line(C, "for (long long _pid = blockIdx.x; _pid < %s; _pid += gridDim.x) {", npv);
    C->indent++;
    const char *rest = "_pid";
    for (size_t a = nl; a-- > 0;) {
        const akg_sketch_stmt *f = loops[a];
        const akg_sketch_expr *s0 = akg_sketch_for_start(f), *s2 = akg_sketch_for_step(f);
        const char *v = cu_temp(C, cu_strf(C, "v_%s_", akg_sketch_for_var(f)));
        cu_line(C, "const long long %s = %s + (%s %% %s) * %s;", v, s0 ? cu_index(C, s0) : "0LL",
                rest, counts[a], s2 ? cu_index(C, s2) : "1LL");
        const char *r2 = cu_temp(C, "_q");
        cu_line(C, "const long long %s = %s / %s;", r2, rest, counts[a]);
        rest = r2;
        cu_bind *lb = cu_bind_new(C, akg_sketch_for_var(f), CB_INT);
        if (lb)
            lb->c = v;
    }
    cu_kernel_stmts(C, body, nb);
    cu_sync(C); /* the next program of this block reuses the block's buffers */
    C->indent--;
    cu_line(C, "}");
    C->n_binds = mark;
    C->out = saved_out;
    C->indent = saved_indent;
    C->in_kernel = false;
    if (C->status) {
        akg_buf_free(&kb);
        return;
    }
    akg_buf sig, call;
    akg_buf_init(&sig, 1u << 20);
    akg_buf_init(&call, 1u << 20);
    kernel_params(C, P, &sig, &call);
    akg_buf_appendf(P->kernels, "__global__ void __launch_bounds__(AKG_NT) akg_k%d(%s) {\n", k,
                    sig.data ? sig.data : "");
    for (size_t i = 0; i < C->n_gemm_ct; i++)
        akg_buf_appendf(P->kernels,
                        "  __shared__ %s _gsa%zu[AKG_GK][AKG_GT + 1], _gsb%zu[AKG_GK][AKG_GT + 1];\n",
                        C->gemm_ct[i], i, i);
    if (kb.data)
        akg_buf_puts(P->kernels, kb.data);
    akg_buf_puts(P->kernels, "}\n\n");
    /* the launch: the program count on the host, the blocks' scratch, then the kernel */
    cu_line(C, "{");
    C->indent++;
    const char *hnp = "1LL";
    for (size_t a = 0; a < nl; a++) {
        const akg_sketch_stmt *f = loops[a];
        const akg_sketch_expr *s0 = akg_sketch_for_start(f), *s1 = akg_sketch_for_stop(f),
                              *s2 = akg_sketch_for_step(f);
        hnp = cu_strf(C, "%s * akg_trip(%s, %s, %s)", hnp, s0 ? cu_index(C, s0) : "0LL",
                      cu_index(C, s1), s2 ? cu_index(C, s2) : "1LL");
    }
    cu_line(C, "const long long _np = %s;", hnp);
    cu_line(C, "if (_np > 0) {");
    C->indent++;
    cu_line(C, "const unsigned _grid = akg_grid(_np);");
    for (size_t i = 0; i < C->n_scratch; i++)
        cu_line(C,
                "%s *%s = (%s *)akg_scratch_get(&_sc, (long long)_grid * (%s) * (long "
                "long)sizeof(%s));",
                C->scratch[i].ctype, C->scratch[i].c, C->scratch[i].ctype, C->scratch[i].elems,
                C->scratch[i].ctype);
    cu_line(C, "if (_sc.failed) { akg_scratch_release(&_sc); return 2; }");
    cu_line(C, "akg_k%d<<<_grid, AKG_NT, 0, _stream>>>(%s);", k, call.data ? call.data : "");
    C->indent--;
    cu_line(C, "}");
    C->indent--;
    cu_line(C, "}");
    akg_buf_free(&sig);
    akg_buf_free(&call);
    akg_buf_free(&kb);
}

static bool is_pure_tile_stmt(cu_ctx *C, const akg_sketch_stmt *st)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_ALLOC:
        return akg_sketch_alloc_tier(st) != AKG_SKETCH_TIER_SLOW;
    case AKG_SKETCH_STMT_LOAD:
        return true;
    case AKG_SKETCH_STMT_ASSIGN:
        return !(akg_sketch_assign_target_count(st) == 1 &&
                 cu_host_known(C, akg_sketch_assign_value(st)));
    default:
        return false;
    }
}

/* A host `if` decided by the symbols bound to constants: 1 then, 0 else, -1 unknown. */
static int fold_cond(cu_ctx *C, const akg_sketch_expr *e)
{
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_BINARY) {
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "and") || !strcmp(op, "or")) {
            int a = fold_cond(C, akg_sketch_expr_lhs(e)), b = fold_cond(C, akg_sketch_expr_rhs(e));
            if (!strcmp(op, "and"))
                return a == 0 || b == 0 ? 0 : a == 1 && b == 1 ? 1 : -1;
            return a == 1 || b == 1 ? 1 : a == 0 && b == 0 ? 0 : -1;
        }
        int64_t l, r;
        if (akg_sketch_expr_eval(C->sk, akg_sketch_expr_lhs(e), C->consts, C->n_consts, &l) ||
            akg_sketch_expr_eval(C->sk, akg_sketch_expr_rhs(e), C->consts, C->n_consts, &r))
            return -1;
        if (!strcmp(op, "=="))
            return l == r;
        if (!strcmp(op, "!="))
            return l != r;
        if (!strcmp(op, "<"))
            return l < r;
        if (!strcmp(op, "<="))
            return l <= r;
        if (!strcmp(op, ">"))
            return l > r;
        if (!strcmp(op, ">="))
            return l >= r;
    }
    return -1;
}

static const char *host_cond(cu_ctx *C, const akg_sketch_expr *e)
{
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_BINARY) {
        const char *op = akg_sketch_expr_text(e);
        const akg_sketch_expr *l = akg_sketch_expr_lhs(e), *r = akg_sketch_expr_rhs(e);
        if (!strcmp(op, "and") || !strcmp(op, "or"))
            return cu_strf(C, "(%s %s %s)", host_cond(C, l), !strcmp(op, "and") ? "&&" : "||",
                           host_cond(C, r));
        if (cu_host_known(C, l) && cu_host_known(C, r))
            return cu_strf(C, "(%s %s %s)", cu_index(C, l), op, cu_index(C, r));
    }
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_UNARY &&
        !strcmp(akg_sketch_expr_text(e), "not"))
        return cu_strf(C, "(!%s)", host_cond(C, akg_sketch_expr_lhs(e)));
    return NULL;
}

static bool host_cond_ok(cu_ctx *C, const akg_sketch_expr *e)
{
    akg_buf *saved = C->out;
    C->out = NULL;
    const char *c = host_cond(C, e);
    C->out = saved;
    return c != NULL;
}

static void plan_stmts(cu_ctx *C, plan *P, const akg_sketch_stmt *const *stmts, size_t n);

static void plan_body(cu_ctx *C, plan *P, const akg_sketch_stmt *st, int w)
{
    size_t n = akg_sketch_stmt_body_count(st, w);
    const akg_sketch_stmt **b = cu_alloc(C, (n + 1) * sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < n; i++)
        b[i] = akg_sketch_stmt_body_at(st, w, i);
    size_t mark = C->n_binds, rmark = P->n_replay, hmark = P->n_host;
    plan_stmts(C, P, b, n);
    C->n_binds = mark;
    P->n_replay = rmark;
    P->n_host = hmark;
}

static void plan_stmts(cu_ctx *C, plan *P, const akg_sketch_stmt *const *stmts, size_t n)
{
    for (size_t i = 0; i < n && !C->status; i++) {
        const akg_sketch_stmt *st = stmts[i];
        C->cur = st;
        akg_sketch_stmt_kind kind = akg_sketch_stmt_get_kind(st);
        if (is_parallel(st)) {
            /* the parallel loops that are the whole body of this one are further axes */
            const akg_sketch_stmt *loops[CU_MAXR];
            size_t nl = 0;
            const akg_sketch_stmt *f = st;
            loops[nl++] = f;
            while (nl < CU_MAXR && akg_sketch_stmt_body_count(f, 0) == 1 &&
                   is_parallel(akg_sketch_stmt_body_at(f, 0, 0))) {
                f = akg_sketch_stmt_body_at(f, 0, 0);
                loops[nl++] = f;
            }
            size_t nb = akg_sketch_stmt_body_count(f, 0);
            const akg_sketch_stmt **body = cu_alloc(C, (nb + 1) * sizeof *body);
            if (!body)
                return;
            for (size_t k = 0; k < nb; k++)
                body[k] = akg_sketch_stmt_body_at(f, 0, k);
            emit_kernel(C, P, loops, nl, body, nb);
            continue;
        }
        if (kind == AKG_SKETCH_STMT_IF && host_cond_ok(C, akg_sketch_if_cond(st))) {
            int folded = fold_cond(C, akg_sketch_if_cond(st));
            if (folded >= 0) {
                plan_body(C, P, st, folded ? 0 : 1);
                continue;
            }
            cu_line(C, "if %s {", host_cond(C, akg_sketch_if_cond(st)));
            C->indent++;
            plan_body(C, P, st, 0);
            C->indent--;
            if (akg_sketch_stmt_body_count(st, 1)) {
                cu_line(C, "} else {");
                C->indent++;
                plan_body(C, P, st, 1);
                C->indent--;
            }
            cu_line(C, "}");
            continue;
        }
        if (kind == AKG_SKETCH_STMT_FOR && has_parallel(st)) {
            const akg_sketch_expr *a = akg_sketch_for_start(st), *b = akg_sketch_for_stop(st),
                                  *s = akg_sketch_for_step(st);
            if ((a && !cu_host_known(C, a)) || !cu_host_known(C, b) ||
                (s && !cu_host_known(C, s))) {
                cu_fail(C, st, "a loop around parallel loops needs bounds known on the host");
                return;
            }
            const char *v = cu_temp(C, cu_strf(C, "h_%s_", akg_sketch_for_var(st)));
            cu_line(C, "for (long long %s = %s; %s < %s; %s += %s) {", v,
                    a ? cu_index(C, a) : "0LL", v, cu_index(C, b), v, s ? cu_index(C, s) : "1LL");
            C->indent++;
            size_t mark = C->n_binds, hmark = P->n_host;
            cu_bind *lb = cu_bind_new(C, akg_sketch_for_var(st), CB_INT);
            if (lb) {
                lb->c = v;
                lb->host = true;
            }
            if (P->n_host < 256) {
                P->host_args[P->n_host] = cu_strf(C, "const long long %s", v);
                P->host_vals[P->n_host++] = v;
            }
            plan_body(C, P, st, 0);
            C->n_binds = mark;
            P->n_host = hmark;
            C->indent--;
            cu_line(C, "}");
            continue;
        }
        if (kind == AKG_SKETCH_STMT_ASSIGN && akg_sketch_assign_target_count(st) == 1 &&
            !strcmp(akg_sketch_assign_op(st), "=") &&
            cu_host_known(C, akg_sketch_assign_value(st))) {
            const char *name = akg_sketch_assign_target(st, 0);
            const char *v = cu_temp(C, cu_strf(C, "h_%s_", name));
            cu_line(C, "const long long %s = %s;", v, cu_index(C, akg_sketch_assign_value(st)));
            cu_bind *b = cu_bind_new(C, name, CB_INT);
            if (b) {
                b->c = v;
                b->host = true;
            }
            if (P->n_host < 256) {
                P->host_args[P->n_host] = cu_strf(C, "const long long %s", v);
                P->host_vals[P->n_host++] = v;
            }
            continue;
        }
        if (kind == AKG_SKETCH_STMT_ALLOC && akg_sketch_alloc_tier(st) == AKG_SKETCH_TIER_SLOW) {
            /* a host `slow` tile: device scratch of this call */
            const char *name = akg_sketch_alloc_name(st);
            cu_mem *m = cu_alloc(C, sizeof *m);
            if (!m)
                return;
            m->name = name;
            m->dt = akg_sketch_alloc_dtype(st) != AKG_DTYPE_UNKNOWN ? akg_sketch_alloc_dtype(st)
                                                                    : AKG_DTYPE_F32;
            m->rank = (int)akg_sketch_alloc_rank(st);
            m->ptr = cu_temp(C, cu_strf(C, "X_%s_", name));
            const char *elems = "1LL";
            for (int d = 0; d < m->rank; d++) {
                const akg_sketch_expr *de = akg_sketch_alloc_dim(st, (size_t)d);
                if (!cu_host_known(C, de)) {
                    cu_fail_expr(C, de,
                                 "a `slow` tile on the host needs extents known on the host");
                    return;
                }
                const char *dv = cu_temp(C, cu_strf(C, "%s_d", m->ptr));
                cu_line(C, "const long long %s = %s;", dv, cu_index(C, de));
                m->dim[d] = dv;
                elems = cu_strf(C, "%s * %s", elems, dv);
                if (P->n_host < 256) {
                    P->host_args[P->n_host] = cu_strf(C, "const long long %s", dv);
                    P->host_vals[P->n_host++] = dv;
                }
            }
            const char *ct = cu_ctype(m->dt);
            cu_line(C, "%s *%s = (%s *)akg_scratch_get(&_sc, %s * (long long)sizeof(%s));", ct,
                    m->ptr, ct, elems, ct);
            if (akg_sketch_alloc_has_hint(st, "init_zero"))
                cu_line(C, "if (%s) cudaMemsetAsync(%s, 0, (size_t)(%s) * sizeof(%s), _stream);",
                        m->ptr, m->ptr, elems, ct);
            cu_bind *b = cu_bind_new(C, name, CB_MEM);
            if (b) {
                b->mem = m;
                b->host = true;
            }
            if (P->n_host < 256) {
                P->host_args[P->n_host] = cu_strf(C, "%s *__restrict__ %s", ct, m->ptr);
                P->host_vals[P->n_host++] = m->ptr;
            }
            continue;
        }
        if (is_pure_tile_stmt(C, st)) {
            if (P->n_replay >= sizeof P->replay / sizeof P->replay[0]) {
                cu_fail(C, st, "too many host tile statements");
                return;
            }
            P->replay[P->n_replay++] = st;
            continue;
        }
        if (kind == AKG_SKETCH_STMT_PASS)
            continue;
        if (has_parallel(st)) {
            cu_fail(C, st,
                    "a parallel loop under a branch the host cannot decide (an `if` on a tile)");
            return;
        }
        /* a statement that writes memory on the host: a one-program kernel */
        emit_kernel(C, P, NULL, 0, &stmts[i], 1);
    }
}

void cu_lower_module(cu_ctx *C, akg_buf *out)
{
    const akg_sketch *sk = C->sk;
    akg_buf kernels, host;
    akg_buf_init(&kernels, 64u << 20);
    akg_buf_init(&host, 64u << 20);
    plan P;
    memset(&P, 0, sizeof P);
    P.kernels = &kernels;
    P.host = &host;
    /* names every kernel and the launcher see */
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
        cu_mem *m = cu_alloc(C, sizeof *m);
        if (!m)
            break;
        m->name = akg_sketch_tensor_name(sk, i);
        m->ptr = cu_strf(C, "T_%s", m->name);
        m->dt = akg_sketch_tensor_dtype(sk, i);
        m->rank = (int)akg_sketch_tensor_rank(sk, i);
        for (int d = 0; d < m->rank; d++)
            m->dim[d] = "0";
        cu_bind *b = cu_bind_new(C, m->name, CB_MEM);
        if (b) {
            b->mem = m;
            b->host = true;
        }
    }
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++) {
        cu_bind *b = cu_bind_new(C, akg_sketch_symbol_name(sk, i), CB_INT);
        if (b) {
            b->c = cu_strf(C, "S_%s", b->name);
            b->host = true;
        }
    }
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        cu_bind *b = cu_bind_new(C, akg_sketch_const_name(sk, i), CB_INT);
        if (b) {
            b->c = cu_strf(C, "C_%s", b->name);
            b->host = true;
        }
    }
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
        cu_bind *b = cu_bind_new(C, akg_sketch_param_name(sk, i), CB_PARAM);
        if (b) {
            b->c = cu_strf(C, "P_%s", b->name);
            b->dt = akg_sketch_param_dtype(sk, i);
            if (b->dt == AKG_DTYPE_UNKNOWN)
                b->dt = AKG_DTYPE_F32;
        }
    }
    /* tensor extents: their declared dims, as C of the symbols */
    for (size_t i = 0; i < C->n_binds; i++) {
        cu_bind *b = &C->binds[i];
        if (b->kind != CB_MEM)
            continue;
        long t = akg_sketch_tensor_find(sk, b->name);
        for (int d = 0; d < b->mem->rank; d++) {
            const akg_sketch_expr *de = akg_sketch_tensor_dim(sk, (size_t)t, (size_t)d);
            b->mem->dim[d] = cu_host_known(C, de) ? cu_strf(C, "(%s)", cu_index(C, de)) : "0";
        }
    }
    /* symbols bound to integer constants decide host ifs (I = 1) */
    for (size_t i = 0; i < akg_sketch_bind_count(sk) && C->n_consts < 64; i++) {
        const akg_sketch_expr *v = akg_sketch_bind_value(sk, i);
        const char *nm = akg_sketch_bind_name(sk, i);
        if (akg_sketch_expr_get_kind(v) == AKG_SKETCH_EXPR_INT) {
            bool sym = false;
            for (size_t s = 0; s < akg_sketch_symbol_count(sk); s++)
                sym = sym || !strcmp(akg_sketch_symbol_name(sk, s), nm);
            if (sym) {
                C->consts[C->n_consts].name = nm;
                C->consts[C->n_consts++].value = akg_sketch_expr_int(v);
            }
        }
    }
    C->out = &host;
    C->indent = 1;
    size_t nb = akg_sketch_body_count(sk);
    const akg_sketch_stmt **body = cu_alloc(C, (nb + 1) * sizeof *body);
    if (body) {
        for (size_t i = 0; i < nb; i++)
            body[i] = akg_sketch_body_at(sk, i);
        plan_stmts(C, &P, body, nb);
    }
    C->out = NULL;
    if (!C->status) {
        akg_buf_appendf(out, "// %s: CUDA C lowered by akg (cuda/cuda) from %s\n",
                        akg_sketch_name(sk), C->source ? C->source : "the sketch");
        akg_buf_puts(out, cu_prelude);
        for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
            int64_t v = 0;
            akg_sketch_const_int(sk, i, &v);
            akg_buf_appendf(out, "static constexpr long long C_%s = %lldLL;%s\n",
                            akg_sketch_const_name(sk, i), (long long)v,
                            akg_sketch_const_is_tunable(sk, i) ? " // tunable" : "");
        }
        akg_buf_puts(out, "\n");
        if (kernels.data)
            akg_buf_puts(out, kernels.data);
        akg_buf_puts(out, "extern \"C\" int akg_kernel(void *const *tensors, const int64_t "
                          "*symbols, const double *params, void *stream) {\n");
        akg_buf_puts(out, "  cudaStream_t _stream = (cudaStream_t)stream;\n");
        akg_buf_puts(out, "  (void)tensors, (void)symbols, (void)params;\n");
        for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
            const char *ct = cu_ctype(akg_sketch_tensor_dtype(sk, i));
            akg_buf_appendf(out, "  %s *T_%s = (%s *)tensors[%zu];\n", ct,
                            akg_sketch_tensor_name(sk, i), ct, i);
        }
        for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
            akg_buf_appendf(out, "  const long long S_%s = (long long)symbols[%zu];\n",
                            akg_sketch_symbol_name(sk, i), i);
        for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
            akg_dtype dt = akg_sketch_param_dtype(sk, i);
            const char *ct = cu_comptype(dt == AKG_DTYPE_UNKNOWN ? AKG_DTYPE_F32 : dt);
            akg_buf_appendf(out, "  const %s P_%s = (%s)params[%zu];\n", ct,
                            akg_sketch_param_name(sk, i), ct, i);
        }
        akg_buf_puts(out, "  akg_scratch _sc = {};\n  _sc.s = _stream;\n");
        if (host.data)
            akg_buf_puts(out, host.data);
        akg_buf_puts(out, "  akg_scratch_release(&_sc);\n"
                          "  return cudaGetLastError() == cudaSuccess ? 0 : 1;\n}\n");
    }
    akg_buf_free(&kernels);
    akg_buf_free(&host);
}
