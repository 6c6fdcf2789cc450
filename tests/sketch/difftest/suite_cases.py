"""Cases of the suite differential test (suite.py): small forward inputs for one operator of the
suite, the sketch bound to them, the interpreter's run, and the interpreter's outputs compared with
the reference's (the design's own check, reported apart from the lowering's).

Shrinking. The reference's inputs are sized for timing; the interpreter wants a few thousand
elements. Only forward's inputs shrink: the model is built as ``get_init_inputs()`` says (weights
and constructor values stay, since a design may be specialised to them and its ``bind:`` section
checks that). Starting from the smallest input case (``get_inputs()`` and the dynamic cases), the
dimensions of all input tensors are grouped by original extent (4096 in ``x`` and 4096 in ``y``
usually must stay equal). An extent *fits* when the reference's forward runs on the sliced inputs
and gives only non-empty tensors, and the sketch binds to them (``sketch_bind.bind`` and
``check_outputs``). Tensors are sliced, never redrawn, so value constraints (class indices,
masks) hold as far as slicing keeps them; a slice that breaks one (an index past a shrunk class
dimension) makes forward fail and the extent is refused. A group that cannot take an extent
jointly is split, by axis and then dimension by dimension (a depthwise convolution's 64 channels
are tied to its weights, its 64 rows and columns are not); what fits nowhere keeps its extent.

Two cases per operator:

* ``tiny``: groups taken largest extent first, each at the smallest of 1, 3, 5, 7, 13, 37 (below
  its original) that fits. Mostly 1: single rows, single elements, tiles that are all edge.
* ``ragged``: the tiny case with the dimensions on the last two axes of each tensor widened: a
  group holding some tensor's last axis to 37 (else 13), the others to 13 (else 37), each at most
  its original extent, so that full vectors and tiles run next to partial ones (37 = 2 * 16 + 5 =
  4 * 8 + 5, 13 = 2 * 6 + 1). Widening one group can let another widen (a batch of class indices
  needs its class dimension first), so the groups go round again while one widens. Past
  RAGGED_MAX_INPUT_ELEMENTS input elements (the convolutions, whose channels do not shrink) the
  last axes take 13 too, so that an interpretation stays within seconds.

Everything here runs in a worker process (torch imported); what goes back to the runner is plain
data and NumPy arrays.
"""

from __future__ import annotations

import copy
import os
import sys
import time
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "backends", "harness"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from akg_harness.compare import compare_outputs, fp64_rule_passes  # noqa: E402
from akg_harness.design_check import smallest_case  # noqa: E402
from akg_harness.inputs import clone_args, draw_cases, flatten_outputs, to_double  # noqa: E402
from akg_harness.loading import Reference, Registry  # noqa: E402
from akg_harness.models import build_reference  # noqa: E402
from akg_harness.protocol import HarnessError  # noqa: E402
from akg_harness.sketch_bind import TORCH_DTYPES, BindError, Binding, bind, check_outputs  # noqa: E402
from akg_harness.sketch_interp import Limits, SketchBudgetExceeded, SketchError, run  # noqa: E402

import values  # noqa: E402  (difftest's values.py: param defaults)


TINY_EXTENTS: Tuple[int, ...] = (1, 3, 5, 7, 13, 37)
RAGGED_EXTENTS: Tuple[int, ...] = (13, 37)
LAST_AXIS_EXTENTS: Tuple[int, ...] = (37, 13)
# A ragged case past this many input elements gets 13 on the last axes too (the convolutions:
# their channels do not shrink, and the interpreter's time grows with every output row).
RAGGED_MAX_INPUT_ELEMENTS = 8192
# Widening one group can let another widen (class indices need their class dimension first).
WIDEN_PASSES = 3
INTERP_LIMITS = Limits(max_statements=2_000_000, max_elements=200_000_000, max_seconds=60.0)


