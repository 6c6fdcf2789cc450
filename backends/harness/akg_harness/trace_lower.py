"""ATen calls to canonical ops (README.md, "probe", "graph": the vocabulary).

Each recorded ATen call is bound to its schema (every argument by name, defaults filled in) and
handed to the handler of its overload-free name; the handler emits canonical nodes through the
context (``trace.Recorder``) and returns one node index per tensor the call returned (None where a
result has no node). In-place and ``out=`` forms reach the handler of their plain op: the recorder
rebinds the written tensor to the node the handler returns. A name without a handler becomes
``aten.<name>`` with its tensors as operands and everything else as attrs.

Handlers see operands as torch tensors and resolve them with ``ctx.ref``; shapes come from the
nodes, so a handler never reads tensor data (only the results of factories, for constants).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import torch

from .trace_graph import Lit, Operand, matmul_shape, sketch_dtype, view_meta

# A factory whose result has at most this many elements becomes a constant leaf with its value.
CONSTANT_MAX_ELEMENTS = 64
# Schema arguments that say where or how a result is stored, never what it is.
_PLACEMENT_ARGS = {"device", "layout", "pin_memory", "memory_format", "non_blocking", "generator", "out"}
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def bind(func: Any, args: Sequence[Any], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    """Every schema argument of ``func`` by name: given positionally, by keyword, or its default."""
    bound: Dict[str, Any] = {}
    for i, arg in enumerate(func._schema.arguments):
        if i < len(args) and not arg.kwarg_only:
            bound[arg.name] = args[i]
        elif arg.name in kwargs:
            bound[arg.name] = kwargs[arg.name]
        elif arg.has_default_value():
            bound[arg.name] = arg.default_value
        else:
            bound[arg.name] = None
    return bound


def is_tensor(v: Any) -> bool:
    return isinstance(v, torch.Tensor)


def norm_dim(d: int, rank: int) -> int:
    return int(d) % rank if rank > 0 else 0


def norm_dims(dims: Any, rank: int) -> List[int]:
    """Sorted, non-negative dims; None or [] means every dim (torch's rule for reductions)."""
    if dims is None:
        return list(range(rank))
    if isinstance(dims, int):
        dims = [dims]
    dims = list(dims)
    if not dims:
        return list(range(rank))
    return sorted({norm_dim(d, rank) for d in dims})


def plain_number(v: Any) -> Any:
    """A JSON-ready form of a non-tensor attribute."""
    if isinstance(v, torch.dtype):
        return sketch_dtype(v)
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, (list, tuple)):
        return [plain_number(x) for x in v]
    if isinstance(v, torch.Size):
        return [int(x) for x in v]
    try:
        return int(v)
    except Exception:  # noqa: BLE001 - memory formats, anything else: its name
        return str(v)


class Lowering:
    """The per-call view a handler works with."""

    def __init__(self, ctx: Any, name: str, overload: str, b: Dict[str, Any], outs: List[Optional[torch.Tensor]],
                 schema: Any) -> None:
        self.ctx = ctx
        self.name = name
        self.overload = overload
        self.b = b
        self.outs = outs
        self.schema = schema

    # operands
    def ref(self, key: str) -> int:
        return self.ctx.ref(self.b[key])

    def opt(self, key: str) -> Operand:
        v = self.b.get(key)
        return self.ctx.ref(v) if is_tensor(v) else Lit(None)

    def node(self, i: int) -> Any:
        return self.ctx.graph[i]

    def rank(self, key: str = "self") -> int:
        return len(self.node(self.ref(key)).shape)

    def lit(self, v: Any, like: Optional[int] = None) -> Lit:
        """A number operand; an int meeting a floating tensor is written as a float."""
        if isinstance(v, bool) or v is None:
            return Lit(v)
        if isinstance(v, int) and like is not None and self.node(like).dtype.is_floating_point:
            return Lit(float(v))
        if isinstance(v, (int, float)):
            return Lit(v)
        return Lit(float(v))

    def operand(self, v: Any, like: Optional[int] = None) -> Operand:
        return self.ctx.ref(v) if is_tensor(v) else self.lit(v, like)

    # results
    def emit(self, op: str, args: List[Operand], attrs: Optional[Dict[str, Any]] = None, out: int = 0) -> int:
        """A node with the metadata of this call's result ``out``."""
        return self.ctx.emit(op, args, attrs or {}, like=self.outs[out])

    def view(self, op: str, x: int, attrs: Dict[str, Any]) -> int:
        """A permute/reshape/expand of node ``x`` the call never materialised."""
        shape, strides = view_meta(self.node(x), op, attrs)
        return self.ctx.emit(op, [x], attrs, shape=shape, dtype=self.node(x).dtype, strides=strides)

    def emit_meta(self, op: str, args: List[Operand], attrs: Dict[str, Any], shape: Sequence[int],
                  dtype: torch.dtype) -> int:
        """An intermediate node the call never materialised: contiguous strides."""
        return self.ctx.emit(op, args, attrs, shape=shape, dtype=dtype)


