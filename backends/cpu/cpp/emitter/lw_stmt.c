/*
 * lw_stmt.c: lowering the statements of a checked sketch.
 *
 * Tiles: `alloc` with a tier gives storage in that tier; a tile with no tier (or "fastest")
 * that is filled by one whole load and otherwise only read is a view (its data moves from
 * memory to registers as it is consumed); a "fastest" [MR, NR] tile that a gemm accumulates
 * into is a register tile of vectors. A rank-2 buffer that the sketch only reads in MR-row
 * (NR-column) slices is laid out in MR-row (NR-column) panels, so that each slice a gemm reads
 * is contiguous. Loops, ifs and the scoping rules are in lw_control.c and lw_scope.c.
 *
 * Two statement-level fusions keep work from being done twice:
 *   - a computation bound to a name, read by a statement that computes all of it (a store, a
 *     reduction, a destination) and read again later, is written into a buffer by that
 *     statement's loops as they compute it, and read from there afterwards (e = exp(...);
 *     s = reduce_sum(e); store(mul(e, recip(s)) -> y) computes exp once);
 *   - consecutive statements each with one reduction of an operand the run does not change,
 *     of one shape over the same trailing axes (sums of t and t * t), are computed in one loop
 *     before the first of them, each statement then taking its result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw_stmt.h"

void lw_set_hints(lw_ctx *L, const akg_sketch_stmt *st)
{
    const char *vec = akg_sketch_stmt_hint_value(st, "vectorize");
    if (vec) {
        L->vectorize = true;
        for (size_t h = 0; h < akg_sketch_stmt_hint_count(st); h++) {
            if (strcmp(akg_sketch_stmt_hint_arg(st, h, 0), "vectorize"))
                continue;
            for (size_t a = 1; a < akg_sketch_stmt_hint_arg_count(st, h); a++) {
                const char *w = akg_sketch_stmt_hint_arg(st, h, a);
                if (w[0] >= '0' && w[0] <= '9')
                    L->simdlen = atoll(w);
            }
        }
    }
    const char *m = akg_sketch_stmt_hint_value(st, "math");
    if (m)
        L->precise = !strcmp(m, "precise");
}

static lw_tier alloc_tier(const akg_sketch_stmt *st)
{
    switch (akg_sketch_alloc_tier(st)) {
    case AKG_SKETCH_TIER_FASTEST: return TIER_FASTEST;
    case AKG_SKETCH_TIER_FAST: return TIER_FAST;
    case AKG_SKETCH_TIER_MEDIUM: return TIER_MEDIUM;
    case AKG_SKETCH_TIER_SLOW: return TIER_SLOW;
    default: return TIER_NONE;
    }
}

static lw_val *lookup_storage(lw_ctx *L, const char *name)
{
    lw_val *v = lw_lookup(L, name);
    if (!v)
        lw_fail(L, "'%s' is not a tensor or tile here", name);
    return v;
}

/* Fills buffer b with 0 (zero) or -inf (an init_zero or init_neg_inf allocation). */
static void init_fill(lw_ctx *L, lw_val *b, bool zero)
{
    if (b->reg) {
        lw_line(L, "for (int q = 0; q < %lld; ++q) for (int w = 0; w < %lld; ++w) "
                   "%s[q][w] = akg_splat<akg_v%lld>(%s);",
                (long long)b->dim[0].k, (long long)(b->dim[1].k / b->vw), b->ptr,
                (long long)b->vw, zero ? "0.0f" : "-INFINITY");
        return;
    }
    bool known;
    int64_t n;
    const char *count = lw_count(L, b->rank, b->dim, &known, &n);
    lw_line(L, "for (int64_t q = 0; q < %s; ++q) %s[q] = %s;", count, b->ptr,
            zero ? lw_float_lit(L, 0, lw_comptype(b->dt))
                 : lw_strf(L, "-std::numeric_limits<%s>::infinity()", lw_comptype(b->dt)));
}

