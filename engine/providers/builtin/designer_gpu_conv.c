/*
 * designer_gpu_conv.c: the GPU design of a forward convolution (nn.Conv1d/2d/3d: groups,
 * stride, dilation, per-dim and 'same' padding, bias), written for the cuda backend from
 * the conv rule's design (its params name the layer and its geometry).
 *
 * The CPU design packs weight panels and gathers input rows into tiles (`pb[...] -> ...`,
 * `rows[:, None]`): a GPU emitter lowers neither (its tiles are values, not memory). This
 * one is an implicit GEMM the emitters lower as written. The tensors are viewed in 3-D form
 * (x[N, C, ID, IH, IW], w[OC, ICG, KD, KH, KW], y[N, OC, OD, OH, OW]; a 1-D or 2-D layer's
 * leading dims are 1). One program per output row piece and channel block: the grid runs
 * over (n, od, oh, BW output columns, group, BN output channels of the group); the program
 * keeps an f32 [BN, BW] accumulator and, for each BK-slice of the group's input channels
 * and each tap (kd, kh, kw), loads the weight tile w[oc.., ic.., kd, kh, kw] ([BN, BK]) and
 * the input tile x[n, ic.., id, ih, iw0 : ... : SW] ([BK, BW], the columns a strided slice
 * with the layer's stride as a literal step) and accumulates their product with `gemm`
 * (tl.dot: every side a constant of at least 16; channel counts below 16 are masked lanes
 * of a 16-wide side). Zero padding is the loads' bounds guards: a tap's row or column
 * outside the input reads 0. The bias is a [BN, 1] tile added before the masked store.
 * K is therefore taps x input channels per group, walked as BK channels per tap. A layer of
 * more than one tap first copies its weight in tap-major order (wp[KD, KH, KW, OC, ICG], one
 * program per output channel and tap), so that a tap's weight tile is rows of contiguous
 * input channels rather than words KD * KH * KW apart.
 *
 * Reflect padding (1-D and 2-D, not 'same'): a first stage writes the padded copy xp of the
 * input (a scratch tensor: rows mirrored by three launches over the top, middle and bottom
 * rows, each row's middle one block and its mirrored edge columns one at a time); the
 * product then reads xp with no padding.
 *
 * Transposed layers are designer_gpu_conv_transposed.c's (the gather form, a launch per phase
 * of the output), a depthwise layer then a pointwise one designer_gpu_conv_separable.c's.
 * Not here (the CPU's design stays, and the emitters say what stops it): reflect padding of
 * 3-D layers or with 'same', other chains of layers, depthwise layers (their CPU design is
 * direct and lowers as it is).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "designer_gpu.h"

const char *const akg_gpu_conv_axis[3] = {"D", "H", "W"};
#define SP akg_gpu_conv_axis

long akg_gpu_conv_item(const cJSON *layer, const char *key, int i, long fallback)
{
    const cJSON *v = cJSON_GetObjectItem(layer, key);
    if (cJSON_IsArray(v))
        v = cJSON_GetArrayItem(v, i);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : fallback;
}

int akg_gpu_conv_window(const cJSON *layer, int dims, int same, long k[3], long s[3], long p[3],
                        long l[3])
{
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        k[i] = at < 0 ? 1 : akg_gpu_conv_item(layer, "kernel", at, 1);
        s[i] = at < 0 ? 1 : akg_gpu_conv_item(layer, "stride", at, 1);
        l[i] = at < 0 ? 1 : akg_gpu_conv_item(layer, "dilation", at, 1);
        p[i] = at < 0 ? 0 : akg_gpu_conv_item(layer, "padding", at, 0);
        if (same)
            p[i] = l[i] * (k[i] - 1) / 2;
        if (k[i] < 1 || s[i] < 1 || l[i] < 1 || p[i] < 0 || (same && s[i] != 1))
            return 0;
    }
    return 1;
}

void akg_gpu_conv_tile_tunes(akg_buf *b, long ocg, long icg)
{
    long bn = ocg <= 16 ? 16 : ocg <= 32 ? 32 : 64;
    long bk = icg <= 16 ? 16 : 32;
    akg_buf_appendf(b, ", BN = tune(%ld%s), BW = tune(32, 64, 16), BK = tune(%ld%s)", bn,
                    bn == 64   ? ", 32, 128"
                    : bn == 32 ? ", 64, 16"
                               : ", 32",
                    bk, bk == 16 ? ", 32" : ", 16, 64");
}

void akg_gpu_conv_bind_input(akg_buf *b, const char *param, int dims)
{
    akg_buf_appendf(b, "  bind: x = input(\"%s\", [N, C", param);
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_appendf(b, ", I%s", SP[i]);
    akg_buf_puts(b, "])");
    for (int i = 0; i < 3 - dims; i++)
        akg_buf_appendf(b, ", I%s = 1", SP[i]);
}

void akg_gpu_conv_bind_weight(akg_buf *b, const char *var, const char *layer, const char *lead,
                              int dims, const char *groups)
{
    akg_buf_appendf(b, "\n  bind: %s = weight(\"%s.weight\", [%s", var, layer, lead);
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_appendf(b, ", K%s", SP[i]);
    akg_buf_appendf(b, "]), %s = attr(\"%s.groups\")", groups, layer);
}

void akg_gpu_conv_out_extent(akg_buf *b, int i)
{
    akg_buf_appendf(b, "O%s = (I%s + 2 * P%s - L%s * (K%s - 1) - 1) // S%s + 1\n", SP[i], SP[i],
                    SP[i], SP[i], SP[i], SP[i]);
}

/* Reflect padding: the padded copy xp[N, C, 1, HP, WP] of x, one program per padded row
 * (three launches: the top rows mirrored, the rows themselves, the bottom rows mirrored),
 * the row's middle one block and its PW mirrored columns each side one at a time. */
