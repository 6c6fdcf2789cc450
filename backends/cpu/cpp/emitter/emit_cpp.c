/*
 * emit_cpp.c: the cpu/cpp backend's emitter: a design to C++ and model_new.py.
 *
 * The C++ has one C-ABI entry point, akg_kernel(), whose sizes are run-time
 * arguments, so one build serves every shape of a dynamic task. Loops are
 * written so GCC vectorises them at -O3 -march=native (no calls in the inner
 * loop in fast mode: exp, log, erf and tanh are branch-free polynomials here,
 * accurate to a few ulp, with NaN propagated explicitly), and the outer loop
 * is split across cores with OpenMP. model_new.py loads the library with
 * ctypes and exposes ModelNew with Model's constructor and forward signature;
 * it only allocates outputs and passes pointers.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit_common.h"

static const char fast_math_prelude[] =
    "static inline float akg_from_bits(int32_t i) { float f; std::memcpy(&f, &i, 4); return f; }\n"
    "static inline int32_t akg_to_bits(float f) { int32_t i; std::memcpy(&i, &f, 4); return i; }\n"
    "\n"
    "// exp(x) = 2^n * exp(r), |r| <= ln2/2, degree-6 polynomial for exp(r); 2^n is applied as\n"
    "// two factors so that the whole float range (denormals to overflow) comes out right.\n"
    "static inline float akg_exp(float x) {\n"
    "  float xc = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);\n"
    "  float n = __builtin_floorf(xc * 1.44269504088896341f + 0.5f);\n"
    "  float r = xc - n * 0.693359375f;\n"
    "  r = r + n * 2.12194440e-4f;\n"
    "  float p = 1.9875691500e-4f;\n"
    "  p = p * r + 1.3981999507e-3f;\n"
    "  p = p * r + 8.3334519073e-3f;\n"
    "  p = p * r + 4.1665795894e-2f;\n"
    "  p = p * r + 1.6666665459e-1f;\n"
    "  p = p * r + 5.0000001201e-1f;\n"
    "  p = p * r * r + r + 1.0f;\n"
    "  int32_t ni = (int32_t)n;\n"
    "  int32_t n1 = ni / 2, n2 = ni - n1;\n"
    "  float res = p * akg_from_bits((n1 + 127) << 23) * akg_from_bits((n2 + 127) << 23);\n"
    "  return x != x ? x : res;\n"
    "}\n"
    "\n"
    "// log(x): x = m * 2^e with m in [sqrt(1/2), sqrt(2)); denormals are scaled by 2^23 first,\n"
    "// and 0, negatives, +inf and NaN give what std::log gives (selects, so it vectorises).\n"
    "static inline float akg_log(float x) {\n"
    "  const bool sub = x < 1.17549435e-38f;\n"
    "  int32_t i = akg_to_bits(sub ? x * 8388608.0f : x);\n"
    "  int32_t e = ((i >> 23) & 0xff) - (sub ? 150 : 127);\n"
    "  float m = akg_from_bits((i & 0x007fffff) | 0x3f800000);\n"
    "  int big = m > 1.41421356237f;\n"
    "  m = big ? m * 0.5f : m;\n"
    "  float fe = (float)(big ? e + 1 : e);\n"
    "  float f = m - 1.0f;\n"
    "  float z = f * f;\n"
    "  float y = 7.0376836292e-2f;\n"
    "  y = y * f - 1.1514610310e-1f;\n"
    "  y = y * f + 1.1676998740e-1f;\n"
    "  y = y * f - 1.2420140846e-1f;\n"
    "  y = y * f + 1.4249322787e-1f;\n"
    "  y = y * f - 1.6668057665e-1f;\n"
    "  y = y * f + 2.0000714765e-1f;\n"
    "  y = y * f - 2.4999993993e-1f;\n"
    "  y = y * f + 3.3333331174e-1f;\n"
    "  y = y * f * z;\n"
    "  y = y - 2.12194440e-4f * fe;\n"
    "  y = y - 0.5f * z;\n"
    "  float res = f + y + 0.693359375f * fe;\n"
    "  res = x == INFINITY ? x : res;\n"
    "  res = x == 0.0f ? -INFINITY : res;\n"
    "  res = x < 0.0f ? NAN : res;\n"
    "  return x != x ? x : res;\n"
    "}\n"
    "\n"
    "static inline float akg_tanh(float x) {\n"
    "  float a = x < 0.0f ? -x : x;\n"
    "  float t = 1.0f - 2.0f / (akg_exp(2.0f * a) + 1.0f);\n"
    "  t = a < 1e-4f ? a : t;\n"
    "  return x != x ? x : (x < 0.0f ? -t : t);\n"
    "}\n"
    "\n"
    "// erf as x * P(x^2) / Q(x^2), a rational minimax fit on [-4, 4] (absolute error below\n"
    "// 5e-7; erf is +-1 in float beyond): no exp, one division, so it vectorises cheaply.\n"
    "static inline float akg_erf(float x) {\n"
    "  float c = x < -4.0f ? -4.0f : (x > 4.0f ? 4.0f : x);\n"
    "  float z = c * c;\n"
    "  float p = -2.72614225801306e-10f;\n"
    "  p = p * z + 2.77068142495902e-08f;\n"
    "  p = p * z - 2.10102402082508e-06f;\n"
    "  p = p * z - 5.69250639462346e-05f;\n"
    "  p = p * z - 7.34990630326855e-04f;\n"
    "  p = p * z - 2.95459980854025e-03f;\n"
    "  p = p * z - 1.60960333262415e-02f;\n"
    "  float q = -1.45660718464996e-05f;\n"
    "  q = q * z - 2.13374055278905e-04f;\n"
    "  q = q * z - 1.68282697438203e-03f;\n"
    "  q = q * z - 7.37332916720468e-03f;\n"
    "  q = q * z - 1.42647390514189e-02f;\n"
    "  return x != x ? x : c * p / q;\n"
    "}\n"
    "\n"
    "#define AKG_EXP(v) akg_exp(v)\n"
    "#define AKG_EXPM1(v) (akg_exp(v) - 1.0f)\n"
    "#define AKG_LOG(v) akg_log(v)\n"
    "#define AKG_LOG1P(v) akg_log(1.0f + (v))\n"
    "#define AKG_TANH(v) akg_tanh(v)\n"
    "#define AKG_ERF(v) akg_erf(v)\n";

static const char precise_math_prelude[] =
    "#define AKG_EXP(v) std::exp(v)\n"
    "#define AKG_EXPM1(v) std::expm1(v)\n"
    "#define AKG_LOG(v) std::log(v)\n"
    "#define AKG_LOG1P(v) std::log1p(v)\n"
    "#define AKG_TANH(v) std::tanh(v)\n"
    "#define AKG_ERF(v) std::erf(v)\n";

/* A float literal C++ accepts ("20.0f", "1e-05f", "-inff" never: infinities
 * are spelled INFINITY). */
