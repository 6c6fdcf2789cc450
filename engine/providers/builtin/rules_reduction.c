/*
 * rules_reduction.c: the built-in Designer's rule for plain reductions:
 * forward returns sum / mean / max / min / prod / argmax / argmin / norm of
 * one input over a dim, a run of dims or all of them (amax/amin, the values
 * of torch.max(x, dim) through [0] or .values, keepdim). Reductions of a
 * computed expression are the loss and norm rules' business.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"
#include "rules_reduction_core.h"

/* The reduction call forward returns, or NULL. */
static const akg_expr *returned_reduction(const akg_rx_ctx *c, const akg_expr *root,
                                          const char **mode)
{
    const akg_expr *call = NULL;
    int through_values = 0;
    if (root->kind == AKG_EX_CALL) {
        call = root;
    } else if (root->kind == AKG_EX_SUBSCRIPT && root->n_args == 1 && root->text &&
               strlen(root->text) > 3 && !strcmp(root->text + strlen(root->text) - 3, "[0]")) {
        call = root->args[0];
        through_values = 1;
    } else if (root->kind == AKG_EX_ATTR && root->name && !strcmp(root->name, "values") &&
               root->n_args == 1) {
        call = root->args[0];
        through_values = 1;
    }
    if (!call || call->kind != AKG_EX_CALL)
        return NULL;
    *mode = akg_rx_reduction_mode(c, call);
    if (!*mode)
        return NULL;
    int pair =
        (!strcmp(call->name, "max") || !strcmp(call->name, "min")) && akg_rule_arg(call, 1, "dim");
    if (pair != through_values)
        return NULL;
    return call;
}

int akg_rules_reduction(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                        int attempt, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *root = akg_rx_returned(ref);
    if (!root)
        return AKG_ENOTFOUND;
    akg_rx_ctx probe_ctx;
    memset(&probe_ctx, 0, sizeof probe_ctx);
    probe_ctx.ref = ref;
    probe_ctx.probe = probe;
    const char *mode = NULL;
    const akg_expr *call = returned_reduction(&probe_ctx, root, &mode);
    if (!call)
        return AKG_ENOTFOUND;
    const akg_expr *x = akg_rule_arg(call, 0, "input");
    int fi = akg_rule_forward_param(ref, x);
    if (fi < 0)
        return AKG_ENOTFOUND; /* a reduction of an expression: losses, norms */
    const char *dt =
        cJSON_GetStringValue(cJSON_GetObjectItem(akg_rule_probe_input(probe, fi), "dtype"));
    if (dt && strcmp(dt, "float32") != 0)
        return akg_rule_unsupported(ref, call->range, where, err, errlen,
                                    "a reduction of a non-float32 tensor");
    akg_design *d = akg_rule_family_design("reduction", mode);
    if (!d)
        return AKG_ENOMEM;
    akg_rx_ctx c;
    akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
    c.precise = akg_rx_numeric_retry(feedback);
    int k = akg_rx_add_stat(&c, call, mode);
    if (k < 0 || c.failed) {
        akg_design_free(d);
        return akg_rule_unsupported(ref, call->range, where, err, errlen,
                                    "a reduction whose dims are not one constant run of dims");
    }
    cJSON_AddStringToObject(d->params, "design", "reduce");
    if (!strcmp(mode, "argmax") || !strcmp(mode, "argmin"))
        cJSON_AddStringToObject(d->params, "out_dtype", "int64");
    if (!strcmp(mode, "norm"))
        snprintf(d->op_name, sizeof d->op_name, "norm");
    const cJSON *in = akg_rule_probe_input(probe, fi);
    d->rank = akg_rule_rank(in);
    char what[96];
    snprintf(what, sizeof what, "%s of %s", mode, x->name);
    return akg_rx_finish(&c, d, call, what, out);
}
