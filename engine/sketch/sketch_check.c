/*
 * The sketch checker: names, shapes, dtypes, operations and hints.
 *
 * Shapes are tracked as linear forms over atoms (symbols, loop variables,
 * non-linear subexpressions), so that `x[i:i+BM]` has extent BM and two
 * extents can be compared exactly when they are known, and are left alone
 * when they are not. Operation signatures live in sketch_ops.c; the bind:
 * sections are checked in sketch_check_bind.c, after the body.
 */
#include "sketch_internal.h"
#include "sketch_ops.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sketch_diag_sort(akg_sketch_diag_list *list);

#define LIN_TERMS 8
#define LIN_MAX_ATOMS 4096 /* text atoms kept per check; past it, extents become unknown */

/* Atoms are borrowed strings: names from the sketch, or texts of non-linear
 * subexpressions owned by the checker (checker.atoms). Types are copied by
 * value all through the checker, so they are kept small. */
typedef struct {
    bool ok; /* false: not representable (unknown extent) */
    int64_t c;
    int n;
    struct {
        const char *atom;
        int64_t k;
    } t[LIN_TERMS];
} lin;

enum { E_SYMBOL = 1, E_TENSOR, E_CONST, E_PARAM, E_TILE, E_SCALAR, E_LOOPVAR };

typedef enum { T_ERROR = 0, T_SCALAR, T_TILE, T_STRING, T_NONE, T_LIST, T_DTYPE } tkind;

typedef struct {
    tkind kind;
    akg_dtype dtype;
    size_t rank;
    lin dims[AKG_SKETCH_MAX_RANK];
} vtype;

/* An entry's type holds only the dimensions it uses (see type_set): a full
 * vtype is over a kilobyte, and a long sketch defines hundreds of names. */
typedef struct {
    const char *name;
    int kind;
    akg_sketch_span span;
    vtype *type;    /* in checker.types; never NULL */
    bool has_value; /* E_SCALAR/E_CONST with a known integer */
    int64_t value;
    bool loaded_unused;
    akg_sketch_span load_span;
    long tensor; /* E_TENSOR: index */
} entry;

/* Open-addressing map from a name to an index (of the newest env entry, or
 * of a recorded value): lookups stay constant-time however many tiles a long
 * sketch defines. Names are borrowed from the sketch. */
typedef struct {
    const char *name; /* NULL: empty slot */
    size_t index;
} name_slot;

typedef struct {
    name_slot *slots;
    size_t cap, used; /* cap is 0 or a power of two */
} name_index;

static size_t name_hash(const char *s)
{
    size_t h = 1469598103934665603u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static name_slot *name_index_find(const name_index *ix, const char *name)
{
    if (!ix->cap)
        return NULL;
    size_t mask = ix->cap - 1;
    for (size_t i = name_hash(name) & mask;; i = (i + 1) & mask) {
        name_slot *sl = &ix->slots[i];
        if (!sl->name || strcmp(sl->name, name) == 0)
            return sl;
    }
}

/* Maps name to index (replacing an older mapping). Returns 0 or -ENOMEM. */
static int name_index_put(name_index *ix, const char *name, size_t index)
{
    if ((ix->used + 1) * 2 > ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 512; /* most sketches never grow it */
        name_slot *slots = calloc(cap, sizeof *slots);
        if (!slots)
            return -ENOMEM;
        name_index grown = {slots, cap, 0};
        for (size_t i = 0; i < ix->cap; i++)
            if (ix->slots[i].name) {
                *name_index_find(&grown, ix->slots[i].name) = ix->slots[i];
                grown.used++;
            }
        free(ix->slots);
        *ix = grown;
    }
    name_slot *sl = name_index_find(ix, name);
    if (!sl->name) {
        sl->name = name;
        ix->used++;
    }
    sl->index = index;
    return 0;
}

typedef struct {
    akg_sketch *s;
    akg_sketch_diag_list *diags;
    entry **env; /* entries stay where they are allocated: growing env moves only pointers */
    size_t n_env, cap_env;
    entry **chunks; /* storage of the entries, ENV_CHUNK at a time */
    size_t n_chunks;
    name_index names;   /* name -> newest env entry */
    sketch_arena types; /* entry types */
    char **atoms;       /* texts of non-linear subexpressions, freed with the checker */
    size_t n_atoms;
    akg_sketch_span *store_spans; /* per tensor: the first store to it (line UINT32_MAX: none) */
    int err;
    size_t errors;
    int depth;
} checker;

static const char *kind_name(int kind)
{
    switch (kind) {
    case E_SYMBOL:
        return "symbol";
    case E_TENSOR:
        return "tensor";
    case E_CONST:
        return "constexpr";
    case E_PARAM:
        return "parameter";
    case E_TILE:
        return "tile";
    case E_LOOPVAR:
        return "loop variable";
    default:
        return "scalar";
    }
}

static void diag(checker *c, akg_sketch_severity sev, akg_sketch_span sp, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void diag(checker *c, akg_sketch_severity sev, akg_sketch_span sp, const char *fmt, ...)
{
    char buf[480];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (sev == AKG_SKETCH_ERROR)
        c->errors++;
    if (akg_sketch_diag_add(c->diags, sev, sp, "%s", buf))
        c->err = -ENOMEM;
}

/* ---- suggestions --------------------------------------------------------------- */

size_t sketch_edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 32 || lb > 32)
        return 99;
    size_t d[33][33];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

static const char *closest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < n; i++) {
        size_t d = sketch_edit_distance(word, cands[i]);
        if (d < bd) {
            bd = d;
            best = cands[i];
        }
    }
    return best;
}

/* ---- environment ------------------------------------------------------------------ */

static entry *lookup(checker *c, const char *name)
{
    const name_slot *sl = name_index_find(&c->names, name);
    return sl && sl->name ? c->env[sl->index] : NULL;
}

#define ENV_CHUNK 64

static entry *define(checker *c, const char *name, int kind, akg_sketch_span sp)
{
    if (c->n_env == c->cap_env) {
        size_t cap = c->cap_env ? c->cap_env * 2 : ENV_CHUNK;
        entry **env = realloc(c->env, cap * sizeof *env);
        entry **chunks = realloc(c->chunks, (cap / ENV_CHUNK) * sizeof *chunks);
        if (env)
            c->env = env;
        if (chunks)
            c->chunks = chunks;
        if (!env || !chunks) {
            c->err = -ENOMEM;
            return NULL;
        }
        c->cap_env = cap;
    }
    if (c->n_env % ENV_CHUNK == 0) {
        entry *chunk = malloc(ENV_CHUNK * sizeof *chunk);
        if (!chunk) {
            c->err = -ENOMEM;
            return NULL;
        }
        c->chunks[c->n_chunks++] = chunk;
    }
    if (name_index_put(&c->names, name, c->n_env)) {
        c->err = -ENOMEM;
        return NULL;
    }
    vtype *type = sketch_arena_alloc(&c->types, offsetof(vtype, dims));
    if (!type) {
        c->err = -ENOMEM;
        return NULL;
    }
    entry *e = &c->chunks[c->n_env / ENV_CHUNK][c->n_env % ENV_CHUNK];
    c->env[c->n_env++] = e;
    memset(e, 0, sizeof *e);
    e->type = type;
    e->name = name;
    e->kind = kind;
    e->span = sp;
    e->tensor = -1;
    return e;
}

/* Stores a copy of t (its used dimensions only) as the entry's type. */
static void type_set(checker *c, entry *e, const vtype *t)
{
    size_t size = offsetof(vtype, dims) + t->rank * sizeof t->dims[0];
    vtype *stored = sketch_arena_alloc(&c->types, size);
    if (!stored) {
        c->err = -ENOMEM;
        return;
    }
    memcpy(stored, t, size);
    e->type = stored;
}

/* The entry's type as a full vtype (unused dimensions zeroed). */
static vtype type_get(const entry *e)
{
    vtype t;
    memset(&t, 0, sizeof t);
    memcpy(&t, e->type, offsetof(vtype, dims) + e->type->rank * sizeof t.dims[0]);
    return t;
}

static const char *suggest_name(checker *c, const char *name)
{
    const char *best = NULL;
    size_t bd = 3;
    for (size_t i = 0; i < c->n_env; i++) {
        size_t d = sketch_edit_distance(name, c->env[i]->name);
        if (d < bd && d < strlen(name)) {
            bd = d;
            best = c->env[i]->name;
        }
    }
    return best;
}

/* ---- linear forms ---------------------------------------------------------------------- */

static lin lin_const(int64_t v)
{
    lin l;
    memset(&l, 0, sizeof l);
    l.ok = true;
    l.c = v;
    return l;
}

static lin lin_atom(const char *atom)
{
    lin l = lin_const(0);
    l.t[0].atom = atom;
    l.t[0].k = 1;
    l.n = 1;
    return l;
}

/* *acc += sign * v; false on overflow (the form is then unknown, never wrapped) */
static bool lin_acc(int64_t *acc, int64_t sign, int64_t v)
{
    int64_t t;
    return !__builtin_mul_overflow(sign, v, &t) && !__builtin_add_overflow(*acc, t, acc);
}

static lin lin_add(lin a, lin b, int64_t sign)
{
    if (!a.ok || !b.ok)
        return (lin){.ok = false};
    lin r = a;
    if (!lin_acc(&r.c, sign, b.c))
        return (lin){.ok = false};
    for (int i = 0; i < b.n; i++) {
        int j;
        for (j = 0; j < r.n; j++)
            if (strcmp(r.t[j].atom, b.t[i].atom) == 0)
                break;
        if (j == r.n) {
            if (r.n == LIN_TERMS)
                return (lin){.ok = false};
            r.t[r.n] = b.t[i];
            r.t[r.n].k = 0;
            r.n++;
        }
        if (!lin_acc(&r.t[j].k, sign, b.t[i].k))
            return (lin){.ok = false};
    }
    int k = 0;
    for (int i = 0; i < r.n; i++)
        if (r.t[i].k != 0)
            r.t[k++] = r.t[i];
    r.n = k;
    return r;
}

static lin lin_scale(lin a, int64_t f)
{
    if (!a.ok)
        return a;
    if (__builtin_mul_overflow(a.c, f, &a.c))
        return (lin){.ok = false};
    for (int i = 0; i < a.n; i++)
        if (__builtin_mul_overflow(a.t[i].k, f, &a.t[i].k))
            return (lin){.ok = false};
    int k = 0;
    for (int i = 0; i < a.n; i++)
        if (a.t[i].k != 0)
            a.t[k++] = a.t[i];
    a.n = k;
    return a;
}

static bool lin_is_const(const lin *l)
{
    return l->ok && l->n == 0;
}

/* Definitely different: both known and not equal. Unknown extents never clash. */
static bool lin_clash(const lin *a, const lin *b)
{
    if (!a->ok || !b->ok)
        return false;
    if (lin_is_const(a) && lin_is_const(b))
        return a->c != b->c;
    if (a->n == b->n && a->c != b->c) {
        lin d = lin_add(*a, *b, -1);
        return d.ok && d.n == 0;
    }
    return false;
}

