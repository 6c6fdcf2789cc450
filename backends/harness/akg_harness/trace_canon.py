"""Canonicalising a traced op graph: the rewrites that make every spelling of one computation give
the same graph (README.md, "probe", "graph").

Lowering (``trace_lower``) already maps each ATen call to canonical ops. What is left are patterns
that span several calls, which the passes below rewrite until nothing changes:

- identity views are dropped; consecutive reshapes merge and consecutive permutes compose;
- a chain of permutes and reshapes that only add or remove size-1 dims (how ``einsum`` lines its
  operands up for ``bmm``) becomes its normal form: at most one permute of the base's non-unit
  dims, then at most one reshape;
- ``reshape(matmul(reshape(A), B), S)`` becomes ``matmul(A, B)`` when that is the same product:
  the inner reshape only regroups A's rows (it keeps the last dim) and B is a matrix, possibly
  with leading unit dims (N-D ``linear`` and ``@`` flatten rows, ``einsum`` adds a batch of 1);
- a reshape of an elementwise op whose other operand broadcasts along the last dim only moves
  inside it (``reshape(add(mm, bias))`` becomes ``add(reshape(mm), bias)``), so the rule above
  can see the matmul;
- a reshape of an elementwise op whose tensor operands all have its shape moves onto each of
  them (``relu(x).flatten(1)`` and ``relu(x.flatten(1))`` are one graph), so a reshape ends up
  on the tensors it regroups, where a Designer reads it as a reshaped load.

Then identical ops merge, values no output reaches are dropped, and the rest is numbered: leaves
first (inputs by position, parameters and buffers in ``named_*()`` order, constants as met), then
ops in depth-first post-order from the outputs, so the numbering does not depend on the order in
which the reference happened to call things.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .trace_graph import Graph, Lit, Node, matmul_shape, numel, sketch_dtype, view_meta

# Rewrites run until the graph stops changing, at most this many rounds.
MAX_ROUNDS = 16
_ELEMENTWISE_BINARY = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder"}
_ELEMENTWISE = _ELEMENTWISE_BINARY | {
    "relu", "sigmoid", "tanh", "exp", "log", "abs", "neg", "sqrt", "rsqrt", "sin", "cos", "erf",
    "sign", "floor", "round", "reciprocal", "silu", "hardsigmoid", "hardswish", "mish", "softsign",
    "selu", "gelu", "softplus", "elu", "leaky_relu", "hardtanh", "clamp", "cast", "eq", "ne", "lt",
    "le", "gt", "ge", "logical_and", "logical_or", "where"}
_VIEW_OPS = {"permute", "reshape"}
_LEAF_RANK = {"input": 0, "weight": 1, "buffer": 2, "constant": 3}


def _uses(g: Graph, outputs: Sequence[Optional[int]]) -> Dict[int, int]:
    """How many live nodes (and outputs) read each node; dead nodes left by rewrites do not count."""
    count: Dict[int, int] = {}
    for i in _post_order(g, outputs, []):
        for a in g.nodes[i].args:
            if isinstance(a, int):
                count[g.find(a)] = count.get(g.find(a), 0) + 1
    for o in outputs:
        if o is not None:
            count[g.find(o)] = count.get(g.find(o), 0) + 1
    return count


def _new(g: Graph, like: Node, op: str, args: List[Any], attrs: Dict[str, Any],
         shape: Sequence[int], strides: Sequence[int], dtype: Any = None) -> int:
    return g.add(Node("op", shape, dtype if dtype is not None else like.dtype, strides, op=op, args=args,
                      attrs=attrs, line=like.line, module=like.module))


def _view(g: Graph, at: Node, op: str, base: int, attrs: Dict[str, Any]) -> int:
    shape, strides = view_meta(g[base], op, attrs)
    return _new(g, at, op, [base], attrs, shape, strides, g[base].dtype)


def _is_unit_reshape(src: Sequence[int], dst: Sequence[int]) -> bool:
    return [s for s in src if s != 1] == [s for s in dst if s != 1]


def _drop_identity(g: Graph, i: int, node: Node) -> bool:
    if not node.args or not isinstance(node.args[0], int):
        return False
    src = g[node.args[0]]
    same = ((node.op in ("reshape", "expand") and tuple(node.attrs["shape"]) == src.shape)
            or (node.op == "permute" and list(node.attrs["perm"]) == list(range(len(node.attrs["perm"]))))
            or (node.op == "cast" and src.dtype == node.dtype))
    if same:
        g.replace(i, node.args[0])
    return same


def _merge_views(g: Graph, i: int, node: Node) -> bool:
    """reshape(reshape(x)) and expand(expand(x)) → one; permute(permute(x)) → one permute."""
    inner_i = node.args[0]
    if not isinstance(inner_i, int):
        return False
    inner = g[inner_i]
    if node.op in ("reshape", "expand") and inner.is_op(node.op):
        node.args = [inner.args[0]]
        return True
    if node.op == "permute" and inner.is_op("permute"):
        p1, p2 = inner.attrs["perm"], node.attrs["perm"]
        node.attrs = {"perm": [p1[j] for j in p2]}
        node.args = [inner.args[0]]
        return True
    return False


def _chain(g: Graph, i: int) -> Tuple[int, List[int]]:
    """(base, chain): the permutes and unit reshapes leading to node ``i``, outermost last."""
    chain: List[int] = []
    cur = i
    while True:
        node = g[cur]
        if not (node.is_op("permute") or (node.is_op("reshape") and _is_unit_reshape(g[node.args[0]].shape, node.shape))):
            break
        chain.append(cur)
        cur = node.args[0]  # type: ignore[assignment]
    chain.reverse()
    return cur, chain


def _normal_view(base: Node, shape: Tuple[int, ...], order: List[int]) -> List[Tuple[str, Dict[str, Any]]]:
    """The normal form of a unit-dim view chain: ops to apply to ``base``."""
    if order == sorted(order):
        return [] if shape == base.shape else [("reshape", {"shape": list(shape)})]
    rank = len(base.shape)
    if len(shape) == rank:
        units = [d for d in range(rank) if base.shape[d] == 1]
        feed, unit_feed = iter(order), iter(units)
        perm = [next(unit_feed) if s == 1 else next(feed) for s in shape]
        return [("permute", {"perm": perm})]
    perm = list(range(rank))
    for k, p in enumerate(sorted(order)):
        perm[p] = order[k]
    permuted = tuple(base.shape[p] for p in perm)
    ops: List[Tuple[str, Dict[str, Any]]] = [("permute", {"perm": perm})]
    if permuted != shape:
        ops.append(("reshape", {"shape": list(shape)}))
    return ops


def _normalise_view_chain(g: Graph, i: int, node: Node) -> bool:
    base_i, chain = _chain(g, i)
    if not chain:
        return False
    base = g[base_i]
    mapping: List[Optional[int]] = [d if s != 1 else None for d, s in enumerate(base.shape)]
    for c in chain:
        cn = g[c]
        if cn.op == "permute":
            mapping = [mapping[p] for p in cn.attrs["perm"]]
        else:
            feed = iter([m for m in mapping if m is not None])
            mapping = [None if s == 1 else next(feed) for s in cn.shape]
    order = [m for m in mapping if m is not None]
    target = _normal_view(base, node.shape, order)
    current = [(g[c].op, g[c].attrs) for c in chain]
    if current == target:
        return False
    cur = base_i
    for op, attrs in target:
        cur = _view(g, node, op, cur, attrs)
    g.replace(i, cur)
    return True


def _fold_matmul(g: Graph, i: int, node: Node, uses: Dict[int, int]) -> bool:
    """reshape(matmul(reshape(A), B), S) → matmul(A, B) when that is the same product."""
    m_i = node.args[0]
    if not isinstance(m_i, int) or not g[m_i].is_op("matmul") or uses.get(m_i, 0) != 1:
        return False
    mm = g[m_i]
    p_i, q_i = mm.args
    if not isinstance(p_i, int) or not isinstance(q_i, int):
        return False
    p, q = g[p_i], g[q_i]
    a_i = p.args[0] if p.is_op("reshape") else p_i
    b_i = q.args[0] if q.is_op("reshape") else q_i
    if a_i == p_i and b_i == q_i:
        return False
    a, b = g[a_i], g[b_i]  # type: ignore[index]
    if len(b.shape) != 2 or any(s != 1 for s in q.shape[:-2]) or q.shape[-2:] != b.shape:
        return False
    if not a.shape or a.shape[-1] != p.shape[-1]:
        return False
    if matmul_shape(a.shape, b.shape) != node.shape:
        return False
    new = _new(g, mm, "matmul", [a_i, b_i], {}, node.shape, node.strides, node.dtype)
    g.replace(i, new)
    return True


def _push_reshape(g: Graph, i: int, node: Node, uses: Dict[int, int]) -> bool:
    """reshape(op(M, c)) → op(reshape(M), c) when c broadcasts along the last dim only."""
    e_i = node.args[0]
    if not isinstance(e_i, int) or uses.get(e_i, 0) != 1:
        return False
    e = g[e_i]
    if e.kind != "op" or e.op not in _ELEMENTWISE_BINARY or len(e.args) != 2 or not e.shape or not node.shape:
        return False
    if e.shape[-1] != node.shape[-1]:
        return False
    main = [k for k, a in enumerate(e.args) if isinstance(a, int) and g[a].shape == e.shape]
    if not main:
        return False
    k = main[0]
    other = e.args[1 - k]
    if isinstance(other, int):
        oshape = g[other].shape
        if len(oshape) > len(node.shape) or any(s != 1 for s in oshape[:-1]):
            return False
    m_i = e.args[k]
    assert isinstance(m_i, int)
    reshaped = _view(g, node, "reshape", m_i, {"shape": list(node.shape)})
    args: List[Any] = [reshaped, other] if k == 0 else [other, reshaped]
    new = _new(g, e, e.op, args, dict(e.attrs), node.shape, node.strides, node.dtype)
    g.replace(i, new)
    return True


def _sink_reshape(g: Graph, i: int, node: Node, uses: Dict[int, int]) -> bool:
    """reshape(op(a, b, ...)) → op(reshape(a), reshape(b), ...) when op is elementwise and every
    tensor operand has op's shape (numbers stay as they are)."""
    e_i = node.args[0]
    if not isinstance(e_i, int) or uses.get(e_i, 0) != 1:
        return False
    e = g[e_i]
    if e.kind != "op" or e.op not in _ELEMENTWISE or not e.args:
        return False
    tensors = [a for a in e.args if isinstance(a, int)]
    if not tensors or any(g[a].shape != e.shape for a in tensors):
        return False
    args: List[Any] = [_view(g, node, "reshape", a, {"shape": list(node.shape)}) if isinstance(a, int) else a
                       for a in e.args]
    new = _new(g, e, e.op, args, dict(e.attrs), node.shape, node.strides, node.dtype)
    g.replace(i, new)
    return True


