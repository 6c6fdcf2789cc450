/*
 * rules_pool_sketch.h: the pooling family's sketch writers (see the .c), shared by the
 * spelling rules (rules_pool.c) and the graph Designer (designer_graph_conv.c).
 */
#ifndef AKG_RULES_POOL_SKETCH_H
#define AKG_RULES_POOL_SKETCH_H

/* A max or average pooling as a design reads it. */
typedef struct {
    const char *name;       /* sketch name */
    const char *layer;      /* Model's attribute holding the layer: the window is bound with attr()
                             * so that ModelNew checks it; NULL for functional pooling (the window is
                             * the design's constants alone) */
    const char *input;      /* forward's argument */
    int dims, is_max, rank; /* spatial dims, max or avg, the input's rank */
    int ceil_mode, include_pad, divisor; /* as the constructor sets them (divisor: override) */
    long divisor_value;                  /* the override, when there is no layer to read it */
    long kernel[3], stride[3], padding[3], dilation[3]; /* the window, per spatial dim */
    long owb;
} akg_pool_spec;

/* Adaptive average pooling to out[] per spatial dim (PyTorch's windows: from
 * floor(o * I / O) to ceil((o + 1) * I / O)), for any input size; inputs of the sizes given
 * by even[] take a plain average pool's loops. */
typedef struct {
    const char *name;  /* sketch name */
    const char *input; /* forward's argument */
    int dims, rank;    /* spatial dims, the input's rank (dims + 1 or dims + 2) */
    long out[3];       /* the output size per spatial dim */
    long even[3];      /* the window per dim when the traced input's sizes are multiples of
                        * out[] (I = K * O): the kernel runs a plain average pool of that
                        * window on inputs of those sizes (0: none) */
    long owb;          /* tunable: outputs of a row per accumulator (even windows) */
} akg_pool_adaptive_spec;

/* Each returns a malloc'd bound sketch, or NULL when out of memory. */
char *akg_pool_sketch(const akg_pool_spec *ps);
char *akg_pool_adaptive_sketch(const akg_pool_adaptive_spec *ps);

#endif
