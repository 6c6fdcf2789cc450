"""The reference interpreter of the Unified Sketch: executes a checked sketch on NumPy arrays.

Input is the JSON form of a checked sketch (``akg_cli sketch json FILE``; the format is documented
in engine/sketch/sketch_json.c). ``run()`` executes the body exactly as the language reference
(sketch-grammar/README.md, "Semantics") defines it and writes every store into the caller's
arrays in place; it returns counters of what ran. Hints never change what is computed and are
ignored, except the allocation purposes ``init_zero`` and ``init_neg_inf``.

Choices the reference leaves to the implementation, fixed here:

* An allocated tile without ``init_zero``/``init_neg_inf`` holds undefined values (NaN for floats)
  until written; reading a tile that nothing has written yet is a design error. A load writes
  every element of its target (region): moved elements get the source value, those outside the
  source or masked off get ``other`` (default 0). A store writes only elements inside the target
  whose mask (if any) is true.
* Assignment copies tiles (``t2 = t`` never aliases), so a destination-form call, a load into a
  tile or ``+=`` changes only the tile named.
* A dtype-less allocation takes the dtype of the first value loaded or computed into it; read
  before that with an init hint, it is f32.
* Elementwise arithmetic, reductions, scans and conversions: see sketch_ops.py and
  sketch_values.py.

Errors in the design (a gather index out of range, reading an unwritten tile, a shape the checker
could not see, an integer division by zero) raise SketchError with the statement's line. A run
that would exceed its Limits raises SketchBudgetExceeded.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import sketch_ops as ops
from . import sketch_regions as regions
from .sketch_values import (STORAGE, DTypeName, SketchBudgetExceeded, SketchError, Tensor, Tile, allocate,
                            convert, convert_scalar, dtype_from_name)

Expr = Dict[str, Any]
Stmt = Dict[str, Any]


@dataclass(frozen=True)
class Limits:
    """Bounds on one run: statements executed, elements produced (allocations, moves, results),
    and wall-clock seconds (None: no deadline)."""

    max_statements: int = 5_000_000
    max_elements: int = 2_000_000_000
    max_seconds: Optional[float] = None


@dataclass
class RunStats:
    statements: int = 0
    elements: int = 0


def _int_value(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise SketchError(f"{what} must be an integer, got {value!r}")
    return int(value)


class _Run:
    """The state of one run: the environment (Python scoping: one namespace for the whole body)
    and the counters against the limits."""

    def __init__(self, limits: Limits) -> None:
        self.env: Dict[str, Any] = {}
        self.limits = limits
        self.stats = RunStats()
        self.deadline = None if limits.max_seconds is None else time.monotonic() + limits.max_seconds
        self.exprs: Dict[str, Callable[[Expr], Any]] = {
            "int": lambda e: int(e["value"]),
            "float": lambda e: float(e["value"]),
            "string": lambda e: str(e["value"]),
            "bool": lambda e: bool(e["value"]),
            "none": lambda e: None,
            "name": self.ev_name,
            "unary": self.ev_unary,
            "binary": self.ev_binary,
            "call": self.ev_call,
            "subscript": self.ev_subscript,
            "list": lambda e: [self.ev(i) for i in e["items"]],
            "tuple": lambda e: tuple(self.ev(i) for i in e["items"]),
            "slice": self.ev_bad_slice,
        }
        self.stmts: Dict[str, Callable[[Stmt], None]] = {
            "for": self.ex_for, "if": self.ex_if, "alloc": self.ex_alloc, "load": self.ex_load,
            "store": self.ex_store, "assign": self.ex_assign, "call": self.ex_call, "pass": lambda st: None,
        }

    # ---- budget ----

    def count_elements(self, n: int) -> None:
        self.stats.elements += n
        if self.stats.elements > self.limits.max_elements:
            raise SketchBudgetExceeded(f"more than {self.limits.max_elements} elements would be processed")

    def count_statement(self) -> None:
        self.stats.statements += 1
        if self.stats.statements > self.limits.max_statements:
            raise SketchBudgetExceeded(f"more than {self.limits.max_statements} statements would run")
        if self.deadline is not None and self.stats.statements % 256 == 0 and time.monotonic() > self.deadline:
            raise SketchBudgetExceeded(f"the interpretation ran past {self.limits.max_seconds:g} s")

    # ---- expressions ----

    def ev(self, e: Expr) -> Any:
        handler = self.exprs.get(e["kind"])
        if handler is None:
            raise SketchError(f"unknown expression kind {e['kind']!r}")
        return handler(e)

    def ev_bad_slice(self, e: Expr) -> Any:
        raise SketchError("a slice is only valid inside [...]")

    def ev_int(self, e: Expr, what: str) -> int:
        return _int_value(self.ev(e), what)

    def lookup(self, name: str) -> Any:
        if name in self.env:
            return self.env[name]
        if dtype_from_name(name) is not None:
            return DTypeName(name)
        raise SketchError(f"undefined name '{name}'")

    def readable(self, tile: Tile, name: str) -> Tile:
        """The tile, which must have been written (an allocation read before any write is an error)."""
        if not tile.written:
            where = f" (allocated at line {tile.line})" if tile.line is not None else ""
            raise SketchError(f"tile '{name}'{where} is read before anything was written to it")
        if tile.data is None:
            tile.ensure_dtype("f32")
        return tile

    def ev_name(self, e: Expr) -> Any:
        value = self.lookup(e["value"])
        if isinstance(value, Tile):
            return self.readable(value, e["value"])
        if isinstance(value, Tensor):
            raise SketchError(f"tensor '{e['value']}' cannot be used in a computation; load it into a tile")
        return value

    def ev_unary(self, e: Expr) -> Any:
        op, value = e["op"], self.ev(e["items"][0])
        if op == "+":
            return value.copy() if isinstance(value, Tile) else value
        if op == "-":
            return ops.unary("neg", [value], {})
        if isinstance(value, Tile):
            assert value.data is not None and value.dtype is not None
            if op == "not" or value.dtype == "bool":
                return Tile(value.shape, "bool", np.logical_not(value.data))
            if op == "~" and value.data.dtype.kind in "iu":
                return Tile(value.shape, value.dtype, np.invert(value.data))
            raise SketchError(f"operator '{op}' is not defined on {value.dtype} tiles")
        if op == "not":
            return not value
        if op == "~":
            return ~_int_value(value, "the operand of ~")
        raise SketchError(f"unknown unary operator {op!r}")

    def ev_binary(self, e: Expr) -> Any:
        op = e["op"]
        name = ops.OPERATORS.get(op)
        if name is None:
            raise SketchError(f"unknown operator {op!r}")
        a, b = self.ev(e["items"][0]), self.ev(e["items"][1])
        return self.counted(ops.binary(name, a, b))

    def counted(self, value: Any) -> Any:
        if isinstance(value, Tile) and value.data is not None:
            self.count_elements(value.data.size)
        return value

    def ev_kwargs(self, e: Expr, skip: Sequence[str] = ()) -> Dict[str, Any]:
        return {k: self.ev(v) for k, v in e.get("kwargs", {}).items() if k not in skip}

    def ev_call(self, e: Expr) -> Any:
        name = e["callee"]
        if name not in ops.OPS:
            raise SketchError(f"operation '{name}' cannot be used here" if name in ("alloc", "range", "tune")
                              else f"unknown operation '{name}'")
        args = [self.ev(a) for a in e["items"]]
        return self.counted(ops.call(name, args, self.ev_kwargs(e)))

    def index_items(self, items: Sequence[Expr]) -> List[regions.IndexItem]:
        out: List[regions.IndexItem] = []
        for it in items:
            kind = it["kind"]
            if kind == "none":
                out.append(None)
            elif kind == "slice":
                parts = [None if it[p] is None else self.ev_int(it[p], "a slice bound")
                         for p in ("start", "stop", "step")]
                out.append(regions.SliceSpec(parts[0], parts[1], parts[2]))
            else:
                value = self.ev(it)
                if isinstance(value, Tile):
                    out.append(value)
                else:
                    out.append(_int_value(value, "an index"))
        return out

    def place(self, e: Expr) -> Tuple[Any, regions.Region, str]:
        """(base, region, base name) of a load source or store target: a tensor or tile, whole or subscripted."""
        base_expr = e["base"] if e["kind"] == "subscript" else e
        if base_expr["kind"] != "name":
            raise SketchError("expected a tensor or tile, optionally sliced, such as A[i:i+BM, :]")
        name = base_expr["value"]
        base = self.lookup(name)
        if not isinstance(base, (Tensor, Tile)):
            raise SketchError(f"'{name}' is not a tensor or tile")
        if e["kind"] == "subscript":
            region = regions.build_region(base.shape, self.index_items(e["items"]), name)
        else:
            region = regions.whole(base.shape)
        return base, region, name

    def ev_subscript(self, e: Expr) -> Tile:
        base, region, name = self.place(e)
        if isinstance(base, Tile):
            self.readable(base, name)
        values, _ = regions.read(base.data, region)
        self.count_elements(values.size)
        return Tile(region.shape, base.dtype, values)

    # ---- statements ----

    def ex_block(self, stmts: Sequence[Stmt]) -> None:
        for st in stmts:
            self.ex(st)

    def ex(self, st: Stmt) -> None:
        self.count_statement()
        handler = self.stmts.get(st["kind"])
        if handler is None:
            raise SketchError(f"unknown statement kind {st['kind']!r}", st.get("line"))
        try:
            handler(st)
        except SketchError as err:
            if err.line is None:
                err.line = st.get("line")
            raise
        except SketchBudgetExceeded:
            raise
        except (ArithmeticError, ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
            raise SketchError(f"{type(exc).__name__}: {exc}", st.get("line")) from exc

    def ex_for(self, st: Stmt) -> None:
        start = 0 if st["start"] is None else self.ev_int(st["start"], "range() start")
        stop = self.ev_int(st["stop"], "range() stop")
        step = 1 if st["step"] is None else self.ev_int(st["step"], "range() step")
        if step <= 0:
            raise SketchError(f"range() step must be positive, got {step}")
        var, body = st["var"], st["body"]
        for i in range(start, stop, step):
            self.env[var] = i
            self.ex_block(body)

    def ex_if(self, st: Stmt) -> None:
        cond = self.ev(st["cond"])
        if isinstance(cond, Tile):
            raise SketchError("if condition must be a scalar")
        self.ex_block(st["then"] if cond else st["else"])

    def ex_alloc(self, st: Stmt) -> None:
        dims = tuple(self.ev_int(d, "an alloc() dimension") for d in st["dims"])
        if any(d <= 0 for d in dims):
            raise SketchError(f"alloc() shape {list(dims)} has a non-positive dimension")
        size = int(np.prod(dims)) if dims else 1
        self.count_elements(size)
        hints = st.get("mem_hints") or []
        init = "zero" if "init_zero" in hints else "neg_inf" if "init_neg_inf" in hints else None
        dtype = st.get("dtype")
        if dtype is not None:
            tile = Tile(dims, dtype, allocate(dims, dtype, init), init is not None, st.get("line"))
        else:
            tile = Tile(dims, None, None, False, st.get("line"), init)
            tile.written = init is not None
        self.env[st["name"]] = tile

    def target_tile(self, e: Expr) -> Tuple[Tile, regions.Region, str]:
        base, region, name = self.place(e)
        if not isinstance(base, Tile):
            raise SketchError(f"load target '{name}' must be an allocated tile")
        return base, region, name

    def mask_of(self, st: Stmt, target_shape: Tuple[int, ...], other_shape: Tuple[int, ...]) -> np.ndarray:
        """The move's mask= as a bool array of target_shape (all true without a mask)."""
        expr = st.get("options", {}).get("mask")
        if expr is None:
            return np.ones(target_shape, dtype=np.bool_)
        mask = self.ev(expr)
        if isinstance(mask, Tile):
            if mask.dtype != "bool":
                raise SketchError(f"mask must be a bool tile, got {mask.dtype}")
            data = mask.data
        else:
            data = np.array(bool(mask))
        out = regions.broadcast_mask(data, [other_shape, regions.squeezed(target_shape)], target_shape)
        if out is None:
            raise SketchError(f"mask of shape {list(np.shape(data))} does not fit the moved region "
                              f"{list(target_shape)}")
        return out

    def ex_load(self, st: Stmt) -> None:
        src, src_region, src_name = self.place(st["source"])
        if isinstance(src, Tile):
            self.readable(src, src_name)
        tile, dst_region, tile_name = self.target_tile(st["target"])
        if not regions.same_up_to_units(src_region.shape, dst_region.shape):
            raise SketchError(f"load shape mismatch: the region of '{src_name}' is {list(src_region.shape)} but "
                              f"'{tile_name}' takes {list(dst_region.shape)}")
        values, valid = regions.read(src.data, src_region)
        self.count_elements(values.size)
        tile.ensure_dtype(src.dtype)
        assert tile.data is not None and tile.dtype is not None
        other_expr = st.get("options", {}).get("other")
        other = 0 if other_expr is None else self.ev(other_expr)
        if not ops.is_scalar(other):
            raise SketchError("other= must be a number")
        moved = valid & self.mask_of(st, src_region.shape, dst_region.shape)
        fill = convert(np.array(other), tile.dtype)
        out = np.where(moved, convert(values, tile.dtype), fill).astype(tile.data.dtype, copy=False)
        regions.write(tile.data, dst_region, out.reshape(dst_region.shape), np.ones(dst_region.shape, np.bool_))
        tile.written = True

    def ex_store(self, st: Stmt) -> None:
        value = self.ev(st["source"])
        if not isinstance(value, Tile):
            raise SketchError("store source must be a tile")
        assert value.data is not None and value.dtype is not None
        base, region, name = self.place(st["target"])
        if not regions.same_up_to_units(value.shape, region.shape):
            raise SketchError(f"store shape mismatch: the tile is {list(value.shape)} but the region of '{name}' is "
                              f"{list(region.shape)}")
        if isinstance(base, Tile):
            base.ensure_dtype(value.dtype)
        self.count_elements(value.data.size)
        data = convert(value.data, base.dtype).reshape(region.shape)
        regions.write(base.data, region, data, self.mask_of(st, region.shape, value.shape))
        if isinstance(base, Tile):
            base.written = True

    def bind(self, name: str, value: Any, copy: bool) -> None:
        if isinstance(value, Tile) and copy:
            value = value.copy()
        if isinstance(value, (Tensor, DTypeName)) or isinstance(value, (list, tuple, str)) or value is None:
            raise SketchError(f"only numbers and tiles can be assigned to '{name}'")
        self.env[name] = value

    def ex_assign(self, st: Stmt) -> None:
        targets, op, value_expr = st["targets"], st.get("op", "="), st["value"]
        if op != "=":
            self.augmented(targets[0], op, value_expr)
            return
        if value_expr["kind"] == "tuple":
            values = [self.ev(i) for i in value_expr["items"]]
            if len(values) != len(targets):
                raise SketchError(f"{len(targets)} names but {len(values)} values in this assignment")
            for name, item, value in zip(targets, value_expr["items"], values):
                self.bind(name, value, item["kind"] == "name")
            return
        if len(targets) != 1:
            raise SketchError(f"{len(targets)} names but one value")
        self.bind(targets[0], self.ev(value_expr), value_expr["kind"] == "name")

    def augmented(self, name: str, op: str, value_expr: Expr) -> None:
        if name not in self.env:
            raise SketchError(f"'{name}' is updated with {op} before it is assigned")
        current = self.env[name]
        value = self.ev(value_expr)
        opname = ops.OPERATORS.get(op[:-1])
        if opname is None:
            raise SketchError(f"unknown assignment operator {op!r}")
        if isinstance(current, Tile):
            self.readable(current, name)
            result = self.counted(ops.binary(opname, current, value))
            if tuple(result.shape) != tuple(current.shape):
                raise SketchError(f"'{name} {op} ...' would change the shape of '{name}' from {list(current.shape)} "
                                  f"to {list(result.shape)}")
            assert current.data is not None and current.dtype is not None
            current.data[...] = convert(result.data, current.dtype)
            return
        if isinstance(value, Tile):
            raise SketchError(f"'{name}' is a number; it cannot be updated with a tile")
        self.env[name] = ops.binary(opname, current, value)

    def destination(self, e: Expr) -> Tuple[Optional[Expr], List[Expr]]:
        """(destination expression, input expressions) of a call statement (as the checker decides)."""
        items = list(e["items"])
        dst = e.get("kwargs", {}).get("dst")
        info = ops.OPS.get(e["callee"])
        if dst is None and info is not None and len(items) > info.min_args:
            last = items[-1]
            if (last["kind"] == "name" and isinstance(self.env.get(last["value"]), Tile)
                    and (len(items) > info.max_args or info.category == "gemm")):
                dst = last
                if info.category != "gemm":
                    items = items[:-1]
        return dst, items

    def ex_call(self, st: Stmt) -> None:
        e = st["call"]
        if e["kind"] != "call":
            raise SketchError("this expression has no effect")
        name = e["callee"]
        if name not in ops.OPS:
            raise SketchError(f"unknown operation '{name}'")
        dst_expr, items = self.destination(e)
        if dst_expr is None or dst_expr["kind"] != "name":
            raise SketchError(f"the result of {name}() is discarded; pass a destination tile (dst=t)")
        dst = self.lookup(dst_expr["value"])
        if not isinstance(dst, Tile):
            raise SketchError(f"destination '{dst_expr['value']}' must be an allocated tile")
        args = [self.ev(a) for a in items]
        acc = self.readable(dst, dst_expr["value"]) if ops.OPS[name].category == "gemm" and len(args) == 2 else None
        result = self.counted(ops.call(name, args, self.ev_kwargs(e, skip=("dst",)), acc))
        self.write_destination(dst, dst_expr["value"], name, result)

    def write_destination(self, dst: Tile, name: str, op: str, result: Any) -> None:
        if isinstance(result, Tile):
            if tuple(result.shape) != tuple(dst.shape):
                raise SketchError(f"{op}() produces shape {list(result.shape)} but destination '{name}' is "
                                  f"{list(dst.shape)}")
            assert result.dtype is not None
            dst.ensure_dtype(result.dtype)
            assert dst.data is not None and dst.dtype is not None
            dst.data[...] = convert(result.data, dst.dtype)
        else:
            dst.ensure_dtype("f32" if isinstance(result, float) else "i64")
            assert dst.data is not None and dst.dtype is not None
            dst.data[...] = convert(np.array(result), dst.dtype)
        dst.written = True