void akg_cpp_float_literal(akg_buf *b, double v)
{
    if (isinf(v)) {
        akg_buf_puts(b, v < 0 ? "(-INFINITY)" : "INFINITY");
        return;
    }
    char tmp[64];
    snprintf(tmp, sizeof tmp, "%.9g", v);
    if (!strpbrk(tmp, ".eEn"))
        strcat(tmp, ".0");
    akg_buf_appendf(b, "%sf", tmp);
}

/* The C++ name of a node's value inside the element loop. */
static void node_ref(akg_buf *b, const akg_design *d, int n)
{
    const akg_pw_node *m = &d->nodes[n];
    if (m->kind == AKG_PW_CONST)
        akg_cpp_float_literal(b, m->value);
    else if (m->kind == AKG_PW_SCALAR)
        akg_buf_appendf(b, "p%d", m->scalar);
    else
        akg_buf_appendf(b, "t%d", n);
}

typedef struct {
    const char *op;
    const char *fmt; /* %0, %1, %2 stand for the arguments */
} lowering;

/* Each op's meaning per element, as in the sketch language reference. NaN
 * propagates as in PyTorch: comparisons are written so NaN falls through. */
static const lowering lowerings[] = {
    {"add", "%0 + %1"},
    {"sub", "%0 - %1"},
    {"mul", "%0 * %1"},
    {"div", "%0 / %1"},
    {"max", "(%0 != %0 || %0 > %1) ? %0 : %1"},
    {"min", "(%0 != %0 || %0 < %1) ? %0 : %1"},
    {"pow", "std::pow(%0, %1)"},
    {"neg", "-%0"},
    {"abs", "(%0 < 0.0f ? -%0 : %0)"},
    {"relu", "(%0 < 0.0f ? 0.0f : %0)"},
    {"relu6", "(%0 < 0.0f ? 0.0f : (%0 > 6.0f ? 6.0f : %0))"},
    {"leaky_relu", "(%0 < 0.0f ? %0 * %1 : %0)"},
    {"sigmoid", "1.0f / (1.0f + AKG_EXP(-%0))"},
    {"tanh", "AKG_TANH(%0)"},
    {"gelu", "0.5f * %0 * (1.0f + AKG_ERF(%0 * 0.7071067811865476f))"},
    {"gelu_tanh",
     "0.5f * %0 * (1.0f + AKG_TANH(0.7978845608028654f * (%0 + 0.044715f * %0 * %0 * %0)))"},
    {"silu", "%0 / (1.0f + AKG_EXP(-%0))"},
    {"softplus", "(%0 * %1 > %2 ? %0 : AKG_LOG1P(AKG_EXP(%0 * %1)) / %1)"},
    {"elu", "(%0 > 0.0f ? %0 : %1 * AKG_EXPM1(%0))"},
    {"celu", "(%0 > 0.0f ? %0 : %1 * AKG_EXPM1(%0 / %1))"},
    {"selu", "1.0507009873554805f * (%0 > 0.0f ? %0 : 1.6732632423543772f * AKG_EXPM1(%0))"},
    {"hardtanh", "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))"},
    {"clamp", "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))"},
    {"hardsigmoid", "(%0 <= -3.0f ? 0.0f : (%0 >= 3.0f ? 1.0f : %0 / 6.0f + 0.5f))"},
    {"hardswish", "(%0 <= -3.0f ? 0.0f : (%0 >= 3.0f ? %0 : %0 * (%0 + 3.0f) / 6.0f))"},
    {"softsign", "%0 / (1.0f + (%0 < 0.0f ? -%0 : %0))"},
    {"mish", "%0 * AKG_TANH(%0 > 20.0f ? %0 : AKG_LOG1P(AKG_EXP(%0)))"},
    {"exp", "AKG_EXP(%0)"},
    {"log", "AKG_LOG(%0)"},
    {"sqrt", "std::sqrt(%0)"},
    {"rsqrt", "1.0f / std::sqrt(%0)"},
    {"sin", "std::sin(%0)"},
    {"cos", "std::cos(%0)"},
    {"square", "%0 * %0"},
    {"reciprocal", "1.0f / %0"},
    {"sign", "(%0 > 0.0f ? 1.0f : (%0 < 0.0f ? -1.0f : %0))"},
    {"erf", "AKG_ERF(%0)"},
};

