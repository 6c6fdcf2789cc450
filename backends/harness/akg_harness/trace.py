"""Tracing the reference's forward into a canonical op graph (README.md, "probe", "graph").

Why at the ATen level: by the time a call reaches the dispatcher's Python key, PyTorch has already
resolved the spelling: ``nn.Linear``, ``F.linear`` and ``x @ w.t() + b`` all arrive as a handful of
ATen ops (``t``, ``addmm``/``mm``, ``add``), and composite ops (``einsum``, N-D ``matmul``, ``stack``)
arrive decomposed. So the probe runs ``forward`` once more, on a fresh copy of the ``get_inputs()``
case, under a ``TorchDispatchMode`` (PyTorch 1.13 and 2.x alike), and records every call:

- each tensor operand is mapped to a value: a leaf (forward's tensor inputs, ``named_parameters()``,
  ``named_buffers()``, or a constant: a tensor no recorded op produced) or the result of an earlier
  call. Mapping is by object identity first; a view that comes back as a new Python object (``.data``,
  a tensor whose Python object died and was remade) falls back to (data pointer, shape, strides,
  dtype). A weight's or buffer's values are never read;
- in-place and ``out=`` calls rebind the written tensor to a new value. Any other live tensor sharing
  its storage (a view of it, its base) becomes stale: reading one later is a write through an alias,
  which this graph cannot say, so the trace gives up rather than describe another function;
- the source line is the innermost frame in the reference file, the module the innermost submodule
  whose forward is running (forward pre/post hooks keep that stack).

Each call is lowered to canonical ops as it is recorded (``trace_lower``, ``trace_lower_nn``), and
the whole graph is canonicalised at the end (``trace_canon``). Tracing never changes what the probe
reports and never fails it: every error, and more than ``MAX_TRACED_OPS`` calls, gives
``graph: null`` with ``graph_error``.
"""

from __future__ import annotations

import inspect
import os
import sys
import weakref
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

from . import trace_lower_nn  # noqa: F401 - registers its handlers
from .inputs import flatten_outputs
from .loading import Reference
from .trace_canon import finish
from .trace_graph import Graph, Node, numel
from .trace_lower import CONSTANT_MAX_ELEMENTS, bind as bind_schema, lower_call

# A forward that runs more ATen calls than this gets no graph.
MAX_TRACED_OPS = 4096


class TraceError(Exception):
    """Why a forward has no graph (other than an exception of the reference itself)."""


def _storage_ptr(t: torch.Tensor) -> Optional[int]:
    try:
        if hasattr(t, "untyped_storage"):
            return int(t.untyped_storage().data_ptr())
        return int(t.storage().data_ptr())
    except Exception:  # noqa: BLE001 - tensors without storage (sparse, wrapper subclasses)
        return None


def _signature(t: torch.Tensor) -> Optional[Tuple[Any, ...]]:
    try:
        if t.layout != torch.strided or t.numel() == 0 or t.data_ptr() == 0:
            return None
        return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), t.dtype, str(t.device))
    except Exception:  # noqa: BLE001
        return None


def _flat_tensors(value: Any) -> List[Optional[torch.Tensor]]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        out: List[Optional[torch.Tensor]] = []
        for v in value:
            out.extend(_flat_tensors(v) if isinstance(v, (list, tuple)) else [v if isinstance(v, torch.Tensor) else None])
        return out
    return []


