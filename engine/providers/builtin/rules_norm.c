/*
 * rules_norm.c: the built-in Designer's rules for normalisations.
 *
 * - Channel normalisations over [N, C, spatial...]: nn.GroupNorm /
 *   F.group_norm, nn.InstanceNorm*d / F.instance_norm, nn.BatchNorm*d /
 *   F.batch_norm (training: batch statistics; eval: running statistics).
 *   f64 sums per (sample, group) or per channel, a scale and shift per
 *   channel, one vectorised affine pass (rx_sketch_chnorm.c).
 * - Row normalisations: nn.LayerNorm / F.layer_norm, F.normalize, and any
 *   forward written with torch ops as an elementwise function of the input
 *   and of reductions of it over one run of dims kept with keepdim (RMS
 *   norm, L1 norm, x / torch.norm(x), ...), read structurally from the
 *   expression tree. Statistics in one pass of blocks, then one map pass
 *   (rx_sketch_stats.c).
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"
#include "rules_reduction_core.h"

static int scalar_arg(akg_rx_ctx *c, const akg_expr *e, const char *name, double dflt)
{
    akg_scalar s;
    memset(&s, 0, sizeof s);
    snprintf(s.name, sizeof s.name, "%s", name);
    s.source = AKG_SCALAR_CONST;
    s.value = dflt;
    if (e && akg_rule_scalar(c->ref, c->probe, e, name, &s, NULL) != AKG_OK)
        return -2;
    return akg_rx_scalar(c, &s);
}

static int const_flag(akg_rx_ctx *c, const akg_expr *e, int dflt)
{
    akg_scalar s;
    if (!e)
        return dflt;
    if (akg_rule_scalar(c->ref, c->probe, e, "flag", &s, NULL) != AKG_OK)
        return -1;
    return s.value != 0;
}

/* self.<attr> as a tensor slot, -1 for None/absent, -2 when unreadable. */
static int tensor_arg(akg_rx_ctx *c, const akg_expr *e)
{
    if (!e || e->kind == AKG_EX_NONE)
        return -1;
    if (e->kind == AKG_EX_ATTR && e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_NAME &&
        !strcmp(e->args[0]->name, "self")) {
        int k = akg_rx_tensor(c, e->name);
        return k >= 0 ? k : -2;
    }
    return -2;
}

static int layer_tensor(akg_rx_ctx *c, const char *layer, const char *what)
{
    char attr[128];
    snprintf(attr, sizeof attr, "%s.%s", layer, what);
    return akg_rx_tensor(c, attr);
}

static int finish_chnorm(akg_rx_ctx *c, akg_design *d, const akg_expr *call, akg_design **out)
{
    int rank = akg_rule_rank(akg_rule_probe_input(c->probe, 0));
    if (rank < 2) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "a channel normalisation of a tensor of rank < 2");
    }
    cJSON_AddStringToObject(d->params, "design", "chnorm");
    return akg_rx_finish(c, d, call, "channel normalisation", out);
}

