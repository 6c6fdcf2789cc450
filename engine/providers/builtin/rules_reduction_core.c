/*
 * rules_reduction_core.c: reading forward's expression tree into the
 * expression language of rules_reduction_core.h (shared by the reduction,
 * norm, scan and loss rules).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "rule_util.h"
#include "rules_reduction_core.h"

void akg_rx_init(akg_rx_ctx *c, const akg_reference *ref, const cJSON *probe, cJSON *params,
                 akg_range *where, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->ref = ref;
    c->probe = probe;
    c->params = params;
    c->where = where;
    c->err = err;
    c->errlen = errlen;
    c->keepdim = 1;
    cJSON_AddArrayToObject(params, "inputs");
    cJSON_AddArrayToObject(params, "input_dtypes");
    cJSON_AddArrayToObject(params, "scalars");
    cJSON_AddArrayToObject(params, "tensors");
    cJSON_AddArrayToObject(params, "stats");
    cJSON_AddArrayToObject(params, "rowvals");
}

const akg_expr *akg_rx_returned(const akg_reference *ref)
{
    for (size_t i = 0; i + 1 < ref->n_body; i++)
        if (ref->body[i].kind != AKG_STMT_ASSIGN || !ref->body[i].target)
            return NULL;
    return akg_rule_returned_expr(ref);
}

int akg_rx_unsupported(akg_rx_ctx *c, const akg_expr *e, const char *what)
{
    char msg[512];
    snprintf(msg, sizeof msg, "%s (%s)", what, e && e->text ? e->text : "forward");
    return akg_rule_unsupported(c->ref, e ? e->range : c->ref->forward_range, c->where, c->err,
                                c->errlen, msg);
}

cJSON *akg_rx_ref(const char *key, int k)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, key, k);
    return o;
}

cJSON *akg_rx_op(const char *op, cJSON *a, cJSON *b, cJSON *c3)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "op", op);
    cJSON *args = cJSON_AddArrayToObject(o, "a");
    if (a)
        cJSON_AddItemToArray(args, a);
    if (b)
        cJSON_AddItemToArray(args, b);
    if (c3)
        cJSON_AddItemToArray(args, c3);
    return o;
}

int akg_rx_input(akg_rx_ctx *c, int fi)
{
    cJSON *inputs = cJSON_GetObjectItem(c->params, "inputs");
    int n = cJSON_GetArraySize(inputs);
    for (int i = 0; i < n; i++)
        if ((int)cJSON_GetArrayItem(inputs, i)->valuedouble == fi)
            return i;
    cJSON_AddItemToArray(inputs, cJSON_CreateNumber(fi));
    const cJSON *desc = akg_rule_probe_input(c->probe, fi);
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(desc, "dtype"));
    cJSON_AddItemToArray(cJSON_GetObjectItem(c->params, "input_dtypes"),
                         cJSON_CreateString(dt ? dt : "float32"));
    return n;
}

int akg_rx_scalar(akg_rx_ctx *c, const akg_scalar *s)
{
    cJSON *scalars = cJSON_GetObjectItem(c->params, "scalars");
    int n = cJSON_GetArraySize(scalars);
    for (int i = 0; i < n; i++) {
        const cJSON *o = cJSON_GetArrayItem(scalars, i);
        const char *fi = cJSON_GetStringValue(cJSON_GetObjectItem(o, "from_init"));
        if (s->source == AKG_SCALAR_INIT_PARAM && fi && !strcmp(fi, s->init_name))
            return i;
    }
    if (n >= 16)
        return -1;
    cJSON *o = cJSON_CreateObject();
    if (s->source == AKG_SCALAR_INIT_PARAM) {
        cJSON_AddStringToObject(o, "name", s->init_name);
        cJSON_AddStringToObject(o, "from_init", s->init_name);
    } else {
        char name[32];
        snprintf(name, sizeof name, "%.20s%d", s->name[0] ? s->name : "c", n);
        cJSON_AddStringToObject(o, "name", name);
    }
    cJSON_AddNumberToObject(o, "value", s->value);
    cJSON_AddItemToArray(scalars, o);
    return n;
}

static const cJSON *probe_tensor(const cJSON *probe, const char *name)
{
    const cJSON *p = akg_rule_probe_param(probe, name);
    if (p)
        return p;
    const cJSON *b;
    cJSON_ArrayForEach(b, cJSON_GetObjectItem(probe, "buffers"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(b, "name"));
        if (n && !strcmp(n, name))
            return b;
    }
    return NULL;
}

int akg_rx_tensor(akg_rx_ctx *c, const char *attr)
{
    cJSON *tensors = cJSON_GetObjectItem(c->params, "tensors");
    int n = cJSON_GetArraySize(tensors);
    for (int i = 0; i < n; i++) {
        const char *a =
            cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(tensors, i), "attr"));
        if (a && !strcmp(a, attr))
            return i;
    }
    const cJSON *desc = probe_tensor(c->probe, attr);
    if (!desc)
        return -1;
    cJSON *o = cJSON_CreateObject();
    char name[64];
    snprintf(name, sizeof name, "%s", attr);
    for (char *p = name; *p; p++)
        if (*p == '.')
            *p = '_';
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "attr", attr);
    cJSON_AddItemToObject(o, "shape", cJSON_Duplicate(cJSON_GetObjectItem(desc, "shape"), 1));
    cJSON_AddBoolToObject(o, "buffer", akg_rule_probe_param(c->probe, attr) == NULL);
    cJSON_AddItemToArray(tensors, o);
    return n;
}

int akg_rx_input_shape(const cJSON *probe, int i, long *sizes, int max)
{
    const cJSON *desc = akg_rule_probe_input(probe, i);
    int r = akg_rule_rank(desc);
    if (r < 0 || r > max)
        return -1;
    for (int k = 0; k < r; k++)
        sizes[k] = akg_rule_dim(desc, k);
    return r;
}

/* ---------- reductions ---------- */

