/*
 * The fast path of the sketch parser: a hand-written lexer and recursive
 * descent parser that builds the sketch IR straight from the text.
 *
 * Why: the tree-sitter parse plus the conversion of its concrete tree cost
 * about 0.8 ms for a 200-line sketch, three quarters of it inside
 * libtree-sitter. The sketches that matter for speed (the Designer's, the
 * formatter's canonical output, what an LLM writes) are well formed and use a
 * small part of the language's freedom, and this parser reads them in a
 * fraction of that time.
 *
 * The contract: sketch_parse_fast() either returns exactly the IR that the
 * tree-sitter path (sketch_parse.c) builds from the same text -- the same
 * nodes, spans (0-based lines, byte columns), strings, comment placement
 * (leading, trailing, tail, header, else_leading, blank_before, ...) and
 * derived fields -- or it declines and reports nothing. akg_sketch_parse_all()
 * then runs tree-sitter, which owns every diagnostic. The grammar in
 * sketch-grammar/ stays the definition of the language; this file is an
 * optimisation of it, and declining is always correct.
 *
 * It declines on: any syntax error; more than one sketch; tabs, carriage
 * returns, form feeds, other control characters, and non-ASCII bytes outside
 * comments and strings (invalid UTF-8 anywhere); keywords used as names;
 * comments inside brackets; a statement continued over a line break outside
 * brackets; a line indented differently from its block (tree-sitter accepts
 * some of those); header sections (`bind:` included) after the first
 * statement; a `}` that is not the first token of its line or text after it
 * other than comments; and every case where the tree-sitter path would
 * report a semantic error (decorator arguments that are neither string
 * literals nor plain integers, a decorator without a statement, integer
 * literals beyond 64 bits, expressions nested deeper than the builder allows,
 * blocks nested deeper than the scanner allows).
 *
 * Comments are placed the way the tree-sitter conversion places them, which
 * follows from where the grammar's layout tokens fall: the line break that
 * ends a line is read after the full-line comments that follow it, so those
 * comments belong to whatever that line break ends (a section, a decorator,
 * a statement's block, or the block of a for/if/elif/else header that opens
 * there). The pending-comment bookkeeping below mirrors sketch_parse.c's
 * (pending_see_rows, finish_block, the if/elif/else alternatives) step by
 * step, in the same order.
 *
 * How it is tested: tests/sketch/test_sketch_fast.c parses every grammar
 * corpus case, fixture, invalid case, Designer sketch and the printed
 * canonical form of each with both parsers and requires, wherever the fast
 * path accepts, that tree-sitter accepts too and that sketch_ir_identical()
 * holds; it also requires the fast path to accept the Designer's sketches
 * and the canonical forms. The fuzzer (tests/sketch/fuzz_sketch.c) checks
 * the same property on random inputs.
 */
#include "sketch_fast.h"

typedef struct {
    sketch_hint *hints;
    size_t n_hints, cap_hints;
    const char **comments;
    uint32_t *cols;
    size_t n_comments, cap_comments;
    bool blank;
    int64_t last_row;
} fast_pending;

typedef struct {
    akg_sketch_stmt **items;
    size_t n, cap;
} fast_vec;

/* ---- pending comments and hints (mirrors sketch_parse.c) ------------------------------------- */

#define FAST_PENDING_INIT                                                                          \
    {                                                                                              \
        .last_row = -1                                                                             \
    }

static void pending_see_rows(fast_pending *p, uint32_t first, uint32_t last)
{
    if (p->last_row >= 0 && (int64_t)first > p->last_row + 1)
        p->blank = true;
    if ((int64_t)last > p->last_row)
        p->last_row = last;
}

static void pending_push_comment(fast_parser *f, fast_pending *p, const char *text, uint32_t col)
{
    if (p->n_comments == p->cap_comments) {
        size_t cap = p->cap_comments ? p->cap_comments * 2 : 4;
        const char **c2 = scratch_alloc(f, cap * sizeof *c2);
        uint32_t *k2 = scratch_alloc(f, cap * sizeof *k2);
        if (p->n_comments) {
            memcpy(c2, p->comments, p->n_comments * sizeof *c2);
            memcpy(k2, p->cols, p->n_comments * sizeof *k2);
        }
        p->comments = c2, p->cols = k2, p->cap_comments = cap;
    }
    p->cols[p->n_comments] = col;
    p->comments[p->n_comments++] = text;
}

