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
 * second design differs in more than one place.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"

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
    {"selu", {0}, {0}, 0},
    {"hardtanh", {"min_val", "max_val"}, {-1.0, 1.0}, 2},
    {"hardsigmoid", {0}, {0}, 0},
    {"softsign", {0}, {0}, 0},
    {"relu6", {0}, {0}, 0},
    {"hardswish", {0}, {0}, 0},
    {"mish", {0}, {0}, 0},
    {"exp", {0}, {0}, 0},
    {"abs", {0}, {0}, 0},
    {"neg", {0}, {0}, 0},
};

static const pointwise_rule *find_rule(const char *op)
{
    for (size_t i = 0; i < sizeof pointwise_rules / sizeof pointwise_rules[0]; i++)
        if (strcmp(pointwise_rules[i].op, op) == 0)
            return &pointwise_rules[i];
    return NULL;
}

/* Ops whose torch name differs from the canonical one. */
static const char *normalise_op(const char *op)
{
    if (strcmp(op, "negative") == 0)
        return "neg";
    if (strcmp(op, "hardtanh_") == 0)
        return "hardtanh";
    return op;
}

typedef struct {
    const akg_reference *ref;
    const cJSON *probe;
    char *err;
    size_t errlen;
    akg_range *where;
} design_ctx;

static int unsupported(design_ctx *c, akg_range r, const char *fmt, const char *what)
{
    if (c->where)
        *c->where = r;
    char msg[512];
    snprintf(msg, sizeof msg, fmt, what);
    return akg_fail(c->err, c->errlen, AKG_EUNSUPPORTED,
                    "%s:%u: %s; the built-in provider has no rule for it (try --provider openai "
                    "with an LLM endpoint)",
                    c->ref->path ? c->ref->path : "reference", r.start_row + 1, msg);
}

/* The probe's value of constructor argument i, when it is a number. */
static int probe_init_value(const cJSON *probe, int i, double *out)
{
    const cJSON *init = cJSON_GetObjectItem(probe, "init_inputs");
    const cJSON *v = cJSON_GetArrayItem(init, i);
    const cJSON *val = cJSON_GetObjectItem(v, "value");
    if (cJSON_IsNumber(val)) {
        *out = val->valuedouble;
        return 1;
    }
    if (cJSON_IsBool(val)) {
        *out = cJSON_IsTrue(val);
        return 1;
    }
    return 0;
}

/* Resolves a scalar expression to a constant or a constructor argument. */
static int resolve_scalar(design_ctx *c, const akg_expr *e, const char *name, akg_scalar *out,
                          int depth)
{
    snprintf(out->name, sizeof out->name, "%s", name);
    if (!e || depth > 8)
        return AKG_EINVAL;
    if (e->kind == AKG_EX_NUMBER || e->kind == AKG_EX_BOOL) {
        out->source = AKG_SCALAR_CONST;
        out->value = e->number;
        return AKG_OK;
    }
    if (e->kind == AKG_EX_NAME) {
        int idx = akg_reference_init_param(c->ref, e->name);
        if (idx < 0)
            return unsupported(c, e->range, "cannot tell the value of %s", e->text);
        out->source = AKG_SCALAR_INIT_PARAM;
        out->init_index = idx;
        snprintf(out->init_name, sizeof out->init_name, "%s", e->name);
        if (!probe_init_value(c->probe, idx, &out->value)) {
            /* Not passed by get_init_inputs(): its default must be a number. */
            const char *def = c->ref->init_params[idx].default_text;
            char *end = NULL;
            out->value = def ? strtod(def, &end) : 0;
            if (!def || end == def)
                return unsupported(c, e->range, "constructor argument %s is not a number",
                                   e->text);
        }
        return AKG_OK;
    }
    if (e->kind == AKG_EX_ATTR && e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_NAME &&
        strcmp(e->args[0]->name, "self") == 0) {
        const akg_expr *v = akg_reference_attr(c->ref, e->name);
        if (!v)
            return unsupported(c, e->range, "self.%s is not set in __init__", e->name);
        return resolve_scalar(c, v, name, out, depth + 1);
    }
    return unsupported(c, e->range, "cannot tell the value of %s", e->text ? e->text : "?");
}

