/*
 * Canonical printer and structural equality for the sketch IR.
 *
 * The canonical form: two-space indentation, header sections in the order
 * symbols, tensors, constexpr, params (one line each), then one line per
 * bind: section as written (the grouping is the author's), a blank line
 * before the body, one statement per line, minimal parentheses, integers
 * in decimal, strings in double quotes. Comments are kept where they were
 * attached (above a statement, after it on its line, at a block's end, or
 * before an elif/else), and one blank line is kept where statements were
 * separated by blank lines.
 */
#include "sketch_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SKETCH_PRINT_CAP (4u * AKG_SKETCH_MAX_TEXT)

/* ---- bounded buffer ------------------------------------------------------------- */

void sketch_buf_putn(sketch_buf *b, const char *s, size_t n)
{
    if (b->failed)
        return;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        if (cap > SKETCH_PRINT_CAP) {
            b->failed = true;
            return;
        }
        char *d = realloc(b->data, cap);
        if (!d) {
            b->failed = true;
            return;
        }
        b->data = d;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sketch_buf_puts(sketch_buf *b, const char *s)
{
    sketch_buf_putn(b, s, strlen(s));
}

void sketch_buf_printf(sketch_buf *b, const char *fmt, ...)
{
    char tmp[256];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof tmp) {
        sketch_buf_putn(b, tmp, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sketch_buf_putn(b, big, (size_t)n);
    free(big);
}

/* ---- expressions ------------------------------------------------------------------ */

enum {
    P_OR = 1,
    P_AND,
    P_NOT,
    P_CMP,
    P_BOR,
    P_BXOR,
    P_BAND,
    P_SHIFT,
    P_ADD,
    P_MUL,
    P_UNARY,
    P_POW,
    P_POSTFIX,
    P_ATOM
};

static int binary_prec(const char *op)
{
    static const struct {
        const char *op;
        int prec;
    } t[] = {{"or", P_OR},  {"and", P_AND},  {"<", P_CMP},    {"<=", P_CMP}, {">", P_CMP},
             {">=", P_CMP}, {"==", P_CMP},   {"!=", P_CMP},   {"|", P_BOR},  {"^", P_BXOR},
             {"&", P_BAND}, {"<<", P_SHIFT}, {">>", P_SHIFT}, {"+", P_ADD},  {"-", P_ADD},
             {"*", P_MUL},  {"/", P_MUL},    {"//", P_MUL},   {"%", P_MUL},  {"**", P_POW}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcmp(t[i].op, op) == 0)
            return t[i].prec;
    return P_ATOM;
}

static int expr_prec(const akg_sketch_expr *e)
{
    switch (e->kind) {
    case AKG_SKETCH_EXPR_BINARY:
        return binary_prec(e->text);
    case AKG_SKETCH_EXPR_UNARY:
        return strcmp(e->text, "not") == 0 ? P_NOT : P_UNARY;
    case AKG_SKETCH_EXPR_TUPLE:
        return 0;
    default:
        return P_ATOM;
    }
}

static void put_expr_prec(sketch_buf *b, const akg_sketch_expr *e, int min_prec)
{
    bool paren = e && expr_prec(e) < min_prec;
    if (paren)
        sketch_buf_puts(b, "(");
    sketch_buf_expr(b, e);
    if (paren)
        sketch_buf_puts(b, ")");
}

static void put_string(sketch_buf *b, const char *s)
{
    sketch_buf_puts(b, "\"");
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            char esc[2] = {'\\', *s};
            sketch_buf_putn(b, esc, 2);
        } else if (*s == '\n') {
            sketch_buf_puts(b, "\\n");
        } else if (*s == '\t') {
            sketch_buf_puts(b, "\\t");
        } else {
            sketch_buf_putn(b, s, 1);
        }
    }
    sketch_buf_puts(b, "\"");
}