static void do_alloc(lw_ctx *L, const akg_sketch_stmt *st)
{
    const char *name = akg_sketch_alloc_name(st);
    int rank = (int)akg_sketch_alloc_rank(st);
    if (rank > LW_MAXR) {
        lw_fail(L, "tile '%s' has rank %d; the limit is %d", name, rank, LW_MAXR);
        return;
    }
    lw_dim dim[LW_MAXR];
    for (int d = 0; d < rank; d++)
        dim[d] = lw_index_dim(L, akg_sketch_alloc_dim(st, (size_t)d));
    akg_dtype dt = akg_sketch_alloc_dtype(st);
    if (!dt) {
        long vi = akg_sketch_value_find(L->sk, name);
        dt = vi >= 0 ? akg_sketch_value_dtype(L->sk, vi) : AKG_DTYPE_UNKNOWN;
    }
    lw_tier tier = alloc_tier(st);
    bool zero = akg_sketch_alloc_has_hint(st, "init_zero");
    bool neg_inf = akg_sketch_alloc_has_hint(st, "init_neg_inf");
    lw_frame *f = lw_cur_frame(L);
    /* a tile a loop or if keeps for this name (it is read after the construct, or in the next
     * iteration): the allocation is that storage */
    lw_val *cur = lw_lookup(L, name);
    if (cur && cur->kind == LV_BUF && cur->stable && !strcmp(cur->owner, name)) {
        bool same = cur->rank == rank && (!dt || dt == cur->dt);
        for (int d = 0; same && d < rank; d++)
            same = lw_dim_equal(cur->dim[d], dim[d]);
        if (!same) {
            lw_fail(L, "tile '%s' is allocated with another shape or dtype than it has before "
                       "this loop or if, and read after it; the Coder keeps one buffer for it, "
                       "so keep its shape and dtype",
                    name);
            return;
        }
        if (zero || neg_inf)
            init_fill(L, cur, zero);
        return;
    }
    if ((tier == TIER_NONE || tier == TIER_FASTEST) && !zero && !neg_inf &&
        lw_view_eligible(L, name)) {
        lw_val *v = lw_new(L, LV_VIEW); /* filled by the load */
        if (!v)
            return;
        v->dt = dt;
        v->rank = rank;
        for (int d = 0; d < rank; d++)
            v->dim[d] = dim[d];
        lw_bind(L, name, v);
        return;
    }
    /* a register tile of vectors: a gemm accumulates into it, or an elementwise update does
     * (`acc = add(acc, mul(t, w))`: a few vectors kept in registers across the loop) */
    const akg_sketch_stmt *g = NULL;
    if (tier == TIER_FASTEST && rank == 2 && dim[0].known && dim[1].known && dim[0].k <= 16 &&
        (dt == AKG_DTYPE_F32 || !dt)) {
        g = lw_find_gemm_acc(L, &f->blk, f->pos + 1, name, 0);
        if (!g && dim[0].k * dim[1].k <= 16 * 16)
            g = lw_find_update(L, &f->blk, f->pos + 1, name, 0);
    }
    if (g) {
        int64_t vw = 8;
        for (size_t h = 0; h < akg_sketch_stmt_hint_count(g); h++)
            if (!strcmp(akg_sketch_stmt_hint_arg(g, h, 0), "vectorize"))
                for (size_t a = 1; a < akg_sketch_stmt_hint_arg_count(g, h); a++) {
                    const char *w = akg_sketch_stmt_hint_arg(g, h, a);
                    if (w[0] >= '0' && w[0] <= '9')
                        vw = atoll(w);
                }
        if (vw != 4 && vw != 8 && vw != 16)
            vw = 8;
        if (dim[1].k % vw == 0) {
            lw_note_width(L, vw, 32);
            lw_val *r = lw_new(L, LV_BUF);
            if (!r)
                return;
            r->dt = AKG_DTYPE_F32;
            r->rank = 2;
            r->dim[0] = dim[0];
            r->dim[1] = dim[1];
            r->tier = TIER_FASTEST;
            r->reg = true;
            r->vw = vw;
            r->ptr = lw_strf(L, "%s%d", name, r->id);
            lw_line(L, "akg_v%lld %s[%lld][%lld];", (long long)vw, r->ptr, (long long)dim[0].k,
                    (long long)(dim[1].k / vw));
            if (zero || neg_inf)
                init_fill(L, r, zero);
            lw_bind(L, name, r);
            return;
        }
    }
    lw_layout layout = LAYOUT_ROW;
    int64_t P = 0;
    if (rank == 2 && tier != TIER_FASTEST) {
        int p = lw_slice_pattern(L, &f->blk, f->pos + 1, name, &P, 0);
        if ((p == 1 || p == 2) && P > 1)
            layout = p == 1 ? LAYOUT_PANEL_A : LAYOUT_PANEL_B;
    }
    lw_val *b = lw_buffer_layout(L, dt ? dt : AKG_DTYPE_F32, rank, dim,
                                 tier == TIER_NONE ? TIER_FAST : tier, name, layout, P);
    if (!b)
        return;
    if (zero || neg_inf)
        init_fill(L, b, zero);
    lw_bind(L, name, b);
}

