"""Binding a sketch to its task: the bind: section evaluated against a constructed Model.

Implements sketch-grammar/README.md, "Binding a sketch to its task". ``bind()`` reads every
bind item in order against the model, its constructor arguments and forward's arguments, and
produces what the interpreter runs on: the sketch's tensors (row-major reshapes of the task's
contiguous tensors, as NumPy arrays), symbols, params, and the outputs to allocate; afterwards
``Binding.output_leaves()`` maps the sketch's output tensors back to forward's output leaves.
Whatever does not fit raises BindError naming the bind item.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np
import torch

from .sketch_interp import eval_scalar
from .sketch_values import STORAGE, SketchError, convert

TORCH_DTYPES: Dict[str, torch.dtype] = {
    "bool": torch.bool, "i8": torch.int8, "i16": torch.int16, "i32": torch.int32, "i64": torch.int64,
    "u8": torch.uint8, "f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32, "f64": torch.float64,
}
SKETCH_DTYPES: Dict[torch.dtype, str] = {v: k for k, v in TORCH_DTYPES.items()}

Expr = Mapping[str, Any]


class BindError(Exception):
    """A bind item that does not fit the task; ``item`` and ``line`` say which."""

    def __init__(self, message: str, item: Optional[str] = None, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.item = item
        self.line = line


@dataclass(frozen=True)
class OutputBinding:
    leaf: int  # index in forward's flattened result
    tensor: str  # the sketch tensor
    shape: Tuple[int, ...]  # the task tensor's shape
    dtype: str


@dataclass
class Binding:
    """What the interpreter runs on. ``tensors`` holds every sketch tensor (outputs freshly
    allocated and poisoned: NaN, -1, True), in the sketch's shapes."""

    tensors: Dict[str, np.ndarray] = field(default_factory=dict)
    symbols: Dict[str, int] = field(default_factory=dict)
    params: Dict[str, Any] = field(default_factory=dict)
    outputs: List[OutputBinding] = field(default_factory=list)

    def output_leaves(self) -> Dict[int, torch.Tensor]:
        """Each bound output leaf as a torch tensor of the task's shape and dtype."""
        out: Dict[int, torch.Tensor] = {}
        for ob in self.outputs:
            data = self.tensors[ob.tensor].reshape(ob.shape)
            t = torch.from_numpy(np.array(data, copy=True))  # keeps a 0-d leaf 0-d
            out[ob.leaf] = t.to(TORCH_DTYPES[ob.dtype]) if ob.dtype == "bf16" else t
        return out