void sketch_buf_expr(sketch_buf *b, const akg_sketch_expr *e)
{
    if (!e)
        return;
    switch (e->kind) {
    case AKG_SKETCH_EXPR_INT:
        sketch_buf_printf(b, "%lld", (long long)e->ival);
        break;
    case AKG_SKETCH_EXPR_FLOAT:
    case AKG_SKETCH_EXPR_NAME:
    case AKG_SKETCH_EXPR_BOOL:
    case AKG_SKETCH_EXPR_NONE:
        sketch_buf_puts(b, e->text);
        break;
    case AKG_SKETCH_EXPR_STRING:
        put_string(b, e->text);
        break;
    case AKG_SKETCH_EXPR_UNARY: {
        int p = expr_prec(e);
        sketch_buf_puts(b, e->text);
        if (strcmp(e->text, "not") == 0)
            sketch_buf_puts(b, " ");
        put_expr_prec(b, e->a, p);
        break;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        int p = binary_prec(e->text);
        bool right_assoc = p == P_POW;
        put_expr_prec(b, e->a, right_assoc ? p + 1 : p);
        sketch_buf_printf(b, " %s ", e->text);
        put_expr_prec(b, e->b, right_assoc ? p : p + 1);
        break;
    }
    case AKG_SKETCH_EXPR_CALL:
        sketch_buf_puts(b, e->text);
        sketch_buf_puts(b, "(");
        for (size_t i = 0; i < e->n_items; i++) {
            if (i)
                sketch_buf_puts(b, ", ");
            sketch_buf_expr(b, e->items[i]);
        }
        for (size_t i = 0; i < e->n_kw; i++) {
            if (i || e->n_items)
                sketch_buf_puts(b, ", ");
            sketch_buf_printf(b, "%s=", e->kw_names[i]);
            sketch_buf_expr(b, e->kw_values[i]);
        }
        sketch_buf_puts(b, ")");
        break;
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        put_expr_prec(b, e->a, P_POSTFIX);
        sketch_buf_puts(b, "[");
        for (size_t i = 0; i < e->n_items; i++) {
            if (i)
                sketch_buf_puts(b, ", ");
            sketch_buf_expr(b, e->items[i]);
        }
        sketch_buf_puts(b, "]");
        break;
    case AKG_SKETCH_EXPR_SLICE:
        sketch_buf_expr(b, e->a);
        sketch_buf_puts(b, ":");
        sketch_buf_expr(b, e->b);
        if (e->c) {
            sketch_buf_puts(b, ":");
            sketch_buf_expr(b, e->c);
        }
        break;
    case AKG_SKETCH_EXPR_LIST:
    case AKG_SKETCH_EXPR_TUPLE:
        if (e->kind == AKG_SKETCH_EXPR_LIST)
            sketch_buf_puts(b, "[");
        for (size_t i = 0; i < e->n_items; i++) {
            if (i)
                sketch_buf_puts(b, ", ");
            sketch_buf_expr(b, e->items[i]);
        }
        if (e->kind == AKG_SKETCH_EXPR_LIST)
            sketch_buf_puts(b, "]");
        break;
    }
}

char *akg_sketch_expr_to_string(const akg_sketch_expr *e)
{
    sketch_buf b = {0};
    sketch_buf_puts(&b, "");
    sketch_buf_expr(&b, e);
    if (b.failed) {
        free(b.data);
        return NULL;
    }
    return b.data;
}

/* ---- statements --------------------------------------------------------------------- */

static void indent(sketch_buf *b, int level)
{
    for (int i = 0; i < level; i++)
        sketch_buf_puts(b, "  ");
}

static void put_comments(sketch_buf *b, const sketch_comments *c, int level)
{
    for (size_t i = 0; i < c->n; i++) {
        indent(b, level);
        sketch_buf_puts(b, c->lines[i]);
        sketch_buf_puts(b, "\n");
    }
}

static void put_block(sketch_buf *b, const sketch_block *blk, int level);

/* first: the statement opens its block, where no blank line is printed (the
 * body of the sketch always starts after one). */
