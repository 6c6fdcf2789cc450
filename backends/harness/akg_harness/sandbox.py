"""The guard around ModelNew.forward: output poisoning and the forbidden-call check.

While the kernel's forward runs, a torch function mode sees every torch call it makes:

* tensors made by uninitialised factories (torch.empty, empty_like, empty_strided, Tensor.new_empty,
  Tensor.new_empty_strided) are filled with NaN (floating), all-ones bits (signed integers: -1;
  unsigned: the largest value) or True (bool) before the kernel gets them, so an element the
  kernel forgets to write cannot pass by luck;
* any call that is not allocation, shape, view, copy or dtype/device movement is forbidden: the
  kernel must compute the result itself (native code through ctypes, a Triton or CUDA launch, which
  torch does not see). Calls made from inside the Triton runtime (frames of modules named
  ``triton.*``: its launcher, autotuner) are not the kernel's and are let through.
* calling into the reference file (an instance of the reference Model) is forbidden.

The mode only sees calls made directly by the kernel: torch disables the mode while a call it
intercepted runs, so a permitted call's own internals are not inspected.
"""

from __future__ import annotations

import os
import sys
from types import FrameType, ModuleType
from typing import Any, Callable, Dict, FrozenSet, Iterable, Optional, Set

import torch
import torch.nn as nn
from torch.overrides import TorchFunctionMode

from .protocol import FORBIDDEN, HarnessError

POISON_FACTORIES: FrozenSet[str] = frozenset({
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
})

# Short names of torch functions and Tensor methods a kernel's forward may call.
ALLOWED_CALLS: FrozenSet[str] = frozenset({
    # allocation
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided",
    "zeros", "zeros_like", "new_zeros", "ones", "ones_like", "new_ones",
    "full", "full_like", "new_full", "zero_", "fill_", "new_tensor", "tensor", "as_tensor",
    # shape and layout queries
    "size", "stride", "dim", "ndimension", "numel", "nelement", "is_contiguous",
    "data_ptr", "storage_offset", "element_size", "get_device", "is_floating_point",
    "is_complex", "is_pinned", "is_tensor", "untyped_storage", "storage", "__len__",
    "item", "tolist", "__repr__", "__format__", "__str__", "__hash__", "__bool__", "__index__",
    "__int__", "__float__", "__dlpack__", "__dlpack_device__", "__cuda_array_interface__",
    # views
    "view", "view_as", "reshape", "reshape_as", "flatten", "unflatten", "unsqueeze", "squeeze",
    "expand", "expand_as", "broadcast_to", "permute", "transpose", "t", "movedim", "swapaxes",
    "narrow", "select", "split", "chunk", "unbind", "as_strided", "unfold", "detach",
    "__getitem__", "__setitem__", "contiguous", "requires_grad_", "type_as",
    # copies, dtype and device movement
    "to", "cuda", "cpu", "clone", "copy_", "pin_memory", "float", "double", "half",
    "bfloat16", "int", "long", "short", "char", "byte", "bool", "type",
})

# Frames whose module is the Triton runtime (launcher, autotuner) call torch on their own behalf.
_LIBRARY_MODULE_PREFIXES = ("triton.",)


def call_name(func: Callable[..., Any]) -> str:
    """A readable name for an intercepted call: "torch.softmax", "Tensor.relu", ..."""
    name = getattr(func, "__name__", None) or repr(func)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        return "Tensor." + str(getattr(owner, "__name__", "?"))
    qualname = getattr(func, "__qualname__", "") or ""
    owner_class = qualname.split(".")[0] if "." in qualname else ""
    if getattr(func, "__objclass__", None) is not None or owner_class in ("Tensor", "_TensorBase", "TensorBase"):
        return "Tensor." + name
    module = getattr(func, "__module__", None)
    if not module or module.startswith("torch._C"):
        module = "torch"
    return f"{module}.{name}"


def short_name(func: Callable[..., Any]) -> str:
    name = getattr(func, "__name__", None) or ""
    return "__get__" if name == "__get__" else name


