"""The suite differential test: every sketch the built-in Designer writes for the operator suite
(bench/ops/<family>/<op>.py), run by the reference interpreter and as the C++ kernel
`akg_cli sketch emit` lowers, on small shapes, with every tensor compared.

    suite.py [--akg-cli build/akg_cli] [--work DIR] [--ops FILTER ...]

Stages, each spread over ``--jobs`` processes (2 by default: one machine's worth):

1. Designs: one `akg_cli bench --workflow design_only --design-check off` over the operators writes
   WORK/<op>/sketch.sketch (each probe runs the reference in the harness; the workers stay warm). An operator the
   Designer writes no sketch for is a failure (``refused``), not a skip.
2. Cases (suite_cases.py, in worker processes that import torch): the model built as
   ``get_init_inputs()`` says, the smallest input case shrunk to small, ragged extents (two
   cases: ``tiny`` and ``ragged``), the sketch bound to them (``sketch_bind.bind``) and run by the
   interpreter; the interpreter's outputs are also compared with the reference's by verify's
   rules: a difference there is the design's error, reported in a column of its own.
3. Kernels: lowered (`akg_cli sketch emit --backend cpu --dsl cpp`), built many to a compiler call
   with the product's flags (backends/cpu/cpp/config.yaml, ``compiler.flags``) by difftest's
   kernels.py, and called through the kernel ABI in a child process on a copy of the same
   starting tensors (outputs poisoned as verify poisons them); every sketch tensor, inputs and
   outputs alike, compared by difftest's rules (values.py).

Per operator one line (its cases' shrunk input shapes and the outcome), then a table by family,
the time of each stage and of the whole run. Failures are saved under WORK/failures/: the sketch,
the kernel, the starting tensors and forward's shrunk inputs (NAME.CASE.npz) and a note.

--dsl triton_cuda runs the kernels under Triton's interpreter (triton_kernels.py); --dsl cuda builds the
CUDA C kernels with nvcc and, where PyTorch sees a GPU, runs them on it (cuda_kernels.py); without a GPU
it only builds them, and an operator's outcome is ``compiled``.

Exit status: 0 every operator was designed, lowered, built and matched on every case (--dsl cuda
without a GPU: built); 1 otherwise
(a design error alone does not fail the run: it is not the lowering's); 2 usage; 77 akg_cli,
its `sketch emit` or PyTorch is missing (CTest's skip code).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "backends", "harness"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import kernels  # noqa: E402
import values  # noqa: E402

SKIP = 77
OPS_DIR = os.path.join(ROOT, "bench", "ops")
CONFIG = os.path.join(ROOT, "backends", "cpu", "cpp", "config.yaml")
# a sketch that lowers, to find out before any design whether this build has `sketch emit`
EMIT_PROBE = os.path.join(ROOT, "tests", "sketch", "fixtures", "valid", "layernorm.sketch")
DESIGN_TIMEOUT = 300.0
WORK_MARKER = ".akg-sketch-difftest-suite"  # a work folder with it may be emptied by the next run
KERNEL_TIMEOUT = 30.0

# Outcomes of an operator, worst first; the table's columns. ``design_error`` is separate.
PASSED = "pass"
OUTCOMES = ("refused", "not_run", "build_error", "kernel_failed", "mismatch", PASSED)
COMPILED = "compiled"  # --dsl cuda without a GPU: built by nvcc, not run
OUTCOME_HELP = {
    "refused": "the Designer wrote no sketch, the sketch does not check, or sketch emit refused it",
    "not_run": "no case could be run: the sketch does not bind, the interpreter rejected it or ran out of budget",
    "build_error": "the emitted kernel does not compile (C++: g++; Triton: its compiler for sm_90, --compile; "
                   "CUDA C: nvcc)",
    "kernel_failed": "the kernel crashed, hung or returned non-zero",
    "mismatch": "kernel and interpreter differ on some tensor",
    PASSED: "every case matched",
    COMPILED: "nvcc built the kernel; no GPU here, so no case ran",
}


@dataclass
class CaseOutcome:
    name: str  # tiny, ragged
    shapes: List[List[int]]
    outcome: str = "pending"
    detail: str = ""
    design: str = ""
    symbols: Dict[str, int] = field(default_factory=dict)
    params: Dict[str, float] = field(default_factory=dict)


@dataclass
class Op:
    """One operator through the test."""

    index: int
    family: str
    name: str
    reference: str
    sketch: str = ""
    ir: Optional[Dict[str, Any]] = None
    source: str = ""  # the emitted kernel
    outcome: str = "pending"
    detail: str = ""
    original: List[List[int]] = field(default_factory=list)
    cases: List[CaseOutcome] = field(default_factory=list)
    prepared: Any = None  # suite_cases.OpCases

    @property
    def label(self) -> str:
        return f"{self.family}/{self.name}"

    def fail(self, outcome: str, detail: str) -> None:
        """Keeps the worst outcome (OUTCOMES order) and its detail."""
        if self.outcome == "pending" or OUTCOMES.index(outcome) < OUTCOMES.index(self.outcome):
            self.outcome, self.detail = outcome, detail

    def design_errors(self) -> List[CaseOutcome]:
        return [c for c in self.cases if c.design and not c.design.startswith("ok")]


def find_akg_cli(given: Optional[str]) -> Optional[str]:
    """The akg_cli given (None when it is not an executable), else $AKG_CLI, else build/akg_cli."""
    if given:
        return given if os.path.isfile(given) and os.access(given, os.X_OK) else None
    for candidate in (os.environ.get("AKG_CLI"), os.path.join(ROOT, "build", "akg_cli")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def product_flags(path: str = CONFIG) -> List[str]:
    """``compiler.flags`` of the C++ backend's config.yaml (a one-line YAML list)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"^\s*flags:\s*\[([^\]]*)\]", text, re.MULTILINE)
    if not m:
        raise SystemExit(f"{path}: no `flags: [...]` line under compiler:")
    return [x.strip().strip("'\"") for x in m.group(1).split(",") if x.strip()]