static void lin_str(const lin *l, char *out, size_t cap)
{
    if (!l->ok) {
        snprintf(out, cap, "?");
        return;
    }
    size_t k = 0;
    out[0] = '\0';
    for (int i = 0; i < l->n && k < cap; i++) {
        int64_t v = l->t[i].k;
        const char *sign = v < 0 ? (k ? " - " : "-") : (k ? " + " : "");
        int64_t m = v < 0 ? -v : v;
        int w = m == 1 ? snprintf(out + k, cap - k, "%s%s", sign, l->t[i].atom)
                       : snprintf(out + k, cap - k, "%s%lld*%s", sign, (long long)m, l->t[i].atom);
        if (w < 0)
            return;
        k += (size_t)w;
    }
    if (k < cap && (l->c != 0 || l->n == 0)) {
        if (k == 0)
            snprintf(out, cap, "%lld", (long long)l->c);
        else
            snprintf(out + k, cap - k, " %s %lld", l->c < 0 ? "-" : "+",
                     (long long)(l->c < 0 ? -l->c : l->c));
    }
}

static void shape_str(const vtype *t, char *out, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(out, cap, "[");
    for (size_t d = 0; d < t->rank && k < cap; d++) {
        char one[96];
        lin_str(&t->dims[d], one, sizeof one);
        k += (size_t)snprintf(out + k, cap - k, "%s%s", d ? ", " : "", one);
    }
    if (k < cap)
        snprintf(out + k, cap - k, "]");
}

static lin to_lin(checker *c, const akg_sketch_expr *e, int depth)
{
    if (!e || depth > 32)
        return (lin){.ok = false};
    int64_t v;
    if (e->kind == AKG_SKETCH_EXPR_INT)
        return lin_const(e->ival);
    if (e->kind == AKG_SKETCH_EXPR_NAME) {
        entry *en = lookup(c, e->text);
        if (en && en->has_value)
            return lin_const(en->value);
        if (en && en->kind == E_CONST && akg_sketch_expr_eval(c->s, e, NULL, 0, &v) == 0)
            return lin_const(v);
        return lin_atom(e->text);
    }
    if (e->kind == AKG_SKETCH_EXPR_BINARY) {
        const char *op = e->text;
        if (strcmp(op, "+") == 0 || strcmp(op, "-") == 0)
            return lin_add(to_lin(c, e->a, depth + 1), to_lin(c, e->b, depth + 1),
                           op[0] == '+' ? 1 : -1);
        if (strcmp(op, "*") == 0) {
            lin a = to_lin(c, e->a, depth + 1), b = to_lin(c, e->b, depth + 1);
            if (lin_is_const(&a))
                return lin_scale(b, a.c);
            if (lin_is_const(&b))
                return lin_scale(a, b.c);
        }
        if (strcmp(op, "//") == 0 || strcmp(op, "%") == 0) {
            lin a = to_lin(c, e->a, depth + 1), b = to_lin(c, e->b, depth + 1);
            if (lin_is_const(&a) && lin_is_const(&b) && b.c != 0) {
                akg_sketch_expr ea = {.kind = AKG_SKETCH_EXPR_INT, .ival = a.c},
                                eb = {.kind = AKG_SKETCH_EXPR_INT, .ival = b.c};
                akg_sketch_expr ex = {
                    .kind = AKG_SKETCH_EXPR_BINARY, .text = op, .a = &ea, .b = &eb};
                if (akg_sketch_expr_eval(c->s, &ex, NULL, 0, &v) == 0)
                    return lin_const(v);
            }
        }
    }
    if (e->kind == AKG_SKETCH_EXPR_UNARY && strcmp(e->text, "-") == 0)
        return lin_scale(to_lin(c, e->a, depth + 1), -1);
    if (e->kind == AKG_SKETCH_EXPR_CALL) {
        /* min/max/ceil of known integers */
        bool all = true;
        for (size_t i = 0; i < e->n_items; i++) {
            lin a = to_lin(c, e->items[i], depth + 1);
            if (!lin_is_const(&a))
                all = false;
        }
        if (all && akg_sketch_expr_eval(c->s, e, NULL, 0, &v) == 0)
            return lin_const(v);
    }
    if (c->n_atoms % 64 == 0) {
        if (c->n_atoms == LIN_MAX_ATOMS)
            return (lin){.ok = false};
        char **atoms = realloc(c->atoms, (c->n_atoms + 64) * sizeof *atoms);
        if (!atoms)
            return (lin){.ok = false};
        c->atoms = atoms;
    }
    char *txt = akg_sketch_expr_to_string(e);
    if (!txt)
        return (lin){.ok = false};
    c->atoms[c->n_atoms++] = txt;
    return lin_atom(txt);
}

/* ---- types -------------------------------------------------------------------------------- */

static vtype t_scalar(akg_dtype dt)
{
    vtype t;
    memset(&t, 0, sizeof t);
    t.kind = T_SCALAR;
    t.dtype = dt;
    return t;
}

static vtype t_err(void)
{
    vtype t;
    memset(&t, 0, sizeof t);
    return t;
}

static bool is_float(akg_dtype d)
{
    return d == AKG_DTYPE_F16 || d == AKG_DTYPE_BF16 || d == AKG_DTYPE_F32 || d == AKG_DTYPE_F64;
}

static bool is_integer(akg_dtype d)
{
    return d == AKG_DTYPE_I8 || d == AKG_DTYPE_I16 || d == AKG_DTYPE_I32 || d == AKG_DTYPE_I64 ||
           d == AKG_DTYPE_U8;
}

static vtype type_of(checker *c, const akg_sketch_expr *e);

static void mark_used(checker *c, const akg_sketch_expr *e)
{
    if (e && e->kind == AKG_SKETCH_EXPR_NAME) {
        entry *en = lookup(c, e->text);
        if (en)
            en->loaded_unused = false;
    }
}

/* Broadcast two shapes, numpy style (right-aligned, 1 stretches). */
static bool broadcast(checker *c, const char *what, akg_sketch_span sp, const vtype *a,
                      const vtype *b, vtype *out)
{
    if (a->kind != T_TILE) {
        *out = *b;
        return true;
    }
    if (b->kind != T_TILE) {
        *out = *a;
        return true;
    }
    const vtype *big = a->rank >= b->rank ? a : b, *small = a->rank >= b->rank ? b : a;
    *out = *big;
    size_t off = big->rank - small->rank;
    for (size_t i = 0; i < small->rank; i++) {
        const lin *x = &big->dims[off + i], *y = &small->dims[i];
        bool x1 = lin_is_const(x) && x->c == 1, y1 = lin_is_const(y) && y->c == 1;
        if (y1)
            continue;
        if (x1) {
            out->dims[off + i] = *y;
            continue;
        }
        if (lin_clash(x, y)) {
            char sa[160], sb[160];
            shape_str(a, sa, sizeof sa);
            shape_str(b, sb, sizeof sb);
            diag(c, AKG_SKETCH_ERROR, sp, "shapes %s and %s do not broadcast in %s", sa, sb, what);
            return false;
        }
    }
    return true;
}

static bool check_dtypes(checker *c, const char *what, akg_sketch_span sp, const vtype *a,
                         const vtype *b)
{
    if (a->kind == T_TILE && b->kind == T_TILE && a->dtype && b->dtype && a->dtype != b->dtype) {
        diag(c, AKG_SKETCH_ERROR, sp,
             "dtype mismatch in %s: %s and %s; convert one side with cast(x, %s)", what,
             akg_dtype_name(a->dtype), akg_dtype_name(b->dtype), akg_dtype_name(a->dtype));
        return false;
    }
    return true;
}

static bool const_int(checker *c, const akg_sketch_expr *e, int64_t *out)
{
    lin l = to_lin(c, e, 0);
    if (!lin_is_const(&l))
        return false;
    *out = l.c;
    return true;
}

/* Shape of base[indices] for a tensor or tile; reports bounds and rank errors. */
static vtype subscript_type(checker *c, const akg_sketch_expr *e, const vtype *base,
                            const char *base_name)
{
    vtype r;
    memset(&r, 0, sizeof r);
    r.kind = T_TILE;
    r.dtype = base->dtype;
    size_t nidx = 0;
    for (size_t i = 0; i < e->n_items; i++)
        if (e->items[i]->kind != AKG_SKETCH_EXPR_NONE)
            nidx++;
    if (nidx > base->rank) {
        diag(c, AKG_SKETCH_ERROR, e->span,
             "too many indices for '%s': %zu given but it has rank %zu", base_name, nidx,
             base->rank);
        return t_err();
    }
    size_t d = 0;
    for (size_t i = 0; i < e->n_items; i++) {
        const akg_sketch_expr *ix = e->items[i];
        if (ix->kind == AKG_SKETCH_EXPR_NONE) {
            if (r.rank < AKG_SKETCH_MAX_RANK)
                r.dims[r.rank++] = lin_const(1);
            continue;
        }
        const lin *dim = &base->dims[d];
        int64_t dv = 0;
        bool dim_known = lin_is_const(dim) && (dv = dim->c, true);
        if (ix->kind == AKG_SKETCH_EXPR_SLICE) {
            for (const akg_sketch_expr *part = ix->a; part; part = NULL)
                mark_used(c, part), (void)type_of(c, part);
            if (ix->b)
                (void)type_of(c, ix->b);
            if (ix->c)
                (void)type_of(c, ix->c);
            lin lo = ix->a ? to_lin(c, ix->a, 0) : lin_const(0);
            lin hi = ix->b ? to_lin(c, ix->b, 0) : *dim;
            int64_t lov = 0, hiv = 0, step = 1;
            bool lo_k = ix->a ? const_int(c, ix->a, &lov) : (lov = 0, true);
            bool hi_k = ix->b ? const_int(c, ix->b, &hiv) : (dim_known ? (hiv = dv, true) : false);
            if (ix->c && !const_int(c, ix->c, &step))
                step = 0;
            if (ix->c && step <= 0 && const_int(c, ix->c, &step) && step <= 0) {
                diag(c, AKG_SKETCH_ERROR, ix->c->span, "slice step must be positive, got %lld",
                     (long long)step);
                step = 1;
            }
            if (dim_known && ((lo_k && (lov < 0 || lov >= dv)) || (hi_k && hiv > dv))) {
                char txt[96];
                char *s = akg_sketch_expr_to_string(ix);
                snprintf(txt, sizeof txt, "%s", s ? s : "?");
                free(s);
                diag(c, AKG_SKETCH_ERROR, ix->span,
                     "slice %s is out of bounds for dimension %zu of '%s' (size %lld)", txt, d,
                     base_name, (long long)dv);
            } else if (lo_k && hi_k && hiv <= lov) {
                diag(c, AKG_SKETCH_ERROR, ix->span,
                     "empty slice: stop %lld is not greater than start %lld", (long long)hiv,
                     (long long)lov);
            }
            lin ext = lin_add(hi, lo, -1);
            if (step > 1) {
                ext = lin_is_const(&ext) ? lin_const(ext.c / step + (ext.c % step > 0))
                                         : (lin){.ok = false};
            } else if (step == 0) {
                ext = (lin){.ok = false};
            }
            if (r.rank < AKG_SKETCH_MAX_RANK)
                r.dims[r.rank++] = ext;
        } else {
            vtype it = type_of(c, ix);
            if (it.kind == T_TILE) {
                /* gather with an index tile: the result takes the index's shape */
                for (size_t k = 0; k < it.rank && r.rank < AKG_SKETCH_MAX_RANK; k++)
                    r.dims[r.rank++] = it.dims[k];
            } else if (it.kind != T_SCALAR && it.kind != T_ERROR) {
                diag(c, AKG_SKETCH_ERROR, ix->span,
                     "index into '%s' must be an integer expression or a slice", base_name);
            } else {
                int64_t iv;
                if (dim_known && const_int(c, ix, &iv) && (iv < 0 || iv >= dv))
                    diag(c, AKG_SKETCH_ERROR, ix->span,
                         "index %lld is out of bounds for dimension %zu of '%s' (size %lld)",
                         (long long)iv, d, base_name, (long long)dv);
            }
        }
        d++;
    }
    for (; d < base->rank && r.rank < AKG_SKETCH_MAX_RANK; d++)
        r.dims[r.rank++] = base->dims[d];
    return r;
}

