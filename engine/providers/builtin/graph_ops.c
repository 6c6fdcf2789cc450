/*
 * graph_ops.c: the graph Designer's vocabulary of elementwise ops: which of
 * the probe graph's canonical ops it designs, and how each is written as a
 * sketch expression (relu -> relu(x), reciprocal -> recip(x), gelu with
 * approximate "tanh" -> gelu_tanh(x), a one-sided clamp -> maximum/minimum,
 * torch.remainder -> `a % b` (Python's sign of the divisor), scalar parameters
 * from the op's attrs with torch's defaults).
 *
 * dtypes follow PyTorch's type promotion as the graph records it: an op
 * computes in its result's dtype (a comparison in its operands' promoted
 * dtype, where's mask and logical ops in bool), an operand of another dtype is
 * cast to it first, and numbers are literals of that dtype (`3` for an i32
 * tensor, `0.5` for a float one). f16 and bf16 tiles compute in f32 and round
 * to their dtype after each op, as PyTorch's CPU kernels do. A cast from a
 * float to an integer truncates toward zero, as torch's does.
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

static const char *const binary_ops[] = {
    "add", "sub", "mul", "div", "pow", "maximum", "minimum",     "remainder",
    "eq",  "ne",  "lt",  "le",  "gt",  "ge",      "logical_and", "logical_or"};

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
           !strcmp(v->op, "permute") || !strcmp(v->op, "reshape") || !strcmp(v->op, "expand") ||
           !strcmp(v->op, "slice") || !strcmp(v->op, "select") || !strcmp(v->op, "aten.embedding");
}

void akg_graph_number_text(double x, char *buf, size_t len)
{
    snprintf(buf, len, "%.9g", x);
    /* a whole number stays a float literal, so a tile never meets an integer */
    if (!strpbrk(buf, ".eE"))
        snprintf(buf + strlen(buf), len - strlen(buf), ".0");
}

/* dtypes in PyTorch's promotion order (f16 and bf16 together promote to f32) */
static int dtype_order(const char *dt)
{
    static const char *const order[] = {"bool", "u8",  "i8",   "i16", "i32",
                                        "i64",  "f16", "bf16", "f32", "f64"};
    for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++)
        if (!strcmp(order[i], dt))
            return i;
    return -1;
}

static int dtype_is_float(const char *dt)
{
    return dtype_order(dt) >= 6;
}

static int is_comparison(const char *op)
{
    static const char *const cmp[] = {"eq", "ne", "lt", "le", "gt", "ge"};
    for (size_t i = 0; i < sizeof cmp / sizeof cmp[0]; i++)
        if (!strcmp(cmp[i], op))
            return 1;
    return 0;
}

/* The dtype a comparison computes in: its tensor operands promoted (a fractional number
 * against integers promotes to f32, as torch's default dtype). */
static const char *comparison_dtype(const akg_graph *g, const akg_graph_value *v)
{
    const char *best = NULL;
    int fractional = 0;
    for (int i = 0; i < v->n_args; i++) {
        const akg_graph_arg *a = &v->args[i];
        if (a->kind == AKG_GRAPH_ARG_NUMBER) {
            fractional |= !a->is_int && !a->is_bool;
            continue;
        }
        if (a->kind != AKG_GRAPH_ARG_VALUE)
            continue;
        const char *dt = g->values[a->value].dtype;
        if (!best || dtype_order(dt) > dtype_order(best))
            best = dt;
        if (best && dtype_is_float(best) && dtype_is_float(dt) && strcmp(best, dt) &&
            dtype_order(best) < 8)
            best = "f32"; /* f16 against bf16 */
    }
    if (!best || (fractional && !dtype_is_float(best)))
        return "f32";
    return best;
}

/* The dtype operand i of v is read in (the op computes in it). */
static const char *operand_dtype(const akg_graph *g, const akg_graph_value *v, int i)
{
    if (!strcmp(v->op, "logical_and") || !strcmp(v->op, "logical_or"))
        return "bool";
    if (!strcmp(v->op, "where") && i == 0)
        return "bool";
    if (is_comparison(v->op))
        return comparison_dtype(g, v);
    return v->dtype;
}

/* A number as a literal of dtype dt: 0, or -1 with *why. */
static int number_literal(double x, const char *dt, char *buf, size_t len, const char **why)
{
    if (!isfinite(x) && dtype_is_float(dt)) {
        *why = "an operand that is not a finite number";
        return -1;
    }
    if (!strcmp(dt, "bool")) {
        snprintf(buf, len, "%s", x != 0 ? "True" : "False");
        return 0;
    }
    if (!dtype_is_float(dt)) {
        if (x != floor(x) || fabs(x) > 9007199254740992.0) {
            *why = "a fractional number meeting an integer tensor";
            return -1;
        }
        snprintf(buf, len, "%.0f", x);
        return 0;
    }
    akg_graph_number_text(x, buf, len);
    return 0;
}

