/*
 * cu_stmt.c: statements inside a kernel (cu_kernel_stmts), lowered by the
 * semantics of cu.h: an alloc declares a tile (kept in place when it is an
 * accumulator or written again later; init_zero / init_neg_inf write their
 * value there, in the dtype of the first value written into the tile when the
 * alloc names none), a load binds a lazy tile (elements outside the tensor are
 * its `other=` scalar, taken at the load), an assign
 * binds a value or writes a kept tile in place (a value written again in a
 * later loop is kept too), a store is a thread-strided loop between barriers,
 * a gemm call statement adds its product to its accumulator (cu_gemm.c), and
 * for/if are C control flow, uniform inside a program.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

/* Whether the load st writes into name (the whole of it or a region). */
static bool loads_into(const akg_sketch_stmt *st, const char *name)
{
    const akg_sketch_expr *t = akg_sketch_move_target(st);
    if (akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_SUBSCRIPT)
        t = akg_sketch_expr_base(t);
    return akg_sketch_expr_get_kind(t) == AKG_SKETCH_EXPR_NAME &&
           !strcmp(akg_sketch_expr_text(t), name);
}

/* How often name is written (loaded into or assigned) in stmts; a write inside a loop counts
 * twice (it is carried from one iteration to the next). Stops at a new alloc of the name. */
static int count_defs(const akg_sketch_stmt *const *stmts, size_t n, const char *name, bool *stop)
{
    int c = 0;
    for (size_t i = 0; i < n && !*stop; i++) {
        const akg_sketch_stmt *st = stmts[i];
        switch (akg_sketch_stmt_get_kind(st)) {
        case AKG_SKETCH_STMT_ALLOC:
            if (!strcmp(akg_sketch_alloc_name(st), name))
                *stop = true;
            break;
        case AKG_SKETCH_STMT_LOAD:
            if (loads_into(st, name))
                c++;
            break;
        case AKG_SKETCH_STMT_ASSIGN:
            for (size_t k = 0; k < akg_sketch_assign_target_count(st); k++)
                if (!strcmp(akg_sketch_assign_target(st, k), name))
                    c++;
            break;
        case AKG_SKETCH_STMT_FOR:
        case AKG_SKETCH_STMT_IF:
            for (int w = 0; w < 2; w++) {
                size_t m = akg_sketch_stmt_body_count(st, w);
                const akg_sketch_stmt **b = malloc((m + 1) * sizeof *b);
                if (!b)
                    return 99;
                for (size_t k = 0; k < m; k++)
                    b[k] = akg_sketch_stmt_body_at(st, w, k);
                bool inner = false;
                int k = count_defs(b, m, name, &inner);
                free(b);
                c += akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_FOR ? 2 * k : k;
            }
            break;
        default:
            break;
        }
    }
    return c;
}

/* Whether name is written inside a loop among stmts (before a new alloc of it): a value
 * defined before that loop is carried from one iteration to the next. */
static bool written_in_loop(const akg_sketch_stmt *const *stmts, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++) {
        const akg_sketch_stmt *st = stmts[i];
        akg_sketch_stmt_kind kind = akg_sketch_stmt_get_kind(st);
        if (kind == AKG_SKETCH_STMT_ALLOC && !strcmp(akg_sketch_alloc_name(st), name))
            return false;
        if (kind != AKG_SKETCH_STMT_FOR && kind != AKG_SKETCH_STMT_IF)
            continue;
        for (int w = 0; w < 2; w++) {
            size_t m = akg_sketch_stmt_body_count(st, w);
            const akg_sketch_stmt **b = malloc((m + 1) * sizeof *b);
            if (!b)
                return false;
            for (size_t k = 0; k < m; k++)
                b[k] = akg_sketch_stmt_body_at(st, w, k);
            bool stop = false;
            bool hit = kind == AKG_SKETCH_STMT_FOR ? count_defs(b, m, name, &stop) > 0
                                                   : written_in_loop(b, m, name);
            free(b);
            if (hit)
                return true;
        }
    }
    return false;
}

/* ---- statements inside a kernel ---- */

typedef struct {
    const akg_sketch_stmt *const *stmts;
    size_t n, i;
} stmt_list;

static stmt_list *cur_list;