static void reflect_copy(akg_buf *b)
{
    static const char *const sec[3][3] = {{"0", "PH", "PH - hp"},
                                          {"PH", "PH + IH", "hp - PH"},
                                          {"PH + IH", "HP", "2 * IH + PH - 2 - hp"}};
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    akg_buf_puts(b,
                 "  # reflect padding: the padded copy of the input, then the product reads it\n");
    akg_buf_puts(b, "  xp = alloc([N, C, ID, HP, WP], dtype=f32, llm_hint=[\"slow\"])\n");
    for (int i = 0; i < 3; i++) {
        const char *ih = sec[i][2];
        akg_buf_appendf(b, "  %s\n  for n in range(0, N):\n    %s\n    for c in range(0, C):\n",
                        par, par);
        akg_buf_appendf(b, "      %s\n      for hp in range(%s, %s):\n", par, sec[i][0], sec[i][1]);
        akg_buf_appendf(
            b, "        t = alloc([IW], dtype=f32)\n        load(x[n, c, 0, %s, 0:IW] -> t)\n", ih);
        akg_buf_puts(b, "        store(t -> xp[n, c, 0, hp, PW:PW + IW])\n");
        akg_buf_puts(b, "        for j in range(0, PW):\n          u = alloc([1], dtype=f32)\n");
        akg_buf_appendf(b, "          load(x[n, c, 0, %s, PW - j:PW - j + 1] -> u)\n", ih);
        akg_buf_puts(b, "          store(u -> xp[n, c, 0, hp, j:j + 1])\n");
        akg_buf_puts(b, "          v = alloc([1], dtype=f32)\n");
        akg_buf_appendf(b, "          load(x[n, c, 0, %s, IW - 2 - j:IW - 1 - j] -> v)\n", ih);
        akg_buf_puts(b, "          store(v -> xp[n, c, 0, hp, PW + IW + j:PW + IW + j + 1])\n");
    }
}

/* The weight in tap-major order, wp[KD, KH, KW, OC, ICG]: the product's weight tile of a tap,
 * [BN output channels, BK input channels], is then BN rows of BK contiguous elements (in w a
 * tap's elements lie KD * KH * KW apart: a tile of scattered words, which had bound the 3x3
 * layers' time on an H200). One program per output channel and tap copies its ICG weights. */
static void weight_repack(akg_buf *b)
{
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    akg_buf_puts(b,
                 "  # the weight in tap-major order: a tap's [BN, BK] tile is rows of contiguous "
                 "input channels\n");
    akg_buf_puts(b, "  wp = alloc([KD, KH, KW, OC, ICG], dtype=f32, llm_hint=[\"slow\"])\n");
    akg_buf_appendf(b, "  %s\n  for o in range(0, OC):\n    %s\n    for kd in range(0, KD):\n", par,
                    par);
    akg_buf_appendf(b, "      %s\n      for kh in range(0, KH):\n", par);
    akg_buf_appendf(b, "        %s\n        for kw in range(0, KW):\n", par);
    akg_buf_puts(b, "          tp = alloc([ICG], dtype=f32)\n");
    akg_buf_puts(b, "          load(w[o, 0:ICG, kd, kh, kw] -> tp)\n");
    akg_buf_puts(b, "          store(tp -> wp[kd, kh, kw, o, 0:ICG])\n");
}

