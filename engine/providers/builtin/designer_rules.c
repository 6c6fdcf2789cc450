/*
 * designer_rules.c: the built-in provider's Designer.
 *
 * It reads forward's statements as data flow from one input tensor: each
 * statement must apply a recognised op to a value that already flows from the
 * input; anything else (arithmetic between tensors, a call we do not know,
 * control flow) stops the design with a message naming the construct and its
 * line, and pointing to the LLM providers. Recognised chains of pointwise ops
 * are fused into one pass; a softmax/log_softmax becomes a row-wise design
 * over the (outer, dim, inner) view of the input.
 *
 * Scalar parameters (negative_slope, alpha, min_val, ...) are resolved to a
 * constant or to an argument of Model's constructor, so that ModelNew, built
 * with other arguments, still computes the same function as Model.
 *
 * On a numerical failure routed back by the Conductor, the next attempt uses
 * libm instead of the fast polynomial maths; the tunables shrink so that a
 * second design differs in more than one place. On a verified kernel slower
 * than wanted (feedback class "slow", with every sketch tried), the next
 * design is the first untried of: pow by a small constant strength-reduced
 * (x**3 as x*x*x, x**2 as a square, x**0.5 as sqrt, negative powers through a
 * reciprocal), then other block sizes (rows per task for softmax); with none
 * left the Designer says so and the job keeps its fastest kernel.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "designer_gpu.h"
#include "designer_graph.h"
#include "rule_util.h"

/* Ops applied to one tensor with named scalar parameters after it. */
typedef struct {
    const char *op;
    const char *scalars[3]; /* names, in positional order after the input */
    double defaults[3];
    int n;
} pointwise_rule;

static const pointwise_rule pointwise_rules[] = {
    {"relu", {0}, {0}, 0},
    {"leaky_relu", {"negative_slope"}, {0.01}, 1},
    {"sigmoid", {0}, {0}, 0},
    {"tanh", {0}, {0}, 0},
    {"gelu", {0}, {0}, 0},
    {"silu", {0}, {0}, 0},
    {"softplus", {"beta", "threshold"}, {1.0, 20.0}, 2},
    {"elu", {"alpha"}, {1.0}, 1},
    {"celu", {"alpha"}, {1.0}, 1},
    {"selu", {0}, {0}, 0},
    {"hardtanh", {"min_val", "max_val"}, {-1.0, 1.0}, 2},
    {"hardsigmoid", {0}, {0}, 0},
    {"hardswish", {0}, {0}, 0},
    {"softsign", {0}, {0}, 0},
    {"relu6", {0}, {0}, 0},
    {"mish", {0}, {0}, 0},
    {"exp", {0}, {0}, 0},
    {"log", {0}, {0}, 0},
    {"sqrt", {0}, {0}, 0},
    {"rsqrt", {0}, {0}, 0},
    {"abs", {0}, {0}, 0},
    {"neg", {0}, {0}, 0},
    {"sin", {0}, {0}, 0},
    {"cos", {0}, {0}, 0},
    {"square", {0}, {0}, 0},
    {"reciprocal", {0}, {0}, 0},
    {"sign", {0}, {0}, 0},
    {"erf", {0}, {0}, 0},
    {"clamp", {"min", "max"}, {-INFINITY, INFINITY}, 2},
};

static const pointwise_rule *find_rule(const char *op)
{
    for (size_t i = 0; i < sizeof pointwise_rules / sizeof pointwise_rules[0]; i++)
        if (strcmp(pointwise_rules[i].op, op) == 0)
            return &pointwise_rules[i];
    return NULL;
}

/* torch spellings of the same op. */
static const char *normalise_op(const char *op)
{
    static const struct {
        const char *from, *to;
    } aliases[] = {
        {"negative", "neg"},       {"clip", "clamp"},  {"absolute", "abs"},
        {"multiply", "mul"},       {"divide", "div"},  {"true_divide", "div"},
        {"subtract", "sub"},       {"maximum", "max"}, {"minimum", "min"},
        {"hardtanh_", "hardtanh"}, {"relu_", "relu"},  {"sigmoid_", "sigmoid"},
    };
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(op, aliases[i].from) == 0)
            return aliases[i].to;
    return op;
}

typedef struct {
    const akg_reference *ref;
    const cJSON *probe;
    char *err;
    size_t errlen;
    akg_range *where;
    akg_design *d;
    /* softmax, when forward ends in one */
    int softmax; /* 0 none, 1 softmax, 2 log_softmax */
    int softmax_node;
    akg_scalar dim;
} design_ctx;

static int unsupported(design_ctx *c, akg_range r, const char *fmt, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    return akg_rule_unsupported(c->ref, r, c->where, c->err, c->errlen, msg);
}

/* A numeric scalar: a literal, a constructor argument or self.<attr> (see
 * rule_util.h). Strings and None are not numbers here. Returns AKG_EINVAL
 * (without a message) when e is not one, so callers can try it as a tensor. */
static int resolve_scalar(design_ctx *c, const akg_expr *e, const char *name, akg_scalar *out,
                          int depth)
{
    (void)depth;
    const char *str = NULL;
    int rc = akg_rule_scalar(c->ref, c->probe, e, name, out, &str);
    return rc == AKG_OK && str ? AKG_EINVAL : rc;
}

#define call_arg akg_rule_arg

/* ---------- building the SSA ---------- */

static int add_node(design_ctx *c, akg_pw_node n, akg_range r)
{
    akg_design *d = c->d;
    /* constants and inputs are shared */
    for (int i = 0; i < d->n_nodes; i++) {
        const akg_pw_node *m = &d->nodes[i];
        if (m->kind != n.kind)
            continue;
        if ((n.kind == AKG_PW_CONST && m->value == n.value) ||
            (n.kind == AKG_PW_INPUT && m->input == n.input) ||
            (n.kind == AKG_PW_SCALAR && m->scalar == n.scalar))
            return i;
    }
    if (d->n_nodes >= AKG_DESIGN_MAX_NODES)
        return unsupported(c, r, "%s", "more than 64 elementwise steps");
    d->nodes[d->n_nodes] = n;
    return d->n_nodes++;
}

