"""The operations of the Unified Sketch, on interpreter values (language reference, "Semantics").

Operands are tiles (sketch_values.Tile) or Python numbers (scalars). Rules shared by every
operation here:

* Elementwise formulas on float tiles run in float64 and each result is rounded once to the
  operand's dtype (f16 and bf16 thus compute in more than f32, as the reference allows; for
  + - * / and sqrt the result is the same as native arithmetic in the dtype). On integer tiles the
  integer-exact operations (neg, abs, relu, relu6, sign, clamp, hardtanh, floor, round, + - * // %
  & | ^ << >>, min, max) run in the tile's own type (wrapping like machine integers); every other
  formula runs in float64 and is converted back (round to nearest even, saturating).
* A scalar operand of a tile operation is first converted to the tile's dtype (by the cast rules),
  except in comparisons, which compare exact values.
* Sums, means, products, scans, softmax and products of matrices accumulate in f32 (f64 for f64
  operands); max, min and arg-reductions are exact.
* Every operation returns a new tile: no result shares memory with an operand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .sketch_values import (DTypeName, Scalar, SketchError, Tile, convert, convert_scalar, dtype_from_name,
                            is_float, is_int, make_tile)


@dataclass(frozen=True)
class OpInfo:
    """Arity of an operation (positional inputs, destination excluded), as in engine/sketch/sketch_ops.c."""

    category: str
    min_args: int
    max_args: int


def _table() -> Dict[str, OpInfo]:
    t: Dict[str, OpInfo] = {}
    unary = {"neg": 1, "abs": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1, "sqrt": 1, "rsqrt": 1, "tanh": 1,
             "sigmoid": 1, "relu": 1, "relu6": 1, "leaky_relu": 2, "gelu": 1, "gelu_tanh": 1, "silu": 1,
             "mish": 1, "softplus": 3, "elu": 2, "selu": 1, "hardtanh": 3, "hardsigmoid": 1, "hardswish": 1,
             "softsign": 1, "sin": 1, "cos": 1, "erf": 1, "sign": 1, "recip": 1, "floor": 1, "round": 1,
             "clamp": 3}
    for name, mx in unary.items():
        t[name] = OpInfo("unary", 1, mx)
    for name in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "logical_and", "logical_or"):
        t[name] = OpInfo("binary", 2, 2)
    for name in ("lt", "le", "gt", "ge", "eq", "ne"):
        t[name] = OpInfo("cmp", 2, 2)
    t["where"] = OpInfo("where", 3, 3)
    for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_mean", "reduce_prod", "argmax", "argmin",
                 "reduce_argmax"):
        t[name] = OpInfo("reduce", 1, 2)
    for name in ("cumsum", "cumprod", "local_cumsum", "local_cumprod"):
        t[name] = OpInfo("scan", 1, 2)
    t["softmax"] = OpInfo("softmax", 1, 2)
    t["log_softmax"] = OpInfo("softmax", 1, 2)
    t["gemm"] = OpInfo("gemm", 2, 3)
    t["dot"] = OpInfo("dot", 2, 2)
    t["transpose"] = OpInfo("transpose", 1, 2)
    t["cast"] = OpInfo("cast", 2, 2)
    t["fill"] = OpInfo("fill", 2, 2)
    t["zeros"] = OpInfo("zeros", 1, 1)
    t["arange"] = OpInfo("arange", 1, 2)
    t["gather"] = OpInfo("gather", 2, 3)
    t["ceil"] = OpInfo("index", 1, 2)
    t["min"] = OpInfo("index", 1, 8)
    t["max"] = OpInfo("index", 1, 8)
    t["floor_div"] = OpInfo("index", 2, 2)
    return t


OPS: Dict[str, OpInfo] = _table()

Args = List[Any]
Kwargs = Dict[str, Any]


# ---- helpers ----------------------------------------------------------------------------------------


def need_tile(value: Any, op: str) -> Tile:
    if not isinstance(value, Tile):
        raise SketchError(f"{op}() needs a tile operand, got {type(value).__name__}")
    return value


def scalar_dtype(value: Scalar) -> str:
    if isinstance(value, bool):
        return "bool"
    return "i64" if isinstance(value, int) else "f32"


def is_scalar(value: Any) -> bool:
    return isinstance(value, (bool, int, float)) and not isinstance(value, Tile)


def _number(value: Any, op: str, what: str) -> Scalar:
    if isinstance(value, Tile) and value.data is not None and value.data.size == 1:
        return value.data.reshape(-1)[0].item()
    if not is_scalar(value):
        raise SketchError(f"{op}() {what} must be a number, got {type(value).__name__}")
    return value


def _f64(tile: Tile) -> np.ndarray:
    assert tile.data is not None
    return tile.data.astype(np.float64)


def _acc_type(dtype: Optional[str]) -> Any:
    return np.float64 if dtype == "f64" else np.float32


def _arg(args: Args, kwargs: Kwargs, pos: int, names: Sequence[str], default: Any) -> Any:
    for name in names:
        if name in kwargs:
            return kwargs[name]
    return args[pos] if len(args) > pos else default


def _axes(axis: Any, rank: int, op: str) -> Tuple[int, ...]:
    """Normalised axes: None = all; an int or a list of ints, negatives counted from the end."""
    if axis is None:
        return tuple(range(rank))
    items = axis if isinstance(axis, list) else [axis]
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, int) or not -rank <= a < rank:
            raise SketchError(f"{op}(): axis {a!r} is out of range for a rank-{rank} tile")
        out.append(a % rank if rank else 0)
    return tuple(sorted(set(out)))


def _truthy(value: Any) -> bool:
    return bool(value) if value is not None else False


# ---- elementwise unary ------------------------------------------------------------------------------

_SQRT2 = math.sqrt(2.0)
_GELU_TANH_K = math.sqrt(2.0 / math.pi)
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _softplus(v: np.ndarray, beta: float = 1.0, threshold: float = 20.0) -> np.ndarray:
    bv = beta * v
    with np.errstate(over="ignore"):
        soft = np.log1p(np.exp(bv)) / beta
    return np.where(bv > threshold, v, soft)


def _hardsigmoid(v: np.ndarray) -> np.ndarray:
    return np.minimum(np.maximum(v / 6.0 + 0.5, 0.0), 1.0)


def _clamp(v: np.ndarray, lo: Optional[Scalar], hi: Optional[Scalar]) -> np.ndarray:
    """min(max(v, lo), hi); NaN stays NaN (np.maximum and np.minimum propagate it)."""
    if lo is not None:
        v = np.maximum(v, lo)
    if hi is not None:
        v = np.minimum(v, hi)
    return v


def _unary_formula(name: str, args: Args, kwargs: Kwargs) -> Callable[[np.ndarray], np.ndarray]:
    """The formula of unary op ``name`` with its scalar parameters bound."""
    if name == "leaky_relu":
        slope = float(_number(_arg(args, kwargs, 1, ("slope", "negative_slope"), 0.01), name, "slope"))
        return lambda v: np.where(v >= 0, v, slope * v)
    if name == "softplus":
        beta = float(_number(_arg(args, kwargs, 1, ("beta",), 1.0), name, "beta"))
        threshold = float(_number(_arg(args, kwargs, 2, ("threshold",), 20.0), name, "threshold"))
        return lambda v: _softplus(v, beta, threshold)
    if name == "elu":
        alpha = float(_number(_arg(args, kwargs, 1, ("alpha",), 1.0), name, "alpha"))
        return lambda v: np.where(v > 0, v, alpha * np.expm1(np.minimum(v, 0.0)))
    if name in ("hardtanh", "clamp"):
        lo_default, hi_default = (-1.0, 1.0) if name == "hardtanh" else (None, None)
        lo_names = ("lo", "min_val") if name == "hardtanh" else ("lo", "min")
        hi_names = ("hi", "max_val") if name == "hardtanh" else ("hi", "max")
        lo = _arg(args, kwargs, 1, lo_names, lo_default)
        hi = _arg(args, kwargs, 2, hi_names, hi_default)
        lo = None if lo is None else _number(lo, name, "lower bound")
        hi = None if hi is None else _number(hi, name, "upper bound")
        return lambda v: _clamp(v, lo, hi)
    simple: Dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "neg": lambda v: -v,
        "abs": np.abs,
        "exp": np.exp,
        "exp2": np.exp2,
        "log": np.log,
        "log2": np.log2,
        "sqrt": np.sqrt,
        "rsqrt": lambda v: 1.0 / np.sqrt(v),
        "tanh": np.tanh,
        "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
        "relu": lambda v: np.where(v > 0, v, np.where(v == v, 0, v)),
        "relu6": lambda v: _clamp(v, 0, 6),
        "gelu": lambda v: v * 0.5 * (1.0 + _erf(v / _SQRT2)),
        "gelu_tanh": lambda v: 0.5 * v * (1.0 + np.tanh(_GELU_TANH_K * (v + 0.044715 * v * v * v))),
        "silu": lambda v: v / (1.0 + np.exp(-v)),
        "mish": lambda v: v * np.tanh(_softplus(v)),
        "selu": lambda v: 1.0507009873554805 * np.where(v > 0, v, 1.6732632423543772 * np.expm1(np.minimum(v, 0.0))),
        "hardsigmoid": _hardsigmoid,
        "hardswish": lambda v: v * _hardsigmoid(v),
        "softsign": lambda v: v / (1.0 + np.abs(v)),
        "sin": np.sin,
        "cos": np.cos,
        "erf": _erf,
        "sign": np.sign,
        "recip": lambda v: 1.0 / v,
        "floor": np.floor,
        "round": np.rint,
    }
    return simple[name]


# Unary operations exact on integers: they run in the integer type itself.
_INT_EXACT_UNARY = {"neg", "abs", "relu", "relu6", "sign", "clamp", "hardtanh", "floor", "round"}


def unary(name: str, args: Args, kwargs: Kwargs) -> Any:
    x = args[0]
    formula = _unary_formula(name, args, kwargs)
    with np.errstate(all="ignore"):
        if is_scalar(x):
            if isinstance(x, int) and name in _INT_EXACT_UNARY:
                return int(formula(np.array(int(x), dtype=np.int64)))
            return float(formula(np.array(float(x), dtype=np.float64)))
        tile = need_tile(x, name)
        assert tile.data is not None and tile.dtype is not None
        if is_int(tile.dtype) and name in _INT_EXACT_UNARY:
            data = formula(tile.data)
        elif tile.dtype == "bool" and name in _INT_EXACT_UNARY:
            data = formula(tile.data.astype(np.int64))
        else:
            data = formula(_f64(tile))
        return make_tile(np.asarray(data), tile.dtype)


# ---- elementwise binary and comparisons ---------------------------------------------------------------

_INT_BINARY: Dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "maximum": np.maximum, "minimum": np.minimum,
    "floordiv": np.floor_divide, "mod": np.remainder, "and_bits": np.bitwise_and, "or_bits": np.bitwise_or,
    "xor_bits": np.bitwise_xor, "lshift": np.left_shift, "rshift": np.right_shift,
}
_FLOAT_BINARY: Dict[str, Callable[[Any, Any], Any]] = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide, "pow": np.power,
    "maximum": np.maximum, "minimum": np.minimum, "floordiv": np.floor_divide, "mod": np.remainder,
}
_CMP: Dict[str, Callable[[Any, Any], Any]] = {
    "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal, "eq": np.equal, "ne": np.not_equal,
}
# Operators written in expressions, by the name of the operation they mean.
OPERATORS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "**": "pow", "//": "floordiv", "%": "mod",
             "&": "and_bits", "|": "or_bits", "^": "xor_bits", "<<": "lshift", ">>": "rshift",
             "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne",
             "and": "logical_and", "or": "logical_or"}


def _scalar_binary(name: str, a: Scalar, b: Scalar) -> Scalar:
    try:
        if name == "add":
            return a + b
        if name == "sub":
            return a - b
        if name == "mul":
            return a * b
        if name == "div":
            return a / b
        if name == "pow":
            return a ** b
        if name == "floordiv":
            return a // b
        if name == "mod":
            return a % b
        if name in ("maximum", "minimum"):
            if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
                return math.nan
            return max(a, b) if name == "maximum" else min(a, b)
        if name in ("and_bits", "or_bits", "xor_bits", "lshift", "rshift"):
            ia, ib = int(a), int(b)
            return {"and_bits": ia & ib, "or_bits": ia | ib, "xor_bits": ia ^ ib,
                    "lshift": ia << ib, "rshift": ia >> ib}[name]
        if name == "logical_and":
            return bool(a) and bool(b)
        if name == "logical_or":
            return bool(a) or bool(b)
        if name in _CMP:
            return bool(_CMP[name](a, b))
    except ZeroDivisionError:
        raise SketchError(f"division by zero in {name}") from None
    except (OverflowError, ValueError) as exc:
        raise SketchError(f"{name} of {a!r} and {b!r}: {exc}") from None
    raise SketchError(f"unknown operation {name}")


def _broadcast_check(a: Tile, b: Tile, name: str) -> None:
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise SketchError(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast in {name}") from None


def _operand(value: Any, dtype: str, name: str) -> np.ndarray:
    """A tile's data, or a scalar converted to dtype (the cast rules)."""
    if isinstance(value, Tile):
        assert value.data is not None
        return value.data
    if not is_scalar(value):
        raise SketchError(f"{name}() needs numbers or tiles, got {type(value).__name__}")
    return convert(np.array(value), dtype)


