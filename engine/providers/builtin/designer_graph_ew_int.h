/*
 * designer_graph_ew_int.h: what the elementwise pass's two files share
 * (designer_graph_ew.c walks the graph and writes the body;
 * designer_graph_ew_header.c writes the declarations and bindings).
 */
#ifndef AKG_DESIGNER_GRAPH_EW_INT_H
#define AKG_DESIGNER_GRAPH_EW_INT_H

#include "akg/akg.h"
#include "akg/graph.h"
#include "akg/task.h"
#include "designer_graph_view.h"

#define EW_MAX_TILES 512

typedef struct {
    int value;
    akg_graph_dimmap map;
    char name[24];
    int loaded; /* a tensor's load (a leaf, or a regrouping reshape of one) */
} ew_tile;

typedef struct ew {
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
    akg_graph_dimmap leaf_map[AKG_GRAPH_MAX_ARGS];         /* the map each is declared by */
    char decl[AKG_GRAPH_MAX_ARGS][AKG_GRAPH_MAX_RANK][12]; /* each one's declared dims */
    int n_leaves;
    char name[64];
    akg_buf *b;
    const char *ind;
} ew;

/* How many dims of v in [a, b) are not of size 1. */
static inline int akg_ew_count_big(const akg_graph_value *v, int a, int b)
{
    int n = 0;
    for (int k = a; k < b; k++)
        n += v->shape[k] != 1;
    return n;
}

/* The tensor read by slot i: the leaf itself, or the leaf a regrouping reshape reads. */
const akg_graph_value *akg_ew_slot_tensor(const ew *e, int i);

/* Writes the sketch's header: the comment, symbols, tensors (each read tensor in the shape
 * it is declared by, e->decl), constexprs, bindings and the parallel hint of the pass. */
void akg_ew_write_header(ew *e, akg_buf *b, int numeric_retry);

#endif
