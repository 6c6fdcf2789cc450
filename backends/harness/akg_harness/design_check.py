"""The design_check request: does a sketch compute the reference's function? (README.md, "design_check").

Runs the reference and the sketch's reference interpreter on the same fresh inputs, drawn as
verify draws them, on the smallest input case, and compares the outputs by verify's rules. A
design that fails is the Designer's error (class design_error), found before any code is written.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

import torch

from .compare import compare_outputs, fp64_rule_passes
from .env import WorkerEnv
from .inputs import (SEED_STRIDE, Case, clone_args, count_nonfinite, draw_cases, flatten_outputs,
                     heavy_tailed_like, to_double)
from .loading import Reference, Registry, call_user
from .models import build_reference
from .protocol import DESIGN_ERROR, RUNTIME_ERROR, HarnessError
from .sketch_bind import BindError, Binding, bind, check_outputs
from .sketch_interp import Limits, SketchBudgetExceeded, SketchError, run
from .verify import VerifyFailure, case_seed_for_tail, int_field

MAX_DESIGN_TRIALS = 100
# The interpreter's budget per request (all trials together for the time); past it the check is
# skipped, not failed. Defaults sized so that a check stays within seconds on small cases.
DEFAULT_MAX_STATEMENTS = 1_000_000
DEFAULT_MAX_ELEMENTS = 500_000_000
DEFAULT_MAX_SECONDS = 60.0


def _input_elements(args: List[Any]) -> int:
    total = 0
    for a in args:
        if isinstance(a, torch.Tensor):
            total += a.numel()
        elif isinstance(a, (list, tuple)):
            total += _input_elements(list(a))
    return total


def smallest_case(cases: List[Case]) -> int:
    """Index of the case with the fewest input elements (the first among equals)."""
    sizes = [_input_elements(c.args) for c in cases]
    return sizes.index(min(sizes))


def _forward(ref: Reference, model: torch.nn.Module, args: List[Any]) -> List[Any]:
    return flatten_outputs(call_user("Model.forward", "reference", ref.path, model, *args))


def _case_inputs(ref: Reference, model: torch.nn.Module, case: Case, trial: int) -> Tuple[List[Any], List[Any]]:
    """The inputs verify would use for this trial and case (heavy-tailed from trial 1 on, when the
    reference allows) and the reference's outputs on them."""
    original = case.args
    if trial > 0:
        generator = torch.Generator()
        generator.manual_seed(case_seed_for_tail(trial, case.index))
        heavy = heavy_tailed_like(original, generator)
        if heavy is not None:
            try:
                heavy_out: Optional[List[Any]] = _forward(ref, model, clone_args(heavy))
            except HarnessError:
                heavy_out = None
            if heavy_out is not None:
                bad = count_nonfinite(heavy_out)
                if bad == 0:
                    return heavy, heavy_out
                orig_out = _forward(ref, model, clone_args(original))
                if bad <= count_nonfinite(orig_out):
                    return heavy, heavy_out
                return original, orig_out
    return original, _forward(ref, model, clone_args(original))


class DesignFailure(Exception):
    """A design error with the fields of its answer."""

    def __init__(self, detail: str, extra: Dict[str, Any]) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


@dataclass
class _Tally:
    trials: int = 0
    seeds: List[int] = field(default_factory=list)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    fp64_rule: bool = False

    def fields(self, case: int) -> Dict[str, Any]:
        return {"trials": self.trials, "case": case, "seeds": self.seeds, "max_abs_err": self.max_abs_err,
                "max_rel_err": self.max_rel_err, "fp64_rule": self.fp64_rule}


def _limits(req: Dict[str, Any]) -> Limits:
    statements = int_field(req, "max_statements", DEFAULT_MAX_STATEMENTS, 1, 10**9)
    seconds = req.get("max_seconds", DEFAULT_MAX_SECONDS)
    if seconds is None:
        seconds = DEFAULT_MAX_SECONDS
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0:
        raise HarnessError(RUNTIME_ERROR, "request field 'max_seconds' must be a positive number")
    return Limits(max_statements=statements, max_elements=DEFAULT_MAX_ELEMENTS, max_seconds=float(seconds))


def _interpret(ir: Dict[str, Any], binding: Binding, limits: Limits, where: str) -> None:
    try:
        run(ir, binding.tensors, binding.symbols, binding.params, limits=limits)
    except SketchError as err:
        extra: Dict[str, Any] = {"where": "sketch"}
        if err.line is not None:
            extra["line"] = err.line
        at = f" at sketch line {err.line}" if err.line is not None else ""
        raise DesignFailure(f"the sketch's interpretation failed{at} ({where}): {err.message}", extra) from None


