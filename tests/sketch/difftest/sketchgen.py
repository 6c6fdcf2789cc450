"""Random, checked Unified Sketches at small sizes, for the differential test.

``generate(seed, index)`` returns one sketch (its text and a metadata comment on the first line)
and is deterministic in (seed, index). Sketch i comes from family ``FAMILIES[i % len(FAMILIES)]``,
so any run of len(FAMILIES) consecutive sketches covers every family:

  elementwise chains over every unary and binary operation, with broadcasting, scalars and params;
  reductions over one or several axes, keepdim or not; argmax/argmin; scans with every flag;
  gemm with trans flags and accumulators (and dot); gather and loads through index tiles;
  where / masks / comparisons / other=; casts between f32, f64, i32, i64 and bool (saturation
  included); control flow (if on symbols and loop variables, nested loops, accumulators and
  counters carried across iterations, loop variables used after their loop); loads into tile
  regions, strided and None-axis regions, stores of sub-tiles; softmax, transpose, constructors;
  several inputs and outputs with dims that are expressions of symbols; NaN propagation.

Loops are decorated at random with parallel / vectorize / unroll / pipeline / math hints and tiles
with memory hints. Values are kept where every implementation agrees up to rounding: arguments of
log, sqrt, rsqrt, recip and divisors are at least 0.5, exp's arguments at most 8, magnitudes are
tamed with tanh past 20, and the discontinuous operations (floor, round, sign, comparisons, casts to
integers, argmax/argmin) only see exact values (loaded inputs, integers), never rounded results.

The metadata line ``# difftest: {...}`` gives the symbol values, param values and how to draw each
input tensor (README.md of this folder).
"""

from __future__ import annotations

import json
import random
from typing import Callable, Dict, List, Optional, Sequence, Tuple

from gen_core import BINARY_OPS, CMP_OPS, DISCONTINUOUS, UNARY_OPS, Builder, Exprs, Shape, Sketch, Val, num, uniform

__all__ = ["BINARY_OPS", "CMP_OPS", "FAMILIES", "REDUCE_OPS", "UNARY_OPS", "Sketch", "generate", "read_meta"]


# ---- families ---------------------------------------------------------------------------------------
#
# Each family writes one sketch into a Builder; ``k`` counts the sketches of the family so far and
# walks through the operations a family must cover (every unary op, every reduction, ...).

HALF_TYPES = ("f16", "bf16")


def _loaded(b: Builder, tensor: str, region: str, dims: Sequence[str], shape: Shape, lo: float, hi: float,
            dtype: Optional[str] = None) -> Val:
    t = b.alloc(dims, dtype=dtype)
    b.line(f"load({tensor}[{region}] -> {t})")
    return Val(t, shape, lo, hi, True)


def _assign(b: Builder, v: Val) -> Val:
    name = b.fresh()
    r = b.rng.random()
    if r < 0.08:
        b.line('@llm_hint("vectorize", "simd")')
    elif r < 0.16:
        b.line(f'@llm_hint("math", "{b.rng.choice(["fast", "precise"])}")')
    b.line(f"{name} = {v.text}")
    return Val(name, v.shape, v.lo, v.hi, v.exact)


