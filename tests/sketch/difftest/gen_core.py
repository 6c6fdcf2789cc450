"""The pieces the sketch generator (sketchgen.py) builds with: sketch text, random hints, and
random elementwise expressions kept inside safe domains (see sketchgen.py for the rules)."""

from __future__ import annotations

import json
import math
import random
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, ContextManager, Dict, Iterator, List, Optional, Sequence, Tuple

UNARY_OPS = ["neg", "abs", "exp", "exp2", "log", "log2", "sqrt", "rsqrt", "tanh", "sigmoid", "relu", "relu6",
             "leaky_relu", "gelu", "gelu_tanh", "silu", "mish", "softplus", "elu", "selu", "hardtanh",
             "hardsigmoid", "hardswish", "softsign", "sin", "cos", "erf", "sign", "recip", "floor", "round", "clamp"]
BINARY_OPS = ["add", "sub", "mul", "div", "pow", "maximum", "minimum"]
CMP_OPS = ["lt", "le", "gt", "ge", "eq", "ne"]
CMP_OPERATORS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
BIN_OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/"}

# Operations that need a positive argument, and those that are discontinuous (exact operands only).
POSITIVE_ARG = {"log", "log2", "sqrt", "rsqrt", "recip"}
DISCONTINUOUS = {"floor", "round", "sign"}
TAME_LIMIT = 20.0

Shape = Tuple[str, ...]


@dataclass
class Val:
    """A tile-valued expression: its text, its shape (dimension texts), a bound on its values and
    whether it is exact (no rounding happened: a loaded input or an exact function of one)."""

    text: str
    shape: Shape
    lo: float
    hi: float
    exact: bool = False

    @property
    def mag(self) -> float:
        return max(abs(self.lo), abs(self.hi))


@dataclass
class Sketch:
    name: str
    text: str
    meta: Dict[str, object]
    family: str


def _broadcast(a: Shape, b: Shape) -> Shape:
    n = max(len(a), len(b))
    pa, pb = ("1",) * (n - len(a)) + a, ("1",) * (n - len(b)) + b
    return tuple(y if x == "1" else x for x, y in zip(pa, pb))


def _atom(text: str) -> str:
    """text as an operand of an infix operator: parenthesised unless a name or a plain number."""
    try:
        return text if float(text) >= 0 else f"({text})"
    except ValueError:
        return text if text.isidentifier() else f"({text})"


def num(x: float) -> str:
    """A float literal that reads back as exactly this value."""
    text = repr(float(x))
    return text if ("." in text or "e" in text) else text + ".0"


class Builder:
    """Text of one sketch: header sections, body lines with indentation, fresh names, metadata."""

    def __init__(self, rng: random.Random, name: str) -> None:
        self.rng = rng
        self.name = name
        self.symbols: Dict[str, int] = {}
        self.tensors: List[str] = []
        self.consts: List[str] = []
        self.params: List[str] = []
        self.param_values: Dict[str, float] = {}
        self.inputs: Dict[str, Dict[str, object]] = {}
        self.body: List[str] = []
        self.depth = 1
        self.counter = 0

    # ---- header ----

    def symbol(self, name: str, value: int) -> str:
        self.symbols[name] = value
        return name

    def tensor(self, name: str, dims: Sequence[str], dtype: str, draw: Optional[Dict[str, object]] = None) -> str:
        self.tensors.append(f"{name}[{', '.join(dims)}]: {dtype}")
        if draw is not None:
            self.inputs[name] = draw
        return name

    def const(self, name: str, value: int, tunable: Sequence[int] = ()) -> str:
        if tunable:
            self.consts.append(f"{name} = tune({', '.join(str(v) for v in [value, *tunable])})")
        else:
            self.consts.append(f"{name} = {value}")
        return name

    def param(self, name: str, default: float, dtype: Optional[str] = "f32", value: Optional[float] = None) -> str:
        typed = f": {dtype}" if dtype else ""
        self.params.append(f"{name}{typed} = {num(default)}")
        self.param_values[name] = default if value is None else value
        return name

    # ---- body ----

    def fresh(self, prefix: str = "t") -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def line(self, text: str) -> None:
        self.body.append("  " * self.depth + text)

    @contextmanager
    def block(self, header: str) -> Iterator[None]:
        self.line(header)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def loop(self, var: str, rng_args: str, hints: bool = True, independent: bool = True) -> ContextManager[None]:
        """A for loop with random hints. Only a loop whose iterations are independent (no value
        carried from one iteration to the next) may be marked parallel: the language lets parallel
        iterations run concurrently."""
        if hints:
            for h in loop_hints(self.rng, independent):
                self.line(h)
        return self.block(f"for {var} in range({rng_args}):")

    def alloc(self, dims: Sequence[str], dtype: Optional[str] = None, hints: Sequence[str] = (),
              name: Optional[str] = None) -> str:
        name = name or self.fresh("a")
        parts = [f"[{', '.join(dims)}]"]
        if dtype is not None:
            parts.append(f"dtype={dtype}")
        mem = list(hints) or memory_hints(self.rng)
        if mem:
            parts.append("llm_hint=[" + ", ".join(f'"{h}"' for h in mem) + "]")
        self.line(f"{name} = alloc({', '.join(parts)})")
        return name

    def render(self) -> str:
        meta = {"symbols": self.symbols, "params": self.param_values, "inputs": self.inputs}
        head = [f"# difftest: {json.dumps(meta, sort_keys=True)}", f"sketch {self.name} {{"]
        if self.symbols:
            head.append(f"  symbols: {', '.join(self.symbols)};")
        head.append(f"  tensors: {'; '.join(self.tensors)};")
        if self.consts:
            head.append(f"  constexpr: {', '.join(self.consts)};")
        if self.params:
            head.append(f"  params: {', '.join(self.params)};")
        head.append("")
        return "\n".join(head + self.body + ["}", ""])


