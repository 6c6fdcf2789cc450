/*
 * designer_graph.c: the built-in Designer reading the probe's canonical op
 * graph (akg/graph.h) rather than forward's spelling, so that nn.Linear,
 * F.linear, `x @ w.t() + b`, torch.addmm and a matrix-product einsum are one
 * design.
 *
 * The whole graph becomes one kernel. A graph with a second anchor (a matrix
 * product that reads an op, a reduction after a product) is cut into stages
 * composed in one sketch by designer_graph_stages.c, each part designed here.
 * Two kinds of graph are designed from what their ops compute:
 *
 *  - GEMM with an epilogue: one `matmul` of a tensor of rank >= 2 (its leading
 *    dims are rows) by a 2-D tensor, or by a batch of matrices; an operand may
 *    be a permute of a leaf that swaps its last two dims (read transposed
 *    while packing), and a 2-D one may be expanded over the batch
 *    (`x.transpose(1, 2) @ w`); then any
 *    elementwise ops on the product that read only numbers, 1-D vectors of
 *    N broadcast along the rows (a bias) and tensors of the product's shape
 *    (a residual, loaded tile by tile). The sketch is the packed GEMM of
 *    rules_matmul_sketch.c with those ops applied to each register tile after
 *    its last K slice, so the tile never makes a second trip to memory.
 *  - Elementwise chains over inputs, weights and buffers, read through views
 *    (permute, reshape, expand, slice, select) and broadcasts, in any of
 *    the dtypes PyTorch computes with, with one or more outputs of one
 *    shape: one fused pass (designer_graph_ew.c). An embedding lookup is a
 *    gather of rows (designer_graph_gather.c).
 *
 * Reductions, norms and softmax (any op for which akg_graph_op_reduces is 1)
 * are designed by designer_graph_reduce.c.
 *
 * Anything else is declined with AKG_EUNSUPPORTED and a message naming the
 * first operation that does not fit, its line in the reference, why, and how
 * many more operations have no rule here. What the design read is kept in
 * `params` as provenance; the sketch is the design.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/graph.h"
#include "designer_graph.h"
#include "designer_graph_conv.h"
#include "designer_graph_ew.h"
#include "designer_graph_reduce.h"
#include "designer_graph_stages.h"
#include "graph_ops.h"
#include "rule_util.h"
#include "rules_matmul_sketch.h"

typedef struct {
    const akg_reference *ref;
    const akg_graph *g;
    akg_range *where;
    char *err;
    size_t errlen;
    char (*names)[24]; /* each value's name in the sketch ("" none yet) */
    int vw;            /* f32 lanes of a register tile's vectors on the target CPU */
} gctx;

static const char *ref_file(const akg_reference *ref)
{
    const char *p = ref->path ? ref->path : "reference";
    const char *slash = strrchr(p, '/');
    return slash ? slash + 1 : p;
}

/* Declines at value v: "cannot design OP (file:line): WHY[; N more operations are not
 * covered]; write model_new.py ...", *where (if not NULL) on v's line. */
int akg_graph_decline(const akg_reference *ref, const akg_graph_value *v, int more,
                      akg_range *where, char *err, size_t errlen, const char *why)
{
    char at[160];
    if (v->line > 0)
        snprintf(at, sizeof at, "%s:%d", ref_file(ref), v->line);
    else
        snprintf(at, sizeof at, "%s, line unknown", ref_file(ref));
    char rest[96] = "";
    if (more > 0)
        snprintf(rest, sizeof rest, "; %d more operation%s not covered", more,
                 more == 1 ? " is" : "s are");
    if (where && v->line > 0)
        *where = (akg_range){(unsigned)v->line - 1, 0, (unsigned)v->line - 1, 0};
    const char *what = v->kind == AKG_GRAPH_OP ? v->op : akg_graph_kind_name(v->kind);
    return akg_fail(err, errlen, AKG_EUNSUPPORTED,
                    "cannot design %s (%s): %s%s; write model_new.py by hand and check it with "
                    "--workflow verifier_only",
                    what, at, why, rest);
}

