/*
 * emit_conv_runtime.h: the C++ text of one convolution layer (implicit GEMM
 * over the shared packed GEMM, or a direct depthwise loop), emitted after the
 * GEMM runtime (emit_matmul_gemm.h) and an AKG_OWB define.
 */
#ifndef AKG_EMIT_CONV_RUNTIME_H
#define AKG_EMIT_CONV_RUNTIME_H

extern const char akg_cpp_conv_runtime[];

#endif
