/*
 * cu_expr.c: values inside a CUDA kernel. An integer index expression is C
 * on long long (floor division and modulo as the language's); a tile value
 * is a cu_node, built by cu_value (which emits, at the current point, what
 * must run before any element is read: full reductions to uniform
 * registers, partial ones to per-block buffers by groups of threads an
 * output, reduce_groups) and read element by element
 * by cu_elem inside a thread-strided loop (cu_loop_begin). Broadcasting is
 * NumPy's: shapes right-aligned, a dimension whose extent is the literal 1
 * stretches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

/* ---- index expressions ---- */

bool cu_is_index(cu_ctx *C, const akg_sketch_expr *e)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        cu_bind *b = cu_lookup(C, akg_sketch_expr_text(e));
        return b && b->kind == CB_INT;
    }
    case AKG_SKETCH_EXPR_UNARY:
        return cu_is_index(C, akg_sketch_expr_lhs(e));
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        if (strcmp(op, "+") && strcmp(op, "-") && strcmp(op, "*") && strcmp(op, "//") &&
            strcmp(op, "%"))
            return false;
        return cu_is_index(C, akg_sketch_expr_lhs(e)) && cu_is_index(C, akg_sketch_expr_rhs(e));
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        if ((strcmp(f, "min") && strcmp(f, "max") && strcmp(f, "ceil")) ||
            akg_sketch_expr_item_count(e) != 2 || akg_sketch_expr_kwarg_count(e))
            return false;
        return cu_is_index(C, akg_sketch_expr_item(e, 0)) &&
               cu_is_index(C, akg_sketch_expr_item(e, 1));
    }
    default:
        return false;
    }
}

bool cu_host_known(cu_ctx *C, const akg_sketch_expr *e)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        cu_bind *b = cu_lookup(C, akg_sketch_expr_text(e));
        return b && b->kind == CB_INT && b->host;
    }
    case AKG_SKETCH_EXPR_UNARY:
        return cu_host_known(C, akg_sketch_expr_lhs(e));
    case AKG_SKETCH_EXPR_BINARY:
        return cu_is_index(C, e) && cu_host_known(C, akg_sketch_expr_lhs(e)) &&
               cu_host_known(C, akg_sketch_expr_rhs(e));
    case AKG_SKETCH_EXPR_CALL:
        return cu_is_index(C, e) && cu_host_known(C, akg_sketch_expr_item(e, 0)) &&
               cu_host_known(C, akg_sketch_expr_item(e, 1));
    default:
        return false;
    }
}

const char *cu_index(cu_ctx *C, const akg_sketch_expr *e)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return cu_strf(C, "%lldLL", (long long)akg_sketch_expr_int(e));
    case AKG_SKETCH_EXPR_NAME: {
        cu_bind *b = cu_lookup(C, akg_sketch_expr_text(e));
        if (!b || b->kind != CB_INT) {
            cu_fail_expr(C, e, "`%s`: not an integer scalar here", akg_sketch_expr_text(e));
            return "0";
        }
        return b->c;
    }
    case AKG_SKETCH_EXPR_UNARY:
        return cu_strf(C, "(%s%s)", akg_sketch_expr_text(e), cu_index(C, akg_sketch_expr_lhs(e)));
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        const char *l = cu_index(C, akg_sketch_expr_lhs(e)),
                   *r = cu_index(C, akg_sketch_expr_rhs(e));
        if (!strcmp(op, "//"))
            return cu_strf(C, "akg_floordiv(%s, %s)", l, r);
        if (!strcmp(op, "%"))
            return cu_strf(C, "akg_floormod(%s, %s)", l, r);
        return cu_strf(C, "(%s %s %s)", l, op, r);
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        const char *l = cu_index(C, akg_sketch_expr_item(e, 0));
        const char *r = cu_index(C, akg_sketch_expr_item(e, 1));
        return cu_strf(C, "akg_%s(%s, %s)", !strcmp(f, "ceil") ? "ceildiv" : f, l, r);
    }
    default:
        cu_fail_expr(C, e, "`%s`: not an integer index expression", cu_text(C, e));
        return "0";
    }
}

const char *cu_bound(cu_ctx *C, const akg_sketch_expr *e)
{
    if (cu_host_known(C, e))
        return cu_index(C, e);
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME) {
        /* an integer assigned in the kernel from a bounded expression (qw = min(BLK, N - q)) */
        cu_bind *b = cu_lookup(C, akg_sketch_expr_text(e));
        return b && b->kind == CB_INT ? b->bnd : NULL;
    }
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL &&
        !strcmp(akg_sketch_expr_text(e), "min") && akg_sketch_expr_item_count(e) == 2) {
        const char *a = cu_bound(C, akg_sketch_expr_item(e, 0));
        const char *b = cu_bound(C, akg_sketch_expr_item(e, 1));
        if (a && b)
            return cu_strf(C, "akg_min(%s, %s)", a, b);
        return a ? a : b;
    }
    return NULL;
}

bool cu_range_const(cu_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                    int64_t *k)
{
    int64_t a = 0, b = 0;
    bool sc = !start || akg_sketch_expr_eval(C->sk, start, NULL, 0, &a) == 0;
    if (sc && stop && akg_sketch_expr_eval(C->sk, stop, NULL, 0, &b) == 0) {
        *k = b - a;
        return true;
    }
    /* stop written `start + k` */
    if (start && stop && akg_sketch_expr_get_kind(stop) == AKG_SKETCH_EXPR_BINARY &&
        !strcmp(akg_sketch_expr_text(stop), "+") &&
        akg_sketch_expr_get_kind(akg_sketch_expr_rhs(stop)) == AKG_SKETCH_EXPR_INT &&
        !strcmp(cu_text(C, akg_sketch_expr_lhs(stop)), cu_text(C, start))) {
        *k = akg_sketch_expr_int(akg_sketch_expr_rhs(stop));
        return true;
    }
    return false;
}

/* ---- nodes ---- */

