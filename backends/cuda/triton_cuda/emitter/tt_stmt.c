/*
 * tt_stmt.c: statements inside a kernel.
 *
 * A tile is a Python name `v_<name>` bound to a block; `alloc` only records
 * the shape (and writes the initial block for init_zero / init_neg_inf),
 * `load` binds the name to a masked tl.load, an assignment rebinds it. A load
 * or store addresses a region of a row-major tensor: per tensor dimension an
 * integer index or a slice `a:b:s` (pos = a + s * r along the block dimension
 * the slice pairs with, unit dimensions on either side paired with nothing),
 * and is guarded by the tile's valid extents and the tensor's bounds, as the
 * language's moves are. Sequential loops stay loops (`range`), with the
 * shapes of the names they carry restored after the body, so that a value
 * bound inside the body never lends the loop's variables to code after it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

static const char *base_of(const akg_sketch_expr *e)
{
    if (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_SUBSCRIPT)
        e = akg_sketch_expr_base(e);
    return e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(e)
                                                                    : NULL;
}

/* The dimension d of a tensor or scratch tile, as a sketch expression. */
static const akg_sketch_expr *mem_dim(tt_ctx *C, const tt_name *n, size_t d)
{
    if (n->kind == TN_TENSOR)
        return akg_sketch_tensor_dim(C->sk, (size_t)n->tensor, d);
    return akg_sketch_alloc_dim(n->alloc, d);
}

static size_t mem_rank(tt_ctx *C, const tt_name *n)
{
    if (n->kind == TN_TENSOR)
        return akg_sketch_tensor_rank(C->sk, (size_t)n->tensor);
    return akg_sketch_alloc_rank(n->alloc);
}

typedef struct {
    bool index;                   /* an integer index: the dimension is dropped */
    const akg_sketch_expr *start; /* NULL: 0 */
    const akg_sketch_expr *stop;  /* NULL: the dimension's extent */
    const akg_sketch_expr *step;  /* NULL: 1 */
    bool unit;                    /* a slice of constant extent 1 */
    int block_dim;                /* the block dimension it runs along, or -1 */
} region_dim;

