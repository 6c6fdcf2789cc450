/*
 * Internal layout of the sketch IR, shared by the parser, checker, printer
 * and the walk API. Nothing outside engine/sketch/ includes this file.
 *
 * Every node, string and array of a sketch lives in the sketch's arena and is
 * released at once by akg_sketch_free(); the arena has a hard cap.
 */
#ifndef AKG_SKETCH_INTERNAL_H
#define AKG_SKETCH_INTERNAL_H

#include "akg/sketch.h"

#include <stdarg.h>

#define SKETCH_ARENA_BLOCK (64u * 1024u)
#define SKETCH_ARENA_CAP (256u * 1024u * 1024u)

typedef struct sketch_arena_block {
    struct sketch_arena_block *next;
    size_t used, size;
    max_align_t data[];
} sketch_arena_block;

typedef struct {
    sketch_arena_block *head;
    size_t total;
} sketch_arena;

void *sketch_arena_alloc(sketch_arena *arena,
                         size_t size); /* zeroed, NULL when out of memory or cap */
char *sketch_arena_strndup(sketch_arena *arena, const char *s, size_t n);
void sketch_arena_release(sketch_arena *arena);

struct akg_sketch_expr {
    akg_sketch_expr_kind kind;
    akg_sketch_span span;
    const char *text; /* name, unquoted string, callee, operator, float literal */
    int64_t ival;
    double fval;
    akg_sketch_expr *a, *b, *c; /* UNARY: a; BINARY: a op b; SUBSCRIPT: base a; SLICE: a:b:c */
    akg_sketch_expr **items;
    size_t n_items;
    const char **kw_names;
    akg_sketch_span *kw_spans;
    akg_sketch_expr **kw_values;
    size_t n_kw;
};

typedef struct {
    const char **args; /* string contents, or the digits of an integer literal */
    akg_sketch_span *arg_spans;
    bool *arg_int; /* per argument: written as an integer literal; NULL: none was */
    size_t n_args;
    const char *name; /* decorator name, normally llm_hint */
    akg_sketch_span span, name_span;
} sketch_hint;

typedef struct {
    akg_sketch_stmt **items;
    size_t n;
} sketch_block;

typedef struct {
    const char **lines; /* comment texts including '#' */
    size_t n;
} sketch_comments;

struct akg_sketch_stmt {
    akg_sketch_stmt_kind kind;
    akg_sketch_span span;
    sketch_hint *hints;
    size_t n_hints;
    sketch_comments leading;
    const char *trailing; /* same-line comment, or NULL */
    bool blank_before;    /* a blank line separated it from the previous statement */

    /* FOR */
    const char *var;
    akg_sketch_span var_span;
    akg_sketch_expr *iter; /* the range(...) call as written */
    akg_sketch_expr *start, *stop, *step;

    /* IF */
    akg_sketch_expr *cond;
    bool else_is_elif; /* print the else branch (a single IF) as elif */
    sketch_block body[2];
    sketch_comments tail;         /* comments after the last statement of body[0] */
    sketch_comments else_leading; /* comments at the if's indentation before its elif/else */
    sketch_comments else_tail;    /* comments after the last statement of body[1] */

    /* ASSIGN, ALLOC (value is the alloc call), CALL (value is the call) */
    const char **targets;
    akg_sketch_span *target_spans;
    size_t n_targets;
    const char *op;
    akg_sketch_expr *value;

    /* ALLOC, derived from the call */
    akg_sketch_expr *alloc_shape; /* LIST, or whatever was written */
    akg_dtype alloc_dtype;
    const char **alloc_hints;
    akg_sketch_span *alloc_hint_spans;
    size_t n_alloc_hints;

    /* LOAD / STORE */
    akg_sketch_expr *src, *dst;
    const char **opt_names;
    akg_sketch_span *opt_spans;
    akg_sketch_expr **opt_values;
    size_t n_opts;
};

typedef struct {
    const char *name;
    akg_sketch_span span;
    const char *dtype_text;
    akg_sketch_span dtype_span;
    akg_dtype dtype;
    bool has_shape;
    akg_sketch_expr **dims;
    size_t rank;
    akg_sketch_span shape_span;
    bool stored, loaded;
} sketch_tensor;

typedef struct {
    const char *name;
    akg_sketch_span span;
    akg_sketch_expr *value;
    bool tunable;
    size_t choice;
} sketch_const;

typedef struct {
    const char *name;
    akg_sketch_span span;
    const char *dtype_text; /* NULL when not given */
    akg_sketch_span dtype_span;
    akg_dtype dtype;
    akg_sketch_expr *def;
} sketch_param;