static int emit_node(akg_buf *b, const akg_design *d, int n, char *err, size_t errlen)
{
    const akg_pw_node *m = &d->nodes[n];
    const lowering *l = NULL;
    for (size_t i = 0; i < sizeof lowerings / sizeof lowerings[0]; i++)
        if (strcmp(lowerings[i].op, m->op) == 0)
            l = &lowerings[i];
    if (!l)
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: no lowering for op %s",
                        m->op);
    akg_buf_appendf(b, "        const float t%d = ", n);
    for (const char *p = l->fmt; *p; p++) {
        if (*p == '%' && p[1] >= '0' && p[1] <= '2') {
            int k = p[1] - '0';
            if (k >= m->n_args)
                return akg_fail(err, errlen, AKG_EINVAL, "cpp emitter: %s takes %d arguments",
                                m->op, k + 1);
            akg_buf_puts(b, "(");
            node_ref(b, d, m->args[k]);
            akg_buf_puts(b, ")");
            p++;
        } else {
            akg_buf_append(b, p, 1);
        }
    }
    akg_buf_puts(b, ";\n");
    return AKG_OK;
}

void akg_cpp_emit_header(akg_buf *b, const akg_design *d)
{
    akg_buf_appendf(b, "// %s: generated by akg from sketch.sketch (cpu/cpp, %s maths).\n",
                    d->op_name, d->math == AKG_MATH_FAST ? "fast" : "libm");
    akg_buf_puts(b, "// Sizes are run-time arguments: one build serves every shape.\n");
    akg_buf_puts(b, "// Build: g++ -O3 -march=native -fopenmp -shared -fPIC -std=c++17\n");
    akg_buf_puts(b, "#include <cmath>\n#include <cstdint>\n#include <cstring>\n");
    akg_buf_puts(b, "#ifdef __AVX__\n#include <immintrin.h>\n#endif\n\n");
    akg_buf_puts(b, d->math == AKG_MATH_FAST ? fast_math_prelude : precise_math_prelude);
    akg_buf_puts(b, "\n");
}