static cu_node *alloc_shape(cu_ctx *C, const akg_sketch_stmt *st)
{
    size_t r = akg_sketch_alloc_rank(st);
    akg_dtype dt = akg_sketch_alloc_dtype(st);
    cu_node *n = cu_new_node(C, CN_BUF, (int)r, dt);
    for (size_t d = 0; d < r; d++) {
        const akg_sketch_expr *de = akg_sketch_alloc_dim(st, d);
        if (akg_sketch_expr_get_kind(de) == AKG_SKETCH_EXPR_INT && akg_sketch_expr_int(de) == 1)
            continue;
        if (!cu_is_index(C, de)) {
            cu_fail_expr(C, de, "a tile extent must be an integer expression");
            return n;
        }
        n->unit[d] = false;
        const char *e = cu_temp(C, "_x");
        cu_line(C, "const long long %s = %s;", e, cu_index(C, de));
        n->ext[d] = e;
        n->bnd[d] = cu_bound(C, de);
    }
    return n;
}

/* The dtype of the first value written into name among stmts (before a new alloc of it), for
 * a tile allocated without a dtype: a load's source dtype, else the checker's inferred dtype of
 * the name (an assignment's value). AKG_DTYPE_UNKNOWN when nothing writes it. */
static akg_dtype first_write_dtype(cu_ctx *C, const akg_sketch_stmt *const *stmts, size_t n,
                                   const char *name, int *stop)
{
    for (size_t i = 0; i < n && !*stop; i++) {
        const akg_sketch_stmt *st = stmts[i];
        switch (akg_sketch_stmt_get_kind(st)) {
        case AKG_SKETCH_STMT_ALLOC:
            if (!strcmp(akg_sketch_alloc_name(st), name))
                *stop = 1;
            break;
        case AKG_SKETCH_STMT_LOAD: {
            if (!loads_into(st, name))
                break;
            const akg_sketch_expr *s = akg_sketch_move_source(st);
            if (akg_sketch_expr_get_kind(s) == AKG_SKETCH_EXPR_SUBSCRIPT)
                s = akg_sketch_expr_base(s);
            cu_bind *b = akg_sketch_expr_get_kind(s) == AKG_SKETCH_EXPR_NAME
                             ? cu_lookup(C, akg_sketch_expr_text(s))
                             : NULL;
            if (b && b->kind == CB_MEM)
                return b->mem->dt;
            *stop = 2;
            break;
        }
        case AKG_SKETCH_STMT_ASSIGN:
            for (size_t k = 0; k < akg_sketch_assign_target_count(st); k++)
                if (!strcmp(akg_sketch_assign_target(st, k), name))
                    *stop = 2;
            break;
        case AKG_SKETCH_STMT_CALL: {
            const akg_sketch_expr *dst = akg_sketch_expr_kwarg(akg_sketch_call_expr(st), "dst");
            if (dst && akg_sketch_expr_get_kind(dst) == AKG_SKETCH_EXPR_NAME &&
                !strcmp(akg_sketch_expr_text(dst), name))
                *stop = 2;
            break;
        }
        case AKG_SKETCH_STMT_FOR:
        case AKG_SKETCH_STMT_IF:
            for (int w = 0; w < 2 && !*stop; w++) {
                size_t m = akg_sketch_stmt_body_count(st, w);
                const akg_sketch_stmt **b = cu_alloc(C, (m + 1) * sizeof *b);
                if (!b)
                    return AKG_DTYPE_UNKNOWN;
                for (size_t k = 0; k < m; k++)
                    b[k] = akg_sketch_stmt_body_at(st, w, k);
                akg_dtype dt = first_write_dtype(C, b, m, name, stop);
                if (dt != AKG_DTYPE_UNKNOWN)
                    return dt;
            }
            break;
        default:
            break;
        }
    }
    if (*stop == 2) {
        /* written by an assignment or a call: the value's dtype as the checker inferred it */
        long v = akg_sketch_value_find(C->sk, name);
        return v >= 0 ? akg_sketch_value_dtype(C->sk, v) : AKG_DTYPE_UNKNOWN;
    }
    return AKG_DTYPE_UNKNOWN;
}