static int design_channel(akg_rx_ctx *c, akg_design *d, const akg_expr *call, const char *op,
                          akg_design **out)
{
    const akg_reference *ref = c->ref;
    const akg_ref_layer *layer = call->is_layer ? akg_reference_layer(ref, call->callee + 5) : NULL;
    const akg_expr *x = akg_rule_arg(call, 0, "input");
    int fi = akg_rule_forward_param(ref, x);
    if (fi != 0 || (call->is_layer && !layer)) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call,
                                  "a normalisation of something other than forward's first input");
    }
    akg_rx_input(c, fi);
    const char *mode = NULL;
    int w = -1, b = -1, eps = -1, groups = -1, rm = -1, rv = -1;
    if (layer) {
        const akg_expr *ctor = layer->ctor;
        int affine;
        if (!strcmp(op, "group_norm")) {
            mode = "group";
            groups = scalar_arg(c, akg_rule_arg(ctor, 0, "num_groups"), "num_groups", 1);
            eps = scalar_arg(c, akg_rule_arg(ctor, 2, "eps"), "eps", 1e-5);
            affine = const_flag(c, akg_rule_arg(ctor, 3, "affine"), 1);
        } else if (!strcmp(op, "instance_norm")) {
            mode = "instance";
            eps = scalar_arg(c, akg_rule_arg(ctor, 1, "eps"), "eps", 1e-5);
            affine = const_flag(c, akg_rule_arg(ctor, 3, "affine"), 0);
            if (const_flag(c, akg_rule_arg(ctor, 4, "track_running_stats"), 0) != 0) {
                akg_design_free(d);
                return akg_rx_unsupported(c, call, "instance norm with track_running_stats");
            }
        } else {
            /* a module in training mode normalises by batch statistics, one in eval mode (as
             * the probe saw it built) by its running statistics when it keeps them */
            const cJSON *mods = cJSON_GetObjectItem(c->probe, "modules");
            const cJSON *training =
                cJSON_GetObjectItem(cJSON_GetObjectItem(mods, layer->name), "training");
            mode = "batch";
            if (cJSON_IsFalse(training)) {
                rm = layer_tensor(c, layer->name, "running_mean");
                rv = layer_tensor(c, layer->name, "running_var");
                if (rm >= 0 && rv >= 0)
                    mode = "eval"; /* without running statistics (track_running_stats=False)
                                    * eval mode normalises by the batch's, as torch does */
                else
                    rm = rv = -1;
            }
            eps = scalar_arg(c, akg_rule_arg(ctor, 1, "eps"), "eps", 1e-5);
            affine = const_flag(c, akg_rule_arg(ctor, 3, "affine"), 1);
        }
        if (affine < 0) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "cannot tell whether the layer is affine");
        }
        if (affine) {
            w = layer_tensor(c, layer->name, "weight");
            b = layer_tensor(c, layer->name, "bias");
        }
    } else if (!strcmp(op, "batch_norm")) {
        int training = const_flag(c, akg_rule_arg(call, 5, "training"), 0);
        rm = tensor_arg(c, akg_rule_arg(call, 1, "running_mean"));
        rv = tensor_arg(c, akg_rule_arg(call, 2, "running_var"));
        w = tensor_arg(c, akg_rule_arg(call, 3, "weight"));
        b = tensor_arg(c, akg_rule_arg(call, 4, "bias"));
        eps = scalar_arg(c, akg_rule_arg(call, 7, "eps"), "eps", 1e-5);
        if (training < 0 || w == -2 || b == -2 || (!training && (rm < 0 || rv < 0))) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "batch_norm arguments that are not self tensors");
        }
        mode = training ? "batch" : "eval";
    } else if (!strcmp(op, "group_norm")) {
        mode = "group";
        groups = scalar_arg(c, akg_rule_arg(call, 1, "num_groups"), "num_groups", 1);
        w = tensor_arg(c, akg_rule_arg(call, 2, "weight"));
        b = tensor_arg(c, akg_rule_arg(call, 3, "bias"));
        eps = scalar_arg(c, akg_rule_arg(call, 4, "eps"), "eps", 1e-5);
    } else if (!strcmp(op, "instance_norm")) {
        mode = "instance";
        if (akg_rule_arg(call, 1, "running_mean") &&
            akg_rule_arg(call, 1, "running_mean")->kind != AKG_EX_NONE) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "instance_norm with running statistics");
        }
        w = tensor_arg(c, akg_rule_arg(call, 3, "weight"));
        b = tensor_arg(c, akg_rule_arg(call, 4, "bias"));
        eps = scalar_arg(c, akg_rule_arg(call, 7, "eps"), "eps", 1e-5);
    }
    if (!mode || eps < 0 || w == -2 || b == -2 || groups == -2) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "normalisation arguments that cannot be read");
    }
    cJSON *p = d->params;
    cJSON_AddStringToObject(p, "mode", mode);
    cJSON_AddNumberToObject(p, "weight", w);
    cJSON_AddNumberToObject(p, "bias", b);
    cJSON_AddNumberToObject(p, "eps", eps);
    cJSON_AddNumberToObject(p, "groups", groups);
    cJSON_AddNumberToObject(p, "running_mean", rm);
    cJSON_AddNumberToObject(p, "running_var", rv);
    return finish_chnorm(c, d, call, out);
}

