/*
 * tt_core.c: the lowering's plumbing: an arena for every string and value of
 * one lowering, sticky failures that name the sketch line, indented output,
 * the scope of names, dtype spellings, and the syntactic reads/defines of
 * statements that the host/kernel split (tt_plan.c) is computed from.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tt.h"

#define TT_ARENA_CAP (256u << 20)

void *tt_alloc(tt_ctx *C, size_t n)
{
    int over = 0;
    C->arena.cap = TT_ARENA_CAP;
    void *p = akg_arena_alloc(&C->arena, n, &over);
    if (!p && over)
        tt_fail(C, NULL, "the lowering needs more than %u MiB of memory", TT_ARENA_CAP >> 20);
    else if (!p)
        tt_fail(C, NULL, "out of memory");
    return p;
}

void tt_release(tt_ctx *C)
{
    akg_arena_free(&C->arena);
    free(C->names);
    C->names = NULL;
}

const char *tt_strf(tt_ctx *C, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return "";
    char *p = tt_alloc(C, (size_t)n + 1);
    if (!p)
        return "";
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static int fail_at(tt_ctx *C, akg_sketch_span sp, bool has_span, const char *fmt, va_list ap)
{
    if (C->status)
        return C->status;
    C->status = AKG_EUNSUPPORTED;
    char msg[900];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (C->err && C->errlen) {
        if (has_span)
            snprintf(C->err, C->errlen, "sketch.sketch:%u:%u: %s", sp.line + 1, sp.col + 1, msg);
        else
            snprintf(C->err, C->errlen, "%s", msg);
    }
    return C->status;
}

int tt_fail(tt_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
{
    if (!at)
        at = C->cur;
    va_list ap;
    va_start(ap, fmt);
    akg_sketch_span sp = {0};
    if (at)
        sp = akg_sketch_stmt_span(at);
    int rc = fail_at(C, sp, at != NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int tt_fail_expr(tt_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    akg_sketch_span sp = {0};
    bool has = true;
    if (at)
        sp = akg_sketch_expr_span(at);
    else if (C->cur)
        sp = akg_sketch_stmt_span(C->cur);
    else
        has = false;
    int rc = fail_at(C, sp, has, fmt, ap);
    va_end(ap);
    return rc;
}

void tt_line(tt_ctx *C, const char *fmt, ...)
{
    if (C->status)
        return;
    for (int i = 0; i < C->indent; i++)
        akg_buf_puts(C->out, "    ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char *p = malloc((size_t)n + 1);
    if (!p) {
        tt_fail(C, NULL, "out of memory");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    akg_buf_append(C->out, p, (size_t)n);
    akg_buf_puts(C->out, "\n");
    free(p);
    if (akg_buf_status(C->out))
        tt_fail(C, NULL, "the generated module exceeds its size limit");
}

const char *tt_temp(tt_ctx *C)
{
    return tt_strf(C, "_t%d", C->temp++);
}

const char *tt_expr_text(tt_ctx *C, const akg_sketch_expr *e)
{
    char *s = akg_sketch_expr_to_string(e);
    const char *r = tt_strf(C, "%s", s ? s : "?");
    free(s);
    return r;
}

/* ---- names ---- */

tt_name *tt_bind(tt_ctx *C, const char *name, tt_name_kind kind, const char *py)
{
    if (C->n_names == C->cap_names) {
        size_t cap = C->cap_names ? C->cap_names * 2 : 64;
        tt_name *v = realloc(C->names, cap * sizeof *v);
        if (!v) {
            tt_fail(C, NULL, "out of memory");
            return NULL;
        }
        C->names = v;
        C->cap_names = cap;
    }
    tt_name *n = &C->names[C->n_names++];
    memset(n, 0, sizeof *n);
    n->name = name;
    n->kind = kind;
    n->py = py;
    n->tensor = -1;
    return n;
}

tt_name *tt_lookup(tt_ctx *C, const char *name)
{
    for (size_t i = C->n_names; i-- > 0;)
        if (!strcmp(C->names[i].name, name))
            return &C->names[i];
    return NULL;
}

size_t tt_scope_mark(tt_ctx *C)
{
    return C->n_names;
}

void tt_scope_pop(tt_ctx *C, size_t mark)
{
    if (mark < C->n_names)
        C->n_names = mark;
}

/* ---- dtypes ---- */

