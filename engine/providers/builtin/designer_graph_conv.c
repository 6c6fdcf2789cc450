/*
 * designer_graph_conv.c: the graph Designer's rule for convolutions and
 * pooling, read from the probe's op graph (akg/graph.h) rather than from
 * forward's spelling, so that nn.Conv2d, F.conv2d on a parameter and
 * torch.conv2d are one design, as are nn.AvgPool2d and F.avg_pool2d.
 *
 * The design is the one the spelling rules make (rules_conv.c, rules_pool.c):
 * the node's geometry becomes the same spec (akg_conv_geometry ->
 * akg_conv_layer_spec_from, akg_pool_spec) and the same writers
 * (rules_conv_sketch.c, rules_pool_sketch.c) write the sketch. What differs:
 * there may be no layer to read the geometry from at run time, so it is the
 * design's constants (the weight's bound shape still checks channels and
 * window), and a convolution may carry an epilogue:
 *
 *  - Convolution (`conv`, any dims, groups, dilation, transposed) of a forward
 *    input by a parameter, with an optional bias parameter; a `pad` of the
 *    input read only by it is its padding when it is zeros or reflections and
 *    the same on both sides (nn.Conv2d's padding_mode='reflect' traces so);
 *    then any chain of ops on its result that are elementwise and read only
 *    numbers and tensors of one value per output channel ([OC, 1, 1],
 *    [1, OC, 1, 1], or a 1-D [OC] reshaped so: a bias added by hand), and
 *    BatchNorm in eval mode
 *    (`batch_norm` with training false: its running statistics and affine
 *    parameters fold into a per-channel scale and shift, as PyTorch computes
 *    it: x * a + (beta - mean * a), a = gamma / sqrt(var + eps)). The epilogue
 *    runs on each accumulator tile (rows are output channels, so each vector
 *    is a column broadcast along the tile) before it is stored: the output
 *    makes one trip to memory.
 *  - Max and average pooling (`max_pool`, `avg_pool`) of a forward input.
 *    PyTorch pools 1-D maps as 2-D ones of height 1 (a reshape before and
 *    after): those unit dims are dropped, so the design is the 1-D one.
 *  - Adaptive average pooling (`adaptive_avg_pool`), for any input size: when
 *    the traced input's sizes are multiples of the output's, the kernel runs
 *    a plain average pool (window = stride = I / O, constants) on inputs of
 *    those sizes; on others, PyTorch's windows from floor(o * I / O) to
 *    ceil((o + 1) * I / O).
 *
 * Anything else in such a graph is declined with the op, its line and why.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph.h"
#include "designer_graph_conv.h"
#include "graph_ops.h"
#include "rule_util.h"
#include "rules_conv_sketch.h"
#include "rules_pool_sketch.h"

typedef struct {
    const akg_reference *ref;
    const akg_graph *g;
    akg_range *where;
    char *err;
    size_t errlen;
    int vw; /* f32 lanes of a register tile's vectors on the target CPU */
} cctx;