/* Layer norm as a row design: out = (x - mean) * rsqrt(var + eps) * w + b. */
static int design_layer_norm(akg_rx_ctx *c, akg_design *d, const akg_expr *call, akg_design **out)
{
    const akg_reference *ref = c->ref;
    const akg_ref_layer *layer = call->is_layer ? akg_reference_layer(ref, call->callee + 5) : NULL;
    const akg_expr *x = akg_rule_arg(call, 0, "input");
    int fi = akg_rule_forward_param(ref, x);
    if (fi < 0 || (call->is_layer && !layer)) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "a layer norm of something other than a forward input");
    }
    int in = akg_rx_input(c, fi);
    const akg_expr *shape_e, *eps_e;
    int w = -1, b = -1;
    if (layer) {
        shape_e = akg_rule_arg(layer->ctor, 0, "normalized_shape");
        eps_e = akg_rule_arg(layer->ctor, 1, "eps");
        int affine = const_flag(c, akg_rule_arg(layer->ctor, 2, "elementwise_affine"), 1);
        if (affine) {
            w = layer_tensor(c, layer->name, "weight");
            b = layer_tensor(c, layer->name, "bias");
        }
    } else {
        shape_e = akg_rule_arg(call, 1, "normalized_shape");
        w = tensor_arg(c, akg_rule_arg(call, 2, "weight"));
        b = tensor_arg(c, akg_rule_arg(call, 3, "bias"));
        eps_e = akg_rule_arg(call, 4, "eps");
    }
    long dims[8];
    int n = akg_rule_int_list(ref, c->probe, shape_e, dims, 8, 1);
    int eps = scalar_arg(c, eps_e, "eps", 1e-5);
    if (n < 1 || eps < 0 || w == -2 || b == -2) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "layer_norm arguments that cannot be read");
    }
    cJSON *p = d->params;
    cJSON *spec = cJSON_AddObjectToObject(p, "dims");
    cJSON_AddNumberToObject(cJSON_AddObjectToObject(spec, "dim"), "value", -n);
    cJSON_AddNumberToObject(spec, "n", n);
    cJSON *stats = cJSON_GetObjectItem(p, "stats");
    cJSON *s0 = cJSON_CreateObject();
    cJSON_AddStringToObject(s0, "mode", "mean");
    cJSON_AddItemToObject(s0, "expr", akg_rx_ref("in", in));
    cJSON_AddItemToArray(stats, s0);
    cJSON *s1 = cJSON_CreateObject();
    cJSON_AddStringToObject(s1, "mode", "mean");
    cJSON_AddItemToObject(s1, "expr", akg_rx_op("square", akg_rx_ref("in", in), NULL, NULL));
    cJSON_AddItemToArray(stats, s1);
    /* rv0 = 1 / sqrt(max(E[x^2] - E[x]^2, 0) + eps), in double */
    cJSON *var = akg_rx_op("max",
                           akg_rx_op("sub", akg_rx_ref("st", 1),
                                     akg_rx_op("square", akg_rx_ref("st", 0), NULL, NULL), NULL),
                           cJSON_CreateNumber(0), NULL);
    cJSON_AddItemToArray(
        cJSON_GetObjectItem(p, "rowvals"),
        akg_rx_op("rsqrt", akg_rx_op("add", var, akg_rx_ref("s", eps), NULL), NULL, NULL));
    cJSON *o = akg_rx_op("mul", akg_rx_op("sub", akg_rx_ref("in", in), akg_rx_ref("st", 0), NULL),
                         akg_rx_ref("rv", 0), NULL);
    if (w >= 0)
        o = akg_rx_op("mul", o, akg_rx_ref("p", w), NULL);
    if (b >= 0)
        o = akg_rx_op("add", o, akg_rx_ref("p", b), NULL);
    cJSON_AddItemToObject(p, "out", o);
    cJSON_AddStringToObject(p, "design", "rowmap");
    return akg_rx_finish(c, d, call, "layer normalisation (mean, biased variance)", out);
}

