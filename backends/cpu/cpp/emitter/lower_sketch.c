/*
 * lower_sketch.c: reading a checked sketch back into the design the emitter
 * lowers. The sketch is the source of truth: its compute statements become
 * the SSA program, its constexpr choices the block sizes, its @llm_hint
 * decorators the parallel and simd decisions. So a sketch edited by a user
 * (an op changed, a tunable moved, a hint removed) changes the kernel.
 */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_common.h"

long akg_sketch_const_by_name(const akg_sketch *sk, const char *name, long fallback)
{
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        if (strcmp(akg_sketch_const_name(sk, i), name) != 0)
            continue;
        int64_t v;
        if (akg_sketch_const_int(sk, i, &v) == 0)
            return (long)v;
    }
    return fallback;
}

static int stmts_have_hint(const akg_sketch_stmt *st, const char *kind)
{
    if (akg_sketch_stmt_hint_value(st, kind))
        return 1;
    for (int which = 0; which < 2; which++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, which); i++)
            if (stmts_have_hint(akg_sketch_stmt_body_at(st, which, i), kind))
                return 1;
    return 0;
}

int akg_sketch_has_hint(const akg_sketch *sk, const char *kind)
{
    for (size_t i = 0; i < akg_sketch_body_count(sk); i++)
        if (stmts_have_hint(akg_sketch_body_at(sk, i), kind))
            return 1;
    return 0;
}

typedef struct {
    const akg_sketch *sk;
    const akg_reference *ref;
    akg_design *d;
    const akg_design *src; /* the Designer's design: scalar sources */
    akg_scalar src_scalars[AKG_DESIGN_MAX_SCALARS * 4];
    int n_src_scalars;
    char names[AKG_DESIGN_MAX_NODES][64]; /* tile name bound to each node, "" if none */
    char *err;
    size_t errlen;
} lower_ctx;

static int fail_at(lower_ctx *c, akg_sketch_span sp, const char *msg, const char *what)
{
    return akg_fail(c->err, c->errlen, AKG_EINVAL, "sketch:%u:%u: %s%s", sp.line + 1, sp.col + 1,
                    msg, what ? what : "");
}

static int push(lower_ctx *c, akg_pw_node n, akg_sketch_span sp)
{
    akg_design *d = c->d;
    for (int i = 0; i < d->n_nodes; i++) {
        const akg_pw_node *m = &d->nodes[i];
        if (m->kind == n.kind && n.kind != AKG_PW_OP &&
            ((n.kind == AKG_PW_CONST && m->value == n.value) ||
             (n.kind == AKG_PW_INPUT && m->input == n.input) ||
             (n.kind == AKG_PW_SCALAR && m->scalar == n.scalar)))
            return i;
    }
    if (d->n_nodes >= AKG_DESIGN_MAX_NODES)
        return fail_at(c, sp, "more than 64 values in one element pass", NULL);
    c->names[d->n_nodes][0] = '\0';
    d->nodes[d->n_nodes] = n;
    return d->n_nodes++;
}

static int lookup_tile(lower_ctx *c, const char *name)
{
    for (int i = c->d->n_nodes - 1; i >= 0; i--)
        if (strcmp(c->names[i], name) == 0)
            return i;
    return -1;
}

/* A sketch param: the Designer's scalar of that name, a constructor argument
 * of that name, or its default as a constant. */
