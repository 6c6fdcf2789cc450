/*
 * emit_norm.c: lowering of norm-family sketches to C++ (cpu/cpp). The four
 * families of reductions (reduction, norm, scan, loss) share one lowering,
 * emit_reduction_core.c: the design's params say which computation, the
 * sketch says how it is tiled, parallelised and vectorised.
 */
#include "emit_reduction_core.h"

int akg_cpp_emit_norm(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                      int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    return akg_rx_emit(d, sk, ref, safe_mode, out, err, errlen);
}