/* The argument of call for parameter `name` at positional index pos (counting
 * after the tensor input), or NULL. */
static const akg_expr *call_arg(const akg_expr *call, size_t first_pos, int pos, const char *name)
{
    size_t positional = 0;
    for (size_t i = 0; i < call->n_args; i++) {
        const akg_expr *a = call->args[i];
        if (!a)
            continue;
        if (a->kind == AKG_EX_KWARG) {
            if (name && a->name && strcmp(a->name, name) == 0 && a->n_args == 1)
                return a->args[0];
            continue;
        }
        if (positional == first_pos + (size_t)pos)
            return a;
        positional++;
    }
    return NULL;
}

/* Fills step's scalars from a functional call (args after the tensor) or a
 * layer constructor (all args). */
static int fill_scalars(design_ctx *c, const pointwise_rule *rule, const akg_expr *args_from,
                        size_t first_pos, akg_pointwise_step *step)
{
    step->n_scalars = rule->n;
    for (int i = 0; i < rule->n; i++) {
        const akg_expr *a = args_from ? call_arg(args_from, first_pos, i, rule->scalars[i]) : NULL;
        if (!a) {
            snprintf(step->scalars[i].name, sizeof step->scalars[i].name, "%s", rule->scalars[i]);
            step->scalars[i].source = AKG_SCALAR_CONST;
            step->scalars[i].value = rule->defaults[i];
            continue;
        }
        int rc = resolve_scalar(c, a, rule->scalars[i], &step->scalars[i], 0);
        if (rc)
            return rc;
    }
    /* gelu's approximate= and the inplace flags are keyword-only strings/bools. */
    if (strcmp(rule->op, "gelu") == 0) {
        const akg_expr *ap = args_from ? call_arg(args_from, 99, 0, "approximate") : NULL;
        snprintf(step->variant, sizeof step->variant, "%s",
                 ap && ap->kind == AKG_EX_STRING && ap->name ? ap->name : "none");
        if (strcmp(step->variant, "none") != 0 && strcmp(step->variant, "tanh") != 0)
            return unsupported(c, ap->range, "gelu approximate=%s", ap->text);
    }
    return AKG_OK;
}

/* A value flowing through forward: which input it comes from, and the ops so far. */
typedef struct {
    int input;        /* forward parameter index, -1 when not a tensor we track */
    int n_steps;
    akg_pointwise_step steps[AKG_DESIGN_MAX_STEPS];
    int softmax;      /* 0 none, 1 softmax, 2 log_softmax (must be last) */
    akg_scalar dim;
} flow;

typedef struct {
    char name[64];
    flow value;
} binding;

#define MAX_BINDINGS 64

typedef struct {
    binding b[MAX_BINDINGS];
    int n;
} env;

static flow *env_get(env *e, const char *name)
{
    for (int i = e->n - 1; i >= 0; i--)
        if (strcmp(e->b[i].name, name) == 0)
            return &e->b[i].value;
    return NULL;
}

static int eval_flow(design_ctx *c, env *vars, const akg_expr *e, flow *out, int depth);

