"""The op graph the tracer builds and the canonicaliser rewrites (README.md, "probe", "graph").

A graph is a list of nodes; a node is referred to by its index in that list. Rewrites never
delete or reorder nodes: they redirect a node to another (``Graph.replace``) and leave the dead
one behind, so indices stay stable while passes run. ``trace_canon.finish`` drops what no output
reaches and renumbers.

An operand is either a node index (``int``) or a ``Lit`` (a Python number, a bool, or None), so
a handler never confuses the integer 2 with value number 2.
"""

from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import torch

# dtype names of the sketch language; anything else keeps torch's name.
SKETCH_DTYPES = {
    torch.float16: "f16", torch.bfloat16: "bf16", torch.float32: "f32", torch.float64: "f64",
    torch.int8: "i8", torch.int16: "i16", torch.int32: "i32", torch.int64: "i64",
    torch.uint8: "u8", torch.bool: "bool",
}


def sketch_dtype(dtype: torch.dtype) -> str:
    return SKETCH_DTYPES.get(dtype, str(dtype).replace("torch.", ""))


class Lit:
    """A non-tensor operand: a Python number, a bool, or None."""

    __slots__ = ("value",)

    def __init__(self, value: Union[int, float, bool, None]) -> None:
        self.value = value

    def key(self) -> Tuple[str, Any]:
        # 1 and 1.0 and True are equal in Python; in the graph they are not.
        return (type(self.value).__name__, repr(self.value))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lit) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __repr__(self) -> str:
        return f"Lit({self.value!r})"

    def to_json(self) -> Dict[str, Any]:
        return {"none": True} if self.value is None else {"value": self.value}


Operand = Union[int, Lit]


class Node:
    """One value: a leaf (input, weight, buffer, constant) or an op's result."""

    __slots__ = ("kind", "op", "args", "attrs", "shape", "dtype", "strides", "line", "module",
                 "name", "index", "value")

    def __init__(self, kind: str, shape: Sequence[int], dtype: torch.dtype, strides: Sequence[int],
                 op: str = "", args: Optional[List[Operand]] = None, attrs: Optional[Dict[str, Any]] = None,
                 line: Optional[int] = None, module: Optional[str] = None) -> None:
        self.kind = kind
        self.op = op
        self.args: List[Operand] = list(args or [])
        self.attrs: Dict[str, Any] = dict(attrs or {})
        self.shape: Tuple[int, ...] = tuple(int(s) for s in shape)
        self.dtype = dtype
        self.strides: Tuple[int, ...] = tuple(int(s) for s in strides)
        self.line = line
        self.module = module
        self.name: Optional[str] = None
        self.index: Optional[int] = None
        self.value: Any = None

    def is_op(self, *names: str) -> bool:
        return self.kind == "op" and (not names or self.op in names)


class Graph:
    """Nodes plus the redirections rewrites have made. Owns its nodes."""

    def __init__(self) -> None:
        self.nodes: List[Node] = []
        self._redirect: Dict[int, int] = {}

    def add(self, node: Node) -> int:
        self.nodes.append(node)
        return len(self.nodes) - 1

    def find(self, i: int) -> int:
        """The node ``i`` now stands for, after every redirection."""
        seen = i
        while i in self._redirect:
            i = self._redirect[i]
        if i != seen:
            self._redirect[seen] = i
        return i

    def replace(self, old: int, new: int) -> None:
        old, new = self.find(old), self.find(new)
        if old != new:
            self._redirect[old] = new

    def resolve_args(self) -> None:
        """Points every operand at its current node."""
        for node in self.nodes:
            node.args = [self.find(a) if isinstance(a, int) else a for a in node.args]

    def __getitem__(self, i: int) -> Node:
        return self.nodes[self.find(i)]


def contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides: List[int] = []
    acc = 1
    for size in reversed(list(shape)):
        strides.append(acc)
        acc *= max(int(size), 1)
    return tuple(reversed(strides))


def numel(shape: Sequence[int]) -> int:
    return int(math.prod(shape)) if shape else 1


def view_meta(base: Node, op: str, attrs: Dict[str, Any]) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """(shape, strides) of a permute/reshape/expand of ``base``, as torch would give them."""
    try:
        meta = torch.empty_strided(base.shape, base.strides, dtype=base.dtype, device="meta")
        if op == "permute":
            out = meta.permute(*attrs["perm"])
        elif op == "reshape":
            out = meta.reshape(attrs["shape"])
        elif op == "expand":
            out = meta.expand(attrs["shape"])
        else:
            raise ValueError(op)
        return tuple(out.shape), tuple(out.stride())
    except Exception:  # noqa: BLE001 - a backend without meta views: the result as a fresh tensor
        if op == "permute":
            shape = tuple(base.shape[p] for p in attrs["perm"])
            return shape, tuple(base.strides[p] for p in attrs["perm"])
        shape = tuple(attrs["shape"])
        return shape, contiguous_strides(shape)


def broadcast_shape(*shapes: Sequence[int]) -> Tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, size in enumerate(s):
            k = rank - len(s) + i
            if out[k] == 1:
                out[k] = int(size)
    return tuple(out)


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> Optional[Tuple[int, ...]]:
    """torch.matmul's result shape, or None when the operands do not fit."""
    if not a or not b:
        return None
    a2 = (1,) + tuple(a) if len(a) == 1 else tuple(a)
    b2 = tuple(b) + (1,) if len(b) == 1 else tuple(b)
    if a2[-1] != b2[-2]:
        return None
    batch = broadcast_shape(a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out
