/*
 * cu_core.c: the CUDA C lowering's plumbing: an arena for every string and
 * node of one lowering (released at once), sticky failures that name the
 * sketch's file:line:col, indented output, the scope of names, and the C
 * spelling of dtypes.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cu.h"

#define CU_ARENA_CAP (256u << 20)
#define CU_MAX_BINDS 100000u

void *cu_alloc(cu_ctx *C, size_t n)
{
    int over = 0;
    C->arena.cap = CU_ARENA_CAP;
    void *p = akg_arena_alloc(&C->arena, n, &over);
    if (!p && over)
        cu_fail(C, NULL, "the lowering needs more than %u MiB of memory", CU_ARENA_CAP >> 20);
    else if (!p)
        cu_fail(C, NULL, "out of memory");
    return p;
}

void cu_release(cu_ctx *C)
{
    akg_arena_free(&C->arena);
    free(C->binds);
    C->binds = NULL;
    C->n_binds = C->cap_binds = 0;
}

const char *cu_strf(cu_ctx *C, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return "";
    char *p = cu_alloc(C, (size_t)n + 1);
    if (!p)
        return "";
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

static int fail_at(cu_ctx *C, const akg_sketch_span *sp, const char *fmt, va_list ap)
{
    if (C->status)
        return C->status;
    C->status = AKG_EUNSUPPORTED;
    char msg[900];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (C->err && C->errlen) {
        if (sp)
            snprintf(C->err, C->errlen, "%s:%u:%u: %s", C->source ? C->source : "sketch.sketch",
                     sp->line + 1, sp->col + 1, msg);
        else
            snprintf(C->err, C->errlen, "%s", msg);
    }
    return C->status;
}

int cu_fail(cu_ctx *C, const akg_sketch_stmt *at, const char *fmt, ...)
{
    if (!at)
        at = C->cur;
    akg_sketch_span sp = {0};
    if (at)
        sp = akg_sketch_stmt_span(at);
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_at(C, at ? &sp : NULL, fmt, ap);
    va_end(ap);
    return rc;
}

int cu_fail_expr(cu_ctx *C, const akg_sketch_expr *at, const char *fmt, ...)
{
    akg_sketch_span sp = {0};
    bool has = true;
    if (at)
        sp = akg_sketch_expr_span(at);
    else if (C->cur)
        sp = akg_sketch_stmt_span(C->cur);
    else
        has = false;
    va_list ap;
    va_start(ap, fmt);
    int rc = fail_at(C, has ? &sp : NULL, fmt, ap);
    va_end(ap);
    return rc;
}

void cu_line(cu_ctx *C, const char *fmt, ...)
{
    if (C->status || !C->out)
        return;
    for (int i = 0; i < C->indent; i++)
        akg_buf_puts(C->out, "  ");
    va_list ap;
    va_start(ap, fmt);
    char small[512];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n < sizeof small) {
        akg_buf_append(C->out, small, (size_t)n);
    } else {
        char *big = malloc((size_t)n + 1);
        if (!big) {
            cu_fail(C, NULL, "out of memory");
            return;
        }
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        akg_buf_append(C->out, big, (size_t)n);
        free(big);
    }
    akg_buf_puts(C->out, "\n");
    C->synced = false;
}

void cu_sync(cu_ctx *C)
{
    if (C->synced)
        return;
    cu_line(C, "__syncthreads();");
    C->synced = true;
}

const char *cu_temp(cu_ctx *C, const char *prefix)
{
    return cu_strf(C, "%s%d", prefix, ++C->temp);
}

void cu_unflatten(cu_ctx *C, int rank, const char *const *ext, const bool *take, const char *flat,
                  bool slowest_rest, const char **idx)
{
    int slowest = -1;
    for (int d = rank - 1; d >= 0; d--)
        if (take[d])
            slowest = d;
    const char *rest = flat;
    for (int d = rank - 1; d >= 0; d--) {
        if (!take[d])
            continue;
        if (slowest_rest && d == slowest) { /* what is left of flat */
            idx[d] = rest;
            continue;
        }
        idx[d] = cu_temp(C, "_i");
        cu_line(C, "const long long %s = %s %% (%s);", idx[d], rest, ext[d]);
        const char *r2 = cu_temp(C, "_r");
        cu_line(C, "const long long %s = %s / (%s);", r2, rest, ext[d]);
        rest = r2;
    }
}

const char *cu_text(cu_ctx *C, const akg_sketch_expr *e)
{
    char *s = akg_sketch_expr_to_string(e);
    const char *r = cu_strf(C, "%s", s ? s : "?");
    free(s);
    return r;
}

cu_bind *cu_bind_new(cu_ctx *C, const char *name, cu_bind_kind kind)
{
    if (C->n_binds == C->cap_binds) {
        size_t cap = C->cap_binds ? C->cap_binds * 2 : 64;
        if (cap > CU_MAX_BINDS) {
            cu_fail(C, NULL, "more than %u names in scope", CU_MAX_BINDS);
            return NULL;
        }
        cu_bind *b = realloc(C->binds, cap * sizeof *b);
        if (!b) {
            cu_fail(C, NULL, "out of memory");
            return NULL;
        }
        C->binds = b;
        C->cap_binds = cap;
    }
    cu_bind *b = &C->binds[C->n_binds++];
    memset(b, 0, sizeof *b);
    b->name = name;
    b->kind = kind;
    b->loop_depth = C->loop_depth;
    return b;
}

cu_bind *cu_lookup(cu_ctx *C, const char *name)
{
    for (size_t i = C->n_binds; i-- > 0;)
        if (!strcmp(C->binds[i].name, name))
            return &C->binds[i];
    return NULL;
}

const char *cu_ctype(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_BOOL:
        return "bool";
    case AKG_DTYPE_I8:
        return "signed char";
    case AKG_DTYPE_I16:
        return "short";
    case AKG_DTYPE_I32:
        return "int";
    case AKG_DTYPE_I64:
        return "long long";
    case AKG_DTYPE_U8:
        return "unsigned char";
    case AKG_DTYPE_F16:
        return "__half";
    case AKG_DTYPE_BF16:
        return "__nv_bfloat16";
    case AKG_DTYPE_F64:
        return "double";
    default:
        return "float";
    }
}

const char *cu_comptype(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_BOOL:
        return "bool";
    case AKG_DTYPE_I8:
    case AKG_DTYPE_I16:
    case AKG_DTYPE_U8:
    case AKG_DTYPE_I32:
        return "int";
    case AKG_DTYPE_I64:
        return "long long";
    case AKG_DTYPE_F64:
        return "double";
    default:
        return "float";
    }
}

bool cu_is_float(akg_dtype dt)
{
    return dt == AKG_DTYPE_F16 || dt == AKG_DTYPE_BF16 || dt == AKG_DTYPE_F32 ||
           dt == AKG_DTYPE_F64;
}

bool cu_is_int(akg_dtype dt)
{
    return dt == AKG_DTYPE_I8 || dt == AKG_DTYPE_I16 || dt == AKG_DTYPE_I32 ||
           dt == AKG_DTYPE_I64 || dt == AKG_DTYPE_U8;
}
