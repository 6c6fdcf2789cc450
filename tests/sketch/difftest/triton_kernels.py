"""Calling kernels of the cuda/triton_cuda backend under Triton's interpreter, for suite.py --dsl triton_cuda.

A kernel is the module `akg_cli sketch emit --backend cuda --dsl triton_cuda` writes (its entry
``akg_kernel(tensors, symbols, params)``, the C ABI's arguments as torch tensors and Python numbers). It
runs in a forked child (kernels.run_calls: a crash or a hang takes down only the child) on CPU tensors
that share memory with the call's NumPy buffers, with TRITON_INTERPRET=1 set before triton is imported
(``triton.jit`` picks the interpreter when the module is imported), so no GPU is needed.
"""

from __future__ import annotations

import importlib.util
import os
import traceback
from typing import Any, Dict

import numpy as np

os.environ["TRITON_INTERPRET"] = "1"


def available() -> str:
    """'' when torch and triton import, else why not."""
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as exc:
        return f"torch and triton are needed ({exc})"
    return ""


def _tensor(buf: np.ndarray) -> Any:
    import torch

    if buf.dtype == np.uint16:  # bf16 bits (values.abi_array)
        return torch.from_numpy(buf.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(buf)


def child(conn: Any) -> None:
    """Runs calls from conn until None: each imports (once) the module at call.library and calls its
    akg_kernel on tensors sharing memory with call.tensors, which go back with the answer."""
    modules: Dict[str, Any] = {}
    while True:
        call = conn.recv()
        if call is None:
            return
        conn.send(("start", call.kernel_id))
        try:
            mod = modules.get(call.library)
            if mod is None:
                name = os.path.splitext(os.path.basename(call.library))[0]
                spec = importlib.util.spec_from_file_location(name, call.library)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                modules[call.library] = mod
            tensors = [_tensor(t) for t in call.tensors]
            rc = mod.akg_kernel(tensors, [int(s) for s in call.symbols], [float(p) for p in call.params])
            conn.send(("done", call.kernel_id, int(rc or 0), call.tensors))
        except Exception:  # the kernel's own error, shown as the case's detail
            lines = traceback.format_exc().strip().splitlines()
            conn.send(("done", call.kernel_id, 1, call.tensors, "akg_kernel raised: " + " | ".join(lines[-6:])))