static void pending_move_comments(fast_parser *f, fast_pending *from_p, size_t from,
                                  fast_pending *to)
{
    if (from >= from_p->n_comments)
        return;
    for (size_t i = from; i < from_p->n_comments; i++)
        pending_push_comment(f, to, from_p->comments[i], from_p->cols[i]);
    from_p->n_comments = from;
    if (from_p->blank)
        to->blank = true;
    from_p->blank = false;
}

static void pending_take_comments(fast_parser *f, fast_pending *p, sketch_comments *out)
{
    out->n = 0;
    out->lines = NULL;
    if (!p->n_comments)
        return;
    out->lines = sketch_fast_copy_to_ir(f, p->comments, p->n_comments, sizeof *out->lines);
    out->n = p->n_comments;
    p->n_comments = 0;
}

static void header_comment(fast_parser *f, const char *text)
{
    akg_sketch *s = f->s;
    const char **all = ir_alloc(f, (s->header.n + 1) * sizeof *all);
    if (s->header.n)
        memcpy(all, s->header.lines, s->header.n * sizeof *all);
    all[s->header.n] = text;
    s->header.lines = all;
    s->header.n++;
}

static void vec_push(fast_parser *f, fast_vec *v, akg_sketch_stmt *st)
{
    v->items = sketch_fast_grow_scratch(f, v->items, v->n, &v->cap, sizeof *v->items);
    v->items[v->n++] = st;
}

/* Ends a block the way the builder's finish_block() does. */
static void finish_block(fast_parser *f, fast_vec *v, fast_pending *p, sketch_block *out,
                         sketch_comments *tail, fast_pending *outer)
{
    if (outer && v->n) {
        uint32_t body_col = v->items[0]->span.col;
        for (size_t i = 0; i < p->n_comments; i++)
            if (p->cols[i] < body_col) {
                pending_move_comments(f, p, i, outer);
                break;
            }
    }
    if (p->n_hints)
        fast_decline(f); /* a decorator without a statement: the builder reports it */
    out->items = sketch_fast_copy_to_ir(f, v->items, v->n, sizeof *out->items);
    out->n = v->n;
    pending_take_comments(f, p, tail);
}

/* ---- lines and comments ---------------------------------------------------------------------- */

/* Who owns the comments after a line: what the line break that ends the
 * line ends (see the header comment). */
typedef enum {
    OWN_CONTAINER, /* a simple statement, or `sketch NAME {`: the block or sketch */
    OWN_DECORATOR, /* the decorator */
    OWN_OPENER,    /* a for/if/elif/else header: the block it opens */
    OWN_SECTION,   /* a header section */
} fast_owner;

typedef struct {
    fast_pending *p;
    fast_vec v;
    akg_sketch_stmt *last;
    uint32_t indent;
    bool sketch_level, in_header;
} fast_level;

static const char *comment_text(fast_parser *f)
{
    return tok_text(f, &f->tok);
}

/* Consumes the comments up to the next line of code and files them as the
 * builder does for the given owner. */
static void take_comments(fast_parser *f, fast_owner owner, fast_level *lv, fast_pending *p,
                          uint32_t section_row)
{
    while (f->tok.kind == T_COMMENT) {
        uint32_t row = f->tok.line, col = f->tok.col;
        switch (owner) {
        case OWN_CONTAINER:
            if (lv->sketch_level && lv->in_header && row == f->s->span.line) {
                header_comment(f, comment_text(f));
                break;
            }
            if (lv->last && !lv->last->trailing && row == lv->last->span.end_line &&
                lv->last->kind != AKG_SKETCH_STMT_FOR && lv->last->kind != AKG_SKETCH_STMT_IF) {
                lv->last->trailing = comment_text(f);
            } else {
                pending_see_rows(lv->p, row, row);
                pending_push_comment(f, lv->p, comment_text(f), col);
            }
            if (lv->sketch_level && lv->in_header)
                lv->p->last_row = -1;
            break;
        case OWN_DECORATOR:
            pending_see_rows(p, row, row);
            pending_push_comment(f, p, comment_text(f), col);
            break;
        case OWN_OPENER:
            pending_push_comment(f, p, comment_text(f), col);
            break;
        case OWN_SECTION:
            if (row > section_row)
                pending_push_comment(f, p, comment_text(f), col);
            else
                header_comment(f, comment_text(f));
            break;
        }
        sketch_fast_next(f);
    }
}

