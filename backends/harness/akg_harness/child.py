"""The candidate's side of the judge: what runs inside the sandboxed child (README.md, "Judge and child").

One child serves one candidate and is never given another. It imports torch, maps the two shared
memory regions the judge passes (inputs, written by the judge; outputs, the "arena"), answers the
judge's calibration calls, then loads the candidate once and runs its ``forward`` on the judge's
command. Nothing here is trusted by the judge: once the candidate is imported it may have replaced
any of this code. The judge trusts only what it sees itself: the bytes in the output arena when the
child says it is done, the time between its own "go" and that answer, the inputs' bytes afterwards,
and the CPU time the kernel accounts to the child's cgroup.

Allocation: while the candidate runs, ``torch.empty``/``empty_like``/``empty_strided``/``zeros``/
``zeros_like`` and ``Tensor.new_empty``/``new_zeros`` for contiguous CPU tensors come from the arena
(a bump allocator reset before every call), so an output needs no copy: the judge reads it where
the kernel wrote it. The judge fills the arena with 0xFF bytes once (NaN, -1, 255, True), so an
element never written shows up on the first call, and fresh inputs on every call expose stale
values afterwards. An output outside the arena (another allocator, a view of an input) is copied
into it before the child answers, inside the timed call.

Wire format (judge -> child, on stdin): a JSON line, followed by ``blob`` raw bytes when the line
says so (a pickle: the judge is trusted, the child unpickles). Child -> judge (on the descriptor
given as ``--answers``): JSON lines only, never a pickle (the judge must not unpickle what a
candidate wrote).
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import mmap
import os
import pickle
import sys
from typing import Any, Callable, Dict, IO, List, Optional, Tuple

import torch
import torch.nn as nn

from .inputs import flatten_outputs
from .loading import describe_exception, exception_site, traceback_tail

ALIGN = 64
TENSOR_MARK = "__akg_tensor__"


class Arena:
    """Bump allocation in the shared output region; ``top = 0`` before every batch."""

    def __init__(self) -> None:
        self.mm: Optional[mmap.mmap] = None
        self.u8: Optional[torch.Tensor] = None
        self.typed: Dict[torch.dtype, torch.Tensor] = {}
        self.base = 0
        self.size = 0
        self.top = 0

    def map(self, fd: int, size: int) -> None:
        self.u8 = None
        self.typed = {}
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:
                pass  # tensors still view it; the old mapping lives until they go
        self.mm = mmap.mmap(fd, size) if size > 0 else None
        self.size = size
        if self.mm is not None:
            self.u8 = torch.frombuffer(self.mm, dtype=torch.uint8)
            self.base = self.u8.data_ptr()
        self.top = 0

    def alloc(self, shape: Tuple[int, ...], dtype: torch.dtype) -> Optional[torch.Tensor]:
        typed = self.typed.get(dtype)
        if typed is None:
            if self.u8 is None:
                return None
            typed = self.typed[dtype] = self.u8.view(dtype)
        item = _itemsize(dtype)
        strides = []
        numel = 1
        for s in reversed(shape):
            strides.append(numel)
            numel *= s
        if numel == 0:
            return None
        off = (self.top + ALIGN - 1) // ALIGN * ALIGN
        end = off + numel * item
        if end > self.size:
            return None
        self.top = end
        strides.reverse()
        return typed.as_strided(shape, strides, off // item)

    def holds(self, t: torch.Tensor) -> bool:
        """True when ``t`` is a contiguous CPU tensor inside the arena (what the judge can read)."""
        start = t.data_ptr() - self.base
        return 0 <= start < self.size and t.device.type == "cpu" and t.is_contiguous() and \
            start + t.numel() * t.element_size() <= self.size


_ITEMSIZE: Dict[torch.dtype, int] = {}
_REAL_EMPTY = torch.empty  # captured before install_allocator replaces torch.empty


def _itemsize(dtype: torch.dtype) -> int:
    size = _ITEMSIZE.get(dtype)
    if size is None:
        size = _REAL_EMPTY((), dtype=dtype).element_size()
        _ITEMSIZE[dtype] = size
    return size


def _poison(t: torch.Tensor) -> torch.Tensor:
    if t.numel() == 0 or t.layout != torch.strided:
        return t
    dtype = t.dtype
    if dtype.is_floating_point or dtype.is_complex:
        t.fill_(float("nan"))
    elif dtype == torch.bool:
        t.fill_(True)
    elif dtype == torch.uint8:
        t.fill_(255)
    else:
        t.fill_(-1)
    return t


def _shape_of(args: Tuple[Any, ...]) -> Optional[Tuple[int, ...]]:
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        args = tuple(args[0])
    if all(isinstance(a, int) and not isinstance(a, bool) and a >= 0 for a in args):
        return tuple(args)
    return None


def _cpu(device: Any) -> bool:
    return device is None or (isinstance(device, str) and device == "cpu") or \
        (isinstance(device, torch.device) and device.type == "cpu")


_SIMPLE_KW = frozenset({"dtype", "device", "layout", "requires_grad", "pin_memory", "memory_format"})


def _arena_ok(kwargs: Dict[str, Any]) -> bool:
    if any(k not in _SIMPLE_KW for k in kwargs):
        return False
    if kwargs.get("requires_grad") or kwargs.get("pin_memory"):
        return False
    layout = kwargs.get("layout")
    if layout is not None and layout != torch.strided:
        return False
    fmt = kwargs.get("memory_format")
    if fmt is not None and fmt not in (torch.contiguous_format, torch.preserve_format):
        return False
    return _cpu(kwargs.get("device"))


def install_allocator(arena: Arena) -> None:
    """Routes torch's allocating factories to the arena (see the module docstring)."""
    empty, empty_like, empty_strided = torch.empty, torch.empty_like, torch.empty_strided
    zeros, zeros_like = torch.zeros, torch.zeros_like
    new_empty, new_zeros = torch.Tensor.new_empty, torch.Tensor.new_zeros
    default_dtype = torch.get_default_dtype

    def a_empty(*args: Any, **kwargs: Any) -> torch.Tensor:
        shape = _shape_of(args)
        if shape is not None and _arena_ok(kwargs):
            t = arena.alloc(shape, kwargs.get("dtype") or default_dtype())
            if t is not None:
                return t
        return _poison(empty(*args, **kwargs))

    def a_zeros(*args: Any, **kwargs: Any) -> torch.Tensor:
        shape = _shape_of(args)
        if shape is not None and _arena_ok(kwargs):
            t = arena.alloc(shape, kwargs.get("dtype") or default_dtype())
            if t is not None:
                return t.zero_()
        return zeros(*args, **kwargs)

    def like(src: Any, kwargs: Dict[str, Any]) -> Optional[torch.Tensor]:
        if not isinstance(src, torch.Tensor) or (kwargs and not _arena_ok(kwargs)):
            return None
        if kwargs.get("device") is None and src.device.type != "cpu":
            return None
        fmt = kwargs.get("memory_format")
        if (fmt is None or fmt == torch.preserve_format) and not src.is_contiguous():
            return None
        return arena.alloc(tuple(src.shape), kwargs.get("dtype") or src.dtype)

    def a_empty_like(src: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
        t = like(src, kwargs) if not args else None
        return t if t is not None else _poison(empty_like(src, *args, **kwargs))

    def a_zeros_like(src: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
        t = like(src, kwargs) if not args else None
        return t.zero_() if t is not None else zeros_like(src, *args, **kwargs)

    def a_empty_strided(size: Any, stride: Any, *args: Any, **kwargs: Any) -> torch.Tensor:
        shape = _shape_of((size,))
        if shape is not None and not args and _arena_ok(kwargs):
            contiguous, acc = [], 1
            for s in reversed(shape):
                contiguous.append(acc)
                acc *= max(s, 1)
            if tuple(stride) == tuple(reversed(contiguous)):
                t = arena.alloc(shape, kwargs.get("dtype") or default_dtype())
                if t is not None:
                    return t
        return _poison(empty_strided(size, stride, *args, **kwargs))

    def a_new_empty(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        shape = _shape_of(args)
        if shape is not None and self.device.type == "cpu" and _arena_ok(kwargs):
            t = arena.alloc(shape, kwargs.get("dtype") or self.dtype)
            if t is not None:
                return t
        return _poison(new_empty(self, *args, **kwargs))

    def a_new_zeros(self: torch.Tensor, *args: Any, **kwargs: Any) -> torch.Tensor:
        shape = _shape_of(args)
        if shape is not None and self.device.type == "cpu" and _arena_ok(kwargs):
            t = arena.alloc(shape, kwargs.get("dtype") or self.dtype)
            if t is not None:
                return t.zero_()
        return new_zeros(self, *args, **kwargs)

    torch.empty, torch.empty_like, torch.empty_strided = a_empty, a_empty_like, a_empty_strided
    torch.zeros, torch.zeros_like = a_zeros, a_zeros_like
    torch.Tensor.new_empty, torch.Tensor.new_zeros = a_new_empty, a_new_zeros


class Child:
    """The child's state: regions, the candidate's model, the answer stream."""

    def __init__(self, answers: IO[str], in_fd: int, out_fd: int, device: torch.device) -> None:
        self.answers = answers
        self.in_fd, self.out_fd = in_fd, out_fd
        self.device = device
        self.in_mm: Optional[mmap.mmap] = None
        self.in_u8: Optional[torch.Tensor] = None
        self.arena = Arena()
        self.model: Optional[Callable[..., Any]] = None
        self.kernel_path = ""
        self.stdin = sys.stdin.buffer

    def send(self, obj: Dict[str, Any]) -> None:
        self.answers.write(json.dumps(obj, separators=(",", ":"), allow_nan=True) + "\n")
        self.answers.flush()

    def remap(self, in_size: int, out_size: int) -> None:
        self.in_u8 = None
        self.in_mm = mmap.mmap(self.in_fd, in_size) if in_size > 0 else None
        if self.in_mm is not None:
            self.in_u8 = torch.frombuffer(self.in_mm, dtype=torch.uint8)
        self.arena.map(self.out_fd, out_size)

    def _arg(self, value: Any) -> Any:
        if isinstance(value, tuple) and len(value) == 5 and value[0] == TENSOR_MARK:
            _, off, dtype, shape, device = value
            assert self.in_u8 is not None
            nbytes = _itemsize(dtype)
            for s in shape:
                nbytes *= s
            t = self.in_u8[off:off + nbytes].view(dtype).view(shape)
            return t if device == "cpu" else t.to(device)
        if isinstance(value, list):
            return [self._arg(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._arg(v) for v in value)
        return value

    def load(self, req: Dict[str, Any], blob: bytes) -> Dict[str, Any]:
        path = req["kernel"]
        self.kernel_path = path
        payload = pickle.loads(blob)
        directory = os.path.dirname(path)
        sys.path.insert(0, directory)
        try:
            spec = importlib.util.spec_from_file_location("_akg_candidate", path)
            if spec is None or spec.loader is None:
                raise ImportError(f"cannot import {path}")
            module = importlib.util.module_from_spec(spec)
            sys.modules["_akg_candidate"] = module
            spec.loader.exec_module(module)
        except BaseException as exc:  # noqa: BLE001 - the candidate may raise anything
            line = exception_site(exc, path)
            detail = f"importing {os.path.basename(path)} failed: {type(exc).__name__}: {exc}\n{traceback_tail(exc)}"
            return {"ok": False, "class": "build_error", "detail": detail, "line": line}
        model_class = getattr(module, "ModelNew", None)
        if not (inspect.isclass(model_class) and issubclass(model_class, nn.Module)):
            return {"ok": False, "class": "build_error",
                    "detail": f"kernel {os.path.basename(path)} has no class ModelNew(nn.Module)"}
        try:
            torch.manual_seed(int(req.get("seed", 0)))
            model = model_class(*payload["init"])
            model = model.to(self.device)
            own = model.state_dict()
            shared = {k: v.to(self.device) for k, v in payload["state"].items()
                      if k in own and own[k].shape == v.shape}
            model.load_state_dict(shared, strict=False)
        except BaseException as exc:  # noqa: BLE001
            detail, line = describe_exception("ModelNew(*get_init_inputs())", exc, path)
            return {"ok": False, "class": "runtime_error", "detail": detail, "line": line}
        self.model = model
        return {"ok": True}

    def place(self, out: Any) -> List[Any]:
        """Inside the timed window: the outputs, each one the judge can read in the arena (a copy
        when the kernel's tensor lies elsewhere)."""
        if type(out) is torch.Tensor and self.arena.holds(out):
            return [out]
        placed: List[Any] = []
        for value in flatten_outputs(out):
            if isinstance(value, torch.Tensor):
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                if not self.arena.holds(value):
                    dest = self.arena.alloc(tuple(value.shape), value.dtype)
                    if dest is None:
                        raise MemoryError(
                            f"output {len(placed)} ({list(value.shape)} {value.dtype}) does not fit the output region "
                            f"({self.arena.size} bytes, {self.arena.top} used): the kernel allocated more than "
                            "three times its outputs with torch.empty/zeros")
                    dest.copy_(value.detach())
                    value = dest
            placed.append(value)
        return placed

    def describe(self, placed: List[Any]) -> List[Dict[str, Any]]:
        """After "done": where each output lies."""
        descs: List[Dict[str, Any]] = []
        for value in placed:
            if isinstance(value, torch.Tensor):
                descs.append({"t": "tensor", "off": value.data_ptr() - self.arena.base,
                              "dtype": str(value.dtype).replace("torch.", ""),
                              "shape": list(value.shape), "strides": list(value.stride())})
            elif value is None or isinstance(value, (bool, int, float, str)):
                descs.append({"t": "value", "v": value})
            else:
                descs.append({"t": "other", "v": repr(value)[:200]})
        return descs

    def call(self, req: Dict[str, Any], blob: bytes) -> None:
        """A batch: every argument set of the blob, back to back, between "go" and "done"."""
        batch = [self._arg(structure) for structure in pickle.loads(blob)] if blob else [[]]
        null = bool(req.get("null"))
        model = self.model
        if model is None and not null:
            self.send({"ready": False, "class": "runtime_error", "detail": "no kernel loaded"})
            return
        self.send({"ready": True})
        go = self.stdin.readline()
        if not go:
            sys.exit(0)
        self.arena.top = 0
        results = []
        try:
            if null:
                for args in batch:
                    results.append(torch.empty_like(args[0]))
            else:
                assert model is not None
                for args in batch:
                    results.append(model(*args))
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
            placed = [self.place(out) for out in results]
        except BaseException as exc:  # noqa: BLE001
            if isinstance(exc, KeyboardInterrupt):
                raise
            detail, line = describe_exception("ModelNew.forward", exc, self.kernel_path)
            self.send({"done": False, "class": "runtime_error", "detail": detail, "line": line})
            return
        self.send({"done": True, "top": self.arena.top})
        self.send({"outs": [self.describe(p) for p in placed]})

    def serve(self) -> int:
        while True:
            line = self.stdin.readline()
            if not line:
                return 0
            req = json.loads(line)
            blob = self.stdin.read(int(req["blob"])) if req.get("blob") else b""
            op = req.get("op")
            if op == "map":
                self.remap(int(req["in"]), int(req["out"]))
                self.send({"ok": True})
            elif op == "load":
                self.send(self.load(req, blob))
            elif op == "call":
                self.call(req, blob)
            elif op == "exit":
                return 0
            else:
                self.send({"ok": False, "class": "runtime_error", "detail": f"unknown op {op!r}"})
