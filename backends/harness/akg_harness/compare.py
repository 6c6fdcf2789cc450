"""Comparing a kernel's outputs with the reference's: tolerances, statistics, the float64 rule."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from .inputs import dtype_name
from .protocol import NUMERICAL_MISMATCH, SHAPE_MISMATCH

# Per-dtype (atol, rtol) defaults; integer and bool outputs must match exactly.
DEFAULT_TOLERANCES: Dict[torch.dtype, Tuple[float, float]] = {
    torch.float32: (1e-4, 1e-4),
    torch.complex64: (1e-4, 1e-4),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (2e-2, 2e-2),
    torch.float64: (1e-7, 1e-7),
    torch.complex128: (1e-7, 1e-7),
}
# The float64 rule lets a kernel be this many times as far from float64 as PyTorch's float32 is.
FP64_RULE_FACTOR = 4.0
# An output element that reduces n >= REDUCTION_MIN input elements (sums, means, norms, losses) gets
# an atol no larger than REDUCTION_EPS_FACTOR * eps(dtype) * sqrt(n) times the output's mean
# magnitude: a correct reduction's error is that small relative to what it computes, while a kernel
# that reduced rounded inputs (float16, bfloat16) keeps their error, which a flat atol of 1e-4 would
# hide in a small scalar result (a loss near 3e-5 on the precision-exposing trial).
REDUCTION_MIN = 16
REDUCTION_EPS_FACTOR = 4.0
REDUCTION_EPS_FLOOR = 16.0


def reduction_sizes(inputs: List[Any], refs: List[Any]) -> List[int]:
    """Per output: how many input elements each of its elements reduces (largest floating input's
    size over the output's; 1 when the output is not smaller)."""
    largest = 0
    stack = list(inputs)
    while stack:
        value = stack.pop()
        if isinstance(value, torch.Tensor):
            if value.is_floating_point():
                largest = max(largest, value.numel())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    sizes = []
    for ref in refs:
        if isinstance(ref, torch.Tensor) and ref.is_floating_point() and ref.numel() > 0:
            sizes.append(max(1, largest // ref.numel()))
        else:
            sizes.append(1)
    return sizes


def _reduced_atol(atol_given: Optional[float], default: float, sizes: Optional[List[int]], i: int,
                  ref: torch.Tensor) -> float:
    """The atol of output ``i`` (see REDUCTION_MIN); a request's own atol is taken as given."""
    if atol_given is not None or sizes is None or i >= len(sizes) or sizes[i] < REDUCTION_MIN:
        return default
    if not ref.is_floating_point() or ref.numel() == 0:
        return default
    eps = torch.finfo(ref.dtype).eps
    rel = max(REDUCTION_EPS_FLOOR * eps, REDUCTION_EPS_FACTOR * eps * math.sqrt(sizes[i]))
    r = ref.detach().to(torch.float64)
    scale = float(torch.where(torch.isfinite(r), r.abs(), torch.zeros((), dtype=torch.float64)).mean())
    return min(default, rel * scale)


def tolerance_for(dtype: torch.dtype, atol: Optional[float], rtol: Optional[float]) -> Tuple[float, float]:
    default = DEFAULT_TOLERANCES.get(dtype, (0.0, 0.0))
    return (default[0] if atol is None else float(atol), default[1] if rtol is None else float(rtol))


def _index(flat: int, shape: torch.Size) -> List[int]:
    out: List[int] = []
    for dim in reversed(list(shape)):
        out.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return list(reversed(out))


def _fmt(value: float) -> str:
    return f"{value:.6g}"


def _sig(t: torch.Tensor) -> str:
    return f"{list(t.shape)} {dtype_name(t.dtype)}"


@dataclass
class OutputStats:
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    rel_l2_err: float = 0.0


@dataclass
class Comparison:
    """Result of comparing all outputs of one trial and case."""

    ok: bool = True
    error_class: Optional[str] = None
    detail: Optional[str] = None
    # Outputs that failed only by tolerance (shape, dtype and NaN/Inf positions matched).
    tolerance_failures: List[int] = field(default_factory=list)
    # Set when some output failed for another reason (shape, dtype, NaN/Inf positions, exact types).
    hard_failure: bool = False
    stats: OutputStats = field(default_factory=OutputStats)

    def fail(self, error_class: str, detail: str, tolerance_only: bool = False) -> None:
        if not tolerance_only:
            self.hard_failure = True
        if self.ok:
            self.ok, self.error_class, self.detail = False, error_class, detail


def _as_compute(t: torch.Tensor) -> torch.Tensor:
    """The comparison's arithmetic: float64 (complex128) for 64-bit outputs, float32 for the others
    (float16 and bfloat16 widened). The difference of two nearby floats is exact in their own
    format, and the tolerance is far above float32's rounding."""
    if t.is_complex():
        return t.detach().to(torch.complex128)
    if t.dtype == torch.float64:
        return t.detach()
    return t.detach().to(torch.float32)


def _norm(t: torch.Tensor) -> float:
    """The 2-norm of a real tensor, in float64 when its own type overflows."""
    value = float(torch.linalg.vector_norm(t))
    if not math.isfinite(value) and t.dtype != torch.float64:
        value = float(torch.linalg.vector_norm(t.double()))
    return value


def diff_dtype(t: torch.Tensor) -> torch.dtype:
    """The real dtype of |a - b| for tensors of ``t``'s compute type."""
    return torch.float64 if t.dtype in (torch.float64, torch.complex128) else torch.float32


def _first_true(mask: torch.Tensor) -> int:
    return int(torch.nonzero(mask.reshape(-1))[0].item())


def compare_tensor(i: int, ref: torch.Tensor, out: torch.Tensor, atol: float, rtol: float,
                   where: str, result: Comparison) -> None:
    """Compares output ``i``; updates ``result`` (stats, first failure)."""
    if out.device != ref.device:
        result.fail(SHAPE_MISMATCH, f"output {i}: expected a tensor on {ref.device}, got one on {out.device}")
        return
    if out.shape != ref.shape or out.dtype != ref.dtype:
        result.fail(SHAPE_MISMATCH, f"output {i}: expected {_sig(ref)}, got {_sig(out)}")
        return
    if ref.numel() == 0:
        return
    if not (ref.is_floating_point() or ref.is_complex()):
        differ = ref != out
        if bool(differ.any()):
            k = _first_true(differ)
            count = int(differ.sum())
            result.fail(NUMERICAL_MISMATCH,
                        f"output {i}, {where}: element {_index(k, ref.shape)} is {out.reshape(-1)[k].item()}, "
                        f"expected {ref.reshape(-1)[k].item()} (exact match required for {dtype_name(ref.dtype)}; "
                        f"{count} of {ref.numel()} elements differ)")
        return
    r, o = _as_compute(ref), _as_compute(out)
    all_finite = bool(torch.isfinite(r).all()) and bool(torch.isfinite(o).all())
    for label, test in () if all_finite else (("NaN", torch.isnan), ("+Inf", lambda t: torch.isposinf(t.real)),
                                              ("-Inf", lambda t: torch.isneginf(t.real))):
        rm, om = test(r), test(o)
        if not bool(torch.equal(rm, om)):
            bad = rm != om
            k = _first_true(bad)
            result.fail(NUMERICAL_MISMATCH,
                        f"output {i}, {where}: {label} positions differ: element {_index(k, ref.shape)} is "
                        f"{_fmt(o.reshape(-1)[k].real.item())}, expected {_fmt(r.reshape(-1)[k].real.item())} "
                        f"({int(bad.sum())} of {ref.numel()} elements differ in {label} position)")
            return
    if all_finite:
        diff = (o - r).abs()
        mag = r.abs()
    else:
        finite = torch.isfinite(r) & torch.isfinite(o)
        zero = torch.zeros((), dtype=diff_dtype(r), device=r.device)
        diff = torch.where(finite, (o - r).abs(), zero)
        mag = torch.where(finite, r.abs(), zero)
    tol = atol + rtol * mag
    stats = OutputStats()
    stats.max_abs_err = float(diff.max())
    floor = atol if atol > 0 else 1e-30
    stats.max_rel_err = float((diff / mag.clamp(min=floor)).max())
    ref_norm, err_norm = _norm(mag), _norm(diff)
    stats.rel_l2_err = err_norm / ref_norm if ref_norm > 0 else err_norm
    _merge(result.stats, stats)
    excess = diff - tol
    if bool((excess > 0).any()):
        k = int(torch.argmax(excess.reshape(-1)).item())
        count = int((excess > 0).sum())
        result.tolerance_failures.append(i)
        result.fail(NUMERICAL_MISMATCH, tolerance_only=True, detail=
                    f"output {i}, {where}: worst element {_index(k, ref.shape)} is {_fmt(o.reshape(-1)[k].real.item())}, "
                    f"expected {_fmt(r.reshape(-1)[k].real.item())}: |err| {_fmt(diff.reshape(-1)[k].item())} > "
                    f"tolerance {_fmt(tol.reshape(-1)[k].item())} (atol {atol:g}, rtol {rtol:g}); "
                    f"{count} of {ref.numel()} elements out of tolerance")


def _merge(total: OutputStats, one: OutputStats) -> None:
    total.max_abs_err = max(total.max_abs_err, one.max_abs_err)
    total.max_rel_err = max(total.max_rel_err, one.max_rel_err)
    total.rel_l2_err = max(total.rel_l2_err, one.rel_l2_err)


def compare_outputs(refs: List[Any], outs: List[Any], atol: Optional[float], rtol: Optional[float],
                    where: str, reduced: Optional[List[int]] = None) -> Comparison:
    """``reduced``: per output, the input elements each element reduces (reduction_sizes)."""
    result = Comparison()
    if len(refs) != len(outs):
        result.fail(SHAPE_MISMATCH, f"expected {len(refs)} output(s), got {len(outs)}")
        return result
    for i, (ref, out) in enumerate(zip(refs, outs)):
        if isinstance(ref, torch.Tensor):
            if not isinstance(out, torch.Tensor):
                result.fail(SHAPE_MISMATCH, f"output {i}: expected {_sig(ref)}, got {type(out).__name__}")
                return result
            a, r = tolerance_for(ref.dtype, atol, rtol)
            compare_tensor(i, ref, out, _reduced_atol(atol, a, reduced, i, ref), r, where, result)
        elif isinstance(out, torch.Tensor) or ref != out:
            result.fail(NUMERICAL_MISMATCH, f"output {i}, {where}: expected {ref!r}, got {out!r}")
        if not result.ok and result.error_class == SHAPE_MISMATCH:
            return result
    return result


def quick_match(refs: List[Any], outs: List[Any], atol: Optional[float], rtol: Optional[float],
                reduced: Optional[List[int]] = None) -> bool:
    """A fast, conservative pass: True only when every output matches within half its tolerance,
    computed in the outputs' own dtype (profile's spot checks); anything else goes to
    compare_outputs, which decides and explains."""
    if len(refs) != len(outs):
        return False
    for i, (ref, out) in enumerate(zip(refs, outs)):
        if not isinstance(ref, torch.Tensor):
            if isinstance(out, torch.Tensor) or ref != out:
                return False
            continue
        if not isinstance(out, torch.Tensor) or out.shape != ref.shape or out.dtype != ref.dtype \
                or out.device != ref.device:
            return False
        if ref.numel() == 0:
            continue
        if not ref.is_floating_point():
            if not bool(torch.equal(ref, out)):
                return False
            continue
        a, r = tolerance_for(ref.dtype, atol, rtol)
        a = _reduced_atol(atol, a, reduced, i, ref)
        if not bool(torch.isclose(out, ref, rtol=r / 2, atol=a / 2, equal_nan=True).all()):
            return False
    return True


def fp64_rule_passes(refs32: List[Any], refs64: List[Any], outs: List[Any], atol: Optional[float],
                     rtol: Optional[float], failing: List[int], reduced: Optional[List[int]] = None) -> bool:
    """The float64 rule (README.md): every failing output must be within the factor of PyTorch's error."""
    if not failing or len(refs64) != len(refs32):
        return False
    for i in failing:
        ref32, ref64, out = refs32[i], refs64[i], outs[i]
        if not all(isinstance(t, torch.Tensor) for t in (ref32, ref64, out)):
            return False
        if not ref32.is_floating_point() or ref64.shape != ref32.shape:
            return False
        a, r = tolerance_for(ref32.dtype, atol, rtol)
        a = _reduced_atol(atol, a, reduced, i, ref32)
        r64 = ref64.detach().to(device=out.device, dtype=torch.float64)
        r32 = ref32.detach().to(torch.float64)
        o = out.detach().to(torch.float64)
        finite = torch.isfinite(r64) & torch.isfinite(r32) & torch.isfinite(o)
        zero = torch.zeros((), dtype=torch.float64, device=o.device)
        torch_err = float(torch.where(finite, (r32 - r64).abs(), zero).max())
        bound = a + FP64_RULE_FACTOR * torch_err
        kernel_err = torch.where(finite, (o - r64).abs(), zero)
        if bool((kernel_err > bound + r * torch.where(finite, r64.abs(), zero)).any()):
            return False
    return True
