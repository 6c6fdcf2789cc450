/*
 * designer_graph_ew.c: the graph Designer's elementwise passes. A graph of
 * elementwise ops and views over inputs, weights and buffers, with one or
 * more outputs of one shape (a tuple such as `return a + b, a * b`), becomes
 * one fused pass over that shape:
 *
 *  - flat over the elements when every operand is read at the output's own
 *    index (same shape, no view): one loop over N elements in blocks;
 *  - over [BW, BC] tiles of the output's last two dims when some tensor runs
 *    along them in the other order (a permute, x.t() + y): that tensor is
 *    loaded along its own last dim and transposed in registers, so its reads
 *    and the output's writes are both contiguous;
 *  - else over the rows of the output's last dimension, each operand loaded
 *    at the index the output's index maps to through the views and
 *    broadcasts between them (designer_graph_view.c): a permuted operand is
 *    a strided load along the permuted dim, a broadcast dim is pinned to 0,
 *    an operand with no dim along the row is one element read per row.
 *
 * A reshape of an input, weight or buffer that merges or splits dims
 * (x.view(B, -1), torch.flatten(x, 1)) declares that tensor in the reshaped
 * shape and binds it from the original (the binding reads a row-major
 * reshape); the reshaped dims' symbols are bound from the original's.
 *
 * A value reached through two different maps (x.t() + x) is loaded, and its
 * ops computed, once per map: the sketch says what each tile holds.
 *
 * dtypes are the graph's: each tensor is declared with its own dtype, loads
 * keep it, and each op's expression casts what it reads to the dtype the op
 * computes in (graph_ops.c): a bf16 op gives a bf16 tile as in PyTorch
 * (the language computes f16/bf16 in at least f32), integer ops stay exact,
 * and mixed operands promote as torch does.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "akg/akg.h"
#include "designer_graph.h"
#include "designer_graph_ew.h"
#include "designer_graph_ew_int.h"
#include "designer_graph_view.h"
#include "graph_ops.h"
#include "rule_util.h"

static int ew_decline(ew *e, const akg_graph_value *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int ew_decline(ew *e, const akg_graph_value *v, const char *fmt, ...)
{
    char why[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return akg_graph_decline(e->ref, v, 0, e->where, e->err, e->errlen, why);
}

static int leaf_slot(const ew *e, int id)
{
    for (int i = 0; i < e->n_leaves; i++)
        if (e->leaves[i] == id)
            return i;
    return -1;
}

static int same_shape(const akg_graph_value *a, const akg_graph_value *b)
{
    return a->rank == b->rank && !memcmp(a->shape, b->shape, sizeof(long) * (size_t)a->rank);
}

/* The index of output dim q (q <= last) from var, the flat index over dims 0..last:
 * var // (D{q+1} * ... * Dlast) % Dq */
static void flat_index(char *out, size_t len, int q, int last, const char *var)
{
    if (q == last) {
        if (q == 0)
            snprintf(out, len, "%s", var);
        else
            snprintf(out, len, "%s %% D%d", var, q);
        return;
    }
    size_t off = (size_t)snprintf(out, len, "%s // (", var);
    for (int k = q + 1; k <= last && off < len; k++)
        off += (size_t)snprintf(out + off, len - off, "%sD%d", k > q + 1 ? " * " : "", k);
    if (off < len)
        off += (size_t)snprintf(out + off, len - off, ")");
    if (q > 0 && off < len)
        snprintf(out + off, len - off, " %% D%d", q);
}

/* The index of output dim q (q < rank - 1) from the flat row r */
static void row_index(char *out, size_t len, int q, int rank)
{
    flat_index(out, len, q, rank - 2, "r");
}

static int reads_column(const akg_graph_dimmap *m, int rank)
{
    for (int k = 0; k < m->rank; k++)
        if (m->q[k] == rank - 1)
            return 1;
    return 0;
}

/* The leaf dim of map m that runs along output dim q, or -1. */
static int dim_along(const akg_graph_dimmap *m, int q)
{
    for (int k = 0; k < m->rank; k++)
        if (m->q[k] == q)
            return k;
    return -1;
}

