/*
 * designer_graph_reduce_int.h: what the graph Designer's reduction files share
 * (internal to the built-in provider).
 *
 *   designer_graph_reduce.c  reads the group (which ops, which dims, which
 *                            outputs, the views it absorbs) and picks a writer;
 *   designer_graph_bind.c    names the sketch's tensors and writes their
 *                            declarations and bind: items (reshaped inputs,
 *                            reshaped outputs);
 *   designer_graph_tiles.c   the general design: one task per kept index
 *                            holding the whole reduced extent in a tile;
 *   designer_graph_rows.c    the streamed design of plain statistics (sum,
 *                            mean, prod, amax, amin, logsumexp): f32 blocks
 *                            folded into f64 accumulators, or CH columns.
 */
#ifndef AKG_DESIGNER_GRAPH_REDUCE_INT_H
#define AKG_DESIGNER_GRAPH_REDUCE_INT_H

#include <stddef.h>

#include "akg/akg.h"
#include "akg/graph.h"
#include "akg/task.h"

#define RG_NAME_LEN 48
#define RG_MAX_OUT 8

typedef struct {
    const akg_reference *ref;
    const akg_graph *g;
    akg_range *where;
    char *err;
    size_t errlen;
    int n;                       /* rank of S, the shape reduced */
    long S[AKG_GRAPH_MAX_RANK];  /* S */
    int red[AKG_GRAPH_MAX_RANK]; /* 1: dim reduced */
    int col;                     /* S's last dim when kept (CH columns a task), else -1 */
    int *rk;                     /* per value: 1 when its rank lost the reduced dims */
    int *view;                   /* per value: 1 for a reshape of a leaf, read as that leaf */
    char (*names)[24];           /* per value: its tile in the sketch */
    char (*tensor)[RG_NAME_LEN]; /* per sketch tensor (leaf or view): its name */
    long correction;             /* of var/std with correction != 0 (one value) */
    int need_nc;
    char dt[8]; /* the group's float dtype: "f32" or "f64" */
    int n_out;
    int out[RG_MAX_OUT];     /* per output: the value whose tile is stored */
    int out_val[RG_MAX_OUT]; /* per output: forward's result (a reshape of out[k], or it) */
    int red_out[RG_MAX_OUT]; /* per output: 1 when it has the reduced shape */
} rctx;

/* The graph Designer's refusal (akg_graph_decline) at value v. */
int rg_decline(rctx *c, const akg_graph_value *v, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int rg_in_list(const char *const *list, const char *op);
int rg_is_reduction(const akg_graph_value *v);
int rg_is_composite(const akg_graph_value *v);
int rg_is_index(const akg_graph_value *v);
int rg_keepdim(const akg_graph_value *v);
void rg_shape_text(const akg_graph_value *v, char *buf, size_t len);
void rg_dims_text(const int *red, int n, char *buf, size_t len);

/* designer_graph_bind.c */
/* 1 when value v is a tensor the sketch declares: an input, weight or buffer read by an op
 * other than an absorbed reshape, or an absorbed reshape of one. */
int rg_is_tensor(const rctx *c, const akg_graph_value *v);
/* The task tensor behind sketch tensor v (the leaf under an absorbed reshape). */
const akg_graph_value *rg_source(const rctx *c, const akg_graph_value *v);
/* Groups consecutive dims of `from` into each dim of `to` (start[k]..start[k+1]); 0, or -1
 * when `to` is not `from` with runs of dims merged (a split, another order). */
int rg_merge_groups(const long *from, int nf, const long *to, int nt, int *start);
/* Names each value's tile (v<id>) and each sketch tensor after its task name. */
void rg_name_tensors(rctx *c);
/* ", X3_1, X3_2" for the symbols that the reshaped inputs' bindings introduce. */
void rg_view_symbols(akg_buf *b, const rctx *c);
/* The extents of a tensor of rank r aligned right against S: "1" where it broadcasts, else
 * S's symbol; keep_red: the reduced dims as 1. */
void rg_tensor_dims(akg_buf *b, const rctx *c, const long *shape, int r, int keep_red);
/* bind: items "NAME = input(...)" / "weight(...)" of every sketch tensor (and the symbols
 * a reshaped input binds), each on a line of its own. */
void rg_bind_tensors(akg_buf *b, const rctx *c);
/* The SHAPE of output k: forward's result's dims as products of S's symbols. */
void rg_output_shape(akg_buf *b, const rctx *c, int k);
/* The sketch name of output k's tensor ("result", or "result<k>" with several). */
void rg_result_name(const rctx *c, int k, char *buf, size_t len);

/* designer_graph_tiles.c: the tile design; appends the sketch to b. */
int rg_write_tiles(rctx *c, int precise, akg_buf *b, const char *name);

/* designer_graph_rows.c: whether the streamed design fits the group (1/0), and the design. */
int rg_rows_fit(const rctx *c);
int rg_write_rows(rctx *c, int precise, akg_buf *b, const char *name);

#endif