static int scalar_node(design_ctx *c, const akg_scalar *s, akg_range r)
{
    akg_pw_node n = {0};
    if (s->source == AKG_SCALAR_CONST) {
        n.kind = AKG_PW_CONST;
        n.value = s->value;
        return add_node(c, n, r);
    }
    akg_design *d = c->d;
    int idx = -1;
    for (int i = 0; i < d->n_scalars; i++)
        if (d->scalars[i].source == AKG_SCALAR_INIT_PARAM &&
            strcmp(d->scalars[i].init_name, s->init_name) == 0)
            idx = i;
    if (idx < 0) {
        if (d->n_scalars >= (int)(sizeof d->scalars / sizeof d->scalars[0]))
            return unsupported(c, r, "%s", "too many scalar parameters");
        idx = d->n_scalars++;
        d->scalars[idx] = *s;
        snprintf(d->scalars[idx].name, sizeof d->scalars[idx].name, "%s", s->init_name);
    }
    n.kind = AKG_PW_SCALAR;
    n.scalar = idx;
    return add_node(c, n, r);
}

static int op_node(design_ctx *c, const char *op, const int *args, int n_args, akg_range r)
{
    akg_pw_node n = {0};
    n.kind = AKG_PW_OP;
    snprintf(n.op, sizeof n.op, "%s", op);
    for (int i = 0; i < n_args; i++)
        n.args[i] = args[i];
    n.n_args = n_args;
    return add_node(c, n, r);
}

static int is_tensor_node(const design_ctx *c, int n)
{
    const akg_pw_node *m = &c->d->nodes[n];
    return m->kind == AKG_PW_INPUT || m->kind == AKG_PW_OP;
}

typedef struct {
    char name[64];
    int node;
} binding;

#define MAX_BINDINGS 64

typedef struct {
    binding b[MAX_BINDINGS];
    int n;
} env;

static int env_get(env *e, const char *name)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (strcmp(e->b[i].name, name) == 0)
            return e->b[i].node;
    return -1;
}

/* Evaluates e to a node index (>= 0), or returns a negative status after
 * filling the message. */
static int eval(design_ctx *c, env *vars, const akg_expr *e, int depth);

static int eval_scalar_or_tensor(design_ctx *c, env *vars, const akg_expr *e, const char *name,
                                 int depth)
{
    akg_scalar s;
    int rc = resolve_scalar(c, e, name, &s, 0);
    if (rc == AKG_OK)
        return scalar_node(c, &s, e->range);
    if (rc != AKG_EINVAL)
        return rc;
    return eval(c, vars, e, depth + 1);
}

