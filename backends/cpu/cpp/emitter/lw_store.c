/*
 * lw_store.c: buffers the kernel owns, materialisation and stores.
 *
 * Storage follows the tier the sketch names: "fastest" and "fast" tiles of a
 * known size up to LW_STACK_BYTES live on the stack of the scope they are
 * allocated in (a loop body gets a fresh one per iteration, which costs
 * nothing); larger ones and tiles whose size is only known at run time are
 * heap arrays, allocated once per thread at the start of the enclosing
 * parallel region when their size does not depend on a loop variable, and
 * freed at its end; "slow" tiles outside parallel loops are plain heap arrays
 * freed at the end of their scope.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

void lw_free_scope(lw_ctx *L, size_t mark)
{
    while (L->n_heap > mark && L->heap) {
        lw_line(L, "std::free(%s);", L->heap->name);
        L->heap = L->heap->next;
        L->n_heap--;
    }
}

const char *lw_count(lw_ctx *L, int rank, const lw_dim *dim, bool *known, int64_t *k)
{
    *known = true;
    *k = 1;
    const char *t = NULL;
    for (int d = 0; d < rank; d++) {
        if (dim[d].known) {
            if (__builtin_mul_overflow(*k, dim[d].k, k))
                *known = false;
        } else {
            *known = false;
        }
        t = t ? lw_strf(L, "%s * %s", t, dim[d].c) : dim[d].c;
    }
    if (*known)
        return lw_strf(L, "%lld", (long long)*k);
    return t ? lw_strf(L, "(%s)", t) : "1";
}

static void strides(lw_ctx *L, lw_val *b)
{
    const char *s = "1";
    bool sk = true;
    int64_t sv = 1;
    for (int d = b->rank - 1; d >= 0; d--) {
        b->stride[d] = s;
        if (sk && b->dim[d].known && !__builtin_mul_overflow(sv, b->dim[d].k, &sv))
            s = lw_strf(L, "%lld", (long long)sv);
        else {
            sk = false;
            s = !strcmp(s, "1") ? b->dim[d].c : lw_strf(L, "%s * %s", b->dim[d].c, s);
        }
    }
}

void lw_set_strides(lw_ctx *L, lw_val *b)
{
    strides(L, b);
}

lw_val *lw_buffer(lw_ctx *L, akg_dtype dt, int rank, const lw_dim *dim, lw_tier tier,
                  const char *stem)
{
    return lw_buffer_layout(L, dt, rank, dim, tier, stem, LAYOUT_ROW, 0);
}

lw_val *lw_buffer_layout(lw_ctx *L, akg_dtype dt, int rank, const lw_dim *dim, lw_tier tier,
                         const char *stem, lw_layout layout, int64_t P)
{
    lw_val *b = lw_new(L, LV_BUF);
    if (!b)
        return NULL;
    b->dt = dt ? dt : AKG_DTYPE_F32;
    b->rank = rank;
    for (int d = 0; d < rank; d++)
        b->dim[d] = dim[d];
    b->tier = tier;
    b->ptr = lw_strf(L, "%s%d", stem ? stem : "buf", b->id);
    strides(L, b);
    b->layout = layout;
    b->panel = P;
    bool known;
    int64_t n;
    const char *count = lw_count(L, rank, dim, &known, &n);
    if (layout != LAYOUT_ROW) {
        /* whole panels: the panelled dimension rounded up to a multiple of P */
        int pd = layout == LAYOUT_PANEL_A ? 0 : 1;
        lw_dim padded[2] = {dim[0], dim[1]};
        if (dim[pd].known)
            padded[pd] = lw_dim_const(L, (dim[pd].k + P - 1) / P * P);
        else
            padded[pd] = lw_dim_text(L, lw_strf(L, "(akg_cdiv(%s, %lld) * %lld)", dim[pd].c,
                                                 (long long)P, (long long)P));
        count = lw_count(L, 2, padded, &known, &n);
    }
    bool varies = false;
    for (int d = 0; d < rank; d++)
        varies |= dim[d].varies;
    const char *ct = lw_ctype(b->dt);
    size_t esize = b->dt == AKG_DTYPE_F64 || b->dt == AKG_DTYPE_I64 ? 8
                   : b->dt == AKG_DTYPE_F32 || b->dt == AKG_DTYPE_I32 ? 4
                   : b->dt == AKG_DTYPE_F16 || b->dt == AKG_DTYPE_BF16 || b->dt == AKG_DTYPE_I16
                       ? 2
                       : 1;
    if (known && n <= 0)
        n = 1;
    if (known && (uint64_t)n * esize <= LW_STACK_BYTES && tier != TIER_SLOW) {
        lw_line(L, "alignas(64) %s %s[%lld];", ct, b->ptr, (long long)n);
        return b;
    }
    /* heap: a per-thread scratch buffer kept between calls and grown as needed (set up at the
     * start of the enclosing parallel region when the size is loop-invariant); a tile
     * allocated outside any parallel region is the calling thread's scratch, shared by the
     * regions inside its scope */
    if (L->par_depth > 0 && L->hoist && !varies) {
        akg_buf *save = L->out;
        int ind = L->indent;
        L->out = L->hoist;
        L->indent = L->hoist_indent;
        lw_line(L, "static thread_local akg_scratch %s_s;", b->ptr);
        lw_line(L, "%s *%s = (%s *)%s_s.get(sizeof(%s) * (size_t)(%s));", ct, b->ptr, ct, b->ptr,
                ct, count);
        lw_line(L, "akg_thread_ok = akg_thread_ok && %s;", b->ptr);
        L->out = save;
        L->indent = ind;
        return b;
    }
    lw_line(L, "static thread_local akg_scratch %s_s;", b->ptr);
    lw_line(L, "%s *%s = (%s *)%s_s.get(sizeof(%s) * (size_t)(%s));", ct, b->ptr, ct, b->ptr, ct,
            count);
    if (L->par_depth > 0)
        lw_line(L, "if (!%s) akg_out_of_memory();", b->ptr);
    else
        lw_line(L, "if (!%s) return 2;", b->ptr);
    return b;
}

