/*
 * rules_matmul.c: the built-in Designer's rules for the matmul family.
 *
 * forward must return one matrix product of two forward inputs: `a @ b`,
 * torch.matmul/mm/bmm, or a two-operand einsum that is a (batched) matrix
 * product; an operand may be transposed (x.T, x.t(), x.transpose(-2, -1)),
 * the product may be wrapped in tril/triu (the masked blocks are never
 * computed), and `torch.diag(v) @ b` is a row scaling. The design is a packed,
 * register-blocked GEMM (tunables MR, NR, KC, MC, NC), a row-parallel
 * matrix-vector product when the probe's right operand is one column, or a
 * row-scaling pass; params tell the emitter which inputs, which transposes,
 * the batch layout and the triangle.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "rule_util.h"
#include "rules_matmul_sketch.h"

typedef struct {
    int input; /* forward parameter index */
    int trans; /* the operand is the transpose of the input's last two dims */
    int diag;  /* torch.diag(input) */
} operand;

static int is_op(const akg_expr *e, const char *op)
{
    return e && e->kind == AKG_EX_CALL && e->name && strcmp(e->name, op) == 0;
}

/* Reads a forward input, possibly transposed or diag()'d. Returns 0 or -1. */
static int read_operand(const akg_reference *ref, const cJSON *probe, const akg_expr *e,
                        operand *out, int depth)
{
    if (!e || depth > 4)
        return -1;
    if (e->kind == AKG_EX_NAME) {
        int idx = akg_rule_forward_param(ref, e);
        if (idx < 0)
            return -1;
        out->input = idx;
        return 0;
    }
    if (e->kind == AKG_EX_ATTR && e->name && (!strcmp(e->name, "T") || !strcmp(e->name, "mT")) &&
        e->n_args == 1) {
        if (read_operand(ref, probe, e->args[0], out, depth + 1))
            return -1;
        out->trans ^= 1;
        return 0;
    }
    if (is_op(e, "t")) {
        if (read_operand(ref, probe, akg_rule_arg(e, 0, "input"), out, depth + 1))
            return -1;
        out->trans ^= 1;
        return 0;
    }
    if (is_op(e, "transpose") || is_op(e, "swapaxes")) {
        const akg_expr *x = akg_rule_arg(e, 0, "input");
        if (read_operand(ref, probe, x, out, depth + 1))
            return -1;
        const cJSON *desc = akg_rule_probe_input(probe, out->input);
        int rank = akg_rule_rank(desc);
        akg_scalar s0, s1;
        memset(&s0, 0, sizeof s0);
        memset(&s1, 0, sizeof s1);
        if (akg_rule_scalar(ref, probe, akg_rule_arg(e, 1, "dim0"), "dim0", &s0, NULL) ||
            akg_rule_scalar(ref, probe, akg_rule_arg(e, 2, "dim1"), "dim1", &s1, NULL) || rank < 2)
            return -1;
        int d0 = ((int)s0.value % rank + rank) % rank, d1 = ((int)s1.value % rank + rank) % rank;
        if (!((d0 == rank - 1 && d1 == rank - 2) || (d0 == rank - 2 && d1 == rank - 1)))
            return -1;
        out->trans ^= 1;
        return 0;
    }
    if (is_op(e, "diag") && depth == 0) {
        if (akg_rule_arg(e, 1, "diagonal"))
            return -1;
        if (read_operand(ref, probe, akg_rule_arg(e, 0, "input"), out, depth + 1) || out->trans)
            return -1;
        out->diag = 1;
        return 0;
    }
    return -1;
}

/* An einsum spec "ab,bc->ac" with operands given to the matmul layout: which
 * operands are transposed. Returns 0 when it is a (batched) matrix product. */