/* Pointer and mask of a region of memory n addressed as a block of the shape of v. */
static bool region(tt_ctx *C, const tt_name *n, const akg_sketch_expr *sub, const tt_val *v,
                   const char **ptr, const char **mask)
{
    size_t R = mem_rank(C, n);
    region_dim rd[TT_MAXR];
    memset(rd, 0, sizeof rd);
    size_t given = sub ? akg_sketch_expr_item_count(sub) : 0;
    if (given > R || R > TT_MAXR) {
        tt_fail(C, NULL, "region of '%s' has %zu indices for %zu dimensions", n->name, given, R);
        return false;
    }
    for (size_t d = 0; d < R; d++) {
        rd[d].block_dim = -1;
        if (d >= given)
            continue; /* whole */
        const akg_sketch_expr *it = akg_sketch_expr_item(sub, d);
        if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_SLICE) {
            rd[d].start = akg_sketch_slice_start(it);
            rd[d].stop = akg_sketch_slice_stop(it);
            rd[d].step = akg_sketch_slice_step(it);
            int64_t s = 1, k;
            if (rd[d].step && (!tt_const_value(C, rd[d].step, &s) || s <= 0)) {
                tt_fail_expr(C, it, "a slice step must be a positive constant");
                return false;
            }
            if (rd[d].stop && tt_range_const(C, rd[d].start, rd[d].stop, &k) && k == 1 && s == 1)
                rd[d].unit = true;
        } else if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_NONE) {
            tt_fail_expr(C, it, "a new axis (None) in a region is not lowered yet");
            return false;
        } else {
            if (!tt_is_index(C, it)) {
                tt_fail_expr(C, it, "an index tile in a region is not lowered yet");
                return false;
            }
            rd[d].index = true;
            rd[d].start = it;
        }
    }
    /* pair the slice dimensions with the block's, unit dimensions aside when the counts differ */
    int slices = 0, nonunit = 0, bnonunit = 0;
    for (size_t d = 0; d < R; d++)
        if (!rd[d].index) {
            slices++;
            nonunit += !rd[d].unit;
        }
    for (int k = 0; k < v->rank; k++)
        bnonunit += strcmp(v->pad[k], "1") != 0;
    if (slices == v->rank) {
        int k = 0;
        for (size_t d = 0; d < R; d++)
            if (!rd[d].index)
                rd[d].block_dim = k++;
    } else if (nonunit == bnonunit) {
        int k = 0;
        for (size_t d = 0; d < R; d++) {
            if (rd[d].index || rd[d].unit)
                continue;
            while (k < v->rank && !strcmp(v->pad[k], "1"))
                k++;
            rd[d].block_dim = k++;
        }
    } else {
        tt_fail(C, NULL, "the region of '%s' and the tile have different shapes (%d and %d dims)",
                n->name, slices, v->rank);
        return false;
    }
    /* offset and guard */
    const char *off = NULL, *m = NULL;
    const char *stride = "1";
    const char *terms[TT_MAXR];
    for (size_t d = R; d-- > 0;) {
        const char *pos;
        const char *start = rd[d].start ? tt_index(C, rd[d].start, false) : "0";
        int k = rd[d].block_dim;
        const char *r = k >= 0 ? tt_arange(C, v->pad[k], k, v->rank) : NULL;
        const char *step = rd[d].step ? tt_index(C, rd[d].step, false) : "1";
        if (r)
            pos = !strcmp(start, "0")  ? (!strcmp(step, "1") ? r : tt_strf(C, "%s * %s", r, step))
                  : !strcmp(step, "1") ? tt_strf(C, "(%s + %s)", start, r)
                                       : tt_strf(C, "(%s + %s * %s)", start, r, step);
        else
            pos = start;
        terms[d] = !strcmp(stride, "1") ? pos : tt_strf(C, "%s * %s", pos, stride);
        if (!strcmp(pos, "0"))
            terms[d] = NULL;
        /* the guard: inside the tensor, inside the tile */
        const akg_sketch_expr *dim = mem_dim(C, n, d);
        int64_t dv, sv;
        bool cdim = tt_const_value(C, dim, &dv);
        const char *dimt = tt_index(C, dim, false);
        bool start_nonneg = !rd[d].start || tt_nonneg(C, rd[d].start);
        const char *conds[3] = {0};
        int nc = 0;
        if (!r) {
            bool cstart = rd[d].start ? tt_const_value(C, rd[d].start, &sv) : (sv = 0, true);
            if (!(cstart && cdim && sv < dv))
                conds[nc++] = tt_strf(C, "(%s < %s)", start, dimt);
            if (!start_nonneg)
                conds[nc++] = tt_strf(C, "(%s >= 0)", start);
        } else {
            conds[nc++] = tt_strf(C, "(%s < %s)", pos, dimt);
            if (!start_nonneg)
                conds[nc++] = tt_strf(C, "(%s >= 0)", pos);
            if (v->ext[k]) {
                const char *c = tt_strf(C, "(%s < %s)", r, v->ext[k]);
                if (strcmp(c, conds[0]))
                    conds[nc++] = c;
            }
        }
        for (int i = 0; i < nc; i++)
            if (!m || !strstr(m, conds[i]))
                m = m ? tt_strf(C, "%s & %s", m, conds[i]) : conds[i];
        stride = !strcmp(stride, "1")
                     ? (cdim && dv == 1 ? "1" : dimt)
                     : (cdim && dv == 1 ? stride : tt_strf(C, "%s * %s", dimt, stride));
    }
    for (size_t d = 0; d < R; d++)
        if (terms[d])
            off = off ? tt_strf(C, "%s + %s", off, terms[d]) : terms[d];
    /* block dimensions no region dimension runs along still shape the pointer */
    for (int k = 0; k < v->rank; k++) {
        bool used = false;
        for (size_t d = 0; d < R; d++)
            used |= rd[d].block_dim == k;
        if (!used || !off || !strstr(off, "tl.arange")) {
            if (!used)
                off = off ? tt_strf(C, "%s + %s", off, tt_arange(C, v->pad[k], k, v->rank))
                          : tt_arange(C, v->pad[k], k, v->rank);
        }
    }
    *ptr = off ? tt_strf(C, "%s + %s", n->py, off) : n->py;
    if (m && v->rank > 0 && !strstr(m, "tl.arange")) /* a block mask for a block pointer */
        m = tt_strf(C, "%s & (%s >= 0)", m, tt_arange(C, v->pad[0], 0, v->rank));
    /* a conjunction is compared with 0 again: Triton's interpreter takes only a bool block as a
     * mask, and `block & scalar` gives it another representation (the compiler folds this) */
    *mask = m && strstr(m, " & ") ? tt_strf(C, "(%s) != 0", m) : m;
    return true;
}