static void stmt_alloc(cu_ctx *C, const akg_sketch_stmt *st)
{
    const char *name = akg_sketch_alloc_name(st);
    cu_node *shape = alloc_shape(C, st);
    bool stop = false;
    int defs = cur_list ? count_defs(cur_list->stmts + cur_list->i + 1,
                                     cur_list->n - cur_list->i - 1, name, &stop)
                        : 1;
    bool init =
        akg_sketch_alloc_has_hint(st, "init_zero") || akg_sketch_alloc_has_hint(st, "init_neg_inf");
    if (init && shape->dt == AKG_DTYPE_UNKNOWN) {
        /* an initialised tile without dtype=: its content is read before it is written (an
         * accumulator), so its buffer or register exists from here on. Its dtype is the first
         * value's written into it, as the language says; f32 when that is not known (the
         * value an init hint gives a tile read before any write) */
        int end = 0;
        akg_dtype dt = cur_list ? first_write_dtype(C, cur_list->stmts + cur_list->i + 1,
                                                    cur_list->n - cur_list->i - 1, name, &end)
                                : AKG_DTYPE_UNKNOWN;
        shape->dt = dt == AKG_DTYPE_UNKNOWN || dt == AKG_DTYPE_BOOL ? AKG_DTYPE_F32 : dt;
    }
    bool keep = defs > 1 || init || akg_sketch_alloc_has_hint(st, "accumulator");
    cu_bind *b = cu_bind_new(C, name, CB_ALLOC);
    if (!b)
        return;
    b->node = shape;
    b->mat = keep;
    if (keep && shape->dt != AKG_DTYPE_UNKNOWN) {
        /* a kept tile: a uniform register or a per-block buffer, written in place */
        const char *v = akg_sketch_alloc_has_hint(st, "init_neg_inf") ? "(-INFINITY)" : "0";
        cu_node *lit = cu_new_node(C, CN_LIT, shape->rank, shape->dt);
        lit->c = cu_strf(C, "(%s)%s", cu_comptype(shape->dt), v);
        lit->weak = true;
        for (int d = 0; d < shape->rank; d++) {
            lit->ext[d] = shape->ext[d];
            lit->bnd[d] = shape->bnd[d];
            lit->unit[d] = shape->unit[d];
        }
        b->node = cu_materialize(C, lit, shape->dt);
        b->kind = CB_VALUE;
    }
}

/* Writes value v into the tile name (assign or load): a kept tile in place, else a new
 * binding of the (lazy) value. */
