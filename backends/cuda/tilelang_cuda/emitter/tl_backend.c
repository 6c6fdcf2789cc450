/*
 * tl_backend.c: the cuda/tilelang_cuda backend: a checked sketch lowered to
 * TileLang (tile-lang, `import tilelang.language as T`) on NVIDIA GPUs.
 *
 * TileLang builds a kernel per set of shapes: the module has one factory per
 * kernel, `_akg_k<N>(symbols..., params...)`, cached per argument values,
 * that returns tilelang.compile() of a @T.prim_func whose tensors have the
 * task's concrete shapes; akg_kernel(tensors, symbols, params) is the host
 * code (Python `if`s on symbols) calling the kernels with the torch tensors.
 * Because every symbol is a Python int when the prim_func is traced, a tile
 * extent bounded by a symbol (`min(BLK, D - q)`) has a static buffer shape
 * (BLK) and a valid extent (the expression) that guards loads and stores.
 *   - an outermost `parallel` FOR, with the `parallel` FORs that are its
 *     whole body, is one T.Kernel over the flattened iterations (blockIdx.x);
 *     deeper loops are T.serial (T.Pipelined under a `pipeline` hint);
 *   - tiles are T.alloc_fragment buffers (T.alloc_shared for gemm operands),
 *     declared at the top of the kernel; loads, stores and elementwise
 *     assignments are T.Parallel loops over the tile's elements, guarded by
 *     its valid extents and the tensor's bounds;
 *   - reductions (reduce_sum/max/min/mean over one axis) copy their operand
 *     into a buffer padded with the identity, then T.reduce_*;
 *   - `acc = gemm(a, b, acc)` (or the statement form) is T.gemm on shared
 *     operands and a fragment accumulator (`init_zero`: T.clear).
 * What it does not lower is refused (AKG_EUNSUPPORTED) with the sketch's
 * file:line:col, the construct and the reason: host loops, scratch tiles and
 * host statements between kernels (the CPU designs' row splits), tile
 * regions, index tiles, scans, argmax/argmin and the packed-panel GEMMs.
 * Nothing is built ahead (tilelang.compile at the first call); no GPU here,
 * so runtime_missing says so and kernelgen_only ends unverified.
 *
 * Memory: every string of one lowering lives in the context's arena (tl_ctx),
 * released at once when the lowering ends.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"
#include "akg/sketch_bind.h"

#define TL_MAXR 4
#define TL_MAXN 256

typedef struct tl_chunk {
    struct tl_chunk *next;
} tl_chunk;

/* A tile buffer: its static shape (Python ints when traced) and dtype. */
typedef struct {
    const char *name; /* sketch name, or NULL for a temporary */
    const char *py;   /* v_<name> or _r<N> */
    int rank;         /* 0: a (1,) buffer read at [0] */
    const char *pad[TL_MAXR];
    const char *ext[TL_MAXR]; /* valid extent (kernel text), NULL: the whole buffer */
    akg_dtype dt;
    bool shared;
} tl_buf;

/* The shape of a value. */
typedef struct {
    int rank;
    const char *pad[TL_MAXR];
    const char *ext[TL_MAXR];
    akg_dtype dt;
} tl_shape;

typedef struct {
    const akg_sketch_expr *e;
    int buf;
    bool mean;
    const char *count;
    bool keepdim;
    int axis;
} tl_red;

typedef struct {
    const akg_sketch *sk;
    char *err;
    size_t errlen;
    int status;
    tl_chunk *arena;
    akg_buf *out;
    int indent;
    int temp;
    int kernels;
    const akg_sketch_stmt *cur;
    /* names in scope: kind 's' symbol, 'c' constexpr, 'p' param, 't' tensor, 'k' kernel int,
     * 'b' tile buffer */
    struct {
        const char *name, *py;
        char kind;
        int buf;
        long tensor;
    } names[TL_MAXN];
    size_t n_names;
    tl_buf bufs[TL_MAXN];
    size_t n_bufs;
    tl_red reds[TL_MAXN];
    size_t n_reds;
} tl_ctx;

static void *tl_alloc(tl_ctx *C, size_t n)
{
    tl_chunk *c = malloc(sizeof *c + n);
    if (!c) {
        C->status = AKG_ENOMEM;
        return NULL;
    }
    c->next = C->arena;
    C->arena = c;
    return c + 1;
}

