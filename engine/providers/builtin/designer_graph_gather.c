/*
 * designer_graph_gather.c: the graph Designer's gathers. An embedding lookup
 * (aten.embedding(weight, indices): out[..., :] = weight[indices[...], :]) is
 * one pass over the flattened indices in blocks of RB rows: each row's index
 * is loaded once into a one-element integer tile, and that tile indexes the
 * load of the weight's row, BLOCK columns at a time (a contiguous copy). The language's index-tile
 * load reads no memory outside the table for an index out of range (PyTorch raises there; the
 * kernel reads zeros and never crashes).
 */
#include <stdio.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph.h"
#include "designer_graph_ew.h"
#include "rule_util.h"

static int is_index_dtype(const char *dt)
{
    return !strcmp(dt, "i64") || !strcmp(dt, "i32");
}

int akg_designer_graph_embedding(const akg_reference *ref, const akg_graph *g,
                                 const cJSON *feedback, akg_design **out, akg_range *where,
                                 char *err, size_t errlen)
{
    (void)feedback;
    const akg_graph_value *o = &g->values[g->outputs[0]];
    for (int i = 0; i < g->n_values; i++) {
        const akg_graph_value *v = &g->values[i];
        if (!akg_graph_is_leaf(v) && v != o)
            return akg_graph_decline(ref, v, 0, where, err, errlen,
                                     "an embedding is designed alone (its result is forward's "
                                     "only output, with no other op) for now");
    }
    if (g->n_outputs != 1 || strcmp(o->op, "aten.embedding") || o->n_args != 2 ||
        o->args[0].kind != AKG_GRAPH_ARG_VALUE || o->args[1].kind != AKG_GRAPH_ARG_VALUE)
        return akg_graph_decline(ref, o, 0, where, err, errlen,
                                 "an embedding is designed alone (its result is forward's only "
                                 "output, with no other op) for now");
    const akg_graph_value *w = &g->values[o->args[0].value], *ids = &g->values[o->args[1].value];
    if (w->kind == AKG_GRAPH_CONSTANT || ids->kind == AKG_GRAPH_CONSTANT)
        return akg_graph_decline(ref, o, 0, where, err, errlen,
                                 "an embedding of a tensor made inside forward (constants are "
                                 "not designed yet)");
    if (w->rank != 2 || ids->rank < 1 || ids->rank > AKG_GRAPH_MAX_RANK - 1 ||
        !is_index_dtype(ids->dtype))
        return akg_graph_decline(ref, o, 0, where, err, errlen,
                                 "an embedding needs a 2-D table and integer (int32 or int64) "
                                 "indices of at least one dimension");
    akg_buf b;
    akg_buf_init(&b, 1 << 16);
    akg_buf_puts(&b, "# embedding: out[r, :] = w[ids[r], :] over the flattened indices, blocks "
                     "of RB rows\n# per task; each row's index is loaded once and indexes the "
                     "load of its row of w\n# (an index outside the table reads no memory "
                     "outside it)\n");
    akg_buf_puts(&b, "sketch embedding {\n  symbols: R, V, D");
    for (int k = 0; k < ids->rank; k++)
        akg_buf_appendf(&b, ", I%d", k);
    akg_buf_appendf(&b, ";\n  tensors: w[V, D]: %s; ids[R]: %s; out0[R, D]: %s;\n", w->dtype,
                    ids->dtype, o->dtype);
    akg_buf_puts(&b, "  constexpr: RB = tune(32, 8, 128), BLOCK = tune(256, 64, 1024);\n");
    akg_buf_appendf(&b, "  bind: w = %s(\"%s\", [V, D]), ids = %s(\"%s\", [",
                    w->kind == AKG_GRAPH_INPUT ? "input" : "weight", w->name,
                    ids->kind == AKG_GRAPH_INPUT ? "input" : "weight", ids->name);
    for (int k = 0; k < ids->rank; k++)
        akg_buf_appendf(&b, "%sI%d", k ? ", " : "", k);
    akg_buf_puts(&b, "])\n  bind: R = 1");
    for (int k = 0; k < ids->rank; k++)
        akg_buf_appendf(&b, " * I%d", k);
    akg_buf_puts(&b, ", out0 = output(0, [");
    for (int k = 0; k < ids->rank; k++)
        akg_buf_appendf(&b, "I%d, ", k);
    akg_buf_puts(&b, "D])\n\n");
    akg_buf_puts(&b, "  @llm_hint(\"parallel\", \"coreidx\")\n"
                     "  for r0 in range(0, R, RB):\n"
                     "    for r in range(r0, min(r0 + RB, R)):\n"
                     "      it = alloc([1], llm_hint=[\"fastest\"])\n"
                     "      load(ids[r:r+1] -> it)\n"
                     "      for c0 in range(0, D, BLOCK):\n"
                     "        t = alloc([1, BLOCK], llm_hint=[\"fastest\"])\n"
                     "        load(w[it, c0:c0+BLOCK] -> t)\n"
                     "        store(t -> out0[r:r+1, c0:c0+BLOCK])\n}\n");
    akg_design *d = akg_rule_family_design("gather", "embedding");
    if (!d) {
        akg_buf_free(&b);
        return AKG_ENOMEM;
    }
    d->rank = o->rank;
    cJSON_AddStringToObject(d->params, "from", "graph");
    cJSON_AddStringToObject(d->params, "kind", "embedding");
    cJSON_AddStringToObject(d->params, "table", w->name);
    cJSON_AddStringToObject(d->params, "indices", ids->name);
    d->sketch_text = akg_buf_take(&b);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