def _exact(value: Any) -> np.ndarray:
    """Operand of a comparison, exactly: float64 for floats and scalars, int64 for integers."""
    if isinstance(value, Tile):
        assert value.data is not None
        if value.data.dtype.kind in "iub":
            return value.data.astype(np.int64)
        return value.data.astype(np.float64)
    if isinstance(value, bool) or isinstance(value, int):
        return np.array(int(value), dtype=np.int64) if abs(int(value)) < 2**63 else np.array(float(value))
    return np.array(float(value))


def binary(name: str, a: Any, b: Any) -> Any:
    """An elementwise binary operation or comparison (``name`` as in OPERATORS' values)."""
    if is_scalar(a) and is_scalar(b):
        return _scalar_binary(name, a, b)
    ta = a if isinstance(a, Tile) else None
    tb = b if isinstance(b, Tile) else None
    if ta is None and tb is None:
        raise SketchError(f"{name}() needs numbers or tiles")
    if ta is not None and tb is not None:
        _broadcast_check(ta, tb, name)
        if ta.dtype != tb.dtype and name not in _CMP:
            raise SketchError(f"dtype mismatch in {name}: {ta.dtype} and {tb.dtype}")
    dtype = (ta or tb).dtype  # type: ignore[union-attr]
    assert dtype is not None
    with np.errstate(all="ignore"):
        if name in _CMP:
            return make_tile(np.asarray(_CMP[name](_exact(a), _exact(b))), "bool")
        x, y = _operand(a, dtype, name), _operand(b, dtype, name)
        if name in ("logical_and", "logical_or"):
            fn = np.logical_and if name == "logical_and" else np.logical_or
            return make_tile(np.asarray(fn(x != 0, y != 0)), dtype)
        if is_float(dtype):
            fn = _FLOAT_BINARY.get(name)
            if fn is None:
                raise SketchError(f"operator {name} is not defined on {dtype} tiles")
            return make_tile(np.asarray(fn(x.astype(np.float64), y.astype(np.float64))), dtype)
        if dtype == "bool" and name in ("and_bits", "or_bits", "xor_bits"):
            fn = {"and_bits": np.logical_and, "or_bits": np.logical_or, "xor_bits": np.logical_xor}[name]
            return make_tile(np.asarray(fn(x, y)), dtype)
        if name in ("div", "pow") or dtype == "bool":
            if name == "pow":
                return make_tile(np.asarray(np.power(x.astype(np.float64), y.astype(np.float64))), dtype)
            fn = _FLOAT_BINARY.get(name) or _INT_BINARY[name]
            return make_tile(np.asarray(fn(x.astype(np.float64), y.astype(np.float64))), dtype)
        fn = _INT_BINARY.get(name)
        if fn is None:
            raise SketchError(f"operator {name} is not defined on {dtype} tiles")
        if name in ("floordiv", "mod") and bool(np.any(np.asarray(y) == 0)):
            raise SketchError(f"integer division by zero in {name}")
        return make_tile(np.asarray(fn(x, y)), dtype)