static int is_int_scalar(akg_rx_ctx *c, const akg_expr *e)
{
    akg_scalar s;
    const char *str = NULL;
    if (!e)
        return 0;
    if (e->kind == AKG_EX_TUPLE)
        return 1;
    return akg_rule_scalar(c->ref, c->probe, e, "dim", &s, &str) == AKG_OK && !str;
}

const char *akg_rx_reduction_mode(const akg_rx_ctx *c, const akg_expr *call)
{
    if (!call || call->kind != AKG_EX_CALL || !call->name || call->is_layer)
        return NULL;
    const char *op = call->name;
    if (!strcmp(op, "sum") || !strcmp(op, "mean") || !strcmp(op, "prod") || !strcmp(op, "argmax") ||
        !strcmp(op, "argmin") || !strcmp(op, "norm"))
        return op;
    if (!strcmp(op, "amax"))
        return "max";
    if (!strcmp(op, "amin"))
        return "min";
    if (!strcmp(op, "max") || !strcmp(op, "min")) {
        const akg_expr *second = akg_rule_arg(call, 1, "dim");
        if (!second)
            return op; /* torch.max(x): the maximum of all elements */
        if (is_int_scalar((akg_rx_ctx *)c, second))
            return op;
    }
    return NULL;
}

static int dims_equal(const cJSON *a, const cJSON *b)
{
    return cJSON_Compare(a, b, 1);
}