static bool axis_arg(checker *c, const akg_sketch_expr *call, size_t pos, const vtype *x,
                     int64_t def, int64_t *out, bool *given)
{
    const akg_sketch_expr *ax = akg_sketch_expr_kwarg(call, "axis");
    if (!ax && call->n_items > pos)
        ax = call->items[pos];
    *given = ax != NULL;
    *out = def;
    if (!ax)
        return true;
    if (ax->kind == AKG_SKETCH_EXPR_LIST) {
        for (size_t i = 0; i < ax->n_items; i++) {
            int64_t v;
            if (!const_int(c, ax->items[i], &v) || v < -(int64_t)x->rank || v >= (int64_t)x->rank) {
                diag(c, AKG_SKETCH_ERROR, ax->items[i]->span,
                     "axis must be a constant in [-%zu, %zu) for a rank-%zu tile", x->rank, x->rank,
                     x->rank);
                return false;
            }
        }
        *out = INT64_MIN; /* several axes */
        return true;
    }
    int64_t v;
    if (!const_int(c, ax, &v)) {
        diag(c, AKG_SKETCH_ERROR, ax->span, "axis must be an integer constant");
        return false;
    }
    if (x->kind == T_TILE && (v < -(int64_t)x->rank || v >= (int64_t)x->rank)) {
        diag(c, AKG_SKETCH_ERROR, ax->span, "axis %lld is out of range for a rank-%zu tile",
             (long long)v, x->rank);
        return false;
    }
    *out = v < 0 ? v + (int64_t)x->rank : v;
    return true;
}

static vtype shape_from_list(checker *c, const akg_sketch_expr *list, const char *what)
{
    vtype t;
    memset(&t, 0, sizeof t);
    t.kind = T_TILE;
    if (!list || list->kind != AKG_SKETCH_EXPR_LIST) {
        diag(c, AKG_SKETCH_ERROR, list ? list->span : (akg_sketch_span){0, 0, 0, 0},
             "%s needs a shape list as its first argument, e.g. [BM, BN]", what);
        return t_err();
    }
    if (list->n_items == 0 || list->n_items > AKG_SKETCH_MAX_RANK) {
        diag(c, AKG_SKETCH_ERROR, list->span, "%s shape must have 1 to %u dimensions", what,
             AKG_SKETCH_MAX_RANK);
        return t_err();
    }
    for (size_t i = 0; i < list->n_items; i++) {
        vtype dt = type_of(c, list->items[i]);
        if (dt.kind != T_SCALAR && dt.kind != T_ERROR) {
            diag(c, AKG_SKETCH_ERROR, list->items[i]->span,
                 "shape dimension must be an integer expression");
            return t_err();
        }
        t.dims[i] = to_lin(c, list->items[i], 0);
        if (lin_is_const(&t.dims[i]) && t.dims[i].c <= 0)
            diag(c, AKG_SKETCH_ERROR, list->items[i]->span,
                 "shape dimension must be positive, got %lld", (long long)t.dims[i].c);
    }
    t.rank = list->n_items;
    return t;
}

static akg_dtype dtype_arg(checker *c, const akg_sketch_expr *e)
{
    if (!e)
        return AKG_DTYPE_UNKNOWN;
    if (e->kind == AKG_SKETCH_EXPR_NAME || e->kind == AKG_SKETCH_EXPR_STRING) {
        akg_dtype d = akg_dtype_from_name(e->text);
        if (d)
            return d;
    }
    char *s = akg_sketch_expr_to_string(e);
    diag(c, AKG_SKETCH_ERROR, e->span,
         "'%s' is not a dtype; use one of bool, i8, i16, i32, i64, u8, f16, bf16, f32, f64",
         s ? s : "?");
    free(s);
    return AKG_DTYPE_UNKNOWN;
}

static vtype call_type(checker *c, const akg_sketch_expr *e, const akg_sketch_expr **dst_out,
                       bool statement);

static vtype type_of(checker *c, const akg_sketch_expr *e)
{
    if (!e)
        return t_err();
    switch (e->kind) {
    case AKG_SKETCH_EXPR_INT:
        return t_scalar(AKG_DTYPE_I64);
    case AKG_SKETCH_EXPR_FLOAT:
        return t_scalar(AKG_DTYPE_F32);
    case AKG_SKETCH_EXPR_BOOL:
        return t_scalar(AKG_DTYPE_BOOL);
    case AKG_SKETCH_EXPR_STRING: {
        vtype t = t_err();
        t.kind = T_STRING;
        return t;
    }
    case AKG_SKETCH_EXPR_NONE: {
        vtype t = t_err();
        t.kind = T_NONE;
        return t;
    }
    case AKG_SKETCH_EXPR_NAME: {
        entry *en = lookup(c, e->text);
        if (!en) {
            if (akg_dtype_from_name(e->text)) {
                vtype t = t_err();
                t.kind = T_DTYPE;
                return t;
            }
            const char *sug = suggest_name(c, e->text);
            if (sug)
                diag(c, AKG_SKETCH_ERROR, e->span, "undefined name '%s' (did you mean '%s'?)",
                     e->text, sug);
            else
                diag(c, AKG_SKETCH_ERROR, e->span,
                     "undefined name '%s'; declare it in symbols:, constexpr: or params:, or "
                     "assign it before use",
                     e->text);
            return t_err();
        }
        if (en->kind == E_TILE)
            en->loaded_unused = false;
        if (en->kind == E_TENSOR) {
            vtype t = type_get(en);
            t.kind = T_TILE;
            return t; /* callers that need a tile reject tensors explicitly */
        }
        return type_get(en);
    }
    case AKG_SKETCH_EXPR_UNARY: {
        vtype a = type_of(c, e->a);
        if (strcmp(e->text, "not") == 0 && a.kind == T_TILE)
            a.dtype = AKG_DTYPE_BOOL;
        return a;
    }
    case AKG_SKETCH_EXPR_BINARY: {
        vtype a = type_of(c, e->a), b = type_of(c, e->b);
        if (a.kind == T_ERROR || b.kind == T_ERROR)
            return t_err();
        if ((a.kind != T_SCALAR && a.kind != T_TILE) || (b.kind != T_SCALAR && b.kind != T_TILE)) {
            diag(c, AKG_SKETCH_ERROR, e->span, "operator '%s' needs numbers or tiles on both sides",
                 e->text);
            return t_err();
        }
        vtype r;
        if (!broadcast(c, e->text, e->span, &a, &b, &r))
            return t_err();
        if (a.kind == T_TILE && b.kind == T_TILE && !check_dtypes(c, e->text, e->span, &a, &b))
            return t_err();
        int p = 0;
        static const char *cmp[] = {"<", "<=", ">", ">=", "==", "!="};
        for (size_t i = 0; i < 6; i++)
            if (strcmp(e->text, cmp[i]) == 0)
                p = 1;
        if (p || strcmp(e->text, "and") == 0 || strcmp(e->text, "or") == 0)
            r.dtype = AKG_DTYPE_BOOL;
        else if (r.kind == T_SCALAR &&
                 (is_float(a.dtype) || is_float(b.dtype) || strcmp(e->text, "/") == 0))
            r.dtype = AKG_DTYPE_F32;
        return r;
    }
    case AKG_SKETCH_EXPR_CALL:
        return call_type(c, e, NULL, false);
    case AKG_SKETCH_EXPR_SUBSCRIPT: {
        if (e->a->kind != AKG_SKETCH_EXPR_NAME) {
            diag(c, AKG_SKETCH_ERROR, e->span, "only named tensors and tiles can be indexed");
            return t_err();
        }
        vtype base = type_of(c, e->a);
        if (base.kind == T_ERROR)
            return t_err();
        if (base.kind != T_TILE) {
            diag(c, AKG_SKETCH_ERROR, e->a->span, "'%s' is a scalar and cannot be indexed",
                 e->a->text);
            return t_err();
        }
        return subscript_type(c, e, &base, e->a->text);
    }
    case AKG_SKETCH_EXPR_LIST: {
        for (size_t i = 0; i < e->n_items; i++)
            (void)type_of(c, e->items[i]);
        vtype t = t_err();
        t.kind = T_LIST;
        return t;
    }
    case AKG_SKETCH_EXPR_SLICE:
        diag(c, AKG_SKETCH_ERROR, e->span, "a slice is only valid inside [...]");
        return t_err();
    case AKG_SKETCH_EXPR_TUPLE:
        diag(c, AKG_SKETCH_ERROR, e->span,
             "a tuple is only valid on the right of a multiple assignment");
        return t_err();
    }
    return t_err();
}

static bool tensor_in_compute(checker *c, const akg_sketch_expr *arg)
{
    if (arg && arg->kind == AKG_SKETCH_EXPR_NAME) {
        entry *en = lookup(c, arg->text);
        if (en && en->kind == E_TENSOR) {
            diag(c, AKG_SKETCH_ERROR, arg->span,
                 "tensor '%s' cannot be used in a computation directly; load it into a tile first: "
                 "load(%s[...] -> tile)",
                 arg->text, arg->text);
            return true;
        }
    }
    return false;
}

