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
#include "rules_pool_sketch.h"

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
    akg_pool_spec ps = {0};
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
    d->sketch_text = akg_pool_sketch(&ps);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
