/*
 * rules_loss.c: the built-in Designer's rules for losses.
 *
 * - Elementwise losses reduced over every element: nn.MSELoss / F.mse_loss,
 *   F.l1_loss, F.smooth_l1_loss (beta), nn.HuberLoss / F.huber_loss (delta),
 *   F.kl_div (mean, sum, batchmean), and any torch.mean / torch.sum over all
 *   dims of an elementwise expression of the inputs (hinge, MSE written out).
 *   One pass of f32 blocks folded into f64, the element run split into parts
 *   across cores (the reduce sketch of rx_sketch_stats.c).
 * - Row losses: F.cross_entropy with int64 class targets (stable
 *   logsumexp per row), nn.TripletMarginLoss / F.triplet_margin_loss,
 *   mean(1 - F.cosine_similarity(a, b, dim=1)) (rx_sketch_loss.c). A row loss
 *   of any other kind is refused with a message, never lowered.
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"
#include "rules_reduction_core.h"

typedef struct {
    const char *op;
    int reduction_pos; /* positional index of reduction= in the functional form */
} named_loss;

static const named_loss named[] = {
    {"mse_loss", 4}, {"l1_loss", 4},       {"smooth_l1_loss", 4},      {"huber_loss", 2},
    {"kl_div", 4},   {"cross_entropy", 6}, {"triplet_margin_loss", 8},
};

/* reduction= of a call or a layer's constructor: "mean" (default), "sum", "batchmean" */
static int read_reduction(const akg_reference *ref, const cJSON *probe, const akg_expr *src,
                          int pos, char *out, size_t n)
{
    snprintf(out, n, "mean");
    const akg_expr *r = src ? akg_rule_arg(src, (size_t)pos, "reduction") : NULL;
    if (!r)
        return 0;
    akg_scalar s;
    const char *str = NULL;
    if (akg_rule_scalar(ref, probe, r, "reduction", &s, &str) != AKG_OK || !str)
        return -1;
    snprintf(out, n, "%s", str);
    return 0;
}

static int scalar_slot(akg_rx_ctx *c, const akg_expr *e, const char *name, double dflt)
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

static int design_rowloss(akg_rx_ctx *c, akg_design *d, const char *kind, const akg_expr *call,
                          const akg_expr *src, int n_inputs, akg_design **out)
{
    const akg_reference *ref = c->ref;
    for (int i = 0; i < n_inputs; i++) {
        const akg_expr *a = akg_rule_arg(call, (size_t)i, NULL);
        int fi = akg_rule_forward_param(ref, a);
        if (fi < 0) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "a loss of something other than forward inputs");
        }
        akg_rx_input(c, fi);
    }
    const cJSON *x0 = akg_rule_probe_input(
        c->probe,
        (int)cJSON_GetArrayItem(cJSON_GetObjectItem(d->params, "inputs"), 0)->valuedouble);
    if (akg_rule_rank(x0) != 2) {
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "a row loss of inputs that are not [batch, features]");
    }
    cJSON *p = d->params;
    cJSON_AddStringToObject(p, "design", "rowloss");
    cJSON_AddStringToObject(p, "kind", kind);
    cJSON_AddBoolToObject(p, "mean", 1);
    const char *what;
    if (!strcmp(kind, "cross_entropy")) {
        const char *tdt =
            cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(p, "input_dtypes"), 1));
        if (!tdt || strcmp(tdt, "int64") != 0 || akg_rule_arg(call, 2, "weight") ||
            akg_rule_arg(call, 7, "label_smoothing")) {
            akg_design_free(d);
            return akg_rx_unsupported(
                c, call, "cross_entropy other than int64 class targets without weights");
        }
        what = "cross entropy";
    } else if (!strcmp(kind, "triplet")) {
        int margin = scalar_slot(c, akg_rule_arg(src, 0, "margin"), "margin", 1.0);
        akg_scalar pn;
        const akg_expr *pe = akg_rule_arg(src, 1, "p");
        if (margin < 0 ||
            (pe && (akg_rule_scalar(ref, c->probe, pe, "p", &pn, NULL) || pn.value != 2.0)) ||
            akg_rule_arg(src, 3, "swap")) {
            akg_design_free(d);
            return akg_rx_unsupported(c, call, "a triplet margin loss other than p=2 without swap");
        }
        cJSON_AddNumberToObject(p, "margin", margin);
        what = "triplet margin loss";
    } else if (!strcmp(kind, "cosine")) {
        cJSON_AddNumberToObject(p, "eps", -1);
        what = "cosine similarity loss";
    } else {
        /* a kind this rule does not know is a design failure, never a kernel */
        akg_design_free(d);
        return akg_rx_unsupported(c, call, "a row loss of a kind the built-in rules do not know");
    }
    return akg_rx_finish(c, d, call, what, out);
}

