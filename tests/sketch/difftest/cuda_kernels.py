"""Building and calling kernels of the cuda/cuda backend (CUDA C), for suite.py --dsl cuda.

A kernel is the kernel.cu `akg_cli sketch emit --backend cuda --dsl cuda` writes: __global__ kernels
and the launcher ``extern "C" int akg_kernel(void *const *tensors, const int64_t *symbols,
const double *params, void *stream)`` taking device pointers. Each is built alone by nvcc into its own
library with the backend's flags (``compiler.flags`` of backends/cuda/cuda/config.yaml) and
``-arch=sm_<arch>``, as its build_argv does; the builds run ``jobs`` at a time. A GPU machine without
nvcc can take the libraries of an earlier run elsewhere (``prebuilt``: that run's work folder, whose
<op>/kernel.cu, kernel.so and kernel.arch are used where the source and the arch are the same).

On a machine with an NVIDIA GPU, the calls run in a spawned child (kernels.run_calls; spawned, not
forked: CUDA cannot be used in a child forked after the parent touched it) that copies each call's
NumPy buffers to the device byte for byte, calls akg_kernel on the current stream, synchronizes and
copies every buffer back. A CUDA error (an illegal address, a launch failure) leaves the device
context unusable: the child answers "crashed" and exits, and run_calls starts a fresh one for the
next call, so one bad kernel fails alone. Without a GPU nothing runs: suite.py only builds.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import shutil
import subprocess
import traceback
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence, Tuple

import kernels

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
CONFIG = os.path.join(ROOT, "backends", "cuda", "cuda", "config.yaml")
DEFAULT_FLAGS = ["-O3", "-std=c++17", "-shared", "-Xcompiler", "-fPIC"]
BUILD_TIMEOUT = 600.0


def find_nvcc() -> Optional[str]:
    """$AKG_NVCC, else nvcc on PATH, else the PyPI wheels' nvcc in .venv-nvcc (scripts/setup.sh test),
    else /usr/local/cuda/bin/nvcc; None when there is none."""
    given = os.environ.get("AKG_NVCC")
    if given:
        return given if os.access(given, os.X_OK) else None
    found = shutil.which("nvcc")
    if found:
        return found
    venv = sorted(glob.glob(os.path.join(ROOT, ".venv-nvcc", "lib", "python3*", "site-packages", "nvidia", "cu*",
                                         "bin", "nvcc")))
    for candidate in venv[::-1] + ["/usr/local/cuda/bin/nvcc"]:
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def nvcc_flags(path: str = CONFIG) -> List[str]:
    """``compiler.flags`` of the backend's config.yaml (a one-line YAML list), or its defaults."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return list(DEFAULT_FLAGS)
    m = re.search(r"^\s*flags:\s*\[([^\]]*)\]", text, re.MULTILINE)
    if not m:
        return list(DEFAULT_FLAGS)
    return [x.strip().strip("'\"") for x in m.group(1).split(",") if x.strip()]


def gpu() -> str:
    """The GPU's name when PyTorch sees one, else ''."""
    try:
        import torch

        if torch.cuda.is_available() and torch.cuda.device_count() > 0:
            return torch.cuda.get_device_name(0)
    except Exception:  # a driver or library problem: no usable GPU, said as such by the caller
        pass
    return ""


def _first_errors(stderr: str, lines: int = 12) -> str:
    picked = [ln for ln in stderr.splitlines() if "error" in ln][:lines]
    return "\n".join(picked or stderr.splitlines()[:lines])


def _prebuilt(folder: str, src: str, arch: str) -> Optional[str]:
    """folder/<op>/kernel.so when folder/<op>/kernel.cu is src's text and kernel.arch is arch, else None."""
    theirs = os.path.join(folder, os.path.basename(os.path.dirname(src)))
    try:
        with open(src, encoding="utf-8") as a, open(os.path.join(theirs, "kernel.cu"), encoding="utf-8") as b:
            same = a.read() == b.read()
        with open(os.path.join(theirs, "kernel.arch"), encoding="utf-8") as f:
            same = same and f.read().strip() == arch
    except OSError:
        return None
    lib = os.path.join(theirs, "kernel.so")
    return lib if same and os.path.isfile(lib) else None


