/*
 * lw_control.c: loops and ifs.
 *
 * A `parallel` loop outside any other is one OpenMP region (per-thread buffers set up once at
 * its start, a `collapse(2)` with a directly nested parallel loop whose bounds do not read the
 * outer variable); `unroll` and `vectorize` become GCC pragmas. Before a construct, the names
 * it carries get their storage (lw_scope.c). Inside `if X >= 0 and X < D:` the lowering knows
 * X's range, and inside `if SYM == K:` the symbol is the constant K (strides fold). A condition
 * known when the kernel is lowered lowers only the branch taken.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw_stmt.h"

/* Opens the loop of st. A loop variable read after its loop (see stabilise) is set at the
 * top of the body; with `set` the statement that sets it is returned instead of emitted
 * (the outer loop of a collapse(2) sets it inside the inner one). */
static void loop_header(lw_ctx *L, const akg_sketch_stmt *st, const char **cvar, const char **set)
{
    bool k0 = true, k1, k2 = true;
    int64_t v0 = 0, v1, v2 = 1;
    const akg_sketch_expr *s0 = akg_sketch_for_start(st), *s2 = akg_sketch_for_step(st);
    const char *a = s0 ? lw_index(L, s0, &k0, &v0) : "0";
    const char *b = lw_index(L, akg_sketch_for_stop(st), &k1, &v1);
    const char *c = s2 ? lw_index(L, s2, &k2, &v2) : "1";
    if (k2 && v2 <= 0) {
        lw_fail(L, "range() step must be positive");
        return;
    }
    const char *var = lw_strf(L, "I_%s", akg_sketch_for_var(st));
    *cvar = var;
    if (!strcmp(c, "1"))
        lw_line(L, "for (int64_t %s = %s; %s < %s; ++%s) {", var, a, var, b, var);
    else
        lw_line(L, "for (int64_t %s = %s; %s < %s; %s += %s) {", var, a, var, b, var, c);
    L->indent++;
    lw_val *after = lw_lookup(L, akg_sketch_for_var(st));
    if (after && after->stable && after->kind == LV_SCALAR) {
        if (set)
            *set = lw_strf(L, "%s = %s;", after->c, var);
        else
            lw_line(L, "%s = %s;", after->c, var);
    }
    lw_val *lv = lw_scalar(L, AKG_DTYPE_I64, var);
    if (lv) {
        lv->loopvar = true;
        lv->nonneg = !s0 || lw_index_nonneg(L, s0);
        lv->upper = lv->nonneg ? b : NULL;
        lw_bind(L, akg_sketch_for_var(st), lv);
    }
}

static void lower_body(lw_ctx *L, const akg_sketch_stmt *st, int which, bool loop)
{
    lw_block b = {st, which, akg_sketch_stmt_body_count(st, which)};
    lw_lower_block(L, &b, loop);
}

/* The OpenMP schedule of a parallel loop's hint: "block" (the default) deals each worker one
 * contiguous share, "cyclic" deals iterations round robin, "dynamic" gives the next iteration
 * to the next free worker. */
static const char *omp_schedule(const akg_sketch_stmt *st)
{
    for (size_t h = 0; h < akg_sketch_stmt_hint_count(st); h++) {
        if (strcmp(akg_sketch_stmt_hint_arg(st, h, 0), "parallel") != 0)
            continue;
        for (size_t a = 1; a < akg_sketch_stmt_hint_arg_count(st, h); a++) {
            const char *v = akg_sketch_stmt_hint_arg(st, h, a);
            if (strcmp(v, "cyclic") == 0)
                return "static, 1";
            if (strcmp(v, "dynamic") == 0)
                return "dynamic, 1";
        }
        break;
    }
    return "static";
}

/* outer_set: with collapsed_inner, the statement that sets the outer loop's variable (see
 * loop_header), or NULL. */