/* The sketch, or NULL (no memory, or a layer this writer does not say: see the comment). */
char *akg_gpu_conv_sketch(const akg_design *d, const akg_reference *ref)
{
    const cJSON *layers = cJSON_GetObjectItem(d->params, "layers");
    const cJSON *in = cJSON_GetObjectItem(d->params, "input");
    if (cJSON_IsArray(layers) && cJSON_GetArraySize(layers) == 2)
        return akg_gpu_conv_separable_sketch(d, ref);
    if (!cJSON_IsArray(layers) || cJSON_GetArraySize(layers) != 1 || !cJSON_IsNumber(in) ||
        in->valueint < 0 || (size_t)in->valueint >= ref->n_forward_params)
        return NULL;
    const cJSON *L = cJSON_GetArrayItem(layers, 0);
    if (akg_gpu_conv_item(L, "transposed", 0, 0) == 1)
        return akg_gpu_conv_transposed_sketch(d, ref);
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(L, "name"));
    const char *algo = cJSON_GetStringValue(cJSON_GetObjectItem(L, "algorithm"));
    const char *pm = cJSON_GetStringValue(cJSON_GetObjectItem(L, "padding_mode"));
    int dims = (int)akg_gpu_conv_item(L, "dims", 0, 0);
    int same = cJSON_IsTrue(cJSON_GetObjectItem(L, "same"));
    long groups = akg_gpu_conv_item(L, "groups", 0, 1),
         ic = akg_gpu_conv_item(L, "in_channels", 0, 0),
         oc = akg_gpu_conv_item(L, "out_channels", 0, 0);
    if (!name || !algo || strcmp(algo, "implicit_gemm") ||
        akg_gpu_conv_item(L, "transposed", 0, 1) || !pm ||
        (strcmp(pm, "zeros") && strcmp(pm, "reflect")) || dims < 1 || dims > 3 || groups < 1 ||
        ic % groups || oc % groups || ic <= 0 || oc <= 0)
        return NULL;
    /* the window in 3-D order; 'same' pads L * (K - 1) / 2 before (PyTorch's split) */
    long k[3], s[3], p[3], l[3];
    if (!akg_gpu_conv_window(L, dims, same, k, s, p, l))
        return NULL;
    /* reflect: 1-D and 2-D layers with symmetric padding (a padded copy of the rows) */
    int reflect = !strcmp(pm, "reflect");
    if (reflect && (dims == 3 || same))
        return NULL;
    long icg = ic / groups, ocg = oc / groups;
    int bias = (int)akg_gpu_conv_item(L, "bias", 0, 0);
    akg_buf b;
    akg_buf_init(&b, 1 << 13);
    akg_buf_appendf(&b,
                    "# %s on a GPU: implicit GEMM, one program per BW output columns of a row "
                    "x BN output\n# channels of a group; per BK input channels and tap, the "
                    "weight [BN, BK] times the\n# input [BK, BW] (strided columns) into an f32 "
                    "tile; zero padding is the loads' bounds.\n",
                    d->op_name);
    akg_buf_appendf(&b,
                    "sketch %s {\n  symbols: N, C, ID, IH, IW, %sOD, OH, OW;\n  tensors: x[N, C, "
                    "ID, IH, IW]: f32; w[OC, ICG, KD, KH, KW]: f32; ",
                    d->op_name, reflect ? "HP, WP, " : "");
    if (bias)
        akg_buf_puts(&b, "bias[OC]: f32; ");
    akg_buf_puts(&b, "y[N, OC, OD, OH, OW]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: %sG = %ld, OC = %ld, ICG = %ld, OCG = %ld",
                    reflect ? "RF = 1, " : "", groups, oc, icg, ocg);
    for (int i = 0; i < 3; i++)
        akg_buf_appendf(&b, ", K%s = %ld, S%s = %ld, P%s = %ld, L%s = %ld", SP[i], k[i], SP[i],
                        s[i], SP[i], p[i], SP[i], l[i]);
    if (ocg >= 48 && icg >= 32 && s[2] == 1)
        /* measured on an H200 (bench/results/2026-12-03-h200-conv-tiles.json): with 48 or more
         * output and 32 or more input channels a group, 64 columns by 64 channels a step took
         * 0.45-0.55 of the 32 x 32 tiles' time in every such layer of the suite (3x3, 3x7, 5x3,
         * 1-D k5, 1x1); with fewer channels or strided columns it was slower */
        akg_buf_puts(&b, ", BN = tune(64, 32, 128), BW = tune(64, 32, 16), BK = tune(64, 32, 16)");
    else
        akg_gpu_conv_tile_tunes(&b, ocg, icg);
    akg_buf_puts(&b, ";\n");
    /* bind: the input in its own rank, the layer's weight (checked against the design's
     * constants), the output's size */
    akg_gpu_conv_bind_input(&b, ref->forward_params[in->valueint].name, dims);
    akg_gpu_conv_bind_weight(&b, "w", name, "OC, ICG", dims, "G");
    if (reflect)
        akg_buf_appendf(&b, ", RF = attr(\"%s.padding_mode\", \"reflect\")", name);
    akg_buf_puts(&b, "\n");
    for (int i = 0; i < 3; i++) {
        int at = i - (3 - dims);
        akg_buf_puts(&b, "  bind: ");
        if (at >= 0) {
            akg_buf_appendf(&b, "S%s = attr(\"%s.stride\", %d), L%s = attr(\"%s.dilation\", %d), ",
                            SP[i], name, at, SP[i], name, at);
            if (!same)
                akg_buf_appendf(&b, "P%s = attr(\"%s.padding\", %d), ", SP[i], name, at);
        }
        if (same)
            akg_buf_appendf(&b, "O%s = I%s\n", SP[i], SP[i]);
        else
            akg_gpu_conv_out_extent(&b, i);
    }
    if (reflect)
        akg_buf_puts(&b, "  bind: HP = IH + 2 * PH, WP = IW + 2 * PW\n");
    if (bias)
        akg_buf_appendf(&b, "  bind: bias = weight(\"%s.bias\", [OC])\n", name);
    akg_buf_puts(&b, "  bind: y = output(0, [N, OC");
    for (int i = 3 - dims; i < 3; i++)
        akg_buf_appendf(&b, ", O%s", SP[i]);
    akg_buf_puts(&b, "])\n\n");
    if (reflect)
        reflect_copy(&b);
    const char *par = "@llm_hint(\"parallel\", \"grididx\")";
    int repack = k[0] * k[1] * k[2] > 1;
    if (repack)
        weight_repack(&b);
    const char *loops[6][2] = {{"n", "range(0, N)"},   {"od", "range(0, OD)"},
                               {"oh", "range(0, OH)"}, {"ow", "range(0, OW, BW)"},
                               {"g", "range(0, G)"},   {"oc", "range(0, OCG, BN)"}};
    char ind[64];
    for (int i = 0; i < 6; i++) {
        snprintf(ind, sizeof ind, "%*s", 2 + 2 * i, "");
        akg_buf_appendf(&b, "%s%s\n%sfor %s in %s:\n", ind, par, ind, loops[i][0], loops[i][1]);
    }
    const char *rows = "min(BN, OCG - oc)", *cols = "min(BW, OW - ow)", *ks = "min(BK, ICG - ic)";
    const char *I = "              ";
    akg_buf_appendf(&b,
                    "%sacc = alloc([%s, %s], dtype=f32, llm_hint=[\"fastest\", \"accumulator\", "
                    "\"init_zero\"])\n",
                    I, rows, cols);
    akg_buf_appendf(&b, "%sfor ic in range(0, ICG, BK):\n", I);
    akg_buf_appendf(&b, "%s  for kd in range(0, KD):\n%s    for kh in range(0, KH):\n", I, I);
    akg_buf_appendf(&b, "%s      for kw in range(0, KW):\n", I);
    const char *J = "                      ";
    akg_buf_appendf(&b, "%stw = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n", J, rows, ks);
    if (repack)
        akg_buf_appendf(
            &b, "%sload(wp[kd, kh, kw, g * OCG + oc:g * OCG + oc + %s, ic:ic + %s] -> tw)\n", J,
            rows, ks);
    else
        akg_buf_appendf(&b,
                        "%sload(w[g * OCG + oc:g * OCG + oc + %s, ic:ic + %s, kd, kh, kw] -> tw)\n",
                        J, rows, ks);
    akg_buf_appendf(&b, "%stx = alloc([%s, %s], dtype=f32, llm_hint=[\"fast\"])\n", J, ks, cols);
    akg_buf_appendf(&b,
                    "%sload(%s[n, g * ICG + ic:g * ICG + ic + %s, od * SD - %s + kd * LD, "
                    "oh * SH - %s + kh * LH, ow * SW - %s + kw * LW:ow * SW - %s + kw * LW + "
                    "%s * SW",
                    J, reflect ? "xp" : "x", ks, reflect ? "0" : "PD", reflect ? "0" : "PH",
                    reflect ? "0" : "PW", reflect ? "0" : "PW", cols);
    if (s[2] != 1) /* the step a literal: the CUDA C emitter wants a constant */
        akg_buf_appendf(&b, ":%ld", s[2]);
    akg_buf_appendf(&b, "] -> tx)\n%sacc = gemm(tw, tx, acc)\n", J);
    const char *out = "acc";
    if (bias) {
        akg_buf_appendf(&b, "%stb = alloc([%s, 1], dtype=f32)\n", I, rows);
        akg_buf_appendf(&b, "%sload(bias[g * OCG + oc:g * OCG + oc + %s] -> tb)\n", I, rows);
        out = "add(acc, tb)";
    }
    akg_buf_appendf(&b,
                    "%sstore(%s -> y[n, g * OCG + oc:g * OCG + oc + %s, od, oh, ow:ow + %s])\n}\n",
                    I, out, rows, cols);
    return akg_buf_take(&b);
}
