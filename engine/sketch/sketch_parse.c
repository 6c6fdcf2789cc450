/*
 * Text to sketch IR: parse with the tree-sitter grammar in sketch-grammar/,
 * report syntax errors with their positions, then convert the concrete tree
 * into the arena-allocated IR of sketch_internal.h. akg_sketch_parse_all()
 * first tries the hand-written fast path of sketch_fast.c, which builds the
 * same IR for the sketches it accepts.
 */
#include "sketch_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

void sketch_diag_sort(akg_sketch_diag_list *list);

/* Deeper expressions are rejected rather than risking the C stack. */
#define SKETCH_MAX_NESTING 200
#define SKETCH_MAX_SYNTAX_DIAGS 8

typedef struct {
    akg_sketch *s;
    const char *text;
    akg_sketch_diag_list *diags;
    int err;   /* first -errno seen */
    int depth; /* current expression nesting */
} sketch_builder;

/* Node symbols and field ids of the grammar, looked up by name once per
 * process: the conversion compares integers instead of type-name strings. */
// clang-format off
#define SKETCH_SYMBOLS(X)                                                                          \
    X(identifier) X(integer) X(float) X(string) X(true) X(false) X(none)                           \
    X(parenthesized_expression) X(list) X(expression_list) X(call) X(subscript) X(slice)           \
    X(unary_operator) X(not_operator) X(binary_operator) X(comparison_operator)                    \
    X(boolean_operator) X(comment) X(keyword_argument) X(pattern_list) X(for_statement)            \
    X(if_statement) X(elif_clause) X(else_clause) X(load_statement) X(store_statement)             \
    X(assignment) X(expression_statement) X(pass_statement) X(decorator) X(block) X(sketch)        \
    X(symbols_section) X(tensors_section) X(constexpr_section) X(params_section)                   \
    X(bind_section)
#define SKETCH_FIELDS(X)                                                                           \
    X(name) X(value) X(function) X(arguments) X(start) X(stop) X(step) X(operator) X(argument)     \
    X(left) X(right) X(variable) X(iterable) X(condition) X(body) X(source) X(target) X(dtype)     \
    X(shape)
// clang-format on

enum {
#define SKETCH_SYM_ENUM(x) S_##x,
    SKETCH_SYMBOLS(SKETCH_SYM_ENUM) S_COUNT_
};
enum {
#define SKETCH_FIELD_ENUM(x) F_##x,
    SKETCH_FIELDS(SKETCH_FIELD_ENUM) F_COUNT_
};

static TSSymbol sketch_syms[S_COUNT_];
static TSFieldId sketch_fields[F_COUNT_];
static pthread_once_t sketch_ids_once = PTHREAD_ONCE_INIT;

static void sketch_ids_init(void)
{
    const TSLanguage *lang = (const TSLanguage *)tree_sitter_sketch();
    static const char *const sym_names[] = {
#define SKETCH_SYM_NAME(x) #x,
        SKETCH_SYMBOLS(SKETCH_SYM_NAME)};
    static const char *const field_names[] = {
#define SKETCH_FIELD_NAME(x) #x,
        SKETCH_FIELDS(SKETCH_FIELD_NAME)};
    for (size_t i = 0; i < S_COUNT_; i++)
        sketch_syms[i] =
            ts_language_symbol_for_name(lang, sym_names[i], (uint32_t)strlen(sym_names[i]), true);
    for (size_t i = 0; i < F_COUNT_; i++)
        sketch_fields[i] =
            ts_language_field_id_for_name(lang, field_names[i], (uint32_t)strlen(field_names[i]));
}

static bool sym_is(TSNode n, int sym)
{
    return ts_node_symbol(n) == sketch_syms[sym];
}

static TSNode field_child(TSNode n, int field)
{
    return ts_node_child_by_field_id(n, sketch_fields[field]);
}

static akg_sketch_span node_span(TSNode n)
{
    TSPoint a = ts_node_start_point(n), b = ts_node_end_point(n);
    akg_sketch_span sp = {a.row, a.column, b.row, b.column};
    return sp;
}

static bool is_type(TSNode n, const char *type)
{
    return strcmp(ts_node_type(n), type) == 0;
}

static void *b_alloc(sketch_builder *b, size_t size)
{
    void *p = sketch_arena_alloc(&b->s->arena, size);
    if (!p && !b->err)
        b->err = -ENOMEM;
    return p;
}

static const char *b_text(sketch_builder *b, TSNode n)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    char *p = sketch_arena_strndup(&b->s->arena, b->text + s, e - s);
    if (!p && !b->err)
        b->err = -ENOMEM;
    return p ? p : "";
}

static void b_error(sketch_builder *b, akg_sketch_span span, const char *fmt, const char *arg)
{
    if (akg_sketch_diag_add(b->diags, AKG_SKETCH_ERROR, span, fmt, arg) && !b->err)
        b->err = -ENOMEM;
    if (!b->err)
        b->err = -EINVAL;
}

/* Children of n with their field names. libtree-sitter 0.20's
 * ts_node_field_name_for_child() misreports fields, so walk a cursor.
 * Returns a malloc'ed array (caller frees) and stores its length. */
typedef struct {
    TSNode node;
    const char *field;
} sketch_child;

static sketch_child *children_of(sketch_builder *b, TSNode n, uint32_t *count)
{
    uint32_t cc = ts_node_child_count(n);
    *count = 0;
    sketch_child *out = malloc((cc ? cc : 1) * sizeof *out);
    if (!out) {
        b->err = -ENOMEM;
        return NULL;
    }
    TSTreeCursor cur = ts_tree_cursor_new(n);
    if (ts_tree_cursor_goto_first_child(&cur)) {
        do {
            if (*count == cc)
                break;
            out[*count].node = ts_tree_cursor_current_node(&cur);
            out[*count].field = ts_tree_cursor_current_field_name(&cur);
            (*count)++;
        } while (ts_tree_cursor_goto_next_sibling(&cur));
    }
    ts_tree_cursor_delete(&cur);
    return out;
}

static bool field_is(const sketch_child *c, const char *field)
{
    return c->field && strcmp(c->field, field) == 0;
}

static bool is_statement_type(const char *t);

/* ---- syntax errors ---------------------------------------------------------- */

static void describe_token(const char *text, TSNode n, char *out, size_t cap)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    size_t len = e - s;
    size_t k = 0;
    for (size_t i = 0; i < len && k + 4 < cap; i++) {
        char c = text[s + i];
        if (c == '\n')
            break;
        out[k++] = c;
    }
    if (k == 0) {
        snprintf(out, cap, "end of line");
        return;
    }
    if (k < len && k + 4 < cap)
        out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = '\0';
}

/* Whether the error node n sits in a block, on a line that starts with
 * `bind:`: a header section written inside a loop or an if (there `bind` is
 * a name, and the ':' after it is the error). */
