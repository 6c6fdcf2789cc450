/*
 * registry.c: the backends this build knows, one line each. Adding a target
 * means a folder backends/<device>/<dsl>/ with its akg_backend and a line here.
 */
#include <stddef.h>

#include "akg/backend.h"

extern const akg_backend akg_backend_cpu_cpp;

const akg_backend *const akg_backend_registry[] = {
    &akg_backend_cpu_cpp,
    NULL,
};

/* Devices and DSLs akg knows of, built here or not: a message then says "not
 * in this build" for these and "unknown" for anything else. */
const char *const akg_backend_known_devices[] = {"cpu", "cuda", "ascend", NULL};
const char *const akg_backend_known_dsls[] = {"cpp", "triton", "cuda_c", "tilelang",
                                              "triton_ascend", NULL};
