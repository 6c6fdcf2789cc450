/*
 * The checks of a sketch's bind: sections (sketch-grammar/README.md,
 * "Binding a sketch to its task"): every tensor, symbol and param without a
 * default bound, each name once, to a source of its kind with the arguments
 * that source takes; symbols bound before they are used; element counts that
 * agree where both are known; inputs and weights never stored to, outputs
 * stored to. akg_sketch_check() runs them after the body, once it knows which
 * tensors the body stores to. A sketch without bind: items is not checked
 * here at all: it is still a design, just not one bound to a task.
 */
#include "sketch_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum { DECL_SYMBOL = 1, DECL_TENSOR, DECL_PARAM, DECL_CONST } decl_kind;

typedef enum {
    SRC_INPUT,
    SRC_OUTPUT,
    SRC_WEIGHT,
    SRC_ATTR,
    SRC_INIT,
    SRC_EXPR,
    SRC_UNKNOWN
} bind_source;

static const char *const source_names[] = {"input", "output", "weight", "attr", "init"};
static const char *const source_usage[] = {"input(ARG[, SHAPE])", "output(I[, SHAPE])",
                                           "weight(PATH[, SHAPE])", "attr(PATH[, I | STR])",
                                           "init(NAME[, I | STR])"};

/* How a declaration got bound: by item `item` (for a symbol, possibly as a
 * bare entry of that item's shape). */
typedef struct {
    bool bound;
    bool by_shape;
    size_t item;
    bind_source source;
} bind_state;

typedef struct {
    const char *name; /* NULL: empty slot */
    decl_kind kind;
    size_t index;
} decl_slot;

typedef struct {
    const akg_sketch *s;
    akg_sketch_diag_list *diags;
    int errors;
    int err;
    decl_slot *slots; /* open addressing, cap a power of two */
    size_t cap;
    bind_state *states[5]; /* by decl_kind */
} bind_checker;

