/*
 * tt_ops.c: the Triton formula of every elementwise operation of the
 * language, row for row the operations of the CPU emitter's table
 * (backends/cpu/cpp/emitter/lw_ops.c) and the definitions of the language
 * reference (sketch-grammar/README.md).
 *
 * %0..%2 are the operands (always Python names or literals: every operation's
 * result is bound to a temporary, so an operand may appear more than once).
 * Numbers are written as Python literals, which Triton types weakly (they take
 * the block's dtype). NaN propagates as in PyTorch: `maximum` and `minimum`
 * pick a NaN operand, comparisons are written so that a NaN falls through.
 * The _akg_* helpers are @triton.jit functions of the module's prelude
 * (tt_plan.c): tanh, expm1 and log1p accurate near zero, without libdevice
 * (so the same module runs under TRITON_INTERPRET=1).
 */
#include <string.h>

#include "tt.h"

struct tt_op {
    const char *name;
    int nargs;
    const char *fmt;
    int kind; /* 0 arithmetic, 1 comparison (bool result), 2 logical (bool), 3 where */
    const char *defaults[3];
};

static const tt_op ops[] = {
    {"neg", 1, "(-%0)", 0, {0}},
    {"abs", 1, "tl.abs(%0)", 0, {0}},
    {"exp", 1, "tl.exp(%0)", 0, {0}},
    {"exp2", 1, "tl.exp2(%0)", 0, {0}},
    {"log", 1, "tl.log(%0)", 0, {0}},
    {"log2", 1, "tl.log2(%0)", 0, {0}},
    {"sqrt", 1, "tl.sqrt(%0)", 0, {0}},
    {"rsqrt", 1, "(1.0 / tl.sqrt(%0))", 0, {0}},
    {"tanh", 1, "_akg_tanh(%0)", 0, {0}},
    {"sigmoid", 1, "(1.0 / (1.0 + tl.exp(-%0)))", 0, {0}},
    {"relu", 1, "tl.where(%0 < 0, 0, %0)", 0, {0}},
    {"relu6", 1, "tl.where(%0 < 0, 0, tl.where(%0 > 6, 6, %0))", 0, {0}},
    {"leaky_relu", 2, "tl.where(%0 < 0, %0 * %1, %0)", 0, {NULL, "0.01"}},
    {"gelu", 1, "(0.5 * %0 * (1.0 + tl.erf(%0 * 0.7071067811865476)))", 0, {0}},
    {"gelu_tanh",
     1,
     "(0.5 * %0 * (1.0 + _akg_tanh(0.7978845608028654 * (%0 + 0.044715 * %0 * %0 * %0))))",
     0,
     {0}},
    {"silu", 1, "(%0 / (1.0 + tl.exp(-%0)))", 0, {0}},
    {"mish", 1, "(%0 * _akg_tanh(tl.where(%0 > 20, %0, _akg_log1p(tl.exp(%0)))))", 0, {0}},
    {"softplus",
     3,
     "tl.where(%0 * %1 > %2, %0, _akg_log1p(tl.exp(%0 * %1)) / %1)",
     0,
     {NULL, "1.0", "20.0"}},
    {"elu", 2, "tl.where(%0 > 0, %0, %1 * _akg_expm1(%0))", 0, {NULL, "1.0"}},
    {"selu",
     1,
     "(1.0507009873554805 * tl.where(%0 > 0, %0, 1.6732632423543772 * _akg_expm1(%0)))",
     0,
     {0}},
    {"hardtanh", 3, "tl.where(%0 < %1, %1, tl.where(%0 > %2, %2, %0))", 0, {NULL, "-1.0", "1.0"}},
    {"clamp", 3, "tl.where(%0 < %1, %1, tl.where(%0 > %2, %2, %0))", 0, {0}},
    {"hardsigmoid", 1, "tl.where(%0 <= -3, 0, tl.where(%0 >= 3, 1, %0 / 6 + 0.5))", 0, {0}},
    {"hardswish", 1, "tl.where(%0 <= -3, 0, tl.where(%0 >= 3, %0, %0 * (%0 + 3) / 6))", 0, {0}},
    {"softsign", 1, "(%0 / (1 + tl.abs(%0)))", 0, {0}},
    {"sin", 1, "tl.sin(%0)", 0, {0}},
    {"cos", 1, "tl.cos(%0)", 0, {0}},
    {"erf", 1, "tl.erf(%0)", 0, {0}},
    {"sign", 1, "tl.where(%0 > 0, 1, tl.where(%0 < 0, -1, %0))", 0, {0}},
    {"recip", 1, "(1.0 / %0)", 0, {0}},
    {"floor", 1, "tl.floor(%0)", 0, {0}},
    {"round", 1, "_akg_rint(%0)", 0, {0}},
    {"add", 2, "(%0 + %1)", 0, {0}},
    {"sub", 2, "(%0 - %1)", 0, {0}},
    {"mul", 2, "(%0 * %1)", 0, {0}},
    {"div", 2, "(%0 / %1)", 0, {0}},
    {"floordiv", 2, "_akg_fdiv(%0, %1)", 0, {0}},
    {"mod", 2, "_akg_fmod(%0, %1)", 0, {0}},
    {"maximum", 2, "tl.where((%0 != %0) | (%0 > %1), %0, %1)", 0, {0}},
    {"minimum", 2, "tl.where((%0 != %0) | (%0 < %1), %0, %1)", 0, {0}},
    {"bitand", 2, "(%0 & %1)", 0, {0}},
    {"bitor", 2, "(%0 | %1)", 0, {0}},
    {"bitxor", 2, "(%0 ^ %1)", 0, {0}},
    {"invert", 1, "(~%0)", 0, {0}},
    {"logical_and", 2, "((%0 != 0) & (%1 != 0))", 2, {0}},
    {"logical_or", 2, "((%0 != 0) | (%1 != 0))", 2, {0}},
    {"logical_not", 1, "(%0 == 0)", 2, {0}},
    {"lt", 2, "(%0 < %1)", 1, {0}},
    {"le", 2, "(%0 <= %1)", 1, {0}},
    {"gt", 2, "(%0 > %1)", 1, {0}},
    {"ge", 2, "(%0 >= %1)", 1, {0}},
    {"eq", 2, "(%0 == %1)", 1, {0}},
    {"ne", 2, "(%0 != %1)", 1, {0}},
    {"where", 3, "tl.where(%0, %1, %2)", 3, {0}},
    {"copy", 1, "%0", 0, {0}},
};

const tt_op *tt_op_find(const char *name)
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

int tt_op_nargs(const tt_op *op)
{
    return op->nargs;
}

const char *tt_op_default(const tt_op *op, int i)
{
    return i >= 0 && i < 3 ? op->defaults[i] : NULL;
}

int tt_op_kind(const tt_op *op)
{
    return op->kind;
}

const char *tt_op_apply(tt_ctx *C, const tt_op *op, const char *const *args)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 20);
    for (const char *p = op->fmt; *p;) {
        if (p[0] == '%' && p[1] >= '0' && p[1] <= '2') {
            akg_buf_puts(&b, args[p[1] - '0']);
            p += 2;
            continue;
        }
        akg_buf_append(&b, p++, 1);
    }
    const char *r = akg_buf_status(&b) ? "0" : tt_strf(C, "%s", b.data);
    akg_buf_free(&b);
    return r;
}