# ---- the header: symbols, constexprs, params, tensors ----------------------------------------------------


def _header_value(run: _Run, expr: Optional[Expr], what: str) -> Any:
    if expr is None:
        return None
    try:
        return run.ev(expr)
    except SketchError as err:
        raise SketchError(f"{what}: {err.message}") from None


def _setup(run: _Run, ir: Mapping[str, Any], tensors: Mapping[str, np.ndarray], symbols: Mapping[str, int],
           params: Mapping[str, float], constexprs: Mapping[str, int]) -> None:
    env = run.env
    for name in ir.get("symbols", []):
        if name not in symbols:
            raise SketchError(f"no value for symbol '{name}'")
        env[name] = _int_value(symbols[name], f"symbol '{name}'")
    for c in ir.get("constexprs", []):
        name = c["name"]
        if name in constexprs:
            env[name] = constexprs[name]
        elif c.get("value") is not None:
            env[name] = float(c["value"]) if isinstance(c["value"], str) else c["value"]
        elif c.get("expr") is not None and not c.get("tunable"):
            env[name] = _header_value(run, c["expr"], f"constexpr '{name}'")
    for p in ir.get("params", []):
        _setup_param(run, p, params)
    for t in ir.get("tensors", []):
        _setup_tensor(run, t, tensors)


