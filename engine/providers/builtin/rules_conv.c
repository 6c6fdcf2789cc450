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
#include "rules_conv_sketch.h"

#define MAX_LAYERS 4

typedef struct {
    const akg_ref_layer *layer;
    akg_conv_geometry g;
} conv_layer;

static int conv_kind(const char *op, int *dims, int *transposed)
{
    static const char *names[] = {"conv1d",           "conv2d",           "conv3d",
                                  "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"};
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
    int n = c->g.dims;
    /* the probe describes the layer as built: then the constructor's spelling need not be
     * readable (what the probe says overrides it below) */
    bool built = akg_rule_probe_attr(probe, layer->name, "kernel_size") != NULL;
    if (!ctor)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a convolution layer whose constructor cannot be read");
    /* the probe's weight shape ([OC, IC/G, k...], transposed [IC, OC/G, k...]) gives the
     * window when the constructor's value is a tuple argument */
    char wname[160];
    snprintf(wname, sizeof wname, "%s.weight", layer->name);
    const cJSON *wdesc = akg_rule_probe_param(probe, wname);
    if (read_list(ref, probe, akg_rule_arg(ctor, 2, "kernel_size"), n, -1, c->g.kernel)) {
        for (int i = 0; i < n; i++)
            c->g.kernel[i] = akg_rule_dim(wdesc, 2 + i);
    }
    if (read_list(ref, probe, akg_rule_arg(ctor, 3, "stride"), n, 1, c->g.stride) && !built)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a convolution stride that cannot be read");
    if ((read_long(ref, probe, akg_rule_arg(ctor, 0, "in_channels"), -1, &c->g.in_ch) ||
         read_long(ref, probe, akg_rule_arg(ctor, 1, "out_channels"), -1, &c->g.out_ch) ||
         c->g.in_ch <= 0 || c->g.out_ch <= 0 || c->g.kernel[0] <= 0) &&
        !built)
        return akg_rule_unsupported(
            ref, layer->range, where, err, errlen,
            "a convolution whose channels, kernel or stride cannot be read");
    const akg_expr *pad = akg_rule_arg(ctor, 4, "padding");
    const char *str = NULL;
    akg_scalar s;
    memset(&s, 0, sizeof s);
    if (pad && akg_rule_scalar(ref, probe, pad, "padding", &s, &str) == AKG_OK && str) {
        if (strcmp(str, "same") && strcmp(str, "valid") && !built)
            return akg_rule_unsupported(ref, pad->range, where, err, errlen, "a padding string");
        c->g.same = !strcmp(str, "same");
        for (int i = 0; i < n; i++)
            c->g.padding[i] = 0;
    } else if (read_list(ref, probe, pad, n, 0, c->g.padding)) {
        /* not readable from the call: only the probe can tell */
        for (int i = 0; i < n; i++)
            c->g.padding[i] = -1;
    }
    size_t next = 5;
    if (c->g.transposed) {
        if (read_list(ref, probe, akg_rule_arg(ctor, 5, "output_padding"), n, 0,
                      c->g.output_padding) &&
            !built)
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "an output_padding that cannot be read");
        next = 6;
        /* ConvTranspose: (..., output_padding, groups, bias, dilation, padding_mode) */
        if ((read_long(ref, probe, akg_rule_arg(ctor, next, "groups"), 1, &c->g.groups) ||
             read_list(ref, probe, akg_rule_arg(ctor, next + 2, "dilation"), n, 1,
                       c->g.dilation)) &&
            !built)
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "groups or dilation that cannot be read");
    } else {
        /* Conv: (..., padding, dilation, groups, bias, padding_mode) */
        if ((read_list(ref, probe, akg_rule_arg(ctor, next, "dilation"), n, 1, c->g.dilation) ||
             read_long(ref, probe, akg_rule_arg(ctor, next + 1, "groups"), 1, &c->g.groups)) &&
            !built)
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "dilation or groups that cannot be read");
    }
    /* the probe's parameters say whether the layer has a bias */
    char pname[160];
    snprintf(pname, sizeof pname, "%s.bias", layer->name);
    c->g.bias = akg_rule_probe_param(probe, pname) != NULL;
    const akg_expr *mode = akg_rule_arg(ctor, c->g.transposed ? 9 : 8, "padding_mode");
    if (mode) {
        str = NULL;
        /* a constructor argument: the kernel reads the layer's padding_mode at run time
         * (zeros or reflect; the harness's ModelNew raises on others) */
        if (akg_rule_scalar(ref, probe, mode, "padding_mode", &s, &str) != AKG_OK || !str)
            str = "zeros";
        if (!strcmp(str, "reflect"))
            c->g.reflect = 1;
        else if (strcmp(str, "zeros") && !built)
            return akg_rule_unsupported(ref, mode->range, where, err, errlen,
                                        "padding_mode other than zeros or reflect");
    }
    /* the layer as built (the probe's modules) over what the constructor call spells */
    const char *L = layer->name;
    akg_rule_probe_ints(probe, L, "in_channels", &c->g.in_ch, 1);
    akg_rule_probe_ints(probe, L, "out_channels", &c->g.out_ch, 1);
    akg_rule_probe_ints(probe, L, "groups", &c->g.groups, 1);
    akg_rule_probe_ints(probe, L, "kernel_size", c->g.kernel, n);
    akg_rule_probe_ints(probe, L, "stride", c->g.stride, n);
    akg_rule_probe_ints(probe, L, "dilation", c->g.dilation, n);
    if (c->g.transposed)
        akg_rule_probe_ints(probe, L, "output_padding", c->g.output_padding, n);
    const char *pstr = cJSON_GetStringValue(akg_rule_probe_attr(probe, L, "padding"));
    if (pstr && (!strcmp(pstr, "same") || !strcmp(pstr, "valid"))) {
        c->g.same = !strcmp(pstr, "same");
        for (int i = 0; i < n; i++)
            c->g.padding[i] = 0;
    } else if (!akg_rule_probe_ints(probe, L, "padding", c->g.padding, n)) {
        c->g.same = 0;
    }
    const char *mstr = cJSON_GetStringValue(akg_rule_probe_attr(probe, L, "padding_mode"));
    if (mstr) {
        if (strcmp(mstr, "zeros") && strcmp(mstr, "reflect"))
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "padding_mode other than zeros or reflect");
        c->g.reflect = !strcmp(mstr, "reflect");
    }
    for (int i = 0; i < n; i++)
        if (c->g.padding[i] < 0 || c->g.kernel[i] <= 0 || c->g.stride[i] <= 0 ||
            c->g.dilation[i] <= 0)
            return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                        "a convolution window that cannot be read");
    if (c->g.groups <= 0 || c->g.in_ch % c->g.groups || c->g.out_ch % c->g.groups)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "groups that do not divide the channels");
    if (c->g.reflect && c->g.transposed)
        return akg_rule_unsupported(ref, layer->range, where, err, errlen,
                                    "a transposed convolution with reflect padding");
    return 0;
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