cu_node *cu_new_node(cu_ctx *C, cu_node_kind kind, int rank, akg_dtype dt)
{
    cu_node *n = cu_alloc(C, sizeof *n);
    if (!n) {
        static cu_node dummy;
        memset(&dummy, 0, sizeof dummy);
        dummy.kind = CN_LIT;
        dummy.c = "0";
        return &dummy;
    }
    n->kind = kind;
    n->rank = rank;
    n->dt = dt;
    for (int d = 0; d < rank; d++) {
        n->ext[d] = "1";
        n->bnd[d] = "1";
        n->unit[d] = true;
    }
    return n;
}

bool cu_all_unit(const cu_node *n)
{
    for (int d = 0; d < n->rank; d++)
        if (!n->unit[d])
            return false;
    return true;
}

static const char *total_of(cu_ctx *C, int rank, const char *const *ext)
{
    if (rank == 0)
        return "1LL";
    const char *t = ext[0];
    for (int d = 1; d < rank; d++)
        t = cu_strf(C, "%s * %s", t, ext[d]);
    return cu_strf(C, "(long long)(%s)", t);
}

void cu_loop_begin(cu_ctx *C, int rank, const char *const *ext, const char **idx)
{
    if (rank == 0) {
        cu_line(C, "if (threadIdx.x == 0) {");
        C->indent++;
        return;
    }
    const char *f = cu_temp(C, "_f");
    cu_line(C, "for (long long %s = threadIdx.x; %s < %s; %s += blockDim.x) {", f, f,
            total_of(C, rank, ext), f);
    C->indent++;
    const char *rest = f;
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = cu_temp(C, "_i");
        if (d == 0)
            cu_line(C, "const long long %s = %s;", idx[d], rest);
        else {
            cu_line(C, "const long long %s = %s %% (%s);", idx[d], rest, ext[d]);
            const char *r2 = cu_temp(C, "_r");
            cu_line(C, "const long long %s = %s / (%s);", r2, rest, ext[d]);
            rest = r2;
        }
    }
}

void cu_loop_end(cu_ctx *C)
{
    C->indent--;
    cu_line(C, "}");
}

const char *cu_scratch_new(cu_ctx *C, const char *ctype, const char *elems)
{
    if (C->n_scratch >= sizeof C->scratch / sizeof C->scratch[0]) {
        cu_fail(C, NULL, "more than %zu materialized tiles in one kernel",
                sizeof C->scratch / sizeof C->scratch[0]);
        return "0";
    }
    cu_scratch *s = &C->scratch[C->n_scratch++];
    s->c = cu_strf(C, "_scr%zu", C->n_scratch - 1);
    s->ctype = ctype;
    s->elems = elems;
    const char *p = cu_temp(C, "_buf");
    cu_line(C, "%s *const %s = %s + (long long)blockIdx.x * (%s);", ctype, p, s->c, elems);
    return p;
}

/* The strongest dtype of the operands that are not weak; weak (numbers, index scalars,
 * params) only when all are: f32 if any is a float, else i64. */
static akg_dtype common_dtype(cu_node *const *a, int n)
{
    static const akg_dtype order[] = {AKG_DTYPE_BOOL, AKG_DTYPE_U8,  AKG_DTYPE_I8,  AKG_DTYPE_I16,
                                      AKG_DTYPE_I32,  AKG_DTYPE_I64, AKG_DTYPE_F16, AKG_DTYPE_BF16,
                                      AKG_DTYPE_F32,  AKG_DTYPE_F64};
    int best = -1;
    bool any_float = false;
    for (int i = 0; i < n; i++) {
        if (cu_is_float(a[i]->dt))
            any_float = true;
        if (a[i]->weak)
            continue;
        for (int k = 0; k < (int)(sizeof order / sizeof order[0]); k++)
            if (order[k] == a[i]->dt && k > best)
                best = k;
    }
    if (best >= 0) {
        akg_dtype dt = order[best];
        /* an integer tile meeting a float number computes in f32 */
        if (!cu_is_float(dt) && any_float)
            return AKG_DTYPE_F32;
        return dt;
    }
    return any_float ? AKG_DTYPE_F32 : AKG_DTYPE_I64;
}

/* The broadcast shape of the operands into r. */
static bool broadcast(cu_ctx *C, cu_node *r, cu_node *const *a, int n, const akg_sketch_expr *at)
{
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (a[i]->rank > rank)
            rank = a[i]->rank;
    r->rank = rank;
    for (int d = 0; d < rank; d++) {
        r->ext[d] = "1";
        r->bnd[d] = "1";
        r->unit[d] = true;
    }
    for (int i = 0; i < n; i++) {
        int off = rank - a[i]->rank;
        for (int d = 0; d < a[i]->rank; d++) {
            if (a[i]->unit[d])
                continue;
            if (r->unit[d + off]) {
                r->ext[d + off] = a[i]->ext[d];
                r->bnd[d + off] = a[i]->bnd[d];
                r->unit[d + off] = false;
            } else if (!r->bnd[d + off] && a[i]->bnd[d]) {
                r->bnd[d + off] = a[i]->bnd[d];
            }
        }
    }
    (void)C, (void)at;
    return true;
}

static cu_node *make_op(cu_ctx *C, const cu_op *op, cu_node **args, int n,
                        const akg_sketch_expr *at)
{
    cu_node *r = cu_new_node(C, CN_OP, 0, AKG_DTYPE_F32);
    r->op = op;
    r->nargs = n;
    for (int i = 0; i < n; i++)
        r->a[i] = args[i];
    broadcast(C, r, args, n, at);
    int kind = cu_op_kind(op);
    if (kind == 3 && n == 3) {
        r->dt = common_dtype(args + 1, n - 1);
        r->weak = args[1]->weak && args[2]->weak;
    } else {
        akg_dtype t = common_dtype(args, n);
        bool weak = true;
        for (int i = 0; i < n; i++)
            weak = weak && args[i]->weak;
        r->dt = kind == 0 ? t : AKG_DTYPE_BOOL;
        r->weak = kind == 0 && weak;
    }
    return r;
}

