/*
 * lw_index.c: integer (index) expressions of a sketch as C++ text.
 *
 * Index arithmetic is on 64-bit integers with Python's floor `//` and `%`
 * (the language reference). Operands that are known non-negative (sizes,
 * loop variables of ranges that start at 0 or more, constants) use C++'s own
 * division; others go through akg_fdiv/akg_fmod of the prelude. Constants
 * fold, so tile shapes written with constexprs are known at compile time.
 * Differences fold too when the two sides are the same linear form up to a
 * constant (`M - 1:M` is one element whatever M is).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

static bool fold(const char *op, int64_t a, int64_t b, int64_t *out)
{
    if (!strcmp(op, "+"))
        return !__builtin_add_overflow(a, b, out);
    if (!strcmp(op, "-"))
        return !__builtin_sub_overflow(a, b, out);
    if (!strcmp(op, "*"))
        return !__builtin_mul_overflow(a, b, out);
    if (!strcmp(op, "//") || !strcmp(op, "%")) {
        if (b == 0 || (a == INT64_MIN && b == -1))
            return false;
        int64_t q = a / b, r = a % b;
        if (r != 0 && ((r < 0) != (b < 0))) {
            q -= 1;
            r += b;
        }
        *out = !strcmp(op, "//") ? q : r;
        return true;
    }
    if (!strcmp(op, "**")) {
        if (b < 0 || b > 62)
            return false;
        int64_t r = 1;
        for (int64_t i = 0; i < b; i++)
            if (__builtin_mul_overflow(r, a, &r))
                return false;
        *out = r;
        return true;
    }
    if (!strcmp(op, "<<")) {
        if (b < 0 || b > 62)
            return false;
        *out = a << b;
        return true;
    }
    if (!strcmp(op, ">>")) {
        if (b < 0 || b > 63)
            return false;
        *out = a >> b;
        return true;
    }
    if (!strcmp(op, "&")) { *out = a & b; return true; }
    if (!strcmp(op, "|")) { *out = a | b; return true; }
    if (!strcmp(op, "^")) { *out = a ^ b; return true; }
    if (!strcmp(op, "<")) { *out = a < b; return true; }
    if (!strcmp(op, "<=")) { *out = a <= b; return true; }
    if (!strcmp(op, ">")) { *out = a > b; return true; }
    if (!strcmp(op, ">=")) { *out = a >= b; return true; }
    if (!strcmp(op, "==")) { *out = a == b; return true; }
    if (!strcmp(op, "!=")) { *out = a != b; return true; }
    if (!strcmp(op, "and")) { *out = a && b; return true; }
    if (!strcmp(op, "or")) { *out = a || b; return true; }
    return false;
}

static const char *c_op(const char *op)
{
    if (!strcmp(op, "and"))
        return "&&";
    if (!strcmp(op, "or"))
        return "||";
    return op;
}

static const char *const_name(lw_ctx *L, const char *name, bool *known, int64_t *k);

bool lw_index_nonneg(lw_ctx *L, const akg_sketch_expr *e)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return akg_sketch_expr_int(e) >= 0;
    case AKG_SKETCH_EXPR_BOOL:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        lw_val *v = lw_lookup(L, akg_sketch_expr_text(e));
        if (v)
            return v->kind == LV_SCALAR && v->nonneg;
        bool known = false;
        int64_t k = 0;
        return const_name(L, akg_sketch_expr_text(e), &known, &k) && known && k >= 0;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "+") || !strcmp(op, "*") || !strcmp(op, "//") || !strcmp(op, "%") ||
            !strcmp(op, "**"))
            return lw_index_nonneg(L, akg_sketch_expr_lhs(e)) &&
                   lw_index_nonneg(L, akg_sketch_expr_rhs(e));
        return false;
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        size_t n = akg_sketch_expr_item_count(e);
        if (!strcmp(f, "min") || !strcmp(f, "ceil") || !strcmp(f, "floor_div")) {
            for (size_t i = 0; i < n; i++)
                if (!lw_index_nonneg(L, akg_sketch_expr_item(e, i)))
                    return false;
            return n > 0;
        }
        if (!strcmp(f, "max")) {
            for (size_t i = 0; i < n; i++)
                if (lw_index_nonneg(L, akg_sketch_expr_item(e, i)))
                    return true;
            return false;
        }
        return false;
    }
    default:
        return false;
    }
}

static const char *const_name(lw_ctx *L, const char *name, bool *known, int64_t *k)
{
    const akg_sketch *sk = L->sk;
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        if (strcmp(akg_sketch_const_name(sk, i), name) != 0)
            continue;
        int64_t v;
        if (akg_sketch_const_int(sk, i, &v) != 0)
            return NULL;
        *known = true;
        *k = v;
        return lw_strf(L, "C_%s", name);
    }
    return NULL;
}

const char *lw_index(lw_ctx *L, const akg_sketch_expr *e, bool *known, int64_t *k)
{
    bool kn = false;
    int64_t kv = 0;
    const char *r = NULL;
    if (!known)
        known = &kn;
    if (!k)
        k = &kv;
    *known = false;
    if (!e || !lw_ok(L))
        return "0";
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        *known = true;
        *k = akg_sketch_expr_int(e);
        return lw_strf(L, "%lld", (long long)*k);
    case AKG_SKETCH_EXPR_NAME: {
        const char *name = akg_sketch_expr_text(e);
        lw_val *v = lw_lookup(L, name);
        if (v) {
            if (v->kind != LV_SCALAR) {
                lw_fail(L, "'%s' is a tile; index expressions take integers", name);
                return "0";
            }
            if (lw_is_float(v->dt)) {
                lw_fail(L, "'%s' is a %s scalar; index expressions take integers", name,
                        akg_dtype_name(v->dt));
                return "0";
            }
            if (v->loopvar)
                L->saw_loopvar = true;
            char *end = NULL;
            long long lit = strtoll(v->c, &end, 10);
            if (end && end != v->c && *end == '\0') { /* a symbol refined to a constant */
                *known = true;
                *k = lit;
            }
            return v->c;
        }
        r = const_name(L, name, known, k);
        if (r)
            return r;
        lw_fail(L, "'%s' is not an integer the kernel knows here", name);
        return "0";
    }
    case AKG_SKETCH_EXPR_UNARY: {
        bool ak;
        int64_t av;
        const char *a = lw_index(L, akg_sketch_expr_lhs(e), &ak, &av);
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "+")) {
            *known = ak;
            *k = av;
            return a;
        }
        if (!strcmp(op, "-")) {
            if (ak && av != INT64_MIN) {
                *known = true;
                *k = -av;
                return lw_strf(L, "%lld", (long long)*k);
            }
            return lw_strf(L, "(-%s)", a);
        }
        if (!strcmp(op, "not")) {
            if (ak) {
                *known = true;
                *k = !av;
            }
            return lw_strf(L, "(!%s)", a);
        }
        if (!strcmp(op, "~"))
            return lw_strf(L, "(~%s)", a);
        lw_fail(L, "unsupported operator %s in an index expression", op);
        return "0";
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        bool ak, bk;
        int64_t av, bv;
        const char *a = lw_index(L, akg_sketch_expr_lhs(e), &ak, &av);
        const char *b = lw_index(L, akg_sketch_expr_rhs(e), &bk, &bv);
        if (!strcmp(op, "/")) {
            lw_fail(L, "'/' is true division; integer index expressions use '//'");
            return "0";
        }
        if (ak && bk && fold(op, av, bv, k)) {
            *known = true;
            /* keep constexpr names readable when one side is a plain number */
            return lw_strf(L, "%lld", (long long)*k);
        }
        if ((ak || bk) && (!strcmp(op, "and") || !strcmp(op, "or"))) {
            /* one side known: `0 or x` is x, `1 or x` is 1 (as a condition) */
            int64_t kv = ak ? av : bv;
            const char *other = ak ? b : a;
            bool is_and = op[0] == 'a';
            if ((is_and && !kv) || (!is_and && kv)) {
                *known = true;
                *k = is_and ? 0 : 1;
                return is_and ? "0" : "1";
            }
            return lw_strf(L, "(%s != 0)", other);
        }
        if (!strcmp(op, "//") || !strcmp(op, "%")) {
            bool nn = lw_index_nonneg(L, akg_sketch_expr_lhs(e)) &&
                      lw_index_nonneg(L, akg_sketch_expr_rhs(e));
            if (nn)
                return lw_strf(L, "(%s %s %s)", a, op[0] == '/' ? "/" : "%", b);
            return lw_strf(L, "%s(%s, %s)", op[0] == '/' ? "akg_fdiv" : "akg_fmod", a, b);
        }
        if (!strcmp(op, "**")) {
            return lw_strf(L, "akg_ipow(%s, %s)", a, b);
        }
        if (ak && !strcmp(op, "*") && av == 1)
            return b;
        if (bk && (!strcmp(op, "*") || !strcmp(op, "//")) && bv == 1)
            return a;
        if (bk && (!strcmp(op, "+") || !strcmp(op, "-")) && bv == 0)
            return a;
        if (ak && !strcmp(op, "+") && av == 0)
            return b;
        return lw_strf(L, "(%s %s %s)", a, c_op(op), b);
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        size_t n = akg_sketch_expr_item_count(e);
        if ((!strcmp(f, "ceil") || !strcmp(f, "floor_div")) && n == 2) {
            bool ak, bk;
            int64_t av, bv;
            const char *a = lw_index(L, akg_sketch_expr_item(e, 0), &ak, &av);
            const char *b = lw_index(L, akg_sketch_expr_item(e, 1), &bk, &bv);
            if (ak && bk && bv != 0) {
                int64_t q;
                if (!strcmp(f, "ceil")) {
                    int64_t num;
                    if (!__builtin_add_overflow(av, bv - 1, &num) && fold("//", num, bv, &q) &&
                        av >= 0 && bv > 0) {
                        *known = true;
                        *k = q;
                        return lw_strf(L, "%lld", (long long)q);
                    }
                } else if (fold("//", av, bv, &q)) {
                    *known = true;
                    *k = q;
                    return lw_strf(L, "%lld", (long long)q);
                }
            }
            return lw_strf(L, "%s(%s, %s)", !strcmp(f, "ceil") ? "akg_cdiv" : "akg_fdiv", a, b);
        }
        if ((!strcmp(f, "min") || !strcmp(f, "max")) && n >= 1) {
            bool all = true;
            int64_t acc = 0;
            const char *txt = NULL;
            for (size_t i = 0; i < n; i++) {
                bool ik;
                int64_t iv;
                const char *t = lw_index(L, akg_sketch_expr_item(e, i), &ik, &iv);
                if (ik && (i == 0 || (f[1] == 'i' ? iv < acc : iv > acc)))
                    acc = iv;
                all &= ik;
                txt = txt ? lw_strf(L, "std::%s<int64_t>(%s, %s)", f, txt, t) : t;
            }
            if (all) {
                *known = true;
                *k = acc;
                return lw_strf(L, "%lld", (long long)acc);
            }
            return txt;
        }
        lw_fail(L, "%s() is not an integer operation; index expressions use + - * // %% ** and "
                   "ceil, min, max",
                f);
        return "0";
    }
    default:
        lw_fail(L, "this is not an integer index expression");
        return "0";
    }
}