static void bind_error(bind_checker *bc, akg_sketch_span sp, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void bind_error(bind_checker *bc, akg_sketch_span sp, const char *fmt, ...)
{
    char buf[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    bc->errors++;
    if (akg_sketch_diag_add(bc->diags, AKG_SKETCH_ERROR, sp, "%s", buf))
        bc->err = -ENOMEM;
}

/* ---- declarations by name ------------------------------------------------------------- */

static size_t bind_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static decl_slot *decl_find(const bind_checker *bc, const char *name)
{
    size_t mask = bc->cap - 1;
    for (size_t i = bind_hash(name) & mask;; i = (i + 1) & mask) {
        decl_slot *sl = &bc->slots[i];
        if (!sl->name || strcmp(sl->name, name) == 0)
            return sl;
    }
}

/* The first declaration of a name wins (the main checker reports the others). */
static void decl_put(bind_checker *bc, const char *name, decl_kind kind, size_t index)
{
    decl_slot *sl = decl_find(bc, name);
    if (sl->name)
        return;
    sl->name = name;
    sl->kind = kind;
    sl->index = index;
}

static const decl_slot *decl_lookup(const bind_checker *bc, const char *name)
{
    const decl_slot *sl = decl_find(bc, name);
    return sl->name ? sl : NULL;
}

static bind_state *state_of(bind_checker *bc, const decl_slot *d)
{
    return &bc->states[d->kind][d->index];
}

static const char *decl_word(decl_kind kind)
{
    switch (kind) {
    case DECL_SYMBOL:
        return "symbol";
    case DECL_TENSOR:
        return "tensor";
    case DECL_PARAM:
        return "parameter";
    default:
        return "constexpr";
    }
}

/* The closest declared name (edit distance below 3), or NULL. */
static const char *closest_decl(const bind_checker *bc, const char *name)
{
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < bc->cap; i++) {
        const char *cand = bc->slots[i].name;
        if (!cand)
            continue;
        size_t d = sketch_edit_distance(name, cand);
        if (d < bd && d < strlen(name)) {
            bd = d;
            best = cand;
        }
    }
    return best;
}

/* ---- sources --------------------------------------------------------------------------- */

static bool is_index_call(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_CALL &&
           (strcmp(e->text, "min") == 0 || strcmp(e->text, "max") == 0 ||
            strcmp(e->text, "ceil") == 0);
}

static bind_source classify(const akg_sketch_expr *v)
{
    if (v->kind != AKG_SKETCH_EXPR_CALL || is_index_call(v))
        return SRC_EXPR;
    for (size_t i = 0; i < sizeof source_names / sizeof source_names[0]; i++)
        if (strcmp(v->text, source_names[i]) == 0)
            return (bind_source)i;
    return SRC_UNKNOWN;
}

static bool kind_takes(decl_kind kind, bind_source src)
{
    switch (kind) {
    case DECL_TENSOR:
        return src == SRC_INPUT || src == SRC_OUTPUT || src == SRC_WEIGHT;
    case DECL_SYMBOL:
        return src == SRC_INPUT || src == SRC_ATTR || src == SRC_INIT || src == SRC_EXPR;
    case DECL_PARAM:
        return src == SRC_INPUT || src == SRC_ATTR || src == SRC_INIT;
    default:
        return src == SRC_ATTR || src == SRC_INIT;
    }
}

static const char *kind_sources(decl_kind kind)
{
    switch (kind) {
    case DECL_TENSOR:
        return "a tensor comes from input(ARG[, SHAPE]), output(I[, SHAPE]) or weight(PATH[, "
               "SHAPE])";
    case DECL_SYMBOL:
        return "a symbol comes from input(ARG), attr(PATH[, I]), init(NAME[, I]) or an integer "
               "expression of symbols "
               "bound before it and constexprs";
    case DECL_PARAM:
        return "a parameter comes from input(ARG), attr(PATH[, I]) or init(NAME[, I])";
    default:
        return "a constexpr is checked against attr(PATH[, I]) or init(NAME[, I])";
    }
}

static bool is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* "ln.weight", "layers.0.bias": identifiers or indices separated by dots. */
static bool is_dotted_path(const char *s)
{
    if (!*s)
        return false;
    for (;;) {
        size_t n = strcspn(s, ".");
        if (n == 0 || n > 255)
            return false;
        char seg[256];
        memcpy(seg, s, n);
        seg[n] = '\0';
        if (!is_identifier(seg) && strspn(seg, "0123456789") != n)
            return false;
        if (!s[n])
            return true;
        s += n + 1;
    }
}

static bool is_index_literal(const akg_sketch_expr *e)
{
    return e->kind == AKG_SKETCH_EXPR_INT && e->ival >= 0;
}

/* The arguments of a source call; whether they are the ones it takes. */
static bool check_source_args(bind_checker *bc, const sketch_bind *bd, bind_source src,
                              decl_kind kind)
{
    const akg_sketch_expr *v = bd->value;
    const char *fn = source_names[src];
    if (v->n_kw) {
        bind_error(bc, v->kw_spans[0], "%s() takes no keyword arguments: %s", fn,
                   source_usage[src]);
        return false;
    }
    if (v->n_items < 1 || v->n_items > 2) {
        bind_error(bc, v->span, "%s() takes 1 or 2 arguments but %zu %s given: %s", fn, v->n_items,
                   v->n_items == 1 ? "was" : "were", source_usage[src]);
        return false;
    }
    const akg_sketch_expr *a0 = v->items[0], *a1 = v->n_items > 1 ? v->items[1] : NULL;
    switch (src) {
    case SRC_INPUT:
        if (!(a0->kind == AKG_SKETCH_EXPR_STRING && is_identifier(a0->text)) &&
            !is_index_literal(a0)) {
            bind_error(bc, a0->span,
                       "input() reads a forward argument by its name or its position: input(\"x\") "
                       "or input(0)");
            return false;
        }
        if (a1 && kind != DECL_TENSOR) {
            bind_error(bc, a1->span,
                       "input() of a %s reads a number and takes no SHAPE: %s = input(ARG)",
                       decl_word(kind), bd->name);
            return false;
        }
        return true;
    case SRC_OUTPUT:
        if (!is_index_literal(a0)) {
            bind_error(bc, a0->span,
                       "output() takes the position of a tensor in forward's result (tuples and "
                       "lists flattened): "
                       "output(0)");
            return false;
        }
        return true;
    case SRC_WEIGHT:
        if (a0->kind != AKG_SKETCH_EXPR_STRING || !is_dotted_path(a0->text)) {
            bind_error(bc, a0->span,
                       "weight() takes the dotted name of a parameter or buffer of the model: "
                       "weight(\"ln.weight\")");
            return false;
        }
        return true;
    case SRC_ATTR:
    case SRC_INIT:
        if (src == SRC_ATTR && (a0->kind != AKG_SKETCH_EXPR_STRING || !is_dotted_path(a0->text))) {
            bind_error(
                bc, a0->span,
                "attr() takes the dotted path of an attribute of the model: attr(\"conv.stride\")");
            return false;
        }
        if (src == SRC_INIT && (a0->kind != AKG_SKETCH_EXPR_STRING || !is_identifier(a0->text))) {
            bind_error(
                bc, a0->span,
                "init() takes the name of an argument of Model's constructor: init(\"dim\")");
            return false;
        }
        if (a1 && !is_index_literal(a1) && a1->kind != AKG_SKETCH_EXPR_STRING) {
            bind_error(
                bc, a1->span,
                "the second argument of %s() picks an element of a tuple or list (a non-negative "
                "integer, as in %s(\"%s\", 0)) or tests a string value (%s(\"%s\", \"reflect\") "
                "is 1 when the value is \"reflect\", else 0)",
                fn, fn, a0->text, fn, a0->text);
            return false;
        }
        return true;
    default:
        return false;
    }
}

/* ---- integer expressions of bound symbols ------------------------------------------------- */

/* Whether e is an integer expression of bound symbols and constexprs;
 * reports the first problem, naming `where` (e.g. "the shape of 'x'"), at
 * *at when given (else where the problem is). */
static bool check_int_expr(bind_checker *bc, const akg_sketch_expr *e, const char *where,
                           const akg_sketch_span *at, int depth)
{
    if (!e)
        return true;
    if (depth > 64) {
        bind_error(bc, at ? *at : e->span, "%s is nested too deeply", where);
        return false;
    }
    switch (e->kind) {
    case AKG_SKETCH_EXPR_INT:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        const decl_slot *d = decl_lookup(bc, e->text);
        if (d && d->kind == DECL_CONST)
            return true;
        if (d && d->kind == DECL_SYMBOL) {
            if (state_of(bc, d)->bound)
                return true;
            bind_error(
                bc, at ? *at : e->span,
                "symbol '%s' is used in %s before it is bound; items bind in the order written, so "
                "bind '%s' "
                "earlier (by its own item or as a bare entry of an input's or weight's shape)",
                e->text, where, e->text);
            return false;
        }
        if (d)
            bind_error(bc, at ? *at : e->span,
                       "%s may only use symbols and constexprs, but '%s' is a %s", where, e->text,
                       decl_word(d->kind));
        else
            bind_error(bc, at ? *at : e->span,
                       "undefined name '%s' in %s; it may only use symbols and constexprs", e->text,
                       where);
        return false;
    }
    case AKG_SKETCH_EXPR_UNARY:
        if (strcmp(e->text, "-") == 0 || strcmp(e->text, "+") == 0)
            return check_int_expr(bc, e->a, where, at, depth + 1);
        break;
    case AKG_SKETCH_EXPR_BINARY: {
        static const char *const ops[] = {"+", "-", "*", "//", "%", "**"};
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (strcmp(e->text, ops[i]) == 0)
                return check_int_expr(bc, e->a, where, at, depth + 1) &&
                       check_int_expr(bc, e->b, where, at, depth + 1);
        break;
    }
    case AKG_SKETCH_EXPR_CALL:
        if (is_index_call(e) && e->n_items > 0 && !e->n_kw) {
            for (size_t i = 0; i < e->n_items; i++)
                if (!check_int_expr(bc, e->items[i], where, at, depth + 1))
                    return false;
            return true;
        }
        break;
    default:
        break;
    }
    char *txt = akg_sketch_expr_to_string(e);
    bind_error(bc, at ? *at : e->span,
               "'%s' in %s is not an integer expression; use integers, symbols and constexprs with "
               "+ - * // %% ** "
               "and min, max, ceil",
               txt ? txt : "?", where);
    free(txt);
    return false;
}

