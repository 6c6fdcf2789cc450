"""The sketch interpreter against PyTorch / NumPy / hand-computed results, operation by operation."""

from __future__ import annotations

import math
import os
import re
import sys
import unittest
from typing import Any, Callable, Dict, Optional

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from akg_harness import sketch_interp as si  # noqa: E402
from akg_harness import sketch_ops  # noqa: E402
from akg_harness.sketch_values import convert, round_bf16  # noqa: E402
from sketch_helper import REPO, sketch_ir, sketch_irs  # noqa: E402

F32 = np.float32


def run(text: str, tensors: Dict[str, np.ndarray], symbols: Optional[Dict[str, int]] = None,
        params: Optional[Dict[str, float]] = None, ir: Optional[Dict[str, Any]] = None,
        **kw: Any) -> Dict[str, np.ndarray]:
    ir = ir or sketch_ir(text)
    si.run(ir, tensors, symbols or {}, params or {}, **kw)
    return tensors


def unary_sketch(expr: str, dtype: str = "f32", tile_dtype: str = "") -> str:
    td = f", dtype={tile_dtype}" if tile_dtype else ""
    return (f"sketch u {{\n  symbols: N;\n  tensors: x[N]: {dtype}; y[N]: {dtype};\n\n"
            f"  t = alloc([N]{td})\n  load(x -> t)\n  store({expr} -> y)\n}}\n")


def torch_unary(name: str) -> Callable[[torch.Tensor], torch.Tensor]:
    table: Dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
        "neg": torch.neg, "abs": torch.abs, "exp": torch.exp, "exp2": torch.exp2, "log": torch.log,
        "log2": torch.log2, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
        "relu": torch.relu, "relu6": F.relu6, "leaky_relu": F.leaky_relu, "gelu": F.gelu,
        "gelu_tanh": lambda t: F.gelu(t, approximate="tanh"), "silu": F.silu, "mish": F.mish,
        "softplus": F.softplus, "elu": F.elu, "selu": F.selu, "hardtanh": F.hardtanh,
        "hardsigmoid": F.hardsigmoid, "hardswish": F.hardswish, "softsign": F.softsign, "sin": torch.sin,
        "cos": torch.cos, "erf": torch.erf, "sign": torch.sign, "recip": torch.reciprocal, "floor": torch.floor,
        "round": torch.round, "clamp": lambda t: torch.clamp(t, -0.5, 0.7),
    }
    return table[name]


POSITIVE = {"log", "log2", "sqrt", "rsqrt", "recip"}


