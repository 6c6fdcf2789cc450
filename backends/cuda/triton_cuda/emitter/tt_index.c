/*
 * tt_index.c: integer index expressions (floor `//` and `%`, ceil, min, max)
 * as Python on the host or inside a kernel (there in the launch's index type,
 * AKG_IDX: see tt_plan.c), and the padded extents of tile dimensions.
 *
 * Triton blocks need power-of-two compile-time shapes, while a sketch's tile
 * extents may be symbolic (`[D]`), ragged (`[min(BLK, D - q)]`) or depend on
 * program ids (`[hi - lo]` with `lo = p * ceil(D, P)`). Each dimension gets
 * a pad: the next power of two of an upper bound of its extent that the host
 * can compute before the launch (an expression of symbols, constexprs and host
 * integers), passed as a tl.constexpr; the extent itself masks the block. The
 * bound is found by writing the extent as the minimum of linear forms
 * (`min(a, b) - c` = `min(a - c, b - c)`), cancelling the kernel's own
 * variables inside each form (`hi - lo` gives `ceil(D, P)`), and bounding what
 * remains by the loop ranges; a constant candidate is preferred (`min(BLK, ...)`
 * pads to BLK, one compilation for every shape).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

static const char *op_text(const akg_sketch_expr *e)
{
    return akg_sketch_expr_text(e);
}

static bool is_call(const akg_sketch_expr *e, const char *name)
{
    return akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL &&
           !strcmp(akg_sketch_expr_text(e), name) && akg_sketch_expr_item_count(e) == 2;
}

bool tt_const_value(tt_ctx *C, const akg_sketch_expr *e, int64_t *out)
{
    if (!e)
        return false;
    /* a name in scope (a loop variable, a scalar) is never a constexpr, whatever its spelling */
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME) {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (n && n->kind != TN_CONST && n->kind != TN_SYMBOL)
            return false;
    }
    tt_names r = {0};
    tt_expr_reads(C, e, &r);
    for (size_t i = 0; i < r.n; i++) {
        tt_name *n = tt_lookup(C, r.v[i]);
        if (n && n->kind != TN_CONST && n->kind != TN_SYMBOL)
            return false;
    }
    return akg_sketch_expr_eval(C->sk, e, C->consts, C->n_consts, out) == 0;
}

bool tt_is_index(tt_ctx *C, const akg_sketch_expr *e)
{
    if (!e)
        return false;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (!n)
            return false;
        switch (n->kind) {
        case TN_SYMBOL:
        case TN_HOSTINT:
        case TN_KINT:
        case TN_KLOOP:
            return true;
        case TN_CONST:
            return n->dt != AKG_DTYPE_F64;
        default:
            return false;
        }
    }
    case AKG_SKETCH_EXPR_UNARY:
        return tt_is_index(C, akg_sketch_expr_lhs(e));
    case AKG_SKETCH_EXPR_BINARY:
        if (!strcmp(op_text(e), "/"))
            return false;
        return tt_is_index(C, akg_sketch_expr_lhs(e)) && tt_is_index(C, akg_sketch_expr_rhs(e));
    case AKG_SKETCH_EXPR_CALL:
        if (!is_call(e, "min") && !is_call(e, "max") && !is_call(e, "ceil"))
            return false;
        return tt_is_index(C, akg_sketch_expr_item(e, 0)) &&
               tt_is_index(C, akg_sketch_expr_item(e, 1));
    default:
        return false;
    }
}

bool tt_host_known(tt_ctx *C, const akg_sketch_expr *e)
{
    tt_names r = {0};
    tt_expr_reads(C, e, &r);
    for (size_t i = 0; i < r.n; i++) {
        tt_name *n = tt_lookup(C, r.v[i]);
        if (!n || (n->kind != TN_SYMBOL && n->kind != TN_CONST && n->kind != TN_HOSTINT))
            return false;
    }
    return tt_is_index(C, e);
}