/* ---- element counts ----------------------------------------------------------------------------
 */

#define MONO_FACTORS 16

/* A product c * f0 * f1 * ... of symbols; ok is false when the count is not
 * such a product (then nothing is compared). */
typedef struct {
    bool ok;
    int64_t coef;
    size_t n;
    const char *f[MONO_FACTORS];
} mono;

static mono mono_of(const bind_checker *bc, const akg_sketch_expr *e, int depth)
{
    mono m = {.ok = true, .coef = 1};
    int64_t v;
    if (!e || depth > 32)
        return (mono){.ok = false};
    if (akg_sketch_expr_eval(bc->s, e, NULL, 0, &v) == 0) {
        m.coef = v;
        return m;
    }
    if (e->kind == AKG_SKETCH_EXPR_NAME) {
        const decl_slot *d = decl_lookup(bc, e->text);
        if (!d || d->kind != DECL_SYMBOL)
            return (mono){.ok = false};
        m.f[m.n++] = e->text;
        return m;
    }
    if (e->kind == AKG_SKETCH_EXPR_BINARY && strcmp(e->text, "*") == 0) {
        mono a = mono_of(bc, e->a, depth + 1), b = mono_of(bc, e->b, depth + 1);
        if (!a.ok || !b.ok || a.n + b.n > MONO_FACTORS ||
            __builtin_mul_overflow(a.coef, b.coef, &a.coef))
            return (mono){.ok = false};
        for (size_t i = 0; i < b.n; i++)
            a.f[a.n++] = b.f[i];
        return a;
    }
    return (mono){.ok = false};
}