static const char *tl_strf(tl_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *tl_strf(tl_ctx *C, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? tl_alloc(C, (size_t)n + 1) : NULL;
    if (!s)
        return "";
    va_start(ap, fmt);
    vsnprintf(s, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return s;
}

static int tl_fail_span(tl_ctx *C, akg_sketch_span sp, const char *fmt, va_list ap)
{
    if (C->status)
        return C->status;
    C->status = AKG_EUNSUPPORTED;
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    snprintf(C->err, C->errlen, "sketch.sketch:%u:%u: %s", sp.line + 1, sp.col + 1, msg);
    return C->status;
}

static int tl_fail(tl_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tl_fail(tl_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    akg_sketch_span sp = {0};
    if (at || C->cur)
        sp = akg_sketch_stmt_span(at ? at : C->cur);
    int rc = tl_fail_span(C, sp, fmt, ap);
    va_end(ap);
    return rc;
}

static int tl_fail_expr(tl_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int tl_fail_expr(tl_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    akg_sketch_span sp = {0};
    if (at)
        sp = akg_sketch_expr_span(at);
    else if (C->cur)
        sp = akg_sketch_stmt_span(C->cur);
    int rc = tl_fail_span(C, sp, fmt, ap);
    va_end(ap);
    return rc;
}

static void tl_line(tl_ctx *C, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tl_line(tl_ctx *C, const char *fmt, ...)
{
    for (int i = 0; i < C->indent; i++)
        akg_buf_puts(C->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    char line[8192];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    akg_buf_puts(C->out, line);
    akg_buf_puts(C->out, "\n");
}

static const char *text_of(tl_ctx *C, const akg_sketch_expr *e)
{
    char *s = akg_sketch_expr_to_string(e);
    const char *r = tl_strf(C, "%s", s ? s : "?");
    free(s);
    return r;
}

static void bind(tl_ctx *C, const char *name, char kind, const char *py, int buf)
{
    if (C->n_names == TL_MAXN) {
        tl_fail(C, NULL, "more than %d names in scope", TL_MAXN);
        return;
    }
    C->names[C->n_names].name = name;
    C->names[C->n_names].py = py;
    C->names[C->n_names].kind = kind;
    C->names[C->n_names].buf = buf;
    C->names[C->n_names].tensor = -1;
    C->n_names++;
}

static int lookup(tl_ctx *C, const char *name)
{
    for (size_t i = C->n_names; i-- > 0;)
        if (!strcmp(C->names[i].name, name))
            return (int)i;
    return -1;
}

static const char *dtype_str(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_BOOL:
        return "bool";
    case AKG_DTYPE_I8:
        return "int8";
    case AKG_DTYPE_I16:
        return "int16";
    case AKG_DTYPE_I32:
        return "int32";
    case AKG_DTYPE_I64:
        return "int64";
    case AKG_DTYPE_U8:
        return "uint8";
    case AKG_DTYPE_F16:
        return "float16";
    case AKG_DTYPE_BF16:
        return "bfloat16";
    case AKG_DTYPE_F64:
        return "float64";
    default:
        return "float32";
    }
}

static bool is_float(akg_dtype dt)
{
    return dt == AKG_DTYPE_F16 || dt == AKG_DTYPE_BF16 || dt == AKG_DTYPE_F32 ||
           dt == AKG_DTYPE_F64 || dt == AKG_DTYPE_UNKNOWN;
}

/* ---- index expressions: host (Python ints) or kernel (TIR) text ---- */

/* Index text of e; host: only symbols, constexprs and ints may appear. NULL (with a message
 * when fail) when e is not an integer expression of names in scope. */
static const char *idx(tl_ctx *C, const akg_sketch_expr *e, bool host, bool fail)
{
    if (!e)
        return "0";
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_BOOL:
        return tl_strf(C, "%lld", (long long)akg_sketch_expr_int(e));
    case AKG_SKETCH_EXPR_NAME: {
        int n = lookup(C, akg_sketch_expr_text(e));
        if (n >= 0) {
            char k = C->names[n].kind;
            if (k == 's' || k == 'c' || (!host && k == 'k'))
                return C->names[n].py;
        }
        if (fail)
            tl_fail_expr(C, e, "'%s' is not an integer %s here", akg_sketch_expr_text(e),
                         host ? "known on the host (a symbol or constexpr)" : "index");
        return NULL;
    }
    case AKG_SKETCH_EXPR_UNARY: {
        const char *a = idx(C, akg_sketch_expr_lhs(e), host, fail);
        const char *op = akg_sketch_expr_text(e);
        if (!a)
            return NULL;
        return !strcmp(op, "not") ? tl_strf(C, "(not %s)", a) : tl_strf(C, "(%s%s)", op, a);
    }
    case AKG_SKETCH_EXPR_BINARY: {
        const char *op = akg_sketch_expr_text(e);
        const char *a = idx(C, akg_sketch_expr_lhs(e), host, fail);
        const char *b = a ? idx(C, akg_sketch_expr_rhs(e), host, fail) : NULL;
        if (!a || !b)
            return NULL;
        if (!strcmp(op, "/") || !strcmp(op, "**")) {
            if (fail)
                tl_fail_expr(C, e, "'%s' in an index expression (integers only: //, %%)", op);
            return NULL;
        }
        return tl_strf(C, "(%s %s %s)", a, op, b);
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *fn = akg_sketch_expr_text(e);
        size_t n = akg_sketch_expr_item_count(e);
        if (n == 2 && (!strcmp(fn, "min") || !strcmp(fn, "max") || !strcmp(fn, "ceil"))) {
            const char *a = idx(C, akg_sketch_expr_item(e, 0), host, fail);
            const char *b = a ? idx(C, akg_sketch_expr_item(e, 1), host, fail) : NULL;
            if (!a || !b)
                return NULL;
            if (!strcmp(fn, "ceil"))
                return tl_strf(C, "((%s + %s - 1) // %s)", a, b, b);
            return host ? tl_strf(C, "%s(%s, %s)", fn, a, b) : tl_strf(C, "T.%s(%s, %s)", fn, a, b);
        }
        break;
    }
    default:
        break;
    }
    if (fail)
        tl_fail_expr(C, e, "'%s' is not an index expression the tilelang_cuda emitter lowers",
                     text_of(C, e));
    return NULL;
}

/* The static size of a tile dimension of extent e: e itself when the host knows it, else the
 * host-known operand of a min(). */
static const char *static_dim(tl_ctx *C, const akg_sketch_expr *e)
{
    const char *h = idx(C, e, true, false);
    if (h)
        return h;
    if (akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL &&
        !strcmp(akg_sketch_expr_text(e), "min") && akg_sketch_expr_item_count(e) == 2) {
        const char *a = static_dim(C, akg_sketch_expr_item(e, 0));
        const char *b = a ? NULL : static_dim(C, akg_sketch_expr_item(e, 1));
        if (a || b)
            return a ? a : b;
    }
    return NULL;
}

/* ---- tiles ---- */

static int new_buf(tl_ctx *C, const char *name, const tl_shape *s)
{
    if (C->n_bufs == TL_MAXN) {
        tl_fail(C, NULL, "more than %d tiles in one sketch", TL_MAXN);
        return -1;
    }
    tl_buf *b = &C->bufs[C->n_bufs];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->py = name ? tl_strf(C, "v_%s_%d", name, C->temp++) : tl_strf(C, "_r%d", C->temp++);
    b->rank = s->rank;
    for (int d = 0; d < s->rank; d++) {
        b->pad[d] = s->pad[d];
        b->ext[d] = s->ext[d];
    }
    b->dt = s->dt ? s->dt : AKG_DTYPE_F32;
    return (int)C->n_bufs++;
}

static const char *buf_at(tl_ctx *C, const tl_buf *b, const char *const *ix)
{
    if (b->rank == 0)
        return tl_strf(C, "%s[0]", b->py);
    const char *s = "";
    for (int d = 0; d < b->rank; d++)
        s = tl_strf(C, "%s%s%s", s, d ? ", " : "", ix[d]);
    return tl_strf(C, "%s[%s]", b->py, s);
}

/* ---- values: shapes and element text ---- */

typedef struct {
    const char *name;
    int nargs;
    const char *fmt; /* %0 %1 %2: operands (each used as written: they are pure element reads) */
    const char *defaults[3];
    bool boolean;
} tl_op;

static const tl_op ops[] = {
    {"neg", 1, "(-%0)", {0}, false},
    {"abs", 1, "T.abs(%0)", {0}, false},
    {"exp", 1, "T.exp(%0)", {0}, false},
    {"log", 1, "T.log(%0)", {0}, false},
    {"sqrt", 1, "T.sqrt(%0)", {0}, false},
    {"rsqrt", 1, "T.rsqrt(%0)", {0}, false},
    {"tanh", 1, "T.tanh(%0)", {0}, false},
    {"erf", 1, "T.erf(%0)", {0}, false},
    {"sigmoid", 1, "(1.0 / (1.0 + T.exp(-%0)))", {0}, false},
    {"relu", 1, "T.if_then_else(%0 < 0.0, 0.0, %0)", {0}, false},
    {"leaky_relu", 2, "T.if_then_else(%0 < 0.0, %0 * %1, %0)", {NULL, "0.01"}, false},
    {"gelu", 1, "(0.5 * %0 * (1.0 + T.erf(%0 * 0.7071067811865476)))", {0}, false},
    {"gelu_tanh",
     1,
     "(0.5 * %0 * (1.0 + T.tanh(0.7978845608028654 * (%0 + 0.044715 * %0 * %0 * %0))))",
     {0},
     false},
    {"silu", 1, "(%0 / (1.0 + T.exp(-%0)))", {0}, false},
    {"softplus",
     3,
     "T.if_then_else(%0 * %1 > %2, %0, T.log1p(T.exp(%0 * %1)) / %1)",
     {NULL, "1.0", "20.0"},
     false},
    {"elu", 2, "T.if_then_else(%0 > 0.0, %0, %1 * (T.exp(%0) - 1.0))", {NULL, "1.0"}, false},
    {"selu",
     1,
     "(1.0507009873554805 * T.if_then_else(%0 > 0.0, %0, 1.6732632423543772 * (T.exp(%0) - "
     "1.0)))",
     {0},
     false},
    {"hardtanh", 3, "T.min(T.max(%0, %1), %2)", {NULL, "-1.0", "1.0"}, false},
    {"clamp", 3, "T.min(T.max(%0, %1), %2)", {0}, false},
    {"hardsigmoid", 1, "T.min(T.max(%0 / 6.0 + 0.5, 0.0), 1.0)", {0}, false},
    {"hardswish", 1, "(%0 * T.min(T.max(%0 + 3.0, 0.0), 6.0) / 6.0)", {0}, false},
    {"softsign", 1, "(%0 / (1.0 + T.abs(%0)))", {0}, false},
    {"recip", 1, "(1.0 / %0)", {0}, false},
    {"add", 2, "(%0 + %1)", {0}, false},
    {"sub", 2, "(%0 - %1)", {0}, false},
    {"mul", 2, "(%0 * %1)", {0}, false},
    {"div", 2, "(%0 / %1)", {0}, false},
    {"maximum", 2, "T.max(%0, %1)", {0}, false},
    {"minimum", 2, "T.min(%0, %1)", {0}, false},
    {"lt", 2, "(%0 < %1)", {0}, true},
    {"le", 2, "(%0 <= %1)", {0}, true},
    {"gt", 2, "(%0 > %1)", {0}, true},
    {"ge", 2, "(%0 >= %1)", {0}, true},
    {"eq", 2, "(%0 == %1)", {0}, true},
    {"ne", 2, "(%0 != %1)", {0}, true},
    {"where", 3, "T.if_then_else(%0, %1, %2)", {0}, false},
    {"copy", 1, "%0", {0}, false},
};

static const tl_op *op_find(const char *name)
{
    if (!strcmp(name, "max"))
        name = "maximum";
    else if (!strcmp(name, "min"))
        name = "minimum";
    else if (!strcmp(name, "reciprocal"))
        name = "recip";
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

static bool is_reduce(const char *fn)
{
    return !strcmp(fn, "reduce_sum") || !strcmp(fn, "reduce_max") || !strcmp(fn, "reduce_min") ||
           !strcmp(fn, "reduce_mean");
}

static int find_red(tl_ctx *C, const akg_sketch_expr *e)
{
    for (size_t i = 0; i < C->n_reds; i++)
        if (C->reds[i].e == e)
            return (int)i;
    return -1;
}

static bool shape_of(tl_ctx *C, const akg_sketch_expr *e, tl_shape *s);

/* Broadcast b into a (right-aligned; a dimension of pad "1" takes the other's). */
static bool broadcast(tl_ctx *C, tl_shape *a, const tl_shape *b, const akg_sketch_expr *at)
{
    if (b->rank > a->rank) {
        tl_shape t = *b;
        t.dt = a->dt;
        *a = t;
        b = &t;
        (void)b;
        return true;
    }
    for (int i = 0; i < b->rank; i++) {
        int da = a->rank - b->rank + i;
        if (!strcmp(a->pad[da], "1")) {
            a->pad[da] = b->pad[i];
            a->ext[da] = b->ext[i];
        } else if (strcmp(b->pad[i], "1") && strcmp(a->pad[da], b->pad[i])) {
            tl_fail_expr(C, at, "operands of '%s' have tile extents %s and %s (not broadcast)",
                         text_of(C, at), a->pad[da], b->pad[i]);
            return false;
        }
    }
    return true;
}

static akg_dtype promote(akg_dtype a, akg_dtype b)
{
    if (!a)
        return b;
    if (!b)
        return a;
    return a > b ? a : b; /* the enum orders f16 < bf16 < f32 < f64 after the integers */
}

static bool shape_of(tl_ctx *C, const akg_sketch_expr *e, tl_shape *s)
{
    memset(s, 0, sizeof *s);
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
    case AKG_SKETCH_EXPR_FLOAT:
    case AKG_SKETCH_EXPR_BOOL:
        return true;
    case AKG_SKETCH_EXPR_NAME: {
        int n = lookup(C, akg_sketch_expr_text(e));
        if (n < 0) {
            tl_fail_expr(C, e, "'%s' is not defined here", akg_sketch_expr_text(e));
            return false;
        }
        if (C->names[n].kind == 'b') {
            const tl_buf *b = &C->bufs[C->names[n].buf];
            s->rank = b->rank;
            for (int d = 0; d < b->rank; d++) {
                s->pad[d] = b->pad[d];
                s->ext[d] = b->ext[d];
            }
            s->dt = b->dt;
        } else if (C->names[n].kind == 'p')
            s->dt = AKG_DTYPE_UNKNOWN;
        else if (C->names[n].kind == 't') {
            tl_fail_expr(C, e, "tensor '%s' used as a value (load it into a tile)",
                         akg_sketch_expr_text(e));
            return false;
        } else
            s->dt = AKG_DTYPE_I64;
        return true;
    }
    case AKG_SKETCH_EXPR_UNARY:
        return shape_of(C, akg_sketch_expr_lhs(e), s);
    case AKG_SKETCH_EXPR_BINARY: {
        tl_shape b;
        if (!shape_of(C, akg_sketch_expr_lhs(e), s) || !shape_of(C, akg_sketch_expr_rhs(e), &b))
            return false;
        akg_dtype dt = promote(s->dt, b.dt);
        if (!broadcast(C, s, &b, e))
            return false;
        s->dt = dt;
        return true;
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *fn = akg_sketch_expr_text(e);
        int r = find_red(C, e);
        if (r >= 0) {
            const tl_buf *b = &C->bufs[C->reds[r].buf];
            s->rank = b->rank;
            for (int d = 0; d < b->rank; d++) {
                s->pad[d] = b->pad[d];
                s->ext[d] = b->ext[d];
            }
            s->dt = b->dt;
            if (C->reds[r].keepdim) {
                for (int d = s->rank; d > C->reds[r].axis; d--) {
                    s->pad[d] = s->pad[d - 1];
                    s->ext[d] = s->ext[d - 1];
                }
                s->pad[C->reds[r].axis] = "1";
                s->ext[C->reds[r].axis] = NULL;
                s->rank++;
            }
            return true;
        }
        if (!strcmp(fn, "cast") && akg_sketch_expr_item_count(e) == 2) {
            if (!shape_of(C, akg_sketch_expr_item(e, 0), s))
                return false;
            s->dt = akg_dtype_from_name(text_of(C, akg_sketch_expr_item(e, 1)));
            return true;
        }
        const tl_op *op = op_find(fn);
        if (!op) {
            tl_fail_expr(C, e,
                         "'%s' is not lowered by the tilelang_cuda emitter yet (elementwise "
                         "operations, casts, where, comparisons, reduce_sum/max/min/mean over "
                         "one axis, gemm)",
                         fn);
            return false;
        }
        size_t n = akg_sketch_expr_item_count(e);
        bool first = true;
        for (size_t i = 0; i < n; i++) {
            tl_shape b;
            if (!shape_of(C, akg_sketch_expr_item(e, i), &b))
                return false;
            if (op->fmt[0] == 'T' && !strncmp(op->fmt, "T.if_then_else(%0,", 18) && i == 0)
                continue; /* where's condition: its shape broadcasts, its dtype does not */
            akg_dtype dt = promote(s->dt, b.dt);
            if (first) {
                *s = b;
                first = false;
            } else if (!broadcast(C, s, &b, e))
                return false;
            s->dt = dt;
        }
        if (op->boolean)
            s->dt = AKG_DTYPE_BOOL;
        return true;
    }
    default:
        tl_fail_expr(C, e, "'%s' is not a value the tilelang_cuda emitter lowers", text_of(C, e));
        return false;
    }
}

/* The element of e at the indices ix of an out shape of rank r (right-aligned). */
static const char *elem(tl_ctx *C, const akg_sketch_expr *e, int r, const char *const *ix,
                        const tl_shape *out)
{
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_INT:
        return is_float(out->dt) ? tl_strf(C, "%lld.0", (long long)akg_sketch_expr_int(e))
                                 : tl_strf(C, "%lld", (long long)akg_sketch_expr_int(e));
    case AKG_SKETCH_EXPR_FLOAT:
        return tl_strf(C, "%.17g", akg_sketch_expr_float(e));
    case AKG_SKETCH_EXPR_BOOL:
        return akg_sketch_expr_int(e) ? "True" : "False";
    case AKG_SKETCH_EXPR_UNARY: {
        const char *a = elem(C, akg_sketch_expr_lhs(e), r, ix, out);
        const char *op = akg_sketch_expr_text(e);
        return !strcmp(op, "not") ? tl_strf(C, "T.Not(%s)", a) : tl_strf(C, "(%s%s)", op, a);
    }
    case AKG_SKETCH_EXPR_BINARY:
        return tl_strf(C, "(%s %s %s)", elem(C, akg_sketch_expr_lhs(e), r, ix, out),
                       akg_sketch_expr_text(e), elem(C, akg_sketch_expr_rhs(e), r, ix, out));
    case AKG_SKETCH_EXPR_NAME: {
        int n = lookup(C, akg_sketch_expr_text(e));
        if (n < 0)
            return "0";
        if (C->names[n].kind != 'b')
            return C->names[n].py;
        const tl_buf *b = &C->bufs[C->names[n].buf];
        const char *bi[TL_MAXR];
        for (int d = 0; d < b->rank; d++) {
            int od = r - b->rank + d;
            bi[d] = od >= 0 && strcmp(b->pad[d], "1") ? ix[od] : "0";
        }
        return buf_at(C, b, bi);
    }
    case AKG_SKETCH_EXPR_CALL: {
        const char *fn = akg_sketch_expr_text(e);
        int ri = find_red(C, e);
        if (ri >= 0) {
            const tl_red *rd = &C->reds[ri];
            const tl_buf *b = &C->bufs[rd->buf];
            int rr = b->rank + (rd->keepdim ? 1 : 0);
            const char *bi[TL_MAXR];
            int k = 0;
            for (int d = 0; d < rr; d++) {
                if (rd->keepdim && d == rd->axis)
                    continue;
                int od = r - rr + d;
                bi[k] = od >= 0 && strcmp(b->pad[k], "1") ? ix[od] : "0";
                k++;
            }
            const char *v = buf_at(C, b, bi);
            return rd->mean
                       ? tl_strf(C, "(%s / T.Cast(\"%s\", %s))", v, dtype_str(b->dt), rd->count)
                       : v;
        }
        if (!strcmp(fn, "cast")) {
            akg_dtype dt = akg_dtype_from_name(text_of(C, akg_sketch_expr_item(e, 1)));
            return tl_strf(C, "T.Cast(\"%s\", %s)", dtype_str(dt),
                           elem(C, akg_sketch_expr_item(e, 0), r, ix, out));
        }
        const tl_op *op = op_find(fn);
        const char *args[3] = {0};
        size_t n = akg_sketch_expr_item_count(e);
        for (int i = 0; i < op->nargs; i++) {
            const akg_sketch_expr *a = (size_t)i < n ? akg_sketch_expr_item(e, (size_t)i) : NULL;
            args[i] = a ? elem(C, a, r, ix, out) : op->defaults[i];
            if (!args[i]) {
                tl_fail_expr(C, e, "'%s' takes %d operands", fn, op->nargs);
                return "0";
            }
        }
        akg_buf b;
        akg_buf_init(&b, 1 << 20);
        for (const char *p = op->fmt; *p; p++) {
            if (p[0] == '%' && p[1] >= '0' && p[1] <= '2') {
                akg_buf_puts(&b, args[p[1] - '0']);
                p++;
            } else
                akg_buf_append(&b, p, 1);
        }
        const char *res = tl_strf(C, "%s", b.data ? b.data : "");
        akg_buf_free(&b);
        return res;
    }
    default:
        return "0";
    }
}

static void parallel_open(tl_ctx *C, const tl_shape *s, const char **ix)
{
    if (s->rank == 0) {
        tl_line(C, "for _e in T.Parallel(1):");
        C->indent++;
        return;
    }
    const char *vars = "", *pads = "";
    for (int d = 0; d < s->rank; d++) {
        ix[d] = tl_strf(C, "_e%d", d);
        vars = tl_strf(C, "%s%s%s", vars, d ? ", " : "", ix[d]);
        pads = tl_strf(C, "%s%s%s", pads, d ? ", " : "", s->pad[d]);
    }
    tl_line(C, "for %s in T.Parallel(%s):", vars, pads);
    C->indent++;
}

/* Reductions inside e, innermost first, into buffers (before the statement that reads e). */
static void materialize(tl_ctx *C, const akg_sketch_expr *e)
{
    if (!e || C->status)
        return;
    akg_sketch_expr_kind k = akg_sketch_expr_get_kind(e);
    if (k == AKG_SKETCH_EXPR_UNARY)
        materialize(C, akg_sketch_expr_lhs(e));
    if (k == AKG_SKETCH_EXPR_BINARY) {
        materialize(C, akg_sketch_expr_lhs(e));
        materialize(C, akg_sketch_expr_rhs(e));
    }
    if (k != AKG_SKETCH_EXPR_CALL)
        return;
    for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
        materialize(C, akg_sketch_expr_item(e, i));
    const char *fn = akg_sketch_expr_text(e);
    if (!strcmp(fn, "argmax") || !strcmp(fn, "argmin") || !strcmp(fn, "reduce_prod")) {
        tl_fail_expr(C, e,
                     "'%s' is not lowered by the tilelang_cuda emitter yet (reduce_sum, "
                     "reduce_max, reduce_min, reduce_mean)",
                     fn);
        return;
    }
    if (!is_reduce(fn) || find_red(C, e) >= 0 || C->status)
        return;
    const akg_sketch_expr *src = akg_sketch_expr_item(e, 0);
    tl_shape s;
    if (!src || !shape_of(C, src, &s))
        return;
    const akg_sketch_expr *ax = akg_sketch_expr_kwarg(e, "axis");
    if (!ax && akg_sketch_expr_item_count(e) > 1)
        ax = akg_sketch_expr_item(e, 1);
    int axis = 0;
    if (ax && akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_INT)
        axis = (int)akg_sketch_expr_int(ax);
    else if (!(s.rank <= 1 && (!ax || akg_sketch_expr_get_kind(ax) == AKG_SKETCH_EXPR_NONE))) {
        tl_fail_expr(C, e, "'%s' over several axes is not lowered yet (one integer axis)", fn);
        return;
    }
    if (axis < 0)
        axis += s.rank;
    if (s.rank == 0 || axis < 0 || axis >= s.rank) {
        tl_fail_expr(C, e, "'%s': axis %d of a rank-%d tile", fn, axis, s.rank);
        return;
    }
    const akg_sketch_expr *kd = akg_sketch_expr_kwarg(e, "keepdim");
    bool keepdim = kd && akg_sketch_expr_int(kd);
    bool sum = !strcmp(fn, "reduce_sum") || !strcmp(fn, "reduce_mean");
    akg_dtype acc = sum && (s.dt == AKG_DTYPE_F16 || s.dt == AKG_DTYPE_BF16) ? AKG_DTYPE_F32
                    : s.dt                                                   ? s.dt
                                                                             : AKG_DTYPE_F32;
    tl_shape padded = s;
    padded.dt = acc;
    int in = new_buf(C, NULL, &padded);
    tl_shape rs = {.rank = s.rank - 1, .dt = acc};
    for (int d = 0, j = 0; d < s.rank; d++)
        if (d != axis) {
            rs.pad[j] = s.pad[d];
            rs.ext[j++] = s.ext[d];
        }
    int outb = new_buf(C, NULL, &rs);
    if (in < 0 || outb < 0)
        return;
    const char *identity = sum                         ? "0.0"
                           : !strcmp(fn, "reduce_max") ? "-T.infinity(\"%s\")"
                                                       : "T.infinity(\"%s\")";
    if (!is_float(acc))
        identity = sum                         ? "0"
                   : !strcmp(fn, "reduce_max") ? "T.min_value(\"%s\")"
                                               : "T.max_value(\"%s\")";
    identity = tl_strf(C, identity, dtype_str(acc));
    const char *ix[TL_MAXR];
    parallel_open(C, &s, ix);
    const char *v = elem(C, src, s.rank, ix, &padded);
    const char *guard = s.ext[axis] ? tl_strf(C, "%s < %s", ix[axis], s.ext[axis]) : NULL;
    const char *val = tl_strf(C, "T.Cast(\"%s\", %s)", dtype_str(acc), v);
    tl_line(C, "%s = %s", buf_at(C, &C->bufs[in], ix),
            guard ? tl_strf(C, "T.if_then_else(%s, %s, %s)", guard, val, identity) : val);
    C->indent--;
    tl_line(C, "T.reduce_%s(%s, %s, dim=%d)", sum ? "sum" : fn + 7, C->bufs[in].py,
            C->bufs[outb].py, axis);
    tl_red *rd = &C->reds[C->n_reds++];
    rd->e = e;
    rd->buf = outb;
    rd->mean = !strcmp(fn, "reduce_mean");
    rd->count = s.ext[axis] ? s.ext[axis] : s.pad[axis];
    rd->keepdim = keepdim;
    rd->axis = axis;
}

/* ---- statements inside a kernel ---- */

static void kernel_stmts(tl_ctx *C, const akg_sketch_stmt *parent, int which);

/* A tensor region's per-dimension index text, with the tile dimension each slice runs along. */
static bool region(tl_ctx *C, const akg_sketch_expr *sub, int tile_rank, const char *const *ix,
                   const char **at, const char **guard)
{
    const akg_sketch_expr *base = akg_sketch_expr_base(sub);
    int n = lookup(C, akg_sketch_expr_text(base));
    if (n < 0 || C->names[n].kind != 't') {
        tl_fail_expr(C, sub,
                     "'%s' is not a tensor (a load into or from a tile region is not "
                     "lowered yet)",
                     text_of(C, base));
        return false;
    }
    long t = C->names[n].tensor;
    size_t items = akg_sketch_expr_item_count(sub);
    if (items != akg_sketch_tensor_rank(C->sk, (size_t)t)) {
        tl_fail_expr(C, sub, "region '%s' does not index every dimension", text_of(C, sub));
        return false;
    }
    const char *list = "", *g = "";
    int d = 0;
    for (size_t i = 0; i < items; i++) {
        const akg_sketch_expr *it = akg_sketch_expr_item(sub, i);
        const char *pos;
        if (akg_sketch_expr_get_kind(it) == AKG_SKETCH_EXPR_SLICE) {
            const char *st = idx(C, akg_sketch_slice_start(it), false, true);
            if (d >= tile_rank) {
                /* a unit slice (a:a+1) beyond the value's rank: its one position */
                const char *stop = idx(C, akg_sketch_slice_stop(it), false, true);
                if (!st || !stop || strcmp(stop, tl_strf(C, "(%s + 1)", st)) ||
                    akg_sketch_slice_step(it)) {
                    if (!st || !stop || strcmp(st, "0") || strcmp(stop, "1")) {
                        tl_fail_expr(C, sub,
                                     "region '%s' has more slices than the value has "
                                     "dimensions",
                                     text_of(C, sub));
                        return false;
                    }
                }
                const char *dim = idx(C, akg_sketch_tensor_dim(C->sk, (size_t)t, i), true, true);
                list = tl_strf(C, "%s%s%s", list, i ? ", " : "", st);
                g = tl_strf(C, "%s%s%s < %s", g, *g ? " and " : "", st, dim ? dim : "0");
                continue;
            }
            const akg_sketch_expr *step = akg_sketch_slice_step(it);
            const char *sp = step ? idx(C, step, true, true) : "1";
            if (!st || !sp)
                return false;
            pos = strcmp(sp, "1") ? tl_strf(C, "(%s + %s * %s)", st, ix[d], sp)
                                  : tl_strf(C, "(%s + %s)", st, ix[d]);
            d++;
        } else {
            pos = idx(C, it, false, true);
            if (!pos)
                return false;
        }
        const char *dim = idx(C, akg_sketch_tensor_dim(C->sk, (size_t)t, i), true, true);
        if (!dim)
            return false;
        list = tl_strf(C, "%s%s%s", list, i ? ", " : "", pos);
        g = tl_strf(C, "%s%s%s < %s", g, *g ? " and " : "", pos, dim);
    }
    if (d != tile_rank) {
        tl_fail_expr(C, sub, "region '%s' has %d slices for a rank-%d tile", text_of(C, sub), d,
                     tile_rank);
        return false;
    }
    *at = tl_strf(C, "%s[%s]", C->names[n].py, list);
    *guard = g;
    return true;
}

static const char *tile_guard(tl_ctx *C, const tl_shape *s, const char *const *ix, const char *g)
{
    for (int d = 0; d < s->rank; d++)
        if (s->ext[d])
            g = tl_strf(C, "%s%s%s < %s", g, *g ? " and " : "", ix[d], s->ext[d]);
    return g;
}

static int tile_of(tl_ctx *C, const akg_sketch_expr *e)
{
    if (!e || akg_sketch_expr_get_kind(e) != AKG_SKETCH_EXPR_NAME)
        return -1;
    int n = lookup(C, akg_sketch_expr_text(e));
    return n >= 0 && C->names[n].kind == 'b' ? C->names[n].buf : -1;
}

static void gemm(tl_ctx *C, const akg_sketch_expr *call, const akg_sketch_expr *dst)
{
    int a = tile_of(C, akg_sketch_expr_item(call, 0));
    int b = tile_of(C, akg_sketch_expr_item(call, 1));
    int c = tile_of(C, dst);
    if (a < 0 || b < 0 || c < 0 || C->bufs[a].rank != 2 || C->bufs[b].rank != 2 ||
        C->bufs[c].rank != 2) {
        tl_fail_expr(C, call, "gemm on '%s': T.gemm takes three rank-2 tiles (a, b, acc)",
                     text_of(C, call));
        return;
    }
    const akg_sketch_expr *ta = akg_sketch_expr_kwarg(call, "trans_a");
    const akg_sketch_expr *tb = akg_sketch_expr_kwarg(call, "trans_b");
    C->bufs[a].shared = C->bufs[b].shared = true; /* T.gemm reads B (and here A) from shared */
    tl_line(C, "T.gemm(%s, %s, %s%s%s)", C->bufs[a].py, C->bufs[b].py, C->bufs[c].py,
            ta && akg_sketch_expr_int(ta) ? ", transpose_A=True" : "",
            tb && akg_sketch_expr_int(tb) ? ", transpose_B=True" : "");
}

static void assign_tile(tl_ctx *C, const char *name, const akg_sketch_expr *v)
{
    materialize(C, v);
    tl_shape s;
    if (C->status || !shape_of(C, v, &s))
        return;
    if (!s.dt)
        s.dt = AKG_DTYPE_F32;
    int n = lookup(C, name);
    int b = n >= 0 && C->names[n].kind == 'b' ? C->names[n].buf : -1;
    bool same = b >= 0 && C->bufs[b].rank == s.rank && C->bufs[b].dt == s.dt;
    for (int d = 0; same && d < s.rank; d++)
        same = !strcmp(C->bufs[b].pad[d], s.pad[d]);
    if (!same) {
        b = new_buf(C, name, &s);
        if (b < 0)
            return;
        bind(C, name, 'b', C->bufs[b].py, b);
    } else
        s.dt = C->bufs[b].dt;
    const char *ix[TL_MAXR];
    parallel_open(C, &s, ix);
    tl_line(C, "%s = %s", buf_at(C, &C->bufs[b], ix),
            tl_strf(C, "T.Cast(\"%s\", %s)", dtype_str(s.dt), elem(C, v, s.rank, ix, &s)));
    C->indent--;
    for (int d = 0; d < s.rank; d++)
        C->bufs[b].ext[d] = s.ext[d];
}

static void kernel_stmt(tl_ctx *C, const akg_sketch_stmt *st)
{
    if (C->status)
        return;
    C->cur = st;
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_PASS:
        return;
    case AKG_SKETCH_STMT_ALLOC: {
        tl_shape s = {.rank = (int)akg_sketch_alloc_rank(st), .dt = akg_sketch_alloc_dtype(st)};
        if (s.rank > TL_MAXR) {
            tl_fail(C, st, "a tile of rank %d (at most %d)", s.rank, TL_MAXR);
            return;
        }
        for (int d = 0; d < s.rank; d++) {
            const akg_sketch_expr *e = akg_sketch_alloc_dim(st, (size_t)d);
            s.pad[d] = static_dim(C, e);
            if (!s.pad[d]) {
                tl_fail_expr(C, e,
                             "tile extent '%s' has no size known when the kernel is built "
                             "(TileLang buffers have static shapes: a symbol, a constexpr, or "
                             "min() of one)",
                             text_of(C, e));
                return;
            }
            const char *k = idx(C, e, false, true);
            if (!k)
                return;
            s.ext[d] = strcmp(k, s.pad[d]) ? k : NULL;
        }
        if (!s.dt) {
            /* a tile without dtype= takes the first tensor's (the language's default) */
            s.dt =
                akg_sketch_tensor_count(C->sk) ? akg_sketch_tensor_dtype(C->sk, 0) : AKG_DTYPE_F32;
        }
        const char *name = akg_sketch_alloc_name(st);
        int n = lookup(C, name);
        int b = n >= 0 && C->names[n].kind == 'b' ? C->names[n].buf : -1;
        if (b < 0 || C->bufs[b].rank != s.rank) {
            b = new_buf(C, name, &s);
            if (b < 0)
                return;
            bind(C, name, 'b', C->bufs[b].py, b);
        } else
            for (int d = 0; d < s.rank; d++)
                C->bufs[b].ext[d] = s.ext[d];
        if (akg_sketch_alloc_has_hint(st, "init_zero"))
            tl_line(C, "T.clear(%s)", C->bufs[b].py);
        return;
    }
    case AKG_SKETCH_STMT_LOAD: {
        const akg_sketch_expr *src = akg_sketch_move_source(st);
        int b = tile_of(C, akg_sketch_move_target(st));
        if (b < 0 || akg_sketch_expr_get_kind(src) != AKG_SKETCH_EXPR_SUBSCRIPT) {
            tl_fail(C, st,
                    "load into '%s': only a tensor region into a whole tile is lowered "
                    "(tile regions need the tile's layout)",
                    text_of(C, akg_sketch_move_target(st)));
            return;
        }
        if (akg_sketch_move_option(st, "mask")) {
            tl_fail(C, st, "load with mask= is not lowered by the tilelang_cuda emitter yet");
            return;
        }
        tl_shape s = {.rank = C->bufs[b].rank, .dt = C->bufs[b].dt};
        for (int d = 0; d < s.rank; d++) {
            s.pad[d] = C->bufs[b].pad[d];
            s.ext[d] = C->bufs[b].ext[d];
        }
        const char *ix[TL_MAXR], *at, *g;
        parallel_open(C, &s, ix);
        if (!region(C, src, s.rank, ix, &at, &g))
            return;
        const akg_sketch_expr *other = akg_sketch_move_option(st, "other");
        const char *fill = other ? elem(C, other, 0, ix, &s) : "0";
        g = tile_guard(C, &s, ix, g);
        tl_line(C, "%s = T.if_then_else(%s, T.Cast(\"%s\", %s), T.Cast(\"%s\", %s))",
                buf_at(C, &C->bufs[b], ix), g, dtype_str(s.dt), at, dtype_str(s.dt), fill);
        C->indent--;
        return;
    }
    case AKG_SKETCH_STMT_STORE: {
        const akg_sketch_expr *v = akg_sketch_move_source(st);
        const akg_sketch_expr *dst = akg_sketch_move_target(st);
        if (akg_sketch_expr_get_kind(dst) != AKG_SKETCH_EXPR_SUBSCRIPT) {
            tl_fail(C, st, "store to '%s': only stores to a tensor region are lowered",
                    text_of(C, dst));
            return;
        }
        materialize(C, v);
        tl_shape s;
        if (C->status || !shape_of(C, v, &s))
            return;
        const char *ix[TL_MAXR], *at, *g;
        parallel_open(C, &s, ix);
        if (!region(C, dst, s.rank, ix, &at, &g))
            return;
        int n = lookup(C, akg_sketch_expr_text(akg_sketch_expr_base(dst)));
        akg_dtype tdt = akg_sketch_tensor_dtype(C->sk, (size_t)C->names[n].tensor);
        g = tile_guard(C, &s, ix, g);
        tl_line(C, "if %s:", g);
        C->indent++;
        tl_line(C, "%s = T.Cast(\"%s\", %s)", at, dtype_str(tdt), elem(C, v, s.rank, ix, &s));
        C->indent -= 2;
        return;
    }
    case AKG_SKETCH_STMT_ASSIGN: {
        const akg_sketch_expr *v = akg_sketch_assign_value(st);
        if (akg_sketch_assign_target_count(st) != 1 || strcmp(akg_sketch_assign_op(st), "=")) {
            tl_fail(C, st, "only `name = value` assignments are lowered");
            return;
        }
        const char *name = akg_sketch_assign_target(st, 0);
        if (akg_sketch_expr_get_kind(v) == AKG_SKETCH_EXPR_CALL &&
            !strcmp(akg_sketch_expr_text(v), "gemm")) {
            const akg_sketch_expr *acc = akg_sketch_expr_item_count(v) > 2
                                             ? akg_sketch_expr_item(v, 2)
                                             : akg_sketch_expr_kwarg(v, "acc");
            if (!acc || akg_sketch_expr_get_kind(acc) != AKG_SKETCH_EXPR_NAME ||
                strcmp(akg_sketch_expr_text(acc), name)) {
                tl_fail(C, st,
                        "'%s = gemm(a, b, acc)' accumulates into its own target only "
                        "(T.gemm updates the accumulator in place)",
                        name);
                return;
            }
            gemm(C, v, acc);
            return;
        }
        const char *k = idx(C, v, false, false);
        if (k) {
            const char *py = tl_strf(C, "v_%s_%d", name, C->temp++);
            tl_line(C, "%s = %s", py, k);
            bind(C, name, 'k', py, -1);
            return;
        }
        assign_tile(C, name, v);
        return;
    }
    case AKG_SKETCH_STMT_CALL: {
        const akg_sketch_expr *call = akg_sketch_call_expr(st);
        if (!strcmp(akg_sketch_expr_text(call), "gemm")) {
            const akg_sketch_expr *dst = akg_sketch_expr_kwarg(call, "dst");
            if (!dst)
                dst = akg_sketch_expr_item_count(call) > 2 ? akg_sketch_expr_item(call, 2) : NULL;
            gemm(C, call, dst);
            return;
        }
        tl_fail(C, st,
                "the call statement '%s(...)' is not lowered by the tilelang_cuda emitter "
                "yet (gemm only)",
                akg_sketch_expr_text(call));
        return;
    }
    case AKG_SKETCH_STMT_FOR: {
        const char *lo = idx(C, akg_sketch_for_start(st), false, true);
        const char *hi = idx(C, akg_sketch_for_stop(st), false, true);
        const char *step =
            akg_sketch_for_step(st) ? idx(C, akg_sketch_for_step(st), true, true) : "1";
        if (!lo || !hi || !step)
            return;
        const char *it = tl_strf(C, "_it%d", C->temp++);
        bool pipe = akg_sketch_stmt_hint_value(st, "pipeline") != NULL;
        const char *count = strcmp(step, "1")
                                ? tl_strf(C, "(%s - %s + %s - 1) // %s", hi, lo, step, step)
                                : tl_strf(C, "%s - %s", hi, lo);
        tl_line(C, "for %s in %s(%s%s):", it, pipe ? "T.Pipelined" : "T.serial", count,
                pipe ? ", num_stages=2" : "");
        C->indent++;
        const char *py = tl_strf(C, "v_%s_%d", akg_sketch_for_var(st), C->temp++);
        tl_line(C, "%s = %s + %s * %s", py, lo, it, step);
        size_t mark = C->n_names;
        bind(C, akg_sketch_for_var(st), 'k', py, -1);
        kernel_stmts(C, st, 0);
        C->n_names = mark;
        C->indent--;
        return;
    }
    case AKG_SKETCH_STMT_IF: {
        const char *cond = idx(C, akg_sketch_if_cond(st), false, false);
        if (!cond) {
            tl_fail_expr(C, akg_sketch_if_cond(st),
                         "'if %s': only conditions on integers are lowered (a tile condition "
                         "needs where())",
                         text_of(C, akg_sketch_if_cond(st)));
            return;
        }
        tl_line(C, "if %s:", cond);
        C->indent++;
        size_t mark = C->n_names;
        kernel_stmts(C, st, 0);
        C->n_names = mark;
        C->indent--;
        if (akg_sketch_stmt_body_count(st, 1)) {
            tl_line(C, "else:");
            C->indent++;
            kernel_stmts(C, st, 1);
            C->n_names = mark;
            C->indent--;
        }
        return;
    }
    }
}

static void kernel_stmts(tl_ctx *C, const akg_sketch_stmt *parent, int which)
{
    size_t n = akg_sketch_stmt_body_count(parent, which);
    if (!n)
        tl_line(C, "pass");
    for (size_t i = 0; i < n && !C->status; i++)
        kernel_stmt(C, akg_sketch_stmt_body_at(parent, which, i));
}

static bool is_parallel(const akg_sketch_stmt *st)
{
    return akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_FOR &&
           akg_sketch_stmt_hint_value(st, "parallel") != NULL;
}

/* ---- kernels and host code ---- */

static void launch(tl_ctx *C, akg_buf *kernels, const akg_sketch_stmt *st)
{
    const akg_sketch_stmt *axes[3];
    int n_axes = 0;
    for (const akg_sketch_stmt *s = st;;) {
        axes[n_axes++] = s;
        if (n_axes == 3 || akg_sketch_stmt_body_count(s, 0) != 1 ||
            !is_parallel(akg_sketch_stmt_body_at(s, 0, 0)))
            break;
        s = akg_sketch_stmt_body_at(s, 0, 0);
    }
    int k = C->kernels++;
    const char *counts[3], *grid = "";
    for (int a = 0; a < n_axes; a++) {
        C->cur = axes[a];
        const char *lo = idx(C, akg_sketch_for_start(axes[a]), true, true);
        const char *hi = idx(C, akg_sketch_for_stop(axes[a]), true, true);
        const akg_sketch_expr *se = akg_sketch_for_step(axes[a]);
        const char *step = se ? idx(C, se, true, true) : "1";
        if (!lo || !hi || !step)
            return;
        counts[a] = tl_strf(C, "max(0, _akg_cdiv(%s - %s, %s))", hi, lo, step);
        grid = tl_strf(C, "%s%s_n%d", grid, a ? " * " : "", a);
    }
    /* the body, into its own buffer: the tile declarations go above it */
    akg_buf body;
    akg_buf_init(&body, 16u << 20);
    akg_buf *host = C->out;
    int host_indent = C->indent;
    C->out = &body;
    C->indent = 3;
    size_t mark = C->n_names, bufs0 = C->n_bufs;
    tl_line(C, "_pid = _bx");
    for (int a = n_axes - 1; a >= 0; a--) {
        const char *lo = idx(C, akg_sketch_for_start(axes[a]), true, true);
        const akg_sketch_expr *se = akg_sketch_for_step(axes[a]);
        const char *step = se ? idx(C, se, true, true) : "1";
        const char *py = tl_strf(C, "v_%s_%d", akg_sketch_for_var(axes[a]), C->temp++);
        tl_line(C, "%s = %s + %s * %s", py, lo, a ? tl_strf(C, "_pid %% _n%d", a) : "_pid", step);
        if (a)
            tl_line(C, "_pid = _pid // _n%d", a);
        bind(C, akg_sketch_for_var(axes[a]), 'k', py, -1);
    }
    kernel_stmts(C, axes[n_axes - 1], 0);
    C->n_names = mark;
    C->out = host;
    C->indent = host_indent;
    if (C->status) {
        akg_buf_free(&body);
        return;
    }
    /* the factory: symbols and params are Python values when the prim_func is traced */
    const char *args = "", *sig = "";
    size_t ns = akg_sketch_symbol_count(C->sk), np = akg_sketch_param_count(C->sk);
    for (size_t i = 0; i < ns; i++)
        args = tl_strf(C, "%s%sS_%s", args, *args ? ", " : "", akg_sketch_symbol_name(C->sk, i));
    for (size_t i = 0; i < np; i++)
        args = tl_strf(C, "%s%sP_%s", args, *args ? ", " : "", akg_sketch_param_name(C->sk, i));
    for (size_t t = 0; t < akg_sketch_tensor_count(C->sk); t++) {
        const char *dims = "";
        for (size_t d = 0; d < akg_sketch_tensor_rank(C->sk, t); d++) {
            const char *x = idx(C, akg_sketch_tensor_dim(C->sk, t, d), true, true);
            if (!x) {
                akg_buf_free(&body);
                return;
            }
            dims = tl_strf(C, "%s%s, ", dims, x);
        }
        sig = tl_strf(C, "%s%sT_%s: T.Tensor((%s), \"%s\")", sig, t ? ", " : "",
                      akg_sketch_tensor_name(C->sk, t), dims,
                      dtype_str(akg_sketch_tensor_dtype(C->sk, t)));
    }
    akg_sketch_span sp = akg_sketch_stmt_span(st);
    akg_buf_appendf(kernels,
                    "\n\n# _akg_k%d: sketch line %u, %d parallel loop%s flattened onto "
                    "blockIdx.x\n@functools.lru_cache(maxsize=None)\ndef _akg_k%d(%s):\n",
                    k, sp.line + 1, n_axes, n_axes > 1 ? "s" : "", k, args);
    for (int a = 0; a < n_axes; a++)
        akg_buf_appendf(kernels, "    _n%d = %s\n", a, counts[a]);
    akg_buf_appendf(kernels,
                    "\n    @T.prim_func\n    def main(%s):\n        with T.Kernel(max(1, %s), "
                    "threads=_AKG_THREADS) as _bx:\n",
                    sig, grid);
    for (size_t i = bufs0; i < C->n_bufs; i++) {
        const tl_buf *b = &C->bufs[i];
        const char *shape = "";
        for (int d = 0; d < b->rank; d++)
            shape = tl_strf(C, "%s%s, ", shape, b->pad[d]);
        akg_buf_appendf(kernels, "            %s = T.alloc_%s((%s), \"%s\")\n", b->py,
                        b->shared ? "shared" : "fragment", b->rank ? shape : "1, ",
                        dtype_str(b->dt));
    }
    akg_buf_append(kernels, body.data ? body.data : "", body.len);
    akg_buf_free(&body);
    akg_buf_puts(kernels, "\n    return tilelang.compile(main, target=\"cuda\")\n");
    const char *targs = "";
    for (size_t t = 0; t < akg_sketch_tensor_count(C->sk); t++)
        targs = tl_strf(C, "%s%sT_%s", targs, t ? ", " : "", akg_sketch_tensor_name(C->sk, t));
    tl_line(C, "_akg_k%d(%s)(%s)", k, args, targs);
}

static void host_stmts(tl_ctx *C, akg_buf *kernels, const akg_sketch_stmt *parent, int which)
{
    size_t n = parent ? akg_sketch_stmt_body_count(parent, which) : akg_sketch_body_count(C->sk);
    if (!n)
        tl_line(C, "pass");
    for (size_t i = 0; i < n && !C->status; i++) {
        const akg_sketch_stmt *st =
            parent ? akg_sketch_stmt_body_at(parent, which, i) : akg_sketch_body_at(C->sk, i);
        C->cur = st;
        if (is_parallel(st)) {
            launch(C, kernels, st);
        } else if (akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_IF) {
            const char *cond = idx(C, akg_sketch_if_cond(st), true, false);
            if (!cond) {
                tl_fail_expr(C, akg_sketch_if_cond(st),
                             "'if %s' on the host: only conditions on symbols and constexprs "
                             "are lowered",
                             text_of(C, akg_sketch_if_cond(st)));
                return;
            }
            tl_line(C, "if %s:", cond);
            C->indent++;
            host_stmts(C, kernels, st, 0);
            C->indent--;
            if (akg_sketch_stmt_body_count(st, 1)) {
                tl_line(C, "else:");
                C->indent++;
                host_stmts(C, kernels, st, 1);
                C->indent--;
            }
        } else if (akg_sketch_stmt_get_kind(st) != AKG_SKETCH_STMT_PASS) {
            tl_fail(C, st,
                    "a host statement outside the parallel loops (a loop around them, a scratch "
                    "tile, a serial tail) is not lowered by the tilelang_cuda emitter yet: "
                    "TileLang kernels here are the sketch's outermost parallel loops");
            return;
        }
    }
}

static const char prelude[] =
    "import functools\n"
    "\n"
    "import torch\n"
    "import tilelang\n"
    "import tilelang.language as T\n"
    "\n"
    "# threads per block: T.Parallel loops are spread over them by TileLang's layout inference\n"
    "_AKG_THREADS = 128\n"
    "\n"
    "\n"
    "def _akg_cdiv(a, b):\n"
    "    return -(-a // b)\n";

static void lower_module(tl_ctx *C, akg_buf *out, const char *source)
{
    const akg_sketch *sk = C->sk;
    akg_buf host, kernels;
    akg_buf_init(&host, 16u << 20);
    akg_buf_init(&kernels, 32u << 20);
    C->out = &host;
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        int64_t v;
        if (akg_sketch_const_int(sk, i, &v) == 0)
            bind(C, akg_sketch_const_name(sk, i), 'c', tl_strf(C, "%lld", (long long)v), -1);
    }
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
        bind(C, akg_sketch_symbol_name(sk, i), 's',
             tl_strf(C, "S_%s", akg_sketch_symbol_name(sk, i)), -1);
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++)
        bind(C, akg_sketch_param_name(sk, i), 'p', tl_strf(C, "P_%s", akg_sketch_param_name(sk, i)),
             -1);
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
        bind(C, akg_sketch_tensor_name(sk, i), 't',
             tl_strf(C, "T_%s", akg_sketch_tensor_name(sk, i)), -1);
        C->names[C->n_names - 1].tensor = (long)i;
    }
    tl_line(C, "def akg_kernel(tensors, symbols, params):");
    C->indent = 1;
    tl_line(C, "\"\"\"The sketch's body: tensors, symbols and params in declaration order.\"\"\"");
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++)
        tl_line(C, "T_%s = tensors[%zu]", akg_sketch_tensor_name(sk, i), i);
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++)
        tl_line(C, "S_%s = int(symbols[%zu])", akg_sketch_symbol_name(sk, i), i);
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++)
        tl_line(C, "P_%s = float(params[%zu])", akg_sketch_param_name(sk, i), i);
    host_stmts(C, &kernels, NULL, 0);
    tl_line(C, "return 0");
    akg_buf_appendf(out,
                    "# %s: generated by akg from %s (cuda/tilelang_cuda backend): every loop, "
                    "tile and\n# computation below is the sketch's, lowered by the language's "
                    "semantics.\n# Entry: akg_kernel(tensors, symbols, params), in the sketch's "
                    "declaration order;\n# each kernel is built per shape (its factory is "
                    "cached per symbol values).\n",
                    akg_sketch_name(sk), source ? source : "its sketch");
    akg_buf_puts(out, prelude);
    akg_buf_append(out, kernels.data ? kernels.data : "", kernels.len);
    akg_buf_puts(out, "\n\n");
    akg_buf_append(out, host.data ? host.data : "", host.len);
    if (!C->status && (akg_buf_status(&host) || akg_buf_status(&kernels) || akg_buf_status(out)))
        tl_fail(C, NULL, "the generated module exceeds its size limit");
    akg_buf_free(&host);
    akg_buf_free(&kernels);
}