static int read_einsum(const char *spec, int *trans_a, int *trans_b, int *rank_a, int *rank_b)
{
    char a[16] = {0}, b[16] = {0}, o[16] = {0};
    int ia = 0, ib = 0, io = 0, part = 0;
    for (const char *p = spec; *p; p++) {
        if (*p == ' ')
            continue;
        if (*p == ',') {
            part = 1;
            continue;
        }
        if (*p == '-' && p[1] == '>') {
            part = 2;
            p++;
            continue;
        }
        if (*p < 'a' || *p > 'z' || ia >= 15 || ib >= 15 || io >= 15)
            return -1;
        if (part == 0)
            a[ia++] = *p;
        else if (part == 1)
            b[ib++] = *p;
        else
            o[io++] = *p;
    }
    if (part != 2 || ia < 2 || ib < 2)
        return -1;
    /* the contracted letter: in a and b, not in the output */
    char k = 0;
    int nk = 0;
    for (int i = 0; i < ia; i++)
        if (strchr(b, a[i]) && !strchr(o, a[i])) {
            k = a[i];
            nk++;
        }
    if (nk != 1)
        return -1;
    *rank_a = ia;
    *rank_b = ib;
    char expect[20] = {0};
    if (ib == 2) {
        /* tensor (any rank) times a matrix */
        *trans_b = b[0] != k;
        char n = *trans_b ? b[0] : b[1];
        if ((*trans_b ? b[1] : b[0]) != k)
            return -1;
        if (a[ia - 1] == k) {
            *trans_a = 0;
            memcpy(expect, a, (size_t)ia - 1);
        } else if (ia == 2 && a[0] == k) {
            *trans_a = 1;
            expect[0] = a[1];
        } else {
            return -1;
        }
        size_t l = strlen(expect);
        expect[l] = n;
        return strcmp(expect, o) == 0 ? 0 : -1;
    }
    /* batched: a = P m k | P k m, b = P k n | P n k, out = P m n */
    if (ia != ib || io != ia || memcmp(a, b, (size_t)ia - 2) != 0 ||
        memcmp(a, o, (size_t)ia - 2) != 0)
        return -1;
    char a0 = a[ia - 2], a1 = a[ia - 1], b0 = b[ib - 2], b1 = b[ib - 1];
    *trans_a = a0 == k;
    *trans_b = b1 == k;
    char m = *trans_a ? a1 : a0, n = *trans_b ? b0 : b1;
    if ((*trans_a ? a0 : a1) != k || (*trans_b ? b1 : b0) != k)
        return -1;
    return o[io - 2] == m && o[io - 1] == n ? 0 : -1;
}