/* F.normalize(x, p, dim, eps) = x / max(||x||_p, eps) for p in {1, 2}. */
static int design_normalize(akg_rx_ctx *c, akg_design *d, const akg_expr *call, akg_design **out)
{
    const akg_expr *x = akg_rule_arg(call, 0, "input");
    int fi = akg_rule_forward_param(c->ref, x);
    akg_scalar ps, ds;
    const akg_expr *pe = akg_rule_arg(call, 1, "p"), *de = akg_rule_arg(call, 2, "dim");
    double pv = 2.0;
    if (pe) {
        if (akg_rule_scalar(c->ref, c->probe, pe, "p", &ps, NULL) != AKG_OK) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "normalize with an unreadable p");
        }
        pv = ps.value;
    }
    int eps = scalar_arg(c, akg_rule_arg(call, 3, "eps"), "eps", 1e-12);
    memset(&ds, 0, sizeof ds);
    ds.value = 1;
    if (fi < 0 || (pv != 1.0 && pv != 2.0) || eps < 0 ||
        (de && akg_rule_scalar(c->ref, c->probe, de, "dim", &ds, NULL) != AKG_OK)) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "F.normalize other than p=1 or p=2 of a forward input");
    }
    int in = akg_rx_input(c, fi);
    cJSON *p = d->params;
    cJSON *spec = cJSON_AddObjectToObject(p, "dims");
    cJSON *dm = cJSON_AddObjectToObject(spec, "dim");
    cJSON_AddNumberToObject(dm, "value", ds.value);
    if (ds.source == AKG_SCALAR_INIT_PARAM)
        cJSON_AddStringToObject(dm, "from_init", ds.init_name);
    cJSON_AddNumberToObject(spec, "n", 1);
    cJSON *s0 = cJSON_CreateObject();
    cJSON_AddStringToObject(s0, "mode", pv == 2.0 ? "norm2" : "sum");
    cJSON_AddItemToObject(s0, "expr",
                          pv == 2.0 ? akg_rx_ref("in", in)
                                    : akg_rx_op("abs", akg_rx_ref("in", in), NULL, NULL));
    cJSON_AddItemToArray(cJSON_GetObjectItem(p, "stats"), s0);
    cJSON_AddItemToArray(
        cJSON_GetObjectItem(p, "rowvals"),
        akg_rx_op("div", cJSON_CreateNumber(1.0),
                  akg_rx_op("max", akg_rx_ref("st", 0), akg_rx_ref("s", eps), NULL), NULL));
    cJSON_AddItemToObject(p, "out",
                          akg_rx_op("mul", akg_rx_ref("in", in), akg_rx_ref("rv", 0), NULL));
    cJSON_AddStringToObject(p, "design", "rowmap");
    return akg_rx_finish(c, d, call, "x / max(norm(x), eps)", out);
}

