/*
 * lw_value.c: views of regions and the C++ text of one element of any value.
 *
 * A view keeps, per dimension of its base, the first index and the step of
 * the region (or the integer index of a dropped dimension) and which tile
 * dimension runs along it; a dimension selected by an integer tile (an index
 * tile: its dimensions become the region's) keeps that tile, whose elements
 * are the positions read, each tested against the base's extent. Its element
 * at tile index (i, j, ...) is the base's element at start + step * i ...,
 * converted to the tile's dtype, or `other` where that index leaves the base
 * or the mask is false. The bounds test of a base dimension is left out where
 * the loops around the element prove it (lw_loops.c splits loops into an
 * interior and edges) or where the region provably stays inside.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

void lw_memo_reset(lw_ctx *L)
{
    L->n_memo = 0;
}

static const char *memo_find(lw_ctx *L, int id, const char *key)
{
    for (size_t i = 0; i < L->n_memo; i++)
        if (L->memo[i].id == id && strcmp(L->memo[i].key, key) == 0)
            return L->memo[i].name;
    return NULL;
}

static void memo_add(lw_ctx *L, int id, const char *key, const char *name)
{
    if (L->n_memo == L->cap_memo) {
        size_t cap = L->cap_memo ? L->cap_memo * 2 : 64;
        struct lw_memo *m = lw_alloc(L, cap * sizeof *m);
        if (!m)
            return;
        if (L->n_memo)
            memcpy(m, L->memo, L->n_memo * sizeof *m);
        L->memo = m;
        L->cap_memo = cap;
    }
    L->memo[L->n_memo].id = id;
    L->memo[L->n_memo].key = key;
    L->memo[L->n_memo].name = name;
    L->n_memo++;
}

static const char *idx_key(lw_ctx *L, int rank, const char *const *idx)
{
    const char *k = "";
    for (int d = 0; d < rank; d++)
        k = lw_strf(L, "%s|%s", k, idx[d]);
    return k;
}

/* ---- regions and views ---- */

typedef struct {
    int n;                        /* kept dimensions (the region's rank) */
    lw_dim ext[LW_MAXR];          /* their extents */
    int bdim[LW_MAXR];            /* the base dim each runs along; -1 for a None axis */
    int sub[LW_MAXR];             /* the dim of the base dim's index tile it runs along */
    lw_val *pos[LW_MAXR];         /* per base dim: its index tile, or NULL */
    const char *start[LW_MAXR];   /* per base dim */
    const char *step[LW_MAXR];    /* per base dim; NULL for an integer index */
    bool step_one[LW_MAXR];
    bool inside[LW_MAXR];         /* per base dim: provably inside the base */
    bool nonneg[LW_MAXR];         /* per base dim: the first index is provably >= 0 */
} region;

/* Whether item `it` of a region selects base dim b through an integer tile; then the tile's
 * dims join the region (an error is left in L when it is a tile of another kind). */
static bool index_tile(lw_ctx *L, const akg_sketch_expr *it, region *r, int b)
{
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(it);
    if (k == AKG_SKETCH_EXPR_NAME) {
        lw_val *v = lw_lookup(L, akg_sketch_expr_text(it));
        if (!v || v->kind == LV_SCALAR)
            return false;
    } else if (k != AKG_SKETCH_EXPR_CALL && k != AKG_SKETCH_EXPR_BINARY &&
               k != AKG_SKETCH_EXPR_UNARY && k != AKG_SKETCH_EXPR_SUBSCRIPT) {
        return false;
    }
    lw_val *t = lw_value_of(L, it);
    if (!t)
        return true;
    if (t->kind == LV_SCALAR)
        return false;
    if (lw_is_float(t->dt) || t->dt == AKG_DTYPE_BOOL) {
        lw_fail(L, "an index tile holds integer positions, not %s", akg_dtype_name(t->dt));
        return true;
    }
    r->start[b] = "0";
    r->step[b] = NULL;
    r->inside[b] = false;
    r->pos[b] = t;
    for (int q = 0; q < t->rank; q++) {
        if (r->n >= LW_MAXR) {
            lw_fail(L, "a region of more than %d dimensions", LW_MAXR);
            return true;
        }
        r->ext[r->n] = t->dim[q];
        r->sub[r->n] = q;
        r->bdim[r->n++] = b;
    }
    return true;
}