def discover(filters: Sequence[str]) -> List[Op]:
    ops: List[Op] = []
    for family in sorted(os.listdir(OPS_DIR)):
        folder = os.path.join(OPS_DIR, family)
        if not os.path.isdir(folder):
            continue
        for name in sorted(n for n in os.listdir(folder) if n.endswith(".py") and not n.startswith("_")):
            label = f"{family}/{name[:-3]}"
            if filters and not any(f in label for f in filters):
                continue
            ops.append(Op(len(ops), family, name[:-3], os.path.join(folder, name)))
    return ops


# ---- stage 1: designs -----------------------------------------------------------------------------------


def design_all(akg_cli: str, ops: Sequence[Op], work: str, seed: int, jobs: int, triton: bool = False) -> None:
    """Every operator's design from one `akg_cli bench --workflow design_only` run: one engine whose
    harness workers (two with --jobs 2) stay warm across the operators, where an `akg_cli op` per
    operator paid a worker's start (importing torch) and shutdown each. Each operator's sketch is
    copied to WORK/<op>/sketch.sketch. triton: the design for cuda/triton_cuda (the Designer's GPU
    designs), probed on the CPU as Triton's interpreter runs (AKG_TRITON_INTERPRET=1)."""
    runs = os.path.join(work, "designs")
    shutil.rmtree(runs, ignore_errors=True)
    record = os.path.join(work, "designs.json")
    target = ["--backend", "cuda", "--dsl", "triton_cuda"] if triton else []
    workers = max(1, min(2, jobs))
    # the operators asked for, as a suite of their own (copies: bench takes a folder, not a list)
    suite = os.path.join(work, "suite")
    shutil.rmtree(suite, ignore_errors=True)
    for op in ops:
        os.makedirs(os.path.join(suite, op.family), exist_ok=True)
        shutil.copyfile(op.reference, os.path.join(suite, op.family, op.name + ".py"))
    argv = [akg_cli, "bench", "--suite", suite, *target, "--workflow", "design_only", "--design-check", "off", "--scale", "1",
            "--jobs", str(workers), "--devices", ",".join(["0"] * workers), "--quiet", "--python",
            sys.executable, "--runs-dir", runs, "--store", os.path.join(work, "store.db"), "--output", record]
    if seed:
        argv += ["--seed", str(seed)]
    env = dict(os.environ, AKG_TRITON_INTERPRET="1") if triton else None
    timeout = DESIGN_TIMEOUT + 10.0 * len(ops)
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    except subprocess.TimeoutExpired:
        for op in ops:
            op.fail("refused", f"the Designer's bench run did not finish in {timeout:g} s")
        return
    answers: Dict[str, Dict[str, Any]] = {}
    try:
        with open(record, encoding="utf-8") as f:
            for entry in json.load(f).get("ops", []):
                answers[f"{entry.get('family')}/{entry.get('name')}"] = entry
    except (OSError, ValueError) as exc:
        why = (proc.stderr.strip() or proc.stdout.strip() or str(exc)).splitlines()
        for op in ops:
            op.fail("refused", f"akg_cli bench (exit {proc.returncode}) wrote no record: " + " | ".join(why[-4:]))
        return
    for op in ops:
        made = os.path.join(runs, f"{op.family}_{op.name}", "sketch.sketch")
        entry = answers.get(op.label)
        if entry is None:
            op.fail("refused", f"akg_cli bench (exit {proc.returncode}) did not run {op.label}")
        elif entry.get("status") == "unverified" and os.path.isfile(made):
            out = os.path.join(work, op.name)
            os.makedirs(out, exist_ok=True)
            shutil.copyfile(made, os.path.join(out, "sketch.sketch"))
            op.sketch = os.path.join(out, "sketch.sketch")
        else:
            op.fail("refused", f"the Designer wrote no sketch ({entry.get('status')}, {entry.get('error_class')}): "
                    f"{entry.get('error_detail') or 'no detail'}")


