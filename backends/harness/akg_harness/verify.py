"""The verify request: does the kernel compute the reference's function? (README.md, "verify")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Any, Dict, List, Optional

import torch

from .compare import REDUCTION_MIN, compare_outputs, fp64_rule_passes, reduction_sizes, tolerance_for
from .candidate import Judge
from .env import WorkerEnv
from .inputs import (SEED_STRIDE, Case, clone_args, count_nonfinite, draw_cases, dtype_name,
                     heavy_tailed_like, precision_like, to_double)
from .loading import Registry
from .models import Contest, build_contest, output_sizes, run_kernel_checked, run_reference
from .protocol import NUMERICAL_MISMATCH, RUNTIME_ERROR, HarnessError

MAX_TRIALS = 1000
# the last trial exposes lost precision when there are at least this many
PRECISION_MIN_TRIALS = 3


def optional_float(req: Dict[str, Any], key: str) -> Optional[float]:
    value = req.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise HarnessError(RUNTIME_ERROR, f"request field {key!r} must be a non-negative number or null")
    return float(value)


def int_field(req: Dict[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = req.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise HarnessError(RUNTIME_ERROR, f"request field {key!r} must be an integer in [{low}, {high}]")
    return value


@dataclass
class Tally:
    trials: int = 0
    cases: int = 0
    seeds: List[int] = field(default_factory=list)
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    rel_l2_err: float = 0.0
    worst_trial: int = 0
    worst_case: int = 0
    fp64_rule: bool = False
    compared: int = 0
    heavy_tailed: List[List[int]] = field(default_factory=list)
    precision: List[List[int]] = field(default_factory=list)
    dtype: Optional[str] = None
    atol: Optional[float] = None
    rtol: Optional[float] = None

    def fields(self) -> Dict[str, Any]:
        return {
            "trials": self.trials, "cases": self.cases, "seeds": self.seeds,
            "max_abs_err": self.max_abs_err, "max_rel_err": self.max_rel_err, "rel_l2_err": self.rel_l2_err,
            "worst_trial": self.worst_trial, "worst_case": self.worst_case,
            "atol": self.atol, "rtol": self.rtol, "dtype": self.dtype, "fp64_rule": self.fp64_rule,
            "heavy_tailed": self.heavy_tailed, "precision": self.precision,
        }


class VerifyFailure(Exception):
    """A failed verification: the error plus the tally so far."""

    def __init__(self, error: HarnessError, tally: Tally, trial: Optional[int], case: Optional[int]) -> None:
        super().__init__(error.detail)
        self.error = error
        self.tally = tally
        self.trial = trial
        self.case = case

    def extra(self) -> Dict[str, Any]:
        out = self.tally.fields()
        if self.trial is not None:
            out["trial"] = self.trial
            out["case"] = self.case
        return out


def _try_inputs(pair: Contest, original: List[Any], replaced: Optional[List[Any]], env: WorkerEnv) -> Optional[tuple]:
    """(replaced, its reference outputs) when the reference takes ``replaced`` without more
    non-finite outputs than on ``original``; else None."""
    if replaced is None:
        return None
    try:
        out = run_reference(pair.reference, pair.ref_model, clone_args(replaced, env.device), env)
    except HarnessError:
        return None
    bad = count_nonfinite(out)
    if bad == 0:
        return replaced, out
    orig_out = run_reference(pair.reference, pair.ref_model, clone_args(original, env.device), env)
    return (replaced, out) if bad <= count_nonfinite(orig_out) else None


def _reference_outputs(pair: Contest, case: Case, trial: int, trials: int, env: WorkerEnv) -> tuple:
    """Chooses the inputs of a case and returns (inputs on CPU, reference outputs): the draw in
    trial 0; from trial 1 on heavy-tailed where the draw was non-negative; in the last trial (of
    three or more), for a reference that reduces (sums, means, losses: an output at least
    REDUCTION_MIN times smaller than its largest input), precision-exposing (1 + x/256), when the
    reference allows each."""
    original = case.args
    if trials >= PRECISION_MIN_TRIALS and trial == trials - 1:
        orig_out = run_reference(pair.reference, pair.ref_model, clone_args(original, env.device), env)
        if max(reduction_sizes(original, orig_out) or [1]) >= REDUCTION_MIN:
            chosen = _try_inputs(pair, original, precision_like(original), env)
            if chosen is not None:
                case.precision = True
                return chosen
    if trial > 0:
        generator = torch.Generator()
        generator.manual_seed(case_seed_for_tail(trial, case.index))
        chosen = _try_inputs(pair, original, heavy_tailed_like(original, generator), env)
        if chosen is not None:
            case.heavy_tailed = True
            return chosen
    return original, run_reference(pair.reference, pair.ref_model, clone_args(original, env.device), env)


def case_seed_for_tail(trial: int, case_index: int) -> int:
    return 7_777_777 + trial * SEED_STRIDE + case_index


def _run_case(pair: Contest, case: Case, trial: int, trials: int, seed: int, atol: Optional[float],
              rtol: Optional[float], env: WorkerEnv, tally: Tally) -> None:
    where = f"trial {trial} (seed {seed}), case {case.index}"
    args, ref_out = _reference_outputs(pair, case, trial, trials, env)
    try:
        out = run_kernel_checked(pair, args, output_sizes(ref_out), env)
    except HarnessError as err:
        if err.where == "kernel" and "in place" in err.detail:
            err.detail = f"{err.detail} ({where})"
        raise
    if tally.dtype is None:
        first = next((t for t in ref_out if isinstance(t, torch.Tensor)), None)
        if first is not None:
            tally.dtype = dtype_name(first.dtype)
            tally.atol, tally.rtol = tolerance_for(first.dtype, atol, rtol)
    reduced = reduction_sizes(args, ref_out)
    result = compare_outputs(ref_out, out, atol, rtol, where, reduced)
    stats = result.stats
    if stats.max_abs_err > tally.max_abs_err or tally.compared == 0:
        tally.worst_trial, tally.worst_case = trial, case.index
    tally.compared += 1
    tally.max_abs_err = max(tally.max_abs_err, stats.max_abs_err)
    tally.max_rel_err = max(tally.max_rel_err, stats.max_rel_err)
    tally.rel_l2_err = max(tally.rel_l2_err, stats.rel_l2_err)
    if result.ok:
        return
    if result.error_class == NUMERICAL_MISMATCH and result.tolerance_failures and not result.hard_failure:
        try:
            ref64 = run_reference(pair.reference, pair.ref64(), to_double(clone_args(args, env.device)), env)
        except HarnessError:
            ref64 = []
        if fp64_rule_passes(ref_out, ref64, out, atol, rtol, result.tolerance_failures, reduced):
            tally.fp64_rule = True
            return
    raise HarnessError(result.error_class or NUMERICAL_MISMATCH, result.detail or "outputs differ", where="kernel")


def run_verify(req: Dict[str, Any], registry: Registry, env: WorkerEnv, judge: Judge,
               progress: Optional[Callable[[Dict[str, Any]], None]] = None) -> Dict[str, Any]:
    """Verifies req's kernel (run in its sandboxed child); after each trial passes, progress (if
    given) receives {"op": "verify", "trial": k, "trials": n} (1-based k)."""
    ref = registry.load_reference(req.get("reference"))
    trials = int_field(req, "trials", 5, 1, MAX_TRIALS)
    seed = int_field(req, "seed", 0, 0, 2**62)
    atol, rtol = optional_float(req, "atol"), optional_float(req, "rtol")
    tally = Tally()
    trial: Optional[int] = None
    case_index: Optional[int] = None
    try:
        pair = build_contest(ref, req.get("kernel"), seed, env, judge)
        for trial in range(trials):
            trial_seed = seed + SEED_STRIDE * trial
            tally.seeds.append(trial_seed)
            cases = draw_cases(ref, trial_seed)
            for case in cases:
                case_index = case.index
                _run_case(pair, case, trial, trials, trial_seed, atol, rtol, env, tally)
                if case.heavy_tailed:
                    tally.heavy_tailed.append([trial, case.index])
                if case.precision:
                    tally.precision.append([trial, case.index])
            tally.trials = trial + 1
            tally.cases = len(cases)
            case_index = None
            if progress is not None:
                progress({"op": "verify", "trial": trial + 1, "trials": trials})
    except HarnessError as err:
        judge.drop_current()  # a failed candidate is not profiled: its child goes now
        raise VerifyFailure(err, tally, trial, case_index) from None
    if tally.atol is None:
        tally.atol, tally.rtol = atol, rtol
    return {"ok": True, **tally.fields()}
