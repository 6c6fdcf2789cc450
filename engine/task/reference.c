/*
 * reference.c: a KernelBench-form reference read with tree-sitter-python.
 *
 * We read structure only and run nothing: the Model class and its base, the
 * layers assigned in __init__ (self.name = nn.Type(...)), the parameters of
 * __init__ and forward, every call in forward's body in source order (with
 * layer calls resolved to the layer's type), and the module-level input
 * builders. The canonical op of a call is the last attribute of its callee
 * (torch.softmax, F.softmax, x.softmax and nn.Softmax all give "softmax"),
 * which is what the Designer's rules match on.
 *
 * What KernelBench form needs is written once, in akg_reference_form_gap: an
 * operator suite (engine/bench/) tells references from helper modules with it,
 * and akg_reference_check_form, which a job's parse stage and the language
 * server's diagnostics call, adds what makes a declared reference broken (a
 * syntax error, no forward()).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "akg/akg.h"
#include "akg/task.h"

const TSLanguage *tree_sitter_python(void);

typedef struct {
    const char *src;
    size_t len;
    akg_reference *ref;
} parse_ctx;

static akg_range node_range(TSNode n)
{
    TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
    akg_range r = {a.row, a.column, b.row, b.column};
    return r;
}

static char *node_text(const parse_ctx *c, TSNode n)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    if (e > c->len || s > e)
        return akg_strdup("");
    char *p = malloc(e - s + 1);
    if (!p)
        return NULL;
    memcpy(p, c->src + s, e - s);
    p[e - s] = '\0';
    return p;
}

static int node_is(TSNode n, const char *type)
{
    return !ts_node_is_null(n) && strcmp(ts_node_type(n), type) == 0;
}

static int text_eq(const parse_ctx *c, TSNode n, const char *s)
{
    uint32_t a = ts_node_start_byte(n), b = ts_node_end_byte(n);
    size_t l = strlen(s);
    return b - a == l && memcmp(c->src + a, s, l) == 0;
}

/* "nn.ReLU" -> "relu", "LeakyReLU" -> "leaky_relu", "torch.nn.functional.gelu" -> "gelu". */
char *akg_canonical_op(const char *callee)
{
    const char *last = strrchr(callee, '.');
    last = last ? last + 1 : callee;
    /* Layer type names: CamelCase to snake_case, with the acronyms kept whole. */
    static const struct {
        const char *layer, *op;
    } layers[] = {
        {"ReLU", "relu"},
        {"ReLU6", "relu6"},
        {"LeakyReLU", "leaky_relu"},
        {"Sigmoid", "sigmoid"},
        {"Tanh", "tanh"},
        {"GELU", "gelu"},
        {"SiLU", "silu"},
        {"Softplus", "softplus"},
        {"ELU", "elu"},
        {"SELU", "selu"},
        {"Hardtanh", "hardtanh"},
        {"Hardsigmoid", "hardsigmoid"},
        {"Softsign", "softsign"},
        {"Softmax", "softmax"},
        {"LogSoftmax", "log_softmax"},
        {"Mish", "mish"},
        {"Hardswish", "hardswish"},
        {"CELU", "celu"},
        {"Linear", "linear"},
        {"Conv1d", "conv1d"},
        {"Conv2d", "conv2d"},
        {"Conv3d", "conv3d"},
        {"ConvTranspose1d", "conv_transpose1d"},
        {"ConvTranspose2d", "conv_transpose2d"},
        {"ConvTranspose3d", "conv_transpose3d"},
        {"BatchNorm1d", "batch_norm"},
        {"BatchNorm2d", "batch_norm"},
        {"BatchNorm3d", "batch_norm"},
        {"InstanceNorm1d", "instance_norm"},
        {"InstanceNorm2d", "instance_norm"},
        {"InstanceNorm3d", "instance_norm"},
        {"GroupNorm", "group_norm"},
        {"LayerNorm", "layer_norm"},
        {"MaxPool1d", "max_pool1d"},
        {"MaxPool2d", "max_pool2d"},
        {"MaxPool3d", "max_pool3d"},
        {"AvgPool1d", "avg_pool1d"},
        {"AvgPool2d", "avg_pool2d"},
        {"AvgPool3d", "avg_pool3d"},
        {"MSELoss", "mse_loss"},
        {"CrossEntropyLoss", "cross_entropy"},
        {"SmoothL1Loss", "smooth_l1_loss"},
        {"HuberLoss", "huber_loss"},
        {"KLDivLoss", "kl_div"},
        {"TripletMarginLoss", "triplet_margin_loss"},
        {"Dropout", "dropout"},
        {"Identity", "identity"},
    };
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++)
        if (strcmp(last, layers[i].layer) == 0)
            return akg_strdup(layers[i].op);
    char *out = malloc(strlen(last) * 2 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const char *p = last; *p; p++) {
        if (isupper((unsigned char)*p)) {
            if (o > 0 && out[o - 1] != '_')
                out[o++] = '_';
            out[o++] = (char)tolower((unsigned char)*p);
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
    return out;
}

static void parse_params(parse_ctx *c, TSNode params, akg_ref_param **out, size_t *n)
{
    uint32_t count = ts_node_named_child_count(params);
    *out = calloc(count ? count : 1, sizeof **out);
    *n = 0;
    if (!*out)
        return;
    for (uint32_t i = 0; i < count; i++) {
        TSNode p = ts_node_named_child(params, i);
        TSNode name = p, value = {0};
        const char *t = ts_node_type(p);
        if (strcmp(t, "default_parameter") == 0 || strcmp(t, "typed_default_parameter") == 0) {
            name = ts_node_child_by_field_name(p, "name", 4);
            value = ts_node_child_by_field_name(p, "value", 5);
        } else if (strcmp(t, "typed_parameter") == 0) {
            name = ts_node_named_child(p, 0);
        } else if (strcmp(t, "identifier") != 0) {
            name = p; /* *args, **kwargs: keep their text */
        }
        if (ts_node_is_null(name))
            continue;
        if (*n == 0 && i == 0 && text_eq(c, name, "self"))
            continue;
        akg_ref_param *dst = &(*out)[(*n)++];
        dst->name = node_text(c, name);
        dst->default_text = ts_node_is_null(value) ? NULL : node_text(c, value);
    }
}

static int push_layer(akg_reference *ref, akg_ref_layer layer)
{
    akg_ref_layer *p = realloc(ref->layers, (ref->n_layers + 1) * sizeof *p);
    if (!p)
        return AKG_ENOMEM;
    ref->layers = p;
    ref->layers[ref->n_layers++] = layer;
    return AKG_OK;
}

static int push_call(akg_reference *ref, akg_ref_call call)
{
    akg_ref_call *p = realloc(ref->calls, (ref->n_calls + 1) * sizeof *p);
    if (!p)
        return AKG_ENOMEM;
    ref->calls = p;
    ref->calls[ref->n_calls++] = call;
    return AKG_OK;
}

/* ---------- expression trees ---------- */

static akg_expr *expr_new(const parse_ctx *c, akg_expr_kind kind, TSNode n)
{
    akg_expr *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->kind = kind;
    e->text = node_text(c, n);
    e->range = node_range(n);
    return e;
}

static void expr_push(akg_expr *e, akg_expr *child)
{
    if (!e || !child)
        return;
    akg_expr **p = realloc(e->args, (e->n_args + 1) * sizeof *p);
    if (!p)
        return;
    e->args = p;
    e->args[e->n_args++] = child;
}

static void expr_free(akg_expr *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->n_args; i++)
        expr_free(e->args[i]);
    free(e->args);
    free(e->text);
    free(e->name);
    free(e->callee);
    free(e);
}