static bool bind_line_in_block(const char *text, TSNode n)
{
    bool in_block = false;
    for (TSNode p = ts_node_parent(n); !ts_node_is_null(p) && !in_block; p = ts_node_parent(p))
        in_block = is_type(p, "block");
    if (!in_block)
        return false;
    uint32_t at = ts_node_start_byte(n), end = ts_node_end_byte(n),
             line = at; /* text is read below end only */
    while (line > 0 && text[line - 1] != '\n')
        line--;
    while (line < at && (text[line] == ' ' || text[line] == '\t'))
        line++;
    if (end - line < 5 || strncmp(text + line, "bind", 4) != 0)
        return false;
    line += 4;
    while (line < end && (text[line] == ' ' || text[line] == '\t'))
        line++;
    return line < end && text[line] == ':';
}

static void report_syntax_errors(sketch_builder *b, TSNode root)
{
    TSTreeCursor cur = ts_tree_cursor_new(root);
    int reported = 0;
    bool descend = true;
    for (;;) {
        TSNode n = ts_tree_cursor_current_node(&cur);
        bool err = is_type(n, "ERROR"), missing = ts_node_is_missing(n);
        if ((err || missing) && reported < SKETCH_MAX_SYNTAX_DIAGS) {
            char tok[48];
            akg_sketch_span sp = node_span(n);
            if (missing) {
                b_error(b, sp, "syntax error: missing '%s'", ts_node_type(n));
            } else {
                /* The ERROR node wraps what parsed before the failure; the token
                 * that could not be placed is its last leaf. A block header
                 * without its ':' is the commonest slip and gets its own message. */
                uint32_t cc = ts_node_child_count(n);
                int kw = -1;
                bool colon_after = false;
                for (uint32_t i = 0; i < cc; i++) {
                    TSNode ch = ts_node_child(n, i);
                    const char *ct = ts_node_type(ch);
                    if (!ts_node_is_named(ch) && (!strcmp(ct, "for") || !strcmp(ct, "if") ||
                                                  !strcmp(ct, "elif") || !strcmp(ct, "else"))) {
                        kw = (int)i;
                        colon_after = false;
                    } else if (!strcmp(ct, ":")) {
                        colon_after = true;
                    }
                }
                TSNode parent = ts_node_parent(n);
                const char *where = ts_node_is_null(parent) ? "source_file" : ts_node_type(parent);
                if (kw >= 0 && !colon_after) {
                    TSNode kwn = ts_node_child(n, (uint32_t)kw);
                    uint32_t row = ts_node_start_point(kwn).row;
                    TSPoint e = ts_node_end_point(kwn);
                    TSTreeCursor lc = ts_tree_cursor_new(n);
                    bool go = true;
                    while (go) {
                        TSNode cur_n = ts_tree_cursor_current_node(&lc);
                        if (ts_node_child_count(cur_n) == 0 &&
                            ts_node_start_byte(cur_n) >= ts_node_start_byte(kwn) &&
                            ts_node_start_point(cur_n).row == row)
                            e = ts_node_end_point(cur_n);
                        if (ts_tree_cursor_goto_first_child(&lc))
                            continue;
                        while (!ts_tree_cursor_goto_next_sibling(&lc))
                            if (!ts_tree_cursor_goto_parent(&lc)) {
                                go = false;
                                break;
                            }
                    }
                    ts_tree_cursor_delete(&lc);
                    akg_sketch_span at = {e.row, e.column, e.row, e.column};
                    b_error(b, at, "syntax error: missing ':' at the end of this `%s` line",
                            ts_node_type(kwn));
                } else {
                    /* the first child that is not a complete section or statement */
                    TSNode leaf = n;
                    bool stray = false;
                    for (uint32_t i = 0; i < cc && !stray;
                         i++) { /* an unbalanced closer is the likeliest culprit */
                        TSNode ch = ts_node_child(n, i);
                        if (!ts_node_is_named(ch) &&
                            (!strcmp(ts_node_type(ch), ")") || !strcmp(ts_node_type(ch), "]"))) {
                            leaf = ch;
                            stray = true;
                        }
                    }
                    for (uint32_t i = 0; i < cc && !stray; i++) {
                        TSNode ch = ts_node_child(n, i);
                        const char *ct = ts_node_type(ch);
                        if (strstr(ct, "_section") || is_statement_type(ct) ||
                            !strcmp(ct, "decorator") || !strcmp(ct, "comment"))
                            continue;
                        leaf = ch;
                        break;
                    }
                    bool top = strcmp(where, "source_file") == 0;
                    while (ts_node_child_count(leaf) > 0)
                        leaf = ts_node_child(leaf, 0);
                    describe_token(b->text, leaf, tok, sizeof tok);
                    akg_sketch_span lsp = node_span(leaf);
                    char msg[200];
                    snprintf(msg, sizeof msg, "syntax error: unexpected '%s' in %s", tok,
                             top ? "the file (expected `sketch NAME { ... }`)"
                             : strcmp(where, "sketch") == 0 ? "the sketch body"
                             : strcmp(where, "block") == 0  ? "this block"
                                                            : where);
                    if (bind_line_in_block(b->text, n))
                        snprintf(msg, sizeof msg,
                                 "syntax error: a `bind:` section belongs to the sketch's header, "
                                 "next to "
                                 "symbols: and tensors:, not inside a block");
                    b_error(b, lsp, "%s", msg);
                }
            }
            reported++;
            descend = false; /* one report per error subtree */
        }
        if (descend && ts_tree_cursor_goto_first_child(&cur))
            continue;
        descend = true;
        while (!ts_tree_cursor_goto_next_sibling(&cur)) {
            if (!ts_tree_cursor_goto_parent(&cur)) {
                ts_tree_cursor_delete(&cur);
                return;
            }
        }
    }
}

/* ---- expressions ---------------------------------------------------------------- */

static akg_sketch_expr *conv_expr(sketch_builder *b, TSNode n);

static akg_sketch_expr *new_expr(sketch_builder *b, akg_sketch_expr_kind kind, TSNode n)
{
    akg_sketch_expr *e = b_alloc(b, sizeof *e);
    if (!e)
        return NULL;
    e->kind = kind;
    e->span = node_span(n);
    return e;
}

static akg_sketch_expr *conv_field(sketch_builder *b, TSNode n, int field)
{
    TSNode c = field_child(n, field);
    return ts_node_is_null(c) ? NULL : conv_expr(b, c);
}

static const char *unquote(sketch_builder *b, TSNode n)
{
    uint32_t s = ts_node_start_byte(n), e = ts_node_end_byte(n);
    const char *out = sketch_unquote(&b->s->arena, b->text + s, e - s);
    if (!out) {
        if (!b->err)
            b->err = -ENOMEM;
        return "";
    }
    return out;
}