/* A block of `extent` indices from `var` along a dim read at off + step * index:
 * "var:var+extent", "var + off:var + off + extent" or "off + step * var:off + step * (var +
 * extent):step". */
static void block_text(char *out, size_t len, const char *var, const char *extent, long off,
                       long step)
{
    if (step == 1 && off == 0)
        snprintf(out, len, "%s:%s+%s", var, var, extent);
    else if (step == 1)
        snprintf(out, len, "%s + %ld:%s + %ld + %s", var, off, var, off, extent);
    else if (off == 0)
        snprintf(out, len, "%ld * %s:%ld * (%s + %s):%ld", step, var, step, var, extent, step);
    else
        snprintf(out, len, "%ld + %ld * %s:%ld + %ld * (%s + %s):%ld", off, step, var, off, step,
                 var, extent, step);
}

/* The index of dim k of a tensor read through map m in the current pass: a block along the
 * pass's columns (and, tiled, rows), else one index; *unit gets whether it is one index. */
static void dim_index(const ew *e, const akg_graph_dimmap *m, int k, char *out, size_t len)
{
    int q = m->q[k];
    char base[200];
    if (q < 0) {
        snprintf(out, len, "%ld", m->off[k]);
        return;
    }
    if (q == e->rank - 1) {
        block_text(out, len, "c0", e->tiled ? "BC" : "BLOCK", m->off[k], m->step[k]);
        return;
    }
    if (e->tiled && q == e->rank - 2) {
        block_text(out, len, "w0", "BW", m->off[k], m->step[k]);
        return;
    }
    if (e->tiled)
        flat_index(base, sizeof base, q, e->rank - 3, "o");
    else
        row_index(base, sizeof base, q, e->rank);
    if (m->off[k] == 0 && m->step[k] == 1)
        snprintf(out, len, "%s", base);
    else if (m->step[k] == 1)
        snprintf(out, len, "%ld + %s", m->off[k], base);
    else
        snprintf(out, len, "%ld + %ld * (%s)", m->off[k], m->step[k], base);
}

/* The region of a load through map m; with `unit`, the last index is a unit slice (the
 * tensor has no dim along the tile's, and the tile is [1]). */
static void load_region(ew *e, const akg_graph_dimmap *m, int unit)
{
    for (int k = 0; k < m->rank; k++) {
        char idx[256];
        dim_index(e, m, k, idx, sizeof idx);
        int paren = strchr(idx, ' ') != NULL;
        if (unit && k == m->rank - 1)
            akg_buf_appendf(e->b, "%s%s%s%s:%s%s%s + 1", k ? ", " : "", paren ? "(" : "", idx,
                            paren ? ")" : "", paren ? "(" : "", idx, paren ? ")" : "");
        else
            akg_buf_appendf(e->b, "%s%s", k ? ", " : "", idx);
    }
}

/* A load of the tiled pass: the tile of [BW, BC] output elements at (o, w0, c0); a tensor
 * whose dim along the columns comes before its dim along the rows is loaded as [BC, BW]
 * (contiguous along its own last dim) and transposed in registers. */
static void load_tiled(ew *e, const akg_graph_value *l, const akg_graph_dimmap *m, const char *name)
{
    akg_buf *b = e->b;
    int kc = dim_along(m, e->rank - 1), kr = dim_along(m, e->rank - 2);
    int trans = kc >= 0 && kr >= 0 && kc < kr;
    const char *shape = trans                ? "BC, BW"
                        : kc >= 0 && kr >= 0 ? "BW, BC"
                        : kc >= 0            ? "BC"
                        : kr >= 0            ? "BW, 1"
                                             : "1";
    akg_buf_appendf(b, "%s%s%s = alloc([%s], llm_hint=[\"fastest\"])\n%sload(x%d[", e->ind, name,
                    trans ? "_r" : "", shape, e->ind, leaf_slot(e, l->id));
    load_region(e, m, kc < 0 && kr < 0);
    akg_buf_appendf(b, "] -> %s%s)\n", name, trans ? "_r" : "");
    if (trans)
        akg_buf_appendf(b, "%s%s = transpose(%s_r)\n", e->ind, name, name);
}