static akg_expr *build_expr(parse_ctx *c, TSNode n, int depth);

/* identifiers joined by dots (torch.nn.functional), with no call in between */
static int is_dotted_name(TSNode n)
{
    while (node_is(n, "attribute"))
        n = ts_node_child_by_field_name(n, "object", 6);
    return node_is(n, "identifier");
}

static akg_expr *build_call(parse_ctx *c, TSNode n, int depth)
{
    akg_expr *e = expr_new(c, AKG_EX_CALL, n);
    if (!e)
        return NULL;
    TSNode fn = ts_node_child_by_field_name(n, "function", 8);
    TSNode args = ts_node_child_by_field_name(n, "arguments", 9);
    e->callee = node_text(c, fn);
    const akg_ref_layer *layer = NULL;
    if (e->callee && strncmp(e->callee, "self.", 5) == 0 && !strchr(e->callee + 5, '.'))
        layer = akg_reference_layer(c->ref, e->callee + 5);
    if (layer) {
        e->is_layer = 1;
        e->name = akg_canonical_op(layer->type);
    } else {
        e->name = akg_canonical_op(e->callee ? e->callee : "");
        /* x.relu(): a method of a value, not of a module (torch, F, nn). */
        if (node_is(fn, "attribute")) {
            TSNode obj = ts_node_child_by_field_name(fn, "object", 6);
            char *ot = node_text(c, obj);
            int module =
                ot && is_dotted_name(obj) &&
                (strcmp(ot, "torch") == 0 || strcmp(ot, "F") == 0 || strcmp(ot, "nn") == 0 ||
                 strncmp(ot, "torch.", 6) == 0 || strcmp(ot, "nn.functional") == 0 ||
                 strcmp(ot, "math") == 0 || strcmp(ot, "self") == 0);
            free(ot);
            if (!module) {
                e->method = 1;
                expr_push(e, build_expr(c, obj, depth + 1));
            }
        }
    }
    uint32_t k = ts_node_named_child_count(args);
    for (uint32_t i = 0; i < k; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (node_is(a, "comment"))
            continue;
        if (node_is(a, "keyword_argument")) {
            akg_expr *kw = expr_new(c, AKG_EX_KWARG, a);
            if (!kw)
                continue;
            kw->name = node_text(c, ts_node_child_by_field_name(a, "name", 4));
            expr_push(kw, build_expr(c, ts_node_child_by_field_name(a, "value", 5), depth + 1));
            expr_push(e, kw);
        } else {
            expr_push(e, build_expr(c, a, depth + 1));
        }
    }
    return e;
}