static int param_node(lower_ctx *c, const char *name, akg_sketch_span sp)
{
    akg_design *d = c->d;
    akg_scalar s;
    memset(&s, 0, sizeof s);
    int found = 0;
    for (int i = 0; i < c->n_src_scalars && !found; i++)
        if (strcmp(c->src_scalars[i].name, name) == 0) {
            s = c->src_scalars[i];
            found = 1;
        }
    if (!found) {
        int idx = akg_reference_init_param(c->ref, name);
        if (idx >= 0) {
            s.source = AKG_SCALAR_INIT_PARAM;
            s.init_index = idx;
            snprintf(s.init_name, sizeof s.init_name, "%s", name);
            snprintf(s.name, sizeof s.name, "%s", name);
            found = 1;
        }
    }
    if (!found) {
        for (size_t i = 0; i < akg_sketch_param_count(c->sk); i++) {
            if (strcmp(akg_sketch_param_name(c->sk, i), name) != 0)
                continue;
            const akg_sketch_expr *def = akg_sketch_param_default(c->sk, i);
            if (!def)
                return fail_at(c, sp, "param without a default and not a constructor argument: ",
                               name);
            akg_pw_node n = {0};
            n.kind = AKG_PW_CONST;
            n.value = akg_sketch_expr_float(def);
            return push(c, n, sp);
        }
        return -2;
    }
    int idx = -1;
    for (int i = 0; i < d->n_scalars; i++)
        if (strcmp(d->scalars[i].init_name, s.init_name) == 0)
            idx = i;
    if (idx < 0) {
        if (d->n_scalars >= (int)(sizeof d->scalars / sizeof d->scalars[0]))
            return fail_at(c, sp, "too many scalar parameters", NULL);
        idx = d->n_scalars++;
        d->scalars[idx] = s;
    }
    akg_pw_node n = {0};
    n.kind = AKG_PW_SCALAR;
    n.scalar = idx;
    return push(c, n, sp);
}

static int lower_expr(lower_ctx *c, const akg_sketch_expr *e, int depth)
{
    akg_sketch_span sp = akg_sketch_expr_span(e);
    if (depth > 64)
        return fail_at(c, sp, "expression nested too deep", NULL);
    akg_pw_node n = {0};
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_FLOAT:
    case AKG_SKETCH_EXPR_BOOL:
        n.kind = AKG_PW_CONST;
        n.value = akg_sketch_expr_float(e);
        return push(c, n, sp);
    case AKG_SKETCH_EXPR_NAME: {
        const char *name = akg_sketch_expr_text(e);
        int t = lookup_tile(c, name);
        if (t >= 0)
            return t;
        int p = param_node(c, name, sp);
        if (p != -2)
            return p;
        long v = akg_sketch_const_by_name(c->sk, name, LONG_MIN);
        if (v != LONG_MIN) {
            n.kind = AKG_PW_CONST;
            n.value = (double)v;
            return push(c, n, sp);
        }
        return fail_at(c, sp, "unknown value ", name);
    }
    case AKG_SKETCH_EXPR_UNARY: {
        int a = lower_expr(c, akg_sketch_expr_lhs(e), depth + 1);
        if (a < 0)
            return a;
        if (!strcmp(akg_sketch_expr_text(e), "+"))
            return a;
        if (strcmp(akg_sketch_expr_text(e), "-") != 0)
            return fail_at(c, sp, "unsupported operator ", akg_sketch_expr_text(e));
        if (c->d->nodes[a].kind == AKG_PW_CONST) {
            n.kind = AKG_PW_CONST;
            n.value = -c->d->nodes[a].value;
            return push(c, n, sp);
        }
        n.kind = AKG_PW_OP;
        snprintf(n.op, sizeof n.op, "neg");
        n.args[0] = a;
        n.n_args = 1;
        return push(c, n, sp);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_pointwise_binop(akg_sketch_expr_text(e));
        if (!op)
            return fail_at(c, sp, "unsupported operator ", akg_sketch_expr_text(e));
        int a = lower_expr(c, akg_sketch_expr_lhs(e), depth + 1);
        if (a < 0)
            return a;
        int b = lower_expr(c, akg_sketch_expr_rhs(e), depth + 1);
        if (b < 0)
            return b;
        n.kind = AKG_PW_OP;
        snprintf(n.op, sizeof n.op, "%s", op);
        n.args[0] = a;
        n.args[1] = b;
        n.n_args = 2;
        return push(c, n, sp);
    }
    case AKG_SKETCH_EXPR_CALL: {
        size_t k = akg_sketch_expr_item_count(e);
        if (k == 0 || k > 3)
            return fail_at(c, sp, "an elementwise op takes 1 to 3 arguments: ",
                           akg_sketch_expr_text(e));
        n.kind = AKG_PW_OP;
        snprintf(n.op, sizeof n.op, "%s", akg_sketch_expr_text(e));
        for (size_t i = 0; i < k; i++) {
            int a = lower_expr(c, akg_sketch_expr_item(e, i), depth + 1);
            if (a < 0)
                return a;
            n.args[i] = a;
        }
        n.n_args = (int)k;
        return push(c, n, sp);
    }
    default:
        return fail_at(c, sp, "not an elementwise expression", NULL);
    }
}

