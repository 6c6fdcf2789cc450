/*
 * designer_gpu.h: the built-in Designer's designs for a GPU (a target whose backend is
 * "cuda"), internal to the built-in provider.
 *
 * The CPU designs split work for a few cores and tile for SIMD lanes and caches; lowered
 * for a GPU they give a few programs where the grid wants thousands. The GPU designs say
 * the same computations with the grid in mind: elementwise blocks of 1024-4096 elements,
 * one program per block; rows of a softmax or a norm one program per row (or a few short
 * rows), the whole row in one block while it fits; reductions over long runs split into
 * many programs whose partials a second launch combines. Their tunables are declared in
 * the sketch (`tune(...)`, the design's choice first) so that search can explore them.
 */
#ifndef AKG_DESIGNER_GPU_H
#define AKG_DESIGNER_GPU_H

#include <cjson/cJSON.h>

#include "akg/akg.h"
#include "akg/design.h"
#include "akg/task.h"

/* Elementwise: elements per program, the design's choice first. */
extern const long akg_gpu_blocks[3];
/* Softmax: rows per program (short rows), the design's choice first. */
extern const long akg_gpu_rows[3];

/* The constexpr items of a GPU softmax (no newline: the caller may add DIM). */
void akg_gpu_softmax_constexprs(akg_buf *b, const akg_design *d);
/* The body of a GPU softmax / log_softmax over the view x[O, D, I] -> y[O, D, I], up to
 * and including the sketch's closing brace. */
void akg_gpu_softmax_body(akg_buf *b, const akg_design *d);

/* The GPU sketch of the conv rule's design d (designer_gpu_conv.c), or NULL (no memory, or a
 * layer it does not say: the CPU's sketch stays). */
char *akg_gpu_conv_sketch(const akg_design *d, const akg_reference *ref);
/* The GPU sketch of a transposed layer (designer_gpu_conv_transposed.c), or NULL. */
char *akg_gpu_conv_transposed_sketch(const akg_design *d, const akg_reference *ref);
/* The GPU sketch of a depthwise layer then a pointwise one (designer_gpu_conv_separable.c), or
 * NULL. */
char *akg_gpu_conv_separable_sketch(const akg_design *d, const akg_reference *ref);

/* Pieces the convolution designs share (designer_gpu_conv.c). The spatial axes' letters, D H W. */
extern const char *const akg_gpu_conv_axis[3];
/* Item i of the layer attribute key (a number, or an array of numbers), else fallback. */
long akg_gpu_conv_item(const cJSON *layer, const char *key, int i, long fallback);
/* Layer L's window in 3-D order (the axes a layer of rank dims lacks: kernel, stride and dilation
 * 1, padding 0); with same, the padding PyTorch's 'same' puts before (L * (K - 1) / 2). Returns 0
 * when a value is out of range (kernel, stride or dilation below 1, negative padding, 'same' with a
 * stride), else 1. */
int akg_gpu_conv_window(const cJSON *layer, int dims, int same, long k[3], long s[3], long p[3],
                        long l[3]);
/* ", BN = tune(...), BW = tune(32, 64, 16), BK = tune(...)": output channels and reduced
 * channels a tile, sized from a group's output (ocg) and input (icg) channels. */
void akg_gpu_conv_tile_tunes(akg_buf *b, long ocg, long icg);
/* "  bind: x = input(PARAM, [N, C, I..])" with the missing leading axes bound to 1 (dims: the
 * layer's spatial rank), no newline. */
void akg_gpu_conv_bind_input(akg_buf *b, const char *param, int dims);
/* "\n  bind: VAR = weight(\"LAYER.weight\", [LEAD, K..]), GROUPS = attr(\"LAYER.groups\")". */
void akg_gpu_conv_bind_weight(akg_buf *b, const char *var, const char *layer, const char *lead,
                              int dims, const char *groups);
/* The output extent of axis i of a forward layer: "O_ = (I_ + 2 * P_ - L_ * (K_ - 1) - 1) // S_ +
 * 1". */
void akg_gpu_conv_out_extent(akg_buf *b, int i);

/* A family rule's design d (CPU sketch written) rewritten for a GPU where a GPU writer
 * knows its kind (reductions, row maps, scans, matrix products): d's sketch replaced and d->gpu
 * set. A design no GPU writer knows keeps its CPU sketch (correct on a GPU, not fast). Returns
 * AKG_OK, or AKG_ENOMEM. */
int akg_gpu_redesign_family(akg_design *d, const akg_reference *ref, const cJSON *probe,
                            const cJSON *feedback);

#endif