static akg_expr *build_expr(parse_ctx *c, TSNode n, int depth)
{
    if (ts_node_is_null(n))
        return NULL;
    if (depth > 200)
        return expr_new(c, AKG_EX_OTHER, n);
    const char *t = ts_node_type(n);
    akg_expr *e;
    if (strcmp(t, "parenthesized_expression") == 0 && ts_node_named_child_count(n) == 1)
        return build_expr(c, ts_node_named_child(n, 0), depth + 1);
    if (strcmp(t, "identifier") == 0) {
        e = expr_new(c, AKG_EX_NAME, n);
        if (e)
            e->name = akg_strdup(e->text);
        return e;
    }
    if (strcmp(t, "integer") == 0 || strcmp(t, "float") == 0) {
        e = expr_new(c, AKG_EX_NUMBER, n);
        if (e)
            e->number = strtod(e->text, NULL);
        return e;
    }
    if (strcmp(t, "true") == 0 || strcmp(t, "false") == 0) {
        e = expr_new(c, AKG_EX_BOOL, n);
        if (e)
            e->number = t[0] == 't';
        return e;
    }
    if (strcmp(t, "none") == 0)
        return expr_new(c, AKG_EX_NONE, n);
    if (strcmp(t, "string") == 0) {
        e = expr_new(c, AKG_EX_STRING, n);
        if (e && e->text) {
            size_t l = strlen(e->text);
            if (l >= 2) {
                e->name = malloc(l - 1);
                if (e->name) {
                    memcpy(e->name, e->text + 1, l - 2);
                    e->name[l - 2] = '\0';
                }
            }
        }
        return e;
    }
    if (strcmp(t, "attribute") == 0) {
        e = expr_new(c, AKG_EX_ATTR, n);
        if (!e)
            return NULL;
        e->name = node_text(c, ts_node_child_by_field_name(n, "attribute", 9));
        expr_push(e, build_expr(c, ts_node_child_by_field_name(n, "object", 6), depth + 1));
        return e;
    }
    if (strcmp(t, "call") == 0)
        return build_call(c, n, depth);
    if (strcmp(t, "binary_operator") == 0 || strcmp(t, "boolean_operator") == 0) {
        e = expr_new(c, AKG_EX_BINOP, n);
        if (!e)
            return NULL;
        e->name = node_text(c, ts_node_child_by_field_name(n, "operator", 8));
        expr_push(e, build_expr(c, ts_node_child_by_field_name(n, "left", 4), depth + 1));
        expr_push(e, build_expr(c, ts_node_child_by_field_name(n, "right", 5), depth + 1));
        return e;
    }
    if (strcmp(t, "comparison_operator") == 0 && ts_node_named_child_count(n) == 2) {
        e = expr_new(c, AKG_EX_BINOP, n);
        if (!e)
            return NULL;
        /* the operator is the anonymous child between the operands */
        uint32_t k = ts_node_child_count(n);
        for (uint32_t i = 0; i < k; i++) {
            TSNode ch = ts_node_child(n, i);
            if (!ts_node_is_named(ch)) {
                e->name = node_text(c, ch);
                break;
            }
        }
        expr_push(e, build_expr(c, ts_node_named_child(n, 0), depth + 1));
        expr_push(e, build_expr(c, ts_node_named_child(n, 1), depth + 1));
        return e;
    }
    if (strcmp(t, "unary_operator") == 0 || strcmp(t, "not_operator") == 0) {
        e = expr_new(c, AKG_EX_UNARY, n);
        if (!e)
            return NULL;
        TSNode arg = ts_node_child_by_field_name(n, "argument", 8);
        if (strcmp(t, "not_operator") == 0)
            e->name = akg_strdup("not");
        else
            e->name = node_text(c, ts_node_child_by_field_name(n, "operator", 8));
        expr_push(e, build_expr(c, arg, depth + 1));
        /* fold -3.0 into a number */
        if (e->name && strcmp(e->name, "-") == 0 && e->n_args == 1 && e->args[0] &&
            e->args[0]->kind == AKG_EX_NUMBER) {
            double v = -e->args[0]->number;
            expr_free(e->args[0]);
            free(e->args);
            e->args = NULL;
            e->n_args = 0;
            free(e->name);
            e->name = NULL;
            e->kind = AKG_EX_NUMBER;
            e->number = v;
        }
        return e;
    }
    if (strcmp(t, "tuple") == 0 || strcmp(t, "list") == 0 || strcmp(t, "expression_list") == 0) {
        e = expr_new(c, AKG_EX_TUPLE, n);
        uint32_t k = ts_node_named_child_count(n);
        for (uint32_t i = 0; i < k && e; i++)
            expr_push(e, build_expr(c, ts_node_named_child(n, i), depth + 1));
        return e;
    }
    if (strcmp(t, "subscript") == 0) {
        e = expr_new(c, AKG_EX_SUBSCRIPT, n);
        if (e)
            expr_push(e, build_expr(c, ts_node_child_by_field_name(n, "value", 5), depth + 1));
        return e;
    }
    return expr_new(c, AKG_EX_OTHER, n);
}

