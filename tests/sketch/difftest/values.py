"""Inputs, symbol values and comparisons of the differential test.

Every tensor of a sketch gets seeded random contents: inputs as the generator's metadata says
(``# difftest: {...}`` on the sketch's first line), outputs random too, so that the parts a
kernel and the interpreter leave unwritten are compared as well. Arrays are held in the
interpreter's storage (NumPy's own type; float32 holding bfloat16 values for bf16); ``abi_array``
gives the buffer a kernel receives (bf16 as its 16 bits).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

import numpy as np

from akg_harness.sketch_interp import eval_scalar, tensor_shapes
from akg_harness.sketch_values import STORAGE, SketchError, convert

# (atol, rtol) per dtype; integers and bool must match exactly.
TOLERANCES: Dict[str, Tuple[float, float]] = {
    "f32": (1e-4, 1e-4), "f64": (1e-9, 1e-9), "f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2),
}
SMALL_SYMBOL_RANGE = (1, 16)


def _bound(value: Any, symbols: Mapping[str, int]) -> float:
    """A bound of a draw: a number, or an expression of symbols such as "C+2"."""
    if isinstance(value, (int, float)):
        return value
    return float(eval(str(value), {"__builtins__": {}}, dict(symbols)))  # noqa: S307 - generator's own text


def draw(spec: Optional[Mapping[str, Any]], shape: Tuple[int, ...], dtype: str, symbols: Mapping[str, int],
         rng: np.random.Generator) -> np.ndarray:
    """Contents of one tensor: by ``spec`` (the generator's metadata) or, without one, uniform in
    [-2, 2] for floats, integers in [-50, 50], random bools."""
    spec = dict(spec or {})
    kind = spec.get("kind", "uniform")
    storage = STORAGE[dtype]
    if dtype == "bool" or kind == "bool":
        return convert(rng.random(shape) < 0.5, dtype)
    if kind == "index":
        return convert(rng.integers(0, int(_bound(spec["hi"], symbols)), size=shape), dtype)
    if kind == "int":
        lo, hi = int(_bound(spec.get("lo", -50), symbols)), int(_bound(spec.get("hi", 50), symbols))
        return convert(rng.integers(lo, hi + 1, size=shape), dtype)
    if kind == "int64_big":
        small = rng.integers(-1000, 1000, size=shape)
        big = rng.integers(2**31 - 10, 2**40, size=shape) * rng.choice([-1, 1], size=shape)
        return convert(np.where(rng.random(shape) < 0.3, big, small), dtype)
    if kind == "frac":
        # away from the .5 ties where rounding to an integer would depend on the last bit
        whole = rng.integers(int(spec.get("lo", -40)), int(spec.get("hi", 40)), size=shape).astype(np.float64)
        frac = rng.uniform(0.1, 0.4, size=shape) + np.where(rng.random(shape) < 0.5, 0.0, 0.5)
        values = whole + frac
        if spec.get("big"):
            big = rng.uniform(3e9, 6e9, size=shape) * rng.choice([-1.0, 1.0], size=shape)
            values = np.where(rng.random(shape) < float(spec["big"]), big, values)
        return convert(values, dtype)
    lo, hi = float(spec.get("lo", -2.0)), float(spec.get("hi", 2.0))
    if np.issubdtype(storage, np.integer):
        return convert(rng.integers(int(math.floor(lo * 20)), int(math.ceil(hi * 20)) + 1, size=shape), dtype)
    values = rng.uniform(lo, hi, size=shape)
    if spec.get("nan"):
        values = np.where(rng.random(shape) < float(spec["nan"]), np.nan, values)
    return convert(values, dtype)


def fill_output(shape: Tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Random starting contents of a tensor the sketch writes (the same on both sides)."""
    if dtype == "bool":
        return convert(rng.random(shape) < 0.5, dtype)
    if np.issubdtype(STORAGE[dtype], np.integer):
        return convert(rng.integers(-100, 100, size=shape), dtype)
    return convert(rng.uniform(-1.0, 1.0, size=shape), dtype)


@dataclass
class Case:
    """One run of a sketch: symbol and param values (declaration order) and the starting tensors."""

    symbols: Dict[str, int]
    params: Dict[str, float]
    tensors: Dict[str, np.ndarray]


def param_values(ir: Mapping[str, Any], given: Mapping[str, float], symbols: Mapping[str, int]) -> Dict[str, float]:
    """Every param's value: given, else its default (evaluated), as a double."""
    consts = {c["name"]: c["value"] for c in ir.get("constexprs", []) if c.get("value") is not None}
    out: Dict[str, float] = {}
    for p in ir.get("params", []):
        if p["name"] in given:
            out[p["name"]] = float(given[p["name"]])
        elif p.get("default") is not None:
            out[p["name"]] = float(eval_scalar(p["default"], {**consts, **symbols}))
        else:
            out[p["name"]] = 1.0
    return out


def choose_symbols(ir: Mapping[str, Any], given: Mapping[str, int], rng: np.random.Generator,
                   tries: int = 50) -> Dict[str, int]:
    """Symbol values: those given, the others small and random, such that every tensor dimension is
    positive (raises ValueError when no draw fits)."""
    names = list(ir.get("symbols", []))
    for _ in range(tries):
        symbols = {n: int(given[n]) if n in given else int(rng.integers(*SMALL_SYMBOL_RANGE, endpoint=True))
                   for n in names}
        try:
            shapes = tensor_shapes(ir, symbols)
        except (SketchError, ZeroDivisionError):
            continue
        if all(d > 0 for shape in shapes.values() for d in shape):
            return symbols
        if all(n in given for n in names):
            break
    raise ValueError("no symbol values give every tensor a positive shape; pass --sym NAME=VALUE")


def make_case(ir: Mapping[str, Any], meta: Optional[Mapping[str, Any]], given_symbols: Mapping[str, int],
              seed: int) -> Case:
    rng = np.random.default_rng(seed)
    meta = meta or {}
    symbols = choose_symbols(ir, {**dict(meta.get("symbols", {})), **given_symbols}, rng)
    params = param_values(ir, dict(meta.get("params", {})), symbols)
    shapes = tensor_shapes(ir, symbols)
    specs = dict(meta.get("inputs", {}))
    tensors: Dict[str, np.ndarray] = {}
    for t in ir.get("tensors", []):
        name, dtype = t["name"], t["dtype"]
        if name in specs or (not t.get("stored") and not meta):
            tensors[name] = draw(specs.get(name), shapes[name], dtype, symbols, rng)
        else:
            tensors[name] = fill_output(shapes[name], dtype, rng)
    return Case(symbols, params, tensors)


def abi_array(data: np.ndarray, dtype: str) -> np.ndarray:
    """The contiguous buffer a kernel gets for a tensor (bf16 as uint16 bits)."""
    if dtype == "bf16":
        return np.ascontiguousarray((convert(data, "bf16").view(np.uint32) >> 16).astype(np.uint16))
    return np.ascontiguousarray(data)


def from_abi(buf: np.ndarray, dtype: str) -> np.ndarray:
    if dtype == "bf16":
        return (buf.astype(np.uint32) << 16).view(np.float32)
    return buf


@dataclass
class Mismatch:
    tensor: str
    detail: str


def compare_tensor(name: str, dtype: str, expected: np.ndarray, got: np.ndarray) -> Optional[Mismatch]:
    """None when got matches expected (the interpreter's result) by the rules of this test."""
    if expected.shape != got.shape:
        return Mismatch(name, f"shape {list(got.shape)}, expected {list(expected.shape)}")
    if dtype not in TOLERANCES:
        differ = expected != got
        if bool(differ.any()):
            k = tuple(int(i) for i in np.argwhere(differ)[0])
            return Mismatch(name, f"element {list(k)} is {got[k]!r}, expected {expected[k]!r} (exact match "
                                  f"required for {dtype}; {int(differ.sum())} of {expected.size} differ)")
        return None
    e, g = expected.astype(np.float64), got.astype(np.float64)
    for label, test in (("NaN", np.isnan), ("+Inf", np.isposinf), ("-Inf", np.isneginf)):
        bad = test(e) != test(g)
        if bool(bad.any()):
            k = tuple(int(i) for i in np.argwhere(bad)[0])
            return Mismatch(name, f"{label} positions differ: element {list(k)} is {g[k]!r}, expected {e[k]!r} "
                                  f"({int(bad.sum())} of {e.size} elements)")
    atol, rtol = TOLERANCES[dtype]
    finite = np.isfinite(e)
    diff = np.where(finite, np.abs(g - e), 0.0)
    excess = diff - (atol + rtol * np.where(finite, np.abs(e), 0.0))
    if bool((excess > 0).any()):
        k = tuple(int(i) for i in np.unravel_index(int(np.argmax(excess)), e.shape))
        return Mismatch(name, f"worst element {list(k)} is {g[k]!r}, expected {e[k]!r}: |err| {diff[k]:.3g} > "
                              f"{atol:g} + {rtol:g}*|expected| ({int((excess > 0).sum())} of {e.size} elements)")
    return None


def compare_all(ir: Mapping[str, Any], expected: Mapping[str, np.ndarray],
                got: Mapping[str, np.ndarray]) -> List[Mismatch]:
    out = []
    for t in ir.get("tensors", []):
        m = compare_tensor(t["name"], t["dtype"], expected[t["name"]], got[t["name"]])
        if m is not None:
            out.append(m)
    return out
