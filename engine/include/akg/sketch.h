/*
 * akg/sketch.h: the Unified Sketch language (parser, IR, checker, printer).
 *
 * A sketch is text in the language described in sketch-grammar/README.md.
 * akg_sketch_parse() turns it into an immutable IR tree; akg_sketch_check()
 * validates names, shapes, dtypes, operations and hints; akg_sketch_print()
 * writes the canonical text, and parse(print(ir)) is equal to ir.
 *
 * Ownership: every akg_sketch returned by akg_sketch_parse() is owned by the
 * caller and freed with akg_sketch_free(). Statement, expression and string
 * pointers obtained through the walk API below are borrowed from the sketch:
 * they stay valid until the sketch is freed and must not be freed themselves.
 *
 * Positions are 0-based lines and 0-based byte columns in the parsed text;
 * printed diagnostics add 1 to both (file:line:col, like a compiler).
 */
#ifndef AKG_SKETCH_H
#define AKG_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Hard limits: text beyond them is rejected with a diagnostic, not a crash. */
#define AKG_SKETCH_MAX_TEXT (4u * 1024u * 1024u) /* bytes of sketch text */
#define AKG_SKETCH_MAX_DIAGS 200u                /* diagnostics kept per list */
#define AKG_SKETCH_MAX_RANK 8u                   /* tensor and tile rank */

/* ---- diagnostics --------------------------------------------------------- */

typedef enum {
    AKG_SKETCH_ERROR = 1,
    AKG_SKETCH_WARNING = 2,
    AKG_SKETCH_NOTE = 3,
} akg_sketch_severity;

typedef struct {
    uint32_t line, col;         /* start, 0-based */
    uint32_t end_line, end_col; /* end (exclusive), 0-based */
} akg_sketch_span;

typedef struct {
    akg_sketch_span span;
    akg_sketch_severity severity;
    const char *message; /* owned by the list */
} akg_sketch_diag;

typedef struct akg_sketch_diag_list akg_sketch_diag_list;

/* Returns a new empty list owned by the caller (free with
 * akg_sketch_diag_list_free), or NULL when out of memory. */
akg_sketch_diag_list *akg_sketch_diag_list_new(void);
void akg_sketch_diag_list_free(akg_sketch_diag_list *list);
void akg_sketch_diag_list_clear(akg_sketch_diag_list *list);
size_t akg_sketch_diag_count(const akg_sketch_diag_list *list);
/* Diagnostics are kept sorted by position once a parse or check returns. */
const akg_sketch_diag *akg_sketch_diag_at(const akg_sketch_diag_list *list, size_t i);
size_t akg_sketch_diag_error_count(const akg_sketch_diag_list *list);
/* Appends a diagnostic (printf-style message). Past AKG_SKETCH_MAX_DIAGS the
 * diagnostic is counted but dropped. Returns 0, or -ENOMEM. */
