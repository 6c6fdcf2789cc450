/*
 * cpp_lower.h: the cpu/cpp backend's Coder: a checked sketch to kernel.cpp.
 *
 * The kernel is lowered from the sketch alone (lw.h describes how); its one
 * entry point is the C ABI of the language reference:
 *   extern "C" int akg_kernel(void *const *tensors, const int64_t *symbols,
 *                             const double *params);
 */
#ifndef AKG_CPP_LOWER_H
#define AKG_CPP_LOWER_H

#include <stdbool.h>

#include "akg/sketch.h"

typedef struct {
    bool safe;            /* no OpenMP and no simd pragmas (the Coder's answer to a crash) */
    const char *source;   /* a file name for the header comment, or NULL */
} akg_cpp_lower_options;

/* Lowers sk (parsed and checked, tunables chosen) to C++. On success *out is a
 * malloc'd NUL-terminated source the caller frees. On failure returns
 * AKG_EUNSUPPORTED (or AKG_ENOMEM) and a message naming the sketch line, the
 * construct and why it cannot be lowered. */
int akg_cpp_lower(const akg_sketch *sk, const akg_cpp_lower_options *opts, char **out, char *err,
                  size_t errlen);

#endif