lw_dim lw_index_dim(lw_ctx *L, const akg_sketch_expr *e)
{
    lw_dim d;
    bool saw = L->saw_loopvar;
    L->saw_loopvar = false;
    d.c = lw_index(L, e, &d.known, &d.k);
    d.varies = L->saw_loopvar;
    L->saw_loopvar = saw || d.varies;
    d.ub = d.known ? 0 : lw_index_upper(L, e);
    return d;
}

int64_t lw_index_upper(lw_ctx *L, const akg_sketch_expr *e)
{
    if (!e)
        return 0;
    bool known;
    int64_t k, a, b, r;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        k = akg_sketch_expr_int(e);
        return k > 0 ? k : 0;
    case AKG_SKETCH_EXPR_NAME: {
        lw_val *v = lw_lookup(L, akg_sketch_expr_text(e));
        if (v)
            return v->kind == LV_SCALAR ? v->ub : 0;
        known = false;
        if (const_name(L, akg_sketch_expr_text(e), &known, &k) && known && k > 0)
            return k;
        return 0;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        const akg_sketch_expr *x = akg_sketch_expr_lhs(e), *y = akg_sketch_expr_rhs(e);
        a = lw_index_upper(L, x);
        if (!strcmp(op, "-") && a && lw_index_nonneg(L, y))
            return a;
        b = lw_index_upper(L, y);
        if (!a || !b)
            return 0;
        if (!strcmp(op, "+"))
            return __builtin_add_overflow(a, b, &r) ? 0 : r;
        if (!strcmp(op, "*") && lw_index_nonneg(L, x) && lw_index_nonneg(L, y))
            return __builtin_mul_overflow(a, b, &r) ? 0 : r;
        return 0;
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *f = akg_sketch_expr_text(e);
        if (strcmp(f, "min"))
            return 0;
        int64_t best = 0;
        for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++) {
            int64_t u = lw_index_upper(L, akg_sketch_expr_item(e, i));
            if (u && (!best || u < best))
                best = u;
        }
        return best;
    }
    default:
        return 0;
    }
}

