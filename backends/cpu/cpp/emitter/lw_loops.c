/*
 * lw_loops.c: loop nests over a value's domain, with index-set splitting.
 *
 * Every view read inside a nest may leave its base along some dimensions;
 * the semantics then give `other`. Testing that per element would keep the
 * loops from vectorising, so each domain dimension that some view's bound
 * depends on is split into three ranges: the interior where every such view
 * is inside its base (no tests: the (view, dimension) pairs are recorded as
 * proven while the interior's body is emitted) and the two edges before and
 * after it, whose bodies test every bound. A ragged last tile thus costs a
 * short guarded loop, and the bulk of the work runs unguarded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

/* Dims of at most this constant extent are tested whole rather than split. */
#define LW_SMALL_EXTENT 16

const char *lw_fresh(lw_ctx *L, const char *stem)
{
    return lw_strf(L, "%s%d", stem, ++L->next_id);
}

typedef struct {
    lw_val *view;
    int bdim;
    int ddim; /* domain dim */
} split;

typedef struct {
    split s[64];
    int n;
} splits;

/* Records the (view, base dim) bounds that depend on domain dims, following
 * v's dims through broadcasting and transposes: map[j] is the domain dim of
 * v's dim j, or -1. */
static void collect(lw_ctx *L, lw_val *v, const int *map, splits *out, int depth)
{
    if (!v || depth > 64)
        return;
    if (v->kind == LV_VIEW) {
        for (int b = 0; b < v->base->rank; b++) {
            int t = v->tile_of_bdim[b];
            if (!v->guard[b] || t < 0 || map[t] < 0 || out->n >= 64)
                continue;
            out->s[out->n].view = v;
            out->s[out->n].bdim = b;
            out->s[out->n].ddim = map[t];
            out->n++;
        }
        if (v->mask) {
            int m[LW_MAXR];
            for (int j = 0; j < v->mask->rank; j++) {
                int d = v->rank - v->mask->rank + j;
                m[j] = d < 0 || (v->mask->dim[j].known && v->mask->dim[j].k == 1) ? -1 : map[d];
            }
            collect(L, v->mask, m, out, depth + 1);
        }
        return;
    }
    if (v->kind != LV_EXPR)
        return;
    bool tr = !strcmp(lw_op_name(v->op), "transpose");
    for (int a = 0; a < v->nargs; a++) {
        lw_val *x = v->arg[a];
        int m[LW_MAXR];
        for (int j = 0; j < LW_MAXR; j++)
            m[j] = -1;
        if (tr) {
            for (int d = 0; d < v->rank; d++)
                m[v->perm[d]] = map[d];
        } else {
            for (int j = 0; j < x->rank; j++) {
                int d = v->rank - x->rank + j;
                bool bc = x->dim[j].known && x->dim[j].k == 1 &&
                          !(d >= 0 && v->dim[d].known && v->dim[d].k == 1);
                m[j] = d < 0 || bc ? -1 : map[d];
            }
        }
        collect(L, x, m, out, depth + 1);
    }
}

typedef struct {
    int rank;
    const lw_dim *ext;
    const char *const *clip_lo, *const *clip_hi;
    const char *const *raw_lo, *const *raw_hi; /* the view range the clip came from */
    const char *idx[LW_MAXR];
    splits sp;
    bool simd;
    const char *clause; /* the innermost loop's extra simd clauses */
    lw_body_fn body;
    lw_inner_fn inner; /* starts the innermost loops (but the edges of its split), or NULL */
    void *user;
} nest;

