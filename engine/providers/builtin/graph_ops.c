/*
 * graph_ops.c: the graph Designer's vocabulary of elementwise ops: which of
 * the probe graph's canonical ops it designs, and how each is written as a
 * sketch expression (relu -> relu(x), reciprocal -> recip(x), gelu with
 * approximate "tanh" -> gelu_tanh(x), a one-sided clamp -> maximum/minimum,
 * casts to f32, scalar parameters from the op's attrs with torch's defaults).
 * Numbers are written as float literals so that a tile never meets an
 * integer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "graph_ops.h"

typedef struct {
    const char *op, *sketch;
    const char *attrs[2];
    double defaults[2];
    int n_attrs;
} unary_op;

static const unary_op unary_ops[] = {
    {"relu", "relu", {0}, {0}, 0},
    {"sigmoid", "sigmoid", {0}, {0}, 0},
    {"tanh", "tanh", {0}, {0}, 0},
    {"exp", "exp", {0}, {0}, 0},
    {"log", "log", {0}, {0}, 0},
    {"abs", "abs", {0}, {0}, 0},
    {"neg", "neg", {0}, {0}, 0},
    {"sqrt", "sqrt", {0}, {0}, 0},
    {"rsqrt", "rsqrt", {0}, {0}, 0},
    {"sin", "sin", {0}, {0}, 0},
    {"cos", "cos", {0}, {0}, 0},
    {"erf", "erf", {0}, {0}, 0},
    {"sign", "sign", {0}, {0}, 0},
    {"floor", "floor", {0}, {0}, 0},
    {"round", "round", {0}, {0}, 0},
    {"reciprocal", "recip", {0}, {0}, 0},
    {"silu", "silu", {0}, {0}, 0},
    {"hardsigmoid", "hardsigmoid", {0}, {0}, 0},
    {"hardswish", "hardswish", {0}, {0}, 0},
    {"mish", "mish", {0}, {0}, 0},
    {"selu", "selu", {0}, {0}, 0},
    {"softsign", "softsign", {0}, {0}, 0},
    {"softplus", "softplus", {"beta", "threshold"}, {1.0, 20.0}, 2},
    {"elu", "elu", {"alpha"}, {1.0}, 1},
    {"leaky_relu", "leaky_relu", {"negative_slope"}, {0.01}, 1},
    {"hardtanh", "hardtanh", {"min", "max"}, {-1.0, 1.0}, 2},
    {"gelu", "gelu", {0}, {0}, 0},   /* approximate: see render_op */
    {"clamp", "clamp", {0}, {0}, 0}, /* min/max may be null */
    {"cast", "cast", {0}, {0}, 0},   /* to f32 only */
};

static const char *const binary_ops[] = {"add",     "sub",     "mul", "div",         "pow",
                                         "maximum", "minimum", "eq",  "ne",          "lt",
                                         "le",      "gt",      "ge",  "logical_and", "logical_or"};

/* reductions {dims, keepdim} and the row-wise composites {dim} / layer_norm, designed by
 * designer_graph_reduce.c */
static const char *const reducing_ops[] = {
    "sum",    "mean",      "amax",    "amin",        "prod",       "var",    "std",    "argmax",
    "argmin", "logsumexp", "softmax", "log_softmax", "layer_norm", "cumsum", "cumprod"};

int akg_graph_op_reduces(const akg_graph_value *v)
{
    for (size_t i = 0; v->kind == AKG_GRAPH_OP && i < sizeof reducing_ops / sizeof reducing_ops[0];
         i++)
        if (!strcmp(reducing_ops[i], v->op))
            return 1;
    return 0;
}

static const unary_op *find_unary(const char *op)
{
    for (size_t i = 0; i < sizeof unary_ops / sizeof unary_ops[0]; i++)
        if (!strcmp(unary_ops[i].op, op))
            return &unary_ops[i];
    return NULL;
}

static int is_binary(const char *op)
{
    for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
        if (!strcmp(binary_ops[i], op))
            return 1;
    return 0;
}

int akg_graph_op_elementwise(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP &&
           (find_unary(v->op) || is_binary(v->op) || !strcmp(v->op, "where"));
}

/* the ops this file has a rule for (where they stand decides whether they fit) */
int akg_graph_op_has_rule(const akg_graph_value *v)
{
    return akg_graph_op_elementwise(v) || akg_graph_op_reduces(v) || !strcmp(v->op, "matmul") ||
           !strcmp(v->op, "permute");
}

void akg_graph_number_text(double x, char *buf, size_t len)
{
    snprintf(buf, len, "%.9g", x);
    /* a whole number stays a float literal, so a tile never meets an integer */
    if (!strpbrk(buf, ".eE"))
        snprintf(buf + strlen(buf), len - strlen(buf), ".0");
}

/* The sketch expression of elementwise op v over its operands' names, into out; 0, or -1
 * with *why set. */
