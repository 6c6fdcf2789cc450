/*
 * designer_graph_conv.h: the graph Designer's rule for convolutions and
 * pooling read from the probe's op graph (see designer_graph_conv.c).
 */
#ifndef AKG_DESIGNER_GRAPH_CONV_H
#define AKG_DESIGNER_GRAPH_CONV_H

#include <cjson/cJSON.h>

#include "akg/design.h"
#include "akg/graph.h"
#include "akg/task.h"

/* 1 when graph g holds a convolution or a pooling (conv, max_pool, avg_pool,
 * adaptive_avg_pool): akg_designer_graph_conv designs it. */
int akg_graph_has_window_op(const akg_graph *g);

/* Designs graph g (akg_graph_has_window_op is 1) as one kernel. Returns AKG_OK
 * with *out set (freed with akg_design_free); AKG_EUNSUPPORTED with a message
 * in err naming the op that does not fit, its line in the reference and why
 * (*where: that line); AKG_ENOMEM. vw: the f32 lanes of a register tile's vectors on the
 * target CPU (akg_rule_vector_floats). */
int akg_designer_graph_conv(const akg_reference *ref, const akg_graph *g, const cJSON *feedback,
                            int vw, akg_design **out, akg_range *where, char *err, size_t errlen);

#endif
