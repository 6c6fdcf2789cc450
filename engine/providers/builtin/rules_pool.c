/*
 * rules_pool.c: the built-in Designer's rules for the pooling family.
 *
 * forward must return one pooling layer (nn.MaxPool1d/2d/3d, nn.AvgPool1d/2d/3d
 * made in __init__) applied to a forward input. Window, stride (None: the
 * window), padding, dilation, ceil_mode, count_include_pad and
 * divisor_override are read from the constructor through rule_util; ModelNew
 * builds the same layer from the same arguments and reads its geometry at run
 * time. The design is direct: one output row per task, OWB outputs at a time
 * in a vector accumulator, every tap a vectorised pass over the valid span.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"

static const char *pool_letters[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};

typedef struct {
    const char *name;                    /* sketch name */
    const char *layer;                   /* Model's attribute holding the layer */
    const char *input;                   /* forward's argument */
    int dims, is_max, rank;              /* spatial dims, max or avg, the input's rank */
    int ceil_mode, include_pad, divisor; /* as the constructor sets them (divisor: override) */
    long kernel[3], stride[3], padding[3], dilation[3]; /* the window, per spatial dim */
    long owb;
} pool_spec;

/* The sketch of a pooling layer: one output row per task (parallel over rows), at most OWB
 * outputs of the row at a time in an accumulator; every tap whose input row lies inside the
 * tensor is a vectorised pass over the outputs, reading the input with the layer's stride
 * (padded columns read as the identity of the combination: -inf for max, 0 for the sum);
 * average pooling divides by the window's size clipped as count_include_pad says. The
 * window (kernel, stride, padding, dilation), ceil_mode and count_include_pad are
 * specialised: constexprs bound to the layer, so a model with another window is refused, and
 * the valid span of every tap costs no division at run time. The input's sizes are read at
 * run time. The taps are vectorised 8 f32 lanes wide (256 bits): rows are short, and wider
 * vectors measured slower on them. */
