"""The words of the static check (static_check.py): which imports, library names, builtins and
attributes a candidate's Python may use, and the shape of a finding.

Names are qualified through the import aliases ("torch.nn.functional.relu"); ``is_module`` tells the
namespaces (usable only as the base of an attribute) and ``library_rule`` says whether a library
name may be used in a kind of code: ``module``/``class``/``function`` (the glue), ``ctor`` (an
nn.Module's constructor, which may build weights) or ``triton`` (a ``@triton.jit`` body).
"""

from __future__ import annotations

import inspect
import math
import os
import re
import types
import typing
from typing import List, Optional, Set, Tuple

import torch

from .sandbox import ALLOWED_CALLS


def finding(folder: str, file: str, line: Optional[int], construct: str, detail: str,
            error_class: Optional[str] = None) -> dict:
    """One finding (the shape check_candidate documents); ``file`` is relative to ``folder``."""
    out = {"file": file, "line": line, "construct": construct, "detail": detail,
           "path": os.path.join(folder, file)}
    if error_class:
        out["class"] = error_class
    return out


REASON_COMPUTE = ("the kernel must compute its result itself (native code through ctypes, or a Triton "
                  "launch); torch may only allocate, view and copy tensors (the allowed calls are listed "
                  "in the harness README, rule 8)")
ALLOWED_IMPORTS = frozenset({"ctypes", "os", "os.path", "math", "typing", "functools", "torch", "torch.nn",
                             "triton", "triton.language"})
IMPORTS_TEXT = ("a kernel may import only ctypes, os, math, typing, functools, torch, torch.nn, triton, "
                "triton.language and the Python files beside it")
# Namespaces that may appear only as the base of an attribute.
MODULES = frozenset({"torch", "torch.nn", "torch.nn.init", "torch.cuda", "ctypes", "ctypes.cdll", "os",
                     "os.path", "os.environ", "math", "typing", "functools", "triton", "triton.language"})

# torch.X the glue may use: the allowed calls (but tolist), dtypes, and a few types and queries.
TORCH_DTYPES = frozenset(n for n in dir(torch) if isinstance(getattr(torch, n, None), torch.dtype))
TORCH_TOP = frozenset(
    {n for n in ALLOWED_CALLS if not n.startswith("__") and n != "tolist"
     and not isinstance(getattr(torch, n, None), types.ModuleType)}
    | TORCH_DTYPES
    | {"dtype", "device", "Tensor", "Size", "no_grad", "finfo", "iinfo", "strided", "contiguous_format",
       "channels_last", "channels_last_3d", "preserve_format"})
# torch.nn.X and torch.cuda.X the glue may use.
TORCH_NN_TOP = frozenset({"Module", "Parameter", "ModuleList"})
TORCH_CUDA = frozenset({"is_available", "current_device", "current_stream", "synchronize", "device_count", "device",
                        "get_device_capability", "get_device_properties", "get_device_name"})
# Constructors only: torch's tensor operators (weights may be drawn and shaped there).
TORCH_CTOR = frozenset({n for n in dir(torch._C._VariableFunctions) if not n.startswith("_")}
                       - {"from_file", "from_numpy"}) | {"manual_seed"}
NN_CLASSES = frozenset(n for n in dir(torch.nn) if isinstance(getattr(torch.nn, n, None), type)
                       and issubclass(getattr(torch.nn, n), (torch.nn.Module, torch.nn.Parameter)))
RANDOM_FACTORIES = frozenset({"rand", "randn", "randint", "rand_like", "randn_like", "randint_like",
                              "randperm", "normal"})

CTYPES_OK = frozenset({
    "c_void_p", "c_char_p", "c_wchar_p", "c_bool", "c_char", "c_wchar", "c_byte", "c_ubyte", "c_short",
    "c_ushort", "c_int", "c_uint", "c_long", "c_ulong", "c_longlong", "c_ulonglong", "c_int8", "c_int16",
    "c_int32", "c_int64", "c_uint8", "c_uint16", "c_uint32", "c_uint64", "c_size_t", "c_ssize_t", "c_float",
    "c_double", "c_longdouble", "POINTER", "pointer", "byref", "sizeof", "alignment", "Structure", "Union",
    "Array", "RTLD_GLOBAL", "RTLD_LOCAL", "DEFAULT_MODE", "ArgumentError", "create_string_buffer", "get_errno"})