static mono mono_product(const bind_checker *bc, akg_sketch_expr *const *dims, size_t n)
{
    mono p = {.ok = true, .coef = 1};
    for (size_t i = 0; i < n && p.ok; i++) {
        mono d = mono_of(bc, dims[i], 0);
        if (!d.ok || p.n + d.n > MONO_FACTORS || __builtin_mul_overflow(p.coef, d.coef, &p.coef))
            return (mono){.ok = false};
        for (size_t k = 0; k < d.n; k++)
            p.f[p.n++] = d.f[k];
    }
    /* factors in name order, so that equal products compare equal */
    for (size_t i = 1; i < p.n; i++)
        for (size_t j = i; j > 0 && strcmp(p.f[j - 1], p.f[j]) > 0; j--) {
            const char *t = p.f[j];
            p.f[j] = p.f[j - 1];
            p.f[j - 1] = t;
        }
    return p;
}

/* Sizes are positive, so the same symbols with another coefficient, or two
 * different constants, are counts that differ whatever the symbols are. */
static bool mono_differ(const mono *a, const mono *b)
{
    if (!a->ok || !b->ok || a->n != b->n || a->coef == b->coef)
        return false;
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->f[i], b->f[i]) != 0)
            return false;
    return true;
}

static void mono_str(const mono *m, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "%lld", (long long)m->coef);
    if (m->n && m->coef == 1)
        k = 0, out[0] = '\0';
    for (size_t i = 0; i < m->n && k < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%s%s", k ? "*" : "", m->f[i]);
}

/* ---- tensors ----------------------------------------------------------------------------------
 */

/* After an error in a tensor's item: the symbols its shape would have bound
 * count as bound, so that one mistake is not reported again at every later
 * use of them. */
static void bind_shape_quietly(bind_checker *bc, size_t item, const decl_slot *d)
{
    const sketch_bind *bd = &bc->s->binds[item];
    const sketch_tensor *t = &bc->s->tensors[d->index];
    const akg_sketch_expr *v = bd->value;
    const akg_sketch_expr *shape = v->kind == AKG_SKETCH_EXPR_CALL && v->n_items > 1 &&
                                           v->items[1]->kind == AKG_SKETCH_EXPR_LIST
                                       ? v->items[1]
                                       : NULL;
    akg_sketch_expr *const *entries = shape ? shape->items : t->dims;
    size_t n = shape ? shape->n_items : t->rank;
    for (size_t i = 0; i < n; i++) {
        const decl_slot *sym =
            entries[i]->kind == AKG_SKETCH_EXPR_NAME ? decl_lookup(bc, entries[i]->text) : NULL;
        if (!sym || sym->kind != DECL_SYMBOL || state_of(bc, sym)->bound)
            continue;
        bind_state *st = state_of(bc, sym);
        st->bound = true;
        st->by_shape = true;
        st->item = item;
    }
}

/* The shape of a tensor's source: bare entries of an input's or weight's
 * shape bind the symbols not bound yet; every other entry, and every entry of
 * an output's shape (it allocates the output), uses bound symbols only. */