static int apply_op(design_ctx *c, env *vars, const akg_expr *call, flow *out, int depth)
{
    const char *op = normalise_op(call->name ? call->name : "");
    const akg_ref_layer *layer = NULL;
    const akg_expr *tensor_arg = NULL;
    size_t first_pos = 1;
    if (call->is_layer) {
        layer = akg_reference_layer(c->ref, call->callee + 5);
        tensor_arg = call->n_args > 0 ? call->args[0] : NULL;
    } else if (call->method) {
        tensor_arg = call->args[0];
        first_pos = 0; /* x.softmax(1): args after the receiver, receiver is args[0] */
    } else {
        tensor_arg = call_arg(call, 0, 0, "input");
    }
    if (!tensor_arg)
        return unsupported(c, call->range, "%s has no tensor argument", call->text);
    int rc = eval_flow(c, vars, tensor_arg, out, depth + 1);
    if (rc)
        return rc;
    if (out->softmax)
        return unsupported(c, call->range, "%s after a softmax (only one softmax, last)",
                           call->text);
    /* For a method call the receiver sits at args[0]; positional scalars follow it. */
    const akg_expr *scalar_src = layer ? layer->ctor : call;
    size_t scalar_first = layer ? 0 : (call->method ? 1 : first_pos);
    if (strcmp(op, "softmax") == 0 || strcmp(op, "log_softmax") == 0) {
        const akg_expr *d = call_arg(scalar_src, scalar_first, 0, "dim");
        if (!d)
            return unsupported(c, call->range, "%s without dim=", call->text);
        rc = resolve_scalar(c, d, "dim", &out->dim, 0);
        if (rc)
            return rc;
        out->softmax = strcmp(op, "softmax") == 0 ? 1 : 2;
        return AKG_OK;
    }
    const pointwise_rule *rule = find_rule(op);
    if (!rule)
        return unsupported(c, call->range, "forward calls %s", call->callee ? call->callee : op);
    if (out->n_steps >= AKG_DESIGN_MAX_STEPS)
        return unsupported(c, call->range, "%s: chain longer than 16 ops", call->text);
    akg_pointwise_step *st = &out->steps[out->n_steps];
    memset(st, 0, sizeof *st);
    snprintf(st->op, sizeof st->op, "%s", op);
    rc = fill_scalars(c, rule, scalar_src, scalar_first, st);
    if (rc)
        return rc;
    out->n_steps++;
    return AKG_OK;
}

static int eval_flow(design_ctx *c, env *vars, const akg_expr *e, flow *out, int depth)
{
    if (!e || depth > 64)
        return unsupported(c, e ? e->range : (akg_range){0, 0, 0, 0}, "%s",
                           "expression too deep");
    if (e->kind == AKG_EX_NAME) {
        flow *f = env_get(vars, e->name);
        if (!f)
            return unsupported(c, e->range, "%s is not a tensor input of forward", e->name);
        *out = *f;
        return AKG_OK;
    }
    if (e->kind == AKG_EX_CALL)
        return apply_op(c, vars, e, out, depth);
    return unsupported(c, e->range, "%s", e->text ? e->text : "expression");
}

static int probe_input_rank(const cJSON *probe, int input, char *dtype, size_t dtlen)
{
    const cJSON *in = cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "inputs"), input);
    const cJSON *shape = cJSON_GetObjectItem(in, "shape");
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(in, "dtype"));
    snprintf(dtype, dtlen, "%s", dt ? dt : "?");
    return cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
}

static void sketch_scalar_decls(akg_buf *b, const akg_pointwise_step *steps, int n)
{
    int any = 0;
    for (int i = 0; i < n; i++)
        any += steps[i].n_scalars;
    if (!any)
        return;
    akg_buf_puts(b, "  params: ");
    int first = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < steps[i].n_scalars; k++) {
            const akg_scalar *s = &steps[i].scalars[k];
            akg_buf_appendf(b, "%s%s_%d: f32 = %.9g", first ? "" : ", ", s->name, i, s->value);
            first = 0;
        }
    akg_buf_puts(b, ";\n");
}

static void sketch_step_call(akg_buf *b, const akg_pointwise_step *st, int idx, const char *arg)
{
    const char *op = st->op;
    if (strcmp(op, "gelu") == 0 && strcmp(st->variant, "tanh") == 0)
        op = "gelu_tanh";
    akg_buf_appendf(b, "%s(%s", op, arg);
    for (int k = 0; k < st->n_scalars; k++)
        akg_buf_appendf(b, ", %s_%d", st->scalars[k].name, idx);
    akg_buf_puts(b, ")");
}