int akg_rules_conv(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
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
        if (!conv_kind(call->name, &c->g.dims, &c->g.transposed))
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
    if (!dt || strcmp(dt, "float32") || akg_rule_rank(din) != layers[0].g.dims + 2)
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "a convolution input that is not a batched float32 tensor");
    /* the layers in the sketch's 3-D form; the tunables' first candidates */
    akg_conv_layer_spec specs[MAX_LAYERS];
    memset(specs, 0, sizeof specs);
    for (int i = 0; i < n; i++) {
        const conv_layer *c = &layers[i];
        if (c->g.transposed && i > 0)
            return akg_rule_unsupported(ref, c->layer->range, where, err, errlen,
                                        "a transposed convolution after another layer");
        akg_conv_layer_spec_from(&specs[i], &c->g, n == 1);
        specs[i].layer = c->layer->name;
    }
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    char name[64];
    snprintf(name, sizeof name, "%s%s", n > 1 ? "chain_" : "", e->name);
    akg_design *d = akg_rule_family_design("conv", name);
    if (!d)
        return AKG_ENOMEM;
    d->rank = layers[0].g.dims + 2;
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
        cJSON_AddNumberToObject(o, "dims", c->g.dims);
        cJSON_AddNumberToObject(o, "transposed", c->g.transposed);
        cJSON_AddNumberToObject(o, "in_channels", (double)c->g.in_ch);
        cJSON_AddNumberToObject(o, "out_channels", (double)c->g.out_ch);
        cJSON_AddNumberToObject(o, "groups", (double)c->g.groups);
        cJSON_AddNumberToObject(o, "bias", c->g.bias);
        cJSON_AddStringToObject(o, "padding_mode", c->g.reflect ? "reflect" : "zeros");
        cJSON_AddBoolToObject(o, "same", c->g.same);
        cJSON_AddStringToObject(o, "algorithm",
                                specs[i].algo == CONV_DEPTHWISE ? "direct" : "implicit_gemm");
        const char *keys[] = {"kernel", "stride", "padding", "dilation", "output_padding"};
        const long *vals[] = {c->g.kernel, c->g.stride, c->g.padding, c->g.dilation,
                              c->g.output_padding};
        for (int k = 0; k < 5; k++) {
            cJSON *v = cJSON_AddArrayToObject(o, keys[k]);
            for (int j = 0; j < c->g.dims; j++)
                cJSON_AddItemToArray(v, cJSON_CreateNumber((double)vals[k][j]));
        }
        cJSON_AddItemToArray(arr, o);
    }
    const cJSON *in = akg_rule_probe_input(probe, input);
    int rank = akg_rule_rank(in);
    akg_conv_spec spec = {0};
    spec.name = name;
    spec.input = ref->forward_params[input].name;
    spec.layers = specs;
    spec.n_layers = n;
    spec.vw = akg_rule_vector_floats(probe);
    akg_conv_spec_tunables(&spec, rank > 0 ? akg_rule_dim(in, rank - 1) : -1, fb != NULL);
    d->sketch_text = akg_conv_sketch(&spec);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
