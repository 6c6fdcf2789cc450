/*
 * designer_graph_reduce.h: the graph Designer's rule for reductions, norms and
 * softmax read from the probe's op graph (see designer_graph_reduce.c).
 */
#ifndef AKG_DESIGNER_GRAPH_REDUCE_H
#define AKG_DESIGNER_GRAPH_REDUCE_H

#include <cjson/cJSON.h>

#include "akg/design.h"
#include "akg/graph.h"
#include "akg/task.h"

/* Designs graph g, which holds at least one op for which akg_graph_op_reduces
 * (graph_ops.h) is 1, as one kernel. Returns AKG_OK with *out set (freed with
 * akg_design_free); AKG_EUNSUPPORTED with a message in err naming the op that
 * does not fit, its line in the reference and why (*where: that line);
 * AKG_ENOMEM. */
int akg_designer_graph_reduce(const akg_reference *ref, const akg_graph *g, const cJSON *feedback,
                              akg_design **out, akg_range *where, char *err, size_t errlen);

#endif