def _setup_param(run: _Run, p: Mapping[str, Any], params: Mapping[str, float]) -> None:
    name, dtype = p["name"], p.get("dtype") or "f32"
    if name in params:
        value: Any = params[name]
    elif p.get("default") is not None:
        value = _header_value(run, p["default"], f"the default of param '{name}'")
    else:
        raise SketchError(f"no value for param '{name}' (it has no default)")
    if isinstance(value, Tile) or not ops.is_scalar(value):
        raise SketchError(f"param '{name}' must be a number, got {value!r}")
    run.env[name] = convert_scalar(value, dtype)


def _setup_tensor(run: _Run, t: Mapping[str, Any], tensors: Mapping[str, np.ndarray]) -> None:
    name, dtype = t["name"], t["dtype"]
    dims = tuple(run.ev_int(d, f"dimension of tensor '{name}'") for d in t["dims"])
    if any(d <= 0 for d in dims):
        raise SketchError(f"tensor '{name}' has shape {list(dims)}: dimensions must be positive")
    if name not in tensors:
        raise ValueError(f"no array for tensor '{name}'")
    data = tensors[name]
    if not isinstance(data, np.ndarray) or tuple(data.shape) != dims:
        raise ValueError(f"tensor '{name}' must be an array of shape {list(dims)}, got "
                         f"{list(np.shape(data))}")
    if data.dtype != np.dtype(STORAGE[dtype]):
        raise ValueError(f"tensor '{name}' ({dtype}) must be held in a {np.dtype(STORAGE[dtype]).name} array, "
                         f"got {data.dtype.name}")
    if dtype == "bf16":
        rounded = convert(data, "bf16")
        if not np.array_equal(rounded, data, equal_nan=True):
            raise ValueError(f"tensor '{name}' (bf16) holds float32 values that bfloat16 cannot represent")
    run.env[name] = Tensor(name, dtype, data)