/* The index texts of operand a inside a result of rank r at idx. */
static void operand_idx(const cu_node *a, int r, const char *const *idx, const char **out)
{
    int off = r - a->rank;
    for (int d = 0; d < a->rank; d++)
        out[d] = a->unit[d] ? "0" : idx[d + off];
}

static const char *lit_as(cu_ctx *C, const char *lit, akg_dtype dt)
{
    return cu_strf(C, "(%s)(%s)", cu_comptype(dt), lit);
}

/* The element of a converted to dtype dt's arithmetic type. */
const char *cu_elem_as(cu_ctx *C, const cu_node *a, const char *const *idx, akg_dtype dt)
{
    const char *v = cu_elem(C, a, idx);
    if (a->kind == CN_LIT)
        return lit_as(C, v, dt);
    if (!strcmp(cu_comptype(a->dt), cu_comptype(dt)))
        return v;
    return cu_strf(C, "AKG_CVT(%s, %s)", cu_comptype(dt), v);
}

static const char *load_addr(cu_ctx *C, const cu_node *n, const char *const *idx,
                             const char **guard)
{
    const cu_mem *m = n->mem;
    const char *addr = NULL, *g = NULL;
    for (int d = 0; d < m->rank; d++) {
        const char *pos;
        if (n->fix[d])
            pos = n->fix[d];
        else {
            const char *k = n->tdim[d] < 0 ? "0" : idx[n->tdim[d]];
            pos = cu_strf(C, "(%s + %s * %s)", n->start[d], n->step[d], k);
        }
        const char *p = cu_temp(C, "_p");
        cu_line(C, "const long long %s = %s;", p, pos);
        const char *gd = cu_strf(C, "%s >= 0 && %s < %s", p, p, m->dim[d]);
        g = g ? cu_strf(C, "%s && %s", g, gd) : gd;
        addr = addr ? cu_strf(C, "(%s) * (%s) + %s", addr, m->dim[d], p) : p;
    }
    *guard = g ? g : "true";
    return addr ? addr : "0";
}

const char *cu_elem(cu_ctx *C, const cu_node *n, const char *const *idx)
{
    if (C->status)
        return "0";
    const char *ct = cu_comptype(n->dt);
    switch (n->kind) {
    case CN_LIT:
        return n->c;
    case CN_SCAL:
        return n->c;
    case CN_ARANGE: {
        const char *v = cu_temp(C, "_e");
        cu_line(C, "const %s %s = (%s)(%s + %s);", ct, v, ct, n->c, n->rank ? idx[0] : "0");
        return v;
    }
    case CN_BUF: {
        const char *lin = NULL;
        for (int d = 0; d < n->rank; d++)
            lin = lin ? cu_strf(C, "(%s) * (%s) + %s", lin, n->ext[d], idx[d]) : idx[d];
        const char *v = cu_temp(C, "_e");
        cu_line(C, "const %s %s = AKG_CVT(%s, %s[%s]);", ct, v, ct, n->c, lin ? lin : "0");
        return v;
    }
    case CN_LOAD: {
        const char *guard;
        const char *addr = load_addr(C, n, idx, &guard);
        const char *v = cu_temp(C, "_e");
        cu_line(C, "const %s %s = (%s) ? AKG_CVT(%s, %s[%s]) : (%s)(%s);", ct, v, guard, ct,
                n->mem->ptr, addr, ct, n->other ? n->other : "0");
        return v;
    }
    case CN_CAST: {
        const char *ai[CU_MAXR];
        operand_idx(n->a[0], n->rank, idx, ai);
        const char *x = cu_elem(C, n->a[0], ai);
        const char *v = cu_temp(C, "_e");
        if (n->dt == AKG_DTYPE_F16 || n->dt == AKG_DTYPE_BF16)
            cu_line(C, "const float %s = (float)AKG_CVT(%s, %s);", v, cu_ctype(n->dt), x);
        else
            cu_line(C, "const %s %s = AKG_CVT(%s, %s);", ct, v, cu_ctype(n->dt), x);
        return v;
    }
    case CN_GATHER: {
        const char *ii[CU_MAXR], *xi[CU_MAXR] = {0};
        operand_idx(n->a[1], n->rank, idx, ii);
        const char *k = cu_elem(C, n->a[1], ii);
        for (int d = 0; d < n->a[0]->rank; d++)
            xi[d] = n->a[0]->unit[d] ? "0" : idx[d + n->rank - n->a[0]->rank];
        xi[n->axis] = cu_strf(C, "(long long)%s", k);
        return cu_elem(C, n->a[0], xi);
    }
    case CN_VIEW: {
        const char *ai[CU_MAXR];
        for (int d = 0; d < n->a[0]->rank; d++)
            ai[d] = "0";
        for (int d = 0; d < n->rank; d++)
            if (n->vdim[d] >= 0)
                ai[n->vdim[d]] = n->a[0]->unit[n->vdim[d]] ? "0" : idx[d];
        return cu_elem(C, n->a[0], ai);
    }
    case CN_OP: {
        int kind = cu_op_kind(n->op);
        akg_dtype opt =
            kind == 0 ? n->dt : common_dtype(n->a + (kind == 3), n->nargs - (kind == 3));
        const char *args[3];
        for (int i = 0; i < n->nargs; i++) {
            const char *ai[CU_MAXR];
            operand_idx(n->a[i], n->rank, idx, ai);
            args[i] = kind == 3 && i == 0 ? cu_elem(C, n->a[0], ai)
                                          : cu_elem_as(C, n->a[i], ai, kind == 3 ? n->dt : opt);
        }
        const char *v = cu_temp(C, "_e");
        cu_line(C, "const %s %s = %s;", ct, v,
                cu_op_apply(C, n->op, cu_comptype(kind == 3 ? n->dt : opt), args));
        return v;
    }
    }
    return "0";
}

