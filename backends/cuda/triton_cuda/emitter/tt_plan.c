/*
 * tt_plan.c: the module: which statements run on the host and which in
 * kernels, the kernels' signatures and launches, and akg_kernel().
 *
 * The host walk (host_block) goes through the body in order:
 *   - a `parallel` FOR becomes a kernel over a one-dimensional grid; the
 *     `parallel` FORs that are the whole body of the one above (and whose
 *     bounds the host knows) are further grid axes, all flattened into
 *     program id 0 (no 65535 limit of grid axes 1 and 2);
 *   - a FOR holding a parallel loop is a Python loop launching kernels; an
 *     `if` on symbols is folded when the bound constants decide it, else it
 *     is a Python `if`;
 *   - `slow` tiles allocated on the host are scratch tensors on the inputs'
 *     device (the launch boundary orders their writes before their reads);
 *     integer assignments of host-known values are host integers;
 *   - a run of statements that write memory (stores, loops without parallel
 *     loops inside) becomes a kernel of one program ("serial");
 *   - every kernel takes its index type as AKG_IDX (a tl.constexpr): the
 *     launch passes _akg_idx(tensors, integers), int32 when all of them are
 *     at most 2**29 (the prelude says why that is safe), else int64; program
 *     ids, symbols, host integers and grid counts are cast to it;
 *   - pure tile statements (alloc, load, assign) do nothing on the host: a
 *     kernel that reads a name they define re-issues them ("replay"), found by
 *     walking back over the statements before the kernel in every enclosing
 *     block. A name defined any other way (inside an earlier kernel, a loop)
 *     cannot cross into a kernel: the lowering is refused with its line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define MAX_DEPTH 32
#define MAX_AXES 8

typedef struct {
    const akg_sketch_stmt *parent; /* NULL: the sketch's body */
    int which;
    size_t idx; /* the statement being lowered */
} frame;

typedef struct {
    tt_ctx *C;
    akg_buf *kernels;
    akg_buf *host;
    frame f[MAX_DEPTH];
    int depth;
} plan;

static size_t blk_count(plan *P, const frame *f)
{
    return f->parent ? akg_sketch_stmt_body_count(f->parent, f->which)
                     : akg_sketch_body_count(P->C->sk);
}

static const akg_sketch_stmt *blk_at(plan *P, const frame *f, size_t i)
{
    return f->parent ? akg_sketch_stmt_body_at(f->parent, f->which, i)
                     : akg_sketch_body_at(P->C->sk, i);
}

static bool host_value(tt_ctx *C, const char *name)
{
    tt_name *n = tt_lookup(C, name);
    return n && n->kind != TN_TILE && n->kind != TN_KINT && n->kind != TN_KLOOP;
}

static bool is_scratch_alloc(const akg_sketch_stmt *st)
{
    return akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_ALLOC &&
           akg_sketch_alloc_tier(st) == AKG_SKETCH_TIER_SLOW;
}

static bool is_host_int(tt_ctx *C, const akg_sketch_stmt *st)
{
    return akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_ASSIGN &&
           akg_sketch_assign_target_count(st) == 1 && !strcmp(akg_sketch_assign_op(st), "=") &&
           tt_host_known(C, akg_sketch_assign_value(st));
}

/* A statement that only defines a tile from what is already there. */
static bool is_pure(tt_ctx *C, const akg_sketch_stmt *st)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_ALLOC:
        return !is_scratch_alloc(st);
    case AKG_SKETCH_STMT_LOAD: {
        const akg_sketch_expr *t = akg_sketch_move_target(st);
        if (akg_sketch_expr_get_kind(t) != AKG_SKETCH_EXPR_NAME)
            return false;
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(t));
        return !n || n->kind == TN_TILE;
    }
    case AKG_SKETCH_STMT_ASSIGN:
        return !is_host_int(C, st);
    case AKG_SKETCH_STMT_PASS:
        return true;
    default:
        return false;
    }
}

static const char *move_base(const akg_sketch_expr *e)
{
    while (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_SUBSCRIPT)
        e = akg_sketch_expr_base(e);
    return e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(e)
                                                                    : NULL;
}

/* Whether st (or a statement inside it) writes memory `name`. */
static bool writes_memory(const akg_sketch_stmt *st, const char *name)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_STORE || k == AKG_SKETCH_STMT_LOAD) {
        const char *b = move_base(akg_sketch_move_target(st));
        return b && !strcmp(b, name);
    }
    if (k != AKG_SKETCH_STMT_FOR && k != AKG_SKETCH_STMT_IF)
        return false;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
            if (writes_memory(akg_sketch_stmt_body_at(st, w, i), name))
                return true;
    return false;
}

/* A re-issued load reads memory when the kernel runs: refuse it when a statement between the
 * load (frame fi, index i) and the kernel writes what it reads. */