def tensor_shapes(ir: Mapping[str, Any], symbols: Mapping[str, int],
                  constexprs: Optional[Mapping[str, int]] = None) -> Dict[str, Tuple[int, ...]]:
    """The shape of every tensor of the sketch for these symbol values."""
    run = _Run(Limits())
    for name in ir.get("symbols", []):
        run.env[name] = int(symbols[name])
    for c in ir.get("constexprs", []):
        if constexprs and c["name"] in constexprs:
            run.env[c["name"]] = constexprs[c["name"]]
        elif c.get("value") is not None:
            run.env[c["name"]] = c["value"]
    return {t["name"]: tuple(run.ev_int(d, "a tensor dimension") for d in t["dims"]) for t in ir.get("tensors", [])}


def eval_scalar(expr: Mapping[str, Any], names: Mapping[str, Any]) -> Any:
    """Evaluates a scalar expression (index arithmetic) over ``names``; raises SketchError, e.g. on
    a name that is not among them."""
    state = _Run(Limits())
    state.env.update(names)
    value = state.ev(dict(expr))
    if isinstance(value, (Tile, Tensor)):
        raise SketchError("expected a number, got a tile")
    return value


def run(ir: Mapping[str, Any], tensors: Mapping[str, np.ndarray], symbols: Mapping[str, int],
        params: Optional[Mapping[str, float]] = None, *, constexprs: Optional[Mapping[str, int]] = None,
        limits: Optional[Limits] = None) -> RunStats:
    """Executes the sketch ``ir`` (its JSON form, parsed).

    ``tensors`` maps every tensor name to a C-ordered array of its declared shape, in its dtype's
    storage (NumPy's own type; float32 holding bfloat16 values for bf16); stores write into these
    arrays in place and nothing else changes them. ``symbols`` gives every symbol; ``params``
    overrides parameter defaults (values are converted to the param's dtype, f32 when not given);
    ``constexprs`` overrides the values in force (e.g. another tune() candidate).

    Raises SketchError (with ``line``) on a design error, SketchBudgetExceeded past ``limits``,
    ValueError when the arrays do not fit the sketch. Returns the run's counters."""
    state = _Run(limits or Limits())
    _setup(state, ir, tensors, symbols, params or {}, constexprs or {})
    state.ex_block(ir.get("body", []))
    return state.stats


__all__ = ["Limits", "RunStats", "SketchBudgetExceeded", "SketchError", "eval_scalar", "run", "tensor_shapes"]