/* ---- materialization ---- */

cu_node *cu_uniform(cu_ctx *C, cu_node *n, akg_dtype dt)
{
    const char *zeros[CU_MAXR] = {"0", "0", "0", "0", "0", "0", "0", "0"};
    const char *v = cu_temp(C, "_u");
    cu_node *tmp = n;
    const char *x = cu_elem_as(C, tmp, zeros, dt);
    cu_line(C, "%s %s = %s;", cu_comptype(dt), v, x);
    cu_node *r = cu_new_node(C, CN_SCAL, n->rank, dt);
    r->c = v;
    return r;
}

void cu_write_buf(cu_ctx *C, const cu_node *dst, const cu_node *n)
{
    cu_sync(C);
    const char *idx[CU_MAXR];
    cu_loop_begin(C, dst->rank, dst->ext, idx);
    const char *ni[CU_MAXR];
    operand_idx(n, dst->rank, idx, ni);
    const char *v = cu_elem_as(C, n, ni, dst->dt);
    const char *lin = NULL;
    for (int d = 0; d < dst->rank; d++)
        lin = lin ? cu_strf(C, "(%s) * (%s) + %s", lin, dst->ext[d], idx[d]) : idx[d];
    cu_line(C, "%s[%s] = AKG_CVT(%s, %s);", dst->c, lin ? lin : "0", cu_ctype(dst->dt), v);
    cu_loop_end(C);
    cu_sync(C);
}

/* A per-block buffer of shape like, dtype dt; fails when an extent has no host bound. */
cu_node *cu_new_buffer(cu_ctx *C, const cu_node *like, akg_dtype dt)
{
    cu_node *b = cu_new_node(C, CN_BUF, like->rank, dt);
    const char *elems = NULL;
    for (int d = 0; d < like->rank; d++) {
        b->ext[d] = like->ext[d];
        b->bnd[d] = like->bnd[d];
        b->unit[d] = like->unit[d];
        if (!like->bnd[d]) {
            cu_fail(C, NULL,
                    "a tile kept in memory needs an upper bound of its extent `%s` that the host "
                    "can compute (write it as min(CONST, ...) or of symbols)",
                    like->ext[d]);
            return b;
        }
        elems = elems ? cu_strf(C, "%s * %s", elems, like->bnd[d]) : like->bnd[d];
    }
    b->c = cu_scratch_new(C, cu_ctype(dt), elems ? cu_strf(C, "(long long)(%s)", elems) : "1LL");
    return b;
}

cu_node *cu_materialize(cu_ctx *C, cu_node *n, akg_dtype dt)
{
    if (cu_all_unit(n))
        return cu_uniform(C, n, dt);
    cu_node *b = cu_new_buffer(C, n, dt);
    if (!C->status)
        cu_write_buf(C, b, n);
    return b;
}

/* ---- values ---- */

static cu_node *lit_node(cu_ctx *C, const char *text, akg_dtype dt)
{
    cu_node *n = cu_new_node(C, CN_LIT, 0, dt);
    n->c = text;
    n->weak = true;
    return n;
}

/* The dtype named by a cast's or fill's dtype argument. */
static akg_dtype dtype_arg(const akg_sketch_expr *e)
{
    if (!e)
        return AKG_DTYPE_UNKNOWN;
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME ||
        akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_STRING)
        return akg_dtype_from_name(akg_sketch_expr_text(e));
    return AKG_DTYPE_UNKNOWN;
}

static cu_node *cast_node(cu_ctx *C, cu_node *x, akg_dtype dt)
{
    if (x->kind == CN_LIT) {
        cu_node *r = lit_node(C, lit_as(C, x->c, dt), dt);
        r->weak = false;
        r->rank = x->rank;
        for (int d = 0; d < x->rank; d++) {
            r->ext[d] = x->ext[d];
            r->bnd[d] = x->bnd[d];
            r->unit[d] = x->unit[d];
        }
        return r;
    }
    cu_node *r = cu_new_node(C, CN_CAST, 0, dt);
    r->a[0] = x;
    r->nargs = 1;
    r->rank = x->rank;
    for (int d = 0; d < x->rank; d++) {
        r->ext[d] = x->ext[d];
        r->bnd[d] = x->bnd[d];
        r->unit[d] = x->unit[d];
    }
    return r;
}

/* Axes of a reduction: mask[d] true when d is reduced. */
static bool reduce_axes(cu_ctx *C, const akg_sketch_expr *call, int rank, bool *mask)
{
    const akg_sketch_expr *ax = akg_sketch_expr_kwarg(call, "axis");
    if (!ax && akg_sketch_expr_item_count(call) > 1)
        ax = akg_sketch_expr_item(call, 1);
    for (int d = 0; d < rank; d++)
        mask[d] = !ax || akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_NONE;
    if (!ax || akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_NONE)
        return true;
    size_t n =
        akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_LIST ? akg_sketch_expr_item_count(ax) : 1;
    for (size_t i = 0; i < n; i++) {
        const akg_sketch_expr *a =
            akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_LIST ? akg_sketch_expr_item(ax, i) : ax;
        int64_t v;
        if (akg_sketch_expr_eval(C->sk, a, NULL, 0, &v) != 0) {
            cu_fail_expr(C, a, "a reduction's axis must be an integer constant");
            return false;
        }
        if (v < 0)
            v += rank;
        if (v < 0 || v >= rank) {
            cu_fail_expr(C, a, "axis %lld is out of range for a tile of rank %d", (long long)v,
                         rank);
            return false;
        }
        mask[v] = true;
    }
    return true;
}