/* Storage to read region `src` from: a tensor or buffer; a lazy source is materialised. */
static lw_val *source_storage(lw_ctx *L, const akg_sketch_expr *src)
{
    const akg_sketch_expr *base = akg_sketch_expr_get_kind(src) == AKG_SKETCH_EXPR_SUBSCRIPT
                                      ? akg_sketch_expr_base(src)
                                      : src;
    if (akg_sketch_expr_get_kind(base) != AKG_SKETCH_EXPR_NAME) {
        lw_fail(L, "a load reads a tensor or tile, optionally sliced");
        return NULL;
    }
    const char *name = akg_sketch_expr_text(base);
    lw_val *b = lookup_storage(L, name);
    if (!b)
        return NULL;
    if (b->kind == LV_VIEW && !b->base) {
        lw_fail(L, "tile '%s' is read before anything is loaded into it", name);
        return NULL;
    }
    if (b->kind == LV_VIEW || b->kind == LV_EXPR) {
        b = lw_force(L, b, TIER_FAST);
        lw_bind(L, name, b);
    }
    if (b && b->kind == LV_SCALAR) {
        lw_fail(L, "'%s' is a scalar; loads read tensors and tiles", name);
        return NULL;
    }
    return b;
}

static const char *other_literal(lw_ctx *L, const akg_sketch_stmt *st, akg_dtype dt)
{
    const akg_sketch_expr *o = akg_sketch_move_option(st, "other");
    const char *ct = lw_comptype(dt);
    if (!o)
        return lw_float_lit(L, 0, ct);
    lw_val *v = lw_value_of(L, o);
    if (!v || v->kind != LV_SCALAR) {
        lw_fail(L, "other= must be a scalar");
        return "0";
    }
    return lw_strf(L, "((%s)(%s))", ct, v->c);
}

static void do_load(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *src = akg_sketch_move_source(st);
    const akg_sketch_expr *tgt = akg_sketch_move_target(st);
    bool whole;
    const char *tname = lw_target_name(tgt, &whole);
    if (!tname) {
        lw_fail(L, "a load writes into an allocated tile");
        return;
    }
    lw_val *t = lookup_storage(L, tname);
    lw_val *base = source_storage(L, src);
    if (!t || !base)
        return;
    lw_val *mask = NULL;
    const akg_sketch_expr *me = akg_sketch_move_option(st, "mask");
    if (me) {
        mask = lw_value_of(L, me);
        if (!mask)
            return;
    }
    if (t->kind == LV_VIEW && !t->base && whole) {
        /* a view: nothing moves until the data is consumed */
        lw_val *v = lw_view(L, base, src, t->dt ? t->dt : base->dt, t->rank, t->dim);
        if (!v)
            return;
        v->other = other_literal(L, st, v->dt);
        v->mask = mask;
        v->simd = L->vectorize;
        lw_bind(L, tname, v);
        return;
    }
    t = lw_writable(L, tname, t);
    if (!t)
        return;
    if (t->kind != LV_BUF) {
        lw_fail(L, "tile '%s' holds a computed value; loads write into allocated tiles", tname);
        return;
    }
    /* the region of t written, and the data read into it */
    lw_val *dst = NULL;
    lw_dim shape[LW_MAXR];
    int rank;
    if (whole) {
        rank = t->rank;
        for (int d = 0; d < rank; d++)
            shape[d] = t->dim[d];
    } else {
        rank = lw_region_shape(L, t, tgt, shape);
        dst = lw_view(L, t, tgt, t->dt, rank, shape);
        if (!dst)
            return;
    }
    lw_val *v = lw_view(L, base, src, t->dt, rank, shape);
    if (!v)
        return;
    v->other = other_literal(L, st, t->dt);
    v->mask = mask;
    if (lw_depends(v, t, 0)) { /* a tile loaded from itself: read everything first */
        v = lw_force(L, v, TIER_FAST);
    }
    lw_force_dependents(L, t, NULL, tname);
    if (whole) {
        lw_assign_into(L, t, v);
    } else {
        lw_store(L, dst, v, NULL);
    }
}