int akg_rx_add_stat(akg_rx_ctx *c, const akg_expr *call, const char *mode)
{
    const akg_expr *x = akg_rule_arg(call, 0, "input");
    const akg_expr *dim = NULL, *keep = NULL;
    const char *m = mode;
    cJSON *extra = NULL;
    if (!strcmp(mode, "norm")) {
        const akg_expr *p = akg_rule_arg(call, 1, "p");
        akg_scalar ps;
        const char *str = NULL;
        if (p && akg_rule_scalar(c->ref, c->probe, p, "p", &ps, &str) != AKG_OK)
            return c->failed = 1, -1;
        if (p && !(str && !strcmp(str, "fro")) && !(!str && ps.value == 2.0) &&
            !(!str && ps.value == 1.0))
            return c->failed = 1, -1;
        m = (p && !str && ps.value == 1.0) ? "sum" : "norm2";
        if (!strcmp(m, "sum"))
            extra = cJSON_CreateString("abs");
        dim = akg_rule_arg(call, 2, "dim");
        keep = akg_rule_arg(call, 3, "keepdim");
    } else {
        dim = akg_rule_arg(call, 1, "dim");
        keep = akg_rule_arg(call, 2, "keepdim");
    }
    if (dim && dim->kind == AKG_EX_NONE)
        dim = NULL;
    cJSON *spec = cJSON_CreateObject();
    if (!dim) {
        cJSON_AddNumberToObject(spec, "all", 1);
    } else if (dim->kind == AKG_EX_TUPLE) {
        long v[8];
        int n = akg_rule_int_list(c->ref, c->probe, dim, v, 8, 1);
        if (n <= 0) {
            cJSON_Delete(spec);
            return c->failed = 1, -1;
        }
        for (int i = 1; i < n; i++)
            if (v[i] != v[i - 1] + 1 || (v[0] < 0) != (v[i] < 0)) {
                cJSON_Delete(spec);
                return c->failed = 1, -1; /* not one run of dims */
            }
        cJSON *d = cJSON_AddObjectToObject(spec, "dim");
        cJSON_AddNumberToObject(d, "value", (double)v[0]);
        cJSON_AddNumberToObject(spec, "n", n);
    } else {
        akg_scalar s;
        if (akg_rule_scalar(c->ref, c->probe, dim, "dim", &s, NULL) != AKG_OK) {
            cJSON_Delete(spec);
            return c->failed = 1, -1;
        }
        cJSON *d = cJSON_AddObjectToObject(spec, "dim");
        cJSON_AddNumberToObject(d, "value", s.value);
        if (s.source == AKG_SCALAR_INIT_PARAM)
            cJSON_AddStringToObject(d, "from_init", s.init_name);
        cJSON_AddNumberToObject(spec, "n", 1);
    }
    int keepdim = 0;
    if (keep) {
        akg_scalar ks;
        if (akg_rule_scalar(c->ref, c->probe, keep, "keepdim", &ks, NULL) != AKG_OK ||
            ks.source != AKG_SCALAR_CONST) {
            cJSON_Delete(spec);
            return c->failed = 1, -1;
        }
        keepdim = ks.value != 0;
    }
    cJSON *old = cJSON_GetObjectItem(c->params, "dims");
    if (old) {
        int same = dims_equal(old, spec);
        cJSON_Delete(spec);
        if (!same)
            return c->failed = 1, -1;
    } else {
        cJSON_AddItemToObject(c->params, "dims", spec);
    }
    if (!keepdim && !cJSON_GetObjectItem(cJSON_GetObjectItem(c->params, "dims"), "all"))
        c->keepdim = 0;
    cJSON_DeleteItemFromObject(c->params, "keepdim");
    cJSON_AddNumberToObject(c->params, "keepdim", keepdim);
    cJSON *ex = akg_rx_expr(c, x);
    if (!ex)
        return -1;
    if (akg_rx_has_stat(ex)) {
        cJSON_Delete(ex);
        return c->failed = 1, -1;
    }
    if (extra)
        ex = akg_rx_op("abs", ex, NULL, NULL);
    cJSON *stats = cJSON_GetObjectItem(c->params, "stats");
    cJSON *st = cJSON_CreateObject();
    cJSON_AddStringToObject(st, "mode", m);
    cJSON_AddItemToObject(st, "expr", ex);
    cJSON_AddItemToArray(stats, st);
    return cJSON_GetArraySize(stats) - 1;
}

/* ---------- expressions ---------- */

static const akg_expr *local_def(const akg_reference *ref, const char *name)
{
    const akg_expr *def = NULL;
    for (size_t i = 0; i + 1 < ref->n_body; i++)
        if (ref->body[i].kind == AKG_STMT_ASSIGN && ref->body[i].target &&
            !strcmp(ref->body[i].target, name))
            def = ref->body[i].value;
    return def;
}