/* A partial reduction (or any arg-reduction) of x over the dims mask into the per-block buffer
 * out (x's shape, reduced dims unit with keep or gone). The block's threads are groups of g
 * (akg_red_group, chosen at run time from the output and reduced counts), a group an output:
 * each thread folds a strided share of its output's reduced elements (flattened row-major),
 * then akg_group_reduce (akg_group_argreduce for (value, index) pairs) combines a group's
 * shares and its first thread writes the output. The outputs are taken AKG_NT / g at a time by
 * a loop every thread runs the same number of times (the group reduction's barriers are
 * reached by the whole block). When x's contiguous axis (its last non-unit one) is reduced, a
 * group is adjacent threads (a warp's lanes read adjacent elements); else adjacent threads
 * hold adjacent outputs. op: 0 sum, 1 max, 2 min, 3 prod; arg: 1 argmax, 2 argmin. */
static void reduce_groups(cu_ctx *C, const cu_node *x, const bool *mask, bool keep,
                          const cu_node *out, int op, int arg, bool mean, akg_dtype dt,
                          const char *ident)
{
    const char *ct = cu_comptype(dt);
    int inner_dim = -1;
    for (int d = 0; d < x->rank; d++)
        if (!x->unit[d])
            inner_dim = d;
    bool inner = inner_dim >= 0 && mask[inner_dim];
    const char *outs = total_of(C, out->rank, out->ext);
    const char *red = "1LL";
    for (int d = 0; d < x->rank; d++)
        if (mask[d])
            red = cu_strf(C, "%s * (%s)", red, x->ext[d]);
    cu_sync(C);
    cu_line(C, "{");
    C->indent++;
    const char *no = cu_temp(C, "_no"), *nr = cu_temp(C, "_nr"), *g = cu_temp(C, "_g"),
               *np = cu_temp(C, "_np");
    cu_line(C, "const long long %s = %s;", no, outs);
    cu_line(C, "const long long %s = (long long)(%s);", nr, red);
    cu_line(C, "const int %s = akg_red_group(%s, %s, %s);", g, no, nr, inner ? "true" : "false");
    cu_line(C, "const int %s = AKG_NT / %s;", np, g);
    const char *ob = cu_temp(C, "_ob");
    cu_line(C, "for (long long %s = 0; %s < %s; %s += %s) {", ob, ob, no, ob, np);
    C->indent++;
    const char *o = cu_temp(C, "_o"), *k0 = cu_temp(C, "_k");
    if (inner) {
        cu_line(C, "const long long %s = %s + (long long)(threadIdx.x / %s);", o, ob, g);
        cu_line(C, "const long long %s = (long long)(threadIdx.x %% %s);", k0, g);
    } else {
        cu_line(C, "const long long %s = %s + (long long)(threadIdx.x %% %s);", o, ob, np);
        cu_line(C, "const long long %s = (long long)(threadIdx.x / %s);", k0, np);
    }
    const char *acc = cu_temp(C, "_red");
    const char *ai = arg ? cu_temp(C, "_ri") : NULL;
    cu_line(C, "%s %s = %s;", ct, acc, ident);
    if (arg)
        cu_line(C, "int %s = 0x7fffffff;", ai);
    cu_line(C, "if (%s < %s) {", o, no);
    C->indent++;
    /* the output's index over out's dims, then x's index: kept dims from it, reduced dims
     * from the flattened reduced index kk */
    const char *oi[CU_MAXR];
    bool kept[CU_MAXR];
    for (int d = 0; d < out->rank; d++) {
        kept[d] = !out->unit[d];
        oi[d] = "0LL";
    }
    cu_unflatten(C, out->rank, out->ext, kept, o, true, oi);
    const char *kk = cu_temp(C, "_kk");
    cu_line(C, "for (long long %s = %s; %s < %s; %s += %s) {", kk, k0, kk, nr, kk, g);
    C->indent++;
    const char *xi[CU_MAXR] = {0};
    cu_unflatten(C, x->rank, x->ext, mask, kk, true, xi);
    int od = 0;
    for (int d = 0; d < x->rank; d++) {
        if (mask[d]) {
            if (keep)
                od++;
        } else {
            xi[d] = oi[od++];
        }
    }
    const char *v = cu_elem_as(C, x, xi, dt);
    if (arg)
        cu_line(C, "akg_argcomb<%s>(%s, %s, (%s)%s, (int)%s);", arg == 1 ? "true" : "false", acc,
                ai, ct, v, kk);
    else
        cu_line(C, "%s = akg_comb<%d>(%s, %s);", acc, op, acc, v);
    cu_loop_end(C);
    cu_loop_end(C);
    if (arg)
        cu_line(C, "akg_group_argreduce<%s>(%s, %s, %s, %s);", arg == 1 ? "true" : "false", acc, ai,
                g, inner ? "true" : "false");
    else
        cu_line(C, "%s = akg_group_reduce<%d>(%s, %s, %s);", acc, op, acc, g,
                inner ? "true" : "false");
    if (inner)
        cu_line(C, "if (%s < %s && (threadIdx.x & (%s - 1)) == 0) {", o, no, g);
    else
        cu_line(C, "if (%s < %s && (int)threadIdx.x < %s) {", o, no, np);
    C->indent++;
    if (arg)
        cu_line(C, "%s[%s] = %s;", out->c, o, ai);
    else {
        if (mean)
            cu_line(C, "%s = %s / (%s)(%s);", acc, acc, ct, red);
        cu_line(C, "%s[%s] = %s;", out->c, o, acc);
    }
    cu_loop_end(C);
    cu_loop_end(C); /* the outputs' loop */
    cu_loop_end(C); /* the block */
    C->synced = false;
    cu_sync(C);
}

