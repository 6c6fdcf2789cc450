/*
 * lw_stmt.c: lowering the statements of a checked sketch.
 *
 * Python scoping meets C++ scoping here. A name that a loop or an `if`
 * assigns and that is read after it (or in the loop's next iteration) gets
 * storage declared before the construct: a buffer for a tile, a mutable
 * variable for a scalar; assignments inside then write into it (and an
 * `alloc` of it inside is that storage). A name first bound inside the
 * construct gets the same: a loop variable an int64 that each iteration
 * sets (its last value; OpenMP lastprivate across a parallel loop), any
 * other name storage of the type and shape a dry run of the construct finds
 * for it. Every other name bound inside a construct is forgotten at its end.
 * Lazy values (views, elementwise expressions) are materialised before the
 * storage they read is written, when they are still to be read ("live").
 * Assignment copies a tile (`b = a` and then a write into `a` leaves `b` as
 * it was): names share a buffer until one of them is written, and then the
 * others that are live get a copy; storage a construct writes into belongs
 * to one name.
 *
 * Tiles: `alloc` with a tier gives storage in that tier; a tile with no tier
 * (or "fastest") that is filled by one whole load and otherwise only read is
 * a view (its data moves from memory to registers as it is consumed); a
 * "fastest" [MR, NR] tile that a gemm accumulates into is a register tile of
 * vectors. A rank-2 buffer that the sketch only reads in MR-row (NR-column)
 * slices is laid out in MR-row (NR-column) panels, so that each slice a gemm
 * reads is contiguous.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

/* ---- name sets ---- */

typedef struct {
    const char **v;
    size_t n, cap;
} nameset;

static void ns_add(lw_ctx *L, nameset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name))
            return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        const char **v = lw_alloc(L, cap * sizeof *v);
        if (!v)
            return;
        if (s->n)
            memcpy(v, s->v, s->n * sizeof *v);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = name;
}

static bool ns_has(const nameset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name))
            return true;
    return false;
}

static void expr_names(lw_ctx *L, const akg_sketch_expr *e, nameset *s)
{
    if (!e)
        return;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME:
        ns_add(L, s, akg_sketch_expr_text(e));
        return;
    case AKG_SKETCH_EXPR_UNARY:
        expr_names(L, akg_sketch_expr_lhs(e), s);
        return;
    case AKG_SKETCH_EXPR_BINARY:
        expr_names(L, akg_sketch_expr_lhs(e), s);
        expr_names(L, akg_sketch_expr_rhs(e), s);
        return;
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        expr_names(L, akg_sketch_expr_base(e), s);
        break;
    case AKG_SKETCH_EXPR_SLICE:
        expr_names(L, akg_sketch_slice_start(e), s);
        expr_names(L, akg_sketch_slice_stop(e), s);
        expr_names(L, akg_sketch_slice_step(e), s);
        return;
    default:
        break;
    }
    for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
        expr_names(L, akg_sketch_expr_item(e, i), s);
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL)
        for (size_t i = 0; i < akg_sketch_expr_kwarg_count(e); i++)
            expr_names(L, akg_sketch_expr_kwarg_value(e, i), s);
}

static void stmt_reads(lw_ctx *L, const akg_sketch_stmt *st, nameset *s);

static void body_reads(lw_ctx *L, const akg_sketch_stmt *st, int which, nameset *s)
{
    for (size_t i = 0; i < akg_sketch_stmt_body_count(st, which); i++)
        stmt_reads(L, akg_sketch_stmt_body_at(st, which, i), s);
}

/* Every name a statement reads (a load into part of a tile reads that tile too). */
static void stmt_reads(lw_ctx *L, const akg_sketch_stmt *st, nameset *s)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_FOR:
        expr_names(L, akg_sketch_for_start(st), s);
        expr_names(L, akg_sketch_for_stop(st), s);
        expr_names(L, akg_sketch_for_step(st), s);
        body_reads(L, st, 0, s);
        return;
    case AKG_SKETCH_STMT_IF:
        expr_names(L, akg_sketch_if_cond(st), s);
        body_reads(L, st, 0, s);
        body_reads(L, st, 1, s);
        return;
    case AKG_SKETCH_STMT_ALLOC:
        for (size_t d = 0; d < akg_sketch_alloc_rank(st); d++)
            expr_names(L, akg_sketch_alloc_dim(st, d), s);
        return;
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE: {
        expr_names(L, akg_sketch_move_source(st), s);
        const akg_sketch_expr *t = akg_sketch_move_target(st);
        if (akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_SUBSCRIPT)
            expr_names(L, t, s);
        expr_names(L, akg_sketch_move_option(st, "mask"), s);
        expr_names(L, akg_sketch_move_option(st, "other"), s);
        return;
    }
    case AKG_SKETCH_STMT_ASSIGN:
        expr_names(L, akg_sketch_assign_value(st), s);
        if (strcmp(akg_sketch_assign_op(st), "="))
            for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
                ns_add(L, s, akg_sketch_assign_target(st, i));
        return;
    case AKG_SKETCH_STMT_CALL:
        expr_names(L, akg_sketch_call_expr(st), s);
        return;
    default:
        return;
    }
}

/* The tile a call statement writes: `op(..., dst=t)` or the extra positional argument. */
static const akg_sketch_expr *call_dst(const akg_sketch_expr *call)
{
    const akg_sketch_expr *d = akg_sketch_expr_kwarg(call, "dst");
    if (d)
        return d;
    const char *f = akg_sketch_expr_text(call);
    size_t n = akg_sketch_expr_item_count(call);
    size_t ins = !strcmp(f, "gemm") ? 2 : !strcmp(f, "where") ? 3 : 0;
    if (!ins) {
        const lw_op *op = lw_op_find(f);
        ins = op ? (size_t)lw_op_nargs(op) : 1;
        if (!strcmp(f, "cast"))
            ins = 2;
    }
    if (!strcmp(f, "gemm") && n == 3)
        return akg_sketch_expr_item(call, 2);
    if (n > ins)
        return akg_sketch_expr_item(call, n - 1);
    return NULL;
}

/* The names a statement binds to new values (assignments, allocations, loop variables);
 * loads, stores and destinations write into storage and rebind nothing. */