def loop_hints(rng: random.Random, independent: bool = True) -> List[str]:
    out = []
    r = rng.random()
    if r < 0.25 and independent:
        out.append(f'@llm_hint("parallel", "{rng.choice(["grididx", "coreidx", "threadidx.x", "grididx.y"])}")')
    elif r < 0.35:
        out.append('@llm_hint("pipeline")')
    r = rng.random()
    if r < 0.15:
        out.append(f'@llm_hint("vectorize", "simd", {rng.choice([4, 8, 16])})')
    elif r < 0.22:
        out.append('@llm_hint("vectorize", "simd")')
    if rng.random() < 0.1:
        out.append(f'@llm_hint("unroll", "{rng.choice([2, 4])}")')
    if rng.random() < 0.12:
        out.append(f'@llm_hint("math", "{rng.choice(["fast", "precise"])}")')
    return out


def memory_hints(rng: random.Random) -> List[str]:
    r = rng.random()
    if r < 0.5:
        return []
    tier = [rng.choice(["fastest", "fast", "medium", "slow"])]
    if rng.random() < 0.3:
        tier.append(rng.choice(["reuse", "double_buffer", "input_cache", "temp_workspace"]))
    return tier


def uniform(lo: float, hi: float, nan: float = 0.0) -> Dict[str, object]:
    d: Dict[str, object] = {"kind": "uniform", "lo": lo, "hi": hi}
    if nan:
        d["nan"] = nan
    return d


# ---- expressions -----------------------------------------------------------------------------------


