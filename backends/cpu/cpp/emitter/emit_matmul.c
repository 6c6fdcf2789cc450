/*
 * emit_matmul.c: lowering of matmul-family sketches to C++ (cpu/cpp).
 *
 * A GEMM sketch becomes the shared packed GEMM (emit_matmul_gemm.c) with the
 * sketch's MR/NR/KC/MC/NC and parallel/vectorize hints; transposes become
 * packing strides, a batch of matrices times one matrix is folded into the
 * rows, and tril/triu skip the blocks they mask. A matrix-vector sketch is a
 * row-blocked dot product, a diag sketch a row scaling. Sizes and strides are
 * run-time arguments computed by ModelNew from its inputs.
 */
#include <stdio.h>
#include <string.h>

#include "emit_common.h"
#include "emit_matmul_gemm.h"

static int param_int(const akg_design *d, const char *name, int fallback)
{
    const cJSON *v = cJSON_GetObjectItem(d->params, name);
    return cJSON_IsNumber(v) ? v->valueint : fallback;
}

static const char *param_str(const akg_design *d, const char *name, const char *fallback)
{
    const char *s = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, name));
    return s ? s : fallback;
}

static void emit_gemm_kernel(akg_buf *b, int tri)
{
    akg_buf_puts(b,
        "\n// c[z] = op(a[z]) @ op(b[z]); element (m, k) of op(a[z]) at a[z*sab + m*sam + k*sak],\n"
        "// (k, n) of op(b[z]) at b[z*sbb + k*sbk + n*sbn]; c is [nbatch, M, N] contiguous.\n"
        "extern \"C\" int akg_kernel(const float *a, const float *b, float *c, int64_t nbatch,\n"
        "                            int64_t M, int64_t N, int64_t K, int64_t sab, int64_t sam,\n"
        "                            int64_t sak, int64_t sbb, int64_t sbk, int64_t sbn,\n"
        "                            int64_t diagonal) {\n"
        "  auto pack_a = [&](int64_t z, int64_t m0, int64_t mc, int64_t k0, int64_t kc, float *dst) {\n"
        "    akg_pack_a_strided(a + z * sab, sam, sak, m0, mc, k0, kc, dst);\n"
        "  };\n"
        "  auto pack_b = [&](int64_t z, int64_t k0, int64_t kc, int64_t n0, int64_t nc, float *dst) {\n"
        "    akg_pack_b_strided(b + z * sbb, sbk, sbn, k0, kc, n0, nc, dst);\n"
        "  };\n"
        "  auto cptr = [&](int64_t z, int64_t m, int64_t n) { return c + (z * M + m) * N + n; };\n");
    if (tri == 0) {
        akg_buf_puts(b,
            "  auto skip = [&](int64_t, int64_t, int64_t, int64_t, int64_t) { return false; };\n"
            "  auto epi = [&](int64_t, int64_t, int64_t, int64_t, int64_t) {};\n"
            "  (void)diagonal;\n");
    } else {
        /* keep(m, n): tril keeps n <= m + diagonal, triu keeps n >= m + diagonal */
        akg_buf_appendf(b,
            "  // %s: element (m, n) is kept when n %s m + diagonal\n"
            "  auto keep = [&](int64_t m, int64_t n) { return n %s m + diagonal; };\n",
            tri == 1 ? "tril" : "triu", tri == 1 ? "<=" : ">=", tri == 1 ? "<=" : ">=");
        akg_buf_appendf(b,
            "  auto skip = [&](int64_t, int64_t m0, int64_t mc, int64_t n0, int64_t nc) {\n"
            "    (void)mc, (void)nc;  // one corner of the block decides\n"
            "    return %s;\n"
            "  };\n",
            tri == 1 ? "!keep(m0 + mc - 1, n0)" : "!keep(m0, n0 + nc - 1)");
        akg_buf_puts(b,
            "  auto epi = [&](int64_t z, int64_t m0, int64_t mc, int64_t n0, int64_t nc) {\n"
            "    for (int64_t i = m0; i < m0 + mc; ++i) {\n"
            "      float *row = cptr(z, i, 0);\n"
            "      for (int64_t j = n0; j < n0 + nc; ++j)\n"
            "        if (!keep(i, j)) row[j] = 0.0f;\n"
            "    }\n"
            "  };\n");
    }
    akg_buf_puts(b, "  return akg_gemm(nbatch, M, N, K, N, pack_a, pack_b, cptr, skip, epi);\n}\n");
}