static vtype call_type(checker *c, const akg_sketch_expr *e, const akg_sketch_expr **dst_out,
                       bool statement)
{
    const sketch_op *op = sketch_op_find(e->text);
    if (dst_out)
        *dst_out = NULL;
    if (!op) {
        const char *sug = closest(e->text, sketch_op_names(), sketch_op_count());
        if (sug)
            diag(c, AKG_SKETCH_ERROR, e->span, "unknown operation '%s' (did you mean '%s'?)",
                 e->text, sug);
        else
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "unknown operation '%s'; see the operation list in the language reference",
                 e->text);
        for (size_t i = 0; i < e->n_items; i++)
            (void)type_of(c, e->items[i]);
        return t_err();
    }
    if (op->cat == OP_ALLOC) {
        diag(c, AKG_SKETCH_ERROR, e->span, "alloc() must be assigned to a name: t = alloc([...])");
        return t_err();
    }
    if (op->cat == OP_RANGE) {
        diag(c, AKG_SKETCH_ERROR, e->span, "range() is only valid as the iterable of a for loop");
        return t_err();
    }
    if (op->cat == OP_TUNE) {
        diag(c, AKG_SKETCH_ERROR, e->span,
             "tune() is only allowed as the whole value of a constexpr: BM = tune(64, 128)");
        return t_err();
    }
    /* keyword arguments */
    const akg_sketch_expr *dst = NULL;
    for (size_t i = 0; i < e->n_kw; i++) {
        if (strcmp(e->kw_names[i], "dst") == 0 && statement) {
            dst = e->kw_values[i];
            continue;
        }
        if (!sketch_op_has_kwarg(op, e->kw_names[i])) {
            diag(c, AKG_SKETCH_ERROR, e->kw_spans[i], "%s() has no argument '%s'%s%s", op->name,
                 e->kw_names[i], op->kwargs[0] ? "; it accepts " : "",
                 op->kwargs[0] ? op->kwargs : "");
            return t_err();
        }
    }
    size_t npos = e->n_items;
    /* destination form: `op(inputs..., dst)` as a statement */
    if (statement && !dst && npos > op->min_args) {
        const akg_sketch_expr *last = e->items[npos - 1];
        entry *en = last->kind == AKG_SKETCH_EXPR_NAME ? lookup(c, last->text) : NULL;
        if (en && en->kind == E_TILE && (npos > op->max_args || op->cat == OP_GEMM)) {
            dst = last;
            if (op->cat != OP_GEMM)
                npos--;
        }
    }
    if (npos < op->min_args || npos > op->max_args) {
        if (op->min_args == op->max_args)
            diag(c, AKG_SKETCH_ERROR, e->span, "%s() takes %zu argument%s but %zu %s given: %s",
                 op->name, op->min_args, op->min_args == 1 ? "" : "s", npos,
                 npos == 1 ? "was" : "were", op->usage);
        else
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "%s() takes %zu to %zu arguments but %zu %s given: %s", op->name, op->min_args,
                 op->max_args, npos, npos == 1 ? "was" : "were", op->usage);
        return t_err();
    }
    vtype args[8];
    size_t na = npos < 8 ? npos : 8;
    for (size_t i = 0; i < na; i++) {
        bool shape_arg = (op->cat == OP_FILL || op->cat == OP_ZEROS) && i == 0;
        bool dtype_pos = op->cat == OP_CAST && i == 1;
        if (shape_arg || dtype_pos) {
            args[i] = t_err();
            continue;
        }
        if (tensor_in_compute(c, e->items[i]))
            return t_err();
        args[i] = type_of(c, e->items[i]);
        if (args[i].kind == T_ERROR)
            return t_err();
    }
    for (size_t i = 0; i < e->n_kw; i++)
        if (strcmp(e->kw_names[i], "dtype") != 0 && strcmp(e->kw_names[i], "dst") != 0)
            (void)type_of(c, e->kw_values[i]);
    vtype r = t_err();
    int64_t axis;
    bool given;
    switch (op->cat) {
    case OP_UNARY:
        if (args[0].kind != T_TILE && args[0].kind != T_SCALAR)
            goto need_tile;
        for (size_t i = 1; i < na; i++)
            if (args[i].kind != T_SCALAR) {
                diag(c, AKG_SKETCH_ERROR, e->items[i]->span,
                     "%s() parameter %zu must be a scalar: %s", op->name, i, op->usage);
                return t_err();
            }
        r = args[0];
        break;
    case OP_BINARY:
    case OP_CMP:
        if (args[0].kind == T_SCALAR && args[1].kind == T_SCALAR && op->cat == OP_BINARY) {
            r = t_scalar(is_float(args[0].dtype) || is_float(args[1].dtype) ? AKG_DTYPE_F32
                                                                            : AKG_DTYPE_I64);
            break;
        }
        if (!broadcast(c, op->name, e->span, &args[0], &args[1], &r) ||
            !check_dtypes(c, op->name, e->span, &args[0], &args[1]))
            return t_err();
        if (op->cat == OP_CMP)
            r.dtype = AKG_DTYPE_BOOL;
        break;
    case OP_WHERE:
        if (args[0].kind == T_TILE && args[0].dtype && args[0].dtype != AKG_DTYPE_BOOL) {
            diag(c, AKG_SKETCH_ERROR, e->items[0]->span,
                 "where() needs a bool mask as its first argument, got %s",
                 akg_dtype_name(args[0].dtype));
            return t_err();
        }
        {
            vtype t1;
            if (!broadcast(c, op->name, e->span, &args[0], &args[1], &t1) ||
                !broadcast(c, op->name, e->span, &t1, &args[2], &r) ||
                !check_dtypes(c, op->name, e->span, &args[1], &args[2]))
                return t_err();
            r.dtype = args[1].kind == T_TILE ? args[1].dtype : args[2].dtype;
        }
        break;
    case OP_REDUCE: {
        if (args[0].kind != T_TILE)
            goto need_tile;
        if (!axis_arg(c, e, 1, &args[0], INT64_MIN, &axis, &given))
            return t_err();
        const akg_sketch_expr *kd = akg_sketch_expr_kwarg(e, "keepdim");
        bool keep = !kd || kd->ival != 0;
        r = args[0];
        if (axis == INT64_MIN) { /* all axes (or a list): keep rank, sizes unknown unless all */
            for (size_t d = 0; d < r.rank; d++)
                r.dims[d] = given ? (lin){.ok = false} : lin_const(1);
            if (!keep)
                r.rank = given ? r.rank : 0;
        } else if (keep) {
            r.dims[axis] = lin_const(1);
        } else {
            for (size_t d = (size_t)axis; d + 1 < r.rank; d++)
                r.dims[d] = r.dims[d + 1];
            r.rank--;
        }
        if (strcmp(op->name, "argmax") == 0 || strcmp(op->name, "argmin") == 0 ||
            strcmp(op->name, "reduce_argmax") == 0)
            r.dtype = AKG_DTYPE_I32;
        break;
    }
    case OP_SCAN:
    case OP_SOFTMAX:
        if (args[0].kind != T_TILE)
            goto need_tile;
        if (!axis_arg(c, e, 1, &args[0], -1, &axis, &given))
            return t_err();
        r = args[0];
        break;
    case OP_GEMM: {
        const char *an = e->items[0]->kind == AKG_SKETCH_EXPR_NAME ? e->items[0]->text : "a";
        const char *bn = e->items[1]->kind == AKG_SKETCH_EXPR_NAME ? e->items[1]->text : "b";
        if (args[0].kind != T_TILE || args[1].kind != T_TILE)
            goto need_tile;
        if (args[0].rank != 2 || args[1].rank != 2) {
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "%s() needs rank-2 tiles, got '%s' of rank %zu and '%s' of rank %zu", op->name, an,
                 args[0].rank, bn, args[1].rank);
            return t_err();
        }
        const akg_sketch_expr *ta = akg_sketch_expr_kwarg(e, "trans_a"),
                              *tb = akg_sketch_expr_kwarg(e, "trans_b");
        size_t am = ta && ta->ival ? 1 : 0, ak = 1 - am, bk = tb && tb->ival ? 1 : 0, bn_ = 1 - bk;
        if (lin_clash(&args[0].dims[ak], &args[1].dims[bk])) {
            char sa[160], sb[160];
            shape_str(&args[0], sa, sizeof sa);
            shape_str(&args[1], sb, sizeof sb);
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "%s() inner dimensions differ: '%s' is %s and '%s' is %s", op->name, an, sa, bn,
                 sb);
            return t_err();
        }
        memset(&r, 0, sizeof r);
        r.kind = T_TILE;
        r.rank = 2;
        r.dims[0] = args[0].dims[am];
        r.dims[1] = args[1].dims[bn_];
        r.dtype = AKG_DTYPE_F32;
        vtype acc = na > 2 ? args[2] : t_err();
        if (dst && na <= 2) {
            acc = type_of(c, dst);
        }
        if (acc.kind == T_TILE) {
            if (acc.rank != 2 || lin_clash(&acc.dims[0], &r.dims[0]) ||
                lin_clash(&acc.dims[1], &r.dims[1])) {
                char sa[160], sr[160];
                shape_str(&acc, sa, sizeof sa);
                shape_str(&r, sr, sizeof sr);
                diag(c, AKG_SKETCH_ERROR, e->span,
                     "%s() accumulator has shape %s but the product has shape %s", op->name, sa,
                     sr);
                return t_err();
            }
            if (acc.dtype)
                r.dtype = acc.dtype;
        }
        break;
    }
    case OP_DOT:
        if (args[0].kind != T_TILE || args[1].kind != T_TILE)
            goto need_tile;
        if (args[0].rank == 1 && args[1].rank == 1) {
            if (lin_clash(&args[0].dims[0], &args[1].dims[0])) {
                diag(c, AKG_SKETCH_ERROR, e->span, "dot() operands have different lengths");
                return t_err();
            }
            memset(&r, 0, sizeof r);
            r.kind = T_TILE;
            r.rank = 1;
            r.dims[0] = lin_const(1);
            r.dtype = AKG_DTYPE_F32;
        } else if (args[0].rank == 2 && args[1].rank == 2) {
            if (lin_clash(&args[0].dims[1], &args[1].dims[0])) {
                diag(c, AKG_SKETCH_ERROR, e->span, "dot() inner dimensions differ");
                return t_err();
            }
            memset(&r, 0, sizeof r);
            r.kind = T_TILE;
            r.rank = 2;
            r.dims[0] = args[0].dims[0];
            r.dims[1] = args[1].dims[1];
            r.dtype = AKG_DTYPE_F32;
        } else {
            diag(c, AKG_SKETCH_ERROR, e->span, "dot() needs two rank-1 or two rank-2 tiles");
            return t_err();
        }
        break;
    case OP_TRANSPOSE:
        if (args[0].kind != T_TILE)
            goto need_tile;
        r = args[0];
        if (na == 1) {
            if (r.rank != 2) {
                diag(c, AKG_SKETCH_ERROR, e->span,
                     "transpose() without a permutation needs a rank-2 tile; pass perm=[...]");
                return t_err();
            }
            r.dims[0] = args[0].dims[1];
            r.dims[1] = args[0].dims[0];
        } else {
            const akg_sketch_expr *perm = e->items[1];
            if (perm->kind != AKG_SKETCH_EXPR_LIST || perm->n_items != r.rank) {
                diag(c, AKG_SKETCH_ERROR, perm->span,
                     "transpose() permutation must list all %zu axes", r.rank);
                return t_err();
            }
            for (size_t d = 0; d < r.rank; d++) {
                int64_t v;
                if (!const_int(c, perm->items[d], &v) || v < 0 || v >= (int64_t)r.rank) {
                    diag(c, AKG_SKETCH_ERROR, perm->items[d]->span,
                         "permutation entries must be axes 0..%zu", r.rank - 1);
                    return t_err();
                }
                r.dims[d] = args[0].dims[v];
            }
        }
        break;
    case OP_GATHER: {
        if (args[0].kind != T_TILE || args[1].kind != T_TILE)
            goto need_tile;
        const char *xn = e->items[0]->kind == AKG_SKETCH_EXPR_NAME ? e->items[0]->text : "x";
        bool kw_axis = akg_sketch_expr_kwarg(e, "axis") != NULL;
        if (!kw_axis && na < 3) {
            diag(c, AKG_SKETCH_ERROR, e->span, "gather() needs the axis to gather along: %s",
                 op->usage);
            return t_err();
        }
        if (kw_axis && na > 2) {
            diag(c, AKG_SKETCH_ERROR, e->items[2]->span,
                 "gather() has its axis twice, by position and as axis=; keep one");
            return t_err();
        }
        if (!axis_arg(c, e, 2, &args[0], 0, &axis, &given))
            return t_err();
        if (axis == INT64_MIN) {
            diag(c, AKG_SKETCH_ERROR,
                 akg_sketch_expr_kwarg(e, "axis") ? akg_sketch_expr_kwarg(e, "axis")->span
                                                  : e->span,
                 "gather() gathers along one axis: give an integer, not a list");
            return t_err();
        }
        if (args[1].dtype && !is_integer(args[1].dtype)) {
            diag(c, AKG_SKETCH_ERROR, e->items[1]->span,
                 "gather() index must be an integer tile, got %s; convert it with cast(index, i32)",
                 akg_dtype_name(args[1].dtype));
            return t_err();
        }
        if (args[1].rank != args[0].rank) {
            diag(c, AKG_SKETCH_ERROR, e->items[1]->span,
                 "gather() index has rank %zu but '%s' has rank %zu; give the index the same rank "
                 "(add unit axes "
                 "with None, e.g. idx[:, None])",
                 args[1].rank, xn, args[0].rank);
            return t_err();
        }
        for (size_t d = 0; d < args[0].rank; d++) {
            if ((int64_t)d == axis)
                continue;
            lin room = lin_add(args[0].dims[d], args[1].dims[d], -1);
            if (lin_is_const(&room) && room.c < 0) {
                char sx[160], si[160];
                shape_str(&args[0], sx, sizeof sx);
                shape_str(&args[1], si, sizeof si);
                diag(c, AKG_SKETCH_ERROR, e->items[1]->span,
                     "gather() index %s is larger than '%s' %s on axis %zu; only the gather axis "
                     "(%lld) may be larger",
                     si, xn, sx, d, (long long)axis);
                return t_err();
            }
        }
        r = args[1];
        r.dtype = args[0].dtype;
        break;
    }
    case OP_CAST:
        if (args[0].kind != T_TILE && args[0].kind != T_SCALAR)
            goto need_tile;
        r = args[0];
        r.dtype = dtype_arg(c, e->items[1]);
        if (!r.dtype)
            return t_err();
        break;
    case OP_FILL:
    case OP_ZEROS:
        r = shape_from_list(c, e->items[0], op->name);
        if (r.kind == T_ERROR)
            return r;
        if (op->cat == OP_FILL && na > 1 && args[1].kind != T_SCALAR) {
            diag(c, AKG_SKETCH_ERROR, e->items[1]->span, "fill() value must be a scalar");
            return t_err();
        }
        r.dtype = akg_sketch_expr_kwarg(e, "dtype")
                      ? dtype_arg(c, akg_sketch_expr_kwarg(e, "dtype"))
                      : AKG_DTYPE_F32;
        break;
    case OP_ARANGE: {
        for (size_t i = 0; i < na; i++)
            if (args[i].kind != T_SCALAR) {
                diag(c, AKG_SKETCH_ERROR, e->items[i]->span, "arange() bounds must be integers");
                return t_err();
            }
        memset(&r, 0, sizeof r);
        r.kind = T_TILE;
        r.rank = 1;
        r.dims[0] = na == 1 ? to_lin(c, e->items[0], 0)
                            : lin_add(to_lin(c, e->items[1], 0), to_lin(c, e->items[0], 0), -1);
        r.dtype = AKG_DTYPE_I32;
        break;
    }
    case OP_INDEX:
        for (size_t i = 0; i < na; i++)
            if (args[i].kind == T_TILE) {
                if (strcmp(op->name, "min") == 0 || strcmp(op->name, "max") == 0)
                    break;
                diag(c, AKG_SKETCH_ERROR, e->items[i]->span, "%s() works on integers, not tiles",
                     op->name);
                return t_err();
            }
        if ((strcmp(op->name, "min") == 0 || strcmp(op->name, "max") == 0) &&
            (args[0].kind == T_TILE || (na > 1 && args[1].kind == T_TILE))) {
            if (na != 2) {
                diag(c, AKG_SKETCH_ERROR, e->span, "%s() of tiles takes exactly 2 arguments",
                     op->name);
                return t_err();
            }
            if (!broadcast(c, op->name, e->span, &args[0], &args[1], &r) ||
                !check_dtypes(c, op->name, e->span, &args[0], &args[1]))
                return t_err();
            break;
        }
        r = t_scalar(AKG_DTYPE_I64);
        break;
    default:
        r = args[0];
        break;
    }
    if (dst_out)
        *dst_out = dst;
    return r;