/* The argument list of akg_element for element index expression idx. */
static void element_args(akg_buf *b, const akg_design *d, const char *idx)
{
    for (int i = 0; i < d->n_inputs; i++)
        akg_buf_appendf(b, "in%d, ", i);
    akg_buf_puts(b, idx);
    for (int k = 0; k < d->n_scalars; k++)
        akg_buf_appendf(b, ", p%d", k);
}

static int emit_pointwise(akg_buf *b, const akg_design *d, const akg_reference *ref, int safe,
                          char *err, size_t errlen)
{
    /* the per-element program, inlined into every loop below */
    akg_buf_puts(b, "static inline __attribute__((always_inline)) float akg_element(");
    for (int i = 0; i < d->n_inputs; i++)
        akg_buf_appendf(b, "const float *__restrict in%d, ", i);
    akg_buf_puts(b, "int64_t i");
    for (int k = 0; k < d->n_scalars; k++)
        akg_buf_appendf(b, ", float p%d", k);
    akg_buf_puts(b, ") {\n");
    for (int n = 0; n < d->n_nodes; n++) {
        const akg_pw_node *m = &d->nodes[n];
        if (m->kind == AKG_PW_INPUT) {
            int slot = 0;
            for (int i = 0; i < d->n_inputs; i++)
                if (d->inputs[i] == m->input)
                    slot = i;
            akg_buf_appendf(b, "        const float t%d = in%d[i];  // %s\n", n, slot,
                            ref->forward_params[m->input].name);
        } else if (m->kind == AKG_PW_OP) {
            int rc = emit_node(b, d, n, err, errlen);
            if (rc)
                return rc;
        }
    }
    akg_buf_puts(b, "        return ");
    node_ref(b, d, d->result);
    akg_buf_puts(b, ";\n}\n\n");

    akg_buf_puts(b, "extern \"C\" int akg_kernel(");
    for (int i = 0; i < d->n_inputs; i++)
        akg_buf_appendf(b, "const float *__restrict in%d, ", i);
    akg_buf_puts(b, "float *__restrict out, int64_t n");
    for (int k = 0; k < d->n_scalars; k++)
        akg_buf_appendf(b, ", float p%d", k);
    akg_buf_puts(b, ") {\n");
    akg_buf_appendf(b, "  const int64_t block = %ld;\n", d->block);
    akg_buf_puts(b, "  const int64_t nblocks = (n + block - 1) / block;\n");
    int stream = d->nontemporal && !safe;
    if (stream)
        akg_buf_puts(b, "  // nontemporal store (sketch hint): only for outputs past 4 MiB\n"
                        "  const bool stream = n >= (int64_t)1 << 20;\n");
    if (!safe && d->parallel)
        akg_buf_puts(b, "#pragma omp parallel for schedule(static) if (nblocks > 1)\n");
    akg_buf_puts(b, "  for (int64_t blk = 0; blk < nblocks; ++blk) {\n");
    akg_buf_puts(b, "    const int64_t lo = blk * block;\n");
    akg_buf_puts(b, "    const int64_t hi = lo + block < n ? lo + block : n;\n");
    if (stream) {
        akg_buf_puts(b, "#ifdef __AVX__\n    if (stream) {\n      int64_t i = lo;\n"
                        "      for (; i < hi && (((uintptr_t)(out + i)) & 31u); ++i)\n"
                        "        out[i] = akg_element(");
        element_args(b, d, "i");
        /* computed 256 at a time into an L1 buffer by the same vector loop as the plain
         * path, then streamed out: computing 8 lanes per store measured up to 1.5x slower
         * for exp-heavy elements (softplus) */
        akg_buf_puts(b, ");\n      alignas(32) float v[256];\n"
                        "      for (; i + 256 <= hi; i += 256) {\n"
                        "#pragma omp simd\n        for (int l = 0; l < 256; ++l)\n"
                        "          v[l] = akg_element(");
        element_args(b, d, "i + l");
        akg_buf_puts(b, ");\n        for (int l = 0; l < 256; l += 8)\n"
                        "          _mm256_stream_ps(out + i + l, _mm256_load_ps(v + l));\n      }\n"
                        "      for (; i < hi; ++i)\n        out[i] = akg_element(");
        element_args(b, d, "i");
        akg_buf_puts(b, ");\n      _mm_sfence();\n      continue;\n    }\n#endif\n");
    }
    if (!safe && d->vectorize)
        akg_buf_puts(b, "#pragma omp simd\n");
    akg_buf_puts(b, "    for (int64_t i = lo; i < hi; ++i)\n      out[i] = akg_element(");
    element_args(b, d, "i");
    akg_buf_puts(b, ");\n  }\n  return 0;\n}\n");
    return AKG_OK;
}

