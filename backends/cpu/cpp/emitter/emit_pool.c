/*
 * emit_pool.c: lowering of pooling sketches to C++ (cpu/cpp).
 *
 * One task per output row (parallel when the sketch says so), OWB outputs of
 * the row at a time (the sketch's tunable), each window tap a vectorised pass
 * over the outputs whose input lies inside the tensor. Geometry is a run-time
 * int64 array that ModelNew computes from its layer (built from Model's
 * constructor arguments) and the input's sizes, so one build serves every
 * shape and every window.
 */
#include <stdio.h>
#include <string.h>

#include "emit_common.h"

static const char pool_kernel[] =
    "#include <algorithm>\n"
    "// geom: nc, id, ih, iw, od, oh, ow, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,\n"
    "//       count_include_pad, divisor_override (0: none)\n"
    "extern \"C\" int akg_kernel(const float *__restrict x, float *__restrict y, const int64_t *g) {\n"
    "  const int64_t nc = g[0], id = g[1], ih = g[2], iw = g[3], od = g[4], oh = g[5], ow = g[6];\n"
    "  const int64_t kd = g[7], kh = g[8], kw = g[9], sd = g[10], sh = g[11], sw = g[12];\n"
    "  const int64_t pd = g[13], ph = g[14], pw = g[15], dd = g[16], dh = g[17], dw = g[18];\n"
    "  const int64_t include_pad = g[19], divisor_override = g[20];\n"
    "  (void)include_pad; (void)divisor_override;\n"
    "  const int64_t rows = nc * od * oh;\n"
    "  // per window column k, the outputs q whose input q*sw + k*dw - pw lies inside the row:\n"
    "  // [span[2k], span[2k+1]), computed once here (two divisions per tap and row cost more\n"
    "  // than the taps themselves for small windows)\n"
    "  int64_t *span = new int64_t[2 * kw];\n"
    "  for (int64_t k = 0; k < kw; ++k) {\n"
    "    const int64_t off = k * dw - pw;\n"
    "    span[2 * k] = off >= 0 ? 0 : (-off + sw - 1) / sw;\n"
    "    span[2 * k + 1] = iw - 1 - off < 0 ? 0 : (iw - 1 - off) / sw + 1;\n"
    "  }\n"
    "  AKG_FOR_STATIC\n"
    "  for (int64_t r = 0; r < rows; ++r) {\n"
    "    const int64_t c = r / (od * oh), o2 = r % (od * oh), oD = o2 / oh, oH = o2 % oh;\n"
    "    const float *xp = x + c * id * ih * iw;\n"
    "    float *yrow = y + r * ow;\n"
    "    for (int64_t q0 = 0; q0 < ow; q0 += AKG_OWB) {\n"
    "      const int64_t q1 = std::min<int64_t>(ow, q0 + AKG_OWB);\n"
    "      float acc[AKG_OWB];\n"
    "      AKG_SIMD\n"
    "      for (int64_t q = 0; q < q1 - q0; ++q) acc[q] = AKG_INIT;\n"
    "      for (int64_t a = 0; a < kd; ++a) {\n"
    "        const int64_t zi = oD * sd - pd + a * dd;\n"
    "        if (zi < 0 || zi >= id) continue;\n"
    "        for (int64_t b = 0; b < kh; ++b) {\n"
    "          const int64_t yi = oH * sh - ph + b * dh;\n"
    "          if (yi < 0 || yi >= ih) continue;\n"
    "          const float *irow = xp + (zi * ih + yi) * iw;\n"
    "          for (int64_t k = 0; k < kw; ++k) {\n"
    "            const int64_t off = k * dw - pw;\n"
    "            const int64_t lo = std::max(span[2 * k], q0), hi = std::min(span[2 * k + 1], q1);\n"
    "            float *av = acc - q0;\n"
    "            if (sw == 1) {\n"
    "              const float *src = irow + off;\n"
    "              AKG_SIMD\n"
    "              for (int64_t q = lo; q < hi; ++q) { const float v = src[q]; av[q] = AKG_COMBINE(av[q], v); }\n"
    "            } else {\n"
    "              AKG_SIMD\n"
    "              for (int64_t q = lo; q < hi; ++q) { const float v = irow[q * sw + off]; av[q] = AKG_COMBINE(av[q], v); }\n"
    "            }\n"
    "          }\n"
    "        }\n"
    "      }\n"
    "      AKG_FINISH\n"
    "    }\n"
    "  }\n"
    "  delete[] span;\n"
    "  return 0;\n"
    "}\n";