static bool reload_is_stale(plan *P, int fi, size_t i, const akg_sketch_stmt *load)
{
    const char *m = move_base(akg_sketch_move_source(load));
    tt_name *n = m ? tt_lookup(P->C, m) : NULL;
    if (!n || (n->kind != TN_TENSOR && n->kind != TN_SCRATCH))
        return false;
    for (int fj = fi; fj < P->depth; fj++)
        for (size_t k = fj == fi ? i + 1 : 0; k < P->f[fj].idx; k++)
            if (writes_memory(blk_at(P, &P->f[fj], k), m))
                return true;
    return false;
}

/* The host statements a kernel must re-issue, in order. */
static size_t replay_select(plan *P, tt_names *needed, const akg_sketch_stmt **out, size_t cap,
                            const akg_sketch_stmt *kernel_at)
{
    tt_ctx *C = P->C;
    size_t n = 0;
    for (size_t i = 0; i < needed->n;)
        if (host_value(C, needed->v[i]))
            tt_names_remove(needed, needed->v[i]);
        else
            i++;
    for (int fi = P->depth - 1; fi >= 0 && needed->n; fi--) {
        frame *f = &P->f[fi];
        for (size_t i = f->idx; i-- > 0 && needed->n;) {
            const akg_sketch_stmt *st = blk_at(P, f, i);
            tt_names defs = {0};
            tt_stmt_defs(C, st, &defs);
            const char *hit = NULL;
            for (size_t k = 0; k < defs.n && !hit; k++)
                if (tt_names_has(needed, defs.v[k]))
                    hit = defs.v[k];
            if (!hit)
                continue;
            if (!is_pure(C, st)) {
                akg_sketch_span sp = akg_sketch_stmt_span(st);
                tt_fail(C, kernel_at,
                        "'%s', defined on the host by the statement at line %u, is read by this "
                        "kernel: only `slow` tiles (scratch tensors) and pure tile statements "
                        "(alloc, load, assign) cross into kernels",
                        hit, sp.line + 1);
                return 0;
            }
            if (n == cap) {
                tt_fail(C, kernel_at, "a kernel re-issues more than %zu host statements", cap);
                return 0;
            }
            if (akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_LOAD &&
                reload_is_stale(P, fi, i, st)) {
                akg_sketch_span sp = akg_sketch_stmt_span(st);
                tt_fail(
                    C, kernel_at,
                    "'%s', loaded on the host at line %u, is read by this kernel, but the memory "
                    "it was loaded from is written in between: load it where it is read",
                    hit, sp.line + 1);
                return 0;
            }
            out[n++] = st;
            for (size_t k = 0; k < defs.n; k++)
                tt_names_remove(needed, defs.v[k]);
            tt_names reads = {0};
            tt_stmt_reads(C, st, &reads);
            for (size_t k = 0; k < reads.n; k++)
                if (!host_value(C, reads.v[k]))
                    tt_names_add(C, needed, reads.v[k]);
        }
    }
    /* what is left is not defined before the kernel (dtype names, names the kernel defines) */
    for (size_t a = 0, b = n ? n - 1 : 0; n && a < b; a++, b--) {
        const akg_sketch_stmt *t = out[a];
        out[a] = out[b];
        out[b] = t;
    }
    return n;
}

/* Whether text holds name as a whole identifier. */
static bool mentions(const char *text, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = text; (p = strstr(p, name)) != NULL; p += len) {
        char before = p == text ? ' ' : p[-1];
        char after = p[len];
        bool word_b = (before >= 'a' && before <= 'z') || (before >= 'A' && before <= 'Z') ||
                      (before >= '0' && before <= '9') || before == '_';
        bool word_a = (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z') ||
                      (after >= '0' && after <= '9') || after == '_';
        if (!word_b && !word_a)
            return true;
    }
    return false;
}

