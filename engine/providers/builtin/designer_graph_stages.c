/*
 * designer_graph_stages.c: graphs that need several stages in one kernel: a
 * chain of matrix products (nn.Sequential(Linear, ReLU, Linear)), a matrix
 * product followed by a row norm or a softmax (Linear -> ReLU -> LayerNorm,
 * softmax(q @ k^T * s)), or work before a product.
 *
 * The other graph Designers each write one stage: one GEMM with its
 * epilogue, one reduction group, one elementwise pass. A graph with a second
 * anchor (an op read by a matrix product; a reduction that reads a matrix
 * product's result) is cut at the value that anchor reads:
 *
 *  - the first stage is that value's part of the graph (the value and what it
 *    is computed from), its one output the value;
 *  - the second stage is the rest of the graph with the value as an input
 *    leaf named for what computed it (result_of_relu_line12; a cut inside a
 *    part adds its depth, _2, _3...), the name a refusal of that part shows.
 *
 * Each part is a graph of its own, designed by akg_designer_graph (so a part
 * that needs a cut again is cut again, and a part no Designer covers is
 * declined with the message naming its operation and line). The two sketches
 * are composed into one: every name of a stage gets a suffix of its own (_1,
 * _2: the header's symbols, tensors, constexprs and params, and every name
 * the body assigns), the first stage's output becomes a "slow"
 * temporary_workspace alloc of its declared shape, the second stage reads it
 * in place of its input, and the sizes of that input are bound to the first
 * stage's. Each stage keeps its own tiling and parallel loops (the packed
 * GEMM for a product), one after the other. What each part's design read is
 * kept in params.stages.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "akg/graph.h"
#include "designer_graph.h"
#include "designer_graph_conv.h"
#include "designer_graph_stages.h"
#include "graph_ops.h"

#define STAGES_MAX_DEPTH 6

/* ---------- where to cut ---------- */

static int is_view(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && v->n_args >= 1 && v->args[0].kind == AKG_GRAPH_ARG_VALUE &&
           (!strcmp(v->op, "permute") || !strcmp(v->op, "reshape") || !strcmp(v->op, "expand"));
}

/* The value under a chain of views (a matrix product reads a permute of a leaf in place). */
static int under_views(const akg_graph *g, int id)
{
    while (is_view(&g->values[id]))
        id = g->values[id].args[0].value;
    return id;
}

int akg_graph_stages_cut(const akg_graph *g)
{
    if (akg_graph_has_window_op(g))
        return -1;
    char *after_mm = calloc((size_t)g->n_values + 1, 1);
    if (!after_mm)
        return -1;
    int cut = -1;
    for (int i = 0; i < g->n_values && cut < 0; i++) {
        const akg_graph_value *v = &g->values[i];
        if (v->kind != AKG_GRAPH_OP)
            continue;
        int mm = !strcmp(v->op, "matmul");
        int reduces = akg_graph_op_reduces(v);
        for (int k = 0; k < v->n_args && cut < 0; k++) {
            if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
                continue;
            int a = v->args[k].value;
            after_mm[i] |= after_mm[a];
            int u = under_views(g, a);
            if (g->values[u].kind != AKG_GRAPH_OP)
                continue;
            if (mm || (reduces && after_mm[a]))
                cut = u;
        }
        after_mm[i] |= mm;
    }
    free(after_mm);
    return cut;
}

/* ---------- the parts as graphs of their own ---------- */

/* The graph of the values marked in keep, renumbered leaves first; value `leaf` (if >= 0)
 * becomes an input named leaf_name; outputs: `out` if >= 0, else g's. NULL when out of
 * memory. */
