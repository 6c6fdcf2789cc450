/*
 * lw_scope.c: Python scoping meets C++ scoping.
 *
 * A name that a loop or an `if` assigns and that is read after it (or in the loop's next
 * iteration) gets storage declared before the construct: a buffer for a tile, a mutable
 * variable for a scalar; assignments inside then write into it (and an `alloc` of it inside
 * is that storage). A name first bound inside the construct gets the same: a loop variable an
 * int64 that each iteration sets (its last value; OpenMP lastprivate across a parallel loop),
 * any other name storage of the type and shape a dry run of the construct finds for it. Every
 * other name bound inside a construct is forgotten at its end.
 *
 * Lazy values (views, elementwise expressions) are materialised before the storage they read
 * is written, when they are still to be read ("live"). Assignment copies a tile (`b = a` and
 * then a write into `a` leaves `b` as it was): names share a buffer until one of them is
 * written, and then the others that are live get a copy; storage a construct writes into
 * belongs to one name.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw_stmt.h"

bool lw_depends(const lw_val *v, const lw_val *s, int depth)
{
    if (!v || depth > 200)
        return false;
    if (v == s)
        return true;
    if (v->kind == LV_VIEW) {
        if (v->base == s || lw_depends(v->mask, s, depth + 1))
            return true;
        for (int b = 0; v->base && b < v->base->rank; b++)
            if (lw_depends(v->pos[b], s, depth + 1))
                return true;
        return false;
    }
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++)
            if (lw_depends(v->arg[i], s, depth + 1))
                return true;
    return false;
}

/* Materialises every live lazy value that reads storage s (about to be written through
 * the name `writer`), and copies s for the other live names bound to it. */
void lw_force_dependents(lw_ctx *L, lw_val *s, lw_val *except, const char *writer)
{
    for (size_t i = 0; i < L->n_env && lw_ok(L); i++) {
        lw_val *v = L->env[i].val;
        if (v == s && s->kind == LV_BUF && strcmp(L->env[i].name, writer) &&
            lw_is_live(L, L->env[i].name)) {
            L->env[i].val = lw_copy_to_buffer(L, s);
            continue;
        }
        if (!v || v == except || (v->kind != LV_VIEW && v->kind != LV_EXPR))
            continue;
        if (v->kind == LV_VIEW && !v->base)
            continue;
        if (!lw_depends(v, s, 0) || !lw_is_live(L, L->env[i].name))
            continue;
        L->env[i].val = lw_force(L, v, TIER_FAST);
    }
}

/* Whether every read of storage s inside v is at the element v's loop writes (the same
 * index), so v can be written into s element by element. dst: the region being written
 * (NULL: the whole of s). */
bool lw_same_access(const lw_val *v, const lw_val *s, const lw_val *dst, int depth)
{
    if (!v || depth > 200)
        return true;
    if (v == s)
        return !dst || dst->identity;
    if (v->kind == LV_VIEW) {
        if (v->mask && !lw_same_access(v->mask, s, dst, depth + 1))
            return false;
        if (lw_view_has_pos(v) || lw_view_has_pos(dst)) /* positions are data */
            return !lw_depends(v, s, 0);
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
        return !lw_depends(v, s, 0);
    for (int i = 0; i < v->nargs; i++) {
        const lw_val *a = v->arg[i];
        bool same_shape = a->rank == v->rank;
        for (int d = 0; same_shape && d < a->rank; d++)
            same_shape = lw_dim_equal(a->dim[d], v->dim[d]);
        if (!same_shape && lw_depends(a, s, 0))
            return false;
        if (!lw_same_access(a, s, dst, depth + 1))
            return false;
    }
    return true;
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
        if (lw_is_live(L, other))
            return true;
        bool is_if = st && akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_IF;
        for (int w = 0; st && w < (is_if ? 2 : 1); w++) {
            lw_block body = {st, w, akg_sketch_stmt_body_count(st, w)};
            if (lw_first_touch(L, &body, 0, body.n, other) > 0)
                return true;
        }
    }
    return false;
}

/* The storage of tile `name` about to be written in place: a lazy value (`acc = zeros(...)`
 * then `gemm(a, b, acc)`) is materialised into a buffer first, and a buffer that a loop or
 * if keeps for another name is copied. Assignment copies a tile, so the name alone is
 * rebound. */