need_tile:
    diag(c, AKG_SKETCH_ERROR, e->span, "%s() needs a tile operand: %s", op->name, op->usage);
    return t_err();
}

/* ---- hints -------------------------------------------------------------------------------------
 */

static const char *const hint_kinds[] = {"parallel", "pipeline", "vectorize", "unroll", "math"};
static const char *const hint_contexts[] = {"grididx", "threadidx", "coreidx", "warp", "simd"};
/* How a parallel loop's iterations are dealt to its workers (sketch-grammar/README.md). */
static const char *const parallel_schedules[] = {"block", "cyclic", "dynamic"};
static const char *const math_modes[] = {"fast", "precise"};
static const char *const mem_tiers[] = {"fastest", "fast", "medium", "slow"};
static const char *const mem_others[] = {
    "accumulator",   "init_zero",      "double_buffer", "reuse",   "input_cache",
    "output_buffer", "temp_workspace", "init_neg_inf",  "no_init", "shared_between_threads"};
static const char *const move_hints[] = {
    "cooperative_load", "cooperative_store", "vectorized", "strided",    "broadcast",
    "mask_boundary",    "assume_aligned",    "block_ptr",  "atomic_add", "nontemporal"};

static bool in_list(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s, list[i]) == 0)
            return true;
    return false;
}

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static bool all_digits(const char *s)
{
    return s[0] && strspn(s, "0123456789") == strlen(s);
}

/* @llm_hint("math", MODE): exactly one of fast / precise. */
static void check_math_hint(checker *c, const sketch_hint *hn)
{
    if (hn->n_args != 2) {
        diag(c, AKG_SKETCH_ERROR, hn->n_args > 2 ? hn->arg_spans[2] : hn->span,
             "@llm_hint(\"math\") takes one mode: @llm_hint(\"math\", \"fast\") or "
             "@llm_hint(\"math\", \"precise\")");
        return;
    }
    if (in_list(hn->args[1], math_modes, COUNT(math_modes)))
        return;
    const char *sug = closest(hn->args[1], math_modes, COUNT(math_modes));
    char more[64] = "";
    if (sug)
        snprintf(more, sizeof more, " (did you mean '%s'?)", sug);
    diag(c, AKG_SKETCH_ERROR, hn->arg_spans[1],
         "unknown math mode '%s'%s; @llm_hint(\"math\", ...) takes \"fast\" or "
         "\"precise\"",
         hn->args[1], more);
}

static void check_hints(checker *c, const akg_sketch_stmt *st)
{
    const sketch_hint *math = NULL; /* the first math hint, to find a conflicting second one */
    for (size_t h = 0; h < st->n_hints; h++) {
        const sketch_hint *hn = &st->hints[h];
        if (strcmp(hn->name, "llm_hint") != 0) {
            diag(c, AKG_SKETCH_ERROR, hn->name_span,
                 "unknown decorator '@%s'; the only decorator is @llm_hint(...)", hn->name);
            continue;
        }
        if (hn->n_args == 0) {
            diag(c, AKG_SKETCH_ERROR, hn->span,
                 "@llm_hint needs a hint, e.g. @llm_hint(\"parallel\", \"grididx\")");
            continue;
        }
        const char *kind = hn->args[0];
        if (!in_list(kind, hint_kinds, COUNT(hint_kinds))) {
            const char *sug = closest(kind, hint_kinds, COUNT(hint_kinds));
            char more[64] = "";
            if (sug)
                snprintf(more, sizeof more, " (did you mean '%s'?)", sug);
            diag(c, AKG_SKETCH_ERROR, hn->arg_spans[0],
                 "unknown hint '%s'%s; known hints: parallel, pipeline, vectorize, unroll, math",
                 kind, more);
            continue;
        }
        bool is_math = strcmp(kind, "math") == 0, is_vectorize = strcmp(kind, "vectorize") == 0;
        if (is_math) {
            check_math_hint(c, hn);
            if (math && hn->n_args == 2 && math->n_args == 2 &&
                strcmp(math->args[1], hn->args[1]) != 0)
                diag(c, AKG_SKETCH_ERROR, hn->arg_spans[1],
                     "conflicting math modes \"%s\" and \"%s\" on one statement; "
                     "pick one",
                     math->args[1], hn->args[1]);
            if (!math)
                math = hn;
        }
        bool width_seen = false, schedule_seen = false;
        bool is_parallel = strcmp(kind, "parallel") == 0;
        for (size_t a = 1; a < hn->n_args && !is_math; a++) {
            /* parallel takes one schedule after its context */
            if (is_parallel &&
                in_list(hn->args[a], parallel_schedules, COUNT(parallel_schedules))) {
                if (schedule_seen)
                    diag(c, AKG_SKETCH_ERROR, hn->arg_spans[a],
                         "@llm_hint(\"parallel\") takes one schedule (block, cyclic or dynamic), "
                         "e.g. @llm_hint(\"parallel\", \"coreidx\", \"dynamic\")");
                schedule_seen = true;
                continue;
            }
            /* unroll takes a count; vectorize one vector width in elements */
            if ((strcmp(kind, "unroll") == 0 || is_vectorize) && all_digits(hn->args[a])) {
                if (is_vectorize && width_seen) {
                    diag(c, AKG_SKETCH_ERROR, hn->arg_spans[a],
                         "@llm_hint(\"vectorize\") takes one vector width, e.g. "
                         "@llm_hint(\"vectorize\", \"simd\", 8)");
                } else if (is_vectorize && strspn(hn->args[a], "0") == strlen(hn->args[a])) {
                    diag(c, AKG_SKETCH_ERROR, hn->arg_spans[a],
                         "vector width must be a positive number of elements, e.g. 8 (8 f32 lanes "
                         "= 256 bits)");
                }
                width_seen = true;
                continue;
            }
            char base[32];
            snprintf(base, sizeof base, "%s", hn->args[a]);
            char *dot = strchr(base, '.');
            bool axis_ok = true;
            if (dot) {
                axis_ok =
                    (strcmp(dot, ".x") == 0 || strcmp(dot, ".y") == 0 || strcmp(dot, ".z") == 0);
                *dot = '\0';
            }
            if (!axis_ok || !in_list(base, hint_contexts, COUNT(hint_contexts))) {
                const char *sug = closest(base, hint_contexts, COUNT(hint_contexts));
                char more[64] = "";
                if (sug)
                    snprintf(more, sizeof more, " (did you mean '%s'?)", sug);
                diag(c, AKG_SKETCH_ERROR, hn->arg_spans[a],
                     "unknown hint context '%s'%s; known: grididx, threadidx, coreidx, warp, simd "
                     "(optionally .x/.y/.z)%s",
                     hn->args[a], more,
                     strcmp(kind, "unroll") == 0 ? ", or a count"
                     : is_vectorize              ? ", or a vector width such as 8"
                     : is_parallel               ? ", or a schedule: block, cyclic, dynamic"
                                                 : "");
            }
        }
        bool loop_only = !is_vectorize && !is_math;
        if (st->kind != AKG_SKETCH_STMT_FOR && (loop_only || st->kind == AKG_SKETCH_STMT_PASS)) {
            diag(c, AKG_SKETCH_ERROR, hn->span, "@llm_hint(\"%s\") applies to a for loop%s", kind,
                 loop_only ? "" : " or a computation");
        }
    }
}