static tt_name *memory(tt_ctx *C, const akg_sketch_expr *e, const char *what)
{
    const char *b = base_of(e);
    tt_name *n = b ? tt_lookup(C, b) : NULL;
    if (!n) {
        tt_fail_expr(C, e, "%s: '%s' is not a tensor or tile", what, b ? b : tt_expr_text(C, e));
        return NULL;
    }
    return n;
}

static void bind_tile(tt_ctx *C, const char *name, const tt_val *v, const tt_val *shape)
{
    tt_val *b = tt_alloc(C, sizeof *b);
    if (!b)
        return;
    *b = *v;
    b->py = tt_strf(C, "v_%s", name);
    b->literal = false;
    b->index = false;
    tt_name *n = tt_bind(C, name, TN_TILE, b->py);
    if (!n)
        return;
    n->val = b;
    n->shape = shape ? (tt_val *)shape : b;
    n->dt = b->dt;
}

static void do_alloc(tt_ctx *C, const akg_sketch_stmt *st)
{
    const char *name = akg_sketch_alloc_name(st);
    int r = (int)akg_sketch_alloc_rank(st);
    if (r > TT_MAXR) {
        tt_fail(C, st, "tile rank %d is above %d", r, TT_MAXR);
        return;
    }
    akg_dtype dt = akg_sketch_alloc_dtype(st);
    tt_val *shape = tt_new_val(C, r, dt, NULL);
    if (!shape)
        return;
    const char *list = "";
    for (int d = 0; d < r; d++) {
        if (!tt_dim(C, akg_sketch_alloc_dim(st, (size_t)d), &shape->pad[d], &shape->ext[d]))
            return;
        list = tt_strf(C, "%s%s%s", list, d ? ", " : "", shape->pad[d]);
    }
    bool zero = akg_sketch_alloc_has_hint(st, "init_zero");
    bool ninf = akg_sketch_alloc_has_hint(st, "init_neg_inf");
    tt_name *n = tt_bind(C, name, TN_TILE, tt_strf(C, "v_%s", name));
    if (!n)
        return;
    n->alloc = st;
    n->shape = shape;
    n->dt = dt;
    if (zero || ninf) {
        if (!dt)
            dt = shape->dt = n->dt = AKG_DTYPE_F32;
        tt_line(C, "v_%s = tl.full([%s], %s, %s)", name, list, ninf ? "float(\"-inf\")" : "0",
                tt_dtype_tl(dt));
        tt_val *v = tt_alloc(C, sizeof *v);
        if (!v)
            return;
        *v = *shape;
        v->py = n->py;
        n->val = v;
    }
}

static bool was_stored(tt_ctx *C, const char *name)
{
    for (size_t i = 0; i < C->n_stored; i++)
        if (!strcmp(C->stored[i], name))
            return true;
    return false;
}