def reuse_design(op: Op, folder: str) -> None:
    path = os.path.join(folder, op.name, "sketch.sketch")
    if os.path.isfile(path):
        op.sketch = path
    else:
        op.fail("refused", f"--sketches: {path} does not exist")


def fixture_design(op: Op, folder: str) -> None:
    """--sketch-files: FOLDER/<family>_<name>.sketch (a committed snapshot of the Designer's sketches)."""
    path = os.path.join(folder, f"{op.family}_{op.name}.sketch")
    if os.path.isfile(path):
        op.sketch = path
    else:
        op.fail("refused", f"--sketch-files: {path} does not exist")


# The built-in Designer splits long rows across programs only past RX_SPLIT_ROWS (65536) elements, and
# the I > 1 reductions only from D >= 64: the small cases never take those branches. A variant with the
# thresholds lowered takes them (the branches compute the same function for every shape; only their
# speed differs), so that host loops, scratch tiles and the kernels that combine them run too.
# The GPU designs (akg_cli op --backend cuda) keep a row or a group of columns in one block up to
# 16384 elements and stream longer ones (`<= 16384`), stream long rows in one program each only when
# they are many (`O >= 256`, else P parts of each row and a combining launch), and split strided
# reductions into parts of rows from `D < 512` on.
SPLIT_SWAPS = (("D < 65536", "D < 8"), ("D >= 64", "D >= 2"), ("<= 16384", "<= 2"), ("O >= 256", "O >= 5"), ("D < 512", "D < 2"))


def split_variants(ops: Sequence[Op], work: str) -> List[Op]:
    """For every sketch with a split threshold, an operator OP@split running the variant."""
    extra: List[Op] = []
    folder = os.path.join(work, "variants")
    for op in ops:
        if not op.sketch:
            continue
        with open(op.sketch, encoding="utf-8") as f:
            text = f.read()
        variant = text
        for old, new in SPLIT_SWAPS:
            variant = variant.replace(old, new)
        if variant == text:
            continue
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, f"{op.name}@split.sketch")
        with open(path, "w", encoding="utf-8") as f:
            f.write(variant)
        extra.append(Op(len(ops) + len(extra), op.family, op.name + "@split", op.reference, sketch=path))
    return extra


