/*
 * lw_ops.c: the per-element C++ formula of every elementwise operation of the
 * language, exactly as the reference defines it.
 *
 * Formulas are written once for any computation type: %0..%2 are the
 * operands, %T the computation type (so `%T(0.5)` is a literal of it), and the
 * transcendental functions are spelled EXP( LOG( TANH( ERF( EXPM1( LOG1P(
 * EXP2( LOG2( SIN( COS( POW(, which become the prelude's fast polynomial
 * versions (akg_exp, ...) or the C library's (std::exp, ...) per the
 * statement's `math` hint. NaN propagates as in PyTorch: comparisons are
 * written so a NaN operand falls through to the result.
 */
#include <stdio.h>
#include <string.h>

#include "lw.h"

struct lw_op {
    const char *name;
    int nargs;        /* operands incl. scalar parameters */
    const char *fmt;
    int kind;         /* 0 arithmetic, 1 comparison (bool result), 2 logical (bool), 3 where */
    const char *defaults[3]; /* default literals of the optional operands 1..2 */
};

static const lw_op ops[] = {
    {"neg", 1, "(-%0)", 0, {0}},
    {"abs", 1, "(%0 < %T(0) ? -%0 : %0)", 0, {0}},
    {"exp", 1, "EXP(%0)", 0, {0}},
    {"exp2", 1, "EXP2(%0)", 0, {0}},
    {"log", 1, "LOG(%0)", 0, {0}},
    {"log2", 1, "LOG2(%0)", 0, {0}},
    {"sqrt", 1, "std::sqrt(%0)", 0, {0}},
    {"rsqrt", 1, "(%T(1) / std::sqrt(%0))", 0, {0}},
    {"tanh", 1, "TANH(%0)", 0, {0}},
    {"sigmoid", 1, "(%T(1) / (%T(1) + EXP(-%0)))", 0, {0}},
    {"relu", 1, "(%0 < %T(0) ? %T(0) : %0)", 0, {0}},
    {"relu6", 1, "(%0 < %T(0) ? %T(0) : (%0 > %T(6) ? %T(6) : %0))", 0, {0}},
    {"leaky_relu", 2, "(%0 < %T(0) ? %0 * %1 : %0)", 0, {NULL, "0.01"}},
    {"gelu", 1, "(%T(0.5) * %0 * (%T(1) + ERF(%0 * %T(0.70710678118654752))))", 0, {0}},
    {"gelu_tanh", 1,
     "(%T(0.5) * %0 * (%T(1) + TANH(%T(0.79788456080286536) * (%0 + %T(0.044715) * %0 * %0 * "
     "%0))))",
     0, {0}},
    {"silu", 1, "(%0 / (%T(1) + EXP(-%0)))", 0, {0}},
    {"mish", 1, "(%0 * TANH(%0 > %T(20) ? %0 : LOG1P(EXP(%0))))", 0, {0}},
    {"softplus", 3, "(%0 * %1 > %2 ? %0 : LOG1P(EXP(%0 * %1)) / %1)", 0, {NULL, "1", "20"}},
    {"elu", 2, "(%0 > %T(0) ? %0 : %1 * EXPM1(%0))", 0, {NULL, "1"}},
    {"selu", 1,
     "(%T(1.0507009873554805) * (%0 > %T(0) ? %0 : %T(1.6732632423543772) * EXPM1(%0)))", 0,
     {0}},
    {"hardtanh", 3, "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))", 0, {NULL, "-1", "1"}},
    {"clamp", 3, "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))", 0, {0}},
    {"hardsigmoid", 1, "(%0 <= %T(-3) ? %T(0) : (%0 >= %T(3) ? %T(1) : %0 / %T(6) + %T(0.5)))",
     0, {0}},
    {"hardswish", 1, "(%0 <= %T(-3) ? %T(0) : (%0 >= %T(3) ? %0 : %0 * (%0 + %T(3)) / %T(6)))",
     0, {0}},
    {"softsign", 1, "(%0 / (%T(1) + (%0 < %T(0) ? -%0 : %0)))", 0, {0}},
    {"sin", 1, "SIN(%0)", 0, {0}},
    {"cos", 1, "COS(%0)", 0, {0}},
    {"erf", 1, "ERF(%0)", 0, {0}},
    {"sign", 1, "(%0 > %T(0) ? %T(1) : (%0 < %T(0) ? %T(-1) : %0))", 0, {0}},
    {"recip", 1, "(%T(1) / %0)", 0, {0}},
    {"floor", 1, "std::floor(%0)", 0, {0}},
    {"round", 1, "std::nearbyint(%0)", 0, {0}},
    {"add", 2, "(%0 + %1)", 0, {0}},
    {"sub", 2, "(%0 - %1)", 0, {0}},
    {"mul", 2, "(%0 * %1)", 0, {0}},
    {"div", 2, "(%0 / %1)", 0, {0}},
    {"floordiv", 2, "akg_floordiv<%T>(%0, %1)", 0, {0}},
    {"mod", 2, "akg_pymod<%T>(%0, %1)", 0, {0}},
    {"pow", 2, "POW(%0, %1)", 0, {0}},
    {"maximum", 2, "((%0 != %0 || %0 > %1) ? %0 : %1)", 0, {0}},
    {"minimum", 2, "((%0 != %0 || %0 < %1) ? %0 : %1)", 0, {0}},
    {"bitand", 2, "(%0 & %1)", 0, {0}},
    {"bitor", 2, "(%0 | %1)", 0, {0}},
    {"bitxor", 2, "(%0 ^ %1)", 0, {0}},
    {"invert", 1, "(~%0)", 0, {0}},
    {"logical_and", 2, "(%0 && %1)", 2, {0}},
    {"logical_or", 2, "(%0 || %1)", 2, {0}},
    {"logical_not", 1, "(!%0)", 2, {0}},
    {"lt", 2, "(%0 < %1)", 1, {0}},
    {"le", 2, "(%0 <= %1)", 1, {0}},
    {"gt", 2, "(%0 > %1)", 1, {0}},
    {"ge", 2, "(%0 >= %1)", 1, {0}},
    {"eq", 2, "(%0 == %1)", 1, {0}},
    {"ne", 2, "(%0 != %1)", 1, {0}},
    {"where", 3, "(%0 ? %1 : %2)", 3, {0}},
    {"cast", 1, "akg_cvt<%T>(%0)", 0, {0}},
    {"copy", 1, "%0", 0, {0}},
    {"transpose", 1, "%0", 0, {0}},
    {"iota", 0, "%0", 0, {0}},
};