static void load_leaf(ew *e, const akg_graph_value *l, const akg_graph_dimmap *m, const char *name)
{
    akg_buf *b = e->b;
    if (e->tiled) {
        load_tiled(e, l, m, name);
        return;
    }
    int col = !e->flat && reads_column(m, e->rank);
    akg_buf_appendf(b, "%s%s = alloc([%s], llm_hint=[\"fastest\"])\n%sload(x%d[", e->ind, name,
                    e->flat || col ? "BLOCK" : "1", e->ind, leaf_slot(e, l->id));
    if (e->flat) {
        akg_buf_appendf(b, "i:i+BLOCK] -> %s)\n", name);
        return;
    }
    /* one element a row: the last index as a unit slice, so the tile is [1] */
    load_region(e, m, !col);
    akg_buf_appendf(b, "] -> %s)\n", name);
}

/* A reshape of an input, weight or buffer whose groups of dims each merge dims into one or
 * split one dim into several: the tensor is declared in the reshaped shape and bound from
 * the original one (the binding reads it as a row-major reshape). */
static int regroups_leaf(const akg_graph *g, const akg_graph_value *v)
{
    const akg_graph_value *s = &g->values[v->args[0].value];
    int fa[AKG_GRAPH_MAX_RANK], fb[AKG_GRAPH_MAX_RANK], ta[AKG_GRAPH_MAX_RANK],
        tb[AKG_GRAPH_MAX_RANK];
    if (strcmp(v->op, "reshape") || !akg_graph_is_leaf(s) || s->kind == AKG_GRAPH_CONSTANT)
        return 0;
    int n = akg_graph_reshape_groups(s, v, fa, fb, ta, tb);
    for (int k = 0; k < n; k++)
        if (akg_ew_count_big(s, fa[k], fb[k]) > 1 && akg_ew_count_big(v, ta[k], tb[k]) > 1)
            return 0;
    return n >= 0;
}

/* The tile holding value id read through map m: found, or made (its operands first). Its
 * name goes to *name. */
static int tile_of(ew *e, int id, akg_graph_dimmap m, const char **name)
{
    const akg_graph *g = e->g;
    const akg_graph_value *v = &g->values[id];
    if (akg_graph_is_view(v)) {
        int src;
        akg_graph_dimmap sm;
        const char *why = NULL;
        if (!akg_graph_view_source(g, v, &m, &src, &sm, &why)) {
            if (!e->writing)
                akg_graph_op_word(v, 0, e->name, sizeof e->name);
            return tile_of(e, src, sm, name);
        }
        int plain = 1; /* the reshaped tensor is read at its own indices */
        for (int k = 0; k < m.rank; k++)
            plain &= akg_graph_dimmap_plain(&m, k) || (m.q[k] < 0 && m.off[k] == 0);
        if (!plain || !regroups_leaf(g, v))
            return ew_decline(e, v,
                              "a reshape that regroups the dims of a computed value, regroups "
                              "dims across each other or is sliced, is not designed yet; reshapes "
                              "of an input, weight or buffer that merge or split dims are, and "
                              "so are reshapes that add or remove dims of size 1");
        if (!e->writing)
            akg_graph_op_word(v, 0, e->name, sizeof e->name);
    }
    for (int i = 0; i < e->n_tiles; i++)
        if (e->tiles[i].value == id && akg_graph_dimmap_equal(&e->tiles[i].map, &m)) {
            *name = e->tiles[i].name;
            return AKG_OK;
        }
    if (e->n_tiles >= EW_MAX_TILES)
        return ew_decline(e, v, "more than %d tiles in one pass", EW_MAX_TILES);
    int copies = 0;
    for (int i = 0; i < e->n_tiles; i++)
        copies += e->tiles[i].value == id;
    ew_tile *t = &e->tiles[e->n_tiles];
    t->value = id;
    t->map = m;
    if (copies)
        snprintf(t->name, sizeof t->name, "t%d_%d", id, copies);
    else
        snprintf(t->name, sizeof t->name, "t%d", id);
    if (akg_graph_is_leaf(v) || akg_graph_is_view(v)) { /* a view here regroups a leaf */
        t->loaded = 1;
        if (v->kind == AKG_GRAPH_CONSTANT)
            return ew_decline(e, v,
                              "a tensor made inside forward (constants are not designed "
                              "yet)");
        if (v->rank < 1)
            return ew_decline(e, v,
                              "a 0-d tensor operand (elementwise passes read tensors of "
                              "at least one dimension)");
        if (leaf_slot(e, id) < 0) {
            if (e->n_leaves >= AKG_GRAPH_MAX_ARGS)
                return ew_decline(e, v, "more than %d tensors in one pass", AKG_GRAPH_MAX_ARGS);
            e->leaf_map[e->n_leaves] = m;
            e->leaves[e->n_leaves++] = id;
        }
        e->n_tiles++; /* loaded before the computations (walk_outputs) */
        *name = t->name;
        return AKG_OK;
    }
    if (!akg_graph_op_elementwise(v))
        return ew_decline(e, v, "an elementwise pass holds only elementwise ops and views");
    e->n_tiles++;
    const char *operands[AKG_GRAPH_MAX_ARGS] = {0};
    for (int k = 0; k < v->n_args; k++) {
        if (v->args[k].kind != AKG_GRAPH_ARG_VALUE)
            continue;
        const akg_graph_value *a = &g->values[v->args[k].value];
        akg_graph_dimmap am = akg_graph_dimmap_broadcast(a, v, &m);
        int rc = tile_of(e, a->id, am, &operands[k]);
        if (rc)
            return rc;
    }
    if (!e->writing) {
        akg_graph_op_word(v, 0, e->name, sizeof e->name);
        *name = t->name;
        return AKG_OK;
    }
    char expr[1024];
    const char *why = NULL;
    if (akg_graph_op_render_operands(g, v, operands, expr, sizeof expr, &why))
        return ew_decline(e, v, "%s", why);
    if (e->first_op)
        akg_buf_appendf(e->b, "%s@llm_hint(\"vectorize\", \"simd\")\n", e->ind);
    e->first_op = 0;
    akg_buf_appendf(e->b, "%s%s = %s\n", e->ind, t->name, expr);
    *name = t->name;
    return AKG_OK;
}