class UnaryTest(unittest.TestCase):
    """Every unary operation against PyTorch computed in float64 and rounded once."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.names = [n for n, info in sketch_ops.OPS.items() if info.category == "unary"]
        exprs = [f"clamp(t, -0.5, 0.7)" if n == "clamp" else f"{n}(t)" for n in cls.names]
        cls.irs = dict(zip(cls.names, sketch_irs([unary_sketch(e) for e in exprs])))
        cls.irs16 = dict(zip(cls.names, sketch_irs([unary_sketch(e, "f16") for e in exprs])))
        cls.irsbf = dict(zip(cls.names, sketch_irs([unary_sketch(e, "bf16") for e in exprs])))

    def inputs(self, name: str, n: int = 257) -> np.ndarray:
        rng = np.random.default_rng(7)
        x = rng.uniform(-6, 6, n)
        if name in POSITIVE:
            x = np.abs(x) + 0.05
        x[:5] = [0.0, -0.0, 0.5, -2.5, 3.5] if name not in POSITIVE else [0.05, 1.0, 4.0, 2.5, 0.5]
        return x

    def test_f32_against_torch_float64(self) -> None:
        for name in self.names:
            with self.subTest(op=name):
                x = self.inputs(name).astype(F32)
                y = np.full_like(x, np.nan)
                run("", {"x": x, "y": y}, {"N": x.size}, ir=self.irs[name])
                ref = torch_unary(name)(torch.from_numpy(x.astype(np.float64))).numpy().astype(F32)
                # atol: cancellation in formulas such as gelu_tanh's 1 + tanh(u) near -1 makes the last bits of
                # two float64 evaluations differ on values around 1e-10
                np.testing.assert_allclose(y, ref, rtol=2e-7, atol=1e-12)

    def test_f16_and_bf16_compute_wider_and_round_once(self) -> None:
        for name in self.names:
            for dtype, irs in (("f16", self.irs16), ("bf16", self.irsbf)):
                with self.subTest(op=name, dtype=dtype):
                    x = self.inputs(name, 64)
                    xs = convert(x, dtype)
                    y = np.zeros_like(xs)
                    run("", {"x": xs, "y": y}, {"N": xs.size}, ir=irs[name])
                    tdt = torch.float16 if dtype == "f16" else torch.bfloat16
                    ref = torch_unary(name)(torch.from_numpy(xs.astype(np.float64))).to(tdt).to(torch.float64).numpy()
                    np.testing.assert_array_equal(y.astype(np.float64), ref)

    def test_parameters(self) -> None:
        x = np.linspace(-4, 4, 33).astype(F32)
        cases = {
            "leaky_relu(t, 0.2)": F.leaky_relu(torch.from_numpy(x).double(), 0.2),
            "leaky_relu(t, negative_slope=0.3)": F.leaky_relu(torch.from_numpy(x).double(), 0.3),
            "softplus(t, beta=2.0, threshold=5.0)": F.softplus(torch.from_numpy(x).double(), 2.0, 5.0),
            "elu(t, alpha=0.5)": F.elu(torch.from_numpy(x).double(), 0.5),
            "hardtanh(t, -2.0, 2.0)": F.hardtanh(torch.from_numpy(x).double(), -2.0, 2.0),
            "clamp(t, lo=-1.0, hi=1.5)": torch.clamp(torch.from_numpy(x).double(), -1.0, 1.5),
            "clamp(t, min=-1.0)": torch.clamp(torch.from_numpy(x).double(), min=-1.0),
        }
        irs = sketch_irs([unary_sketch(e) for e in cases])
        for (expr, ref), ir in zip(cases.items(), irs):
            with self.subTest(expr=expr):
                y = np.zeros_like(x)
                run("", {"x": x.copy(), "y": y}, {"N": x.size}, ir=ir)
                np.testing.assert_allclose(y, ref.numpy().astype(F32), rtol=2e-7)

    def test_nan_propagates(self) -> None:
        x = np.array([np.nan, 1.0, -1.0], F32)
        for expr in ("relu(t)", "abs(t)", "exp(t)", "clamp(t, -0.5, 0.5)", "sign(t)"):
            with self.subTest(expr=expr):
                y = np.zeros_like(x)
                run(unary_sketch(expr), {"x": x.copy(), "y": y}, {"N": 3})
                self.assertTrue(np.isnan(y[0]))


class ConversionTest(unittest.TestCase):
    def test_bf16_rounding_is_bit_exact(self) -> None:
        rng = np.random.default_rng(1)
        x = np.concatenate([rng.standard_normal(4000) * 10.0 ** rng.integers(-40, 39, 4000),
                            [1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, 3.3895313892515355e38, 3.4e38, 1e-40, 9.2e-41,
                             -0.0, np.inf, -np.inf]])
        ours = round_bf16(x)
        ref = torch.from_numpy(x.astype(np.float64)).to(torch.bfloat16).to(torch.float32).numpy()
        np.testing.assert_array_equal(ours, ref)

    def test_f16_rounding_matches_torch(self) -> None:
        x = np.random.default_rng(2).standard_normal(4000) * 1000
        np.testing.assert_array_equal(convert(x, "f16"), torch.from_numpy(x).to(torch.float16).numpy())

    def test_float_to_int_rounds_half_even_and_saturates(self) -> None:
        x = np.array([2.5, 3.5, -2.5, -2.6, 2.7, 3e9, -3e9, np.nan, np.inf, -np.inf], np.float64)
        self.assertEqual(convert(x, "i32").tolist(),
                         [2, 4, -2, -3, 3, 2**31 - 1, -2**31, 0, 2**31 - 1, -2**31])
        self.assertEqual(convert(x, "u8").tolist(), [2, 4, 0, 0, 3, 255, 0, 0, 255, 0])
        self.assertEqual(convert(np.array([1e300, -1e300]), "i64").tolist(), [2**63 - 1, -2**63])
        self.assertEqual(convert(np.array([300, -300, 5], np.int64), "i8").tolist(), [127, -128, 5])
        self.assertEqual(convert(np.array([0.0, -0.0, 0.1, np.nan]), "bool").tolist(), [False, False, True, True])

    def test_cast_op_and_store_conversion(self) -> None:
        text = """sketch c {
  symbols: N;
  tensors: x[N]: f32; l[N]: i64; a[N]: i32; b[N]: bool; d[N]: f64; s[N]: i32; q[N]: i32;

  t = alloc([N])
  load(x -> t)
  store(cast(t, i32) -> a)
  store(cast(t, bool) -> b)
  store(cast(t, float64) -> d)
  store(t -> s)
  u = alloc([N], dtype=i64)
  load(l -> u)
  store(cast(u, i32) -> q)
}
"""
        x = np.array([0.5, 1.5, -1.5, 5e9, 0.0, -7.4], F32)
        l = np.array([1, -(2**40), 2**40, 7, 0, -3], np.int64)
        out = {k: np.zeros(6, dt) for k, dt in (("a", np.int32), ("b", np.bool_), ("d", np.float64),
                                                 ("s", np.int32), ("q", np.int32))}
        run(text, {"x": x, "l": l, **out}, {"N": 6})
        self.assertEqual(out["a"].tolist(), [0, 2, -2, 2**31 - 1, 0, -7])
        self.assertEqual(out["s"].tolist(), out["a"].tolist())
        self.assertEqual(out["b"].tolist(), [True, True, True, True, False, True])
        self.assertEqual(out["d"].tolist(), x.astype(np.float64).tolist())
        self.assertEqual(out["q"].tolist(), [1, -2**31, 2**31 - 1, 7, 0, -3])


BIN2D = """sketch b {
  tensors: x[4, 5]: f32; r[5]: f32; c[4, 1]: f32; y[4, 5]: f32;

  a = alloc([4, 5])
  load(x -> a)
  rv = alloc([5])
  load(r -> rv)
  cv = alloc([4, 1])
  load(c -> cv)
  store(EXPR -> y)
}
"""


class BinaryTest(unittest.TestCase):
    def setUp(self) -> None:
        rng = np.random.default_rng(3)
        self.x = rng.uniform(0.5, 2, (4, 5)).astype(F32)
        self.r = rng.uniform(-2, 2, 5).astype(F32)
        self.c = rng.uniform(0.5, 2, (4, 1)).astype(F32)

    def check(self, expr: str, ref: np.ndarray, rtol: float = 1e-6) -> None:
        """Each operation rounds to f32 once, so an expression of several is within a few ulp."""
        y = np.zeros((4, 5), F32)
        run(BIN2D.replace("EXPR", expr), {"x": self.x.copy(), "r": self.r.copy(), "c": self.c.copy(), "y": y})
        np.testing.assert_allclose(y, ref.astype(F32), rtol=rtol)

    def test_ops_with_broadcasting(self) -> None:
        x, r, c = (v.astype(np.float64) for v in (self.x, self.r, self.c))
        cases = {"add(a, rv)": x + r, "sub(cv, a)": c - x, "mul(rv, cv)": r * c + 0 * x, "div(a, cv)": x / c,
                 "pow(a, rv)": x ** r, "maximum(a, rv)": np.maximum(x, r), "minimum(cv, rv)": np.minimum(c, r) + 0 * x,
                 "max(a, cv)": np.maximum(x, c), "min(a, rv)": np.minimum(x, r),
                 "a + rv * cv - a / cv": x + r * c - x / c, "a ** 2.0": x ** 2, "-a + 1.5": -x + 1.5,
                 "2.0 - a": 2.0 - x, "a // cv": np.floor_divide(x, c), "a % cv": np.mod(x, c)}
        for expr, ref in cases.items():
            with self.subTest(expr=expr):
                self.check(expr, ref)

    def test_nan_propagates_through_maximum_and_minimum(self) -> None:
        self.x[0, 0] = np.nan
        y = np.zeros((4, 5), F32)
        run(BIN2D.replace("EXPR", "maximum(a, rv)"), {"x": self.x, "r": self.r, "c": self.c, "y": y})
        self.assertTrue(np.isnan(y[0, 0]))

    def test_comparisons_and_where(self) -> None:
        x, r = self.x, self.r
        for name, fn in (("lt", np.less), ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal),
                         ("eq", np.equal), ("ne", np.not_equal)):
            with self.subTest(op=name):
                self.check(f"where({name}(a, rv), a, 0.0)", np.where(fn(x, r), x, 0.0))
        self.check("where(logical_and(a > 1.0, rv < 0.0), 1.0, cv)", np.where((x > 1) & (r < 0), 1.0, self.c + 0 * x))
        self.check("where(logical_or(a > 1.5, rv > 1.0), a, rv)", np.where((x > 1.5) | (r > 1), x, r + 0 * x))

    def test_integer_arithmetic_is_python_floor(self) -> None:
        text = """sketch i {
  tensors: x[6]: i32; q[6]: i32; m[6]: i32; lt[6]: bool;

  t = alloc([6])
  load(x -> t)
  store(t // 4 -> q)
  store(t % 4 -> m)
  store(t < 2.5 -> lt)
}
"""
        x = np.array([-7, -4, -1, 0, 2, 7], np.int32)
        q, m, lt = np.zeros(6, np.int32), np.zeros(6, np.int32), np.zeros(6, np.bool_)
        run(text, {"x": x, "q": q, "m": m, "lt": lt})
        self.assertEqual(q.tolist(), [-2, -1, -1, 0, 0, 1])
        self.assertEqual(m.tolist(), [1, 0, 3, 0, 2, 3])
        self.assertEqual(lt.tolist(), [True, True, True, True, True, False])  # exact: 2 < 2.5


class ReductionTest(unittest.TestCase):
    X = np.random.default_rng(4).uniform(-2, 2, (3, 4, 5)).astype(F32)

    def reduce(self, call: str, out_shape: tuple, dtype: str = "f32") -> np.ndarray:
        dims = ", ".join(str(d) for d in out_shape) if out_shape else "1"
        text = (f"sketch r {{\n  tensors: x[3, 4, 5]: f32; y[{dims}]: {dtype};\n\n  t = alloc([3, 4, 5])\n"
                f"  load(x -> t)\n  store({call} -> y)\n}}\n")
        y = np.zeros(out_shape or (1,), np.float32 if dtype == "f32" else np.int32)
        run(text, {"x": self.X.copy(), "y": y})
        return y

    def test_reductions_over_axes(self) -> None:
        x = torch.from_numpy(self.X.astype(np.float64))
        cases = [
            ("reduce_sum(t, axis=1)", (3, 1, 5), x.sum(1, keepdim=True)),
            ("reduce_sum(t, axis=[0, 2], keepdim=False)", (4,), x.sum((0, 2))),
            ("reduce_max(t, 2, keepdim=False)", (3, 4), x.amax(2)),
            ("reduce_min(t, axis=-1)", (3, 4, 1), x.amin(-1, keepdim=True)),
            ("reduce_mean(t, axis=[1, 2])", (3, 1, 1), x.mean((1, 2), keepdim=True)),
            ("reduce_prod(t, axis=0, keepdim=False)", (4, 5), x.prod(0)),
            ("reduce_sum(t)", (1, 1, 1), x.sum().reshape(1, 1, 1)),
            ("reduce_max(t, keepdim=False)", (), x.amax().reshape(1)),
        ]
        for call, shape, ref in cases:
            with self.subTest(call=call):
                np.testing.assert_allclose(self.reduce(call, shape), ref.numpy().astype(F32).reshape(shape or (1,)),
                                           rtol=1e-6, atol=1e-6)

    def test_arg_reductions_take_the_first_index(self) -> None:
        x = self.X.copy()
        x[1, :, 2] = 1.75  # ties along axis 1: the first wins
        self.X = x
        ref = torch.from_numpy(x)
        np.testing.assert_array_equal(self.reduce("argmax(t, axis=1)", (3, 1, 5), "i32"),
                                      ref.argmax(1, keepdim=True).numpy())
        np.testing.assert_array_equal(self.reduce("argmin(t, axis=2, keepdim=False)", (3, 4), "i32"),
                                      ref.argmin(2).numpy())
        np.testing.assert_array_equal(self.reduce("reduce_argmax(t, axis=[1, 2], keepdim=False)", (3,), "i32"),
                                      ref.reshape(3, 20).argmax(1).numpy())
        np.testing.assert_array_equal(self.reduce("argmax(t)", (1, 1, 1), "i32"),
                                      ref.reshape(-1).argmax().reshape(1, 1, 1).numpy())
        self.assertEqual(self.reduce("argmax(t, axis=1)", (3, 1, 5), "i32")[1, 0, 2], 0)

    def test_sums_accumulate_in_f32(self) -> None:
        text = """sketch s {
  tensors: x[3]: f32; y[1]: f32; z[1]: f64;

  t = alloc([3])
  load(x -> t)
  store(reduce_sum(t) -> y)
  u = alloc([3], dtype=f64)
  load(x -> u)
  store(reduce_sum(u) -> z)
}
"""
        y, z = np.zeros(1, F32), np.zeros(1, np.float64)
        run(text, {"x": np.array([1e8, 1.0, -1e8], F32), "y": y, "z": z})
        self.assertEqual(y[0], 0.0)  # 1e8 + 1 rounds to 1e8 in f32
        self.assertEqual(z[0], 1.0)

    def test_scans(self) -> None:
        x = torch.from_numpy(self.X[0].astype(np.float64))  # [4, 5]
        cases = {
            "cumsum(t)": x.cumsum(1),
            "cumsum(t, axis=0)": x.cumsum(0),
            "cumsum(t, axis=1, reverse=True)": x.flip(1).cumsum(1).flip(1),
            "cumsum(t, axis=1, exclusive=True)": torch.cat([torch.zeros(4, 1), x.cumsum(1)[:, :-1]], 1),
            "cumsum(t, axis=0, reverse=True, exclusive=True)":  # out[i] = sum of x[j] for j > i
                torch.cat([x.flip(0).cumsum(0).flip(0)[1:], torch.zeros(1, 5)], 0),
            "cumprod(t, -1)": x.cumprod(1),
            "cumprod(t, axis=1, exclusive=True)": torch.cat([torch.ones(4, 1), x.cumprod(1)[:, :-1]], 1),
            "cumprod(t, axis=0, reverse=True)": x.flip(0).cumprod(0).flip(0),
        }
        for call, ref in cases.items():
            with self.subTest(call=call):
                text = ("sketch s {\n  tensors: x[4, 5]: f32; y[4, 5]: f32;\n\n  t = alloc([4, 5])\n"
                        f"  load(x -> t)\n  store({call} -> y)\n}}\n")
                y = np.zeros((4, 5), F32)
                run(text, {"x": self.X[0].copy(), "y": y})
                np.testing.assert_allclose(y, ref.numpy().astype(F32), rtol=1e-6, atol=1e-6)

    def test_softmax(self) -> None:
        x = torch.from_numpy(self.X[0].astype(np.float64))
        for call, ref in (("softmax(t)", torch.softmax(x, 1)), ("softmax(t, axis=0)", torch.softmax(x, 0)),
                          ("log_softmax(t, -1)", torch.log_softmax(x, 1)),
                          ("log_softmax(t, axis=0)", torch.log_softmax(x, 0))):
            with self.subTest(call=call):
                text = ("sketch s {\n  tensors: x[4, 5]: f32; y[4, 5]: f32;\n\n  t = alloc([4, 5])\n"
                        f"  load(x -> t)\n  store({call} -> y)\n}}\n")
                y = np.zeros((4, 5), F32)
                run(text, {"x": self.X[0].copy(), "y": y})
                np.testing.assert_allclose(y, ref.numpy().astype(F32), rtol=1e-6, atol=1e-7)


GEMM = """sketch g {
  tensors: A[SA]: DT; B[SB]: DT; C[6, 5]: ACC;

  a = alloc([SA])
  load(A -> a)
  b = alloc([SB])
  load(B -> b)
  BODY
  store(acc -> C)
}
"""


class LinearAlgebraTest(unittest.TestCase):
    def gemm(self, body: str, ta: bool = False, tb: bool = False, dtype: str = "f32", acc: str = "f32") -> np.ndarray:
        rng = np.random.default_rng(5)
        A = rng.uniform(-1, 1, (7, 6) if ta else (6, 7))
        B = rng.uniform(-1, 1, (5, 7) if tb else (7, 5))
        text = (GEMM.replace("SA", "7, 6" if ta else "6, 7").replace("SB", "5, 7" if tb else "7, 5")
                .replace("DT", dtype).replace("ACC", acc).replace("BODY", body))
        C = np.zeros((6, 5), np.float64 if acc == "f64" else F32)
        run(text, {"A": convert(A, dtype), "B": convert(B, dtype), "C": C})
        a = convert(A, dtype).astype(np.float64)
        b = convert(B, dtype).astype(np.float64)
        self.ref = (a.T if ta else a) @ (b.T if tb else b)
        return C

    def test_forms_and_trans_flags(self) -> None:
        forms = {
            "acc = gemm(a, b)": lambda r: r,
            'acc = alloc([6, 5], dtype=f32, llm_hint=["init_zero"])\n  gemm(a, b, acc)\n  gemm(a, b, acc)':
                lambda r: 2 * r,
            "acc = fill([6, 5], 1.0)\n  acc = gemm(a, b, acc)": lambda r: r + 1,
            "acc = zeros([6, 5])\n  gemm(a, b, dst=acc)\n  acc += gemm(a, b)": lambda r: 2 * r,
        }
        for body, expect in forms.items():
            for ta in (False, True):
                for tb in (False, True):
                    flags = (", trans_a=True" if ta else "") + (", trans_b=True" if tb else "")
                    b2 = (body.replace("(a, b)", f"(a, b{flags})").replace("(a, b, acc)", f"(a, b, acc{flags})")
                          .replace("(a, b, dst=acc)", f"(a, b{flags}, dst=acc)"))
                    with self.subTest(body=b2):
                        C = self.gemm(b2, ta, tb)
                        np.testing.assert_allclose(C, expect(self.ref), rtol=1e-5, atol=1e-6)

    def test_f16_inputs_accumulate_in_f32_and_f64_accumulator(self) -> None:
        C = self.gemm("acc = gemm(a, b)", dtype="f16")
        np.testing.assert_allclose(C, self.ref, rtol=1e-6, atol=1e-6)
        C = self.gemm("acc = zeros([6, 5], dtype=f64)\n  acc = gemm(a, b, acc)", dtype="f64", acc="f64")
        np.testing.assert_allclose(C, self.ref, rtol=1e-13)

    def test_dot_and_transpose(self) -> None:
        text = """sketch d {
  tensors: x[3, 4]: f32; v[4]: f32; w[4, 2]: f32; s[1]: f32; m[3, 2]: f32; t[4, 3]: f32; p[2, 4, 3]: f32;

  a = alloc([3, 4])
  load(x -> a)
  b = alloc([4])
  load(v -> b)
  c = alloc([4, 2])
  load(w -> c)
  r = alloc([4])
  load(x[1, :] -> r)
  store(dot(r, b) -> s)
  store(dot(a, c) -> m)
  store(transpose(a) -> t)
  q = alloc([2, 3, 4])
  load(x[None, :, :] -> q[0:1, :, :])
  load(x[None, :, :] -> q[1:2, :, :])
  store(transpose(q, [0, 2, 1]) -> p)
}
"""
        rng = np.random.default_rng(6)
        x, v, w = (rng.uniform(-1, 1, s).astype(F32) for s in ((3, 4), (4,), (4, 2)))
        out = {"s": np.zeros(1, F32), "m": np.zeros((3, 2), F32), "t": np.zeros((4, 3), F32),
               "p": np.zeros((2, 4, 3), F32)}
        run(text, {"x": x, "v": v, "w": w, **out})
        np.testing.assert_allclose(out["s"], [x[1] @ v], rtol=1e-6)
        np.testing.assert_allclose(out["m"], x @ w, rtol=1e-6)
        np.testing.assert_array_equal(out["t"], x.T)
        np.testing.assert_array_equal(out["p"], np.stack([x.T, x.T]))

    def test_gather(self) -> None:
        text = """sketch g {
  tensors: x[3, 5]: f32; i[2, 4]: i64; y[2, 4]: f32; j[3, 2]: i32; z[3, 2]: f32;

  a = alloc([3, 5])
  load(x -> a)
  k = alloc([2, 4])
  load(i -> k)
  store(gather(a, k, 0) -> y)
  m = alloc([3, 2])
  load(j -> m)
  store(gather(a, m, axis=1) -> z)
}
"""
        rng = np.random.default_rng(8)
        x = rng.uniform(-1, 1, (3, 5)).astype(F32)
        i = rng.integers(0, 3, (2, 4))
        j = rng.integers(0, 5, (3, 2)).astype(np.int32)
        y, z = np.zeros((2, 4), F32), np.zeros((3, 2), F32)
        ir = sketch_ir(text)
        run("", {"x": x, "i": i, "y": y, "j": j, "z": z}, ir=ir)
        tx = torch.from_numpy(x)
        np.testing.assert_array_equal(y, torch.gather(tx, 0, torch.from_numpy(i)).numpy())
        np.testing.assert_array_equal(z, torch.gather(tx, 1, torch.from_numpy(j).long()).numpy())
        j[2, 1] = 5
        with self.assertRaises(si.SketchError) as caught:
            run("", {"x": x, "i": i, "y": y, "j": j, "z": z}, ir=ir)
        self.assertEqual(caught.exception.line, 11)
        self.assertIn("outside [0, 5)", str(caught.exception))


class MovementTest(unittest.TestCase):
    def test_ragged_blocks_other_and_masks(self) -> None:
        text = """sketch m {
  symbols: N;
  tensors: x[N]: f32; y[N]: f32; z[16]: f32;
  constexpr: BLOCK = 8;

  for i in range(0, N, BLOCK):
    offs = arange(0, BLOCK) + i
    mask = offs % 2 == 0
    t = alloc([BLOCK])
    load(x[i:i+BLOCK] -> t, other=-5.0)
    store(t -> z[i:i+BLOCK])
    u = alloc([BLOCK])
    load(x[i:i+BLOCK] -> u, mask=mask, other=7)
    store(u * 2.0 -> y[i:i+BLOCK], mask=offs < N - 1)
}
"""
        x = np.arange(1, 12, dtype=F32)
        y, z = np.full(11, -1, F32), np.full(16, -1, F32)
        run(text, {"x": x, "y": y, "z": z}, {"N": 11})
        np.testing.assert_array_equal(z, np.concatenate([x, [-5.0] * 5]))
        even = np.arange(11) % 2 == 0
        expect = np.where(even, x * 2, 14.0)
        expect[10] = -1  # masked off by offs < N - 1
        np.testing.assert_array_equal(y, expect)

    def test_regions_strides_new_axes_and_indices(self) -> None:
        text = """sketch r {
  symbols: S;
  tensors: x[4, 7]: f32; e[4, 4]: f32; o[4, 2]: f32; c[7]: f32; n[4, 7]: f32; w[6]: f32;

  for r in range(4):
    a = alloc([4])
    load(x[r, ::2] -> a)
    store(a -> e[r, :])
    b = alloc([1, 2])
    load(x[r:r + 1, 1::3] -> b)
    store(b -> o[r, :])
  col = alloc([7])
  load(x[3] -> col)
  store(col -> c)
  t3 = alloc([4, 1, 7])
  load(x[:, None, :] -> t3)
  store(neg(t3) -> n)
  p = alloc([6])
  load(x[0, S - 2:S + 4] -> p, other=9.0)
  store(p -> w)
}
"""
        x = np.arange(28, dtype=F32).reshape(4, 7)
        out = {"e": np.zeros((4, 4), F32), "o": np.zeros((4, 2), F32), "c": np.zeros(7, F32),
               "n": np.zeros((4, 7), F32), "w": np.zeros(6, F32)}
        run(text, {"x": x, **out}, {"S": 0})
        np.testing.assert_array_equal(out["e"], x[:, ::2])
        np.testing.assert_array_equal(out["o"], x[:, 1::3])
        np.testing.assert_array_equal(out["c"], x[3])
        np.testing.assert_array_equal(out["n"], -x)
        np.testing.assert_array_equal(out["w"], [9, 9, 0, 1, 2, 3])  # -2 and -1 lie outside: not wrapped

    def test_loads_into_tile_regions_and_sub_tile_stores(self) -> None:
        text = """sketch p {
  symbols: K;
  tensors: x[5]: f32; z[3]: f32; y[8]: f32; s[2]: f32;

  t = alloc([8], llm_hint=["init_zero"])
  load(x -> t[0:5])
  load(z -> t[5:8])
  store(t -> y)
  store(t[3:5] -> s)
  u = alloc([4], dtype=f32)
  load(z -> u[K:K + 3])
  store(u[2:4] -> s)
}
"""
        x, z = np.arange(1, 6, dtype=F32), np.array([10, 20, 30], F32)
        y, s = np.zeros(8, F32), np.zeros(2, F32)
        run(text, {"x": x, "z": z, "y": y, "s": s}, {"K": 2})
        np.testing.assert_array_equal(y, [1, 2, 3, 4, 5, 10, 20, 30])
        np.testing.assert_array_equal(s, [10, 20])  # the second store, from the part of u that z filled

    def test_index_tile_loads(self) -> None:
        text = """sketch i {
  tensors: x[5]: f32; idx[4]: i32; y[4]: f32;

  k = alloc([4])
  load(idx -> k)
  g = alloc([4])
  load(x[k] -> g, other=-1.0)
  store(g -> y)
}
"""
        x = np.array([10, 11, 12, 13, 14], F32)
        y = np.zeros(4, F32)
        run(text, {"x": x, "idx": np.array([4, -1, 0, 5], np.int32), "y": y})
        np.testing.assert_array_equal(y, [14, -1, 10, -1])

    def test_out_of_bounds_stores_write_nothing(self) -> None:
        text = """sketch o {
  symbols: N;
  tensors: y[N, 3]: f32;

  t = fill([4, 4], 2.0)
  store(t -> y[N - 2:N + 2, N - 4:N])
  store(t[0, :] -> y[N + 3, N - 5:N - 1])
}
"""
        y = np.zeros((5, 3), F32)
        run(text, {"y": y}, {"N": 5})
        expect = np.zeros((5, 3), F32)
        expect[3:, 1:] = 2.0
        np.testing.assert_array_equal(y, expect)


class ControlTest(unittest.TestCase):
    def test_loops_scoping_if_and_index_arithmetic(self) -> None:
        text = """sketch c {
  symbols: N;
  tensors: y[8]: i64;

  acc = zeros([1], dtype=i64)
  cnt = 0
  for i in range(2, N, 3):
    last = i * 10
    cnt += 1
  for k in range(N):
    if k % 2 == 0:
      acc += 1
    elif k == 3:
      acc = acc + 100
    else:
      pass
  store(fill([1], cnt, dtype=i64) -> y[0:1])
  store(fill([1], last, dtype=i64) -> y[1:2])
  store(fill([1], i, dtype=i64) -> y[2:3])
  store(acc -> y[3:4])
  store(fill([1], ceil(N, 4), dtype=i64) -> y[4:5])
  store(fill([1], (0 - N) // 4, dtype=i64) -> y[5:6])
  store(fill([1], (0 - N) % 4, dtype=i64) -> y[6:7])
  store(fill([1], max(min(N, 3), 1), dtype=i64) -> y[7:8])
}
"""
        y = np.zeros(8, np.int64)
        run(text, {"y": y}, {"N": 9})
        self.assertEqual(y.tolist(), [3, 80, 8, 105, 3, -3, 3, 3])

    def test_destination_forms_and_augmented_assignment(self) -> None:
        text = """sketch d {
  tensors: x[4]: f32; y[4]: f32; z[4]: f32;

  t = alloc([4])
  load(x -> t)
  r = alloc([4])
  relu(t, r)
  s = alloc([4])
  exp(t, dst=s)
  s *= 2.0
  s -= r
  t2 = t
  t2 += 1.0
  store(s -> y)
  store(t -> z)
}
"""
        x = np.array([-1, 0, 1, 2], F32)
        y, z = np.zeros(4, F32), np.zeros(4, F32)
        run(text, {"x": x, "y": y, "z": z})
        np.testing.assert_allclose(y, 2 * np.exp(x.astype(np.float64)) - np.maximum(x, 0), rtol=1e-6)
        np.testing.assert_array_equal(z, x)  # t2 = t copies: t is unchanged

    def test_dtype_less_alloc_takes_the_first_loaded_dtype(self) -> None:
        text = """sketch a {
  tensors: x[3]: i32; y[3]: i32;

  t = alloc([3])
  load(x -> t)
  store(t // 2 -> y)
}
"""
        y = np.zeros(3, np.int32)
        run(text, {"x": np.array([-3, 4, 5], np.int32), "y": y})
        self.assertEqual(y.tolist(), [-2, 2, 2])

    def test_hints_never_change_results(self) -> None:
        plain = unary_sketch("gelu(t)")
        hinted = plain.replace("  t = alloc([N])", '  @llm_hint("vectorize", "simd", 8)\n  @llm_hint("math", "fast")\n'
                                                   '  t = alloc([N], llm_hint=["fastest", "reuse"])')
        x = np.linspace(-3, 3, 50).astype(F32)
        a, b = np.zeros(50, F32), np.zeros(50, F32)
        run(plain, {"x": x.copy(), "y": a}, {"N": 50})
        run(hinted, {"x": x.copy(), "y": b}, {"N": 50})
        np.testing.assert_array_equal(a, b)


class ErrorTest(unittest.TestCase):
    def test_reading_an_unwritten_tile_names_its_line(self) -> None:
        text = """sketch e {
  tensors: x[4]: f32; y[4]: f32;

  t = alloc([4])
  u = alloc([4])
  load(x -> u)
  store(exp(t) + u -> y)
}
"""
        with self.assertRaises(si.SketchError) as caught:
            run(text, {"x": np.zeros(4, F32), "y": np.zeros(4, F32)})
        self.assertEqual(caught.exception.line, 7)
        self.assertIn("allocated at line 4", caught.exception.message)

    def test_partially_written_tiles_read_nan(self) -> None:
        text = """sketch p {
  tensors: x[2]: f32; y[4]: f32;

  t = alloc([4], dtype=f32)
  load(x -> t[0:2])
  store(t -> y)
}
"""
        y = np.zeros(4, F32)
        run(text, {"x": np.ones(2, F32), "y": y})
        self.assertEqual(y[:2].tolist(), [1, 1])
        self.assertTrue(np.isnan(y[2:]).all())

    def test_a_shape_the_checker_could_not_see(self) -> None:
        text = """sketch s {
  symbols: N, M;
  tensors: x[N]: f32; y[N]: f32;

  t = alloc([M])
  load(x -> t)
  store(t -> y)
}
"""
        with self.assertRaises(si.SketchError) as caught:
            run(text, {"x": np.zeros(4, F32), "y": np.zeros(4, F32)}, {"N": 4, "M": 3})
        self.assertEqual(caught.exception.line, 6)
        self.assertIn("shape mismatch", caught.exception.message)

    def test_budget(self) -> None:
        text = unary_sketch("relu(t)").replace("  t = alloc", "  for k in range(1000):\n    pass\n  t = alloc")
        with self.assertRaises(si.SketchBudgetExceeded):
            run(text, {"x": np.zeros(4, F32), "y": np.zeros(4, F32)}, {"N": 4}, limits=si.Limits(max_statements=500))

    def test_arrays_that_do_not_fit(self) -> None:
        with self.assertRaises(ValueError):
            run(unary_sketch("relu(t)"), {"x": np.zeros(4, np.float64), "y": np.zeros(4, F32)}, {"N": 4})
        with self.assertRaises(ValueError):
            run(unary_sketch("relu(t)"), {"x": np.zeros(5, F32), "y": np.zeros(4, F32)}, {"N": 4})


class HeaderTest(unittest.TestCase):
    def test_params_constexprs_and_overrides(self) -> None:
        text = """sketch h {
  symbols: N;
  tensors: x[N]: f32; y[N]: f64;
  constexpr: B = tune(2, 4), S = 0.5;
  params: eps: f32 = 0.1, k: i32 = 3, free = 2.0;

  for i in range(0, N, B):
    t = alloc([B], dtype=f64)
    load(x[i:i+B] -> t)
    store(t * S + eps + k * free -> y[i:i+B])
}
"""
        ir = sketch_ir(text)
        x = np.arange(6, dtype=F32)
        y = np.zeros(6, np.float64)
        run("", {"x": x, "y": y}, {"N": 6}, ir=ir)
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(y, x64 * 0.5 + float(np.float32(0.1)) + 6.0, rtol=1e-15)
        run("", {"x": x, "y": y}, {"N": 6}, {"k": 2.6, "free": 1.0}, ir=ir, constexprs={"B": 4})
        np.testing.assert_allclose(y, x64 * 0.5 + float(np.float32(0.1)) + 3.0, rtol=1e-15)  # k: 2.6 -> 3

    def test_operation_table_matches_the_engine(self) -> None:
        with open(os.path.join(REPO, "engine", "sketch", "sketch_ops.c"), encoding="utf-8") as f:
            source = f.read()
        engine: Dict[str, tuple] = {}
        for m in re.finditer(r'UN\("(\w+)", (\d+),', source):
            engine[m.group(1)] = (1, int(m.group(2)))
        for m in re.finditer(r'(?:BIN|CMP)\("(\w+)",', source):
            engine[m.group(1)] = (2, 2)
        for m in re.finditer(r'RED\("(\w+)"\)', source):
            engine[m.group(1)] = (1, 2)
        for m in re.finditer(r'\{"(\w+)", OP_\w+, (\d+), (\d+),', source):
            engine[m.group(1)] = (int(m.group(2)), int(m.group(3)))
        for name in ("alloc", "range", "tune"):
            engine.pop(name, None)
        ours = {n: (i.min_args, i.max_args) for n, i in sketch_ops.OPS.items()}
        self.assertEqual(ours, engine)


if __name__ == "__main__":
    unittest.main()
