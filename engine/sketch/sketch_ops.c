/* The operation table (see sketch_ops.h). */
#include "sketch_ops.h"

#include <string.h>

#define UN(n, mx, kw, u)                                                                           \
    {                                                                                              \
        n, OP_UNARY, 1, mx, kw, u                                                                  \
    }
#define BIN(n, u)                                                                                  \
    {                                                                                              \
        n, OP_BINARY, 2, 2, "", u                                                                  \
    }
#define CMP(n, u)                                                                                  \
    {                                                                                              \
        n, OP_CMP, 2, 2, "", u                                                                     \
    }
#define RED(n)                                                                                     \
    {                                                                                              \
        n, OP_REDUCE, 1, 2, "axis,keepdim", n "(x, axis=None, keepdim=True)"                       \
    }

static const sketch_op sketch_ops[] = {
    UN("neg", 1, "", "neg(x)"),
    UN("abs", 1, "", "abs(x)"),
    UN("exp", 1, "", "exp(x)"),
    UN("exp2", 1, "", "exp2(x)"),
    UN("log", 1, "", "log(x)"),
    UN("log2", 1, "", "log2(x)"),
    UN("sqrt", 1, "", "sqrt(x)"),
    UN("rsqrt", 1, "", "rsqrt(x)"),
    UN("tanh", 1, "", "tanh(x)"),
    UN("sigmoid", 1, "", "sigmoid(x)"),
    UN("relu", 1, "", "relu(x)"),
    UN("relu6", 1, "", "relu6(x)"),
    UN("leaky_relu", 2, "slope,negative_slope", "leaky_relu(x, slope=0.01)"),
    UN("gelu", 1, "", "gelu(x)"),
    UN("gelu_tanh", 1, "", "gelu_tanh(x)"),
    UN("silu", 1, "", "silu(x)"),
    UN("mish", 1, "", "mish(x)"),
    UN("softplus", 3, "beta,threshold", "softplus(x, beta=1, threshold=20)"),
    UN("elu", 2, "alpha", "elu(x, alpha=1)"),
    UN("selu", 1, "", "selu(x)"),
    UN("hardtanh", 3, "lo,hi,min_val,max_val", "hardtanh(x, lo=-1, hi=1)"),
    UN("hardsigmoid", 1, "", "hardsigmoid(x)"),
    UN("hardswish", 1, "", "hardswish(x)"),
    UN("softsign", 1, "", "softsign(x)"),
    UN("sin", 1, "", "sin(x)"),
    UN("cos", 1, "", "cos(x)"),
    UN("erf", 1, "", "erf(x)"),
    UN("sign", 1, "", "sign(x)"),
    UN("recip", 1, "", "recip(x)"),
    UN("floor", 1, "", "floor(x)"),
    UN("round", 1, "", "round(x)"),
    UN("clamp", 3, "lo,hi,min,max", "clamp(x, lo, hi)"),
    BIN("add", "add(a, b)"),
    BIN("sub", "sub(a, b)"),
    BIN("mul", "mul(a, b)"),
    BIN("div", "div(a, b)"),
    BIN("pow", "pow(a, b)"),
    BIN("maximum", "maximum(a, b)"),
    BIN("minimum", "minimum(a, b)"),
    BIN("logical_and", "logical_and(a, b)"),
    BIN("logical_or", "logical_or(a, b)"),
    CMP("lt", "lt(a, b)"),
    CMP("le", "le(a, b)"),
    CMP("gt", "gt(a, b)"),
    CMP("ge", "ge(a, b)"),
    CMP("eq", "eq(a, b)"),
    CMP("ne", "ne(a, b)"),
    {"where", OP_WHERE, 3, 3, "", "where(mask, a, b)"},
    RED("reduce_sum"),
    RED("reduce_max"),
    RED("reduce_min"),
    RED("reduce_mean"),
    RED("reduce_prod"),
    RED("argmax"),
    RED("argmin"),
    RED("reduce_argmax"),
    {"cumsum", OP_SCAN, 1, 2, "axis,reverse,exclusive",
     "cumsum(x, axis=-1, reverse=False, exclusive=False)"},
    {"cumprod", OP_SCAN, 1, 2, "axis,reverse,exclusive",
     "cumprod(x, axis=-1, reverse=False, exclusive=False)"},
    {"local_cumsum", OP_SCAN, 1, 2, "axis,reverse,exclusive", "local_cumsum(x, axis=-1)"},
    {"local_cumprod", OP_SCAN, 1, 2, "axis,reverse,exclusive", "local_cumprod(x, axis=-1)"},
    {"softmax", OP_SOFTMAX, 1, 2, "axis", "softmax(x, axis=-1)"},
    {"log_softmax", OP_SOFTMAX, 1, 2, "axis", "log_softmax(x, axis=-1)"},
    {"gemm", OP_GEMM, 2, 3, "trans_a,trans_b", "gemm(a, b[, acc], trans_a=False, trans_b=False)"},
    {"dot", OP_DOT, 2, 2, "", "dot(a, b)"},
    {"transpose", OP_TRANSPOSE, 1, 2, "", "transpose(x[, perm])"},
    {"gather", OP_GATHER, 2, 3, "axis", "gather(x, index, axis)"},
    {"cast", OP_CAST, 2, 2, "", "cast(x, dtype)"},
    {"fill", OP_FILL, 2, 2, "dtype", "fill([dims], value, dtype=f32)"},
    {"zeros", OP_ZEROS, 1, 1, "dtype", "zeros([dims], dtype=f32)"},
    {"arange", OP_ARANGE, 1, 2, "", "arange([start,] stop)"},
    {"ceil", OP_INDEX, 1, 2, "", "ceil(a, b) = ceiling of a / b"},
    {"min", OP_INDEX, 1, 8, "", "min(a, b, ...)"},
    {"max", OP_INDEX, 1, 8, "", "max(a, b, ...)"},
    {"floor_div", OP_INDEX, 2, 2, "", "floor_div(a, b)"},
    {"alloc", OP_ALLOC, 1, 2, "dtype,llm_hint,shape",
     "t = alloc([dims], dtype=..., llm_hint=[...])"},
    {"range", OP_RANGE, 1, 3, "", "range([start,] stop[, step])"},
    {"tune", OP_TUNE, 1, 64, "", "tune(c0, c1, ...)"},
};

#define SKETCH_OP_COUNT (sizeof sketch_ops / sizeof sketch_ops[0])

static const char *sketch_op_name_list[SKETCH_OP_COUNT];

const sketch_op *sketch_op_find(const char *name)
{
    for (size_t i = 0; i < SKETCH_OP_COUNT; i++) /* the first byte rules out most names cheaply */
        if (sketch_ops[i].name[0] == name[0] && strcmp(sketch_ops[i].name, name) == 0)
            return &sketch_ops[i];
    return NULL;
}

bool sketch_op_has_kwarg(const sketch_op *op, const char *kw)
{
    size_t n = strlen(kw);
    const char *p = op->kwargs;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, kw, n) == 0)
            return true;
        if (!e)
            break;
        p = e + 1;
    }
    return false;
}

const char *const *sketch_op_names(void)
{
    /* filled on first use; the table is constant so a race writes equal values */
    for (size_t i = 0; i < SKETCH_OP_COUNT; i++)
        sketch_op_name_list[i] = sketch_ops[i].name;
    return sketch_op_name_list;
}

size_t sketch_op_count(void)
{
    return SKETCH_OP_COUNT;
}
