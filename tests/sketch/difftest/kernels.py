"""Kernels of the differential test: lowering with `akg_cli sketch emit`, building many kernels per
compiler invocation, and calling them through the kernel ABI in a child process.

Batching: one translation unit holds many kernels. Each kernel's ``#include`` lines move to the
top of the unit (standard headers are then parsed once), its text goes inside a namespace of its
own (its helpers cannot clash with another kernel's), and ``#define akg_kernel akg_kernel_<id>``
before it (``#undef`` after) gives its C entry point a name of its own. Compiler errors are mapped
back to the kernels whose lines they point into: those are built alone (so one bad kernel fails
alone, with its own messages) and the rest of the unit is built without them.

Calls: kernels run in a forked child that loads the libraries, so a kernel that crashes or hangs
takes down only the child; the parent notes which kernel was running and starts a new child for
the rest.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

# The product's compiler flags (``compiler.flags`` of the C++ backend's config.yaml, a one-line YAML
# list), so that kernels are tested as they are built (-fno-trapping-math and -fno-math-errno change
# what GCC if-converts and vectorises); the defaults below when the file cannot be read.
CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "backends", "cpu",
                      "cpp", "config.yaml")
DEFAULT_CXX_FLAGS = ["-O3", "-march=native", "-fopenmp", "-shared", "-fPIC", "-std=c++17"]


def product_flags(path: str = CONFIG) -> List[str]:
    """``compiler.flags`` of config.yaml, or the defaults when it has none."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return list(DEFAULT_CXX_FLAGS)
    m = re.search(r"^\s*flags:\s*\[([^\]]*)\]", text, re.MULTILINE)
    if not m:
        return list(DEFAULT_CXX_FLAGS)
    return [x.strip().strip("'\"") for x in m.group(1).split(",") if x.strip()]


CXX_FLAGS = product_flags()
_INCLUDE_RE = re.compile(r"^\s*#\s*include\b.*$")
_PRAGMA_ONCE_RE = re.compile(r"^\s*#\s*pragma\s+once\b.*$")

# `akg_cli sketch emit` answers: lowered, cannot lower (exit 1), or the command is missing (exit 2).
EMIT_OK, EMIT_CANNOT, EMIT_MISSING = "ok", "cannot_lower", "missing"


@dataclass
class Emitted:
    status: str
    source: str = ""
    diagnostics: str = ""