int akg_rules_norm(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *root = akg_rx_returned(ref);
    if (!root)
        return AKG_ENOTFOUND;
    const char *dt =
        cJSON_GetStringValue(cJSON_GetObjectItem(akg_rule_probe_input(probe, 0), "dtype"));
    akg_rx_ctx c;
    if (root->kind == AKG_EX_CALL && root->name) {
        const char *op = root->name;
        int channel =
            !strcmp(op, "group_norm") || !strcmp(op, "instance_norm") || !strcmp(op, "batch_norm");
        int layer_norm = !strcmp(op, "layer_norm");
        int normalize = !strcmp(op, "normalize") && !root->is_layer;
        if (channel || layer_norm || normalize) {
            if (dt && strcmp(dt, "float32") != 0)
                return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                            "a normalisation of a non-float32 tensor");
            akg_design *d = akg_rule_family_design("norm", op);
            if (!d)
                return AKG_ENOMEM;
            akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
            c.precise = akg_rx_numeric_retry(feedback);
            if (channel)
                return design_channel(&c, d, root, op, out);
            if (layer_norm)
                return design_layer_norm(&c, d, root, out);
            return design_normalize(&c, d, root, out);
        }
    }
    /* an elementwise function of the inputs and of their row statistics */
    akg_design *d = akg_rule_family_design("norm", "rownorm");
    if (!d)
        return AKG_ENOMEM;
    akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
    c.precise = akg_rx_numeric_retry(feedback);
    cJSON *e = akg_rx_expr(&c, root);
    if (!e || c.failed || !akg_rx_has_elem(e) || !akg_rx_has_stat(e)) {
        cJSON_Delete(e);
        akg_design_free(d);
        return AKG_ENOTFOUND;
    }
    /* statistics broadcast back over the row: kept dims, or all dims */
    if (!c.keepdim) {
        cJSON_Delete(e);
        akg_design_free(d);
        return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                    "a reduction without keepdim=True combined with its input");
    }
    e = akg_rx_hoist(d->params, e);
    cJSON_AddItemToObject(d->params, "out", e);
    cJSON_AddStringToObject(d->params, "design", "rowmap");
    /* every input of one shape; parameters only along a trailing reduced run */
    int nin = cJSON_GetArraySize(cJSON_GetObjectItem(d->params, "inputs"));
    const cJSON *in0 = akg_rule_probe_input(
        probe, (int)cJSON_GetArrayItem(cJSON_GetObjectItem(d->params, "inputs"), 0)->valuedouble);
    for (int k = 0; k < nin; k++) {
        const cJSON *ik = akg_rule_probe_input(
            probe,
            (int)cJSON_GetArrayItem(cJSON_GetObjectItem(d->params, "inputs"), k)->valuedouble);
        const char *kd = cJSON_GetStringValue(cJSON_GetObjectItem(ik, "dtype"));
        if (!cJSON_Compare(cJSON_GetObjectItem(ik, "shape"), cJSON_GetObjectItem(in0, "shape"),
                           1) ||
            (kd && strcmp(kd, "float32") != 0 && strcmp(kd, "bool") != 0)) {
            akg_design_free(d);
            return akg_rule_unsupported(
                ref, root->range, where, err, errlen,
                "inputs of different shapes or dtypes (no broadcasting yet)");
        }
    }
    if (cJSON_GetArraySize(cJSON_GetObjectItem(d->params, "tensors")) > 0) {
        const cJSON *dims = cJSON_GetObjectItem(d->params, "dims");
        int r = akg_rule_rank(in0);
        int d0 = (int)cJSON_GetNumberValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(dims, "dim"), "value"));
        int n = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(dims, "n"));
        if (d0 < 0)
            d0 += r;
        long D = 1;
        for (int k = d0; k < d0 + n && k < r; k++)
            D *= akg_rule_dim(in0, k);
        int ok = cJSON_GetObjectItem(dims, "dim") && d0 + n == r;
        const cJSON *t;
        cJSON_ArrayForEach(t, cJSON_GetObjectItem(d->params, "tensors"))
        {
            long numel = 1;
            const cJSON *v;
            cJSON_ArrayForEach(v, cJSON_GetObjectItem(t, "shape")) numel *= (long)v->valuedouble;
            ok = ok && numel == D;
        }
        if (!ok) {
            akg_design_free(d);
            return akg_rule_unsupported(
                ref, root->range, where, err, errlen,
                "a parameter that does not run along the reduced trailing dims");
        }
    }
    return akg_rx_finish(&c, d, root, "an elementwise function of the inputs and their statistics",
                         out);
}
