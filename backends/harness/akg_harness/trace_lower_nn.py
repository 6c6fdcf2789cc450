"""ATen calls to canonical ops, continued: layers (norms, convolution, pooling, padding), joins,
factories and the writes (``copy_``, ``fill_``, ``zero_``). Registers into ``trace_lower.HANDLERS``.

Factories: a result of at most ``CONSTANT_MAX_ELEMENTS`` elements is a constant leaf with its value
(so ``torch.ones(3)`` and ``torch.tensor([1., 1., 1.])`` are one graph); a larger one is a ``fill`` or
``arange`` op with its parameters. The tensor a ``*_like`` or ``new_*`` factory was called on is not
an operand: its data is never read.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List, Optional

import torch

from .trace_graph import Lit, Operand, numel, sketch_dtype
from .trace_lower import (CONSTANT_MAX_ELEMENTS, Lowering, generic, handles, is_tensor, norm_dim, plain_number,
                          reshape_to)


def _spatial(low: Lowering, default: int) -> int:
    """How many spatial dims an op works on: from its name (max_pool2d: 2), else ``default``."""
    m = re.search(r"(\d)d", low.name)
    return int(m.group(1)) if m else default


def _per_dim(value: Any, n: int, default: int) -> List[int]:
    if value is None:
        return [default] * n
    if isinstance(value, int):
        return [value] * n
    items = [int(v) for v in value]
    if not items:
        return [default] * n
    return items * n if len(items) == 1 else items


def _with_extra_outputs(low: Lowering, first: int) -> List[Optional[int]]:
    """The canonical node for result 0; results after it (statistics, indices) as ``aten.*``."""
    rest = generic(low) if any(o is not None for o in low.outs[1:]) else [None] * len(low.outs)
    return [first] + rest[1:]


def _number(low: Lowering, value: Any, dtype: torch.dtype) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if dtype.is_floating_point:
        return float(value)
    if dtype == torch.bool:
        return bool(value)
    return int(value) if float(value).is_integer() else float(value)


# ---- norms -------------------------------------------------------------------------------------

@handles("native_layer_norm", "layer_norm")
def _layer_norm(low: Lowering) -> List[Optional[int]]:
    x = low.ref("input")
    attrs = {"normalized_shape": [int(s) for s in low.b["normalized_shape"]], "eps": float(low.b.get("eps", 1e-5))}
    return _with_extra_outputs(low, low.emit("layer_norm", [x, low.opt("weight"), low.opt("bias")], attrs))


@handles("native_batch_norm", "_native_batch_norm_legit", "_native_batch_norm_legit_no_training",
         "_native_batch_norm_legit_functional", "batch_norm", "cudnn_batch_norm", "miopen_batch_norm")
def _batch_norm(low: Lowering) -> List[Optional[int]]:
    x = low.ref("input")
    momentum = low.b.get("momentum", low.b.get("exponential_average_factor"))
    eps = low.b.get("eps", low.b.get("epsilon"))
    attrs = {"training": bool(low.b.get("training", False)),
             "momentum": None if momentum is None else float(momentum),
             "eps": None if eps is None else float(eps)}
    args: List[Operand] = [x, low.opt("weight"), low.opt("bias"), low.opt("running_mean"), low.opt("running_var")]
    return _with_extra_outputs(low, low.emit("batch_norm", args, attrs))


@handles("native_group_norm", "group_norm")
def _group_norm(low: Lowering) -> List[Optional[int]]:
    x = low.ref("input")
    groups = low.b.get("group", low.b.get("num_groups"))
    attrs = {"groups": int(groups), "eps": float(low.b.get("eps", 1e-5))}
    return _with_extra_outputs(low, low.emit("group_norm", [x, low.opt("weight"), low.opt("bias")], attrs))


# ---- convolution and pooling -------------------------------------------------------------------

@handles("convolution", "_convolution", "conv1d", "conv2d", "conv3d")
def _conv(low: Lowering) -> List[Optional[int]]:
    x, w = low.ref("input"), low.ref("weight")
    n = len(low.node(w).shape) - 2
    padding = low.b.get("padding")
    if isinstance(padding, str):
        return None  # type: ignore[return-value] - 'same'/'valid' strings: the generic form keeps them
    transposed = bool(low.b.get("transposed", False))
    attrs = {"stride": _per_dim(low.b.get("stride"), n, 1), "padding": _per_dim(padding, n, 0),
             "dilation": _per_dim(low.b.get("dilation"), n, 1), "groups": int(low.b.get("groups", 1)),
             "transposed": transposed, "output_padding": _per_dim(low.b.get("output_padding"), n, 0)}
    return [low.emit("conv", [x, w, low.opt("bias")], attrs)]


@handles("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "max_pool2d_with_indices",
         "max_pool3d_with_indices")
def _max_pool(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    n = _spatial(low, 2)
    kernel = _per_dim(low.b["kernel_size"], n, 1)
    stride = low.b.get("stride")
    attrs = {"kernel": kernel, "stride": _per_dim(stride, n, 1) if stride else list(kernel),
             "padding": _per_dim(low.b.get("padding"), n, 0), "dilation": _per_dim(low.b.get("dilation"), n, 1),
             "ceil_mode": bool(low.b.get("ceil_mode", False))}
    return _with_extra_outputs(low, low.emit("max_pool", [x], attrs))


@handles("avg_pool1d", "avg_pool2d", "avg_pool3d")
def _avg_pool(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    n = _spatial(low, 2)
    kernel = _per_dim(low.b["kernel_size"], n, 1)
    stride = low.b.get("stride")
    divisor = low.b.get("divisor_override")
    attrs = {"kernel": kernel, "stride": _per_dim(stride, n, 1) if stride else list(kernel),
             "padding": _per_dim(low.b.get("padding"), n, 0), "ceil_mode": bool(low.b.get("ceil_mode", False)),
             "count_include_pad": bool(low.b.get("count_include_pad", True)),
             "divisor_override": None if divisor is None else int(divisor)}
    return [low.emit("avg_pool", [x], attrs)]


@handles("adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "_adaptive_avg_pool2d",
         "_adaptive_avg_pool3d")
def _adaptive_avg_pool(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    n = _spatial(low, 2)
    return [low.emit("adaptive_avg_pool", [low.ref("self")], {"output_size": [int(s) for s in out.shape[-n:]]})]


_PAD_MODES = {"reflection": "reflect", "replication": "replicate"}


@handles("constant_pad_nd", "pad", "reflection_pad1d", "reflection_pad2d", "reflection_pad3d",
         "replication_pad1d", "replication_pad2d", "replication_pad3d", "_pad_circular")
def _pad(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    dtype = low.node(x).dtype
    pad = [int(p) for p in (low.b.get("pad") if "pad" in low.b else low.b.get("padding"))]
    if low.name in ("constant_pad_nd", "pad"):
        mode = low.b.get("mode", "constant") if low.name == "pad" else "constant"
    elif low.name == "_pad_circular":
        mode = "circular"
    else:
        mode = _PAD_MODES[low.name.split("_")[0]]
    value = low.b.get("value") if mode == "constant" else None
    if mode == "constant":
        value = _number(low, 0 if value is None else value, dtype)
    return [low.emit("pad", [x], {"pad": pad, "mode": mode, "value": value})]


# ---- joins and indexing ------------------------------------------------------------------------

@handles("cat", "concat", "concatenate")
def _cat(low: Lowering) -> List[Optional[int]]:
    tensors = [t for t in low.b["tensors"] if is_tensor(t)]
    rank = max(t.dim() for t in tensors)
    # torch.cat skips 1-D empty tensors next to higher-rank ones (a legacy rule).
    kept = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0 and rank > 1)]
    dim = norm_dim(low.b.get("dim", 0), rank)
    refs: List[Operand] = [low.ctx.ref(t) for t in kept]
    if len(refs) == 1:
        return [refs[0]]  # type: ignore[list-item]
    return [low.emit("cat", refs, {"dim": dim})]


@handles("stack")
def _stack(low: Lowering) -> List[Optional[int]]:
    tensors = [t for t in low.b["tensors"] if is_tensor(t)]
    dim = norm_dim(low.b.get("dim", 0), tensors[0].dim() + 1)
    parts: List[Operand] = []
    for t in tensors:
        x = low.ctx.ref(t)
        shape = list(low.node(x).shape)
        parts.append(low.view("reshape", x, {"shape": shape[:dim] + [1] + shape[dim:]}))
    if len(parts) == 1:
        return [reshape_to(low, parts[0], low.outs[0].shape)]  # type: ignore[arg-type, union-attr]
    return [low.emit("cat", parts, {"dim": dim})]


@handles("gather")
def _gather(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    return [low.emit("gather", [x, low.ref("index")], {"dim": norm_dim(low.b["dim"], len(low.node(x).shape))})]


@handles("tril", "triu")
def _tri(low: Lowering) -> List[Optional[int]]:
    return [low.emit(low.name, [low.ref("self")], {"diagonal": int(low.b.get("diagonal", 0))})]


# ---- factories and writes ----------------------------------------------------------------------

def _factory(low: Lowering, op: str, attrs: Dict[str, Any]) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    if out.numel() <= CONSTANT_MAX_ELEMENTS:
        return [low.ctx.constant(out)]
    return [low.emit(op, [], attrs)]


_FILL_VALUES = {"ones": 1, "zeros": 0, "ones_like": 1, "zeros_like": 0, "new_ones": 1, "new_zeros": 0}


@handles("ones", "zeros", "full", "ones_like", "zeros_like", "full_like", "new_ones", "new_zeros", "new_full",
         "scalar_tensor", "fill_", "zero_", "fill")
def _fill(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    if low.name in _FILL_VALUES:
        value: Any = _FILL_VALUES[low.name]
    elif low.name == "zero_":
        value = 0
    elif low.name == "scalar_tensor":
        value = low.b["s"]
    elif low.name in ("fill_", "fill"):
        value = low.b["value"]
    else:
        value = low.b["fill_value"]
    if is_tensor(value):  # fill_(tensor): that value everywhere
        v = low.ctx.ref(value)
        if low.node(v).dtype != out.dtype:
            v = low.emit_meta("cast", [v], {"dtype": sketch_dtype(out.dtype)}, low.node(v).shape, out.dtype)
        if low.node(v).shape == tuple(out.shape):
            return [v]
        if numel(low.node(v).shape) == 1:
            v = reshape_to(low, v, [1] * len(out.shape)) if low.node(v).shape != () else v
        return [low.emit("expand", [v], {"shape": [int(s) for s in out.shape]})]
    return _factory(low, "fill", {"shape": [int(s) for s in out.shape], "value": _number(low, value, out.dtype)})


@handles("arange")
def _arange(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    start, end, step = low.b.get("start"), low.b.get("end"), low.b.get("step")
    attrs = {"start": _number(low, 0 if start is None else start, out.dtype),
             "end": _number(low, end, out.dtype), "step": _number(low, 1 if step is None else step, out.dtype)}
    return _factory(low, "arange", attrs)


@handles("empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided")
def _empty(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    return [low.emit("aten.empty", [], {"shape": [int(s) for s in out.shape]})]


@handles("copy_", "copy")
def _copy(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    assert out is not None
    src = low.ref("src")
    node = low.node(src)
    if node.dtype != out.dtype:
        src = low.emit_meta("cast", [src], {"dtype": sketch_dtype(out.dtype)}, node.shape, out.dtype)
    if low.node(src).shape != tuple(out.shape):
        return [low.emit("expand", [src], {"shape": [int(s) for s in out.shape]})]
    return [src]


__all__ = ["Lit", "plain_number"]