static void emit_gemv_kernel(akg_buf *b, long rows, int parallel, int vectorize)
{
    if (rows < 1)
        rows = 1;
    if (rows > 8)
        rows = 8;
    akg_buf_appendf(b, "\n#define AKG_ROWS %ld\n", rows);
    akg_buf_puts(b, parallel ? "#define AKG_FOR_STATIC _Pragma(\"omp parallel for schedule(static)\")\n"
                             : "#define AKG_FOR_STATIC\n");
    akg_buf_puts(b, vectorize ? "#define AKG_SIMD_SUM _Pragma(\"omp simd reduction(+ : s)\")\n"
                              : "#define AKG_SIMD_SUM\n");
    akg_buf_puts(b,
        "typedef float akg_v8 __attribute__((vector_size(32)));\n"
        "typedef float akg_v8u __attribute__((vector_size(32), aligned(4)));\n"
        "// y[m] = sum_k a[m, k] * x[k]; a is [M, K] contiguous. ROWS rows share each load of x;\n"
        "// every row accumulates in 8 lanes x 2 vectors, so long rows sum in short chains.\n"
        "extern \"C\" int akg_kernel(const float *a, const float *x, float *y, int64_t M, int64_t K) {\n"
        "  const int64_t blocks = (M + AKG_ROWS - 1) / AKG_ROWS;\n"
        "  AKG_FOR_STATIC\n"
        "  for (int64_t blk = 0; blk < blocks; ++blk) {\n"
        "    const int64_t r0 = blk * AKG_ROWS;\n"
        "    if (r0 + AKG_ROWS <= M) {\n"
        "      akg_v8 acc[AKG_ROWS][2];\n"
        "      for (int r = 0; r < AKG_ROWS; ++r) acc[r][0] = acc[r][1] = akg_v8{0, 0, 0, 0, 0, 0, 0, 0};\n"
        "      int64_t k = 0;\n"
        "      for (; k + 16 <= K; k += 16) {\n"
        "        const akg_v8 x0 = *(const akg_v8u *)(x + k), x1 = *(const akg_v8u *)(x + k + 8);\n"
        "#pragma GCC unroll 8\n"
        "        for (int r = 0; r < AKG_ROWS; ++r) {\n"
        "          const float *row = a + (r0 + r) * K + k;\n"
        "          acc[r][0] += *(const akg_v8u *)row * x0;\n"
        "          acc[r][1] += *(const akg_v8u *)(row + 8) * x1;\n"
        "        }\n"
        "      }\n"
        "      for (int r = 0; r < AKG_ROWS; ++r) {\n"
        "        const akg_v8 v = acc[r][0] + acc[r][1];\n"
        "        float s = ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));\n"
        "        for (int64_t kk = k; kk < K; ++kk) s += a[(r0 + r) * K + kk] * x[kk];\n"
        "        y[r0 + r] = s;\n"
        "      }\n"
        "    } else {\n"
        "      for (int64_t r = r0; r < M; ++r) {\n"
        "        float s = 0.0f;\n"
        "        AKG_SIMD_SUM\n"
        "        for (int64_t kk = 0; kk < K; ++kk) s += a[r * K + kk] * x[kk];\n"
        "        y[r] = s;\n"
        "      }\n"
        "    }\n"
        "  }\n"
        "  return 0;\n"
        "}\n");
}