tt_val *tt_scratch_value(tt_ctx *C, tt_name *n)
{
    int r = (int)akg_sketch_alloc_rank(n->alloc);
    tt_val *v = tt_new_val(C, r, n->dt, NULL);
    if (!v)
        return NULL;
    for (int d = 0; d < r; d++)
        if (!tt_dim(C, akg_sketch_alloc_dim(n->alloc, (size_t)d), &v->pad[d], &v->ext[d]))
            return NULL;
    const char *ptr, *mask;
    if (!region(C, n, NULL, v, &ptr, &mask))
        return NULL;
    if (was_stored(C, n->name))
        tt_line(C, "tl.debug_barrier()  # '%s' was stored by this program", n->name);
    const char *t = tt_temp(C);
    tt_line(C, "%s = tl.load(%s%s%s)  # the `slow` tile '%s' as a block", t, ptr,
            mask ? tt_strf(C, ", mask=%s, other=0", mask) : "", "", n->name);
    v->py = t;
    return v;
}

static const char *other_of(tt_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *o = akg_sketch_move_option(st, "other");
    if (!o)
        return "0";
    tt_val *v = tt_value(C, o);
    if (!v)
        return "0";
    if (v->rank) {
        tt_fail_expr(C, o, "other= takes a scalar");
        return "0";
    }
    return v->py;
}

static const char *mask_of(tt_ctx *C, const akg_sketch_stmt *st, const char *m)
{
    const akg_sketch_expr *o = akg_sketch_move_option(st, "mask");
    if (!o)
        return m;
    tt_val *v = tt_value(C, o);
    if (!v)
        return m;
    const char *b = tt_strf(C, "(%s != 0)", v->py);
    return m ? tt_strf(C, "((%s) & %s) != 0", m, b) : b;
}

static void do_load(tt_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *src = akg_sketch_move_source(st), *dst = akg_sketch_move_target(st);
    if (akg_sketch_expr_get_kind(dst) != AKG_SKETCH_EXPR_NAME) {
        tt_fail(C, st,
                "load into a tile region ('%s') is not lowered yet: Triton blocks are values "
                "without indexed update",
                tt_expr_text(C, dst));
        return;
    }
    const char *tname = akg_sketch_expr_text(dst);
    tt_name *t = tt_lookup(C, tname);
    if (!t || t->kind != TN_TILE || !t->shape) {
        tt_fail(C, st, "load into '%s', which is not an allocated tile here", tname);
        return;
    }
    tt_name *m = memory(C, src, "load");
    if (!m)
        return;
    if (m->kind == TN_TILE) {
        if (akg_sketch_expr_get_kind(src) != AKG_SKETCH_EXPR_NAME) {
            tt_fail(C, st, "load from a region of tile '%s' is not lowered yet", m->name);
            return;
        }
        if (!m->val) {
            tt_fail(C, st, "tile '%s' is read before anything is loaded into it", m->name);
            return;
        }
        tt_val v = *t->shape;
        akg_dtype dt = v.dt ? v.dt : m->val->dt;
        tt_line(C, "v_%s = %s", tname, tt_as_dtype(C, m->val, dt));
        v.dt = dt;
        bind_tile(C, tname, &v, t->shape);
        return;
    }
    if (m->kind != TN_TENSOR && m->kind != TN_SCRATCH) {
        tt_fail(C, st, "load from '%s', which is not a tensor", m->name);
        return;
    }
    tt_val v = *t->shape;
    const char *ptr, *mask;
    const akg_sketch_expr *sub =
        akg_sketch_expr_get_kind(src) == AKG_SKETCH_EXPR_SUBSCRIPT ? src : NULL;
    if (!region(C, m, sub, &v, &ptr, &mask))
        return;
    mask = mask_of(C, st, mask);
    if (was_stored(C, m->name))
        tt_line(C, "tl.debug_barrier()  # '%s' was stored by this program", m->name);
    akg_dtype dt = v.dt ? v.dt : m->dt;
    const char *ld = mask ? tt_strf(C, "tl.load(%s, mask=%s, other=%s)", ptr, mask, other_of(C, st))
                          : tt_strf(C, "tl.load(%s)", ptr);
    tt_line(C, "v_%s = %s%s", tname, ld, dt != m->dt ? tt_strf(C, ".to(%s)", tt_dtype_tl(dt)) : "");
    v.dt = dt;
    if (!t->shape->dt)
        t->shape->dt = dt;
    bind_tile(C, tname, &v, t->shape);
}

