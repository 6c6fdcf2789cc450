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
 *
 * A store the sketch marks "nontemporal" writes the contiguous rows of a large
 * output with streaming stores (they bypass the caches, so writing the output
 * does not first read it in nor evict the input): in the innermost loop, a
 * scalar prologue up to a 32-byte aligned element, then whole vectors computed
 * into an aligned lane buffer by an `omp simd` loop (the compiler keeps it in a
 * register) and written with _mm256_stream_ps/pd, and the nest's own loop for
 * the rest. Outputs that fit in the caches keep ordinary stores (the next
 * operation reads them from there), as the language allows. Streaming stores
 * are weakly ordered: each thread fences them at the end of the parallel
 * region (or right after the store outside one).
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
    /* a run-time size with a small known bound (`min(BM, M - i)`): stack storage of the bound */
    int64_t bound = 1;
    for (int d = 0; d < rank && bound; d++) {
        int64_t u = dim[d].known ? dim[d].k : dim[d].ub;
        if (!u || __builtin_mul_overflow(bound, u, &bound))
            bound = 0;
    }
    if (layout == LAYOUT_ROW && bound && (uint64_t)bound * esize <= LW_STACK_BYTES &&
        tier != TIER_SLOW) {
        lw_line(L, "alignas(64) %s %s[%lld]; // at most that many", ct, b->ptr, (long long)bound);
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
static bool vec_ok(const lw_val *v, int R, int64_t MR, int64_t NR, int depth);
static const char *vec_expr(lw_ctx *L, lw_val *v, const char *row, int64_t col, int64_t vw);
static void collect_interiors(lw_ctx *L, lw_val *v, const char **cond, int depth);
static bool reg_assign(lw_ctx *L, lw_val *b, lw_val *v);
static void reg_assign_vectors(lw_ctx *L, lw_val *b, lw_val *v, bool edge);
static const char *vec_expr_g(lw_ctx *L, lw_val *v, const char *row, int64_t col, int64_t vw,
                              bool edge);

typedef struct {
    lw_val *dst; /* BUF, or VIEW over the store target */
    lw_val *v;
    lw_val *mask;
    /* streaming: lanes per vector (0: ordinary stores), the run-time condition (NULL: always),
     * and the lane element the body writes instead of the target (set while emitting it) */
    int stream;
    const char *stream_cond;
    const char *lane;
} copy_job;
static void lw_store_nest(lw_ctx *L, lw_val *dst, lw_val *v, lw_val *mask, copy_job *j,
                          const char *cond, const char **lo, const char **hi,
                          const char **rlo, const char **rhi, bool may_keep);

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
    if (reg_assign(L, b, v)) {
        b->version++;
        return;
    }
    lw_keep_scope ks;
    lw_keep_begin(L, &ks, b->rank, b->dim);
    lw_emit_nest(L, b->rank, b->dim, NULL, NULL, reads, 1, L->vectorize, assign_body, j);
    lw_keep_end(L, &ks, true);
    b->version++;
}

/* Writes v into register tile b a vector at a time, when v is an elementwise combination of
 * register tiles, row views and broadcast operands: where every view is wholly inside its base
 * (tested once) with plain vector loads, elsewhere with each view's vector built lane by lane
 * with its bounds tests (the semantics' `other` outside). Every access of b has constant
 * indices, so b can stay in registers across the loops around. Returns false (nothing
 * emitted) for other values. */
static bool reg_assign(lw_ctx *L, lw_val *b, lw_val *v)
{
    if (L->safe || !b->reg || b->rank != 2 || v->rank != 2 ||
        !lw_dim_equal(v->dim[0], b->dim[0]) || !lw_dim_equal(v->dim[1], b->dim[1]))
        return false;
    int64_t MR = b->dim[0].k, NR = b->dim[1].k;
    if (!vec_ok(v, 2, MR, NR, 0))
        return false;
    const char *cond = NULL;
    collect_interiors(L, v, &cond, 0);
    if (cond) {
        lw_line(L, "if (%s) {", cond);
        L->indent++;
    }
    reg_assign_vectors(L, b, v, false);
    if (cond) {
        L->indent--;
        lw_line(L, "} else {");
        L->indent++;
        reg_assign_vectors(L, b, v, true);
        L->indent--;
        lw_line(L, "}");
    }
    return true;
}