static int decline(gctx *c, const akg_graph_value *v, int more, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int decline(gctx *c, const akg_graph_value *v, int more, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return akg_graph_decline(c->ref, v, more, c->where, c->err, c->errlen, why);
}

static void shape_text(const akg_graph_value *v, char *buf, size_t len)
{
    size_t off = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < v->rank && off < len; i++)
        off += (size_t)snprintf(buf + off, len - off, "%s%ld", i ? ", " : "", v->shape[i]);
    if (off < len)
        snprintf(buf + off, len - off, "]");
}

/* A tensor operand the kernel reads from the task: an f32 input, weight or buffer. NULL
 * when it is one, else why not. */
static const char *leaf_problem(const akg_graph_value *v)
{
    if (v->kind == AKG_GRAPH_CONSTANT)
        return "a tensor made inside forward (constants are not designed yet)";
    if (v->kind == AKG_GRAPH_OP)
        return NULL;
    if (strcmp(v->dtype, "f32"))
        return "a tensor that is not f32 (f32 only for now)";
    return NULL;
}

/* ---------- GEMM with an epilogue ---------- */

typedef struct {
    int leaf;
    int trans;
    int views[2]; /* the views read as part of the operand (-1: none) */
} gemm_operand;

/* A leaf, or a permute of a leaf that swaps its last two dims; either may be expanded over
 * new leading (batch) dims, which a 2-D operand is read as (`x.transpose(1, 2) @ w`). */
static int read_gemm_operand(const akg_graph *g, int id, gemm_operand *o)
{
    const akg_graph_value *v = &g->values[id];
    o->trans = 0;
    o->views[0] = o->views[1] = -1;
    if (v->kind == AKG_GRAPH_OP && !strcmp(v->op, "expand") && v->n_args == 1 &&
        v->args[0].kind == AKG_GRAPH_ARG_VALUE) {
        const akg_graph_value *src = &g->values[v->args[0].value];
        if (src->rank != 2 || v->rank <= 2 || v->shape[v->rank - 2] != src->shape[0] ||
            v->shape[v->rank - 1] != src->shape[1] || read_gemm_operand(g, src->id, o))
            return -1;
        o->views[1] = id;
        return 0;
    }
    if (v->kind == AKG_GRAPH_OP && !strcmp(v->op, "permute") && v->n_args == 1 &&
        v->args[0].kind == AKG_GRAPH_ARG_VALUE) {
        const akg_graph_value *src = &g->values[v->args[0].value];
        long perm[AKG_GRAPH_MAX_RANK];
        int n = akg_graph_attr_ints(v, "perm", perm, AKG_GRAPH_MAX_RANK);
        if (!akg_graph_is_leaf(src) || n != src->rank || n < 2)
            return -1;
        for (int i = 0; i < n - 2; i++)
            if (perm[i] != i)
                return -1;
        if (perm[n - 2] != n - 1 || perm[n - 1] != n - 2)
            return -1;
        o->leaf = src->id;
        o->trans = 1;
        o->views[0] = id;
        return 0;
    }
    if (!akg_graph_is_leaf(v))
        return -1;
    o->leaf = id;
    return 0;
}

static int is_vector_of(const akg_graph_value *v, long n)
{
    return akg_graph_is_leaf(v) && v->kind != AKG_GRAPH_CONSTANT && v->rank == 1 &&
           v->shape[0] == n && !strcmp(v->dtype, "f32");
}

static int same_shape(const akg_graph_value *a, const akg_graph_value *b)
{
    return a->rank == b->rank && !memcmp(a->shape, b->shape, sizeof(long) * (size_t)a->rank);
}

/* A tensor the epilogue reads tile by tile like c: a leaf of the product's shape and f32 */
static int is_matrix_of(const akg_graph_value *v, const akg_graph_value *m)
{
    return akg_graph_is_leaf(v) && v->kind != AKG_GRAPH_CONSTANT && same_shape(v, m) &&
           !strcmp(v->dtype, "f32");
}

