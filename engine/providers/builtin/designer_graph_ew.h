/*
 * designer_graph_ew.h: the graph Designer's elementwise passes (designer_graph_ew.c).
 */
#ifndef AKG_DESIGNER_GRAPH_EW_H
#define AKG_DESIGNER_GRAPH_EW_H

#include <cjson/cJSON.h>

#include "akg/design.h"
#include "akg/graph.h"
#include "akg/task.h"

/* Designs a graph of elementwise ops and views (every output of one shape) as one fused
 * pass. AKG_OK with *out set (freed with akg_design_free), AKG_EUNSUPPORTED with a message
 * naming the op that does not fit (*where on its line), or AKG_ENOMEM. */
int akg_designer_graph_elementwise(const akg_reference *ref, const akg_graph *g,
                                   const cJSON *feedback, akg_design **out, akg_range *where,
                                   char *err, size_t errlen);

/* Designs an embedding lookup (aten.embedding of a weight by integer indices) as a gather
 * of rows; same returns. */
int akg_designer_graph_embedding(const akg_reference *ref, const akg_graph *g,
                                 const cJSON *feedback, akg_design **out, akg_range *where,
                                 char *err, size_t errlen);

#endif