@dataclass
class CaseResult:
    """One case of one operator, as the runner needs it."""

    ladder: str
    shapes: List[List[int]] = field(default_factory=list)  # forward's tensor inputs, shrunk
    status: str = "ok"  # ok, bind_error, interp_error, interp_budget, reference_error
    detail: str = ""
    symbols: Dict[str, int] = field(default_factory=dict)
    params: Dict[str, float] = field(default_factory=dict)
    start: Dict[str, np.ndarray] = field(default_factory=dict)  # the sketch's tensors before the run
    expected: Dict[str, np.ndarray] = field(default_factory=dict)  # after the interpreter's run
    args: List[Any] = field(default_factory=list)  # forward's shrunk inputs (NumPy, for the failure file)
    design: str = ""  # "ok", "ok (float64 rule)", or what differs from the reference
    interp_seconds: float = 0.0


@dataclass
class OpCases:
    op: str
    original: List[List[int]] = field(default_factory=list)
    cases: List[CaseResult] = field(default_factory=list)
    error: str = ""  # the reference could not be loaded, built or run at all


# ---- forward's inputs ---------------------------------------------------------------------------------


def _tensor_paths(args: Sequence[Any]) -> List[Tuple[int, ...]]:
    """Where each tensor among forward's arguments sits (nested lists and tuples walked)."""
    out: List[Tuple[int, ...]] = []

    def walk(value: Any, path: Tuple[int, ...]) -> None:
        if isinstance(value, torch.Tensor):
            out.append(path)
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, path + (i,))

    for i, a in enumerate(args):
        walk(a, (i,))
    return out


def _get(args: Sequence[Any], path: Tuple[int, ...]) -> Any:
    value: Any = args
    for i in path:
        value = value[i]
    return value


def _replace(args: List[Any], path: Tuple[int, ...], new: Any) -> List[Any]:
    def rebuild(value: Any, rest: Tuple[int, ...]) -> Any:
        if not rest:
            return new
        items = list(value)
        items[rest[0]] = rebuild(items[rest[0]], rest[1:])
        return type(value)(items) if isinstance(value, tuple) else items
    return rebuild(args, path)


Dim = Tuple[int, int]  # (index among the tensor paths, dimension)


def dimension_sizes(args: Sequence[Any]) -> Dict[Dim, int]:
    return {(k, d): int(size) for k, path in enumerate(_tensor_paths(args))
            for d, size in enumerate(_get(args, path).shape)}


def extent_groups(args: Sequence[Any]) -> List[Tuple[int, List[Dim]]]:
    """Dimensions of forward's tensors grouped by original extent, largest extent first (extent 1
    cannot shrink and is left out)."""
    groups: Dict[int, List[Dim]] = {}
    for dim, size in dimension_sizes(args).items():
        if size > 1:
            groups.setdefault(size, []).append(dim)
    return sorted(groups.items(), key=lambda g: -g[0])


def materialise(original: List[Any], sizes: Dict[Dim, int]) -> List[Any]:
    """The original arguments with every tensor dimension sliced to its first ``sizes`` elements
    (copies; tensors that keep their shape are copied too)."""
    out = list(original)
    for k, path in enumerate(_tensor_paths(original)):
        t = _get(original, path)
        for d in range(t.dim()):
            t = t.narrow(d, 0, sizes[(k, d)])
        out = _replace(out, path, t.contiguous().clone())
    return out


def tensor_shapes(args: Sequence[Any]) -> List[List[int]]:
    return [list(_get(args, p).shape) for p in _tensor_paths(args)]


def _split(dims: List[Dim], level: int) -> List[List[Dim]]:
    """Smaller groups to try when ``dims`` cannot take an extent jointly: by axis, then one by one."""
    if level == 0:
        axes = sorted({d for _, d in dims})
        if len(axes) > 1:
            return [[x for x in dims if x[1] == a] for a in axes]
    return [[x] for x in dims] if len(dims) > 1 else []


def _settle(sizes: Dict[Dim, int], dims: List[Dim], candidates: Sequence[int],
            fits: Callable[[Dict[Dim, int]], bool], level: int = 0) -> Tuple[Dict[Dim, int], List[Dim]]:
    """sizes with ``dims`` at the first candidate extent that fits jointly; where none does, the
    group split (by axis, then dimension by dimension) and each part settled on its own. Also
    returns the dimensions that took a candidate."""
    for extent in candidates:
        trial = dict(sizes)
        trial.update({x: extent for x in dims})
        if fits(trial):
            return trial, list(dims)
    settled: List[Dim] = []
    for part in _split(dims, level):
        sizes, done = _settle(sizes, part, candidates, fits, level + 1)
        settled.extend(done)
    return sizes, settled