def build(kernels_: Sequence[Tuple[int, str]], work: str, nvcc: Optional[str], arch: str, jobs: int,
          prebuilt: Optional[str] = None) -> kernels.Built:
    """Builds every (id, <op>/kernel.cu path) into kernel.so next to it (kernel.arch names the arch),
    ``jobs`` nvcc at a time, or takes prebuilt's library for the same source and arch."""
    out = kernels.Built()
    flags = nvcc_flags() + [f"-arch={arch}"]

    def one(item: Tuple[int, str]) -> None:
        kernel_id, src = item
        lib = os.path.join(os.path.dirname(src), "kernel.so")
        theirs = _prebuilt(prebuilt, src, arch) if prebuilt else None
        if theirs:
            shutil.copyfile(theirs, lib)
            out.library[kernel_id] = lib
            return
        if nvcc is None:
            out.errors[kernel_id] = (f"no nvcc here, and {prebuilt or 'no --prebuilt folder'} has no library built "
                                     f"for {arch} from this kernel.cu")
            return
        try:
            proc = subprocess.run([nvcc, *flags, "-o", lib, src], capture_output=True, text=True,
                                  timeout=BUILD_TIMEOUT)
        except subprocess.TimeoutExpired:
            out.errors[kernel_id] = f"nvcc did not finish in {BUILD_TIMEOUT:g} s"
            return
        if proc.returncode == 0:
            with open(os.path.join(os.path.dirname(src), "kernel.arch"), "w", encoding="utf-8") as f:
                f.write(arch + "\n")
            out.library[kernel_id] = lib
        else:
            out.errors[kernel_id] = f"nvcc {' '.join(flags)}:\n" + _first_errors(proc.stderr or proc.stdout)

    os.makedirs(work, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one, kernels_))
    return out


def child(conn: Any) -> None:
    """Runs calls from conn until None: each loads (once) the library at call.library, copies
    call.tensors to the GPU, calls akg_kernel with their device pointers on the current stream and
    sends the buffers back; after a CUDA error it answers "crashed" and exits."""
    import torch

    libs: Dict[str, ctypes.CDLL] = {}
    while True:
        call = conn.recv()
        if call is None:
            return
        conn.send(("start", call.kernel_id))
        rc, detail = 1, ""
        try:
            lib = libs.get(call.library)
            if lib is None:
                lib = libs[call.library] = ctypes.CDLL(call.library)
            fn = lib.akg_kernel
            fn.restype = ctypes.c_int
            fn.argtypes = [ctypes.c_void_p] * 4
            # byte for byte: the ABI's buffers (bf16 as uint16 bits) need no dtype on the device
            dev = [torch.from_numpy(t.reshape(-1).view("uint8")).to("cuda") for t in call.tensors]
            ptrs = (ctypes.c_void_p * max(1, len(dev)))(*[d.data_ptr() for d in dev])
            syms = (ctypes.c_int64 * max(1, len(call.symbols)))(*call.symbols)
            params = (ctypes.c_double * max(1, len(call.params)))(*call.params)
            stream = torch.cuda.current_stream().cuda_stream
            rc = fn(ptrs, syms, params, ctypes.c_void_p(stream))
            torch.cuda.synchronize()
            got = [d.cpu().numpy().view(t.dtype).reshape(t.shape) for d, t in zip(dev, call.tensors)]
        except Exception:  # a CUDA error: the context is gone, the next call needs a fresh child
            lines = traceback.format_exc().strip().splitlines()
            conn.send(("crashed", call.kernel_id, "the call failed: " + " | ".join(lines[-4:])))
            return
        if rc == 0:
            conn.send(("done", call.kernel_id, 0, got))
        else:
            detail = f"akg_kernel returned {rc}" + (" (out of device memory)" if rc == 2 else " (a CUDA error)")
            conn.send(("done", call.kernel_id, int(rc), got, detail))