def _rewrite_round(g: Graph, outputs: Sequence[Optional[int]]) -> bool:
    g.resolve_args()
    uses = _uses(g, outputs)
    changed = False
    for i in range(len(g.nodes)):
        node = g.nodes[i]
        if g.find(i) != i or node.kind != "op":
            continue
        if node.op in ("reshape", "expand", "permute", "cast") and _drop_identity(g, i, node):
            changed = True
            continue
        if node.op in ("reshape", "expand", "permute") and _merge_views(g, i, node):
            changed = True
            continue
        if node.op in _VIEW_OPS and _normalise_view_chain(g, i, node):
            changed = True
            continue
        if node.op == "reshape" and (_fold_matmul(g, i, node, uses) or _push_reshape(g, i, node, uses)
                                     or _sink_reshape(g, i, node, uses)):
            changed = True
            uses = _uses(g, outputs)
    return changed


def _op_key(node: Node) -> Tuple[Any, ...]:
    args = tuple(("n", a) if isinstance(a, int) else ("l",) + a.key() for a in node.args)
    return (node.op, args, json.dumps(node.attrs, sort_keys=True, default=str), node.shape, str(node.dtype))


def _merge_duplicates(g: Graph, order: List[int]) -> None:
    """Identical ops on identical operands become one (``order`` is topological)."""
    seen: Dict[Tuple[Any, ...], int] = {}
    for i in order:
        node = g.nodes[i]
        node.args = [g.find(a) if isinstance(a, int) else a for a in node.args]
        if node.kind != "op" or node.op.startswith("aten."):
            continue
        key = _op_key(node)
        if key in seen:
            g.replace(i, seen[key])
        else:
            seen[key] = i