static void check_move_options(checker *c, const akg_sketch_stmt *st)
{
    for (size_t i = 0; i < st->n_opts; i++) {
        const char *n = st->opt_names[i];
        const akg_sketch_expr *v = st->opt_values[i];
        if (strcmp(n, "mask") == 0) {
            vtype m = type_of(c, v);
            if (m.kind == T_TILE && m.dtype && m.dtype != AKG_DTYPE_BOOL)
                diag(c, AKG_SKETCH_ERROR, v->span,
                     "mask must be a bool tile (e.g. offs < N), got %s", akg_dtype_name(m.dtype));
        } else if (strcmp(n, "other") == 0) {
            vtype o = type_of(c, v);
            if (o.kind != T_SCALAR && o.kind != T_ERROR)
                diag(c, AKG_SKETCH_ERROR, v->span, "other= must be a scalar fill value");
        } else if (strcmp(n, "llm_hint") == 0) {
            size_t n_items = v->kind == AKG_SKETCH_EXPR_LIST ? v->n_items : 1;
            for (size_t k = 0; k < n_items; k++) {
                const akg_sketch_expr *it = v->kind == AKG_SKETCH_EXPR_LIST ? v->items[k] : v;
                if (it->kind != AKG_SKETCH_EXPR_STRING)
                    diag(c, AKG_SKETCH_ERROR, it->span, "llm_hint entries must be strings");
                else if (!in_list(it->text, move_hints, COUNT(move_hints)))
                    diag(c, AKG_SKETCH_WARNING, it->span,
                         "unknown data-movement hint '%s'; the coder may ignore it", it->text);
            }
        } else {
            diag(c, AKG_SKETCH_ERROR, st->opt_spans[i],
                 "%s() has no option '%s'; options are mask=, other= and llm_hint=",
                 st->kind == AKG_SKETCH_STMT_LOAD ? "load" : "store", n);
        }
    }
}

/* ---- statements
 * ---------------------------------------------------------------------------------- */

static void check_block(checker *c, const sketch_block *blk);

static bool is_tile_name(checker *c, const akg_sketch_expr *e, entry **out)
{
    if (e->kind != AKG_SKETCH_EXPR_NAME)
        return false;
    entry *en = lookup(c, e->text);
    if (out)
        *out = en;
    return en && en->kind == E_TILE;
}

/* Type of a load source / store target: a tensor or tile, whole or sliced. */
static vtype place_type(checker *c, const akg_sketch_expr *e, entry **base_out,
                        bool want_tensor_or_tile)
{
    const akg_sketch_expr *base = e->kind == AKG_SKETCH_EXPR_SUBSCRIPT ? e->a : e;
    *base_out = NULL;
    if (base->kind != AKG_SKETCH_EXPR_NAME) {
        diag(c, AKG_SKETCH_ERROR, e->span,
             "expected a tensor or tile, optionally sliced, such as A[i:i+BM, :]");
        return t_err();
    }
    entry *en = lookup(c, base->text);
    if (!en) {
        (void)type_of(c, base);
        return t_err();
    }
    if (want_tensor_or_tile && en->kind != E_TENSOR && en->kind != E_TILE) {
        diag(c, AKG_SKETCH_ERROR, base->span, "'%s' is a %s, not a tensor or tile", base->text,
             kind_name(en->kind));
        return t_err();
    }
    *base_out = en;
    vtype bt = type_get(en);
    bt.kind = T_TILE;
    if (e->kind == AKG_SKETCH_EXPR_SUBSCRIPT)
        return subscript_type(c, e, &bt, base->text);
    return bt;
}

/* Compares the moved region's shape with the tile's; unit dimensions may be dropped. */
static void compare_move(checker *c, const akg_sketch_stmt *st, const vtype *region,
                         const vtype *tile, const char *tile_name)
{
    lin a[AKG_SKETCH_MAX_RANK], b[AKG_SKETCH_MAX_RANK];
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < region->rank; i++)
        if (!(lin_is_const(&region->dims[i]) && region->dims[i].c == 1))
            a[na++] = region->dims[i];
    for (size_t i = 0; i < tile->rank; i++)
        if (!(lin_is_const(&tile->dims[i]) && tile->dims[i].c == 1))
            b[nb++] = tile->dims[i];
    char sr[200], st_[200];
    shape_str(region, sr, sizeof sr);
    shape_str(tile, st_, sizeof st_);
    const char *verb = st->kind == AKG_SKETCH_STMT_LOAD ? "load" : "store";
    if (na != nb) {
        bool unknown = false;
        for (size_t i = 0; i < region->rank; i++)
            unknown |= !region->dims[i].ok;
        for (size_t i = 0; i < tile->rank; i++)
            unknown |= !tile->dims[i].ok;
        if (!unknown)
            diag(c, AKG_SKETCH_ERROR, st->span,
                 "%s shape mismatch: the region is %s but tile '%s' is %s", verb, sr, tile_name,
                 st_);
        return;
    }
    for (size_t i = 0; i < na; i++)
        if (lin_clash(&a[i], &b[i])) {
            diag(c, AKG_SKETCH_ERROR, st->span,
                 "%s shape mismatch: the region is %s but tile '%s' is %s", verb, sr, tile_name,
                 st_);
            return;
        }
}

static void define_value(checker *c, const char *name, akg_sketch_span sp, const vtype *t,
                         bool known, int64_t v)
{
    entry *en = lookup(c, name);
    if (en && (en->kind == E_TENSOR || en->kind == E_SYMBOL || en->kind == E_PARAM ||
               en->kind == E_LOOPVAR ||
               (en->kind == E_CONST && (en->has_value || c->s->consts ? false : false)))) {
        const char *why =
            en->kind == E_TENSOR ? "; tensors are written with store(tile -> tensor[...])" : "";
        diag(c, AKG_SKETCH_ERROR, sp, "cannot assign to %s '%s'%s", kind_name(en->kind), name, why);
        return;
    }
    if (en && en->kind == E_CONST) {
        if (en->has_value) {
            diag(c, AKG_SKETCH_ERROR, sp, "constexpr '%s' already has a value", name);
            return;
        }
        if (!known) {
            diag(c, AKG_SKETCH_ERROR, sp, "constexpr '%s' must be given a constant integer value",
                 name);
            return;
        }
        en->has_value = true;
        en->value = v;
        return;
    }
    entry *ne = define(c, name, t->kind == T_TILE ? E_TILE : E_SCALAR, sp);
    if (!ne)
        return;
    type_set(c, ne, t);
    ne->has_value = known;
    ne->value = v;
    /* a redefinition inherits the previous tile's memory but not its loaded state */
}