def json_forms(akg_cli: str, ops: Sequence[Op]) -> None:
    todo = [op for op in ops if op.sketch]
    if not todo:
        return
    proc = subprocess.run([akg_cli, "sketch", "json", *[op.sketch for op in todo]], capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    if proc.returncode == 0 and len(lines) == len(todo):
        for op, line in zip(todo, lines):
            op.ir = json.loads(line)
        return
    for op in todo:
        one = subprocess.run([akg_cli, "sketch", "json", op.sketch], capture_output=True, text=True)
        if one.returncode == 0:
            op.ir = json.loads(one.stdout)
        else:
            op.fail("refused", "the Designer's sketch does not check: " + one.stderr.strip())


# ---- stage 2: cases -------------------------------------------------------------------------------------


def prepare_all(ops: Sequence[Op], seed: int, jobs: int) -> None:
    import suite_cases  # torch: imported only here, after the usage checks

    todo = [op for op in ops if op.ir is not None]
    # the convolutions first: they take longest, and the pool then ends evenly
    todo.sort(key=lambda op: (op.family != "conv", op.index))
    work = [(op.name, op.reference, op.ir, seed) for op in todo]
    by_name = {op.name: op for op in todo}
    if jobs > 1 and len(work) > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = list(pool.imap_unordered(suite_cases.call_in_worker, work))
    else:
        results = [suite_cases.call_in_worker(w) for w in work]
    for res in results:
        op = by_name[res.op]
        op.prepared, op.original = res, res.original
        if res.error:
            op.fail("not_run", res.error)
            continue
        for c in res.cases:
            case = CaseOutcome(c.ladder, c.shapes, design=c.design, symbols=c.symbols, params=c.params)
            op.cases.append(case)
            if c.status != "ok":
                case.outcome, case.detail = "not_run", f"{c.status}: {c.detail}"
                op.fail("not_run", f"case {c.ladder}: {c.status}: {c.detail}")


# ---- stage 3: kernels -----------------------------------------------------------------------------------


def _judge_calls(todo: Sequence[Op], called: List[Tuple[Op, Any, Any]], results: List[Any]) -> None:
    """Each called case's outcome from its kernel's result (a case already marked build_error
    stays so), then each operator whose cases all passed is passed."""
    for (op, case, prepared), res in zip(called, results):
        if case.outcome == "build_error":
            continue
        if res.status != "ok":
            case.outcome, case.detail = "kernel_failed", res.detail
            op.fail("kernel_failed", f"case {case.name}: {res.detail}")
            continue
        assert op.ir is not None and res.tensors is not None
        got = {t["name"]: values.from_abi(buf, t["dtype"]) for t, buf in zip(op.ir["tensors"], res.tensors)}
        mismatches = values.compare_all(op.ir, prepared.expected, got)
        if mismatches:
            case.outcome = "mismatch"
            case.detail = "; ".join(f"tensor '{m.tensor}': {m.detail}" for m in mismatches)
            op.fail("mismatch", f"case {case.name}: {case.detail}")
        else:
            case.outcome = PASSED
    for op in todo:
        if op.outcome == "pending" and op.cases and all(c.outcome == PASSED for c in op.cases):
            op.outcome = PASSED


def lower_build_run(ops: Sequence[Op], akg_cli: str, work: str, cxx: str, extra: Sequence[str],
                    jobs: int) -> Tuple[Optional[str], Dict[str, float]]:
    """Lowers, builds and calls every operator with a case to run; returns a reason to skip the
    whole test when `akg_cli sketch emit` is missing (else None) and the stage times."""
    times: Dict[str, float] = {}
    todo = [op for op in ops if op.ir is not None and op.outcome != "refused"]
    if not todo:
        return None, times
    t0 = time.monotonic()
    emitted = kernels.emit_all(akg_cli, [op.sketch for op in todo], jobs)
    if any(e.status == kernels.EMIT_MISSING for e in emitted):
        missing = next(e for e in emitted if e.status == kernels.EMIT_MISSING)
        return missing.diagnostics or "akg_cli sketch emit is not available", times
    sources: List[Tuple[int, str]] = []
    for op, em in zip(todo, emitted):
        if em.status == kernels.EMIT_OK:
            op.source = em.source
            sources.append((op.index, em.source))
            os.makedirs(os.path.join(work, op.name), exist_ok=True)
            with open(os.path.join(work, op.name, "kernel.cpp"), "w", encoding="utf-8") as f:
                f.write(em.source)
        else:
            op.fail("refused", "sketch emit refused the sketch: " + em.diagnostics)
    t1 = time.monotonic()
    batch = max(1, -(-len(sources) // max(1, jobs)))  # one unit a job
    built = kernels.build(sources, os.path.join(work, "build"), cxx, extra, batch, jobs)
    t2 = time.monotonic()
    calls: List[kernels.Call] = []
    called: List[Tuple[Op, CaseOutcome, Any]] = []
    by_index = {op.index: op for op in todo}
    for kernel_id, _ in sources:
        op = by_index[kernel_id]
        if kernel_id in built.errors:
            op.fail("build_error", built.errors[kernel_id])
            continue
        assert op.ir is not None
        for case, prepared in zip(op.cases, op.prepared.cases):
            if case.outcome == "not_run":
                continue
            tensors = [values.abi_array(prepared.start[t["name"]].copy(), t["dtype"]) for t in op.ir["tensors"]]
            calls.append(kernels.Call(kernel_id, built.library[kernel_id], tensors,
                                      [prepared.symbols[s] for s in op.ir["symbols"]],
                                      [prepared.params[p["name"]] for p in op.ir["params"]]))
            called.append((op, case, prepared))
    results = kernels.run_calls(calls, KERNEL_TIMEOUT)
    _judge_calls(todo, called, results)
    times.update(lowering=t1 - t0, building=t2 - t1, calling=time.monotonic() - t2)
    return None, times


def lower_build_run_cuda(ops: Sequence[Op], akg_cli: str, work: str, nvcc: Optional[str], arch: str, on_gpu: bool,
                         jobs: int, prebuilt: Optional[str]) -> Tuple[Optional[str], Dict[str, float]]:
    """--dsl cuda: lowers every operator with `sketch emit --backend cuda --dsl cuda`, builds each kernel.cu
    with nvcc for arch (cuda_kernels.py) and, on a GPU, calls it on the device in spawned children on
    copies of the C++ path's starting tensors; the comparison is the C++ path's. Without a GPU an
    operator that built is ``compiled`` and nothing runs."""
    import cuda_kernels

    times: Dict[str, float] = {}
    todo = [op for op in ops if op.ir is not None and op.outcome != "refused"]
    if not todo:
        return None, times
    t0 = time.monotonic()
    emitted = kernels.emit_all(akg_cli, [op.sketch for op in todo], jobs, backend="cuda", dsl="cuda")
    if any(e.status == kernels.EMIT_MISSING for e in emitted):
        missing = next(e for e in emitted if e.status == kernels.EMIT_MISSING)
        return missing.diagnostics or "akg_cli sketch emit --backend cuda --dsl cuda is not available", times
    sources: List[Tuple[int, str]] = []
    for op, em in zip(todo, emitted):
        if em.status != kernels.EMIT_OK:
            op.fail("refused", "sketch emit refused the sketch: " + em.diagnostics)
            continue
        op.source = em.source
        folder = os.path.join(work, op.name)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, "kernel.cu")
        with open(path, "w", encoding="utf-8") as f:
            f.write(em.source)
        sources.append((op.index, path))
    t1 = time.monotonic()
    built = cuda_kernels.build(sources, work, nvcc, arch, jobs, prebuilt)
    t2 = time.monotonic()
    times.update(lowering=t1 - t0)
    times[f"building (nvcc, {arch})"] = t2 - t1
    by_index = {op.index: op for op in todo}
    calls: List[kernels.Call] = []
    called: List[Tuple[Op, CaseOutcome, Any]] = []
    for kernel_id, _ in sources:
        op = by_index[kernel_id]
        if kernel_id in built.errors:
            op.fail("build_error", built.errors[kernel_id])
            continue
        if not on_gpu:
            if op.outcome == "pending":
                op.outcome = COMPILED
            continue
        assert op.ir is not None
        for case, prepared in zip(op.cases, op.prepared.cases if op.prepared is not None else []):
            if case.outcome == "not_run":
                continue
            tensors = [values.abi_array(prepared.start[t["name"]].copy(), t["dtype"]) for t in op.ir["tensors"]]
            calls.append(kernels.Call(kernel_id, built.library[kernel_id], tensors,
                                      [prepared.symbols[s] for s in op.ir["symbols"]],
                                      [prepared.params[p["name"]] for p in op.ir["params"]]))
            called.append((op, case, prepared))
    if on_gpu:
        groups = [list(range(j, len(calls), max(1, jobs))) for j in range(max(1, jobs))]
        results: List[Any] = [None] * len(calls)

        def run_group(idx: List[int]) -> None:
            for i, res in zip(idx, kernels.run_calls([calls[i] for i in idx], KERNEL_TIMEOUT * 4,
                                                     cuda_kernels.child, "spawn")):
                results[i] = res

        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            list(pool.map(run_group, [g for g in groups if g]))
        _judge_calls(todo, called, results)
        times["calling on the GPU"] = time.monotonic() - t2
    return None, times


def lower_run_triton(ops: Sequence[Op], akg_cli: str, work: str, jobs: int,
                     compile_too: bool) -> Tuple[Optional[str], Dict[str, float]]:
    """--dsl triton_cuda: lowers every operator with `sketch emit --backend cuda --dsl triton_cuda` and
    runs the module's akg_kernel under Triton's interpreter (triton_kernels.py), ``jobs`` children at
    once; the comparison is the C++ path's. With compile_too, every case's launches are also compiled
    for sm_90 by Triton's compiler (no GPU needed): a kernel it refuses is a build_error."""
    import triton_kernels

    times: Dict[str, float] = {}
    todo = [op for op in ops if op.ir is not None and op.outcome != "refused"]
    if not todo:
        return None, times
    t0 = time.monotonic()
    emitted = kernels.emit_all(akg_cli, [op.sketch for op in todo], jobs, backend="cuda", dsl="triton_cuda")
    if any(e.status == kernels.EMIT_MISSING for e in emitted):
        missing = next(e for e in emitted if e.status == kernels.EMIT_MISSING)
        return missing.diagnostics or "akg_cli sketch emit --backend cuda is not available", times
    calls: List[kernels.Call] = []
    called: List[Tuple[Op, CaseOutcome, Any]] = []
    for op, em in zip(todo, emitted):
        if em.status != kernels.EMIT_OK:
            op.fail("refused", "sketch emit refused the sketch: " + em.diagnostics)
            continue
        op.source = em.source
        os.makedirs(os.path.join(work, op.name), exist_ok=True)
        path = os.path.join(work, op.name, f"kernel_{op.name}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(em.source)
        assert op.ir is not None
        for case, prepared in zip(op.cases, op.prepared.cases):
            if case.outcome == "not_run":
                continue
            tensors = [values.abi_array(prepared.start[t["name"]].copy(), t["dtype"]) for t in op.ir["tensors"]]
            calls.append(kernels.Call(op.index, path, tensors, [prepared.symbols[s] for s in op.ir["symbols"]],
                                      [prepared.params[p["name"]] for p in op.ir["params"]]))
            called.append((op, case, prepared))
    t1 = time.monotonic()
    groups = [list(range(j, len(calls), max(1, jobs))) for j in range(max(1, jobs))]
    results: List[Any] = [None] * len(calls)

    def run_group(idx: List[int], child: Any = triton_kernels.child, into: List[Any] = results,
                  context: str = "fork") -> None:
        for i, res in zip(idx, kernels.run_calls([calls[i] for i in idx], KERNEL_TIMEOUT * 4, child, context)):
            into[i] = res

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(run_group, [g for g in groups if g]))
    t2 = time.monotonic()
    if compile_too:
        # one case an operator, the ragged one (general sizes: the signature most launches get; the tiny
        # case's sizes of 1 become constexprs) to keep the test within its time
        chosen = [i for i, (op, case, _) in enumerate(called)
                  if case.name == "ragged" or not any(c.name == "ragged" for c in op.cases)]
        cgroups = [chosen[j::max(1, jobs)] for j in range(max(1, jobs))]
        compiled: List[Any] = [None] * len(calls)
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            # a fresh process: Triton must not have been imported with the interpreter on
            list(pool.map(lambda g: run_group(g, triton_kernels.compile_child, compiled, "spawn"),
                          [g for g in cgroups if g]))
        for (op, case, _), res in zip(called, compiled):
            if res is not None and res.status != "ok":
                op.fail("build_error", f"case {case.name}: {res.detail}")
                case.outcome, case.detail = "build_error", res.detail
        times["compiling for sm_90"] = time.monotonic() - t2
    _judge_calls(todo, called, results)
    times.update(lowering=t1 - t0, interpreting=t2 - t1)
    return None, times


# ---- report ---------------------------------------------------------------------------------------------


def _shapes(shapes: List[List[int]]) -> str:
    return " ".join("[" + ",".join(str(d) for d in s) + "]" for s in shapes) or "-"


def op_line(op: Op) -> str:
    parts = [f"{op.label:<40} {op.outcome:<13}"]
    if op.original:
        parts.append(f"from {_shapes(op.original)}:")
    for c in op.cases:
        design = "" if c.design.startswith("ok") or not c.design else ", DESIGN ERROR"
        parts.append(f"{c.name} {_shapes(c.shapes)} {c.outcome}{design};")
    line = " ".join(parts).rstrip(";")
    failed_cases = [c for c in op.cases if c.detail]
    for c in failed_cases:
        line += f"\n    {c.name}: {c.outcome}: " + c.detail.replace("\n", "\n    ")[:1500]
    if op.outcome not in (PASSED, COMPILED, "pending") and not failed_cases:
        line += "\n    " + op.detail.replace("\n", "\n    ")[:1500]
    for c in op.design_errors():
        line += f"\n    design error ({c.name}): {c.design[:800]}"
    return line


def save_failure(work: str, op: Op, seed: int, ext: str = ".cpp") -> str:
    folder = os.path.join(work, "failures")
    os.makedirs(folder, exist_ok=True)
    if op.sketch:
        shutil.copyfile(op.sketch, os.path.join(folder, f"{op.name}.sketch"))
    if op.source:
        with open(os.path.join(folder, f"{op.name}{ext}"), "w", encoding="utf-8") as f:
            f.write(op.source)
    prepared = op.prepared.cases if op.prepared is not None else []
    for c in prepared:
        arrays = {f"start/{k}": v for k, v in c.start.items()}
        arrays.update({f"arg{i}": np.asarray(a) for i, a in enumerate(c.args) if isinstance(a, np.ndarray)})
        if arrays:
            np.savez(os.path.join(folder, f"{op.name}.{c.ladder}.npz"), **arrays)
    note = os.path.join(folder, f"{op.name}.txt")
    with open(note, "w", encoding="utf-8") as f:
        f.write(f"op: {op.label} ({op.reference})\noutcome: {op.outcome}\n{op.detail}\n\n")
        f.write(f"forward's inputs (smallest case): {_shapes(op.original)}\n")
        for c in op.cases:
            f.write(f"\ncase {c.name}: inputs {_shapes(c.shapes)}: {c.outcome}\n  symbols: {c.symbols}\n"
                    f"  params: {c.params}\n  design: {c.design}\n")
            if c.detail:
                f.write(f"  {c.detail}\n")
        f.write(f"\nfiles: {op.name}.sketch (the design), {op.name}.cpp (the kernel), {op.name}.CASE.npz "
                f"(start/NAME: the sketch's tensors before the run, argI: forward's inputs)\n"
                f"again (this design): {os.path.relpath(__file__, ROOT)} --ops {op.label} --seed {seed} "
                f"--sketches {os.path.dirname(os.path.dirname(op.sketch)) or work} --work /tmp/again\n")
    return note


def report(ops: Sequence[Op], work: str, seed: int, times: Dict[str, float], seconds: float, cpu: float,
           goal: str = PASSED, ext: str = ".cpp") -> int:
    """Prints a line an operator, the table and the totals; 0 when every operator reached goal (PASSED, or
    COMPILED for --dsl cuda without a GPU), else 1."""
    outcomes = OUTCOMES if goal == PASSED else OUTCOMES + (goal,)
    print()
    for op in ops:
        if op.outcome == "pending":  # nothing failed, yet not every case passed
            op.fail("not_run", "no case ran to the end")
        for c in op.cases:
            if c.outcome == "pending":
                c.outcome = "not called"
        print(op_line(op))
    families = sorted({op.family for op in ops})
    print(f"\n| family | ops | {' | '.join(outcomes[::-1])} | design error |")
    print("| --- | ---: | " + " | ".join("---" for _ in outcomes) + " | --- |")
    for fam in families + ["all"]:
        group = [op for op in ops if fam in ("all", op.family)]
        cells = []
        for outcome in outcomes[::-1]:
            names = [op.name for op in group if op.outcome == outcome]
            cells.append(str(len(names)) if outcome == goal or fam == "all" or not names
                         else f"{len(names)}: {', '.join(names)}")
        design = [op.name for op in group if op.design_errors()]
        cells.append(str(len(design)) if fam == "all" or not design else f"{len(design)}: {', '.join(design)}")
        print(f"| {fam} | {len(group)} | " + " | ".join(cells) + " |")
    print("\n" + "\n".join(f"{k}: {v}" for k, v in OUTCOME_HELP.items() if k in outcomes) +
          "\ndesign error: the interpreter's outputs differ from the reference's by verify's rules (the design's "
          "error, not the lowering's; it does not fail the run)")
    failing = [op for op in ops if op.outcome != goal or op.design_errors()]
    for op in failing:
        save_failure(work, op, seed, ext)
    stages = ", ".join(f"{k} {v:.1f} s" for k, v in times.items())
    passed = sum(op.outcome == goal for op in ops)
    verb = "passed" if goal == PASSED else f"{goal} (no GPU here: nothing ran)"
    print(f"\nsketch difftest suite: {passed} of {len(ops)} operators {verb}; {stages}; total {seconds:.1f} s wall, "
          f"{cpu:.1f} s CPU")
    slowest = max(((c.interp_seconds, op.label, c.ladder) for op in ops if op.prepared is not None
                   for c in op.prepared.cases), default=None)
    if slowest is not None:
        print(f"slowest interpretation: {slowest[1]} ({slowest[2]}) {slowest[0]:.1f} s")
    if failing:
        print(f"failures saved under {os.path.join(work, 'failures')}/ (NAME.sketch, NAME{ext}, NAME.CASE.npz, NAME.txt)")
    return 0 if passed == len(ops) else 1


def cpu_seconds() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="the sketch differential test on the operator suite's designs")
    parser.add_argument("--akg-cli", help="akg_cli to use (default: $AKG_CLI, then build/akg_cli)")
    parser.add_argument("--work", default=None, help="work folder (default: a fresh one under /tmp)")
    parser.add_argument("--ops", nargs="*", default=[], help="only operators whose family/name contains one of these")
    parser.add_argument("--sketches", help="take WORK/<op>/sketch.sketch from this folder (an earlier run's work "
                                           "folder) instead of running the Designer")
    parser.add_argument("--sketch-files", help="take <family>_<name>.sketch from this folder instead of running "
                                               "the Designer (tests/sketch/fixtures/triton_cuda holds a snapshot)")
    parser.add_argument("--compile", action="store_true",
                        help="--dsl triton_cuda: also compile every kernel the ragged case launches for sm_90 with "
                             "Triton's compiler (PTX and cubin, no GPU needed)")
    parser.add_argument("--split-variants", action="store_true",
                        help="also run every sketch with its row-split thresholds lowered (OP@split), so that the "
                             "branches the small cases never take run too")
    parser.add_argument("--seed", type=int, default=0, help="seed of the probe, the weights and the inputs")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--cxxflags", default="", help="compiler flags added to the product's")
    parser.add_argument("--jobs", type=int, default=2, help="processes a stage (the Designer runs at most 2)")
    parser.add_argument("--dsl", choices=("cpp", "triton_cuda", "cuda"), default="cpp",
                        help="the backend under test: cpu/cpp (built with g++), cuda/triton_cuda (run by "
                             "Triton's interpreter, TRITON_INTERPRET=1: no GPU needed) or cuda/cuda (CUDA C built "
                             "by nvcc, run on the GPU where there is one, else only built)")
    parser.add_argument("--arch", default="sm_90", help="--dsl cuda: nvcc's -arch (sm_90a for an H100/H200)")
    parser.add_argument("--prebuilt", help="--dsl cuda: an earlier run's work folder (on a machine with nvcc) whose "
                                           "libraries are used where the kernel.cu and the arch are the same")
    args = parser.parse_args(argv)
    triton = args.dsl == "triton_cuda"
    cuda_c = args.dsl == "cuda"
    backend, dsl = ("cuda", args.dsl) if triton or cuda_c else ("cpu", "cpp")
    start, cpu0 = time.monotonic(), cpu_seconds()
    akg_cli = find_akg_cli(args.akg_cli)
    if akg_cli is None:
        where = f"{args.akg_cli} is not an executable" if args.akg_cli else "pass --akg-cli or set AKG_CLI"
        print(f"sketch difftest suite skipped: akg_cli not found ({where})")
        return SKIP
    try:
        import torch  # noqa: F401  (the harness's binding and the references need it)
    except ImportError as exc:
        print(f"sketch difftest suite skipped: {sys.executable} cannot import torch ({exc})")
        return SKIP
    if triton:
        import triton_kernels  # sets TRITON_INTERPRET=1 before anything imports triton

        why = triton_kernels.available()
        if why:
            print(f"sketch difftest suite skipped: {sys.executable}: {why} (scripts/setup.sh torch2 makes "
                  ".venv-torch2)")
            return SKIP
    nvcc, gpu_name = None, ""
    if cuda_c:
        import cuda_kernels

        nvcc = cuda_kernels.find_nvcc()
        if nvcc is None and not args.prebuilt:
            print("sketch difftest suite skipped: nvcc is not installed (set AKG_NVCC, put it on PATH, or let "
                  "scripts/setup.sh test make .venv-nvcc)")
            return SKIP
        gpu_name = cuda_kernels.gpu()
    probe = kernels.emit(akg_cli, EMIT_PROBE, backend=backend, dsl=dsl)
    if probe.status == kernels.EMIT_MISSING:
        print(f"sketch difftest suite skipped: `akg_cli sketch emit --backend {backend} --dsl {dsl}` is not "
              f"available in this build ({(probe.diagnostics or 'no output').splitlines()[0]})")
        return SKIP
    flags = product_flags()
    extra = [f for f in flags if f not in kernels.CXX_FLAGS] + args.cxxflags.split()
    unasked = [f for f in kernels.CXX_FLAGS if f not in flags]
    if unasked:
        print(f"sketch difftest suite: note: {CONFIG} no longer has {' '.join(unasked)}, which kernels.py "
              "always passes")
    work = os.path.abspath(args.work or os.path.join("/tmp", f"akg-sketch-difftest-suite-{os.getpid()}"))
    marker = os.path.join(work, WORK_MARKER)
    if os.path.isdir(work) and os.listdir(work) and not os.path.isfile(marker):
        print(f"--work {work}: the folder holds files this test did not write; give an empty or new folder")
        return 2
    if not args.sketches or os.path.abspath(args.sketches) != work:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work, exist_ok=True)
    with open(marker, "w", encoding="utf-8") as f:
        f.write("the work folder of tests/sketch/difftest/suite.py: the next run empties it\n")
    ops = discover(args.ops)
    if not ops:
        print(f"no operator under {OPS_DIR} matches {args.ops}")
        return 2
    how = ("cuda/triton_cuda under Triton's interpreter" + (", compiled for sm_90" if args.compile else "")
           if triton else f"flags {' '.join(flags + args.cxxflags.split())}")
    if cuda_c:
        how = (f"cuda/cuda built by {nvcc or 'nobody (--prebuilt only)'} for {args.arch}, "
               + (f"run on {gpu_name}" if gpu_name else "no GPU here: built only"))
    print(f"sketch difftest suite: {len(ops)} operators, work folder {work}, {how}")
    times: Dict[str, float] = {}

    t = time.monotonic()
    if args.sketch_files:
        for op in ops:
            fixture_design(op, os.path.abspath(args.sketch_files))
    elif args.sketches:
        for op in ops:
            reuse_design(op, os.path.abspath(args.sketches))
    else:
        gpu_designs = triton or cuda_c  # the Designer's cuda designs serve both cuda DSLs
        design_all(akg_cli, ops, work, args.seed, args.jobs, gpu_designs)
    if args.split_variants:
        ops = ops + split_variants(ops, work)
    json_forms(akg_cli, ops)
    times["designing"] = time.monotonic() - t
    print(f"sketch difftest suite: designs {times['designing']:.1f} s ({sum(op.ir is not None for op in ops)} "
          f"of {len(ops)} sketches)", flush=True)

    if not cuda_c or gpu_name:  # built only: no case to compare with
        t = time.monotonic()
        prepare_all(ops, args.seed, args.jobs)
        times["shrinking and interpreting"] = time.monotonic() - t
        print(f"sketch difftest suite: cases {times['shrinking and interpreting']:.1f} s", flush=True)

    if cuda_c:
        prebuilt = os.path.abspath(args.prebuilt) if args.prebuilt else None
        skip, kernel_times = lower_build_run_cuda(ops, akg_cli, work, nvcc, args.arch, bool(gpu_name), args.jobs,
                                                  prebuilt)
    elif triton:
        skip, kernel_times = lower_run_triton(ops, akg_cli, work, args.jobs, args.compile)
    else:
        skip, kernel_times = lower_build_run(ops, akg_cli, work, args.cxx, extra, args.jobs)
    if skip is not None:
        print(f"sketch difftest suite skipped: `akg_cli sketch emit --backend {backend} --dsl {dsl}` is not "
              f"available ({skip.splitlines()[0] if skip else ''})")
        return SKIP
    times.update(kernel_times)
    if cuda_c:
        return report(ops, work, args.seed, times, time.monotonic() - start, cpu_seconds() - cpu0,
                      PASSED if gpu_name else COMPILED, ".cu")
    return report(ops, work, args.seed, times, time.monotonic() - start, cpu_seconds() - cpu0)


if __name__ == "__main__":
    sys.exit(main())
