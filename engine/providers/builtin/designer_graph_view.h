/*
 * designer_graph_view.h: views of the probe's op graph read as index maps
 * (designer_graph_view.c), for every graph Designer.
 */
#ifndef AKG_DESIGNER_GRAPH_VIEW_H
#define AKG_DESIGNER_GRAPH_VIEW_H

#include "akg/graph.h"

/* How a value's elements are reached from a kernel's iteration space: dim k of the value is
 * read at off[k] + step[k] * (the index of the space's dim q[k]), or at off[k] when q[k] is
 * -1 (a dim of size 1: a broadcast or a dim a view added, at 0; or a dim a select picks). A
 * slice gives the offset and the step. */
typedef struct {
    int rank;
    int q[AKG_GRAPH_MAX_RANK];
    long off[AKG_GRAPH_MAX_RANK];
    long step[AKG_GRAPH_MAX_RANK];
} akg_graph_dimmap;

/* The identity map of a value of rank `rank` read by a space of the same rank. */
akg_graph_dimmap akg_graph_dimmap_identity(int rank);
/* 1 when two maps are the same. */
int akg_graph_dimmap_equal(const akg_graph_dimmap *a, const akg_graph_dimmap *b);

/* 1 when dim k reads the space's dim at its own index (offset 0, step 1). */
int akg_graph_dimmap_plain(const akg_graph_dimmap *m, int k);

/* 1 for the views this file reads as index maps: permute, reshape, expand, slice, select. */
int akg_graph_is_view(const akg_graph_value *v);

/* The map of operand `a` of an elementwise op whose result `r` is read through rm, under
 * PyTorch broadcasting (shapes right-aligned; a dim of size 1 against a larger one reads
 * index 0). */
akg_graph_dimmap akg_graph_dimmap_broadcast(const akg_graph_value *a, const akg_graph_value *r,
                                            const akg_graph_dimmap *rm);

/* View v read through vm, followed back to what it views: *src gets the viewed value's id and
 * *sm its map. A permute moves the indices between dims; an expand pins the dims it
 * stretches to 0; a reshape that only adds or removes dims of size 1 keeps the others in
 * order; a slice offsets and steps its dim; a select pins its dim to the index. 0, or -1 with
 * *why (a static phrase) for a reshape that regroups dims or a malformed view. */
int akg_graph_view_source(const akg_graph *g, const akg_graph_value *v, const akg_graph_dimmap *vm,
                          int *src, akg_graph_dimmap *sm, const char **why);

/* The groups of dims a reshape from `from` to `to` regroups, dims of size 1 left out: group k
 * pairs from's dims [fa[k], fb[k]) with to's dims [ta[k], tb[k]) of the same product (a dim
 * of size 1 inside a range counts for nothing; those outside every range too). The count, or
 * -1 when the products never meet (a malformed reshape). Arrays of AKG_GRAPH_MAX_RANK. */
int akg_graph_reshape_groups(const akg_graph_value *from, const akg_graph_value *to, int *fa,
                             int *fb, int *ta, int *tb);

#endif