static int tilelang_lower(const akg_sketch *sk, const char *source, char **out, char *err,
                          size_t errlen)
{
    *out = NULL;
    tl_ctx *C = calloc(1, sizeof *C);
    if (!C)
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    C->sk = sk;
    C->err = err;
    C->errlen = errlen;
    akg_buf buf;
    akg_buf_init(&buf, 64u << 20);
    lower_module(C, &buf, source);
    int rc = C->status;
    while (C->arena) {
        tl_chunk *next = C->arena->next;
        free(C->arena);
        C->arena = next;
    }
    free(C);
    if (rc) {
        akg_buf_free(&buf);
        return rc;
    }
    *out = akg_buf_steal(&buf);
    return *out ? AKG_OK : akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
}

static int tilelang_lower_only(const akg_sketch *sk, bool safe, char **src, char *err,
                               size_t errlen)
{
    (void)safe;
    return tilelang_lower(sk, NULL, src, err, errlen);
}

static int tilelang_emit(const akg_sketch *sk, const akg_emit_request *req, akg_kernel_files *out,
                         char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (!req->ref)
        return akg_fail(err, errlen, AKG_EINVAL, "model_new.py needs the reference's Model");
    char *src = NULL;
    int rc = tilelang_lower(sk, req->sketch_file, &src, err, errlen);
    if (rc)
        return rc;
    char hash[65], module[32];
    akg_sha256_hex(src, strlen(src), hash);
    snprintf(module, sizeof module, "kernel_%.12s", hash);
    akg_buf py;
    akg_buf_init(&py, 4u << 20);
    akg_buf_appendf(&py,
                    "\"\"\"ModelNew for %s: a drop-in replacement for Model, generated by akg "
                    "(cuda/tilelang_cuda)\nfrom %s. The computation runs in the TileLang kernels "
                    "of %s.py; this file binds\nthe task's tensors to the sketch's (its bind: "
                    "section) and calls them.\"\"\"\n",
                    akg_sketch_name(sk), req->sketch_file ? req->sketch_file : "the sketch",
                    module);
    akg_buf_appendf(&py, "import torch\nimport torch.nn as nn\n\nimport %s as _akg\n\n", module);
    akg_buf_puts(&py,
                 "# CUDA tensors (TileLang compiles for the GPU)\n_AKG_DEVICE = \"cuda\"\n\n\n");
    rc = akg_sketch_bind_python(sk, req->ref, req->probe, &py, err, errlen);
    if (rc) {
        akg_buf_free(&py);
        free(src);
        return rc;
    }
    akg_buf_puts(&py, "\n    def forward(self");
    for (size_t i = 0; i < req->ref->n_forward_params; i++)
        akg_buf_appendf(&py, ", %s", req->ref->forward_params[i].name);
    akg_buf_puts(&py, "):\n        tensors, symbols, params, result = self._akg_bind(");
    for (size_t i = 0; i < req->ref->n_forward_params; i++)
        akg_buf_appendf(&py, "%s%s", i ? ", " : "", req->ref->forward_params[i].name);
    akg_buf_puts(&py,
                 ")\n        _akg.akg_kernel(tensors, symbols, params)\n        return result\n");
    if (akg_buf_status(&py)) {
        akg_buf_free(&py);
        free(src);
        return akg_fail(err, errlen, AKG_ENOMEM, "model_new.py exceeds its size limit");
    }
    char fname[40];
    snprintf(fname, sizeof fname, "%s.py", module);
    out->kernel_source = src;
    out->kernel_filename = akg_strdup(fname);
    out->model_new_source = akg_buf_steal(&py);
    if (!out->kernel_filename || !out->model_new_source) {
        akg_kernel_files_free(out);
        return akg_fail(err, errlen, AKG_ENOMEM, "out of memory");
    }
    return AKG_OK;
}

static int tilelang_build_argv(const akg_build_request *req, char ***argv, char *err, size_t errlen)
{
    (void)req, (void)err, (void)errlen;
    *argv = NULL; /* tilelang.compile at the first call */
    return AKG_OK;
}

/* The NVIDIA driver's control node: without it there is no CUDA GPU for TileLang. */
static const char *tilelang_runtime_missing(void)
{
    struct stat st;
    return stat("/dev/nvidiactl", &st) == 0
               ? NULL
               : "TileLang needs a CUDA GPU: no NVIDIA device (/dev/nvidiactl) on this machine";
}

const akg_backend akg_backend_cuda_tilelang_cuda = {
    .name = "cuda",
    .dsl = "tilelang_cuda",
    .device_kind = "cuda",
    .default_arch = "sm_90",
    .config_path = "backends/cuda/tilelang_cuda/config.yaml",
    .description = "TileLang on NVIDIA GPUs: @T.prim_func kernels built per shape by "
                   "tilelang.compile",
    .lower = tilelang_lower_only,
    .emit = tilelang_emit,
    .build_argv = tilelang_build_argv,
    .runtime_missing = tilelang_runtime_missing,
};