static void stmt_rebinds(lw_ctx *L, const akg_sketch_stmt *st, nameset *s)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_FOR:
        ns_add(L, s, akg_sketch_for_var(st));
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, 0); i++)
            stmt_rebinds(L, akg_sketch_stmt_body_at(st, 0, i), s);
        return;
    case AKG_SKETCH_STMT_IF:
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                stmt_rebinds(L, akg_sketch_stmt_body_at(st, w, i), s);
        return;
    case AKG_SKETCH_STMT_ALLOC:
        ns_add(L, s, akg_sketch_alloc_name(st));
        return;
    case AKG_SKETCH_STMT_ASSIGN:
        for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
            ns_add(L, s, akg_sketch_assign_target(st, i));
        return;
    default:
        return;
    }
}

/* ---- blocks and liveness ---- */

typedef struct {
    const akg_sketch_stmt *owner; /* NULL: the sketch's body */
    int which;
    size_t n;
} block;

static const akg_sketch_stmt *blk_at(lw_ctx *L, const block *b, size_t i)
{
    return b->owner ? akg_sketch_stmt_body_at(b->owner, b->which, i) : akg_sketch_body_at(L->sk, i);
}

typedef struct frame {
    block blk;
    size_t pos;
    bool loop; /* the whole block runs again after its end */
    struct frame *up;
} frame;

static frame *cur_frame(lw_ctx *L)
{
    return (frame *)L->uses;
}

/* Scans statements [from, to) of a block for the first touch of `name`: 1 when it is read
 * (live), -1 when a top-level statement binds it anew before any read (dead), 0 when the
 * block does neither. */
static int first_touch(lw_ctx *L, const block *b, size_t from, size_t to, const char *name)
{
    for (size_t i = from; i < to && i < b->n; i++) {
        const akg_sketch_stmt *st = blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            /* the header's reads, then each body on its own: a body that binds the name
             * before reading it does not make it live (it may also not run: no kill) */
            nameset r = {0};
            if (k == AKG_SKETCH_STMT_FOR) {
                expr_names(L, akg_sketch_for_start(st), &r);
                expr_names(L, akg_sketch_for_stop(st), &r);
                expr_names(L, akg_sketch_for_step(st), &r);
                if (!strcmp(akg_sketch_for_var(st), name) && !ns_has(&r, name))
                    return -1;
            } else {
                expr_names(L, akg_sketch_if_cond(st), &r);
            }
            if (ns_has(&r, name))
                return 1;
            for (int w = 0; w < (k == AKG_SKETCH_STMT_IF ? 2 : 1); w++) {
                block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                if (first_touch(L, &inner, 0, inner.n, name) > 0)
                    return 1;
            }
            continue;
        }
        nameset r = {0};
        stmt_reads(L, st, &r);
        if (ns_has(&r, name))
            return 1;
        if ((k == AKG_SKETCH_STMT_ALLOC && !strcmp(akg_sketch_alloc_name(st), name)))
            return -1;
        if (k == AKG_SKETCH_STMT_ASSIGN)
            for (size_t t = 0; t < akg_sketch_assign_target_count(st); t++)
                if (!strcmp(akg_sketch_assign_target(st, t), name))
                    return -1;
    }
    return 0;
}

/* Whether `name` may be read after the statement being lowered (before it is bound anew):
 * later in its block, in the next iteration of an enclosing loop, or after the block. */
static bool is_live(lw_ctx *L, const char *name)
{
    for (frame *f = cur_frame(L); f; f = f->up) {
        int r = first_touch(L, &f->blk, f->pos + 1, f->blk.n, name);
        if (r)
            return r > 0;
        if (f->loop && first_touch(L, &f->blk, 0, f->pos + 1, name) > 0)
            return true;
    }
    return false;
}

bool lw_is_live(lw_ctx *L, const char *name)
{
    return is_live(L, name);
}

/* ---- dependences ---- */

static bool depends(const lw_val *v, const lw_val *s, int depth)
{
    if (!v || depth > 200)
        return false;
    if (v == s)
        return true;
    if (v->kind == LV_VIEW) {
        if (v->base == s || depends(v->mask, s, depth + 1))
            return true;
        for (int b = 0; v->base && b < v->base->rank; b++)
            if (depends(v->pos[b], s, depth + 1))
                return true;
        return false;
    }
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++)
            if (depends(v->arg[i], s, depth + 1))
                return true;
    return false;
}

/* Materialises every live lazy value that reads storage s (about to be written through
 * the name `writer`), and copies s for the other live names bound to it. */
static void force_dependents(lw_ctx *L, lw_val *s, lw_val *except, const char *writer)
{
    for (size_t i = 0; i < L->n_env && lw_ok(L); i++) {
        lw_val *v = L->env[i].val;
        if (v == s && s->kind == LV_BUF && strcmp(L->env[i].name, writer) &&
            is_live(L, L->env[i].name)) {
            L->env[i].val = lw_copy_to_buffer(L, s);
            continue;
        }
        if (!v || v == except || (v->kind != LV_VIEW && v->kind != LV_EXPR))
            continue;
        if (v->kind == LV_VIEW && !v->base)
            continue;
        if (!depends(v, s, 0) || !is_live(L, L->env[i].name))
            continue;
        L->env[i].val = lw_force(L, v, TIER_FAST);
    }
}

/* Whether every read of storage s inside v is at the element v's loop writes (the same
 * index), so v can be written into s element by element. dst: the region being written
 * (NULL: the whole of s). */
static bool same_access(const lw_val *v, const lw_val *s, const lw_val *dst, int depth)
{
    if (!v || depth > 200)
        return true;
    if (v == s)
        return !dst || dst->identity;
    if (v->kind == LV_VIEW) {
        if (v->mask && !same_access(v->mask, s, dst, depth + 1))
            return false;
        if (lw_view_has_pos(v) || lw_view_has_pos(dst)) /* positions are data */
            return !depends(v, s, 0);
        if (v->base != s)
            return true;
        if (!dst)
            return v->identity;
        for (int b = 0; b < s->rank; b++)
            if (strcmp(v->bstart[b], dst->bstart[b]) ||
                (v->bstep[b] ? 1 : 0) != (dst->bstep[b] ? 1 : 0) ||
                (v->bstep[b] && strcmp(v->bstep[b], dst->bstep[b])) ||
                v->tile_of_bdim[b] != dst->tile_of_bdim[b])
                return false;
        return true;
    }
    if (v->kind != LV_EXPR)
        return true;
    if (!strcmp(lw_op_name(v->op), "transpose"))
        return !depends(v, s, 0);
    for (int i = 0; i < v->nargs; i++) {
        const lw_val *a = v->arg[i];
        bool same_shape = a->rank == v->rank;
        for (int d = 0; same_shape && d < a->rank; d++)
            same_shape = lw_dim_equal(a->dim[d], v->dim[d]);
        if (!same_shape && depends(a, s, 0))
            return false;
        if (!same_access(a, s, dst, depth + 1))
            return false;
    }
    return true;
}