/* b = v, every vector computed before any is written (v may read b). */
static void reg_assign_vectors(lw_ctx *L, lw_val *b, lw_val *v, bool edge)
{
    int64_t MR = b->dim[0].k, NR = b->dim[1].k, vw = b->vw;
    const char **tmp = lw_alloc(L, sizeof(char *) * (size_t)(MR * (NR / vw)));
    if (!tmp)
        return;
    lw_memo_reset(L);
    for (int64_t i = 0; i < MR; i++)
        for (int64_t c = 0; c < NR; c += vw) {
            const char *t = lw_fresh(L, "rv");
            const char *x = vec_expr_g(L, v, lw_strf(L, "%lld", (long long)i), c, vw, edge);
            lw_line(L, "const akg_v%lld %s = %s;", (long long)vw, t, x);
            tmp[i * (NR / vw) + c / vw] = t;
        }
    for (int64_t i = 0; i < MR; i++)
        for (int64_t c = 0; c < NR; c += vw)
            lw_line(L, "%s[%lld][%lld] = %s;", b->ptr, (long long)i, (long long)(c / vw),
                    tmp[i * (NR / vw) + c / vw]);
    lw_memo_reset(L);
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

/* The base index of store target d at tile index idx (per base dim, into bi); *inside gets
 * the test that positions read from index tiles lie in the target (NULL: none). */
static void target_index(lw_ctx *L, lw_val *d, const char *const *idx, bool guarded,
                         const char **bi, const char **inside)
{
    lw_val *b = d->base;
    *inside = NULL;
    for (int k = 0; k < b->rank; k++) {
        int t = d->tile_of_bdim[k];
        const char *st = d->bstep[k];
        if (d->pos[k]) {
            bi[k] = lw_view_pos(L, d, k, idx, guarded);
            const char *c = lw_strf(L, "akg_in(%s, %s)", bi[k], b->dim[k].c);
            *inside = *inside ? lw_strf(L, "%s && %s", *inside, c) : c;
        } else if (t < 0)
            bi[k] = d->bstart[k];
        else if (!strcmp(d->bstart[k], "0") && (!st || !strcmp(st, "1")))
            bi[k] = idx[t];
        else if (!st || !strcmp(st, "1"))
            bi[k] = lw_strf(L, "(%s + %s)", d->bstart[k], idx[t]);
        else
            bi[k] = lw_strf(L, "(%s + %s * %s)", d->bstart[k], st, idx[t]);
    }
}

static void store_body(lw_ctx *L, void *user, const char *const *idx, bool guarded)
{
    copy_job *j = user;
    lw_val *d = j->dst, *b = d->base;
    const char *bi[LW_MAXR];
    const char *inside; /* positions read from index tiles must lie in the target */
    target_index(L, d, idx, guarded, bi, &inside);
    const char *x = lw_elem(L, j->v, idx, guarded);
    if (j->lane) { /* a streamed vector's lane (no mask, no index tiles) */
        write_storage(L, b->dt, j->lane, x, j->v->dt);
        return;
    }
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

/* ---- streaming stores ---- */

/* Outputs at least this large stream (past one core's L2 and a fair share of the L3: the next
 * operation would not find them in cache anyway); smaller ones stay cached for it. */
#define LW_STREAM_BYTES ((int64_t)8 << 20)

/* Lanes per streamed vector for a store of v into target dst (0: ordinary stores): a
 * "nontemporal" store of an f32 or f64 output tensor whose innermost tile dim runs along the
 * tensor's last dim with unit step, without mask or index tiles. *cond gets the run-time
 * test of the output's size (NULL: large whatever the symbols). */
static int stream_lanes(lw_ctx *L, lw_val *dst, lw_val *v, lw_val *mask, const char **cond)
{
    *cond = NULL;
    lw_val *b = dst->base;
    if (!L->nontemporal || L->safe || mask || dst->mask || b->kind != LV_TENSOR ||
        lw_view_has_pos(dst) || v->rank < 1)
        return 0;
    int lanes = b->dt == AKG_DTYPE_F32 ? 8 : b->dt == AKG_DTYPE_F64 ? 4 : 0;
    int last = b->rank - 1;
    if (!lanes || dst->tile_of_bdim[last] != v->rank - 1 ||
        (dst->bstep[last] && strcmp(dst->bstep[last], "1")))
        return 0;
    lw_dim row = v->dim[v->rank - 1];
    if (row.known && row.k < 4 * lanes)
        return 0;
    bool known;
    int64_t n;
    const char *count = lw_count(L, b->rank, b->dim, &known, &n);
    int64_t esize = lanes == 8 ? 4 : 8;
    if (known)
        return n >= LW_STREAM_BYTES / esize ? lanes : 0;
    *cond = lw_strf(L, "%s >= %lld", count, (long long)(LW_STREAM_BYTES / esize));
    return lanes;
}

/* The innermost loop's streamed part (lw_inner_fn): a scalar prologue up to an aligned
 * target element, then whole vectors; the nest's loop does the rest. */
static const char *stream_inner(lw_ctx *L, void *user, const char *const *idx, const char *lo,
                                const char *hi)
{
    copy_job *j = user;
    int k = j->v->rank - 1, W = j->stream;
    const char *ct = lw_ctype(j->dst->base->dt);
    const char *s = lw_fresh(L, "ns"), *ln = lw_fresh(L, "nl"), *lanes = lw_fresh(L, "lanes");
    const char *ix[LW_MAXR];
    for (int d = 0; d < j->v->rank; d++)
        ix[d] = idx[d];
    ix[k] = s;
    const char *bi[LW_MAXR], *inside;
    target_index(L, j->dst, ix, true, bi, &inside);
    const char *addr = lw_strf(L, "%s + %s", j->dst->base->ptr, lw_addr(L, j->dst->base, bi));
    lw_line(L, "int64_t %s = %s;", s, lo);
    lw_line(L, "#ifdef __AVX__");
    lw_line(L, "if (%s) {", j->stream_cond ? j->stream_cond : "true");
    L->indent++;
    lw_line(L, "for (; %s < %s && ((uintptr_t)(%s) & 31); ++%s) {", s, hi, addr, s);
    L->indent++;
    lw_line(L, "const int64_t %s = %s;", idx[k], s);
    lw_memo_reset(L);
    store_body(L, j, idx, true);
    L->indent--;
    lw_line(L, "}");
    lw_line(L, "for (; %s + %d <= %s; %s += %d) {", s, W, hi, s, W);
    L->indent++;
    lw_line(L, "alignas(32) %s %s[%d];", ct, lanes, W);
    lw_line(L, "#pragma omp simd");
    lw_line(L, "for (int64_t %s = 0; %s < %d; ++%s) {", ln, ln, W, ln);
    L->indent++;
    lw_line(L, "const int64_t %s = %s + %s;", idx[k], s, ln);
    lw_memo_reset(L);
    j->lane = lw_strf(L, "%s[%s]", lanes, ln);
    store_body(L, j, idx, true);
    j->lane = NULL;
    L->indent--;
    lw_line(L, "}");
    if (W == 8)
        lw_line(L, "_mm256_stream_ps(%s, _mm256_load_ps(%s));", addr, lanes);
    else
        lw_line(L, "_mm256_stream_pd(%s, _mm256_load_pd(%s));", addr, lanes);
    L->indent--;
    lw_line(L, "}");
    L->indent--;
    lw_line(L, "}");
    lw_line(L, "#endif");
    lw_memo_reset(L);
    L->uses_stream = true;
    return s;
}

/* Streamed stores are weakly ordered: fenced at the end of the enclosing parallel region by
 * each thread (once per region), or at the end of the kernel outside one. */
static void stream_fence(lw_ctx *L)
{
    if (L->par_depth > 0 && L->hoist_tail) {
        if (L->fenced_region == L->region)
            return;
        L->fenced_region = L->region;
        akg_buf *save = L->out;
        int ind = L->indent;
        L->out = L->hoist_tail;
        L->indent = L->hoist_indent;
        lw_line(L, "#ifdef __AVX__");
        lw_line(L, "_mm_sfence();");
        lw_line(L, "#endif");
        L->out = save;
        L->indent = ind;
        return;
    }
    L->fence_at_end = true;
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
            lo[t] = !strcmp(a, "0") ? "0" : lw_strf(L, "akg_imin(%s, %s)", a, v->dim[t].c);
            hi[t] = lw_strf(L, "akg_imax(%s, akg_imin(%s, %s))", lo[t], z, v->dim[t].c);
            if (!strcmp(a, "0"))
                hi[t] = lw_strf(L, "akg_imin(%s, %s)", z, v->dim[t].c); /* z >= 0 */
        }
    }
    /* a short tile of constant extents: one test whether the whole of it is inside the
     * target, so its loops keep their constant trip counts */
    bool small = true, clipped = false;
    for (int t = 0; t < v->rank; t++) {
        clipped |= lo[t] || hi[t];
        if ((lo[t] || hi[t]) && !(v->dim[t].known && v->dim[t].k <= 16))
            small = false;
    }
    if (clipped && small && !mask) {
        const char *in = NULL;
        for (int t = 0; t < v->rank; t++) {
            if (!lo[t] && !hi[t])
                continue;
            const char *c = strcmp(rlo[t], "0")
                                ? lw_strf(L, "%s <= 0 && %s >= %s", rlo[t], rhi[t], v->dim[t].c)
                                : lw_strf(L, "%s >= %s", rhi[t], v->dim[t].c);
            in = in ? lw_strf(L, "%s && %s", in, c) : c;
        }
        lw_line(L, "if (%s) {", in);
        L->indent++;
        const char *nolo[LW_MAXR] = {0}, *nohi[LW_MAXR] = {0};
        copy_job whole_job = *j;
        lw_val *dst2 = lw_new(L, LV_VIEW);
        if (!dst2)
            return;
        int id = dst2->id;
        *dst2 = *dst; /* the same region, inside the target here */
        dst2->id = id;
        for (int k = 0; k < b->rank; k++)
            if (dst2->tile_of_bdim[k] >= 0 && !dst2->pos[k])
                dst2->guard[k] = false;
        /* (the other branch does not compute every element: nothing is kept) */
        lw_store_nest(L, dst2, v, mask, &whole_job, cond, nolo, nohi, rlo, rhi, false);
        L->indent--;
        lw_line(L, "} else {");
        L->indent++;
        lw_store_nest(L, dst, v, mask, j, cond, lo, hi, rlo, rhi, false);
        L->indent--;
        lw_line(L, "}");
        b->version++;
        return;
    }
    lw_store_nest(L, dst, v, mask, j, cond, lo, hi, rlo, rhi, true);
    b->version++;
}