/* The end of a logical line: an optional trailing comment follows. */
static void expect_line_end(fast_parser *f)
{
    if (!sketch_fast_at_line_end(f))
        fast_decline(f);
}

/* ---- header sections ------------------------------------------------------------------------ */

#define APPEND(f, arr, n, item)                                                                    \
    do {                                                                                           \
        void *grown_ = ir_alloc((f), ((n) + 1) * sizeof *(arr));                                   \
        if (n)                                                                                     \
            memcpy(grown_, (arr), (n) * sizeof *(arr));                                            \
        (arr) = grown_;                                                                            \
        (arr)[(n)++] = (item);                                                                     \
    } while (0)

/* After an item of a section: true when another item follows. Items are
 * separated by ',' (symbols, bind), ';' (tensors) or either (constexpr,
 * params); a trailing ',' or ';' is allowed, except ',' after tensors. */
static bool section_separator(fast_parser *f, int kw)
{
    if (sketch_fast_at_line_end(f))
        return false;
    if (f->tok.kind == T_COMMA && kw != KW_TENSORS) {
        sketch_fast_next(f);
        return !sketch_fast_at_line_end(f);
    }
    if (f->tok.kind == T_SEMI) {
        sketch_fast_next(f);
        if (sketch_fast_at_line_end(f))
            return false;
        if (kw == KW_SYMBOLS || kw == KW_BIND)
            fast_decline(f);
        return true;
    }
    fast_decline(f);
}

/* kw: the section's keyword (KW_BIND for `bind`, a name to the lexer). */
static void parse_section(fast_parser *f, int kw)
{
    akg_sketch *s = f->s;
    sketch_fast_next(f);
    sketch_fast_expect(f, T_COLON);
    if (sketch_fast_at_line_end(f))
        fast_decline(f);
    do {
        fast_tok name = sketch_fast_expect_name(f);
        if (kw == KW_BIND) {
            sketch_bind bd;
            memset(&bd, 0, sizeof bd);
            bd.name = tok_text(f, &name);
            bd.span = tok_span(&name);
            sketch_fast_expect(f, T_ASSIGN);
            fast_expr v = sketch_fast_parse_expr(f, 0);
            bd.value = v.e;
            bd.item_span = sketch_fast_span_from(&bd.span, v.span.end_line, v.span.end_col);
            bd.section = s->n_bind_sections;
            APPEND(f, s->binds, s->n_binds, bd);
        } else if (kw == KW_SYMBOLS) {
            sketch_symbol sy = {tok_text(f, &name), tok_span(&name)};
            APPEND(f, s->symbols, s->n_symbols, sy);
        } else if (kw == KW_TENSORS) {
            sketch_tensor tn;
            memset(&tn, 0, sizeof tn);
            tn.name = tok_text(f, &name);
            tn.span = tok_span(&name);
            if (f->tok.kind == T_LBRACK && !f->tok.bol) {
                fast_tok open = f->tok;
                sketch_fast_next(f);
                akg_sketch_expr *dims[AKG_SKETCH_MAX_RANK + 1];
                size_t nd = 0;
                if (f->tok.kind != T_RBRACK) {
                    for (;;) {
                        fast_expr d = sketch_fast_parse_expr(f, 0);
                        if (nd == AKG_SKETCH_MAX_RANK + 1)
                            fast_decline(f); /* the checker's business; keep it simple */
                        dims[nd++] = d.e;
                        if (f->tok.kind == T_COMMA) {
                            sketch_fast_next(f);
                            if (f->tok.kind == T_RBRACK)
                                break;
                            continue;
                        }
                        break;
                    }
                }
                sketch_fast_expect(f, T_RBRACK);
                tn.has_shape = true;
                tn.shape_span = sketch_fast_span_from(&(akg_sketch_span){open.line, open.col, 0, 0},
                                                      f->last_end_line, f->last_end_col);
                tn.dims = sketch_fast_copy_to_ir(f, dims, nd, sizeof *dims);
                tn.rank = nd;
            }
            sketch_fast_expect(f, T_COLON);
            fast_tok dt = sketch_fast_expect_name(f);
            tn.dtype_text = tok_text(f, &dt);
            tn.dtype_span = tok_span(&dt);
            tn.dtype = akg_dtype_from_name(tn.dtype_text);
            APPEND(f, s->tensors, s->n_tensors, tn);
        } else if (kw == KW_CONSTEXPR) {
            sketch_const k;
            memset(&k, 0, sizeof k);
            k.name = tok_text(f, &name);
            k.span = tok_span(&name);
            if (f->tok.kind == T_ASSIGN && !f->tok.bol) {
                sketch_fast_next(f);
                k.value = sketch_fast_parse_expr(f, 0).e;
            }
            k.tunable = k.value && k.value->kind == AKG_SKETCH_EXPR_CALL &&
                        strcmp(k.value->text, "tune") == 0;
            APPEND(f, s->consts, s->n_consts, k);
        } else {
            sketch_param pm;
            memset(&pm, 0, sizeof pm);
            pm.name = tok_text(f, &name);
            pm.span = tok_span(&name);
            if (f->tok.kind == T_COLON && !f->tok.bol) {
                sketch_fast_next(f);
                fast_tok dt = sketch_fast_expect_name(f);
                pm.dtype_text = tok_text(f, &dt);
                pm.dtype_span = tok_span(&dt);
                pm.dtype = akg_dtype_from_name(pm.dtype_text);
            }
            if (f->tok.kind == T_ASSIGN && !f->tok.bol) {
                sketch_fast_next(f);
                pm.def = sketch_fast_parse_expr(f, 0).e;
            }
            APPEND(f, s->params, s->n_params, pm);
        }
    } while (section_separator(f, kw));
    expect_line_end(f);
    if (kw == KW_BIND)
        s->n_bind_sections++;
}