static bool parse_region(lw_ctx *L, lw_val *base, const akg_sketch_expr *sub, region *r)
{
    memset(r, 0, sizeof *r);
    size_t nitems = 0;
    if (sub && akg_sketch_expr_get_kind(sub) == AKG_SKETCH_EXPR_SUBSCRIPT)
        nitems = akg_sketch_expr_item_count(sub);
    int b = 0;
    for (size_t i = 0; i < nitems; i++) {
        const akg_sketch_expr *it = akg_sketch_expr_item(sub, i);
        akg_sketch_expr_kind k = akg_sketch_expr_get_kind(it);
        if (k == AKG_SKETCH_EXPR_NONE) {
            if (r->n >= LW_MAXR)
                return lw_fail(L, "a region of more than %d dimensions", LW_MAXR), false;
            r->ext[r->n] = lw_dim_const(L, 1);
            r->bdim[r->n++] = -1;
            continue;
        }
        if (b >= base->rank)
            return lw_fail(L, "too many indices for a value of rank %d", base->rank), false;
        lw_dim D = base->dim[b];
        if (k == AKG_SKETCH_EXPR_SLICE) {
            const akg_sketch_expr *s0 = akg_sketch_slice_start(it), *s1 = akg_sketch_slice_stop(it),
                                  *s2 = akg_sketch_slice_step(it);
            bool k0 = true, k1, k2 = true;
            int64_t v0 = 0, v1, v2 = 1;
            const char *a = s0 ? lw_index(L, s0, &k0, &v0) : "0";
            const char *z = s1 ? lw_index(L, s1, &k1, &v1) : D.c;
            if (!s1) {
                k1 = D.known;
                v1 = D.k;
            }
            const char *st = s2 ? lw_index(L, s2, &k2, &v2) : "1";
            if (k2 && v2 <= 0)
                return lw_fail(L, "a region's step must be positive, got %lld", (long long)v2),
                       false;
            r->start[b] = a;
            r->nonneg[b] = !s0 || lw_index_nonneg(L, s0);
            r->step[b] = st;
            r->step_one[b] = k2 && v2 == 1;
            lw_dim e;
            int64_t diff;
            if (k0 && k1 && k2) {
                int64_t n = v1 > v0 ? (v1 - v0 + v2 - 1) / v2 : 0;
                e = lw_dim_const(L, n);
            } else if (k2 && v2 == 1) {
                /* `i:i+BM` has extent BM whatever i is */
                const akg_sketch_expr *lhs = s1 && akg_sketch_expr_get_kind(s1) ==
                                                       AKG_SKETCH_EXPR_BINARY &&
                                                       !strcmp(akg_sketch_expr_text(s1), "+")
                                                 ? akg_sketch_expr_lhs(s1)
                                                 : NULL;
                char *ls = lhs ? akg_sketch_expr_to_string(lhs) : NULL;
                char *ss = s0 ? akg_sketch_expr_to_string(s0) : NULL;
                if (ls && ss && !strcmp(ls, ss))
                    e = lw_index_dim(L, akg_sketch_expr_rhs(s1));
                else if (!s0)
                    e = s1 ? lw_index_dim(L, s1) : D;
                else if (s1 && lw_index_difference(L, s1, s0, &diff))
                    e = lw_dim_const(L, diff > 0 ? diff : 0); /* `M - 1:M` is one element */
                else
                    e = lw_dim_text(L, lw_strf(L, "(%s - %s)", z, a));
                free(ls);
                free(ss);
            } else if (k2 && s0 && s1 && lw_index_difference(L, s1, s0, &diff)) {
                e = lw_dim_const(L, diff > 0 ? (diff + v2 - 1) / v2 : 0);
            } else {
                e = lw_dim_text(L, lw_strf(L, "akg_cdiv(%s - %s, %s)", z, a, st));
            }
            /* provably inside: the whole dimension, or constant bounds within a known extent */
            r->inside[b] = (!s0 || (k0 && v0 == 0)) && (!s1 || (D.known && k1 && v1 <= D.k)) &&
                           r->step_one[b];
            if (k0 && k1 && D.known && v0 >= 0 && v1 <= D.k)
                r->inside[b] = true;
            /* `i:i + 1` with i a loop variable of range(0.., D) */
            if (s0 && akg_sketch_expr_get_kind(s0) == AKG_SKETCH_EXPR_NAME && e.known &&
                e.k == 1 && r->step_one[b]) {
                lw_val *lv = lw_lookup(L, akg_sketch_expr_text(s0));
                if (lv && lv->kind == LV_SCALAR && lv->nonneg && lv->upper &&
                    !strcmp(lv->upper, D.c))
                    r->inside[b] = true;
            }
            if (r->n >= LW_MAXR)
                return lw_fail(L, "a region of more than %d dimensions", LW_MAXR), false;
            r->ext[r->n] = e;
            r->bdim[r->n++] = b;
        } else if (!lw_is_index_expr(L, it) && index_tile(L, it, r, b)) {
            if (!lw_ok(L))
                return false;
        } else {
            bool kk;
            int64_t kv;
            r->start[b] = lw_index(L, it, &kk, &kv);
            r->nonneg[b] = lw_index_nonneg(L, it);
            r->step[b] = NULL;
            r->inside[b] = kk && D.known && kv >= 0 && kv < D.k;
            /* a loop variable of range(0.., D) indexing a dimension of extent D */
            if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_NAME) {
                lw_val *lv = lw_lookup(L, akg_sketch_expr_text(it));
                if (lv && lv->kind == LV_SCALAR && lv->nonneg && lv->upper &&
                    !strcmp(lv->upper, D.c))
                    r->inside[b] = true;
                if (lv && lv->kind == LV_SCALAR && !lv->nonneg)
                    lv = NULL;
            }
        }
        b++;
    }
    for (; b < base->rank; b++) { /* omitted trailing dimensions: whole */
        r->start[b] = "0";
        r->step[b] = "1";
        r->step_one[b] = true;
        r->inside[b] = true;
        r->nonneg[b] = true;
        if (r->n >= LW_MAXR)
            return lw_fail(L, "a region of more than %d dimensions", LW_MAXR), false;
        r->ext[r->n] = base->dim[b];
        r->bdim[r->n++] = b;
    }
    return lw_ok(L);
}