def poison(shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    """An output array filled as verify poisons outputs: NaN, -1 (all bits) for integers, True."""
    storage = STORAGE[dtype]
    if dtype == "bool":
        return np.ones(shape, dtype=storage)
    if dtype == "u8":
        return np.full(shape, 255, dtype=storage)
    if np.issubdtype(storage, np.integer):
        return np.full(shape, -1, dtype=storage)
    return np.full(shape, np.nan, dtype=storage)


def tensor_to_numpy(t: torch.Tensor, dtype: str) -> np.ndarray:
    """A task tensor as a contiguous NumPy array in the sketch dtype's storage (a copy)."""
    data = t.detach().to("cpu").contiguous()
    if dtype == "bf16":
        return data.to(torch.float32).numpy().copy()
    return data.numpy().copy()


def _signature_names(fn: Any) -> Tuple[List[str], Dict[str, Any]]:
    """Parameter names (self excluded) and defaults of a callable."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return [], {}
    names: List[str] = []
    defaults: Dict[str, Any] = {}
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        names.append(p.name)
        if p.default is not p.empty:
            defaults[p.name] = p.default
    if names and names[0] == "self":
        names = names[1:]
    return names, defaults


class _Binder:
    def __init__(self, ir: Mapping[str, Any], model: torch.nn.Module, init_args: Sequence[Any],
                 forward_args: Sequence[Any]) -> None:
        self.ir = ir
        self.model = model
        self.init_args = list(init_args)
        self.forward_args = list(forward_args)
        self.tensors = {t["name"]: t for t in ir.get("tensors", [])}
        self.symbols = list(ir.get("symbols", []))
        self.params = {p["name"]: p for p in ir.get("params", [])}
        self.consts = {c["name"]: c for c in ir.get("constexprs", [])}
        self.const_values = {n: c["value"] for n, c in self.consts.items() if c.get("value") is not None}
        self.out = Binding()
        self.task_tensors: Dict[str, np.ndarray] = {}
        self.item = ""
        self.line: Optional[int] = None

    def fail(self, message: str) -> BindError:
        return BindError(f"bind item '{self.item}' (line {self.line}): {message}" if self.line
                         else f"bind item '{self.item}': {message}", self.item, self.line)

    # ---- evaluation ----

    def names(self) -> Dict[str, Any]:
        return {**self.const_values, **self.out.symbols}

    def evaluate(self, expr: Expr, what: str) -> Any:
        try:
            return eval_scalar(expr, self.names())
        except SketchError as err:
            raise self.fail(f"{what}: {err.message} (only symbols bound before and constexprs can be used)") from None

    def literal(self, expr: Optional[Expr], what: str) -> Any:
        if expr is None:
            raise self.fail(f"{what} is missing")
        if expr["kind"] in ("string", "int"):
            return expr["value"]
        if expr["kind"] == "unary" and expr["op"] == "-" and expr["items"][0]["kind"] == "int":
            return -expr["items"][0]["value"]
        raise self.fail(f"{what} must be a literal string or integer")

    # ---- sources ----

    def forward_arg(self, key: Any) -> Any:
        names, defaults = _signature_names(self.model.forward)
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self.forward_args):
                raise self.fail(f"forward has {len(self.forward_args)} argument(s); there is no argument {key}")
            return self.forward_args[key]
        if key in names:
            pos = names.index(key)
            if pos < len(self.forward_args):
                return self.forward_args[pos]
            if key in defaults:
                return defaults[key]
            raise self.fail(f"forward's argument '{key}' was not passed and has no default")
        raise self.fail(f"forward has no argument '{key}' (its arguments: {', '.join(names) or 'none'})")

    def init_arg(self, key: Any) -> Any:
        names, defaults = _signature_names(type(self.model).__init__)
        if isinstance(key, int) and not isinstance(key, bool):
            if not 0 <= key < len(self.init_args):
                raise self.fail(f"Model was constructed with {len(self.init_args)} argument(s); none at {key}")
            return self.init_args[key]
        if key in names:
            pos = names.index(key)
            if pos < len(self.init_args):
                return self.init_args[pos]
            if key in defaults:
                return defaults[key]
            raise self.fail(f"Model's constructor argument '{key}' was not passed and has no default")
        raise self.fail(f"Model's constructor has no argument '{key}' (its arguments: {', '.join(names) or 'none'})")

    def weight(self, path: str) -> torch.Tensor:
        named = dict(self.model.named_parameters())
        named.update(dict(self.model.named_buffers()))
        if path in named:
            return named[path]
        value = self.attribute(path)
        if isinstance(value, torch.Tensor):
            return value
        raise self.fail(f"the model has no parameter or buffer '{path}'")

    def attribute(self, path: str) -> Any:
        obj: Any = self.model
        for part in path.split("."):
            if not hasattr(obj, part):
                raise self.fail(f"the model has no attribute '{path}' ('{part}' is missing)")
            obj = getattr(obj, part)
        return obj

    def pick(self, value: Any, index_expr: Optional[Expr], what: str) -> Any:
        if index_expr is None:
            if isinstance(value, (tuple, list)):
                raise self.fail(f"{what} is {value!r}: give the element to take, e.g. ({what}, 0)")
            return value
        index = self.literal(index_expr, "the element index")
        if isinstance(index, str):  # is the value this string? 1 or 0 (a number or tuple: 0)
            return int(isinstance(value, str) and value == index)
        if isinstance(value, torch.Tensor) and value.dim() == 0:
            value = value.item()
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value  # a plain number serves every index, as nn.Module's arguments do
        if not isinstance(value, (tuple, list)) or not -len(value) <= index < len(value):
            raise self.fail(f"{what} is {value!r}, which has no element {index}")
        return value[index]

    # ---- targets ----

    def target_kind(self, name: str) -> str:
        if name in self.tensors:
            return "tensor"
        if name in self.symbols:
            return "symbol"
        if name in self.params:
            return "param"
        if name in self.consts:
            return "constexpr"
        raise self.fail(f"'{name}' is not a tensor, symbol, param or constexpr of the sketch")

    def bind_number(self, name: str, kind: str, value: Any, source: str) -> None:
        if isinstance(value, torch.Tensor):
            if value.numel() != 1:
                raise self.fail(f"{source} is a tensor of shape {list(value.shape)}, not a number")
            value = value.item()
        if not isinstance(value, (bool, int, float)):
            raise self.fail(f"{source} is {value!r}, not a number")
        if kind == "symbol":
            if isinstance(value, float) and not value.is_integer():
                raise self.fail(f"{source} is {value!r}; a symbol takes an integer")
            self.out.symbols[name] = int(value)
        elif kind == "param":
            self.out.params[name] = value
        elif kind == "constexpr":
            expected = self.const_values.get(name)
            if expected is None or float(expected) != float(value):
                raise self.fail(f"constexpr '{name}' is specialised to {expected!r} but {source} is {value!r}; "
                                f"this design does not fit a model constructed this way")
        else:
            raise self.fail(f"a number ({source}) cannot be bound to tensor '{name}'")

    def match_shape(self, entries: Sequence[Expr], actual: Sequence[int], source: str) -> None:
        """Binds the bare symbols of a SHAPE not bound yet; checks every other entry."""
        if len(entries) != len(actual):
            raise self.fail(f"{source} has shape {list(actual)} ({len(actual)} dimensions) but the item gives "
                            f"{len(entries)} dimensions")
        for d, (entry, size) in enumerate(zip(entries, actual)):
            if entry["kind"] == "name" and entry["value"] in self.symbols and entry["value"] not in self.out.symbols:
                self.out.symbols[entry["value"]] = int(size)
                continue
            want = self.evaluate(entry, f"dimension {d} of the shape")
            if want != size:
                raise self.fail(f"{source} has shape {list(actual)}: dimension {d} is {size}, the item expects "
                                f"{want}")

    def shape_entries(self, name: str, shape_expr: Optional[Expr]) -> List[Expr]:
        if shape_expr is None:
            return list(self.tensors[name]["dims"])
        if shape_expr["kind"] != "list":
            raise self.fail("the shape must be a list such as [B, S, H]")
        return list(shape_expr["items"])

    def bind_task_tensor(self, name: str, value: Any, shape_expr: Optional[Expr], source: str) -> None:
        if not isinstance(value, torch.Tensor):
            raise self.fail(f"{source} is {type(value).__name__}, not a tensor")
        dtype = self.tensors[name]["dtype"]
        if SKETCH_DTYPES.get(value.dtype) != dtype:
            raise self.fail(f"{source} is {str(value.dtype).replace('torch.', '')} but tensor '{name}' is {dtype}")
        self.match_shape(self.shape_entries(name, shape_expr), tuple(value.shape), source)
        self.task_tensors[name] = tensor_to_numpy(value, dtype)

    def bind_output(self, name: str, leaf: Any, shape_expr: Optional[Expr]) -> None:
        if not isinstance(leaf, int) or leaf < 0:
            raise self.fail(f"output() takes a leaf index (0, 1, ...), got {leaf!r}")
        shape = []
        for d, entry in enumerate(self.shape_entries(name, shape_expr)):
            size = self.evaluate(entry, f"dimension {d} of the output shape")
            if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
                raise self.fail(f"dimension {d} of the output shape is {size!r}, not a positive integer")
            shape.append(size)
        self.out.outputs.append(OutputBinding(leaf, name, tuple(shape), self.tensors[name]["dtype"]))

    # ---- items ----

    def bind_item(self, item: Mapping[str, Any]) -> None:
        self.item, self.line = item["name"], item.get("line")
        name, src = item["name"], item["source"]
        kind = self.target_kind(name)
        callee = src.get("callee") if src["kind"] == "call" else None
        args = list(src.get("items", [])) if callee else []
        arg = args[0] if args else None
        extra = args[1] if len(args) > 1 else None
        if callee == "input":
            key = self.literal(arg, "input()'s argument")
            value = self.forward_arg(key)
            source = f"forward's argument {key!r}"
            if kind == "tensor":
                self.bind_task_tensor(name, value, extra, source)
            else:
                self.bind_number(name, kind, value, source)
        elif callee == "output":
            if kind != "tensor":
                raise self.fail(f"output() binds a tensor, but '{name}' is a {kind}")
            self.bind_output(name, self.literal(arg, "output()'s leaf index"), extra)
        elif callee == "weight":
            if kind != "tensor":
                raise self.fail(f"weight() binds a tensor, but '{name}' is a {kind}")
            path = self.literal(arg, "weight()'s path")
            self.bind_task_tensor(name, self.weight(path), extra, f"weight '{path}'")
        elif callee == "attr":
            path = self.literal(arg, "attr()'s path")
            value = self.pick(self.attribute(path), extra, f"attribute '{path}'")
            self.bind_number(name, kind, value, f"attribute '{path}'")
        elif callee == "init":
            key = self.literal(arg, "init()'s argument")
            value = self.pick(self.init_arg(key), extra, f"constructor argument '{key}'")
            self.bind_number(name, kind, value, f"constructor argument '{key}'")
        else:
            if kind != "symbol":
                raise self.fail(f"an expression can only bind a symbol, but '{name}' is a {kind}")
            self.bind_number(name, kind, self.evaluate(src, "the expression"), "the expression")

    def finish(self) -> Binding:
        self.item, self.line = "", None
        for sym in self.symbols:
            if sym not in self.out.symbols:
                raise BindError(f"symbol '{sym}' is not bound: bind it, or name it in an input's or weight's shape")
        names = self.names()
        for name, spec in self.tensors.items():
            dims = []
            for d in spec["dims"]:
                try:
                    dims.append(int(eval_scalar(d, names)))
                except SketchError as err:
                    raise BindError(f"tensor '{name}': its dimension cannot be computed: {err.message}") from None
            count = int(np.prod(dims)) if dims else 1
            if name in self.task_tensors:
                data = self.task_tensors[name]
                if data.size != count:
                    raise BindError(f"tensor '{name}' has shape {dims} ({count} elements) but the task's tensor "
                                    f"has shape {list(data.shape)} ({data.size} elements)", name)
                self.out.tensors[name] = np.ascontiguousarray(data.reshape(dims))
                if spec["dtype"] == "bf16":
                    self.out.tensors[name] = convert(self.out.tensors[name], "bf16")
                continue
            bound = [ob for ob in self.out.outputs if ob.tensor == name]
            if not bound:
                raise BindError(f"tensor '{name}' is not bound to an input, weight or output of the task", name)
            task_count = int(np.prod(bound[0].shape)) if bound[0].shape else 1
            if task_count != count:
                raise BindError(f"tensor '{name}' has shape {dims} ({count} elements) but output "
                                f"{bound[0].leaf} is allocated as {list(bound[0].shape)} ({task_count} elements)", name)
            self.out.tensors[name] = poison(tuple(dims), spec["dtype"])
        return self.out


def bind(ir: Mapping[str, Any], model: torch.nn.Module, init_args: Sequence[Any],
         forward_args: Sequence[Any]) -> Binding:
    """Evaluates the sketch's bind section (``ir`` is its JSON form) for a model constructed with
    ``init_args`` and called with ``forward_args``. Raises BindError when the sketch has no
    binding or an item does not fit."""
    items = ir.get("bind") or []
    if not items:
        raise BindError("the sketch has no bind: section, so it cannot be run for a task")
    binder = _Binder(ir, model, init_args, forward_args)
    for item in items:
        binder.bind_item(item)
    return binder.finish()


def check_outputs(binding: Binding, reference_outputs: Sequence[Any]) -> None:
    """Every leaf of the reference's output is bound exactly once, with its shape and dtype."""
    seen: Dict[int, OutputBinding] = {}
    for ob in binding.outputs:
        if ob.leaf >= len(reference_outputs):
            raise BindError(f"tensor '{ob.tensor}' is bound to output({ob.leaf}) but forward returns "
                            f"{len(reference_outputs)} output(s)", ob.tensor)
        if ob.leaf in seen:
            raise BindError(f"output({ob.leaf}) is bound twice: to '{seen[ob.leaf].tensor}' and '{ob.tensor}'",
                            ob.tensor)
        seen[ob.leaf] = ob
        ref = reference_outputs[ob.leaf]
        if not isinstance(ref, torch.Tensor):
            raise BindError(f"tensor '{ob.tensor}' is bound to output({ob.leaf}), which is {type(ref).__name__}, "
                            f"not a tensor", ob.tensor)
        if tuple(ref.shape) != ob.shape or SKETCH_DTYPES.get(ref.dtype) != ob.dtype:
            raise BindError(f"tensor '{ob.tensor}' is bound to output({ob.leaf}) as {list(ob.shape)} {ob.dtype}, but "
                            f"the reference returns {list(ref.shape)} {str(ref.dtype).replace('torch.', '')}",
                            ob.tensor)
    for leaf, ref in enumerate(reference_outputs):
        if leaf not in seen:
            raise BindError(f"output {leaf} of the reference is not bound to any tensor of the sketch")
