/*
 * cpp_lower.c: the entry point of the cpu/cpp Coder (see cpp_lower.h, lw.h).
 *
 * The kernel's layout: a comment naming the sketch, the prelude
 * (lw_prelude.c), the constexprs with their chosen values, then akg_kernel:
 * it unpacks the three ABI arrays into named locals (tensors T_<name>,
 * symbols S_<name>, params P_<name>) and runs the lowered body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpp_lower.h"
#include "lw.h"

extern const char lw_prelude[];

static void declare_consts(lw_ctx *L)
{
    const akg_sketch *sk = L->sk;
    for (size_t i = 0; i < akg_sketch_const_count(sk); i++) {
        const char *name = akg_sketch_const_name(sk, i);
        int64_t v;
        if (akg_sketch_const_int(sk, i, &v) == 0) {
            lw_line(L, "static constexpr int64_t C_%s = %lld;%s", name, (long long)v,
                    akg_sketch_const_is_tunable(sk, i) ? "  // tune()d: the chosen candidate"
                                                       : "");
            continue;
        }
        const akg_sketch_expr *e = akg_sketch_const_value(sk, i);
        if (akg_sketch_const_is_tunable(sk, i))
            e = akg_sketch_const_candidate(sk, i, akg_sketch_const_choice(sk, i));
        if (e && akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_FLOAT)
            lw_line(L, "static constexpr double C_%s = %s;", name,
                    lw_float_lit(L, akg_sketch_expr_float(e), "double"));
    }
}

#define MAX_CONST_SYMBOLS 64

/* The symbols the bind: section binds to integer expressions of constants (`I = 1`,
 * `K2 = KS * KS` with constexprs): the wrapper passes exactly that value, so the kernel may
 * take it as a compile-time fact (strides fold, guards on it become provable). */
static size_t constant_symbols(const akg_sketch *sk, akg_sketch_binding *out)
{
    size_t n = 0;
    for (size_t i = 0; i < akg_sketch_bind_count(sk) && n < MAX_CONST_SYMBOLS; i++) {
        const char *name = akg_sketch_bind_name(sk, i);
        bool symbol = false;
        for (size_t s = 0; s < akg_sketch_symbol_count(sk) && !symbol; s++)
            symbol = !strcmp(akg_sketch_symbol_name(sk, s), name);
        const akg_sketch_expr *e = akg_sketch_bind_value(sk, i);
        if (!symbol || !e || akg_sketch_expr_get_kind(e) == AKG_SKETCH_EXPR_CALL)
            continue; /* input(), attr(), ...: known only when the kernel runs */
        int64_t v;
        if (akg_sketch_expr_eval(sk, e, out, n, &v) == 0) {
            out[n].name = name;
            out[n].value = v;
            n++;
        }
    }
    return n;
}

static void unpack_args(lw_ctx *L)
{
    const akg_sketch *sk = L->sk;
    akg_sketch_binding consts[MAX_CONST_SYMBOLS];
    size_t n_consts = constant_symbols(sk, consts);
    for (size_t i = 0; i < akg_sketch_symbol_count(sk); i++) {
        const char *name = akg_sketch_symbol_name(sk, i);
        const char *c = lw_strf(L, "S_%s", name);
        lw_line(L, "const int64_t %s = akg_symbols[%zu];", c, i);
        bool nonneg = true; /* sizes */
        for (size_t k = 0; k < n_consts; k++)
            if (!strcmp(consts[k].name, name)) {
                lw_line(L, "(void)%s; // bound to %lld", c, (long long)consts[k].value);
                c = lw_strf(L, "%lld", (long long)consts[k].value);
                nonneg = consts[k].value >= 0;
            }
        lw_val *v = lw_scalar(L, AKG_DTYPE_I64, c);
        if (!v)
            return;
        v->nonneg = nonneg;
        lw_bind(L, name, v);
    }
    for (size_t i = 0; i < akg_sketch_param_count(sk); i++) {
        const char *name = akg_sketch_param_name(sk, i);
        akg_dtype dt = akg_sketch_param_dtype(sk, i);
        if (!dt)
            dt = AKG_DTYPE_F32;
        const char *ct = lw_comptype(dt);
        const char *c = lw_strf(L, "P_%s", name);
        lw_line(L, "const %s %s = (%s)akg_params[%zu];", ct, c, ct, i);
        lw_val *v = lw_scalar(L, dt, c);
        if (!v)
            return;
        lw_bind(L, name, v);
    }
    for (size_t i = 0; i < akg_sketch_tensor_count(sk); i++) {
        const char *name = akg_sketch_tensor_name(sk, i);
        lw_val *t = lw_new(L, LV_TENSOR);
        if (!t)
            return;
        t->dt = akg_sketch_tensor_dtype(sk, i);
        t->rank = (int)akg_sketch_tensor_rank(sk, i);
        for (int d = 0; d < t->rank; d++)
            t->dim[d] = lw_index_dim(L, akg_sketch_tensor_dim(sk, i, (size_t)d));
        t->is_output = akg_sketch_tensor_is_stored(sk, i);
        t->ptr = lw_strf(L, "T_%s", name);
        lw_set_strides(L, t);
        const char *ct = lw_ctype(t->dt);
        lw_line(L, "%s%s *__restrict %s = (%s%s *)akg_tensors[%zu];", t->is_output ? "" : "const ",
                ct, t->ptr, t->is_output ? "" : "const ", ct, i);
        lw_bind(L, name, t);
    }
}