void lw_do_for(lw_ctx *L, const akg_sketch_stmt *st, bool collapsed_inner, const char *outer_set)
{
    bool par = akg_sketch_stmt_hint_value(st, "parallel") != NULL && !L->safe;
    lw_nameset lastpriv = {0};
    lw_stabilise(L, st, true, &lastpriv);
    if (!lw_ok(L))
        return;
    const char *unroll = akg_sketch_stmt_hint_value(st, "unroll");
    const char *vec = akg_sketch_stmt_hint_value(st, "vectorize");
    size_t env_n;
    lw_name *snap = lw_env_snapshot(L, &env_n);
    size_t heap_mark = L->n_heap;
    bool save_vec = L->vectorize, save_prec = L->precise;
    int64_t save_len = L->simdlen;
    lw_set_hints(L, st);
    const char *cvar = NULL;
    if (par && L->par_depth == 0 && !collapsed_inner) {
        /* one OpenMP region: per-thread buffers allocated once at its start */
        const akg_sketch_stmt *inner = NULL;
        if (akg_sketch_stmt_body_count(st, 0) == 1) {
            const akg_sketch_stmt *in = akg_sketch_stmt_body_at(st, 0, 0);
            if (akg_sketch_stmt_get_kind(in) == AKG_SKETCH_STMT_FOR &&
                akg_sketch_stmt_hint_value(in, "parallel") &&
                lw_bounds_free_of(L, in, akg_sketch_for_var(st)))
                inner = in;
        }
        akg_buf body, hoist, tail;
        akg_buf_init(&body, 32u << 20);
        akg_buf_init(&hoist, 1u << 20);
        akg_buf_init(&tail, 1u << 20);
        akg_buf *save_out = L->out, *save_h = L->hoist, *save_t = L->hoist_tail;
        int ind = L->indent;
        L->out = &body;
        L->hoist = &hoist;
        L->hoist_tail = &tail;
        L->hoist_indent = ind + 1;
        L->indent = ind + 1;
        L->par_depth++;
        int save_region = L->region;
        L->region = ++L->next_id;
        const char *set = NULL;
        loop_header(L, st, &cvar, inner ? &set : NULL);
        if (inner) {
            lw_frame fr = {{st, 0, 1}, 0, true, {0}, lw_cur_frame(L)};
            L->uses = &fr;
            lw_do_for(L, inner, true, set);
            L->uses = fr.up;
        } else {
            lw_line(L, "if (!akg_thread_ok) continue;");
            lower_body(L, st, 0, true);
        }
        lw_free_scope(L, heap_mark);
        L->indent--;
        lw_line(L, "}");
        L->par_depth--;
        L->region = save_region;
        L->out = save_out;
        L->hoist = save_h;
        L->hoist_tail = save_t;
        L->indent = ind;
        lw_line(L, "#pragma omp parallel");
        lw_line(L, "{");
        L->indent++;
        lw_line(L, "bool akg_thread_ok = true;");
        if (hoist.len)
            akg_buf_append(L->out, hoist.data, hoist.len);
        lw_line(L, "if (!akg_thread_ok) akg_status = 2;");
        const char *last = "";
        for (size_t i = 0; i < lastpriv.n; i++)
            last = lw_strf(L, "%s%s%s", last, i ? ", " : "", lastpriv.v[i]);
        if (lastpriv.n)
            last = lw_strf(L, " firstprivate(%s) lastprivate(%s)", last, last);
        lw_line(L, "#pragma omp for schedule(%s)%s%s", omp_schedule(st), inner ? " collapse(2)" : "",
                last);
        if (body.len)
            akg_buf_append(L->out, body.data, body.len);
        if (tail.len)
            akg_buf_append(L->out, tail.data, tail.len);
        L->indent--;
        lw_line(L, "}");
        lw_line(L, "if (akg_status) return akg_status;");
        if (akg_buf_status(&body) || akg_buf_status(&hoist) || akg_buf_status(&tail))
            lw_fail(L, "the generated kernel exceeds its size limit");
        akg_buf_free(&body);
        akg_buf_free(&hoist);
        akg_buf_free(&tail);
    } else {
        /* nothing may stand between the two loops of a collapse(2): a collapsed inner loop
         * drops its unroll and ivdep pragmas (neither changes what it computes) */
        if (unroll && !L->safe && !collapsed_inner) {
            if (*unroll >= '0' && *unroll <= '9')
                lw_line(L, "#pragma GCC unroll %s", unroll);
            else
                lw_line(L, "#pragma GCC unroll 4");
        }
        if (vec && !L->safe && !collapsed_inner)
            lw_line(L, "#pragma GCC ivdep");
        loop_header(L, st, &cvar, NULL);
        if (outer_set)
            lw_line(L, "%s", outer_set);
        if (collapsed_inner)
            lw_line(L, "if (!akg_thread_ok) continue;");
        lower_body(L, st, 0, true);
        lw_free_scope(L, heap_mark);
        L->indent--;
        lw_line(L, "}");
    }
    L->vectorize = save_vec;
    L->precise = save_prec;
    L->simdlen = save_len;
    lw_env_restore(L, snap, env_n);
}