/* ---- statement context ---- */

static void set_hints(lw_ctx *L, const akg_sketch_stmt *st)
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

static const char *target_name(const akg_sketch_expr *t, bool *whole)
{
    *whole = akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_NAME;
    if (akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_SUBSCRIPT)
        t = akg_sketch_expr_base(t);
    return akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(t) : NULL;
}

/* Whether statement st writes tile `name` (loads into it or part of it, stores into it,
 * passes it as a destination), anywhere inside. */
static bool writes_tile(lw_ctx *L, const akg_sketch_stmt *st, const char *name)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                if (writes_tile(L, akg_sketch_stmt_body_at(st, w, i), name))
                    return true;
        return false;
    }
    if (k == AKG_SKETCH_STMT_LOAD || k == AKG_SKETCH_STMT_STORE) {
        bool whole;
        const char *t = target_name(akg_sketch_move_target(st), &whole);
        return t && !strcmp(t, name);
    }
    if (k == AKG_SKETCH_STMT_CALL) {
        const akg_sketch_expr *d = call_dst(akg_sketch_call_expr(st));
        return d && akg_sketch_expr_get_kind(d) == AKG_SKETCH_EXPR_NAME &&
               !strcmp(akg_sketch_expr_text(d), name);
    }
    return false;
}

/* Every tile name statement st writes in place (loads, stores, destinations), anywhere
 * inside. */
static void stmt_writes(lw_ctx *L, const akg_sketch_stmt *st, nameset *s)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                stmt_writes(L, akg_sketch_stmt_body_at(st, w, i), s);
        return;
    }
    const char *name = NULL;
    if (k == AKG_SKETCH_STMT_LOAD || k == AKG_SKETCH_STMT_STORE) {
        bool whole;
        name = target_name(akg_sketch_move_target(st), &whole);
    } else if (k == AKG_SKETCH_STMT_CALL) {
        const akg_sketch_expr *d = call_dst(akg_sketch_call_expr(st));
        if (d && akg_sketch_expr_get_kind(d) == AKG_SKETCH_EXPR_NAME)
            name = akg_sketch_expr_text(d);
    }
    if (name)
        ns_add(L, s, name);
}

/* Whether v is a lazy tile value (an elementwise computation, or a view of storage) that
 * has no storage of its own to write into. */
static bool lazy_tile(const lw_val *v)
{
    return v && (v->kind == LV_EXPR || (v->kind == LV_VIEW && v->base));
}

/* Whether another name bound to v is still to be read: inside construct st (when given,
 * before that name is bound anew there) or after the statement being lowered. */
static bool aliased(lw_ctx *L, const char *name, const lw_val *v, const akg_sketch_stmt *st)
{
    for (size_t i = 0; i < L->n_env; i++) {
        const char *other = L->env[i].name;
        if (L->env[i].val != v || !strcmp(other, name))
            continue;
        if (is_live(L, other))
            return true;
        bool is_if = st && akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_IF;
        for (int w = 0; st && w < (is_if ? 2 : 1); w++) {
            block body = {st, w, akg_sketch_stmt_body_count(st, w)};
            if (first_touch(L, &body, 0, body.n, other) > 0)
                return true;
        }
    }
    return false;
}

/* The storage of tile `name` about to be written in place: a lazy value (`acc = zeros(...)`
 * then `gemm(a, b, acc)`) is materialised into a buffer first, and a buffer that a loop or
 * if keeps for another name is copied. Assignment copies a tile, so the name alone is
 * rebound. */
static lw_val *writable(lw_ctx *L, const char *name, lw_val *v)
{
    if (!lazy_tile(v) && !(v && v->kind == LV_BUF && v->stable && strcmp(v->owner, name)))
        return v;
    lw_val *b = lw_copy_to_buffer(L, v);
    if (b)
        lw_bind(L, name, b);
    return b;
}

static bool assigns(const akg_sketch_stmt *st, const char *name)
{
    if (akg_sketch_stmt_get_kind(st) != AKG_SKETCH_STMT_ASSIGN)
        return false;
    for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
        if (!strcmp(akg_sketch_assign_target(st, i), name))
            return true;
    return false;
}

/* Whether a statement of block b (from `from` on) writes tile `name` in place before a
 * statement at its top level binds the name anew (a load into a tile allocated inside a
 * loop does not write the tile the name held before the loop). */
static bool writes_before_rebind(lw_ctx *L, const block *b, size_t from, const char *name)
{
    for (size_t i = from; i < b->n; i++) {
        const akg_sketch_stmt *st = blk_at(L, b, i);
        if (writes_tile(L, st, name))
            return true;
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if ((k == AKG_SKETCH_STMT_ALLOC && !strcmp(akg_sketch_alloc_name(st), name)) ||
            assigns(st, name))
            return false;
    }
    return false;
}

/* A tile allocated at `pos` that one whole load fills and nothing else writes before it is
 * rebound can be a view. */
static bool view_eligible(lw_ctx *L, const char *name)
{
    frame *f = cur_frame(L);
    bool loaded = false;
    for (size_t i = f->pos + 1; i < f->blk.n; i++) {
        const akg_sketch_stmt *st = blk_at(L, &f->blk, i);
        nameset r = {0};
        stmt_reads(L, st, &r);
        bool w = writes_tile(L, st, name);
        if (!loaded) {
            if (!w && !ns_has(&r, name) && !assigns(st, name))
                continue;
            if (akg_sketch_stmt_get_kind(st) != AKG_SKETCH_STMT_LOAD)
                return false;
            bool whole;
            const char *t = target_name(akg_sketch_move_target(st), &whole);
            if (!t || strcmp(t, name) || !whole)
                return false;
            loaded = true;
            continue;
        }
        if (w)
            return false;
        if (assigns(st, name))
            return true;
    }
    return loaded;
}