bool tt_nonneg(tt_ctx *C, const akg_sketch_expr *e)
{
    int64_t v;
    if (!e)
        return true;
    if (tt_const_value(C, e, &v))
        return v >= 0;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME: {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (!n)
            return false;
        if (n->kind == TN_SYMBOL)
            return true; /* sizes */
        if (n->kind == TN_KLOOP || (n->kind == TN_HOSTINT && n->stop))
            return tt_nonneg(C, n->start);
        if (n->kind == TN_KINT || n->kind == TN_HOSTINT)
            return n->def && tt_nonneg(C, n->def);
        return false;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = op_text(e);
        if (!strcmp(op, "+") || !strcmp(op, "*") || !strcmp(op, "//") || !strcmp(op, "%"))
            return tt_nonneg(C, akg_sketch_expr_lhs(e)) && tt_nonneg(C, akg_sketch_expr_rhs(e));
        return false;
    }
    case AKG_SKETCH_EXPR_CALL:
        if (is_call(e, "max"))
            return tt_nonneg(C, akg_sketch_expr_item(e, 0)) ||
                   tt_nonneg(C, akg_sketch_expr_item(e, 1));
        if (is_call(e, "min") || is_call(e, "ceil"))
            return tt_nonneg(C, akg_sketch_expr_item(e, 0)) &&
                   tt_nonneg(C, akg_sketch_expr_item(e, 1));
        return false;
    default:
        return false;
    }
}

const char *tt_index(tt_ctx *C, const akg_sketch_expr *e, bool host)
{
    int64_t v;
    if (!e)
        return "0";
    if (akg_sketch_expr_get_kind(e) != AKG_SKETCH_EXPR_BOOL && tt_const_value(C, e, &v))
        return tt_strf(C, "%lld", (long long)v);
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return tt_strf(C, "%lld", (long long)akg_sketch_expr_int(e));
    case AKG_SKETCH_EXPR_BOOL:
        return akg_sketch_expr_int(e) ? "True" : "False";
    case AKG_SKETCH_EXPR_NAME: {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (!n) {
            tt_fail_expr(C, e, "'%s' is not an integer known here", akg_sketch_expr_text(e));
            return "0";
        }
        return n->py;
    }
    case AKG_SKETCH_EXPR_UNARY: {
        const char *a = tt_index(C, akg_sketch_expr_lhs(e), host);
        const char *op = op_text(e);
        if (!strcmp(op, "not"))
            return host ? tt_strf(C, "(not %s)", a) : tt_strf(C, "(%s == 0)", a);
        return tt_strf(C, "(%s%s)", op, a);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const akg_sketch_expr *l = akg_sketch_expr_lhs(e), *r = akg_sketch_expr_rhs(e);
        const char *a = tt_index(C, l, host), *b = tt_index(C, r, host);
        const char *op = op_text(e);
        if (!strcmp(op, "and") || !strcmp(op, "or")) {
            if (host)
                return tt_strf(C, "(%s %s %s)", a, op, b);
            return tt_strf(C, "((%s) %s (%s))", a, !strcmp(op, "and") ? "&" : "|", b);
        }
        if (!strcmp(op, "//") || !strcmp(op, "%")) {
            if (host || (tt_nonneg(C, l) && tt_nonneg(C, r)))
                return tt_strf(C, "(%s %s %s)", a, op, b);
            return tt_strf(C, "%s(%s, %s)", !strcmp(op, "//") ? "_akg_fdiv" : "_akg_fmod", a, b);
        }
        return tt_strf(C, "(%s %s %s)", a, op, b);
    }
    case AKG_SKETCH_EXPR_CALL: {
        const akg_sketch_expr *l = akg_sketch_expr_item(e, 0), *r = akg_sketch_expr_item(e, 1);
        const char *a = tt_index(C, l, host), *b = tt_index(C, r, host);
        if (is_call(e, "min") || is_call(e, "max")) {
            bool mn = is_call(e, "min");
            if (host)
                return tt_strf(C, "%s(%s, %s)", mn ? "min" : "max", a, b);
            return tt_strf(C, "tl.%s(%s, %s)", mn ? "minimum" : "maximum", a, b);
        }
        if (is_call(e, "ceil")) {
            if (host)
                return tt_strf(C, "_akg_cdiv(%s, %s)", a, b);
            if (tt_nonneg(C, l) && tt_nonneg(C, r))
                return tt_strf(C, "((%s + %s - 1) // %s)", a, b, b);
            return tt_strf(C, "(-_akg_fdiv(-(%s), %s))", a, b);
        }
        break;
    }
    default:
        break;
    }
    tt_fail_expr(C, e, "'%s' is not an integer index expression", tt_expr_text(C, e));
    return "0";
}