static void conv_arguments(sketch_builder *b, akg_sketch_expr *e, TSNode args)
{
    /* the children are looked up once (each lookup walks from the first
     * child); calls with more arguments than fit here look them up twice */
    TSNode local[16];
    uint32_t nc = ts_node_named_child_count(args), nl = 0;
    size_t npos = 0, nkw = 0;
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(args, i);
        if (nc <= 16)
            local[nl++] = c;
        if (sym_is(c, S_comment))
            continue;
        if (sym_is(c, S_keyword_argument))
            nkw++;
        else
            npos++;
    }
    e->items = npos ? b_alloc(b, npos * sizeof *e->items) : NULL;
    e->kw_names = nkw ? b_alloc(b, nkw * sizeof *e->kw_names) : NULL;
    e->kw_spans = nkw ? b_alloc(b, nkw * sizeof *e->kw_spans) : NULL;
    e->kw_values = nkw ? b_alloc(b, nkw * sizeof *e->kw_values) : NULL;
    if (b->err)
        return;
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = nl == nc ? local[i] : ts_node_named_child(args, i);
        if (sym_is(c, S_comment))
            continue;
        if (sym_is(c, S_keyword_argument)) {
            TSNode name = field_child(c, F_name);
            e->kw_names[e->n_kw] = b_text(b, name);
            e->kw_spans[e->n_kw] = node_span(name);
            e->kw_values[e->n_kw] = conv_field(b, c, F_value);
            e->n_kw++;
        } else {
            e->items[e->n_items++] = conv_expr(b, c);
        }
    }
}

static void conv_items(sketch_builder *b, akg_sketch_expr *e, TSNode n)
{
    uint32_t nc = ts_node_named_child_count(n);
    size_t count = 0;
    for (uint32_t i = 0; i < nc; i++)
        if (!sym_is(ts_node_named_child(n, i), S_comment))
            count++;
    e->items = count ? b_alloc(b, count * sizeof *e->items) : NULL;
    if (b->err)
        return;
    for (uint32_t i = 0; i < nc; i++) {
        TSNode c = ts_node_named_child(n, i);
        if (sym_is(c, S_comment))
            continue;
        e->items[e->n_items++] = conv_expr(b, c);
    }
}

static akg_sketch_expr *conv_expr(sketch_builder *b, TSNode n)
{
    if (b->err)
        return NULL;
    if (++b->depth > SKETCH_MAX_NESTING) {
        b->depth--;
        b_error(b, node_span(n), "expression nested too deeply (more than %s levels)", "200");
        return NULL;
    }
    const char *t = ts_node_type(n);
    TSSymbol sym = ts_node_symbol(n);
    akg_sketch_expr *e = NULL;
    if (sym == sketch_syms[S_identifier]) {
        e = new_expr(b, AKG_SKETCH_EXPR_NAME, n);
        if (e)
            e->text = b_text(b, n);
    } else if (sym == sketch_syms[S_integer]) {
        e = new_expr(b, AKG_SKETCH_EXPR_INT, n);
        if (e) {
            bool overflow;
            e->text = b_text(b, n);
            e->ival = sketch_parse_int(e->text, &overflow);
            if (overflow)
                b_error(b, e->span, "integer literal %s does not fit in 64 bits", e->text);
        }
    } else if (sym == sketch_syms[S_float]) {
        e = new_expr(b, AKG_SKETCH_EXPR_FLOAT, n);
        if (e) {
            e->text = b_text(b, n);
            e->fval = sketch_parse_float(e->text);
        }
    } else if (sym == sketch_syms[S_string]) {
        e = new_expr(b, AKG_SKETCH_EXPR_STRING, n);
        if (e)
            e->text = unquote(b, n);
    } else if (sym == sketch_syms[S_true] || sym == sketch_syms[S_false]) {
        e = new_expr(b, AKG_SKETCH_EXPR_BOOL, n);
        if (e) {
            e->ival = t[0] == 't';
            e->text = t[0] == 't' ? "True" : "False";
        }
    } else if (sym == sketch_syms[S_none]) {
        e = new_expr(b, AKG_SKETCH_EXPR_NONE, n);
        if (e)
            e->text = "None";
    } else if (sym == sketch_syms[S_parenthesized_expression]) {
        TSNode inner = ts_node_named_child(n, 0);
        for (uint32_t i = 0; i < ts_node_named_child_count(n); i++)
            if (!sym_is(ts_node_named_child(n, i), S_comment)) {
                inner = ts_node_named_child(n, i);
                break;
            }
        e = conv_expr(b, inner);
    } else if (sym == sketch_syms[S_list]) {
        e = new_expr(b, AKG_SKETCH_EXPR_LIST, n);
        if (e)
            conv_items(b, e, n);
    } else if (sym == sketch_syms[S_expression_list]) {
        e = new_expr(b, AKG_SKETCH_EXPR_TUPLE, n);
        if (e)
            conv_items(b, e, n);
    } else if (sym == sketch_syms[S_call]) {
        e = new_expr(b, AKG_SKETCH_EXPR_CALL, n);
        if (e) {
            e->text = b_text(b, field_child(n, F_function));
            conv_arguments(b, e, field_child(n, F_arguments));
        }
    } else if (sym == sketch_syms[S_subscript]) {
        e = new_expr(b, AKG_SKETCH_EXPR_SUBSCRIPT, n);
        if (e) {
            e->a = conv_field(b, n, F_value);
            uint32_t cc;
            sketch_child *ch = children_of(b, n, &cc);
            size_t count = 0;
            for (uint32_t i = 0; ch && i < cc; i++)
                count += field_is(&ch[i], "index");
            e->items = count ? b_alloc(b, count * sizeof *e->items) : NULL;
            for (uint32_t i = 0; ch && i < cc && !b->err; i++)
                if (field_is(&ch[i], "index"))
                    e->items[e->n_items++] = conv_expr(b, ch[i].node);
            free(ch);
        }
    } else if (sym == sketch_syms[S_slice]) {
        e = new_expr(b, AKG_SKETCH_EXPR_SLICE, n);
        if (e) {
            e->a = conv_field(b, n, F_start);
            e->b = conv_field(b, n, F_stop);
            e->c = conv_field(b, n, F_step);
        }
    } else if (sym == sketch_syms[S_unary_operator] || sym == sketch_syms[S_not_operator]) {
        e = new_expr(b, AKG_SKETCH_EXPR_UNARY, n);
        if (e) {
            e->text = t[0] == 'n' ? "not" : b_text(b, field_child(n, F_operator));
            e->a = conv_field(b, n, F_argument);
        }
    } else if (sym == sketch_syms[S_binary_operator] || sym == sketch_syms[S_comparison_operator] ||
               sym == sketch_syms[S_boolean_operator]) {
        e = new_expr(b, AKG_SKETCH_EXPR_BINARY, n);
        if (e) {
            e->text = b_text(b, field_child(n, F_operator));
            e->a = conv_field(b, n, F_left);
            e->b = conv_field(b, n, F_right);
        }
    } else {
        b_error(b, node_span(n), "syntax error: unexpected %s", t);
    }
    b->depth--;
    return b->err ? NULL : e;
}