typedef struct {
    char lines[AKG_MATMUL_MAX_EPILOGUE][256];
} epilogue_text;

/* The ops after the product (all of the graph's rest) as epilogue statements into spec;
 * name gets their words. */
static int gemm_epilogue(gctx *c, int mm, akg_matmul_spec *spec_out, epilogue_text *text,
                         char *name, size_t name_len)
{
    const akg_graph *g = c->g;
    const akg_graph_value *m = &g->values[mm];
    akg_matmul_spec spec = *spec_out;
    long n = m->shape[m->rank - 1];
    snprintf(c->names[mm], sizeof c->names[mm], "o");
    snprintf(name, name_len, "matmul");
    for (int i = mm + 1; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!akg_graph_op_elementwise(v))
            return decline(c, v, 0,
                           "after a matrix product only elementwise ops are fused (one kernel "
                           "per graph for now)");
        if (!same_shape(v, m)) {
            char s1[96], s2[96];
            shape_text(v, s1, sizeof s1);
            shape_text(m, s2, sizeof s2);
            return decline(c, v, 0, "its result has shape %s, not the product's %s", s1, s2);
        }
        int bias = 0;
        for (int k = 0; k < v->n_args; k++) {
            if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            int a = v->args[k].value;
            if (a >= mm)
                continue;
            const akg_graph_value *src = &g->values[a];
            if (is_matrix_of(src, m)) {
                /* a tensor of the product's shape (a residual): its tile, the region of c */
                if (!c->names[a][0]) {
                    if (spec.n_mats >= AKG_MATMUL_MAX_VECTORS)
                        return decline(c, v, 0, "more than %d matrices in one epilogue",
                                       AKG_MATMUL_MAX_VECTORS);
                    spec.mat_names[spec.n_mats] = src->name;
                    spec.mat_weight[spec.n_mats] = src->kind != AKG_GRAPH_INPUT;
                    snprintf(c->names[a], sizeof c->names[a], "rt%d", spec.n_mats);
                    spec.n_mats++;
                }
                continue;
            }
            if (!is_vector_of(src, n)) {
                char s1[96];
                shape_text(src, s1, sizeof s1);
                return decline(c, v, 0,
                               "it reads %s %s of shape %s: an epilogue reads only numbers, f32 "
                               "vectors of the product's %ld columns and f32 tensors of its shape",
                               akg_graph_kind_name(src->kind), src->name, s1, n);
            }
            if (!c->names[a][0]) {
                if (spec.n_vecs >= AKG_MATMUL_MAX_VECTORS)
                    return decline(c, v, 0, "more than %d vectors in one epilogue",
                                   AKG_MATMUL_MAX_VECTORS);
                spec.vec_names[spec.n_vecs] = src->name;
                spec.vec_weight[spec.n_vecs] = src->kind != AKG_GRAPH_INPUT;
                snprintf(c->names[a], sizeof c->names[a], "vt%d", spec.n_vecs);
                spec.n_vecs++;
            }
            bias = 1;
        }
        if (spec.n_epilogue >= AKG_MATMUL_MAX_EPILOGUE)
            return decline(c, v, 0, "more than %d operations after the matrix product",
                           AKG_MATMUL_MAX_EPILOGUE);
        char expr[200];
        const char *why = NULL;
        if (akg_graph_op_render(c->g, v, c->names, expr, sizeof expr, &why))
            return decline(c, v, 0, "%s", why);
        snprintf(c->names[i], sizeof c->names[i], "e%d", spec.n_epilogue);
        snprintf(text->lines[spec.n_epilogue], sizeof text->lines[0], "%s = %s", c->names[i], expr);
        spec.epilogue[spec.n_epilogue] = text->lines[spec.n_epilogue];
        spec.n_epilogue++;
        akg_graph_op_word(v, bias && !strcmp(v->op, "add"), name, name_len);
    }
    int result = g->outputs[0];
    if (strcmp(g->values[result].dtype, "f32"))
        return decline(c, &g->values[result], 0, "an output that is not f32 (f32 only for now)");
    spec.epilogue_out = c->names[result];
    *spec_out = spec;
    return AKG_OK;
}

