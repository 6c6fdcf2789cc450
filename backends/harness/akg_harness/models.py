"""The reference Model (built here) against the candidate's ModelNew (built in its child), with identical weights."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, List, Optional

import torch
import torch.nn as nn

from .candidate import CandidateProcess, Judge
from .env import WorkerEnv
from .inputs import as_list, flatten_outputs
from .loading import Reference, call_user, file_key, require_file, sibling_key
from .protocol import BUILD_ERROR


@dataclass
class Contest:
    """The reference model (in this process) against the candidate (in its sandboxed child)."""
    reference: Reference
    kernel_path: str
    ref_model: nn.Module
    init_inputs: List[Any]
    child: CandidateProcess
    _ref64: Optional[nn.Module] = None

    def ref64(self) -> nn.Module:
        """A float64 copy of the reference model, made on first use."""
        if self._ref64 is None:
            self._ref64 = copy.deepcopy(self.ref_model).double()
        return self._ref64


def build_reference(ref: Reference, seed: int, device: torch.device) -> tuple:
    torch.manual_seed(seed)
    init = as_list(call_user("get_init_inputs()", "reference", ref.path, ref.get_init_inputs))
    torch.manual_seed(seed)
    model = call_user("Model(*get_init_inputs())", "reference", ref.path, ref.model_class, *init)
    return model.to(device), init


def kernel_key(path: str) -> Any:
    """Identity of a candidate: its file and the files next to it (a rebuilt library is another)."""
    return (path,) + file_key(path)[1:] + (sibling_key(path),)


def build_contest(ref: Reference, kernel_path: Any, seed: int, env: WorkerEnv, judge: Judge) -> Contest:
    """The reference built from ``seed``; the candidate checked statically, then loaded in its child
    (the same child as this candidate's last request when its files did not change) with
    ModelNew(*init) built from the same seed and every state entry of Model whose name and shape
    ModelNew has copied into it."""
    path = require_file(kernel_path, "kernel", "kernel", BUILD_ERROR)
    check_statically(path)
    ref_model, init = build_reference(ref, seed, env.device)
    child = judge.child_for(kernel_key(path), path, [ref.path], init, ref_model.state_dict(), seed)
    return Contest(ref, path, ref_model, init, child)


def reference_child(contest: Contest, seed: int, judge: Judge) -> CandidateProcess:
    """The child that times the reference: ``Model`` of the reference file with the weights of
    ``contest.ref_model`` (loaded again unless the file and the seed are those it holds)."""
    path = contest.reference.path
    key = ("reference", path) + file_key(path)[1:] + (seed,)
    return judge.reference_child(key, path, contest.init_inputs, contest.ref_model.state_dict(), seed)


def check_statically(path: str) -> None:
    """No library compute below Python: the glue and the native code (static_check.py)."""
    try:
        from . import static_check
    except ImportError:
        return
    static_check.raise_first(static_check.check_candidate(path))


def run_reference(ref: Reference, model: nn.Module, args: List[Any], env: WorkerEnv) -> List[Any]:
    out = call_user("Model.forward", "reference", ref.path, model, *args)
    if env.is_cuda:
        call_user("Model.forward (CUDA sync)", "reference", ref.path, torch.cuda.synchronize, env.device)
    return flatten_outputs(out)


def output_sizes(outs: List[Any]) -> List[int]:
    """Bytes of each output (0 for a non-tensor): what the judge reads of the kernel's outputs."""
    return [t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0 for t in outs]


def run_kernel_checked(contest: Contest, args: List[Any], expect: List[int], env: WorkerEnv,
                       roll: Optional[List[int]] = None) -> List[Any]:
    """One checked call of the candidate in its child: the outputs as they were when it returned."""
    result = contest.child.call([args], check=[0], expect=expect, rolls=[roll] if roll else None, poison=True)
    outs = result.outs[0]
    if env.device.type != "cpu":
        outs = [t.to(env.device) if isinstance(t, torch.Tensor) else t for t in outs]
    return outs
