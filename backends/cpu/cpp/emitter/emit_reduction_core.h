/*
 * emit_reduction_core.h: lowering shared by the reduction, norm, scan and
 * loss families (cpu/cpp). The design's params carry the computation in the
 * expression language of engine/providers/builtin/rules_reduction_core.h;
 * the sketch carries the tiling (ROWS, CH, LANES), the parallel and simd
 * decisions. Every kernel views its main input as [O, D, I] with the sizes
 * passed at run time.
 */
#ifndef AKG_EMIT_REDUCTION_CORE_H
#define AKG_EMIT_REDUCTION_CORE_H

#include "emit_common.h"

/* What the sketch decided. */
typedef struct {
    long rows;  /* rows per parallel chunk */
    long ch;    /* columns per chunk when I > 1 */
    long lanes; /* independent accumulators along a contiguous row */
    int parallel;
    int simd;
} akg_rx_choices;

void akg_rx_read_choices(const akg_sketch *sk, int safe_mode, akg_rx_choices *ch);

/* Lowers a design whose params say "design": "reduce" | "rowmap" |
 * "scan" | "chnorm" | "rowloss" to kernel.cpp and model_new.py. */
int akg_rx_emit(const akg_design *d, const akg_sketch *sk, const akg_reference *ref, int safe_mode,
                akg_kernel_files *out, char *err, size_t errlen);

/* Writes model_new.py for the design (lib: the kernel library's file name). */
int akg_rx_model_new(akg_buf *py, const akg_design *d, const akg_reference *ref, const char *lib);

#endif