/* avg: the divisor of a window: divisor_override, or the window clipped to the
 * padded input (count_include_pad) or to the input. */
static const char avg_finish[] =
    "#define AKG_FINISH \\\n"
    "      { \\\n"
    "        int64_t dz, dy; \\\n"
    "        { const int64_t s0 = oD * sd - pd, e0 = std::min(s0 + (kd - 1) * dd + 1, id + pd); \\\n"
    "          dz = include_pad ? e0 - s0 : std::min(s0 + (kd - 1) * dd + 1, id) - std::max<int64_t>(s0, 0); } \\\n"
    "        { const int64_t s0 = oH * sh - ph, e0 = std::min(s0 + (kh - 1) * dh + 1, ih + ph); \\\n"
    "          dy = include_pad ? e0 - s0 : std::min(s0 + (kh - 1) * dh + 1, ih) - std::max<int64_t>(s0, 0); } \\\n"
    "        for (int64_t q = q0; q < q1; ++q) { \\\n"
    "          const int64_t s0 = q * sw - pw, e0 = std::min(s0 + (kw - 1) * dw + 1, iw + pw); \\\n"
    "          const int64_t dx = include_pad ? e0 - s0 : std::min(s0 + (kw - 1) * dw + 1, iw) - std::max<int64_t>(s0, 0); \\\n"
    "          const int64_t div = divisor_override ? divisor_override : dz * dy * dx; \\\n"
    "          yrow[q] = acc[q - q0] / (float)div; \\\n"
    "        } \\\n"
    "      }\n";

static const char geometry_py[] =
    "\n\ndef _akg_pool_geometry(pool, shape, dims, is_max):\n"
    "    \"\"\"The kernel's geometry for an input of this shape, and the output shape.\"\"\"\n"
    "    def tup(v):\n"
    "        return list(v) if isinstance(v, (list, tuple)) else [v] * dims\n"
    "    ks = tup(pool.kernel_size)\n"
    "    st = tup(pool.stride if pool.stride is not None else pool.kernel_size)\n"
    "    pd = tup(pool.padding)\n"
    "    dl = tup(pool.dilation) if is_max else [1] * dims\n"
    "    ins = list(shape[-dims:])\n"
    "    nc = 1\n"
    "    for s in shape[:-dims]:\n"
    "        nc *= s\n"
    "    outs = []\n"
    "    for i in range(dims):\n"
    "        span = ins[i] + 2 * pd[i] - dl[i] * (ks[i] - 1) - 1\n"
    "        o = (span + (st[i] - 1 if pool.ceil_mode else 0)) // st[i] + 1\n"
    "        if pool.ceil_mode and (o - 1) * st[i] >= ins[i] + pd[i]:\n"
    "            o -= 1\n"
    "        outs.append(o)\n"
    "    lead = 3 - dims\n"
    "    def full(v, fill):\n"
    "        return [fill] * lead + list(v)\n"
    "    include_pad = 1 if is_max or pool.count_include_pad else 0\n"
    "    override = 0 if is_max else int(getattr(pool, \"divisor_override\", None) or 0)\n"
    "    geom = ([nc] + full(ins, 1) + full(outs, 1) + full(ks, 1) + full(st, 1) + full(pd, 0) +\n"
    "            full(dl, 1) + [include_pad, override])\n"
    "    return geom, list(shape[:-dims]) + outs\n";