static cJSON *part_graph(const akg_graph *g, const char *keep, int leaf, const char *leaf_name,
                         int leaf_index, int out)
{
    const cJSON *values = cJSON_GetObjectItemCaseSensitive(g->json, "values");
    int n = g->n_values;
    const cJSON **item = calloc((size_t)n + 1, sizeof *item);
    int *renum = calloc((size_t)n + 1, sizeof *renum);
    cJSON *graph = cJSON_CreateObject();
    cJSON *vs = cJSON_AddArrayToObject(graph, "values");
    int ok = item && renum && graph && vs;
    int at = 0;
    const cJSON *it;
    cJSON_ArrayForEach(it, values)
    {
        if (at < n)
            item[at++] = it;
    }
    ok = ok && at == n;
    int next = 0;
    for (int pass = 0; ok && pass < 2; pass++)
        for (int i = 0; i < n; i++) {
            int is_leaf = akg_graph_is_leaf(&g->values[i]) || i == leaf;
            if (keep[i] && is_leaf == (pass == 0))
                renum[i] = next++;
        }
    for (int pass = 0; ok && pass < 2; pass++)
        for (int i = 0; i < n && ok; i++) {
            const akg_graph_value *v = &g->values[i];
            int is_leaf = akg_graph_is_leaf(v) || i == leaf;
            if (!keep[i] || is_leaf != (pass == 0))
                continue;
            cJSON *d;
            if (i == leaf) {
                d = cJSON_CreateObject();
                cJSON_AddNumberToObject(d, "id", renum[i]);
                cJSON_AddStringToObject(d, "kind", "input");
                cJSON_AddNumberToObject(d, "index", leaf_index);
                cJSON_AddStringToObject(d, "name", leaf_name);
                cJSON_AddItemToObject(
                    d, "shape",
                    cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(item[i], "shape"), 1));
                cJSON_AddStringToObject(d, "dtype", v->dtype);
                if (v->line > 0)
                    cJSON_AddNumberToObject(d, "line", v->line);
            } else {
                d = cJSON_Duplicate(item[i], 1);
                if (d)
                    cJSON_ReplaceItemInObject(d, "id", cJSON_CreateNumber(renum[i]));
                cJSON *args = cJSON_GetObjectItemCaseSensitive(d, "args");
                int na = cJSON_GetArraySize(args);
                for (int k = 0; k < na; k++) {
                    cJSON *a = cJSON_GetArrayItem(args, k);
                    if (cJSON_IsNumber(a))
                        cJSON_ReplaceItemInArray(args, k, cJSON_CreateNumber(renum[a->valueint]));
                }
            }
            ok = d && cJSON_AddItemToArray(vs, d);
        }
    cJSON *outs = cJSON_AddArrayToObject(graph, "outputs");
    if (out >= 0)
        ok = ok && outs && cJSON_AddItemToArray(outs, cJSON_CreateNumber(renum[out]));
    for (int o = 0; out < 0 && o < g->n_outputs && ok; o++)
        ok = outs && cJSON_AddItemToArray(outs, cJSON_CreateNumber(renum[g->outputs[o]]));
    cJSON_AddNumberToObject(graph, "version", AKG_GRAPH_VERSION);
    cJSON_AddArrayToObject(graph, "notes");
    free(item);
    free(renum);
    if (!ok) {
        cJSON_Delete(graph);
        return NULL;
    }
    return graph;
}

/* The probe with its graph replaced (its other fields by reference), at depth+1. */
static cJSON *part_probe(const cJSON *probe, cJSON *graph, int depth)
{
    cJSON *p = cJSON_CreateObject();
    if (!p) {
        cJSON_Delete(graph);
        return NULL;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, probe)
    {
        if (it->string && strcmp(it->string, "graph") && strcmp(it->string, "stage_depth"))
            cJSON_AddItemReferenceToObject(p, it->string, (cJSON *)it);
    }
    cJSON_AddItemToObject(p, "graph", graph);
    cJSON_AddNumberToObject(p, "stage_depth", depth + 1);
    return p;
}

static int design_part(const akg_reference *ref, const cJSON *probe, const akg_graph *g,
                       const char *keep, int leaf, const char *leaf_name, int out, int depth,
                       const cJSON *feedback, int attempt, akg_design **d, akg_range *where,
                       char *err, size_t errlen)
{
    cJSON *graph = part_graph(g, keep, leaf, leaf_name, 1000 + depth, out);
    cJSON *p = graph ? part_probe(probe, graph, depth) : NULL;
    if (!p)
        return AKG_ENOMEM;
    int rc = akg_designer_graph(ref, p, feedback, attempt, d, where, err, errlen);
    cJSON_Delete(p);
    return rc;
}