/* Inside `if X >= 0 and X < D:` the scalar X is known to index a dimension of extent D. */
static void refine_range(lw_ctx *L, const akg_sketch_expr *cond)
{
    if (akg_sketch_expr_get_kind(cond) != AKG_SKETCH_EXPR_BINARY)
        return;
    const char *op = akg_sketch_expr_text(cond);
    if (!strcmp(op, "and")) {
        refine_range(L, akg_sketch_expr_lhs(cond));
        refine_range(L, akg_sketch_expr_rhs(cond));
        return;
    }
    const akg_sketch_expr *a = akg_sketch_expr_lhs(cond), *b = akg_sketch_expr_rhs(cond);
    bool lower = false, upper = false;
    const akg_sketch_expr *name = NULL, *bound = NULL;
    if (akg_sketch_expr_get_kind(a) == AKG_SKETCH_EXPR_NAME) {
        name = a;
        bound = b;
        lower = !strcmp(op, ">=") && akg_sketch_expr_get_kind(b) == AKG_SKETCH_EXPR_INT &&
                akg_sketch_expr_int(b) >= 0;
        upper = !strcmp(op, "<");
    } else if (akg_sketch_expr_get_kind(b) == AKG_SKETCH_EXPR_NAME) {
        name = b;
        bound = a;
        lower = !strcmp(op, "<=") && akg_sketch_expr_get_kind(a) == AKG_SKETCH_EXPR_INT &&
                akg_sketch_expr_int(a) >= 0;
        upper = !strcmp(op, ">");
    }
    if (!name || (!lower && !upper))
        return;
    lw_val *cur = lw_lookup(L, akg_sketch_expr_text(name));
    if (!cur || cur->kind != LV_SCALAR || lw_is_float(cur->dt))
        return;
    lw_val *v = lw_scalar(L, cur->dt, cur->c);
    if (!v)
        return;
    *v = *cur;
    v->id = ++L->next_id;
    if (lower)
        v->nonneg = true;
    if (upper) {
        bool k;
        int64_t kv;
        v->upper = lw_index(L, bound, &k, &kv);
    }
    lw_bind(L, akg_sketch_expr_text(name), v);
}

/* Inside `if SYM == K:` the symbol is the constant K: tensors whose shapes use it are
 * re-declared with it, so their strides fold and bounds become provable. */
static void refine(lw_ctx *L, const akg_sketch_expr *cond)
{
    refine_range(L, cond);
    if (akg_sketch_expr_get_kind(cond) != AKG_SKETCH_EXPR_BINARY ||
        strcmp(akg_sketch_expr_text(cond), "=="))
        return;
    const akg_sketch_expr *a = akg_sketch_expr_lhs(cond), *b = akg_sketch_expr_rhs(cond);
    if (akg_sketch_expr_get_kind(a) != AKG_SKETCH_EXPR_NAME) {
        const akg_sketch_expr *t = a;
        a = b;
        b = t;
    }
    if (akg_sketch_expr_get_kind(a) != AKG_SKETCH_EXPR_NAME ||
        akg_sketch_expr_get_kind(b) != AKG_SKETCH_EXPR_INT)
        return;
    const char *sym = akg_sketch_expr_text(a);
    bool is_symbol = false;
    for (size_t i = 0; i < akg_sketch_symbol_count(L->sk); i++)
        is_symbol |= !strcmp(akg_sketch_symbol_name(L->sk, i), sym);
    lw_val *cur = lw_lookup(L, sym);
    if (!is_symbol || !cur || cur->kind != LV_SCALAR)
        return;
    int64_t k = akg_sketch_expr_int(b);
    if (k < 0)
        return;
    lw_val *v = lw_scalar(L, AKG_DTYPE_I64, lw_strf(L, "%lld", (long long)k));
    if (!v)
        return;
    v->nonneg = true;
    lw_bind(L, sym, v);
    for (size_t i = 0; i < akg_sketch_tensor_count(L->sk); i++) {
        lw_val *t = lw_lookup(L, akg_sketch_tensor_name(L->sk, i));
        if (!t || t->kind != LV_TENSOR)
            continue;
        lw_val *n = lw_new(L, LV_TENSOR);
        if (!n)
            return;
        int id = n->id;
        *n = *t;
        n->id = id;
        for (int d = 0; d < n->rank; d++)
            n->dim[d] = lw_index_dim(L, akg_sketch_tensor_dim(L->sk, i, (size_t)d));
        lw_set_strides(L, n);
        lw_bind(L, akg_sketch_tensor_name(L->sk, i), n);
    }
}

void lw_do_if(lw_ctx *L, const akg_sketch_stmt *st)
{
    lw_stabilise(L, st, false, NULL);
    lw_val *c = lw_value_of(L, akg_sketch_if_cond(st));
    if (!c)
        return;
    if (c->kind != LV_SCALAR) {
        lw_fail(L, "if conditions are scalars; for an elementwise choice use where()");
        return;
    }
    size_t env_n;
    lw_name *snap = lw_env_snapshot(L, &env_n);
    size_t heap_mark = L->n_heap;
    /* a condition known when the kernel is lowered (constexprs, symbols bound to constants):
     * only the branch taken is lowered */
    char *end = NULL;
    long long known = strtoll(c->c, &end, 10);
    bool is_known = end && end != c->c && *end == '\0';
    lw_line(L, "if (%s) {", c->c);
    L->indent++;
    if (!is_known || known) {
        refine(L, akg_sketch_if_cond(st));
        lower_body(L, st, 0, false);
        lw_free_scope(L, heap_mark);
    }
    L->indent--;
    lw_env_restore(L, snap, env_n);
    if (akg_sketch_stmt_body_count(st, 1) && (!is_known || !known)) {
        lw_line(L, "} else {");
        L->indent++;
        lower_body(L, st, 1, false);
        lw_free_scope(L, heap_mark);
        L->indent--;
        lw_env_restore(L, snap, env_n);
    }
    lw_line(L, "}");
}