class Recorder:
    """Maps tensors to graph values while forward runs; the lowering context of ``trace_lower``.

    Holds weak references to the tensors it has seen (the trace keeps no activation alive) and
    strong ones to the model's parameters and buffers (the model holds them anyway).
    """

    def __init__(self, ref_path: str, model: nn.Module) -> None:
        self.graph = Graph()
        self.line: Optional[int] = None
        self.module = ""
        self.module_stack: List[str] = []
        self.calls = 0
        self.overflow = False
        self.error: Optional[BaseException] = None
        self.input_nodes: List[int] = []
        self.notes: List[str] = []
        self._ref_file = os.path.realpath(ref_path)
        self._code_in_ref: Dict[Any, bool] = {}
        self._by_id: Dict[int, Tuple[Any, int]] = {}
        self._by_sig: Dict[Tuple[Any, ...], int] = {}
        self._by_storage: Dict[int, List[Any]] = {}
        self._stale: Dict[int, Any] = {}
        self._leaves: Dict[int, Tuple[str, str, int, torch.Tensor]] = {}
        self._leaf_sigs: Dict[Tuple[Any, ...], int] = {}
        for kind, items in (("weight", model.named_parameters()), ("buffer", model.named_buffers())):
            for position, (name, t) in enumerate(items):
                if id(t) not in self._leaves:
                    self._leaves[id(t)] = (kind, name, position, t)
                    sig = _signature(t)
                    if sig is not None:
                        self._leaf_sigs.setdefault(sig, id(t))

    # ---- leaves
    def add_inputs(self, names: Sequence[str], args: Sequence[Any]) -> None:
        """Every tensor among forward's arguments is an input leaf, whether it is used or not."""
        for index, arg in enumerate(args):
            name = names[index] if index < len(names) else f"arg{index}"
            items = [(name, arg)] if isinstance(arg, torch.Tensor) else \
                [(f"{name}[{j}]", t) for j, t in enumerate(arg) if isinstance(t, torch.Tensor)] \
                if isinstance(arg, (list, tuple)) else []
            for item_name, t in items:
                node = self._leaf_node("input", t)
                node.index, node.name = index, item_name
                i = self.graph.add(node)
                self.input_nodes.append(i)
                self.bind(t, i)

    def _leaf_node(self, kind: str, t: torch.Tensor) -> Node:
        return Node(kind, tuple(t.shape), t.dtype, tuple(t.stride()) if t.layout == torch.strided else ())

    def _model_leaf(self, key: int) -> int:
        kind, name, position, t = self._leaves[key]
        node = self._leaf_node(kind, t)
        node.name, node.index = name, position
        i = self.graph.add(node)
        self.bind(t, i)
        return i

    def constant(self, t: torch.Tensor) -> int:
        """A constant leaf holding ``t``'s current value (when small)."""
        node = self._leaf_node("constant", t)
        node.line, node.module = self.line, self.module
        if t.numel() <= CONSTANT_MAX_ELEMENTS and t.layout == torch.strided and not t.is_complex():
            node.value = t.detach().cpu().tolist()
        i = self.graph.add(node)
        self.bind(t, i)
        return i

    # ---- tensors to values
    def bind(self, t: torch.Tensor, i: int) -> None:
        wr = weakref.ref(t)
        self._by_id[id(t)] = (wr, i)
        self._stale.pop(id(t), None)
        sig = _signature(t)
        if sig is not None:
            self._by_sig[sig] = i
        ptr = _storage_ptr(t)
        if ptr:
            self._by_storage.setdefault(ptr, []).append(wr)

    def ref(self, t: Any) -> int:
        if not isinstance(t, torch.Tensor):
            raise TraceError(f"expected a tensor operand, got {type(t).__name__}")
        stale = self._stale.get(id(t))
        if stale is not None and stale() is t:
            raise TraceError(f"a tensor is read after an in-place write through another view of its storage "
                             f"(reference line {self.line}); the graph cannot express that")
        entry = self._by_id.get(id(t))
        if entry is not None and entry[0]() is t:
            return entry[1]
        if id(t) in self._leaves and self._leaves[id(t)][3] is t:
            return self._model_leaf(id(t))
        sig = _signature(t)
        if sig is not None and sig in self._by_sig:
            i = self._by_sig[sig]
            self.bind(t, i)
            return i
        if sig is not None and sig in self._leaf_sigs:
            i = self._model_leaf(self._leaf_sigs[sig])
            self.bind(t, i)
            return i
        return self.constant(t)

    def _mark_aliases_stale(self, target: torch.Tensor) -> None:
        ptr = _storage_ptr(target)
        if not ptr:
            return
        alive = []
        for wr in self._by_storage.get(ptr, []):
            other = wr()
            if other is None:
                continue
            alive.append(wr)
            if other is not target:
                self._stale[id(other)] = wr
        self._by_storage[ptr] = alive

    # ---- nodes
    def emit(self, op: str, args: List[Any], attrs: Dict[str, Any], like: Optional[torch.Tensor] = None,
             shape: Optional[Sequence[int]] = None, dtype: Optional[torch.dtype] = None,
             strides: Optional[Sequence[int]] = None) -> int:
        from .trace_graph import contiguous_strides
        if like is not None:
            shape, dtype = tuple(like.shape), like.dtype
            strides = tuple(like.stride()) if like.layout == torch.strided else contiguous_strides(shape)
        assert shape is not None and dtype is not None
        if strides is None:
            strides = contiguous_strides(shape)
        node = Node("op", shape, dtype, strides, op=op, args=args, attrs=attrs, line=self.line, module=self.module)
        return self.graph.add(node)

    # ---- recording
    def _where(self) -> Optional[int]:
        frame = sys._getframe(2)
        while frame is not None:
            code = frame.f_code
            inside = self._code_in_ref.get(code)
            if inside is None:
                inside = os.path.realpath(code.co_filename) == self._ref_file
                self._code_in_ref[code] = inside
            if inside:
                return frame.f_lineno
            frame = frame.f_back
        return None

    def record(self, func: Any, args: Sequence[Any], kwargs: Dict[str, Any], out: Any) -> None:
        outs = _flat_tensors(out)
        if not any(o is not None for o in outs):
            return  # queries (item(), size checks): no tensor result, nothing to record
        self.line = self._where()
        self.module = self.module_stack[-1] if self.module_stack else ""
        b = bind_schema(func, args, kwargs)
        results = lower_call(self, func, b, outs)
        written = [b.get(a.name) for a in func._schema.arguments
                   if a.alias_info is not None and a.alias_info.is_write]
        for o, i in zip(outs, results):
            if o is None or i is None:
                continue
            if any(w is o for w in written):
                self._mark_aliases_stale(o)
            self.bind(o, i)

    def output(self, value: Any) -> Optional[int]:
        return self.ref(value) if isinstance(value, torch.Tensor) else None