CTYPES_LOADERS = frozenset({"ctypes.CDLL", "ctypes.cdll.LoadLibrary"})
# Why a ctypes name is refused, for the ones a kernel is likely to try.
CTYPES_WHY = {
    "pythonapi": "it calls the Python interpreter's C API", "PyDLL": "it calls the Python interpreter's C API",
    "pydll": "it calls the Python interpreter's C API", "py_object": "it hands Python objects to C",
    "cast": "it makes pointers of anything", "memmove": "it copies raw memory",
    "memset": "it writes raw memory", "string_at": "it reads raw memory", "wstring_at": "it reads raw memory",
    "addressof": "it exposes raw addresses", "CFUNCTYPE": "it turns Python callables into C functions",
    "PYFUNCTYPE": "it turns Python callables into C functions", "util": "it looks libraries up by name",
    "cdll": "it loads libraries by name", "LibraryLoader": "it loads libraries by name",
    "_dlopen": "it loads libraries by name",
}
OS_OK = frozenset({"os.path.join", "os.path.dirname", "os.path.abspath", "os.path.realpath",
                   "os.path.basename", "os.path.normpath", "os.path.exists", "os.path.isfile",
                   "os.path.isdir", "os.path.splitext", "os.path.split", "os.path.sep", "os.sep",
                   "os.getenv", "os.environ.get", "os.cpu_count"})
# math and typing: their public names that are not modules (typing.sys would reach sys.modules).
PLAIN_MODULE_NAMES = {m.__name__: frozenset(n for n in dir(m) if not n.startswith("_")
                                            and not isinstance(getattr(m, n), types.ModuleType))
                      for m in (math, typing)}
# The parts of os, functools and triton the glue may use; TL_GLUE: triton.language outside @triton.jit.
FUNCTOOLS_OK = frozenset({"lru_cache", "cache", "partial", "reduce", "wraps", "cached_property"})
TRITON_OK = frozenset({"jit", "autotune", "heuristics", "Config", "cdiv", "next_power_of_2"})
TL_GLUE = re.compile(r"^(constexpr|dtype|int1|u?int(8|16|32|64)|float(16|32|64)|bfloat16|float8\w*)$")

FORBIDDEN_BUILTINS = {
    "exec": "running code made at run time is refused: the check must see all the code; write it in the file",
    "eval": "running code made at run time is refused: the check must see all the code; write it in the file",
    "compile": "running code made at run time is refused: the check must see all the code; write it in the file",
    "__import__": "importing by a computed name is refused: use an import statement of an allowed module",
    "globals": "reaching a namespace as a dictionary is refused: use the names themselves",
    "locals": "reaching a namespace as a dictionary is refused: use the names themselves",
    "vars": "reaching a namespace as a dictionary is refused: use the names themselves",
    "open": "opening files is refused: a kernel gets its inputs as arguments and returns its outputs",
    "breakpoint": "interactive calls are refused: a kernel runs without a terminal",
    "input": "interactive calls are refused: a kernel runs without a terminal",
}
# getattr with a literal name is the attribute it spells; these may only be called, never passed on.
ATTR_BUILTINS = frozenset({"getattr", "setattr", "delattr"})
# Builtins that compute through a tensor's operators when given one.
TENSOR_BUILTINS = frozenset({"abs", "sum", "min", "max", "round", "pow", "divmod", "sorted", "reversed",
                             "any", "all"})
# Special names a kernel may use, and the special methods it may define (none hooks torch or lookup).
DUNDER_ATTR_OK = frozenset({"__file__", "__init__", "__name__"})
DUNDER_NAME_OK = frozenset({"__file__", "__name__", "__all__", "__slots__", "__doc__"})
DUNDER_DEF_OK = frozenset({"__init__", "__repr__", "__str__", "__len__", "__iter__", "__next__",
                           "__getitem__", "__setitem__", "__contains__", "__eq__", "__ne__", "__lt__",
                           "__le__", "__gt__", "__ge__", "__hash__", "__bool__", "__call__", "__enter__",
                           "__exit__", "__post_init__"})
# Frames, code objects and raw memory, whatever object they are read from.
INTROSPECTION_ATTRS = frozenset({"gi_frame", "gi_code", "cr_frame", "cr_code", "ag_frame", "ag_code",
                                 "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "tb_frame",
                                 "tb_next", "co_code", "co_consts", "co_names", "from_address", "in_dll"})