static void put_stmt(sketch_buf *b, const akg_sketch_stmt *st, int level, bool as_elif, bool first)
{
    if (!as_elif) {
        if (st->blank_before && !first)
            sketch_buf_puts(b, "\n"); /* one blank line at most, as written */
        put_comments(b, &st->leading, level);
        for (size_t h = 0; h < st->n_hints; h++) {
            indent(b, level);
            sketch_buf_printf(b, "@%s(", st->hints[h].name);
            for (size_t a = 0; a < st->hints[h].n_args; a++) {
                if (a)
                    sketch_buf_puts(b, ", ");
                if (st->hints[h].arg_int && st->hints[h].arg_int[a])
                    sketch_buf_puts(
                        b, st->hints[h].args[a]); /* a count or width written as an integer */
                else
                    put_string(b, st->hints[h].args[a]);
            }
            sketch_buf_puts(b, ")\n");
        }
        indent(b, level);
    }
    switch (st->kind) {
    case AKG_SKETCH_STMT_FOR:
        sketch_buf_printf(b, "for %s in ", st->var);
        sketch_buf_expr(b, st->iter);
        sketch_buf_puts(b, ":\n");
        put_block(b, &st->body[0], level + 1);
        put_comments(b, &st->tail, level + 1);
        return;
    case AKG_SKETCH_STMT_IF:
        sketch_buf_puts(b, as_elif ? "elif " : "if ");
        sketch_buf_expr(b, st->cond);
        sketch_buf_puts(b, ":\n");
        put_block(b, &st->body[0], level + 1);
        put_comments(b, &st->tail, level + 1);
        if (st->body[1].n)
            put_comments(b, &st->else_leading, level);
        if (st->else_is_elif && st->body[1].n == 1 &&
            st->body[1].items[0]->kind == AKG_SKETCH_STMT_IF &&
            st->body[1].items[0]->n_hints == 0 && st->body[1].items[0]->leading.n == 0) {
            indent(b, level);
            put_stmt(b, st->body[1].items[0], level, true, false);
        } else if (st->body[1].n) {
            indent(b, level);
            sketch_buf_puts(b, "else:\n");
            put_block(b, &st->body[1], level + 1);
            put_comments(b, &st->else_tail, level + 1);
        }
        return;
    case AKG_SKETCH_STMT_ALLOC:
    case AKG_SKETCH_STMT_ASSIGN:
        for (size_t i = 0; i < st->n_targets; i++) {
            if (i)
                sketch_buf_puts(b, ", ");
            sketch_buf_puts(b, st->targets[i]);
        }
        sketch_buf_printf(b, " %s ", st->op ? st->op : "=");
        sketch_buf_expr(b, st->value);
        break;
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE:
        sketch_buf_puts(b, st->kind == AKG_SKETCH_STMT_LOAD ? "load(" : "store(");
        sketch_buf_expr(b, st->src);
        sketch_buf_puts(b, " -> ");
        sketch_buf_expr(b, st->dst);
        for (size_t i = 0; i < st->n_opts; i++) {
            sketch_buf_printf(b, ", %s=", st->opt_names[i]);
            sketch_buf_expr(b, st->opt_values[i]);
        }
        sketch_buf_puts(b, ")");
        break;
    case AKG_SKETCH_STMT_CALL:
        sketch_buf_expr(b, st->value);
        break;
    case AKG_SKETCH_STMT_PASS:
        sketch_buf_puts(b, "pass");
        break;
    }
    if (st->trailing) {
        sketch_buf_puts(b, "  ");
        sketch_buf_puts(b, st->trailing);
    }
    sketch_buf_puts(b, "\n");
}

static void put_block(sketch_buf *b, const sketch_block *blk, int level)
{
    if (blk->n == 0) {
        indent(b, level);
        sketch_buf_puts(b, "pass\n");
        return;
    }
    for (size_t i = 0; i < blk->n; i++)
        put_stmt(b, blk->items[i], level, false, i == 0);
}

