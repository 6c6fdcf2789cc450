"""The differential test: the reference interpreter against kernels lowered by `akg_cli sketch emit`.

    difftest.py --count 1000 --seed 1            generated sketches (sketchgen.py)
    difftest.py --dir DIR [--sym N=37 ...]       the .sketch files of DIR, bind-free

For each sketch: check it and take its JSON form (`akg_cli sketch json`), draw symbol values and
tensor contents (values.py), run the interpreter (backends/harness/akg_harness/sketch_interp.py),
lower the sketch (`akg_cli sketch emit --backend cpu --dsl cpp`), build the kernels many to a
compiler call (kernels.py), call each through the kernel ABI on the same starting tensors, and
compare every tensor. Failures are saved under WORK/failures/ (the sketch and what differed).

Exit status: 0 every sketch agreed; 1 some did not (or a generated sketch did not check, or the
interpreter rejected one: the generator's fault); 2 usage; 77 `akg_cli sketch emit` does not
exist in this build (CTest's skip code).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(ROOT, "backends", "harness"))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import kernels  # noqa: E402
import sketchgen  # noqa: E402
import values  # noqa: E402
from akg_harness.sketch_interp import Limits, SketchBudgetExceeded, SketchError, run  # noqa: E402

SKIP = 77
INTERP_LIMITS = Limits(max_statements=2_000_000, max_elements=200_000_000, max_seconds=60.0)


@dataclass
class Item:
    """One sketch through the pipeline."""

    index: int
    name: str
    path: str
    text: str
    meta: Optional[Dict[str, Any]]
    ir: Optional[Dict[str, Any]] = None
    case: Optional[values.Case] = None
    expected: Optional[Dict[str, np.ndarray]] = None
    outcome: str = "pending"
    detail: str = ""


@dataclass
class Summary:
    counts: Dict[str, int] = field(default_factory=dict)
    failures: List[Item] = field(default_factory=list)

    def add(self, item: Item) -> None:
        self.counts[item.outcome] = self.counts.get(item.outcome, 0) + 1
        if item.outcome != "passed":
            self.failures.append(item)


def find_akg_cli(given: Optional[str]) -> str:
    for candidate in (given, os.environ.get("AKG_CLI"), os.path.join(ROOT, "build", "akg_cli")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise SystemExit("akg_cli not found: pass --akg-cli or set AKG_CLI")


def parse_syms(pairs: Sequence[str]) -> Dict[str, int]:
    out = {}
    for p in pairs:
        name, _, value = p.partition("=")
        if not name or not value.lstrip("-").isdigit():
            raise SystemExit(f"--sym takes NAME=INTEGER, got {p!r}")
        out[name] = int(value)
    return out


# ---- stage 1: sketches and their JSON forms -------------------------------------------------------------


def generated_items(seed: int, count: int, work: str) -> List[Item]:
    folder = os.path.join(work, "sketches")
    os.makedirs(folder, exist_ok=True)
    items = []
    for i in range(count):
        sk = sketchgen.generate(seed, i)
        path = os.path.join(folder, f"{sk.name}.sketch")
        with open(path, "w", encoding="utf-8") as f:
            f.write(sk.text)
        items.append(Item(i, sk.name, path, sk.text, sk.meta))
    return items


def dir_items(folder: str) -> List[Item]:
    items = []
    for i, name in enumerate(sorted(n for n in os.listdir(folder) if n.endswith(".sketch"))):
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        items.append(Item(i, name[:-len(".sketch")], path, text, sketchgen.read_meta(text)))
    return items


def json_forms(akg_cli: str, items: Sequence[Item], chunk: int = 200) -> None:
    """Fills item.ir from `akg_cli sketch json` (many files a call); a sketch that does not check is
    marked ``check_error``."""
    for start in range(0, len(items), chunk):
        part = items[start:start + chunk]
        proc = subprocess.run([akg_cli, "sketch", "json", *[it.path for it in part]], capture_output=True, text=True)
        lines = proc.stdout.splitlines()
        if proc.returncode == 0 and len(lines) == len(part):
            for it, line in zip(part, lines):
                it.ir = json.loads(line)
            continue
        for it in part:  # find the ones that fail
            one = subprocess.run([akg_cli, "sketch", "json", it.path], capture_output=True, text=True)
            if one.returncode == 0:
                it.ir = json.loads(one.stdout)
            else:
                it.outcome, it.detail = "check_error", one.stderr.strip()


# ---- stage 2: cases and the interpreter -----------------------------------------------------------------


def interpret(args: Tuple[Dict[str, Any], Optional[Dict[str, Any]], Dict[str, int], int]) -> Tuple[str, Any, Any]:
    """(outcome, case, final tensors or detail), in a worker process."""
    ir, meta, syms, seed = args
    try:
        case = values.make_case(ir, meta, syms, seed)
    except (ValueError, SketchError) as exc:
        return "case_error", None, str(exc)
    tensors = {k: v.copy() for k, v in case.tensors.items()}
    try:
        run(ir, tensors, case.symbols, case.params, limits=INTERP_LIMITS)
    except SketchError as err:
        return "interp_error", case, str(err)
    except SketchBudgetExceeded as exc:
        return "interp_budget", case, str(exc)
    return "ok", case, tensors


def interpret_all(items: Sequence[Item], syms: Dict[str, int], seed: int, jobs: int) -> None:
    todo = [it for it in items if it.ir is not None]
    work = [(it.ir, it.meta, syms, seed * 7919 + it.index) for it in todo]
    if jobs > 1 and len(work) > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(interpret, work, chunksize=8)
    else:
        results = [interpret(w) for w in work]
    for it, (outcome, case, data) in zip(todo, results):
        it.case = case
        if outcome == "ok":
            it.expected = data
        else:
            it.outcome, it.detail = outcome, str(data)


# ---- stage 3: kernels -----------------------------------------------------------------------------------


def lower_build_run(items: Sequence[Item], akg_cli: str, work: str, cxx: str, extra: Sequence[str], batch: int,
                    jobs: int) -> Optional[str]:
    """Lowers, builds and calls every item still pending; returns a reason to skip the whole test
    when `akg_cli sketch emit` is missing, else None."""
    todo = [it for it in items if it.outcome == "pending"]
    if not todo:
        return None
    t0 = time.monotonic()
    first = kernels.emit(akg_cli, todo[0].path)
    if first.status == kernels.EMIT_MISSING:
        return first.diagnostics or "akg_cli sketch emit is not available"
    emitted = [first] + kernels.emit_all(akg_cli, [it.path for it in todo[1:]], jobs)
    sources: List[Tuple[int, str]] = []
    for it, em in zip(todo, emitted):
        if em.status == kernels.EMIT_OK:
            sources.append((it.index, em.source))
            with open(os.path.join(work, "kernels", f"{it.name}.cpp"), "w", encoding="utf-8") as f:
                f.write(em.source)
        else:
            it.outcome, it.detail = "not_lowered", em.diagnostics
    t1 = time.monotonic()
    built = kernels.build(sources, os.path.join(work, "build"), cxx, extra, batch, jobs)
    t2 = time.monotonic()
    calls = []
    by_index = {it.index: it for it in todo}
    for kernel_id, _ in sources:
        it = by_index[kernel_id]
        if kernel_id in built.errors:
            it.outcome, it.detail = "compile_error", built.errors[kernel_id]
            continue
        assert it.case is not None and it.ir is not None
        calls.append(kernels.Call(
            kernel_id, built.library[kernel_id],
            [values.abi_array(it.case.tensors[t["name"]], t["dtype"]) for t in it.ir["tensors"]],
            [it.case.symbols[s] for s in it.ir["symbols"]],
            [it.case.params[p["name"]] for p in it.ir["params"]]))
    for res in kernels.run_calls(calls):
        it = by_index[res.kernel_id]
        if res.status != "ok":
            it.outcome, it.detail = f"kernel_{res.status}", res.detail
            continue
        assert it.ir is not None and it.expected is not None and res.tensors is not None
        got = {t["name"]: values.from_abi(buf, t["dtype"]) for t, buf in zip(it.ir["tensors"], res.tensors)}
        mismatches = values.compare_all(it.ir, it.expected, got)
        if mismatches:
            it.outcome = "mismatch"
            it.detail = "\n".join(f"tensor '{m.tensor}': {m.detail}" for m in mismatches)
        else:
            it.outcome = "passed"
    print(f"sketch difftest: lowering {t1 - t0:.1f} s, building {t2 - t1:.1f} s, calling {time.monotonic() - t2:.1f} s")
    return None


# ---- report --------------------------------------------------------------------------------------------


FAILING = ("mismatch", "kernel_crash", "kernel_timeout", "kernel_rc", "compile_error", "not_lowered",
           "check_error", "interp_error", "interp_budget", "case_error")


def save_failure(work: str, it: Item) -> str:
    folder = os.path.join(work, "failures")
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{it.name}.sketch")
    with open(path, "w", encoding="utf-8") as f:
        f.write(it.text)
    with open(os.path.join(folder, f"{it.name}.txt"), "w", encoding="utf-8") as f:
        case = it.case
        f.write(f"outcome: {it.outcome}\n")
        if case is not None:
            f.write(f"symbols: {case.symbols}\nparams: {case.params}\n")
        f.write(it.detail + "\n")
    return path


def report(summary: Summary, work: str, total: int, seconds: float, allow_unlowered: bool) -> int:
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items()))
    print(f"sketch difftest: {total} sketches in {seconds:.1f} s: {counts}")
    blocking = [it for it in summary.failures if not (allow_unlowered and it.outcome == "not_lowered")]
    for outcome in FAILING:
        group = [it for it in summary.failures if it.outcome == outcome]
        if not group:
            continue
        print(f"\n{outcome}: {len(group)} sketch(es), e.g. {', '.join(it.name for it in group[:5])}")
        first = group[0]
        path = save_failure(work, first)
        print(f"  first: {path}\n    " + first.detail.replace("\n", "\n    ")[:2000])
        for it in group[1:]:
            save_failure(work, it)
    return 1 if blocking else 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="differential test: the sketch interpreter against emitted C++")
    parser.add_argument("--count", type=int, default=1000, help="generated sketches")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dir", help="run the .sketch files of this folder instead of generated ones")
    parser.add_argument("--sym", action="append", default=[], help="NAME=VALUE for a symbol (with --dir)")
    parser.add_argument("--akg-cli", help="akg_cli to use (default: $AKG_CLI, then build/akg_cli)")
    parser.add_argument("--work", default=None, help="work folder (default: a fresh one under /tmp)")
    parser.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    parser.add_argument("--cxxflags", default="", help="extra compiler flags")
    parser.add_argument("--batch", type=int, default=50, help="kernels per compiler invocation")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--allow-unlowered", action="store_true",
                        help="sketches the emitter cannot lower are reported but do not fail the run")
    args = parser.parse_args(argv)
    start = time.monotonic()
    akg_cli = find_akg_cli(args.akg_cli)
    work = args.work or os.path.join("/tmp", f"akg-sketch-difftest-{os.getpid()}")
    shutil.rmtree(work, ignore_errors=True)
    for sub in ("sketches", "kernels", "build"):
        os.makedirs(os.path.join(work, sub), exist_ok=True)
    items = dir_items(args.dir) if args.dir else generated_items(args.seed, args.count, work)
    syms = parse_syms(args.sym)
    json_forms(akg_cli, items)
    probe = next((it for it in items if it.ir is not None), None)
    if probe is not None:
        first = kernels.emit(akg_cli, probe.path)
        if first.status == kernels.EMIT_MISSING:
            print("sketch difftest skipped: `akg_cli sketch emit --backend cpu --dsl cpp` is not available in this "
                  f"build ({(first.diagnostics or 'no output').splitlines()[0]})")
            return SKIP
    t_interp = time.monotonic()
    interpret_all(items, syms, args.seed, args.jobs)
    print(f"sketch difftest: interpreting {time.monotonic() - t_interp:.1f} s")
    skip = lower_build_run(items, akg_cli, work, args.cxx, args.cxxflags.split(), args.batch, args.jobs)
    if skip is not None:
        print(f"sketch difftest skipped: `akg_cli sketch emit --backend cpu --dsl cpp` is not available "
              f"({skip.splitlines()[0] if skip else ''})")
        return SKIP
    summary = Summary()
    for it in items:
        summary.add(it)
    return report(summary, work, len(items), time.monotonic() - start, args.allow_unlowered)


if __name__ == "__main__":
    sys.exit(main())