def where(mask: Any, a: Any, b: Any) -> Any:
    if isinstance(mask, Tile) and mask.dtype != "bool":
        raise SketchError(f"where() needs a bool mask, got {mask.dtype}")
    if isinstance(a, Tile):
        dtype = a.dtype
    elif isinstance(b, Tile):
        dtype = b.dtype
    else:
        dtype = scalar_dtype(b) if is_scalar(b) else "f32"
    assert dtype is not None
    if not any(isinstance(v, Tile) for v in (mask, a, b)):
        return a if mask else b
    m = mask.data if isinstance(mask, Tile) else np.array(bool(mask))
    x, y = _operand(a, dtype, "where"), _operand(b, dtype, "where")
    try:
        out = np.where(m, convert(x, dtype), convert(y, dtype))
    except ValueError:
        raise SketchError("where(): mask and operands do not broadcast") from None
    return make_tile(out, dtype)


# ---- reductions, scans, softmax ---------------------------------------------------------------------


def reduce(name: str, args: Args, kwargs: Kwargs) -> Tile:
    x = need_tile(args[0], name)
    assert x.data is not None and x.dtype is not None
    axes = _axes(_arg(args, kwargs, 1, ("axis",), None), len(x.shape), name)
    keep = _truthy(kwargs.get("keepdim", True))
    data = x.data
    with np.errstate(all="ignore"):
        if name in ("argmax", "argmin", "reduce_argmax"):
            return _arg_reduce(np.argmin if name == "argmin" else np.argmax, data, axes, keep)
        if name in ("reduce_max", "reduce_min"):
            fn = np.max if name == "reduce_max" else np.min
            return make_tile(np.asarray(fn(data, axis=axes, keepdims=keep)), x.dtype)
        acc = _acc_type(x.dtype) if is_float(x.dtype) else np.int64
        if name == "reduce_prod":
            out = np.prod(data.astype(acc), axis=axes, keepdims=keep, dtype=acc)
        else:
            out = np.sum(data.astype(acc), axis=axes, keepdims=keep, dtype=acc)
            if name == "reduce_mean":
                count = int(np.prod([x.shape[a] for a in axes])) if axes else 1
                out = (out.astype(np.float64) / count if acc is np.int64 else out / acc(count))
        return make_tile(np.asarray(out), x.dtype)