/* ---- statements -------------------------------------------------------------------- */

typedef struct {
    sketch_hint *hints;
    size_t n_hints, cap_hints;
    const char **comments;
    uint32_t *comment_cols; /* column of each pending comment */
    size_t n_comments, cap_comments;
    TSNode first_decorator;
    bool blank;       /* a blank line since the previous statement of this block */
    int64_t last_row; /* last line of the previous element of this block, -1: none yet */
} sketch_pending;

#define SKETCH_PENDING_INIT                                                                        \
    {                                                                                              \
        .last_row = -1                                                                             \
    }

static void pending_free(sketch_pending *p)
{
    free(p->hints);
    free(p->comments);
    free(p->comment_cols);
}

/* Notes an element (comment, decorator, statement) spanning rows first..last
 * of the current block, to find the blank lines between statements. */
static void pending_see_rows(sketch_pending *p, uint32_t first, uint32_t last)
{
    if (p->last_row >= 0 && (int64_t)first > p->last_row + 1)
        p->blank = true;
    if ((int64_t)last > p->last_row)
        p->last_row = last;
}

static bool pending_push_comment_at(sketch_builder *b, sketch_pending *p, const char *c,
                                    uint32_t col)
{
    if (p->n_comments == p->cap_comments) {
        size_t cap = p->cap_comments ? p->cap_comments * 2 : 4;
        const char **n = realloc(p->comments, cap * sizeof *n);
        if (!n) {
            b->err = -ENOMEM;
            return false;
        }
        p->comments = n;
        uint32_t *cols = realloc(p->comment_cols, cap * sizeof *cols);
        if (!cols) {
            b->err = -ENOMEM;
            return false;
        }
        p->comment_cols = cols;
        p->cap_comments = cap;
    }
    p->comment_cols[p->n_comments] = col;
    p->comments[p->n_comments++] = c;
    return true;
}

static bool pending_push_comment(sketch_builder *b, sketch_pending *p, TSNode comment)
{
    return pending_push_comment_at(b, p, b_text(b, comment), ts_node_start_point(comment).column);
}

/* Moves the pending comments from index `from` on to the end of `to`. */
static void pending_move_comments(sketch_builder *b, sketch_pending *from_p, size_t from,
                                  sketch_pending *to)
{
    if (from >= from_p->n_comments)
        return;
    for (size_t i = from; i < from_p->n_comments && !b->err; i++)
        pending_push_comment_at(b, to, from_p->comments[i], from_p->comment_cols[i]);
    from_p->n_comments = from;
    /* a blank line among them separates them from what came before */
    if (from_p->blank)
        to->blank = true;
    from_p->blank = false;
}

static void pending_take_comments(sketch_builder *b, sketch_pending *p, sketch_comments *out)
{
    out->n = 0;
    out->lines = NULL;
    if (!p->n_comments)
        return;
    out->lines = b_alloc(b, p->n_comments * sizeof *out->lines);
    if (!out->lines)
        return;
    memcpy(out->lines, p->comments, p->n_comments * sizeof *out->lines);
    out->n = p->n_comments;
    p->n_comments = 0;
}

static void conv_decorator(sketch_builder *b, sketch_pending *p, TSNode n)
{
    if (p->n_hints == 0)
        p->first_decorator = n;
    if (p->n_hints == p->cap_hints) {
        size_t cap = p->cap_hints ? p->cap_hints * 2 : 4;
        sketch_hint *h = realloc(p->hints, cap * sizeof *h);
        if (!h) {
            b->err = -ENOMEM;
            return;
        }
        p->hints = h;
        p->cap_hints = cap;
    }
    sketch_hint *h = &p->hints[p->n_hints++];
    memset(h, 0, sizeof *h);
    TSNode name = field_child(n, F_name);
    h->name = b_text(b, name);
    h->name_span = node_span(name);
    TSNode args = field_child(n, F_arguments);
    h->span = node_span(n); /* ends at its arguments: the line break is not part of it */
    if (!ts_node_is_null(args)) {
        TSPoint e = ts_node_end_point(args);
        h->span.end_line = e.row;
        h->span.end_col = e.column;
    }
    uint32_t nc = ts_node_named_child_count(args);
    h->args = nc ? b_alloc(b, nc * sizeof *h->args) : NULL;
    h->arg_spans = nc ? b_alloc(b, nc * sizeof *h->arg_spans) : NULL;
    for (uint32_t i = 0; i < nc && !b->err; i++) {
        TSNode a = ts_node_named_child(args, i);
        if (sym_is(a, S_comment))
            continue;
        /* a count or a vector width may be a plain integer: @llm_hint("vectorize", "simd", 8) */
        const char *digits = sym_is(a, S_integer) ? b_text(b, a) : NULL;
        if (!sym_is(a, S_string) &&
            !(digits && digits[0] && strspn(digits, "0123456789") == strlen(digits))) {
            b_error(b, node_span(a),
                    "@%s arguments must be string literals or plain integers, e.g. "
                    "@llm_hint(\"parallel\", \"grididx\") "
                    "or @llm_hint(\"vectorize\", \"simd\", 8)",
                    h->name);
            return;
        }
        if (digits) {
            if (!h->arg_int)
                h->arg_int = b_alloc(b, nc * sizeof *h->arg_int);
            if (!h->arg_int)
                return;
            h->arg_int[h->n_args] = true;
        }
        h->arg_spans[h->n_args] = node_span(a);
        h->args[h->n_args++] = digits ? digits : unquote(b, a);
    }
    /* The line break that ends a decorator is read after the comment lines
     * that follow it, so those comments are its children: they go with the
     * statement it decorates. */
    uint32_t cc = ts_node_child_count(n);
    for (uint32_t i = 0; i < cc && !b->err; i++) {
        TSNode k = ts_node_child(n, i);
        if (!sym_is(k, S_comment))
            continue;
        pending_see_rows(p, ts_node_start_point(k).row, ts_node_start_point(k).row);
        pending_push_comment(b, p, k);
    }
}

static void conv_block_into(sketch_builder *b, TSNode container, sketch_block *out,
                            sketch_comments *tail, sketch_pending *p, sketch_pending *outer);

