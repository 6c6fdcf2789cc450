/*
 * emit_norm.c: lowering of norm-family sketches to C++ (cpu/cpp).
 * (No lowering yet.)
 */
#include "akg/akg.h"
#include "akg/design.h"

int akg_cpp_emit_norm(const akg_design *d, const struct akg_sketch *sk, const akg_reference *ref,
                      int safe_mode, akg_kernel_files *out, char *err, size_t errlen)
{
    (void)sk, (void)ref, (void)safe_mode, (void)out;
    return akg_fail(err, errlen, AKG_EUNSUPPORTED, "cpp emitter: no lowering for the %s family",
                    d->family);
}
