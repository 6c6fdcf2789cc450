/*
 * rules_conv.c: the built-in Designer's rules for the convolution family.
 *
 * forward must apply one convolution layer (nn.Conv1d/2d/3d or
 * nn.ConvTranspose1d/2d/3d made in __init__) to a forward input, or a chain
 * of them (self.pointwise(self.depthwise(x))). Each layer's geometry (kernel,
 * stride, padding incl. 'same' and reflect, dilation, groups, bias) is read
 * from its constructor call through rule_util and the probe; params name the
 * layers (ModelNew builds the same layers from the same constructor
 * arguments, so state_dict keys match) and the algorithm per layer: an
 * implicit GEMM with the input gathered into packed panels, or a direct
 * vectorised loop for depthwise layers (one input channel per group).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"

#define MAX_LAYERS 4

typedef struct {
    const akg_ref_layer *layer;
    int dims, transposed;
    long in_ch, out_ch, groups;
    long kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
    int same, reflect, bias;
    int direct;
} conv_layer;

static int conv_kind(const char *op, int *dims, int *transposed)
{
    static const char *names[] = {"conv1d", "conv2d", "conv3d", "conv_transpose1d",
                                  "conv_transpose2d", "conv_transpose3d"};
    for (int i = 0; i < 6; i++)
        if (op && !strcmp(op, names[i])) {
            *dims = i % 3 + 1;
            *transposed = i >= 3;
            return 1;
        }
    return 0;
}

static int read_long(const akg_reference *ref, const cJSON *probe, const akg_expr *e, long fallback,
                     long *out)
{
    if (!e) {
        *out = fallback;
        return 0;
    }
    akg_scalar s;
    memset(&s, 0, sizeof s);
    if (akg_rule_scalar(ref, probe, e, "v", &s, NULL))
        return -1;
    *out = (long)s.value;
    return 0;
}

static int read_list(const akg_reference *ref, const cJSON *probe, const akg_expr *e, int n,
                     long fallback, long *out)
{
    for (int i = 0; i < n; i++)
        out[i] = fallback;
    if (!e)
        return 0;
    return akg_rule_int_list(ref, probe, e, out, n, n) == n ? 0 : -1;
}

/* Reads layer's constructor: nn.ConvNd(in, out, kernel_size, stride, padding,
 * [output_padding (transposed)], dilation/groups..., bias, [dilation], padding_mode). */
