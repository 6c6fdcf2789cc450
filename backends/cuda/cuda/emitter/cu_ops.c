/*
 * cu_ops.c: the CUDA C formula of every elementwise operation of the
 * language (the definitions of sketch-grammar/README.md, the rows of the
 * other backends' tables), and the prelude every generated .cu starts with.
 *
 * %0..%2 are the operands, always C names or literals (each element is bound
 * to a const local first, so a formula may name an operand more than once);
 * %t is the arithmetic type (float for f16/bf16/f32, double, int, long long),
 * so constants never promote a float formula to double. NaN propagates as in
 * PyTorch: maximum/minimum pick a NaN operand, relu and the clamps keep one.
 */
#include <string.h>

#include "cu.h"

struct cu_op {
    const char *name;
    int nargs;
    const char *fmt;
    int kind; /* 0 arithmetic, 1 comparison (bool result), 2 logical (bool), 3 where */
    const char *defaults[3];
};

static const cu_op ops[] = {
    {"neg", 1, "(-%0)", 0, {0}},
    {"abs", 1, "akg_abs(%0)", 0, {0}},
    {"exp", 1, "akg_exp(%0)", 0, {0}},
    {"exp2", 1, "akg_exp2(%0)", 0, {0}},
    {"log", 1, "akg_log(%0)", 0, {0}},
    {"log2", 1, "akg_log2(%0)", 0, {0}},
    {"sqrt", 1, "akg_sqrt(%0)", 0, {0}},
    {"rsqrt", 1, "((%t)1 / akg_sqrt(%0))", 0, {0}},
    {"tanh", 1, "akg_tanh(%0)", 0, {0}},
    {"sigmoid", 1, "((%t)1 / ((%t)1 + akg_exp(-%0)))", 0, {0}},
    {"relu", 1, "(%0 < (%t)0 ? (%t)0 : %0)", 0, {0}},
    {"relu6", 1, "(%0 < (%t)0 ? (%t)0 : (%0 > (%t)6 ? (%t)6 : %0))", 0, {0}},
    {"leaky_relu", 2, "(%0 < (%t)0 ? %0 * %1 : %0)", 0, {NULL, "0.01"}},
    {"gelu", 1, "((%t)0.5 * %0 * ((%t)1 + akg_erf(%0 * (%t)0.7071067811865476)))", 0, {0}},
    {"gelu_tanh",
     1,
     "((%t)0.5 * %0 * ((%t)1 + akg_tanh((%t)0.7978845608028654 * (%0 + (%t)0.044715 * %0 * %0 * "
     "%0))))",
     0,
     {0}},
    {"silu", 1, "(%0 / ((%t)1 + akg_exp(-%0)))", 0, {0}},
    {"mish", 1, "(%0 * akg_tanh(%0 > (%t)20 ? %0 : akg_log1p(akg_exp(%0))))", 0, {0}},
    {"softplus",
     3,
     "(%0 * %1 > %2 ? %0 : akg_log1p(akg_exp(%0 * %1)) / %1)",
     0,
     {NULL, "1.0", "20.0"}},
    {"elu", 2, "(%0 > (%t)0 ? %0 : %1 * akg_expm1(%0))", 0, {NULL, "1.0"}},
    {"selu",
     1,
     "((%t)1.0507009873554805 * (%0 > (%t)0 ? %0 : (%t)1.6732632423543772 * akg_expm1(%0)))",
     0,
     {0}},
    {"hardtanh", 3, "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))", 0, {NULL, "-1.0", "1.0"}},
    {"clamp", 3, "(%0 < %1 ? %1 : (%0 > %2 ? %2 : %0))", 0, {0}},
    {"hardsigmoid",
     1,
     "(%0 <= (%t)-3 ? (%t)0 : (%0 >= (%t)3 ? (%t)1 : %0 / (%t)6 + (%t)0.5))",
     0,
     {0}},
    {"hardswish",
     1,
     "(%0 <= (%t)-3 ? (%t)0 : (%0 >= (%t)3 ? %0 : %0 * (%0 + (%t)3) / (%t)6))",
     0,
     {0}},
    {"softsign", 1, "(%0 / ((%t)1 + akg_abs(%0)))", 0, {0}},
    {"sin", 1, "akg_sin(%0)", 0, {0}},
    {"cos", 1, "akg_cos(%0)", 0, {0}},
    {"erf", 1, "akg_erf(%0)", 0, {0}},
    {"sign", 1, "(%0 > (%t)0 ? (%t)1 : (%0 < (%t)0 ? (%t)-1 : %0))", 0, {0}},
    {"recip", 1, "((%t)1 / %0)", 0, {0}},
    {"floor", 1, "akg_floor(%0)", 0, {0}},
    {"round", 1, "akg_rint(%0)", 0, {0}},
    {"add", 2, "(%0 + %1)", 0, {0}},
    {"sub", 2, "(%0 - %1)", 0, {0}},
    {"mul", 2, "(%0 * %1)", 0, {0}},
    {"div", 2, "(%0 / %1)", 0, {0}},
    {"pow", 2, "akg_pow(%0, %1)", 0, {0}},
    {"floordiv", 2, "akg_floordiv(%0, %1)", 0, {0}},
    {"mod", 2, "akg_floormod(%0, %1)", 0, {0}},
    {"maximum", 2, "((%0 != %0 || %0 > %1) ? %0 : %1)", 0, {0}},
    {"minimum", 2, "((%0 != %0 || %0 < %1) ? %0 : %1)", 0, {0}},
    {"bitand", 2, "(%0 & %1)", 0, {0}},
    {"bitor", 2, "(%0 | %1)", 0, {0}},
    {"bitxor", 2, "(%0 ^ %1)", 0, {0}},
    {"invert", 1, "(~%0)", 0, {0}},
    {"logical_and", 2, "((%0 != (%t)0) && (%1 != (%t)0))", 2, {0}},
    {"logical_or", 2, "((%0 != (%t)0) || (%1 != (%t)0))", 2, {0}},
    {"logical_not", 1, "(%0 == (%t)0)", 2, {0}},
    {"lt", 2, "(%0 < %1)", 1, {0}},
    {"le", 2, "(%0 <= %1)", 1, {0}},
    {"gt", 2, "(%0 > %1)", 1, {0}},
    {"ge", 2, "(%0 >= %1)", 1, {0}},
    {"eq", 2, "(%0 == %1)", 1, {0}},
    {"ne", 2, "(%0 != %1)", 1, {0}},
    {"where", 3, "(%0 ? %1 : %2)", 3, {0}},
    {"copy", 1, "%0", 0, {0}},
};

