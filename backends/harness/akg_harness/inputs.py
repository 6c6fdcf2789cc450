"""Describing, drawing, copying and checking the values passed to models."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import torch

from .loading import Reference, call_user
from .protocol import RUNTIME_ERROR, HarnessError

# Seeds of trial t are seed + SEED_STRIDE * t.
SEED_STRIDE = 1000


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def describe(value: Any) -> Dict[str, Any]:
    """A JSON description of an input or output value (README.md, "Value descriptions")."""
    if isinstance(value, torch.Tensor):
        desc: Dict[str, Any] = {"kind": "tensor", "shape": list(value.shape), "dtype": dtype_name(value.dtype)}
        desc["min"], desc["max"] = _tensor_range(value)
        return desc
    if isinstance(value, (list, tuple)):
        return {"kind": "list", "items": [describe(v) for v in value]}
    if value is None:
        return {"kind": "scalar", "type": "none", "value": None}
    if isinstance(value, bool):
        return {"kind": "scalar", "type": "bool", "value": value}
    if isinstance(value, int):
        return {"kind": "scalar", "type": "int", "value": value}
    if isinstance(value, float):
        return {"kind": "scalar", "type": "float", "value": value}
    if isinstance(value, str):
        return {"kind": "scalar", "type": "str", "value": value}
    return {"kind": "scalar", "type": "other", "value": repr(value)[:200]}


def _tensor_range(t: torch.Tensor) -> tuple:
    if t.numel() == 0 or t.is_complex() or t.layout != torch.strided:
        return None, None
    data = t.detach()
    if data.dtype == torch.bool:
        data = data.to(torch.uint8)
    lo, hi = data.min().item(), data.max().item()
    return lo, hi


def as_list(value: Any) -> List[Any]:
    """get_inputs() results as a list of arguments."""
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def flatten_outputs(value: Any) -> List[Any]:
    """A model's output as a flat list of leaves (tensor, or tuple/list of tensors, nested)."""
    if isinstance(value, (list, tuple)):
        out: List[Any] = []
        for item in value:
            out.extend(flatten_outputs(item))
        return out
    return [value]


def map_tensors(value: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, list):
        return [map_tensors(v, fn) for v in value]
    if isinstance(value, tuple):
        return tuple(map_tensors(v, fn) for v in value)
    return value


def clone_args(args: List[Any], device: Optional[torch.device] = None) -> List[Any]:
    def copy(t: torch.Tensor) -> torch.Tensor:
        c = t.detach().clone()
        return c.to(device) if device is not None else c
    return [map_tensors(a, copy) for a in args]


def to_double(args: List[Any]) -> List[Any]:
    return [map_tensors(a, lambda t: t.double() if t.is_floating_point() else t) for a in args]


def find_modified_input(before: List[Any], after: List[Any]) -> Optional[int]:
    """Index of the first argument whose tensors differ bit for bit (NaNs compared as NaNs)."""
    for i, (b, a) in enumerate(zip(before, after)):
        if not _same_value(b, a):
            return i
    return None


def _same_value(b: Any, a: Any) -> bool:
    if isinstance(b, torch.Tensor):
        if not isinstance(a, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
            return False
        a = a.detach().to(b.device)
        if b.is_floating_point() or b.is_complex():
            return bool(torch.equal(torch.isnan(b), torch.isnan(a))) and bool(
                torch.equal(torch.nan_to_num(b, nan=0.0), torch.nan_to_num(a, nan=0.0)))
        return bool(torch.equal(b, a))
    if isinstance(b, (list, tuple)):
        return isinstance(a, (list, tuple)) and len(a) == len(b) and all(_same_value(x, y) for x, y in zip(b, a))
    return True


@dataclass
class Case:
    """One set of inputs: case 0 is get_inputs(), cases 1.. are get_inputs_dyn_list() entries."""

    index: int
    args: List[Any]
    heavy_tailed: bool = False
    precision: bool = False


@dataclass
class TrialInputs:
    trial: int
    seed: int
    cases: List[Case] = field(default_factory=list)


def draw_cases(ref: Reference, seed: int, include_dyn: bool = True) -> List[Case]:
    """Seeds torch with ``seed`` and builds every case on the CPU."""
    torch.manual_seed(seed)
    cases = [Case(0, as_list(call_user("get_inputs()", "reference", ref.path, ref.get_inputs)))]
    if include_dyn and ref.get_inputs_dyn_list is not None:
        dyn = call_user("get_inputs_dyn_list()", "reference", ref.path, ref.get_inputs_dyn_list)
        if not isinstance(dyn, (list, tuple)):
            raise HarnessError(RUNTIME_ERROR, "get_inputs_dyn_list() must return a list of input lists",
                               where="reference")
        for i, item in enumerate(dyn):
            cases.append(Case(i + 1, as_list(item)))
    return cases


def heavy_tailed_like(args: List[Any], generator: torch.Generator) -> Optional[List[Any]]:
    """Signed, heavy-tailed replacements for floating tensors whose draw was all non-negative.

    Each such tensor x becomes randn(x.shape) * exp(randn(x.shape)), scaled by max(|x|) so the
    magnitude stays that of the reference's draw. Returns None when no tensor qualifies.
    """
    changed = False

    def transform(t: torch.Tensor) -> torch.Tensor:
        nonlocal changed
        if not t.is_floating_point() or t.numel() == 0:
            return t
        if bool((t < 0).any()) or bool(torch.isnan(t).any()):
            return t
        scale = float(t.abs().max())
        if not math.isfinite(scale) or scale == 0.0:
            scale = 1.0
        base = torch.randn(t.shape, generator=generator, dtype=torch.float32)
        tail = torch.exp(torch.randn(t.shape, generator=generator, dtype=torch.float32))
        changed = True
        return (base * tail * scale).to(t.dtype)

    out = [map_tensors(a, transform) for a in args]
    return out if changed else None


# Precision-exposing inputs: x becomes 1 + x * PRECISION_SCALE, so the information sits in the low
# bits of values near 1. float32 keeps it (spacing 1.2e-7 at 1); a kernel that rounds its inputs to
# float16 or bfloat16 (spacing 1e-3 and 8e-3) loses most of it, and its outputs show that.
PRECISION_SCALE = 1.0 / 256.0


def precision_like(args: List[Any]) -> Optional[List[Any]]:
    """Float32/float64 tensors moved next to 1 (see PRECISION_SCALE); None when none qualifies."""
    changed = False

    def transform(t: torch.Tensor) -> torch.Tensor:
        nonlocal changed
        if t.dtype not in (torch.float32, torch.float64) or t.numel() == 0:
            return t
        changed = True
        return 1.0 + t * PRECISION_SCALE

    out = [map_tensors(a, transform) for a in args]
    return out if changed else None


def count_nonfinite(outputs: List[Any]) -> int:
    total = 0
    for out in outputs:
        if isinstance(out, torch.Tensor) and (out.is_floating_point() or out.is_complex()):
            total += int((~torch.isfinite(out)).sum())
    return total