/* The gemm statement after pos that accumulates into `name`, or NULL. */
static const akg_sketch_stmt *find_gemm_acc(lw_ctx *L, const block *b, size_t from,
                                            const char *name, int depth)
{
    for (size_t i = from; i < b->n && depth < 16; i++) {
        const akg_sketch_stmt *st = blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            for (int w = 0; w < 2; w++) {
                block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                const akg_sketch_stmt *g = find_gemm_acc(L, &inner, 0, name, depth + 1);
                if (g)
                    return g;
            }
            continue;
        }
        const akg_sketch_expr *call = NULL;
        if (k == AKG_SKETCH_STMT_CALL)
            call = akg_sketch_call_expr(st);
        else if (k == AKG_SKETCH_STMT_ASSIGN && assigns(st, name))
            call = akg_sketch_assign_value(st);
        if (!call || akg_sketch_expr_get_kind(call) != AKG_SKETCH_EXPR_CALL ||
            strcmp(akg_sketch_expr_text(call), "gemm"))
            continue;
        const akg_sketch_expr *acc = akg_sketch_expr_item_count(call) > 2
                                         ? akg_sketch_expr_item(call, 2)
                                         : akg_sketch_expr_kwarg(call, "dst");
        if (acc && akg_sketch_expr_get_kind(acc) == AKG_SKETCH_EXPR_NAME &&
            !strcmp(akg_sketch_expr_text(acc), name))
            return st;
    }
    return NULL;
}

/* How the rest of the scope reads rank-2 tile `name`: 1 when only through row slices
 * name[a:a+P, ...] of one constant extent P, 2 when only through column slices
 * name[:, a:a+P]; 0 otherwise. */
static int slice_pattern(lw_ctx *L, const block *b, size_t from, const char *name, int64_t *P,
                         int depth)
{
    int pattern = -1;
    for (size_t i = from; i < b->n && depth < 16; i++) {
        const akg_sketch_stmt *st = blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            for (int w = 0; w < 2; w++) {
                block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                int p = slice_pattern(L, &inner, 0, name, P, depth + 1);
                if (p == 0 || (p > 0 && pattern > 0 && p != pattern))
                    return 0;
                if (p > 0)
                    pattern = p;
            }
            continue;
        }
        nameset r = {0};
        stmt_reads(L, st, &r);
        if (!ns_has(&r, name))
            continue;
        if (k != AKG_SKETCH_STMT_LOAD)
            return 0;
        const akg_sketch_expr *src = akg_sketch_move_source(st);
        if (akg_sketch_expr_get_kind(src) != AKG_SKETCH_EXPR_SUBSCRIPT)
            return 0;
        const akg_sketch_expr *base = akg_sketch_expr_base(src);
        if (akg_sketch_expr_get_kind(base) != AKG_SKETCH_EXPR_NAME ||
            strcmp(akg_sketch_expr_text(base), name))
            return 0;
        size_t n = akg_sketch_expr_item_count(src);
        int which = 0;
        for (size_t d = 0; d < n && d < 2; d++) {
            const akg_sketch_expr *it = akg_sketch_expr_item(src, d);
            if (akg_sketch_expr_get_kind(it) != AKG_SKETCH_EXPR_SLICE)
                return 0;
            const akg_sketch_expr *s0 = akg_sketch_slice_start(it), *s1 = akg_sketch_slice_stop(it);
            if (!s0 && !s1)
                continue;
            if (which)
                return 0;
            which = (int)d + 1;
            /* extent: stop is start + P */
            if (!s1 || akg_sketch_expr_get_kind(s1) != AKG_SKETCH_EXPR_BINARY ||
                strcmp(akg_sketch_expr_text(s1), "+") || akg_sketch_slice_step(it))
                return 0;
            char *a = s0 ? akg_sketch_expr_to_string(s0) : NULL;
            char *l = akg_sketch_expr_to_string(akg_sketch_expr_lhs(s1));
            bool same = a && l && !strcmp(a, l);
            free(a);
            free(l);
            if (!same)
                return 0;
            bool kk;
            int64_t kv;
            lw_index(L, akg_sketch_expr_rhs(s1), &kk, &kv);
            if (!kk || (*P && *P != kv))
                return 0;
            *P = kv;
        }
        if (!which || (pattern > 0 && pattern != which))
            return 0;
        pattern = which;
    }
    return pattern < 0 ? -1 : pattern;
}

/* ---- statements ---- */

static void lower_block(lw_ctx *L, const block *b, bool loop);

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
    frame *f = cur_frame(L);
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
        view_eligible(L, name)) {
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
    /* a register tile of vectors: a gemm accumulates into it */
    const akg_sketch_stmt *g = NULL;
    if (tier == TIER_FASTEST && rank == 2 && dim[0].known && dim[1].known && dim[0].k <= 16 &&
        (dt == AKG_DTYPE_F32 || !dt))
        g = find_gemm_acc(L, &f->blk, f->pos + 1, name, 0);
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
        int p = slice_pattern(L, &f->blk, f->pos + 1, name, &P, 0);
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
    const char *tname = target_name(tgt, &whole);
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
    t = writable(L, tname, t);
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
    if (depends(v, t, 0)) { /* a tile loaded from itself: read everything first */
        v = lw_force(L, v, TIER_FAST);
    }
    force_dependents(L, t, NULL, tname);
    if (whole) {
        lw_assign_into(L, t, v);
    } else {
        lw_store(L, dst, v, NULL);
    }
}

static void do_store(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *tgt = akg_sketch_move_target(st);
    bool whole;
    const char *tname = target_name(tgt, &whole);
    if (!tname) {
        lw_fail(L, "a store writes into a tensor or tile");
        return;
    }
    lw_val *v = lw_value_of(L, akg_sketch_move_source(st));
    lw_val *base = lookup_storage(L, tname);
    if (!v || !base)
        return;
    base = writable(L, tname, base);
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
    if (!same_access(v, base, dst, 0) || (mask && !same_access(mask, base, dst, 0)))
        v = lw_force(L, v, TIER_FAST);
    force_dependents(L, base, v, tname);
    lw_store(L, dst, v, mask);
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
        if (!same_access(v, cur, NULL, 0))
            v = lw_force(L, v, TIER_FAST);
        force_dependents(L, cur, v, name);
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
        cur = writable(L, name, cur);
        if (!cur)
            return;
        force_dependents(L, cur, NULL, name);
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
        s->loopvar = L->saw_loopvar;
        v = s;
    }
    assign_name(L, name, v);
}