const cu_op *cu_op_find(const char *name)
{
    static const struct {
        const char *alias, *name;
    } aliases[] = {{"max", "maximum"}, {"min", "minimum"}, {"reciprocal", "recip"}};
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!strcmp(name, aliases[i].alias))
            name = aliases[i].name;
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        if (!strcmp(ops[i].name, name))
            return &ops[i];
    return NULL;
}

int cu_op_nargs(const cu_op *op)
{
    return op->nargs;
}

const char *cu_op_default(const cu_op *op, int i)
{
    return i >= 0 && i < 3 ? op->defaults[i] : NULL;
}

int cu_op_kind(const cu_op *op)
{
    return op->kind;
}

const char *cu_op_apply(cu_ctx *C, const cu_op *op, const char *ctype, const char *const *args)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 20);
    for (const char *p = op->fmt; *p;) {
        if (p[0] == '%' && p[1] >= '0' && p[1] <= '2') {
            akg_buf_puts(&b, args[p[1] - '0']);
            p += 2;
        } else if (p[0] == '%' && p[1] == 't') {
            akg_buf_puts(&b, ctype);
            p += 2;
        } else {
            akg_buf_append(&b, p++, 1);
        }
    }
    const char *r = akg_buf_status(&b) ? "0" : cu_strf(C, "%s", b.data);
    akg_buf_free(&b);
    return r;
}

/* Device helpers: math overloads for float and double (integers go through double), the
 * language's casts (round to nearest even; float to integer saturating, NaN to 0), floor
 * division, the block reduction (warp shuffles, then one warp over the warps' partials
 * in shared memory) and the block scan (the same two levels, shuffles up). */