static akg_sketch_stmt *conv_statement(sketch_builder *b, TSNode n, sketch_pending *p)
{
    akg_sketch_stmt *st = b_alloc(b, sizeof *st);
    if (!st)
        return NULL;
    st->span = node_span(n);
    if (p->n_hints) {
        st->hints = b_alloc(b, p->n_hints * sizeof *st->hints);
        if (!st->hints)
            return NULL;
        memcpy(st->hints, p->hints, p->n_hints * sizeof *st->hints);
        st->n_hints = p->n_hints;
        p->n_hints = 0;
    }
    pending_take_comments(b, p, &st->leading);
    st->blank_before = p->blank;
    p->blank = false;
    const char *t = ts_node_type(n);
    TSSymbol sym = ts_node_symbol(n);
    if (sym == sketch_syms[S_for_statement]) {
        st->kind = AKG_SKETCH_STMT_FOR;
        TSNode var = field_child(n, F_variable);
        st->var = b_text(b, var);
        st->var_span = node_span(var);
        st->iter = conv_field(b, n, F_iterable);
        sketch_fill_range(st);
        sketch_pending inner = SKETCH_PENDING_INIT;
        conv_block_into(b, n, &st->body[0], &st->tail, &inner, p);
        pending_free(&inner);
    } else if (sym == sketch_syms[S_if_statement] || sym == sketch_syms[S_elif_clause]) {
        st->kind = AKG_SKETCH_STMT_IF;
        st->cond = conv_field(b, n, F_condition);
        /* alternatives: elif chains become nested IFs in the else branch */
        uint32_t cc;
        sketch_child *ch = children_of(b, n, &cc);
        TSNode alts[64];
        size_t na = 0;
        for (uint32_t i = 0; ch && i < cc && na < 64; i++)
            if (field_is(&ch[i], "alternative"))
                alts[na++] = ch[i].node;
        free(ch);
        /* Comments written at the if's own indentation after its block come
         * before the elif/else (or, without one, before the next statement). */
        sketch_pending before_alt = SKETCH_PENDING_INIT;
        sketch_pending inner = SKETCH_PENDING_INIT;
        conv_block_into(b, n, &st->body[0], &st->tail, &inner, na ? &before_alt : p);
        pending_free(&inner);
        akg_sketch_stmt *cur = st;
        for (size_t i = 0; i < na && !b->err; i++) {
            pending_take_comments(b, &before_alt, &cur->else_leading);
            bool last_alt = i + 1 == na;
            if (sym_is(alts[i], S_elif_clause)) {
                akg_sketch_stmt *elif = conv_statement(b, alts[i], last_alt ? p : &before_alt);
                if (!elif)
                    break;
                cur->body[1].items = b_alloc(b, sizeof *cur->body[1].items);
                if (!cur->body[1].items)
                    break;
                cur->body[1].items[0] = elif;
                cur->body[1].n = 1;
                cur->else_is_elif = true;
                cur = elif;
            } else {
                sketch_pending inner2 = SKETCH_PENDING_INIT;
                conv_block_into(b, alts[i], &cur->body[1], &cur->else_tail, &inner2, p);
                pending_free(&inner2);
            }
        }
        pending_free(&before_alt);
    } else if (sym == sketch_syms[S_load_statement] || sym == sketch_syms[S_store_statement]) {
        st->kind = t[0] == 'l' ? AKG_SKETCH_STMT_LOAD : AKG_SKETCH_STMT_STORE;
        st->src = conv_field(b, n, F_source);
        st->dst = conv_field(b, n, F_target);
        uint32_t cc;
        sketch_child *ch = children_of(b, n, &cc);
        size_t no = 0;
        for (uint32_t i = 0; ch && i < cc; i++)
            no += field_is(&ch[i], "option");
        if (no) {
            st->opt_names = b_alloc(b, no * sizeof *st->opt_names);
            st->opt_spans = b_alloc(b, no * sizeof *st->opt_spans);
            st->opt_values = b_alloc(b, no * sizeof *st->opt_values);
        }
        for (uint32_t i = 0; ch && i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "option"))
                continue;
            TSNode kw = ch[i].node;
            TSNode name = field_child(kw, F_name);
            st->opt_names[st->n_opts] = b_text(b, name);
            st->opt_spans[st->n_opts] = node_span(name);
            st->opt_values[st->n_opts] = conv_field(b, kw, F_value);
            st->n_opts++;
        }
        free(ch);
    } else if (sym == sketch_syms[S_assignment]) {
        st->kind = AKG_SKETCH_STMT_ASSIGN;
        TSNode left = field_child(n, F_left);
        if (sym_is(left, S_pattern_list)) {
            uint32_t nc = ts_node_named_child_count(left);
            st->targets = b_alloc(b, nc * sizeof *st->targets);
            st->target_spans = b_alloc(b, nc * sizeof *st->target_spans);
            for (uint32_t i = 0; i < nc && !b->err; i++) {
                TSNode c = ts_node_named_child(left, i);
                if (sym_is(c, S_comment))
                    continue;
                st->target_spans[st->n_targets] = node_span(c);
                st->targets[st->n_targets++] = b_text(b, c);
            }
        } else {
            st->targets = b_alloc(b, sizeof *st->targets);
            st->target_spans = b_alloc(b, sizeof *st->target_spans);
            if (!b->err) {
                st->targets[0] = b_text(b, left);
                st->target_spans[0] = node_span(left);
                st->n_targets = 1;
            }
        }
        st->op = b_text(b, field_child(n, F_operator));
        st->value = conv_field(b, n, F_right);
        if (!b->err && st->value && st->value->kind == AKG_SKETCH_EXPR_CALL &&
            strcmp(st->value->text, "alloc") == 0 && st->n_targets == 1 &&
            strcmp(st->op, "=") == 0) {
            st->kind = AKG_SKETCH_STMT_ALLOC;
            if (sketch_fill_alloc(&b->s->arena, st) && !b->err)
                b->err = -ENOMEM;
        }
    } else if (sym == sketch_syms[S_expression_statement]) {
        st->kind = AKG_SKETCH_STMT_CALL;
        st->value = conv_expr(b, ts_node_named_child(n, 0));
    } else if (sym == sketch_syms[S_pass_statement]) {
        st->kind = AKG_SKETCH_STMT_PASS;
    } else {
        b_error(b, st->span, "syntax error: unexpected %s", t);
    }
    return b->err ? NULL : st;
}

static bool is_statement_node(TSNode n)
{
    TSSymbol t = ts_node_symbol(n);
    return t == sketch_syms[S_for_statement] || t == sketch_syms[S_if_statement] ||
           t == sketch_syms[S_load_statement] || t == sketch_syms[S_store_statement] ||
           t == sketch_syms[S_assignment] || t == sketch_syms[S_expression_statement] ||
           t == sketch_syms[S_pass_statement];
}