static char *pointwise_sketch(const akg_design *d)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b, "# %s: a fused elementwise pass over the flattened input\n", d->op_name);
    akg_buf_appendf(&b, "sketch %s {\n", d->op_name);
    akg_buf_puts(&b, "  symbols: N;\n  tensors: x[N]: f32; y[N]: f32;\n");
    sketch_scalar_decls(&b, d->steps, d->n_steps);
    akg_buf_appendf(&b, "  constexpr: BLOCK = tune(4096, 16384, 65536) = %ld;\n\n", d->block);
    if (d->parallel)
        akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
    akg_buf_puts(&b, "  for i in range(0, N, BLOCK):\n");
    akg_buf_puts(&b, "    t = alloc([BLOCK], llm_hint=[\"fastest\"])\n");
    akg_buf_puts(&b, "    load(x[i:i+BLOCK] -> t)\n");
    for (int i = 0; i < d->n_steps; i++) {
        if (d->vectorize)
            akg_buf_puts(&b, "    @llm_hint(\"vectorize\", \"simd\")\n");
        akg_buf_puts(&b, "    t = ");
        sketch_step_call(&b, &d->steps[i], i, "t");
        akg_buf_puts(&b, "\n");
    }
    akg_buf_puts(&b, "    store(t -> y[i:i+BLOCK])\n}\n");
    return akg_buf_steal(&b);
}

static char *softmax_sketch(const akg_design *d)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b,
                    "# %s over one dim: the input is viewed as [O, D, I] with D the reduced dim\n",
                    d->op_name);
    akg_buf_appendf(&b, "sketch %s {\n", d->op_name);
    akg_buf_puts(&b, "  symbols: O, D, I;\n  tensors: x[O, D, I]: f32; y[O, D, I]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: ROWS = tune(1, 4, 16) = %ld;\n\n", d->rows);
    if (d->parallel)
        akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
    akg_buf_puts(&b, "  for o in range(0, O):\n");
    akg_buf_puts(&b, "    for r in range(0, I, ROWS):\n");
    akg_buf_puts(&b, "      t = alloc([D, ROWS], llm_hint=[\"fast\"])\n");
    akg_buf_puts(&b, "      load(x[o, :, r:r+ROWS] -> t)\n");
    akg_buf_puts(&b, "      m = reduce_max(t, axis=0)\n");
    if (d->vectorize)
        akg_buf_puts(&b, "      @llm_hint(\"vectorize\", \"simd\")\n");
    akg_buf_puts(&b, "      e = exp(sub(t, m))\n");
    akg_buf_puts(&b, "      s = reduce_sum(e, axis=0)\n");
    if (d->log_softmax)
        akg_buf_puts(&b, "      o2 = sub(sub(t, m), log(s))\n");
    else
        akg_buf_puts(&b, "      o2 = div(e, s)\n");
    akg_buf_puts(&b, "      store(o2 -> y[o, :, r:r+ROWS])\n}\n");
    return akg_buf_steal(&b);
}