/* ---- upper bounds ---- */

#define LIN_TERMS 12
#define MIN_FORMS 8

typedef struct {
    int n;
    const char *key[LIN_TERMS];
    const akg_sketch_expr *atom[LIN_TERMS];
    int64_t coef[LIN_TERMS];
    int64_t c;
} lin;

typedef struct {
    int n; /* 0: not representable */
    lin f[MIN_FORMS];
} minlin;

static bool lin_add_term(lin *l, const char *key, const akg_sketch_expr *atom, int64_t coef)
{
    for (int i = 0; i < l->n; i++)
        if (!strcmp(l->key[i], key)) {
            l->coef[i] += coef;
            return true;
        }
    if (l->n == LIN_TERMS)
        return false;
    l->key[l->n] = key;
    l->atom[l->n] = atom;
    l->coef[l->n] = coef;
    l->n++;
    return true;
}

static bool lin_axpy(lin *dst, const lin *src, int64_t k)
{
    dst->c += k * src->c;
    for (int i = 0; i < src->n; i++)
        if (!lin_add_term(dst, src->key[i], src->atom[i], k * src->coef[i]))
            return false;
    return true;
}

static minlin ml_atom(tt_ctx *C, const akg_sketch_expr *e)
{
    minlin m = {0};
    m.n = 1;
    const char *key = akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(e)
                                                                          : tt_expr_text(C, e);
    lin_add_term(&m.f[0], key, e, 1);
    return m;
}

static minlin ml_of(tt_ctx *C, const akg_sketch_expr *e, int depth)
{
    minlin m = {0};
    int64_t v;
    if (depth > 32)
        return m;
    if (tt_const_value(C, e, &v)) {
        m.n = 1;
        m.f[0].c = v;
        return m;
    }
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME: {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (n && n->kind == TN_KINT && n->def) {
            minlin d = ml_of(C, n->def, depth + 1);
            /* a plain product stays a name, so that `hi - lo` cancels `lo` on both sides */
            if (d.n && !(d.n == 1 && d.f[0].n == 1 && d.f[0].c == 0 && d.f[0].coef[0] == 1 &&
                         akg_sketch_expr_get_kind(d.f[0].atom[0]) != AKG_SKETCH_EXPR_NAME))
                return d;
        }
        return ml_atom(C, e);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = op_text(e);
        const akg_sketch_expr *l = akg_sketch_expr_lhs(e), *r = akg_sketch_expr_rhs(e);
        if (!strcmp(op, "+") || !strcmp(op, "-")) {
            minlin a = ml_of(C, l, depth + 1), b = ml_of(C, r, depth + 1);
            if (!a.n || !b.n)
                return ml_atom(C, e);
            int64_t sign = !strcmp(op, "+") ? 1 : -1;
            if (sign < 0 && b.n > 1)
                b = ml_atom(C, r); /* a minimum subtracted: bounded as a whole */
            if (a.n * b.n > MIN_FORMS)
                return ml_atom(C, e);
            for (int i = 0; i < a.n; i++)
                for (int j = 0; j < b.n; j++) {
                    lin f = a.f[i];
                    if (!lin_axpy(&f, &b.f[j], sign))
                        return ml_atom(C, e);
                    m.f[m.n++] = f;
                }
            return m;
        }
        if (!strcmp(op, "*")) {
            int64_t k;
            const akg_sketch_expr *other = NULL;
            if (tt_const_value(C, l, &k))
                other = r;
            else if (tt_const_value(C, r, &k))
                other = l;
            if (other && k >= 0) {
                minlin a = ml_of(C, other, depth + 1);
                if (!a.n)
                    return ml_atom(C, e);
                for (int i = 0; i < a.n; i++) {
                    lin f = {0};
                    lin_axpy(&f, &a.f[i], k);
                    m.f[m.n++] = f;
                }
                return m;
            }
        }
        return ml_atom(C, e);
    }
    case AKG_SKETCH_EXPR_CALL:
        if (is_call(e, "min")) {
            minlin a = ml_of(C, akg_sketch_expr_item(e, 0), depth + 1);
            minlin b = ml_of(C, akg_sketch_expr_item(e, 1), depth + 1);
            if (!a.n || !b.n || a.n + b.n > MIN_FORMS)
                return ml_atom(C, e);
            m = a;
            for (int j = 0; j < b.n; j++)
                m.f[m.n++] = b.f[j];
            return m;
        }
        return ml_atom(C, e);
    default:
        return ml_atom(C, e);
    }
}