def _arg_reduce(fn: Callable[..., Any], data: np.ndarray, axes: Tuple[int, ...], keep: bool) -> Tile:
    """First index of the extreme value over ``axes`` (row-major over several), as i32."""
    rank = data.ndim
    rest = [d for d in range(rank) if d not in axes]
    moved = np.transpose(data, rest + list(axes))
    flat = moved.reshape([data.shape[d] for d in rest] + [-1])
    idx = fn(flat, axis=-1)
    if keep:
        idx = idx.reshape([1 if d in axes else data.shape[d] for d in range(rank)])
    return make_tile(np.asarray(idx), "i32")


def scan(name: str, args: Args, kwargs: Kwargs) -> Tile:
    x = need_tile(args[0], name)
    assert x.data is not None and x.dtype is not None
    axis = _axes(_arg(args, kwargs, 1, ("axis",), -1), len(x.shape), name)[0]
    reverse = _truthy(kwargs.get("reverse", False))
    exclusive = _truthy(kwargs.get("exclusive", False))
    product = name.endswith("cumprod")
    acc = _acc_type(x.dtype) if is_float(x.dtype) else np.int64
    d = np.moveaxis(x.data.astype(acc), axis, -1)
    if reverse:
        d = d[..., ::-1]
    with np.errstate(all="ignore"):
        out = np.cumprod(d, axis=-1, dtype=acc) if product else np.cumsum(d, axis=-1, dtype=acc)
    if exclusive:
        ident = np.ones_like(out[..., :1]) if product else np.zeros_like(out[..., :1])
        out = np.concatenate([ident, out[..., :-1]], axis=-1)
    if reverse:
        out = out[..., ::-1]
    return make_tile(np.moveaxis(out, -1, axis), x.dtype)


