/*
 * The lexer and the expression parser of the sketch parser's fast path
 * (sketch_fast.c has the design; sketch_fast.h the shared state). Tokens
 * follow the grammar's lexical rules; expressions its precedences.
 */
#include "sketch_fast.h"

/* ---- lexer -------------------------------------------------------------------------- */

static bool is_digit(int c)
{
    return c >= '0' && c <= '9';
}
static bool is_hex(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static bool is_name_start(int c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_name_char(int c)
{
    return is_name_start(c) || is_digit(c);
}

/* Length of the valid UTF-8 sequence at p (at most n bytes), or 0. Line and
 * paragraph separators and NEL count as invalid: a regex `.` may stop there. */
static size_t utf8_len(const unsigned char *p, size_t n)
{
    unsigned c = p[0];
    size_t k;
    uint32_t cp;
    if (c >= 0xC2 && c <= 0xDF)
        k = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        k = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        k = 4, cp = c & 0x07;
    else
        return 0;
    if (k > n)
        return 0;
    for (size_t i = 1; i < k; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp == 0x85 || cp == 0x2028 || cp == 0x2029)
        return 0;
    return k;
}

/* Bytes of the character at i inside a comment or string, or 0 when the
 * fast path does not take it (control characters, invalid UTF-8). */
static size_t text_char_len(const fast_parser *f, size_t i)
{
    unsigned char c = (unsigned char)f->text[i];
    if (c >= 0x20 && c < 0x7F)
        return 1;
    if (c < 0x80)
        return 0;
    return utf8_len((const unsigned char *)f->text + i, f->len - i);
}

static int keyword_of(const char *s, size_t n)
{
    static const struct {
        const char *word;
        size_t len;
        int kw;
    } words[] = {
        {"sketch", 6, KW_SKETCH},   {"symbols", 7, KW_SYMBOLS},
        {"tensors", 7, KW_TENSORS}, {"constexpr", 9, KW_CONSTEXPR},
        {"params", 6, KW_PARAMS},   {"load", 4, KW_LOAD},
        {"store", 5, KW_STORE},     {"pass", 4, KW_PASS},
        {"for", 3, KW_FOR},         {"in", 2, KW_IN},
        {"if", 2, KW_IF},           {"elif", 4, KW_ELIF},
        {"else", 4, KW_ELSE},       {"not", 3, KW_NOT},
        {"and", 3, KW_AND},         {"or", 2, KW_OR},
        {"True", 4, KW_TRUE},       {"False", 5, KW_FALSE},
        {"None", 4, KW_NULL},
    };
    if (n < 2 || n > 9)
        return KW_NONE;
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (words[i].len == n && words[i].word[0] == s[0] && memcmp(words[i].word, s, n) == 0)
            return words[i].kw;
    return KW_NONE;
}

/* Reads the next token into f->tok. */
void sketch_fast_lex(fast_parser *f)
{
    fast_lex_state *lx = &f->lx;
    const char *t = f->text;
    size_t n = f->len, i = lx->pos;
    for (;;) {
        if (i >= n)
            break;
        char c = t[i];
        if (c == ' ') {
            i++;
        } else if (c == '\n') {
            i++;
            lx->line++;
            lx->line_start = i;
            if (lx->depth == 0)
                lx->bol = true;
        } else {
            break;
        }
    }
    fast_tok *k = &f->tok;
    k->kw = KW_NONE;
    k->start = (uint32_t)i;
    k->line = lx->line;
    k->col = (uint32_t)(i - lx->line_start);
    k->bol = lx->bol;
    if (k->col > FAST_MAX_COLUMN)
        fast_decline(f);
    lx->bol = false;
    if (i >= n) {
        k->kind = T_EOF;
        k->end = (uint32_t)i;
        k->bol = true;
        lx->pos = i;
        return;
    }
    char c = t[i], d = i + 1 < n ? t[i + 1] : '\0';
    size_t j = i + 1;
    if (is_name_start((unsigned char)c)) {
        while (j < n && is_name_char((unsigned char)t[j]))
            j++;
        k->kind = T_NAME;
        k->kw = keyword_of(t + i, j - i);
    } else if (is_digit((unsigned char)c) || (c == '.' && is_digit((unsigned char)d))) {
        k->kind = T_INT;
        if (c == '0' && (d == 'x' || d == 'X') && i + 2 < n &&
            (is_hex((unsigned char)t[i + 2]) || t[i + 2] == '_')) {
            j = i + 2;
            while (j < n && (is_hex((unsigned char)t[j]) || t[j] == '_'))
                j++;
        } else {
            j = i;
            if (c != '.') {
                while (j < n && (is_digit((unsigned char)t[j]) || t[j] == '_'))
                    j++;
            }
            if (j < n && t[j] == '.') {
                k->kind = T_FLOAT;
                j++;
                while (j < n && (is_digit((unsigned char)t[j]) || t[j] == '_'))
                    j++;
            }
            if (j < n && (t[j] == 'e' || t[j] == 'E')) {
                size_t e = j + 1;
                if (e < n && (t[e] == '+' || t[e] == '-'))
                    e++;
                if (e < n && is_digit((unsigned char)t[e])) {
                    while (e < n && is_digit((unsigned char)t[e]))
                        e++;
                    k->kind = T_FLOAT;
                    j = e;
                }
            }
        }
        /* `1e`, `0x`, `1.2.3`, `12abc`: not one literal as the grammar reads it */
        if (j < n && (is_name_char((unsigned char)t[j]) || t[j] == '.'))
            fast_decline(f);
    } else if (c == '"' || c == '\'') {
        for (;;) {
            if (j >= n || t[j] == '\n')
                fast_decline(f);
            if (t[j] == c) {
                j++;
                break;
            }
            if (t[j] == '\\') {
                j++;
                if (j >= n || t[j] == '\n')
                    fast_decline(f);
            }
            size_t w = text_char_len(f, j);
            if (!w)
                fast_decline(f);
            j += w;
        }
        k->kind = T_STRING;
    } else if (c == '#') {
        if (lx->depth > 0)
            fast_decline(f); /* comments inside brackets */
        while (j < n && t[j] != '\n') {
            size_t w = text_char_len(f, j);
            if (!w)
                fast_decline(f);
            j += w;
        }
        k->kind = T_COMMENT;
    } else {
        switch (c) {
        case '(':
            k->kind = T_LPAREN, lx->depth++;
            break;
        case ')':
            k->kind = T_RPAREN, lx->depth--;
            break;
        case '[':
            k->kind = T_LBRACK, lx->depth++;
            break;
        case ']':
            k->kind = T_RBRACK, lx->depth--;
            break;
        case '{':
            k->kind = T_LBRACE;
            break;
        case '}':
            k->kind = T_RBRACE;
            break;
        case ',':
            k->kind = T_COMMA;
            break;
        case ':':
            k->kind = T_COLON;
            break;
        case ';':
            k->kind = T_SEMI;
            break;
        case '@':
            k->kind = T_AT;
            break;
        case '%':
        case '|':
        case '^':
        case '&':
        case '~':
            k->kind = T_OP;
            break;
        case '-':
            if (d == '>')
                k->kind = T_ARROW, j++;
            else if (d == '=')
                k->kind = T_AUG, j++;
            else
                k->kind = T_OP;
            break;
        case '+':
            if (d == '=')
                k->kind = T_AUG, j++;
            else
                k->kind = T_OP;
            break;
        case '*':
            if (d == '*')
                k->kind = T_OP, j++;
            else if (d == '=')
                k->kind = T_AUG, j++;
            else
                k->kind = T_OP;
            break;
        case '/':
            if (d == '/')
                k->kind = T_OP, j++;
            else if (d == '=')
                k->kind = T_AUG, j++;
            else
                k->kind = T_OP;
            break;
        case '<':
        case '>':
            k->kind = T_OP;
            if (d == c || d == '=')
                j++;
            break;
        case '=':
            if (d == '=')
                k->kind = T_OP, j++;
            else
                k->kind = T_ASSIGN;
            break;
        case '!':
            if (d != '=')
                fast_decline(f);
            k->kind = T_OP, j++;
            break;
        default:
            fast_decline(f); /* tabs, CR, form feeds, other bytes */
        }
        if (lx->depth < 0)
            fast_decline(f);
    }
    k->end = (uint32_t)j;
    lx->pos = j;
}

/* Consumes the current token. */
void sketch_fast_next(fast_parser *f)
{
    f->last_end_line = f->tok.line;
    f->last_end_col = f->tok.col + (f->tok.end - f->tok.start);
    sketch_fast_lex(f);
}

/* The token after the current one, without consuming anything. */
fast_tok sketch_fast_peek2(fast_parser *f)
{
    fast_lex_state saved = f->lx;
    fast_tok cur = f->tok;
    sketch_fast_lex(f);
    fast_tok after = f->tok;
    f->lx = saved;
    f->tok = cur;
    return after;
}

static bool tok_is_op(const fast_parser *f, const char *op)
{
    size_t n = strlen(op);
    return f->tok.kind == T_OP && f->tok.end - f->tok.start == n &&
           memcmp(f->text + f->tok.start, op, n) == 0;
}

/* A token that ends the logical line: the next line's first token, the end
 * of the text, or a comment (which runs to the end of its line). */
bool sketch_fast_at_line_end(const fast_parser *f)
{
    return f->tok.bol || f->tok.kind == T_COMMENT;
}

void sketch_fast_expect(fast_parser *f, int kind)
{
    if (f->tok.kind != kind || f->tok.bol)
        fast_decline(f);
    sketch_fast_next(f);
}

/* A name that is not a keyword. */
fast_tok sketch_fast_expect_name(fast_parser *f)
{
    if (f->tok.kind != T_NAME || f->tok.kw != KW_NONE || f->tok.bol)
        fast_decline(f);
    fast_tok t = f->tok;
    sketch_fast_next(f);
    return t;
}

/* ---- expressions ------------------------------------------------------------------------- */

fast_expr sketch_fast_parse_expr(fast_parser *f, int min_prec);

akg_sketch_expr *sketch_fast_new_expr(fast_parser *f, akg_sketch_expr_kind kind,
                                      akg_sketch_span span)
{
    akg_sketch_expr *e = ir_alloc(f, sizeof *e);
    e->kind = kind;
    e->span = span;
    return e;
}

int sketch_fast_depth_check(fast_parser *f, int depth)
{
    if (depth > FAST_MAX_EXPR_DEPTH)
        fast_decline(f);
    return depth;
}

akg_sketch_span sketch_fast_span_from(const akg_sketch_span *a, uint32_t end_line, uint32_t end_col)
{
    akg_sketch_span sp = {a->line, a->col, end_line, end_col};
    return sp;
}

/* Grows a scratch array of pointers (the old one is abandoned in the scratch arena). */
void *sketch_fast_grow_scratch(fast_parser *f, void *items, size_t n, size_t *cap, size_t elem)
{
    if (n < *cap)
        return items;
    size_t cap2 = *cap ? *cap * 2 : 8;
    void *p = scratch_alloc(f, cap2 * elem);
    if (n)
        memcpy(p, items, n * elem);
    *cap = cap2;
    return p;
}

void *sketch_fast_copy_to_ir(fast_parser *f, const void *items, size_t n, size_t elem)
{
    if (!n)
        return NULL;
    void *p = ir_alloc(f, n * elem);
    memcpy(p, items, n * elem);
    return p;
}

/* Arguments of a call (the current token is '('), the builder's way:
 * positional items and keyword arguments apart. Returns the deepest. */
static int parse_arguments(fast_parser *f, akg_sketch_expr *call)
{
    sketch_fast_expect(f, T_LPAREN);
    akg_sketch_expr *pos_buf[16], **pos = pos_buf;
    akg_sketch_expr *kwv_buf[8], **kwv = kwv_buf;
    const char *kwn_buf[8], **kwn = kwn_buf;
    akg_sketch_span kws_buf[8], *kws = kws_buf;
    size_t np = 0, cap_p = 16, nk = 0, cap_k = 8;
    int depth = 0;
    while (f->tok.kind != T_RPAREN) {
        if (f->tok.kind == T_NAME && f->tok.kw == KW_NONE &&
            sketch_fast_peek2(f).kind == T_ASSIGN) {
            fast_tok name = sketch_fast_expect_name(f);
            sketch_fast_next(f); /* = */
            fast_expr v = sketch_fast_parse_expr(f, 0);
            if (nk == cap_k) {
                size_t c2 = cap_k * 2;
                akg_sketch_expr **v2 = scratch_alloc(f, c2 * sizeof *v2);
                const char **n2 = scratch_alloc(f, c2 * sizeof *n2);
                akg_sketch_span *s2 = scratch_alloc(f, c2 * sizeof *s2);
                memcpy(v2, kwv, nk * sizeof *v2);
                memcpy(n2, kwn, nk * sizeof *n2);
                memcpy(s2, kws, nk * sizeof *s2);
                kwv = v2, kwn = n2, kws = s2, cap_k = c2;
            }
            kwn[nk] = tok_text(f, &name);
            kws[nk] = tok_span(&name);
            kwv[nk++] = v.e;
            if (v.depth > depth)
                depth = v.depth;
        } else {
            fast_expr v = sketch_fast_parse_expr(f, 0);
            if (np == cap_p) {
                akg_sketch_expr **p2 = scratch_alloc(f, cap_p * 2 * sizeof *p2);
                memcpy(p2, pos, np * sizeof *p2);
                pos = p2, cap_p *= 2;
            }
            pos[np++] = v.e;
            if (v.depth > depth)
                depth = v.depth;
        }
        if (f->tok.kind == T_COMMA) {
            sketch_fast_next(f);
            continue;
        }
        if (f->tok.kind != T_RPAREN)
            fast_decline(f);
    }
    sketch_fast_next(f); /* ) */
    call->items = sketch_fast_copy_to_ir(f, pos, np, sizeof *pos);
    call->n_items = np;
    call->kw_names = sketch_fast_copy_to_ir(f, kwn, nk, sizeof *kwn);
    call->kw_spans = sketch_fast_copy_to_ir(f, kws, nk, sizeof *kws);
    call->kw_values = sketch_fast_copy_to_ir(f, kwv, nk, sizeof *kwv);
    call->n_kw = nk;
    return depth;
}

/* Comma-separated items up to `close` (a trailing comma allowed); subscript
 * indices may be slices. */
static int parse_items(fast_parser *f, akg_sketch_expr *e, int close, bool slices, bool allow_empty)
{
    akg_sketch_expr *buf[16], **items = buf;
    size_t n = 0, cap = 16;
    int depth = 0;
    if (f->tok.kind == close && !allow_empty)
        fast_decline(f);
    while (f->tok.kind != close) {
        fast_expr v;
        if (slices && f->tok.kind == T_COLON) {
            v.e = NULL;
            v.depth = 0;
        } else {
            v = sketch_fast_parse_expr(f, 0);
        }
        if (slices && f->tok.kind == T_COLON) {
            /* start? ':' stop? (':' step?)? */
            akg_sketch_span sp = v.e ? v.span : tok_span(&f->tok);
            int d = v.depth;
            akg_sketch_expr *start = v.e, *stop = NULL, *step = NULL;
            sketch_fast_next(f);
            uint32_t el = f->last_end_line, ec = f->last_end_col;
            if (f->tok.kind != T_COLON && f->tok.kind != T_COMMA && f->tok.kind != close) {
                fast_expr s2 = sketch_fast_parse_expr(f, 0);
                stop = s2.e;
                if (s2.depth > d)
                    d = s2.depth;
                el = s2.span.end_line, ec = s2.span.end_col;
            }
            if (f->tok.kind == T_COLON) {
                sketch_fast_next(f);
                el = f->last_end_line, ec = f->last_end_col;
                if (f->tok.kind != T_COMMA && f->tok.kind != close) {
                    fast_expr s3 = sketch_fast_parse_expr(f, 0);
                    step = s3.e;
                    if (s3.depth > d)
                        d = s3.depth;
                    el = s3.span.end_line, ec = s3.span.end_col;
                }
            }
            akg_sketch_expr *sl =
                sketch_fast_new_expr(f, AKG_SKETCH_EXPR_SLICE, sketch_fast_span_from(&sp, el, ec));
            sl->a = start, sl->b = stop, sl->c = step;
            v.e = sl;
            v.depth = sketch_fast_depth_check(f, d + 1);
        }
        if (n == cap) {
            akg_sketch_expr **p2 = scratch_alloc(f, cap * 2 * sizeof *p2);
            memcpy(p2, items, n * sizeof *p2);
            items = p2, cap *= 2;
        }
        items[n++] = v.e;
        if (v.depth > depth)
            depth = v.depth;
        if (f->tok.kind == T_COMMA) {
            sketch_fast_next(f);
            continue;
        }
        if (f->tok.kind != close)
            fast_decline(f);
    }
    sketch_fast_next(f); /* the closing bracket */
    e->items = sketch_fast_copy_to_ir(f, items, n, sizeof *items);
    e->n_items = n;
    return depth;
}

static fast_expr parse_primary(fast_parser *f)
{
    fast_tok t = f->tok;
    fast_expr r = {NULL, tok_span(&t), 1};
    if (t.bol)
        fast_decline(f); /* an operand missing at the end of the line */
    switch (t.kind) {
    case T_NAME:
        if (t.kw == KW_TRUE || t.kw == KW_FALSE) {
            sketch_fast_next(f);
            r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_BOOL, r.span);
            r.e->ival = t.kw == KW_TRUE;
            r.e->text = t.kw == KW_TRUE ? "True" : "False";
            return r;
        }
        if (t.kw == KW_NULL) {
            sketch_fast_next(f);
            r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_NONE, r.span);
            r.e->text = "None";
            return r;
        }
        if (t.kw != KW_NONE)
            fast_decline(f);
        sketch_fast_next(f);
        if (f->tok.kind == T_LPAREN && !f->tok.bol) {
            r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_CALL, r.span);
            r.e->text = tok_text(f, &t);
            int d = parse_arguments(f, r.e);
            r.span = sketch_fast_span_from(&r.span, f->last_end_line, f->last_end_col);
            r.e->span = r.span;
            r.depth = sketch_fast_depth_check(f, d + 1);
            return r;
        }
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_NAME, r.span);
        r.e->text = tok_text(f, &t);
        return r;
    case T_INT: {
        sketch_fast_next(f);
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_INT, r.span);
        r.e->text = tok_text(f, &t);
        bool overflow;
        r.e->ival = sketch_parse_int(r.e->text, &overflow);
        if (overflow)
            fast_decline(f); /* the builder reports it */
        return r;
    }
    case T_FLOAT:
        sketch_fast_next(f);
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_FLOAT, r.span);
        r.e->text = tok_text(f, &t);
        r.e->fval = sketch_parse_float(r.e->text);
        return r;
    case T_STRING:
        sketch_fast_next(f);
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_STRING, r.span);
        r.e->text = sketch_unquote(&f->s->arena, f->text + t.start, t.end - t.start);
        if (!r.e->text)
            fast_decline(f);
        return r;
    case T_LPAREN: {
        sketch_fast_next(f);
        fast_expr in = sketch_fast_parse_expr(f, 0);
        sketch_fast_expect(f, T_RPAREN);
        in.span = sketch_fast_span_from(&r.span, f->last_end_line, f->last_end_col);
        in.depth = sketch_fast_depth_check(f, in.depth + 1);
        return in;
    }
    case T_LBRACK: {
        sketch_fast_next(f);
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_LIST, r.span);
        int d = parse_items(f, r.e, T_RBRACK, false, true);
        r.span = sketch_fast_span_from(&r.span, f->last_end_line, f->last_end_col);
        r.e->span = r.span;
        r.depth = sketch_fast_depth_check(f, d + 1);
        return r;
    }
    default:
        fast_decline(f);
    }
}