const char *akg_pointwise_binop(const char *op)
{
    static const char *const names[][2] = {
        {"+", "add"}, {"-", "sub"}, {"*", "mul"}, {"/", "div"}, {"**", "pow"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(op, names[i][0]))
            return names[i][1];
    return NULL;
}

static int eval_call(design_ctx *c, env *vars, const akg_expr *call, int depth)
{
    const char *op = normalise_op(call->name ? call->name : "");
    const akg_ref_layer *layer = NULL;
    const akg_expr *tensor_arg;
    /* where scalar arguments are read from, and the positional index of the first */
    const akg_expr *scalar_src = call;
    size_t scalar_first = 1;
    if (call->is_layer) {
        layer = akg_reference_layer(c->ref, call->callee + 5);
        tensor_arg = call_arg(call, 0, "input");
        scalar_src = layer ? layer->ctor : NULL;
        scalar_first = 0;
    } else {
        /* method calls carry the receiver as args[0], like the functional form */
        tensor_arg = call_arg(call, 0, "input");
    }
    if (!tensor_arg)
        return unsupported(c, call->range, "%s has no tensor argument", call->text);

    /* binary functional forms: torch.add(x, y), torch.maximum(x, y), x.mul(2) */
    if (!layer &&
        (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul") || !strcmp(op, "div") ||
         !strcmp(op, "max") || !strcmp(op, "min") || !strcmp(op, "pow"))) {
        const akg_expr *other = call_arg(call, 1, "other");
        if (!other && !strcmp(op, "pow"))
            other = call_arg(call, 1, "exponent");
        if (!other)
            return unsupported(c, call->range, "%s (a reduction, not elementwise)", call->text);
        int a = eval_scalar_or_tensor(c, vars, tensor_arg, "a", depth);
        if (a < 0)
            return a;
        int b = eval_scalar_or_tensor(c, vars, other, "b", depth);
        if (b < 0)
            return b;
        int args[2] = {a, b};
        return op_node(c, op, args, 2, call->range);
    }
    if (!strcmp(op, "softmax") || !strcmp(op, "log_softmax")) {
        const akg_expr *dexpr = call_arg(scalar_src, scalar_first, "dim");
        if (!dexpr)
            return unsupported(c, call->range, "%s without dim=", call->text);
        if (c->softmax)
            return unsupported(c, call->range, "%s: a second softmax", call->text);
        int rc = resolve_scalar(c, dexpr, "dim", &c->dim, 0);
        if (rc)
            return unsupported(c, dexpr->range, "cannot tell the value of dim=%s", dexpr->text);
        int x = eval(c, vars, tensor_arg, depth + 1);
        if (x < 0)
            return x;
        c->softmax = !strcmp(op, "softmax") ? 1 : 2;
        c->softmax_node = x;
        akg_pw_node marker = {0};
        marker.kind = AKG_PW_OP;
        snprintf(marker.op, sizeof marker.op, "%s", op);
        marker.args[0] = x;
        marker.n_args = 1;
        return add_node(c, marker, call->range);
    }
    const pointwise_rule *rule = find_rule(op);
    if (!rule)
        return unsupported(c, call->range, "forward calls %s", call->callee ? call->callee : op);
    int x = eval(c, vars, tensor_arg, depth + 1);
    if (x < 0)
        return x;
    int args[3] = {x, 0, 0};
    for (int i = 0; i < rule->n; i++) {
        const akg_expr *a = call_arg(scalar_src, scalar_first + (size_t)i, rule->scalars[i]);
        akg_scalar s;
        if (!a) {
            memset(&s, 0, sizeof s);
            s.source = AKG_SCALAR_CONST;
            s.value = rule->defaults[i];
        } else {
            int rc = resolve_scalar(c, a, rule->scalars[i], &s, 0);
            if (rc == AKG_EINVAL)
                return unsupported(c, a->range, "cannot tell the value of %s", a->text);
            if (rc)
                return rc;
        }
        int sn = scalar_node(c, &s, call->range);
        if (sn < 0)
            return sn;
        args[1 + i] = sn;
    }
    const char *name = op;
    if (!strcmp(op, "gelu")) {
        const akg_expr *ap = call_arg(scalar_src, 99, "approximate");
        if (ap && ap->kind == AKG_EX_STRING && ap->name && !strcmp(ap->name, "tanh"))
            name = "gelu_tanh";
        else if (ap && !(ap->kind == AKG_EX_STRING && ap->name && !strcmp(ap->name, "none")))
            return unsupported(c, ap->range, "gelu approximate=%s", ap->text);
    }
    return op_node(c, name, args, 1 + rule->n, call->range);
}

static int eval(design_ctx *c, env *vars, const akg_expr *e, int depth)
{
    if (!e)
        return unsupported(c, (akg_range){0, 0, 0, 0}, "%s", "an empty expression");
    if (depth > 64)
        return unsupported(c, e->range, "%s", "an expression nested too deep");
    switch (e->kind) {
    case AKG_EX_NAME: {
        int n = env_get(vars, e->name);
        if (n >= 0)
            return n;
        akg_scalar s;
        if (resolve_scalar(c, e, "s", &s, 0) == AKG_OK)
            return scalar_node(c, &s, e->range);
        return unsupported(c, e->range, "%s is not an input of forward", e->name);
    }
    case AKG_EX_NUMBER:
    case AKG_EX_BOOL: {
        akg_pw_node n = {0};
        n.kind = AKG_PW_CONST;
        n.value = e->number;
        return add_node(c, n, e->range);
    }
    case AKG_EX_ATTR: {
        akg_scalar s;
        int rc = resolve_scalar(c, e, e->name ? e->name : "s", &s, 0);
        if (rc == AKG_OK)
            return scalar_node(c, &s, e->range);
        return unsupported(c, e->range, "%s", e->text);
    }
    case AKG_EX_CALL:
        return eval_call(c, vars, e, depth);
    case AKG_EX_UNARY: {
        if (e->name && !strcmp(e->name, "-") && e->n_args == 1) {
            int a = eval(c, vars, e->args[0], depth + 1);
            if (a < 0)
                return a;
            return op_node(c, "neg", &a, 1, e->range);
        }
        if (e->name && !strcmp(e->name, "+") && e->n_args == 1)
            return eval(c, vars, e->args[0], depth + 1);
        return unsupported(c, e->range, "%s", e->text);
    }
    case AKG_EX_BINOP: {
        const char *op = e->name ? akg_pointwise_binop(e->name) : NULL;
        if (!op || e->n_args != 2)
            return unsupported(c, e->range, "the operator in %s", e->text);
        int a = eval(c, vars, e->args[0], depth + 1);
        if (a < 0)
            return a;
        int b = eval(c, vars, e->args[1], depth + 1);
        if (b < 0)
            return b;
        int args[2] = {a, b};
        return op_node(c, op, args, 2, e->range);
    }
    default:
        return unsupported(c, e->range, "%s", e->text ? e->text : "expression");
    }
}

/* ---------- sketches ---------- */

static void sketch_node_ref(akg_buf *b, const akg_design *d, int n)
{
    const akg_pw_node *m = &d->nodes[n];
    if (m->kind == AKG_PW_CONST)
        akg_buf_appendf(b, "%.9g", m->value);
    else if (m->kind == AKG_PW_SCALAR)
        akg_buf_appendf(b, "%s", d->scalars[m->scalar].name);
    else
        akg_buf_appendf(b, "t%d", n);
}

/* The probed rank of forward's input `input` (0 for a scalar tensor). */
static int probed_rank(const cJSON *probe, int input)
{
    const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "inputs"), input);
    return cJSON_GetArraySize(cJSON_GetObjectItem(in, "shape"));
}

/* "[D0, D1, D2]" for rank 3 */
static void dims_list(akg_buf *b, int rank)
{
    akg_buf_puts(b, "[");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(b, "%sD%d", i ? ", " : "", i);
    akg_buf_puts(b, "]");
}

