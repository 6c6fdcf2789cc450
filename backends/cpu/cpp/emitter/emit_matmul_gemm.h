/*
 * emit_matmul_gemm.h: the packed, register-blocked GEMM that the matmul and
 * conv lowerings share (C++ text emitted into kernel.cpp).
 *
 * The GEMM is a template driver over packers: the caller's kernel supplies
 * how A and B panels are packed (strided, transposed, or gathered from a
 * convolution's input) and where C lives, so one micro-kernel serves every
 * member of both families.
 */
#ifndef AKG_EMIT_MATMUL_GEMM_H
#define AKG_EMIT_MATMUL_GEMM_H

#include "emit_common.h"

/* The blocking of one GEMM, read from a sketch's tunables. */
typedef struct {
    long mr, nr, kc, mc, nc;
    int parallel;  /* OpenMP over C blocks */
    int vectorize; /* simd pragmas on packing loops */
} akg_gemm_blocking;

/* Reads MR, NR, KC, MC, NC and the parallel/vectorize hints from sk
 * (clamped to what the micro-kernel supports: NR a multiple of 8 up to 32,
 * MR 1..8); safe_mode drops both hints. */
void akg_cpp_gemm_blocking(const akg_sketch *sk, int safe_mode, akg_gemm_blocking *out);
/* Appends the macros for blk and the GEMM runtime (akg_gemm, akg_pack_a_strided,
 * akg_pack_b_strided, akg_alloc_floats) to b. */
void akg_cpp_emit_gemm_runtime(akg_buf *b, const akg_gemm_blocking *blk);

extern const char akg_cpp_gemm_runtime[];

#endif
