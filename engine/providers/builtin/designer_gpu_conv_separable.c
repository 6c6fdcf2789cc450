/*
 * designer_gpu_conv_separable.c: the GPU design of a depthwise-separable convolution, the conv
 * rule's chain of two layers self.pointwise(self.depthwise(x)): a depthwise layer (one input
 * and one output channel per group: stride, padding, 'same', dilation, bias) then a pointwise
 * one (kernel 1, stride 1, no padding, one group, bias), written for the cuda backend from the
 * rule's design (its params name the layers and their geometry).
 *
 * The CPU design copies the padded input, runs the depthwise taps as vectors over a row and
 * packs weight panels for the pointwise GEMM (tiles written at indexed places): a GPU emitter
 * lowers none of that. This one is two launches through a scratch tensor t (the depthwise
 * output, [N, C, OD, OH, OW]):
 *  - depthwise: one program per [BC channels] x [BW output columns of a row] (the grid over
 *    (n, od, oh, BW columns, BC channels)); an f32 [BC, BW] tile accumulates, for each tap
 *    (kd, kh, kw), the weight column w0[c.., 0, kd, kh, kw] ([BC, 1]) times the input tile
 *    x[n, c.., id, ih, iw0 : ... : SW] ([BC, BW], strided columns with the stride a literal
 *    step): elementwise, no product (one channel per group has no K to reduce). Zero padding
 *    is the loads' bounds guards. The bias, a [BC, 1] tile, is added before the store to t.
 *  - pointwise: an implicit GEMM as designer_gpu_conv.c's with one tap: one program per [BN
 *    output channels] x [BW columns of a row], BK input channels at a time, the weight
 *    [BN, BK] times t's tile [BK, BW] with `gemm` into an f32 tile, the bias added, one store.
 *
 * Other chains (more layers, a depthwise multiplier, reflect padding, a second layer with a
 * window) keep the CPU's design.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "designer_gpu.h"

#define SP akg_gpu_conv_axis

/* Whether layer L is a forward layer of dims dims with zero padding. */
static int plain_layer(const cJSON *L, int dims)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(L, "name"));
    const char *pm = cJSON_GetStringValue(cJSON_GetObjectItem(L, "padding_mode"));
    return name && pm && !strcmp(pm, "zeros") && akg_gpu_conv_item(L, "transposed", 0, 1) == 0 &&
           akg_gpu_conv_item(L, "dims", 0, 0) == dims;
}

/* The grid loops over (n, od, oh, BW columns, and `last` over `bound` by `step`), each a
 * parallel grid axis; the body's indent is 14 spaces. */
static void grid(akg_buf *b, const char *last, const char *bound, const char *step)
{
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    const char *loops[5][2] = {{"n", "range(0, N)"},
                               {"od", "range(0, OD)"},
                               {"oh", "range(0, OH)"},
                               {"ow", "range(0, OW, BW)"},
                               {last, NULL}};
    for (int i = 0; i < 5; i++) {
        akg_buf_appendf(b, "%*s%s\n%*sfor %s in ", 2 + 2 * i, "", par, 2 + 2 * i, "", loops[i][0]);
        if (loops[i][1])
            akg_buf_appendf(b, "%s:\n", loops[i][1]);
        else
            akg_buf_appendf(b, "range(0, %s, %s):\n", bound, step);
    }
}