const lw_op *lw_op_find(const char *name)
{
    static const struct {
        const char *alias, *name;
    } aliases[] = {{"max", "maximum"}, {"min", "minimum"}, {"reciprocal", "recip"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

const char *lw_op_name(const lw_op *op)
{
    return op->name;
}

int lw_op_nargs(const lw_op *op)
{
    return op->nargs;
}

const char *lw_op_default(const lw_op *op, int i)
{
    return i < 3 ? op->defaults[i] : NULL;
}

bool lw_op_is_compare(const lw_op *op)
{
    return op->kind == 1 || op->kind == 2;
}

bool lw_op_is_where(const lw_op *op)
{
    return op->kind == 3;
}

static const struct {
    const char *spell, *fast, *precise;
} fns[] = {
    {"EXPM1(", "akg_expm1(", "std::expm1("}, {"EXP2(", "akg_exp2(", "std::exp2("},
    {"EXP(", "akg_exp(", "std::exp("},       {"LOG1P(", "akg_log1p(", "std::log1p("},
    {"LOG2(", "akg_log2(", "std::log2("},    {"LOG(", "akg_log(", "std::log("},
    {"TANH(", "akg_tanh(", "std::tanh("},    {"ERF(", "akg_erf(", "std::erf("},
    {"SIN(", "std::sin(", "std::sin("},      {"COS(", "std::cos(", "std::cos("},
    {"POW(", "std::pow(", "std::pow("},
};

const char *lw_op_apply(lw_ctx *L, lw_val *v, const char *const *args)
{
    const lw_op *op = v->op;
    akg_buf b;
    akg_buf_init(&b, 1 << 20);
    const char *T = lw_comptype(v->dt);
    if (lw_op_is_compare(op) || lw_op_is_where(op)) /* operands' type */
        T = lw_comptype(v->arg[lw_op_is_where(op) ? 1 : 0]->dt);
    for (const char *p = op->fmt; *p;) {
        if (p[0] == '%' && p[1] >= '0' && p[1] <= '2') {
            int k = p[1] - '0';
            const char *a = k < v->nargs ? args[k] : (v->lit[k] ? v->lit[k] : "0");
            akg_buf_appendf(&b, "%s", a);
            p += 2;
            continue;
        }
        if (p[0] == '%' && p[1] == 'T') {
            akg_buf_puts(&b, T);
            p += 2;
            continue;
        }
        bool done = false;
        if (p[0] >= 'A' && p[0] <= 'Z') {
            for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
                size_t n = strlen(fns[i].spell);
                if (!strncmp(p, fns[i].spell, n)) {
                    akg_buf_puts(&b, v->precise ? fns[i].precise : fns[i].fast);
                    p += n;
                    done = true;
                    break;
                }
            }
        }
        if (!done)
            akg_buf_append(&b, p++, 1);
    }
    const char *r = akg_buf_status(&b) ? "0" : lw_strf(L, "%s", b.data);
    akg_buf_free(&b);
    return r;
}

akg_dtype lw_op_result_dtype(const lw_op *op, akg_dtype in)
{
    if (op->kind == 1 || op->kind == 2)
        return AKG_DTYPE_BOOL;
    return in;
}
