/*
 * The JSON form of a checked sketch (akg/sketch_json.h).
 *
 * Built only through the public walk API of akg/sketch.h. The form is what
 * the reference interpreter (backends/harness/akg_harness/sketch_interp.py)
 * executes, so it holds everything the semantics need and nothing about how
 * the text was laid out (comments and spacing are dropped).
 *
 * Format, version 1:
 *
 *   {"format": "akg-sketch", "version": 1,
 *    "name": "relu",
 *    "symbols": ["N", ...],                       in declaration order
 *    "tensors": [{"name": "x", "dtype": "f32",    declaration order
 *                 "dims": [EXPR, ...],
 *                 "loaded": true, "stored": false}],   as the checker saw them
 *    "constexprs": [{"name": "BLOCK",
 *                    "value": 1024,               the integer in force (the chosen tune()
 *                                                 candidate), a float for a float literal,
 *                                                 null when not constant or not given
 *                    "expr": EXPR | null,         the declared value (the tune() call)
 *                    "tunable": true, "choice": 0,
 *                    "candidates": [1024, 4096]}],    numbers (null: not a literal)
 *    "params": [{"name": "eps", "dtype": "f32" | null, "default": EXPR | null}],
 *    "has_binding": true,
 *    "bind": [{"name": "x", "source": EXPR, "line": 5, "col": 9}],   source order
 *    "body": [STMT, ...]}
 *
 * Statements all carry "kind", "line", "col", "end_line", "end_col" (1-based,
 * columns in bytes) and "hints" (the @llm_hint arguments of each decorator
 * above the statement, e.g. [["parallel", "grididx"], ["unroll", "4"]]), plus
 * per kind:
 *
 *   "for":    "var", "start": EXPR | null (0), "stop": EXPR, "step": EXPR | null (1),
 *             "body": [STMT]
 *   "if":     "cond": EXPR, "then": [STMT], "else": [STMT]   (elif: an if in "else")
 *   "alloc":  "name", "dims": [EXPR], "dtype": "f32" | null, "mem_hints": ["fastest", ...]
 *   "load", "store":
 *             "source": EXPR, "target": EXPR,
 *             "options": {"mask": EXPR, "other": EXPR, "llm_hint": EXPR}  (those given)
 *   "assign": "targets": ["a", ...], "op": "=" | "+=" | "-=" | "*=" | "/=", "value": EXPR
 *             (a TUPLE value for `a, b = 1, 2`)
 *   "call":   "call": EXPR   (a call statement, e.g. the destination form gemm(a, b, dst=c))
 *   "pass"
 *
 * Expressions are trees:
 *
 *   {"kind": "int", "value": 5}          exact; beyond 2^53 a bare JSON integer all the same
 *   {"kind": "float", "value": 1e-05, "text": "1e-5"}   value "inf"/"nan" when not finite
 *   {"kind": "string", "value": "x"}
 *   {"kind": "bool", "value": true}
 *   {"kind": "none"}
 *   {"kind": "name", "value": "x"}
 *   {"kind": "unary", "op": "-" | "+" | "~" | "not", "items": [E]}
 *   {"kind": "binary", "op": "+", "items": [L, R]}
 *   {"kind": "call", "callee": "exp", "items": [E, ...], "kwargs": {"axis": E, ...}}
 *   {"kind": "subscript", "base": E, "items": [E | slice, ...]}
 *   {"kind": "slice", "start": E | null, "stop": E | null, "step": E | null}
 *   {"kind": "list", "items": [...]}     {"kind": "tuple", "items": [...]}
 */
#include "akg/sketch_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Integers with a larger magnitude are written as raw text: a JSON number
 * parsed as a double would lose digits. */
#define JSON_EXACT_INT_LIMIT 9007199254740992LL /* 2^53 */

typedef struct {
    bool oom; /* set by any failed allocation; the tree is then dropped */
} json_ctx;