static char *pointwise_sketch(const akg_design *d, const akg_reference *ref, const cJSON *probe)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    int rank = d->n_inputs ? probed_rank(probe, d->inputs[0]) : 0;
    akg_buf_appendf(&b,
                    "# %s: one fused elementwise pass over the flattened inputs (N elements),\n",
                    d->op_name);
    if (d->gpu)
        akg_buf_puts(&b, "# for a GPU: BLOCK elements per program, one program per block on the "
                         "grid\n");
    else
        akg_buf_puts(&b, "# BLOCK elements per task, tasks split across the cores\n");
    if (d->pow_reduced)
        akg_buf_puts(&b, "# pow by a small constant computed with multiplies, sqrt or recip\n");
    akg_buf_appendf(&b, "sketch %s {\n", d->op_name);
    akg_buf_puts(&b, "  symbols: N");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(&b, ", D%d", i);
    akg_buf_puts(&b, ";\n  tensors: ");
    for (int i = 0; i < d->n_inputs; i++)
        akg_buf_appendf(&b, "%s[N]: f32; ", ref->forward_params[d->inputs[i]].name);
    akg_buf_puts(&b, "out[N]: f32;\n");
    if (d->n_scalars) {
        akg_buf_puts(&b, "  params: ");
        for (int i = 0; i < d->n_scalars; i++)
            akg_buf_appendf(&b, "%s%s: f32 = %.9g", i ? ", " : "", d->scalars[i].name,
                            d->scalars[i].value);
        akg_buf_puts(&b, ";\n");
    }
    /* the first candidate of a tunable is the design's choice */
    akg_buf_appendf(&b, "  constexpr: BLOCK = tune(%ld", d->block);
    static const long blocks[] = {4096, 16384, 65536};
    const long *cands = d->gpu ? akg_gpu_blocks : blocks;
    for (size_t i = 0; i < 3; i++)
        if (cands[i] != d->block)
            akg_buf_appendf(&b, ", %ld", cands[i]);
    akg_buf_puts(&b, ");\n");
    /* the binding: every input has the first one's shape, flattened */
    for (int i = 0; i < d->n_inputs; i++) {
        const char *nm = ref->forward_params[d->inputs[i]].name;
        akg_buf_appendf(&b, "  bind: %s = input(\"%s\", ", nm, nm);
        dims_list(&b, rank);
        akg_buf_puts(&b, ")");
        if (i == 0) {
            akg_buf_puts(&b, ", N = 1");
            for (int k = 0; k < rank; k++)
                akg_buf_appendf(&b, " * D%d", k);
        }
        akg_buf_puts(&b, "\n");
    }
    akg_buf_puts(&b, "  bind: out = output(0, ");
    dims_list(&b, rank);
    akg_buf_puts(&b, ")");
    for (int i = 0; i < d->n_scalars; i++)
        if (d->scalars[i].source == AKG_SCALAR_INIT_PARAM)
            akg_buf_appendf(&b, ", %s = init(\"%s\")", d->scalars[i].name, d->scalars[i].init_name);
    akg_buf_puts(&b, "\n\n");
    if (d->parallel)
        akg_buf_appendf(&b, "  @llm_hint(\"parallel\", \"%s\")\n", d->gpu ? "grididx" : "coreidx");
    if (d->math == AKG_MATH_PRECISE)
        akg_buf_puts(&b, "  @llm_hint(\"math\", \"precise\")\n");
    akg_buf_puts(&b, "  for i in range(0, N, BLOCK):\n");
    for (int n = 0; n < d->n_nodes; n++) {
        const akg_pw_node *m = &d->nodes[n];
        if (m->kind != AKG_PW_INPUT)
            continue;
        akg_buf_appendf(&b, "    t%d = alloc([BLOCK], llm_hint=[\"fastest\"])\n", n);
        akg_buf_appendf(&b, "    load(%s[i:i+BLOCK] -> t%d)\n", ref->forward_params[m->input].name,
                        n);
    }
    int first = 1;
    for (int n = 0; n < d->n_nodes; n++) {
        const akg_pw_node *m = &d->nodes[n];
        if (m->kind != AKG_PW_OP)
            continue;
        if (first && d->vectorize && !d->gpu)
            akg_buf_puts(&b, "    @llm_hint(\"vectorize\", \"simd\")\n");
        first = 0;
        if (strcmp(m->op, "clamp") == 0 && m->n_args == 3) {
            /* a missing bound (clamp(min=0): +inf above) is no bound: the other one alone */
            const akg_pw_node *lo = &d->nodes[m->args[1]], *hi = &d->nodes[m->args[2]];
            bool no_lo = lo->kind == AKG_PW_CONST && isinf(lo->value) && lo->value < 0;
            bool no_hi = hi->kind == AKG_PW_CONST && isinf(hi->value) && hi->value > 0;
            if (no_lo || no_hi) {
                akg_buf_appendf(&b, "    t%d = ", n);
                if (!no_lo || !no_hi)
                    akg_buf_puts(&b, no_hi ? "maximum(" : "minimum(");
                sketch_node_ref(&b, d, m->args[0]);
                if (!no_lo || !no_hi) {
                    akg_buf_puts(&b, ", ");
                    sketch_node_ref(&b, d, m->args[no_hi ? 1 : 2]);
                    akg_buf_puts(&b, ")");
                }
                akg_buf_puts(&b, "\n");
                continue;
            }
        }
        akg_buf_appendf(&b, "    t%d = %s(", n, m->op);
        for (int k = 0; k < m->n_args; k++) {
            if (k)
                akg_buf_puts(&b, ", ");
            sketch_node_ref(&b, d, m->args[k]);
        }
        akg_buf_puts(&b, ")\n");
    }
    akg_buf_puts(&b, "    store(");
    sketch_node_ref(&b, d, d->result);
    akg_buf_puts(&b, " -> out[i:i+BLOCK]");
    if (d->nontemporal)
        akg_buf_puts(&b, ", llm_hint=[\"nontemporal\"]");
    akg_buf_puts(&b, ")\n}\n");
    return akg_buf_take(&b);
}

/* One softmax of the sketch's body over a tile of x (a row, or CH columns): the max, then
 * the exponentials written straight to the output (their stores overlap the exp's
 * arithmetic), then their sum read back from the output while it is in cache, then the scale
 * in place. log_softmax needs no second pass over the output. */
static void softmax_body(akg_buf *b, const akg_design *d, const char *ind, const char *region,
                         const char *shape, int axis)
{
    akg_buf_appendf(b, "%st = alloc(%s)\n%sload(x[%s] -> t)\n", ind, shape, ind, region);
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n%sm = reduce_max(t, axis=%d)\n", ind,
                    ind, axis);
    if (d->log_softmax) {
        akg_buf_appendf(b,
                        "%s@llm_hint(\"vectorize\", \"simd\")\n%ss = reduce_sum(exp(sub(t, m)), "
                        "axis=%d)\n",
                        ind, ind, axis);
        akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
        akg_buf_appendf(b, "%sstore(sub(sub(t, m), log(s)) -> y[%s])\n", ind, region);
        return;
    }
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n%sstore(exp(sub(t, m)) -> y[%s])\n",
                    ind, ind, region);
    akg_buf_appendf(b, "%se = alloc(%s)\n%sload(y[%s] -> e)\n", ind, shape, ind, region);
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n%ss = reduce_sum(e, axis=%d)\n", ind,
                    ind, axis);
    akg_buf_appendf(b, "%s@llm_hint(\"vectorize\", \"simd\")\n", ind);
    akg_buf_appendf(b, "%sstore(mul(e, recip(s)) -> y[%s])\n", ind, region);
}