static void check_stmt(checker *c, const akg_sketch_stmt *st)
{
    if (c->err)
        return;
    check_hints(c, st);
    switch (st->kind) {
    case AKG_SKETCH_STMT_PASS:
        return;
    case AKG_SKETCH_STMT_FOR: {
        const akg_sketch_expr *it = st->iter;
        if (!it || it->kind != AKG_SKETCH_EXPR_CALL || strcmp(it->text, "range") != 0) {
            diag(c, AKG_SKETCH_ERROR, it ? it->span : st->span,
                 "for loops iterate over range(start, stop[, step])");
        } else if (it->n_kw || it->n_items < 1 || it->n_items > 3) {
            diag(c, AKG_SKETCH_ERROR, it->span,
                 "range() takes 1 to 3 positional arguments: range([start,] stop[, step])");
        } else {
            for (size_t i = 0; i < it->n_items; i++) {
                vtype t = type_of(c, it->items[i]);
                if (t.kind != T_SCALAR && t.kind != T_ERROR)
                    diag(c, AKG_SKETCH_ERROR, it->items[i]->span,
                         "range() bounds must be integer expressions");
            }
            int64_t step;
            if (st->step && const_int(c, st->step, &step) && step <= 0)
                diag(c, AKG_SKETCH_ERROR, st->step->span, "range() step must be positive, got %lld",
                     (long long)step);
        }
        entry *prev = lookup(c, st->var);
        if (prev && prev->kind != E_SCALAR && prev->kind != E_LOOPVAR) {
            diag(c, AKG_SKETCH_ERROR, st->var_span,
                 "loop variable '%s' shadows the %s declared at line %u", st->var,
                 kind_name(prev->kind), prev->span.line + 1);
        }
        size_t mark = c->n_env;
        entry *lv = define(c, st->var, E_LOOPVAR, st->var_span);
        if (lv)
            type_set(c, lv, &(vtype){.kind = T_SCALAR, .dtype = AKG_DTYPE_I64});
        check_block(c, &st->body[0]);
        /* names assigned in the body stay visible afterwards (Python scoping);
         * only the loop variable's binding is kept as a plain scalar */
        (void)mark;
        return;
    }
    case AKG_SKETCH_STMT_IF: {
        vtype t = type_of(c, st->cond);
        if (t.kind == T_TILE)
            diag(c, AKG_SKETCH_ERROR, st->cond->span,
                 "if condition must be a scalar; for an element-wise choice use where(mask, a, b) "
                 "or mask=");
        check_block(c, &st->body[0]);
        check_block(c, &st->body[1]);
        return;
    }
    case AKG_SKETCH_STMT_ALLOC: {
        const akg_sketch_expr *call = st->value;
        for (size_t i = 0; i < call->n_kw; i++) {
            const char *k = call->kw_names[i];
            if (strcmp(k, "llm_hint") && strcmp(k, "dtype") && strcmp(k, "shape"))
                diag(c, AKG_SKETCH_ERROR, call->kw_spans[i],
                     "alloc() has no argument '%s'; it accepts shape, dtype=, llm_hint=", k);
        }
        if (call->n_items > 2)
            diag(c, AKG_SKETCH_ERROR, call->span,
                 "alloc() takes a shape list, then dtype= and llm_hint=");
        vtype t = shape_from_list(c, st->alloc_shape, "alloc()");
        const akg_sketch_expr *dt = akg_sketch_expr_kwarg(call, "dtype");
        if (!dt && call->n_items > 1)
            dt = call->items[1];
        if (dt)
            t.dtype = dtype_arg(c, dt);
        const akg_sketch_expr *h = akg_sketch_expr_kwarg(call, "llm_hint");
        if (h && h->kind != AKG_SKETCH_EXPR_STRING && h->kind != AKG_SKETCH_EXPR_LIST)
            diag(c, AKG_SKETCH_ERROR, h->span, "llm_hint must be a string or a list of strings");
        if (h && h->kind == AKG_SKETCH_EXPR_LIST)
            for (size_t i = 0; i < h->n_items; i++)
                if (h->items[i]->kind != AKG_SKETCH_EXPR_STRING)
                    diag(c, AKG_SKETCH_ERROR, h->items[i]->span,
                         "llm_hint entries must be strings such as \"fast\"");
        const char *tier = NULL;
        for (size_t i = 0; i < st->n_alloc_hints; i++) {
            const char *hn = st->alloc_hints[i];
            if (in_list(hn, mem_tiers, COUNT(mem_tiers))) {
                if (tier && strcmp(tier, hn) != 0)
                    diag(c, AKG_SKETCH_ERROR, st->alloc_hint_spans[i],
                         "conflicting memory tiers \"%s\" and \"%s\"; pick one", tier, hn);
                tier = hn;
            } else if (!in_list(hn, mem_others, COUNT(mem_others))) {
                const char *sug = closest(hn, mem_tiers, COUNT(mem_tiers));
                if (!sug)
                    sug = closest(hn, mem_others, COUNT(mem_others));
                char more[64] = "";
                if (sug)
                    snprintf(more, sizeof more, " (did you mean '%s'?)", sug);
                diag(c, AKG_SKETCH_WARNING, st->alloc_hint_spans[i],
                     "unknown memory hint '%s'%s; tiers: fastest, fast, medium, slow; purposes: "
                     "accumulator, init_zero, "
                     "double_buffer, reuse",
                     hn, more);
            }
        }
        if (t.kind == T_ERROR)
            t.kind = T_TILE;
        define_value(c, st->targets[0], st->target_spans[0], &t, false, 0);
        return;
    }
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE: {
        bool load = st->kind == AKG_SKETCH_STMT_LOAD;
        check_move_options(c, st);
        entry *src_base = NULL, *dst_base = NULL;
        vtype region, tile;
        const char *tile_name = "?";
        if (load) {
            region = place_type(c, st->src, &src_base, true);
            if (src_base && src_base->kind == E_TILE)
                src_base->loaded_unused = false;
            entry *te = NULL;
            /* the target: a tile, or a region of one (`load(x[i, :] -> t[0, :])` fills that part)
             */
            const akg_sketch_expr *part =
                st->dst->kind == AKG_SKETCH_EXPR_SUBSCRIPT ? st->dst : NULL;
            const akg_sketch_expr *tgt = part ? part->a : st->dst;
            if (!is_tile_name(c, tgt, &te)) {
                if (tgt->kind == AKG_SKETCH_EXPR_NAME && !te)
                    diag(c, AKG_SKETCH_ERROR, tgt->span,
                         "load target '%s' is not allocated; allocate it first: %s = alloc([...])",
                         tgt->text, tgt->text);
                else if (te && te->kind == E_TENSOR)
                    diag(c, AKG_SKETCH_ERROR, tgt->span,
                         "load target '%s' is a tensor; a load fills a tile or part of one (t, "
                         "t[0:4, :]), and tensors are "
                         "written with store(tile -> %s[...])",
                         tgt->text, tgt->text);
                else
                    diag(c, AKG_SKETCH_ERROR, st->dst->span,
                         "load target must be an allocated tile or a region of one, such as t or "
                         "t[0:4, :]");
                return;
            }
            tile = type_get(te);
            tile_name = te->name;
            char part_name[128];
            if (part) {
                size_t errors_before = c->errors;
                for (size_t i = 0; i < part->n_items; i++)
                    if (part->items[i]->kind == AKG_SKETCH_EXPR_NONE) {
                        diag(c, AKG_SKETCH_ERROR, part->items[i]->span,
                             "a load target region takes integer indices and slices; None (a new "
                             "axis) is not one");
                        return;
                    }
                tile.kind = T_TILE;
                tile = subscript_type(c, part, &tile, te->name);
                if (tile.kind == T_ERROR)
                    return;
                /* typed once more only when clean, so no diagnostic repeats */
                for (size_t i = 0; i < part->n_items && c->errors == errors_before; i++)
                    if (part->items[i]->kind != AKG_SKETCH_EXPR_SLICE &&
                        type_of(c, part->items[i]).kind == T_TILE) {
                        diag(c, AKG_SKETCH_ERROR, part->items[i]->span,
                             "a load target region takes integer indices and slices, not an index "
                             "tile");
                        return;
                    }
                if (c->errors != errors_before)
                    return;
                char *txt = akg_sketch_expr_to_string(part);
                snprintf(part_name, sizeof part_name, "%s", txt ? txt : te->name);
                free(txt);
                tile_name = part_name;
            }
            if (region.kind == T_ERROR)
                return;
            if (src_base && src_base->kind == E_TENSOR)
                c->s->tensors[src_base->tensor].loaded = true;
            compare_move(c, st, &region, &tile, tile_name);
            if (!te->type->dtype)
                te->type->dtype = region.dtype;
            te->loaded_unused = true;
            te->load_span = st->span;
        } else {
            tile = type_of(c, st->src);
            if (tile.kind == T_ERROR)
                return;
            if (st->src->kind == AKG_SKETCH_EXPR_NAME) {
                entry *en = lookup(c, st->src->text);
                if (en && en->kind == E_TENSOR) {
                    diag(c, AKG_SKETCH_ERROR, st->src->span,
                         "store source must be a tile, not tensor '%s'", st->src->text);
                    return;
                }
                tile_name = st->src->text;
            } else {
                tile_name = "<expression>";
            }
            if (tile.kind != T_TILE) {
                diag(c, AKG_SKETCH_ERROR, st->src->span, "store source must be a tile");
                return;
            }
            region = place_type(c, st->dst, &dst_base, true);
            if (region.kind == T_ERROR)
                return;
            if (dst_base && dst_base->kind == E_TENSOR) {
                c->s->tensors[dst_base->tensor].stored = true;
                if (c->store_spans && c->store_spans[dst_base->tensor].line == UINT32_MAX)
                    c->store_spans[dst_base->tensor] = st->span;
            }
            compare_move(c, st, &region, &tile, tile_name);
        }
        return;
    }
    case AKG_SKETCH_STMT_CALL: {
        const akg_sketch_expr *e = st->value;
        if (e->kind != AKG_SKETCH_EXPR_CALL) {
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "this expression has no effect; assign its value or call an operation");
            return;
        }
        const akg_sketch_expr *dst = NULL;
        vtype r = call_type(c, e, &dst, true);
        if (r.kind == T_ERROR)
            return;
        if (!dst) {
            diag(c, AKG_SKETCH_ERROR, e->span,
                 "the result of %s() is discarded; assign it (t = %s(...)) or pass a "
                 "destination tile (dst=t)",
                 e->text, e->text);
            return;
        }
        entry *de = NULL;
        if (!is_tile_name(c, dst, &de)) {
            diag(c, AKG_SKETCH_ERROR, dst->span, "destination must be an allocated tile name");
            return;
        }
        if (r.kind == T_TILE) {
            vtype dt = type_get(de);
            bool clash = r.rank == dt.rank ? false : true;
            for (size_t i = 0; !clash && i < r.rank; i++)
                clash = lin_clash(&r.dims[i], &dt.dims[i]);
            if (clash) {
                char a[160], b[160];
                shape_str(&r, a, sizeof a);
                shape_str(&dt, b, sizeof b);
                diag(c, AKG_SKETCH_ERROR, e->span,
                     "%s() produces shape %s but destination '%s' is %s", e->text, a, de->name, b);
            }
            if (!de->type->dtype)
                de->type->dtype = r.dtype;
        }
        de->loaded_unused = false;
        return;
    }
    case AKG_SKETCH_STMT_ASSIGN: {
        const akg_sketch_expr *v = st->value;
        bool aug = st->op && strcmp(st->op, "=") != 0;
        if (v->kind == AKG_SKETCH_EXPR_TUPLE) {
            if (v->n_items != st->n_targets) {
                diag(c, AKG_SKETCH_ERROR, st->span, "%zu names but %zu values in this assignment",
                     st->n_targets, v->n_items);
                return;
            }
            for (size_t i = 0; i < v->n_items; i++) {
                vtype t = type_of(c, v->items[i]);
                if (t.kind == T_ERROR)
                    continue;
                int64_t k;
                bool known = t.kind == T_SCALAR && const_int(c, v->items[i], &k);
                define_value(c, st->targets[i], st->target_spans[i], &t, known, known ? k : 0);
            }
            return;
        }
        if (st->n_targets != 1) {
            diag(c, AKG_SKETCH_ERROR, st->span,
                 "%zu names but one value; unpacking is only for tuples of values", st->n_targets);
            return;
        }
        if (v->kind == AKG_SKETCH_EXPR_CALL && sketch_op_find(v->text) &&
            sketch_op_find(v->text)->cat == OP_ALLOC) {
            diag(c, AKG_SKETCH_ERROR, v->span,
                 "alloc() must be a plain assignment: t = alloc([...])");
            return;
        }
        vtype t = type_of(c, v);
        if (t.kind == T_ERROR)
            return;
        if (t.kind != T_SCALAR && t.kind != T_TILE) {
            diag(c, AKG_SKETCH_ERROR, v->span, "only numbers and tiles can be assigned");
            return;
        }
        if (v->kind == AKG_SKETCH_EXPR_NAME) {
            entry *en = lookup(c, v->text);
            if (en && en->kind == E_TENSOR) {
                diag(c, AKG_SKETCH_ERROR, v->span,
                     "tensor '%s' cannot be assigned; load it into a tile", v->text);
                return;
            }
        }
        if (aug) {
            entry *en = lookup(c, st->targets[0]);
            if (!en) {
                diag(c, AKG_SKETCH_ERROR, st->target_spans[0],
                     "'%s' is updated with %s before it is assigned", st->targets[0], st->op);
                return;
            }
            if (en->kind == E_TILE && t.kind == T_TILE) {
                vtype r, et = type_get(en);
                if (broadcast(c, st->op, st->span, &et, &t, &r))
                    check_dtypes(c, st->op, st->span, &et, &t);
            }
            en->loaded_unused = false;
            if (en->kind == E_SCALAR)
                en->has_value = false;
            return;
        }
        int64_t k;
        bool known = t.kind == T_SCALAR && const_int(c, v, &k);
        define_value(c, st->targets[0], st->target_spans[0], &t, known, known ? k : 0);
        return;
    }
    }
}

static void check_block(checker *c, const sketch_block *blk)
{
    for (size_t i = 0; i < blk->n && !c->err; i++)
        check_stmt(c, blk->items[i]);
}

/* ---- header
 * ------------------------------------------------------------------------------------------- */

static void declare(checker *c, const char *name, int kind, akg_sketch_span sp, entry **out)
{
    *out = NULL;
    entry *prev = lookup(c, name);
    if (prev) {
        diag(c, AKG_SKETCH_ERROR, sp, "'%s' is already declared as a %s at line %u", name,
             kind_name(prev->kind), prev->span.line + 1);
        return;
    }
    *out = define(c, name, kind, sp);
}

static bool contains_tune(const akg_sketch_expr *e)
{
    if (!e)
        return false;
    if (e->kind == AKG_SKETCH_EXPR_CALL && strcmp(e->text, "tune") == 0)
        return true;
    if (contains_tune(e->a) || contains_tune(e->b) || contains_tune(e->c))
        return true;
    for (size_t i = 0; i < e->n_items; i++)
        if (contains_tune(e->items[i]))
            return true;
    for (size_t i = 0; i < e->n_kw; i++)
        if (contains_tune(e->kw_values[i]))
            return true;
    return false;
}