static int push_stmt(akg_ref_stmt **list, size_t *n, akg_ref_stmt st)
{
    akg_ref_stmt *p = realloc(*list, (*n + 1) * sizeof *p);
    if (!p)
        return AKG_ENOMEM;
    *list = p;
    (*list)[(*n)++] = st;
    return AKG_OK;
}

/* forward's top-level statements (docstrings and pass are skipped). */
static void collect_body(parse_ctx *c, TSNode block)
{
    uint32_t k = ts_node_named_child_count(block);
    for (uint32_t i = 0; i < k; i++) {
        TSNode s = ts_node_named_child(block, i);
        akg_ref_stmt st = {0};
        st.range = node_range(s);
        st.text = node_text(c, s);
        st.kind = AKG_STMT_OTHER;
        if (node_is(s, "comment") || node_is(s, "pass_statement")) {
            free(st.text);
            continue;
        }
        if (node_is(s, "return_statement")) {
            st.kind = AKG_STMT_RETURN;
            TSNode v = ts_node_named_child(s, 0);
            st.value = ts_node_is_null(v) ? NULL : build_expr(c, v, 0);
        } else if (node_is(s, "expression_statement") && ts_node_named_child_count(s) == 1) {
            TSNode x = ts_node_named_child(s, 0);
            if (node_is(x, "string")) {
                free(st.text);
                continue; /* docstring */
            }
            if (node_is(x, "assignment")) {
                TSNode left = ts_node_child_by_field_name(x, "left", 4);
                TSNode right = ts_node_child_by_field_name(x, "right", 5);
                if (node_is(left, "identifier") && !ts_node_is_null(right)) {
                    st.kind = AKG_STMT_ASSIGN;
                    st.target = node_text(c, left);
                    st.value = build_expr(c, right, 0);
                }
            }
        }
        push_stmt(&c->ref->body, &c->ref->n_body, st);
    }
}