def softmax(name: str, args: Args, kwargs: Kwargs) -> Tile:
    x = need_tile(args[0], name)
    assert x.data is not None and x.dtype is not None
    axis = _axes(_arg(args, kwargs, 1, ("axis",), -1), len(x.shape), name)[0]
    acc = _acc_type(x.dtype)
    v = x.data.astype(acc)
    with np.errstate(all="ignore"):
        shifted = v - np.max(v, axis=axis, keepdims=True)
        e = np.exp(shifted)
        s = np.sum(e, axis=axis, keepdims=True, dtype=acc)
        out = shifted - np.log(s) if name == "log_softmax" else e / s
    return make_tile(out, x.dtype)


# ---- linear algebra and layout ------------------------------------------------------------------------


def gemm(args: Args, kwargs: Kwargs, acc: Optional[Tile]) -> Tile:
    """acc + op(a) @ op(b); the result has acc's dtype (f32 without acc)."""
    a, b = need_tile(args[0], "gemm"), need_tile(args[1], "gemm")
    if len(args) > 2:
        acc = need_tile(args[2], "gemm")
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise SketchError(f"gemm() needs rank-2 tiles, got ranks {len(a.shape)} and {len(b.shape)}")
    assert a.data is not None and b.data is not None
    am = a.data.T if _truthy(kwargs.get("trans_a", False)) else a.data
    bm = b.data.T if _truthy(kwargs.get("trans_b", False)) else b.data
    if am.shape[1] != bm.shape[0]:
        raise SketchError(f"gemm() inner dimensions differ: {list(am.shape)} @ {list(bm.shape)}")
    out_dtype = acc.dtype if acc is not None and acc.dtype is not None else "f32"
    ctype = np.float64 if out_dtype == "f64" else np.float32
    with np.errstate(all="ignore"):
        prod = np.matmul(am.astype(ctype), bm.astype(ctype))
        if acc is not None:
            assert acc.data is not None
            if tuple(acc.shape) != tuple(prod.shape):
                raise SketchError(f"gemm() accumulator has shape {list(acc.shape)} but the product has shape "
                                  f"{list(prod.shape)}")
            prod = acc.data.astype(ctype) + prod
    return make_tile(prod, out_dtype)