int akg_sketch_diag_add(akg_sketch_diag_list *list, akg_sketch_severity severity,
                        akg_sketch_span span, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* Formats "file:line:col: error: message" (1-based) into a new string owned
 * by the caller (free()), or NULL when out of memory. */
char *akg_sketch_diag_format(const char *file, const akg_sketch_diag *diag);

/* ---- IR types ------------------------------------------------------------- */

typedef struct akg_sketch akg_sketch;
typedef struct akg_sketch_stmt akg_sketch_stmt;
typedef struct akg_sketch_expr akg_sketch_expr;

typedef enum {
    AKG_DTYPE_UNKNOWN = 0,
    AKG_DTYPE_BOOL,
    AKG_DTYPE_I8,
    AKG_DTYPE_I16,
    AKG_DTYPE_I32,
    AKG_DTYPE_I64,
    AKG_DTYPE_U8,
    AKG_DTYPE_F16,
    AKG_DTYPE_BF16,
    AKG_DTYPE_F32,
    AKG_DTYPE_F64,
} akg_dtype;

/* "f16", "bf16", ...; "?" for AKG_DTYPE_UNKNOWN. */
const char *akg_dtype_name(akg_dtype dtype);
/* Parses a dtype name ("f32", also "float32", "int32", ...). */
akg_dtype akg_dtype_from_name(const char *name);

/* ---- parse, check, print, compare ---------------------------------------- */

/* Parses text (len bytes, need not be NUL-terminated). On success stores a
 * new sketch owned by the caller in *out and returns 0. On syntax errors
 * returns -EINVAL, stores NULL and appends diagnostics to diags (may be
 * NULL). Returns -ENOMEM when out of memory, -E2BIG when len exceeds
 * AKG_SKETCH_MAX_TEXT. A text holding several sketches yields the first;
 * use akg_sketch_parse_all() for the others. */
int akg_sketch_parse(const char *text, size_t len, akg_sketch **out, akg_sketch_diag_list *diags);

/* Like akg_sketch_parse() for every sketch in the text. On success *out is a
 * new array of *count sketches owned by the caller: free each with
 * akg_sketch_free() and the array with free(). */
int akg_sketch_parse_all(const char *text, size_t len, akg_sketch ***out, size_t *count,
                         akg_sketch_diag_list *diags);

void akg_sketch_free(akg_sketch *sketch);

/* Checks the sketch and appends diagnostics to diags. Returns the number of
 * errors found (0: the sketch is well formed; warnings do not count), or
 * -ENOMEM. The checker also records inferred tile shapes and dtypes, read
 * back with akg_sketch_value_*(). */
int akg_sketch_check(akg_sketch *sketch, akg_sketch_diag_list *diags);

/* Writes the canonical text of the sketch into a new NUL-terminated string
 * owned by the caller (free()). Returns 0 or -ENOMEM. */
int akg_sketch_print(const akg_sketch *sketch, char **out_text);

/* Structural equality (positions, comments, how bind: items are grouped into
 * sections, and whether a hint's count is written 8 or "8" are ignored). */
bool akg_sketch_equal(const akg_sketch *a, const akg_sketch *b);

/* ---- declarations ---------------------------------------------------------- */

const char *akg_sketch_name(const akg_sketch *sketch);

size_t akg_sketch_symbol_count(const akg_sketch *sketch);
const char *akg_sketch_symbol_name(const akg_sketch *sketch, size_t i);

size_t akg_sketch_tensor_count(const akg_sketch *sketch);
const char *akg_sketch_tensor_name(const akg_sketch *sketch, size_t i);
akg_dtype akg_sketch_tensor_dtype(const akg_sketch *sketch, size_t i);
size_t akg_sketch_tensor_rank(const akg_sketch *sketch, size_t i);
const akg_sketch_expr *akg_sketch_tensor_dim(const akg_sketch *sketch, size_t i, size_t d);
/* Index of the tensor with this name, or -1. */
long akg_sketch_tensor_find(const akg_sketch *sketch, const char *name);
/* Whether the body stores into / loads from tensor i (valid after akg_sketch_check). */
bool akg_sketch_tensor_is_stored(const akg_sketch *sketch, size_t i);
bool akg_sketch_tensor_is_loaded(const akg_sketch *sketch, size_t i);

/* constexpr: NAME [= value]. A tunable is `NAME = tune(c0, c1, ...)`. */
size_t akg_sketch_const_count(const akg_sketch *sketch);
const char *akg_sketch_const_name(const akg_sketch *sketch, size_t i);
/* The declared value expression (the tune(...) call for a tunable), or NULL
 * when the constant is declared without a value. */
const akg_sketch_expr *akg_sketch_const_value(const akg_sketch *sketch, size_t i);
bool akg_sketch_const_is_tunable(const akg_sketch *sketch, size_t i);
size_t akg_sketch_const_candidate_count(const akg_sketch *sketch, size_t i);
const akg_sketch_expr *akg_sketch_const_candidate(const akg_sketch *sketch, size_t i, size_t c);
/* The chosen candidate (0 after parsing). Choosing changes the values the
 * checker and akg_sketch_expr_eval() use; it is not part of the text. */
size_t akg_sketch_const_choice(const akg_sketch *sketch, size_t i);
int akg_sketch_const_choose(akg_sketch *sketch, size_t i, size_t candidate);
/* The constant's current integer value (the chosen candidate for a
 * tunable). Returns 0 and stores it, or -EINVAL when it is not a constant
 * integer (e.g. depends on a symbol). */
int akg_sketch_const_int(const akg_sketch *sketch, size_t i, int64_t *out);

/* params: NAME [: dtype] [= default] (runtime scalars). */
size_t akg_sketch_param_count(const akg_sketch *sketch);
const char *akg_sketch_param_name(const akg_sketch *sketch, size_t i);
akg_dtype akg_sketch_param_dtype(const akg_sketch *sketch, size_t i); /* UNKNOWN if not given */
const akg_sketch_expr *akg_sketch_param_default(const akg_sketch *sketch, size_t i); /* or NULL */

/* bind: NAME = SOURCE, where each tensor, symbol, param and constexpr comes
 * from in the task (sketch-grammar/README.md, "Binding a sketch to its
 * task"). Items are numbered in source order across all bind: sections. */
size_t akg_sketch_bind_count(const akg_sketch *sketch);
const char *akg_sketch_bind_name(const akg_sketch *sketch, size_t i);
/* The SOURCE expression as written: a call such as input("x", [B, S, H]),
 * output(0), weight("ln.weight"), attr("conv.stride", 0), init("dim"), or an
 * integer expression of symbols and constexprs. */
const akg_sketch_expr *akg_sketch_bind_value(const akg_sketch *sketch, size_t i);
/* The whole item, from NAME to the end of SOURCE. */
akg_sketch_span akg_sketch_bind_span(const akg_sketch *sketch, size_t i);
/* Whether the sketch has at least one bind item (only a bound sketch can be
 * lowered for a task). */
bool akg_sketch_has_binding(const akg_sketch *sketch);

/* ---- statements ------------------------------------------------------------ */

typedef enum {
    AKG_SKETCH_STMT_FOR = 1, /* for VAR in range(start, stop, step): body */
    AKG_SKETCH_STMT_IF,      /* if cond: then-body [else: else-body] */
    AKG_SKETCH_STMT_ALLOC,   /* NAME = alloc([dims], dtype=?, llm_hint=[...]) */
    AKG_SKETCH_STMT_LOAD,    /* load(source -> target, options...) */
    AKG_SKETCH_STMT_STORE,   /* store(source -> target, options...) */
    AKG_SKETCH_STMT_ASSIGN,  /* targets op value, e.g. `t = exp(t)`, `a, b = 1, 2` */
    AKG_SKETCH_STMT_CALL,    /* a call evaluated for its effect: `gemm(a, b, dst=c)` */
    AKG_SKETCH_STMT_PASS,
} akg_sketch_stmt_kind;

size_t akg_sketch_body_count(const akg_sketch *sketch);
const akg_sketch_stmt *akg_sketch_body_at(const akg_sketch *sketch, size_t i);

akg_sketch_stmt_kind akg_sketch_stmt_get_kind(const akg_sketch_stmt *st);
akg_sketch_span akg_sketch_stmt_span(const akg_sketch_stmt *st);

/* @llm_hint(...) decorators written above the statement, in order. An
 * argument is the string's contents, or the digits of a plain integer
 * (`@llm_hint("vectorize", "simd", 8)` gives "vectorize", "simd", "8"). */
size_t akg_sketch_stmt_hint_count(const akg_sketch_stmt *st);
size_t akg_sketch_stmt_hint_arg_count(const akg_sketch_stmt *st, size_t h);
const char *akg_sketch_stmt_hint_arg(const akg_sketch_stmt *st, size_t h, size_t a);
/* The second argument of the first hint whose first argument is kind
 * ("parallel", ...): "" when the hint has one argument, NULL when absent. */
const char *akg_sketch_stmt_hint_value(const akg_sketch_stmt *st, const char *kind);

/* FOR */
const char *akg_sketch_for_var(const akg_sketch_stmt *st);
const akg_sketch_expr *akg_sketch_for_start(const akg_sketch_stmt *st); /* NULL: 0 */
const akg_sketch_expr *akg_sketch_for_stop(const akg_sketch_stmt *st);
const akg_sketch_expr *akg_sketch_for_step(const akg_sketch_stmt *st); /* NULL: 1 */

/* Body of FOR, then-body of IF (which 0) and else-body of IF (which 1). */
size_t akg_sketch_stmt_body_count(const akg_sketch_stmt *st, int which);
const akg_sketch_stmt *akg_sketch_stmt_body_at(const akg_sketch_stmt *st, int which, size_t i);

/* IF */
const akg_sketch_expr *akg_sketch_if_cond(const akg_sketch_stmt *st);

/* ALLOC */
const char *akg_sketch_alloc_name(const akg_sketch_stmt *st);
size_t akg_sketch_alloc_rank(const akg_sketch_stmt *st);
const akg_sketch_expr *akg_sketch_alloc_dim(const akg_sketch_stmt *st, size_t d);
akg_dtype akg_sketch_alloc_dtype(const akg_sketch_stmt *st); /* dtype= or UNKNOWN */
size_t akg_sketch_alloc_hint_count(const akg_sketch_stmt *st);
const char *akg_sketch_alloc_hint(const akg_sketch_stmt *st, size_t i);

typedef enum {
    AKG_SKETCH_TIER_DEFAULT = 0, /* no tier given: the coder decides */
    AKG_SKETCH_TIER_FASTEST,     /* registers */
    AKG_SKETCH_TIER_FAST,        /* shared memory / L1 / unified buffer */
    AKG_SKETCH_TIER_MEDIUM,      /* L2 */
    AKG_SKETCH_TIER_SLOW,        /* global memory */
} akg_sketch_tier;
akg_sketch_tier akg_sketch_alloc_tier(const akg_sketch_stmt *st);
bool akg_sketch_alloc_has_hint(const akg_sketch_stmt *st, const char *hint);

/* LOAD / STORE: source and target expressions (a subscript such as
 * A[i:i+BM, :], a tensor or tile name, or for STORE any tile expression),
 * plus keyword options (mask=..., other=..., llm_hint=[...]). */
const akg_sketch_expr *akg_sketch_move_source(const akg_sketch_stmt *st);
const akg_sketch_expr *akg_sketch_move_target(const akg_sketch_stmt *st);
const akg_sketch_expr *akg_sketch_move_option(const akg_sketch_stmt *st,
                                              const char *name); /* or NULL */

/* ASSIGN */
size_t akg_sketch_assign_target_count(const akg_sketch_stmt *st);
const char *akg_sketch_assign_target(const akg_sketch_stmt *st, size_t i);
/* "=", "+=", "-=", "*=", "/=" */
const char *akg_sketch_assign_op(const akg_sketch_stmt *st);
/* The value; for `a, b = 1, 2` a TUPLE expression. */
const akg_sketch_expr *akg_sketch_assign_value(const akg_sketch_stmt *st);

/* CALL */
const akg_sketch_expr *akg_sketch_call_expr(const akg_sketch_stmt *st);

/* ---- expressions ------------------------------------------------------------ */

typedef enum {
    AKG_SKETCH_EXPR_INT = 1,
    AKG_SKETCH_EXPR_FLOAT,
    AKG_SKETCH_EXPR_STRING,
    AKG_SKETCH_EXPR_BOOL,
    AKG_SKETCH_EXPR_NONE,
    AKG_SKETCH_EXPR_NAME,
    AKG_SKETCH_EXPR_UNARY,     /* op operand: "-", "+", "~", "not" */
    AKG_SKETCH_EXPR_BINARY,    /* lhs op rhs: "+", "-", "*", "/", "//", "%", "**", "&", "|", "^",
                                  "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "and", "or" */
    AKG_SKETCH_EXPR_CALL,      /* callee(args..., name=value...) */
    AKG_SKETCH_EXPR_SUBSCRIPT, /* base[index, ...] where an index may be a SLICE */
    AKG_SKETCH_EXPR_SLICE,     /* start:stop:step, each part may be NULL */
    AKG_SKETCH_EXPR_LIST,      /* [a, b, ...] */
    AKG_SKETCH_EXPR_TUPLE,     /* a, b, ... (right-hand side of a tuple assignment) */
} akg_sketch_expr_kind;

akg_sketch_expr_kind akg_sketch_expr_get_kind(const akg_sketch_expr *e);
akg_sketch_span akg_sketch_expr_span(const akg_sketch_expr *e);
int64_t akg_sketch_expr_int(const akg_sketch_expr *e);  /* INT; BOOL gives 0/1 */
double akg_sketch_expr_float(const akg_sketch_expr *e); /* FLOAT (INT converted) */
/* NAME: the name; STRING: the unquoted contents; CALL: the callee;
 * UNARY/BINARY: the operator; FLOAT: the literal as written. */
const char *akg_sketch_expr_text(const akg_sketch_expr *e);
const akg_sketch_expr *akg_sketch_expr_lhs(const akg_sketch_expr *e);    /* BINARY; UNARY operand */
const akg_sketch_expr *akg_sketch_expr_rhs(const akg_sketch_expr *e);    /* BINARY */
const akg_sketch_expr *akg_sketch_expr_base(const akg_sketch_expr *e);   /* SUBSCRIPT */
const akg_sketch_expr *akg_sketch_slice_start(const akg_sketch_expr *e); /* SLICE, or NULL */
const akg_sketch_expr *akg_sketch_slice_stop(const akg_sketch_expr *e);  /* SLICE, or NULL */
const akg_sketch_expr *akg_sketch_slice_step(const akg_sketch_expr *e);  /* SLICE, or NULL */
/* Items: CALL positional arguments, SUBSCRIPT indices, LIST and TUPLE items. */
size_t akg_sketch_expr_item_count(const akg_sketch_expr *e);
const akg_sketch_expr *akg_sketch_expr_item(const akg_sketch_expr *e, size_t i);
/* CALL keyword arguments. */
size_t akg_sketch_expr_kwarg_count(const akg_sketch_expr *e);
const char *akg_sketch_expr_kwarg_name(const akg_sketch_expr *e, size_t i);
const akg_sketch_expr *akg_sketch_expr_kwarg_value(const akg_sketch_expr *e, size_t i);
const akg_sketch_expr *akg_sketch_expr_kwarg(const akg_sketch_expr *e,
                                             const char *name); /* or NULL */

/* Evaluates an integer index expression. Names resolve, in order, to the
 * given bindings (e.g. symbol sizes, loop variables), then to constexpr
 * values (chosen candidates for tunables). Supports + - * // % ** and
 * min/max/ceil(a, b) (ceiling division). Returns 0 and stores the value, or
 * -EINVAL when the expression is not a computable integer (unbound name,
 * division by zero, overflow, tile operand). */
typedef struct {
    const char *name;
    int64_t value;
} akg_sketch_binding;
int akg_sketch_expr_eval(const akg_sketch *sketch, const akg_sketch_expr *e,
                         const akg_sketch_binding *bindings, size_t binding_count, int64_t *out);

/* Canonical text of one expression, new string owned by the caller (free()). */
char *akg_sketch_expr_to_string(const akg_sketch_expr *e);

/* ---- what the checker inferred (valid after akg_sketch_check) --------------- */

/* Tiles and scalars defined in the body (the last definition of each name):
 * dtype and rank as inferred by the checker (rank 0 for scalars) and whether
 * it is a tile. Returns -1 / defaults for unknown names. */
long akg_sketch_value_find(const akg_sketch *sketch, const char *name);
akg_dtype akg_sketch_value_dtype(const akg_sketch *sketch, long value);
size_t akg_sketch_value_rank(const akg_sketch *sketch, long value);
bool akg_sketch_value_is_tile(const akg_sketch *sketch, long value);

/* ---- CLI helpers (akg_cli sketch check|fmt) ----------------------------------- */

/* argv: FILE... . Prints file:line:col: severity: message to stderr for each
 * diagnostic; returns 0 when no file has errors, 1 when some has, 2 on
 * usage or I/O errors. */
int akg_sketch_cli_check(int argc, char **argv);
/* argv: [--write|--check] FILE... . Prints the canonical form to stdout,
 * rewrites the files in place (--write), or exits 1 when a file is not in
 * canonical form (--check). Returns 0, 1 (syntax errors / not canonical) or 2. */
int akg_sketch_cli_fmt(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* AKG_SKETCH_H */