int akg_designer_builtin(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                         int attempt, akg_design **out, akg_range *where, char *err,
                         size_t errlen)
{
    *out = NULL;
    design_ctx c = {ref, probe, err, errlen, where};
    env *vars = calloc(1, sizeof *vars);
    if (!vars)
        return AKG_ENOMEM;
    for (size_t i = 0; i < ref->n_forward_params && vars->n < MAX_BINDINGS; i++) {
        binding *b = &vars->b[vars->n++];
        snprintf(b->name, sizeof b->name, "%s", ref->forward_params[i].name);
        b->value.input = (int)i;
    }
    flow result;
    int have_result = 0, rc = AKG_OK;
    for (size_t i = 0; i < ref->n_body && !rc; i++) {
        const akg_ref_stmt *st = &ref->body[i];
        if (st->kind == AKG_STMT_ASSIGN) {
            flow f;
            rc = eval_flow(&c, vars, st->value, &f, 0);
            if (!rc) {
                if (vars->n >= MAX_BINDINGS) {
                    rc = unsupported(&c, st->range, "%s", "more than 64 assignments");
                    break;
                }
                binding *b = &vars->b[vars->n++];
                snprintf(b->name, sizeof b->name, "%s", st->target);
                b->value = f;
            }
        } else if (st->kind == AKG_STMT_RETURN) {
            if (!st->value) {
                rc = unsupported(&c, st->range, "%s", "forward returns nothing");
                break;
            }
            rc = eval_flow(&c, vars, st->value, &result, 0);
            have_result = !rc;
            break;
        } else {
            rc = unsupported(&c, st->range, "the statement `%s`", st->text ? st->text : "?");
        }
    }
    free(vars);
    if (rc)
        return rc;
    if (!have_result)
        return unsupported(&c, ref->forward_range, "%s", "forward has no return");
    if (result.n_steps == 0 && !result.softmax)
        return unsupported(&c, ref->forward_range, "%s", "forward computes nothing");
    if (result.softmax && result.n_steps > 0)
        return unsupported(&c, ref->forward_range, "%s",
                           "elementwise ops before a softmax (not fused yet)");

    akg_design *d = calloc(1, sizeof *d);
    if (!d)
        return AKG_ENOMEM;
    d->rank = probe_input_rank(probe, result.input, d->dtype, sizeof d->dtype);
    if (strcmp(d->dtype, "float32") != 0) {
        char dtype[sizeof d->dtype];
        memcpy(dtype, d->dtype, sizeof dtype);
        free(d);
        return unsupported(&c, ref->get_inputs_range, "input of dtype %s (float32 only for now)",
                           dtype);
    }
    const char *fb_class = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    int numeric_retry = fb_class && (strcmp(fb_class, "numerical_mismatch") == 0 ||
                                     strcmp(fb_class, "shape_mismatch") == 0);
    d->math = numeric_retry ? AKG_MATH_PRECISE : AKG_MATH_FAST;
    d->parallel = 1;
    d->vectorize = 1;
    (void)attempt;
    if (result.softmax) {
        d->kind = AKG_DESIGN_SOFTMAX;
        d->log_softmax = result.softmax == 2;
        d->dim = result.dim;
        d->rows = numeric_retry ? 1 : 4;
        snprintf(d->op_name, sizeof d->op_name, "%s", d->log_softmax ? "log_softmax" : "softmax");
        d->sketch_text = softmax_sketch(d);
    } else {
        d->kind = AKG_DESIGN_POINTWISE;
        d->n_steps = result.n_steps;
        memcpy(d->steps, result.steps, sizeof result.steps);
        d->block = numeric_retry ? 4096 : 16384;
        akg_buf name;
        akg_buf_init(&name, sizeof d->op_name - 1);
        for (int i = 0; i < d->n_steps; i++) {
            const char *op = d->steps[i].op;
            if (strcmp(op, "gelu") == 0 && strcmp(d->steps[i].variant, "tanh") == 0)
                op = "gelu_tanh";
            if (akg_buf_appendf(&name, "%s%s", i ? "_" : "", op) != AKG_OK)
                break;
        }
        snprintf(d->op_name, sizeof d->op_name, "%s", name.data ? name.data : "pointwise");
        akg_buf_free(&name);
        d->sketch_text = pointwise_sketch(d);
    }
    *out = d;
    return AKG_OK;
}

void akg_design_free(akg_design *d)
{
    if (!d)
        return;
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
    cJSON_AddStringToObject(o, "kind", d->kind == AKG_DESIGN_SOFTMAX ? "softmax" : "pointwise");
    cJSON_AddStringToObject(o, "op", d->op_name);
    cJSON_AddStringToObject(o, "math", d->math == AKG_MATH_FAST ? "fast" : "precise");
    if (d->kind == AKG_DESIGN_SOFTMAX) {
        cJSON_AddItemToObject(o, "dim", scalar_json(&d->dim));
        cJSON_AddNumberToObject(o, "rows", (double)d->rows);
    } else {
        cJSON_AddNumberToObject(o, "block", (double)d->block);
        cJSON *steps = cJSON_AddArrayToObject(o, "steps");
        for (int i = 0; i < d->n_steps; i++) {
            cJSON *s = cJSON_CreateObject();
            cJSON_AddStringToObject(s, "op", d->steps[i].op);
            if (d->steps[i].variant[0])
                cJSON_AddStringToObject(s, "variant", d->steps[i].variant);
            cJSON *sc = cJSON_AddArrayToObject(s, "scalars");
            for (int k = 0; k < d->steps[i].n_scalars; k++)
                cJSON_AddItemToArray(sc, scalar_json(&d->steps[i].scalars[k]));
            cJSON_AddItemToArray(steps, s);
        }
    }
    return o;
}
