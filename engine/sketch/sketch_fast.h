/*
 * Internal to the fast path of the sketch parser (sketch_fast.c, which says
 * what it is and how it is tested): the tokens, the parser state, and the
 * lexer and expression parser of sketch_fast_expr.c that the statement parser
 * of sketch_fast.c calls. Every function here either succeeds or declines
 * (longjmp to the parse's decline point): none returns an error.
 */
#ifndef AKG_SKETCH_FAST_H
#define AKG_SKETCH_FAST_H

#include "sketch_internal.h"

#include <errno.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

/* The tree-sitter builder refuses expressions nested deeper than 200; stay
 * well below so that every accepted sketch is one it accepts. */
#define FAST_MAX_EXPR_DEPTH 190
/* The scanner opens at most 63 blocks. */
#define FAST_MAX_BLOCK_DEPTH 48
/* The builder keeps the first 64 comments above a sketch and 64 if/elif/else
 * alternatives; beyond those the fast path declines. */
#define FAST_MAX_LEADING 64
#define FAST_MAX_ALTERNATIVES 60
#define FAST_MAX_COLUMN 60000

/* ---- tokens ------------------------------------------------------------------- */

enum {
    T_EOF,
    T_NAME,
    T_INT,
    T_FLOAT,
    T_STRING,
    T_COMMENT,
    T_LPAREN,
    T_RPAREN,
    T_LBRACK,
    T_RBRACK,
    T_LBRACE,
    T_RBRACE,
    T_COMMA,
    T_COLON,
    T_SEMI,
    T_AT,
    T_ARROW,
    T_ASSIGN, /* = */
    T_AUG,    /* += -= *= /= */
    T_OP,     /* every other operator */
};

enum {
    KW_NONE,
    KW_SKETCH,
    KW_SYMBOLS,
    KW_TENSORS,
    KW_CONSTEXPR,
    KW_PARAMS,
    KW_LOAD,
    KW_STORE,
    KW_PASS,
    KW_FOR,
    KW_IN,
    KW_IF,
    KW_ELIF,
    KW_ELSE,
    KW_NOT,
    KW_AND,
    KW_OR,
    KW_TRUE,
    KW_FALSE,
    KW_NULL,
    KW_BIND, /* not a keyword of the lexer: `bind` opens a section only before ':' (see
                sketch_fast.c) */
};

typedef struct {
    int kind;
    int kw;              /* T_NAME: which keyword, KW_NONE for a name */
    uint32_t start, end; /* bytes */
    uint32_t line, col;  /* start; a token never spans lines */
    bool bol;            /* first token of its line outside brackets (always for T_EOF) */
} fast_tok;

typedef struct {
    size_t pos, line_start;
    uint32_t line;
    int depth; /* open ( and [ */
    bool bol;
} fast_lex_state;

/* ---- parser state ----------------------------------------------------------------- */

typedef struct {
    const char *text;
    size_t len;
    fast_lex_state lx;
    fast_tok tok;
    uint32_t last_end_line, last_end_col; /* end of the last token consumed */
    akg_sketch *s;
    sketch_arena scratch; /* temporaries, released when the parse ends */
    int rec;              /* expression recursion depth */
    int blocks;           /* open blocks */
    jmp_buf decline;
} fast_parser;

/* Gives up: tree-sitter parses the text instead. */

typedef struct {
    akg_sketch_expr *e;
    akg_sketch_span span; /* of the grammar's node, parentheses included */
    int depth;            /* the builder's conversion depth for this node */
} fast_expr;

static inline _Noreturn void fast_decline(fast_parser *f)
{
    longjmp(f->decline, 1);
}

static inline void *ir_alloc(fast_parser *f, size_t size)
{
    void *p = sketch_arena_alloc(&f->s->arena, size);
    if (!p)
        fast_decline(f);
    return p;
}

static inline void *scratch_alloc(fast_parser *f, size_t size)
{
    void *p = sketch_arena_alloc(&f->scratch, size);
    if (!p)
        fast_decline(f);
    return p;
}

static inline const char *tok_text(fast_parser *f, const fast_tok *t)
{
    char *p = sketch_arena_strndup(&f->s->arena, f->text + t->start, t->end - t->start);
    if (!p)
        fast_decline(f);
    return p;
}

static inline akg_sketch_span tok_span(const fast_tok *t)
{
    akg_sketch_span sp = {t->line, t->col, t->line, t->col + (t->end - t->start)};
    return sp;
}

/* ---- sketch_fast_expr.c ---------------------------------------------------------------- */

void sketch_fast_lex(fast_parser *f);
void sketch_fast_next(fast_parser *f);
fast_tok sketch_fast_peek2(fast_parser *f);
bool sketch_fast_at_line_end(const fast_parser *f);
void sketch_fast_expect(fast_parser *f, int kind);
fast_tok sketch_fast_expect_name(fast_parser *f);
fast_expr sketch_fast_parse_expr(fast_parser *f, int min_prec);
akg_sketch_expr *sketch_fast_new_expr(fast_parser *f, akg_sketch_expr_kind kind,
                                      akg_sketch_span span);
int sketch_fast_depth_check(fast_parser *f, int depth);
akg_sketch_span sketch_fast_span_from(const akg_sketch_span *a, uint32_t end_line,
                                      uint32_t end_col);
void *sketch_fast_grow_scratch(fast_parser *f, void *items, size_t n, size_t *cap, size_t elem);
void *sketch_fast_copy_to_ir(fast_parser *f, const void *items, size_t n, size_t elem);

#endif /* AKG_SKETCH_FAST_H */