int akg_designer_graph_stages(const akg_reference *ref, const cJSON *probe, const akg_graph *g,
                              int cut, const cJSON *feedback, int attempt, akg_design **out,
                              akg_range *where, char *err, size_t errlen)
{
    *out = NULL;
    const akg_graph_value *c = &g->values[cut];
    const cJSON *sd = cJSON_GetObjectItemCaseSensitive(probe, "stage_depth");
    int depth = cJSON_IsNumber(sd) && sd->valueint > 0 ? sd->valueint : 0;
    if (depth >= STAGES_MAX_DEPTH)
        return akg_graph_decline(ref, c, 0, where, err, errlen,
                                 "more than 6 stages in one kernel (each matrix product, and "
                                 "each reduction after one, starts a stage)");
    for (int o = 0; o < g->n_outputs; o++)
        if (g->outputs[o] == cut)
            return akg_graph_decline(ref, c, 0, where, err, errlen,
                                     "a result of forward that a later matrix product or "
                                     "reduction also reads (a stage writes one temporary)");
    char *keep1 = calloc((size_t)g->n_values + 1, 1);
    char *keep2 = calloc((size_t)g->n_values + 1, 1);
    akg_design *d1 = NULL, *d2 = NULL;
    int rc = keep1 && keep2 ? AKG_OK : AKG_ENOMEM;
    if (rc == AKG_OK) {
        keep1[cut] = 1;
        for (int i = cut; i >= 0; i--)
            if (keep1[i] && g->values[i].kind == AKG_GRAPH_OP)
                for (int k = 0; k < g->values[i].n_args; k++)
                    if (g->values[i].args[k].kind == AKG_GRAPH_ARG_VALUE)
                        keep1[g->values[i].args[k].value] = 1;
        for (int o = 0; o < g->n_outputs; o++)
            keep2[g->outputs[o]] = 1;
        for (int i = g->n_values - 1; i >= 0; i--)
            if (keep2[i] && i != cut && g->values[i].kind == AKG_GRAPH_OP)
                for (int k = 0; k < g->values[i].n_args; k++)
                    if (g->values[i].args[k].kind == AKG_GRAPH_ARG_VALUE)
                        keep2[g->values[i].args[k].value] = 1;
    }
    char leaf[96], depth_text[16] = "";
    if (depth > 0)
        snprintf(depth_text, sizeof depth_text, "_%d", depth + 1);
    snprintf(leaf, sizeof leaf, "result_of_%.40s_line%d%s", c->op, c->line, depth_text);
    for (char *p = leaf; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            *p = '_';
    if (rc == AKG_OK)
        rc = design_part(ref, probe, g, keep1, -1, NULL, cut, depth, feedback, attempt, &d1, where,
                         err, errlen);
    if (rc == AKG_OK)
        rc = design_part(ref, probe, g, keep2, cut, leaf, -1, depth, feedback, attempt, &d2, where,
                         err, errlen);
    free(keep1);
    free(keep2);
    char name[64];
    if (rc == AKG_OK) {
        /* the composed sketch's name: the stages' names, as long as they fit */
        snprintf(name, sizeof name, "%.28s_then_%.28s", d1->op_name, d2->op_name);
        for (char *p = name; *p; p++)
            if (!isalnum((unsigned char)*p) && *p != '_')
                *p = '_';
        char *text =
            akg_sketch_compose_stages(d1->sketch_text, d2->sketch_text, leaf, name, err, errlen);
        if (!text) {
            /* the parts do not compose (err says why): the one-stage Designers speak */
            rc = AKG_STAGES_NONE;
        } else {
            free(d2->sketch_text);
            d2->sketch_text = text;
            snprintf(d2->op_name, sizeof d2->op_name, "%s", name);
            cJSON *pp = cJSON_CreateObject();
            cJSON_AddStringToObject(pp, "from", "graph");
            cJSON_AddStringToObject(pp, "kind", "stages");
            cJSON_AddNumberToObject(pp, "cut_line", c->line);
            cJSON *st = cJSON_AddArrayToObject(pp, "stages");
            cJSON_AddItemToArray(st, d1->params);
            cJSON_AddItemToArray(st, d2->params);
            d1->params = NULL;
            d2->params = pp;
            *out = d2;
            d2 = NULL;
        }
    }
    if (d1)
        akg_design_free(d1);
    if (d2)
        akg_design_free(d2);
    return rc;
}