static void emit_softmax(akg_buf *b, const akg_design *d, int safe)
{
    const char *simd = safe ? "" : "#pragma omp simd";
    const char *par = safe ? "" : "#pragma omp parallel for schedule(static)";
    akg_buf_puts(b, "// x and y viewed as [O, D, I]; the softmax runs along D.\n");
    akg_buf_puts(b, "extern \"C\" int akg_kernel(const float *__restrict x, float *__restrict y, "
                    "int64_t O, int64_t D, int64_t I) {\n");
    akg_buf_puts(b, "  if (I == 1) {\n");
    akg_buf_appendf(b, "%s\n", par);
    akg_buf_puts(b, "    for (int64_t o = 0; o < O; ++o) {\n");
    akg_buf_puts(b, "      const float *xr = x + o * D;\n      float *yr = y + o * D;\n");
    akg_buf_puts(b, "      float m = -INFINITY;\n");
    akg_buf_appendf(b, "%s\n", safe ? "" : "#pragma omp simd reduction(max : m)");
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) m = xr[d] > m ? xr[d] : m;\n");
    akg_buf_puts(b, "      float s = 0.0f;\n");
    akg_buf_appendf(b, "%s\n", safe ? "" : "#pragma omp simd reduction(+ : s)");
    if (d->log_softmax) {
        akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) s += AKG_EXP(xr[d] - m);\n");
        akg_buf_puts(b, "      const float ls = m + AKG_LOG(s);\n");
        akg_buf_appendf(b, "%s\n", simd);
        akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) yr[d] = xr[d] - ls;\n");
    } else {
        akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) { const float e = AKG_EXP(xr[d] - m); "
                        "yr[d] = e; s += e; }\n");
        akg_buf_puts(b, "      const float inv = 1.0f / s;\n");
        akg_buf_appendf(b, "%s\n", simd);
        akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) yr[d] *= inv;\n");
    }
    akg_buf_puts(b, "    }\n    return 0;\n  }\n");
    /* I > 1: columns of a [D, I] slab, CH at a time, vectorised along I. */
    akg_buf_appendf(b, "  const int64_t CH = %ld * 16;\n", d->rows > 0 ? d->rows : 1);
    akg_buf_puts(b, "  const int64_t chunks = (I + CH - 1) / CH;\n");
    akg_buf_appendf(b, "%s\n", safe ? "" : "#pragma omp parallel for collapse(2) schedule(static)");
    akg_buf_puts(b, "  for (int64_t o = 0; o < O; ++o) {\n");
    akg_buf_puts(b, "    for (int64_t c = 0; c < chunks; ++c) {\n");
    akg_buf_puts(b, "      const int64_t i0 = c * CH, i1 = i0 + CH < I ? i0 + CH : I, w = i1 - i0;\n");
    akg_buf_puts(b, "      const float *xs = x + o * D * I + i0;\n      float *ys = y + o * D * I + i0;\n");
    akg_buf_puts(b, "      float m[256], s[256];\n");
    akg_buf_puts(b, "      for (int64_t i = 0; i < w; ++i) { m[i] = -INFINITY; s[i] = 0.0f; }\n");
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n");
    akg_buf_appendf(b, "%s\n", simd);
    akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) m[i] = xs[d * I + i] > m[i] ? xs[d * I + i] : m[i];\n      }\n");
    akg_buf_puts(b, "      for (int64_t d = 0; d < D; ++d) {\n");
    akg_buf_appendf(b, "%s\n", simd);
    if (d->log_softmax)
        akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) s[i] += AKG_EXP(xs[d * I + i] - m[i]);\n      }\n"
                        "      for (int64_t i = 0; i < w; ++i) m[i] = m[i] + AKG_LOG(s[i]);\n"
                        "      for (int64_t d = 0; d < D; ++d) {\n");
    else
        akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) { const float e = AKG_EXP(xs[d * I + i] - m[i]); "
                        "ys[d * I + i] = e; s[i] += e; }\n      }\n"
                        "      for (int64_t i = 0; i < w; ++i) s[i] = 1.0f / s[i];\n"
                        "      for (int64_t d = 0; d < D; ++d) {\n");
    akg_buf_appendf(b, "%s\n", simd);
    if (d->log_softmax)
        akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) ys[d * I + i] = xs[d * I + i] - m[i];\n");
    else
        akg_buf_puts(b, "        for (int64_t i = 0; i < w; ++i) ys[d * I + i] *= s[i];\n");
    akg_buf_puts(b, "      }\n    }\n  }\n  return 0;\n}\n");
}