/* self.<name> = nn.Type(args) anywhere in __init__. */
static void collect_layers(parse_ctx *c, TSNode n)
{
    if (node_is(n, "assignment")) {
        TSNode left = ts_node_child_by_field_name(n, "left", 4);
        TSNode right = ts_node_child_by_field_name(n, "right", 5);
        if (node_is(left, "attribute") && node_is(right, "call")) {
            TSNode obj = ts_node_child_by_field_name(left, "object", 6);
            TSNode attr = ts_node_child_by_field_name(left, "attribute", 9);
            if (node_is(obj, "identifier") && text_eq(c, obj, "self")) {
                TSNode fn = ts_node_child_by_field_name(right, "function", 8);
                TSNode args = ts_node_child_by_field_name(right, "arguments", 9);
                akg_ref_layer l = {0};
                l.name = node_text(c, attr);
                char *fulltype = node_text(c, fn);
                const char *dot = fulltype ? strrchr(fulltype, '.') : NULL;
                l.type = akg_strdup(dot ? dot + 1 : (fulltype ? fulltype : ""));
                free(fulltype);
                char *at = node_text(c, args);
                if (at && strlen(at) >= 2) {
                    at[strlen(at) - 1] = '\0';
                    l.args_text = akg_strdup(at + 1);
                } else {
                    l.args_text = akg_strdup("");
                }
                free(at);
                l.range = node_range(n);
                l.ctor = build_expr(c, right, 0);
                push_layer(c->ref, l);
            }
        }
        if (node_is(left, "attribute") && !ts_node_is_null(right)) {
            TSNode obj = ts_node_child_by_field_name(left, "object", 6);
            if (node_is(obj, "identifier") && text_eq(c, obj, "self")) {
                akg_ref_stmt st = {0};
                st.kind = AKG_STMT_ASSIGN;
                st.target = node_text(c, ts_node_child_by_field_name(left, "attribute", 9));
                st.value = build_expr(c, right, 0);
                st.text = node_text(c, n);
                st.range = node_range(n);
                push_stmt(&c->ref->attrs, &c->ref->n_attrs, st);
            }
        }
    }
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        collect_layers(c, ts_node_named_child(n, i));
}

static void collect_calls(parse_ctx *c, TSNode n)
{
    if (node_is(n, "call")) {
        TSNode fn = ts_node_child_by_field_name(n, "function", 8);
        TSNode args = ts_node_child_by_field_name(n, "arguments", 9);
        akg_ref_call call = {0};
        call.callee = node_text(c, fn);
        call.range = node_range(n);
        char *at = node_text(c, args);
        if (at && strlen(at) >= 2) {
            at[strlen(at) - 1] = '\0';
            call.args_text = akg_strdup(at + 1);
        } else {
            call.args_text = akg_strdup("");
        }
        free(at);
        const akg_ref_layer *layer = NULL;
        if (call.callee && strncmp(call.callee, "self.", 5) == 0)
            layer = akg_reference_layer(c->ref, call.callee + 5);
        if (layer) {
            call.is_layer = 1;
            call.op = akg_canonical_op(layer->type);
        } else {
            call.op = call.callee ? akg_canonical_op(call.callee) : akg_strdup("");
        }
        push_call(c->ref, call);
    }
    if (node_is(n, "return_statement")) {
        TSNode v = ts_node_named_child(n, 0);
        free(c->ref->forward_return_text);
        c->ref->forward_return_text = ts_node_is_null(v) ? akg_strdup("") : node_text(c, v);
    }
    /* Nested functions and lambdas are not part of forward's data flow. */
    if (node_is(n, "function_definition") || node_is(n, "lambda"))
        return;
    uint32_t k = ts_node_named_child_count(n);
    for (uint32_t i = 0; i < k; i++)
        collect_calls(c, ts_node_named_child(n, i));
}