/* Whether a bound is a plain name or number (no need to compute it once before the loop). */
static bool simple(const char *s)
{
    for (const char *p = s; *p; p++)
        if (!(*p == '_' || (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
              (*p >= 'A' && *p <= 'Z')))
            return false;
    return true;
}

/* Bounds are computed once, before the loop (a bound in the condition is re-evaluated each
 * iteration unless the compiler proves it invariant). */
static void name_bounds(lw_ctx *L, const char **lo, const char **hi)
{
    if (!simple(*lo)) {
        const char *v = lw_fresh(L, "lb");
        lw_line(L, "const int64_t %s = %s;", v, *lo);
        *lo = v;
    }
    if (!simple(*hi)) {
        const char *v = lw_fresh(L, "ub");
        lw_line(L, "const int64_t %s = %s;", v, *hi);
        *hi = v;
    }
}

static void open_loop(lw_ctx *L, nest *n, int k, const char *lo, const char *hi)
{
    name_bounds(L, &lo, &hi);
    if (n->simd && k == n->rank - 1 && !L->safe) {
        const char *cl = n->clause ? n->clause : "";
        if (L->simdlen > 0)
            lw_line(L, "#pragma omp simd simdlen(%lld) %s", (long long)L->simdlen, cl);
        else
            lw_line(L, "#pragma omp simd %s", cl);
    }
    lw_line(L, "for (int64_t %s = %s; %s < %s; ++%s) {", n->idx[k], lo, n->idx[k], hi, n->idx[k]);
    L->indent++;
}

static void close_loop(lw_ctx *L)
{
    L->indent--;
    lw_line(L, "}");
}

static void emit_body(lw_ctx *L, nest *n)
{
    lw_memo_reset(L);
    n->body(L, n->user, n->idx, true);
}

static void emit_dims(lw_ctx *L, nest *n, int k, bool split_ok);

/* The loop of dim k over [lo, hi) and everything inside it; edge: a guarded edge of dim k's
 * own split. */
static void loop_dim(lw_ctx *L, nest *n, int k, const char *lo, const char *hi, bool split_ok,
                     bool edge)
{
    if (k == n->rank - 1 && n->inner && !edge && !L->safe) {
        name_bounds(L, &lo, &hi);
        const char *rest = n->inner(L, n->user, n->idx, lo, hi);
        if (rest)
            lo = rest;
    }
    open_loop(L, n, k, lo, hi);
    emit_dims(L, n, k + 1, split_ok);
    close_loop(L);
}

static void emit_dims(lw_ctx *L, nest *n, int k, bool split_ok)
{
    if (!lw_ok(L))
        return;
    if (k == n->rank) {
        emit_body(L, n);
        return;
    }
    const char *lo = n->clip_lo && n->clip_lo[k] ? n->clip_lo[k] : "0";
    const char *hi = n->clip_hi && n->clip_hi[k] ? n->clip_hi[k] : n->ext[k].c;
    bool unit = n->ext[k].known && n->ext[k].k == 1 && !(n->clip_lo && n->clip_lo[k]) &&
                !(n->clip_hi && n->clip_hi[k]);
    if (unit) {
        lw_line(L, "{");
        L->indent++;
        lw_line(L, "const int64_t %s = 0;", n->idx[k]);
        emit_dims(L, n, k + 1, split_ok);
        L->indent--;
        lw_line(L, "}");
        return;
    }
    int mine[64], nm = 0;
    for (int i = 0; i < n->sp.n; i++)
        if (n->sp.s[i].ddim == k)
            mine[nm++] = i;
    if (!split_ok || nm == 0) {
        loop_dim(L, n, k, lo, hi, split_ok, false);
        return;
    }
    /* bounds the loop's own clip already enforces (a store's view of the same range) need
     * no split */
    int mark0 = L->n_proven, left = 0;
    for (int i = 0; i < nm; i++) {
        const char *a, *b;
        split *s = &n->sp.s[mine[i]];
        if (n->raw_lo && n->raw_lo[k] && lw_view_range(L, s->view, s->bdim, &a, &b) &&
            !strcmp(a, n->raw_lo[k]) && !strcmp(b, n->raw_hi[k]) && L->n_proven < 64) {
            L->proven[L->n_proven].id = s->view->id;
            L->proven[L->n_proven].bdim = s->bdim;
            L->n_proven++;
            continue;
        }
        mine[left++] = mine[i];
    }
    nm = left;
    if (nm == 0) {
        loop_dim(L, n, k, lo, hi, split_ok, false);
        L->n_proven = mark0;
        return;
    }
    /* the interior: every view bound along this dim holds */
    const char *ilo = lw_fresh(L, "lo"), *ihi = lw_fresh(L, "hi");
    const char *elo = lo, *ehi = hi;
    const char *seen_lo[64], *seen_hi[64];
    int n_lo = 0, n_hi = 0;
    for (int i = 0; i < nm; i++) {
        const char *a, *b;
        split *s = &n->sp.s[mine[i]];
        if (!lw_view_range(L, s->view, s->bdim, &a, &b))
            continue;
        /* views of the same range bound the interior once */
        bool dup_lo = !strcmp(a, "0") && !strcmp(lo, "0"), dup_hi = false;
        for (int q = 0; q < n_lo && !dup_lo; q++)
            dup_lo = !strcmp(seen_lo[q], a);
        for (int q = 0; q < n_hi && !dup_hi; q++)
            dup_hi = !strcmp(seen_hi[q], b);
        if (!dup_lo) {
            elo = lw_strf(L, "akg_imax(%s, %s)", elo, a);
            seen_lo[n_lo++] = a;
        }
        if (!dup_hi) {
            ehi = lw_strf(L, "akg_imin(%s, %s)", ehi, b);
            seen_hi[n_hi++] = b;
        }
    }
    /* no bound below (starts known >= 0) or above: no edge there */
    bool lo_edge = elo != lo, hi_edge = ehi != hi;
    bool whole = !(n->clip_lo && n->clip_lo[k]) && !(n->clip_hi && n->clip_hi[k]);
    if (whole && n->ext[k].known && n->ext[k].k <= LW_SMALL_EXTENT) {
        /* a short dim of constant extent: one test whether the whole of it is inside, so the
         * loop keeps its constant trip count (unrolled, no bounds to compute per tile) */
        const char *c = NULL;
        if (lo_edge)
            c = lw_strf(L, "%s <= %s", elo, lo);
        if (hi_edge)
            c = c ? lw_strf(L, "%s && %s >= %s", c, ehi, hi) : lw_strf(L, "%s >= %s", ehi, hi);
        lw_line(L, "if (%s) {", c);
        L->indent++;
        int mark = L->n_proven;
        for (int i = 0; i < nm && L->n_proven < 64; i++) {
            L->proven[L->n_proven].id = n->sp.s[mine[i]].view->id;
            L->proven[L->n_proven].bdim = n->sp.s[mine[i]].bdim;
            L->n_proven++;
        }
        loop_dim(L, n, k, lo, hi, true, false);
        L->n_proven = mark;
        L->indent--;
        lw_line(L, "} else {");
        L->indent++;
        loop_dim(L, n, k, lo, hi, false, true);
        L->indent--;
        lw_line(L, "}");
        L->n_proven = mark0;
        return;
    }
    if (lo_edge)
        lw_line(L, "const int64_t %s = akg_imin(%s, %s);", ilo, elo, hi);
    else
        ilo = lo;
    if (hi_edge)
        lw_line(L, "const int64_t %s = akg_imax(%s, %s);", ihi, ilo, ehi);
    else
        ihi = hi;
    /* the edges, guarded */
    if (lo_edge)
        loop_dim(L, n, k, lo, ilo, false, true);
    int mark = L->n_proven;
    for (int i = 0; i < nm && L->n_proven < 64; i++) {
        L->proven[L->n_proven].id = n->sp.s[mine[i]].view->id;
        L->proven[L->n_proven].bdim = n->sp.s[mine[i]].bdim;
        L->n_proven++;
    }
    loop_dim(L, n, k, ilo, ihi, true, false);
    L->n_proven = mark;
    if (hi_edge)
        loop_dim(L, n, k, ihi, hi, false, true);
    L->n_proven = mark0;
}

/* The bounds of views in v that do not move with the nest: base dims indexed by a scalar
 * (`x[n, c, :]` with c a loop variable of an enclosing loop) that may leave the base. Each
 * is tested once before the nest instead of per element. */
typedef struct {
    lw_val *view[32];
    int bdim[32];
    int n;
} fixed_guards;

static void collect_fixed(lw_val *v, fixed_guards *out, int depth)
{
    if (!v || depth > 64)
        return;
    if (v->kind == LV_VIEW && v->base) {
        for (int b = 0; b < v->base->rank; b++) {
            if (!v->guard[b] || v->tile_of_bdim[b] >= 0 || v->pos[b] || out->n >= 32)
                continue;
            bool dup = false;
            for (int i = 0; i < out->n && !dup; i++)
                dup = out->view[i] == v && out->bdim[i] == b;
            if (!dup) {
                out->view[out->n] = v;
                out->bdim[out->n++] = b;
            }
        }
        collect_fixed(v->mask, out, depth + 1);
        return;
    }
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++)
            collect_fixed(v->arg[i], out, depth + 1);
}