static char *softmax_sketch(const akg_design *d, const akg_reference *ref, const cJSON *probe)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    int in = d->n_inputs ? d->inputs[0] : 0;
    int rank = probed_rank(probe, in);
    int dim = (int)d->dim.value;
    if (dim < 0)
        dim += rank;
    if (rank == 0)
        dim = 0;
    const char *xname = ref->forward_params[in].name;
    akg_buf_appendf(&b, "# %s over dim %d: the input is viewed as [O, D, I] with D that dim\n",
                    d->op_name, (int)d->dim.value);
    akg_buf_appendf(&b, "sketch %s {\n", d->op_name);
    akg_buf_puts(&b, "  symbols: O, D, I");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(&b, ", A%d", i);
    akg_buf_puts(&b, ";\n  tensors: x[O, D, I]: f32; y[O, D, I]: f32;\n");
    if (d->gpu)
        akg_gpu_softmax_constexprs(&b, d);
    else
        akg_buf_appendf(&b, "  constexpr: CH = tune(%ld, 16, 256)",
                        d->rows > 0 ? d->rows * 16 : 64);
    if (d->dim.source == AKG_SCALAR_INIT_PARAM)
        akg_buf_appendf(&b, ", DIM = %d", (int)d->dim.value);
    akg_buf_puts(&b, ";\n");
    akg_buf_appendf(&b, "  bind: x = input(\"%s\", [", xname);
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(&b, "%sA%d", i ? ", " : "", i);
    akg_buf_puts(&b, "]), O = 1");
    for (int i = 0; i < dim; i++)
        akg_buf_appendf(&b, " * A%d", i);
    if (rank)
        akg_buf_appendf(&b, ", D = A%d", dim);
    else
        akg_buf_puts(&b, ", D = 1");
    akg_buf_puts(&b, ", I = 1");
    for (int i = dim + 1; i < rank; i++)
        akg_buf_appendf(&b, " * A%d", i);
    akg_buf_puts(&b, "\n  bind: y = output(0, [");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(&b, "%sA%d", i ? ", " : "", i);
    akg_buf_puts(&b, "])");
    if (d->dim.source == AKG_SCALAR_INIT_PARAM)
        akg_buf_appendf(&b, ", DIM = init(\"%s\")", d->dim.init_name);
    akg_buf_puts(&b, "\n\n");
    if (d->gpu) {
        akg_gpu_softmax_body(&b, d);
        return akg_buf_take(&b);
    }
    const char *par = d->parallel ? "@llm_hint(\"parallel\", \"coreidx\")\n" : "";
    if (d->math == AKG_MATH_PRECISE)
        akg_buf_puts(&b, "  @llm_hint(\"math\", \"precise\")\n");
    akg_buf_puts(&b, "  if I == 1:\n");
    akg_buf_puts(&b, "    # contiguous rows, one per task: the row's max, exp (kept) and its sum, "
                     "then the scale\n");
    if (par[0])
        akg_buf_appendf(&b, "    %s", par);
    akg_buf_puts(&b, "    for o in range(0, O):\n");
    softmax_body(&b, d, "      ", "o, :, 0", "[D]", 0);
    akg_buf_puts(&b, "  else:\n");
    akg_buf_puts(&b, "    # strided: CH columns at a time, vectorised along them\n");
    if (par[0])
        akg_buf_appendf(&b, "    %s", par);
    akg_buf_puts(&b, "    for o in range(0, O):\n");
    if (par[0])
        akg_buf_appendf(&b, "      %s", par);
    akg_buf_puts(&b, "      for c in range(0, I, CH):\n");
    softmax_body(&b, d, "        ", "o, :, c:c+CH", "[D, CH]", 0);
    akg_buf_puts(&b, "}\n");
    return akg_buf_take(&b);
}

static void name_design(akg_design *d)
{
    akg_buf name;
    akg_buf_init(&name, sizeof d->op_name - 1);
    int count = 0;
    for (int n = 0; n < d->n_nodes; n++) {
        const akg_pw_node *m = &d->nodes[n];
        if (m->kind != AKG_PW_OP)
            continue;
        if (akg_buf_appendf(&name, "%s%s", count ? "_" : "", m->op) != AKG_OK)
            break;
        count++;
    }
    snprintf(d->op_name, sizeof d->op_name, "%s",
             akg_buf_status(&name) == AKG_OK && name.data ? name.data : "pointwise");
    akg_buf_free(&name);
}

/* pow(x, c) that a few multiplies, a square root or a reciprocal compute exactly enough: c in
 * +-2..4, -1, +-0.5. */
static int pow_reducible(double c)
{
    double k = fabs(c);
    return c == 0.5 || c == -0.5 || c == -1 || (k >= 2 && k <= 4 && k == floor(k));
}

static int push_node(akg_pw_node *out, int *n, const char *op, int a, int b)
{
    if (*n >= AKG_DESIGN_MAX_NODES)
        return -1;
    akg_pw_node m = {0};
    m.kind = AKG_PW_OP;
    snprintf(m.op, sizeof m.op, "%s", op);
    m.args[0] = a;
    m.args[1] = b;
    m.n_args = b < 0 ? 1 : 2;
    out[*n] = m;
    return (*n)++;
}

/* Rewrites d's pow nodes with a reducible constant exponent: x**2 as mul(x, x), x**3 as
 * mul(mul(x, x), x), x**4 as the square's square, a negative exponent as the reciprocal of the
 * positive one, x**0.5 as sqrt and x**-0.5 as rsqrt. Returns how many were rewritten (d is
 * unchanged when none was, or when the program would pass AKG_DESIGN_MAX_NODES). */