static int subscript_tensor(const akg_sketch_expr *e, const char **name)
{
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_SUBSCRIPT)
        e = akg_sketch_expr_base(e);
    if (akg_sketch_expr_get_kind(e) != AKG_SKETCH_EXPR_NAME)
        return -1;
    *name = akg_sketch_expr_text(e);
    return 0;
}

static int lower_stmts(lower_ctx *c, const akg_sketch_stmt *st, int *result, int depth);

static int lower_stmt(lower_ctx *c, const akg_sketch_stmt *st, int *result, int depth)
{
    akg_sketch_span sp = akg_sketch_stmt_span(st);
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_FOR:
        if (depth > 0)
            return fail_at(c, sp, "a pointwise sketch has one loop over the elements", NULL);
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, 0); i++) {
            int rc = lower_stmts(c, akg_sketch_stmt_body_at(st, 0, i), result, depth + 1);
            if (rc)
                return rc;
        }
        return AKG_OK;
    case AKG_SKETCH_STMT_ALLOC:
    case AKG_SKETCH_STMT_PASS:
        return AKG_OK;
    case AKG_SKETCH_STMT_LOAD: {
        const char *tensor, *tile;
        if (subscript_tensor(akg_sketch_move_source(st), &tensor) ||
            subscript_tensor(akg_sketch_move_target(st), &tile))
            return fail_at(c, sp, "load(TENSOR[...] -> TILE) expected", NULL);
        int input = -1;
        for (size_t i = 0; i < c->ref->n_forward_params; i++)
            if (!strcmp(c->ref->forward_params[i].name, tensor))
                input = (int)i;
        if (input < 0)
            return fail_at(c, sp, "loads a tensor that is not an input of forward: ", tensor);
        akg_pw_node n = {0};
        n.kind = AKG_PW_INPUT;
        n.input = input;
        int idx = push(c, n, sp);
        if (idx < 0)
            return idx;
        snprintf(c->names[idx], sizeof c->names[idx], "%s", tile);
        return AKG_OK;
    }
    case AKG_SKETCH_STMT_ASSIGN: {
        if (akg_sketch_assign_target_count(st) != 1 || strcmp(akg_sketch_assign_op(st), "=") != 0)
            return fail_at(c, sp, "one target and `=` expected", NULL);
        int idx = lower_expr(c, akg_sketch_assign_value(st), 0);
        if (idx < 0)
            return idx;
        if (c->d->nodes[idx].kind == AKG_PW_OP && c->names[idx][0]) {
            /* the same value under a second name: alias, the SSA stays */
        }
        snprintf(c->names[idx], sizeof c->names[idx], "%s", akg_sketch_assign_target(st, 0));
        return AKG_OK;
    }
    case AKG_SKETCH_STMT_STORE: {
        const char *out;
        if (subscript_tensor(akg_sketch_move_target(st), &out))
            return fail_at(c, sp, "store(TILE -> TENSOR[...]) expected", NULL);
        long t = akg_sketch_tensor_find(c->sk, out);
        if (t < 0)
            return fail_at(c, sp, "stores into an undeclared tensor: ", out);
        int idx = lower_expr(c, akg_sketch_move_source(st), 0);
        if (idx < 0)
            return idx;
        if (*result >= 0)
            return fail_at(c, sp, "a pointwise sketch stores one output", NULL);
        *result = idx;
        const akg_sketch_expr *hints = akg_sketch_move_option(st, "llm_hint");
        for (size_t i = 0; hints && i < akg_sketch_expr_item_count(hints); i++)
            if (!strcmp(akg_sketch_expr_text(akg_sketch_expr_item(hints, i)), "nontemporal"))
                c->d->nontemporal = 1;
        if (hints && akg_sketch_expr_get_kind(hints) == AKG_SKETCH_EXPR_STRING &&
            !strcmp(akg_sketch_expr_text(hints), "nontemporal"))
            c->d->nontemporal = 1;
        return AKG_OK;
    }
    default:
        return fail_at(c, sp, "statement not allowed in a pointwise sketch", NULL);
    }
}

static int lower_stmts(lower_ctx *c, const akg_sketch_stmt *st, int *result, int depth)
{
    return lower_stmt(c, st, result, depth);
}