static void do_store(tt_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *src = akg_sketch_move_source(st), *dst = akg_sketch_move_target(st);
    tt_name *m = memory(C, dst, "store");
    if (!m)
        return;
    if (m->kind == TN_TILE) {
        tt_fail(C, st,
                "store into tile '%s' is not lowered yet: Triton blocks are values without "
                "indexed update",
                m->name);
        return;
    }
    if (m->kind != TN_TENSOR && m->kind != TN_SCRATCH) {
        tt_fail(C, st, "store into '%s', which is not a tensor", m->name);
        return;
    }
    tt_val *v = tt_value(C, src);
    if (!v)
        return;
    const akg_sketch_expr *sub =
        akg_sketch_expr_get_kind(dst) == AKG_SKETCH_EXPR_SUBSCRIPT ? dst : NULL;
    tt_val shape = *v;
    if (v->rank == 0) { /* a scalar fills its region */
        size_t R = mem_rank(C, m);
        size_t given = sub ? akg_sketch_expr_item_count(sub) : 0;
        int r = 0;
        for (size_t d = 0; d < R && r < TT_MAXR; d++) {
            const akg_sketch_expr *it = d < given ? akg_sketch_expr_item(sub, d) : NULL;
            if (it && akg_sketch_expr_get_kind(it) != AKG_SKETCH_EXPR_SLICE)
                continue;
            const akg_sketch_expr *a = it ? akg_sketch_slice_start(it) : NULL;
            const akg_sketch_expr *b = it ? akg_sketch_slice_stop(it) : NULL;
            if (!b)
                b = mem_dim(C, m, d);
            if (!tt_dim_range(C, a, b, &shape.pad[r], &shape.ext[r]))
                return;
            r++;
        }
        shape.rank = r;
    }
    const char *ptr, *mask;
    if (!region(C, m, sub, &shape, &ptr, &mask))
        return;
    mask = mask_of(C, st, mask);
    const char *val = v->py;
    if (v->literal || v->dt != m->dt)
        val = tt_strf(C, "tl.cast(%s, %s)", val, tt_dtype_tl(m->dt));
    if (v->rank == 0 && shape.rank > 0) {
        const char *list = "";
        for (int d = 0; d < shape.rank; d++)
            list = tt_strf(C, "%s%s%s", list, d ? ", " : "", shape.pad[d]);
        val = tt_strf(C, "tl.full([%s], %s, %s)", list, val, tt_dtype_tl(m->dt));
    }
    bool stream = false;
    const akg_sketch_expr *h = akg_sketch_move_option(st, "llm_hint");
    if (h)
        for (size_t i = 0; i < akg_sketch_expr_item_count(h); i++) {
            const akg_sketch_expr *it = akg_sketch_expr_item(h, i);
            if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_STRING &&
                !strcmp(akg_sketch_expr_text(it), "nontemporal"))
                stream = true;
        }
    tt_line(C, "tl.store(%s, %s%s%s%s)", ptr, val, mask ? ", mask=" : "", mask ? mask : "",
            stream && C->target->nontemporal_store ? ", cache_modifier=\".cs\"" : "");
    if (!was_stored(C, m->name) && C->n_stored < sizeof C->stored / sizeof C->stored[0])
        C->stored[C->n_stored++] = m->name;
}