int akg_graph_op_render(const akg_graph *g, const akg_graph_value *v, char (*names)[24], char *out,
                        size_t len, const char **why)
{
    char a[3][48];
    int na = v->n_args;
    if (na > 3 || na < 1) {
        *why = "an unexpected number of operands";
        return -1;
    }
    for (int i = 0; i < na; i++) {
        const akg_graph_arg *arg = &v->args[i];
        if (arg->kind == AKG_GRAPH_ARG_NONE) {
            *why = "an operand that is None";
            return -1;
        }
        if (arg->kind == AKG_GRAPH_ARG_NUMBER) {
            if (!isfinite(arg->number)) {
                *why = "an operand that is not a finite number";
                return -1;
            }
            akg_graph_number_text(arg->number, a[i], sizeof a[i]);
            continue;
        }
        if (!names[arg->value][0]) {
            *why = "an operand the kernel cannot read here";
            return -1;
        }
        snprintf(a[i], sizeof a[i], "%s", names[arg->value]);
    }
    if (!strcmp(v->op, "where")) {
        if (na != 3) {
            *why = "where without three operands";
            return -1;
        }
        snprintf(out, len, "where(%s, %s, %s)", a[0], a[1], a[2]);
        return 0;
    }
    if (is_binary(v->op)) {
        if (na != 2) {
            *why = "a binary op without two operands";
            return -1;
        }
        snprintf(out, len, "%s(%s, %s)", v->op, a[0], a[1]);
        return 0;
    }
    const unary_op *u = find_unary(v->op);
    if (!u || na != 1 || v->args[0].kind != AKG_GRAPH_ARG_VALUE) {
        *why = "an elementwise op without one tensor operand";
        return -1;
    }
    double lo, hi;
    if (!strcmp(v->op, "gelu")) {
        const char *ap = akg_graph_attr_string(v, "approximate");
        if (ap && strcmp(ap, "none") && strcmp(ap, "tanh")) {
            *why = "gelu with an approximation other than none or tanh";
            return -1;
        }
        snprintf(out, len, "%s(%s)", ap && !strcmp(ap, "tanh") ? "gelu_tanh" : "gelu", a[0]);
        return 0;
    }
    if (!strcmp(v->op, "clamp")) {
        int has_lo = akg_graph_attr_number(v, "min", &lo) == AKG_OK;
        int has_hi = akg_graph_attr_number(v, "max", &hi) == AKG_OK;
        char l[48], h[48];
        akg_graph_number_text(has_lo ? lo : 0, l, sizeof l);
        akg_graph_number_text(has_hi ? hi : 0, h, sizeof h);
        if (has_lo && has_hi)
            snprintf(out, len, "clamp(%s, %s, %s)", a[0], l, h);
        else if (has_lo)
            snprintf(out, len, "maximum(%s, %s)", a[0], l);
        else if (has_hi)
            snprintf(out, len, "minimum(%s, %s)", a[0], h);
        else
            snprintf(out, len, "mul(%s, 1.0)", a[0]);
        return 0;
    }
    if (!strcmp(v->op, "cast")) {
        const char *to = akg_graph_attr_string(v, "dtype");
        const char *from = g->values[v->args[0].value].dtype;
        if (!to || strcmp(to, "f32")) {
            *why = "a cast to a dtype other than f32 (f32 only for now)";
            return -1;
        }
        if (!strcmp(from, "bool"))
            snprintf(out, len, "where(%s, 1.0, 0.0)", a[0]);
        else if (!strcmp(from, "f32"))
            snprintf(out, len, "mul(%s, 1.0)", a[0]);
        else {
            *why = "a cast from a dtype other than f32 or bool";
            return -1;
        }
        return 0;
    }
    size_t off = (size_t)snprintf(out, len, "%s(%s", u->sketch, a[0]);
    for (int i = 0; i < u->n_attrs && off < len; i++) {
        double x = u->defaults[i];
        akg_graph_attr_number(v, u->attrs[i], &x);
        if (!isfinite(x)) {
            *why = "a parameter that is not a finite number";
            return -1;
        }
        char num[48];
        akg_graph_number_text(x, num, sizeof num);
        off += (size_t)snprintf(out + off, len - off, ", %s", num);
    }
    if (off < len)
        snprintf(out + off, len - off, ")");
    return 0;
}

/* The sketch's op name for naming the design: gelu_tanh, recip, ... */
void akg_graph_op_word(const akg_graph_value *v, int bias, char *name, size_t len)
{
    const char *word = v->op;
    const unary_op *u = find_unary(v->op);
    if (bias)
        word = "bias";
    else if (u)
        word = u->sketch;
    if (!strcmp(v->op, "gelu")) {
        const char *ap = akg_graph_attr_string(v, "approximate");
        word = ap && !strcmp(ap, "tanh") ? "gelu_tanh" : "gelu";
    }
    size_t n = strlen(name);
    if (n + 1 + strlen(word) < len)
        snprintf(name + n, len - n, "%s%s", n ? "_" : "", word);
}