class _TraceMode(TorchDispatchMode):
    """Runs every ATen call unchanged and hands it to the recorder."""

    def __init__(self, recorder: Recorder) -> None:
        super().__init__()
        self.recorder = recorder
        self._busy = False

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        rec = self.recorder
        if self._busy or rec.error is not None or rec.overflow:
            return out
        rec.calls += 1
        if rec.calls > MAX_TRACED_OPS:
            rec.overflow = True
            return out
        self._busy = True
        try:
            rec.record(func, args, kwargs, out)
        except Exception as exc:  # noqa: BLE001 - the trace gives up; the reference runs on
            rec.error = exc
        finally:
            self._busy = False
        return out


def _forward_names(model: nn.Module, count: int) -> List[str]:
    try:
        params = list(inspect.signature(model.forward).parameters.values())
    except (TypeError, ValueError):
        params = []
    names: List[str] = []
    for p in params:
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            names.extend(f"{p.name}[{k}]" for k in range(count - len(names)))
            break
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            names.append(p.name)
    return names


def _module_hooks(model: nn.Module, recorder: Recorder) -> List[Any]:
    handles = []
    for name, module in model.named_modules():
        if not name:
            continue

        def pre(_mod: nn.Module, _inputs: Any, name: str = name) -> None:
            recorder.module_stack.append(name)

        def post(_mod: nn.Module, _inputs: Any, _out: Any, name: str = name) -> None:
            while recorder.module_stack:
                if recorder.module_stack.pop() == name:
                    break

        handles.append(module.register_forward_pre_hook(pre))
        handles.append(module.register_forward_hook(post))
    return handles


def trace_graph(ref: Reference, model: nn.Module, args: List[Any]) -> Dict[str, Any]:
    """The graph of ``model.forward(*args)``; raises when there is none (``probe_graph`` reports)."""
    recorder = Recorder(ref.path, model)
    recorder.add_inputs(_forward_names(model, len(args)), args)
    handles = _module_hooks(model, recorder)
    try:
        with torch.no_grad(), _TraceMode(recorder):
            result = model(*args)
    finally:
        for h in handles:
            h.remove()
    if recorder.overflow:
        raise TraceError(f"the forward ran more than {MAX_TRACED_OPS} ATen operations (the graph's limit)")
    if recorder.error is not None:
        raise recorder.error
    outputs = [recorder.output(o) for o in flatten_outputs(result)]
    notes = recorder.notes + [f"output {k} is not a tensor" for k, o in enumerate(outputs) if o is None]
    return finish(recorder.graph, outputs, recorder.input_nodes, notes)


def probe_graph(ref: Reference, model: nn.Module, args: List[Any]) -> Dict[str, Any]:
    """``{"graph": ...}``, or ``{"graph": None, "graph_error": "<Type>: <message>"}``: never raises
    (but for KeyboardInterrupt)."""
    try:
        return {"graph": trace_graph(ref, model, args)}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - SystemExit from user code included
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return {"graph": None, "graph_error": f"{type(exc).__name__}: {message}"[:1000]}


__all__ = ["probe_graph", "trace_graph", "MAX_TRACED_OPS", "numel"]
