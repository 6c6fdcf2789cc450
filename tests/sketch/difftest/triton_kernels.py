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


# ---- compiling for a GPU without one ---------------------------------------------------------------------

# What Triton's compiler is asked for: the H200's architecture (the backend's default_arch, sm_90).
TARGET_ARCH = 90

_TORCH_TYPES = {"float32": "fp32", "float64": "fp64", "float16": "fp16", "bfloat16": "bf16", "int64": "i64",
                "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8", "bool": "i1"}


def _signature(fn: Any, args: tuple, kwargs: Dict[str, Any]) -> tuple:
    """The signature and constexprs Triton's launcher would give fn for these arguments (ints equal to 1
    specialised to constexprs, as Triton does)."""
    import torch

    sig: Dict[str, str] = {}
    consts: Dict[str, Any] = {}
    values = dict(zip([p.name for p in fn.params], args))
    values.update(kwargs)
    for p in fn.params:
        v = values[p.name]
        if p.is_constexpr or (isinstance(v, int) and not isinstance(v, bool) and v == 1):
            sig[p.name] = "constexpr"
            consts[p.name] = v
        elif isinstance(v, torch.Tensor):
            sig[p.name] = "*" + _TORCH_TYPES[str(v.dtype).replace("torch.", "")]
        elif isinstance(v, bool):
            sig[p.name] = "i1"
        elif isinstance(v, int):
            sig[p.name] = "i32" if -2**31 <= v < 2**31 else "i64"
        else:
            sig[p.name] = "fp32"
    return sig, consts


class _CompileOnly:
    """Stands for a @triton.jit kernel in akg_kernel: `kernel[grid](*args)` compiles it for sm_90 (cached by
    signature) instead of launching it."""

    def __init__(self, fn: Any, cache: Dict[Any, Any]) -> None:
        self.fn, self.cache = fn, cache

    def __getitem__(self, grid: Any) -> Any:
        def launch(*args: Any, **kwargs: Any) -> None:
            import triton
            from triton.backends.compiler import GPUTarget

            sig, consts = _signature(self.fn, args, kwargs)
            key = (self.fn.__name__, tuple(sorted(sig.items())), tuple(sorted(consts.items())))
            if key not in self.cache:
                self.cache[key] = triton.compile(triton.compiler.ASTSource(fn=self.fn, signature=sig, constexprs=consts),
                                                 target=GPUTarget("cuda", TARGET_ARCH, 32))
        return launch


def _compiled_module(path: str) -> Any:
    """The module imported (with the interpreter off: its kernels are JITFunctions), every kernel replaced
    by a _CompileOnly."""
    name = "akg_compile_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cache: Dict[Any, Any] = {}
    for attr in dir(mod):
        if attr.startswith("_akg_k") and attr[6:].isdigit():
            setattr(mod, attr, _CompileOnly(getattr(mod, attr), cache))
    return mod


def compile_child(conn: Any) -> None:
    """Like child, but each call runs akg_kernel's host code with every launch compiled for sm_90 by
    Triton's compiler (to PTX and cubin; no GPU needed) instead of run: what the interpreter accepts
    but the compiler does not (loop-carried shapes and dtypes, constexpr specialisations) fails here."""
    import warnings

    # this child only compiles: Triton reads the switch when it decorates and while it compiles
    os.environ["TRITON_INTERPRET"] = "0"
    warnings.simplefilter("ignore")
    modules: Dict[str, Any] = {}
    while True:
        call = conn.recv()
        if call is None:
            return
        conn.send(("start", call.kernel_id))
        try:
            mod = modules.get(call.library)
            if mod is None:
                mod = modules[call.library] = _compiled_module(call.library)
            tensors = [_tensor(t) for t in call.tensors]
            mod.akg_kernel(tensors, [int(s) for s in call.symbols], [float(p) for p in call.params])
            conn.send(("done", call.kernel_id, 0, call.tensors))
        except Exception as exc:  # the compiler's message, shown as the case's detail
            text = f"{type(exc).__name__}: {exc}".strip().splitlines()
            conn.send(("done", call.kernel_id, 1, call.tensors, "Triton's compiler (sm_90): " + " | ".join(text[-8:])))