static const struct {
    akg_dtype dt;
    const char *tl, *torch;
} dtypes[] = {
    {AKG_DTYPE_BOOL, "tl.int1", "torch.bool"},
    {AKG_DTYPE_I8, "tl.int8", "torch.int8"},
    {AKG_DTYPE_I16, "tl.int16", "torch.int16"},
    {AKG_DTYPE_I32, "tl.int32", "torch.int32"},
    {AKG_DTYPE_I64, "tl.int64", "torch.int64"},
    {AKG_DTYPE_U8, "tl.uint8", "torch.uint8"},
    {AKG_DTYPE_F16, "tl.float16", "torch.float16"},
    {AKG_DTYPE_BF16, "tl.bfloat16", "torch.bfloat16"},
    {AKG_DTYPE_F32, "tl.float32", "torch.float32"},
    {AKG_DTYPE_F64, "tl.float64", "torch.float64"},
};

const char *tt_dtype_tl(akg_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == dt)
            return dtypes[i].tl;
    return "tl.float32";
}

const char *tt_dtype_torch(akg_dtype dt)
{
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].dt == dt)
            return dtypes[i].torch;
    return "torch.float32";
}

bool tt_dtype_is_float(akg_dtype dt)
{
    return dt == AKG_DTYPE_F16 || dt == AKG_DTYPE_BF16 || dt == AKG_DTYPE_F32 ||
           dt == AKG_DTYPE_F64;
}

bool tt_dtype_is_int(akg_dtype dt)
{
    return dt == AKG_DTYPE_I8 || dt == AKG_DTYPE_I16 || dt == AKG_DTYPE_I32 ||
           dt == AKG_DTYPE_I64 || dt == AKG_DTYPE_U8;
}

/* ---- reads and defines ---- */

void tt_names_add(tt_ctx *C, tt_names *s, const char *name)
{
    if (tt_names_has(s, name))
        return;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        const char **v = tt_alloc(C, cap * sizeof *v);
        if (!v)
            return;
        if (s->n)
            memcpy(v, s->v, s->n * sizeof *v);
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = name;
}

bool tt_names_has(const tt_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name))
            return true;
    return false;
}

void tt_names_remove(tt_names *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], name)) {
            s->v[i] = s->v[--s->n];
            return;
        }
}

void tt_expr_reads(tt_ctx *C, const akg_sketch_expr *e, tt_names *out)
{
    if (!e)
        return;
    switch (akg_sketch_expr_get_kind(e)) {
    case AKG_SKETCH_EXPR_NAME:
        tt_names_add(C, out, akg_sketch_expr_text(e));
        return;
    case AKG_SKETCH_EXPR_UNARY:
        tt_expr_reads(C, akg_sketch_expr_lhs(e), out);
        return;
    case AKG_SKETCH_EXPR_BINARY:
        tt_expr_reads(C, akg_sketch_expr_lhs(e), out);
        tt_expr_reads(C, akg_sketch_expr_rhs(e), out);
        return;
    case AKG_SKETCH_EXPR_SUBSCRIPT:
        tt_expr_reads(C, akg_sketch_expr_base(e), out);
        break;
    case AKG_SKETCH_EXPR_SLICE:
        tt_expr_reads(C, akg_sketch_slice_start(e), out);
        tt_expr_reads(C, akg_sketch_slice_stop(e), out);
        tt_expr_reads(C, akg_sketch_slice_step(e), out);
        return;
    case AKG_SKETCH_EXPR_CALL:
        for (size_t i = 0; i < akg_sketch_expr_kwarg_count(e); i++)
            tt_expr_reads(C, akg_sketch_expr_kwarg_value(e, i), out);
        break;
    default:
        break;
    }
    for (size_t i = 0; i < akg_sketch_expr_item_count(e); i++)
        tt_expr_reads(C, akg_sketch_expr_item(e, i), out);
}

/* The tile a destination-form call statement writes (`relu(x, y)`, `op(..., dst=t)`), or NULL. */
static const char *call_dst(const akg_sketch_expr *call)
{
    const akg_sketch_expr *d = akg_sketch_expr_kwarg(call, "dst");
    if (!d) {
        size_t n = akg_sketch_expr_item_count(call);
        if (n >= 2)
            d = akg_sketch_expr_item(call, n - 1);
    }
    return d && akg_sketch_expr_get_kind(d) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(d)
                                                                    : NULL;
}

static const char *base_name(const akg_sketch_expr *e)
{
    while (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_SUBSCRIPT)
        e = akg_sketch_expr_base(e);
    return e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_NAME ? akg_sketch_expr_text(e)
                                                                    : NULL;
}

