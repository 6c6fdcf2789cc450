/*
 * rules_scan.c: the built-in Designer's rule for scans: cumsum / cumprod of
 * an elementwise expression of the inputs (x, x * mask, ...) along one dim,
 * read structurally: flip(cumsum(flip(x, d), d), d) is a reverse scan, and
 * cumsum(cat((zeros_like(narrow(x, d, 0, 1)), narrow(x, d, 0, n - 1)), d))
 * an exclusive one. Prefix sums and products accumulate in double.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"
#include "rules_reduction_core.h"

static int same_scalar(const akg_scalar *a, const akg_scalar *b)
{
    if (a->source != b->source)
        return 0;
    if (a->source == AKG_SCALAR_INIT_PARAM)
        return !strcmp(a->init_name, b->init_name);
    return a->value == b->value;
}

/* dims of flip: a one-element list/tuple or an int */
static int flip_dim(const akg_reference *ref, const cJSON *probe, const akg_expr *call,
                    akg_scalar *out)
{
    const akg_expr *d = akg_rule_arg(call, 1, "dims");
    if (d && d->kind == AKG_EX_TUPLE) {
        if (d->n_args != 1)
            return -1;
        d = d->args[0];
    }
    return d && akg_rule_scalar(ref, probe, d, "dim", out, NULL) == AKG_OK ? 0 : -1;
}

static int is_call(const akg_expr *e, const char *op)
{
    return e && e->kind == AKG_EX_CALL && e->name && !strcmp(e->name, op) && !e->is_layer;
}

/* follows a local name to its definition */
static const akg_expr *deref(const akg_reference *ref, const akg_expr *e)
{
    return akg_rule_follow(ref, e);
}