static void assign_one(tt_ctx *C, const char *name, const char *op, const akg_sketch_expr *value)
{
    if (!strcmp(op, "=") && tt_is_index(C, value)) {
        tt_name *old = tt_lookup(C, name);
        if (!old || old->kind == TN_KINT) {
            tt_line(C, "v_%s = %s", name, tt_index(C, value, false));
            tt_name *n = tt_bind(C, name, TN_KINT, tt_strf(C, "v_%s", name));
            if (n)
                n->def = value;
            return;
        }
    }
    tt_val *v = tt_value(C, value);
    if (!v)
        return;
    if (strcmp(op, "=")) {
        tt_name *old = tt_lookup(C, name);
        if (!old || old->kind != TN_TILE || !old->val) {
            tt_fail(C, NULL, "'%s %s' on a name that holds no tile", name, op);
            return;
        }
        tt_val *a = old->val;
        const char *py = tt_strf(C, "(%s %c %s)", a->py, op[0], tt_as_dtype(C, v, a->dt));
        tt_line(C, "v_%s = %s", name, py);
        bind_tile(C, name, a, old->shape);
        return;
    }
    tt_line(C, "v_%s = %s", name, v->py);
    tt_name *old = tt_lookup(C, name);
    bind_tile(C, name, v, old && old->kind == TN_TILE ? old->shape : NULL);
}

static void do_assign(tt_ctx *C, const akg_sketch_stmt *st)
{
    size_t n = akg_sketch_assign_target_count(st);
    const akg_sketch_expr *value = akg_sketch_assign_value(st);
    const char *op = akg_sketch_assign_op(st);
    if (n == 1) {
        assign_one(C, akg_sketch_assign_target(st, 0), op, value);
        return;
    }
    if (akg_sketch_expr_get_kind(value) != AKG_SKETCH_EXPR_TUPLE ||
        akg_sketch_expr_item_count(value) != n || strcmp(op, "=")) {
        tt_fail(C, st, "a tuple assignment needs as many values as names");
        return;
    }
    for (size_t i = 0; i < n; i++)
        assign_one(C, akg_sketch_assign_target(st, i), op, akg_sketch_expr_item(value, i));
}

static void do_call(tt_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *call = akg_sketch_call_expr(st);
    const char *fn = akg_sketch_expr_text(call);
    const tt_op *op = tt_op_find(fn);
    const akg_sketch_expr *dst = akg_sketch_expr_kwarg(call, "dst");
    size_t n = akg_sketch_expr_item_count(call);
    bool gemm = !strcmp(fn, "gemm");
    if (op && !dst && (int)n == tt_op_nargs(op) + 1)
        dst = akg_sketch_expr_item(call, n - 1);
    if (gemm && !dst && n == 3) /* gemm(a, b, c): c += a @ b */
        dst = akg_sketch_expr_item(call, 2);
    if ((!op && !gemm) || !dst || akg_sketch_expr_get_kind(dst) != AKG_SKETCH_EXPR_NAME) {
        tt_fail(C, st,
                "the call statement '%s(...)' is not lowered by the %s emitter yet "
                "(destination-form elementwise calls and gemm(a, b, c) / gemm(a, b, dst=c) are; "
                "write the call as a value: 'c = %s(...)')",
                fn, C->target->emitter, fn);
        return;
    }
    size_t given = akg_sketch_expr_kwarg(call, "dst") ? n : n - 1;
    if (gemm) /* the destination is the accumulator: the product is added to it */
        given = n;
    tt_val *v = tt_call_value(C, call, given);
    if (!v)
        return;
    const char *name = akg_sketch_expr_text(dst);
    tt_line(C, "v_%s = %s", name, v->py);
    tt_name *old = tt_lookup(C, name);
    bind_tile(C, name, v, old && old->kind == TN_TILE ? old->shape : NULL);
}

/* After a loop or branch: the names bound before it keep the shape they had there (the body
 * must carry them with the same shape and dtype; a Triton requirement too). */
static void restore_shapes(tt_ctx *C, size_t mark, tt_names *before)
{
    for (size_t i = 0; i < before->n; i++) {
        const char *name = before->v[i];
        tt_name *now = tt_lookup(C, name);
        size_t idx = (size_t)(now - C->names);
        if (!now || idx < mark)
            continue;
        tt_name *old = NULL;
        for (size_t k = mark; k-- > 0;)
            if (!strcmp(C->names[k].name, name)) {
                old = &C->names[k];
                break;
            }
        if (!old)
            continue;
        tt_name copy = *old;
        if (copy.kind == TN_TILE && !copy.val && now->kind == TN_TILE && now->val) {
            /* first written inside: keep the body's shape */
            continue;
        }
        tt_name *n = tt_bind(C, copy.name, copy.kind, copy.py);
        if (n)
            *n = copy;
    }
}