/* The packed GEMM of A @ B with spec's epilogue, as a matmul-family design. */
static int gemm_write(gctx *c, const akg_graph_value *m, const gemm_operand *A,
                      const gemm_operand *B, akg_matmul_spec *spec, const char *name,
                      const cJSON *feedback, akg_design **out)
{
    const akg_graph *g = c->g;
    (void)m;
    const akg_graph_value *la = &g->values[A->leaf], *lb = &g->values[B->leaf];
    int ra = la->rank, rb = lb->rank;
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    int retry = fb != NULL;
    akg_design *d = akg_rule_family_design("matmul", name);
    if (!d)
        return AKG_ENOMEM;
    d->rank = ra;
    spec->name = d->op_name;
    spec->a_name = la->name;
    spec->b_name = lb->name;
    spec->a_weight = la->kind != AKG_GRAPH_INPUT;
    spec->b_weight = lb->kind != AKG_GRAPH_INPUT;
    spec->rank_a = ra;
    spec->rank_b = rb;
    spec->trans_a = A->trans;
    spec->trans_b = B->trans;
    akg_matmul_spec_registers(spec, c->vw);
    spec->kc = retry ? 128 : 256;
    spec->mc = retry ? 48 : 96;
    spec->nc = 1024;
    cJSON *pp = d->params;
    cJSON_AddStringToObject(pp, "from", "graph");
    cJSON_AddStringToObject(pp, "kind", "gemm");
    cJSON_AddStringToObject(pp, "a", la->name);
    cJSON_AddStringToObject(pp, "b", lb->name);
    cJSON_AddNumberToObject(pp, "trans_a", A->trans);
    cJSON_AddNumberToObject(pp, "trans_b", B->trans);
    cJSON_AddNumberToObject(pp, "rank_a", ra);
    cJSON_AddNumberToObject(pp, "rank_b", rb);
    cJSON *ep = cJSON_AddArrayToObject(pp, "epilogue");
    for (int i = 0; i < spec->n_epilogue; i++)
        cJSON_AddItemToArray(ep, cJSON_CreateString(spec->epilogue[i]));
    cJSON *vs = cJSON_AddArrayToObject(pp, "vectors");
    for (int v = 0; v < spec->n_vecs; v++)
        cJSON_AddItemToArray(vs, cJSON_CreateString(spec->vec_names[v]));
    d->sketch_text = akg_matmul_gemm_sketch(spec);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}

static int design_gemm(gctx *c, int mm, const cJSON *feedback, akg_design **out)
{
    const akg_graph *g = c->g;
    const akg_graph_value *m = &g->values[mm];
    gemm_operand A, B;
    if (m->n_args != 2 || m->args[0].kind != AKG_GRAPH_ARG_VALUE ||
        m->args[1].kind != AKG_GRAPH_ARG_VALUE || read_gemm_operand(g, m->args[0].value, &A) ||
        read_gemm_operand(g, m->args[1].value, &B))
        return decline(c, m, 0,
                       "a matrix product whose operands are not inputs, weights or buffers "
                       "(optionally transposed in their last two dims, or a 2-D one expanded "
                       "over the batch)");
    const akg_graph_value *la = &g->values[A.leaf], *lb = &g->values[B.leaf];
    const char *p = leaf_problem(la);
    if (!p)
        p = leaf_problem(lb);
    if (p)
        return decline(c, m, 0, "a matrix product of %s", p);
    int ra = la->rank, rb = lb->rank;
    if (ra < 2 || rb < 2 ||
        (rb > 2 && (rb != ra || memcmp(la->shape, lb->shape, sizeof(long) * (size_t)(ra - 2)))))
        return decline(c, m, 0, "a matrix product of vectors or with broadcast batch dimensions");
    /* the operands' views belong to the product; anything else before it is a prologue */
    for (int i = 0; i < mm; i++) {
        const akg_graph_value *v = &g->values[i];
        if (akg_graph_is_leaf(v) || i == A.views[0] || i == A.views[1] || i == B.views[0] ||
            i == B.views[1])
            continue;
        return decline(c, v, 0,
                       "work before the matrix product is not fused into it yet (one kernel per "
                       "graph for now)");
    }
    int result = g->outputs[0];
    if (result != g->n_values - 1 || result < mm)
        return decline(c, m, 0, "a matrix product that does not end in the graph's output");
    akg_matmul_spec spec = {0};
    char name[64];
    epilogue_text *text = calloc(1, sizeof *text);
    if (!text)
        return AKG_ENOMEM;
    int rc = gemm_epilogue(c, mm, &spec, text, name, sizeof name);
    if (rc == AKG_OK)
        rc = gemm_write(c, m, &A, &B, &spec, name, feedback, out);
    free(text);
    return rc;
}

