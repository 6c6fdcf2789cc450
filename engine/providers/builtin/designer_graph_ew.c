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
#include "designer_graph_view.h"
#include "graph_ops.h"
#include "rule_util.h"

#define EW_MAX_TILES 512

typedef struct {
    int value;
    akg_graph_dimmap map;
    char name[24];
    int loaded; /* a tensor's load (a leaf, or a regrouping reshape of one) */
} ew_tile;

typedef struct {
    const akg_reference *ref;
    const akg_graph *g;
    akg_range *where;
    char *err;
    size_t errlen;
    const akg_graph_value *o; /* the first output: its shape is the pass's */
    int rank, flat, tiled, writing, first_op;
    ew_tile tiles[EW_MAX_TILES];
    int n_tiles;
    /* the tensors read, in order: a leaf's id, or the id of a reshape of a leaf that
     * regroups its dims (the tensor is declared in the reshaped shape) */
    int leaves[AKG_GRAPH_MAX_ARGS];
    akg_graph_dimmap leaf_map[AKG_GRAPH_MAX_ARGS]; /* the map each is declared by */
    int n_leaves;
    char name[64];
    akg_buf *b;
    const char *ind;
} ew;

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

/* How many dims of v in [a, b) are not of size 1. */
static int count_big(const akg_graph_value *v, int a, int b)
{
    int n = 0;
    for (int k = a; k < b; k++)
        n += v->shape[k] != 1;
    return n;
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

/* The declared shape of a tensor read through map m: each dim the output's symbol it runs
 * along, 1 where it is pinned. */
static void leaf_shape(akg_buf *b, const akg_graph_dimmap *m)
{
    akg_buf_puts(b, "[");
    for (int k = 0; k < m->rank; k++) {
        if (m->q[k] < 0)
            akg_buf_appendf(b, "%s1", k ? ", " : "");
        else
            akg_buf_appendf(b, "%sD%d", k ? ", " : "", m->q[k]);
    }
    akg_buf_puts(b, "]");
}

/* The leaf dim of map m that runs along output dim q, or -1. */
static int dim_along(const akg_graph_dimmap *m, int q)
{
    for (int k = 0; k < m->rank; k++)
        if (m->q[k] == q)
            return k;
    return -1;
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
    for (int k = 0; k < m->rank; k++) {
        int q = m->q[k];
        char idx[256] = "0";
        if (q == e->rank - 1)
            snprintf(idx, sizeof idx, "c0:c0+BC");
        else if (q == e->rank - 2)
            snprintf(idx, sizeof idx, "w0:w0+BW");
        else if (q >= 0)
            flat_index(idx, sizeof idx, q, e->rank - 3, "o");
        if (kc < 0 && kr < 0 && k == m->rank - 1 && q < 0) /* one element: a unit slice */
            akg_buf_appendf(b, "%s0:1", k ? ", " : "");
        else if (kc < 0 && kr < 0 && k == m->rank - 1)
            akg_buf_appendf(b, "%s%s:%s%s%s + 1", k ? ", " : "", idx, strchr(idx, ' ') ? "(" : "",
                            idx, strchr(idx, ' ') ? ")" : "");
        else
            akg_buf_appendf(b, "%s%s", k ? ", " : "", idx);
    }
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
    for (int k = 0; k < m->rank; k++) {
        int q = m->q[k];
        char idx[256] = "0";
        if (q == e->rank - 1)
            snprintf(idx, sizeof idx, "c0:c0+BLOCK");
        else if (q >= 0)
            row_index(idx, sizeof idx, q, e->rank);
        /* one element a row: the last index as a unit slice, so the tile is [1] */
        if (!col && k == m->rank - 1 && q < 0)
            akg_buf_appendf(b, "%s0:1", k ? ", " : "");
        else if (!col && k == m->rank - 1)
            akg_buf_appendf(b, "%s%s:%s%s%s + 1", k ? ", " : "", idx, strchr(idx, ' ') ? "(" : "",
                            idx, strchr(idx, ' ') ? ")" : "");
        else
            akg_buf_appendf(b, "%s%s", k ? ", " : "", idx);
    }
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
        if (count_big(s, fa[k], fb[k]) > 1 && count_big(v, ta[k], tb[k]) > 1)
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
        if (!regroups_leaf(g, v))
            return ew_decline(e, v,
                              "a reshape that regroups the dims of a computed value, or "
                              "regroups dims across each other, is not designed yet; reshapes "
                              "of an input, weight or buffer that merge or split dims are, and "
                              "so are reshapes that add or remove dims of size 1");
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

/* The tensor read by slot i: the leaf itself, or the leaf a regrouping reshape reads. */
static const akg_graph_value *slot_tensor(const ew *e, int i)
{
    const akg_graph_value *v = &e->g->values[e->leaves[i]];
    return akg_graph_is_leaf(v) ? v : &e->g->values[v->args[0].value];
}

/* The SHAPE of a tensor declared in its reshaped shape (slot i): per dim of the original, the
 * symbol of the reshaped dim it is (1:1), a fresh symbol En (dims merged into one, or one dim
 * split), or 1; then bindings of the reshaped dims no earlier item bound: a merge is the
 * product of its En, a split's dims their traced sizes but the last, which is En divided by
 * the others. */
static void bind_regrouped(ew *e, akg_buf *b, int i, int *bound, int *n_extra)
{
    const akg_graph_value *v = &e->g->values[e->leaves[i]], *src = slot_tensor(e, i);
    const akg_graph_dimmap *m = &e->leaf_map[i];
    char entry[AKG_GRAPH_MAX_RANK][16], after[1024] = "";
    size_t off = 0;
    int fa[AKG_GRAPH_MAX_RANK], fb[AKG_GRAPH_MAX_RANK], ta[AKG_GRAPH_MAX_RANK],
        tb[AKG_GRAPH_MAX_RANK];
    for (int k = 0; k < src->rank; k++)
        snprintf(entry[k], sizeof entry[k], "1");
    int n = akg_graph_reshape_groups(src, v, fa, fb, ta, tb);
    for (int k = 0; k < n; k++) {
        int first_s = -1, first_v = -1;
        for (int d = fa[k]; d < fb[k] && first_s < 0; d++)
            if (src->shape[d] != 1)
                first_s = d;
        for (int d = ta[k]; d < tb[k] && first_v < 0; d++)
            if (v->shape[d] != 1)
                first_v = d;
        if (count_big(src, fa[k], fb[k]) == 1 && count_big(v, ta[k], tb[k]) == 1) {
            snprintf(entry[first_s], sizeof entry[0], "D%d", m->q[first_v]);
            bound[m->q[first_v]] = 1;
            continue;
        }
        if (count_big(v, ta[k], tb[k]) == 1) { /* dims merged into one */
            int q = m->q[first_v];
            if (!bound[q] && off < sizeof after)
                off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = 1", q);
            for (int d = fa[k]; d < fb[k]; d++) {
                if (src->shape[d] == 1)
                    continue;
                snprintf(entry[d], sizeof entry[0], "E%d", *n_extra);
                if (!bound[q] && off < sizeof after)
                    off += (size_t)snprintf(after + off, sizeof after - off, " * E%d", *n_extra);
                (*n_extra)++;
            }
            bound[q] = 1;
            continue;
        }
        /* one dim split into several */
        int e_sym = (*n_extra)++, last = -1;
        snprintf(entry[first_s], sizeof entry[0], "E%d", e_sym);
        for (int d = ta[k]; d < tb[k]; d++)
            if (v->shape[d] != 1 && !bound[m->q[d]])
                last = d;
        for (int d = ta[k]; d < tb[k] && last >= 0; d++) {
            if (v->shape[d] == 1 || bound[m->q[d]] || d == last || off >= sizeof after)
                continue;
            off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = %ld", m->q[d],
                                    v->shape[d]);
            bound[m->q[d]] = 1;
        }
        if (last >= 0 && off < sizeof after) {
            off += (size_t)snprintf(after + off, sizeof after - off, ", D%d = E%d // (1",
                                    m->q[last], e_sym);
            for (int d = ta[k]; d < tb[k] && off < sizeof after; d++)
                if (v->shape[d] != 1 && d != last)
                    off += (size_t)snprintf(after + off, sizeof after - off, " * D%d", m->q[d]);
            if (off < sizeof after)
                off += (size_t)snprintf(after + off, sizeof after - off, ")");
            bound[m->q[last]] = 1;
        }
    }
    for (int k = 0; k < src->rank; k++)
        akg_buf_appendf(b, "%s%s", k ? ", " : "", entry[k]);
    akg_buf_appendf(b, "])%s\n", after);
}

/* The bindings: each tensor (the symbols of the dims it runs along bound by its SHAPE), the
 * dims no tensor binds, the row or element count, the outputs. */
static void write_binds(ew *e, akg_buf *b, int *n_extra)
{
    const akg_graph *g = e->g;
    int rank = e->rank;
    int bound[AKG_GRAPH_MAX_RANK] = {0};
    for (int i = 0; i < e->n_leaves; i++) {
        const akg_graph_value *l = slot_tensor(e, i);
        akg_buf_appendf(b, "  bind: x%d = %s(\"%s\", [", i,
                        l->kind == AKG_GRAPH_INPUT ? "input" : "weight", l->name);
        if (!akg_graph_is_leaf(&g->values[e->leaves[i]])) {
            bind_regrouped(e, b, i, bound, n_extra);
            continue;
        }
        for (int k = 0; k < e->leaf_map[i].rank; k++) {
            int q = e->leaf_map[i].q[k];
            akg_buf_appendf(b, q < 0 ? "%s1" : "%sD%d", k ? ", " : "", q);
            if (q >= 0)
                bound[q] = 1;
        }
        akg_buf_puts(b, "])\n");
    }
    akg_buf_puts(b, "  bind: ");
    for (int k = 0; k < rank; k++)
        if (!bound[k]) /* a dim of size 1 that no operand runs along */
            akg_buf_appendf(b, "D%d = %ld, ", k, e->o->shape[k]);
    akg_buf_appendf(b, "%s = 1", e->flat ? "N" : e->tiled ? "O" : "R");
    for (int k = 0; k < (e->flat ? rank : e->tiled ? rank - 2 : rank - 1); k++)
        akg_buf_appendf(b, " * D%d", k);
    for (int j = 0; j < g->n_outputs; j++) {
        akg_buf_appendf(b, ", out%d = output(%d, [", j, j);
        for (int k = 0; k < rank; k++)
            akg_buf_appendf(b, "%sD%d", k ? ", " : "", k);
        akg_buf_puts(b, "])");
    }
    akg_buf_puts(b, "\n");
}

/* The header: symbols, tensors, constexprs and bindings. */
static void write_header(ew *e, akg_buf *b, int numeric_retry)
{
    const akg_graph *g = e->g;
    int rank = e->rank, n_extra = 0;
    akg_buf binds;
    akg_buf_init(&binds, 1 << 16);
    write_binds(e, &binds, &n_extra);
    if (e->tiled)
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over [BW, BC] tiles of the output's "
                        "last two dims;\n# an operand read transposed is loaded along its own "
                        "last dim and transposed in\n# registers, so both its reads and the "
                        "output's writes are contiguous\n",
                        e->name);
    else if (e->flat)
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over the flattened operands (N "
                        "elements),\n# BLOCK elements per task, tasks split across the cores\n",
                        e->name);
    else
        akg_buf_appendf(b,
                        "# %s: one fused elementwise pass over the rows of the output's last "
                        "dimension;\n# each operand is read at the index the output's index "
                        "maps to through its views\n# (permuted dims, broadcast dims pinned to "
                        "0)\n",
                        e->name);
    akg_buf_appendf(b, "sketch %s {\n  symbols: %s", e->name, e->flat ? "N" : e->tiled ? "O" : "R");
    for (int i = 0; i < rank; i++)
        akg_buf_appendf(b, ", D%d", i);
    for (int i = 0; i < n_extra; i++)
        akg_buf_appendf(b, ", E%d", i);
    akg_buf_puts(b, ";\n  tensors: ");
    for (int i = 0; i < e->n_leaves; i++) {
        akg_buf_appendf(b, "x%d", i);
        if (e->flat)
            akg_buf_puts(b, "[N]");
        else
            leaf_shape(b, &e->leaf_map[i]);
        akg_buf_appendf(b, ": %s; ", slot_tensor(e, i)->dtype);
    }
    for (int j = 0; j < g->n_outputs; j++) {
        const char *dt = g->values[g->outputs[j]].dtype;
        if (e->flat)
            akg_buf_appendf(b, "%sout%d[N]: %s", j ? "; " : "", j, dt);
        else if (e->tiled) {
            akg_buf_appendf(b, "%sout%d[", j ? "; " : "", j);
            for (int k = 0; k < rank; k++)
                akg_buf_appendf(b, "%sD%d", k ? ", " : "", k);
            akg_buf_appendf(b, "]: %s", dt);
        } else
            akg_buf_appendf(b, "%sout%d[R, D%d]: %s", j ? "; " : "", j, rank - 1, dt);
    }
    akg_buf_puts(b, ";\n");
    if (e->flat)
        akg_buf_appendf(b, "  constexpr: BLOCK = tune(%d, 4096, 65536);\n",
                        numeric_retry ? 4096 * 4 : 16384);
    else if (e->tiled)
        akg_buf_puts(b, "  constexpr: BW = tune(32, 16, 64), BC = tune(32, 16, 64);\n");
    else
        akg_buf_puts(b, "  constexpr: BLOCK = tune(1024, 256, 4096), RB = tune(16, 4, 64);\n");
    akg_buf_puts(b, binds.data ? binds.data : "");
    akg_buf_free(&binds);
    akg_buf_puts(b, "\n  @llm_hint(\"parallel\", \"coreidx\")\n");
    if (numeric_retry)
        akg_buf_puts(b, "  @llm_hint(\"math\", \"precise\")\n");
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
    write_header(e, &b, numeric_retry);
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
        cJSON_AddItemToArray(ls, cJSON_CreateString(slot_tensor(e, i)->name));
    free(e);
    d->sketch_text = akg_buf_take(&b);
    if (!d->sketch_text) {
        akg_design_free(d);
        return AKG_ENOMEM;
    }
    *out = d;
    return AKG_OK;
}