static cu_node *reduce(cu_ctx *C, const akg_sketch_expr *call, const char *f)
{
    cu_node *x = cu_value(C, akg_sketch_expr_item(call, 0));
    if (C->status)
        return x;
    bool mask[CU_MAXR];
    if (!reduce_axes(C, call, x->rank, mask))
        return x;
    const akg_sketch_expr *kd = akg_sketch_expr_kwarg(call, "keepdim");
    bool keep = !kd || akg_sketch_expr_int(kd) != 0;
    int op = !strcmp(f, "reduce_max")    ? 1
             : !strcmp(f, "reduce_min")  ? 2
             : !strcmp(f, "reduce_prod") ? 3
                                         : 0;
    int arg = !strcmp(f, "argmin")                                    ? 2
              : (!strcmp(f, "argmax") || !strcmp(f, "reduce_argmax")) ? 1
                                                                      : 0;
    if (arg)
        op = arg;
    bool mean = !strcmp(f, "reduce_mean");
    akg_dtype dt = x->weak ? AKG_DTYPE_F32 : x->dt;
    if (dt == AKG_DTYPE_BOOL || dt == AKG_DTYPE_I8 || dt == AKG_DTYPE_I16 || dt == AKG_DTYPE_U8)
        dt = AKG_DTYPE_I32;
    if (mean && !cu_is_float(dt))
        dt = AKG_DTYPE_F32;
    const char *ct = cu_comptype(dt);
    const char *ident = op == 0   ? cu_strf(C, "(%s)0", ct)
                        : op == 3 ? cu_strf(C, "(%s)1", ct)
                        : op == 1 ? cu_strf(C, "akg_lowest<%s>()", ct)
                                  : cu_strf(C, "akg_highest<%s>()", ct);
    /* the result's shape: reduced dims become unit (keepdim) or go */
    cu_node shape;
    memset(&shape, 0, sizeof shape);
    const char *count = "1LL";
    bool full = true;
    for (int d = 0; d < x->rank; d++) {
        if (mask[d]) {
            count = cu_strf(C, "%s * (%s)", count, x->ext[d]);
            if (keep) {
                shape.ext[shape.rank] = "1";
                shape.bnd[shape.rank] = "1";
                shape.unit[shape.rank++] = true;
            }
        } else {
            if (!x->unit[d])
                full = false;
            shape.ext[shape.rank] = x->ext[d];
            shape.bnd[shape.rank] = x->bnd[d];
            shape.unit[shape.rank++] = x->unit[d];
        }
    }
    if (full && !arg) {
        /* every thread a strided share, then the block combines them */
        const char *acc = cu_temp(C, "_red");
        cu_line(C, "%s %s = %s;", ct, acc, ident);
        const char *idx[CU_MAXR];
        cu_loop_begin(C, x->rank, x->ext, idx);
        const char *v = cu_elem_as(C, x, idx, dt);
        cu_line(C, "%s = akg_comb<%d>(%s, %s);", acc, op, acc, v);
        cu_loop_end(C);
        cu_line(C, "%s = akg_block_reduce<%d>(%s, %s);", acc, op, acc, ident);
        C->synced = true;
        if (mean)
            cu_line(C, "%s = %s / (%s)(%s);", acc, acc, ct, count);
        cu_node *r = cu_new_node(C, CN_SCAL, shape.rank, dt);
        r->c = acc;
        return r;
    }
    /* a partial reduction (or an arg-reduction): groups of threads an output, into a per-block
     * buffer; a full arg-reduction is then read back as a uniform register */
    cu_node *out = cu_new_buffer(C, &shape, arg ? AKG_DTYPE_I32 : dt);
    if (C->status)
        return out;
    reduce_groups(C, x, mask, keep, out, op, arg, mean, dt, ident);
    if (full)
        return cu_uniform(C, out, AKG_DTYPE_I32);
    return out;
}