int akg_cpp_emit_pool(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                      int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    const char *mode = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "mode"));
    const cJSON *inp = cJSON_GetObjectItem(d->params, "input");
    const cJSON *dims_j = cJSON_GetObjectItem(d->params, "dims");
    const char *layer = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "layer"));
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "type"));
    const char *args = cJSON_GetStringValue(cJSON_GetObjectItem(d->params, "args"));
    int input = cJSON_IsNumber(inp) ? inp->valueint : -1;
    if (!mode || !layer || !type || !args || !cJSON_IsNumber(dims_j) || input < 0 ||
        (size_t)input >= ref->n_forward_params)
        return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: an incomplete pool design");
    int is_max = !strcmp(mode, "max");
    int parallel = !safe_mode && akg_sketch_has_hint(sk, "parallel");
    int vectorize = !safe_mode && akg_sketch_has_hint(sk, "vectorize");
    long owb = akg_sketch_const_by_name(sk, "OWB", 256);
    if (owb < 8)
        owb = 8;
    if (owb > 4096)
        owb = 4096;

    akg_buf src;
    akg_buf_init(&src, 1 << 20);
    akg_cpp_emit_header(&src, d);
    akg_buf_appendf(&src, "#define AKG_OWB %ld\n", owb);
    akg_buf_puts(&src, parallel ? "#define AKG_FOR_STATIC _Pragma(\"omp parallel for schedule(static)\")\n"
                                : "#define AKG_FOR_STATIC\n");
    akg_buf_puts(&src, vectorize ? "#define AKG_SIMD _Pragma(\"omp simd\")\n" : "#define AKG_SIMD\n");
    if (is_max) {
        /* NaN wins, as in PyTorch */
        akg_buf_puts(&src, "#define AKG_INIT (-INFINITY)\n"
                           "#define AKG_COMBINE(m, v) (((v) > (m) || (v) != (v)) ? (v) : (m))\n"
                           "#define AKG_FINISH \\\n"
                           "      for (int64_t q = q0; q < q1; ++q) yrow[q] = acc[q - q0];\n");
    } else {
        akg_buf_puts(&src, "#define AKG_INIT 0.0f\n#define AKG_COMBINE(m, v) ((m) + (v))\n");
        akg_buf_puts(&src, avg_finish);
    }
    /* Window rows are short (tens of outputs): with 512-bit vectors most of a row falls to the
     * scalar remainder, 256-bit vectors halve it (a dilated 3x3 max pool over 62-wide rows: 0.88
     * -> 0.53 ms on a Zen 4). Elementwise and reduction loops are long and keep the default. */
    akg_buf_puts(&src, "#if defined(__x86_64__) && defined(__AVX512F__)\n"
                       "#pragma GCC target(\"prefer-vector-width=256\")\n#endif\n");
    akg_buf_puts(&src, pool_kernel);

    char lib[64];
    akg_cpp_library_name(src.data, src.len, lib);
    akg_buf py;
    akg_buf_init(&py, 1 << 20);
    akg_cpp_model_new_prologue(&py, d, lib, "ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p");
    akg_buf_puts(&py, geometry_py);
    akg_buf_puts(&py, "\n\n");
    akg_cpp_model_new_init(&py, ref);
    akg_buf_appendf(&py, "        self.%s = nn.%s(%s)\n", layer, type, args);
    akg_cpp_model_new_forward_def(&py, ref);
    const char *xn = ref->forward_params[input].name;
    akg_buf_appendf(&py,
                    "        if %s.dtype != torch.float32 or %s.device.type != \"cpu\":\n"
                    "            raise TypeError(\"this kernel takes float32 CPU tensors, got %%s on "
                    "%%s\" %% (%s.dtype, %s.device))\n",
                    xn, xn, xn, xn);
    akg_buf_appendf(&py,
                    "        x = %s.contiguous()\n"
                    "        geom, shape = _akg_pool_geometry(self.%s, list(x.shape), %d, %s)\n"
                    "        y = torch.empty(shape, dtype=torch.float32)\n"
                    "        if y.numel() > 0:\n"
                    "            garr = (ctypes.c_int64 * len(geom))(*geom)\n"
                    "            rc = _KERNEL(x.data_ptr(), y.data_ptr(), garr)\n"
                    "            if rc != 0:\n"
                    "                raise RuntimeError(\"akg_kernel failed with status %%d\" %% rc)\n"
                    "        return y\n",
                    xn, layer, dims_j->valueint, is_max ? "True" : "False");
    out->library_filename = akg_strdup(lib);
    akg_cpp_finish_files(&src, &py, out);
    return AKG_OK;
}