/* `bind` starts a section where a section may start and ':' follows it on
 * the line, as the grammar's scanner decides; elsewhere it is a name. */
static bool at_bind_section(fast_parser *f)
{
    if (f->tok.kind != T_NAME || f->tok.kw != KW_NONE || f->tok.end - f->tok.start != 4 ||
        memcmp(f->text + f->tok.start, "bind", 4) != 0)
        return false;
    fast_tok next = sketch_fast_peek2(f);
    return next.kind == T_COLON && !next.bol;
}

/* ---- statements --------------------------------------------------------------------------- */

static void parse_items_of_block(fast_parser *f, fast_level *lv);

static akg_sketch_stmt *new_stmt(fast_parser *f, fast_pending *p, const fast_tok *first)
{
    akg_sketch_stmt *st = ir_alloc(f, sizeof *st);
    st->span = tok_span(first);
    if (p->n_hints) {
        st->hints = sketch_fast_copy_to_ir(f, p->hints, p->n_hints, sizeof *st->hints);
        st->n_hints = p->n_hints;
        p->n_hints = 0;
    }
    pending_take_comments(f, p, &st->leading);
    st->blank_before = p->blank;
    p->blank = false;
    return st;
}

/* `for`/`if`/`elif`/`else` header ends with ':' and a line break; the
 * comments after it open the block. Parses the block into v with the inner
 * pending comments and returns after its last line. */
static void parse_opened_block(fast_parser *f, uint32_t header_col, fast_pending *inner,
                               fast_vec *v)
{
    sketch_fast_expect(f, T_COLON);
    expect_line_end(f);
    take_comments(f, OWN_OPENER, NULL, inner, 0);
    if (f->tok.kind == T_EOF || f->tok.kind == T_RBRACE || f->tok.col <= header_col)
        fast_decline(f);
    if (++f->blocks > FAST_MAX_BLOCK_DEPTH)
        fast_decline(f);
    fast_level lv = {.p = inner, .indent = f->tok.col};
    parse_items_of_block(f, &lv);
    f->blocks--;
    *v = lv.v;
}

static bool at_alternative(const fast_parser *f, uint32_t if_col)
{
    return f->tok.kind == T_NAME && (f->tok.kw == KW_ELIF || f->tok.kw == KW_ELSE) &&
           f->tok.col == if_col;
}