static bool is_section_node(TSNode n)
{
    TSSymbol t = ts_node_symbol(n);
    return t == sketch_syms[S_symbols_section] || t == sketch_syms[S_tensors_section] ||
           t == sketch_syms[S_constexpr_section] || t == sketch_syms[S_params_section] ||
           t == sketch_syms[S_bind_section];
}

static bool is_statement_type(const char *t)
{
    static const char *types[] = {"for_statement",   "if_statement", "load_statement",
                                  "store_statement", "assignment",   "expression_statement",
                                  "pass_statement"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (strcmp(t, types[i]) == 0)
            return true;
    return false;
}

typedef struct {
    akg_sketch_stmt **items;
    size_t n, cap;
} stmt_vec;

static void vec_push(sketch_builder *b, stmt_vec *v, akg_sketch_stmt *st)
{
    if (v->n == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        akg_sketch_stmt **items = realloc(v->items, cap * sizeof *items);
        if (!items) {
            b->err = -ENOMEM;
            return;
        }
        v->items = items;
        v->cap = cap;
    }
    v->items[v->n++] = st;
}

/* Walks the statements of container: the children of a `block` node (when
 * container is a for/if/else node, its own comments first, then its block). */
static void conv_children(sketch_builder *b, TSNode container, stmt_vec *v, sketch_pending *p,
                          akg_sketch_stmt **last)
{
    TSTreeCursor cur = ts_tree_cursor_new(container);
    for (bool more = ts_tree_cursor_goto_first_child(&cur); more && !b->err;
         more = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (sym_is(c, S_comment)) {
            TSPoint at = ts_node_start_point(c);
            if (*last && !(*last)->trailing && at.row == (*last)->span.end_line &&
                (*last)->kind != AKG_SKETCH_STMT_FOR && (*last)->kind != AKG_SKETCH_STMT_IF) {
                (*last)->trailing = b_text(b, c);
            } else {
                pending_see_rows(p, at.row, at.row);
                pending_push_comment(b, p, c);
            }
        } else if (sym_is(c, S_decorator)) {
            conv_decorator(b, p, c);
            if (p->n_hints)
                pending_see_rows(p, p->hints[p->n_hints - 1].span.line,
                                 p->hints[p->n_hints - 1].span.end_line);
        } else if (sym_is(c, S_block)) {
            conv_children(b, c, v, p, last);
        } else if (is_statement_node(c)) {
            pending_see_rows(p, ts_node_start_point(c).row, ts_node_start_point(c).row);
            akg_sketch_stmt *st = conv_statement(b, c, p);
            if (st) {
                pending_see_rows(p, st->span.line, st->span.end_line);
                vec_push(b, v, st);
                *last = st;
            }
        }
    }
    ts_tree_cursor_delete(&cur);
}

/* Ends a block. Comments after its last statement stay in the block (tail)
 * while they are indented like its statements; from the first one written
 * further left on, they belong to the enclosing level and move to `outer`
 * (when given), so that they stay in front of the statement that follows. */
static void finish_block(sketch_builder *b, stmt_vec *v, sketch_pending *p, sketch_block *out,
                         sketch_comments *tail, sketch_pending *outer)
{
    if (outer && v->n) {
        uint32_t body_col = v->items[0]->span.col;
        for (size_t i = 0; i < p->n_comments; i++)
            if (p->comment_cols[i] < body_col) {
                pending_move_comments(b, p, i, outer);
                break;
            }
    }
    if (p->n_hints && !b->err)
        b_error(b, node_span(p->first_decorator),
                "@%s is not followed by a statement it could apply to", p->hints[0].name);
    out->n = 0;
    out->items = NULL;
    if (v->n) {
        out->items = b_alloc(b, v->n * sizeof *out->items);
        if (out->items) {
            memcpy(out->items, v->items, v->n * sizeof *out->items);
            out->n = v->n;
        }
    }
    pending_take_comments(b, p, tail);
    free(v->items);
}

static void conv_block_into(sketch_builder *b, TSNode container, sketch_block *out,
                            sketch_comments *tail, sketch_pending *p, sketch_pending *outer)
{
    stmt_vec v = {0};
    akg_sketch_stmt *last = NULL;
    TSTreeCursor cur = ts_tree_cursor_new(container);
    for (bool more = ts_tree_cursor_goto_first_child(&cur); more && !b->err;
         more = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (sym_is(c, S_comment)) {
            pending_push_comment(b, p, c);
        } else if (sym_is(c, S_block)) {
            conv_children(b, c, &v, p, &last);
            break; /* alternatives of an if are handled by the caller */
        }
    }
    ts_tree_cursor_delete(&cur);
    finish_block(b, &v, p, out, tail, outer);
}

/* ---- header sections ----------------------------------------------------------------- */

static size_t count_field(const sketch_child *ch, uint32_t cc, const char *field)
{
    size_t k = 0;
    for (uint32_t i = 0; ch && i < cc; i++)
        k += field_is(&ch[i], field);
    return k;
}

static void *grow(sketch_builder *b, void *items, size_t *n, size_t add, size_t elem)
{
    /* Header arrays are rebuilt in the arena; headers are small. */
    void *p = b_alloc(b, (*n + add) * elem);
    if (!p)
        return items;
    if (*n)
        memcpy(p, items, *n * elem);
    return p;
}

static void conv_section(sketch_builder *b, TSNode n)
{
    akg_sketch *s = b->s;
    uint32_t cc;
    sketch_child *ch = children_of(b, n, &cc);
    if (!ch)
        return;
    if (sym_is(n, S_symbols_section)) {
        s->symbols =
            grow(b, s->symbols, &s->n_symbols, count_field(ch, cc, "symbol"), sizeof *s->symbols);
        for (uint32_t i = 0; i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "symbol"))
                continue;
            TSNode c = ch[i].node;
            s->symbols[s->n_symbols].name = b_text(b, c);
            s->symbols[s->n_symbols].span = node_span(c);
            s->n_symbols++;
        }
    } else if (sym_is(n, S_tensors_section)) {
        s->tensors =
            grow(b, s->tensors, &s->n_tensors, count_field(ch, cc, "tensor"), sizeof *s->tensors);
        for (uint32_t i = 0; i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "tensor"))
                continue;
            TSNode c = ch[i].node;
            sketch_tensor *tn = &s->tensors[s->n_tensors];
            memset(tn, 0, sizeof *tn);
            TSNode name = field_child(c, F_name);
            TSNode dtype = field_child(c, F_dtype);
            TSNode shape = field_child(c, F_shape);
            tn->name = b_text(b, name);
            tn->span = node_span(name);
            tn->dtype_text = b_text(b, dtype);
            tn->dtype_span = node_span(dtype);
            tn->dtype = akg_dtype_from_name(tn->dtype_text);
            if (!ts_node_is_null(shape)) {
                tn->has_shape = true;
                tn->shape_span = node_span(shape);
                uint32_t sc;
                sketch_child *sch = children_of(b, shape, &sc);
                size_t nd = count_field(sch, sc, "dimension");
                tn->dims = nd ? b_alloc(b, nd * sizeof *tn->dims) : NULL;
                for (uint32_t k = 0; sch && k < sc && !b->err; k++)
                    if (field_is(&sch[k], "dimension"))
                        tn->dims[tn->rank++] = conv_expr(b, sch[k].node);
                free(sch);
            }
            s->n_tensors++;
        }
    } else if (sym_is(n, S_constexpr_section)) {
        s->consts =
            grow(b, s->consts, &s->n_consts, count_field(ch, cc, "constant"), sizeof *s->consts);
        for (uint32_t i = 0; i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "constant"))
                continue;
            TSNode c = ch[i].node;
            sketch_const *k = &s->consts[s->n_consts];
            memset(k, 0, sizeof *k);
            TSNode name = field_child(c, F_name);
            k->name = b_text(b, name);
            k->span = node_span(name);
            k->value = conv_field(b, c, F_value);
            k->tunable = k->value && k->value->kind == AKG_SKETCH_EXPR_CALL &&
                         strcmp(k->value->text, "tune") == 0;
            s->n_consts++;
        }
    } else if (sym_is(n, S_params_section)) {
        s->params =
            grow(b, s->params, &s->n_params, count_field(ch, cc, "parameter"), sizeof *s->params);
        for (uint32_t i = 0; i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "parameter"))
                continue;
            TSNode c = ch[i].node;
            sketch_param *pm = &s->params[s->n_params];
            memset(pm, 0, sizeof *pm);
            TSNode name = field_child(c, F_name);
            TSNode dtype = field_child(c, F_dtype);
            pm->name = b_text(b, name);
            pm->span = node_span(name);
            if (!ts_node_is_null(dtype)) {
                pm->dtype_text = b_text(b, dtype);
                pm->dtype_span = node_span(dtype);
                pm->dtype = akg_dtype_from_name(pm->dtype_text);
            }
            pm->def = conv_field(b, c, F_value);
            s->n_params++;
        }
    } else if (sym_is(n, S_bind_section)) {
        s->binds = grow(b, s->binds, &s->n_binds, count_field(ch, cc, "binding"), sizeof *s->binds);
        for (uint32_t i = 0; i < cc && !b->err; i++) {
            if (!field_is(&ch[i], "binding"))
                continue;
            TSNode c = ch[i].node;
            sketch_bind *bd = &s->binds[s->n_binds];
            memset(bd, 0, sizeof *bd);
            TSNode name = field_child(c, F_name);
            bd->name = b_text(b, name);
            bd->span = node_span(name);
            bd->item_span = node_span(c);
            bd->value = conv_field(b, c, F_value);
            bd->section = s->n_bind_sections;
            s->n_binds++;
        }
        s->n_bind_sections++;
    }
    free(ch);
}

