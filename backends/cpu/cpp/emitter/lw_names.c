/*
 * lw_names.c: what the statements of a sketch read, write and bind, read off the syntax.
 *
 * The lowering asks these questions about the statements still to come, never about code
 * it emitted: whether a name is read again before it is bound anew (liveness: later in its
 * block, in the next iteration of an enclosing loop, or after the block), whether a tile is
 * filled by one whole load (it can be a view), whether a gemm accumulates into it (a register
 * tile) or it is only read in row or column slices (a panel layout), and which consecutive
 * statements are sibling reductions of one tile. A loop or an if is looked into as a whole:
 * a body that binds a name before reading it does not make it live, and may not run, so it
 * does not kill it either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw_stmt.h"

void lw_ns_add(lw_ctx *L, lw_nameset *s, const char *name)
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

bool lw_ns_has(const lw_nameset *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name))
            return true;
    return false;
}

static void expr_names(lw_ctx *L, const akg_sketch_expr *e, lw_nameset *s)
{
    if (!e)
        return;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME:
        lw_ns_add(L, s, akg_sketch_expr_text(e));
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

static void body_reads(lw_ctx *L, const akg_sketch_stmt *st, int which, lw_nameset *s)
{
    for (size_t i = 0; i < akg_sketch_stmt_body_count(st, which); i++)
        lw_stmt_reads(L, akg_sketch_stmt_body_at(st, which, i), s);
}

/* Every name a statement reads (a load into part of a tile reads that tile too). */
void lw_stmt_reads(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s)
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
                lw_ns_add(L, s, akg_sketch_assign_target(st, i));
        return;
    case AKG_SKETCH_STMT_CALL:
        expr_names(L, akg_sketch_call_expr(st), s);
        return;
    default:
        return;
    }
}

/* The tile a call statement writes: `op(..., dst=t)` or the extra positional argument. */
const akg_sketch_expr *lw_call_dst(const akg_sketch_expr *call)
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
void lw_stmt_rebinds(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_FOR:
        lw_ns_add(L, s, akg_sketch_for_var(st));
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, 0); i++)
            lw_stmt_rebinds(L, akg_sketch_stmt_body_at(st, 0, i), s);
        return;
    case AKG_SKETCH_STMT_IF:
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                lw_stmt_rebinds(L, akg_sketch_stmt_body_at(st, w, i), s);
        return;
    case AKG_SKETCH_STMT_ALLOC:
        lw_ns_add(L, s, akg_sketch_alloc_name(st));
        return;
    case AKG_SKETCH_STMT_ASSIGN:
        for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
            lw_ns_add(L, s, akg_sketch_assign_target(st, i));
        return;
    default:
        return;
    }
}

const akg_sketch_stmt *lw_blk_at(lw_ctx *L, const lw_block *b, size_t i)
{
    return b->owner ? akg_sketch_stmt_body_at(b->owner, b->which, i) : akg_sketch_body_at(L->sk, i);
}

lw_frame *lw_cur_frame(lw_ctx *L)
{
    return (lw_frame *)L->uses;
}

/* Scans statements [from, to) of a block for the first touch of `name`: 1 when it is read
 * (live), -1 when a top-level statement, or an if in both of its branches, binds it anew
 * before any read (dead), 0 when the block does neither. */
int lw_first_touch(lw_ctx *L, const lw_block *b, size_t from, size_t to, const char *name)
{
    for (size_t i = from; i < to && i < b->n; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            /* the header's reads, then each body on its own: a body that binds the name
             * before reading it does not make it live (it may also not run: no kill) */
            lw_nameset r = {0};
            if (k == AKG_SKETCH_STMT_FOR) {
                expr_names(L, akg_sketch_for_start(st), &r);
                expr_names(L, akg_sketch_for_stop(st), &r);
                expr_names(L, akg_sketch_for_step(st), &r);
                if (!strcmp(akg_sketch_for_var(st), name) && !lw_ns_has(&r, name))
                    return -1;
            } else {
                expr_names(L, akg_sketch_if_cond(st), &r);
            }
            if (lw_ns_has(&r, name))
                return 1;
            int kills = 0;
            for (int w = 0; w < (k == AKG_SKETCH_STMT_IF ? 2 : 1); w++) {
                lw_block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                int t = lw_first_touch(L, &inner, 0, inner.n, name);
                if (t > 0)
                    return 1;
                kills += t < 0;
            }
            /* an if whose two branches both bind the name before reading it binds it anew
             * (`if k0 == 0: o = acc else: o = add(cold, acc)`): what came before is dead */
            if (kills == 2)
                return -1;
            continue;
        }
        lw_nameset r = {0};
        lw_stmt_reads(L, st, &r);
        if (lw_ns_has(&r, name))
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
    for (lw_frame *f = lw_cur_frame(L); f; f = f->up) {
        int r = lw_first_touch(L, &f->blk, f->pos + 1, f->blk.n, name);
        if (r)
            return r > 0;
        if (f->loop && lw_first_touch(L, &f->blk, 0, f->pos + 1, name) > 0)
            return true;
    }
    return false;
}