static int strength_reduce_pow(akg_design *d)
{
    akg_pw_node out[AKG_DESIGN_MAX_NODES];
    int map[AKG_DESIGN_MAX_NODES];
    int n = 0, reduced = 0;
    for (int i = 0; i < d->n_nodes; i++) {
        const akg_pw_node *m = &d->nodes[i];
        const akg_pw_node *e =
            m->kind == AKG_PW_OP && m->n_args == 2 ? &d->nodes[m->args[1]] : NULL;
        if (e && strcmp(m->op, "pow") == 0 && e->kind == AKG_PW_CONST && pow_reducible(e->value)) {
            int x = map[m->args[0]], y;
            double c = e->value;
            if (c == 0.5 || c == -0.5) {
                y = push_node(out, &n, c > 0 ? "sqrt" : "rsqrt", x, -1);
            } else {
                int k = (int)fabs(c);
                y = k == 1 ? x : push_node(out, &n, "mul", x, x);
                if (y >= 0 && k == 3)
                    y = push_node(out, &n, "mul", y, x);
                else if (y >= 0 && k == 4)
                    y = push_node(out, &n, "mul", y, y);
                if (y >= 0 && c < 0)
                    y = push_node(out, &n, "recip", y, -1);
            }
            if (y < 0)
                return 0;
            map[i] = y;
            reduced++;
            continue;
        }
        if (n >= AKG_DESIGN_MAX_NODES)
            return 0;
        out[n] = *m;
        if (m->kind == AKG_PW_OP)
            for (int k = 0; k < m->n_args; k++)
                out[n].args[k] = map[m->args[k]];
        map[i] = n++;
    }
    if (!reduced)
        return 0;
    memcpy(d->nodes, out, (size_t)n * sizeof out[0]);
    d->result = map[d->result];
    d->n_nodes = n;
    d->pow_reduced = reduced;
    return reduced;
}

/* Whether the Conductor's feedback lists text among the sketches already tried. */
static int sketch_tried(const cJSON *feedback, const char *text)
{
    const cJSON *t;
    cJSON_ArrayForEach(t, cJSON_GetObjectItem(feedback, "tried"))
    {
        const char *s = cJSON_GetStringValue(t);
        if (s && strcmp(s, text) == 0)
            return 1;
    }
    return 0;
}

/* The answer to a slow kernel: the first design of d's variants (strength reduction first,
 * then the other tunables) whose sketch was not tried. d holds the first design, without its
 * sketch; on success it holds the variant and its sketch. AKG_ENOTFOUND: none is left. */
static int answer_slow(akg_design *d, const akg_reference *ref, const cJSON *probe,
                       const cJSON *feedback, char *err, size_t errlen)
{
    akg_design *base = malloc(sizeof *base);
    if (!base)
        return AKG_ENOMEM;
    *base = *d;
    akg_design probe_copy = *d;
    int can_reduce = d->kind == AKG_DESIGN_POINTWISE && strength_reduce_pow(&probe_copy) > 0;
    long pointwise[] = {d->block, d->block == 65536 ? 16384 : 65536, 4096};
    long rows[] = {d->rows, d->rows == 1 ? 4 : 1, 16};
    if (d->gpu) {
        /* the GPU's candidates, the design's first */
        for (int v = 0, k = 0; v < 3; v++)
            if (akg_gpu_blocks[v] != d->block && k < 2)
                pointwise[1 + k++] = akg_gpu_blocks[v];
        for (int v = 0, k = 0; v < 3; v++)
            if (akg_gpu_rows[v] != d->rows && k < 2)
                rows[1 + k++] = akg_gpu_rows[v];
    }
    for (int reduce = can_reduce; reduce >= 0; reduce--) {
        for (int v = 0; v < 3; v++) {
            *d = *base;
            if (reduce)
                strength_reduce_pow(d);
            if (d->kind == AKG_DESIGN_POINTWISE)
                d->block = pointwise[v];
            else
                d->rows = rows[v];
            char *text = d->kind == AKG_DESIGN_POINTWISE ? pointwise_sketch(d, ref, probe)
                                                         : softmax_sketch(d, ref, probe);
            if (!text) {
                free(base);
                return AKG_ENOMEM;
            }
            if (!sketch_tried(feedback, text)) {
                d->sketch_text = text;
                free(base);
                return AKG_OK;
            }
            free(text);
        }
    }
    *d = *base;
    free(base);
    char tried[96];
    if (d->kind == AKG_DESIGN_POINTWISE)
        snprintf(tried, sizeof tried, "block sizes %ld, %ld and %ld", pointwise[0], pointwise[1],
                 pointwise[2]);
    else
        snprintf(tried, sizeof tried, "%ld, %ld and %ld rows per %s", rows[0], rows[1], rows[2],
                 d->gpu ? "program" : "task");
    snprintf(err, errlen, "the built-in Designer has no other design for %s: %s%s were tried",
             d->op_name, can_reduce ? "pow strength-reduced and as written, each with " : "",
             tried);
    return AKG_ENOTFOUND;
}

static int input_shape_equal(const cJSON *probe, int a, int b)
{
    const cJSON *in = cJSON_GetObjectItem(probe, "inputs");
    const cJSON *sa = cJSON_GetObjectItem(cJSON_GetArrayItem(in, a), "shape");
    const cJSON *sb = cJSON_GetObjectItem(cJSON_GetArrayItem(in, b), "shape");
    return sa && sb && cJSON_Compare(sa, sb, 1);
}