static void define_tile(cu_ctx *C, const char *name, cu_node *v, const akg_sketch_expr *at)
{
    cu_bind *b = cu_lookup(C, name);
    if (b && (b->kind == CB_VALUE || b->kind == CB_ALLOC) && b->mat) {
        akg_dtype dt = b->node->dt != AKG_DTYPE_UNKNOWN ? b->node->dt
                       : v->weak                        ? AKG_DTYPE_F32
                                                        : v->dt;
        if (b->kind == CB_ALLOC) {
            /* the first write fixes the dtype of a tile allocated without one */
            cu_node *shape = b->node;
            shape->dt = dt;
            cu_node *like = v->rank == shape->rank ? v : shape;
            (void)like;
            if (cu_all_unit(shape)) {
                b->node = cu_uniform(C, v, dt);
                b->node->rank = shape->rank;
            } else {
                cu_node *lit = cu_new_node(C, CN_LIT, shape->rank, dt);
                (void)lit;
                b->node = shape;
                b->node->kind = CN_BUF;
                /* allocate through materialize of the value */
                b->node = cu_materialize(C, v, dt);
                b->node->rank = shape->rank;
                for (int d = 0; d < shape->rank; d++) {
                    b->node->ext[d] = shape->ext[d];
                    b->node->unit[d] = shape->unit[d];
                }
            }
            b->kind = CB_VALUE;
            return;
        }
        cu_node *dst = b->node;
        if (dst->kind == CN_SCAL) {
            const char *zeros[CU_MAXR] = {"0", "0", "0", "0", "0", "0", "0", "0"};
            if (!cu_all_unit(v)) {
                cu_fail_expr(C, at, "`%s` is one element; the value written to it is a tile", name);
                return;
            }
            const char *x = cu_elem(C, v, zeros);
            cu_line(C, "%s = AKG_CVT(%s, %s);", dst->c, cu_comptype(dst->dt), x);
            return;
        }
        cu_write_buf(C, dst, v);
        return;
    }
    if (b && b->loop_depth < C->loop_depth && b->kind == CB_VALUE && !b->mat) {
        cu_fail_expr(C, at,
                     "`%s` is written in a loop and read in the next iteration; allocate it "
                     "before the loop (alloc(..., llm_hint=[\"accumulator\"]))",
                     name);
        return;
    }
    cu_node *shape = b && b->kind == CB_ALLOC ? b->node : NULL;
    cu_bind *nb = cu_bind_new(C, name, CB_VALUE);
    if (!nb)
        return;
    if (cur_list &&
        written_in_loop(cur_list->stmts + cur_list->i + 1, cur_list->n - cur_list->i - 1, name)) {
        /* an accumulator without an alloc (`acc = fill(...)`, `bv = t0`, then `acc = f(acc)`
         * in a loop): kept as an accumulator alloc's tile, a uniform register when it is one
         * element, else a per-block buffer, and written in place by the loop */
        akg_dtype dt = shape && shape->dt != AKG_DTYPE_UNKNOWN ? shape->dt
                       : v->weak ? (cu_is_float(v->dt) ? AKG_DTYPE_F32 : v->dt)
                                 : v->dt;
        int rank = shape ? shape->rank : v->rank;
        nb->node = cu_materialize(C, v, dt);
        nb->node->rank = rank;
        nb->mat = true;
        return;
    }
    if (cu_all_unit(v) && v->kind != CN_LOAD && v->kind != CN_LIT) {
        akg_dtype dt = shape && shape->dt != AKG_DTYPE_UNKNOWN ? shape->dt
                       : v->weak ? (cu_is_float(v->dt) ? AKG_DTYPE_F32 : v->dt)
                                 : v->dt;
        v = cu_uniform(C, v, dt);
        v->rank = shape ? shape->rank : v->rank;
    } else if (shape && shape->dt != AKG_DTYPE_UNKNOWN && shape->dt != v->dt) {
        cu_node *c = cu_new_node(C, CN_CAST, v->rank, shape->dt);
        *c = *v;
        c->kind = CN_CAST;
        c->dt = shape->dt;
        c->a[0] = v;
        c->nargs = 1;
        c->weak = false;
        v = c;
    }
    nb->node = v;
}

/* A region of a tensor-like memory, paired with a tile of rank trank (ext: the tile's
 * extents, or NULL to take the region's own). */
