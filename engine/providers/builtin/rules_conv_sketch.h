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
    const char *layer; /* Model's attribute holding the layer ("conv2d") */
    int dims;          /* 1, 2 or 3 spatial dims */
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

typedef struct {
    const char *name;  /* the sketch's name */
    const char *input; /* forward's argument */
    const akg_conv_layer_spec *layers;
    int n_layers;
    long mr, nr, kc, owb; /* tunables (first candidates) */
} akg_conv_spec;

/* A malloc'd bound sketch, or NULL when out of memory. */
char *akg_conv_sketch(const akg_conv_spec *s);

#endif
