/*
 * sketch_ir_identical(): whether two sketch IRs are the same field by field,
 * positions, comments, hints, blank-line flags and derived fields included.
 * akg_sketch_equal() answers the language question (same program); this one
 * answers the implementation question the fast-path parser must meet (same
 * parse as the tree-sitter path). Derived pointers (alloc_shape, a FOR's
 * start/stop/step, alloc_hints) must also point at the corresponding node of
 * their own IR, not only at an equal one.
 */
#include "sketch_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    char *why;
    size_t cap;
    bool differ;
} ident_ctx;

static bool differ(ident_ctx *c, const char *what)
{
    if (!c->differ && c->why && c->cap)
        snprintf(c->why, c->cap, "%s", what);
    c->differ = true;
    return false;
}

static bool span_same(akg_sketch_span a, akg_sketch_span b)
{
    return a.line == b.line && a.col == b.col && a.end_line == b.end_line && a.end_col == b.end_col;
}

static bool str_same(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

static bool comments_same(const sketch_comments *a, const sketch_comments *b)
{
    if (a->n != b->n)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (!str_same(a->lines[i], b->lines[i]))
            return false;
    return true;
}

static bool expr_same(ident_ctx *c, const akg_sketch_expr *a, const akg_sketch_expr *b)
{
    if (!a || !b)
        return a == b ? true : differ(c, "expression present in one IR only");
    if (a->kind != b->kind)
        return differ(c, "expression kind");
    if (!span_same(a->span, b->span))
        return differ(c, "expression span");
    if (!str_same(a->text, b->text))
        return differ(c, "expression text");
    if (a->ival != b->ival)
        return differ(c, "integer value");
    if (memcmp(&a->fval, &b->fval, sizeof a->fval) != 0)
        return differ(c, "float value");
    if (!expr_same(c, a->a, b->a) || !expr_same(c, a->b, b->b) || !expr_same(c, a->c, b->c))
        return false;
    if (a->n_items != b->n_items)
        return differ(c, "item count");
    for (size_t i = 0; i < a->n_items; i++)
        if (!expr_same(c, a->items[i], b->items[i]))
            return false;
    if (a->n_kw != b->n_kw)
        return differ(c, "keyword argument count");
    for (size_t i = 0; i < a->n_kw; i++) {
        if (!str_same(a->kw_names[i], b->kw_names[i]))
            return differ(c, "keyword argument name");
        if (!span_same(a->kw_spans[i], b->kw_spans[i]))
            return differ(c, "keyword argument span");
        if (!expr_same(c, a->kw_values[i], b->kw_values[i]))
            return false;
    }
    return true;
}

/* The path from root to target through a/b/c (0..2), items (3+i) and keyword
 * values (3+n_items+i), as an index sequence; -1 when target is NULL, -2 when
 * it is not inside root. Compared between the IRs so that a derived pointer
 * refers to the same node in both. */
static int expr_path(const akg_sketch_expr *root, const akg_sketch_expr *target, size_t *path,
                     int depth, int cap)
{
    if (!target)
        return -1;
    if (!root)
        return -2;
    if (root == target)
        return depth;
    if (depth >= cap)
        return -2;
    const akg_sketch_expr *kids[3] = {root->a, root->b, root->c};
    for (size_t i = 0; i < 3; i++) {
        path[depth] = i;
        int r = expr_path(kids[i], target, path, depth + 1, cap);
        if (r >= 0)
            return r;
    }
    for (size_t i = 0; i < root->n_items; i++) {
        path[depth] = 3 + i;
        int r = expr_path(root->items[i], target, path, depth + 1, cap);
        if (r >= 0)
            return r;
    }
    for (size_t i = 0; i < root->n_kw; i++) {
        path[depth] = 3 + root->n_items + i;
        int r = expr_path(root->kw_values[i], target, path, depth + 1, cap);
        if (r >= 0)
            return r;
    }
    return -2;
}

static bool derived_same(ident_ctx *c, const akg_sketch_expr *root_a, const akg_sketch_expr *da,
                         const akg_sketch_expr *root_b, const akg_sketch_expr *db, const char *what)
{
    size_t pa[256], pb[256];
    int la = expr_path(root_a, da, pa, 0, 256), lb = expr_path(root_b, db, pb, 0, 256);
    if (la != lb || (la > 0 && memcmp(pa, pb, (size_t)la * sizeof pa[0]) != 0))
        return differ(c, what);
    return expr_same(c, da, db);
}

static bool hint_same(const sketch_hint *a, const sketch_hint *b)
{
    if (!str_same(a->name, b->name) || !span_same(a->span, b->span) ||
        !span_same(a->name_span, b->name_span) || a->n_args != b->n_args)
        return false;
    for (size_t i = 0; i < a->n_args; i++)
        if (!str_same(a->args[i], b->args[i]) || !span_same(a->arg_spans[i], b->arg_spans[i]) ||
            (a->arg_int && a->arg_int[i]) != (b->arg_int && b->arg_int[i]))
            return false;
    return true;
}

static bool block_same(ident_ctx *c, const sketch_block *a, const sketch_block *b);

static bool stmt_same(ident_ctx *c, const akg_sketch_stmt *a, const akg_sketch_stmt *b)
{
    if (a->kind != b->kind)
        return differ(c, "statement kind");
    if (!span_same(a->span, b->span))
        return differ(c, "statement span");
    if (a->n_hints != b->n_hints)
        return differ(c, "hint count");
    for (size_t i = 0; i < a->n_hints; i++)
        if (!hint_same(&a->hints[i], &b->hints[i]))
            return differ(c, "hint");
    if (!comments_same(&a->leading, &b->leading))
        return differ(c, "leading comments");
    if (!str_same(a->trailing, b->trailing))
        return differ(c, "trailing comment");
    if (a->blank_before != b->blank_before)
        return differ(c, "blank_before");
    if (!str_same(a->var, b->var) || !span_same(a->var_span, b->var_span))
        return differ(c, "loop variable");
    if (!expr_same(c, a->iter, b->iter))
        return false;
    if (!derived_same(c, a->iter, a->start, b->iter, b->start, "range start") ||
        !derived_same(c, a->iter, a->stop, b->iter, b->stop, "range stop") ||
        !derived_same(c, a->iter, a->step, b->iter, b->step, "range step"))
        return false;
    if (!expr_same(c, a->cond, b->cond))
        return false;
    if (a->else_is_elif != b->else_is_elif)
        return differ(c, "else_is_elif");
    if (!block_same(c, &a->body[0], &b->body[0]) || !block_same(c, &a->body[1], &b->body[1]))
        return false;
    if (!comments_same(&a->tail, &b->tail))
        return differ(c, "block tail comments");
    if (!comments_same(&a->else_leading, &b->else_leading))
        return differ(c, "else_leading comments");
    if (!comments_same(&a->else_tail, &b->else_tail))
        return differ(c, "else_tail comments");
    if (a->n_targets != b->n_targets)
        return differ(c, "target count");
    for (size_t i = 0; i < a->n_targets; i++)
        if (!str_same(a->targets[i], b->targets[i]) ||
            !span_same(a->target_spans[i], b->target_spans[i]))
            return differ(c, "assignment target");
    if (!str_same(a->op, b->op))
        return differ(c, "assignment operator");
    if (!expr_same(c, a->value, b->value))
        return false;
    if (!derived_same(c, a->value, a->alloc_shape, b->value, b->alloc_shape, "alloc shape"))
        return false;
    if (a->alloc_dtype != b->alloc_dtype)
        return differ(c, "alloc dtype");
    if (a->n_alloc_hints != b->n_alloc_hints)
        return differ(c, "alloc hint count");
    for (size_t i = 0; i < a->n_alloc_hints; i++)
        if (!str_same(a->alloc_hints[i], b->alloc_hints[i]) ||
            !span_same(a->alloc_hint_spans[i], b->alloc_hint_spans[i]))
            return differ(c, "alloc hint");
    if (!expr_same(c, a->src, b->src) || !expr_same(c, a->dst, b->dst))
        return false;
    if (a->n_opts != b->n_opts)
        return differ(c, "option count");
    for (size_t i = 0; i < a->n_opts; i++) {
        if (!str_same(a->opt_names[i], b->opt_names[i]) ||
            !span_same(a->opt_spans[i], b->opt_spans[i]))
            return differ(c, "option name");
        if (!expr_same(c, a->opt_values[i], b->opt_values[i]))
            return false;
    }
    return true;
}

static bool block_same(ident_ctx *c, const sketch_block *a, const sketch_block *b)
{
    if (a->n != b->n)
        return differ(c, "statement count");
    for (size_t i = 0; i < a->n; i++)
        if (!stmt_same(c, a->items[i], b->items[i]))
            return false;
    return true;
}

bool sketch_ir_identical(const akg_sketch *a, const akg_sketch *b, char *why, size_t why_cap)
{
    ident_ctx c = {why, why_cap, false};
    if (why && why_cap)
        why[0] = '\0';
    if (!str_same(a->name, b->name) || !span_same(a->span, b->span) ||
        !span_same(a->name_span, b->name_span))
        return differ(&c, "sketch name or span");
    if (!comments_same(&a->leading, &b->leading))
        return differ(&c, "comments above the sketch");
    if (!comments_same(&a->header, &b->header))
        return differ(&c, "header comments");
    if (a->n_symbols != b->n_symbols)
        return differ(&c, "symbol count");
    for (size_t i = 0; i < a->n_symbols; i++)
        if (!str_same(a->symbols[i].name, b->symbols[i].name) ||
            !span_same(a->symbols[i].span, b->symbols[i].span))
            return differ(&c, "symbol");
    if (a->n_tensors != b->n_tensors)
        return differ(&c, "tensor count");
    for (size_t i = 0; i < a->n_tensors; i++) {
        const sketch_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (!str_same(x->name, y->name) || !span_same(x->span, y->span) ||
            !str_same(x->dtype_text, y->dtype_text) || !span_same(x->dtype_span, y->dtype_span) ||
            x->dtype != y->dtype || x->has_shape != y->has_shape || x->rank != y->rank ||
            !span_same(x->shape_span, y->shape_span) || x->stored != y->stored ||
            x->loaded != y->loaded)
            return differ(&c, "tensor declaration");
        for (size_t d = 0; d < x->rank; d++)
            if (!expr_same(&c, x->dims[d], y->dims[d]))
                return false;
    }
    if (a->n_consts != b->n_consts)
        return differ(&c, "constexpr count");
    for (size_t i = 0; i < a->n_consts; i++) {
        const sketch_const *x = &a->consts[i], *y = &b->consts[i];
        if (!str_same(x->name, y->name) || !span_same(x->span, y->span) ||
            x->tunable != y->tunable || x->choice != y->choice)
            return differ(&c, "constexpr declaration");
        if (!expr_same(&c, x->value, y->value))
            return false;
    }
    if (a->n_params != b->n_params)
        return differ(&c, "param count");
    for (size_t i = 0; i < a->n_params; i++) {
        const sketch_param *x = &a->params[i], *y = &b->params[i];
        if (!str_same(x->name, y->name) || !span_same(x->span, y->span) ||
            !str_same(x->dtype_text, y->dtype_text) ||
            (x->dtype_text && !span_same(x->dtype_span, y->dtype_span)) || x->dtype != y->dtype)
            return differ(&c, "param declaration");
        if (!expr_same(&c, x->def, y->def))
            return false;
    }
    if (a->n_binds != b->n_binds || a->n_bind_sections != b->n_bind_sections)
        return differ(&c, "bind count");
    for (size_t i = 0; i < a->n_binds; i++) {
        const sketch_bind *x = &a->binds[i], *y = &b->binds[i];
        if (!str_same(x->name, y->name) || !span_same(x->span, y->span) ||
            !span_same(x->item_span, y->item_span) || x->section != y->section)
            return differ(&c, "bind item");
        if (!expr_same(&c, x->value, y->value))
            return false;
    }
    if (!block_same(&c, &a->body, &b->body))
        return false;
    if (!comments_same(&a->tail, &b->tail))
        return differ(&c, "comments at the end of the body");
    if (a->n_values != b->n_values)
        return differ(&c, "checker values");
    return !c.differ;
}