static cu_node *region(cu_ctx *C, const akg_sketch_expr *sub, const cu_node *tile)
{
    const akg_sketch_expr *base = akg_sketch_expr_get_kind(sub) == AKG_SKETCH_EXPR_SUBSCRIPT
                                      ? akg_sketch_expr_base(sub)
                                      : sub;
    const char *name = akg_sketch_expr_text(base);
    cu_bind *b = akg_sketch_expr_get_kind(base) == AKG_SKETCH_EXPR_NAME ? cu_lookup(C, name) : NULL;
    if (!b || b->kind != CB_MEM) {
        cu_fail_expr(C, sub,
                     "`%s`: a load or store region of a tile in registers (only tensors and "
                     "`slow` host tiles are addressed in CUDA C)",
                     cu_text(C, sub));
        return NULL;
    }
    cu_mem *m = b->mem;
    cu_node *n = cu_new_node(C, CN_LOAD, 0, m->dt);
    n->mem = m;
    size_t ni = akg_sketch_expr_get_kind(sub) == AKG_SKETCH_EXPR_SUBSCRIPT
                    ? akg_sketch_expr_item_count(sub)
                    : 0;
    int slices[CU_MAXR], ns = 0;
    bool unitslice[CU_MAXR];
    const char *len[CU_MAXR], *lbnd[CU_MAXR];
    for (int d = 0; d < m->rank; d++) {
        const akg_sketch_expr *it = (size_t)d < ni ? akg_sketch_expr_item(sub, (size_t)d) : NULL;
        if (it && akg_sketch_expr_get_kind(it) != AKG_SKETCH_EXPR_SLICE) {
            if (!cu_is_index(C, it)) {
                cu_fail_expr(C, it,
                             "`%s`: an index in a region must be an integer expression (index "
                             "tiles are not lowered)",
                             cu_text(C, it));
                return NULL;
            }
            const char *p = cu_temp(C, "_ix");
            cu_line(C, "const long long %s = %s;", p, cu_index(C, it));
            n->fix[d] = p;
            continue;
        }
        const akg_sketch_expr *s0 = it ? akg_sketch_slice_start(it) : NULL;
        const akg_sketch_expr *s1 = it ? akg_sketch_slice_stop(it) : NULL;
        const akg_sketch_expr *s2 = it ? akg_sketch_slice_step(it) : NULL;
        if ((s0 && !cu_is_index(C, s0)) || (s1 && !cu_is_index(C, s1)) ||
            (s2 && !cu_is_index(C, s2))) {
            cu_fail_expr(C, it, "`%s`: slice bounds and step must be integer expressions",
                         cu_text(C, it));
            return NULL;
        }
        const char *st = cu_temp(C, "_s");
        cu_line(C, "const long long %s = %s;", st, s0 ? cu_index(C, s0) : "0LL");
        n->start[d] = st;
        if (s2 && akg_sketch_expr_get_kind(s2) == AKG_SKETCH_EXPR_INT)
            n->step[d] = cu_strf(C, "%lldLL", (long long)akg_sketch_expr_int(s2));
        else if (s2) {
            /* a step the checker could not see (a constexpr, a symbol) is positive by the
             * language's rule (a slice's step is > 0) */
            const char *sp = cu_temp(C, "_st");
            cu_line(C, "const long long %s = %s;", sp, cu_index(C, s2));
            n->step[d] = sp;
        } else
            n->step[d] = "1LL";
        const char *stop = s1 ? cu_index(C, s1) : m->dim[d];
        len[ns] = cu_strf(C, "akg_ceildiv(%s - %s, %s)", stop, st, n->step[d]);
        lbnd[ns] =
            s1 ? (cu_bound(C, s1)
                      ? (s0 && !cu_host_known(C, s0) ? NULL : cu_strf(C, "(%s)", cu_bound(C, s1)))
                      : NULL)
               : m->dim[d];
        int64_t k;
        unitslice[ns] = it && cu_range_const(C, s0, s1, &k) && k == 1;
        slices[ns++] = d;
    }
    /* pair the slices with the tile's dimensions; unit slices pair with nothing when the
     * counts differ, and so do the tile's unit dimensions */
    int trank = tile ? tile->rank : ns;
    int tnon = 0;
    if (tile)
        for (int d = 0; d < tile->rank; d++)
            tnon += !tile->unit[d];
    int drop = ns - trank;
    int t = 0;
    for (int s = 0; s < ns; s++) {
        int d = slices[s];
        if (drop > 0 && unitslice[s]) {
            n->tdim[d] = -1;
            drop--;
            continue;
        }
        if (tile && ns < trank) {
            /* more tile dims than slices: skip the tile's unit dims */
            while (t < trank && tile->unit[t] && trank - t > ns - s)
                t++;
        }
        if (t >= trank) {
            cu_fail(C, NULL, "the region `%s` does not match the tile's shape", cu_text(C, sub));
            return NULL;
        }
        n->tdim[d] = t;
        n->ext[t] = len[s];
        n->bnd[t] = lbnd[s];
        n->unit[t] = unitslice[s];
        t++;
    }
    (void)tnon;
    n->rank = trank;
    if (tile) {
        for (int d = 0; d < trank; d++) {
            n->ext[d] = tile->ext[d];
            n->bnd[d] = tile->bnd[d];
            n->unit[d] = tile->unit[d];
        }
    }
    n->epoch = C->epoch;
    return n;
}