/* ---------- the entry ---------- */

static int design(gctx *c, const cJSON *feedback, akg_design **out)
{
    const akg_graph *g = c->g;
    /* convolutions and pooling, with their epilogues: designer_graph_conv.c */
    if (akg_graph_has_window_op(g))
        return akg_designer_graph_conv(c->ref, g, feedback, c->vw, out, c->where, c->err,
                                       c->errlen);
    /* the first op without a rule here, and how many more */
    int first = -1, more = 0;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (akg_graph_is_leaf(v) || akg_graph_op_has_rule(v))
            continue;
        if (first < 0)
            first = i;
        else
            more++;
    }
    if (first >= 0)
        return decline(c, &g->values[first], more, "no rule for this operation");
    /* reductions, norms and softmax: designer_graph_reduce.c */
    for (int i = 0; i < g->n_values; i++)
        if (akg_graph_op_reduces(&g->values[i]))
            return akg_designer_graph_reduce(c->ref, g, feedback, out, c->where, c->err, c->errlen);
    int mm = -1;
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (v->kind != AKG_GRAPH_OP || strcmp(v->op, "matmul"))
            continue;
        if (mm >= 0)
            return decline(c, v, 0,
                           "a second matrix product (one kernel per graph for now: the first "
                           "is at line %d)",
                           g->values[mm].line);
        mm = i;
    }
    if (mm >= 0 && g->n_outputs != 1)
        return decline(c, &g->values[g->outputs[1]], 0,
                       "forward returns %d tensors and one is a matrix product (a GEMM kernel "
                       "writes one output)",
                       g->n_outputs);
    if (mm >= 0)
        return design_gemm(c, mm, feedback, out);
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].kind == AKG_GRAPH_OP && !strcmp(g->values[i].op, "aten.embedding"))
            return akg_designer_graph_embedding(c->ref, g, feedback, out, c->where, c->err,
                                                c->errlen);
    return akg_designer_graph_elementwise(c->ref, g, feedback, out, c->where, c->err, c->errlen);
}

int akg_designer_graph(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                       int attempt, akg_design **out, akg_range *where, char *err, size_t errlen)
{
    (void)attempt;
    *out = NULL;
    akg_graph *g = NULL;
    int rc = akg_graph_from_probe(probe, &g, err, errlen);
    if (rc == AKG_EINVAL)
        rc = AKG_ENOTFOUND; /* a malformed graph: the rules' own message stands */
    if (rc)
        return rc;
    gctx c = {ref,
              g,
              where,
              err,
              errlen,
              calloc((size_t)g->n_values + 1, sizeof *c.names),
              akg_rule_vector_floats(probe)};
    if (!c.names) {
        akg_graph_free(g);
        return AKG_ENOMEM;
    }
    /* a second matrix product, or a reduction after one: stages (designer_graph_stages.c) */
    int cut = akg_graph_stages_cut(g);
    rc = cut < 0 ? AKG_STAGES_NONE
                 : akg_designer_graph_stages(ref, probe, g, cut, feedback, attempt, out, where, err,
                                             errlen);
    if (rc == AKG_STAGES_NONE)
        rc = design(&c, feedback, out);
    free(c.names);
    akg_graph_free(g);
    return rc;
}