static int read_layer(const akg_reference *ref, const cJSON *probe, const akg_ref_layer *layer,
                      conv_layer *c, akg_range *where, char *err, size_t errlen)
{
    const akg_expr *ctor = layer->ctor;
    int n = c->dims;
    if (!ctor)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a convolution layer whose constructor cannot be read");
    /* the probe's weight shape ([OC, IC/G, k...], transposed [IC, OC/G, k...]) gives the
     * window when the constructor's value is a tuple argument */
    char wname[160];
    snprintf(wname, sizeof wname, "%s.weight", layer->name);
    const cJSON *wdesc = akg_rule_probe_param(probe, wname);
    if (read_list(ref, probe, akg_rule_arg(ctor, 2, "kernel_size"), n, -1, c->kernel)) {
        for (int i = 0; i < n; i++)
            c->kernel[i] = akg_rule_dim(wdesc, 2 + i);
    }
    if (read_list(ref, probe, akg_rule_arg(ctor, 3, "stride"), n, 1, c->stride))
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a convolution stride that cannot be read");
    if (read_long(ref, probe, akg_rule_arg(ctor, 0, "in_channels"), -1, &c->in_ch) ||
        read_long(ref, probe, akg_rule_arg(ctor, 1, "out_channels"), -1, &c->out_ch) ||
        c->in_ch <= 0 || c->out_ch <= 0 || c->kernel[0] <= 0)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a convolution whose channels, kernel or stride cannot be read");
    const akg_expr *pad = akg_rule_arg(ctor, 4, "padding");
    const char *str = NULL;
    akg_scalar s;
    memset(&s, 0, sizeof s);
    if (pad && akg_rule_scalar(ref, probe, pad, "padding", &s, &str) == AKG_OK && str) {
        if (strcmp(str, "same") && strcmp(str, "valid"))
            return akg_rule_unsupported(ref, pad->range, where, err, errlen, "a padding string");
        c->same = !strcmp(str, "same");
        for (int i = 0; i < n; i++)
            c->padding[i] = 0;
    } else if (read_list(ref, probe, pad, n, 0, c->padding)) {
        /* a tuple argument: ModelNew reads the layer's padding at run time */
        for (int i = 0; i < n; i++)
            c->padding[i] = -1;
    }
    size_t next = 5;
    if (c->transposed) {
        if (read_list(ref, probe, akg_rule_arg(ctor, 5, "output_padding"), n, 0,
                      c->output_padding))
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "an output_padding that cannot be read");
        next = 6;
        /* ConvTranspose: (..., output_padding, groups, bias, dilation, padding_mode) */
        if (read_long(ref, probe, akg_rule_arg(ctor, next, "groups"), 1, &c->groups) ||
            read_list(ref, probe, akg_rule_arg(ctor, next + 2, "dilation"), n, 1, c->dilation))
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "groups or dilation that cannot be read");
    } else {
        /* Conv: (..., padding, dilation, groups, bias, padding_mode) */
        if (read_list(ref, probe, akg_rule_arg(ctor, next, "dilation"), n, 1, c->dilation) ||
            read_long(ref, probe, akg_rule_arg(ctor, next + 1, "groups"), 1, &c->groups))
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "dilation or groups that cannot be read");
    }
    /* the probe's parameters say whether the layer has a bias */
    char pname[160];
    snprintf(pname, sizeof pname, "%s.bias", layer->name);
    c->bias = akg_rule_probe_param(probe, pname) != NULL;
    const akg_expr *mode = akg_rule_arg(ctor, c->transposed ? 9 : 8, "padding_mode");
    if (mode) {
        str = NULL;
        /* a constructor argument: the kernel reads the layer's padding_mode at run time
         * (zeros or reflect; the harness's ModelNew raises on others) */
        if (akg_rule_scalar(ref, probe, mode, "padding_mode", &s, &str) != AKG_OK || !str)
            str = "zeros";
        if (!strcmp(str, "reflect"))
            c->reflect = 1;
        else if (strcmp(str, "zeros"))
            return akg_rule_unsupported(ref, mode->range, where, err, errlen,
                                        "padding_mode other than zeros or reflect");
    }
    if (c->groups <= 0 || c->in_ch % c->groups || c->out_ch % c->groups)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "groups that do not divide the channels");
    if (c->reflect && c->transposed)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a transposed convolution with reflect padding");
    /* depthwise (one input channel per group): a direct loop beats a GEMM with M = 1 */
    c->direct = !c->transposed && !c->reflect && c->in_ch / c->groups == 1;
    return 0;
}

static const char *letters[3][3] = {{"L"}, {"H", "W"}, {"D", "H", "W"}};

