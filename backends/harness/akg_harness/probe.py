"""The probe request: what a reference takes and gives (README.md, "probe")."""

from __future__ import annotations

import time
from typing import Any, Dict, List, Tuple

import torch
import torch.nn as nn

from .env import WorkerEnv
from .envinfo import cpu_info
from .inputs import clone_args, describe, draw_cases, dtype_name
from .loading import Registry
from .models import build_reference, run_reference
from .trace import probe_graph
from .verify import int_field

# After the first forward, this many more are timed for ref_ms when the first took under PROBE_FAST_MS.
PROBE_TIMED_RUNS = 3
PROBE_FAST_MS = 200.0


def _named_tensors(items: Any) -> List[Dict[str, Any]]:
    return [{"name": name, "shape": list(t.shape), "dtype": dtype_name(t.dtype)} for name, t in items]


# How many submodules the probe describes, and how many attributes of each.
PROBE_MAX_MODULES = 64
PROBE_MAX_ATTRS = 32


def _simple(value: Any) -> Any:
    """A JSON form of a constructor-level attribute (numbers, strings, None, tuples of those), or
    a sentinel when it is anything else."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if value == value and abs(value) != float("inf") else str(value)
    if isinstance(value, (tuple, list)) and len(value) <= 8:
        items = [_simple(v) for v in value]
        return _SKIP if any(v is _SKIP for v in items) else items
    return _SKIP


_SKIP = object()


def _modules(model: nn.Module) -> Dict[str, Any]:
    """The model's submodules as built: type and plain attributes (a Conv2d's stride, padding,
    padding_mode...), so the Designer reads what the layers are, not how the constructor was
    spelt."""
    out: Dict[str, Any] = {}
    for name, mod in model.named_modules():
        if not name:
            continue
        if len(out) >= PROBE_MAX_MODULES:
            break
        attrs: Dict[str, Any] = {}
        for key, value in vars(mod).items():
            if key.startswith("_") or key == "training":
                continue
            v = _simple(value)
            if v is not _SKIP and len(attrs) < PROBE_MAX_ATTRS:
                attrs[key] = v
        out[name] = {"type": type(mod).__name__, "training": bool(mod.training), "attrs": attrs}
    return out


def _sync(env: WorkerEnv) -> None:
    if env.is_cuda:
        torch.cuda.synchronize(env.device)


def _timed_forward(ref: Any, model: nn.Module, args: List[Any], env: WorkerEnv) -> Tuple[float, List[Any]]:
    """(milliseconds, flat outputs) of one forward on a fresh copy of ``args``."""
    copied = clone_args(args, env.device)
    _sync(env)
    start = time.perf_counter_ns()
    outputs = run_reference(ref, model, copied, env)
    return (time.perf_counter_ns() - start) / 1e6, outputs


def run_probe(req: Dict[str, Any], registry: Registry, env: WorkerEnv) -> Dict[str, Any]:
    ref = registry.load_reference(req.get("reference"))
    seed = int_field(req, "seed", 0, 0, 2**62)
    model, init = build_reference(ref, seed, env.device)
    cases = draw_cases(ref, seed)
    main_args = cases[0].args
    first_ms, outputs = _timed_forward(ref, model, main_args, env)
    if first_ms < PROBE_FAST_MS:
        times = sorted(_timed_forward(ref, model, main_args, env)[0] for _ in range(PROBE_TIMED_RUNS))
        ref_ms = times[len(times) // 2]
    else:
        ref_ms = first_ms
    dyn_cases = []
    for case in cases[1:]:
        case_out = run_reference(ref, model, clone_args(case.args, env.device), env)
        dyn_cases.append({"inputs": [describe(a) for a in case.args], "outputs": [describe(o) for o in case_out]})
    # Last, so that whatever the traced forward does (random draws, buffer updates) changes no other answer.
    graph = probe_graph(ref, model, clone_args(main_args, env.device))
    return {
        "ok": True,
        "init_inputs": [describe(a) for a in init],
        "inputs": [describe(a) for a in main_args],
        "params": _named_tensors(model.named_parameters()),
        "buffers": _named_tensors(model.named_buffers()),
        "modules": _modules(model),
        "outputs": [describe(o) for o in outputs],
        "dyn_cases": dyn_cases,
        "ref_ms": ref_ms,
        "cpu": cpu_info(),  # the processor the kernel will run on: the Designer picks vector widths by it
        **graph,
    }
