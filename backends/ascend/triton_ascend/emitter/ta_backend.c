/*
 * ta_backend.c: the ascend/triton_ascend backend: Triton-Ascend (Triton with
 * torch_npu tensors on device "npu") on Ascend NPUs (Atlas A2/A3).
 *
 * The kernels are the cuda/triton_cuda lowering's (a checked sketch to
 * @triton.jit kernels and akg_kernel(tensors, symbols, params)), shared
 * through its per-target hook (tt_target, tt.h); what differs is the runtime
 * around the same Triton:
 *   - torch_npu is imported (it registers the "npu" device), model_new.py
 *     places the tensors on "npu";
 *   - an NPU binds each program to a physical core (the grid is at most the
 *     core count, and the launch limit on a dimension is far below a GPU's):
 *     each kernel is launched on min(iterations, vector cores) programs that
 *     step through the flattened iterations (grid-stride);
 *   - a block lives in the core's unified buffer (192 KB on A2): a tile
 *     dimension pads to at most 32768 elements (blocks must stay below
 *     65536), constant extents above are refused at lowering with the
 *     sketch's line, run-time ones raise at launch;
 *   - no cache modifiers (nontemporal stores are plain stores).
 * Nothing is built: Triton-Ascend compiles each kernel at its first launch.
 * Where no NPU runtime is present (no /dev/davinci*), runtime_missing says so
 * and a kernelgen_only job ends unverified with that reason.
 */
#include <glob.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../../cuda/triton_cuda/emitter/tt.h"
#include "akg/akg.h"
#include "akg/backend.h"
#include "akg/sketch.h"

static const tt_target tt_target_ascend = {
    .label = "ascend/triton_ascend",
    .emitter = "triton_ascend",
    .imports = "import torch_npu  # noqa: F401  (registers the \"npu\" device)\n",
    .block_limit = 32768,
    .block_owner = "Triton-Ascend's",
    .const_pad_limit = 32768,
    .core_bound = true,
    .nontemporal_store = false,
    .model_device = "import torch_npu  # noqa: F401  (registers the \"npu\" device)\n\n"
                    "# NPU tensors (Triton-Ascend runs on Ascend NPUs only)\n"
                    "_AKG_DEVICE = \"npu\"\n\n\n",
};

static int ascend_lower(const akg_sketch *sk, bool safe, char **src, char *err, size_t errlen)
{
    (void)safe; /* nothing to make safer: no threads, no vector pragmas */
    return tt_lower_target(&tt_target_ascend, sk, NULL, src, err, errlen);
}

static int ascend_emit(const akg_sketch *sk, const akg_emit_request *req, akg_kernel_files *out,
                       char *err, size_t errlen)
{
    return tt_emit_target(&tt_target_ascend, sk, req, out, err, errlen);
}

static int ascend_build_argv(const akg_build_request *req, char ***argv, char *err, size_t errlen)
{
    (void)req, (void)err, (void)errlen;
    *argv = NULL; /* Triton-Ascend compiles at the first launch */
    return AKG_OK;
}

/* An Ascend driver exposes /dev/davinci<N> per NPU; without one torch_npu has no device. A
 * glob of /dev is a few system calls: cheap enough for the loop. */
static const char *ascend_runtime_missing(void)
{
    glob_t g;
    int rc = glob("/dev/davinci[0-9]*", GLOB_NOSORT, NULL, &g);
    bool found = rc == 0 && g.gl_pathc > 0;
    if (rc == 0)
        globfree(&g);
    return found ? NULL
                 : "no Ascend NPU runtime (torch_npu) on this machine: no /dev/davinci* "
                   "device";
}

const akg_backend akg_backend_ascend_triton_ascend = {
    .name = "ascend",
    .dsl = "triton_ascend",
    .device_kind = "npu",
    .default_arch = "ascend910b",
    .config_path = "backends/ascend/triton_ascend/config.yaml",
    .description = "Triton-Ascend on Ascend NPUs: @triton.jit kernels on torch_npu tensors, "
                   "compiled at the first launch",
    .lower = ascend_lower,
    .emit = ascend_emit,
    .build_argv = ascend_build_argv,
    .runtime_missing = ascend_runtime_missing,
};