/* Whether a load or store lists `hint` in its llm_hint=[...]. */
static bool move_hint(const akg_sketch_stmt *st, const char *hint)
{
    const akg_sketch_expr *h = akg_sketch_move_option(st, "llm_hint");
    if (!h)
        return false;
    if (akg_sketch_expr_get_kind(h) == AKG_SKETCH_EXPR_STRING)
        return !strcmp(akg_sketch_expr_text(h), hint);
    for (size_t i = 0; i < akg_sketch_expr_item_count(h); i++) {
        const akg_sketch_expr *it = akg_sketch_expr_item(h, i);
        if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_STRING &&
            !strcmp(akg_sketch_expr_text(it), hint))
            return true;
    }
    return false;
}

static void do_store(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *tgt = akg_sketch_move_target(st);
    bool whole;
    const char *tname = lw_target_name(tgt, &whole);
    if (!tname) {
        lw_fail(L, "a store writes into a tensor or tile");
        return;
    }
    lw_val *v = lw_value_of(L, akg_sketch_move_source(st));
    lw_val *base = lookup_storage(L, tname);
    if (!v || !base)
        return;
    base = lw_writable(L, tname, base);
    if (!base)
        return;
    if (base->kind != LV_TENSOR && base->kind != LV_BUF) {
        lw_fail(L, "'%s' is not storage the kernel can write; store into a tensor or an "
                   "allocated tile",
                tname);
        return;
    }
    if (v->kind == LV_SCALAR) {
        lw_fail(L, "store writes a tile; wrap a scalar with fill([1], value)");
        return;
    }
    lw_val *mask = NULL;
    const akg_sketch_expr *me = akg_sketch_move_option(st, "mask");
    if (me && !(mask = lw_value_of(L, me)))
        return;
    lw_val *dst = lw_view(L, base, tgt, base->dt, v->rank, v->dim);
    if (!dst)
        return;
    if (!lw_same_access(v, base, dst, 0) || (mask && !lw_same_access(mask, base, dst, 0)))
        v = lw_force(L, v, TIER_FAST);
    lw_force_dependents(L, base, v, tname);
    L->nontemporal = move_hint(st, "nontemporal");
    lw_store(L, dst, v, mask);
    L->nontemporal = false;
}

/* Binds name to v, or writes v into name's storage when that storage must persist (a
 * name carried across a loop or an if). */
static void assign_name(lw_ctx *L, const char *name, lw_val *v)
{
    lw_val *cur = lw_lookup(L, name);
    if (cur && cur->stable && !strcmp(cur->owner, name)) {
        if (cur->kind == LV_SCALAR) {
            if (v->kind != LV_SCALAR) {
                lw_fail(L, "'%s' is a scalar before this loop or if and a tile inside it", name);
                return;
            }
            lw_line(L, "%s = %s;", cur->c, v->c);
            return;
        }
        if (v == cur)
            return;
        bool same = v->rank == cur->rank;
        for (int d = 0; same && d < v->rank; d++)
            same = lw_dim_equal(v->dim[d], cur->dim[d]);
        if (!same && v->kind != LV_SCALAR) {
            lw_fail(L, "'%s' changes shape inside a loop or if; the Coder keeps one buffer for "
                       "it, so keep its shape",
                    name);
            return;
        }
        if (!lw_same_access(v, cur, NULL, 0))
            v = lw_force(L, v, TIER_FAST);
        lw_force_dependents(L, cur, v, name);
        lw_assign_into(L, cur, v);
        return;
    }
    lw_bind(L, name, v);
}