cu_node *cu_call_value(cu_ctx *C, const akg_sketch_expr *e, size_t n_items)
{
    const char *f = akg_sketch_expr_text(e);
    if (!strcmp(f, "gemm") || !strcmp(f, "dot"))
        return cu_gemm_value(C, e, n_items);
    if (!strncmp(f, "reduce_", 7) || !strcmp(f, "argmax") || !strcmp(f, "argmin"))
        return reduce(C, e, f);
    if (!strcmp(f, "cumsum") || !strcmp(f, "cumprod") || !strcmp(f, "local_cumsum") ||
        !strcmp(f, "local_cumprod"))
        return cu_scan_value(C, e, n_items, strstr(f, "cumprod") != NULL);
    if (!strcmp(f, "cast")) {
        cu_node *x = cu_value(C, akg_sketch_expr_item(e, 0));
        const akg_sketch_expr *d = akg_sketch_expr_item_count(e) > 1
                                       ? akg_sketch_expr_item(e, 1)
                                       : akg_sketch_expr_kwarg(e, "dtype");
        akg_dtype dt = dtype_arg(d);
        if (dt == AKG_DTYPE_UNKNOWN) {
            cu_fail_expr(C, e, "cast: the dtype is not a dtype name");
            return x;
        }
        return cast_node(C, x, dt);
    }
    if (!strcmp(f, "fill") || !strcmp(f, "zeros")) {
        const akg_sketch_expr *dims = akg_sketch_expr_item(e, 0);
        akg_dtype dt = dtype_arg(akg_sketch_expr_kwarg(e, "dtype"));
        if (dt == AKG_DTYPE_UNKNOWN)
            dt = AKG_DTYPE_F32;
        const char *val = "0";
        if (!strcmp(f, "fill")) {
            const akg_sketch_expr *v = akg_sketch_expr_item_count(e) > 1
                                           ? akg_sketch_expr_item(e, 1)
                                           : akg_sketch_expr_kwarg(e, "value");
            cu_node *vn = v ? cu_value(C, v) : lit_node(C, "0", dt);
            if (vn->rank && !cu_all_unit(vn)) {
                cu_fail_expr(C, e, "fill: the value must be a number or scalar");
                return vn;
            }
            const char *zeros[CU_MAXR] = {"0", "0", "0", "0", "0", "0", "0", "0"};
            val = cu_elem_as(C, vn, zeros, dt);
        }
        size_t r = akg_sketch_expr_get_kind(dims) == AKG_SKETCH_EXPR_LIST
                       ? akg_sketch_expr_item_count(dims)
                       : 0;
        cu_node *n = cu_new_node(C, CN_LIT, (int)r, dt);
        n->c = cu_strf(C, "(%s)(%s)", cu_comptype(dt), val);
        for (size_t d = 0; d < r; d++) {
            const akg_sketch_expr *de = akg_sketch_expr_item(dims, d);
            int64_t k;
            if (akg_sketch_expr_get_kind(de) == AKG_SKETCH_EXPR_INT &&
                (k = akg_sketch_expr_int(de)) == 1)
                continue;
            n->unit[d] = false;
            n->ext[d] = cu_is_index(C, de) ? cu_index(C, de) : "1";
            n->bnd[d] = cu_bound(C, de);
        }
        return n;
    }
    if (!strcmp(f, "arange")) {
        size_t k = akg_sketch_expr_item_count(e);
        const akg_sketch_expr *a = k > 1 ? akg_sketch_expr_item(e, 0) : NULL;
        const akg_sketch_expr *b = akg_sketch_expr_item(e, k > 1 ? 1 : 0);
        cu_node *n = cu_new_node(C, CN_ARANGE, 1, AKG_DTYPE_I32);
        const char *s = a ? cu_index(C, a) : "0LL";
        const char *st = cu_temp(C, "_a");
        cu_line(C, "const long long %s = %s;", st, s);
        n->c = st;
        n->ext[0] = cu_strf(C, "(%s - %s)", cu_index(C, b), st);
        const char *hb = cu_bound(C, b);
        n->bnd[0] =
            a ? (cu_host_known(C, a) && hb ? cu_strf(C, "(%s - %s)", hb, cu_index(C, a)) : NULL)
              : hb;
        n->unit[0] = false;
        return n;
    }
    if (!strcmp(f, "gather")) {
        cu_node *x = cu_value(C, akg_sketch_expr_item(e, 0));
        cu_node *ix = cu_value(C, akg_sketch_expr_item(e, 1));
        const akg_sketch_expr *ax = akg_sketch_expr_item_count(e) > 2
                                        ? akg_sketch_expr_item(e, 2)
                                        : akg_sketch_expr_kwarg(e, "axis");
        int64_t axis = 0;
        if (!ax || akg_sketch_expr_eval(C->sk, ax, NULL, 0, &axis) != 0) {
            cu_fail_expr(C, e, "gather: the axis must be an integer constant");
            return x;
        }
        if (axis < 0)
            axis += x->rank;
        if (ix->rank != x->rank || axis < 0 || axis >= x->rank) {
            cu_fail_expr(C, e, "gather: the index must have the rank of the tile");
            return x;
        }
        cu_node *n = cu_new_node(C, CN_GATHER, ix->rank, x->dt);
        for (int d = 0; d < ix->rank; d++) {
            n->ext[d] = ix->ext[d];
            n->bnd[d] = ix->bnd[d];
            n->unit[d] = ix->unit[d];
        }
        n->a[0] = x;
        n->a[1] = ix;
        n->nargs = 2;
        n->axis = (int)axis;
        return n;
    }
    const cu_op *op = cu_op_find(f);
    if (!op) {
        cu_fail_expr(C, e,
                     "`%s`: not lowered to CUDA C yet (elementwise operations, reductions, gemm, "
                     "dot, cast, fill, arange, gather, cumsum and cumprod are)",
                     f);
        return lit_node(C, "0", AKG_DTYPE_F32);
    }
    int n = cu_op_nargs(op);
    cu_node *args[3];
    for (int i = 0; i < n; i++) {
        const akg_sketch_expr *a = (size_t)i < n_items ? akg_sketch_expr_item(e, (size_t)i) : NULL;
        if (!a && (size_t)i < akg_sketch_expr_kwarg_count(e) + n_items && i >= (int)n_items)
            a = akg_sketch_expr_kwarg_value(e, (size_t)i - n_items);
        if (a)
            args[i] = cu_value(C, a);
        else if (cu_op_default(op, i))
            args[i] = lit_node(C, cu_op_default(op, i), AKG_DTYPE_F32);
        else {
            cu_fail_expr(C, e, "`%s` needs %d operands", f, n);
            return lit_node(C, "0", AKG_DTYPE_F32);
        }
    }
    return make_op(C, op, args, n, e);
}

static cu_node *name_value(cu_ctx *C, const akg_sketch_expr *e)
{
    const char *name = akg_sketch_expr_text(e);
    cu_bind *b = cu_lookup(C, name);
    if (!b) {
        cu_fail_expr(
            C, e,
            "`%s` is not defined here (a name assigned inside a loop or branch is read after it?)",
            name);
        return lit_node(C, "0", AKG_DTYPE_F32);
    }
    switch (b->kind) {
    case CB_INT: {
        cu_node *n = cu_new_node(C, CN_SCAL, 0, AKG_DTYPE_I64);
        n->c = b->c;
        n->weak = true;
        return n;
    }
    case CB_PARAM: {
        cu_node *n = cu_new_node(C, CN_SCAL, 0, b->dt);
        n->c = b->c;
        n->weak = true;
        return n;
    }
    case CB_VALUE:
        return b->node;
    case CB_MEM: {
        /* a host scratch tile (or tensor) read whole */
        cu_mem *m = b->mem;
        cu_node *n = cu_new_node(C, CN_LOAD, m->rank, m->dt);
        n->mem = m;
        for (int d = 0; d < m->rank; d++) {
            n->ext[d] = m->dim[d];
            n->bnd[d] = m->dim[d];
            n->unit[d] = !strcmp(m->dim[d], "1LL");
            n->start[d] = "0";
            n->step[d] = "1";
            n->tdim[d] = d;
        }
        n->epoch = C->epoch;
        return n;
    }
    case CB_ALLOC:
        cu_fail_expr(C, e, "`%s` is read before anything is loaded or computed into it", name);
        return lit_node(C, "0", AKG_DTYPE_F32);
    }
    return lit_node(C, "0", AKG_DTYPE_F32);
}