def _post_order(g: Graph, outputs: Sequence[Optional[int]], inputs: List[int]) -> List[int]:
    """Every live node, operands before users, depth first from the outputs in order."""
    done: Dict[int, bool] = {}
    order: List[int] = []
    for root in list(inputs) + [o for o in outputs if o is not None]:
        stack: List[Tuple[int, int]] = [(g.find(root), 0)]
        while stack:
            i, k = stack.pop()
            if k == 0 and i in done:
                continue
            args = [a for a in g.nodes[i].args if isinstance(a, int)]
            if k < len(args):
                stack.append((i, k + 1))
                child = g.find(args[k])
                if child not in done:
                    stack.append((child, 0))
                continue
            if i not in done:
                done[i] = True
                order.append(i)
    return order


def _leaf_key(node: Node, position: int) -> Tuple[int, int, str]:
    rank = _LEAF_RANK[node.kind]
    return (rank, node.index if node.index is not None and rank < 3 else position, node.name or "")


def finish(g: Graph, outputs: Sequence[Optional[int]], inputs: List[int], notes: List[str]) -> Dict[str, Any]:
    """Rewrites to a fixed point, merges, drops the dead, numbers and writes the graph's JSON."""
    for _ in range(MAX_ROUNDS):
        if not _rewrite_round(g, outputs):
            break
    g.resolve_args()
    _merge_duplicates(g, _post_order(g, outputs, inputs))
    order = _post_order(g, outputs, inputs)
    position = {i: k for k, i in enumerate(order)}
    leaves = sorted((i for i in order if g.nodes[i].kind != "op"), key=lambda i: _leaf_key(g.nodes[i], position[i]))
    ops = [i for i in order if g.nodes[i].kind == "op"]
    ids = {i: k for k, i in enumerate(leaves + ops)}
    values = [_value_json(g, i, ids) for i in leaves + ops]
    kept = sorted({g.nodes[i].op for i in ops if g.nodes[i].op.startswith("aten.")})
    all_notes = list(notes) + [f"{name}: no canonical op; kept under its ATen name" for name in kept]
    return {"version": 1, "values": values,
            "outputs": [None if o is None else ids[g.find(o)] for o in outputs], "notes": all_notes}


def _value_json(g: Graph, i: int, ids: Dict[int, int]) -> Dict[str, Any]:
    node = g.nodes[i]
    out: Dict[str, Any] = {"id": ids[i], "kind": node.kind}
    if node.kind == "input":
        out.update(index=node.index, name=node.name)
    elif node.kind in ("weight", "buffer"):
        out["name"] = node.name
    elif node.kind == "op":
        out["op"] = node.op
        out["args"] = [ids[a] if isinstance(a, int) else a.to_json() for a in node.args]
        out["attrs"] = node.attrs
    out.update(shape=list(node.shape), dtype=sketch_dtype(node.dtype), strides=list(node.strides))
    if node.kind == "constant" and node.value is not None and numel(node.shape) <= 64:
        out["value"] = node.value
    if node.kind in ("op", "constant"):
        out.update(line=node.line, module=node.module)
    return out


__all__ = ["finish", "Lit"]