static cJSON *fail(akg_rx_ctx *c)
{
    c->failed = 1;
    return NULL;
}

static cJSON *scalar_expr(akg_rx_ctx *c, const akg_expr *e, const char *name)
{
    akg_scalar s;
    const char *str = NULL;
    if (akg_rule_scalar(c->ref, c->probe, e, name, &s, &str) != AKG_OK || str)
        return NULL;
    if (s.source == AKG_SCALAR_CONST)
        return cJSON_CreateNumber(s.value);
    int k = akg_rx_scalar(c, &s);
    return k < 0 ? fail(c) : akg_rx_ref("s", k);
}

static const char *unary_ops[] = {"abs",    "sqrt", "rsqrt",   "exp",  "log",        "neg", "relu",
                                  "square", "sign", "sigmoid", "tanh", "reciprocal", NULL};

static cJSON *call_expr(akg_rx_ctx *c, const akg_expr *e)
{
    const char *op = e->name ? e->name : "";
    const char *mode = akg_rx_reduction_mode(c, e);
    if (mode) {
        if (!strcmp(mode, "argmax") || !strcmp(mode, "argmin"))
            return fail(c);
        if ((!strcmp(mode, "max") || !strcmp(mode, "min")) && akg_rule_arg(e, 1, "dim"))
            return fail(c); /* a (values, indices) pair: read through [0] / .values */
        int k = akg_rx_add_stat(c, e, mode);
        return k < 0 ? fail(c) : akg_rx_ref("st", k);
    }
    const akg_expr *x = akg_rule_arg(e, 0, "input");
    if (!x)
        return fail(c);
    for (int i = 0; unary_ops[i]; i++)
        if (!strcmp(op, unary_ops[i])) {
            cJSON *a = akg_rx_expr(c, x);
            return a ? akg_rx_op(op, a, NULL, NULL) : NULL;
        }
    if (!strcmp(op, "negative"))
        return akg_rx_op("neg", akg_rx_expr(c, x), NULL, NULL);
    if (!strcmp(op, "add") || !strcmp(op, "sub") || !strcmp(op, "mul") || !strcmp(op, "div") ||
        !strcmp(op, "maximum") || !strcmp(op, "minimum") || !strcmp(op, "max") ||
        !strcmp(op, "min") || !strcmp(op, "pow") || !strcmp(op, "multiply") ||
        !strcmp(op, "subtract") || !strcmp(op, "divide")) {
        const akg_expr *y = akg_rule_arg(e, 1, "other");
        if (!y && !strcmp(op, "pow"))
            y = akg_rule_arg(e, 1, "exponent");
        if (!y)
            return fail(c);
        cJSON *a = akg_rx_expr(c, x);
        cJSON *b = a ? akg_rx_expr(c, y) : NULL;
        if (!b) {
            cJSON_Delete(a);
            return NULL;
        }
        const char *name = !strcmp(op, "maximum")    ? "max"
                           : !strcmp(op, "minimum")  ? "min"
                           : !strcmp(op, "multiply") ? "mul"
                           : !strcmp(op, "subtract") ? "sub"
                           : !strcmp(op, "divide")   ? "div"
                                                     : op;
        return akg_rx_op(name, a, b, NULL);
    }
    if (!strcmp(op, "clamp") || !strcmp(op, "clip") || !strcmp(op, "clamp_min") ||
        !strcmp(op, "clamp_max")) {
        const akg_expr *lo = NULL, *hi = NULL;
        if (!strcmp(op, "clamp_min"))
            lo = akg_rule_arg(e, 1, "min");
        else if (!strcmp(op, "clamp_max"))
            hi = akg_rule_arg(e, 1, "max");
        else {
            lo = akg_rule_arg(e, 1, "min");
            hi = akg_rule_arg(e, 2, "max");
        }
        if (lo && lo->kind == AKG_EX_NONE)
            lo = NULL;
        if (hi && hi->kind == AKG_EX_NONE)
            hi = NULL;
        cJSON *a = akg_rx_expr(c, x);
        if (!a)
            return NULL;
        if (lo) {
            cJSON *l = akg_rx_expr(c, lo);
            if (!l) {
                cJSON_Delete(a);
                return NULL;
            }
            a = akg_rx_op("max", a, l, NULL);
        }
        if (hi) {
            cJSON *h = akg_rx_expr(c, hi);
            if (!h) {
                cJSON_Delete(a);
                return NULL;
            }
            a = akg_rx_op("min", a, h, NULL);
        }
        return a;
    }
    return fail(c);
}