/* One kernel: the statements stmts[0..n) (a parallel FOR when parallel). */
static void launch(plan *P, const akg_sketch_stmt *const *stmts, size_t n, bool parallel)
{
    tt_ctx *C = P->C;
    if (C->status)
        return;
    const akg_sketch_stmt *axes[MAX_AXES];
    int n_axes = 0;
    const akg_sketch_stmt *const *body = stmts;
    size_t n_body = n;
    if (parallel) {
        const akg_sketch_stmt *st = stmts[0];
        for (;;) {
            const akg_sketch_expr *a = akg_sketch_for_start(st), *b = akg_sketch_for_stop(st),
                                  *s = akg_sketch_for_step(st);
            bool known =
                tt_host_known(C, b) && (!a || tt_host_known(C, a)) && (!s || tt_host_known(C, s));
            if (!known) {
                if (!n_axes) {
                    tt_fail(C, st,
                            "the bounds of this parallel loop are not known on the host (the "
                            "grid is computed before the launch)");
                    return;
                }
                break;
            }
            axes[n_axes++] = st;
            if (n_axes == MAX_AXES || akg_sketch_stmt_body_count(st, 0) != 1 ||
                !tt_is_parallel(akg_sketch_stmt_body_at(st, 0, 0)))
                break;
            st = akg_sketch_stmt_body_at(st, 0, 0);
        }
        n_body = 0;
        body = NULL;
    }
    /* the host side: the grid */
    int k = C->kernels++;
    const char *kname = tt_strf(C, "_akg_k%d", k);
    akg_buf *host = C->out;
    int host_indent = C->indent;
    const char *grid = "1";
    for (int a = 0; a < n_axes; a++) {
        const akg_sketch_expr *s0 = akg_sketch_for_start(axes[a]),
                              *s1 = akg_sketch_for_stop(axes[a]),
                              *st = akg_sketch_for_step(axes[a]);
        const char *lo = s0 ? tt_index(C, s0, true) : "0";
        const char *hi = tt_index(C, s1, true);
        const char *step = st ? tt_index(C, st, true) : "1";
        tt_line(C, "_n%d = max(0, %s)", a,
                !strcmp(step, "1") ? (!strcmp(lo, "0") ? hi : tt_strf(C, "%s - %s", hi, lo))
                                   : tt_strf(C, "_akg_cdiv(%s - %s, %s)", hi, lo, step));
        grid = a ? tt_strf(C, "%s * _n%d", grid, a) : tt_strf(C, "_n%d", a);
    }
    /* the kernel body */
    akg_buf kb;
    akg_buf_init(&kb, 64u << 20);
    C->out = &kb;
    C->indent = 1;
    C->in_kernel = true;
    C->n_pads = 0;
    C->n_stored = 0;
    C->dot_tile = 0;
    size_t mark = tt_scope_mark(C);
    bool core_loop = C->target->core_bound && n_axes;
    if (core_loop) {
        /* one program per core, each taking every num_programs-th iteration */
        tt_line(C, "for _akg_it in range(tl.program_id(0).to(AKG_IDX), _akg_np, "
                   "tl.num_programs(0).to(AKG_IDX)):");
        C->indent++;
        tt_line(C, "_pid = _akg_it");
    }
    if (n_axes) {
        if (!core_loop)
            tt_line(C, "_pid = tl.program_id(0).to(AKG_IDX)");
        for (int a = n_axes - 1; a >= 0; a--) {
            const akg_sketch_expr *s0 = akg_sketch_for_start(axes[a]),
                                  *st = akg_sketch_for_step(axes[a]);
            const char *idx = "_pid";
            if (a > 0) {
                tt_line(C, "_i%d = _pid %% _n%d", a, a);
                tt_line(C, "_pid = _pid // _n%d", a);
                idx = tt_strf(C, "_i%d", a);
            }
            const char *lo = s0 ? tt_index(C, s0, false) : "0";
            const char *step = st ? tt_index(C, st, false) : "1";
            const char *var = akg_sketch_for_var(axes[a]);
            tt_line(C, "v_%s = %s%s%s", var, !strcmp(lo, "0") ? "" : tt_strf(C, "%s + ", lo), idx,
                    !strcmp(step, "1") ? "" : tt_strf(C, " * %s", step));
        }
        for (int a = 0; a < n_axes; a++) {
            tt_name *lv = tt_bind(C, akg_sketch_for_var(axes[a]), TN_KLOOP,
                                  tt_strf(C, "v_%s", akg_sketch_for_var(axes[a])));
            if (lv) {
                lv->start = akg_sketch_for_start(axes[a]);
                lv->stop = akg_sketch_for_stop(axes[a]);
            }
        }
        const akg_sketch_stmt *in = axes[n_axes - 1];
        n_body = akg_sketch_stmt_body_count(in, 0);
    }
    /* what the kernel reads from the host's statements */
    tt_names needed = {0}, defined = {0};
    for (int a = 0; a < n_axes; a++)
        tt_names_add(C, &defined, akg_sketch_for_var(axes[a]));
    for (size_t i = 0; i < n_body; i++) {
        const akg_sketch_stmt *s =
            n_axes ? akg_sketch_stmt_body_at(axes[n_axes - 1], 0, i) : body[i];
        tt_names r = {0};
        tt_stmt_reads(C, s, &r);
        for (size_t j = 0; j < r.n; j++)
            if (!tt_names_has(&defined, r.v[j]))
                tt_names_add(C, &needed, r.v[j]);
        tt_stmt_defs(C, s, &defined);
    }
    const akg_sketch_stmt *replay[256];
    size_t n_replay = replay_select(P, &needed, replay, 256, stmts[0]);
    if (n_replay)
        tt_line(C, "# re-issued host statements (pure: they only define tiles)");
    for (size_t i = 0; i < n_replay && !C->status; i++)
        tt_kernel_stmt(C, replay[i]);
    for (size_t i = 0; i < n_body && !C->status; i++)
        tt_kernel_stmt(C, n_axes ? akg_sketch_stmt_body_at(axes[n_axes - 1], 0, i) : body[i]);
    tt_scope_pop(C, mark);
    C->in_kernel = false;
    C->out = host;
    C->indent = host_indent;
    if (C->status || akg_buf_status(&kb)) {
        if (!C->status)
            tt_fail(C, NULL, "the generated module exceeds its size limit");
        akg_buf_free(&kb);
        return;
    }
    /* the signature: what the body mentions */
    const char *text = kb.data ? kb.data : "";
    const char *params = "", *args = "", *casts = "", *idx_tensors = "", *idx_ints = "";
    for (size_t i = 0; i < C->n_names; i++) {
        tt_name *nm = &C->names[i];
        if (nm->kind != TN_TENSOR && nm->kind != TN_SCRATCH && nm->kind != TN_SYMBOL &&
            nm->kind != TN_PARAM && nm->kind != TN_HOSTINT)
            continue;
        if (!((nm->py[0] >= 'A' && nm->py[0] <= 'Z') || (nm->py[0] >= 'a' && nm->py[0] <= 'z')))
            continue; /* a symbol bound to a constant: a literal in the kernel */
        if (tt_lookup(C, nm->name) != nm || !mentions(text, nm->py) || mentions(params, nm->py))
            continue;
        params = tt_strf(C, "%s%s%s", params, *params ? ", " : "", nm->py);
        args = tt_strf(C, "%s%s%s", args, *args ? ", " : "", nm->py);
        if (nm->kind == TN_SYMBOL || nm->kind == TN_HOSTINT) {
            casts = tt_strf(C, "%s    %s = tl.cast(%s, AKG_IDX)\n", casts, nm->py, nm->py);
            idx_ints = tt_strf(C, "%s%s%s", idx_ints, *idx_ints ? ", " : "", nm->py);
        } else if (nm->kind == TN_TENSOR || nm->kind == TN_SCRATCH) {
            idx_tensors = tt_strf(C, "%s%s%s", idx_tensors, *idx_tensors ? ", " : "", nm->py);
        }
    }
    for (int a = 1; a < n_axes; a++) {
        params = tt_strf(C, "%s%s_n%d", params, *params ? ", " : "", a);
        args = tt_strf(C, "%s%s_n%d", args, *args ? ", " : "", a);
        casts = tt_strf(C, "%s    _n%d = tl.cast(_n%d, AKG_IDX)\n", casts, a, a);
    }
    if (core_loop) {
        params = tt_strf(C, "%s%s_akg_np", params, *params ? ", " : "");
        args = tt_strf(C, "%s%s_np", args, *args ? ", " : "");
        casts = tt_strf(C, "%s    _akg_np = tl.cast(_akg_np, AKG_IDX)\n", casts);
    }
    /* the index type: a launch-time choice (_akg_idx in the prelude says when int32 is safe)
     * from every tensor and integer the kernel takes, and the grid its program ids run over */
    if (*casts || mentions(text, "AKG_IDX")) {
        if (n_axes)
            idx_ints =
                tt_strf(C, "%s%s%s", idx_ints, *idx_ints ? ", " : "", core_loop ? "_np" : grid);
        params = tt_strf(C, "%s%sAKG_IDX: tl.constexpr", params, *params ? ", " : "");
        args = tt_strf(C, "%s%sAKG_IDX=_akg_idx([%s], [%s])", args, *args ? ", " : "", idx_tensors,
                       idx_ints);
    }
    for (size_t i = 0; i < C->n_pads; i++) {
        params = tt_strf(C, "%s%s%s: tl.constexpr", params, *params ? ", " : "", C->pads[i].name);
        args = tt_strf(C, "%s%s%s=_akg_p2(%s)", args, *args ? ", " : "", C->pads[i].name,
                       C->pads[i].host);
    }
    akg_sketch_span sp = akg_sketch_stmt_span(stmts[0]);
    akg_buf_appendf(P->kernels, "\n\n# %s: sketch line %u (%s)\n@triton.jit\ndef %s(%s):\n%s%s",
                    kname, sp.line + 1,
                    n_axes ? tt_strf(C, "%d parallel loop%s, one program per iteration", n_axes,
                                     n_axes > 1 ? "s" : "")
                           : "host statements that write memory, one program",
                    kname, params, casts, text);
    akg_buf_free(&kb);
    if (core_loop) {
        tt_line(C, "_np = %s", grid);
        grid = "min(_np, _akg_cores(_dev))";
        tt_line(C, "if _np > 0:");
        C->indent++;
    } else if (n_axes) {
        tt_line(C, "if %s > 0:", grid);
        C->indent++;
    }
    /* a 128 x 128 (or larger) dot tile takes two warp groups: 8 warps keep the tensor cores
     * fed where Triton's default 4 spill the accumulator */
    if (C->target->launch_warps && C->dot_tile >= 128 * 128)
        args = tt_strf(C, "%s%snum_warps=8", args, *args ? ", " : "");
    tt_line(C, "%s[(%s,)](%s)", kname, grid, args);
    if (n_axes)
        C->indent--;
}