/* Binary operators: precedence (as in grammar.js) and associativity. */
static int binary_prec(const fast_parser *f, bool *right)
{
    *right = false;
    const fast_tok *t = &f->tok;
    if (t->bol)
        return -1;
    if (t->kind == T_NAME)
        return t->kw == KW_OR ? 1 : t->kw == KW_AND ? 2 : -1;
    if (t->kind != T_OP)
        return -1;
    const char *s = f->text + t->start;
    size_t n = t->end - t->start;
    if (n == 2 && s[0] == '*' && s[1] == '*') {
        *right = true;
        return 12;
    }
    if (n == 2 && s[0] == '/' && s[1] == '/')
        return 10;
    if (n == 2 && (s[0] == '<' || s[0] == '>') && s[1] == s[0])
        return 8;
    if (n == 2)
        return 4; /* <= >= == != */
    switch (s[0]) {
    case '<':
    case '>':
        return 4;
    case '|':
        return 5;
    case '^':
        return 6;
    case '&':
        return 7;
    case '+':
    case '-':
        return 9;
    case '*':
    case '/':
    case '%':
        return 10;
    default:
        return -1; /* ~ is only a prefix */
    }
}

/* Unary operators and postfix subscripts. */
static fast_expr parse_unary(fast_parser *f)
{
    if (++f->rec > FAST_MAX_EXPR_DEPTH)
        fast_decline(f);
    fast_tok t = f->tok;
    fast_expr r;
    if (!t.bol &&
        ((t.kind == T_OP && (tok_is_op(f, "-") || tok_is_op(f, "+") || tok_is_op(f, "~"))) ||
         (t.kind == T_NAME && t.kw == KW_NOT))) {
        sketch_fast_next(f);
        /* the operand takes every operator that binds tighter than the prefix */
        fast_expr arg = sketch_fast_parse_expr(f, t.kw == KW_NOT ? 4 : 12);
        akg_sketch_span sp = sketch_fast_span_from(&(akg_sketch_span){t.line, t.col, 0, 0},
                                                   arg.span.end_line, arg.span.end_col);
        r.e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_UNARY, sp);
        r.e->text = t.kw == KW_NOT ? "not" : tok_text(f, &t);
        r.e->a = arg.e;
        r.span = sp;
        r.depth = sketch_fast_depth_check(f, arg.depth + 1);
        f->rec--;
        return r;
    }
    r = parse_primary(f);
    while (f->tok.kind == T_LBRACK && !f->tok.bol) {
        sketch_fast_next(f);
        akg_sketch_expr *sub = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_SUBSCRIPT, r.span);
        sub->a = r.e;
        int d = parse_items(f, sub, T_RBRACK, true, false);
        if (r.depth > d)
            d = r.depth;
        r.span = sketch_fast_span_from(&r.span, f->last_end_line, f->last_end_col);
        sub->span = r.span;
        r.e = sub;
        r.depth = sketch_fast_depth_check(f, d + 1);
    }
    f->rec--;
    return r;
}

/* Precedence climbing over the operators that bind at least min_prec. */
fast_expr sketch_fast_parse_expr(fast_parser *f, int min_prec)
{
    fast_expr lhs = parse_unary(f);
    for (;;) {
        bool right;
        int p = binary_prec(f, &right);
        if (p < 0 || p < min_prec)
            break;
        fast_tok op = f->tok;
        sketch_fast_next(f);
        if (++f->rec > FAST_MAX_EXPR_DEPTH)
            fast_decline(f);
        fast_expr rhs = sketch_fast_parse_expr(f, right ? p : p + 1);
        f->rec--;
        akg_sketch_span sp = sketch_fast_span_from(&lhs.span, rhs.span.end_line, rhs.span.end_col);
        akg_sketch_expr *e = sketch_fast_new_expr(f, AKG_SKETCH_EXPR_BINARY, sp);
        e->text = tok_text(f, &op);
        e->a = lhs.e;
        e->b = rhs.e;
        lhs.e = e;
        lhs.span = sp;
        lhs.depth = sketch_fast_depth_check(f, (lhs.depth > rhs.depth ? lhs.depth : rhs.depth) + 1);
    }
    return lhs;
}
