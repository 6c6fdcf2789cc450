/*
 * graph_ops.h: the elementwise ops the graph Designer designs (graph_ops.c).
 */
#ifndef AKG_GRAPH_OPS_H
#define AKG_GRAPH_OPS_H

#include <stddef.h>

#include "akg/graph.h"

/* 1 when v is an elementwise op this vocabulary writes (unary, binary, where). */
int akg_graph_op_elementwise(const akg_graph_value *v);
/* 1 when the graph Designer has a rule for v's op at all (elementwise, matmul, permute);
 * whether it fits where it stands is the Designer's question. */
int akg_graph_op_has_rule(const akg_graph_value *v);
/* 1 for reductions and row-wise composites (softmax, layer_norm, cumsum, ...). */
int akg_graph_op_reduces(const akg_graph_value *v);
/* Writes elementwise op v as a sketch expression over its operands' names (names[id]; ""
 * for a value the kernel cannot read there) into out. 0, or -1 with *why (a static
 * phrase) when it cannot be written. */
int akg_graph_op_render(const akg_graph *g, const akg_graph_value *v, char (*names)[24], char *out,
                        size_t len, const char **why);
/* Like akg_graph_op_render with operand i's text given as operands[i] (NULL or "" for one
 * the kernel cannot read; ignored for number operands); an operand of another dtype than
 * the op computes in is cast to it. */
int akg_graph_op_render_operands(const akg_graph *g, const akg_graph_value *v,
                                 const char *const *operands, char *out, size_t len,
                                 const char **why);
/* Appends v's word to a design name ("relu", "gelu_tanh", "bias" when bias) joined by "_",
 * when it fits in len. */
void akg_graph_op_word(const akg_graph_value *v, int bias, char *name, size_t len);
/* A number as a float literal of the sketch ("2.0", "0.5", "1e-05"). */
void akg_graph_number_text(double x, char *buf, size_t len);

#endif
