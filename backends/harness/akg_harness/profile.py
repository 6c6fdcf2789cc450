"""The profile request: one timing protocol for every DSL (README.md, "profile").

Reference and kernel run in this worker, interleaved in blocks: ROTATING_SETS calls of one side
(one per input set, so that no call finds its inputs warm from its own previous call), then of the
next. The first call of a block is not timed: it absorbs what the other side left behind (dirty
cache lines to write back, streaming stores still draining to memory, a thread pool to wake), so
each side pays for its own traffic and not for the other's. Call-by-call interleaving charged a
kernel's streamed writes to the reference timed after it. On CPU each
call is timed with perf_counter_ns; on CUDA with a pair of device events after writing
L2_FLUSH_BYTES to a scratch buffer. The kernel is not run under the verifier's guard here: profile
assumes a kernel that passed verify, and the guard's Python hooks would bias small kernels.

With ``"compiled": true`` a third contestant joins: the reference under ``torch.compile`` (PyTorch 2),
compiled by its first call before the warm-up and then timed interleaved with the other two. A
reference that does not compile, or a torch without ``torch.compile``, leaves the eager timing and the
kernel's untouched and says why in ``compiled_error``.
"""

from __future__ import annotations

import os
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch

from .env import WorkerEnv
from .inputs import SEED_STRIDE, clone_args, draw_cases
from .loading import Registry, call_user
from .models import build_pair
from .protocol import RUNTIME_ERROR, HarnessError
from .verify import int_field

ROTATING_SETS = 4
L2_FLUSH_BYTES = 256 << 20
MAX_RUNS = 100_000