int akg_sketch_print(const akg_sketch *s, char **out_text)
{
    sketch_buf b = {0};
    *out_text = NULL;
    put_comments(&b, &s->leading, 0);
    /* Without sections a header comment can only have come from the `sketch NAME {` line; on a
     * line of its own it would read back as a comment of the body. */
    bool sections = s->n_symbols || s->n_tensors || s->n_consts || s->n_params || s->n_binds;
    if (!sections && s->header.n == 1) {
        sketch_buf_printf(&b, "sketch %s {  %s\n", s->name, s->header.lines[0]);
    } else {
        sketch_buf_printf(&b, "sketch %s {\n", s->name);
        put_comments(&b, &s->header, 1);
    }
    if (s->n_symbols) {
        sketch_buf_puts(&b, "  symbols: ");
        for (size_t i = 0; i < s->n_symbols; i++)
            sketch_buf_printf(&b, "%s%s", i ? ", " : "", s->symbols[i].name);
        sketch_buf_puts(&b, ";\n");
    }
    if (s->n_tensors) {
        sketch_buf_puts(&b, "  tensors:");
        for (size_t i = 0; i < s->n_tensors; i++) {
            const sketch_tensor *t = &s->tensors[i];
            sketch_buf_printf(&b, " %s", t->name);
            if (t->has_shape) {
                sketch_buf_puts(&b, "[");
                for (size_t d = 0; d < t->rank; d++) {
                    if (d)
                        sketch_buf_puts(&b, ", ");
                    sketch_buf_expr(&b, t->dims[d]);
                }
                sketch_buf_puts(&b, "]");
            }
            sketch_buf_printf(&b, ": %s;", t->dtype_text);
        }
        sketch_buf_puts(&b, "\n");
    }
    if (s->n_consts) {
        sketch_buf_puts(&b, "  constexpr: ");
        for (size_t i = 0; i < s->n_consts; i++) {
            sketch_buf_printf(&b, "%s%s", i ? ", " : "", s->consts[i].name);
            if (s->consts[i].value) {
                sketch_buf_puts(&b, " = ");
                sketch_buf_expr(&b, s->consts[i].value);
            }
        }
        sketch_buf_puts(&b, ";\n");
    }
    if (s->n_params) {
        sketch_buf_puts(&b, "  params: ");
        for (size_t i = 0; i < s->n_params; i++) {
            sketch_buf_printf(&b, "%s%s", i ? ", " : "", s->params[i].name);
            if (s->params[i].dtype_text)
                sketch_buf_printf(&b, ": %s", s->params[i].dtype_text);
            if (s->params[i].def) {
                sketch_buf_puts(&b, " = ");
                sketch_buf_expr(&b, s->params[i].def);
            }
        }
        sketch_buf_puts(&b, ";\n");
    }
    /* one line per bind: section, as written */
    for (size_t i = 0; i < s->n_binds; i++) {
        const sketch_bind *bd = &s->binds[i];
        bool opens = i == 0 || bd->section != s->binds[i - 1].section;
        if (opens && i)
            sketch_buf_puts(&b, ";\n");
        sketch_buf_printf(&b, "%s%s = ", opens ? "  bind: " : ", ", bd->name);
        sketch_buf_expr(&b, bd->value);
    }
    if (s->n_binds)
        sketch_buf_puts(&b, ";\n");
    bool header = sections || s->header.n;
    if (header && (s->body.n || s->tail.n))
        sketch_buf_puts(&b, "\n");
    for (size_t i = 0; i < s->body.n; i++)
        put_stmt(&b, s->body.items[i], 1, false, i == 0);
    put_comments(&b, &s->tail, 1);
    sketch_buf_puts(&b, "}\n");
    if (b.failed) {
        free(b.data);
        return -ENOMEM;
    }
    *out_text = b.data;
    return 0;
}

/* ---- equality -------------------------------------------------------------------------- */

static bool str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

bool sketch_expr_equal(const akg_sketch_expr *a, const akg_sketch_expr *b)
{
    if (!a || !b)
        return a == b;
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        return a->ival == b->ival;
    case AKG_SKETCH_EXPR_FLOAT:
        return a->fval == b->fval;
    case AKG_SKETCH_EXPR_NONE:
        return true;
    default:
        break;
    }
    if (a->kind != AKG_SKETCH_EXPR_SUBSCRIPT && a->kind != AKG_SKETCH_EXPR_SLICE &&
        a->kind != AKG_SKETCH_EXPR_LIST && a->kind != AKG_SKETCH_EXPR_TUPLE &&
        !str_eq(a->text, b->text))
        return false;
    if (!sketch_expr_equal(a->a, b->a) || !sketch_expr_equal(a->b, b->b) ||
        !sketch_expr_equal(a->c, b->c))
        return false;
    if (a->n_items != b->n_items || a->n_kw != b->n_kw)
        return false;
    for (size_t i = 0; i < a->n_items; i++)
        if (!sketch_expr_equal(a->items[i], b->items[i]))
            return false;
    for (size_t i = 0; i < a->n_kw; i++)
        if (!str_eq(a->kw_names[i], b->kw_names[i]) ||
            !sketch_expr_equal(a->kw_values[i], b->kw_values[i]))
            return false;
    return true;
}

static bool block_equal(const sketch_block *a, const sketch_block *b);