/* The value of a host condition when the bound constants decide it. */
static bool cond_value(tt_ctx *C, const akg_sketch_expr *e, int64_t *out)
{
    if (!e)
        return false;
    if (tt_const_value(C, e, out))
        return true;
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_BOOL) {
        *out = akg_sketch_expr_int(e);
        return true;
    }
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_UNARY &&
        !strcmp(akg_sketch_expr_text(e), "not")) {
        int64_t v;
        if (!cond_value(C, akg_sketch_expr_lhs(e), &v))
            return false;
        *out = !v;
        return true;
    }
    if (akg_sketch_expr_get_kind(e) != AKG_SKETCH_EXPR_BINARY)
        return false;
    const char *op = akg_sketch_expr_text(e);
    int64_t a, b;
    bool ka = cond_value(C, akg_sketch_expr_lhs(e), &a);
    bool kb = cond_value(C, akg_sketch_expr_rhs(e), &b);
    if (!strcmp(op, "and")) {
        if ((ka && !a) || (kb && !b)) {
            *out = 0;
            return true;
        }
        if (ka && kb) {
            *out = 1;
            return true;
        }
        return false;
    }
    if (!strcmp(op, "or")) {
        if ((ka && a) || (kb && b)) {
            *out = 1;
            return true;
        }
        if (ka && kb) {
            *out = 0;
            return true;
        }
        return false;
    }
    if (!ka || !kb)
        return false;
    if (!strcmp(op, "=="))
        *out = a == b;
    else if (!strcmp(op, "!="))
        *out = a != b;
    else if (!strcmp(op, "<"))
        *out = a < b;
    else if (!strcmp(op, "<="))
        *out = a <= b;
    else if (!strcmp(op, ">"))
        *out = a > b;
    else if (!strcmp(op, ">="))
        *out = a >= b;
    else
        return false;
    return true;
}