int akg_cpp_lower(const akg_sketch *sk, const akg_cpp_lower_options *opts, char **out, char *err,
                  size_t errlen)
{
    *out = NULL;
    /* the body first: what it uses decides what the kernel's head includes */
    akg_buf body;
    akg_buf_init(&body, 64u << 20);
    lw_ctx L;
    memset(&L, 0, sizeof L);
    L.sk = sk;
    L.out = &body;
    L.err = err;
    L.errlen = errlen;
    L.safe = opts && opts->safe;
    declare_consts(&L);
    lw_line(&L, "%s", "");
    lw_line(&L, "extern \"C\" int akg_kernel(void *const *akg_tensors, const int64_t *akg_symbols,");
    lw_line(&L, "                          const double *akg_params) {");
    L.indent = 1;
    lw_line(&L, "(void)akg_tensors; (void)akg_symbols; (void)akg_params;");
    lw_line(&L, "int akg_status = 0;");
    lw_line(&L, "const bool akg_thread_ok = true;");
    unpack_args(&L);
    lw_lower_body(&L);
    lw_free_scope(&L, 0);
    if (L.fence_at_end) {
        lw_line(&L, "#ifdef __AVX__");
        lw_line(&L, "_mm_sfence(); // the streamed stores");
        lw_line(&L, "#endif");
    }
    lw_line(&L, "return akg_status;");
    L.indent = 0;
    lw_line(&L, "}");

    akg_buf buf;
    akg_buf_init(&buf, 64u << 20);
    L.out = &buf;
    lw_line(&L, "// %s: generated by akg from %s (cpu/cpp backend): every loop, tile and",
            akg_sketch_name(sk), opts && opts->source ? opts->source : "its sketch");
    lw_line(&L, "// computation below is the sketch's, lowered by the language's semantics.");
    lw_line(&L, "// Entry: akg_kernel(tensors, symbols, params), in the sketch's declaration order.");
    lw_line(&L, "// Build: g++ -O3 -march=native -fopenmp -shared -fPIC -std=c++17");
    if (L.width_min && !L.safe) {
        /* GCC picks one vector width per function (simdlen does not bound it): the narrowest
         * the sketch asks for, so that a loop that asked 256-bit vectors does not get 512-bit
         * ones (a loop that asked wider runs as two narrower vectors: the same work) */
        int w = L.width_min <= 128 ? 128 : L.width_min <= 256 ? 256 : 512;
        lw_line(&L, "// vector width: the narrowest the sketch's vectorize hints ask for");
        lw_line(&L, "#if defined(__x86_64__)");
        lw_line(&L, "#pragma GCC target(\"prefer-vector-width=%d\")", w);
        lw_line(&L, "#endif");
    }
    akg_buf_puts(&buf, lw_prelude);
    if (L.uses_stream) {
        lw_line(&L, "// streaming (nontemporal) stores");
        lw_line(&L, "#ifdef __AVX__");
        lw_line(&L, "#include <immintrin.h>");
        lw_line(&L, "#endif");
    }
    akg_buf_append(&buf, body.data ? body.data : "", body.len);
    int rc = L.status;
    if (!rc && (akg_buf_status(&buf) || akg_buf_status(&body)))
        rc = akg_fail(err, errlen, AKG_ENOMEM, "the generated kernel exceeds its size limit");
    lw_ctx_release(&L);
    akg_buf_free(&body);
    if (rc) {
        akg_buf_free(&buf);
        return rc;
    }
    *out = akg_buf_steal(&buf);
    return AKG_OK;
}