/* Every output through tile_of: a dry run (writing 0) finds the tensors read and their maps,
 * the pass's name and whether it is flat; writing appends the body. */
static int walk_outputs(ew *e)
{
    const akg_graph *g = e->g;
    int n = e->n_tiles;
    e->n_tiles = 0;
    e->first_op = 1;
    if (e->writing) /* the loads first, in the order the dry run met them */
        for (int i = 0; i < n; i++) {
            const akg_graph_value *v = &g->values[e->tiles[i].value];
            if (!e->tiles[i].loaded)
                continue;
            e->tiles[e->n_tiles] = e->tiles[i];
            load_leaf(e, v, &e->tiles[i].map, e->tiles[i].name);
            e->n_tiles++;
        }
    for (int j = 0; j < g->n_outputs; j++) {
        const char *name;
        int rc = tile_of(e, g->outputs[j], akg_graph_dimmap_identity(e->rank), &name);
        if (rc)
            return rc;
        if (!e->writing)
            continue;
        akg_buf_appendf(e->b, "%sstore(%s -> out%d[", e->ind, name, j);
        if (e->tiled) {
            for (int q = 0; q < e->rank - 2; q++) {
                char idx[256];
                flat_index(idx, sizeof idx, q, e->rank - 3, "o");
                akg_buf_appendf(e->b, "%s, ", idx);
            }
            akg_buf_puts(e->b, "w0:w0+BW, c0:c0+BC])\n");
        } else {
            akg_buf_appendf(e->b, "%s])\n", e->flat ? "i:i+BLOCK" : "r, c0:c0+BLOCK");
        }
    }
    return AKG_OK;
}

static int check_outputs(ew *e)
{
    const akg_graph *g = e->g;
    for (int j = 0; j < g->n_outputs; j++) {
        const akg_graph_value *o = &g->values[g->outputs[j]];
        if (akg_graph_is_leaf(o))
            return ew_decline(e, o, "forward returns a %s unchanged", akg_graph_kind_name(o->kind));
        if (!same_shape(o, e->o))
            return ew_decline(e, o,
                              "output %d has another shape than output 0 (one pass writes "
                              "outputs of one shape)",
                              j);
    }
    if (e->o->rank < 1)
        return ew_decline(e, e->o,
                          "a 0-d result (elementwise designs need at least one dimension)");
    return AKG_OK;
}