typedef struct {
    const char *name;
    akg_sketch_span span;
} sketch_symbol;

/* One `NAME = SOURCE` item of a bind: section. */
typedef struct {
    const char *name;
    akg_sketch_span span;      /* the name */
    akg_sketch_span item_span; /* NAME = SOURCE */
    akg_sketch_expr *value;    /* the source */
    size_t
        section; /* which bind: section, 0-based in source order: the printer keeps the grouping */
} sketch_bind;

/* A value the checker inferred (tile or scalar local). */
typedef struct {
    const char *name;
    akg_dtype dtype;
    size_t rank;
    bool tile;
} sketch_value;

struct akg_sketch {
    sketch_arena arena;
    const char *name;
    akg_sketch_span span, name_span;
    sketch_comments leading; /* comments above `sketch` */
    sketch_comments header;  /* comments among the header sections */
    sketch_symbol *symbols;
    size_t n_symbols;
    sketch_tensor *tensors;
    size_t n_tensors;
    sketch_const *consts;
    size_t n_consts;
    sketch_param *params;
    size_t n_params;
    sketch_bind *binds; /* in source order across all bind: sections */
    size_t n_binds;
    size_t n_bind_sections;
    sketch_block body;
    sketch_comments tail;
    sketch_value *values; /* filled by the checker, malloc'ed */
    size_t n_values, cap_values;
};

/* Span helpers. */
akg_sketch_span sketch_span_join(akg_sketch_span a, akg_sketch_span b);

/* Structural equality of expressions (NULL equals NULL). */
bool sketch_expr_equal(const akg_sketch_expr *a, const akg_sketch_expr *b);

/* Literal and derived-field helpers shared by the tree-sitter conversion
 * (sketch_parse.c) and the fast path (sketch_fast.c), so both build the same
 * values. sketch_unquote takes a quoted literal of n bytes (quotes
 * included) and returns its contents in the arena, or NULL when out of
 * memory. sketch_fill_alloc derives the alloc_* fields of an ALLOC from its
 * call (0 or -ENOMEM); sketch_fill_range the start/stop/step of a FOR. */
char *sketch_unquote(sketch_arena *arena, const char *quoted, size_t n);
int64_t sketch_parse_int(const char *text, bool *overflow);
double sketch_parse_float(const char *text);
int sketch_fill_alloc(sketch_arena *arena, akg_sketch_stmt *st);
void sketch_fill_range(akg_sketch_stmt *st);

/* The two parsers behind akg_sketch_parse_all(). sketch_parse_fast() is a
 * hand-written parser for the common, well-formed subset of the language:
 * it returns 0 and a sketch owned by the caller, or declines (returns 1,
 * nothing stored, nothing reported) on anything it does not handle exactly
 * as the grammar does. sketch_parse_ts() is the tree-sitter parser and owns
 * every syntax diagnostic; it has akg_sketch_parse_all()'s contract. */
int sketch_parse_fast(const char *text, size_t len, akg_sketch **out);
int sketch_parse_ts(const char *text, size_t len, akg_sketch ***out, size_t *count,
                    akg_sketch_diag_list *diags);

/* Whether two sketches are the same IR field by field: spans, comments,
 * hints, blank-line flags and every derived field included (unlike
 * akg_sketch_equal). On a difference, writes where into why (may be NULL). */
bool sketch_ir_identical(const akg_sketch *a, const akg_sketch *b, char *why, size_t why_cap);

/* The checks of the bind: sections (sketch_check_bind.c), run by
 * akg_sketch_check() after the body. store_spans[i] is the first store to
 * tensor i in the body (line UINT32_MAX: none; the array may be NULL when
 * there are no tensors). Appends diagnostics; returns the number of errors,
 * or -ENOMEM. */
int sketch_check_bindings(const akg_sketch *s, const akg_sketch_span *store_spans,
                          akg_sketch_diag_list *diags);

/* Levenshtein distance of two names, for "did you mean" suggestions (99 when
 * either is longer than 32 bytes). */
size_t sketch_edit_distance(const char *a, const char *b);

/* Bounded growable string used by the printer (cap: 4x AKG_SKETCH_MAX_TEXT). */
typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} sketch_buf;
void sketch_buf_puts(sketch_buf *b, const char *s);
void sketch_buf_putn(sketch_buf *b, const char *s, size_t n);
void sketch_buf_printf(sketch_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void sketch_buf_expr(sketch_buf *b, const akg_sketch_expr *e);

/* The tree-sitter language generated from sketch-grammar/. */
struct TSLanguage;
const struct TSLanguage *tree_sitter_sketch(void);

#endif /* AKG_SKETCH_INTERNAL_H */