static char *pool_sketch(const pool_spec *ps)
{
    int dims = ps->dims;
    const char *const *L = pool_letters[dims - 1];
    const char *w = L[dims - 1];
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_appendf(
        &b,
        "# %s: direct %s pooling. One output row per task, at most OWB outputs of the\n"
        "# row at a time in an accumulator, each window tap a vectorised pass over them.\n",
        ps->name, ps->is_max ? "max" : "average");
    akg_buf_appendf(&b, "sketch %s {\n  symbols: NB, C, NC", ps->name);
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s, O%s", L[i], L[i]);
    if (ps->divisor)
        akg_buf_puts(&b, ", DIVO");
    akg_buf_puts(&b, ";\n  tensors: x[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_puts(&b, "]: f32; y[NC");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_appendf(&b, "]: f32;\n  constexpr: OWB = tune(%ld, 64, 1024), CEIL = %d", ps->owb,
                    ps->ceil_mode);
    if (!ps->is_max)
        akg_buf_appendf(&b, ", CIP = %d", ps->include_pad);
    akg_buf_puts(&b, ";\n  constexpr: ");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, "%sK%s = %ld, S%s = %ld, P%s = %ld, DL%s = %ld", i ? ", " : "", L[i],
                        ps->kernel[i], L[i], ps->stride[i], L[i], ps->padding[i], L[i],
                        ps->dilation[i]);
    akg_buf_puts(&b, ";\n");
    /* binding: the input's batch and channel dims merged; the geometry from the layer */
    bool batch = ps->rank == dims + 2;
    akg_buf_appendf(&b, "  bind: x = input(\"%s\", [%s", ps->input, batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", I%s", L[i]);
    akg_buf_appendf(&b, "])%s, NC = NB * C\n", batch ? "" : ", NB = 1");
    for (int i = 0; i < dims; i++) {
        akg_buf_appendf(
            &b,
            "  bind: K%s = attr(\"%s.kernel_size\", %d), S%s = attr(\"%s.stride\", %d), "
            "P%s = attr(\"%s.padding\", %d)",
            L[i], ps->layer, i, L[i], ps->layer, i, L[i], ps->layer, i);
        if (ps->is_max)
            akg_buf_appendf(&b, ", DL%s = attr(\"%s.dilation\", %d)\n", L[i], ps->layer, i);
        else
            akg_buf_puts(&b, "\n");
    }
    /* output sizes as PyTorch computes them (ceil_mode: a window must start inside the input
     * or its left padding) */
    akg_buf_puts(&b, "  bind: ");
    for (int i = 0; i < dims; i++) {
        const char *l = L[i];
        if (ps->ceil_mode)
            akg_buf_appendf(
                &b,
                "%sO%s = min((I%s + 2 * P%s - DL%s * (K%s - 1) - 1 + S%s - 1) // S%s + 1, "
                "(I%s + P%s - 1) // S%s + 1)",
                i ? ", " : "", l, l, l, l, l, l, l, l, l, l);
        else
            akg_buf_appendf(&b, "%sO%s = (I%s + 2 * P%s - DL%s * (K%s - 1) - 1) // S%s + 1",
                            i ? ", " : "", l, l, l, l, l, l);
    }
    akg_buf_appendf(&b, ", y = output(0, [%s", batch ? "NB, C" : "C");
    for (int i = 0; i < dims; i++)
        akg_buf_appendf(&b, ", O%s", L[i]);
    akg_buf_appendf(&b, "]), CEIL = attr(\"%s.ceil_mode\")", ps->layer);
    if (!ps->is_max)
        akg_buf_appendf(&b, ", CIP = attr(\"%s.count_include_pad\")", ps->layer);
    if (ps->divisor)
        akg_buf_appendf(&b, ", DIVO = attr(\"%s.divisor_override\")", ps->layer);
    akg_buf_puts(&b, "\n\n  @llm_hint(\"parallel\", \"coreidx\")\n  for r in range(0, NC):\n");
    /* the output rows (all but the last spatial dim) */
    int depth = 2;
    char pre[96] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        akg_buf_appendf(&b, "%*sfor o%s in range(0, O%s):\n", 2 * depth, "", l, l);
        depth++;
        akg_buf_appendf(&b, "%*s%s0 = o%s * S%s - P%s\n", 2 * depth, "", l, l, l, l);
        if (!ps->is_max && !ps->divisor) {
            if (ps->include_pad)
                akg_buf_appendf(&b, "%*sd%s = min(%s0 + K%s, I%s + P%s) - %s0\n", 2 * depth, "", l,
                                l, l, l, l, l);
            else
                akg_buf_appendf(&b, "%*sd%s = min(%s0 + K%s, I%s) - max(%s0, 0)\n", 2 * depth, "",
                                l, l, l, l, l);
        }
        size_t n = strlen(pre);
        snprintf(pre + n, sizeof pre - n, "o%s, ", l);
    }
    akg_buf_appendf(&b, "%*sfor q0 in range(0, O%s, OWB):\n", 2 * depth, "", w);
    depth++;
    int d0 = depth;
    akg_buf_appendf(&b, "%*sqw = min(OWB, O%s - q0)\n", 2 * depth, "", w);
    akg_buf_appendf(&b, "%*sacc = alloc([qw], llm_hint=[\"fast\", \"accumulator\", \"%s\"])\n",
                    2 * depth, "", ps->is_max ? "init_neg_inf" : "init_zero");
    char region[256] = "";
    for (int i = 0; i < dims - 1; i++) {
        const char *l = L[i];
        akg_buf_appendf(&b, "%*sfor k%s in range(0, K%s):\n", 2 * depth, "", l, l);
        depth++;
        akg_buf_appendf(&b, "%*si%s = %s0 + k%s * DL%s\n", 2 * depth, "", l, l, l, l);
        akg_buf_appendf(&b, "%*sif i%s >= 0 and i%s < I%s:\n", 2 * depth, "", l, l, l);
        depth++;
        size_t n = strlen(region);
        snprintf(region + n, sizeof region - n, "i%s, ", l);
    }
    akg_buf_appendf(&b, "%*sfor k%s in range(0, K%s):\n", 2 * depth, "", w, w);
    depth++;
    akg_buf_appendf(&b, "%*sc0 = q0 * S%s - P%s + k%s * DL%s\n", 2 * depth, "", w, w, w, w);
    /* unit stride (contiguous input) and any other stride, as two branches */
    for (int unit = 1; unit >= 0; unit--) {
        if (unit)
            akg_buf_appendf(&b, "%*sif S%s == 1:\n", 2 * depth, "", w);
        else
            akg_buf_appendf(&b, "%*selse:\n", 2 * depth, "");
        akg_buf_appendf(&b, "%*st = alloc([qw])\n", 2 * depth + 2, "");
        if (unit)
            akg_buf_appendf(&b, "%*sload(x[r, %sc0:c0 + qw] -> t, other=%s)\n", 2 * depth + 2, "",
                            region, ps->is_max ? "-1e999" : "0.0");
        else
            akg_buf_appendf(&b, "%*sload(x[r, %sc0:c0 + qw * S%s:S%s] -> t, other=%s)\n",
                            2 * depth + 2, "", region, w, w, ps->is_max ? "-1e999" : "0.0");
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * depth + 2, "");
        akg_buf_appendf(&b, "%*sacc = %s(acc, t)\n", 2 * depth + 2, "",
                        ps->is_max ? "maximum" : "add");
    }
    if (ps->is_max) {
        akg_buf_appendf(&b, "%*sstore(acc -> y[r, %sq0:q0 + qw])\n}\n", 2 * d0, "", pre);
    } else if (ps->divisor) {
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*sstore(div(acc, DIVO) -> y[r, %sq0:q0 + qw])\n}\n", 2 * d0, "", pre);
    } else {
        /* the divisor of each output: the window clipped as count_include_pad says */
        akg_buf_appendf(&b, "%*sq = arange(q0, q0 + qw)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*s%s0 = q * S%s - P%s\n", 2 * d0, "", w, w, w);
        if (ps->include_pad)
            akg_buf_appendf(&b, "%*sd%s = minimum(%s0 + K%s, I%s + P%s) - %s0\n", 2 * d0, "", w, w,
                            w, w, w, w);
        else
            akg_buf_appendf(&b, "%*sd%s = minimum(%s0 + K%s, I%s) - maximum(%s0, 0)\n", 2 * d0, "",
                            w, w, w, w, w);
        akg_buf_appendf(&b, "%*scount = d%s", 2 * d0, "", w);
        for (int i = 0; i < dims - 1; i++)
            akg_buf_appendf(&b, " * d%s", L[i]);
        akg_buf_puts(&b, "\n");
        akg_buf_appendf(&b, "%*s@llm_hint(\"vectorize\", \"simd\", 8)\n", 2 * d0, "");
        akg_buf_appendf(&b, "%*sstore(div(acc, cast(count, f32)) -> y[r, %sq0:q0 + qw])\n}\n",
                        2 * d0, "", pre);
    }
    return akg_buf_take(&b);
}

