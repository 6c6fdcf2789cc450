/*
 * rules_conv_spec.c: from a convolution's geometry to the spec the sketch
 * writer (rules_conv_sketch.c) takes, shared by the spelling rules
 * (rules_conv.c: nn.Conv* layers) and the graph Designer
 * (designer_graph_conv.c: any spelling of a convolution in the op graph), so
 * one layer gives one design whichever way it was read.
 *
 * What is decided here: the algorithm (a direct loop for depthwise layers, a
 * GEMM over flattened positions for a lone 1x1 layer, col2im after a GEMM for
 * transposed ones, else an implicit GEMM), whether the input is first copied
 * with its padding written out, the window in the sketch's 3-D order, and the
 * first candidates of the register tile's tunables.
 */
#include <stdbool.h>

#include "akg/akg.h"
#include "rules_conv_sketch.h"

void akg_conv_layer_spec_from(akg_conv_layer_spec *sp, const akg_conv_geometry *g, bool only)
{
    /* depthwise (one input channel per group): a direct loop beats a GEMM with M = 1 */
    bool direct = !g->transposed && !g->reflect && g->in_ch / g->groups == 1;
    sp->dims = g->dims;
    sp->algo = g->transposed ? CONV_TRANSPOSED : direct ? CONV_DEPTHWISE : CONV_GEMM;
    bool unit = only && !g->reflect && !g->transposed;
    for (int k = 0; k < g->dims; k++)
        unit = unit && g->kernel[k] == 1 && g->stride[k] == 1 && g->padding[k] == 0 && !g->same;
    if (unit && sp->algo == CONV_GEMM)
        sp->algo = CONV_POINTWISE;
    sp->bias = g->bias;
    sp->same = g->same;
    sp->reflect = g->reflect;
    long padsum = 0;
    for (int k = 0; k < g->dims; k++)
        padsum += g->padding[k] < 0 ? 1 : g->padding[k];
    /* a padded copy for reflections, and for depthwise taps (whole-row vector reads);
     * the GEMM's panel loads read zeros past the input's edges themselves */
    sp->padded = g->reflect || (sp->algo == CONV_DEPTHWISE && (g->same || padsum > 0));
    sp->groups = g->groups;
    sp->in_ch = g->in_ch;
    sp->out_ch = g->out_ch;
    /* the window in 3-D order; 'same' resolves as PyTorch does (the near side gets half of
     * dilation * (kernel - 1), the far side the rest: the padded copy reaches it) */
    for (int k = 0; k < 3; k++) {
        int at = k - (3 - g->dims);
        bool real = at >= 0;
        sp->kernel[k] = real ? g->kernel[at] : 1;
        sp->stride[k] = real ? g->stride[at] : 1;
        sp->dilation[k] = real ? g->dilation[at] : 1;
        sp->output_padding[k] = real && g->transposed ? g->output_padding[at] : 0;
        sp->padding[k] = !real     ? 0
                         : g->same ? g->dilation[at] * (g->kernel[at] - 1) / 2
                                   : g->padding[at];
    }
}

void akg_conv_spec_tunables(akg_conv_spec *s, long in_w, bool retry)
{
    /* The register tile follows the CPU (s->vw). 8 lanes: [MR, 16] with MR 6, or 4 when the
     * output channels of a group would leave more than a tenth of 6-row tiles empty and 4
     * divides them. 16 lanes: [MR, 32], MR the candidate of 8, 12, 6, 4 that leaves the fewest
     * rows of tiles empty over the layers (8 first: 16 accumulators hide the FMA latency and
     * leave registers for the operands). */
    long mr = 6;
    if (s->vw == 16) {
        static const long cand[] = {8, 12, 6, 4};
        long best = -1;
        for (int ci = 0; ci < 4; ci++) {
            long waste = 0;
            for (int i = 0; i < s->n_layers; i++) {
                const akg_conv_layer_spec *c = &s->layers[i];
                long ocg = c->out_ch / (c->groups > 0 ? c->groups : 1);
                if (c->algo != CONV_DEPTHWISE)
                    waste += (ocg + cand[ci] - 1) / cand[ci] * cand[ci] - ocg;
            }
            if (best < 0 || waste < best)
                best = waste, mr = cand[ci];
        }
    }
    for (int i = 0; i < s->n_layers && s->vw != 16; i++) {
        const akg_conv_layer_spec *c = &s->layers[i];
        long ocg = c->out_ch / (c->groups > 0 ? c->groups : 1);
        if (c->algo != CONV_DEPTHWISE && ocg % 4 == 0 && ((ocg + 5) / 6 * 6 - ocg) * 10 > ocg) {
            mr = 4;
            break;
        }
    }
    /* OWB: the depthwise register tile's width. When the first layer is depthwise and its
     * output rows are short, one tile covers a whole row (rounded up to 8 lanes, at most 12
     * vectors of accumulators), so no row ends in a ragged tile */
    long owb = retry ? 32 : 64;
    const akg_conv_layer_spec *c = &s->layers[0];
    if (c->algo == CONV_DEPTHWISE && !retry && in_w > 0 && c->stride[2] > 0) {
        long ow =
            (in_w + 2 * c->padding[2] - c->dilation[2] * (c->kernel[2] - 1) - 1) / c->stride[2] + 1;
        if (ow > 0 && ow <= 96)
            owb = (ow + 7) / 8 * 8;
    }
    s->mr = mr;
    s->nr = s->vw == 16 ? 32 : 16;
    s->kc = retry ? 256 : 512;
    s->owb = owb;
}