/* The assignment of computation-type value x to storage element `lhs` of dtype dt. */
static void write_storage(lw_ctx *L, akg_dtype dt, const char *lhs, const char *x,
                          akg_dtype xdt)
{
    const char *ct = lw_comptype(dt);
    const char *y = strcmp(lw_comptype(xdt), ct) ? lw_strf(L, "akg_cvt<%s>(%s)", ct, x) : x;
    if (dt == AKG_DTYPE_F16)
        y = lw_strf(L, "akg_f2h(%s)", y);
    else if (dt == AKG_DTYPE_BF16)
        y = lw_strf(L, "akg_f2bf(%s)", y);
    lw_line(L, "%s = %s;", lhs, y);
}

static const char *storage_lhs(lw_ctx *L, lw_val *b, const char *const *idx)
{
    if (b->reg)
        return lw_strf(L, "%s[%s][(%s) / %lld][(%s) %% %lld]", b->ptr, idx[0], idx[1],
                       (long long)b->vw, idx[1], (long long)b->vw);
    return lw_strf(L, "%s[%s]", b->ptr, lw_addr(L, b, idx));
}

static bool lw_store_vector_open(lw_ctx *L, lw_val *dst, lw_val *v, const char *extra);

typedef struct {
    lw_val *dst; /* BUF, or VIEW over the store target */
    lw_val *v;
    lw_val *mask;
} copy_job;

static void assign_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    copy_job *j = user;
    const char *x = lw_elem(L, j->v, idx, guarded);
    write_storage(L, j->dst->dt, storage_lhs(L, j->dst, idx), x, j->v->dt);
}