const char cu_prelude[] =
    "#include <cuda_runtime.h>\n"
    "#include <cuda_fp16.h>\n"
    "#include <cuda_bf16.h>\n"
    "#include <stdint.h>\n"
    "#include <math.h>\n"
    "#pragma nv_diag_suppress 177 /* generated names left unused */\n"
    "\n"
    "#define AKG_NT 256\n"
    "#define AKG_MAX_GRID 8192LL\n"
    "/* gemm: AKG_GT x AKG_GT sub-tiles of the product, K in AKG_GK-deep shared chunks, a\n"
    "   16 x 16 thread grid of AKG_GR x AKG_GR register micro-tiles */\n"
    "#define AKG_GT 64\n"
    "#define AKG_GK 16\n"
    "#define AKG_GR (AKG_GT / 16)\n"
    "static_assert(AKG_NT == 256, \"gemm's 16 x 16 thread grid needs 256 threads a block\");\n"
    "\n"
    "#define AKG_MATH1(NAME, F, D) \\\n"
    "  __device__ __forceinline__ float NAME(float x) { return F(x); } \\\n"
    "  __device__ __forceinline__ double NAME(double x) { return D(x); } \\\n"
    "  __device__ __forceinline__ double NAME(long long x) { return D((double)x); } \\\n"
    "  __device__ __forceinline__ double NAME(int x) { return D((double)x); }\n"
    "AKG_MATH1(akg_exp, expf, exp)\n"
    "AKG_MATH1(akg_exp2, exp2f, exp2)\n"
    "AKG_MATH1(akg_log, logf, log)\n"
    "AKG_MATH1(akg_log2, log2f, log2)\n"
    "AKG_MATH1(akg_sqrt, sqrtf, sqrt)\n"
    "AKG_MATH1(akg_tanh, tanhf, tanh)\n"
    "AKG_MATH1(akg_erf, erff, erf)\n"
    "AKG_MATH1(akg_expm1, expm1f, expm1)\n"
    "AKG_MATH1(akg_log1p, log1pf, log1p)\n"
    "AKG_MATH1(akg_sin, sinf, sin)\n"
    "AKG_MATH1(akg_cos, cosf, cos)\n"
    "AKG_MATH1(akg_floor, floorf, floor)\n"
    "AKG_MATH1(akg_rint, rintf, rint)\n"
    "__device__ __forceinline__ float akg_abs(float x) { return fabsf(x); }\n"
    "__device__ __forceinline__ double akg_abs(double x) { return fabs(x); }\n"
    "__device__ __forceinline__ int akg_abs(int x) { return x < 0 ? -x : x; }\n"
    "__device__ __forceinline__ long long akg_abs(long long x) { return x < 0 ? -x : x; "
    "}\n"
    "__device__ __forceinline__ float akg_pow(float a, float b) { return powf(a, b); }\n"
    "__device__ __forceinline__ double akg_pow(double a, double b) { return pow(a, b); }\n"
    "\n"
    "__host__ __device__ __forceinline__ long long akg_min(long long a, long long b) { "
    "return a < b ? a : b; }\n"
    "__host__ __device__ __forceinline__ long long akg_max(long long a, long long b) { "
    "return a > b ? a : b; }\n"
    "__host__ __device__ __forceinline__ long long akg_floordiv(long long a, long long b) "
    "{\n"
    "  long long q = a / b;\n"
    "  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n"
    "}\n"
    "__host__ __device__ __forceinline__ long long akg_floormod(long long a, long long b) "
    "{\n"
    "  long long r = a % b;\n"
    "  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;\n"
    "}\n"
    "__device__ __forceinline__ float akg_floordiv(float a, float b) { return floorf(a / "
    "b); }\n"
    "__device__ __forceinline__ double akg_floordiv(double a, double b) { return floor(a / "
    "b); }\n"
    "__device__ __forceinline__ float akg_floormod(float a, float b) { return a - b * "
    "floorf(a / b); }\n"
    "__device__ __forceinline__ double akg_floormod(double a, double b) { return a - b * "
    "floor(a / b); }\n"
    "__host__ __device__ __forceinline__ long long akg_ceildiv(long long a, long long b) { "
    "return -akg_floordiv(-a, b); }\n"
    "__host__ __device__ __forceinline__ long long akg_trip(long long start, long long "
    "stop, long long step) {\n"
    "  return stop > start ? (stop - start + step - 1) / step : 0;\n"
    "}\n"
    "\n"
    "/* the language's cast: to float types round to nearest even; float to integer truncates\n"
    "   toward zero and saturates, NaN to 0 */\n"
    "template <class To> struct akg_cvt_t {\n"
    "  template <class From> static __device__ __forceinline__ To go(From x) {\n"
    "    if constexpr (sizeof(To) <= 8 && (To)0.5 == (To)0 && (From)0.5 != (From)0) {\n"
    "      double d = (double)x;\n"
    "      if (d != d) return (To)0;\n"
    "      const double lo = (double)(To)((To)1 << (sizeof(To) * 8 - 1)) > 0 ? 0.0 :\n"
    "          (double)(To)((To)1 << (sizeof(To) * 8 - 1));\n"
    "      const double hi = -lo - 1.0 > 0 ? -lo - 1.0 : (double)(To)~(To)0;\n"
    "      if (d <= lo) return (To)lo;\n"
    "      if (d >= hi) return (To)hi;\n"
    "      return (To)d;\n"
    "    } else {\n"
    "      return (To)x;\n"
    "    }\n"
    "  }\n"
    "  static __device__ __forceinline__ To go(__half x) { return go(__half2float(x)); }\n"
    "  static __device__ __forceinline__ To go(__nv_bfloat16 x) { return "
    "go(__bfloat162float(x)); }\n"
    "};\n"
    "template <> struct akg_cvt_t<bool> {\n"
    "  template <class From> static __device__ __forceinline__ bool go(From x) { return x != "
    "(From)0; }\n"
    "  static __device__ __forceinline__ bool go(__half x) { return __half2float(x) != 0.0f; }\n"
    "  static __device__ __forceinline__ bool go(__nv_bfloat16 x) { return __bfloat162float(x) "
    "!= 0.0f; }\n"
    "};\n"
    "template <> struct akg_cvt_t<__half> {\n"
    "  template <class From> static __device__ __forceinline__ __half go(From x) { return "
    "__double2half((double)x); }\n"
    "  static __device__ __forceinline__ __half go(float x) { return __float2half_rn(x); }\n"
    "  static __device__ __forceinline__ __half go(__half x) { return x; }\n"
    "  static __device__ __forceinline__ __half go(__nv_bfloat16 x) { return "
    "__float2half_rn(__bfloat162float(x)); }\n"
    "};\n"
    "template <> struct akg_cvt_t<__nv_bfloat16> {\n"
    "  template <class From> static __device__ __forceinline__ __nv_bfloat16 go(From x) { "
    "return __double2bfloat16((double)x); }\n"
    "  static __device__ __forceinline__ __nv_bfloat16 go(float x) { return "
    "__float2bfloat16_rn(x); }\n"
    "  static __device__ __forceinline__ __nv_bfloat16 go(__nv_bfloat16 x) { return x; }\n"
    "  static __device__ __forceinline__ __nv_bfloat16 go(__half x) { return "
    "__float2bfloat16_rn(__half2float(x)); }\n"
    "};\n"
    "#define AKG_CVT(T, x) (akg_cvt_t<T>::go(x))\n"
    "\n"
    "/* reductions: 0 sum, 1 max, 2 min, 3 prod; max and min propagate NaN */\n"
    "template <int OP, class T> __device__ __forceinline__ T akg_comb(T a, T b) {\n"
    "  if constexpr (OP == 0) return a + b;\n"
    "  else if constexpr (OP == 3) return a * b;\n"
    "  else if constexpr (OP == 1) return (a != a || a > b) ? a : b;\n"
    "  else return (a != a || a < b) ? a : b;\n"
    "}\n"
    "template <int OP, class T> __device__ T akg_block_reduce(T v, T identity) {\n"
    "  __shared__ T partial[32];\n"
    "  __syncthreads(); /* the previous reduction has read partial[0] */\n"
    "  for (int o = 16; o > 0; o >>= 1) v = akg_comb<OP>(v, (T)__shfl_down_sync(0xffffffffu, v, "
    "o));\n"
    "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "  if (lane == 0) partial[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    v = lane < (int)((blockDim.x + 31) >> 5) ? partial[lane] : identity;\n"
    "    for (int o = 16; o > 0; o >>= 1) v = akg_comb<OP>(v, (T)__shfl_down_sync(0xffffffffu, "
    "v, o));\n"
    "    if (lane == 0) partial[0] = v;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  return partial[0];\n"
    "}\n"
    "/* partial reductions: the block's threads in groups of g (a power of two), a group an\n"
    "   output. inner: the reduced axis is the tile's contiguous one, and a group is g adjacent\n"
    "   threads (thread t: output t / g, part t % g), so a warp's lanes read adjacent elements;\n"
    "   else thread t is output t % (AKG_NT / g), part t / (AKG_NT / g), and adjacent threads\n"
    "   read adjacent outputs. g: the block shared among the outputs, at least a warp's width\n"
    "   along a contiguous axis, at most the reduced count rounded up to a power of two. */\n"
    "__device__ __forceinline__ int akg_red_group(long long outs, long long red, bool inner) {\n"
    "  int g = 1;\n"
    "  while (g < AKG_NT && (long long)g * 2 * outs <= AKG_NT) g *= 2;\n"
    "  if (inner) while (g < 32) g *= 2;\n"
    "  while (g > 1 && (long long)(g / 2) >= red) g /= 2;\n"
    "  return g;\n"
    "}\n"
    "/* Combines the parts of every output (layout of akg_red_group); the result is on the\n"
    "   group's first thread (inner: t % g == 0; else t < AKG_NT / g). Every thread of the\n"
    "   block calls it with the same g and inner. */\n"
    "template <int OP, class T> __device__ T akg_group_reduce(T v, int g, bool inner) {\n"
    "  __shared__ T part[AKG_NT];\n"
    "  if (g == 1) return v;\n"
    "  const int t = (int)threadIdx.x;\n"
    "  if (inner) {\n"
    "    for (int o = (g < 32 ? g : 32) >> 1; o > 0; o >>= 1)\n"
    "      v = akg_comb<OP>(v, (T)__shfl_down_sync(0xffffffffu, v, o));\n"
    "    if (g <= 32) return v;\n"
    "    __syncthreads(); /* the previous call has read part */\n"
    "    if ((t & 31) == 0) part[t >> 5] = v;\n"
    "    __syncthreads();\n"
    "    if ((t & (g - 1)) == 0)\n"
    "      for (int w = 1; w < (g >> 5); w++) v = akg_comb<OP>(v, part[(t >> 5) + w]);\n"
    "    return v;\n"
    "  }\n"
    "  const int np = AKG_NT / g;\n"
    "  for (int o = 16; o >= np; o >>= 1) v = akg_comb<OP>(v, (T)__shfl_down_sync(0xffffffffu, v, "
    "o));\n"
    "  __syncthreads(); /* the previous call has read part */\n"
    "  part[t] = v;\n"
    "  __syncthreads();\n"
    "  if (t < np) {\n"
    "    const int step = np < 32 ? 32 : np;\n"
    "    for (int j = t + step; j < AKG_NT; j += step) v = akg_comb<OP>(v, part[j]);\n"
    "  }\n"
    "  return v;\n"
    "}\n"
    "/* argmax (MAX) / argmin: (v, i) takes (v2, i2) when v2 is the better extreme; a NaN is the\n"
    "   extreme, and of equal values (or two NaNs) the first index wins, whatever the order the\n"
    "   pairs are combined in. */\n"
    "template <bool MAX, class T> __device__ __forceinline__ void akg_argcomb(T &v, int &i, T v2, "
    "int i2) {\n"
    "  const bool n1 = v != v, n2 = v2 != v2;\n"
    "  const bool take = (n1 || n2) ? (n2 && (!n1 || i2 < i))\n"
    "                               : ((MAX ? v2 > v : v2 < v) || (v2 == v && i2 < i));\n"
    "  if (take) {\n"
    "    v = v2;\n"
    "    i = i2;\n"
    "  }\n"
    "}\n"
    "/* akg_group_reduce for (value, index) pairs. */\n"
    "template <bool MAX, class T> __device__ void akg_group_argreduce(T &v, int &i, int g, bool "
    "inner) {\n"
    "  __shared__ T partv[AKG_NT];\n"
    "  __shared__ int parti[AKG_NT];\n"
    "  if (g == 1) return;\n"
    "  const int t = (int)threadIdx.x;\n"
    "  if (inner) {\n"
    "    for (int o = (g < 32 ? g : 32) >> 1; o > 0; o >>= 1) {\n"
    "      const T v2 = (T)__shfl_down_sync(0xffffffffu, v, o);\n"
    "      const int i2 = __shfl_down_sync(0xffffffffu, i, o);\n"
    "      akg_argcomb<MAX>(v, i, v2, i2);\n"
    "    }\n"
    "    if (g <= 32) return;\n"
    "    __syncthreads(); /* the previous call has read partv, parti */\n"
    "    if ((t & 31) == 0) {\n"
    "      partv[t >> 5] = v;\n"
    "      parti[t >> 5] = i;\n"
    "    }\n"
    "    __syncthreads();\n"
    "    if ((t & (g - 1)) == 0)\n"
    "      for (int w = 1; w < (g >> 5); w++) akg_argcomb<MAX>(v, i, partv[(t >> 5) + w], "
    "parti[(t >> 5) + w]);\n"
    "    return;\n"
    "  }\n"
    "  const int np = AKG_NT / g;\n"
    "  for (int o = 16; o >= np; o >>= 1) {\n"
    "    const T v2 = (T)__shfl_down_sync(0xffffffffu, v, o);\n"
    "    const int i2 = __shfl_down_sync(0xffffffffu, i, o);\n"
    "    akg_argcomb<MAX>(v, i, v2, i2);\n"
    "  }\n"
    "  __syncthreads(); /* the previous call has read partv, parti */\n"
    "  partv[t] = v;\n"
    "  parti[t] = i;\n"
    "  __syncthreads();\n"
    "  if (t < np) {\n"
    "    const int step = np < 32 ? 32 : np;\n"
    "    for (int j = t + step; j < AKG_NT; j += step) akg_argcomb<MAX>(v, i, partv[j], "
    "parti[j]);\n"
    "  }\n"
    "}\n"
    "/* scans: an inclusive (or exclusive) scan of one value a thread over the block, thread\n"
    "   order; *total gets the block's total. Every thread of the block calls it. */\n"
    "template <int OP, class T> __device__ T akg_block_scan(T v, T identity, bool exclusive, T "
    "*total) {\n"
    "  __shared__ T warp_total[32];\n"
    "  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
    "  const int warps = (int)((blockDim.x + 31) >> 5);\n"
    "  for (int o = 1; o < 32; o <<= 1) {\n"
    "    const T u = (T)__shfl_up_sync(0xffffffffu, v, o);\n"
    "    if (lane >= o) v = akg_comb<OP>(u, v);\n"
    "  }\n"
    "  T before = (T)__shfl_up_sync(0xffffffffu, v, 1);\n"
    "  if (lane == 0) before = identity;\n"
    "  __syncthreads(); /* the previous scan has read warp_total */\n"
    "  if (lane == 31) warp_total[warp] = v;\n"
    "  __syncthreads();\n"
    "  if (warp == 0) {\n"
    "    T w = lane < warps ? warp_total[lane] : identity;\n"
    "    for (int o = 1; o < 32; o <<= 1) {\n"
    "      const T u = (T)__shfl_up_sync(0xffffffffu, w, o);\n"
    "      if (lane >= o) w = akg_comb<OP>(u, w);\n"
    "    }\n"
    "    warp_total[lane] = w;\n"
    "  }\n"
    "  __syncthreads();\n"
    "  const T prefix = warp > 0 ? warp_total[warp - 1] : identity;\n"
    "  *total = warp_total[warps - 1];\n"
    "  return akg_comb<OP>(prefix, exclusive ? before : v);\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T akg_lowest() {\n"
    "  if constexpr ((T)0.5 != (T)0) return (T)-INFINITY;\n"
    "  else return (T)((T)1 << (sizeof(T) * 8 - 1));\n"
    "}\n"
    "template <class T> __device__ __forceinline__ T akg_highest() {\n"
    "  if constexpr ((T)0.5 != (T)0) return (T)INFINITY;\n"
    "  else return (T)~((T)1 << (sizeof(T) * 8 - 1));\n"
    "}\n"
    "\n"
    "/* device scratch of one call, on the caller's stream, freed when the call ends */\n"
    "struct akg_scratch {\n"
    "  void *p[256];\n"
    "  int n;\n"
    "  cudaStream_t s;\n"
    "  int failed;\n"
    "};\n"
    "static void *akg_scratch_get(akg_scratch *sc, long long bytes) {\n"
    "  void *p = 0;\n"
    "  if (sc->n >= 256 || bytes < 0 || cudaMallocAsync(&p, (size_t)(bytes > 0 ? bytes : 1), "
    "sc->s) != cudaSuccess) {\n"
    "    sc->failed = 1;\n"
    "    return 0;\n"
    "  }\n"
    "  sc->p[sc->n++] = p;\n"
    "  return p;\n"
    "}\n"
    "static void akg_scratch_release(akg_scratch *sc) {\n"
    "  for (int i = 0; i < sc->n; i++) cudaFreeAsync(sc->p[i], sc->s);\n"
    "  sc->n = 0;\n"
    "}\n"
    "static unsigned akg_grid(long long programs) {\n"
    "  return (unsigned)(programs < AKG_MAX_GRID ? programs : AKG_MAX_GRID);\n"
    "}\n"
    "\n";
