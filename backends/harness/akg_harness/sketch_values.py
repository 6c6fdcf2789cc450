"""Values of the sketch interpreter: dtypes, conversions, tiles, tensors and errors.

Storage: every sketch dtype is held in a NumPy array of its own type, except ``bf16``, which is
held in float32 arrays whose values are always representable in bfloat16 (each conversion to bf16
rounds to nearest even by bit operations on the float32 value, NaN and infinities kept). Conversions follow the
language reference: floats round to nearest even; conversions to an integer type round to nearest
even and saturate at the type's range (NaN becomes 0); conversions to bool test for non-zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np

FLOAT_DTYPES = ("f16", "bf16", "f32", "f64")
INT_DTYPES = ("i8", "i16", "i32", "i64", "u8")
ALL_DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES

STORAGE: Dict[str, Any] = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
    "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
}

# Every spelling the language accepts (engine/sketch/sketch_ir.c, sketch_dtype_names).
DTYPE_ALIASES: Dict[str, str] = {
    **{name: name for name in ALL_DTYPES},
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
    "float16": "f16", "bfloat16": "bf16", "float32": "f32", "float64": "f64", "fp16": "f16", "fp32": "f32",
}

Shape = Tuple[int, ...]
Scalar = Union[bool, int, float]


class SketchError(Exception):
    """A design error found while interpreting: carries the 1-based sketch line (None: not in the body)."""

    def __init__(self, message: str, line: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line is not None else self.message


class SketchBudgetExceeded(Exception):
    """The interpretation would take longer than its budget: not a design error, the check is skipped."""


@dataclass(frozen=True)
class DTypeName:
    """A dtype written as a bare name or string in an expression (cast(x, f16), dtype=f32)."""

    name: str


def dtype_from_name(name: str) -> Optional[str]:
    return DTYPE_ALIASES.get(name)


def is_float(dtype: Optional[str]) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: Optional[str]) -> bool:
    return dtype in INT_DTYPES


def round_bf16(values: np.ndarray) -> np.ndarray:
    """Rounds to bfloat16 as float32 values: first to float32 (nearest even), then to the upper 16
    bits by the bit operations of round-to-nearest-even (what PyTorch and the C++ kernels do, so
    subnormals and overflow to infinity round as theirs); NaN stays NaN."""
    with np.errstate(all="ignore"):
        f = np.asarray(values).astype(np.float32)
    bits = f.view(np.uint32)
    lsb = (bits >> np.uint32(16)) & np.uint32(1)
    rounded = ((bits + np.uint32(0x7FFF) + lsb) & np.uint32(0xFFFF0000)).view(np.float32)  # wraps only for NaN
    return np.where(np.isnan(f), np.float32(np.nan), rounded).astype(np.float32)


_I64_LIMIT = 9.223372036854775807e18  # 2^63 as a double


def _float_to_int(x: np.ndarray, dtype: str) -> np.ndarray:
    info = np.iinfo(STORAGE[dtype])
    with np.errstate(all="ignore"):
        f = np.rint(np.where(np.isnan(x), 0.0, x.astype(np.float64)))
        if dtype == "i64":
            big, small = f >= _I64_LIMIT, f < -_I64_LIMIT
            out = np.where(big | small, 0.0, f).astype(np.int64)
            out[big] = info.max
            out[small] = info.min
            return out
        return np.clip(f, info.min, info.max).astype(STORAGE[dtype])


def convert(values: Any, dtype: str) -> np.ndarray:
    """values (an array or a number) converted to dtype's storage by the language's rules.

    Always returns a new array (never a view of the argument)."""
    a = np.asarray(values)
    if dtype == "bool":
        return np.array(a != 0) if a.dtype != np.bool_ else a.copy()
    if dtype == "bf16":
        return round_bf16(a)
    target = STORAGE[dtype]
    if dtype in FLOAT_DTYPES:
        with np.errstate(all="ignore"):
            return a.astype(target)  # float16/32 from wider types rounds to nearest even
    if a.dtype.kind == "f":
        return _float_to_int(a, dtype)
    if a.dtype == np.bool_:
        return a.astype(target)
    info = np.iinfo(target)
    if a.dtype == object:  # Python integers beyond 64 bits
        flat = [max(info.min, min(info.max, int(v))) for v in a.reshape(-1)]
        return np.array(flat, dtype=target).reshape(a.shape)
    if np.iinfo(a.dtype).min >= info.min and np.iinfo(a.dtype).max <= info.max:
        return a.astype(target)
    return np.clip(a, info.min, info.max).astype(target)


def convert_scalar(value: Scalar, dtype: str) -> Scalar:
    """A Python number converted to dtype by the language's rules, returned as a Python number."""
    out = convert(np.array(value), dtype)
    return out.item()


def compute_type(dtype: str) -> Any:
    """The NumPy type elementwise formulas run in: float64 for every float dtype (each result is
    then rounded once to the operand's dtype), int64 for integers."""
    return np.float64 if dtype in FLOAT_DTYPES else np.int64


def undefined_fill(dtype: str) -> Any:
    """What an allocated, never-written element holds: NaN for floats (so that reading it shows),
    the most negative value for signed integers, all bits set for u8, True for bool."""
    if dtype in FLOAT_DTYPES:
        return np.nan
    if dtype == "bool":
        return True
    if dtype == "u8":
        return 255
    return np.iinfo(STORAGE[dtype]).min


def neg_inf_fill(dtype: str) -> Any:
    if dtype in FLOAT_DTYPES:
        return -np.inf
    if dtype == "bool":
        return False
    return np.iinfo(STORAGE[dtype]).min


@dataclass
class Tile:
    """A tile value or an allocated tile.

    ``data`` is None only for a tile allocated without a dtype before anything was written to it
    (its dtype is that of the first value loaded or computed into it). ``written`` is False for an
    allocated tile that nothing has written yet: reading it is a design error. Tiles are never
    shared between names: assignment copies, so writing into one changes only its own name."""

    shape: Shape
    dtype: Optional[str]
    data: Optional[np.ndarray]
    written: bool = True
    line: Optional[int] = None  # where it was allocated
    init: Optional[str] = None  # "zero" / "neg_inf" for a dtype-less allocation

    def ensure_dtype(self, dtype: str) -> None:
        """Gives a dtype-less allocation its dtype (and storage) on its first write."""
        if self.data is not None:
            return
        self.dtype = dtype
        self.data = allocate(self.shape, dtype, self.init)
        if self.init is not None:
            self.written = True

    def copy(self) -> "Tile":
        data = None if self.data is None else self.data.copy()
        return Tile(self.shape, self.dtype, data, self.written, self.line, self.init)


def allocate(shape: Shape, dtype: str, init: Optional[str]) -> np.ndarray:
    if init == "zero":
        return np.zeros(shape, dtype=STORAGE[dtype])
    if init == "neg_inf":
        return np.full(shape, neg_inf_fill(dtype), dtype=STORAGE[dtype])
    return np.full(shape, undefined_fill(dtype), dtype=STORAGE[dtype])


def make_tile(data: np.ndarray, dtype: str) -> Tile:
    """A computed tile value holding data (converted to dtype's storage)."""
    arr = convert(data, dtype)
    return Tile(tuple(arr.shape), dtype, arr)


@dataclass
class Tensor:
    """A sketch tensor: the caller's array, written in place by stores."""

    name: str
    dtype: str
    data: np.ndarray
    shape: Shape = field(default=())

    def __post_init__(self) -> None:
        self.shape = tuple(self.data.shape)


Value = Union[Scalar, Tile, Tensor, DTypeName, str, None, list]