static int decline(cctx *c, const akg_graph_value *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int decline(cctx *c, const akg_graph_value *v, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return akg_graph_decline(c->ref, v, 0, c->where, c->err, c->errlen, why);
}

static int is_op(const akg_graph_value *v, const char *op)
{
    return v->kind == AKG_GRAPH_OP && !strcmp(v->op, op);
}

static int is_window(const akg_graph_value *v)
{
    return is_op(v, "conv") || is_op(v, "max_pool") || is_op(v, "avg_pool") ||
           is_op(v, "adaptive_avg_pool");
}

int akg_graph_has_window_op(const akg_graph *g)
{
    for (int i = 0; i < g->n_values; i++)
        if (is_window(&g->values[i]))
            return 1;
    return 0;
}

static const akg_graph_value *arg_value(const akg_graph *g, const akg_graph_value *v, int k)
{
    if (k >= v->n_args || v->args[k].kind != AKG_GRAPH_ARG_VALUE)
        return NULL;
    return &g->values[v->args[k].value];
}

/* The forward input a window op reads (x: its operand, or the input of the pad before it): an
 * f32 input of rank lo..hi. NULL with why set. */
static const akg_graph_value *window_input(const akg_graph_value *x, int lo, int hi,
                                           const char **why)
{
    if (!x || x->kind != AKG_GRAPH_INPUT) {
        *why = "it reads a tensor computed in forward (work before a convolution or pooling is "
               "not fused yet: one kernel per graph for now)";
        return NULL;
    }
    if (strcmp(x->dtype, "f32")) {
        *why = "its input is not f32 (f32 only for now)";
        return NULL;
    }
    if (x->rank < lo || x->rank > hi) {
        *why = lo == hi ? "its input is not batched ([N, C, spatial...])"
                        : "its input is not [N, C, spatial...] or [C, spatial...]";
        return NULL;
    }
    return x;
}

/* ---------- convolution with an epilogue ---------- */

typedef struct {
    akg_conv_spec spec;
    char lines[AKG_CONV_MAX_EPILOGUE][256];
    char (*names)[24]; /* each value's name in the epilogue ("" none) */
    int vec_leaf[AKG_CONV_MAX_VECTORS];
    int n_bn;
} conv_epilogue;

/* Whether shape (rank r) holds one value per channel of out ([OC, 1, 1], [1, OC, 1, 1]...):
 * the channel's position in it, or -1. */
static int channel_dim(const long *shape, int r, const akg_graph_value *out)
{
    int k = 1 - (out->rank - r);
    if (k < 0 || shape[k] != out->shape[1])
        return -1;
    for (int j = 0; j < r; j++)
        if (j != k && shape[j] != 1)
            return -1;
    return k;
}

/* Names value id (read by epilogue op v) as the tile of a per-channel vector: a leaf of one
 * value per channel, or a 1-D leaf of OC values reshaped so. 0, or a refusal. */
static int channel_vector(cctx *c, conv_epilogue *ep, const akg_graph_value *v, int id,
                          const akg_graph_value *out)
{
    const akg_graph *g = c->g;
    const akg_graph_value *a = &g->values[id], *leaf = a;
    int rank = a->rank, chan = channel_dim(a->shape, a->rank, out);
    /* BatchNorm's operands are [C] by definition */
    if (is_op(v, "batch_norm"))
        chan = a->rank == 1 && a->shape[0] == out->shape[1] ? 0 : -1;
    if (is_op(a, "reshape") && arg_value(g, a, 0) && chan >= 0) {
        leaf = arg_value(g, a, 0);
        rank = 1;
        chan = leaf->rank == 1 && leaf->shape[0] == out->shape[1] ? 0 : -1;
    }
    if (!akg_graph_is_leaf(leaf) || chan < 0) {
        char what[160];
        if (a->kind == AKG_GRAPH_OP)
            snprintf(what, sizeof what, "the result of %s", a->op);
        else
            snprintf(what, sizeof what, "%s %s", akg_graph_kind_name(a->kind), a->name);
        return decline(c, v,
                       "it reads %s, not one value per output channel: an epilogue after a "
                       "convolution reads only numbers and per-channel tensors ([C, 1, 1], or "
                       "a [C] parameter viewed so)",
                       what);
    }
    if (leaf->kind == AKG_GRAPH_CONSTANT || strcmp(leaf->dtype, "f32"))
        return decline(c, v, "it reads %s, which is %s", leaf->name,
                       leaf->kind == AKG_GRAPH_CONSTANT
                           ? "a tensor made inside forward (constants are not designed yet)"
                           : "not f32 (f32 only for now)");
    akg_conv_spec *s = &ep->spec;
    int k = 0;
    while (k < s->n_vecs && ep->vec_leaf[k] != leaf->id)
        k++;
    if (k == s->n_vecs) {
        if (k >= AKG_CONV_MAX_VECTORS)
            return decline(c, v, "more than %d per-channel tensors in one epilogue",
                           AKG_CONV_MAX_VECTORS);
        s->vecs[k] = (akg_conv_vector){leaf->name, leaf->kind != AKG_GRAPH_INPUT, rank, chan};
        ep->vec_leaf[k] = leaf->id;
        s->n_vecs++;
    }
    snprintf(ep->names[id], sizeof ep->names[0], "vt%d", k);
    return 0;
}

static int add_line(cctx *c, conv_epilogue *ep, const akg_graph_value *v, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int add_line(cctx *c, conv_epilogue *ep, const akg_graph_value *v, const char *fmt, ...)
{
    akg_conv_spec *s = &ep->spec;
    if (s->n_epilogue >= AKG_CONV_MAX_EPILOGUE)
        return decline(c, v, "more than %d statements after the convolution",
                       AKG_CONV_MAX_EPILOGUE);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ep->lines[s->n_epilogue], sizeof ep->lines[0], fmt, ap);
    va_end(ap);
    s->epilogue[s->n_epilogue] = ep->lines[s->n_epilogue];
    s->n_epilogue++;
    return 0;
}

/* BatchNorm in eval mode on the tile named by its first operand: a = gamma / sqrt(var + eps),
 * then x * a + (beta - mean * a), the fold PyTorch's inference uses. */
static int batch_norm(cctx *c, conv_epilogue *ep, const akg_graph_value *v,
                      const akg_graph_value *out)
{
    double training = 0, eps = 1e-5;
    akg_graph_attr_number(v, "training", &training);
    if (training != 0)
        return decline(c, v,
                       "BatchNorm in training mode normalises with the batch's own statistics "
                       "(a reduction over the whole batch); call .eval() on the model to use "
                       "its running statistics, which fold into the convolution");
    akg_graph_attr_number(v, "eps", &eps);
    const char *nm[5] = {0};
    for (int k = 1; k < 5; k++) {
        if (!arg_value(c->g, v, k)) {
            if (k >= 3)
                return decline(c, v,
                               "BatchNorm without running statistics (track_running_stats="
                               "False) normalises with the batch's own statistics");
            continue;
        }
        int rc = channel_vector(c, ep, v, v->args[k].value, out);
        if (rc)
            return rc;
        nm[k] = ep->names[v->args[k].value];
    }
    char e[32];
    akg_graph_number_text(eps, e, sizeof e);
    const char *x = ep->names[v->args[0].value];
    int n = ep->n_bn++;
    int rc = nm[1] ? add_line(c, ep, v, "bn%d = div(%s, sqrt(add(%s, %s)))", n, nm[1], nm[4], e)
                   : add_line(c, ep, v, "bn%d = recip(sqrt(add(%s, %s)))", n, nm[4], e);
    if (rc)
        return rc;
    snprintf(ep->names[v->id], sizeof ep->names[0], "e%d", ep->spec.n_epilogue);
    if (nm[2])
        return add_line(c, ep, v, "%s = add(mul(%s, bn%d), sub(%s, mul(%s, bn%d)))",
                        ep->names[v->id], x, n, nm[2], nm[3], n);
    return add_line(c, ep, v, "%s = sub(mul(%s, bn%d), mul(%s, bn%d))", ep->names[v->id], x, n,
                    nm[3], n);
}

/* The ops after convolution cv, all of them reading its result (chain[]), as the epilogue;
 * name gets their words. */
static int conv_epilogue_ops(cctx *c, conv_epilogue *ep, const akg_graph_value *cv,
                             const char *chain, char *name, size_t len)
{
    const akg_graph *g = c->g;
    snprintf(ep->names[cv->id], sizeof ep->names[0], "o");
    for (int i = cv->id + 1; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!chain[i])
            continue;
        if (v->rank != cv->rank || memcmp(v->shape, cv->shape, sizeof(long) * (size_t)v->rank))
            return decline(c, v, "its result's shape is not the convolution's");
        if (is_op(v, "batch_norm")) {
            if (!arg_value(g, v, 0) || !chain[v->args[0].value])
                return decline(c, v, "BatchNorm of something other than the convolution");
            int rc = batch_norm(c, ep, v, cv);
            if (rc)
                return rc;
            size_t n = strlen(name);
            if (n + 11 < len)
                snprintf(name + n, len - n, "_batch_norm");
            continue;
        }
        if (!akg_graph_op_elementwise(v))
            return decline(c, v,
                           "after a convolution only elementwise ops and BatchNorm in eval "
                           "mode are fused (one kernel per graph for now)");
        int bias = 0;
        for (int k = 0; k < v->n_args; k++) {
            int a = v->args[k].kind == AKG_GRAPH_ARG_VALUE ? v->args[k].value : -1;
            if (a < 0 || chain[a])
                continue;
            int rc = channel_vector(c, ep, v, a, cv);
            if (rc)
                return rc;
            bias = 1;
        }
        char expr[200];
        const char *why = NULL;
        if (akg_graph_op_render(g, v, ep->names, expr, sizeof expr, &why))
            return decline(c, v, "%s", why);
        snprintf(ep->names[i], sizeof ep->names[0], "e%d", ep->spec.n_epilogue);
        int rc = add_line(c, ep, v, "%s = %s", ep->names[i], expr);
        if (rc)
            return rc;
        akg_graph_op_word(v, bias && !strcmp(v->op, "add"), name, len);
    }
    ep->spec.epilogue_out = ep->names[g->outputs[0]];
    return 0;
}