int akg_cpp_lower_pointwise(const akg_sketch *sk, const akg_reference *ref, akg_design *dst,
                            char *err, size_t errlen)
{
    lower_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return AKG_ENOMEM;
    c->sk = sk;
    c->ref = ref;
    c->d = dst;
    c->err = err;
    c->errlen = errlen;
    c->n_src_scalars = dst->n_scalars;
    memcpy(c->src_scalars, dst->scalars, sizeof c->src_scalars);
    /* scalars keep the names the sketch's params use */
    for (int i = 0; i < c->n_src_scalars; i++)
        if (c->src_scalars[i].init_name[0])
            memcpy(c->src_scalars[i].name, c->src_scalars[i].init_name,
                   sizeof c->src_scalars[i].name);
    dst->n_nodes = 0;
    dst->n_scalars = 0;
    dst->n_inputs = 0;
    dst->nontemporal = 0;
    int result = -1, rc = AKG_OK;
    for (size_t i = 0; i < akg_sketch_body_count(sk) && !rc; i++)
        rc = lower_stmts(c, akg_sketch_body_at(sk, i), &result, 0);
    if (!rc && result < 0)
        rc = akg_fail(err, errlen, AKG_EINVAL, "sketch: nothing is stored");
    if (!rc && (dst->nodes[result].kind == AKG_PW_CONST || dst->nodes[result].kind == AKG_PW_SCALAR))
        rc = akg_fail(err, errlen, AKG_EINVAL, "sketch: the stored value is a constant");
    if (!rc) {
        dst->result = result;
        dst->n_nodes = result + 1;
        for (int n = 0; n < dst->n_nodes; n++)
            if (dst->nodes[n].kind == AKG_PW_INPUT && dst->n_inputs < AKG_DESIGN_MAX_INPUTS)
                dst->inputs[dst->n_inputs++] = dst->nodes[n].input;
        dst->block = akg_sketch_const_by_name(sk, "BLOCK", dst->block > 0 ? dst->block : 16384);
        if (dst->block < 1)
            dst->block = 16384;
        dst->parallel = akg_sketch_has_hint(sk, "parallel");
        dst->vectorize = akg_sketch_has_hint(sk, "vectorize");
    }
    free(c);
    return rc < 0 ? rc : (rc ? AKG_EINVAL : AKG_OK);
}

/* The ops of a softmax sketch decide softmax or log_softmax. */
static int stmt_calls(const akg_sketch_stmt *st, const char *op)
{
    if (akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_ASSIGN) {
        char *t = akg_sketch_expr_to_string(akg_sketch_assign_value(st));
        int found = 0;
        if (t) {
            char pat[64];
            snprintf(pat, sizeof pat, "%s(", op);
            found = strstr(t, pat) != NULL;
            free(t);
        }
        if (found)
            return 1;
    }
    for (int which = 0; which < 2; which++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, which); i++)
            if (stmt_calls(akg_sketch_stmt_body_at(st, which, i), op))
                return 1;
    return 0;
}

int akg_cpp_lower_softmax(const akg_sketch *sk, akg_design *dst, char *err, size_t errlen)
{
    int has_max = 0, has_exp = 0, has_sum = 0, has_log = 0;
    for (size_t i = 0; i < akg_sketch_body_count(sk); i++) {
        const akg_sketch_stmt *st = akg_sketch_body_at(sk, i);
        has_max |= stmt_calls(st, "reduce_max");
        has_exp |= stmt_calls(st, "exp");
        has_sum |= stmt_calls(st, "reduce_sum");
        has_log |= stmt_calls(st, "log");
    }
    if (!has_max || !has_exp || !has_sum)
        return akg_fail(err, errlen, AKG_EINVAL,
                        "sketch: a softmax needs reduce_max, exp and reduce_sum over the dim");
    dst->log_softmax = has_log;
    dst->rows = akg_sketch_const_by_name(sk, "ROWS", dst->rows > 0 ? dst->rows : 4);
    if (dst->rows < 1 || dst->rows > 16)
        return akg_fail(err, errlen, AKG_EINVAL, "sketch: ROWS must be between 1 and 16");
    dst->parallel = akg_sketch_has_hint(sk, "parallel");
    dst->vectorize = akg_sketch_has_hint(sk, "vectorize");
    return AKG_OK;
}