static void stmt_load(cu_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *tgt = akg_sketch_move_target(st);
    if (akg_sketch_expr_get_kind(tgt) != AKG_SKETCH_EXPR_NAME) {
        cu_fail(C, st, "load into a tile region: not lowered to CUDA C yet (load the whole tile)");
        return;
    }
    if (akg_sketch_move_option(st, "mask")) {
        cu_fail(C, st, "load with mask=: not lowered to CUDA C yet (the bounds guard is implicit)");
        return;
    }
    const char *name = akg_sketch_expr_text(tgt);
    cu_bind *b = cu_lookup(C, name);
    if (!b || (b->kind != CB_ALLOC && b->kind != CB_VALUE) || !b->node) {
        cu_fail(C, st, "load into `%s`, which is not an allocated tile", name);
        return;
    }
    cu_node *n = region(C, akg_sketch_move_source(st), b->node);
    if (!n)
        return;
    const akg_sketch_expr *other = akg_sketch_move_option(st, "other");
    if (other) {
        /* a scalar: a number (1e999 and -inf are the infinities), a constexpr, a param or
         * any uniform expression of them, taken once here (the load is read later) */
        cu_node *o = cu_value(C, other);
        if (C->status)
            return;
        if (!cu_all_unit(o)) {
            cu_fail_expr(C, other,
                         "other= `%s` is a tile; it takes a scalar (a number such as 0.0 or "
                         "-inf, a constexpr or a param)",
                         cu_text(C, other));
            return;
        }
        const char *zeros[CU_MAXR] = {"0", "0", "0", "0", "0", "0", "0", "0"};
        const char *x = cu_elem(C, o, zeros);
        if (o->kind == CN_LIT)
            n->other = x;
        else {
            const char *ct = cu_comptype(n->mem->dt);
            const char *v = cu_temp(C, "_other");
            cu_line(C, "const %s %s = (%s)(%s);", ct, v, ct, x);
            n->other = v;
        }
    }
    akg_dtype dt = b->node->dt != AKG_DTYPE_UNKNOWN ? b->node->dt : n->mem->dt;
    if (n->dt != dt) {
        cu_node *c = cu_new_node(C, CN_CAST, n->rank, dt);
        for (int d = 0; d < n->rank; d++) {
            c->ext[d] = n->ext[d];
            c->bnd[d] = n->bnd[d];
            c->unit[d] = n->unit[d];
        }
        c->a[0] = n;
        c->nargs = 1;
        c->epoch = n->epoch;
        n = c;
    }
    define_tile(C, name, n, tgt);
}

/* Whether n reads memory m through a load whose region differs from the store's (a store
 * reading other elements of what it writes) or was loaded before a later store to m. */
static const char *stale_read(const cu_node *n, const cu_mem *m, int epoch)
{
    if (!n)
        return NULL;
    if (n->kind == CN_LOAD && n->mem == m && n->epoch < epoch)
        return m->name;
    for (int i = 0; i < n->nargs && i < 3; i++) {
        const char *r = stale_read(n->a[i], m, epoch);
        if (r)
            return r;
    }
    return NULL;
}

static void stmt_store(cu_ctx *C, const akg_sketch_stmt *st)
{
    if (akg_sketch_move_option(st, "mask")) {
        cu_fail(C, st, "store with mask=: not lowered to CUDA C yet");
        return;
    }
    cu_node *v = cu_value(C, akg_sketch_move_source(st));
    if (C->status)
        return;
    cu_node *r = region(C, akg_sketch_move_target(st), v->rank && !cu_all_unit(v) ? v : NULL);
    if (!r)
        return;
    if (r->rank < v->rank && !cu_all_unit(v)) {
        cu_fail(C, st, "the stored value's rank is above the region's");
        return;
    }
    /* every tensor this program stored to since a tile was loaded from it: the tile's lazy
     * reads would see the new values */
    C->epoch++;
    cu_sync(C);
    const char *idx[CU_MAXR];
    cu_loop_begin(C, r->rank, r->ext, idx);
    const char *vi[CU_MAXR];
    int off = r->rank - v->rank;
    for (int d = 0; d < v->rank; d++)
        vi[d] = v->unit[d] || d + off < 0 ? "0" : idx[d + off];
    const char *x = cu_elem(C, v, vi);
    const char *guard;
    const char *addr;
    {
        /* the address, as a load's */
        const cu_mem *m = r->mem;
        const char *a = NULL, *g = NULL;
        for (int d = 0; d < m->rank; d++) {
            const char *pos = r->fix[d] ? r->fix[d]
                                        : cu_strf(C, "(%s + %s * %s)", r->start[d], r->step[d],
                                                  r->tdim[d] < 0 ? "0" : idx[r->tdim[d]]);
            const char *p = cu_temp(C, "_p");
            cu_line(C, "const long long %s = %s;", p, pos);
            const char *gd = cu_strf(C, "%s >= 0 && %s < %s", p, p, m->dim[d]);
            g = g ? cu_strf(C, "%s && %s", g, gd) : gd;
            a = a ? cu_strf(C, "(%s) * (%s) + %s", a, m->dim[d], p) : p;
        }
        guard = g ? g : "true";
        addr = a ? a : "0";
    }
    cu_line(C, "if (%s) %s[%s] = AKG_CVT(%s, %s);", guard, r->mem->ptr, addr, cu_ctype(r->mem->dt),
            x);
    cu_loop_end(C);
    cu_sync(C);
    /* tiles loaded from this memory before now may no longer be read lazily */
    for (size_t i = 0; i < C->n_binds; i++) {
        cu_bind *b = &C->binds[i];
        if (b->kind == CB_VALUE && !b->mat && b->node && stale_read(b->node, r->mem, C->epoch)) {
            /* keep their values: a copy before the store would be needed; refuse if read */
            b->kind = CB_ALLOC;
            b->node = cu_new_node(C, CN_BUF, b->node->rank, b->node->dt);
            b->mat = false;
        }
    }
}