static void parse_if(fast_parser *f, akg_sketch_stmt *st, fast_pending *p)
{
    uint32_t if_col = f->tok.col;
    sketch_fast_next(f); /* if */
    st->kind = AKG_SKETCH_STMT_IF;
    st->cond = sketch_fast_parse_expr(f, 0).e;
    fast_pending before_alt = FAST_PENDING_INIT, inner = FAST_PENDING_INIT;
    fast_vec v = {0};
    parse_opened_block(f, if_col, &inner, &v);
    st->span.end_line = f->last_end_line, st->span.end_col = f->last_end_col;
    bool alt = at_alternative(f, if_col);
    finish_block(f, &v, &inner, &st->body[0], &st->tail, alt ? &before_alt : p);
    akg_sketch_stmt *cur = st;
    int n_alts = 0;
    while (alt) {
        if (++n_alts > FAST_MAX_ALTERNATIVES)
            fast_decline(f);
        pending_take_comments(f, &before_alt, &cur->else_leading);
        fast_tok kwt = f->tok;
        if (kwt.kw == KW_ELIF) {
            /* conv_statement(elif, last ? p : &before_alt): no hints or comments
             * are pending in either; the blank flag comes from the one used */
            bool blank_alt = before_alt.blank, blank_p = p->blank;
            before_alt.blank = false;
            p->blank = false;
            akg_sketch_stmt *el = ir_alloc(f, sizeof *el);
            el->span = tok_span(&kwt);
            el->kind = AKG_SKETCH_STMT_IF;
            sketch_fast_next(f);
            el->cond = sketch_fast_parse_expr(f, 0).e;
            fast_pending inner2 = FAST_PENDING_INIT;
            fast_vec v2 = {0};
            parse_opened_block(f, if_col, &inner2, &v2);
            el->span.end_line = f->last_end_line, el->span.end_col = f->last_end_col;
            alt = at_alternative(f, if_col);
            el->blank_before = alt ? blank_alt : blank_p;
            finish_block(f, &v2, &inner2, &el->body[0], &el->tail, alt ? &before_alt : p);
            cur->body[1].items = ir_alloc(f, sizeof *cur->body[1].items);
            cur->body[1].items[0] = el;
            cur->body[1].n = 1;
            cur->else_is_elif = true;
            cur = el;
        } else {
            sketch_fast_next(f); /* else */
            fast_pending inner2 = FAST_PENDING_INIT;
            fast_vec v2 = {0};
            parse_opened_block(f, if_col, &inner2, &v2);
            finish_block(f, &v2, &inner2, &cur->body[1], &cur->else_tail, p);
            alt = false;
        }
    }
    st->span.end_line = f->last_end_line, st->span.end_col = f->last_end_col;
}

static void parse_for(fast_parser *f, akg_sketch_stmt *st, fast_pending *p)
{
    uint32_t for_col = f->tok.col;
    sketch_fast_next(f); /* for */
    st->kind = AKG_SKETCH_STMT_FOR;
    fast_tok var = sketch_fast_expect_name(f);
    st->var = tok_text(f, &var);
    st->var_span = tok_span(&var);
    if (f->tok.kind != T_NAME || f->tok.kw != KW_IN || f->tok.bol)
        fast_decline(f);
    sketch_fast_next(f);
    st->iter = sketch_fast_parse_expr(f, 0).e;
    sketch_fill_range(st);
    fast_pending inner = FAST_PENDING_INIT;
    fast_vec v = {0};
    parse_opened_block(f, for_col, &inner, &v);
    st->span.end_line = f->last_end_line, st->span.end_col = f->last_end_col;
    finish_block(f, &v, &inner, &st->body[0], &st->tail, p);
}

