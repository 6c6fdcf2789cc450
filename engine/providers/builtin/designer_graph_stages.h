/*
 * designer_graph_stages.h: graphs designed as several stages in one kernel
 * (see designer_graph_stages.c).
 */
#ifndef AKG_DESIGNER_GRAPH_STAGES_H
#define AKG_DESIGNER_GRAPH_STAGES_H

#include <cjson/cJSON.h>
#include <stddef.h>

#include "akg/design.h"
#include "akg/graph.h"
#include "akg/task.h"

/* The value at which g is cut into two stages (an op read by a matrix product, or by a
 * reduction after a matrix product), or -1 when one kernel of one stage may design it. */
int akg_graph_stages_cut(const akg_graph *g);

/* What akg_designer_graph_stages returns when the parts do not compose (the second reads
 * the intermediate in another shape than the first writes it): g is left to the one-stage
 * Designers, whose refusal names what stops them. */
#define AKG_STAGES_NONE 1

/* Designs g as the stage that computes value `cut` followed by the stage that reads it,
 * each by akg_designer_graph on its own part of the graph, composed into one sketch whose
 * intermediate is a "slow" temporary. Returns what akg_designer_graph returns (*out the
 * composed design, freed by the caller with akg_design_free), or AKG_STAGES_NONE. */
int akg_designer_graph_stages(const akg_reference *ref, const cJSON *probe, const akg_graph *g,
                              int cut, const cJSON *feedback, int attempt, akg_design **out,
                              akg_range *where, char *err, size_t errlen);

/* Composes two stage sketches: `first` computes its output 0, which `second` reads as its
 * input named `leaf`; the output becomes a "slow" temporary of the first stage's shape,
 * every name of each stage gets a suffix of its own (_1, _2). A malloc'd text, or NULL with
 * err filled (a stage that does not have the form, or out of memory). */
char *akg_sketch_compose_stages(const char *first, const char *second, const char *leaf,
                                const char *name, char *err, size_t errlen);

#endif