def emit(akg_cli: str, path: str, timeout: float = 60.0, backend: str = "cpu", dsl: str = "cpp") -> Emitted:
    try:
        proc = subprocess.run([akg_cli, "sketch", "emit", "--backend", backend, "--dsl", dsl, path],
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Emitted(EMIT_CANNOT, diagnostics=f"akg_cli sketch emit did not finish in {timeout:g} s")
    if proc.returncode == 0:
        return Emitted(EMIT_OK, proc.stdout)
    if proc.returncode == 2 and ("unknown subcommand" in proc.stderr or "no backend" in proc.stderr):
        return Emitted(EMIT_MISSING, diagnostics=proc.stderr.strip())
    return Emitted(EMIT_CANNOT, diagnostics=(proc.stderr.strip() or f"exit status {proc.returncode}"))


def emit_all(akg_cli: str, paths: Sequence[str], jobs: int, backend: str = "cpu", dsl: str = "cpp") -> List[Emitted]:
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        return list(pool.map(lambda p: emit(akg_cli, p, backend=backend, dsl=dsl), paths))


def entry_name(kernel_id: int) -> str:
    return f"akg_kernel_{kernel_id}"


def split_includes(source: str) -> Tuple[List[str], str]:
    """(include lines, the rest of the source)."""
    includes, body = [], []
    for line in source.splitlines():
        if _INCLUDE_RE.match(line):
            includes.append(line.strip())
        elif not _PRAGMA_ONCE_RE.match(line):
            body.append(line)
    return includes, "\n".join(body)


def translation_unit(kernels: Sequence[Tuple[int, str]]) -> Tuple[str, List[Tuple[int, int, int]]]:
    """One C++ unit holding every (id, source) kernel, each with its own entry point name, and the
    (first line, last line, id) of each kernel in it (1-based, for mapping compiler errors).

    Only the includes are shared: the helpers each kernel carries cost little next to the
    optimisation of the kernels' own code, so they stay with their kernel."""
    includes: List[str] = []
    parts: List[Tuple[int, str]] = []
    for kernel_id, source in kernels:
        inc, body = split_includes(source)
        includes.extend(i for i in inc if i not in includes)
        parts.append((kernel_id, f"#define akg_kernel {entry_name(kernel_id)}\nnamespace akg_difftest_{kernel_id} {{\n"
                                 f"{body}\n}}  // namespace akg_difftest_{kernel_id}\n#undef akg_kernel\n"))
    text = "\n".join(includes) + "\n\n"
    ranges = []
    line = text.count("\n") + 1
    for kernel_id, part in parts:
        n = part.count("\n")
        ranges.append((line, line + n, kernel_id))
        line += n + 1
        text += part + "\n"
    return text, ranges


@dataclass
class Built:
    """Where each kernel's entry point lives, and why the others have none."""

    library: Dict[int, str] = field(default_factory=dict)
    errors: Dict[int, str] = field(default_factory=dict)


def _compile(cxx: str, extra: Sequence[str], source_path: str, lib_path: str,
             syntax_only: bool = False) -> Tuple[bool, str]:
    flags = [*CXX_FLAGS, *extra] + (["-fsyntax-only"] if syntax_only else ["-o", lib_path])
    proc = subprocess.run([cxx, *flags, source_path], capture_output=True, text=True)
    return proc.returncode == 0, proc.stderr


_ERROR_LINE_RE = re.compile(r"^[^:\s]+\.cpp:(\d+):\d+: error")


def _build_unit(cxx: str, extra: Sequence[str], work: str, name: str, kernels: Sequence[Tuple[int, str]],
                syntax_only: bool = False) -> Tuple[bool, str, str, List[Tuple[int, int, int]]]:
    src = os.path.join(work, f"{name}.cpp")
    lib = os.path.join(work, f"{name}.so")
    text, ranges = translation_unit(kernels)
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    ok, err = _compile(cxx, extra, src, lib, syntax_only)
    return ok, lib, err, ranges


def _blamed(stderr: str, ranges: Sequence[Tuple[int, int, int]]) -> List[int]:
    """The kernels whose lines the compiler's errors point into."""
    out: List[int] = []
    for line in stderr.splitlines():
        m = _ERROR_LINE_RE.match(line)
        if not m:
            continue
        n = int(m.group(1))
        for first, last, kernel_id in ranges:
            if first <= n <= last and kernel_id not in out:
                out.append(kernel_id)
    return out


def build(kernels: Sequence[Tuple[int, str]], work: str, cxx: str = "g++", extra: Sequence[str] = (),
          batch: int = 50, jobs: int = 2) -> Built:
    """Builds the kernels in units of ``batch``. Each unit is first checked with -fsyntax-only
    (a tenth of a full build): the kernels its errors point into are built alone, for their own
    messages, and left out of the unit, which is then built once. A unit that still fails is built
    without the kernels its errors point into, or kernel by kernel when they point nowhere."""
    os.makedirs(work, exist_ok=True)
    units = [list(kernels[i:i + batch]) for i in range(0, len(kernels), batch)]
    out = Built()

    def alone(kernel_id: int, src: str) -> None:
        ok, lib, err, _ = _build_unit(cxx, extra, work, f"kernel{kernel_id}", [(kernel_id, src)])
        if ok:
            out.library[kernel_id] = lib
        else:
            out.errors[kernel_id] = _first_errors(err)

    def without(unit: List[Tuple[int, str]], blamed: set) -> List[Tuple[int, str]]:
        for kernel_id, src in unit:
            if kernel_id in blamed:
                alone(kernel_id, src)
        return [(k, s) for k, s in unit if k not in blamed]

    def one_unit(index: int) -> None:
        unit = units[index]
        ok, _, err, ranges = _build_unit(cxx, extra, work, f"unit{index}_check", unit, syntax_only=True)
        if not ok:
            unit = without(unit, set(_blamed(err, ranges)))
        for attempt in range(3):
            if not unit:
                return
            ok, lib, err, ranges = _build_unit(cxx, extra, work, f"unit{index}_{attempt}", unit)
            if ok:
                for kernel_id, _src in unit:
                    out.library[kernel_id] = lib
                return
            blamed = set(_blamed(err, ranges))
            if not blamed:
                break
            unit = without(unit, blamed)
        for kernel_id, src in unit:
            alone(kernel_id, src)

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(one_unit, range(len(units))))
    return out