void lw_assign_into(lw_ctx *L, lw_val *b, lw_val *v)
{
    if (!lw_ok(L))
        return;
    copy_job *j = lw_alloc(L, sizeof *j);
    if (!j)
        return;
    v = lw_hoist(L, v);
    j->dst = b;
    j->v = v;
    lw_val *reads[1] = {v};
    lw_emit_nest(L, b->rank, b->dim, NULL, NULL, reads, 1, L->vectorize, assign_body, j);
    b->version++;
}

lw_val *lw_force(lw_ctx *L, lw_val *v, lw_tier tier)
{
    if (!v || v->kind == LV_BUF || v->kind == LV_TENSOR || v->kind == LV_SCALAR)
        return v;
    lw_val *b = lw_buffer(L, v->dt, v->rank, v->dim, tier ? tier : TIER_FAST, "t");
    if (!b)
        return NULL;
    lw_assign_into(L, b, v);
    return b;
}

static void store_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    copy_job *j = user;
    lw_val *d = j->dst, *b = d->base;
    const char *bi[LW_MAXR];
    const char *inside = NULL; /* positions read from index tiles must lie in the target */
    for (int k = 0; k < b->rank; k++) {
        int t = d->tile_of_bdim[k];
        const char *st = d->bstep[k];
        if (d->pos[k]) {
            bi[k] = lw_view_pos(L, d, k, idx, guarded);
            const char *c = lw_strf(L, "akg_in(%s, %s)", bi[k], b->dim[k].c);
            inside = inside ? lw_strf(L, "%s && %s", inside, c) : c;
        } else if (t < 0)
            bi[k] = d->bstart[k];
        else if (!strcmp(d->bstart[k], "0") && (!st || !strcmp(st, "1")))
            bi[k] = idx[t];
        else if (!st || !strcmp(st, "1"))
            bi[k] = lw_strf(L, "(%s + %s)", d->bstart[k], idx[t]);
        else
            bi[k] = lw_strf(L, "(%s + %s * %s)", d->bstart[k], st, idx[t]);
    }
    const char *x = lw_elem(L, j->v, idx, guarded);
    const char *lhs = storage_lhs(L, b, bi);
    if (j->mask || inside) {
        const char *m = inside;
        if (j->mask) {
            const char *midx[LW_MAXR];
            lw_broadcast_idx(L, j->v, j->mask, idx, midx);
            const char *mk = lw_elem(L, j->mask, midx, guarded);
            m = m ? lw_strf(L, "%s && %s", m, mk) : mk;
        }
        lw_line(L, "if (%s) {", m);
        L->indent++;
        write_storage(L, b->dt, lhs, x, j->v->dt);
        L->indent--;
        lw_line(L, "}");
        return;
    }
    write_storage(L, b->dt, lhs, x, j->v->dt);
}

void lw_store(lw_ctx *L, lw_val *dst, lw_val *v, lw_val *mask)
{
    if (!lw_ok(L))
        return;
    copy_job *j = lw_alloc(L, sizeof *j);
    const char **lo = lw_alloc(L, sizeof(char *) * LW_MAXR);
    const char **hi = lw_alloc(L, sizeof(char *) * LW_MAXR);
    const char **rlo = lw_alloc(L, sizeof(char *) * LW_MAXR);
    const char **rhi = lw_alloc(L, sizeof(char *) * LW_MAXR);
    if (!j || !lo || !hi || !rlo || !rhi)
        return;
    v = lw_hoist(L, v);
    j->dst = dst;
    j->v = v;
    j->mask = mask;
    lw_val *b = dst->base;
    /* never write outside the target: clip the loops to the region's part inside it, and
     * skip the whole store when a dropped dimension's index is outside */
    const char *cond = NULL;
    for (int k = 0; k < b->rank; k++) {
        if (!dst->guard[k] || dst->pos[k]) /* positions from an index tile: per element */
            continue;
        int t = dst->tile_of_bdim[k];
        if (t < 0) {
            const char *c = lw_strf(L, "akg_in(%s, %s)", dst->bstart[k], b->dim[k].c);
            cond = cond ? lw_strf(L, "%s && %s", cond, c) : c;
            continue;
        }
        const char *a, *z;
        if (lw_view_range(L, dst, k, &a, &z)) {
            rlo[t] = a;
            rhi[t] = z;
            lo[t] = lw_strf(L, "akg_imin(%s, %s)", a, v->dim[t].c);
            hi[t] = lw_strf(L, "akg_imax(%s, akg_imin(%s, %s))", lo[t], z,
                            v->dim[t].c);
        }
    }
    bool vec = !mask && lw_store_vector_open(L, dst, v, cond);
    if (cond) {
        lw_line(L, "if (%s) {", cond);
        L->indent++;
    }
    lw_val *reads[2] = {v, mask};
    lw_emit_nest_raw(L, v->rank, v->dim, lo, hi, rlo, rhi, reads, mask ? 2 : 1, L->vectorize,
                     store_body, j);
    if (cond) {
        L->indent--;
        lw_line(L, "}");
    }
    if (vec) {
        L->indent--;
        lw_line(L, "}");
    }
    b->version++;
}