static void do_call(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *call = akg_sketch_call_expr(st);
    const akg_sketch_expr *d = call_dst(call);
    if (!d || akg_sketch_expr_get_kind(d) != AKG_SKETCH_EXPR_NAME) {
        lw_fail(L, "the result of %s() is discarded", akg_sketch_expr_text(call));
        return;
    }
    const char *name = akg_sketch_expr_text(d);
    lw_val *t = lookup_storage(L, name);
    if (!t)
        return;
    t = writable(L, name, t);
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
        force_dependents(L, t, NULL, name);
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
            args[i] = lw_scalar(L, AKG_DTYPE_F32, lw_op_default(op, i));
        if (!args[i]) {
            lw_fail(L, "%s() is missing operand %d", akg_sketch_expr_text(call), i + 1);
            return;
        }
    }
    lw_val *v = lw_elementwise(L, akg_sketch_expr_text(call), args, na);
    if (!v)
        return;
    if (!same_access(v, t, NULL, 0))
        v = lw_force(L, v, TIER_FAST);
    force_dependents(L, t, v, name);
    lw_assign_into(L, t, v);
}

/* Gives tile `name` (now v) storage of its own that construct st keeps writing into: v itself
 * when it is a buffer no other name still reads, else a copy. */
static void own_storage(lw_ctx *L, const char *name, lw_val *v, const akg_sketch_stmt *st)
{
    if (v->kind != LV_BUF || v->stable || aliased(L, name, v, st)) {
        v = lw_copy_to_buffer(L, v);
        if (!v)
            return;
        lw_bind(L, name, v);
    }
    v->stable = true;
    v->owner = name;
}

/* Whether a for loop inside statement st (or st itself) runs over `name`. */
static bool binds_loop_var(const akg_sketch_stmt *st, const char *name)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_FOR && !strcmp(akg_sketch_for_var(st), name))
        return true;
    if (k != AKG_SKETCH_STMT_FOR && k != AKG_SKETCH_STMT_IF)
        return false;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
            if (binds_loop_var(akg_sketch_stmt_body_at(st, w, i), name))
                return true;
    return false;
}

/* A mutable scalar variable of dtype dt for `name`, declared here with value init. */
static lw_val *stable_scalar(lw_ctx *L, const char *name, akg_dtype dt, const char *init)
{
    const char *c = lw_fresh(L, "mv");
    lw_line(L, "%s %s = %s;", lw_comptype(dt), c, init);
    lw_val *s = lw_scalar(L, dt, c);
    if (!s)
        return NULL;
    s->stable = true;
    s->owner = name;
    s->loopvar = true;
    lw_bind(L, name, s);
    return s;
}

static lw_name *env_snapshot(lw_ctx *L, size_t *n)
{
    *n = L->n_env;
    lw_name *s = lw_alloc(L, (L->n_env + 1) * sizeof *s);
    if (s && L->n_env)
        memcpy(s, L->env, L->n_env * sizeof *s);
    return s;
}

static void env_restore(lw_ctx *L, lw_name *snap, size_t n)
{
    if (!snap)
        return;
    L->n_env = n;
    memcpy(L->env, snap, n * sizeof *snap);
}

static void do_for(lw_ctx *L, const akg_sketch_stmt *st, bool collapsed_inner,
                   const char *outer_set);
static void do_if(lw_ctx *L, const akg_sketch_stmt *st);

/* The value `name` has at the end of some block of construct st (NULL: none), learnt by
 * lowering st into a scratch buffer that is then dropped; nothing of the dry run stays
 * but buffers it marked as kept by their own names (as the real run marks them). */
static lw_val *probe(lw_ctx *L, const akg_sketch_stmt *st, const char *name, bool loop)
{
    akg_buf scratch;
    akg_buf_init(&scratch, 32u << 20);
    size_t env_n;
    lw_name *snap = env_snapshot(L, &env_n);
    lw_ctx save = *L;
    L->out = &scratch;
    if (L->hoist) {
        L->hoist = &scratch;
        L->hoist_tail = &scratch;
    }
    L->dry = true;
    L->probe_name = name;
    L->probe_val = NULL;
    if (loop)
        do_for(L, st, false, NULL);
    else
        do_if(L, st);
    lw_val *v = L->probe_val;
    akg_buf_free(&scratch);
    /* what the dry run failed on, the real run reports (or avoids, with the storage) */
    if (L->err && L->errlen && save.status == 0 && L->status)
        L->err[0] = '\0';
    L->status = save.status;
    L->out = save.out;
    L->hoist = save.hoist;
    L->hoist_tail = save.hoist_tail;
    L->hoist_indent = save.hoist_indent;
    L->indent = save.indent;
    L->dry = save.dry;
    L->probe_name = save.probe_name;
    L->probe_val = save.probe_val;
    L->heap = save.heap;
    L->n_heap = save.n_heap;
    L->n_proven = save.n_proven;
    L->n_memo = save.n_memo;
    L->par_depth = save.par_depth;
    L->cur = save.cur;
    L->vectorize = save.vectorize;
    L->precise = save.precise;
    L->simdlen = save.simdlen;
    L->simd_clause = save.simd_clause;
    L->gemm_in_place = save.gemm_in_place;
    L->uses = save.uses;
    L->saw_loopvar = save.saw_loopvar;
    env_restore(L, snap, env_n);
    return v;
}

/* Whether a dimension's C++ text is valid before any construct: constants, symbols,
 * constexprs and the prelude's integer helpers. */
static bool dim_global(lw_dim d)
{
    if (d.known)
        return true;
    for (const char *p = d.c; *p;) {
        if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) {
            p++;
            continue;
        }
        const char *q = p;
        while (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
               (*q >= '0' && *q <= '9'))
            q++;
        if (strncmp(p, "S_", 2) && strncmp(p, "C_", 2) && strncmp(p, "akg_", 4) &&
            strncmp(p, "std", 3) && strncmp(p, "int64_t", 7))
            return false;
        p = q;
    }
    return true;
}

/* Storage before construct st for `name`, which st binds and which is read after st (Python
 * scoping): a variable or a buffer of the type and shape a dry run finds for it. */
static bool storage_before(lw_ctx *L, const akg_sketch_stmt *st, const char *name, bool loop)
{
    lw_val *t = probe(L, st, name, loop);
    if (!t || !lw_ok(L))
        return false;
    if (t->kind == LV_SCALAR)
        return stable_scalar(L, name, t->dt, "0") != NULL;
    if (t->kind == LV_VIEW && !t->base)
        return false;
    for (int d = 0; d < t->rank; d++)
        if (t->dim[d].varies || !dim_global(t->dim[d]))
            return false;
    lw_val *b = lw_buffer(L, t->dt, t->rank, t->dim, TIER_FAST, name);
    if (!b)
        return false;
    b->stable = true;
    b->owner = name;
    lw_bind(L, name, b);
    return true;
}