static void do_assign(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *e = akg_sketch_assign_value(st);
    const char *op = akg_sketch_assign_op(st);
    size_t nt = akg_sketch_assign_target_count(st);
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_TUPLE) {
        lw_val *vals[16];
        if (nt > 16 || nt != akg_sketch_expr_item_count(e)) {
            lw_fail(L, "tuple assignment of %zu names", nt);
            return;
        }
        for (size_t i = 0; i < nt; i++)
            if (!(vals[i] = lw_value_of(L, akg_sketch_expr_item(e, i))))
                return;
        for (size_t i = 0; i < nt; i++)
            assign_name(L, akg_sketch_assign_target(st, i), vals[i]);
        return;
    }
    const char *name = akg_sketch_assign_target(st, 0);
    lw_val *cur = lw_lookup(L, name);
    /* `acc = gemm(a, b, acc)` accumulates in place (the whole right-hand side: nothing else
     * reads the old acc); what still reads acc's storage is kept first */
    const akg_sketch_expr *acc = NULL;
    if (!strcmp(op, "=") && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL &&
        !strcmp(akg_sketch_expr_text(e), "gemm"))
        acc = akg_sketch_expr_item_count(e) > 2 ? akg_sketch_expr_item(e, 2)
                                                : akg_sketch_expr_kwarg(e, "acc");
    if (cur && cur->kind == LV_BUF && acc &&
        akg_sketch_expr_get_kind(acc) == AKG_SKETCH_EXPR_NAME &&
        !strcmp(akg_sketch_expr_text(acc), name)) {
        cur = lw_writable(L, name, cur);
        if (!cur)
            return;
        lw_force_dependents(L, cur, NULL, name);
        L->gemm_in_place = cur;
    }
    lw_val *v = lw_value_of(L, e);
    L->gemm_in_place = NULL;
    if (!v)
        return;
    if (strcmp(op, "=")) {
        static const struct {
            const char *aug, *op;
        } m[] = {{"+=", "add"}, {"-=", "sub"}, {"*=", "mul"}, {"/=", "div"}};
        const char *opn = NULL;
        for (size_t i = 0; i < 4; i++)
            if (!strcmp(m[i].aug, op))
                opn = m[i].op;
        if (!cur || !opn) {
            lw_fail(L, "'%s' is updated with %s before it has a value", name, op);
            return;
        }
        lw_val *args[2] = {cur, v};
        v = lw_elementwise(L, opn, args, 2);
        if (!v)
            return;
    }
    if (v->kind == LV_SCALAR && !(cur && cur->stable && !strcmp(cur->owner, name))) {
        /* name the scalar: later statements read one variable, not the expression again */
        const char *var = lw_fresh(L, "sc");
        lw_line(L, "const %s %s = %s;", lw_comptype(v->dt), var, v->c);
        lw_val *s = lw_scalar(L, v->dt, var);
        if (!s)
            return;
        s->nonneg = v->nonneg;
        s->ub = v->ub;
        s->upper = v->upper;
        s->loopvar = L->saw_loopvar;
        v = s;
    }
    assign_name(L, name, v);
}