/* ---- broadcast hoisting ---- */

static bool costly(const lw_val *v, int depth)
{
    if (!v || v->kind != LV_EXPR || depth > 64)
        return false;
    const char *op = lw_op_name(v->op);
    if (strcmp(op, "copy") && strcmp(op, "cast") && strcmp(op, "iota") && strcmp(op, "neg"))
        return true;
    for (int i = 0; i < v->nargs; i++)
        if (costly(v->arg[i], depth + 1))
            return true;
    return false;
}

/* v's shape is strictly smaller than the part of the domain it is read over (it broadcasts),
 * so each of its elements would be recomputed for many elements of the domain. */
static bool broadcast_smaller(const lw_val *v, int R, const lw_dim *dims)
{
    if (v->rank < R)
        return true;
    for (int j = 0; j < v->rank; j++) {
        int d = R - v->rank + j;
        if (d < 0)
            continue;
        if (v->dim[j].known && v->dim[j].k == 1 && !(dims[d].known && dims[d].k == 1))
            return true;
    }
    return false;
}

static lw_val *hoist_rec(lw_ctx *L, lw_val *v, int R, const lw_dim *dims, int depth)
{
    if (!v || v->kind != LV_EXPR || depth > 64 || !lw_ok(L))
        return v;
    const char *op = lw_op_name(v->op);
    if (!strcmp(op, "transpose") || !strcmp(op, "iota"))
        return v;
    if (depth > 0 && broadcast_smaller(v, R, dims) && costly(v, 0))
        return lw_force(L, v, TIER_FAST);
    lw_val *args[3] = {0};
    bool changed = false;
    for (int i = 0; i < v->nargs; i++) {
        /* an argument is read over the parent's domain */
        args[i] = hoist_rec(L, v->arg[i], v->rank, v->dim, depth + 1);
        changed |= args[i] != v->arg[i];
    }
    if (!changed)
        return v;
    lw_val *n = lw_new(L, LV_EXPR);
    if (!n)
        return v;
    int id = n->id;
    *n = *v;
    n->id = id;
    for (int i = 0; i < v->nargs; i++)
        n->arg[i] = args[i];
    return n;
}

lw_val *lw_hoist(lw_ctx *L, lw_val *v)
{
    if (!v || v->kind != LV_EXPR)
        return v;
    return hoist_rec(L, v, v->rank, v->dim, 0);
}

/* ---- stores of register tiles, a vector at a time ---- */

/* The register tile in v's tree (its vector width sets the path's), or NULL. */
static lw_val *find_reg(lw_val *v, int depth)
{
    if (!v || depth > 32)
        return NULL;
    if (v->kind == LV_BUF && v->reg)
        return v;
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++) {
            lw_val *r = find_reg(v->arg[i], depth + 1);
            if (r)
                return r;
        }
    return NULL;
}