/* Names a construct assigns that are read after it (or, for a loop, in its next
 * iteration) get storage before it. A loop variable read after its loop holds its last
 * value (Python scoping): a variable declared here that each iteration sets. *lastpriv
 * (may be NULL) collects the C++ scalars declared for names read after the construct
 * and not carried from one iteration to the next: what a parallel loop hands back
 * through OpenMP's lastprivate (firstprivate too: an iteration that does not assign the
 * name leaves the value it had). */
static void stabilise(lw_ctx *L, const akg_sketch_stmt *st, bool loop, nameset *lastpriv)
{
    nameset w = {0};
    stmt_rebinds(L, st, &w);
    block body = {st, 0, loop ? akg_sketch_stmt_body_count(st, 0) : 0};
    const char *var = loop ? akg_sketch_for_var(st) : NULL;
    for (size_t i = 0; i < w.n && lw_ok(L); i++) {
        const char *name = w.v[i];
        bool own_var = var && !strcmp(name, var);
        bool carried = loop && !own_var && first_touch(L, &body, 0, body.n, name) > 0;
        bool live = is_live(L, name);
        if (!live && !carried)
            continue;
        lw_val *v = lw_lookup(L, name);
        if (!v || (own_var && !v->stable)) {
            /* defined inside and read only there (each iteration defines it first) */
            if (!live)
                continue;
            if (L->dry)
                continue; /* a dry run only learns what the construct binds */
            if (!binds_loop_var(st, name)) {
                if (!storage_before(L, st, name, loop) && lw_ok(L))
                    lw_fail(L, "'%s' is given a value inside this %s and read after it, and its "
                               "shape is not known before the %s; give it a value (or allocate "
                               "it) before the %s",
                            name, loop ? "loop" : "if", loop ? "loop" : "if",
                            loop ? "loop" : "if");
                if (!lw_ok(L))
                    return;
                continue;
            }
            /* a loop variable read after its loop: its last value (what it held before
             * when the loop does not run) */
            bool keep = v && v->kind == LV_SCALAR && !lw_is_float(v->dt);
            lw_val *s = stable_scalar(L, name, AKG_DTYPE_I64, keep ? v->c : "0");
            if (s && lastpriv && !carried)
                ns_add(L, lastpriv, s->c);
            continue;
        }
        if (own_var || (v->stable && !strcmp(v->owner, name)))
            continue;
        if (v->kind == LV_SCALAR) {
            lw_val *s = stable_scalar(L, name, v->dt, v->c);
            if (s && lastpriv && !carried)
                ns_add(L, lastpriv, s->c);
            continue;
        }
        if (v->kind == LV_VIEW && !v->base)
            continue; /* an allocation still waiting for its load: it is loaded inside */
        own_storage(L, name, v, st);
    }
    /* a lazy tile the construct writes in place gets its storage before it (every
     * iteration or branch writes into the one tile), and so does a buffer shared with
     * another name */
    nameset wr = {0};
    stmt_writes(L, st, &wr);
    for (size_t i = 0; i < wr.n && lw_ok(L); i++) {
        bool outer = false;
        for (int w = 0; w < (loop ? 1 : 2); w++) {
            block b = {st, w, akg_sketch_stmt_body_count(st, w)};
            outer |= writes_before_rebind(L, &b, 0, wr.v[i]);
        }
        if (!outer)
            continue;
        lw_val *v = lw_lookup(L, wr.v[i]);
        bool shared = v && v->kind == LV_BUF &&
                      (v->stable ? strcmp(v->owner, wr.v[i]) != 0 : aliased(L, wr.v[i], v, st));
        if (lazy_tile(v) || shared)
            own_storage(L, wr.v[i], v, st);
    }
}

/* Whether `inner` (a for loop) can be collapsed with its parent loop over `var`: its bounds
 * do not read var. */
static bool bounds_free_of(lw_ctx *L, const akg_sketch_stmt *inner, const char *var)
{
    nameset s = {0};
    expr_names(L, akg_sketch_for_start(inner), &s);
    expr_names(L, akg_sketch_for_stop(inner), &s);
    expr_names(L, akg_sketch_for_step(inner), &s);
    return !ns_has(&s, var);
}

/* Opens the loop of st. A loop variable read after its loop (see stabilise) is set at the
 * top of the body; with `set` the statement that sets it is returned instead of emitted
 * (the outer loop of a collapse(2) sets it inside the inner one). */
static void loop_header(lw_ctx *L, const akg_sketch_stmt *st, const char **cvar,
                        const char **set)
{
    bool k0 = true, k1, k2 = true;
    int64_t v0 = 0, v1, v2 = 1;
    const akg_sketch_expr *s0 = akg_sketch_for_start(st), *s2 = akg_sketch_for_step(st);
    const char *a = s0 ? lw_index(L, s0, &k0, &v0) : "0";
    const char *b = lw_index(L, akg_sketch_for_stop(st), &k1, &v1);
    const char *c = s2 ? lw_index(L, s2, &k2, &v2) : "1";
    if (k2 && v2 <= 0) {
        lw_fail(L, "range() step must be positive");
        return;
    }
    const char *var = lw_strf(L, "I_%s", akg_sketch_for_var(st));
    *cvar = var;
    if (!strcmp(c, "1"))
        lw_line(L, "for (int64_t %s = %s; %s < %s; ++%s) {", var, a, var, b, var);
    else
        lw_line(L, "for (int64_t %s = %s; %s < %s; %s += %s) {", var, a, var, b, var, c);
    L->indent++;
    lw_val *after = lw_lookup(L, akg_sketch_for_var(st));
    if (after && after->stable && after->kind == LV_SCALAR) {
        if (set)
            *set = lw_strf(L, "%s = %s;", after->c, var);
        else
            lw_line(L, "%s = %s;", after->c, var);
    }
    lw_val *lv = lw_scalar(L, AKG_DTYPE_I64, var);
    if (lv) {
        lv->loopvar = true;
        lv->nonneg = !s0 || lw_index_nonneg(L, s0);
        lv->upper = lv->nonneg ? b : NULL;
        lw_bind(L, akg_sketch_for_var(st), lv);
    }
}