int akg_designer_graph_elementwise(const akg_reference *ref, const akg_graph *g,
                                   const cJSON *feedback, akg_design **out, akg_range *where,
                                   char *err, size_t errlen)
{
    ew *e = calloc(1, sizeof *e);
    if (!e)
        return AKG_ENOMEM;
    *e = (ew){.ref = ref, .g = g, .where = where, .err = err, .errlen = errlen};
    e->o = &g->values[g->outputs[0]];
    e->rank = e->o->rank;
    int rc = check_outputs(e);
    if (!rc)
        rc = walk_outputs(e);
    if (rc) {
        free(e);
        return rc;
    }
    /* flat when every tensor is read at the output's own index */
    e->flat = 1;
    akg_graph_dimmap id = akg_graph_dimmap_identity(e->rank);
    for (int i = 0; i < e->n_tiles; i++) {
        const akg_graph_value *v = &g->values[e->tiles[i].value];
        if (e->tiles[i].loaded &&
            (!same_shape(v, e->o) || !akg_graph_dimmap_equal(&e->tiles[i].map, &id)))
            e->flat = 0;
    }
    /* tiled when a tensor runs along the output's last two dims in the other order */
    for (int i = 0; i < e->n_tiles && !e->flat && e->rank >= 2; i++) {
        int kc = dim_along(&e->tiles[i].map, e->rank - 1);
        int kr = dim_along(&e->tiles[i].map, e->rank - 2);
        if (e->tiles[i].loaded && kc >= 0 && kr >= 0 && kc < kr)
            e->tiled = 1;
    }
    if (e->n_leaves == 0) {
        rc = ew_decline(e, e->o, "a result that reads no tensor of the task");
        free(e);
        return rc;
    }
    const char *fb = cJSON_GetStringValue(cJSON_GetObjectItem(feedback, "class"));
    int numeric_retry = fb && (!strcmp(fb, "numerical_mismatch") || !strcmp(fb, "shape_mismatch"));
    akg_buf b;
    akg_buf_init(&b, 1 << 18);
    akg_ew_write_header(e, &b, numeric_retry);
    if (e->flat) {
        akg_buf_puts(&b, "  for i in range(0, N, BLOCK):\n");
        e->ind = "    ";
    } else if (e->tiled) {
        int w = e->rank - 2;
        akg_buf_appendf(&b,
                        "  for t in range(0, O * ceil(D%d, BW)):\n    o = t // ceil(D%d, BW)\n"
                        "    w0 = t %% ceil(D%d, BW) * BW\n    for c0 in range(0, D%d, BC):\n",
                        w, w, w, w + 1);
        e->ind = "      ";
    } else {
        akg_buf_puts(&b,
                     "  for r0 in range(0, R, RB):\n    for r in range(r0, min(r0 + RB, R)):\n");
        akg_buf_appendf(&b, "      for c0 in range(0, D%d, BLOCK):\n", e->rank - 1);
        e->ind = "        ";
    }
    e->b = &b;
    e->writing = 1;
    rc = walk_outputs(e);
    akg_buf_puts(&b, "}\n");
    if (rc) {
        akg_buf_free(&b);
        free(e);
        return rc;
    }
    akg_design *d = akg_rule_family_design("pointwise", e->name);
    if (!d) {
        akg_buf_free(&b);
        free(e);
        return AKG_ENOMEM;
    }
    d->rank = e->rank;
    d->math = numeric_retry ? AKG_MATH_PRECISE : AKG_MATH_FAST;
    cJSON_AddStringToObject(d->params, "from", "graph");
    cJSON_AddStringToObject(d->params, "kind", e->flat ? "flat" : e->tiled ? "tiled" : "broadcast");
    cJSON_AddNumberToObject(d->params, "outputs", g->n_outputs);
    cJSON *ls = cJSON_AddArrayToObject(d->params, "operands");
    for (int i = 0; i < e->n_leaves; i++)
        cJSON_AddItemToArray(ls, cJSON_CreateString(akg_ew_slot_tensor(e, i)->name));
    free(e);
    d->sketch_text = akg_buf_take(&b);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