static void parse_move(fast_parser *f, akg_sketch_stmt *st)
{
    st->kind = f->tok.kw == KW_LOAD ? AKG_SKETCH_STMT_LOAD : AKG_SKETCH_STMT_STORE;
    sketch_fast_next(f);
    sketch_fast_expect(f, T_LPAREN);
    st->src = sketch_fast_parse_expr(f, 0).e;
    sketch_fast_expect(f, T_ARROW);
    st->dst = sketch_fast_parse_expr(f, 0).e;
    const char *names[16];
    akg_sketch_span spans[16];
    akg_sketch_expr *values[16];
    size_t n = 0;
    while (f->tok.kind == T_COMMA) {
        sketch_fast_next(f);
        if (f->tok.kind == T_RPAREN)
            break;
        fast_tok name = sketch_fast_expect_name(f);
        sketch_fast_expect(f, T_ASSIGN);
        if (n == 16)
            fast_decline(f);
        names[n] = tok_text(f, &name);
        spans[n] = tok_span(&name);
        values[n++] = sketch_fast_parse_expr(f, 0).e;
    }
    sketch_fast_expect(f, T_RPAREN);
    st->opt_names = sketch_fast_copy_to_ir(f, names, n, sizeof *names);
    st->opt_spans = sketch_fast_copy_to_ir(f, spans, n, sizeof *spans);
    st->opt_values = sketch_fast_copy_to_ir(f, values, n, sizeof *values);
    st->n_opts = n;
}

static void parse_assignment(fast_parser *f, akg_sketch_stmt *st)
{
    st->kind = AKG_SKETCH_STMT_ASSIGN;
    const char *names[16];
    akg_sketch_span spans[16];
    size_t n = 0;
    for (;;) {
        fast_tok t = sketch_fast_expect_name(f);
        if (n == 16)
            fast_decline(f);
        names[n] = tok_text(f, &t);
        spans[n++] = tok_span(&t);
        if (f->tok.kind != T_COMMA)
            break;
        sketch_fast_next(f);
    }
    if ((f->tok.kind != T_ASSIGN && f->tok.kind != T_AUG) || f->tok.bol)
        fast_decline(f);
    st->targets = sketch_fast_copy_to_ir(f, names, n, sizeof *names);
    st->target_spans = sketch_fast_copy_to_ir(f, spans, n, sizeof *spans);
    st->n_targets = n;
    st->op = tok_text(f, &f->tok);
    sketch_fast_next(f);
    fast_expr v = sketch_fast_parse_expr(f, 0);
    if (f->tok.kind == T_COMMA && !f->tok.bol) {
        akg_sketch_expr *items[32];
        size_t k = 0;
        int d = v.depth;
        items[k++] = v.e;
        akg_sketch_span sp = v.span;
        while (f->tok.kind == T_COMMA) {
            sketch_fast_next(f);
            fast_expr w =
                sketch_fast_parse_expr(f, 0); /* no trailing comma in an expression list */
            if (k == 32)
                fast_decline(f);
            items[k++] = w.e;
            if (w.depth > d)
                d = w.depth;
            sp.end_line = w.span.end_line, sp.end_col = w.span.end_col;
        }
        akg_sketch_expr *tuple = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_TUPLE, sp);
        tuple->items = sketch_fast_copy_to_ir(f, items, k, sizeof *items);
        tuple->n_items = k;
        sketch_fast_depth_check(f, d + 1);
        v.e = tuple;
        v.span = sp;
    }
    st->value = v.e;
    st->span.end_line = v.span.end_line, st->span.end_col = v.span.end_col;
    if (st->value->kind == AKG_SKETCH_EXPR_CALL && strcmp(st->value->text, "alloc") == 0 &&
        st->n_targets == 1 && strcmp(st->op, "=") == 0) {
        st->kind = AKG_SKETCH_STMT_ALLOC;
        if (sketch_fill_alloc(&f->s->arena, st))
            fast_decline(f);
    }
}

static bool is_assignment_op(int kind)
{
    return kind == T_COMMA || kind == T_ASSIGN || kind == T_AUG;
}

/* A statement that ends at the end of its line. */
static void parse_simple(fast_parser *f, akg_sketch_stmt *st)
{
    fast_tok t = f->tok;
    f->tok.bol = false; /* the statement's own first token */
    if (t.kind == T_NAME && t.kw == KW_PASS) {
        st->kind = AKG_SKETCH_STMT_PASS;
        sketch_fast_next(f);
    } else if (t.kind == T_NAME && (t.kw == KW_LOAD || t.kw == KW_STORE)) {
        parse_move(f, st);
        st->span.end_line = f->last_end_line, st->span.end_col = f->last_end_col;
    } else if (t.kind == T_NAME && t.kw == KW_NONE && is_assignment_op(sketch_fast_peek2(f).kind)) {
        parse_assignment(f, st);
    } else {
        fast_expr v = sketch_fast_parse_expr(f, 0);
        st->kind = AKG_SKETCH_STMT_CALL;
        st->value = v.e;
        st->span = v.span;
    }
    if (f->tok.kind == T_SEMI && !f->tok.bol)
        sketch_fast_next(f);
    expect_line_end(f);
}