/* Appends a comment to the header's comments (printed above the sections). */
static void header_comment(sketch_builder *b, akg_sketch *s, const char *text)
{
    const char **all = b_alloc(b, (s->header.n + 1) * sizeof *all);
    if (!all)
        return;
    if (s->header.n)
        memcpy(all, s->header.lines, s->header.n * sizeof *all);
    all[s->header.n] = text;
    s->header.lines = all;
    s->header.n++;
}

static akg_sketch *conv_sketch(sketch_builder *b, TSNode n, sketch_comments *leading)
{
    sketch_arena arena = {0};
    akg_sketch *s = sketch_arena_alloc(&arena, sizeof *s);
    if (!s) {
        sketch_arena_release(&arena);
        b->err = -ENOMEM;
        return NULL;
    }
    s->arena = arena;
    b->s = s;
    s->span = node_span(n);
    TSNode name = field_child(n, F_name);
    s->name = b_text(b, name);
    s->name_span = node_span(name);
    if (leading && leading->n) {
        s->leading.lines = b_alloc(b, leading->n * sizeof *s->leading.lines);
        for (size_t i = 0; s->leading.lines && i < leading->n; i++) {
            s->leading.lines[i] =
                sketch_arena_strndup(&s->arena, leading->lines[i], strlen(leading->lines[i]));
            if (!s->leading.lines[i])
                b->err = -ENOMEM;
        }
        if (!b->err)
            s->leading.n = leading->n;
    }
    stmt_vec v = {0};
    sketch_pending p = SKETCH_PENDING_INIT;
    akg_sketch_stmt *last = NULL;
    bool in_header = true;
    TSTreeCursor cur = ts_tree_cursor_new(n);
    for (bool more = ts_tree_cursor_goto_first_child(&cur); more && !b->err;
         more = ts_tree_cursor_goto_next_sibling(&cur)) {
        TSNode c = ts_tree_cursor_current_node(&cur);
        if (is_section_node(c)) {
            conv_section(b, c);
            if (p.n_comments) {
                /* comments among the header sections stay in the header */
                sketch_comments hc;
                pending_take_comments(b, &p, &hc);
                const char **all = b_alloc(b, (s->header.n + hc.n) * sizeof *all);
                if (all) {
                    if (s->header.n)
                        memcpy(all, s->header.lines, s->header.n * sizeof *all);
                    memcpy(all + s->header.n, hc.lines, hc.n * sizeof *all);
                    s->header.lines = all;
                    s->header.n += hc.n;
                }
            }
            /* The line break that ends a section is read after the comment lines
             * that follow it, so those comments are children of the section:
             * they go with what comes next (a section or the first statement). */
            TSTreeCursor sc = ts_tree_cursor_new(c);
            uint32_t section_row = ts_node_start_point(c).row;
            for (bool m = ts_tree_cursor_goto_first_child(&sc); m;
                 m = ts_tree_cursor_goto_next_sibling(&sc)) {
                TSNode k = ts_tree_cursor_current_node(&sc);
                if (!sym_is(k, S_comment))
                    continue;
                if (ts_node_start_point(k).row > section_row)
                    pending_push_comment(b, &p, k);
                else
                    header_comment(b, s,
                                   b_text(b, k)); /* on the section's line: kept with the header */
            }
            ts_tree_cursor_delete(&sc);
            continue;
        }
        if (sym_is(c, S_comment) && in_header && ts_node_start_point(c).row == s->span.line) {
            header_comment(b, s, b_text(b, c)); /* after `sketch NAME {`: printed below that line */
            continue;
        }
        if (sym_is(c, S_comment)) {
            TSPoint at = ts_node_start_point(c);
            if (last && !last->trailing && at.row == last->span.end_line &&
                last->kind != AKG_SKETCH_STMT_FOR && last->kind != AKG_SKETCH_STMT_IF) {
                last->trailing = b_text(b, c);
            } else {
                pending_see_rows(&p, at.row, at.row);
                pending_push_comment(b, &p, c);
            }
        } else if (sym_is(c, S_decorator)) {
            in_header = false;
            conv_decorator(b, &p, c);
            if (p.n_hints)
                pending_see_rows(&p, p.hints[p.n_hints - 1].span.line,
                                 p.hints[p.n_hints - 1].span.end_line);
        } else if (is_statement_node(c)) {
            in_header = false;
            pending_see_rows(&p, ts_node_start_point(c).row, ts_node_start_point(c).row);
            akg_sketch_stmt *st = conv_statement(b, c, &p);
            if (st) {
                pending_see_rows(&p, st->span.line, st->span.end_line);
                vec_push(b, &v, st);
                last = st;
            }
        }
        /* the blank line after the header is always printed: count from the first statement on */
        if (in_header)
            p.last_row = -1;
    }
    ts_tree_cursor_delete(&cur);
    finish_block(b, &v, &p, &s->body, &s->tail, NULL);
    pending_free(&p);
    return s;
}