static void check_tensor_shape(bind_checker *bc, size_t item, const decl_slot *d, bind_source src)
{
    const sketch_bind *bd = &bc->s->binds[item];
    const sketch_tensor *t = &bc->s->tensors[d->index];
    const akg_sketch_expr *shape = bd->value->n_items > 1 ? bd->value->items[1] : NULL;
    if (shape && shape->kind != AKG_SKETCH_EXPR_LIST) {
        bind_error(bc, shape->span,
                   "the SHAPE of %s() is a list of integer expressions, e.g. %s(%s, [B, S, H])",
                   source_names[src], source_names[src], src == SRC_OUTPUT ? "0" : "\"x\"");
        bind_shape_quietly(bc, item, d);
        return;
    }
    akg_sketch_expr *const *entries = shape ? shape->items : t->dims;
    size_t n = shape ? shape->n_items : t->rank;
    char where[160];
    if (shape)
        snprintf(where, sizeof where, "the shape of '%s'", bd->name);
    else
        snprintf(where, sizeof where, "the shape of '%s' (its declared shape: %s() has no SHAPE)",
                 bd->name, source_names[src]);
    bool ok = true;
    for (size_t i = 0; i < n; i++) {
        const akg_sketch_expr *e = entries[i];
        akg_sketch_span at = shape ? e->span : bd->value->span;
        const decl_slot *sym = e->kind == AKG_SKETCH_EXPR_NAME ? decl_lookup(bc, e->text) : NULL;
        if (sym && sym->kind == DECL_SYMBOL && !state_of(bc, sym)->bound) {
            if (src == SRC_OUTPUT) {
                bind_error(
                    bc, at,
                    "symbol '%s' is used in %s before it is bound; an output is allocated from "
                    "symbols already bound, "
                    "so bind '%s' earlier (from an input's or weight's shape, or by its own item)",
                    e->text, where, e->text);
                ok = false;
                continue;
            }
            bind_state *st = state_of(bc, sym);
            st->bound = true;
            st->by_shape = true;
            st->item = item;
            continue;
        }
        /* a declared dimension is reported at the item, where it is fixed */
        if (!check_int_expr(bc, e, where, shape ? NULL : &at, 0))
            ok = false;
    }
    if (!ok || !shape)
        return;
    mono task = mono_product(bc, shape->items, shape->n_items);
    mono mine = mono_product(bc, t->dims, t->rank);
    if (mono_differ(&task, &mine)) {
        char a[128], b[128];
        mono_str(&task, a, sizeof a);
        mono_str(&mine, b, sizeof b);
        bind_error(bc, shape->span,
                   "the task's tensor has %s elements but '%s' has %s; a sketch tensor is the "
                   "row-major reshape of "
                   "the task's, so the counts must agree",
                   a, bd->name, b);
    }
}

/* ---- the items
 * ------------------------------------------------------------------------------------ */