int lw_region_shape(lw_ctx *L, lw_val *base, const akg_sketch_expr *sub, lw_dim *shape)
{
    region r;
    if (!parse_region(L, base, sub, &r))
        return 0;
    for (int i = 0; i < r.n; i++)
        shape[i] = r.ext[i];
    return r.n;
}

static bool is_unit(lw_dim d)
{
    return d.known && d.k == 1;
}

lw_val *lw_view(lw_ctx *L, lw_val *base, const akg_sketch_expr *sub, akg_dtype dt, int rank,
                const lw_dim *shape)
{
    region r;
    if (!parse_region(L, base, sub, &r))
        return NULL;
    lw_val *v = lw_new(L, LV_VIEW);
    if (!v)
        return NULL;
    v->base = base;
    v->dt = dt ? dt : base->dt;
    v->rank = rank;
    for (int d = 0; d < rank; d++)
        v->dim[d] = shape[d];
    v->other = lw_float_lit(L, 0, lw_comptype(v->dt));
    v->base_version = base->version;
    for (int b = 0; b < base->rank; b++) {
        v->bstart[b] = r.start[b];
        v->bstart_nonneg[b] = r.nonneg[b];
        v->bstep[b] = r.step[b] && !r.step_one[b] ? r.step[b] : (r.step[b] ? "1" : NULL);
        v->guard[b] = !r.inside[b];
        v->tile_of_bdim[b] = -1;
        v->pos[b] = r.pos[b];
        for (int q = 0; q < LW_MAXR; q++)
            v->pos_tdim[b][q] = -1;
    }
    /* match the region's non-unit dimensions with the tile's, in order */
    int rd[LW_MAXR], td[LW_MAXR], nr = 0, nt = 0;
    for (int i = 0; i < r.n; i++)
        if (!is_unit(r.ext[i]))
            rd[nr++] = i;
    for (int i = 0; i < rank; i++)
        if (!is_unit(shape[i]))
            td[nt++] = i;
    if (nr != nt) {
        lw_fail(L, "the region has %d dimensions longer than 1 but the tile %d", nr, nt);
        return NULL;
    }
    v->identity = rank == base->rank && r.n == base->rank;
    for (int b = 0; b < base->rank && v->identity; b++)
        v->identity = !strcmp(r.start[b], "0") && r.step_one[b] && r.bdim[b] == b &&
                      lw_dim_equal(r.ext[b], base->dim[b]) && lw_dim_equal(shape[b], base->dim[b]);
    for (int i = 0; i < nr; i++) {
        int b = r.bdim[rd[i]];
        if (b >= 0 && r.pos[b])
            v->pos_tdim[b][r.sub[rd[i]]] = (signed char)td[i];
        else if (b >= 0)
            v->tile_of_bdim[b] = td[i];
        if (r.ext[rd[i]].known && shape[td[i]].known && r.ext[rd[i]].k != shape[td[i]].k) {
            lw_fail(L, "the region's extent %lld does not match the tile's %lld",
                    (long long)r.ext[rd[i]].k, (long long)shape[td[i]].k);
            return NULL;
        }
    }
    return v;
}