static void emit_rowscale_kernel(akg_buf *b, long rows, int parallel, int vectorize)
{
    if (rows < 1)
        rows = 1;
    akg_buf_appendf(b, "\n#define AKG_ROWS %ld\n", rows);
    akg_buf_puts(b, parallel ? "#define AKG_FOR_STATIC _Pragma(\"omp parallel for schedule(static)\")\n"
                             : "#define AKG_FOR_STATIC\n");
    akg_buf_puts(b, vectorize ? "#define AKG_SIMD _Pragma(\"omp simd\")\n" : "#define AKG_SIMD\n");
    akg_buf_puts(b,
        "// c[i, j] = v[i] * b[i, j]: diag(v) @ b without building diag(v).\n"
        "extern \"C\" int akg_kernel(const float *v, const float *b, float *c, int64_t M, int64_t N) {\n"
        "  const int64_t blocks = (M + AKG_ROWS - 1) / AKG_ROWS;\n"
        "  AKG_FOR_STATIC\n"
        "  for (int64_t blk = 0; blk < blocks; ++blk) {\n"
        "    const int64_t r1 = (blk + 1) * AKG_ROWS < M ? (blk + 1) * AKG_ROWS : M;\n"
        "    for (int64_t i = blk * AKG_ROWS; i < r1; ++i) {\n"
        "      const float s = v[i];\n"
        "      const float *__restrict src = b + i * N;\n"
        "      float *__restrict dst = c + i * N;\n"
        "      AKG_SIMD\n"
        "      for (int64_t j = 0; j < N; ++j) dst[j] = s * src[j];\n"
        "    }\n"
        "  }\n"
        "  return 0;\n"
        "}\n");
}

static void emit_input_checks(akg_buf *py, const char *name)
{
    akg_buf_appendf(py,
                    "        if %s.dtype != torch.float32 or %s.device.type != \"cpu\":\n"
                    "            raise TypeError(\"this kernel takes float32 CPU tensors, got %%s on "
                    "%%s\" %% (%s.dtype, %s.device))\n",
                    name, name, name, name);
}

static void emit_gemm_forward(akg_buf *py, const akg_design *d, const char *an, const char *bn)
{
    int ta = param_int(d, "trans_a", 0), tb = param_int(d, "trans_b", 0);
    int tri = param_int(d, "tri", 0);
    const char *dg_init = param_str(d, "diagonal_from_init", NULL);
    akg_buf_appendf(py, "        a = %s.contiguous()\n        b = %s.contiguous()\n", an, bn);
    if (ta)
        akg_buf_puts(py, "        M, K = a.size(-1), a.size(-2)\n        sam, sak = 1, M\n");
    else
        akg_buf_puts(py, "        M, K = a.size(-2), a.size(-1)\n        sam, sak = K, 1\n");
    if (tb)
        akg_buf_puts(py, "        N, Kb = b.size(-2), b.size(-1)\n        sbk, sbn = 1, Kb\n");
    else
        akg_buf_puts(py, "        Kb, N = b.size(-2), b.size(-1)\n        sbk, sbn = N, 1\n");
    akg_buf_puts(py,
        "        if Kb != K:\n"
        "            raise ValueError(\"inner sizes differ: %d and %d\" % (K, Kb))\n"
        "        batch = list(a.shape[:-2])\n"
        "        nbatch = 1\n"
        "        for s in batch:\n"
        "            nbatch *= s\n"
        "        c = torch.empty(batch + [M, N], dtype=torch.float32)\n"
        "        sab, sbb, rows = M * K, 0, M\n"
        "        if b.dim() > 2:\n"
        "            if list(b.shape[:-2]) != batch:\n"
        "                raise ValueError(\"batch sizes differ\")\n"
        "            sbb = K * N\n");
    if (!ta && !tri)
        akg_buf_puts(py,
            "        else:\n"
            "            # a batch of matrices times one matrix: one GEMM over all rows\n"
            "            rows, nbatch, sab = M * nbatch, 1, 0\n");
    if (dg_init)
        akg_buf_appendf(py, "        diagonal = int(self._akg_%s)\n", dg_init);
    else
        akg_buf_appendf(py, "        diagonal = %d\n", param_int(d, "diagonal", 0));
    akg_buf_puts(py,
        "        if c.numel() > 0:\n"
        "            rc = _KERNEL(a.data_ptr(), b.data_ptr(), c.data_ptr(), nbatch, rows, N, K,\n"
        "                         sab, sam, sak, sbb, sbk, sbn, diagonal)\n"
        "            if rc != 0:\n"
        "                raise RuntimeError(\"akg_kernel failed with status %d\" % rc)\n"
        "        return c\n");
}