int akg_rules_scan(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *root = akg_rx_returned(ref);
    if (!root)
        return AKG_ENOTFOUND;
    int reverse = 0, exclusive = 0;
    akg_scalar outer_flip;
    const akg_expr *scan = root;
    if (is_call(root, "flip")) {
        if (flip_dim(ref, probe, root, &outer_flip))
            return AKG_ENOTFOUND;
        scan = deref(ref, akg_rule_arg(root, 0, "input"));
        reverse = 1;
    }
    if (!is_call(scan, "cumsum") && !is_call(scan, "cumprod"))
        return AKG_ENOTFOUND;
    const char *mode = !strcmp(scan->name, "cumsum") ? "sum" : "prod";
    akg_scalar dim;
    const akg_expr *de = akg_rule_arg(scan, 1, "dim");
    if (!de || akg_rule_scalar(ref, probe, de, "dim", &dim, NULL) != AKG_OK)
        return akg_rule_unsupported(ref, scan->range, where, err, errlen,
                                    "a scan whose dim cannot be read");
    const akg_expr *x = deref(ref, akg_rule_arg(scan, 0, "input"));
    if (reverse) {
        akg_scalar inner;
        if (!is_call(x, "flip") || flip_dim(ref, probe, x, &inner) || !same_scalar(&inner, &dim) ||
            !same_scalar(&outer_flip, &dim))
            return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                        "a flip that is not the reverse of the scan's dim");
        x = deref(ref, akg_rule_arg(x, 0, "input"));
    }
    if (is_call(x, "cat") || is_call(x, "concat") || is_call(x, "concatenate")) {
        /* (zeros, x[..n-1]) along dim: the exclusive scan of x */
        const akg_expr *parts = akg_rule_arg(x, 0, "tensors");
        const akg_expr *cd = akg_rule_arg(x, 1, "dim");
        akg_scalar cdim;
        if (!parts || parts->kind != AKG_EX_TUPLE || parts->n_args != 2 || !cd ||
            akg_rule_scalar(ref, probe, cd, "dim", &cdim, NULL) != AKG_OK ||
            !same_scalar(&cdim, &dim))
            return akg_rule_unsupported(ref, x->range, where, err, errlen,
                                        "a concatenation before a scan");
        const akg_expr *z = deref(ref, parts->args[0]);
        const akg_expr *body = deref(ref, parts->args[1]);
        if (!(is_call(z, "zeros_like") || is_call(z, "zeros")) || !is_call(body, "narrow"))
            return akg_rule_unsupported(ref, x->range, where, err, errlen,
                                        "a concatenation before a scan (not zeros then a narrow)");
        akg_scalar nd, start;
        if (akg_rule_scalar(ref, probe, akg_rule_arg(body, 1, "dim"), "dim", &nd, NULL) != AKG_OK ||
            !same_scalar(&nd, &dim) ||
            akg_rule_scalar(ref, probe, akg_rule_arg(body, 2, "start"), "start", &start, NULL) !=
                AKG_OK ||
            start.value != 0)
            return akg_rule_unsupported(
                ref, body->range, where, err, errlen,
                "a narrow that is not the leading part along the scan's dim");
        exclusive = 1;
        x = deref(ref, akg_rule_arg(body, 0, "input"));
    }
    akg_design *d = akg_rule_family_design("scan", !strcmp(mode, "sum") ? "cumsum" : "cumprod");
    if (!d)
        return AKG_ENOMEM;
    akg_rx_ctx c;
    akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
    c.precise = akg_rx_numeric_retry(feedback);
    cJSON *e = akg_rx_expr(&c, x);
    if (!e || c.failed || akg_rx_has_stat(e) || !akg_rx_has_elem(e)) {
        cJSON_Delete(e);
        akg_design_free(d);
        return akg_rule_unsupported(ref, x->range, where, err, errlen,
                                    "a scan of an expression the built-in rules cannot read");
    }
    cJSON *p = d->params;
    /* every input of the shape of the first */
    const cJSON *ins = cJSON_GetObjectItem(p, "inputs");
    const cJSON *in0 = akg_rule_probe_input(probe, (int)cJSON_GetArrayItem(ins, 0)->valuedouble);
    for (int k = 0; k < cJSON_GetArraySize(ins); k++) {
        const cJSON *ik = akg_rule_probe_input(probe, (int)cJSON_GetArrayItem(ins, k)->valuedouble);
        const char *kd = cJSON_GetStringValue(cJSON_GetObjectItem(ik, "dtype"));
        if (!cJSON_Compare(cJSON_GetObjectItem(ik, "shape"), cJSON_GetObjectItem(in0, "shape"),
                           1) ||
            (kd && strcmp(kd, "float32") != 0 && strcmp(kd, "bool") != 0)) {
            cJSON_Delete(e);
            akg_design_free(d);
            return akg_rule_unsupported(ref, x->range, where, err, errlen,
                                        "scan inputs of different shapes or dtypes");
        }
    }
    if (cJSON_GetArraySize(cJSON_GetObjectItem(p, "tensors")) > 0) {
        cJSON_Delete(e);
        akg_design_free(d);
        return akg_rule_unsupported(ref, x->range, where, err, errlen,
                                    "a scan of an expression with module parameters");
    }
    cJSON_AddStringToObject(p, "design", "scan");
    cJSON_AddStringToObject(p, "mode", mode);
    cJSON_AddBoolToObject(p, "reverse", reverse);
    cJSON_AddBoolToObject(p, "exclusive", exclusive);
    cJSON_AddItemToObject(p, "elem", e);
    cJSON *spec = cJSON_AddObjectToObject(p, "dims");
    cJSON *dm = cJSON_AddObjectToObject(spec, "dim");
    cJSON_AddNumberToObject(dm, "value", dim.value);
    if (dim.source == AKG_SCALAR_INIT_PARAM)
        cJSON_AddStringToObject(dm, "from_init", dim.init_name);
    cJSON_AddNumberToObject(spec, "n", 1);

    char what[96];
    snprintf(what, sizeof what, "%s%s prefix %s", reverse ? "reverse " : "",
             exclusive ? "exclusive" : "inclusive", mode);
    return akg_rx_finish(&c, d, scan, what, out);
}