class Exprs:
    """Random elementwise expressions over given operands, kept inside safe domains."""

    def __init__(self, rng: random.Random, scalars: Sequence[Tuple[str, float]] = ()) -> None:
        self.rng = rng
        self.scalars = list(scalars)  # (text, value) of params or constants usable as scalars
        self.used: set = set()

    def scalar(self, lo: float = -1.5, hi: float = 1.5) -> Tuple[str, float]:
        if self.scalars and self.rng.random() < 0.3:
            return self.rng.choice(self.scalars)
        v = round(self.rng.uniform(lo, hi), 2) or 0.25
        return num(v), v

    def tame(self, v: Val) -> Val:
        if v.mag > TAME_LIMIT:
            self.used.add("tanh")
            return Val(f"tanh({v.text})", v.shape, max(-1.0, math.tanh(v.lo)), min(1.0, math.tanh(v.hi)))
        return v

    def positive(self, v: Val) -> Val:
        if v.lo >= 0.5:
            return v
        self.used.add("abs")
        return Val(f"abs({v.text}) + 0.5", v.shape, 0.5, v.mag + 0.5)

    def unary(self, name: str, v: Val) -> Val:
        """name applied to v, after the domain fixes the operation needs."""
        self.used.add(name)
        if name in POSITIVE_ARG:
            v = self.positive(v)
        if name in ("exp", "exp2") and (v.hi > 8 or v.lo < -30):
            v = Val(f"tanh({v.text}) * 3.0", v.shape, -3.0, 3.0)
        lo, hi, sh = v.lo, v.hi, v.shape
        t = v.text
        mono: Dict[str, Callable[[float], float]] = {
            "exp": math.exp, "exp2": lambda x: 2.0 ** x, "log": math.log, "log2": math.log2,
            "sqrt": math.sqrt, "tanh": math.tanh, "sigmoid": lambda x: 1 / (1 + math.exp(-x)),
            "relu": lambda x: max(x, 0.0), "relu6": lambda x: min(max(x, 0.0), 6.0), "erf": math.erf,
            "softsign": lambda x: x / (1 + abs(x)), "floor": math.floor, "round": round,
            "sign": lambda x: float((x > 0) - (x < 0)), "softplus": lambda x: math.log1p(math.exp(min(x, 30))),
            "hardsigmoid": lambda x: min(max(x / 6 + 0.5, 0.0), 1.0), "leaky_relu": lambda x: x if x >= 0 else 0.01 * x,
            "elu": lambda x: x if x > 0 else math.expm1(x), "hardtanh": lambda x: min(max(x, -1.0), 1.0),
            "selu": lambda x: 1.0507009873554805 * (x if x > 0 else 1.6732632423543772 * math.expm1(x)),
        }
        exact = False
        if name in mono:
            out = Val(f"{name}({t})", sh, mono[name](lo), mono[name](hi))
            exact = name in ("relu", "relu6", "sign", "floor", "round", "hardtanh") and v.exact
        elif name == "neg":
            out = Val(f"neg({t})" if self.rng.random() < 0.5 else f"-{t}" if t.isidentifier() else f"neg({t})",
                      sh, -hi, -lo)
            exact = v.exact
        elif name == "abs":
            out = Val(f"abs({t})", sh, 0.0 if lo < 0 < hi else min(abs(lo), abs(hi)), v.mag)
            exact = v.exact
        elif name == "rsqrt":
            out = Val(f"rsqrt({t})", sh, 1 / math.sqrt(hi), 1 / math.sqrt(lo))
        elif name == "recip":
            out = Val(f"recip({t})", sh, 1 / hi, 1 / lo)
        elif name in ("sin", "cos"):
            out = Val(f"{name}({t})", sh, -1.0, 1.0)
        elif name in ("gelu", "gelu_tanh", "silu", "mish", "hardswish"):
            out = Val(f"{name}({t})", sh, -0.4, max(hi, 0.0) + 0.01)
        elif name == "clamp":
            a, b = sorted([round(self.rng.uniform(-1.5, 0.0), 2), round(self.rng.uniform(0.1, 1.5), 2)])
            form = self.rng.random()
            text = (f"clamp({t}, {num(a)}, {num(b)})" if form < 0.6
                    else f"clamp({t}, lo={num(a)}, hi={num(b)})")
            out = Val(text, sh, max(lo, a) if lo < b else a, min(hi, b) if hi > a else b)
            exact = v.exact
        else:
            raise ValueError(name)
        if name == "leaky_relu" and self.rng.random() < 0.5:
            slope = round(self.rng.uniform(0.01, 0.3), 2)
            out.text = f"leaky_relu({t}, {num(slope)})"
        elif name == "elu" and self.rng.random() < 0.5:
            out.text = f"elu({t}, alpha={num(round(self.rng.uniform(0.5, 1.5), 2))})"
            out.lo = min(out.lo, -1.5)
        elif name == "softplus" and self.rng.random() < 0.4:
            out.text = f"softplus({t}, beta={num(2.0)}, threshold={num(10.0)})"
        elif name == "hardtanh" and self.rng.random() < 0.4:
            out.text = f"hardtanh({t}, -0.5, 0.5)"
            out.lo, out.hi = max(lo, -0.5) if lo < 0.5 else -0.5, min(hi, 0.5) if hi > -0.5 else 0.5
        out.exact = exact
        if out.lo > out.hi:
            out.lo, out.hi = out.hi, out.lo
        return self.tame(out)

    def binary(self, name: str, a: Val, b: Val) -> Val:
        """name(a, b) with broadcasting; divisors made positive, pow's base positive and exponent small."""
        self.used.add(name)
        sh = _broadcast(a.shape, b.shape)
        if name == "div":
            b = self.positive(b)
            vals = [x / y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        elif name == "pow":
            a = self.positive(a)
            if a.hi > 3.0:
                a = Val(f"sigmoid({a.text}) + 0.5", a.shape, 0.5, 1.5)
            if b.mag > 2.0:
                b = Val(f"tanh({b.text})", b.shape, -1.0, 1.0)
            vals = [x ** y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        elif name in ("add", "sub"):
            vals = [a.lo + b.lo, a.hi + b.hi] if name == "add" else [a.lo - b.hi, a.hi - b.lo]
        elif name == "mul":
            vals = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        else:
            vals = [min(a.lo, b.lo), max(a.hi, b.hi)]
        op = BIN_OPERATORS.get(name)
        if op and self.rng.random() < 0.4:
            text = f"{_atom(a.text)} {op} {_atom(b.text)}"
        elif name in ("maximum", "minimum") and self.rng.random() < 0.3:
            text = f"{'max' if name == 'maximum' else 'min'}({a.text}, {b.text})"
        else:
            text = f"{name}({a.text}, {b.text})"
        exact = a.exact and b.exact and name in ("maximum", "minimum")
        return self.tame(Val(text, sh, min(vals), max(vals), exact))

    def with_scalar(self, name: str, a: Val) -> Val:
        text, value = self.scalar(0.5, 1.5) if name in ("div", "pow") else self.scalar()
        if name == "pow":
            a = self.positive(a)
            if a.hi > 3.0:
                a = Val(f"sigmoid({a.text}) + 0.5", a.shape, 0.5, 1.5)
            value = self.rng.choice([0.5, 2.0, 1.5, -1.0])
            text = num(value)
        s = Val(text, (), value, value, True)
        return self.binary(name, a, s) if name != "div" or value >= 0.5 else self.binary("mul", a, s)

    def mask(self, exacts: Sequence[Val]) -> Val:
        """A bool tile from comparisons of exact operands (logical_and/or of two sometimes)."""
        def one() -> Val:
            cmp = self.rng.choice(CMP_OPS)
            self.used.add(cmp)
            a = self.rng.choice(exacts)
            if self.rng.random() < 0.5 or len(exacts) == 1:
                other = num(round(self.rng.uniform(a.lo, a.hi), 2))
                sh = a.shape
            else:
                b = self.rng.choice(exacts)
                other, sh = b.text, _broadcast(a.shape, b.shape)
            if self.rng.random() < 0.5:
                return Val(f"{_atom(a.text)} {CMP_OPERATORS[cmp]} {_atom(other)}", sh, 0, 1, True)
            return Val(f"{cmp}({a.text}, {other})", sh, 0, 1, True)
        m = one()
        if self.rng.random() < 0.3:
            name = self.rng.choice(["logical_and", "logical_or"])
            self.used.add(name)
            n = one()
            m = Val(f"{name}({m.text}, {n.text})", _broadcast(m.shape, n.shape), 0, 1, True)
        return m

    def expr(self, operands: Sequence[Val], depth: int) -> Val:
        """A random expression over operands (tiles) of at most ``depth`` levels."""
        rng = self.rng
        if depth <= 0 or rng.random() < 0.15:
            return rng.choice(operands)
        r = rng.random()
        if r < 0.45:
            v = self.expr(operands, depth - 1)
            choices = [u for u in UNARY_OPS if u not in DISCONTINUOUS or v.exact]
            return self.unary(rng.choice(choices), v)
        if r < 0.75:
            return self.binary(rng.choice(BINARY_OPS), self.expr(operands, depth - 1), self.expr(operands, depth - 1))
        if r < 0.9:
            return self.with_scalar(rng.choice(BINARY_OPS), self.expr(operands, depth - 1))
        exacts = [o for o in operands if o.exact]
        if not exacts:
            return self.unary("tanh", self.expr(operands, depth - 1))
        m = self.mask(exacts)
        a, b = self.expr(operands, depth - 1), self.expr(operands, depth - 1)
        self.used.add("where")
        sh = _broadcast(_broadcast(m.shape, a.shape), b.shape)
        return Val(f"where({m.text}, {a.text}, {b.text})", sh, min(a.lo, b.lo), max(a.hi, b.hi))

    def full(self, v: Val, full: Val) -> Val:
        """v stretched to full's shape when broadcasting left it smaller."""
        if _broadcast(v.shape, full.shape) == v.shape and len(v.shape) == len(full.shape):
            return v
        return self.binary("add", v, Val(f"mul({full.text}, 0.0)", full.shape, 0.0, 0.0))