static void stmt_assign(cu_ctx *C, const akg_sketch_stmt *st)
{
    if (akg_sketch_assign_target_count(st) != 1) {
        cu_fail(C, st, "tuple assignments are not lowered to CUDA C");
        return;
    }
    const char *name = akg_sketch_assign_target(st, 0);
    const char *op = akg_sketch_assign_op(st);
    const akg_sketch_expr *val = akg_sketch_assign_value(st);
    cu_bind *old = cu_lookup(C, name);
    if (cu_is_index(C, val) && !strcmp(op, "=") && (!old || old->kind == CB_INT)) {
        cu_bind *b = cu_bind_new(C, name, CB_INT);
        if (!b)
            return;
        b->c = cu_temp(C, cu_strf(C, "v_%s_", name));
        cu_line(C, "const long long %s = %s;", b->c, cu_index(C, val));
        b->bnd = cu_bound(C, val); /* an extent named by it has this bound */
        return;
    }
    if (!strcmp(op, "=") && akg_sketch_expr_get_kind(val) == AKG_SKETCH_EXPR_CALL &&
        cu_gemm_in_place(C, name, val, akg_sketch_expr_item_count(val)))
        return; /* `acc = gemm(a, b, acc)` on a kept accumulator: updated in place */
    cu_node *v = cu_value(C, val);
    if (strcmp(op, "=")) {
        static const struct {
            const char *sym, *op;
        } map[] = {{"+=", "add"}, {"-=", "sub"}, {"*=", "mul"}, {"/=", "div"}};
        const cu_op *o = NULL;
        for (size_t i = 0; i < 4; i++)
            if (!strcmp(map[i].sym, op))
                o = cu_op_find(map[i].op);
        if (!o || !old || old->kind != CB_VALUE) {
            cu_fail(C, st, "`%s %s ...`: not lowered to CUDA C", name, op);
            return;
        }
        cu_node *cur = old->node;
        cu_node *r = cu_new_node(C, CN_OP, cur->rank, cur->dt);
        *r = *cur;
        r->kind = CN_OP;
        r->op = o;
        r->a[0] = cur;
        r->a[1] = v;
        r->nargs = 2;
        r->weak = false;
        v = r;
    }
    if (C->status)
        return;
    define_tile(C, name, v, val);
}

static void stmt_for(cu_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *a = akg_sketch_for_start(st), *b = akg_sketch_for_stop(st),
                          *s = akg_sketch_for_step(st);
    if ((a && !cu_is_index(C, a)) || !cu_is_index(C, b) || (s && !cu_is_index(C, s))) {
        cu_fail(C, st, "loop bounds must be integer expressions");
        return;
    }
    const char *v = cu_temp(C, cu_strf(C, "v_%s_", akg_sketch_for_var(st)));
    const char *stop = cu_temp(C, "_stop");
    cu_line(C, "const long long %s = %s;", stop, cu_index(C, b));
    cu_line(C, "for (long long %s = %s; %s < %s; %s += %s) {", v, a ? cu_index(C, a) : "0LL", v,
            stop, v, s ? cu_index(C, s) : "1LL");
    C->indent++;
    size_t mark = C->n_binds;
    cu_bind *lb = cu_bind_new(C, akg_sketch_for_var(st), CB_INT);
    if (lb)
        lb->c = v;
    C->loop_depth++;
    size_t n = akg_sketch_stmt_body_count(st, 0);
    const akg_sketch_stmt **body = cu_alloc(C, (n + 1) * sizeof *body);
    if (!body)
        return;
    for (size_t i = 0; i < n; i++)
        body[i] = akg_sketch_stmt_body_at(st, 0, i);
    cu_kernel_stmts(C, body, n);
    C->loop_depth--;
    C->n_binds = mark;
    C->indent--;
    cu_line(C, "}");
}