def percentile(sorted_values: List[float], q: float) -> float:
    """Linear interpolation between closest ranks; ``q`` in [0, 1]."""
    if not sorted_values:
        return 0.0
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Timer:
    """Times one call in milliseconds on the worker's device."""

    def __init__(self, env: WorkerEnv) -> None:
        self.env = env
        self._flush: Optional[torch.Tensor] = None
        if env.is_cuda:
            self._flush = torch.empty(L2_FLUSH_BYTES // 4, dtype=torch.int32, device=env.device)

    def time_ms(self, call: Callable[[], Any]) -> float:
        if self._flush is None:
            start = time.perf_counter_ns()
            call()
            return (time.perf_counter_ns() - start) / 1e6
        self._flush.zero_()
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        call()
        end.record()
        torch.cuda.synchronize(self.env.device)
        return float(begin.elapsed_time(end))


def _summary(prefix: str, times: List[float]) -> Dict[str, float]:
    ordered = sorted(times)
    return {
        f"{prefix}_ms": percentile(ordered, 0.5),
        f"{prefix}_ms_p10": percentile(ordered, 0.1),
        f"{prefix}_ms_p90": percentile(ordered, 0.9),
    }


def compiled_vec_isa() -> Optional[str]:
    """The SIMD instruction set inductor's C++ backend generates for ("avx2", "avx512", ...), or
    "none" when its probe found none usable (it then writes scalar loops)."""
    try:
        from torch._inductor import cpu_vec_isa  # PyTorch 2.3 and later
    except ImportError:
        return None
    try:
        return str(cpu_vec_isa.pick_vec_isa()) or "none"
    except Exception:  # noqa: BLE001 - a failing probe is reported as no vectorisation
        return "none"


def compile_reference(model: Any, path: str, args: List[Any]) -> Tuple[Optional[Any], float, Optional[str]]:
    """``torch.compile(model)`` compiled by one call on ``args``: (compiled or None, seconds, error)."""
    compile_fn = getattr(torch, "compile", None)
    if compile_fn is None:
        return None, 0.0, f"torch {torch.__version__} has no torch.compile (PyTorch 2 is needed)"
    # Inductor picks its SIMD set by loading a probe library in a child Python that must resolve
    # ATen's vector math (Sleef) from libtorch; PyPI's torch loads libtorch privately unless this
    # is set, the probe then fails and every compiled kernel is scalar. The child inherits it.
    os.environ.setdefault("TORCH_USE_RTLD_GLOBAL", "1")
    start = time.perf_counter()
    try:
        compiled = compile_fn(model)
        with torch.no_grad():
            compiled(*args)
    except Exception as exc:  # noqa: BLE001 - any failure to compile is reported, never fatal
        last = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
        where = f" ({last[0].filename}:{last[0].lineno})" if last else ""
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return None, time.perf_counter() - start, f"torch.compile of {path} failed: {type(exc).__name__}: {text}{where}"[:600]
    return compiled, time.perf_counter() - start, None


def run_profile(req: Dict[str, Any], registry: Registry, env: WorkerEnv) -> Dict[str, Any]:
    ref = registry.load_reference(req.get("reference"))
    kernel = registry.load_kernel(req.get("kernel"))
    warmup = int_field(req, "warmup", 5, 0, MAX_RUNS)
    runs = int_field(req, "runs", 50, 1, MAX_RUNS)
    seed = int_field(req, "seed", 0, 0, 2**62)
    compiled_wanted = req.get("compiled", False)
    if not isinstance(compiled_wanted, bool):
        raise HarnessError(RUNTIME_ERROR, "\"compiled\" must be true or false")
    pair = build_pair(ref, kernel, seed, env)
    ref_sets: List[List[Any]] = []
    kernel_sets: List[List[Any]] = []
    for r in range(ROTATING_SETS):
        args = draw_cases(ref, seed + SEED_STRIDE * r, include_dyn=False)[0].args
        ref_sets.append(clone_args(args, env.device))
        kernel_sets.append(clone_args(args, env.device))

    def ref_call(i: int) -> Callable[[], Any]:
        return lambda: call_user("Model.forward", "reference", ref.path, pair.ref_model, *ref_sets[i % ROTATING_SETS])

    def kernel_call(i: int) -> Callable[[], Any]:
        return lambda: call_user("ModelNew.forward", "kernel", kernel.path, pair.kernel_model,
                                 *kernel_sets[i % ROTATING_SETS])

    compiled: Optional[Any] = None
    compiled_sets: List[List[Any]] = []
    compile_s, compiled_error = 0.0, None
    if compiled_wanted:
        compiled_sets = [clone_args(args, env.device) for args in ref_sets]
        compiled, compile_s, compiled_error = compile_reference(pair.ref_model, ref.path, compiled_sets[0])

    def compiled_call(i: int) -> Callable[[], Any]:
        return lambda: call_user("torch.compile(Model).forward", "reference", ref.path, compiled,
                                 *compiled_sets[i % ROTATING_SETS])

    timer = Timer(env)
    for i in range(warmup):
        timer.time_ms(ref_call(i))
        if compiled is not None:
            timer.time_ms(compiled_call(i))
        timer.time_ms(kernel_call(i))
    ref_times: List[float] = []
    compiled_times: List[float] = []
    kernel_times: List[float] = []

    def block(call: Callable[[int], Callable[[], Any]], times: List[float]) -> None:
        timer.time_ms(call(0))  # settles the other side's aftermath; not counted
        for i in range(1, ROTATING_SETS):
            if len(times) < runs:
                times.append(timer.time_ms(call(i)))

    while len(kernel_times) < runs:
        block(ref_call, ref_times)
        if compiled is not None:
            block(compiled_call, compiled_times)
        block(kernel_call, kernel_times)
    answer: Dict[str, Any] = {"ok": True}
    answer.update(_summary("ref", ref_times))
    answer.update(_summary("kernel", kernel_times))
    answer["speedup"] = answer["ref_ms"] / answer["kernel_ms"] if answer["kernel_ms"] > 0 else None
    if compiled_wanted:
        answer["compile_s"] = compile_s
        answer["compiled_isa"] = compiled_vec_isa() if compiled is not None else None
        if compiled is not None:
            answer.update(_summary("compiled", compiled_times))
            answer["speedup_compiled"] = (answer["compiled_ms"] / answer["kernel_ms"]
                                          if answer["kernel_ms"] > 0 else None)
        else:
            answer["compiled_error"] = compiled_error
    answer["runs"] = runs
    answer["warmup"] = warmup
    answer["rotating_sets"] = ROTATING_SETS
    if ref.get_inputs_dyn_list is not None:
        answer["case"] = "get_inputs"
    answer["env"] = env.summary()
    return answer
