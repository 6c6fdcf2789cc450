/*
 * emit_common.h: what the cpu/cpp emitters share: the maths prelude, float
 * literals, ModelNew's boilerplate, and the reading of sketches back into
 * designs (lower_sketch.c).
 */
#ifndef AKG_EMIT_COMMON_H
#define AKG_EMIT_COMMON_H

#include "akg/akg.h"
#include "akg/design.h"
#include "akg/sketch.h"

/* "// name: generated ...", the includes and the maths prelude (fast
 * polynomial or libm, per d->math), defining AKG_EXP, AKG_EXPM1, AKG_LOG,
 * AKG_LOG1P, AKG_TANH, AKG_ERF. */
void akg_cpp_emit_header(akg_buf *b, const akg_design *d);
/* A float literal C++ accepts ("20.0f", "INFINITY"). */
void akg_cpp_float_literal(akg_buf *b, double v);
/* ModelNew's module prologue: imports and the ctypes binding of akg_kernel
 * with the given argtypes (a Python list's contents, e.g.
 * "ctypes.c_void_p, ctypes.c_int64"). */
void akg_cpp_model_new_prologue(akg_buf *b, const akg_design *d, const char *libname,
                                const char *argtypes);
/* "    def __init__(self, <Model's constructor arguments>):" plus
 * super().__init__() and self._akg_<arg> = <arg> for every argument. */
void akg_cpp_model_new_init(akg_buf *b, const akg_reference *ref);
/* "    def forward(self, <Model's forward arguments>):" */
void akg_cpp_model_new_forward_def(akg_buf *b, const akg_reference *ref);
/* Fills out's file names (kernel.cpp, kernel_<hash>.so) and takes ownership
 * of both sources (set to NULL in the caller's buffers). */
void akg_cpp_finish_files(akg_buf *src, akg_buf *py, akg_kernel_files *out);
/* The library file name for a kernel source: kernel_<first 12 hex of sha256>.so. */
void akg_cpp_library_name(const char *source, size_t len, char out[64]);

/* The value of a constexpr of the sketch by name (the chosen candidate of a
 * tunable); fallback when absent or not an integer. */
long akg_sketch_const_by_name(const akg_sketch *sk, const char *name, long fallback);
/* Whether any statement of the sketch carries @llm_hint(kind, ...). */
int akg_sketch_has_hint(const akg_sketch *sk, const char *kind);

/* Rebuilds a pointwise design's SSA, inputs, scalars and choices from the
 * sketch (what the user may have edited), using src for the sources of
 * scalar parameters. dst starts as a copy of src. */
int akg_cpp_lower_pointwise(const akg_sketch *sk, const akg_reference *ref, akg_design *dst,
                            char *err, size_t errlen);
/* Reads a softmax sketch's choices (ROWS, hints, log or not) into dst. */
int akg_cpp_lower_softmax(const akg_sketch *sk, akg_design *dst, char *err, size_t errlen);

#endif