/* One layer's loops: src (tensor or tile) -> dst. */
static void layer_sketch(akg_buf *b, const conv_layer *c, int li, const char *src, const char *dst)
{
    int n = c->dims;
    const char *const *L = letters[n - 1];
    const char *last = L[n - 1];
    akg_buf_appendf(b, "  # layer %d (self.%s): %s%dd, %s\n", li, c->layer->name,
                    c->transposed ? "transposed conv" : "conv", n,
                    c->direct ? "direct: one input channel per group, vectorised along the output row"
                              : "implicit GEMM: weights [OCG, ICG*taps] times input panels "
                                "gathered per tap");
    akg_buf_puts(b, "  @llm_hint(\"parallel\", \"coreidx\")\n");
    akg_buf_appendf(b, "  for n in range(0, N%d):\n", li);
    const char *ind = "    ";
    if (c->direct) {
        akg_buf_appendf(b, "%sfor c in range(0, OC%d):\n", ind, li);
        akg_buf_appendf(b, "%s  b%d = alloc([1], llm_hint=[\"fastest\"])\n", ind, li);
        if (c->bias)
            akg_buf_appendf(b, "%s  load(bias%d[c:c+1] -> b%d)\n", ind, li, li);
        else
            akg_buf_appendf(b, "%s  load(zero[c:c+1] -> b%d)\n", ind, li);
        /* loops over the leading output dims */
        char pre[64] = "";
        for (int i = 0; i < n - 1; i++) {
            akg_buf_appendf(b, "%s  %*sfor o%s in range(0, O%s%d):\n", ind, 2 * i, "", L[i], L[i], li);
            size_t l = strlen(pre);
            snprintf(pre + l, sizeof pre - l, "o%s, ", L[i]);
        }
        int depth = n - 1;
        akg_buf_appendf(b, "%s  %*sfor q0 in range(0, O%s%d, OWB):\n", ind, 2 * depth, "", last, li);
        akg_buf_appendf(b, "%s  %*s  acc = alloc([OWB], llm_hint=[\"fastest\", \"accumulator\", "
                           "\"init_zero\"])\n", ind, 2 * depth, "");
        char taps[64] = "";
        for (int i = 0; i < n; i++) {
            akg_buf_appendf(b, "%s  %*s  for k%s in range(0, K%s%d):\n", ind, 2 * (depth + i), "",
                            L[i], L[i], li);
            size_t l = strlen(taps);
            snprintf(taps + l, sizeof taps - l, ", k%s", L[i]);
        }
        const char *in2 = "      ";
        int d2 = 2 * (depth + n);
        akg_buf_appendf(b, "%s%*s  t = alloc([OWB], llm_hint=[\"fast\"])\n", in2, d2, "");
        akg_buf_appendf(b, "%s%*s  load(%s[n, c // (OC%d // IC%d), ", in2, d2, "", src, li, li);
        for (int i = 0; i < n - 1; i++)
            akg_buf_appendf(b, "o%s*S%s%d-P%s%d+k%s*DL%s%d, ", L[i], L[i], li, L[i], li, L[i], L[i], li);
        akg_buf_appendf(b, "q0*S%s%d-P%s%d+k%s*DL%s%d:q0*S%s%d-P%s%d+k%s*DL%s%d+OWB*S%s%d:S%s%d] -> t)\n",
                        last, li, last, li, last, last, li, last, li, last, li, last, last, li, last,
                        li, last, li);
        akg_buf_appendf(b, "%s%*s  wt = alloc([1], llm_hint=[\"fastest\"])\n", in2, d2, "");
        akg_buf_appendf(b, "%s%*s  load(w%d[c, 0%s] -> wt)\n", in2, d2, "", li, taps);
        akg_buf_appendf(b, "%s%*s  @llm_hint(\"vectorize\", \"simd\")\n", in2, d2, "");
        akg_buf_appendf(b, "%s%*s  acc = add(acc, mul(t, wt))\n", in2, d2, "");
        akg_buf_appendf(b, "%s  %*s  acc = add(acc, b%d)\n", ind, 2 * depth, "", li);
        akg_buf_appendf(b, "%s  %*s  store(acc -> %s[n, c, %sq0:q0+OWB])\n", ind, 2 * depth, "", dst,
                        pre);
        return;
    }
    akg_buf_appendf(b, "%sfor g in range(0, G%d):\n", ind, li);
    akg_buf_appendf(b, "%s  for m0 in range(0, OC%d // G%d, MC):\n", ind, li, li);
    char pre[64] = "";
    for (int i = 0; i < n - 1; i++) {
        akg_buf_appendf(b, "%s    %*sfor o%s in range(0, O%s%d):\n", ind, 2 * i, "", L[i], L[i], li);
        size_t l = strlen(pre);
        snprintf(pre + l, sizeof pre - l, "o%s, ", L[i]);
    }
    int depth = n - 1;
    char sp[32];
    snprintf(sp, sizeof sp, "%*s", 2 * depth, "");
    akg_buf_appendf(b, "%s    %sfor q0 in range(0, O%s%d, NC):\n", ind, sp, last, li);
    akg_buf_appendf(b, "%s    %s  acc = alloc([MC, NC], llm_hint=[\"fast\", \"accumulator\", "
                       "\"init_zero\"])\n", ind, sp);
    char taps[64] = "";
    for (int i = 0; i < n; i++) {
        akg_buf_appendf(b, "%s    %s  %*sfor k%s in range(0, K%s%d):\n", ind, sp, 2 * i, "", L[i],
                        L[i], li);
        size_t l = strlen(taps);
        snprintf(taps + l, sizeof taps - l, ", k%s", L[i]);
    }
    char in2[64];
    snprintf(in2, sizeof in2, "%s    %s  %*s", ind, sp, 2 * n, "");
    if (c->transposed) {
        /* output o takes input (o + P - k*DL) / S when that divides */
        akg_buf_appendf(b, "%sif (q0 + P%s%d - k%s*DL%s%d) %% S%s%d == 0:\n", in2, last, li, last,
                        last, li, last, li);
        size_t l = strlen(in2);
        snprintf(in2 + l, sizeof in2 - l, "  ");
    }
    akg_buf_appendf(b, "%sfor c0 in range(0, IC%d // G%d, KC):\n", in2, li, li);
    if (c->transposed) {
        akg_buf_appendf(b, "%s  pa = alloc([KC, MC], llm_hint=[\"fast\"])\n", in2);
        akg_buf_appendf(b, "%s  load(w%d[g*(IC%d//G%d)+c0:g*(IC%d//G%d)+c0+KC, m0:m0+MC%s] -> pa)\n",
                        in2, li, li, li, li, li, taps);
    } else {
        akg_buf_appendf(b, "%s  pa = alloc([MC, KC], llm_hint=[\"fast\"])\n", in2);
    }
    if (!c->transposed)
        akg_buf_appendf(b, "%s  load(w%d[g*(OC%d//G%d)+m0:g*(OC%d//G%d)+m0+MC, c0:c0+KC%s] -> pa)\n",
                        in2, li, li, li, li, li, taps);
    akg_buf_appendf(b, "%s  pb = alloc([KC, NC], llm_hint=[\"fast\"])\n", in2);
    akg_buf_appendf(b, "%s  load(%s[n, g*(IC%d//G%d)+c0:g*(IC%d//G%d)+c0+KC, ", in2, src, li, li, li,
                    li);
    for (int i = 0; i < n - 1; i++) {
        if (c->transposed)
            akg_buf_appendf(b, "(o%s+P%s%d-k%s*DL%s%d)//S%s%d, ", L[i], L[i], li, L[i], L[i], li,
                            L[i], li);
        else
            akg_buf_appendf(b, "o%s*S%s%d-P%s%d+k%s*DL%s%d, ", L[i], L[i], li, L[i], li, L[i], L[i],
                            li);
    }
    if (c->transposed)
        akg_buf_appendf(b, "(q0+P%s%d-k%s*DL%s%d)//S%s%d:(q0+P%s%d-k%s*DL%s%d)//S%s%d+NC] -> pb)\n",
                        last, li, last, last, li, last, li, last, li, last, last, li, last, li);
    else
        akg_buf_appendf(b, "q0*S%s%d-P%s%d+k%s*DL%s%d:q0*S%s%d-P%s%d+k%s*DL%s%d+NC*S%s%d:S%s%d] -> pb)\n",
                        last, li, last, li, last, last, li, last, li, last, li, last, last, li, last,
                        li, last, li);
    akg_buf_appendf(b, "%s  @llm_hint(\"vectorize\", \"simd\")\n", in2);
    akg_buf_appendf(b, "%s  gemm(pa, pb, acc%s)\n", in2, c->transposed ? ", trans_a=True" : "");
    if (c->bias) {
        akg_buf_appendf(b, "%s    %s  bt = alloc([MC, 1], llm_hint=[\"fastest\"])\n", ind, sp);
        akg_buf_appendf(b, "%s    %s  load(bias%d[g*(OC%d//G%d)+m0:g*(OC%d//G%d)+m0+MC] -> bt)\n",
                        ind, sp, li, li, li, li, li);
        akg_buf_appendf(b, "%s    %s  acc = add(acc, bt)\n", ind, sp);
    }
    akg_buf_appendf(b, "%s    %s  store(acc -> %s[n, g*(OC%d//G%d)+m0:g*(OC%d//G%d)+m0+MC, %sq0:q0+NC])\n",
                    ind, sp, dst, li, li, li, li, pre);
}