static bool tree_simd(const lw_val *v, int64_t *len, int depth)
{
    if (!v || depth > 64)
        return false;
    bool s = v->simd;
    if (s && v->simdlen && !*len)
        *len = v->simdlen;
    if (v->kind == LV_EXPR)
        for (int i = 0; i < v->nargs; i++)
            s |= tree_simd(v->arg[i], len, depth + 1);
    if (v->kind == LV_VIEW)
        s |= tree_simd(v->mask, len, depth + 1);
    return s;
}

/* lead: the domain is the leading dims of every read (the outer loops of a reduction or a
 * scan); otherwise reads broadcast onto it, aligned on their last dims. */
static void emit_nest(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                      const char *const *clip_hi, const char *const *raw_lo,
                      const char *const *raw_hi, lw_val *const *reads, int n_reads, bool simd,
                      bool lead, lw_body_fn body, lw_inner_fn inner, void *user);

void lw_emit_nest(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                  const char *const *clip_hi, lw_val *const *reads, int n_reads, bool simd,
                  lw_body_fn body, void *user)
{
    emit_nest(L, rank, ext, clip_lo, clip_hi, NULL, NULL, reads, n_reads, simd, false, body, NULL,
              user);
}

void lw_emit_nest_raw(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                      const char *const *clip_hi, const char *const *raw_lo,
                      const char *const *raw_hi, lw_val *const *reads, int n_reads, bool simd,
                      lw_body_fn body, lw_inner_fn inner, void *user)
{
    emit_nest(L, rank, ext, clip_lo, clip_hi, raw_lo, raw_hi, reads, n_reads, simd, false, body,
              inner, user);
}