static bool stmt_equal(const akg_sketch_stmt *a, const akg_sketch_stmt *b)
{
    if (a->kind != b->kind || a->n_hints != b->n_hints)
        return false;
    for (size_t h = 0; h < a->n_hints; h++) {
        if (!str_eq(a->hints[h].name, b->hints[h].name) || a->hints[h].n_args != b->hints[h].n_args)
            return false;
        for (size_t k = 0; k < a->hints[h].n_args; k++)
            if (!str_eq(a->hints[h].args[k], b->hints[h].args[k]))
                return false;
    }
    switch (a->kind) {
    case AKG_SKETCH_STMT_FOR:
        return str_eq(a->var, b->var) && sketch_expr_equal(a->iter, b->iter) &&
               block_equal(&a->body[0], &b->body[0]);
    case AKG_SKETCH_STMT_IF:
        return sketch_expr_equal(a->cond, b->cond) && block_equal(&a->body[0], &b->body[0]) &&
               block_equal(&a->body[1], &b->body[1]);
    case AKG_SKETCH_STMT_ALLOC:
    case AKG_SKETCH_STMT_ASSIGN:
        if (a->n_targets != b->n_targets || !str_eq(a->op, b->op))
            return false;
        for (size_t i = 0; i < a->n_targets; i++)
            if (!str_eq(a->targets[i], b->targets[i]))
                return false;
        return sketch_expr_equal(a->value, b->value);
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE:
        if (a->n_opts != b->n_opts)
            return false;
        for (size_t i = 0; i < a->n_opts; i++)
            if (!str_eq(a->opt_names[i], b->opt_names[i]) ||
                !sketch_expr_equal(a->opt_values[i], b->opt_values[i]))
                return false;
        return sketch_expr_equal(a->src, b->src) && sketch_expr_equal(a->dst, b->dst);
    case AKG_SKETCH_STMT_CALL:
        return sketch_expr_equal(a->value, b->value);
    case AKG_SKETCH_STMT_PASS:
        return true;
    }
    return false;
}

static bool block_equal(const sketch_block *a, const sketch_block *b)
{
    /* An empty block prints as `pass`; treat the two as the same design. */
    size_t na = a->n, nb = b->n;
    if (na == 1 && a->items[0]->kind == AKG_SKETCH_STMT_PASS && a->items[0]->n_hints == 0)
        na = 0;
    if (nb == 1 && b->items[0]->kind == AKG_SKETCH_STMT_PASS && b->items[0]->n_hints == 0)
        nb = 0;
    if (na != nb)
        return false;
    for (size_t i = 0; i < na; i++)
        if (!stmt_equal(a->items[i], b->items[i]))
            return false;
    return true;
}

bool akg_sketch_equal(const akg_sketch *a, const akg_sketch *b)
{
    if (!a || !b)
        return a == b;
    if (!str_eq(a->name, b->name) || a->n_symbols != b->n_symbols || a->n_tensors != b->n_tensors ||
        a->n_consts != b->n_consts || a->n_params != b->n_params)
        return false;
    for (size_t i = 0; i < a->n_symbols; i++)
        if (!str_eq(a->symbols[i].name, b->symbols[i].name))
            return false;
    for (size_t i = 0; i < a->n_tensors; i++) {
        const sketch_tensor *x = &a->tensors[i], *y = &b->tensors[i];
        if (!str_eq(x->name, y->name) || !str_eq(x->dtype_text, y->dtype_text) ||
            x->has_shape != y->has_shape || x->rank != y->rank)
            return false;
        for (size_t d = 0; d < x->rank; d++)
            if (!sketch_expr_equal(x->dims[d], y->dims[d]))
                return false;
    }
    for (size_t i = 0; i < a->n_consts; i++)
        if (!str_eq(a->consts[i].name, b->consts[i].name) ||
            !sketch_expr_equal(a->consts[i].value, b->consts[i].value))
            return false;
    for (size_t i = 0; i < a->n_params; i++)
        if (!str_eq(a->params[i].name, b->params[i].name) ||
            !str_eq(a->params[i].dtype_text, b->params[i].dtype_text) ||
            !sketch_expr_equal(a->params[i].def, b->params[i].def))
            return false;
    if (a->n_binds != b->n_binds)
        return false;
    for (size_t i = 0; i < a->n_binds; i++)
        if (!str_eq(a->binds[i].name, b->binds[i].name) ||
            !sketch_expr_equal(a->binds[i].value, b->binds[i].value))
            return false;
    return block_equal(&a->body, &b->body);
}