def dot(args: Args) -> Tile:
    a, b = need_tile(args[0], "dot"), need_tile(args[1], "dot")
    assert a.data is not None and b.data is not None
    with np.errstate(all="ignore"):
        if len(a.shape) == 1 and len(b.shape) == 1:
            if a.shape != b.shape:
                raise SketchError(f"dot() operands have different lengths {a.shape[0]} and {b.shape[0]}")
            return make_tile(np.array([np.dot(a.data.astype(np.float32), b.data.astype(np.float32))]), "f32")
        if len(a.shape) == 2 and len(b.shape) == 2:
            if a.shape[1] != b.shape[0]:
                raise SketchError(f"dot() inner dimensions differ: {list(a.shape)} @ {list(b.shape)}")
            return make_tile(np.matmul(a.data.astype(np.float32), b.data.astype(np.float32)), "f32")
    raise SketchError("dot() needs two rank-1 or two rank-2 tiles")


def transpose(args: Args) -> Tile:
    x = need_tile(args[0], "transpose")
    assert x.data is not None and x.dtype is not None
    perm = args[1] if len(args) > 1 else None
    if perm is None:
        if len(x.shape) != 2:
            raise SketchError("transpose() without a permutation needs a rank-2 tile")
        perm = [1, 0]
    if not isinstance(perm, list) or sorted(perm) != list(range(len(x.shape))):
        raise SketchError(f"transpose() permutation {perm!r} must list all {len(x.shape)} axes")
    return make_tile(np.ascontiguousarray(np.transpose(x.data, perm)), x.dtype)


def gather(args: Args, kwargs: Kwargs) -> Tile:
    x, index = need_tile(args[0], "gather"), need_tile(args[1], "gather")
    assert x.data is not None and index.data is not None and x.dtype is not None
    rank = len(x.shape)
    axis_value = _arg(args, kwargs, 2, ("axis", "dim"), None)
    if axis_value is None:
        raise SketchError("gather() needs an axis: gather(x, index, axis)")
    axis = _axes(axis_value, rank, "gather")[0]
    if not is_int(index.dtype):
        raise SketchError(f"gather() index must be an integer tile, got {index.dtype}")
    if len(index.shape) != rank:
        raise SketchError(f"gather() index has rank {len(index.shape)} but x has rank {rank}")
    for d in range(rank):
        if d != axis and index.shape[d] > x.shape[d]:
            raise SketchError(f"gather() index is larger than x along axis {d}: {index.shape[d]} > {x.shape[d]}")
    idx = index.data.astype(np.int64)
    bad = (idx < 0) | (idx >= x.shape[axis])
    if bool(bad.any()):
        where_bad = tuple(int(i) for i in np.argwhere(bad)[0])
        raise SketchError(f"gather() index {int(idx[where_bad])} at element {list(where_bad)} is outside "
                          f"[0, {x.shape[axis]}) along axis {axis}")
    sub = x.data[tuple(slice(None) if d == axis else slice(0, index.shape[d]) for d in range(rank))]
    return make_tile(np.take_along_axis(sub, idx, axis=axis), x.dtype)