static char *conv_sketch(const char *name, const conv_layer *layers, int n_layers, int retry)
{
    akg_buf b;
    akg_buf_init(&b, 1 << 18);
    akg_buf_appendf(&b, "# %s: %d convolution layer%s; sizes, strides, paddings and dilations are\n"
                        "# run-time symbols (ModelNew reads them from its layers and inputs).\n",
                    name, n_layers, n_layers > 1 ? "s, each writing the next one's input" : "");
    akg_buf_appendf(&b, "sketch %s {\n  symbols: ", name);
    int first = 1;
    for (int li = 0; li < n_layers; li++) {
        const conv_layer *c = &layers[li];
        int n = c->dims;
        const char *const *L = letters[n - 1];
        akg_buf_appendf(&b, "%sN%d, IC%d, OC%d, G%d", first ? "" : ", ", li, li, li, li);
        first = 0;
        for (int i = 0; i < n; i++)
            akg_buf_appendf(&b, ", I%s%d, O%s%d, K%s%d, S%s%d, P%s%d, DL%s%d", L[i], li, L[i], li,
                            L[i], li, L[i], li, L[i], li, L[i], li);
    }
    akg_buf_puts(&b, ";\n  tensors: ");
    for (int li = 0; li < n_layers; li++) {
        const conv_layer *c = &layers[li];
        int n = c->dims;
        const char *const *L = letters[n - 1];
        if (li == 0) {
            akg_buf_puts(&b, "x[N0, IC0");
            for (int i = 0; i < n; i++)
                akg_buf_appendf(&b, ", I%s0", L[i]);
            akg_buf_puts(&b, "]: f32; ");
        }
        if (c->transposed)
            akg_buf_appendf(&b, "w%d[IC%d, OC%d // G%d", li, li, li, li);
        else
            akg_buf_appendf(&b, "w%d[OC%d, IC%d // G%d", li, li, li, li);
        for (int i = 0; i < n; i++)
            akg_buf_appendf(&b, ", K%s%d", L[i], li);
        akg_buf_puts(&b, "]: f32; ");
        if (c->bias)
            akg_buf_appendf(&b, "bias%d[OC%d]: f32; ", li, li);
    }
    const conv_layer *lastl = &layers[n_layers - 1];
    akg_buf_appendf(&b, "y[N%d, OC%d", n_layers - 1, n_layers - 1);
    for (int i = 0; i < lastl->dims; i++)
        akg_buf_appendf(&b, ", O%s%d", letters[lastl->dims - 1][i], n_layers - 1);
    akg_buf_puts(&b, "]: f32;\n");
    akg_buf_appendf(&b, "  constexpr: MR = tune(6, 4), NR = tune(16, 8, 24), KC = tune(%d, %d), "
                        "MC = tune(%d, %d), NC = tune(%d, %d), OWB = tune(%d, %d);\n\n",
                    retry ? 256 : 384, retry ? 384 : 256, retry ? 96 : 192, retry ? 192 : 96,
                    retry ? 256 : 512, retry ? 512 : 256, retry ? 64 : 256, retry ? 256 : 64);
    for (int li = 0; li < n_layers; li++) {
        const conv_layer *c = &layers[li];
        char src[32], dst[32];
        snprintf(src, sizeof src, li == 0 ? "x" : "t%d", li - 1);
        snprintf(dst, sizeof dst, li == n_layers - 1 ? "y" : "t%d", li);
        if (li < n_layers - 1) {
            akg_buf_appendf(&b, "  t%d = alloc([N%d, OC%d", li, li, li);
            for (int i = 0; i < c->dims; i++)
                akg_buf_appendf(&b, ", O%s%d", letters[c->dims - 1][i], li);
            akg_buf_puts(&b, "], llm_hint=[\"slow\", \"temp_workspace\"])\n");
        }
        if (c->direct && !c->bias)
            akg_buf_appendf(&b, "  zero = zeros([OC%d])\n", li);
        layer_sketch(&b, c, li, src, dst);
    }
    akg_buf_puts(&b, "}\n");
    return akg_buf_steal(&b);
}

