/*
 * designer_graph_view.c: a view in the op graph (permute, reshape, expand) is
 * an index map, not a copy. A graph Designer reads an operand reached through
 * views by following them back to the tensor they view and composing their
 * maps, so the kernel loads the viewed tensor at permuted or pinned indices
 * (a transposed load, a broadcast read of a vector) and never materialises
 * the view.
 *
 * The map says, for each dim of a value, which dim of the kernel's iteration
 * space indexes it, with an offset and a step (or that it is read at a fixed
 * index). Maps compose dim to dim, so permutes, expands, slices (chunk,
 * split, x[:, 1::2]), selects (x[:, 0]) and reshapes that add or remove dims
 * of size 1 (unsqueeze, squeeze, x[:, None]) are read; a reshape that regroups dims
 * (flattening [B, C, H] to [B, C * H]) maps one index to several and is
 * declined here: a flat index of a contiguous tensor is the reading it needs,
 * and akg_graph_reshape_groups says which dims it regroups (a Designer can
 * declare the tensor in the reshaped shape and bind it from the original,
 * which the language's binding reads as a row-major reshape).
 */
#include <string.h>

#include "designer_graph_view.h"

akg_graph_dimmap akg_graph_dimmap_identity(int rank)
{
    akg_graph_dimmap m = {rank, {0}, {0}, {0}};
    for (int k = 0; k < rank; k++) {
        m.q[k] = k;
        m.step[k] = 1;
    }
    return m;
}

int akg_graph_dimmap_equal(const akg_graph_dimmap *a, const akg_graph_dimmap *b)
{
    size_t n = (size_t)a->rank;
    return a->rank == b->rank && !memcmp(a->q, b->q, sizeof(int) * n) &&
           !memcmp(a->off, b->off, sizeof(long) * n) && !memcmp(a->step, b->step, sizeof(long) * n);
}

int akg_graph_dimmap_plain(const akg_graph_dimmap *m, int k)
{
    return m->q[k] >= 0 && m->off[k] == 0 && m->step[k] == 1;
}

/* dim k of `to` reads what dim j of `from` reads */
static void copy_dim(akg_graph_dimmap *to, int k, const akg_graph_dimmap *from, int j)
{
    to->q[k] = from->q[j];
    to->off[k] = from->off[j];
    to->step[k] = from->step[j];
}

static void pin_dim(akg_graph_dimmap *m, int k, long at)
{
    m->q[k] = -1;
    m->off[k] = at;
    m->step[k] = 1;
}

int akg_graph_is_view(const akg_graph_value *v)
{
    return v->kind == AKG_GRAPH_OP && v->n_args == 1 && v->args[0].kind == AKG_GRAPH_ARG_VALUE &&
           (!strcmp(v->op, "permute") || !strcmp(v->op, "reshape") || !strcmp(v->op, "expand") ||
            !strcmp(v->op, "slice") || !strcmp(v->op, "select"));
}

akg_graph_dimmap akg_graph_dimmap_broadcast(const akg_graph_value *a, const akg_graph_value *r,
                                            const akg_graph_dimmap *rm)
{
    akg_graph_dimmap m = {a->rank, {0}, {0}, {0}};
    for (int k = 0; k < a->rank; k++) {
        int j = k + r->rank - a->rank; /* right-aligned */
        if (j < 0 || (a->shape[k] == 1 && r->shape[j] != 1))
            pin_dim(&m, k, 0);
        else
            copy_dim(&m, k, rm, j);
    }
    return m;
}

/* A reshape that adds or removes dims of size 1: the other dims pair up in order. */
static int unit_reshape(const akg_graph_value *s, const akg_graph_value *v,
                        const akg_graph_dimmap *vm, akg_graph_dimmap *sm)
{
    int j = 0;
    sm->rank = s->rank;
    for (int k = 0; k < s->rank; k++) {
        if (s->shape[k] == 1) {
            pin_dim(sm, k, 0);
            continue;
        }
        while (j < v->rank && v->shape[j] == 1)
            j++;
        if (j >= v->rank || v->shape[j] != s->shape[k])
            return -1;
        copy_dim(sm, k, vm, j++);
    }
    while (j < v->rank && v->shape[j] == 1)
        j++;
    return j == v->rank ? 0 : -1;
}

