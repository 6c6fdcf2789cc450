/*
 * rule_util.c: helpers shared by the built-in Designer's rules (rule_util.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "rule_util.h"

const akg_expr *akg_rule_arg(const akg_expr *call, size_t pos, const char *name)
{
    size_t positional = 0;
    if (!call)
        return NULL;
    for (size_t i = 0; i < call->n_args; i++) {
        const akg_expr *a = call->args[i];
        if (!a)
            continue;
        if (a->kind == AKG_EX_KWARG) {
            if (name && a->name && strcmp(a->name, name) == 0 && a->n_args == 1)
                return a->args[0];
            continue;
        }
        if (positional == pos)
            return a;
        positional++;
    }
    return NULL;
}

static int probe_init_value(const cJSON *probe, int i, double *out)
{
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "init_inputs"), i);
    const cJSON *val = cJSON_GetObjectItem(v, "value");
    if (cJSON_IsNumber(val)) {
        *out = val->valuedouble;
        return 1;
    }
    if (cJSON_IsBool(val)) {
        *out = cJSON_IsTrue(val);
        return 1;
    }
    return 0;
}

static int scalar_rec(const akg_reference *ref, const cJSON *probe, const akg_expr *e,
                      const char *name, akg_scalar *out, const char **str, int depth)
{
    if (!e || depth > 8)
        return AKG_EINVAL;
    switch (e->kind) {
    case AKG_EX_NUMBER:
    case AKG_EX_BOOL:
        out->source = AKG_SCALAR_CONST;
        out->value = e->number;
        return AKG_OK;
    case AKG_EX_NONE:
        out->source = AKG_SCALAR_CONST;
        out->value = 0;
        if (str)
            *str = "None";
        return AKG_OK;
    case AKG_EX_STRING:
        out->source = AKG_SCALAR_CONST;
        out->value = 0;
        if (str)
            *str = e->name;
        return AKG_OK;
    case AKG_EX_UNARY:
        if (e->name && !strcmp(e->name, "-") && e->n_args == 1) {
            int rc = scalar_rec(ref, probe, e->args[0], name, out, str, depth + 1);
            if (rc == AKG_OK && out->source == AKG_SCALAR_CONST) {
                out->value = -out->value;
                return AKG_OK;
            }
        }
        return AKG_EINVAL;
    case AKG_EX_NAME: {
        int idx = akg_reference_init_param(ref, e->name);
        if (idx < 0)
            return AKG_EINVAL;
        out->source = AKG_SCALAR_INIT_PARAM;
        out->init_index = idx;
        snprintf(out->init_name, sizeof out->init_name, "%s", e->name);
        if (probe_init_value(probe, idx, &out->value))
            return AKG_OK;
        /* a string the probe saw the constructor called with */
        const cJSON *pv = cJSON_GetObjectItem(
            cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "init_inputs"), idx), "value");
        if (str && cJSON_IsString(pv)) {
            *str = pv->valuestring;
            return AKG_OK;
        }
        const char *def = ref->init_params[idx].default_text;
        char *end = NULL;
        out->value = def ? strtod(def, &end) : 0;
        if (def && end != def)
            return AKG_OK;
        if (def && str && (def[0] == '\'' || def[0] == '"'))
            return AKG_OK;
        return AKG_EINVAL;
    }
    case AKG_EX_ATTR:
        if (e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_NAME &&
            !strcmp(e->args[0]->name, "self")) {
            const akg_expr *v = akg_reference_attr(ref, e->name);
            return v ? scalar_rec(ref, probe, v, name, out, str, depth + 1) : AKG_EINVAL;
        }
        return AKG_EINVAL;
    default:
        return AKG_EINVAL;
    }
}

int akg_rule_scalar(const akg_reference *ref, const cJSON *probe, const akg_expr *e,
                    const char *name, akg_scalar *out, const char **str)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name ? name : "s");
    if (str)
        *str = NULL;
    return scalar_rec(ref, probe, e, name, out, str, 0);
}

int akg_rule_int_list(const akg_reference *ref, const cJSON *probe, const akg_expr *e, long *out,
                      int max, int n_if_scalar)
{
    if (!e)
        return -1;
    /* follow self.<attr> to a tuple literal */
    for (int depth = 0; e && e->kind == AKG_EX_ATTR && depth < 8; depth++) {
        if (!(e->n_args == 1 && e->args[0] && e->args[0]->kind == AKG_EX_NAME &&
              !strcmp(e->args[0]->name, "self")))
            break;
        const akg_expr *v = akg_reference_attr(ref, e->name);
        if (!v || v->kind != AKG_EX_TUPLE)
            break;
        e = v;
    }
    if (e->kind == AKG_EX_TUPLE) {
        int n = 0;
        for (size_t i = 0; i < e->n_args && n < max; i++) {
            akg_scalar s;
            if (akg_rule_scalar(ref, probe, e->args[i], "v", &s, NULL) != AKG_OK)
                return -1;
            out[n++] = (long)s.value;
        }
        return n;
    }
    akg_scalar s;
    if (akg_rule_scalar(ref, probe, e, "v", &s, NULL) != AKG_OK)
        return -1;
    int n = n_if_scalar < max ? n_if_scalar : max;
    for (int i = 0; i < n; i++)
        out[i] = (long)s.value;
    return n;
}

const cJSON *akg_rule_probe_input(const cJSON *probe, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "inputs"), i);
}

