"""The torch calls a kernel's Python glue may make (README.md, verify rule 8).

The glue only checks inputs, allocates outputs, takes views and pointers, and launches the kernel's
own code (native code through ctypes, a Triton or CUDA launch): anything that computes is the
kernel's job. The static check (static_check.py, static_names.py, static_python.py) refuses every
torch function or Tensor method outside this list before a candidate runs; the candidate itself runs
in its own sandboxed child (candidate.py, jail.py), never in the judge.
"""

from __future__ import annotations

from typing import FrozenSet

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
    "item", "__repr__", "__format__", "__str__", "__hash__", "__bool__", "__index__",
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