bool lw_is_live(lw_ctx *L, const char *name)
{
    return is_live(L, name);
}

const char *lw_target_name(const akg_sketch_expr *t, bool *whole)
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
        const char *t = lw_target_name(akg_sketch_move_target(st), &whole);
        return t && !strcmp(t, name);
    }
    if (k == AKG_SKETCH_STMT_CALL) {
        const akg_sketch_expr *d = lw_call_dst(akg_sketch_call_expr(st));
        return d && akg_sketch_expr_get_kind(d) == AKG_SKETCH_EXPR_NAME &&
               !strcmp(akg_sketch_expr_text(d), name);
    }
    return false;
}

/* Every tile name statement st writes in place (loads, stores, destinations), anywhere
 * inside. */
void lw_stmt_writes(lw_ctx *L, const akg_sketch_stmt *st, lw_nameset *s)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                lw_stmt_writes(L, akg_sketch_stmt_body_at(st, w, i), s);
        return;
    }
    const char *name = NULL;
    if (k == AKG_SKETCH_STMT_LOAD || k == AKG_SKETCH_STMT_STORE) {
        bool whole;
        name = lw_target_name(akg_sketch_move_target(st), &whole);
    } else if (k == AKG_SKETCH_STMT_CALL) {
        const akg_sketch_expr *d = lw_call_dst(akg_sketch_call_expr(st));
        if (d && akg_sketch_expr_get_kind(d) == AKG_SKETCH_EXPR_NAME)
            name = akg_sketch_expr_text(d);
    }
    if (name)
        lw_ns_add(L, s, name);
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
bool lw_writes_before_rebind(lw_ctx *L, const lw_block *b, size_t from, const char *name)
{
    for (size_t i = from; i < b->n; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, i);
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
bool lw_view_eligible(lw_ctx *L, const char *name)
{
    lw_frame *f = lw_cur_frame(L);
    bool loaded = false;
    for (size_t i = f->pos + 1; i < f->blk.n; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, &f->blk, i);
        lw_nameset r = {0};
        lw_stmt_reads(L, st, &r);
        bool w = writes_tile(L, st, name);
        if (!loaded) {
            if (!w && !lw_ns_has(&r, name) && !assigns(st, name))
                continue;
            if (akg_sketch_stmt_get_kind(st) != AKG_SKETCH_STMT_LOAD)
                return false;
            bool whole;
            const char *t = lw_target_name(akg_sketch_move_target(st), &whole);
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
const akg_sketch_stmt *lw_find_gemm_acc(lw_ctx *L, const lw_block *b, size_t from, const char *name,
                                        int depth)
{
    for (size_t i = from; i < b->n && depth < 16; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            for (int w = 0; w < 2; w++) {
                lw_block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                const akg_sketch_stmt *g = lw_find_gemm_acc(L, &inner, 0, name, depth + 1);
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

/* The first statement of b from `from` on (anywhere inside) that assigns `name` a value
 * computed from it (`acc = add(acc, ...)`, `acc += ...`), or NULL. */
const akg_sketch_stmt *lw_find_update(lw_ctx *L, const lw_block *b, size_t from, const char *name,
                                      int depth)
{
    for (size_t i = from; i < b->n && depth < 16; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            for (int w = 0; w < 2; w++) {
                lw_block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                const akg_sketch_stmt *u = lw_find_update(L, &inner, 0, name, depth + 1);
                if (u)
                    return u;
            }
            continue;
        }
        if (k != AKG_SKETCH_STMT_ASSIGN || !assigns(st, name) ||
            akg_sketch_assign_target_count(st) != 1)
            continue;
        lw_nameset r = {0};
        lw_stmt_reads(L, st, &r);
        if (lw_ns_has(&r, name))
            return st;
    }
    return NULL;
}

/* How the rest of the scope reads rank-2 tile `name`: 1 when only through row slices
 * name[a:a+P, ...] of one constant extent P, 2 when only through column slices
 * name[:, a:a+P]; 0 otherwise. */
int lw_slice_pattern(lw_ctx *L, const lw_block *b, size_t from, const char *name, int64_t *P,
                     int depth)
{
    int pattern = -1;
    for (size_t i = from; i < b->n && depth < 16; i++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, i);
        akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
        if (k == AKG_SKETCH_STMT_FOR || k == AKG_SKETCH_STMT_IF) {
            for (int w = 0; w < 2; w++) {
                lw_block inner = {st, w, akg_sketch_stmt_body_count(st, w)};
                int p = lw_slice_pattern(L, &inner, 0, name, P, depth + 1);
                if (p == 0 || (p > 0 && pattern > 0 && p != pattern))
                    return 0;
                if (p > 0)
                    pattern = p;
            }
            continue;
        }
        lw_nameset r = {0};
        lw_stmt_reads(L, st, &r);
        if (!lw_ns_has(&r, name))
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

/* Whether a for loop inside statement st (or st itself) runs over `name`. */
bool lw_binds_loop_var(const akg_sketch_stmt *st, const char *name)
{
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k == AKG_SKETCH_STMT_FOR && !strcmp(akg_sketch_for_var(st), name))
        return true;
    if (k != AKG_SKETCH_STMT_FOR && k != AKG_SKETCH_STMT_IF)
        return false;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
            if (lw_binds_loop_var(akg_sketch_stmt_body_at(st, w, i), name))
                return true;
    return false;
}

/* Whether `inner` (a for loop) can be collapsed with its parent loop over `var`: its bounds
 * do not read var. */
bool lw_bounds_free_of(lw_ctx *L, const akg_sketch_stmt *inner, const char *var)
{
    lw_nameset s = {0};
    expr_names(L, akg_sketch_for_start(inner), &s);
    expr_names(L, akg_sketch_for_stop(inner), &s);
    expr_names(L, akg_sketch_for_step(inner), &s);
    return !lw_ns_has(&s, var);
}

/* Whether expression e computes something whole now (a reduction, scan, gemm, gather,
 * softmax): the statement's values are consumed by it. */
bool lw_materialises(const akg_sketch_expr *e, int depth)
{
    if (!e || depth > 64)
        return false;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    if (k == AKG_SKETCH_EXPR_CALL) {
        static const char *const f[] = {"argmax",       "argmin",        "cumsum",     "cumprod",
                                        "local_cumsum", "local_cumprod", "gemm",       "dot",
                                        "gather",       "softmax",       "log_softmax"};
        const char *name = akg_sketch_expr_text(e);
        if (!strncmp(name, "reduce_", 7))
            return true;
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            if (!strcmp(name, f[i]))
                return true;
        for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
            if (lw_materialises(akg_sketch_expr_item(e, i), depth + 1))
                return true;
        for (size_t i = 0; i < akg_sketch_expr_kwarg_count(e); i++)
            if (lw_materialises(akg_sketch_expr_kwarg_value(e, i), depth + 1))
                return true;
        return false;
    }
    if (k == AKG_SKETCH_EXPR_UNARY)
        return lw_materialises(akg_sketch_expr_lhs(e), depth + 1);
    if (k == AKG_SKETCH_EXPR_BINARY)
        return lw_materialises(akg_sketch_expr_lhs(e), depth + 1) ||
               lw_materialises(akg_sketch_expr_rhs(e), depth + 1);
    return false;
}

/* The one reduction call (reduce_sum, reduce_max, ...) in e when e has exactly one and
 * computes nothing else whole; *bad is set when e has something else that does. */
static const akg_sketch_expr *find_reduction(const akg_sketch_expr *e, int *count, int depth)
{
    if (!e || depth > 64)
        return NULL;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    if (k == AKG_SKETCH_EXPR_UNARY)
        return find_reduction(akg_sketch_expr_lhs(e), count, depth + 1);
    if (k == AKG_SKETCH_EXPR_BINARY) {
        const akg_sketch_expr *a = find_reduction(akg_sketch_expr_lhs(e), count, depth + 1);
        const akg_sketch_expr *b = find_reduction(akg_sketch_expr_rhs(e), count, depth + 1);
        return a ? a : b;
    }
    if (k != AKG_SKETCH_EXPR_CALL)
        return NULL;
    const char *f = akg_sketch_expr_text(e);
    if (!strncmp(f, "reduce_", 7) && strcmp(f, "reduce_argmax")) {
        (*count)++;
        for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
            if (lw_materialises(akg_sketch_expr_item(e, i), 0))
                *count += 100;
        for (size_t i = 0; i < akg_sketch_expr_kwarg_count(e); i++)
            if (lw_materialises(akg_sketch_expr_kwarg_value(e, i), 0))
                *count += 100;
        return e;
    }
    if (lw_materialises(e, 0) && strcmp(f, "cast") && strcmp(f, "add") && strcmp(f, "sub") &&
        strcmp(f, "mul") && strcmp(f, "div") && strcmp(f, "max") && strcmp(f, "min") &&
        strcmp(f, "maximum") && strcmp(f, "minimum") && strcmp(f, "sqrt") && strcmp(f, "rsqrt"))
        *count += 100; /* a gemm, scan, softmax... around or beside it */
    const akg_sketch_expr *r = NULL;
    for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++) {
        const akg_sketch_expr *x = find_reduction(akg_sketch_expr_item(e, i), count, depth + 1);
        r = r ? r : x;
    }
    for (size_t i = 0; i < akg_sketch_expr_kwarg_count(e); i++) {
        const akg_sketch_expr *x =
            find_reduction(akg_sketch_expr_kwarg_value(e, i), count, depth + 1);
        r = r ? r : x;
    }
    return r;
}

/* The reduction of statement st when it is `NAME = <expression with one reduction>`. */
const akg_sketch_expr *lw_stmt_reduction(const akg_sketch_stmt *st)
{
    if (akg_sketch_stmt_get_kind(st) != AKG_SKETCH_STMT_ASSIGN ||
        strcmp(akg_sketch_assign_op(st), "=") || akg_sketch_assign_target_count(st) != 1)
        return NULL;
    int count = 0;
    const akg_sketch_expr *r = find_reduction(akg_sketch_assign_value(st), &count, 0);
    return count == 1 ? r : NULL;
}

/* A statement's hints, as one comparable text. */
static char *hint_text(const akg_sketch_stmt *st)
{
    akg_buf b;
    akg_buf_init(&b, 4096);
    for (size_t h = 0; h < akg_sketch_stmt_hint_count(st); h++) {
        for (size_t a = 0; a < akg_sketch_stmt_hint_arg_count(st, h); a++)
            akg_buf_appendf(&b, "%s,", akg_sketch_stmt_hint_arg(st, h, a));
        akg_buf_puts(&b, ";");
    }
    return akg_buf_take(&b);
}

/* Statements [i, end) of b that are sibling reductions of statement i: each `NAME = ...` with
 * one reduction whose operand no earlier statement of the run assigns, and the same hints.
 * Returns end (i + 1: none). */
size_t lw_sibling_run(lw_ctx *L, const lw_block *b, size_t i)
{
    const akg_sketch_stmt *first = lw_blk_at(L, b, i);
    if (!lw_stmt_reduction(first))
        return i + 1;
    char *h0 = hint_text(first);
    lw_nameset assigned = {0};
    lw_ns_add(L, &assigned, akg_sketch_assign_target(first, 0));
    size_t end = i + 1;
    for (; end < b->n && end - i < 8; end++) {
        const akg_sketch_stmt *st = lw_blk_at(L, b, end);
        const akg_sketch_expr *r = lw_stmt_reduction(st);
        if (!r)
            break;
        char *h = hint_text(st);
        bool same = h && h0 && !strcmp(h, h0);
        free(h);
        if (!same)
            break;
        lw_nameset reads = {0};
        expr_names(L, r, &reads);
        bool dep = false;
        for (size_t k = 0; k < reads.n && !dep; k++)
            dep = lw_ns_has(&assigned, reads.v[k]);
        if (dep)
            break;
        lw_ns_add(L, &assigned, akg_sketch_assign_target(st, 0));
    }
    free(h0);
    return end;
}
