/*
 * rules_conv_sketch.h: the convolution family's sketch writer (see the .c).
 */
#ifndef AKG_RULES_CONV_SKETCH_H
#define AKG_RULES_CONV_SKETCH_H

#include <stdbool.h>

/* GEMM: implicit GEMM over output rows; POINTWISE: a 1x1 layer (unit stride, no padding) that
 * is the only layer, as a GEMM over flattened positions; DEPTHWISE: one input channel per
 * group, direct; TRANSPOSED: a GEMM then col2im. */
typedef enum { CONV_GEMM, CONV_DEPTHWISE, CONV_TRANSPOSED, CONV_POINTWISE } akg_conv_algorithm;

/* One layer as the rules read it: the design is specialised to its channels and window (the
 * sketch's bind: items check them in ModelNew); the input's sizes are read at run time. */
typedef struct {
    /* Model's attribute holding the layer ("conv2d"): its geometry is bound with attr() so
     * that ModelNew checks it; NULL for a convolution with no layer of its own (F.conv2d
     * from the op graph): the geometry is the design's constants alone */
    const char *layer;
    const char *weight; /* the weight's dotted name; NULL: "<layer>.weight" */
    const char *bias_w; /* the bias's dotted name; NULL: "<layer>.bias" */
    int dims;           /* 1, 2 or 3 spatial dims */
    akg_conv_algorithm algo;
    int bias;    /* the layer has a bias */
    int same;    /* padding='same' */
    int reflect; /* padding_mode='reflect' */
    int padded;  /* the design writes a padded copy of the input (reflect; depthwise) */
    long groups, in_ch, out_ch;
    /* the window per spatial dim in 3-D order (D, H, W; a 1-D or 2-D layer's leading dims are
     * kernel 1, stride 1, padding 0, dilation 1); 'same' padding as it resolves */
    long kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
} akg_conv_layer_spec;

#define AKG_CONV_MAX_EPILOGUE 32
#define AKG_CONV_MAX_VECTORS 8

/* A tensor of one value per output channel of the last layer, read by the epilogue: a bias,
 * BatchNorm's statistics and affine parameters. The task's tensor has `rank` dims, all 1
 * but dim `chan` (the channels); rank 1 is a plain vector. */
typedef struct {
    const char *name; /* forward's argument or the weight's (or buffer's) dotted name */
    int weight;       /* 1: weight(), 0: input() */
    int rank, chan;
} akg_conv_vector;

typedef struct {
    const char *name;  /* the sketch's name */
    const char *input; /* forward's argument */
    const akg_conv_layer_spec *layers;
    int n_layers;
    long mr, nr, kc, owb; /* tunables (first candidates) */
    int vw; /* f32 lanes of the GEMM register tile's vectors: 16, else 8 (akg_rule_vector_floats;
               set before akg_conv_spec_tunables, which picks MR and NR for it) */
    /* An epilogue run on each register tile of the last layer before it is stored (n_epilogue
     * 0: none; not after a transposed layer): statements, one a line, that read the tile `o`
     * (the sums plus the layer's bias) and the tiles vt0.. of the vectors (one value per row
     * of the tile, broadcast along it), and leave the result in epilogue_out. */
    const char *epilogue[AKG_CONV_MAX_EPILOGUE];
    int n_epilogue;
    const char *epilogue_out;
    akg_conv_vector vecs[AKG_CONV_MAX_VECTORS];
    int n_vecs;
} akg_conv_spec;

/* A malloc'd bound sketch, or NULL when out of memory. */
char *akg_conv_sketch(const akg_conv_spec *s);

/* One layer's geometry as a reader finds it (the layer's constructor and the probe, or the op
 * graph's conv node): the tuples hold `dims` entries in the layer's own order, and padding is
 * as given ('same' unresolved). rules_conv_spec.c turns it into a layer spec. */
typedef struct {
    int dims, transposed;
    long in_ch, out_ch, groups;
    long kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
    int same, reflect, bias;
} akg_conv_geometry;

/* Fills sp from g: the algorithm, the padded copy, the window in 3-D order ('same' resolved as
 * PyTorch does). only: the layer is the design's only one (a 1x1 layer then runs as a GEMM
 * over the flattened positions). The names (layer, weight, bias_w) are the caller's. */
void akg_conv_layer_spec_from(akg_conv_layer_spec *sp, const akg_conv_geometry *g, bool only);

/* Sets the tunables' first candidates of s (its layers filled): MR from the layers' channels,
 * OWB from the first layer's output width (in_w: the input's last dim, -1 unknown), smaller
 * KC and OWB on a retry. */
void akg_conv_spec_tunables(akg_conv_spec *s, long in_w, bool retry);

#endif