static void host_block(plan *P, const akg_sketch_stmt *parent, int which);

static void scratch(plan *P, const akg_sketch_stmt *st)
{
    tt_ctx *C = P->C;
    const char *name = akg_sketch_alloc_name(st);
    const char *dims = "";
    for (size_t d = 0; d < akg_sketch_alloc_rank(st); d++) {
        const akg_sketch_expr *e = akg_sketch_alloc_dim(st, d);
        if (!tt_host_known(C, e)) {
            tt_fail(C, st, "the extent '%s' of a `slow` tile on the host is not known on the host",
                    tt_expr_text(C, e));
            return;
        }
        dims = tt_strf(C, "%s%s, ", dims, tt_index(C, e, true));
    }
    akg_dtype dt = akg_sketch_alloc_dtype(st);
    if (!dt)
        dt = akg_sketch_value_dtype(C->sk, akg_sketch_value_find(C->sk, name));
    if (!dt)
        dt = AKG_DTYPE_F32;
    const char *fn = akg_sketch_alloc_has_hint(st, "init_zero")      ? "torch.zeros(("
                     : akg_sketch_alloc_has_hint(st, "init_neg_inf") ? "torch.full(("
                                                                     : "torch.empty((";
    tt_line(C, "X_%s = %s%s)%s, dtype=%s, device=_dev)  # `slow` tile: scratch in global memory",
            name, fn, dims,
            akg_sketch_alloc_has_hint(st, "init_neg_inf") ? ", float(\"-inf\")" : "",
            tt_dtype_torch(dt));
    tt_name *n = tt_bind(C, name, TN_SCRATCH, tt_strf(C, "X_%s", name));
    if (n) {
        n->alloc = st;
        n->dt = dt;
    }
}