static void parse_decorator(fast_parser *f, fast_pending *p)
{
    fast_tok at = f->tok;
    sketch_fast_next(f);
    fast_tok name = sketch_fast_expect_name(f);
    sketch_fast_expect(f, T_LPAREN);
    const char *args[16];
    akg_sketch_span spans[16];
    bool ints[16];
    bool any_int = false;
    size_t n = 0;
    while (f->tok.kind != T_RPAREN) {
        /* string literals and plain integers (a count, a vector width): anything
         * else is the builder's error to report */
        size_t len = f->tok.end - f->tok.start;
        bool digits = f->tok.kind == T_INT;
        for (size_t k = 0; digits && k < len; k++) {
            char ch = f->text[f->tok.start + k];
            digits = ch >= '0' && ch <= '9';
        }
        if ((f->tok.kind != T_STRING && !digits) || n == 16)
            fast_decline(f);
        spans[n] = tok_span(&f->tok);
        ints[n] = digits;
        any_int |= digits;
        args[n] = digits ? tok_text(f, &f->tok)
                         : sketch_unquote(&f->s->arena, f->text + f->tok.start, len);
        if (!args[n++])
            fast_decline(f);
        sketch_fast_next(f);
        if (f->tok.kind == T_COMMA) {
            sketch_fast_next(f);
            continue;
        }
        if (f->tok.kind != T_RPAREN)
            fast_decline(f);
    }
    sketch_fast_next(f); /* ) */
    expect_line_end(f);
    p->hints = sketch_fast_grow_scratch(f, p->hints, p->n_hints, &p->cap_hints, sizeof *p->hints);
    sketch_hint *h = &p->hints[p->n_hints++];
    memset(h, 0, sizeof *h);
    h->name = tok_text(f, &name);
    h->name_span = tok_span(&name);
    h->span = sketch_fast_span_from(&(akg_sketch_span){at.line, at.col, 0, 0}, f->last_end_line,
                                    f->last_end_col);
    h->args = sketch_fast_copy_to_ir(f, args, n, sizeof *args);
    h->arg_spans = sketch_fast_copy_to_ir(f, spans, n, sizeof *spans);
    h->arg_int = any_int ? sketch_fast_copy_to_ir(f, ints, n, sizeof *ints) : NULL;
    h->n_args = n;
    /* the comments after the decorator are its children; the caller sees the
     * decorator's rows after them, as the builder does */
    take_comments(f, OWN_DECORATOR, NULL, p, 0);
    pending_see_rows(p, h->span.line, h->span.end_line);
}

/* The items of a block (or the sketch body) at lv->indent, up to the first
 * line of code indented less, or the closing brace. */
static void parse_items_of_block(fast_parser *f, fast_level *lv)
{
    fast_pending *p = lv->p;
    for (;;) {
        fast_tok t = f->tok;
        if (t.kind == T_EOF)
            fast_decline(f);
        if (t.kind == T_RBRACE || t.col < lv->indent)
            return;
        if (t.col > lv->indent || !t.bol)
            fast_decline(f);
        bool bind = lv->sketch_level && at_bind_section(f);
        if (bind || (t.kind == T_NAME && (t.kw == KW_SYMBOLS || t.kw == KW_TENSORS ||
                                          t.kw == KW_CONSTEXPR || t.kw == KW_PARAMS))) {
            if (!lv->sketch_level || !lv->in_header)
                fast_decline(f);
            uint32_t row = t.line;
            f->tok.bol = false;
            parse_section(f, bind ? KW_BIND : t.kw);
            if (p->n_comments) {
                sketch_comments hc;
                pending_take_comments(f, p, &hc);
                for (size_t i = 0; i < hc.n; i++)
                    header_comment(f, hc.lines[i]);
            }
            take_comments(f, OWN_SECTION, lv, p, row);
            continue;
        }
        if (t.kind == T_AT) {
            lv->in_header = false;
            f->tok.bol = false;
            parse_decorator(f, p);
            continue;
        }
        if (t.kind == T_NAME &&
            (t.kw == KW_ELIF || t.kw == KW_ELSE || t.kw == KW_SKETCH || t.kw == KW_IN))
            fast_decline(f);
        lv->in_header = false;
        pending_see_rows(p, t.line, t.line);
        akg_sketch_stmt *st = new_stmt(f, p, &t);
        f->tok.bol = false;
        if (t.kind == T_NAME && t.kw == KW_FOR) {
            parse_for(f, st, p);
        } else if (t.kind == T_NAME && t.kw == KW_IF) {
            parse_if(f, st, p);
        } else {
            parse_simple(f, st);
        }
        pending_see_rows(p, st->span.line, st->span.end_line);
        vec_push(f, &lv->v, st);
        lv->last = st;
        if (st->kind != AKG_SKETCH_STMT_FOR && st->kind != AKG_SKETCH_STMT_IF)
            take_comments(f, OWN_CONTAINER, lv, p, 0);
    }
}