# ---- constructors and conversion -------------------------------------------------------------------------


def dtype_value(value: Any, op: str) -> str:
    name = value.name if isinstance(value, DTypeName) else value if isinstance(value, str) else None
    dtype = dtype_from_name(name) if name is not None else None
    if dtype is None:
        raise SketchError(f"{op}(): {value!r} is not a dtype")
    return dtype


def _shape_list(value: Any, op: str) -> Tuple[int, ...]:
    if not isinstance(value, list) or not value:
        raise SketchError(f"{op}() needs a shape list as its first argument")
    dims = []
    for d in value:
        if isinstance(d, bool) or not isinstance(d, int) or d <= 0:
            raise SketchError(f"{op}() shape dimensions must be positive integers, got {d!r}")
        dims.append(d)
    return tuple(dims)


def cast(args: Args) -> Any:
    dtype = dtype_value(args[1], "cast")
    x = args[0]
    if is_scalar(x):
        return convert_scalar(x, dtype)
    tile = need_tile(x, "cast")
    return make_tile(tile.data, dtype)  # type: ignore[arg-type]


def fill(args: Args, kwargs: Kwargs, zeros: bool) -> Tile:
    name = "zeros" if zeros else "fill"
    shape = _shape_list(args[0], name)
    dtype = dtype_value(kwargs["dtype"], name) if kwargs.get("dtype") is not None else "f32"
    value = 0 if zeros else _number(args[1], name, "value")
    return make_tile(np.full(shape, convert(np.array(value), dtype)), dtype)


def arange(args: Args) -> Tile:
    bounds = [_number(a, "arange", "bound") for a in args]
    if any(isinstance(b, float) for b in bounds):
        raise SketchError("arange() bounds must be integers")
    start, stop = (0, bounds[0]) if len(bounds) == 1 else (bounds[0], bounds[1])
    if stop <= start:
        raise SketchError(f"arange({start}, {stop}) is empty")
    return make_tile(np.arange(start, stop, dtype=np.int64), "i32")


def index_op(name: str, args: Args) -> Any:
    """ceil, min, max and floor_div on integers; min/max of two tiles are minimum/maximum."""
    if name in ("min", "max") and any(isinstance(a, Tile) for a in args):
        if len(args) != 2:
            raise SketchError(f"{name}() of tiles takes exactly 2 arguments")
        return binary("minimum" if name == "min" else "maximum", args[0], args[1])
    vals = [_number(a, name, "argument") for a in args]
    if name == "min":
        return min(vals)
    if name == "max":
        return max(vals)
    if name == "floor_div":
        if vals[1] == 0:
            raise SketchError("floor_div() by zero")
        return vals[0] // vals[1]
    if len(vals) == 1:
        return math.ceil(vals[0]) if isinstance(vals[0], float) else vals[0]
    if vals[1] == 0:
        raise SketchError("ceil() by zero")
    return -((-vals[0]) // vals[1])


def call(name: str, args: Args, kwargs: Kwargs, acc: Optional[Tile] = None) -> Any:
    """Evaluates operation ``name`` (arguments already evaluated; ``acc`` is gemm's in-place
    accumulator in the destination form)."""
    info = OPS.get(name)
    if info is None:
        raise SketchError(f"unknown operation '{name}'")
    if not info.min_args <= len(args) <= info.max_args:
        raise SketchError(f"{name}() takes {info.min_args} to {info.max_args} arguments, got {len(args)}")
    cat = info.category
    if cat == "unary":
        return unary(name, args, kwargs)
    if cat in ("binary", "cmp"):
        return binary(name, args[0], args[1])
    if cat == "where":
        return where(args[0], args[1], args[2])
    if cat == "reduce":
        return reduce(name, args, kwargs)
    if cat == "scan":
        return scan(name, args, kwargs)
    if cat == "softmax":
        return softmax(name, args, kwargs)
    if cat == "gemm":
        return gemm(args, kwargs, acc)
    if cat == "dot":
        return dot(args)
    if cat == "transpose":
        return transpose(args)
    if cat == "cast":
        return cast(args)
    if cat in ("fill", "zeros"):
        return fill(args, kwargs, zeros=cat == "zeros")
    if cat == "arange":
        return arange(args)
    if cat == "gather":
        return gather(args, kwargs)
    return index_op(name, args)