static void do_call(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *call = akg_sketch_call_expr(st);
    const akg_sketch_expr *d = lw_call_dst(call);
    if (!d || akg_sketch_expr_get_kind(d) != AKG_SKETCH_EXPR_NAME) {
        lw_fail(L, "the result of %s() is discarded", akg_sketch_expr_text(call));
        return;
    }
    const char *name = akg_sketch_expr_text(d);
    lw_val *t = lookup_storage(L, name);
    if (!t)
        return;
    t = lw_writable(L, name, t);
    if (!t)
        return;
    if (t->kind == LV_VIEW && !t->base) {
        lw_fail(L, "destination '%s' was allocated without a tier and is only written here; "
                   "give it a tier (\"fast\") or assign the result",
                name);
        return;
    }
    if (t->kind != LV_BUF) {
        lw_fail(L, "destination '%s' holds a computed value; destinations are allocated tiles",
                name);
        return;
    }
    if (!strcmp(akg_sketch_expr_text(call), "gemm")) {
        lw_val *a = lw_value_of(L, akg_sketch_expr_item(call, 0));
        lw_val *b = lw_value_of(L, akg_sketch_expr_item(call, 1));
        if (!a || !b)
            return;
        const akg_sketch_expr *ta = akg_sketch_expr_kwarg(call, "trans_a");
        const akg_sketch_expr *tb = akg_sketch_expr_kwarg(call, "trans_b");
        bool kta = false, ktb = false;
        int64_t vta = 0, vtb = 0;
        if (ta)
            lw_index(L, ta, &kta, &vta);
        if (tb)
            lw_index(L, tb, &ktb, &vtb);
        lw_force_dependents(L, t, NULL, name);
        lw_gemm(L, a, b, t, vta != 0, vtb != 0);
        return;
    }
    /* op(inputs..., dst): the value computed without its destination, written into dst */
    const lw_op *op = lw_op_find(akg_sketch_expr_text(call));
    if (!op) {
        lw_fail(L, "%s() with a destination is not supported; assign its result instead",
                akg_sketch_expr_text(call));
        return;
    }
    lw_val *args[3] = {0};
    int na = lw_op_nargs(op);
    size_t given = akg_sketch_expr_item_count(call) - (akg_sketch_expr_kwarg(call, "dst") ? 0 : 1);
    for (int i = 0; i < na; i++) {
        if ((size_t)i < given)
            args[i] = lw_value_of(L, akg_sketch_expr_item(call, (size_t)i));
        else if (lw_op_default(op, i))
            args[i] = lw_float_scalar(L, strtod(lw_op_default(op, i), NULL));
        if (!args[i]) {
            lw_fail(L, "%s() is missing operand %d", akg_sketch_expr_text(call), i + 1);
            return;
        }
    }
    lw_val *v = lw_elementwise(L, akg_sketch_expr_text(call), args, na);
    if (!v)
        return;
    if (!lw_same_access(v, t, NULL, 0))
        v = lw_force(L, v, TIER_FAST);
    lw_force_dependents(L, t, v, name);
    lw_assign_into(L, t, v);
}

/* What computing one element of v costs, roughly in arithmetic operations (a transcendental
 * function many); elements already kept in a buffer cost a load. */
static int compute_cost(const lw_val *v, int depth)
{
    if (!v || v->kind != LV_EXPR || depth > 64 || (v->keep && v->keep_filled))
        return 0;
    static const char *const dear[] = {"exp", "exp2", "log", "log2", "tanh", "sigmoid", "silu",
                                       "mish", "softplus", "elu", "selu", "gelu", "gelu_tanh",
                                       "erf", "sin", "cos", "pow"};
    static const char *const mid[] = {"div", "sqrt", "rsqrt", "recip", "floordiv", "mod"};
    const char *op = lw_op_name(v->op);
    int c = !strcmp(op, "copy") || !strcmp(op, "transpose") ? 0 : 1;
    for (size_t i = 0; i < sizeof dear / sizeof dear[0]; i++)
        if (!strcmp(op, dear[i]))
            c = 20;
    for (size_t i = 0; i < sizeof mid / sizeof mid[0]; i++)
        if (!strcmp(op, mid[i]))
            c = 5;
    for (int i = 0; i < v->nargs; i++)
        c += compute_cost(v->arg[i], depth + 1);
    return c;
}

typedef struct {
    const char *name[16];
    lw_val *val[16];
    int n;
} keep_set;

/* A computation this block bound to a name, that statement st consumes whole (a store, a
 * destination, a reduction...) and that is read again after it, is computed once: st's loops
 * write its elements into a buffer on the way (lw_elem), and the name is then that buffer. */
static void keep_open(lw_ctx *L, const akg_sketch_stmt *st, keep_set *ks)
{
    ks->n = 0;
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (L->dry || !(k == AKG_SKETCH_STMT_STORE || k == AKG_SKETCH_STMT_CALL ||
                    (k == AKG_SKETCH_STMT_ASSIGN && lw_materialises(akg_sketch_assign_value(st), 0))))
        return;
    lw_frame *f = lw_cur_frame(L);
    lw_nameset r = {0};
    lw_stmt_reads(L, st, &r);
    for (size_t i = 0; i < r.n && ks->n < 16 && lw_ok(L); i++) {
        lw_val *v = lw_lookup(L, r.v[i]);
        if (!v || v->kind != LV_EXPR || v->keep || v->stable || !lw_ns_has(&f->lazy, r.v[i]) ||
            (v->dt != AKG_DTYPE_F32 && v->dt != AKG_DTYPE_F64) || v->rank == 0 ||
            compute_cost(v, 0) < 4 || !lw_is_live(L, r.v[i]))
            continue;
        v->keep = lw_buffer(L, v->dt, v->rank, v->dim, TIER_FAST, "keep");
        v->keep_filled = false;
        ks->name[ks->n] = r.v[i];
        ks->val[ks->n++] = v;
    }
}