/* ---- the sketch ------------------------------------------------------------------------------ */

static void parse_sketch(fast_parser *f)
{
    const char *lead[FAST_MAX_LEADING];
    fast_tok lead_tok[FAST_MAX_LEADING];
    size_t n_lead = 0;
    sketch_fast_lex(f);
    while (f->tok.kind == T_COMMENT) {
        if (n_lead < FAST_MAX_LEADING)
            lead_tok[n_lead++] = f->tok;
        sketch_fast_next(f);
    }
    if (f->tok.kind != T_NAME || f->tok.kw != KW_SKETCH)
        fast_decline(f);
    fast_tok kw = f->tok;
    f->tok.bol = false;
    sketch_fast_next(f);
    fast_tok name = sketch_fast_expect_name(f);
    sketch_fast_expect(f, T_LBRACE);
    akg_sketch *s = f->s;
    s->span = tok_span(&kw);
    s->name = tok_text(f, &name);
    s->name_span = tok_span(&name);
    for (size_t i = 0; i < n_lead; i++)
        lead[i] = tok_text(f, &lead_tok[i]);
    s->leading.lines = sketch_fast_copy_to_ir(f, lead, n_lead, sizeof *lead);
    s->leading.n = n_lead;
    expect_line_end(f);

    fast_pending p = FAST_PENDING_INIT;
    fast_level lv = {.p = &p, .sketch_level = true, .in_header = true};
    take_comments(f, OWN_CONTAINER, &lv, &p, 0);
    if (f->tok.kind == T_EOF)
        fast_decline(f);
    if (f->tok.kind != T_RBRACE) {
        lv.indent = f->tok.col;
        parse_items_of_block(f, &lv);
    }
    if (f->tok.kind != T_RBRACE)
        fast_decline(f); /* a line indented less than the body */
    finish_block(f, &lv.v, &p, &s->body, &s->tail, NULL);
    s->span.end_line = f->tok.line;
    s->span.end_col = f->tok.col + 1;
    sketch_fast_next(f);
    /* only comments may follow (more sketches go to tree-sitter) */
    while (f->tok.kind == T_COMMENT)
        sketch_fast_next(f);
    if (f->tok.kind != T_EOF)
        fast_decline(f);
}

int sketch_parse_fast(const char *text, size_t len, akg_sketch **out)
{
    *out = NULL;
    if (!text || len > AKG_SKETCH_MAX_TEXT)
        return 1;
    fast_parser *f = calloc(1, sizeof *f);
    if (!f)
        return 1;
    f->text = text;
    f->len = len;
    f->lx.bol = true;
    sketch_arena arena = {0};
    akg_sketch *s = sketch_arena_alloc(&arena, sizeof *s);
    if (!s) {
        free(f);
        return 1;
    }
    s->arena = arena;
    f->s = s;
    int declined = setjmp(f->decline);
    if (!declined)
        parse_sketch(f);
    sketch_arena_release(&f->scratch);
    if (declined) {
        akg_sketch_free(f->s);
        free(f);
        return 1;
    }
    *out = f->s;
    free(f);
    return 0;
}