static void host_stmt_range(plan *P, frame *f, size_t *i)
{
    tt_ctx *C = P->C;
    const akg_sketch_stmt *st = blk_at(P, f, *i);
    C->cur = st;
    f->idx = *i;
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (tt_is_parallel(st)) {
        launch(P, &st, 1, true);
        (*i)++;
        return;
    }
    if (k == AKG_SKETCH_STMT_FOR && tt_stmt_has_parallel(st)) {
        const akg_sketch_expr *a = akg_sketch_for_start(st), *b = akg_sketch_for_stop(st),
                              *s = akg_sketch_for_step(st);
        if (!tt_host_known(C, b) || (a && !tt_host_known(C, a)) || (s && !tt_host_known(C, s))) {
            tt_fail(C, st, "a loop around parallel loops needs bounds known on the host");
            return;
        }
        const char *var = akg_sketch_for_var(st);
        tt_line(C, "for v_%s in range(%s, %s, %s):", var, a ? tt_index(C, a, true) : "0",
                tt_index(C, b, true), s ? tt_index(C, s, true) : "1");
        size_t mark = tt_scope_mark(C);
        tt_name *n = tt_bind(C, var, TN_HOSTINT, tt_strf(C, "v_%s", var));
        if (n) {
            n->start = a;
            n->stop = b;
        }
        C->indent++;
        tt_line(C, "pass");
        host_block(P, st, 0);
        C->indent--;
        tt_scope_pop(C, mark);
        (*i)++;
        return;
    }
    if (k == AKG_SKETCH_STMT_IF) {
        const akg_sketch_expr *cond = akg_sketch_if_cond(st);
        int64_t v;
        if (cond_value(C, cond, &v)) {
            if (v || akg_sketch_stmt_body_count(st, 1)) {
                tt_line(C, "# if %s: decided by the bound constants (%s)", tt_expr_text(C, cond),
                        v ? "taken" : "the else branch");
                host_block(P, st, v ? 0 : 1);
            }
            (*i)++;
            return;
        }
        if (tt_host_known(C, cond)) {
            for (int w = 0; w < 2; w++) {
                if (w && !akg_sketch_stmt_body_count(st, 1))
                    break;
                tt_line(C, w ? "else:" : "if %s:", tt_index(C, cond, true));
                size_t mark = tt_scope_mark(C);
                C->indent++;
                tt_line(C, "pass");
                host_block(P, st, w);
                C->indent--;
                tt_scope_pop(C, mark);
            }
            (*i)++;
            return;
        }
        if (tt_stmt_has_parallel(st)) {
            tt_fail(C, st, "an `if` around parallel loops must test integers known on the host");
            return;
        }
    }
    if (is_scratch_alloc(st)) {
        scratch(P, st);
        (*i)++;
        return;
    }
    if (is_host_int(C, st)) {
        const char *name = akg_sketch_assign_target(st, 0);
        const akg_sketch_expr *val = akg_sketch_assign_value(st);
        tt_line(C, "v_%s = %s", name, tt_index(C, val, true));
        tt_name *n = tt_bind(C, name, TN_HOSTINT, tt_strf(C, "v_%s", name));
        if (n)
            n->def = val;
        (*i)++;
        return;
    }
    if (is_pure(C, st)) {
        (*i)++;
        return;
    }
    /* a run of statements that write memory: one program */
    size_t j = *i, n = blk_count(P, f);
    const akg_sketch_stmt *run[256];
    size_t nr = 0;
    while (j < n && nr < 256) {
        const akg_sketch_stmt *s = blk_at(P, f, j);
        if (tt_stmt_has_parallel(s) || is_scratch_alloc(s) || is_host_int(C, s))
            break;
        if (akg_sketch_stmt_get_kind(s) == AKG_SKETCH_STMT_IF &&
            (cond_value(C, akg_sketch_if_cond(s), &(int64_t){0}) ||
             tt_host_known(C, akg_sketch_if_cond(s))))
            break;
        run[nr++] = s;
        j++;
    }
    while (nr > 1 && is_pure(C, run[nr - 1])) /* trailing pure statements: nothing to run */
        nr--;
    launch(P, run, nr, false);
    *i += nr;
}

static void host_block(plan *P, const akg_sketch_stmt *parent, int which)
{
    tt_ctx *C = P->C;
    if (P->depth == MAX_DEPTH) {
        tt_fail(C, parent, "host control flow nested deeper than %d", MAX_DEPTH);
        return;
    }
    frame *f = &P->f[P->depth++];
    f->parent = parent;
    f->which = which;
    f->idx = 0;
    size_t n = blk_count(P, f);
    for (size_t i = 0; i < n && !C->status;)
        host_stmt_range(P, f, &i);
    P->depth--;
}