/* Adds item under key (consumes item); records out-of-memory. */
static cJSON *json_put(json_ctx *c, cJSON *obj, const char *key, cJSON *item)
{
    if (!item || !obj) {
        c->oom = true;
        cJSON_Delete(item);
        return NULL;
    }
    if (!cJSON_AddItemToObject(obj, key, item)) {
        c->oom = true;
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

static cJSON *json_push(json_ctx *c, cJSON *arr, cJSON *item)
{
    if (!item || !arr) {
        c->oom = true;
        cJSON_Delete(item);
        return NULL;
    }
    if (!cJSON_AddItemToArray(arr, item)) {
        c->oom = true;
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

static cJSON *json_string_or_null(const char *s)
{
    return s ? cJSON_CreateString(s) : cJSON_CreateNull();
}

static cJSON *json_int(int64_t v)
{
    if (v > -JSON_EXACT_INT_LIMIT && v < JSON_EXACT_INT_LIMIT)
        return cJSON_CreateNumber((double)v);
    char text[32];
    snprintf(text, sizeof text, "%lld", (long long)v);
    return cJSON_CreateRaw(text);
}

static cJSON *json_float(double v)
{
    if (isnan(v))
        return cJSON_CreateString("nan");
    if (isinf(v))
        return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

static cJSON *json_dtype(akg_dtype d)
{
    return d == AKG_DTYPE_UNKNOWN ? cJSON_CreateNull() : cJSON_CreateString(akg_dtype_name(d));
}

/* ---- expressions ---------------------------------------------------------------- */

static cJSON *json_expr(json_ctx *c, const akg_sketch_expr *e);

static cJSON *json_expr_or_null(json_ctx *c, const akg_sketch_expr *e)
{
    return e ? json_expr(c, e) : cJSON_CreateNull();
}

static void json_items(json_ctx *c, cJSON *obj, const akg_sketch_expr *e)
{
    cJSON *items = json_put(c, obj, "items", cJSON_CreateArray());
    for (size_t i = 0; items && i < akg_sketch_expr_item_count(e); i++)
        json_push(c, items, json_expr(c, akg_sketch_expr_item(e, i)));
}

static const char *expr_kind_name(akg_sketch_expr_kind k)
{
    switch (k) {
    case AKG_SKETCH_EXPR_INT:
        return "int";
    case AKG_SKETCH_EXPR_FLOAT:
        return "float";
    case AKG_SKETCH_EXPR_STRING:
        return "string";
    case AKG_SKETCH_EXPR_BOOL:
        return "bool";
    case AKG_SKETCH_EXPR_NONE:
        return "none";
    case AKG_SKETCH_EXPR_NAME:
        return "name";
    case AKG_SKETCH_EXPR_UNARY:
        return "unary";
    case AKG_SKETCH_EXPR_BINARY:
        return "binary";
    case AKG_SKETCH_EXPR_CALL:
        return "call";
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        return "subscript";
    case AKG_SKETCH_EXPR_SLICE:
        return "slice";
    case AKG_SKETCH_EXPR_LIST:
        return "list";
    case AKG_SKETCH_EXPR_TUPLE:
        return "tuple";
    default: /* a kind newer than this file: its consumers reject it by name */
        break;
    }
    return "unknown";
}

static cJSON *json_expr(json_ctx *c, const akg_sketch_expr *e)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        c->oom = true;
        return NULL;
    }
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    json_put(c, o, "kind", cJSON_CreateString(expr_kind_name(k)));
    switch (k) {
    case AKG_SKETCH_EXPR_INT:
        json_put(c, o, "value", json_int(akg_sketch_expr_int(e)));
        break;
    case AKG_SKETCH_EXPR_FLOAT:
        json_put(c, o, "value", json_float(akg_sketch_expr_float(e)));
        json_put(c, o, "text", json_string_or_null(akg_sketch_expr_text(e)));
        break;
    case AKG_SKETCH_EXPR_BOOL:
        json_put(c, o, "value", cJSON_CreateBool(akg_sketch_expr_int(e) != 0));
        break;
    case AKG_SKETCH_EXPR_STRING:
    case AKG_SKETCH_EXPR_NAME:
        json_put(c, o, "value", json_string_or_null(akg_sketch_expr_text(e)));
        break;
    case AKG_SKETCH_EXPR_NONE:
        break;
    case AKG_SKETCH_EXPR_UNARY: {
        json_put(c, o, "op", json_string_or_null(akg_sketch_expr_text(e)));
        cJSON *items = json_put(c, o, "items", cJSON_CreateArray());
        json_push(c, items, json_expr_or_null(c, akg_sketch_expr_lhs(e)));
        break;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        json_put(c, o, "op", json_string_or_null(akg_sketch_expr_text(e)));
        cJSON *items = json_put(c, o, "items", cJSON_CreateArray());
        json_push(c, items, json_expr_or_null(c, akg_sketch_expr_lhs(e)));
        json_push(c, items, json_expr_or_null(c, akg_sketch_expr_rhs(e)));
        break;
    }
    case AKG_SKETCH_EXPR_CALL: {
        json_put(c, o, "callee", json_string_or_null(akg_sketch_expr_text(e)));
        json_items(c, o, e);
        cJSON *kw = json_put(c, o, "kwargs", cJSON_CreateObject());
        for (size_t i = 0; kw && i < akg_sketch_expr_kwarg_count(e); i++)
            json_put(c, kw, akg_sketch_expr_kwarg_name(e, i),
                     json_expr_or_null(c, akg_sketch_expr_kwarg_value(e, i)));
        break;
    }
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        json_put(c, o, "base", json_expr_or_null(c, akg_sketch_expr_base(e)));
        json_items(c, o, e);
        break;
    case AKG_SKETCH_EXPR_SLICE:
        json_put(c, o, "start", json_expr_or_null(c, akg_sketch_slice_start(e)));
        json_put(c, o, "stop", json_expr_or_null(c, akg_sketch_slice_stop(e)));
        json_put(c, o, "step", json_expr_or_null(c, akg_sketch_slice_step(e)));
        break;
    case AKG_SKETCH_EXPR_LIST:
    case AKG_SKETCH_EXPR_TUPLE:
        json_items(c, o, e);
        break;
    default:
        break;
    }
    return o;
}

/* ---- statements ------------------------------------------------------------------- */

static cJSON *json_block(json_ctx *c, const akg_sketch_stmt *st, int which);
static cJSON *json_stmt(json_ctx *c, const akg_sketch_stmt *st);

static const char *stmt_kind_name(akg_sketch_stmt_kind k)
{
    switch (k) {
    case AKG_SKETCH_STMT_FOR:
        return "for";
    case AKG_SKETCH_STMT_IF:
        return "if";
    case AKG_SKETCH_STMT_ALLOC:
        return "alloc";
    case AKG_SKETCH_STMT_LOAD:
        return "load";
    case AKG_SKETCH_STMT_STORE:
        return "store";
    case AKG_SKETCH_STMT_ASSIGN:
        return "assign";
    case AKG_SKETCH_STMT_CALL:
        return "call";
    case AKG_SKETCH_STMT_PASS:
        return "pass";
    default: /* a kind newer than this file: its consumers reject it by name */
        break;
    }
    return "unknown";
}

static void json_span(json_ctx *c, cJSON *o, akg_sketch_span sp, bool with_end)
{
    json_put(c, o, "line", cJSON_CreateNumber((double)sp.line + 1));
    json_put(c, o, "col", cJSON_CreateNumber((double)sp.col + 1));
    if (!with_end)
        return;
    json_put(c, o, "end_line", cJSON_CreateNumber((double)sp.end_line + 1));
    json_put(c, o, "end_col", cJSON_CreateNumber((double)sp.end_col + 1));
}

static void json_hints(json_ctx *c, cJSON *o, const akg_sketch_stmt *st)
{
    cJSON *hints = json_put(c, o, "hints", cJSON_CreateArray());
    for (size_t h = 0; hints && h < akg_sketch_stmt_hint_count(st); h++) {
        cJSON *args = json_push(c, hints, cJSON_CreateArray());
        for (size_t a = 0; args && a < akg_sketch_stmt_hint_arg_count(st, h); a++)
            json_push(c, args, json_string_or_null(akg_sketch_stmt_hint_arg(st, h, a)));
    }
}

static void json_move(json_ctx *c, cJSON *o, const akg_sketch_stmt *st)
{
    json_put(c, o, "source", json_expr_or_null(c, akg_sketch_move_source(st)));
    json_put(c, o, "target", json_expr_or_null(c, akg_sketch_move_target(st)));
    cJSON *opts = json_put(c, o, "options", cJSON_CreateObject());
    static const char *const names[] = {"mask", "other", "llm_hint"};
    for (size_t i = 0; opts && i < sizeof names / sizeof names[0]; i++) {
        const akg_sketch_expr *v = akg_sketch_move_option(st, names[i]);
        if (v)
            json_put(c, opts, names[i], json_expr(c, v));
    }
}

static cJSON *json_stmt(json_ctx *c, const akg_sketch_stmt *st)
{
    cJSON *o = cJSON_CreateObject();
    if (!o) {
        c->oom = true;
        return NULL;
    }
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    json_put(c, o, "kind", cJSON_CreateString(stmt_kind_name(k)));
    json_span(c, o, akg_sketch_stmt_span(st), true);
    json_hints(c, o, st);
    switch (k) {
    case AKG_SKETCH_STMT_FOR:
        json_put(c, o, "var", json_string_or_null(akg_sketch_for_var(st)));
        json_put(c, o, "start", json_expr_or_null(c, akg_sketch_for_start(st)));
        json_put(c, o, "stop", json_expr_or_null(c, akg_sketch_for_stop(st)));
        json_put(c, o, "step", json_expr_or_null(c, akg_sketch_for_step(st)));
        json_put(c, o, "body", json_block(c, st, 0));
        break;
    case AKG_SKETCH_STMT_IF:
        json_put(c, o, "cond", json_expr_or_null(c, akg_sketch_if_cond(st)));
        json_put(c, o, "then", json_block(c, st, 0));
        json_put(c, o, "else", json_block(c, st, 1));
        break;
    case AKG_SKETCH_STMT_ALLOC: {
        json_put(c, o, "name", json_string_or_null(akg_sketch_alloc_name(st)));
        cJSON *dims = json_put(c, o, "dims", cJSON_CreateArray());
        for (size_t d = 0; dims && d < akg_sketch_alloc_rank(st); d++)
            json_push(c, dims, json_expr_or_null(c, akg_sketch_alloc_dim(st, d)));
        json_put(c, o, "dtype", json_dtype(akg_sketch_alloc_dtype(st)));
        cJSON *mh = json_put(c, o, "mem_hints", cJSON_CreateArray());
        for (size_t i = 0; mh && i < akg_sketch_alloc_hint_count(st); i++)
            json_push(c, mh, json_string_or_null(akg_sketch_alloc_hint(st, i)));
        break;
    }
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE:
        json_move(c, o, st);
        break;
    case AKG_SKETCH_STMT_ASSIGN: {
        cJSON *targets = json_put(c, o, "targets", cJSON_CreateArray());
        for (size_t i = 0; targets && i < akg_sketch_assign_target_count(st); i++)
            json_push(c, targets, json_string_or_null(akg_sketch_assign_target(st, i)));
        const char *op = akg_sketch_assign_op(st);
        json_put(c, o, "op", cJSON_CreateString(op ? op : "="));
        json_put(c, o, "value", json_expr_or_null(c, akg_sketch_assign_value(st)));
        break;
    }
    case AKG_SKETCH_STMT_CALL:
        json_put(c, o, "call", json_expr_or_null(c, akg_sketch_call_expr(st)));
        break;
    case AKG_SKETCH_STMT_PASS:
    default:
        break;
    }
    return o;
}

static cJSON *json_block(json_ctx *c, const akg_sketch_stmt *st, int which)
{
    cJSON *arr = cJSON_CreateArray();
    for (size_t i = 0; arr && i < akg_sketch_stmt_body_count(st, which); i++)
        json_push(c, arr, json_stmt(c, akg_sketch_stmt_body_at(st, which, i)));
    return arr;
}

/* ---- header ------------------------------------------------------------------------- */

/* A tune() candidate or constexpr value as a number: an integer when it
 * evaluates to one, the float of a float literal, else null. */
static cJSON *json_number_of(const akg_sketch *sk, const akg_sketch_expr *e)
{
    int64_t v;
    if (e && akg_sketch_expr_eval(sk, e, NULL, 0, &v) == 0)
        return json_int(v);
    if (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_FLOAT)
        return json_float(akg_sketch_expr_float(e));
    if (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_UNARY &&
        akg_sketch_expr_get_kind(akg_sketch_expr_lhs(e)) == AKG_SKETCH_EXPR_FLOAT) {
        const char *op = akg_sketch_expr_text(e);
        double x = akg_sketch_expr_float(akg_sketch_expr_lhs(e));
        if (op && op[0] == '-')
            return json_float(-x);
        if (op && op[0] == '+')
            return json_float(x);
    }
    return cJSON_CreateNull();
}

static void json_constexprs(json_ctx *c, cJSON *root, const akg_sketch *sk)
{
    cJSON *arr = json_put(c, root, "constexprs", cJSON_CreateArray());
    for (size_t i = 0; arr && i < akg_sketch_const_count(sk); i++) {
        cJSON *o = json_push(c, arr, cJSON_CreateObject());
        if (!o)
            break;
        const akg_sketch_expr *value = akg_sketch_const_value(sk, i);
        bool tunable = akg_sketch_const_is_tunable(sk, i);
        json_put(c, o, "name", json_string_or_null(akg_sketch_const_name(sk, i)));
        int64_t v;
        if (akg_sketch_const_int(sk, i, &v) == 0)
            json_put(c, o, "value", json_int(v));
        else if (!tunable)
            json_put(c, o, "value", json_number_of(sk, value));
        else if (akg_sketch_const_choice(sk, i) < akg_sketch_const_candidate_count(sk, i))
            json_put(c, o, "value",
                     json_number_of(
                         sk, akg_sketch_const_candidate(sk, i, akg_sketch_const_choice(sk, i))));
        else
            json_put(c, o, "value", cJSON_CreateNull());
        json_put(c, o, "expr", json_expr_or_null(c, value));
        json_put(c, o, "tunable", cJSON_CreateBool(tunable));
        json_put(c, o, "choice", cJSON_CreateNumber((double)akg_sketch_const_choice(sk, i)));
        cJSON *cands = json_put(c, o, "candidates", cJSON_CreateArray());
        for (size_t k = 0; cands && k < akg_sketch_const_candidate_count(sk, i); k++)
            json_push(c, cands, json_number_of(sk, akg_sketch_const_candidate(sk, i, k)));
    }
}

static void json_header(json_ctx *c, cJSON *root, const akg_sketch *sk)
{
    cJSON *syms = json_put(c, root, "symbols", cJSON_CreateArray());
    for (size_t i = 0; syms && i < akg_sketch_symbol_count(sk); i++)
        json_push(c, syms, json_string_or_null(akg_sketch_symbol_name(sk, i)));

    cJSON *tensors = json_put(c, root, "tensors", cJSON_CreateArray());
    for (size_t i = 0; tensors && i < akg_sketch_tensor_count(sk); i++) {
        cJSON *o = json_push(c, tensors, cJSON_CreateObject());
        if (!o)
            break;
        json_put(c, o, "name", json_string_or_null(akg_sketch_tensor_name(sk, i)));
        json_put(c, o, "dtype", json_dtype(akg_sketch_tensor_dtype(sk, i)));
        cJSON *dims = json_put(c, o, "dims", cJSON_CreateArray());
        for (size_t d = 0; dims && d < akg_sketch_tensor_rank(sk, i); d++)
            json_push(c, dims, json_expr_or_null(c, akg_sketch_tensor_dim(sk, i, d)));
        json_put(c, o, "loaded", cJSON_CreateBool(akg_sketch_tensor_is_loaded(sk, i)));
        json_put(c, o, "stored", cJSON_CreateBool(akg_sketch_tensor_is_stored(sk, i)));
    }

    json_constexprs(c, root, sk);

    cJSON *params = json_put(c, root, "params", cJSON_CreateArray());
    for (size_t i = 0; params && i < akg_sketch_param_count(sk); i++) {
        cJSON *o = json_push(c, params, cJSON_CreateObject());
        if (!o)
            break;
        json_put(c, o, "name", json_string_or_null(akg_sketch_param_name(sk, i)));
        json_put(c, o, "dtype", json_dtype(akg_sketch_param_dtype(sk, i)));
        json_put(c, o, "default", json_expr_or_null(c, akg_sketch_param_default(sk, i)));
    }

    json_put(c, root, "has_binding", cJSON_CreateBool(akg_sketch_has_binding(sk)));
    cJSON *binds = json_put(c, root, "bind", cJSON_CreateArray());
    for (size_t i = 0; binds && i < akg_sketch_bind_count(sk); i++) {
        cJSON *o = json_push(c, binds, cJSON_CreateObject());
        if (!o)
            break;
        json_put(c, o, "name", json_string_or_null(akg_sketch_bind_name(sk, i)));
        json_put(c, o, "source", json_expr_or_null(c, akg_sketch_bind_value(sk, i)));
        json_span(c, o, akg_sketch_bind_span(sk, i), false);
    }
}

cJSON *akg_sketch_to_json(const akg_sketch *sk)
{
    json_ctx c = {false};
    cJSON *root = cJSON_CreateObject();
    if (!root)
        return NULL;
    json_put(&c, root, "format", cJSON_CreateString("akg-sketch"));
    json_put(&c, root, "version", cJSON_CreateNumber(AKG_SKETCH_JSON_VERSION));
    json_put(&c, root, "name", json_string_or_null(akg_sketch_name(sk)));
    json_header(&c, root, sk);
    cJSON *body = json_put(&c, root, "body", cJSON_CreateArray());
    for (size_t i = 0; body && i < akg_sketch_body_count(sk); i++)
        json_push(&c, body, json_stmt(&c, akg_sketch_body_at(sk, i)));
    if (c.oom) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}