lw_val *lw_writable(lw_ctx *L, const char *name, lw_val *v)
{
    if (!lazy_tile(v) && !(v && v->kind == LV_BUF && v->stable && strcmp(v->owner, name)))
        return v;
    lw_val *b = lw_copy_to_buffer(L, v);
    if (b)
        lw_bind(L, name, b);
    return b;
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

lw_name *lw_env_snapshot(lw_ctx *L, size_t *n)
{
    *n = L->n_env;
    lw_name *s = lw_alloc(L, (L->n_env + 1) * sizeof *s);
    if (s && L->n_env)
        memcpy(s, L->env, L->n_env * sizeof *s);
    return s;
}

void lw_env_restore(lw_ctx *L, lw_name *snap, size_t n)
{
    if (!snap)
        return;
    L->n_env = n;
    memcpy(L->env, snap, n * sizeof *snap);
}

/* The value `name` has at the end of some block of construct st (NULL: none), learnt by
 * lowering st into a scratch buffer that is then dropped; nothing of the dry run stays
 * but buffers it marked as kept by their own names (as the real run marks them). */
static lw_val *probe(lw_ctx *L, const akg_sketch_stmt *st, const char *name, bool loop)
{
    akg_buf scratch;
    akg_buf_init(&scratch, 32u << 20);
    size_t env_n;
    lw_name *snap = lw_env_snapshot(L, &env_n);
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
        lw_do_for(L, st, false, NULL);
    else
        lw_do_if(L, st);
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
    L->nontemporal = save.nontemporal;
    L->region = save.region;
    L->fenced_region = save.fenced_region; /* the dry run's fence was dropped with its code */
    lw_env_restore(L, snap, env_n);
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
void lw_stabilise(lw_ctx *L, const akg_sketch_stmt *st, bool loop, lw_nameset *lastpriv)
{
    lw_nameset w = {0};
    lw_stmt_rebinds(L, st, &w);
    lw_block body = {st, 0, loop ? akg_sketch_stmt_body_count(st, 0) : 0};
    const char *var = loop ? akg_sketch_for_var(st) : NULL;
    for (size_t i = 0; i < w.n && lw_ok(L); i++) {
        const char *name = w.v[i];
        bool own_var = var && !strcmp(name, var);
        bool carried = loop && !own_var && lw_first_touch(L, &body, 0, body.n, name) > 0;
        bool live = lw_is_live(L, name);
        if (!live && !carried)
            continue;
        lw_val *v = lw_lookup(L, name);
        if (!v || (own_var && !v->stable)) {
            /* defined inside and read only there (each iteration defines it first) */
            if (!live)
                continue;
            if (L->dry)
                continue; /* a dry run only learns what the construct binds */
            if (!lw_binds_loop_var(st, name)) {
                if (!storage_before(L, st, name, loop) && lw_ok(L))
                    lw_fail(L,
                            "'%s' is given a value inside this %s and read after it, and its "
                            "shape is not known before the %s; give it a value (or allocate "
                            "it) before the %s",
                            name, loop ? "loop" : "if", loop ? "loop" : "if", loop ? "loop" : "if");
                if (!lw_ok(L))
                    return;
                continue;
            }
            /* a loop variable read after its loop: its last value (what it held before
             * when the loop does not run) */
            bool keep = v && v->kind == LV_SCALAR && !lw_is_float(v->dt);
            lw_val *s = stable_scalar(L, name, AKG_DTYPE_I64, keep ? v->c : "0");
            if (s && lastpriv && !carried)
                lw_ns_add(L, lastpriv, s->c);
            continue;
        }
        if (own_var || (v->stable && !strcmp(v->owner, name)))
            continue;
        if (v->kind == LV_SCALAR) {
            lw_val *s = stable_scalar(L, name, v->dt, v->c);
            if (s && lastpriv && !carried)
                lw_ns_add(L, lastpriv, s->c);
            continue;
        }
        if (v->kind == LV_VIEW && !v->base)
            continue; /* an allocation still waiting for its load: it is loaded inside */
        own_storage(L, name, v, st);
    }
    /* a lazy tile the construct writes in place gets its storage before it (every
     * iteration or branch writes into the one tile), and so does a buffer shared with
     * another name */
    lw_nameset wr = {0};
    lw_stmt_writes(L, st, &wr);
    for (size_t i = 0; i < wr.n && lw_ok(L); i++) {
        bool outer = false;
        for (int w = 0; w < (loop ? 1 : 2); w++) {
            lw_block b = {st, w, akg_sketch_stmt_body_count(st, w)};
            outer |= lw_writes_before_rebind(L, &b, 0, wr.v[i]);
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