static void lower_body(lw_ctx *L, const akg_sketch_stmt *st, int which, bool loop)
{
    block b = {st, which, akg_sketch_stmt_body_count(st, which)};
    lower_block(L, &b, loop);
}

/* outer_set: with collapsed_inner, the statement that sets the outer loop's variable (see
 * loop_header), or NULL. */
static void do_for(lw_ctx *L, const akg_sketch_stmt *st, bool collapsed_inner,
                   const char *outer_set)
{
    bool par = akg_sketch_stmt_hint_value(st, "parallel") != NULL && !L->safe;
    nameset lastpriv = {0};
    stabilise(L, st, true, &lastpriv);
    if (!lw_ok(L))
        return;
    const char *unroll = akg_sketch_stmt_hint_value(st, "unroll");
    const char *vec = akg_sketch_stmt_hint_value(st, "vectorize");
    size_t env_n;
    lw_name *snap = env_snapshot(L, &env_n);
    size_t heap_mark = L->n_heap;
    bool save_vec = L->vectorize, save_prec = L->precise;
    int64_t save_len = L->simdlen;
    set_hints(L, st);
    const char *cvar = NULL;
    if (par && L->par_depth == 0 && !collapsed_inner) {
        /* one OpenMP region: per-thread buffers allocated once at its start */
        const akg_sketch_stmt *inner = NULL;
        if (akg_sketch_stmt_body_count(st, 0) == 1) {
            const akg_sketch_stmt *in = akg_sketch_stmt_body_at(st, 0, 0);
            if (akg_sketch_stmt_get_kind(in) == AKG_SKETCH_STMT_FOR &&
                akg_sketch_stmt_hint_value(in, "parallel") &&
                bounds_free_of(L, in, akg_sketch_for_var(st)))
                inner = in;
        }
        akg_buf body, hoist, tail;
        akg_buf_init(&body, 32u << 20);
        akg_buf_init(&hoist, 1u << 20);
        akg_buf_init(&tail, 1u << 20);
        akg_buf *save_out = L->out, *save_h = L->hoist, *save_t = L->hoist_tail;
        int ind = L->indent;
        L->out = &body;
        L->hoist = &hoist;
        L->hoist_tail = &tail;
        L->hoist_indent = ind + 1;
        L->indent = ind + 1;
        L->par_depth++;
        const char *set = NULL;
        loop_header(L, st, &cvar, inner ? &set : NULL);
        if (inner) {
            frame fr = {{st, 0, 1}, 0, true, cur_frame(L)};
            L->uses = &fr;
            do_for(L, inner, true, set);
            L->uses = fr.up;
        } else {
            lw_line(L, "if (!akg_thread_ok) continue;");
            lower_body(L, st, 0, true);
        }
        lw_free_scope(L, heap_mark);
        L->indent--;
        lw_line(L, "}");
        L->par_depth--;
        L->out = save_out;
        L->hoist = save_h;
        L->hoist_tail = save_t;
        L->indent = ind;
        lw_line(L, "#pragma omp parallel");
        lw_line(L, "{");
        L->indent++;
        lw_line(L, "bool akg_thread_ok = true;");
        if (hoist.len)
            akg_buf_append(L->out, hoist.data, hoist.len);
        lw_line(L, "if (!akg_thread_ok) akg_status = 2;");
        const char *last = "";
        for (size_t i = 0; i < lastpriv.n; i++)
            last = lw_strf(L, "%s%s%s", last, i ? ", " : "", lastpriv.v[i]);
        if (lastpriv.n)
            last = lw_strf(L, " firstprivate(%s) lastprivate(%s)", last, last);
        lw_line(L, "#pragma omp for schedule(static)%s%s", inner ? " collapse(2)" : "", last);
        if (body.len)
            akg_buf_append(L->out, body.data, body.len);
        if (tail.len)
            akg_buf_append(L->out, tail.data, tail.len);
        L->indent--;
        lw_line(L, "}");
        lw_line(L, "if (akg_status) return akg_status;");
        if (akg_buf_status(&body) || akg_buf_status(&hoist) || akg_buf_status(&tail))
            lw_fail(L, "the generated kernel exceeds its size limit");
        akg_buf_free(&body);
        akg_buf_free(&hoist);
        akg_buf_free(&tail);
    } else {
        /* nothing may stand between the two loops of a collapse(2): a collapsed inner loop
         * drops its unroll and ivdep pragmas (neither changes what it computes) */
        if (unroll && !L->safe && !collapsed_inner) {
            if (*unroll >= '0' && *unroll <= '9')
                lw_line(L, "#pragma GCC unroll %s", unroll);
            else
                lw_line(L, "#pragma GCC unroll 4");
        }
        if (vec && !L->safe && !collapsed_inner)
            lw_line(L, "#pragma GCC ivdep");
        loop_header(L, st, &cvar, NULL);
        if (outer_set)
            lw_line(L, "%s", outer_set);
        if (collapsed_inner)
            lw_line(L, "if (!akg_thread_ok) continue;");
        lower_body(L, st, 0, true);
        lw_free_scope(L, heap_mark);
        L->indent--;
        lw_line(L, "}");
    }
    L->vectorize = save_vec;
    L->precise = save_prec;
    L->simdlen = save_len;
    env_restore(L, snap, env_n);
}

