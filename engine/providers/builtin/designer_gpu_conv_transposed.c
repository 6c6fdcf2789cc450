/*
 * designer_gpu_conv_transposed.c: the GPU design of a transposed convolution
 * (nn.ConvTranspose1d/2d/3d: groups, stride, padding, output padding, dilation, bias), written
 * for the cuda backend from the conv rule's design (its params name the layer and its
 * geometry).
 *
 * The CPU design computes W^T x into a scratch tile of columns and scatters each tap's
 * columns into the output (read, add, write back): a GPU emitter lowers neither the scratch
 * tile's indexed update nor the scatter's races. This one is the gather form: each output
 * position reads the inputs that reach it, so every output is written once by one program.
 *
 * Output position o (per dim) is reached from input i by tap k when o = i * S - P + k * L, that
 * is i = (o + P - k * L) / S where that divides. Split o by its phase r = o % S (o = r + S * q):
 * tap k reaches phase r iff (r + P - k * L) % S == 0, and then i = q + (r + P - k * L) / S, an
 * offset known when the sketch is written. The taps that reach a phase are S / gcd(L, S) apart
 * and their offsets S / gcd(L, S) * L / S apart: a short loop per dim with literal steps. So
 * the design is one launch per phase (rd, rh, rw) (S_D * S_H * S_W launches, 4 for a stride-2
 * 2-D layer), each an implicit GEMM over the phase's outputs with the taps that reach it (one
 * pair of tiles, whatever the number of taps): the grid over (n, qd, qh, BW output
 * columns of the phase, group, BN output channels of the group), an f32 [BN, BW] accumulator,
 * and per BK input channels of the group and tap the weight tile w[ic.., oc.., kd, kh, kw]
 * ([BK, BN], transposed by gemm's trans_a) times the input tile x[n, ic.., qd + od, qh + oh,
 * qw + ow ...] ([BK, BW], contiguous columns). Inputs outside the layer's input are the loads'
 * bounds guards (zeros); the store writes the phase's columns, a strided slice with the stride
 * as a literal step. A phase no tap reaches (a kernel shorter than the stride) stores the bias
 * or zeros. The bias is a [BN, 1] tile added before the store.
 *
 * The layer's geometry is in the sketch as constants (the taps and offsets follow from it) and
 * the binds check it against the layer at run time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "designer_gpu.h"

#define SP akg_gpu_conv_axis

/* Floor division and modulo (Python's) of a by b > 0. */
static long fdiv(long a, long b)
{
    return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* " + n" / " - n" / "" for an offset. */
static void offset(akg_buf *b, long n)
{
    if (n > 0)
        akg_buf_appendf(b, " + %ld", n);
    else if (n < 0)
        akg_buf_appendf(b, " - %ld", -n);
}

/* The phase's extent along dim i: the q with r + S * q < O. */
static void phase_extent(akg_buf *b, int i, long r, long s)
{
    if (s == 1)
        akg_buf_appendf(b, "O%s", SP[i]);
    else if (s - 1 - r == 0)
        akg_buf_appendf(b, "O%s // %ld", SP[i], s);
    else
        akg_buf_appendf(b, "(O%s + %ld) // %ld", SP[i], s - 1 - r, s);
}

char *akg_gpu_conv_transposed_sketch(const akg_design *d, const akg_reference *ref)
{
    const cJSON *layers = cJSON_GetObjectItem(d->params, "layers");
    const cJSON *in = cJSON_GetObjectItem(d->params, "input");
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != 1 || !cJSON_IsNumber(in) ||
        in->valueint < 0 || (size_t)in->valueint >= ref->n_forward_params)
        return NULL;
    const cJSON *L = cJSON_GetArrayItem(layers, 0);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(L, "name"));
    const char *pm = cJSON_GetStringValue(cJSON_GetObjectItem(L, "padding_mode"));
    int dims = (int)akg_gpu_conv_item(L, "dims", 0, 0);
    long groups = akg_gpu_conv_item(L, "groups", 0, 1),
         ic = akg_gpu_conv_item(L, "in_channels", 0, 0),
         oc = akg_gpu_conv_item(L, "out_channels", 0, 0);
    if (!name || akg_gpu_conv_item(L, "transposed", 0, 0) != 1 || !pm || strcmp(pm, "zeros") ||
        cJSON_IsTrue(cJSON_GetObjectItem(L, "same")) || dims < 1 || dims > 3 || groups < 1 ||
        ic <= 0 || oc <= 0 || ic % groups || oc % groups)
        return NULL;
    long k[3], s[3], p[3], l[3], q[3];
    if (!akg_gpu_conv_window(L, dims, 0, k, s, p, l))
        return NULL;
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        q[i] = at < 0 ? 0 : akg_gpu_conv_item(L, "output_padding", at, 0);
        if (s[i] > 8 || q[i] < 0)
            return NULL;
    }
    long icg = ic / groups, ocg = oc / groups;
    int bias = (int)akg_gpu_conv_item(L, "bias", 0, 0);
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(&b,
                    "# %s on a GPU: the gather form of a transposed convolution, one launch per "
                    "phase of the\n# output (its position modulo the stride in each dim), each "
                    "an implicit GEMM over the\n# phase's outputs with the taps that reach it: "
                    "per BK input channels and tap, the weight\n# [BK, BN] (transposed) times "
                    "the input [BK, BW] into an f32 tile; inputs outside are the\n# loads' "
                    "bounds (zeros), the phase's columns a strided store.\n",
                    d->op_name);
    akg_buf_appendf(&b,
                    "sketch %s {\n  symbols: N, C, ID, IH, IW, OD, OH, OW;\n  tensors: x[N, C, "
                    "ID, IH, IW]: f32; w[C, OCG, KD, KH, KW]: f32; ",
                    d->op_name);
    if (bias)
        akg_buf_puts(&b, "bias[OC]: f32; ");
    akg_buf_puts(&b, "y[N, OC, OD, OH, OW]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: G = %ld, OC = %ld, ICG = %ld, OCG = %ld", groups, oc, icg,
                    ocg);
    for (int i = 0; i < 3; i++)
        akg_buf_appendf(&b, ", K%s = %ld, S%s = %ld, P%s = %ld, L%s = %ld, Q%s = %ld", SP[i], k[i],
                        SP[i], s[i], SP[i], p[i], SP[i], l[i], SP[i], q[i]);
    akg_gpu_conv_tile_tunes(&b, ocg, icg);
    akg_buf_puts(&b, ";\n");
    akg_gpu_conv_bind_input(&b, ref->forward_params[in->valueint].name, dims);
    akg_gpu_conv_bind_weight(&b, "w", name, "C, OCG", dims, "G");
    akg_buf_puts(&b, "\n");
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        akg_buf_puts(&b, "  bind: ");
        if (at >= 0)
            akg_buf_appendf(&b,
                            "S%s = attr(\"%s.stride\", %d), L%s = attr(\"%s.dilation\", %d), P%s = "
                            "attr(\"%s.padding\", %d), Q%s = attr(\"%s.output_padding\", %d), ",
                            SP[i], name, at, SP[i], name, at, SP[i], name, at, SP[i], name, at);
        akg_buf_appendf(&b, "O%s = (I%s - 1) * S%s - 2 * P%s + L%s * (K%s - 1) + Q%s + 1\n", SP[i],
                        SP[i], SP[i], SP[i], SP[i], SP[i], SP[i]);
    }
    if (bias)
        akg_buf_appendf(&b, "  bind: bias = weight(\"%s.bias\", [OC])\n", name);
    akg_buf_puts(&b, "  bind: y = output(0, [N, OC");
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_appendf(&b, ", O%s", SP[i]);
    akg_buf_puts(&b, "])\n");
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    const char *rows = "min(BN, OCG - oc)", *ks = "min(BK, ICG - ic)";
    long r[3];
    for (r[0] = 0; r[0] < s[0]; r[0]++)
        for (r[1] = 0; r[1] < s[1]; r[1]++)
            for (r[2] = 0; r[2] < s[2]; r[2]++) {
                /* the taps of this phase per dim: k0 + st * j for j < nt, reading the input
                 * at q + o0 - m * j (an arithmetic progression: tap k reaches the phase iff
                 * k * L = r + P modulo S, so the taps are st = S / gcd(L, S) apart and their
                 * offsets st * L / S apart) */
                long k0[3], st[3], o0[3], m[3];
                int nt[3] = {0, 0, 0};
                for (int i = 0; i < 3; i++) {
                    st[i] = s[i] / gcd(l[i], s[i]);
                    m[i] = st[i] * l[i] / s[i];
                    for (long kk = 0; kk < k[i]; kk++) {
                        long t = r[i] + p[i] - kk * l[i];
                        if (t - fdiv(t, s[i]) * s[i] == 0) {
                            if (!nt[i]) {
                                k0[i] = kk;
                                o0[i] = fdiv(t, s[i]);
                            }
                            nt[i]++;
                        }
                    }
                }
                akg_buf_appendf(
                    &b, "\n  # phase (od %% SD, oh %% SH, ow %% SW) = (%ld, %ld, %ld): ", r[0],
                    r[1], r[2]);
                if (nt[0] * nt[1] * nt[2] == 0)
                    akg_buf_appendf(&b, "no tap reaches it, the %s stored\n",
                                    bias ? "bias" : "zeros");
                else
                    akg_buf_appendf(&b, "%d tap%s\n", nt[0] * nt[1] * nt[2],
                                    nt[0] * nt[1] * nt[2] == 1 ? "" : "s");
                akg_buf_appendf(&b, "  %s\n  for n in range(0, N):\n", par);
                const char *qv[3] = {"qd", "qh", "qw"};
                for (int i = 0; i < 3; i++) {
                    akg_buf_appendf(&b, "%*s%s\n%*sfor %s in range(0, ", 4 + 2 * i, "", par,
                                    4 + 2 * i, "", qv[i]);
                    phase_extent(&b, i, r[i], s[i]);
                    akg_buf_puts(&b, i == 2 ? ", BW):\n" : "):\n");
                }
                akg_buf_appendf(&b, "          %s\n          for g in range(0, G):\n", par);
                akg_buf_appendf(&b, "            %s\n            for oc in range(0, OCG, BN):\n",
                                par);
                const char *I = "              ";
                akg_buf_appendf(&b, "%scols = min(BW, ", I);
                phase_extent(&b, 2, r[2], s[2]);
                akg_buf_puts(&b, " - qw)\n");
                akg_buf_appendf(&b,
                                "%sacc = alloc([%s, cols], dtype=f32, llm_hint=[\"fastest\", "
                                "\"accumulator\", \"init_zero\"])\n",
                                I, rows);
                if (nt[0] * nt[1] * nt[2] > 0) {
                    akg_buf_appendf(&b, "%sfor ic in range(0, ICG, BK):\n", I);
                    char J[64];
                    snprintf(J, sizeof J, "%s  ", I);
                    const char *tv[3] = {"jd", "jh", "jw"};
                    for (int i = 0; i < 3; i++)
                        if (nt[i] > 1) {
                            akg_buf_appendf(&b, "%sfor %s in range(0, %d):\n", J, tv[i], nt[i]);
                            strcat(J, "  ");
                        }
                    akg_buf_appendf(&b, "%stw = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n",
                                    J, ks, rows);
                    akg_buf_appendf(&b, "%sload(w[g * ICG + ic:g * ICG + ic + %s, oc:oc + %s", J,
                                    ks, rows);
                    for (int i = 0; i < 3; i++) {
                        akg_buf_appendf(&b, ", %ld", k0[i]);
                        if (nt[i] > 1)
                            akg_buf_appendf(&b, " + %ld * %s", st[i], tv[i]);
                    }
                    akg_buf_appendf(&b,
                                    "] -> tw)\n%stx = alloc([%s, cols], dtype=f32, "
                                    "llm_hint=[\"fast\"])\n",
                                    J, ks);
                    akg_buf_appendf(&b, "%sload(x[n, g * ICG + ic:g * ICG + ic + %s", J, ks);
                    char at[3][64];
                    for (int i = 0; i < 3; i++) {
                        akg_buf sb;
                        akg_buf_init(&sb, 64);
                        akg_buf_puts(&sb, qv[i]);
                        offset(&sb, o0[i]);
                        if (nt[i] > 1)
                            akg_buf_appendf(&sb, " - %ld * %s", m[i], tv[i]);
                        snprintf(at[i], sizeof at[i], "%s", sb.data ? sb.data : "");
                        akg_buf_free(&sb);
                    }
                    akg_buf_appendf(&b, ", %s, %s, %s:%s + cols] -> tx)\n", at[0], at[1], at[2],
                                    at[2]);
                    akg_buf_appendf(&b, "%sacc = gemm(tw, tx, acc, trans_a=True)\n", J);
                }
                const char *out = "acc";
                if (bias) {
                    akg_buf_appendf(&b, "%stb = alloc([%s, 1], dtype=f32)\n", I, rows);
                    akg_buf_appendf(&b, "%sload(bias[g * OCG + oc:g * OCG + oc + %s] -> tb)\n", I,
                                    rows);
                    out = "add(acc, tb)";
                }
                char rs[3][24];
                for (int i = 0; i < 3; i++) {
                    rs[i][0] = '\0';
                    if (r[i])
                        snprintf(rs[i], sizeof rs[i], " + %ld", r[i]);
                }
                akg_buf_appendf(&b, "%sstore(%s -> y[n, g * OCG + oc:g * OCG + oc + %s, ", I, out,
                                rows);
                for (int i = 0; i < 2; i++) {
                    if (s[i] == 1)
                        akg_buf_appendf(&b, "%s, ", qv[i]);
                    else
                        akg_buf_appendf(&b, "%ld * %s%s, ", s[i], qv[i], rs[i]);
                }
                if (s[2] == 1)
                    akg_buf_puts(&b, "qw:qw + cols])\n");
                else /* the step a literal: the CUDA C emitter wants a constant */
                    akg_buf_appendf(&b, "%ld * qw%s:%ld * qw%s + %ld * cols:%ld])\n", s[2], rs[2],
                                    s[2], rs[2], s[2], s[2]);
            }
    akg_buf_puts(&b, "}\n");
    return akg_buf_take(&b);
}