static void names_before(tt_ctx *C, size_t mark, tt_names *out)
{
    for (size_t i = 0; i < mark; i++)
        tt_names_add(C, out, C->names[i].name);
}

static void do_for(tt_ctx *C, const akg_sketch_stmt *st)
{
    const char *var = akg_sketch_for_var(st);
    const akg_sketch_expr *start = akg_sketch_for_start(st), *stop = akg_sketch_for_stop(st),
                          *step = akg_sketch_for_step(st);
    if (!tt_is_index(C, stop) || (start && !tt_is_index(C, start)) ||
        (step && !tt_is_index(C, step))) {
        tt_fail(C, st, "loop bounds must be integer expressions");
        return;
    }
    const char *a = start ? tt_index(C, start, false) : "0";
    const char *b = tt_index(C, stop, false);
    const char *s = step ? tt_index(C, step, false) : "1";
    if (tt_is_parallel(st))
        tt_line(C, "# parallel loop inside a program: its iterations run in order");
    size_t mark = tt_scope_mark(C);
    tt_names before = {0};
    names_before(C, mark, &before);
    tt_line(C, "for v_%s in range(%s, %s, %s):", var, a, b, s);
    C->indent++;
    tt_line(C, "pass");
    tt_name *lv = tt_bind(C, var, TN_KLOOP, tt_strf(C, "v_%s", var));
    if (lv) {
        lv->start = start;
        lv->stop = stop;
    }
    size_t nb = akg_sketch_stmt_body_count(st, 0);
    for (size_t i = 0; i < nb && !C->status; i++)
        tt_kernel_stmt(C, akg_sketch_stmt_body_at(st, 0, i));
    C->indent--;
    restore_shapes(C, mark, &before);
}

static void do_if(tt_ctx *C, const akg_sketch_stmt *st)
{
    const akg_sketch_expr *cond = akg_sketch_if_cond(st);
    if (!tt_is_index(C, cond)) {
        tt_fail(C, st, "an `if` on a tile value is not lowered yet (use where)");
        return;
    }
    size_t mark = tt_scope_mark(C);
    tt_names before = {0};
    names_before(C, mark, &before);
    tt_line(C, "if %s:", tt_index(C, cond, false));
    for (int w = 0; w < 2; w++) {
        if (w == 1) {
            if (!akg_sketch_stmt_body_count(st, 1))
                break;
            tt_line(C, "else:");
        }
        C->indent++;
        tt_line(C, "pass");
        size_t m2 = tt_scope_mark(C);
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w) && !C->status; i++)
            tt_kernel_stmt(C, akg_sketch_stmt_body_at(st, w, i));
        C->indent--;
        if (w == 0)
            restore_shapes(C, m2, &before);
    }
    restore_shapes(C, mark, &before);
}

void tt_kernel_stmt(tt_ctx *C, const akg_sketch_stmt *st)
{
    if (C->status)
        return;
    const akg_sketch_stmt *saved = C->cur;
    C->cur = st;
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_ALLOC:
        do_alloc(C, st);
        break;
    case AKG_SKETCH_STMT_LOAD:
        do_load(C, st);
        break;
    case AKG_SKETCH_STMT_STORE:
        do_store(C, st);
        break;
    case AKG_SKETCH_STMT_ASSIGN:
        do_assign(C, st);
        break;
    case AKG_SKETCH_STMT_CALL:
        do_call(C, st);
        break;
    case AKG_SKETCH_STMT_FOR:
        do_for(C, st);
        break;
    case AKG_SKETCH_STMT_IF:
        do_if(C, st);
        break;
    case AKG_SKETCH_STMT_PASS:
        break;
    }
    C->cur = saved;
}

void tt_kernel_stmts(tt_ctx *C, const akg_sketch_stmt *const *stmts, size_t n)
{
    for (size_t i = 0; i < n && !C->status; i++)
        tt_kernel_stmt(C, stmts[i]);
}