static const char *ub_expr(tt_ctx *C, const akg_sketch_expr *e, int depth);

/* A lower bound on the host, or NULL. */
static const char *lb_expr(tt_ctx *C, const akg_sketch_expr *e, int depth)
{
    if (!e)
        return "0";
    if (depth > 32)
        return NULL;
    if (tt_host_known(C, e))
        return tt_index(C, e, true);
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME) {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (n && (n->kind == TN_KLOOP))
            return lb_expr(C, n->start, depth + 1);
        if (n && n->kind == TN_KINT && n->def)
            return lb_expr(C, n->def, depth + 1);
    }
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_BINARY) {
        const char *op = op_text(e);
        const akg_sketch_expr *l = akg_sketch_expr_lhs(e), *r = akg_sketch_expr_rhs(e);
        if (!strcmp(op, "+")) {
            const char *a = lb_expr(C, l, depth + 1), *b = lb_expr(C, r, depth + 1);
            if (a && b)
                return tt_strf(C, "(%s + %s)", a, b);
        }
        if (!strcmp(op, "-")) {
            const char *a = lb_expr(C, l, depth + 1), *b = ub_expr(C, r, depth + 1);
            if (a && b)
                return tt_strf(C, "(%s - %s)", a, b);
        }
    }
    if (tt_nonneg(C, e))
        return "0";
    return NULL;
}

/* An upper bound of one atom of a linear form, or NULL. */
static const char *ub_atom(tt_ctx *C, const akg_sketch_expr *e, int depth)
{
    if (tt_host_known(C, e))
        return tt_index(C, e, true);
    if (depth > 32)
        return NULL;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME: {
        tt_name *n = tt_lookup(C, akg_sketch_expr_text(e));
        if (n && n->kind == TN_KLOOP) {
            const char *s = ub_expr(C, n->stop, depth + 1);
            return s ? tt_strf(C, "(%s - 1)", s) : NULL;
        }
        if (n && n->kind == TN_KINT && n->def)
            return ub_expr(C, n->def, depth + 1);
        return NULL;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = op_text(e);
        const akg_sketch_expr *l = akg_sketch_expr_lhs(e), *r = akg_sketch_expr_rhs(e);
        if (!strcmp(op, "*") && tt_nonneg(C, l) && tt_nonneg(C, r)) {
            const char *a = ub_expr(C, l, depth + 1), *b = ub_expr(C, r, depth + 1);
            return a && b ? tt_strf(C, "(%s * %s)", a, b) : NULL;
        }
        if (!strcmp(op, "//") && tt_host_known(C, r) && tt_nonneg(C, l)) {
            const char *a = ub_expr(C, l, depth + 1);
            return a ? tt_strf(C, "(%s // max(1, %s))", a, tt_index(C, r, true)) : NULL;
        }
        if (!strcmp(op, "%") && tt_host_known(C, r) && tt_nonneg(C, l))
            return tt_strf(C, "(%s - 1)", tt_index(C, r, true));
        return NULL;
    }
    case AKG_SKETCH_EXPR_CALL:
        if (is_call(e, "ceil") && tt_host_known(C, akg_sketch_expr_item(e, 1))) {
            const char *a = ub_expr(C, akg_sketch_expr_item(e, 0), depth + 1);
            return a ? tt_strf(C, "_akg_cdiv(%s, %s)", a,
                               tt_index(C, akg_sketch_expr_item(e, 1), true))
                     : NULL;
        }
        if (is_call(e, "max")) {
            const char *a = ub_expr(C, akg_sketch_expr_item(e, 0), depth + 1);
            const char *b = ub_expr(C, akg_sketch_expr_item(e, 1), depth + 1);
            return a && b ? tt_strf(C, "max(%s, %s)", a, b) : NULL;
        }
        return NULL;
    default:
        return NULL;
    }
}