bool lw_view_has_pos(const lw_val *v)
{
    if (!v || v->kind != LV_VIEW || !v->base)
        return false;
    for (int b = 0; b < v->base->rank; b++)
        if (v->pos[b])
            return true;
    return false;
}

/* ---- element access ---- */

/* The position along base dim d of view (or store target) v at tile index idx, read from
 * its index tile (as an int64 C++ expression). */
const char *lw_view_pos(lw_ctx *L, lw_val *v, int d, const char *const *idx, bool guards)
{
    lw_val *t = v->pos[d];
    const char *ti[LW_MAXR];
    for (int q = 0; q < t->rank; q++)
        ti[q] = v->pos_tdim[d][q] >= 0 ? idx[v->pos_tdim[d][q]] : "0";
    return lw_strf(L, "(int64_t)%s", lw_elem(L, t, ti, guards));
}

static bool proven(lw_ctx *L, int id, int bdim)
{
    for (int i = 0; i < L->n_proven; i++)
        if (L->proven[i].id == id && L->proven[i].bdim == bdim)
            return true;
    return false;
}

const char *lw_addr(lw_ctx *L, lw_val *v, const char *const *idx)
{
    if (v->layout == LAYOUT_PANEL_A || v->layout == LAYOUT_PANEL_B) {
        /* rank 2; A: [M, K] in MR-row panels; B: [K, N] in NR-column panels */
        const char *K = v->layout == LAYOUT_PANEL_A ? v->dim[1].c : v->dim[0].c;
        const char *m = v->layout == LAYOUT_PANEL_A ? idx[0] : idx[1];
        const char *k = v->layout == LAYOUT_PANEL_A ? idx[1] : idx[0];
        long long P = (long long)v->panel;
        return lw_strf(L, "((%s / %lld) * %s + %s) * %lld + %s %% %lld", m, P, K, k, P, m, P);
    }
    const char *a = NULL;
    for (int d = 0; d < v->rank; d++) {
        if (v->dim[d].known && v->dim[d].k == 1)
            continue;
        const char *term;
        if (d == v->rank - 1 || !strcmp(v->stride[d], "1"))
            term = idx[d];
        else
            term = lw_strf(L, "%s * %s", idx[d], v->stride[d]);
        a = a ? lw_strf(L, "%s + %s", a, term) : term;
    }
    return a ? a : "0";
}

