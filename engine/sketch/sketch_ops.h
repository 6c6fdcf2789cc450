/*
 * The operation table of the Unified Sketch: every callable name, its
 * category, arity and keyword arguments. The language reference
 * (sketch-grammar/README.md) gives each operation's exact semantics.
 */
#ifndef AKG_SKETCH_OPS_H
#define AKG_SKETCH_OPS_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    OP_UNARY = 1, /* elementwise on one tile, optional scalar parameters */
    OP_BINARY,    /* elementwise on two operands with broadcasting */
    OP_CMP,       /* comparison: bool result, broadcasting */
    OP_WHERE,     /* where(mask, a, b) */
    OP_REDUCE,    /* reduce over axis (keepdim defaults to True) */
    OP_SCAN,      /* cumulative along axis */
    OP_SOFTMAX,   /* softmax / log_softmax along axis */
    OP_GEMM,      /* acc + a @ b */
    OP_DOT,       /* inner product or plain matrix product */
    OP_TRANSPOSE, /* permute axes */
    OP_CAST,      /* convert dtype */
    OP_FILL,      /* new tile filled with a value */
    OP_ZEROS,     /* new tile of zeros */
    OP_ARANGE,    /* 1-D tile of consecutive integers */
    OP_GATHER,    /* gather(x, index, axis): x's elements picked along axis by an integer tile */
    OP_INDEX,     /* integer helpers: ceil, min, max, floor_div */
    OP_ALLOC,
    OP_RANGE,
    OP_TUNE,
} sketch_op_category;

typedef struct {
    const char *name;
    sketch_op_category cat;
    size_t min_args, max_args; /* positional inputs, destination excluded */
    const char *kwargs;        /* accepted keywords, comma separated */
    const char *usage;         /* one-line signature for diagnostics */
} sketch_op;

const sketch_op *sketch_op_find(const char *name);
bool sketch_op_has_kwarg(const sketch_op *op, const char *kw);
const char *const *sketch_op_names(void);
size_t sketch_op_count(void);

#endif /* AKG_SKETCH_OPS_H */