static TSNode unwrap_decorated(TSNode n)
{
    if (node_is(n, "decorated_definition"))
        return ts_node_child_by_field_name(n, "definition", 10);
    return n;
}

static int is_module_base(const parse_ctx *c, TSNode cls)
{
    TSNode sup = ts_node_child_by_field_name(cls, "superclasses", 12);
    if (ts_node_is_null(sup))
        return 0;
    uint32_t k = ts_node_named_child_count(sup);
    for (uint32_t i = 0; i < k; i++) {
        TSNode b = ts_node_named_child(sup, i);
        if (text_eq(c, b, "nn.Module") || text_eq(c, b, "torch.nn.Module") ||
            text_eq(c, b, "Module"))
            return 1;
    }
    return 0;
}

/* __init__'s statements as source, dedented (ModelNew runs them to build what Model builds):
 * every statement but the call of super().__init__, each line after a statement's first one
 * losing the statement's own indentation. */
static void collect_init_body(parse_ctx *c, TSNode body)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 20);
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode st = ts_node_named_child(body, i);
        if (node_is(st, "comment"))
            continue;
        char *text = node_text(c, st);
        if (!text)
            continue;
        if (node_is(st, "expression_statement") && strncmp(text, "super(", 6) == 0 &&
            strstr(text, "__init__")) {
            free(text);
            continue;
        }
        uint32_t col = ts_node_start_point(st).column;
        for (const char *line = text; line;) {
            const char *nl = strchr(line, '\n');
            size_t n = nl ? (size_t)(nl - line) : strlen(line);
            if (line != text) { /* drop the statement's indentation from its later lines */
                uint32_t drop = 0;
                while (drop < col && drop < n && (line[drop] == ' ' || line[drop] == '\t'))
                    drop++;
                line += drop;
                n -= drop;
            }
            akg_buf_append(&b, line, n);
            akg_buf_puts(&b, "\n");
            line = nl ? nl + 1 : NULL;
        }
        free(text);
    }
    free(c->ref->init_body);
    c->ref->init_body = akg_buf_take(&b);
}

static void parse_model(parse_ctx *c, TSNode cls)
{
    akg_reference *ref = c->ref;
    ref->has_model = is_module_base(c, cls);
    ref->model_range = node_range(cls);
    ref->model_name_range = node_range(ts_node_child_by_field_name(cls, "name", 4));
    TSNode body = ts_node_child_by_field_name(cls, "body", 4);
    uint32_t k = ts_node_named_child_count(body);
    for (uint32_t i = 0; i < k; i++) {
        TSNode fn = unwrap_decorated(ts_node_named_child(body, i));
        if (!node_is(fn, "function_definition"))
            continue;
        TSNode name = ts_node_child_by_field_name(fn, "name", 4);
        TSNode params = ts_node_child_by_field_name(fn, "parameters", 10);
        TSNode fbody = ts_node_child_by_field_name(fn, "body", 4);
        if (text_eq(c, name, "__init__")) {
            ref->has_init = 1;
            parse_params(c, params, &ref->init_params, &ref->n_init_params);
            collect_layers(c, fbody);
            collect_init_body(c, fbody);
        } else if (text_eq(c, name, "forward")) {
            ref->has_forward = 1;
            ref->forward_range = node_range(fn);
            ref->forward_name_range = node_range(name);
            parse_params(c, params, &ref->forward_params, &ref->n_forward_params);
            /* Layers first (they may be defined after forward in odd files). */
            c->ref->has_forward = 1;
        }
    }
    for (uint32_t i = 0; i < k; i++) {
        TSNode fn = unwrap_decorated(ts_node_named_child(body, i));
        if (!node_is(fn, "function_definition"))
            continue;
        TSNode name = ts_node_child_by_field_name(fn, "name", 4);
        if (text_eq(c, name, "forward")) {
            TSNode fbody = ts_node_child_by_field_name(fn, "body", 4);
            collect_calls(c, fbody);
            collect_body(c, fbody);
        }
    }
}