/* Python source of ModelNew's __init__ parameters, copied from Model. */
static void emit_init_signature(akg_buf *b, const akg_reference *ref);

void akg_cpp_model_new_prologue(akg_buf *b, const akg_design *d, const char *libname,
                                const char *argtypes)
{
    akg_buf_appendf(b, "\"\"\"ModelNew for %s: a drop-in replacement for Model, generated by akg\n"
                       "(cpu/cpp). The computation runs in %s, built from kernel.cpp; this file\n"
                       "only checks inputs, allocates outputs and passes pointers.\"\"\"\n",
                    d->op_name, libname);
    akg_buf_puts(b, "import ctypes\nimport os\n\nimport torch\nimport torch.nn as nn\n\n");
    akg_buf_appendf(b, "_LIB = ctypes.CDLL(os.path.join(os.path.dirname(os.path.abspath(__file__)), "
                       "\"%s\"))\n",
                    libname);
    akg_buf_puts(b, "_KERNEL = _LIB.akg_kernel\n_KERNEL.restype = ctypes.c_int\n");
    akg_buf_appendf(b, "_KERNEL.argtypes = [%s]\n\n\n", argtypes);
}

void akg_cpp_model_new_init(akg_buf *b, const akg_reference *ref)
{
    akg_buf_puts(b, "class ModelNew(nn.Module):\n    def __init__(self");
    emit_init_signature(b, ref);
    akg_buf_puts(b, "):\n        super().__init__()\n");
    for (size_t i = 0; i < ref->n_init_params; i++) {
        const char *n = ref->init_params[i].name;
        if (n[0] == '*')
            continue;
        akg_buf_appendf(b, "        self._akg_%s = %s\n", n, n);
    }
}