const cJSON *akg_rule_probe_output(const cJSON *probe, int i)
{
    return cJSON_GetArrayItem(cJSON_GetObjectItem(probe, "outputs"), i);
}

const cJSON *akg_rule_probe_param(const cJSON *probe, const char *name)
{
    const cJSON *p;
    cJSON_ArrayForEach(p, cJSON_GetObjectItem(probe, "params"))
    {
        const char *n = cJSON_GetStringValue(cJSON_GetObjectItem(p, "name"));
        if (n && !strcmp(n, name))
            return p;
    }
    return NULL;
}

int akg_rule_rank(const cJSON *desc)
{
    const cJSON *shape = cJSON_GetObjectItem(desc, "shape");
    return cJSON_IsArray(shape) ? cJSON_GetArraySize(shape) : -1;
}

long akg_rule_dim(const cJSON *desc, int d)
{
    int r = akg_rule_rank(desc);
    if (r < 0)
        return -1;
    if (d < 0)
        d += r;
    if (d < 0 || d >= r)
        return -1;
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItem(desc, "shape"), d);
    return cJSON_IsNumber(v) ? (long)v->valuedouble : -1;
}

int akg_rule_forward_param(const akg_reference *ref, const akg_expr *e)
{
    if (!e || e->kind != AKG_EX_NAME)
        return -1;
    for (size_t i = 0; i < ref->n_forward_params; i++)
        if (!strcmp(ref->forward_params[i].name, e->name))
            return (int)i;
    return -1;
}

const akg_expr *akg_rule_returned_expr(const akg_reference *ref)
{
    if (ref->n_body == 0 || ref->body[ref->n_body - 1].kind != AKG_STMT_RETURN)
        return NULL;
    /* y = EXPR; return y  (and chains of plain renames) */
    return akg_rule_follow(ref, ref->body[ref->n_body - 1].value);
}

const akg_expr *akg_rule_follow(const akg_reference *ref, const akg_expr *e)
{
    for (size_t guard = 0; e && e->kind == AKG_EX_NAME && guard < 16; guard++) {
        const akg_expr *def = NULL;
        for (size_t i = 0; i + 1 < ref->n_body; i++)
            if (ref->body[i].kind == AKG_STMT_ASSIGN && ref->body[i].target &&
                !strcmp(ref->body[i].target, e->name))
                def = ref->body[i].value; /* the last assignment before the return wins */
        if (!def)
            break;
        e = def;
    }
    return e;
}

int akg_rule_unsupported(const akg_reference *ref, akg_range r, akg_range *where, char *err,
                         size_t errlen, const char *what)
{
    if (where)
        *where = r;
    return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                    "%s:%u: %s; the built-in provider has no rule for it (write model_new.py by "
                    "hand and check it with --workflow verifier_only)",
                    ref->path ? ref->path : "reference", r.start_row + 1, what);
}

akg_design *akg_rule_family_design(const char *family, const char *op_name)
{
    akg_design *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->kind = AKG_DESIGN_FAMILY;
    snprintf(d->family, sizeof d->family, "%s", family);
    snprintf(d->op_name, sizeof d->op_name, "%s", op_name);
    snprintf(d->dtype, sizeof d->dtype, "float32");
    d->params = cJSON_CreateObject();
    d->parallel = 1;
    d->vectorize = 1;
    d->math = AKG_MATH_FAST;
    return d;
}

const cJSON *akg_rule_probe_attr(const cJSON *probe, const char *module, const char *attr)
{
    const cJSON *m = cJSON_GetObjectItem(cJSON_GetObjectItem(probe, "modules"), module);
    return cJSON_GetObjectItem(cJSON_GetObjectItem(m, "attrs"), attr);
}

int akg_rule_probe_ints(const cJSON *probe, const char *module, const char *attr, long *out, int n)
{
    const cJSON *v = akg_rule_probe_attr(probe, module, attr);
    if (cJSON_IsNumber(v)) {
        for (int i = 0; i < n; i++)
            out[i] = (long)v->valuedouble;
        return 0;
    }
    if (!cJSON_IsArray(v) || cJSON_GetArraySize(v) != n)
        return -1;
    for (int i = 0; i < n; i++) {
        const cJSON *e = cJSON_GetArrayItem(v, i);
        if (!cJSON_IsNumber(e))
            return -1;
    }
    for (int i = 0; i < n; i++)
        out[i] = (long)cJSON_GetArrayItem(v, i)->valuedouble;
    return 0;
}

int akg_rule_vector_floats(const cJSON *probe)
{
    const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(probe, "cpu");
    const cJSON *simd = cJSON_GetObjectItemCaseSensitive(cpu, "simd");
    const char *vendor = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cpu, "vendor"));
    const cJSON *family = cJSON_GetObjectItemCaseSensitive(cpu, "family");
    bool avx512 = false;
    const cJSON *f;
    cJSON_ArrayForEach(f, simd)
    {
        if (cJSON_IsString(f) && !strcmp(f->valuestring, "avx512f"))
            avx512 = true;
    }
    if (!avx512 || !vendor)
        return 8;
    if (!strcmp(vendor, "GenuineIntel"))
        return 16;
    if (!strcmp(vendor, "AuthenticAMD") && cJSON_IsNumber(family) && family->valuedouble >= 26)
        return 16;
    return 8;
}