static const char *read_storage(lw_ctx *L, lw_val *v, const char *const *idx)
{
    if (v->reg) /* a register tile [MR, NR] of vectors of vw lanes */
        return lw_strf(L, "%s[%s][(%s) / %lld][(%s) %% %lld]", v->ptr, idx[0], idx[1],
                       (long long)v->vw, idx[1], (long long)v->vw);
    const char *e = lw_strf(L, "%s[%s]", v->ptr, lw_addr(L, v, idx));
    if (v->dt == AKG_DTYPE_F16)
        return lw_strf(L, "akg_h2f(%s)", e);
    if (v->dt == AKG_DTYPE_BF16)
        return lw_strf(L, "akg_bf2f(%s)", e);
    return e;
}

/* Converts x (computation type of `from`) to the computation type of `to`. */
static const char *convert(lw_ctx *L, const char *x, akg_dtype from, akg_dtype to)
{
    const char *cf = lw_comptype(from), *ct = lw_comptype(to);
    if (!strcmp(cf, ct))
        return x;
    return lw_strf(L, "akg_cvt<%s>(%s)", ct, x);
}

void lw_broadcast_idx(lw_ctx *L, const lw_val *out, const lw_val *a, const char *const *idx,
                      const char **aidx)
{
    (void)L;
    int R = out->rank, r = a->rank;
    for (int j = 0; j < r; j++) {
        int d = R - r + j;
        if (d < 0 || (is_unit(a->dim[j]) && !is_unit(out->dim[d])))
            aidx[j] = "0";
        else
            aidx[j] = idx[d];
    }
}

static const char *view_elem(lw_ctx *L, lw_val *v, const char *const *idx, bool guards)
{
    lw_val *b = v->base;
    const char *bi[LW_MAXR];
    const char *cond = NULL;
    for (int d = 0; d < b->rank; d++) {
        int t = v->tile_of_bdim[d];
        if (v->pos[d]) {
            /* positions are data: always tested (never outside the base) */
            bi[d] = lw_view_pos(L, v, d, idx, guards);
            const char *c = lw_strf(L, "akg_in(%s, %s)", bi[d], b->dim[d].c);
            cond = cond ? lw_strf(L, "%s && %s", cond, c) : c;
            continue;
        }
        if (t >= 0) {
            const char *st = v->bstep[d];
            if (!strcmp(v->bstart[d], "0"))
                bi[d] = st && strcmp(st, "1") ? lw_strf(L, "%s * %s", st, idx[t]) : idx[t];
            else if (!st || !strcmp(st, "1"))
                bi[d] = lw_strf(L, "(%s + %s)", v->bstart[d], idx[t]);
            else
                bi[d] = lw_strf(L, "(%s + %s * %s)", v->bstart[d], st, idx[t]);
        } else {
            bi[d] = v->bstart[d];
        }
        if (v->guard[d] && guards && !proven(L, v->id, d)) {
            const char *c = lw_strf(L, "akg_in(%s, %s)", bi[d], b->dim[d].c);
            cond = cond ? lw_strf(L, "%s && %s", cond, c) : c;
        }
    }
    if (v->mask) {
        const char *midx[LW_MAXR];
        lw_broadcast_idx(L, v, v->mask, idx, midx);
        const char *m = lw_elem(L, v->mask, midx, guards);
        cond = cond ? lw_strf(L, "%s && %s", cond, m) : m;
    }
    const char *x;
    if (b->kind == LV_VIEW || b->kind == LV_EXPR) {
        lw_fail(L, "internal: a view of a lazy value");
        return "0";
    }
    x = convert(L, read_storage(L, b, bi), b->dt, v->dt);
    if (!cond)
        return x;
    return lw_strf(L, "((%s) ? %s : %s)", cond, x, v->other);
}

void lw_keep_begin(lw_ctx *L, lw_keep_scope *save, int rank, const lw_dim *dom)
{
    save->rank = L->keep_rank;
    save->dom = L->keep_dom;
    save->mark = L->n_keep_written;
    L->keep_rank = rank;
    L->keep_dom = dom;
}