static int design_pointwise(int gpu, const akg_reference *ref, const cJSON *probe,
                            const cJSON *feedback, int attempt, akg_design **out, akg_range *where,
                            char *err, size_t errlen)
{
    *out = NULL;
    akg_design *d = calloc(1, sizeof *d);
    env *vars = calloc(1, sizeof *vars);
    if (!d || !vars) {
        free(d);
        free(vars);
        return AKG_ENOMEM;
    }
    design_ctx c = {0};
    c.ref = ref;
    c.probe = probe;
    c.err = err;
    c.errlen = errlen;
    c.where = where;
    c.d = d;
    c.softmax_node = -1;
    for (size_t i = 0; i < ref->n_forward_params && vars->n < MAX_BINDINGS; i++) {
        binding *b = &vars->b[vars->n++];
        snprintf(b->name, sizeof b->name, "%s", ref->forward_params[i].name);
        akg_pw_node n = {0};
        n.kind = AKG_PW_INPUT;
        n.input = (int)i;
        b->node = add_node(&c, n, ref->forward_range);
    }
    int result = -1, rc = AKG_OK;
    for (size_t i = 0; i < ref->n_body && !rc; i++) {
        const akg_ref_stmt *st = &ref->body[i];
        if (st->kind == AKG_STMT_ASSIGN) {
            int n = eval(&c, vars, st->value, 0);
            if (n < 0) {
                rc = n;
                break;
            }
            if (vars->n >= MAX_BINDINGS) {
                rc = unsupported(&c, st->range, "%s", "more than 64 assignments");
                break;
            }
            binding *b = &vars->b[vars->n++];
            snprintf(b->name, sizeof b->name, "%s", st->target);
            b->node = n;
        } else if (st->kind == AKG_STMT_RETURN) {
            if (!st->value) {
                rc = unsupported(&c, st->range, "%s", "forward returns nothing");
                break;
            }
            int n = eval(&c, vars, st->value, 0);
            if (n < 0)
                rc = n;
            else
                result = n;
            break;
        } else {
            rc = unsupported(&c, st->range, "the statement `%s`", st->text ? st->text : "?");
        }
    }
    free(vars);
    if (!rc && result < 0)
        rc = unsupported(&c, ref->forward_range, "%s", "forward has no return");
    if (!rc && !is_tensor_node(&c, result))
        rc = unsupported(&c, ref->forward_range, "%s", "forward returns a scalar");
    if (!rc && d->nodes[result].kind == AKG_PW_INPUT)
        rc = unsupported(&c, ref->forward_range, "%s", "forward returns its input unchanged");
    if (rc) {
        free(d);
        return rc;
    }

    /* which inputs are read, and do they share one shape (no broadcasting yet) */
    for (int n = 0; n <= result; n++)
        if (d->nodes[n].kind == AKG_PW_INPUT && d->n_inputs < AKG_DESIGN_MAX_INPUTS)
            d->inputs[d->n_inputs++] = d->nodes[n].input;
    char dtype[16];
    d->rank = -1;
    for (int i = 0; i < d->n_inputs; i++) {
        const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "inputs"), d->inputs[i]);
        const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(in, "dtype"));
        snprintf(dtype, sizeof dtype, "%s", dt ? dt : "?");
        if (strcmp(dtype, "float32") != 0) {
            free(d);
            return unsupported(&c, ref->get_inputs_range,
                               "an input of dtype %s (float32 only for now)", dtype);
        }
        if (i > 0 && !input_shape_equal(probe, d->inputs[0], d->inputs[i])) {
            free(d);
            return unsupported(&c, ref->forward_range, "%s",
                               "inputs of different shapes (broadcasting is not designed yet)");
        }
        const cJSON *shape = cJSON_GetObjectItem(in, "shape");
        d->rank = cJSON_GetArraySize(shape);
    }
    snprintf(d->dtype, sizeof d->dtype, "float32");

    const char *fb_class = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    int numeric_retry = fb_class && (strcmp(fb_class, "numerical_mismatch") == 0 ||
                                     strcmp(fb_class, "shape_mismatch") == 0);
    int slow_retry = fb_class && strcmp(fb_class, "slow") == 0;
    d->math = numeric_retry ? AKG_MATH_PRECISE : AKG_MATH_FAST;
    d->gpu = gpu;
    d->parallel = 1;
    d->vectorize = 1;
    (void)attempt;
    if (c.softmax) {
        const akg_pw_node *last = &d->nodes[result];
        if (last->kind != AKG_PW_OP || strstr(last->op, "softmax") == NULL ||
            d->nodes[c.softmax_node].kind != AKG_PW_INPUT) {
            free(d);
            return unsupported(&c, ref->forward_range, "%s",
                               "a softmax combined with other elementwise ops (not fused yet)");
        }
        d->kind = AKG_DESIGN_SOFTMAX;
        d->log_softmax = c.softmax == 2;
        d->dim = c.dim;
        d->rows = gpu ? akg_gpu_rows[0] : numeric_retry ? 1 : 4;
        d->n_inputs = 1;
        d->inputs[0] = d->nodes[c.softmax_node].input;
        snprintf(d->op_name, sizeof d->op_name, "%s", d->log_softmax ? "log_softmax" : "softmax");
        if (!slow_retry)
            d->sketch_text = softmax_sketch(d, ref, probe);
    } else {
        d->kind = AKG_DESIGN_POINTWISE;
        d->result = result;
        d->n_nodes = result + 1; /* nodes after the result are dead */
        d->block = gpu ? akg_gpu_blocks[0] : numeric_retry ? 4096 : 16384;
        /* Plain stores. Streaming ("nontemporal") stores skip the read of the
         * destination lines, but timed in blocks (the harness's protocol) they
         * measured no faster here (relu 1.10 against 1.01 ms, sigmoid 1.14
         * against 1.05 on a Zen 4): their gain under call-by-call interleaving
         * was the reference paying for the writes still draining. */
        d->nontemporal = 0;
        name_design(d);
        if (!slow_retry)
            d->sketch_text = pointwise_sketch(d, ref, probe);
    }
    if (slow_retry) {
        int src = answer_slow(d, ref, probe, feedback, err, errlen);
        if (src != AKG_OK) {
            free(d);
            return src;
        }
    }
    *out = d;
    return AKG_OK;
}