int akg_cpp_emit_matmul(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                        int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *kind = param_str(d, "kind", "gemm");
    int ia = param_int(d, "a", 0), ib = param_int(d, "b", 1);
    if (ia < 0 || ib < 0 || (size_t)ia >= ref->n_forward_params ||
        (size_t)ib >= ref->n_forward_params)
        return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: matmul operands out of range");
    const char *an = ref->forward_params[ia].name, *bn = ref->forward_params[ib].name;
    int parallel = !safe_mode && akg_sketch_has_hint(sk, "parallel");
    int vectorize = !safe_mode && akg_sketch_has_hint(sk, "vectorize");

    akg_buf src;
    akg_buf_init(&src, 4 << 20);
    akg_cpp_emit_header(&src, d);
    const char *argtypes;
    if (!strcmp(kind, "gemm")) {
        akg_gemm_blocking blk;
        akg_cpp_gemm_blocking(sk, safe_mode, &blk);
        akg_cpp_emit_gemm_runtime(&src, &blk);
        emit_gemm_kernel(&src, param_int(d, "tri", 0));
        argtypes = "ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p"
                   ", ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64"
                   ", ctypes.c_int64, ctypes.c_int64, ctypes.c_int64"
                   ", ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64";
    } else if (!strcmp(kind, "gemv")) {
        emit_gemv_kernel(&src, akg_sketch_const_by_name(sk, "ROWS", 4), parallel, vectorize);
        argtypes = "ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, "
                   "ctypes.c_int64";
    } else if (!strcmp(kind, "rowscale")) {
        emit_rowscale_kernel(&src, akg_sketch_const_by_name(sk, "ROWS", 4), parallel, vectorize);
        argtypes = "ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, "
                   "ctypes.c_int64";
    } else {
        akg_buf_free(&src);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: no matmul lowering for %s",
                        kind);
    }
    char lib[64];
    akg_cpp_library_name(src.data, src.len, lib);
    akg_buf py;
    akg_buf_init(&py, 1 << 20);
    akg_cpp_model_new_prologue(&py, d, lib, argtypes);
    akg_cpp_model_new_init(&py, ref);
    akg_cpp_model_new_forward_def(&py, ref);
    emit_input_checks(&py, an);
    emit_input_checks(&py, bn);
    if (!strcmp(kind, "gemm")) {
        emit_gemm_forward(&py, d, an, bn);
    } else if (!strcmp(kind, "gemv")) {
        akg_buf_appendf(&py,
            "        a = %s.contiguous()\n        x = %s.contiguous()\n"
            "        M, K = a.size(0), a.size(1)\n"
            "        if x.size(0) != K or x.size(1) != 1:\n"
            "            raise ValueError(\"expected x of shape [%%d, 1]\" %% K)\n"
            "        y = torch.empty(M, 1, dtype=torch.float32)\n"
            "        if y.numel() > 0:\n"
            "            rc = _KERNEL(a.data_ptr(), x.data_ptr(), y.data_ptr(), M, K)\n"
            "            if rc != 0:\n"
            "                raise RuntimeError(\"akg_kernel failed with status %%d\" %% rc)\n"
            "        return y\n",
            an, bn);
    } else {
        akg_buf_appendf(&py,
            "        v = %s.contiguous()\n        b = %s.contiguous()\n"
            "        M, N = b.size(0), b.size(1)\n"
            "        if v.size(0) != M:\n"
            "            raise ValueError(\"diag size %%d does not match %%d rows\" %% (v.size(0), M))\n"
            "        c = torch.empty(M, N, dtype=torch.float32)\n"
            "        if c.numel() > 0:\n"
            "            rc = _KERNEL(v.data_ptr(), b.data_ptr(), c.data_ptr(), M, N)\n"
            "            if rc != 0:\n"
            "                raise RuntimeError(\"akg_kernel failed with status %%d\" %% rc)\n"
            "        return c\n",
            an, bn);
    }
    out->library_filename = akg_strdup(lib);
    akg_cpp_finish_files(&src, &py, out);
    return AKG_OK;
}