/* torch.mean(1 - F.cosine_similarity(a, b, dim=1)) */
static const akg_expr *cosine_loss(const akg_reference *ref, const akg_expr *root)
{
    if (root->kind != AKG_EX_CALL || !root->name || strcmp(root->name, "mean") != 0 ||
        akg_rule_arg(root, 1, "dim"))
        return NULL;
    const akg_expr *e = akg_rule_arg(root, 0, "input");
    if (!e || e->kind != AKG_EX_BINOP || !e->name || strcmp(e->name, "-") != 0 ||
        e->args[0]->kind != AKG_EX_NUMBER || e->args[0]->number != 1.0)
        return NULL;
    const akg_expr *cs = akg_rule_follow(ref, e->args[1]);
    if (!cs || cs->kind != AKG_EX_CALL || !cs->name || strcmp(cs->name, "cosine_similarity") != 0)
        return NULL;
    return cs;
}

int akg_rules_loss(const akg_reference *ref, const cJSON *probe, const cJSON *feedback, int attempt,
                   akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *root = akg_rx_returned(ref);
    if (!root)
        return AKG_ENOTFOUND;
    akg_rx_ctx c;
    const akg_expr *cs = cosine_loss(ref, root);
    if (cs) {
        akg_scalar dm;
        const akg_expr *de = akg_rule_arg(cs, 2, "dim");
        if (de && (akg_rule_scalar(ref, probe, de, "dim", &dm, NULL) || dm.value != 1))
            return akg_rule_unsupported(ref, cs->range, where, err, errlen,
                                        "cosine_similarity over a dim other than 1");
        akg_design *d = akg_rule_family_design("loss", "cosine_similarity_loss");
        if (!d)
            return AKG_ENOMEM;
        akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
        c.precise = akg_rx_numeric_retry(feedback);
        return design_rowloss(&c, d, "cosine", cs, NULL, 2, out);
    }
    if (root->kind != AKG_EX_CALL || !root->name)
        return AKG_ENOTFOUND;
    const char *op = root->name;
    const named_loss *nl = NULL;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (!strcmp(named[i].op, op))
            nl = &named[i];
    const akg_ref_layer *layer = root->is_layer ? akg_reference_layer(ref, root->callee + 5) : NULL;
    if (root->is_layer && !layer)
        return AKG_ENOTFOUND;
    /* where scalar arguments are read from: the layer's constructor or the call */
    const akg_expr *src = layer ? layer->ctor : root;
    if (nl) {
        char red[32];
        int rpos = layer ? (strcmp(op, "triplet_margin_loss") == 0 ? 6
                            : !strcmp(op, "huber_loss")            ? 0
                            : !strcmp(op, "smooth_l1_loss")        ? 2
                            : !strcmp(op, "cross_entropy")         ? 4
                                                                   : 2)
                         : nl->reduction_pos;
        if (read_reduction(ref, probe, src, rpos, red, sizeof red))
            return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                        "a loss whose reduction= cannot be read");
        akg_design *d = akg_rule_family_design("loss", op);
        if (!d)
            return AKG_ENOMEM;
        akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
        c.precise = akg_rx_numeric_retry(feedback);
        if (!strcmp(op, "cross_entropy") || !strcmp(op, "triplet_margin_loss")) {
            if (strcmp(red, "mean") != 0) {
                akg_design_free(d);
                return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                            "a row loss with reduction other than mean");
            }
            if (!strcmp(op, "cross_entropy"))
                return design_rowloss(&c, d, "cross_entropy", root, src, 2, out);
            return design_rowloss(&c, d, "triplet", root, layer ? src : NULL, 3, out);
        }
        /* elementwise loss of (input, target) */
        const akg_expr *a = akg_rule_arg(root, 0, "input"), *t = akg_rule_arg(root, 1, "target");
        cJSON *ea = akg_rx_expr(&c, a), *et = ea ? akg_rx_expr(&c, t) : NULL;
        if (!et || c.failed) {
            cJSON_Delete(ea);
            akg_design_free(d);
            return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                        "a loss of operands the built-in rules cannot read");
        }
        cJSON *e;
        if (!strcmp(op, "mse_loss")) {
            e = akg_rx_op("square", akg_rx_op("sub", ea, et, NULL), NULL, NULL);
        } else if (!strcmp(op, "l1_loss")) {
            e = akg_rx_op("abs", akg_rx_op("sub", ea, et, NULL), NULL, NULL);
        } else if (!strcmp(op, "smooth_l1_loss") || !strcmp(op, "huber_loss")) {
            int sm = !strcmp(op, "smooth_l1_loss");
            const akg_expr *pe = layer ? akg_rule_arg(src, sm ? 3 : 1, sm ? "beta" : "delta")
                                       : akg_rule_arg(root, sm ? 5 : 3, sm ? "beta" : "delta");
            int k = scalar_slot(&c, pe, sm ? "beta" : "delta", 1.0);
            if (k < 0) {
                cJSON_Delete(ea);
                cJSON_Delete(et);
                akg_design_free(d);
                return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                            "a loss threshold that cannot be read");
            }
            e = akg_rx_op(sm ? "smooth_l1" : "huber", akg_rx_op("sub", ea, et, NULL),
                          akg_rx_ref("s", k), NULL);
        } else { /* kl_div(input = log q, target = p): p log p - p log q */
            if (akg_rule_arg(root, 5, "log_target")) {
                cJSON_Delete(ea);
                cJSON_Delete(et);
                akg_design_free(d);
                return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                            "kl_div with log_target");
            }
            cJSON *et2 = cJSON_Duplicate(et, 1);
            e = akg_rx_op("sub", akg_rx_op("xlogx", et, NULL, NULL),
                          akg_rx_op("mul", et2, ea, NULL), NULL);
        }
        cJSON *st = cJSON_CreateObject();
        int batch = !strcmp(red, "batchmean");
        cJSON_AddStringToObject(st, "mode", !strcmp(red, "mean") ? "mean" : "sum");
        cJSON_AddItemToObject(st, "expr", e);
        cJSON_AddItemToArray(cJSON_GetObjectItem(d->params, "stats"), st);
        if (strcmp(red, "mean") && strcmp(red, "sum") && !batch) {
            akg_design_free(d);
            return akg_rule_unsupported(ref, root->range, where, err, errlen,
                                        "a loss with reduction='none'");
        }
        cJSON_AddStringToObject(d->params, "div", batch ? "batch" : "none");
        cJSON *spec = cJSON_AddObjectToObject(d->params, "dims");
        cJSON_AddNumberToObject(spec, "all", 1);
        cJSON_AddNumberToObject(d->params, "keepdim", 0);
        cJSON_AddStringToObject(d->params, "design", "reduce");
        char what[96];
        snprintf(what, sizeof what, "%s, reduction=\"%s\"", op, red);
        return akg_rx_finish(&c, d, root, what, out);
    }
    /* torch.mean / torch.sum over all dims of an elementwise expression */
    if ((strcmp(op, "mean") != 0 && strcmp(op, "sum") != 0) || akg_rule_arg(root, 1, "dim"))
        return AKG_ENOTFOUND;
    akg_design *d = akg_rule_family_design("loss", op);
    if (!d)
        return AKG_ENOMEM;
    akg_rx_init(&c, ref, probe, d->params, where, err, errlen);
    c.precise = akg_rx_numeric_retry(feedback);
    int k = akg_rx_add_stat(&c, root, op);
    if (k < 0 || c.failed || cJSON_GetArraySize(cJSON_GetObjectItem(d->params, "tensors")) > 0) {
        akg_design_free(d);
        return AKG_ENOTFOUND;
    }
    const cJSON *ins = cJSON_GetObjectItem(d->params, "inputs");
    const cJSON *in0 =
        akg_rule_probe_input(probe, (int)cJSON_GetNumberValue(cJSON_GetArrayItem(ins, 0)));
    for (int i = 0; i < cJSON_GetArraySize(ins); i++) {
        const cJSON *ik = akg_rule_probe_input(probe, (int)cJSON_GetArrayItem(ins, i)->valuedouble);
        const char *kd = cJSON_GetStringValue(cJSON_GetObjectItem(ik, "dtype"));
        if (!cJSON_Compare(cJSON_GetObjectItem(ik, "shape"), cJSON_GetObjectItem(in0, "shape"),
                           1) ||
            (kd && strcmp(kd, "float32") != 0 && strcmp(kd, "bool") != 0)) {
            akg_design_free(d);
            return akg_rule_unsupported(
                ref, root->range, where, err, errlen,
                "loss inputs of different shapes or dtypes (no broadcasting yet)");
        }
    }
    cJSON_AddStringToObject(d->params, "div", "none");
    cJSON_AddStringToObject(d->params, "design", "reduce");
    snprintf(d->op_name, sizeof d->op_name, "%s_loss", op);
    char what[96];
    snprintf(what, sizeof what, "the %s of an elementwise loss", op);
    return akg_rx_finish(&c, d, root, what, out);
}