static void check_item(bind_checker *bc, size_t i)
{
    const sketch_bind *bd = &bc->s->binds[i];
    const decl_slot *d = decl_lookup(bc, bd->name);
    if (!d) {
        const char *sug = closest_decl(bc, bd->name);
        if (sug)
            bind_error(bc, bd->span, "bind: '%s' is not declared (did you mean '%s'?)", bd->name,
                       sug);
        else
            bind_error(bc, bd->span,
                       "bind: '%s' is not declared; bind: gives sources to the tensors, symbols, "
                       "params and constexprs "
                       "declared above it",
                       bd->name);
        return;
    }
    bind_state *st = state_of(bc, d);
    if (st->bound) {
        const sketch_bind *prev = &bc->s->binds[st->item];
        if (st->by_shape)
            bind_error(bc, bd->span,
                       "symbol '%s' is already bound at line %u, by the shape of '%s'; bind each "
                       "name once (a later "
                       "appearance in a shape is checked when the kernel runs)",
                       bd->name, prev->item_span.line + 1, prev->name);
        else
            bind_error(bc, bd->span, "'%s' is already bound at line %u; bind each name once",
                       bd->name, prev->span.line + 1);
        return;
    }
    bind_source src = classify(bd->value);
    /* bound from here on, whatever is wrong with the source: one error each */
    st->item = i;
    st->source = src;
    if (src == SRC_UNKNOWN) {
        st->bound = true;
        size_t best = 3;
        const char *sug = NULL;
        for (size_t k = 0; k < sizeof source_names / sizeof source_names[0]; k++) {
            size_t dist = sketch_edit_distance(bd->value->text, source_names[k]);
            if (dist < best)
                best = dist, sug = source_names[k];
        }
        char more[64] = "";
        if (sug)
            snprintf(more, sizeof more, " (did you mean '%s'?)", sug);
        bind_error(bc, bd->value->span,
                   "unknown binding source '%s'%s; sources are input, output, weight, attr, init, "
                   "or an integer "
                   "expression for a symbol",
                   bd->value->text, more);
        if (d->kind == DECL_TENSOR)
            bind_shape_quietly(bc, i, d);
        return;
    }
    if (!kind_takes(d->kind, src)) {
        st->bound = true;
        bind_error(bc, bd->value->span, "%s '%s' cannot be bound to %s%s: %s", decl_word(d->kind),
                   bd->name, src == SRC_EXPR ? "an expression" : source_names[src],
                   src == SRC_EXPR ? "" : "()", kind_sources(d->kind));
        if (d->kind == DECL_TENSOR)
            bind_shape_quietly(bc, i, d);
        return;
    }
    if (src == SRC_EXPR) {
        char where[96];
        snprintf(where, sizeof where, "the binding of '%s'", bd->name);
        (void)check_int_expr(bc, bd->value, where, NULL, 0);
        st->bound = true; /* after its own expression: `N = N + 1` uses N before it is bound */
        return;
    }
    st->bound = true;
    if (!check_source_args(bc, bd, src, d->kind)) {
        if (d->kind == DECL_TENSOR)
            bind_shape_quietly(bc, i, d);
        return;
    }
    if (d->kind == DECL_TENSOR)
        check_tensor_shape(bc, i, d, src);
}

typedef struct {
    int64_t index; /* output(I) */
    size_t item;
} output_leaf;

static int leaf_cmp(const void *pa, const void *pb)
{
    const output_leaf *a = pa, *b = pb;
    if (a->index != b->index)
        return a->index < b->index ? -1 : 1;
    return a->item < b->item ? -1 : a->item > b->item;
}

