"""The baseline environment: what a benchmark must record before it may call a speedup honest.

The ``env`` request answers which BLAS torch really calls (and which kernels that BLAS chose), the
thread counts of torch and of OpenMP (the kernel's runtime), the settings that keep idle pools from
spinning, the core type the CPU's flags call for, the allocator policy, and the measured rate of a
float32 GEMM. ``akg_cli bench`` refuses to report speedups when these show a baseline below its best.

The allocator policy is applied once at worker start (``apply_malloc_policy``): glibc serves blocks
above its mmap threshold with fresh pages and returns freed heap tops to the system, so an eager op
that allocates a large scratch buffer pays page faults on every call. Keeping freed memory in the
heap serves the reference and the kernel alike, in the same process.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import platform
import statistics
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from .protocol import RUNTIME_ERROR, HarnessError

if TYPE_CHECKING:  # env imports torch, which must not load before apply_malloc_policy() has run
    from .env import WorkerEnv

# glibc mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_MAX = -4
# With mmap off, freed memory stays in the heap up to this much above the top before it is trimmed.
_KEEP_TRIM_THRESHOLD = 1 << 30

GEMM_N_DEFAULT = 1024
GEMM_RUNS_DEFAULT = 5
GEMM_WARMUP = 2

# Set once by apply_malloc_policy(); reported by every env answer.
_malloc_state: Dict[str, Any] = {"policy": "system", "applied": False}


def apply_malloc_policy() -> Dict[str, Any]:
    """Applies $AKG_MALLOC ("keep", the default, or "system") to this process; returns the record.

    "keep": no mmap for large blocks (M_MMAP_MAX=0) and a 1 GiB trim threshold, so freed buffers
    are reused with their pages already mapped. "system": glibc's defaults, untouched.
    Only glibc has mallopt; elsewhere the policy is recorded as not applied.
    """
    global _malloc_state
    policy = os.environ.get("AKG_MALLOC", "keep").strip().lower() or "keep"
    state: Dict[str, Any] = {"policy": policy, "applied": False}
    if policy == "keep":
        libc_name = ctypes.util.find_library("c")
        try:
            libc = ctypes.CDLL(libc_name)
            mallopt = libc.mallopt
        except (OSError, AttributeError, TypeError):
            state["detail"] = "mallopt is not available (not glibc)"
        else:
            mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
            mallopt.restype = ctypes.c_int
            ok = mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, _KEEP_TRIM_THRESHOLD) == 1
            state.update({"applied": ok, "mmap_max": 0, "trim_threshold": _KEEP_TRIM_THRESHOLD})
    elif policy != "system":
        state["detail"] = f"unknown AKG_MALLOC {policy!r}: glibc defaults kept"
    # glibc's own tunables, should the environment set any: they act below this policy.
    tunables = {k: v for k, v in os.environ.items() if k.startswith("MALLOC_") or k == "GLIBC_TUNABLES"}
    if tunables:
        state["environment"] = tunables
    _malloc_state = state
    return state


def cpu_info() -> Dict[str, Any]:
    """Vendor, family, model and the SIMD flags of the CPU (Linux x86): what decides OpenBLAS's
    best core type, and what the Designer reads to pick vector widths (the probe's `cpu`)."""
    vendor: Optional[str] = None
    model: Optional[str] = None
    family: Optional[int] = None
    flags: List[str] = []
    try:
        with open("/proc/cpuinfo", "r", encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip()
                if key == "vendor_id" and vendor is None:
                    vendor = value.strip()
                elif key == "cpu family" and family is None:
                    family = int(value.strip()) if value.strip().isdigit() else None
                elif key == "model name" and model is None:
                    model = value.strip()
                elif key == "flags" and not flags:
                    flags = value.split()
                if vendor and model and flags:
                    break
    except OSError:
        pass
    have = set(flags)
    simd = [f for f in ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl") if f in have]
    return {"vendor": vendor, "family": family, "model": model, "machine": platform.machine(), "simd": simd,
            "cores": os.cpu_count(), "expected_coretype": expected_coretype(vendor, have)}


def expected_coretype(vendor: Optional[str], flags: "set[str]") -> Optional[str]:
    """The OpenBLAS core type whose kernels are the fastest this CPU can run, or None."""
    if {"avx512f", "avx512bw", "avx512vl"} <= flags:
        return "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "Zen" if vendor == "AuthenticAMD" else "Haswell"
    return None


def _openblas_query(path: str) -> Optional[Dict[str, Any]]:
    """Asks a loaded library for OpenBLAS's own description; None when it is not OpenBLAS."""
    try:
        lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
    except OSError:
        return None
    out: Dict[str, Any] = {}
    for name, key in (("openblas_get_corename", "corename"), ("openblas_get_config", "config")):
        fn = getattr(lib, name, None)
        if fn is None:
            return None
        fn.restype = ctypes.c_char_p
        fn.argtypes = []
        raw = fn()
        out[key] = raw.decode("utf-8", "replace").strip() if raw else None
    threads_fn = getattr(lib, "openblas_get_num_threads", None)
    if threads_fn is not None:
        threads_fn.restype = ctypes.c_int
        out["threads"] = int(threads_fn())
    return out


def blas_record() -> Dict[str, Any]:
    """Which BLAS torch calls: kind "openblas", "reference" (netlib), "mkl", "blis" or "unknown"."""
    import torch

    from .env import loaded_blas_libraries, torch_blas_info

    a = torch.ones(64, 64)
    _ = a @ a  # makes torch load its BLAS before the mappings are read
    libs = loaded_blas_libraries()
    info = torch_blas_info()
    record: Dict[str, Any] = {"info": info, "kind": "unknown", "library": None, "libraries": libs}
    for path in libs:
        query = _openblas_query(path)
        if query is not None:
            record.update({"kind": "openblas", "library": path, **query})
            return record
    base = [os.path.basename(p) for p in libs]
    for path, name in zip(libs, base):
        if name.startswith("libmkl_"):
            record.update({"kind": "mkl", "library": path})
            return record
        if name.startswith("libblis"):
            record.update({"kind": "blis", "library": path})
            return record
    for path, name in zip(libs, base):
        if name.startswith("libblas"):
            # A libblas.so that is not OpenBLAS (no openblas_* symbols): the netlib reference BLAS.
            record.update({"kind": "reference", "library": path})
            return record
    if info and "mkl" in info.lower():
        record["kind"] = "mkl"  # linked statically into torch (PyPI wheels)
    return record


def omp_max_threads() -> Optional[int]:
    """OpenMP's thread count in this thread, as a kernel built with -fopenmp will see it."""
    for path in _mapped_paths("libgomp"):
        try:
            lib = ctypes.CDLL(path, mode=getattr(os, "RTLD_NOLOAD", 0))
            fn = lib.omp_get_max_threads
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int
        fn.argtypes = []
        return int(fn())
    return None


def _mapped_paths(stem: str) -> List[str]:
    found: List[str] = []
    try:
        with open("/proc/self/maps", "r", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.split()[-1] if line.strip() else ""
                if os.path.basename(path).startswith(stem) and path not in found:
                    found.append(path)
    except OSError:
        pass
    return found


def measure_gemm(n: int, runs: int) -> Dict[str, Any]:
    """GFLOP/s of an n x n x n float32 torch.matmul: median of `runs` timed calls after warm-up."""
    import torch

    gen = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=gen)
    b = torch.randn(n, n, generator=gen)
    out = torch.empty(n, n)
    for _ in range(GEMM_WARMUP):
        torch.matmul(a, b, out=out)
    times: List[float] = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        torch.matmul(a, b, out=out)
        times.append((time.perf_counter_ns() - start) / 1e6)
    median_ms = statistics.median(times)
    return {"n": n, "dtype": "float32", "runs": runs, "warmup": GEMM_WARMUP, "ms": median_ms,
            "best_ms": min(times), "gflops": 2.0 * n * n * n / (median_ms * 1e6)}


def gpu_record(device: Any) -> Dict[str, Any]:
    """What the GPU results are measured on and against: the device, driver, CUDA, Triton, and the
    measured peaks (a large fp32 and bf16 matmul in TFLOP/s, TF32 off; a device-to-device copy in
    TB/s, bytes read plus written), each the best of a few runs, timed with CUDA events."""
    import torch

    props = torch.cuda.get_device_properties(device)
    record: Dict[str, Any] = {"name": props.name, "capability": f"sm_{props.major}{props.minor}",
                              "sms": props.multi_processor_count, "memory_bytes": props.total_memory,
                              "cuda": torch.version.cuda}
    try:
        version = int(torch._C._cuda_getDriverVersion())  # e.g. 13000 for 13.0
        record["driver_cuda"] = f"{version // 1000}.{version % 1000 // 10}"
    except (AttributeError, RuntimeError, ValueError):
        record["driver_cuda"] = None
    try:
        with open("/proc/driver/nvidia/version", "r", encoding="utf-8") as f:
            words = f.readline().split()
        record["driver"] = next((w for w in words if w[:1].isdigit() and "." in w), None)
    except OSError:
        record["driver"] = None
    try:
        import triton  # noqa: F401 - only its version

        record["triton"] = triton.__version__
    except ImportError:
        record["triton"] = None

    def best_ms(fn: Any, reps: int = 5) -> float:
        fn()
        torch.cuda.synchronize(device)
        best = float("inf")
        for _ in range(reps):
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            fn()
            end.record()
            torch.cuda.synchronize(device)
            best = min(best, begin.elapsed_time(end))
        return best

    tf32 = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        n = 8192
        for dtype, key in ((torch.float32, "fp32"), (torch.bfloat16, "bf16")):
            a = torch.randn(n, n, device=device, dtype=dtype)
            b = torch.randn(n, n, device=device, dtype=dtype)
            ms = best_ms(lambda: torch.matmul(a, b))
            record[f"peak_{key}_tflops"] = 2.0 * n ** 3 / (ms * 1e9)
            del a, b
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32
    src = torch.empty(1 << 28, dtype=torch.float32, device=device).fill_(1.0)  # 1 GiB
    dst = torch.empty_like(src)
    ms = best_ms(lambda: dst.copy_(src))
    record["copy_tbps"] = 2.0 * src.numel() * 4 / (ms * 1e9)
    del src, dst
    torch.cuda.empty_cache()
    return record


def _int_field(req: Dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = req.get(key, default)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise HarnessError(RUNTIME_ERROR, f"\"{key}\" must be an integer in [{low}, {high}]")
    return value


def run_env(req: Dict[str, Any], env: "WorkerEnv") -> Dict[str, Any]:
    """The answer to {"op":"env"} (README.md, "env")."""
    import torch

    n = _int_field(req, "gemm_n", GEMM_N_DEFAULT, 16, 8192)
    runs = _int_field(req, "gemm_runs", GEMM_RUNS_DEFAULT, 1, 100)
    answer: Dict[str, Any] = {
        "ok": True,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "device": str(env.device),
        "threads": torch.get_num_threads(),
        "interop_threads": torch.get_num_interop_threads(),
        "omp_max_threads": omp_max_threads(),
        "environment": {k: os.environ.get(k) for k in ("OMP_NUM_THREADS", "AKG_THREADS", "OPENBLAS_CORETYPE",
                                                       "OMP_WAIT_POLICY", "OPENBLAS_THREAD_TIMEOUT", "OPENBLAS_NUM_THREADS",
                                                       "MKL_NUM_THREADS", "GOMP_SPINCOUNT")},
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"),
        "openblas_thread_timeout": os.environ.get("OPENBLAS_THREAD_TIMEOUT"),
        "cpu": cpu_info(),
        "blas": blas_record(),
        "malloc": dict(_malloc_state),
    }
    if env.is_cuda:
        answer["gpu"] = torch.cuda.get_device_name(env.device)
        answer["gpu_info"] = gpu_record(env.device)
    answer["gemm"] = measure_gemm(n, runs)
    return answer
