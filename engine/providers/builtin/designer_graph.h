/*
 * designer_graph.h: the built-in Designer's rules over the probe's op graph
 * (see designer_graph.c).
 */
#ifndef AKG_DESIGNER_GRAPH_H
#define AKG_DESIGNER_GRAPH_H

#include <cjson/cJSON.h>

#include "akg/design.h"
#include "akg/graph.h"
#include "akg/task.h"

/* Designs forward from probe["graph"]. Returns AKG_OK with *out set (the
 * caller frees it with akg_design_free); AKG_ENOTFOUND when the probe has no
 * usable graph (err says why); AKG_EUNSUPPORTED with a message that names
 * the first operation it cannot design, its line and why, and how many more
 * are not covered (*where: that line); AKG_ENOMEM. */
int akg_designer_graph(const akg_reference *ref, const cJSON *probe, const cJSON *feedback,
                       int attempt, akg_design **out, akg_range *where, char *err, size_t errlen);

/* The graph Designers' refusal at value v: "cannot design OP (file:line): WHY[; N more
 * operations are not covered]; ...", AKG_EUNSUPPORTED, *where (if not NULL) on v's line. */
int akg_graph_decline(const akg_reference *ref, const akg_graph_value *v, int more,
                      akg_range *where, char *err, size_t errlen, const char *why);

#endif