void lw_keep_end(lw_ctx *L, const lw_keep_scope *save, bool complete)
{
    for (int i = save->mark; i < L->n_keep_written; i++)
        if (complete)
            L->keep_written[i]->keep_filled = true;
    L->n_keep_written = save->mark;
    L->keep_rank = save->rank;
    L->keep_dom = save->dom;
}

/* Whether the consumer being emitted computes every element of v. */
static bool keep_covers(lw_ctx *L, const lw_val *v)
{
    if (L->keep_rank != v->rank || !L->keep_dom)
        return false;
    for (int d = 0; d < v->rank; d++)
        if (!lw_dim_equal(L->keep_dom[d], v->dim[d]))
            return false;
    return true;
}

const char *lw_elem(lw_ctx *L, lw_val *v, const char *const *idx, bool guards)
{
    if (!v || !lw_ok(L))
        return "0";
    switch (v->kind) {
    case LV_SCALAR:
        return v->c;
    case LV_TENSOR:
    case LV_BUF:
        return read_storage(L, v, idx);
    case LV_VIEW: {
        const char *key = lw_strf(L, "%d%s", guards ? 1 : 0, idx_key(L, v->rank, idx));
        const char *m = memo_find(L, v->id, key);
        if (m)
            return m;
        const char *x = view_elem(L, v, idx, guards);
        const char *name = lw_strf(L, "v%d_%zu", v->id, L->n_memo);
        lw_line(L, "const %s %s = %s;", lw_comptype(v->dt), name, x);
        memo_add(L, v->id, key, name);
        return name;
    }
    case LV_EXPR: {
        if (v->keep && v->keep_filled)
            return read_storage(L, v->keep, idx);
        const char *key = lw_strf(L, "%d%s", guards ? 1 : 0, idx_key(L, v->rank, idx));
        const char *m = memo_find(L, v->id, key);
        if (m)
            return m;
        if (!strcmp(lw_op_name(v->op), "iota"))
            return lw_strf(L, "(int32_t)(%s + %s)", v->lit[0], idx[0]);
        const char *args[3] = {0};
        for (int a = 0; a < v->nargs; a++) {
            const char *aidx[LW_MAXR];
            if (!strcmp(lw_op_name(v->op), "transpose")) {
                for (int d = 0; d < v->rank; d++)
                    aidx[v->perm[d]] = idx[d];
            } else {
                lw_broadcast_idx(L, v, v->arg[a], idx, aidx);
            }
            args[a] = lw_elem(L, v->arg[a], aidx, guards);
        }
        const char *x = lw_op_apply(L, v, args);
        const char *name = lw_strf(L, "e%d_%zu", v->id, L->n_memo);
        lw_line(L, "const %s %s = %s;", lw_comptype(v->dt), name, x);
        memo_add(L, v->id, key, name);
        if (v->keep && keep_covers(L, v)) {
            lw_line(L, "%s[%s] = %s;", v->keep->ptr, lw_addr(L, v->keep, idx), name);
            bool noted = false;
            for (int i = 0; i < L->n_keep_written && !noted; i++)
                noted = L->keep_written[i] == v;
            if (!noted && L->n_keep_written < 32)
                L->keep_written[L->n_keep_written++] = v;
        }
        return name;
    }
    }
    return "0";
}

bool lw_view_range(lw_ctx *L, lw_val *v, int bdim, const char **lo, const char **hi)
{
    if (v->kind != LV_VIEW || !v->guard[bdim] || v->tile_of_bdim[bdim] < 0)
        return false;
    const char *s = v->bstart[bdim], *p = v->bstep[bdim];
    const char *D = v->base->dim[bdim].c;
    /* a start known to be >= 0 needs no sign test (a test the compiler would unswitch the
     * loop on, keeping the vectorised copy for the other case) */
    *lo = v->bstart_nonneg[bdim] ? "0" : lw_strf(L, "akg_lo(%s, %s)", s, p ? p : "1");
    *hi = lw_strf(L, "akg_hi(%s, %s, %s)", D, s, p ? p : "1");
    return true;
}