/* The loops of a store (see lw_store) with the clip lo/hi of the region's part in the target
 * and cond, the test that its dropped dims' indices are in the target (NULL: they are);
 * may_keep: values computed on the way may be kept (lw_keep_begin) when it computes all of v. */
static void lw_store_nest(lw_ctx *L, lw_val *dst, lw_val *v, lw_val *mask, copy_job *j,
                          const char *cond, const char **lo, const char **hi,
                          const char **rlo, const char **rhi, bool may_keep)
{
    j->dst = dst;
    bool vec = !mask && lw_store_vector_open(L, dst, v, cond);
    j->stream = stream_lanes(L, dst, v, mask, &j->stream_cond);
    if (cond) {
        lw_line(L, "if (%s) {", cond);
        L->indent++;
    }
    lw_val *reads[2] = {v, mask};
    /* a store clipped to its target, skipped, or partly done by vectors does not compute
     * every element of v */
    bool whole = may_keep && !cond && !vec;
    for (int t = 0; t < v->rank; t++)
        whole &= !lo[t] && !hi[t];
    lw_keep_scope ks;
    lw_keep_begin(L, &ks, v->rank, v->dim);
    lw_emit_nest_raw(L, v->rank, v->dim, lo, hi, rlo, rhi, reads, mask ? 2 : 1, L->vectorize,
                     store_body, j->stream ? stream_inner : NULL, j);
    lw_keep_end(L, &ks, whole);
    if (cond) {
        L->indent--;
        lw_line(L, "}");
    }
    if (vec) {
        L->indent--;
        lw_line(L, "}");
    }
    if (j->stream)
        stream_fence(L);
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
    return vec_expr_g(L, v, row, col, vw, false);
}