int akg_graph_view_source(const akg_graph *g, const akg_graph_value *v, const akg_graph_dimmap *vm,
                          int *src, akg_graph_dimmap *sm, const char **why)
{
    const akg_graph_value *s = &g->values[v->args[0].value];
    *src = s->id;
    if (!strcmp(v->op, "expand")) {
        *sm = akg_graph_dimmap_broadcast(s, v, vm);
        return 0;
    }
    if (!strcmp(v->op, "permute")) {
        long perm[AKG_GRAPH_MAX_RANK];
        int n = akg_graph_attr_ints(v, "perm", perm, AKG_GRAPH_MAX_RANK);
        if (n != s->rank || n != v->rank) {
            *why = "a permute whose perm does not match its operand's rank";
            return -1;
        }
        sm->rank = s->rank;
        for (int j = 0; j < n; j++) {
            if (perm[j] < 0 || perm[j] >= n) {
                *why = "a permute with a dim out of range";
                return -1;
            }
            copy_dim(sm, (int)perm[j], vm, j);
        }
        return 0;
    }
    if (!strcmp(v->op, "slice")) {
        double dim = -1, start = 0, step = 1;
        akg_graph_attr_number(v, "dim", &dim);
        akg_graph_attr_number(v, "start", &start);
        akg_graph_attr_number(v, "step", &step);
        int d = (int)dim;
        if (d < 0 || d >= s->rank || s->rank != v->rank || start < 0 || step < 1) {
            *why = "a slice whose dim, start or step is out of range";
            return -1;
        }
        *sm = *vm;
        sm->off[d] = (long)start + (long)step * vm->off[d];
        sm->step[d] = (long)step * vm->step[d];
        return 0;
    }
    if (!strcmp(v->op, "select")) {
        double dim = -1, index = -1;
        akg_graph_attr_number(v, "dim", &dim);
        akg_graph_attr_number(v, "index", &index);
        int d = (int)dim;
        if (d < 0 || d >= s->rank || s->rank != v->rank + 1 || index < 0 ||
            index >= (double)s->shape[d]) {
            *why = "a select whose dim or index is out of range";
            return -1;
        }
        sm->rank = s->rank;
        for (int k = 0, j = 0; k < s->rank; k++) {
            if (k == d)
                pin_dim(sm, k, (long)index);
            else
                copy_dim(sm, k, vm, j++);
        }
        return 0;
    }
    if (!strcmp(v->op, "reshape") && !unit_reshape(s, v, vm, sm))
        return 0;
    *why = "a reshape that regroups dims (not only adding or removing dims of size 1) is not "
           "read as an index map yet; reshapes such as unsqueeze, squeeze and x[:, None] are";
    return -1;
}

int akg_graph_reshape_groups(const akg_graph_value *from, const akg_graph_value *to, int *fa,
                             int *fb, int *ta, int *tb)
{
    int i = 0, j = 0, n = 0;
    for (;;) {
        while (i < from->rank && from->shape[i] == 1)
            i++;
        while (j < to->rank && to->shape[j] == 1)
            j++;
        if (i == from->rank || j == to->rank)
            return i == from->rank && j == to->rank ? n : -1;
        if (n == AKG_GRAPH_MAX_RANK)
            return -1;
        long pf = from->shape[i], pt = to->shape[j];
        fa[n] = i++;
        ta[n] = j++;
        while (pf != pt) {
            if (pf < pt) {
                if (i == from->rank)
                    return -1;
                pf *= from->shape[i++];
            } else {
                if (j == to->rank)
                    return -1;
                pt *= to->shape[j++];
            }
        }
        fb[n] = i;
        tb[n] = j;
        n++;
    }
}