static const char *ub_lin(tt_ctx *C, const lin *f, int depth, bool *is_const, int64_t *k)
{
    const char *s = NULL;
    *is_const = true;
    for (int i = 0; i < f->n; i++) {
        if (!f->coef[i])
            continue;
        *is_const = false;
        const char *b =
            f->coef[i] > 0 ? ub_atom(C, f->atom[i], depth + 1) : lb_expr(C, f->atom[i], depth + 1);
        if (!b)
            return NULL;
        const char *term = f->coef[i] == 1    ? b
                           : f->coef[i] == -1 ? tt_strf(C, "-%s", b)
                                              : tt_strf(C, "%lld * %s", (long long)f->coef[i], b);
        s = s ? tt_strf(C, "%s + %s", s, term) : term;
    }
    *k = f->c;
    if (*is_const)
        return tt_strf(C, "%lld", (long long)f->c);
    if (f->c)
        s = tt_strf(C, "%s + %lld", s, (long long)f->c);
    return tt_strf(C, "(%s)", s);
}

static const char *ub_minlin(tt_ctx *C, const minlin *mp, int depth);

static const char *ub_expr(tt_ctx *C, const akg_sketch_expr *e, int depth)
{
    if (!e || depth > 32)
        return NULL;
    if (tt_host_known(C, e))
        return tt_index(C, e, true);
    minlin m = ml_of(C, e, depth + 1);
    return ub_minlin(C, &m, depth);
}

static const char *ub_minlin(tt_ctx *C, const minlin *mp, int depth)
{
    minlin m = *mp;
    if (!m.n)
        return NULL;
    bool have_const = false;
    int64_t best = 0;
    const char *acc = NULL;
    for (int i = 0; i < m.n; i++) {
        bool is_const;
        int64_t k;
        const char *s = ub_lin(C, &m.f[i], depth, &is_const, &k);
        if (is_const) {
            if (!have_const || k < best)
                best = k;
            have_const = true;
        } else if (s) {
            acc = acc ? tt_strf(C, "min(%s, %s)", acc, s) : s;
        }
    }
    if (have_const)
        return tt_strf(C, "%lld", (long long)best);
    return acc;
}

const char *tt_pad_for_host(tt_ctx *C, const char *host)
{
    for (size_t i = 0; i < C->n_pads; i++)
        if (!strcmp(C->pads[i].host, host))
            return C->pads[i].name;
    if (C->n_pads == TT_MAX_PADS) {
        tt_fail(C, NULL, "more than %d symbolic tile extents in one kernel", TT_MAX_PADS);
        return "1";
    }
    tt_pad *p = &C->pads[C->n_pads];
    p->name = tt_strf(C, "PB%zu", C->n_pads);
    p->host = host;
    C->n_pads++;
    return p->name;
}

static int64_t next_pow2(int64_t v)
{
    int64_t p = 1;
    while (p < v && p < ((int64_t)1 << 40))
        p <<= 1;
    return p;
}

/* A constant padded extent within the target's limit (none for cuda/triton_cuda). */
static bool pad_within_limit(tt_ctx *C, int64_t p, const akg_sketch_expr *at)
{
    long limit = C->target->const_pad_limit;
    if (!limit || p <= limit)
        return true;
    tt_fail_expr(C, at,
                 "tile extent '%s' pads to a block of %lld elements, above %s block limit "
                 "(%ld): tile it in the sketch (a loop over smaller tiles)",
                 tt_expr_text(C, at), (long long)p, C->target->block_owner, limit);
    return false;
}