def _first_errors(stderr: str, lines: int = 12) -> str:
    picked = [ln for ln in stderr.splitlines() if "error" in ln][:lines]
    return "\n".join(picked or stderr.splitlines()[:lines])


# ---- calling kernels in a child process ----------------------------------------------------------------


@dataclass
class Call:
    kernel_id: int
    library: str
    tensors: List[np.ndarray]  # ABI buffers, declaration order
    symbols: List[int]
    params: List[float]


@dataclass
class Result:
    kernel_id: int
    status: str  # "ok", "rc" (non-zero return), "crash", "timeout"
    rc: int = 0
    tensors: Optional[List[np.ndarray]] = None
    detail: str = ""


def _child(conn: "multiprocessing.connection.Connection") -> None:
    libs: Dict[str, ctypes.CDLL] = {}
    while True:
        call = conn.recv()
        if call is None:
            return
        lib = libs.get(call.library)
        if lib is None:
            lib = libs[call.library] = ctypes.CDLL(call.library)
        fn = getattr(lib, entry_name(call.kernel_id))
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double)]
        ptrs = (ctypes.c_void_p * max(1, len(call.tensors)))(*[t.ctypes.data for t in call.tensors])
        syms = (ctypes.c_int64 * max(1, len(call.symbols)))(*call.symbols)
        params = (ctypes.c_double * max(1, len(call.params)))(*call.params)
        conn.send(("start", call.kernel_id))
        rc = fn(ptrs, syms, params)
        conn.send(("done", call.kernel_id, rc, call.tensors))


def run_calls(calls: Sequence[Call], timeout: float = 30.0, child=None, context: str = "fork") -> List[Result]:
    """Runs every call in a child (``child(conn)``, by default the C ABI's caller; forked, or started
    afresh with context="spawn"), restarting it after a crash or a timeout."""
    ctx = multiprocessing.get_context(context)
    results: List[Result] = []
    pending = list(calls)
    while pending:
        parent, child_end = ctx.Pipe()
        proc = ctx.Process(target=child or _child, args=(child_end,), daemon=True)
        proc.start()
        child_end.close()
        while pending:
            call = pending[0]
            try:
                parent.send(call)
                outcome = _await(parent, proc, call, timeout)
            except (BrokenPipeError, EOFError, ConnectionResetError):
                outcome = Result(call.kernel_id, "crash", detail=f"the child died (exit {proc.exitcode})")
            results.append(outcome)
            pending.pop(0)
            if outcome.status in ("crash", "timeout"):
                break
        try:
            parent.send(None)
        except (BrokenPipeError, OSError):
            pass
        proc.join(1.0)
        if proc.is_alive():
            proc.kill()
            proc.join()
        parent.close()
    return results


def _await(conn: "multiprocessing.connection.Connection", proc: "multiprocessing.Process", call: Call,
           timeout: float) -> Result:
    while True:
        if not conn.poll(timeout):
            proc.kill()
            return Result(call.kernel_id, "timeout", detail=f"the kernel ran longer than {timeout:g} s")
        try:
            msg = conn.recv()
        except EOFError:
            proc.join(1.0)
            code = proc.exitcode
            sig = f"signal {-code}" if code is not None and code < 0 else f"exit {code}"
            return Result(call.kernel_id, "crash", detail=f"the kernel crashed ({sig})")
        if msg[0] == "crashed":  # the child's own word that it cannot go on (cuda_kernels.child)
            proc.join(5.0)
            return Result(call.kernel_id, "crash", detail=msg[2])
        if msg[0] == "done":
            rc, tensors = msg[2], msg[3]
            detail = msg[4] if len(msg) > 4 else f"akg_kernel returned {rc}"
            return Result(call.kernel_id, "ok" if rc == 0 else "rc", rc, tensors, "" if rc == 0 else detail)