/* The same; edge: views may leave their base (each lane is tested: the vector of a view is
 * built in an aligned lane buffer by an `omp simd` loop, which the compiler keeps in a
 * register). */
static const char *vec_expr_g(lw_ctx *L, lw_val *v, const char *row, int64_t col, int64_t vw,
                              bool edge)
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
        return lw_strf(L, "akg_splat<%s>(%s)", vt, lw_elem(L, v, idx, edge));
    }
    if (edge && v->kind == LV_VIEW) {
        const char *lanes = lw_fresh(L, "ln"), *l = lw_fresh(L, "l");
        const char *idx[2];
        const char *c = lw_strf(L, "(%lld + %s)", (long long)col, l);
        if (v->rank == 2) {
            idx[0] = v->dim[0].known && v->dim[0].k == 1 ? "0" : row;
            idx[1] = c;
        } else {
            idx[0] = c;
        }
        lw_line(L, "alignas(64) float %s[%lld];", lanes, (long long)vw);
        lw_line(L, "#pragma omp simd");
        lw_line(L, "for (int64_t %s = 0; %s < %lld; ++%s) {", l, l, (long long)vw, l);
        L->indent++;
        size_t memo = L->n_memo;
        lw_line(L, "%s[%s] = %s;", lanes, l, lw_elem(L, v, idx, true));
        L->n_memo = memo; /* its temporaries are the loop's */
        L->indent--;
        lw_line(L, "}");
        return lw_strf(L, "(*(const %s *)%s)", vu, lanes); /* may alias the floats */
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
    const char *a = vec_expr_g(L, v->arg[0], row, col, vw, edge);
    if (!strcmp(op, "copy"))
        return a;
    const char *b = vec_expr_g(L, v->arg[1], row, col, vw, edge);
    const char sym = !strcmp(op, "add") ? '+' : !strcmp(op, "sub") ? '-' : !strcmp(op, "mul") ? '*' : '/';
    return lw_strf(L, "(%s %c %s)", a, sym, b);
}

/* Whether conjunction `cond` has the conjunction `c` among its terms. */
static bool has_term(const char *cond, const char *c)
{
    size_t n = strlen(c);
    for (const char *p = strstr(cond, c); p; p = strstr(p + 1, c)) {
        bool starts = p == cond || (p - cond >= 4 && !strncmp(p - 4, " && ", 4));
        bool ends = p[n] == '\0' || !strncmp(p + n, " && ", 4);
        if (starts && ends)
            return true;
    }
    return false;
}

static void collect_interiors(lw_ctx *L, lw_val *v, const char **cond, int depth)
{
    if (!v || depth > 32)
        return;
    if (v->kind == LV_VIEW) {
        const char *c = lw_interior(L, v);
        if (c && !(*cond && has_term(*cond, c))) /* views of one region test it once */
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