/* ---- linear forms: constant + sum of coef * atom (an atom is a name or any other
 * non-linear subexpression, compared by its text) ---- */

#define LIN_TERMS 16

typedef struct {
    int64_t c;
    int n;
    const char *atom[LIN_TERMS];
    int64_t coef[LIN_TERMS];
    bool ok;
} lin_form;

static void lin_term(lin_form *f, const char *atom, int64_t coef)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->atom[i], atom)) {
            f->ok &= !__builtin_add_overflow(f->coef[i], coef, &f->coef[i]);
            return;
        }
    if (f->n == LIN_TERMS) {
        f->ok = false;
        return;
    }
    f->atom[f->n] = atom;
    f->coef[f->n++] = coef;
}

static void lin_const(lin_form *f, int64_t v)
{
    f->ok &= !__builtin_add_overflow(f->c, v, &f->c);
}

static bool lin_is_const(const lin_form *f)
{
    for (int i = 0; i < f->n; i++)
        if (f->coef[i])
            return false;
    return true;
}

/* Adds scale * e to f. */
static void lin_add(lw_ctx *L, const akg_sketch_expr *e, int64_t scale, lin_form *f, int depth)
{
    if (!f->ok || !e || depth > 64) {
        f->ok = false;
        return;
    }
    int64_t t;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        f->ok &= !__builtin_mul_overflow(akg_sketch_expr_int(e), scale, &t);
        lin_const(f, t);
        return;
    case AKG_SKETCH_EXPR_NAME: {
        bool known = false;
        int64_t k = 0;
        lw_val *v = lw_lookup(L, akg_sketch_expr_text(e));
        if (v && v->kind == LV_SCALAR && !lw_is_float(v->dt)) {
            /* a symbol refined to a constant */
            char *end = NULL;
            long long lit = strtoll(v->c, &end, 10);
            known = end && end != v->c && *end == '\0';
            k = lit;
        } else if (!v) {
            const_name(L, akg_sketch_expr_text(e), &known, &k);
        }
        if (known) {
            f->ok &= !__builtin_mul_overflow(k, scale, &t);
            lin_const(f, t);
        } else {
            lin_term(f, akg_sketch_expr_text(e), scale);
        }
        return;
    }
    case AKG_SKETCH_EXPR_UNARY: {
        const char *op = akg_sketch_expr_text(e);
        if (!strcmp(op, "+") || !strcmp(op, "-")) {
            lin_add(L, akg_sketch_expr_lhs(e), op[0] == '-' ? -scale : scale, f, depth + 1);
            return;
        }
        break;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        const akg_sketch_expr *a = akg_sketch_expr_lhs(e), *b = akg_sketch_expr_rhs(e);
        if (!strcmp(op, "+") || !strcmp(op, "-")) {
            lin_add(L, a, scale, f, depth + 1);
            lin_add(L, b, op[0] == '-' ? -scale : scale, f, depth + 1);
            return;
        }
        if (!strcmp(op, "*")) {
            lin_form fa = {.ok = true}, fb = {.ok = true};
            lin_add(L, a, 1, &fa, depth + 1);
            lin_add(L, b, 1, &fb, depth + 1);
            const lin_form *k = fa.ok && lin_is_const(&fa) ? &fa
                                : fb.ok && lin_is_const(&fb) ? &fb
                                                             : NULL;
            if (k && !__builtin_mul_overflow(k->c, scale, &t)) {
                lin_add(L, k == &fa ? b : a, t, f, depth + 1);
                return;
            }
        }
        break;
    }
    default:
        break;
    }
    /* any other subexpression is an atom of its own */
    char *text = akg_sketch_expr_to_string(e);
    if (!text) {
        f->ok = false;
        return;
    }
    lin_term(f, lw_strf(L, "%s", text), scale);
    free(text);
}

bool lw_index_difference(lw_ctx *L, const akg_sketch_expr *a, const akg_sketch_expr *b,
                         int64_t *k)
{
    lin_form f = {.ok = true};
    lin_add(L, a, 1, &f, 0);
    lin_add(L, b, -1, &f, 0);
    if (!f.ok || !lin_is_const(&f))
        return false;
    *k = f.c;
    return true;
}
