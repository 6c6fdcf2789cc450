/*
 * registry.c: the backends this build knows, one line each. Adding a target
 * means a folder backends/<device>/<dsl>/ with its akg_backend and its name in
 * AKG_BACKENDS below.
 */
#include <stddef.h>

#include "akg/backend.h"

/* The registration list: X(device_dsl) names the backend's `akg_backend akg_backend_<device_dsl>`. */
#define AKG_BACKENDS(X) X(cpu_cpp) X(cuda_triton_cuda) X(cuda_cuda) X(ascend_triton_ascend) \
    X(cuda_tilelang_cuda)

#define AKG_BACKEND_DECLARE(name) extern const akg_backend akg_backend_##name;
#define AKG_BACKEND_ENTRY(name) &akg_backend_##name,
AKG_BACKENDS(AKG_BACKEND_DECLARE)

const akg_backend *const akg_backend_registry[] = {
    AKG_BACKENDS(AKG_BACKEND_ENTRY) NULL,
};

/* Devices and DSLs akg knows of, built here or not: a message then says "not
 * in this build" for these and "unknown" for anything else. */
const char *const akg_backend_known_devices[] = {"cpu", "cuda", "ascend", NULL};
const char *const akg_backend_known_dsls[] = {"cpp",      "triton",        "triton_cuda", "cuda", "cuda_c",
                                              "tilelang", "triton_ascend", "tilelang_cuda", NULL};