char *akg_gpu_conv_separable_sketch(const akg_design *d, const akg_reference *ref)
{
    const cJSON *layers = cJSON_GetObjectItem(d->params, "layers");
    const cJSON *in = cJSON_GetObjectItem(d->params, "input");
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != 2 || !cJSON_IsNumber(in) ||
        in->valueint < 0 || (size_t)in->valueint >= ref->n_forward_params)
        return NULL;
    const cJSON *L0 = cJSON_GetArrayItem(layers, 0), *L1 = cJSON_GetArrayItem(layers, 1);
    int dims = (int)akg_gpu_conv_item(L0, "dims", 0, 0);
    if (dims < 1 || dims > 3 || !plain_layer(L0, dims) || !plain_layer(L1, dims))
        return NULL;
    const char *n0 = cJSON_GetStringValue(cJSON_GetObjectItem(L0, "name"));
    const char *n1 = cJSON_GetStringValue(cJSON_GetObjectItem(L1, "name"));
    long c = akg_gpu_conv_item(L0, "in_channels", 0, 0),
         oc = akg_gpu_conv_item(L1, "out_channels", 0, 0);
    /* depthwise: C groups of one channel in and out; pointwise: C in, one group */
    if (c <= 0 || oc <= 0 || akg_gpu_conv_item(L0, "groups", 0, 0) != c ||
        akg_gpu_conv_item(L0, "out_channels", 0, 0) != c ||
        akg_gpu_conv_item(L1, "in_channels", 0, 0) != c ||
        akg_gpu_conv_item(L1, "groups", 0, 0) != 1)
        return NULL;
    int same = cJSON_IsTrue(cJSON_GetObjectItem(L0, "same"));
    long k[3], s[3], p[3], l[3];
    if (!akg_gpu_conv_window(L0, dims, same, k, s, p, l))
        return NULL;
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        if (at >= 0 && (akg_gpu_conv_item(L1, "kernel", at, 0) != 1 ||
                        akg_gpu_conv_item(L1, "stride", at, 0) != 1 ||
                        akg_gpu_conv_item(L1, "padding", at, 1) != 0))
            return NULL;
    }
    int bias0 = (int)akg_gpu_conv_item(L0, "bias", 0, 0),
        bias1 = (int)akg_gpu_conv_item(L1, "bias", 0, 0);
    akg_buf b;
    akg_buf_init(&b, 1 << 15);
    akg_buf_appendf(&b,
                    "# %s on a GPU: a depthwise layer then a pointwise one, two launches through "
                    "a scratch\n# tensor: the depthwise taps as [BC, 1] weight columns times "
                    "[BC, BW] input tiles\n# (elementwise, f32), then the pointwise product as "
                    "an implicit GEMM (tl.dot, BK input\n# channels at a time); zero padding is "
                    "the loads' bounds.\n",
                    d->op_name);
    akg_buf_appendf(&b,
                    "sketch %s {\n  symbols: N, ID, IH, IW, OD, OH, OW;\n  tensors: x[N, C, ID, "
                    "IH, IW]: f32; w0[C, U, KD, KH, KW]: f32; ",
                    d->op_name);
    if (bias0)
        akg_buf_puts(&b, "b0[C]: f32; ");
    akg_buf_puts(&b, "w1[OC, C, U, U, U]: f32; ");
    if (bias1)
        akg_buf_puts(&b, "b1[OC]: f32; ");
    akg_buf_puts(&b, "y[N, OC, OD, OH, OW]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: C = %ld, OC = %ld, U = 1, G0 = %ld, G1 = 1", c, oc, c);
    for (int i = 0; i < 3; i++)
        akg_buf_appendf(&b, ", K%s = %ld, S%s = %ld, P%s = %ld, L%s = %ld, T%s = 1", SP[i], k[i],
                        SP[i], s[i], SP[i], p[i], SP[i], l[i], SP[i]);
    akg_buf_puts(&b, ", BC = tune(16, 32, 8)");
    akg_gpu_conv_tile_tunes(&b, oc, c);
    akg_buf_puts(&b, ";\n");
    akg_gpu_conv_bind_input(&b, ref->forward_params[in->valueint].name, dims);
    /* the layers' weights and geometry, checked against the design's constants */
    akg_gpu_conv_bind_weight(&b, "w0", n0, "C, U", dims, "G0");
    akg_buf_appendf(&b, "\n  bind: w1 = weight(\"%s.weight\", [OC, C", n1);
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_puts(&b, ", U");
    akg_buf_appendf(&b, "]), G1 = attr(\"%s.groups\")\n", n1);
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        akg_buf_puts(&b, "  bind: ");
        if (at >= 0) {
            akg_buf_appendf(&b, "S%s = attr(\"%s.stride\", %d), L%s = attr(\"%s.dilation\", %d), ",
                            SP[i], n0, at, SP[i], n0, at);
            if (!same)
                akg_buf_appendf(&b, "P%s = attr(\"%s.padding\", %d), ", SP[i], n0, at);
            akg_buf_appendf(&b, "T%s = attr(\"%s.stride\", %d), ", SP[i], n1, at);
        }
        if (same)
            akg_buf_appendf(&b, "O%s = I%s\n", SP[i], SP[i]);
        else
            akg_gpu_conv_out_extent(&b, i);
    }
    if (bias0)
        akg_buf_appendf(&b, "  bind: b0 = weight(\"%s.bias\", [C])\n", n0);
    if (bias1)
        akg_buf_appendf(&b, "  bind: b1 = weight(\"%s.bias\", [OC])\n", n1);
    akg_buf_puts(&b, "  bind: y = output(0, [N, OC");
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_appendf(&b, ", O%s", SP[i]);
    akg_buf_puts(&b, "])\n\n");
    akg_buf_puts(&b, "  t = alloc([N, C, OD, OH, OW], dtype=f32, llm_hint=[\"slow\", "
                     "\"temp_workspace\"])\n");
    /* the depthwise layer */
    akg_buf_appendf(&b, "  # %s: depthwise, each tap a weight column times an input tile\n", n0);
    grid(&b, "c", "C", "BC");
    const char *I = "            ", *J = "                  ";
    const char *rows = "min(BC, C - c)", *cols = "min(BW, OW - ow)";
    akg_buf_appendf(&b,
                    "%sacc = alloc([%s, %s], dtype=f32, llm_hint=[\"fastest\", \"accumulator\", "
                    "\"init_zero\"])\n",
                    I, rows, cols);
    akg_buf_appendf(&b, "%sfor kd in range(0, KD):\n%s  for kh in range(0, KH):\n", I, I);
    akg_buf_appendf(&b, "%s    for kw in range(0, KW):\n", I);
    akg_buf_appendf(&b, "%stw = alloc([%s, 1], dtype=f32)\n", J, rows);
    akg_buf_appendf(&b, "%sload(w0[c:c + %s, 0, kd, kh, kw] -> tw)\n", J, rows);
    akg_buf_appendf(&b, "%stx = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n", J, rows, cols);
    akg_buf_appendf(&b,
                    "%sload(x[n, c:c + %s, od * SD - PD + kd * LD, oh * SH - PH + kh * LH, "
                    "ow * SW - PW + kw * LW:ow * SW - PW + kw * LW + %s * SW",
                    J, rows, cols);
    if (s[2] != 1) /* the step a literal: the CUDA C emitter wants a constant */
        akg_buf_appendf(&b, ":%ld", s[2]);
    akg_buf_appendf(&b, "] -> tx)\n%sacc = add(acc, mul(tw, tx))\n", J);
    const char *out = "acc";
    if (bias0) {
        akg_buf_appendf(&b, "%stb = alloc([%s, 1], dtype=f32)\n%sload(b0[c:c + %s] -> tb)\n", I,
                        rows, I, rows);
        out = "add(acc, tb)";
    }
    akg_buf_appendf(&b, "%sstore(%s -> t[n, c:c + %s, od, oh, ow:ow + %s])\n", I, out, rows, cols);
    /* the pointwise layer */
    akg_buf_appendf(&b, "  # %s: pointwise, an implicit GEMM over t's channels\n", n1);
    grid(&b, "oc", "OC", "BN");
    rows = "min(BN, OC - oc)";
    const char *ks = "min(BK, C - ic)";
    akg_buf_appendf(&b,
                    "%sacc = alloc([%s, %s], dtype=f32, llm_hint=[\"fastest\", \"accumulator\", "
                    "\"init_zero\"])\n",
                    I, rows, cols);
    akg_buf_appendf(&b, "%s@llm_hint(\"pipeline\")\n%sfor ic in range(0, C, BK):\n", I, I);
    akg_buf_appendf(&b, "%s  tw = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n", I, rows, ks);
    akg_buf_appendf(&b, "%s  load(w1[oc:oc + %s, ic:ic + %s, 0, 0, 0] -> tw)\n", I, rows, ks);
    akg_buf_appendf(&b, "%s  tx = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n", I, ks, cols);
    akg_buf_appendf(&b, "%s  load(t[n, ic:ic + %s, od, oh, ow:ow + %s] -> tx)\n", I, ks, cols);
    akg_buf_appendf(&b, "%s  acc = gemm(tw, tx, acc)\n", I);
    out = "acc";
    if (bias1) {
        akg_buf_appendf(&b, "%stb = alloc([%s, 1], dtype=f32)\n%sload(b1[oc:oc + %s] -> tb)\n", I,
                        rows, I, rows);
        out = "add(acc, tb)";
    }
    akg_buf_appendf(&b, "%sstore(%s -> y[n, oc:oc + %s, od, oh, ow:ow + %s])\n}\n", I, out, rows,
                    cols);
    return akg_buf_take(&b);
}