/* Follows a NAME back to the expression last assigned to it before statement *at, moving *at
 * to that assignment, so "x = self.a(x); return self.b(x)" reads as b(a(x)): each x is the
 * one assigned before its use. A forward input never reassigned comes back as the NAME. */
static const akg_expr *follow_before(const akg_reference *ref, const akg_expr *e, size_t *at)
{
    for (size_t guard = 0; e && e->kind == AKG_EX_NAME && guard < 16; guard++) {
        size_t def = SIZE_MAX;
        for (size_t i = *at; i-- > 0;)
            if (ref->body[i].kind == AKG_STMT_ASSIGN && ref->body[i].target &&
                !strcmp(ref->body[i].target, e->name)) {
                def = i;
                break;
            }
        if (def == SIZE_MAX)
            break;
        e = ref->body[def].value;
        *at = def;
    }
    return e;
}

int akg_rules_conv(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                   int attempt, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    if (ref->n_body == 0 || ref->body[ref->n_body - 1].kind != AKG_STMT_RETURN)
        return AKG_ENOTFOUND;
    size_t at = ref->n_body - 1;
    const akg_expr *e = follow_before(ref, ref->body[at].value, &at);
    if (!e || e->kind != AKG_EX_CALL || !e->is_layer)
        return AKG_ENOTFOUND;
    int dims, transposed;
    if (!conv_kind(e->name, &dims, &transposed))
        return AKG_ENOTFOUND;
    /* walk the chain from the outermost layer to the input */
    const akg_expr *chain[MAX_LAYERS];
    int n = 0;
    const akg_expr *cur = e;
    while (cur && cur->kind == AKG_EX_CALL && cur->is_layer) {
        if (n >= MAX_LAYERS)
            return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                        "a chain of more than 4 convolution layers");
        chain[n++] = cur;
        cur = follow_before(ref, akg_rule_arg(cur, 0, "input"), &at);
    }
    int input = cur ? akg_rule_forward_param(ref, cur) : -1;
    if (input < 0)
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "a convolution of something other than a forward input");
    conv_layer layers[MAX_LAYERS];
    memset(layers, 0, sizeof layers);
    for (int i = 0; i < n; i++) {
        const akg_expr *call = chain[n - 1 - i];
        conv_layer *c = &layers[i];
        if (!conv_kind(call->name, &c->dims, &c->transposed))
            return akg_rule_unsupported(ref, call->range, where, err, errlen,
                                        "a layer that is not a convolution in a convolution chain");
        c->layer = akg_reference_layer(ref, call->callee ? call->callee + 5 : "");
        if (!c->layer)
            return akg_rule_unsupported(ref, call->range, where, err, errlen,
                                        "a convolution layer not made in __init__");
        int rc = read_layer(ref, probe, c->layer, c, where, err, errlen);
        if (rc)
            return rc;
    }
    const cJSON *din = akg_rule_probe_input(probe, input);
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(din, "dtype"));
    if (!dt || strcmp(dt, "float32") || akg_rule_rank(din) != layers[0].dims + 2)
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "a convolution input that is not a batched float32 tensor");
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    char name[64];
    snprintf(name, sizeof name, "%s%s", n > 1 ? "chain_" : "", e->name);
    akg_design *d = akg_rule_family_design("conv", name);
    if (!d)
        return AKG_ENOMEM;
    d->rank = layers[0].dims + 2;
    d->parallel = 1;
    d->vectorize = 1;
    cJSON_AddNumberToObject(d->params, "input", input);
    cJSON *arr = cJSON_AddArrayToObject(d->params, "layers");
    for (int i = 0; i < n; i++) {
        const conv_layer *c = &layers[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", c->layer->name);
        cJSON_AddStringToObject(o, "type", c->layer->type);
        cJSON_AddStringToObject(o, "args", c->layer->args_text ? c->layer->args_text : "");
        cJSON_AddNumberToObject(o, "dims", c->dims);
        cJSON_AddNumberToObject(o, "transposed", c->transposed);
        cJSON_AddNumberToObject(o, "in_channels", (double)c->in_ch);
        cJSON_AddNumberToObject(o, "out_channels", (double)c->out_ch);
        cJSON_AddNumberToObject(o, "groups", (double)c->groups);
        cJSON_AddNumberToObject(o, "bias", c->bias);
        cJSON_AddStringToObject(o, "padding_mode", c->reflect ? "reflect" : "zeros");
        cJSON_AddBoolToObject(o, "same", c->same);
        cJSON_AddStringToObject(o, "algorithm", c->direct ? "direct" : "implicit_gemm");
        const char *keys[] = {"kernel", "stride", "padding", "dilation", "output_padding"};
        const long *vals[] = {c->kernel, c->stride, c->padding, c->dilation, c->output_padding};
        for (int k = 0; k < 5; k++) {
            cJSON *v = cJSON_AddArrayToObject(o, keys[k]);
            for (int j = 0; j < c->dims; j++)
                cJSON_AddItemToArray(v, cJSON_CreateNumber((double)vals[k][j]));
        }
        cJSON_AddItemToArray(arr, o);
    }
    d->sketch_text = conv_sketch(name, layers, n, fb != NULL);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