static void stmt_if(cu_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *cond = akg_sketch_if_cond(st);
    cu_node *c = cu_value(C, cond);
    if (C->status)
        return;
    if (!cu_all_unit(c)) {
        cu_fail(C, st, "`if` on a tile: not lowered to CUDA C (use where())");
        return;
    }
    const char *zeros[CU_MAXR] = {"0", "0", "0", "0", "0", "0", "0", "0"};
    const char *x = cu_elem(C, c, zeros);
    for (int w = 0; w < 2; w++) {
        size_t n = akg_sketch_stmt_body_count(st, w);
        if (w == 1 && n == 0)
            break;
        cu_line(C, w == 0 ? "if (%s) {" : "} else {", x);
        C->indent++;
        size_t mark = C->n_binds;
        const akg_sketch_stmt **body = cu_alloc(C, (n + 1) * sizeof *body);
        if (!body)
            return;
        for (size_t i = 0; i < n; i++)
            body[i] = akg_sketch_stmt_body_at(st, w, i);
        cu_kernel_stmts(C, body, n);
        C->n_binds = mark;
        C->indent--;
    }
    cu_line(C, "}");
}

/* A call statement: gemm(a, b, c) and gemm(a, b, dst=c) add op(a) @ op(b) to c (in place when
 * c is a kept accumulator, else c is bound to the new value); other calls are refused. */
static void stmt_call(cu_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *call = akg_sketch_call_expr(st);
    const char *fn = akg_sketch_expr_text(call);
    size_t n = akg_sketch_expr_item_count(call);
    const akg_sketch_expr *dst = akg_sketch_expr_kwarg(call, "dst");
    if (!strcmp(fn, "gemm") && !dst && n == 3)
        dst = akg_sketch_expr_item(call, 2);
    if (strcmp(fn, "gemm") || !dst || akg_sketch_expr_get_kind(dst) != AKG_SKETCH_EXPR_NAME) {
        cu_fail(C, st,
                "`%s(...)` as a statement: not lowered to CUDA C yet (gemm(a, b, c) and "
                "gemm(a, b, dst=c) are; write the call as a value: `c = %s(...)`)",
                fn, fn);
        return;
    }
    const char *name = akg_sketch_expr_text(dst);
    if (cu_gemm_in_place(C, name, call, n))
        return;
    cu_node *v = cu_gemm_value(C, call, n);
    if (C->status)
        return;
    define_tile(C, name, v, dst);
}

void cu_kernel_stmts(cu_ctx *C, const akg_sketch_stmt *const *stmts, size_t n)
{
    stmt_list *saved = cur_list;
    stmt_list l = {stmts, n, 0};
    cur_list = &l;
    for (l.i = 0; l.i < n && !C->status; l.i++) {
        const akg_sketch_stmt *st = stmts[l.i];
        const akg_sketch_stmt *prev = C->cur;
        C->cur = st;
        switch (akg_sketch_stmt_get_kind(st)) {
        case AKG_SKETCH_STMT_ALLOC:
            stmt_alloc(C, st);
            break;
        case AKG_SKETCH_STMT_LOAD:
            stmt_load(C, st);
            break;
        case AKG_SKETCH_STMT_STORE:
            stmt_store(C, st);
            break;
        case AKG_SKETCH_STMT_ASSIGN:
            stmt_assign(C, st);
            break;
        case AKG_SKETCH_STMT_FOR:
            stmt_for(C, st);
            break;
        case AKG_SKETCH_STMT_IF:
            stmt_if(C, st);
            break;
        case AKG_SKETCH_STMT_PASS:
            break;
        case AKG_SKETCH_STMT_CALL:
            stmt_call(C, st);
            break;
        }
        C->cur = prev;
    }
    cur_list = saved;
}