/* ---- entry points ---------------------------------------------------------------------- */

int sketch_parse_ts(const char *text, size_t len, akg_sketch ***out, size_t *count,
                    akg_sketch_diag_list *diags)
{
    *out = NULL;
    *count = 0;
    akg_sketch_span top = {0, 0, 0, 0};
    if (len > AKG_SKETCH_MAX_TEXT) {
        akg_sketch_diag_add(diags, AKG_SKETCH_ERROR, top,
                            "sketch text is %zu bytes; the limit is %u bytes", len,
                            AKG_SKETCH_MAX_TEXT);
        return -E2BIG;
    }
    if (memchr(text, '\0', len)) {
        const char *z = memchr(text, '\0', len);
        uint32_t line = 0, col = 0;
        for (const char *p = text; p < z; p++) {
            if (*p == '\n')
                line++, col = 0;
            else
                col++;
        }
        akg_sketch_span sp = {line, col, line, col + 1};
        akg_sketch_diag_add(diags, AKG_SKETCH_ERROR, sp, "sketch text contains a NUL byte");
        return -EINVAL;
    }
    pthread_once(&sketch_ids_once, sketch_ids_init);
    TSParser *parser = ts_parser_new();
    if (!parser)
        return -ENOMEM;
    ts_parser_set_language(parser, (const TSLanguage *)tree_sitter_sketch());
    TSTree *tree = ts_parser_parse_string(parser, NULL, text, (uint32_t)len);
    ts_parser_delete(parser);
    if (!tree)
        return -ENOMEM;
    TSNode root = ts_tree_root_node(tree);
    sketch_builder b = {.text = text, .diags = diags};
    if (ts_node_has_error(root)) {
        report_syntax_errors(&b, root);
        if (!b.err) {
            akg_sketch_span sp = node_span(root);
            b_error(&b, sp, "syntax error%s", "");
        }
        ts_tree_delete(tree);
        sketch_diag_sort(diags);
        return b.err == -ENOMEM ? -ENOMEM : -EINVAL;
    }
    uint32_t cc = ts_node_named_child_count(root);
    size_t ns = 0;
    for (uint32_t i = 0; i < cc; i++)
        if (sym_is(ts_node_named_child(root, i), S_sketch))
            ns++;
    if (ns == 0) {
        akg_sketch_span sp = {0, 0, 0, 0};
        b_error(&b, sp, "no sketch found: a sketch starts with `sketch NAME {`%s", "");
        ts_tree_delete(tree);
        return -EINVAL;
    }
    akg_sketch **list = calloc(ns, sizeof *list);
    if (!list) {
        ts_tree_delete(tree);
        return -ENOMEM;
    }
    const char *pending[64];
    size_t npending = 0;
    size_t k = 0;
    for (uint32_t i = 0; i < cc && !b.err; i++) {
        TSNode c = ts_node_named_child(root, i);
        if (sym_is(c, S_comment)) {
            if (npending < 64) {
                uint32_t s0 = ts_node_start_byte(c);
                pending[npending++] = text + s0; /* copied below, bounded by the node */
            }
            continue;
        }
        /* leading comments: copy them out of the text before conversion */
        sketch_comments lead = {0};
        char *copies[64];
        size_t nc2 = 0;
        for (size_t j = 0; j < npending; j++) {
            const char *st = pending[j];
            size_t l = strcspn(st, "\r\n");
            copies[nc2] = malloc(l + 1);
            if (!copies[nc2])
                continue;
            memcpy(copies[nc2], st, l);
            copies[nc2][l] = '\0';
            nc2++;
        }
        lead.lines = (const char **)copies;
        lead.n = nc2;
        b.s = NULL;
        b.depth = 0;
        akg_sketch *s = conv_sketch(&b, c, &lead);
        for (size_t j = 0; j < nc2; j++)
            free(copies[j]);
        npending = 0;
        if (s)
            list[k++] = s;
    }
    ts_tree_delete(tree);
    sketch_diag_sort(diags);
    if (b.err) {
        for (size_t i = 0; i < k; i++)
            akg_sketch_free(list[i]);
        if (b.s && (k == 0 || list[k - 1] != b.s))
            akg_sketch_free(b.s);
        free(list);
        return b.err;
    }
    *out = list;
    *count = k;
    return 0;
}

/* The fast path handles the well-formed sketches that tools and people
 * usually write and yields exactly the IR the tree-sitter path would (see
 * sketch_fast.c); whatever it declines, tree-sitter parses as before. */
int akg_sketch_parse_all(const char *text, size_t len, akg_sketch ***out, size_t *count,
                         akg_sketch_diag_list *diags)
{
    *out = NULL;
    *count = 0;
    akg_sketch *fast = NULL;
    if (len <= AKG_SKETCH_MAX_TEXT && sketch_parse_fast(text, len, &fast) == 0) {
        akg_sketch **list = malloc(sizeof *list);
        if (!list) {
            akg_sketch_free(fast);
            return -ENOMEM;
        }
        list[0] = fast;
        sketch_diag_sort(diags);
        *out = list;
        *count = 1;
        return 0;
    }
    return sketch_parse_ts(text, len, out, count, diags);
}

int akg_sketch_parse(const char *text, size_t len, akg_sketch **out, akg_sketch_diag_list *diags)
{
    akg_sketch **list;
    size_t n;
    *out = NULL;
    if (len <= AKG_SKETCH_MAX_TEXT && sketch_parse_fast(text, len, out) == 0) {
        sketch_diag_sort(diags);
        return 0;
    }
    int rc = sketch_parse_ts(text, len, &list, &n, diags);
    if (rc)
        return rc;
    *out = list[0];
    for (size_t i = 1; i < n; i++)
        akg_sketch_free(list[i]);
    free(list);
    return 0;
}