bool tt_dim(tt_ctx *C, const akg_sketch_expr *e, const char **pad, const char **ext)
{
    int64_t v;
    if (tt_const_value(C, e, &v)) {
        int64_t p = next_pow2(v < 1 ? 1 : v);
        if (!pad_within_limit(C, p, e))
            return false;
        *pad = tt_strf(C, "%lld", (long long)p);
        *ext = v == p ? NULL : tt_strf(C, "%lld", (long long)(v < 0 ? 0 : v));
        return true;
    }
    if (!tt_is_index(C, e)) {
        tt_fail_expr(C, e, "tile extent '%s' is not an integer expression", tt_expr_text(C, e));
        return false;
    }
    *ext = tt_index(C, e, false);
    const char *h = ub_expr(C, e, 0);
    if (!h) {
        tt_fail_expr(C, e,
                     "tile extent '%s': no upper bound computable before the launch (Triton "
                     "blocks need a power-of-two extent known at compile time)",
                     tt_expr_text(C, e));
        return false;
    }
    char *end;
    long long k = strtoll(h, &end, 10);
    if (*h && !*end) {
        if (!pad_within_limit(C, next_pow2(k < 1 ? 1 : k), e))
            return false;
        *pad = tt_strf(C, "%lld", (long long)next_pow2(k < 1 ? 1 : k));
        return true;
    }
    *pad = tt_pad_for_host(C, h);
    return true;
}

bool tt_dim_range(tt_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                  const char **pad, const char **ext)
{
    int64_t a, b;
    if (!start || (tt_const_value(C, start, &a) && a == 0))
        return tt_dim(C, stop, pad, ext);
    if (tt_const_value(C, start, &a) && tt_const_value(C, stop, &b)) {
        int64_t v = b - a, p = next_pow2(v < 1 ? 1 : v);
        if (!pad_within_limit(C, p, stop))
            return false;
        *pad = tt_strf(C, "%lld", (long long)p);
        *ext = v == p ? NULL : tt_strf(C, "%lld", (long long)(v < 0 ? 0 : v));
        return true;
    }
    *ext = tt_strf(C, "(%s - %s)", tt_index(C, stop, false), tt_index(C, start, false));
    minlin hi = ml_of(C, stop, 0), lo = ml_of(C, start, 0), m = {0};
    if (lo.n > 1)
        lo = ml_atom(C, start);
    if (hi.n && lo.n == 1)
        for (int i = 0; i < hi.n; i++) {
            lin f = hi.f[i];
            if (!lin_axpy(&f, &lo.f[0], -1)) {
                m.n = 0;
                break;
            }
            m.f[m.n++] = f;
        }
    const char *h = ub_minlin(C, &m, 0);
    if (!h) {
        tt_fail_expr(C, stop, "the extent %s - %s has no upper bound computable before the launch",
                     tt_expr_text(C, stop), tt_expr_text(C, start));
        return false;
    }
    char *end;
    long long k = strtoll(h, &end, 10);
    if (*h && !*end) {
        if (!pad_within_limit(C, next_pow2(k < 1 ? 1 : k), stop))
            return false;
        *pad = tt_strf(C, "%lld", (long long)next_pow2(k < 1 ? 1 : k));
        return true;
    }
    *pad = tt_pad_for_host(C, h);
    return true;
}

bool tt_range_const(tt_ctx *C, const akg_sketch_expr *start, const akg_sketch_expr *stop,
                    int64_t *k)
{
    int64_t a = 0, b;
    if ((!start || tt_const_value(C, start, &a)) && tt_const_value(C, stop, &b)) {
        *k = b - a;
        return true;
    }
    if (!start)
        return false;
    minlin hi = ml_of(C, stop, 0), lo = ml_of(C, start, 0);
    if (hi.n != 1 || lo.n != 1)
        return false;
    lin f = hi.f[0];
    if (!lin_axpy(&f, &lo.f[0], -1))
        return false;
    for (int i = 0; i < f.n; i++)
        if (f.coef[i])
            return false;
    *k = f.c;
    return true;
}