int akg_graph_op_render(const akg_graph *g, const akg_graph_value *v, char (*names)[24], char *out,
                        size_t len, const char **why)
{
    const char *operands[AKG_GRAPH_MAX_ARGS] = {0};
    for (int i = 0; i < v->n_args && i < AKG_GRAPH_MAX_ARGS; i++)
        if (v->args[i].kind == AKG_GRAPH_ARG_VALUE)
            operands[i] = names[v->args[i].value];
    return akg_graph_op_render_operands(g, v, operands, out, len, why);
}

/* float -> integer casts truncate toward zero in PyTorch; the sketch's cast rounds */
static void truncate_text(const char *a, const char *to, char *out, size_t len)
{
    snprintf(out, len, "cast(where(lt(%s, 0.0), neg(floor(neg(%s))), floor(%s)), %s)", a, a, a, to);
}

static int render_cast(const akg_graph *g, const akg_graph_value *v, const char *a, char *out,
                       size_t len, const char **why)
{
    const char *to = akg_graph_attr_string(v, "dtype");
    const char *from = g->values[v->args[0].value].dtype;
    if (!to || dtype_order(to) < 0 || dtype_order(from) < 0) {
        *why = "a cast between dtypes other than bool, integers and floats";
        return -1;
    }
    if (!strcmp(from, "bool") && !strcmp(to, "f32"))
        snprintf(out, len, "where(%s, 1.0, 0.0)", a);
    else if (dtype_is_float(from) && !dtype_is_float(to) && strcmp(to, "bool"))
        truncate_text(a, to, out, len);
    else
        snprintf(out, len, "cast(%s, %s)", a, to);
    return 0;
}

/* The sketch expression of elementwise op v over its operands' texts, into out; 0, or -1
 * with *why set. */
int akg_graph_op_render_operands(const akg_graph *g, const akg_graph_value *v,
                                 const char *const *operands, char *out, size_t len,
                                 const char **why)
{
    char a[3][96];
    int na = v->n_args;
    if (na > 3 || na < 1) {
        *why = "an unexpected number of operands";
        return -1;
    }
    if (!strcmp(v->op, "pow") && !dtype_is_float(v->dtype)) {
        *why = "an integer power (pow is designed on floating tensors)";
        return -1;
    }
    for (int i = 0; i < na; i++) {
        const akg_graph_arg *arg = &v->args[i];
        const char *dt = operand_dtype(g, v, i);
        if (arg->kind == AKG_GRAPH_ARG_NONE) {
            *why = "an operand that is None";
            return -1;
        }
        if (arg->kind == AKG_GRAPH_ARG_NUMBER) {
            if (number_literal(arg->number, dt, a[i], sizeof a[i], why))
                return -1;
            continue;
        }
        if (!operands[i] || !operands[i][0]) {
            *why = "an operand the kernel cannot read here";
            return -1;
        }
        const char *from = g->values[arg->value].dtype;
        if (!strcmp(v->op, "cast") || !strcmp(from, dt))
            snprintf(a[i], sizeof a[i], "%s", operands[i]);
        else if (dtype_order(from) < 0 || dtype_order(dt) < 0) {
            *why = "an operand of a dtype other than bool, integers and floats";
            return -1;
        } else if (dtype_is_float(from) && !dtype_is_float(dt) && strcmp(dt, "bool"))
            truncate_text(operands[i], dt, a[i], sizeof a[i]);
        else
            snprintf(a[i], sizeof a[i], "cast(%s, %s)", operands[i], dt);
    }
    if (!strcmp(v->op, "where")) {
        if (na != 3) {
            *why = "where without three operands";
            return -1;
        }
        snprintf(out, len, "where(%s, %s, %s)", a[0], a[1], a[2]);
        return 0;
    }
    if (!strcmp(v->op, "remainder")) {
        if (na != 2) {
            *why = "a binary op without two operands";
            return -1;
        }
        /* the sketch's % on tiles is Python's: the sign of the divisor, as torch.remainder */
        snprintf(out, len, "%s %% %s", a[0], a[1]);
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
        if (number_literal(has_lo ? lo : 0, v->dtype, l, sizeof l, why) ||
            number_literal(has_hi ? hi : 0, v->dtype, h, sizeof h, why))
            return -1;
        if (has_lo && has_hi)
            snprintf(out, len, "clamp(%s, %s, %s)", a[0], l, h);
        else if (has_lo)
            snprintf(out, len, "maximum(%s, %s)", a[0], l);
        else if (has_hi)
            snprintf(out, len, "minimum(%s, %s)", a[0], h);
        else
            snprintf(out, len, "cast(%s, %s)", a[0], v->dtype);
        return 0;
    }
    if (!strcmp(v->op, "cast"))
        return render_cast(g, v, a[0], out, len, why);
    if (u->n_attrs && !dtype_is_float(v->dtype)) {
        *why = "an activation with parameters on an integer tensor";
        return -1;
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