static void find_first_error(akg_reference *ref, TSNode n)
{
    if (ref->syntax_errors > 0 && ref->first_error.end_row + ref->first_error.end_col > 0)
        return;
    if ((strcmp(ts_node_type(n), "ERROR") == 0) || ts_node_is_missing(n)) {
        ref->first_error = node_range(n);
        return;
    }
    uint32_t k = ts_node_child_count(n);
    for (uint32_t i = 0; i < k; i++) {
        TSNode ch = ts_node_child(n, i);
        if (ts_node_has_error(ch) || ts_node_is_missing(ch)) {
            find_first_error(ref, ch);
            return;
        }
    }
}

akg_reference *akg_reference_parse(const char *source, size_t len, const char *path)
{
    akg_reference *ref = calloc(1, sizeof *ref);
    if (!ref)
        return NULL;
    ref->path = akg_strdup(path);
    char hash[65];
    akg_sha256_hex(source, len, hash);
    ref->content_hash = akg_strdup(hash);
    TSParser *parser = ts_parser_new();
    ts_parser_set_language(parser, tree_sitter_python());
    TSTree *tree = ts_parser_parse_string(parser, NULL, source, (uint32_t)len);
    TSNode root = ts_tree_root_node(tree);
    parse_ctx c = {source, len, ref};
    if (ts_node_has_error(root)) {
        ref->syntax_errors = 1;
        find_first_error(ref, root);
    }
    uint32_t k = ts_node_named_child_count(root);
    TSNode model = {0};
    int have_model = 0;
    for (uint32_t i = 0; i < k; i++) {
        TSNode n = unwrap_decorated(ts_node_named_child(root, i));
        TSNode name = ts_node_child_by_field_name(n, "name", 4);
        if (node_is(n, "class_definition") && text_eq(&c, name, "Model")) {
            model = n;
            have_model = 1;
        } else if (node_is(n, "function_definition")) {
            if (text_eq(&c, name, "get_inputs")) {
                ref->has_get_inputs = 1;
                ref->get_inputs_range = node_range(n);
            } else if (text_eq(&c, name, "get_init_inputs")) {
                ref->has_get_init_inputs = 1;
                ref->get_init_inputs_range = node_range(n);
            } else if (text_eq(&c, name, "get_inputs_dyn_list")) {
                ref->has_dyn_list = 1;
                ref->dyn_list_range = node_range(n);
            }
        }
    }
    if (have_model)
        parse_model(&c, model);
    ts_tree_delete(tree);
    ts_parser_delete(parser);
    return ref;
}

const char *akg_reference_form_gap(const akg_reference *ref)
{
    if (!ref->has_model)
        return "no class Model(nn.Module)";
    if (!ref->has_get_inputs)
        return "no module-level get_inputs()";
    if (!ref->has_get_init_inputs)
        return "no module-level get_init_inputs()";
    return NULL;
}

int akg_reference_check_form(const akg_reference *ref, char *err, size_t errlen)
{
    const char *where = ref->path ? ref->path : "reference";
    if (ref->syntax_errors)
        return akg_fail(err, errlen, AKG_EPARSE, "%s:%u:%u: syntax error", where,
                        ref->first_error.start_row + 1, ref->first_error.start_col + 1);
    const char *gap = akg_reference_form_gap(ref);
    if (ref->has_model && !ref->has_forward)
        gap = "class Model has no forward()";
    if (gap)
        return akg_fail(err, errlen, AKG_EPARSE, "%s: not in KernelBench form: %s", where, gap);
    return AKG_OK;
}

static cJSON *range_json(akg_range r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "start_row", r.start_row);
    cJSON_AddNumberToObject(o, "start_col", r.start_col);
    cJSON_AddNumberToObject(o, "end_row", r.end_row);
    cJSON_AddNumberToObject(o, "end_col", r.end_col);
    return o;
}