def _compare(ref: Reference, model: torch.nn.Module, args: List[Any], ref_out: List[Any], binding: Binding,
             where: str, tally: _Tally) -> None:
    leaves = binding.output_leaves()
    outs = [leaves[i] for i in range(len(ref_out))]
    result = compare_outputs(ref_out, outs, None, None, where)
    tally.max_abs_err = max(tally.max_abs_err, result.stats.max_abs_err)
    tally.max_rel_err = max(tally.max_rel_err, result.stats.max_rel_err)
    if result.ok:
        return
    if result.tolerance_failures and not result.hard_failure:
        try:
            ref64 = _forward(ref, copy.deepcopy(model).double(), to_double(clone_args(args)))
        except HarnessError:
            ref64 = []
        if fp64_rule_passes(ref_out, ref64, outs, None, None, result.tolerance_failures):
            tally.fp64_rule = True
            return
    names = {ob.leaf: ob.tensor for ob in binding.outputs}
    failing = result.tolerance_failures[0] if result.tolerance_failures else None
    prefix = f"sketch tensor '{names[failing]}': " if failing is not None and failing in names else ""
    if not prefix:
        for leaf, name in names.items():
            if (result.detail or "").startswith(f"output {leaf}"):
                prefix = f"sketch tensor '{name}': "
    raise DesignFailure(f"the design computes another function: {prefix}{result.detail}", {"where": "sketch"})


def _trial(ref: Reference, ir: Dict[str, Any], model: torch.nn.Module, init: List[Any], case: Case, trial: int,
           where: str, limits: Limits, tally: _Tally) -> None:
    """One trial: the inputs verify would use, the reference, the binding, the interpreter, the comparison."""
    args, ref_out = _case_inputs(ref, model, case, trial)
    try:
        binding = bind(ir, model, init, clone_args(args))
        check_outputs(binding, ref_out)
    except BindError as err:
        extra = {"where": "sketch", **({"line": err.line} if err.line else {})}
        raise DesignFailure(f"the sketch's binding does not fit the task: {err.message}", extra) from None
    _interpret(ir, binding, limits, where)
    _compare(ref, model, args, ref_out, binding, where, tally)


def run_design_check(req: Dict[str, Any], registry: Registry, env: WorkerEnv) -> Dict[str, Any]:
    """Checks req's sketch (its JSON form) against req's reference; see README.md. The check runs
    on the CPU whatever the worker's device (``env`` is not used)."""
    ref = registry.load_reference(req.get("reference"))
    ir = req.get("sketch")
    if not isinstance(ir, dict) or ir.get("format") != "akg-sketch":
        raise HarnessError(RUNTIME_ERROR, "request field 'sketch' must be the JSON form of a sketch "
                                          "(akg_cli sketch json)")
    trials = int_field(req, "trials", 2, 1, MAX_DESIGN_TRIALS)
    seed = int_field(req, "seed", 0, 0, 2**62)
    limits = _limits(req)
    deadline = time.monotonic() + (limits.max_seconds or DEFAULT_MAX_SECONDS)
    model, init = build_reference(ref, seed, torch.device("cpu"))
    tally = _Tally()
    case_index = 0
    try:
        cases = draw_cases(ref, seed)
        case_index = smallest_case(cases)
        for trial in range(trials):
            trial_seed = seed + SEED_STRIDE * trial
            tally.seeds.append(trial_seed)
            if trial > 0:
                cases = draw_cases(ref, trial_seed)
            left = max(0.001, deadline - time.monotonic())
            where = f"trial {trial} (seed {trial_seed}), case {case_index}"
            _trial(ref, ir, model, init, cases[case_index], trial, where,
                   Limits(limits.max_statements, limits.max_elements, left), tally)
            tally.trials = trial + 1
    except SketchBudgetExceeded as exc:
        return {"ok": True, "skipped": f"the sketch's interpretation is too long for a check: {exc}",
                **tally.fields(case_index)}
    except DesignFailure as failure:
        err = HarnessError(DESIGN_ERROR, failure.detail, where=failure.extra.get("where"),
                           line=failure.extra.get("line"))
        raise DesignCheckError(err, {**tally.fields(case_index), "trial": tally.trials}) from None
    return {"ok": True, **tally.fields(case_index)}


class DesignCheckError(VerifyFailure):
    """A failed design check: the error plus the fields covering what ran (answered as a failed
    verification is)."""

    def __init__(self, error: HarnessError, extra: Dict[str, Any]) -> None:
        Exception.__init__(self, error.detail)
        self.error = error
        self._extra = extra

    def extra(self) -> Dict[str, Any]:
        return self._extra