Handler = Callable[[Lowering], List[Optional[int]]]
HANDLERS: Dict[str, Handler] = {}


def handles(*names: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for n in names:
            HANDLERS[n] = fn
        return fn
    return register


def lower_call(ctx: Any, func: Any, b: Dict[str, Any], outs: List[Optional[torch.Tensor]]) -> List[Optional[int]]:
    """Canonical nodes for one ATen call; one entry per tensor result."""
    packet = func.overloadpacket.__name__
    name = packet[:-1] if packet.endswith("_") and packet[:-1] in HANDLERS and packet not in HANDLERS else packet
    low = Lowering(ctx, name, func._overloadname, b, outs, func._schema)
    handler = HANDLERS.get(name)
    if handler is not None:
        try:
            result = handler(low)
        except LookupError as exc:  # a form of the op the handler does not know: keep it as ATen
            ctx.notes.append(f"aten.{name}: not lowered ({type(exc).__name__}: {exc})")
            result = None
        if result is not None:
            return result
    return generic(low)


def generic(low: Lowering) -> List[Optional[int]]:
    """``aten.<name>``: tensors (and Scalars) as operands, the rest as attrs; one node per result."""
    name = low.name[:-1] if low.name.endswith("_") and not low.name.endswith("__") else low.name
    args: List[Operand] = []
    attrs: Dict[str, Any] = {}
    for arg in low.schema.arguments:
        v = low.b.get(arg.name)
        type_text = str(arg.type)
        if arg.name in _PLACEMENT_ARGS:
            continue
        if "Tensor" in type_text:
            if isinstance(v, (list, tuple)):
                args.extend(low.ctx.ref(t) if is_tensor(t) else Lit(None) for t in v)
            else:
                args.append(low.ctx.ref(v) if is_tensor(v) else Lit(None))
        elif "Scalar" in type_text and not type_text.startswith("List"):
            args.append(low.lit(v))
        else:
            attrs[arg.name] = plain_number(v)
    produced = [o for o in low.outs if o is not None]
    results: List[Optional[int]] = []
    for k, out in enumerate(low.outs):
        if out is None:
            results.append(None)
            continue
        extra = {"output": k} if len(produced) > 1 else {}
        results.append(low.ctx.emit("aten." + name, args, {**attrs, **extra}, like=out))
    return results


# ---- aliases and views -------------------------------------------------------------------------

@handles("alias", "detach", "clone", "contiguous", "lift", "lift_fresh", "lift_fresh_copy", "resolve_conj",
         "resolve_neg", "_conj", "positive")
def _alias(low: Lowering) -> List[Optional[int]]:
    return [low.ref("self")]


@handles("_to_copy", "to", "_to_copy_")
def _to_copy(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    out = low.outs[0]
    if out is None or out.dtype == low.node(x).dtype:
        return [x]
    return [low.emit("cast", [x], {"dtype": sketch_dtype(out.dtype)})]


def reshape_to(low: Lowering, x: int, shape: Sequence[int]) -> int:
    if tuple(shape) == low.node(x).shape:
        return x
    return low.emit("reshape", [x], {"shape": [int(s) for s in shape]})


@handles("view", "_unsafe_view", "_reshape_alias", "reshape", "unsqueeze", "squeeze", "flatten", "unflatten",
         "view_as", "reshape_as", "_reshape_copy", "view_copy", "unsqueeze_copy", "squeeze_copy")
def _reshape(low: Lowering) -> List[Optional[int]]:
    out = low.outs[0]
    if out is None:
        return [None]
    return [reshape_to(low, low.ref("self"), out.shape)]


def permute_by(low: Lowering, x: int, perm: Sequence[int]) -> int:
    if list(perm) == list(range(len(perm))):
        return x
    return low.emit("permute", [x], {"perm": [int(p) for p in perm]})


@handles("permute", "permute_copy")
def _permute(low: Lowering) -> List[Optional[int]]:
    rank = low.rank()
    return [permute_by(low, low.ref("self"), [norm_dim(d, rank) for d in low.b["dims"]])]


@handles("t", "numpy_T", "mT", "transpose", "swapaxes", "swapdims", "t_copy", "transpose_copy")
def _transpose(low: Lowering) -> List[Optional[int]]:
    rank = low.rank()
    perm = list(range(rank))
    if low.name in ("t", "t_copy"):
        perm.reverse()
    elif low.name == "numpy_T":
        perm.reverse()
    else:
        a = norm_dim(low.b.get("dim0", low.b.get("axis0", -2) if low.name != "mT" else -2), rank)
        c = norm_dim(low.b.get("dim1", low.b.get("axis1", -1) if low.name != "mT" else -1), rank)
        perm[a], perm[c] = perm[c], perm[a]
    return [permute_by(low, low.ref("self"), perm)]


@handles("expand", "expand_copy", "broadcast_to")
def _expand(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    out = low.outs[0]
    if out is None or tuple(out.shape) == low.node(x).shape:
        return [x]
    return [low.emit("expand", [x], {"shape": [int(s) for s in out.shape]})]


def slice_of(low: Lowering, x: int, dim: int, start: Any, end: Any, step: int, out: int = 0) -> int:
    size = low.node(x).shape[dim]
    start = 0 if start is None else int(start)
    end = size if end is None else int(end)
    start = min(max(start + size if start < 0 else start, 0), size)
    end = min(max(end + size if end < 0 else end, 0), size)
    end = max(end, start)
    if start == 0 and end == size and step == 1:
        return x
    return low.emit("slice", [x], {"dim": dim, "start": start, "end": end, "step": int(step)}, out=out)


@handles("slice", "slice_copy", "narrow")
def _slice(low: Lowering) -> List[Optional[int]]:
    rank = low.rank()
    dim = norm_dim(low.b["dim"], rank)
    if low.name == "narrow":
        start = int(low.b["start"])
        return [slice_of(low, low.ref("self"), dim, start, start + int(low.b["length"]), 1)]
    return [slice_of(low, low.ref("self"), dim, low.b["start"], low.b["end"], low.b.get("step") or 1)]


@handles("select", "select_copy")
def _select(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    rank = len(low.node(x).shape)
    dim = norm_dim(low.b["dim"], rank)
    index = int(low.b["index"])
    if index < 0:
        index += low.node(x).shape[dim]
    return [low.emit("select", [x], {"dim": dim, "index": index})]


@handles("split", "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "chunk", "tensor_split")
def _split(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    dim = norm_dim(low.b.get("dim", 0), len(low.node(x).shape))
    results: List[Optional[int]] = []
    start = 0
    for k, out in enumerate(low.outs):
        if out is None:
            results.append(None)
            continue
        length = int(out.shape[dim])
        results.append(slice_of(low, x, dim, start, start + length, 1, out=k))
        start += length
    return results


@handles("unbind")
def _unbind(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    dim = norm_dim(low.b.get("dim", 0), len(low.node(x).shape))
    return [low.emit("select", [x], {"dim": dim, "index": k}, out=k) if o is not None else None
            for k, o in enumerate(low.outs)]


# ---- GEMM --------------------------------------------------------------------------------------

def matmul_out(low: Lowering, a: int, b: int) -> int:
    shape = matmul_shape(low.node(a).shape, low.node(b).shape)
    out = low.outs[0]
    if out is not None and shape == tuple(out.shape):
        return low.emit_meta("matmul", [a, b], {}, shape, out.dtype)
    raise LookupError(f"aten.{low.name}: operands {low.node(a).shape} and {low.node(b).shape} do not make a matmul")


@handles("mm", "bmm", "matmul", "mv", "dot", "vdot", "inner")
def _mm(low: Lowering) -> List[Optional[int]]:
    if low.name == "inner" and low.rank() > 1:
        return generic(low)
    a, b = [low.ctx.ref(v) for v in low.b.values() if is_tensor(v)][:2]
    matmul_out(low, a, b)
    return [low.emit("matmul", [a, b])]


@handles("addmm", "baddbmm", "addmv", "addbmm")
def _addmm(low: Lowering) -> List[Optional[int]]:
    if low.name == "addbmm":
        return generic(low)
    names = {"addmm": ("mat1", "mat2"), "baddbmm": ("batch1", "batch2"), "addmv": ("mat", "vec")}[low.name]
    a, b = low.ref(names[0]), low.ref(names[1])
    bias = low.ref("self")
    alpha, beta = low.b.get("alpha", 1), low.b.get("beta", 1)
    out = low.outs[0]
    assert out is not None
    mm = matmul_out(low, a, b)
    if alpha != 1:
        mm = low.ctx.emit("mul", [mm, low.lit(alpha, mm)], {}, shape=low.node(mm).shape, dtype=out.dtype)
    if beta == 0:
        return [low.ctx.emit(low.node(mm).op, low.node(mm).args, low.node(mm).attrs, like=out)]
    if beta != 1:
        bias = low.ctx.emit("mul", [bias, low.lit(beta, bias)], {}, shape=low.node(bias).shape,
                            dtype=low.node(bias).dtype)
    return [low.emit("add", [mm, bias])]


@handles("linear")
def _linear(low: Lowering) -> List[Optional[int]]:
    w = low.ref("weight")
    wshape = low.node(w).shape
    wt = low.view("permute", w, {"perm": [1, 0]}) if len(wshape) == 2 else w
    x = low.ref("input")
    out = low.outs[0]
    assert out is not None
    if not is_tensor(low.b.get("bias")):
        return [low.emit("matmul", [x, wt])]
    mm = low.ctx.emit("matmul", [x, wt], {}, shape=tuple(out.shape), dtype=out.dtype)
    return [low.emit("add", [mm, low.ref("bias")])]


# ---- elementwise -------------------------------------------------------------------------------

UNARY = {"relu", "sigmoid", "tanh", "exp", "log", "abs", "neg", "sqrt", "rsqrt", "sin", "cos", "erf", "sign",
         "floor", "reciprocal", "silu", "hardsigmoid", "hardswish", "mish", "softsign", "selu"}
_UNARY_ALIASES = {"absolute": "abs", "negative": "neg", "sgn": "sign"}


@handles(*UNARY, *_UNARY_ALIASES)
def _unary(low: Lowering) -> List[Optional[int]]:
    return [low.emit(_UNARY_ALIASES.get(low.name, low.name), [low.ref("self")])]


@handles("round")
def _round(low: Lowering) -> List[Optional[int]]:
    if low.b.get("decimals") not in (None, 0):
        return generic(low)
    return [low.emit("round", [low.ref("self")])]


@handles("gelu")
def _gelu(low: Lowering) -> List[Optional[int]]:
    return [low.emit("gelu", [low.ref("self")], {"approximate": low.b.get("approximate") or "none"})]


@handles("softplus")
def _softplus(low: Lowering) -> List[Optional[int]]:
    return [low.emit("softplus", [low.ref("self")],
                     {"beta": float(low.b.get("beta", 1)), "threshold": float(low.b.get("threshold", 20))})]


@handles("elu")
def _elu(low: Lowering) -> List[Optional[int]]:
    alpha = float(low.b.get("alpha", 1))
    scale, input_scale = float(low.b.get("scale", 1)), float(low.b.get("input_scale", 1))
    x = low.ref("self")
    if abs(alpha - SELU_ALPHA) < 1e-6 and abs(scale - SELU_SCALE) < 1e-6 and input_scale == 1:
        return [low.emit("selu", [x])]
    attrs: Dict[str, Any] = {"alpha": alpha}
    if scale != 1 or input_scale != 1:
        attrs.update(scale=scale, input_scale=input_scale)
    return [low.emit("elu", [x], attrs)]


@handles("leaky_relu")
def _leaky_relu(low: Lowering) -> List[Optional[int]]:
    return [low.emit("leaky_relu", [low.ref("self")], {"negative_slope": float(low.b.get("negative_slope", 0.01))})]


@handles("hardtanh", "relu6")
def _hardtanh(low: Lowering) -> List[Optional[int]]:
    lo, hi = (0.0, 6.0) if low.name == "relu6" else (float(low.b.get("min_val", -1)), float(low.b.get("max_val", 1)))
    return [low.emit("hardtanh", [low.ref("self")], {"min": lo, "max": hi})]


def _bound(v: Any, like: int, low: Lowering) -> Any:
    return None if v is None else low.lit(v, like).value


@handles("clamp", "clip", "clamp_min", "clamp_max")
def _clamp(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    if low.name == "clamp_min":
        lo, hi = low.b.get("min"), None
    elif low.name == "clamp_max":
        lo, hi = None, low.b.get("max")
    else:
        lo, hi = low.b.get("min"), low.b.get("max")
    if is_tensor(lo) or is_tensor(hi):
        out = low.outs[0]
        assert out is not None
        y = x
        if lo is not None:
            op_args = [y, low.operand(lo, x)]
            y = low.emit("maximum", op_args) if hi is None else low.emit_meta("maximum", op_args, {}, out.shape, out.dtype)
        if hi is not None:
            y = low.emit("minimum", [y, low.operand(hi, x)])
        return [y]
    if hi is None and lo is not None and not isinstance(lo, bool) and lo == 0:
        return [low.emit("relu", [x])]
    return [low.emit("clamp", [x], {"min": _bound(lo, x, low), "max": _bound(hi, x, low)})]


BINARY = {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "fmod", "remainder", "eq", "ne", "lt", "le",
          "gt", "ge", "logical_and", "logical_or"}
_BINARY_ALIASES = {"true_divide": "div", "multiply": "mul", "subtract": "sub", "divide": "div",
                   "greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne",
                   "fmax": "maximum", "fmin": "minimum"}


def _binary_operands(low: Lowering, first: str, second: str) -> List[Operand]:
    a, b = low.b[first], low.b[second]
    like = low.ctx.ref(a) if is_tensor(a) else (low.ctx.ref(b) if is_tensor(b) else None)
    return [low.operand(a, like), low.operand(b, like)]


def _scaled(low: Lowering, operand: Operand, alpha: Any, like: Optional[int]) -> Operand:
    """``alpha * operand`` (alpha != 1): folded into a number, else a mul node."""
    if isinstance(operand, Lit):
        return low.lit(operand.value * alpha, like)
    node = low.node(operand)
    out_dtype = low.outs[0].dtype if low.outs[0] is not None else node.dtype
    return low.ctx.emit("mul", [operand, low.lit(alpha, operand)], {}, shape=node.shape, dtype=out_dtype)


@handles(*BINARY, *_BINARY_ALIASES, "rsub")
def _binary(low: Lowering) -> List[Optional[int]]:
    name = _BINARY_ALIASES.get(low.name, low.name)
    if name == "div" and low.b.get("rounding_mode") is not None:
        return generic(low)
    first = "self" if "self" in low.b else next(iter(low.b))
    second = "other" if "other" in low.b else ("exponent" if "exponent" in low.b else list(low.b)[1])
    if first not in low.b or second not in low.b:
        return generic(low)
    a, b = _binary_operands(low, first, second)
    like = a if isinstance(a, int) else (b if isinstance(b, int) else None)
    alpha = low.b.get("alpha", 1)
    if name == "rsub":  # other - alpha * self
        if alpha != 1:
            a = _scaled(low, a, alpha, like)
        return [low.emit("sub", [b, a])]
    if name in ("add", "sub") and alpha is not None and alpha != 1:
        b = _scaled(low, b, alpha, like)
    return [low.emit(name, [a, b])]


@handles("max", "min")
def _max_min(low: Lowering) -> List[Optional[int]]:
    if "other" in low.b:  # torch.max(a, b)
        return [low.emit("maximum" if low.name == "max" else "minimum", _binary_operands(low, "self", "other"))]
    x = low.ref("self")
    rank = len(low.node(x).shape)
    if "dim" not in low.b:
        return [low.emit("amax" if low.name == "max" else "amin", [x], {"dims": list(range(rank)), "keepdim": False})]
    attrs = {"dims": norm_dims(low.b["dim"], rank), "keepdim": bool(low.b.get("keepdim", False))}
    values = low.emit("amax" if low.name == "max" else "amin", [x], attrs, out=0)
    indices = low.emit("argmax" if low.name == "max" else "argmin", [x], attrs, out=1) if low.outs[1] is not None else None
    return [values, indices]


@handles("where")
def _where(low: Lowering) -> List[Optional[int]]:
    if "self" not in low.b or "other" not in low.b:
        return generic(low)
    cond = low.ref("condition")
    a, b = _binary_operands(low, "self", "other")
    return [low.emit("where", [cond, a, b])]


@handles("masked_fill")
def _masked_fill(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    return [low.emit("where", [low.ref("mask"), low.operand(low.b["value"], x), x])]


@handles("square")
def _square(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    return [low.emit("pow", [x, low.lit(2, x)])]


# ---- reductions --------------------------------------------------------------------------------

def _cast_first(low: Lowering, x: int) -> int:
    """``dtype=`` of a reduction or scan: the cast it implies, made explicit."""
    dtype = low.b.get("dtype")
    node = low.node(x)
    if isinstance(dtype, torch.dtype) and dtype != node.dtype:
        return low.ctx.emit("cast", [x], {"dtype": sketch_dtype(dtype)}, shape=node.shape, dtype=dtype)
    return x


@handles("sum", "mean", "amax", "amin", "prod", "logsumexp", "nansum")
def _reduce(low: Lowering) -> List[Optional[int]]:
    if low.name == "nansum":
        return generic(low)
    x = _cast_first(low, low.ref("self"))
    rank = len(low.node(x).shape)
    return [low.emit(low.name, [x], {"dims": norm_dims(low.b.get("dim"), rank),
                                     "keepdim": bool(low.b.get("keepdim", False))})]


def _correction(low: Lowering) -> Any:
    if "correction" in low.b:
        c = low.b["correction"]
        c = 1 if c is None else c
    else:
        unbiased = low.b.get("unbiased")
        c = 0 if unbiased is False else 1
    return int(c) if float(c).is_integer() else float(c)


@handles("var", "std", "var_mean", "std_mean")
def _var(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    rank = len(low.node(x).shape)
    attrs = {"dims": norm_dims(low.b.get("dim"), rank), "keepdim": bool(low.b.get("keepdim", False)),
             "correction": _correction(low)}
    op = low.name.split("_")[0]
    results: List[Optional[int]] = [low.emit(op, [x], attrs, out=0)]
    if low.name.endswith("_mean"):
        results.append(low.emit("mean", [x], {"dims": attrs["dims"], "keepdim": attrs["keepdim"]}, out=1)
                       if low.outs[1] is not None else None)
    return results


@handles("argmax", "argmin")
def _arg(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    rank = len(low.node(x).shape)
    return [low.emit(low.name, [x], {"dims": norm_dims(low.b.get("dim"), rank),
                                     "keepdim": bool(low.b.get("keepdim", False))})]


@handles("cumsum", "cumprod")
def _scan(low: Lowering) -> List[Optional[int]]:
    x = _cast_first(low, low.ref("self"))
    return [low.emit(low.name, [x], {"dim": norm_dim(low.b["dim"], len(low.node(x).shape))})]


@handles("_softmax", "softmax", "_log_softmax", "log_softmax")
def _softmax(low: Lowering) -> List[Optional[int]]:
    x = low.ref("self")
    if low.name in ("softmax", "log_softmax"):
        x = _cast_first(low, x)
    return [low.emit(low.name.lstrip("_"), [x], {"dim": norm_dim(low.b["dim"], len(low.node(x).shape))})]