int akg_rules_matmul(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                     int attempt, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    const akg_expr *e = akg_rule_returned_expr(ref);
    if (!e)
        return AKG_ENOTFOUND;
    int tri = 0;
    akg_scalar diagonal;
    memset(&diagonal, 0, sizeof diagonal);
    snprintf(diagonal.name, sizeof diagonal.name, "diagonal");
    if (is_op(e, "tril") || is_op(e, "triu")) {
        tri = is_op(e, "tril") ? 1 : 2;
        const akg_expr *dg = akg_rule_arg(e, 1, "diagonal");
        if (dg && akg_rule_scalar(ref, probe, dg, "diagonal", &diagonal, NULL))
            return akg_rule_unsupported(ref, dg->range, where, err, errlen,
                                        "a tril/triu diagonal that is not a number");
        e = akg_rule_arg(e, 0, "input");
        if (!e)
            return AKG_ENOTFOUND;
    }
    const akg_expr *ea = NULL, *eb = NULL;
    int einsum = 0, et_a = 0, et_b = 0, er_a = 0, er_b = 0;
    if (e->kind == AKG_EX_BINOP && e->name && !strcmp(e->name, "@") && e->n_args == 2) {
        ea = e->args[0];
        eb = e->args[1];
    } else if (is_op(e, "matmul") || is_op(e, "mm") || is_op(e, "bmm")) {
        ea = akg_rule_arg(e, 0, "input");
        eb = akg_rule_arg(e, 1, "other");
        if (!eb)
            eb = akg_rule_arg(e, 1, "mat2");
    } else if (is_op(e, "einsum")) {
        const akg_expr *spec = akg_rule_arg(e, 0, "equation");
        if (!spec || spec->kind != AKG_EX_STRING || e->n_args != 3)
            return AKG_ENOTFOUND;
        if (read_einsum(spec->name, &et_a, &et_b, &er_a, &er_b))
            return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                        "an einsum that is not a (batched) matrix product");
        einsum = 1;
        ea = akg_rule_arg(e, 1, NULL);
        eb = akg_rule_arg(e, 2, NULL);
    } else {
        return AKG_ENOTFOUND;
    }
    operand A = {-1, 0, 0}, B = {-1, 0, 0};
    if (read_operand(ref, probe, ea, &A, 0) || read_operand(ref, probe, eb, &B, 1))
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "a matrix product whose operands are not forward inputs "
                                    "(optionally transposed)");
    if (einsum) {
        A.trans ^= et_a;
        B.trans ^= et_b;
    }
    const cJSON *da = akg_rule_probe_input(probe, A.input),
                *db = akg_rule_probe_input(probe, B.input);
    int ra = akg_rule_rank(da), rb = akg_rule_rank(db);
    if (einsum && (ra != er_a || rb != er_b))
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "an einsum whose operand ranks do not match the inputs");
    const char *dta = cJSON_GetStringValue(cJSON_GetObjectItem(da, "dtype"));
    const char *dtb = cJSON_GetStringValue(cJSON_GetObjectItem(db, "dtype"));
    if (!dta || !dtb || strcmp(dta, "float32") || strcmp(dtb, "float32"))
        return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                    "a matrix product of non-float32 tensors");
    const char *kind = "gemm";
    if (A.diag) {
        if (ra != 1 || rb != 2 || B.trans || tri)
            return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                        "diag() of something other than a vector times a matrix");
        kind = "rowscale";
    } else {
        if (ra < 2 || rb < 2 || (rb > 2 && rb != ra) || (tri && rb > 2 && ra != rb))
            return akg_rule_unsupported(ref, e->range, where, err, errlen,
                                        "a matrix product of vectors or with broadcast batch dims");
        if (rb == 2 && ra == 2 && !B.trans && !tri && akg_rule_dim(db, 1) == 1)
            kind = "gemv";
    }
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    int retry = fb != NULL;

    char name[64];
    snprintf(name, sizeof name, "%s%s",
             tri == 1   ? "tril_"
             : tri == 2 ? "triu_"
                        : "",
             !strcmp(kind, "rowscale") ? "diag_matmul"
             : !strcmp(kind, "gemv")   ? "matvec"
                                       : "matmul");
    akg_design *d = akg_rule_family_design("matmul", name);
    if (!d)
        return AKG_ENOMEM;
    d->rank = ra;
    d->parallel = 1;
    d->vectorize = 1;
    cJSON *p = d->params;
    cJSON_AddStringToObject(p, "kind", kind);
    cJSON_AddNumberToObject(p, "a", A.input);
    cJSON_AddNumberToObject(p, "b", B.input);
    cJSON_AddNumberToObject(p, "trans_a", A.trans);
    cJSON_AddNumberToObject(p, "trans_b", B.trans);
    cJSON_AddNumberToObject(p, "rank_a", ra);
    cJSON_AddNumberToObject(p, "rank_b", rb);
    cJSON_AddNumberToObject(p, "tri", tri);
    cJSON_AddNumberToObject(p, "diagonal", diagonal.value);
    if (diagonal.source == AKG_SCALAR_INIT_PARAM)
        cJSON_AddStringToObject(p, "diagonal_from_init", diagonal.init_name);
    akg_matmul_spec spec = {0};
    spec.name = name;
    spec.a_name = ref->forward_params[A.input].name;
    spec.b_name = ref->forward_params[B.input].name;
    spec.rank_a = ra;
    spec.rank_b = rb;
    spec.trans_a = A.trans;
    spec.trans_b = B.trans;
    spec.tri = tri;
    spec.diag = (long)diagonal.value;
    if (diagonal.source == AKG_SCALAR_INIT_PARAM)
        snprintf(spec.diag_init, sizeof spec.diag_init, "%s", diagonal.init_name);
    akg_matmul_spec_registers(&spec, akg_rule_vector_floats(probe));
    spec.kc = retry ? 128 : 256;
    spec.mc = retry ? 48 : 96;
    spec.nc = 1024;
    spec.rows = retry ? 2 : 4;
    if (!strcmp(kind, "gemm"))
        d->sketch_text = akg_matmul_gemm_sketch(&spec);
    else if (!strcmp(kind, "gemv"))
        d->sketch_text = akg_matmul_gemv_sketch(&spec);
    else
        d->sketch_text = akg_matmul_rowscale_sketch(&spec);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