def shrink_sizes(original: List[Any], fits: Callable[[Dict[Dim, int]], bool]) -> Dict[Dim, int]:
    """The tiny case: every group at the smallest extent of TINY_EXTENTS that fits."""
    sizes = dimension_sizes(original)
    for extent, dims in extent_groups(original):
        sizes, _ = _settle(sizes, dims, [c for c in TINY_EXTENTS if c < extent], fits)
    return sizes


def widen_sizes(original: List[Any], tiny: Dict[Dim, int], fits: Callable[[Dict[Dim, int]], bool],
                last_extents: Tuple[int, ...] = LAST_AXIS_EXTENTS) -> Dict[Dim, int]:
    """The ragged case: the tiny case with the dimensions on the last two axes of each tensor
    widened, jointly per group: a group holding some tensor's last axis to the first of
    ``last_extents`` that fits, the others to the first of RAGGED_EXTENTS (each at most the
    group's original extent). Widening one group can let another widen (class indices need their
    class dimension first), so the groups go round again while some dimension takes an extent."""
    ranks = {k: len(_get(original, p).shape) for k, p in enumerate(_tensor_paths(original))}
    sizes = dict(tiny)
    widened: set = set()
    for _ in range(WIDEN_PASSES):
        progress = False
        for extent, dims in extent_groups(original):
            inner = [x for x in dims if x[1] >= ranks[x[0]] - 2 and x not in widened]
            if not inner:
                continue
            last = any(x[1] == ranks[x[0]] - 1 for x in inner)
            ladder: List[int] = []
            for c in (last_extents if last else RAGGED_EXTENTS):
                if min(c, extent) not in ladder:
                    ladder.append(min(c, extent))
            sizes, done = _settle(sizes, inner, ladder, fits)
            widened.update(done)
            progress = progress or bool(done)
        if not progress:
            break
    return sizes


def input_elements(original: List[Any], sizes: Dict[Dim, int]) -> int:
    total = 0
    for k, path in enumerate(_tensor_paths(original)):
        n = 1
        for d in range(_get(original, path).dim()):
            n *= sizes[(k, d)]
        total += n
    return total


# ---- the reference and the binding --------------------------------------------------------------------


def _forward(model: torch.nn.Module, args: List[Any]) -> List[Any]:
    with torch.no_grad():
        return flatten_outputs(model(*clone_args(args)))


def _fits(model: torch.nn.Module, init: List[Any], ir: Dict[str, Any], args: List[Any]) -> bool:
    """Forward runs and gives only non-empty tensors, and the sketch binds to these inputs."""
    try:
        outs = _forward(model, args)
    except Exception:  # noqa: BLE001 - any failure of the reference refuses the extent
        return False
    if not outs or any(isinstance(o, torch.Tensor) and o.numel() == 0 for o in outs):
        return False
    try:
        check_outputs(bind(ir, model, init, clone_args(args)), outs)
    except (BindError, SketchError, ArithmeticError, ValueError, TypeError):
        return False
    return True