static void check_no_tune_block(checker *c, const sketch_block *blk);
static void check_no_tune_expr(checker *c, const akg_sketch_expr *e)
{
    if (!e)
        return;
    if (e->kind == AKG_SKETCH_EXPR_CALL && strcmp(e->text, "tune") == 0) {
        diag(c, AKG_SKETCH_ERROR, e->span,
             "tune() is only allowed as the whole value of a constexpr: BM = tune(64, 128)");
        return;
    }
    check_no_tune_expr(c, e->a);
    check_no_tune_expr(c, e->b);
    check_no_tune_expr(c, e->c);
    for (size_t i = 0; i < e->n_items; i++)
        check_no_tune_expr(c, e->items[i]);
    for (size_t i = 0; i < e->n_kw; i++)
        check_no_tune_expr(c, e->kw_values[i]);
}
static void check_no_tune_block(checker *c, const sketch_block *blk)
{
    for (size_t i = 0; i < blk->n; i++) {
        const akg_sketch_stmt *st = blk->items[i];
        check_no_tune_expr(c, st->iter);
        check_no_tune_expr(c, st->cond);
        check_no_tune_expr(c, st->value);
        check_no_tune_expr(c, st->src);
        check_no_tune_expr(c, st->dst);
        check_no_tune_block(c, &st->body[0]);
        check_no_tune_block(c, &st->body[1]);
    }
}

static void check_scalar_expr(checker *c, const akg_sketch_expr *e, const char *what)
{
    vtype t = type_of(c, e);
    if (t.kind != T_SCALAR && t.kind != T_ERROR)
        diag(c, AKG_SKETCH_ERROR, e->span, "%s must be a scalar expression", what);
}

static void check_header(checker *c)
{
    akg_sketch *s = c->s;
    entry *en;
    for (size_t i = 0; i < s->n_symbols; i++) {
        declare(c, s->symbols[i].name, E_SYMBOL, s->symbols[i].span, &en);
        if (en)
            type_set(c, en, &(vtype){.kind = T_SCALAR, .dtype = AKG_DTYPE_I64});
    }
    for (size_t i = 0; i < s->n_consts; i++) {
        sketch_const *k = &s->consts[i];
        const akg_sketch_expr *v = k->value;
        if (v && k->tunable) {
            if (v->n_items == 0 || v->n_kw) {
                diag(c, AKG_SKETCH_ERROR, v->span,
                     "tune() needs one or more candidate values: tune(64, 128, 256)");
            } else {
                for (size_t j = 0; j < v->n_items; j++) {
                    const akg_sketch_expr *cand = v->items[j];
                    int64_t x;
                    if (cand->kind == AKG_SKETCH_EXPR_FLOAT || cand->kind == AKG_SKETCH_EXPR_BOOL)
                        continue;
                    if (!(cand->kind == AKG_SKETCH_EXPR_INT ||
                          (cand->kind == AKG_SKETCH_EXPR_UNARY &&
                           akg_sketch_expr_eval(s, cand, NULL, 0, &x) == 0)))
                        diag(c, AKG_SKETCH_ERROR, cand->span,
                             "tune() candidates must be literal numbers");
                    for (size_t q = 0; q < j; q++)
                        if (sketch_expr_equal(v->items[q], cand))
                            diag(c, AKG_SKETCH_WARNING, cand->span, "tune() candidate repeated");
                }
            }
        } else if (v) {
            if (contains_tune(v))
                diag(c, AKG_SKETCH_ERROR, v->span,
                     "tune() must be the whole value of a constexpr, not part of an expression");
            else
                check_scalar_expr(c, v, "a constexpr value");
        }
        declare(c, k->name, E_CONST, k->span, &en);
        if (en) {
            type_set(c, en,
                     &(vtype){.kind = T_SCALAR,
                              .dtype = v && v->kind == AKG_SKETCH_EXPR_FLOAT ? AKG_DTYPE_F32
                                                                             : AKG_DTYPE_I64});
            /* the value: the chosen candidate of a tune() (none when tune() has no candidates, an
             * error reported above), else the expression */
            const akg_sketch_expr *chosen = v;
            if (v && v->kind == AKG_SKETCH_EXPR_CALL && k->tunable)
                chosen = k->choice < v->n_items ? v->items[k->choice] : NULL;
            int64_t x;
            en->has_value = chosen && akg_sketch_expr_eval(s, chosen, NULL, 0, &x) == 0;
            en->value = en->has_value ? x : 0;
        }
    }
    for (size_t i = 0; i < s->n_params; i++) {
        sketch_param *p = &s->params[i];
        if (p->dtype_text && !p->dtype)
            diag(c, AKG_SKETCH_ERROR, p->dtype_span,
                 "unknown dtype '%s'; use one of bool, i8, i16, i32, i64, u8, f16, bf16, "
                 "f32, f64",
                 p->dtype_text);
        if (p->def) {
            if (contains_tune(p->def))
                diag(c, AKG_SKETCH_ERROR, p->def->span,
                     "tune() is only allowed on constexpr values, not on parameters");
            else
                check_scalar_expr(c, p->def, "a parameter default");
        }
        declare(c, p->name, E_PARAM, p->span, &en);
        if (en)
            type_set(c, en,
                     &(vtype){.kind = T_SCALAR, .dtype = p->dtype ? p->dtype : AKG_DTYPE_F32});
    }
    for (size_t i = 0; i < s->n_tensors; i++) {
        sketch_tensor *t = &s->tensors[i];
        t->loaded = t->stored = false;
        if (!t->dtype)
            diag(c, AKG_SKETCH_ERROR, t->dtype_span,
                 "unknown dtype '%s'; use one of bool, i8, i16, i32, i64, u8, f16, bf16, "
                 "f32, f64",
                 t->dtype_text);
        if (t->rank > AKG_SKETCH_MAX_RANK)
            diag(c, AKG_SKETCH_ERROR, t->shape_span, "tensor '%s' has rank %zu; the limit is %u",
                 t->name, t->rank, AKG_SKETCH_MAX_RANK);
        vtype ty;
        memset(&ty, 0, sizeof ty);
        ty.kind = T_TILE;
        ty.dtype = t->dtype;
        ty.rank = t->rank > AKG_SKETCH_MAX_RANK ? AKG_SKETCH_MAX_RANK : t->rank;
        for (size_t d = 0; d < ty.rank; d++) {
            check_scalar_expr(c, t->dims[d], "a tensor dimension");
            ty.dims[d] = to_lin(c, t->dims[d], 0);
        }
        declare(c, t->name, E_TENSOR, t->span, &en);
        if (en) {
            type_set(c, en, &ty);
            en->tensor = (long)i;
        }
    }
}

static void record_values(checker *c)
{
    akg_sketch *s = c->s;
    free(s->values);
    s->values = NULL;
    s->n_values = s->cap_values = 0;
    size_t n = 0;
    for (size_t i = 0; i < c->n_env; i++)
        if (c->env[i]->kind == E_TILE || c->env[i]->kind == E_SCALAR)
            n++;
    if (!n)
        return;
    s->values = calloc(n, sizeof *s->values);
    if (!s->values) {
        c->err = -ENOMEM;
        return;
    }
    /* the last definition of a name wins; values keep the order of first definition */
    name_index seen = {0};
    for (size_t i = 0; i < c->n_env; i++) {
        entry *e = c->env[i];
        if (e->kind != E_TILE && e->kind != E_SCALAR)
            continue;
        name_slot *sl = name_index_find(&seen, e->name);
        if ((!sl || !sl->name) && name_index_put(&seen, e->name, s->n_values++)) {
            c->err = -ENOMEM;
            break;
        }
        sketch_value *v = &s->values[name_index_find(&seen, e->name)->index];
        v->name = e->name;
        v->dtype = e->type->dtype;
        v->rank = e->type->kind == T_TILE ? e->type->rank : 0;
        v->tile = e->type->kind == T_TILE;
    }
    free(seen.slots);
    s->cap_values = n;
}

int akg_sketch_check(akg_sketch *sketch, akg_sketch_diag_list *diags)
{
    checker c = {.s = sketch, .diags = diags};
    if (sketch->n_tensors) {
        c.store_spans = malloc(sketch->n_tensors * sizeof *c.store_spans);
        if (!c.store_spans)
            return -ENOMEM;
        for (size_t i = 0; i < sketch->n_tensors; i++)
            c.store_spans[i] = (akg_sketch_span){UINT32_MAX, 0, UINT32_MAX, 0};
    }
    check_header(&c);
    check_no_tune_block(&c, &sketch->body);
    size_t body_start = c.n_env;
    check_block(&c, &sketch->body);
    for (size_t i = body_start; i < c.n_env; i++) {
        entry *e = c.env[i];
        if (e->kind != E_TILE || !e->loaded_unused)
            continue;
        /* only report the last definition of a name */
        if (lookup(&c, e->name) == e)
            diag(&c, AKG_SKETCH_WARNING, e->load_span, "tile '%s' is loaded here but never used",
                 e->name);
    }
    bool any_store = false;
    for (size_t i = 0; i < sketch->n_tensors; i++)
        any_store |= sketch->tensors[i].stored;
    if (!any_store && sketch->n_tensors)
        diag(&c, AKG_SKETCH_ERROR, sketch->name_span,
             "sketch '%s' never stores to a tensor, so it computes nothing; write the result with "
             "store(tile -> OUT[...])",
             sketch->name);
    else if (!sketch->n_tensors)
        diag(&c, AKG_SKETCH_ERROR, sketch->name_span,
             "sketch '%s' declares no tensors; add tensors: X[N]: f32; ...", sketch->name);
    for (size_t i = 0; i < sketch->n_tensors; i++) {
        sketch_tensor *t = &sketch->tensors[i];
        if (!t->loaded && !t->stored && any_store)
            diag(&c, AKG_SKETCH_WARNING, t->span,
                 "tensor '%s' is declared but never loaded or stored", t->name);
    }
    for (size_t i = 0; i < c.n_env; i++)
        if (c.env[i]->kind == E_CONST && !c.env[i]->has_value) {
            size_t k;
            for (k = 0; k < sketch->n_consts; k++)
                if (sketch->consts[k].name == c.env[i]->name)
                    break;
            if (k < sketch->n_consts && !sketch->consts[k].value)
                diag(&c, AKG_SKETCH_ERROR, c.env[i]->span,
                     "constexpr '%s' has no value; write %s = <value> in constexpr:",
                     c.env[i]->name, c.env[i]->name);
        }
    if (!c.err) {
        int bound = sketch_check_bindings(sketch, c.store_spans, diags);
        if (bound < 0)
            c.err = bound;
        else
            c.errors += (size_t)bound;
    }
    record_values(&c);
    free(c.store_spans);
    for (size_t i = 0; i < c.n_chunks; i++)
        free(c.chunks[i]);
    free(c.chunks);
    free(c.env);
    free(c.names.slots);
    sketch_arena_release(&c.types);
    for (size_t i = 0; i < c.n_atoms; i++)
        free(c.atoms[i]);
    free(c.atoms);
    sketch_diag_sort(diags);
    if (c.err)
        return c.err;
    return (int)c.errors;
}