/* After the items: what is left unbound, and how the body uses the tensors. */
static void check_complete(bind_checker *bc, const akg_sketch_span *store_spans)
{
    const akg_sketch *s = bc->s;
    for (size_t i = 0; i < s->n_tensors; i++) {
        const decl_slot *d = decl_lookup(bc, s->tensors[i].name);
        if (!d || d->kind != DECL_TENSOR || d->index != i)
            continue; /* a duplicate declaration */
        const bind_state *st = state_of(bc, d);
        const sketch_tensor *t = &s->tensors[i];
        if (!st->bound) {
            bind_error(bc, t->span,
                       "tensor '%s' has no binding; add one to bind: (%s = input(...), output(...) "
                       "or weight(...))",
                       t->name, t->name);
            continue;
        }
        const sketch_bind *bd = &s->binds[st->item];
        bool stored = store_spans && store_spans[i].line != UINT32_MAX;
        if ((st->source == SRC_INPUT || st->source == SRC_WEIGHT) && stored)
            bind_error(bc, store_spans[i],
                       "store to '%s', which is bound to %s of the task at line %u; inputs and "
                       "weights are read-only: store "
                       "results to a tensor bound with output(...)",
                       t->name, st->source == SRC_INPUT ? "an input" : "a weight",
                       bd->span.line + 1);
        if (st->source == SRC_OUTPUT && !stored && bd->value->n_items >= 1 &&
            is_index_literal(bd->value->items[0]))
            bind_error(
                bc, bd->span,
                "'%s' is bound to output %lld but the body never stores to it; write it with "
                "store(tile -> %s[...])",
                t->name, (long long)bd->value->items[0]->ival, t->name);
    }
    for (size_t i = 0; i < s->n_symbols; i++) {
        const decl_slot *d = decl_lookup(bc, s->symbols[i].name);
        if (!d || d->kind != DECL_SYMBOL || d->index != i || state_of(bc, d)->bound)
            continue;
        bind_error(bc, s->symbols[i].span,
                   "symbol '%s' is never bound; bind it (%s = input(...), attr(...), init(...) or "
                   "an expression) or use "
                   "it as a bare entry of an input's or weight's shape",
                   s->symbols[i].name, s->symbols[i].name);
    }
    for (size_t i = 0; i < s->n_params; i++) {
        const decl_slot *d = decl_lookup(bc, s->params[i].name);
        if (!d || d->kind != DECL_PARAM || d->index != i || state_of(bc, d)->bound ||
            s->params[i].def)
            continue;
        bind_error(bc, s->params[i].span,
                   "parameter '%s' has no default and no binding; bind it (%s = input(...), "
                   "attr(...) or init(...)) or "
                   "give it a default",
                   s->params[i].name, s->params[i].name);
    }
    /* one tensor per leaf of forward's result: the outputs by index, then neighbours compared */
    output_leaf *leaves = s->n_tensors ? malloc(s->n_tensors * sizeof *leaves) : NULL;
    if (s->n_tensors && !leaves) {
        bc->err = -ENOMEM;
        return;
    }
    size_t n = 0;
    for (size_t i = 0; i < s->n_tensors; i++) {
        const decl_slot *d = decl_lookup(bc, s->tensors[i].name);
        if (!d || d->kind != DECL_TENSOR || d->index != i)
            continue;
        const bind_state *st = state_of(bc, d);
        const akg_sketch_expr *v = st->bound ? s->binds[st->item].value : NULL;
        if (!v || st->source != SRC_OUTPUT || v->n_items < 1 || !is_index_literal(v->items[0]))
            continue;
        leaves[n].index = v->items[0]->ival;
        leaves[n++].item = st->item;
    }
    if (n > 1)
        qsort(leaves, n, sizeof *leaves, leaf_cmp);
    for (size_t i = 1, first = 0; i < n; i++) {
        if (leaves[i].index != leaves[first].index) {
            first = i;
            continue;
        }
        const sketch_bind *bd = &s->binds[leaves[i].item], *prev = &s->binds[leaves[first].item];
        bind_error(bc, bd->value->items[0]->span,
                   "output %lld is already bound to '%s' at line %u; each tensor of forward's "
                   "result is bound once",
                   (long long)leaves[i].index, prev->name, prev->span.line + 1);
    }
    free(leaves);
}

int sketch_check_bindings(const akg_sketch *s, const akg_sketch_span *store_spans,
                          akg_sketch_diag_list *diags)
{
    if (!s->n_binds)
        return 0;
    bind_checker bc = {.s = s, .diags = diags};
    size_t decls = s->n_symbols + s->n_tensors + s->n_params + s->n_consts;
    bc.cap = 16;
    while (bc.cap < 2 * decls + 1)
        bc.cap *= 2;
    bc.slots = calloc(bc.cap, sizeof *bc.slots);
    bc.states[DECL_SYMBOL] = calloc(s->n_symbols + 1, sizeof(bind_state));
    bc.states[DECL_TENSOR] = calloc(s->n_tensors + 1, sizeof(bind_state));
    bc.states[DECL_PARAM] = calloc(s->n_params + 1, sizeof(bind_state));
    bc.states[DECL_CONST] = calloc(s->n_consts + 1, sizeof(bind_state));
    int rc = -ENOMEM;
    if (bc.slots && bc.states[DECL_SYMBOL] && bc.states[DECL_TENSOR] && bc.states[DECL_PARAM] &&
        bc.states[DECL_CONST]) {
        for (size_t i = 0; i < s->n_symbols; i++)
            decl_put(&bc, s->symbols[i].name, DECL_SYMBOL, i);
        for (size_t i = 0; i < s->n_consts; i++)
            decl_put(&bc, s->consts[i].name, DECL_CONST, i);
        for (size_t i = 0; i < s->n_params; i++)
            decl_put(&bc, s->params[i].name, DECL_PARAM, i);
        for (size_t i = 0; i < s->n_tensors; i++)
            decl_put(&bc, s->tensors[i].name, DECL_TENSOR, i);
        for (size_t i = 0; i < s->n_binds && !bc.err; i++)
            check_item(&bc, i);
        if (!bc.err)
            check_complete(&bc, store_spans);
        rc = bc.err ? bc.err : bc.errors;
    }
    free(bc.slots);
    for (size_t k = 0; k < sizeof bc.states / sizeof bc.states[0]; k++)
        free(bc.states[k]);
    return rc;
}
