/*
 * lw_core.c: the lowering's arena, errors, line emission, environment and
 * C++ type names (see lw.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lw.h"

#define LW_ARENA_CAP ((size_t)512 << 20)

void *lw_alloc(lw_ctx *L, size_t n)
{
    int over = 0;
    L->arena.cap = LW_ARENA_CAP;
    void *p = akg_arena_alloc(&L->arena, n, &over);
    if (!p && over)
        lw_fail(L, "the lowering needs more than %zu MiB of memory", (size_t)(LW_ARENA_CAP >> 20));
    else if (!p)
        lw_fail(L, "out of memory");
    return p;
}

void lw_ctx_release(lw_ctx *L)
{
    akg_arena_free(&L->arena);
    free(L->env);
    L->env = NULL;
}

const char *lw_strf(lw_ctx *L, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return "";
    char *p = lw_alloc(L, (size_t)n + 1);
    if (!p)
        return "";
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

int lw_fail(lw_ctx *L, const char *fmt, ...)
{
    if (L->status)
        return L->status;
    L->status = AKG_EUNSUPPORTED;
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (L->err && L->errlen) {
        if (L->cur) {
            akg_sketch_span sp = akg_sketch_stmt_span(L->cur);
            snprintf(L->err, L->errlen, "sketch.sketch:%u:%u: %s", sp.line + 1, sp.col + 1, msg);
        } else {
            snprintf(L->err, L->errlen, "%s", msg);
        }
    }
    return L->status;
}

bool lw_ok(const lw_ctx *L)
{
    return L->status == 0;
}

void lw_line(lw_ctx *L, const char *fmt, ...)
{
    if (!lw_ok(L))
        return;
    for (int i = 0; i < L->indent; i++)
        akg_buf_puts(L->out, "  ");
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    char small[512];
    char *p = (size_t)n < sizeof small ? small : malloc((size_t)n + 1);
    if (!p) {
        lw_fail(L, "out of memory");
        return;
    }
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    akg_buf_append(L->out, p, (size_t)n);
    akg_buf_puts(L->out, "\n");
    if (p != small)
        free(p);
    if (akg_buf_status(L->out))
        lw_fail(L, "the generated kernel exceeds its size limit");
}

lw_val *lw_new(lw_ctx *L, lw_kind kind)
{
    lw_val *v = lw_alloc(L, sizeof *v);
    if (!v)
        return NULL;
    v->kind = kind;
    v->id = ++L->next_id;
    for (int i = 0; i < LW_MAXR; i++)
        v->tile_of_bdim[i] = -1;
    return v;
}

const char *lw_ctype(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_BOOL:
        return "bool";
    case AKG_DTYPE_I8:
        return "int8_t";
    case AKG_DTYPE_I16:
        return "int16_t";
    case AKG_DTYPE_I32:
        return "int32_t";
    case AKG_DTYPE_I64:
        return "int64_t";
    case AKG_DTYPE_U8:
        return "uint8_t";
    case AKG_DTYPE_F16:
        return "akg_f16";
    case AKG_DTYPE_BF16:
        return "akg_bf16";
    case AKG_DTYPE_F64:
        return "double";
    default:
        return "float";
    }
}

const char *lw_comptype(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_F16:
    case AKG_DTYPE_BF16:
    case AKG_DTYPE_F32:
    case AKG_DTYPE_UNKNOWN:
        return "float";
    default:
        return lw_ctype(dt);
    }
}

bool lw_is_float(akg_dtype dt)
{
    return dt == AKG_DTYPE_F16 || dt == AKG_DTYPE_BF16 || dt == AKG_DTYPE_F32 ||
           dt == AKG_DTYPE_F64 || dt == AKG_DTYPE_UNKNOWN;
}

int lw_comp_bits(akg_dtype dt)
{
    switch (dt) {
    case AKG_DTYPE_F64:
    case AKG_DTYPE_I64:
        return 64;
    case AKG_DTYPE_I16:
        return 16;
    case AKG_DTYPE_BOOL:
    case AKG_DTYPE_I8:
    case AKG_DTYPE_U8:
        return 8;
    default:
        return 32; /* f32, i32, and f16/bf16 computed in float */
    }
}

void lw_note_width(lw_ctx *L, int64_t lanes, int bits)
{
    if (lanes <= 0 || lanes > 1024)
        return;
    int w = (int)lanes * bits;
    if (!L->width_min || w < L->width_min)
        L->width_min = w;
    if (w > L->width_max)
        L->width_max = w;
}

lw_dim lw_dim_const(lw_ctx *L, int64_t k)
{
    lw_dim d = {lw_strf(L, "%lld", (long long)k), true, k, false, 0};
    return d;
}

lw_dim lw_dim_text(lw_ctx *L, const char *c)
{
    (void)L;
    lw_dim d = {c, false, 0, false, 0};
    return d;
}

bool lw_dim_equal(lw_dim a, lw_dim b)
{
    if (a.known && b.known)
        return a.k == b.k;
    if (a.known != b.known)
        return false;
    return strcmp(a.c, b.c) == 0;
}

void lw_bind(lw_ctx *L, const char *name, lw_val *v)
{
    for (size_t i = 0; i < L->n_env; i++)
        if (strcmp(L->env[i].name, name) == 0) {
            L->env[i].val = v;
            return;
        }
    if (L->n_env == L->cap_env) {
        size_t cap = L->cap_env ? L->cap_env * 2 : 64;
        lw_name *e = realloc(L->env, cap * sizeof *e);
        if (!e) {
            lw_fail(L, "out of memory");
            return;
        }
        L->env = e;
        L->cap_env = cap;
    }
    L->env[L->n_env].name = name;
    L->env[L->n_env].val = v;
    L->n_env++;
}

lw_val *lw_lookup(lw_ctx *L, const char *name)
{
    for (size_t i = 0; i < L->n_env; i++)
        if (strcmp(L->env[i].name, name) == 0)
            return L->env[i].val;
    return NULL;
}

const char *lw_float_lit(lw_ctx *L, double v, const char *ct)
{
    bool dbl = strcmp(ct, "double") == 0;
    if (isnan(v))
        return dbl ? "((double)NAN)" : "NAN";
    if (isinf(v))
        return v < 0 ? (dbl ? "(-(double)INFINITY)" : "(-INFINITY)")
                     : (dbl ? "((double)INFINITY)" : "INFINITY");
    if (strcmp(ct, "float") != 0 && !dbl) {
        /* integers: an integer literal when exact */
        if (v == (double)(long long)v)
            return lw_strf(L, "(%s)%lld", ct, (long long)v);
        return lw_strf(L, "(%s)%.17g", ct, v);
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.17g", v);
    if (!strpbrk(tmp, ".eEn"))
        strcat(tmp, ".0");
    return dbl ? lw_strf(L, "%s", tmp) : lw_strf(L, "%sf", tmp);
}