static const char prelude[] =
    "import triton\n"
    "import triton.language as tl\n"
    "\n"
    "\n"
    "# NaN-propagating combines (PyTorch's max/min), the product, floor division and modulo\n"
    "@triton.jit\n"
    "def _akg_maxnan(a, b):\n"
    "    return tl.where((a != a) | (a > b), a, b)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_minnan(a, b):\n"
    "    return tl.where((a != a) | (a < b), a, b)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_mul(a, b):\n"
    "    return a * b\n"
    "\n"
    "\n"
    "# exclusive scans: pairs (running value, value before the element), combined in order\n"
    "@triton.jit\n"
    "def _akg_excl_add(a, ea, b, eb):\n"
    "    return a + b, a + eb\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_excl_mul(a, ea, b, eb):\n"
    "    return a * b, a * eb\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_fdiv(a, b):\n"
    "    q = a // b\n"
    "    return tl.where(((a % b) != 0) & ((a < 0) != (b < 0)), q - 1, q)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_fmod(a, b):\n"
    "    r = a % b\n"
    "    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)\n"
    "\n"
    "\n"
    "# tanh, expm1 and log1p accurate near 0 (series there), without libdevice\n"
    "@triton.jit\n"
    "def _akg_tanh(x):\n"
    "    ax = tl.abs(x)\n"
    "    t = tl.exp(-2.0 * ax)\n"
    "    r = (1.0 - t) / (1.0 + t)\n"
    "    x2 = x * x\n"
    "    s = x * (1.0 + x2 * (-0.3333333333333333 + x2 * (0.13333333333333333 + x2 * "
    "-0.05396825396825397)))\n"
    "    return tl.where(ax < 0.0625, s, tl.where(x < 0, -r, r))\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_expm1(x):\n"
    "    s = x * (1.0 + x * (0.5 + x * (0.16666666666666666 + x * 0.041666666666666664)))\n"
    "    return tl.where(tl.abs(x) < 0.01, s, tl.exp(x) - 1.0)\n"
    "\n"
    "\n"
    "@triton.jit\n"
    "def _akg_log1p(x):\n"
    "    s = x * (1.0 + x * (-0.5 + x * (0.3333333333333333 + x * -0.25)))\n"
    "    return tl.where(tl.abs(x) < 0.01, s, tl.log(1.0 + x))\n"
    "\n"
    "\n"
    "# round half to even (exact below 2**23, where every float32 is an integer already)\n"
    "@triton.jit\n"
    "def _akg_rint(x):\n"
    "    r = tl.floor(x + 0.5)\n"
    "    tie = (r - x) == 0.5\n"
    "    odd = (r - 2.0 * tl.floor(r * 0.5)) != 0\n"
    "    r = tl.where(tie & odd, r - 1.0, r)\n"
    "    return tl.where(tl.abs(x) < 8388608.0, r, x)\n"
    "\n"
    "\n"
    "def _akg_cdiv(a, b):\n"
    "    return -(-a // b)\n"
    "\n"
    "\n"
    "# The index type of a launch (the kernels' AKG_IDX): int32 when every tensor the kernel\n"
    "# takes has at most 2**29 elements and every integer it takes (symbols, host integers, grid\n"
    "# counts) is at most 2**29 in magnitude, else int64. Positions a kernel compares, divides or\n"
    "# loops over (a loop index, `start + r * step` along a tile, a dimension or a flattened\n"
    "# extent) are then a few such quantities plus tile offsets (a tile is at most 2**20\n"
    "# elements), masked-out lanes and the last step of a grid-stride loop included: below 2**31.\n"
    "# An offset (a sum of position * stride) only adds and multiplies, which wrap modulo 2**32,\n"
    "# so a lane the mask keeps gets its exact offset (in [0, numel)) even where a product\n"
    "# wraps; a masked-out lane's offset may wrap, but masks test positions, never offsets, and\n"
    "# its address is never dereferenced. Assumed: a product of symbols that a kernel compares\n"
    "# or loops over is a flattened extent of one of its tensors (so at most its numel).\n"
    "_AKG_IDX_LIMIT = 2 ** 29\n"
    "\n"
    "\n"
    "def _akg_idx(tensors, ints):\n"
    "    \"\"\"tl.int32 when the launch's tensors and integers are safely small, else "
    "tl.int64.\"\"\"\n"
    "    if all(t.numel() <= _AKG_IDX_LIMIT for t in tensors) and all(\n"
    "            -_AKG_IDX_LIMIT <= int(v) <= _AKG_IDX_LIMIT for v in ints):\n"
    "        return tl.int32\n"
    "    return tl.int64\n";

/* The host's pad of a block dimension, with the target's limit (printf: limit, owner, limit). */
static const char prelude_p2[] =
    "\n"
    "\n"
    "def _akg_p2(n):\n"
    "    \"\"\"The padded extent of a block dimension whose extent is at most n.\"\"\"\n"
    "    n = max(1, int(n))\n"
    "    if n > %ld:\n"
    "        raise ValueError(\"a tile dimension of %%d elements is above %s block limit "
    "(%ld): the sketch must tile it\" %% n)\n"
    "    return triton.next_power_of_2(n)\n";

/* Core-bound targets: the grid is at most the device's core count (each program then loops
 * over the flattened iterations), read once per device from the driver. */
static const char prelude_cores[] =
    "\n"
    "\n"
    "_AKG_CORES = {}\n"
    "\n"
    "\n"
    "def _akg_cores(dev):\n"
    "    \"\"\"The vector cores of dev: a program is bound to a physical core.\"\"\"\n"
    "    key = str(dev)\n"
    "    if key not in _AKG_CORES:\n"
    "        props = triton.runtime.driver.active.utils.get_device_properties(dev.index or 0)\n"
    "        _AKG_CORES[key] = max(1, int(props.get(\"num_vectorcore\") or "
    "props.get(\"num_aicore\") or 1))\n"
    "    return _AKG_CORES[key]\n";

#define MAX_CONST_SYMBOLS TT_MAX_CONSTS

/* The symbols the bind: section binds to integer expressions of constants (`I = 1`): the
 * wrapper passes exactly that value, so the kernels take it as a compile-time fact. */