void lw_emit_nest_outer(lw_ctx *L, int rank, const lw_dim *ext, lw_val *const *reads,
                        int n_reads, lw_body_fn body, void *user)
{
    emit_nest(L, rank, ext, NULL, NULL, NULL, NULL, reads, n_reads, false, true, body, NULL, user);
}

static void emit_nest(lw_ctx *L, int rank, const lw_dim *ext, const char *const *clip_lo,
                      const char *const *clip_hi, const char *const *raw_lo,
                      const char *const *raw_hi, lw_val *const *reads, int n_reads, bool simd,
                      bool lead, lw_body_fn body, lw_inner_fn inner, void *user)
{
    if (!lw_ok(L))
        return;
    nest *n = lw_alloc(L, sizeof *n);
    if (!n)
        return;
    n->rank = rank;
    n->ext = ext;
    n->clip_lo = clip_lo;
    n->clip_hi = clip_hi;
    n->raw_lo = raw_lo;
    n->raw_hi = raw_hi;
    /* a computation made under a vectorize hint keeps it wherever it is consumed */
    int64_t len = 0;
    for (int r = 0; r < n_reads; r++)
        simd |= tree_simd(reads[r], &len, 0);
    int64_t save_len = L->simdlen;
    if (!L->simdlen)
        L->simdlen = len;
    if (simd && L->simdlen > 0 && !L->safe) {
        /* the width asked, in bits of the widest element the loop reads */
        int bits = 0;
        for (int r = 0; r < n_reads; r++)
            if (reads[r] && lw_comp_bits(reads[r]->dt) > bits)
                bits = lw_comp_bits(reads[r]->dt);
        lw_note_width(L, L->simdlen, bits ? bits : 32);
    }
    n->simd = simd;
    n->clause = L->simd_clause;
    L->simd_clause = NULL; /* only this nest's innermost loop takes them */
    n->body = body;
    n->inner = inner;
    n->user = user;
    for (int d = 0; d < rank; d++)
        n->idx[d] = lw_fresh(L, "i");
    int map[LW_MAXR];
    for (int r = 0; r < n_reads; r++) {
        lw_val *v = reads[r];
        if (!v)
            continue;
        for (int j = 0; j < v->rank; j++) {
            int d = lead ? (j < rank ? j : -1) : rank - v->rank + j;
            map[j] = d < 0 || (v->dim[j].known && v->dim[j].k == 1 &&
                               !(ext[d].known && ext[d].k == 1))
                         ? -1
                         : d;
        }
        collect(L, v, map, &n->sp, 0);
    }
    if (rank == 0) {
        lw_line(L, "{");
        L->indent++;
        emit_body(L, n);
        L->indent--;
        lw_line(L, "}");
        L->simdlen = save_len;
        return;
    }
    /* bounds that do not move with the nest are tested once: the nest runs without them when
     * they hold, and with every test otherwise (the view then reads `other`) */
    fixed_guards fg = {.n = 0};
    if (!lead)
        for (int r = 0; r < n_reads; r++)
            collect_fixed(reads[r], &fg, 0);
    const char *cond = NULL;
    int mark = L->n_proven;
    for (int i = 0; i < fg.n; i++) {
        lw_val *v = fg.view[i];
        bool done = false;
        for (int p = 0; p < L->n_proven && !done; p++)
            done = L->proven[p].id == v->id && L->proven[p].bdim == fg.bdim[i];
        if (done || L->n_proven >= 64)
            continue;
        const char *c = lw_strf(L, "akg_in(%s, %s)", v->bstart[fg.bdim[i]],
                                v->base->dim[fg.bdim[i]].c);
        bool same = cond && strstr(cond, c) != NULL;
        if (!same)
            cond = cond ? lw_strf(L, "%s && %s", cond, c) : c;
        L->proven[L->n_proven].id = v->id;
        L->proven[L->n_proven].bdim = fg.bdim[i];
        L->n_proven++;
    }
    if (!cond) {
        emit_dims(L, n, 0, true);
        L->simdlen = save_len;
        return;
    }
    lw_line(L, "if (%s) {", cond);
    L->indent++;
    emit_dims(L, n, 0, true);
    L->indent--;
    L->n_proven = mark;
    lw_line(L, "} else {");
    L->indent++;
    emit_dims(L, n, 0, true);
    L->indent--;
    lw_line(L, "}");
    L->simdlen = save_len;
}