/* A boolean constructor argument (False when absent or unreadable). */
static int ctor_flag(const akg_reference *ref, const cJSON *probe, const akg_expr *ctor, int pos,
                     const char *name, int def)
{
    const akg_expr *a = akg_rule_arg(ctor, (size_t)pos, name);
    if (!a)
        return def;
    akg_scalar s;
    memset(&s, 0, sizeof s);
    const char *str = NULL;
    if (akg_rule_scalar(ref, probe, a, name, &s, &str) != AKG_OK || str)
        return def;
    return s.value != 0;
}

int akg_rules_pool(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *e = akg_rule_returned_expr(ref);
    if (!e || e->kind != AKG_EX_CALL || !e->name)
        return AKG_ENOTFOUND;
    int dims = 0, is_max = 0;
    static const char *names[] = {"max_pool1d", "max_pool2d", "max_pool3d",
                                  "avg_pool1d", "avg_pool2d", "avg_pool3d"};
    for (int i = 0; i < 6; i++)
        if (!strcmp(e->name, names[i])) {
            dims = i % 3 + 1;
            is_max = i < 3;
        }
    if (!dims)
        return AKG_ENOTFOUND;
    if (!e->is_layer)
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "functional pooling (the built-in rule reads nn.*Pool layers)");
    const akg_ref_layer *layer = akg_reference_layer(ref, e->callee ? e->callee + 5 : "");
    int input = akg_rule_forward_param(ref, akg_rule_arg(e, 0, "input"));
    if (!layer || !layer->ctor || input < 0)
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "pooling of something other than a forward input");
    const akg_expr *ctor = layer->ctor;
    long kernel[3] = {0}, stride[3] = {0}, padding[3] = {0}, dilation[3] = {1, 1, 1};
    if (akg_rule_int_list(ref, probe, akg_rule_arg(ctor, 0, "kernel_size"), kernel, dims, dims) !=
        dims)
        return akg_rule_unsupported(ref, ctor->range, where, err, errlen,
                                    "a pooling window that cannot be read");
    const akg_expr *st = akg_rule_arg(ctor, 1, "stride");
    akg_scalar s;
    memset(&s, 0, sizeof s);
    const char *str = NULL;
    int stride_none = !st || (akg_rule_scalar(ref, probe, st, "stride", &s, &str) == AKG_OK &&
                              str && !strcmp(str, "None"));
    if (stride_none)
        memcpy(stride, kernel, sizeof stride);
    else if (akg_rule_int_list(ref, probe, st, stride, dims, dims) != dims)
        return akg_rule_unsupported(ref, st->range, where, err, errlen,
                                    "a pooling stride that cannot be read");
    const akg_expr *pd = akg_rule_arg(ctor, 2, "padding");
    if (pd && akg_rule_int_list(ref, probe, pd, padding, dims, dims) != dims)
        return akg_rule_unsupported(ref, pd->range, where, err, errlen,
                                    "a pooling padding that cannot be read");
    if (is_max) {
        const akg_expr *dl = akg_rule_arg(ctor, 3, "dilation");
        if (dl && akg_rule_int_list(ref, probe, dl, dilation, dims, dims) != dims)
            return akg_rule_unsupported(ref, dl->range, where, err, errlen,
                                        "a pooling dilation that cannot be read");
        /* return_indices shows as a second output in the probe */
        if (akg_rule_probe_output(probe, 1))
            return akg_rule_unsupported(ref, ctor->range, where, err, errlen,
                                        "max pooling with return_indices");
    }
    const cJSON *din = akg_rule_probe_input(probe, input);
    const char *dt = cJSON_GetStringValue(cJSON_GetObjectItem(din, "dtype"));
    int rank = akg_rule_rank(din);
    if (!dt || strcmp(dt, "float32") || (rank != dims + 1 && rank != dims + 2))
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "pooling of a tensor that is not float32 [N, C, spatial]");
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    akg_design *d = akg_rule_family_design("pool", e->name);
    if (!d)
        return AKG_ENOMEM;
    d->rank = rank;
    d->parallel = 1;
    d->vectorize = 1;
    cJSON *p = d->params;
    cJSON_AddNumberToObject(p, "input", input);
    cJSON_AddStringToObject(p, "mode", is_max ? "max" : "avg");
    cJSON_AddNumberToObject(p, "dims", dims);
    cJSON_AddStringToObject(p, "layer", layer->name);
    cJSON_AddStringToObject(p, "type", layer->type);
    cJSON_AddStringToObject(p, "args", layer->args_text ? layer->args_text : "");
    const char *keys[] = {"kernel", "stride", "padding", "dilation"};
    const long *vals[] = {kernel, stride, padding, dilation};
    for (int k = 0; k < 4; k++) {
        cJSON *v = cJSON_AddArrayToObject(p, keys[k]);
        for (int j = 0; j < dims; j++)
            cJSON_AddItemToArray(v, cJSON_CreateNumber((double)vals[k][j]));
    }
    pool_spec ps = {0};
    ps.name = e->name;
    ps.layer = layer->name;
    ps.input = ref->forward_params[input].name;
    ps.dims = dims;
    ps.is_max = is_max;
    ps.rank = rank;
    ps.owb = fb ? 64 : 256;
    for (int j = 0; j < dims; j++) {
        ps.kernel[j] = kernel[j];
        ps.stride[j] = stride[j];
        ps.padding[j] = padding[j];
        ps.dilation[j] = dilation[j];
    }
    /* MaxPool(kernel, stride, padding, dilation, return_indices, ceil_mode);
     * AvgPool(kernel, stride, padding, ceil_mode, count_include_pad, divisor_override) */
    ps.ceil_mode = ctor_flag(ref, probe, ctor, is_max ? 5 : 3, "ceil_mode", 0);
    ps.include_pad = is_max ? 1 : ctor_flag(ref, probe, ctor, 4, "count_include_pad", 1);
    if (!is_max) {
        const akg_expr *dv = akg_rule_arg(ctor, 5, "divisor_override");
        akg_scalar sv;
        memset(&sv, 0, sizeof sv);
        const char *dstr = NULL;
        ps.divisor = dv &&
                     akg_rule_scalar(ref, probe, dv, "divisor_override", &sv, &dstr) == AKG_OK &&
                     !dstr;
    }
    d->sketch_text = pool_sketch(&ps);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