static const akg_family_rule family_rules[] = {
    akg_rules_reduction, akg_rules_norm, akg_rules_scan, akg_rules_loss,
    akg_rules_matmul,    akg_rules_conv, akg_rules_pool,
};

/* The graph Designer's message (gerr) with, before its advice, what the rules said of
 * forward's spelling (rules: "<path>:<line>: <what>; the built-in provider ..."), so that a
 * person sees both the operation and the call they wrote. */
static void graph_message(char *err, size_t errlen, const char *gerr, const char *rules)
{
    const char *advice = strstr(gerr, "; write model_new.py");
    const char *what = rules, *end = strstr(rules, "; the built-in provider");
    for (const char *p = rules; end && *p && p < end; p++) {
        if (*p != ':' || p[1] < '0' || p[1] > '9')
            continue;
        const char *q = p + 1;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q[0] == ':' && q[1] == ' ') {
            what = q + 2;
            break;
        }
    }
    if (!advice || !end || what >= end) {
        snprintf(err, errlen, "%s", gerr);
        return;
    }
    snprintf(err, errlen, "%.*s; as written, %.*s%s", (int)(advice - gerr), gerr, (int)(end - what),
             what, advice);
}

static int designer_run(int gpu, const akg_reference *ref, const cJSON *probe,
                        const cJSON *feedback, int attempt, akg_design **out, akg_range *where,
                        char *err, size_t errlen)
{
    *out = NULL;
    int rc = design_pointwise(gpu, ref, probe, feedback, attempt, out, where, err, errlen);
    if (rc != AKG_EUNSUPPORTED)
        return rc;
    /* The pointwise message names the first construct it could not read;
     * keep it unless a family rule designs the forward or says more. */
    char first[1024];
    akg_range first_where = where ? *where : (akg_range){0, 0, 0, 0};
    snprintf(first, sizeof first, "%s", err ? err : "");
    int frc = AKG_ENOTFOUND;
    for (size_t i = 0; i < sizeof family_rules / sizeof family_rules[0]; i++) {
        frc = family_rules[i](ref, probe, feedback, attempt, out, where, err, errlen);
        if (frc != AKG_ENOTFOUND)
            break;
    }
    if (frc == AKG_OK && gpu)
        return akg_gpu_redesign_family(*out, ref, probe, feedback);
    if (frc != AKG_ENOTFOUND && frc != AKG_EUNSUPPORTED)
        return frc;
    if (frc == AKG_EUNSUPPORTED) {
        /* a family rule recognised the forward and said what stops it */
        snprintf(first, sizeof first, "%s", err ? err : "");
        first_where = where ? *where : first_where;
    }
    /* What the rules cannot read in the spelling, the op graph may still design
     * (nn.Linear, x @ w.t() + b, chains after a product, broadcasting). */
    char gerr[1024] = "";
    akg_range gwhere = first_where;
    int grc = akg_designer_graph(ref, probe, feedback, attempt, out, &gwhere, gerr, sizeof gerr);
    if (grc == AKG_OK || (grc != AKG_EUNSUPPORTED && grc != AKG_ENOTFOUND))
        return grc;
    if (grc == AKG_EUNSUPPORTED && frc == AKG_ENOTFOUND) {
        /* the rules only said forward's spelling is not theirs: the graph names the
         * operation that stops the design, and the spelling they stopped at follows */
        if (err)
            graph_message(err, errlen, gerr, first);
        if (where)
            *where = gwhere;
        return AKG_EUNSUPPORTED;
    }
    if (err)
        snprintf(err, errlen, "%s", first);
    if (where)
        *where = first_where;
    return AKG_EUNSUPPORTED;
}

int akg_designer_builtin(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                         int attempt, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    return designer_run(0, ref, probe, feedback, attempt, out, where, err, errlen);
}

int akg_designer_builtin_for(const akg_design_target *target, const akg_reference *ref,
                             const cJSON *probe, const cJSON *feedback, int attempt,
                             akg_design **out, akg_range *where, char *err, size_t errlen)
{
    int gpu = target && target->backend && !strcmp(target->backend, "cuda");
    return designer_run(gpu, ref, probe, feedback, attempt, out, where, err, errlen);
}

void akg_design_free(akg_design *d)
{
    if (!d)
        return;
    cJSON_Delete(d->params);
    free(d->sketch_text);
    free(d);
}

static cJSON *scalar_json(const akg_scalar *s)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", s->name);
    cJSON_AddNumberToObject(o, "value", s->value);
    if (s->source == AKG_SCALAR_INIT_PARAM)
        cJSON_AddStringToObject(o, "from_init", s->init_name);
    return o;
}

cJSON *akg_design_to_json(const akg_design *d)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind",
                            d->kind == AKG_DESIGN_SOFTMAX  ? "softmax"
                            : d->kind == AKG_DESIGN_FAMILY ? d->family
                                                           : "pointwise");
    cJSON_AddStringToObject(o, "op", d->op_name);
    cJSON_AddStringToObject(o, "math", d->math == AKG_MATH_FAST ? "fast" : "precise");
    if (d->gpu)
        cJSON_AddStringToObject(o, "target", "gpu");
    if (d->kind == AKG_DESIGN_FAMILY) {
        if (d->params)
            cJSON_AddItemToObject(o, "params", cJSON_Duplicate(d->params, 1));
    } else if (d->kind == AKG_DESIGN_SOFTMAX) {
        cJSON_AddItemToObject(o, "dim", scalar_json(&d->dim));
        cJSON_AddNumberToObject(o, "rows", (double)d->rows);
    } else {
        cJSON_AddNumberToObject(o, "block", (double)d->block);
        cJSON *sc = cJSON_AddArrayToObject(o, "scalars");
        for (int k = 0; k < d->n_scalars; k++)
            cJSON_AddItemToArray(sc, scalar_json(&d->scalars[k]));
        cJSON_AddNumberToObject(o, "nodes", d->n_nodes);
        if (d->pow_reduced)
            cJSON_AddNumberToObject(o, "pow_reduced", d->pow_reduced);
    }
    return o;
}