static cJSON *params_json(const akg_ref_param *p, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", p[i].name ? p[i].name : "");
        if (p[i].default_text)
            cJSON_AddStringToObject(o, "default", p[i].default_text);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

cJSON *akg_reference_to_json(const akg_reference *ref)
{
    cJSON *o = cJSON_CreateObject();
    if (ref->path)
        cJSON_AddStringToObject(o, "path", ref->path);
    cJSON_AddStringToObject(o, "content_hash", ref->content_hash ? ref->content_hash : "");
    cJSON_AddBoolToObject(o, "has_model", ref->has_model);
    cJSON_AddBoolToObject(o, "has_forward", ref->has_forward);
    cJSON_AddBoolToObject(o, "has_get_inputs", ref->has_get_inputs);
    cJSON_AddBoolToObject(o, "has_get_init_inputs", ref->has_get_init_inputs);
    cJSON_AddBoolToObject(o, "has_dyn_list", ref->has_dyn_list);
    cJSON_AddBoolToObject(o, "syntax_errors", ref->syntax_errors);
    cJSON_AddItemToObject(o, "model_range", range_json(ref->model_range));
    cJSON_AddItemToObject(o, "forward_range", range_json(ref->forward_range));
    cJSON_AddItemToObject(o, "init_params", params_json(ref->init_params, ref->n_init_params));
    cJSON_AddItemToObject(o, "forward_params",
                          params_json(ref->forward_params, ref->n_forward_params));
    cJSON *layers = cJSON_AddArrayToObject(o, "layers");
    for (size_t i = 0; i < ref->n_layers; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "name", ref->layers[i].name ? ref->layers[i].name : "");
        cJSON_AddStringToObject(l, "type", ref->layers[i].type ? ref->layers[i].type : "");
        cJSON_AddStringToObject(l, "args",
                                ref->layers[i].args_text ? ref->layers[i].args_text : "");
        cJSON_AddItemToArray(layers, l);
    }
    cJSON *calls = cJSON_AddArrayToObject(o, "calls");
    for (size_t i = 0; i < ref->n_calls; i++) {
        cJSON *l = cJSON_CreateObject();
        cJSON_AddStringToObject(l, "callee", ref->calls[i].callee ? ref->calls[i].callee : "");
        cJSON_AddStringToObject(l, "op", ref->calls[i].op ? ref->calls[i].op : "");
        cJSON_AddStringToObject(l, "args", ref->calls[i].args_text ? ref->calls[i].args_text : "");
        cJSON_AddBoolToObject(l, "layer", ref->calls[i].is_layer);
        cJSON_AddItemToObject(l, "range", range_json(ref->calls[i].range));
        cJSON_AddItemToArray(calls, l);
    }
    if (ref->forward_return_text)
        cJSON_AddStringToObject(o, "return", ref->forward_return_text);
    return o;
}

const akg_ref_layer *akg_reference_layer(const akg_reference *ref, const char *name)
{
    for (size_t i = 0; i < ref->n_layers; i++)
        if (ref->layers[i].name && strcmp(ref->layers[i].name, name) == 0)
            return &ref->layers[i];
    return NULL;
}

const akg_expr *akg_reference_attr(const akg_reference *ref, const char *name)
{
    const akg_expr *found = NULL;
    for (size_t i = 0; i < ref->n_attrs; i++)
        if (ref->attrs[i].target && strcmp(ref->attrs[i].target, name) == 0)
            found = ref->attrs[i].value; /* the last assignment wins */
    return found;
}

int akg_reference_init_param(const akg_reference *ref, const char *name)
{
    for (size_t i = 0; i < ref->n_init_params; i++)
        if (ref->init_params[i].name && strcmp(ref->init_params[i].name, name) == 0)
            return (int)i;
    return -1;
}

static void free_stmts(akg_ref_stmt *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(s[i].target);
        free(s[i].text);
        expr_free(s[i].value);
    }
    free(s);
}

static void free_params(akg_ref_param *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(p[i].name);
        free(p[i].default_text);
    }
    free(p);
}

void akg_reference_free(akg_reference *ref)
{
    if (!ref)
        return;
    free(ref->path);
    free(ref->content_hash);
    free_params(ref->init_params, ref->n_init_params);
    free_params(ref->forward_params, ref->n_forward_params);
    for (size_t i = 0; i < ref->n_layers; i++) {
        free(ref->layers[i].name);
        free(ref->layers[i].type);
        free(ref->layers[i].args_text);
        expr_free(ref->layers[i].ctor);
    }
    free(ref->layers);
    for (size_t i = 0; i < ref->n_calls; i++) {
        free(ref->calls[i].callee);
        free(ref->calls[i].op);
        free(ref->calls[i].args_text);
    }
    free(ref->calls);
    free(ref->forward_return_text);
    free_stmts(ref->body, ref->n_body);
    free_stmts(ref->attrs, ref->n_attrs);
    free(ref->init_body);
    free(ref);
}