static void keep_close(lw_ctx *L, keep_set *ks)
{
    for (int i = 0; i < ks->n; i++) {
        lw_val *v = ks->val[i];
        if (!v->keep_filled) {
            v->keep = NULL;
            continue;
        }
        if (lw_lookup(L, ks->name[i]) == v)
            lw_bind(L, ks->name[i], v->keep);
    }
}

static void lower_stmt(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_stmt *save_cur = L->cur;
    bool save_vec = L->vectorize, save_prec = L->precise;
    int64_t save_len = L->simdlen;
    L->cur = st;
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k != AKG_SKETCH_STMT_FOR)
        lw_set_hints(L, st);
    keep_set ks;
    keep_open(L, st, &ks);
    switch (k) {
    case AKG_SKETCH_STMT_FOR: lw_do_for(L, st, false, NULL); break;
    case AKG_SKETCH_STMT_IF: lw_do_if(L, st); break;
    case AKG_SKETCH_STMT_ALLOC: do_alloc(L, st); break;
    case AKG_SKETCH_STMT_LOAD: do_load(L, st); break;
    case AKG_SKETCH_STMT_STORE: do_store(L, st); break;
    case AKG_SKETCH_STMT_ASSIGN: do_assign(L, st); break;
    case AKG_SKETCH_STMT_CALL: do_call(L, st); break;
    default: break;
    }
    keep_close(L, &ks);
    if (k == AKG_SKETCH_STMT_ASSIGN && akg_sketch_assign_target_count(st) == 1) {
        lw_val *v = lw_lookup(L, akg_sketch_assign_target(st, 0));
        lw_frame *f = lw_cur_frame(L);
        if (v && v->kind == LV_EXPR && !v->stable && f)
            lw_ns_add(L, &f->lazy, akg_sketch_assign_target(st, 0));
    }
    L->vectorize = save_vec;
    L->precise = save_prec;
    L->simdlen = save_len;
    if (lw_ok(L))
        L->cur = save_cur;
}

/* Computes the reductions of statements [i, end) together before statement i. */
static void lower_siblings(lw_ctx *L, const lw_block *b, size_t i, size_t end)
{
    const akg_sketch_expr *calls[8];
    int n = 0;
    for (size_t k = i; k < end && n < 8; k++)
        calls[n++] = lw_stmt_reduction(lw_blk_at(L, b, k));
    const akg_sketch_stmt *save_cur = L->cur;
    bool save_vec = L->vectorize, save_prec = L->precise;
    int64_t save_len = L->simdlen;
    L->cur = lw_blk_at(L, b, i);
    lw_set_hints(L, L->cur);
    lw_reduce_siblings(L, calls, n);
    L->vectorize = save_vec;
    L->precise = save_prec;
    L->simdlen = save_len;
    if (lw_ok(L))
        L->cur = save_cur;
}

void lw_lower_block(lw_ctx *L, const lw_block *b, bool loop)
{
    lw_frame fr = {*b, 0, loop, {0}, lw_cur_frame(L)};
    L->uses = &fr;
    int prered_mark = L->n_prered;
    size_t run_end = 0;
    for (size_t i = 0; i < b->n && lw_ok(L); i++) {
        fr.pos = i;
        if (i >= run_end) {
            L->n_prered = prered_mark; /* the last run's results are taken */
            run_end = lw_sibling_run(L, b, i);
            if (run_end > i + 1)
                lower_siblings(L, b, i, run_end);
        }
        lower_stmt(L, lw_blk_at(L, b, i));
    }
    L->n_prered = prered_mark;
    if (L->dry && lw_ok(L)) {
        lw_val *v = lw_lookup(L, L->probe_name);
        if (v)
            L->probe_val = v;
    }
    L->uses = fr.up;
}

void lw_lower_body(lw_ctx *L)
{
    lw_block b = {NULL, 0, akg_sketch_body_count(L->sk)};
    lw_lower_block(L, &b, false);
}