cJSON *akg_rx_expr(akg_rx_ctx *c, const akg_expr *e)
{
    if (!e || c->failed || c->inline_depth > 32)
        return fail(c);
    switch (e->kind) {
    case AKG_EX_NUMBER:
    case AKG_EX_BOOL:
        return cJSON_CreateNumber(e->number);
    case AKG_EX_NAME: {
        int fi = akg_rule_forward_param(c->ref, e);
        if (fi >= 0)
            return akg_rx_ref("in", akg_rx_input(c, fi));
        const akg_expr *def = local_def(c->ref, e->name);
        if (def) {
            c->inline_depth++;
            cJSON *r = akg_rx_expr(c, def);
            c->inline_depth--;
            return r;
        }
        cJSON *s = scalar_expr(c, e, e->name);
        return s ? s : fail(c);
    }
    case AKG_EX_ATTR: {
        if (e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_NAME &&
            !strcmp(e->args[0]->name, "self")) {
            int k = akg_rx_tensor(c, e->name);
            if (k >= 0)
                return akg_rx_ref("p", k);
            cJSON *s = scalar_expr(c, e, e->name);
            return s ? s : fail(c);
        }
        /* torch.max(x, dim).values */
        if (e->n_args == 1 && e->name && !strcmp(e->name, "values") && e->args[0] &&
            e->args[0]->kind == AKG_EX_CALL) {
            const char *mode = akg_rx_reduction_mode(c, e->args[0]);
            if (mode && (!strcmp(mode, "max") || !strcmp(mode, "min"))) {
                int k = akg_rx_add_stat(c, e->args[0], mode);
                return k < 0 ? fail(c) : akg_rx_ref("st", k);
            }
        }
        return fail(c);
    }
    case AKG_EX_SUBSCRIPT: {
        /* torch.max(x, dim)[0] */
        size_t n = e->text ? strlen(e->text) : 0;
        if (e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_CALL && n > 3 &&
            !strcmp(e->text + n - 3, "[0]")) {
            const char *mode = akg_rx_reduction_mode(c, e->args[0]);
            if (mode && (!strcmp(mode, "max") || !strcmp(mode, "min"))) {
                int k = akg_rx_add_stat(c, e->args[0], mode);
                return k < 0 ? fail(c) : akg_rx_ref("st", k);
            }
        }
        return fail(c);
    }
    case AKG_EX_UNARY:
        if (e->name && !strcmp(e->name, "-") && e->n_args == 1) {
            cJSON *a = akg_rx_expr(c, e->args[0]);
            return a ? akg_rx_op("neg", a, NULL, NULL) : NULL;
        }
        if (e->name && !strcmp(e->name, "+") && e->n_args == 1)
            return akg_rx_expr(c, e->args[0]);
        return fail(c);
    case AKG_EX_BINOP: {
        if (e->n_args != 2 || !e->name)
            return fail(c);
        const char *op = !strcmp(e->name, "+")    ? "add"
                         : !strcmp(e->name, "-")  ? "sub"
                         : !strcmp(e->name, "*")  ? "mul"
                         : !strcmp(e->name, "/")  ? "div"
                         : !strcmp(e->name, "**") ? "pow"
                                                  : NULL;
        if (!op)
            return fail(c);
        cJSON *a = akg_rx_expr(c, e->args[0]);
        if (!a)
            return NULL;
        if (!strcmp(op, "pow") && e->args[1]->kind == AKG_EX_NUMBER) {
            double p = e->args[1]->number;
            if (p == 2.0)
                return akg_rx_op("square", a, NULL, NULL);
            if (p == 0.5)
                return akg_rx_op("sqrt", a, NULL, NULL);
            if (p == 1.0)
                return a;
        }
        cJSON *b = akg_rx_expr(c, e->args[1]);
        if (!b) {
            cJSON_Delete(a);
            return NULL;
        }
        return akg_rx_op(op, a, b, NULL);
    }
    case AKG_EX_CALL:
        if (e->is_layer)
            return fail(c);
        return call_expr(c, e);
    default:
        return fail(c);
    }
}