/* Inside `if X >= 0 and X < D:` the scalar X is known to index a dimension of extent D. */
static void refine_range(lw_ctx *L, const akg_sketch_expr *cond)
{
    if (akg_sketch_expr_get_kind(cond) != AKG_SKETCH_EXPR_BINARY)
        return;
    const char *op = akg_sketch_expr_text(cond);
    if (!strcmp(op, "and")) {
        refine_range(L, akg_sketch_expr_lhs(cond));
        refine_range(L, akg_sketch_expr_rhs(cond));
        return;
    }
    const akg_sketch_expr *a = akg_sketch_expr_lhs(cond), *b = akg_sketch_expr_rhs(cond);
    bool lower = false, upper = false;
    const akg_sketch_expr *name = NULL, *bound = NULL;
    if (akg_sketch_expr_get_kind(a) == AKG_SKETCH_EXPR_NAME) {
        name = a;
        bound = b;
        lower = !strcmp(op, ">=") && akg_sketch_expr_get_kind(b) == AKG_SKETCH_EXPR_INT &&
                akg_sketch_expr_int(b) >= 0;
        upper = !strcmp(op, "<");
    } else if (akg_sketch_expr_get_kind(b) == AKG_SKETCH_EXPR_NAME) {
        name = b;
        bound = a;
        lower = !strcmp(op, "<=") && akg_sketch_expr_get_kind(a) == AKG_SKETCH_EXPR_INT &&
                akg_sketch_expr_int(a) >= 0;
        upper = !strcmp(op, ">");
    }
    if (!name || (!lower && !upper))
        return;
    lw_val *cur = lw_lookup(L, akg_sketch_expr_text(name));
    if (!cur || cur->kind != LV_SCALAR || lw_is_float(cur->dt))
        return;
    lw_val *v = lw_scalar(L, cur->dt, cur->c);
    if (!v)
        return;
    *v = *cur;
    v->id = ++L->next_id;
    if (lower)
        v->nonneg = true;
    if (upper) {
        bool k;
        int64_t kv;
        v->upper = lw_index(L, bound, &k, &kv);
    }
    lw_bind(L, akg_sketch_expr_text(name), v);
}

/* Inside `if SYM == K:` the symbol is the constant K: tensors whose shapes use it are
 * re-declared with it, so their strides fold and bounds become provable. */
static void refine(lw_ctx *L, const akg_sketch_expr *cond)
{
    refine_range(L, cond);
    if (akg_sketch_expr_get_kind(cond) != AKG_SKETCH_EXPR_BINARY ||
        strcmp(akg_sketch_expr_text(cond), "=="))
        return;
    const akg_sketch_expr *a = akg_sketch_expr_lhs(cond), *b = akg_sketch_expr_rhs(cond);
    if (akg_sketch_expr_get_kind(a) != AKG_SKETCH_EXPR_NAME) {
        const akg_sketch_expr *t = a;
        a = b;
        b = t;
    }
    if (akg_sketch_expr_get_kind(a) != AKG_SKETCH_EXPR_NAME ||
        akg_sketch_expr_get_kind(b) != AKG_SKETCH_EXPR_INT)
        return;
    const char *sym = akg_sketch_expr_text(a);
    bool is_symbol = false;
    for (size_t i = 0; i < akg_sketch_symbol_count(L->sk); i++)
        is_symbol |= !strcmp(akg_sketch_symbol_name(L->sk, i), sym);
    lw_val *cur = lw_lookup(L, sym);
    if (!is_symbol || !cur || cur->kind != LV_SCALAR)
        return;
    int64_t k = akg_sketch_expr_int(b);
    if (k < 0)
        return;
    lw_val *v = lw_scalar(L, AKG_DTYPE_I64, lw_strf(L, "%lld", (long long)k));
    if (!v)
        return;
    v->nonneg = true;
    lw_bind(L, sym, v);
    for (size_t i = 0; i < akg_sketch_tensor_count(L->sk); i++) {
        lw_val *t = lw_lookup(L, akg_sketch_tensor_name(L->sk, i));
        if (!t || t->kind != LV_TENSOR)
            continue;
        lw_val *n = lw_new(L, LV_TENSOR);
        if (!n)
            return;
        int id = n->id;
        *n = *t;
        n->id = id;
        for (int d = 0; d < n->rank; d++)
            n->dim[d] = lw_index_dim(L, akg_sketch_tensor_dim(L->sk, i, (size_t)d));
        lw_set_strides(L, n);
        lw_bind(L, akg_sketch_tensor_name(L->sk, i), n);
    }
}

static void do_if(lw_ctx *L, const akg_sketch_stmt *st)
{
    stabilise(L, st, false, NULL);
    lw_val *c = lw_value_of(L, akg_sketch_if_cond(st));
    if (!c)
        return;
    if (c->kind != LV_SCALAR) {
        lw_fail(L, "if conditions are scalars; for an elementwise choice use where()");
        return;
    }
    size_t env_n;
    lw_name *snap = env_snapshot(L, &env_n);
    size_t heap_mark = L->n_heap;
    lw_line(L, "if (%s) {", c->c);
    L->indent++;
    refine(L, akg_sketch_if_cond(st));
    lower_body(L, st, 0, false);
    lw_free_scope(L, heap_mark);
    L->indent--;
    env_restore(L, snap, env_n);
    if (akg_sketch_stmt_body_count(st, 1)) {
        lw_line(L, "} else {");
        L->indent++;
        lower_body(L, st, 1, false);
        lw_free_scope(L, heap_mark);
        L->indent--;
        env_restore(L, snap, env_n);
    }
    lw_line(L, "}");
}

static void lower_stmt(lw_ctx *L, const akg_sketch_stmt *st)
{
    const akg_sketch_stmt *save_cur = L->cur;
    bool save_vec = L->vectorize, save_prec = L->precise;
    int64_t save_len = L->simdlen;
    L->cur = st;
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k != AKG_SKETCH_STMT_FOR)
        set_hints(L, st);
    switch (k) {
    case AKG_SKETCH_STMT_FOR: do_for(L, st, false, NULL); break;
    case AKG_SKETCH_STMT_IF: do_if(L, st); break;
    case AKG_SKETCH_STMT_ALLOC: do_alloc(L, st); break;
    case AKG_SKETCH_STMT_LOAD: do_load(L, st); break;
    case AKG_SKETCH_STMT_STORE: do_store(L, st); break;
    case AKG_SKETCH_STMT_ASSIGN: do_assign(L, st); break;
    case AKG_SKETCH_STMT_CALL: do_call(L, st); break;
    default: break;
    }
    L->vectorize = save_vec;
    L->precise = save_prec;
    L->simdlen = save_len;
    if (lw_ok(L))
        L->cur = save_cur;
}

static void lower_block(lw_ctx *L, const block *b, bool loop)
{
    frame fr = {*b, 0, loop, cur_frame(L)};
    L->uses = &fr;
    for (size_t i = 0; i < b->n && lw_ok(L); i++) {
        fr.pos = i;
        lower_stmt(L, blk_at(L, b, i));
    }
    if (L->dry && lw_ok(L)) {
        lw_val *v = lw_lookup(L, L->probe_name);
        if (v)
            L->probe_val = v;
    }
    L->uses = fr.up;
}

void lw_lower_body(lw_ctx *L)
{
    block b = {NULL, 0, akg_sketch_body_count(L->sk)};
    lower_block(L, &b, false);
}