def _to_numpy(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().copy()
    if isinstance(value, (list, tuple)):
        return [_to_numpy(v) for v in value]
    return value


def output_leaves(binding: Binding) -> Dict[int, torch.Tensor]:
    """forward's output leaves from the interpreted sketch tensors, as Binding.output_leaves()
    gives them but keeping 0-d leaves 0-d: that one goes through np.ascontiguousarray, which
    returns at least one dimension, so every scalar output (the losses, sum_all) would come back
    as [1] and fail the comparison by shape."""
    out: Dict[int, torch.Tensor] = {}
    for ob in binding.outputs:
        data = np.array(binding.tensors[ob.tensor].reshape(ob.shape), copy=True)
        t = torch.from_numpy(data)
        out[ob.leaf] = t.to(TORCH_DTYPES[ob.dtype]) if ob.dtype == "bf16" else t
    return out


def design_verdict(model: torch.nn.Module, args: List[Any], ref_out: List[Any], binding: Binding) -> str:
    """The interpreter's outputs against the reference's, by verify's rules (tolerances per dtype,
    the float64 rule for summation order): "ok", "ok (float64 rule)" or what differs."""
    leaves = output_leaves(binding)
    outs = [leaves.get(i) for i in range(len(ref_out))]
    result = compare_outputs(ref_out, outs, None, None, "shrunk inputs")
    if result.ok:
        return "ok"
    if result.tolerance_failures and not result.hard_failure:
        try:
            ref64 = _forward(copy.deepcopy(model).double(), to_double(args))
        except Exception:  # noqa: BLE001
            ref64 = []
        if fp64_rule_passes(ref_out, ref64, outs, None, None, result.tolerance_failures):
            return "ok (float64 rule)"
    names = {ob.leaf: ob.tensor for ob in binding.outputs}
    return f"{result.detail} (sketch tensors by output: {names})"


def run_case(model: torch.nn.Module, init: List[Any], ir: Dict[str, Any], args: List[Any],
             ladder: str) -> CaseResult:
    """Binds, interprets and compares with the reference on these inputs."""
    case = CaseResult(ladder, tensor_shapes(args), args=_to_numpy(args))
    try:
        ref_out = _forward(model, args)
    except Exception as exc:  # noqa: BLE001
        case.status, case.detail = "reference_error", f"the reference's forward failed: {exc}"
        return case
    try:
        binding = bind(ir, model, init, clone_args(args))
        check_outputs(binding, ref_out)
    except BindError as err:
        case.status, case.detail = "bind_error", f"the sketch does not bind: {err.message}"
        return case
    case.symbols = {s: int(binding.symbols[s]) for s in ir.get("symbols", [])}
    case.params = values.param_values(ir, binding.params, case.symbols)
    case.start = {k: v.copy() for k, v in binding.tensors.items()}
    t0 = time.monotonic()
    try:
        run(ir, binding.tensors, binding.symbols, binding.params, limits=INTERP_LIMITS)
    except SketchError as err:
        at = f" at sketch line {err.line}" if err.line is not None else ""
        case.status, case.detail = "interp_error", f"the interpreter rejected the sketch{at}: {err.message}"
        return case
    except SketchBudgetExceeded as exc:
        case.status, case.detail = "interp_budget", f"the interpretation is too long: {exc}"
        return case
    finally:
        case.interp_seconds = time.monotonic() - t0
    case.expected = dict(binding.tensors)
    case.design = design_verdict(model, args, ref_out, binding)
    return case


def prepare(op: str, reference_path: str, ir: Dict[str, Any], seed: int) -> OpCases:
    """Both cases of one operator (in a worker process)."""
    torch.set_num_threads(1)
    # PyTorch's performance notes (padding="same" with an even kernel copies its input) would
    # repeat for every extent tried
    warnings.simplefilter("ignore", UserWarning)
    result = OpCases(op)
    try:
        ref: Reference = Registry().load_reference(reference_path)
        model, init = build_reference(ref, seed, torch.device("cpu"))
        cases = draw_cases(ref, seed)
        original = list(cases[smallest_case(cases)].args)
    except HarnessError as err:
        result.error = f"the reference could not be built: {err.detail}"
        return result
    except Exception as exc:  # noqa: BLE001
        result.error = f"the reference could not be built: {type(exc).__name__}: {exc}"
        return result
    result.original = tensor_shapes(original)

    def fits(sizes: Dict[Dim, int]) -> bool:
        return _fits(model, init, ir, materialise(original, sizes))

    try:
        tiny = shrink_sizes(original, fits)
        result.cases.append(run_case(model, init, ir, materialise(original, tiny), "tiny"))
        ragged = widen_sizes(original, tiny, fits)
        if input_elements(original, ragged) > RAGGED_MAX_INPUT_ELEMENTS:
            ragged = widen_sizes(original, tiny, fits, RAGGED_EXTENTS)
        if ragged != tiny:
            result.cases.append(run_case(model, init, ir, materialise(original, ragged), "ragged"))
    except Exception:  # noqa: BLE001 - a fault here is the test's own; report it whole
        result.cases.append(CaseResult("shrinking", status="case_error", detail=traceback.format_exc(limit=6)))
    return result


def call_in_worker(args: Tuple[str, str, Dict[str, Any], int]) -> OpCases:
    return prepare(*args)