/* Whether view v (rank 2 tile, or rank 1 read as a row) reads f32 storage with unit step along
 * its last tile dim, which runs along the base's last dim. */
static bool unit_row_view(const lw_val *v)
{
    if (v->kind != LV_VIEW || v->mask || !v->base || v->base->reg || v->dt != AKG_DTYPE_F32 ||
        v->base->dt != AKG_DTYPE_F32 || v->base->layout != LAYOUT_ROW || lw_view_has_pos(v))
        return false;
    int last = v->rank - 1;
    int b = v->base->rank - 1;
    return v->tile_of_bdim[b] == last && (!v->bstep[b] || !strcmp(v->bstep[b], "1"));
}

static bool vec_ok(const lw_val *v, int R, int64_t MR, int64_t NR, int depth)
{
    if (!v || depth > 32)
        return false;
    if (v->kind == LV_SCALAR)
        return true;
    if (v->kind == LV_BUF && v->reg)
        return v->rank == 2 && v->dim[0].known && v->dim[1].known && v->dim[0].k == MR &&
               v->dim[1].k == NR;
    /* an operand broadcast along the rows ([MR, 1] or [1]) is a splat; along the columns ([1, NR]
     * or [NR]) a vector load */
    bool rowcol = v->rank == 2 && v->dim[1].known && v->dim[1].k == 1;
    if (v->kind == LV_VIEW) {
        if (rowcol)
            return !v->mask && v->base && !v->base->reg && v->dt == AKG_DTYPE_F32 &&
                   !lw_view_has_pos(v);
        return unit_row_view(v) && v->dim[v->rank - 1].known && v->dim[v->rank - 1].k == NR;
    }
    if (v->kind == LV_BUF && !v->reg && v->dt == AKG_DTYPE_F32 && v->layout == LAYOUT_ROW)
        return rowcol || (v->dim[v->rank - 1].known && v->dim[v->rank - 1].k == NR);
    if (v->kind != LV_EXPR || v->dt != AKG_DTYPE_F32)
        return false;
    const char *op = lw_op_name(v->op);
    if (strcmp(op, "add") && strcmp(op, "sub") && strcmp(op, "mul") && strcmp(op, "copy") &&
        strcmp(op, "div"))
        return false;
    for (int i = 0; i < v->nargs; i++)
        if (!vec_ok(v->arg[i], R, MR, NR, depth + 1))
            return false;
    return true;
}

/* The vector expression of columns [col, col + vw) of row `row` of v. */
static const char *vec_expr(lw_ctx *L, lw_val *v, const char *row, int64_t col, int64_t vw)
{
    const char *vt = lw_strf(L, "akg_v%lld", (long long)vw);
    const char *vu = lw_strf(L, "akg_v%lldu", (long long)vw);
    if (v->kind == LV_SCALAR)
        return lw_strf(L, "akg_splat<%s>(%s)", vt, v->c);
    if (v->kind == LV_BUF && v->reg)
        return lw_strf(L, "%s[%s][%lld]", v->ptr, row, (long long)(col / vw));
    bool rowcol = v->rank == 2 && v->dim[1].known && v->dim[1].k == 1;
    if (rowcol) {
        const char *idx[2] = {row, "0"};
        return lw_strf(L, "akg_splat<%s>(%s)", vt, lw_elem(L, v, idx, false));
    }
    if (v->kind == LV_VIEW || v->kind == LV_BUF) {
        const char *idx[2];
        const char *c = lw_strf(L, "%lld", (long long)col);
        if (v->rank == 2) {
            idx[0] = v->dim[0].known && v->dim[0].k == 1 ? "0" : row;
            idx[1] = c;
        } else {
            idx[0] = c;
        }
        const char *addr;
        if (v->kind == LV_BUF) {
            addr = lw_strf(L, "%s + %s", v->ptr, lw_addr(L, v, idx));
        } else {
            lw_val *b = v->base;
            const char *bi[LW_MAXR];
            for (int d = 0; d < b->rank; d++) {
                int t = v->tile_of_bdim[d];
                const char *st = v->bstep[d];
                if (t < 0)
                    bi[d] = v->bstart[d];
                else if (!st || !strcmp(st, "1"))
                    bi[d] = lw_strf(L, "(%s + %s)", v->bstart[d], idx[t]);
                else
                    bi[d] = lw_strf(L, "(%s + %s * %s)", v->bstart[d], st, idx[t]);
            }
            addr = lw_strf(L, "%s + %s", b->ptr, lw_addr(L, b, bi));
        }
        return lw_strf(L, "(*(const %s *)(%s))", vu, addr);
    }
    const char *op = lw_op_name(v->op);
    const char *a = vec_expr(L, v->arg[0], row, col, vw);
    if (!strcmp(op, "copy"))
        return a;
    const char *b = vec_expr(L, v->arg[1], row, col, vw);
    const char sym = !strcmp(op, "add") ? '+' : !strcmp(op, "sub") ? '-' : !strcmp(op, "mul") ? '*' : '/';
    return lw_strf(L, "(%s %c %s)", a, sym, b);
}

