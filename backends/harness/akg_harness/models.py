"""Building the reference Model and the kernel's ModelNew with identical weights, and calling them."""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, List, Optional

import torch
import torch.nn as nn

from .env import WorkerEnv
from .inputs import as_list, flatten_outputs
from .loading import Kernel, Reference, call_user
from .protocol import FORBIDDEN, HarnessError
from .sandbox import KernelGuard, find_reference_holding


@dataclass
class ModelPair:
    reference: Reference
    kernel: Kernel
    ref_model: nn.Module
    kernel_model: nn.Module
    init_inputs: List[Any]
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


def build_pair(ref: Reference, kernel: Kernel, seed: int, env: WorkerEnv) -> ModelPair:
    """Both models from the same seed; Model's state copied into ModelNew where names and shapes match."""
    ref_model, init = build_reference(ref, seed, env.device)
    torch.manual_seed(seed)
    kernel_model = call_user("ModelNew(*get_init_inputs())", "kernel", kernel.path, kernel.model_class, *init)
    holding = find_reference_holding(kernel_model, ref.model_class, ref.path)
    if holding is not None:
        raise HarnessError(FORBIDDEN, holding, where="kernel")
    kernel_model = kernel_model.to(env.device)
    own = kernel_model.state_dict()
    shared = {k: v for k, v in ref_model.state_dict().items() if k in own and own[k].shape == v.shape}
    kernel_model.load_state_dict(shared, strict=False)
    return ModelPair(ref, kernel, ref_model, kernel_model, init)


def run_reference(pair_or_ref: Reference, model: nn.Module, args: List[Any], env: WorkerEnv) -> List[Any]:
    out = call_user("Model.forward", "reference", pair_or_ref.path, model, *args)
    if env.is_cuda:
        call_user("Model.forward (CUDA sync)", "reference", pair_or_ref.path, torch.cuda.synchronize, env.device)
    return flatten_outputs(out)


def run_kernel_guarded(pair: ModelPair, args: List[Any], env: WorkerEnv) -> List[Any]:
    """Calls ModelNew.forward under the guard; forbidden calls win over whatever the kernel did next."""
    guard = KernelGuard(pair.reference.path)
    try:
        with guard:
            out = call_user("ModelNew.forward", "kernel", pair.kernel.path, pair.kernel_model, *args)
        if env.is_cuda:
            call_user("ModelNew.forward (CUDA sync)", "kernel", pair.kernel.path, torch.cuda.synchronize, env.device)
    except HarnessError:
        if guard.violation is not None:
            raise HarnessError(FORBIDDEN, guard.violation, where="kernel") from None
        raise
    if guard.violation is not None:
        raise HarnessError(FORBIDDEN, guard.violation, where="kernel")
    return flatten_outputs(out)