/* Whether the subscript e only inserts new axes: every index `None` or a whole slice `:`. */
static bool is_view(const akg_sketch_expr *e)
{
    size_t n = akg_sketch_expr_item_count(e);
    for (size_t i = 0; i < n; i++) {
        const akg_sketch_expr *it = akg_sketch_expr_item(e, i);
        akg_sketch_expr_kind k = akg_sketch_expr_get_kind(it);
        if (k == AKG_SKETCH_EXPR_NONE)
            continue;
        if (k != AKG_SKETCH_EXPR_SLICE || akg_sketch_slice_start(it) || akg_sketch_slice_stop(it) ||
            akg_sketch_slice_step(it))
            return false;
    }
    return n > 0;
}

/* t[None, :] / t[:, None] (NumPy's new axes): a view of t's value with unit dimensions where
 * the subscript says None; t's dimensions in order at the `:` and after the last index. */
static cu_node *view_value(cu_ctx *C, const akg_sketch_expr *e)
{
    cu_node *x = cu_value(C, akg_sketch_expr_base(e));
    if (C->status)
        return x;
    size_t n = akg_sketch_expr_item_count(e);
    int whole = 0, news = 0;
    for (size_t i = 0; i < n; i++)
        akg_sketch_expr_get_kind(akg_sketch_expr_item(e, i)) == AKG_SKETCH_EXPR_NONE ? news++
                                                                                     : whole++;
    if (whole > x->rank || x->rank + news > CU_MAXR) {
        cu_fail_expr(C, e, "`%s`: %d indices for a value of rank %d", cu_text(C, e), whole,
                     x->rank);
        return x;
    }
    cu_node *v = cu_new_node(C, CN_VIEW, x->rank + news, x->dt);
    v->weak = x->weak;
    v->a[0] = x;
    v->nargs = 1;
    v->epoch = x->epoch;
    int d = 0, s = 0;
    for (size_t i = 0; i < n; i++, d++) {
        if (akg_sketch_expr_get_kind(akg_sketch_expr_item(e, i)) == AKG_SKETCH_EXPR_NONE) {
            v->vdim[d] = -1; /* ext "1", unit: cu_new_node's */
            continue;
        }
        v->vdim[d] = s;
        v->ext[d] = x->ext[s];
        v->bnd[d] = x->bnd[s];
        v->unit[d] = x->unit[s];
        s++;
    }
    for (; s < x->rank; s++, d++) {
        v->vdim[d] = s;
        v->ext[d] = x->ext[s];
        v->bnd[d] = x->bnd[s];
        v->unit[d] = x->unit[s];
    }
    return v;
}

cu_node *cu_value(cu_ctx *C, const akg_sketch_expr *e)
{
    if (C->status)
        return lit_node(C, "0", AKG_DTYPE_F32);
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return lit_node(C, cu_strf(C, "%lldLL", (long long)akg_sketch_expr_int(e)), AKG_DTYPE_I64);
    case AKG_SKETCH_EXPR_FLOAT: {
        const char *t = akg_sketch_expr_text(e);
        double v = akg_sketch_expr_float(e);
        if (v != v)
            t = "NAN";
        else if (v > 1.7976931348623157e308)
            t = "INFINITY";
        else if (v < -1.7976931348623157e308)
            t = "(-INFINITY)";
        return lit_node(C, t, AKG_DTYPE_F32);
    }
    case AKG_SKETCH_EXPR_BOOL:
        return lit_node(C, akg_sketch_expr_int(e) ? "true" : "false", AKG_DTYPE_BOOL);
    case AKG_SKETCH_EXPR_NAME: {
        const char *t = akg_sketch_expr_text(e);
        if (!strcmp(t, "inf") || !strcmp(t, "float_inf"))
            return lit_node(C, "INFINITY", AKG_DTYPE_F32);
        return name_value(C, e);
    }
    case AKG_SKETCH_EXPR_UNARY: {
        const char *op = akg_sketch_expr_text(e);
        cu_node *x = cu_value(C, akg_sketch_expr_lhs(e));
        if (!strcmp(op, "+"))
            return x;
        if (!strcmp(op, "-") && x->kind == CN_LIT)
            return lit_node(C, cu_strf(C, "(-%s)", x->c), x->dt);
        cu_node *a[3] = {x, NULL, NULL};
        return make_op(C,
                       cu_op_find(!strcmp(op, "-")   ? "neg"
                                  : !strcmp(op, "~") ? "invert"
                                                     : "logical_not"),
                       a, 1, e);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        static const struct {
            const char *sym, *op;
        } map[] = {{"+", "add"},         {"-", "sub"},
                   {"*", "mul"},         {"/", "div"},
                   {"//", "floordiv"},   {"%", "mod"},
                   {"**", "pow"},        {"<", "lt"},
                   {"<=", "le"},         {">", "gt"},
                   {">=", "ge"},         {"==", "eq"},
                   {"!=", "ne"},         {"and", "logical_and"},
                   {"or", "logical_or"}, {"&", "bitand"},
                   {"|", "bitor"},       {"^", "bitxor"}};
        const char *sym = akg_sketch_expr_text(e);
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (!strcmp(map[i].sym, sym)) {
                cu_node *a[3] = {cu_value(C, akg_sketch_expr_lhs(e)),
                                 cu_value(C, akg_sketch_expr_rhs(e)), NULL};
                return make_op(C, cu_op_find(map[i].op), a, 2, e);
            }
        cu_fail_expr(C, e, "the operator `%s` is not lowered to CUDA C", sym);
        return lit_node(C, "0", AKG_DTYPE_F32);
    }
    case AKG_SKETCH_EXPR_CALL:
        return cu_call_value(C, e, akg_sketch_expr_item_count(e));
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        if (is_view(e))
            return view_value(C, e);
        /* fall through */
    default:
        cu_fail_expr(C, e,
                     "`%s`: subscripts other than new axes (t[None, :]), slices and lists are "
                     "not values in CUDA C (load a region into a tile)",
                     cu_text(C, e));
        return lit_node(C, "0", AKG_DTYPE_F32);
    }
}
