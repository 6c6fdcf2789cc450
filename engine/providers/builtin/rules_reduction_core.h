/*
 * rules_reduction_core.h: what the reduction, norm, scan and loss rules share.
 *
 * Their forwards are data flow over a view [O, D, I] of the input: D is the
 * reduced (or scanned) run of dims, O the dims before it, I the dims after.
 * The rules read forward's expression tree into a small expression language
 * kept in the design's params (cJSON), so that the sketch writers
 * (rx_sketch.h) can write the element computation without knowing which
 * torch spelling produced it:
 *
 *   number                 a constant
 *   {"in": k}              element of kernel tensor input k
 *   {"p": k}               element of tensor parameter k (indexed along D)
 *   {"s": k}               scalar k (a constant or a constructor argument)
 *   {"st": k}              statistic k of the current row (a reduction)
 *   {"rv": k}              row value k (an expression of statistics)
 *   {"op": NAME, "a": [E, ...]}  an elementwise op
 *
 * Params written by the builder: "inputs" (forward parameter indices, kernel
 * order), "input_dtypes", "scalars" ([{name, value, from_init?}]), "tensors"
 * ([{name, attr, shape}] parameters or buffers of Model read by the kernel),
 * "stats" ([{mode, expr}]), "dims" ({"all":1} or {"dim":{value, from_init?},
 * "n":count}), "keepdim". The rules add the design's kind ("design": reduce,
 * rowmap, scan, chnorm, rowloss) and its own fields; akg_rx_write_sketch turns
 * all of it into the bound sketch, the only thing the Coder reads (the params
 * stay in the design as its provenance).
 */
#ifndef AKG_RULES_REDUCTION_CORE_H
#define AKG_RULES_REDUCTION_CORE_H

#include <cjson/cJSON.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "akg/task.h"

typedef struct {
    const akg_reference *ref;
    const cJSON *probe;
    akg_range *where;
    char *err;
    size_t errlen;
    cJSON *params; /* borrowed: the design's params */
    int have_dims; /* stats agreed on a dims spec */
    int keepdim;   /* every stat so far kept its dims */
    int failed;    /* 1: the tree holds something we do not read (no message) */
    int inline_depth;
    int precise; /* the sketch asks for libm maths (a retry after a numerical mismatch) */
} akg_rx_ctx;

/* Starts a context over params (adds the empty arrays). */
void akg_rx_init(akg_rx_ctx *c, const akg_reference *ref, const cJSON *probe, cJSON *params,
                 akg_range *where, char *err, size_t errlen);

/* forward's returned expression with assignments followed later (NULL if
 * forward is not a straight sequence of assignments and one return). */
const akg_expr *akg_rx_returned(const akg_reference *ref);

/* Converts e to the expression language; returns a new cJSON the caller
 * owns, or NULL with c->failed set when e holds a construct not read. */
cJSON *akg_rx_expr(akg_rx_ctx *c, const akg_expr *e);

/* The reduction a call names ("sum", "mean", "max", "min", "prod",
 * "argmax", "argmin", "norm"), or NULL. Spellings: sum, mean, amax, amin,
 * max/min with a dim, prod, argmax, argmin, norm (p=2/'fro'). */
const char *akg_rx_reduction_mode(const akg_rx_ctx *c, const akg_expr *call);

/* Reads a reduction call: its tensor argument as an expression, its dims
 * and keepdim. Sets/compares c's dims; returns the stat index or -1. */
int akg_rx_add_stat(akg_rx_ctx *c, const akg_expr *call, const char *mode);

/* Registers a forward parameter as kernel input; returns its slot. */
int akg_rx_input(akg_rx_ctx *c, int forward_index);
/* Registers a scalar; returns its slot or -1. */
int akg_rx_scalar(akg_rx_ctx *c, const akg_scalar *s);
/* Registers a tensor parameter/buffer of Model (attr path "weight",
 * "ln.weight"); returns its slot or -1 when the probe does not know it. */
int akg_rx_tensor(akg_rx_ctx *c, const char *attr);

/* Expression constructors (new cJSON the caller owns; args are taken). */
cJSON *akg_rx_op(const char *op, cJSON *a, cJSON *b, cJSON *c3);
cJSON *akg_rx_ref(const char *key, int k);

/* Whether e refers to elements ({"in"} or {"p"}) / statistics or row values. */
int akg_rx_has_elem(const cJSON *e);
int akg_rx_has_stat(const cJSON *e);

/* Moves every maximal statistic-only subtree of e into params "rowvals"
 * (x / g(stats) becomes x * rv with rv = 1 / g(stats)). Returns the new
 * tree (e is consumed). */
cJSON *akg_rx_hoist(cJSON *params, cJSON *e);

/* Fails with a message naming e (AKG_EUNSUPPORTED). */
int akg_rx_unsupported(akg_rx_ctx *c, const akg_expr *e, const char *what);

/* Shape of probe input 0 as sizes; returns the rank or -1. */
int akg_rx_input_shape(const cJSON *probe, int i, long *sizes, int max);

/* Writes the complete, bound sketch of the design (rx_sketch.h) into d->sketch_text,
 * from d->params (the analysis above, which stays in the design as provenance only) and
 * the probe's shapes. precise: libm maths (a retry after a numerical mismatch); what:
 * the computation in words, for the sketch's comment. Returns AKG_OK, or
 * AKG_EUNSUPPORTED with a message in err when the design cannot be said in the sketch
 * language (AKG_ENOMEM when out of memory). */
int akg_rx_write_sketch(akg_design *d, const akg_reference *ref, const cJSON *probe, int precise,
                        const char *what, char *err, size_t errlen);

/* akg_rx_write_sketch with the GPU's designs (reduce and rowmap designs, rx_sketch_gpu.c;
 * the other kinds get the CPU's writers with grid hints). */
int akg_rx_write_sketch_gpu(akg_design *d, const akg_reference *ref, const cJSON *probe,
                            int precise, const char *what, char *err, size_t errlen);

/* Whether the Conductor's feedback asks for libm maths (a numerical mismatch). */
int akg_rx_numeric_retry(const cJSON *feedback);

/* akg_rx_write_sketch for the design of context c; on failure frees d and returns the
 * rule's answer (a message naming `at`). On success *out = d. */
int akg_rx_finish(akg_rx_ctx *c, akg_design *d, const akg_expr *at, const char *what,
                  akg_design **out);

#endif