static size_t constant_symbols(const akg_sketch *sk, akg_sketch_binding *out)
{
    size_t n = 0;
    for (size_t i = 0; i < akg_sketch_bind_count(sk) && n < MAX_CONST_SYMBOLS; i++) {
        const char *name = akg_sketch_bind_name(sk, i);
        bool symbol = false;
        for (size_t s = 0; s < akg_sketch_symbol_count(sk) && !symbol; s++)
            symbol = !strcmp(akg_sketch_symbol_name(sk, s), name);
        const akg_sketch_expr *e = akg_sketch_bind_value(sk, i);
        if (!symbol || !e || akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL)
            continue;
        int64_t v;
        if (akg_sketch_expr_eval(sk, e, out, n, &v) == 0) {
            out[n].name = name;
            out[n].value = v;
            n++;
        }
    }
    return n;
}

void tt_lower_module(tt_ctx *C, akg_buf *out, const char *source)
{
    const akg_sketch *sk = C->sk;
    C->n_consts = constant_symbols(sk, C->consts);
    akg_buf host, kernels;
    akg_buf_init(&host, 64u << 20);
    akg_buf_init(&kernels, 64u << 20);
    plan P = {.C = C, .kernels = &kernels, .host = &host};
    C->out = &host;
    C->indent = 0;
    tt_line(C, "def akg_kernel(tensors, symbols, params):");
    C->indent = 1;
    tt_line(C, "\"\"\"The sketch's body: tensors, symbols and params in declaration order.\"\"\"");
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        const char *name = akg_sketch_const_name(sk, i);
        int64_t v;
        tt_name *n = NULL;
        if (akg_sketch_const_int(sk, i, &v) == 0) {
            n = tt_bind(C, name, TN_CONST, tt_strf(C, "%lld", (long long)v));
            if (n)
                n->dt = AKG_DTYPE_I64;
            continue;
        }
        const akg_sketch_expr *e = akg_sketch_const_value(sk, i);
        if (akg_sketch_const_is_tunable(sk, i))
            e = akg_sketch_const_candidate(sk, i, akg_sketch_const_choice(sk, i));
        if (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_FLOAT) {
            n = tt_bind(C, name, TN_CONST, tt_strf(C, "%.17g", akg_sketch_expr_float(e)));
            if (n)
                n->dt = AKG_DTYPE_F64;
        }
    }
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
        const char *name = akg_sketch_tensor_name(sk, i);
        tt_line(C, "T_%s = tensors[%zu]", name, i);
        tt_name *n = tt_bind(C, name, TN_TENSOR, tt_strf(C, "T_%s", name));
        if (n) {
            n->tensor = (long)i;
            n->dt = akg_sketch_tensor_dtype(sk, i);
        }
    }
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++) {
        const char *name = akg_sketch_symbol_name(sk, i);
        const char *py = tt_strf(C, "S_%s", name);
        tt_line(C, "%s = int(symbols[%zu])", py, i);
        for (size_t k = 0; k < C->n_consts; k++)
            if (!strcmp(C->consts[k].name, name))
                py = tt_strf(C, "%lld", (long long)C->consts[k].value);
        tt_bind(C, name, TN_SYMBOL, py);
    }
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
        const char *name = akg_sketch_param_name(sk, i);
        akg_dtype dt = akg_sketch_param_dtype(sk, i);
        tt_line(C, "P_%s = float(params[%zu])", name, i);
        tt_name *n = tt_bind(C, name, TN_PARAM, tt_strf(C, "P_%s", name));
        if (n)
            n->dt = dt ? dt : AKG_DTYPE_F32;
    }
    if (akg_sketch_tensor_count(sk))
        tt_line(C, "_dev = T_%s.device", akg_sketch_tensor_name(sk, 0));
    host_block(&P, NULL, 0);
    tt_line(C, "return 0");

    const tt_target *T = C->target;
    akg_buf_appendf(out,
                    "# %s: generated by akg from %s (%s backend): every loop, tile "
                    "and\n# computation below is the sketch's, lowered by the language's "
                    "semantics.\n# Entry: akg_kernel(tensors, symbols, params), in the sketch's "
                    "declaration order.\n",
                    akg_sketch_name(sk), source ? source : "its sketch", T->label);
    akg_buf_appendf(out, "import torch\n%s", T->imports);
    akg_buf_puts(out, prelude);
    akg_buf_appendf(out, prelude_p2, T->block_limit, T->block_owner, T->block_limit);
    if (T->core_bound)
        akg_buf_puts(out, prelude_cores);
    akg_buf_append(out, kernels.data ? kernels.data : "", kernels.len);
    akg_buf_puts(out, "\n\n");
    akg_buf_append(out, host.data ? host.data : "", host.len);
    if (!C->status && (akg_buf_status(&host) || akg_buf_status(&kernels) || akg_buf_status(out)))
        tt_fail(C, NULL, "the generated module exceeds its size limit");
    akg_buf_free(&host);
    akg_buf_free(&kernels);
}