def fam_elementwise_1d(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 150))
    dtype = rng.choice(["f32"] * 6 + ["f64", "f16", "bf16"])
    ins = [b.tensor(f"x{i}", ["N"], dtype, uniform(-2.0, 2.0)) for i in range(rng.randint(1, 3))]
    outs = [b.tensor(f"y{i}", ["N"], dtype) for i in range(rng.randint(1, 2))]
    b.const("BLOCK", rng.choice([8, 16, 32]), tunable=[64] if rng.random() < 0.3 else ())
    scalars = []
    if rng.random() < 0.5:
        scalars.append((b.param("alpha", 0.5, rng.choice(["f32", None]), value=round(rng.uniform(0.1, 1.5), 3)), 1.0))
    tile_dtype = "f32" if dtype in HALF_TYPES and rng.random() < 0.7 else (dtype if rng.random() < 0.5 else None)
    ex = Exprs(rng, scalars)
    with b.loop("i", "0, N, BLOCK"):
        tiles = [_loaded(b, x, "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -2.0, 2.0, tile_dtype) for x in ins]
        forced = UNARY_OPS[k % len(UNARY_OPS)]
        first = tiles[0]
        if forced in DISCONTINUOUS or rng.random() < 0.5:
            tiles.append(_assign(b, ex.unary(forced, first)))
        else:
            tiles.append(_assign(b, ex.unary(forced, ex.expr(tiles, 2))))
        for y in outs:
            v = ex.full(ex.expr(tiles, rng.randint(1, 4)), first)
            if rng.random() < 0.5:
                v = _assign(b, v)
            b.line(f"store({v.text} -> {y}[i:i+BLOCK])")


def fam_broadcast_2d(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("M", rng.randint(1, 20))
    b.symbol("N", rng.randint(1, 40))
    dtype = rng.choice(["f32", "f32", "f32", "f64"])
    b.tensor("x", ["M", "N"], dtype, uniform(-2.0, 2.0))
    b.tensor("r", ["N"], dtype, uniform(-1.0, 1.0))
    b.tensor("c", ["M"], dtype, uniform(0.5, 2.0))
    b.tensor("y", ["M", "N"], dtype)
    b.const("BM", rng.choice([2, 4, 8]))
    b.const("BN", rng.choice([8, 16]))
    ex = Exprs(rng)
    forced = BINARY_OPS[k % len(BINARY_OPS)]
    with b.loop("i", "0, M, BM"):
        with b.loop("j", "0, N, BN"):
            a = _loaded(b, "x", "i:i+BM, j:j+BN", ["BM", "BN"], ("BM", "BN"), -2.0, 2.0)
            row_dims = ["BN"] if rng.random() < 0.5 else ["1", "BN"]
            rv = _loaded(b, "r", "j:j+BN", row_dims, tuple(row_dims), -1.0, 1.0)
            cv = _loaded(b, "c", "i:i+BM", ["BM", "1"], ("BM", "1"), 0.5, 2.0)
            ops = [a, rv, cv]
            v = ex.binary(forced, rng.choice(ops), rng.choice(ops))
            v = ex.binary(rng.choice(BINARY_OPS), v, ex.expr(ops, 2))
            v = _assign(b, ex.full(v, a))
            if rng.random() < 0.3:
                b.line(f"{v.text} *= 0.5")
            b.line(f"store({v.text} -> y[i:i+BM, j:j+BN])")


REDUCE_OPS = ["reduce_sum", "reduce_max", "reduce_min", "reduce_mean", "reduce_prod"]


def fam_reduce(b: Builder, k: int) -> None:
    rng = b.rng
    op = REDUCE_OPS[k % len(REDUCE_OPS)]
    variant = (k // len(REDUCE_OPS)) % 6
    lo, hi = (0.7, 1.3) if op == "reduce_prod" else (-2.0, 2.0)
    b.symbol("M", rng.randint(1, 20))
    b.symbol("N", rng.randint(1, 24))
    dtype = rng.choice(["f32", "f32", "f64"])
    pre = (lambda t: f"exp({t})") if rng.random() < 0.3 and op != "reduce_prod" else (lambda t: t)
    if variant == 5:
        b.symbol("B", rng.randint(1, 4))
        b.tensor("x", ["B", "M", "N"], dtype, uniform(lo, hi))
        axes = rng.choice(["[1, 2]", "[0, 2]", "[2, 1]", "[1]"])
        keep = rng.random() < 0.5
        if keep:
            b.tensor("y", ["B", "M" if "1" not in axes else "1", "N" if "2" not in axes else "1"], dtype)
        else:
            b.tensor("y", ["B"] + (["M"] if "1" not in axes else []) + (["N"] if "2" not in axes else []), dtype)
        with b.loop("bi", "B"):
            t = _loaded(b, "x", "bi:bi+1, :, :", ["1", "M", "N"], ("1", "M", "N"), lo, hi)
            kd = "" if keep and rng.random() < 0.5 else f", keepdim={keep}"
            r = b.fresh("r")
            b.line(f"{r} = {op}({pre(t.text)}, axis={axes}{kd})")
            b.line(f"store({r} -> y[bi:bi+1])")
        return
    b.tensor("x", ["M", "N"], dtype, uniform(lo, hi))
    b.const("ROWS", rng.choice([1, 2, 4, 8]))
    if variant == 4:  # over the rows of whole columns: tiles of a symbolic extent
        b.tensor("y", ["N"], dtype)
        b.const("BN", rng.choice([4, 8]))
        with b.loop("j", "0, N, BN"):
            t = _loaded(b, "x", ":, j:j+BN", ["M", "BN"], ("M", "BN"), lo, hi)
            r = b.fresh("r")
            b.line(f"{r} = {op}({pre(t.text)}, axis=0)")
            b.line(f"store({r} -> y[j:j+BN])")
        return
    if variant in (2, 3):  # all axes of a block: one value per block
        b.tensor("y", ["(M + ROWS - 1) // ROWS"], dtype)
    else:
        b.tensor("y", ["M"] if rng.random() < 0.5 else ["M", "1"], dtype)
    with b.loop("r0", "0, M, ROWS"):
        t = _loaded(b, "x", "r0:r0+ROWS, :", ["ROWS", "N"], ("ROWS", "N"), lo, hi)
        r = b.fresh("r")
        if variant == 0:
            b.line(f"{r} = {op}({pre(t.text)}, axis={rng.choice(['1', '-1'])})")
            b.line(f"store({r} -> y[r0:r0+ROWS])")
        elif variant == 1:
            b.line(f"{r} = {op}({pre(t.text)}, {rng.choice(['1', 'axis=1'])}, keepdim=False)")
            b.line(f"store({r} -> y[r0:r0+ROWS])")
        elif variant == 2:
            b.line(f"{r} = {op}({pre(t.text)}, axis=[0, 1], keepdim=False)")
            b.line(f"store({r} -> y[r0 // ROWS:r0 // ROWS + 1])")
        else:
            b.line(f"{r} = {op}({pre(t.text)})")
            b.line(f"store({r} -> y[r0 // ROWS])")


def fam_argreduce(b: Builder, k: int) -> None:
    rng = b.rng
    op = ["argmax", "argmin", "reduce_argmax"][k % 3]
    variant = (k // 3) % 4
    b.symbol("M", rng.randint(1, 16))
    b.symbol("N", rng.randint(1, 24))
    b.tensor("x", ["M", "N"], rng.choice(["f32", "f32", "f64", "i32"]), uniform(-3.0, 3.0))
    odt = rng.choice(["i32", "i64"])
    b.const("ROWS", rng.choice([1, 2, 4]))
    src = rng.choice(["{t}", "abs({t})", "neg({t})"])
    if variant == 3:
        b.tensor("y", ["N"], odt)
        with b.loop("j", "0, N, 4"):
            t = _loaded(b, "x", ":, j:j+4", ["M", "4"], ("M", "4"), -3, 3)
            b.line(f"store({op}({src.format(t=t.text)}, axis=0) -> y[j:j+4])")
        return
    if variant == 2:
        b.tensor("y", ["(M + ROWS - 1) // ROWS"], odt)
    else:
        b.tensor("y", ["M"], odt)
    with b.loop("r0", "0, M, ROWS"):
        t = _loaded(b, "x", "r0:r0+ROWS, :", ["ROWS", "N"], ("ROWS", "N"), -3, 3)
        expr = src.format(t=t.text)
        if variant == 0:
            b.line(f"store({op}({expr}, axis=1) -> y[r0:r0+ROWS])")
        elif variant == 1:
            b.line(f"store({op}({expr}, axis=-1, keepdim=False) -> y[r0:r0+ROWS])")
        else:
            axis = rng.choice(["", ", axis=[0, 1]", ", axis=[1, 0]"])
            b.line(f"store({op}({expr}{axis}) -> y[r0 // ROWS:r0 // ROWS + 1])")


def fam_scan(b: Builder, k: int) -> None:
    rng = b.rng
    op = ["cumsum", "cumprod", "local_cumsum", "local_cumprod"][k % 4] if rng.random() < 0.3 else \
        ["cumsum", "cumprod"][k % 2]
    flags = (k // 2) % 4
    reverse, exclusive = bool(flags & 1), bool(flags & 2)
    lo, hi = (0.7, 1.3) if "prod" in op else (-2.0, 2.0)
    b.symbol("M", rng.randint(1, 12))
    b.symbol("N", rng.randint(1, 24))
    dtype = rng.choice(["f32", "f32", "f64", "i32"]) if "prod" not in op else rng.choice(["f32", "f64"])
    b.tensor("x", ["M", "N"], dtype, uniform(lo, hi) if dtype != "i32" else {"kind": "int", "lo": -50, "hi": 50})
    b.tensor("y", ["M", "N"], dtype)
    opts = ""
    if reverse or rng.random() < 0.3:
        opts += f", reverse={reverse}"
    if exclusive or rng.random() < 0.3:
        opts += f", exclusive={exclusive}"
    if rng.random() < 0.5:
        b.const("ROWS", rng.choice([1, 2, 4]))
        with b.loop("r0", "0, M, ROWS"):
            t = _loaded(b, "x", "r0:r0+ROWS, :", ["ROWS", "N"], ("ROWS", "N"), lo, hi)
            axis = rng.choice(["", ", axis=1", ", axis=-1", ", 1"])
            b.line(f"store({op}({t.text}{axis}{opts}) -> y[r0:r0+ROWS, :])")
    else:
        b.const("BC", rng.choice([2, 4, 8]))
        with b.loop("c0", "0, N, BC"):
            t = _loaded(b, "x", ":, c0:c0+BC", ["M", "BC"], ("M", "BC"), lo, hi)
            s = b.fresh("s")
            b.line(f"{s} = {op}({t.text}, axis=0{opts})")
            b.line(f"store({s} -> y[:, c0:c0+BC])")


def fam_gemm(b: Builder, k: int) -> None:
    rng = b.rng
    ta, tb = bool(k & 1), bool(k & 2)
    form = (k // 4) % 5
    dtype = "f64" if rng.random() < 0.2 else rng.choice(["f32", "f32", "f16"])
    acc_dtype = "f64" if dtype == "f64" else "f32"
    if dtype == "f64" and form in (3, 4):
        form = 0
    b.symbol("M", rng.randint(1, 24))
    b.symbol("N", rng.randint(1, 24))
    b.symbol("K", rng.randint(1, 40))
    b.tensor("A", ["K", "M"] if ta else ["M", "K"], dtype, uniform(-1.0, 1.0))
    b.tensor("B", ["N", "K"] if tb else ["K", "N"], dtype, uniform(-1.0, 1.0))
    bias = rng.random() < 0.3
    if bias:
        b.tensor("bias", ["N"], acc_dtype, uniform(-1.0, 1.0))
    b.tensor("C", ["M", "N"], acc_dtype)
    b.const("BM", rng.choice([4, 8, 16]))
    b.const("BN", rng.choice([4, 8, 16]))
    b.const("BK", rng.choice([4, 8, 16]))
    flags = (", trans_a=True" if ta else "") + (", trans_b=True" if tb else "")
    with b.loop("i", "0, M, BM"):
        with b.loop("j", "0, N, BN"):
            init = rng.random()
            if init < 0.5:
                acc = b.alloc(["BM", "BN"], dtype=acc_dtype, hints=["fastest", "accumulator", "init_zero"], name="acc")
            elif init < 0.75:
                acc = "acc"
                b.line(f"acc = zeros([BM, BN], dtype={acc_dtype})")
            else:
                acc = "acc"
                b.line(f"acc = fill([BM, BN], 0.0, dtype={acc_dtype})")
            with b.loop("kk", "0, K, BK", independent=False):  # carries acc
                a = b.alloc(["BK", "BM"] if ta else ["BM", "BK"], dtype=None if rng.random() < 0.5 else dtype)
                b.line(f"load(A[{'kk:kk+BK, i:i+BM' if ta else 'i:i+BM, kk:kk+BK'}] -> {a})")
                bt = b.alloc(["BN", "BK"] if tb else ["BK", "BN"])
                b.line(f"load(B[{'j:j+BN, kk:kk+BK' if tb else 'kk:kk+BK, j:j+BN'}] -> {bt})")
                if form == 0:
                    b.line(f"{acc} = gemm({a}, {bt}, {acc}{flags})")
                elif form == 1:
                    b.line(f"gemm({a}, {bt}, {acc}{flags})")
                elif form == 2:
                    b.line(f"gemm({a}, {bt}{flags}, dst={acc})")
                elif form == 3:
                    b.line(f"{acc} += gemm({a}, {bt}{flags})")
                else:
                    b.line(f"{acc} = {acc} + gemm({a}, {bt}{flags})")
            out = acc
            if bias:
                bv = _loaded(b, "bias", "j:j+BN", ["BN"], ("BN",), -1, 1)
                out = f"add({acc}, {bv.text})"
            b.line(f"store({out} -> C[i:i+BM, j:j+BN])")


def fam_dot(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("M", rng.randint(1, 12))
    b.symbol("K", rng.randint(1, 30))
    b.tensor("x", ["M", "K"], "f32", uniform(-1.0, 1.0))
    b.tensor("w", ["K"], "f32", uniform(-1.0, 1.0))
    if k % 2 == 0:
        b.tensor("y", ["M"], "f32")
        w = _loaded(b, "w", ":", ["K"], ("K",), -1, 1)
        with b.loop("r", "M"):
            xa = _loaded(b, "x", "r, :", ["K"], ("K",), -1, 1)
            b.line(f"store(dot({xa.text}, {w.text}) -> y[r:r+1])")
    else:
        b.symbol("N", rng.randint(1, 12))
        b.tensor("v", ["K", "N"], "f32", uniform(-1.0, 1.0))
        b.tensor("y", ["M", "N"], "f32")
        vt = _loaded(b, "v", ":, :", ["K", "N"], ("K", "N"), -1, 1)
        b.const("BM", rng.choice([2, 4]))
        with b.loop("i", "0, M, BM"):
            xa = _loaded(b, "x", "i:i+BM, :", ["BM", "K"], ("BM", "K"), -1, 1)
            b.line(f"store(dot({xa.text}, {vt.text}) -> y[i:i+BM, :])")


def fam_gather(b: Builder, k: int) -> None:
    rng = b.rng
    variant = k % 3
    b.symbol("R", rng.randint(1, 12))
    b.symbol("C", rng.randint(1, 16))
    b.tensor("x", ["R", "C"], rng.choice(["f32", "f64", "i32"]), uniform(-2.0, 2.0))
    idt = rng.choice(["i32", "i64"])
    if variant == 0:  # along axis 1, rows in blocks
        b.symbol("K", rng.randint(1, 8))
        b.tensor("idx", ["R", "K"], idt, {"kind": "index", "hi": "C"})
        b.tensor("y", ["R", "K"], "f32")
        b.const("ROWS", rng.choice([1, 2, 4]))
        with b.loop("r0", "0, R, ROWS"):
            xt = b.alloc(["ROWS", "C"])
            b.line(f"load(x[r0:r0+ROWS, :] -> {xt})")
            it = b.alloc(["ROWS", "K"])
            b.line(f"load(idx[r0:r0+ROWS, :] -> {it})")
            g = b.fresh("g")
            b.line(f"{g} = gather({xt}, {it}, {rng.choice(['1', 'axis=1', '-1'])})")
            b.line(f"store({g} -> y[r0:r0+ROWS, :])")
    elif variant == 1:  # along axis 0, whole columns of x
        b.symbol("K", rng.randint(1, 10))
        b.tensor("idx", ["K", "C"], idt, {"kind": "index", "hi": "R"})
        b.tensor("y", ["K", "C"], "f32")
        xt = b.alloc(["R", "C"])
        b.line(f"load(x -> {xt})")
        b.const("BK", rng.choice([2, 4]))
        with b.loop("k0", "0, K, BK"):
            it = b.alloc(["BK", "C"])
            b.line(f"load(idx[k0:k0+BK, :] -> {it})")
            b.line(f"store(gather({xt}, {it}, axis=0) -> y[k0:k0+BK, :])")
    else:  # a load through an index tile: positions outside read other=
        b.symbol("K", rng.randint(1, 12))
        b.tensor("idx", ["K"], "i32", {"kind": "int", "lo": -2, "hi": "C+2"})
        b.tensor("y", ["R", "K"], "f32")
        it = b.alloc(["K"], dtype="i32")
        b.line(f"load(idx -> {it})")
        with b.loop("r", "R"):
            g = b.alloc(["K"], dtype="f32")
            other = rng.choice(["", ", other=-1.0", ", other=7"])
            b.line(f"load(x[r, {it}] -> {g}{other})")
            b.line(f"store({g} -> y[r, :])")


def fam_masks(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 100))
    dtype = rng.choice(["f32", "f32", "f64"])
    b.tensor("x", ["N"], dtype, uniform(-2.0, 2.0))
    b.tensor("z", ["N"], dtype, uniform(-2.0, 2.0))
    b.tensor("y", ["N"], dtype)
    b.tensor("m", ["N"], "bool")
    b.const("BLOCK", rng.choice([8, 16, 32]))
    ex = Exprs(rng)
    with b.loop("i", "0, N, BLOCK"):
        offs = b.fresh("offs")
        b.line(f"{offs} = " + rng.choice([f"arange(0, BLOCK) + i", f"i + arange(0, BLOCK)", f"arange(BLOCK) + i"]))
        mask = b.fresh("mask")
        b.line(f"{mask} = {rng.choice([f'{offs} < N', f'lt({offs}, N)', f'N > {offs}'])}")
        x = b.alloc(["BLOCK"], dtype=dtype if rng.random() < 0.5 else None)
        other = rng.choice(["", ", other=0.5", ", other=-2.0", ", other=0"])
        b.line(f"load(x[i:i+BLOCK] -> {x}, mask={mask}{other})")
        z = b.alloc(["BLOCK"])
        b.line(f"load(z[i:i+BLOCK] -> {z})")
        xv, zv = Val(x, ("BLOCK",), -2.0, 2.0, True), Val(z, ("BLOCK",), -2.0, 2.0, True)
        cond = ex.mask([xv, zv])
        c = b.fresh("c")
        b.line(f"{c} = {cond.text}")
        choice = rng.random()
        if choice < 0.4:
            v = ex.expr([xv, zv], 2)
            val = f"where({c}, {v.text}, {zv.text})"
        elif choice < 0.7:
            val = f"where({c}, {xv.text}, {num(rng.choice([0.0, 1.5, -0.25]))})"
        else:
            val = f"where({c}, {num(rng.choice([1.0, -3.0]))}, {zv.text})"
        store_mask = rng.choice([mask, f"logical_and({mask}, {c})", f"logical_or({c}, {c})"])
        b.line(f"store({val} -> y[i:i+BLOCK], mask={store_mask})")
        b.line(f"store({c} -> m[i:i+BLOCK])")


def fam_cast(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 60))
    b.tensor("xf", ["N"], "f32", {"kind": "frac", "lo": -40, "hi": 40, "big": 0.1})
    b.tensor("xd", ["N"], "f64", {"kind": "frac", "lo": -40, "hi": 40})
    b.tensor("xi", ["N"], "i32", {"kind": "int", "lo": -1000, "hi": 1000})
    b.tensor("xl", ["N"], "i64", {"kind": "int64_big"})
    b.tensor("xb", ["N"], "bool", {"kind": "bool"})
    outs = {d: b.tensor(f"y_{d}", ["N"], d) for d in ("i32", "i64", "f32", "f64", "bool")}
    b.const("BLOCK", rng.choice([8, 16]))
    srcs = {"f32": "xf", "f64": "xd", "i32": "xi", "i64": "xl", "bool": "xb"}
    pairs = [(s, d) for s in srcs for d in outs if s != d]
    rng.shuffle(pairs)
    chosen = pairs[:rng.randint(2, 5)]
    with b.loop("i", "0, N, BLOCK"):
        tiles: Dict[str, str] = {}
        for s, _ in chosen:
            if s not in tiles:
                tiles[s] = b.alloc(["BLOCK"], dtype=s if rng.random() < 0.5 else None)
                b.line(f"load({srcs[s]}[i:i+BLOCK] -> {tiles[s]})")
        for s, d in chosen:
            t = tiles[s]
            if s in ("i32", "i64") and rng.random() < 0.4:
                t = rng.choice([f"{t} + 3", f"{t} * 2", f"{t} // 7", f"{t} % 5", f"abs({t})", f"neg({t})",
                                f"maximum({t}, {t} // 2)"])
            form = rng.random()
            if form < 0.6:
                b.line(f"store(cast({t}, {d}) -> {outs[d]}[i:i+BLOCK])")
            elif form < 0.8:  # conversion by the store itself
                b.line(f"store({t} -> {outs[d]}[i:i+BLOCK])")
            else:  # conversion by a load into a tile of the target dtype
                u = b.alloc(["BLOCK"], dtype=d)
                b.line(f"load({srcs[s]}[i:i+BLOCK] -> {u})")
                b.line(f"store({u} -> {outs[d]}[i:i+BLOCK])")
        for d, y in outs.items():
            if all(dd != d for _, dd in chosen):
                b.line(f"store(cast({tiles[chosen[0][0]]}, {d}) -> {y}[i:i+BLOCK])")


def fam_control(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 20))
    b.symbol("M", rng.randint(1, 24))
    b.tensor("x", ["N", "M"], "f32", uniform(-2.0, 2.0))
    b.tensor("y", ["N", "M"], "f32")
    b.tensor("s", ["N"], "f32")
    br, bc = rng.choice([1, 2, 4]), rng.choice([4, 8])
    b.const("BR", br)
    b.const("BC", bc)
    ceil_form = rng.random() < 0.4
    header = ("bi", "ceil(N, BR)") if ceil_form else ("i", "0, N, BR")
    with b.loop(*header):
        if ceil_form:
            b.line("i = bi * BR")
            b.line("rem = min(BR, N - i)")
        if rng.random() < 0.5:
            acc = b.alloc(["BR"], dtype="f32", hints=["fastest", "accumulator", "init_zero"], name="acc")
        else:
            b.line("acc = zeros([BR])")
        b.line("cnt = 0")
        with b.loop("j", "0, M, BC", independent=False):  # carries acc and cnt
            u = _loaded(b, "x", "i:i+BR, j:j+BC", ["BR", "BC"], ("BR", "BC"), -2, 2)
            part = f"reduce_sum({u.text}, axis=1, keepdim=False)"
            b.line(rng.choice([f"acc = acc + {part}", f"acc += {part}", f"acc = add(acc, {part})"]))
            b.line(rng.choice(["cnt += 1", "cnt = cnt + 1"]))
            with b.block(f"if {rng.choice(['j % (2 * BC) == 0', 'j == 0', 'j + BC >= M', 'i + j < M'])}:"):
                b.line(f"store(relu({u.text}) -> y[i:i+BR, j:j+BC])")
            with b.block("else:"):
                b.line(f"store({u.text} * 2.0 -> y[i:i+BR, j:j+BC])")
        cond = rng.choice(["M > 8", "N % 2 == 0", "i + BR <= N" if not ceil_form else "rem == BR", "cnt > 1"])
        with b.block(f"if {cond}:"):
            b.line("store(acc -> s[i:i+BR])")
        with b.block(f"elif {rng.choice(['M == 3', 'N < 3', 'cnt == 1'])}:"):
            b.line("store(acc * cnt -> s[i:i+BR])")
        with b.block("else:"):
            b.line("store(neg(acc) -> s[i:i+BR])")
    if rng.random() < 0.5:  # the loop variable is still bound after its loop
        with b.block("if N > 0:"):
            last = _loaded(b, "x", "0, j:j+BC", ["BC"], ("BC",), -2, 2)
            b.line(f"store({last.text} + 1.0 -> y[0, j:j+BC])")


def fam_regions(b: Builder, k: int) -> None:
    rng = b.rng
    variant = k % 4
    b.symbol("N", rng.randint(1, 10))
    b.symbol("M", rng.randint(2, 24))
    b.tensor("x", ["N", "M"], "f32", uniform(-2.0, 2.0))
    b.tensor("z", ["N", "M"], "f32", uniform(-2.0, 2.0))
    if variant == 0:  # pieces loaded into regions of one tile, reduced across them
        b.tensor("y", ["N", "M"], "f32")
        b.const("BC", rng.choice([4, 8]))
        with b.loop("r", "N"):
            with b.loop("j", "0, M, BC"):
                t = b.alloc(["2", "BC"], dtype="f32")
                b.line(f"load(x[r, j:j+BC] -> {t}[0, :])")
                b.line(f"load(z[r, j:j+BC] -> {t}[1:2, :])")
                op = rng.choice(["reduce_max", "reduce_sum", "reduce_min"])
                b.line(f"store({op}({t}, axis=0) -> y[r, j:j+BC])")
    elif variant == 1:  # a packed buffer and stores of its sub-tiles
        b.tensor("y", ["N", "M"], "f32")
        b.tensor("w", ["N", "4"], "f32")
        with b.loop("r", "N"):
            t = b.alloc(["M + 4"], dtype="f32", hints=["init_zero"] if rng.random() < 0.5 else ["fast"])
            b.line(f"load(x[r, :] -> {t}[0:M])")
            b.line(f"load(z[r, 0:4] -> {t}[M:M + 4])")
            b.line(f"store(exp({t}[2:M + 2]) -> y[r, :])" if rng.random() < 0.5 else f"store({t}[2:M + 2] -> y[r, :])")
            b.line(f"store({t}[M:M + 4] -> w[r, :])")
    elif variant == 2:  # strided regions, with dims that are expressions of symbols
        b.tensor("h", ["N", "(M + 1) // 2"], "f32")
        b.tensor("g", ["N", "(M + 1) // 3"], "f32")
        with b.loop("r", "N"):
            e = b.alloc(["(M + 1) // 2"])
            b.line(f"load(x[r, ::2] -> {e})")
            b.line(f"store({e} -> h[r, :])")
            o = b.alloc(["1", "(M + 1) // 3"])
            b.line(f"load(z[r:r + 1, 1::3] -> {o})")
            b.line(f"store(sigmoid({o}) -> g[r, :])")
    else:  # a new axis, an integer index, a ragged column block
        b.tensor("y", ["N", "M"], "f32")
        b.tensor("c", ["M"], "f32")
        b.const("BR", rng.choice([2, 4]))
        b.const("BC", rng.choice([4, 8]))
        with b.loop("i", "0, N, BR"):
            with b.loop("j", "0, M, BC"):
                t3 = b.alloc(["BR", "1", "BC"])
                b.line(f"load(x[i:i+BR, None, j:j+BC] -> {t3})")
                b.line(f"store(tanh({t3}) -> y[i:i+BR, j:j+BC])")
        v = b.alloc(["1", "M"])
        b.line(f"load(z[N - 1, :] -> {v})")
        b.line(f"store({v} -> c)")


def fam_softmax(b: Builder, k: int) -> None:
    rng = b.rng
    variant = k % 4
    b.symbol("M", rng.randint(1, 12))
    b.symbol("N", rng.randint(1, 24))
    dtype = rng.choice(["f32", "f32", "f64"])
    b.tensor("x", ["M", "N"], dtype, uniform(-3.0, 3.0))
    op = rng.choice(["softmax", "log_softmax"])
    if variant == 0:
        b.tensor("y", ["M", "N"], dtype)
        b.const("ROWS", rng.choice([1, 2, 4]))
        with b.loop("r0", "0, M, ROWS"):
            t = _loaded(b, "x", "r0:r0+ROWS, :", ["ROWS", "N"], ("ROWS", "N"), -3, 3)
            b.line(f"store({op}({t.text}{rng.choice(['', ', axis=1', ', -1', ', axis=-1'])}) -> y[r0:r0+ROWS, :])")
    elif variant == 1:
        b.tensor("y", ["M", "N"], dtype)
        b.const("BC", rng.choice([2, 4]))
        with b.loop("c0", "0, N, BC"):
            t = _loaded(b, "x", ":, c0:c0+BC", ["M", "BC"], ("M", "BC"), -3, 3)
            b.line(f"store({op}({t.text}, axis=0) -> y[:, c0:c0+BC])")
    elif variant == 2:
        b.tensor("yt", ["N", "M"], dtype)
        b.const("BR", rng.choice([2, 4]))
        b.const("BC", rng.choice([4, 8]))
        with b.loop("i", "0, M, BR"):
            with b.loop("j", "0, N, BC"):
                t = _loaded(b, "x", "i:i+BR, j:j+BC", ["BR", "BC"], ("BR", "BC"), -3, 3)
                tr = rng.choice([f"transpose({t.text})", f"transpose({t.text}, [1, 0])"])
                b.line(f"store({tr} -> yt[j:j+BC, i:i+BR])")
    else:
        b.symbol("B", rng.randint(1, 3))
        b.tensor("x3", ["B", "M", "N"], dtype, uniform(-3.0, 3.0))
        b.tensor("y3", ["B", "N", "M"], dtype)
        b.tensor("y", ["M", "N"], dtype)
        with b.loop("bi", "B"):
            t = _loaded(b, "x3", "bi:bi+1, :, :", ["1", "M", "N"], ("1", "M", "N"), -3, 3)
            b.line(f"store(transpose({t.text}, [0, 2, 1]) -> y3[bi:bi+1, :, :])")
        xt = _loaded(b, "x", ":, :", ["M", "N"], ("M", "N"), -3, 3)
        b.line(f"store({op}({xt.text}, axis=1) -> y)")


def fam_constructors(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 40))
    b.tensor("x", ["N"], "f32", uniform(-2.0, 2.0))
    b.tensor("y", ["N"], "f32")
    b.tensor("yi", ["N"], "i32")
    b.tensor("yd", ["N"], "f64")
    b.const("BLOCK", rng.choice([4, 8, 16]))
    with b.loop("i", "0, N, BLOCK"):
        t = _loaded(b, "x", "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -2, 2)
        f = b.fresh("f")
        b.line(f"{f} = fill([BLOCK], {num(round(rng.uniform(-2, 2), 2))})")
        ar = b.fresh("ar")
        b.line(f"{ar} = {rng.choice(['arange(0, BLOCK)', 'arange(BLOCK)', 'arange(i, i + BLOCK)'])}")
        b.line(f"store(add(mul({t.text}, {f}), cast({ar}, f32) * 0.25) -> y[i:i+BLOCK])")
        b.line(f"store(add({ar}, fill([BLOCK], 3, dtype=i32)) -> yi[i:i+BLOCK])")
        z = b.fresh("z")
        b.line(f"{z} = zeros([BLOCK], dtype=f64)")
        b.line(f"store(add({z}, cast({t.text}, f64)) -> yd[i:i+BLOCK])")


def fam_multi_io(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 8))
    b.symbol("M", rng.randint(1, 12))
    b.tensor("x", ["N", "M"], "f32", uniform(-2.0, 2.0))
    b.tensor("v", ["M"], "f32", uniform(-1.0, 1.0))
    b.tensor("flat", ["N * M"], "f32")
    b.tensor("cols", ["M", "N"], "f32")
    b.tensor("half", ["N // 2 + 1", "M"], "f32")
    b.tensor("stats", ["2 * N"], "f32")
    vt = _loaded(b, "v", ":", ["M"], ("M",), -1, 1)
    with b.loop("r", "N"):
        t = _loaded(b, "x", "r, :", ["M"], ("M",), -2, 2)
        b.line(f"store(mul({t.text}, {vt.text}) -> flat[r * M:(r + 1) * M])")
        b.line(f"store({t.text} -> cols[:, r])")
        with b.block("if r % 2 == 0:"):
            b.line(f"store({t.text} - 1.0 -> half[r // 2, :])")
        p = b.alloc(["2"], dtype="f32")
        b.line(f"load(x[r, 0:1] -> {p}[0:1])")
        b.line(f"load(x[r, M - 1:M] -> {p}[1:2])")
        b.line(f"store({p} -> stats[2 * r:2 * r + 2])")
    if rng.random() < 0.5:
        with b.loop("e", "N * M", hints=False):
            u = _loaded(b, "x", "e // M, e % M", ["1"], ("1",), -2, 2)
            b.line(f"store({u.text} * 3.0 -> flat[e:e + 1])")


def fam_nan(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 64))
    b.tensor("x", ["N"], "f32", uniform(-2.0, 2.0, nan=0.2))
    b.tensor("z", ["N"], "f32", uniform(-2.0, 2.0, nan=0.2))
    b.tensor("c", ["N"], "f32", uniform(-1.0, 1.0))
    b.tensor("y", ["N"], "f32")
    b.const("BLOCK", rng.choice([8, 16]))
    with b.loop("i", "0, N, BLOCK"):
        x = _loaded(b, "x", "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -2, 2)
        z = _loaded(b, "z", "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -2, 2)
        c = _loaded(b, "c", "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -1, 1)
        op = rng.choice(["maximum", "minimum", "add", "mul", "max", "min"])
        v = f"{op}({x.text}, {z.text})"
        v = rng.choice([v, f"exp({v})", f"abs({v})", f"neg({v})", f"where({c.text} > 0.0, {v}, {z.text})"])
        b.line(f"store({v} -> y[i:i+BLOCK])")


def fam_params(b: Builder, k: int) -> None:
    rng = b.rng
    b.symbol("N", rng.randint(1, 50))
    b.tensor("x", ["N"], "f32", uniform(-2.0, 2.0))
    b.tensor("y", ["N"], "f32")
    b.tensor("yi", ["N"], "i32")
    scale = b.param("scale", 1.5, rng.choice(["f32", "f64", None]), value=round(rng.uniform(-2, 2), 3))
    shift = b.param("shift", 0.25, "f32")
    step = b.param("step", 2.0, "i32", value=float(rng.randint(1, 5)))
    b.const("BLOCK", rng.choice([4, 8, 16]))
    with b.loop("i", "0, N, BLOCK"):
        t = _loaded(b, "x", "i:i+BLOCK", ["BLOCK"], ("BLOCK",), -2, 2)
        b.line(f"store(add(mul({t.text}, {scale}), {shift}) * (N % 3 + 1) -> y[i:i+BLOCK])")
        ar = b.fresh("ar")
        b.line(f"{ar} = arange(0, BLOCK) * {step} + i")
        b.line(f"store({ar} -> yi[i:i+BLOCK])")


FAMILIES: List[Tuple[str, Callable[[Builder, int], None]]] = [
    ("elementwise_1d", fam_elementwise_1d), ("broadcast_2d", fam_broadcast_2d), ("reduce", fam_reduce),
    ("argreduce", fam_argreduce), ("scan", fam_scan), ("gemm", fam_gemm), ("dot", fam_dot),
    ("gather", fam_gather), ("masks", fam_masks), ("cast", fam_cast), ("control", fam_control),
    ("regions", fam_regions), ("softmax", fam_softmax), ("constructors", fam_constructors),
    ("multi_io", fam_multi_io), ("nan", fam_nan), ("params", fam_params), ("elementwise_1d", fam_elementwise_1d),
]


def generate(seed: int, index: int) -> Sketch:
    """Sketch ``index`` of the run seeded ``seed`` (deterministic)."""
    slot = index % len(FAMILIES)
    family, fn = FAMILIES[slot]
    same = [i for i, (name, _) in enumerate(FAMILIES) if name == family]
    k = (index // len(FAMILIES)) * len(same) + same.index(slot)  # this family's own counter
    rng = random.Random(seed * 1_000_003 + index)
    name = f"dt_{family}_{index}"
    b = Builder(rng, name)
    fn(b, k)
    text = b.render()
    meta = {"symbols": b.symbols, "params": b.param_values, "inputs": b.inputs}
    return Sketch(name, text, meta, family)


def read_meta(text: str) -> Optional[Dict[str, object]]:
    """The metadata of a generated sketch (its first line), or None."""
    first = text.split("\n", 1)[0]
    prefix = "# difftest: "
    if not first.startswith(prefix):
        return None
    return json.loads(first[len(prefix):])


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse
    import os
    parser = argparse.ArgumentParser(description="write random checked sketches into a folder")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for i in range(args.count):
        sk = generate(args.seed, i)
        with open(os.path.join(args.out, f"{sk.name}.sketch"), "w", encoding="utf-8") as f:
            f.write(sk.text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