def _tensor_methods() -> Tuple[frozenset, frozenset]:
    """(methods of torch.Tensor that compute: not in ALLOWED_CALLS, plus tolist; plain attributes)."""
    plain: Set[str] = set()
    methods: Set[str] = set()
    for name in dir(torch.Tensor):
        attr = inspect.getattr_static(torch.Tensor, name, None)
        if isinstance(attr, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
            plain.add(name)
        elif not (name.startswith("__") and name.endswith("__")) and name not in ALLOWED_CALLS:
            methods.add(name)
    methods.add("tolist")
    return frozenset(methods), frozenset(plain)


COMPUTE_METHODS, TENSOR_PLAIN = _tensor_methods()
# Python's own methods that glue calls and that torch.Tensor also has (today add, sort, values,
# and index with PyTorch 2): allowed unless the receiver is known to be a tensor.
PY_METHOD_NAMES = frozenset({"add", "sort", "values", "index", "count", "copy", "append", "items", "keys",
                             "get", "pop", "update", "extend", "insert", "remove"})
# For the dataflow: calls on a tensor whose result is not a tensor; attributes of a tensor that are
# tensors (views); attributes of a layer the constructor built that are tensors.
QUERY_METHODS = frozenset({"size", "stride", "dim", "ndimension", "numel", "nelement", "is_contiguous",
                           "data_ptr", "storage_offset", "element_size", "get_device", "is_floating_point",
                           "is_complex", "is_pinned", "untyped_storage", "storage", "item", "tolist",
                           "register_buffer", "register_parameter"})
TENSOR_VIEW_ATTRS = frozenset({"data", "T", "mT", "H", "mH", "real", "imag", "grad"})
LAYER_TENSOR_ATTRS = frozenset({"weight", "bias", "running_mean", "running_var"})


def is_module(qual: str) -> bool:
    """True for a namespace: it may appear only as the base of an attribute."""
    if qual.startswith("@"):
        return "." not in qual
    return qual in MODULES or (qual.startswith("triton.language.") and qual.count(".") == 2
                               and qual.split(".")[2] in ("extra", "math", "libdevice"))


def library_rule(qual: str, kind: str, called: bool = False) -> Optional[str]:
    """None when the library name ``qual`` (not a namespace) may be used in code of ``kind`` (module,
    class, function, ctor, triton; "any" at an import: allowed somewhere), else the reason."""
    parts = qual.split(".")
    root = parts[0]
    if root == "torch":
        return _torch_rule(parts, kind, called)
    if root == "ctypes":
        name = parts[1]
        if qual in CTYPES_LOADERS or (name in CTYPES_OK and len(parts) == 2):
            return None
        why = CTYPES_WHY.get(name, "only the plain C types, POINTER, byref and loading the kernel's own "
                             "library are allowed")
        return (f"this use of ctypes is refused ({why}); pass tensors' data_ptr() to your own native "
                "code as c_void_p")
    if root == "os":
        return None if qual in OS_OK else ("a kernel may use only os.path's path functions, os.getenv and "
                                           "os.environ.get: it gets its inputs as arguments")
    if root in ("math", "typing"):
        return None if len(parts) == 2 and parts[1] in PLAIN_MODULE_NAMES[root] else (
            f"{qual} is not one of {root}'s functions or types")
    if root == "functools":
        return None if parts[1] in FUNCTOOLS_OK else "only lru_cache, cache, partial, reduce and wraps are allowed"
    if root == "triton":
        if len(parts) == 2 and parts[1] in TRITON_OK:
            return None
        if parts[1] == "language":
            if kind in ("triton", "any") or (len(parts) == 3 and TL_GLUE.match(parts[2])):
                return None
            return ("Triton language calls run only inside a function decorated with @triton.jit; the "
                    "glue launches it as kernel[grid](...)")
        return "a kernel may use only triton.jit, autotune, heuristics, Config, cdiv and next_power_of_2"
    return "unknown library"


def _torch_rule(parts: List[str], kind: str, called: bool) -> Optional[str]:
    ctor = kind in ("ctor", "any") and called
    hint = ""
    if len(parts) == 2:
        if parts[1] in TORCH_TOP or (ctor and parts[1] in TORCH_CTOR):
            return None
        if parts[1] in RANDOM_FACTORIES:
            hint = " (weights are copied from the reference's Model, so torch.empty serves to allocate them)"
    elif len(parts) == 3 and parts[1] == "nn":
        if parts[2] in TORCH_NN_TOP or (ctor and parts[2] in NN_CLASSES):
            return None
        if parts[2] in NN_CLASSES:
            return ("torch layers compute in torch; a constructor may build one only to hold weights"
                    f"; {REASON_COMPUTE}")
    elif len(parts) == 4 and parts[1:3] == ["nn", "init"] and ctor:
        return None
    elif len(parts) == 3 and parts[1] == "cuda" and parts[2] in TORCH_CUDA:
        return None
    return REASON_COMPUTE + hint