static void add_longs(cJSON *o, const char *key, const long *v, int n)
{
    cJSON *a = cJSON_AddArrayToObject(o, key);
    for (int i = 0; i < n; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
}

/* A pad before a convolution of `dims` spatial dims as padding per dim (the layer's order) and
 * whether it reflects: F.pad's list runs from the last dim, left then right. 0, or a refusal. */
static int read_pad(cctx *c, const akg_graph_value *pad, int dims, long *padding, int *reflect)
{
    long p[2 * AKG_GRAPH_MAX_RANK];
    int n = akg_graph_attr_ints(pad, "pad", p, 2 * AKG_GRAPH_MAX_RANK);
    const char *mode = akg_graph_attr_string(pad, "mode");
    double value = 0;
    akg_graph_attr_number(pad, "value", &value);
    if (n < 0 || n % 2 || !mode)
        return decline(c, pad, "a pad whose amounts or mode the trace does not give");
    if (strcmp(mode, "reflect") && (strcmp(mode, "constant") || value != 0))
        return decline(c, pad,
                       "a %s pad before a convolution (zeros and reflections are its padding; "
                       "other pads are not fused yet)",
                       !strcmp(mode, "constant") ? "non-zero constant" : mode);
    *reflect = !strcmp(mode, "reflect");
    for (int j = 0; j < n / 2; j++) {
        int k = dims - 1 - j; /* the spatial dim this pair pads */
        if (k < 0 ? p[2 * j] || p[2 * j + 1] : p[2 * j] != p[2 * j + 1] || p[2 * j] < 0)
            return decline(c, pad,
                           "a pad that is not the same on both sides of each spatial dim (a "
                           "convolution's padding is symmetric)");
        if (k >= 0)
            padding[k] = p[2 * j];
    }
    return 0;
}

static int design_conv(cctx *c, const akg_graph_value *cv, const cJSON *feedback, akg_design **out)
{
    const akg_graph *g = c->g;
    const akg_graph_value *w = arg_value(g, cv, 1), *bias = arg_value(g, cv, 2);
    if (!w || w->rank < 3 || w->rank > 5)
        return decline(c, cv, "a convolution whose weight is not [C, C, k...] of 1 to 3 dims");
    akg_conv_geometry geo = {0};
    geo.dims = w->rank - 2;
    const char *why = NULL;
    const akg_graph_value *x = arg_value(g, cv, 0);
    /* a pad read only by the convolution is its padding (zeros, or reflections) */
    const akg_graph_value *pad = x && is_op(x, "pad") && x->n_consumers == 1 ? x : NULL;
    long padded[3] = {0};
    if (pad) {
        int rc = read_pad(c, pad, geo.dims, padded, &geo.reflect);
        if (rc)
            return rc;
        x = arg_value(g, pad, 0);
    }
    x = window_input(x, geo.dims + 2, geo.dims + 2, &why);
    if (!x)
        return decline(c, cv, "%s", why);
    if (w->kind != AKG_GRAPH_WEIGHT && w->kind != AKG_GRAPH_BUFFER)
        return decline(c, cv,
                       "a convolution whose weight is not a parameter or buffer of the model "
                       "(%s): the design reads its weight from the model",
                       akg_graph_kind_name(w->kind));
    if (strcmp(w->dtype, "f32"))
        return decline(c, cv, "a weight that is not f32 (f32 only for now)");
    if (bias && (!akg_graph_is_leaf(bias) || bias->kind == AKG_GRAPH_INPUT ||
                 bias->kind == AKG_GRAPH_CONSTANT || bias->rank != 1 || strcmp(bias->dtype, "f32")))
        return decline(c, cv, "a convolution bias that is not an f32 parameter of the model");
    double tr = 0, groups = 1;
    akg_graph_attr_number(cv, "transposed", &tr);
    akg_graph_attr_number(cv, "groups", &groups);
    geo.transposed = tr != 0;
    geo.groups = (long)groups;
    geo.bias = bias != NULL;
    int n = geo.dims;
    if (akg_graph_attr_ints(cv, "stride", geo.stride, 3) != n ||
        akg_graph_attr_ints(cv, "padding", geo.padding, 3) != n ||
        akg_graph_attr_ints(cv, "dilation", geo.dilation, 3) != n ||
        (geo.transposed && akg_graph_attr_ints(cv, "output_padding", geo.output_padding, 3) != n))
        return decline(c, cv,
                       "a convolution whose stride, padding or dilation the trace does not "
                       "give per spatial dim");
    for (int k = 0; k < n; k++) {
        if (geo.reflect && geo.padding[k])
            return decline(c, cv, "zero padding after a reflect pad (one padding per side)");
        geo.padding[k] += padded[k];
        geo.kernel[k] = w->shape[2 + k];
    }
    if (geo.reflect && geo.transposed)
        return decline(c, cv, "a transposed convolution of a reflect-padded input");
    geo.in_ch = x->shape[1];
    geo.out_ch = geo.transposed ? w->shape[1] * geo.groups : w->shape[0];
    if (geo.groups <= 0 || geo.in_ch % geo.groups || geo.out_ch % geo.groups ||
        (geo.transposed ? w->shape[0] != geo.in_ch : w->shape[1] * geo.groups != geo.in_ch))
        return decline(c, cv, "groups that do not divide the channels");
    for (int k = 0; k < n; k++)
        if (geo.padding[k] < 0 || geo.stride[k] <= 0 || geo.dilation[k] <= 0)
            return decline(c, cv, "a convolution window with a negative padding");
    if (bias && bias->shape[0] != geo.out_ch)
        return decline(c, cv, "a bias that is not one value per output channel");
    /* what reads the convolution's result (and what reads that): the epilogue */
    char *chain = calloc((size_t)g->n_values, 1);
    conv_epilogue *ep = calloc(1, sizeof *ep);
    char(*names)[24] = calloc((size_t)g->n_values, sizeof *names);
    if (!chain || !ep || !names) {
        free(chain);
        free(ep);
        free(names);
        return AKG_ENOMEM;
    }
    ep->names = names;
    chain[cv->id] = 1;
    for (int i = cv->id + 1; i < g->n_values; i++)
        for (int k = 0; k < g->values[i].n_args; k++)
            if (g->values[i].args[k].kind == AKG_GRAPH_ARG_VALUE &&
                chain[g->values[i].args[k].value])
                chain[i] = 1;
    char name[64];
    snprintf(name, sizeof name, "conv%s%dd", geo.transposed ? "_transpose" : "", n);
    const akg_graph_value *result = &g->values[g->outputs[0]];
    int rc = 0;
    if (!chain[result->id])
        rc = decline(c, result, "forward's result does not come from the convolution");
    else if (strcmp(result->dtype, "f32"))
        rc = decline(c, result, "an output that is not f32 (f32 only for now)");
    if (!rc)
        rc = conv_epilogue_ops(c, ep, cv, chain, name, sizeof name);
    akg_conv_layer_spec layer = {0};
    akg_conv_layer_spec_from(&layer, &geo, true);
    layer.weight = w->name;
    layer.bias_w = bias ? bias->name : NULL;
    if (!rc && layer.algo == CONV_TRANSPOSED && ep->spec.n_epilogue > 0)
        rc = decline(c, &g->values[cv->id + 1],
                     "an epilogue after a transposed convolution is not fused yet (its output "
                     "is summed tap by tap in memory)");
    akg_design *d = NULL;
    if (!rc) {
        d = akg_rule_family_design("conv", name);
        rc = d ? 0 : AKG_ENOMEM;
    }
    if (!rc) {
        d->rank = x->rank;
        d->parallel = 1;
        d->vectorize = 1;
        akg_conv_spec *s = &ep->spec;
        s->name = d->op_name;
        s->input = x->name;
        s->layers = &layer;
        s->n_layers = 1;
        const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
        s->vw = c->vw;
        akg_conv_spec_tunables(s, x->shape[x->rank - 1], fb != NULL);
        cJSON *p = d->params;
        cJSON_AddStringToObject(p, "from", "graph");
        cJSON_AddStringToObject(p, "kind", "conv");
        cJSON_AddStringToObject(p, "weight", w->name);
        if (bias)
            cJSON_AddStringToObject(p, "bias", bias->name);
        cJSON_AddNumberToObject(p, "dims", n);
        cJSON_AddNumberToObject(p, "transposed", geo.transposed);
        cJSON_AddNumberToObject(p, "groups", (double)geo.groups);
        cJSON_AddStringToObject(p, "algorithm",
                                layer.algo == CONV_DEPTHWISE ? "direct" : "implicit_gemm");
        add_longs(p, "kernel", geo.kernel, n);
        add_longs(p, "stride", geo.stride, n);
        add_longs(p, "padding", geo.padding, n);
        add_longs(p, "dilation", geo.dilation, n);
        cJSON *el = cJSON_AddArrayToObject(p, "epilogue");
        for (int i = 0; i < s->n_epilogue; i++)
            cJSON_AddItemToArray(el, cJSON_CreateString(s->epilogue[i]));
        cJSON *vl = cJSON_AddArrayToObject(p, "vectors");
        for (int i = 0; i < s->n_vecs; i++)
            cJSON_AddItemToArray(vl, cJSON_CreateString(s->vecs[i].name));
        d->sketch_text = akg_conv_sketch(s);
        if (!d->sketch_text) {
            akg_design_free(d);
            d = NULL;
            rc = AKG_ENOMEM;
        }
    }
    free(chain);
    free(ep);
    free(names);
    if (!rc)
        *out = d;
    return rc;
}

/* ---------- pooling ---------- */

static akg_design *pool_design(const char *name, int rank, const char *mode, const char *sketch)
{
    akg_design *d = sketch ? akg_rule_family_design("pool", name) : NULL;
    if (!d)
        return NULL;
    d->rank = rank;
    d->parallel = 1;
    d->vectorize = 1;
    cJSON_AddStringToObject(d->params, "from", "graph");
    cJSON_AddStringToObject(d->params, "mode", mode);
    return d;
}

/* Whether reshape r of value src only adds or removes dims of size 1. */
static int unit_reshape(const akg_graph_value *r, const akg_graph_value *src)
{
    long a[AKG_GRAPH_MAX_RANK], b[AKG_GRAPH_MAX_RANK];
    int na = 0, nb = 0;
    for (int k = 0; k < r->rank; k++)
        if (r->shape[k] != 1)
            a[na++] = r->shape[k];
    for (int k = 0; k < src->rank; k++)
        if (src->shape[k] != 1)
            b[nb++] = src->shape[k];
    return na == nb && !memcmp(a, b, sizeof(long) * (size_t)na);
}

/* A pooling window as the graph gives it, per spatial dim. */
typedef struct {
    int dims;
    long kernel[3], stride[3], padding[3], dilation[3], out[3];
} pool_window;

static int design_pool(cctx *c, const akg_graph_value *pv, const cJSON *feedback, akg_design **out)
{
    const akg_graph *g = c->g;
    bool adaptive = is_op(pv, "adaptive_avg_pool");
    bool is_max = is_op(pv, "max_pool");
    pool_window pw = {0};
    for (int k = 0; k < 3; k++)
        pw.dilation[k] = 1;
    pw.dims = adaptive ? akg_graph_attr_ints(pv, "output_size", pw.out, 3)
                       : akg_graph_attr_ints(pv, "kernel", pw.kernel, 3);
    if (pw.dims < 1 || pw.dims > 3 ||
        (!adaptive && (akg_graph_attr_ints(pv, "stride", pw.stride, 3) != pw.dims ||
                       akg_graph_attr_ints(pv, "padding", pw.padding, 3) != pw.dims ||
                       (is_max && akg_graph_attr_ints(pv, "dilation", pw.dilation, 3) != pw.dims))))
        return decline(c, pv, "a pooling window the trace does not give per spatial dim");
    /* PyTorch pools 1-D maps as 2-D ones of height 1 (a reshape before, one after): the unit
     * dims a reshape of the input adds, where the window neither moves nor pads, are dropped */
    const akg_graph_value *x = arg_value(g, pv, 0), *result = pv;
    if (pv->id + 1 < g->n_values) {
        const akg_graph_value *next = &g->values[pv->id + 1];
        if (pv->id + 2 != g->n_values || !is_op(next, "reshape") || !unit_reshape(next, pv) || !x ||
            !is_op(x, "reshape"))
            return decline(c, next,
                           "after pooling nothing is fused yet (one kernel per graph for now)");
        result = next;
    }
    if (x && is_op(x, "reshape") && arg_value(g, x, 0) && unit_reshape(x, arg_value(g, x, 0))) {
        const akg_graph_value *src = arg_value(g, x, 0);
        pool_window kept = {0};
        int drop = x->rank - src->rank, dropped = 0;
        for (int k = 0; k < pw.dims; k++) {
            bool unit = x->shape[x->rank - pw.dims + k] == 1 &&
                        (adaptive ? pw.out[k] == 1
                                  : pw.kernel[k] == 1 && pw.stride[k] == 1 && pw.padding[k] == 0);
            if (unit && dropped < drop) {
                dropped++;
                continue;
            }
            int j = kept.dims++;
            kept.kernel[j] = pw.kernel[k];
            kept.stride[j] = pw.stride[k];
            kept.padding[j] = pw.padding[k];
            kept.dilation[j] = pw.dilation[k];
            kept.out[j] = pw.out[k];
        }
        if (kept.dims == 0 || dropped != drop)
            return decline(c, x, "a view of the input before pooling that is not fused yet");
        pw = kept;
        x = src;
    }
    if (result->rank != x->rank)
        return decline(c, result, "a view of the pooled result that is not fused yet");
    int dims = pw.dims;
    const char *why = NULL;
    x = window_input(x, dims + 1, dims + 2, &why);
    if (!x)
        return decline(c, pv, "%s", why);
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    char name[64];
    akg_pool_spec ps = {0};
    ps.name = name;
    ps.input = x->name;
    ps.dims = dims;
    ps.rank = x->rank;
    ps.owb = fb ? 64 : 256;
    memcpy(ps.dilation, pw.dilation, sizeof ps.dilation);
    if (adaptive) {
        snprintf(name, sizeof name, "adaptive_avg_pool%dd", dims);
        akg_pool_adaptive_spec as = {name, x->name, dims, x->rank, {0}, {0}, ps.owb};
        memcpy(as.out, pw.out, sizeof as.out);
        /* the traced sizes, when even, get a plain pool of constant windows */
        const long *in = &x->shape[x->rank - dims];
        bool even = true;
        for (int k = 0; k < dims; k++)
            even = even && pw.out[k] > 0 && in[k] % pw.out[k] == 0;
        for (int k = 0; even && k < dims; k++)
            as.even[k] = in[k] / pw.out[k];
        char *sk = akg_pool_adaptive_sketch(&as);
        akg_design *d = pool_design(name, x->rank, "adaptive_avg", sk);
        if (!d) {
            free(sk);
            return AKG_ENOMEM;
        }
        d->sketch_text = sk;
        add_longs(d->params, "output_size", pw.out, dims);
        *out = d;
        return AKG_OK;
    } else {
        ps.is_max = is_max;
        snprintf(name, sizeof name, "%s_pool%dd", is_max ? "max" : "avg", dims);
        memcpy(ps.kernel, pw.kernel, sizeof ps.kernel);
        memcpy(ps.stride, pw.stride, sizeof ps.stride);
        memcpy(ps.padding, pw.padding, sizeof ps.padding);
        double flag = 0;
        ps.ceil_mode = akg_graph_attr_number(pv, "ceil_mode", &flag) == AKG_OK && flag != 0;
        flag = 1;
        akg_graph_attr_number(pv, "count_include_pad", &flag);
        ps.include_pad = is_max || flag != 0;
        double div = 0;
        if (!is_max && akg_graph_attr_number(pv, "divisor_override", &div) == AKG_OK) {
            ps.divisor = 1;
            ps.divisor_value = (long)div;
        }
    }
    for (int k = 0; k < dims; k++)
        if (ps.kernel[k] <= 0 || ps.stride[k] <= 0 || ps.padding[k] < 0 || ps.dilation[k] <= 0)
            return decline(c, pv, "a pooling window that is empty or has a negative padding");
    char *sk = akg_pool_sketch(&ps);
    akg_design *d = pool_design(name, x->rank, is_max ? "max" : "avg", sk);
    if (!d) {
        free(sk);
        return AKG_ENOMEM;
    }
    d->sketch_text = sk;
    add_longs(d->params, "kernel", ps.kernel, dims);
    add_longs(d->params, "stride", ps.stride, dims);
    add_longs(d->params, "padding", ps.padding, dims);
    *out = d;
    return AKG_OK;
}

/* ---------- the entry ---------- */

int akg_designer_graph_conv(const akg_reference *ref, const akg_graph *g, const cJSON *feedback,
                            int vw, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    cctx c = {ref, g, where, err, errlen, vw};
    *out = NULL;
    const akg_graph_value *first = NULL;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!is_window(v))
            continue;
        if (first)
            return decline(&c, v,
                           "a second convolution or pooling (one per kernel for now: the first "
                           "is at line %d)",
                           first->line);
        first = v;
    }
    if (!first)
        return AKG_ENOTFOUND;
    if (g->n_outputs != 1)
        return decline(&c, &g->values[g->outputs[1] >= 0 ? g->outputs[1] : first->id],
                       "forward returns %d tensors (one output per kernel for now)", g->n_outputs);
    /* nothing but views of leaves before the window op: they can only be its epilogue's
     * per-channel tensors, checked where they are read */
    for (int i = 0; i < first->id; i++) {
        const akg_graph_value *v = &g->values[i];
        bool conv_pad = is_op(v, "pad") && is_op(first, "conv") && first->n_args > 0 &&
                        first->args[0].kind == AKG_GRAPH_ARG_VALUE && first->args[0].value == i;
        if (!akg_graph_is_leaf(v) && !is_op(v, "reshape") && !conv_pad)
            return decline(&c, v,
                           "work before a convolution or pooling is not fused yet (one kernel "
                           "per graph for now)");
    }
    if (is_op(first, "conv"))
        return design_conv(&c, first, feedback, out);
    return design_pool(&c, first, feedback, out);
}