static void emit_forward_signature(akg_buf *b, const akg_reference *ref);

void akg_cpp_model_new_forward_def(akg_buf *b, const akg_reference *ref)
{
    akg_buf_puts(b, "\n    def forward(self");
    emit_forward_signature(b, ref);
    akg_buf_puts(b, "):\n");
}

void akg_cpp_library_name(const char *source, size_t len, char out[64])
{
    char hash[65];
    akg_sha256_hex(source, len, hash);
    snprintf(out, 64, "kernel_%.12s.so", hash);
}

void akg_cpp_finish_files(akg_buf *src, akg_buf *py, akg_kernel_files *out)
{
    out->kernel_filename = akg_strdup("kernel.cpp");
    out->kernel_source = akg_buf_steal(src);
    out->model_new_source = akg_buf_steal(py);
}

static void emit_init_signature(akg_buf *b, const akg_reference *ref)
{
    for (size_t i = 0; i < ref->n_init_params; i++) {
        const akg_ref_param *p = &ref->init_params[i];
        akg_buf_appendf(b, ", %s", p->name);
        if (p->default_text)
            akg_buf_appendf(b, "=%s", p->default_text);
    }
}

static void emit_forward_signature(akg_buf *b, const akg_reference *ref)
{
    for (size_t i = 0; i < ref->n_forward_params; i++)
        akg_buf_appendf(b, ", %s", ref->forward_params[i].name);
}

/* The forward parameter the design reads: the first one (the Designer only
 * builds designs over one input, and checks it is forward's). */
static const char *input_name(const akg_design *d, const akg_reference *ref, int i)
{
    int p = d->n_inputs > i ? d->inputs[i] : 0;
    return ref->n_forward_params > (size_t)p ? ref->forward_params[p].name : "x";
}

static int emit_model_new(akg_buf *b, const akg_design *d, const akg_reference *ref,
                          const char *libname)
{
    akg_buf argtypes;
    akg_buf_init(&argtypes, 4096);
    for (int i = 0; i < (d->kind == AKG_DESIGN_SOFTMAX ? 1 : d->n_inputs); i++)
        akg_buf_puts(&argtypes, "ctypes.c_void_p, ");
    akg_buf_puts(&argtypes, "ctypes.c_void_p");
    if (d->kind == AKG_DESIGN_SOFTMAX) {
        akg_buf_puts(&argtypes, ", ctypes.c_int64, ctypes.c_int64, ctypes.c_int64");
    } else {
        akg_buf_puts(&argtypes, ", ctypes.c_int64");
        for (int k = 0; k < d->n_scalars; k++)
            akg_buf_puts(&argtypes, ", ctypes.c_float");
    }
    akg_cpp_model_new_prologue(b, d, libname, argtypes.data);
    akg_buf_free(&argtypes);
    akg_cpp_model_new_init(b, ref);
    akg_cpp_model_new_forward_def(b, ref);
    int nin = d->kind == AKG_DESIGN_SOFTMAX ? 1 : d->n_inputs;
    for (int i = 0; i < nin; i++) {
        const char *in = input_name(d, ref, i);
        akg_buf_appendf(b,
                        "        if %s.dtype != torch.float32 or %s.device.type != \"cpu\":\n"
                        "            raise TypeError(\"this kernel takes float32 CPU tensors, got "
                        "%%s on %%s\" %% (%s.dtype, %s.device))\n",
                        in, in, in, in);
        akg_buf_appendf(b, "        x%d = %s.contiguous()\n", i, in);
        if (i > 0)
            akg_buf_appendf(b,
                            "        if x%d.size() != x0.size():\n"
                            "            raise ValueError(\"inputs must have one shape\")\n",
                            i);
    }
    akg_buf_puts(b, "        y = torch.empty_like(x0)\n");
    if (d->kind == AKG_DESIGN_SOFTMAX) {
        if (d->dim.source == AKG_SCALAR_INIT_PARAM)
            akg_buf_appendf(b, "        dim = int(self._akg_%s)\n", d->dim.init_name);
        else
            akg_buf_appendf(b, "        dim = %d\n", (int)d->dim.value);
        akg_buf_puts(b, "        sizes = list(x0.size())\n"
                        "        if not sizes:\n            sizes = [1]\n"
                        "        dim = dim % len(sizes)\n"
                        "        outer = 1\n        for s in sizes[:dim]:\n            outer *= s\n"
                        "        inner = 1\n        for s in sizes[dim + 1:]:\n            inner *= s\n");
        akg_buf_puts(b, "        if y.numel() > 0:\n"
                        "            rc = _KERNEL(x0.data_ptr(), y.data_ptr(), outer, sizes[dim], inner)\n");
    } else {
        akg_buf_puts(b, "        if y.numel() > 0:\n            rc = _KERNEL(");
        for (int i = 0; i < nin; i++)
            akg_buf_appendf(b, "x%d.data_ptr(), ", i);
        akg_buf_puts(b, "y.data_ptr(), y.numel()");
        for (int k = 0; k < d->n_scalars; k++)
            akg_buf_appendf(b, ", float(self._akg_%s)", d->scalars[k].init_name);
        akg_buf_puts(b, ")\n");
    }
    akg_buf_puts(b, "            if rc != 0:\n"
                    "                raise RuntimeError(\"akg_kernel failed with status %d\" % rc)\n"
                    "        return y\n");
    return AKG_OK;
}