static void collect_interiors(lw_ctx *L, lw_val *v, const char **cond, int depth)
{
    if (!v || depth > 32)
        return;
    if (v->kind == LV_VIEW) {
        const char *c = lw_interior(L, v);
        if (c)
            *cond = *cond ? lw_strf(L, "%s && %s", *cond, c) : c;
        return;
    }
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++)
            collect_interiors(L, v->arg[i], cond, depth + 1);
}

/* Stores v (an elementwise combination of a register tile, row views, broadcast operands) into
 * dst a vector at a time when the whole tile is inside everything it touches; the generic nest
 * (emitted by the caller after this returns true) serves the edges. Returns whether it emitted
 * the fast path (then followed by "} else {" and the caller's generic path and "}"). */
static bool lw_store_vector_open(lw_ctx *L, lw_val *dst, lw_val *v, const char *extra)
{
    if (L->safe || v->rank != 2 || !dst || !unit_row_view(dst) || dst->mask)
        return false;
    lw_val *r = find_reg(v, 0);
    if (!r)
        return false;
    int64_t MR = r->dim[0].k, NR = r->dim[1].k, vw = r->vw;
    if (!v->dim[0].known || !v->dim[1].known || v->dim[0].k != MR || v->dim[1].k != NR ||
        !vec_ok(v, 2, MR, NR, 0))
        return false;
    const char *cond = lw_interior(L, dst);
    collect_interiors(L, v, &cond, 0);
    if (extra)
        cond = cond ? lw_strf(L, "%s && %s", extra, cond) : extra;
    lw_line(L, "if (%s) {", cond ? cond : "true");
    L->indent++;
    lw_memo_reset(L);
    for (int64_t i = 0; i < MR; i++) {
        const char *row = lw_strf(L, "%lld", (long long)i);
        for (int64_t c = 0; c < NR; c += vw) {
            const char *x = vec_expr(L, v, row, c, vw);
            const char *idx[2] = {row, lw_strf(L, "%lld", (long long)c)};
            lw_val *b = dst->base;
            const char *bi[LW_MAXR];
            for (int d = 0; d < b->rank; d++) {
                int t = dst->tile_of_bdim[d];
                const char *st = dst->bstep[d];
                if (t < 0)
                    bi[d] = dst->bstart[d];
                else if (!st || !strcmp(st, "1"))
                    bi[d] = lw_strf(L, "(%s + %s)", dst->bstart[d], idx[t]);
                else
                    bi[d] = lw_strf(L, "(%s + %s * %s)", dst->bstart[d], st, idx[t]);
            }
            lw_line(L, "*(akg_v%lldu *)(%s + %s) = %s;", (long long)vw, b->ptr,
                    lw_addr(L, b, bi), x);
        }
    }
    L->indent--;
    lw_line(L, "} else {");
    L->indent++;
    return true;
}