def _poison(result: Any) -> None:
    if not isinstance(result, torch.Tensor) or result.numel() == 0 or result.layout != torch.strided:
        return
    dtype = result.dtype
    if dtype.is_floating_point or dtype.is_complex:
        result.fill_(float("nan"))
    elif dtype == torch.bool:
        result.fill_(True)
    elif dtype == torch.uint8:
        result.fill_(255)
    else:
        result.fill_(-1)  # every bit set: also NaN when read back as a float type


class KernelGuard(TorchFunctionMode):
    """Poisons fresh outputs and records the first forbidden call (see the module docstring).

    The violation is recorded before it is raised, so a kernel that catches the exception still fails.
    """

    def __init__(self, reference_path: str, poison: bool = True) -> None:
        super().__init__()
        self.reference_real = os.path.realpath(reference_path)
        self.poison = poison
        self.violation: Optional[str] = None
        self._file_kinds: Dict[str, str] = {}

    def _frame_kind(self, frame: FrameType) -> str:
        module_name = str(frame.f_globals.get("__name__", ""))
        if module_name == "triton" or module_name.startswith(_LIBRARY_MODULE_PREFIXES):
            return "triton"
        filename = frame.f_code.co_filename
        kind = self._file_kinds.get(filename)
        if kind is None:
            if os.path.realpath(filename) == self.reference_real:
                kind = "reference"
            else:
                kind = "other"
            self._file_kinds[filename] = kind
        return kind

    def _caller_kind(self) -> str:
        frame: Optional[FrameType] = sys._getframe(2)
        seen_reference = False
        while frame is not None:
            kind = self._frame_kind(frame)
            if kind == "triton":
                return "triton"
            if kind == "reference":
                seen_reference = True
            frame = frame.f_back
        return "reference" if seen_reference else "kernel"

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        name = short_name(func)
        if name != "__get__" and name not in ALLOWED_CALLS:
            caller = self._caller_kind()
            if caller == "reference":
                self._record("ModelNew.forward called the reference Model: the kernel must compute the result itself")
            elif caller == "kernel":
                self._record(f"ModelNew.forward called {call_name(func)}: the kernel must compute the result itself")
        result = func(*args, **kwargs)
        if self.poison and name in POISON_FACTORIES:
            _poison(result)
        return result

    def _record(self, detail: str) -> None:
        if self.violation is None:
            self.violation = detail
        raise HarnessError(FORBIDDEN, detail, where="kernel")


def _defined_in(cls: type, real_path: str) -> bool:
    """True when ``cls`` comes from the file ``real_path``, however that file was imported."""
    module: Optional[ModuleType] = sys.modules.get(getattr(cls, "__module__", "") or "")
    path = getattr(module, "__file__", None) if module is not None else None
    if path and os.path.realpath(path) == real_path:
        return True
    for member in vars(cls).values():
        code = getattr(member, "__code__", None)
        if code is not None and os.path.realpath(code.co_filename) == real_path:
            return True
    return False


def _is_reference_object(obj: Any, reference_classes: Set[type], real_path: str) -> bool:
    if not isinstance(obj, nn.Module):
        return False
    return any(c in reference_classes or _defined_in(c, real_path) for c in type(obj).__mro__ if c is not nn.Module)


def find_reference_holding(model: nn.Module, reference_model_class: type, reference_path: str) -> Optional[str]:
    """Detail text when ModelNew is, inherits from or holds an instance of the reference Model."""
    real = os.path.realpath(reference_path)
    classes = {reference_model_class}
    if _is_reference_object(model, classes, real):
        return "ModelNew is derived from the reference Model: the kernel must compute the result itself"
    modules = list(model.named_modules())
    for mod_name, module in modules:
        if module is not model and _is_reference_object(module, classes, real):
            return f"ModelNew holds an instance of the reference Model (submodule {mod_name!r}): " \
                   "the kernel must compute the result itself"
    for mod_name, module in modules:
        for attr, value in vars(module).items():
            if attr == "_modules":
                continue
            for item in _members(value):
                if _is_reference_object(item, classes, real):
                    name = f"{mod_name}.{attr}" if mod_name else attr
                    return f"ModelNew holds an instance of the reference Model (attribute {name!r}): " \
                           "the kernel must compute the result itself"
    return None


def _members(value: Any) -> Iterable[Any]:
    if isinstance(value, (list, tuple, set)):
        return list(value)
    if isinstance(value, dict):
        return list(value.values())
    return [value]