void akg_kernel_files_free(akg_kernel_files *k)
{
    free(k->kernel_source);
    free(k->kernel_filename);
    free(k->library_filename);
    free(k->model_new_source);
    memset(k, 0, sizeof *k);
}

typedef int (*family_emitter)(const akg_design *, const akg_sketch *, const akg_reference *, int,
                              akg_kernel_files *, char *, size_t);

static const struct {
    const char *family;
    family_emitter emit;
} family_emitters[] = {
    {"reduction", akg_cpp_emit_reduction}, {"norm", akg_cpp_emit_norm},
    {"scan", akg_cpp_emit_scan},           {"loss", akg_cpp_emit_loss},
    {"matmul", akg_cpp_emit_matmul},       {"conv", akg_cpp_emit_conv},
    {"pool", akg_cpp_emit_pool},
};

int akg_cpp_emit(const akg_design *src_design, const akg_sketch *sk, const akg_reference *ref,
                 int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (src_design->kind == AKG_DESIGN_FAMILY) {
        for (size_t i = 0; i < sizeof family_emitters / sizeof family_emitters[0]; i++)
            if (strcmp(family_emitters[i].family, src_design->family) == 0)
                return family_emitters[i].emit(src_design, sk, ref, safe_mode, out, err, errlen);
        return akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: unknown family %s",
                        src_design->family);
    }
    /* lower what the sketch says, on a copy of the design */
    akg_design *d = malloc(sizeof *d);
    if (!d)
        return AKG_ENOMEM;
    *d = *src_design;
    d->sketch_text = NULL;
    d->params = NULL;
    int rc = d->kind == AKG_DESIGN_POINTWISE ? akg_cpp_lower_pointwise(sk, ref, d, err, errlen)
                                             : akg_cpp_lower_softmax(sk, d, err, errlen);
    if (rc) {
        free(d);
        return rc;
    }
    akg_buf src;
    akg_buf_init(&src, 4 << 20);
    akg_cpp_emit_header(&src, d);
    if (d->kind == AKG_DESIGN_POINTWISE)
        rc = emit_pointwise(&src, d, ref, safe_mode, err, errlen);
    else
        emit_softmax(&src, d, safe_mode);
    if (rc) {
        akg_buf_free(&src);
        free(d);
        return rc;
    }
    char lib[64];
    akg_cpp_library_name(src.data, src.len, lib);
    akg_buf py;
    akg_buf_init(&py, 1 << 20);
    emit_model_new(&py, d, ref, lib);
    out->library_filename = akg_strdup(lib);
    akg_cpp_finish_files(&src, &py, out);
    free(d);
    return AKG_OK;
}