static void block_reads(tt_ctx *C, const akg_sketch_stmt *st, int which, tt_names *reads,
                        tt_names *defined)
{
    for (size_t i = 0; i < akg_sketch_stmt_body_count(st, which); i++) {
        const akg_sketch_stmt *s = akg_sketch_stmt_body_at(st, which, i);
        tt_names r = {0};
        tt_stmt_reads(C, s, &r);
        for (size_t k = 0; k < r.n; k++)
            if (!tt_names_has(defined, r.v[k]))
                tt_names_add(C, reads, r.v[k]);
        tt_stmt_defs(C, s, defined);
    }
}

void tt_stmt_reads(tt_ctx *C, const akg_sketch_stmt *st, tt_names *reads)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_ALLOC:
        for (size_t d = 0; d < akg_sketch_alloc_rank(st); d++)
            tt_expr_reads(C, akg_sketch_alloc_dim(st, d), reads);
        break;
    case AKG_SKETCH_STMT_LOAD:
    case AKG_SKETCH_STMT_STORE:
        tt_expr_reads(C, akg_sketch_move_source(st), reads);
        tt_expr_reads(C, akg_sketch_move_target(st), reads);
        tt_expr_reads(C, akg_sketch_move_option(st, "mask"), reads);
        tt_expr_reads(C, akg_sketch_move_option(st, "other"), reads);
        break;
    case AKG_SKETCH_STMT_ASSIGN:
        tt_expr_reads(C, akg_sketch_assign_value(st), reads);
        if (strcmp(akg_sketch_assign_op(st), "="))
            for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
                tt_names_add(C, reads, akg_sketch_assign_target(st, i));
        break;
    case AKG_SKETCH_STMT_CALL:
        tt_expr_reads(C, akg_sketch_call_expr(st), reads);
        break;
    case AKG_SKETCH_STMT_FOR: {
        tt_expr_reads(C, akg_sketch_for_start(st), reads);
        tt_expr_reads(C, akg_sketch_for_stop(st), reads);
        tt_expr_reads(C, akg_sketch_for_step(st), reads);
        tt_names defined = {0};
        tt_names_add(C, &defined, akg_sketch_for_var(st));
        block_reads(C, st, 0, reads, &defined);
        break;
    }
    case AKG_SKETCH_STMT_IF: {
        tt_expr_reads(C, akg_sketch_if_cond(st), reads);
        tt_names d0 = {0}, d1 = {0};
        block_reads(C, st, 0, reads, &d0);
        block_reads(C, st, 1, reads, &d1);
        break;
    }
    default:
        break;
    }
}

void tt_stmt_defs(tt_ctx *C, const akg_sketch_stmt *st, tt_names *defs)
{
    switch (akg_sketch_stmt_get_kind(st)) {
    case AKG_SKETCH_STMT_ALLOC:
        tt_names_add(C, defs, akg_sketch_alloc_name(st));
        break;
    case AKG_SKETCH_STMT_LOAD: {
        const char *t = base_name(akg_sketch_move_target(st));
        if (t)
            tt_names_add(C, defs, t);
        break;
    }
    case AKG_SKETCH_STMT_ASSIGN:
        for (size_t i = 0; i < akg_sketch_assign_target_count(st); i++)
            tt_names_add(C, defs, akg_sketch_assign_target(st, i));
        break;
    case AKG_SKETCH_STMT_CALL: {
        const char *d = call_dst(akg_sketch_call_expr(st));
        if (d)
            tt_names_add(C, defs, d);
        break;
    }
    case AKG_SKETCH_STMT_FOR:
        tt_names_add(C, defs, akg_sketch_for_var(st));
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, 0); i++)
            tt_stmt_defs(C, akg_sketch_stmt_body_at(st, 0, i), defs);
        break;
    case AKG_SKETCH_STMT_IF:
        for (int w = 0; w < 2; w++)
            for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
                tt_stmt_defs(C, akg_sketch_stmt_body_at(st, w, i), defs);
        break;
    default:
        break;
    }
}

bool tt_is_parallel(const akg_sketch_stmt *st)
{
    return akg_sketch_stmt_get_kind(st) == AKG_SKETCH_STMT_FOR &&
           akg_sketch_stmt_hint_value(st, "parallel") != NULL;
}

bool tt_stmt_has_parallel(const akg_sketch_stmt *st)
{
    if (tt_is_parallel(st))
        return true;
    akg_sketch_stmt_kind k = akg_sketch_stmt_get_kind(st);
    if (k != AKG_SKETCH_STMT_FOR && k != AKG_SKETCH_STMT_IF)
        return false;
    for (int w = 0; w < 2; w++)
        for (size_t i = 0; i < akg_sketch_stmt_body_count(st, w); i++)
            if (tt_stmt_has_parallel(akg_sketch_stmt_body_at(st, w, i)))
                return true;
    return false;
}