/* ---------- analysis ---------- */

static int has_key(const cJSON *e, const char *k1, const char *k2)
{
    if (!cJSON_IsObject(e))
        return 0;
    if (cJSON_GetObjectItem(e, k1) || (k2 && cJSON_GetObjectItem(e, k2)))
        return 1;
    const cJSON *a;
    cJSON_ArrayForEach(a, cJSON_GetObjectItem(e, "a")) if (has_key(a, k1, k2)) return 1;
    return 0;
}

int akg_rx_has_elem(const cJSON *e)
{
    return has_key(e, "in", "p");
}
int akg_rx_has_stat(const cJSON *e)
{
    return has_key(e, "st", "rv");
}

static cJSON *add_rowval(cJSON *params, cJSON *e)
{
    cJSON *rv = cJSON_GetObjectItem(params, "rowvals");
    if (!rv)
        rv = cJSON_AddArrayToObject(params, "rowvals");
    cJSON_AddItemToArray(rv, e);
    return akg_rx_ref("rv", cJSON_GetArraySize(rv) - 1);
}

cJSON *akg_rx_hoist(cJSON *params, cJSON *e)
{
    if (!cJSON_IsObject(e))
        return e;
    if (!akg_rx_has_elem(e)) {
        if (akg_rx_has_stat(e) && cJSON_GetObjectItem(e, "op"))
            return add_rowval(params, e);
        return e;
    }
    const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(e, "op"));
    cJSON *args = cJSON_GetObjectItem(e, "a");
    if (op && !strcmp(op, "div") && cJSON_GetArraySize(args) == 2 &&
        !akg_rx_has_elem(cJSON_GetArrayItem(args, 1)) &&
        akg_rx_has_stat(cJSON_GetArrayItem(args, 1))) {
        cJSON *den = cJSON_DetachItemFromArray(args, 1);
        cJSON *num = cJSON_DetachItemFromArray(args, 0);
        cJSON_Delete(e);
        cJSON *inv = add_rowval(params, akg_rx_op("div", cJSON_CreateNumber(1.0), den, NULL));
        return akg_rx_op("mul", akg_rx_hoist(params, num), inv, NULL);
    }
    int n = cJSON_GetArraySize(args);
    for (int i = 0; i < n; i++) {
        cJSON *a = cJSON_DetachItemFromArray(args, i);
        cJSON_InsertItemInArray(args, i, akg_rx_hoist(params, a));
    }
    return e;
}

int akg_rx_numeric_retry(const cJSON *feedback)
{
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    return cls && (!strcmp(cls, "numerical_mismatch") || !strcmp(cls, "shape_mismatch"));
}

int akg_rx_finish(akg_rx_ctx *c, akg_design *d, const akg_expr *at, const char *what,
                  akg_design **out)
{
    char msg[512];
    /* the words of the sketch's comment, for a rewrite of the design for another target */
    if (d->params && what)
        cJSON_AddStringToObject(d->params, "what", what);
    int rc = akg_rx_write_sketch(d, c->ref, c->probe, c->precise, what, msg, sizeof msg);
    if (rc) {
        akg_design_free(d);
        if (rc == AKG_ENOMEM)
            return rc;
        return akg_rule_unsupported(c->ref, at ? at->range : c->ref->forward_range, c->where,
                                    c->err, c->errlen, msg);
    }
    *out = d;
    return AKG_OK;
}
